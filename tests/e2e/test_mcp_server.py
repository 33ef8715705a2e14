"""The MCP server in-process, driven by the SDK's own client (``mcp.Client``), in both the
handshake era (``mode="legacy"``: initialize, JSON-RPC over memory streams) and the direct
in-process dispatch (``mode="auto"``).

The tool table, argument checks and error mapping are tested against :class:`StubWorkspace`
(the Workspace signatures, recording calls); every read-only tool also runs on a real workspace
in an agent session (search, retrieve, read, edit, read again, more, list, doctor)."""

from __future__ import annotations

import json
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
    open_pool,
)

READ_ONLY = ["search", "retrieve", "read", "more", "status", "list", "doctor"]
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

    def read(self, target: str) -> Result:
        if target == "deadbeef:9":
            raise HandleExpiredError("result set deadbeef expired")
        return Result(self._record("read", target))

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
    assert list(tools) == [*READ_ONLY, "index", "delete"]
    for name in ("index", "delete"):
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
    ("read", {"target": "5e0c17aa:3"}, ("read", ("5e0c17aa:3",), {})),
    ("read", {"target": "/w/docs/a.md:3-9"}, ("read", ("/w/docs/a.md:3-9",), {})),
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
@pytest.mark.parametrize("tool", ["index", "delete"])
def test_write_tools_are_refused_without_allow_write(tool: str, mode: str) -> None:
    pool, calls = stub_pool()
    arguments = {"path": "/w/a.md"} if tool == "delete" else {}
    result = call(build_server(pool), mode, tool, arguments)
    assert result.is_error is True
    assert document(result)["error"]["code"] == "write_not_allowed"
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
    assert document(result)["error"]["code"] == "index_missing"


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
