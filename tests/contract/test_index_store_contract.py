"""The IndexStore contract, run against the in-memory fake and the SQLite FTS5 adapter.

Words used in searches are plain, unstemmed words, because the fake does not stem.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.ports import IndexStore
from hermes_workspace.domain.query import parse_query
from tests.store_files import make_file


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    if request.param == "memory":
        s: IndexStore = InMemoryIndexStore()
    else:
        s = SqliteFts5Store(tmp_path / ".index" / "workspace.sqlite")
    assert isinstance(s, IndexStore)
    yield s
    s.close()


def paths(hits) -> list[str]:
    return [str(h.path) for h in hits]


def search(store: IndexStore, text: str, **kwargs) -> list:
    return store.search(parse_query(text), **kwargs)


def test_replace_then_get_file_round_trips(store: IndexStore) -> None:
    record, chunks = make_file("/ws/docs/guide.md", ["alpha one", ("beta two\nthree", "## Beta")])
    assert store.get_file(record.path) is None
    store.replace_file(record, chunks)
    assert store.get_file(record.path) == replace(record, chunk_count=2)
    assert list(store.file_records()) == [replace(record, chunk_count=2)]
    assert store.get_file(Path("/ws/docs/other.md")) is None


def test_hit_carries_every_field_of_its_chunk_and_file(store: IndexStore) -> None:
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


def test_replace_twice_replaces_everything(store: IndexStore) -> None:
    record, chunks = make_file("/ws/notes/a.md", ["oldword first", "oldword second", "oldword third"])
    store.replace_file(record, chunks)
    new_record, new_chunks = make_file("/ws/notes/a.md", ["newword only"], content_hash="hash-2")
    store.replace_file(new_record, new_chunks)

    assert search(store, "oldword") == []
    assert paths(search(store, "newword")) == ["/ws/notes/a.md"]
    assert store.get_file(new_record.path) == replace(new_record, chunk_count=1)
    assert store.status().files == 1
    assert store.status().chunks == 1


def test_replace_with_no_chunks_keeps_the_record(store: IndexStore) -> None:
    record, chunks = make_file("/ws/notes/a.md", ["something here"])
    store.replace_file(record, chunks)
    store.replace_file(record, [])
    assert store.get_file(record.path) == replace(record, chunk_count=0)
    assert search(store, "something") == []
    assert (store.status().files, store.status().chunks) == (1, 0)


def test_touch_file_updates_the_record_and_keeps_chunks(store: IndexStore) -> None:
    record, chunks = make_file("/ws/notes/a.md", ["keepme one", "keepme two"])
    store.replace_file(record, chunks)
    touched = replace(record, mtime_ns=9_999, size=record.size + 1, indexed_at="2026-05-01T00:00:00Z", chunk_count=0)
    store.touch_file(touched)

    got = store.get_file(record.path)
    assert got is not None
    assert (got.mtime_ns, got.size, got.indexed_at) == (9_999, record.size + 1, "2026-05-01T00:00:00Z")
    assert got.chunk_count == 2
    assert len(search(store, "keepme")) == 2


def test_delete_files_returns_count_and_removes_hits(store: IndexStore) -> None:
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


def test_path_prefix_is_literal(store: IndexStore) -> None:
    for path in ("/ws/a_b/one.md", "/ws/axb/two.md", "/ws/100%/three.md", "/ws/1000/four.md"):
        store.replace_file(*make_file(path, ["needle text"]))

    assert paths(search(store, "needle", path_prefix="/ws/a_b")) == ["/ws/a_b/one.md"]
    assert paths(search(store, "needle", path_prefix="/ws/100%")) == ["/ws/100%/three.md"]
    assert paths(search(store, "needle", path_prefix="/ws/a%")) == []
    assert len(search(store, "needle", path_prefix="/ws/")) == 4
    assert len(search(store, "needle", path_prefix=None)) == 4
    assert paths(search(store, "needle", path_prefix="/elsewhere")) == []


def test_glob_matches_name_or_whole_path(store: IndexStore) -> None:
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
def test_glob_segments_globstar_and_braces(store: IndexStore, glob: str, expected: list[str]) -> None:
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
def test_glob_metacharacters_can_be_literal(store: IndexStore, glob: str, expected: list[str]) -> None:
    for path in ("/ws/lit/a*b.md", "/ws/lit/axb.md", "/ws/lit/[x].md", "/ws/lit/x.md", "/ws/lit/{a,b}.md"):
        store.replace_file(*make_file(path, ["needle text"]))
    assert sorted(paths(search(store, "needle", glob=glob))) == expected


@pytest.mark.parametrize("glob", ["", "*.{md", "[abc", "*.md}", "{md}", "docs/", "!*.md"])
@pytest.mark.parametrize("text", ["needle", ""])
def test_malformed_glob_is_a_usage_error(store: IndexStore, glob: str, text: str) -> None:
    store.replace_file(*make_file("/ws/docs/x.md", ["needle text"]))
    with pytest.raises(UsageError) as raised:
        search(store, text, glob=glob)
    assert raised.value.code == "usage_error"
    assert repr(glob) in raised.value.message or glob == ""


def test_filters_apply_before_the_limit(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/a/strong.md", ["target target target"] * 5))
    store.replace_file(*make_file("/ws/b/weak.md", ["target and many other words that dilute the match a lot"]))
    assert paths(search(store, "target", path_prefix="/ws/b/", limit=1)) == ["/ws/b/weak.md"]
    assert paths(search(store, "target", glob="weak.*", limit=1)) == ["/ws/b/weak.md"]


def test_limit_is_clamped_to_at_least_one(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/a.md", ["word one", "word two", "word three"]))
    assert len(search(store, "word", limit=0)) == 1
    assert len(search(store, "word", limit=-5)) == 1
    assert len(search(store, "word", limit=2)) == 2
    assert len(search(store, "word")) == 3


def test_hits_are_best_first(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/a.md", ["gamma", "gamma gamma gamma", "gamma delta epsilon zeta eta theta"]))
    hits = search(store, "gamma")
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert hits[0].chunk_index == 1


@pytest.mark.parametrize("text", ["", "   ", "?! - _ *", "a b c"])
def test_empty_query_gives_no_hits(store: IndexStore, text: str) -> None:
    store.replace_file(*make_file("/ws/a.md", ["anything at all"]))
    assert search(store, text) == []


def test_compound_requires_all_parts(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/both.md", ["the agent of hermes"]))
    store.replace_file(*make_file("/ws/adjacent.md", ["hermes-agent runs"]))
    store.replace_file(*make_file("/ws/one.md", ["hermes alone"]))
    assert sorted(paths(search(store, "hermes-agent"))) == ["/ws/adjacent.md", "/ws/both.md"]
    assert paths(search(store, "read_file")) == []


def test_words_are_or_ed(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/a.md", ["container runtime"]))
    store.replace_file(*make_file("/ws/b.md", ["command line interface cli"]))
    assert sorted(paths(search(store, "container CLI"))) == ["/ws/a.md", "/ws/b.md"]


def test_status_counts(store: IndexStore) -> None:
    assert (store.status().files, store.status().chunks) == (0, 0)
    store.replace_file(*make_file("/ws/a.md", ["one", "two", "three"]))
    store.replace_file(*make_file("/ws/b.md", ["four"]))
    status = store.status()
    assert (status.files, status.chunks) == (2, 4)
    assert status.size_bytes >= 0


@pytest.mark.parametrize("text", ["ابراج", "الأبراج", "أبراج", "بالابراج", "تسمي", "مدرسه", "المدرسة"])
def test_arabic_words_match_their_other_spellings(store: IndexStore, text: str) -> None:
    """Letter variants (alef forms, alef maqsura, ta marbuta), vowel marks and the article do not
    keep an Arabic word from its text; the hit carries the text as written."""
    content = "تُسمّى الأبراجُ في المدرسة"
    store.replace_file(*make_file("/ws/ar/a.md", [content]))
    store.replace_file(*make_file("/ws/ar/b.md", ["نص آخر"]))
    hits = search(store, text)
    assert paths(hits) == ["/ws/ar/a.md"]
    assert hits[0].content == content


def test_query_stopwords_do_not_match_on_their_own(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/a.md", ["the rollback of the release"]))
    store.replace_file(*make_file("/ws/b.md", ["this is the way it is"]))
    # "what rollback": b.md, which holds only the dropped "is" and "the", is not a hit
    assert paths(search(store, "what is the rollback")) == ["/ws/a.md"]
    # nothing but stopwords: they are searched
    assert sorted(paths(search(store, "is the"))) == ["/ws/a.md", "/ws/b.md"]
