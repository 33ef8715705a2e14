"""A real process pool indexes exactly what the in-process run indexes (every real adapter)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from hermes_workspace.adapters.progress_sinks import NullProgressSink
from hermes_workspace.adapters.process_pool import ProcessTaskPool
from hermes_workspace.container import build_container
from hermes_workspace.domain.model import IndexSummary

STDLIB = Path(os.__file__).parent
STDLIB_FILES = ("json/decoder.py", "json/encoder.py", "json/__init__.py", "email/message.py", "email/utils.py",
                "argparse.py", "textwrap.py", "difflib.py", "shlex.py", "fnmatch.py", "heapq.py", "bisect.py",
                "contextlib.py", "dataclasses.py", "string.py", "LICENSE.txt")


class CountingPool(ProcessTaskPool):
    """Counts the results it hands out and remembers its workers' process ids."""

    def __init__(self) -> None:
        super().__init__(2, in_flight_per_worker=2, items_per_call=2)
        self.results = 0
        self.worker_pids: set[int] = set()

    def _executor(self, setup: Callable[[], Any]) -> Any:
        executor = super()._executor(setup)
        original = executor.submit

        def submit(*args: Any, **kwargs: Any) -> Any:
            future = original(*args, **kwargs)
            self.worker_pids.update(getattr(executor, "_processes", {}))
            return future

        executor.submit = submit  # type: ignore[method-assign]
        return executor

    def map_ordered(self, fn: Callable[[Any, Any], Any], setup: Callable[[], Any], items: Iterable[Any]) -> Iterator[Any]:
        for result in super().map_ordered(fn, setup, items):
            self.results += 1
            yield result


def make_corpus(root: Path) -> None:
    """About 60 files: stdlib modules (tree-sitter code chunks), markdown with headings, long and
    short text, and files that fail or are skipped (undecodable, binary content, blank)."""
    for name in STDLIB_FILES:
        target = root / "lib" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (STDLIB / name).is_file():
            shutil.copyfile(STDLIB / name, target)
    docs = root / "docs"
    docs.mkdir()
    for i in range(20):
        sections = "\n\n".join(
            f"## Section {j} of guide {i}\n\n" + " ".join(f"word{i}x{j}x{k}" for k in range(60 + 40 * (j % 5)))
            for j in range(3 + i % 7)
        )
        (docs / f"guide{i:02}.md").write_text(f"# Guide {i}\n\nIntro for guide {i}.\n\n{sections}\n")
    notes = root / "notes"
    notes.mkdir()
    for i in range(20):
        lines = "\n".join(f"note {i} line {k} " + "lorem ipsum dolor " * (k % 9) for k in range(10 + 25 * (i % 4)))
        (notes / f"note{i:02}.txt").write_text(lines + "\n")
    (notes / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu ".encode("latin-1") * 40)
    (notes / "undecodable.txt").write_bytes(b"\x81\x8d\x8f\x90\x9d" * 30)
    (notes / "nul.txt").write_bytes(b"text\x00with a NUL byte\n")
    (notes / "blank.txt").write_text("   \n\n")


def rows(home: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    db = apsw.Connection(str(home / "workspace" / ".index" / "workspace.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        files = db.execute(
            "SELECT abs_path, root_path, content_hash, config_signature, size_bytes, mtime_ns, chunk_count "
            "FROM files ORDER BY abs_path"
        ).fetchall()
        chunks = db.execute(
            "SELECT f.abs_path, c.chunk_index, c.content, c.token_count, c.start_line, c.end_line, c.start_char, "
            "c.end_char, c.section, c.kind FROM chunks c JOIN files f ON f.id = c.file_id "
            "ORDER BY f.abs_path, c.chunk_index"
        ).fetchall()
        return files, chunks
    finally:
        db.close()


def index(home: Path, corpus: Path, **overrides: Any) -> IndexSummary:
    home.mkdir()
    container = build_container(home)
    try:
        container.add_root().execute(str(corpus), recursive=True)
        return container.index_workspace(**overrides).execute(NullProgressSink())
    finally:
        container.shutdown_resources()


def test_a_process_pool_run_stores_exactly_the_in_process_chunks(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    serial = index(tmp_path / "serial", corpus, pool=None)
    pool = CountingPool()
    parallel = index(tmp_path / "parallel", corpus, pool=pool, parallel_min_files=0, parallel_min_bytes=0)

    candidates = serial.files_indexed + serial.files_errored + serial.skipped.get("binary_content", 0) + 1
    assert pool.results == candidates  # every file that was read went through the workers
    assert serial.files_indexed >= 55
    assert serial.chunks_created > serial.files_indexed  # the chunkers ran, not only one-chunk files
    for summary in (serial, parallel):
        summary.duration_seconds = 0.0
    assert parallel == serial
    assert (str(corpus / "notes" / "undecodable.txt"), "read", "EncodingError") in [
        (e.path, e.stage, e.error_type) for e in parallel.errors
    ]
    serial_files, serial_chunks = rows(tmp_path / "serial")
    parallel_files, parallel_chunks = rows(tmp_path / "parallel")
    assert parallel_files == serial_files
    assert parallel_chunks == serial_chunks


class InterruptAt:
    """A progress sink that raises KeyboardInterrupt (a Ctrl-C) when file ``at`` comes up."""

    def __init__(self, at: int) -> None:
        self.at = at

    def start(self, total: int) -> None:
        pass

    def advance(self, position: int, total: int, path: Path) -> None:
        if position == self.at:
            raise KeyboardInterrupt

    def finish(self) -> None:
        pass


def test_ctrl_c_during_a_pool_run_keeps_whole_files_and_stops_the_workers(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    home = tmp_path / "home"
    home.mkdir()
    container = build_container(home)
    pool = CountingPool()
    try:
        container.add_root().execute(str(corpus), recursive=True)
        use_case = container.index_workspace(pool=pool, parallel_min_files=0, parallel_min_bytes=0)
        with pytest.raises(KeyboardInterrupt):
            use_case.execute(InterruptAt(30))
    finally:
        container.shutdown_resources()
    assert 0 < pool.results < 60
    files, chunks = rows(home)
    assert 0 < len(files) < 30
    counted = Counter(path for path, *_ in chunks)
    assert all(counted[path] == chunk_count for path, *_, chunk_count in files)  # no file half-written
    assert pool.worker_pids
    for pid in pool.worker_pids:
        with pytest.raises(ProcessLookupError):
            for _ in range(100):  # terminated at once; reaped by the fork server soon after
                os.kill(pid, 0)
                time.sleep(0.05)


def test_workers_start_in_a_folder_holding_a_package_of_the_same_name_as_an_installed_one(tmp_path: Path) -> None:
    """Found indexing pydantic's repository from its root: the fork server (`python -c ...`, the
    current folder first on its path) imported the repository's `pydantic/` folder instead of the
    installed package, crashed, and every worker failed (the run fell back to one process)."""
    script = Path(sys.executable).with_name("hermes-workspace")
    if not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    cwd = tmp_path / "repository"
    (cwd / "dependency_injector").mkdir(parents=True)  # imported by the workers' preload
    (cwd / "dependency_injector" / "__init__.py").write_text("raise SystemError('the folder, not the package')\n")
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    for i in range(60):  # past the pool's thresholds
        (corpus / "bulk" / f"part{i:02}.md").parent.mkdir(exist_ok=True)
        (corpus / "bulk" / f"part{i:02}.md").write_text(f"# Part {i}\n\n" + "words of the part " * 4200)  # 4 MiB in all
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    subprocess.run([str(script), "roots", "add", str(corpus), "--recursive"], env=env, cwd=cwd, check=True,
                   capture_output=True)
    run = subprocess.run([str(script), "--log-level", "info", "index", "--workers", "2"], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "worker processes failed" not in run.stderr
    assert json.loads(run.stdout)["files_indexed"] >= 110
