"""Use cases: list, add and remove workspace roots (seed 000 ``roots list|add|remove``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hermes_workspace.domain.errors import RootNotConfiguredError, RootNotFoundError, UsageError
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.ports import ConfigRepository


@dataclass
class ListRoots:
    """The primary workspace (recursive, ``primary=True``) followed by the added roots."""

    config: ConfigRepository
    home: Path

    def execute(self) -> list[Root]:
        """Roots in config order; without the primary workspace when ``workspace.enabled`` is
        false (it is then not indexed). Raises ``ConfigError`` for an invalid config."""
        config = self.config.load()
        roots = config.all_roots(self.home)
        return roots if config.enabled else [r for r in roots if not r.primary]


@dataclass
class AddRoot:
    """Adds a directory as a root, or updates ``recursive`` of one already configured."""

    config: ConfigRepository
    home: Path

    def execute(self, path: Path | str, *, recursive: bool = False) -> Root:
        """Add ``path`` (``~`` expanded, relative to the current directory, symlinks resolved).

        Returns the configured :class:`Root`. Adding the primary workspace changes nothing.

        Raises:
            RootNotFoundError: ``path`` does not exist or is not a directory.
            UsageError: ``path`` is an empty string.
            ConfigError: the existing config is invalid (nothing is written).
        """
        candidate = Path(_non_empty(path)).expanduser()
        if not candidate.exists():
            raise RootNotFoundError(f"root does not exist: {candidate}")
        if not candidate.is_dir():
            raise RootNotFoundError(f"root is not a directory: {candidate}",
                                    hint="Roots are directories; add the folder that holds the file.")
        resolved = candidate.resolve()
        config = self.config.load()
        primary = config.primary_path(self.home)
        if resolved == primary or resolved == primary.resolve():
            return Root(path=primary, recursive=True, primary=True)
        root = Root(path=resolved, recursive=recursive)
        roots = list(config.roots)
        for i, existing in enumerate(roots):
            if existing.path == resolved:
                if existing == root:
                    return root
                roots[i] = root
                break
        else:
            roots.append(root)
        self.config.save_roots(tuple(roots))
        return root


@dataclass
class RemoveRoot:
    """Removes an added root from the config (its files leave the index at the next run)."""

    config: ConfigRepository
    home: Path

    def execute(self, path: Path | str) -> Root:
        """Remove the root whose path equals ``path`` as given, absolute, or resolved.

        Raises:
            RootNotConfiguredError: no configured root has that path.
            UsageError: ``path`` is the primary workspace, or empty.
        """
        given = Path(_non_empty(path)).expanduser()
        forms = {given.absolute()}
        try:
            forms.add(given.resolve())
        except OSError:
            pass
        config = self.config.load()
        if config.primary_path(self.home) in forms:
            raise UsageError(
                "the primary workspace cannot be removed",
                hint="Set workspace.path in config.yaml to move it, or workspace.enabled: false.",
            )
        for existing in config.roots:
            if existing.path in forms:
                self.config.save_roots(tuple(r for r in config.roots if r is not existing))
                return existing
        raise RootNotConfiguredError(f"not a configured root: {given}")


def _non_empty(path: Path | str) -> Path | str:
    """``path`` unless it is an empty string (which ``Path`` would silently read as ``.``)."""
    if isinstance(path, str) and not path.strip():
        raise UsageError("the path is empty", hint="Give a directory, e.g. `.` for the current one.")
    return path
