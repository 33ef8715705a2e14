"""IndexWorkspace over changed paths only (``execute(progress, changed=...)``), built from fakes:
edits, additions, deletions and renames of files and folders, paths no root covers, the exact
summary, what a partial run leaves alone (the run record, the rest of the index) and that it
never scans the whole index. The real filesystem source and SQLite store:
tests/e2e/test_changed_paths_e2e.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import (
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    ParagraphChunker,
    RecordingProgressSink,
    Utf8Decoder,
)
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.domain.catalog import Tombstone
from hermes_workspace.domain.config import ChunkingConfig, WorkspaceConfig
from hermes_workspace.domain.errors import IndexBusyError, UsageError
from hermes_workspace.domain.model import ChangedScope, Root, SourceFile

HOME = Path("/home/u/.hermes")
WS = HOME / "workspace"
FLAT = Path("/data/flat")


class ScanRefusingStore(InMemoryIndexStore):
    """Fails a test that reads every record or tombstone while ``refuse_scans`` is set."""

    refuse_scans = False

    def file_records(self, *, under=None):  # type: ignore[no-untyped-def, override]
        if under is None and self.refuse_scans:
            raise AssertionError("a changed-paths run scanned every record")
        return super().file_records(under=under)

    def tombstones(self, *, under=None):  # type: ignore[no-untyped-def, override]
        if under is None and self.refuse_scans:
            raise AssertionError("a changed-paths run read every tombstone")
        return super().tombstones(under=under)


def make(source: InMemoryFileSource, store: InMemoryIndexStore, *, lock=None, roots=()) -> IndexWorkspace:  # type: ignore[no-untyped-def]
    config = WorkspaceConfig(chunking=ChunkingConfig(chunk_size=50, overlap=5, threshold=20), roots=tuple(roots))
    return IndexWorkspace(
        config=config, home=HOME, source=source, decoder=Utf8Decoder(), chunker=ParagraphChunker(),
        fallback_chunker=ParagraphChunker(name="fallback"), store=store, lock=lock or InMemoryIndexLock(),
        layout=InMemoryLayout(), clock=lambda: 1.7e9,
    )


@pytest.fixture
def source() -> InMemoryFileSource:
    src = InMemoryFileSource()
    src.write(WS / "docs" / "a.md", "alpha notes\n")
    src.write(WS / "docs" / "b.md", "bravo notes\n")
    src.write(WS / "docs" / "deep" / "c.md", "charlie notes\n")
    src.write(WS / "docs0.md", "delta notes\n")  # shares the prefix "docs" but is not under it
    src.write(WS / "top.md", "echo notes\n")
    src.write(FLAT / "child.md", "foxtrot\n")
    src.write(FLAT / "sub" / "grandchild.md", "golf\n")
    return src


@pytest.fixture
def store() -> ScanRefusingStore:
    return ScanRefusingStore()


@pytest.fixture
def run(source: InMemoryFileSource, store: ScanRefusingStore):  # type: ignore[no-untyped-def]
    """Index everything once, then return ``run(*paths)``: a changed-paths run (no scans allowed)."""
    roots = (Root(FLAT, recursive=False),)
    make(source, store, roots=roots).execute(RecordingProgressSink())
    source.reads.clear()

    def changed(*paths: Path):  # type: ignore[no-untyped-def]
        store.refuse_scans = True
        try:
            return make(source, store, roots=roots).execute(RecordingProgressSink(), changed=list(paths))
        finally:
            store.refuse_scans = False

    return changed


def indexed(store: InMemoryIndexStore) -> list[str]:
    return sorted(str(p) for p in store.files)


def counts(summary) -> tuple[int, int, int, int, dict[str, int]]:  # type: ignore[no-untyped-def]
    return (summary.files_indexed, summary.files_skipped, summary.files_pruned, summary.files_errored,
            summary.skipped)


def test_an_edited_file_is_read_again_and_nothing_else(run, source, store) -> None:  # type: ignore[no-untyped-def]
    source.write(WS / "docs" / "a.md", "alpha notes rewritten\n")
    summary = run(WS / "docs" / "a.md")
    assert counts(summary) == (1, 0, 0, 0, {})
    assert source.reads == [WS / "docs" / "a.md"]
    assert store.file_chunks(WS / "docs" / "a.md")[0].content == "alpha notes rewritten"
    assert summary.changed_paths == {"given": 1, "ignored": 0}
    assert summary.to_json()["changed_paths"] == {"given": 1, "ignored": 0}


def test_an_unchanged_file_is_skipped_without_reading(run, source) -> None:  # type: ignore[no-untyped-def]
    summary = run(WS / "docs" / "a.md")
    assert counts(summary) == (0, 1, 0, 0, {"unchanged": 1})
    assert source.reads == []


def test_an_added_file_is_indexed(run, source, store) -> None:  # type: ignore[no-untyped-def]
    source.write(WS / "docs" / "new.md", "hotel\n")
    summary = run(WS / "docs" / "new.md")
    assert counts(summary) == (1, 0, 0, 0, {})
    assert str(WS / "docs" / "new.md") in indexed(store)


def test_a_deleted_file_is_pruned_alone(run, source, store) -> None:  # type: ignore[no-untyped-def]
    del source.files[WS / "docs" / "b.md"]
    del source.files[WS / "top.md"]  # deleted too, but not given: stays until it is
    summary = run(WS / "docs" / "b.md")
    assert counts(summary) == (0, 0, 1, 0, {})
    assert str(WS / "docs" / "b.md") not in indexed(store)
    assert str(WS / "top.md") in indexed(store)


def test_a_renamed_file_moves_in_the_index(run, source, store) -> None:  # type: ignore[no-untyped-def]
    source.files[WS / "docs" / "renamed.md"] = source.files.pop(WS / "docs" / "a.md")
    summary = run(WS / "docs" / "a.md", WS / "docs" / "renamed.md")
    assert counts(summary) == (1, 0, 1, 0, {})
    assert str(WS / "docs" / "a.md") not in indexed(store)
    assert str(WS / "docs" / "renamed.md") in indexed(store)


def test_a_renamed_folder_moves_in_the_index_and_a_sibling_prefix_stays(run, source, store) -> None:  # type: ignore[no-untyped-def]
    for old in [p for p in source.files if WS / "docs" in p.parents]:
        source.files[WS / "papers" / old.relative_to(WS / "docs")] = source.files.pop(old)
    del source.files[WS / "docs0.md"]  # gone from disk, but /ws/docs0.md is not under /ws/docs
    summary = run(WS / "docs", WS / "papers")
    assert counts(summary) == (3, 0, 3, 0, {})
    assert indexed(store) == sorted(
        str(p) for p in [WS / "docs0.md", WS / "top.md", WS / "papers" / "a.md", WS / "papers" / "b.md",
                         WS / "papers" / "deep" / "c.md", FLAT / "child.md"]
    )


def test_an_edited_file_in_a_changed_folder_is_found_by_the_folder_walk(run, source) -> None:  # type: ignore[no-untyped-def]
    source.write(WS / "docs" / "deep" / "c.md", "charlie again\n")
    summary = run(WS / "docs", WS / "docs" / "deep" / "c.md")  # the file also under the folder: once
    assert counts(summary) == (1, 2, 0, 0, {"unchanged": 2})
    assert source.reads == [WS / "docs" / "deep" / "c.md"]


def test_secrets_are_never_indexed_through_a_changed_path(run, source, store) -> None:  # type: ignore[no-untyped-def]
    source.write(WS / "docs" / ".env", "TOKEN=abc\n")
    source.write(WS / ".ssh" / "id_rsa", "-----BEGIN KEY-----\n")
    summary = run(WS / "docs" / ".env", WS / ".ssh" / "id_rsa", WS / ".ssh")
    assert counts(summary) == (0, 0, 0, 0, {})
    assert summary.excluded == {"secret": 2}
    assert not any(".env" in p or ".ssh" in p for p in indexed(store))


def test_a_non_recursive_root_takes_its_children_not_its_grandchildren(run, source, store) -> None:  # type: ignore[no-untyped-def]
    source.write(FLAT / "child.md", "foxtrot edited\n")
    source.write(FLAT / "sub" / "grandchild.md", "golf edited\n")
    summary = run(FLAT / "child.md", FLAT / "sub" / "grandchild.md")
    assert counts(summary) == (1, 0, 0, 0, {})
    assert summary.changed_paths == {"given": 2, "ignored": 1}
    assert str(FLAT / "sub" / "grandchild.md") not in indexed(store)


def test_paths_outside_every_root_and_in_the_index_folder_are_left_alone(run, store) -> None:  # type: ignore[no-untyped-def]
    before = dict(store.files)
    summary = run(Path("/elsewhere/x.md"), WS / ".index" / "workspace.sqlite-wal", WS / ".index")
    assert counts(summary) == (0, 0, 0, 0, {})
    assert summary.changed_paths == {"given": 3, "ignored": 3}
    assert store.files == before


def test_a_partial_run_keeps_the_whole_run_record(run, source, store) -> None:  # type: ignore[no-untyped-def]
    store.excluded = {"secret": 7}
    last_run = store.last_run
    source.write(WS / "docs" / "a.md", "alpha edited\n")
    run(WS / "docs" / "a.md")
    assert store.last_run == last_run
    assert store.excluded == {"secret": 7}


def test_relative_changed_paths_are_a_usage_error(source, store) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="absolute"):
        make(source, store).execute(RecordingProgressSink(), changed=[Path("docs/a.md")])


def test_the_lock_is_held_as_for_a_whole_run(source, store) -> None:  # type: ignore[no-untyped-def]
    lock = InMemoryIndexLock()
    with lock.hold(), pytest.raises(IndexBusyError):
        make(source, store, lock=lock).execute(RecordingProgressSink(), changed=[WS / "top.md"])


def test_a_tombstone_under_a_changed_path_is_honoured_and_forgotten_when_gone(run, source, store) -> None:  # type: ignore[no-untyped-def]
    record = store.get_file(WS / "docs" / "b.md")
    store.delete_files([record.path])
    store.add_tombstones([Tombstone(record.path, record.content_hash, record.size, record.mtime_ns, "t")])
    summary = run(WS / "docs" / "b.md")
    assert counts(summary) == (0, 1, 0, 0, {"deleted_by_user": 1})
    del source.files[WS / "docs" / "b.md"]
    run(WS / "docs")
    assert store.tombstones() == []


def test_a_source_without_discover_paths_walks_every_root_but_prunes_only_the_paths(source, store) -> None:  # type: ignore[no-untyped-def]
    class OldSource:
        def discover(self, roots):  # type: ignore[no-untyped-def]
            return source.discover(roots)

        def read_bytes(self, file: SourceFile) -> bytes:
            return source.read_bytes(file)

    make(source, store).execute(RecordingProgressSink())
    del source.files[WS / "docs" / "a.md"]
    del source.files[WS / "top.md"]
    summary = make(OldSource(), store).execute(RecordingProgressSink(), changed=[WS / "docs" / "a.md"])  # type: ignore[arg-type]
    assert summary.files_pruned == 1
    assert str(WS / "top.md") in indexed(store)


def test_the_fake_source_places_changed_paths_like_the_real_one(source) -> None:  # type: ignore[no-untyped-def]
    roots = [Root(WS, recursive=True), Root(FLAT, recursive=False)]
    scopes = [item for item in source.discover_paths(roots, [WS / "docs" / ".gitignore", FLAT / "sub" / "x.md", HOME])
              if isinstance(item, ChangedScope)]
    assert scopes == [
        ChangedScope(WS / "docs" / ".gitignore", WS / "docs"),
        ChangedScope(FLAT / "sub" / "x.md", None, "outside_roots"),
        ChangedScope(HOME, WS),  # a folder holding a root stands for the root
    ]


def test_an_empty_list_of_paths_is_a_run_that_does_nothing(run, store) -> None:  # type: ignore[no-untyped-def]
    before = dict(store.files)
    summary = run()
    assert counts(summary) == (0, 0, 0, 0, {})
    assert summary.changed_paths == {"given": 0, "ignored": 0}
    assert store.files == before


AMBIGUOUS = "она уже спит\n"  # reads as cleanly in cp1251 and KOI8-R (tests/unit/test_sibling_encodings.py)
CLEAR = ["мы пошли домой вечером\n", "я люблю читать книги\n", "как дела у тебя и у меня\n"]


def test_an_ambiguous_changed_file_takes_the_encoding_of_its_nearest_folder_without_a_scan() -> None:
    from hermes_workspace.adapters.charset_decoder import CharsetDecoder

    source = InMemoryFileSource()
    for i, text in enumerate(CLEAR):
        source.write(WS / "win" / f"w{i}.txt", text.encode("cp1251"))  # the root's majority
    for i, text in enumerate(CLEAR[:2]):
        source.write(WS / "koi" / f"k{i}.txt", text.encode("koi8_r"))
    store = ScanRefusingStore()
    use_case = make(source, store)
    use_case.decoder = CharsetDecoder()
    assert use_case.execute(RecordingProgressSink()).files_indexed == 5
    source.write(WS / "koi" / "new.txt", AMBIGUOUS.encode("koi8_r"))
    source.write(WS / "other" / "deep" / "new.txt", AMBIGUOUS.encode("cp1251"))
    store.refuse_scans = True
    summary = use_case.execute(RecordingProgressSink(), changed=[WS / "koi" / "new.txt", WS / "other"])
    assert (summary.files_indexed, summary.files_errored) == (2, 0)
    assert store.get_file(WS / "koi" / "new.txt").encoding == "koi8_r"  # its folder, not the root's majority
    assert store.get_file(WS / "other" / "deep" / "new.txt").encoding == "cp1251"  # no folder on the way: the root


def test_the_embedding_pass_after_a_changed_path_run_embeds_only_the_new_chunks(source) -> None:  # type: ignore[no-untyped-def]
    from hermes_workspace.adapters.memory import HashEmbedder, InMemoryVectorIndex
    from hermes_workspace.application.embedding import EmbedChunks

    store = ScanRefusingStore()
    vectors = InMemoryVectorIndex(store)
    use_case = make(source, store)
    use_case.embedding = EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: vectors)
    first = use_case.execute(RecordingProgressSink())
    assert first.semantic is not None and first.semantic.embedded == 5  # the workspace's five files
    source.write(WS / "docs" / "a.md", "alpha notes entirely new words\n")
    summary = use_case.execute(RecordingProgressSink(), changed=[WS / "docs" / "a.md"])
    assert summary.semantic is not None
    assert (summary.semantic.embedded, summary.semantic.reused, summary.semantic.pending) == (1, 0, 0)
