"""``YamlConfigRepository``: config.yaml through ruamel.yaml's round-trip mode, so that editing the
roots keeps the user's comments, key order and every other section."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from hermes_workspace.domain.config import WorkspaceConfig, roots_to_config
from hermes_workspace.domain.errors import ConfigError
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
        """Set ``knowledgebase.roots`` and write the file. Raises :class:`ConfigError` if the file
        cannot be parsed or written."""
        document = self._read()
        if document is None:
            document = CommentedMap()
        knowledgebase = document.get("knowledgebase")
        if knowledgebase is None:
            knowledgebase = document["knowledgebase"] = CommentedMap()
        knowledgebase["roots"] = roots_to_config(roots)
        self._write(document)

    def _read(self) -> Any:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
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
            raise ConfigError(f"cannot write {self.path}: {exc}",
                              hint="Check that HERMES_HOME is writable.") from exc
