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
        return WorkspaceConfig.from_dict(self._read())

    def save_roots(self, roots: tuple[Root, ...]) -> None:
        """Make ``knowledgebase.roots`` hold ``roots``, editing the list in place: entries that
        stay keep their spelling (``~/notes``, relative paths, bare strings), comments, extra keys
        and merge keys; only removed entries go and only new ones are appended. Raises
        :class:`ConfigError` if the file cannot be parsed, or :class:`ConfigWriteError` if it
        cannot be written."""
        document = self._read()
        if document is None:
            document = CommentedMap()
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
            path = _entry_path(entry)
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
        for position in reversed(dropped):
            del entries[position]
        for root in roots:
            if root.path not in kept:
                entries.append(CommentedMap(path=str(root.path), recursive=root.recursive))
        self._write(document)

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

    def _write(self, document: Any) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".yaml", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    self._yaml.dump(document, handle)
                if self.path.exists():
                    os.chmod(tmp, self.path.stat().st_mode & 0o777)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise ConfigWriteError(f"cannot write {self.path}: {exc}") from exc


def _entry_path(entry: Any) -> Path | None:
    """The path a ``knowledgebase.roots`` entry names, normalized as the config loader does."""
    raw = entry if isinstance(entry, str) else entry.get("path") if isinstance(entry, dict) else None
    if not isinstance(raw, str) or not raw.strip():
        return None
    return normalize_root_path(raw)
