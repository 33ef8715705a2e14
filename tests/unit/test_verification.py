"""The pieces of verified reads: locators, the text of a line range, indexed text rebuilt from
stored chunks, and freshness marks with the stat shortcut."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.application.verification import FreshnessMarker, indexed_lines, line_text, parse_locator
from hermes_workspace.domain.chunking import build_chunks
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import FileRecord, SearchHit


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
    from hermes_workspace.domain.config import WorkspaceConfig
    from hermes_workspace.domain.errors import ConfigError

    assert (WorkspaceConfig().handles.ttl_hours, WorkspaceConfig().handles.max_sets) == (24.0, 200)
    config = WorkspaceConfig.from_dict({"knowledgebase": {"handles": {"ttl_hours": 2, "max_sets": 5}}})
    assert (config.handles.ttl_hours, config.handles.max_sets) == (2.0, 5)
    for bad, message in [({"ttl_hours": 0}, "ttl_hours must be > 0"), ({"max_sets": 0}, "max_sets must be >= 1"),
                         ({"max_set": 3}, "Did you mean knowledgebase.handles.max_sets?")]:
        with pytest.raises(ConfigError) as raised:
            WorkspaceConfig.from_dict({"knowledgebase": {"handles": bad}})
        assert message in raised.value.message + " " + raised.value.hint
