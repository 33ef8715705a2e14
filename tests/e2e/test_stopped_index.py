"""Stopping ``hermes-workspace index`` from outside (SIGTERM, SIGKILL) while worker processes run:
no process it started survives it, SIGTERM ends it like Ctrl-C (whole files kept, the JSON error
``terminated``, exit 143), and the index stays whole.

The CLI runs in a child process through a small launcher that pauses the run when the file at
``PAUSE_AT`` comes up (the test seam: a progress sink that sleeps), so the signal always arrives
in the middle of a pool run, whatever the machine's speed. The process tree is read from /proc.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import apsw
import pytest

from hermes_workspace.entrypoints.api import Workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc"),
]

FILES = 24
FILE_BYTES = 200_000  # 24 x 200 KB: above the 4 MB from which the index uses its workers
PAUSE_AT = 13  # the run stops when file 13 comes up: files 1-12 are stored
DEADLINE = 60.0  # seconds; generous, for a loaded machine (a bound on waiting, not a measurement)

LAUNCHER = '''
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # the fork server imports this module too
    from hermes_workspace.adapters import memory
    from hermes_workspace.entrypoints.cli import main

    pause_at, marker = int(sys.argv[1]), Path(sys.argv[2])
    advance = memory.NullProgressSink.advance

    def pausing_advance(self, position, total, path):
        if position == pause_at:
            # Written whole, then renamed: the test reads it as soon as it exists.
            marker.with_suffix(".tmp").write_text(str(path))
            marker.with_suffix(".tmp").replace(marker)
            time.sleep(3600)  # until the test's signal
        advance(self, position, total, path)

    memory.NullProgressSink.advance = pausing_advance
    sys.exit(main(sys.argv[3:]))
'''


def make_corpus(root: Path) -> list[Path]:
    """``FILES`` text files of ``FILE_BYTES`` each, paragraphs of seeded random words; file ``i``
    holds the word ``uniqueNN`` (its number) that no other file holds."""
    rng = random.Random(8)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 10)))
                  for _ in range(5000)]
    root.mkdir()
    paths = []
    for i in range(FILES):
        paragraphs = [f"unique{i:02} opens file {i}."]
        size = 0
        while size < FILE_BYTES:
            paragraph = " ".join(rng.choices(vocabulary, k=rng.randint(20, 120)))
            paragraphs.append(paragraph)
            size += len(paragraph) + 2
        path = root / f"doc{i:02}.txt"
        path.write_text("\n\n".join(paragraphs) + "\n")
        paths.append(path)
    return paths


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), or ``None``
    when the process is gone or a zombie (it has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else fields


def parent_of(pid: int) -> int | None:
    """The parent pid of a live process (``None`` when gone or a zombie)."""
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def started_at(pid: int) -> str | None:
    """The start time of a live process (clock ticks after boot): with the pid, its identity."""
    fields = _stat(pid)
    return None if fields is None else fields[19]


def descendants(pid: int) -> dict[int, int]:
    """``{pid: parent pid}`` of every live descendant of ``pid``."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (ppid := parent_of(int(entry))) is not None:
            parents[int(entry)] = ppid
    found: dict[int, int] = {}
    todo = [pid]
    while todo:
        current = todo.pop()
        for child, ppid in parents.items():
            if ppid == current and child not in found:
                found[child] = ppid
                todo.append(child)
    return found


def wait_until_gone(pids: Iterable[int]) -> list[int]:
    """The pids still alive after waiting up to ``DEADLINE`` for them to exit."""
    alive = list(pids)
    end = time.monotonic() + DEADLINE
    while alive and time.monotonic() < end:
        time.sleep(0.05)
        alive = [pid for pid in alive if parent_of(pid) is not None]
    return alive


def rows(home: Path) -> tuple[list[tuple[str, int]], Counter[str]]:
    db = apsw.Connection(str(home / "workspace" / ".index" / "workspace.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        files = db.execute("SELECT abs_path, chunk_count FROM files ORDER BY abs_path").fetchall()
        chunks = Counter(path for (path,) in db.execute(
            "SELECT f.abs_path FROM chunks c JOIN files f ON f.id = c.file_id"))
        return files, chunks
    finally:
        db.close()


class PausedIndex:
    """``index --workers 2`` in a child process, paused at file ``PAUSE_AT`` with its workers
    running; on exit, whatever it started and is still alive is killed (only those pids)."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.corpus = make_corpus(tmp_path / "corpus")
        with Workspace.open(str(self.home)) as ws:
            ws.add_root(str(tmp_path / "corpus"), recursive=True)
        launcher = tmp_path / "launch_index.py"
        launcher.write_text(LAUNCHER)
        self.marker = tmp_path / "paused"
        env = {k: v for k, v in os.environ.items() if k != "HERMES_INDEX_WORKERS"}
        env["HERMES_HOME"] = str(self.home)
        self.process = subprocess.Popen(
            [sys.executable, str(launcher), str(PAUSE_AT), str(self.marker), "--quiet", "index", "--workers", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
        )
        self.started: dict[int, int] = {}
        self._identities: dict[int, str | None] = {}

    def __enter__(self) -> PausedIndex:
        end = time.monotonic() + DEADLINE
        while not self.marker.exists() and self.process.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        if not self.marker.exists():
            self.process.kill()
            stdout, stderr = self.process.communicate(timeout=DEADLINE)
            pytest.fail(f"the run did not reach file {PAUSE_AT}: exit {self.process.returncode}\n{stdout}\n{stderr}")
        self.started = descendants(self.process.pid)
        self._identities = {pid: started_at(pid) for pid in self.started}
        try:
            assert self.marker.read_text() == str(self.corpus[PAUSE_AT - 1])
        except BaseException:
            self.__exit__(None, None, None)  # a failed start must not leave the paused run behind
            raise
        return self

    def workers(self) -> list[int]:
        """The started processes that are not children of the CLI itself (the fork server's)."""
        return [pid for pid, ppid in self.started.items() if ppid != self.process.pid]

    def stop(self, signum: int) -> int:
        """Send ``signum``; the exit code."""
        self.process.send_signal(signum)
        return self.process.wait(timeout=DEADLINE)

    def output(self) -> tuple[str, str]:
        """stdout and stderr (complete once every process that inherited them has exited)."""
        return self.process.communicate(timeout=DEADLINE)

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        for pid, identity in self._identities.items():
            if identity is not None and started_at(pid) == identity:  # still the process we started
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=DEADLINE)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def test_sigterm_stops_index_like_ctrl_c_and_leaves_no_process(tmp_path: Path) -> None:
    with PausedIndex(tmp_path) as run:
        assert len(run.workers()) == 2  # the pool is running: two workers under the fork server
        code = run.stop(signal.SIGTERM)
        assert wait_until_gone(run.started) == []
        stdout, stderr = run.output()

    assert code == 143
    error = json.loads(stdout)["error"]
    assert error["code"] == "terminated"
    assert error["hint"]
    assert "leaked" not in stderr
    assert "Traceback" not in stderr
    files, chunks = rows(run.home)
    assert [path for path, _ in files] == [str(p) for p in run.corpus[: PAUSE_AT - 1]]
    assert all(chunks[path] == count > 0 for path, count in files)  # whole files only
    with Workspace.open(str(run.home)) as ws:
        hits = ws.search("unique05")
    assert {hit.path for hit in hits} == {run.corpus[5]}


def test_sigkill_of_index_leaves_no_process(tmp_path: Path) -> None:
    with PausedIndex(tmp_path) as run:
        assert len(run.workers()) == 2
        code = run.stop(signal.SIGKILL)
        assert wait_until_gone(run.started) == []

    assert code == -signal.SIGKILL
    files, chunks = rows(run.home)  # the index opens and holds whole files only
    assert len(files) < PAUSE_AT
    assert all(chunks[path] == count > 0 for path, count in files)
