"""The ``scope`` object tests expect from search and retrieve (issue 12)."""

from __future__ import annotations

from typing import Any


def complete_scope(roots: list[str], home: str | None, widened: bool) -> dict[str, Any]:
    """``{"roots", "home", "widened", "coverage"}`` for roots that were all indexed whole: each
    coverage row ``{"root": name, "state": "complete"}``, in the order of ``roots``."""
    return {"roots": roots, "home": home, "widened": widened,
            "coverage": [{"root": name, "state": "complete"} for name in roots]}
