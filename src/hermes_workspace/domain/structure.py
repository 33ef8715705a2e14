"""Structural chunking: a file's outline (sections, definitions) -> chunks that follow it.

A chunker adapter describes a file as a tree of :class:`Unit` objects (line ranges): markdown and
reStructuredText sections (heading to the next heading of any level, nested by level), code
definitions (functions, methods, classes, found in a syntax tree), or nothing (plain text). This
module turns that outline into chunks the same way for every kind of file:

1. **Decompose.** A *container* unit (a class, an ``impl``, a markdown section with
   sub-sections) is always split into its *header* (its first line up to its first child: the
   class line, docstring and fields; the heading and its intro paragraphs), its children and the
   gaps between them. Any other unit (a function) stays whole when it holds at most
   ``chunk_size`` words, and is decomposed the same way only when it is larger. Code outside
   every definition (imports, constants, module-level statements) forms the gaps of the file.
2. **Split.** A piece still larger than ``chunk_size`` words (a long function without nested
   definitions, a long section, a plain-text file) is cut at its inner structure: paragraph
   starts (a line after a blank line, never inside a fenced code block), then line starts, into
   parts of about equal size; and a single line longer than that at sentence ends or spaces.
3. **Pack.** Tiny pieces (fewer than ``min_words`` words: a heading with no text of its own, a
   one-line method, a closing brace) are packed with their neighbours while the result stays
   within ``chunk_size`` words, and only *under the same parent*: a piece joins the group before
   it when it belongs to the same unit or to a unit nested in the group's first piece (see
   :func:`_pack` for the header and closing-brace cases). Pieces of two different definitions or
   sections of normal size are never merged.

Every chunk carries a **breadcrumb**: the path of the unit it comes from, ``ClassName.method``
for code (qualified name) and ``# Title > ## Section > ### Subsection`` for markdown (heading
path; reStructuredText titles are joined by `` > `` as written), and the qualified **names of
the definitions that start in it** (``definitions``). A chunk's context comes from that
breadcrumb, never from its neighbour's lines: overlap (``overlap`` words) is added only between
consecutive parts of one split piece, so a chunk never starts inside a previous definition or
section.

Units: sizes are words as :func:`chunk_words` counts them (runs of non-whitespace, plus one per
Chinese, Japanese or Korean character; a chunk's ``tokens`` stays its ``str.split()`` count); rows
are 0-based line numbers (``\\n`` only, as :class:`~hermes_workspace.domain.lines.LineIndex`);
chunk lines are 1-based.
Word counts come from per-line prefix sums, so any range costs O(1) after one O(n) pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate

from hermes_workspace.domain.chunking import (
    CODE_PREAMBLE,
    Heading,
    cap_spans,
    markdown_headings,
    overlap_start,
    section_finder,
    underlined_headings,
)
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import Chunk, ChunkKind
from hermes_workspace.domain.text_normalization import CJK_CHARACTER, cjk_characters

DEFAULT_MIN_WORDS = 40
"""Pieces with fewer words than this are packed with their siblings (rule 3). Chosen on the
development sets of ``benchmarks/workspace_qa.py``; BM25's length normalization lifts very short
chunks (a heading alone scores high for its own words), which is what packing prevents."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SENTENCE_ENDS = frozenset(".!?。！？")
_WORD_OR_CJK = re.compile(f"{CJK_CHARACTER.pattern}|(?:(?!{CJK_CHARACTER.pattern})\\S)+")


@dataclass(frozen=True, slots=True)
class Unit:
    """One node of a file's outline: rows ``start..end`` (0-based, inclusive), the breadcrumb
    segment ``name`` (``None`` for the file itself), nested ``children`` (sorted, inside the
    range, not overlapping), whether it is a ``container`` (always decomposed into header,
    children and gaps, whatever its size: classes and sections) and its ``label``, the
    ``section`` of the chunks it starts (for code, the definition line). ``children`` may be a callable
    returning them, so that an adapter computes nested definitions only for the units that need
    decomposing."""

    start: int
    end: int
    name: str | None = None
    children: tuple[Unit, ...] | Callable[[], tuple[Unit, ...]] = ()
    container: bool = False
    label: str | None = None

    def nested(self) -> tuple[Unit, ...]:
        """The children, computed when given as a callable."""
        children = self.children
        return children() if callable(children) else children


@dataclass(slots=True)
class _Piece:
    start: int  # rows, inclusive
    end: int
    path: tuple[str, ...]  # breadcrumb segments of the unit the piece comes from
    scope: tuple[str, ...]  # the parent under which it may be packed
    words: int
    names: list[tuple[str, ...]] = field(default_factory=list)  # paths of units starting here
    part_of: int | None = None  # id of the split piece it is a part of
    opens: bool = False  # the header of a unit whose children follow: packs forward only
    label: str | None = None  # the section of the innermost labelled unit holding the piece


def chunk_words(text: str) -> int:
    """The size of ``text`` in words as chunking counts them: runs of non-whitespace, plus one
    per Chinese, Japanese or Korean character (scripts written without spaces, where a run is a
    whole sentence; a character is about two thirds of a word, and one bigram in the index)."""
    return len(text.split()) + cjk_characters(text)


class _Words:
    """Prefix sums of words per row (:func:`chunk_words`): words in rows ``a..b`` in O(1)."""

    __slots__ = ("_sums", "rows")

    def __init__(self, rows: Sequence[str], ascii_only: bool = False) -> None:
        self.rows = rows
        if ascii_only:  # no CJK character anywhere: the plain count, without a call per row
            counts = [len(r.split()) for r in rows]
        else:
            counts = [len(r.split()) if r.isascii() else chunk_words(r) for r in rows]
        self._sums = [0, *accumulate(counts)]

    def between(self, start: int, end: int) -> int:
        return self._sums[end + 1] - self._sums[start] if end >= start else 0


@dataclass(frozen=True, slots=True)
class StructureSettings:
    """``chunk_size``: most words per chunk before overlap (> 0); ``overlap``: words repeated
    between consecutive parts of one split piece (>= 0); ``min_words``: pieces smaller than this
    are packed with siblings (>= 0); ``max_chars``: most characters per chunk before overlap
    (a minified line is one word of any length); ``separator``: joins breadcrumb segments."""

    chunk_size: int
    overlap: int = 0
    min_words: int = DEFAULT_MIN_WORDS
    max_chars: int | None = None
    separator: str = "."


def structured_chunks(
    text: str,
    outline: Sequence[Unit],
    settings: StructureSettings,
    *,
    kind: ChunkKind,
    lines: LineIndex | None = None,
    fenced: bool = False,
    section_at: Callable[[int], str | None] | None = None,
) -> list[Chunk]:
    """Chunks of ``text`` following ``outline`` (the top-level units, sorted, rows of ``text``)
    by the three rules of this module.

    Args:
        text: the whole decoded file.
        outline: top-level units; ``[]`` for plain text.
        settings: sizes and the breadcrumb separator.
        kind: recorded on every chunk.
        lines: a :class:`LineIndex` of ``text`` if the caller has one.
        fenced: markdown: never split inside a fenced code block when a paragraph start outside
            one exists.
        section_at: maps a chunk's start offset to its ``section``; default: for code, the
            ``label`` of the innermost unit holding the chunk's first piece (the definition
            line), for other kinds :func:`~hermes_workspace.domain.chunking.section_finder`.

    Returns:
        Chunks in file order, ``index`` 0..n-1, ``content == text[start_char:end_char]``, each
        with ``breadcrumb`` (``None`` outside every unit) and ``definitions``; ``[]`` for
        whitespace-only text.
    """
    if not text.strip():
        return []
    lines = lines or LineIndex(text)
    rows = text.split("\n")
    words = _Words(rows, ascii_only=text.isascii())
    planner = _Planner(rows, words, settings, fenced)
    root = Unit(0, len(rows) - 1, None, tuple(outline), container=True)
    planner.visit(root, (), ())
    groups = _pack(planner.pieces, settings.chunk_size, settings.min_words)
    if section_at is None and kind != "code":
        section_at = section_finder(text, kind)
    return _to_chunks(text, rows, groups, settings, kind, lines, section_at)


class _Planner:
    def __init__(self, rows: Sequence[str], words: _Words, settings: StructureSettings, fenced: bool) -> None:
        self.rows = rows
        self.words = words
        self.settings = settings
        self.fence_rows = _fence_rows(rows) if fenced else frozenset()
        self.pieces: list[_Piece] = []
        self.label: str | None = None  # label of the unit being visited
        self._split_ids = 0

    def visit(self, unit: Unit, path: tuple[str, ...], scope: tuple[str, ...], label: str | None = None) -> None:
        size = self.words.between(unit.start, unit.end)
        if size == 0:
            return
        label = unit.label or label
        self.label = label
        own = [path] if unit.name is not None else []
        if not unit.container and size <= self.settings.chunk_size:
            self._emit(unit.start, unit.end, path, scope, size, own)
            return
        children = [c for c in unit.nested() if unit.start <= c.start <= c.end <= unit.end]
        if not children:
            self._leaf(unit.start, unit.end, path, scope, own)
            return
        cursor = unit.start
        first = True
        for child in children:
            if child.start < cursor:
                continue  # overlapping children: keep the first
            if child.start > cursor:
                before = len(self.pieces)
                self._leaf(cursor, child.start - 1, path, path, own if first else [])
                if first and len(self.pieces) > before:
                    self.pieces[before].opens = True
                first = False
            child_path = (*path, child.name) if child.name is not None else path
            if first and own:
                # The unit's first line is its child's first line (a section that opens with a
                # sub-heading): the unit starts there too.
                self.visit(child, child_path, path, label)
                if self.pieces and self.pieces[-1].start == unit.start:
                    self.pieces[-1].names.insert(0, path)
            else:
                self.visit(child, child_path, path, label)
            self.label = label
            first = False
            cursor = child.end + 1
        if cursor <= unit.end:
            self._leaf(cursor, unit.end, path, path, [])

    def _emit(self, start: int, end: int, path: tuple[str, ...], scope: tuple[str, ...], size: int,
              names: list[tuple[str, ...]], part_of: int | None = None) -> None:
        self.pieces.append(_Piece(start, end, path, scope, size, list(names), part_of, label=self.label))

    def _leaf(self, start: int, end: int, path: tuple[str, ...], scope: tuple[str, ...],
              names: list[tuple[str, ...]]) -> None:
        """Rows ``start..end`` with no nested unit: one piece, or parts of at most
        ``chunk_size`` words cut at paragraph starts, then line starts."""
        size = self.words.between(start, end)
        if size == 0:
            return
        cap = self.settings.chunk_size
        if size <= cap:
            self._emit(start, end, path, scope, size, names)
            return
        self._split_ids += 1
        part_id = self._split_ids
        first = True
        for part_start, part_end in self._split_rows(start, end, cap):
            part_words = self.words.between(part_start, part_end)
            if part_words:
                self._emit(part_start, part_end, path, path, part_words, names if first else [], part_id)
                first = False

    def _split_rows(self, start: int, end: int, cap: int) -> list[tuple[int, int]]:
        rows = self.rows
        # Paragraph starts: a non-blank row after a blank one, outside fenced code.
        paragraphs: list[int] = [start]
        for row in range(start + 1, end + 1):
            if not rows[row - 1].strip() and rows[row].strip() and row not in self.fence_rows:
                paragraphs.append(row)
        bounds = [*paragraphs, end + 1]
        pieces: list[tuple[int, int]] = []
        for a, b in zip(bounds, bounds[1:], strict=False):
            if self.words.between(a, b - 1) <= cap:
                pieces.append((a, b - 1))
                continue
            # A paragraph larger than the cap (a long fenced block): its own blank lines first,
            # then line starts; packed below.
            inner = [a, *(r for r in range(a + 1, b) if not rows[r - 1].strip() and rows[r].strip()), b]
            for c, d in zip(inner, inner[1:], strict=False):
                if self.words.between(c, d - 1) > cap:
                    pieces.extend((r, r) for r in range(c, d))
                else:
                    pieces.append((c, d - 1))
        return _balanced_parts([(a, b, self.words.between(a, b)) for a, b in pieces], cap)


def _balanced_parts(pieces: list[tuple[int, int, int]], cap: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, end, words)`` pieces packed into as few parts as the cap allows, with
    the largest part as small as possible (so that no part is a scrap of a few words): the
    smallest limit between the even share and ``cap`` that still needs no more parts than
    ``cap`` itself, found by bisection over greedy packings. A piece larger than ``cap`` is a
    part of its own."""

    def pack(limit: int) -> list[tuple[int, int]]:
        parts: list[tuple[int, int]] = []
        start, end, words = pieces[0]
        for a, b, w in pieces[1:]:
            if words > 0 and words + w > limit:
                parts.append((start, end))
                start, end, words = a, b, w
            else:
                end, words = b, words + w
        parts.append((start, end))
        return parts

    fewest = len(pack(cap))
    low, high = max(1, sum(w for *_, w in pieces) // fewest), cap
    while low < high:
        middle = (low + high) // 2
        if len(pack(middle)) <= fewest:
            high = middle
        else:
            low = middle + 1
    return pack(high)


def _fence_rows(rows: Sequence[str]) -> frozenset[int]:
    """Rows inside fenced code blocks (after the opening fence, up to the closing one)."""
    inside: set[int] = set()
    fence: str | None = None
    for number, row in enumerate(rows):
        match = _FENCE.match(row)
        if fence is None:
            if match:
                fence = match.group(1)
        else:
            inside.add(number)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
    return frozenset(inside)


def _pack(pieces: list[_Piece], cap: int, min_words: int) -> list[list[_Piece]]:
    """Groups of consecutive pieces: a piece joins the previous group when one of the two has
    fewer than ``min_words`` words, the sum stays within ``cap`` and the two are in one line of
    parents (the piece sits under the group's first scope, or is the tail of a parent the group
    is nested in, such as the ``}`` closing a class). Parts of one split piece are never joined,
    and the header of a unit whose children follow (a class line, a heading over sub-sections)
    packs forward, with its own members: it joins the group before it only when that group is
    tiny and would otherwise stand alone (a label line above a heading, imports above a class).
    A scrap of fewer than ``min_words // 4`` words (``#endif``, ``main()`` under
    ``if __name__ == "__main__":``) may take its group past ``cap`` by its own size rather than
    stand alone: a chunk of three words ranks high on BM25's length normalization alone."""
    groups: list[list[_Piece]] = []
    group_words = 0
    for piece in pieces:
        if groups:
            group = groups[-1]
            head, last = group[0], group[-1]
            same_split = piece.part_of is not None and piece.part_of == last.part_of
            related = (
                piece.scope[: len(head.scope)] == head.scope
                or (piece.words < min_words and not piece.names and piece.path and last.path[: len(piece.path)] == piece.path)
            )
            if (
                not same_split
                and (not piece.opens or group_words < min_words)
                and (group_words < min_words or piece.words < min_words)
                and group_words + piece.words <= cap + (piece.words if piece.words < min_words // 4 else 0)
                and related
                and last.end < piece.start
            ):
                group.append(piece)
                group_words += piece.words
                continue
        groups.append([piece])
        group_words = piece.words
    return groups


def _to_chunks(
    text: str,
    rows: Sequence[str],
    groups: list[list[_Piece]],
    settings: StructureSettings,
    kind: ChunkKind,
    lines: LineIndex,
    section_at: Callable[[int], str | None] | None,
) -> list[Chunk]:
    last_row = len(rows) - 1

    def row_start(row: int) -> int:
        return lines.line_start_offset(row + 1) if row <= last_row else len(text)

    chunks: list[Chunk] = []
    previous_core = 0  # core start of the last chunk
    previous_part: int | None = None  # the split piece the last chunk ends in
    for group in groups:
        start = row_start(group[0].start)
        end = min(len(text), row_start(group[-1].end + 1))
        # Overlap joins consecutive parts of one split piece (and the pieces of a group cut by
        # the character cap), never two units.
        continues = group[0].part_of is not None and group[0].part_of == previous_part
        spans = _spans(text, start, end, settings, lines)
        for core_start, core_end in spans:
            chunk_start = core_start
            breadcrumb, names, section_piece = _describe(group, spans, core_start, core_end, lines, settings)
            if settings.overlap > 0 and continues and chunks:
                shared = min(settings.overlap, len(text[previous_core:core_start].split()) // 2)
                if shared > 0:
                    chunk_start = overlap_start(text, previous_core, core_start, shared, lines)
            content = text[chunk_start:core_end]
            line_start, line_end = lines.span(chunk_start, core_end)
            chunks.append(
                Chunk(
                    index=len(chunks),
                    content=content,
                    start_char=chunk_start,
                    end_char=core_end,
                    line_start=line_start,
                    line_end=line_end,
                    tokens=len(content.split()),
                    kind=kind,
                    section=section_at(core_start) if section_at is not None else _label(section_piece, rows),
                    breadcrumb=breadcrumb,
                    definitions=tuple(names),
                )
            )
            previous_core = core_start
            continues = True
        previous_part = group[-1].part_of
    return chunks


def _describe(
    group: list[_Piece],
    spans: list[tuple[int, int]],
    start: int,
    end: int,
    lines: LineIndex,
    settings: StructureSettings,
) -> tuple[str | None, list[str], list[_Piece]]:
    """Breadcrumb, definitions and the pieces for the section of the chunk ``text[start:end]`` of
    ``group`` (the whole group, or one of the spans the character cap cut it into): named after
    the first unit that starts in it, past a header that only introduces its members (a class
    line, a heading over sub-sections), else after the unit its first line lies in."""
    if len(spans) == 1:
        inside = group
    else:
        first_row, last_row = lines.line_of(start) - 1, lines.line_of(max(start, end - 1)) - 1
        holding = [p for p in group if p.start <= first_row] or group[:1]
        inside = [holding[-1], *(p for p in group if first_row < p.start <= last_row)]
        if holding[-1].start < first_row:  # the span starts inside that piece: not where it starts
            inside = [replace(inside[0], names=[]), *inside[1:]]
    main = next((p for p in inside if p.names and not p.opens), None) or next(
        (p for p in inside if p.names), inside[0]
    )
    breadcrumb = settings.separator.join(main.path) if main.path else None
    names = list(dict.fromkeys(settings.separator.join(n) for p in inside for n in p.names if n))
    return breadcrumb, names, inside


def _label(group: list[_Piece], rows: Sequence[str]) -> str | None:
    """The section of a code chunk: the label of its first piece, or of the next one when the
    first holds only comments, decorators and blank lines (they belong to what follows)."""
    for piece in group:
        if piece.label is not None or any(
            row.strip() and not CODE_PREAMBLE.match(row) for row in rows[piece.start : piece.end + 1]
        ):
            return piece.label
    return group[0].label


def _spans(text: str, start: int, end: int, settings: StructureSettings, lines: LineIndex) -> list[tuple[int, int]]:
    """The trimmed span of ``text[start:end]`` (blank leading lines and trailing whitespace
    removed), cut further where it exceeds ``max_chars`` characters or, on a single line,
    ``chunk_size`` words (at the last sentence end within the cap, else after the cap's last
    word)."""
    segment = text[start:end]
    stripped_end = start + len(segment.rstrip())
    if stripped_end <= start:
        return []
    first_visible = start + (len(segment) - len(segment.lstrip()))
    core = (max(start, lines.start_of_line_containing(first_visible)), stripped_end)
    spans = [core]
    if chunk_words(text[core[0] : core[1]]) > settings.chunk_size and "\n" not in text[core[0] : core[1]].strip():
        spans = _split_long_line(text, core[0], core[1], settings.chunk_size)
    if settings.max_chars is not None:
        spans = cap_spans(text, spans, settings.max_chars, lines)
    return spans


def _split_long_line(text: str, start: int, end: int, cap: int) -> list[tuple[int, int]]:
    """A one-line span of more than ``cap`` words (:func:`chunk_words`) cut into spans of at most
    ``cap`` words: after the last sentence end in the second half of each window, else after its
    last word. A Chinese, Japanese or Korean character is a word of its own here."""
    spans: list[tuple[int, int]] = []
    words = [m.span() for m in _WORD_OR_CJK.finditer(text, start, end)]
    i = 0
    while i < len(words):
        j = min(len(words), i + cap)
        if j < len(words):
            for k in range(j - 1, i + cap // 2 - 1, -1):
                if text[words[k][1] - 1] in _SENTENCE_ENDS:
                    j = k + 1
                    break
        spans.append((words[i][0], words[j - 1][1]))
        i = j
    return spans


# -- outlines of documents ---------------------------------------------------------------------


def markdown_outline(
    text: str, lines: LineIndex | None = None, headings: Sequence[Heading] | None = None
) -> list[Unit]:
    """Markdown sections as nested units: each heading's section runs from its line to the line
    before the next heading of the same or a higher level; ``name`` is the heading in ATX form
    (``## Validators``). Headings in fenced code and front matter are ignored
    (:func:`~hermes_workspace.domain.chunking.markdown_headings`, or ``headings`` when the caller
    has them)."""
    lines = lines or LineIndex(text)
    found = markdown_headings(text) if headings is None else headings
    heads = [(lines.line_of(h.offset) - 1, h.level, h.text) for h in found]
    return _nest(heads, lines.line_count - 1)


def underlined_outline(
    text: str, lines: LineIndex | None = None, headings: Sequence[Heading] | None = None
) -> list[Unit]:
    """reStructuredText sections (title over an underline, optional overline) as nested units;
    ``name`` is the title, levels in order of first use of each underline style
    (:func:`~hermes_workspace.domain.chunking.underlined_headings`, or ``headings`` when the
    caller has them)."""
    found = underlined_headings(text) if headings is None else headings
    if not found:
        return []
    lines = lines or LineIndex(text)
    rows = text.split("\n")
    heads = []
    for heading in found:
        row = lines.line_of(heading.offset) - 1
        if row > 0 and row + 1 < len(rows) and rows[row - 1].rstrip() == rows[row + 1].rstrip():
            row -= 1  # an overline belongs to the title
        heads.append((row, heading.level, heading.text))
    return _nest(heads, lines.line_count - 1)


def _nest(heads: list[tuple[int, int, str]], last_row: int) -> list[Unit]:
    """Units of headings ``(row, level, name)`` in file order, nested by level."""
    heads = [h for i, h in enumerate(heads) if i == 0 or h[0] > heads[i - 1][0]]

    def build(i: int, end_row: int, level: int) -> tuple[list[Unit], int]:
        units: list[Unit] = []
        while i < len(heads) and heads[i][1] > level:
            row, head_level, name = heads[i]
            j = i + 1
            while j < len(heads) and heads[j][1] > head_level:
                j += 1
            section_end = heads[j][0] - 1 if j < len(heads) else end_row
            children, _ = build(i + 1, section_end, head_level)
            units.append(Unit(row, section_end, name, tuple(children), container=True))
            i = j
        return units, i

    units, _ = build(0, last_row, 0)
    return units
