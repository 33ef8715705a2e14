"""Use case: free-text search over the index: keyword (seed 000 "Search"), semantic and hybrid (seed 001)."""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from hermes_workspace.application.embedding import close_vectors
from hermes_workspace.application.roots import home_root, select_roots
from hermes_workspace.domain.constants import MAX_QUERY_TERMS
from hermes_workspace.domain.errors import (
    ConsentRequiredError,
    EmbedderUnavailableError,
    RerankTimeoutError,
    UsageError,
    WorkspaceError,
)
from hermes_workspace.domain.fusion import (
    DEFAULT_RRF_K,
    FusionWeights,
    code_names,
    fusion_weights,
    is_distinctive,
    keep_best_keyword_hit,
    reciprocal_rank_fusion,
)
from hermes_workspace.domain.config import DEFAULT_MAX_HITS_PER_FILE
from hermes_workspace.domain.diversity import cap_per_file, collapse_duplicates
from hermes_workspace.domain.globs import compile_glob
from hermes_workspace.domain.model import Root, RootCoverage, SearchHit, SearchResults, UnavailableReason, scope_json
from hermes_workspace.domain.ports import Embedder, IndexStore, Reranker, VectorIndex
from hermes_workspace.domain.query import Compound, Query, parse_query
from hermes_workspace.domain.ranking import (
    brevity_weight,
    definition_matches,
    file_role,
    phrase_weight,
    query_word_list,
    role_weight,
)
from hermes_workspace.domain.root_names import covering_root
from hermes_workspace.domain.semantic import SEARCH_MODES, SemanticStatus, VectorStatus
from hermes_workspace.domain.text_normalization import has_cjk

MAX_LIMIT = 10_000
"""Largest number of hits one search returns; larger ``limit`` values are cut to it."""

EXACT_CANDIDATES = 50
"""Keyword candidates fetched (at least), among which exact matches and definitions are moved up
and the file-role weights reorder."""

LOOKUP_GROUPS = 4
"""Queries of at most this many groups (words or compounds, stopwords dropped) are lookups
(``FlaskGroup get_command``): the chunks that define what they name come first. Longer ones are
questions or pasted messages, where the definition of a name they mention is not the answer."""

EXTRA_CANDIDATES = 100
"""At most this many candidates beyond ``limit`` are fetched for near-duplicate collapse and the
per-file cap (:func:`candidates`)."""


def candidates(limit: int) -> int:
    """How many hits each retriever fetches for a search of ``limit`` hits: ``3 * limit``, at
    most ``limit + EXTRA_CANDIDATES``. Near-duplicate collapse and the per-file cap remove hits
    from the head; with three candidates per returned hit the cut still has ``limit`` hits unless
    most candidates come from a few files or are copies (then the capped hits fill the head)."""
    return limit + min(2 * limit, EXTRA_CANDIDATES)


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """How semantic and hybrid searches gather and fuse candidates (``knowledgebase.retriever``
    and ``knowledgebase.reranker``): candidates per retriever, the RRF constant, how many fused
    hits the reranker reorders and its deadline in milliseconds."""

    default_mode: str = "keyword"
    sparse_top_k: int = 40
    dense_top_k: int = 40
    rrf_k: int = DEFAULT_RRF_K
    rerank_top_n: int = 20
    rerank_deadline_ms: int = 2_000
    max_hits_per_file: int = DEFAULT_MAX_HITS_PER_FILE


@dataclass
class SemanticSide:
    """The dense retriever of a workspace: its ``embedder`` and a function opening its vector
    index (which may raise :class:`EmbedderUnavailableError`, e.g. without the extra). ``status``
    overrides what the index would report (``consent_required`` for a remote embedder the user
    has not agreed to, checked before anything is opened)."""

    embedder: Embedder
    open_vectors: Callable[[], VectorIndex]
    status: SemanticStatus | None = None


@dataclass
class _Search:
    """One search as it goes through the stages of :meth:`SearchWorkspace.execute`: what was asked
    (``text`` and its parsed ``query``, the filters ``prefix`` and ``glob``, ``limit``, the mode
    ``requested``) and what the stages found so far: the ``mode`` that runs (``keyword`` once the
    semantic side fell back), the semantic ``status``, the RRF weights reported as ``fusion``,
    the candidates of each retriever (``sparse``, ``dense``), the ranked ``hits``, whether they are
    in identifier tiers (``tiered``), the reranker that ordered them and the ``notes``."""

    text: str
    query: Query
    prefix: str | tuple[str, ...] | None
    glob: str | None
    limit: int
    requested: str
    mode: str
    status: SemanticStatus = "disabled"
    fusion: FusionWeights | None = None
    sparse: list[SearchHit] = field(default_factory=list)
    dense: list[SearchHit] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    tiered: bool = False
    reranked_by: str | None = None
    notes: list[str] = field(default_factory=list)
    pending: dict[Path, int] = field(default_factory=dict)
    """Chunks without a vector by root folder, read by the semantic side (empty otherwise)."""

    def fall_back(self, status: SemanticStatus, note: str, *, fusion: FusionWeights | None = None) -> None:
        """Turn this search into a keyword search because the semantic side cannot help:
        ``status`` says why, ``note`` what to do; ``fusion`` the weights that decided it, if any."""
        self.mode, self.status, self.fusion = "keyword", status, fusion
        self.notes.append(note)

    def results(self) -> SearchResults:
        """The first ``limit`` hits as :class:`SearchResults`, with the whole ranked list as its
        ``ranked``: ranking depends on ``limit`` (candidates, the per-file cap's head), so later
        pages of a result set come from this same computation, not a deeper one."""
        results = SearchResults(
            self.hits[: self.limit],
            mode=self.mode,
            requested_mode=self.requested,
            semantic_status=self.status,
            fusion=self.fusion.to_json() if self.fusion is not None else None,
            reranker=self.reranked_by,
            notes=self.notes,
        )
        results.ranked = self.hits
        return results


@dataclass
class SearchWorkspace:
    """Free text -> ranked hits, by keyword (BM25), semantic (nearest vectors) or hybrid search.

    Keyword: the store's BM25, with one rule on top for identifiers typed whole (``read_file``,
    ``hermes-agent``): among the best ``max(limit, 50)`` candidates, hits whose content contains
    the compound exactly as typed (case-insensitive) come first, in their order. BM25 alone ranks
    a chunk that says "read" and "file" many times above the one that defines ``read_file``.

    Hybrid: the best ``sparse_top_k`` BM25 candidates and the ``dense_top_k`` nearest chunks are
    fused with weighted Reciprocal Rank Fusion (:mod:`hermes_workspace.domain.fusion`; weights per
    query: a query the model cannot read is keyword-only, an identifier leans to keywords, prose
    to vectors), then the identifier rule, then the optional reranker. Whatever the semantic side
    cannot do (no embedder, no vectors yet, model missing, no consent) falls back to keyword
    search and says so in the response's ``semantic_status`` and ``notes``; it never fails the
    search. For a distinctive query (an identifier, or a phrase of five words shared with the best
    keyword hit: a pasted error message), the best keyword hit is kept in the top 3 of the fused
    list (:func:`~hermes_workspace.domain.fusion.keep_best_keyword_hit`); prose keeps the fused order.

    Every mode then, over :func:`candidates` (``3 x limit``, bounded) hits, in this order: the
    identifier rule; near-duplicate collapse (copies in other files fold into the best-ranked
    one, listed in its ``duplicates``; :mod:`hermes_workspace.domain.diversity`); the reranker
    (within the identifier groups); the per-file cap (the first ``limit`` hits hold at most
    ``max_hits_per_file`` hits of one file while other candidates remain; the others follow,
    not dropped); the cut to ``limit``. The cap comes last so that no sort undoes it, and it is a
    stable partition, so within its two parts the identifier and reranker orders hold
    (:class:`~hermes_workspace.domain.model.SearchHit`, "Order").
    """

    store: IndexStore
    default_limit: int
    semantic: SemanticSide | None = None
    reranker: Reranker | None = None
    settings: RetrievalSettings = field(default_factory=RetrievalSettings)
    roots: Sequence[Root] = ()
    """The workspace's roots with their names (``WorkspaceConfig.all_roots``): what ``roots``
    selects from and what names each hit's root (``root_name``)."""
    root_probe: Callable[[Path], UnavailableReason | None] | None = None
    """Why a root's folder cannot be searched now (one ``stat``), or ``None`` when it can; the
    response's per-root coverage (:meth:`root_coverage`). ``None``: folders are not looked at
    (every root counts as there)."""

    def execute(
        self,
        text: str,
        *,
        path: str | None = None,
        glob: str | None = None,
        limit: int | None = None,
        mode: str | None = None,
        roots: Sequence[str] | None = None,
        all_roots: bool = False,
        cwd: str | os.PathLike[str] | None = None,
    ) -> SearchResults:
        """Hits, best first, as :class:`SearchResults` (a list with ``mode``,
        ``semantic_status``, ``fusion``, ``reranker``, ``notes`` and ``scope``), each hit with
        its ``root_name``.

        Args:
            text: free text; operators and punctuation are ordinary characters. Text with no word
                of two or more characters gives no hits.
            path: keep hits whose absolute path starts with this (``~`` expanded; a relative
                path is taken from the current directory; an existing path has its symlinks
                resolved, as roots do; a trailing ``/`` is kept).
            glob: keep hits whose file passes this pattern (:mod:`hermes_workspace.domain.globs`;
                case-sensitive): without ``/`` it matches the file name (``*.py``, ``[!t]*``,
                ``*.{md,rst}``); with ``/`` whole path segments at the end of the absolute path
                (``json/*.py`` matches ``/x/json/a.py``, not ``/x/json/tests/a.py``), or the whole
                path when it starts with ``/``. ``*``, ``?`` and ``[...]`` never match ``/``;
                ``**`` matches zero or more whole segments (``docs/**/*.md``); ``{a,b}``
                expands. ``None`` means no filter.
            limit: at most this many hits; ``None`` means ``default_limit``; values below 1
                become 1 (seed 000 hardening P2), values above :data:`MAX_LIMIT` become it.
            mode: ``keyword``, ``semantic`` or ``hybrid``; ``None`` means the configured default.
            roots: names of roots (``roots list``): keep hits whose file is in one of their
                folders, and whose root it is (a root inside a non-recursive selected one is not
                part of it; roots overlap nowhere else); with ``path``, both
                must hold. Explicit: never widened. ``None`` or empty: see ``cwd``.
            all_roots: search every root, whatever ``cwd`` is (``--all``); not with ``roots``.
            cwd: the working directory the search is asked from (``~`` expanded, relative to
                the process's, symlinks resolved); ``None``: none, every root is searched.
                Without ``roots`` and ``all_roots``, when ``cwd`` is inside a root
                (:func:`~hermes_workspace.application.roots.home_root`: the deepest one; a
                linked git worktree counts as its main repository's root), that home root is
                searched first (its own files only), and only when it has no hit
                at all, every root (``widened``).

        The response's ``scope`` (:func:`~hermes_workspace.domain.model.scope_json`) lists the
        roots whose hits are returned, the home root's name (``None`` when the roots were
        chosen explicitly or ``cwd`` is in no root), whether the search widened, and each listed
        root's ``coverage`` (:meth:`root_coverage`; chunks without a vector count only in
        semantic and hybrid mode). A root whose folder is missing, not a folder or not readable
        now (``unavailable``) serves no hit: what the index still holds of it is not current.

        Raises:
            UsageError: an unknown ``mode``; a malformed or empty ``glob`` (unclosed ``[`` or
                ``{``...; checked before anything is searched); a name in ``roots`` that no root
                has (the message lists the names); both ``roots`` and ``all_roots``.
            IndexNotFoundError: the workspace was never indexed.
            StoreError: the database failed.
        """
        mode = mode or self.settings.default_mode
        if mode not in SEARCH_MODES:
            raise UsageError(
                f"unknown search mode {mode!r}", hint=f"Use one of: {', '.join(SEARCH_MODES)}."
            )
        if roots and all_roots:
            raise UsageError("give root names or all roots, not both",
                             hint="--root NAME searches the named roots; --all searches every root.")
        every = list(self.roots)
        explicit = select_roots(every, list(roots)) if roots else None
        home = home_root(_absolute_cwd(cwd), every) if cwd is not None and explicit is None and not all_roots else None
        prefix = _absolute_prefix(path)
        limit = min(MAX_LIMIT, self.default_limit if limit is None else max(1, limit))
        if glob is not None:
            compile_glob(glob)  # a malformed pattern is a usage error, whichever side searches first
        selected = explicit if explicit is not None else [home] if home is not None else every
        narrowed = explicit is not None or home is not None
        problems: dict[Path, UnavailableReason | None] = {}  # one stat per root, at most
        results, pending = self._run(text, _root_prefixes(prefix, selected) if narrowed else prefix, glob, limit,
                                     mode, selected if narrowed else None, self._unavailable(selected, problems))
        widened = home is not None and not results.ranked
        if widened:  # nothing at all in the home root: every root
            selected = every
            results, pending = self._run(text, prefix, glob, limit, mode, None, self._unavailable(every, problems))
        coverage = self._coverage(selected, pending if mode != "keyword" else None, problems)
        results.scope = scope_json({"roots": [r.name for r in selected],
                                    "home": home.name if home is not None else None, "widened": widened,
                                    "coverage": [row.to_json() for row in coverage]})
        return results

    def root_coverage(self, roots: Sequence[Root] | None = None, *, semantic: bool = False) -> list[RootCoverage]:
        """The coverage of ``roots`` (default: every root), in their order, as a search reports
        it (:class:`~hermes_workspace.domain.model.RootCoverage`): the store's per-root counts of
        the last index run (one small read), a ``stat`` of each folder (``root_probe``) and,
        with ``semantic`` and an embedder configured, the chunks still without a vector (one
        grouped count, only while some are pending). What ``status`` shows per root.

        Raises:
            StoreError: the database failed.
        """
        return self._coverage(list(self.roots) if roots is None else roots,
                              self._pending_by_root() if semantic else None)

    def _coverage(self, roots: Sequence[Root], pending: Mapping[Path, int] | None,
                  problems: dict[Path, UnavailableReason | None] | None = None) -> list[RootCoverage]:
        """Coverage rows of ``roots``; ``pending``: chunks without a vector by root folder, or
        ``None`` when vectors do not matter (a keyword search); ``problems``: folders already
        looked at (:meth:`_unavailable`)."""
        counts = self.store.root_counts()
        problems = {} if problems is None else problems
        self._unavailable(roots, problems)
        return [
            RootCoverage.of(str(root.name), counts.get(root.path), problems[root.path], (pending or {}).get(root.path, 0))
            for root in roots
        ]

    def _unavailable(self, roots: Sequence[Root], problems: dict[Path, UnavailableReason | None]) -> set[str]:
        """The names of ``roots`` whose folder cannot be searched now (``root_probe``, one stat
        per folder, remembered in ``problems``): their files are not served, since what the
        index holds of them is gone or cannot be verified (the coverage says ``unavailable``)."""
        probe = self.root_probe
        for root in roots:
            if root.path not in problems:
                problems[root.path] = probe(root.path) if probe is not None else None
        return {str(root.name) for root in roots if problems[root.path] is not None}

    def _pending_by_root(self) -> dict[Path, int] | None:
        """Chunks without a vector by root folder when an embedder is configured and usable
        (``None`` otherwise: no vector is expected, so none is missing)."""
        side = self.semantic
        if side is None or side.status is not None:
            return None
        vectors: VectorIndex | None = None
        try:
            vectors = side.open_vectors()
            return vectors.pending_by_root() if vectors.status().pending else {}
        except WorkspaceError:
            return None
        finally:
            close_vectors(vectors)

    def _run(self, text: str, prefix: str | tuple[str, ...] | None, glob: str | None, limit: int,
             mode: str, selected: Sequence[Root] | None = None, unavailable: set[str] | frozenset[str] = frozenset(),
             ) -> tuple[SearchResults, dict[Path, int]]:
        """One search over the files under ``prefix`` (one prefix or several, ``None``: all),
        through every stage, each hit with its ``root_name``; with ``selected``, only the hits
        whose root (``root_name``) is one of them: a root inside a non-recursive selected root
        is under its prefix but not part of it; never the hits of the ``unavailable`` roots
        (names). Also the chunks without a vector by root folder, when the semantic side read
        them."""
        search = _Search(
            text=text,
            query=parse_query(text),
            prefix=prefix,
            glob=glob,
            limit=limit,
            requested=mode,
            mode=mode,
        )
        if search.query.is_empty:
            search.notes.append(EMPTY_NOTE)
        # Retrievers: the semantic side first, since what it cannot do turns the search into a
        # keyword one (mode, status and notes say so) before the keyword side runs.
        self._retrieve_semantic(search)
        self._retrieve_keyword(search)
        # Fusion: one ranked list.
        self._fuse(search)
        # Each hit names its root; the roots not asked for, or unavailable, go now: the tiers,
        # duplicates, reranker and per-file cap then deal with the hits served only (a cap note
        # about hits nobody gets, or a served copy folded into a dropped one, otherwise).
        search.hits = [self._with_root_name(hit) for hit in search.hits]
        if selected is not None:
            names = {root.name for root in selected}
            search.hits = [hit for hit in search.hits if hit.root_name in names]
        if unavailable:
            search.hits = [hit for hit in search.hits if hit.root_name not in unavailable]
        if has_cjk(text):
            search.notes.append(CJK_NOTE)
        # Rerank, between the identifier tiers and the per-file cap that no later sort may undo.
        self._identifiers_first(search)
        self._collapse_duplicates(search)
        self._rerank(search)
        # Finish: the per-file cap, then the cut to `limit`.
        self._cap_per_file(search)
        return search.results(), search.pending

    def _with_root_name(self, hit: SearchHit) -> SearchHit:
        """``hit`` with ``root_name`` set (:func:`~hermes_workspace.domain.root_names.covering_root`;
        ``None`` when no configured root holds it)."""
        root = covering_root(hit.path, self.roots)
        return replace(hit, root_name=root.name if root is not None else None)

    # -- retrievers --------------------------------------------------------------------------

    def _retrieve_semantic(self, search: _Search) -> None:
        """The semantic side of a ``semantic`` or ``hybrid`` search: sets ``search.status`` and,
        when the side can answer, ``search.dense`` (the nearest :func:`candidates`, at least
        ``dense_top_k``) and, in hybrid mode, ``search.fusion`` (the query's RRF weights).

        Whatever the side cannot do (no embedder, a status forced by the configuration, no or
        other vectors, a model that reads none of the indexed text or not the query's language,
        no consent, a model that cannot run) falls back to keyword search
        (:meth:`_Search.fall_back`): the status says why, a note says what to do. A keyword
        search and an empty query only report the status (cheap: counts only).

        Raises:
            StoreError: the vector index failed otherwise (not a fallback).
        """
        if search.mode == "keyword" or search.query.is_empty:
            search.status = self._status_only()
            return
        side = self.semantic
        if side is None:
            search.fall_back(
                "disabled", "no embedder is configured (knowledgebase.embedder.provider: none): keyword search only"
            )
            return
        if side.status is not None:
            search.fall_back(side.status, _STATUS_NOTES.get(side.status, side.status))
            return
        vectors: VectorIndex | None = None
        try:
            vectors = side.open_vectors()
            stored = vectors.status()
            if stored.pending:  # coverage: which roots they are in (a pass over the chunks, only then)
                search.pending = vectors.pending_by_root()
            refusal = _vectors_refusal(stored, side.embedder.signature)
            if refusal is not None:
                search.fall_back(*refusal)
                return
            status: SemanticStatus = stored.semantic_status()
            if status == "partial":
                search.notes.append(
                    f"{stored.pending} of {stored.chunks} chunks have no vector yet (run `hermes-workspace index`): "
                    "semantic hits come from the others"
                )
            weights = fusion_weights(search.query, side.embedder.coverage(search.text), complete=status == "ready")
            if weights.semantic == 0:
                note = "the embedding model does not read the query's language: keyword search only"
                search.fall_back(status, note, fusion=weights)
                return
            vector = side.embedder.embed_query(search.text)
            search.dense = vectors.search(
                vector,
                path_prefix=search.prefix,
                glob=search.glob,
                limit=max(candidates(search.limit), self.settings.dense_top_k),
            )
            search.status = status
            if search.mode == "hybrid":
                search.fusion = weights
        except ConsentRequiredError as exc:
            search.fall_back("consent_required", exc.message)
        except EmbedderUnavailableError as exc:
            search.fall_back("unavailable", f"{exc.message} ({exc.hint})" if exc.hint else exc.message)
        finally:
            close_vectors(vectors)

    def _retrieve_keyword(self, search: _Search) -> None:
        """The keyword side: ``search.sparse``, the store's BM25 candidates (:meth:`_bm25`). A
        keyword search (asked for or fallen back to) fetches :func:`candidates`, at least
        :data:`EXACT_CANDIDATES`, weighted by phrases too; a hybrid one at least ``sparse_top_k``,
        without the phrase weight. A semantic search and an empty query fetch nothing."""
        if search.query.is_empty or search.mode == "semantic":
            return
        fetch = candidates(search.limit)
        if search.mode == "keyword":
            search.sparse = self._bm25(search, max(fetch, EXACT_CANDIDATES), phrases=True)
        else:
            search.sparse = self._bm25(search, max(fetch, self.settings.sparse_top_k))

    def _bm25(self, search: _Search, fetch: int, *, phrases: bool = False) -> list[SearchHit]:
        """The store's best ``fetch`` BM25 hits with each score weighted by its file's role
        (:func:`~hermes_workspace.domain.ranking.role_weight`: tests and changelogs count less
        unless the query asks for them) and, below 8 words, by its length
        (:func:`~hermes_workspace.domain.ranking.brevity_weight`), best first. With ``phrases``
        (keyword mode) also by the query words found in order
        (:func:`~hermes_workspace.domain.ranking.phrase_weight`); hybrid mode leaves that out: the
        vectors already reward wording, and on msmarco the two together scored 0.7998 against
        0.8035 without it."""
        query = search.query
        hits = self.store.search(query, path_prefix=search.prefix, glob=search.glob, limit=fetch)
        words = query.words
        typed = query_word_list(query.text)[:MAX_QUERY_TERMS] if phrases else []
        weighted = [
            replace(
                h,
                score=h.score * role_weight(_role(h), words) * brevity_weight(h.tokens)
                * (phrase_weight(typed, h.content) if typed else 1.0),
            )
            for h in hits
        ]
        return sorted(weighted, key=lambda h: -h.score)

    # -- fusion ------------------------------------------------------------------------------

    def _fuse(self, search: _Search) -> None:
        """``search.hits``, one ranked list from the retrievers: the keyword candidates as they
        are; the semantic ones with ``semantic_rank`` and ``similarity`` set; in hybrid mode the
        weighted RRF of both (:func:`fuse`), with the best keyword hit kept in the top 3 for a
        distinctive query (:func:`~hermes_workspace.domain.fusion.keep_best_keyword_hit`)."""
        if search.query.is_empty:
            return
        if search.mode == "keyword":
            search.hits = search.sparse
        elif search.mode == "semantic":
            search.hits = [
                replace(hit, semantic_rank=rank, similarity=hit.score)
                for rank, hit in enumerate(search.dense, start=1)
            ]
        else:
            assert search.fusion is not None  # set with the dense candidates in hybrid mode
            hits = fuse(
                search.sparse,
                search.dense,
                search.fusion,
                self.settings.rrf_k,
                sparse_top_k=self.settings.sparse_top_k,
                dense_top_k=self.settings.dense_top_k,
            )
            best_keyword = search.sparse[0].content if search.sparse else None
            if is_distinctive(search.query, search.fusion.kind, best_keyword):
                hits = keep_best_keyword_hit(hits)
            search.hits = hits

    # -- rerank ------------------------------------------------------------------------------

    def _identifiers_first(self, search: _Search) -> None:
        """The identifier rule (:func:`_exact_first`): for a query naming identifiers
        (:func:`_literals`) or one plain word (:func:`_lone_name`), hits holding them, and for
        a lookup (at most :data:`LOOKUP_GROUPS` groups) those defining them, come first; the
        order by score holds within each tier (``search.tiered`` is set)."""
        literals = _literals(search.query)
        names = _lone_name(search.query)
        if literals or names:
            search.tiered = True
            search.hits = _exact_first(
                search.hits, literals, definitions=len(search.query.groups) <= LOOKUP_GROUPS, names=names
            )

    def _collapse_duplicates(self, search: _Search) -> None:
        """Near-duplicate collapse (:func:`~hermes_workspace.domain.diversity.collapse_duplicates`),
        before the reranker: it scores distinct texts only."""
        search.hits = collapse_duplicates(search.hits)

    def _rerank(self, search: _Search) -> None:
        """The optional reranker over the first ``rerank_top_n`` hits (the others follow in
        their order), within the identifier tiers, never across them. A reranker that misses its
        ``rerank_deadline_ms``, fails or returns scores that are not one finite number per hit
        leaves the order as it was, with a note; otherwise ``score`` and ``rerank_score`` are its
        scores and ``search.reranked_by`` its name."""
        if self.reranker is None or not search.hits:
            return
        hits, top_n = search.hits, self.settings.rerank_top_n
        head, tail = hits[:top_n], hits[top_n:]
        deadline = time.monotonic() + self.settings.rerank_deadline_ms / 1000
        try:
            scores = self.reranker.rerank(search.text, head, deadline=deadline)
        except RerankTimeoutError:
            search.notes.append(
                f"the reranker missed its {self.settings.rerank_deadline_ms} ms deadline: fused order kept"
            )
            return
        except WorkspaceError as exc:
            search.notes.append(f"the reranker failed ({exc.message}): fused order kept")
            return
        if len(scores) != len(head) or not all(math.isfinite(s) for s in scores):
            search.notes.append("the reranker returned unusable scores: fused order kept")
            return
        order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        reranked = [replace(head[i], score=float(scores[i]), rerank_score=float(scores[i])) for i in order] + tail
        search.hits = sorted(reranked, key=_exact_key) if search.tiered else reranked
        search.reranked_by = self.reranker.name

    # -- finish ------------------------------------------------------------------------------

    def _cap_per_file(self, search: _Search) -> None:
        """The per-file cap (:func:`~hermes_workspace.domain.diversity.cap_per_file`), last so
        that no later sort undoes it; a stable partition, so the tier and reranker orders hold
        within its two parts. Says how many hits it moved down."""
        cap = self.settings.max_hits_per_file
        search.hits, beyond = cap_per_file(search.hits, cap, search.limit)
        if beyond:
            search.notes.append(
                f"{beyond} hit(s) come after the others because their file already has "
                f"{cap} hits above them (file_rank; knowledgebase.retriever.max_hits_per_file)"
            )

    # -- semantic status ---------------------------------------------------------------------

    def _status_only(self) -> SemanticStatus:
        """The semantic status reported by a keyword search (cheap: counts only)."""
        return self.semantic_status()[0]

    def semantic_status(self) -> tuple[SemanticStatus, VectorStatus | None, str | None]:
        """``(status, vector counts or None, note or None)`` without embedding anything: what a
        semantic or hybrid search could use right now (``status`` shows it)."""
        side = self.semantic
        if side is None:
            return "disabled", None, None
        if side.status is not None:
            return side.status, None, _STATUS_NOTES.get(side.status)
        vectors: VectorIndex | None = None
        try:
            vectors = side.open_vectors()
            stored = vectors.status()
            if stored.embedded == 0 and stored.last_error is not None:
                return "unavailable", stored, (
                    f"the last embedding pass failed: {_error_text(stored.last_error)}; fix that and run "
                    "`hermes-workspace index`"
                )
            if stored.signature is None:
                return "indexing", stored, "no chunk has a vector yet: run `hermes-workspace index`"
            if stored.signature != side.embedder.signature:
                return "unavailable", stored, "the stored vectors were made by another embedder: run `hermes-workspace index`"
            return stored.semantic_status(), stored, None
        except WorkspaceError as exc:
            return "unavailable", None, exc.message
        finally:
            close_vectors(vectors)

EMPTY_NOTE = "the query holds no word of two or more letters or digits: nothing to search for"

CJK_NOTE = (
    "keywords match Chinese, Japanese and Korean text by overlapping two-character pieces, without "
    "a dictionary: a word is found inside longer runs, also inside a longer word holding it; a run "
    "of more than four characters also finds passages holding only some of its pieces, ranked "
    "below those holding more; one-character words are not searched"
)
"""Said with every query holding Chinese, Japanese or Korean letters: how the keyword index
matches them (see :func:`hermes_workspace.domain.text_normalization.cjk_bigrams` and
``CJK_PHRASE_MAX_BIGRAMS`` in the SQLite store), so that hits sharing only part of a long query, or
a short word found inside a longer one, do not surprise."""

_STATUS_NOTES: dict[str, str] = {
    "consent_required": (
        "the configured embedder sends text to a remote service and has no consent "
        "(knowledgebase.embedder.consent): nothing was sent; keyword search only"
    ),
    "unavailable": "the configured embedder cannot run: keyword search only",
}


def fuse(
    sparse: Sequence[SearchHit],
    dense: Sequence[SearchHit],
    weights: FusionWeights,
    rrf_k: int,
    *,
    sparse_top_k: int | None = None,
    dense_top_k: int | None = None,
) -> list[SearchHit]:
    """Weighted RRF of keyword hits and semantic hits (each best first) into hybrid hits, best
    first: ``score`` and ``fused_score`` are the RRF score, ``keyword_rank``/``semantic_rank``
    the 1-based ranks in each list (``None`` where absent), ``similarity`` the cosine of a hit the
    semantic side found. A retriever of weight 0 contributes nothing.

    Only the first ``sparse_top_k`` and ``dense_top_k`` hits of each list are fused (the head);
    hits found deeper, fetched because a caller asked for more than that, follow the head in
    their own fused order. So asking for 100 hits does not reorder the first ones. A deeper hit's
    ``score`` is its RRF score capped at the last head score, so that ``score`` never increases
    down the list; its ``fused_score`` keeps the uncapped value (a keyword rank of 41 weighted 4:1
    can outscore a dense-only rank of 40 in the head).
    """
    by_key: dict[Hashable, SearchHit] = {}
    similarity: dict[Hashable, float] = {}
    for hit in dense:
        by_key.setdefault(hit.key, hit)
        similarity.setdefault(hit.key, hit.score)
    for hit in sparse:
        by_key[hit.key] = hit  # the keyword hit carries the same chunk; either copy will do
    sparse_keys, dense_keys = [h.key for h in sparse], [h.key for h in dense]
    w = [weights.keyword, weights.semantic]
    head = reciprocal_rank_fusion([sparse_keys[:sparse_top_k], dense_keys[:dense_top_k]], w, rrf_k)
    in_head = {f.key for f in head}
    full = {f.key: f for f in reciprocal_rank_fusion([sparse_keys, dense_keys], w, rrf_k)}
    tail = [f for f in full.values() if f.key not in in_head]
    cap = head[-1].score if head else math.inf
    return [
        replace(
            by_key[f.key],
            score=f.score if f.key in in_head else min(f.score, cap),
            fused_score=f.score,
            keyword_rank=full[f.key].ranks[0],
            semantic_rank=full[f.key].ranks[1],
            similarity=similarity.get(f.key),
        )
        for f in [*head, *tail]
    ]


def _vectors_refusal(stored: VectorStatus, signature: str) -> tuple[SemanticStatus, str] | None:
    """Why the stored vectors cannot answer a search embedded with ``signature``, as the
    ``(semantic status, note)`` of the fallback to keyword search, or ``None`` when they can."""
    if stored.embedded == 0 and stored.last_error is not None:
        return "unavailable", (
            f"the last embedding pass failed: {_error_text(stored.last_error)}; fix that and run "
            "`hermes-workspace index`; keyword search only"
        )
    if stored.signature is None or (stored.embedded == 0 and stored.pending > 0):
        return "indexing", "no chunk has a vector yet: run `hermes-workspace index`; keyword search only"
    if stored.embedded == 0:
        return stored.semantic_status(), (
            f"the embedding model reads none of the indexed text ({stored.unreadable} chunks in languages "
            "it was not trained on): keyword search only; a multilingual model would help"
        )
    if stored.signature != signature:
        return "unavailable", (
            "the stored vectors were made by another embedder than the configured one: "
            "run `hermes-workspace index` to re-embed; keyword search only"
        )
    return None


def _error_text(error: dict[str, object]) -> str:
    message, hint = str(error.get("message", "")), str(error.get("hint", "") or "")
    return f"{message} ({hint})" if hint else message


def _lone_name(query: Query) -> list[str]:
    """A query of one plain word (``gather``, ``loads``) may name a function: the word,
    case-folded, as a name for the definition tier only (no exact-match tier: a word is not an
    identifier typed whole)."""
    if len(query.groups) == 1 and isinstance(query.groups[0], str) and not code_names(query):
        return [query.groups[0].casefold()]
    return []


def _literals(query: Query) -> list[str]:
    """Identifiers typed whole: compounds (``read_file``, ``hermes-agent``) and code names
    (``EmailMessage``, ``json.loads``), case-folded, for the exact-match rule. In a question
    (more than :data:`LOOKUP_GROUPS` groups) a hyphenated compound is an English word
    (``class-based``, ``built-in``, ``command-line``), not an identifier: only compounds with
    ``_`` and code names count there. Measured on the code-nav-flask paraphrases: hyphenated
    words lifted the docs that use them above the code that answers."""
    lookup = len(query.groups) <= LOOKUP_GROUPS
    found = [
        g.literal.casefold()
        for g in query.groups
        if isinstance(g, Compound) and g.literal and (lookup or "_" in g.literal)
    ]
    found += [name.casefold() for name in code_names(query)]
    return list(dict.fromkeys(found))


def _exact_first(
    hits: list[SearchHit], literals: list[str], *, definitions: bool = False, names: Sequence[str] = ()
) -> list[SearchHit]:
    """``hits`` with ``exact_matches`` set (how many of ``literals`` each one's content holds as
    whole identifiers), ordered by it, most first; a stable sort, so the order by ``score`` holds
    within each group. The order is thus ``(exact_matches desc, score desc)``: the documented
    key that makes a lower score above a higher one explainable.

    With ``definitions`` (a short, lookup-style query), ``definition_matches`` is set too (how
    many literals the definitions that start in the chunk name, see
    :func:`~hermes_workspace.domain.ranking.definition_matches`) and comes first in the order:
    ``(definition_matches desc, exact_matches desc, score desc)``. A long query (a pasted error
    message) skips it: the code that raises ``SomeError`` must not lose to the class that
    defines it. ``names`` are further words that count as defined names only (a one-word query
    such as ``gather``: the chunk that defines ``gather`` before those that use it)."""
    # Whole identifiers only: `read_file` must not match inside `thread_file` or `_read_files`.
    patterns = [re.compile(rf"(?<!\w){re.escape(literal)}(?!\w)") for literal in literals]

    def exact_matches(hit: SearchHit) -> int:
        text = hit.content.casefold()
        return sum(1 for pattern in patterns if pattern.search(text))

    counted = [
        replace(
            hit,
            exact_matches=exact_matches(hit) if literals else None,
            definition_matches=(
                definition_matches([*literals, *names], hit.definitions, _place(hit)) if definitions else None
            ),
        )
        for hit in hits
    ]
    return sorted(counted, key=_exact_key)


def _exact_key(hit: SearchHit) -> tuple[int, int]:
    return (-(hit.definition_matches or 0), -(hit.exact_matches or 0))


def _relative(hit: SearchHit) -> PurePath:
    """The hit's path below its root (the whole path when the root is unknown or not above it)."""
    try:
        return hit.path.relative_to(hit.root) if hit.root is not None else hit.path
    except ValueError:
        return hit.path


def _place(hit: SearchHit) -> PurePath:
    """The hit's path from its root's own folder down (``json/__init__.py`` for a root that is the
    ``json`` package itself): what a module-qualified name may name."""
    relative = _relative(hit)
    if hit.root is not None and hit.root.name and relative != hit.path:
        return PurePath(hit.root.name) / relative
    return relative


def _role(hit: SearchHit) -> str:
    """The role of the hit's file (:func:`~hermes_workspace.domain.ranking.file_role`)."""
    return file_role(_relative(hit))


def _root_prefixes(prefix: str | None, roots: Sequence[Root]) -> tuple[str, ...]:
    """The path prefixes that keep the files of ``roots`` (each root's folder with a trailing
    ``/``) and, when ``prefix`` (``--path``) is given, also start with it: per root, the longer of
    the two when one starts with the other, nothing when they are disjoint."""
    prefixes: list[str] = []
    for root in roots:
        folder = str(root.path).rstrip(os.sep) + os.sep
        if prefix is None or prefix.startswith(folder):
            chosen = prefix or folder
        elif folder.startswith(prefix):
            chosen = folder
        else:
            continue
        if chosen not in prefixes:
            prefixes.append(chosen)
    return tuple(prefixes)


def _absolute_cwd(cwd: str | os.PathLike[str]) -> Path:
    """``cwd`` as roots are stored: ``~`` expanded, absolute, symlinks resolved (a folder that
    does not exist is taken as written)."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(cwd))))


def _absolute_prefix(path: str | None) -> str | None:
    if not path:
        return None
    expanded = os.path.expanduser(path)
    # Roots are stored with symlinks resolved, so an existing prefix is resolved the same way.
    absolute = os.path.realpath(expanded) if os.path.exists(expanded) else os.path.abspath(expanded)
    if expanded.endswith(os.sep) and not absolute.endswith(os.sep):
        absolute += os.sep
    return absolute
