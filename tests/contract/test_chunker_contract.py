"""The Chunker contract (:class:`hermes_workspace.testing.ChunkerContract`), run against the fake
(ParagraphChunker), TreeSitterChunker (the default) and ChonkieChunker (both modes each), and
the built-in chunkers as the registry builds them from their entry points."""

from __future__ import annotations

import pytest

from hermes_workspace.adapters.chonkie_chunker import ChonkieChunker
from hermes_workspace.adapters.memory import ParagraphChunker
from hermes_workspace.adapters.tree_sitter_chunker import TreeSitterChunker
from hermes_workspace.registry import PluginRegistry
from hermes_workspace.testing import ChunkerContract, plugin_context
from hermes_workspace.testing.chunker import ChunkerFactory


class TestParagraphFake(ChunkerContract):
    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        return lambda overlap: ParagraphChunker(overlap=overlap)


class TestChonkieAuto(ChunkerContract):
    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        return lambda overlap: ChonkieChunker(64, overlap)


class TestChonkieText(ChunkerContract):
    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        return lambda overlap: ChonkieChunker(64, overlap, mode="text")


class TestStructureAuto(ChunkerContract):
    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        return lambda overlap: TreeSitterChunker(64, overlap)


class TestStructureText(ChunkerContract):
    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        return lambda overlap: TreeSitterChunker(64, overlap, mode="text")


class TestTreeSitterPlugin(ChunkerContract):
    """The ``tree-sitter`` entry point, built by the registry from a context as config would."""

    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        registry = PluginRegistry()
        entry = registry.find("chunkers", "tree-sitter")
        return lambda overlap: registry.build(entry, plugin_context("chunkers", "tree-sitter", chunk_size=64,
                                                                    overlap=overlap))
