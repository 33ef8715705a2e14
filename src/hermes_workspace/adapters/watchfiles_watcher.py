"""``WatchfilesChangeFeed``: the :class:`~hermes_workspace.domain.ports.ChangeFeed` on the
operating system's file events (inotify, FSEvents, ReadDirectoryChangesW), through watchfiles
(the Rust ``notify`` crate; it falls back to polling where events do not work, e.g. some
network and WSL drives, or when ``WATCHFILES_FORCE_POLLING`` is set).

watchfiles takes one ``recursive`` flag per watch, so recursive and non-recursive roots are
watched by two watches, each on a thread of its own that hands its batches to the caller through
a queue. No watchfiles type leaves this module: events become
:class:`~hermes_workspace.domain.model.FileChange`.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from hermes_workspace.domain.errors import MissingExtraError, WorkspaceError
from hermes_workspace.logs import get_logger
from hermes_workspace.domain.model import FileChange, Root
from hermes_workspace.domain.ports import StopSignal

log = get_logger("hermes_workspace.watch")

DEFAULT_STEP_MS = 50
"""watchfiles' ``step``: a batch is handed over once no new event came for this long (its own
default). The use case then waits ``knowledgebase.watch.debounce_ms`` for more."""

DEFAULT_GROUP_MS = 1_000
"""watchfiles' ``debounce``: the longest it groups events before handing a batch over even while
they keep coming; the use case coalesces further batches of a burst itself."""

_NO_TIMEOUT_MS = 0
"""watchfiles' ``rust_timeout``: none. Its watch looks at the stop flag at every ``step``
anyway; a timeout only adds a way to lose events: on timing out it clears the changes it
collected, and a change that comes between its last look and the clearing is dropped (seen:
`rm -rf root && mkdir root` under a loaded test suite, the deletion never reported, the new
folder never watched)."""


_RESTART_SECONDS = 1.0
"""Pause before a watch is set up again after watchfiles ended it on a file name it cannot
decode: a file of that name written without pause restarts it at most once a second."""

_STARTUP_SECONDS = 0.5
"""Time given to the watch threads to set their watches up before the first (empty) batch:
watchfiles sets them up synchronously when its watch starts (a few milliseconds per thousand
folders with inotify), but says nothing when it is done. 0.2 s was too short on a loaded
machine (a test suite on 2 cores): a change right after the catch-up run was missed until the
reconcile. Paid once per watch start or restart."""


class WatchLimitError(WorkspaceError):
    """The operating system refuses more watches (Linux: ``fs.inotify.max_user_watches``)."""

    code = "watch_limit"
    exit_code = 69
    default_hint = (
        "Raise the limit (Linux: sudo sysctl fs.inotify.max_user_watches=524288), watch fewer folders, "
        "or set WATCHFILES_FORCE_POLLING=1 to poll instead of using OS events."
    )


class WatchfilesChangeFeed:
    """A :class:`~hermes_workspace.domain.ports.ChangeFeed` using watchfiles.

    ``step_ms`` and ``group_ms``: watchfiles' ``step`` and ``debounce``
    (:data:`DEFAULT_STEP_MS`, :data:`DEFAULT_GROUP_MS`). ``force_polling``: poll instead of OS
    events (``None``: watchfiles decides, honouring ``WATCHFILES_FORCE_POLLING``);
    ``poll_delay_ms``: the polling interval then.
    """

    def __init__(self, *, step_ms: int = DEFAULT_STEP_MS, group_ms: int = DEFAULT_GROUP_MS,
                 force_polling: bool | None = None, poll_delay_ms: int = 300) -> None:
        try:
            import watchfiles  # noqa: F401 - fail when built, not at the first event
        except ImportError as exc:
            raise MissingExtraError(
                f"watching needs the watchfiles package ({exc})",
                hint="pip install 'hermes-workspace[workspace]'",
            ) from None

        self.step_ms = step_ms
        self.group_ms = group_ms
        self.force_polling = force_polling
        self.poll_delay_ms = poll_delay_ms

    def batches(self, roots: Sequence[Root], stop: StopSignal, *, timeout_seconds: float) -> Iterator[list[FileChange]]:
        """See :meth:`~hermes_workspace.domain.ports.ChangeFeed.batches`.

        Raises:
            WatchLimitError: the inotify watch limit (or the open-files limit) is reached.
            WorkspaceError: another OS error while setting up or running a watch.
        """
        # A root given but no folder now went between the caller's look and this one: said as
        # its deletion, so that the caller watches again once it is back (were it made again
        # meanwhile, possibly with the same inode number, nothing else would tell).
        folders = [r for r in roots if os.path.isdir(r.path)]
        missing = [FileChange(r.path, "deleted") for r in roots if r not in folders]
        groups = {
            recursive: sorted({str(r.path) for r in folders if r.recursive == recursive})
            for recursive in (True, False)
        }
        halt = _Halt(stop)
        inbox: queue.Queue[list[FileChange] | BaseException] = queue.Queue()
        threads = [
            threading.Thread(target=self._watch, args=(paths, recursive, halt, inbox),
                             name=f"hermes-watch-{'recursive' if recursive else 'flat'}", daemon=True)
            for recursive, paths in groups.items() if paths
        ]
        for thread in threads:
            thread.start()
        try:
            # A first, empty batch once the watches had time to be set up: the caller's catch-up
            # run then sees every later change as an event.
            time.sleep(_STARTUP_SECONDS)
            yield missing
            while not stop.is_set():
                try:
                    item = inbox.get(timeout=timeout_seconds)
                except queue.Empty:
                    yield []
                    continue
                if isinstance(item, BaseException):
                    raise _translated(item)
                yield item
        finally:
            halt.set()
            for thread in threads:
                thread.join(timeout=5)

    def _watch(self, paths: list[str], recursive: bool, halt: _Halt,
               inbox: queue.Queue[list[FileChange] | BaseException]) -> None:
        from watchfiles import Change, watch

        kinds = {Change.added: "added", Change.modified: "modified", Change.deleted: "deleted"}
        while not halt.is_set() and paths:
            try:
                for changes in watch(*paths, watch_filter=None, debounce=self.group_ms, step=self.step_ms,
                                     stop_event=halt, rust_timeout=_NO_TIMEOUT_MS, yield_on_timeout=False,
                                     raise_interrupt=False, recursive=recursive, force_polling=self.force_polling,
                                     poll_delay_ms=self.poll_delay_ms, ignore_permission_denied=True):
                    batch = [FileChange(Path(path), kinds[change]) for change, path in changes]  # type: ignore[arg-type]
                    if batch:
                        inbox.put(batch)
                return
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                if halt.is_set():
                    return
                gone = [path for path in paths if not os.path.isdir(path)]
                if isinstance(exc, FileNotFoundError) and gone:
                    # A root went while its watch was being set up: said as its deletion; the
                    # others are watched on.
                    inbox.put([FileChange(Path(path), "deleted") for path in gone])
                    paths = [path for path in paths if path not in gone]
                    continue
                folder = _undecodable_event(exc, paths)
                if folder is None:
                    inbox.put(exc)
                    return
                # watchfiles ends its watch on an event for a file name that is not UTF-8 (it
                # cannot hand the path over as str): watch again, and have the folder of that
                # file walked, which takes the file and whatever changed meanwhile.
                log.warning("a file name is not UTF-8: watching again, its folder is walked", folder=str(folder))
                inbox.put([FileChange(folder, "modified")])
                time.sleep(_RESTART_SECONDS)


def _undecodable_event(exc: BaseException, paths: Sequence[str]) -> Path | None:
    """For watchfiles' error on a file name that is not UTF-8 (``Unable to decode path "..." to
    string``): the folder to walk instead, the file's folder when the message names it under one of
    ``paths``, else the first watched path. ``None`` for any other error."""
    text = str(exc)
    if "decode path" not in text:
        return None
    start, end = text.find('"'), text.rfind('"')
    named = Path(os.path.dirname(text[start + 1:end])) if 0 <= start < end else None
    if named is not None and any(named == Path(p) or Path(p) in named.parents for p in paths):
        return named
    return Path(paths[0]) if paths else None


class _Halt:
    """Set when the caller stops (its own signal) or leaves the iterator: what the watch threads
    poll (watchfiles calls ``is_set()`` between its steps)."""

    def __init__(self, outer: StopSignal) -> None:
        self._outer = outer
        self._own = threading.Event()

    def set(self) -> None:
        self._own.set()

    def is_set(self) -> bool:
        return self._own.is_set() or self._outer.is_set()


def _translated(exc: BaseException) -> BaseException:
    """A watch thread's failure as the caller gets it."""
    if isinstance(exc, WorkspaceError) or not isinstance(exc, Exception):
        return exc
    text = str(exc)
    if (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EMFILE)) or "inotify" in text.lower() \
            or "No space left on device" in text or "Too many open files" in text:
        return WatchLimitError(f"the operating system refuses to watch more folders: {text}")
    return WorkspaceError(f"the file watcher failed: {type(exc).__name__}: {text}",
                          hint="Run the watch again; `hermes-workspace index` brings the index up to date meanwhile.")
