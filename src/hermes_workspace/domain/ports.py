"""Ports: the small interfaces the application depends on. No library type crosses them.

Every port has an in-memory fake in :mod:`hermes_workspace.adapters.memory`, and the contract suites
(:mod:`hermes_workspace.testing`, run by ``tests/contract``) run each port against its fake and its
real adapters; plugin authors subclass them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from hermes_workspace.domain.catalog import DoctorCheck, Tombstone
from hermes_workspace.domain.config import WorkspaceConfig
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
from hermes_workspace.domain.query import Query
from hermes_workspace.domain.semantic import EmbeddingJob, Vector, VectorStatus

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class FileSource(Protocol):
    """Finds candidate files under roots and reads them."""

    def discover(
        self, roots: Sequence[Root]
    ) -> Iterator[SourceFile | SkippedFile | ExcludedPath | DiscoveryProblem]:
        """Walk ``roots`` in order, applying the always-on exclusions
        (:mod:`hermes_workspace.domain.exclusions`), each root's ignore rules, the extensions it
        indexes (:func:`~hermes_workspace.domain.profiles.root_extensions`, from its top-level file
        names at each call: files of other extensions are left out silently), the binary
        suffixes and the size cap (the root's ``max_file_size``, else the source's). Yields a
        :class:`SourceFile` per candidate, a :class:`SkippedFile` per file left out for a
        countable reason, an :class:`ExcludedPath` per secret,
        version-control or workspace-internal path left out (a folder once, not walked), and a
        :class:`DiscoveryProblem` per path that could not be looked at (a missing root is one,
        with ``path == root``). Never raises for one bad path."""
        ...

    def discover_paths(
        self, roots: Sequence[Root], paths: Iterable[Path]
    ) -> Iterator[SourceFile | SkippedFile | ExcludedPath | DiscoveryProblem | ChangedScope]:
        """For an index run over changed paths (a file watcher's, ``index --path``): first one
        :class:`ChangedScope` per absolute path in ``paths`` and root covering it (one with
        ``path=None`` when no root does), then, root by root, exactly the items :meth:`discover`
        would yield for each scope path and what is under it, judged as the whole walk judges
        them (always-on exclusions, the ignore rules of the root and of every folder on the way,
        recursion, binary suffixes, size cap), without walking anything else. A changed ignore
        file's scope is its folder; a path that no longer exists yields its scope only (the
        caller prunes what the index holds under it). Never raises for one bad path.

        Optional for third-party sources: without it, a changed-paths run walks every root."""
        ...

    def read_bytes(self, file: SourceFile) -> bytes:
        """The file's bytes. Raises ``OSError`` (``FileNotFoundError``, ``PermissionError``...)
        if it vanished or became unreadable since discovery."""
        ...


@runtime_checkable
class Decoder(Protocol):
    """Turns file bytes into text without loss."""

    def decode(self, data: bytes, *, hint: str | None = None) -> str:
        """Decoded text, without a byte-order mark. ``hint``: an encoding name (a Python codec
        alias) the caller expects, e.g. what the other files of the folder were read with; a
        decoder may use it to choose between equally plausible readings, never to accept bytes it
        would otherwise refuse as not text.

        Raises:
            BinaryContentError: the bytes look binary (a NUL byte and no UTF-16/32 BOM).
            AmbiguousEncodingError: several encodings read them equally well (``candidates``);
                the caller may try again with a ``hint`` naming one.
            DecodeError: no encoding decodes them with enough confidence.

        A decoder may also have ``read(data, *, hint=None) -> DecodedText``: the same, with the
        encoding used. It is optional, so decoders written before it keep working; indexing uses
        it to remember each file's legacy encoding as evidence for its ambiguous siblings.
        """
        ...


@runtime_checkable
class Chunker(Protocol):
    """Splits one file's text into chunks (offsets, 1-based lines, section, kind)."""

    @property
    def signature(self) -> str:
        """Name, version and settings; a change re-chunks the files this chunker handles
        (:func:`~hermes_workspace.domain.plugins.file_signatures`)."""
        ...

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        """Chunks of ``text`` (the decoded content of ``path``) in file order, each satisfying
        ``text[c.start_char:c.end_char] == c.content``. Empty for whitespace-only text.

        Raises:
            ChunkingError (or any exception): the caller falls back to its default chunker.
        """
        ...


@runtime_checkable
class Converter(Protocol):
    """Turns a document's bytes (PDF, DOCX, PPTX, XLSX, EPUB...) into markdown text with anchors
    (where each page, slide or sheet starts). No library type crosses this port.

    Adapters import their library when built and raise ``ConverterUnavailableError`` (with the
    install hint) when it is missing; converting must not download anything."""

    @property
    def name(self) -> str:
        """The name ``knowledgebase.converters`` selects it by (``pypdf``, ``python-docx``...)."""
        ...

    @property
    def signature(self) -> str:
        """Name, library version and options: a change re-converts (and re-indexes) the files
        this converter handles, and only those."""
        ...

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        """The document ``data`` (the bytes of ``path``; the path is for messages and format
        hints) as markdown text, anchors in line order; empty text when it holds no text.

        Raises:
            NoTextLayerError: a PDF none of whose pages has extractable text (scanned).
            ConversionError: the library cannot read the document (damaged, encrypted, not
                that format); any other exception is treated the same way by the caller.
        """
        ...


@runtime_checkable
class ConversionCache(Protocol):
    """Converted documents kept by content hash and converter signature, so that re-chunking
    (a chunker or settings change) and verified reads do not convert again. Safe to use from
    several processes at once (index workers); a failure to write is not an error (the next
    use converts again)."""

    def get(self, content_hash: str, signature: str) -> ConvertedDocument | None:
        """The document converted from bytes with SHA-256 ``content_hash`` by the converter with
        ``signature``, or ``None`` (never stored, pruned, or unreadable)."""
        ...

    def put(self, content_hash: str, signature: str, document: ConvertedDocument) -> None:
        """Keep ``document``, replacing any entry for the same key whole (atomically)."""
        ...

    def prune(self, keep: Iterable[tuple[str, str]]) -> int:
        """Remove every entry whose ``(content_hash, signature)`` is not in ``keep``; returns how
        many were removed."""
        ...


@runtime_checkable
class IndexStore(Protocol):
    """Persistence of files and chunks, and lexical search over them."""

    def get_file(self, path: Path) -> FileRecord | None:
        """The record of an indexed file, or ``None``."""
        ...

    def file_records(self, *, under: Path | None = None) -> Iterator[FileRecord]:
        """Every indexed file's record; with ``under``, only the record of the file at ``under``
        and those of the files below the folder ``under`` (a lookup on the path, not a scan:
        an index run over changed paths costs what it changes, not the size of the index)."""
        ...

    def replace_file(self, record: FileRecord, chunks: Sequence[Chunk]) -> None:
        """Atomically replace everything stored for ``record.path`` with ``record`` and
        ``chunks``: a concurrent search sees the old version or the new one, never a mix."""
        ...

    def file_chunks(self, path: Path) -> list[Chunk]:
        """The stored chunks of the file at absolute ``path``, in file order (``index``
        ascending), each with its content, offsets and 1-based lines as indexed; ``[]`` when the
        file is not indexed or has no chunks. ``read PATH:START-END`` rebuilds the indexed text of
        a line range from them when the file changed since.

        Raises:
            StoreError: the database failed.
        """
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
        path_prefix: str | tuple[str, ...] | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """Ranked hits, best first, at most ``limit`` (>= 1). ``path_prefix`` is a literal prefix
        of the absolute path (``%`` and ``_`` are not wildcards), or a tuple of them (a hit
        passes with any one; an empty tuple passes none); ``glob`` is a pattern of
        :mod:`hermes_workspace.domain.globs` (the file name without ``/``; whole segments at the
        end of the path with ``/``; ``**``, ``{a,b}``), applied with
        :func:`~hermes_workspace.domain.globs.compile_glob` so every adapter agrees. Filters
        apply before the top-k cut. An empty query gives an empty list; a malformed or empty
        ``glob`` raises ``UsageError`` (even for an empty query)."""
        ...

    def status(self) -> StoreStatus:
        """Counts of files and chunks, the size on disk, and the exclusions recorded by
        :meth:`record_exclusions` (empty if none)."""
        ...

    def record_exclusions(self, counts: Mapping[str, int]) -> None:
        """Remember the always-on exclusions of the index run that just finished (category ->
        count), replacing the previous run's, for :meth:`status`."""
        ...

    # -- catalog: list, delete with tombstones, run record, integrity (issue 10) --------------

    def list_files(
        self, path: Path | None = None, *, recursive: bool = True, limit: int = 100, offset: int = 0
    ) -> tuple[list[FileRecord], int]:
        """One page of indexed files sorted by absolute path (as stored: code point order), and
        the total that match. ``path`` ``None``: every file; else the file at ``path`` itself, or
        the files under the folder ``path`` (only those directly in it unless ``recursive``).
        ``limit`` >= 1, ``offset`` >= 0 (callers validate); paging happens in the store."""
        ...

    def tombstones(self, *, under: Path | None = None) -> list[Tombstone]:
        """Every tombstone (files removed by ``delete``), sorted by path; with ``under``, only
        the one of the file at ``under`` and those below the folder ``under`` (a lookup)."""
        ...

    def add_tombstones(self, tombstones: Iterable[Tombstone]) -> None:
        """Store tombstones, replacing any for the same path (joins an open :meth:`batch`).

        Raises:
            StoreError: read-only store or database failure.
        """
        ...

    def remove_tombstones(self, paths: Iterable[Path] | None = None, *, under: Path | None = None) -> int:
        """Forget the tombstones of ``paths``, and of every path under the folder ``under``;
        returns how many there were (joins an open :meth:`batch`).

        Raises:
            StoreError: read-only store or database failure.
        """
        ...

    def record_run(self, finished_at: str, skipped: Mapping[str, int]) -> None:
        """Remember when the last index run finished (UTC ISO-8601) and its skipped files by
        reason, for :meth:`status` (``last_indexed_at``, ``skipped``)."""
        ...

    def record_root_counts(self, counts: Mapping[Path, RootCounts]) -> None:
        """Remember, per root folder (``Root.path`` as configured), what the index run that just
        walked it left unsearched (:class:`~hermes_workspace.domain.model.RootCounts`),
        replacing those roots' previous counts and keeping every other root's: a run that
        walks only some roots (or none: an empty mapping) never wipes the others'.

        Raises:
            StoreError: read-only store or database failure.
        """
        ...

    def root_counts(self) -> dict[Path, RootCounts]:
        """Every root's counts as :meth:`record_root_counts` last stored them (``{}`` before the
        first run that recorded any). Cheap: searches call it once to report coverage.

        Raises:
            StoreError: the database failed.
        """
        ...

    def check_integrity(self) -> list[DoctorCheck]:
        """The store's own checks for ``doctor`` (database structure, full-text index, schema
        version), without writing anything. Never raises for a damaged index: that is a
        ``failed`` check."""
        ...

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Texts -> unit-length float32 vectors (:data:`~hermes_workspace.domain.semantic.Vector`).

    Adapters load their model lazily, on the first call that needs it, so building one is cheap
    and a keyword search never pays for it.

    An embedder may also have ``embed_documents_progressively(texts) -> Iterator[list[tuple[int,
    Vector]]]``: the vectors of :meth:`embed_documents`, each text's ``(index, vector)`` yielded
    once, as the model batches finish, so that a caller can store them while the rest is
    computed. It is optional (the embedding pass cuts its work into calls of ``batch_size`` texts
    for embedders without it).
    """

    @property
    def signature(self) -> str:
        """Provider, model identity (name and a digest of its files, or the remote model name),
        dimensions and input handling; stored with the vectors, and a change re-embeds every
        chunk (and only re-embeds: files are not re-chunked)."""
        ...

    @property
    def dimensions(self) -> int:
        """Length of every vector (may load the model to find out).

        Raises:
            EmbedderUnavailableError: the model cannot be loaded."""
        ...

    @property
    def max_input_tokens(self) -> int:
        """Model tokens (word pieces) read per window; longer texts are embedded in windows of
        this size whose vectors are averaged (never silently cut to the first window)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order. Texts longer than :attr:`max_input_tokens` are split
        into overlapping windows and represented by the token-weighted mean of the window vectors
        (:func:`~hermes_workspace.domain.semantic.mean_of_unit_vectors`).

        Raises:
            EmbedderUnavailableError: the model or endpoint cannot be used (missing extra or
                model, network error, bad answer); nothing is half-done.
            ConsentRequiredError: a remote endpoint without the user's consent; nothing was sent.
        """
        ...

    def embed_query(self, text: str) -> Vector:
        """The vector of a search query (models with a query prefix apply it here). Raises as
        :meth:`embed_documents`."""
        ...

    def coverage(self, text: str) -> float:
        """0..1: how much of ``text`` the model's vocabulary reads
        (:func:`~hermes_workspace.domain.semantic.letter_coverage`); 1.0 for models that do not
        expose a tokenizer (remote ones). Cheap: no model call."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Vectors of the chunks of an :class:`IndexStore`, and nearest-neighbour search over them.

    Vectors are stored once per distinct :attr:`EmbeddingJob.key` and attached to every chunk
    with that key; a chunk replaced or deleted in the store loses its attachment with it.
    """

    def prepare(self, signature: str, dimensions: int) -> bool:
        """Make the index hold vectors of this embedder. If it holds vectors of another
        signature (or dimensions), drop them all and return True (every chunk becomes pending);
        else return False.

        Raises:
            StoreError: the database failed.
        """
        ...

    def pending(self, limit: int) -> list[EmbeddingJob]:
        """Up to ``limit`` chunks with no vector and not marked unreadable, in a stable order."""
        ...

    def attach_known(self, jobs: Sequence[EmbeddingJob]) -> list[EmbeddingJob]:
        """Attach the stored vector to each job whose ``key`` already has one; return the other
        jobs (which need the embedder)."""
        ...

    def add(self, items: Sequence[tuple[EmbeddingJob, Vector | None]]) -> None:
        """Store each job's vector under its key and attach it to the chunk, in one transaction;
        ``None`` marks the chunk unreadable by this model (never pending again until the
        signature changes or the chunk is replaced).

        Raises:
            StoreError: the database failed, or a vector has the wrong dimensions.
        """
        ...

    def search(
        self,
        vector: Vector,
        *,
        path_prefix: str | tuple[str, ...] | None = None,
        glob: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """The ``limit`` chunks whose vectors are nearest to ``vector`` (cosine), best first, as
        hits whose ``score`` is the cosine similarity. ``path_prefix`` and ``glob`` mean what they
        mean for :meth:`IndexStore.search` and filter before the top-k cut (exact search, no
        candidates are lost to a filter). Empty when no vector is stored; a malformed or empty
        ``glob`` raises ``UsageError``."""
        ...

    def prune(self) -> int:
        """Delete vectors no chunk uses any more; returns how many."""
        ...

    def pending_by_root(self) -> dict[Path, int]:
        """The chunks :meth:`pending` would list (no vector, not marked unreadable), counted by
        the root folder their file was indexed under (``FileRecord.root``); roots without such
        chunks are absent. For coverage: callers ask only when :meth:`status` has some pending.

        Raises:
            StoreError: the database failed.
        """
        ...

    def record_failure(self, error: dict[str, Any] | None) -> None:
        """Remember why the last embedding pass stopped (``{"code", "message", "hint"}``), or
        forget it (``None``), for :meth:`status` to report to later searches."""
        ...

    def status(self) -> VectorStatus:
        """Counts for ``semantic_status`` (see :class:`VectorStatus`)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Reorders a short list of candidate hits for a query (second-stage ranking)."""

    @property
    def name(self) -> str:
        """Provider and model, reported with reranked results."""
        ...

    def rerank(self, query: str, hits: Sequence[SearchHit], *, deadline: float) -> list[float]:
        """One relevance score per hit (higher is better), in the order of ``hits``.
        ``deadline`` is a :func:`time.monotonic` instant: an adapter that cannot finish by then
        raises :class:`~hermes_workspace.domain.errors.RerankTimeoutError` (the caller keeps the
        fused order).

        Raises:
            RerankTimeoutError: the deadline passed.
            RerankerUnavailableError: the model cannot be loaded or run.
        """
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
        """Write ``knowledgebase.roots`` (each entry's ``name`` as the root's, none for
        ``None``), keeping every other key and the user's comments. A root with ``primary`` set
        is not an entry: its ``name`` is written as ``workspace.name``."""
        ...

    def update_roots(self, change: Callable[[WorkspaceConfig], tuple[Root, ...] | None]) -> None:
        """One edit, atomic against concurrent edits (also from other processes): load the
        config, call ``change`` with it, and write the roots it returns (``None``: no write).
        Nothing is written when ``change`` raises, nor a config that would not load back.

        Raises:
            ConfigError: the config is invalid, or the edit would make it invalid.
            ConfigWriteError: it cannot be written (or locked).
        """
        ...


@runtime_checkable
class ProgressSink(Protocol):
    """Receives per-file progress of an index run, then per-batch progress of its embedding pass
    (``path`` then names the count done, e.g. ``120 of 9662 chunks``). A sink may also have
    ``stage(label: str)``, called before the embedding pass's ``start`` with ``"Embedding"``; it
    is optional, so sinks written before it keep working."""

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
        """Create the index folder (``primary/.index``, or a project config's folder under
        HERMES_HOME/projects); with ``create_folders``, also ``docs/ notes/ data/ code/ uploads/
        media/`` and a ``.hermesignore`` holding the default rules, unless one exists (a user's
        file is never overwritten). A project's primary root (a repository) gets neither."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens a model would see, for budgets (``retrieve --budget``)."""

    @property
    def name(self) -> str:
        """The encoding counted, e.g. ``"o200k_base"``."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text`` (special-token strings such as ``<|endoftext|>`` count as ordinary
        text). Never raises for any ``str``."""
        ...


@runtime_checkable
class ResultSetStore(Protocol):
    """Persists result sets so that handles (``SET:ORDINAL``) and cursors (``SET@OFFSET``) keep
    naming the same hits across processes and restarts, until they expire."""

    def save(self, kind: str, query: str, options: Mapping[str, Any], hits: Sequence[SearchHit]) -> ResultSet:
        """Freeze ``hits`` (rank order) under a fresh random id that no set of this store ever
        had, drop sets past their expiry or beyond the store's size cap (oldest first), and
        return the saved set.

        Raises:
            StoreError: the set cannot be written (read-only index, disk full).
        """
        ...

    def load(self, set_id: str) -> ResultSet:
        """The set ``set_id``.

        Raises:
            HandleNotFoundError: no set ever had that id here.
            HandleExpiredError: it expired or was evicted.
            StoreError: the database failed.
        """
        ...


@runtime_checkable
class StopSignal(Protocol):
    """Something a long-running loop polls to know it must end (``threading.Event`` is one)."""

    def is_set(self) -> bool:
        """True once the loop must end."""
        ...


@runtime_checkable
class ChangeFeed(Protocol):
    """File-system change events under roots, in batches (a file watcher). No library type
    crosses this port: events are :class:`~hermes_workspace.domain.model.FileChange`."""

    def batches(
        self, roots: Sequence[Root], stop: StopSignal, *, timeout_seconds: float
    ) -> Iterator[list[FileChange]]:
        """Watch ``roots`` (a recursive root with its sub-folders, another only the entries
        directly in it) and yield the changes seen, a batch at a time, each batch grouped by the
        feed's own short debounce. An empty batch is yielded when ``timeout_seconds`` pass
        without a change, so that the caller can do its periodic work between events. Ends
        soon (within about ``timeout_seconds``) after ``stop.is_set()`` becomes true, or when
        the caller closes the iterator. A root that does not exist (or is not a folder) when
        its watch is set up is left out and reported as deleted (``FileChange(root,
        "deleted")``): the caller gives only the roots it found, and must learn that one went
        in between; when none is left, only the empty timeout batches come. The first batch
        (possibly empty) comes once the watches are set up: a change after it is reported.

        Raises:
            WorkspaceError: the operating system refuses to watch (e.g. the inotify watch limit
                is reached); the message names the limit and the hint how to raise it.
        """
        ...


@runtime_checkable
class TimeMark(Protocol):
    """A point in time remembered across processes (the last index run of a workspace, for
    ``knowledgebase.auto_index``'s debounce)."""

    def age_seconds(self) -> float | None:
        """Seconds since the mark was last set (never negative), ``None`` when it never was or
        cannot be read."""
        ...

    def touch(self) -> bool:
        """Set the mark to now; False when it cannot be written (read-only folder). Never raises."""
        ...


@runtime_checkable
class SessionHistory(Protocol):
    """A read-only view of another application's session store (issue 13, seed 003): its
    projects, sessions and messages. Implementations never write to the host's files: opened
    read-only, they leave the store's bytes and modification time unchanged, even while the host
    writes to it. Plugins of the ``histories`` category provide it.

    Every method may raise ``HistoryUnavailableError`` (the store is missing, unreadable, or
    lacks a configured table or column; the message names it and the hint the setting).
    """

    @property
    def signature(self) -> str:
        """The store's identity and the schema read (database path, table and column names):
        our derived index is rebuilt when it changes."""
        ...

    def projects(self) -> list[HostProject]:
        """The host's registered projects with their folders (``[]`` when it keeps no registry)."""
        ...

    def sessions(self) -> list[HostSession]:
        """Every session row, as the host holds it now (attribution is decided from these at
        query time)."""
        ...

    def change_token(self) -> object | None:
        """A cheap value that is equal between two calls only when the store certainly did not
        change in between (SQLite: the connection's ``data_version``); ``None`` when the reader
        cannot tell (every sync then compares :meth:`session_stats`)."""
        ...

    def session_stats(self, roles: Sequence[str]) -> dict[str, SessionStat]:
        """The fingerprint of each session's messages of ``roles`` (every role when empty), by
        session id; sessions without such messages are absent. One aggregate query: this is what
        every search runs to pick up new messages."""
        ...

    def messages(self, session_id: str, roles: Sequence[str]) -> list[HostMessage]:
        """The messages of ``roles`` (every role when empty) of one session, by increasing id."""
        ...

    def window(self, session_id: str, message_id: int, before: int, after: int,
               roles: Sequence[str] = ()) -> list[HostMessage]:
        """Up to ``before`` messages of ``roles`` (every role when empty) preceding ``message_id``
        in its session, the message itself when it still exists (whatever its role and content),
        and up to ``after`` following, by increasing id. Neighbours without text (empty or
        whitespace only, ``str.strip``: a turn that only called tools) are skipped, so the ones
        returned are the nearest messages with text."""
        ...

    def close(self) -> None:
        """Release the connection. Idempotent."""
        ...


@runtime_checkable
class HistoryIndex(Protocol):
    """Our own index of a session store's messages (never in the host's files): message chunks
    with a keyword index, and vectors keyed by session id, message id, chunk offset, content hash
    and model signature. Filters by session are applied before every top-k cut."""

    @property
    def source(self) -> str | None:
        """The :attr:`SessionHistory.signature` the index was built from (``None`` when empty)."""
        ...

    def reset(self, source: str) -> None:
        """Drop everything and record ``source`` as what the index is built from."""
        ...

    def session_stats(self) -> dict[str, SessionStat]:
        """The fingerprint each indexed session had when it was last indexed."""
        ...

    def replace_session(self, session_id: str, stat: SessionStat, chunks: Sequence[MessageChunk]) -> None:
        """Replace one session's chunks, in one transaction. Vectors of a chunk whose
        ``(message_id, offset, content_hash)`` is unchanged are kept; the others go.

        Raises:
            StoreError: the database failed (disk full, unwritable).
        """
        ...

    def delete_sessions(self, session_ids: Iterable[str]) -> int:
        """Remove these sessions' chunks and vectors; returns how many sessions were indexed."""
        ...

    def keyword_search(self, query: Query, session_ids: Sequence[str], limit: int) -> list[HistoryMatch]:
        """BM25 over the chunks of ``session_ids`` only (the filter is applied before the top
        ``limit`` cut), best first; ``score`` is the negated BM25 (higher is better). Empty for
        an empty query or no session."""
        ...

    def pending(self, signature: str, session_ids: Sequence[str], limit: int) -> list[MessageChunk]:
        """Up to ``limit`` chunks of ``session_ids`` with no vector of ``signature`` and not marked
        unreadable by it, in a stable order."""
        ...

    def add_vectors(self, signature: str, items: Sequence[tuple[MessageChunk, Vector | None]]) -> None:
        """Store each chunk's vector for ``signature`` in one transaction (``None``: the model
        cannot read it; it is not pending again). Vectors of any other signature are dropped. An
        item whose chunk is no longer indexed with its ``content_hash`` (the session changed since
        :meth:`pending`) is left out.

        Raises:
            StoreError: the database failed, or vectors of one signature differ in length (then
                nothing is changed).
        """
        ...

    def vector_search(self, signature: str, vector: Vector, session_ids: Sequence[str], limit: int) -> list[HistoryMatch]:
        """The ``limit`` chunks of ``session_ids`` whose ``signature`` vectors are nearest to
        ``vector`` (cosine; exact, the filter applied first), best first; ``score`` is the cosine
        similarity.

        Raises:
            StoreError: ``vector``'s length is not that of the stored ``signature`` vectors, or
                the database failed.
        """
        ...

    @property
    def vector_signature(self) -> str | None:
        """The model signature of the stored vectors (``None`` before the first is stored): what
        a keyword search reports the semantic side's progress against, without asking the
        embedder (whose signature may load a model or call a remote service)."""
        ...

    def vector_counts(self, signature: str, session_ids: Sequence[str]) -> tuple[int, int]:
        """``(done, total)``: chunks of ``session_ids`` that have a ``signature`` vector or are
        marked unreadable by it, and all their chunks."""
        ...

    def counts(self) -> dict[str, int]:
        """``{"sessions", "messages", "chunks", "vectors"}`` over the whole index."""
        ...

    def close(self) -> None:
        """Release the connection. Idempotent."""
        ...


@runtime_checkable
class ConsentStore(Protocol):
    """The user's recorded consents to send project history to a remote embedding service
    (seed 003 section 5): one per ``(service, project id)``; a new service or project asks again."""

    def granted(self, service: str, project_id: str) -> bool:
        """True when the user agreed to send ``project_id``'s history to ``service``."""
        ...

    def grant(self, service: str, project_id: str) -> None:
        """Record the user's consent. Raises ``ConfigWriteError`` when it cannot be saved."""
        ...

    def revoke(self, service: str, project_id: str | None = None) -> int:
        """Forget the consents of ``service`` (for one project, or all); returns how many."""
        ...

    def consents(self) -> list[tuple[str, str, str]]:
        """Every recorded ``(service, project_id, granted_at)`` (ISO-8601 UTC)."""
        ...
