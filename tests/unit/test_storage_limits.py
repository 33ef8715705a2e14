"""Storage limits (issue 12): sizes in config, the budget and the free-disk floor of an index run
(over fakes, with the disk usage and the index size injected), and orphaned vectors in the real
SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
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
from hermes_workspace.application import batch_writer
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.application.storage_guard import StorageGuard, estimated_cost, vector_bytes
from hermes_workspace.domain.config import DEFAULT_MAX_SIZE, DEFAULT_MIN_FREE_DISK, StorageConfig, WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError, DiskSpaceLowError, StoreUnusableError
from hermes_workspace.domain.sizes import format_size, parse_size

HOME = Path("/home/u/.hermes")
WS = HOME / "workspace"


# -- sizes in config ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("500MB", 500 * 1024**2),
        ("2GB", 2_147_483_648),  # seed 002: parseSize('2GB') == 2147483648
        ("2 GiB", 2_147_483_648),
        ("1.5gb", 1_610_612_736),
        ("10 kb", 10_240),
        ("1TB", 1024**4),
        ("1PB", 1024**5),  # the largest accepted, as the "at most 1 PiB" error says (trial)
        ("1 PiB", 1024**5),
        ("4096", 4096),
        ("512B", 512),
        (1_048_576, 1_048_576),
        (0, 0),
        ("0", 0),
    ],
)
def test_sizes_are_bytes_with_binary_units(value: object, expected: int) -> None:
    assert parse_size(value, "knowledgebase.storage.max_size") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2 GBs", "has an unknown size unit 'GBs' in '2 GBs'"),
        ("15 parsecs", "has an unknown size unit 'parsecs'"),
        ("", "must be a size such as 2GB"),
        ("GB", "must be a size such as 2GB"),
        ("-1MB", "must be a size such as 2GB"),
        ("1e9", "must be a size such as 2GB"),
        (1.5, "must be a size such as 2GB or a number of bytes, got 1.5"),
        (True, "must be a size such as 2GB or a number of bytes, got True"),
        ([1], "must be a size such as 2GB"),
        (-5, "must be 0 or more, got -5"),
        ("2048TB", "must be at most 1 PiB, got '2048TB'"),
    ],
)
def test_bad_sizes_are_config_errors_naming_the_key(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"storage": {"max_size": value}}})
    error = raised.value
    assert (error.code, error.exit_code) == ("config_invalid", 78)
    assert error.message.startswith("knowledgebase.storage.max_size ")
    assert message in error.message
    assert "500MB, 2GB" in error.hint and "1 GB = 1024 MB" in error.hint


def test_storage_section_defaults_values_and_unknown_keys() -> None:
    assert WorkspaceConfig.from_dict({}).storage == StorageConfig(DEFAULT_MAX_SIZE, DEFAULT_MIN_FREE_DISK)
    assert (DEFAULT_MAX_SIZE, DEFAULT_MIN_FREE_DISK) == (2 * 1024**3, 100 * 1024**2)
    config = WorkspaceConfig.from_dict({"knowledgebase": {"storage": {"max_size": "500MB", "min_free_disk": "1 GiB"}}})
    assert config.storage == StorageConfig(max_size=524_288_000, min_free_disk=1_073_741_824)
    # YAML 1.1 reads `max_size: off` as false: no limit.
    assert WorkspaceConfig.from_dict({"knowledgebase": {"storage": {"max_size": False}}}).storage.max_size == 0
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"storage": {"max_sise": "1GB"}}})
    assert raised.value.message == "unknown setting knowledgebase.storage.max_sise"
    assert "Did you mean knowledgebase.storage.max_size?" in raised.value.hint
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"storage": {"min_free_disk": "lots"}}})
    assert raised.value.message.startswith("knowledgebase.storage.min_free_disk must be a size")


def test_format_size_uses_the_largest_binary_unit() -> None:
    assert [format_size(n) for n in (512, 1024, 1536, 2 * 1024**3, 100 * 1024**2)] == [
        "512 B", "1 KiB", "1.5 KiB", "2 GiB", "100 MiB"]


# -- the guard over fakes -------------------------------------------------------------------------


def words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


@pytest.fixture
def source() -> InMemoryFileSource:
    """Six files in walk order a1, a2 (small), b (big), c1..c3 (small)."""
    src = InMemoryFileSource()
    for name in ("a1", "a2"):
        src.write(WS / f"{name}.md", f"# {name}\n\n{words(name, 40)}\n")
    src.write(WS / "b.md", "# b\n\n" + words("b", 5000) + "\n")
    for name in ("c1", "c2", "c3"):
        src.write(WS / f"{name}.md", f"# {name}\n\n{words(name, 40)}\n")
    return src


def make(source: InMemoryFileSource, store: InMemoryIndexStore, guard: StorageGuard | None) -> IndexWorkspace:
    return IndexWorkspace(
        config=WorkspaceConfig(),
        home=HOME,
        source=source,
        decoder=Utf8Decoder(),
        chunker=ParagraphChunker(),
        fallback_chunker=ParagraphChunker(name="fallback"),
        store=store,
        lock=InMemoryIndexLock(),
        layout=InMemoryLayout(),
        storage=guard,
    )


class Sizes:
    """An index size that grows by the estimate of every file stored (what the guard measures)."""

    def __init__(self, store: InMemoryIndexStore, base: int) -> None:
        self.store, self.base, self.calls = store, base, 0

    def __call__(self) -> int:
        self.calls += 1
        return self.base + sum(
            estimated_cost(sum(len(c.content) for c in chunks), len(chunks)) for _, chunks in self.store.files.values()
        )


def test_the_budget_stops_at_the_first_file_that_does_not_fit(source: InMemoryFileSource) -> None:
    alone = InMemoryFileSource()
    alone.write(WS / "a1.md", f"# a1\n\n{words('a1', 40)}\n")
    one = InMemoryIndexStore()
    make(alone, one, None).execute(RecordingProgressSink())
    small = Sizes(one, 0)()  # what one small file costs
    store = InMemoryIndexStore()
    # Room for the two small files and a few more bytes, not for the big one; the small files
    # after it would fit, but the index holds a prefix of the walk.
    guard = StorageGuard(max_size=10_000 + 2 * small + 100, min_free_disk=0, measure=Sizes(store, 10_000),
                         free_disk=lambda: 0)
    summary = make(source, store, guard).execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.files_skipped, summary.skipped) == (2, 4, {"budget": 4})
    assert sorted(p.name for p in store.files) == ["a1.md", "a2.md"]
    # The new files after the refused one are not even read (each run would chunk them again).
    assert [p.name for p in source.reads] == ["a1.md", "a2.md", "b.md"]
    assert summary.notes == [
        f"4 files were not indexed because the index reached knowledgebase.storage.max_size "
        f"({format_size(guard.max_size)}); files already "
        "indexed keep their indexed version. Raise max_size in config.yaml (0: no limit) and run "
        "`hermes-workspace index` again"
    ]

    # Raised: the next run adds the rest, and nothing is skipped for the budget.
    guard.max_size = 0
    again = make(source, store, guard).execute(RecordingProgressSink())
    assert (again.files_indexed, again.skipped) == (4, {"unchanged": 2})


def test_a_pool_stops_reading_ahead_once_the_budget_is_reached(source: InMemoryFileSource) -> None:
    from functools import partial

    from hermes_workspace.adapters.memory import InlineTaskPool
    from hermes_workspace.application.file_processing import FileTools

    store = InMemoryIndexStore()
    guard = StorageGuard(max_size=3000, min_free_disk=0, measure=Sizes(store, 0), free_disk=lambda: 0)
    run = make(source, store, guard)
    run.pool, run.parallel_min_files, run.parallel_min_bytes = InlineTaskPool(window=1), 0, 0
    run.worker_tools = partial(FileTools, source, run.decoder, run.chunker, run.fallback_chunker)
    summary = run.execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.skipped) == (1, {"budget": 5})
    # a1 stored, a2 read and refused; then the pool is left and nothing more is read.
    assert [p.name for p in source.reads] == ["a1.md", "a2.md"]


def test_a_changed_file_over_budget_keeps_its_indexed_version(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    make(source, store, None).execute(RecordingProgressSink())
    before = store.files[WS / "c1.md"]
    source.write(WS / "c1.md", "# c1\n\n" + words("grown", 3000) + "\n")
    sizes = Sizes(store, 0)
    guard = StorageGuard(max_size=sizes() + 1000, min_free_disk=0, measure=sizes, free_disk=lambda: 0)
    summary = make(source, store, guard).execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.skipped) == (0, {"budget": 1, "unchanged": 5})
    assert store.files[WS / "c1.md"] == before  # the old chunks still answer searches
    assert guard.skipped == 1


def test_the_size_is_measured_again_after_each_commit(source: InMemoryFileSource,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 2)
    monkeypatch.setattr(batch_writer, "BATCH_MAX_SECONDS", 1e9)  # batches of exactly 2 files, however slow
    store = InMemoryIndexStore()
    sizes = Sizes(store, 0)
    guard = StorageGuard(max_size=10**9, min_free_disk=0, measure=sizes, free_disk=lambda: 0)
    summary = make(source, store, guard).execute(RecordingProgressSink())
    assert summary.files_indexed == 6
    assert sizes.calls == 1 + store.commits == 1 + 3  # at the start, then after each batch of 2


def test_no_budget_measures_nothing(source: InMemoryFileSource) -> None:
    def measure() -> int:
        raise AssertionError("measured without a budget")

    summary = make(source, InMemoryIndexStore(), StorageGuard(0, 0, measure, lambda: 0)).execute(RecordingProgressSink())
    assert summary.files_indexed == 6


@pytest.mark.parametrize(
    ("dimensions", "measured"),
    # Used pages per vector stored by SqliteVecIndex (see vector_bytes): page packing, not the
    # floats, sets the cost, so 512 dimensions cost what 768 do.
    [(64, 450), (256, 1477), (384, 2161), (512, 4213), (768, 4213), (1024, 4718), (1536, 8309), (3072, 12910)],
)
def test_vector_estimates_follow_sqlite_pages(dimensions: int, measured: int) -> None:
    assert abs(vector_bytes(dimensions) - measured) <= 10


def test_estimates_reserve_room_for_vectors() -> None:
    assert estimated_cost(1000, 2) == 1300 + 2 * 530 + 515
    assert estimated_cost(1000, 2, vector_dimensions=384) == 1300 + 2 * 530 + 515 + 2 * 2158
    guard = StorageGuard(max_size=estimated_cost(1000, 2, 384), min_free_disk=0, measure=lambda: 0,
                         free_disk=lambda: 0, vector_dimensions=lambda: 384)
    guard.start()
    assert guard.admit(1000, 2) and not guard.admit(1, 1)


def test_low_disk_stops_before_a_batch_and_keeps_the_batches_committed(
    source: InMemoryFileSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 2)
    monkeypatch.setattr(batch_writer, "BATCH_MAX_SECONDS", 1e9)  # batches of exactly 2 files, however slow
    store = InMemoryIndexStore()
    free = iter([5_000, 5_000, 999])  # two batches start, the third finds the disk too full
    guard = StorageGuard(max_size=0, min_free_disk=1000, measure=lambda: 0, free_disk=lambda: next(free),
                         location="/ws/.index")
    with pytest.raises(DiskSpaceLowError) as raised:
        make(source, store, guard).execute(RecordingProgressSink())
    error = raised.value
    assert isinstance(error, StoreUnusableError)
    assert (error.code, error.exit_code) == ("disk_space_low", 74)
    assert error.message == (
        "only 999 B free on the disk of /ws/.index, less than knowledgebase.storage.min_free_disk (1000 B): writes "
        "stopped before the next batch, nothing was half-written; indexing stopped after 4 files had been indexed "
        "in this run (they are kept)")
    assert "min_free_disk" in error.hint and "run `hermes-workspace index` again" in error.hint
    assert sorted(p.name for p in store.files) == ["a1.md", "a2.md", "b.md", "c1.md"]
    assert store.last_run is None  # nothing after the check was written either


def test_enough_disk_checks_every_batch_and_the_prune(source: InMemoryFileSource,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 2)
    monkeypatch.setattr(batch_writer, "BATCH_MAX_SECONDS", 1e9)  # batches of exactly 2 files, however slow
    checks: list[int] = []

    def free_disk() -> int:
        checks.append(1)
        return 10**9

    summary = make(source, InMemoryIndexStore(), StorageGuard(0, 1000, lambda: 0, free_disk)).execute(
        RecordingProgressSink())
    assert summary.files_indexed == 6
    assert len(checks) == 3 + 1  # three batches, then the prune and the run record


def test_low_disk_before_the_embedding_pass_stops_it_with_the_keyword_index_done(
    source: InMemoryFileSource,
) -> None:
    from hermes_workspace.adapters.memory import HashEmbedder, InMemoryVectorIndex
    from hermes_workspace.application.embedding import EmbedChunks

    store = InMemoryIndexStore()
    vectors = InMemoryVectorIndex(store)
    embedder = HashEmbedder()
    # The disk fills up once the keyword pass recorded its run, before any vector is written.
    guard = StorageGuard(0, 1000, lambda: 0, lambda: 0 if store.last_run else 10**9, location="/ws/.index")
    run = make(source, store, guard)
    run.embedding = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors)
    with pytest.raises(DiskSpaceLowError) as raised:
        run.execute(RecordingProgressSink())
    assert raised.value.message.endswith("the keyword index is up to date (6 files indexed in this run)")
    assert len(store.files) == 6
    assert (embedder.documents_embedded, vectors.vectors) == (0, {})


# -- orphaned vectors in the real file ------------------------------------------------------------


@pytest.fixture
def db_path(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / ".index" / "workspace.sqlite"


@pytest.mark.parametrize("via", ["function", "vector_index"])
def test_orphaned_vectors_are_pruned_and_live_ones_kept(db_path: Path, via: str) -> None:
    pytest.importorskip("sqlite_vec")
    from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
    from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex, prune_orphaned_vectors
    from hermes_workspace.domain.semantic import unit
    from tests.store_files import make_file

    store = SqliteFts5Store(db_path)
    store.replace_file(*make_file("/ws/keep.md", ["apple", "banana"]))
    store.replace_file(*make_file("/ws/gone.md", ["cherry"]))
    store.replace_file(*make_file("/ws/dangling.md", ["damson"]))
    with SqliteVecIndex(db_path) as index:
        index.prepare("test:model:3", 3)
        index.add([(job, unit((1.0, float(job.chunk_id), 0.0))) for job in index.pending(100)])
        assert index.status().vectors == 4
    store.delete_files([Path("/ws/gone.md")])  # the cascade detaches cherry's vector: an orphan
    store.close()
    # A client without foreign keys deletes damson's chunk: its attachment dangles.
    conn = apsw.Connection(str(db_path))
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DELETE FROM chunks WHERE content = 'damson'")
    assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == 3
    conn.close()

    def prune() -> int:
        if via == "function":  # what a run without an embedder calls: no sqlite-vec needed
            return prune_orphaned_vectors(db_path)
        with SqliteVecIndex(db_path) as index:  # what the embedding pass and `delete` call
            return index.prune()

    assert prune() == 2
    assert prune() == 0
    conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    live = conn.execute(
        "SELECT c.content FROM chunk_vectors AS cv JOIN chunks AS c ON c.id = cv.chunk_id "
        "JOIN vectors AS v ON v.id = cv.vector_id ORDER BY c.content").fetchall()
    counts = conn.execute("SELECT (SELECT count(*) FROM vectors), (SELECT count(*) FROM chunk_vectors)").fetchone()
    conn.close()
    assert live == [("apple",), ("banana",)]
    assert counts == (2, 2)


def test_pruning_a_file_without_vector_tables_is_nothing(db_path: Path) -> None:
    from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
    from hermes_workspace.adapters.sqlite_vec_index import prune_orphaned_vectors

    assert prune_orphaned_vectors(db_path) == 0  # no file
    SqliteFts5Store(db_path).close()
    assert prune_orphaned_vectors(db_path) == 0  # a keyword index only
