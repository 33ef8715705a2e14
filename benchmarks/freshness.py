"""Freshness: how soon an edit is searchable while ``hermes-workspace watch`` runs (issue 12).

    PYTHONPATH=src python -m benchmarks.freshness [--files 10000] [--samples 20] [--idle 30]
    (or as a part: python -m benchmarks --only freshness)

A synthetic tree of ``files`` small markdown files (100 folders, each file a heading and two
paragraphs of words drawn from a fixed vocabulary) is the primary workspace of a temporary
HERMES_HOME, a git repository when ``git`` is installed, indexed once. Then
``hermes-workspace watch --workers 1 --reconcile-minutes 0`` runs as a child process (the CLI
as users start it) and:

- **edit -> searchable**: ``samples`` times, one file is rewritten with a word no file holds;
  the clock runs from just before the write until an in-process search (one open Workspace,
  polled every 20 ms) returns the file. p50/p95 seconds; target < 1 s.
- **branch switch**: ``git checkout`` of a branch whose commit changes 500 files (each gains a
  branch word), or, without git, the same 500 files rewritten as fast as Python can. Seconds
  until all 500 are found by a search for the branch word; target < 10 s. Then back.
- **idle CPU**: the watcher's user + system CPU time (``/proc/<pid>/stat``, Linux) over
  ``idle`` seconds with no file activity, as a percentage of one core; target < 1%.
- **side by side**: the changed-path runs' own duration (from the watch's JSON lines) against
  a full no-change index run of the same tree (``Workspace.index()``: what a watcher without
  changed-path runs, or ``knowledgebase.auto_index`` before a search, pays per change).

No timed assertions: figures only (``benchmarks/results/freshness.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import QUICK, Mode, cli_env, hermes_cli, log, percentile, save_result, temp_home

VOCABULARY = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
              "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
FOLDERS = 100
BRANCH_FILES = 500
POLL_SECONDS = 0.02
GIVE_UP_SECONDS = 60.0


def write_tree(root: Path, files: int, seed: int = 0) -> list[Path]:
    """``files`` markdown files in :data:`FOLDERS` folders under ``root``."""
    rng = random.Random(seed)
    paths = []
    for i in range(files):
        folder = root / f"d{i % FOLDERS:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"note{i:05d}.md"
        words = " ".join(rng.choice(VOCABULARY) for _ in range(60))
        path.write_text(f"# Note {i}\n\n{words}\n\nsteady{i}\n")
        paths.append(path)
    return paths


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
                        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"})


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of ``pid`` (Linux ``/proc``), ``None`` elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Watcher:
    """``hermes-workspace watch`` as a child process; its JSON lines on a queue."""

    def __init__(self, home: Path) -> None:
        argv = [hermes_cli(), "watch", "--workers", "1", "--reconcile-minutes", "0"]
        self.process = subprocess.Popen(argv, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.batches: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with_data = json.loads(line)
            self.batches.append(with_data)
            self.lines.put(with_data)

    def wait_for(self, reason: str, timeout: float = 600) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            item = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if item.get("reason") == reason:
                return item

    def stop(self) -> dict[str, Any] | None:
        self.process.terminate()
        self.process.wait(timeout=60)
        time.sleep(0.2)
        stopped = [b for b in self.batches if b.get("event") == "stopped"]
        return stopped[-1] if stopped else None


def searchable_after(ws: Any, word: str, wanted: int, started: float) -> float:
    """Seconds from ``started`` until a search for ``word`` finds ``wanted`` files (polled)."""
    while True:
        hits = ws.search(word, limit=max(20, wanted * 2), all_roots=True)
        if len({hit.path for hit in hits}) >= wanted:
            return time.perf_counter() - started
        if time.perf_counter() - started > GIVE_UP_SECONDS:
            return float("nan")
        time.sleep(POLL_SECONDS)


def run(mode: Mode = QUICK, keep: bool = False, *, files: int = 10_000, samples: int | None = None,
        idle: float | None = None) -> dict[str, Any]:
    from hermes_workspace import Workspace

    samples = samples or (20 if mode.name == "quick" else 40)
    idle = idle or (15.0 if mode.name == "quick" else 30.0)
    has_git = shutil.which("git") is not None
    with temp_home("freshness", keep=keep) as home:
        # Searches here must see the watcher's work only, not index on their own.
        (home / "config.yaml").write_text("knowledgebase:\n  auto_index: false\n")
        root = home / "workspace"
        log(f"freshness: writing {files} files")
        paths = write_tree(root, files)
        if has_git:
            git(root, "init", "-q", "-b", "main")
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "tree")
            git(root, "checkout", "-q", "-b", "feature")
            for path in paths[:BRANCH_FILES]:
                path.write_text(path.read_text() + "\nbranchword\n")
            git(root, "commit", "-q", "-am", "feature")
            git(root, "checkout", "-q", "main")
        with Workspace.open(home) as ws:
            started = time.perf_counter()
            cold = ws.index()
            cold_seconds = time.perf_counter() - started
            unchanged = []
            for _ in range(3):
                started = time.perf_counter()
                ws.index()
                unchanged.append(time.perf_counter() - started)
        log(f"freshness: indexed {cold.files_indexed} files in {cold_seconds:.1f}s; no-change run "
            f"{min(unchanged):.2f}s")

        watcher = Watcher(home)
        try:
            watcher.wait_for("catch_up")
            latencies: list[float] = []
            with Workspace.open(home) as ws:
                rng = random.Random(1)
                for k in range(samples):
                    path = paths[rng.randrange(BRANCH_FILES, len(paths))]
                    word = f"fresh{k}zq"
                    started = time.perf_counter()
                    path.write_text(f"# Edited\n\n{word} and more words\n")
                    latencies.append(searchable_after(ws, word, 1, started))
                    time.sleep(0.3)  # one edit at a time: each its own batch
                log(f"freshness: edit -> searchable p50 {percentile(latencies, 50):.3f}s "
                    f"p95 {percentile(latencies, 95):.3f}s")

                started = time.perf_counter()
                if has_git:
                    git(root, "checkout", "-q", "feature")
                else:
                    for path in paths[:BRANCH_FILES]:
                        path.write_text(path.read_text() + "\nbranchword\n")
                switch_write = time.perf_counter() - started
                switch = searchable_after(ws, "branchword", BRANCH_FILES, started)
                log(f"freshness: {BRANCH_FILES}-file branch switch searchable after {switch:.2f}s "
                    f"(the switch itself took {switch_write:.2f}s)")
                if has_git:
                    started = time.perf_counter()
                    git(root, "checkout", "-q", "main")
                    back = searchable_after_gone(ws, "branchword", started)
                else:
                    back = None
            time.sleep(3)  # let the last batch end
            before = cpu_seconds(watcher.process.pid)
            time.sleep(idle)
            after = cpu_seconds(watcher.process.pid)
            idle_pct = None if before is None or after is None else (after - before) / idle * 100
            log(f"freshness: idle CPU {idle_pct:.2f}% of one core over {idle:.0f}s" if idle_pct is not None
                else "freshness: idle CPU not measurable here (no /proc)")
        finally:
            final = watcher.stop()
        change_runs = [b for b in watcher.batches if b.get("reason") in ("changes", "retry")]
        path_seconds = [b["duration_seconds"] for b in change_runs if b.get("paths", 0) <= 2]
        burst_seconds = [b["duration_seconds"] for b in change_runs if b.get("paths", 0) > 2]
        data = {
            "files": files,
            "git": has_git,
            "cold_index_seconds": cold_seconds,
            "no_change_full_run_seconds": min(unchanged),
            "edit_to_searchable": {"n": len(latencies), "p50_s": percentile(latencies, 50),
                                   "p95_s": percentile(latencies, 95), "max_s": max(latencies), "target_s": 1.0},
            "branch_switch": {"files": BRANCH_FILES, "searchable_s": switch, "switch_itself_s": switch_write,
                              "back_gone_s": back, "target_s": 10.0,
                              "batches": [{k: b.get(k) for k in ("reason", "paths", "files_indexed", "duration_seconds")}
                                          for b in change_runs if b.get("paths", 0) > 2]},
            "idle_cpu_percent": idle_pct,
            "idle_seconds": idle,
            "side_by_side": {
                "changed_path_run_p50_s": percentile(path_seconds, 50) if path_seconds else None,
                "full_no_change_run_s": min(unchanged),
                "full_over_changed_path_ratio": (min(unchanged) / percentile(path_seconds, 50)
                                                 if path_seconds and percentile(path_seconds, 50) > 0 else None),
                "burst_run_s": burst_seconds,
            },
            "watch_summary": final,
        }
    save_result("freshness", mode, data)
    return data


def searchable_after_gone(ws: Any, word: str, started: float) -> float:
    """Seconds from ``started`` until no file matches ``word`` (the switch back removed it)."""
    while True:
        if not ws.search(word, limit=20, all_roots=True):
            return time.perf_counter() - started
        if time.perf_counter() - started > GIVE_UP_SECONDS:
            return float("nan")
        time.sleep(POLL_SECONDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.freshness", description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    data = run(QUICK, keep=args.keep, files=args.files, samples=args.samples, idle=args.idle)
    print(json.dumps({k: v for k, v in data.items() if k != "watch_summary"}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
