"""The SQLite FTS5 index store: files and chunks in one SQLite file, BM25 search over them.

Binding: ``apsw`` (not the standard ``sqlite3``), whose bundled SQLite has FTS5 with
``contentless_delete`` and can load extensions such as sqlite-vec into the same file later.

Schema (version :data:`SCHEMA_VERSION`, recorded in ``meta``)::

    meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)              -- schema_version
    files(id INTEGER PRIMARY KEY, abs_path TEXT UNIQUE, name,    -- name = basename
          root_path, content_hash, config_signature, size_bytes, mtime_ns,
          modified_at, indexed_at, chunk_count)
    chunks(id INTEGER PRIMARY KEY, file_id -> files(id) ON DELETE CASCADE, chunk_index, content,
           token_count, start_line, end_line, start_char, end_char, section, kind,
           breadcrumb, definitions,                            -- definitions: "\n"-joined names
           page, anchor,                                       -- converted documents only
           UNIQUE(file_id, chunk_index))
    chunks_fts USING fts5(content, section, path, breadcrumb, content='', contentless_delete=1,
                          tokenize='porter unicode61 remove_diacritics 2')   -- rowid = chunks.id
    TRIGGER chunks_fts_delete AFTER DELETE ON chunks  -- drops the FTS row, also on cascade
    file_encodings(file_id PRIMARY KEY -> files(id) ON DELETE CASCADE, encoding)
                                               -- legacy encodings only (see _ENCODINGS_TABLE)

Paths are stored through :func:`~hermes_workspace.domain.paths.to_storage`, so names that are not
valid UTF-8 keep their bytes.

The FTS table is contentless (text lives once, in ``chunks.content``); ``bm25()`` needs only the
per-row token counts FTS5 keeps anyway. Its ``path`` column holds the words of the file's path
relative to its root (directories and stem: ``json/decoder.py`` -> ``json decoder``), so a query
naming a module finds it.

What FTS5 indexes is each column passed through
:func:`~hermes_workspace.domain.text_normalization.normalize_for_search`, and
:func:`compile_fts5_match` passes every query word through the same function (Arabic letter
variants folded, vowel marks and tatweel removed, the article stripped; text without Arabic script
is unchanged), then through :func:`~hermes_workspace.domain.text_normalization.cjk_bigrams`
(Chinese, Japanese and Korean runs become overlapping character bigrams; other text is
unchanged). ``chunks.content`` keeps the text as written, so hits, line ranges and the
application's exact-literal check see the original.

Concurrency: WAL journal, ``synchronous=NORMAL``, a busy timeout on every connection. Each
:meth:`SqliteFts5Store.replace_file` is one ``BEGIN IMMEDIATE`` transaction, so a concurrent
reader sees the old or the new version of a file, never a mix; a second writer waits up to the
busy timeout for the first, then gets a :class:`StoreError`. A store object holds one connection
and must not be used from two threads at once (use one store per thread).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import Any

import apsw

from hermes_workspace.adapters.sqlite_common import (
    IndexFileConnection,
    folder_range,
    meta_json,
    meta_version,
    immediate_transaction,
    open_index_connection,
    path_filters,
    split_definitions,
    sqlite_int,
    stored_path,
)
from hermes_workspace.domain.catalog import DoctorCheck, Tombstone
from hermes_workspace.domain.errors import IndexNotFoundError, StoreError, StoreUnusableError
from hermes_workspace.domain.model import Chunk, FileRecord, RootCounts, SearchHit, StoreStatus
from hermes_workspace.domain.paths import from_storage, to_storage
from hermes_workspace.domain.query import Compound, Query
from hermes_workspace.domain.text_normalization import cjk_bigrams, has_cjk, normalize_for_search

__all__ = ["BM25_WEIGHTS", "SCHEMA_VERSION", "SqliteFts5Store", "compile_fts5_match"]

SCHEMA_VERSION = 6
"""Version of the layout below, stored as ``meta.schema_version``. A writer finding an older
version drops and rebuilds the index (it is derived data); a reader refuses it.

History: 1 indexed the text as written; 2 indexes it through
:func:`~hermes_workspace.domain.text_normalization.normalize_for_search` (Arabic letter variants
folded, diacritics and tatweel removed, definite article stripped), which version-1 rows lack;
3 also leaves out of the indexed copy the one-character words that stand alone between
whitespace (see :func:`indexed_text`); 4 indexes Chinese, Japanese and Korean runs (in
``content``, ``section`` and ``path``) as overlapping character bigrams
(:func:`~hermes_workspace.domain.text_normalization.cjk_bigrams`), where version 3 had one token
per run, so its rows would miss a query word inside a run; 5 adds each chunk's ``breadcrumb``
and ``definitions`` (structural chunking) and the weighted FTS column ``breadcrumb``; 6 adds each
chunk's ``page`` and ``anchor`` (where a chunk of a converted PDF, PPTX or XLSX is in the
original), which version-5 rows of documents lack (they were not indexed before 6 anyway)."""

_LONE_CHARACTER = re.compile(r"(?<!\S)\S(?!\S)")


def indexed_text(text: str) -> str:
    """The copy of ``text`` that FTS5 indexes: :func:`normalize_for_search`, then every
    one-character word standing alone between whitespace replaced by a space.

    Queries never search words shorter than :data:`~hermes_workspace.domain.constants.MIN_TERM_CHARS`
    (seed 000), so such words only lengthen every row in BM25's length normalization ("a", "I",
    "=", "-", "1" in code) without ever matching; counting the same units on both sides is what
    bm25s does too. Measured on msmarco (benchmarks/): nDCG@10 0.7238 -> 0.7292.

    Last, Chinese, Japanese and Korean runs become character bigrams (:func:`cjk_bigrams`), after
    the lone words are gone, so a one-character run that touches other letters (``a数b``) stays a
    token while one standing alone between spaces does not (as in version 3)."""
    return cjk_bigrams(_LONE_CHARACTER.sub(" ", normalize_for_search(text)))

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
"""Porter stemming over Unicode 6.1 word rules with diacritics folded (``café`` = ``cafe``;
combining marks are part of a token and folded away too, so NFC and NFD text match alike)."""

BM25_WEIGHTS = (1.0, 2.0, 1.0, 4.0)
"""bm25() weights of the FTS columns ``content``, ``section``, ``path``, ``breadcrumb``.

FTS5 multiplies each hit's term frequency by its column's weight and normalizes by the whole
row's length, so a weight is "how many body mentions one mention here is worth":

- ``content`` 1.0 is the anchor;
- ``section`` 2.0: a heading or enclosing symbol naming the term says the chunk is *about* it,
  stronger evidence than one passing mention, but not so strong that a heading alone beats a
  chunk that discusses the term repeatedly (term frequency saturates at about 2-3 mentions);
- ``path`` 1.0: the path words are repeated on every chunk of the file, so they lift all its
  chunks equally; worth one body mention, enough to put ``json/decoder.py`` first for
  ``json decoder`` when bodies tie, without drowning chunks that actually discuss the words;
- ``breadcrumb`` 4.0: the qualified names of the unit and of the definitions that start in the
  chunk (``Config.from_file``) or its heading path: a chunk that *defines* or *is titled by* a
  query word is the answer a navigating agent wants, above the call sites, tests and changelog
  lines that merely mention it. Measured on the whole-repository sets of
  ``benchmarks/workspace_qa.py``.
"""


def _breadcrumb_words(chunk: Chunk) -> str | None:
    """The indexed copy of a chunk's breadcrumb and definition names (each once), or ``None``."""
    names = dict.fromkeys(n for n in (chunk.breadcrumb, *chunk.definitions) if n)
    return indexed_text("\n".join(names)) if names else None

DEFAULT_BUSY_TIMEOUT_MS = 10_000
"""How long a connection waits for another one's lock before failing (milliseconds)."""

_RECORD_BATCH = 500
"""Rows fetched per query by :meth:`SqliteFts5Store.file_records` (bounded memory, and no cursor
left open between yields, so callers may delete while iterating)."""

_FILE_COLUMNS = (
    "files.id, abs_path, root_path, content_hash, config_signature, size_bytes, mtime_ns, "
    "modified_at, indexed_at, chunk_count, file_encodings.encoding"
)
_FILES_WITH_ENCODINGS = "files LEFT JOIN file_encodings ON file_encodings.file_id = files.id"

_ENCODINGS_TABLE = """CREATE TABLE IF NOT EXISTS file_encodings (
        file_id  INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
        encoding TEXT NOT NULL
    )"""
"""The legacy encoding a file was read with, for the few files not in UTF-8 (evidence for their
ambiguous siblings, see :mod:`hermes_workspace.domain.encodings`). Added after schema version 3
without a new version: a writer creates it when missing, and an index without it reads as one
where no file had a legacy encoding."""

_TOMBSTONES_TABLE = """CREATE TABLE IF NOT EXISTS tombstones (
        abs_path     TEXT PRIMARY KEY,
        content_hash TEXT NOT NULL,
        size_bytes   INTEGER NOT NULL,
        mtime_ns     INTEGER NOT NULL,
        deleted_at   TEXT NOT NULL
    )"""
"""Files removed by ``delete`` (:class:`~hermes_workspace.domain.catalog.Tombstone`). Added after
schema version 5 without a new version, as :data:`_ENCODINGS_TABLE`: a writer creates it when
missing, and an index without it reads as one without tombstones. It survives a rebuild for a new
schema version (a user's deletion is not derived data)."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS files (
        id               INTEGER PRIMARY KEY,
        abs_path         TEXT NOT NULL UNIQUE,
        name             TEXT NOT NULL,
        root_path        TEXT NOT NULL,
        content_hash     TEXT NOT NULL,
        config_signature TEXT NOT NULL,
        size_bytes       INTEGER NOT NULL,
        mtime_ns         INTEGER NOT NULL,
        modified_at      TEXT NOT NULL,
        indexed_at       TEXT NOT NULL,
        chunk_count      INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS chunks (
        id          INTEGER PRIMARY KEY,
        file_id     INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        chunk_index INTEGER NOT NULL,
        content     TEXT NOT NULL,
        token_count INTEGER NOT NULL,
        start_line  INTEGER NOT NULL,
        end_line    INTEGER NOT NULL,
        start_char  INTEGER NOT NULL,
        end_char    INTEGER NOT NULL,
        section     TEXT,
        kind        TEXT NOT NULL,
        breadcrumb  TEXT,
        definitions TEXT,
        page        INTEGER,
        anchor      TEXT,
        UNIQUE (file_id, chunk_index)
    )""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
        content, section, path, breadcrumb,
        content = '', contentless_delete = 1,
        tokenize = '{FTS_TOKENIZER}'
    )""",
    """CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM chunks_fts WHERE rowid = old.id;
    END""",
)

_DROP = (
    "DROP TRIGGER IF EXISTS chunks_fts_delete",
    "DROP TABLE IF EXISTS chunks_fts",
    "DROP TABLE IF EXISTS file_encodings",
    "DROP TABLE IF EXISTS chunks",
    "DROP TABLE IF EXISTS files",
)

_UPSERT_FILE = """
INSERT INTO files (abs_path, name, root_path, content_hash, config_signature, size_bytes,
                   mtime_ns, modified_at, indexed_at, chunk_count)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (abs_path) DO UPDATE SET
    name = excluded.name, root_path = excluded.root_path, content_hash = excluded.content_hash,
    config_signature = excluded.config_signature, size_bytes = excluded.size_bytes,
    mtime_ns = excluded.mtime_ns, modified_at = excluded.modified_at,
    indexed_at = excluded.indexed_at, chunk_count = excluded.chunk_count
RETURNING id
"""

_INSERT_CHUNK = """
INSERT INTO chunks (id, file_id, chunk_index, content, token_count, start_line, end_line,
                    start_char, end_char, section, kind, breadcrumb, definitions, page, anchor)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

_INSERT_FTS = "INSERT INTO chunks_fts (rowid, content, section, path, breadcrumb) VALUES (?, ?, ?, ?, ?)"

_TOUCH_FILE = """
UPDATE files SET root_path = ?, content_hash = ?, config_signature = ?, size_bytes = ?,
                 mtime_ns = ?, modified_at = ?, indexed_at = ?
WHERE abs_path = ?
"""

def _quote(term: str) -> str:
    """``term`` as an FTS5 string (a phrase): double-quoted, embedded ``"`` doubled, NUL turned
    into a space (FTS5 reads the expression as a C string: a NUL would end it mid-quote)."""
    return '"' + term.replace("\x00", " ").replace('"', '""') + '"'


def compile_fts5_match(query: Query) -> str:
    """Compile a domain :class:`Query` into an FTS5 ``MATCH`` expression (seed 000).

    Every term is double-quoted (embedded ``"`` doubled), so no user text is ever read as FTS5
    syntax: ``NOT``, ``NEAR``, ``section:``, ``*`` and parentheses are plain words. Single words
    are OR-ed; a :class:`Compound` requires all its parts and rewards adjacency:
    ``("a b" OR ("a" AND "b"))``; groups are OR-ed in input order. Example::

        hermes-agent deployment  ->  ("hermes agent" OR ("hermes" AND "agent")) OR "deployment"

    Each word first goes through
    :func:`~hermes_workspace.domain.text_normalization.normalize_for_search`, the function
    :meth:`SqliteFts5Store.replace_file` applies to the indexed text (``الكتاب`` is looked up as
    ``كتاب``; words without Arabic script are unchanged).

    A Chinese, Japanese or Korean run in a word is looked up through its character bigrams, as
    indexed (:func:`~hermes_workspace.domain.text_normalization.cjk_bigrams`): a word of up to
    :data:`CJK_PHRASE_MAX_BIGRAMS` bigrams is the phrase of them (``数据库`` -> ``"数据 据库"``,
    found wherever the word occurs inside a longer run); a longer one (a question typed without
    spaces) is that phrase OR-ed with each of its distinct bigrams, so a chunk holding only some
    of them is found too, and BM25 ranks chunks holding more of them, and the whole run, first.

    Returns ``""`` for a query with no usable term (callers must not run an empty MATCH).
    Never raises. Words that are empty or whitespace-only (only possible in a hand-built Query)
    or after normalization (a word of tatweels) are left out, and NUL characters become spaces.
    """
    parts: list[str] = []
    for group in query.groups:
        if isinstance(group, Compound):
            words = [n for n in (cjk_bigrams(normalize_for_search(w)) for w in group.parts) if n.strip()]
            if len(words) == 1:
                parts.append(_quote(words[0]))
            elif words:
                phrase = _quote(" ".join(words))
                all_of = " AND ".join(_quote(w) for w in words)
                parts.append(f"({phrase} OR ({all_of}))")
        else:
            word = cjk_bigrams(normalize_for_search(group))
            if word.strip():
                parts.append(_word_match(word))
    return " OR ".join(parts)


CJK_PHRASE_MAX_BIGRAMS = 3
"""Longest Chinese, Japanese or Korean query word (in bigrams, so 4 characters) that
:func:`compile_fts5_match` requires whole, as a phrase; longer runs also match any of their
bigrams. Most Chinese words have 2-4 characters (four-character idioms included); a longer run in
a query is usually several words or a whole question, which a passage rarely holds verbatim.
Measured on a hand-made set of 20 Chinese, Japanese and Korean passages and 12 queries (7 words,
5 questions; 1 relevant passage each, 2 for one; before bigrams, 1 query in 12 found
anything): a phrase for every run finds 0.667 of the
relevant passages in the top 5 (4 of the 5 questions are missed), this rule 1.000 with precision 0.794
over all hits; OR-ing the bigrams of every run, with or without the phrase, keeps recall but
lowers precision to 0.753 (a 3-character word then finds passages holding one of its two
bigrams). Limits 2 to 5 measured alike; 3 follows the usual word length."""


def _word_match(word: str) -> str:
    """The MATCH term of one normalized query word: its phrase, or for a long CJK run the phrase
    OR-ed with its distinct bigrams (see :data:`CJK_PHRASE_MAX_BIGRAMS`). Words without CJK
    letters are always the quoted word, as before bigrams existed."""
    tokens = word.split()
    if len(tokens) <= CJK_PHRASE_MAX_BIGRAMS or not has_cjk(word):
        return _quote(word)
    pieces = [_quote(word), *(_quote(t) for t in dict.fromkeys(tokens))]
    return "(" + " OR ".join(pieces) + ")"


def _path_words(path: Path, root: Path) -> str:
    """The searchable words of a file path: its directories below ``root`` and its stem, joined
    by ``/`` (the tokenizer splits them). With fewer than two parts below the root, the parent
    directory's name is added so that ``json decoder`` still finds a flat root's ``decoder.py``."""
    try:
        rel: PurePath = path.relative_to(root)
    except ValueError:
        rel = PurePath(path.name)
    parts = list(rel.parts)
    if len(parts) < 2 and path.parent.name:
        parts.insert(0, path.parent.name)
    if parts:
        parts[-1] = PurePath(parts[-1]).stem or parts[-1]
    return "/".join(parts)


class SqliteFts5Store(IndexFileConnection):
    """An :class:`~hermes_workspace.domain.ports.IndexStore` in one SQLite file (FTS5, BM25).

    Args:
        path: the database file (``<workspace>/.index/workspace.sqlite``).
        readonly: open for search only. Never runs DDL or writes; the write methods raise
            :class:`StoreError`.
        busy_timeout_ms: how long to wait for another connection's lock (milliseconds) before
            failing with :class:`StoreError`.

    Raises (from the constructor):
        IndexNotFoundError: ``readonly`` and the file does not exist.
        StoreError: the file cannot be opened or created, is not a SQLite database, or (readonly)
            has no index schema or another version of it; or (writer) was made by a newer
            version, or holds other tables and no index schema.

    Every public method raises :class:`StoreError` for any database failure (locked longer than the
    busy timeout, disk full, corruption, store closed); no ``apsw`` exception escapes. The
    connection is opened in the constructor; :meth:`close` releases it.
    """

    subject = "index store"

    def __init__(self, path: Path, *, readonly: bool = False, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> None:
        super().__init__(path, readonly=readonly, busy_timeout_ms=busy_timeout_ms)
        if readonly and not self.path.exists():
            raise IndexNotFoundError(f"no index at {self.path}")
        with self._translate("open"):
            if not readonly:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._open(create=True)
            self._conn = conn
            try:
                if readonly:
                    self._check_schema_readonly(conn)
                else:
                    self._configure_writer(conn)
                    self._ensure_schema(conn)
            except BaseException:
                self._conn = None
                conn.close()
                raise

    # -- connection setup -------------------------------------------------------------------

    def _configure_writer(self, conn: apsw.Connection) -> None:
        """WAL mode (readers never wait for the writer) and a larger page cache, beyond the
        :data:`~.sqlite_common.WRITER_PRAGMAS` every writer has."""
        mode = conn.pragma("journal_mode", "wal")
        if str(mode).lower() != "wal":
            raise StoreError(
                f"could not switch the index database {self.path} to WAL mode (got {mode!r})",
                hint="Check that the index directory is on a local, writable file system.",
            )
        conn.pragma("cache_size", -16_384)  # KiB: 16 MiB keeps FTS5 segment merges in memory

    def _check_schema_readonly(self, conn: apsw.Connection) -> None:
        has_meta = conn.execute(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        version = self._read_version(conn) if has_meta else None
        if version != SCHEMA_VERSION:
            if version is not None and version > SCHEMA_VERSION:
                raise StoreError(
                    f"the index {self.path} has schema version {version}, newer than this "
                    f"hermes-workspace understands ({SCHEMA_VERSION})",
                    hint="Upgrade hermes-workspace, or delete the .index directory and run "
                    "`hermes-workspace index` to rebuild it.",
                )
            found = "no index schema" if version is None else f"schema version {version}"
            raise StoreError(
                f"the index {self.path} has {found} (expected version {SCHEMA_VERSION})",
                hint="Run `hermes-workspace index` to build or upgrade the index.",
            )

    @staticmethod
    def _read_version(conn: apsw.Connection) -> int | None:
        return meta_version(conn, "schema_version")

    def _ensure_schema(self, conn: apsw.Connection) -> None:
        with self._write_transaction(conn):
            tables = {
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
                )
            }
            version = self._read_version(conn) if "meta" in tables else None
            if version == SCHEMA_VERSION:
                conn.execute(_ENCODINGS_TABLE)
                conn.execute(_TOMBSTONES_TABLE)
                return
            if version is not None and version > SCHEMA_VERSION:
                raise StoreError(
                    f"the index {self.path} was made by a newer hermes-workspace "
                    f"(schema version {version}, this one knows {SCHEMA_VERSION})",
                    hint="Upgrade hermes-workspace, or delete the .index directory to rebuild the index.",
                )
            if version is None and tables - {"meta"}:
                raise StoreError(
                    f"{self.path} is a SQLite database but not a hermes-workspace index",
                    hint="Move that file away or point the workspace elsewhere; the index is "
                    "created as <workspace>/.index/workspace.sqlite.",
                )
            if version is not None:  # an older layout: the index is derived data, rebuild it
                for statement in _DROP:
                    conn.execute(statement)
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(_ENCODINGS_TABLE)
            conn.execute(_TOMBSTONES_TABLE)
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )

    @contextmanager
    def _write_transaction(self, conn: apsw.Connection) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error). IMMEDIATE takes the
        write lock up front, so a busy writer is waited for (busy timeout) instead of failing on
        a read-to-write lock upgrade. Inside :meth:`batch`, a savepoint of the batch instead."""
        if self._batching:
            with self._batch_savepoint(conn):
                yield
            return
        with immediate_transaction(conn):
            yield

    # -- file records -----------------------------------------------------------------------

    def _file_columns(self, conn: apsw.Connection) -> str:
        """``<columns> FROM <tables>`` of a file record: with the encodings table when the index
        has it (an index made before it existed, opened read-only, has none)."""
        if self._has_encodings is None:
            self._has_encodings = conn.execute(
                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'file_encodings'"
            ).fetchone() is not None
        if self._has_encodings:
            return f"{_FILE_COLUMNS} FROM {_FILES_WITH_ENCODINGS}"
        return f"{_FILE_COLUMNS.replace('file_encodings.encoding', 'NULL')} FROM files"

    _has_encodings: bool | None = None

    # -- IndexStore -------------------------------------------------------------------------

    def get_file(self, path: Path) -> FileRecord | None:
        """The record of the file at absolute ``path``, or ``None`` (one lookup on a unique index).

        Raises:
            StoreError: the database failed or the store is closed.
        """

        def run(conn: apsw.Connection) -> FileRecord | None:
            row = conn.execute(
                f"SELECT {self._file_columns(conn)} WHERE abs_path = ?", (stored_path(path),)
            ).fetchone()
            return None if row is None else _record(row)

        return self._run("read a file record", run)

    def file_chunks(self, path: Path) -> list[Chunk]:
        """The stored chunks of the file at absolute ``path`` in ``chunk_index`` order (``[]``
        when it is not indexed); one query on the ``(file_id, chunk_index)`` unique index.

        Raises:
            StoreError: the database failed or the store is closed.
        """
        sql = """
            SELECT c.chunk_index, c.content, c.start_char, c.end_char, c.start_line, c.end_line,
                   c.token_count, c.kind, c.section, c.breadcrumb, c.definitions, c.page, c.anchor
            FROM files AS f JOIN chunks AS c ON c.file_id = f.id
            WHERE f.abs_path = ? ORDER BY c.chunk_index
        """

        def run(conn: apsw.Connection) -> list[Chunk]:
            return [
                Chunk(index=index, content=content, start_char=start_char, end_char=end_char, line_start=line_start,
                      line_end=line_end, tokens=tokens, kind=kind, section=section, breadcrumb=breadcrumb,
                      definitions=split_definitions(definitions), page=page, anchor=anchor)
                for (index, content, start_char, end_char, line_start, line_end, tokens, kind, section, breadcrumb,
                     definitions, page, anchor) in conn.execute(sql, (stored_path(path),))
            ]

        return self._run("read the chunks of a file", run)

    def file_records(self, *, under: Path | None = None) -> Iterator[FileRecord]:
        """Every indexed file's record, in insertion order, fetched :data:`_RECORD_BATCH` at a
        time (memory stays bounded; deleting files while iterating is safe). With ``under``: the
        record of the file at ``under``, then those below the folder ``under`` in path order, as
        key ranges on the unique index of ``abs_path`` (:func:`folder_range`): the cost is the
        rows found, not the size of the index.

        Raises (while iterating):
            StoreError: the database failed or the store is closed (or ``under`` holds a code
                point the storage mapping reserves).
        """
        if under is not None:
            yield from self._records_under(under)
            return
        last_id = 0
        while True:
            rows = self._run(
                "list indexed files",
                lambda conn: conn.execute(
                    f"SELECT {self._file_columns(conn)} WHERE files.id > ? ORDER BY files.id LIMIT ?",
                    (last_id, _RECORD_BATCH),
                ).fetchall(),
            )
            for row in rows:
                yield _record(row)
            if len(rows) < _RECORD_BATCH:
                return
            last_id = rows[-1][0]

    def _records_under(self, under: Path) -> Iterator[FileRecord]:
        exact = self.get_file(under)
        if exact is not None:
            yield exact
        last, high = folder_range(under)
        while True:
            rows = self._run(
                "list indexed files",
                lambda conn: conn.execute(
                    f"SELECT {self._file_columns(conn)} WHERE abs_path > ? AND abs_path < ? ORDER BY abs_path LIMIT ?",
                    (last, high, _RECORD_BATCH),
                ).fetchall(),
            )
            for row in rows:
                yield _record(row)
            if len(rows) < _RECORD_BATCH:
                return
            last = rows[-1][1]

    def replace_file(self, record: FileRecord, chunks: Sequence[Chunk]) -> None:
        """Replace everything stored for ``record.path`` with ``record`` and ``chunks`` in one
        transaction (old chunks and FTS rows deleted, file row upserted, new chunks and FTS rows
        inserted). ``chunk_count`` is set to ``len(chunks)`` whatever ``record`` says. The FTS row
        gets the normalized copy of content, section and path words (see the module docstring);
        the ``chunks`` row the content as given.

        Raises:
            StoreError: read-only store, lock held longer than the busy timeout, disk full,
                duplicate chunk indexes, closed store...
        """
        abs_path = stored_path(record.path)
        fts_path_words = to_storage(cjk_bigrams(normalize_for_search(_path_words(record.path, record.root))))

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                old = conn.execute("SELECT id FROM files WHERE abs_path = ?", (abs_path,)).fetchone()
                if old is not None:
                    conn.execute("DELETE FROM chunks WHERE file_id = ?", (old[0],))  # trigger drops FTS rows
                (file_id,) = conn.execute(
                    _UPSERT_FILE,
                    (
                        abs_path,
                        to_storage(record.path.name),
                        stored_path(record.root),
                        record.content_hash,
                        record.config_signature,
                        record.size,
                        record.mtime_ns,
                        record.modified_at,
                        record.indexed_at,
                        len(chunks),
                    ),
                ).fetchone()
                conn.execute("DELETE FROM file_encodings WHERE file_id = ?", (file_id,))
                if record.encoding is not None:
                    conn.execute("INSERT INTO file_encodings (file_id, encoding) VALUES (?, ?)",
                                 (file_id, record.encoding))
                if not chunks:
                    return
                (max_id,) = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()
                ids = range(max_id + 1, max_id + 1 + len(chunks))
                cursor = conn.cursor()
                cursor.executemany(
                    _INSERT_CHUNK,
                    [
                        (
                            chunk_id,
                            file_id,
                            c.index,
                            c.content,
                            c.tokens,
                            c.line_start,
                            c.line_end,
                            c.start_char,
                            c.end_char,
                            c.section,
                            c.kind,
                            c.breadcrumb,
                            "\n".join(c.definitions) or None,
                            c.page,
                            c.anchor,
                        )
                        for chunk_id, c in zip(ids, chunks)
                    ],
                )
                self._insert_fts(
                    cursor,
                    [
                        (
                            chunk_id,
                            indexed_text(c.content),
                            None if c.section is None else indexed_text(c.section),
                            fts_path_words,
                            _breadcrumb_words(c),
                        )
                        for chunk_id, c in zip(ids, chunks)
                    ],
                )

        self._run(f"store {record.path}", run, write=True)

    def touch_file(self, record: FileRecord) -> None:
        """Update the stored record of an unchanged file (root, hashes, size, mtime, times);
        its chunks and ``chunk_count`` stay.

        Raises:
            StoreError: the file is not indexed, or the database failed.
        """

        def run(conn: apsw.Connection) -> None:
            conn.execute(
                _TOUCH_FILE,
                (
                    stored_path(record.root),
                    record.content_hash,
                    record.config_signature,
                    record.size,
                    record.mtime_ns,
                    record.modified_at,
                    record.indexed_at,
                    stored_path(record.path),
                ),
            )
            if conn.changes() == 0:
                raise StoreError(
                    f"cannot update {record.path}: it is not indexed",
                    hint="Index the file with replace_file before touching it.",
                )

        self._run(f"update {record.path}", run, write=True)

    def delete_files(self, paths: Iterable[Path]) -> int:
        """Remove ``paths`` with their chunks and FTS rows, in one transaction; returns how many
        of them were indexed (unknown paths are ignored).

        Raises:
            StoreError: read-only store or database failure (nothing is deleted then).
        """
        keys = list(dict.fromkeys(stored_path(p) for p in paths))
        if not keys:
            self._connection("delete files", write=True)
            return 0

        def run(conn: apsw.Connection) -> int:
            deleted = 0
            with self._write_transaction(conn):
                for key in keys:
                    conn.execute("DELETE FROM files WHERE abs_path = ?", (key,))  # cascades to chunks
                    deleted += conn.changes()
            return deleted

        return self._run("delete files", run, write=True)

    def search(
        self,
        query: Query,
        *,
        path_prefix: str | tuple[str, ...] | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """Ranked hits, best first: ``score`` is the negated FTS5 ``bm25()`` with
        :data:`BM25_WEIGHTS` (higher is better); ties are broken by path then chunk index.

        ``path_prefix`` is a literal prefix of the absolute path (no wildcards), or a tuple of
        them (any one; none for an empty tuple); ``glob`` is a
        pattern as defined in :mod:`hermes_workspace.domain.globs` (without ``/`` it matches the
        file name; with ``/`` whole segments at the end of the path, or the whole path when it
        starts with ``/``; ``**`` and ``{a,b}`` work; case-sensitive). Both filter in SQL before
        the ``limit`` cut; ``limit`` is clamped to at least 1. An empty query returns ``[]``
        without touching the database.

        Raises:
            UsageError: ``glob`` is malformed or empty.
            StoreError: the database failed or the store is closed.
        """
        filters, params = path_filters(path_prefix, glob)  # a malformed glob fails even for an empty query
        match = compile_fts5_match(query)
        if not match:
            return []
        weights = ", ".join(repr(w) for w in BM25_WEIGHTS)
        where = ["chunks_fts MATCH :match", *filters]
        params.update({"match": match, "limit": sqlite_int(limit, 1)})
        # Rank first on ids and scores only, then fetch the content of the top rows: sorting
        # every match together with its content made common-word queries 2-3x slower.
        joins = ""
        if len(where) > 1:
            joins = "JOIN chunks AS c ON c.id = chunks_fts.rowid JOIN files AS f ON f.id = c.file_id"
        sql = f"""
            WITH top AS (
                SELECT chunks_fts.rowid AS id, bm25(chunks_fts, {weights}) AS bm
                FROM chunks_fts {joins}
                WHERE {" AND ".join(where)}
                ORDER BY bm
                LIMIT :limit
            )
            SELECT f.abs_path, c.start_line, c.end_line, c.section, c.chunk_index,
                   top.bm, c.token_count, f.modified_at, c.content, c.breadcrumb, c.definitions, f.root_path,
                   c.page, c.anchor
            FROM top
            JOIN chunks AS c ON c.id = top.id
            JOIN files AS f ON f.id = c.file_id
            ORDER BY top.bm, f.abs_path, c.chunk_index
        """

        def run(conn: apsw.Connection) -> list[SearchHit]:
            return [
                SearchHit(
                    path=Path(from_storage(abs_path)),
                    line_start=line_start,
                    line_end=line_end,
                    section=section,
                    chunk_index=chunk_index,
                    score=-bm if bm else 0.0,
                    tokens=tokens,
                    modified=modified,
                    content=content,
                    breadcrumb=breadcrumb,
                    definitions=split_definitions(definitions),
                    root=Path(from_storage(root_path)),
                    page=page,
                    anchor=anchor,
                )
                for (abs_path, line_start, line_end, section, chunk_index, bm, tokens, modified, content, breadcrumb,
                     definitions, root_path, page, anchor) in conn.execute(sql, params)
            ]

        return self._run("search", run)

    def used_bytes(self) -> int:
        """Bytes of the database's pages in use: ``(page_count - freelist_count) * page_size``,
        as this connection sees the database (its own open batch included). Free pages are left
        out (SQLite fills them before it grows the file), and so is the ``-wal`` file, whose
        pages are copies of the database's: this is the size the storage budget counts (see
        :mod:`hermes_workspace.application.storage_guard`).

        Raises:
            StoreError: the database failed or the store is closed.
        """

        def run(conn: apsw.Connection) -> int:
            pages = conn.pragma("page_count")
            free = conn.pragma("freelist_count")
            size = conn.pragma("page_size")
            return max(0, int(pages) - int(free)) * int(size)

        return self._run("measure the index", run)

    def status(self) -> StoreStatus:
        """Files and chunks indexed, and the bytes on disk of the database plus its ``-wal`` file.

        Raises:
            StoreError: the database failed or the store is closed.
        """

        def run(conn: apsw.Connection) -> StoreStatus:
            (files,) = conn.execute("SELECT count(*) FROM files").fetchone()
            (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            size = 0
            for suffix in ("", "-wal"):
                try:
                    size += os.stat(f"{self.path}{suffix}").st_size
                except FileNotFoundError:
                    pass
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (_EXCLUDED_KEY,)).fetchone()
            excluded = _counts(row[0]) if row else {}
            meta = dict(conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", (_LAST_RUN_KEY, _SKIPPED_KEY)
            ).fetchall())
            return StoreStatus(
                files=files,
                chunks=chunks,
                size_bytes=size,
                excluded=excluded,
                last_indexed_at=meta.get(_LAST_RUN_KEY),
                skipped=_counts(meta[_SKIPPED_KEY]) if _SKIPPED_KEY in meta else {},
            )

        return self._run("read the index status", run)

    def record_exclusions(self, counts: Mapping[str, int]) -> None:
        """Store ``counts`` (category -> paths excluded by the last run) in ``meta``, for
        :meth:`status`.

        Raises:
            StoreError: read-only store or database failure.
        """
        value = json.dumps({str(k): int(v) for k, v in sorted(counts.items())})

        def run(conn: apsw.Connection) -> None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_EXCLUDED_KEY, value),
            )

        self._run("record the excluded paths", run, write=True)

    # -- catalog (list, tombstones, run record, integrity) -------------------------------------

    def list_files(
        self, path: Path | None = None, *, recursive: bool = True, limit: int = 100, offset: int = 0
    ) -> tuple[list[FileRecord], int]:
        """One page of file records sorted by stored path, and how many match (see
        :meth:`IndexStore.list_files`). A folder is matched as a key range on the unique index of
        ``abs_path`` (``dir/`` <= path < ``dir0``, ``0`` being the code point after ``/``), so a
        page costs its rows, not the whole table.

        Raises:
            StoreError: the database failed or the store is closed.
        """
        where, params = _listing_filter(path, recursive)

        def run(conn: apsw.Connection) -> tuple[list[FileRecord], int]:
            (total,) = conn.execute(f"SELECT count(*) FROM files WHERE {where}", params).fetchone()
            rows = conn.execute(
                f"SELECT {self._file_columns(conn)} WHERE {where} ORDER BY abs_path LIMIT :limit OFFSET :offset",
                {**params, "limit": sqlite_int(limit, 1), "offset": sqlite_int(offset, 0)},
            ).fetchall()
            return [_record(row) for row in rows], total

        return self._run("list indexed files", run)

    def _has_tombstones(self, conn: apsw.Connection) -> bool:
        return conn.execute(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'tombstones'"
        ).fetchone() is not None

    def tombstones(self, *, under: Path | None = None) -> list[Tombstone]:
        """Every tombstone, sorted by path (none in an index made before they existed); with
        ``under``, the one at ``under`` and those below the folder ``under`` (a key range on the
        primary key).

        Raises:
            StoreError: the database failed or the store is closed.
        """
        where, params = "", {}
        if under is not None:
            low, high = folder_range(under)
            where = "WHERE abs_path = :exact OR (abs_path >= :low AND abs_path < :high)"
            params = {"exact": stored_path(under), "low": low, "high": high}

        def run(conn: apsw.Connection) -> list[Tombstone]:
            if not self._has_tombstones(conn):
                return []
            return [
                Tombstone(Path(from_storage(p)), h, size, mtime_ns, at)
                for p, h, size, mtime_ns, at in conn.execute(
                    "SELECT abs_path, content_hash, size_bytes, mtime_ns, deleted_at FROM tombstones "
                    f"{where} ORDER BY abs_path",
                    params,
                )
            ]

        return self._run("read the tombstones", run)

    def add_tombstones(self, tombstones: Iterable[Tombstone]) -> None:
        """Insert or replace tombstones in one transaction (a savepoint inside :meth:`batch`).

        Raises:
            StoreError: read-only store or database failure.
        """
        rows = [(stored_path(t.path), t.content_hash, t.size, t.mtime_ns, t.deleted_at) for t in tombstones]

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                conn.cursor().executemany(
                    "INSERT OR REPLACE INTO tombstones (abs_path, content_hash, size_bytes, mtime_ns, deleted_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )

        self._run("record deleted files", run, write=True)

    def remove_tombstones(self, paths: Iterable[Path] | None = None, *, under: Path | None = None) -> int:
        """Delete the tombstones of ``paths`` and of every path under the folder ``under``;
        returns how many.

        Raises:
            StoreError: read-only store or database failure.
        """
        keys = list(dict.fromkeys(stored_path(p) for p in (paths or ())))
        folder = None if under is None else folder_range(under)

        def run(conn: apsw.Connection) -> int:
            removed = 0
            with self._write_transaction(conn):
                for key in keys:
                    conn.execute("DELETE FROM tombstones WHERE abs_path = ?", (key,))
                    removed += conn.changes()
                if folder is not None:
                    conn.execute("DELETE FROM tombstones WHERE abs_path >= ? AND abs_path < ?", folder)
                    removed += conn.changes()
            return removed

        return self._run("forget deleted files", run, write=True)

    def record_run(self, finished_at: str, skipped: Mapping[str, int]) -> None:
        """Store the finish time and skipped counts of the index run that just ended in ``meta``.

        Raises:
            StoreError: read-only store or database failure.
        """
        value = json.dumps({str(k): int(v) for k, v in sorted(skipped.items())})

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                conn.cursor().executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [(_LAST_RUN_KEY, finished_at), (_SKIPPED_KEY, value)],
                )

        self._run("record the index run", run, write=True)

    def record_root_counts(self, counts: Mapping[Path, RootCounts]) -> None:
        """Merge ``counts`` into the per-root record in ``meta`` (one JSON object keyed by root
        folder), replacing the given roots' entries and keeping the others', in one write
        transaction (a concurrent merge cannot lose one).

        Raises:
            StoreError: read-only store or database failure.
        """
        if not counts:
            return

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                stored = meta_json(conn, _ROOTS_KEY) or {}
                stored.update({str(root): record.to_json() for root, record in counts.items()})
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (_ROOTS_KEY, json.dumps(stored, sort_keys=True)),
                )

        self._run("record the per-root counts", run, write=True)

    def root_counts(self) -> dict[Path, RootCounts]:
        """The per-root record (one ``meta`` row); an entry that does not read back is left out.

        Raises:
            StoreError: the database failed.
        """

        def run(conn: apsw.Connection) -> dict[Path, RootCounts]:
            stored = meta_json(conn, _ROOTS_KEY) or {}
            records = {Path(root): RootCounts.from_json(data) for root, data in stored.items()}
            return {root: record for root, record in records.items() if record is not None}

        return self._run("read the per-root counts", run)

    def record_plugins(self, bundle: Mapping[str, Any]) -> None:
        """Store the plugin signature bundle of the index run that just ended in ``meta``
        (optional capability, issue 11: ``status`` and ``plugins`` show it).

        Raises:
            StoreError: read-only store or database failure.
        """
        value = json.dumps(bundle, sort_keys=True, ensure_ascii=False)

        def run(conn: apsw.Connection) -> None:
            with self._write_transaction(conn):
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (_PLUGINS_KEY, value),
                )

        self._run("record the plugins", run, write=True)

    def recorded_plugins(self) -> dict[str, Any] | None:
        """The bundle :meth:`record_plugins` stored last, or ``None`` (never recorded, or an
        unreadable value).

        Raises:
            StoreError: the database failed.
        """

        return self._run("read the recorded plugins", lambda conn: meta_json(conn, _PLUGINS_KEY))

    _snapshot: apsw.Connection | None = None
    """The connection of the :meth:`read_snapshot` in progress (``None``: none)."""

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Make every read of this store inside the block see one state of the file: they run on
        a new read-only connection, in one read transaction (``BEGIN`` ... ``COMMIT``), whose
        snapshot is taken on entry. ``doctor`` reads its checks and the file records of its drift
        sample in one, so that an index run committing meanwhile cannot make two of its
        statements disagree.

        A new connection rather than the store's own: FTS5 caches the structure of its index
        (which segments exist) per connection, and ``PRAGMA integrity_check`` reuses that cache
        without asking whether another connection committed since; on a long-lived connection
        it then reads segments an index run has merged away, and reports "fts5: corruption found
        reading blob ..." for a sound index. A new connection starts without that cache.

        Only reads may be made inside (the block's connection is read-only); a nested call joins
        the outer snapshot.

        Raises:
            IndexNotFoundError: the file is gone (deleted since the store opened it).
            StoreError: the file cannot be opened or read, or has no index schema (on entry), the
                store is closed.
        """
        if self._snapshot is not None:
            yield
            return
        own = self._connection("read a snapshot of the index")
        if not self.path.exists():  # deleted since this store opened it (the next index makes a new one)
            raise IndexNotFoundError(f"no index at {self.path}")
        with self._translate("open the index for a consistent read"):
            conn = open_index_connection(self.path, readonly=True, busy_timeout_ms=self.busy_timeout_ms)
            try:
                conn.execute("BEGIN")
                # A deferred BEGIN takes no snapshot: the first read does, so take it here.
                tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
                if not {"meta", "files", "chunks", "chunks_fts"} <= tables:
                    raise StoreError(
                        f"the index {self.path} has no index schema (an index run creating it has not committed "
                        "yet, or it is not a hermes-workspace index)",
                        hint="Run `hermes-workspace index` to build the index.",
                    )
            except BaseException:
                conn.close()
                raise
        self._conn, self._snapshot = conn, conn
        try:
            yield
        finally:
            self._conn, self._snapshot = own, None
            try:
                if not conn.get_autocommit():
                    conn.execute("COMMIT")  # a read transaction: nothing to write, only ends it
            except apsw.Error:
                pass  # the connection is closed next anyway
            finally:
                conn.close()

    def check_integrity(self) -> list[DoctorCheck]:
        """``doctor``'s checks of this file, reading only, all in one :meth:`read_snapshot` (the
        caller's, when inside one):

        - ``sqlite_integrity``: ``PRAGMA integrity_check`` (every b-tree and index; SQLite 3.44+
          also runs each FTS5 table's own integrity check through ``xIntegrity``);
        - ``fulltext_index``: as the FTS table is contentless and cannot compare itself with
          ``chunks``, the rowids of both must be the same set; then FTS5's ``'integrity-check'``
          command, run inside a ``SAVEPOINT`` that is rolled back, on a second, writable
          connection (the command is an ``INSERT``, which a read-only connection refuses; it
          sees the newest commit, which it checks on its own, FTS5 against itself; while a
          writer holds the lock, or where the file cannot be written, ``incomplete`` with the
          xIntegrity result above standing in);
        - ``schema_version``: ``meta.schema_version`` is :data:`SCHEMA_VERSION`.

        Never raises: a damaged database is a ``failed`` check; a lock held longer than the busy
        timeout (an index run is writing) leaves the checks ``incomplete``, with the reason.
        """
        try:
            with self.read_snapshot():
                return [self._check_sqlite(), self._check_fulltext(), self._check_schema()]
        except StoreError as exc:
            return [DoctorCheck(name, *_unreadable(exc)) for name in ("sqlite_integrity", "fulltext_index",
                                                                     "schema_version")]

    def _check_sqlite(self) -> DoctorCheck:
        try:
            rows = self._run("check the index", lambda conn: [r[0] for r in conn.execute("PRAGMA integrity_check")])
        except StoreError as exc:
            return DoctorCheck("sqlite_integrity", *_unreadable(exc))
        if rows == ["ok"]:
            return DoctorCheck("sqlite_integrity", "passed", "PRAGMA integrity_check: ok")
        return DoctorCheck("sqlite_integrity", "failed", f"PRAGMA integrity_check: {'; '.join(map(str, rows[:5]))}",
                           {"problems": [str(r) for r in rows[:20]]})

    def _check_fulltext(self) -> DoctorCheck:
        def run(conn: apsw.Connection) -> tuple[int, int, int, int]:
            (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            (rows,) = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()
            (unindexed,) = conn.execute(
                "SELECT count(*) FROM chunks WHERE id NOT IN (SELECT rowid FROM chunks_fts)"
            ).fetchone()
            (orphans,) = conn.execute(
                "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)"
            ).fetchone()
            return chunks, rows, unindexed, orphans

        try:
            chunks, rows, unindexed, orphans = self._run("compare the full-text index with the chunks", run)
        except StoreError as exc:
            return DoctorCheck("fulltext_index", *_unreadable(exc))
        data: dict[str, Any] = {"chunks": chunks, "fts_rows": rows, "chunks_missing_from_fts": unindexed,
                                "fts_rows_without_chunk": orphans}
        if unindexed or orphans:
            return DoctorCheck(
                "fulltext_index", "failed",
                f"the full-text index and the chunks disagree: {unindexed} chunks are not searchable, "
                f"{orphans} full-text rows have no chunk; delete the index file and run `hermes-workspace index`",
                data,
            )
        command = self._fts_integrity_command()
        data["fts5_integrity_check"] = command
        if command == "ok":
            return DoctorCheck("fulltext_index", "passed", f"FTS5 integrity-check: ok; {chunks} chunks, all searchable",
                               data)
        if command.startswith("skipped"):
            return DoctorCheck("fulltext_index", "incomplete",
                               f"FTS5 integrity-check {command}; {chunks} chunks, all searchable "
                               "(the FTS5 structure is covered by sqlite_integrity)", data)
        return DoctorCheck("fulltext_index", "failed", f"FTS5 integrity-check: {command}", data)

    def _fts_integrity_command(self) -> str:
        """``ok``, the error FTS5's integrity-check raised, or ``skipped: <why>``."""
        if not os.access(self.path, os.W_OK) or not os.access(self.path.parent, os.W_OK):
            return "skipped: the index file is read-only here"
        try:
            conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
        except apsw.Error as exc:
            return f"skipped: cannot open the index for the check ({exc})"
        try:
            conn.set_busy_timeout(min(self.busy_timeout_ms, 2_000))
            conn.execute("SAVEPOINT doctor")
            try:
                conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')")
                return "ok"
            except (apsw.BusyError, apsw.LockedError):
                return "skipped: an index run holds the write lock"
            except apsw.Error as exc:
                return str(exc)
            finally:
                if not conn.get_autocommit():
                    conn.execute("ROLLBACK TO doctor")
                    conn.execute("RELEASE doctor")
        except apsw.Error as exc:
            return f"skipped: {exc}"
        finally:
            conn.close()

    def _check_schema(self) -> DoctorCheck:
        try:
            version = self._run("read the schema version", self._read_version)
        except StoreError as exc:
            return DoctorCheck("schema_version", *_unreadable(exc))
        data = {"found": version, "expected": SCHEMA_VERSION}
        if version == SCHEMA_VERSION:
            return DoctorCheck("schema_version", "passed", f"schema version {version}", data)
        return DoctorCheck("schema_version", "failed",
                           f"schema version {version}, expected {SCHEMA_VERSION}: run `hermes-workspace index`", data)

    def _before_close(self, conn: apsw.Connection) -> None:
        """A writer runs ``PRAGMA optimize`` before :meth:`close` releases the connection."""
        if not self.readonly:
            conn.pragma("optimize")

    # -- batching (IndexStore.batch) ----------------------------------------------------------

    _batching = False
    """Inside :meth:`batch`: each write is a savepoint of the batch's transaction."""
    _pending_fts: dict[int, tuple[Any, ...]] = {}  # noqa: RUF012 - replaced per batch, never mutated here

    def _insert_fts(self, cursor: apsw.Cursor, rows: list[tuple[Any, ...]]) -> None:
        """Insert ``(rowid, content, section, path, breadcrumb)`` rows into ``chunks_fts``; inside
        :meth:`batch`, keep them (by chunk id) until its commit. FTS5 writes its pending terms
        to disk at every savepoint, so inserting file by file between savepoints would cost
        a small segment per file, as one transaction per file does."""
        if self._batching:
            for row in rows:
                self._pending_fts[row[0]] = row[1:]
        else:
            cursor.executemany(_INSERT_FTS, rows)

    def _flush_fts(self, conn: apsw.Connection) -> None:
        """Insert the batch's FTS rows, in rowid order, for the chunks that still exist (a chunk
        inserted then deleted in the batch has none; a reused id keeps its latest row)."""
        pending, self._pending_fts = self._pending_fts, {}
        if not pending:
            return
        live = {
            chunk_id
            for (chunk_id,) in conn.execute("SELECT id FROM chunks WHERE id BETWEEN ? AND ?", (min(pending), max(pending)))
        }
        conn.cursor().executemany(
            _INSERT_FTS, [(chunk_id, *row) for chunk_id, row in sorted(pending.items()) if chunk_id in live]
        )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group the writes made inside (``replace_file``, ``touch_file``, ``delete_files``) into
        one ``BEGIN IMMEDIATE`` transaction, committed on normal exit and rolled back on an
        exception. Each write stays all-or-nothing on its own (a ``SAVEPOINT``): one that raises
        is undone and the others stay. The batch's full-text rows are written at the commit, so
        that FTS5 builds one segment per batch: until then, ``get_file`` and ``file_records``
        through this store see the batch's files but ``search`` does not. A concurrent reader
        sees the batch only once it is committed, each file whole. A nested ``batch()`` joins
        the outer one.

        Raises:
            StoreError: on entry (read-only store, lock held longer than the busy timeout) or on
                exit (the commit failed, or SQLite rolled the transaction back after an earlier
                I/O or disk-full error: nothing of the batch is stored).
        """
        if self._batching:
            yield
            return
        conn = self._connection("start a batch of writes", write=True)
        with self._translate("start a batch of writes"):
            conn.execute("BEGIN IMMEDIATE")
        self._batching, self._pending_fts = True, {}
        try:
            yield
        except BaseException:
            self._batching, self._pending_fts = False, {}
            with self._translate("roll back a batch of writes"):
                if not conn.get_autocommit():
                    conn.execute("ROLLBACK")
            raise
        self._batching = False
        with self._translate("commit a batch of writes"):
            if conn.get_autocommit():
                self._pending_fts = {}
                raise StoreUnusableError(f"a batch of writes to {self.path} was rolled back by an earlier failure")
            try:
                self._flush_fts(conn)
                conn.execute("COMMIT")
            except BaseException:
                self._pending_fts = {}
                if not conn.get_autocommit():
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _batch_savepoint(self, conn: apsw.Connection) -> Iterator[None]:
        if conn.get_autocommit():
            raise StoreUnusableError(f"a batch of writes to {self.path} was rolled back by an earlier failure")
        conn.execute("SAVEPOINT batch_write")
        try:
            yield
            conn.execute("RELEASE batch_write")
        except BaseException:
            if not conn.get_autocommit():
                conn.execute("ROLLBACK TO batch_write")
                conn.execute("RELEASE batch_write")
            raise


_LAST_RUN_KEY = "last_index_at"
"""``meta`` key: when the last index run finished (UTC ISO-8601)."""

_SKIPPED_KEY = "skipped_last_run"
"""``meta`` key: the last index run's skipped files by reason (a JSON object)."""

_ROOTS_KEY = "roots_last_run"
"""``meta`` key: per root folder, what the last run that walked it left unsearched (a JSON object
of :meth:`RootCounts.to_json` objects, issue 12's coverage)."""

_PLUGINS_KEY = "plugins"
"""``meta`` key: the plugin signature bundle of the last index run (a JSON object, issue 11)."""


def _unreadable(exc: StoreError) -> tuple[str, str]:
    """``(status, detail)`` of a check whose reads raised ``exc``: ``incomplete`` when the
    index was only locked (an index run holds it longer than the busy timeout: nothing is
    known about its health), else ``failed``."""
    if isinstance(exc.__cause__, (apsw.BusyError, apsw.LockedError)):
        return "incomplete", f"{exc.message}: run doctor again when the index run has finished"
    return "failed", exc.message


def _listing_filter(path: Path | None, recursive: bool) -> tuple[str, dict[str, Any]]:
    """The ``WHERE`` condition of :meth:`SqliteFts5Store.list_files` and its parameters."""
    if path is None:
        if recursive:
            return "1", {}
        # Without a folder, "directly in" means directly in the file's own root.
        return "instr(substr(abs_path, length(rtrim(root_path, '/')) + 2), '/') = 0", {}
    low, high = folder_range(path)
    under = "(abs_path >= :low AND abs_path < :high)"
    if not recursive:
        under = f"({under[1:-1]} AND instr(substr(abs_path, length(:low) + 1), '/') = 0)"
    return f"(abs_path = :exact OR {under})", {"exact": stored_path(path), "low": low, "high": high}


_EXCLUDED_KEY = "excluded_last_run"
"""``meta`` key of the last index run's always-on exclusion counts (a JSON object)."""


def _counts(text: str) -> dict[str, int]:
    """The counts stored under :data:`_EXCLUDED_KEY`; ``{}`` for anything unreadable (the
    counts are informative, never a reason to fail ``status``)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}


def _record(row: Sequence[Any]) -> FileRecord:
    _, abs_path, root, content_hash, signature, size, mtime_ns, modified_at, indexed_at, chunk_count, encoding = row
    return FileRecord(
        path=Path(from_storage(abs_path)),
        root=Path(from_storage(root)),
        content_hash=content_hash,
        config_signature=signature,
        size=size,
        mtime_ns=mtime_ns,
        modified_at=modified_at,
        indexed_at=indexed_at,
        chunk_count=chunk_count,
        encoding=encoding,
    )
