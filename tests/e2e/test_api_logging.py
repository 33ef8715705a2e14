"""The Python API is a guest in its caller's process: nothing on stdout/stderr, logs to the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from pathlib import Path
from hermes_workspace import Workspace
home = Path(sys.argv[1])
with Workspace.open(home) as ws:
    summary = ws.index()
    hits = ws.search("readable")
print("RESULT", summary.files_indexed, summary.files_errored, len(hits))
"""


def test_api_prints_nothing_and_logs_failures_without_file_contents(tmp_path: Path) -> None:
    home = tmp_path / "home"
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "good.md").write_text("# Good\n\nreadable text\n")
    (docs / "bad.txt").write_bytes(b"SECRETBYTES \x81\x8d\x8f\x90\x9d" * 3)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(home)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "RESULT 1 1 1\n"
    assert proc.stderr == ""
    records = [json.loads(line) for line in (home / "logs" / "workspace.log").read_text().splitlines()]
    failure = next(r for r in records if r["event"] == "file failed")
    assert failure["path"] == str(docs / "bad.txt")
    assert failure["stage"] == "read"
    assert failure["exception"][0]["exc_type"] == "DecodeError"
    assert "SECRETBYTES" not in (home / "logs" / "workspace.log").read_text()
    assert any(r["event"] == "index finished" for r in records)
