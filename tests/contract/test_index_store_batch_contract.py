"""IndexStore.batch, run against the in-memory fake and the SQLite FTS5 adapter."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.domain.errors import StoreError
from hermes_workspace.domain.ports import IndexStore
from hermes_workspace.domain.query import parse_query
from tests.store_files import make_file


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    if request.param == "memory":
        s: IndexStore = InMemoryIndexStore()
    else:
        s = SqliteFts5Store(tmp_path / ".index" / "workspace.sqlite")
    yield s
    s.close()


def names(store: IndexStore) -> list[str]:
    return sorted(r.path.name for r in store.file_records())


def test_writes_in_a_batch_are_kept_when_it_exits(store: IndexStore) -> None:
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


def test_a_failing_write_is_undone_alone(store: IndexStore) -> None:
    record, chunks = make_file("/ws/bad.md", ["first", "second"])
    duplicate = [chunks[0], replace(chunks[1], index=0)]  # two chunks with index 0
    with store.batch():
        store.replace_file(*make_file("/ws/a.md", ["aword"]))
        if isinstance(store, SqliteFts5Store):
            with pytest.raises(StoreError):
                store.replace_file(record, duplicate)
        with pytest.raises(StoreError):
            store.touch_file(replace(record, path=Path("/ws/never-indexed.md")))
        store.replace_file(*make_file("/ws/b.md", ["bword"]))
    assert names(store) == ["a.md", "b.md"]
    assert store.status().chunks == 2


def test_an_exception_rolls_the_whole_batch_back(store: IndexStore) -> None:
    store.replace_file(*make_file("/ws/kept.md", ["kept"]))
    with pytest.raises(KeyboardInterrupt), store.batch():
        store.replace_file(*make_file("/ws/a.md", ["aword"]))
        store.delete_files([Path("/ws/kept.md")])
        raise KeyboardInterrupt
    assert names(store) == ["kept.md"]
    store.replace_file(*make_file("/ws/after.md", ["after"]))  # the store is usable afterwards
    assert names(store) == ["after.md", "kept.md"]


def test_a_nested_batch_joins_the_outer_one(store: IndexStore) -> None:
    with pytest.raises(RuntimeError), store.batch():
        with store.batch():
            store.replace_file(*make_file("/ws/a.md", ["aword"]))
        assert names(store) == ["a.md"]
        raise RuntimeError("outer fails")
    assert names(store) == []


def test_a_concurrent_reader_sees_a_batch_only_once_committed(tmp_path: Path) -> None:
    path = tmp_path / ".index" / "workspace.sqlite"
    writer = SqliteFts5Store(path)
    writer.replace_file(*make_file("/ws/a.md", ["version one"]))
    reader = SqliteFts5Store(path, readonly=True)
    try:
        with writer.batch():
            writer.replace_file(*make_file("/ws/a.md", ["version two", "more two"], content_hash="h2"))
            writer.replace_file(*make_file("/ws/b.md", ["bword"]))
            assert [h.content for h in reader.search(parse_query("version"))] == ["version one"]
            assert reader.status().files == 1
        assert [h.content for h in reader.search(parse_query("version"))] == ["version two"]
        assert reader.status().files == 2
    finally:
        reader.close()
        writer.close()


def test_a_read_only_store_refuses_a_batch(tmp_path: Path) -> None:
    path = tmp_path / ".index" / "workspace.sqlite"
    SqliteFts5Store(path).close()
    reader = SqliteFts5Store(path, readonly=True)
    with pytest.raises(StoreError), reader.batch():
        pass
    reader.close()



def hits(store: IndexStore, text: str) -> list[tuple[str, int, str]]:
    return [(h.path.name, h.chunk_index, h.content) for h in store.search(parse_query(text), limit=50)]


def test_a_file_written_twice_in_a_batch_is_found_once_as_last_written(store: IndexStore) -> None:
    with store.batch():
        store.replace_file(*make_file("/ws/a.md", ["shared first", "shared second", "shared third"]))
        store.replace_file(*make_file("/ws/a.md", ["shared again"], content_hash="h2"))
        store.replace_file(*make_file("/ws/b.md", ["shared bee"]))
        store.replace_file(*make_file("/ws/c.md", ["shared sea"]))
        store.delete_files([Path("/ws/c.md")])
    assert sorted(hits(store, "shared")) == [("a.md", 0, "shared again"), ("b.md", 0, "shared bee")]
    assert store.status().chunks == 2


def test_ids_freed_by_a_failed_write_serve_the_next_file(tmp_path: Path) -> None:
    store = SqliteFts5Store(tmp_path / ".index" / "workspace.sqlite")
    try:
        record, chunks = make_file("/ws/bad.md", ["badword one", "badword two"])
        with store.batch():
            with pytest.raises(StoreError):
                store.replace_file(record, [chunks[0], replace(chunks[1], index=0)])
            store.replace_file(*make_file("/ws/good.md", ["goodword"]))
        assert hits(store, "badword") == []
        assert hits(store, "goodword") == [("good.md", 0, "goodword")]
        assert store.status().chunks == 1
    finally:
        store.close()


def test_batches_leave_a_sound_full_text_index(tmp_path: Path) -> None:
    store = SqliteFts5Store(tmp_path / ".index" / "workspace.sqlite")
    try:
        for round_ in range(3):
            with store.batch():
                for i in range(30):
                    store.replace_file(*make_file(f"/ws/f{i}.md", [f"word{round_} n{i}", f"more{i} text"],
                                                  content_hash=f"h{round_}"))
                store.delete_files([Path(f"/ws/f{i}.md") for i in range(0, 30, 7)])
        conn = store._conn  # the FTS5 integrity check needs the connection
        conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
        assert len(hits(store, "word2")) == 30 - 5
        assert hits(store, "word1") == []
    finally:
        store.close()
