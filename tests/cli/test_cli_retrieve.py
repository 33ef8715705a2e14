"""`retrieve` on the command line: the printed JSON is the pack's serialization, within budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_workspace.adapters.tiktoken_counter import TiktokenCounter
from hermes_workspace.domain.packing import PREAMBLE
from hermes_workspace.entrypoints.cli import main
from tests.cli.test_cli import RUNBOOK


@pytest.fixture
def indexed(home: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    ws = home / "workspace"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "runbook.md").write_text(RUNBOOK)
    (ws / "code").mkdir()
    (ws / "code" / "tool.py").write_text("def rollback(release):\n    return release\n")
    assert main(["--quiet", "index"]) == 0
    capsys.readouterr()
    return ws


def test_retrieve_prints_the_pack_verbatim_within_the_budget(capsys: pytest.CaptureFixture[str], indexed: Path) -> None:
    # 440, not 400 as first written: `scope` and each block's `root_name` (issue 12) cost about 32
    # tokens here, and at 400 the runbook block was cut before its answer.
    assert main(["retrieve", "rollback", "controller", "--budget", "440"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and out.count("\n") == 1  # one compact line
    printed = out[:-1]
    counter = TiktokenCounter()
    data = json.loads(printed)
    assert data["tokens"] == counter.count(printed) <= 440
    assert data["framing"] == PREAMBLE
    first = data["blocks"][0]
    assert first["relative_path"] == "docs/runbook.md"
    assert first["path"] == str(indexed / "docs" / "runbook.md")
    assert "rollback controller restores" in first["text"]
    assert first["handle"].startswith(data["result_set"] + ":")
    lines = RUNBOOK.split("\n")
    assert first["text"] == "\n".join(lines[first["line_start"] - 1 : first["line_end"]])
    assert data["coverage"]["files_indexed"] == 2


def test_retrieve_human_prints_the_framed_text(capsys: pytest.CaptureFixture[str], indexed: Path) -> None:
    assert main(["--human", "retrieve", "rollback", "controller"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[System note: The following workspace context")
    assert "[Workspace source: docs/runbook.md, lines " in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["retrieve", "rollback", "--budget", "ten"], "--budget must be a whole number"),
        (["retrieve", "rollback", "--budget", "5"], "cannot hold every page of this retrieve"),
        (["retrieve", "rollback", "--max-chunks", "0"], "max_chunks must be a whole number from 1 to 50"),
        (["retrieve", " "], "retrieve needs a query"),
    ],
)
def test_retrieve_usage_errors(capsys: pytest.CaptureFixture[str], indexed: Path, args: list[str], message: str) -> None:
    assert main(args) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "usage_error" and message in error["message"]


def test_retrieve_before_index_is_a_clean_error(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    assert main(["retrieve", "rollback"]) == 66
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "index_missing"


def test_more_of_a_retrieve_prints_one_compact_line_within_the_budget(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a trial: `more` of a retrieve set printed indented JSON, 636 tokens for a budget of 600."""
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    for i in range(30):
        (docs / f"note{i:02}.md").write_text(f"# Note {i}\n\n" + f"The deployment wave {i} was rolled out. " * 12 + "\n")
    assert main(["--quiet", "index"]) == 0
    capsys.readouterr()
    assert main(["retrieve", "deployment", "wave", "--budget", "600"]) == 0
    cursor = json.loads(capsys.readouterr().out)["cursor"]
    assert main(["more", cursor]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and out.count("\n") == 1
    data = json.loads(out)
    assert data["offset"] == int(cursor.split("@")[1]) and data["blocks"]
    counter = TiktokenCounter()
    assert data["tokens"] == counter.count(out[:-1]) <= 600
