"""The catalog part of the IndexStore contract (list_files, tombstones, record_run,
check_integrity), run against the in-memory fake and the SQLite FTS5 adapter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.domain.catalog import Tombstone
from hermes_workspace.domain.ports import IndexStore
from tests.store_files import make_file

FILES = [
    "/ws/a.md",
    "/ws/docs/b.md",
    "/ws/docs/deep/c.md",
    "/ws/docs/z.md",
    "/ws/docs0.md",  # sorts after "/ws/docs/" but is not under it
    "/ws/docsx/d.md",  # shares the prefix "docs" but is another folder
]


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    s: IndexStore = InMemoryIndexStore() if request.param == "memory" else SqliteFts5Store(
        tmp_path / ".index" / "workspace.sqlite"
    )
    for path in reversed(FILES):
        record, chunks = make_file(path, ["alpha one", "beta two"])
        s.replace_file(record, chunks)
    yield s
    s.close()


def listed(store: IndexStore, path: str | None, **kwargs: object) -> tuple[list[str], int]:
    records, total = store.list_files(None if path is None else Path(path), **kwargs)  # type: ignore[arg-type]
    return [str(r.path) for r in records], total


def test_every_file_sorted_by_path_with_the_total(store: IndexStore) -> None:
    assert listed(store, None) == (sorted(FILES), 6)


def test_pages_in_the_store(store: IndexStore) -> None:
    assert listed(store, None, limit=2, offset=0) == (["/ws/a.md", "/ws/docs/b.md"], 6)
    assert listed(store, None, limit=2, offset=2) == (["/ws/docs/deep/c.md", "/ws/docs/z.md"], 6)
    assert listed(store, None, limit=2, offset=4) == (["/ws/docs0.md", "/ws/docsx/d.md"], 6)
    assert listed(store, None, limit=2, offset=6) == ([], 6)


def test_a_folder_holds_only_what_is_under_it(store: IndexStore) -> None:
    under = ["/ws/docs/b.md", "/ws/docs/deep/c.md", "/ws/docs/z.md"]
    assert listed(store, "/ws/docs") == (under, 3)
    assert listed(store, "/ws/docs/") == (under, 3)  # a trailing slash means the same folder


def test_not_recursive_is_the_files_directly_in_the_folder(store: IndexStore) -> None:
    assert listed(store, "/ws/docs", recursive=False) == (["/ws/docs/b.md", "/ws/docs/z.md"], 2)
    assert listed(store, "/ws", recursive=False) == (["/ws/a.md", "/ws/docs0.md"], 2)
    # Without a folder: the files directly in their own root.
    assert listed(store, None, recursive=False) == (["/ws/a.md", "/ws/docs0.md"], 2)


def test_a_file_path_lists_that_file_and_an_unknown_path_nothing(store: IndexStore) -> None:
    assert listed(store, "/ws/docs/z.md") == (["/ws/docs/z.md"], 1)
    assert listed(store, "/ws/nothing") == ([], 0)
    [record], _ = store.list_files(Path("/ws/docs/z.md"))
    assert (record.content_hash, record.chunk_count, record.size) == ("hash-1", 2, len(b"alpha one\n\nbeta two\n"))


def test_tombstones_round_trip_and_are_removed_by_path_or_folder(store: IndexStore) -> None:
    assert store.tombstones() == []
    graves = [Tombstone(Path(p), f"h{i}", i, i * 10, "2026-01-01T00:00:00Z") for i, p in enumerate(FILES)]
    store.add_tombstones(graves)
    assert store.tombstones() == sorted(graves, key=lambda t: str(t.path))
    store.add_tombstones([Tombstone(Path("/ws/a.md"), "new", 1, 1, "2026-01-02T00:00:00Z")])
    assert next(t for t in store.tombstones() if t.path == Path("/ws/a.md")).content_hash == "new"
    assert store.remove_tombstones(under=Path("/ws/docs")) == 3
    assert store.remove_tombstones([Path("/ws/a.md"), Path("/ws/not-there.md")]) == 1
    assert [str(t.path) for t in store.tombstones()] == ["/ws/docs0.md", "/ws/docsx/d.md"]


def test_tombstones_written_in_a_failed_batch_are_rolled_back(store: IndexStore) -> None:
    with pytest.raises(RuntimeError), store.batch():
        store.delete_files([Path("/ws/a.md")])
        store.add_tombstones([Tombstone(Path("/ws/a.md"), "h", 1, 1, "2026-01-01T00:00:00Z")])
        raise RuntimeError("stop")
    assert store.tombstones() == []
    assert store.get_file(Path("/ws/a.md")) is not None


def test_the_last_run_is_in_the_status(store: IndexStore) -> None:
    assert (store.status().last_indexed_at, store.status().skipped) == (None, {})
    store.record_run("2026-04-15T10:32:00Z", {"unchanged": 4, "deleted_by_user": 1})
    status = store.status()
    assert (status.last_indexed_at, status.skipped) == ("2026-04-15T10:32:00Z", {"deleted_by_user": 1, "unchanged": 4})


def test_a_sound_store_passes_its_integrity_checks(store: IndexStore) -> None:
    checks = store.check_integrity()
    assert [(c.name, c.status) for c in checks] == [
        ("sqlite_integrity", "passed"), ("fulltext_index", "passed"), ("schema_version", "passed")
    ]
