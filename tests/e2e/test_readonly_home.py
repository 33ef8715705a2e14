"""Searching an index in a folder this process may not write (a read-only home) works: found in a
trial, `search` failed with "attempt to write a readonly database" because SQLite could not create
the WAL's -shm file."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_workspace.entrypoints.cli import main


def _without_write_permission(argv: list[str]) -> list[str]:
    """``argv`` run so that file permissions apply: as is for a normal user; as root, through
    setpriv without the capabilities that bypass them."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", *argv]


def test_search_and_status_in_a_read_only_home(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = home / "workspace" / "notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text("# Title\n\nhello from a read-only home\n")
    assert main(["--quiet", "index"]) == 0
    capsys.readouterr()
    index_dir = home / "workspace" / ".index"
    assert not Path(f"{index_dir / 'workspace.sqlite'}-shm").exists()
    writable = {path: path.stat().st_mode for path in [home, *home.rglob("*")]}
    try:
        for path, mode in writable.items():
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        for command in (["search", "hello"], ["status"]):
            proc = subprocess.run(
                _without_write_permission([sys.executable, "-m", "hermes_workspace", *command]),
                capture_output=True, text=True, timeout=120, env={**os.environ, "HERMES_HOME": str(home)},
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            data = json.loads(proc.stdout)
            if command[0] == "search":
                assert [Path(hit["path"]).name for hit in data] == ["a.md"]
            else:
                assert (data["indexed"], data["files"]) == (True, 1)
    finally:
        for path, mode in writable.items():
            path.chmod(mode)
