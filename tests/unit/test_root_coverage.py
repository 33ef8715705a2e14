"""Per-root coverage (issue 12) over fakes: what an index run counts per root, what the store
keeps across runs, and the ``scope["coverage"]`` rows a search reports (complete, partial with
its counts, unavailable with its reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import (
    HashEmbedder,
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    InMemoryVectorIndex,
    ParagraphChunker,
    Utf8Decoder,
)
from hermes_workspace.application.embedding import EmbedChunks
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.application.search import RetrievalSettings, SearchWorkspace, SemanticSide
from hermes_workspace.domain.config import ChunkingConfig, WorkspaceConfig
from hermes_workspace.domain.model import (
    Chunk,
    FileFailure,
    FileRecord,
    IndexSummary,
    Root,
    RootCounts,
    RootCoverage,
    coverage_line,
)

HOME = Path("/home/u/.hermes")
WS = HOME / "workspace"
NOTES = Path("/data/notes")
GONE = Path("/data/gone")
WHEN = "2026-04-15T10:32:00Z"


# -- counting during an index run ----------------------------------------------------------------


def test_the_summary_counts_what_each_root_leaves_unsearched() -> None:
    summary = IndexSummary()
    # /data/notes is configured through a link: the source yields paths under /srv/notes.
    summary.track_roots([(WS, WS), (NOTES, Path("/srv/notes")), (Path("/data"), Path("/data"))])
    summary.add_skip("too_large", WS / "big.log")
    summary.add_skip("binary_suffix", WS / "a.png")  # no text: by design, not counted
    summary.add_skip("empty", WS / "e.txt")
    summary.add_skip("converter_unavailable", Path("/srv/notes/report.pdf"))
    summary.add_skip("budget", Path("/srv/notes/late.md"))  # the index reached its size limit
    summary.add_exclusion("outside_roots", WS / "link.md")
    summary.add_exclusion("secret", WS / ".env")  # by design
    summary.add_exclusion("version_control", NOTES / ".git")  # by design
    summary.add_error(FileFailure(str(NOTES / "x.md"), "read", "PermissionError", "denied"))
    summary.add_error(FileFailure(str(WS / ".gitignore"), "discover", "IgnorePatternError", "line 3 ignored"))
    summary.add_error(FileFailure("/data/top.md", "chunk", "ChunkingError", "bad"))
    summary.add_error(FileFailure("/elsewhere/z.md", "read", "OSError", "gone"))  # under no root
    assert summary.root_counts(WHEN) == {
        WS: RootCounts(WHEN, unreadable=0, too_large=1, excluded=1),
        NOTES: RootCounts(WHEN, unreadable=1, too_large=0, excluded=2),  # the deepest root, not /data
        Path("/data"): RootCounts(WHEN, unreadable=1, too_large=0, excluded=0),
    }
    # The run's totals are unchanged by the per-root counting.
    assert (summary.files_skipped, summary.files_errored, summary.excluded) == (
        5, 4, {"outside_roots": 1, "secret": 1, "version_control": 1})
    assert IndexSummary().root_counts(WHEN) == {}  # a run that walked no root whole records nothing


def _indexer(source: InMemoryFileSource, store: InMemoryIndexStore, roots: tuple[Root, ...]) -> IndexWorkspace:
    return IndexWorkspace(
        config=WorkspaceConfig(roots=roots, chunking=ChunkingConfig(chunk_size=50, overlap=0, threshold=20)),
        home=HOME, source=source, decoder=Utf8Decoder(), chunker=ParagraphChunker(),
        fallback_chunker=ParagraphChunker(name="fallback"), store=store, lock=InMemoryIndexLock(),
        layout=InMemoryLayout(), clock=lambda: 1.7e9,
    )


@pytest.fixture
def indexed() -> tuple[InMemoryFileSource, InMemoryIndexStore]:
    """The primary workspace (one file), ``notes`` (one file and one over the 100-byte cap) and
    ``gone`` (configured, absent), indexed once."""
    source = InMemoryFileSource(max_file_bytes=100)
    source.write(WS / "plan.md", "the rollback plan\n")
    source.write(NOTES / "diary.md", "the rollback diary\n")
    source.write(NOTES / "huge.md", "rollback " * 40)
    store = InMemoryIndexStore()
    _indexer(source, store, (Root(NOTES), Root(GONE))).execute(_Silent())
    return source, store


class _Silent:
    def start(self, total: int) -> None: ...
    def advance(self, position: int, total: int, path: Path) -> None: ...
    def finish(self) -> None: ...


def test_an_index_run_records_each_root_s_counts(indexed: tuple[InMemoryFileSource, InMemoryIndexStore]) -> None:
    _, store = indexed
    when = "2023-11-14T22:13:20Z"  # the clock of the run
    assert store.root_counts() == {
        WS: RootCounts(when),
        NOTES: RootCounts(when, too_large=1),
        GONE: RootCounts(when, unreadable=1),  # the root itself could not be walked
    }


def test_a_run_over_some_roots_keeps_the_other_roots_counts(
    indexed: tuple[InMemoryFileSource, InMemoryIndexStore],
) -> None:
    _, store = indexed
    before = store.root_counts()
    store.record_root_counts({NOTES: RootCounts("2026-05-01T00:00:00Z")})
    assert store.root_counts() == {**before, NOTES: RootCounts("2026-05-01T00:00:00Z")}
    store.record_root_counts({})
    assert store.root_counts()[GONE] == before[GONE]


# -- what a search reports --------------------------------------------------------------------------


ROOTS = [Root(WS, recursive=True, primary=True, name="workspace"), Root(NOTES, name="notes"),
         Root(GONE, name="gone"), Root(Path("/data/new"), name="new")]


def test_search_reports_complete_partial_and_unavailable_roots(
    indexed: tuple[InMemoryFileSource, InMemoryIndexStore],
) -> None:
    _, store = indexed
    probe = {GONE: "missing"}
    search = SearchWorkspace(store=store, default_limit=10, roots=ROOTS, root_probe=probe.get)
    hits = search.execute("rollback")
    assert sorted(h.path.name for h in hits) == ["diary.md", "plan.md"]
    assert hits.scope["coverage"] == [
        {"root": "workspace", "state": "complete"},
        {"root": "notes", "state": "partial",
         "unsearched": {"unreadable": 0, "too_large": 1, "excluded": 0, "embedding_pending": 0}},
        {"root": "gone", "state": "unavailable", "reason": "missing"},
        {"root": "new", "state": "unavailable", "reason": "not_indexed"},  # added after the run
    ]
    # Only the roots of the scope, in its order.
    assert search.execute("rollback", roots=["notes"]).scope["coverage"] == [hits.scope["coverage"][1]]
    assert coverage_line(hits.scope["coverage"]) == (
        "coverage: workspace complete; notes partial (1 too large); gone unavailable (missing); "
        "new unavailable (not indexed)")


def test_a_root_there_now_but_unreadable_at_the_last_run_is_partial(
    indexed: tuple[InMemoryFileSource, InMemoryIndexStore],
) -> None:
    _, store = indexed
    search = SearchWorkspace(store=store, default_limit=10, roots=ROOTS, root_probe=lambda folder: None)
    assert search.execute("rollback", roots=["gone"]).scope["coverage"] == [
        {"root": "gone", "state": "partial",
         "unsearched": {"unreadable": 1, "too_large": 0, "excluded": 0, "embedding_pending": 0}}]


def test_the_folder_problem_at_query_time_comes_before_the_recorded_counts() -> None:
    counts = RootCounts(WHEN, unreadable=2)
    assert RootCoverage.of("a", counts, "not_readable").to_json() == {
        "root": "a", "state": "unavailable", "reason": "not_readable"}
    assert RootCoverage.of("a", None, "not_a_directory").to_json() == {
        "root": "a", "state": "unavailable", "reason": "not_a_directory"}
    assert RootCoverage.of("a", RootCounts(WHEN), None, pending=3).to_json() == {
        "root": "a", "state": "partial",
        "unsearched": {"unreadable": 0, "too_large": 0, "excluded": 0, "embedding_pending": 3}}
    assert RootCounts.from_json(counts.to_json()) == counts
    assert RootCounts.from_json({"indexed_at": WHEN, "unreadable": -1}) is None
    assert RootCounts.from_json("junk") is None


def _file(store: InMemoryIndexStore, path: Path, root: Path, text: str) -> None:
    record = FileRecord(path, root, "h", "s", len(text), 1, WHEN, WHEN)
    store.replace_file(record, [Chunk(0, text, 0, len(text), 1, 1, len(text.split()), "text")])


def test_chunks_without_vectors_make_a_root_partial_in_semantic_and_hybrid_searches_only() -> None:
    store = InMemoryIndexStore()
    _file(store, WS / "plan.md", WS, "the rollback plan of the gateway")
    embedder = HashEmbedder()
    vectors = InMemoryVectorIndex(store)
    EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    # Indexed after the embedding pass: two chunks of notes wait for their vectors.
    _file(store, NOTES / "a.md", NOTES, "rollback notes one")
    _file(store, NOTES / "b.md", NOTES, "rollback notes two")
    store.record_root_counts({WS: RootCounts(WHEN), NOTES: RootCounts(WHEN)})
    roots = ROOTS[:2]
    search = SearchWorkspace(store=store, default_limit=10, roots=roots,
                             semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
                             settings=RetrievalSettings(default_mode="hybrid"))
    expected = [{"root": "workspace", "state": "complete"},
                {"root": "notes", "state": "partial",
                 "unsearched": {"unreadable": 0, "too_large": 0, "excluded": 0, "embedding_pending": 2}}]
    assert search.execute("rollback").scope["coverage"] == expected
    assert search.execute("rollback", mode="semantic").scope["coverage"] == expected
    # Keyword search reads no vector: nothing is missing for it.
    assert search.execute("rollback", mode="keyword").scope["coverage"] == [
        {"root": "workspace", "state": "complete"}, {"root": "notes", "state": "complete"}]
    assert [row.to_json() for row in search.root_coverage(semantic=True)] == expected
    # Without an embedder no vector is expected.
    plain = SearchWorkspace(store=store, default_limit=10, roots=roots)
    assert [row.state for row in plain.root_coverage(semantic=True)] == ["complete", "complete"]
