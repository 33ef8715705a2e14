"""``FileIndexLock``: one index run per workspace, across processes, with the filelock library."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from hermes_workspace.domain.errors import IndexBusyError, StoreError


class FileIndexLock:
    """An :class:`~hermes_workspace.domain.ports.IndexLock` on ``path`` (an OS-level lock that
    the kernel releases if the holder dies, so a crash never leaves the workspace locked).

    ``wait_seconds`` is how long a second run waits before giving up (0: fail at once).
    """

    def __init__(self, path: Path, *, wait_seconds: float = 0.0) -> None:
        self.path = path
        self.wait_seconds = wait_seconds
        self._depth = 0

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the lock for the duration of the ``with`` block. Re-entrant for this object, so
        that a caller can take it before building what the run needs (opening the index for
        writing would otherwise wait for another run's transaction before failing) and the run
        takes it again; another object on the same file, in this process or another, is refused.

        Raises:
            IndexBusyError: another process (or thread) holds it.
            StoreError: the lock file cannot be created.
        """
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {self.path.parent}: {exc}") from exc
        lock = FileLock(str(self.path), thread_local=False, is_singleton=False)
        try:
            lock.acquire(timeout=self.wait_seconds)
        except Timeout:
            _, owner = self.probe()
            raise IndexBusyError(
                f"another index run is in progress on this workspace ({f'process {owner}, ' if owner else ''}"
                f"lock: {self.path})"
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot lock {self.path}: {exc}") from exc
        self._depth = 1
        try:
            _write_owner(self.path)
            yield
        finally:
            self._depth = 0
            lock.release()


    def probe(self) -> tuple[bool | None, int | None]:
        """Whether an index run (of this process or another) holds the lock now, without waiting
        and without creating or writing anything (``doctor`` runs on read-only indexes):
        ``(held, pid)``, ``pid`` as the holder wrote it in the lock file (possibly a previous
        holder's when not held). ``(False, None)`` when there is no lock file (no run ever);
        ``held`` is ``None`` when the platform or the file does not let us tell.

        The lock is the ``flock`` that :class:`filelock.UnixFileLock` takes; a shared try-lock on
        a read-only descriptor conflicts with it, and is released at once."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return False, None
        except OSError:
            return None, None
        try:
            pid = _read_owner(fd)
            try:
                import fcntl
            except ImportError:  # Windows: no flock to try
                return None, pid
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True, pid
            except OSError:
                return None, pid
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False, pid
        finally:
            os.close(fd)


def _read_owner(fd: int) -> int | None:
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdecimal() else None


def _write_owner(path: Path) -> None:
    try:
        with open(path, "w", encoding="ascii") as handle:  # noqa: PTH123 - same file the lock holds
            handle.write(f"{os.getpid()}\n")
    except OSError:
        pass
