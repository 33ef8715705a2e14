"""The pieces of verified reads: locators, the text of a line range, indexed text rebuilt from
stored chunks, and freshness marks with the stat shortcut."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.memory import InMemoryIndexStore, WhitespaceTokenCounter
from hermes_workspace.application.verification import (
    FreshnessMarker,
    ReadResult,
    _char_boundary,
    _chunks_match,
    _holds,
    fit_read,
    indexed_lines,
    line_text,
    parse_locator,
)
from hermes_workspace.domain.chunking import build_chunks
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError, UsageError
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import FileRecord, SearchHit
from hermes_workspace.domain.packing import largest_that_fits


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/a/b.py:3-9", ("/a/b.py", 3, 9)),
        ("/a/b.py:7", ("/a/b.py", 7, 7)),
        ("/a/odd:name.py:2-2", ("/a/odd:name.py", 2, 2)),
        ("  rel/x.md:1-4 ", ("rel/x.md", 1, 4)),
    ],
)
def test_locators_parse(target: str, expected: tuple[str, int, int]) -> None:
    assert parse_locator(target) == expected


@pytest.mark.parametrize("target", ["/a/b.py", "/a/b.py:", "/a/b.py:x-3", "/a/b.py:0", "/a/b.py:5-2", ":3"])
def test_malformed_locators_are_usage_errors_with_a_hint(target: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_locator(target)
    assert "5e0c17aa:3" in raised.value.hint


@pytest.mark.parametrize(
    ("text", "start", "end", "expected"),
    [
        ("a\nb\nc\n", 2, 3, "b\nc"),
        ("a\nb\nc", 3, 3, "c"),
        ("a\r\nb\r\n", 1, 1, "a\r"),  # lines end at \n only: the \r stays on its line
        ("a\x0cb\nc\u2028d\n", 1, 2, "a\x0cb\nc\u2028d"),
        ("\n\nx\n", 1, 2, "\n"),
    ],
)
def test_line_text(text: str, start: int, end: int, expected: str) -> None:
    assert line_text(text, LineIndex(text), start, end) == expected


TEXT = "alpha one two\nbeta three four\n\n\ngamma five six\ndelta seven\n   \nepsilon\n"


def _chunks(overlap: int = 0):  # type: ignore[no-untyped-def]
    cuts = [TEXT.index("beta"), TEXT.index("gamma"), TEXT.index("epsilon")]
    return build_chunks(TEXT, cuts, kind="text", overlap=overlap)


def test_indexed_lines_inside_a_chunk_and_across_overlapping_chunks() -> None:
    lines = LineIndex(TEXT)
    for overlap in (0, 2):
        chunks = _chunks(overlap)
        assert indexed_lines(chunks, 5, 6) == line_text(TEXT, lines, 5, 6)
        assert indexed_lines(chunks, 1, 1) == "alpha one two"
    # One character between chunks on consecutive lines is the line break: lines 1-2 rebuild whole.
    assert indexed_lines(_chunks(0), 1, 2) == "alpha one two\nbeta three four"
    # Overlap joins chunks 2 and 3, whitespace-only line 7 included.
    assert indexed_lines(_chunks(2), 5, 8) == "gamma five six\ndelta seven\n   \nepsilon"


def test_indexed_lines_outside_the_chunks_are_unknown() -> None:
    chunks = _chunks()
    assert indexed_lines(chunks, 3, 3) is None  # a blank line between chunks
    assert indexed_lines(chunks, 2, 5) is None  # spans a gap
    assert indexed_lines(chunks, 9, 9) is None  # beyond the last chunk
    assert indexed_lines([], 1, 1) is None


def test_a_conversion_holds_a_hit_when_its_lines_start_and_end_with_the_hit_text() -> None:
    """What ``read HANDLE`` of a converted file with unchanged bytes compares (a converter's new
    version may convert the same bytes to other text)."""
    lines = LineIndex(TEXT)
    assert _holds(TEXT, lines, 5, 6, "gamma five six\ndelta seven")
    assert _holds(TEXT, lines, 2, 2, "three four")  # a piece of a long line, ending the line
    assert _holds(TEXT, lines, 2, 2, "three")  # a piece inside the line (minified code)
    assert not _holds(TEXT, lines, 4, 5, "gamma five six")  # the text is a line later than indexed
    assert not _holds(TEXT, lines, 5, 7, "gamma five six")  # ends before the range's last line
    assert not _holds(TEXT, lines, 1, 1, "beta three four")  # other text at those lines
    assert not _holds(TEXT, lines, 8, 9, "epsilon")  # past the end of the text now
    assert _chunks_match(TEXT, _chunks(2)) and _chunks_match(TEXT, [])
    assert not _chunks_match("# Preface\n" + TEXT, _chunks())


def _hit(path: Path) -> SearchHit:
    return SearchHit(path=path, line_start=1, line_end=1, section=None, chunk_index=0, score=1.0, tokens=1,
                     modified="", content="x")


def test_freshness_uses_the_stat_shortcut_and_hashes_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello\n")
    found = os.stat(path)
    digest = hashlib.sha256(b"hello\n").hexdigest()
    store = InMemoryIndexStore()
    record = FileRecord(path, tmp_path, digest, "sig", found.st_size, found.st_mtime_ns, "", "")
    store.replace_file(record, [])
    marker = FreshnessMarker(store, FilesystemSource(max_file_bytes=10**6))
    assert [(h.file_hash, h.stale) for h in marker.mark([_hit(path), _hit(path)])] == [(digest, False)] * 2
    # Same size and mtime but other bytes: trusted, as `index` trusts it (no read).
    path.write_bytes(b"HELLO\n")
    os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns))
    assert marker.mark([_hit(path)])[0].stale is False
    # A new mtime: read and hashed.
    os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns + 10**9))
    assert marker.mark([_hit(path)])[0].stale is True
    path.write_bytes(b"hello\n")
    assert marker.mark([_hit(path)])[0].stale is False
    path.unlink()
    assert marker.mark([_hit(path)])[0].stale is True
    assert marker.mark([_hit(tmp_path / "never-indexed.txt")])[0].stale is True


def test_handle_settings_are_read_and_checked() -> None:
    assert (WorkspaceConfig().handles.ttl_hours, WorkspaceConfig().handles.max_sets) == (24.0, 200)
    config = WorkspaceConfig.from_dict({"knowledgebase": {"handles": {"ttl_hours": 2, "max_sets": 5}}})
    assert (config.handles.ttl_hours, config.handles.max_sets) == (2.0, 5)
    for bad, message in [({"ttl_hours": 0}, "ttl_hours must be > 0"), ({"max_sets": 0}, "max_sets must be >= 1"),
                         ({"max_set": 3}, "Did you mean knowledgebase.handles.max_sets?")]:
        with pytest.raises(ConfigError) as raised:
            WorkspaceConfig.from_dict({"knowledgebase": {"handles": bad}})
        assert message in raised.value.message + " " + raised.value.hint


# -- read budgets (trial: a 166,363-character minified line came back whole) -----------------------


def _result(text: str, start: int = 1, **fields: object) -> ReadResult:
    return ReadResult("verified", Path("/w/a.js"), start, start + text.count("\n"), text, "ab" * 32,
                      "read", **fields)  # type: ignore[arg-type]


def test_largest_that_fits_is_the_boundary_of_a_monotone_test() -> None:
    calls: list[int] = []

    def upto(limit: int):  # type: ignore[no-untyped-def]
        def fits(n: int) -> bool:
            calls.append(n)
            return n <= limit
        return fits

    assert [largest_that_fits(1, 100, upto(k)) for k in (0, 1, 37, 100, 500)] == [None, 1, 37, 100, 100]
    assert largest_that_fits(5, 4, upto(10)) is None
    calls.clear()
    largest_that_fits(1, 1_000_000, upto(123_456))
    assert len(calls) <= 21  # a binary search, not a scan


def test_fit_read_keeps_the_most_leading_whole_lines_that_fit() -> None:
    counter = WhitespaceTokenCounter()
    text = "\n".join(f"w{i} x y z" for i in range(50))  # 4 whitespace tokens a line
    result = _result(text, start=11)
    assert fit_read(result, counter, 10_000) is result
    for budget in (60, 97, 150):
        cut = fit_read(result, counter, budget)
        kept = cut.line_end - 10
        assert cut.text == "\n".join(text.split("\n")[:kept])
        assert (cut.full_line_end, cut.next, cut.line_chars_returned) == (60, f"/w/a.js:{11 + kept}-60", None)
        assert counter.count(cut.serialize(spaced=True)) <= budget
        longer = replace(cut, line_end=cut.line_end + 1, text="\n".join(text.split("\n")[: kept + 1]))
        assert counter.count(longer.serialize(spaced=True)) > budget  # one more line would not fit


def test_fit_read_cuts_a_line_too_long_for_the_budget_between_characters() -> None:
    counter = WhitespaceTokenCounter()
    line = " ".join(f"t{i}" for i in range(5000))
    cut = fit_read(_result(line + "\nnext line"), counter, 300)
    data = cut.to_json()
    assert (cut.line_start, cut.line_end, data["truncated"], data["full_line_end"]) == (1, 1, True, 2)
    assert (data["next"], data["line_chars_total"]) == ("/w/a.js:2-2", len(line))
    assert cut.text == line[: data["line_chars_returned"]]
    assert 250 < counter.count(cut.serialize(spaced=True)) <= 300


def test_a_character_cut_keeps_marks_and_joined_characters_with_their_base() -> None:
    line = "ab" + "e\u0301\u0327" + "x" + "\U0001f469\u200d\U0001f4bb" + "y" + "\u2764\ufe0f" + "z"
    # the cut before each position lands on the start of its grapheme
    starts = {2: 2, 3: 2, 4: 2, 5: 5, 6: 6, 7: 6, 8: 6, 9: 9, 10: 10, 11: 10, 12: 12}
    assert {n: _char_boundary(line, n) for n in starts} == starts
    assert _char_boundary("\u0301\u0301\u0301", 2) == 1  # never below one character


def test_a_response_without_text_larger_than_the_budget_names_the_minimum() -> None:
    stale = ReadResult("stale", Path("/w/a.js"), 1, 9, None, "ab" * 32, "the file changed since it was indexed")
    counter = WhitespaceTokenCounter()
    needed = counter.count(stale.serialize(spaced=True))
    assert fit_read(stale, counter, needed) is stale
    with pytest.raises(UsageError) as raised:
        fit_read(stale, counter, needed - 1)
    assert f"at least {needed} tokens" in raised.value.hint


@pytest.mark.parametrize("value", [255, 1_000_001, "many"])
def test_read_max_tokens_is_validated_like_the_other_injection_keys(value: object) -> None:
    assert WorkspaceConfig.from_dict({}).injection.read_max_tokens == 8000
    assert WorkspaceConfig.from_dict(
        {"knowledgebase": {"injection": {"read_max_tokens": 256}}}).injection.read_max_tokens == 256
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"injection": {"read_max_tokens": value}}})
    assert "knowledgebase.injection.read_max_tokens" in raised.value.message


def test_fit_read_cuts_a_long_line_from_where_the_hit_starts() -> None:
    counter = WhitespaceTokenCounter()
    line = " ".join(f"t{i}" for i in range(5000))
    start = line.index("t4000 ")
    cut = fit_read(_result(line), counter, 300, focus=start)
    assert (cut.line_chars_from, cut.text) == (start, line[start : start + cut.line_chars_returned])
    assert 250 < counter.count(cut.serialize(spaced=True)) <= 300
    tail = fit_read(_result(line), counter, 1200, focus=line.index("t4900 "))
    assert tail.text == line[line.index("t4900 ") :]  # the rest of the line from the hit fits whole
