"""The :class:`~hermes_workspace.domain.ports.Chunker` adapter over Chonkie (DESIGN.md §2, §5, §6).

Chonkie decides *where* a file may be cut; :mod:`hermes_workspace.domain.chunking` turns those
cut offsets into chunks (line snapping, trimming, overlap, sections), the same way for every path:

- markdown (``.md``, ``.mdx``, ``.markdown``): heading lines are the cut candidates (fence-aware,
  ATX and setext); heading sections are packed greedily up to ``chunk_size`` words and a section
  larger than that is cut by a ``RecursiveChunker`` (paragraphs, lines, sentences, words);
- code (suffixes of :data:`~hermes_workspace.domain.constants.CODE_LANGUAGES`): a tree-sitter
  ``CodeChunker`` for the mapped language; its chunk starts are the cuts, moved up to the
  definition header, decorators and comments they follow (``align_code_cuts``), and a piece still
  larger than ``chunk_size`` words (a long docstring) is cut further like prose. A language whose
  grammar cannot be loaded is chunked as text;
- everything else: the ``RecursiveChunker`` alone.

Units: ``chunk_size`` and ``overlap`` are words (runs of non-whitespace, ``str.split()``, the
same count as :func:`~hermes_workspace.domain.chunking.count_words`); chunk offsets are
characters (code points) of the ``str`` passed in; lines are 1-based and counted by ``\\n``.

Offline by construction: no ``RecursiveChunker.from_recipe`` (it downloads a recipe), no
``language="auto"`` (it needs magika). Chonkie's own logging is switched off when it is imported.
Instances are not thread-safe (tree-sitter parsers are reused); use one per thread.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes_workspace.domain.chunking import (
    POLICY_VERSION,
    align_code_cuts,
    build_chunks,
    count_words,
    markdown_sections,
    merge_pieces,
)
from hermes_workspace.adapters.tree_sitter_chunker import import_language_pack, installed_version
from hermes_workspace.domain.constants import CODE_LANGUAGES, MARKDOWN_SUFFIXES, MAX_CHARS_PER_WORD
from hermes_workspace.domain.errors import ChunkingError, MissingExtraError
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import Chunk, ChunkKind

if TYPE_CHECKING:  # pragma: no cover - typing only
    from chonkie import CodeChunker, RecursiveChunker

ADAPTER_VERSION = 1
"""Version of this adapter's own choices (dispatch, recursive rules, header slack); part of
:attr:`ChonkieChunker.signature`. Bump it when they change so that indexes are rebuilt."""

INSTALL_HINT = "pip install 'hermes-workspace[workspace]' (from a source checkout: pip install -e '.[workspace]')"

_SENTENCE_ENDS = [". ", "! ", "? ", "。", "！", "？"]
_OTHER_WHITESPACE = [
    ch for ch in map(chr, range(0x3001)) if ch.isspace() and ch not in " \n"
]  # tab, \r, \v, \f, \x1c-\x1f, \x85, NBSP, the U+2000 spaces, U+2028/9, U+3000...

_SURROGATE = re.compile("[\ud800-\udfff]")

Mode = Literal["auto", "text"]


class ChonkieChunker:
    """Structure-aware chunker: markdown headings, tree-sitter code, paragraphs for the rest.

    Args:
        chunk_size: target maximum words per chunk, before overlap (> 0). A chunk exceeds it
            by the lines its cuts snap to, and in code by up to ``chunk_size // 4`` words of a
            definition header moved into it. Whatever its words, a chunk holds at most
            :attr:`max_chars` characters before overlap (``chunk_size * MAX_CHARS_PER_WORD``),
            and starts at a line start unless its line is longer than that.
        overlap: words of the previous chunk repeated at the start of each chunk
            (``0 <= overlap < chunk_size``), extended back to that line's start, or reduced to
            the next line start (or to none) where that would add too many words.
        mode: ``"auto"`` dispatches by suffix; ``"text"`` uses the paragraph path for every file
            (the application's fallback when the auto path raises).

    Raises:
        ValueError: ``chunk_size``/``overlap`` out of range or an unknown ``mode``.
        MissingExtraError: chonkie is not installed, or (``mode="auto"``)
            tree-sitter-language-pack is not.
    """

    def __init__(self, chunk_size: int, overlap: int, *, mode: Mode = "auto") -> None:
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0 words, got {chunk_size}")
        if overlap < 0 or overlap >= chunk_size:
            raise ValueError(f"overlap must be >= 0 and < chunk_size ({chunk_size}) words, got {overlap}")
        if mode not in ("auto", "text"):
            raise ValueError(f"mode must be 'auto' or 'text', got {mode!r}")
        self.chunk_size = chunk_size
        self.overlap = overlap
        self.mode: Mode = mode
        self._chonkie = _import_chonkie()
        self._chonkie_version = installed_version("chonkie")
        if mode == "auto":
            import_language_pack()
        self._tslp_version = installed_version("tree-sitter-language-pack")
        self._recursive: RecursiveChunker | None = None
        self._code: dict[str, CodeChunker | None] = {}  # language -> chunker, None: grammar missing

    @property
    def signature(self) -> str:
        """``chonkie=<v>;tree-sitter-language-pack=<v>;policy=<v>;adapter=<v>;mode=...;chunk_size=...;overlap=...``:
        changes whenever a library version, our policy or a setting changes the chunks."""
        return (
            f"chonkie={self._chonkie_version};tree-sitter-language-pack={self._tslp_version};"
            f"policy={POLICY_VERSION};adapter={ADAPTER_VERSION};mode={self.mode};"
            f"chunk_size={self.chunk_size};overlap={self.overlap}"
        )

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        """Chunks of ``text`` (the decoded content of ``path``; only its suffix is used), in file
        order, ``index`` 0..n-1, ``text[c.start_char:c.end_char] == c.content``; ``[]`` for
        whitespace-only text.

        Raises:
            ChunkingError: Chonkie returned chunks that do not tile the text.
            Exception: whatever Chonkie or tree-sitter raise; the caller falls back to a
                ``mode="text"`` chunker.
        """
        if not text or text.isspace():
            return []
        suffix = path.suffix.lower()
        lines = LineIndex(text)
        try:
            kind, cuts = self._cuts(text, suffix)
        except UnicodeEncodeError:
            # Lone surrogates (possible in a str from the Python API, never from our decoder)
            # cannot be encoded to UTF-8, which Chonkie and tree-sitter work on. Replacing each by
            # one U+FFFD keeps every offset, line and word count, so the cuts fit ``text``.
            kind, cuts = self._cuts(_SURROGATE.sub("\ufffd", text), suffix)
        return build_chunks(text, cuts, kind=kind, overlap=self.overlap, lines=lines, max_chars=self.max_chars)

    @property
    def max_chars(self) -> int:
        """Most characters in a chunk before overlap, ``chunk_size * MAX_CHARS_PER_WORD``, for
        every path (a file without whitespace is one word, however long)."""
        return self.chunk_size * MAX_CHARS_PER_WORD

    # -- paths -----------------------------------------------------------------------------------

    def _cuts(self, text: str, suffix: str) -> tuple[ChunkKind, list[int]]:
        """The path for ``suffix`` and its cut offsets in ``text``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if self.mode == "auto" and suffix in MARKDOWN_SUFFIXES:
                    return "markdown", self._markdown_cuts(text)
                if self.mode == "auto" and suffix in CODE_LANGUAGES:
                    code_chunker = self._code_chunker(CODE_LANGUAGES[suffix])
                    if code_chunker is not None:
                        return "code", self._code_cuts(text, code_chunker)
                return "text", self._recursive_cuts(text, 0, len(text))
            finally:
                # RecursiveChunker memoizes token counts in a class-wide lru_cache keyed by text:
                # do not keep up to 4096 pieces of past files alive.
                self._chonkie.RecursiveChunker._estimate_token_count.cache_clear()

    def _markdown_cuts(self, text: str) -> list[int]:
        return merge_pieces(text, markdown_sections(text), self.chunk_size, self._split_large(text))

    def _code_cuts(self, text: str, code_chunker: CodeChunker) -> list[int]:
        cuts = _checked_starts(text, code_chunker.chunk(text), 0, len(text), "CodeChunker")
        slack = max(1, self.chunk_size // 4)  # words a definition header may add to a chunk
        cuts = align_code_cuts(text, cuts, slack)
        return _split_oversized(text, cuts, self.chunk_size + slack, self._split_large(text))

    def _split_large(self, text: str) -> Callable[[int, int], list[int]]:
        return lambda start, end: self._recursive_cuts(text, start, end)

    def _recursive_cuts(self, text: str, start: int, end: int) -> list[int]:
        """Cut offsets strictly inside ``(start, end)`` chosen by the recursive chunker on
        ``text[start:end]``, as offsets into ``text``."""
        pieces = self._recursive_chunker().chunk(text[start:end] if (start, end) != (0, len(text)) else text)
        return _checked_starts(text, pieces, start, end, "RecursiveChunker")

    # -- cached chonkie objects ----------------------------------------------------------------------

    def _recursive_chunker(self) -> RecursiveChunker:
        if self._recursive is None:
            ck = self._chonkie
            rules = ck.RecursiveRules(
                levels=[
                    ck.RecursiveLevel(delimiters=["\n\n", "\n\r\n"]),  # paragraphs
                    ck.RecursiveLevel(delimiters=["\n"]),  # lines
                    ck.RecursiveLevel(delimiters=list(_SENTENCE_ENDS)),  # sentences
                    ck.RecursiveLevel(whitespace=True),  # words (split at spaces)
                    ck.RecursiveLevel(delimiters=list(_OTHER_WHITESPACE)),  # words split by tabs...
                ]
            )
            # No token-level rule: it would call tokenizer.encode, which a callable counter lacks;
            # a piece left without whitespace is one word, never more than chunk_size.
            # min_characters_per_chunk=1: with chonkie's default (24) chonkie-core merges a run of
            # short splits into one ("x\n" * 1000 would stay a single 1000-word piece).
            self._recursive = ck.RecursiveChunker(
                tokenizer=count_words, chunk_size=self.chunk_size, rules=rules, min_characters_per_chunk=1
            )
        return self._recursive

    def _code_chunker(self, language: str) -> CodeChunker | None:
        if language not in self._code:
            try:
                self._code[language] = self._chonkie.CodeChunker(
                    tokenizer=count_words, chunk_size=self.chunk_size, language=language
                )
            except (LookupError, ValueError, ImportError, OSError):
                # The grammar is missing from the installed language pack: text path for this
                # language (remembered, so that it is not retried for every file).
                self._code[language] = None
        return self._code[language]


def _checked_starts(text: str, pieces: list[Any], start: int, end: int, who: str) -> list[int]:
    """Start offsets (shifted by ``start``) of Chonkie chunks of ``text[start:end]`` after the
    first, after checking that the chunks tile that span exactly: Chonkie reports character
    offsets into the ``str`` it was given, and a mismatch must not become a wrong line range."""
    position = 0
    cuts: list[int] = []
    for i, piece in enumerate(pieces):
        begin, stop = piece.start_index, piece.end_index
        if begin != position or text[start + begin : start + stop] != piece.text:
            raise ChunkingError(f"{who} returned chunk offsets that do not match the text (chunk {i} at {begin})")
        if i:
            cuts.append(start + begin)
        position = stop
    if pieces and position != end - start:
        raise ChunkingError(f"{who} chunks end at {position}, not at the end of the text ({end - start})")
    return cuts


def _split_oversized(text: str, cuts: list[int], limit: int, split_large: Callable[[int, int], list[int]]) -> list[int]:
    """``cuts`` plus, inside every piece between them of more than ``limit`` words, the cuts
    ``split_large`` proposes (a docstring or data literal larger than a chunk)."""
    bounds = [0, *cuts, len(text)]
    result: list[int] = []
    for start, end in pairwise(bounds):
        if start > 0:
            result.append(start)
        if end - start > limit and count_words(text[start:end]) > limit:
            result.extend(c for c in split_large(start, end) if start < c < end)
    return result


def _import_chonkie() -> Any:
    try:
        import chonkie
    except ImportError as exc:
        raise MissingExtraError(
            f"chunking needs the optional dependency chonkie, which is not installed ({exc})",
            hint=INSTALL_HINT,
        ) from exc
    _silence_chonkie_logging()
    return chonkie


def _silence_chonkie_logging() -> None:
    """Chonkie installs its own stderr handler on the ``chonkie`` logger (WARNING and up, INFO
    per call with ``CHONKIE_LOG=info``): drop it, so that nothing reaches stdout/stderr."""
    chonkie_logger = logging.getLogger("chonkie")
    for handler in list(chonkie_logger.handlers):
        chonkie_logger.removeHandler(handler)
    chonkie_logger.addHandler(logging.NullHandler())
    chonkie_logger.propagate = False
    chonkie_logger.setLevel(logging.CRITICAL + 1)
