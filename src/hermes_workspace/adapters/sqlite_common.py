"""What the adapters that open the index file (:mod:`.sqlite_fts5_store`, :mod:`.sqlite_vec_index`,
:mod:`.sqlite_result_sets`) do alike: open it (:func:`open_index_connection`, :func:`open_reader`,
:data:`WRITER_PRAGMAS`), hold one connection (:class:`IndexFileConnection`), translate apsw
(SQLite) exceptions into :class:`StoreError` (:class:`StoreUnusableError` when the whole database
is unusable), write in ``BEGIN IMMEDIATE`` transactions, and filter by path: searches by path
prefix and glob (:func:`path_filters`), listings and deletions by folder (:func:`folder_range`),
with :func:`sqlite_int` for their ``LIMIT``."""

from __future__ import annotations

import os
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar
from urllib.parse import quote

import apsw

from hermes_workspace.domain.errors import StoreError, StoreUnusableError, UsageError, WorkspaceError, reraise_interrupt
from hermes_workspace.domain.globs import compile_glob
from hermes_workspace.domain.paths import display_name, from_storage, to_storage

GLOB_FUNCTION = "hermes_glob"
"""The SQL function ``hermes_glob(pattern, path)``: 1 when ``path`` passes the glob ``pattern``
(:mod:`hermes_workspace.domain.globs`), else 0. Registered on every connection by
:func:`register_glob_function`."""


def _glob_matches(pattern: str, path: str) -> bool:
    # compile_glob is cached: one parse per pattern, then one regex match per call. SQLite
    # receives the bool as the integer 1 or 0. Paths are stored in to_storage form.
    return compile_glob(from_storage(pattern)).matches(from_storage(path))


def _filter_text(text: str, what: str) -> str:
    """A filter's text in the stored form of paths (:func:`stored_path`)."""
    try:
        return to_storage(text)
    except ValueError as exc:
        raise UsageError(f"{what} cannot match an indexed file: {exc}") from exc


def stored_path(path: object) -> str:
    """``path`` (a ``Path`` or ``str``) as the index stores it
    (:func:`~hermes_workspace.domain.paths.to_storage`: a name that is not valid UTF-8 keeps its
    bytes recoverable).

    Raises:
        StoreError: the name holds one of the code points the mapping reserves (that file only).
    """
    try:
        return to_storage(str(path))
    except ValueError as exc:
        raise StoreError(
            f"cannot index {display_name(str(path))}: {exc}",
            hint="Rename the file, or add it to .hermesignore.",
        ) from exc


def open_reader(path: Path, *, busy_timeout_ms: int = 0) -> apsw.Connection:
    """A read-only connection to the index file ``path``, waiting up to ``busy_timeout_ms`` for
    a lock (its busy timeout is set before its first read: a reader opening while a writer runs
    WAL recovery or creates the file would otherwise fail at once with "database is locked").

    Reading a WAL database needs its ``-shm`` file, which SQLite creates beside it; in a folder
    this process may not write (a read-only home, a shared index), that fails with "attempt to
    write a readonly database" although nothing is to be written. The file is then opened with
    ``immutable=1``: SQLite reads it without the ``-shm`` file or locks, which is safe because no
    writer can work in that folder either (one running as another user would make reads fail,
    never return a mix).

    Raises:
        apsw.Error: the file cannot be opened either way (translated by the callers).
    """
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        return conn
    except (apsw.ReadOnlyError, apsw.CantOpenError):
        conn.close()
    except BaseException:
        conn.close()
        raise
    uri = "file:" + quote(os.fspath(path)) + "?immutable=1"
    conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    conn.set_busy_timeout(busy_timeout_ms)
    return conn


WRITER_PRAGMAS: tuple[tuple[str, object], ...] = (
    ("synchronous", "NORMAL"),
    ("foreign_keys", 1),
    ("temp_store", "MEMORY"),
)
"""Pragmas of every connection that writes the index's tables (:func:`open_index_connection`): in
WAL mode a commit needs no fsync (a crash may lose the last commits, never corrupt the file); the
foreign keys' cascades delete a file's chunks and their vector attachments with it; temporary
b-trees (sorts, ``IN`` lists) stay in memory."""


def open_index_connection(
    path: Path, *, readonly: bool, busy_timeout_ms: int, create: bool = False
) -> apsw.Connection:
    """A connection to the index file ``path`` for an adapter's reads and writes: read-only
    through :func:`open_reader`, else read-write (the file created when ``create``) with
    :data:`WRITER_PRAGMAS`; either way waiting up to ``busy_timeout_ms`` for a lock (set before
    the first read) and with :data:`GLOB_FUNCTION` registered (:func:`path_filters` needs it).

    Raises:
        apsw.Error: the file cannot be opened (callers translate it with
            :func:`translated_sqlite_errors`).
    """
    if readonly:
        conn = open_reader(path, busy_timeout_ms=busy_timeout_ms)
    else:
        flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
        conn = apsw.Connection(str(path), flags=flags)
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        register_glob_function(conn)
        if not readonly:
            for name, value in WRITER_PRAGMAS:
                conn.pragma(name, value)
    except BaseException:
        conn.close()
        raise
    return conn


def register_glob_function(conn: apsw.Connection) -> None:
    """Make :data:`GLOB_FUNCTION` callable on ``conn`` (read-only connections too: a function is
    per connection and never touches the file). Deterministic, so SQLite may evaluate it once
    for constant arguments."""
    conn.create_scalar_function(GLOB_FUNCTION, _glob_matches, 2, deterministic=True)


def path_filters(path_prefix: str | tuple[str, ...] | None, glob: str | None) -> tuple[list[str], dict[str, Any]]:
    """SQL conditions on ``f`` (the ``files`` table) and their named parameters for the search
    filters, shared by the keyword search of ``SqliteFts5Store`` and the vector search of
    ``SqliteVecIndex``, both of which put them before their ``LIMIT``:

    - ``path_prefix``: a literal prefix of the absolute path (``substr``, so ``%`` and ``_`` are
      plain characters), or a tuple of them (a path passes when it has one of them; an empty
      tuple passes nothing: root selection, issue 12);
    - ``glob``: :func:`~hermes_workspace.domain.globs.compile_glob` semantics on the absolute path,
      through :data:`GLOB_FUNCTION` (the connection must have :func:`register_glob_function`). It
      selects the matching files once (an uncorrelated ``IN`` subquery) rather than once per
      candidate chunk, and calls Python only for the files that pass the pattern's
      :attr:`~hermes_workspace.domain.globs.PathGlob.prefilters` in SQLite's own ``GLOB``
      (their dialect is a subset of it; ``CASE`` fixes the order of the two tests).

    ``None`` means no filter; an empty ``path_prefix`` too.

    Raises:
        UsageError: ``glob`` is malformed or empty (checked here, before any SQL runs).
    """
    where: list[str] = []
    params: dict[str, Any] = {}
    if isinstance(path_prefix, tuple):
        alternatives = [f"substr(f.abs_path, 1, length(:prefix_{i})) = :prefix_{i}" for i in range(len(path_prefix))]
        where.append(f"({' OR '.join(alternatives)})" if alternatives else "0")
        params.update((f"prefix_{i}", _filter_text(p, "the path prefix")) for i, p in enumerate(path_prefix))
    elif path_prefix:
        where.append("substr(f.abs_path, 1, length(:prefix)) = :prefix")
        params["prefix"] = _filter_text(path_prefix, "the path prefix")
    if glob is not None:
        prefilters = compile_glob(glob).prefilters
        coarse = " OR ".join(f"abs_path GLOB :glob_{i}" for i in range(len(prefilters)))
        where.append(
            f"f.id IN (SELECT id FROM files WHERE CASE WHEN {coarse} THEN {GLOB_FUNCTION}(:glob, abs_path) END)"
        )
        params["glob"] = _filter_text(glob, "the glob")
        params.update((f"glob_{i}", _filter_text(prefilter, "the glob")) for i, prefilter in enumerate(prefilters))
    return where, params


def meta_json(conn: apsw.Connection, key: str) -> dict[str, Any] | None:
    """The JSON object stored under ``key`` in the ``meta`` table, or ``None`` (no row, or a value
    that is not a JSON object: a damaged or foreign value is treated as absent, never an error)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    try:
        value = json.loads(row[0])
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def meta_version(conn: apsw.Connection, key: str) -> int | None:
    """The whole number stored under ``key`` in the ``meta`` table (a schema version): ``None``
    when there is no row, ``-1`` when the value is not a whole number (an unreadable layout,
    which callers treat as an older one)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    try:
        return int(row[0])
    except (TypeError, ValueError):
        return -1


def folder_range(folder: Path) -> tuple[str, str]:
    """``(low, high)`` such that ``low <= p < high`` holds exactly for the stored paths ``p`` under
    ``folder`` (``'0'`` is the code point after ``'/'``): a range an index on ``abs_path`` answers,
    with no pattern characters to escape.

    Raises:
        StoreError: ``folder`` holds a code point the storage mapping reserves (:func:`stored_path`).
    """
    low = stored_path(folder).rstrip("/") + "/"
    return low, low[:-1] + "0"


SQLITE_MAX_INT = 2**63 - 1
"""Largest integer SQLite stores (64-bit signed); apsw cannot bind a larger Python int."""


def sqlite_int(value: int, low: int) -> int:
    """``value`` as a ``LIMIT``/``OFFSET`` SQLite can bind: at least ``low``, at most
    :data:`SQLITE_MAX_INT` (no table has that many rows, so the answer is the same)."""
    return min(max(low, int(value)), SQLITE_MAX_INT)


@contextmanager
def immediate_transaction(conn: apsw.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error). IMMEDIATE takes the write
    lock up front, so a busy writer is waited for (busy timeout) instead of failing on a
    read-to-write lock upgrade."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if not conn.get_autocommit():
            conn.execute("ROLLBACK")
        raise


def checked_connection(
    conn: apsw.Connection | None, path: Path, action: str, *, subject: str, write: bool, readonly: bool
) -> apsw.Connection:
    """``conn``, if it is open and may do ``action`` (a write needs a writable connection).

    Raises:
        StoreUnusableError: the connection was closed, or ``write`` on a ``readonly`` one (no
            write through this object can succeed).
    """
    if conn is None:
        raise StoreUnusableError(
            f"the {subject} for {path} is closed", hint=f"Open a new {subject}; a closed one cannot be reused."
        )
    if write and readonly:
        raise StoreUnusableError(
            f"cannot {action}: the {subject} for {path} was opened read-only",
            hint=f"Open the {subject} without readonly=True to write.",
        )
    return conn


_RUN_WIDE_HINTS: tuple[tuple[type[apsw.Error], str], ...] = (
    (apsw.FullError, "The disk holding {dir} is full: free space on it."),
    (apsw.ReadOnlyError, "Check that {dir} and the files in it are writable, and that the index file was not "
                         "deleted or moved while in use."),
    (apsw.PermissionsError, "Check that {dir} and the files in it are writable by this user."),
    (apsw.CantOpenError, "Check that {dir} exists and is writable, and that the index file was not deleted "
                         "while in use."),
    (apsw.IOError, "The disk holding {dir} reported an I/O error: check that it is mounted, not full and healthy."),
    (apsw.NoMemError, "SQLite ran out of memory: close other programs and try again."),
)
"""SQLite error classes that concern the whole database file, never one write (SQLITE_FULL,
SQLITE_READONLY (also a file deleted or moved while open: SQLITE_READONLY_DBMOVED), SQLITE_PERM,
SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_NOMEM), with the hint for each. After FULL, IOERR and NOMEM
SQLite may roll back the whole open transaction (sqlite.org/lang_transaction.html, "Response To
Errors Within A Transaction"), so no later write of that transaction could succeed anyway."""


@contextmanager
def translated_sqlite_errors(path: Path, action: str, *, busy_timeout_ms: int, subject: str) -> Iterator[None]:
    """Run the block; turn apsw, OS and path-encoding exceptions into :class:`StoreError` whose
    message names ``path`` and ``action`` (``"search"``, ``"replace a file"``...) and whose hint
    says what to do. ``subject`` names the object in messages about a closed connection
    (``"index store"``, ``"vector index"``). :class:`WorkspaceError` passes through unchanged, and
    an error raised while handling a ``KeyboardInterrupt`` gives way to that interrupt.

    Failures of the database as a whole (disk full, read-only, permissions, cannot open, I/O
    error, out of memory, damaged file, locked longer than the busy timeout, closed connection,
    and any ``OSError`` on its files) raise :class:`StoreUnusableError`; the others (a constraint
    a write broke, text too big, a path that is not valid Unicode) a plain :class:`StoreError`,
    which an index run reports for the one file and goes on.

    Raises:
        StoreError: for every database, OS or encoding failure inside the block.
    """
    try:
        try:
            yield
        except Exception as exc:
            # A rollback that failed while a Ctrl-C (or SIGTERM) unwound the block: the
            # interrupt, not a database error that a caller would report and carry on after.
            reraise_interrupt(exc)
            raise
    except WorkspaceError:
        raise
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise StoreUnusableError(
            f"the index database {path} stayed locked for more than {busy_timeout_ms} ms while trying to {action}",
            hint="Another `hermes-workspace index` is probably running; wait for it to finish and try again.",
        ) from exc
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        raise StoreUnusableError(
            f"the index database {path} is damaged or not a SQLite database ({exc})",
            hint=f"Delete {path} (and its -wal and -shm files) and run `hermes-workspace index` to rebuild it.",
        ) from exc
    except (apsw.ConnectionClosedError, apsw.CursorClosedError) as exc:
        raise StoreUnusableError(
            f"the {subject} for {path} is closed", hint=f"Open a new {subject}; a closed one cannot be reused."
        ) from exc
    except tuple(kind for kind, _ in _RUN_WIDE_HINTS) as exc:
        hint = next(text for kind, text in _RUN_WIDE_HINTS if isinstance(exc, kind))
        raise StoreUnusableError(f"cannot {action}: {exc} (index database {path})",
                                 hint=hint.format(dir=path.parent)) from exc
    except apsw.Error as exc:
        raise StoreError(f"index database error while trying to {action} ({path}): {exc}") from exc
    except OSError as exc:
        raise StoreUnusableError(f"cannot {action}: {exc} (index database {path})") from exc
    except UnicodeEncodeError as exc:
        raise StoreError(
            f"cannot {action}: text or path is not valid Unicode ({exc.reason}: {exc.object[exc.start : exc.end]!r})",
            hint="The log file has the details; rename the file, or add it to .hermesignore, to go on.",
        ) from exc


_T = TypeVar("_T")


class IndexFileConnection:
    """The connection plumbing of an adapter holding one connection to the index file
    (:class:`~.sqlite_fts5_store.SqliteFts5Store`, :class:`~.sqlite_vec_index.SqliteVecIndex`):
    ``path``, ``readonly``, ``busy_timeout_ms`` (clamped to >= 0) and the connection, opened by
    the subclass's constructor (:meth:`_open`) and released by :meth:`close`; every public
    method runs through :meth:`_run`, so no ``apsw`` exception escapes and a closed or read-only
    connection gives a :class:`StoreUnusableError` naming :attr:`subject`.

    Not thread-safe: one object per thread.
    """

    subject: ClassVar[str]
    """What the object is called in messages (``"index store"``, ``"vector index"``)."""

    def __init__(self, path: Path, *, readonly: bool, busy_timeout_ms: int) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.busy_timeout_ms = max(0, int(busy_timeout_ms))
        self._conn: apsw.Connection | None = None

    def _open(self, *, create: bool = False) -> apsw.Connection:
        """A new connection with this object's settings (:func:`open_index_connection`); inside
        :meth:`_translate`."""
        return open_index_connection(
            self.path, readonly=self.readonly, busy_timeout_ms=self.busy_timeout_ms, create=create
        )

    def _translate(self, action: str) -> AbstractContextManager[None]:
        """Turn apsw (and path encoding) exceptions into :class:`StoreError`
        (:func:`translated_sqlite_errors`)."""
        return translated_sqlite_errors(self.path, action, busy_timeout_ms=self.busy_timeout_ms, subject=self.subject)

    def _connection(self, action: str, *, write: bool = False) -> apsw.Connection:
        return checked_connection(
            self._conn, self.path, action, subject=self.subject, write=write, readonly=self.readonly
        )

    def _run(self, action: str, fn: Callable[[apsw.Connection], _T], *, write: bool = False) -> _T:
        """``fn(connection)`` with errors translated; ``write`` refuses a read-only connection."""
        with self._translate(action):
            return fn(self._connection(action, write=write))

    @contextmanager
    def _write_transaction(self, conn: apsw.Connection) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (:func:`immediate_transaction`)."""
        with immediate_transaction(conn):
            yield

    def _before_close(self, conn: apsw.Connection) -> None:
        """Best-effort work on the connection before :meth:`close` releases it (its apsw errors
        are ignored); nothing by default."""

    def close(self) -> None:
        """Release the connection. Idempotent; the object is unusable afterwards (methods raise
        :class:`StoreError`)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        with self._translate("close"):
            try:
                self._before_close(conn)
            except apsw.Error:
                pass  # best effort: it must not keep the connection open
            finally:
                conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else ("readonly" if self.readonly else "writer")
        return f"{type(self).__name__}({str(self.path)!r}, {state})"


def split_definitions(stored: str | None) -> tuple[str, ...]:
    """A chunk's stored ``definitions`` column (``"\\n"``-joined qualified names, or NULL) as a
    tuple."""
    return tuple(stored.split("\n")) if stored else ()
