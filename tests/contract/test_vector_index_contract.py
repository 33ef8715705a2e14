"""The VectorIndex contract, run against the in-memory fake (over the in-memory store) and the
sqlite-vec adapter (over a real SqliteFts5Store in the same file).

Vectors are hand-made and 3-dimensional, so expected orders are exact. Where the two adapters
may legitimately differ (chunk ids, order among equal distances, a file re-stored with identical
chunks), the tests do not look; tests/unit/test_sqlite_vec_index.py covers the SQLite side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryIndexStore, InMemoryVectorIndex
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.domain.errors import StoreError, UsageError
from hermes_workspace.domain.model import Chunk, FileRecord
from hermes_workspace.domain.ports import IndexStore, VectorIndex
from hermes_workspace.domain.semantic import EmbeddingJob, Vector, VectorStatus, embedding_input, embedding_key, unit
from tests.store_files import make_file

SIGNATURE = "test:model:3"


@dataclass
class Pair:
    store: IndexStore
    index: VectorIndex


@pytest.fixture(params=["memory", "sqlite"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pair]:
    if request.param == "memory":
        memory_store = InMemoryIndexStore()
        yield Pair(memory_store, InMemoryVectorIndex(memory_store))
        return
    pytest.importorskip("sqlite_vec")
    from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex

    path = tmp_path / ".index" / "workspace.sqlite"
    store = SqliteFts5Store(path)
    index = SqliteVecIndex(path)
    yield Pair(store, index)
    index.close()
    store.close()


def vec(*values: float) -> Vector:
    return unit(values)


def add_file(pair: Pair, path: str, paragraphs: list) -> tuple[FileRecord, list[Chunk]]:
    record, chunks = make_file(path, paragraphs)
    pair.store.replace_file(record, chunks)
    return record, chunks


def embed_pending(index: VectorIndex, vector_of: Callable[[str], Vector | None]) -> int:
    """Embed every pending chunk the way the indexer does (known keys first, each new key once);
    returns how many texts needed ``vector_of``."""
    embedded = 0
    while jobs := index.pending(100):
        rest = index.attach_known(jobs)
        vectors = {job.key: vector_of(job.text) for job in rest}
        index.add([(job, vectors[job.key]) for job in rest])
        embedded += len(vectors)
    return embedded


def by_word(table: dict[str, Vector]) -> Callable[[str], Vector]:
    """The vector of the first word of ``table`` found in a text."""

    def vector_of(text: str) -> Vector:
        for word, vector in table.items():
            if word in text:
                return vector
        raise AssertionError(f"no vector for {text!r}")

    return vector_of


def texts(jobs: list[EmbeddingJob]) -> list[str]:
    return [job.text for job in jobs]


def test_adapter_satisfies_the_protocol(pair: Pair) -> None:
    assert isinstance(pair.index, VectorIndex)


def test_pending_lists_every_chunk_once_and_shrinks_after_add(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["alpha one", ("beta two", "## Beta")])
    add_file(pair, "/ws/docs/b.md", ["gamma three"])
    assert pair.index.prepare(SIGNATURE, 3) is False

    jobs = pair.index.pending(10)
    assert texts(jobs) == ["alpha one", "## Beta\nbeta two", "gamma three"]
    assert [job.key for job in jobs] == [embedding_key(t) for t in texts(jobs)]
    assert embedding_input("## Beta", "beta two") == jobs[1].text
    assert len({job.chunk_id for job in jobs}) == 3
    assert pair.index.pending(2) == jobs[:2]

    pair.index.add([(jobs[0], vec(1, 0, 0))])
    assert pair.index.pending(10) == jobs[1:]
    pair.index.add([(jobs[1], vec(0, 1, 0)), (jobs[2], vec(0, 0, 1))])
    assert pair.index.pending(10) == []


def test_identical_content_is_embedded_once(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["shared paragraph"])
    add_file(pair, "/ws/notes/b.md", ["shared paragraph", "other paragraph"])
    pair.index.prepare(SIGNATURE, 3)

    jobs = pair.index.pending(10)
    assert len(jobs) == 3
    assert jobs[0].key == jobs[1].key != jobs[2].key
    assert pair.index.attach_known(jobs) == jobs  # nothing stored yet

    pair.index.add([(jobs[0], vec(1, 0, 0))])
    left = pair.index.pending(10)
    assert left == jobs[1:]
    assert pair.index.attach_known(left) == [jobs[2]]
    assert pair.index.pending(10) == [jobs[2]]

    status = pair.index.status()
    assert (status.embedded, status.vectors, status.pending) == (2, 1, 1)
    hits = pair.index.search(vec(1, 0, 0))
    assert sorted(str(h.path) for h in hits) == ["/ws/docs/a.md", "/ws/notes/b.md"]


def test_replacing_a_file_makes_its_new_chunks_pending_and_drops_old_attachments(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["old apple", "old banana"])
    add_file(pair, "/ws/docs/b.md", ["steady cherry"])
    pair.index.prepare(SIGNATURE, 3)
    embed_pending(pair.index, by_word({"apple": vec(1, 0, 0), "banana": vec(0, 1, 0), "cherry": vec(0, 0, 1)}))

    add_file(pair, "/ws/docs/a.md", ["new durian"])
    assert texts(pair.index.pending(10)) == ["new durian"]
    status = pair.index.status()
    assert (status.chunks, status.embedded, status.pending, status.vectors) == (2, 1, 1, 3)
    assert [h.content for h in pair.index.search(vec(1, 0, 0))] == ["steady cherry"]

    embed_pending(pair.index, by_word({"durian": vec(1, 1, 0)}))
    assert [h.content for h in pair.index.search(vec(1, 0, 0))] == ["new durian", "steady cherry"]


def test_deleting_a_file_drops_its_attachments(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["gone apple"])
    add_file(pair, "/ws/docs/b.md", ["kept banana"])
    pair.index.prepare(SIGNATURE, 3)
    embed_pending(pair.index, by_word({"apple": vec(1, 0, 0), "banana": vec(0, 1, 0)}))

    assert pair.store.delete_files([Path("/ws/docs/a.md")]) == 1
    assert [h.content for h in pair.index.search(vec(1, 0, 0))] == ["kept banana"]
    status = pair.index.status()
    assert (status.chunks, status.embedded, status.pending) == (1, 1, 0)
    assert pair.index.prune() == 1


def test_prepare_with_a_new_signature_drops_everything(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["apple", "banana"])
    assert pair.index.status().signature is None
    assert pair.index.prepare(SIGNATURE, 3) is False
    assert pair.index.prepare(SIGNATURE, 3) is False
    embed_pending(pair.index, by_word({"apple": vec(1, 0, 0), "banana": None}))  # type: ignore[dict-item]
    assert pair.index.status() == VectorStatus(2, 1, 1, 0, 1, SIGNATURE)

    assert pair.index.prepare("test:other:3", 3) is True
    assert pair.index.status() == VectorStatus(2, 0, 0, 2, 0, "test:other:3")
    assert len(pair.index.pending(10)) == 2
    assert pair.index.search(vec(1, 0, 0)) == []
    assert pair.index.prepare("test:other:3", 3) is False

    assert pair.index.prepare("test:other:3", 4) is True  # same name, other size
    assert pair.index.status().signature == "test:other:3"


def test_pending_chunks_are_counted_by_the_root_of_their_file(pair: Pair) -> None:
    for path, root, paragraphs in (("/ws/a.md", "/ws", ["alpha one", "beta two"]),
                                   ("/data/notes/b.md", "/data/notes", ["gamma three", "delta four"])):
        record, chunks = make_file(path, paragraphs, root=Path(root))
        pair.store.replace_file(record, chunks)
    # Before the first vector (no prepare yet), every chunk is pending.
    assert pair.index.pending_by_root() == {Path("/ws"): 2, Path("/data/notes"): 2}
    pair.index.prepare(SIGNATURE, 3)
    first, second, third, _ = pair.index.pending(10)
    pair.index.add([(first, vec(1, 0, 0)), (second, None), (third, vec(0, 1, 0))])  # None: unreadable, not pending
    assert pair.index.pending_by_root() == {Path("/data/notes"): 1}
    assert sum(pair.index.pending_by_root().values()) == pair.index.status().pending


def test_none_vectors_are_unreadable_not_pending(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["english words", "unreadable script"])
    pair.index.prepare(SIGNATURE, 3)
    english, unreadable = pair.index.pending(10)
    pair.index.add([(english, vec(1, 0, 0)), (unreadable, None)])

    assert pair.index.pending(10) == []
    assert pair.index.status() == VectorStatus(
        chunks=2, embedded=1, unreadable=1, pending=0, vectors=1, signature=SIGNATURE
    )
    assert [h.content for h in pair.index.search(vec(0, 1, 0), limit=10)] == ["english words"]
    assert pair.index.status().semantic_status() == "ready"


def test_search_orders_by_cosine_and_carries_the_chunk(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["exact match", ("close match\nsecond line", "## Close")])
    add_file(pair, "/ws/docs/b.md", ["orthogonal thing", "opposite thing"])
    pair.index.prepare(SIGNATURE, 3)
    embed_pending(
        pair.index,
        by_word(
            {
                "exact": vec(1, 0, 0),
                "close": vec(0.8, 0.6, 0),
                "orthogonal": vec(0, 0, 1),
                "opposite": vec(-1, 0.1, 0),
            }
        ),
    )

    hits = pair.index.search(vec(1, 0, 0), limit=10)
    assert [h.content for h in hits] == [
        "exact match",
        "close match\nsecond line",
        "orthogonal thing",
        "opposite thing",
    ]
    assert [h.score for h in hits] == pytest.approx([1.0, 0.8, 0.0, -1 / (1.01**0.5)], abs=1e-6)

    record, chunks = make_file("/ws/docs/a.md", ["exact match", ("close match\nsecond line", "## Close")])
    close = hits[1]
    assert close.path == record.path
    assert (close.line_start, close.line_end) == (chunks[1].line_start, chunks[1].line_end) == (3, 4)
    assert close.section == "## Close"
    assert close.chunk_index == 1
    assert close.tokens == chunks[1].tokens
    assert close.modified == record.modified_at
    assert close.keyword_rank is None and close.semantic_rank is None

    assert [h.content for h in pair.index.search(vec(1, 0, 0), limit=2)] == ["exact match", "close match\nsecond line"]
    assert len(pair.index.search(vec(1, 0, 0), limit=0)) == 1


def test_search_takes_any_limit(pair: Pair) -> None:
    # As the store's search (tests/e2e/test_huge_numbers.py): a limit beyond SQLite's 64-bit
    # integers is clamped, not an OverflowError from apsw's binding.
    add_file(pair, "/ws/docs/a.md", ["exact match", "other"])
    pair.index.prepare(SIGNATURE, 3)
    embed_pending(pair.index, by_word({"exact": vec(1, 0, 0), "other": vec(0, 1, 0)}))
    hits = pair.index.search(vec(1, 0, 0), limit=100_000_000_000_000_000_000)
    assert [h.content for h in hits] == ["exact match", "other"]


def test_search_is_empty_without_vectors(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["apple"])
    assert pair.index.search(vec(1, 0, 0)) == []
    pair.index.prepare(SIGNATURE, 3)
    assert pair.index.search(vec(1, 0, 0)) == []


@pytest.fixture
def near_and_far(pair: Pair) -> Pair:
    """Near chunks in docs/*.md, the far ones in notes/*.txt and a_b/ (a prefix with ``_``)."""
    add_file(pair, "/ws/docs/near.md", ["near one", "near two"])
    add_file(pair, "/ws/axb/near.md", ["near three"])
    add_file(pair, "/ws/notes/far.txt", ["far one"])
    add_file(pair, "/ws/a_b/far.md", ["far two"])
    pair.index.prepare(SIGNATURE, 3)
    embed_pending(
        pair.index,
        by_word(
            {
                "near one": vec(1, 0, 0),
                "near two": vec(1, 0.1, 0),
                "near three": vec(1, 0.2, 0),
                "far one": vec(0, 1, 0),
                "far two": vec(-1, 0, 0),
            }
        ),
    )
    return pair


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ["/ws/docs/near.md"]),
        ({"path_prefix": "/ws/notes/"}, ["/ws/notes/far.txt"]),
        ({"path_prefix": "/ws/a_b"}, ["/ws/a_b/far.md"]),  # _ is not a wildcard: /ws/axb stays out
        ({"glob": "*.txt"}, ["/ws/notes/far.txt"]),
        ({"glob": "/ws/a?b/*"}, ["/ws/axb/near.md"]),  # with a /, the glob matches the whole path
        ({"glob": "[!n]*"}, ["/ws/notes/far.txt"]),  # [!...] negates
        ({"path_prefix": "/ws/a", "glob": "far*"}, ["/ws/a_b/far.md"]),
        ({"path_prefix": "/ws/nowhere"}, []),
        ({"glob": "axb/*.md"}, ["/ws/axb/near.md"]),  # whole segments at the end of the path
        ({"glob": "*.{txt,rst}"}, ["/ws/notes/far.txt"]),  # braces
        ({"glob": "/ws/{a_b,notes}/**"}, ["/ws/notes/far.txt"]),  # nearer than a_b/far.md
        # A tuple of prefixes (root selection, issue 12): any one of them; an empty tuple, none.
        ({"path_prefix": ("/ws/a_b/", "/ws/notes/")}, ["/ws/notes/far.txt"]),
        ({"path_prefix": ("/ws/a_b/", "/ws/axb/")}, ["/ws/axb/near.md"]),
        ({"path_prefix": ()}, []),
    ],
)
def test_filters_apply_before_the_top_k(near_and_far: Pair, kwargs: dict, expected: list[str]) -> None:
    hits = near_and_far.index.search(vec(1, 0, 0), limit=1, **kwargs)
    assert [str(h.path) for h in hits] == expected


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        # the nearest chunk is two directories below docs/: "*" does not reach it, "**" does
        ("docs/*.md", ["/ws/docs/flat.md", "/ws/other/docs/far.md"]),
        ("docs/**/*.md", ["/ws/docs/a/b/deep.md", "/ws/docs/flat.md", "/ws/other/docs/far.md"]),
        ("/ws/docs/*", ["/ws/docs/flat.md"]),
        ("**/*.md", ["/ws/docs/a/b/deep.md", "/ws/docs/flat.md", "/ws/other/docs/far.md"]),
        ("*.{md,txt}", ["/ws/docs/a/b/deep.md", "/ws/docs/flat.md", "/ws/other/docs/far.md", "/ws/docs/a/b/x.txt"]),
    ],
)
def test_glob_segments_globstar_and_braces(pair: Pair, glob: str, expected: list[str]) -> None:
    add_file(pair, "/ws/docs/a/b/deep.md", ["deep"])
    add_file(pair, "/ws/docs/flat.md", ["flat"])
    add_file(pair, "/ws/other/docs/far.md", ["far"])
    add_file(pair, "/ws/docs/a/b/x.txt", ["text"])
    pair.index.prepare(SIGNATURE, 3)
    embed_pending(
        pair.index,
        by_word({"deep": vec(1, 0, 0), "flat": vec(1, 0.5, 0), "far": vec(1, 1, 0), "text": vec(0, 0, 1)}),
    )
    # best first: the order of `expected` is by distance
    assert [str(h.path) for h in pair.index.search(vec(1, 0, 0), glob=glob, limit=10)] == expected
    assert [str(h.path) for h in pair.index.search(vec(1, 0, 0), glob=glob, limit=1)] == expected[:1]


@pytest.mark.parametrize("glob", ["", "*.{md", "[abc", "{md}"])
def test_malformed_glob_is_a_usage_error(near_and_far: Pair, glob: str) -> None:
    with pytest.raises(UsageError) as raised:
        near_and_far.index.search(vec(1, 0, 0), glob=glob)
    assert raised.value.code == "usage_error"


def test_prune_deletes_only_unused_vectors(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["apple", "shared"])
    add_file(pair, "/ws/docs/b.md", ["shared", "banana"])
    pair.index.prepare(SIGNATURE, 3)
    assert (
        embed_pending(pair.index, by_word({"apple": vec(1, 0, 0), "shared": vec(0, 1, 0), "banana": vec(0, 0, 1)})) == 3
    )
    assert pair.index.prune() == 0

    pair.store.delete_files([Path("/ws/docs/a.md")])
    assert pair.index.prune() == 1  # apple; shared is still used by b.md
    assert pair.index.prune() == 0
    assert pair.index.status().vectors == 2

    pair.store.delete_files([Path("/ws/docs/b.md")])
    assert pair.index.prune() == 2
    assert pair.index.status() == VectorStatus(0, 0, 0, 0, 0, SIGNATURE)


def test_status_counts(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["apple", "banana", "cherry", "apple"])
    assert pair.index.status() == VectorStatus(4, 0, 0, 4, 0, None)
    assert pair.index.status().semantic_status() == "indexing"
    pair.index.prepare(SIGNATURE, 3)
    apple, banana, cherry, apple_again = pair.index.pending(10)
    pair.index.add([(apple, vec(1, 0, 0)), (banana, None)])
    assert pair.index.attach_known([cherry, apple_again]) == [cherry]
    status = pair.index.status()
    assert status == VectorStatus(chunks=4, embedded=2, unreadable=1, pending=1, vectors=1, signature=SIGNATURE)
    assert status.semantic_status() == "partial"


def test_wrong_dimensions_are_a_store_error_and_write_nothing(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["apple", "banana"])
    pair.index.prepare(SIGNATURE, 3)
    apple, banana = pair.index.pending(10)
    with pytest.raises(StoreError):
        pair.index.add([(apple, vec(1, 0, 0)), (banana, vec(1, 0, 0, 0))])
    assert pair.index.status() == VectorStatus(2, 0, 0, 2, 0, SIGNATURE)
    assert pair.index.pending(10) == [apple, banana]


def test_the_last_failure_is_remembered_until_cleared(pair: Pair) -> None:
    add_file(pair, "/ws/docs/a.md", ["apple"])
    assert pair.index.status().last_error is None
    error = {"code": "embedder_unavailable", "message": "model missing", "hint": "give a folder"}
    pair.index.record_failure(error)
    assert pair.index.status().last_error == error
    assert pair.index.status().to_json()["last_error"] == error
    pair.index.record_failure(None)
    assert pair.index.status().last_error is None
