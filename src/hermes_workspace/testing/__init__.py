"""Test kit for plugin authors (issue 11): the in-memory fakes of every port, the contract suites
as reusable pytest classes, and :func:`plugin_context` to build a factory's argument.

Needs pytest (``pip install pytest``); nothing else in hermes_workspace imports this package.
A plugin's own tests subclass the suite of its port and override one fixture::

    import pytest
    from hermes_workspace.testing import ChunkerContract, plugin_context
    from my_plugin import MyChunker

    class TestMyChunker(ChunkerContract):
        @pytest.fixture
        def make_chunker(self):
            return lambda overlap: MyChunker(plugin_context("chunkers", "my-chunker", chunk_size=64, overlap=overlap))

Suites: :class:`ChunkerContract` (fixture ``make_chunker``: ``overlap -> Chunker``),
:class:`ConverterContract` (``converter``, ``sample``: ``(file name, bytes)``, ``expected_words``,
``anchor_kind``),
:class:`EmbedderContract` (``make_embedder``: ``() -> Embedder``), :class:`RerankerContract`
(``reranker``), :class:`IndexStoreContract` (``store``: yield a new empty store).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from hermes_workspace.adapters.memory import (
    HashEmbedder,
    InlineTaskPool,
    LineConverter,
    InMemoryConfigRepository,
    InMemoryConversionCache,
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    InMemoryResultSets,
    InMemoryTimeMark,
    InMemoryVectorIndex,
    ParagraphChunker,
    RecordingProgressSink,
    ScriptedChangeFeed,
    ScriptedReranker,
    Utf8Decoder,
    WhitespaceTokenCounter,
)
from hermes_workspace.domain.plugins import PluginContext
from hermes_workspace.testing.chunker import ChunkerContract
from hermes_workspace.testing.converter import ConverterContract
from hermes_workspace.testing.embedder import EmbedderContract
from hermes_workspace.testing.index_store import IndexStoreContract
from hermes_workspace.testing.reranker import RerankerContract

__all__ = [
    "ChunkerContract",
    "ConverterContract",
    "EmbedderContract",
    "HashEmbedder",
    "IndexStoreContract",
    "InMemoryConfigRepository",
    "InMemoryConversionCache",
    "InMemoryFileSource",
    "InMemoryIndexLock",
    "InMemoryIndexStore",
    "InMemoryLayout",
    "InMemoryResultSets",
    "InMemoryTimeMark",
    "InMemoryVectorIndex",
    "LineConverter",
    "InlineTaskPool",
    "ParagraphChunker",
    "PluginContext",
    "RecordingProgressSink",
    "RerankerContract",
    "ScriptedChangeFeed",
    "ScriptedReranker",
    "Utf8Decoder",
    "WhitespaceTokenCounter",
    "plugin_context",
]


def plugin_context(category: str, name: str, *, home: Path | None = None, **fields: Any) -> PluginContext:
    """A :class:`PluginContext` as the workspace would build it for plugin ``name`` of
    ``category`` (``"chunkers"``...), with the defaults of an empty config.yaml; ``fields``
    replace any field (``chunk_size=64``, ``overlap=10``, ``options={"min_words": 5}``,
    ``index_path=...``). ``home`` defaults to ``/tmp/hermes-test-home`` (nothing is created)."""
    base = home if home is not None else Path("/tmp/hermes-test-home")
    context = PluginContext(category=category, name=name, home=base, models_dir=base / "models")
    return replace(context, **fields)
