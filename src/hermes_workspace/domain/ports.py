"""Ports: the small interfaces the application depends on. No library type crosses them.

Every port has an in-memory fake in :mod:`hermes_workspace.adapters.memory`, and the contract suite
in ``tests/contract`` runs each port against its fake and its real adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.model import (
    Chunk,
    DiscoveryProblem,
    FileRecord,
    Root,
    SearchHit,
    SkippedFile,
    SourceFile,
    StoreStatus,
)
from hermes_workspace.domain.query import Query

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class FileSource(Protocol):
    """Finds candidate files under roots and reads them."""

    def discover(self, roots: Sequence[Root]) -> Iterator[SourceFile | SkippedFile | DiscoveryProblem]:
        """Walk ``roots`` in order, applying each root's ignore rules, the binary suffixes and the
        size cap. Yields a :class:`SourceFile` per candidate, a :class:`SkippedFile` per file left
        out for a countable reason, and a :class:`DiscoveryProblem` per path that could not be
        looked at (a missing root is one, with ``path == root``). Never raises for one bad path."""
        ...

    def read_bytes(self, file: SourceFile) -> bytes:
        """The file's bytes. Raises ``OSError`` (``FileNotFoundError``, ``PermissionError``...)
        if it vanished or became unreadable since discovery."""
        ...


@runtime_checkable
class Decoder(Protocol):
    """Turns file bytes into text without loss."""

    def decode(self, data: bytes) -> str:
        """Decoded text, without a byte-order mark.

        Raises:
            BinaryContentError: the bytes look binary (a NUL byte and no UTF-16/32 BOM).
            DecodeError: no encoding decodes them with enough confidence.
        """
        ...


@runtime_checkable
class Chunker(Protocol):
    """Splits one file's text into chunks (offsets, 1-based lines, section, kind)."""

    @property
    def signature(self) -> str:
        """Name, version and settings; a change re-indexes every file."""
        ...

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        """Chunks of ``text`` (the decoded content of ``path``) in file order, each satisfying
        ``text[c.start_char:c.end_char] == c.content``. Empty for whitespace-only text.

        Raises:
            ChunkingError (or any exception): the caller falls back to its default chunker.
        """
        ...


@runtime_checkable
class IndexStore(Protocol):
    """Persistence of files and chunks, and lexical search over them."""

    def get_file(self, path: Path) -> FileRecord | None:
        """The record of an indexed file, or ``None``."""
        ...

    def file_records(self) -> Iterator[FileRecord]:
        """Every indexed file's record."""
        ...

    def replace_file(self, record: FileRecord, chunks: Sequence[Chunk]) -> None:
        """Atomically replace everything stored for ``record.path`` with ``record`` and
        ``chunks``: a concurrent search sees the old version or the new one, never a mix."""
        ...

    def touch_file(self, record: FileRecord) -> None:
        """Update the record (mtime, size) of a file whose content did not change.

        Raises:
            StoreError: the file is not indexed, or the database failed.
        """
        ...

    def delete_files(self, paths: Iterable[Path]) -> int:
        """Remove files and their chunks; returns how many were indexed."""
        ...

    def batch(self) -> AbstractContextManager[None]:
        """A context that groups the writes made inside it (``replace_file``, ``touch_file``,
        ``delete_files``) into one transaction, committed when the context exits normally and
        rolled back whole when it exits by an exception. Each write inside stays all-or-nothing
        on its own: one that raises leaves nothing behind and the writes before it stay in the
        batch. Records read through this store (``get_file``, ``file_records``) show the batch's
        writes at once, ``search`` may not before the commit; a concurrent search sees them only
        after the commit, each file whole. Nested batches join the outermost one.

        Raises:
            StoreError: on entry (the write lock could not be had), or on exit (the commit
                failed, or the transaction was lost to an earlier failure: nothing of the batch
                is stored then).
        """
        ...

    def search(
        self,
        query: Query,
        *,
        path_prefix: str | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """Ranked hits, best first, at most ``limit`` (>= 1). ``path_prefix`` is a literal prefix
        of the absolute path (``%`` and ``_`` are not wildcards); ``glob`` matches the file name,
        or the whole absolute path when it contains ``/``. Filters apply before the top-k cut.
        An empty query gives an empty list."""
        ...

    def status(self) -> StoreStatus:
        """Counts of files and chunks and the size on disk."""
        ...

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...


@runtime_checkable
class TaskPool(Protocol):
    """Runs one function over a stream of items in worker processes, for the CPU-bound part of
    indexing (read, decode, chunk); results come back in item order, to a single consumer."""

    @property
    def workers(self) -> int:
        """How many items are worked on at once (>= 1)."""
        ...

    def map_ordered(self, fn: Callable[[S, T], R], setup: Callable[[], S], items: Iterable[T]) -> Iterator[R]:
        """``fn(state, item)`` for each of ``items``, yielded in the order of ``items``, where
        ``state = setup()`` is built once per worker (so workers build their own adapters).
        ``fn``, ``setup``, the items and the results may cross a process boundary: they must be
        picklable (module-level functions, ``functools.partial`` of them, plain data).

        Items are pulled lazily and at most a bounded number (a small multiple of
        :attr:`workers`) are in flight, so memory does not grow with the stream. Closing the
        iterator early (or an exception in the consumer) cancels the pending work.

        Raises (from the iterator): an exception ``fn`` raised for an item, at that item; any
        other exception when the pool itself fails (a worker died, processes cannot be
        started): the results yielded before it are valid, the rest was not computed.
        """
        ...


@runtime_checkable
class ConfigRepository(Protocol):
    """Loads and saves the workspace configuration."""

    def load(self) -> WorkspaceConfig:
        """The validated configuration (defaults when there is no file).

        Raises:
            ConfigError: the file is not valid YAML or a value is invalid.
        """
        ...

    def save_roots(self, roots: tuple[Root, ...]) -> None:
        """Write ``knowledgebase.roots``, keeping every other key and the user's comments."""
        ...


@runtime_checkable
class ProgressSink(Protocol):
    """Receives per-file progress of an index run."""

    def start(self, total: int) -> None:
        """The run will look at ``total`` candidate files."""
        ...

    def advance(self, position: int, total: int, path: Path) -> None:
        """File number ``position`` (1-based) of ``total`` is being processed."""
        ...

    def finish(self) -> None:
        """The run ended (normally or not)."""
        ...


@runtime_checkable
class IndexLock(Protocol):
    """Keeps index runs on one workspace from overlapping."""

    def hold(self) -> AbstractContextManager[None]:
        """A context holding the lock.

        Raises:
            IndexBusyError: another run holds it.
        """
        ...


@runtime_checkable
class WorkspaceLayout(Protocol):
    """Creates the primary workspace's folders and seeded ignore file."""

    def ensure(self, primary: Path, *, create_folders: bool) -> None:
        """Create ``primary/.index``; with ``create_folders``, also ``docs/ notes/ data/ code/
        uploads/ media/`` and a ``.hermesignore`` holding the default rules, unless one exists
        (a user's file is never overwritten)."""
        ...
