"""The MCP server in-process, driven by the SDK's own client (``mcp.Client``), in both the
handshake era (``mode="legacy"``: initialize, JSON-RPC over memory streams) and the direct
in-process dispatch (``mode="auto"``).

The tool table, argument checks and error mapping are tested against :class:`StubWorkspace`
(the Workspace signatures, recording calls); every read-only tool also runs on a real workspace
in an agent session (search, retrieve, read, edit, read again, more, list, doctor)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from hermes_workspace import Workspace  # noqa: E402
from hermes_workspace.domain.errors import HandleExpiredError, IndexBusyError  # noqa: E402
from hermes_workspace.entrypoints.mcp_server import (  # noqa: E402
    TOOLS,
    WorkspacePool,
    build_server,
    check_loopback,
    mcp_hint,
    open_pool,
    run_in_daemon_thread,
)
from tests.scopes import complete_scope  # noqa: E402

READ_ONLY = ["search", "retrieve", "read", "more", "status", "list", "doctor", "project_history_search"]
MODES = ["legacy", "auto"]


class Result:
    """A Workspace result as the contract shapes it: ``to_json()``."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def to_json(self) -> Any:
        return self.data


class Pack(Result):
    """A RetrievePack stand-in: ``serialize()`` is the budgeted text, with its own spacing so
    that a server that re-encoded ``to_json()`` instead of sending it verbatim would differ."""

    def serialize(self) -> str:
        return json.dumps(self.data, ensure_ascii=False, separators=(", ", ": "))


class StubWorkspace:
    """The Workspace methods of the issue 10 contract, recording each call as
    ``(method, args, kwargs)`` in ``calls`` and returning ``{"method": name, ...}``."""

    def __init__(self, calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
        self.calls = calls
        self.closed = False

    def _record(self, name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append((name, args, kwargs))
        return {"method": name}

    def search(self, query: str, *, path: Any = None, glob: Any = None, limit: Any = None, mode: Any = None,
               offset: int = 0) -> Result:
        data = self._record("search", query, path=path, glob=glob, limit=limit, mode=mode, offset=offset)
        if query == "surrogate":
            data["hits"] = [{"path": "/w/caf\udce9.md", "line_start": 1, "line_end": 2, "handle": "0123abcd:1"}]
        if query == "explode":
            raise RuntimeError("stub bug")
        return Result(data)

    def retrieve(self, query: str, *, budget: Any = None, path: Any = None, glob: Any = None, mode: Any = None,
                 max_chunks: Any = None) -> Pack:
        data = self._record("retrieve", query, budget=budget, path=path, glob=glob, mode=mode, max_chunks=max_chunks)
        data["blocks"] = [{"source": "docs/a.md", "text": "[Source: docs/a.md] ünïcode"}]
        return Pack(data)

    def read(self, target: str, *, budget: Any = None) -> Result:
        if target == "deadbeef:9":
            raise HandleExpiredError("result set deadbeef expired")
        return Result(self._record("read", target, budget=budget))

    def more(self, cursor: str) -> Result:
        return Result(self._record("more", cursor))

    def list_files(self, path: Any = None, *, recursive: bool = True, limit: int = 100, offset: int = 0) -> Result:
        return Result(self._record("list_files", path, recursive=recursive, limit=limit, offset=offset))

    def delete(self, path: str) -> Result:
        return Result(self._record("delete", path))

    def doctor(self) -> Result:
        return Result(self._record("doctor"))

    def status_report(self) -> Result:
        return Result(self._record("status_report"))

    def index(self, *, progress: Any = None, workers: Any = None) -> Result:
        if self.calls and self.calls[-1][0] == "busy":
            raise IndexBusyError("another index run holds the lock")
        return Result(self._record("index"))

    def close(self) -> None:
        self.closed = True


def stub_pool() -> tuple[WorkspacePool, list[tuple[str, tuple[Any, ...], dict[str, Any]]]]:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    return WorkspacePool(lambda: StubWorkspace(calls)), calls


def run_client(server: Any, mode: str, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(server, mode=mode) as client:
            return await body(client)

    return anyio.run(main)


def call(server: Any, mode: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return run_client(server, mode, lambda client: client.call_tool(name, arguments or {}))


def document(result: Any) -> Any:
    """The one text content of a result, parsed; asserts it is the structured content too."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


@pytest.mark.parametrize("mode", MODES)
def test_read_only_server_lists_seven_annotated_tools(mode: str) -> None:
    pool, _ = stub_pool()
    listed = run_client(build_server(pool), mode, lambda client: client.list_tools())
    assert [tool.name for tool in listed.tools] == READ_ONLY
    for tool in listed.tools:
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.input_schema["additionalProperties"] is False


def test_write_tools_are_listed_and_destructive_only_with_allow_write() -> None:
    pool, _ = stub_pool()
    listed = run_client(build_server(pool, allow_write=True), "legacy", lambda client: client.list_tools())
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == [*READ_ONLY, "index", "delete", "project_history_consent"]
    for name in ("index", "delete", "project_history_consent"):
        assert tools[name].annotations.read_only_hint is False
        assert tools[name].annotations.destructive_hint is True
    assert tools["delete"].input_schema["required"] == ["path"]


def test_descriptions_tell_agents_when_to_use_which_tool() -> None:
    text = {spec.name: spec.description for spec in TOOLS}
    assert "SET:ORDINAL" in text["search"] and "SET@OFFSET" in text["search"]
    assert "`retrieve`" in text["search"] and "`read`" in text["search"]
    assert "`search`" in text["retrieve"] and "budget" in text["retrieve"]
    for name in ("search", "retrieve", "read", "more"):
        assert "untrusted" in text[name], name
    for status in ("verified", "moved", "stale", "deleted"):
        assert f"`{status}`" in text["read"]


CALLS = [
    ("search", {"query": "deploy steps", "glob": "*.md", "limit": 5, "offset": 5},
     ("search", ("deploy steps",), {"path": None, "glob": "*.md", "limit": 5, "mode": None, "offset": 5})),
    ("retrieve", {"query": "how to deploy", "budget": 600, "max_chunks": 3, "mode": "keyword"},
     ("retrieve", ("how to deploy",), {"budget": 600, "path": None, "glob": None, "mode": "keyword", "max_chunks": 3})),
    ("read", {"target": "5e0c17aa:3"}, ("read", ("5e0c17aa:3",), {"budget": None})),
    ("read", {"target": "/w/docs/a.md:3-9", "budget": 900}, ("read", ("/w/docs/a.md:3-9",), {"budget": 900})),
    ("more", {"cursor": "5e0c17aa@20"}, ("more", ("5e0c17aa@20",), {})),
    ("status", {}, ("status_report", (), {})),
    ("list", {"path": "/w/docs", "recursive": False, "limit": 10, "offset": 20},
     ("list_files", ("/w/docs",), {"recursive": False, "limit": 10, "offset": 20})),
    ("list", {}, ("list_files", (None,), {"recursive": True, "limit": 100, "offset": 0})),
    ("doctor", {}, ("doctor", (), {})),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tool", "arguments", "expected"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_each_tool_calls_its_workspace_method(mode: str, tool: str, arguments: dict[str, Any], expected: Any) -> None:
    pool, calls = stub_pool()
    result = call(build_server(pool), mode, tool, arguments)
    assert result.is_error is False
    assert calls == [expected]
    assert document(result)["method"] == expected[0]


def test_retrieve_text_is_exactly_the_serialized_pack() -> None:
    pool, _ = stub_pool()
    result = call(build_server(pool), "legacy", "retrieve", {"query": "how to deploy", "budget": 600})
    serialized = StubWorkspace([]).retrieve("how to deploy", budget=600).serialize()
    assert result.content[0].text == serialized
    assert result.structured_content == json.loads(serialized)


def test_search_text_is_compact_json_of_the_structured_content() -> None:
    pool, _ = stub_pool()
    result = call(build_server(pool), "legacy", "search", {"query": "deploy"})
    data = document(result)
    assert result.content[0].text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("mode", MODES)
def test_workspace_error_becomes_a_tool_error_with_code_message_hint(mode: str) -> None:
    pool, _ = stub_pool()
    result = call(build_server(pool), mode, "read", {"target": "deadbeef:9"})
    assert result.is_error is True
    assert document(result) == {
        "error": {"code": "handle_expired", "message": "result set deadbeef expired", "hint": HandleExpiredError.default_hint}
    }


def test_unexpected_exception_is_an_internal_error_without_traceback() -> None:
    pool, _ = stub_pool()
    result = call(build_server(pool, log_file=Path("/logs/workspace.log")), "legacy", "search", {"query": "explode"})
    assert result.is_error is True
    error = document(result)["error"]
    assert error["code"] == "internal_error"
    assert error["message"] == "unexpected RuntimeError: stub bug"
    assert "/logs/workspace.log" in error["hint"]
    assert "Traceback" not in result.content[0].text


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "'query' is a required property"),
        ({"query": "x", "limit": 0}, "limit: 0 is less than the minimum of 1"),
        ({"query": "x", "limit": "5"}, "limit: '5' is not of type 'integer'"),
        ({"query": "x", "mode": "fuzzy"}, "mode: 'fuzzy' is not one of"),
        ({"query": "x", "colour": "red"}, "Additional properties are not allowed ('colour' was unexpected)"),
        ({"query": ""}, "query: '' should be non-empty"),
    ],
)
def test_invalid_arguments_are_usage_errors_and_reach_no_workspace(arguments: dict[str, Any], fragment: str) -> None:
    pool, calls = stub_pool()
    result = call(build_server(pool), "legacy", "search", arguments)
    error = document(result)["error"]
    assert result.is_error is True and error["code"] == "usage_error"
    assert fragment in error["message"]
    assert calls == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["index", "delete", "project_history_consent"])
def test_write_tools_are_refused_without_allow_write(tool: str, mode: str) -> None:
    pool, calls = stub_pool()
    arguments = {"path": "/w/a.md"} if tool == "delete" else {"project": "p_1"} if tool == "project_history_consent" else {}
    result = call(build_server(pool), mode, tool, arguments)
    assert result.is_error is True
    error = document(result)["error"]
    assert error["code"] == "write_not_allowed"
    assert error["hint"] == ("This server is read-only: the user can restart it with --allow-write to allow index, "
                             "delete and project_history_consent.")  # once, not prefixed as something to run from a shell
    assert calls == []


def test_write_tools_run_with_allow_write() -> None:
    pool, calls = stub_pool()
    server = build_server(pool, allow_write=True)
    assert document(call(server, "legacy", "delete", {"path": "/w/a.md"})) == {"method": "delete"}
    assert document(call(server, "legacy", "index")) == {"method": "index"}
    assert [c[0] for c in calls] == ["delete", "index"]


def test_unknown_tool_names_the_tools() -> None:
    pool, _ = stub_pool()
    result = call(build_server(pool), "legacy", "grep", {})
    error = document(result)["error"]
    assert error["code"] == "unknown_tool"
    assert error["hint"] == "The tools of this server: " + ", ".join(READ_ONLY) + "."


def test_a_file_name_that_is_not_utf8_does_not_break_the_response() -> None:
    pool, _ = stub_pool()
    result = call(build_server(pool), "legacy", "search", {"query": "surrogate"})
    assert result.is_error is False
    assert '"/w/caf\\udce9.md"' in result.content[0].text  # lossless, as the CLI prints it
    assert result.structured_content["hits"][0]["path"] == "/w/caf\\xe9.md"
    assert result.structured_content["hits"][0]["handle"] == "0123abcd:1"


def test_pool_reuses_workspaces_and_reopens_when_the_stamp_changes() -> None:
    opened: list[StubWorkspace] = []
    stamp = ["a"]

    def opener() -> StubWorkspace:
        opened.append(StubWorkspace([]))
        return opened[-1]

    pool = WorkspacePool(opener, lambda: stamp[0])
    with pool.lease() as first:
        pass
    with pool.lease() as again:
        assert again is first
    stamp[0] = "b"  # config.yaml edited
    with pool.lease() as fresh:
        assert fresh is not first
    assert first.closed is True and fresh.closed is False
    with pytest.raises(RuntimeError), pool.lease() as broken:
        raise RuntimeError("bug")
    assert broken.closed is True  # never handed out again
    pool.close()
    assert all(w.closed for w in opened)


def test_pool_gives_concurrent_leases_distinct_workspaces() -> None:
    pool, _ = stub_pool()
    inside = threading.Barrier(4)
    seen: list[int] = []

    def worker() -> None:
        with pool.lease() as workspace:
            seen.append(id(workspace))
            inside.wait()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 4 and pool.opened == 4


@pytest.mark.parametrize(
    ("host", "accepted"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("example.com", False)],
)
def test_only_loopback_hosts_are_accepted(host: str, accepted: bool) -> None:
    from hermes_workspace.domain.errors import UsageError

    if accepted:
        assert check_loopback(host) == host.strip("[]")
    else:
        with pytest.raises(UsageError, match="loopback address only"):
            check_loopback(host)


# --- a real workspace -------------------------------------------------------------------------


def make_notes(home: Path, count: int = 12) -> Path:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    for i in range(count):
        (docs / f"note{i:02d}.md").write_text(f"# Note {i}\n\nzebra{i} crossing details\n\n## Deploy\n\nrollout {i}\n")
    return docs


def test_search_and_status_on_a_real_workspace(home: Path) -> None:
    docs = make_notes(home)
    with Workspace.open(home) as ws:
        ws.index()
        direct = ws.search("zebra3 crossing")
        index_path = ws.index_path
    pool, _ = open_pool(home)
    server = build_server(pool)

    async def body(client: Client) -> tuple[Any, Any]:
        return await client.call_tool("search", {"query": "zebra3 crossing"}), await client.call_tool("status", {})

    found, status = run_client(server, "legacy", body)
    pool.close()
    hits = document(found)["hits"]
    assert hits[0]["path"] == str(docs / "note03.md")
    assert (hits[0]["line_start"], hits[0]["line_end"]) == (direct[0].line_start, direct[0].line_end)
    assert [h["path"] for h in hits] == [str(h.path) for h in direct]
    report = document(status)
    assert report["files"] == 12
    assert report["index_path"] == str(index_path) and report["semantic"]["status"] == "disabled"


def test_search_before_any_index_is_a_clean_error(home: Path) -> None:
    pool, _ = open_pool(home)
    result = call(build_server(pool), "legacy", "search", {"query": "anything"})
    pool.close()
    assert result.is_error is True
    error = document(result)["error"]
    assert error["code"] == "index_missing"
    # An agent cannot run the CLI: the hint says whom to ask, and which tool can do it.
    assert error["hint"] == (
        "The workspace has not been indexed yet: ask the user to run `hermes-workspace index`, or call the "
        "`index` tool if this server allows writes."
    )


def test_eight_clients_fifty_calls_each_while_index_runs(home: Path) -> None:
    docs = make_notes(home, count=40)
    with Workspace.open(home) as ws:
        ws.index()
    pool, _ = open_pool(home)
    server = build_server(pool, allow_write=True)
    failures: list[str] = []
    index_runs = [0]
    clients_done = anyio.Event()

    async def reader(number: int) -> None:
        async with Client(server, mode=MODES[number % 2]) as client:
            for i in range(50):
                target = (number * 50 + i) % 40
                if i % 5 == 4:
                    result = await client.call_tool("status", {})
                    if result.is_error or document(result)["files"] < 40:
                        failures.append(result.content[0].text)
                    continue
                result = await client.call_tool("search", {"query": f"zebra{target} crossing", "limit": 3})
                hits = [] if result.is_error else document(result)["hits"]
                if result.is_error or not hits or hits[0]["path"] != str(docs / f"note{target:02d}.md"):
                    failures.append(result.content[0].text[:300])

    async def indexer() -> None:
        async with Client(server, mode="legacy") as client:
            while not clients_done.is_set():
                # Touch a few files so that every run rewrites them (and their chunks).
                for j in range(0, 40, 4):
                    path = docs / f"note{j:02d}.md"
                    path.write_text(path.read_text() + f"\nedit {index_runs[0]}\n")
                result = await client.call_tool("index", {})
                if result.is_error:
                    failures.append("index: " + result.content[0].text)
                    return
                index_runs[0] += 1

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(indexer)
            async with anyio.create_task_group() as readers:
                for n in range(8):
                    readers.start_soon(reader, n)
            clients_done.set()

    anyio.run(main)
    pool.close()
    assert failures == []
    assert index_runs[0] >= 1


def test_an_agent_session_on_a_real_workspace(home: Path) -> None:
    """search -> retrieve within a budget -> read a handle -> the file is edited above the
    chunk -> read again (moved) -> more -> list -> doctor, through the SDK client, every result
    checked against the file and the real o200k_base counter."""
    from hermes_workspace.adapters.tiktoken_counter import TiktokenCounter

    docs = make_notes(home, count=30)
    runbook = docs / "runbook.md"
    runbook.write_text("# Runbook\n\nintro\n\n## Rollback\n\nTo roll back a release, run the rollback job.\n")
    with Workspace.open(home) as ws:
        ws.index()
    pool, _ = open_pool(home)
    server = build_server(pool)
    counter = TiktokenCounter()

    async def body(client: Client) -> dict[str, Any]:
        found = document(await client.call_tool("search", {"query": "roll back a release", "limit": 3}))
        packed = await client.call_tool("retrieve", {"query": "rollout", "budget": 400})
        handle = found["hits"][0]["handle"]
        verified = document(await client.call_tool("read", {"target": handle}))
        runbook.write_text("<!-- owner: ops -->\n\n" + runbook.read_text())
        moved = document(await client.call_tool("read", {"target": handle}))
        following = document(await client.call_tool("more", {"cursor": document(packed)["cursor"]}))
        listed = document(await client.call_tool("list", {"path": str(docs), "limit": 5}))
        doctor = document(await client.call_tool("doctor", {}))
        return {"found": found, "packed": packed, "verified": verified, "moved": moved, "more": following,
                "list": listed, "doctor": doctor}

    out = run_client(server, "legacy", body)
    pool.close()
    top = out["found"]["hits"][0]
    assert (top["path"], top["line_start"], top["line_end"], top["stale"]) == (str(runbook), 1, 7, False)
    text = out["packed"].content[0].text
    assert counter.count(text) <= 400
    for separators in ((",", ":"), (", ", ": ")):  # a client may re-serialize the structured content either way
        assert counter.count(json.dumps(out["packed"].structured_content, ensure_ascii=False,
                                        separators=separators)) <= 400
    assert json.loads(text)["tokens"] == counter.count(text)
    assert out["verified"]["status"] == "verified" and out["verified"]["text"].startswith("# Runbook")
    assert (out["moved"]["status"], out["moved"]["line_start"], out["moved"]["line_end"]) == ("moved", 3, 9)
    assert out["moved"]["moved_from"] == {"line_start": 1, "line_end": 7}
    assert str(out["more"]["offset"]) == json.loads(text)["cursor"].split("@")[1] and out["more"]["blocks"]
    assert (out["list"]["total"], len(out["list"]["files"])) == (31, 5)
    assert {c["name"]: c["status"] for c in out["doctor"]["checks"]}["tokenizer"] == "passed"


def test_a_call_blocked_in_its_thread_does_not_hold_up_cancellation() -> None:
    """SIGTERM cancels the server's tasks; a tool call blocked in its thread (a long ``index``)
    must let that cancellation through at once (before: anyio.to_thread waited for the thread,
    and Python waits for such threads at exit), while its concurrency slot stays taken until the
    thread really ends. The thread is a daemon: it cannot keep the process alive."""
    started, release = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []

    def blocked() -> str:
        threads.append(threading.current_thread())
        started.set()
        release.wait()
        return "done"

    async def main() -> tuple[bool, int, int]:
        limiter = anyio.CapacityLimiter(2)
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                async def cancel_when_started() -> None:
                    await anyio.to_thread.run_sync(started.wait)
                    scope.cancel()

                group.start_soon(cancel_when_started)
                await run_in_daemon_thread(blocked, limiter=limiter)
        held_after_cancel = int(limiter.borrowed_tokens)
        release.set()
        while limiter.borrowed_tokens:  # the thread hands its slot back through the event loop
            await anyio.sleep(0.01)
        return scope.cancelled_caught, held_after_cancel, int(limiter.borrowed_tokens)

    cancelled, held, left = anyio.run(main)
    assert (cancelled, held, left) == (True, 1, 0)
    assert threads[0].daemon is True


def test_a_call_in_a_daemon_thread_returns_its_value_or_raises_its_error() -> None:
    def fail() -> None:
        raise HandleExpiredError("gone")

    async def main() -> Any:
        value = await run_in_daemon_thread(lambda a, b: a + b, 2, 3)
        with pytest.raises(HandleExpiredError):
            await run_in_daemon_thread(fail)
        return value

    assert anyio.run(main) == 5


def test_delete_says_it_removes_every_indexed_file_under_a_folder() -> None:
    """The trial's complaint: described as removing "one file", it removes a whole folder's files."""
    delete = {spec.name: spec for spec in TOOLS}["delete"]
    assert "one file" not in delete.description and "one file" not in delete.title
    assert "EVERY indexed file under it" in delete.description
    assert "never from disk" in delete.description
    assert "until their content changes or their root is added again" in delete.description
    path = delete.input_schema["properties"]["path"]["description"]
    assert "every indexed file under a folder is removed" in path and path.startswith("The absolute path")


def test_delete_of_a_folder_removes_its_files_as_described(home: Path) -> None:
    docs = make_notes(home, count=3)
    (home / "workspace" / "keep.md").write_text("# Keep\n\nkept note\n")
    with Workspace.open(home) as ws:
        ws.index()
    pool, _ = open_pool(home)
    server = build_server(pool, allow_write=True)
    removed = call(server, "legacy", "delete", {"path": str(docs)})
    listed = document(call(server, "legacy", "list", {}))
    pool.close()
    assert removed.is_error is False
    assert [Path(f["path"]).name for f in listed["files"]] == ["keep.md"]


RELATIVE = [
    ("search", {"query": "x", "path": "src/flask"}),
    ("retrieve", {"query": "x", "path": "docs"}),
    ("list", {"path": "relative"}),
    ("list", {"path": "./"}),
    ("delete", {"path": "notes/a.md"}),
    ("read", {"target": "src/app.py:3"}),
    ("read", {"target": "README.md:1-2"}),
    ("read", {"target": "../x.py:4"}),
    ("read", {"target": "~/notes/a.md:1"}),
]


@pytest.mark.parametrize(("tool", "arguments"), RELATIVE)
def test_relative_paths_are_refused_and_the_hint_asks_for_an_absolute_path(tool: str, arguments: dict[str, Any]) -> None:
    """The server's working directory means nothing to an agent: a relative path used to be
    resolved against it (0 hits, "/cwd/x is not an indexed file")."""
    pool, calls = stub_pool()
    result = call(build_server(pool, allow_write=True), "legacy", tool, arguments)
    error = document(result)["error"]
    assert result.is_error is True and error["code"] == "usage_error"
    assert "must be an absolute path" in error["message"]
    assert error["hint"].startswith("Give an absolute path, as hits carry in `path`")
    assert calls == []


@pytest.mark.parametrize("target", ["DEADBEEF:1", "abcd1234:0", "abcd123:1", "5e0c17aa@20", "5e0c17aa:-1"])
def test_a_malformed_handle_gets_the_handle_hint_not_a_path_error(target: str) -> None:
    pool, calls = stub_pool()
    error = document(call(build_server(pool), "legacy", "read", {"target": target}))["error"]
    assert error["code"] == "usage_error"
    assert error["message"].startswith((f"not a valid handle: {target!r}", f"not a handle: {target!r}: "))
    assert "8 lower-case hex characters" in error["hint"] and "`more`" in error["hint"]
    assert calls == []


@pytest.mark.parametrize("target", ["5e0c17aa:3", "/w/src/app.py:3-9", "/w/a:b.md:2", " 5e0c17aa:3 "])
def test_handles_and_absolute_locators_reach_read(target: str) -> None:
    pool, calls = stub_pool()
    assert document(call(build_server(pool), "legacy", "read", {"target": target})) == {"method": "read"}
    assert calls == [("read", (target,), {"budget": None})]


@pytest.mark.parametrize("tool", [spec.name for spec in TOOLS])
def test_every_path_argument_says_absolute_in_its_schema(tool: str) -> None:
    spec = {spec.name: spec for spec in TOOLS}[tool]
    for name, schema in spec.input_schema["properties"].items():
        if name in ("path", "target"):
            assert "absolute path" in schema["description"]


def _error_classes(base: type) -> list[type]:
    found = []
    for sub in base.__subclasses__():
        found.append(sub)
        found.extend(_error_classes(sub))
    return found


def test_no_hint_tells_an_agent_to_run_the_cli_itself() -> None:
    """Every error class's default hint as an MCP client gets it: a hint that names a command
    line (`hermes-workspace index`, --help, pip install) is replaced, or says the user does it."""
    from hermes_workspace.domain import errors

    classes = sorted({*_error_classes(errors.WorkspaceError), errors.WorkspaceError}, key=lambda c: c.__name__)
    assert len(classes) > 15
    cli = re.compile(r"hermes-workspace\s+[a-z]|--[a-z]|pip install")
    for cls in classes:
        try:
            error = cls("boom")
        except TypeError:  # an error class with other constructor arguments
            continue
        hint = mcp_hint(error) or ""
        assert not cli.search(hint) or "the user" in hint, (cls.__name__, hint)
    usage = errors.UsageError("bad", hint="Page with --offset: the answer's next_offset is the next page's offset.")
    assert mcp_hint(usage) == (
        "Check the arguments against this tool's input schema (tools/list); paths are absolute, as hits carry them."
    )
    located = errors.UsageError("bad", hint="Give a handle like 5e0c17aa:3.")
    assert mcp_hint(located) == "Give a handle like 5e0c17aa:3."  # no CLI in it: kept as it is


@pytest.mark.parametrize(
    ("tool", "name", "maximum"),
    [("search", "offset", 10_000), ("search", "limit", 200), ("retrieve", "budget", 1_000_000),
     ("retrieve", "max_chunks", 50), ("list", "limit", 1000)],
)
def test_schema_maxima_are_the_limits_the_workspace_enforces(tool: str, name: str, maximum: int) -> None:
    """The schema used to let offset 10,001 through to a workspace that refuses it."""
    pool, calls = stub_pool()
    server = build_server(pool)
    base = {"query": "x"} if tool in ("search", "retrieve") else {}
    assert {spec.name: spec for spec in TOOLS}[tool].input_schema["properties"][name]["maximum"] == maximum
    assert call(server, "legacy", tool, {**base, name: maximum}).is_error is False
    over = document(call(server, "legacy", tool, {**base, name: maximum + 1}))["error"]
    assert over["code"] == "usage_error" and f"greater than the maximum of {maximum}" in over["message"]
    assert len(calls) == 1


def test_the_schema_maxima_accept_what_the_real_workspace_accepts(home: Path) -> None:
    make_notes(home, count=2)
    with Workspace.open(home) as ws:
        ws.index()
    pool, _ = open_pool(home)
    server = build_server(pool)
    page = call(server, "legacy", "search", {"query": "note", "offset": 10_000})
    pack = call(server, "legacy", "retrieve", {"query": "note", "budget": 1_000_000, "max_chunks": 50})
    floated = call(server, "legacy", "retrieve", {"query": "note", "budget": 1200.0})
    pool.close()
    assert page.is_error is False and document(page)["hits"] == []
    assert pack.is_error is False and floated.is_error is False, document(floated)


def test_whole_numbers_sent_as_floats_reach_the_workspace_as_ints() -> None:
    """JSON Schema counts 1200.0 as an integer; the workspace wants an int."""
    pool, calls = stub_pool()
    server = build_server(pool)
    assert call(server, "legacy", "retrieve", {"query": "x", "budget": 1200.0, "max_chunks": 3.0}).is_error is False
    assert call(server, "legacy", "list", {"limit": 10.0, "offset": 0.0}).is_error is False
    budget, max_chunks = calls[0][2]["budget"], calls[0][2]["max_chunks"]
    assert (budget, max_chunks) == (1200, 3) and type(budget) is int and type(max_chunks) is int
    assert [type(calls[1][2][k]) for k in ("limit", "offset")] == [int, int]
    fraction = document(call(server, "legacy", "retrieve", {"query": "x", "budget": 1200.5}))["error"]
    assert fraction["code"] == "usage_error" and "is not of type 'integer'" in fraction["message"]


def test_budget_description_names_the_minimum_rule() -> None:
    budget = {spec.name: spec for spec in TOOLS}["retrieve"].input_schema["properties"]["budget"]["description"]
    assert "about 245-285 tokens, more for a long query" in budget and "names the minimum" in budget


def _with_a_side_root(home: Path, tmp_path: Path) -> Path:
    """An indexed home with a second root ``side`` (``extra/zebra.md``) beside the notes."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "zebra.md").write_text("# Zebra\n\nzebra1 crossing in the extra root\n")
    with Workspace.open(home) as ws:
        ws.add_root(extra, name="side")
        ws.index()
    return extra


def test_search_and_retrieve_take_roots_and_name_each_hit_s_root(home: Path, tmp_path: Path) -> None:
    docs = make_notes(home, count=3)
    extra = _with_a_side_root(home, tmp_path)
    pool, _ = open_pool(home)
    server = build_server(pool)

    async def body(client: Client) -> tuple[Any, Any, Any, Any]:
        return (
            await client.call_tool("search", {"query": "zebra1 crossing"}),
            await client.call_tool("search", {"query": "zebra1 crossing", "roots": ["side"]}),
            await client.call_tool("retrieve", {"query": "zebra1 crossing", "roots": ["workspace"]}),
            await client.call_tool("search", {"query": "zebra1", "roots": ["nope"]}),
        )

    every, side, retrieved, unknown = run_client(server, "legacy", body)
    pool.close()
    assert {(h["path"], h["root_name"]) for h in document(every)["hits"]} >= {
        (str(docs / "note01.md"), "workspace"), (str(extra / "zebra.md"), "side")}
    assert document(every)["scope"] == complete_scope(["workspace", "side"], None, False)
    assert [(h["path"], h["root_name"]) for h in document(side)["hits"]] == [(str(extra / "zebra.md"), "side")]
    pack = json.loads(retrieved.content[0].text)
    assert pack["scope"] == complete_scope(["workspace"], None, False)
    assert pack["blocks"] and {b["root_name"] for b in pack["blocks"]} == {"workspace"}
    assert unknown.is_error is True
    error = document(unknown)["error"]
    assert error["code"] == "usage_error"
    assert error["message"] == "unknown root name 'nope'; the roots are: workspace, side"


def test_search_and_retrieve_scope_from_the_server_s_working_directory(home: Path, tmp_path: Path) -> None:
    make_notes(home, count=3)
    extra = _with_a_side_root(home, tmp_path)
    pool, _ = open_pool(home)
    server = build_server(pool, cwd=str(extra))

    async def body(client: Client) -> tuple[Any, ...]:
        return (
            await client.call_tool("search", {"query": "zebra1 crossing"}),
            await client.call_tool("search", {"query": "zebra1 crossing", "all_roots": True}),
            await client.call_tool("retrieve", {"query": "note01"}),
            await client.call_tool("search", {"query": "zebra1", "roots": ["side"], "all_roots": True}),
        )

    home_only, every, widened, both = run_client(server, "legacy", body)
    pool.close()
    assert [h["root_name"] for h in document(home_only)["hits"]] == ["side"]
    assert document(home_only)["scope"] == complete_scope(["side"], "side", False)
    assert document(every)["scope"] == complete_scope(["workspace", "side"], None, False)
    pack = json.loads(widened.content[0].text)
    assert pack["scope"] == complete_scope(["workspace", "side"], "side", True)
    assert pack["blocks"] and {b["root_name"] for b in pack["blocks"]} == {"workspace"}
    assert both.is_error is True and document(both)["error"]["code"] == "usage_error"
