"""Named roots through the Python API and the single agent tool (issue 12, first slice)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.domain.errors import UsageError
from tests.scopes import complete_scope


def _workspace(home: Path, tmp_path: Path) -> Workspace:
    (home / "workspace").mkdir()
    (home / "workspace" / "a.md").write_text("# A\n\nquokka habitat survey\n")
    side = tmp_path / "side folder"
    side.mkdir()
    (side / "b.md").write_text("# B\n\nquokka population count\n")
    ws = Workspace.open(home)
    assert ws.add_root(side, name="side").root.name == "side"
    ws.index()
    return ws


def test_search_and_retrieve_take_roots(home: Path, tmp_path: Path) -> None:
    with _workspace(home, tmp_path) as ws:
        assert [r.name for r in ws.roots()] == ["workspace", "side"]
        hits = ws.search("quokka", roots=["side"])
        assert [(h.path.name, h.root_name) for h in hits] == [("b.md", "side")]
        assert hits.scope == complete_scope(["side"], None, False)
        pack = ws.retrieve("quokka", roots=("workspace",))
        assert pack.scope == complete_scope(["workspace"], None, False)
        assert [(b.relative_path, b.root_name) for b in pack.blocks] == [("workspace/a.md", "workspace")]
        with pytest.raises(UsageError, match="roots must be a list of root names"):
            ws.search("quokka", roots="side")  # type: ignore[arg-type]
        answer = json.loads(ws.workspace_tool("search", query="quokka", roots=["nope"]))
        assert answer["error"]["code"] == "usage_error"
        assert answer["error"]["message"] == "unknown root name 'nope'; the roots are: workspace, side"


def test_rename_root_changes_what_hits_say(home: Path, tmp_path: Path) -> None:
    with _workspace(home, tmp_path) as ws:
        change = ws.rename_root("side", "field")
        assert (change.action, change.previous.name, change.root.name) == ("updated", "side", "field")
        assert [(h.path.name, h.root_name) for h in ws.search("quokka", roots=["field"])] == [("b.md", "field")]
        with pytest.raises(UsageError, match="unknown root name 'side'"):
            ws.search("quokka", roots=["side"])
        with pytest.raises(UsageError, match="the name 'workspace' is taken"):
            ws.rename_root("field", "workspace")


def test_search_and_retrieve_scope_from_a_given_working_directory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "workspace").mkdir()
    (home / "workspace" / "a.md").write_text("# A\n\nquokka habitat survey\n")
    (home / "workspace" / "c.md").write_text("# C\n\nhabitat of wombats\n")
    side = tmp_path / "side"
    (side / "deep").mkdir(parents=True)
    (side / "b.md").write_text("# B\n\nquokka population count\n")
    with Workspace.open(home) as ws:
        ws.add_root(side, name="side")
        ws.index()
        hits = ws.search("quokka", cwd=side / "deep")
        assert [h.path.name for h in hits] == ["b.md"]
        assert hits.scope == complete_scope(["side"], "side", False)
        widened = ws.search("habitat", cwd=str(side), limit=1)
        assert widened.scope == complete_scope(["workspace", "side"], "side", True)
        assert widened[0].root_name == "workspace" and widened.cursor is not None
        assert ws.more(widened.cursor).scope == widened.scope  # frozen with the set
        explicit = ws.search("habitat", cwd=side, roots=["side"])
        assert list(explicit) == [] and explicit.scope == complete_scope(["side"], None, False)
        every = ws.search("quokka", cwd=side, all_roots=True)
        assert sorted(h.path.name for h in every) == ["a.md", "b.md"]
        assert every.scope == complete_scope(["workspace", "side"], None, False)
        pack = ws.retrieve("habitat", cwd=side)
        assert pack.scope == complete_scope(["workspace", "side"], "side", True)
        assert {b.root_name for b in pack.blocks} == {"workspace"}
        assert ws.retrieve("quokka", cwd=side).scope == complete_scope(["side"], "side", False)
        # A library call never looks at the process's working directory.
        monkeypatch.chdir(side)
        assert ws.search("quokka").scope == complete_scope(["workspace", "side"], None, False)
        tool = json.loads(ws.workspace_tool("search", query="quokka", cwd=str(side)))
        assert tool["scope"] == complete_scope(["side"], "side", False)
        with pytest.raises(UsageError, match="cwd is empty"):
            ws.search("quokka", cwd=" ")
        with pytest.raises(UsageError, match="all_roots must be True or False"):
            ws.retrieve("quokka", all_roots="yes")  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="give root names or all roots, not both"):
            ws.retrieve("quokka", roots=["side"], all_roots=True)
