"""Cheap looks at the file system: ``root_unavailable``, whether a root's folder can be searched
right now, from one ``stat`` (issue 12's per-root coverage: a missing or unreadable root is
reported ``unavailable``); ``git_root``, the git repository a folder is in (issue 13: the project of
a search asked from a folder)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hermes_workspace.domain.model import UnavailableReason


def root_unavailable(folder: Path) -> UnavailableReason | None:
    """Why ``folder`` (a root, absolute) cannot be searched now, or ``None`` when it can: one
    ``os.stat`` (following symlinks) and one ``os.access``, no listing. ``missing``: it does not
    exist (or a folder on the way is a file); ``not_a_directory``: it is a file; ``not_readable``:
    it cannot be looked at or listed by this user (permission denied, an I/O error, a loop).
    Never raises."""
    try:
        found = os.stat(folder)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except (OSError, ValueError):  # permission denied on the way, ELOOP, EIO; a NUL in the name
        return "not_readable"
    if not stat.S_ISDIR(found.st_mode):
        return "not_a_directory"
    if not os.access(folder, os.R_OK | os.X_OK):
        return "not_readable"
    return None


def git_root(folder: Path) -> Path | None:
    """The top folder of the git work tree holding ``folder`` (absolute): the nearest of
    ``folder`` and its ancestors that has a ``.git`` entry (a folder, or a file for a linked
    work tree or submodule); ``None`` when there is none. Reads no git data and runs no git.
    Never raises."""
    try:
        current = Path(os.path.abspath(folder))
    except (OSError, ValueError):
        return None
    for candidate in (current, *current.parents):
        try:
            if os.path.lexists(candidate / ".git"):
                return candidate
        except (OSError, ValueError):
            return None
    return None
