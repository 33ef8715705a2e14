"""Shared fixtures. Sockets are disabled for every test (pytest-socket, see pyproject)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HERMES_HOME, also set in the environment (and no $HERMES_WORKSPACE_CONFIG)."""
    path = tmp_path / "hermes-home"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    monkeypatch.delenv("HERMES_WORKSPACE_CONFIG", raising=False)
    return path
