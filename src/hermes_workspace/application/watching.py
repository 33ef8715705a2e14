"""Use case: keep the index fresh while files change (``hermes-workspace watch``, ``mcp --watch``).

One loop over a :class:`~hermes_workspace.domain.ports.ChangeFeed`: events are filtered to the
paths an index run could take (under a root, outside the workspace's own folders, not a secret
or a version-control folder), gathered until the file system has been quiet for the debounce
time (a burst such as a ``git checkout`` becomes one batch), and handed to a run that re-indexes
only those paths. A full run (stat only for unchanged files) starts the watch (so that edits
made before it are caught up) and repeats every few minutes as the safety net for events the
operating system dropped. Only one process writes an index at a time: when another one holds
the lock (:class:`IndexBusyError`), the paths are kept and tried again later; when the index
cannot be written at all (:class:`StoreUnusableError`), the watch ends with that error.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.domain.constants import BINARY_SUFFIXES
from hermes_workspace.domain.errors import (
    ConfigError,
    IndexBusyError,
    StoreUnusableError,
    UsageError,
    WorkspaceError,
)
from hermes_workspace.domain.exclusions import VERSION_CONTROL_NAMES, excluded_path
from hermes_workspace.domain.model import FileChange, IndexSummary, Root
from hermes_workspace.domain.ports import ChangeFeed, StopSignal
from hermes_workspace.domain.profiles import detect_markers, needs_top_level_names
from hermes_workspace.logs import get_logger

log = get_logger("hermes_workspace.watch")

BatchReason = Literal["catch_up", "changes", "retry", "reconcile", "roots_changed", "burst"]
"""Why a run was made: ``catch_up`` (the full run the watch starts with), ``changes`` (changed
paths), ``retry`` (paths kept after the index was busy or a run failed), ``reconcile`` (the
periodic full run), ``roots_changed`` (a full run: config.yaml changed the roots, or a root
appeared, went away or is another folder than the one watched), ``burst``
(more changed paths than :attr:`WatchWorkspace.full_run_above`: a full run is cheaper)."""

VCS_STATE_FILES = frozenset({"HEAD", "ORIG_HEAD", "index", "index.lock", "MERGE_HEAD", "REBASE_HEAD"})
"""Files of a ``.git`` folder whose change means a git command is rewriting the work tree (a
checkout, a merge, a rebase): the watch then waits :attr:`WatchWorkspace.vcs_settle_seconds` of
quiet before indexing, so that the whole switch is one batch."""


@dataclass(frozen=True, slots=True)
class WatchBatch:
    """One run of the watch: ``reason`` (:data:`BatchReason`), ``paths`` (changed paths handed
    to the run; 0 for a full run), the run's ``summary`` (``None`` when it did not run),
    ``error`` (``{"code", "message", "hint"}`` when it did not: ``index_busy`` or another error;
    its paths are kept), ``pending`` (paths kept for a later run), ``seconds`` (wall time) and
    ``at`` (the POSIX time it ended)."""

    reason: BatchReason
    paths: int
    summary: IndexSummary | None
    seconds: float
    at: float
    error: dict[str, Any] | None = None
    pending: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{"event": "batch", "reason", "paths", "pending", "seconds", "at", "error"}`` plus,
        when the run happened, the index summary's fields (seed 000 shape)."""
        data: dict[str, Any] = {"event": "batch", "reason": self.reason, "paths": self.paths, "pending": self.pending,
                                "seconds": round(self.seconds, 3), "at": round(self.at, 3), "error": self.error}
        if self.summary is not None:
            data.update(self.summary.to_json())
        return data


@dataclass(slots=True)
class WatchSummary:
    """What a watch did, from start to stop: runs by kind, files indexed and pruned over all
    runs, events ignored (outside the roots, the workspace's own files, secrets,
    version-control folders), times the index was busy, config reloads, the paths still
    pending when it stopped, ``stopped_by`` (``stop``; ``interrupt``: Ctrl-C; ``terminated``: a
    ``KeyboardInterrupt`` carrying a ``signum``, the CLI's SIGTERM/SIGHUP; ``feed_ended``) and wall
    time in seconds."""

    batches: int = 0
    paths_changed: int = 0
    files_indexed: int = 0
    files_pruned: int = 0
    files_errored: int = 0
    full_runs: int = 0
    events_ignored: int = 0
    busy_retries: int = 0
    failed_runs: int = 0
    config_reloads: int = 0
    pending: int = 0
    stopped_by: str = "stop"
    duration_seconds: float = 0.0
    roots: list[str] = field(default_factory=list)

    def add(self, batch: WatchBatch) -> None:
        """Count ``batch``."""
        if batch.summary is None:
            return
        self.batches += 1
        self.paths_changed += batch.paths
        self.files_indexed += batch.summary.files_indexed
        self.files_pruned += batch.summary.files_pruned
        self.files_errored += batch.summary.files_errored
        if batch.paths == 0:
            self.full_runs += 1

    def to_json(self) -> dict[str, Any]:
        """``{"event": "stopped", ...}`` with every field."""
        return {"event": "stopped", "batches": self.batches, "paths_changed": self.paths_changed,
                "files_indexed": self.files_indexed, "files_pruned": self.files_pruned,
                "files_errored": self.files_errored, "full_runs": self.full_runs,
                "events_ignored": self.events_ignored, "busy_retries": self.busy_retries,
                "failed_runs": self.failed_runs, "config_reloads": self.config_reloads, "pending": self.pending,
                "stopped_by": self.stopped_by, "duration_seconds": round(self.duration_seconds, 3),
                "roots": self.roots}


def _noop(*_: object) -> None:
    return None


@dataclass
class WatchWorkspace:
    """Watches the roots and keeps the index fresh until ``stop`` is set.

    ``feed``: the file events. ``roots()``: the current roots (reads config; raises
    :class:`ConfigError`). ``index_changed(paths)``: re-index only those paths (a path that no
    longer exists drops its records, a folder is walked, a changed ignore file re-walks its
    folder). ``index_all()``: a full run. Both raise ``IndexBusyError`` when another process
    writes the index, ``StoreUnusableError`` when it cannot be written. ``internal_dirs``: the
    workspace's own folders (index, logs, models), never indexed: their events are ignored
    (the watch's own index writes would otherwise wake it forever). ``config_stamp()``: changes
    when config.yaml does (then the roots are read again and, when they changed, the feed is
    restarted on them and a full run made).

    Times are seconds: ``debounce_seconds`` of quiet close a batch, ``vcs_settle_seconds`` after
    a git command's state change, ``max_batch_seconds`` at most from a batch's first event (a
    file written without pause would otherwise never be indexed); ``reconcile_seconds``
    between full runs (``None``: never); ``retry_seconds`` before a busy or failed run is tried
    again; ``tick_seconds``: the feed's timeout (how often the loop wakes without events).
    ``full_run_above``: a batch of more changed paths is done as a full run. ``clock``: seconds
    (monotonic), injectable for tests. ``on_batch(batch)`` is called after every run and every
    run that could not be done; ``heartbeat()`` after every wake of the loop (the caller throttles).
    """

    feed: ChangeFeed
    roots: Callable[[], list[Root]]
    index_changed: Callable[[list[Path]], IndexSummary]
    index_all: Callable[[], IndexSummary]
    internal_dirs: Sequence[Path] = ()
    config_stamp: Callable[[], object] = lambda: None
    debounce_seconds: float = 0.3
    vcs_settle_seconds: float = 1.0
    max_batch_seconds: float = 10.0
    reconcile_seconds: float | None = 600.0
    retry_seconds: float = 2.0
    tick_seconds: float = 0.25
    full_run_above: int = 20_000
    catch_up: bool = True
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time
    on_batch: Callable[[WatchBatch], object] = _noop
    heartbeat: Callable[[], object] = _noop

    def execute(self, stop: StopSignal) -> WatchSummary:
        """Watch until ``stop.is_set()`` (or a ``KeyboardInterrupt``: Ctrl-C and the CLI's
        SIGTERM, which end the watch the same way; or the feed ending) and return the summary.
        The first run is a full one unless ``catch_up`` is false.

        Raises:
            StoreUnusableError: the index cannot be written (disk full, read-only, damaged): the
                watch stops; what was indexed stays.
            ConfigError: config.yaml is invalid when the watch starts (later, an invalid edit is
                logged and the roots are kept).
            WorkspaceError: the feed failed (e.g. the OS watch limit).
        """
        started = self.clock()
        self._summary = summary = WatchSummary()
        self._roots = self.roots()
        summary.roots = [str(r.path) for r in self._roots]
        self._stamp = self.config_stamp()
        self._next_stamp_check = started + 1.0
        self._pending: dict[Path, str] = {}
        self._root_gone = False
        self._first_event: float | None = None
        self._last_event: float | None = None
        self._settle = self.debounce_seconds
        self._retry_at: float | None = None
        self._full_due: BatchReason | None = "catch_up" if self.catch_up else None
        self._last_full_ok = False
        self._next_reconcile = started + self.reconcile_seconds if self.reconcile_seconds else None
        try:
            self._loop(stop)
        except KeyboardInterrupt as exc:
            # The CLI raises a KeyboardInterrupt subclass carrying the signal for SIGTERM/SIGHUP.
            summary.stopped_by = "terminated" if getattr(exc, "signum", None) else "interrupt"
        summary.pending = len(self._pending)
        summary.duration_seconds = self.clock() - started
        log.info("watch stopped", **{k: v for k, v in summary.to_json().items() if k not in ("event", "roots")})
        return summary

    # -- the loop --------------------------------------------------------------------------------

    def _loop(self, stop: StopSignal) -> None:
        # The catch-up run is made at the feed's first batch, once it watches: an edit made
        # while the walk runs is then an event, not lost between the walk and the watch.
        while not stop.is_set():
            restart = False
            self._watched = _existing(self._roots)
            # Only the roots found: the feed reports one gone before its watch began as deleted
            # (then a restart), else a folder made again with the same inode number would go
            # unwatched, nothing here telling it from the one seen.
            present = {path for path, _ in self._watched}
            watching = [root for root in self._roots if root.path in present]
            with closing(iter(self.feed.batches(watching, stop, timeout_seconds=self.tick_seconds))) as batches:
                ended = True
                for batch in batches:
                    if batch:
                        self._collect(batch)
                    self.heartbeat()
                    if self._config_changed():
                        restart = True
                        ended = False
                        break
                    self._work(stop)
                    if stop.is_set():
                        ended = False
                        break
                    now = _existing(self._roots) if self._full_due is None and self._last_full_ok else self._watched
                    if self._root_gone or now != self._watched:
                        # A root appeared (the primary workspace, made by the first run), went
                        # away, or is another folder now (`rm -rf repo && git clone ...`, a
                        # symlink pointed elsewhere): watch what exists, then a full run, once the
                        # new watch is set up. Changed paths would not do: the old watch drops what
                        # it had not handed over yet, and a root's files may now be elsewhere (a
                        # symlink's old target is under no root: only a full run prunes it).
                        self._full_due = "roots_changed"
                        self._root_gone = False
                        restart = True
                        ended = False
                        break
            if ended and not stop.is_set():
                self._summary.stopped_by = "feed_ended"
                return
            if not restart:
                return

    def _collect(self, batch: list[FileChange]) -> None:
        """Add a feed batch's relevant paths to the pending ones."""
        now = self.clock()
        relevant = 0
        for change in batch:
            verdict = self._classify(change)
            if verdict == "vcs":
                self._settle = max(self._settle, self.vcs_settle_seconds)
                self._touched(now)
            elif verdict == "keep":
                self._pending[change.path] = change.kind
                root = self._root_of(change.path)
                if root is not None and change.path.parent == root.path \
                        and needs_top_level_names(root.profile, root.extensions) and detect_markers([change.path.name]):
                    # A marker file (go.mod...) chooses which files of a code root are indexed.
                    self._pending[root.path] = "modified"
                if change.kind == "deleted" and any(change.path == root.path for root in self._roots):
                    # Its watch died with it; a folder made again under its name (even one that
                    # reuses the inode number) needs a new one.
                    self._root_gone = True
                relevant += 1
            else:
                self._summary.events_ignored += 1
        if relevant:
            self._touched(now)

    def _touched(self, now: float) -> None:
        if self._first_event is None:
            self._first_event = now
        self._last_event = now

    def _classify(self, change: FileChange) -> Literal["keep", "vcs", "ignore"]:
        """``keep`` a path an index run could take, ``vcs`` for a git command's state file,
        ``ignore`` anything else."""
        path = change.path
        text = str(path)
        for folder in self.internal_dirs:
            prefix = os.path.join(str(folder), "")
            if text == str(folder) or text.startswith(prefix):
                return "ignore"
        root = self._root_of(path)
        if root is None:
            return "ignore"
        parts = path.relative_to(root.path).parts
        for depth, name in enumerate(parts[:-1]):
            if name.lower() in VERSION_CONTROL_NAMES:
                # A git command rewrites the work tree around these: wait for it to end.
                tail = parts[depth + 1:]
                return "vcs" if len(tail) == 1 and tail[0] in VCS_STATE_FILES else "ignore"
        if not parts:
            return "keep"  # the root folder itself (deleted, or replaced)
        if excluded_path(parts, is_dir=change.kind != "deleted" and os.path.isdir(path)) is not None:
            return "ignore"
        if change.kind != "deleted" and path.suffix.lower() in BINARY_SUFFIXES and not os.path.isdir(path):
            return "ignore"
        return "keep"

    def _root_of(self, path: Path) -> Root | None:
        """The root ``path`` belongs to (a recursive root holds everything below it, another one
        only the entries directly in it), or ``None``."""
        for root in self._roots:
            if path == root.path or path.parent == root.path:
                return root
            if root.recursive and path.is_relative_to(root.path):
                return root
        return None

    def _config_changed(self) -> bool:
        """Whether config.yaml changed the roots (looked at about once a second); an invalid
        config is logged and the roots are kept."""
        now = self.clock()
        if now < self._next_stamp_check:
            return False
        self._next_stamp_check = now + 1.0
        stamp = self.config_stamp()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        try:
            roots = self.roots()
        except ConfigError as exc:
            log.warning("config.yaml is invalid: the watch keeps its roots", error=exc.message, hint=exc.hint)
            return False
        self._summary.config_reloads += 1
        if [_files_of(r) for r in roots] == [_files_of(r) for r in self._roots]:
            return False  # e.g. a rename: the same files
        log.info("roots changed: watching the new ones", roots=[str(r.path) for r in roots])
        self._roots = roots
        self._summary.roots = [str(r.path) for r in roots]
        self._full_due = "roots_changed"
        return True

    def _work(self, stop: StopSignal) -> None:
        """Do what is due now: a full run (catch-up, roots changed, reconciliation), or the
        pending paths once the file system has been quiet long enough."""
        now = self.clock()
        if self._retry_at is not None and now < self._retry_at:
            return
        if self._next_reconcile is not None and now >= self._next_reconcile and self._full_due is None:
            self._full_due = "reconcile"
        if self._full_due is not None:
            self._run_full(self._full_due)
            return
        if not self._pending or self._last_event is None or self._first_event is None:
            return
        quiet = now - self._last_event >= self._settle
        overdue = now - self._first_event >= self.max_batch_seconds
        if not (quiet or overdue):
            return
        if len(self._pending) > self.full_run_above:
            self._run_full("burst")
            return
        self._run_paths("retry" if self._retry_at is not None else "changes")

    def _run_paths(self, reason: BatchReason) -> None:
        paths, self._pending = self._pending, {}
        self._first_event = self._last_event = None
        self._settle = self.debounce_seconds
        started = self.clock()
        try:
            summary = self.index_changed(sorted(paths))
        except StoreUnusableError:
            raise
        except UsageError as exc:
            # The request itself cannot succeed (no root covers these paths any more): trying
            # again would fail the same way.
            self._failed(reason, len(paths), exc, started, retry=False)
            return
        except WorkspaceError as exc:
            # Nothing lost: the paths wait for the next try, with the changes that come meanwhile.
            self._keep(paths)
            self._failed(reason, len(paths), exc, started)
            return
        except KeyboardInterrupt:
            self._keep(paths)  # reported as pending
            raise
        self._retry_at = None
        self._done(WatchBatch(reason, len(paths), summary, self.clock() - started, self.wall_clock(),
                              pending=len(self._pending)))

    def _run_full(self, reason: BatchReason) -> None:
        # Whatever changed so far is covered by the walk.
        kept, self._pending = self._pending, {}
        self._first_event = self._last_event = None
        self._settle = self.debounce_seconds
        started = self.clock()
        try:
            summary = self.index_all()
        except StoreUnusableError:
            raise
        except KeyboardInterrupt:
            self._keep(kept)
            raise
        except WorkspaceError as exc:
            self._keep(kept)
            self._failed(reason, 0, exc, started)
            return
        self._full_due = None
        self._retry_at = None
        self._last_full_ok = True
        if self.reconcile_seconds:
            self._next_reconcile = self.clock() + self.reconcile_seconds
        self._done(WatchBatch(reason, 0, summary, self.clock() - started, self.wall_clock(),
                              pending=len(self._pending)))

    def _keep(self, paths: dict[Path, str]) -> None:
        for path, kind in paths.items():
            self._pending.setdefault(path, kind)
        if self._first_event is None and self._pending:
            self._first_event = self._last_event = self.clock()

    def _failed(self, reason: BatchReason, paths: int, exc: WorkspaceError, started: float, *,
                retry: bool = True) -> None:
        if not retry:
            self._summary.failed_runs += 1
            log.warning("watch run refused; its paths are dropped", reason=reason, paths=paths, code=exc.code,
                        error=exc.message)
            self.on_batch(WatchBatch(reason, paths, None, self.clock() - started, self.wall_clock(),
                                     error=exc.to_json(), pending=len(self._pending)))
            return
        if isinstance(exc, IndexBusyError):
            self._summary.busy_retries += 1
            log.info("index busy: another process writes it; trying again", reason=reason, paths=paths,
                     retry_seconds=self.retry_seconds)
        else:
            self._summary.failed_runs += 1
            log.warning("watch run failed; trying again", reason=reason, paths=paths, code=exc.code,
                        error=exc.message, retry_seconds=self.retry_seconds)
        if reason not in ("changes", "retry"):
            self._full_due = reason
        self._retry_at = self.clock() + self.retry_seconds
        batch = WatchBatch(reason, paths, None, self.clock() - started, self.wall_clock(), error=exc.to_json(),
                           pending=len(self._pending))
        self.on_batch(batch)

    def _done(self, batch: WatchBatch) -> None:
        self._summary.add(batch)
        assert batch.summary is not None
        log.info("watch batch", reason=batch.reason, paths=batch.paths, pending=batch.pending,
                 seconds=round(batch.seconds, 3), files_indexed=batch.summary.files_indexed,
                 files_pruned=batch.summary.files_pruned, files_errored=batch.summary.files_errored)
        self.on_batch(batch)



def _files_of(root: Root) -> tuple[object, ...]:
    """What decides which files a root gives: a change of any of these needs a full run."""
    return (root.path, root.recursive, root.profile, root.extensions, root.max_file_size)


def _existing(roots: Sequence[Root]) -> frozenset[tuple[Path, tuple[int, int]]]:
    """The roots that are folders now (a feed watches those only), each with its folder's
    identity (``st_dev``, ``st_ino``): a folder deleted and made again under the same name is
    another folder, which the feed does not watch yet."""
    found = set()
    for root in roots:
        try:
            info = os.stat(root.path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            found.add((root.path, (info.st_dev, info.st_ino)))
    return frozenset(found)
