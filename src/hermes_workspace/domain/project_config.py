"""Project configs (issue 12): a ``.hermes-workspace.yaml`` in a repository declares its roots.

Which config a command uses (:class:`ConfigSource`) is decided once, when the workspace is
opened, in this order (seed 004's selection precedence, with HERMES_HOME's config.yaml standing
for its global registry):

1. an explicit file: ``--config FILE`` (CLI), ``Workspace.open(config=...)`` (API), ``serve(config=...)``
   (MCP), else :data:`CONFIG_ENV`;
2. the nearest :data:`PROJECT_CONFIG_FILENAME` in the working directory or one of its ancestors
   (only when a working directory is given: the CLI and the MCP server give theirs, the API only
   when its caller passes ``cwd=``);
3. ``HERMES_HOME/config.yaml``.

A project config holds only what belongs to a repository (:data:`PROJECT_KEYS`): the primary
root (``workspace.path``, default the file's folder; ``workspace.name``; ``workspace.enabled``)
and ``knowledgebase.roots``. Everything else (embedder, reranker, retriever, plugins, chunking...)
comes from HERMES_HOME/config.yaml: a file checked into a repository someone else wrote must not
be able to send the user's files to a remote embedding service or pick plugins. Relative paths
resolve against the project file's folder and ``~`` expands (seed 004, "member paths resolve
relative to the configuration file"); the roots go through the same validation as config.yaml's
(:meth:`~hermes_workspace.domain.config.WorkspaceConfig.from_dict`).

The index of a project workspace lives under HERMES_HOME, never in the repository:
``HERMES_HOME/projects/<folder name>-<hash>/`` (:func:`project_index_dir`), keyed by the real path
of the config file (seed 002's per-project hash; seed 004: "a workspace's identity is derived from
its canonical configuration path, so moving that file selects a different [index]"). Two project
files sharing a root therefore keep two indexes. Logs and model files stay in HERMES_HOME.

Standard library only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError

PROJECT_CONFIG_FILENAME = ".hermes-workspace.yaml"
"""The project config's file name, looked for in the working directory and its ancestors."""

CONFIG_ENV = "HERMES_WORKSPACE_CONFIG"
"""Environment variable naming a config file explicitly (below ``--config``, above discovery):
for an MCP server or agent launched with a fixed working directory."""

PROJECTS_DIRNAME = "projects"
"""``HERMES_HOME/projects``: one folder per project config (its index, lock and converted texts)."""

PROJECT_HASH_CHARS = 16
"""Hex digits of SHA-256 kept in a project folder's name: 64 bits, so that two config paths of
one user collide with probability about n^2 / 2^65 (negligible for any number of projects)."""

PROJECT_SLUG_CHARS = 40
"""Most characters of the folder name kept in a project folder's name (it is only a label)."""

ConfigFound = Literal["option", "env", "project", "home"]
"""How the config in use was found: ``option`` (``--config``/``config=``), ``env``
(:data:`CONFIG_ENV`), ``project`` (nearest ancestor file), ``home`` (HERMES_HOME/config.yaml)."""

PROJECT_KEYS: dict[str, frozenset[str]] = {
    "workspace": frozenset({"enabled", "path", "name"}),
    "knowledgebase": frozenset({"roots"}),
}
"""The settings a project config may hold, by section. Any other key of those sections, or any
other top-level section, is an error naming the file (not silently ignored: a user who writes
``embedder:`` there expects it to act)."""


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """The config file in use: ``path`` (absolute, as found: symlinks kept), ``found``
    (:data:`ConfigFound`), and ``project``: whether it is a project config (its roots and an
    index under HERMES_HOME/projects) rather than HERMES_HOME's config.yaml. An explicit file
    that is HERMES_HOME's config.yaml is not a project."""

    path: Path
    found: ConfigFound
    project: bool

    def to_json(self) -> dict[str, Any]:
        """``{"path": str, "found": "option" | "env" | "project" | "home", "project": bool}``."""
        return {"path": str(self.path), "found": self.found, "project": self.project}


def project_index_dir(home: Path, real_config_path: Path) -> Path:
    """``home/projects/<slug>-<hash>``: ``hash`` is the first :data:`PROJECT_HASH_CHARS` hex digits
    of SHA-256 over ``real_config_path`` (the config file with symlinks resolved, UTF-8 with
    surrogate escapes); ``slug`` is the name of the folder holding it, characters other than ASCII
    letters, digits, ``.``, ``_`` and ``-`` replaced by ``_``, at most :data:`PROJECT_SLUG_CHARS`
    (``project`` when that leaves nothing). Stable across runs and machines for one path."""
    digest = hashlib.sha256(str(real_config_path).encode("utf-8", "surrogateescape")).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", real_config_path.parent.name)[:PROJECT_SLUG_CHARS].strip("._")
    return home / PROJECTS_DIRNAME / f"{slug or 'project'}-{digest[:PROJECT_HASH_CHARS]}"


def check_project_keys(document: Mapping[str, Any] | None) -> None:
    """Raise :class:`ConfigError` for the first setting of ``document`` (a parsed project config)
    outside :data:`PROJECT_KEYS`, saying where it belongs instead. The message does not name the
    file: the caller adds it (:func:`in_file`)."""
    if not document:
        return
    for section, value in document.items():
        allowed = PROJECT_KEYS.get(section) if isinstance(section, str) else None
        if allowed is None:
            raise ConfigError(
                f"{section} is not a setting of a project config",
                hint="A project config holds workspace (path, name, enabled) and knowledgebase.roots; "
                     "other settings go in HERMES_HOME/config.yaml.",
            )
        if not isinstance(value, Mapping):
            continue  # from_dict reports the wrong type
        for key in value:
            if key not in allowed:
                raise ConfigError(
                    f"{section}.{key} is not a setting of a project config",
                    hint=f"A project config holds {section} keys {', '.join(sorted(allowed))} only; "
                         f"set {section}.{key} in HERMES_HOME/config.yaml (it applies to every workspace).",
                )


def with_primary_default(document: Mapping[str, Any] | None) -> dict[str, Any]:
    """A shallow copy of a project config document whose ``workspace.path`` is ``.`` (the file's
    folder) when it gives none, so that validation (overlaps of roots with the primary root
    included) sees the primary root the project uses. The document itself is not changed."""
    data = dict(document or {})
    section = data.get("workspace")
    if section is None:
        section = {}
    if isinstance(section, Mapping):
        path = section.get("path")
        if path is None or (isinstance(path, str) and not path.strip()):
            data["workspace"] = {**section, "path": "."}
    return data


def project_settings(home_config: WorkspaceConfig, project: WorkspaceConfig) -> WorkspaceConfig:
    """The config of a project workspace: HERMES_HOME's settings with the project's primary root
    (``workspace_path``, ``workspace_name``, ``enabled``) and added roots."""
    return replace(home_config, enabled=project.enabled, workspace_path=project.workspace_path,
                   workspace_name=project.workspace_name, roots=project.roots)


def in_file(error: ConfigError, path: Path, found: ConfigFound) -> ConfigError:
    """``error`` restated to name the config file ``path`` it comes from, with a hint saying how
    that file was chosen and how to use another one. The message starts with the path unless it
    already holds it (YAML syntax errors do)."""
    message = error.message if str(path) in error.message else f"{path}: {error.message}"
    how = {
        "project": f"in use as the nearest {PROJECT_CONFIG_FILENAME} above the working directory; "
                   "--config HERMES_HOME/config.yaml bypasses it",
        "option": "in use because --config (or config=) names it",
        "env": f"in use because ${CONFIG_ENV} names it",
        "home": "HERMES_HOME's config",
    }[found]
    hint = error.hint if error.hint and error.hint != ConfigError.default_hint else f"Fix it in {path}."
    hint = f"{hint.rstrip()} ({path.name}: {how}.)"
    wrapped = ConfigError(message, hint=hint)
    wrapped.code = error.code
    return wrapped
