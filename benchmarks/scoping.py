"""Scoping: the same questions asked with every root searched, and from inside their own root.

One workspace holds three recursive roots: both whole-repository sets of the datasets folder
(``code-nav-flask`` as root ``flask``, ``docs-qa-pydantic`` as root ``pydantic``, unpacked from
their ``corpus.tar.gz``) and a copy of this machine's standard library (root ``stdlib``), which
competes with both the way a user's other projects do. It is indexed once (keyword mode).

Every query of a set is then searched three ways with ``Workspace.search(limit=10)``:

- ``all``: ``all_roots=True``, what a search gave before scoping;
- ``home``: ``cwd=`` the set's root, as the CLI and MCP do from inside it (its own root first,
  every root only when it has no hit);
- ``explicit``: ``roots=[name]``, never widened.

Per way: top-1/top-3/top-10 with the datasets' scorer (``score_workspace_qa.py``, the same as
:mod:`benchmarks.workspace_qa`) and in-process latency p50/p95 after a warm-up pass, each query
timed ``search_repeats`` times round-robin. Reported side by side, with the ratio of the scoped
latency to the unscoped one.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.workspace_qa import HITS, _unpack, list_sets, load_queries, score

ROOT_NAMES = {"code-nav-flask": "flask", "docs-qa-pydantic": "pydantic"}
"""The root name each whole-repository set gets."""

WAYS = ("all", "home", "explicit")


def _search_kwargs(way: str, root: str, folder: Path) -> dict[str, Any]:
    if way == "all":
        return {"all_roots": True}
    if way == "home":
        return {"cwd": folder}
    return {"roots": [root]}


def run(mode: common.Mode, keep: bool = False) -> dict[str, Any]:
    from hermes_workspace import Workspace

    sets = [s for s in list_sets() if s.name in ROOT_NAMES]
    if not sets:
        data = {"skipped": f"no whole-repository set of {sorted(ROOT_NAMES)} in {common.DATASETS_DIR}"}
        common.save_result("scoping", mode, data)
        return data
    rows: list[dict[str, Any]] = []
    with common.temp_home("scoping", keep=keep) as home:
        folders = {s.name: _unpack(s / "corpus.tar.gz", home / "corpus" / ROOT_NAMES[s.name]) for s in sets}
        stdlib = common.copy_stdlib(home / "corpus" / "stdlib")
        with Workspace.open(home) as ws:
            for set_dir in sets:
                ws.add_root(folders[set_dir.name], recursive=True, name=ROOT_NAMES[set_dir.name])
            ws.add_root(stdlib, recursive=True, name="stdlib")
            started = time.perf_counter()
            summary = ws.index()
            common.log(f"scoping: indexed {summary.files_indexed} files in {time.perf_counter() - started:.0f}s")
            status = ws.status()
            for set_dir in sets:
                root, folder = ROOT_NAMES[set_dir.name], folders[set_dir.name]
                queries = load_queries(set_dir)
                for way in WAYS:
                    kwargs = _search_kwargs(way, root, folder)
                    hits_rows, widened, samples = [], 0, []
                    for query in queries:
                        hits = ws.search(query["query"], limit=HITS, **kwargs)
                        widened += bool(hits.scope.get("widened"))
                        hits_rows.append({"id": query["id"], "hits": [
                            {"path": str(h.path), "line_start": h.line_start, "line_end": h.line_end} for h in hits
                        ]})
                    for _ in range(mode.search_repeats):
                        for query in queries:
                            start = time.perf_counter()
                            ws.search(query["query"], limit=HITS, **kwargs)
                            samples.append(time.perf_counter() - start)
                    work = home / f"score-{root}-{way}"
                    work.mkdir()
                    report = score(set_dir, hits_rows, folder, work)
                    rows.append({"set": set_dir.name, "root": root, "way": way, "queries": len(queries),
                                 "widened": widened, "styles": report["styles"],
                                 "latency": common.summarize_ms(samples)})
                    top = report["styles"]["all"]
                    common.log(f"scoping: {root} {way}: top1 {top['top1']}/{top['n']}, "
                               f"p95 {rows[-1]['latency']['p95_ms']:.1f} ms")
        if not keep:
            shutil.rmtree(home / "corpus", ignore_errors=True)
    for row in rows:
        base = next(r for r in rows if r["set"] == row["set"] and r["way"] == "all")
        row["p50_ratio_to_all"] = row["latency"]["p50_ms"] / base["latency"]["p50_ms"]
        row["p95_ratio_to_all"] = row["latency"]["p95_ms"] / base["latency"]["p95_ms"]
    data = {"files": status.files, "chunks": status.chunks, "roots": [*ROOT_NAMES.values(), "stdlib"],
            "repeats": mode.search_repeats, "rows": rows}
    common.save_result("scoping", mode, data)
    return data


def table(data: dict[str, Any]) -> str:
    """The markdown table of a ``scoping.json`` result."""
    if "rows" not in data:
        return f"_skipped: {data.get('skipped', data.get('failed', 'no result'))}_"
    lines = ["| root | way | top-1 | top-3 | top-10 | widened | p50 ms | p95 ms | p95 / all |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        s, lat = r["styles"]["all"], r["latency"]
        lines.append(f"| {r['root']} | {r['way']} | {s['top1']}/{s['n']} | {s['top3']}/{s['n']} | "
                     f"{s['top10']}/{s['n']} | {r['widened']} | {lat['p50_ms']:.1f} | {lat['p95_ms']:.1f} | "
                     f"{r['p95_ratio_to_all']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    result = run(common.MODES[sys.argv[1] if len(sys.argv) > 1 else "quick"])
    print(table(result))
