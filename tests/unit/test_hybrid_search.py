"""Semantic and hybrid search and the embedding pass, built from fakes (application layer)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import (
    HashEmbedder,
    InMemoryIndexStore,
    InMemoryVectorIndex,
    RecordingProgressSink,
    ScriptedReranker,
)
from hermes_workspace.application import embedding
from hermes_workspace.application.embedding import EmbedChunks
from hermes_workspace.application.search import CJK_NOTE, RetrievalSettings, SearchWorkspace, SemanticSide, fuse
from hermes_workspace.domain.errors import (
    ConsentRequiredError,
    EmbedderUnavailableError,
    StoreError,
    StoreUnusableError,
    UsageError,
)
from hermes_workspace.domain.fusion import FusionWeights
from hermes_workspace.domain.model import SearchHit
from tests.store_files import make_file

ROLLBACK = "Rollback procedures: revert the deployment to the previous tag and restart the service."
PASTA = "Boil the pasta in salted water for nine minutes, then drain it."
RELEASE = "Release notes list every change shipped in a release."
ARABIC = "عبد المطلب بن هاشم جد النبي"


def _store() -> InMemoryIndexStore:
    store = InMemoryIndexStore()
    for name, paragraphs in {
        "/ws/ops/rollback.md": [(ROLLBACK, "## Rollback Procedures")],
        "/ws/notes/pasta.md": [PASTA],
        "/ws/notes/release.md": [RELEASE],
        "/ws/ar/history.txt": [ARABIC],
    }.items():
        store.replace_file(*make_file(name, paragraphs))
    return store


@pytest.fixture
def world() -> tuple[InMemoryIndexStore, HashEmbedder, InMemoryVectorIndex]:
    store = _store()
    embedder = HashEmbedder(synonyms={"undo": "rollback", "revert": "rollback"})
    vectors = InMemoryVectorIndex(store)
    report = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert report.status == "ready"
    return store, embedder, vectors


def _search(world, **settings) -> SearchWorkspace:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    return SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
        settings=RetrievalSettings(default_mode="hybrid", **settings),
    )


# -- the embedding pass ----------------------------------------------------------------------


def test_embedding_pass_embeds_readable_chunks_and_marks_the_others(world) -> None:  # type: ignore[no-untyped-def]
    _, embedder, vectors = world
    status = vectors.status()
    assert (status.chunks, status.embedded, status.unreadable, status.pending) == (4, 3, 1, 0)
    assert embedder.documents_embedded == 3  # the Arabic chunk was never sent to the model


def test_identical_chunks_are_embedded_once_and_unchanged_ones_never_again() -> None:
    store = InMemoryIndexStore()
    for name in ("/ws/a.md", "/ws/b.md", "/ws/c.md"):
        store.replace_file(*make_file(name, [RELEASE]))
    embedder = HashEmbedder()
    vectors = InMemoryVectorIndex(store)
    first = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert (first.embedded, first.reused, embedder.documents_embedded) == (1, 2, 1)
    second = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert (second.embedded, second.reused, second.pending, embedder.documents_embedded) == (0, 0, 0, 1)


def test_a_changed_file_re_embeds_that_file_only(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    before = embedder.documents_embedded
    store.replace_file(*make_file("/ws/notes/pasta.md", ["Boil the rice instead, twelve minutes."], content_hash="h2"))
    report = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert (report.embedded, report.reused, report.reembedded) == (1, 0, False)
    assert embedder.documents_embedded == before + 1
    assert report.vectors_pruned == 1  # the old pasta vector


def test_a_model_change_re_embeds_everything_and_only_that(world) -> None:  # type: ignore[no-untyped-def]
    store, _, vectors = world
    files_before = {p: r for p, (r, _) in store.files.items()}
    other = HashEmbedder(name="other-model")
    report = EmbedChunks(embedder=other, open_vectors=lambda: vectors).execute()
    assert report.reembedded is True
    assert (report.embedded, report.unreadable, report.status) == (3, 1, "ready")
    assert vectors.status().signature == other.signature
    assert {p: r for p, (r, _) in store.files.items()} == files_before  # no file was re-indexed


def test_progress_reports_the_embedding_stage() -> None:
    store = _store()
    sink = RecordingProgressSink()
    labels: list[str] = []
    sink.stage = labels.append  # type: ignore[attr-defined]
    for i in range(8):
        store.replace_file(*make_file(f"/ws/more/{i}.md", [f"note number {i} about item{i}"]))
    EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: InMemoryVectorIndex(store), batch_size=1).execute(sink)
    assert labels == ["Embedding"]
    assert sink.events[0] == ("start", 12)
    assert sink.events[-1] == ("finish",)
    advances = [e for e in sink.events if e[0] == "advance"]
    # One advance per embedder call (batch_size 1: one text each); the first round of
    # batch_size * PAGE_BATCHES = 4 chunks counts the unreadable Arabic chunk before its 3 calls.
    assert [e[1] for e in advances] == list(range(2, 13))
    assert advances[-1][3] == Path("12 of 12 chunks")


def test_an_embedder_failure_keeps_what_was_stored_and_reports_it() -> None:
    store = _store()
    embedder = HashEmbedder()
    vectors = InMemoryVectorIndex(store)
    embedder.fail = EmbedderUnavailableError("model missing", hint="install it")
    report = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert report.status == "unavailable"
    assert report.error == {"code": "embedder_unavailable", "message": "model missing", "hint": "install it"}
    assert report.pending == 3


def _notes(count: int) -> InMemoryIndexStore:
    store = InMemoryIndexStore()
    for i in range(count):
        store.replace_file(*make_file(f"/ws/notes/{i:02}.md", [f"note number {i} about item{i}"]))
    return store


class InterruptedEmbedder(HashEmbedder):
    """Ctrl-C during its ``interrupt_at``-th ``embed_documents`` call (1-based)."""

    def __init__(self, interrupt_at: int) -> None:
        super().__init__()
        self.interrupt_at = interrupt_at

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        if len(self.calls) + 1 == self.interrupt_at:
            raise KeyboardInterrupt
        return super().embed_documents(texts)


class ProgressiveEmbedder(HashEmbedder):
    """Has ``embed_documents_progressively``: one text per yield, in reverse order (the port
    allows any order), Ctrl-C instead of the ``interrupt_at``-th yield."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        super().__init__()
        self.interrupt_at = interrupt_at
        self.yields = 0

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        raise AssertionError("the pass must use embed_documents_progressively")

    def embed_documents_progressively(self, texts):  # type: ignore[no-untyped-def]
        for index in reversed(range(len(texts))):
            self.yields += 1
            if self.yields == self.interrupt_at:
                raise KeyboardInterrupt
            yield [(index, self._vector(texts[index]))]


def test_ctrl_c_keeps_the_vectors_of_the_calls_finished_before_it() -> None:
    store = _notes(10)
    vectors = InMemoryVectorIndex(store)
    embedder = InterruptedEmbedder(interrupt_at=4)
    with pytest.raises(KeyboardInterrupt):
        EmbedChunks(embedder=embedder, open_vectors=lambda: vectors, batch_size=2).execute()
    # The first round (8 chunks) is cut into calls of 2 texts; Ctrl-C came during the 4th.
    assert [len(call) for call in embedder.calls] == [2, 2, 2]
    status = vectors.status()
    assert (status.embedded, status.pending, status.vectors) == (6, 4, 6)
    report = EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: vectors, batch_size=2).execute()
    assert (report.embedded, report.status) == (4, "ready")  # the next run does only the rest


def test_ctrl_c_keeps_every_vector_the_embedder_handed_out() -> None:
    store = _notes(6)
    vectors = InMemoryVectorIndex(store)
    embedder = ProgressiveEmbedder(interrupt_at=4)
    with pytest.raises(KeyboardInterrupt):
        EmbedChunks(embedder=embedder, open_vectors=lambda: vectors, batch_size=32).execute()
    status = vectors.status()
    assert (status.embedded, status.pending) == (3, 3)
    # The embedder handed out notes 5, 4, 3 before Ctrl-C: those are stored, 0-2 still wait.
    assert [job.text for job in vectors.pending(10)] == [f"note number {i} about item{i}" for i in (0, 1, 2)]
    report = EmbedChunks(embedder=ProgressiveEmbedder(), open_vectors=lambda: vectors).execute()
    assert (report.embedded, report.status) == (3, "ready")  # the next run does only the rest


def test_vectors_are_written_as_calls_finish_once_the_save_interval_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "SAVE_EVERY_SECONDS", 0.0)
    store = _notes(6)
    vectors = InMemoryVectorIndex(store)
    writes: list[int] = []
    add = vectors.add
    vectors.add = lambda items: (writes.append(len(items)), add(items))[1]  # type: ignore[method-assign]
    done: list[tuple[int, int]] = []
    EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: vectors, batch_size=2,
                on_batch=lambda *args: done.append(args)).execute()
    assert writes == [2, 2, 2]
    assert done == [(2, 6), (4, 6), (6, 6)]


def test_without_the_interval_a_round_is_written_at_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "SAVE_EVERY_SECONDS", 3600.0)
    store = _notes(10)
    vectors = InMemoryVectorIndex(store)
    writes: list[int] = []
    add = vectors.add
    vectors.add = lambda items: (writes.append(len(items)), add(items))[1]  # type: ignore[method-assign]
    EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: vectors, batch_size=2).execute()
    assert writes == [8, 2]  # rounds of batch_size * PAGE_BATCHES chunks


class FailingVectors(InMemoryVectorIndex):
    """Its ``fail_at``-th ``add`` (1-based) raises ``error``, and so does every write after it."""

    def __init__(self, store: InMemoryIndexStore, fail_at: int, error: StoreError) -> None:
        super().__init__(store)
        self.fail_at, self.error, self.adds = fail_at, error, 0

    def add(self, items):  # type: ignore[no-untyped-def]
        self.adds += 1
        if self.adds >= self.fail_at:
            raise self.error
        super().add(items)

    def prune(self) -> int:
        if self.adds >= self.fail_at:
            raise self.error
        return super().prune()

    record_failure = prune  # type: ignore[assignment]


def test_a_database_failure_while_storing_vectors_is_raised_not_unavailable() -> None:
    store = _notes(10)
    full = StoreUnusableError("cannot store vectors: database or disk is full", hint="Free space.")
    vectors = FailingVectors(store, fail_at=2, error=full)
    with pytest.raises(StoreUnusableError) as info:
        EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: vectors, batch_size=2).execute()
    assert info.value.__cause__ is full
    assert info.value.message == (
        "cannot store vectors: database or disk is full; computing vectors stopped after 8 chunks got theirs "
        "in this run (they are kept)"
    )
    assert info.value.hint == "Free space."
    assert vectors.status().embedded == 8


def test_a_failure_of_one_write_of_vectors_leaves_the_pass_unavailable() -> None:
    """A plain StoreError (a vector of the wrong size...) is the embedder's problem: the keyword
    index stays usable and `index` exits 0 with the report saying why."""
    store = _notes(10)
    vectors = FailingVectors(store, fail_at=2, error=StoreError("vector of 3 dimensions, the index holds 64"))
    report = EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: vectors, batch_size=2).execute()
    assert report.status == "unavailable"
    assert report.error is not None and report.error["code"] == "store_error"
    assert report.embedded == 8


def test_consent_required_sends_nothing() -> None:
    store = _store()
    embedder = HashEmbedder()
    embedder.fail = ConsentRequiredError("no consent for http://remote")
    report = EmbedChunks(embedder=embedder, open_vectors=lambda: InMemoryVectorIndex(store)).execute()
    assert report.status == "consent_required"
    assert embedder.documents_embedded == 0


def test_an_unopenable_vector_index_is_unavailable_not_a_crash() -> None:
    def broken() -> InMemoryVectorIndex:
        raise EmbedderUnavailableError("sqlite-vec is not installed")

    report = EmbedChunks(embedder=HashEmbedder(), open_vectors=broken).execute()
    assert report.status == "unavailable"
    assert report.error is not None and "sqlite-vec" in report.error["message"]


# -- search modes ----------------------------------------------------------------------------


def test_semantic_finds_a_paraphrase_that_keyword_misses(world) -> None:  # type: ignore[no-untyped-def]
    search = _search(world)
    keyword = search.execute("how do I undo a release", mode="keyword")
    semantic = search.execute("how do I undo a release", mode="semantic")
    assert "/ws/ops/rollback.md" not in [str(h.path) for h in keyword]
    assert str(semantic[0].path) in {"/ws/ops/rollback.md", "/ws/notes/release.md"}
    assert "/ws/ops/rollback.md" in [str(h.path) for h in semantic[:2]]
    assert semantic.mode == "semantic" and semantic.semantic_status == "ready"
    assert semantic[0].semantic_rank == 1 and semantic[0].similarity == semantic[0].score


def test_hybrid_fuses_both_and_says_how_each_hit_was_found(world) -> None:  # type: ignore[no-untyped-def]
    results = _search(world).execute("how do I undo a release")
    assert results.mode == "hybrid"
    assert results.fusion == {"keyword_weight": 1.0, "semantic_weight": 2.0, "query_kind": "prose"}
    paths = [str(h.path) for h in results]
    assert set(paths[:2]) == {"/ws/ops/rollback.md", "/ws/notes/release.md"}
    release = results[paths.index("/ws/notes/release.md")]
    assert release.keyword_rank == 1 and release.semantic_rank is not None
    rollback = results[paths.index("/ws/ops/rollback.md")]
    assert rollback.keyword_rank is None and rollback.semantic_rank is not None
    assert all(h.score == h.fused_score for h in results)
    assert [h.score for h in results] == sorted((h.score for h in results), reverse=True)
    data = rollback.to_json()
    assert data["keyword_rank"] is None and data["semantic_rank"] == rollback.semantic_rank
    assert data["fused_score"] == round(rollback.score, 6) and data["rerank_score"] is None


def test_keyword_hits_look_exactly_as_before(world) -> None:  # type: ignore[no-untyped-def]
    search = _search(world)
    with_semantic = search.execute("release notes", mode="keyword")
    plain = SearchWorkspace(store=world[0], default_limit=10).execute("release notes")
    assert [h.to_json() for h in with_semantic] == [h.to_json() for h in plain]
    assert set(plain[0].to_json()) == {
        "path", "root_name", "line_start", "line_end", "section", "chunk_index", "score", "tokens", "modified", "content",
        "breadcrumb", "definitions",
    }
    assert plain.semantic_status == "disabled" and with_semantic.semantic_status == "ready"


def test_filters_apply_before_the_top_k_on_both_sides(world) -> None:  # type: ignore[no-untyped-def]
    search = _search(world, dense_top_k=1, sparse_top_k=1)
    results = search.execute("undo a release rollback", glob="pasta.md", mode="semantic")
    assert [str(h.path) for h in results] == ["/ws/notes/pasta.md"]
    hybrid = search.execute("boil pasta undo", path="/ws/notes", mode="hybrid", limit=5)
    assert {str(h.path) for h in hybrid} <= {"/ws/notes/pasta.md", "/ws/notes/release.md"}
    assert hybrid and str(hybrid[0].path) == "/ws/notes/pasta.md"


def test_a_query_the_model_cannot_read_is_keyword_only(world) -> None:  # type: ignore[no-untyped-def]
    _, embedder, _ = world
    results = _search(world).execute("عبد المطلب")
    assert results.fusion is not None and results.fusion["query_kind"] == "unreadable"
    assert [str(h.path) for h in results] == ["/ws/ar/history.txt"]
    # Plain keyword hits: the mode that ran is keyword, and its hits keep the keyword JSON shape.
    assert results.mode == "keyword" and set(results[0].to_json()) == {
        "path", "root_name", "line_start", "line_end", "section", "chunk_index", "score", "tokens", "modified", "content",
        "breadcrumb", "definitions",
    }
    assert embedder.queries_embedded == 0
    assert any("does not read" in n for n in results.notes)


def test_identifiers_lean_to_keywords_and_keep_exact_matches_first(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    store.replace_file(*make_file("/ws/code/io.py", ["def read_file(path):\n    return open(path).read()"]))
    store.replace_file(*make_file("/ws/notes/reading.md", ["read the file, read the file, read file notes"]))
    EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    results = _search(world).execute("read_file")
    assert results.fusion is not None and results.fusion["query_kind"] == "identifier"
    assert str(results[0].path) == "/ws/code/io.py"


def test_no_embedder_falls_back_to_keyword_and_says_so() -> None:
    search = SearchWorkspace(store=_store(), default_limit=10)
    results = search.execute("release", mode="hybrid")
    assert (results.mode, results.requested_mode, results.semantic_status) == ("keyword", "hybrid", "disabled")
    assert [str(h.path) for h in results] == ["/ws/notes/release.md"]
    assert results.notes and "no embedder" in results.notes[0]


def test_before_any_vector_the_status_is_indexing() -> None:
    store = _store()
    search = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=HashEmbedder(), open_vectors=lambda: InMemoryVectorIndex(store)),
    )
    results = search.execute("release", mode="hybrid")
    assert (results.mode, results.semantic_status) == ("keyword", "indexing")
    assert [str(h.path) for h in results] == ["/ws/notes/release.md"]


def test_a_partly_embedded_index_is_partial(world) -> None:  # type: ignore[no-untyped-def]
    store, _, _ = world
    store.replace_file(*make_file("/ws/notes/new.md", ["A brand new note about releases."]))
    results = _search(world).execute("notes about release changes shipped")
    assert results.semantic_status == "partial"
    assert any("have no vector yet" in n for n in results.notes)
    # A prose query, but the vectors are incomplete: no leaning to them.
    assert results.fusion == {"keyword_weight": 1.0, "semantic_weight": 1.0, "query_kind": "prose"}


def test_vectors_of_another_model_are_not_used(world) -> None:  # type: ignore[no-untyped-def]
    store, _, vectors = world
    search = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=HashEmbedder(name="changed"), open_vectors=lambda: vectors),
    )
    results = search.execute("release", mode="semantic")
    assert (results.mode, results.semantic_status) == ("keyword", "unavailable")
    assert any("another embedder" in n for n in results.notes)


def test_consent_required_status_sends_nothing(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    before = embedder.queries_embedded
    search = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors, status="consent_required"),
    )
    results = search.execute("release", mode="hybrid")
    assert (results.mode, results.semantic_status) == ("keyword", "consent_required")
    assert embedder.queries_embedded == before


def test_an_embedder_failing_at_query_time_falls_back(world) -> None:  # type: ignore[no-untyped-def]
    _, embedder, _ = world
    embedder.fail = EmbedderUnavailableError("onnxruntime is not installed", hint="pip install it")
    results = _search(world).execute("release notes")
    assert (results.mode, results.semantic_status) == ("keyword", "unavailable")
    assert [str(h.path) for h in results][:1] == ["/ws/notes/release.md"]
    assert "onnxruntime" in results.notes[0]


def test_unknown_mode_is_a_usage_error(world) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="unknown search mode"):
        _search(world).execute("release", mode="dense")


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("text", ["release", "  ?! x "])
def test_a_malformed_glob_is_a_usage_error_in_every_mode(  # type: ignore[no-untyped-def]
    world, mode: str, text: str
) -> None:
    # Checked before either side runs: a fallback from the semantic side must not hide it.
    for search in (_search(world), SearchWorkspace(store=world[0], default_limit=10)):
        with pytest.raises(UsageError, match=r"invalid glob '\*\.\{md'"):
            search.execute(text, glob="*.{md", mode=mode)


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_glob_with_a_slash_matches_whole_segments_on_both_sides(  # type: ignore[no-untyped-def]
    world, mode: str
) -> None:
    search = _search(world)
    assert {str(h.path) for h in search.execute("release rollback pasta", glob="notes/*.md", mode=mode)} == {
        "/ws/notes/pasta.md",
        "/ws/notes/release.md",
    }
    assert list(search.execute("release rollback pasta", glob="ws/*.md", mode=mode)) == []  # '*' stops at '/'
    assert {str(h.path) for h in search.execute("release rollback pasta", glob="ws/**/*.md", mode=mode)} == {
        "/ws/notes/pasta.md",
        "/ws/notes/release.md",
        "/ws/ops/rollback.md",
    }


def test_empty_query_gives_no_hits_in_every_mode_and_says_why(world) -> None:  # type: ignore[no-untyped-def]
    for mode in ("keyword", "semantic", "hybrid"):
        results = _search(world).execute("  ?! x ", mode=mode)
        assert list(results) == []
        assert results.notes and "nothing to search for" in results.notes[0]


def test_code_names_in_a_sentence_keep_exact_matches_first(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    store.replace_file(*make_file("/ws/code/msg.py", ["class EmailMessage(MIMEPart):\n    pass"]))
    for i in range(3):
        store.replace_file(*make_file(f"/ws/notes/headers{i}.md", [f"headers headers headers note {i}"]))
    EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    results = _search(world).execute("EmailMessage headers")
    assert results.fusion is not None and results.fusion["query_kind"] == "identifier"
    assert str(results[0].path) == "/ws/code/msg.py"


# -- reranking -------------------------------------------------------------------------------


def test_reranker_reorders_the_top_n_and_the_tail_follows(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    search = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
        reranker=ScriptedReranker("pasta"),
        settings=RetrievalSettings(default_mode="hybrid", rerank_top_n=3),
    )
    results = search.execute("release rollback pasta undo")
    assert str(results[0].path) == "/ws/notes/pasta.md"
    assert results.reranker == "scripted:pasta"
    assert results[0].rerank_score == results[0].score == 1.0


def test_reranker_deadline_keeps_the_fused_order(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    base = _search(world).execute("release rollback pasta undo")
    slow = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
        reranker=ScriptedReranker("pasta", delay=0.05),
        settings=RetrievalSettings(default_mode="hybrid", rerank_deadline_ms=1),
    )
    started = time.monotonic()
    results = slow.execute("release rollback pasta undo")
    assert time.monotonic() - started < 2
    assert [h.key for h in results] == [h.key for h in base]
    assert results.reranker is None and any("deadline" in n for n in results.notes)


def test_a_failing_reranker_keeps_the_fused_order(world) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    base = _search(world).execute("release notes")
    failing = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
        reranker=ScriptedReranker(fail=EmbedderUnavailableError("no model")),
        settings=RetrievalSettings(default_mode="hybrid"),
    )
    results = failing.execute("release notes")
    assert [h.key for h in results] == [h.key for h in base]
    assert any("reranker failed" in n for n in results.notes)


class _BadScores:
    """A reranker answering ``scores`` whatever the hits: too few, or not finite."""

    name = "bad"

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def rerank(self, query: str, hits: object, *, deadline: float) -> list[float]:
        return self.scores


@pytest.mark.parametrize("scores", [[1.0], [float("nan")] * 3, [float("inf"), 0.0, 0.0]])
def test_a_reranker_with_unusable_scores_keeps_the_fused_order(world, scores: list[float]) -> None:  # type: ignore[no-untyped-def]
    store, embedder, vectors = world
    base = _search(world).execute("release notes")
    assert len(base) == 3  # so that [1.0] is one score too few and the others one per hit
    bad = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
        reranker=_BadScores(scores),  # type: ignore[arg-type]
        settings=RetrievalSettings(default_mode="hybrid"),
    )
    results = bad.execute("release notes")
    assert [(h.key, h.score) for h in results] == [(h.key, h.score) for h in base]
    assert results.reranker is None
    assert results.notes == [*base.notes, "the reranker returned unusable scores: fused order kept"]


def test_notes_come_in_pipeline_order(world) -> None:  # type: ignore[no-untyped-def]
    # The fallback's note (retrievers), then how CJK words match (the query), then the
    # reranker's (rerank): the order the stages of SearchWorkspace.execute add them in.
    store, _, _ = world
    search = SearchWorkspace(
        store=store,
        default_limit=10,
        semantic=None,
        reranker=ScriptedReranker(fail=EmbedderUnavailableError("no model")),
        settings=RetrievalSettings(default_mode="hybrid"),
    )
    results = search.execute("release 发布")
    assert (results.mode, results.requested_mode, results.semantic_status) == ("keyword", "hybrid", "disabled")
    assert results.notes == [
        "no embedder is configured (knowledgebase.embedder.provider: none): keyword search only",
        CJK_NOTE,
        "the reranker failed (no model): fused order kept",
    ]


def _hit(path: str, score: float) -> SearchHit:
    return SearchHit(Path(path), 1, 1, None, 0, score, 1, "2026-01-01T00:00:00Z", path)


def test_fuse_keeps_similarity_and_ranks() -> None:
    sparse = [_hit("/a", 9.0), _hit("/b", 5.0)]
    dense = [_hit("/c", 0.9), _hit("/a", 0.8)]
    fused = fuse(sparse, dense, FusionWeights(1.0, 1.0, "prose"), 60)
    assert [str(h.path) for h in fused] == ["/a", "/c", "/b"]
    assert (fused[0].keyword_rank, fused[0].semantic_rank, fused[0].similarity) == (1, 2, 0.8)
    assert (fused[1].keyword_rank, fused[1].semantic_rank, fused[1].similarity) == (None, 1, 0.9)
    assert fused[2].similarity is None


def test_a_corpus_the_model_cannot_read_falls_back_with_a_reason() -> None:
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/ar/a.txt", [ARABIC]))
    vectors = InMemoryVectorIndex(store)
    embedder = HashEmbedder()
    report = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert (report.status, report.unreadable, report.embedded) == ("ready", 1, 0)
    search = SearchWorkspace(
        store=store, default_limit=10, semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors)
    )
    results = search.execute("release notes", mode="semantic")
    assert (results.mode, results.requested_mode, results.semantic_status) == ("keyword", "semantic", "ready")
    assert any("reads none of the indexed text" in n for n in results.notes)


def test_fusion_depth_is_the_top_k_whatever_the_limit() -> None:
    sparse = [_hit(f"/s{i}", 10.0 - i) for i in range(6)]
    dense = [_hit(f"/d{i}", 0.9 - i / 10) for i in range(5)] + [_hit("/s5", 0.1)]
    weights = FusionWeights(1.0, 1.0, "prose")
    head_only = fuse(sparse[:2], dense[:2], weights, 60)
    deep = fuse(sparse, dense, weights, 60, sparse_top_k=2, dense_top_k=2)
    # The first four are the fusion of the top 2 + 2, in the same order as fusing only those.
    assert [h.key for h in deep[:4]] == [h.key for h in head_only]
    # /s5 is deep in both lists: it comes after the head, with both of its real ranks.
    s5 = next(h for h in deep if str(h.path) == "/s5")
    assert deep.index(s5) >= 4 and (s5.keyword_rank, s5.semantic_rank) == (6, 6)
    assert len(deep) == 11


def test_a_failed_embedding_pass_is_remembered_and_reported() -> None:
    store = _store()
    vectors = InMemoryVectorIndex(store)
    embedder = HashEmbedder()
    embedder.fail = EmbedderUnavailableError("cannot write the ONNX export to /ro", hint="Set HERMES_MODELS_DIR.")
    EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert vectors.status().last_error == {
        "code": "embedder_unavailable", "message": "cannot write the ONNX export to /ro", "hint": "Set HERMES_MODELS_DIR."
    }
    search = SearchWorkspace(store=store, default_limit=10, semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors))
    status, _, note = search.semantic_status()
    assert status == "unavailable" and note is not None and "ONNX export" in note
    results = search.execute("release", mode="hybrid")
    assert results.semantic_status == "unavailable" and "ONNX export" in results.notes[0]
    embedder.fail = None
    report = EmbedChunks(embedder=embedder, open_vectors=lambda: vectors).execute()
    assert report.status == "ready" and vectors.status().last_error is None


def test_a_cjk_query_finds_a_word_inside_a_run_and_says_how_it_matched() -> None:
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/zh.md", ["水银温度计由华伦海特发明。"]))
    search = SearchWorkspace(store=store, default_limit=10)
    results = search.execute("温度计")
    assert [str(h.path) for h in results] == ["/ws/zh.md"]
    assert results.notes == [CJK_NOTE]
    assert "two-character pieces" in CJK_NOTE and "segmentation" not in CJK_NOTE
    assert search.execute("release").notes == []
    assert search.execute("Ёжик café الأبراج").notes == []


def test_deeper_hits_never_score_above_the_head() -> None:
    # Found in a trial (hybrid, --limit 50): rank 24 had score 0.005 and rank 25 0.0198, because a
    # keyword rank of 41 weighted 4:1 outscores a dense-only rank of 40 in the head.
    sparse = [_hit(f"/s{i}", 50.0 - i) for i in range(45)]
    dense = [_hit(f"/d{i}", 0.9 - i / 100) for i in range(40)]
    deep = fuse(sparse, dense, FusionWeights(4.0, 1.0, "identifier"), 60, sparse_top_k=40, dense_top_k=40)

    scores = [h.score for h in deep]
    assert scores == sorted(scores, reverse=True)
    s40 = next(h for h in deep if str(h.path) == "/s40")
    assert s40.keyword_rank == 41 and s40.fused_score == pytest.approx(4.0 / (60 + 41))
    assert s40.score < s40.fused_score  # capped at the last head score
