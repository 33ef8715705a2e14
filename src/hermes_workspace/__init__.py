"""hermes-workspace: local workspace search for AI agents.

Index folders into SQLite FTS5 along their structure (markdown headings, code syntax trees,
paragraphs) and search them; every hit carries an absolute path and an exact 1-based line range.
The public API is :class:`Workspace`; the domain dataclasses and errors are re-exported here.
Exports are imported lazily so that ``import hermes_workspace`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Workspace": "hermes_workspace.entrypoints.api",
    "Root": "hermes_workspace.domain.model",
    "Chunk": "hermes_workspace.domain.model",
    "FileRecord": "hermes_workspace.domain.model",
    "SearchHit": "hermes_workspace.domain.model",
    "IndexSummary": "hermes_workspace.domain.model",
    "FileFailure": "hermes_workspace.domain.model",
    "StoreStatus": "hermes_workspace.domain.model",
    "WorkspaceConfig": "hermes_workspace.domain.config",
    "WorkspaceError": "hermes_workspace.domain.errors",
    "ConfigError": "hermes_workspace.domain.errors",
    "UsageError": "hermes_workspace.domain.errors",
    "RootNotFoundError": "hermes_workspace.domain.errors",
    "RootNotConfiguredError": "hermes_workspace.domain.errors",
    "MissingExtraError": "hermes_workspace.domain.errors",
    "IndexBusyError": "hermes_workspace.domain.errors",
    "IndexNotFoundError": "hermes_workspace.domain.errors",
    "StoreError": "hermes_workspace.domain.errors",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover
    from hermes_workspace.domain.config import WorkspaceConfig
    from hermes_workspace.domain.errors import (
        ConfigError,
        IndexBusyError,
        IndexNotFoundError,
        MissingExtraError,
        RootNotConfiguredError,
        RootNotFoundError,
        StoreError,
        UsageError,
        WorkspaceError,
    )
    from hermes_workspace.domain.model import (
        Chunk,
        FileFailure,
        FileRecord,
        IndexSummary,
        Root,
        SearchHit,
        StoreStatus,
    )
    from hermes_workspace.entrypoints.api import Workspace


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_workspace' has no attribute {name!r}")
    return getattr(import_module(module), name)
