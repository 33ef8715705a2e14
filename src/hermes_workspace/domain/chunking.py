"""Chunking policy shared by every chunker: cut points -> :class:`Chunk` objects.

A chunker adapter decides *where* a file may be cut (syntax tree, headings, paragraphs); this module
decides what a chunk *is*, the same way for all of them:

1. cut points move to the nearest line start, so that a chunk's line range holds exactly its text
   and ``read_file(path, line_start, line_end)`` shows it whole. A cut whose neighbours leave it
   no line start stays where it is inside a *long line* (longer than ``max_chars``, as minified
   code) and is dropped inside any other line (so that chunk starts are line starts);
2. blank lines at a chunk's start and whitespace at its end are trimmed; empty chunks are dropped;
   with ``max_chars``, a chunk longer than that many characters is split at its last line start
   within the limit, else after its last whitespace, else at the limit (never inside ``\r\n``);
3. each chunk but the first is extended backwards by ``overlap`` words of its predecessor (at most
   half of the predecessor's words), then to the start of that line when that adds at most as many
   words again and stays after the predecessor's first line; when it cannot, it moves *forward* to
   the next line start before the chunk's own start (fewer words), and without one the chunk gets
   no overlap. Overlap stays inside a line only when the chunk itself starts inside that line (a
   long line). DESIGN.md §6: overlap is applied after chunking, for all paths;
4. ``section`` is found from the chunk's own start (before overlap): the markdown heading it sits
   under, or the innermost code definition enclosing its first line of code.

Guarantee (with ``max_chars``): every chunk starts at a line start (offset 0 or after ``\n``)
unless the line holding its start is longer than ``max_chars`` characters, and a chunk's own text
(before overlap) is at most ``max_chars`` characters. Without ``max_chars`` neither holds for cuts
crowded into one line.

Helpers for adapters: :func:`markdown_sections` and :func:`merge_pieces` give heading-aligned
cuts; :func:`align_code_cuts` moves a syntax-tree chunker's cuts up to the definitions they split.

Words are maximal runs of non-whitespace characters (``str.split()``), the unit of ``chunk_size``.
Offsets are characters (code points) of the ``str``; lines are 1-based and counted by ``\\n`` only.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import accumulate, islice, pairwise
from typing import NamedTuple

from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import Chunk, ChunkKind

POLICY_VERSION = 4
"""Version of the rules in this module. Chunker signatures include it: bump it whenever a change
here changes the chunks of some file, so that indexes built under the old rules are rebuilt."""

MAX_SECTION_CHARS = 200
"""Sections longer than this are cut (a heading is a title, not a paragraph)."""

_BOM = "\ufeff"
_WORD = re.compile(r"\S+")
_NON_SPACE = re.compile(r"\S")
_THROUGH_LAST_SPACE = re.compile(r".*\s", re.DOTALL)  # with match(): up to the last whitespace
# ATX heading: 1-6 '#', then whitespace or the end of the line. A closing run of '#' counts only
# after whitespace ("## C#" is titled "C#"); seven '#' make a paragraph.
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
# Lines that are not paragraph text, so that a '---'/'===' below is no setext underline: list
# items and block quotes anywhere in the run of lines, indented code at its start.
_LIST_OR_QUOTE = re.compile(r"^ {0,3}(?:(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)|>)")
_INDENTED_CODE = re.compile(r"^(?: {4}|[ ]{0,3}\t)")
_FRONT_MATTER = re.compile(r"^(---|\+\+\+)[ \t]*$")
# A definition keyword must be followed by a name (or '<', '(', '*'...), so that assignments such
# as `type = 1` or `record = fetch()` are not taken for definitions. Used with re.MULTILINE.
_CODE_DEFINITION = re.compile(
    r"^\ufeff?[ \t]*(?:(?:export|public|private|protected|internal|static|abstract|final|async|"
    r"pub(?:\([^)\n]*\))?|default|override|open|unsafe|extern|sealed|data|inline|suspend|virtual|partial)[ \t]+)*"
    r"(?:def|class|function|func|fn|impl|struct|enum|trait|interface|module|namespace|type|"
    r"object|record|protocol|extension|macro_rules!|sub|procedure|"
    r"(?i:create(?:[ \t]+or[ \t]+replace)?[ \t]+(?:table|view|function|index|procedure|trigger)))"
    r"(?:[ \t]+[\w$*(\[<&'\"`@]|[<*])",
    re.MULTILINE,
)
CODE_PREAMBLE = re.compile(r"^[ \t]*(?:@|#|//|/\*|\*|--|;|\"\"\"|''')")
"""A line that opens with a comment, a decorator or a docstring quote: it belongs to the code below."""
_CLOSING_BRACKET = re.compile(r"[ \t]*[)\]]")
_INDENT = re.compile(r"[ \t]*")
_OPENERS_TO_EOL = re.compile(r"[ \t]*[{(\[]+[ \t]*\r?(?:\n|\Z)")
_CLOSERS_ONLY = re.compile(r"[\s)\]};,]*")


def count_words(text: str) -> int:
    """Number of words (runs of non-whitespace characters) in ``text``."""
    return len(text.split())


class Heading(NamedTuple):
    """A markdown heading: ``offset`` of its line's first character, ``level`` 1-6, and ``text``
    written in ATX form (``"## Rollback Procedures"``, whatever the source syntax)."""

    offset: int
    level: int
    text: str


def markdown_headings(text: str) -> list[Heading]:
    """ATX (``## Title``) and setext (``Title`` over ``===``/``---``) headings in file order,
    ignoring lines inside fenced code blocks (````` ``` ````` or ``~~~``) and a leading YAML/TOML
    front matter block (``---``/``+++`` ... ``---``/``...``/``+++``). A byte-order mark at the
    start of ``text`` is ignored."""
    headings: list[Heading] = []
    fence: str | None = None
    offset = 0
    previous: tuple[int, str] | None = None  # offset and text of the paragraph's first line
    blocked = False  # the current run of lines holds a list item, quote or code: no setext
    lines = text.split("\n")
    skip = _front_matter_lines(lines)
    for number, line in enumerate(lines):
        stripped = line.rstrip("\r")
        if number == 0 and stripped.startswith(_BOM):
            stripped = stripped[1:]
        if number < skip:
            offset += len(line) + 1
            continue
        fence_match = _FENCE.match(stripped)
        if fence is not None:
            # A closing fence: the same character, at least as long, and nothing but spaces after.
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
                and not fence_match.group(2).strip()
            ):
                fence = None
            previous, blocked = None, False
        elif fence_match and not (fence_match.group(1)[0] == "`" and "`" in fence_match.group(2)):
            fence = fence_match.group(1)
            previous, blocked = None, False
        else:
            atx = _ATX_HEADING.match(stripped)
            underline = _SETEXT_UNDERLINE.match(stripped)
            if atx:
                level = len(atx.group(1))
                title = (atx.group(2) or "").strip()
                if not title.strip("#"):
                    title = ""  # "### ###" is an empty heading
                headings.append(Heading(offset, level, _section_text(("#" * level + " " + title).rstrip())))
                previous, blocked = None, False
            elif underline and previous is not None and not blocked:
                level = 1 if underline.group(1)[0] == "=" else 2
                headings.append(Heading(previous[0], level, _section_text("#" * level + " " + previous[1])))
                previous = None
            elif _THEMATIC_BREAK.match(stripped):
                previous, blocked = None, False
            elif stripped.strip():
                if _LIST_OR_QUOTE.match(stripped) or (previous is None and _INDENTED_CODE.match(stripped)):
                    blocked = True
                previous = (offset, stripped.strip()) if previous is None else previous
            else:
                previous, blocked = None, False
        offset += len(line) + 1
    return headings


def _front_matter_lines(lines: list[str]) -> int:
    """Number of leading lines forming a front matter block (0 if there is none)."""
    if not lines:
        return 0
    first = lines[0].rstrip("\r").removeprefix(_BOM)
    opener = _FRONT_MATTER.match(first)
    if not opener:
        return 0
    closers = ("---", "...") if opener.group(1) == "---" else ("+++",)
    for number in range(1, len(lines)):
        if lines[number].rstrip("\r").rstrip(" \t") in closers:
            return number + 1
    return 0


def markdown_sections(text: str) -> list[int]:
    """Offsets where a heading line starts (excluding 0): the natural cut points of a markdown
    file, from which :func:`merge_pieces` builds heading-aligned chunks."""
    return [h.offset for h in markdown_headings(text) if h.offset > 0]


def code_definitions(text: str) -> list[tuple[int, str]]:
    """``(offset, line)`` of every line that starts a definition (``def``, ``class``, ``fn``,
    ``function``, ``struct``...), by a language-agnostic pattern; decorators are not included.
    ``offset`` is the line's first character; ``line`` is the stripped line, cut to
    :data:`MAX_SECTION_CHARS` characters."""
    found: list[tuple[int, str]] = []
    for match in _CODE_DEFINITION.finditer(text):
        start = match.start()
        end = text.find("\n", start)
        line = text[start : len(text) if end == -1 else end]
        found.append((start, _section_text(line.strip().lstrip(_BOM).strip())))
    return found


def _enclosing_definition(
    text: str, definitions: list[tuple[int, str]], starts: list[int], position: int
) -> str | None:
    """The innermost definition whose body holds the line at ``position``: the last definition
    line above it such that every line of code in between (and the line itself) is indented
    deeper than that definition line. Blank lines, comments, decorators and lines opening with
    ``)`` or ``]`` (the end of a long signature) are ignored; a ``}`` at the definition's
    indentation ends it. Scans upwards from ``position`` only as far as needed."""
    i = bisect_right(starts, position) - 1
    cursor = text.rfind("\n", 0, position) + 1  # start of the line being examined
    min_indent: int | None = None  # smallest indentation of code lines seen so far
    while i >= 0:
        definition_start = starts[i]
        while cursor > definition_start:
            end = text.find("\n", cursor)
            line = text[cursor : len(text) if end == -1 else end]
            body = line.lstrip(" \t")
            if body.strip() and not CODE_PREAMBLE.match(line) and not _CLOSING_BRACKET.match(line):
                indent = len(line) - len(body)
                min_indent = indent if min_indent is None else min(min_indent, indent)
                if min_indent == 0:
                    return None  # a line at column 0 ends every definition above it
            cursor = text.rfind("\n", 0, cursor - 1) + 1
        line_end = text.find("\n", definition_start)
        line = text[definition_start : len(text) if line_end == -1 else line_end].lstrip(_BOM)
        definition_indent = len(line) - len(line.lstrip(" \t"))
        if min_indent is None or min_indent > definition_indent:
            return definitions[i][1]
        i -= 1
    return None


def align_code_cuts(text: str, cuts: Sequence[int], max_words: int) -> list[int]:
    """Move code cut points to where definitions begin, so that chunks start at ``def``/``class``
    lines rather than just below them.

    A syntax-tree chunker that splits a large definition cuts after its header (``def f(...):``
    and perhaps a docstring, or before the ``{`` of ``function f() {``), leaving the header at the
    end of the previous chunk. Each cut here, in order:

    1. moves to the start of its line when only opening brackets follow it on that line;
    2. moves up to the outermost definition line that encloses it (every line of code between is
       indented deeper) when that adds at most ``max_words`` words to the chunk it starts;
    3. at the start of a line's code, moves up over the comment and decorator lines directly
       above it at the same indentation.

    Cuts never move to or before the previous cut. A cut that would leave a piece of at most
    ``max_words`` words holding nothing but definition lines, comments and decorators
    (``class Release:`` and its docstring, a lone ``@property``) is dropped, so that the piece
    starts the chunk of the body below it; so is a cut before a piece of closing brackets only
    (the ``}`` of a class), which stays with the chunk before it.

    Returns the cuts inside the text, sorted and without duplicates.
    """
    result: list[int] = []
    lower = 0
    for cut in sorted({c for c in cuts if 0 < c < len(text)}):
        if cut <= lower:
            continue
        moved = _before_opening_bracket(text, cut, lower)
        moved = _attach_preamble(text, _lift_to_definition(text, moved, lower, max_words), lower)
        moved = moved if moved > lower else cut
        if _is_header_only(text, lower, moved) and count_words(text[lower:moved]) <= max_words:
            continue
        result.append(moved)
        lower = moved
    bounds = [*result, len(text)]
    return [cut for cut, end in zip(result, bounds[1:]) if not _CLOSERS_ONLY.fullmatch(text, cut, end)]


def _before_opening_bracket(text: str, cut: int, lower: int) -> int:
    line_start = text.rfind("\n", 0, cut) + 1
    if line_start > lower and _OPENERS_TO_EOL.match(text, cut):
        return line_start
    return cut


def _is_header_only(text: str, start: int, end: int) -> bool:
    """Whether every non-blank line of ``text[start:end]`` is a definition line, a comment, a
    decorator or the closing bracket of a long signature."""
    position = start
    while position < end:
        line_end = min(_line_end(text, position), end)
        line = text[position:line_end]
        position = line_end + 1
        if line.strip() and not (
            CODE_PREAMBLE.match(line) or _CODE_DEFINITION.match(line) or _CLOSING_BRACKET.match(line)
        ):
            return False
    return True


def _lift_to_definition(text: str, cut: int, lower: int, max_words: int) -> int:
    first = _first_code_line(text, cut)
    first_line_start = text.rfind("\n", 0, first) + 1
    min_indent = _INDENT.match(text, first_line_start).end() - first_line_start
    best = cut
    words = 0
    cursor = text.rfind("\n", 0, cut) + 1  # lines above the cut's own line
    while cursor > 0 and min_indent > 0:
        above = text.rfind("\n", 0, cursor - 1) + 1
        if above <= lower:
            break
        line = text[above : cursor - 1]
        words += count_words(line)
        if words > max_words:
            break
        body = line.lstrip(" \t")
        if body.strip() and not CODE_PREAMBLE.match(line) and not _CLOSING_BRACKET.match(line):
            indent = len(line) - len(body)
            if indent < min_indent and _CODE_DEFINITION.match(line):
                best = above
            min_indent = min(min_indent, indent)
        cursor = above
    return best


def _attach_preamble(text: str, cut: int, lower: int) -> int:
    line_start = text.rfind("\n", 0, cut) + 1
    if line_start <= lower or _INDENT.match(text, line_start, cut).end() != cut:
        return cut  # a cut inside a line's code: nothing to attach
    indent = text[line_start:cut]
    position = line_start
    while position > 0:
        above = text.rfind("\n", 0, position - 1) + 1
        line = text[above : position - 1].rstrip("\r")
        if (
            above <= lower
            or not line.startswith(indent)
            or line[len(indent) : len(indent) + 1] in (" ", "\t")
            or not CODE_PREAMBLE.match(line)
        ):
            break
        position = above
    return position if position < line_start else cut


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end == -1 else end


def merge_pieces(
    text: str,
    cuts: Sequence[int],
    chunk_size: int,
    split_large: Callable[[int, int], list[int]],
) -> list[int]:
    """Greedy packing of the pieces between ``cuts`` into chunks of at most ``chunk_size`` words.

    ``cuts`` are candidate cut offsets (sorted, inside the text). Consecutive pieces are joined while
    the total stays within ``chunk_size``; a piece larger than ``chunk_size`` is cut further by
    ``split_large(start, end)``, which returns cut offsets strictly inside ``(start, end)``.
    Returns the chosen cut offsets, sorted.
    """
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    chosen: list[int] = []
    current_words = 0
    for start, end in pairwise(bounds):
        if start >= end:
            continue
        words = count_words(text[start:end])
        if words > chunk_size:
            if start > 0:
                chosen.append(start)
            chosen.extend(c for c in split_large(start, end) if start < c < end)
            chosen.append(end)
            current_words = 0
        elif current_words and current_words + words > chunk_size:
            chosen.append(start)
            current_words = words
        else:
            current_words += words
    return sorted({c for c in chosen if 0 < c < len(text)})


def build_chunks(
    text: str,
    cuts: Sequence[int],
    *,
    kind: ChunkKind,
    overlap: int,
    lines: LineIndex | None = None,
    section_at: Callable[[int], str | None] | None = None,
    max_chars: int | None = None,
) -> list[Chunk]:
    """Turn cut offsets into chunks following the four rules of this module.

    Args:
        text: the whole decoded file.
        cuts: offsets where a chunk may end and the next begin (any order; out-of-range ignored).
        kind: recorded on every chunk.
        overlap: words of the previous chunk repeated at the start of each chunk (>= 0).
        lines: a :class:`LineIndex` of ``text`` if the caller has one.
        section_at: maps a chunk's own start offset to its section; default
            :func:`section_finder` for ``kind``.
        max_chars: at most this many characters in a chunk before overlap (> 0), and the length
            above which a line is *long* (may hold chunk starts inside it); ``None``: no cap.
            Chunkers pass ``chunk_size * MAX_CHARS_PER_WORD`` (domain/constants.py).

    Returns:
        Chunks in file order with consecutive ``index`` from 0; ``[]`` for whitespace-only text.
    """
    if max_chars is not None and max_chars <= 0:
        raise ValueError(f"max_chars must be > 0, got {max_chars}")
    lines = lines or LineIndex(text)
    section_at = section_at or section_finder(text, kind)
    cores = _core_spans(text, _snap_cuts(text, cuts, lines, max_chars), lines)
    if max_chars is not None:
        cores = cap_spans(text, cores, max_chars, lines)
    chunks: list[Chunk] = []
    previous_core_start = 0
    previous_words = 0
    for i, (core_start, end) in enumerate(cores):
        start = core_start
        # Never repeat more than half of the previous chunk: a small chunk (a short markdown
        # section) is not copied whole into its successor, and chunk starts strictly increase.
        shared = min(overlap, previous_words // 2)
        if i > 0 and shared > 0:
            start = overlap_start(text, previous_core_start, core_start, shared, lines)
        content = text[start:end]
        line_start, line_end = lines.span(start, end)
        chunks.append(
            Chunk(
                index=i,
                content=content,
                start_char=start,
                end_char=end,
                line_start=line_start,
                line_end=line_end,
                tokens=count_words(content),
                kind=kind,
                section=section_at(core_start),
            )
        )
        previous_core_start = core_start
        previous_words = count_words(text[core_start:end]) if overlap > 0 else 0
    return chunks


def section_finder(text: str, kind: ChunkKind) -> Callable[[int], str | None]:
    """A function from a chunk's start offset to its section for ``kind``: the last markdown
    heading at or before the first non-blank line (else the first heading after it), the
    innermost code definition enclosing the first line of code (after comments and decorators),
    for plain text the last reStructuredText-style heading (see :func:`underlined_headings`), and
    ``None`` for code outside any definition or text without such headings."""
    if kind == "markdown":
        return heading_sections(markdown_headings(text))
    if kind == "code":
        definitions = code_definitions(text)
        starts = [offset for offset, _ in definitions]

        def code_section(offset: int) -> str | None:
            return _enclosing_definition(text, definitions, starts, _first_code_line(text, offset))

        return code_section
    return heading_sections(underlined_headings(text))


def heading_sections(headings: Sequence[Heading]) -> Callable[[int], str | None]:
    """A function from an offset to the text of the last of ``headings`` (in file order) at or
    before it, else the first one after it, else ``None``; O(log headings) per call."""
    starts = [h.offset for h in headings]
    texts = [h.text for h in headings]

    def section(offset: int) -> str | None:
        if not texts:
            return None
        i = bisect_right(starts, offset) - 1
        return texts[max(i, 0)]

    return section


_UNDERLINE_CHARS = frozenset("=-~^\"'`#*+:._<>")


def underlined_headings(text: str) -> list[Heading]:
    """reStructuredText-style section titles, as Python's, Django's and Sphinx projects' ``.rst``
    and ``.txt`` docs write them: a title line directly over a line of one repeated punctuation
    character at least as long as the title (an equal overline is allowed). ``text`` is the title
    itself; ``level`` numbers the underline styles in order of first use, as reStructuredText
    does. Only the lines that look like underlines (found by one regular-expression pass) are
    examined, so a file without any costs one scan."""
    candidates = [m.start() for m in _UNDERLINE_LINE.finditer(text)]
    if not candidates:
        return []
    lines = text.split("\n")
    offsets = [0, *accumulate(len(line) + 1 for line in lines)]
    headings: list[Heading] = []
    styles: list[str] = []
    for position in candidates:
        i = bisect_right(offsets, position) - 2  # the title is the line above the underline
        if i < 0:
            continue
        title = lines[i].rstrip("\r").strip()
        underline = lines[i + 1].rstrip("\r").rstrip()
        if (
            not title
            or lines[i][:1].isspace()
            or len(underline) < max(3, len(title))
            or underline[0] not in _UNDERLINE_CHARS
            or underline != underline[0] * len(underline)
            or set(title) <= _UNDERLINE_CHARS | {" "}
        ):
            continue
        style = underline[0]
        if i > 0 and lines[i - 1].rstrip("\r").rstrip() == underline:
            style = "over" + style
        if style not in styles:
            styles.append(style)
        headings.append(Heading(offsets[i], styles.index(style) + 1, _section_text(title)))
    return headings


_UNDERLINE_LINE = re.compile(r"^([=\-~^\"'`#*+:._<>])\1{2,}[^\S\n]*$", re.MULTILINE)
"""A line of three or more of one underline character (trailing spaces allowed)."""


def _first_code_line(text: str, offset: int) -> int:
    """Offset of the first line at or after ``offset`` that is neither blank, a comment nor a
    decorator, so that a chunk starting with ``@decorator`` belongs to the function below it."""
    pos = offset
    limit = len(text)
    while pos < limit:
        end = text.find("\n", pos)
        end = limit if end == -1 else end
        line = text[pos:end]
        if line.strip() and not CODE_PREAMBLE.match(line):
            return pos
        pos = end + 1
    return offset


def _section_text(value: str) -> str:
    return value if len(value) <= MAX_SECTION_CHARS else value[: MAX_SECTION_CHARS - 1] + "…"


def _snap_cuts(text: str, cuts: Sequence[int], lines: LineIndex, long_line: int | None = None) -> list[int]:
    """Move each cut to the nearer of the line starts around it, keeping cuts strictly increasing.
    A cut with no usable line start between its neighbours stays put inside a line longer than
    ``long_line`` characters (or any line when ``long_line`` is ``None``) and is dropped otherwise."""
    raw = sorted({c for c in cuts if 0 < c < len(text)})
    snapped: list[int] = []
    for i, cut in enumerate(raw):
        lower = snapped[-1] if snapped else 0
        upper = raw[i + 1] if i + 1 < len(raw) else len(text)
        if text[cut - 1] == "\n":
            candidate = cut
        else:
            before = lines.start_of_line_containing(cut)
            after_nl = text.find("\n", cut)
            after = after_nl + 1 if after_nl != -1 else -1
            options = [p for p in (before, after) if lower < p < upper]
            if options:
                candidate = min(options, key=lambda p: abs(p - cut))
            elif long_line is None or (len(text) if after_nl == -1 else after_nl) - before > long_line:
                candidate = cut
            else:
                continue  # inside a short line whose starts are taken: the cut goes
        if lower < candidate < len(text):
            snapped.append(candidate)
    return snapped


def _core_spans(text: str, cuts: list[int], lines: LineIndex) -> list[tuple[int, int]]:
    """Spans between cuts with blank leading lines and trailing whitespace removed; empty spans
    are dropped."""
    spans: list[tuple[int, int]] = []
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        segment = text[start:end]
        stripped_end = start + len(segment.rstrip())
        if stripped_end <= start:
            continue
        first_visible = start + (len(segment) - len(segment.lstrip()))
        line_start = lines.start_of_line_containing(first_visible)
        spans.append((max(start, line_start), stripped_end))
    return spans


def cap_spans(text: str, spans: list[tuple[int, int]], max_chars: int, lines: LineIndex) -> list[tuple[int, int]]:
    """``spans`` (trimmed, as from :func:`_core_spans`) with every span longer than ``max_chars``
    characters split into trimmed pieces of at most ``max_chars``: after the last ``\n`` within
    the limit, else after the last whitespace (a ``\r\n`` is kept whole), else at the limit."""
    capped: list[tuple[int, int]] = []
    for start, end in spans:
        while end - start > max_chars:
            first = _NON_SPACE.search(text, start, end)
            visible = first.start() if first else start
            limit = start + max_chars  # the piece's trimmed text must end by here
            newline = text.rfind("\n", visible, limit + 1)
            if newline != -1:
                cut = newline + 1
            else:
                through_space = _THROUGH_LAST_SPACE.match(text, visible, limit + 1)
                if through_space is not None:
                    cut = through_space.end()
                    if text[cut - 1] == "\r" and text.startswith("\n", cut):
                        cut += 1  # "\r\n" stays whole; the piece's trimmed text still fits
                else:
                    # No whitespace from the first visible character to the limit, so no "\r\n"
                    # either (nor one before it: the span's start is on that character's line).
                    cut = limit
            piece_end = start + len(text[start:cut].rstrip())
            if piece_end > start:
                capped.append((start, piece_end))
            following = _NON_SPACE.search(text, cut, end)
            if following is None:  # cannot happen: ``end`` follows visible text
                start = end
                break
            line_start = lines.start_of_line_containing(following.start())
            start = line_start if line_start >= cut else following.start()
        if end > start:
            capped.append((start, end))
    return capped


def overlap_start(text: str, previous_start: int, start: int, overlap: int, lines: LineIndex) -> int:
    """Offset ``overlap`` words before ``start`` (not before ``previous_start``), moved back to
    its line start when that stays inside the previous chunk, after its first line, and adds at
    most ``overlap`` words. When it cannot move back (a long line above, or the previous chunk's
    first line), it moves forward to the first line start after it that has a word before
    ``start``, and to ``start`` itself (no overlap) when there is none. It stays at a word inside
    a line only when ``start`` is inside that same line (a long line, as minified code)."""
    window_start = previous_start
    # Only the tail of the previous chunk matters: look at a window large enough for `overlap`
    # words of any reasonable length before scanning the whole chunk.
    window = max(64, overlap * 16)
    while True:
        lo = max(window_start, start - window)
        words = [m.start() for m in _WORD.finditer(text, lo, start)]
        if lo > window_start and words and words[0] == lo and not text[lo - 1].isspace():
            words.pop(0)  # the window began inside a word: not a word start
        if len(words) >= overlap or lo == window_start:
            break
        window *= 4
    if not words:
        return start
    candidate = words[-overlap] if len(words) >= overlap else words[0]
    line_start = lines.start_of_line_containing(candidate)
    if line_start == candidate:
        return candidate
    if line_start > previous_start:
        extra = sum(1 for _ in islice(_WORD.finditer(text, line_start, candidate), overlap + 1))
        if extra <= overlap:
            return line_start
    if line_start == lines.start_of_line_containing(start):
        return candidate  # the chunk starts inside this (long) line: overlap inside it too
    newline = text.find("\n", candidate, start)
    following = _NON_SPACE.search(text, newline + 1, start) if newline != -1 else None
    if following is None:
        return start
    return lines.start_of_line_containing(following.start())


def checked_chunks(text: str, chunks: object) -> list[Chunk]:
    """What a chunker returned for ``text``, checked against the contract every chunk of the index
    keeps (DESIGN.md §5): a list of :class:`Chunk` whose ``content`` is
    ``text[start_char:end_char]`` and whose 1-based, inclusive ``line_start..line_end`` are the
    lines of that content, in text order, with fields of their types (``kind`` one of
    markdown, code, text; ``page`` a page number or None...). ``index`` is renumbered 0, 1, ...
    and ``tokens`` counted again (words). A plugin's output is never stored unchecked: a wrong
    line range would send an agent to the wrong place, a wrong type break every search.

    Raises:
        ValueError: the first way the output breaks the contract (the caller falls back to the
            built-in chunker and reports it).
    """
    if not isinstance(chunks, (list, tuple)):
        raise ValueError(f"the chunker returned {type(chunks).__name__}, not a list of Chunk")
    if not chunks and text.strip():
        raise ValueError("the chunker returned no chunk for a text that is not blank")
    lines: LineIndex | None = None
    out: list[Chunk] = []
    previous_start = -1
    for position, chunk in enumerate(chunks):
        if not isinstance(chunk, Chunk):
            raise ValueError(f"item {position} of the chunker's list is a {type(chunk).__name__}, not a Chunk")
        _check_fields(position, chunk)
        if chunk.start_char < previous_start:
            raise ValueError(f"chunk {position} starts before chunk {position - 1}: chunks come in text order")
        previous_start = chunk.start_char
        if not (0 <= chunk.start_char <= chunk.end_char <= len(text)) or \
                text[chunk.start_char:chunk.end_char] != chunk.content:
            raise ValueError(f"chunk {position}: its content is not the text from start_char {chunk.start_char} "
                             f"to end_char {chunk.end_char}")
        lines = lines or LineIndex(text)
        span = lines.span(chunk.start_char, chunk.end_char)
        if (chunk.line_start, chunk.line_end) != span:
            raise ValueError(f"chunk {position}: lines {chunk.line_start}-{chunk.line_end} given, its content is on "
                             f"lines {span[0]}-{span[1]}")
        tokens = count_words(chunk.content)  # words, whatever the plugin counted
        definitions = tuple(chunk.definitions)
        if chunk.index != position or chunk.tokens != tokens or definitions is not chunk.definitions:
            chunk = replace(chunk, index=position, tokens=tokens, definitions=definitions)
        out.append(chunk)
    return out


_CHUNK_KINDS = ("markdown", "code", "text")


def _check_fields(position: int, chunk: Chunk) -> None:
    """Raise ValueError when a field of ``chunk`` has a type or value no stored chunk may have
    (the store, ranking and JSON output rely on them: a text ``tokens`` broke every search that
    ranked the chunk)."""
    def whole(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    problems = []
    for name in ("start_char", "end_char", "line_start", "line_end"):
        if not whole(getattr(chunk, name)):
            problems.append(f"{name} is {getattr(chunk, name)!r}, not a whole number")
    if not isinstance(chunk.content, str):
        problems.append(f"content is a {type(chunk.content).__name__}, not text")
    if chunk.kind not in _CHUNK_KINDS:
        problems.append(f"kind is {chunk.kind!r}, not one of {', '.join(_CHUNK_KINDS)}")
    for name in ("section", "breadcrumb", "anchor"):
        value = getattr(chunk, name)
        if value is not None and not isinstance(value, str):
            problems.append(f"{name} is a {type(value).__name__}, not text or None")
    if chunk.page is not None and not (whole(chunk.page) and chunk.page >= 1):
        problems.append(f"page is {chunk.page!r}, not a page number or None")
    if isinstance(chunk.definitions, str) or not isinstance(chunk.definitions, (tuple, list)) or \
            not all(isinstance(d, str) for d in chunk.definitions):
        problems.append(f"definitions is {chunk.definitions!r}, not a list of names")
    if problems:
        raise ValueError(f"chunk {position}: " + "; ".join(problems))
