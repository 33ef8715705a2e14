"""Indexing speed and memory on real corpora we did not write.

Per corpus (fresh copies in a fresh ``HERMES_HOME``; every ``index`` is its own
``hermes-workspace --quiet index`` process, timed wall-clock with its own peak RSS):

- **cold**: the first index of the corpus (full mode: the faster of two, the index removed between);
- **unchanged**: the same command again with nothing changed (median of the mode's repeats);
- **1% changed**: one line appended to 1% of the indexed files (fixed seed), then index again;
- **floor**: :mod:`benchmarks.floor` in its own process: the same files read and inserted whole
  into one FTS5 table with the same tokenizer, in one transaction (as many runs as cold, the
  fastest kept). Reported as ours / floor.

Files and MB are the files the cold run indexed (from the index's ``files`` table) and their
bytes; chunks and the index size come from ``Workspace.status()`` (database plus WAL).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import (
    REPO_DIR,
    Corpus,
    CorpusUnavailable,
    Mode,
    ProcessRun,
    cli_env,
    cli_index,
    edit_files,
    expand_corpora,
    fts_tokenizer,
    index_path,
    index_status,
    indexed_files,
    log,
    median,
    prepare_corpus,
    run_process,
    save_result,
    temp_home,
    tree_bytes,
)

CHANGE_FRACTION = 0.01


def _run_json(run: ProcessRun, summary: dict[str, Any], files: int, mb: float) -> dict[str, Any]:
    """One index run as reported: seconds, throughput over ``files``/``mb``, memory, summary."""
    return {
        "seconds": run.seconds,
        "files_per_s": files / run.seconds if run.seconds else None,
        "mb_per_s": mb / run.seconds if run.seconds else None,
        "peak_rss_mb": run.peak_rss_mb,
        "summary": {k: v for k, v in summary.items() if k != "errors"},
        "first_errors": summary.get("errors", [])[:3],
    }


def run_floor(files: list[Path], home: Path, index_file: Path, per_file: bool = False) -> dict[str, Any]:
    """The raw floor over ``files``, in its own process (``per_file``: the diagnostic variant
    with one transaction per file)."""
    list_file = home / "floor-files.txt"
    list_file.write_text("\n".join(str(p) for p in files) + "\n", encoding="utf-8")
    db = home / ("floor-per-file.sqlite" if per_file else "floor.sqlite")
    db.unlink(missing_ok=True)
    tokenizer = fts_tokenizer(index_file)
    argv = [sys.executable, "-m", "benchmarks.floor", str(list_file), str(db), tokenizer]
    run = run_process(argv + (["per-file"] if per_file else []), cwd=REPO_DIR).check()
    return {"seconds": run.seconds, "peak_rss_mb": run.peak_rss_mb, "size_bytes": db.stat().st_size,
            "tokenizer": tokenizer, **run.json()}


def measure_index(home: Path, *, unchanged_repeats: int, cold_repeats: int = 1, change: bool = True) -> dict[str, Any]:
    """Cold, floor, unchanged (and 1% changed) runs on the workspace of ``home`` (roots set).
    Cold and floor: the fastest of ``cold_repeats`` runs, the index folder removed before each."""
    idx = index_path(home)
    cold_runs = []
    for i in range(max(1, cold_repeats)):
        if i:
            shutil.rmtree(idx.parent)  # an empty index again: the next run is cold too
        cold_runs.append(cli_index(home))
    cold_run, cold = min(cold_runs, key=lambda rs: rs[0].seconds)
    status = index_status(home)
    files = indexed_files(idx)
    text_bytes = tree_bytes(files)
    mb = text_bytes / 1e6
    out: dict[str, Any] = {
        "files": len(files),
        "text_mb": mb,
        "chunks": status["chunks"],
        "index_bytes": status["size_bytes"],
        "cold": _run_json(cold_run, cold, len(files), mb),
    }
    out["cold"]["all_seconds"] = [r.seconds for r, _ in cold_runs]
    floors = [run_floor(files, home, idx) for _ in range(max(1, cold_repeats))]
    out["floor"] = {**min(floors, key=lambda f: f["seconds"]), "all_seconds": [f["seconds"] for f in floors]}
    out["cold_vs_floor"] = cold_run.seconds / out["floor"]["seconds"]

    runs = [cli_index(home) for _ in range(max(1, unchanged_repeats))]
    seconds = [r.seconds for r, _ in runs]
    r, s = min(runs, key=lambda rs: abs(rs[0].seconds - median(seconds)))
    scanned = s["files_indexed"] + s["files_skipped"] + s["files_errored"]
    out["unchanged"] = {
        **_run_json(r, s, scanned, mb),
        "seconds": median(seconds),
        "all_seconds": seconds,
        "files_scanned": scanned,
    }
    if change:
        edited = edit_files(files, CHANGE_FRACTION)
        changed_run, changed = cli_index(home)
        out["changed"] = {**_run_json(changed_run, changed, len(edited), tree_bytes(edited) / 1e6),
                          "files_edited": len(edited)}
    return out


def measure_corpus(name: str, mode: Mode, keep: bool = False) -> dict[str, Any]:
    with temp_home(f"speed-{name.replace(':', '-')}", keep=keep) as home:
        corpus: Corpus = prepare_corpus(name, home)
        result = measure_index(home, unchanged_repeats=mode.unchanged_repeats, cold_repeats=mode.cold_repeats)
        documents = len(corpus.dataset.corpus) if corpus.dataset else None
        return {"corpus": name, "description": corpus.description, "documents": documents, **result}


# -- diagnostics: where the cold index spends its time ------------------------------------------

_CATEGORIES = (
    ("tree-sitter parsing", ("tree_sitter",)),
    ("chonkie chunkers (Python)", ("/chonkie/",)),
    ("our chunk building (domain/chunking.py, lines.py, chonkie adapter)",
     ("hermes_workspace/domain/chunking.py", "hermes_workspace/domain/lines.py",
      "hermes_workspace/adapters/chonkie_chunker.py")),
    ("SQLite / FTS5 (apsw calls)", ("apsw",)),
    ("store adapter (Python)", ("hermes_workspace/adapters/sqlite_fts5_store.py",)),
    ("decoding (charset detection)", ("hermes_workspace/adapters/charset_decoder.py", "charset_normalizer")),
    ("discovery and reading (walk, ignore rules, read)", ("hermes_workspace/adapters/filesystem_source.py",
                                                          "pathspec")),
    ("indexing loop (hashing, records)", ("hermes_workspace/application/indexing.py",
                                          "hermes_workspace/application/file_processing.py",
                                          "hermes_workspace/application/batch_writer.py")),
    ("logging", ("structlog", "/logging/", "logging_setup.py")),
    ("imports and start-up", ("<frozen importlib", "marshal", "_imp.", "builtins.compile")),
)


def _category(func: tuple[str, int, str]) -> str | None:
    text = f"{func[0]}:{func[2]}"
    for name, needles in _CATEGORIES:
        if any(n in text for n in needles):
            return name
    return None


def profile_breakdown(stats_file: Path) -> dict[str, float]:
    """Self time per component; a function of no component (a built-in such as ``str.split``, a
    standard-library helper) is charged to its direct callers, in proportion to their share."""
    import pstats

    stats = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for func, (_cc, _nc, tt, _ct, callers) in stats.items():
        cat = _category(func)
        if cat is not None or not callers:
            totals[cat or "other"] = totals.get(cat or "other", 0.0) + tt
            continue
        for caller, caller_stats in callers.items():
            c = _category(caller) or "other"
            totals[c] = totals.get(c, 0.0) + caller_stats[2]
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def _set_threshold(home: Path, threshold: int) -> None:
    from ruamel.yaml import YAML

    path = home / "config.yaml"
    yaml = YAML()
    data = yaml.load(path.read_text()) if path.exists() else {}
    data = data or {}
    data.setdefault("knowledgebase", {}).setdefault("chunking", {})["threshold"] = threshold
    with path.open("w") as fh:
        yaml.dump(data, fh)


def diagnose(name: str, keep: bool = False) -> dict[str, Any]:
    """Three cold-index experiments on corpus ``name`` (each in a fresh home):

    - the CLI under ``cProfile`` (time per component, see :func:`profile_breakdown`; the profiler
      inflates Python-heavy parts, so read the shares, not the seconds);
    - ``knowledgebase.chunking.threshold`` set to 10**7 in config.yaml: every file is one chunk,
      no chunker runs (what chunking costs);
    - the raw floor with one transaction per file, as the store commits (what per-file commits cost).
    """
    out: dict[str, Any] = {"corpus": name}
    with temp_home(f"diag-{name}", keep=keep) as home:
        prepare_corpus(name, home)
        out["profile"] = _profiled_index(home)
        idx = index_path(home)
        files = indexed_files(idx)
        out["floor_per_file_commit"] = run_floor(files, home, idx, per_file=True)
        out["floor_one_transaction"] = run_floor(files, home, idx)
    with temp_home(f"diag-{name}-nochunk", keep=keep) as home:
        prepare_corpus(name, home)
        _set_threshold(home, 10**7)
        run, summary = cli_index(home)
        out["no_chunking"] = {"seconds": run.seconds, "peak_rss_mb": run.peak_rss_mb,
                              "chunks": summary["chunks_created"], "files": summary["files_indexed"]}
    with temp_home(f"diag-{name}-nochunk-profile", keep=keep) as home:
        prepare_corpus(name, home)
        _set_threshold(home, 10**7)
        out["no_chunking_profile"] = _profiled_index(home)
    return out


def _profiled_index(home: Path) -> dict[str, Any]:
    """A cold ``index`` run under cProfile, in its own process; self time per component."""
    stats_file = home / "index.pstats"
    argv = [sys.executable, "-m", "cProfile", "-o", str(stats_file), "-m", "hermes_workspace", "--quiet", "index"]
    run = run_process(argv, env=cli_env(home)).check()
    return {"seconds": run.seconds, "by_component": profile_breakdown(stats_file),
            "top_functions": top_functions(stats_file)}


def top_functions(stats_file: Path, count: int = 18) -> list[dict[str, Any]]:
    """The functions of hermes_workspace, chonkie and tree-sitter with the most cumulative time
    below the indexing use case (the entry points above it are left out)."""
    import pstats

    stats = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    rows = []
    for (file, line, name), (_cc, nc, tt, ct, _callers) in stats.items():
        where = file.replace("\\", "/")
        if name == "<module>" or not any(k in where or k in name for k in ("hermes_workspace/", "/chonkie/", "tree_sitter")):
            continue
        if any(k in where for k in ("entrypoints/", "application/indexing.py")) and name in (
                "main", "launcher", "index_command", "index", "execute", "_index_file", "_index_one"):
            continue
        short = where.split("site-packages/")[-1].split("src/")[-1]
        rows.append({"function": f"{short}:{line}({name})", "calls": nc, "self_s": tt, "cumulative_s": ct})
    return sorted(rows, key=lambda r: -r["cumulative_s"])[:count]


def run(mode: Mode, keep: bool = False) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in expand_corpora(mode.speed_corpora):
        log(f"speed: {name}")
        try:
            results[name] = measure_corpus(name, mode, keep=keep)
        except CorpusUnavailable as exc:
            log(f"speed: {name} skipped: {exc}")
            results[name] = {"corpus": name, "skipped": str(exc)}
            continue
        r = results[name]
        log(f"speed: {name}: {r['files']} files, cold {r['cold']['seconds']:.2f}s "
            f"(floor {r['floor']['seconds']:.2f}s, x{r['cold_vs_floor']:.1f}), unchanged {r['unchanged']['seconds']:.2f}s")
    diagnostics = None
    if "stdlib" in mode.speed_corpora:
        log("speed: diagnostics on stdlib (profile, no-chunking config, per-file-commit floor)")
        diagnostics = diagnose("stdlib", keep=keep)
    data = {"corpora": results, "change_fraction": CHANGE_FRACTION, "diagnostics": diagnostics}
    save_result("speed", mode, data)
    return data
