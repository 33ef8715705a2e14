"""Measuring an index folder for the storage limits (``knowledgebase.storage``): its size as the
budget counts it (:func:`index_size`) and the free space of its file system (:func:`free_disk`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
"""Suffixes of SQLite's working files beside a database: left out of :func:`index_size` when the
database's own size comes from its pages (they hold copies of its pages, and are folded into it
and deleted when the last connection closes)."""


def index_size(index_dir: Path, database: Path | None = None, used_bytes: Callable[[], int] | None = None) -> int:
    """The index size in bytes: ``used_bytes()`` (the database's pages in use, see
    ``SqliteFts5Store.used_bytes``) plus every other file under ``index_dir`` (the converted-text
    cache, the lock file), by apparent size; without ``used_bytes`` (a store that cannot say), every
    file under ``index_dir``. ``database`` is the file ``used_bytes`` measures; it and its
    :data:`SQLITE_SIDE_FILES` are not counted again. 0 when the folder does not exist. Files that
    vanish while being counted are skipped.

    Raises:
        StoreError: from ``used_bytes``.
    """
    skip: set[str] = set()
    total = 0
    if used_bytes is not None and database is not None:
        skip = {os.fspath(database)} | {os.fspath(database) + suffix for suffix in SQLITE_SIDE_FILES}
        if database.exists():
            total += used_bytes()
    for folder, _, names in os.walk(index_dir):
        for name in names:
            path = os.path.join(folder, name)
            if path in skip:
                continue
            try:
                total += os.lstat(path).st_size
            except OSError:
                continue
    return total


def free_disk(path: Path) -> int:
    """Free bytes for an unprivileged user on the file system holding ``path`` (or its nearest
    existing parent: the index folder may not exist before the first run); ``shutil.disk_usage``.

    Raises:
        OSError: no parent of ``path`` can be looked at.
    """
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return shutil.disk_usage(probe).free
