"""The Reranker contract as a reusable pytest class: subclass :class:`RerankerContract` in a test
module (name the subclass ``Test...``) and override the ``reranker`` fixture.

What every reranker promises (:class:`~hermes_workspace.domain.ports.Reranker`): a non-empty
``name``; one float score per hit, in the order of the hits; ``[]`` for no hits; the same scores
for the same input. (A reranker may use the hits' order as a prior, so scores are not required
to follow their hits when the order changes.)
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.ports import Reranker

QUERY = "rollback a failed deployment"
CONTENTS = [
    "Rollback procedures: if a deployment fails, roll back to the previous release.",
    "The quick brown fox jumps over the lazy dog.",
    "def rollback(deployment):\n    deployment.revert()",
    "Release notes for version 2: faster search.",
]


def sample_hits(contents: list[str] = CONTENTS) -> list[SearchHit]:
    """Hits of ``contents`` (one chunk each, in files ``/ws/doc<i>.md``), scored in list order."""
    return [
        SearchHit(
            path=Path(f"/ws/doc{i}.md"), line_start=1, line_end=1 + text.count("\n"), section=None,
            chunk_index=0, tokens=len(text.split()), modified="2026-04-15T10:32:00Z", content=text,
            score=float(len(contents) - i),
        )
        for i, text in enumerate(contents)
    ]


def _deadline() -> float:
    return time.monotonic() + 60.0


class RerankerContract:
    """The Reranker contract. Override the ``reranker`` fixture to return the reranker."""

    @pytest.fixture
    def reranker(self) -> Reranker:
        """Override: return the reranker under test."""
        raise NotImplementedError("override the reranker fixture in your RerankerContract subclass")

    def test_is_a_reranker(self, reranker: Reranker) -> None:
        assert isinstance(reranker, Reranker)
        assert isinstance(reranker.name, str) and reranker.name.strip()

    def test_one_float_score_per_hit(self, reranker: Reranker) -> None:
        scores = reranker.rerank(QUERY, sample_hits(), deadline=_deadline())
        assert len(scores) == len(CONTENTS)
        assert all(isinstance(s, float) and math.isfinite(s) for s in scores)

    def test_no_hits_give_no_scores(self, reranker: Reranker) -> None:
        assert reranker.rerank(QUERY, [], deadline=_deadline()) == []

    def test_same_input_gives_the_same_scores(self, reranker: Reranker) -> None:
        hits = sample_hits()
        assert reranker.rerank(QUERY, hits, deadline=_deadline()) == reranker.rerank(QUERY, hits, deadline=_deadline())
