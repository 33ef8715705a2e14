"""Index runs over changed paths (``Workspace.index(paths=...)``, ``index --path``) with the real
filesystem source and SQLite store: each path is judged exactly as the whole walk judges it
(always-on exclusions, the ignore files of every folder on the way, non-recursive roots), the
files gone from under it are pruned, and nothing else changes. The fakes' version:
tests/unit/test_changed_paths.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.query import parse_query
from hermes_workspace.entrypoints.cli import main


@pytest.fixture
def tree(home: Path) -> Path:
    """The primary workspace with a few files, indexed once."""
    ws = home / "workspace"
    files = {
        "docs/a.md": "# Alpha\n\nalpha notes\n",
        "docs/b.md": "# Bravo\n\nbravo notes\n",
        "docs/deep/c.md": "charlie notes\n",
        "docs0.md": "delta notes\n",
        "top.md": "echo notes\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    with Workspace.open(home) as opened:
        summary = opened.index()
    assert summary.files_indexed == len(files)
    return ws


@pytest.fixture
def ws(home: Path, tree: Path) -> Workspace:
    with Workspace.open(home) as workspace:
        yield workspace


@pytest.fixture
def repo(ws: Workspace, tmp_path: Path) -> Path:
    """An added recursive root ruled by .gitignore files (a root of the .gitignore family), indexed."""
    root = tmp_path / "repo"
    files = {
        ".gitignore": "*.log\n",
        "proj/.gitignore": "gen/\n",
        "proj/src/main.py": "print('main')\n",
        "proj/src/draft.md": "draft words\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ws.add_root(root, recursive=True)
    ws.index()
    return root


def in_repo(ws: Workspace, repo: Path) -> set[str]:
    return {str(Path(f.path).relative_to(repo)) for f in ws.list_files(repo, limit=1000).files}


def indexed(ws: Workspace) -> set[str]:
    listing = ws.list_files(limit=1000)
    return {str(Path(f.path).relative_to(ws.home / "workspace")) for f in listing.files}


def counts(summary) -> tuple[int, int, int, int]:  # type: ignore[no-untyped-def]
    return summary.files_indexed, summary.files_skipped, summary.files_pruned, summary.files_errored


def found(ws: Workspace, text: str) -> list[str]:
    return sorted(h.path.name for h in ws.search(text, mode="keyword"))


def test_an_edit_is_indexed_and_an_unchanged_file_skipped(ws: Workspace, tree: Path) -> None:
    (tree / "docs" / "a.md").write_text("# Alpha\n\nalpha rewritten with zulu\n")
    summary = ws.index(paths=[tree / "docs" / "a.md", tree / "docs" / "b.md"])
    assert counts(summary) == (1, 1, 0, 0)
    assert summary.skipped == {"unchanged": 1}
    assert summary.changed_paths == {"given": 2, "ignored": 0}
    assert found(ws, "zulu") == ["a.md"]


def test_an_added_file_is_indexed_and_a_deleted_one_pruned_alone(ws: Workspace, tree: Path) -> None:
    (tree / "docs" / "new.md").write_text("hotel words\n")
    (tree / "docs" / "b.md").unlink()
    (tree / "top.md").unlink()  # also gone, not given: stays until a run looks at it
    summary = ws.index(paths=[tree / "docs" / "new.md", tree / "docs" / "b.md"])
    assert counts(summary) == (1, 0, 1, 0)
    assert "docs/new.md" in indexed(ws) and "docs/b.md" not in indexed(ws)
    assert "top.md" in indexed(ws)
    assert found(ws, "hotel") == ["new.md"]


def test_a_renamed_file_and_a_renamed_folder(ws: Workspace, tree: Path) -> None:
    (tree / "docs" / "a.md").rename(tree / "docs" / "alpha.md")
    assert counts(ws.index(paths=[tree / "docs" / "a.md", tree / "docs" / "alpha.md"])) == (1, 0, 1, 0)
    (tree / "docs").rename(tree / "papers")
    summary = ws.index(paths=[tree / "docs", tree / "papers"])
    assert counts(summary) == (3, 0, 3, 0)
    assert indexed(ws) == {"papers/alpha.md", "papers/b.md", "papers/deep/c.md", "docs0.md", "top.md"}


def test_a_changed_nested_gitignore_excludes_then_includes_a_file(ws: Workspace, repo: Path) -> None:
    ignore = repo / "proj" / "src" / ".gitignore"
    ignore.write_text("draft.md\n")
    summary = ws.index(paths=[ignore])
    assert counts(summary) == (1, 1, 1, 0)  # the new .gitignore in, main.py unchanged, draft.md out
    assert "proj/src/draft.md" not in in_repo(ws, repo)
    ignore.write_text("# nothing ignored\n")
    summary = ws.index(paths=[ignore])
    assert counts(summary) == (2, 1, 0, 0)  # .gitignore changed, draft.md back; main.py unchanged
    assert "proj/src/draft.md" in in_repo(ws, repo)


def test_a_changed_nested_hermesignore_of_the_workspace_excludes_a_file(ws: Workspace, tree: Path) -> None:
    ignore = tree / "docs" / ".hermesignore"  # the workspace's family: .gitignore files are content there
    ignore.write_text("b.md\n")
    summary = ws.index(paths=[ignore])
    assert counts(summary) == (0, 2, 1, 0)  # a.md and deep/c.md unchanged, b.md out; .hermesignore never indexed
    assert "docs/b.md" not in indexed(ws)


def test_the_ignore_files_of_every_folder_on_the_way_apply(ws: Workspace, repo: Path) -> None:
    generated = repo / "proj" / "src" / "gen" / "out.md"  # proj/.gitignore: gen/
    generated.parent.mkdir()
    generated.write_text("generated words\n")
    (repo / "proj" / "src" / "run.log").write_text("log words\n")  # the root's .gitignore: *.log
    summary = ws.index(paths=[generated, repo / "proj" / "src" / "run.log"])
    assert counts(summary) == (0, 0, 0, 0)
    summary = ws.index(paths=[generated.parent])
    assert counts(summary) == (0, 0, 0, 0)
    assert not any("gen/" in p or p.endswith(".log") for p in in_repo(ws, repo))
    assert found(ws, "generated") == []


def test_secrets_and_version_control_are_never_indexed_through_a_changed_path(ws: Workspace, tree: Path) -> None:
    (tree / "docs" / ".env").write_text("TOKEN=abc\n")
    (tree / "docs" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[core]\n")
    recorded = ws.status().excluded
    summary = ws.index(paths=[tree / "docs" / ".env", tree / "docs" / "server.pem", tree / ".git" / "config"])
    assert counts(summary) == (0, 0, 0, 0)
    assert summary.excluded == {"secret": 2, "version_control": 1}
    assert not any(p.endswith((".env", ".pem", "config")) for p in indexed(ws))
    assert ws.status().excluded == recorded == {"workspace_internal": 1}  # the whole run's record stays


def test_a_non_recursive_root_takes_its_children_only(ws: Workspace, home: Path, tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    (flat / "sub").mkdir(parents=True)
    ws.add_root(flat, recursive=False)
    (flat / "child.md").write_text("kilo words\n")
    (flat / "sub" / "grandchild.md").write_text("lima words\n")
    summary = ws.index(paths=[flat / "child.md", flat / "sub" / "grandchild.md"])
    assert counts(summary) == (1, 0, 0, 0)
    assert summary.changed_paths == {"given": 2, "ignored": 1}
    assert found(ws, "kilo") == ["child.md"] and found(ws, "lima") == []
    with pytest.raises(UsageError, match="no root covers"):
        ws.index(paths=[flat / "sub" / "grandchild.md"])


def test_paths_no_root_covers_are_a_usage_error_and_change_nothing(ws: Workspace, home: Path, tmp_path: Path) -> None:
    before = indexed(ws)
    with pytest.raises(UsageError, match="no root covers") as caught:
        ws.index(paths=[tmp_path / "elsewhere.md", home / "workspace" / ".index" / "workspace.sqlite"])
    assert caught.value.hint and "roots list" in caught.value.hint
    assert indexed(ws) == before
    with pytest.raises(UsageError, match="list of paths"):
        ws.index(paths="docs/a.md")  # type: ignore[arg-type]


def test_relative_paths_are_taken_from_the_current_folder(ws: Workspace, tree: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / "docs" / "a.md").write_text("mike words\n")
    monkeypatch.chdir(tree / "docs")
    assert counts(ws.index(paths=["a.md"])) == (1, 0, 0, 0)
    assert found(ws, "mike") == ["a.md"]


def test_a_path_through_a_link_to_the_root_is_the_root_s_file(ws: Workspace, tree: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(tree, target_is_directory=True)
    (tree / "docs" / "a.md").write_text("november words\n")
    summary = ws.index(paths=[alias / "docs" / "a.md"])
    assert counts(summary) == (1, 0, 0, 0)
    assert [h.path for h in ws.search("november", mode="keyword")] == [tree / "docs" / "a.md"]


def test_a_partial_run_keeps_the_last_whole_run_in_the_status(ws: Workspace, tree: Path) -> None:
    before = ws.status()
    (tree / "docs" / "a.md").write_text("oscar words\n")
    ws.index(paths=[tree / "docs" / "a.md"])
    after = ws.status()
    assert (after.last_indexed_at, after.skipped) == (before.last_indexed_at, before.skipped)


def test_cli_index_path_is_repeatable_and_relative(capsys: pytest.CaptureFixture[str], tree: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    (tree / "docs" / "a.md").write_text("papa words\n")
    (tree / "docs" / "b.md").unlink()
    monkeypatch.chdir(tree)
    code = main(["--quiet", "index", "--path", "docs/a.md", "--path", "docs/b.md"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (out["files_indexed"], out["files_pruned"], out["changed_paths"]) == (1, 1, {"given": 2, "ignored": 0})
    code = main(["--quiet", "index", "--path", os.devnull])
    error = json.loads(capsys.readouterr().out)["error"]
    assert (code, error["code"]) == (2, "usage_error")
    assert "no root covers" in error["message"]


def test_a_code_profile_root_indexes_changed_and_new_files(ws: Workspace, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "a.py").write_text("def foo():\n    return 1\n")
    ws.add_root(project, profile="code")
    ws.index()
    (project / "a.py").write_text("def foo():\n    return 1\n\n\ndef bar():\n    return 'wombatcheck'\n")
    (project / "b.py").write_text("def baz():\n    return 'quollcheck'\n")
    summary = ws.index(paths=[project / "a.py", project / "b.py"])
    assert counts(summary) == (2, 0, 0, 0)
    assert found(ws, "wombatcheck") == ["a.py"] and found(ws, "quollcheck") == ["b.py"]
