"""``hermes-workspace watch`` as a process (issue 12): one JSON line per run on stdout, exit 0 on
SIGTERM or Ctrl-C with a final summary line, error exits as elsewhere."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace import Workspace
from hermes_workspace.entrypoints.cli import main

pytest.importorskip("watchfiles")

TIMEOUT = 90.0


class WatchProcess:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hermes_workspace", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.all: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.all.append(line)
            self.lines.put(line)

    def next_line(self, where: Any) -> Any:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.process.kill()
                raise AssertionError(f"no matching line within {TIMEOUT:.0f}s; stderr: "
                                     f"{self.process.stderr.read() if self.process.stderr else ''}") from None
            data = json.loads(line)
            if where(data):
                return data

    def stop(self, signum: int) -> tuple[int, list[dict[str, Any]], str]:
        self.process.send_signal(signum)
        code = self.process.wait(timeout=TIMEOUT)
        time.sleep(0.1)  # the reader thread drains the pipe
        err = self.process.stderr.read() if self.process.stderr else ""
        return code, [json.loads(line) for line in self.all], err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_watch_prints_a_line_per_batch_and_exits_0_on_a_stop_signal(home: Path, signum: int) -> None:
    root = home / "workspace"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nfirst text\n")
    with Workspace.open(home) as ws:
        ws.index()  # also creates the workspace's folders, which would be events of the watch's first run
    (root / "a.md").write_text("# A\n\nchanged before the watch started\n")
    watch = WatchProcess("watch", "--debounce-ms", "50", "--workers", "1")
    first = watch.next_line(lambda d: d.get("event") == "batch")
    assert first["reason"] == "catch_up" and first["files_indexed"] == 1 and first["error"] is None
    (root / "b.md").write_text("# B\n\nwritten while watching\n")
    changed = watch.next_line(lambda d: d.get("reason") == "changes")
    assert changed["paths"] == 1 and changed["files_indexed"] == 1 and changed["pending"] == 0
    assert set(changed) >= {"event", "reason", "paths", "pending", "seconds", "at", "error", "files_indexed",
                            "files_pruned", "files_skipped", "files_errored", "duration_seconds"}
    code, lines, err = watch.stop(signum)
    assert code == 0, err
    assert "Traceback" not in err
    last = lines[-1]
    assert last["event"] == "stopped"
    assert last["stopped_by"] == ("terminated" if signum == signal.SIGTERM else "interrupt")
    assert (last["batches"], last["files_indexed"], last["full_runs"]) == (2, 2, 1)
    assert last["roots"] == [str(root)]
    assert all(json.loads(json.dumps(line)) for line in lines)  # every stdout line is one JSON object


def test_watch_on_an_invalid_config_is_the_config_error(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    (home / "config.yaml").write_text("knowledgebase:\n  watch:\n    debounce_ms: 0\n")
    code = main(["watch"])
    out = json.loads(capsys.readouterr().out)
    assert code == 78
    assert out["error"]["code"] == "config_invalid"
    assert "knowledgebase.watch.debounce_ms" in out["error"]["message"]


def test_watch_options_are_checked(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code = main(["watch", "--debounce-ms", "0"])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and out["error"]["code"] == "usage_error"


@pytest.mark.parametrize("workers", ["0", "65"])
def test_watch_refuses_a_bad_number_of_workers_at_once(capsys: pytest.CaptureFixture[str], home: Path,
                                                       workers: str) -> None:
    # Trial: it was checked by every index run of the watch, which failed every 2 s forever.
    code = main(["watch", "--workers", workers])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and out["error"]["code"] == "usage_error" and "workers must be >= 1" in out["error"]["message"]
