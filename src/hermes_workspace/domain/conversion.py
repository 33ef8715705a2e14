"""Documents (PDF, DOCX, PPTX, XLSX, EPUB) as text: which converter a suffix gets, how converted
text is chunked, and where a chunk is in the original (its page, slide or sheet).

A converter (port :class:`~hermes_workspace.domain.ports.Converter`) turns a document's bytes into
a :class:`~hermes_workspace.domain.model.ConvertedDocument`: markdown text and anchors (the line
where each page, slide or sheet starts). The text is chunked as markdown, and each chunk gets the
anchors its lines overlap (:func:`with_anchors`). A converted file's line ranges are lines of its
converted text, which ``read`` returns (the file on disk has no lines).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from hermes_workspace.domain.chunking import count_words
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import Anchor, AnchorKind, Chunk, ConvertedDocument

BUILTIN_CONVERTER_NAMES = ("pypdf", "python-docx", "python-pptx", "openpyxl", "markitdown")
"""The converters that come with hermes-workspace (the ``documents`` extra installs their
libraries), by the name ``knowledgebase.converters`` uses."""

NO_CONVERTER = "none"
"""``knowledgebase.converters`` value that turns a suffix off: its files are skipped as before."""

DEFAULT_CONVERTERS: dict[str, str] = {
    ".pdf": "pypdf",
    ".docx": "python-docx",
    ".pptx": "python-pptx",
    ".xlsx": "openpyxl",
    ".epub": "markitdown",
}
"""Suffix -> converter when config says nothing. HTML is not here: it stays indexed as text, so
that its line ranges point into the real file (templates in code repositories); a user opts in
with ``'.html': markitdown``."""

SUFFIX_PATTERN = re.compile(r"\.[a-z0-9][a-z0-9_+-]*")
"""A file suffix as ``knowledgebase.converters`` keys take it: a dot and one name part, lower case
(``Path.suffix`` of the file, lower-cased, is what is looked up)."""

CONVERTED_SUFFIX = ".md"
"""The suffix the chunker sees for a converted document (see :func:`converted_view`)."""


def converted_view(path: Path) -> Path:
    """The name a converted document's text is chunked under: ``report.pdf`` ->
    ``report.pdf.md``. Chunkers choose their path by suffix (``Chunker.chunk(text, path)``), so
    the converted markdown takes the markdown path (heading breadcrumbs, fenced blocks, tables)
    with any chunker, ours or a plugin's, without a change to the port."""
    return path.with_name(path.name + CONVERTED_SUFFIX)


def converted_signature(file_signature: str, converter_signature: str) -> str:
    """The config signature of a converted file: ``file_signature`` (settings and chunker, as
    for every file) combined with the converter's own signature (name, library version,
    options), SHA-256 hex. A converter upgrade changes it for the files it converts only."""
    return hashlib.sha256(f"{file_signature}\0converter={converter_signature}".encode()).hexdigest()


def anchor_span(anchors: Sequence[Anchor], line_start: int, line_end: int) -> tuple[int | None, str | None]:
    """``(page, anchor)`` of the converted lines ``line_start..line_end`` (1-based, inclusive):
    the number of the first anchor that covers them and the text saying which ones do
    (:func:`anchor_label`). An anchor covers its line up to the line before the next one; lines
    before the first anchor count as the first. ``(None, None)`` without anchors."""
    if not anchors:
        return None, None
    starts = [anchor.line for anchor in anchors]
    first = max(0, bisect_right(starts, line_start) - 1)
    last = max(first, bisect_right(starts, line_end) - 1)
    covered = anchors[first:last + 1]
    return covered[0].number, anchor_label(covered)


_PLURAL = {"page": "pages", "slide": "slides", "sheet": "sheets"}


def anchor_label(anchors: Sequence[Anchor]) -> str:
    """Where ``anchors`` (consecutive, one kind) are in the original: ``"page 3"``,
    ``"pages 3-4"``, ``"slide 2"``, ``"slides 2-5"``, ``"sheet Budget"``,
    ``"sheets Budget, Summary"`` (sheets by name: people know them by it)."""
    kind = anchors[0].kind
    if kind == "sheet":
        names = list(dict.fromkeys(a.label for a in anchors))
        return f"sheet {names[0]}" if len(names) == 1 else f"sheets {', '.join(names)}"
    first, last = anchors[0].label, anchors[-1].label
    return f"{kind} {first}" if first == last else f"{_PLURAL[kind]} {first}-{last}"


def with_anchors(chunks: Iterable[Chunk], anchors: Sequence[Anchor]) -> list[Chunk]:
    """``chunks`` with ``page`` and ``anchor`` set from ``anchors``; unchanged without anchors.

    ``anchor`` names every anchor the chunk's lines overlap (:func:`anchor_span`: ``"pages
    12-13"``); ``page`` is the number of the one holding most of the chunk's words
    (:func:`main_anchor`), so that a chunk opening with the last words of page 12 (a piece too
    small to stand alone, :func:`split_at_pages`) and going on for a page of text on page 13
    names page 13, where its answer is."""
    if not anchors:
        return list(chunks)
    out = []
    for chunk in chunks:
        _, anchor = anchor_span(anchors, chunk.line_start, chunk.line_end)
        page = main_anchor(anchors, chunk.content, chunk.line_start)
        out.append(replace(chunk, page=page, anchor=anchor))
    return out


def main_anchor(anchors: Sequence[Anchor], content: str, line_start: int) -> int | None:
    """The number of the anchor holding most words (:func:`~hermes_workspace.domain.chunking.count_words`)
    of ``content``, a chunk's text whose first character is on converted line ``line_start``
    (1-based); ties go to the first such anchor, and a chunk without words gets the first anchor
    it covers (as :func:`anchor_span`). ``None`` without anchors.

    A chunk's ``n``-th line (0-based, split at ``\n``) is line ``line_start + n``, so the words
    of each covered anchor are counted from ``content`` alone; lines before the first anchor
    count as the first (as in :func:`anchor_span`)."""
    if not anchors:
        return None
    starts = [anchor.line for anchor in anchors]
    words: dict[int, int] = {}  # position in anchors -> words of the chunk on it
    for offset, line in enumerate(content.split("\n")):
        position = max(0, bisect_right(starts, line_start + offset) - 1)
        words[position] = words.get(position, 0) + count_words(line)
    best = min(words, key=lambda position: (-words[position], position))
    return anchors[best].number


PAGE_PIECE_MIN_WORDS = 12
"""A piece of a chunk cut at a page start keeps at least this many words; a smaller one (a
running footer, the last words of a sentence) stays with its neighbour, whose hit then names both
pages. Twelve words: about one line of body text, more than a page header or footer holds."""

_PAGED = ("page", "slide")


def split_at_pages(text: str, chunks: Sequence[Chunk], anchors: Sequence[Anchor],
                   *, min_words: int = PAGE_PIECE_MIN_WORDS) -> list[Chunk]:
    """``chunks`` of a paged document (``page`` or ``slide`` anchors) cut where a page starts, so
    that a hit names the one page its text is on and ``read`` of its lines stays on that page
    (people cite a PDF by page; a section running over a page break was one hit "pages 5-6"
    whose answer could be on either). Pieces keep their chunk's section, breadcrumb and kind;
    pieces of fewer than ``min_words`` words join their neighbour; indexes are renumbered from 0.
    ``text`` is the converted text the chunks were cut from. Unchanged without page anchors."""
    starts = sorted({a.line for a in anchors if a.kind in _PAGED})
    if not starts or not chunks:
        return list(chunks)
    lines = LineIndex(text)
    out: list[Chunk] = []
    for chunk in chunks:
        inner = [line for line in starts if chunk.line_start < line <= chunk.line_end]
        cuts = [lines.line_start_offset(line) for line in inner]
        bounds = [chunk.start_char, *[c for c in cuts if chunk.start_char < c < chunk.end_char], chunk.end_char]
        pieces = [[a, b] for a, b in zip(bounds, bounds[1:])]
        merged: list[list[int]] = []
        for piece in pieces:
            if merged and count_words(text[merged[-1][0]:merged[-1][1]]) < min_words:
                merged[-1][1] = piece[1]  # a small piece so far joins the next one
            elif merged and count_words(text[piece[0]:piece[1]]) < min_words:
                merged[-1][1] = piece[1]  # a small piece joins the previous one
            else:
                merged.append(piece)
        if len(merged) == 1:
            out.append(chunk)
            continue
        for start, end in merged:
            content = text[start:end]
            line_start, line_end = lines.span(start, end)
            out.append(replace(chunk, content=content, start_char=start, end_char=end, line_start=line_start,
                               line_end=line_end, tokens=count_words(content)))
    return [replace(chunk, index=i) if chunk.index != i else chunk for i, chunk in enumerate(out)]


_RANGE = re.compile(r"(page|slide)s? (\d+)(?:-(\d+))?")


def join_anchor_labels(labels: Iterable[str | None]) -> str | None:
    """One anchor for text merged from several chunks (a ``retrieve`` block): pages or slides as
    one range (``"page 3"`` + ``"pages 3-4"`` -> ``"pages 3-4"``), anything else listed once
    each in order (``"sheet A, sheet B"``); ``None`` when none is set."""
    given = list(dict.fromkeys(label for label in labels if label))
    if len(given) <= 1:
        return given[0] if given else None
    matches = [_RANGE.fullmatch(label) for label in given]
    kinds = {m.group(1) for m in matches if m is not None}
    if all(m is not None for m in matches) and len(kinds) == 1:
        numbers = [int(n) for m in matches if m is not None for n in m.group(2, 3) if n]
        low, high = min(numbers), max(numbers)
        kind = kinds.pop()
        return f"{kind} {low}" if low == high else f"{_PLURAL[kind]} {low}-{high}"
    return ", ".join(given)


_MARKDOWN_STARTS = re.compile(r"(#{1,6}(?:\s|$)|```|~~~)")


def plain_line(line: str) -> str:
    """A line of a document's own text made safe to put into converted markdown: a leading
    ``#`` heading marker or code fence gets a backslash (``\\# not a heading``), so that only the
    structure the converter writes (headings, tables) is read as structure by the chunker;
    NUL characters and trailing blanks go."""
    line = line.replace("\x00", "").rstrip()
    stripped = line.lstrip()
    if _MARKDOWN_STARTS.match(stripped):
        return line[: len(line) - len(stripped)] + "\\" + stripped
    return line


def table_cell(value: str) -> str:
    """A table cell's text on one markdown table line: line breaks as spaces, ``|`` escaped."""
    return " ".join(value.replace("|", "\\|").split())


def markdown_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` (the first is the header) as markdown table lines, every row padded to the
    widest; ``[]`` for no rows."""
    if not rows:
        return []
    width = max(len(row) for row in rows) or 1
    cells = [[table_cell(v) for v in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in cells[1:])
    return lines


class DocumentBuilder:
    """Collects a converted document line by line and records anchors at the current line.
    Lines must not hold ``\\n`` (:meth:`add_text` splits text)."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._anchors: list[Anchor] = []

    @property
    def next_line(self) -> int:
        """The 1-based number the next added line gets."""
        return len(self._lines) + 1

    def anchor(self, kind: AnchorKind, number: int, label: str) -> None:
        """Mark that ``kind`` ``number`` (``label``) starts at the next line."""
        self._anchors.append(Anchor(self.next_line, kind, number, label))

    def add(self, line: str = "") -> None:
        """One line as given (structure: a heading, a table row)."""
        self._lines.append(line)

    def add_text(self, text: str) -> None:
        """A document's own text, line by line through :func:`plain_line`."""
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            self._lines.append(plain_line(line))

    def blank(self) -> None:
        """One empty line unless the document is empty or already ends with one."""
        if self._lines and self._lines[-1] != "":
            self._lines.append("")

    def build(self) -> ConvertedDocument:
        """The document: the lines joined by ``\\n`` (ending with one), trailing blank lines
        dropped; empty text (and no anchors) when no line holds anything."""
        lines = list(self._lines)
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines:
            return ConvertedDocument("", ())
        anchors = tuple(a for a in self._anchors if a.line <= len(lines))
        return ConvertedDocument("\n".join(lines) + "\n", anchors)
