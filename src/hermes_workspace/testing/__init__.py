"""Test kit for plugin authors (issue 11): the in-memory fakes of every port, the contract suites
as reusable pytest classes, and :func:`plugin_context` to build a factory's argument.

The contract suites need pytest (``pip install pytest``), and are imported when first named, so
the rest works without it; nothing else in hermes_workspace imports this package.
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

Project-history recall (issue 13): :func:`build_host_database`, :class:`HostWriter` and
:func:`populate` (:mod:`hermes_workspace.testing.host_history`) build SQLite files shaped like an
agent application's session store, to test a history reader or try the feature.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from hermes_workspace.testing.chunker import ChunkerContract
    from hermes_workspace.testing.converter import ConverterContract
    from hermes_workspace.testing.embedder import EmbedderContract
    from hermes_workspace.testing.host_history import HostSummary, HostWriter, build_host_database, populate
    from hermes_workspace.testing.index_store import IndexStoreContract
    from hermes_workspace.testing.reranker import RerankerContract

_LAZY = {
    "ChunkerContract": "hermes_workspace.testing.chunker",
    "ConverterContract": "hermes_workspace.testing.converter",
    "EmbedderContract": "hermes_workspace.testing.embedder",
    "IndexStoreContract": "hermes_workspace.testing.index_store",
    "RerankerContract": "hermes_workspace.testing.reranker",
    "HostSummary": "hermes_workspace.testing.host_history",
    "HostWriter": "hermes_workspace.testing.host_history",
    "build_host_database": "hermes_workspace.testing.host_history",
    "populate": "hermes_workspace.testing.host_history",
}
"""Names imported when first used (PEP 562): the contract suites import pytest, and
``python -m hermes_workspace.testing.host_history`` must not find its module already imported."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "ChunkerContract",
    "ConverterContract",
    "EmbedderContract",
    "HashEmbedder",
    "HostSummary",
    "HostWriter",
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
    "build_host_database",
    "plugin_context",
    "populate",
]


def plugin_context(category: str, name: str, *, home: Path | None = None, **fields: Any) -> PluginContext:
    """A :class:`PluginContext` as the workspace would build it for plugin ``name`` of
    ``category`` (``"chunkers"``...), with the defaults of an empty config.yaml; ``fields``
    replace any field (``chunk_size=64``, ``overlap=10``, ``options={"min_words": 5}``,
    ``index_path=...``). ``home`` defaults to ``/tmp/hermes-test-home`` (nothing is created)."""
    base = home if home is not None else Path("/tmp/hermes-test-home")
    context = PluginContext(category=category, name=name, home=base, models_dir=base / "models")
    return replace(context, **fields)
