"""``RichProgressSink``: the ``Indexing [3/12] <path>`` progress line on stderr (seed 000)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


class RichProgressSink:
    """A :class:`~hermes_workspace.domain.ports.ProgressSink` drawing a Rich progress bar.

    Draws only when ``console`` is a terminal (never in pipes, CI logs or JSON consumers' stderr
    captures), so it can stay on in JSON mode as the spec asks.
    """

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._progress: Progress | None = None
        self._task: int | None = None
        self._label = "Indexing"

    def stage(self, label: str) -> None:
        """Name the next ``start``..``finish`` run (``Indexing``, then ``Embedding``)."""
        self._label = label

    def start(self, total: int) -> None:
        if not self.console.is_terminal:
            return
        self._progress = Progress(
            TextColumn(self._label.replace("[", "\\[") + " [{task.fields[position]}/{task.total}]"),
            BarColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}", style="dim", markup=False),  # a path, shown as written
            console=self.console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task("", total=total, position=0)

    def advance(self, position: int, total: int, path: Path) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=position - 1, description=str(path), position=position)

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
