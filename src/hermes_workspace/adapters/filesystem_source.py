"""The local-filesystem :class:`~hermes_workspace.domain.ports.FileSource`: an ``os.scandir`` walk
with per-root gitignore-style rules compiled by pathspec.

Behaviour, in short (the docstring of :class:`FilesystemSource` has the details):

- ignore rules per root, first existing file wins: ``root/.hermesignore``, else ``root/.gitignore``,
  else :data:`~hermes_workspace.domain.constants.DEFAULT_IGNORE_RULES`. Only the root's top-level
  file is read; ``.gitignore``/``.hermesignore`` files in subdirectories are ordinary files to us
  (they are indexed like any text file, and their rules are not applied);
- no hard-coded dotfile filter: ``.github/workflows/ci.yml`` is offered unless a rule excludes it;
- ignored directories are pruned (never listed), so ``node_modules/`` costs one match, not a walk;
- entries are visited in name order (code point order), depth first, so runs are reproducible.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pathspec

from hermes_workspace.domain.constants import (
    BINARY_SUFFIXES,
    DEFAULT_IGNORE_RULES,
    GITIGNORE_FILENAME,
    IGNORE_FILENAME,
)
from hermes_workspace.domain.model import DiscoveryProblem, Root, SkippedFile, SourceFile

IGNORE_FILE_PRECEDENCE: tuple[str, ...] = (IGNORE_FILENAME, GITIGNORE_FILENAME)
"""Ignore files looked for in each root, in order; the first that exists is the root's rules."""

GIT_DIRNAME = ".git"
"""Git never lists its own ``.git`` (directory, or file in a submodule) and a ``.gitignore`` never
mentions it; when a root's rules come from its ``.gitignore``, entries with this name are left out
at every depth, as git does. ``.hermesignore`` and the built-in rules say so themselves."""

DEFAULT_RULES_SOURCE = "<built-in default rules>"
""":attr:`IgnoreRules.source` when a root has neither ignore file."""

_Item = SourceFile | SkippedFile | DiscoveryProblem


@dataclass(frozen=True, slots=True, eq=False)
class IgnoreRules:
    """One root's compiled ignore rules.

    Paths are relative to the root, ``/``-separated, without a leading ``/``. ``source`` is the
    ignore file's absolute path or :data:`DEFAULT_RULES_SOURCE`. ``invalid_lines`` holds
    ``(line_number, line, reason)`` for patterns pathspec rejected (they are left out).
    ``implicit_names``: entry names (files or directories) excluded at any depth whatever the
    patterns say (``{".git"}`` for rules read from a ``.gitignore``).
    """

    spec: pathspec.GitIgnoreSpec
    source: str
    invalid_lines: tuple[tuple[int, str, str], ...] = ()
    implicit_names: frozenset[str] = frozenset()
    _negations: tuple[object, ...] = field(default=(), repr=False)

    def excludes_file(self, rel: str) -> bool:
        """Whether the file (or non-directory entry) at ``rel`` is ignored."""
        return self.spec.match_file(rel)

    def excludes_dir(self, rel: str) -> bool:
        """Whether the directory at ``rel`` is ignored, i.e. pruned: nothing under it is visited.

        The directory is tested as ``rel + "/"`` so that directory-only rules (``build/``) apply.
        Since a pruned directory is never listed, nothing inside an excluded directory can be
        re-included (``build/`` + ``!build/keep.txt`` leaves ``keep.txt`` out), as in git.

        pathspec's :class:`~pathspec.GitIgnoreSpec` gives a pattern that matches a path without
        a directory marker (bare ``*``) priority over a directory-only rule, so for the whitelist
        idiom ``*`` / ``!*/`` / ``!*.py`` it would exclude every directory, where git re-includes
        them. Hence a directory is pruned only if the spec excludes it *and* no negation pattern
        matches it; otherwise it is walked and each entry inside is decided on its own.

        Known difference from git: pathspec compiles ``foo/**`` so that it also matches ``foo/``
        itself, so ``foo/**`` + ``!foo/keep.txt`` prunes ``foo`` (git would keep ``keep.txt``);
        ``foo/*`` + ``!foo/keep.txt`` works as in git.
        """
        probe = rel + "/"
        if not self.spec.match_file(probe):
            return False
        return not any(pattern.match_file(probe) is not None for pattern in self._negations)  # type: ignore[attr-defined]


@lru_cache(maxsize=64)
def compile_ignore_rules(text: str, source: str, implicit_names: frozenset[str] = frozenset()) -> IgnoreRules:
    """Compile gitignore-syntax ``text`` (comments, blank lines, ``!`` negation, ``**``, anchored
    ``/x`` and directory-only ``x/`` rules) into :class:`IgnoreRules`. Invalid lines are dropped and
    listed in ``invalid_lines``; never raises for bad patterns. Cached, so one ignore file content
    is compiled once per process."""
    lines = text.splitlines()
    invalid: list[tuple[int, str, str]] = []
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        good: list[str] = []
        for number, line in enumerate(lines, start=1):
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except ValueError as exc:
                invalid.append((number, line, str(exc)))
            else:
                good.append(line)
        spec = pathspec.GitIgnoreSpec.from_lines(good)
    negations = tuple(p for p in spec.patterns if getattr(p, "include", None) is False)
    return IgnoreRules(
        spec=spec,
        source=source,
        invalid_lines=tuple(invalid),
        implicit_names=implicit_names,
        _negations=negations,
    )


class FilesystemSource:
    """A :class:`~hermes_workspace.domain.ports.FileSource` over the local filesystem.

    ``max_file_bytes`` (bytes, >= 0): larger files are skipped as ``"too_large"``.

    For each root, in the order given (:meth:`discover`):

    - the root path is resolved (``os.path.realpath``); yielded paths lie under the resolved path,
      while every item's ``root`` is the configured ``Root.path``, so callers can group by it. A
      root that is missing, unreadable or not a directory yields one :class:`DiscoveryProblem`
      with ``path == root`` and the walk moves to the next root;
    - ignore rules: ``.hermesignore``, else ``.gitignore`` (plus git's implicit ``.git``, see
      :data:`GIT_DIRNAME`), else the built-in defaults; matched with gitignore semantics against
      the path relative to the root (see :class:`IgnoreRules`). Only the root's own file is read.
      An ignore file that exists but cannot be read yields a problem and the built-in defaults
      apply; invalid pattern lines yield a problem each and are left out. The ignore files
      themselves are indexed unless a rule excludes them;
    - a non-recursive root yields only the files directly inside it; a recursive one the whole tree,
      pruning ignored directories. Entries are visited sorted by name, depth first;
    - per file: ignored -> nothing; suffix (lower-cased) in ``BINARY_SUFFIXES`` ->
      ``SkippedFile("binary_suffix")`` without a stat; then one ``os.stat``; not a regular file
      (FIFO, socket, device) -> nothing; ``size > max_file_bytes`` -> ``"too_large"``;
      ``size == 0`` -> ``"empty"``; else a :class:`SourceFile` (``mtime_ns`` from the stat);
    - symlinks: a link to a file is followed and reported at its walked path (inside the root); a
      link to a directory is followed in recursive roots only. A directory whose (st_dev, st_ino)
      is already on the current walk chain yields ``DiscoveryProblem(error_type="SymlinkLoop")``
      and is not entered. Two links to the same (non-ancestor) directory are both walked;
    - a dangling link or a file that vanished before its stat yields a problem with
      ``error_type="FileNotFoundError"``; a directory that cannot be listed one with the
      exception's class name (``"PermissionError"``); a link that loops on itself
      (``ELOOP``) ``"SymlinkLoop"``. The walk always goes on.

    Raises:
        ValueError: ``max_file_bytes`` is negative (from the constructor).
    """

    def __init__(self, max_file_bytes: int) -> None:
        if max_file_bytes < 0:
            raise ValueError(f"max_file_bytes must be >= 0, got {max_file_bytes}")
        self.max_file_bytes = max_file_bytes

    def discover(self, roots: Sequence[Root]) -> Iterator[SourceFile | SkippedFile | DiscoveryProblem]:
        """Yield a :class:`SourceFile`, :class:`SkippedFile` or :class:`DiscoveryProblem` per path
        looked at, root by root (a generator; nothing is walked before the first ``next``).
        Never raises for one bad path."""
        for root in roots:
            yield from self._discover_root(root)

    def read_bytes(self, file: SourceFile) -> bytes:
        """The whole file's bytes (following symlinks).

        Raises:
            OSError: unchanged (``FileNotFoundError``, ``PermissionError``, ``IsADirectoryError``...)
                if the file vanished or became unreadable since discovery.
        """
        with open(file.path, "rb") as handle:
            return handle.read()

    # -- walking -----------------------------------------------------------------------------

    def _discover_root(self, root: Root) -> Iterator[_Item]:
        configured = root.path
        real = os.path.realpath(configured)
        try:
            root_stat = os.stat(real)
        except OSError as exc:
            yield _problem(configured, configured, exc)
            return
        if not stat.S_ISDIR(root_stat.st_mode):
            yield DiscoveryProblem(
                configured, configured, "NotADirectoryError", f"root is not a directory: {configured}"
            )
            return
        try:
            entries = _list_dir(real)
        except OSError as exc:
            yield _problem(configured, configured, exc)
            return

        rules, problems = _load_rules(real, configured)
        yield from problems

        root_key = (root_stat.st_dev, root_stat.st_ino)
        chain: dict[tuple[int, int], str] = {root_key: real}
        stack: list[tuple[Iterator[os.DirEntry[str]], str, tuple[int, int]]] = [(iter(entries), "", root_key)]
        recursive = root.recursive
        max_bytes = self.max_file_bytes
        implicit_names = rules.implicit_names

        while stack:
            iterator, prefix, dir_key = stack[-1]
            entry = next(iterator, None)
            if entry is None:
                stack.pop()
                del chain[dir_key]
                continue
            name = entry.name
            if name in implicit_names:
                continue
            rel = prefix + name
            try:
                is_symlink = entry.is_symlink()
                is_dir = entry.is_dir()  # follows symlinks; False for a dangling link
            except OSError as exc:
                yield _problem(Path(entry.path), configured, exc)
                continue

            if is_dir:
                if not recursive or rules.excludes_dir(rel):
                    continue
                try:
                    dir_stat = os.stat(entry.path)
                except OSError as exc:
                    yield _problem(Path(entry.path), configured, exc)
                    continue
                key = (dir_stat.st_dev, dir_stat.st_ino)
                if key in chain:
                    yield DiscoveryProblem(
                        Path(entry.path),
                        configured,
                        "SymlinkLoop",
                        f"{entry.path} points back to {chain[key]}, a directory already being walked; not followed",
                    )
                    continue
                try:
                    children = _list_dir(entry.path)
                except OSError as exc:
                    yield _problem(Path(entry.path), configured, exc)
                    continue
                chain[key] = entry.path
                stack.append((iter(children), rel + "/", key))
                continue

            if not is_symlink and not entry.is_file(follow_symlinks=False):
                continue  # FIFO, socket, device: not a candidate, not worth reporting
            if rules.excludes_file(rel):
                continue
            path = Path(entry.path)
            if os.path.splitext(name)[1].lower() in BINARY_SUFFIXES:
                yield SkippedFile(path, configured, "binary_suffix")
                continue
            try:
                file_stat = os.stat(entry.path)
            except OSError as exc:
                yield _problem(path, configured, exc)
                continue
            if not stat.S_ISREG(file_stat.st_mode):
                continue
            size = file_stat.st_size
            if size > max_bytes:
                yield SkippedFile(path, configured, "too_large")
            elif size == 0:
                yield SkippedFile(path, configured, "empty")
            else:
                yield SourceFile(path, configured, size, file_stat.st_mtime_ns)


def _list_dir(path: str) -> list[os.DirEntry[str]]:
    """The entries of ``path`` sorted by name. Raises ``OSError`` if it cannot be listed."""
    with os.scandir(path) as iterator:
        return sorted(iterator, key=lambda entry: entry.name)


def _load_rules(real_root: str, configured: Path) -> tuple[IgnoreRules, list[DiscoveryProblem]]:
    """The root's :class:`IgnoreRules` (first existing ignore file, else the defaults) and the
    problems met loading them (unreadable file, invalid lines)."""
    problems: list[DiscoveryProblem] = []
    for name in IGNORE_FILE_PRECEDENCE:
        candidate = os.path.join(real_root, name)
        if not os.path.isfile(candidate):
            continue
        try:
            with open(candidate, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            problems.append(_problem(Path(candidate), configured, exc, suffix="; using the built-in default rules"))
            break
        # Names from os.scandir carry undecodable bytes as surrogates; decode the rules the same way.
        text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
        implicit = frozenset({GIT_DIRNAME}) if name == GITIGNORE_FILENAME else frozenset()
        rules = compile_ignore_rules(text, candidate, implicit)
        for number, line, reason in rules.invalid_lines:
            problems.append(
                DiscoveryProblem(
                    Path(candidate),
                    configured,
                    "IgnorePatternError",
                    f"line {number} {line!r} ignored: {reason}",
                )
            )
        return rules, problems
    return compile_ignore_rules(DEFAULT_IGNORE_RULES, DEFAULT_RULES_SOURCE), problems


def _problem(path: Path, root: Path, exc: OSError, *, suffix: str = "") -> DiscoveryProblem:
    """A :class:`DiscoveryProblem` from an ``OSError``; ``ELOOP`` is reported as ``SymlinkLoop``."""
    error_type = "SymlinkLoop" if exc.errno == errno.ELOOP else type(exc).__name__
    message = exc.strerror or str(exc)
    return DiscoveryProblem(Path(path), root, error_type, f"{message}: {path}{suffix}")
