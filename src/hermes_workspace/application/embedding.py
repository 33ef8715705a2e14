"""Use case: give every indexed chunk a vector of the configured embedder (the dense half of hybrid
search). Runs after the keyword pass of ``index``, so keyword search is complete and usable while
vectors are computed, and an interrupted run keeps every batch it finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_workspace.logs import get_logger
from hermes_workspace.domain.errors import (
    ConsentRequiredError,
    EmbedderUnavailableError,
    StoreUnusableError,
    WorkspaceError,
    reraise_interrupt,
)
from hermes_workspace.domain.ports import Embedder, ProgressSink, VectorIndex
from hermes_workspace.domain.semantic import COVERAGE_THRESHOLD, EmbeddingJob, EmbeddingReport, Vector

log = get_logger("hermes_workspace.embed")

PAGE_BATCHES = 4
"""Pending chunks fetched per round, in embedder batches (``batch_size * PAGE_BATCHES``): large
enough for the embedder to group texts (or windows) of similar length, so that a model batch pads
little, small enough that the ``pending`` query stays cheap."""

SAVE_EVERY_SECONDS = 1.0
"""Vectors computed are written (one transaction) once this long has passed since the last
write, at the end of every round, and before any exception (Ctrl-C, a failing embedder) leaves
the pass: an interrupt loses at most the model batch under way (the embedder call, for embedders
without ``embed_documents_progressively``), a killed process at most this much more. A
transaction per model batch would cost fast embedders (model2vec: thousands of texts a second)
more than the model does."""


def close_vectors(vectors: VectorIndex | None) -> None:
    """Close ``vectors`` when it was opened and has ``close`` (an optional member of the
    :class:`~hermes_workspace.domain.ports.VectorIndex` port: an in-memory index holds nothing)."""
    close = getattr(vectors, "close", None)
    if close is not None:
        close()


@dataclass
class EmbedChunks:
    """Embeds the chunks that have no vector. Each round takes ``batch_size * PAGE_BATCHES``
    pending chunks and hands their distinct texts to the embedder in one
    ``embed_documents_progressively`` call, whose vectors come out model batch by model batch
    (the embedder sorts the windows of the whole round by length: less padding); an embedder
    without that method gets the texts sorted by length, ``batch_size`` per ``embed_documents``
    call. The vectors are stored as they come (:data:`SAVE_EVERY_SECONDS`), so an interrupted
    pass keeps all but the model batch (or call) under way.

    Identical chunk texts (same :func:`~hermes_workspace.domain.semantic.embedding_key`) are
    embedded once; chunks whose text the model does not read (coverage below
    :data:`~hermes_workspace.domain.semantic.COVERAGE_THRESHOLD`) are marked unreadable instead
    of filling the index with noise. ``open_vectors`` opens the vector index (it may raise
    :class:`EmbedderUnavailableError` when the extra is missing); it is closed afterwards when it
    has a ``close`` method. ``on_batch(chunks done, total)`` is called after each write of
    vectors.

    A failing embedder stops the pass (the report says why; what was stored stays); Ctrl-C
    propagates after the vectors computed so far were stored. A failure of the index database
    as a whole (:class:`StoreUnusableError`: disk full, read-only, I/O error) propagates too:
    it is not the embedder's, and the ``index`` run must fail.
    """

    embedder: Embedder
    open_vectors: Callable[[], VectorIndex]
    batch_size: int = 32
    on_batch: Callable[[int, int], object] | None = field(default=None, repr=False)

    def execute(self, progress: ProgressSink | None = None) -> EmbeddingReport:
        """Run the pass; returns the report. ``progress`` gets ``start(pending chunks)``, an
        ``advance`` per model batch or embedder call (position = chunks done) and ``finish()``.

        Raises:
            StoreUnusableError: the index database failed as a whole; the vectors stored before
                stay, and the message says how many chunks got one in this pass.
            KeyboardInterrupt: after storing the vectors computed so far.
        """
        started = time.perf_counter()
        report = EmbeddingReport(status="indexing")
        vectors: VectorIndex | None = None
        try:
            vectors = self.open_vectors()
            report.signature = self.embedder.signature
            report.reembedded = vectors.prepare(report.signature, self.embedder.dimensions)
            total = vectors.status().pending
            if progress is not None:
                _stage(progress, "Embedding")
                progress.start(total)
            try:
                self._embed_all(vectors, report, progress, total)
            finally:
                if progress is not None:
                    progress.finish()
            report.vectors_pruned = vectors.prune()
            vectors.record_failure(None)
            status = vectors.status()
            report.pending = status.pending
            report.status = status.semantic_status()
        except StoreUnusableError as exc:
            report.seconds = time.perf_counter() - started
            report.error = exc.to_json()
            log.error("embedding stopped: the index database failed", **report.to_json())
            stored = report.embedded + report.reused + report.unreadable
            raise StoreUnusableError(
                f"{exc.message}; computing vectors stopped after {stored} chunks got theirs in this run "
                "(they are kept)",
                hint=exc.hint,
            ) from exc
        except ConsentRequiredError as exc:
            report.status = "consent_required"
            report.error = exc.to_json()
        except EmbedderUnavailableError as exc:
            report.status = "unavailable"
            report.error = exc.to_json()
            if vectors is not None:
                _remember(vectors, report.error)
                report.pending = _pending(vectors)
        except WorkspaceError as exc:
            reraise_interrupt(exc)
            report.status = "unavailable"
            report.error = exc.to_json()
        finally:
            close_vectors(vectors)
            report.seconds = time.perf_counter() - started
        log.info("embedding finished", **report.to_json())
        return report

    def _embed_all(
        self, vectors: VectorIndex, report: EmbeddingReport, progress: ProgressSink | None, total: int
    ) -> None:
        done = 0
        size = max(1, self.batch_size)
        saver = _Saver(vectors, report, lambda: self._saved(report, total))

        def advance() -> None:
            if progress is not None:
                progress.advance(min(done, total) or 1, max(total, done), Path(f"{done} of {total} chunks"))

        while True:
            jobs = vectors.pending(size * PAGE_BATCHES)
            if not jobs:
                return
            fresh = vectors.attach_known(jobs)
            report.reused += len(jobs) - len(fresh)
            done += len(jobs) - len(fresh)
            readable: list[EmbeddingJob] = []
            unreadable: list[tuple[EmbeddingJob, Vector | None]] = []
            for job in fresh:
                if self.embedder.coverage(job.text) < COVERAGE_THRESHOLD:
                    unreadable.append((job, None))
                else:
                    readable.append(job)
            if unreadable:
                vectors.add(unreadable)
                report.unreadable += len(unreadable)
                done += len(unreadable)
            # One model call per distinct text; duplicates within the round reuse its vector.
            by_key: dict[str, list[EmbeddingJob]] = {}
            for job in readable:
                by_key.setdefault(job.key, []).append(job)
            if not by_key:
                advance()
                continue
            keys = list(by_key)
            try:
                for finished in self._vectors_of([by_key[k][0].text for k in keys], size):
                    saver.keep([(job, vector) for i, vector in finished for job in by_key[keys[i]]], len(finished))
                    done += sum(len(by_key[keys[i]]) for i, _ in finished)
                    advance()
                    if saver.due():
                        saver.save()
            except BaseException:
                saver.save(unwinding=True)
                raise
            # Before the next `pending`, which would return the chunks whose vectors wait here.
            saver.save()

    def _saved(self, report: EmbeddingReport, total: int) -> None:
        if self.on_batch is not None:
            self.on_batch(report.embedded + report.reused + report.unreadable, total)

    def _vectors_of(self, texts: list[str], size: int) -> Iterator[list[tuple[int, Vector]]]:
        """``(index in texts, vector)`` pairs as the embedder finishes them: model batch by model
        batch from ``embed_documents_progressively`` when the embedder has it (see
        :class:`~hermes_workspace.domain.ports.Embedder`), else ``size`` texts per
        ``embed_documents`` call, taken by length so that a call's texts are alike."""
        progressively = getattr(self.embedder, "embed_documents_progressively", None)
        if callable(progressively):
            yield from progressively(texts)
            return
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), size):
            call = order[start : start + size]
            yield list(zip(call, self.embedder.embed_documents([texts[i] for i in call]), strict=True))


class _Saver:
    """Vectors computed but not yet stored, written by :meth:`save` in one transaction
    (``VectorIndex.add``), and counted in the report only then: the report never claims a
    vector the index does not hold."""

    def __init__(self, vectors: VectorIndex, report: EmbeddingReport, on_save: Callable[[], object]) -> None:
        self._vectors = vectors
        self._report = report
        self._on_save = on_save
        self._items: list[tuple[EmbeddingJob, Vector | None]] = []
        self._distinct = 0
        self._saved_at = time.monotonic()

    def keep(self, items: Sequence[tuple[EmbeddingJob, Vector | None]], distinct: int) -> None:
        """Hold ``items`` (job, vector) for the next save; ``distinct`` of them are new vectors."""
        self._items.extend(items)
        self._distinct += distinct

    def due(self) -> bool:
        """:data:`SAVE_EVERY_SECONDS` have passed since the last save."""
        return time.monotonic() - self._saved_at >= SAVE_EVERY_SECONDS

    def save(self, *, unwinding: bool = False) -> None:
        """Store what is held (nothing is held afterwards, even if the write fails).

        Raises:
            StoreError: the write failed; not when ``unwinding`` (another exception is leaving
                the pass and says why; this one is logged).
        """
        items, distinct = self._items, self._distinct
        self._items, self._distinct = [], 0
        self._saved_at = time.monotonic()
        if not items:
            return
        try:
            self._vectors.add(items)
        except WorkspaceError as exc:
            if not unwinding:
                raise
            log.warning("could not store the last vectors while stopping", chunks=len(items), error=exc.message)
            return
        self._report.embedded += distinct
        self._report.reused += len(items) - distinct
        self._on_save()


def _stage(progress: ProgressSink, label: str) -> None:
    # Optional on sinks (see ProgressSink): older implementations simply do not label stages.
    stage = getattr(progress, "stage", None)
    if callable(stage):
        stage(label)


def _remember(vectors: VectorIndex, error: dict[str, Any]) -> None:
    # So that `status` and searches say why there are no vectors, not just "run index" again.
    try:
        vectors.record_failure(error)
    except WorkspaceError:
        pass


def _pending(vectors: VectorIndex) -> int:
    try:
        return vectors.status().pending
    except WorkspaceError:
        return 0
