"""Builders of hand-made files for the IndexStore tests (contract and adapter-specific), and a
store whose disk fills up."""

from __future__ import annotations

from pathlib import Path

import apsw

from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.testing.files import ROOT, make_file  # noqa: F401 - re-exported for the tests


class FullDiskStore(SqliteFts5Store):
    """A writer whose database may grow by ``headroom_pages`` pages only: ``PRAGMA
    max_page_count`` (it holds for this connection) makes SQLite fail with SQLITE_FULL past
    them, as it does on a full disk. The file must exist (its current size is the base)."""

    def __init__(self, path: Path, *, headroom_pages: int) -> None:
        self.headroom_pages = headroom_pages
        super().__init__(path)

    def _configure_writer(self, conn: apsw.Connection) -> None:
        super()._configure_writer(conn)
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        conn.pragma("max_page_count", pages + self.headroom_pages)


def integrity(path: Path) -> list[tuple[str, ...]]:
    """``PRAGMA integrity_check`` of the SQLite file at ``path`` (``[("ok",)]`` when sound)."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()
