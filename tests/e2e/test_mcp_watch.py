"""``hermes-workspace mcp --watch`` (issue 12): the watch runs on a thread of the server; a file
written while the server runs becomes searchable through the ``search`` tool, searches answer
meanwhile, and the server still ends at the end of its input. Waits are hang guards only."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("watchfiles")

from mcp import Client, StdioServerParameters  # noqa: E402

from hermes_workspace import Workspace  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
HANG_GUARD_SECONDS = 90


def test_mcp_watch_keeps_the_index_fresh_while_serving(home: Path) -> None:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "old.md").write_text("# Old\n\nthe blue green rollout\n")
    with Workspace.open(home) as ws:
        ws.index()
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    parameters = StdioServerParameters(command=sys.executable, args=["-m", "hermes_workspace", "mcp", "--watch"],
                                       env=env)

    async def body() -> tuple[Any, list[Any]]:
        async with Client(parameters) as client:
            first = await client.call_tool("search", {"query": "rollout"})
            deadline = time.monotonic() + HANG_GUARD_SECONDS
            (docs / "new.md").write_text("# New\n\nthe canary release written while serving\n")
            hits: list[Any] = []
            while time.monotonic() < deadline:
                found = await client.call_tool("search", {"query": "canary"})
                hits = found.structured_content["hits"]
                if hits:
                    break
                await anyio.sleep(0.1)
            return first, hits

    first, hits = anyio.run(body)
    assert first.structured_content["hits"][0]["path"] == str(docs / "old.md")
    assert [hit["path"] for hit in hits] == [str(docs / "new.md")]


class _FakeWorkspace:
    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.closed = False

    def __enter__(self) -> _FakeWorkspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed = True

    def watch(self, *, stop: Any) -> str:
        if self.fail is not None:
            raise self.fail
        while not stop.is_set():
            time.sleep(0.01)
        return "summary"


def test_background_watch_stops_with_the_server_and_reports_a_fatal_error(capsys: pytest.CaptureFixture[str]
                                                                           ) -> None:
    from hermes_workspace.domain.errors import StoreUnusableError
    from hermes_workspace.entrypoints.mcp_server import BackgroundWatch

    workspace = _FakeWorkspace()
    watcher = BackgroundWatch(lambda: workspace)
    watcher.start()
    watcher.stop()
    assert (watcher.summary, watcher.error, workspace.closed) == ("summary", None, True)

    failing = BackgroundWatch(lambda: _FakeWorkspace(StoreUnusableError("database or disk is full")))
    failing.start()
    failing.stop()
    assert failing.error is not None and failing.error.code == "store_error"
    err = capsys.readouterr().err
    assert '"code": "store_error"' in err and "disk is full" in err
