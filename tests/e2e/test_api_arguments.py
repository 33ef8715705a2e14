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
