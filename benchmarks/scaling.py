"""Scaling: 1x, 2x, 4x, 8x copies of the standard library (quick mode: 1x, 2x).

Copy ``i`` is the standard library (without site-packages and __pycache__) in folder
``copy_i``; the ``N``x workspace has ``copy_1 .. copy_N`` as its recursive roots. For each N, in a
fresh ``HERMES_HOME``: the cold index, the raw floor and the unchanged re-index
(:func:`benchmarks.speed.measure_index`), the index size, and search latency
(:func:`benchmarks.latency.measure_search`: in-process p50/p95 over the 50 standard-library
queries, CLI median, ripgrep over ``copy_1 .. copy_N``).

Growth is summarized by the log-log slope between the smallest and the largest size (1 = linear).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import WORK_DIR, Mode, add_roots, copy_stdlib, log, save_result, temp_home
from benchmarks.latency import STDLIB_QUERIES, measure_search
from benchmarks.speed import measure_index


def growth(xs: list[float], ys: list[float]) -> dict[str, Any]:
    """Log-log slope from the first to the last point, and what it means."""
    if len(xs) < 2 or ys[0] <= 0 or ys[-1] <= 0 or xs[-1] == xs[0]:
        return {"slope": None, "verdict": "n/a"}
    slope = math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])
    verdict = "linear" if 0.85 <= slope <= 1.15 else ("sublinear" if slope < 0.85 else "superlinear")
    return {"slope": slope, "verdict": verdict}


def run(mode: Mode, keep: bool = False) -> dict[str, Any]:
    (WORK_DIR / "tmp").mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="scaling-copies-", dir=WORK_DIR / "tmp"))
    rows: list[dict[str, Any]] = []
    try:
        copies = [copy_stdlib(base / "copy_1")]
        for i in range(2, max(mode.scales) + 1):
            copies.append(Path(shutil.copytree(copies[0], base / f"copy_{i}", symlinks=True)))
        for n in mode.scales:
            log(f"scaling: {n}x")
            with temp_home(f"scaling-{n}x", keep=keep) as home:
                add_roots(home, copies[:n])
                idx = measure_index(home, unchanged_repeats=mode.unchanged_repeats, cold_repeats=mode.cold_repeats,
                                    change=False)
                lat = measure_search(home, copies[:n], STDLIB_QUERIES, mode)
            rows.append({"copies": n, **idx, "search": lat})
            log(f"scaling: {n}x: {idx['files']} files, {idx['text_mb']:.0f} MB, cold {idx['cold']['seconds']:.1f}s, "
                f"p95 {lat['in_process']['p95_ms']:.1f} ms, CLI {lat['cli']['median_ms']:.0f} ms")
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    mb = [r["text_mb"] for r in rows]
    fits = {
        "cold_seconds": growth(mb, [r["cold"]["seconds"] for r in rows]),
        "floor_seconds": growth(mb, [r["floor"]["seconds"] for r in rows]),
        "unchanged_seconds": growth(mb, [r["unchanged"]["seconds"] for r in rows]),
        "index_bytes": growth(mb, [r["index_bytes"] for r in rows]),
        "search_p95_ms": growth(mb, [r["search"]["in_process"]["p95_ms"] for r in rows]),
        "cli_median_ms": growth(mb, [r["search"]["cli"]["median_ms"] for r in rows]),
        "peak_rss_mb": growth(mb, [r["cold"]["peak_rss_mb"] for r in rows]),
    }
    if all("ripgrep" in r["search"] and "median_ms" in r["search"]["ripgrep"] for r in rows):
        fits["ripgrep_median_ms"] = growth(mb, [r["search"]["ripgrep"]["median_ms"] for r in rows])
    data = {"corpus": "stdlib copies", "scales": rows, "growth": fits}
    save_result("scaling", mode, data)
    return data
