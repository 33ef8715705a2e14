"""The Python API: :class:`Workspace`, the same operations and options as the CLI.

    from hermes_workspace import Workspace

    with Workspace.open(home="~/.hermes") as ws:
        ws.add_root("~/notes", recursive=True)
        summary = ws.index()
        for hit in ws.search("rollback procedure", glob="*.md", limit=5):
            print(hit.path, hit.line_start, hit.line_end)

Any adapter can be replaced when opening, by its provider name in the container
(``store``, ``search_store``, ``chunker``, ``fallback_chunker``, ``decoder``, ``file_source``,
``config_repository``, ``index_lock``, ``layout``, ``embedder``, ``vector_index``, ``reranker``,
``result_sets``), e.g. ``Workspace.open(home, store=InMemoryIndexStore())``
with the fakes of :mod:`hermes_workspace.adapters.memory`. Replacing ``store`` also replaces
``search_store`` unless that is given too, and keeps result sets (handles) in memory unless
``result_sets`` is given too.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dependency_injector import providers

from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.adapters.memory import CallbackProgressSink, InMemoryResultSets, NullProgressSink
from hermes_workspace.application.verification import ReadResult
from hermes_workspace.container import WORKERS_LIMIT, Container, build_container, make_index_pool
from hermes_workspace.domain.errors import IndexNotFoundError, UsageError
from hermes_workspace.domain.model import IndexSummary, Root, RootChange, SearchResults, StoreStatus
from hermes_workspace.domain.ports import ProgressSink
from hermes_workspace.domain.semantic import SEARCH_MODES
from hermes_workspace.entrypoints.logging_setup import configure_library_logging

ProgressCallback = Callable[[int, int, Path], object]
"""``callback(position, total, path)``: file ``position`` (1-based) of ``total`` is being indexed."""

REPLACEABLE = (
    "store",
    "search_store",
    "chunker",
    "fallback_chunker",
    "decoder",
    "file_source",
    "config_repository",
    "index_lock",
    "layout",
    "embedder",
    "vector_index",
    "reranker",
    "result_sets",
)


def _check_type(name: str, value: object, expected: type | tuple[type, ...]) -> None:
    """Raise :class:`UsageError` unless ``value`` is an instance of ``expected``; ``bool`` is
    never accepted where ``int`` is asked for (``True`` is not a number of workers)."""
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in kinds):
        raise UsageError(f"{name} must be {_names(expected)}, got {type(value).__name__} {value!r:.60}")


def _check_callback(progress: Callable[..., object]) -> None:
    """Raise :class:`UsageError` when ``progress`` cannot be called as ``(position, total, path)``
    (rather than a ``TypeError`` from inside the run)."""
    try:
        signature = inspect.signature(progress)
    except (TypeError, ValueError):
        return  # a builtin without a signature: let it be
    try:
        signature.bind(1, 1, Path())
    except TypeError as exc:
        raise UsageError(
            f"progress must take (position, total, path): {exc}",
            hint="For example: ws.index(progress=lambda i, n, path: print(f'[{i}/{n}] {path}'))",
        ) from None


def _memory_result_sets(settings: Any) -> InMemoryResultSets:
    return InMemoryResultSets(ttl_seconds=settings.handles.ttl_hours * 3600, max_sets=settings.handles.max_sets)


def _names(expected: type | tuple[type, ...]) -> str:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    words = {str: "a string", os.PathLike: "a path", type(None): "None", bool: "True or False", int: "a whole number"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


class Workspace:
    """A workspace: its config, roots and index. Open with :meth:`open`; close when done (or use
    ``with``). Methods raise :class:`~hermes_workspace.domain.errors.WorkspaceError` subclasses,
    each with a stable ``code``."""

    def __init__(self, container: Container) -> None:
        self._container_or_none: Container | None = container

    @property
    def _container(self) -> Container:
        container = self._container_or_none
        if container is None:
            raise UsageError(
                "this Workspace is closed", hint="Open a new one with Workspace.open(...), or call it inside the `with` block."
            )
        return container

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **adapters: Any) -> Workspace:
        """Open the workspace of ``home`` (default ``$HERMES_HOME`` or ``~/.hermes``).

        ``adapters``: replacements by provider name (see the module docstring).

        Raises:
            UsageError: ``home`` is not a string, a path or None; an unknown adapter name.
        """
        _check_type("home", home, (str, os.PathLike, type(None)))
        unknown = sorted(set(adapters) - set(REPLACEABLE))
        if unknown:
            raise UsageError(
                f"unknown adapter name(s): {', '.join(unknown)}",
                hint=f"Replaceable adapters: {', '.join(REPLACEABLE)}.",
            )
        container = build_container(home)
        configure_library_logging(container.log_file())
        for name, adapter in adapters.items():
            if name == "vector_index":
                # The container opens the vector index per use; a given one is shared instead.
                opener = providers.Object(lambda adapter=adapter: adapter)
                container.vector_index.override(opener)
                container.search_vector_index.override(opener)
                continue
            getattr(container, name).override(providers.Object(adapter))
        if "store" in adapters and "search_store" not in adapters:
            container.search_store.override(providers.Object(adapters["store"]))
        if "store" in adapters and "result_sets" not in adapters:
            # No index file to keep result sets in: handles live as long as this object.
            container.result_sets.override(providers.Singleton(_memory_result_sets, container.settings))
        return cls(container)

    @property
    def home(self) -> Path:
        """The Hermes home directory (absolute)."""
        return self._container.home()

    @property
    def index_path(self) -> Path:
        """Where the SQLite index lives: ``<primary workspace>/.index/workspace.sqlite``."""
        return self._container.index_path()

    @property
    def log_file(self) -> Path:
        """``HERMES_HOME/logs/workspace.log``."""
        return self._container.log_file()

    def roots(self) -> list[Root]:
        """The primary workspace first (recursive), then the added roots."""
        return self._container.list_roots().execute()

    def add_root(self, path: str | os.PathLike[str], *, recursive: bool | None = None) -> RootChange:
        """Add a directory, or change whether an added one is recursive.

        ``recursive``: index its sub-folders too; ``None`` keeps the setting of a root already
        configured and means ``False`` for a new one. Returns a :class:`RootChange` (``action``
        ``added``, ``updated`` or ``unchanged``, ``previous``, ``message``; ``path`` and
        ``recursive`` as on a :class:`Root`).

        Raises:
            UsageError: ``path`` is not a non-empty string or path, ``recursive`` not a bool.
            RootNotFoundError: the directory does not exist or cannot be looked at.
            ConfigError, ConfigWriteError: config.yaml is invalid or cannot be written.
        """
        _check_type("path", path, (str, os.PathLike))
        _check_type("recursive", recursive, (bool, type(None)))
        return self._container.add_root().execute(os.fspath(path), recursive=recursive)

    def remove_root(self, path: str | os.PathLike[str]) -> Root:
        """Remove an added root.

        Raises:
            UsageError: ``path`` is not a string or path, or is the primary workspace.
            RootNotConfiguredError: no added root has that path.
        """
        _check_type("path", path, (str, os.PathLike))
        return self._container.remove_root().execute(os.fspath(path))

    def index(
        self, *, progress: ProgressCallback | ProgressSink | None = None, workers: int | None = None
    ) -> IndexSummary:
        """Index every root; returns the summary. ``progress`` is a callback
        ``(position, total, path)`` or a :class:`ProgressSink`. ``workers``: processes that read
        and chunk in parallel (2 or more starts a process pool; a script that passes it must
        guard its entry point with ``if __name__ == "__main__":``, as any multiprocessing user
        must); ``None`` means ``$HERMES_INDEX_WORKERS``, else 1 (in-process). The worker
        processes end with this process, however it ends. No signal handler is installed: a
        ``KeyboardInterrupt`` (of any subclass) stops the run keeping every file finished so far
        and is re-raised; a host that wants the same on SIGTERM raises one from its own handler.

        Raises:
            KeyboardInterrupt: Ctrl-C (or the host's own interrupt) during the run.
            UsageError: ``progress`` is neither a callable nor a progress sink, ``workers`` not a
                whole number >= 1 (or None).
            MissingExtraError: the ``workspace`` extra (chonkie) is not installed.
            IndexBusyError: another index run is in progress.
            ConfigError: the config is invalid.
            StoreError: the index cannot be written (disk full, read-only): the run stops.
        """
        sink: ProgressSink
        if progress is None:
            sink = NullProgressSink()
        elif all(callable(getattr(progress, name, None)) for name in ("start", "advance", "finish")):
            sink = progress  # type: ignore[assignment]
        elif callable(progress):
            _check_callback(progress)
            sink = CallbackProgressSink(progress)
        else:
            raise UsageError(
                f"progress must be a callable (position, total, path) or a ProgressSink, got "
                f"{type(progress).__name__} {progress!r:.60}"
            )
        _check_type("workers", workers, (int, type(None)))
        if workers is not None and not 1 <= workers <= WORKERS_LIMIT:
            raise UsageError(f"workers must be >= 1 and <= {WORKERS_LIMIT} (1: no worker processes), got {workers}")
        lock = self._container.index_lock()
        # The lock first: building the run opens the index for writing, which would wait for a
        # running index's transaction (seconds) before the run found the lock taken.
        with lock.hold() if isinstance(lock, FileIndexLock) else contextlib.nullcontext():
            if workers is None or self._container.index_pool.overridden:
                return self._container.index_workspace().execute(sink)
            with self._container.index_pool.override(providers.Object(make_index_pool(workers))):
                return self._container.index_workspace().execute(sink)

    def search(
        self,
        query: str,
        *,
        path: str | os.PathLike[str] | None = None,
        glob: str | None = None,
        limit: int | None = None,
        mode: str | None = None,
        offset: int = 0,
    ) -> SearchResults:
        """Ranked hits for free text, as a list of :class:`SearchHit` that also carries
        ``mode``, ``semantic_status``, ``fusion``, ``reranker`` and ``notes``; see
        :meth:`~hermes_workspace.application.search.SearchWorkspace.execute` for the options.
        ``mode``: ``keyword``, ``semantic`` or ``hybrid`` (default: ``knowledgebase.retriever.mode``,
        ``auto`` = hybrid when an embedder is configured, else keyword).

        The search is frozen as a result set (:mod:`hermes_workspace.application.result_sets`):
        the hits are positions ``offset``..``offset + limit - 1`` of it, each with a ``handle``
        (for :meth:`read`), ``file_hash`` and ``stale``; ``result_set``, ``offset``, ``total``
        and ``cursor`` (for :meth:`more`, ``None`` on the last page) say where the page is. On a
        read-only index hits have no handles and a note says why.

        Raises:
            IndexNotFoundError: nothing was indexed yet.
            UsageError: an unknown ``mode``, a malformed or empty ``glob``, an ``offset`` that is
                not a whole number from 0 to 10,000.
        """
        _check_type("query", query, str)
        if not query.strip():
            raise UsageError(
                "search needs a query", hint="Give the words to look for: hermes-workspace search rollback procedure"
            )
        if isinstance(path, str) and not path.strip():
            raise UsageError("the path prefix is empty", hint="Leave it out to search every root, or give a folder.")
        _check_type("glob", glob, (str, type(None)))
        _check_type("mode", mode, (str, type(None)))
        if mode is not None and mode not in SEARCH_MODES:
            raise UsageError(f"unknown search mode {mode!r}", hint=f"Use one of: {', '.join(SEARCH_MODES)}.")
        _check_type("path", path, (str, os.PathLike, type(None)))
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise UsageError(f"limit must be a whole number or None, got {limit!r}")
        _check_type("offset", offset, int)
        return self._container.paged_search().execute(
            query, path=os.fspath(path) if path is not None else None, glob=glob, limit=limit, mode=mode,
            offset=offset,
        )

    def more(self, cursor: str, *, limit: int | None = None) -> Any:
        """The next page of a frozen result set, named by a ``cursor`` (``SET@OFFSET``, as
        ``SearchResults.cursor``), without searching again: a :class:`SearchResults` of up to
        ``limit`` hits (default: the page size of the search that made it) for a search set,
        a ``RetrievePack`` for a retrieve set. Hits are marked for freshness anew.

        Raises:
            UsageError: ``cursor`` is not ``SET@OFFSET``, ``limit`` not a whole number >= 1.
            HandleNotFoundError: no such set in this index (exit 66).
            HandleExpiredError: the set expired or was evicted (exit 66): search again.
        """
        _check_type("cursor", cursor, str)
        _check_type("limit", limit, (int, type(None)))
        return self._container.more_results().execute(cursor, limit=limit)

    def read(self, target: str) -> ReadResult:
        """The lines a handle (``SET:N``) or a locator (``PATH:START-END``, ``PATH:LINE``; lines
        1-based, inclusive) names, verified against the file on disk: a :class:`ReadResult`
        whose ``status`` is ``verified`` (text is the indexed text), ``moved`` (the file changed
        and the text is now at ``line_start``-``line_end``, was at ``moved_from``), ``stale``
        (changed, the text cannot be found exactly once: no text) or ``deleted``.

        Raises:
            UsageError: a malformed target, an unindexed path, lines out of range.
            HandleNotFoundError, HandleExpiredError: the handle's set is unknown or expired (exit 66).
            IndexNotFoundError: nothing was indexed yet.
        """
        _check_type("target", target, str)
        return self._container.read_span().execute(target)

    def status(self) -> StoreStatus:
        """Files, chunks, bytes on disk and the last run's exclusions of the index; before the
        first index, zeros with ``indexed=False``. Raises ``StoreError`` (damaged index)."""
        try:
            return self._container.search_store().status()
        except IndexNotFoundError:
            return StoreStatus(files=0, chunks=0, size_bytes=0, indexed=False)

    def semantic_status(self) -> dict[str, Any]:
        """What semantic search can do now, without embedding anything: ``{"status"`` (see
        :data:`~hermes_workspace.domain.semantic.SemanticStatus`), ``"provider"``, ``"model"``,
        ``"default_mode"``, ``"vectors"`` (counts, or ``None``), ``"note"}``."""
        config = self._container.config()
        provider, model = config.embedder.provider, config.embedder.model_name
        custom = self._container.embedder.overridden  # an embedder given to Workspace.open
        if custom:
            embedder = self._container.embedder()
            provider, model = "custom", (embedder.signature if embedder is not None else None)
        try:
            search = self._container.search_workspace()
        except IndexNotFoundError:  # before the first index: nothing to count yet
            enabled = custom or config.embedder.enabled
            return {
                "status": "indexing" if enabled else "disabled",
                "provider": provider,
                "model": model,
                "default_mode": ("hybrid" if custom and config.retriever.mode == "auto" else config.default_mode),
                "vectors": None,
                "note": "nothing is indexed yet: run `hermes-workspace index`" if enabled else None,
            }
        status, vectors, note = search.semantic_status()
        return {
            "status": status,
            "provider": provider,
            "model": model,
            "default_mode": search.settings.default_mode,
            "vectors": vectors.to_json() if vectors is not None else None,
            "note": note,
        }

    def close(self) -> None:
        """Close the database connections this object opened (idempotent). Every other method
        raises :class:`UsageError` afterwards."""
        container, self._container_or_none = self._container_or_none, None
        if container is not None:
            container.shutdown_resources()

    def __enter__(self) -> Workspace:
        self._container  # noqa: B018 - refuses a closed workspace
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

