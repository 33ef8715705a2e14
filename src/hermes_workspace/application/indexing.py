"""Use case: index every root of a workspace (DESIGN.md §4, seed 000 "Re-Indexing Strategy").

One run: discover the candidate files; look each one up in the store (size, mtime and settings
unchanged: skipped without reading); read, hash, decode and chunk the others with
:func:`process_file`, in worker processes when a :class:`~hermes_workspace.domain.ports.TaskPool`
is given and there is enough to do, else in this process; store the results in candidate order,
from this process only (the single writer), a few hundred files per transaction; prune.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from itertools import islice
from pathlib import Path

from hermes_workspace.logs import get_logger
from hermes_workspace.application.batch_writer import BatchWriter
from hermes_workspace.application.conversion import Conversions
from hermes_workspace.application.embedding import EmbedChunks
from hermes_workspace.application.storage_guard import StorageGuard
from hermes_workspace.application.file_processing import (
    FileOutcome,
    FileTask,
    FileTools,
    Problem,
    process_file,
)
from hermes_workspace.domain.catalog import DELETED_BY_USER, Tombstone
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.constants import INDEX_DIRNAME
from hermes_workspace.domain.encodings import sibling_hint
from hermes_workspace.domain.conversion import converted_signature, converted_view
from hermes_workspace.domain.errors import ConverterUnavailableError, StoreUnusableError, UsageError, reraise_interrupt
from hermes_workspace.domain.model import (
    ChangedScope,
    DiscoveryProblem,
    ErrorStage,
    ExcludedPath,
    FileFailure,
    FileRecord,
    IndexSummary,
    Root,
    SkipReason,
    SkippedFile,
    SourceFile,
)
from hermes_workspace.domain.plugins import file_signatures
from hermes_workspace.domain.ports import (
    Chunker,
    Decoder,
    FileSource,
    IndexLock,
    IndexStore,
    ProgressSink,
    TaskPool,
    WorkspaceLayout,
)

__all__ = ["FileOutcome", "FileTask", "FileTools", "IndexWorkspace", "Problem", "process_file", "utc_iso"]

log = get_logger("hermes_workspace.index")

PARALLEL_MIN_BYTES = 4 * 1024 * 1024
"""Runs with fewer bytes than this to read are processed in this process. Starting worker
processes costs about half a second before the first result (and as much CPU time again), which
chunking in parallel wins back only from a few megabytes on (chunking runs at ~5 MB/s per core).
Bytes, not files, because work grows with bytes; and a re-index always reads the files that were
never stored (empty or binary content), whose number says nothing about the edits."""

PARALLEL_MIN_FILES = 8
"""...and with fewer files than this (one huge file gains nothing from workers)."""

def utc_iso(timestamp_ns: int | float) -> str:
    """``2026-04-15T10:32:00Z`` for a POSIX time in nanoseconds (seconds precision, UTC)."""
    seconds = timestamp_ns / 1e9 if isinstance(timestamp_ns, int) else timestamp_ns
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the run, in this process --------------------------------------------------------------------------


class _FileFailed(Exception):
    """Carries the stage of a per-file failure up to the run loop."""

    def __init__(self, stage: ErrorStage, problem: Problem) -> None:
        super().__init__(problem.message)
        self.stage = stage
        self.problem = problem


_UNCHANGED = "unchanged"
"""Plan step of a file whose size, mtime and settings match its record: skipped without reading."""

_DELETED = DELETED_BY_USER
"""Plan step of a file removed by ``delete`` whose size and mtime match its tombstone: skipped
without reading."""

@dataclass(frozen=True, slots=True)
class _Unavailable:
    """Plan step of a document whose converter cannot run (library missing, plugin broken):
    skipped without reading. A version in the index stays when the file's size and mtime are
    those it was indexed with (``keep``: its chunks still match the file; the next run tries the
    converter again), and is dropped otherwise (they no longer do)."""

    indexed: bool
    error: ConverterUnavailableError
    keep: bool = False


_Step = FileTask | _FileFailed | _Unavailable | str


@dataclass
class IndexWorkspace:
    """Indexes the primary workspace and the added roots into ``store``.

    Per file: skip when size, mtime and config signature are unchanged (no read); else read and
    hash (SHA-256); skip when the hash is unchanged (the stored mtime is refreshed); else decode,
    chunk (files of at most ``threshold`` words are one chunk; a failing ``chunker`` falls back to
    ``fallback_chunker``) and replace the file's chunks, all-or-nothing. After the walk, indexed
    files that were not found again are pruned, except under roots that could not be read at all.
    One file's failure is recorded with its stage and the run goes on. A failure of the index
    database as a whole (:class:`StoreUnusableError`: disk full, read-only, I/O error...) stops
    the run at once: the batches committed before it stay, and the error says how many files
    were indexed.

    With ``pool`` and ``worker_tools`` (a picklable function building :class:`FileTools` in a
    worker process), runs with at least ``parallel_min_files`` files and ``parallel_min_bytes``
    bytes to read do the reading, decoding and chunking in ``pool``'s workers, and this process
    stores their results in candidate order; should the pool fail (a worker died), the rest is
    done in this process. Writes are grouped into transactions (``store.batch()``, see
    :class:`~hermes_workspace.application.batch_writer.BatchWriter`); a file counts as indexed once its batch is committed. A store without
    ``batch`` gets one transaction per file.

    Raises (from :meth:`execute`): ``IndexBusyError`` when another run holds ``lock``;
    :class:`StoreUnusableError` when the index database cannot be written (see :meth:`execute`).
    """

    config: WorkspaceConfig
    home: Path
    source: FileSource
    decoder: Decoder
    chunker: Chunker
    fallback_chunker: Chunker
    store: IndexStore
    lock: IndexLock
    layout: WorkspaceLayout
    clock: Callable[[], float] = time.time
    pool: TaskPool | None = None
    worker_tools: Callable[[], FileTools] | None = None
    parallel_min_files: int = PARALLEL_MIN_FILES
    parallel_min_bytes: int = PARALLEL_MIN_BYTES
    embedding: EmbedChunks | None = None
    conversions: Conversions | None = None
    """Document converters by suffix (PDF, DOCX...) and their cache; ``None``: none. A converted
    file's config signature also holds its converter's signature
    (:func:`~hermes_workspace.domain.conversion.converted_signature`), so that a converter
    change re-indexes those files only; the cache is pruned to the indexed files after the run."""
    storage: StorageGuard | None = None
    """The storage limits (``knowledgebase.storage``, :class:`StorageGuard`): files whose chunks
    would take the index past ``max_size`` are skipped (``budget``; an indexed version stays);
    the free disk space is checked before each batch of writes, the prune and the embedding pass
    (:class:`~hermes_workspace.domain.errors.DiskSpaceLowError` stops the run). ``None``: no limits."""
    prune_vectors: Callable[[], int] | None = None
    """Deletes the orphaned vectors in the index (those no chunk uses) and returns how many; run
    at the end of a run without an embedding pass (that pass prunes them itself, after reusing
    those whose text came back: a moved file). ``None``: nothing to prune."""

    def execute(self, progress: ProgressSink, changed: Collection[Path] | None = None) -> IndexSummary:
        """Run one index pass; returns the summary (seed 000 shape). ``progress`` gets
        ``start(total)``, one ``advance`` per candidate file, in order, and ``finish()``; then,
        with ``embedding``, the same for the chunks that get vectors (``summary.semantic``).

        ``changed`` (absolute paths; ``None``: every root, the whole run): a run over these paths
        only, for a file watcher or ``index --path``. Each is placed in the roots by
        :meth:`~hermes_workspace.domain.ports.FileSource.discover_paths`: a file is judged as the
        whole walk judges it, then planned and stored as in a whole run (size, mtime and settings
        unchanged: skipped without reading); a folder is walked with the rules inherited from
        its ancestors; a changed ignore file re-walks its folder. The indexed files at or under
        each path that were not found again (deleted, renamed away, now excluded or ignored) are
        pruned, with their tombstones; nothing else is looked at, so the run costs what changed,
        not the size of the index (record and tombstone lookups by path). Paths no root covers
        (outside every root, in the index folder) are left alone and counted in
        ``summary.changed_paths`` (``{"given", "ignored"}``). Such a run does not replace what
        the last whole run recorded (:meth:`IndexStore.record_run`, ``record_exclusions``:
        ``status`` keeps describing it) nor prune the conversion cache (the next whole run
        does); the embedding pass embeds the chunks it added, as always.

        Raises:
            StoreUnusableError: the index database failed as a whole (disk full, read-only, I/O
                error, file gone) during the keyword pass, the prune or the embedding pass. The
                run stops at the first such failure; every batch committed before it stays (a
                new run after the cause is fixed redoes only the rest). The message adds how many
                files this run indexed, the hint that running ``index`` again finishes the work;
                the summary so far is logged.
        """
        started = time.perf_counter()
        summary = IndexSummary()
        stage = "keyword"
        given = None if changed is None else _absolute_paths(changed)
        try:
            with self.lock.hold():
                self.layout.ensure(self.config.primary_path(self.home), create_folders=self.config.enabled)
                roots = self._roots()
                if given is None:  # walked whole: their coverage is recorded (paths come under the resolved folder)
                    summary.track_roots((r.path, Path(os.path.realpath(r.path))) for r in roots)
                signature = file_signatures(self.config, self.chunker)  # per file: its route's chunker
                if self.storage is not None:
                    self.storage.start()
                scopes: list[Path] | None = None
                if given is None:
                    candidates, seen, unreadable = self._discover(self.source.discover(roots), summary)
                else:
                    candidates, seen, unreadable, scopes = self._discover_changed(roots, given, summary)
                self._scopes = scopes
                progress.start(len(candidates))
                self._fallbacks = []
                self._vanished: set[Path] = set()
                try:
                    self._index_candidates(candidates, signature, summary, progress)
                finally:
                    progress.finish()
                if self._fallbacks:
                    summary.add_note(_fallback_note(self._fallbacks))
                if self.storage is not None:
                    if note := self.storage.note():
                        summary.add_note(note)
                    self.storage.check_disk()
                self._prune(seen, unreadable, summary)
                if scopes is None:
                    # A partial run's counts describe a few paths: the whole run's stay.
                    self._prune_conversions()
                    self.store.record_exclusions(summary.excluded)
                    finished = utc_iso(self.clock())
                    self.store.record_run(finished, summary.skipped)
                    self.store.record_root_counts(summary.root_counts(finished))
                if self.embedding is not None:
                    stage = "embedding"
                    if self.storage is not None:
                        self.storage.check_disk()
                    summary.semantic = self.embedding.execute(progress)
                    summary.vectors_pruned = summary.semantic.vectors_pruned
                elif self.prune_vectors is not None:
                    summary.vectors_pruned = self.prune_vectors()
        except StoreUnusableError as exc:
            summary.duration_seconds = time.perf_counter() - started
            raise _stopped(exc, summary, stage) from exc
        summary.duration_seconds = time.perf_counter() - started
        log.info("index finished", **{k: v for k, v in summary.to_json().items() if k != "errors"})
        return summary

    def _roots(self) -> list[Root]:
        roots = self.config.all_roots(self.home)
        if not self.config.enabled:
            roots = [r for r in roots if not r.primary]
        return roots

    def _discover_changed(
        self, roots: list[Root], given: list[Path], summary: IndexSummary
    ) -> tuple[list[SourceFile], set[Path], set[Path], list[Path]]:
        """:meth:`_discover` over the changed paths ``given``, and the scopes to prune under
        (:class:`ChangedScope` paths, those nested in another left out). A source without
        ``discover_paths`` walks every root (the prune stays limited to the scopes)."""
        own_index = os.path.join(self.config.primary_path(self.home), INDEX_DIRNAME)
        inside = [p for p in given if not (str(p) == own_index or str(p).startswith(own_index + os.sep))]
        ignored = len(given) - len(inside)
        found: list[ChangedScope] = []
        discover_paths = getattr(self.source, "discover_paths", None)
        if not inside:
            items: Iterable[object] = ()
        elif discover_paths is None:
            found = [ChangedScope(p, p) for p in inside]
            items = self.source.discover(roots)
        else:
            items = discover_paths(roots, inside)
        candidates, seen, unreadable = self._discover(items, summary, found)
        covered = {scope.given for scope in found if scope.path is not None}
        ignored += sum(1 for p in dict.fromkeys(scope.given for scope in found) if p not in covered)
        summary.changed_paths = {"given": len(given), "ignored": ignored}
        scopes: list[Path] = []
        kept: set[Path] = set()
        # A set of the scopes kept so far, looked up by each path's ancestors: a scan of the
        # list per path was quadratic (5 s for the 500 paths of a branch switch).
        for path in sorted({scope.path for scope in found if scope.path is not None}, key=str):
            if path not in kept and not any(parent in kept for parent in path.parents):
                scopes.append(path)
                kept.add(path)
        if ignored:
            log.info("changed paths outside every root left alone", ignored=ignored)
        return candidates, seen, unreadable, scopes

    def _discover(
        self, items: Iterable[object], summary: IndexSummary, scopes: list[ChangedScope] | None = None
    ) -> tuple[list[SourceFile], set[Path], set[Path]]:
        """Candidates in walk order (roots never overlap, the config refuses it; should a source
        yield a path twice, the first stays), every path
        seen, and the paths that could not be looked at: whatever the index holds under those is
        kept rather than pruned (an unmounted drive or a folder without permission is not a
        deletion). The :class:`ChangedScope` items of a changed-paths run go to ``scopes``."""
        candidates: list[SourceFile] = []
        seen: set[Path] = set()
        unreadable: set[Path] = set()
        # The file sources leave the index folder out themselves; this guards any other source,
        # as a string test (Path.parents costs more than the rest of an unchanged file's turn).
        own_index = os.path.join(self.config.primary_path(self.home), INDEX_DIRNAME, "")
        for item in items:
            if isinstance(item, ChangedScope):
                if scopes is not None:
                    scopes.append(item)
            elif isinstance(item, SourceFile):
                if str(item.path).startswith(own_index):
                    continue
                if item.path not in seen:
                    seen.add(item.path)
                    candidates.append(item)
            elif isinstance(item, SkippedFile):
                summary.add_skip(item.reason, item.path)
            elif isinstance(item, ExcludedPath):
                summary.add_exclusion(item.category, item.path)
            elif isinstance(item, DiscoveryProblem):
                unreadable.add(item.path)
                summary.add_error(FileFailure(str(item.path), "discover", item.error_type, item.message))
                log.warning("cannot look at path", path=str(item.path), stage="discover",
                            error_type=item.error_type, message=item.message)
        return candidates, seen, unreadable

    def _index_candidates(
        self, candidates: list[SourceFile], signature: Callable[[Path], str], summary: IndexSummary, progress: ProgressSink
    ) -> None:
        """Plan every candidate (one record lookup each), then go through them in order: skip,
        or store the outcome of :func:`process_file`, computed here or ahead in worker
        processes."""
        if self._scopes is None:
            self._graves = {t.path: t for t in self.store.tombstones()}
        else:
            self._graves = {t.path: t for scope in self._scopes for t in self.store.tombstones(under=scope)}
        self._signatures = {}
        steps = [self._plan(file, signature) for file in candidates]
        tasks = [step for step in steps if isinstance(step, FileTask)]
        total = len(candidates)
        guard = self.storage
        batch = BatchWriter(self.store, summary, partial(_record_store_failure, summary),
                            before_batch=guard.check_disk if guard else None, after_commit=guard.committed if guard else None)
        ambiguous: list[tuple[FileTask, FileOutcome]] = []
        with closing(self._outcomes(tasks)) as outcomes:
            try:
                for position, (file, step) in enumerate(zip(candidates, steps, strict=True), start=1):
                    progress.advance(position, total, file.path)
                    try:
                        if isinstance(step, FileTask):
                            outcome = next(outcomes)
                            if outcome.ambiguous and step.hint is None:
                                ambiguous.append((step, outcome))  # decided once its siblings are
                                continue
                            self._apply(step, outcome, signature, summary, batch)
                        elif isinstance(step, _FileFailed):
                            raise step
                        elif isinstance(step, _Unavailable):
                            self._skip_unavailable(file.path, step.indexed and not step.keep, step.error, summary,
                                                   batch, kept=step.keep)
                        else:
                            summary.add_skip("deleted_by_user" if step == _DELETED else "unchanged")
                    except _FileFailed as failed:
                        self._failed(summary, file.path, failed)
                    batch.file_done()
                undecided = {task.file.path for task, _ in ambiguous}
                decided = self._decided_encodings(undecided) if ambiguous and self._scopes is None else []
                for task, outcome in ambiguous:
                    try:
                        evidence = decided if self._scopes is None else self._nearest_encodings(task.file, undecided)
                        self._apply(task, self._with_siblings_evidence(task, outcome, evidence), signature,
                                    summary, batch)
                    except _FileFailed as failed:
                        self._failed(summary, task.file.path, failed)
                    batch.file_done()
            except BaseException:
                batch.close(unwinding=True)
                raise
            batch.close()

    def _failed(self, summary: IndexSummary, path: Path, failed: _FileFailed) -> None:
        """Count a file's failure; one that is gone or another file by the time it was read
        (`rm -rf repo && git clone ...` while a run walks it) is a skip, not an error: a deleted
        file's records are pruned by this run (as if the walk had not seen it), a replaced one is
        read by the next run."""
        moved = _MOVED_UNDER_THE_RUN.get((failed.stage, failed.problem.error_type))
        if moved is None:
            _record_failure(summary, path, failed)
            return
        summary.add_skip(moved)
        if moved == "vanished":
            self._vanished.add(path)
        log.debug("file changed under the run", path=str(path), skipped=moved)

    def _decided_encodings(self, undecided: set[Path]) -> list[tuple[Path, str]]:
        """``(path, encoding)`` of every indexed file read in a legacy encoding (this run's
        included, since its writes are visible through the store), except ``undecided``."""
        return [(r.path, r.encoding) for r in self.store.file_records() if r.encoding and r.path not in undecided]

    def _nearest_encodings(self, file: SourceFile, undecided: set[Path]) -> list[tuple[Path, str]]:
        """:meth:`_decided_encodings` for a changed-paths run, by lookups instead of a scan: the
        decided files under the nearest folder, from ``file``'s own up to its root, that holds
        any. :func:`~hermes_workspace.domain.encodings.sibling_hint` lets the nearest such
        folder decide alone, so the hint is the one the whole list would give."""
        for folder in [file.path.parent, *file.path.parent.parents]:
            if folder != file.root and file.root not in folder.parents:
                break
            found = [(r.path, r.encoding) for r in self.store.file_records(under=folder)
                     if r.encoding and r.path not in undecided]
            if found:
                return found
        return []

    def _with_siblings_evidence(
        self, task: FileTask, outcome: FileOutcome, decided: list[tuple[Path, str]]
    ) -> FileOutcome:
        """The outcome of reading an ambiguous file again, in this process, with the encoding its
        siblings were read with (:func:`~hermes_workspace.domain.encodings.sibling_hint` over
        ``decided``), or ``outcome`` when they do not agree on one of its candidates. No
        ambiguous file is evidence for another, so the result does not depend on the order in
        which files were read."""
        hint = sibling_hint(task.file.path, task.file.root, outcome.ambiguous, decided)
        if hint is None:
            return outcome
        tools = self._tools()
        retried = process_file(tools, replace(task, hint=hint), chunking=self.config.chunking)
        if retried.status == "failed":
            return outcome
        log.info("read with the encoding of its siblings", path=str(task.file.path), encoding=hint,
                 candidates=list(outcome.ambiguous))
        return retried

    _fallbacks: list[tuple[Path, Problem]] = field(default_factory=list)
    """Files of this run chunked by ``fallback_chunker`` because their chunker failed."""

    _graves: dict[Path, Tombstone] | None = None
    """The tombstones read at the start of the keyword pass (files removed by ``delete``)."""

    _scopes: list[Path] | None = None
    """The paths a changed-paths run re-walked (what it prunes under); ``None`` for a whole run."""

    def _tools(self) -> FileTools:
        return FileTools(self.source, self.decoder, self.chunker, self.fallback_chunker, self.conversions)

    _signatures: dict[str, str] | None = None
    """Config signature per converter signature, computed once per run."""

    def _file_signature(self, path: Path, signature: Callable[[Path], str]) -> str:
        """The config signature of ``path``: its chunker's (``signature(path)``, the chunker of
        its route); for a converted document, the signature of the chunker its converted text
        goes to (:func:`~hermes_workspace.domain.conversion.converted_view`) combined with its
        converter's."""
        converter = self.conversions.converter_for(path) if self.conversions is not None else None
        if converter is None:
            return signature(path)
        if self._signatures is None:
            self._signatures = {}
        chunking, own = signature(converted_view(path)), converter.signature
        key = f"{chunking}\0{own}"
        combined = self._signatures.get(key)
        if combined is None:
            combined = self._signatures[key] = converted_signature(chunking, own)
        return combined

    def _plan(self, file: SourceFile, signature: Callable[[Path], str]) -> _Step:
        grave = (self._graves or {}).get(file.path)
        if grave is not None:
            # Deleted by the user: out while its bytes are the deleted ones (a changed stat is
            # checked by hashing, as for indexed files).
            if grave.size == file.size and grave.mtime_ns == file.mtime_ns:
                return _DELETED
            return FileTask(file, known_hash=grave.content_hash, tombstone=grave)
        try:
            existing = self.store.get_file(file.path)
        except StoreUnusableError:
            raise
        except Exception as exc:  # noqa: BLE001 - a store failure of this file, reported at its turn
            reraise_interrupt(exc)
            return _FileFailed("store", Problem.of(exc))
        unavailable = self.conversions.unavailable_for(file.path) if self.conversions is not None else None
        if unavailable is not None:
            keep = existing is not None and existing.same_stat(file.size, file.mtime_ns)
            return _Unavailable(existing is not None, unavailable, keep)
        signature = self._file_signature(file.path, signature)
        same_signature = existing is not None and existing.config_signature == signature
        if same_signature and existing.same_stat(file.size, file.mtime_ns):
            return _UNCHANGED
        return FileTask(file, indexed=existing is not None, known_hash=existing.content_hash if same_signature else None,
                        indexed_hash=existing.content_hash if existing is not None else None)

    def _outcomes(self, tasks: list[FileTask]) -> Iterator[FileOutcome]:
        """The outcome of every task, in order: from the pool when there are enough tasks, and
        from this process for the rest should the pool fail."""
        work = partial(process_file, chunking=self.config.chunking)
        done = 0
        if self._parallel(tasks):
            assert self.pool is not None and self.worker_tools is not None
            results = self.pool.map_ordered(work, self.worker_tools, tasks)
            try:
                while True:
                    if self.storage is not None and self.storage.reached:
                        break  # the rest in this process, where new files are then not read at all
                    try:
                        outcome = next(results)
                    except StopIteration:
                        return
                    except Exception as exc:  # the pool failed; KeyboardInterrupt goes through
                        reraise_interrupt(exc)
                        problem = Problem.of(exc)
                        log.warning("worker processes failed, indexing the rest in this process",
                                    error_type=problem.error_type, files_left=len(tasks) - done,
                                    exc_info=problem.exception)
                        break
                    done += 1
                    yield outcome
            finally:
                close = getattr(results, "close", None)
                if close is not None:
                    close()
        tools = self._tools()
        for task in islice(tasks, done, None):
            # Lazily, at the file's turn: once the budget is reached a new file could only be
            # refused, so reading and chunking it (every run, while the budget stays) is waste.
            new = not task.indexed and task.tombstone is None
            over = new and self.storage is not None and self.storage.reached
            yield FileOutcome("over_budget", size=task.file.size) if over else work(tools, task)

    def _parallel(self, tasks: list[FileTask]) -> bool:
        return (
            self.pool is not None
            and self.worker_tools is not None
            and len(tasks) >= self.parallel_min_files
            and sum(task.file.size for task in tasks) >= self.parallel_min_bytes
        )

    def _apply(
        self, task: FileTask, outcome: FileOutcome, signature: Callable[[Path], str], summary: IndexSummary,
        batch: BatchWriter,
    ) -> None:
        file = task.file
        if outcome.fallback is not None:
            log.warning("chunker failed, using the default chunker", path=str(file.path),
                        error_type=outcome.fallback.error_type, exc_info=outcome.fallback.exception)
            if outcome.status in ("chunked", "empty"):
                self._fallbacks.append((file.path, outcome.fallback))
        if task.tombstone is not None:
            if outcome.status == "unchanged":
                # Same bytes, new stat (touched, copied back): remember the stat so later runs
                # skip it without reading.
                grave = replace(task.tombstone, size=file.size, mtime_ns=file.mtime_ns)
                self._store(batch, lambda: self.store.add_tombstones([grave]))
                summary.add_skip("deleted_by_user")
                return
            if outcome.content_hash:  # read, and changed since the delete: it is back
                self._store(batch, lambda: self.store.remove_tombstones([file.path]))
        if outcome.status == "over_budget":
            assert self.storage is not None
            self.storage.refuse()
            summary.add_skip("budget", file.path)
            return
        same_bytes = task.indexed_hash is not None and outcome.content_hash == task.indexed_hash
        if outcome.status == "failed":
            assert outcome.stage is not None and outcome.problem is not None
            if outcome.changed and not same_bytes:
                self._forget(task, batch)
            elif same_bytes:
                # The bytes are those indexed: their chunks still match the file, and the next run
                # (its record keeps the old signature) tries again.
                summary.add_note(KEPT_NOTE)
            raise _FileFailed(outcome.stage, outcome.problem)
        if outcome.status == "converter_unavailable":
            assert outcome.problem is not None
            error = outcome.problem.exception
            if not isinstance(error, ConverterUnavailableError):
                error = ConverterUnavailableError(outcome.problem.message)
            self._skip_unavailable(file.path, task.indexed and not same_bytes, error, summary, batch,
                                   kept=same_bytes)
            return
        if outcome.status in ("binary_content", "empty"):
            self._forget(task, batch)
            summary.add_skip(outcome.status)
            return
        record = FileRecord(
            path=file.path,
            root=file.root,
            content_hash=outcome.content_hash,
            # Chunked by the fallback: stored under a signature no run computes, so that the next
            # run gives the file to its own chunker again (fixed, or still failing and reported).
            config_signature=self._file_signature(file.path, signature)
            + (FALLBACK_SIGNATURE_MARK if outcome.fallback is not None else ""),
            size=outcome.size,
            mtime_ns=file.mtime_ns,
            modified_at=utc_iso(file.mtime_ns),
            indexed_at=utc_iso(self.clock()),
            encoding=outcome.encoding,
        )
        if outcome.status == "unchanged":
            self._store(batch, lambda: self.store.touch_file(record))
            summary.add_skip("unchanged")
            return
        if self.storage is not None and not self.storage.admit(
            sum(len(chunk.content) for chunk in outcome.chunks), len(outcome.chunks)
        ):
            summary.add_skip("budget", file.path)  # an indexed version stays: the note says so
            return
        self._store(batch, lambda: self.store.replace_file(record, outcome.chunks))
        batch.stored(file.path, outcome.chunks)

    def _skip_unavailable(
        self, path: Path, indexed: bool, error: ConverterUnavailableError, summary: IndexSummary, batch: BatchWriter,
        *, kept: bool = False,
    ) -> None:
        """Skip a document whose converter cannot run: counted as ``converter_unavailable``, the
        error and its hint once in the summary's notes and the log; dropped from the index when
        ``indexed`` (a version that no longer matches the file); ``kept``: noted as kept."""
        if kept:
            summary.add_note(KEPT_NOTE)
        summary.add_skip("converter_unavailable", path)
        note = f"{path.suffix.lower()} files skipped: {error.message}. {error.hint}"
        if note not in summary.notes:
            summary.add_note(note)
            log.warning("converter unavailable, files skipped", suffix=path.suffix.lower(), error=error.message,
                        hint=error.hint)
        if indexed:
            self._store(batch, lambda: self.store.delete_files([path]))

    def _prune_conversions(self) -> None:
        """Drop the cached conversions that no indexed file uses any more."""
        if self.conversions is None or self.conversions.cache is None:
            return
        try:
            removed = self.conversions.prune_cache(self.store.file_records())
        except StoreUnusableError:
            raise
        except Exception as exc:  # noqa: BLE001 - a cache that cannot be pruned costs disk space only
            reraise_interrupt(exc)
            log.warning("cannot prune the conversion cache", error=str(exc))
            return
        if removed:
            log.info("conversion cache pruned", removed=removed)

    def _forget(self, task: FileTask, batch: BatchWriter) -> None:
        if task.indexed:
            self._store(batch, lambda: self.store.delete_files([task.file.path]))

    @staticmethod
    def _store(batch: BatchWriter, operation: Callable[[], object]) -> None:
        batch.begin()
        try:
            operation()
        except StoreUnusableError:
            raise  # the database, not this file: stop the run
        except Exception as exc:
            reraise_interrupt(exc)
            raise _FileFailed("store", Problem.of(exc)) from exc

    def _prune(self, seen: set[Path], unreadable: set[Path], summary: IndexSummary) -> None:
        """Delete the records (and forget the tombstones) of files not seen by this run: every
        indexed file for a whole run, those at or under the scopes for a changed-paths run;
        never under a path that could not be looked at."""
        if self._scopes is None:
            records: Iterable[FileRecord] = self.store.file_records()
        else:
            records = [r for scope in self._scopes for r in self.store.file_records(under=scope)]
        seen = seen - self._vanished
        stale = [
            record.path
            for record in records
            if record.path not in seen
            and record.path not in unreadable
            and not any(parent in unreadable for parent in record.path.parents)
        ]
        if stale:
            summary.files_pruned = self.store.delete_files(stale)
        # A deleted file that is gone from disk needs no tombstone: should it come back, it is a
        # new file.
        gone = [
            path
            for path in (self._graves or {})
            if path not in seen and path not in unreadable and not any(p in unreadable for p in path.parents)
        ]
        if gone:
            self.store.remove_tombstones(gone)


KEPT_NOTE = ("files whose bytes are unchanged but could not be converted or chunked again keep the version "
             "indexed before (their errors or skips say why); the next index run tries them again")
"""The summary's note when a failure left an indexed version in place instead of dropping it."""

FALLBACK_SIGNATURE_MARK = "+fallback"
"""Appended to the config signature of a file chunked by the fallback chunker (its own chunker
raised): no run computes that signature, so the next run tries the file's chunker again."""


def _fallback_note(fallbacks: list[tuple[Path, Problem]]) -> str:
    """The summary's note on the files whose chunker failed (seen by the user, not only logged)."""
    path, problem = fallbacks[0]
    files = "1 file was" if len(fallbacks) == 1 else f"{len(fallbacks)} files were"
    return (f"{files} chunked by the built-in text chunker because their chunker failed (first: {path}: "
            f"{problem.error_type}: {problem.message}); the next index run gives them to their chunker again, "
            "and the log has each traceback")


def _absolute_paths(paths: Collection[Path]) -> list[Path]:
    """The changed paths of a run, each normalised (``.``/``..`` folded), in order, once.

    Raises:
        UsageError: a path is relative (callers make them absolute against their own folder).
    """
    found: dict[Path, None] = {}
    for path in paths:
        text = os.fspath(path)
        if not os.path.isabs(text):
            raise UsageError(f"changed paths must be absolute, got {text!r:.200}",
                             hint="Give absolute paths (the CLI and the Python API take them from the current folder).")
        found[Path(os.path.normpath(text))] = None
    return list(found)


def _stopped(exc: StoreUnusableError, summary: IndexSummary, stage: str) -> StoreUnusableError:
    """The error ending a run that the database failure ``exc`` stopped in ``stage``
    (``keyword``: the walk, its writes and the prune; ``embedding``: the pass, whose own message
    already says how many chunks got vectors): ``exc``'s message and hint, plus what this run
    committed before it (also logged, as the ``index finished`` line would have been)."""
    log.error("index stopped: the index database failed", stage=stage, error=exc.message,
              **{k: v for k, v in summary.to_json().items() if k != "errors"})
    files = f"{summary.files_indexed} file{'' if summary.files_indexed == 1 else 's'}"
    if stage == "keyword":
        done = f"indexing stopped after {files} had been indexed in this run (they are kept)"
    else:
        done = f"the keyword index is up to date ({files} indexed in this run)"
    hint = f"{exc.hint} Then run `hermes-workspace index` again: what was indexed is kept, only the rest is done."
    return type(exc)(f"{exc.message}; {done}", hint=hint.strip())  # its class keeps its code (disk_space_low)


_MOVED_UNDER_THE_RUN: dict[tuple[str, str], SkipReason] = {
    ("discover", "FileNotFoundError"): "vanished",  # process_file's stage for a file gone at its read
    ("read", "FileChangedError"): "replaced",
}
"""Failures of a candidate's read (stage, :attr:`Problem.error_type`) that mean the file changed
between the walk and its read, rather than that it cannot be indexed."""


def _record_failure(summary: IndexSummary, path: Path, failed: _FileFailed) -> None:
    summary.add_error(FileFailure(str(path), failed.stage, failed.problem.error_type, failed.problem.message))
    log.warning("file failed", path=str(path), stage=failed.stage, error_type=failed.problem.error_type,
                exc_info=failed.problem.exception)


def _record_store_failure(summary: IndexSummary, path: Path, problem: Problem) -> None:
    _record_failure(summary, path, _FileFailed("store", problem))
