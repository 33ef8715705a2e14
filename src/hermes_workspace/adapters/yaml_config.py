"""``YamlConfigRepository``: config.yaml through ruamel.yaml's round-trip mode, so that editing the
roots keeps the user's comments, key order and every other section."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from hermes_workspace.domain.config import WorkspaceConfig, normalize_root_path
from hermes_workspace.domain.errors import ConfigError, ConfigWriteError
from hermes_workspace.domain.model import Root


class YamlConfigRepository:
    """A :class:`~hermes_workspace.domain.ports.ConfigRepository` over one YAML file.

    A missing or empty file means the defaults. Writes go to a temporary file in the same folder
    and replace the original atomically, so a crash never leaves half a config.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._yaml = YAML(typ="rt")
        self._yaml.preserve_quotes = True
        self._yaml.indent(mapping=2, sequence=4, offset=2)

    def load(self) -> WorkspaceConfig:
        """The validated config. Raises :class:`ConfigError` (invalid YAML, with its line and
        column; or an invalid value, naming the key)."""
        return WorkspaceConfig.from_dict(self._read(), base_dir=self.path.parent.absolute())

    def save_roots(self, roots: tuple[Root, ...]) -> None:
        """Make ``knowledgebase.roots`` hold ``roots``, editing the list in place: entries that
        stay keep their spelling (``~/notes``, relative paths, bare strings), comments, extra keys
        and merge keys; only removed entries go and only new ones are appended. Raises
        :class:`ConfigError` if the file cannot be parsed, or :class:`ConfigWriteError` if it
        cannot be written."""
        document = self._read()
        preamble = ""
        if document is None:
            document = CommentedMap()
            preamble = self._text_if_any()
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
            recursive = wanted[path].recursive
            if isinstance(entry, str):
                if recursive:
                    entries[position] = CommentedMap(path=entry, recursive=True)
            elif bool(entry.get("recursive", False)) != recursive:
                entry["recursive"] = recursive
        orphan = None
        for position in reversed(dropped):
            orphan = _keep_trailing_comments(entries, position) or orphan
            del entries[position]
        for root in roots:
            if root.path not in kept:
                entries.append(CommentedMap(path=str(root.path), recursive=root.recursive))
        if orphan is not None:
            if entries:
                _append_comment(entries[-1], orphan)
            else:
                # An empty list is written `[]`; the comments go after it.
                knowledgebase["roots"] = CommentedSeq()
                knowledgebase.ca.items["roots"] = [None, None, orphan, None]
        self._write(document, preamble)

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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".yaml", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(preamble)
                    self._yaml.dump(document, handle)
                if self.path.exists():
                    os.chmod(tmp, self.path.stat().st_mode & 0o777)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise ConfigWriteError(f"cannot write {self.path}: {exc}") from exc


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
