"""The SQLite history index (issue 13, seed 003 section 4.2): our own file holding the chunks of
another application's (the host's) session messages, a BM25 keyword index over them and their
vectors. The host's files are never opened here; the use case reads the host and hands over
:class:`~hermes_workspace.domain.history.MessageChunk` lists.

Binding: ``apsw``, as :class:`~.sqlite_fts5_store.SqliteFts5Store`, with the same FTS5 tokenizer,
the same indexed copy of the text (:func:`~.sqlite_fts5_store.indexed_text`: Arabic
normalization, lone one-character words left out, Chinese, Japanese and Korean runs as character
bigrams) and the same query compiler (:func:`~.sqlite_fts5_store.compile_fts5_match`), so a
keyword query finds the same words in history as in the workspace (compounds, CJK words, stop
words dropped by the query parser).

Schema (version :data:`SCHEMA_VERSION`, recorded in ``meta``)::

    meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)   -- history_schema_version, source,
                                                      -- vector_signature, vector_dimensions
    sessions(session_id TEXT PRIMARY KEY,             -- the SessionStat of the last indexing
             messages, last_id, chars)
    chunks(id INTEGER PRIMARY KEY,
           session_id -> sessions ON DELETE CASCADE, message_id, chunk_offset,
           content,                                   -- as the host wrote it
           content_hash, role, timestamp,             -- timestamp as stored by the host (any type)
           UNIQUE (session_id, message_id, chunk_offset))
    chunks_fts USING fts5(content, content='', contentless_delete=1,
                          tokenize='porter unicode61 remove_diacritics 2')   -- rowid = chunks.id
    TRIGGER chunks_fts_delete AFTER DELETE ON chunks  -- drops the FTS row, also on cascade
    vectors(chunk_id INTEGER PRIMARY KEY -> chunks(id) ON DELETE CASCADE,
            signature,                                -- the embedding model's signature
            content_hash,                             -- of the text the vector was made from
            vector BLOB)                              -- float32, unit length; NULL: unreadable

A vector belongs to ``(session id, message id, chunk offset)`` through ``chunk_id`` (the chunk
row holding that unique key) and is used only while its ``content_hash`` and ``signature`` are
those of the chunk and of the model asked for: the identity seed 003 prescribes, joined by
integer id (a join by text keys was more than half of a vector search in
:mod:`.sqlite_vec_index`). :meth:`SqliteHistoryIndex.replace_session` keeps the rows of unchanged
chunks, so their vectors stay: a message appended to a session costs one embedding, an edited one
only its changed chunks. Vectors are not re-made when the host moves a session to another
project: nothing here knows projects.

Filters: every search and listing takes the session ids in scope (one project's sessions, up to
thousands) as one JSON array parameter, read with ``json_each`` in an ``IN`` subquery that SQLite
builds once into a temporary index; the filter is part of the query, before its ``ORDER BY ...
LIMIT``, so the top ``limit`` are the best chunks *of the scope*. No id is ever written into the
SQL text.

Vector search is exact cosine over every in-scope vector (unit vectors: cosine is the dot
product), computed by the first of these that is installed (:attr:`SqliteHistoryIndex.vector_math`):
sqlite-vec's ``vec_distance_cosine`` in SQL (no row leaves SQLite), ``numpy`` (the rows are read
into Python, then one matrix product per batch), or pure Python (correct, slow; users of a remote
embedder may have neither). Measured with 20,000 in-scope chunks of 384 dimensions (1,000
sessions out of 5,000, 100,000 chunks in the file), top 10, median of 5 on 2 shared cores:
sqlite-vec 27 ms, numpy 38 ms, pure Python 268 ms; with the file holding only those 20,000:
24, 36 and 259 ms. A project of 50 sessions (1,000 chunks) in the same file: 1.5 ms. The keyword
side, same scope, for queries whose words are in every chunk (the worst case): 37-48 ms.

Concurrency: WAL journal, ``synchronous=NORMAL``, a busy timeout on every connection and short
``BEGIN IMMEDIATE`` transactions (one per session replaced, one per batch of vectors), so an MCP
server and a CLI search can share the file: a second writer waits up to the busy timeout, then
gets a :class:`StoreUnusableError` saying the history index is locked. One object per thread.
"""

from __future__ import annotations

import importlib.util
import json
import math
import operator
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any, Literal

import apsw

from hermes_workspace.adapters.sqlite_common import IndexFileConnection, meta_version, sqlite_int, translated_sqlite_errors
from hermes_workspace.adapters.sqlite_fts5_store import FTS_TOKENIZER, indexed_text, compile_fts5_match
from hermes_workspace.domain.errors import EmbedderUnavailableError, StoreError, StoreUnusableError
from hermes_workspace.domain.history import HistoryMatch, MessageChunk, SessionStat
from hermes_workspace.domain.query import Query
from hermes_workspace.domain.semantic import Vector

__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "SCHEMA_VERSION", "VECTOR_MATH", "SqliteHistoryIndex"]

DEFAULT_BUSY_TIMEOUT_MS = 5_000
"""How long a connection waits for another one's lock before failing (milliseconds)."""

SCHEMA_VERSION = 1
"""Version of the layout above, stored as ``meta.history_schema_version``. A writer finding an
older version drops and rebuilds the tables (derived data: the next sync reads the host again) and
refuses a newer one."""

VectorMath = Literal["auto", "numpy", "sqlite-vec", "python"]

VECTOR_MATH: tuple[VectorMath, ...] = ("sqlite-vec", "numpy", "python")
"""The ways of computing a vector search, in the order ``"auto"`` tries them (fastest first as
measured, see the module docstring; each gives the same ranking, scores equal to float32
precision)."""

_VERSION_KEY = "history_schema_version"
_SOURCE_KEY = "source"
_SIGNATURE_KEY = "vector_signature"
_DIMENSIONS_KEY = "vector_dimensions"

_VECTOR_BATCH = 4_096
"""Rows of vectors scored per numpy matrix product: memory stays at about 6 MB for 384
dimensions, whatever the number of chunks in scope."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id TEXT PRIMARY KEY,
        messages   INTEGER NOT NULL,
        last_id    INTEGER NOT NULL,
        chars      INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS chunks (
        id           INTEGER PRIMARY KEY,
        session_id   TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
        message_id   INTEGER NOT NULL,
        chunk_offset INTEGER NOT NULL,
        content      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        role         TEXT NOT NULL,
        timestamp,
        UNIQUE (session_id, message_id, chunk_offset)
    )""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
        content,
        content = '', contentless_delete = 1,
        tokenize = '{FTS_TOKENIZER}'
    )""",
    """CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM chunks_fts WHERE rowid = old.id;
    END""",
    """CREATE TABLE IF NOT EXISTS vectors (
        chunk_id     INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        signature    TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        vector       BLOB
    )""",
)

_TABLES = ("vectors", "chunks_fts", "chunks", "sessions")
"""Our tables other than ``meta``, in the order they are dropped (referencing ones first)."""

_IN_SCOPE = "c.session_id IN (SELECT value FROM json_each(:sessions))"
"""The session filter on ``chunks AS c``: ``:sessions`` is a JSON array of session ids."""

_VECTOR_OF = "v.chunk_id = c.id AND v.signature = :signature AND v.content_hash = c.content_hash"
"""Join condition of a chunk and its vector of the model ``:signature`` for its current text."""

_MATCH_COLUMNS = "c.session_id, c.message_id, c.chunk_offset, c.content, c.role, c.timestamp"

_SURROGATE = re.compile("[\ud800-\udfff]")

_PLAIN = (type(None), int, float, str, bytes)


def _to_db(text: str) -> str | bytes:
    """A message's ``text`` (or role) as stored in a ``TEXT`` column: itself, or, when it holds
    lone surrogates (a host message read with ``surrogateescape``, which SQLite cannot store as
    text), its UTF-8 bytes with the surrogates kept (``surrogatepass``), read back by
    :func:`_from_db`. Session ids are stored as given: one that is not valid Unicode makes
    :meth:`SqliteHistoryIndex.replace_session` raise :class:`StoreError` for that session."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "surrogatepass")


def _from_db(value: str | bytes) -> str:
    """The inverse of :func:`_to_db`."""
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def _fts_text(text: str) -> str:
    """The copy of a chunk's content FTS5 indexes (:func:`indexed_text`), lone surrogates as
    spaces."""
    indexed = indexed_text(text)
    return indexed if indexed.isascii() else _SURROGATE.sub(" ", indexed)


def _timestamp(value: Any) -> Any:
    """A host timestamp as SQLite can store it: as is when it is a SQLite value (the host read it
    from SQLite), else its text."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return str(value)
    return value if isinstance(value, _PLAIN) else str(value)


def _blob(vector: Vector | Sequence[float]) -> bytes:
    """``vector`` as a float32 blob in this machine's byte order."""
    if isinstance(vector, array) and vector.typecode == "f":
        return vector.tobytes()
    return array("f", vector).tobytes()


def _sessions_param(session_ids: Sequence[str]) -> str:
    """The ``:sessions`` parameter: the ids as one JSON array."""
    return json.dumps(list(dict.fromkeys(session_ids)))


def _dot_python() -> Callable[[Sequence[float], Sequence[float]], float]:
    """The fastest pure-Python dot product of this interpreter (``math.sumprod`` from 3.12)."""
    sumprod = getattr(math, "sumprod", None)
    if sumprod is not None:
        return sumprod  # type: ignore[no-any-return]
    return lambda a, b: sum(map(operator.mul, a, b))


class SqliteHistoryIndex(IndexFileConnection):
    """A :class:`~hermes_workspace.domain.ports.HistoryIndex` in one SQLite file.

    Args:
        path: the database file (created with its folder on first use; seed 003 names it
            ``embeddings.db`` beside the plugin's configuration).
        busy_timeout_ms: how long to wait for another connection's lock (milliseconds) before
            failing with :class:`StoreUnusableError`.
        vector_math: how :meth:`vector_search` computes similarities: ``"auto"`` (the first of
            :data:`VECTOR_MATH` that is installed), or one of them by name.

    Raises (from the constructor):
        StoreError: the file or its folder cannot be created or opened (read-only folder, disk
            full: :class:`StoreUnusableError`), is not a SQLite database, holds other tables
            and no history index, or was made by a newer version.
        EmbedderUnavailableError: ``vector_math`` names a way that is not installed (numpy, or
            sqlite-vec and its extension).
        ValueError: ``vector_math`` is not one of ``"auto"`` and :data:`VECTOR_MATH`.

    Every public method raises :class:`StoreError` for any database failure (locked longer than
    the busy timeout, disk full, damaged file, index closed); no ``apsw`` exception escapes.
    """

    subject = "history index"

    def __init__(
        self, path: Path, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, vector_math: VectorMath = "auto"
    ) -> None:
        super().__init__(path, readonly=False, busy_timeout_ms=busy_timeout_ms)
        if vector_math != "auto" and vector_math not in VECTOR_MATH:
            raise ValueError(f"vector_math must be 'auto' or one of {VECTOR_MATH}, got {vector_math!r}")
        with self._translate("open the history index"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._open(create=True)
            try:
                self.vector_math: VectorMath = self._choose_vector_math(conn, vector_math)
                mode = conn.pragma("journal_mode", "wal")
                if str(mode).lower() != "wal":
                    raise StoreError(
                        f"could not switch the history index {self.path} to WAL mode (got {mode!r})",
                        hint="Check that its folder is on a local, writable file system.",
                    )
                self._ensure_schema(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn

    # -- connection setup -------------------------------------------------------------------

    @staticmethod
    def _choose_vector_math(conn: apsw.Connection, wanted: VectorMath) -> VectorMath:
        """The way of computing vector searches: ``wanted``, or for ``"auto"`` the first of
        :data:`VECTOR_MATH` that works here (sqlite-vec is loaded into ``conn`` when chosen)."""
        for name in VECTOR_MATH if wanted == "auto" else (wanted,):
            if name == "numpy":
                if importlib.util.find_spec("numpy") is None:  # imported at the first search only
                    if wanted == "auto":
                        continue
                    raise EmbedderUnavailableError(
                        "the history index was asked to compute with numpy, which is not installed",
                        hint="Install the semantic extra: pip install 'hermes-workspace[semantic]'.",
                    )
            elif name == "sqlite-vec":
                try:
                    import sqlite_vec

                    conn.enable_load_extension(True)
                    conn.load_extension(sqlite_vec.loadable_path())
                    conn.enable_load_extension(False)
                except (ImportError, apsw.Error, AttributeError) as exc:  # AttributeError: no extension loading
                    if wanted == "auto":
                        continue
                    raise EmbedderUnavailableError(
                        f"the history index was asked to compute with sqlite-vec, which cannot be loaded ({exc})",
                        hint="Install the semantic extra: pip install 'hermes-workspace[semantic]'.",
                    ) from exc
            return name
        return "python"

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        """:func:`translated_sqlite_errors`, with the messages of a locked or damaged file saying
        what they mean for the history index (the generic ones speak of ``hermes-workspace
        index`` runs, which never touch this file)."""
        try:
            with translated_sqlite_errors(self.path, action, busy_timeout_ms=self.busy_timeout_ms, subject=self.subject):
                yield
        except StoreUnusableError as exc:
            cause = exc.__cause__
            if isinstance(cause, (apsw.BusyError, apsw.LockedError)):
                raise StoreUnusableError(
                    f"the history index {self.path} stayed locked for more than {self.busy_timeout_ms} ms while "
                    f"trying to {action}",
                    hint="Another hermes-workspace process (an MCP server, or a history search in a terminal) is "
                         "updating it; try again when it is done.",
                ) from cause
            if isinstance(cause, (apsw.CorruptError, apsw.NotADBError)):
                raise StoreUnusableError(
                    f"the history index {self.path} is damaged or not a SQLite database ({cause})",
                    hint=f"Delete {self.path} (and its -wal and -shm files); the next history search rebuilds it "
                         "from the host's sessions.",
                ) from cause
            raise

    def _ensure_schema(self, conn: apsw.Connection) -> None:
        with self._write_transaction(conn):
            tables = {name for (name,) in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'")}
            version = self._read_version(conn) if "meta" in tables else None
            if version == SCHEMA_VERSION:
                return
            if version is not None and version > SCHEMA_VERSION:
                raise StoreError(
                    f"the history index {self.path} was made by a newer hermes-workspace (schema version "
                    f"{version}, this one knows {SCHEMA_VERSION})",
                    hint=f"Upgrade hermes-workspace, or delete {self.path} to rebuild the index.",
                )
            if version is None and tables - {"meta"}:
                raise StoreError(
                    f"{self.path} is a SQLite database but not a hermes-workspace history index",
                    hint="Move that file away, or configure another file for the history index.",
                )
            self._create(conn, source=None)

    @staticmethod
    def _create(conn: apsw.Connection, *, source: str | None) -> None:
        """Drop our tables, create them empty and record the schema version and ``source``
        (inside the caller's transaction)."""
        conn.execute("DROP TRIGGER IF EXISTS chunks_fts_delete")
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("DELETE FROM meta")
        rows = [(_VERSION_KEY, str(SCHEMA_VERSION))]
        if source is not None:
            rows.append((_SOURCE_KEY, source))
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", rows)

    @staticmethod
    def _read_version(conn: apsw.Connection) -> int | None:
        return meta_version(conn, _VERSION_KEY)

    def _before_close(self, conn: apsw.Connection) -> None:
        """``PRAGMA optimize`` before the connection is released, as the store does."""
        conn.pragma("optimize")

    # -- HistoryIndex -----------------------------------------------------------------------

    @property
    def source(self) -> str | None:
        """The host signature recorded by :meth:`reset` (``None`` before the first).

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> str | None:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (_SOURCE_KEY,)).fetchone()
            return None if row is None else row[0]

        return self._run("read the history source", run)

    def reset(self, source: str) -> None:
        """Drop every session, chunk and vector and record ``source``, in one transaction (the
        tables are dropped and created again: faster than deleting each row's terms).

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                self._create(conn, source=source)

        self._run("reset the history index", run, write=True)

    def session_stats(self) -> dict[str, SessionStat]:
        """``{session id: SessionStat}`` of every indexed session, as given to
        :meth:`replace_session`.

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> dict[str, SessionStat]:
            return {
                session_id: SessionStat(messages, last_id, chars)
                for session_id, messages, last_id, chars in conn.execute(
                    "SELECT session_id, messages, last_id, chars FROM sessions")
            }

        return self._run("read the indexed sessions", run)

    def replace_session(self, session_id: str, stat: SessionStat, chunks: Sequence[MessageChunk]) -> None:
        """Make ``chunks`` the session's chunks and ``stat`` its fingerprint, in one transaction.

        Only differences are written: a chunk whose ``(message_id, offset, content_hash)`` is
        already stored keeps its row (its role and timestamp updated when they changed), its
        full-text entry and its vectors; stored chunks not among ``chunks`` or whose hash changed
        are deleted with their full-text entries and vectors; new ones are inserted. Appending a
        message to a long session thus writes that message only.

        Raises:
            StoreError: a chunk of another session, two chunks with the same message id and
                offset, or the database failed (disk full, unwritable: :class:`StoreUnusableError`).
        """
        by_key: dict[tuple[int, int], MessageChunk] = {}
        for chunk in chunks:
            if chunk.session_id != session_id:
                raise StoreError(f"a chunk of session {chunk.session_id!r} was given for session {session_id!r}")
            key = (int(chunk.message_id), int(chunk.offset))
            if key in by_key:
                raise StoreError(
                    f"two chunks of session {session_id!r} have message id {key[0]} and offset {key[1]}",
                    hint="Each part of a message must start at its own offset.",
                )
            by_key[key] = chunk
        stored_id = session_id

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                conn.execute(
                    "INSERT INTO sessions (session_id, messages, last_id, chars) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (session_id) DO UPDATE SET messages = excluded.messages, "
                    "last_id = excluded.last_id, chars = excluded.chars",
                    (stored_id, int(stat.messages), int(stat.last_id), int(stat.chars)),
                )
                stale: list[int] = []
                touched: list[tuple[Any, ...]] = []
                kept: set[tuple[int, int]] = set()
                for row_id, message_id, offset, digest, role, timestamp in conn.execute(
                    "SELECT id, message_id, chunk_offset, content_hash, role, timestamp FROM chunks "
                    "WHERE session_id = ?", (stored_id,),
                ):
                    new = by_key.get((message_id, offset))
                    if new is None or new.content_hash != digest:
                        stale.append(row_id)
                        continue
                    kept.add((message_id, offset))
                    if (_from_db(role), timestamp) != (new.role, _timestamp(new.timestamp)):
                        touched.append((_to_db(new.role), _timestamp(new.timestamp), row_id))
                cursor = conn.cursor()
                if stale:  # the trigger drops their FTS rows, the foreign key their vectors
                    cursor.execute("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
                                   (json.dumps(stale),))
                if touched:
                    cursor.executemany("UPDATE chunks SET role = ?, timestamp = ? WHERE id = ?", touched)
                added = [chunk for key, chunk in sorted(by_key.items()) if key not in kept]
                if not added:
                    return
                (max_id,) = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()
                ids = range(max_id + 1, max_id + 1 + len(added))
                cursor.executemany(
                    "INSERT INTO chunks (id, session_id, message_id, chunk_offset, content, content_hash, role, "
                    "timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(row_id, stored_id, int(c.message_id), int(c.offset), _to_db(c.content), c.content_hash,
                      _to_db(c.role), _timestamp(c.timestamp)) for row_id, c in zip(ids, added)],
                )
                cursor.executemany("INSERT INTO chunks_fts (rowid, content) VALUES (?, ?)",
                                   [(row_id, _fts_text(c.content)) for row_id, c in zip(ids, added)])

        self._run(f"store history session {session_id}", run, write=True)

    def delete_sessions(self, session_ids: Iterable[str]) -> int:
        """Remove these sessions with their chunks, full-text entries and vectors, in one
        transaction; returns how many of them were indexed (unknown ids are ignored).

        Raises:
            StoreError: the database failed or the index is closed.
        """
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            self._connection("delete history sessions", write=True)
            return 0

        def run(conn: apsw.Connection) -> int:
            deleted = 0
            with self._write_transaction(conn):
                for stored_id in ids:  # cascades to chunks (trigger: FTS rows) and their vectors
                    conn.execute("DELETE FROM sessions WHERE session_id = ?", (stored_id,))
                    deleted += conn.changes()
            return deleted

        return self._run("delete history sessions", run, write=True)

    def keyword_search(self, query: Query, session_ids: Sequence[str], limit: int) -> list[HistoryMatch]:
        """BM25 over the chunks of ``session_ids`` only, best first, at most ``limit`` (clamped
        to >= 1). The session filter is in the same query as the ``ORDER BY bm25 LIMIT`` (before
        the cut); ties are broken by session id, message id and offset. ``score`` is the negated
        FTS5 ``bm25()`` (higher is better). The query is compiled by
        :func:`~.sqlite_fts5_store.compile_fts5_match`, as for the workspace. ``[]`` for an empty
        query or no session, without touching the database.

        Raises:
            StoreError: the database failed or the index is closed.
        """
        match = compile_fts5_match(query)
        if not match or not session_ids:
            return []
        params = {"match": match, "sessions": _sessions_param(session_ids), "limit": sqlite_int(limit, 1)}
        # Rank on ids and scores, then read the content of the top rows only.
        sql = f"""
            WITH top AS (
                SELECT c.id AS id, bm25(chunks_fts) AS bm
                FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid
                WHERE chunks_fts MATCH :match AND {_IN_SCOPE}
                ORDER BY bm, c.session_id, c.message_id, c.chunk_offset
                LIMIT :limit
            )
            SELECT top.bm, {_MATCH_COLUMNS}
            FROM top JOIN chunks AS c ON c.id = top.id
            ORDER BY top.bm, c.session_id, c.message_id, c.chunk_offset
        """

        def run(conn: apsw.Connection) -> list[HistoryMatch]:
            return [_match(row[1:], -row[0] if row[0] else 0.0) for row in conn.execute(sql, params)]

        return self._run("search the history", run)

    def pending(self, signature: str, session_ids: Sequence[str], limit: int) -> list[MessageChunk]:
        """Up to ``limit`` chunks of ``session_ids`` with neither a vector of ``signature`` for
        their current text nor an unreadable mark, ordered by ``(session_id, message_id,
        offset)``. ``[]`` for ``limit < 1`` or no session.

        Raises:
            StoreError: the database failed or the index is closed.
        """
        if limit < 1 or not session_ids:
            return []
        params = {"signature": signature, "sessions": _sessions_param(session_ids), "limit": sqlite_int(limit, 1)}
        sql = f"""
            SELECT c.session_id, c.message_id, c.chunk_offset, c.content, c.content_hash, c.role, c.timestamp
            FROM chunks AS c
            WHERE {_IN_SCOPE} AND NOT EXISTS (SELECT 1 FROM vectors AS v WHERE {_VECTOR_OF})
            ORDER BY c.session_id, c.message_id, c.chunk_offset
            LIMIT :limit
        """

        def run(conn: apsw.Connection) -> list[MessageChunk]:
            return [
                MessageChunk(session_id, message_id, offset, _from_db(content), digest, _from_db(role),
                             timestamp)
                for session_id, message_id, offset, content, digest, role, timestamp in conn.execute(sql, params)
            ]

        return self._run("list history chunks waiting for vectors", run)

    def add_vectors(self, signature: str, items: Sequence[tuple[MessageChunk, Vector | None]]) -> None:
        """Store each chunk's vector of the model ``signature`` (``None``: the model cannot read
        the chunk; it counts as done and is not pending again), replacing any it had, in one
        transaction that first drops every vector of another signature (the model changed). An
        item whose chunk is no longer indexed with that ``content_hash`` (the session changed
        since :meth:`pending`) is left out.

        Raises:
            StoreError: the vectors of ``signature`` would differ in length (nothing is changed),
                or the database failed.
        """
        rows = [
            (signature, None if vector is None else _blob(vector), chunk.session_id, int(chunk.message_id),
             int(chunk.offset), chunk.content_hash)
            for chunk, vector in items
        ]
        lengths = {len(vector) for _, vector in items if vector is not None}

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                stored_signature, dimensions = _vector_meta(conn)
                if stored_signature != signature:
                    conn.execute("DELETE FROM vectors")
                    dimensions = None
                known = lengths | ({dimensions} if dimensions is not None else set())
                if len(known) > 1 or 0 in known:
                    raise StoreError(
                        f"vectors of the model {signature} differ in length: {sorted(known)} dimensions",
                        hint="One model makes vectors of one length; check the embedder's configuration.",
                    )
                conn.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    [(_SIGNATURE_KEY, signature)] + [(_DIMENSIONS_KEY, str(n)) for n in known],
                )
                conn.cursor().executemany(
                    "INSERT OR REPLACE INTO vectors (chunk_id, signature, content_hash, vector) "
                    "SELECT id, ?, content_hash, ? FROM chunks "
                    "WHERE session_id = ? AND message_id = ? AND chunk_offset = ? AND content_hash = ?",
                    rows,
                )

        self._run("store history vectors", run, write=True)

    def vector_search(
        self, signature: str, vector: Vector, session_ids: Sequence[str], limit: int
    ) -> list[HistoryMatch]:
        """The ``limit`` (clamped to >= 1) chunks of ``session_ids`` whose ``signature`` vectors
        (for their current text) are nearest to ``vector``, exact: the similarity to every
        in-scope vector, then the cut. Best first, ties by session id, message id and offset;
        ``score`` is the cosine similarity (-1..1, the dot product of unit vectors; 0 against a
        zero vector). ``[]`` for no session or no stored vector.

        Raises:
            StoreError: ``vector`` does not have the stored vectors' length; the database failed
                or the index is closed.
        """
        if not session_ids:
            return []
        query = vector if isinstance(vector, array) and vector.typecode == "f" else array("f", vector)
        params: dict[str, Any] = {"signature": signature, "sessions": _sessions_param(session_ids),
                                  "limit": sqlite_int(limit, 1), "bytes": 4 * len(query)}

        def run(conn: apsw.Connection) -> list[HistoryMatch]:
            stored_signature, dimensions = _vector_meta(conn)
            if stored_signature != signature or dimensions is None:
                return []
            if dimensions != len(query):
                raise StoreError(
                    f"query vector of {len(query)} dimensions, the history index holds {dimensions}",
                    hint="Embed the query with the model that made the index (see its signature).",
                )
            if self.vector_math == "sqlite-vec":
                ranked = self._rank_in_sql(conn, query, params)
            else:
                ranked = self._rank_in_python(conn, query, params)
            return self._matches(conn, ranked)

        return self._run("search the history vectors", run)

    @staticmethod
    def _scope_vectors_sql(columns: str) -> str:
        return f"""
            SELECT {columns}
            FROM chunks AS c JOIN vectors AS v ON {_VECTOR_OF}
            WHERE {_IN_SCOPE} AND v.vector IS NOT NULL AND length(v.vector) = :bytes
        """

    def _rank_in_sql(self, conn: apsw.Connection, query: array, params: dict[str, Any]) -> list[tuple[int, float]]:
        """``[(chunk id, score)]`` of the top rows, by sqlite-vec's ``vec_distance_cosine``."""
        sql = self._scope_vectors_sql(
            "c.id, coalesce(vec_distance_cosine(v.vector, :query), 1.0) AS distance"
        ) + " ORDER BY distance, c.session_id, c.message_id, c.chunk_offset LIMIT :limit"
        return [(row_id, 1.0 - distance) for row_id, distance in conn.execute(sql, {**params, "query": query.tobytes()})]

    def _rank_in_python(self, conn: apsw.Connection, query: array, params: dict[str, Any]) -> list[tuple[int, float]]:
        """``[(chunk id, score)]`` of the top rows, by numpy or by pure Python: the in-scope rows
        are read in key order and sorted stably by score, so ties keep key order."""
        cursor = conn.execute(
            self._scope_vectors_sql("c.id, v.vector") + " ORDER BY c.session_id, c.message_id, c.chunk_offset",
            params,
        )
        limit = params["limit"]
        if self.vector_math == "numpy":
            return _top_numpy(cursor, query, limit)
        dot = _dot_python()
        scored = [(row_id, dot(array("f", blob), query)) for row_id, blob in cursor]
        scored.sort(key=lambda item: -item[1])
        return scored[:limit]

    @staticmethod
    def _matches(conn: apsw.Connection, ranked: list[tuple[int, float]]) -> list[HistoryMatch]:
        """The :class:`HistoryMatch` of each ``(chunk id, score)``, in the given order."""
        if not ranked:
            return []
        rows = {
            row[0]: row[1:]
            for row in conn.execute(
                f"SELECT c.id, {_MATCH_COLUMNS} FROM chunks AS c WHERE c.id IN (SELECT value FROM json_each(?))",
                (json.dumps([row_id for row_id, _ in ranked]),),
            )
        }
        return [_match(rows[row_id], float(score)) for row_id, score in ranked if row_id in rows]

    @property
    def vector_signature(self) -> str | None:
        """The signature recorded with the stored vectors (``None`` before the first).

        Raises:
            StoreError: the database failed or the index is closed.
        """
        return self._run("read the vector signature", lambda conn: _vector_meta(conn)[0])

    def vector_counts(self, signature: str, session_ids: Sequence[str]) -> tuple[int, int]:
        """``(done, total)``: chunks of ``session_ids`` with a vector of ``signature`` for their
        current text or an unreadable mark, and all their chunks.

        Raises:
            StoreError: the database failed or the index is closed.
        """
        if not session_ids:
            return 0, 0
        params = {"signature": signature, "sessions": _sessions_param(session_ids)}
        sql = f"""
            SELECT count(v.chunk_id), count(*)
            FROM chunks AS c LEFT JOIN vectors AS v ON {_VECTOR_OF}
            WHERE {_IN_SCOPE}
        """

        def run(conn: apsw.Connection) -> tuple[int, int]:
            done, total = conn.execute(sql, params).fetchone()
            return int(done), int(total)

        return self._run("count history vectors", run)

    def counts(self) -> dict[str, int]:
        """``{"sessions", "messages", "chunks", "vectors"}`` over the whole index: indexed
        sessions, distinct messages with a chunk, chunks, and stored vectors (unreadable marks
        not counted).

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> dict[str, int]:
            (sessions,) = conn.execute("SELECT count(*) FROM sessions").fetchone()
            (messages,) = conn.execute(
                "SELECT count(*) FROM (SELECT DISTINCT session_id, message_id FROM chunks)").fetchone()
            (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            (vectors,) = conn.execute("SELECT count(*) FROM vectors WHERE vector IS NOT NULL").fetchone()
            return {"sessions": sessions, "messages": messages, "chunks": chunks, "vectors": vectors}

        return self._run("count the history index", run)


def _vector_meta(conn: apsw.Connection) -> tuple[str | None, int | None]:
    """The ``(signature, dimensions)`` of the stored vectors, from ``meta`` (``None`` where no
    vector was stored yet; ``dimensions`` stays ``None`` while every vector is an unreadable
    mark)."""
    rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)",
                             (_SIGNATURE_KEY, _DIMENSIONS_KEY)).fetchall())
    try:
        dimensions = int(rows[_DIMENSIONS_KEY]) if _DIMENSIONS_KEY in rows else None
    except ValueError:
        dimensions = -1  # unreadable: differs from every real length
    return rows.get(_SIGNATURE_KEY), dimensions


def _match(row: Sequence[Any], score: float) -> HistoryMatch:
    """A :class:`HistoryMatch` of a row of :data:`_MATCH_COLUMNS`."""
    session_id, message_id, offset, content, role, timestamp = row
    return HistoryMatch(session_id, message_id, offset, _from_db(content), score, _from_db(role), timestamp)


def _top_numpy(rows: Iterator[tuple[int, bytes]], query: array, limit: int) -> list[tuple[int, float]]:
    """``[(chunk id, dot product)]`` of the ``limit`` best of ``rows`` (``(chunk id, float32
    blob)`` in key order), computed in batches of :data:`_VECTOR_BATCH` rows; a stable sort keeps
    the key order among equal scores."""
    import numpy as np

    q = np.frombuffer(query.tobytes(), dtype=np.float32)
    ids: list[int] = []
    scores: list[Any] = []
    while batch := list(islice(rows, _VECTOR_BATCH)):
        ids.extend(row_id for row_id, _ in batch)
        matrix = np.frombuffer(b"".join(blob for _, blob in batch), dtype=np.float32).reshape(len(batch), -1)
        scores.append(matrix @ q)
    if not ids:
        return []
    every = np.concatenate(scores)
    order = np.argsort(-every, kind="stable")[:limit]
    return [(ids[i], float(every[i])) for i in order]
