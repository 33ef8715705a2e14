"""The Embedder contract as a reusable pytest class: subclass :class:`EmbedderContract` in a test
module (name the subclass ``Test...``) and override the ``make_embedder`` fixture.

What every embedder promises (:class:`~hermes_workspace.domain.ports.Embedder`): float32
``array('f')`` vectors of unit length and ``dimensions`` entries, one per text in order (the same
text gives the same vector alone or in a batch; different texts differ), ``[]`` for no texts, a
stable non-empty signature (equal for two builds of the same model), ``max_input_tokens >= 1``,
and ``coverage`` in 0..1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from hermes_workspace.domain.ports import Embedder
from hermes_workspace.domain.semantic import cosine

TEXTS = [
    "how do I undo a release",
    "Rollback procedures: if a wave fails, revert the deployment and page the on-call engineer.",
    "def read_file(path):\n    return open(path).read()",
    "The quick brown fox jumps over the lazy dog. " * 12,
    "12345 + 678",
]
COVERAGE_TEXTS = ["", "how do I undo a release", "من هو عبد المطلب بن هاشم؟", "12345", "Café ☕ 日本語"]

EmbedderFactory = Callable[[], Embedder]
"""Builds an embedder; two builds must be the same model."""


def _norm(vector: Any) -> float:
    return math.sqrt(sum(x * x for x in vector))


class EmbedderContract:
    """The Embedder contract. Override the ``make_embedder`` fixture to return a function that
    builds the embedder (it may return one shared, loaded instance first: loading a model per
    test costs seconds)."""

    @pytest.fixture
    def make_embedder(self) -> EmbedderFactory:
        """Override: return a function building the embedder under test."""
        raise NotImplementedError("override the make_embedder fixture in your EmbedderContract subclass")

    def test_is_an_embedder(self, make_embedder: EmbedderFactory) -> None:
        assert isinstance(make_embedder(), Embedder)

    def test_vectors_are_unit_float32_arrays_of_the_announced_length(self, make_embedder: EmbedderFactory) -> None:
        embedder = make_embedder()
        vectors = embedder.embed_documents(TEXTS)
        assert len(vectors) == len(TEXTS)
        for vector in vectors:
            assert type(vector).__name__ == "array" and vector.typecode == "f"
            assert len(vector) == embedder.dimensions
            assert abs(_norm(vector) - 1.0) < 1e-5
        query = embedder.embed_query(TEXTS[0])
        assert query.typecode == "f" and len(query) == embedder.dimensions
        assert abs(_norm(query) - 1.0) < 1e-5

    def test_order_is_kept(self, make_embedder: EmbedderFactory) -> None:
        embedder = make_embedder()
        forward = embedder.embed_documents(TEXTS)
        backward = embedder.embed_documents(TEXTS[::-1])
        for a, b in zip(forward, backward[::-1]):
            assert cosine(a, b) > 0.9999
        for text, vector in zip(TEXTS, forward):
            assert cosine(embedder.embed_documents([text])[0], vector) > 0.9999
        assert cosine(forward[0], forward[1]) < 0.999

    def test_no_texts_give_no_vectors(self, make_embedder: EmbedderFactory) -> None:
        assert make_embedder().embed_documents([]) == []

    def test_signature_is_stable_and_not_empty(self, make_embedder: EmbedderFactory) -> None:
        first, second = make_embedder(), make_embedder()
        signature = first.signature
        assert isinstance(signature, str) and signature.strip()
        assert first.signature == signature == second.signature

    def test_max_input_tokens_is_positive(self, make_embedder: EmbedderFactory) -> None:
        assert make_embedder().max_input_tokens >= 1

    @pytest.mark.parametrize("text", COVERAGE_TEXTS)
    def test_coverage_is_a_share(self, make_embedder: EmbedderFactory, text: str) -> None:
        assert 0.0 <= make_embedder().coverage(text) <= 1.0
