"""Retrieve under a token budget: is the gold span inside the pack, and what does an answer cost?

Standalone: ``python -m benchmarks.retrieve_budget [--set NAME ...] [--budget N ...] [--mode keyword|hybrid]
[--no-save]``.

For each whole-repository set (docs-qa-pydantic, code-nav-flask: a ``corpus.tar.gz`` and a
line-level ``queries.jsonl``), the corpus is unpacked into a fresh home, indexed through the public
API, and every query is run as

- ``retrieve QUERY --budget B`` for each budget B (600, 1,200 and 3,200 o200k_base tokens by
  default), the response measured as the CLI prints it (``pack.serialize()``);
- ``search QUERY --limit 10`` as JSON, what an agent gets from the CLI today (the list of hit
  objects, ``json.dumps(..., ensure_ascii=False, indent=2)`` as the CLI prints it).

A query is *answered* by a response when one of its blocks (or hits) is in the gold file and its
line range contains the whole gold span, blank lines at its ends aside (``contained``); ``overlap`` counts a block that shares at
least one line with it. ``tokens/answered`` is the tokens of every response of the run divided by
the answered queries: what an agent pays per useful answer. Tokens are counted with the same
o200k_base counter the budgets use. Results: ``results/retrieve_budget.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.workspace_qa import _unpack, list_sets, load_queries

BUDGETS = (600, 1200, 3200)
SEARCH_LIMIT = 10


def _gold_lines(corpus: Path, gold: dict[str, Any]) -> tuple[int, int]:
    """The gold span without the blank lines at its ends: the sets' spans of markdown sections
    run to the line before the next heading, blank separator included, which no chunk holds."""
    lines = (corpus / gold["path"]).read_text(encoding="utf-8", errors="replace").split("\n")
    start, end = gold["line_start"], gold["line_end"]
    while end > start and end <= len(lines) and not lines[end - 1].strip():
        end -= 1
    while start < end and not lines[start - 1].strip():
        start += 1
    return start, end


def _answers(spans: list[tuple[str, int, int]], gold: dict[str, Any], corpus: Path) -> tuple[bool, bool]:
    """``(contained, overlap)`` for response ``spans`` (absolute path, 1-based first, last line);
    the gold span is taken without blank lines at its ends (:func:`_gold_lines`)."""
    gold_path = str((corpus / gold["path"]).resolve())
    start, end = _gold_lines(corpus, gold)
    contained = overlap = False
    for path, first, last in spans:
        if str(Path(path).resolve()) != gold_path:
            continue
        if first <= start and last >= end:
            contained = True
        if first <= end and last >= start:
            overlap = True
    return contained, overlap


def _summary(name: str, rows: list[tuple[int, bool, bool]], seconds: list[float]) -> dict[str, Any]:
    n = len(rows)
    tokens = sum(t for t, _, _ in rows)
    contained = sum(1 for _, c, _ in rows if c)
    overlap = sum(1 for _, _, o in rows if o)
    return {
        "response": name,
        "queries": n,
        "contained": contained,
        "contained_share": round(contained / n, 3) if n else 0.0,
        "overlap": overlap,
        "overlap_share": round(overlap / n, 3) if n else 0.0,
        "tokens_mean": round(tokens / n, 1) if n else 0.0,
        "tokens_max": max((t for t, _, _ in rows), default=0),
        "tokens_per_answered": round(tokens / contained, 1) if contained else None,
        "ms": common.summarize_ms(seconds),
    }


def run_set(set_dir: Path, budgets: tuple[int, ...], mode: str | None, *, keep: bool = False) -> dict[str, Any]:
    """Index ``set_dir``'s corpus, run every query through ``search`` and ``retrieve`` at each
    budget, and return ``{"set", "mode", "files", "chunks", "systems": [summary...]}``."""
    from hermes_workspace import Workspace
    from hermes_workspace.adapters.tiktoken_counter import TiktokenCounter

    counter = TiktokenCounter()
    queries = load_queries(set_dir)
    with common.temp_home(f"retrieve-{set_dir.name}", keep=keep) as home:
        corpus = _unpack(set_dir / "corpus.tar.gz", home / "corpus")
        with Workspace.open(home) as ws:
            ws.add_root(corpus, recursive=True)
            ws.index()
            status = ws.status()
            systems = []
            rows, seconds = [], []
            for query in queries:
                started = time.perf_counter()
                hits = ws.search(query["query"], limit=SEARCH_LIMIT, mode=mode)
                seconds.append(time.perf_counter() - started)
                text = json.dumps([hit.to_json() for hit in hits], ensure_ascii=False, indent=2)
                spans = [(str(hit.path), hit.line_start, hit.line_end) for hit in hits]
                rows.append((counter.count(text), *_answers(spans, query, corpus)))
            systems.append(_summary(f"search --limit {SEARCH_LIMIT} (JSON)", rows, seconds))
            for budget in budgets:
                rows, seconds = [], []
                for query in queries:
                    started = time.perf_counter()
                    pack = ws.retrieve(query["query"], budget=budget, mode=mode)
                    seconds.append(time.perf_counter() - started)
                    text = pack.serialize()
                    blocks = pack.to_json()["blocks"]
                    spans = [(b["path"], b["line_start"], b["line_end"]) for b in blocks]
                    tokens = counter.count(text)
                    if tokens > budget:
                        raise AssertionError(f"{query['id']}: retrieve spent {tokens} tokens over a budget of {budget}")
                    rows.append((tokens, *_answers(spans, query, corpus)))
                systems.append(_summary(f"retrieve --budget {budget}", rows, seconds))
    return {"set": set_dir.name, "mode": mode or "default", "files": status.files, "chunks": status.chunks,
            "systems": systems}


def table(results: list[dict[str, Any]]) -> str:
    """A markdown table: one row per set and response."""
    lines = [
        "| set | response | gold span inside | overlapping | tokens mean / max | tokens per answered query | p50 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        for s in result["systems"]:
            per = "-" if s["tokens_per_answered"] is None else f"{s['tokens_per_answered']:.0f}"
            lines.append(
                f"| {result['set']} | {s['response']} | {s['contained']}/{s['queries']} ({s['contained_share']:.0%}) "
                f"| {s['overlap']}/{s['queries']} ({s['overlap_share']:.0%}) | {s['tokens_mean']:.0f} / {s['tokens_max']} "
                f"| {per} | {s['ms']['p50_ms']:.1f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieve_budget", description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", dest="sets", help="a set name (default: every whole-repository set)")
    parser.add_argument("--budget", action="append", type=int, dest="budgets", help="tokens (repeatable)")
    parser.add_argument("--mode", choices=("keyword", "hybrid"), default="keyword")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    sets = [s for s in list_sets() if not args.sets or s.name in args.sets]
    if not sets:
        print("no whole-repository set found", file=sys.stderr)
        return 1
    budgets = tuple(args.budgets or BUDGETS)
    results = [run_set(s, budgets, args.mode) for s in sets]
    print(table(results))
    if not args.no_save:
        common.save_result("retrieve_budget", common.QUICK, {"budgets": list(budgets), "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
