"""ResultSetStore, run against the in-memory fake and the SQLite adapter (tables in the index file)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryResultSets
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.adapters.sqlite_result_sets import SqliteResultSets, hit_from_json, hit_to_json
from hermes_workspace.domain.errors import HandleExpiredError, HandleNotFoundError
from hermes_workspace.domain.model import Duplicate, SearchHit
from hermes_workspace.domain.ports import ResultSetStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _hit(n: int) -> SearchHit:
    return SearchHit(
        path=Path(f"/w/docs/file{n}.md"),
        line_start=n,
        line_end=n + 4,
        section="## S",
        chunk_index=n,
        score=1.5 / (n + 1),
        tokens=12,
        modified="2026-01-01T00:00:00Z",
        content=f"text of hit {n}\nsecond line é 東京",
        breadcrumb="# T > ## S",
        definitions=("# T", "# T > ## S"),
        root=Path("/w"),
        duplicates=(Duplicate(Path("/w/copy.md"), 3, 7),),
        exact_matches=1,
        file_hash="ab" * 32,
    )


@pytest.fixture(params=["memory", "sqlite"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    index = tmp_path / "workspace.sqlite"
    SqliteFts5Store(index).close()  # an (empty) index file, as `index` leaves it
    opened: list[SqliteResultSets] = []

    def factory(clock: Clock, *, ttl_seconds: float = 3600.0, max_sets: int = 200) -> ResultSetStore:
        if request.param == "memory":
            return InMemoryResultSets(ttl_seconds=ttl_seconds, max_sets=max_sets, clock=clock)
        sets = SqliteResultSets(index, ttl_seconds=ttl_seconds, max_sets=max_sets, clock=clock)
        opened.append(sets)
        return sets

    yield factory
    for sets in opened:
        sets.close()


def test_a_saved_set_loads_with_the_same_hits_in_order(make) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = make(clock)
    hits = [_hit(n) for n in range(3)]
    saved = store.save("search", "rollback plan", {"limit": 2, "glob": None}, hits)
    assert re.fullmatch(r"[0-9a-f]{8}", saved.set_id)
    assert (saved.created_at, saved.expires_at) == (1_000_000.0, 1_003_600.0)
    loaded = store.load(saved.set_id)
    assert list(loaded.hits) == hits
    assert (loaded.kind, loaded.query, loaded.options) == ("search", "rollback plan", {"limit": 2, "glob": None})
    assert loaded.hits[0].root == Path("/w")


def test_every_save_gets_a_new_id(make) -> None:  # type: ignore[no-untyped-def]
    store = make(Clock())
    ids = [store.save("search", f"q{i}", {}, [_hit(i)]).set_id for i in range(30)]
    assert len(set(ids)) == 30
    assert [store.load(i).query for i in ids] == [f"q{i}" for i in range(30)]


def test_an_unknown_id_is_not_found(make) -> None:  # type: ignore[no-untyped-def]
    store = make(Clock())
    with pytest.raises(HandleNotFoundError) as raised:
        store.load("0123abcd")
    assert raised.value.exit_code == 66


def test_a_set_expires_after_its_ttl(make) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = make(clock, ttl_seconds=60)
    saved = store.save("search", "q", {}, [_hit(1)])
    clock.now += 59
    assert store.load(saved.set_id).query == "q"
    clock.now += 1
    with pytest.raises(HandleExpiredError) as raised:
        store.load(saved.set_id)
    assert (raised.value.code, raised.value.exit_code) == ("handle_expired", 66)
    store.save("search", "later", {}, [_hit(2)])  # evicts it for good: still expired, not unknown
    with pytest.raises(HandleExpiredError):
        store.load(saved.set_id)


def test_the_oldest_sets_are_evicted_beyond_the_cap(make) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = make(clock, max_sets=2)
    ids = []
    for i in range(3):
        ids.append(store.save("search", f"q{i}", {}, [_hit(i)]).set_id)
        clock.now += 1
    with pytest.raises(HandleExpiredError):
        store.load(ids[0])
    assert [store.load(i).query for i in ids[1:]] == ["q1", "q2"]


def test_sqlite_sets_survive_a_new_connection(tmp_path: Path) -> None:
    index = tmp_path / "workspace.sqlite"
    SqliteFts5Store(index).close()
    first = SqliteResultSets(index)
    saved = first.save("search", "q", {"limit": 20}, [_hit(1), _hit(2)])
    first.close()
    second = SqliteResultSets(index)
    try:
        assert list(second.load(saved.set_id).hits) == [_hit(1), _hit(2)]
    finally:
        second.close()


def test_the_index_store_still_opens_an_index_holding_result_sets(tmp_path: Path) -> None:
    index = tmp_path / "workspace.sqlite"
    SqliteFts5Store(index).close()
    sets = SqliteResultSets(index)
    sets.save("search", "q", {}, [_hit(1)])
    sets.close()
    for readonly in (False, True):
        SqliteFts5Store(index, readonly=readonly).close()


def test_hit_json_round_trip_keeps_every_field_but_stale_and_handle() -> None:
    from dataclasses import replace

    hit = replace(_hit(4), keyword_rank=2, semantic_rank=None, similarity=0.5, fused_score=0.03, file_rank=2)
    assert hit_from_json(hit_to_json(replace(hit, stale=True, handle="0123abcd:1"))) == hit
