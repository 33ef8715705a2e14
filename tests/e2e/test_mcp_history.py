"""``project_history_search`` and ``project_history_consent`` over the MCP stdio transport:
``hermes-workspace mcp`` as a separate process (raw JSON-RPC lines), reading the host world of
:mod:`tests.history_world` while the test process keeps the host's connection open (WAL).

The waits are hang guards (a broken server fails the test instead of blocking the suite), never
assertions on time."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.e2e.test_mcp_transports import (  # noqa: E402
    HANG_GUARD_SECONDS,
    kill_after,
    reap,
    rpc_answer,
    rpc_initialize,
    rpc_send,
    server_env,
)
from tests.history_world import World, fingerprint, running_host  # noqa: E402

READ_ONLY = ["search", "retrieve", "read", "more", "status", "list", "doctor", "project_history_search"]
E1042 = "E1042 duplicate symbol"


@pytest.fixture
def world(home: Path, tmp_path: Path) -> Iterator[World]:
    with running_host(tmp_path / "world") as built:
        (home / "config.yaml").write_text(built.config(), encoding="utf-8")
        yield built


class Session:
    """A stdio MCP server process, initialized; :meth:`call` sends one request and returns its
    ``result``."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.next_id = 2

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        rpc_send(self.process, message)
        return rpc_answer(self.process, self.next_id)["result"]

    def tools(self) -> list[str]:
        return [tool["name"] for tool in self.request("tools/list")["tools"]]

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """``(isError, document)``; the text content and the structured content must agree."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        document = json.loads(result["content"][0]["text"])
        assert document == result["structuredContent"]
        return result["isError"], document


@contextmanager
def stdio_server(home: Path, cwd: Path, *flags: str) -> Iterator[Session]:
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes_workspace", "mcp", *flags],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(home), cwd=cwd,
        text=True, encoding="utf-8",
    )
    guard = kill_after(process, HANG_GUARD_SECONDS)
    try:
        rpc_initialize(process)
        rpc_send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield Session(process)
        assert process.stdin is not None
        process.stdin.close()  # end of file: the server ends by itself
        assert process.wait() == 0
    finally:
        reap(process, guard)


def ids(document: dict[str, Any]) -> list[tuple[str, int]]:
    return [(hit["session_id"], hit["message_id"]) for hit in document["results"]]


def test_project_history_search_over_stdio(home: Path, world: World) -> None:
    database_before = fingerprint(world.database)
    # The server starts in Beta's folder: that is the conversation's folder unless a call says otherwise.
    with stdio_server(home, world.beta) as server:
        assert server.tools() == READ_ONLY  # the consent tool writes: not listed on a read-only server

        error, alpha = server.call("project_history_search",
                                   {"query": E1042, "working_directory": str(world.alpha), "mode": "keyword"})
        assert error is False
        assert alpha["project"] == {"kind": "explicit", "id": "p_alpha", "name": "Alpha",
                                    "folders": [str(world.alpha)]}
        assert ids(alpha) == [("s_alpha_2", world.ids["alpha_e1042"]), ("s_alpha_2", world.ids["alpha_question"])]
        assert (alpha["mode"], alpha["semantic_status"], alpha["sessions_in_scope"]) == ("keyword", "disabled", 2)
        assert alpha["results"][0]["link"] == "@session:s_alpha_2"

        error, tool = server.call("project_history_search", {"query": E1042, "session_id": "s_tool_1"})
        assert error is False
        assert (tool["project"]["kind"], tool["project"]["id"]) == ("auto", world.tool_id)
        assert ids(tool) == [("s_tool_1", world.ids["tool_e1042"])]

        error, home_session = server.call("project_history_search", {"query": E1042, "session_id": "s_home_1"})
        assert error is False and home_session["results"] == []
        assert (home_session["project"]["kind"], home_session["project"]["reason"]) == ("home", "no_location")

        error, default = server.call("project_history_search", {"query": "canary rollout", "limit": 1})
        assert error is False and default["project"]["id"] == "p_beta"  # the server's working directory
        assert ids(default) == [("s_beta_1", world.ids["beta_question"])]

        error, refused = server.call("project_history_search", {"query": E1042, "working_directory": "src/alpha"})
        assert error is True
        assert refused["error"]["code"] == "usage_error"
        assert refused["error"]["message"].startswith("working_directory must be an absolute path, got 'src/alpha'")

        # The CLI refuses --session with --project; so do the tool and the Python API (the server's
        # working directory, passed with every call, is only the fallback).
        error, both = server.call("project_history_search",
                                  {"query": E1042, "session_id": "s_beta_1", "project": "p_alpha"})
        assert error is True
        assert (both["error"]["code"], both["error"]["message"]) == ("usage_error",
                                                                     "give session_id or project, not both")
        error, typo = server.call("project_history_search",
                                  {"query": E1042, "project": f"git:{world.base / 'nonexistent'}"})
        assert error is True and typo["error"]["code"] == "usage_error"
        assert "names no folder on this machine" in typo["error"]["message"]

        error, invalid = server.call("project_history_search", {"query": E1042, "limit": 0})
        assert error is True and invalid["error"]["code"] == "usage_error"
        assert invalid["error"]["message"].startswith("invalid arguments for project_history_search: limit:")

        error, write = server.call("project_history_consent", {"project": "p_alpha", "service": "https://e.example/v1"})
        assert error is True and write["error"]["code"] == "write_not_allowed"
    assert fingerprint(world.database) == database_before  # another process read it; nothing was written
    assert not (home / "history" / "consent.json").exists()


def test_the_consent_tool_is_served_only_with_allow_write(home: Path, world: World) -> None:
    service = "https://embed.example/v1"
    with stdio_server(home, world.alpha, "--allow-write") as server:
        assert server.tools() == [*READ_ONLY, "index", "delete", "project_history_consent"]
        error, granted = server.call("project_history_consent", {"project": "p_alpha", "service": service})
        assert (error, granted) == (False, {"service": service, "project": "p_alpha", "granted": True})
        error, no_service = server.call("project_history_consent", {"project": "p_alpha"})
        assert error is True and no_service["error"]["code"] == "usage_error"  # no remote embedder configured
    recorded = json.loads((home / "history" / "consent.json").read_text(encoding="utf-8"))["consents"]
    assert [(r["service"], r["project"]) for r in recorded] == [(service, "p_alpha")]
