"""Workspace configuration: the ``workspace`` and ``knowledgebase`` sections of config.yaml.

Validation happens once, in :meth:`WorkspaceConfig.from_dict`, so every command fails early with a
:class:`ConfigError` naming the key instead of a traceback from deep inside a library.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_workspace.domain import constants as c
from hermes_workspace.domain.errors import ConfigError
from hermes_workspace.domain.model import Root


MAX_FILE_MB_LIMIT = 1_000_000.0
"""Upper bound of ``max_file_mb`` (a terabyte): larger values overflow byte counts."""
MAX_DEFAULT_LIMIT = 10_000
"""Upper bound of ``default_limit``, the same as the largest ``--limit``."""


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    """``knowledgebase.chunking``: sizes in words. ``0 <= overlap < chunk_size``; files of at
    most ``threshold`` words become one chunk."""

    chunk_size: int = c.DEFAULT_CHUNK_SIZE
    overlap: int = c.DEFAULT_OVERLAP
    threshold: int = c.DEFAULT_THRESHOLD


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    """The validated configuration.

    ``workspace_path`` is ``None`` when config leaves ``workspace.path`` empty (then the primary
    workspace is ``HERMES_HOME/workspace``). ``roots`` are the added roots, not the primary one.
    ``max_file_mb`` is in mebibytes (2**20 bytes).
    """

    enabled: bool = True
    workspace_path: Path | None = None
    roots: tuple[Root, ...] = ()
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    max_file_mb: float = c.DEFAULT_MAX_FILE_MB
    default_limit: int = c.DEFAULT_SEARCH_LIMIT

    @property
    def max_file_bytes(self) -> int:
        """``max_file_mb`` in bytes."""
        return int(self.max_file_mb * 1024 * 1024)

    def primary_path(self, home: Path) -> Path:
        """The primary workspace directory: ``workspace.path`` or ``home/workspace``, absolute."""
        if self.workspace_path is not None:
            return self.workspace_path
        return (home / c.WORKSPACE_DIRNAME).absolute()

    def all_roots(self, home: Path) -> list[Root]:
        """The primary workspace (recursive) followed by the added roots, without duplicates."""
        primary = Root(path=self.primary_path(home), recursive=True, primary=True)
        roots = [primary]
        roots.extend(r for r in self.roots if r.path != primary.path)
        return roots

    def with_roots(self, roots: tuple[Root, ...]) -> WorkspaceConfig:
        """A copy with ``roots`` replaced."""
        return replace(self, roots=roots)

    def chunking_signature(self, chunker_signature: str) -> str:
        """SHA-256 hex digest of the chunking settings and the chunker's own signature: a change
        in either re-indexes every file (seed 000, "config signature")."""
        payload = json.dumps(
            {
                "chunk_size": self.chunking.chunk_size,
                "overlap": self.chunking.overlap,
                "threshold": self.chunking.threshold,
                "tokenizer": "word",
                "chunker": chunker_signature,
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, base_dir: Path | None = None) -> WorkspaceConfig:
        """Build and validate from the parsed YAML document (the whole config file: other
        sections are ignored). Relative paths (``workspace.path``, roots) are taken from
        ``base_dir``, the config file's folder, so that they mean the same from any current
        directory; without ``base_dir``, from the current directory.

        Raises:
            ConfigError: a section is not a mapping, a value has the wrong type, or a constraint of
                seed 000 fails (``chunk_size > 0``, ``0 <= overlap < chunk_size``,
                ``threshold >= 0``, ``max_file_mb > 0``, ``default_limit >= 1``).
        """
        data = data or {}
        if not isinstance(data, Mapping):
            raise ConfigError("config.yaml must hold a mapping at the top level")
        ws = _section(data, "workspace")
        kb = _section(data, "knowledgebase")
        chunking = _section(kb, "chunking", prefix="knowledgebase.")
        indexing = _section(kb, "indexing", prefix="knowledgebase.")
        search = _section(kb, "search", prefix="knowledgebase.")

        enabled = _bool(ws, "enabled", True, "workspace.enabled")
        raw_path = ws.get("path") or ""
        if not isinstance(raw_path, str):
            raise ConfigError(f"workspace.path must be a string, got {raw_path!r}")
        workspace_path = normalize_root_path(raw_path, base_dir) if raw_path.strip() else None

        chunk_size = _int(chunking, "chunk_size", c.DEFAULT_CHUNK_SIZE, "knowledgebase.chunking.chunk_size")
        overlap = _int(chunking, "overlap", c.DEFAULT_OVERLAP, "knowledgebase.chunking.overlap")
        threshold = _int(chunking, "threshold", chunk_size, "knowledgebase.chunking.threshold")
        max_file_mb = _number(indexing, "max_file_mb", c.DEFAULT_MAX_FILE_MB, "knowledgebase.indexing.max_file_mb")
        default_limit = _int(search, "default_limit", c.DEFAULT_SEARCH_LIMIT, "knowledgebase.search.default_limit")

        if chunk_size <= 0:
            raise ConfigError(f"knowledgebase.chunking.chunk_size must be > 0, got {chunk_size}")
        if overlap < 0 or overlap >= chunk_size:
            raise ConfigError(
                f"knowledgebase.chunking.overlap must be >= 0 and < chunk_size ({chunk_size}), got {overlap}"
            )
        if threshold < 0:
            raise ConfigError(f"knowledgebase.chunking.threshold must be >= 0, got {threshold}")
        if not 0 < max_file_mb <= MAX_FILE_MB_LIMIT:
            raise ConfigError(
                f"knowledgebase.indexing.max_file_mb must be > 0 and <= {MAX_FILE_MB_LIMIT}, got {max_file_mb}"
            )
        if not 1 <= default_limit <= MAX_DEFAULT_LIMIT:
            raise ConfigError(
                f"knowledgebase.search.default_limit must be >= 1 and <= {MAX_DEFAULT_LIMIT}, got {default_limit}"
            )

        return cls(
            enabled=enabled,
            workspace_path=workspace_path,
            roots=_roots(kb.get("roots"), base_dir),
            chunking=ChunkingConfig(chunk_size=chunk_size, overlap=overlap, threshold=threshold),
            max_file_mb=float(max_file_mb),
            default_limit=default_limit,
        )


def normalize_root_path(raw: str, base_dir: Path | None = None) -> Path:
    """A path from config as the workspace uses it: ``~`` expanded, made absolute (a relative
    path is taken from ``base_dir``, else the current directory); symlinks are not resolved."""
    path = Path(raw).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return path.absolute()


def _section(data: Mapping[str, Any], key: str, prefix: str = "") -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{prefix}{key} must be a mapping, got {type(value).__name__}")
    return value


def _int(data: Mapping[str, Any], key: str, default: int, name: str) -> int:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return value


def _number(data: Mapping[str, Any], key: str, default: float, name: str) -> float:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    return float(value)


def _bool(data: Mapping[str, Any], key: str, default: bool, name: str) -> bool:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return value


def _roots(value: Any, base_dir: Path | None) -> tuple[Root, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(f"knowledgebase.roots must be a list, got {type(value).__name__}")
    roots: list[Root] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, Mapping) or not isinstance(item.get("path"), str) or not item["path"].strip():
            raise ConfigError(
                f"knowledgebase.roots[{i}] must be a mapping with a non-empty 'path', got {item!r}",
                hint="Each root looks like {path: /abs/dir, recursive: false}.",
            )
        recursive = _bool(item, "recursive", False, f"knowledgebase.roots[{i}].recursive")
        path = normalize_root_path(item["path"], base_dir)
        if all(r.path != path for r in roots):
            roots.append(Root(path=path, recursive=recursive))
    return tuple(roots)
