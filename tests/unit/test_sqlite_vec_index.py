"""SqliteVecIndex specifics: opening rules, read-only use, locking, the cascade from the store's
writes (also through a schema rebuild and reused chunk ids), the stored format, error translation."""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

pytest.importorskip("sqlite_vec")

from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex
from hermes_workspace.domain.errors import EmbedderUnavailableError, IndexNotFoundError, StoreError
from hermes_workspace.domain.semantic import Vector, VectorStatus, unit
from tests.store_files import make_file

SIGNATURE = "test:model:3"
VECTOR_TABLES = {"chunk_vectors", "vectors"}


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / ".index" / "workspace.sqlite"


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteFts5Store]:
    s = SqliteFts5Store(db_path)
    yield s
    s.close()


@pytest.fixture
def index(store: SqliteFts5Store, db_path: Path) -> Iterator[SqliteVecIndex]:
    i = SqliteVecIndex(db_path)
    yield i
    i.close()


def vec(*values: float) -> Vector:
    return unit(values)


def tables(path: Path) -> set[str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    finally:
        conn.close()


def embed_all(index: SqliteVecIndex, vector: Vector) -> None:
    index.add([(job, vector) for job in index.pending(1000)])


# -- opening ---------------------------------------------------------------------------------


def test_writer_creates_its_tables_next_to_the_store(store: SqliteFts5Store, db_path: Path) -> None:
    assert not VECTOR_TABLES & tables(db_path)
    with SqliteVecIndex(db_path) as index:
        assert VECTOR_TABLES <= tables(db_path)
        assert repr(index).endswith("writer)")
    with SqliteVecIndex(db_path) as again:  # reopening is idempotent
        assert again.status() == VectorStatus(0, 0, 0, 0, 0, None)


@pytest.mark.parametrize("readonly", [False, True])
def test_missing_file_is_index_not_found_and_is_not_created(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / ".index" / "workspace.sqlite"
    with pytest.raises(IndexNotFoundError):
        SqliteVecIndex(path, readonly=readonly)
    assert not path.exists()


@pytest.mark.parametrize("readonly", [False, True])
def test_database_without_the_keyword_index_hints_to_run_index(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / "other.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE unrelated (x)")
    conn.close()
    with pytest.raises(IndexNotFoundError) as info:
        SqliteVecIndex(path, readonly=readonly)
    assert "hermes-workspace index" in info.value.hint
    assert tables(path) == {"unrelated"}


@pytest.mark.parametrize("readonly", [False, True])
def test_garbage_file_is_a_store_error(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / "workspace.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError) as info:
        SqliteVecIndex(path, readonly=readonly)
    assert isinstance(info.value.__cause__, apsw.Error)


def test_missing_sqlite_vec_is_embedder_unavailable(
    store: SqliteFts5Store, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)  # makes `import sqlite_vec` fail
    with pytest.raises(EmbedderUnavailableError) as info:
        SqliteVecIndex(db_path)
    assert "pip install 'hermes-workspace[semantic]'" in info.value.hint


def set_meta(path: Path, key: str, value: str) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
    conn.close()


def test_writer_recreates_vector_tables_of_an_older_version(
    store: SqliteFts5Store, index: SqliteVecIndex, db_path: Path
) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    index.prepare(SIGNATURE, 3)
    embed_all(index, vec(1, 0, 0))
    index.close()
    set_meta(db_path, "vector_schema_version", "0")
    with SqliteVecIndex(db_path, readonly=True) as reader:  # a reader takes them for no vectors
        assert reader.status() == VectorStatus(1, 0, 0, 1, 0, None)
        assert reader.search(vec(1, 0, 0)) == []
    with SqliteVecIndex(db_path) as writer:
        assert writer.status() == VectorStatus(1, 0, 0, 1, 0, None)
        assert writer.prepare(SIGNATURE, 3) is False
    assert store.status().chunks == 1  # the keyword index is untouched


def test_writer_refuses_vector_tables_of_a_newer_version(store: SqliteFts5Store, db_path: Path) -> None:
    SqliteVecIndex(db_path).close()
    set_meta(db_path, "vector_schema_version", "99")
    with pytest.raises(StoreError) as info:
        SqliteVecIndex(db_path)
    assert "newer" in info.value.message
    with SqliteVecIndex(db_path, readonly=True) as reader:
        assert reader.search(vec(1, 0, 0)) == []


# -- read-only -------------------------------------------------------------------------------


def test_readonly_on_a_database_without_vector_tables_is_empty_and_never_writes(db_path: Path) -> None:
    with SqliteFts5Store(db_path) as store:
        store.replace_file(*make_file("/ws/a.md", ["apple", "banana"]))
    before = os.stat(db_path)

    with SqliteVecIndex(db_path, readonly=True) as reader:
        assert reader.status() == VectorStatus(chunks=2, embedded=0, unreadable=0, pending=2, vectors=0, signature=None)
        assert [job.text for job in reader.pending(10)] == ["apple", "banana"]
        assert reader.search(vec(1, 0, 0)) == []
        jobs = reader.pending(10)
        for write in (
            lambda: reader.prepare(SIGNATURE, 3),
            lambda: reader.add([(jobs[0], vec(1, 0, 0))]),
            lambda: reader.attach_known(jobs),
            lambda: reader.attach_known([]),
            reader.prune,
        ):
            with pytest.raises(StoreError) as info:
                write()
            assert "read-only" in info.value.message

    after = os.stat(db_path)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert not VECTOR_TABLES & tables(db_path)


def test_reader_sees_what_a_writer_commits_even_tables_created_after_it_opened(db_path: Path) -> None:
    with SqliteFts5Store(db_path) as store:
        store.replace_file(*make_file("/ws/a.md", ["apple", "banana"]))
        reader = SqliteVecIndex(db_path, readonly=True)
        with SqliteVecIndex(db_path) as writer:
            writer.prepare(SIGNATURE, 3)
            embed_all(writer, vec(1, 0, 0))
        assert reader.status() == VectorStatus(2, 2, 0, 0, 2, SIGNATURE)
        assert [h.content for h in reader.search(vec(1, 0, 0))] == ["apple", "banana"]
        assert reader.prepare(SIGNATURE, 3) is False  # nothing to write: allowed
        with pytest.raises(StoreError):
            reader.prepare("test:other:3", 3)
        reader.close()


def test_reader_filters_by_glob(db_path: Path) -> None:
    # The glob is a SQL function registered per connection: a read-only one (search) needs it too.
    with SqliteFts5Store(db_path) as store:
        store.replace_file(*make_file("/ws/docs/a/b.md", ["apple"]))
        store.replace_file(*make_file("/ws/docs/x.md", ["banana"]))
        with SqliteVecIndex(db_path) as writer:
            writer.prepare(SIGNATURE, 3)
            writer.add([(job, vec(1, 0, 0) if job.text == "apple" else vec(0, 1, 0)) for job in writer.pending(10)])
    with SqliteVecIndex(db_path, readonly=True) as reader:
        assert [str(h.path) for h in reader.search(vec(1, 0, 0), glob="docs/*.md", limit=1)] == ["/ws/docs/x.md"]
        assert [str(h.path) for h in reader.search(vec(1, 0, 0), glob="docs/**", limit=1)] == ["/ws/docs/a/b.md"]


# -- locking ---------------------------------------------------------------------------------


def test_writes_wait_for_a_store_batch_then_fail_with_a_store_error(
    store: SqliteFts5Store, index: SqliteVecIndex, db_path: Path
) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    index.prepare(SIGNATURE, 3)
    [job] = index.pending(10)
    impatient = SqliteVecIndex(db_path, busy_timeout_ms=50)
    with store.batch():  # holds the write lock until the block ends
        with pytest.raises(StoreError) as info:
            impatient.add([(job, vec(1, 0, 0))])
        assert isinstance(info.value.__cause__, apsw.BusyError)
        assert "locked" in info.value.message
        assert "index" in info.value.hint
        assert [h.content for h in impatient.search(vec(1, 0, 0))] == []  # reads go on (WAL)
    impatient.add([(job, vec(1, 0, 0))])
    assert index.status().embedded == 1
    impatient.close()


def test_creating_the_tables_under_a_held_lock_is_a_store_error(store: SqliteFts5Store, db_path: Path) -> None:
    with store.batch():
        with pytest.raises(StoreError) as info:
            SqliteVecIndex(db_path, busy_timeout_ms=50)
        assert isinstance(info.value.__cause__, apsw.BusyError)
    SqliteVecIndex(db_path).close()


# -- the cascade from the store --------------------------------------------------------------


def test_store_writes_made_through_an_older_connection_still_cascade(db_path: Path) -> None:
    """The store's connection was opened before the vector tables existed: SQLite picks up the
    new schema (and its foreign key) on the next statement."""
    with SqliteFts5Store(db_path) as store:
        store.replace_file(*make_file("/ws/a.md", ["apple"]))
        with SqliteVecIndex(db_path) as index:
            index.prepare(SIGNATURE, 3)
            embed_all(index, vec(1, 0, 0))
            with store.batch():
                store.replace_file(*make_file("/ws/a.md", ["apple", "banana"], content_hash="hash-2"))
            assert index.status() == VectorStatus(2, 0, 0, 2, 1, SIGNATURE)
            assert index.attach_known(index.pending(10))[0].text == "banana"
            assert index.status().embedded == 1


def test_a_job_whose_chunk_id_was_reused_is_not_attached_to_the_new_chunk(
    store: SqliteFts5Store, index: SqliteVecIndex
) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    index.prepare(SIGNATURE, 3)
    [stale] = index.pending(10)
    store.replace_file(*make_file("/ws/a.md", ["banana"], content_hash="hash-2"))
    [fresh] = index.pending(10)
    assert fresh.chunk_id == stale.chunk_id  # the store reuses the highest ids

    index.add([(stale, vec(1, 0, 0))])
    assert index.pending(10) == [fresh]
    assert index.status().vectors == 1  # kept for its key, until prune
    assert index.attach_known([stale]) == []  # known key, gone chunk: nothing to do
    assert index.pending(10) == [fresh]
    assert index.prune() == 1


def test_re_storing_identical_chunks_reattaches_without_embedding(
    store: SqliteFts5Store, index: SqliteVecIndex
) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple", "banana"]))
    index.prepare(SIGNATURE, 3)
    embed_all(index, vec(1, 0, 0))
    store.replace_file(*make_file("/ws/a.md", ["apple", "banana"], content_hash="hash-2"))
    jobs = index.pending(10)
    assert len(jobs) == 2
    assert index.attach_known(jobs) == []
    assert index.status() == VectorStatus(2, 2, 0, 0, 2, SIGNATURE)


def test_store_schema_rebuild_keeps_working_and_keeps_vectors_for_reuse(db_path: Path) -> None:
    with SqliteFts5Store(db_path) as store, SqliteVecIndex(db_path) as index:
        store.replace_file(*make_file("/ws/a.md", ["apple", "banana"]))
        index.prepare(SIGNATURE, 3)
        embed_all(index, vec(1, 0, 0))
    conn = apsw.Connection(str(db_path))
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    conn.close()

    with SqliteFts5Store(db_path) as store:  # drops and recreates files, chunks, FTS
        assert store.status().chunks == 0
        with SqliteVecIndex(db_path) as index:
            assert index.status() == VectorStatus(0, 0, 0, 0, 2, SIGNATURE)
            store.replace_file(*make_file("/ws/a.md", ["apple", "banana"]))
            assert index.attach_known(index.pending(10)) == []
            assert [h.content for h in index.search(vec(1, 0, 0))] == ["apple", "banana"]
    with SqliteFts5Store(db_path, readonly=True) as reader:
        assert reader.status().chunks == 2


def test_store_refuses_a_foreign_database_even_with_vector_tables(tmp_path: Path) -> None:
    """The vector tables are only made next to an index; the store's foreign-database check is
    untouched by them."""
    path = tmp_path / "foreign.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE vectors (id INTEGER PRIMARY KEY, key TEXT, vector BLOB)")
    conn.close()
    with pytest.raises(StoreError):
        SqliteFts5Store(path)


# -- stored format and search details --------------------------------------------------------


def test_vectors_are_float32_blobs_and_double_input_is_converted(
    store: SqliteFts5Store, index: SqliteVecIndex, db_path: Path
) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    index.prepare(SIGNATURE, 3)
    [job] = index.pending(10)
    index.add([(job, array("d", [0.6, 0.8, 0.0]))])
    conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    (blob,) = conn.execute("SELECT vector FROM vectors").fetchone()
    conn.close()
    assert list(array("f", blob)) == pytest.approx([0.6, 0.8, 0.0])
    [hit] = index.search(array("d", [0.6, 0.8, 0.0]))
    assert hit.score == pytest.approx(1.0, abs=1e-6)


def test_zero_query_vector_scores_zero(store: SqliteFts5Store, index: SqliteVecIndex) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple", "banana"]))
    index.prepare(SIGNATURE, 3)
    embed_all(index, vec(1, 0, 0))
    hits = index.search(array("f", [0.0, 0.0, 0.0]))
    assert [h.score for h in hits] == [0.0, 0.0]


def test_query_of_other_dimensions_is_a_store_error(store: SqliteFts5Store, index: SqliteVecIndex) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    index.prepare(SIGNATURE, 3)
    embed_all(index, vec(1, 0, 0))
    with pytest.raises(StoreError):
        index.search(vec(1, 0, 0, 0))


def test_ties_break_by_chunk_id(store: SqliteFts5Store, index: SqliteVecIndex) -> None:
    store.replace_file(*make_file("/ws/z.md", ["first stored"]))
    store.replace_file(*make_file("/ws/a.md", ["second stored"]))
    index.prepare(SIGNATURE, 3)
    embed_all(index, vec(1, 0, 0))
    assert [str(h.path) for h in index.search(vec(1, 0, 0))] == ["/ws/z.md", "/ws/a.md"]


def test_add_before_prepare_is_a_store_error(store: SqliteFts5Store, index: SqliteVecIndex) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    [job] = index.pending(10)
    with pytest.raises(StoreError):
        index.add([(job, vec(1, 0, 0))])
    assert index.pending(10) == [job]
    index.add([])  # nothing to store: no error


def test_pending_with_no_room_is_empty(store: SqliteFts5Store, index: SqliteVecIndex) -> None:
    store.replace_file(*make_file("/ws/a.md", ["apple"]))
    assert index.pending(0) == []


def test_closed_index_is_a_store_error(store: SqliteFts5Store, db_path: Path) -> None:
    index = SqliteVecIndex(db_path)
    index.close()
    index.close()  # idempotent
    assert repr(index).endswith("closed)")
    for call in (index.status, lambda: index.pending(1), lambda: index.search(vec(1, 0, 0)), index.prune):
        with pytest.raises(StoreError) as info:
            call()
        assert "closed" in info.value.message
