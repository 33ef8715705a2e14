"""Project configs through the CLI (issue 12): discovery from the working directory, ``--config``,
errors naming the project file, and the config in use in ``status`` and ``roots`` output."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.entrypoints.cli import _serves_a_protocol
from tests.cli.test_cli import run

NAME = ".hermes-workspace.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a project config naming a sibling root, and a file in each."""
    folder = tmp_path / "repo"
    (folder / "src").mkdir(parents=True)
    (folder / NAME).write_text("# team roots\nknowledgebase:\n  roots:\n    - path: ../wiki  # shared wiki\n")
    (folder / "src" / "deploy.md").write_text("# Deploy\n\nThe narwhal rollout.\n")
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "page.md").write_text("# Page\n\nNarwhal history.\n")
    return folder


def test_the_cli_uses_the_project_file_above_its_working_directory(
    capsys: pytest.CaptureFixture[str], home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src")
    code, roots, _ = run(capsys, "roots", "list")
    assert code == 0 and [(r["name"], r["path"]) for r in roots] == [
        ("workspace", str(repo)), ("wiki", str(repo.parent / "wiki"))]
    assert run(capsys, "--quiet", "index")[1]["files_indexed"] == 3
    code, hits, _ = run(capsys, "search", "narwhal", "--all")
    assert sorted(h["path"] for h in hits) == sorted([str(repo.parent / "wiki" / "page.md"), str(repo / "src" / "deploy.md")])
    code, status, _ = run(capsys, "status")
    assert status["config"] == {"path": str(repo / NAME), "found": "project", "project": True}
    assert Path(status["index_path"]).parent.parent == home / "projects"
    code, text, _ = run(capsys, "--human", "roots", "list")
    assert text.splitlines()[0] == f"config: {repo / NAME} (project)"
    code, text, _ = run(capsys, "--human", "status")
    assert text.splitlines()[0] == f"config: {repo / NAME} (project)"
    assert not (repo / ".index").exists() and not (home / "workspace").exists()


def test_config_option_beats_the_project_file(
    capsys: pytest.CaptureFixture[str], home: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, roots, _ = run(capsys, "--config", str(home / "config.yaml"), "roots", "list")
    assert code == 0 and [r["path"] for r in roots] == [str(home / "workspace")]
    other = tmp_path / "other"
    other.mkdir()
    (other / "team.yaml").write_text("workspace:\n  name: other\n")
    code, status, _ = run(capsys, "--config", str(other / "team.yaml"), "status")
    assert status["config"] == {"path": str(other / "team.yaml"), "found": "option", "project": True}
    code, data, _ = run(capsys, "--config", str(tmp_path / "nope.yaml"), "roots", "list")
    assert (code, data["error"]["code"]) == (2, "usage_error")


def test_roots_add_writes_the_project_file_and_says_so(
    capsys: pytest.CaptureFixture[str], home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo.parent / "specs").mkdir()
    monkeypatch.chdir(repo / "src")
    code, data, _ = run(capsys, "roots", "add", "../../specs")
    assert (code, data["action"], data["config"]["path"]) == (0, "added", str(repo / NAME))
    text = (repo / NAME).read_text()
    assert "# team roots" in text and "# shared wiki" in text and "- path: ../specs" in text
    assert not (home / "config.yaml").exists()
    code, data, _ = run(capsys, "roots", "remove", str(repo.parent / "specs"))
    assert (code, data["config"]["found"]) == (0, "project")
    assert "specs" not in (repo / NAME).read_text()


def test_a_bad_project_file_exits_78_naming_the_file(
    capsys: pytest.CaptureFixture[str], home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / NAME).write_text("knowledgebase:\n  reranker:\n    provider: cross-encoder\n")
    monkeypatch.chdir(repo / "src")
    code, data, _ = run(capsys, "search", "narwhal")
    assert code == 78
    assert data["error"]["code"] == "config_invalid"
    assert data["error"]["message"] == f"{repo / NAME}: knowledgebase.reranker is not a setting of a project config"
    assert "HERMES_HOME/config.yaml" in data["error"]["hint"] and "--config" in data["error"]["hint"]


def test_config_takes_a_value_before_the_protocol_command() -> None:
    assert _serves_a_protocol(["--config", "mcp", "search"]) is False
    assert _serves_a_protocol(["--config", "team.yaml", "mcp"]) is True
