"""First hybrid index of a whole-repository set, side by side for several source trees.

``python -m benchmarks.embedding_rate [--set code-nav-flask] [--src PATH ...]``

Each ``--src`` is a folder holding the ``hermes_workspace`` package (``src/`` of a checkout, for
example a ``git worktree`` of an older commit); the default is this checkout only. For each, in
turn and in a process of its own (``PYTHONPATH=<src>``), the set's corpus is unpacked into a fresh
home with the onnx embedder configured, added as a root and indexed once: chunks, wall seconds of
the whole index and chunks embedded per second. Run the trees one after the other on an idle
machine; the ratio between them is the figure to read. Needs the ``semantic`` extra and the
exported model (``HERMES_MODELS_DIR``, default ``benchmarks/work/semantic/models``, made by the
semantic part).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks import common

_CHILD = r"""
import json, os, sys, tarfile, tempfile, time
from pathlib import Path
archive = sys.argv[1]
home = Path(tempfile.mkdtemp(prefix="embedding-rate-"))
root = home / "corpus"
root.mkdir()
with tarfile.open(archive) as tar:
    tar.extractall(root, filter="data")
(home / "config.yaml").write_text("knowledgebase:\n  embedder:\n    provider: onnx\n")
from hermes_workspace import Workspace
with Workspace.open(home) as ws:
    ws.add_root(root, recursive=True)
    started = time.perf_counter()
    summary = ws.index()
    seconds = time.perf_counter() - started
    chunks = ws.status().chunks
print(json.dumps({"chunks": chunks, "seconds": round(seconds, 1), "chunks_per_second": round(chunks / seconds, 2),
                  "embedded": summary.semantic.embedded if summary.semantic else 0}))
"""


def measure(src: Path, archive: Path, models: Path) -> dict[str, object]:
    """One first hybrid index of ``archive`` with the package under ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "HERMES_MODELS_DIR": str(models)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(archive)], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return {"src": str(src), "error": done.stderr.strip().splitlines()[-1:]}
    return {"src": str(src), **json.loads(done.stdout.strip().splitlines()[-1])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.embedding_rate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="code-nav-flask", help="a whole-repository set (default code-nav-flask)")
    parser.add_argument("--src", action="append", type=Path, help="a folder holding hermes_workspace (repeatable)")
    args = parser.parse_args(argv)
    archive = common.DATASETS_DIR / args.set / "corpus.tar.gz"
    if not archive.is_file():
        parser.error(f"no corpus at {archive}")
    models = Path(os.environ.get("HERMES_MODELS_DIR", common.REPO_DIR / "benchmarks" / "work" / "semantic" / "models"))
    rows = [measure(src.resolve(), archive, models) for src in (args.src or [common.REPO_DIR / "src"])]
    print("| source | chunks | seconds | chunks/s |\n|---|---:|---:|---:|")
    for row in rows:
        if "error" in row:
            print(f"| {row['src']} | failed: {row['error']} | | |")
        else:
            print(f"| {row['src']} | {row['chunks']} | {row['seconds']} | {row['chunks_per_second']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
