"""Groups the index run's store writes into transactions (:class:`BatchWriter`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from hermes_workspace.logs import get_logger
from hermes_workspace.application.file_processing import Problem
from hermes_workspace.domain.errors import StoreUnusableError, reraise_interrupt
from hermes_workspace.domain.model import Chunk, IndexSummary
from hermes_workspace.domain.ports import IndexStore

log = get_logger("hermes_workspace.index")

BATCH_MAX_FILES = 200
"""Files stored per transaction at most (each file stays all-or-nothing inside it)."""

BATCH_MAX_SECONDS = 0.5
"""A batch is committed once it has been open this long, so that a concurrent search sees
progress and a crash loses little."""

BATCH_MAX_CHARS = 32 * 1024 * 1024
"""...or once it holds this many characters of chunk text (the store may keep a batch's
full-text rows in memory until its commit)."""


class BatchWriter:
    """Groups the store's writes into transactions (``store.batch()``) of up to
    :data:`BATCH_MAX_FILES` files, :data:`BATCH_MAX_CHARS` characters or :data:`BATCH_MAX_SECONDS`.
    A stored file is counted in the summary once its batch is committed; if the commit fails,
    each file of the batch is reported as a store failure (none of them is in the index, so the
    next run redoes them), unless the database failed as a whole (:class:`StoreUnusableError`),
    which is raised. ``report_failure(path, problem)`` records such a store failure (the run
    loop's own reporting, so that the summary and the log say the same). :meth:`close` commits
    too when the run ends by an exception (Ctrl-C, or a database failure that left the
    transaction open): every write in the batch is whole.

    ``before_batch()`` is called before each transaction opens (before each write for a store
    without ``batch``), and may raise to stop the run with nothing of the next batch written
    (the free-disk check); ``after_commit()`` after each successful commit (the size budget
    measures the index again)."""

    def __init__(
        self, store: IndexStore, summary: IndexSummary, report_failure: Callable[[Path, Problem], None],
        *, before_batch: Callable[[], object] | None = None, after_commit: Callable[[], object] | None = None,
    ) -> None:
        self._factory: Callable[[], AbstractContextManager[None]] | None = getattr(store, "batch", None)
        self._summary = summary
        self._report_failure = report_failure
        self._open: AbstractContextManager[None] | None = None
        self._opened_at = 0.0
        self._files = 0
        self._chars = 0
        self._pending: list[tuple[Path, int]] = []
        self._before_batch = before_batch
        self._after_commit = after_commit

    def begin(self) -> None:
        """Before a write: open a batch unless one is open (if it cannot be opened, the write
        goes alone and reports its own error).

        Raises:
            whatever ``before_batch`` raises (nothing is opened or written then).
        """
        if self._open is not None:
            return
        if self._before_batch is not None:
            self._before_batch()
        if self._factory is None:
            return
        context = self._factory()
        try:
            context.__enter__()
        except Exception as exc:  # noqa: BLE001 - the write that follows fails with the same cause
            reraise_interrupt(exc)
            return
        self._open, self._opened_at, self._files, self._chars = context, time.monotonic(), 0, 0

    def stored(self, path: Path, chunks: Sequence[Chunk]) -> None:
        if self._open is None:
            self._count(len(chunks))
        else:
            self._pending.append((path, len(chunks)))
            self._chars += sum(len(chunk.content) for chunk in chunks)

    def file_done(self) -> None:
        if self._open is None:
            return
        self._files += 1
        if (
            self._files >= BATCH_MAX_FILES
            or self._chars >= BATCH_MAX_CHARS
            or time.monotonic() - self._opened_at >= BATCH_MAX_SECONDS
        ):
            self.close()

    def close(self, *, unwinding: bool = False) -> None:
        """Commit the open batch, if any.

        Raises:
            StoreUnusableError: the commit failed because the database did (nothing of the batch
                is stored); not when ``unwinding`` (another exception is on its way up and says
                why the run stops; this one is logged).
        """
        context, self._open = self._open, None
        pending, self._pending = self._pending, []
        if context is None:
            return
        try:
            context.__exit__(None, None, None)
        except StoreUnusableError as exc:
            if not unwinding:
                raise
            log.warning("could not commit the last batch while stopping", files=len(pending), error=exc.message)
            return
        except Exception as exc:  # noqa: BLE001 - each file of the batch is reported as a store failure
            reraise_interrupt(exc)
            problem = Problem.of(exc)
            for path, _ in pending:
                self._report_failure(path, problem)
            return
        for _, chunks in pending:
            self._count(chunks)
        if self._after_commit is not None and not unwinding:
            self._after_commit()

    def _count(self, chunks: int) -> None:
        self._summary.files_indexed += 1
        self._summary.chunks_created += chunks
