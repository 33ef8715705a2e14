"""What the adapters that open the index file (:mod:`.sqlite_fts5_store`, :mod:`.sqlite_vec_index`)
do alike: translate apsw (SQLite) exceptions into :class:`StoreError` (:class:`StoreUnusableError`
when the whole database is unusable), guard their connection, and write in ``BEGIN IMMEDIATE``
transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from hermes_workspace.domain.errors import StoreError, StoreUnusableError, WorkspaceError


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
    (``"index store"``, ``"vector index"``). :class:`WorkspaceError` passes through unchanged.

    Failures of the database as a whole (disk full, read-only, permissions, cannot open, I/O
    error, out of memory, damaged file, locked longer than the busy timeout, closed connection,
    and any ``OSError`` on its files) raise :class:`StoreUnusableError`; the others (a constraint
    a write broke, text too big, a path that is not valid Unicode) a plain :class:`StoreError`,
    which an index run reports for the one file and goes on.

    Raises:
        StoreError: for every database, OS or encoding failure inside the block.
    """
    try:
        yield
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
            hint="A file name that is not valid UTF-8 cannot be indexed: rename the file, or add it to .hermesignore.",
        ) from exc
