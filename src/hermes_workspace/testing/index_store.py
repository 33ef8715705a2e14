"""The IndexStore contract as a reusable pytest class: subclass :class:`IndexStoreContract` in a
test module (name the subclass ``Test...``) and override the ``store`` fixture to yield a new,
empty store (closed by you after the ``yield``).

It covers :class:`~hermes_workspace.domain.ports.IndexStore`: records and chunks round-trip,
replace/touch/delete, search (hit fields, path prefix, globs of
:mod:`hermes_workspace.domain.globs`, filters before the limit, best first, the query language of
:mod:`hermes_workspace.domain.query`, Arabic spelling variants, stopwords), status, batches
(commit, rollback of a failing write alone or of the whole batch, nesting), the catalog (list
pages, tombstones, the last run, per-root counts, integrity checks). Words searched are plain, unstemmed words.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_workspace.domain.catalog import Tombstone
from hermes_workspace.domain.errors import StoreError, UsageError
from hermes_workspace.domain.model import RootCounts
from hermes_workspace.domain.ports import IndexStore
from hermes_workspace.domain.query import parse_query
from hermes_workspace.testing.files import make_file


def paths(hits) -> list[str]:
    return [str(h.path) for h in hits]


def search(store: IndexStore, text: str, **kwargs) -> list:
    return store.search(parse_query(text), **kwargs)


GLOB_TREE = (
    "/ws/docs/x.md",
    "/ws/docs/a/b.md",
    "/ws/docs/a/b/c.md",
    "/ws/other/docs/z.md",
    "/ws/mydocs/y.md",
    "/ws/notes/r.rst",
    "/ws/notes/t.txt",
    "/ws/notes/test_one.py",
    "/ws/notes/one_test.py",
)


def names(store: IndexStore) -> list[str]:
    return sorted(r.path.name for r in store.file_records())


def hits(store: IndexStore, text: str) -> list[tuple[str, int, str]]:
    return [(h.path.name, h.chunk_index, h.content) for h in store.search(parse_query(text), limit=50)]


FILES = [
    "/ws/a.md",
    "/ws/docs/b.md",
    "/ws/docs/deep/c.md",
    "/ws/docs/z.md",
    "/ws/docs0.md",  # sorts after "/ws/docs/" but is not under it
    "/ws/docsx/d.md",  # shares the prefix "docs" but is another folder
]


def listed(store: IndexStore, path: str | None, **kwargs: object) -> tuple[list[str], int]:
    records, total = store.list_files(None if path is None else Path(path), **kwargs)  # type: ignore[arg-type]
    return [str(r.path) for r in records], total


class IndexStoreContract:
    """The IndexStore contract. Override the ``store`` fixture::

        class TestMyStore(IndexStoreContract):
            @pytest.fixture
            def store(self, tmp_path):
                s = MyStore(tmp_path / "index")
                yield s
                s.close()
    """

    checks_chunk_indexes: bool = False
    """True for a store that refuses two chunks with the same ``index`` in one file (a
    ``StoreError``, the rest of the batch kept)."""

    @pytest.fixture
    def store(self) -> Iterator[IndexStore]:
        """Override: yield a new, empty store."""
        raise NotImplementedError("override the store fixture in your IndexStoreContract subclass")

    @pytest.fixture
    def filled(self, store: IndexStore) -> IndexStore:
        """``store`` holding the files of :data:`FILES` (two chunks each), for the catalog tests."""
        for path in reversed(FILES):
            record, chunks = make_file(path, ["alpha one", "beta two"])
            store.replace_file(record, chunks)
        return store

    def test_is_an_index_store(self, store: IndexStore) -> None:
        assert isinstance(store, IndexStore)

    def test_replace_then_get_file_round_trips(self, store: IndexStore) -> None:
        record, chunks = make_file("/ws/docs/guide.md", ["alpha one", ("beta two\nthree", "## Beta")])
        assert store.get_file(record.path) is None
        store.replace_file(record, chunks)
        assert store.get_file(record.path) == replace(record, chunk_count=2)
        assert list(store.file_records()) == [replace(record, chunk_count=2)]
        assert store.get_file(Path("/ws/docs/other.md")) is None

    def test_hit_carries_every_field_of_its_chunk_and_file(self, store: IndexStore) -> None:
        record, chunks = make_file(
            "/ws/docs/guide.md", ["intro words here", ("the rollback controller\nchecks things", "## Rollback")]
        )
        store.replace_file(record, chunks)
        [hit] = search(store, "controller")
        chunk = chunks[1]
        assert hit.path == record.path
        assert (hit.line_start, hit.line_end) == (3, 4)
        assert (hit.line_start, hit.line_end) == (chunk.line_start, chunk.line_end)
        assert hit.section == "## Rollback"
        assert hit.chunk_index == 1
        assert hit.tokens == chunk.tokens == 5
        assert hit.modified == record.modified_at
        assert hit.content == chunk.content
        assert hit.score > 0

    def test_replace_twice_replaces_everything(self, store: IndexStore) -> None:
        record, chunks = make_file("/ws/notes/a.md", ["oldword first", "oldword second", "oldword third"])
        store.replace_file(record, chunks)
        new_record, new_chunks = make_file("/ws/notes/a.md", ["newword only"], content_hash="hash-2")
        store.replace_file(new_record, new_chunks)

        assert search(store, "oldword") == []
        assert paths(search(store, "newword")) == ["/ws/notes/a.md"]
        assert store.get_file(new_record.path) == replace(new_record, chunk_count=1)
        assert store.status().files == 1
        assert store.status().chunks == 1

    def test_replace_with_no_chunks_keeps_the_record(self, store: IndexStore) -> None:
        record, chunks = make_file("/ws/notes/a.md", ["something here"])
        store.replace_file(record, chunks)
        store.replace_file(record, [])
        assert store.get_file(record.path) == replace(record, chunk_count=0)
        assert search(store, "something") == []
        assert (store.status().files, store.status().chunks) == (1, 0)

    def test_touch_file_updates_the_record_and_keeps_chunks(self, store: IndexStore) -> None:
        record, chunks = make_file("/ws/notes/a.md", ["keepme one", "keepme two"])
        store.replace_file(record, chunks)
        touched = replace(record, mtime_ns=9_999, size=record.size + 1, indexed_at="2026-05-01T00:00:00Z", chunk_count=0)
        store.touch_file(touched)

        got = store.get_file(record.path)
        assert got is not None
        assert (got.mtime_ns, got.size, got.indexed_at) == (9_999, record.size + 1, "2026-05-01T00:00:00Z")
        assert got.chunk_count == 2
        assert len(search(store, "keepme")) == 2

    def test_delete_files_returns_count_and_removes_hits(self, store: IndexStore) -> None:
        for name in ("a", "b", "c"):
            store.replace_file(*make_file(f"/ws/notes/{name}.md", [f"shared word {name}"]))
        deleted = store.delete_files(
            [Path("/ws/notes/a.md"), Path("/ws/notes/b.md"), Path("/ws/notes/missing.md"), Path("/ws/notes/a.md")]
        )
        assert deleted == 2
        assert paths(search(store, "shared")) == ["/ws/notes/c.md"]
        assert store.get_file(Path("/ws/notes/a.md")) is None
        assert [r.path for r in store.file_records()] == [Path("/ws/notes/c.md")]
        assert store.delete_files([]) == 0
        assert (store.status().files, store.status().chunks) == (1, 1)

    def test_path_prefix_is_literal(self, store: IndexStore) -> None:
        for path in ("/ws/a_b/one.md", "/ws/axb/two.md", "/ws/100%/three.md", "/ws/1000/four.md"):
            store.replace_file(*make_file(path, ["needle text"]))

        assert paths(search(store, "needle", path_prefix="/ws/a_b")) == ["/ws/a_b/one.md"]
        assert paths(search(store, "needle", path_prefix="/ws/100%")) == ["/ws/100%/three.md"]
        assert paths(search(store, "needle", path_prefix="/ws/a%")) == []
        assert len(search(store, "needle", path_prefix="/ws/")) == 4
        assert len(search(store, "needle", path_prefix=None)) == 4
        assert paths(search(store, "needle", path_prefix="/elsewhere")) == []

    def test_a_tuple_of_prefixes_keeps_paths_with_any_of_them(self, store: IndexStore) -> None:
        # Root selection (issue 12): one literal prefix per selected root; none selects nothing.
        for path in ("/ws/a_b/one.md", "/ws/axb/two.md", "/ws/100%/three.md", "/ws/1000/four.md"):
            store.replace_file(*make_file(path, ["needle text"]))

        assert sorted(paths(search(store, "needle", path_prefix=("/ws/a_b/", "/ws/100%/")))) == [
            "/ws/100%/three.md", "/ws/a_b/one.md"]
        assert paths(search(store, "needle", path_prefix=("/ws/1000/",))) == ["/ws/1000/four.md"]
        assert paths(search(store, "needle", path_prefix=())) == []
        assert paths(search(store, "needle", path_prefix=("/ws/a%",), glob="*.md")) == []

    def test_glob_matches_name_or_whole_path(self, store: IndexStore) -> None:
        for path in ("/ws/docs/guide.md", "/ws/code/guide.py", "/ws/code/md/notes.txt"):
            store.replace_file(*make_file(path, ["needle text"]))

        assert paths(search(store, "needle", glob="*.md")) == ["/ws/docs/guide.md"]
        assert paths(search(store, "needle", glob="guide.*")) == ["/ws/code/guide.py", "/ws/docs/guide.md"]
        # without "/" only the file name is matched: the "md" directory does not count
        assert paths(search(store, "needle", glob="*md*")) == ["/ws/docs/guide.md"]
        assert paths(search(store, "needle", glob="code*")) == []
        # a leading "/" anchors at the root; "*" stays within one segment, "**" crosses them
        assert paths(search(store, "needle", glob="/ws/code/*")) == ["/ws/code/guide.py"]
        assert paths(search(store, "needle", glob="/ws/code/**")) == ["/ws/code/guide.py", "/ws/code/md/notes.txt"]
        assert paths(search(store, "needle", glob="/code/*")) == []  # anchored: /code is not /ws/code
        assert paths(search(store, "needle", glob="*/md/*")) == ["/ws/code/md/notes.txt"]
        assert paths(search(store, "needle", glob="/ws/code/**", path_prefix="/ws/code/md")) == ["/ws/code/md/notes.txt"]

    @pytest.mark.parametrize(
        ("glob", "expected"),
        [
            # "/" in the pattern: whole segments at the end of the path; "*" never crosses "/"
            ("docs/*.md", ["/ws/docs/x.md", "/ws/other/docs/z.md"]),
            ("docs/a/*.md", ["/ws/docs/a/b.md"]),
            ("docs/*/*.md", ["/ws/docs/a/b.md"]),
            # "**" is zero or more whole segments
            ("docs/**/*.md", ["/ws/docs/a/b.md", "/ws/docs/a/b/c.md", "/ws/docs/x.md", "/ws/other/docs/z.md"]),
            ("**/*.md", [p for p in sorted(GLOB_TREE) if p.endswith(".md")]),
            ("/ws/docs/**", ["/ws/docs/a/b.md", "/ws/docs/a/b/c.md", "/ws/docs/x.md"]),
            ("/ws/**/b.md", ["/ws/docs/a/b.md"]),
            # braces expand, nested too; each alternative follows the rules on its own
            ("*.{md,rst}", [p for p in sorted(GLOB_TREE) if p.endswith((".md", ".rst"))]),
            ("*.{txt,{r,x}st}", ["/ws/notes/r.rst", "/ws/notes/t.txt"]),
            ("{docs,notes}/*.{md,txt}", ["/ws/docs/x.md", "/ws/notes/t.txt", "/ws/other/docs/z.md"]),
            ("{mydocs/*.md,*.rst}", ["/ws/mydocs/y.md", "/ws/notes/r.rst"]),
            # without "/": the file name only
            ("test_*.py", ["/ws/notes/test_one.py"]),
            ("[!t]*.py", ["/ws/notes/one_test.py"]),
            ("?.{txt,py}", ["/ws/notes/t.txt"]),
            ("docs", []),
            # case-sensitive
            ("*.MD", []),
        ],
    )
    def test_glob_segments_globstar_and_braces(self, store: IndexStore, glob: str, expected: list[str]) -> None:
        for path in GLOB_TREE:
            store.replace_file(*make_file(path, ["needle text"]))
        assert sorted(paths(search(store, "needle", glob=glob))) == expected

    @pytest.mark.parametrize(
        ("glob", "expected"),
        [
            (r"a\*b.md", ["/ws/lit/a*b.md"]),
            (r"\[x\].md", ["/ws/lit/[x].md"]),
            ("[[]x].md", ["/ws/lit/[x].md"]),
            ("a[*]b.md", ["/ws/lit/a*b.md"]),
            (r"lit/\{a,b\}.md", ["/ws/lit/{a,b}.md"]),
            ("a*b.md", ["/ws/lit/a*b.md", "/ws/lit/axb.md"]),
        ],
    )
    def test_glob_metacharacters_can_be_literal(self, store: IndexStore, glob: str, expected: list[str]) -> None:
        for path in ("/ws/lit/a*b.md", "/ws/lit/axb.md", "/ws/lit/[x].md", "/ws/lit/x.md", "/ws/lit/{a,b}.md"):
            store.replace_file(*make_file(path, ["needle text"]))
        assert sorted(paths(search(store, "needle", glob=glob))) == expected

    @pytest.mark.parametrize("glob", ["", "*.{md", "[abc", "*.md}", "{md}", "docs/", "!*.md"])
    @pytest.mark.parametrize("text", ["needle", ""])
    def test_malformed_glob_is_a_usage_error(self, store: IndexStore, glob: str, text: str) -> None:
        store.replace_file(*make_file("/ws/docs/x.md", ["needle text"]))
        with pytest.raises(UsageError) as raised:
            search(store, text, glob=glob)
        assert raised.value.code == "usage_error"
        assert repr(glob) in raised.value.message or glob == ""

    def test_filters_apply_before_the_limit(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/a/strong.md", ["target target target"] * 5))
        store.replace_file(*make_file("/ws/b/weak.md", ["target and many other words that dilute the match a lot"]))
        assert paths(search(store, "target", path_prefix="/ws/b/", limit=1)) == ["/ws/b/weak.md"]
        assert paths(search(store, "target", glob="weak.*", limit=1)) == ["/ws/b/weak.md"]

    def test_limit_is_clamped_to_at_least_one(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/a.md", ["word one", "word two", "word three"]))
        assert len(search(store, "word", limit=0)) == 1
        assert len(search(store, "word", limit=-5)) == 1
        assert len(search(store, "word", limit=2)) == 2
        assert len(search(store, "word")) == 3

    def test_hits_are_best_first(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/a.md", ["gamma", "gamma gamma gamma", "gamma delta epsilon zeta eta theta"]))
        hits = search(store, "gamma")
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert hits[0].chunk_index == 1

    @pytest.mark.parametrize("text", ["", "   ", "?! - _ *", "a b c"])
    def test_empty_query_gives_no_hits(self, store: IndexStore, text: str) -> None:
        store.replace_file(*make_file("/ws/a.md", ["anything at all"]))
        assert search(store, text) == []

    def test_compound_requires_all_parts(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/both.md", ["the agent of hermes"]))
        store.replace_file(*make_file("/ws/adjacent.md", ["hermes-agent runs"]))
        store.replace_file(*make_file("/ws/one.md", ["hermes alone"]))
        assert sorted(paths(search(store, "hermes-agent"))) == ["/ws/adjacent.md", "/ws/both.md"]
        assert paths(search(store, "read_file")) == []

    def test_words_are_or_ed(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/a.md", ["container runtime"]))
        store.replace_file(*make_file("/ws/b.md", ["command line interface cli"]))
        assert sorted(paths(search(store, "container CLI"))) == ["/ws/a.md", "/ws/b.md"]

    def test_status_counts(self, store: IndexStore) -> None:
        assert (store.status().files, store.status().chunks) == (0, 0)
        store.replace_file(*make_file("/ws/a.md", ["one", "two", "three"]))
        store.replace_file(*make_file("/ws/b.md", ["four"]))
        status = store.status()
        assert (status.files, status.chunks) == (2, 4)
        assert status.size_bytes >= 0

    @pytest.mark.parametrize("text", ["ابراج", "الأبراج", "أبراج", "بالابراج", "تسمي", "مدرسه", "المدرسة"])
    def test_arabic_words_match_their_other_spellings(self, store: IndexStore, text: str) -> None:
        """Letter variants (alef forms, alef maqsura, ta marbuta), vowel marks and the article do not
        keep an Arabic word from its text; the hit carries the text as written."""
        content = "تُسمّى الأبراجُ في المدرسة"
        store.replace_file(*make_file("/ws/ar/a.md", [content]))
        store.replace_file(*make_file("/ws/ar/b.md", ["نص آخر"]))
        hits = search(store, text)
        assert paths(hits) == ["/ws/ar/a.md"]
        assert hits[0].content == content

    def test_query_stopwords_do_not_match_on_their_own(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/a.md", ["the rollback of the release"]))
        store.replace_file(*make_file("/ws/b.md", ["this is the way it is"]))
        # "what rollback": b.md, which holds only the dropped "is" and "the", is not a hit
        assert paths(search(store, "what is the rollback")) == ["/ws/a.md"]
        # nothing but stopwords: they are searched
        assert sorted(paths(search(store, "is the"))) == ["/ws/a.md", "/ws/b.md"]

    def test_writes_in_a_batch_are_kept_when_it_exits(self, store: IndexStore) -> None:
        old, old_chunks = make_file("/ws/old.md", ["gone soon"])
        store.replace_file(old, old_chunks)
        with store.batch():
            for name in ("a.md", "b.md"):
                store.replace_file(*make_file(f"/ws/{name}", [f"{name[0]}word here"]))
            store.touch_file(replace(old, mtime_ns=7))
            assert names(store) == ["a.md", "b.md", "old.md"]  # visible to this store at once
            store.delete_files([Path("/ws/a.md")])
        assert names(store) == ["b.md", "old.md"]
        assert store.get_file(Path("/ws/old.md")).mtime_ns == 7
        assert [h.path.name for h in store.search(parse_query("bword"))] == ["b.md"]

    def test_a_failing_write_is_undone_alone(self, store: IndexStore) -> None:
        record, chunks = make_file("/ws/bad.md", ["first", "second"])
        duplicate = [chunks[0], replace(chunks[1], index=0)]  # two chunks with index 0
        with store.batch():
            store.replace_file(*make_file("/ws/a.md", ["aword"]))
            if self.checks_chunk_indexes:
                with pytest.raises(StoreError):
                    store.replace_file(record, duplicate)
            with pytest.raises(StoreError):
                store.touch_file(replace(record, path=Path("/ws/never-indexed.md")))
            store.replace_file(*make_file("/ws/b.md", ["bword"]))
        assert names(store) == ["a.md", "b.md"]
        assert store.status().chunks == 2

    def test_an_exception_rolls_the_whole_batch_back(self, store: IndexStore) -> None:
        store.replace_file(*make_file("/ws/kept.md", ["kept"]))
        with pytest.raises(KeyboardInterrupt), store.batch():
            store.replace_file(*make_file("/ws/a.md", ["aword"]))
            store.delete_files([Path("/ws/kept.md")])
            raise KeyboardInterrupt
        assert names(store) == ["kept.md"]
        store.replace_file(*make_file("/ws/after.md", ["after"]))  # the store is usable afterwards
        assert names(store) == ["after.md", "kept.md"]

    def test_a_nested_batch_joins_the_outer_one(self, store: IndexStore) -> None:
        with pytest.raises(RuntimeError), store.batch():
            with store.batch():
                store.replace_file(*make_file("/ws/a.md", ["aword"]))
            assert names(store) == ["a.md"]
            raise RuntimeError("outer fails")
        assert names(store) == []

    def test_a_file_written_twice_in_a_batch_is_found_once_as_last_written(self, store: IndexStore) -> None:
        with store.batch():
            store.replace_file(*make_file("/ws/a.md", ["shared first", "shared second", "shared third"]))
            store.replace_file(*make_file("/ws/a.md", ["shared again"], content_hash="h2"))
            store.replace_file(*make_file("/ws/b.md", ["shared bee"]))
            store.replace_file(*make_file("/ws/c.md", ["shared sea"]))
            store.delete_files([Path("/ws/c.md")])
        assert sorted(hits(store, "shared")) == [("a.md", 0, "shared again"), ("b.md", 0, "shared bee")]
        assert store.status().chunks == 2

    def test_every_file_sorted_by_path_with_the_total(self, filled: IndexStore) -> None:
        assert listed(filled, None) == (sorted(FILES), 6)

    def test_pages_in_the_store(self, filled: IndexStore) -> None:
        assert listed(filled, None, limit=2, offset=0) == (["/ws/a.md", "/ws/docs/b.md"], 6)
        assert listed(filled, None, limit=2, offset=2) == (["/ws/docs/deep/c.md", "/ws/docs/z.md"], 6)
        assert listed(filled, None, limit=2, offset=4) == (["/ws/docs0.md", "/ws/docsx/d.md"], 6)
        assert listed(filled, None, limit=2, offset=6) == ([], 6)

    def test_a_folder_holds_only_what_is_under_it(self, filled: IndexStore) -> None:
        under = ["/ws/docs/b.md", "/ws/docs/deep/c.md", "/ws/docs/z.md"]
        assert listed(filled, "/ws/docs") == (under, 3)
        assert listed(filled, "/ws/docs/") == (under, 3)  # a trailing slash means the same folder

    def test_not_recursive_is_the_files_directly_in_the_folder(self, filled: IndexStore) -> None:
        assert listed(filled, "/ws/docs", recursive=False) == (["/ws/docs/b.md", "/ws/docs/z.md"], 2)
        assert listed(filled, "/ws", recursive=False) == (["/ws/a.md", "/ws/docs0.md"], 2)
        # Without a folder: the files directly in their own root.
        assert listed(filled, None, recursive=False) == (["/ws/a.md", "/ws/docs0.md"], 2)

    def test_a_file_path_lists_that_file_and_an_unknown_path_nothing(self, filled: IndexStore) -> None:
        assert listed(filled, "/ws/docs/z.md") == (["/ws/docs/z.md"], 1)
        assert listed(filled, "/ws/nothing") == ([], 0)
        [record], _ = filled.list_files(Path("/ws/docs/z.md"))
        assert (record.content_hash, record.chunk_count, record.size) == ("hash-1", 2, len(b"alpha one\n\nbeta two\n"))

    def test_tombstones_round_trip_and_are_removed_by_path_or_folder(self, filled: IndexStore) -> None:
        assert filled.tombstones() == []
        graves = [Tombstone(Path(p), f"h{i}", i, i * 10, "2026-01-01T00:00:00Z") for i, p in enumerate(FILES)]
        filled.add_tombstones(graves)
        assert filled.tombstones() == sorted(graves, key=lambda t: str(t.path))
        filled.add_tombstones([Tombstone(Path("/ws/a.md"), "new", 1, 1, "2026-01-02T00:00:00Z")])
        assert next(t for t in filled.tombstones() if t.path == Path("/ws/a.md")).content_hash == "new"
        assert filled.remove_tombstones(under=Path("/ws/docs")) == 3
        assert filled.remove_tombstones([Path("/ws/a.md"), Path("/ws/not-there.md")]) == 1
        assert [str(t.path) for t in filled.tombstones()] == ["/ws/docs0.md", "/ws/docsx/d.md"]

    def test_records_under_a_path_are_that_file_or_the_folder_s_files(self, filled: IndexStore) -> None:
        def under(path: str) -> list[str]:
            return sorted(str(r.path) for r in filled.file_records(under=Path(path)))

        assert under("/ws/docs") == ["/ws/docs/b.md", "/ws/docs/deep/c.md", "/ws/docs/z.md"]  # not docs0, docsx
        assert under("/ws/docs/") == ["/ws/docs/b.md", "/ws/docs/deep/c.md", "/ws/docs/z.md"]
        assert under("/ws/docs/z.md") == ["/ws/docs/z.md"]
        assert under("/ws/docs/z") == []
        assert under("/ws/nothing") == []
        assert len(under("/ws")) == 6

    def test_records_under_a_folder_can_be_deleted_while_iterating(self, filled: IndexStore) -> None:
        for record in filled.file_records(under=Path("/ws/docs")):
            filled.delete_files([record.path])
        assert sorted(str(r.path) for r in filled.file_records()) == ["/ws/a.md", "/ws/docs0.md", "/ws/docsx/d.md"]

    def test_tombstones_under_a_path(self, filled: IndexStore) -> None:
        graves = [Tombstone(Path(p), f"h{i}", i, i * 10, "2026-01-01T00:00:00Z") for i, p in enumerate(FILES)]
        filled.add_tombstones(graves)
        assert [str(t.path) for t in filled.tombstones(under=Path("/ws/docs"))] == [
            "/ws/docs/b.md", "/ws/docs/deep/c.md", "/ws/docs/z.md"]
        assert [str(t.path) for t in filled.tombstones(under=Path("/ws/docs0.md"))] == ["/ws/docs0.md"]
        assert filled.tombstones(under=Path("/ws/none")) == []

    def test_tombstones_written_in_a_failed_batch_are_rolled_back(self, filled: IndexStore) -> None:
        with pytest.raises(RuntimeError), filled.batch():
            filled.delete_files([Path("/ws/a.md")])
            filled.add_tombstones([Tombstone(Path("/ws/a.md"), "h", 1, 1, "2026-01-01T00:00:00Z")])
            raise RuntimeError("stop")
        assert filled.tombstones() == []
        assert filled.get_file(Path("/ws/a.md")) is not None

    def test_the_last_run_is_in_the_status(self, filled: IndexStore) -> None:
        assert (filled.status().last_indexed_at, filled.status().skipped) == (None, {})
        filled.record_run("2026-04-15T10:32:00Z", {"unchanged": 4, "deleted_by_user": 1})
        status = filled.status()
        assert (status.last_indexed_at, status.skipped) == ("2026-04-15T10:32:00Z", {"deleted_by_user": 1, "unchanged": 4})

    def test_root_counts_are_kept_per_root_and_merged_by_later_runs(self, filled: IndexStore) -> None:
        assert filled.root_counts() == {}
        first = {Path("/ws"): RootCounts("2026-04-15T10:32:00Z", unreadable=2, too_large=1, excluded=3),
                 Path("/data/notes"): RootCounts("2026-04-15T10:32:00Z")}
        filled.record_root_counts(first)
        assert filled.root_counts() == first
        # A run that walked one root replaces that root's counts only; an empty one changes nothing.
        later = RootCounts("2026-04-16T08:00:00Z", too_large=4)
        filled.record_root_counts({Path("/data/notes"): later})
        filled.record_root_counts({})
        assert filled.root_counts() == {Path("/ws"): first[Path("/ws")], Path("/data/notes"): later}

    def test_a_sound_store_passes_its_integrity_checks(self, filled: IndexStore) -> None:
        checks = filled.check_integrity()
        assert [(c.name, c.status) for c in checks] == [
            ("sqlite_integrity", "passed"), ("fulltext_index", "passed"), ("schema_version", "passed")
        ]
