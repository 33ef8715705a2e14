"""Progress sinks the product itself uses (the Python API's ``progress=`` callback, and none):
:class:`~hermes_workspace.domain.ports.ProgressSink` adapters that are not test fakes. The Rich
bar of the CLI is :mod:`hermes_workspace.adapters.rich_progress`; the recording fake is in
:mod:`hermes_workspace.adapters.memory`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


class NullProgressSink:
    """A :class:`~hermes_workspace.domain.ports.ProgressSink` that ignores everything."""

    def start(self, total: int) -> None:
        pass

    def advance(self, position: int, total: int, path: Path) -> None:
        pass

    def finish(self) -> None:
        pass


class CallbackProgressSink:
    """Adapts ``callback(position, total, path)`` (the Python API's ``progress=``) to a sink."""

    def __init__(self, callback: Callable[[int, int, Path], object]) -> None:
        self.callback = callback

    def start(self, total: int) -> None:
        pass

    def advance(self, position: int, total: int, path: Path) -> None:
        self.callback(position, total, path)

    def finish(self) -> None:
        pass
