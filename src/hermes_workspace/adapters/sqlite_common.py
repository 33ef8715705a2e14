"""What the adapters that open the index file (:mod:`.sqlite_fts5_store`, :mod:`.sqlite_vec_index`)
do alike: translate apsw (SQLite) exceptions into :class:`StoreError`, guard their connection,
and write in ``BEGIN IMMEDIATE`` transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from hermes_workspace.domain.errors import StoreError, WorkspaceError, reraise_interrupt


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
        StoreError: the connection was closed, or ``write`` on a ``readonly`` one.
    """
    if conn is None:
        raise StoreError(
            f"the {subject} for {path} is closed", hint=f"Open a new {subject}; a closed one cannot be reused."
        )
    if write and readonly:
        raise StoreError(
            f"cannot {action}: the {subject} for {path} was opened read-only",
            hint=f"Open the {subject} without readonly=True to write.",
        )
    return conn


@contextmanager
def translated_sqlite_errors(path: Path, action: str, *, busy_timeout_ms: int, subject: str) -> Iterator[None]:
    """Run the block; turn apsw, OS and path-encoding exceptions into :class:`StoreError` whose
    message names ``path`` and ``action`` (``"search"``, ``"replace a file"``...) and whose hint
    says what to do. ``subject`` names the object in messages about a closed connection
    (``"index store"``, ``"vector index"``). :class:`WorkspaceError` passes through unchanged, and
    an error raised while handling a ``KeyboardInterrupt`` gives way to that interrupt.

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
        raise StoreError(
            f"the index database {path} stayed locked for more than {busy_timeout_ms} ms while trying to {action}",
            hint="Another `hermes-workspace index` is probably running; wait for it to finish and try again.",
        ) from exc
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        raise StoreError(
            f"the index database {path} is damaged or not a SQLite database ({exc})",
            hint=f"Delete {path} (and its -wal and -shm files) and run `hermes-workspace index` to rebuild it.",
        ) from exc
    except (apsw.ConnectionClosedError, apsw.CursorClosedError) as exc:
        raise StoreError(
            f"the {subject} for {path} is closed", hint=f"Open a new {subject}; a closed one cannot be reused."
        ) from exc
    except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError, apsw.FullError, apsw.IOError) as exc:
        raise StoreError(f"cannot {action} the index database {path}: {exc}") from exc
    except apsw.Error as exc:
        raise StoreError(f"index database error while trying to {action} ({path}): {exc}") from exc
    except OSError as exc:
        raise StoreError(f"cannot {action} the index database {path}: {exc}") from exc
    except UnicodeEncodeError as exc:
        raise StoreError(
            f"cannot {action}: text or path is not valid Unicode ({exc.reason}: {exc.object[exc.start : exc.end]!r})",
            hint="A file name that is not valid UTF-8 cannot be indexed: rename the file, or add it to .hermesignore.",
        ) from exc
