"""Wrong argument types to the Python API are usage errors, not TypeErrors from deep inside."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.domain.errors import UsageError


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": None}, "query must be a string"),
        ({"query": "fish", "limit": "x"}, "limit must be a whole number"),
        ({"query": "fish", "limit": True}, "limit must be a whole number"),
        ({"query": "fish", "glob": 5}, "glob must be a string or None"),
        ({"query": "fish", "path": 3}, "path must be a string or a path or None"),
        ({"query": "fish", "mode": 1}, "mode must be a string or None"),
    ],
)
def test_search_argument_types(home: Path, kwargs: dict, message: str) -> None:
    with Workspace.open(home) as ws, pytest.raises(UsageError, match=message):
        ws.search(**kwargs)


def test_fakes_given_to_open_give_hybrid_search(home: Path) -> None:
    from hermes_workspace.adapters.memory import HashEmbedder, InMemoryIndexStore, InMemoryVectorIndex

    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "runbook.md").write_text("# Rollback\n\nrevert the deployment to the previous tag\n", encoding="utf-8")
    (docs / "pasta.md").write_text("# Dinner\n\nboil the pasta for nine minutes\n", encoding="utf-8")
    store = InMemoryIndexStore()
    embedder = HashEmbedder(synonyms={"undo": "revert"})
    with Workspace.open(home, store=store, embedder=embedder, vector_index=InMemoryVectorIndex(store)) as ws:
        summary = ws.index()
        assert summary.semantic is not None and summary.semantic.embedded == 2
        hits = ws.search("how do I undo the deployment")
        status = ws.semantic_status()
    assert (hits.mode, hits.semantic_status) == ("hybrid", "ready")
    assert hits[0].path.name == "runbook.md"
    assert (status["provider"], status["model"], status["default_mode"]) == ("custom", embedder.signature, "hybrid")


@pytest.mark.parametrize("recursive", ["no", 1, "false", 0.0, "yes"])
def test_add_root_refuses_a_recursive_that_is_not_a_bool_and_writes_nothing(
    home: Path, tmp_path: Path, recursive: object
) -> None:
    # Found in a trial: add_root(p, recursive="no") was written to config.yaml, and every later
    # command (roots remove included) then failed on the unreadable config.
    folder = tmp_path / "folder"  # beside HERMES_HOME: a recursive tmp_path would hold its workspace
    folder.mkdir()
    with Workspace.open(home) as ws:
        with pytest.raises(UsageError, match="recursive must be True or False or None") as info:
            ws.add_root(folder, recursive=recursive)  # type: ignore[arg-type]
        assert info.value.code == "usage_error" and info.value.exit_code == 2
        assert not (home / "config.yaml").exists()
        assert ws.add_root(folder, recursive=True).action == "added"
        assert ws.remove_root(folder).path == folder


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda ws: ws.add_root(None), "path must be a string or a path, got NoneType"),
        (lambda ws: ws.add_root(5), "path must be a string or a path, got int"),
        (lambda ws: ws.remove_root(None), "path must be a string or a path, got NoneType"),
        (lambda ws: ws.index(workers="two"), "workers must be a whole number or None, got str"),
        (lambda ws: ws.index(workers=True), "workers must be a whole number or None, got bool"),
        (lambda ws: ws.index(workers=0), "workers must be >= 1"),
        (lambda ws: ws.index(workers=2.0), "workers must be a whole number or None, got float"),
        (lambda ws: ws.index(progress=5), "progress must be a callable"),
        (lambda ws: ws.index(progress="bar"), "progress must be a callable"),
    ],
)
def test_wrong_argument_types_are_usage_errors(home: Path, call, message: str) -> None:
    with Workspace.open(home) as ws, pytest.raises(UsageError, match=message):
        call(ws)
    assert not (home / "workspace" / ".index" / "workspace.sqlite").exists()


@pytest.mark.parametrize("home_value", [5, 2.5, ["a"], b"/tmp/x"])
def test_open_refuses_a_home_of_the_wrong_type(home_value: object) -> None:
    with pytest.raises(UsageError, match="home must be a string or a path or None"):
        Workspace.open(home_value)  # type: ignore[arg-type]


def test_a_closed_workspace_refuses_calls(home: Path) -> None:
    ws = Workspace.open(home)
    ws.close()
    ws.close()  # idempotent
    for call in (ws.roots, ws.status, ws.index, lambda: ws.search("x"), lambda: ws.add_root(home), lambda: ws.home):
        with pytest.raises(UsageError, match="this Workspace is closed"):
            call()
    with pytest.raises(UsageError, match="closed"), ws:
        pass


def test_a_progress_sink_object_is_used_as_a_sink(home: Path) -> None:
    from hermes_workspace.adapters.memory import RecordingProgressSink

    (home / "workspace" / "notes").mkdir(parents=True)
    (home / "workspace" / "notes" / "a.md").write_text("# A\n\nalpha\n")
    sink = RecordingProgressSink()
    with Workspace.open(home) as ws:
        ws.index(progress=sink)
    assert sink.events[0] == ("start", 1) and sink.events[-1] == ("finish",)


def test_a_progress_callback_of_the_wrong_shape_is_a_usage_error(home: Path) -> None:
    with Workspace.open(home) as ws, pytest.raises(UsageError, match=r"progress must take \(position, total, path\)"):
        ws.index(progress=lambda position: None)


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_a_usage_error(home: Path, query: str) -> None:
    with Workspace.open(home) as ws, pytest.raises(UsageError, match="search needs a query"):
        ws.search(query)
