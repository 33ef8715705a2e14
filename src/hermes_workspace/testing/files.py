"""Hand-made files for :class:`~hermes_workspace.domain.ports.IndexStore` tests: a record and
consistent chunks (offsets, 1-based lines and word counts agree with the file's text)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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
