"""Whole-number arguments far beyond 64 bits, through the API, the agent tool (as MCP calls it)
and the CLI: a usage error or a sound answer, never "OverflowError: int too big to convert"
from SQLite's binding (the tester's input: ``list --offset 100000000000000000000``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.domain.catalog import LIST_MAX_OFFSET
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.ports import IndexStore
from hermes_workspace.domain.query import Query
from hermes_workspace.entrypoints.cli import main
from tests.store_files import make_file

BIG = 100_000_000_000_000_000_000  # > 2**64


@pytest.fixture
def ws(home: Path) -> Iterator[Workspace]:
    doc = home / "workspace" / "a.md"
    doc.parent.mkdir(parents=True)
    doc.write_text("# A\n\nthe rollback controller\n\nline five\n")
    with Workspace.open(home) as workspace:
        workspace.index()
        yield workspace


# -- list: offset 0..10,000,000 -----------------------------------------------------------------------


@pytest.mark.parametrize("offset", [BIG, LIST_MAX_OFFSET + 1, 2**63, -BIG])
def test_list_refuses_an_offset_beyond_its_maximum(ws: Workspace, offset: int) -> None:
    with pytest.raises(UsageError, match=r"offset must be a whole number from 0 to 10,000,000") as info:
        ws.list_files(offset=offset)
    assert "next_offset" in info.value.hint


def test_list_takes_the_largest_offset(ws: Workspace) -> None:
    listing = ws.list_files(offset=LIST_MAX_OFFSET)
    assert (listing.files, listing.total, listing.next_offset) == ((), 1, None)


def test_the_message_shows_a_long_number_cut_short(ws: Workspace) -> None:
    with pytest.raises(UsageError) as info:
        ws.list_files(offset=10**5000)
    assert len(info.value.message) < 120


def test_the_agent_tool_list_with_the_testers_offset_is_a_usage_error(ws: Workspace) -> None:
    answer = json.loads(ws.workspace_tool("list", offset=BIG))
    assert answer["error"]["code"] == "usage_error"
    assert "10,000,000" in answer["error"]["message"]


def test_cli_list_with_the_testers_offset_exits_2(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["list", "--offset", str(BIG)])
    out = json.loads(capsys.readouterr().out)
    assert (code, out["error"]["code"]) == (2, "usage_error")


# -- the store binds no integer SQLite cannot hold ----------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    s: IndexStore = InMemoryIndexStore() if request.param == "memory" else SqliteFts5Store(tmp_path / "x.sqlite")
    record, chunks = make_file("/ws/a.md", ["alpha one", "beta two"])
    s.replace_file(record, chunks)
    yield s
    s.close()


def test_a_store_pages_past_the_end_for_any_offset_and_limit(store: IndexStore) -> None:
    assert store.list_files(offset=BIG) == ([], 1)
    records, total = store.list_files(limit=BIG)
    assert ([str(r.path) for r in records], total) == (["/ws/a.md"], 1)


def test_a_store_search_takes_any_limit(store: IndexStore) -> None:
    hits = store.search(Query(text="alpha", groups=("alpha",)), limit=BIG)
    assert [h.chunk_index for h in hits] == [0]


# -- every other whole number that reaches the index --------------------------------------------------


def _cases(ws: Workspace) -> dict[str, tuple[Callable[[], Any], str | None]]:
    """name -> (call, expected error code or None for an answer)."""
    page = ws.search("rollback", limit=1)
    doc = ws.list_files().files[0].path
    return {
        "search offset": (lambda: ws.search("rollback", offset=BIG), "usage_error"),
        "search limit": (lambda: ws.search("rollback", limit=BIG), None),  # at most 10,000 hits
        "more limit": (lambda: ws.more(f"{page.result_set}@0", limit=BIG), None),
        "more cursor offset": (lambda: ws.more(f"{page.result_set}@{BIG}"), "usage_error"),
        "read handle": (lambda: ws.read(f"{page.result_set}:{BIG}"), "usage_error"),
        "read lines": (lambda: ws.read(f"{doc}:{BIG}-{BIG + 1}"), "usage_error"),
        "read end line": (lambda: ws.read(f"{doc}:1-{BIG}"), "usage_error"),
        "read budget": (lambda: ws.read(f"{doc}:1-2", budget=BIG), "usage_error"),
        "retrieve max_chunks": (lambda: ws.retrieve("rollback", max_chunks=BIG), "usage_error"),
        "retrieve budget": (lambda: ws.retrieve("rollback", budget=BIG), "usage_error"),
    }


CASES = ["search offset", "search limit", "more limit", "more cursor offset", "read handle", "read lines",
         "read end line", "read budget", "retrieve max_chunks", "retrieve budget"]


@pytest.mark.parametrize("name", CASES)
def test_a_huge_number_is_a_usage_error_or_an_answer(ws: Workspace, name: str) -> None:
    call, code = _cases(ws)[name]
    if code is None:
        assert call() is not None
    else:
        with pytest.raises(UsageError):
            call()


@pytest.mark.parametrize(("action", "kwargs"), [
    ("search", {"query": "rollback", "offset": BIG}),
    ("search", {"query": "rollback", "limit": BIG}),
    ("retrieve", {"query": "rollback", "max_chunks": BIG}),
    ("retrieve", {"query": "rollback", "budget": BIG}),
    ("read", {"target": f"a.md:{BIG}"}),
    ("read", {"target": "SET:1", "budget": BIG}),
    ("list", {"limit": BIG}),
])
def test_the_agent_tool_never_answers_internal_error_for_a_huge_number(
    ws: Workspace, action: str, kwargs: dict[str, Any]
) -> None:
    answer = json.loads(ws.workspace_tool(action, **kwargs))
    error = answer.get("error") if isinstance(answer, dict) else None
    assert error is None or error["code"] in {"usage_error", "not_indexed", "handle_not_found"}, error


# -- numbers Python will not even print (over 4,300 digits) ------------------------------------------

HUGE = 10**5000
DIGITS = "9" * 5000


@pytest.mark.parametrize(("action", "kwargs"), [
    ("list", {"offset": HUGE}),
    ("list", {"limit": HUGE}),
    ("search", {"query": "rollback", "offset": HUGE}),
    ("search", {"query": "rollback", "limit": -HUGE}),
    ("retrieve", {"query": "rollback", "max_chunks": HUGE}),
    ("retrieve", {"query": "rollback", "budget": HUGE}),
    ("read", {"target": "a.md:1-2", "budget": HUGE}),
    ("more", {"cursor": "abcdef12@0", "limit": HUGE}),
    ("index", {"workers": HUGE}),
    ("read", {"target": f"a.md:1-{DIGITS}"}),
    ("read", {"target": f"a.md:{DIGITS}"}),
    ("read", {"target": f"abcdef12:{DIGITS}"}),
    ("more", {"cursor": f"abcdef12@{DIGITS}"}),
])
def test_a_number_of_5000_digits_is_a_short_usage_error(ws: Workspace, action: str, kwargs: dict[str, Any]) -> None:
    """Formatting such a number into the message raised ValueError ("Exceeds the limit (4300
    digits) for integer string conversion"): internal_error."""
    error = json.loads(ws.workspace_tool(action, **kwargs))["error"]
    assert error["code"] == "usage_error", error
    assert len(error["message"]) < 300
