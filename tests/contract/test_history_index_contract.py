"""The HistoryIndex contract (issue 13), run against the in-memory fake and the SQLite adapter.

Keyword corpora give every chunk the same number of words and every query term frequency 1, so
that BM25 (SQLite) and the fake's term-frequency ranking must agree on the exact order: more
query terms matched first, then rarer terms, then (equal scores) session id, message id, offset.
Vectors are hand-made and 3-dimensional, so expected orders and scores are exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryHistoryIndex
from hermes_workspace.adapters.sqlite_history_index import SqliteHistoryIndex
from hermes_workspace.domain.errors import StoreError
from hermes_workspace.domain.history import MessageChunk, SessionStat, content_hash
from hermes_workspace.domain.ports import HistoryIndex
from hermes_workspace.domain.query import parse_query
from hermes_workspace.domain.semantic import Vector, unit

SIG = "test:model:3"


@pytest.fixture(params=["memory", "sqlite"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryIndex]:
    if request.param == "memory":
        yield InMemoryHistoryIndex()
        return
    sqlite = SqliteHistoryIndex(tmp_path / "plugin" / "embeddings.db")
    yield sqlite
    sqlite.close()


def chunk(session_id: str, message_id: int, content: str, offset: int = 0, *, role: str = "user",
          timestamp: object = 1_700_000_000) -> MessageChunk:
    return MessageChunk(session_id, message_id, offset, content, content_hash(content), role, timestamp)


def stat(chunks: list[MessageChunk]) -> SessionStat:
    return SessionStat(len({c.message_id for c in chunks}), max((c.message_id for c in chunks), default=0),
                       sum(len(c.content) for c in chunks))


def put(index: HistoryIndex, session_id: str, chunks: list[MessageChunk]) -> None:
    index.replace_session(session_id, stat(chunks), chunks)


def keys(matches: list) -> list[tuple[str, int, int]]:
    return [(m.session_id, m.message_id, m.offset) for m in matches]


def vec(*values: float) -> Vector:
    return unit(values)


# Eight words each: BM25's length normalization is the same for every chunk.
CORPUS = {
    "a": [chunk("a", 1, "rollback database migration notes kept here for later"),
          chunk("a", 2, "rollback database notes kept here for later review"),
          chunk("a", 3, "rollback notes kept here for later review again")],
    "b": [chunk("b", 1, "database notes kept here for later review again"),
          chunk("b", 2, "database notes kept here for later review again")],
    "z": [chunk("z", i, f"lunch menu weather report garden flowers spring morning{i}") for i in range(1, 9)],
}
QUERY = parse_query("rollback database migration")


def load_corpus(index: HistoryIndex) -> None:
    for session_id, chunks in CORPUS.items():
        put(index, session_id, chunks)


def test_is_a_history_index(index: HistoryIndex) -> None:
    assert isinstance(index, HistoryIndex)


def test_an_empty_index(index: HistoryIndex) -> None:
    assert index.source is None
    assert index.session_stats() == {}
    assert index.counts() == {"sessions": 0, "messages": 0, "chunks": 0, "vectors": 0}
    assert index.keyword_search(QUERY, ["a"], 10) == []
    assert index.pending(SIG, ["a"], 10) == []
    assert index.vector_counts(SIG, ["a"]) == (0, 0)
    assert index.vector_search(SIG, vec(1, 0, 0), ["a"], 10) == []


def test_replace_and_delete_sessions_with_their_stats(index: HistoryIndex) -> None:
    load_corpus(index)
    assert index.session_stats() == {s: stat(c) for s, c in CORPUS.items()}
    assert index.counts() == {"sessions": 3, "messages": 13, "chunks": 13, "vectors": 0}
    index.replace_session("b", SessionStat(1, 1, 10), CORPUS["b"][:1])
    assert index.session_stats()["b"] == SessionStat(1, 1, 10)
    assert index.counts()["chunks"] == 12
    assert index.delete_sessions(["z", "nope", "z"]) == 1
    assert set(index.session_stats()) == {"a", "b"}
    assert index.keyword_search(parse_query("lunch"), ["z"], 10) == []
    assert index.delete_sessions([]) == 0
    assert index.counts() == {"sessions": 2, "messages": 4, "chunks": 4, "vectors": 0}


def test_a_session_without_chunks_is_indexed(index: HistoryIndex) -> None:
    index.replace_session("empty", SessionStat(0, 0, 0), [])
    assert index.session_stats() == {"empty": SessionStat(0, 0, 0)}
    assert index.counts() == {"sessions": 1, "messages": 0, "chunks": 0, "vectors": 0}


def test_several_chunks_of_one_message_count_as_one_message(index: HistoryIndex) -> None:
    parts = [chunk("s", 7, "first part about caching"), chunk("s", 7, "second part about caching", offset=25)]
    put(index, "s", parts)
    assert index.counts() == {"sessions": 1, "messages": 1, "chunks": 2, "vectors": 0}
    assert keys(index.keyword_search(parse_query("second"), ["s"], 5)) == [("s", 7, 25)]


def test_replace_refuses_duplicate_keys_and_foreign_chunks(index: HistoryIndex) -> None:
    with pytest.raises(StoreError):
        index.replace_session("a", SessionStat(1, 1, 2), [chunk("a", 1, "one"), chunk("a", 1, "two")])
    with pytest.raises(StoreError):
        index.replace_session("a", SessionStat(1, 1, 2), [chunk("b", 1, "one")])
    assert index.session_stats() == {}


def test_keyword_ranking_order(index: HistoryIndex) -> None:
    load_corpus(index)
    found = index.keyword_search(QUERY, ["a", "b", "z"], 10)
    assert keys(found) == [("a", 1, 0), ("a", 2, 0), ("a", 3, 0), ("b", 1, 0), ("b", 2, 0)]
    scores = [m.score for m in found]
    assert scores[0] > scores[1] > scores[2] > scores[3] > 0
    assert scores[3] == pytest.approx(scores[4])
    first = found[0]
    assert (first.content, first.role, first.timestamp) == (CORPUS["a"][0].content, "user", 1_700_000_000)
    assert keys(index.keyword_search(QUERY, ["a", "b", "z"], 2)) == [("a", 1, 0), ("a", 2, 0)]


def test_keyword_filter_is_applied_before_the_top_k_cut(index: HistoryIndex) -> None:
    load_corpus(index)
    # Every chunk of "a" outranks those of "b"; with the filter first, "b" still gets its best.
    assert keys(index.keyword_search(QUERY, ["b"], 1)) == [("b", 1, 0)]
    assert keys(index.keyword_search(QUERY, ["b", "unknown"], 10)) == [("b", 1, 0), ("b", 2, 0)]
    assert index.keyword_search(QUERY, ["z"], 10) == []
    assert index.keyword_search(QUERY, [], 10) == []


def test_keyword_search_of_an_empty_query(index: HistoryIndex) -> None:
    load_corpus(index)
    assert index.keyword_search(parse_query(" ... "), ["a"], 10) == []


def test_keyword_search_limit_is_at_least_one(index: HistoryIndex) -> None:
    load_corpus(index)
    assert keys(index.keyword_search(QUERY, ["a"], 0)) == [("a", 1, 0)]


def test_keyword_search_finds_the_replaced_text_only(index: HistoryIndex) -> None:
    put(index, "s", [chunk("s", 1, "the deploy failed with a timeout")])
    put(index, "s", [chunk("s", 1, "the deploy succeeded after a retry")])
    assert index.keyword_search(parse_query("timeout"), ["s"], 5) == []
    assert keys(index.keyword_search(parse_query("retry"), ["s"], 5)) == [("s", 1, 0)]


# -- vectors ----------------------------------------------------------------------------------

VECTORS = {("a", 1): vec(1, 0, 0), ("a", 2): vec(0.8, 0.6, 0), ("b", 1): vec(0.6, 0.8, 0),
           ("b", 2): vec(0, 1, 0), ("z", 1): vec(-1, 0, 0)}


def embed_corpus(index: HistoryIndex) -> None:
    load_corpus(index)
    items: list[tuple[MessageChunk, Vector | None]] = []
    for session_id, chunks in CORPUS.items():
        for c in chunks:
            items.append((c, VECTORS.get((session_id, c.message_id))))
    index.add_vectors(SIG, items)


def test_vector_search_exact_order_and_scores(index: HistoryIndex) -> None:
    embed_corpus(index)
    found = index.vector_search(SIG, vec(1, 0, 0), ["a", "b", "z"], 10)
    assert keys(found) == [("a", 1, 0), ("a", 2, 0), ("b", 1, 0), ("b", 2, 0), ("z", 1, 0)]
    assert [m.score for m in found] == pytest.approx([1.0, 0.8, 0.6, 0.0, -1.0], abs=1e-6)
    assert found[0].content == CORPUS["a"][0].content
    assert keys(index.vector_search(SIG, vec(1, 0, 0), ["a", "b", "z"], 2)) == [("a", 1, 0), ("a", 2, 0)]


def test_vector_filter_is_applied_before_the_top_k_cut(index: HistoryIndex) -> None:
    embed_corpus(index)
    assert keys(index.vector_search(SIG, vec(1, 0, 0), ["b"], 1)) == [("b", 1, 0)]
    assert keys(index.vector_search(SIG, vec(1, 0, 0), ["z"], 3)) == [("z", 1, 0)]
    assert index.vector_search(SIG, vec(1, 0, 0), [], 3) == []


def test_vector_search_of_another_signature_finds_nothing(index: HistoryIndex) -> None:
    embed_corpus(index)
    assert index.vector_search("other:model:3", vec(1, 0, 0), ["a", "b"], 5) == []


def test_unreadable_chunks_are_done_but_never_found(index: HistoryIndex) -> None:
    embed_corpus(index)
    # a/3 and z/2..z/8 were given None: not pending, counted as done, not vectors.
    assert index.pending(SIG, ["a", "b", "z"], 100) == []
    assert index.vector_counts(SIG, ["a"]) == (3, 3)
    assert index.counts()["vectors"] == 5
    assert ("a", 3, 0) not in keys(index.vector_search(SIG, vec(0, 0, 1), ["a"], 10))


def test_pending_lists_chunks_without_vectors_in_a_stable_order(index: HistoryIndex) -> None:
    put(index, "b", [chunk("b", 2, "second"), chunk("b", 1, "first part"), chunk("b", 1, "first rest", offset=10)])
    put(index, "a", [chunk("a", 9, "only")])
    put(index, "c", [chunk("c", 1, "out of scope")])
    pending = index.pending(SIG, ["b", "a"], 10)
    assert [c.key for c in pending] == [("a", 9, 0), ("b", 1, 0), ("b", 1, 10), ("b", 2, 0)]
    assert pending[0] == chunk("a", 9, "only")
    assert [c.key for c in index.pending(SIG, ["b", "a"], 2)] == [("a", 9, 0), ("b", 1, 0)]
    assert index.pending(SIG, ["b", "a"], 0) == []
    index.add_vectors(SIG, [(pending[0], vec(1, 0, 0)), (pending[2], None)])
    assert [c.key for c in index.pending(SIG, ["b", "a"], 10)] == [("b", 1, 0), ("b", 2, 0)]
    assert index.vector_counts(SIG, ["b", "a"]) == (2, 4)
    assert index.vector_counts(SIG, ["c"]) == (0, 1)
    assert index.vector_counts(SIG, []) == (0, 0)


def test_an_appended_message_leaves_the_other_vectors(index: HistoryIndex) -> None:
    first = [chunk("s", 1, "how do we deploy"), chunk("s", 2, "with the release script")]
    put(index, "s", first)
    index.add_vectors(SIG, [(first[0], vec(1, 0, 0)), (first[1], vec(0, 1, 0))])
    longer = [*first, chunk("s", 3, "and then roll back")]
    put(index, "s", longer)
    assert [c.key for c in index.pending(SIG, ["s"], 10)] == [("s", 3, 0)]
    assert index.vector_counts(SIG, ["s"]) == (2, 3)
    assert keys(index.vector_search(SIG, vec(0, 1, 0), ["s"], 1)) == [("s", 2, 0)]


def test_an_edited_message_drops_only_its_changed_chunks_vectors(index: HistoryIndex) -> None:
    parts = [chunk("s", 1, "part one"), chunk("s", 1, "part two", offset=9), chunk("s", 2, "other message")]
    put(index, "s", parts)
    index.add_vectors(SIG, [(c, vec(1, i, 0)) for i, c in enumerate(parts)])
    edited = [parts[0], chunk("s", 1, "part 2!!", offset=9), parts[2]]
    put(index, "s", edited)
    assert index.pending(SIG, ["s"], 10) == [edited[1]]
    assert index.vector_counts(SIG, ["s"]) == (2, 3)
    assert index.counts()["vectors"] == 2
    assert ("s", 1, 9) not in keys(index.vector_search(SIG, vec(1, 1, 0), ["s"], 10))


def test_a_new_role_or_timestamp_keeps_the_vector_and_is_returned(index: HistoryIndex) -> None:
    old = chunk("s", 1, "same words", timestamp=100)
    put(index, "s", [old])
    index.add_vectors(SIG, [(old, vec(1, 0, 0))])
    new = chunk("s", 1, "same words", role="assistant", timestamp="2026-09-01T14:30:22")
    put(index, "s", [new])
    assert index.pending(SIG, ["s"], 10) == []
    (found,) = index.vector_search(SIG, vec(1, 0, 0), ["s"], 1)
    assert (found.role, found.timestamp) == ("assistant", "2026-09-01T14:30:22")
    (hit,) = index.keyword_search(parse_query("same"), ["s"], 1)
    assert (hit.role, hit.timestamp) == ("assistant", "2026-09-01T14:30:22")


def test_a_vector_for_a_chunk_that_changed_since_pending_is_left_out(index: HistoryIndex) -> None:
    put(index, "s", [chunk("s", 1, "before the edit")])
    (job,) = index.pending(SIG, ["s"], 10)
    put(index, "s", [chunk("s", 1, "after the edit")])
    index.add_vectors(SIG, [(job, vec(1, 0, 0))])
    assert [c.content for c in index.pending(SIG, ["s"], 10)] == ["after the edit"]
    assert index.counts()["vectors"] == 0
    index.delete_sessions(["s"])
    index.add_vectors(SIG, [(job, vec(1, 0, 0))])
    assert index.counts()["vectors"] == 0


def test_a_new_signature_drops_every_vector_of_the_old_one(index: HistoryIndex) -> None:
    embed_corpus(index)
    one = CORPUS["a"][0]
    index.add_vectors("new:model:2", [(one, vec(1, 0))])
    assert index.counts()["vectors"] == 1
    assert index.vector_counts(SIG, ["a", "b", "z"]) == (0, 13)
    assert len(index.pending(SIG, ["a", "b", "z"], 100)) == 13
    assert index.vector_search(SIG, vec(1, 0, 0), ["a"], 5) == []
    assert keys(index.vector_search("new:model:2", vec(1, 0), ["a"], 5)) == [("a", 1, 0)]
    assert [c.key for c in index.pending("new:model:2", ["a"], 10)] == [("a", 2, 0), ("a", 3, 0)]


def test_vectors_of_another_length_are_refused_and_nothing_changes(index: HistoryIndex) -> None:
    embed_corpus(index)
    before = index.counts()
    with pytest.raises(StoreError):
        index.add_vectors(SIG, [(CORPUS["a"][2], vec(1, 0, 0, 0))])
    with pytest.raises(StoreError):
        index.add_vectors(SIG, [(CORPUS["z"][1], vec(1, 0)), (CORPUS["z"][2], vec(1, 0, 0))])
    assert index.counts() == before
    assert index.vector_counts(SIG, ["a"]) == (3, 3)


def test_a_query_vector_of_another_length_is_refused(index: HistoryIndex) -> None:
    embed_corpus(index)
    with pytest.raises(StoreError):
        index.vector_search(SIG, vec(1, 0), ["a"], 5)


def test_deleting_a_session_deletes_its_vectors(index: HistoryIndex) -> None:
    embed_corpus(index)
    assert index.delete_sessions(["a"]) == 1
    assert index.counts() == {"sessions": 2, "messages": 10, "chunks": 10, "vectors": 3}
    assert keys(index.vector_search(SIG, vec(1, 0, 0), ["a", "b"], 10)) == [("b", 1, 0), ("b", 2, 0)]


def test_reset_drops_everything_and_records_the_source(index: HistoryIndex) -> None:
    assert index.vector_signature is None
    embed_corpus(index)
    assert index.vector_signature == SIG
    index.reset("host:state.db:v1")
    assert index.vector_signature is None
    assert index.source == "host:state.db:v1"
    assert index.counts() == {"sessions": 0, "messages": 0, "chunks": 0, "vectors": 0}
    assert index.session_stats() == {}
    assert index.keyword_search(QUERY, ["a"], 10) == []
    load_corpus(index)
    assert index.vector_counts(SIG, ["a"]) == (0, 3)
    assert keys(index.keyword_search(QUERY, ["a"], 1)) == [("a", 1, 0)]
    index.reset("host:state.db:v2")
    assert index.source == "host:state.db:v2"


def test_close_is_idempotent(index: HistoryIndex) -> None:
    index.close()
    index.close()
