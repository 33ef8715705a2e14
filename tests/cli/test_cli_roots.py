"""Named roots through the CLI (issue 12, first slice): ``roots add --name``, ``roots rename``,
``roots list`` names, ``search``/``retrieve --root`` and the ``root_name``/``scope`` fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import run
from tests.scopes import complete_scope


@pytest.fixture
def two_roots(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The primary workspace and an added root ``My Notes``, each with a file about rollbacks, indexed."""
    ws = home / "workspace"
    ws.mkdir()
    (ws / "plan.md").write_text("# Plan\n\nThe rollback plan for the gateway.\n")
    notes = tmp_path / "My Notes"
    notes.mkdir()
    (notes / "diary.md").write_text("# Diary\n\nToday the rollback of the gateway worked.\n")
    assert run(capsys, "roots", "add", str(notes))[0] == 0
    assert run(capsys, "--quiet", "index")[0] == 0
    return ws, notes


def test_roots_list_names_each_root_and_add_takes_a_name(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    a, b = tmp_path / "x" / "docs", tmp_path / "y" / "docs"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    assert run(capsys, "roots", "add", str(a))[1]["name"] == "docs"
    assert run(capsys, "roots", "add", str(b))[1]["name"] == "docs-2"
    code, data, _ = run(capsys, "roots", "list")
    assert code == 0 and [r["name"] for r in data] == ["workspace", "docs", "docs-2"]
    code, data, _ = run(capsys, "roots", "add", str(b), "--name", "ydocs")
    assert (code, data["action"], data["name"], data["previous"]["name"]) == (0, "updated", "ydocs", "docs-2")
    assert "name: ydocs" in (home / "config.yaml").read_text()
    code, data, _ = run(capsys, "roots", "add", str(a), "--name", "bad name")
    assert (code, data["error"]["code"]) == (2, "usage_error")
    code, text, _ = run(capsys, "--human", "roots", "list")
    assert code == 0 and "ydocs" in text and "workspace" in text


def test_roots_rename_keeps_the_comments_of_config_yaml(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (home / "config.yaml").write_text(
        f"# top comment\nknowledgebase:\n  roots:\n    - path: {extra}  # the extra folder\n      recursive: true\n"
    )
    code, data, _ = run(capsys, "roots", "rename", "extra", "more")
    assert (code, data["name"], data["previous"]["name"]) == (0, "more", "extra")
    assert data["message"] == f"renamed root extra ({extra}) to more"
    text = (home / "config.yaml").read_text()
    assert "# top comment" in text and "# the extra folder" in text and "name: more" in text
    code, data, _ = run(capsys, "roots", "rename", "nope", "x")
    assert (code, data["error"]["code"]) == (2, "usage_error")
    assert data["error"]["message"] == "unknown root name 'nope'; the roots are: workspace, more"


def test_search_root_filter_with_two_roots(capsys: pytest.CaptureFixture[str], two_roots: tuple[Path, Path]) -> None:
    ws, notes = two_roots
    code, hits, _ = run(capsys, "search", "rollback", "gateway")
    assert code == 0
    assert sorted((h["path"], h["root_name"]) for h in hits) == [
        (str(notes / "diary.md"), "My-Notes"), (str(ws / "plan.md"), "workspace")]
    code, hits, _ = run(capsys, "search", "rollback", "gateway", "--root", "My-Notes")
    assert code == 0 and [(h["path"], h["root_name"]) for h in hits] == [(str(notes / "diary.md"), "My-Notes")]
    code, envelope, _ = run(capsys, "search", "rollback", "--root", "workspace", "--root", "My-Notes", "--envelope")
    assert envelope["scope"] == complete_scope(["workspace", "My-Notes"], None, False)
    assert len(envelope["hits"]) == 2
    code, envelope, _ = run(capsys, "search", "rollback", "--envelope")
    assert envelope["scope"] == complete_scope(["workspace", "My-Notes"], None, False)  # no --root, outside every root: every root
    # `more` reports the scope frozen with the set.
    code, first, _ = run(capsys, "search", "rollback", "--envelope", "--limit", "1", "--root", "workspace",
                         "--root", "My-Notes")
    assert first["cursor"] is not None
    code, second, _ = run(capsys, "search", "--cursor", first["cursor"], "--envelope")
    assert (code, second["scope"]) == (0, complete_scope(["workspace", "My-Notes"], None, False))
    assert len(second["hits"]) == 1 and second["hits"][0]["root_name"] != first["hits"][0]["root_name"]


def test_unknown_root_is_a_usage_error_listing_the_names(
    capsys: pytest.CaptureFixture[str], two_roots: tuple[Path, Path]
) -> None:
    for command in ("search", "retrieve"):
        code, data, err = run(capsys, command, "rollback", "--root", "nope")
        assert code == 2, command
        assert data["error"]["code"] == "usage_error"
        assert data["error"]["message"] == "unknown root name 'nope'; the roots are: workspace, My-Notes"
        assert "Traceback" not in err


def test_retrieve_blocks_name_their_root_and_the_pack_its_scope(
    capsys: pytest.CaptureFixture[str], two_roots: tuple[Path, Path]
) -> None:
    _, notes = two_roots
    code, pack, _ = run(capsys, "retrieve", "rollback", "gateway", "--root", "My-Notes")
    assert code == 0
    assert pack["scope"] == complete_scope(["My-Notes"], None, False)
    assert [(b["path"], b["root_name"]) for b in pack["blocks"]] == [(str(notes / "diary.md"), "My-Notes")]
    code, text, _ = run(capsys, "--human", "retrieve", "rollback", "gateway", "--root", "My-Notes")
    assert "[Workspace source: My Notes/diary.md, lines 1-3 (# Diary)]\n" in text  # the header is unchanged


def test_search_and_retrieve_scope_from_the_working_directory(
    capsys: pytest.CaptureFixture[str], two_roots: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, notes = two_roots
    monkeypatch.chdir(notes)
    code, envelope, _ = run(capsys, "search", "rollback", "--envelope")
    assert code == 0 and [h["path"] for h in envelope["hits"]] == [str(notes / "diary.md")]
    assert envelope["scope"] == complete_scope(["My-Notes"], "My-Notes", False)
    code, envelope, _ = run(capsys, "search", "plan", "--envelope")  # only the workspace has a plan
    assert code == 0 and [h["path"] for h in envelope["hits"]] == [str(ws / "plan.md")]
    assert envelope["scope"] == complete_scope(["workspace", "My-Notes"], "My-Notes", True)
    code, envelope, _ = run(capsys, "search", "plan", "--root", "My-Notes", "--envelope")
    assert (code, envelope["hits"]) == (0, [])
    assert envelope["scope"] == complete_scope(["My-Notes"], None, False)
    code, envelope, _ = run(capsys, "search", "rollback", "--all", "--envelope")
    assert code == 0 and len(envelope["hits"]) == 2
    assert envelope["scope"] == complete_scope(["workspace", "My-Notes"], None, False)
    code, pack, _ = run(capsys, "retrieve", "plan")
    assert code == 0 and [b["path"] for b in pack["blocks"]] == [str(ws / "plan.md")]
    assert pack["scope"] == complete_scope(["workspace", "My-Notes"], "My-Notes", True)
    code, pack, _ = run(capsys, "retrieve", "rollback", "--all")
    assert pack["scope"] == complete_scope(["workspace", "My-Notes"], None, False)
    code, data, _ = run(capsys, "search", "rollback", "--all", "--root", "My-Notes")
    assert (code, data["error"]["code"]) == (2, "usage_error")
    code, text, _ = run(capsys, "--human", "search", "rollback")
    assert code == 0 and "root My-Notes only (the working directory's; --all searches every root)\n" in text
    code, text, _ = run(capsys, "--human", "search", "plan")
    assert "nothing in root My-Notes (the working directory's): every root searched\n" in text
    code, text, _ = run(capsys, "--human", "search", "plan", "--all")
    assert code == 0 and "working directory" not in text
    monkeypatch.chdir(ws)
    code, envelope, _ = run(capsys, "search", "rollback", "--envelope")
    assert envelope["scope"] == complete_scope(["workspace"], "workspace", False)
