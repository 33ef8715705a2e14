"""The sqlite-vec vector index: chunk vectors in the SQLite file of :class:`SqliteFts5Store`.

Schema (created by the writer, next to the store's tables, in one transaction)::

    chunk_vectors(chunk_id INTEGER PRIMARY KEY -> chunks(id) ON DELETE CASCADE,
                  vector_id INTEGER -> vectors(id))  -- NULL: the model does not read this chunk
    INDEX chunk_vectors_vector ON chunk_vectors(vector_id)
    vectors(id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,        -- embedding_key() of the embedded text
            vector BLOB NOT NULL)            -- float32, unit length
    meta: 'vector_schema_version', 'vector_signature', 'vector_dimensions', 'vector_input_version'
          -- rows of the store's meta

Chunks point at vectors by integer id, not by key: the search joins every attached chunk to its
vector, and that join by a 64-character key was more than half of a 100k-vector search
(306 ms against 122 ms by id, 384 dimensions, 2 cores).

A chunk is *pending* while it has no ``chunk_vectors`` row. Vectors are stored once per key and
shared by every chunk with that text, so a copied or moved document costs no embedding (a code
chunk's text names its file: :func:`~hermes_workspace.domain.semantic.chunk_embedding_input`). The store
deletes a file's chunks when it replaces or deletes the file; the foreign key's cascade (the
store's writer runs with ``foreign_keys=ON``) removes their attachments in the same transaction,
so the new chunks, whose ids may be the old ones reused, are pending again. Vectors no chunk uses
(orphans) stay until :meth:`SqliteVecIndex.prune` or :func:`prune_orphaned_vectors` (every
``index`` run, after its embedding pass or, without one, at its end): until then a file moved or
copied back reuses them without being embedded again.

Search is exact: sqlite-vec's scalar ``vec_distance_cosine`` over every attached vector that
passes the path filters, then the top ``limit``; no approximate index, so a filter never loses
candidates. Measured with 384 dimensions on 2 cores: 100k vectors take about 120 ms per query
without a filter, 50-65 ms with a filter keeping a third of them; 10k vectors a tenth of that.
(sqlite-vec's ``vec0`` table took 80 ms without a filter and the same with one, but 0.1.9 never
reuses the slots of deleted vectors, so it grows with every re-embedded chunk until rebuilt.)

Concurrency: as for the store (WAL, a busy timeout, ``BEGIN IMMEDIATE`` for writes). This index
has its own connection, so it waits for (and does not see the uncommitted writes of) a store
connection holding a transaction: do not call its write methods inside ``SqliteFts5Store.batch()``.
One object per thread.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from hermes_workspace.adapters.sqlite_common import (
    IndexFileConnection,
    immediate_transaction,
    meta_json,
    meta_version,
    open_index_connection,
    translated_sqlite_errors,
    path_filters,
    split_definitions,
    sqlite_int,
)
from hermes_workspace.domain.errors import EmbedderUnavailableError, IndexNotFoundError, StoreError
from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.paths import from_storage
from hermes_workspace.domain.semantic import (
    PLAIN_INPUT,
    EmbeddingJob,
    Vector,
    VectorStatus,
    chunk_embedding_input,
    embedding_input_version,
    embedding_key,
)

__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "SqliteVecIndex", "prune_orphaned_vectors", "stored_dimensions"]

DEFAULT_BUSY_TIMEOUT_MS = 5_000
"""How long a connection waits for another one's lock before failing (milliseconds)."""

VECTOR_SCHEMA_VERSION = 1
"""Version of the vector tables, stored as ``meta.vector_schema_version`` (apart from the store's
``schema_version``, whose rebuilds keep the vectors: see :meth:`SqliteVecIndex.prepare`). A writer
finding an older version drops and recreates the vector tables (derived data: every chunk is
embedded again) and refuses a newer one; a reader takes any other version for no vectors."""

_VERSION_KEY = "vector_schema_version"
_SIGNATURE_KEY = "vector_signature"
_DIMENSIONS_KEY = "vector_dimensions"
_ERROR_KEY = "vector_last_error"
_INPUT_KEY = "vector_input_version"

_INPUT_COLUMNS = (
    "c.id, coalesce(c.breadcrumb, c.section), c.content, f.abs_path, f.root_path, c.start_line, c.end_line"
)
"""What :func:`_input` reads of a chunk (``chunks AS c JOIN files AS f``)."""


def _input(row: tuple[Any, ...], code_header: bool) -> str:
    """The embedder's input for a row of :data:`_INPUT_COLUMNS` (paths in the in-memory form)."""
    _, section, content, abs_path, root_path, start_line, end_line = row
    return chunk_embedding_input(
        section, content, path=from_storage(abs_path), root=from_storage(root_path),
        start_line=start_line, end_line=end_line, code_header=code_header,
    )

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS vectors (
        id     INTEGER PRIMARY KEY,
        key    TEXT NOT NULL UNIQUE,
        vector BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS chunk_vectors (
        chunk_id  INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        vector_id INTEGER REFERENCES vectors(id)
    )""",
    "CREATE INDEX IF NOT EXISTS chunk_vectors_vector ON chunk_vectors(vector_id)",
)

_DROP = (
    "DROP TABLE IF EXISTS chunk_vectors",  # first: it references vectors
    "DROP TABLE IF EXISTS vectors",
)

_HIT_COLUMNS = (
    "f.abs_path, c.start_line, c.end_line, c.section, c.chunk_index, c.token_count, f.modified_at, c.content, "
    "c.breadcrumb, c.definitions, f.root_path, c.page, c.anchor"
)


def _blob(vector: Vector | Sequence[float]) -> bytes:
    """``vector`` as the float32 blob sqlite-vec reads (the platform's byte order: little-endian
    on every platform sqlite-vec ships wheels for)."""
    if isinstance(vector, array) and vector.typecode == "f":
        return vector.tobytes()
    return array("f", vector).tobytes()


def _last_error(conn: apsw.Connection) -> dict[str, Any] | None:
    return meta_json(conn, _ERROR_KEY)


_PRUNE = (
    # An attachment whose chunk is gone: the cascade removes them, unless the chunks were deleted
    # by a connection without foreign keys (another SQLite client, an older version).
    "DELETE FROM chunk_vectors WHERE NOT EXISTS (SELECT 1 FROM chunks AS c WHERE c.id = chunk_vectors.chunk_id)",
    "DELETE FROM vectors WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors AS cv WHERE cv.vector_id = vectors.id)",
)


def _prune(conn: apsw.Connection) -> int:
    """Run :data:`_PRUNE` (inside the caller's transaction); returns the vectors deleted. Plain
    SQL on the tables: needs no sqlite-vec extension. Both statements walk a table once with a
    primary-key or index lookup per row."""
    conn.execute(_PRUNE[0])
    conn.execute(_PRUNE[1])
    return conn.changes()


def stored_dimensions(path: Path, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> int | None:
    """The vector length recorded in the index file ``path`` by the last embedding pass
    (``meta.vector_dimensions``), ``None`` when there is none (no file, no vectors yet, an
    unreadable value). Needs no sqlite-vec.

    Raises:
        StoreError: the database failed.
    """
    if not path.exists():
        return None
    with translated_sqlite_errors(path, "read the vector size", busy_timeout_ms=busy_timeout_ms,
                                  subject="vector index"):
        conn = open_index_connection(path, readonly=True, busy_timeout_ms=busy_timeout_ms)
        try:
            if not SqliteVecIndex._has_table(conn, "meta"):
                return None
            _, dimensions = SqliteVecIndex._meta(conn)
        finally:
            conn.close()
    return dimensions if dimensions is not None and dimensions > 0 else None


def prune_orphaned_vectors(path: Path, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> int:
    """Delete the orphaned vectors of the index file ``path`` (vectors no chunk uses, and
    attachments whose chunk is gone) in one transaction; returns how many vectors. Opens its own
    connection and needs no sqlite-vec (an ``index`` run without an embedder prunes what an
    earlier semantic run left); 0 when the file or its vector tables do not exist.

    Raises:
        StoreError: the database failed (StoreUnusableError: as a whole) or is locked longer
            than ``busy_timeout_ms``.
    """
    if not path.exists():
        return 0
    with translated_sqlite_errors(path, "prune orphaned vectors", busy_timeout_ms=busy_timeout_ms,
                                  subject="vector index"):
        conn = open_index_connection(path, readonly=False, busy_timeout_ms=busy_timeout_ms)
        try:
            if not (SqliteVecIndex._has_table(conn, "meta") and SqliteVecIndex._usable(conn)):
                return 0
            with immediate_transaction(conn):
                return _prune(conn)
        finally:
            conn.close()


class SqliteVecIndex(IndexFileConnection):
    """A :class:`~hermes_workspace.domain.ports.VectorIndex` in the SQLite file of a
    :class:`~hermes_workspace.adapters.sqlite_fts5_store.SqliteFts5Store` (sqlite-vec, exact
    cosine search).

    Args:
        path: the database file (``<workspace>/.index/workspace.sqlite``); the store must have
            created its schema there already.
        readonly: open for search and status only. Never runs DDL or writes; where the vector
            tables do not exist yet, the index reads as empty (every chunk pending, no
            signature). Write methods raise :class:`StoreError` (``prepare`` only when it would
            have to write).
        busy_timeout_ms: how long to wait for another connection's lock (milliseconds) before
            failing with :class:`StoreError`.
        code_header: give the embedder code chunks after their ``File``/``Language``/``Lines``
            header (:func:`~hermes_workspace.domain.semantic.chunk_embedding_input`,
            ``knowledgebase.embedder.code_header``); part of the vectors' identity
            (:meth:`prepare`).

    Raises (from the constructor):
        EmbedderUnavailableError: the ``sqlite_vec`` package (the ``semantic`` extra) is not
            installed, or its extension cannot be loaded.
        IndexNotFoundError: the file does not exist, or holds no ``chunks`` table (the keyword
            index was never built).
        StoreError: the file cannot be opened, is not a SQLite database, or is locked longer than
            the busy timeout while the writer creates its tables.

    Every public method raises :class:`StoreError` for any database failure (locked longer than the
    busy timeout, disk full, corruption, index closed); no ``apsw`` exception escapes.
    """

    subject = "vector index"

    def __init__(
        self, path: Path, *, readonly: bool = False, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        code_header: bool = False,
    ) -> None:
        super().__init__(path, readonly=readonly, busy_timeout_ms=busy_timeout_ms)
        self.code_header = code_header
        self._input_version = embedding_input_version(code_header)
        try:
            import sqlite_vec
        except ImportError as exc:
            raise EmbedderUnavailableError(
                "semantic search needs the sqlite-vec package, which is not installed",
                hint="Install the semantic extra: pip install 'hermes-workspace[semantic]'.",
            ) from exc
        if not self.path.exists():
            raise IndexNotFoundError(f"no index at {self.path}")
        with self._translate("open"):
            conn = self._open()  # the writer's foreign keys: attachments must go with their chunks
            try:
                self._load_extension(conn, sqlite_vec.loadable_path())
                if not (self._has_table(conn, "chunks") and self._has_table(conn, "meta")):
                    raise IndexNotFoundError(
                        f"{self.path} holds no keyword index to attach vectors to",
                        hint="Run `hermes-workspace index` first (the keyword index creates the database).",
                    )
                if not readonly and not self._usable(conn):
                    with self._write_transaction(conn):
                        self._ensure_tables(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn

    # -- connection setup -------------------------------------------------------------------

    def _load_extension(self, conn: apsw.Connection, loadable: str) -> None:
        try:
            conn.enable_load_extension(True)
            conn.load_extension(loadable)
            conn.enable_load_extension(False)
        except (apsw.Error, AttributeError) as exc:  # AttributeError: apsw built without extension loading
            raise EmbedderUnavailableError(
                f"cannot load the sqlite-vec extension ({loadable}): {exc}",
                hint="Reinstall the semantic extra: pip install --force-reinstall 'hermes-workspace[semantic]'.",
            ) from exc

    @staticmethod
    def _has_table(conn: apsw.Connection, name: str) -> bool:
        return (
            conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", (name,)).fetchone()
            is not None
        )

    @staticmethod
    def _version(conn: apsw.Connection) -> int | None:
        return meta_version(conn, _VERSION_KEY)

    @classmethod
    def _usable(cls, conn: apsw.Connection) -> bool:
        """The vector tables exist in this version. Checked on every call, not once: a reader
        opened before the first ``index --semantic`` sees the tables once a writer made them."""
        return (
            cls._version(conn) == VECTOR_SCHEMA_VERSION
            and cls._has_table(conn, "chunk_vectors")
            and cls._has_table(conn, "vectors")
        )

    def _ensure_tables(self, conn: apsw.Connection) -> None:
        """Create the vector tables, dropping those of an older version; inside a write
        transaction.

        Raises:
            StoreError: the tables are of a newer version.
        """
        version = self._version(conn)
        if version is not None and version > VECTOR_SCHEMA_VERSION:
            raise StoreError(
                f"the vectors in {self.path} were made by a newer hermes-workspace (vector schema "
                f"version {version}, this one knows {VECTOR_SCHEMA_VERSION})",
                hint="Upgrade hermes-workspace, or delete the .index directory to rebuild the index.",
            )
        if self._usable(conn):
            return
        for statement in _DROP:
            conn.execute(statement)
        conn.execute("DELETE FROM meta WHERE key IN (?, ?)", (_SIGNATURE_KEY, _DIMENSIONS_KEY))
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_VERSION_KEY, str(VECTOR_SCHEMA_VERSION))
        )

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _meta(conn: apsw.Connection) -> tuple[str | None, int | None]:
        """The stored ``(signature, dimensions)``, ``None`` where absent."""
        rows = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", (_SIGNATURE_KEY, _DIMENSIONS_KEY)
            ).fetchall()
        )
        dims = rows.get(_DIMENSIONS_KEY)
        try:
            dimensions = None if dims is None else int(dims)
        except (TypeError, ValueError):
            dimensions = -1  # unreadable: differs from every real size, so prepare() resets
        return rows.get(_SIGNATURE_KEY), dimensions

    @staticmethod
    def _stored_input_version(conn: apsw.Connection) -> str:
        """The stored ``vector_input_version``; vectors made before it was recorded are of
        :data:`~hermes_workspace.domain.semantic.PLAIN_INPUT`."""
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_INPUT_KEY,)).fetchone()
        return PLAIN_INPUT if row is None else row[0]

    @staticmethod
    def _vector_ids(conn: apsw.Connection, keys: set[str]) -> dict[str, int]:
        """``{key: vector id}`` for the ``keys`` that have a stored vector."""
        if not keys:
            return {}
        return dict(
            conn.execute(
                "SELECT key, id FROM vectors WHERE key IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(keys)),),
            ).fetchall()
        )

    def _matching_chunks(self, conn: apsw.Connection, jobs: Sequence[EmbeddingJob]) -> set[int]:
        """Ids of the jobs' chunks that still exist with the text the job was made from. The
        store reuses the ids of deleted chunks, so a job from before a replace may name another
        chunk now; attaching its vector there would be wrong."""
        ids = sorted({job.chunk_id for job in jobs})
        if not ids:
            return set()
        current = {
            row[0]: embedding_key(_input(row, self.code_header))
            for row in conn.execute(
                f"SELECT {_INPUT_COLUMNS} FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
                "WHERE c.id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            )
        }
        return {job.chunk_id for job in jobs if current.get(job.chunk_id) == job.key}

    # -- VectorIndex ------------------------------------------------------------------------

    def prepare(self, signature: str, dimensions: int) -> bool:
        """Make the index hold vectors of the embedder ``signature`` with ``dimensions`` floats
        each, of inputs made as this index makes them
        (:func:`~hermes_workspace.domain.semantic.embedding_input_version`). When other ones are
        stored (another embedder, or inputs of another version),
        delete every vector and attachment (every chunk becomes pending) and return True; the
        first time, or when they are the same, return False.

        Raises:
            StoreError: the database failed, or (read-only index) the signature would change.
        """

        def run(conn: apsw.Connection) -> bool:
            wanted = (signature, dimensions, self._input_version)
            if self._usable(conn) and (*self._meta(conn), self._stored_input_version(conn)) == wanted:
                return False  # the common case takes no write lock
            self._connection("change the embedder signature", write=True)
            with self._write_transaction(conn):
                self._ensure_tables(conn)  # a no-op unless they were dropped since opening
                stored_signature, stored_dimensions = self._meta(conn)
                if (stored_signature, stored_dimensions, self._stored_input_version(conn)) == wanted:
                    return False
                conn.execute("DELETE FROM chunk_vectors")
                conn.execute("DELETE FROM vectors")
                conn.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    [(_SIGNATURE_KEY, signature), (_DIMENSIONS_KEY, str(int(dimensions))),
                     (_INPUT_KEY, self._input_version)],
                )
                return stored_signature is not None or stored_dimensions is not None

        return self._run("prepare the vector index", run)

    def pending(self, limit: int) -> list[EmbeddingJob]:
        """Up to ``limit`` chunks without a ``chunk_vectors`` row, by ascending chunk id, each as
        an :class:`EmbeddingJob` (``text`` = :func:`chunk_embedding_input`, ``key`` = its digest).
        ``chunk_id`` is the store's chunk id. ``limit < 1`` gives ``[]``.

        Raises:
            StoreError: the database failed or the index is closed.
        """
        if limit < 1:
            return []

        def run(conn: apsw.Connection) -> list[EmbeddingJob]:
            source = f"SELECT {_INPUT_COLUMNS} FROM chunks AS c JOIN files AS f ON f.id = c.file_id"
            if self._usable(conn):
                sql = f"""{source}
                         WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors AS cv WHERE cv.chunk_id = c.id)
                         ORDER BY c.id LIMIT ?"""
            else:  # a reader before the first vector: everything is pending
                sql = f"{source} ORDER BY c.id LIMIT ?"
            jobs = []
            for row in conn.execute(sql, (int(limit),)):
                text = _input(row, self.code_header)
                jobs.append(EmbeddingJob(chunk_id=row[0], text=text, key=embedding_key(text)))
            return jobs

        return self._run("list chunks waiting for vectors", run)

    def attach_known(self, jobs: Sequence[EmbeddingJob]) -> list[EmbeddingJob]:
        """Attach the stored vector of each job's ``key`` to its chunk (one transaction) and
        return, in order, the jobs whose key has no vector yet. A job whose chunk is gone or now
        holds other text is dropped when its key is known (nothing to do) and returned when not
        (:meth:`add` then stores the vector without attaching it).

        Raises:
            StoreError: the database failed, the index is closed or read-only.
        """
        if not jobs:
            self._connection("attach vectors", write=True)
            return []

        def run(conn: apsw.Connection) -> list[EmbeddingJob]:
            with self._write_transaction(conn):
                known = self._vector_ids(conn, {job.key for job in jobs})
                if known:
                    live = self._matching_chunks(conn, [job for job in jobs if job.key in known])
                    conn.executemany(
                        "INSERT OR REPLACE INTO chunk_vectors (chunk_id, vector_id) VALUES (?, ?)",
                        [(job.chunk_id, known[job.key]) for job in jobs if job.key in known and job.chunk_id in live],
                    )
            return [job for job in jobs if job.key not in known]

        return self._run("attach known vectors", run, write=True)

    def add(self, items: Sequence[tuple[EmbeddingJob, Vector | None]]) -> None:
        """In one ``BEGIN IMMEDIATE`` transaction, store each vector under its job's key (a key
        already stored keeps its vector) and attach it to the job's chunk; a ``None`` vector
        marks the chunk unreadable (attached to no vector, not pending). Jobs whose chunk is gone
        or holds other text now are not attached (their vectors are stored).

        Raises:
            StoreError: a vector's length is not the prepared dimensions, or :meth:`prepare` was
                never called (nothing is written then); the database failed; the index is closed
                or read-only.
        """

        def run(conn: apsw.Connection) -> None:
            if not items:
                return
            _, dimensions = self._meta(conn) if self._usable(conn) else (None, None)
            if dimensions is None:
                raise StoreError(
                    f"no embedder is recorded in {self.path}: call prepare() before add()",
                    hint="This is a bug in the caller of the vector index.",
                )
            for job, vector in items:
                if vector is not None and len(vector) != dimensions:
                    raise StoreError(
                        f"vector of {len(vector)} dimensions for chunk {job.chunk_id}, the index holds {dimensions}",
                        hint="The embedder changed its output size: call prepare() with its new signature.",
                    )
            with self._write_transaction(conn):
                live = self._matching_chunks(conn, [job for job, _ in items])
                conn.executemany(
                    "INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)",
                    [(job.key, _blob(vector)) for job, vector in items if vector is not None],
                )
                ids = self._vector_ids(conn, {job.key for job, vector in items if vector is not None})
                conn.executemany(
                    "INSERT OR REPLACE INTO chunk_vectors (chunk_id, vector_id) VALUES (?, ?)",
                    [
                        (job.chunk_id, None if vector is None else ids[job.key])
                        for job, vector in items
                        if job.chunk_id in live
                    ],
                )

        self._run("store vectors", run, write=True)

    def search(
        self,
        vector: Vector,
        *,
        path_prefix: str | tuple[str, ...] | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """The ``limit`` (clamped to >= 1) chunks nearest to ``vector``, exact: the cosine
        distance to every attached vector whose file passes the filters, ordered by distance then
        chunk id. ``score`` is the cosine similarity (``1 - distance``, -1..1; 0 for a zero
        vector). ``path_prefix`` and ``glob`` mean what they mean for
        :meth:`SqliteFts5Store.search` (see :mod:`hermes_workspace.domain.globs`) and apply
        before the top-k cut. ``[]`` when no vector is stored.

        Raises:
            UsageError: ``glob`` is malformed or empty.
            StoreError: ``vector`` does not have the stored dimensions; the database failed or
                the index is closed.
        """
        where, params = path_filters(path_prefix, glob)
        params["limit"] = sqlite_int(limit, 1)
        params["query"] = _blob(vector)
        # Rank on ids and distances only; read the content of the top rows afterwards. Without a
        # filter the ranking never touches chunks (whose rows carry the text).
        joins = "JOIN chunks AS c ON c.id = cv.chunk_id JOIN files AS f ON f.id = c.file_id" if where else ""
        sql = f"""
            WITH top AS (
                SELECT cv.chunk_id AS id,
                       coalesce(vec_distance_cosine(v.vector, :query), 1.0) AS distance
                FROM chunk_vectors AS cv
                JOIN vectors AS v ON v.id = cv.vector_id
                {joins}
                {"WHERE " + " AND ".join(where) if where else ""}
                ORDER BY distance, cv.chunk_id
                LIMIT :limit
            )
            SELECT top.distance, {_HIT_COLUMNS}
            FROM top
            JOIN chunks AS c ON c.id = top.id
            JOIN files AS f ON f.id = c.file_id
            ORDER BY top.distance, top.id
        """

        def run(conn: apsw.Connection) -> list[SearchHit]:
            if not self._usable(conn):
                return []
            _, dimensions = self._meta(conn)
            if dimensions is None:
                return []
            if len(vector) != dimensions:
                raise StoreError(
                    f"query vector of {len(vector)} dimensions, the index holds {dimensions}",
                    hint="Embed the query with the embedder that made the index (see its signature).",
                )
            return [
                SearchHit(
                    path=Path(from_storage(abs_path)),
                    line_start=line_start,
                    line_end=line_end,
                    section=section,
                    chunk_index=chunk_index,
                    score=1.0 - distance,
                    tokens=tokens,
                    modified=modified,
                    content=content,
                    breadcrumb=breadcrumb,
                    definitions=split_definitions(definitions),
                    root=Path(from_storage(root_path)),
                    page=page,
                    anchor=anchor,
                )
                for (distance, abs_path, line_start, line_end, section, chunk_index, tokens, modified, content,
                     breadcrumb, definitions, root_path, page, anchor) in (
                    conn.execute(sql, params)
                )
            ]

        return self._run("search vectors", run)

    def prune(self) -> int:
        """Delete the orphaned vectors: attachments whose chunk is gone, then the vectors no
        chunk is attached to; returns how many vectors.

        Raises:
            StoreError: the database failed, the index is closed or read-only.
        """

        def run(conn: apsw.Connection) -> int:
            with self._write_transaction(conn):
                return _prune(conn)

        return self._run("prune vectors", run, write=True)

    def record_failure(self, error: dict[str, Any] | None) -> None:
        """Store (``meta.vector_last_error``, JSON) or clear why the last embedding pass stopped.

        Raises:
            StoreError: the database failed, or the index is read-only.
        """

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                if error is None:
                    conn.execute("DELETE FROM meta WHERE key = ?", (_ERROR_KEY,))
                else:
                    conn.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_ERROR_KEY, json.dumps(error))
                    )

        self._run("record the embedding failure", run, write=True)

    def pending_by_root(self) -> dict[Path, int]:
        """Chunks without a ``chunk_vectors`` row, counted by their file's ``root_path`` (every
        chunk before the first vector). One pass over the chunks: callers ask only while some
        are pending (``status().pending``).

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> dict[Path, int]:
            missing = ("AND NOT EXISTS (SELECT 1 FROM chunk_vectors AS cv WHERE cv.chunk_id = c.id)"
                       if self._usable(conn) else "")
            rows = conn.execute(
                f"SELECT f.root_path, count(*) FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
                f"WHERE 1 {missing} GROUP BY f.root_path"
            )
            return {Path(from_storage(root)): count for root, count in rows}

        return self._run("count the chunks waiting for vectors", run)

    def status(self) -> VectorStatus:
        """Counts of chunks, embedded, unreadable and pending chunks, distinct vectors, and the
        stored signature (``None`` before the first :meth:`prepare`).

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> VectorStatus:
            (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            if not self._usable(conn):
                return VectorStatus(chunks, 0, 0, chunks, 0, None, _last_error(conn))
            signature, _ = self._meta(conn)
            # The cascade keeps every chunk_vectors row on a live chunk, so counting rows
            # (on its small vector_id index) is counting chunks.
            embedded, unreadable = conn.execute(
                "SELECT count(vector_id), count(*) - count(vector_id) FROM chunk_vectors"
            ).fetchone()
            (vectors,) = conn.execute("SELECT count(*) FROM vectors").fetchone()
            return VectorStatus(
                chunks=chunks,
                embedded=embedded,
                unreadable=unreadable,
                pending=max(0, chunks - embedded - unreadable),
                vectors=vectors,
                signature=signature,
                last_error=_last_error(conn),
            )

        return self._run("read the vector status", run)

    def check_dimensions(self) -> tuple[int | None, int]:
        """For ``doctor``: the stored dimensions (``None`` before the first :meth:`prepare`) and
        how many stored vectors are not that many float32 values long.

        Raises:
            StoreError: the database failed or the index is closed.
        """

        def run(conn: apsw.Connection) -> tuple[int | None, int]:
            if not self._usable(conn):
                return None, 0
            _, dimensions = self._meta(conn)
            if dimensions is None:
                return None, 0
            (bad,) = conn.execute("SELECT count(*) FROM vectors WHERE length(vector) != ?", (4 * dimensions,)).fetchone()
            return dimensions, bad

        return self._run("check the vector dimensions", run)
