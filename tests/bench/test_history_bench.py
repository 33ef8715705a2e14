"""The history benchmark's own machinery (benchmarks/history.py): the search plan, the isolation
checker (it must see a leak when there is one), the host-side baselines, and a small end-to-end
run. No timing is asserted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import common
from benchmarks import history as hb
from hermes_workspace.testing.host_history import populate


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("host")
    return populate(folder / "state.db", projects_path=folder / "projects.db", messages=2_000, seed=0)


def test_search_plan_is_deterministic_and_covers_every_scope_and_kind(host) -> None:
    plan = hb.make_searches(host, 200)
    assert plan == hb.make_searches(host, 200)
    scopes = {p.id for p in host.projects} | {"git:" + r for r in host.auto_repos}
    assert {s.scope for s in plan} == scopes
    assert {s.kind for s in plan} == {"word", "two words", "three words", "question", "foreign"}
    by_cwd = [s for s in plan if s.by == "cwd"]
    assert by_cwd and all(s.scope in {p.id for p in host.projects} for s in by_cwd)
    for s in plan:
        own = set(host.vocabulary[s.scope])
        words = set(s.query.split())
        if s.kind == "foreign":
            assert not words & own, s
        else:
            assert words & own, s


def test_host_scopes_match_what_populate_attributed(host) -> None:
    scopes = hb.host_scopes(host)
    counts: dict[str, int] = {}
    for scope in scopes.values():
        counts[scope or "home"] = counts.get(scope or "home", 0) + 1
    assert len(scopes) == host.sessions
    assert counts == host.sessions_by_scope


def _result(project: str, *hits: SimpleNamespace, mode: str = "keyword") -> SimpleNamespace:
    return SimpleNamespace(project=SimpleNamespace(id=project), results=list(hits), mode=mode)


def _hit(session: str, snippet: str, source: str = "keyword", neighbours: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(session_id=session, snippet=snippet, score_source=source, before=[],
                           after=[{"text": t} for t in neighbours])


def test_isolation_checker_counts_every_kind_of_leak() -> None:
    owners = {"invoice": {"p1"}, "telescope": {"p2"}}
    scopes = {"s1": "p1", "s2": "p2"}
    iso = hb.Isolation()
    search = hb.Search("p1", "project", "p1", "invoice", "word")
    iso.check(search, _result("p1", _hit("s1", "the invoice is late")), scopes, owners)
    assert iso.to_json() == {"hits": 1, "outside_scope": 0, "foreign_words": 0, "foreign_query_hits": 0,
                             "foreign_query_semantic_hits": 0, "wrong_project": 0}
    iso.check(search, _result("p1", _hit("s2", "invoice")), scopes, owners)  # a session of p2
    iso.check(search, _result("p1", _hit("s1", "invoice", neighbours=("the Telescope mount",))), scopes, owners)
    iso.check(search, _result("p2"), scopes, owners)  # resolved to another project
    foreign = hb.Search("p1", "project", "p1", "telescope", "foreign")
    iso.check(foreign, _result("p1", _hit("s1", "a message")), scopes, owners)
    iso.check(foreign, _result("p1", _hit("s1", "a message", source="semantic"), mode="hybrid"), scopes, owners)
    assert iso.to_json() == {"hits": 5, "outside_scope": 1, "foreign_words": 1, "foreign_query_hits": 1,
                             "foreign_query_semantic_hits": 1, "wrong_project": 1}


def test_like_pattern_escapes_wildcards() -> None:
    assert hb._like("50%_off") == "%50\\%\\_off%"
    assert hb._fts_quoted('say "hi"') == '"say ""hi"""'


@pytest.mark.parametrize("baseline", [hb.like_baseline, hb.fts_baseline])
def test_baselines_stay_in_scope_and_find_only_the_scopes_words(host, baseline) -> None:
    import json

    scopes = hb.host_scopes(host)
    project = host.projects[0].id
    ids = json.dumps(sorted(s for s, scope in scopes.items() if scope == project))
    conn = hb._ro(host.database)
    try:
        rows = baseline(conn, ids, [host.vocabulary[project][0]])
        assert len(rows) == hb.LIMIT
        assert {scopes[str(r[1])] for r in rows} == {project}
        assert {r[2] for r in rows} <= {"user", "assistant"}
        assert all(host.vocabulary[project][0] in r[3].lower() for r in rows)
        other = host.projects[1].id
        assert baseline(conn, ids, [host.vocabulary[other][0]]) == []
    finally:
        conn.close()


def test_a_small_run_measures_everything_and_finds_no_leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "WORK_DIR", tmp_path)
    monkeypatch.setattr(hb, "WORK_DIR", tmp_path)
    data = hb.measure(2_000, searches=24, hybrid_searches=8, rounds=1, embedder="none")
    assert data["fixture"]["messages"] == 2_000
    assert data["first_sync"]["sync_report"]["sessions"] == data["fixture"]["sessions"]
    assert data["first_sync"]["index_bytes"] > 0
    assert data["keyword"]["searches"] == 24
    assert data["keyword"]["mean_hits"] > 0
    assert data["baselines"]["like_scan"]["searches"] == data["baselines"]["host_fts"]["searches"] == 24
    assert data["append"]["append_then_search"]["missed"] == 0
    assert data["append"]["largest"]["session_messages_before"] >= data["append"]["median"]["session_messages_before"]
    assert data["hybrid"] == {"skipped": "--embedder none"}
    iso = data["isolation"]
    assert iso["hits_checked"] > 0
    assert {k: v for k, v in iso.items() if k not in ("hits_checked", "foreign_query_semantic_hits")} == {
        "outside_scope": 0, "foreign_words": 0, "foreign_query_hits": 0, "wrong_project": 0,
        "baseline_outside_scope": 0}
    assert list(tmp_path.glob("tmp/*")) == []  # the temporary homes are gone
