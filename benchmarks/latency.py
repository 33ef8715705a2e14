"""Search latency: in-process, whole-process CLI, and ripgrep over the same words.

Per corpus (indexed once by ``hermes-workspace --quiet index``):

- **in-process**: one ``Workspace`` opened; every query run once to warm up, then each query
  ``search_repeats`` times round-robin with ``Workspace.search(text, limit=20)``; p50/p95 over all
  timed calls (``time.perf_counter``).
- **CLI**: ``hermes-workspace search --limit 20 -- "<query>"`` as a process, the first
  ``cli_queries`` queries ``cli_repeats`` times each; median wall time. ``hermes-workspace
  --version`` is timed the same way as the start-up floor of the command.
- **ripgrep**: ``rg --fixed-strings --ignore-case --files-with-matches --no-messages -e w1 -e w2
  ... <tree>`` over the raw files, with the query's words (as search normalizes them), on the
  same queries and repeats: it lists every file containing any of the words (the same OR
  semantics, no ranking, no line ranges). Skipped with a note when ``rg`` is not installed.

Queries: a dataset's own queries; for the standard library a fixed list of 50 developer queries
(:data:`STDLIB_QUERIES`); for Django 50 section headings of its documentation (fixed seed).
"""

from __future__ import annotations

import random
import re
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks.common import (
    SEARCH_LIMIT,
    Corpus,
    CorpusUnavailable,
    Mode,
    cli_env,
    cli_index,
    cli_search_argv,
    expand_corpora,
    hermes_cli,
    index_path,
    log,
    median,
    prepare_corpus,
    query_words,
    ripgrep,
    run_process,
    save_result,
    summarize_ms,
    temp_home,
)

STDLIB_QUERIES = [
    "json decoder", "read_file", "parse command line arguments", "TemporaryDirectory cleanup",
    "asyncio gather timeout", "subprocess run capture output", "http server request handler",
    "sqlite3 connection commit", "datetime timezone utc", "thread pool executor", "urlopen ssl context",
    "base64 encode bytes", "regular expression compile flags", "logging handler formatter",
    "pathlib glob recursive", "zipfile extract all", "dataclass field default_factory",
    "context manager exit exception", "socket connect timeout", "hashlib sha256 hexdigest",
    "unittest mock patch", "csv DictReader", "email message attachment", "xml ElementTree parse",
    "pickle protocol version", "multiprocessing queue", "shutil copytree ignore",
    "expand environment variables", "decimal rounding context", "heapq nlargest", "functools lru_cache",
    "itertools groupby", "typing Protocol runtime_checkable", "enum auto value", "tarfile extraction filter",
    "signal handler SIGINT", "random seed", "textwrap dedent", "string format spec", "deprecation warning",
    "importlib import_module", "inspect signature parameters", "traceback format_exception",
    "ssl certificate verification", "NamedTemporaryFile delete", "os walk topdown", "asyncio event loop policy",
    "http cookie jar", "uuid4 random", "select poll epoll",
]
"""50 realistic developer queries over the standard library (identifiers and plain words)."""

_RST_UNDERLINE = re.compile(r"^([=\-~^*#+\"'`])\1{2,}\s*$")


def django_queries(tree: Path, count: int = 50, seed: int = 0) -> list[str]:
    """``count`` section headings of Django's reStructuredText docs, picked with a fixed seed."""
    headings: set[str] = set()
    for path in sorted((tree).rglob("docs/**/*.txt")):
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        for above, line in pairwise(lines):
            title = above.strip()
            if (_RST_UNDERLINE.match(line) and 2 <= len(title.split()) <= 8 and not _RST_UNDERLINE.match(title)
                    and len(query_words(title)) >= 2 and not title.startswith(("..", ":"))):
                headings.add(title)
    ordered = sorted(headings)
    return random.Random(seed).sample(ordered, min(count, len(ordered)))


def corpus_queries(corpus: Corpus) -> tuple[list[str], str]:
    if corpus.dataset is not None:
        return list(corpus.dataset.queries.values()), "the dataset's queries.jsonl"
    if corpus.name == "django":
        return django_queries(corpus.trees[0]), "50 section headings of Django's docs (seed 0)"
    return list(STDLIB_QUERIES), "a fixed list of 50 developer queries (benchmarks/latency.py)"


RAW_SEARCH = r'''
import json, re, sys
import apsw
words = []
for w in re.findall(r"[^\W_]+", sys.argv[2]):
    w = w.casefold()
    if len(w) >= 2 and w not in words:
        words.append(w)
match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
conn = apsw.Connection(sys.argv[1], flags=apsw.SQLITE_OPEN_READONLY)
rows = conn.execute(
    "WITH top AS (SELECT rowid AS id, bm25(chunks_fts, 1.0, 2.0, 1.0) AS bm FROM chunks_fts"
    " WHERE chunks_fts MATCH ? ORDER BY bm LIMIT 20)"
    " SELECT f.abs_path, c.start_line, c.end_line, c.section, c.content"
    " FROM top JOIN chunks c ON c.id = top.id JOIN files f ON f.id = c.file_id ORDER BY top.bm",
    (match,),
).fetchall()
print(json.dumps(rows))
'''
"""The whole-process floor of a search: a bare ``python -I`` that imports apsw, opens the index
read-only, runs the OR-of-words ``MATCH`` with the store's weights and prints the 20 hits as JSON."""


def in_process(home: Path, queries: list[str], repeats: int) -> dict[str, Any]:
    """p50/p95 of ``Workspace.search`` in one process after a warm-up pass; the slowest queries
    (median of their repeats) with their hit counts."""
    from hermes_workspace import Workspace

    samples: list[float] = []
    per_query: dict[str, list[float]] = {q: [] for q in queries}
    hits: dict[str, int] = {}
    with Workspace.open(home) as ws:
        for q in queries:
            hits[q] = len(ws.search(q, limit=SEARCH_LIMIT))
        for _ in range(repeats):
            for q in queries:
                start = time.perf_counter()
                ws.search(q, limit=SEARCH_LIMIT)
                elapsed = time.perf_counter() - start
                samples.append(elapsed)
                per_query[q].append(elapsed)
    slowest = sorted(per_query, key=lambda q: -median(per_query[q]))[:5]
    return {**summarize_ms(samples), "queries": len(queries), "repeats": repeats,
            "mean_hits": sum(hits.values()) / max(1, len(hits)),
            "slowest": [{"query": q, "median_ms": median(per_query[q]) * 1000} for q in slowest]}


def whole_process(argvs: list[list[str]], repeats: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Median wall time (and peak RSS) of running each argv ``repeats`` times (after one warm-up)."""
    run_process(argvs[0], env=env)
    seconds: list[float] = []
    rss: list[float] = []
    outputs: list[str] = []
    for _ in range(repeats):
        for argv in argvs:
            r = run_process(argv, env=env)
            if r.returncode not in (0, 1):  # rg exits 1 when nothing matched
                raise RuntimeError(f"{argv[0]} exited {r.returncode}: {r.stderr[-500:]}")
            seconds.append(r.seconds)
            rss.append(r.peak_rss_mb)
            outputs.append(r.stdout)
    return {"median_ms": median(seconds) * 1000, **{k: v for k, v in summarize_ms(seconds).items() if k != "n"},
            "runs": len(seconds), "peak_rss_mb": max(rss), "outputs": outputs}


def rg_argv(rg: str, text: str, trees: list[Path]) -> list[str] | None:
    words = query_words(text)
    if not words:
        return None
    argv = [rg, "--fixed-strings", "--ignore-case", "--files-with-matches", "--no-messages"]
    for w in words:
        argv += ["-e", w]
    return argv + [str(t) for t in trees]


def measure_search(home: Path, trees: list[Path], queries: list[str], mode: Mode) -> dict[str, Any]:
    """In-process, CLI and ripgrep timings on an indexed workspace (see the module docstring)."""
    out: dict[str, Any] = {"in_process": in_process(home, queries, mode.search_repeats)}
    subset = [q for q in queries if query_words(q)][: mode.cli_queries]
    env = cli_env(home)
    cli = whole_process([cli_search_argv(q) for q in subset], mode.cli_repeats, env=env)
    cli.pop("outputs")
    out["cli"] = cli
    startup = whole_process([[hermes_cli(), "--version"]], mode.cli_repeats, env=env)
    startup.pop("outputs")
    out["cli_startup"] = startup
    interpreter = whole_process([[sys.executable, "-c", "pass"]], mode.cli_repeats)
    interpreter.pop("outputs")
    out["python_startup"] = interpreter
    raw = whole_process([[sys.executable, "-I", "-c", RAW_SEARCH, str(index_path(home)), q] for q in subset],
                        mode.cli_repeats)
    raw.pop("outputs")
    out["raw_search_process"] = raw
    out["cli_queries"] = subset
    rg = ripgrep()
    if rg is None:
        out["ripgrep"] = {"skipped": "rg (ripgrep) is not installed: apt-get install -y ripgrep"}
    else:
        argvs = [a for a in (rg_argv(rg, q, trees) for q in subset) if a]
        r = whole_process(argvs, mode.cli_repeats)
        files = [len([ln for ln in o.split("\n") if ln]) for o in r.pop("outputs")]
        out["ripgrep"] = {**r, "median_files_listed": median(files),
                          "formulation": "rg --fixed-strings --ignore-case --files-with-matches --no-messages "
                                         "-e w1 -e w2 ... <tree>"}
        out["cli_vs_rg"] = out["cli"]["median_ms"] / r["median_ms"]
        out["in_process_p50_vs_rg"] = out["in_process"]["p50_ms"] / r["median_ms"]
    return out


def import_profile(top: int = 12, min_ms: float = 8.0) -> dict[str, Any]:
    """What ``import`` costs the CLI's search path: ``python -X importtime`` of the CLI and API
    modules; the largest cumulative entries (microseconds), and the tree of the entries of at
    least ``min_ms``."""
    code = "import hermes_workspace.entrypoints.cli, hermes_workspace.entrypoints.api"
    r = run_process([sys.executable, "-X", "importtime", "-c", code])
    rows = []
    for line in r.stderr.split("\n"):
        m = re.match(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)", line)
        if m:
            rows.append({"module": m.group(4), "self_us": int(m.group(1)), "cumulative_us": int(m.group(2)),
                         "depth": len(m.group(3)) // 2})
    total = sum(r_["self_us"] for r_ in rows)
    heavy = sorted((r_ for r_ in rows if r_["depth"] <= 3), key=lambda r_: -r_["cumulative_us"])[:top]
    # importtime lists a module after the modules it imports: reversed, parents come first.
    tree = [r_ for r_ in reversed(rows) if r_["depth"] <= 3 and r_["cumulative_us"] >= min_ms * 1000]
    return {"total_ms": total / 1000, "largest": heavy, "tree": tree, "process_seconds": r.seconds}


def run(mode: Mode, keep: bool = False) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in expand_corpora(mode.latency_corpora):
        log(f"latency: {name}")
        with temp_home(f"latency-{name.replace(':', '-')}", keep=keep) as home:
            try:
                corpus = prepare_corpus(name, home)
            except CorpusUnavailable as exc:
                log(f"latency: {name} skipped: {exc}")
                results[name] = {"corpus": name, "skipped": str(exc)}
                continue
            _, summary = cli_index(home)
            queries, source = corpus_queries(corpus)
            r = measure_search(home, corpus.trees, queries, mode)
            results[name] = {"corpus": name, "description": corpus.description, "query_source": source,
                             "files": summary["files_indexed"], "chunks": summary["chunks_created"], **r}
            rg = r.get("ripgrep", {})
            log(f"latency: {name}: in-process p50 {r['in_process']['p50_ms']:.1f} ms p95 {r['in_process']['p95_ms']:.1f} ms, "
                f"CLI {r['cli']['median_ms']:.0f} ms, rg {rg.get('median_ms', float('nan')):.0f} ms")
    data = {"corpora": results, "limit": SEARCH_LIMIT, "cli_import_profile": import_profile()}
    save_result("latency", mode, data)
    return data
