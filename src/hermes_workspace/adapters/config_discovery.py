"""Which config file a workspace uses: an explicit one, the nearest project file, or HERMES_HOME's
(:mod:`hermes_workspace.domain.project_config` has the rules and why)."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from hermes_workspace.domain.constants import CONFIG_FILENAME
from hermes_workspace.domain.errors import ConfigError, UsageError
from hermes_workspace.domain.project_config import CONFIG_ENV, PROJECT_CONFIG_FILENAME, ConfigSource
from hermes_workspace.logs import get_logger

log = get_logger("hermes_workspace.config")


def discover_config(
    home: Path,
    *,
    explicit: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConfigSource:
    """The config in use for the workspace of ``home`` (absolute).

    Order: ``explicit`` (``found="option"``); else ``$HERMES_WORKSPACE_CONFIG`` (``"env"``; an
    empty value counts as unset); else, when ``cwd`` is given, the nearest
    :data:`~hermes_workspace.domain.project_config.PROJECT_CONFIG_FILENAME` in ``cwd`` or an
    ancestor (``"project"``, :func:`find_project_file`); else ``home/config.yaml`` (``"home"``).
    Without ``cwd`` no project file is looked for: the process's working directory is never
    looked at here. An explicit file that is ``home/config.yaml`` (same real path) is the home
    config, not a project.

    Raises:
        UsageError: ``explicit`` is empty, missing, or not a file.
        ConfigError: ``$HERMES_WORKSPACE_CONFIG`` names a missing file or something else.
    """
    home_file = home / CONFIG_FILENAME
    environ = os.environ if environ is None else environ
    if explicit is not None:
        if not os.fspath(explicit).strip():
            raise UsageError("the config file is empty",
                             hint="Give a config file, or leave it out to use the project's or HERMES_HOME's.")
        if os.path.normpath(Path(explicit).expanduser().absolute()) == os.path.normpath(home_file):
            return ConfigSource(home_file, "option", False)  # may be missing: the defaults
        path = _explicit_file(Path(explicit), UsageError, "the config file")
        return ConfigSource(path, "option", not _same_file(path, home_file))
    from_env = environ.get(CONFIG_ENV, "").strip()
    if from_env:
        path = _explicit_file(Path(from_env), ConfigError, f"${CONFIG_ENV}")
        return ConfigSource(path, "env", not _same_file(path, home_file))
    if cwd is not None:
        found = find_project_file(Path(cwd), user_home=_user_home(environ))
        if found is not None:
            return ConfigSource(found, "project", True)
    return ConfigSource(home_file, "home", False)


def find_project_file(start: Path, *, user_home: Path | None = None) -> Path | None:
    """The nearest project file in ``start`` or one of its ancestors, or ``None``.

    ``start`` is made absolute with symlinks resolved (as ``os.getcwd()`` reports a directory),
    so the walk follows the real parents. It stops:

    - below ``user_home`` when ``start`` is inside it: ``~`` itself and the folders above it
      (``/home``) are not projects; ``~/.hermes/config.yaml`` is the config for everything
      under ``~`` without a project file;
    - otherwise at the filesystem root.

    A file owned by another user (POSIX) is passed over, with a warning, and the walk goes on:
    whoever can write into a shared parent (``/tmp``, a group folder) must not choose the roots
    another user's commands index. A directory or unreadable entry of that name is passed over too.
    """
    try:
        current = start.expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    stop = None
    if user_home is not None:
        try:
            home = user_home.resolve()
        except (OSError, RuntimeError):
            home = None
        if home is not None and current != home and current.is_relative_to(home):
            stop = home
        elif home is not None and current == home:
            return None
    while True:
        if stop is not None and current == stop:
            return None
        candidate = current / PROJECT_CONFIG_FILENAME
        if _usable(candidate):
            return candidate
        if current.parent == current:
            return None
        current = current.parent


def _usable(candidate: Path) -> bool:
    """Whether ``candidate`` is a regular file (after symlinks) this user owns."""
    try:
        info = candidate.stat()
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        log.warning("project config skipped: owned by another user", path=str(candidate), owner_uid=info.st_uid)
        return False
    return True


def _explicit_file(path: Path, error: type[UsageError] | type[ConfigError], what: str) -> Path:
    path = path.expanduser().absolute()
    if not path.exists():
        raise error(f"{what} {path} does not exist",
                    hint=f"Create it (e.g. an empty {PROJECT_CONFIG_FILENAME}), or give an existing config file.")
    if not path.is_file():
        raise error(f"{what} {path} is not a file", hint="Give a YAML config file.")
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _user_home(environ: Mapping[str, str]) -> Path | None:
    value = environ.get("HOME", "").strip()
    if value:
        return Path(value)
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return None
