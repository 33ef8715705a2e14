"""The console script's launcher: `--version` without importing the CLI, everything else through it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_workspace import __version__
from hermes_workspace.entrypoints.launcher import main


def test_version_answers_without_importing_the_command_line() -> None:
    code = ("import sys; from hermes_workspace.entrypoints.launcher import main; rc = main(['--version']); "
            "print(sorted(m for m in sys.modules if m.startswith(('cyclopts', 'hermes_workspace.entrypoints.cli', "
            "'hermes_workspace.container', 'dependency_injector')))); sys.exit(rc)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == [__version__, "[]"]


def test_every_other_command_goes_through_the_command_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roots", "list"]) == 0
    roots = json.loads(capsys.readouterr().out)
    assert roots[0]["primary"] is True
