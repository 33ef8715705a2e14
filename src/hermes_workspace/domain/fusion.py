"""Rank fusion for hybrid search: weighted Reciprocal Rank Fusion and the rule that sets the weights.

RRF (Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual
rank learning methods", SIGIR 2009): ``score(d) = sum_i w_i / (k + rank_i(d))`` over the
retrievers that returned ``d`` (ranks 1-based), ``k = 60`` in the paper and by default here.
Weights per retriever follow the weighted form used by search engines that ship RRF (a weight
multiplies a retriever's contribution); ``w = 0`` leaves a retriever out.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.query import Compound, Query, split_words
from hermes_workspace.domain.ranking import longest_ordered_run
from hermes_workspace.domain.semantic import COVERAGE_THRESHOLD

K = TypeVar("K", bound=Hashable)

DEFAULT_RRF_K = 60
"""The RRF constant of Cormack et al. (2009) and of seed 001."""

LOOKUP_SEMANTIC_WEIGHT = 0.5
"""The semantic weight for term lookups and code names (keyword weight :data:`LEANING_WEIGHT`):
at 4:1 the vectors cannot lift a chunk that only shares a common word of the query ("definition"
in "definition of a sigmet") above the chunks BM25 ranks near the top for the rare one, nor any
dense-only candidate above a keyword hit; they still break near-ties and add recall after them."""

LEANING_WEIGHT = 2.0
"""The weight of the retriever that suits the query's kind (the other has 1). Measured on the
msmarco set (50 prose questions, all-MiniLM-L6-v2, top 40 + 40, k = 60): equal weights 0.793
nDCG@10, dense-leaning 2:1 0.804, dense alone 0.798, BM25 alone 0.729 (none of these differences
is significant at 50 queries); hybrid search products lean the same way by default for prose."""

SHORT_QUERY_WORDS = 2
"""Queries of at most this many words (stopwords not counted) look terms up (``sigmet``,
``definition of a sigmet``, ``EmailMessage``): their exact matches must come first, and keyword
search is the retriever that promises them."""

QueryKind = Literal["prose", "terms", "identifier", "unreadable"]
"""``identifier``: the query holds a code name as typed (``read_file``, ``EmailMessage``,
``json.loads``); ``unreadable``: the embedder does not read the query's language
(:data:`COVERAGE_THRESHOLD`); ``terms``: at most :data:`SHORT_QUERY_WORDS` words (stopwords not
counted); ``prose``: the rest (questions and descriptions, where the dense side paraphrases best).

Measured on msmarco (43 queries, 9 of them short or holding a code-like token): a finer rule that
also sent three-word queries without a function word (``lps laws definition``) and words with
digits (``ww1``) to the keyword side scored 0.7924 nDCG@10 against 0.8004 without it, so it was
dropped; three rare terms in a row (``sigmet airmet pirep``) therefore count as prose."""

_IDENTIFIER = re.compile(
    r"""
    [A-Za-z0-9]_+[A-Za-z0-9]    # snake_case (not a blank to fill in: ____)
    | [a-z][A-Z]                # camelCase, CamelCase
    | [A-Za-z_]\w*\.[A-Za-z_]   # dotted.name
    | ::|->|\(\)                # C++/Rust paths, calls
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """Per-retriever RRF weights chosen for one query, and why."""

    keyword: float
    semantic: float
    kind: QueryKind

    def to_json(self) -> dict[str, object]:
        """``{"keyword_weight", "semantic_weight", "query_kind"}``."""
        return {"keyword_weight": self.keyword, "semantic_weight": self.semantic, "query_kind": self.kind}


def fusion_weights(query: Query, coverage: float, *, complete: bool = True) -> FusionWeights:
    """The RRF weights for ``query``, given the embedder's :func:`letter_coverage` of its text.

    - coverage below :data:`COVERAGE_THRESHOLD`: keyword 1, semantic 0 (the dense ranking of a
      language the model does not read is noise: on the Arabic arcd set an English model alone
      scores 0.04 nDCG@10 and plain RRF drags BM25's 0.81 down to 0.42);
    - a code name in the query (``snake_case``, ``CamelCase``, ``dotted.name``) or a term lookup (see :data:`QueryKind`): keyword :data:`LEANING_WEIGHT`, semantic
      :data:`LOOKUP_SEMANTIC_WEIGHT`, so that exact matches keep BM25's order and rank above the
      dense-only candidates;
    - prose: keyword 1, semantic :data:`LEANING_WEIGHT`.

    ``complete=False`` (some chunks have no vector yet) caps the semantic weight at the keyword
    weight: a chunk without a vector can only be found by keywords, and must not be buried under
    the dense candidates of the embedded part.

    Why the weights are so decisive: with ``k = 60`` RRF scores are flat (rank 1 gives 1/61,
    rank 40 gives 1/100), so a weight of 2 puts a retriever's 40th candidate above the other's
    first. That is wanted for the retriever that suits the query, and only for it.
    """
    if coverage < COVERAGE_THRESHOLD:
        return FusionWeights(keyword=1.0, semantic=0.0, kind="unreadable")
    if code_names(query) or any(isinstance(g, Compound) and "_" in g.literal for g in query.groups):
        weights = FusionWeights(keyword=LEANING_WEIGHT, semantic=LOOKUP_SEMANTIC_WEIGHT, kind="identifier")
    elif _is_prose(query):
        weights = FusionWeights(keyword=1.0, semantic=LEANING_WEIGHT, kind="prose")
    else:
        weights = FusionWeights(keyword=LEANING_WEIGHT, semantic=LOOKUP_SEMANTIC_WEIGHT, kind="terms")
    if not complete and weights.semantic > weights.keyword:
        weights = FusionWeights(keyword=weights.keyword, semantic=weights.keyword, kind=weights.kind)
    return weights


def code_names(query: Query) -> list[str]:
    """The words of the query text that look like code (:data:`_IDENTIFIER`: ``EmailMessage``,
    ``json.loads``, ``read_file``), as typed, without surrounding punctuation."""
    names = []
    for token in query.text.split():
        token = token.strip("\"'`,;:!?()[]{}<>")
        if token and _IDENTIFIER.search(token):
            names.append(token)
    return names


def _is_prose(query: Query) -> bool:
    return len(query.groups) > SHORT_QUERY_WORDS


@dataclass(frozen=True, slots=True)
class Fused:
    """One fused candidate: its ``key``, RRF ``score`` and 1-based rank in each input list
    (``None`` where that list did not return it)."""

    key: Hashable
    score: float
    ranks: tuple[int | None, ...]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[K]], weights: Sequence[float] | None = None, k: int = DEFAULT_RRF_K
) -> list[Fused]:
    """Fuse ranked lists of keys (best first) into one list, best first.

    ``score = sum_i weights[i] / (k + rank_i)``. A key repeated within one list counts at its
    first (best) rank. Ties (equal scores) go to the key with the better best rank, then to the
    earlier list, then to first appearance, so the order is deterministic. Keys only in lists
    of weight 0 are left out.

    Raises:
        ValueError: ``k < 0``, a negative weight, or not one weight per list.
    """
    if k < 0:
        raise ValueError(f"rrf k must be >= 0, got {k}")
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking is needed")
    if any(w < 0 for w in weights):
        raise ValueError("weights must be >= 0")
    scores: dict[Hashable, float] = {}
    ranks: dict[Hashable, list[int | None]] = {}
    order: dict[Hashable, tuple[int, int, int]] = {}
    seen = 0
    for i, (ranking, weight) in enumerate(zip(rankings, weights)):
        if weight == 0:
            continue
        for rank, key in enumerate(ranking, start=1):
            slot = ranks.setdefault(key, [None] * len(rankings))
            if slot[i] is not None:
                continue
            slot[i] = rank
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            best = order.get(key)
            if best is None:
                order[key] = (rank, i, seen)
                seen += 1
            elif rank < best[0]:
                order[key] = (rank, best[1], best[2])
    fused = sorted(scores, key=lambda key: (-scores[key], *order[key]))
    return [Fused(key=key, score=scores[key], ranks=tuple(ranks[key])) for key in fused]


KEEP_KEYWORD_RANK = 3
"""The rank at or above which hybrid search keeps the best keyword hit of a distinctive query
(:func:`keep_best_keyword_hit`): the top 3, the hits an agent reads before deciding; not rank 1,
because a hit both retrievers agree on is usually at least as good, and the least change to the
fused order that keeps the promise is the one to make."""

PHRASE_WORDS = 5
"""A query shares a phrase with a hit when both hold the same run of this many words (letters
and digits, case-folded). Five words in the same order is what a pasted message or a quoted
sentence leaves in its source even when values were filled in (``The view function for
'user_profile' did not return a valid response`` shares ``did not return a valid response``
with ``The view function for {endpoint!r} did not return a valid response``); a paraphrase, by
being one, seldom does."""


def is_distinctive(query: Query, kind: QueryKind, best_keyword: str | None) -> bool:
    """Whether a hybrid query looks a text up rather than describes it, given the content of the
    best keyword hit (``None`` when there is none). True when:

    - the query holds a code name or an underscored compound (``kind == "identifier"``, the
      signal :func:`fusion_weights` already uses): ``read_file``, ``'SERVER_NAME'``;
    - or the query and its best keyword hit share a run of :data:`PHRASE_WORDS` words: a pasted
      error message or a quoted sentence, found where it was written.

    Both signals depend on the query's form and on one hit, not on the corpus statistics, so a
    paraphrase (prose in other words) keeps the fused order whatever the collection holds.
    """
    if kind == "identifier":
        return True
    if best_keyword is None or kind == "unreadable":
        return False
    words = [w.casefold() for w in split_words(query.text)]
    if len(words) < PHRASE_WORDS:
        return False
    text = [w.casefold() for w in split_words(best_keyword)]
    return longest_ordered_run(words, text) >= PHRASE_WORDS


def keep_best_keyword_hit(hits: Sequence[SearchHit], rank: int = KEEP_KEYWORD_RANK) -> list[SearchHit]:
    """``hits`` (fused, best first) with the best keyword hit (``keyword_rank == 1``) moved up to
    ``rank`` (1-based) when it is below it; the hits it passes move down one place, nothing else
    changes. Its ``score`` becomes that of the hit now just below it (a tie, so that ``score``
    never increases down the list); ``fused_score`` keeps its RRF score, which says it was moved.

    Why: RRF scores are flat, so hits that both retrievers return at middling ranks outscore the
    keyword side's first hit when the vectors found nothing near it, which is what happens to a
    pasted error message (its text is in a ``raise`` line that a sentence embedding does not
    place near the message) or an identifier defined once. The caller applies this to
    distinctive queries only (:func:`is_distinctive`).
    """
    out = list(hits)
    found = next((i for i, h in enumerate(out) if h.keyword_rank == 1), None)
    if found is None or found < rank:
        return out
    best = out.pop(found)
    below = out[rank - 1]
    out.insert(rank - 1, replace(best, score=below.score))
    return out
