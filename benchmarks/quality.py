"""Retrieval quality: nDCG@10, recall@10 and MRR@10 on every BEIR set in ``shared/datasets``.

How, per set:

1. Every document is written as a markdown file (``# title``, blank line, text; no heading when the
   title is empty) named by a safe form of its ``_id`` into ``docs/`` of the primary workspace of
   a fresh ``HERMES_HOME``, which is indexed with ``Workspace.index()``.
2. Every query present in ``queries.jsonl`` that has a judgement is run with
   ``Workspace.search(text, limit=100)``; hits are mapped back to document ids by file name, a
   document's best-ranked chunk giving its rank; the near-duplicates a hit lists (``duplicates``)
   follow it.
3. The same texts are ranked by bm25s as a user would call it: ``bm25s.tokenize(texts,
   stopwords="en", stemmer=Stemmer.Stemmer("english"))``, ``bm25s.BM25()`` (Lucene variant,
   k1=1.5, b=0.75). Arabic sets (arcd) use ``Stemmer.Stemmer("arabic")`` and no stopword list
   (bm25s ships none for Arabic). Zero-score results are dropped (they match no query word).
4. ir-measures (trec_eval) computes the metrics; a query with no hit scores 0.

Ablations (always run, cheap) explain a difference: FTS5 queried directly on the same index file
with other ``MATCH`` strings and column weights, FTS5 over whole documents in memory with other
tokenizers, and bm25s with other tokenization and parameters.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import (
    Dataset,
    Mode,
    doc_text,
    fts_tokenizer,
    list_datasets,
    load_dataset,
    log,
    primary_workspace,
    query_words,
    save_result,
    temp_home,
    write_dataset,
)

DEPTH = 100
"""Hits fetched per query (documents beyond rank 10 only matter for ties and chunk collapsing)."""

METRICS = ("ndcg@10", "recall@10", "mrr@10")

Ranking = dict[str, list[str]]
"""query id -> document ids, best first."""


# -- evaluation --------------------------------------------------------------------------------


def evaluate(ds: Dataset, run: Ranking) -> dict[str, Any]:
    """Mean nDCG@10 (graded gains), recall@10 and MRR@10 (grade >= 1 is relevant) over
    ``ds.evaluated``; per-query values too. A query missing from ``run`` counts as 0."""
    import ir_measures
    from ir_measures import RR, R, nDCG

    measures = {"ndcg@10": nDCG @ 10, "recall@10": R @ 10, "mrr@10": RR @ 10}
    names = {str(m): n for n, m in measures.items()}
    qrels = {q: ds.qrels[q] for q in ds.evaluated}
    scored = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in run.items() if docs and q in qrels}
    per_query = {q: dict.fromkeys(METRICS, 0.0) for q in qrels}
    if scored:
        for m in ir_measures.iter_calc(list(measures.values()), qrels, scored):
            per_query[m.query_id][names[str(m.measure)]] = float(m.value)
    n = len(per_query) or 1
    means = {k: sum(v[k] for v in per_query.values()) / n for k in METRICS}
    return {**means, "queries": len(per_query), "per_query": per_query}


def _dedupe(doc_ids: Sequence[str | None]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for d in doc_ids:
        if d is not None and d not in seen:
            seen.add(d)
            out.append(d)
    return out


# -- hermes-workspace --------------------------------------------------------------------------


def rank_hermes(home: Path, stems: dict[str, str], queries: dict[str, str]) -> tuple[Ranking, float]:
    """Rank with the public API; returns the ranking and the mean seconds per query."""
    from hermes_workspace import Workspace

    run: Ranking = {}
    start = time.perf_counter()
    with Workspace.open(home) as ws:
        for qid, text in queries.items():
            run[qid] = hit_doc_ids(ws.search(text, limit=DEPTH), stems)
    return run, (time.perf_counter() - start) / max(1, len(queries))


def hit_doc_ids(hits: Sequence[Any], stems: dict[str, str]) -> list[str]:
    """The document ids of ``hits`` in rank order, each hit's near-duplicates (other files
    holding the same text, listed in its ``duplicates``) right after it: the hit names them,
    and MS MARCO judges such copies separately."""
    paths = [p for h in hits for p in (h.path, *(d.path for d in getattr(h, "duplicates", ())))]
    return _dedupe([stems.get(Path(p).stem) for p in paths])


# -- FTS5 directly (ablations) -----------------------------------------------------------------


def _quote(word: str) -> str:
    # The index holds normalized text (Arabic folding); query words must go through the same step.
    from hermes_workspace.domain.text_normalization import normalize_for_search

    return '"' + normalize_for_search(word).replace('"', '""') + '"'


def match_or(words: Sequence[str]) -> str:
    return " OR ".join(_quote(w) for w in words)


def match_and(words: Sequence[str]) -> str:
    return " AND ".join(_quote(w) for w in words)


class IndexProbe:
    """The index file of a run, opened read-only: ``MATCH`` strings and ``bm25()`` weights of our
    choosing over the very rows the product searches."""

    def __init__(self, index_file: Path, stems: dict[str, str]) -> None:
        import apsw

        self.conn = apsw.Connection(str(index_file), flags=apsw.SQLITE_OPEN_READONLY)
        self.doc_of_chunk = {
            cid: stems.get(Path(path).stem)
            for cid, path in self.conn.execute("SELECT c.id, f.abs_path FROM chunks c JOIN files f ON f.id = c.file_id")
        }

    def rank(self, match: str, weights: tuple[float, ...] = (1.0, 2.0, 1.0)) -> list[str]:
        if not match:
            return []
        w = ", ".join(repr(x) for x in weights)
        rows = self.conn.execute(
            f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, {w}) LIMIT ?",
            (match, DEPTH * 3),
        )
        return _dedupe([self.doc_of_chunk.get(r) for (r,) in rows])[:DEPTH]

    def close(self) -> None:
        self.conn.close()


class WholeDocFts5:
    """An in-memory FTS5 table with one row per whole document (no chunking, no section or path
    column), optionally over pre-processed text (e.g. Snowball-stemmed words)."""

    def __init__(self, ds: Dataset, tokenizer: str, transform: Callable[[str], str] | None = None) -> None:
        import apsw

        self.transform = transform or (lambda s: s)
        self.conn = apsw.Connection(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE d USING fts5(body, tokenize='{tokenizer}')")
        self.ids = list(ds.corpus)
        with self.conn:
            self.conn.executemany(
                "INSERT INTO d(rowid, body) VALUES (?, ?)",
                [(i + 1, self.transform(doc_text(*ds.corpus[d]))) for i, d in enumerate(self.ids)],
            )

    def rank(self, words: Sequence[str]) -> list[str]:
        words = [t for t in (self.transform(w).strip() for w in words) if t]
        if not words:
            return []
        rows = self.conn.execute("SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (match_or(words), DEPTH))
        return [self.ids[r - 1] for (r,) in rows]


# -- bm25s -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bm25sConfig:
    label: str
    stopwords: str | None
    stemmer: str | None
    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"


def rank_bm25s(ds: Dataset, cfg: Bm25sConfig) -> tuple[Ranking, float]:
    """bm25s over title+text; returns the ranking and the indexing seconds."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer(cfg.stemmer) if cfg.stemmer else None
    ids = list(ds.corpus)
    texts = [doc_text(*ds.corpus[d]) for d in ids]
    start = time.perf_counter()
    corpus_tokens = bm25s.tokenize(texts, stopwords=cfg.stopwords, stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25(k1=cfg.k1, b=cfg.b, method=cfg.method)
    retriever.index(corpus_tokens, show_progress=False)
    index_seconds = time.perf_counter() - start
    qids = ds.evaluated
    q_tokens = bm25s.tokenize([ds.queries[q] for q in qids], stopwords=cfg.stopwords, stemmer=stemmer, show_progress=False)
    docs, scores = retriever.retrieve(q_tokens, k=min(DEPTH, len(ids)), show_progress=False, n_threads=1)
    run: Ranking = {}
    for row, qid in enumerate(qids):
        run[qid] = [ids[int(d)] for d, s in zip(docs[row], scores[row]) if s > 0]
    return run, index_seconds


def is_arabic(ds: Dataset) -> bool:
    sample = " ".join(t for _, t in list(ds.corpus.values())[:50])
    arabic = len(re.findall(r"[\u0600-\u06FF]", sample))
    return arabic > 0.3 * max(1, len(re.findall(r"\w", sample)))


def bm25s_configs(arabic: bool) -> list[Bm25sConfig]:
    """The headline configuration first, then ablations."""
    if arabic:
        return [
            Bm25sConfig("bm25s: Snowball Arabic stemmer, no stopwords (headline)", None, "arabic"),
            Bm25sConfig("bm25s: no stemmer, no stopwords", None, None),
            Bm25sConfig("bm25s: Arabic stemmer, k1=1.2 b=0.75 (FTS5's)", None, "arabic", k1=1.2),
            Bm25sConfig("bm25s: FTS5-like (no stemmer, k1=1.2, Robertson IDF)", None, None, k1=1.2, method="robertson"),
        ]
    return [
        Bm25sConfig("bm25s: English stopwords + Snowball English stemmer (headline)", "en", "english"),
        Bm25sConfig("bm25s: Snowball stemmer, no stopwords", None, "english"),
        Bm25sConfig("bm25s: stopwords, no stemmer", "en", None),
        Bm25sConfig("bm25s: stopwords + stemmer, k1=1.2 b=0.75 (FTS5's)", "en", "english", k1=1.2),
        Bm25sConfig("bm25s: Porter stemmer, stopwords", "en", "porter"),
        Bm25sConfig(
            "bm25s: FTS5-like (Porter, no stopwords, k1=1.2, Robertson IDF)", None, "porter", k1=1.2, method="robertson"
        ),
    ]


# -- one dataset -------------------------------------------------------------------------------


def _snowball_transform(language: str) -> Callable[[str], str]:
    import Stemmer

    stemmer = Stemmer.Stemmer(language)
    word = re.compile(r"\w+")

    def transform(text: str) -> str:
        return " ".join(stemmer.stemWords(word.findall(text.lower())))

    return transform


_AR_MARKS = re.compile("[\u064B-\u0652\u0670\u0640]")  # harakat, dagger alef, tatweel
_AR_LETTERS = str.maketrans({"\u0623": "\u0627", "\u0625": "\u0627", "\u0622": "\u0627",  # hamza alefs -> alef
                             "\u0649": "\u064A",  # alef maqsura -> ya
                             "\u0629": "\u0647"})  # ta marbuta -> ha
_AR_ARTICLES = ("\u0648\u0627\u0644", "\u0628\u0627\u0644", "\u0643\u0627\u0644", "\u0641\u0627\u0644",
                "\u0644\u0644", "\u0627\u0644")  # wal-, bal-, kal-, fal-, lil-, al-


def arabic_normalize(word: str) -> str:
    """Orthographic normalization only: marks and tatweel out, alef/ya/ta-marbuta variants folded."""
    return _AR_MARKS.sub("", word).translate(_AR_LETTERS)


def arabic_light_stem(word: str) -> str:
    """Normalization plus the definite article (and its proclitic forms) stripped."""
    word = arabic_normalize(word)
    for prefix in _AR_ARTICLES:
        if word.startswith(prefix) and len(word) - len(prefix) >= 2:
            return word[len(prefix):]
    return word


def _word_transform(fn: Callable[[str], str]) -> Callable[[str], str]:
    word = re.compile(r"\w+")
    return lambda text: " ".join(fn(w) for w in word.findall(text.lower()))


def paired_randomization(a: Sequence[float], b: Sequence[float], rounds: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of a paired randomization (sign-flip) test on the mean difference."""
    import random

    diffs = [x - y for x, y in zip(a, b)]
    if not diffs:
        return 1.0
    observed = abs(sum(diffs))
    rng = random.Random(seed)
    hits = 0
    for _ in range(rounds):
        total = sum(d if rng.random() < 0.5 else -d for d in diffs)
        hits += abs(total) >= observed - 1e-12
    return (hits + 1) / (rounds + 1)


def _stopwords_en() -> set[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return set(STOPWORDS_EN)


def run_dataset(ds: Dataset, keep: bool = False) -> dict[str, Any]:
    """Index and evaluate one set: ours, bm25s, and the ablations."""
    arabic = is_arabic(ds)
    queries = {q: ds.queries[q] for q in ds.evaluated}
    systems: dict[str, dict[str, Any]] = {}
    rankings: dict[str, Ranking] = {}

    def record(key: str, label: str, group: str, run: Ranking, **extra: Any) -> None:
        rankings[key] = run
        systems[key] = {"label": label, "group": group, **evaluate(ds, run), **extra}

    with temp_home(f"quality-{ds.name}", keep=keep) as home:
        docs = primary_workspace(home) / "docs"
        stems = write_dataset(ds, docs)
        from hermes_workspace import Workspace

        start = time.perf_counter()
        with Workspace.open(home) as ws:
            summary = ws.index()
            index_file = Path(ws.index_path)
        index_seconds = time.perf_counter() - start
        run, per_query_s = rank_hermes(home, stems, queries)
        record("hermes", "hermes-workspace (Workspace.search, as shipped)", "headline", run,
               index_seconds=index_seconds, seconds_per_query=per_query_s,
               chunks=summary.chunks_created, files=summary.files_indexed)

        # FTS5 on the same index file, other MATCH strings / weights.
        probe = IndexProbe(index_file, stems)
        stop = _stopwords_en()
        words = {q: query_words(t) for q, t in queries.items()}
        probes = [
            ("fts_or", "FTS5 direct: OR of all words, weights content 1 / section 2 / path 1 (= shipped)",
             lambda q: match_or(words[q]), (1.0, 2.0, 1.0)),
            ("fts_or_nostop", "FTS5 direct: OR of words minus English stopwords",
             lambda q: match_or([w for w in words[q] if w not in stop] or words[q]), (1.0, 2.0, 1.0)),
            ("fts_and", "FTS5 direct: AND of all words",
             lambda q: match_and(words[q]), (1.0, 2.0, 1.0)),
            ("fts_w111", "FTS5 direct: OR, weights 1 / 1 / 1",
             lambda q: match_or(words[q]), (1.0, 1.0, 1.0)),
            ("fts_w100", "FTS5 direct: OR, content only (weights 1 / 0 / 0)",
             lambda q: match_or(words[q]), (1.0, 0.0, 0.0)),
            ("fts_w141", "FTS5 direct: OR, section (title) weight 4",
             lambda q: match_or(words[q]), (1.0, 4.0, 1.0)),
        ]
        for key, label, build, weights in probes:
            record(key, label, "fts5-same-index", {q: probe.rank(build(q), weights) for q in queries})
        probe.close()
        tokenizer = fts_tokenizer(index_file)

    # FTS5 over whole documents in memory: chunking/columns out; tokenizers swapped.
    whole_variants = [
        ("whole_same", f"FTS5 whole docs, same tokenizer ({tokenizer})", tokenizer, None, False),
        ("whole_nostem", "FTS5 whole docs, unicode61 remove_diacritics 2 (no stemming)", "unicode61 remove_diacritics 2",
         None, False),
        ("whole_snowball", f"FTS5 whole docs, Snowball {'Arabic' if arabic else 'English'}-stemmed text",
         "unicode61 remove_diacritics 2", _snowball_transform("arabic" if arabic else "english"), False),
    ]
    if arabic:
        whole_variants += [
            ("whole_ar_norm", "FTS5 whole docs, Arabic normalization (alef/ya/ta marbuta folded)",
             "unicode61 remove_diacritics 2", _word_transform(arabic_normalize), False),
            ("whole_ar_light", "FTS5 whole docs, Arabic normalization + article (al-) stripped",
             "unicode61 remove_diacritics 2", _word_transform(arabic_light_stem), False),
        ]
    else:
        whole_variants += [
            ("whole_same_nostop", "FTS5 whole docs, same tokenizer, query stopwords removed", tokenizer, None, True),
            ("whole_snowball_nostop", "FTS5 whole docs, Snowball-stemmed text, query stopwords removed",
             "unicode61 remove_diacritics 2", _snowball_transform("english"), True),
        ]
    for key, label, tok, transform, drop_stop in whole_variants:
        table = WholeDocFts5(ds, tok, transform)
        run = {}
        for q, text in queries.items():
            ws_ = query_words(text)
            if drop_stop:
                ws_ = [w for w in ws_ if w not in stop] or ws_
            run[q] = table.rank(ws_)
        record(key, label, "fts5-whole-docs", run)

    for i, cfg in enumerate(bm25s_configs(arabic)):
        run, secs = rank_bm25s(ds, cfg)
        record("bm25s" if i == 0 else f"bm25s_{i}", cfg.label, "headline" if i == 0 else "bm25s", run,
               index_seconds=secs, config=cfg.__dict__)

    ours, theirs = systems["hermes"], systems["bm25s"]
    wins = losses = ties = 0
    for q in ours["per_query"]:
        a, b = ours["per_query"][q]["ndcg@10"], theirs["per_query"][q]["ndcg@10"]
        wins += a > b + 1e-9
        losses += b > a + 1e-9
        ties += abs(a - b) <= 1e-9
    p_value = paired_randomization(
        [ours["per_query"][q]["ndcg@10"] for q in ours["per_query"]],
        [theirs["per_query"][q]["ndcg@10"] for q in ours["per_query"]],
    )
    worst = sorted(ours["per_query"], key=lambda q: ours["per_query"][q]["ndcg@10"] - theirs["per_query"][q]["ndcg@10"])
    examples = [
        {
            "query_id": q,
            "query": queries[q],
            "ours_ndcg@10": ours["per_query"][q]["ndcg@10"],
            "bm25s_ndcg@10": theirs["per_query"][q]["ndcg@10"],
            "ours_top3": rankings["hermes"][q][:3],
            "bm25s_top3": rankings["bm25s"][q][:3],
            "relevant": sorted(d for d, g in ds.qrels[q].items() if g > 0)[:5],
        }
        for q in worst[:5]
        if ours["per_query"][q]["ndcg@10"] < theirs["per_query"][q]["ndcg@10"]
    ]
    return {
        "dataset": ds.name,
        "documents": len(ds.corpus),
        "queries_in_file": len(ds.queries),
        "queries_evaluated": len(queries),
        "qrels_query_ids": len(ds.qrels),
        "language": "arabic" if arabic else "english",
        "with_titles": sum(1 for t, _ in ds.corpus.values() if t.strip()),
        "systems": systems,
        "per_query_vs_bm25s": {"wins": wins, "ties": ties, "losses": losses, "p_value": p_value},
        "largest_losses": examples,
    }


def run(mode: Mode, keep: bool = False) -> dict[str, Any]:
    """Every dataset, fully, in both modes (they are small)."""
    results: dict[str, Any] = {}
    paths = list_datasets()
    if not paths:
        log("quality: no dataset found; skipped")
    for path in paths:
        log(f"quality: {path.name}")
        results[path.name] = run_dataset(load_dataset(path), keep=keep)
        s = results[path.name]["systems"]
        log(f"quality: {path.name}: ours nDCG@10 {s['hermes']['ndcg@10']:.4f}, bm25s {s['bm25s']['ndcg@10']:.4f}")
    data = {"datasets": results}
    save_result("quality", mode, data)
    return data
