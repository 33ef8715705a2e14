"""``HeuristicReranker``: term overlap blended with the dense similarity (seed 001's "heuristic"
reranker tier). No model, no dependency: microseconds per hit."""

from __future__ import annotations

import time
from collections.abc import Sequence

from hermes_workspace.domain.errors import RerankTimeoutError
from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.query import Compound, parse_query, split_words
from hermes_workspace.domain.text_normalization import normalize_for_search

OVERLAP_WEIGHT = 0.5
"""Share of the score from term overlap; the rest comes from the hit's cosine similarity (or,
for a hit the dense side did not find, from its position in the incoming order)."""

MIN_STEM = 4
"""A query word matches a text word sharing its first ``max(MIN_STEM, len(word) - 2)`` letters:
a crude suffix-insensitive match (``deploying``/``deployment``) that needs no stemmer."""


class HeuristicReranker:
    """A :class:`~hermes_workspace.domain.ports.Reranker` scoring each hit by
    ``OVERLAP_WEIGHT * overlap + (1 - OVERLAP_WEIGHT) * closeness``, where ``overlap`` is the share
    of the query's distinct words (stopwords dropped, see
    :func:`~hermes_workspace.domain.query.parse_query`) found in the hit's section and content,
    and ``closeness`` is the hit's ``similarity`` mapped from -1..1 to 0..1, or ``1 / position``
    (1-based, in the incoming order) when it has none. Scores are in 0..1.

    Raises (from :meth:`rerank`): :class:`RerankTimeoutError` when ``deadline`` has passed.
    """

    @property
    def name(self) -> str:
        return "heuristic"

    def rerank(self, query: str, hits: Sequence[SearchHit], *, deadline: float) -> list[float]:
        """One score per hit, in the order of ``hits``."""
        terms = _terms(query)
        scores = []
        for position, hit in enumerate(hits, start=1):
            if position % 64 == 0 and time.monotonic() > deadline:
                raise RerankTimeoutError("the heuristic reranker ran past its deadline")
            overlap = _overlap(terms, f"{hit.section or ''}\n{hit.content}") if terms else 0.0
            closeness = (hit.similarity + 1) / 2 if hit.similarity is not None else 1 / position
            scores.append(OVERLAP_WEIGHT * overlap + (1 - OVERLAP_WEIGHT) * closeness)
        if time.monotonic() > deadline:
            raise RerankTimeoutError("the heuristic reranker ran past its deadline")
        return scores


def _terms(text: str) -> list[str]:
    words: list[str] = []
    for group in parse_query(text).groups:
        words.extend(group.parts if isinstance(group, Compound) else (group,))
    return list(dict.fromkeys(normalize_for_search(w).casefold() for w in words))


def _overlap(terms: list[str], text: str) -> float:
    stems = {t: t[: max(MIN_STEM, len(t) - 2)] for t in terms}
    words = {w.casefold() for w in split_words(normalize_for_search(text))}
    found = sum(1 for t in terms if t in words or any(w.startswith(stems[t]) for w in words))
    return found / len(terms)
