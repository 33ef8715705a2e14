"""Contracts of ConfigRepository, IndexLock, WorkspaceLayout and ProgressSink: each fake and
each real adapter."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.adapters.filesystem_layout import FilesystemLayout
from hermes_workspace.adapters.memory import (
    CallbackProgressSink,
    InMemoryConfigRepository,
    InMemoryIndexLock,
    InMemoryLayout,
    NullProgressSink,
    RecordingProgressSink,
)
from hermes_workspace.adapters.rich_progress import RichProgressSink
from hermes_workspace.adapters.yaml_config import YamlConfigRepository
from hermes_workspace.domain.errors import IndexBusyError
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.ports import ConfigRepository, IndexLock, ProgressSink, WorkspaceLayout


@pytest.fixture(params=["memory", "yaml"])
def config_repository(request: pytest.FixtureRequest, tmp_path: Path) -> ConfigRepository:
    if request.param == "memory":
        return InMemoryConfigRepository()
    return YamlConfigRepository(tmp_path / "config.yaml")


def test_config_repository_contract(config_repository: ConfigRepository) -> None:
    assert isinstance(config_repository, ConfigRepository)
    assert config_repository.load().roots == ()
    roots = (Root(Path("/a"), recursive=True), Root(Path("/b")))
    config_repository.save_roots(roots)
    assert config_repository.load().roots == roots
    config_repository.save_roots(())
    assert config_repository.load().roots == ()


@pytest.fixture(params=["memory", "file"])
def lock_pair(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[IndexLock, IndexLock]:
    if request.param == "memory":
        lock = InMemoryIndexLock()
        return lock, lock
    path = tmp_path / "index.lock"
    return FileIndexLock(path), FileIndexLock(path)


def test_index_lock_contract(lock_pair: tuple[IndexLock, IndexLock]) -> None:
    first, second = lock_pair
    assert isinstance(first, IndexLock)
    with first.hold():
        with pytest.raises(IndexBusyError):
            with second.hold():
                pass
    with second.hold():
        pass
    with pytest.raises(RuntimeError):
        with first.hold():
            raise RuntimeError("boom")
    with second.hold():
        pass


@pytest.mark.parametrize("layout", [InMemoryLayout(), FilesystemLayout()], ids=["memory", "filesystem"])
def test_layout_contract(layout: WorkspaceLayout, tmp_path: Path) -> None:
    assert isinstance(layout, WorkspaceLayout)
    layout.ensure(tmp_path / "ws", create_folders=True)
    layout.ensure(tmp_path / "ws", create_folders=True)


@pytest.fixture(params=["recording", "null", "callback", "rich"])
def sink(request: pytest.FixtureRequest) -> ProgressSink:
    return {
        "recording": RecordingProgressSink,
        "null": NullProgressSink,
        "callback": lambda: CallbackProgressSink(lambda *a: None),
        "rich": lambda: RichProgressSink(Console(file=io.StringIO(), force_terminal=True)),
    }[request.param]()


def test_progress_sink_contract(sink: ProgressSink) -> None:
    assert isinstance(sink, ProgressSink)
    sink.start(2)
    sink.advance(1, 2, Path("/a"))
    sink.advance(2, 2, Path("/b"))
    sink.finish()
    sink.start(0)
    sink.finish()


def test_rich_progress_draws_only_on_a_terminal() -> None:
    out = io.StringIO()
    sink = RichProgressSink(Console(file=out, force_terminal=False))
    sink.start(3)
    sink.advance(1, 3, Path("/x/notes.md"))
    sink.finish()
    assert out.getvalue() == ""
    tty = io.StringIO()
    sink = RichProgressSink(Console(file=tty, force_terminal=True, width=120))
    sink.start(3)
    sink.advance(2, 3, Path("/x/notes.md"))
    sink.finish()
    assert "Indexing [2/3]" in tty.getvalue()
    assert "/x/notes.md" in tty.getvalue()


def test_callback_sink_passes_position_total_and_path() -> None:
    seen: list[tuple[int, int, Path]] = []
    sink = CallbackProgressSink(lambda *args: seen.append(args))
    sink.start(1)
    sink.advance(1, 1, Path("/a"))
    sink.finish()
    assert seen == [(1, 1, Path("/a"))]
