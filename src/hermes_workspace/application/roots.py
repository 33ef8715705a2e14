"""Use cases: list, add, rename and remove workspace roots (seed 000 ``roots list|add|remove``;
names: issue 12, :mod:`hermes_workspace.domain.root_names`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hermes_workspace.domain.config import (
    WorkspaceConfig,
    root_extensions_setting,
    root_max_file_size,
    root_profile,
)
from hermes_workspace.domain.errors import RootNotConfiguredError, RootNotFoundError, RootOverlapError, UsageError
from hermes_workspace.domain.exclusions import excluded_path
from hermes_workspace.domain.model import Root, RootChange
from hermes_workspace.domain.root_names import containing_root, root_name_problem, root_overlap
from hermes_workspace.domain.paths import display_name, to_storage
from hermes_workspace.domain.ports import ConfigRepository


@dataclass
class ListRoots:
    """The primary workspace (recursive, ``primary=True``) followed by the added roots, each
    with its name (:mod:`hermes_workspace.domain.root_names`)."""

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

    def execute(
        self, path: Path | str, *, recursive: bool | None = None, name: str | None = None,
        profile: str | None = None, extensions: Sequence[str] | None = None,
        max_file_size: int | str | None = None,
    ) -> RootChange:
        """Add ``path`` (``~`` expanded, relative to the current directory, symlinks resolved).

        ``recursive``: index sub-folders too; ``None`` keeps the setting of a root already
        configured, and means ``False`` for a new one (``True`` with ``profile="code"``).
        ``profile``: ``"code"`` (extensions from the project's marker files,
        :mod:`~hermes_workspace.domain.profiles`), ``"none"`` to remove a profile, ``None`` to keep
        what the root has. ``extensions``: the exact suffixes to index (``[".go", ".proto"]``),
        winning over the profile; ``None`` keeps the root's. ``max_file_size``: the root's size
        cap, bytes or a size string (``"1MB"``, :func:`~hermes_workspace.domain.sizes.parse_size`);
        ``None`` keeps the root's. ``name``: the root's name (written to the
        config); ``None`` keeps the name of a root already configured, and gives a new one the
        name derived from its folder (not written, :mod:`~hermes_workspace.domain.root_names`).
        The config is read and written in one locked edit, so concurrent adds all persist.

        Returns a :class:`RootChange` (``added``, ``updated`` or ``unchanged``, with the previous
        root); its root carries its name. Adding the primary workspace changes nothing.

        Raises:
            RootNotFoundError: ``path`` does not exist, is not a directory, or cannot be looked
                at (a parent folder without permission).
            UsageError: ``path`` is an empty string; ``name`` breaks the naming rule or is the
                name of another root (or the primary workspace is given a name: use ``roots rename``);
                ``profile`` is unknown, an extension malformed, ``max_file_size`` not a size; the
                primary workspace is given a profile, extensions or a size cap.
            RootOverlapError: (a ``UsageError``, code ``root_overlap``) the folder is another
                root's under another path (a symbolic link), lies inside a recursive root (the
                primary workspace included), or, recursive, would hold another root: the files
                would be indexed twice (seed 004). A root inside a non-recursive one is fine.
            ConfigError: the existing config is invalid (nothing is written).
            ConfigWriteError: the config cannot be written.
        """
        if name is not None:
            _check_name(name)
        wanted_profile = root_profile(profile, "--profile", UsageError) if profile is not None else None
        wanted_extensions = (root_extensions_setting(list(extensions), "--extension", UsageError)
                             if extensions is not None else None)
        wanted_size = root_max_file_size(max_file_size, "--max-file-size", UsageError)
        files_given = profile is not None or extensions is not None or max_file_size is not None
        if recursive is None and wanted_profile == "code":
            recursive = True  # a code profile means a repository (issue 12)
        resolved = _existing_directory(Path(_non_empty(path)).expanduser())
        outcome: list[RootChange] = []

        def settled(existing: Root | None) -> Root:
            """The root at ``resolved`` with the settings asked for, the others kept."""
            base = existing or Root(path=resolved)
            return replace(
                base,
                path=resolved,
                recursive=(base.recursive if existing is not None else False) if recursive is None else recursive,
                name=base.name if name is None else name,
                profile=base.profile if profile is None else wanted_profile,
                extensions=base.extensions if extensions is None else wanted_extensions,
                max_file_size=base.max_file_size if max_file_size is None else wanted_size,
            )

        def change(config: WorkspaceConfig) -> tuple[Root, ...] | None:
            named = config.all_roots(self.home)
            primary = config.primary_path(self.home)
            if resolved == primary or resolved == primary.resolve():
                if name is not None and name != named[0].name:
                    raise UsageError(
                        f"{primary} is the primary workspace, named {named[0].name!r}",
                        hint=f"Rename it with: hermes-workspace roots rename {named[0].name} {name}",
                    )
                if files_given:
                    raise UsageError(
                        f"{primary} is the primary workspace: it takes no profile, extensions or size cap",
                        hint="Add the repository as a root of its own: hermes-workspace roots add PATH --profile code",
                    )
                outcome.append(RootChange(named[0], "unchanged"))
                return None
            _check_free(name, resolved, named)
            roots = list(config.roots)
            for i, existing in enumerate(roots):
                if existing.path == resolved:
                    before = _named(existing, named)
                    if settled(existing) == existing:
                        outcome.append(RootChange(before, "unchanged", before))
                        return None
                    _check_overlap(settled(existing), resolved, named, config.enabled)
                    roots[i] = settled(existing)
                    outcome.append(RootChange(_named(roots[i], config.with_roots(tuple(roots)).all_roots(self.home)),
                                              "updated", before))
                    return tuple(roots)
            root = settled(None)
            _check_overlap(root, resolved, named, config.enabled)
            roots.append(root)
            outcome.append(RootChange(_named(root, config.with_roots(tuple(roots)).all_roots(self.home)), "added"))
            return tuple(roots)

        self.config.update_roots(change)
        return outcome[-1]


@dataclass
class RenameRoot:
    """Gives a root, the primary workspace included, a new name (written to the config)."""

    config: ConfigRepository
    home: Path

    def execute(self, old: str, new: str) -> RootChange:
        """Rename the root named ``old`` to ``new`` in one locked edit of the config: an added
        root's entry gets ``name: NEW``; the primary workspace's goes to ``workspace.name``.

        Returns a :class:`RootChange` (``updated``, or ``unchanged`` when ``new`` is already its
        name) with the root as it was in ``previous``.

        Raises:
            UsageError: no root is named ``old`` (the message lists the names), ``new`` breaks
                the naming rule or is another root's name.
            ConfigError: the config is invalid (nothing is written).
            ConfigWriteError: the config cannot be written.
        """
        _check_name(new)
        outcome: list[RootChange] = []

        def change(config: WorkspaceConfig) -> tuple[Root, ...] | None:
            named = config.all_roots(self.home)
            target = select_roots(named, [old])[0]
            if new == target.name:
                outcome.append(RootChange(target, "unchanged", target))
                return None
            _check_free(new, target.path, named)
            renamed = replace(target, name=new)
            outcome.append(RootChange(renamed, "updated", target))
            if target.primary:
                return (renamed, *config.roots)
            return tuple(
                replace(r, name=new) if r.path == target.path else r
                for r in config.roots
            )

        self.config.update_roots(change)
        return outcome[-1]


def select_roots(roots: list[Root], names: list[str] | tuple[str, ...]) -> list[Root]:
    """The roots of ``roots`` (named, as ``WorkspaceConfig.all_roots``) that ``names`` name, in
    the order of ``roots``, each once.

    Raises:
        UsageError: a name that no root has (``unknown root name``); the message lists every
            root's name.
    """
    known = {r.name for r in roots}
    unknown = [n for n in names if n not in known]
    if unknown:
        listed = ", ".join(str(r.name) for r in roots) or "(none)"
        raise UsageError(
            f"unknown root name{'s' if len(unknown) > 1 else ''} {', '.join(repr(n) for n in unknown)}; "
            f"the roots are: {listed}",
            hint="`hermes-workspace roots list` shows each root's name and folder.",
        )
    wanted = set(names)
    return [r for r in roots if r.name in wanted]


MAX_GIT_FILE = 4096
"""Bytes of a ``.git`` file read to find a linked worktree's ``gitdir:`` line (git writes one
short line; a larger file is not a worktree's)."""


def home_root(cwd: Path, roots: Sequence[Root]) -> Root | None:
    """The root a search from the working directory ``cwd`` (absolute, symlinks resolved)
    starts in (issue 12, "scoping from the working directory"), or ``None`` outside every root.

    The deepest root whose folder holds ``cwd``
    (:func:`~hermes_workspace.domain.root_names.containing_root`), with one exception: inside a
    linked git worktree (:func:`linked_worktree`) the worktree stands for its main repository's
    working folder, so ``cwd`` is taken at the same place in that folder, unless a root lies
    inside the worktree itself (the worktree is indexed on its own: that root is nearer). Only scoping: the home root's own indexed files
    are what is searched, not the worktree's."""
    direct = containing_root(cwd, roots)
    worktree = linked_worktree(cwd)
    if worktree is None:
        return direct
    top, main = worktree
    if direct is not None and (direct.path == top or top in direct.path.parents):
        return direct
    return containing_root(main / cwd.relative_to(top), roots) or direct


def linked_worktree(cwd: Path) -> tuple[Path, Path] | None:
    """``(worktree folder, main repository's working folder)`` when ``cwd`` is inside a linked
    git worktree, else ``None``.

    The nearest ancestor of ``cwd`` (itself included) with a ``.git`` entry decides: a linked
    worktree's ``.git`` is a file holding ``gitdir: <main>/.git/worktrees/<name>`` (``git
    worktree add``; a relative path is taken from the worktree folder), and ``<main>`` is the
    main working folder. A ``.git`` folder (an ordinary repository), another ``gitdir`` (a
    submodule's ``.git/modules/...``, a bare repository's worktree) or an unreadable file give
    ``None``. Pure Python: no git process, nothing written."""
    for folder in (cwd, *cwd.parents):
        marker = folder / ".git"
        try:
            if marker.is_dir():
                return None
            if not marker.is_file():
                continue
            with marker.open("rb") as stream:
                text = stream.read(MAX_GIT_FILE).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        first = text.splitlines()[0] if text.strip() else ""
        if not first.startswith("gitdir:"):
            return None
        gitdir = Path(os.path.realpath(folder / first[len("gitdir:"):].strip()))
        if gitdir.parent.name != "worktrees" or gitdir.parent.parent.name != ".git":
            return None
        return folder, gitdir.parent.parent.parent
    return None


def _check_overlap(new: Root, real: Path, named: list[Root], enabled: bool) -> None:
    """RootOverlapError when ``new`` (its folder ``real``, symlinks resolved) would index files
    another root of ``named`` indexes (:func:`~hermes_workspace.domain.root_names.root_overlap`;
    the root at the same configured path, which ``new`` replaces, is not another; the primary
    workspace counts when ``enabled``). The message names the other root, the hint how to
    proceed."""
    for other in named:
        if other.path == new.path or (other.primary and not enabled):
            continue
        kind = root_overlap(other, Path(os.path.realpath(other.path)), new, real)
        if kind is None:
            continue
        where = f"root {other.name} ({other.path})"
        if kind == "same":
            raise RootOverlapError(
                f"{new.path} is the same folder as {where}, through a symbolic link",
                hint=f"It is indexed already as {other.name} (search it with --root {other.name}); to use this "
                f"path instead, remove the other first: hermes-workspace roots remove {other.path}",
            )
        if kind == "inside":
            if other.primary:
                hint = (f"Its files are indexed already as part of {other.name}: narrow a search with "
                        f"--root {other.name} --path {new.path}.")
            else:
                hint = (f"Its files are indexed already as part of {other.name} (narrow a search with "
                        f"--path {new.path}); or make that root non-recursive first: "
                        f"hermes-workspace roots add {other.path} --no-recursive")
            raise RootOverlapError(f"{new.path} lies inside {where}, which is recursive", hint=hint)
        if other.primary:
            hint = ("Add it without --recursive (its own files only), or set workspace.enabled: false in "
                    "config.yaml to leave the primary workspace out.")
        else:
            hint = (f"Add it without --recursive (its own files only), or remove {other.name} first: "
                    f"hermes-workspace roots remove {other.path}")
        raise RootOverlapError(f"{new.path} contains {where}: added recursively, it would index those files twice",
                               hint=hint)


def _check_name(name: object) -> None:
    problem = root_name_problem(name)
    if problem is not None:
        raise UsageError(problem, hint="e.g. --name my-notes")


def _check_free(name: str | None, path: Path, named: list[Root]) -> None:
    """UsageError when another root (not the one at ``path``) already has ``name``: taking a
    derived name would silently rename that root."""
    for root in named:
        if name is not None and root.name == name and root.path != path:
            raise UsageError(
                f"the name {name!r} is taken by {root.path}",
                hint="Choose another name, or rename that root first (hermes-workspace roots rename).",
            )


def _named(root: Root, named: list[Root]) -> Root:
    """``root`` with the name :meth:`WorkspaceConfig.all_roots` gives it."""
    for candidate in named:
        if candidate.path == root.path:
            return candidate
    return root


@dataclass
class RemoveRoot:
    """Removes an added root from the config (its files leave the index at the next run)."""

    config: ConfigRepository
    home: Path

    def execute(self, path: Path | str) -> Root:
        """Remove the root whose path equals ``path`` as given, absolute, or resolved, or else
        the root of that name (``roots list``); one locked edit of the config. Returns the
        removed root with the name it had.

        Raises:
            RootNotConfiguredError: no configured root has that path or name.
            UsageError: ``path`` is the primary workspace (its path or name), or empty.
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
            named = config.all_roots(self.home)
            by_name = next((r for r in named if r.name == str(path) and not r.primary), None)
            for existing in config.roots:
                if existing.path in forms or (by_name is not None and existing.path == by_name.path):
                    removed.append(_named(existing, named))
                    return tuple(r for r in config.roots if r is not existing)
            if any(r.primary and r.name == str(path) for r in named):
                raise UsageError("the primary workspace cannot be removed",
                                 hint="Set workspace.path in config.yaml to move it, or workspace.enabled: false.")
            raise RootNotConfiguredError(
                f"not a configured root: {given}",
                hint=f"Give a root's path or name ({', '.join(r.name or '' for r in named if not r.primary) or 'none added'}); "
                "see hermes-workspace roots list.",
            )

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
