"""The Python API of issue 10 slice A: retrieve, context_for_turn (seed 001), workspace_tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.memory import InMemoryResultSets, WhitespaceTokenCounter
from hermes_workspace.application.retrieve import (
    ENRICHED_MAX_CHARS,
    RetrieveContext,
    enrich_query,
    looks_workspace_relevant,
)
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.model import SearchHit, SearchResults
from tests.cli.test_cli import RUNBOOK


@pytest.fixture
def ws(home: Path) -> Workspace:
    root = home / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "runbook.md").write_text(RUNBOOK)
    for i in range(30):
        (root / "docs" / f"note{i:02}.md").write_text(f"# Note {i}\n\nThe deployment wave {i} was rolled out.\n")
    workspace = Workspace.open(home)
    workspace.index()
    yield workspace
    workspace.close()


def test_retrieve_then_the_next_pack_from_the_frozen_set(ws: Workspace) -> None:
    pack = ws.retrieve("deployment wave", budget=2000)
    assert len(pack.blocks) == 6 and pack.cursor == f"{pack.result_set}@12"
    frozen = ws._container.result_sets().load(pack.result_set)
    assert frozen.kind == "retrieve" and len(frozen.hits) == 24  # max(4 * 6, 20) candidates
    following = ws.more(pack.cursor)  # the seam: a retrieve cursor pages through the retrieve pager
    assert following.cursor is None and following.offset == 12
    first = {b.handle for b in pack.blocks} | {o.handle for o in pack.omitted}
    second = {b.handle for b in following.blocks} | {o.handle for o in following.omitted}
    assert not first & second
    assert len(first | second) == 24


def test_retrieve_uses_the_configured_injection_defaults(home: Path, ws: Workspace) -> None:
    (home / "config.yaml").write_text("knowledgebase:\n  injection:\n    max_chunks: 2\n    max_tokens: 900\n")
    pack = ws.retrieve("deployment wave")
    assert (pack.budget, len(pack.blocks)) == (900, 2)


def test_context_for_turn_modes(ws: Workspace) -> None:
    question = "How does the rollback controller restore a release?"
    assert ws.context_for_turn(question, mode="off") == ""
    assert ws.context_for_turn(question) == ""  # knowledgebase.retrieval_mode defaults to off
    assert ws.context_for_turn("thanks, great", mode="gated") == ""  # chit-chat is gated out
    gated = ws.context_for_turn(question, mode="gated")
    assert gated.startswith("[System note: The following workspace context was retrieved for this turn only.")
    assert "[Workspace source: docs/runbook.md, lines" in gated
    assert ws.context_for_turn("thanks, great", mode="always") == ""  # no hit, nothing injected
    assert "rollback controller" in ws.context_for_turn("rollback controller", mode="always")


def test_context_for_turn_enriches_a_pronoun_question_with_recent_turns(ws: Workspace) -> None:
    recent = [{"role": "user", "content": "tell me about the rollback controller"},
              {"role": "assistant", "content": "zebra"}]
    text = ws.context_for_turn("what does it restore?", recent, mode="gated")
    assert "[Workspace source: docs/runbook.md" in text


def test_context_for_turn_refuses_bad_arguments(ws: Workspace) -> None:
    with pytest.raises(UsageError, match="unknown retrieval mode"):
        ws.context_for_turn("x", mode="sometimes")
    with pytest.raises(UsageError, match="recent_messages must be a list"):
        ws.context_for_turn("x", "previous message")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="recent_messages must hold strings"):
        ws.context_for_turn("x", [42], mode="off")


def test_context_for_turn_before_the_first_index_is_empty(home: Path) -> None:
    with Workspace.open(home) as fresh:
        assert fresh.context_for_turn("where is the deployment plan?", mode="always") == ""


def test_gated_retrieval_drops_results_without_a_keyword_match() -> None:
    hit = SearchHit(path=Path("/ws/a.md"), line_start=1, line_end=1, section=None, chunk_index=0, score=0.5,
                    tokens=2, modified="", content="semantic only", root=Path("/ws"), semantic_rank=1)

    def search(text: str, **options: object) -> SearchResults:
        return SearchResults([hit], mode="hybrid", semantic_status="ready")

    use_case = RetrieveContext(search=search, counter=WhitespaceTokenCounter(), result_sets=InMemoryResultSets())
    assert use_case.execute("what is it", require_keyword_match=True).text == ""
    assert "semantic only" in use_case.execute("what is it").text


def test_seed_001_gate_and_enrichment_rules() -> None:
    assert looks_workspace_relevant("where is the deployment doc") is True
    assert looks_workspace_relevant("docs?") is True  # a question mark stands in for 3 words
    assert looks_workspace_relevant("docs please") is False
    assert looks_workspace_relevant("I love sunny days") is False
    assert enrich_query("the rollback plan is described in detail here") == "the rollback plan is described in detail here"
    assert enrich_query("what about it?", ["a", "b", "c", "d"]) == "what about it? d c b"
    assert enrich_query("what about it?", ["what about it?"]) == "what about it?"
    long = enrich_query("and this?", ["word " * 300])
    assert len(long) <= ENRICHED_MAX_CHARS and long.startswith("and this? word")


def test_workspace_tool_returns_json_text_and_errors_never_raise(ws: Workspace) -> None:
    packed = ws.workspace_tool("retrieve", query="rollback controller", budget=500)
    assert json.loads(packed)["blocks"][0]["relative_path"] == "docs/runbook.md"
    assert json.loads(ws.workspace_tool("status"))["files"] == 31
    assert json.loads(ws.workspace_tool("search", query="rollback", limit=1))["hits"][0]["path"].endswith("runbook.md")

    def error(text: str) -> dict[str, str]:
        return json.loads(text)["error"]

    assert error(ws.workspace_tool("frobnicate"))["code"] == "usage_error"
    assert error(ws.workspace_tool(None))["code"] == "usage_error"  # type: ignore[arg-type]
    bad = error(ws.workspace_tool("retrieve", qury="x"))
    assert bad["code"] == "usage_error" and "retrieve takes: query, budget" in bad["hint"]
    assert error(ws.workspace_tool("retrieve", query="x", budget=3))["message"].startswith("a budget of 3 tokens")
    assert error(ws.workspace_tool("search", query="x", mode="psychic"))["code"] == "usage_error"
    if not hasattr(ws, "read"):  # another slice adds it; until then the action says so
        assert error(ws.workspace_tool("read", target="abcdef12:1"))["code"] == "not_available"


def test_retrieve_coverage_and_stale_marks(ws: Workspace, home: Path) -> None:
    (home / "workspace" / "docs" / "big.bin").write_bytes(b"\0" * 10)  # skipped by suffix: counted in total
    ws.index()
    pack = ws.retrieve("deployment wave", budget=2000)
    assert pack.to_json()["coverage"] == {"files_indexed": 31, "files_total": 32, "stale": 0, "semantic_status": "disabled"}
    edited = Path(pack.blocks[0].path)
    edited.write_text(edited.read_text() + "\nmore\n")
    again = ws.retrieve("deployment wave", budget=2000)
    assert [b.stale for b in again.blocks if b.path == str(edited)] == [True]
    assert again.to_json()["coverage"]["stale"] == 1
    assert "STALE" in again.text


def test_the_next_pack_marks_files_changed_since_the_set_was_frozen(ws: Workspace, home: Path) -> None:
    """Found by a trial: a file edited between `retrieve` and `more` came back with
    `stale: null` and its old text unmarked."""
    pack = ws.retrieve("deployment wave", budget=2000)
    following = ws._container.retrieve_context().page(ws._container.result_sets().load(pack.result_set), 12)
    target = Path(following.blocks[0].path)
    target.write_text(target.read_text() + "\nedited\n")
    again = ws.more(pack.cursor)
    assert [b.stale for b in again.blocks if b.path == str(target)] == [True]
    assert {b.stale for b in again.blocks if b.path != str(target)} == {False}
    assert again.to_json()["coverage"]["stale"] == 1


def test_the_named_minimum_budget_holds_for_every_call_and_every_page(ws: Workspace) -> None:
    """Found by a trial: the minimum an error named depended on the random set id (refused on the
    next call), and a later `more` page needed more than the first page was allowed."""
    import re

    with pytest.raises(UsageError) as refused:
        ws.retrieve("deployment wave", budget=1)
    minimum = int(re.search(r"at least (\d+) tokens", refused.value.hint)[1])
    for _ in range(5):
        pack = ws.retrieve("deployment wave", budget=minimum)
        seen = {o.handle for o in pack.omitted} | {h for b in pack.blocks for h in (b.handles or (b.handle,))}
        while pack.cursor:
            pack = ws.more(pack.cursor)
            seen |= {o.handle for o in pack.omitted} | {h for b in pack.blocks for h in (b.handles or (b.handle,))}
        assert len(seen) == 24
    with pytest.raises(UsageError, match="cannot hold every page"):
        ws.retrieve("deployment wave", budget=minimum - 1)
