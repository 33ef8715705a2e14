"""The shipped Chunker contract, run on this plugin."""

from __future__ import annotations

import pytest

from hermes_example_chunker import IniTablesChunker
from hermes_workspace.testing import ChunkerContract, plugin_context


class TestIniTablesChunker(ChunkerContract):
    @pytest.fixture
    def make_chunker(self):
        return lambda overlap: IniTablesChunker(plugin_context("chunkers", "ini-tables", chunk_size=64,
                                                               overlap=overlap))


class TestIniTablesMerging(ChunkerContract):
    @pytest.fixture
    def make_chunker(self):
        return lambda overlap: IniTablesChunker(plugin_context(
            "chunkers", "ini-tables", chunk_size=64, overlap=overlap, options={"min_table_words": 3}))
