"""LineIndex: 1-based line numbers counted by "\\n" only (DESIGN.md §5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_workspace.domain.lines import LineIndex


def test_line_of_counts_newlines_before_the_offset() -> None:
    text = "ab\ncd\n\nef"
    index = LineIndex(text)
    assert [index.line_of(i) for i in range(len(text) + 1)] == [1, 1, 1, 2, 2, 2, 3, 4, 4, 4]


def test_crlf_is_one_break_and_the_carriage_return_stays_on_its_line() -> None:
    index = LineIndex("a\r\nb\r\n")
    assert index.line_of(1) == 1  # "\r"
    assert index.line_of(2) == 1  # "\n"
    assert index.line_of(3) == 2
    assert index.line_count == 2


@pytest.mark.parametrize("separator", ["\x0c", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e", "\x85", "\x0b", "\r"])
def test_characters_that_splitlines_breaks_on_are_not_line_breaks(separator: str) -> None:
    text = f"one{separator}two\nthree"
    index = LineIndex(text)
    assert len(text.splitlines()) == 3  # what str.splitlines() would wrongly report
    assert index.line_count == 2
    assert index.line_of(text.index("two")) == 1
    assert index.line_of(text.index("three")) == 2


@pytest.mark.parametrize(
    ("text", "count"),
    [("", 0), ("a", 1), ("a\n", 1), ("a\n\n", 2), ("\n", 1), ("a\nb", 2), ("a\r\n", 1), ("\ufeffa\nb\n", 2)],
)
def test_line_count(text: str, count: int) -> None:
    assert LineIndex(text).line_count == count


def test_142_line_file_ending_in_newline_has_142_lines() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 143))
    index = LineIndex(text)
    assert index.line_count == 142
    assert index.span(0, len(text)) == (1, 142)  # the final "\n" belongs to line 142
    assert index.span(0, len(text) - 1) == (1, 142)
    assert index.line_start_offset(142) == text.index("line 142")


def test_span_is_the_lines_of_the_first_and_last_characters() -> None:
    text = "alpha\nbeta\ngamma\n"
    index = LineIndex(text)
    assert index.span(text.index("beta"), text.index("beta") + 4) == (2, 2)
    assert index.span(text.index("beta"), text.index("beta") + 5) == (2, 2)  # up to its "\n"
    assert index.span(text.index("beta"), text.index("gamma") + 1) == (2, 3)
    assert index.span(3, 3) == (1, 1)


def test_line_start_offsets() -> None:
    text = "ab\ncde\n\nf"
    index = LineIndex(text)
    assert [index.line_start_offset(n) for n in range(1, 5)] == [0, 3, 7, 8]
    assert index.line_start_offset(0) == 0
    assert [index.start_of_line_containing(i) for i in range(len(text) + 1)] == [0, 0, 0, 3, 3, 3, 3, 7, 8, 8]


@given(st.lists(st.sampled_from(["a", "é", "😀", " ", "\n", "\r", "\r\n", "\x0c", "\u2028", "\ufeff"])).map("".join))
def test_line_of_agrees_with_counting_newlines(text: str) -> None:
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        assert index.line_of(offset) == text.count("\n", 0, offset) + 1
        start = index.start_of_line_containing(offset)
        assert start == text.rfind("\n", 0, offset) + 1
    expected = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    assert index.line_count == expected
