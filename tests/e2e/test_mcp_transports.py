"""``hermes-workspace mcp`` as a separate process: stdio (raw JSON-RPC lines, then the SDK's
stdio client) and streamable HTTP on 127.0.0.1 with its Host/Origin checks.

The waits below are hang guards (a broken server fails the test instead of blocking the
suite), never assertions on how long something took."""

from __future__ import annotations

import http.client
import json
from functools import partial
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from hermes_workspace import Workspace  # noqa: E402
from hermes_workspace.entrypoints.cli import main  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
HANG_GUARD_SECONDS = 120


def server_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HERMES_HOME"] = str(home)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture
def indexed_home(home: Path) -> Path:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "deploy.md").write_text("# Deploy\n\nThe rollback procedure uses blue green switching.\n")
    (docs / "other.md").write_text("# Other\n\nNothing to see here.\n")
    with Workspace.open(home) as ws:
        ws.index()
    return home


def kill_after(process: subprocess.Popen[Any], seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, process.kill)
    timer.daemon = True
    timer.start()
    return timer


def reap(process: subprocess.Popen[str], guard: Any) -> None:
    """End a test's server process for good: cancel its hang guard, kill it if it still runs,
    wait for it and close its pipes."""
    guard.cancel()
    if process.poll() is None:
        process.kill()
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def rpc_send(process: subprocess.Popen[str], message: dict[str, Any]) -> None:
    """Write one JSON-RPC message to a stdio server."""
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def rpc_answer(process: subprocess.Popen[str], request_id: int) -> dict[str, Any]:
    """The server's answer to ``request_id``; every stdout line before it must be a JSON-RPC message."""
    assert process.stdout is not None
    for line in process.stdout:
        message = json.loads(line)
        if message.get("id") == request_id:
            return message
    raise AssertionError("the server closed stdout without answering")


def rpc_initialize(process: subprocess.Popen[str]) -> dict[str, Any]:
    """``initialize`` as request 1; its result."""
    rpc_send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "test", "version": "1"}}})
    return rpc_answer(process, 1)["result"]


def test_stdio_initialize_list_search_then_exit_on_eof(indexed_home: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes_workspace", "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(indexed_home),
        text=True, encoding="utf-8",
    )
    guard = kill_after(process, HANG_GUARD_SECONDS)
    assert process.stdin is not None and process.stdout is not None

    send, answer = partial(rpc_send, process), partial(rpc_answer, process)

    try:
        init = rpc_initialize(process)
        assert init["serverInfo"]["name"] == "hermes-workspace"
        assert "untrusted" in init["instructions"]
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        names = [tool["name"] for tool in answer(2)["result"]["tools"]]
        assert names == ["search", "retrieve", "read", "more", "status", "list", "doctor", "project_history_search"]
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "search", "arguments": {"query": "rollback procedure"}}})
        result = answer(3)["result"]
        assert result["isError"] is False
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        hit = result["structuredContent"]["hits"][0]
        assert hit["path"] == str(indexed_home / "workspace" / "docs" / "deploy.md")
        assert (hit["line_start"], hit["line_end"]) == (1, 3)
        process.stdin.close()  # end of file: the server must end by itself
        assert process.wait() == 0
        assert process.stdout.read() == ""
    finally:
        reap(process, guard)


def test_stdio_with_the_sdk_client(indexed_home: Path) -> None:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "hermes_workspace", "mcp", "--allow-write"], env=server_env(indexed_home)
    )

    async def body() -> tuple[Any, Any, Any]:
        async with Client(parameters) as client:
            tools = await client.list_tools()
            found = await client.call_tool("search", {"query": "blue green"})
            indexed = await client.call_tool("index", {})
            return tools, found, indexed

    tools, found, indexed = anyio.run(body)
    assert {tool.name for tool in tools.tools} >= {"index", "delete"}
    assert found.structured_content["hits"][0]["path"].endswith("deploy.md")
    assert indexed.is_error is False and indexed.structured_content["files_indexed"] == 0


def test_http_on_a_non_loopback_host_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--http", "--host", "0.0.0.0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = json.loads(captured.err)["error"]
    assert error["code"] == "usage_error"
    assert "loopback address only" in error["message"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(indexed_home: Path) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes_workspace", "mcp", "--http", "--port", str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(indexed_home),
    )
    try:
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while True:
            assert process.poll() is None, process.communicate()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=HANG_GUARD_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_streamable_http_on_loopback_with_host_and_origin_checks(http_server: int) -> None:
    url = f"http://127.0.0.1:{http_server}/mcp"

    async def body() -> tuple[Any, Any]:
        async with Client(url) as client:
            return await client.list_tools(), await client.call_tool("search", {"query": "rollback"})

    tools, found = anyio.run(body)
    assert "index" not in {tool.name for tool in tools.tools}
    assert found.structured_content["hits"][0]["path"].endswith("deploy.md")

    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "t", "version": "1"}}})
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def post(extra: dict[str, str]) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", http_server, timeout=HANG_GUARD_SECONDS)
        try:
            connection.request("POST", "/mcp", body=initialize, headers={**headers, **extra})
            return connection.getresponse().status
        finally:
            connection.close()

    # A DNS-rebinding page reaches 127.0.0.1 under its own name: refused on the Host header.
    assert post({"Host": f"evil.example:{http_server}"}) == 421
    # A page of another origin calling the loopback address: refused on the Origin header.
    assert post({"Origin": "http://evil.example"}) == 403
    assert post({"Origin": f"http://localhost:{http_server}"}) == 200


def _default_sighup() -> None:
    # A server honours an ignored SIGHUP it inherits (`nohup make test`), as any program should;
    # the tests stand for a client that starts it with the default disposition.
    import signal

    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_stdio_server(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_workspace", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(home),
        text=True, encoding="utf-8", preexec_fn=_default_sighup,  # noqa: PLW1509 - a single-threaded test
    )


def finish(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@pytest.mark.parametrize(("signal_name", "exit_code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_stdio_server_ends_on_sigterm_with_stdin_still_open(indexed_home: Path, signal_name: str, exit_code: int) -> None:
    """The client keeps stdin open (as clients do while they stop a server): the signal alone
    ends the process, and stdout carries only JSON-RPC; the error goes to stderr."""
    import signal

    process = start_stdio_server(indexed_home, "mcp")
    guard = kill_after(process, HANG_GUARD_SECONDS)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                   "clientInfo": {"name": "test", "version": "1"}}}) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # serving: the handler is installed
        process.send_signal(getattr(signal, signal_name))
        # Before the fix the server waited for stdin to close: the hang guard killed it (-9).
        assert process.wait() == exit_code
        assert process.stdout.read() == ""
        error = json.loads(process.stderr.read().strip().splitlines()[-1])["error"]
        assert error["code"] == "terminated" and signal_name in error["message"]
    finally:
        guard.cancel()
        finish(process)


@pytest.mark.parametrize(
    ("setup", "args", "code", "exit_code"),
    [
        ("bad_yaml", ("mcp",), "config_invalid", 78),
        ("unknown_key", ("mcp",), "config_invalid", 78),
        ("home_is_a_file", ("mcp",), "config_invalid", 78),
        ("none", ("mcp", "--no-such-option"), "usage_error", 2),
        ("none", ("--log-level", "loud", "mcp"), "usage_error", 2),
        ("none", ("mcp", "--http", "--host", "0.0.0.0"), "usage_error", 2),
    ],
)
def test_mcp_startup_errors_go_to_stderr_never_stdout(
    tmp_path: Path, setup: str, args: tuple[str, ...], code: str, exit_code: int
) -> None:
    """stdout is the protocol channel: an error object there is a broken message to the client,
    which then reports only "connection closed". The error is one JSON line on stderr."""
    home = tmp_path / "home"
    home.mkdir()
    if setup == "bad_yaml":
        (home / "config.yaml").write_text("foo: [\n")
    elif setup == "unknown_key":
        (home / "config.yaml").write_text("knowledgebase:\n  no_such_key: 1\n")
    elif setup == "home_is_a_file":
        home.rmdir()
        home.write_text("not a folder\n")
    process = start_stdio_server(home, *args)
    guard = kill_after(process, HANG_GUARD_SECONDS)
    try:
        out, err = process.communicate("")
        assert process.returncode == exit_code
        assert out == ""
        assert json.loads(err.strip().splitlines()[-1])["error"]["code"] == code
    finally:
        guard.cancel()
        finish(process)


def test_other_commands_still_print_errors_on_stdout(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("foo: [\n")
    process = start_stdio_server(home, "status")
    guard = kill_after(process, HANG_GUARD_SECONDS)
    try:
        out, _ = process.communicate("")
        assert process.returncode == 78
        assert json.loads(out)["error"]["code"] == "config_invalid"
    finally:
        guard.cancel()
        finish(process)


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_http_on_a_port_in_use_is_a_usage_error_before_any_banner(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the banner, then uvicorn's own error and exit 3 (a code the README does not list)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["mcp", "--http", "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "MCP server on" not in captured.err
    error = json.loads(captured.err)["error"]
    assert (error["code"], error["message"]) == ("usage_error", f"port {port} on 127.0.0.1 is in use")
    assert "--port" in error["hint"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "9000"], "--port applies only with --http (the default transport is stdio)"),
        (["--host", "::1"], "--host applies only with --http (the default transport is stdio)"),
        (["--host", "::1", "--port", "1"], "--host and --port apply only with --http (the default transport is stdio)"),
    ],
)
def test_http_options_without_http_are_usage_errors(
    home: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """They used to be ignored silently: the server then ran on stdio."""
    assert main(["mcp", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert json.loads(captured.err)["error"] == {
        "code": "usage_error", "message": message,
        "hint": "Add --http to serve streamable HTTP, or leave them out for stdio.",
    }
