"""The local-filesystem :class:`~hermes_workspace.domain.ports.FileSource`: an ``os.scandir`` walk
with per-root gitignore-style rules compiled by pathspec.

Behaviour, in short (the docstring of :class:`FilesystemSource` has the details):

- always, before any ignore rule: the deny list of :mod:`hermes_workspace.domain.exclusions`
  (secrets, version-control folders, the workspace's own files), reported as
  :class:`ExcludedPath` items; only a ``.hermesignore`` ``!`` pattern lets such a path in;
- ignore rules per root, first existing file wins: ``root/.hermesignore``, else ``root/.gitignore``,
  else :data:`~hermes_workspace.domain.constants.DEFAULT_IGNORE_RULES`;
- nested ignore files, as git reads them. The root's choice fixes the *family* used at every depth:
  a root with a ``.hermesignore`` reads ``.hermesignore`` files in its subdirectories (and never a
  ``.gitignore``); a root with a ``.gitignore``, or with the built-in defaults, reads the
  ``.gitignore`` files in its subdirectories (with the defaults, on top of them). A nested file's
  patterns are relative to its own directory (``/build`` there means ``<that dir>/build``) and apply
  only to paths below that directory;
- precedence, as git's "last matching pattern decides" over the patterns read root first, then
  each deeper file: for a path, the deepest ignore file on its way from the root that has a
  matching pattern decides (within one file, gitignore order: the last match wins); only if no
  nested file matches do the root's rules (or the defaults) decide. A pattern counts for a path
  only if it matches the path itself, not merely a directory above it (:class:`IgnoreRules`). So a deeper ``!keep.tmp``
  re-includes what a shallower ``*.tmp`` excluded, and a deeper ``secret.txt`` excludes what a
  shallower ``!secret.txt`` kept. A directory is judged by the files above it (its own ignore
  file applies only to what is inside it), and an excluded directory is pruned, so nothing under
  it can be re-included by any file (its own ignore file is never read);
- ``.hermesignore`` files are our configuration: skipped silently at every depth (never yielded,
  nor counted as skipped). ``.gitignore`` files are ordinary text, indexed unless a rule excludes
  them;
- no hard-coded dotfile filter: ``.github/workflows/ci.yml`` is offered unless a rule excludes it
  (the deny list names files and folders, not "every dotfile");
- ignored directories are pruned (never listed), so ``node_modules/`` costs one match, not a walk;
- an ignore file that cannot be read, or has invalid lines, yields a :class:`DiscoveryProblem` and
  the walk goes on (a nested one without its rules; the root's with the built-in defaults);
- entries are visited in name order (code point order), depth first, so runs are reproducible;
- changed paths (:meth:`FilesystemSource.discover_paths`, a watcher's run) go through the same
  walk, guided down to each path through its ancestor folders without listing them, so a path is
  judged exactly as the whole walk judges it at the cost of its depth.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
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
from hermes_workspace.domain.exclusions import ExclusionCategory, always_excluded, excluded_path
from hermes_workspace.domain.model import (
    ChangedScope,
    DiscoveryProblem,
    ExcludedPath,
    Root,
    SkippedFile,
    SourceFile,
)
from hermes_workspace.domain.profiles import needs_top_level_names, root_extensions, suffix_of

IGNORE_FILE_PRECEDENCE: tuple[str, ...] = (IGNORE_FILENAME, GITIGNORE_FILENAME)
"""Ignore files looked for in each root, in order; the first that exists is the root's rules, and
its name is the one looked for in the root's subdirectories (``.gitignore`` if none exists)."""

DEFAULT_RULES_SOURCE = "<built-in default rules>"
""":attr:`IgnoreRules.source` when a root has neither ignore file."""

_Item = SourceFile | SkippedFile | ExcludedPath | DiscoveryProblem


class FileChangedError(OSError):
    """A file is no longer the one the walk found (see :meth:`FilesystemSource.read_bytes`); the
    run reports it for that file and the next run looks at it afresh."""


_DIR_MARK = "ps_d"
"""Name of the regex group pathspec's gitignore patterns use for a slash that follows a directory
the pattern matched (``build/`` compiles to ``^(?:.+/)?build(?P<ps_d>/)``): pathspec lets a
pattern that matches a directory match everything below it too. If a later pathspec renames the
group, ancestor matches count as matches again (the tests on nested precedence then fail)."""

_Rule = tuple[Callable[..., "re.Match[str] | None"], bool, bool, bool]
"""One compiled pattern: its regex's ``search``, whether it excludes (``False`` for ``!x``),
whether the regex has the :data:`_DIR_MARK` group, and whether it names its last path segment
literally (no ``*``, ``?`` or ``[``: ``!.env.example``, ``!config/.git/``), which is what an
explicit re-include of an always-excluded path takes (:func:`_reincluded`)."""

_WILDCARD = re.compile(r"(?<!\\)[*?\[]")


def _names_literally(pattern: str) -> bool:
    """Whether the gitignore ``pattern`` names its last path segment without a wildcard."""
    last = pattern.removeprefix("!").strip().rstrip("/").rsplit("/", 1)[-1]
    return bool(last) and _WILDCARD.search(last) is None


@dataclass(frozen=True, slots=True, eq=False)
class IgnoreRules:
    """One ignore file's (or the built-in defaults') compiled rules.

    Paths are relative to the directory the rules belong to (the root, or the directory holding a
    nested ignore file), ``/``-separated, without a leading ``/``. ``source`` is the ignore file's
    absolute path or :data:`DEFAULT_RULES_SOURCE`. ``invalid_lines`` holds
    ``(line_number, line, reason)`` for patterns pathspec rejected (they are left out).
    ``has_patterns`` is False when the text holds nothing but comments and blank lines.

    Matching, as git does it during a walk: the patterns are pathspec's (``spec``), tried last
    first, and the first one that matches *the path itself* decides. pathspec also lets a
    directory pattern match everything below the directory (``build/`` matches ``build/x.txt``);
    such matches are not counted here, because the walk has already decided each ancestor
    directory (an excluded one is pruned, so nothing below it is ever asked about). That is what
    keeps a ``!build/`` in one file from re-including ``build/x.tmp`` that ``*.tmp`` excludes, in
    the same file or a shallower one, and what makes the whitelist idiom ``*`` / ``!*/`` /
    ``!*.py`` walk every directory and keep only ``*.py`` files, as in git.

    Known difference from git: pathspec compiles ``foo/**`` so that it also matches ``foo/``
    itself, so ``foo/**`` + ``!foo/keep.txt`` prunes ``foo`` (git would keep ``keep.txt``);
    ``foo/*`` + ``!foo/keep.txt`` works as in git.
    """

    spec: pathspec.GitIgnoreSpec
    source: str
    invalid_lines: tuple[tuple[int, str, str], ...] = ()
    _rules: tuple[_Rule, ...] = field(default=(), repr=False)

    @property
    def has_patterns(self) -> bool:
        return bool(self._rules)

    def file_verdict(self, rel: str) -> bool | None:
        """For the file (or non-directory entry) at ``rel``: ``True`` (excluded), ``False``
        (re-included by a ``!`` pattern) or ``None`` (no pattern matches it)."""
        rule = self.file_rule(rel)
        return None if rule is None else rule[1]

    def file_rule(self, rel: str) -> _Rule | None:
        """The pattern that decides for the file at ``rel`` (see :meth:`file_verdict`), or ``None``."""
        for rule in self._rules:
            match = rule[0](rel)
            if match is None:
                continue
            if rule[2] and match.start(_DIR_MARK) != -1:
                continue  # the pattern matched a directory above the file, not the file
            return rule
        return None

    def dir_verdict(self, rel: str) -> bool | None:
        """:meth:`file_verdict` for the directory at ``rel``, tested as ``rel + "/"`` so that
        directory-only rules (``build/``) apply."""
        rule = self.dir_rule(rel)
        return None if rule is None else rule[1]

    def dir_rule(self, rel: str) -> _Rule | None:
        """The pattern that decides for the directory at ``rel`` (see :meth:`dir_verdict`)."""
        probe = rel + "/"
        end = len(probe)
        for rule in self._rules:
            search = rule[0]
            match = search(probe)
            if match is None:
                continue
            if rule[2] and match.end(_DIR_MARK) not in (-1, end):
                # The mark is an inner slash: the pattern matched a directory above this one,
                # unless it also matches at the final slash (the unanchored ``*/``).
                match = search(probe, end - 1)
                if match is None or match.end(_DIR_MARK) != end:
                    continue
            return rule
        return None

    def excludes_file(self, rel: str) -> bool:
        """Whether the file (or non-directory entry) at ``rel`` is ignored by these rules alone."""
        return self.file_verdict(rel) is True

    def excludes_dir(self, rel: str) -> bool:
        """Whether the directory at ``rel`` is ignored by these rules alone, i.e. pruned: nothing
        under it is visited. Since a pruned directory is never listed, nothing inside it can be
        re-included (``build/`` + ``!build/keep.txt`` leaves ``keep.txt`` out), as in git."""
        return self.dir_verdict(rel) is True


@lru_cache(maxsize=1024)
def compile_ignore_rules(text: str, source: str) -> IgnoreRules:
    """Compile gitignore-syntax ``text`` (comments, blank lines, ``!`` negation, ``**``, anchored
    ``/x`` and directory-only ``x/`` rules) into :class:`IgnoreRules`. Invalid lines are dropped and
    listed in ``invalid_lines``; never raises for bad patterns. Cached, so one ignore file content
    is compiled once per process (per file path: ``source`` is part of the key)."""
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
    rules: list[_Rule] = []
    for pattern in reversed(spec.patterns):
        include = getattr(pattern, "include", None)
        regex = getattr(pattern, "regex", None)
        if include is None or regex is None:
            continue  # comment or blank line
        text = getattr(pattern, "pattern", "") or ""
        rules.append((regex.search, include, _DIR_MARK in regex.groupindex, _names_literally(text)))
    return IgnoreRules(
        spec=spec,
        source=source,
        invalid_lines=tuple(invalid),
        _rules=tuple(rules),
    )


class FilesystemSource:
    """A :class:`~hermes_workspace.domain.ports.FileSource` over the local filesystem.

    ``max_file_bytes`` (bytes, >= 0): larger files are skipped as ``"too_large"``.
    ``internal_dirs``: folders of the workspace itself (its index, logs and model files), never
    walked wherever a root meets them (matched by device and inode, so also through a symlink).

    Before any ignore rule, the always-on exclusions of :mod:`hermes_workspace.domain.exclusions`
    apply in every root, the root's own path included: a secret, a version-control folder or a
    workspace-internal folder yields one :class:`ExcludedPath` (a folder only in a recursive
    root, where it would have been walked) and nothing under it is visited. Only a root whose
    rules come from a ``.hermesignore`` can let such a path in, by the deciding ``!`` pattern
    naming it literally (:func:`_reincluded`); the ``internal_dirs`` cannot be let in. A symbolic
    link is followed only to content the roots cover anyway (:meth:`_Places.follow`).

    For each root, in the order given (:meth:`discover`):

    - the root path is resolved (``os.path.realpath``); yielded paths lie under the resolved path,
      while every item's ``root`` is the configured ``Root.path``, so callers can group by it. A
      root that is missing, unreadable or not a directory yields one :class:`DiscoveryProblem`
      with ``path == root`` and the walk moves to the next root;
    - ignore rules: ``.hermesignore``, else ``.gitignore``, else the built-in defaults; matched
      with gitignore semantics against the path relative to the root (see :class:`IgnoreRules`).
      In a recursive root, each walked directory's own ignore file of the root's family (``.hermesignore`` if the root has one,
      else ``.gitignore``) adds rules for the paths below it, relative to it; the deepest file
      with a matching pattern decides, else the root's rules (module docstring). A root ignore
      file that exists but cannot be read yields a problem and the built-in defaults apply (the
      family is still the one of the file found); an unreadable nested one yields a problem and
      the walk goes on without its rules; invalid pattern lines yield a problem each and are
      left out. ``.hermesignore`` files are never yielded; ``.gitignore`` files are indexed
      unless a rule excludes them;
    - a non-recursive root yields only the files directly inside it; a recursive one the whole tree,
      pruning ignored directories. Entries are visited sorted by name, depth first;
    - per file: ignored -> nothing; its last suffix (lower-cased) not among the extensions the
      root indexes (``Root.profile``/``Root.extensions``, :func:`~hermes_workspace.domain.profiles.root_extensions`,
      decided per run from the root's top-level file names) -> nothing, as an ignored file;
      suffix (lower-cased) in ``BINARY_SUFFIXES`` and not in
      ``convertible`` (the suffixes a document converter reads: ``.pdf``...) ->
      ``SkippedFile("binary_suffix")`` without a stat; then one ``os.stat``; not a regular file
      (FIFO, socket, device) -> nothing; ``size >`` the root's ``max_file_size`` (bytes) when it
      has one, else ``max_file_bytes`` -> ``"too_large"``;
      ``size == 0`` -> ``"empty"``; else a :class:`SourceFile` (``mtime_ns`` from the stat);
    - symlinks: a link to a file is followed and reported at its walked path (inside the root); a
      link to a directory is followed in recursive roots only. A directory whose (st_dev, st_ino)
      is already on the current walk chain yields ``DiscoveryProblem(error_type="SymlinkLoop")``
      and is not entered. Two links to the same (non-ancestor) directory are both walked;
    - a dangling link yields a problem with ``error_type="FileNotFoundError"``; a file or folder
      deleted between its listing and its stat (or listing) is left out, as if the walk came
      later (the index then prunes it); a directory that cannot be listed one with the
      exception's class name (``"PermissionError"``); a link that loops on itself
      (``ELOOP``) ``"SymlinkLoop"``. The walk always goes on.

    Raises:
        ValueError: ``max_file_bytes`` is negative (from the constructor).
    """

    def __init__(
        self, max_file_bytes: int, *, internal_dirs: Sequence[Path] = (), convertible: Iterable[str] = ()
    ) -> None:
        if max_file_bytes < 0:
            raise ValueError(f"max_file_bytes must be >= 0, got {max_file_bytes}")
        self.max_file_bytes = max_file_bytes
        self.internal_dirs = tuple(Path(d) for d in internal_dirs)
        self.convertible = frozenset(s.lower() for s in convertible)
        self._skipped_suffixes = BINARY_SUFFIXES - self.convertible

    def discover(self, roots: Sequence[Root]) -> Iterator[_Item]:
        """Yield a :class:`SourceFile`, :class:`SkippedFile`, :class:`ExcludedPath` or
        :class:`DiscoveryProblem` per path looked at, root by root (a generator; nothing is walked
        before the first ``next``). Never raises for one bad path."""
        places = self._places(roots)
        for root in roots:
            yield from self._discover_root(root, places)

    def discover_paths(self, roots: Sequence[Root], paths: Iterable[Path]) -> Iterator[_Item | ChangedScope]:
        """The items :meth:`discover` would yield for the absolute ``paths`` and what is under
        them, without walking anything else: first one :class:`ChangedScope` per path (and per
        root covering it), then the guided walk of each root, in root order.

        A path is placed in a root by its text (``os.path.normpath``), else with its folder
        resolved (``realpath`` of the parent: a path given through a link to the root); a link
        inside a root is not resolved, as the walk does not. A non-recursive root covers itself
        and its direct children only; a folder holding roots covers those roots whole; a changed
        ignore file (``.hermesignore``, ``.gitignore``) stands for its folder, re-walked with its
        new rules. The walk goes down to each path through its ancestor folders only, judging
        each as the full walk does (always-on exclusions, ignore rules with every nested ignore
        file on the way, links, loops) without listing them, then judges the path itself (a
        folder: its whole subtree, with the rules inherited from its ancestors). A path that no
        longer exists yields nothing but its scope. Never raises for one bad path."""
        places = self._places(roots)
        wanted: list[set[str]] = [set() for _ in roots]
        for given in paths:
            placed, category = _placed(os.path.normpath(os.fspath(given)), places)
            for index, rel in placed:
                wanted[index].add(rel)
                root_real = places.roots[index][0]
                yield ChangedScope(Path(given), Path(os.path.join(root_real, rel)) if rel else Path(root_real))
            if category is not None:
                yield ChangedScope(Path(given), None, category)
        for (root_real, root), rels in zip(places.roots, wanted, strict=True):
            if rels:
                yield from self._discover_root(root, places, _guide(root_real, rels))

    def _places(self, roots: Sequence[Root]) -> _Places:
        return _Places(
            internal_keys=_dir_keys(self.internal_dirs),
            internal_paths=tuple(os.path.realpath(d) for d in self.internal_dirs),
            roots=tuple((os.path.realpath(r.path), r) for r in roots),
        )

    def read_bytes(self, file: SourceFile) -> bytes:
        """The whole file's bytes (following a symlink the walk followed), if it is still the file
        the walk saw: a regular file with the same device and inode (``file.file_id``). Between
        the walk and the read, a file may be replaced by a link to a secret or by a FIFO (which
        would block the run forever); the open does not block and the identity is checked on the
        open descriptor, so what is read is what was judged.

        Raises:
            FileChangedError: it is no longer the regular file the walk saw.
            OSError: unchanged (``FileNotFoundError``, ``PermissionError``...) if it vanished or
                became unreadable since discovery.
        """
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(file.path, flags | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode) or (
                file.file_id is not None and (found.st_dev, found.st_ino) != file.file_id
            ):
                raise FileChangedError(
                    errno.ESTALE, "replaced since the walk (by another file, a link or a pipe); not read",
                    str(file.path),
                )
            return handle.read()

    # -- walking -----------------------------------------------------------------------------

    def _discover_root(self, root: Root, places: _Places, guide: _Guide | None = None) -> Iterator[_Item]:
        """The walk of ``root``; with ``guide``, only down to the paths it leads to (the folders
        it names are not listed: only the children it names in them are looked at)."""
        configured = root.path
        try:
            real = os.path.realpath(configured)
            root_stat = os.stat(real)
        except OSError as exc:
            yield _problem(configured, configured, exc)
            return
        if not stat.S_ISDIR(root_stat.st_mode):
            yield DiscoveryProblem(
                configured, configured, "NotADirectoryError", f"root is not a directory: {configured}"
            )
            return
        entries: Iterable[_Entry]
        if guide is not None and real in guide:
            entries = _guided_entries(real, guide[real])
        else:
            try:
                entries = _list_dir(real)
            except OSError as exc:
                yield _problem(configured, configured, exc)
                return

        # A root inside a folder that is never indexed (~/.ssh, repo/.git, another index) is one.
        category = excluded_path(real.split(os.sep)[1:], is_dir=True)
        if category is not None:
            yield ExcludedPath(configured, configured, category, True)
            return
        real_posix = real.rstrip(os.sep).replace(os.sep, "/")  # names' parents, for .aws/credentials

        rules, nested_name, problems = _load_rules(real, configured)
        yield from problems

        root_key = (root_stat.st_dev, root_stat.st_ino)
        chain: dict[tuple[int, int], str] = {root_key: real}
        # Each frame: the directory's entries, its path relative to the root ("" or "a/b/"), its
        # (st_dev, st_ino), and the ignore rules in force inside it (see _RuleLevels).
        root_levels: _RuleLevels = ((0, rules),)
        stack: list[tuple[Iterator[_Entry], str, tuple[int, int], _RuleLevels]] = [
            (iter(entries), "", root_key, root_levels)
        ]
        recursive = root.recursive
        max_bytes = self.max_file_bytes if root.max_file_size is None else root.max_file_size
        # Decided now, from the top-level listing already made, so that a repository that gained
        # a go.mod since the last run has its .go files indexed (domain.profiles).
        allowed = root_extensions(
            root.profile, root.extensions,
            _marker_names(real, entries, guided=guide is not None and real in guide)
            if needs_top_level_names(root.profile, root.extensions) else (),
        )
        # Only a .hermesignore may let an always-excluded path in (module docstring).
        can_reinclude = nested_name == IGNORE_FILENAME

        while stack:
            iterator, prefix, dir_key, levels = stack[-1]
            entry = next(iterator, None)
            if entry is None:
                stack.pop()
                del chain[dir_key]
                continue
            name = entry.name
            rel = prefix + name
            try:
                is_symlink = entry.is_symlink()
                is_dir = entry.is_dir()  # follows symlinks; False for a dangling link
            except OSError as exc:
                if not _gone(exc, entry.path):
                    yield _problem(Path(entry.path), configured, exc)
                continue

            if is_dir and not recursive:
                continue
            category = always_excluded(name, is_dir=is_dir, parent=f"{real_posix}/{prefix}".rstrip("/"))
            if category is None and is_dir and entry.path in places.internal_paths:
                category = "workspace_internal"
            if category is not None and not (can_reinclude and _reincluded(levels, rel, is_dir=is_dir)):
                yield ExcludedPath(Path(entry.path), configured, category, is_dir)
                continue

            if is_dir:
                if _excludes_dir(levels, rel):
                    continue
            elif not is_symlink and not entry.is_file(follow_symlinks=False):
                continue  # FIFO, socket, device: not a candidate, not worth reporting
            elif name == IGNORE_FILENAME or _excludes_file(levels, rel):
                continue  # .hermesignore is our configuration, not content: never yielded, nor counted
            if is_symlink:
                verdict = _follow(places, entry.path, configured, is_dir=is_dir)
                if verdict is not None:
                    if not isinstance(verdict, str):
                        yield verdict
                    continue

            if is_dir:
                try:
                    dir_stat = os.stat(entry.path)
                except OSError as exc:
                    if not _gone(exc, entry.path):
                        yield _problem(Path(entry.path), configured, exc)
                    continue
                key = (dir_stat.st_dev, dir_stat.st_ino)
                if key in places.internal_keys:
                    yield ExcludedPath(Path(entry.path), configured, "workspace_internal", True)
                    continue
                if key in chain:
                    yield DiscoveryProblem(
                        Path(entry.path),
                        configured,
                        "SymlinkLoop",
                        f"{entry.path} points back to {chain[key]}, a directory already being walked; not followed",
                    )
                    continue
                children: Iterable[_Entry]
                if guide is not None and entry.path in guide:
                    # On the way to a changed path: only the child leading there, and the rules.
                    children = _guided_entries(entry.path, guide[entry.path])
                    nested, nested_problems = _nested_rules_in(entry.path, nested_name, configured)
                else:
                    try:
                        children = _list_dir(entry.path)
                    except OSError as exc:
                        if not _gone(exc, entry.path):
                            yield _problem(Path(entry.path), configured, exc)
                        continue
                    nested, nested_problems = _load_nested_rules(children, nested_name, configured)
                child_prefix = rel + "/"
                yield from nested_problems
                child_levels = levels if nested is None else (*levels, (len(child_prefix), nested))
                chain[key] = entry.path
                stack.append((iter(children), child_prefix, key, child_levels))
                continue

            path = Path(entry.path)
            if allowed is not None and suffix_of(name) not in allowed:
                continue  # the root's profile or extensions leave it out, as an ignore rule would
            if os.path.splitext(name)[1].lower() in self._skipped_suffixes:
                yield SkippedFile(path, configured, "binary_suffix")
                continue
            try:
                file_stat = os.stat(entry.path)
            except OSError as exc:
                if not _gone(exc, entry.path):
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
                identity = (file_stat.st_dev, file_stat.st_ino)
                yield SourceFile(path, configured, size, file_stat.st_mtime_ns, identity)


_IGNORED = "ignored"
""":meth:`_Places.follow` verdict for a link whose target its root's ignore rules leave out: skipped
without a count, as the ignored entry itself would be."""


@dataclass(slots=True)
class _Places:
    """What a walk must recognise beyond names: the workspace's internal folders (by device and
    inode, and by real path, for a folder created after the walk began, such as the logs), and
    every root (real path and settings), to judge where a symbolic link leads."""

    internal_keys: frozenset[tuple[int, int]]
    internal_paths: tuple[str, ...]
    roots: tuple[tuple[str, Root], ...]
    _root_rules: dict[str, tuple[IgnoreRules, str]] = field(default_factory=dict)
    _nested_rules: dict[str, IgnoreRules | None] = field(default_factory=dict)

    def follow(self, link: str, *, is_dir: bool) -> ExclusionCategory | str | None:
        """Whether the symbolic link ``link`` may be followed: ``None`` when its target is content
        the roots cover anyway (inside a root, at a depth it walks, not ignored by its rules);
        :data:`_IGNORED` when its root's rules leave the target out; else the category that
        excludes it: ``outside_roots`` (outside every root, or where no root walks: a repository
        may hold ``notes.md -> ~/.ssh/id_rsa``), ``workspace_internal``, or the category of a
        folder or name on its real path (``docs/key.md -> ../.ssh/id_rsa``).

        Raises:
            OSError: the target cannot be resolved (``/proc`` entries of ended processes).
        """
        target = os.path.realpath(link)
        for internal in self.internal_paths:
            if target == internal or target.startswith(internal + os.sep):
                return "workspace_internal"
        category = excluded_path(target.split(os.sep)[1:], is_dir=is_dir)
        if category is not None:
            return category
        contained = False
        for root_real, root in self.roots:
            if target == root_real:
                return None
            if not target.startswith(root_real.rstrip(os.sep) + os.sep):
                continue
            rel = target[len(root_real.rstrip(os.sep)) + 1 :]
            if not root.recursive and (is_dir or os.sep in rel):
                continue  # a folder this root does not walk
            contained = True
            if not self._ignored(root_real, root, rel.split(os.sep), is_dir):
                return None
        return _IGNORED if contained else "outside_roots"

    def _ignored(self, root_real: str, root: Root, parts: list[str], is_dir: bool) -> bool:
        """Whether the walk of ``root`` would leave out the entry at ``parts`` below it (an ignored
        folder on the way, or the entry itself), with the nested ignore files on the way."""
        if root_real not in self._root_rules:
            rules, nested_name, _ = _load_rules(root_real, root.path)  # its problems: reported by its walk
            self._root_rules[root_real] = (rules, nested_name)
        rules, nested_name = self._root_rules[root_real]
        levels: _RuleLevels = ((0, rules),)
        prefix = ""
        for depth, part in enumerate(parts):
            rel = prefix + part
            if depth == len(parts) - 1:
                if not is_dir and part == IGNORE_FILENAME:
                    return True
                return _excludes_dir(levels, rel) if is_dir else _excludes_file(levels, rel)
            if _excludes_dir(levels, rel):
                return True
            prefix = rel + "/"
            folder = os.path.join(root_real, rel)
            if folder not in self._nested_rules:
                self._nested_rules[folder] = _nested_rules_at(folder, nested_name, root.path)
            nested = self._nested_rules[folder]
            if nested is not None:
                levels = (*levels, (len(prefix), nested))
        return False


def _nested_rules_at(folder: str, name: str, configured: Path) -> IgnoreRules | None:
    """The rules of the ignore file ``name`` in ``folder`` (``None``: none, unreadable or empty)."""
    return _nested_rules_in(folder, name, configured)[0]


def _nested_rules_in(folder: str, name: str, configured: Path) -> tuple[IgnoreRules | None, list[DiscoveryProblem]]:
    """:func:`_load_nested_rules` for ``folder`` without listing it: the rules of its ignore file
    ``name`` (``None``: none, not a file, unreadable or without patterns) and the problems met."""
    candidate = os.path.join(folder, name)
    try:
        if not os.path.isfile(candidate):
            return None, []
    except OSError as exc:  # pragma: no cover - isfile swallows OSError on CPython
        return None, [_problem(Path(candidate), configured, exc, suffix="; its rules are not applied")]
    rules, problems = _read_ignore_file(candidate, configured, unreadable="; its rules are not applied")
    if rules is None or not rules.has_patterns:
        return None, problems
    return rules, problems


_Guide = dict[str, list[str]]
"""For a walk down to changed paths only: per folder to go through (its absolute path as the walk
spells it, the root's resolved path first), the names of its children to look at, sorted."""


def _guide(root_real: str, rels: Iterable[str]) -> _Guide | None:
    """The :data:`_Guide` of a root for the root-relative paths ``rels`` (``""``: the root itself,
    whose whole walk needs no guide); a path under another one in ``rels`` adds nothing."""
    if "" in rels:
        return None
    wanted = set(rels)
    # A path under another one is walked with it (and the other must stay unguided: walked whole).
    kept = [rel for rel in wanted if not any(rel.startswith(other + os.sep) for other in _ancestors(rel, wanted))]
    guide: dict[str, set[str]] = {}
    for rel in kept:
        parts = rel.split(os.sep)
        folder = root_real
        for part in parts:
            guide.setdefault(folder, set()).add(part)
            folder = os.path.join(folder, part)
    return {folder: sorted(names) for folder, names in guide.items()}


def _ancestors(rel: str, among: set[str]) -> Iterator[str]:
    """The folders above the relative path ``rel`` that are in ``among``."""
    parent = os.path.dirname(rel)
    while parent:
        if parent in among:
            yield parent
        parent = os.path.dirname(parent)


def _placed(text: str, places: _Places) -> tuple[list[tuple[int, str]], ExclusionCategory | None]:
    """Where the changed path ``text`` (absolute, normalised) is walked: ``(root index, path
    relative to the root)`` per root covering it (an ignore file stands for its folder), or no
    place and why (``workspace_internal``, ``outside_roots``). Tried as spelled, then, only if no
    root covers that spelling, with its folder resolved (one ``realpath``: a path given through a
    link to a root)."""
    forms = [text]
    for attempt in range(2):
        if attempt:
            try:
                resolved = os.path.join(os.path.realpath(os.path.dirname(text)), os.path.basename(text))
            except OSError:
                break
            if resolved == text:
                break
            forms = [resolved]
        if any(form == d or form.startswith(d.rstrip(os.sep) + os.sep) for form in forms for d in places.internal_paths):
            return [], "workspace_internal"
        placed: list[tuple[int, str]] = []
        for index, (root_real, root) in enumerate(places.roots):
            rel = _place(forms, root_real, os.path.normpath(root.path))
            if rel is None:
                continue
            if os.path.basename(rel) in IGNORE_FILE_PRECEDENCE:
                rel = os.path.dirname(rel)
            if not root.recursive and os.sep in rel:
                continue  # deeper than a non-recursive root walks
            placed.append((index, rel))
        if placed:
            return placed, None
    return [], "outside_roots"


def _place(forms: Sequence[str], root_real: str, root_text: str) -> str | None:
    """The path relative to the root (``""``: the root itself, or a folder holding it) of the
    first of ``forms`` (spellings of one absolute path) under the root's resolved path
    ``root_real`` or its configured spelling ``root_text``; ``None`` when none is."""
    for form in forms:
        for base in (root_real, root_text):
            if form == base:
                return ""
            prefix = base.rstrip(os.sep) + os.sep
            if form.startswith(prefix):
                return form[len(prefix):]
            if base.startswith(form.rstrip(os.sep) + os.sep):
                return ""  # a folder holding the root
    return None


class _PathEntry:
    """What the walk reads of an ``os.DirEntry``, for one path looked at without listing its
    folder (``lstat`` at creation): ``name``, ``path``, ``is_symlink()``, ``is_dir()`` (follows
    links; ``False`` for a dangling one) and ``is_file(follow_symlinks=...)``."""

    __slots__ = ("_lstat", "name", "path")

    def __init__(self, folder: str, name: str) -> None:
        self.name = name
        self.path = os.path.join(folder, name)
        self._lstat = os.lstat(self.path)

    def is_symlink(self) -> bool:
        return stat.S_ISLNK(self._lstat.st_mode)

    def is_dir(self) -> bool:
        return stat.S_ISDIR(self._followed().st_mode) if self.is_symlink() else stat.S_ISDIR(self._lstat.st_mode)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        if follow_symlinks and self.is_symlink():
            return stat.S_ISREG(self._followed().st_mode)
        return stat.S_ISREG(self._lstat.st_mode)

    def _followed(self) -> os.stat_result:
        try:
            return os.stat(self.path)
        except FileNotFoundError:  # dangling, as os.DirEntry answers it
            return self._lstat


class _BrokenEntry:
    """A child that could not be looked at (``lstat`` raised): the walk reports the error."""

    __slots__ = ("_error", "name", "path")

    def __init__(self, folder: str, name: str, error: OSError) -> None:
        self.name = name
        self.path = os.path.join(folder, name)
        self._error = error

    def is_symlink(self) -> bool:
        raise self._error

    def is_dir(self) -> bool:
        raise self._error

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        raise self._error


_Entry = os.DirEntry[str] | _PathEntry | _BrokenEntry


def _guided_entries(folder: str, names: Sequence[str]) -> Iterator[_PathEntry | _BrokenEntry]:
    """The children ``names`` of ``folder`` as walk entries, in order; one that no longer exists
    (deleted, renamed away) is left out: its indexed files are pruned by the caller."""
    for name in names:
        try:
            yield _PathEntry(folder, name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            yield _BrokenEntry(folder, name, exc)


_RuleLevels = tuple[tuple[int, IgnoreRules], ...]
"""The ignore rules in force in one directory, shallowest first: ``(start, rules)`` pairs where
``rules`` come from the root (``start == 0``; the root's file or the defaults) or from a nested
ignore file, and ``start`` is the length of the root-relative prefix of that file's directory
(``len("sub/")``), so ``rel[start:]`` is a path relative to it."""


def _follow(places: _Places, link: str, configured: Path, *, is_dir: bool) -> _Item | str | None:
    """``None`` to follow the link at ``link``; :data:`_IGNORED` to skip it silently; else the item
    to report: an :class:`ExcludedPath`, or a :class:`DiscoveryProblem` when it cannot be resolved."""
    try:
        verdict = places.follow(link, is_dir=is_dir)
    except OSError as exc:
        return _problem(Path(link), configured, exc)
    if verdict is None or verdict == _IGNORED:
        return verdict
    return ExcludedPath(Path(link), configured, verdict, is_dir)  # type: ignore[arg-type]


def _excludes_file(levels: _RuleLevels, rel: str) -> bool:
    """Whether the file at root-relative ``rel`` is ignored: the deepest nested file with a matching
    pattern decides, else the root's rules."""
    for index in range(len(levels) - 1, 0, -1):
        start, rules = levels[index]
        verdict = rules.file_verdict(rel[start:])
        if verdict is not None:
            return verdict
    return levels[0][1].excludes_file(rel)


def _reincluded(levels: _RuleLevels, rel: str, *, is_dir: bool) -> bool:
    """Whether the rules in force let the entry at root-relative ``rel`` in explicitly: the
    deciding pattern (precedence as :func:`_excludes_file`) is a ``!`` pattern that names the
    entry's last segment literally. ``!*``, ``!**`` or ``!*.pem`` let ordinary files in, never an
    always-excluded one: a broad negation must not switch the secret protection off."""
    for start, rules in reversed(levels):
        rule = rules.dir_rule(rel[start:]) if is_dir else rules.file_rule(rel[start:])
        if rule is not None:
            return not rule[1] and rule[3]
    return False


def _dir_keys(paths: Sequence[Path]) -> frozenset[tuple[int, int]]:
    """``(st_dev, st_ino)`` of each existing directory in ``paths`` (missing ones are left out)."""
    keys: set[tuple[int, int]] = set()
    for path in paths:
        try:
            found = os.stat(path)
        except OSError:
            continue
        if stat.S_ISDIR(found.st_mode):
            keys.add((found.st_dev, found.st_ino))
    return frozenset(keys)


def _excludes_dir(levels: _RuleLevels, rel: str) -> bool:
    """Whether the directory at root-relative ``rel`` is pruned; precedence as :func:`_excludes_file`,
    each level judging as :meth:`IgnoreRules.excludes_dir`."""
    for index in range(len(levels) - 1, 0, -1):
        start, rules = levels[index]
        verdict = rules.dir_verdict(rel[start:])
        if verdict is not None:
            return verdict
    return levels[0][1].excludes_dir(rel)


def _marker_names(real: str, entries: Iterable[_Entry], *, guided: bool) -> list[str]:
    """The file names at the top of the root ``real`` (where marker files are looked for): from
    the listing the walk made, or, when the walk is guided to a few changed paths (it lists
    nothing), from a listing of its own, so that a changed-paths run chooses the same extensions
    as a full run. A root that cannot be listed has none."""
    if not guided:
        return _file_names(entries)
    try:
        return _file_names(_list_dir(real))
    except OSError:
        return []


def _file_names(entries: Iterable[_Entry]) -> list[str]:
    """The names of the regular files (or links to one) among ``entries``: where marker files
    (``go.mod``) are looked for. An entry that cannot be looked at is left out."""
    names = []
    for entry in entries:
        try:
            if entry.is_file():
                names.append(entry.name)
        except OSError:
            continue
    return names


def _list_dir(path: str) -> list[os.DirEntry[str]]:
    """The entries of ``path`` sorted by name. Raises ``OSError`` if it cannot be listed."""
    with os.scandir(path) as iterator:
        return sorted(iterator, key=lambda entry: entry.name)


def _load_rules(real_root: str, configured: Path) -> tuple[IgnoreRules, str, list[DiscoveryProblem]]:
    """The root's :class:`IgnoreRules` (first existing ignore file, else the defaults), the name of
    the ignore files to read in its subdirectories (the family of the file found, ``.gitignore``
    if none), and the problems met loading them (unreadable file, invalid lines)."""
    for name in IGNORE_FILE_PRECEDENCE:
        candidate = os.path.join(real_root, name)
        if not os.path.isfile(candidate):
            continue
        rules, problems = _read_ignore_file(
            candidate, configured, unreadable="; using the built-in default rules"
        )
        if rules is None:
            rules = compile_ignore_rules(DEFAULT_IGNORE_RULES, DEFAULT_RULES_SOURCE)
        return rules, name, problems
    return compile_ignore_rules(DEFAULT_IGNORE_RULES, DEFAULT_RULES_SOURCE), GITIGNORE_FILENAME, []


def _load_nested_rules(
    children: list[os.DirEntry[str]], name: str, configured: Path
) -> tuple[IgnoreRules | None, list[DiscoveryProblem]]:
    """The rules of the ignore file called ``name`` among a directory's ``children`` (``None`` if
    there is none, it cannot be read, or it holds no pattern) and the problems met reading it."""
    for entry in children:
        if entry.name == name:
            break
    else:
        return None, []
    try:
        if not entry.is_file():  # follows symlinks; a directory called .gitignore is walked instead
            return None, []
    except OSError as exc:
        return None, [_problem(Path(entry.path), configured, exc, suffix="; its rules are not applied")]
    rules, problems = _read_ignore_file(entry.path, configured, unreadable="; its rules are not applied")
    if rules is None or not rules.has_patterns:
        return None, problems
    return rules, problems


def _read_ignore_file(
    path: str, configured: Path, *, unreadable: str
) -> tuple[IgnoreRules | None, list[DiscoveryProblem]]:
    """Read and compile one ignore file: its rules (``None`` if it cannot be read: one problem,
    whose message ends with ``unreadable``) and a problem per invalid pattern line."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return None, [_problem(Path(path), configured, exc, suffix=unreadable)]
    # Names from os.scandir carry undecodable bytes as surrogates; decode the rules the same way.
    text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    rules = compile_ignore_rules(text, path)
    problems = [
        DiscoveryProblem(Path(path), configured, "IgnorePatternError", f"line {number} {line!r} ignored: {reason}")
        for number, line, reason in rules.invalid_lines
    ]
    return rules, problems


def _gone(exc: OSError, path: str) -> bool:
    """Whether ``exc`` says that ``path``, listed a moment ago, was deleted since (`rm -rf` or a
    `git checkout` while the walk runs): then it is simply not there, as if the walk had come
    later, and the index prunes it, rather than a problem that keeps its records as unreadable.
    A dangling link is still there (as a link) and stays a problem."""
    return isinstance(exc, FileNotFoundError) and not os.path.lexists(path)


def _problem(path: Path, root: Path, exc: OSError, *, suffix: str = "") -> DiscoveryProblem:
    """A :class:`DiscoveryProblem` from an ``OSError``; ``ELOOP`` is reported as ``SymlinkLoop``."""
    error_type = "SymlinkLoop" if exc.errno == errno.ELOOP else type(exc).__name__
    message = exc.strerror or str(exc)
    return DiscoveryProblem(Path(path), root, error_type, f"{message}: {path}{suffix}")
