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
