"""The chunking policy (domain/chunking.py): cut points -> chunks, sections, overlap, packing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_workspace.domain.chunking import (
    POLICY_VERSION,
    Heading,
    align_code_cuts,
    build_chunks,
    code_definitions,
    count_words,
    markdown_headings,
    markdown_sections,
    merge_pieces,
    section_finder,
)
from hermes_workspace.domain.lines import LineIndex
from tests.chunk_checks import (
    INVARIANT_TEXTS,
    LINES_142,
    assert_chunk_invariants,
    assert_chunks_start_lines,
    assert_core_cap,
    minified_js,
)


def test_policy_version_is_a_positive_int() -> None:
    assert isinstance(POLICY_VERSION, int) and POLICY_VERSION >= 2


# -- words ---------------------------------------------------------------------------------------


def test_count_words_splits_on_every_whitespace_character() -> None:
    assert count_words("a\nb\tc  d\x0ce\u2028f\u3000g\r\nh") == 8
    assert count_words("") == 0
    assert count_words(" \n\t") == 0
    assert count_words("minified(a,b){return a+b}") == 2


# -- build_chunks: lines, trimming, snapping -------------------------------------------------------


def test_142_line_file_without_cuts_is_one_chunk_ending_at_line_142() -> None:
    chunks = build_chunks(LINES_142, [], kind="text", overlap=0)
    assert len(chunks) == 1
    assert (chunks[0].line_start, chunks[0].line_end) == (1, 142)
    assert chunks[0].content == LINES_142[:-1]
    assert (chunks[0].start_char, chunks[0].end_char) == (0, len(LINES_142) - 1)
    assert chunks[0].tokens == 142 * 5
    assert_chunk_invariants(LINES_142, chunks)


def test_142_lines_without_final_newline_also_end_at_line_142() -> None:
    text = LINES_142[:-1]
    chunks = build_chunks(text, [], kind="text", overlap=0)
    assert (chunks[0].line_start, chunks[0].line_end, chunks[0].end_char) == (1, 142, len(text))


@pytest.mark.parametrize(
    ("cut", "expected"),
    [
        (12, [(0, 9, "aaaa bbbb"), (10, 29, "cccc dddd\neeee ffff")]),  # nearer the line start before
        (17, [(0, 19, "aaaa bbbb\ncccc dddd"), (20, 29, "eeee ffff")]),  # nearer the next line start
        (20, [(0, 19, "aaaa bbbb\ncccc dddd"), (20, 29, "eeee ffff")]),  # already at a line start
    ],
)
def test_cuts_snap_to_the_nearest_line_start(cut: int, expected: list[tuple[int, int, str]]) -> None:
    text = "aaaa bbbb\ncccc dddd\neeee ffff\n"
    chunks = build_chunks(text, [cut], kind="text", overlap=0)
    assert [(c.start_char, c.end_char, c.content) for c in chunks] == expected
    assert_chunk_invariants(text, chunks)


def test_cut_inside_a_line_without_line_start_nearby_stays_put() -> None:
    text = "x" * 50 + " " + "y" * 50  # one line, as minified code
    chunks = build_chunks(text, [51], kind="code", overlap=0)
    assert [(c.start_char, c.end_char, c.line_start, c.line_end) for c in chunks] == [(0, 50, 1, 1), (51, 101, 1, 1)]


def test_crlf_text_chunks_never_end_with_a_carriage_return() -> None:
    text = "one two\r\nthree four\r\n\r\nfive six\r\n"
    chunks = build_chunks(text, [text.index("five")], kind="text", overlap=0)
    assert [(c.content, c.line_start, c.line_end) for c in chunks] == [
        ("one two\r\nthree four", 1, 2),
        ("five six", 4, 4),
    ]


def test_form_feed_and_line_separator_do_not_start_lines() -> None:
    text = "a\x0cb\u2028c\nd\x1ce\n"
    chunks = build_chunks(text, [text.index("d")], kind="text", overlap=0)
    assert [(c.content, c.line_start, c.line_end) for c in chunks] == [("a\x0cb\u2028c", 1, 1), ("d\x1ce", 2, 2)]


def test_blank_leading_lines_are_trimmed_but_indentation_kept() -> None:
    text = "first\n\n\n    indented second\n   \n"
    chunks = build_chunks(text, [6], kind="text", overlap=0)
    assert [(c.content, c.start_char, c.line_start) for c in chunks] == [
        ("first", 0, 1),
        ("    indented second", 8, 4),
    ]


def test_with_max_chars_cuts_crowded_into_a_short_line_are_dropped() -> None:
    text = "aaaa bbbb cccc dddd\neeee ffff\n"
    # The cuts at 5 and 10 have no line start between their neighbours: kept without max_chars,
    # dropped when the line is not longer than max_chars; the one at 15 snaps to line 2.
    spans = [(c.start_char, c.end_char) for c in build_chunks(text, [5, 10, 15], kind="text", overlap=0)]
    assert spans == [(0, 4), (5, 9), (10, 19), (20, 29)]
    capped = build_chunks(text, [5, 10, 15], kind="text", overlap=0, max_chars=19)
    assert [(c.start_char, c.end_char) for c in capped] == [(0, 19), (20, 29)]
    long_line = build_chunks(text, [5, 10, 15], kind="text", overlap=0, max_chars=18)  # line 1 is long
    assert [(c.start_char, c.end_char) for c in long_line] == [(0, 4), (5, 9), (10, 19), (20, 29)]


def test_max_chars_splits_a_text_without_whitespace_at_the_limit() -> None:
    text = "x" * 10_000
    chunks = build_chunks(text, [], kind="text", overlap=80, max_chars=4096)
    assert [(c.start_char, c.end_char, c.line_start) for c in chunks] == [
        (0, 4096, 1),
        (4096, 8192, 1),
        (8192, 10_000, 1),
    ]
    assert_chunk_invariants(text, chunks)


def test_max_chars_splits_at_the_last_line_start_within_the_limit() -> None:
    text = "".join(f"line {n:03d} " + "y" * 40 + "\n" for n in range(100))  # 50 characters a line
    chunks = build_chunks(text, [], kind="text", overlap=0, max_chars=1000)
    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 20), (21, 40), (41, 60), (61, 80), (81, 100)]
    assert all(len(c.content) <= 1000 for c in chunks)
    assert_chunks_start_lines(text, chunks, long_line=0)
    assert_chunk_invariants(text, chunks)


def test_max_chars_splits_a_long_line_after_its_last_whitespace() -> None:
    text = "head\n" + "abcdefghi " * 300 + "\ntail\n"
    chunks = build_chunks(text, [], kind="text", overlap=3, max_chars=1000)
    assert_chunk_invariants(text, chunks)
    assert_core_cap(text, chunks, 1000)
    assert chunks[0].content == "head"  # the long line does not fit after it: split at its start
    for chunk in chunks[1:]:
        assert text[chunk.start_char - 1] in " \n"  # a word start, never inside a word
    assert_chunks_start_lines(text, chunks, long_line=1000)


def test_max_chars_never_splits_crlf() -> None:
    text = "aaaaa aaaa\r\n" + "b" * 20  # the last whitespace within 10 characters is the "\r"
    chunks = build_chunks(text, [], kind="text", overlap=0, max_chars=10)
    assert [(c.content, c.line_start) for c in chunks] == [("aaaaa aaaa", 1), ("b" * 10, 2), ("b" * 10, 2)]
    assert_chunk_invariants(text, chunks)


def test_max_chars_caps_every_chunk_before_overlap() -> None:
    text = minified_js(50_000) + "\n" + LINES_142 + "z" * 30_000 + "\n"
    for overlap in (0, 10):
        chunks = build_chunks(text, [], kind="code", overlap=overlap, max_chars=2048)
        assert_chunk_invariants(text, chunks)
        assert_core_cap(text, chunks, 2048)
        assert_chunks_start_lines(text, chunks, long_line=2048)
        if overlap == 0:
            assert max(len(c.content) for c in chunks) <= 2048


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        build_chunks("text", [], kind="text", overlap=0, max_chars=0)


def test_whitespace_only_text_gives_no_chunks() -> None:
    assert build_chunks(" \n\t\r\n\x0c\u2028", [2, 4], kind="text", overlap=5) == []
    assert build_chunks("", [], kind="text", overlap=0) == []


@pytest.mark.parametrize("name", sorted(INVARIANT_TEXTS))
@pytest.mark.parametrize("overlap", [0, 3, 40])
def test_invariants_hold_for_cuts_everywhere(name: str, overlap: int) -> None:
    text = INVARIANT_TEXTS[name]
    for step in (7, 97, 1001):
        chunks = build_chunks(text, range(step, len(text), step), kind="text", overlap=overlap)
        assert len(chunks) > (1 if len(text) > 2 * step else 0)
        assert_chunk_invariants(text, chunks)


def test_bom_stays_in_the_first_chunk_and_offsets_count_it() -> None:
    text = "\ufeff# Title\n\nbody text\n"
    chunks = build_chunks(text, [text.index("body")], kind="markdown", overlap=0)
    assert [(c.content, c.start_char, c.section) for c in chunks] == [
        ("\ufeff# Title", 0, "# Title"),
        ("body text", 10, "# Title"),
    ]


# -- overlap ---------------------------------------------------------------------------------------


def _five_word_lines(count: int) -> str:
    return "".join(f"l{n}a l{n}b l{n}c l{n}d l{n}e\n" for n in range(count))


def test_overlap_reaches_back_and_snaps_to_the_line_start() -> None:
    text = _five_word_lines(20)
    chunks = build_chunks(text, [text.index("l10a")], kind="text", overlap=7)
    # 7 words back is "l8c"; its line starts 2 words earlier, which is within the limit.
    assert chunks[1].start_char == text.index("l8a")
    assert (chunks[1].line_start, chunks[1].line_end, chunks[1].tokens) == (9, 20, 60)
    assert chunks[1].section is None
    assert_chunk_invariants(text, chunks)


def test_overlap_zero_keeps_chunks_disjoint() -> None:
    text = _five_word_lines(20)
    chunks = build_chunks(text, [text.index("l10a")], kind="text", overlap=0)
    assert chunks[1].start_char == text.index("l10a")
    assert chunks[0].end_char < chunks[1].start_char


def test_overlap_inside_a_long_line_starts_at_a_word_and_does_not_swallow_the_line() -> None:
    words = [f"{n:02d}" + "x" * 38 for n in range(60)]
    line = " ".join(words)
    chunks = build_chunks(line, [line.index(words[30])], kind="text", overlap=2)
    assert chunks[1].start_char == line.index(words[28])  # a word start, not the line start
    assert chunks[1].tokens == 32


def test_overlap_does_not_snap_back_over_a_long_line_nor_start_inside_it() -> None:
    long_line = " ".join(f"long{n}" for n in range(100))
    text = f"short line\n{long_line}\nnext line here\n"
    chunks = build_chunks(text, [text.index("next")], kind="text", overlap=5)
    # Snapping to the long line's start would repeat 100 words instead of 5, and the chunk starts
    # at a line start: no line start between "long95" and the chunk's own start, so no overlap.
    # (POLICY_VERSION 2 started this chunk at "long95", inside line 2.)
    assert chunks[1].start_char == text.index("next")
    assert (chunks[1].line_start, chunks[1].tokens) == (3, 3)


def test_overlap_that_cannot_snap_back_moves_forward_to_the_next_line_start() -> None:
    text = " ".join(f"a{n}" for n in range(30)) + "\nb0 b1\n\n   \nc0 c1 c2\n" + _five_word_lines(10)
    chunks = build_chunks(text, [text.index("l0a")], kind="text", overlap=7)
    # 7 words back is "a26", 26 words into line 1 (more than 7): the overlap starts at the next
    # line with a word instead ("b0", 5 words), skipping blank lines.
    assert chunks[1].start_char == text.index("b0")
    assert (chunks[1].line_start, chunks[1].tokens) == (2, 55)
    assert_chunks_start_lines(text, chunks, long_line=0)
    assert_chunk_invariants(text, chunks)


def test_http_package_regression_overlap_does_not_start_inside_the_first_line() -> None:
    # http/__init__.py: chunk 0 is line 1, so the overlap of chunk 1 could only snap back to the
    # previous chunk's first line; it started at character 35 of line 1 under POLICY_VERSION 2.
    text = "from enum import IntEnum, StrEnum, _simple_enum\n\n__all__ = ['HTTPStatus']\n" + "x = 1\n" * 40
    chunks = build_chunks(text, [text.index("__all__")], kind="code", overlap=80)
    assert [c.start_char for c in chunks] == [0, text.index("__all__")]


def test_overlap_inside_a_long_line_stays_inside_it_when_the_chunk_starts_there() -> None:
    line = " ".join(f"w{n}" for n in range(400))
    text = "first line\n" + line + "\n"
    cuts = [text.index("w100 "), text.index("w200 ")]  # the first snaps to line 2's start
    chunks = build_chunks(text, cuts, kind="text", overlap=5, max_chars=1000)
    assert [c.start_char for c in chunks[:2]] == [0, text.index("w0 ")]
    assert chunks[2].start_char == text.index("w195 ")  # the cut is inside the line: so is the overlap
    assert_chunk_invariants(text, chunks)
    assert_chunks_start_lines(text, chunks, long_line=1000)


def test_overlap_never_repeats_the_whole_previous_chunk() -> None:
    text = "## Small\n\none two three four five six\n\n## Next\n\n" + " ".join(f"w{n}" for n in range(100)) + "\n"
    chunks = build_chunks(text, [text.index("## Next")], kind="markdown", overlap=80)
    # The previous chunk has 8 words: 4 (half) are taken, "three" to "six", then the start of
    # that line ("one two", 2 more words), which is not the previous chunk's first line.
    assert chunks[1].start_char == text.index("one")
    assert chunks[1].section == "## Next"
    one_line = "## Small one two three four five six\n## Next\n" + "x " * 50
    chunks = build_chunks(one_line, [one_line.index("## Next")], kind="markdown", overlap=80)
    # 4 words would start at "three", inside the previous chunk's only line, which it may not
    # snap back to: no overlap (POLICY_VERSION 2 started at "three").
    assert chunks[1].start_char == one_line.index("## Next")


def test_overlap_is_not_applied_to_the_first_chunk() -> None:
    text = _five_word_lines(4)
    chunks = build_chunks(text, [text.index("l2a")], kind="text", overlap=3)
    assert chunks[0].start_char == 0


# -- markdown headings -------------------------------------------------------------------------------


def test_atx_and_setext_headings_ignoring_fences_and_front_matter() -> None:
    text = (
        "---\ntitle: Not a heading\n---\n"  # front matter; its closing --- is no setext underline
        "# Guide\n\n"
        "Setext One\n==========\n\n"
        "Setext Two\n----------\n\n"
        "```bash\n# not a heading\n```python\n# still code\n```\n\n"
        "~~~~\n## also code\n~~~~\n\n"
        "## C#\n\n"
        "####### seven hashes\n\n"
        "   ### Indented three ###\n\n"
        "    # four spaces: code\n\n"
        "- item\n---\n\n"
        "#hashtag\n"
    )
    headings = markdown_headings(text)
    assert [(h.level, h.text) for h in headings] == [
        (1, "# Guide"),
        (1, "# Setext One"),
        (2, "## Setext Two"),
        (2, "## C#"),
        (3, "### Indented three"),
    ]
    assert headings[1].offset == text.index("Setext One")
    assert markdown_sections(text) == [h.offset for h in headings]


def test_heading_at_offset_zero_is_not_a_cut_and_bom_is_ignored() -> None:
    text = "\ufeff# Title\n\ntext\n\n## Part\n"
    assert markdown_headings(text) == [Heading(0, 1, "# Title"), Heading(text.index("## Part"), 2, "## Part")]
    assert markdown_sections(text) == [text.index("## Part")]


def test_long_headings_are_cut() -> None:
    headings = markdown_headings("# " + "x" * 300 + "\n")
    assert len(headings[0].text) == 200 and headings[0].text.endswith("…")


def test_markdown_section_is_the_heading_above_or_the_first_heading_below() -> None:
    text = "intro text\n\n# Top\n\nbody\n\n## Rollback Procedures\n\nsteps\n"
    section = section_finder(text, "markdown")
    assert section(0) == "# Top"  # before any heading: the first one
    assert section(text.index("body")) == "# Top"
    assert section(text.index("## Rollback")) == "## Rollback Procedures"
    assert section(text.index("steps")) == "## Rollback Procedures"


# -- merge_pieces --------------------------------------------------------------------------------------


def test_merge_pieces_packs_sections_and_splits_the_large_one() -> None:
    text = "## A\n" + "a " * 10 + "\n## B\n" + "b " * 10 + "\n## C\n" + "c " * 30 + "\n## D\n" + "d " * 5 + "\n"
    b, c, d = (text.index(f"## {x}") for x in "BCD")
    calls: list[tuple[int, int]] = []

    def split_large(start: int, end: int) -> list[int]:
        calls.append((start, end))
        return [start + (end - start) // 2]

    assert markdown_sections(text) == [b, c, d]
    assert merge_pieces(text, [b, c, d], 25, split_large) == [c, c + (d - c) // 2, d]
    assert calls == [(c, d)]
    assert merge_pieces(text, [b, c, d], 100, split_large) == []


# -- code definitions and sections ----------------------------------------------------------------------


def test_code_definitions_need_a_name_after_the_keyword() -> None:
    text = (
        "def build(x):\n"
        "    type = 1\n"
        "    record = fetch()\n"
        "    module.exports = 2\n"
        "class Foo(Base):\n"
        "export default async function* gen() {}\n"
        "func (r *Repo) Save() error {\n"
        "impl<T> Display for W<T> {\n"
        "pub(crate) fn run() {\n"
        "create table users (\n"
        "type(x)\n"
        "data class Point(val x: Int)\n"
    )
    assert [line for _, line in code_definitions(text)] == [
        "def build(x):",
        "class Foo(Base):",
        "export default async function* gen() {}",
        "func (r *Repo) Save() error {",
        "impl<T> Display for W<T> {",
        "pub(crate) fn run() {",
        "create table users (",
        "data class Point(val x: Int)",
    ]


PYTHON = '''import os

def outer(a,
          b):
    x = 1
    # a comment at column 0 does not end the function
# like this one
    return x

CONSTANT = 1

class Release:
    """Doc."""

    def publish(self):
        pass

    @property
    def version(self):
        return 1

if __name__ == "__main__":
    outer(1, 2)
'''


@pytest.mark.parametrize(
    ("needle", "section"),
    [
        ("import os", None),
        ("def outer", "def outer(a,"),
        ("    x = 1", "def outer(a,"),
        ("    return x", "def outer(a,"),
        ("CONSTANT", None),
        ("class Release", "class Release:"),
        ("    def publish", "def publish(self):"),
        ("        pass", "def publish(self):"),
        ("    @property", "def version(self):"),
        ("if __name__", None),
        ("    outer(1, 2)", None),
    ],
)
def test_code_section_is_the_innermost_enclosing_definition(needle: str, section: str | None) -> None:
    assert section_finder(PYTHON, "code")(PYTHON.index(needle)) == section


def test_code_section_in_brace_languages_ends_at_the_closing_brace() -> None:
    text = "package main\n\nfunc main() {\n\tx := 1\n}\n\nvar y = 2\n"
    section = section_finder(text, "code")
    assert section(text.index("\tx")) == "func main() {"
    assert section(text.index("var y")) is None


def test_text_has_no_sections() -> None:
    assert section_finder("def f():\n  pass\n", "text")(0) is None


# -- align_code_cuts --------------------------------------------------------------------------------------


def test_align_code_cuts_moves_cuts_to_definition_headers_comments_and_decorators() -> None:
    text = (
        "import os\n"
        "\n"
        "# Rollback undoes a deploy.\n"
        "def rollback(target):\n"
        "    a = 1\n"
        "    b = 2\n"
        "\n"
        "class Release:\n"
        '    """A release."""\n'
        "\n"
        "    @property\n"
        "    def version(self):\n"
        "        return 1\n"
    )
    body_of_rollback = text.index("    a = 1")
    decorator = text.index("@property")
    body_of_version = text.index("        return 1")
    cuts = align_code_cuts(text, [body_of_rollback, decorator, body_of_version], max_words=8)
    # The cut in rollback's body moves to its comment; the one at @property moves to the class
    # (whose header alone would be a piece of nothing but headers); the one in version's body
    # would leave a lone "@property def version" piece, so it is dropped.
    assert cuts == [text.index("# Rollback"), text.index("class Release")]


def test_align_code_cuts_respects_the_word_budget() -> None:
    text = "def f():\n    '''" + "doc " * 20 + "'''\n    x = 1\n"
    cut = text.index("    x = 1")
    assert align_code_cuts(text, [cut], max_words=5) == [cut]
    assert align_code_cuts(text, [cut], max_words=30) == []  # moved to 0: no cut left


def test_align_code_cuts_leaves_mid_line_cuts_alone() -> None:
    text = "var a=1;function f(){return 2};function g(){return 3}"
    cut = text.index("function g")
    assert align_code_cuts(text, [cut], max_words=10) == [cut]


# -- property: any cuts, any overlap --------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            ["a", "bb ", " ", "\n", "\r\n", "\t", "\x0c", "\u2028", "é", "日", "😀", "# ", "```\n", "\ufeff"]
        ),
        max_size=60,
    ).map("".join),
    cuts=st.lists(st.integers(min_value=-3, max_value=130), max_size=12),
    overlap=st.integers(min_value=0, max_value=6),
    kind=st.sampled_from(["text", "markdown", "code"]),
)
def test_build_chunks_invariants_for_any_cuts(text: str, cuts: list[int], overlap: int, kind: str) -> None:
    chunks = build_chunks(text, cuts, kind=kind, overlap=overlap, lines=LineIndex(text))  # type: ignore[arg-type]
    assert_chunk_invariants(text, chunks)
    assert all(c.kind == kind for c in chunks)


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["a", "bb ", "cccc", " ", "\n", "\r\n", "\t", "\x0c", "\u2028", "é", "😀", "\ufeff"]),
        max_size=80,
    ).map("".join),
    cuts=st.lists(st.integers(min_value=-3, max_value=200), max_size=15),
    overlap=st.integers(min_value=0, max_value=6),
    max_chars=st.integers(min_value=1, max_value=30),
)
def test_with_max_chars_chunks_start_lines_and_are_capped_for_any_cuts(
    text: str, cuts: list[int], overlap: int, max_chars: int
) -> None:
    chunks = build_chunks(text, cuts, kind="text", overlap=overlap, max_chars=max_chars)
    assert_chunk_invariants(text, chunks)
    assert_chunks_start_lines(text, chunks, long_line=max_chars)
    assert_core_cap(text, chunks, max_chars)
    if overlap == 0:
        assert all(len(c.content) <= max_chars for c in chunks)


def test_align_code_cuts_brace_headers_join_their_body_and_lone_closers_stay_behind() -> None:
    text = "function a() {\n  x();\n}\nfunction b() {\n  y();\n  z();\n}\n"
    brace_of_b = text.index("{\n  y")
    closing = text.rindex("}")
    assert align_code_cuts(text, [brace_of_b, closing], max_words=5) == [text.index("function b")]


RST = """\
=========
Reference
=========

Intro text.

Settings
========

ALLOWED_HOSTS
-------------

A list of strings.

Not a heading
--

.. code-block:: python

    x = 1
"""


def test_underlined_headings_give_text_sections() -> None:
    from hermes_workspace.domain.chunking import underlined_headings

    headings = underlined_headings(RST)
    assert [(h.text, h.level) for h in headings] == [("Reference", 1), ("Settings", 2), ("ALLOWED_HOSTS", 3)]
    assert [RST[h.offset:].split("\n")[0] for h in headings] == ["Reference", "Settings", "ALLOWED_HOSTS"]
    section = section_finder(RST, "text")
    assert section(RST.index("A list of strings")) == "ALLOWED_HOSTS"
    assert section(RST.index("Intro text")) == "Reference"
    assert section_finder("plain words\nno headings\n", "text")(0) is None
