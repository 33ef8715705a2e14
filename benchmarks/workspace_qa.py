"""Workspace QA: does the first hit let an agent jump straight to the answer, on whole repositories?

``python -m benchmarks.workspace_qa [--set NAME ...] [--mode keyword|hybrid ...] [--set-config KEY=VALUE ...]``

For each whole-repository set in the datasets folder (a ``corpus.tar.gz`` with a line-level
``queries.jsonl``: docs-qa-pydantic, code-nav-flask), the corpus is unpacked into a fresh home,
added as one recursive root and indexed through the public API; every query is searched (10 hits)
and the hits are scored by the datasets' own ``score_workspace_qa.py``: a query is answered at rank
k when one of its first k hits is in the gold file, overlaps the gold lines and is at most
``max(3 x gold span, 60)`` lines long. Reported per style: top-1/3/10, misses, the misses where the
right place was found but too long; and the median hit span.

``--set-config knowledgebase.chunking.chunk_size=150`` (repeatable) writes settings into the home's
config.yaml first (dotted keys, YAML values), to compare settings in one run. Hybrid mode needs the
``semantic`` extra; it configures the onnx embedder and embeds every chunk (minutes). Results:
``results/workspace_qa.json`` (one entry per set, mode and settings).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common

SCORER = common.DATASETS_DIR / "score_workspace_qa.py"
HITS = 10


def list_sets() -> list[Path]:
    """The whole-repository sets: folders with ``corpus.tar.gz`` and ``queries.jsonl``."""
    if not common.DATASETS_DIR.is_dir():
        return []
    return sorted(
        p for p in common.DATASETS_DIR.iterdir() if (p / "corpus.tar.gz").is_file() and (p / "queries.jsonl").is_file()
    )


def _scorer() -> Any:
    spec = importlib.util.spec_from_file_location("score_workspace_qa", SCORER)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {SCORER}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unpack(archive: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _write_config(home: Path, settings: dict[str, Any]) -> None:
    """Dotted ``settings`` as nested YAML mappings in ``home/config.yaml`` (JSON is YAML)."""
    document: dict[str, Any] = {}
    for dotted, value in settings.items():
        node = document
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    (home / "config.yaml").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _parse_setting(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return key.strip(), value


def run_set(set_dir: Path, mode: str, settings: dict[str, Any], *, keep: bool = False) -> dict[str, Any]:
    """Index ``set_dir``'s corpus with ``settings``, search every query in ``mode``, score."""
    from hermes_workspace import Workspace

    queries = [json.loads(line) for line in (set_dir / "queries.jsonl").read_text().splitlines() if line.strip()]
    config = dict(settings)
    if mode == "hybrid":
        config.setdefault("knowledgebase.embedder.provider", "onnx")
    with common.temp_home(f"qa-{set_dir.name}", keep=keep) as home:
        corpus = _unpack(set_dir / "corpus.tar.gz", home / "corpus")
        if config:
            _write_config(home, config)
        with Workspace.open(home) as ws:
            ws.add_root(corpus, recursive=True)
            started = time.perf_counter()
            summary = ws.index()
            index_seconds = time.perf_counter() - started
            status = ws.status()
            rows, latencies = [], []
            for query in queries:
                started = time.perf_counter()
                hits = ws.search(query["query"], limit=HITS, mode=mode)
                latencies.append(time.perf_counter() - started)
                rows.append({"id": query["id"], "hits": [
                    {"path": str(hit.path), "line_start": hit.line_start, "line_end": hit.line_end}
                    for hit in hits
                ]})
        hits_file = home / "hits.jsonl"
        hits_file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        report_file = home / "score.json"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            _scorer().main(["score_workspace_qa.py", str(set_dir), str(hits_file), "--root", str(corpus),
                            "--json", str(report_file)])
        report = json.loads(report_file.read_text())
    return {
        "set": set_dir.name,
        "mode": mode,
        "settings": settings,
        "files": status.files,
        "chunks": status.chunks,
        "index_seconds": round(index_seconds, 2),
        "errors": summary.files_errored,
        "search_ms": common.summarize_ms(latencies),
        "styles": report["styles"],
        "median_hit_span": report["median_hit_span"],
        "ranks": report["ranks"],
        "printed": printed.getvalue(),
    }


def table(results: list[dict[str, Any]]) -> str:
    """A markdown table: one row per set, mode, settings and style (top-1/3/10 in %), then the
    median hit span."""
    lines = ["| set | mode | settings | style | n | top-1 | top-3 | top-10 | median span |",
             "|---|---|---|---|---|---|---|---|---|"]
    for result in results:
        settings = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in result["settings"].items()) or "default"
        for style, s in result["styles"].items():
            n = s["n"]
            lines.append(
                f"| {result['set']} | {result['mode']} | {settings} | {style} | {n} | "
                f"{100 * s['top1'] / n:.0f}% | {100 * s['top3'] / n:.0f}% | {100 * s['top10'] / n:.0f}% | "
                f"{result['median_hit_span'] if style == 'all' else ''} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workspace_qa", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", dest="sets", help="a set name (default: every whole-repository set)")
    parser.add_argument("--mode", action="append", dest="modes", choices=("keyword", "hybrid"),
                        help="retrieval mode (repeatable; default keyword)")
    parser.add_argument("--set-config", action="append", dest="configs", type=_parse_setting, default=[],
                        help="a dotted config key and its value, e.g. knowledgebase.chunking.chunk_size=150")
    parser.add_argument("--keep", action="store_true", help="keep the temporary homes")
    parser.add_argument("--no-save", action="store_true", help="do not write results/workspace_qa.json")
    args = parser.parse_args(argv)
    sets = [s for s in list_sets() if not args.sets or s.name in args.sets]
    if not sets:
        parser.error(f"no whole-repository set found in {common.DATASETS_DIR}")
    settings = dict(args.configs)
    results = []
    for set_dir in sets:
        for mode in args.modes or ["keyword"]:
            common.log(f"workspace QA: {set_dir.name}, {mode}, {settings or 'default settings'}")
            result = run_set(set_dir, mode, settings, keep=args.keep)
            results.append(result)
            common.log(result["printed"].rstrip().splitlines()[-1])
    print(table(results))
    if not args.no_save:
        common.save_result("workspace_qa", common.MODES["quick"], {"runs": [
            {k: v for k, v in r.items() if k != "printed"} for r in results
        ]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
