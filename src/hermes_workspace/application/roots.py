"""Use cases: list, add and remove workspace roots (seed 000 ``roots list|add|remove``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import RootNotConfiguredError, RootNotFoundError, UsageError
from hermes_workspace.domain.exclusions import excluded_path
from hermes_workspace.domain.model import Root, RootChange
from hermes_workspace.domain.paths import display_name, to_storage
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
    """Adds a directory as a root, or changes ``recursive`` of one already configured."""

    config: ConfigRepository
    home: Path

    def execute(self, path: Path | str, *, recursive: bool | None = None) -> RootChange:
        """Add ``path`` (``~`` expanded, relative to the current directory, symlinks resolved).

        ``recursive``: index sub-folders too; ``None`` keeps the setting of a root already
        configured, and means ``False`` for a new one. The config is read and written in one
        locked edit, so concurrent adds all persist.

        Returns a :class:`RootChange` (``added``, ``updated`` or ``unchanged``, with the previous
        root). Adding the primary workspace changes nothing.

        Raises:
            RootNotFoundError: ``path`` does not exist, is not a directory, or cannot be looked
                at (a parent folder without permission).
            UsageError: ``path`` is an empty string.
            ConfigError: the existing config is invalid (nothing is written).
            ConfigWriteError: the config cannot be written.
        """
        resolved = _existing_directory(Path(_non_empty(path)).expanduser())
        outcome: list[RootChange] = []

        def change(config: WorkspaceConfig) -> tuple[Root, ...] | None:
            primary = config.primary_path(self.home)
            if resolved == primary or resolved == primary.resolve():
                outcome.append(RootChange(Root(path=primary, recursive=True, primary=True), "unchanged"))
                return None
            roots = list(config.roots)
            for i, existing in enumerate(roots):
                if existing.path == resolved:
                    wanted = existing.recursive if recursive is None else recursive
                    if wanted == existing.recursive:
                        outcome.append(RootChange(existing, "unchanged", existing))
                        return None
                    roots[i] = Root(path=resolved, recursive=wanted)
                    outcome.append(RootChange(roots[i], "updated", existing))
                    return tuple(roots)
            root = Root(path=resolved, recursive=bool(recursive))
            outcome.append(RootChange(root, "added"))
            return (*roots, root)

        self.config.update_roots(change)
        return outcome[-1]


@dataclass
class RemoveRoot:
    """Removes an added root from the config (its files leave the index at the next run)."""

    config: ConfigRepository
    home: Path

    def execute(self, path: Path | str) -> Root:
        """Remove the root whose path equals ``path`` as given, absolute, or resolved; one locked
        edit of the config.

        Raises:
            RootNotConfiguredError: no configured root has that path.
            UsageError: ``path`` is the primary workspace, or empty.
            ConfigError: the config is invalid (nothing is written).
            ConfigWriteError: the config cannot be written.
        """
        given = Path(_non_empty(path)).expanduser()
        forms = {given.absolute()}
        try:
            forms.add(given.resolve())
        except OSError:
            pass
        removed: list[Root] = []

        def change(config: WorkspaceConfig) -> tuple[Root, ...] | None:
            if config.primary_path(self.home) in forms:
                raise UsageError(
                    "the primary workspace cannot be removed",
                    hint="Set workspace.path in config.yaml to move it, or workspace.enabled: false.",
                )
            for existing in config.roots:
                if existing.path in forms:
                    removed.append(existing)
                    return tuple(r for r in config.roots if r is not existing)
            raise RootNotConfiguredError(f"not a configured root: {given}")

        self.config.update_roots(change)
        return removed[-1]


def _existing_directory(candidate: Path) -> Path:
    """``candidate`` resolved, if it is a directory that can be looked at."""
    try:
        if not candidate.exists():
            raise RootNotFoundError(f"root does not exist: {candidate}")
        if not candidate.is_dir():
            raise RootNotFoundError(
                f"root is not a directory: {candidate}",
                hint="Roots are directories; add the folder that holds the file.",
            )
        resolved = candidate.resolve()
    except OSError as exc:  # a parent folder without permission, a name too long, a loop...
        reason = exc.strerror or type(exc).__name__
        raise RootNotFoundError(
            f"cannot look at {candidate}: {reason}",
            hint="Check the path and the permissions of the folders on the way to it.",
        ) from exc
    category = excluded_path(resolved.parts[1:], is_dir=True)
    if category is not None:
        raise UsageError(
            f"{display_name(str(resolved))} is never indexed ({category.replace('_', ' ')} folder)",
            hint="Secrets, version-control folders and the workspace's own files stay out of every index; "
            "add the folder that holds your documents instead.",
        )
    try:
        to_storage(str(resolved))
    except ValueError as exc:  # every file under it would fail
        raise UsageError(f"cannot index {display_name(str(resolved))}: {exc}",
                         hint="Rename the folder, or add a folder below it.") from exc
    return resolved


def _non_empty(path: Path | str) -> Path | str:
    """``path`` unless it is an empty string (which ``Path`` would silently read as ``.``)."""
    if isinstance(path, str) and not path.strip():
        raise UsageError("the path is empty", hint="Give a directory, e.g. `.` for the current one.")
    return path
