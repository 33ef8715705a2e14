"""In-memory fakes of every port, for unit tests here and for users of the Python API in theirs.

They follow the same contracts as the real adapters (``tests/contract`` runs both), with simpler
internals: no ignore files, no charset detection, term-frequency ranking instead of BM25.
"""

from __future__ import annotations

import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from hermes_workspace.domain.catalog import DoctorCheck, Tombstone
from hermes_workspace.adapters.progress_sinks import CallbackProgressSink, NullProgressSink  # noqa: F401 - re-exported
from hermes_workspace.domain.chunking import build_chunks
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.globs import PathGlob, compile_glob
from hermes_workspace.domain.constants import BINARY_SUFFIXES
from hermes_workspace.domain.conversion import DocumentBuilder, plain_line
from hermes_workspace.domain.errors import (
    BinaryContentError,
    ConversionError,
    NoTextLayerError,
    DecodeError,
    HandleExpiredError,
    HandleNotFoundError,
    IndexBusyError,
    RerankTimeoutError,
    StoreError,
)
from hermes_workspace.domain.exclusions import excluded_path
from hermes_workspace.domain.history import HistoryMatch, HostMessage, HostProject, HostSession, MessageChunk, SessionStat
from hermes_workspace.domain.model import (
    ChangedScope,
    Chunk,
    ConvertedDocument,
    DiscoveryProblem,
    ExcludedPath,
    FileChange,
    FileRecord,
    ResultSet,
    Root,
    RootCounts,
    SearchHit,
    SkippedFile,
    SourceFile,
    StoreStatus,
)
from hermes_workspace.domain.profiles import root_extensions, suffix_of
from hermes_workspace.domain.query import Compound, Query, split_words
from hermes_workspace.domain.semantic import (
    EmbeddingJob,
    Vector,
    VectorStatus,
    chunk_embedding_input,
    cosine,
    embedding_input_version,
    embedding_key,
    unit,
)
from hermes_workspace.domain.text_normalization import cjk_bigrams, normalize_for_search


class InMemoryFileSource:
    """A :class:`~hermes_workspace.domain.ports.FileSource` over ``files`` (absolute path -> bytes).

    Applies the always-on exclusions (each excluded file reported, since there are no folders
    to prune), recursion, the root's profile and extensions, binary suffixes, ``max_file_bytes``
    (or the root's ``max_file_size``) and empty-file skipping like the real source, but no ignore
    rules. ``mtimes`` (ns) default to 1 and may be edited by tests.
    """

    def __init__(
        self, files: dict[Path, bytes] | None = None, *, max_file_bytes: int = 10 * 1024 * 1024,
        convertible: Iterable[str] = (),
    ) -> None:
        self.files: dict[Path, bytes] = dict(files or {})
        self.convertible = frozenset(s.lower() for s in convertible)
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

    def discover(
        self, roots: Sequence[Root]
    ) -> Iterator[SourceFile | SkippedFile | ExcludedPath | DiscoveryProblem]:
        for root in roots:
            if not any(root.path in p.parents for p in self.files):
                yield DiscoveryProblem(root.path, root.path, "FileNotFoundError", "root does not exist")
                continue
            top_level = [p.name for p in self.files if p.parent == root.path]
            allowed = root_extensions(root.profile, root.extensions, top_level)
            cap = self.max_file_bytes if root.max_file_size is None else root.max_file_size
            for path in sorted(self.files):
                if root.path not in path.parents or (not root.recursive and path.parent != root.path):
                    continue
                size = len(self.files[path])
                excluded = _always_excluded(path, root.path)
                if excluded is not None:
                    yield excluded
                elif allowed is not None and suffix_of(path.name) not in allowed:
                    continue
                elif path.suffix.lower() in BINARY_SUFFIXES and path.suffix.lower() not in self.convertible:
                    yield SkippedFile(path, root.path, "binary_suffix")
                elif size > cap:
                    yield SkippedFile(path, root.path, "too_large")
                elif size == 0:
                    yield SkippedFile(path, root.path, "empty")
                else:
                    yield SourceFile(path, root.path, size, self.mtimes.get(path, 1))

    def discover_paths(
        self, roots: Sequence[Root], paths: Iterable[Path]
    ) -> Iterator[SourceFile | SkippedFile | ExcludedPath | DiscoveryProblem | ChangedScope]:
        """:meth:`discover` limited to ``paths`` and what is under them, after one
        :class:`ChangedScope` per path and covering root, as the real source places them (no
        links to resolve here): a non-recursive root covers itself and its direct children, a
        folder holding a root covers the root, a changed ``.hermesignore`` or ``.gitignore``
        stands for its folder. Scans every file (a fake: cost is no concern)."""
        scopes: list[Path] = []
        for given in paths:
            given = Path(given)
            covered = False
            for root in roots:
                target = given
                if given in root.path.parents:
                    target = root.path
                elif given != root.path and root.path not in given.parents:
                    continue
                if target.name in (".hermesignore", ".gitignore") and target != root.path:
                    target = target.parent
                if not root.recursive and target not in (root.path,) and target.parent != root.path:
                    continue
                covered = True
                scopes.append(target)
                yield ChangedScope(given, target)
            if not covered:
                yield ChangedScope(given, None, "outside_roots")
        for item in self.discover(roots):
            if any(item.path == scope or scope in item.path.parents for scope in scopes):
                yield item

    def read_bytes(self, file: SourceFile) -> bytes:
        self.reads.append(file.path)
        if file.path in self.vanish_on_read:
            self.files.pop(file.path, None)
        try:
            return self.files[file.path]
        except KeyError:
            raise FileNotFoundError(2, "No such file or directory", str(file.path)) from None


def _always_excluded(path: Path, root: Path) -> ExcludedPath | None:
    """The :class:`ExcludedPath` for ``path`` when it, or a folder on its way (the root's own
    included), is always excluded (:func:`~hermes_workspace.domain.exclusions.excluded_path`)."""
    category = excluded_path(path.parts[1:], is_dir=False)
    return None if category is None else ExcludedPath(path, root, category)


class Utf8Decoder:
    """A :class:`~hermes_workspace.domain.ports.Decoder` that accepts strict UTF-8 only (a BOM is
    removed); NUL bytes raise :class:`BinaryContentError`, anything else :class:`DecodeError`.
    ``hint`` is accepted and ignored."""

    def decode(self, data: bytes, *, hint: str | None = None) -> str:
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


class LineConverter:
    """A :class:`~hermes_workspace.domain.ports.Converter` for a made-up page format: the bytes
    are UTF-8 text whose pages are separated by form feeds (``\f``); each page becomes its
    lines (a line ``= Title`` becomes the heading ``# Title``) with one ``page`` anchor. A
    document whose pages are all blank raises :class:`NoTextLayerError` (like a scanned PDF), one
    that is not UTF-8 :class:`ConversionError`. ``calls`` records the paths converted;
    ``version`` is part of the signature (change it to simulate a library upgrade)."""

    def __init__(self, name: str = "lines", version: str = "1") -> None:
        self._name = name
        self.version = version
        self.calls: list[Path] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def signature(self) -> str:
        return f"{self._name};version={self.version}"

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        self.calls.append(path)
        try:
            pages = data.decode("utf-8").split("\f")
        except UnicodeDecodeError as exc:
            raise ConversionError(f"{path.name} is not a lines document") from exc
        if not any(page.strip() for page in pages):
            raise NoTextLayerError(f"{path.name} has no text layer on any of its {len(pages)} pages")
        builder = DocumentBuilder()
        for number, page in enumerate(pages, start=1):
            if not page.strip():
                continue
            builder.blank()
            builder.anchor("page", number, str(number))
            for line in page.strip("\n").split("\n"):
                builder.add(f"# {line[2:]}" if line.startswith("= ") else plain_line(line))
        return builder.build()


class InMemoryConversionCache:
    """A :class:`~hermes_workspace.domain.ports.ConversionCache` in a dict; ``gets``/``puts``
    count the calls."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], ConvertedDocument] = {}
        self.gets = 0
        self.puts = 0

    def get(self, content_hash: str, signature: str) -> ConvertedDocument | None:
        self.gets += 1
        return self.entries.get((content_hash, signature))

    def put(self, content_hash: str, signature: str, document: ConvertedDocument) -> None:
        self.puts += 1
        self.entries[(content_hash, signature)] = document

    def prune(self, keep: Iterable[tuple[str, str]]) -> int:
        wanted = set(keep)
        gone = [key for key in self.entries if key not in wanted]
        for key in gone:
            del self.entries[key]
        return len(gone)


@dataclass
class InMemoryIndexStore:
    """A :class:`~hermes_workspace.domain.ports.IndexStore` in dictionaries.

    Ranking is a plain TF-IDF over case-folded words; a compound needs all its parts. Text and query
    words go through :func:`~hermes_workspace.domain.text_normalization.normalize_for_search`, as
    in the SQLite store (an Arabic word matches its other letter forms and article-less form),
    then :func:`~hermes_workspace.domain.text_normalization.cjk_bigrams` (a Chinese word is found
    inside a longer run; unlike the SQLite store, a query word needs all its bigrams, however
    long).
    Good enough to test use cases, not to judge ranking.
    """

    files: dict[Path, tuple[FileRecord, list[Chunk]]] = field(default_factory=dict)
    excluded: dict[str, int] = field(default_factory=dict)
    graves: dict[Path, Tombstone] = field(default_factory=dict)
    last_run: tuple[str, dict[str, int]] | None = None
    roots: dict[Path, RootCounts] = field(default_factory=dict)
    """Per-root counts (:meth:`record_root_counts`)."""
    closed: bool = False
    commits: int = field(default=0, compare=False)
    """Batches committed (see :meth:`batch`)."""
    _batch_depth: int = field(default=0, init=False, repr=False, compare=False)

    def get_file(self, path: Path) -> FileRecord | None:
        entry = self.files.get(path)
        return entry[0] if entry else None

    def file_records(self, *, under: Path | None = None) -> Iterator[FileRecord]:
        records = [record for record, _ in list(self.files.values())]
        if under is not None:
            records = [r for r in records if r.path == under or under in r.path.parents]
        yield from records

    def replace_file(self, record: FileRecord, chunks: Sequence[Chunk]) -> None:
        self.files[record.path] = (replace(record, chunk_count=len(chunks)), list(chunks))

    def file_chunks(self, path: Path) -> list[Chunk]:
        entry = self.files.get(path)
        return sorted(entry[1], key=lambda c: c.index) if entry else []

    def touch_file(self, record: FileRecord) -> None:
        if record.path not in self.files:
            raise StoreError(f"not indexed: {record.path}")
        old, chunks = self.files[record.path]
        self.files[record.path] = (replace(record, chunk_count=len(chunks), encoding=old.encoding), chunks)

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
        snapshot, graves = dict(self.files), dict(self.graves)
        self._batch_depth = 1
        try:
            yield
        except BaseException:
            self.files.clear()
            self.files.update(snapshot)
            self.graves = graves
            raise
        finally:
            self._batch_depth = 0
        self.commits += 1

    def search(
        self,
        query: Query,
        *,
        path_prefix: str | tuple[str, ...] | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        pattern = _compiled(glob)  # a malformed glob fails even for an empty query, as in SQLite
        if query.is_empty:
            return []
        limit = max(1, limit)
        candidates = [
            (record, chunk)
            for record, chunks in self.files.values()
            if _matches_filters(str(record.path), path_prefix, pattern)
            for chunk in chunks
        ]
        texts = [f"{c.content} {c.section or ''} {c.breadcrumb or ''} {' '.join(c.definitions)}" for _, c in candidates]
        scored = [(score, record, chunk) for score, (record, chunk) in zip(_tf_scores(query, texts), candidates)
                  if score > 0]
        return _ranked_hits(scored, limit)

    def status(self) -> StoreStatus:
        return StoreStatus(
            files=len(self.files),
            chunks=sum(len(c) for _, c in self.files.values()),
            size_bytes=0,
            excluded=dict(self.excluded),
            last_indexed_at=None if self.last_run is None else self.last_run[0],
            skipped={} if self.last_run is None else dict(self.last_run[1]),
        )

    def record_exclusions(self, counts: Mapping[str, int]) -> None:
        self.excluded = dict(counts)

    def list_files(
        self, path: Path | None = None, *, recursive: bool = True, limit: int = 100, offset: int = 0
    ) -> tuple[list[FileRecord], int]:
        def wanted(record: FileRecord) -> bool:
            if path is None and recursive:
                return True
            folder = record.root if path is None else path
            if record.path == path:
                return True
            if folder not in record.path.parents:
                return False
            return recursive or record.path.parent == folder

        matching = sorted((r for r, _ in self.files.values() if wanted(r)), key=lambda r: str(r.path))
        start = max(0, offset)
        return matching[start : start + max(1, limit)], len(matching)

    def tombstones(self, *, under: Path | None = None) -> list[Tombstone]:
        return [self.graves[p] for p in sorted(self.graves, key=str)
                if under is None or p == under or under in p.parents]

    def add_tombstones(self, tombstones: Iterable[Tombstone]) -> None:
        self.graves.update((t.path, t) for t in tombstones)

    def remove_tombstones(self, paths: Iterable[Path] | None = None, *, under: Path | None = None) -> int:
        doomed = {p for p in (paths or ()) if p in self.graves}
        if under is not None:
            doomed |= {p for p in self.graves if under in p.parents}
        for p in doomed:
            del self.graves[p]
        return len(doomed)

    def record_run(self, finished_at: str, skipped: Mapping[str, int]) -> None:
        self.last_run = (finished_at, dict(skipped))

    def record_root_counts(self, counts: Mapping[Path, RootCounts]) -> None:
        self.roots.update(counts)

    def root_counts(self) -> dict[Path, RootCounts]:
        return dict(self.roots)

    def check_integrity(self) -> list[DoctorCheck]:
        """Dictionaries cannot be damaged: every check passes."""
        return [
            DoctorCheck("sqlite_integrity", "passed", "in memory"),
            DoctorCheck("fulltext_index", "passed", "in memory"),
            DoctorCheck("schema_version", "passed", "in memory"),
        ]

    def close(self) -> None:
        self.closed = True


def _ranked_hits(scored: list[tuple[float, FileRecord, Chunk]], limit: int) -> list[SearchHit]:
    """The best ``limit`` (at least 1) of ``(score, record, chunk)`` as hits, best first; ties go
    to the path, then the chunk index, so results are deterministic."""
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
            breadcrumb=chunk.breadcrumb,
            definitions=chunk.definitions,
            root=record.root,
            page=chunk.page,
            anchor=chunk.anchor,
        )
        for score, record, chunk in scored[: max(1, limit)]
    ]


def _tf_scores(query: Query, texts: Sequence[str]) -> list[float]:
    """The fakes' ranking of ``texts`` for ``query``, one score per text (0: no match): for each
    query group whose words all occur in a text, term frequency times ``log(1 + n / df)`` of
    each word. Simpler than BM25, with the same ordering on the small corpora of the tests."""
    docs = [_search_words(text) for text in texts]
    n = len(docs) or 1
    scores = []
    for words in docs:
        score = 0.0
        for group in query.groups:
            parts = [w for p in (group.parts if isinstance(group, Compound) else (group,)) for w in _search_words(p)]
            if not parts or not all(p in words for p in parts):
                continue
            for p in parts:
                df = sum(1 for w in docs if p in w)
                score += words.count(p) * math.log(1 + n / df)
        scores.append(score)
    return scores


def _search_words(text: str) -> list[str]:
    """The case-folded words of ``text`` as the fake store matches them."""
    return [w.casefold() for w in split_words(cjk_bigrams(normalize_for_search(text)))]


def _compiled(glob: str | None) -> PathGlob | None:
    """``glob`` compiled by the domain's matcher, the one the SQLite adapters call from SQL.

    Raises:
        UsageError: ``glob`` is malformed or empty.
    """
    return None if glob is None else compile_glob(glob)


def _matches_filters(path: str, path_prefix: str | tuple[str, ...] | None, glob: PathGlob | None) -> bool:
    if isinstance(path_prefix, tuple):
        if not any(path.startswith(p) for p in path_prefix):
            return False
    elif path_prefix and not path.startswith(path_prefix):
        return False
    return glob is None or glob.matches(path)


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
        """As the YAML repository: a ``primary`` root in ``roots`` sets ``workspace_name``."""
        for primary in (r for r in roots if r.primary):
            self.config = replace(self.config, workspace_name=primary.name)
        self.config = self.config.with_roots(tuple(r for r in roots if not r.primary))
        self.saves += 1

    def update_roots(self, change: Callable[[WorkspaceConfig], tuple[Root, ...] | None]) -> None:
        roots = change(self.config)
        if roots is not None:
            self.save_roots(roots)


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


class HashEmbedder:
    """A :class:`~hermes_workspace.domain.ports.Embedder` without a model: each word (case-folded,
    crudely stemmed by dropping a trailing ``s``) is hashed to a few of ``dimensions`` slots and a
    text's vector is the unit-length sum, so texts sharing words are near. ``synonyms`` maps a
    word to another whose slots it takes (``{"undo": "rollback"}``), to test paraphrase recall.

    ``coverage`` is the share of letters that are ASCII (an "English-only model"). Counters:
    ``documents_embedded`` (texts passed to :meth:`embed_documents`), ``queries_embedded``.
    ``fail`` (an exception) is raised by every embed call while set, after nothing was done.
    """

    def __init__(
        self,
        *,
        dimensions: int = 64,
        name: str = "hash",
        synonyms: dict[str, str] | None = None,
        max_input_tokens: int = 256,
    ) -> None:
        self._dimensions = dimensions
        self.name = name
        self.synonyms = dict(synonyms or {})
        self._max_input_tokens = max_input_tokens
        self.documents_embedded = 0
        self.queries_embedded = 0
        self.calls: list[list[str]] = []
        self.fail: Exception | None = None

    @property
    def signature(self) -> str:
        return f"hash:{self.name}:{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def max_input_tokens(self) -> int:
        return self._max_input_tokens

    def _vector(self, text: str) -> Vector:
        import hashlib

        values = [0.0] * self._dimensions
        for word in split_words(text.casefold()):
            word = self.synonyms.get(word, word)
            if len(word) > 3 and word.endswith("s"):
                word = word[:-1]
            digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=9).digest()
            for i in range(0, 9, 3):
                slot = int.from_bytes(digest[i : i + 2], "little") % self._dimensions
                values[slot] += 1.0 if digest[i + 2] % 2 else -1.0
        return unit(values)

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        if self.fail is not None:
            raise self.fail
        self.calls.append(list(texts))
        self.documents_embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> Vector:
        if self.fail is not None:
            raise self.fail
        self.queries_embedded += 1
        return self._vector(text)

    def coverage(self, text: str) -> float:
        letters = [ch for ch in text if ch.isalpha()]
        if not letters:
            return 1.0
        return sum(1 for ch in letters if ch.isascii()) / len(letters)


class InMemoryVectorIndex:
    """A :class:`~hermes_workspace.domain.ports.VectorIndex` over the chunks of an
    :class:`InMemoryIndexStore`, with exact cosine search. A chunk is identified by its file,
    index and content, so a replaced chunk is pending again, as in the SQLite index.
    ``code_header``: as :class:`~hermes_workspace.adapters.sqlite_vec_index.SqliteVecIndex`'s."""

    def __init__(self, store: InMemoryIndexStore, *, code_header: bool = False) -> None:
        self.code_header = code_header
        self.store = store
        self.signature: str | None = None
        self.dimensions: int | None = None
        self.input_version: str | None = None
        """:func:`~hermes_workspace.domain.semantic.embedding_input_version` of the stored vectors."""
        self.vectors: dict[str, Vector] = {}
        self._attached: dict[tuple[Path, int, str], str | None] = {}
        self._ids: dict[tuple[Path, int, str], int] = {}
        self._by_id: dict[int, tuple[Path, int, str]] = {}
        self.last_error: dict[str, object] | None = None

    def record_failure(self, error: dict[str, object] | None) -> None:
        self.last_error = dict(error) if error is not None else None

    def pending_by_root(self) -> dict[Path, int]:
        counts: dict[Path, int] = {}
        for record, _, ident in self._chunks():
            if ident not in self._attached:
                counts[record.root] = counts.get(record.root, 0) + 1
        return counts

    def _chunks(self) -> Iterator[tuple[FileRecord, Chunk, tuple[Path, int, str]]]:
        for record, chunks in list(self.store.files.values()):
            for chunk in chunks:
                yield record, chunk, (record.path, chunk.index, chunk.content)

    def _id(self, ident: tuple[Path, int, str]) -> int:
        if ident not in self._ids:
            self._ids[ident] = len(self._ids) + 1
            self._by_id[self._ids[ident]] = ident
        return self._ids[ident]

    def prepare(self, signature: str, dimensions: int) -> bool:
        version = embedding_input_version(self.code_header)
        if (self.signature, self.dimensions, self.input_version) == (signature, dimensions, version):
            return False
        dropped = self.signature is not None
        self.signature, self.dimensions, self.input_version = signature, dimensions, version
        self.vectors.clear()
        self._attached.clear()
        return dropped

    def pending(self, limit: int) -> list[EmbeddingJob]:
        jobs: list[EmbeddingJob] = []
        if limit < 1:
            return jobs
        for record, chunk, ident in self._chunks():
            if ident in self._attached:
                continue
            text = chunk_embedding_input(
                chunk.breadcrumb or chunk.section, chunk.content, path=record.path.as_posix(),
                root=record.root.as_posix(), start_line=chunk.line_start, end_line=chunk.line_end,
                code_header=self.code_header,
            )
            jobs.append(EmbeddingJob(chunk_id=self._id(ident), text=text, key=embedding_key(text)))
            if len(jobs) >= limit:
                break
        return jobs

    def attach_known(self, jobs: Sequence[EmbeddingJob]) -> list[EmbeddingJob]:
        rest = []
        for job in jobs:
            if job.key in self.vectors:
                self._attached[self._by_id[job.chunk_id]] = job.key
            else:
                rest.append(job)
        return rest

    def add(self, items: Sequence[tuple[EmbeddingJob, Vector | None]]) -> None:
        for _, vector in items:
            if vector is not None and len(vector) != self.dimensions:
                raise StoreError(f"vector of {len(vector)} dimensions, the index holds {self.dimensions}")
        for job, vector in items:
            if vector is not None:
                self.vectors[job.key] = vector
                self._attached[self._by_id[job.chunk_id]] = job.key
            else:
                self._attached[self._by_id[job.chunk_id]] = None

    def search(
        self,
        vector: Vector,
        *,
        path_prefix: str | tuple[str, ...] | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        pattern = _compiled(glob)
        scored = []
        for record, chunk, ident in self._chunks():
            key = self._attached.get(ident)
            if key is None or not _matches_filters(str(record.path), path_prefix, pattern):
                continue
            scored.append((cosine(vector, self.vectors[key]), record, chunk))
        return _ranked_hits(scored, limit)

    def prune(self) -> int:
        live = {ident for *_, ident in self._chunks()}
        for ident in [i for i in self._attached if i not in live]:
            del self._attached[ident]
        used = {key for key in self._attached.values() if key is not None}
        unused = [key for key in self.vectors if key not in used]
        for key in unused:
            del self.vectors[key]
        return len(unused)

    def status(self) -> VectorStatus:
        live = [ident for *_, ident in self._chunks()]
        embedded = sum(1 for i in live if self._attached.get(i) is not None)
        unreadable = sum(1 for i in live if i in self._attached and self._attached[i] is None)
        return VectorStatus(
            chunks=len(live),
            embedded=embedded,
            unreadable=unreadable,
            pending=len(live) - embedded - unreadable,
            vectors=len(self.vectors),
            signature=self.signature,
            last_error=self.last_error,
        )


class ScriptedReranker:
    """A :class:`~hermes_workspace.domain.ports.Reranker` that scores a hit by how many times
    ``favourite`` occurs in its content (case-insensitive), after sleeping ``delay`` seconds; it
    raises :class:`RerankTimeoutError` if the deadline passed meanwhile, or ``fail`` if set."""

    def __init__(self, favourite: str = "", *, delay: float = 0.0, fail: Exception | None = None) -> None:
        self.favourite = favourite.casefold()
        self.delay = delay
        self.fail = fail
        self.calls = 0

    @property
    def name(self) -> str:
        return f"scripted:{self.favourite}"

    def rerank(self, query: str, hits: Sequence[SearchHit], *, deadline: float) -> list[float]:
        import time

        self.calls += 1
        if self.fail is not None:
            raise self.fail
        if self.delay:
            time.sleep(self.delay)
        if time.monotonic() > deadline:
            raise RerankTimeoutError("the scripted reranker missed its deadline")
        return [float(h.content.casefold().count(self.favourite)) if self.favourite else 0.0 for h in hits]


@dataclass
class InMemoryResultSets:
    """A :class:`~hermes_workspace.domain.ports.ResultSetStore` in a dictionary: random 8-hex ids,
    ``ttl_seconds`` of life (24 h by default), at most ``max_sets`` live sets (the oldest are
    evicted first). Evicted and expired ids are remembered, so loading one raises
    :class:`HandleExpiredError` rather than :class:`HandleNotFoundError`. ``clock``: Unix seconds,
    replaceable in tests."""

    ttl_seconds: float = 24 * 3600.0
    max_sets: int = 200
    clock: Callable[[], float] = field(default=time.time)
    sets: dict[str, ResultSet] = field(default_factory=dict)
    expired: set[str] = field(default_factory=set)

    def save(self, kind: str, query: str, options: Mapping[str, Any], hits: Sequence[SearchHit]) -> ResultSet:
        """Freeze ``hits`` under a fresh id (see the port)."""
        now = self.clock()
        for set_id in [s.set_id for s in self.sets.values() if s.expires_at <= now]:
            self._evict(set_id)
        while len(self.sets) >= self.max_sets:
            self._evict(min(self.sets.values(), key=lambda s: s.created_at).set_id)
        set_id = secrets.token_hex(4)
        while set_id in self.sets or set_id in self.expired:
            set_id = secrets.token_hex(4)
        saved = ResultSet(set_id, kind, query, dict(options), tuple(hits), now, now + self.ttl_seconds)
        self.sets[set_id] = saved
        return saved

    def load(self, set_id: str) -> ResultSet:
        """The set ``set_id``; raises HandleExpiredError or HandleNotFoundError (see the port)."""
        saved = self.sets.get(set_id)
        if saved is not None and saved.expires_at <= self.clock():
            self._evict(set_id)
            saved = None
        if saved is not None:
            return saved
        if set_id in self.expired:
            raise HandleExpiredError(f"result set {set_id} has expired")
        raise HandleNotFoundError(f"no result set {set_id} in this index")

    def _evict(self, set_id: str) -> None:
        del self.sets[set_id]
        self.expired.add(set_id)


@dataclass
class WhitespaceTokenCounter:
    """A :class:`~hermes_workspace.domain.ports.TokenCounter` for tests: one token per run of
    non-space characters. Not a model's tokenizer: real budgets use
    :class:`~hermes_workspace.adapters.tiktoken_counter.TiktokenCounter`."""

    name: str = "whitespace"

    def count(self, text: str) -> int:
        """Runs of non-whitespace characters in ``text``."""
        return len(text.split())


class ScriptedChangeFeed:
    """A :class:`~hermes_workspace.domain.ports.ChangeFeed` that plays a script: each step is a
    batch (a list of :class:`FileChange`; an empty list is a timeout tick) or a callable
    returning one (it may advance a test's clock, edit files, set the stop signal or raise).
    The script runs on across restarts (:meth:`batches` called again after the roots changed);
    when it is played out the feed ends, as a real one does only when stopped. ``calls``
    records the roots of every :meth:`batches` call; ``timeouts`` the timeout each asked for."""

    def __init__(self, steps: Iterable[list[FileChange] | Callable[[], list[FileChange]]]) -> None:
        self._steps = iter(steps)
        self.calls: list[list[Root]] = []
        self.timeouts: list[float] = []

    def batches(self, roots: Sequence[Root], stop: Any, *, timeout_seconds: float) -> Iterator[list[FileChange]]:
        self.calls.append(list(roots))
        self.timeouts.append(timeout_seconds)
        for step in self._steps:
            if stop.is_set():
                return
            yield list(step() if callable(step) else step)


class InMemoryTimeMark:
    """A :class:`~hermes_workspace.domain.ports.TimeMark` on ``clock`` (seconds; default
    ``time.time``); ``touches`` counts the times it was set."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._at: float | None = None
        self.touches = 0

    def age_seconds(self) -> float | None:
        return None if self._at is None else max(0.0, self._clock() - self._at)

    def touch(self) -> bool:
        self._at = self._clock()
        self.touches += 1
        return True


class InMemorySessionHistory:
    """A :class:`~hermes_workspace.domain.ports.SessionHistory` over lists the test edits as the
    host would: ``projects``, ``sessions`` (by id) and ``rows`` (messages, any order). ``reads``
    counts :meth:`messages` calls; ``unavailable`` (an exception) is raised by every call while set."""

    def __init__(
        self,
        projects: Iterable[HostProject] = (),
        sessions: Iterable[HostSession] = (),
        messages: Iterable[HostMessage] = (),
        *,
        name: str = "memory",
    ) -> None:
        self.project_rows: list[HostProject] = list(projects)
        self.session_rows: dict[str, HostSession] = {s.id: s for s in sessions}
        self.rows: list[HostMessage] = list(messages)
        self.name = name
        self.reads = 0
        self.unavailable: Exception | None = None

    def _check(self) -> None:
        if self.unavailable is not None:
            raise self.unavailable

    @property
    def signature(self) -> str:
        return f"memory:{self.name}"

    def projects(self) -> list[HostProject]:
        self._check()
        return list(self.project_rows)

    def sessions(self) -> list[HostSession]:
        self._check()
        return list(self.session_rows.values())

    def add(self, *messages: HostMessage) -> None:
        """Append messages (the host writing)."""
        self.rows.extend(messages)

    def move(self, session_id: str, *, cwd: str | None, git_root: str | None = None,
             project_id: str | None = None) -> None:
        """Change a session's location (the host's ``workspace.move``)."""
        self.session_rows[session_id] = replace(
            self.session_rows[session_id], cwd=cwd, git_root=git_root, project_id=project_id)

    def _of(self, session_id: str, roles: Sequence[str]) -> list[HostMessage]:
        return sorted((m for m in self.rows if m.session_id == session_id and (not roles or m.role in roles)),
                      key=lambda m: m.id)

    def change_token(self) -> object | None:
        """A digest of everything held: tests edit the lists directly, as the host would."""
        self._check()
        return hash((tuple(self.project_rows), tuple(self.session_rows.items()), tuple(self.rows)))

    def session_stats(self, roles: Sequence[str]) -> dict[str, SessionStat]:
        self._check()
        stats: dict[str, SessionStat] = {}
        for session_id in sorted({m.session_id for m in self.rows}):
            rows = self._of(session_id, roles)
            if rows:
                stats[session_id] = SessionStat(len(rows), max(m.id for m in rows), sum(len(m.content) for m in rows))
        return stats

    def messages(self, session_id: str, roles: Sequence[str]) -> list[HostMessage]:
        self._check()
        self.reads += 1
        return self._of(session_id, roles)

    def window(self, session_id: str, message_id: int, before: int, after: int,
               roles: Sequence[str] = ()) -> list[HostMessage]:
        self._check()
        rows = self._of(session_id, ())
        itself = [m for m in rows if m.id == message_id]
        rows = [m for m in self._of(session_id, roles) if m.content.strip()]
        earlier = [m for m in rows if m.id < message_id][-before:] if before > 0 else []
        later = [m for m in rows if m.id > message_id][:after] if after > 0 else []
        return earlier + itself + later

    def close(self) -> None:
        pass


class InMemoryHistoryIndex:
    """A :class:`~hermes_workspace.domain.ports.HistoryIndex` in dictionaries; term-frequency
    ranking instead of BM25, exact cosine for vectors."""

    def __init__(self) -> None:
        self._source: str | None = None
        self.stats: dict[str, SessionStat] = {}
        self.chunks: dict[str, list[MessageChunk]] = {}
        self.vectors: dict[tuple[str, int, int], tuple[str, str, Vector | None]] = {}
        self._vector_signature: str | None = None

    @property
    def source(self) -> str | None:
        return self._source

    def reset(self, source: str) -> None:
        self._source = source
        self._vector_signature = None
        self.stats.clear()
        self.chunks.clear()
        self.vectors.clear()

    def session_stats(self) -> dict[str, SessionStat]:
        return dict(self.stats)

    def replace_session(self, session_id: str, stat: SessionStat, chunks: Sequence[MessageChunk]) -> None:
        keys = [(c.session_id, c.message_id, c.offset) for c in chunks]
        if any(k[0] != session_id for k in keys):
            raise StoreError(f"a chunk of another session was given for session {session_id!r}")
        if len(set(keys)) != len(keys):
            raise StoreError(f"two chunks of session {session_id!r} have the same message id and offset")
        kept = {(c.message_id, c.offset, c.content_hash) for c in chunks}
        for key in [k for k, (_, h, _) in self.vectors.items() if k[0] == session_id]:
            if (key[1], key[2], self.vectors[key][1]) not in kept:
                del self.vectors[key]
        self.stats[session_id] = stat
        self.chunks[session_id] = list(chunks)

    def delete_sessions(self, session_ids: Iterable[str]) -> int:
        removed = 0
        for session_id in set(session_ids):
            if session_id in self.stats or session_id in self.chunks:
                removed += 1
            self.stats.pop(session_id, None)
            self.chunks.pop(session_id, None)
            for key in [k for k in self.vectors if k[0] == session_id]:
                del self.vectors[key]
        return removed

    def _scoped(self, session_ids: Sequence[str]) -> list[MessageChunk]:
        wanted = set(session_ids)
        return [c for s, chunks in self.chunks.items() if s in wanted for c in chunks]

    def keyword_search(self, query: Query, session_ids: Sequence[str], limit: int) -> list[HistoryMatch]:
        if query.is_empty or not session_ids:
            return []
        chunks = self._scoped(session_ids)
        scored = [(score, chunk) for score, chunk in zip(_tf_scores(query, [c.content for c in chunks]), chunks)
                  if score > 0]
        scored.sort(key=lambda item: (-item[0], item[1].key))
        return [_history_match(c, s) for s, c in scored[: max(1, limit)]]

    def pending(self, signature: str, session_ids: Sequence[str], limit: int) -> list[MessageChunk]:
        out: list[MessageChunk] = []
        if limit < 1:
            return out
        for chunk in sorted(self._scoped(session_ids), key=lambda c: c.key):
            stored = self.vectors.get(chunk.key)
            if stored is None or stored[0] != signature or stored[1] != chunk.content_hash:
                out.append(chunk)
            if len(out) >= limit:
                break
        return out

    def add_vectors(self, signature: str, items: Sequence[tuple[MessageChunk, Vector | None]]) -> None:
        same = {k: v for k, v in self.vectors.items() if v[0] == signature}
        lengths = {len(v) for _, v in items if v is not None} | {len(v) for _, _, v in same.values() if v is not None}
        if len(lengths) > 1 or 0 in lengths:  # refused before anything changes
            raise StoreError(f"vectors of one model differ in length: {sorted(lengths)}")
        self.vectors = same
        self._vector_signature = signature
        current = {c.key: c.content_hash for cs in self.chunks.values() for c in cs}
        for chunk, vector in items:
            if current.get(chunk.key) == chunk.content_hash:  # else the chunk changed or went since pending()
                self.vectors[chunk.key] = (signature, chunk.content_hash, vector)

    def vector_search(self, signature: str, vector: Vector, session_ids: Sequence[str], limit: int) -> list[HistoryMatch]:
        lengths = {len(v) for sig, _, v in self.vectors.values() if sig == signature and v is not None}
        if lengths and lengths != {len(vector)}:
            raise StoreError(f"query vector of {len(vector)} dimensions, the index holds {sorted(lengths)}")
        scored = []
        for chunk in self._scoped(session_ids):
            stored = self.vectors.get(chunk.key)
            if stored is None or stored[0] != signature or stored[2] is None:
                continue
            scored.append((sum(a * b for a, b in zip(vector, stored[2])), chunk))
        scored.sort(key=lambda item: (-item[0], item[1].key))
        return [_history_match(c, s) for s, c in scored[: max(1, limit)]]

    @property
    def vector_signature(self) -> str | None:
        return self._vector_signature

    def vector_counts(self, signature: str, session_ids: Sequence[str]) -> tuple[int, int]:
        chunks = self._scoped(session_ids)
        done = sum(1 for c in chunks if (v := self.vectors.get(c.key)) is not None and v[0] == signature)
        return done, len(chunks)

    def counts(self) -> dict[str, int]:
        chunks = [c for cs in self.chunks.values() for c in cs]
        return {"sessions": len(self.stats), "messages": len({(c.session_id, c.message_id) for c in chunks}),
                "chunks": len(chunks), "vectors": sum(1 for v in self.vectors.values() if v[2] is not None)}

    def close(self) -> None:
        pass


def _history_match(chunk: MessageChunk, score: float) -> HistoryMatch:
    return HistoryMatch(chunk.session_id, chunk.message_id, chunk.offset, chunk.content, score,
                        chunk.role, chunk.timestamp)


class InMemoryConsentStore:
    """A :class:`~hermes_workspace.domain.ports.ConsentStore` in a dictionary."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str], str] = {}

    def granted(self, service: str, project_id: str) -> bool:
        return (service, project_id) in self.records

    def grant(self, service: str, project_id: str) -> None:
        self.records[(service, project_id)] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def revoke(self, service: str, project_id: str | None = None) -> int:
        keys = [k for k in self.records if k[0] == service and (project_id is None or k[1] == project_id)]
        for key in keys:
            del self.records[key]
        return len(keys)

    def consents(self) -> list[tuple[str, str, str]]:
        return sorted((s, p, at) for (s, p), at in self.records.items())
