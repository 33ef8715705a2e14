"""IndexWorkspace built from fakes: skip rules, pruning, fallbacks, error isolation.

Every test runs twice (the autouse ``mode`` fixture): with the files read and chunked in this
process, and through a task pool (the in-memory :class:`InlineTaskPool`, which works ahead of the
results it hands out as a process pool does). Pool-only and batching behaviour is at the end.
"""

from __future__ import annotations

import pickle
import re
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import (
    InlineTaskPool,
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    ParagraphChunker,
    RecordingProgressSink,
    Utf8Decoder,
)
from hermes_workspace.application import batch_writer, indexing
from hermes_workspace.application.file_processing import (
    FileTask,
    FileTools,
    Problem,
    WorkerError,
    WorkerTraceback,
    process_file,
)
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.domain.config import ChunkingConfig, WorkspaceConfig
from hermes_workspace.domain.errors import DecodeError, IndexBusyError, StoreError, StoreUnusableError
from hermes_workspace.domain.model import DiscoveryProblem, Root

HOME = Path("/home/u/.hermes")
WS = HOME / "workspace"
NOTES = Path("/data/notes")


class FailingStore(InMemoryIndexStore):
    def __init__(self, fail_name: str) -> None:
        super().__init__()
        self.fail_name = fail_name

    def replace_file(self, record, chunks):  # type: ignore[no-untyped-def]
        if record.path.name == self.fail_name:
            raise OSError("disk full")
        super().replace_file(record, chunks)


def paragraphs(n: int, words: int = 10, tag: str = "w") -> str:
    return "\n\n".join(" ".join(f"{tag}{p}x{i}" for i in range(words)) for p in range(n)) + "\n"


@pytest.fixture
def source() -> InMemoryFileSource:
    src = InMemoryFileSource()
    src.write(WS / "docs" / "a.md", "# Alpha\n\nalpha deployment notes\n")
    src.write(WS / "notes" / "b.txt", "bravo rollback\n")
    return src


MODE = "in_process"


@pytest.fixture(autouse=True, params=["in_process", "pool"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(f"{__name__}.MODE", request.param)
    return request.param


def make(source, *, store=None, chunker=None, fallback=None, config=None, lock=None, clock=lambda: 1.7e9, pool=None):
    """The use case over fakes. In ``pool`` mode every run, however small, goes through ``pool``
    (default: a fresh :class:`InlineTaskPool`) with the same fake adapters as worker tools."""
    config = config or WorkspaceConfig(chunking=ChunkingConfig(chunk_size=50, overlap=5, threshold=20))
    decoder = Utf8Decoder()
    chunker = chunker or ParagraphChunker(overlap=config.chunking.overlap)
    fallback = fallback or ParagraphChunker(name="fallback")
    parallel = {}
    if MODE == "pool":
        parallel = {
            "pool": pool if pool is not None else InlineTaskPool(window=3),
            "worker_tools": partial(FileTools, source, decoder, chunker, fallback),
            "parallel_min_files": 0,
            "parallel_min_bytes": 0,
        }
    return IndexWorkspace(
        config=config,
        home=HOME,
        source=source,
        decoder=decoder,
        chunker=chunker,
        fallback_chunker=fallback,
        store=store if store is not None else InMemoryIndexStore(),
        lock=lock or InMemoryIndexLock(),
        layout=InMemoryLayout(),
        clock=clock,
        **parallel,
    )


def test_first_run_indexes_every_file_and_records_metadata(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    summary = make(source, store=store).execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.chunks_created, summary.files_skipped, summary.files_errored) == (2, 2, 0, 0)
    record = store.get_file(WS / "docs" / "a.md")
    assert record is not None
    assert record.root == WS
    assert record.size == len("# Alpha\n\nalpha deployment notes\n")
    assert record.indexed_at == "2023-11-14T22:13:20Z"
    assert record.chunk_count == 1
    _, chunks = store.files[WS / "docs" / "a.md"]
    assert chunks[0].section == "# Alpha"
    assert (chunks[0].line_start, chunks[0].line_end) == (1, 3)


def test_unchanged_files_are_skipped_without_reading(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    make(source, store=store).execute(RecordingProgressSink())
    source.reads.clear()
    summary = make(source, store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 0
    assert summary.skipped == {"unchanged": 2}
    assert source.reads == []


def test_touched_file_with_same_content_is_read_but_not_rechunked(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    make(source, store=store).execute(RecordingProgressSink())
    path = WS / "notes" / "b.txt"
    source.mtimes[path] += 10
    chunker = ParagraphChunker(overlap=5)
    summary = make(source, store=store, chunker=chunker).execute(RecordingProgressSink())
    assert summary.skipped == {"unchanged": 2}
    assert source.reads[-1] == path
    assert store.get_file(path).mtime_ns == source.mtimes[path]


def test_changed_file_is_replaced_and_deleted_file_pruned(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    make(source, store=store).execute(RecordingProgressSink())
    source.write(WS / "notes" / "b.txt", "charlie replaced\n")
    del source.files[WS / "docs" / "a.md"]
    summary = make(source, store=store).execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.files_pruned) == (1, 1)
    assert store.get_file(WS / "docs" / "a.md") is None
    _, chunks = store.files[WS / "notes" / "b.txt"]
    assert [c.content for c in chunks] == ["charlie replaced"]


class ReplacingSource(InMemoryFileSource):
    """A fake whose ``replaced`` files are another file by the time they are read."""

    replaced: frozenset[Path] = frozenset()

    def read_bytes(self, file):  # noqa: ANN001, ANN201 - the fake's own signature
        if file.path in self.replaced:
            from hermes_workspace.adapters.filesystem_source import FileChangedError

            raise FileChangedError(116, "replaced since the walk (by another file, a link or a pipe); not read",
                                   str(file.path))
        return super().read_bytes(file)


def test_files_deleted_or_replaced_during_a_run_are_skips_not_errors() -> None:
    # Trial: `rm -rf repo && git clone ...` under a watch: hundreds of "errors" and warnings
    # (FileNotFoundError, FileChangedError) for files that were simply gone or new.
    gone, replaced, kept = WS / "docs" / "gone.md", WS / "docs" / "new.md", WS / "docs" / "kept.md"
    source = ReplacingSource()
    for path in (gone, replaced, kept):
        source.write(path, f"# {path.stem}\n\n{path.stem} words here\n")
    store = InMemoryIndexStore()
    make(source, store=store).execute(RecordingProgressSink())
    for path in (gone, replaced, kept):
        source.write(path, f"# {path.stem}\n\n{path.stem} other words\n")
    source.vanish_on_read.add(gone)
    source.replaced = frozenset({replaced})
    summary = make(source, store=store).execute(RecordingProgressSink())
    assert (summary.files_errored, summary.errors) == (0, [])
    assert summary.skipped == {"vanished": 1, "replaced": 1}
    assert (summary.files_indexed, summary.files_pruned) == (1, 1)
    assert store.get_file(gone) is None  # pruned by this run, as a deleted file
    assert store.get_file(kept) is not None


def test_chunking_settings_change_rechunks_every_file(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    # Two lines per paragraph, so that overlap can start at a line inside the previous chunk.
    long_text = paragraphs(6).replace("x4 ", "x4\n")
    source.write(WS / "notes" / "long.txt", long_text)
    make(source, store=store).execute(RecordingProgressSink())
    before = [c.start_char for c in store.files[WS / "notes" / "long.txt"][1]]
    assert before == [0, 25, 76, 127, 178, 229]

    config = WorkspaceConfig(chunking=ChunkingConfig(chunk_size=50, overlap=0, threshold=20))
    summary = make(source, store=store, config=config).execute(RecordingProgressSink())
    after = [c.start_char for c in store.files[WS / "notes" / "long.txt"][1]]
    assert summary.files_indexed == 3
    assert before != after
    assert after == [0, 51, 102, 153, 204, 255]


def test_small_file_is_one_chunk_and_large_file_goes_to_the_chunker(source: InMemoryFileSource) -> None:
    chunker = ParagraphChunker(overlap=5)
    source.write(WS / "notes" / "long.txt", paragraphs(3))
    make(source, chunker=chunker).execute(RecordingProgressSink())
    assert chunker.calls == [WS / "notes" / "long.txt"]


def test_failing_chunker_falls_back_to_default(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(WS / "docs" / "long.md", paragraphs(3))
    fallback = ParagraphChunker(name="fallback")
    summary = make(source, store=store, chunker=ParagraphChunker(fail_on="*.md"), fallback=fallback).execute(
        RecordingProgressSink()
    )
    assert summary.files_errored == 0
    assert fallback.calls == [WS / "docs" / "long.md"]
    assert len(store.files[WS / "docs" / "long.md"][1]) == 3
    assert summary.notes == [
        f"1 file was chunked by the built-in text chunker because their chunker failed (first: "
        f"{WS / 'docs' / 'long.md'}: RuntimeError: paragraph chunker failed); the next index "
        "run gives them to their chunker again, and the log has each traceback"
    ]


def test_a_file_chunked_by_the_fallback_goes_back_to_its_chunker_on_the_next_run(source: InMemoryFileSource) -> None:
    """Found by a trial: after the plugin was fixed, the file kept its fallback chunks (skipped as
    unchanged) until its bytes changed."""
    store = InMemoryIndexStore()
    source.write(WS / "docs" / "long.md", paragraphs(3))
    source.write(WS / "docs" / "other.md", paragraphs(3))
    make(source, store=store, chunker=ParagraphChunker(fail_on="long.md")).execute(RecordingProgressSink())
    fixed = ParagraphChunker()  # the same chunker (same signature), no longer failing
    summary = make(source, store=store, chunker=fixed).execute(RecordingProgressSink())
    assert fixed.calls == [WS / "docs" / "long.md"]
    assert (summary.files_indexed, summary.notes) == (1, [])
    again = make(source, store=store, chunker=fixed).execute(RecordingProgressSink())
    assert (again.files_indexed, fixed.calls) == (0, [WS / "docs" / "long.md"])


def test_chunk_failure_in_both_chunkers_is_a_chunk_error_and_the_run_goes_on(source: InMemoryFileSource) -> None:
    source.write(WS / "docs" / "long.md", paragraphs(3))
    summary = make(
        source, chunker=ParagraphChunker(fail_on="*.md"), fallback=ParagraphChunker(fail_on="*.md")
    ).execute(RecordingProgressSink())
    assert summary.files_indexed == 2
    assert [e.to_json() for e in summary.errors] == [
        {"path": str(WS / "docs" / "long.md"), "stage": "chunk", "error_type": "RuntimeError",
         "message": "paragraph chunker failed"}
    ]


def test_read_failures_are_reported_by_stage(source: InMemoryFileSource) -> None:
    source.write(WS / "notes" / "latin1.txt", "caf\xe9".encode("latin-1"))
    source.write(WS / "notes" / "blob.txt", b"abc\x00def")
    source.write(WS / "notes" / "gone.txt", "soon gone\n")
    source.vanish_on_read.add(WS / "notes" / "gone.txt")
    summary = make(source).execute(RecordingProgressSink())
    assert summary.files_indexed == 2
    assert summary.skipped == {"binary_content": 1, "vanished": 1}  # gone.txt: deleted, not broken
    by_path = {Path(e.path).name: (e.stage, e.error_type) for e in summary.errors}
    assert by_path == {"latin1.txt": ("read", "EncodingError")}


def test_store_failure_is_isolated(source: InMemoryFileSource) -> None:
    store = FailingStore("a.md")
    summary = make(source, store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 1
    assert [(e.stage, e.error_type, e.message) for e in summary.errors] == [("store", "OSError", "disk full")]


def test_errors_are_capped_at_fifty_but_all_counted() -> None:
    src = InMemoryFileSource()
    for i in range(60):
        src.write(WS / f"bad{i:02}.txt", b"\xff\xfe\xfa bad")
    summary = make(src).execute(RecordingProgressSink())
    assert summary.files_errored == 60
    assert len(summary.errors) == 50
    assert summary.errors_truncated is True
    assert summary.to_json()["errors_truncated"] is True


def test_missing_root_is_reported_and_its_files_are_not_pruned(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(NOTES / "n.txt", "november\n")
    config = WorkspaceConfig(roots=(Root(NOTES, recursive=False),))
    make(source, store=store, config=config).execute(RecordingProgressSink())
    assert store.get_file(NOTES / "n.txt") is not None

    del source.files[NOTES / "n.txt"]
    summary = make(source, store=store, config=config).execute(RecordingProgressSink())
    assert [(e.path, e.stage) for e in summary.errors] == [(str(NOTES), "discover")]
    assert summary.files_pruned == 0
    assert store.get_file(NOTES / "n.txt") is not None


def test_removed_root_files_are_pruned(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(NOTES / "n.txt", "november\n")
    make(source, store=store, config=WorkspaceConfig(roots=(Root(NOTES),))).execute(RecordingProgressSink())
    summary = make(source, store=store, config=WorkspaceConfig()).execute(RecordingProgressSink())
    assert summary.files_pruned == 1
    assert store.get_file(NOTES / "n.txt") is None


def test_non_recursive_root_ignores_subfolders(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(NOTES / "top.txt", "top level\n")
    source.write(NOTES / "sub" / "deep.txt", "deep level\n")
    make(source, store=store, config=WorkspaceConfig(roots=(Root(NOTES),))).execute(RecordingProgressSink())
    assert store.get_file(NOTES / "top.txt") is not None
    assert store.get_file(NOTES / "sub" / "deep.txt") is None


def test_skipped_files_are_counted_by_reason(source: InMemoryFileSource) -> None:
    source.write(WS / "pic.png", b"\x89PNG")
    source.write(WS / "empty.txt", b"")
    source.write(WS / "blank.txt", "   \n\n")
    summary = make(source).execute(RecordingProgressSink())
    assert summary.skipped == {"binary_suffix": 1, "empty": 2}
    assert summary.files_skipped == 3


def test_progress_reports_each_file_in_order(source: InMemoryFileSource) -> None:
    progress = RecordingProgressSink()
    make(source).execute(progress)
    assert progress.events == [
        ("start", 2),
        ("advance", 1, 2, WS / "docs" / "a.md"),
        ("advance", 2, 2, WS / "notes" / "b.txt"),
        ("finish",),
    ]


def test_second_concurrent_run_is_refused(source: InMemoryFileSource) -> None:
    lock = InMemoryIndexLock()
    with lock.hold(), pytest.raises(IndexBusyError) as info:
        make(source, lock=lock).execute(RecordingProgressSink())
    assert info.value.code == "index_busy"


def test_disabled_workspace_indexes_only_added_roots(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(NOTES / "n.txt", "november\n")
    config = replace(WorkspaceConfig(roots=(Root(NOTES),)), enabled=False)
    summary = make(source, store=store, config=config).execute(RecordingProgressSink())
    assert summary.files_indexed == 1
    assert [r.path for r in store.file_records()] == [NOTES / "n.txt"]


class ProblemSource(InMemoryFileSource):
    """Reports one folder as unreadable and hides the files under it."""

    def __init__(self, problem: Path) -> None:
        super().__init__()
        self.problem = problem
        self.active = False

    def discover(self, roots):  # type: ignore[no-untyped-def]
        for item in super().discover(roots):
            if self.active and self.problem in item.path.parents:
                continue
            yield item
        if self.active:
            yield DiscoveryProblem(self.problem, WS, "PermissionError", "permission denied")


def test_files_under_an_unreadable_folder_are_kept_not_pruned() -> None:
    src = ProblemSource(WS / "private")
    src.write(WS / "private" / "secret.txt", "kept\n")
    src.write(WS / "public.txt", "public\n")
    store = InMemoryIndexStore()
    make(src, store=store).execute(RecordingProgressSink())
    src.active = True
    del src.files[WS / "public.txt"]
    summary = make(src, store=store).execute(RecordingProgressSink())
    assert summary.files_pruned == 1
    assert [(e.path, e.stage, e.error_type) for e in summary.errors] == [
        (str(WS / "private"), "discover", "PermissionError")
    ]
    assert store.get_file(WS / "private" / "secret.txt") is not None
    assert store.get_file(WS / "public.txt") is None


def test_the_index_folder_itself_is_never_indexed() -> None:
    src = InMemoryFileSource()
    src.write(WS / ".index" / "workspace.sqlite-wal", "looks like text\n")
    src.write(WS / "a.txt", "alpha\n")
    store = InMemoryIndexStore()
    summary = make(src, store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 1
    assert [r.path for r in store.file_records()] == [WS / "a.txt"]


def test_a_file_that_becomes_undecodable_loses_its_old_chunks(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    make(source, store=store).execute(RecordingProgressSink())
    source.write(WS / "notes" / "b.txt", b"\xff\xfe\xfa no longer utf-8")
    summary = make(source, store=store).execute(RecordingProgressSink())
    assert [(e.stage, e.error_type) for e in summary.errors] == [("read", "EncodingError")]
    assert store.get_file(WS / "notes" / "b.txt") is None
    assert make(source, store=store).execute(RecordingProgressSink()).files_errored == 1


def test_a_file_that_fails_both_chunkers_loses_its_old_chunks(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(WS / "docs" / "long.md", paragraphs(3))
    make(source, store=store).execute(RecordingProgressSink())
    source.write(WS / "docs" / "long.md", paragraphs(4))
    summary = make(
        source, store=store, chunker=ParagraphChunker(fail_on="*.md"), fallback=ParagraphChunker(fail_on="*.md")
    ).execute(RecordingProgressSink())
    assert [e.stage for e in summary.errors] == ["chunk"]
    assert store.get_file(WS / "docs" / "long.md") is None


def test_whitespace_only_files_are_empty_on_every_run(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(WS / "blank.txt", "  \n\t\n")
    first = make(source, store=store).execute(RecordingProgressSink())
    second = make(source, store=store).execute(RecordingProgressSink())
    assert first.skipped == {"empty": 1}
    assert second.skipped == {"empty": 1, "unchanged": 2}
    assert store.get_file(WS / "blank.txt") is None


class SwallowingChunker(ParagraphChunker):
    """Turns a Ctrl-C (``interrupt``) into another error while handling it, as chonkie was seen to do."""

    def __init__(self, interrupt: type[KeyboardInterrupt] = KeyboardInterrupt) -> None:
        super().__init__()
        self.interrupt = interrupt

    def chunk(self, text, path):  # type: ignore[no-untyped-def]
        try:
            raise self.interrupt
        except KeyboardInterrupt:
            raise UnboundLocalError("local variable referenced before assignment")  # noqa: B904


class Stopped(KeyboardInterrupt):
    """A KeyboardInterrupt of its own kind, as the CLI raises on SIGTERM."""


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, Stopped])
def test_a_swallowed_interrupt_stops_the_run_instead_of_falling_back(
    source: InMemoryFileSource, interrupt: type[KeyboardInterrupt]
) -> None:
    source.write(WS / "docs" / "long.md", paragraphs(3))
    fallback = ParagraphChunker(name="fallback")
    with pytest.raises(KeyboardInterrupt) as raised:
        make(source, chunker=SwallowingChunker(interrupt), fallback=fallback).execute(RecordingProgressSink())
    assert type(raised.value) is interrupt  # a SIGTERM stays a SIGTERM
    assert fallback.calls == []


def test_a_long_file_of_few_words_goes_to_the_chunker() -> None:
    src = InMemoryFileSource()
    src.write(WS / "min.js", "var a=" + "x" * 20_000 + ";\n")
    src.write(WS / "short.js", "var b=1;\n")
    chunker = ParagraphChunker()
    config = WorkspaceConfig(chunking=ChunkingConfig(chunk_size=50, overlap=5, threshold=20))
    make(src, chunker=chunker, config=config).execute(RecordingProgressSink())
    assert chunker.calls == [WS / "min.js"]


# -- the task pool and batched writes ---------------------------------------------------------------



class RecordingLog:
    """Stands in for the module's structlog logger (``capture_logs`` misses loggers that a CLI
    test configured with ``cache_logger_on_first_use`` earlier in the session)."""

    def __init__(self) -> None:
        self.records: list[dict[str, object]] = []

    def _record(self, level: str, event: str, **fields: object) -> None:
        self.records.append({"event": event, "level": level, **fields})

    def info(self, event: str, **fields: object) -> None:
        self._record("info", event, **fields)

    def warning(self, event: str, **fields: object) -> None:
        self._record("warning", event, **fields)


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    recording = RecordingLog()
    monkeypatch.setattr(indexing, "log", recording)
    return recording.records


def many_files(n: int, *, words: int = 30) -> InMemoryFileSource:
    """``n`` files of two paragraphs (above the fakes' threshold, so the chunker runs), with a few
    that fail: an undecodable one, a binary one, a blank one."""
    src = InMemoryFileSource()
    for i in range(n):
        src.write(WS / "notes" / f"n{i:03}.txt", paragraphs(2, words // 2, tag=f"f{i}w"))
    src.write(WS / "notes" / "bad.txt", b"\xff\xfe\xfa not utf-8")
    src.write(WS / "notes" / "bin.txt", b"abc\x00def")
    src.write(WS / "notes" / "blank.txt", "  \n")
    return src


def snapshot(store: InMemoryIndexStore) -> dict[Path, tuple[object, list[object]]]:
    return {path: (replace(record, indexed_at=""), chunks) for path, (record, chunks) in store.files.items()}


def run_in_process(source: InMemoryFileSource) -> tuple[object, InMemoryIndexStore]:
    store = InMemoryIndexStore()
    use_case = make(source, store=store)
    use_case.pool = None
    return use_case.execute(RecordingProgressSink()), store


def with_pool(use_case: IndexWorkspace, pool: InlineTaskPool, *, min_files: int = 0, min_bytes: int = 0) -> IndexWorkspace:
    """``use_case`` with ``pool``, whose worker tools are the use case's own fakes."""
    use_case.pool = pool
    use_case.worker_tools = partial(
        FileTools, use_case.source, use_case.decoder, use_case.chunker, use_case.fallback_chunker
    )
    use_case.parallel_min_files, use_case.parallel_min_bytes = min_files, min_bytes
    return use_case


def test_the_pool_gives_exactly_what_the_in_process_run_gives() -> None:
    expected_summary, expected = run_in_process(many_files(40))
    pool = InlineTaskPool(window=5)
    store = InMemoryIndexStore()
    summary = with_pool(make(many_files(40), store=store), pool).execute(RecordingProgressSink())
    assert pool.setups == 1
    assert pool.items_seen == 43
    assert snapshot(store) == snapshot(expected)
    assert replace(summary, duration_seconds=0) == replace(expected_summary, duration_seconds=0)


def test_small_runs_stay_in_process_and_large_ones_use_the_pool(mode: str) -> None:
    src = many_files(20)
    pool = InlineTaskPool()
    use_case = with_pool(make(src), pool, min_files=8, min_bytes=10_000_000)
    use_case.execute(RecordingProgressSink())
    assert pool.setups == 0  # 23 files, but a few kilobytes

    src.write(WS / "notes" / "n000.txt", "edited\n")
    use_case.parallel_min_bytes = 1
    use_case.execute(RecordingProgressSink())
    assert pool.setups == 0  # the edited file and the 3 never stored (they are read every run): < 8

    use_case.parallel_min_files = 1
    use_case.execute(RecordingProgressSink())
    assert pool.setups == 1
    assert pool.items_seen == 3  # only the 3 never stored: unchanged files never reach the pool


def test_without_worker_tools_the_pool_is_not_used() -> None:
    pool = InlineTaskPool()
    use_case = with_pool(make(many_files(20)), pool)
    use_case.worker_tools = None
    assert use_case.execute(RecordingProgressSink()).files_indexed == 20
    assert pool.setups == 0


def test_a_failing_pool_leaves_the_rest_to_this_process(mode: str, logs: list[dict[str, object]]) -> None:
    _, expected = run_in_process(many_files(30))
    pool = InlineTaskPool(window=4, fail_after=11)
    store = InMemoryIndexStore()
    use_case = with_pool(make(many_files(30), store=store), pool)
    progress = RecordingProgressSink()
    summary = use_case.execute(progress)
    assert snapshot(store) == snapshot(expected)
    assert (summary.files_indexed, summary.files_errored) == (30, 1)
    assert [e[1] for e in progress.events if e[0] == "advance"] == list(range(1, 34))
    [warning] = [r for r in logs if str(r["event"]).startswith("worker processes failed")]
    assert warning["files_left"] == 33 - 11
    assert pool.closed == 1


def test_failures_are_logged_with_their_exception(mode: str, logs: list[dict[str, object]]) -> None:
    src = InMemoryFileSource()
    src.write(WS / "bad.txt", b"\xff\xfe\xfa not utf-8")
    src.write(WS / "docs" / "long.md", paragraphs(3))
    make(src, chunker=ParagraphChunker(fail_on="*.md")).execute(RecordingProgressSink())
    failed = next(r for r in logs if r["event"] == "file failed")
    assert (failed["stage"], failed["error_type"]) == ("read", "EncodingError")
    assert isinstance(failed["exc_info"], DecodeError)
    fallback = next(r for r in logs if r["event"] == "chunker failed, using the default chunker")
    assert fallback["path"] == str(WS / "docs" / "long.md")
    assert isinstance(fallback["exc_info"], RuntimeError)


class Unpicklable(Exception):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a} and {b}")


def test_a_problem_crossing_processes_keeps_its_exception_type_and_traceback() -> None:
    def raised(exc: Exception) -> Exception:
        try:
            raise exc
        except Exception as caught:  # noqa: BLE001
            return caught

    copy = pickle.loads(pickle.dumps(Problem.of(raised(DecodeError("not UTF-8 at byte 3")))))
    assert (copy.error_type, copy.message) == ("EncodingError", "not UTF-8 at byte 3")
    assert type(copy.exception) is DecodeError
    assert isinstance(copy.exception.__cause__, WorkerTraceback)
    assert "raise exc" in str(copy.exception.__cause__)

    odd = pickle.loads(pickle.dumps(Problem.of(raised(Unpicklable("x", "y")))))
    assert (odd.error_type, odd.message) == ("Unpicklable", "x and y")
    assert type(odd.exception) is WorkerError
    assert "Unpicklable: x and y" in str(odd.exception)


def test_process_file_reports_unchanged_content_without_decoding() -> None:
    src = InMemoryFileSource()
    src.write(WS / "a.txt", b"\xff not utf-8 but unchanged")
    [file] = [f for f in src.discover([Root(WS)]) if f.path.name == "a.txt"]
    tools = FileTools(src, Utf8Decoder(), ParagraphChunker(), ParagraphChunker())
    first = process_file(tools, FileTask(file), chunking=ChunkingConfig())
    assert (first.status, first.stage) == ("failed", "read")
    again = process_file(tools, FileTask(file, indexed=True, known_hash=first.content_hash), chunking=ChunkingConfig())
    assert (again.status, again.size) == ("unchanged", len(src.files[file.path]))


def test_writes_are_batched_and_every_file_counted_once_committed(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 10)
    store = InMemoryIndexStore()
    summary = make(many_files(25), store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 25
    assert len(store.files) == 25
    assert store.commits == 3  # 28 candidates: 10 + 10 + 8


class FailingCommitStore(InMemoryIndexStore):
    """Fails the commit of its ``fail_commit``-th batch (1-based) with ``error``, undoing that
    batch."""

    def __init__(self, fail_commit: int, error: StoreError | None = None) -> None:
        super().__init__()
        self.fail_commit = fail_commit
        self.error = error or StoreError("deferred constraint failed at commit")
        self.batches = 0

    @contextmanager
    def batch(self):  # type: ignore[no-untyped-def]
        self.batches += 1
        with super().batch():
            yield
            if self.batches == self.fail_commit:
                raise self.error


def test_a_failed_commit_reports_each_file_of_its_batch(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 10)
    store = FailingCommitStore(fail_commit=2)
    summary = make(many_files(25), store=store).execute(RecordingProgressSink())
    lost = {e.path for e in summary.errors if e.stage == "store"}
    assert len(lost) == 10
    assert summary.files_indexed == 15
    assert summary.files_errored == 11  # and bad.txt
    assert {str(p) for p in store.files}.isdisjoint(lost)
    assert all(e.message.startswith("deferred constraint") for e in summary.errors if e.stage == "store")


def _files_indexed_in(error: StoreUnusableError) -> int:
    found = re.search(r"indexing stopped after (\d+) files? had been indexed in this run", error.message)
    assert found is not None, error.message
    return int(found.group(1))


def test_a_failed_commit_of_the_whole_database_stops_the_run(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Disk full at a commit: not 10 per-file errors and an exit 0, but the run's error, saying
    how many files the committed batches hold."""
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 10)
    full = StoreUnusableError("cannot commit: database or disk is full", hint="Free space.")
    store = FailingCommitStore(fail_commit=2, error=full)
    progress = RecordingProgressSink()
    with pytest.raises(StoreUnusableError) as info:
        make(many_files(25), store=store).execute(progress)
    assert info.value.__cause__ is full
    assert (info.value.code, info.value.exit_code) == ("store_error", 74)
    assert _files_indexed_in(info.value) == len(store.files) == 10  # the first batch
    assert info.value.message.startswith("cannot commit: database or disk is full; ")
    assert info.value.hint.startswith("Free space. Then run `hermes-workspace index` again")
    assert store.batches == 2  # nothing was written after the failure
    assert progress.events[-1] == ("finish",)


class DatabaseFailsStore(InMemoryIndexStore):
    """Raises ``error`` when asked to store the file named ``name``, and, when ``sticky``, for
    every write after that (as a full disk would)."""

    def __init__(self, name: str, error: StoreError, *, sticky: bool = True) -> None:
        super().__init__()
        self.name = name
        self.error = error
        self.sticky = sticky
        self.failed = 0

    def replace_file(self, record, chunks):  # type: ignore[no-untyped-def]
        if record.path.name == self.name or (self.sticky and self.failed):
            self.failed += 1
            raise self.error
        super().replace_file(record, chunks)


def test_a_database_failure_stops_the_run_and_keeps_the_committed_files(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 5)
    store = DatabaseFailsStore("n012.txt", StoreUnusableError("cannot store: disk I/O error"))
    with pytest.raises(StoreUnusableError) as info:
        make(many_files(40), store=store).execute(RecordingProgressSink())
    assert store.failed == 1  # the first failure ended the run
    # The open batch (n010, n011) was committed on the way out: every write in it was whole.
    assert sorted(p.name for p in store.files) == [f"n{i:03}.txt" for i in range(12)]
    assert _files_indexed_in(info.value) == 12

    # Space freed: the next run does only the rest.
    store.failed, store.name = 0, ""
    summary = make(many_files(40), store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 28
    assert summary.skipped["unchanged"] == 12


def test_a_failure_of_one_files_write_is_that_files_error(mode: str) -> None:
    error = StoreError("UNIQUE constraint failed: chunks.file_id, chunks.chunk_index")
    store = DatabaseFailsStore("n003.txt", error, sticky=False)
    summary = make(many_files(8), store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 7
    assert [(e.path.rsplit("/", 1)[-1], e.stage, e.error_type) for e in summary.errors if e.stage == "store"] == [
        ("n003.txt", "store", "StoreError")
    ]


class NoBatchStore(InMemoryIndexStore):
    batch = None  # type: ignore[assignment]


def test_a_store_without_batches_gets_a_transaction_per_file(mode: str) -> None:
    store = NoBatchStore()
    summary = make(many_files(12), store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == len(store.files) == 12


class InterruptingStore(InMemoryIndexStore):
    """Raises KeyboardInterrupt while storing the file named ``name``."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def replace_file(self, record, chunks):  # type: ignore[no-untyped-def]
        if record.path.name == self.name:
            raise KeyboardInterrupt
        super().replace_file(record, chunks)


def test_ctrl_c_keeps_the_files_stored_before_it_and_stops_the_pool(mode: str) -> None:
    store = InterruptingStore("n007.txt")
    pool = InlineTaskPool(window=4)
    with pytest.raises(KeyboardInterrupt):
        make(many_files(20), store=store, pool=pool).execute(RecordingProgressSink())
    stored = sorted(p.name for p in store.files)
    assert stored == [f"n{i:03}.txt" for i in range(7)]
    assert store.commits == 1  # the open batch was committed on the way out
    if mode == "pool":
        assert pool.closed == 1


class RollbackFailingStore(InMemoryIndexStore):
    """While storing the file named ``name``, an ``interrupt`` arrives and the store's rollback
    fails with a StoreError (as SQLite's ROLLBACK TO a savepoint already released did)."""

    def __init__(self, name: str, interrupt: type[KeyboardInterrupt]) -> None:
        super().__init__()
        self.name, self.interrupt = name, interrupt

    def replace_file(self, record, chunks):  # type: ignore[no-untyped-def]
        if record.path.name == self.name:
            try:
                raise self.interrupt
            except KeyboardInterrupt:
                raise StoreError("no such savepoint: batch_write")  # noqa: B904
        super().replace_file(record, chunks)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, Stopped])
def test_an_interrupt_that_a_store_error_hides_still_stops_the_run(
    mode: str, interrupt: type[KeyboardInterrupt]
) -> None:
    store = RollbackFailingStore("n007.txt", interrupt)
    with pytest.raises(KeyboardInterrupt) as raised:
        make(many_files(20), store=store).execute(RecordingProgressSink())
    assert type(raised.value) is interrupt
    assert sorted(p.name for p in store.files) == [f"n{i:03}.txt" for i in range(7)]


def test_a_batch_is_committed_early_when_it_holds_much_text(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_writer, "BATCH_MAX_CHARS", 1_000)
    store = InMemoryIndexStore()
    summary = make(many_files(10, words=60), store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 10
    assert store.commits >= 3  # each file holds ~600 characters


class _LyingChunker:
    """Returns what a broken plugin might: ``shape`` picks the lie."""

    signature = "lying"

    def __init__(self, shape: str) -> None:
        self.shape = shape

    def chunk(self, text: str, path: Path) -> object:
        good = ParagraphChunker().chunk(text, path)
        if self.shape == "none":
            return None
        if self.shape == "exit":
            raise SystemExit(3)
        if self.shape == "dicts":
            return [{"content": c.content} for c in good]
        if self.shape == "lines":
            return [replace(good[0], line_start=500, line_end=400), *good[1:]]
        if self.shape == "content":
            return [replace(good[0], content="made up"), *good[1:]]
        if self.shape == "empty":
            return []
        if self.shape == "tokens":
            return [replace(good[0], tokens="many"), *good[1:]]
        if self.shape == "kind":
            return [replace(good[0], kind="banana"), *good[1:]]
        if self.shape == "section":
            return [replace(good[0], section=123), *good[1:]]
        if self.shape == "reversed":
            return list(reversed(good))
        return [replace(c, index=7 + i) for i, c in enumerate(good)]  # "indexes": renumbered, accepted


@pytest.mark.parametrize(("shape", "problem"), [
    ("none", "ValueError: the chunker returned NoneType, not a list of Chunk"),
    ("dicts", "ValueError: item 0 of the chunker's list is a dict, not a Chunk"),
    ("lines", "ValueError: chunk 0: lines 500-400 given, its content is on lines 1-1"),
    ("content", "ValueError: chunk 0: its content is not the text from start_char 0 to end_char"),
    # Found by a third trial: `[]` for a file with text dropped it as "empty".
    ("empty", "ValueError: the chunker returned no chunk for a text that is not blank"),
    ("kind", "ValueError: chunk 0: kind is 'banana', not one of markdown, code, text"),
    ("section", "ValueError: chunk 0: section is a int, not text or None"),
    ("reversed", "ValueError: chunk 1 starts before chunk 0: chunks come in text order"),
    # Found by a third trial: a plugin's sys.exit(3) ended the run (and the MCP server).
    ("exit", "PluginExit: the plugin called sys.exit(3)"),
])
def test_a_chunker_output_that_breaks_the_contract_is_never_stored(
    source: InMemoryFileSource, shape: str, problem: str
) -> None:
    """Found by a trial: a plugin's chunks with invented line ranges were stored as they were (a
    hit's `read` then failed), `None` counted as an empty file, dicts failed at the store."""
    store = InMemoryIndexStore()
    path = WS / "docs" / "long.md"
    source.write(path, paragraphs(3))
    summary = make(source, store=store, chunker=_LyingChunker(shape)).execute(RecordingProgressSink())
    assert summary.files_errored == 0 and summary.files_indexed >= 1
    [note] = summary.notes
    assert f"(first: {path}: {problem}" in note
    stored = store.files[path][1]
    assert [(c.line_start, c.line_end) for c in stored] == [(1, 1), (3, 3), (5, 5)]


def test_a_chunker_output_with_other_indexes_is_renumbered(source: InMemoryFileSource) -> None:
    store = InMemoryIndexStore()
    source.write(WS / "docs" / "long.md", paragraphs(3))
    summary = make(source, store=store, chunker=_LyingChunker("indexes")).execute(RecordingProgressSink())
    assert summary.notes == []
    assert [c.index for c in store.files[WS / "docs" / "long.md"][1]] == [0, 1, 2]


def test_a_chunker_s_token_counts_are_counted_again(source: InMemoryFileSource) -> None:
    """Found by a third trial: `tokens="many"` was stored and broke every search that ranked the
    chunk (exit 70); tokens are words of the content, counted by us."""
    store = InMemoryIndexStore()
    source.write(WS / "docs" / "long.md", paragraphs(3))
    summary = make(source, store=store, chunker=_LyingChunker("tokens")).execute(RecordingProgressSink())
    assert summary.notes == []
    assert [c.tokens for c in store.files[WS / "docs" / "long.md"][1]] == [10, 10, 10]
