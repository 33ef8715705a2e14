"""Use case: give every indexed chunk a vector of the configured embedder (the dense half of hybrid
search). Runs after the keyword pass of ``index``, so keyword search is complete and usable while
vectors are computed, and an interrupted run keeps every batch it finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import structlog

from hermes_workspace.domain.errors import (
    ConsentRequiredError,
    EmbedderUnavailableError,
    WorkspaceError,
    reraise_interrupt,
)
from hermes_workspace.domain.ports import Embedder, ProgressSink, VectorIndex
from hermes_workspace.domain.semantic import COVERAGE_THRESHOLD, EmbeddingJob, EmbeddingReport, Vector

log = structlog.get_logger("hermes_workspace.embed")

PAGE_BATCHES = 4
"""Pending chunks fetched (and embedded in one call) per round, in embedder batches: large enough
for the embedder to group texts of similar length, small enough that progress moves and an
interrupted run loses little."""


@dataclass
class EmbedChunks:
    """Embeds the chunks that have no vector, ``batch_size * PAGE_BATCHES`` texts per embedder
    call (the embedder batches them by ``batch_size`` for the model).

    Identical chunk texts (same :func:`~hermes_workspace.domain.semantic.embedding_key`) are
    embedded once; chunks whose text the model does not read (coverage below
    :data:`~hermes_workspace.domain.semantic.COVERAGE_THRESHOLD`) are marked unreadable instead
    of filling the index with noise. ``open_vectors`` opens the vector index (it may raise
    :class:`EmbedderUnavailableError` when the extra is missing); it is closed afterwards when it
    has a ``close`` method.

    A failing embedder stops the pass (the report says why; what was stored stays); Ctrl-C
    propagates after the finished batches were stored.
    """

    embedder: Embedder
    open_vectors: Callable[[], VectorIndex]
    batch_size: int = 32
    on_batch: Callable[[int, int], object] | None = field(default=None, repr=False)

    def execute(self, progress: ProgressSink | None = None) -> EmbeddingReport:
        """Run the pass; returns the report. ``progress`` gets ``start(pending chunks)``, an
        ``advance`` per round (position = chunks done) and ``finish()``."""
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
            close = getattr(vectors, "close", None)
            if close is not None:
                close()
            report.seconds = time.perf_counter() - started
        log.info("embedding finished", **report.to_json())
        return report

    def _embed_all(
        self, vectors: VectorIndex, report: EmbeddingReport, progress: ProgressSink | None, total: int
    ) -> None:
        done = 0
        size = max(1, self.batch_size)
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
            # One call per round: the embedder sorts the texts by length and batches them itself,
            # so windows of similar length share a batch (less padding than 32 random texts).
            keys = list(by_key)
            if keys:
                embedded = self.embedder.embed_documents([by_key[k][0].text for k in keys])
                items = [(job, vector) for k, vector in zip(keys, embedded) for job in by_key[k]]
                vectors.add(items)
                report.embedded += len(keys)
                report.reused += len(items) - len(keys)
                done += len(items)
                if progress is not None:
                    progress.advance(min(done, total) or 1, max(total, done), Path(f"{done} of {total} chunks"))
                if self.on_batch is not None:
                    self.on_batch(done, total)
            if progress is not None and not readable:
                progress.advance(min(done, total) or 1, max(total, done), Path(f"{done} of {total} chunks"))


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
