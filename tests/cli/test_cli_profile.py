"""``roots add --profile code --extension --max-file-size`` (issue 12, codebase profile): the CLI
and the Python API take the same options, write the same config and report the same JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.domain.errors import UsageError
from tests.cli.test_cli import run


def _repo(base: Path) -> Path:
    base.mkdir(parents=True)
    (base / "go.mod").write_text("module x\n")
    (base / "main.go").write_text("package main\n\nfunc main() {}\n")
    (base / "README.md").write_text("# X\n\nA tool.\n")
    (base / "web").mkdir()
    (base / "web" / "app.ts").write_text("export const a = 1\n")
    return base


def test_cli_and_api_add_the_same_root(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> None:
    cli_repo, api_repo = _repo(tmp_path / "cli" / "repo"), _repo(tmp_path / "api" / "repo")
    code, cli, _ = run(capsys, "roots", "add", str(cli_repo), "--profile", "code", "--extension", ".GO",
                       "--extension", ".md", "--max-file-size", "1MB")
    assert code == 0 and cli.pop("config") == {"path": str(home / "config.yaml"), "found": "home", "project": False}
    with Workspace.open(home) as ws:
        api = ws.add_root(api_repo, profile="code", extensions=[".GO", ".md"], max_file_size="1MB").to_json()
    for data, path in ((cli, cli_repo), (api, api_repo)):
        assert {k: v for k, v in data.items() if k not in ("name", "path", "message")} == {
            "recursive": True, "primary": False, "profile": "code", "extensions": [".go", ".md"],
            "max_file_size": 1048576, "action": "added", "previous": None,
        }
        assert data["message"] == f"added {path} as {data['name']} (recursive, profile code, extensions .go .md, " \
                                  "files up to 1048576 bytes)"
    code, listed, _ = run(capsys, "roots", "list")
    assert [(r["profile"], r["extensions"], r["max_file_size"]) for r in listed] == [
        (None, None, None), ("code", [".go", ".md"], 1048576), ("code", [".go", ".md"], 1048576)
    ]
    config = (home / "config.yaml").read_text()
    assert config.count("profile: code") == 2 and config.count("max_file_size: 1MB") == 2


def test_profile_alone_is_recursive_and_detects_at_index(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    code, data, _ = run(capsys, "roots", "add", str(repo), "--profile", "code")
    assert (code, data["recursive"], data["extensions"], data["max_file_size"]) == (0, True, None, None)
    assert run(capsys, "--quiet", "index")[0] == 0
    code, hits, _ = run(capsys, "search", "main tool export", "--limit", "10")
    assert sorted({Path(h["path"]).name for h in hits}) == ["README.md", "main.go"]
    # Changing the settings of a root already added keeps the others.
    code, data, _ = run(capsys, "roots", "add", str(repo), "--max-file-size", "20")
    assert (code, data["action"], data["profile"], data["recursive"], data["max_file_size"]) == (
        0, "updated", "code", True, 20)
    code, data, _ = run(capsys, "roots", "add", str(repo), "--profile", "none", "--no-recursive")
    assert (code, data["profile"], data["recursive"], data["max_file_size"]) == (0, None, False, 20)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (["--profile", "docs"], {"profile": "docs"}, "--profile must be one of code, got the string 'docs'"),
        (["--extension", "go"], {"extensions": ["go"]}, "--extension: an extension starts with a dot: write '.go'"),
        (["--max-file-size", "1 XB"], {"max_file_size": "1 XB"}, "--max-file-size has an unknown size unit 'XB' in '1 XB'"),
        (["--max-file-size", "0"], {"max_file_size": "0"}, "--max-file-size must be at least 1 byte"),
    ],
)
def test_cli_and_api_refuse_the_same_values(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, args: list[str], kwargs: dict, message: str
) -> None:
    repo = _repo(tmp_path / "repo")
    code, data, _ = run(capsys, "roots", "add", str(repo), *args)
    assert (code, data["error"]["code"]) == (2, "usage_error")
    assert data["error"]["message"].startswith(message)
    with Workspace.open(home) as ws, pytest.raises(UsageError) as info:
        ws.add_root(repo, **kwargs)
    assert info.value.message == data["error"]["message"]
    assert not (home / "config.yaml").exists() or "profile" not in (home / "config.yaml").read_text()


def test_the_primary_workspace_takes_no_profile(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    (home / "workspace").mkdir()
    code, data, _ = run(capsys, "roots", "add", str(home / "workspace"), "--profile", "code")
    assert (code, data["error"]["code"]) == (2, "usage_error")
    assert "takes no profile" in data["error"]["message"]


def test_other_edits_keep_the_settings_and_their_spelling(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    (home / "config.yaml").write_text(
        f"knowledgebase:\n  roots:\n    - path: {repo}\n      profile: code\n      extensions: [.go]\n"
        "      max_file_size: 1024KB  # a megabyte\n"
    )
    code, data, _ = run(capsys, "roots", "rename", "repo", "tool")
    assert (code, data["profile"], data["extensions"], data["max_file_size"], data["recursive"]) == (
        0, "code", [".go"], 1048576, True)
    code, data, _ = run(capsys, "roots", "add", str(repo), "--extension", ".go")
    assert (code, data["action"]) == (0, "unchanged")
    text = (home / "config.yaml").read_text()
    assert "max_file_size: 1024KB  # a megabyte" in text and "name: tool" in text and "recursive" not in text
