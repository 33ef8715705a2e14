"""In-memory fakes of every port, for unit tests here and for users of the Python API in theirs.

They follow the same contracts as the real adapters (``tests/contract`` runs both), with simpler
internals: no ignore files, no charset detection, term-frequency ranking instead of BM25.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from hermes_workspace.domain.chunking import build_chunks
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.constants import BINARY_SUFFIXES
from hermes_workspace.domain.errors import BinaryContentError, DecodeError, IndexBusyError, StoreError
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
from hermes_workspace.domain.query import Compound, Query, split_words
from hermes_workspace.domain.text_normalization import normalize_for_search


class InMemoryFileSource:
    """A :class:`~hermes_workspace.domain.ports.FileSource` over ``files`` (absolute path -> bytes).

    Applies recursion, binary suffixes, ``max_file_bytes`` and empty-file skipping like the real
    source, but no ignore rules. ``mtimes`` (ns) default to 1 and may be edited by tests.
    """

    def __init__(self, files: dict[Path, bytes] | None = None, *, max_file_bytes: int = 10 * 1024 * 1024) -> None:
        self.files: dict[Path, bytes] = dict(files or {})
        self.mtimes: dict[Path, int] = {}
        self.max_file_bytes = max_file_bytes
        self.reads: list[Path] = []
        self.vanish_on_read: set[Path] = set()

    def write(self, path: Path | str, data: bytes | str) -> None:
        """Add or replace a file (``str`` is encoded as UTF-8) and bump its mtime.
        ``vanish_on_read`` holds paths that disappear when read (a file deleted mid-run)."""
        path = Path(path)
        self.files[path] = data.encode() if isinstance(data, str) else data
        self.mtimes[path] = self.mtimes.get(path, 0) + 1

    def discover(self, roots: Sequence[Root]) -> Iterator[SourceFile | SkippedFile | DiscoveryProblem]:
        for root in roots:
            if not any(root.path in p.parents for p in self.files):
                yield DiscoveryProblem(root.path, root.path, "FileNotFoundError", "root does not exist")
                continue
            for path in sorted(self.files):
                if root.path not in path.parents or (not root.recursive and path.parent != root.path):
                    continue
                size = len(self.files[path])
                if path.suffix.lower() in BINARY_SUFFIXES:
                    yield SkippedFile(path, root.path, "binary_suffix")
                elif size > self.max_file_bytes:
                    yield SkippedFile(path, root.path, "too_large")
                elif size == 0:
                    yield SkippedFile(path, root.path, "empty")
                else:
                    yield SourceFile(path, root.path, size, self.mtimes.get(path, 1))

    def read_bytes(self, file: SourceFile) -> bytes:
        self.reads.append(file.path)
        if file.path in self.vanish_on_read:
            self.files.pop(file.path, None)
        try:
            return self.files[file.path]
        except KeyError:
            raise FileNotFoundError(2, "No such file or directory", str(file.path)) from None


class Utf8Decoder:
    """A :class:`~hermes_workspace.domain.ports.Decoder` that accepts strict UTF-8 only (a BOM is
    removed); NUL bytes raise :class:`BinaryContentError`, anything else :class:`DecodeError`."""

    def decode(self, data: bytes) -> str:
        if b"\x00" in data:
            raise BinaryContentError("file contains NUL bytes")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"not UTF-8: {exc.reason} at byte {exc.start}") from exc


class ParagraphChunker:
    """A :class:`~hermes_workspace.domain.ports.Chunker` that cuts at every blank line.

    ``fail_on`` makes it raise for paths whose name matches (to test fallbacks); ``calls`` records
    the paths it was asked to chunk.
    """

    def __init__(self, *, overlap: int = 0, name: str = "paragraph", fail_on: str | None = None) -> None:
        self.overlap = overlap
        self.name = name
        self.fail_on = fail_on
        self.calls: list[Path] = []

    @property
    def signature(self) -> str:
        return f"{self.name}:overlap={self.overlap}"

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        self.calls.append(path)
        if self.fail_on is not None and fnmatchcase(path.name, self.fail_on):
            raise RuntimeError(f"{self.name} chunker failed")
        cuts = []
        pos = text.find("\n\n")
        while pos != -1:
            cuts.append(pos + 2)
            pos = text.find("\n\n", pos + 2)
        return build_chunks(text, cuts, kind="text", overlap=self.overlap)


@dataclass
class InMemoryIndexStore:
    """A :class:`~hermes_workspace.domain.ports.IndexStore` in dictionaries.

    Ranking is a plain TF-IDF over case-folded words; a compound needs all its parts. Text and query
    words go through :func:`~hermes_workspace.domain.text_normalization.normalize_for_search`, as
    in the SQLite store (an Arabic word matches its other letter forms and article-less form).
    Good enough to test use cases, not to judge ranking.
    """

    files: dict[Path, tuple[FileRecord, list[Chunk]]] = field(default_factory=dict)
    closed: bool = False
    commits: int = field(default=0, compare=False)
    """Batches committed (see :meth:`batch`)."""
    _batch_depth: int = field(default=0, init=False, repr=False, compare=False)

    def get_file(self, path: Path) -> FileRecord | None:
        entry = self.files.get(path)
        return entry[0] if entry else None

    def file_records(self) -> Iterator[FileRecord]:
        yield from (record for record, _ in list(self.files.values()))

    def replace_file(self, record: FileRecord, chunks: Sequence[Chunk]) -> None:
        self.files[record.path] = (replace(record, chunk_count=len(chunks)), list(chunks))

    def touch_file(self, record: FileRecord) -> None:
        if record.path not in self.files:
            raise StoreError(f"not indexed: {record.path}")
        _, chunks = self.files[record.path]
        self.files[record.path] = (replace(record, chunk_count=len(chunks)), chunks)

    def delete_files(self, paths: Iterable[Path]) -> int:
        return sum(1 for p in list(paths) if self.files.pop(p, None) is not None)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Writes inside are kept on normal exit (``commits`` counts it) and undone on an
        exception; nested batches join the outermost one."""
        if self._batch_depth:
            self._batch_depth += 1
            try:
                yield
            finally:
                self._batch_depth -= 1
            return
        snapshot = dict(self.files)
        self._batch_depth = 1
        try:
            yield
        except BaseException:
            self.files.clear()
            self.files.update(snapshot)
            raise
        finally:
            self._batch_depth = 0
        self.commits += 1

    def search(
        self, query: Query, *, path_prefix: str | None = None, glob: str | None = None, limit: int = 20
    ) -> list[SearchHit]:
        if query.is_empty:
            return []
        limit = max(1, limit)
        candidates = [
            (record, chunk)
            for record, chunks in self.files.values()
            if _matches_filters(str(record.path), path_prefix, glob)
            for chunk in chunks
        ]
        docs = [(r, c, _search_words(f"{c.content} {c.section or ''}")) for r, c in candidates]
        n = len(docs) or 1
        scored: list[tuple[float, FileRecord, Chunk]] = []
        for record, chunk, words in docs:
            score = 0.0
            for group in query.groups:
                parts = [w for p in (group.parts if isinstance(group, Compound) else (group,)) for w in _search_words(p)]
                if not parts or not all(p in words for p in parts):
                    continue
                for p in parts:
                    df = sum(1 for *_, w in docs if p in w)
                    score += words.count(p) * math.log(1 + n / df)
            if score > 0:
                scored.append((score, record, chunk))
        scored.sort(key=lambda t: (-t[0], str(t[1].path), t[2].index))
        return [
            SearchHit(
                path=record.path,
                line_start=chunk.line_start,
                line_end=chunk.line_end,
                section=chunk.section,
                chunk_index=chunk.index,
                score=score,
                tokens=chunk.tokens,
                modified=record.modified_at,
                content=chunk.content,
            )
            for score, record, chunk in scored[:limit]
        ]

    def status(self) -> StoreStatus:
        return StoreStatus(
            files=len(self.files), chunks=sum(len(c) for _, c in self.files.values()), size_bytes=0
        )

    def close(self) -> None:
        self.closed = True


def _search_words(text: str) -> list[str]:
    """The case-folded words of ``text`` as the fake store matches them."""
    return [w.casefold() for w in split_words(normalize_for_search(text))]


def _matches_filters(path: str, path_prefix: str | None, glob: str | None) -> bool:
    if path_prefix and not path.startswith(path_prefix):
        return False
    if glob:
        target = path if "/" in glob else os.path.basename(path)
        if not fnmatchcase(target, glob):
            return False
    return True


class InlineTaskPool:
    """A :class:`~hermes_workspace.domain.ports.TaskPool` that runs everything in this process,
    one ``setup()`` for all items. Like a real pool it works up to ``window`` items ahead of the
    results it has handed out (``fn`` runs early; an exception it raised is re-raised when its
    item's turn comes), so callers are tested against results that lag behind the items they
    feed. ``fail_after`` makes the pool itself fail (``RuntimeError``) once that many results
    were yielded, as when a worker dies. ``setups`` counts ``setup()`` calls, ``items_seen`` the
    items pulled and ``closed`` the runs that ended early (closed or failed)."""

    def __init__(self, *, window: int = 4, fail_after: int | None = None) -> None:
        self.window = max(1, window)
        self.fail_after = fail_after
        self.setups = 0
        self.items_seen = 0
        self.closed = 0

    @property
    def workers(self) -> int:
        return 1

    def map_ordered(self, fn: Callable[[object, object], object], setup: Callable[[], object],
                    items: Iterable[object]) -> Iterator[object]:
        self.setups += 1
        state = setup()
        pending: deque[tuple[bool, object]] = deque()
        source = iter(items)
        exhausted = False
        yielded = 0
        finished = False
        try:
            while True:
                while not exhausted and len(pending) < self.window:
                    try:
                        item = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    self.items_seen += 1
                    try:
                        pending.append((True, fn(state, item)))
                    except BaseException as exc:  # noqa: BLE001 - re-raised at its item's turn, as a pool does
                        pending.append((False, exc))
                if not pending:
                    finished = True
                    return
                if self.fail_after is not None and yielded >= self.fail_after:
                    raise RuntimeError("worker pool broken")
                ok, value = pending.popleft()
                if not ok:
                    raise value  # type: ignore[misc]
                yield value
                yielded += 1
        finally:
            if not finished:
                self.closed += 1


class InMemoryConfigRepository:
    """A :class:`~hermes_workspace.domain.ports.ConfigRepository` holding one
    :class:`WorkspaceConfig`; ``saves`` counts writes."""

    def __init__(self, config: WorkspaceConfig | None = None) -> None:
        self.config = config or WorkspaceConfig()
        self.saves = 0

    def load(self) -> WorkspaceConfig:
        return self.config

    def save_roots(self, roots: tuple[Root, ...]) -> None:
        self.config = self.config.with_roots(roots)
        self.saves += 1


class RecordingProgressSink:
    """A :class:`~hermes_workspace.domain.ports.ProgressSink` that records every event as a tuple:
    ``("start", total)``, ``("advance", position, total, path)``, ``("finish",)``."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def start(self, total: int) -> None:
        self.events.append(("start", total))

    def advance(self, position: int, total: int, path: Path) -> None:
        self.events.append(("advance", position, total, path))

    def finish(self) -> None:
        self.events.append(("finish",))


class InMemoryIndexLock:
    """An :class:`~hermes_workspace.domain.ports.IndexLock` for one process: holding it twice at
    once raises :class:`IndexBusyError`."""

    def __init__(self) -> None:
        self.held = False

    @contextmanager
    def hold(self) -> Iterator[None]:
        if self.held:
            raise IndexBusyError("another index run is in progress on this workspace")
        self.held = True
        try:
            yield
        finally:
            self.held = False


class InMemoryLayout:
    """A :class:`~hermes_workspace.domain.ports.WorkspaceLayout` that records ``ensure`` calls as
    ``(primary, create_folders)`` instead of touching the disk."""

    def __init__(self) -> None:
        self.calls: list[tuple[Path, bool]] = []

    def ensure(self, primary: Path, *, create_folders: bool) -> None:
        self.calls.append((primary, create_folders))


class NullProgressSink:
    """A :class:`~hermes_workspace.domain.ports.ProgressSink` that ignores everything."""

    def start(self, total: int) -> None:
        pass

    def advance(self, position: int, total: int, path: Path) -> None:
        pass

    def finish(self) -> None:
        pass


class CallbackProgressSink:
    """Adapts ``callback(position, total, path)`` (the Python API's ``progress=``) to a sink."""

    def __init__(self, callback: Callable[[int, int, Path], object]) -> None:
        self.callback = callback

    def start(self, total: int) -> None:
        pass

    def advance(self, position: int, total: int, path: Path) -> None:
        self.callback(position, total, path)

    def finish(self) -> None:
        pass
