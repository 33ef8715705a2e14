"""The Python API: :class:`Workspace`, the same operations and options as the CLI.

    from hermes_workspace import Workspace

    with Workspace.open(home="~/.hermes") as ws:
        ws.add_root("~/notes", recursive=True)
        summary = ws.index()
        for hit in ws.search("rollback procedure", glob="*.md", limit=5):
            print(hit.path, hit.line_start, hit.line_end)

Any adapter can be replaced when opening, by its provider name in the container
(``store``, ``search_store``, ``chunker``, ``fallback_chunker``, ``decoder``, ``file_source``,
``config_repository``, ``index_lock``, ``layout``, ``embedder``, ``vector_index``, ``reranker``), e.g. ``Workspace.open(home, store=InMemoryIndexStore())``
with the fakes of :mod:`hermes_workspace.adapters.memory`. Replacing ``store`` also replaces
``search_store`` unless that is given too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dependency_injector import providers

from hermes_workspace.adapters.memory import CallbackProgressSink, NullProgressSink
from hermes_workspace.container import Container, build_container, make_index_pool
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.model import IndexSummary, Root, SearchResults, StoreStatus
from hermes_workspace.domain.ports import ProgressSink
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
)


def _check_type(name: str, value: object, expected: type | tuple[type, ...]) -> None:
    if not isinstance(value, expected):
        raise UsageError(f"{name} must be {_names(expected)}, got {type(value).__name__} {value!r:.60}")


def _names(expected: type | tuple[type, ...]) -> str:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    words = {str: "a string", os.PathLike: "a path", type(None): "None"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)


class Workspace:
    """A workspace: its config, roots and index. Open with :meth:`open`; close when done (or use
    ``with``). Methods raise :class:`~hermes_workspace.domain.errors.WorkspaceError` subclasses,
    each with a stable ``code``."""

    def __init__(self, container: Container) -> None:
        self._container = container

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **adapters: Any) -> Workspace:
        """Open the workspace of ``home`` (default ``$HERMES_HOME`` or ``~/.hermes``).

        ``adapters``: replacements by provider name (see the module docstring).

        Raises:
            UsageError: an unknown adapter name.
        """
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

    def add_root(self, path: str | os.PathLike[str], *, recursive: bool = False) -> Root:
        """Add a directory (non-recursive unless ``recursive``). Raises ``RootNotFoundError``."""
        return self._container.add_root().execute(os.fspath(path), recursive=recursive)

    def remove_root(self, path: str | os.PathLike[str]) -> Root:
        """Remove an added root. Raises ``RootNotConfiguredError`` or ``UsageError`` (primary)."""
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
            MissingExtraError: the ``workspace`` extra (chonkie) is not installed.
            IndexBusyError: another index run is in progress.
            ConfigError: the config is invalid.
        """
        sink: ProgressSink
        if progress is None:
            sink = NullProgressSink()
        elif callable(progress) and not hasattr(progress, "advance"):
            sink = CallbackProgressSink(progress)
        else:
            sink = progress  # type: ignore[assignment]
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
    ) -> SearchResults:
        """Ranked hits for free text, as a list of :class:`SearchHit` that also carries
        ``mode``, ``semantic_status``, ``fusion``, ``reranker`` and ``notes``; see
        :meth:`~hermes_workspace.application.search.SearchWorkspace.execute` for the options.
        ``mode``: ``keyword``, ``semantic`` or ``hybrid`` (default: ``knowledgebase.retriever.mode``,
        ``auto`` = hybrid when an embedder is configured, else keyword).

        Raises:
            IndexNotFoundError: nothing was indexed yet.
            UsageError: an unknown ``mode``.
        """
        _check_type("query", query, str)
        _check_type("glob", glob, (str, type(None)))
        _check_type("mode", mode, (str, type(None)))
        _check_type("path", path, (str, os.PathLike, type(None)))
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise UsageError(f"limit must be a whole number or None, got {limit!r}")
        return self._container.search_workspace().execute(
            query, path=os.fspath(path) if path is not None else None, glob=glob, limit=limit, mode=mode
        )

    def status(self) -> StoreStatus:
        """Files, chunks and bytes on disk of the index. Raises ``IndexNotFoundError``."""
        return self._container.search_store().status()

    def semantic_status(self) -> dict[str, Any]:
        """What semantic search can do now, without embedding anything: ``{"status"`` (see
        :data:`~hermes_workspace.domain.semantic.SemanticStatus`), ``"provider"``, ``"model"``,
        ``"default_mode"``, ``"vectors"`` (counts, or ``None``), ``"note"}``."""
        config = self._container.config()
        search = self._container.search_workspace()
        status, vectors, note = search.semantic_status()
        provider, model = config.embedder.provider, config.embedder.model_name
        if self._container.embedder.overridden:  # an embedder given to Workspace.open
            embedder = self._container.embedder()
            provider, model = "custom", (embedder.signature if embedder is not None else None)
        return {
            "status": status,
            "provider": provider,
            "model": model,
            "default_mode": search.settings.default_mode,
            "vectors": vectors.to_json() if vectors is not None else None,
            "note": note,
        }

    def close(self) -> None:
        """Close the database connections this object opened (idempotent)."""
        self._container.shutdown_resources()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

