"""The IndexStore contract (:class:`hermes_workspace.testing.IndexStoreContract`: records, search,
batches, catalog), run against the in-memory fake, the SQLite FTS5 adapter, and the built-in
store as the registry builds it from its entry point; plus the SQLite adapter's own batch
guarantees across connections."""

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
from hermes_workspace.registry import PluginRegistry
from hermes_workspace.testing import IndexStoreContract, plugin_context
from tests.store_files import integrity, make_file


class TestInMemoryStore(IndexStoreContract):
    @pytest.fixture
    def store(self) -> Iterator[IndexStore]:
        s = InMemoryIndexStore()
        yield s
        s.close()


class TestSqliteFts5Store(IndexStoreContract):
    checks_chunk_indexes = True

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[IndexStore]:
        s = SqliteFts5Store(tmp_path / ".index" / "workspace.sqlite")
        yield s
        s.close()


class TestSqliteFts5StorePlugin(IndexStoreContract):
    """The ``sqlite-fts5`` entry point, built by the registry as ``knowledgebase.store`` would."""

    checks_chunk_indexes = True

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[IndexStore]:
        registry = PluginRegistry()
        context = plugin_context("stores", "sqlite-fts5", index_path=tmp_path / ".index" / "workspace.sqlite")
        s = registry.build(registry.find("stores", "sqlite-fts5"), context)
        yield s
        s.close()


# -- SQLite only: several connections on one file --------------------------------------------------


def hits(store: IndexStore, text: str) -> list[tuple[str, int, str]]:
    return [(h.path.name, h.chunk_index, h.content) for h in store.search(parse_query(text), limit=50)]


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
