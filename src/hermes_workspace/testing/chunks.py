"""Checks and sample texts for chunker tests: the invariants every chunk must hold (DESIGN.md §5),
computed without the code under test. Used by :class:`~hermes_workspace.testing.chunker.ChunkerContract`
and by our own chunker tests."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_workspace.domain.model import Chunk


def assert_chunk_invariants(text: str, chunks: Sequence[Chunk]) -> None:
    """DESIGN.md §5 on every chunk of ``text``, computed without the code under test:

    - ``index`` runs 0..n-1 and chunks are in file order (starts and ends strictly increase);
    - ``text[start_char:end_char] == content``, and ``content`` is not blank;
    - ``line_start``/``line_end`` (1-based, ``\\n`` only) are the lines of the content's first and
      last characters, and those lines of the file hold the content;
    - ``tokens`` is the content's word count (``str.split()``);
    - nothing but whitespace of ``text`` is left outside every chunk.
    """
    file_lines = text.split("\n")
    previous: Chunk | None = None
    for i, chunk in enumerate(chunks):
        where = f"chunk {i} ({chunk.start_char}:{chunk.end_char})"
        assert chunk.index == i, where
        assert 0 <= chunk.start_char < chunk.end_char <= len(text), where
        assert text[chunk.start_char : chunk.end_char] == chunk.content, where
        assert chunk.content.strip(), where
        assert chunk.line_start == text.count("\n", 0, chunk.start_char) + 1, where
        assert chunk.line_end == text.count("\n", 0, chunk.end_char - 1) + 1, where
        held = "\n".join(file_lines[chunk.line_start - 1 : chunk.line_end])
        first_line_start = sum(len(line) + 1 for line in file_lines[: chunk.line_start - 1])
        position = chunk.start_char - first_line_start
        assert 0 <= position <= len(file_lines[chunk.line_start - 1]), where
        assert held[position : position + len(chunk.content)] == chunk.content, where
        assert position + len(chunk.content) > len(held) - len(file_lines[chunk.line_end - 1]), where
        assert chunk.tokens == len(chunk.content.split()), where
        if previous is not None:
            assert chunk.start_char > previous.start_char, where
            assert chunk.end_char > previous.end_char, where
            assert not text[previous.end_char : chunk.start_char].strip(), f"text lost before {where}"
        else:
            assert not text[: chunk.start_char].strip(), f"text lost before {where}"
        previous = chunk
    tail = text[previous.end_char :] if previous is not None else text
    assert not tail.strip(), "text lost after the last chunk"


def line_start_violations(text: str, chunks: Sequence[Chunk], long_line: int) -> list[str]:
    """Chunks that start inside a line (``start_char`` neither 0 nor just after a ``\n``) although
    that line is at most ``long_line`` characters long (``\n`` excluded), described for an
    assertion message. The policy's guarantee (domain/chunking.py) with ``max_chars``: every chunk
    starts at a line start unless its line is longer than ``max_chars``, which chunkers set to
    ``chunk_size * MAX_CHARS_PER_WORD``."""
    found: list[str] = []
    for chunk in chunks:
        start = chunk.start_char
        if start == 0 or text[start - 1] == "\n":
            continue
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        length = (len(text) if line_end == -1 else line_end) - line_start
        if length <= long_line:
            found.append(
                f"chunk {chunk.index} starts at column {start - line_start + 1} of line {chunk.line_start}"
                f" ({length} characters)"
            )
    return found


def assert_chunks_start_lines(text: str, chunks: Sequence[Chunk], long_line: int) -> None:
    """Every chunk starts at a line start unless its line is longer than ``long_line`` characters
    (see :func:`line_start_violations`)."""
    violations = line_start_violations(text, chunks, long_line)
    assert not violations, violations[:5]


def assert_core_cap(text: str, chunks: Sequence[Chunk], max_chars: int) -> None:
    """No chunk's own text (the part after its predecessor's end, i.e. without overlap) holds more
    than ``max_chars`` characters from its first visible character to its end. (The policy caps
    the own text from its start, which may lie up to a line's indentation before that character;
    with ``overlap=0`` check ``len(content)`` directly.)"""
    previous_end = 0
    for chunk in chunks:
        own = text[max(chunk.start_char, previous_end) : chunk.end_char].lstrip()
        assert len(own) <= max_chars, f"chunk {chunk.index}: {len(own)} characters > {max_chars}"
        previous_end = chunk.end_char


def _paragraphs(count: int, words: int, *, newline: str = "\n", prefix: str = "word") -> str:
    return (newline * 2).join(" ".join(f"{prefix}{p}x{w}" for w in range(words)) + "." for p in range(count))


def minified_js(size: int = 200_000) -> str:
    """One line of minified JavaScript of about ``size`` characters, no final newline."""
    unit = "function f{0}(a,b){{var c=a+b;if(c>{0}){{return c*2}}else{{return g{0}(c,'x{0}')}}}};"
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        part = unit.format(i)
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


LINES_142 = "".join(f"line {n} of the file\n" for n in range(1, 143))
"""142 lines, each ending in ``\\n``: a single chunk of it ends at line 142."""

INVARIANT_TEXTS: dict[str, str] = {
    "crlf": _paragraphs(12, 30, newline="\r\n"),
    "no_trailing_newline": _paragraphs(10, 25),
    "trailing_newline": _paragraphs(10, 25) + "\n",
    "blank_lines_around": "\n\n\n  " + _paragraphs(6, 40) + "\n\n\n\n",
    "form_feed_and_separators": "\n".join(
        f"line {n} a\x0cb \u2028 c\x1cd\x85e \u2029 f" + " pad" * (n % 7) for n in range(120)
    ),
    "bom": "\ufeff" + _paragraphs(8, 30),
    "non_ascii": "\n\n".join(
        f"Café naïve résumé {n} 日本語のテキスト 😀🎉 emoji ünïcödé " + "mot " * 30 for n in range(15)
    ),
    "lines_142": LINES_142,
    "one_long_line": " ".join(f"w{n}" for n in range(3000)),
}
"""Texts every chunker must chunk while keeping :func:`assert_chunk_invariants`."""
