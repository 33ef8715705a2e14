"""The Chunker contract as a reusable pytest class: subclass :class:`ChunkerContract` in a test
module (name the subclass ``Test...``) and override the ``make_chunker`` fixture.

What every chunker promises (:class:`~hermes_workspace.domain.ports.Chunker`, DESIGN.md §5): chunks
in file order with ``index`` 0..n-1, ``text[start_char:end_char] == content``, 1-based inclusive line
ranges counted by ``\\n`` that hold the content, ``tokens`` the content's word count, chunks that
start at a line start (except inside a line longer than :attr:`ChunkerContract.long_line`
characters), nothing but whitespace left outside every chunk, ``[]`` for whitespace-only text, the
same chunks for the same input, and a non-empty signature, stable for equal settings, that changes
with the overlap (unless :attr:`ChunkerContract.uses_overlap` is False).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_workspace.domain.ports import Chunker
from hermes_workspace.testing.chunks import (
    INVARIANT_TEXTS,
    LINES_142,
    assert_chunk_invariants,
    assert_chunks_start_lines,
    minified_js,
)

ChunkerFactory = Callable[[int], Chunker]
"""Builds a chunker with the given overlap (words)."""

SUFFIXES = [".md", ".py", ".js", ".txt"]
"""File suffixes every test runs with (the chunker may treat them differently)."""

MIXED = (
    "# Notes\n\nSome prose before the code.\r\n\r\n"
    "```python\n# not a heading\ndef f():\n    return 1\n```\n\n"
    "## Café ☕ and 日本語\n\n" + "\n\n".join(f"Paragraph {n} " + "word " * (5 + n * 3) for n in range(20)) + "\n"
)


class ChunkerContract:
    """The Chunker contract. Override the ``make_chunker`` fixture to return a function
    ``overlap -> Chunker`` (the chunk size is yours; 64 words suits :attr:`long_line`)::

        from hermes_workspace.testing import ChunkerContract, plugin_context

        class TestMyChunker(ChunkerContract):
            @pytest.fixture
            def make_chunker(self):
                return lambda overlap: my_factory(plugin_context("chunkers", "mine", chunk_size=64, overlap=overlap))
    """

    long_line: int = 64 * 16
    """Lines longer than this many characters are the only ones a chunk may start inside: the
    most characters a chunk holds (``chunk_size * MAX_CHARS_PER_WORD`` = 16 for 64 words)."""

    uses_overlap: bool = True
    """False for a chunker that ignores the overlap: its signature must then not change with it."""

    @pytest.fixture
    def make_chunker(self) -> ChunkerFactory:
        """Override: return ``overlap -> Chunker``."""
        raise NotImplementedError("override the make_chunker fixture in your ChunkerContract subclass")

    def test_is_a_chunker(self, make_chunker: ChunkerFactory) -> None:
        assert isinstance(make_chunker(0), Chunker)

    @pytest.mark.parametrize("name", sorted(INVARIANT_TEXTS))
    @pytest.mark.parametrize("suffix", SUFFIXES)
    @pytest.mark.parametrize("overlap", [0, 10])
    def test_invariants_hold(self, make_chunker: ChunkerFactory, name: str, suffix: str, overlap: int) -> None:
        text = INVARIANT_TEXTS[name]
        chunks = make_chunker(overlap).chunk(text, Path("/workspace/sample" + suffix))
        assert chunks
        assert_chunk_invariants(text, chunks)
        assert [c.index for c in chunks] == list(range(len(chunks)))

    @pytest.mark.parametrize("name", sorted(INVARIANT_TEXTS))
    @pytest.mark.parametrize("suffix", SUFFIXES)
    @pytest.mark.parametrize("overlap", [0, 10])
    def test_chunks_start_at_line_starts_except_inside_long_lines(self, 
        make_chunker: ChunkerFactory, name: str, suffix: str, overlap: int
    ) -> None:
        for text in (INVARIANT_TEXTS[name], MIXED):
            chunks = make_chunker(overlap).chunk(text, Path("/workspace/sample" + suffix))
            assert_chunks_start_lines(text, chunks, long_line=self.long_line)

    @pytest.mark.parametrize("suffix", SUFFIXES)
    def test_mixed_document_keeps_order_and_offsets(self, make_chunker: ChunkerFactory, suffix: str) -> None:
        chunks = make_chunker(10).chunk(MIXED, Path("/workspace/mixed" + suffix))
        assert len(chunks) > 1
        assert_chunk_invariants(MIXED, chunks)
        assert [c.start_char for c in chunks] == sorted(c.start_char for c in chunks)

    def test_minified_line(self, make_chunker: ChunkerFactory) -> None:
        text = minified_js(20_000)
        chunks = make_chunker(10).chunk(text, Path("/workspace/app.min.js"))
        assert_chunk_invariants(text, chunks)
        assert {(c.line_start, c.line_end) for c in chunks} == {(1, 1)}

    def test_142_line_file_ends_at_line_142(self, make_chunker: ChunkerFactory) -> None:
        chunks = make_chunker(0).chunk(LINES_142, Path("/workspace/notes.txt"))
        assert_chunk_invariants(LINES_142, chunks)
        assert chunks[0].line_start == 1
        assert chunks[-1].line_end == 142

    @pytest.mark.parametrize("text", ["", "   ", "\n\n\n", " \t\r\n\x0c\u2028\u3000 \n"])
    @pytest.mark.parametrize("suffix", SUFFIXES)
    def test_whitespace_only_text_gives_no_chunks(self, make_chunker: ChunkerFactory, text: str, suffix: str) -> None:
        assert make_chunker(5).chunk(text, Path("/workspace/blank" + suffix)) == []

    def test_signature_is_a_non_empty_string_that_changes_with_overlap(self, make_chunker: ChunkerFactory) -> None:
        signatures = [make_chunker(overlap).signature for overlap in (0, 10, 20)]
        assert all(isinstance(s, str) and s.strip() for s in signatures)
        assert len(set(signatures)) == (3 if self.uses_overlap else 1)
        assert make_chunker(10).signature == signatures[1]  # stable for equal settings

    def test_same_input_gives_the_same_chunks(self, make_chunker: ChunkerFactory) -> None:
        chunker = make_chunker(10)
        first = chunker.chunk(MIXED, Path("/workspace/mixed.md"))
        assert chunker.chunk(MIXED, Path("/workspace/mixed.md")) == first
