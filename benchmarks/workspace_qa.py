"""Workspace QA: does the first hit let an agent jump straight to the answer, on whole repositories?

A part of ``python -m benchmarks`` (:func:`run`), and standalone:
``python -m benchmarks.workspace_qa [--set NAME ...] [--mode keyword|hybrid ...] [--set-config KEY=VALUE ...]
[--no-baselines] [--no-save]``.

For each whole-repository set in the datasets folder (a ``corpus.tar.gz`` with a line-level
``queries.jsonl``: docs-qa-pydantic, code-nav-flask), the corpus is unpacked into a fresh home,
added as one recursive root and indexed through the public API; every query is searched (10 hits)
and the hits are scored by the datasets' own ``score_workspace_qa.py``: a query is answered at rank
k when one of its first k hits is in the gold file, overlaps the gold lines and is at most
``max(3 x gold span, 60)`` lines long. Reported per style: top-1/3/10, misses, the misses where the
right place was found but too long; and the median hit span.

Two baselines (:mod:`benchmarks.qa_baselines`) are scored by the same scorer in the same run:
``bm25s-units`` (bm25s over ast definitions, markdown sections and 50-line windows) and
``ripgrep-proxy`` (files ranked by matching lines, as ``rg -c`` output ranks them).

Part modes: quick = keyword mode on every set + both baselines; full = keyword and hybrid + both
baselines. Hybrid needs the ``semantic`` extra and the local onnx model; without them it is
skipped with the reason in the result. Its ONNX export is shared with the semantic part
(``benchmarks/work/semantic/models``, through ``HERMES_MODELS_DIR``).

``--set-config knowledgebase.chunking.chunk_size=150`` (repeatable) writes settings into the home's
config.yaml first (dotted keys, YAML values), to compare settings in one run. Results:
``results/workspace_qa.json`` (one entry per set and system: ours per mode and settings, each
baseline; plus the runs that were skipped and why).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import common, qa_baselines

SCORER = common.DATASETS_DIR / "score_workspace_qa.py"
HITS = qa_baselines.HITS
OURS = "hermes-workspace"
BASELINES = ("bm25s-units", "ripgrep-proxy")
MODELS_DIR = common.WORK_DIR / "semantic" / "models"
"""The ONNX export of the local model, shared with the semantic part (made once, minutes)."""


def list_sets() -> list[Path]:
    """The whole-repository sets: folders with ``corpus.tar.gz`` and ``queries.jsonl``."""
    if not common.DATASETS_DIR.is_dir():
        return []
    return sorted(
        p for p in common.DATASETS_DIR.iterdir() if (p / "corpus.tar.gz").is_file() and (p / "queries.jsonl").is_file()
    )


def load_queries(set_dir: Path) -> list[dict[str, Any]]:
    """The gold entries of ``set_dir/queries.jsonl`` (id, query, style, path, line_start, line_end)."""
    text = (set_dir / "queries.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _scorer() -> Any:
    spec = importlib.util.spec_from_file_location("score_workspace_qa", SCORER)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {SCORER}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def score(set_dir: Path, rows: list[dict[str, Any]], corpus: Path, work: Path) -> dict[str, Any]:
    """Score ``rows`` (``{"id", "hits": [{"path", "line_start", "line_end"}]}``, paths relative
    to ``corpus`` or absolute inside it) with the datasets' scorer. Returns its JSON report
    (``styles``: style -> ``{n, top1, top3, top10, missed, too_long_only}`` in query counts, with
    ``all`` last; ``median_hit_span``; ``ranks``) plus ``printed``, its console output."""
    hits_file, report_file = work / "hits.jsonl", work / "score.json"
    hits_file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = _scorer().main(["score_workspace_qa.py", str(set_dir), str(hits_file), "--root", str(corpus),
                               "--json", str(report_file)])
    if code != 0:
        raise RuntimeError(f"the scorer exited {code}: {printed.getvalue()[-1000:]}")
    report = json.loads(report_file.read_text(encoding="utf-8"))
    report["printed"] = printed.getvalue()
    return report


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


@contextlib.contextmanager
def _models_dir() -> Iterator[None]:
    """``HERMES_MODELS_DIR`` pointed at :data:`MODELS_DIR` while a hybrid run indexes and searches."""
    from hermes_workspace.container import MODELS_DIR_ENV

    before = os.environ.get(MODELS_DIR_ENV)
    MODELS_DIR.mkdir(parents=True, exist_ok=True)
    os.environ[MODELS_DIR_ENV] = str(MODELS_DIR)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(MODELS_DIR_ENV, None)
        else:
            os.environ[MODELS_DIR_ENV] = before


def hybrid_unavailable() -> str | None:
    """Why hybrid mode cannot run here (the ``semantic`` extra or the local model missing), or
    ``None``. Embeds one query with the default onnx embedder (exports the model once)."""
    try:
        from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

        OnnxEmbedder("", cache_dir=MODELS_DIR).embed_query("probe")
    except Exception as exc:  # noqa: BLE001 - any failure means: skip hybrid, say why
        hint = getattr(exc, "hint", None)
        return f"the onnx embedder cannot run: {type(exc).__name__}: {exc}" + (f" ({hint})" if hint else "")
    return None


def run_set(set_dir: Path, mode: str, settings: dict[str, Any], *, keep: bool = False) -> dict[str, Any]:
    """Index ``set_dir``'s corpus with ``settings``, search every query in ``mode``, score.

    Returns ``{"set", "system": "hermes-workspace", "mode", "settings", "files", "chunks",
    "index_seconds", "errors", "search_ms", "styles", "median_hit_span", "ranks", "printed"}``;
    in hybrid mode also ``semantic_status`` (``ready`` when every readable chunk has a vector)."""
    from hermes_workspace import Workspace

    queries = load_queries(set_dir)
    config = dict(settings)
    if mode == "hybrid":
        config.setdefault("knowledgebase.embedder.provider", "onnx")
    models = _models_dir() if mode == "hybrid" else contextlib.nullcontext()
    with common.temp_home(f"qa-{set_dir.name}", keep=keep) as home, models:
        corpus = _unpack(set_dir / "corpus.tar.gz", home / "corpus")
        if config:
            _write_config(home, config)
        with Workspace.open(home) as ws:
            ws.add_root(corpus, recursive=True)
            started = time.perf_counter()
            summary = ws.index()
            index_seconds = time.perf_counter() - started
            status = ws.status()
            semantic = ws.semantic_status()["status"] if mode == "hybrid" else None
            rows, latencies = [], []
            for query in queries:
                started = time.perf_counter()
                hits = ws.search(query["query"], limit=HITS, mode=mode)
                latencies.append(time.perf_counter() - started)
                rows.append({"id": query["id"], "hits": [
                    {"path": str(hit.path), "line_start": hit.line_start, "line_end": hit.line_end}
                    for hit in hits
                ]})
        report = score(set_dir, rows, corpus, home)
    result = {
        "set": set_dir.name,
        "system": OURS,
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
        "query_styles": {q["id"]: q["style"] for q in queries},
        "printed": report["printed"],
    }
    if semantic is not None:
        result["semantic_status"] = semantic
    return result


def run_baselines(set_dir: Path, *, keep: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both baselines of :mod:`benchmarks.qa_baselines` on ``set_dir``'s corpus, scored.

    Returns (results, skipped): each result ``{"set", "system", "mode": None, "description",
    "styles", "median_hit_span", "ranks", "printed", ...timings}``; each skipped entry ``{"set",
    "system", "reason"}`` (bm25s missing)."""
    queries = load_queries(set_dir)
    results: list[dict[str, Any]] = []
    with common.temp_home(f"qa-baselines-{set_dir.name}", keep=keep) as work:
        corpus = _unpack(set_dir / "corpus.tar.gz", work / "corpus")
        files = qa_baselines.corpus_files(corpus)
        try:
            stopwords = qa_baselines.english_stopwords()
            made = [qa_baselines.bm25s_units(files, queries), qa_baselines.ripgrep_proxy(corpus, files, queries, stopwords)]
        except ImportError as exc:
            reason = f"bm25s is not installed ({exc}); install the bench extra: pip install -e '.[workspace,bench]'"
            return [], [{"set": set_dir.name, "system": name, "reason": reason} for name in BASELINES]
        for baseline in made:
            report = score(set_dir, baseline.pop("hits"), corpus, work)
            results.append({
                "set": set_dir.name,
                "mode": None,
                "settings": {},
                **baseline,
                "files": len(files),
                "styles": report["styles"],
                "median_hit_span": report["median_hit_span"],
                "ranks": report["ranks"],
                "query_styles": {q["id"]: q["style"] for q in queries},
                "printed": report["printed"],
            })
    return results, []


def run_all(sets: list[Path], modes: list[str], settings: dict[str, Any], *, baselines: bool = True,
            keep: bool = False) -> dict[str, Any]:
    """Ours in every mode of ``modes`` and (when ``baselines``) both baselines, on every set.
    Hybrid is skipped, with the reason, when :func:`hybrid_unavailable` says so or when the index
    ends without vectors. Returns ``{"runs": [...], "skipped": [{"set", "system", "mode",
    "reason"}]}`` (runs without their ``printed`` text)."""
    runs: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    hybrid_reason = hybrid_unavailable() if "hybrid" in modes else None
    if hybrid_reason:
        common.log(f"workspace QA: hybrid skipped: {hybrid_reason}")
    for set_dir in sets:
        for mode in modes:
            if mode == "hybrid" and hybrid_reason:
                skipped.append({"set": set_dir.name, "system": OURS, "mode": mode, "reason": hybrid_reason})
                continue
            common.log(f"workspace QA: {set_dir.name}, {mode}, {settings or 'default settings'}")
            result = run_set(set_dir, mode, settings, keep=keep)
            if mode == "hybrid" and result.get("semantic_status") not in ("ready", "partial"):
                skipped.append({"set": set_dir.name, "system": OURS, "mode": mode,
                                "reason": f"no vectors after indexing (semantic status {result.get('semantic_status')})"})
                continue
            runs.append(result)
            common.log(result["printed"].rstrip().splitlines()[-1])
        if baselines:
            common.log(f"workspace QA: {set_dir.name}, baselines")
            made, missing = run_baselines(set_dir, keep=keep)
            skipped += [{**m, "mode": None} for m in missing]
            for result in made:
                runs.append(result)
                common.log(f"{result['system']}: " + result["printed"].rstrip().splitlines()[-1])
    for entry in skipped:
        common.log(f"workspace QA: skipped {entry['set']} {entry['system']} {entry['mode'] or ''}: {entry['reason']}")
    return {"runs": [{k: v for k, v in r.items() if k != "printed"} for r in runs], "skipped": skipped}


def run(mode: common.Mode, keep: bool = False) -> dict[str, Any]:
    """The benchmark part: quick = keyword mode, full = keyword and hybrid; both baselines on
    every set, default settings. Writes ``results/workspace_qa.json``."""
    sets = list_sets()
    if not sets:
        common.log(f"workspace QA: no whole-repository set in {common.DATASETS_DIR}; skipped")
    modes = ["keyword", "hybrid"] if mode.name == "full" else ["keyword"]
    data = run_all(sets, modes, {}, baselines=True, keep=keep)
    common.save_result("workspace_qa", mode, data)
    return data


def _label(result: dict[str, Any]) -> str:
    if result["system"] != OURS:
        return result["system"]
    settings = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in result["settings"].items())
    return f"ours ({result['mode']}" + (f", {settings})" if settings else ")")


def table(results: list[dict[str, Any]]) -> str:
    """A markdown table: one row per set, system (ours per mode and settings, each baseline) and
    style (top-1/3/10 in %), then the median hit span."""
    lines = ["| set | system | style | n | top-1 | top-3 | top-10 | median span |",
             "|---|---|---|---|---|---|---|---|"]
    for result in results:
        for style, s in result["styles"].items():
            n = s["n"]
            lines.append(
                f"| {result['set']} | {_label(result)} | {style} | {n} | "
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
    parser.add_argument("--no-baselines", dest="baselines", action="store_false",
                        help="skip the bm25s-units and ripgrep-proxy baselines (run by default)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary homes")
    parser.add_argument("--no-save", action="store_true", help="do not write results/workspace_qa.json")
    args = parser.parse_args(argv)
    sets = [s for s in list_sets() if not args.sets or s.name in args.sets]
    if not sets:
        parser.error(f"no whole-repository set found in {common.DATASETS_DIR}")
    data = run_all(sets, args.modes or ["keyword"], dict(args.configs), baselines=args.baselines, keep=args.keep)
    print(table(data["runs"]))
    for entry in data["skipped"]:
        print(f"skipped: {entry['set']} {entry['system']} {entry['mode'] or ''}: {entry['reason']}")
    if not args.no_save:
        mode = common.MODES["full" if "hybrid" in (args.modes or []) else "quick"]
        common.save_result("workspace_qa", mode, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
