"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace import Workspace


@pytest.fixture
def many(home: Path) -> Path:
    """30 files, each one chunk holding `needle` (a different number of times)."""
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    for i in range(30):
        (docs / f"f{i:02d}.md").write_text(f"# File {i}\n\n" + "needle " * (1 + i % 7) + f"word{i}\n")
    with Workspace.open(home) as ws:
        assert ws.index().files_indexed == 30
    return docs
