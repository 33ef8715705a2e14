"""The catalog of an index: what ``list``, ``delete`` and ``doctor`` return, and the tombstones that
keep a deleted file out of later index runs.

Units as in :mod:`hermes_workspace.domain.model`: sizes in bytes, times UTC ISO-8601 strings
ending in ``Z``, ``mtime_ns`` nanoseconds since the epoch (``os.stat``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.domain.model import FileRecord

DELETED_BY_USER = "deleted_by_user"
"""Skip reason of an index run for a file that ``delete`` removed and that has not changed since."""

LIST_MAX_LIMIT = 1000
"""Most files one ``list`` page may ask for (a page is one JSON answer an agent must read)."""

LIST_MAX_OFFSET = 10_000_000
"""Largest ``list`` offset: ten times more files than a workspace index is built for, far below
the 64-bit integers SQLite takes (a larger Python int could not be bound: OverflowError)."""


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A file removed from the index by ``delete``: its absolute ``path`` and the state of its bytes
    on disk when it was deleted (``content_hash`` SHA-256 hex, ``size``, ``mtime_ns``), so that
    indexing can tell "still the deleted file" (skip it) from "changed since" (index it again,
    drop the tombstone). ``deleted_at``: UTC ISO-8601."""

    path: Path
    content_hash: str
    size: int
    mtime_ns: int
    deleted_at: str


def file_entry_json(record: FileRecord) -> dict[str, Any]:
    """One indexed file as ``list`` shows it: ``{"path", "root", "content_hash", "size_bytes",
    "modified_at", "indexed_at", "chunks", "encoding"}`` (``encoding`` is ``null`` for UTF-8)."""
    return {
        "path": str(record.path),
        "root": str(record.root),
        "content_hash": record.content_hash,
        "size_bytes": record.size,
        "modified_at": record.modified_at,
        "indexed_at": record.indexed_at,
        "chunks": record.chunk_count,
        "encoding": record.encoding,
    }


@dataclass(frozen=True, slots=True)
class FileListing:
    """One page of indexed files, sorted by path: ``files`` (at most ``limit``), ``total`` files
    that match the filter, ``offset`` of the first one (0-based), ``next_offset`` for the next page
    (``None`` on the last), the filter ``path`` (``None``: every file) and ``recursive``."""

    files: tuple[FileRecord, ...]
    total: int
    offset: int
    limit: int
    path: Path | None = None
    recursive: bool = True

    @property
    def next_offset(self) -> int | None:
        """``offset + len(files)`` while files remain after this page, else ``None``."""
        end = self.offset + len(self.files)
        return end if end < self.total else None

    def to_json(self) -> dict[str, Any]:
        """``{"path", "recursive", "total", "offset", "limit", "next_offset", "files": [...]}``,
        each file as :func:`file_entry_json`."""
        return {
            "path": None if self.path is None else str(self.path),
            "recursive": self.recursive,
            "total": self.total,
            "offset": self.offset,
            "limit": self.limit,
            "next_offset": self.next_offset,
            "files": [file_entry_json(r) for r in self.files],
        }


DELETE_LISTED_PATHS = 100
"""Paths a :class:`DeleteResult` lists at most (``files_deleted`` has the full count)."""


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """What ``delete`` removed from the index (never from disk): ``path`` as resolved, ``kind``
    ``file`` or ``folder``, ``files_deleted`` and ``chunks_deleted``, ``vectors_pruned`` (``None``
    when the index has no vectors or they could not be reached; they are pruned by the next
    ``index`` then), ``tombstones`` written (files present on disk, kept out of later runs until
    they change), and the first :data:`DELETE_LISTED_PATHS` ``paths``."""

    path: Path
    kind: Literal["file", "folder"]
    files_deleted: int
    chunks_deleted: int
    vectors_pruned: int | None
    tombstones: int
    paths: tuple[Path, ...] = ()

    @property
    def message(self) -> str:
        """One sentence for people and agents."""
        files = f"{self.files_deleted} file{'' if self.files_deleted == 1 else 's'}"
        chunks = f"{self.chunks_deleted} chunk{'' if self.chunks_deleted == 1 else 's'}"
        where = self.path if self.kind == "file" else f"under {self.path}"
        return (
            f"removed {files} ({chunks}) from the index: {where}; the files on disk "
            "are untouched and stay out of the index until they change or their folder is added again "
            "with `roots add`"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"path", "kind", "files_deleted", "chunks_deleted", "vectors_pruned", "tombstones",
        "paths", "paths_truncated", "message"}``."""
        return {
            "path": str(self.path),
            "kind": self.kind,
            "files_deleted": self.files_deleted,
            "chunks_deleted": self.chunks_deleted,
            "vectors_pruned": self.vectors_pruned,
            "tombstones": self.tombstones,
            "paths": [str(p) for p in self.paths[:DELETE_LISTED_PATHS]],
            "paths_truncated": self.files_deleted > min(len(self.paths), DELETE_LISTED_PATHS),
            "message": self.message,
        }


CheckStatus = Literal["passed", "failed", "incomplete"]
"""``passed``: checked and fine; ``failed``: checked and wrong; ``incomplete``: could not be
checked (or only in part), ``detail`` says why."""


@dataclass(frozen=True, slots=True)
class DoctorCheck:
    """One check of ``doctor``: a stable snake_case ``name``, its ``status``, a one-line
    ``detail`` for people and agents, and ``data`` (JSON-able figures: counts, hashes)."""

    name: str
    status: CheckStatus
    detail: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"name", "status", "detail", "data"}``."""
        return {"name": self.name, "status": self.status, "detail": self.detail, "data": dict(self.data)}


DOCTOR_FAILED_EXIT = 1
"""Exit code of ``doctor`` when a check failed (0 when every check passed or was incomplete)."""


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Every check of ``doctor`` in a fixed order, and ``seconds`` of wall time. ``ok`` is True when
    none failed (an incomplete check is not a failure: it could not be done here)."""

    index_path: Path
    checks: tuple[DoctorCheck, ...]
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(c.status != "failed" for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 when :attr:`ok`, else :data:`DOCTOR_FAILED_EXIT`."""
        return 0 if self.ok else DOCTOR_FAILED_EXIT

    def check(self, name: str) -> DoctorCheck:
        """The check called ``name``.

        Raises:
            KeyError: no such check.
        """
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """``{"ok", "index_path", "seconds", "checks": [...]}``, each check as
        :meth:`DoctorCheck.to_json`."""
        return {
            "ok": self.ok,
            "index_path": str(self.index_path),
            "seconds": round(self.seconds, 3),
            "checks": [c.to_json() for c in self.checks],
        }
