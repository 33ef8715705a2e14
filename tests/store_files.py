"""Builders of hand-made files for the IndexStore tests (contract and adapter-specific), and a
store whose disk fills up."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import apsw

from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.domain.model import Chunk, FileRecord

ROOT = Path("/ws")


def make_file(
    path: str | Path,
    paragraphs: Sequence[str | tuple[str, str | None]],
    *,
    root: Path = ROOT,
    content_hash: str = "hash-1",
    mtime_ns: int = 1,
) -> tuple[FileRecord, list[Chunk]]:
    """A record and consistent chunks for a file whose text is ``paragraphs`` joined by blank
    lines (a paragraph may be ``(content, section)``): offsets, 1-based line ranges and word
    counts all agree with that text."""
    items = [(p, None) if isinstance(p, str) else p for p in paragraphs]
    text = "\n\n".join(content for content, _ in items) + "\n"
    chunks: list[Chunk] = []
    offset = 0
    for index, (content, section) in enumerate(items):
        start = text.index(content, offset)
        end = start + len(content)
        line_start = text.count("\n", 0, start) + 1
        chunks.append(
            Chunk(
                index=index,
                content=content,
                start_char=start,
                end_char=end,
                line_start=line_start,
                line_end=line_start + content.count("\n"),
                tokens=len(content.split()),
                kind="text",
                section=section,
            )
        )
        assert text[start:end] == content
        offset = end
    record = FileRecord(
        path=Path(path),
        root=root,
        content_hash=content_hash,
        config_signature="sig-1",
        size=len(text.encode()),
        mtime_ns=mtime_ns,
        modified_at="2026-04-15T10:32:00Z",
        indexed_at="2026-04-15T11:00:00Z",
    )
    return record, chunks


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
