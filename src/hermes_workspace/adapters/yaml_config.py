"""``YamlConfigRepository``: config.yaml through ruamel.yaml's round-trip mode, so that editing the
roots keeps the user's comments, key order and every other section."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from hermes_workspace.domain.config import WorkspaceConfig, normalize_root_path
from hermes_workspace.domain.errors import ConfigError, ConfigWriteError
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.project_config import (
    ConfigFound,
    check_project_keys,
    in_file,
    project_settings,
    with_primary_default,
)
from hermes_workspace.domain.profiles import normalize_extensions
from hermes_workspace.domain.root_names import PRIMARY_ROOT_NAME
from hermes_workspace.domain.sizes import parse_size, size_setting


LOCK_WAIT_SECONDS = 30.0
"""How long an edit of config.yaml waits for another process's edit to finish. An edit holds the
lock for milliseconds; 30 s covers a slow disk and a dozen queued editors."""


class YamlConfigRepository:
    """A :class:`~hermes_workspace.domain.ports.ConfigRepository` over one YAML file.

    A missing or empty file means the defaults. Every edit (:meth:`update_roots`,
    :meth:`save_roots`) reads, changes and writes the file while holding an exclusive lock on
    ``.config.yaml.lock`` beside it (an OS lock through filelock, released by the kernel if the
    process dies), so concurrent edits from several processes are applied one after the other
    and none is lost. Writes go to a temporary file in the same folder, flushed to disk, then
    replace the original atomically (``os.replace``), so a crash never leaves half a config and a
    reader never sees one. A document that would not load back (:meth:`load`) is never written.
    """

    def __init__(self, path: Path, *, lock_wait_seconds: float = LOCK_WAIT_SECONDS, home: Path | None = None) -> None:
        self.path = path
        self.home = home
        """HERMES_HOME, whose ``workspace`` folder is the primary workspace unless the file sets
        ``workspace.path`` (for the overlap check of the roots); ``None``: the file's folder (a
        config.yaml in HERMES_HOME)."""
        self.lock_wait_seconds = lock_wait_seconds
        self._yaml = YAML(typ="rt")
        self._yaml.preserve_quotes = True
        self._yaml.indent(mapping=2, sequence=4, offset=2)

    @property
    def lock_path(self) -> Path:
        """The lock file of edits: ``.<config name>.lock`` in the config's folder."""
        return self.path.with_name(f".{self.path.name}.lock")

    def load(self) -> WorkspaceConfig:
        """The validated config. Raises :class:`ConfigError` (invalid YAML, with its line and
        column; or an invalid value, naming the key).

        The file is parsed once per version: while its identity, size and modification time stay
        the same (one ``stat``), the config already parsed is returned (it is immutable). An edit
        through this repository or any other process replaces the file, which changes them."""
        version = self._version()
        cached = self._cached
        if cached is not None and version is not None and cached[0] == version:
            return cached[1]
        config = WorkspaceConfig.from_dict(self._read(), base_dir=self.path.parent.absolute(), home=self.home)
        self._cached = (version, config) if version is not None else None
        return config

    _cached: tuple[tuple[int, ...], WorkspaceConfig] | None = None

    def _version(self) -> tuple[int, ...] | None:
        """``(device, inode, size, mtime_ns, ctime_ns)`` of the file, ``(0,)`` when it is missing,
        ``None`` when it cannot be looked at (then it is read every time, and the read reports why)."""
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return (0,)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def update_roots(self, change: Callable[[WorkspaceConfig], tuple[Root, ...] | None]) -> None:
        """Under the edit lock: load the config, call ``change(config)``, and when it returns a
        tuple of roots, make ``knowledgebase.roots`` hold them (as :meth:`save_roots`). ``None``
        writes nothing. Exceptions from ``change`` propagate and nothing is written.

        Raises:
            ConfigError: the file is invalid, or the edit would make it invalid (not written).
            ConfigWriteError: the lock or the file cannot be written, or another process held
                the lock for more than ``lock_wait_seconds``.
        """
        with self._edit_lock():
            roots = change(self.load())
            if roots is not None:
                self._save_roots(roots)

    def save_roots(self, roots: tuple[Root, ...]) -> None:
        """Make ``knowledgebase.roots`` hold ``roots``, under the edit lock; see
        :meth:`update_roots` to decide the roots from the current file in the same edit.

        Raises:
            ConfigError: the file cannot be parsed, or the result would not load back.
            ConfigWriteError: the file or its lock cannot be written.
        """
        with self._edit_lock():
            self._save_roots(roots)

    @contextmanager
    def _edit_lock(self) -> Iterator[None]:
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.lock_path), timeout=self.lock_wait_seconds, thread_local=False,
                            is_singleton=False)
            lock.acquire()
        except Timeout:
            raise ConfigWriteError(
                f"another process has been editing {self.path} for more than {self.lock_wait_seconds:g} s",
                hint=f"Wait for the other hermes-workspace command to finish; if none is running, delete {self.lock_path}.",
            ) from None
        except OSError as exc:
            raise ConfigWriteError(f"cannot lock {self.path} for editing: {exc}") from exc
        try:
            yield
        finally:
            lock.release()

    def _save_roots(self, roots: tuple[Root, ...]) -> None:
        """Make ``knowledgebase.roots`` hold ``roots``, editing the list in place: entries that
        stay keep their spelling (``~/notes``, relative paths, bare strings), comments, extra keys
        and merge keys; only removed entries go and only new ones are appended. An entry's
        ``name`` key is set, changed or removed to match the root's ``name`` (``None``: no key).
        A root marked ``primary`` in ``roots`` is not an entry: its name goes to
        ``workspace.name``. The caller holds the edit lock."""
        document = self._read()
        preamble = ""
        if document is None:
            document = CommentedMap()
            preamble = self._text_if_any()
        for primary in (r for r in roots if r.primary):
            _set_workspace_name(document, primary.name)
        roots = tuple(r for r in roots if not r.primary)
        knowledgebase = document.get("knowledgebase")
        if knowledgebase is None:
            knowledgebase = document["knowledgebase"] = CommentedMap()
        entries = knowledgebase.get("roots")
        if not isinstance(entries, list):
            entries = knowledgebase["roots"] = CommentedSeq()
        wanted = {root.path: root for root in roots}
        kept: set[Path] = set()
        dropped: list[int] = []
        for position, entry in enumerate(entries):
            path = _entry_path(entry, self.path.parent.absolute())
            if path is None or path not in wanted or path in kept:
                dropped.append(position)
                continue
            kept.add(path)
            root = wanted[path]
            recursive, name = root.recursive, root.name
            if isinstance(entry, str):
                if recursive or name is not None or _has_file_settings(root):
                    entries[position] = _new_entry(entry, root)
                continue
            _set_file_settings(entry, root)
            # Without the key, a code profile means recursive (config loader).
            if bool(entry.get("recursive", root.profile == "code")) != recursive:
                entry["recursive"] = recursive
            if name is None:
                entry.pop("name", None)
            elif entry.get("name") != name:
                entry["name"] = name
        orphan = None
        for position in reversed(dropped):
            orphan = _keep_trailing_comments(entries, position) or orphan
            del entries[position]
        for root in roots:
            if root.path not in kept:
                entries.append(_new_entry(self._entry_text(root.path), root))
        if orphan is not None:
            if entries:
                _append_comment(entries[-1], orphan)
            else:
                # An empty list is written `[]`; the comments go after it.
                knowledgebase["roots"] = CommentedSeq()
                knowledgebase.ca.items["roots"] = [None, None, orphan, None]
        self._check_loads_back(document)
        self._write(document, preamble)

    def _entry_text(self, path: Path) -> str:
        """How a new root's path is written: absolute."""
        return str(path)

    def _check_loads_back(self, document: Any) -> None:
        """Refuse to write a document that :meth:`load` would reject: a config that cannot be
        read back stops every later command, ``roots remove`` included."""
        try:
            WorkspaceConfig.from_dict(document, base_dir=self.path.parent.absolute(), home=self.home)
        except ConfigError as exc:
            raise ConfigError(
                f"not written: the edit would make {self.path} invalid ({exc.message})",
                hint="This is a bug in the caller; config.yaml was left as it was.",
            ) from exc

    def _read(self) -> Any:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {self.path}: {exc}") from exc
        try:
            document = self._yaml.load(text)
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"{self.path} is not valid YAML{where}: {problem}") from exc
        if document is not None and not isinstance(document, dict):
            raise ConfigError(f"{self.path} must hold a mapping at the top level")
        return document

    def _text_if_any(self) -> str:
        """The file's text when it parsed to nothing (only comments), so that writing keeps it."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:
            return ""
        return text if text.strip() and text.endswith("\n") else (text + "\n" if text.strip() else "")

    def _write(self, document: Any, preamble: str = "") -> None:
        self._cached = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".yaml", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(preamble)
                    self._yaml.dump(document, handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                if self.path.exists():
                    os.chmod(tmp, self.path.stat().st_mode & 0o777)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise ConfigWriteError(f"cannot write {self.path}: {exc}") from exc
        except UnicodeEncodeError as exc:
            raise ConfigWriteError(
                f"cannot write {self.path}: a path is not valid UTF-8 ({exc.object[exc.start:exc.end]!r})",
                hint="config.yaml is UTF-8 text: rename the folder, or add a parent folder whose name is valid UTF-8.",
            ) from exc


class ProjectConfigRepository(YamlConfigRepository):
    """The :class:`~hermes_workspace.domain.ports.ConfigRepository` of a project config
    (:mod:`hermes_workspace.domain.project_config`): ``path`` holds the primary root and the
    roots, ``home_config`` every other setting.

    :meth:`load` validates the project file alone (its settings limited to
    :data:`~hermes_workspace.domain.project_config.PROJECT_KEYS`, relative paths from its folder,
    ``workspace.path`` defaulting to that folder) and lays its roots over ``home_config``'s
    settings; an error in the project file names it. Edits (``roots add``, ``rename``, ``remove``)
    change the project file only, keeping its comments as for config.yaml. The edit lock lives
    in ``lock_dir`` (the project's folder under HERMES_HOME), so that nothing but the edit itself
    is written into the repository (the atomic write's temporary file, beside the file, is renamed
    over it).
    """

    def __init__(self, path: Path, *, home_config: YamlConfigRepository, lock_dir: Path,
                 found: ConfigFound = "project", lock_wait_seconds: float = LOCK_WAIT_SECONDS) -> None:
        super().__init__(path, lock_wait_seconds=lock_wait_seconds)
        self.home_config = home_config
        self.lock_dir = lock_dir
        self.found: ConfigFound = found

    @property
    def lock_path(self) -> Path:
        """``<lock_dir>/config.lock``."""
        return self.lock_dir / "config.lock"

    def load(self) -> WorkspaceConfig:
        """HERMES_HOME's config with the project's primary root and roots; parsed again only when
        one of the two files changed. Raises :class:`ConfigError` (naming the project file for an
        error in it)."""
        version = self._version()
        home_version = self.home_config._version()
        key = None if version is None or home_version is None else (*version, -1, *home_version)
        cached = self._cached
        if cached is not None and key is not None and cached[0] == key:
            return cached[1]
        try:
            document = self._read()
        except ConfigError as exc:
            raise in_file(exc, self.path, self.found) from exc
        config = project_settings(self.home_config.load(), self._project_config(document))
        self._cached = (key, config) if key is not None else None
        return config

    def _project_config(self, document: Any) -> WorkspaceConfig:
        try:
            check_project_keys(document)
            return WorkspaceConfig.from_dict(with_primary_default(document), base_dir=self.path.parent.absolute())
        except ConfigError as exc:
            raise in_file(exc, self.path, self.found) from exc

    def _entry_text(self, path: Path) -> str:
        """A new root's path as written into a project file: relative to the file's folder when
        the root is inside the folder holding the project (``../docs-site``, a sibling checkout),
        so that the file means the same in every clone; else absolute."""
        base = self.path.parent.absolute()
        if base.parent.parent != base.parent and path.is_relative_to(base.parent):  # `/` holds everything
            return os.path.relpath(path, base)
        return str(path)

    def _check_loads_back(self, document: Any) -> None:
        try:
            self._project_config(document)
        except ConfigError as exc:
            raise ConfigError(
                f"not written: the edit would make {self.path} invalid ({exc.message})",
                hint=f"This is a bug in the caller; {self.path} was left as it was.",
            ) from exc


def _new_entry(path: str, root: Root) -> CommentedMap:
    """A ``knowledgebase.roots`` entry: ``{path, recursive}``, plus ``name``, ``profile``,
    ``extensions`` and ``max_file_size`` when the root has them."""
    entry = CommentedMap(path=path, recursive=root.recursive)
    if root.name is not None:
        entry["name"] = root.name
    _set_file_settings(entry, root)
    return entry


def _has_file_settings(root: Root) -> bool:
    return root.profile is not None or root.extensions is not None or root.max_file_size is not None


def _set_file_settings(entry: Any, root: Root) -> None:
    """Make ``entry``'s ``profile``, ``extensions`` and ``max_file_size`` say what ``root`` has
    (a key is removed for ``None``); a value that already reads the same keeps its spelling
    (``max_file_size: 1MB`` stays, not ``1048576``)."""
    if root.profile is None:
        entry.pop("profile", None)
    elif entry.get("profile") != root.profile:
        entry["profile"] = root.profile
    current = entry.get("extensions")
    if root.extensions is None:
        entry.pop("extensions", None)
    elif not _same_extensions(current, root.extensions):
        entry["extensions"] = list(root.extensions)
    if root.max_file_size is None:
        entry.pop("max_file_size", None)
    elif not _same_size(entry.get("max_file_size"), root.max_file_size):
        entry["max_file_size"] = size_setting(root.max_file_size)


def _same_extensions(value: Any, wanted: tuple[str, ...]) -> bool:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        return False
    return normalize_extensions(items) == wanted


def _same_size(value: Any, wanted: int) -> bool:
    try:
        return value is not None and parse_size(value, "max_file_size") == wanted
    except ConfigError:
        return False


def _set_workspace_name(document: Any, name: str | None) -> None:
    """Make ``workspace.name`` say ``name``: the key is removed for ``None`` or the default name
    (``workspace``) when the file has no such key, so that a config without names stays so."""
    section = document.get("workspace")
    if name is None or (name == PRIMARY_ROOT_NAME and (not isinstance(section, dict) or "name" not in section)):
        if isinstance(section, dict):
            section.pop("name", None)
        return
    if not isinstance(section, dict):
        section = document["workspace"] = CommentedMap()
    section["name"] = name


def _entry_path(entry: Any, base_dir: Path) -> Path | None:
    """The path a ``knowledgebase.roots`` entry names, normalized as the config loader does."""
    raw = entry if isinstance(entry, str) else entry.get("path") if isinstance(entry, dict) else None
    if not isinstance(raw, str) or not raw.strip():
        return None
    return normalize_root_path(raw, base_dir)


def _trailing_comment(entry: Any) -> tuple[Any, Any] | None:
    """``(owner, key)`` of the comment ruamel attaches after ``entry``: the full-line comments
    that follow a list item belong to the last key of that item's mapping."""
    if isinstance(entry, CommentedMap) and len(entry):
        key = list(entry.keys())[-1]
        slot = entry.ca.items.get(key)
        if slot and len(slot) > 2 and slot[2] is not None:
            return entry, key
    return None


def _keep_trailing_comments(entries: CommentedSeq, position: int) -> Any:
    """Before ``entries[position]`` is deleted, move the comments that follow it (a commented-out
    root, or the comment of the key after the list) to the entry before it. Returns the comment
    token when there is no such entry, else ``None``."""
    found = _trailing_comment(entries[position])
    if found is None:
        return None
    owner, key = found
    token = owner.ca.items[key][2]
    if position > 0 and isinstance(entries[position - 1], CommentedMap) and len(entries[position - 1]):
        _append_comment(entries[position - 1], token)
        return None
    return token


def _append_comment(entry: Any, token: Any) -> None:
    if not isinstance(entry, CommentedMap) or not len(entry):
        return
    last = list(entry.keys())[-1]
    slot = entry.ca.items.setdefault(last, [None, None, None, None])
    if slot[2] is None:
        slot[2] = token
    else:
        slot[2].value = slot[2].value.rstrip("\n") + "\n" + token.value.lstrip("\n")
