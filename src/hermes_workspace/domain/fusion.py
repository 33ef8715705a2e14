"""Rank fusion for hybrid search: weighted Reciprocal Rank Fusion and the rule that sets the weights.

RRF (Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual
rank learning methods", SIGIR 2009): ``score(d) = sum_i w_i / (k + rank_i(d))`` over the
retrievers that returned ``d`` (ranks 1-based), ``k = 60`` in the paper and by default here.
Weights per retriever follow the weighted form used by search engines that ship RRF (a weight
multiplies a retriever's contribution); ``w = 0`` leaves a retriever out.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from hermes_workspace.domain.query import Compound, Query
from hermes_workspace.domain.semantic import COVERAGE_THRESHOLD

K = TypeVar("K", bound=Hashable)

DEFAULT_RRF_K = 60
"""The RRF constant of Cormack et al. (2009) and of seed 001."""

LEANING_WEIGHT = 2.0
"""The weight of the retriever that suits the query's kind (the other has 1). Measured on the
msmarco set (50 prose questions, all-MiniLM-L6-v2, top 40 + 40, k = 60): equal weights 0.793
nDCG@10, dense-leaning 2:1 0.804, dense alone 0.798, BM25 alone 0.729 (none of these differences
is significant at 50 queries); hybrid search products lean the same way by default for prose."""

QueryKind = Literal["prose", "identifier", "unreadable"]
"""``identifier``: the query holds a compound as typed (``read_file``, ``json.loads``,
``hermes-agent``), whose exact match only keyword search can promise; ``unreadable``: the
embedder does not read the query's language (:data:`COVERAGE_THRESHOLD`); ``prose``: the rest."""


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """Per-retriever RRF weights chosen for one query, and why."""

    keyword: float
    semantic: float
    kind: QueryKind

    def to_json(self) -> dict[str, object]:
        """``{"keyword_weight", "semantic_weight", "query_kind"}``."""
        return {"keyword_weight": self.keyword, "semantic_weight": self.semantic, "query_kind": self.kind}


def fusion_weights(query: Query, coverage: float) -> FusionWeights:
    """The RRF weights for ``query``, given the embedder's :func:`letter_coverage` of its text.

    - coverage below :data:`COVERAGE_THRESHOLD`: keyword 1, semantic 0 (the dense ranking of a
      language the model does not read is noise: on the Arabic arcd set an English model alone
      scores 0.05 nDCG@10 and plain RRF drags BM25's 0.81 down to 0.31);
    - a compound in the query: keyword :data:`LEANING_WEIGHT`, semantic 1;
    - otherwise (prose): keyword 1, semantic :data:`LEANING_WEIGHT`.
    """
    if coverage < COVERAGE_THRESHOLD:
        return FusionWeights(keyword=1.0, semantic=0.0, kind="unreadable")
    if any(isinstance(group, Compound) and group.literal for group in query.groups):
        return FusionWeights(keyword=LEANING_WEIGHT, semantic=1.0, kind="identifier")
    return FusionWeights(keyword=1.0, semantic=LEANING_WEIGHT, kind="prose")


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
