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
``token_counter``, ``result_sets``, ``plugin_registry``: the installed plugins, ``change_feed``: the
file events of :meth:`Workspace.watch`, ``index_mark``: the time of the last index run that
``knowledgebase.auto_index`` debounces on; for project-history recall ``session_history``: the host's
store, ``history_index``: our index of it, ``consent_store``, ``history_embedder``, ``git_root``: the
repository of a folder), e.g. ``Workspace.open(home, store=InMemoryIndexStore())``
with the fakes of :mod:`hermes_workspace.adapters.memory`. Replacing ``store`` also replaces
``search_store`` unless that is given too, and keeps result sets (handles) in memory unless
``result_sets`` is given too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import os
from dataclasses import replace
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dependency_injector import providers

from hermes_workspace.container import WORKERS_LIMIT, Container, build_container, make_index_pool
from hermes_workspace.domain.catalog import DeleteResult, DoctorCheck, DoctorReport, FileListing
from hermes_workspace.domain.errors import (
    IndexNotFoundError,
    NotIndexedError,
    UnknownPluginError,
    UsageError,
    WorkspaceError,
)
from hermes_workspace.domain.paths import json_text
from hermes_workspace.domain.project_config import ConfigSource
from hermes_workspace.domain.model import IndexSummary, Root, RootChange, RootCoverage, SearchResults, StoreStatus
from hermes_workspace.domain.ports import ProgressSink
from hermes_workspace.domain.semantic import SEARCH_MODES
from hermes_workspace.entrypoints.logging_setup import configure_library_logging
from hermes_workspace.registry import PluginListing, plugin_listing

if TYPE_CHECKING:
    from hermes_workspace.adapters.memory import InMemoryResultSets
    from hermes_workspace.application.history import HistorySearchResult
    from hermes_workspace.application.watching import WatchBatch, WatchSummary
    from hermes_workspace.application.verification import ReadResult
    from hermes_workspace.domain.packing import RetrievePack

# Imported where they are used (a search imports none of them): the indexing lock and progress
# sinks, the in-memory result sets, the catalog and retrieve helpers.

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
    "token_counter",
    "result_sets",
    "plugin_registry",
    "change_feed",
    "index_mark",
    "session_history",
    "history_index",
    "consent_store",
    "history_embedder",
    "git_root",
)


_INT_BITS = 1024
"""Whole-number arguments longer than this many bits (about 308 digits) are refused here, before
any layer formats one into a message (Python will not print an int of over 4,300 digits:
ValueError). Every argument's own range, checked below with its own message, is far narrower;
those checks also keep SQLite from ever binding an int beyond 64 bits (OverflowError)."""


def _shown(value: object) -> str:
    """``repr(value)`` for a message, at most 60 characters, whatever its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a {'negative ' if value < 0 else ''}number of about {int(value.bit_length() * 0.30103)} digits"
    return f"{value!r:.60}"


def _check_type(name: str, value: object, expected: type | tuple[type, ...]) -> None:
    """Raise :class:`UsageError` unless ``value`` is an instance of ``expected``; ``bool`` is
    never accepted where ``int`` is asked for (``True`` is not a number of workers), nor an int
    of more than :data:`_INT_BITS` bits."""
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in kinds):
        raise UsageError(f"{name} must be {_names(expected)}, got {type(value).__name__} {_shown(value)}")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _INT_BITS:
        raise UsageError(f"{name} is out of range: {_shown(value)}",
                         hint=f"Give {name} as a whole number in the range its documentation states (--help).")


def _check_workers(workers: object) -> None:
    """Raise UsageError unless ``workers`` is ``None`` or a whole number from 1 to :data:`WORKERS_LIMIT`."""
    _check_type("workers", workers, (int, type(None)))
    if workers is not None and not 1 <= workers <= WORKERS_LIMIT:  # type: ignore[operator]
        raise UsageError(f"workers must be >= 1 and <= {WORKERS_LIMIT} (1: no worker processes), got {workers}")


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


TOOL_ACTIONS = {
    "status": "status_report",
    "index": "index",
    "list": "list_files",
    "search": "search",
    "retrieve": "retrieve",
    "read": "read",
    "more": "more",
    "delete": "delete",
}
"""``workspace_tool`` actions and the :class:`Workspace` method each one calls."""


def _dumps(data: Any) -> str:
    return json_text(data)


def _error_json(error: dict[str, Any]) -> str:
    return _dumps({"error": error})


def _result_json(result: Any) -> str:
    """JSON text of a method's result: ``serialize()`` as is (a retrieve pack), else the
    ``envelope()`` of search results, else ``to_json()``, else the value itself."""
    if callable(getattr(result, "serialize", None)):
        return result.serialize()
    if callable(getattr(result, "envelope", None)):
        return _dumps(result.envelope())
    if callable(getattr(result, "to_json", None)):
        return _dumps(result.to_json())
    if isinstance(result, list):
        return _dumps([item.to_json() if callable(getattr(item, "to_json", None)) else item for item in result])
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return _dumps(json.loads(json.dumps(dataclasses.asdict(result), default=str)))
    return _dumps(result)


def _memory_result_sets(settings: Any) -> InMemoryResultSets:
    from hermes_workspace.adapters.memory import InMemoryResultSets

    return InMemoryResultSets(ttl_seconds=settings.handles.ttl_hours * 3600, max_sets=settings.handles.max_sets)


def _root_names(roots: object) -> list[str] | None:
    """``roots`` of :meth:`Workspace.search`/``retrieve`` as a list of names, ``None`` for none.

    Raises:
        UsageError: not a list or tuple of strings (a bare string would select its letters).
    """
    if roots is None:
        return None
    if not isinstance(roots, (list, tuple)) or not all(isinstance(n, str) for n in roots):
        raise UsageError(f"roots must be a list of root names, got {_shown(roots)}",
                         hint='e.g. roots=["workspace", "notes"]; roots() lists the names.')
    return list(roots)


def _scoping(roots: object, all_roots: object, cwd: object) -> dict[str, Any]:
    """The scoping arguments of :meth:`Workspace.search`/``retrieve``, checked: ``roots`` (names),
    ``all_roots`` and ``cwd`` (a path string, not empty, or ``None``).

    Raises:
        UsageError: a wrong type, an empty ``cwd``.
    """
    _check_type("all_roots", all_roots, bool)
    _check_type("cwd", cwd, (str, os.PathLike, type(None)))
    if isinstance(cwd, str) and not cwd.strip():
        raise UsageError("cwd is empty", hint="Give a folder (e.g. os.getcwd()), or None for every root.")
    return {"roots": _root_names(roots), "all_roots": all_roots, "cwd": cwd}


def _stat_stamp(path: Path) -> tuple[int, int, int] | None:
    """``(inode, mtime_ns, size)`` of ``path``, ``None`` when missing: changes when it is edited
    or replaced."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


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
    def open(
        cls,
        home: str | os.PathLike[str] | None = None,
        *,
        config: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **adapters: Any,
    ) -> Workspace:
        """Open the workspace of ``home`` (default ``$HERMES_HOME`` or ``~/.hermes``).

        The config in use (:attr:`config_source`): ``config`` (a YAML file) if given, else
        ``$HERMES_WORKSPACE_CONFIG``, else the nearest ``.hermes-workspace.yaml`` in ``cwd`` or an
        ancestor, else ``home/config.yaml``. Project files are looked for only when ``cwd`` is
        given (the process's working directory is never looked at: pass ``os.getcwd()`` to
        behave as the CLI). See :mod:`hermes_workspace.domain.project_config`.

        ``adapters``: replacements by provider name (see the module docstring).

        Raises:
            UsageError: ``home``, ``config`` or ``cwd`` is not a string, a path or None, or is
                empty; ``config`` is missing or not a file; an unknown adapter name.
            ConfigError: ``$HERMES_WORKSPACE_CONFIG`` names no file.
        """
        _check_type("home", home, (str, os.PathLike, type(None)))
        _check_type("config", config, (str, os.PathLike, type(None)))
        _check_type("cwd", cwd, (str, os.PathLike, type(None)))
        if cwd is not None and not os.fspath(cwd).strip():
            raise UsageError("cwd is empty", hint="Give a folder (e.g. os.getcwd()), or None for no project discovery.")
        unknown = sorted(set(adapters) - set(REPLACEABLE))
        if unknown:
            raise UsageError(
                f"unknown adapter name(s): {', '.join(unknown)}",
                hint=f"Replaceable adapters: {', '.join(REPLACEABLE)}.",
            )
        container = build_container(home, config=config, cwd=cwd)
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
    def config_source(self) -> ConfigSource:
        """The config file in use and how it was found (``option``, ``env``, ``project``, ``home``)."""
        return self._container.config_source()

    @property
    def index_path(self) -> Path:
        """Where the SQLite index lives: ``<primary workspace>/.index/workspace.sqlite``, or for
        a project config ``HERMES_HOME/projects/<folder>-<hash>/workspace.sqlite``."""
        return self._container.index_path()

    @property
    def log_file(self) -> Path:
        """``HERMES_HOME/logs/workspace.log``."""
        return self._container.log_file()

    def roots(self) -> list[Root]:
        """The primary workspace first (recursive), then the added roots, each with its ``name``."""
        return self._container.list_roots().execute()

    def add_root(
        self, path: str | os.PathLike[str], *, recursive: bool | None = None, name: str | None = None,
        profile: str | None = None, extensions: list[str] | tuple[str, ...] | None = None,
        max_file_size: int | str | None = None,
    ) -> RootChange:
        """Add a directory, or change whether an added one is recursive, its name or its files.

        ``recursive``: index its sub-folders too; ``None`` keeps the setting of a root already
        configured and means ``False`` for a new one. ``name``: the root's name (1-64 ASCII
        letters, digits, ``_``, ``-``); ``None`` keeps a configured root's name and gives a new
        one its folder's name, made unique. Returns a :class:`RootChange` (``action``
        ``added``, ``updated`` or ``unchanged``, ``previous``, ``message``; ``path``,
        ``recursive`` and the root's ``name`` as on a :class:`Root`).

        ``profile``: ``"code"`` (a repository: recursive unless ``recursive=False``, extensions
        chosen from its marker files at each index run), ``"none"`` to remove it; ``extensions``:
        the exact suffixes to index (``[".go", ".proto"]``), winning over the profile;
        ``max_file_size``: this root's size cap, bytes or ``"1MB"``. ``None`` keeps each as the
        root has it (the ``roots add`` options ``--profile``, ``--extension``, ``--max-file-size``).

        Raises:
            UsageError: ``path`` is not a non-empty string or path, ``recursive`` not a bool,
                ``name`` invalid or another root's; ``profile`` unknown, an extension
                malformed, ``max_file_size`` not a size (error code ``usage_error``).
            RootNotFoundError: the directory does not exist or cannot be looked at.
            ConfigError, ConfigWriteError: config.yaml is invalid or cannot be written.
        """
        _check_type("path", path, (str, os.PathLike))
        _check_type("recursive", recursive, (bool, type(None)))
        _check_type("name", name, (str, type(None)))
        _check_type("profile", profile, (str, type(None)))
        _check_type("extensions", extensions, (list, tuple, type(None)))
        _check_type("max_file_size", max_file_size, (int, str, type(None)))
        change = self._container.add_root().execute(
            os.fspath(path), recursive=recursive, name=name, profile=profile, extensions=extensions,
            max_file_size=max_file_size,
        )
        self._readmit(change.path)
        return change

    def _readmit(self, folder: Path) -> int:
        """Drop the tombstones under ``folder`` (files removed with :meth:`delete` come back at
        the next index); 0 without an index. See :mod:`hermes_workspace.application.catalog`."""
        if not self._container.store.overridden and not self.index_path.exists():
            return 0
        return self._container.readmit().execute(folder)

    def rename_root(self, old: str, new: str) -> RootChange:
        """Rename the root named ``old`` (``roots()`` shows the names; the primary workspace
        too) to ``new``. Returns a :class:`RootChange` (``updated``, or ``unchanged``).

        Raises:
            UsageError: no root is named ``old`` (the message lists the names); ``new`` is
                invalid or another root's name.
            ConfigError, ConfigWriteError: config.yaml is invalid or cannot be written.
        """
        _check_type("old", old, str)
        _check_type("new", new, str)
        return self._container.rename_root().execute(old, new)

    def remove_root(self, path: str | os.PathLike[str]) -> Root:
        """Remove an added root, given by its path or its name (``roots()``).

        Raises:
            UsageError: ``path`` is not a string or path, or is the primary workspace.
            RootNotConfiguredError: no added root has that path or name.
        """
        _check_type("path", path, (str, os.PathLike))
        return self._container.remove_root().execute(os.fspath(path))

    def index(
        self, *, progress: ProgressCallback | ProgressSink | None = None, workers: int | None = None,
        paths: Sequence[str | os.PathLike[str]] | None = None,
    ) -> IndexSummary:
        """Index every root; returns the summary. ``paths``: only these files and folders
        (relative ones from the current folder; ``None``: every root), for a caller that knows
        what changed (a file watcher): each is judged as the whole walk judges it (exclusions,
        ignore rules of every folder on the way, size cap), a folder is walked whole, a changed
        ignore file re-walks its folder, and the indexed files at or under each path that are gone
        or now excluded are pruned; nothing else is looked at
        (:meth:`~hermes_workspace.application.indexing.IndexWorkspace.execute`). The summary's
        ``changed_paths`` says how many were given and how many no root covers (left alone); such
        a run keeps the last whole run's record for ``status``. ``progress`` is a callback
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
                whole number >= 1 (or None); ``paths`` not a list of non-empty paths, or none of
                them in a root (after the run, which changed nothing).
            MissingExtraError: the ``workspace`` extra (chonkie) is not installed.
            IndexBusyError: another index run is in progress.
            ConfigError: the config is invalid.
            StoreError: the index cannot be written (disk full, read-only): the run stops;
                ``DiskSpaceLowError`` (code ``disk_space_low``) when less disk than
                ``knowledgebase.storage.min_free_disk`` is free before a batch of writes.
        """
        from hermes_workspace.adapters.file_lock import FileIndexLock
        from hermes_workspace.adapters.progress_sinks import CallbackProgressSink, NullProgressSink

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
        _check_workers(workers)
        changed = None if paths is None else _changed_paths(paths)
        lock = self._container.index_lock()
        # The lock first: building the run opens the index for writing, which would wait for a
        # running index's transaction (seconds) before the run found the lock taken.
        with lock.hold() if isinstance(lock, FileIndexLock) else contextlib.nullcontext():
            if workers is None or self._container.index_pool.overridden:
                summary = self._container.index_workspace().execute(sink, changed)
            else:
                with self._container.index_pool.override(providers.Object(make_index_pool(workers))):
                    summary = self._container.index_workspace().execute(sink, changed)
            if changed and summary.changed_paths is not None and summary.changed_paths["ignored"] == len(changed):
                shown = ", ".join(str(p) for p in changed[:3]) + (", ..." if len(changed) > 3 else "")
                raise UsageError(
                    f"no root covers the path{'s' if len(changed) > 1 else ''} given ({shown}): nothing was indexed",
                    hint="`hermes-workspace roots list` shows the roots (a non-recursive root covers only the files "
                    "directly in it); add a folder with `roots add`. The index folder is never indexed.",
                )
            self._record_plugins()
            self._add_plugin_notes(summary)
            if changed is None:
                self._container.index_mark().touch()  # knowledgebase.auto_index debounces on it
            return summary

    def _add_plugin_notes(self, summary: IndexSummary) -> None:
        """The run's plugin notes in its summary (a plugin that fell back to the default, options
        a built-in does not read), which ``status`` and ``plugins`` also show: the summary is
        what a user reads after ``index`` (a third trial found them missing there)."""
        if self._container.chunker.overridden:
            return
        selection = self._container.plugins()
        for note in [*selection.notes, *selection.option_notes()]:
            summary.add_note(note)

    def _record_plugins(self) -> None:
        """Remember the plugin signature bundle with the index (a store that can; not when the
        chunker is an object given to :meth:`open`, which has no plugin name)."""
        record = getattr(self._container.store(), "record_plugins", None)
        if record is not None and not self._container.chunker.overridden:
            record(self._container.plugins().bundle())

    def plugins(self) -> PluginListing:
        """The installed plugins (entry points of the ``hermes_workspace.*`` groups): per plugin
        ``name, category, distribution, version, target, builtin, status`` (``ok``, ``broken``
        with its ``error``, or ``shadowed`` by another package's plugin of the same name),
        ``active`` and ``used_for`` (chunkers: the ``knowledgebase.chunkers`` keys it serves),
        ``signature`` (active chunkers); the ``signature`` of the current selection, the one the
        index was built with (``indexed_signature``), ``up_to_date``, and ``notes`` (a broken
        plugin replaced by its default; a configured name that is not installed). Imports each
        plugin's module to find the broken ones; never raises for a bad plugin or config name.

        Raises:
            ConfigError: config.yaml cannot be read (bad YAML, a bad value other than a plugin name).
        """
        container = self._container
        selection, notes = None, []
        try:
            selection = container.plugins()
            unknown = selection.unknown_names()
        except UnknownPluginError as exc:
            selection, unknown = None, [exc]
        if unknown:
            selection = None
            notes.extend(f"{exc.message}. {exc.hint}" for exc in unknown)
        if selection is not None:
            # Build the embedder and reranker (cheap: models load on first use), so that a broken
            # one is listed as broken, as status and doctor say (a third trial found it "ok").
            selection.embedder()
            selection.reranker()
        recorded = self._recorded_plugins() if selection is not None else None  # the store is a plugin too
        return plugin_listing(container.plugin_registry(), selection, recorded=recorded, notes=notes)

    def _recorded_plugins(self) -> dict[str, Any] | None:
        try:
            read = getattr(self._container.search_store(), "recorded_plugins", None)
        except IndexNotFoundError:
            return None
        return read() if read is not None else None

    def search(
        self,
        query: str,
        *,
        path: str | os.PathLike[str] | None = None,
        glob: str | None = None,
        limit: int | None = None,
        mode: str | None = None,
        offset: int = 0,
        roots: list[str] | tuple[str, ...] | None = None,
        all_roots: bool = False,
        cwd: str | os.PathLike[str] | None = None,
    ) -> SearchResults:
        """Ranked hits for free text, as a list of :class:`SearchHit` that also carries
        ``mode``, ``semantic_status``, ``fusion``, ``reranker``, ``notes`` and ``scope``; see
        :meth:`~hermes_workspace.application.search.SearchWorkspace.execute` for the options.
        ``roots``: names of roots (``roots()``) to search; every hit has its ``root_name``.
        ``cwd``: the working directory to scope from (default ``None``: every root; the
        process's own working directory is never looked at, pass ``os.getcwd()`` to scope as the
        CLI does): inside a root, that home root is searched first and every root only when it
        has no hit (``scope["widened"]``). ``all_roots=True``: every root, whatever ``cwd``.
        ``scope`` is ``{"roots", "home", "widened"}``.
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
                not a whole number from 0 to 10,000, an unknown root name in ``roots``, both
                ``roots`` and ``all_roots``.
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
            raise UsageError(f"limit must be a whole number or None, got {_shown(limit)}")
        _check_type("limit", limit, (int, type(None)))
        _check_type("offset", offset, int)
        self._auto_index()
        return self._container.paged_search().execute(
            query, path=os.fspath(path) if path is not None else None, glob=glob, limit=limit, mode=mode,
            offset=offset, **_scoping(roots, all_roots, cwd),
        )

    def retrieve(
        self,
        query: str,
        *,
        budget: int | None = None,
        path: str | os.PathLike[str] | None = None,
        glob: str | None = None,
        mode: str | None = None,
        max_chunks: int | None = None,
        roots: list[str] | tuple[str, ...] | None = None,
        all_roots: bool = False,
        cwd: str | os.PathLike[str] | None = None,
    ) -> RetrievePack:
        """The best evidence for ``query`` packed into ``budget`` o200k_base tokens (default
        ``knowledgebase.injection.max_tokens``, 3200), at most ``max_chunks`` blocks (default
        ``knowledgebase.injection.max_chunks``, 6), in seed 001's untrusted-content framing. The
        budget holds for ``pack.serialize()`` (the JSON the CLI prints) and for ``pack.text``
        (the framed block to inject). ``path``, ``glob``, ``mode``, ``roots``, ``all_roots``,
        ``cwd``: as for :meth:`search` (``pack.scope`` names the roots searched, the home root
        and whether it widened; each block has its ``root_name``).
        Rules and shape: :mod:`hermes_workspace.domain.packing`; ``pack.cursor`` gives the next
        pack (``more``).

        Raises:
            UsageError: an empty query, a budget below the smallest response (the hint gives
                the minimum), ``max_chunks`` outside 1..50, an unknown ``mode``, a bad ``glob``.
            IndexNotFoundError: nothing was indexed yet.
            TokenizerUnavailableError: the shipped o200k_base file is missing or altered.
        """
        _check_type("query", query, str)
        if not query.strip():
            raise UsageError(
                "retrieve needs a query", hint="Give the question or words to look for: hermes-workspace retrieve rollback plan"
            )
        if isinstance(path, str) and not path.strip():
            raise UsageError("the path prefix is empty", hint="Leave it out to search every root, or give a folder.")
        _check_type("path", path, (str, os.PathLike, type(None)))
        _check_type("glob", glob, (str, type(None)))
        _check_type("mode", mode, (str, type(None)))
        if mode is not None and mode not in SEARCH_MODES:
            raise UsageError(f"unknown search mode {mode!r}", hint=f"Use one of: {', '.join(SEARCH_MODES)}.")
        _check_type("budget", budget, (int, type(None)))
        _check_type("max_chunks", max_chunks, (int, type(None)))
        self._auto_index()
        return self._container.retrieve_context().execute(
            query, budget=budget, path=os.fspath(path) if path is not None else None, glob=glob, mode=mode,
            max_chunks=max_chunks, **_scoping(roots, all_roots, cwd),
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

    def read(self, target: str, *, budget: int | None = None) -> ReadResult:
        """The lines a handle (``SET:N``) or a locator (``PATH:START-END``, ``PATH:LINE``; lines
        1-based, inclusive) names, verified against the file on disk: a :class:`ReadResult`
        whose ``status`` is ``verified`` (text is the indexed text), ``moved`` (the file changed
        and the text is now at ``line_start``-``line_end``, was at ``moved_from``), ``stale``
        (changed, the text cannot be found exactly once: no text) or ``deleted``.

        ``budget``: most o200k_base tokens of the response as serialized (``result.serialize()``,
        what the CLI prints); default ``knowledgebase.injection.read_max_tokens`` (8000). Longer
        text keeps its leading whole lines (``truncated``, ``full_line_end``, ``next``: the
        locator of the rest), or, when not even one line fits, the first line's leading
        characters (``line_chars_returned``).

        Raises:
            UsageError: a malformed target (a malformed handle gets the handle's hint), lines out
                of range, a budget that is not a whole number from 1 to 1,000,000 or is below the
                smallest response (the hint gives it).
            NotIndexedError: the path, or the handle's file, is not in the index (exit 66).
            HandleNotFoundError, HandleExpiredError: the handle's set is unknown or expired (exit 66).
            IndexNotFoundError: nothing was indexed yet.
            TokenizerUnavailableError: the budget's tokenizer cannot load.
        """
        _check_type("target", target, str)
        _check_type("budget", budget, (int, type(None)))
        return self._container.read_span().execute(target, budget=budget)

    def context_for_turn(self, message: str, recent_messages: Any = (), mode: str | None = None) -> str:
        """Seed 001's turn-by-turn retrieval for agent hosts: the framed workspace context to
        append to the user's ``message`` for this turn, or ``""`` when nothing is injected.

        ``mode`` (default ``knowledgebase.retrieval_mode``): ``off`` gives ``""``; ``gated``
        retrieves only for a message that looks workspace-relevant (a workspace or question
        word, and 3+ words or a ``?``) and drops the result unless a hit matched the query's
        words; ``always`` retrieves every turn. A short (< 5 words) or pronoun query is extended
        with the last user messages of ``recent_messages`` (strings, or ``{"role", "content"}``
        mappings; oldest first), capped at 500 characters. Budget and block limit:
        ``knowledgebase.injection``. Before the first index, ``""``.

        Raises:
            UsageError: ``message`` is not a string, an unknown ``mode``, a bad ``recent_messages``.
            TokenizerUnavailableError: the budget's tokenizer cannot load.
            StoreError: the index failed.
        """
        from hermes_workspace.application.retrieve import TURN_MODES, enrich_query, looks_workspace_relevant, user_texts

        _check_type("message", message, str)
        _check_type("mode", mode, (str, type(None)))
        if mode is not None and mode not in TURN_MODES:
            raise UsageError(f"unknown retrieval mode {mode!r}", hint=f"Use one of: {', '.join(TURN_MODES)}.")
        if isinstance(recent_messages, (str, bytes)) or not isinstance(recent_messages, (list, tuple)):
            raise UsageError(
                f"recent_messages must be a list of messages, got {type(recent_messages).__name__}",
                hint="Pass the previous user messages, oldest first: ['first question', 'second question'].",
            )
        user_texts(recent_messages)  # refuses a malformed item whatever the mode
        mode = mode or self._container.config().retrieval_mode
        if mode == "off" or not message.strip():
            return ""
        if mode == "gated" and not looks_workspace_relevant(message):
            return ""
        query = enrich_query(message, recent_messages)
        self._auto_index()
        try:
            pack = self._container.retrieve_context().execute(query, require_keyword_match=mode == "gated")
        except IndexNotFoundError:
            return ""
        return pack.text

    def workspace_tool(self, action: str, **kwargs: Any) -> str:
        """Seed 001's single agent tool, ``workspace(action=...)``, for hosts that register plain
        functions: runs ``action`` with ``kwargs`` and returns JSON text, never raises (except
        ``KeyboardInterrupt``). Actions and their arguments: ``status``; ``index``; ``list``
        (``path``, ``recursive``, ``limit``, ``offset``); ``search`` (``query``, ``path``, ``glob``,
        ``limit``, ``mode``, ``offset``, ``roots``, ``all_roots``, ``cwd``); ``retrieve`` (``query``, ``budget``,
        ``path``, ``glob``, ``mode``, ``max_chunks``, ``roots``, ``all_roots``, ``cwd``); ``read``
        (``target``: a handle or ``PATH:START-END``;
        ``budget``); ``more``
        (``cursor``); ``delete`` (``path``). A failure is ``{"error": {"code", "message", "hint"}}``.
        ``retrieve`` returns ``pack.serialize()`` exactly (within its budget)."""
        try:
            return self._tool(action, kwargs)
        except WorkspaceError as exc:
            return _error_json(exc.to_json())
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # a bug: the host's turn must go on
            from hermes_workspace.logs import get_logger

            get_logger("hermes_workspace.api").error("workspace_tool failed", action=action, exc_info=exc)
            return _error_json({"code": "internal_error", "message": f"unexpected {type(exc).__name__}: {exc}",
                                "hint": f"This is a bug; the traceback is in {self.log_file}."})

    def _tool(self, action: str, kwargs: dict[str, Any]) -> str:
        if not isinstance(action, str) or action not in TOOL_ACTIONS:
            raise UsageError(
                f"unknown action {action!r:.60}", hint=f"Use one of: {', '.join(TOOL_ACTIONS)}."
            )
        method = getattr(self, TOOL_ACTIONS[action], None)
        if method is None:
            error = WorkspaceError(
                f"the action {action!r} is not available in this version",
                hint=f"Available: {', '.join(a for a, m in TOOL_ACTIONS.items() if hasattr(self, m))}.",
            )
            error.code = "not_available"
            raise error
        try:
            inspect.signature(method).bind(**kwargs)
        except TypeError as exc:
            accepted = [p.name for p in inspect.signature(method).parameters.values()
                        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
            raise UsageError(
                f"bad arguments for {action}: {exc}",
                hint=f"{action} takes: {', '.join(accepted) or 'no arguments'}.",
            ) from None
        return _result_json(method(**kwargs))

    # -- freshness (issue 12): auto_index, watch ---------------------------------------------------

    def _auto_index(self) -> IndexSummary | None:
        """``knowledgebase.auto_index``: a catch-up run before a search when this workspace's
        debounce has passed (see :mod:`hermes_workspace.application.auto_index`). Never before
        the first index (building one can take minutes: that is ``index``'s job), never on an
        index folder this process cannot write, never waiting for another writer."""
        config = self._container.config()
        if not config.auto_index.enabled:
            return None
        if not self._container.store.overridden:
            index_path = self.index_path
            if not index_path.exists() or not os.access(index_path.parent, os.W_OK) \
                    or not os.access(index_path, os.W_OK):
                return None
        from hermes_workspace.application.auto_index import AutoIndex

        return AutoIndex(mark=self._container.index_mark(), index=lambda: self.index(workers=1),
                         enabled=True, debounce_seconds=config.auto_index.debounce_seconds).execute()

    def watch(
        self,
        *,
        stop: Any = None,
        on_batch: Callable[[WatchBatch], object] | None = None,
        catch_up: bool = True,
        debounce_ms: int | None = None,
        reconcile_minutes: float | None = None,
        workers: int | None = None,
    ) -> WatchSummary:
        """Keep the index fresh until ``stop.is_set()`` (a ``threading.Event`` or anything with
        ``is_set()``; ``None``: until ``KeyboardInterrupt``, which ends the watch as ``stop``
        does) and return a :class:`WatchSummary` of the whole watch.

        First a full run (``catch_up``; stat only for unchanged files) so that edits made before
        the watch are in; then, per burst of file events, a run of the changed paths only
        (deleted and renamed files included; a changed ignore file re-walks its folder), and a
        full run every ``reconcile_minutes`` (default ``knowledgebase.watch.reconcile_minutes``,
        10; 0: never). ``debounce_ms``: quiet time closing a batch (default
        ``knowledgebase.watch.debounce_ms``, 300). ``on_batch(batch)`` is called in this thread
        after every run (a :class:`WatchBatch`; ``batch.error`` when the run could not be done,
        e.g. ``index_busy``: another process writes the index; its paths are tried again).
        Editing config.yaml's roots restarts the watch on the new roots. ``workers``: as for
        :meth:`index`.

        Raises:
            UsageError: a bad argument.
            MissingExtraError: watchfiles (the ``workspace`` extra) is not installed.
            ConfigError: the config is invalid at the start.
            StoreError: the index cannot be written (disk full, read-only): the watch stops.
            WorkspaceError: the operating system refuses to watch (code ``watch_limit``).
        """
        from hermes_workspace.application.watching import WatchWorkspace

        _check_type("catch_up", catch_up, bool)
        _check_type("debounce_ms", debounce_ms, (int, type(None)))
        _check_type("reconcile_minutes", reconcile_minutes, (int, float, type(None)))
        _check_workers(workers)  # now: else every run of the watch would fail with it
        if debounce_ms is not None and not 1 <= debounce_ms <= 60_000:
            raise UsageError(f"debounce_ms must be >= 1 and <= 60000, got {debounce_ms}")
        if reconcile_minutes is not None and not 0 <= reconcile_minutes <= 7 * 24 * 60:
            raise UsageError(f"reconcile_minutes must be >= 0 and <= 10080 (a week), got {reconcile_minutes}")
        if stop is not None and not callable(getattr(stop, "is_set", None)):
            raise UsageError(f"stop must have is_set() (a threading.Event), got {type(stop).__name__}")
        if on_batch is not None and not callable(on_batch):
            raise UsageError(f"on_batch must be callable, got {type(on_batch).__name__}")
        import threading
        import time

        config = self._container.config()
        debounce = (debounce_ms if debounce_ms is not None else config.watch.debounce_ms) / 1000
        reconcile = reconcile_minutes if reconcile_minutes is not None else config.watch.reconcile_minutes
        feed = self._container.change_feed()
        mark = self._container.index_mark()
        # A project file holds the roots; the home config the rest: an edit of either counts.
        config_files = {self.home / "config.yaml", Path(self.config_source.path)}
        touched = [0.0]

        def heartbeat() -> None:
            # A running watch keeps the index fresh: searches need not index before they run.
            now = time.monotonic()
            if now - touched[0] >= 5.0:
                touched[0] = now
                mark.touch()

        use_case = WatchWorkspace(
            feed=feed,
            roots=self._indexed_roots,
            index_changed=lambda paths: self.index(paths=paths, workers=1),
            index_all=lambda: self.index(workers=workers),
            internal_dirs=self._container.internal_dirs(),
            config_stamp=lambda: tuple(_stat_stamp(f) for f in sorted(config_files)),
            debounce_seconds=debounce,
            tick_seconds=min(0.1, debounce / 2),  # how late a quiet period is noticed
            reconcile_seconds=reconcile * 60 if reconcile else None,
            catch_up=catch_up,
            on_batch=on_batch or (lambda batch: None),
            heartbeat=heartbeat,
        )
        return use_case.execute(stop if stop is not None else threading.Event())

    def _indexed_roots(self) -> list[Root]:
        """The roots an index run walks, config read anew: the primary workspace (unless
        ``workspace.enabled`` is false) and the added roots."""
        config = self._container.config()
        roots = config.all_roots(self.home)
        return roots if config.enabled else [r for r in roots if not r.primary]

    def status(self) -> StoreStatus:
        """Files, chunks, bytes on disk, the last run's exclusions and skipped files by reason,
        when the last index run finished (``last_indexed_at``), and ``stale_estimate``: how many
        indexed files changed on disk since, estimated by stat-ing a random sample of
        :data:`~hermes_workspace.application.catalog.STALE_SAMPLE` files (an estimate: a touched
        file counts as changed; ``doctor`` hashes). Before the first index, zeros with
        ``indexed=False``. Raises ``StoreError`` (damaged index)."""
        try:
            store = self._container.search_store()
            status = store.status()
        except IndexNotFoundError:
            return StoreStatus(files=0, chunks=0, size_bytes=0, indexed=False)
        from hermes_workspace.application.catalog import STALE_SAMPLE, sample_drift

        sample = sample_drift(list(store.file_records()), sample_size=STALE_SAMPLE, hash_changed=False)
        return replace(status, stale_estimate=sample.to_json())

    # -- catalog (issue 10): list, delete, doctor ---------------------------------------------------

    def list_files(
        self, path: str | os.PathLike[str] | None = None, *, recursive: bool = True, limit: int = 100, offset: int = 0
    ) -> FileListing:
        """Indexed files sorted by path, one page: under ``path`` (a folder, or a file; ``None``:
        all; relative paths are taken from the current folder), only those directly in it when
        ``recursive`` is False, from ``offset`` (0-based, 0..10,000,000), at most ``limit`` (1..1000). Each file
        has ``path, root, content_hash, size_bytes, modified_at, indexed_at, chunks, encoding``;
        the listing ``total``, ``offset``, ``limit`` and ``next_offset`` (``None`` on the last
        page).

        Raises:
            UsageError: a bad argument (``limit`` or ``offset`` out of range included).
            IndexNotFoundError: nothing was indexed yet.
        """
        _check_type("path", path, (str, os.PathLike, type(None)))
        _check_type("recursive", recursive, bool)
        _check_type("limit", limit, int)
        _check_type("offset", offset, int)
        return self._container.list_files().execute(path, recursive=recursive, limit=limit, offset=offset)

    def delete(self, path: str | os.PathLike[str]) -> DeleteResult:
        """Remove the file at ``path``, or every indexed file under the folder ``path``, from the
        index (never from disk), with their vectors; they stay out of later index runs until
        their content changes or ``add_root`` is called for a folder holding them. Takes the
        index lock, as :meth:`index` does.

        Raises:
            UsageError: ``path`` is not a non-empty string or path.
            NotIndexedError: nothing is indexed at or under ``path`` (exit 66).
            IndexBusyError: an index run is in progress.
            StoreError: the index cannot be written.
        """
        from hermes_workspace.application.catalog import absolute

        _check_type("path", path, (str, os.PathLike))
        target = absolute(path)  # before the lock: an empty path is a usage error, not a wait
        if not self.index_path.exists():
            raise NotIndexedError(f"nothing is indexed at or under {target}: there is no index yet",
                                  hint="Run `hermes-workspace index` first.")
        lock = self._container.index_lock()
        with lock.hold():
            return self._container.delete_files().execute(target)

    def doctor(self) -> DoctorReport:
        """Check the index without repairing or writing anything: SQLite and FTS5 integrity,
        schema version, vector provenance and dimensions, the tokenizer's rank file, the index
        lock, and drift between the index and the disk on a sample of up to 200 files. Each check
        is ``passed``, ``failed`` or ``incomplete``; ``report.ok`` is False when one failed.
        Never raises for a damaged index (that is a failed check)."""
        report = self._container.doctor().execute()
        return replace(report, checks=(*report.checks, self._plugin_check()))

    def _plugin_check(self) -> DoctorCheck:
        """``doctor``'s ``plugins`` check: failed when a configured plugin is broken (its default
        stands in) or config names one that is not installed."""
        try:
            plugins = self._container.plugins()
            plugins.chunker()
            plugins.source()
            plugins.converters()
            self._container.embedder()
            self._container.reranker()
        except WorkspaceError as exc:
            return DoctorCheck("plugins", "failed", exc.message, {"code": exc.code})
        broken = plugins.broken_notes
        if broken:
            return DoctorCheck("plugins", "failed", "; ".join(broken), {"broken": len(broken)})
        ignored = plugins.option_notes()
        if ignored:
            return DoctorCheck("plugins", "passed", "every configured plugin loads; " + "; ".join(ignored),
                               {"ignored_options": len(ignored)})
        return DoctorCheck("plugins", "passed", "every configured plugin loads")

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

    def status_report(self) -> dict[str, Any]:
        """What ``hermes-workspace status`` prints: ``{"config"`` (:attr:`config_source` as JSON), ``"index_path", "indexed", "files", "chunks",
        "size_bytes", "excluded", "semantic"`` (:meth:`semantic_status`), ``"last_indexed_at",
        "skipped_last_run", "stale_estimate", "storage"`` (the index size as
        ``knowledgebase.storage.max_size`` counts it, against the limits: ``{"size_bytes",
        "max_size_bytes", "free_disk_bytes", "min_free_disk_bytes"}``, 0 for a limit turned off)``}``
        plus ``"note"`` before the first index. The same
        object is the MCP ``status`` tool's result and ``workspace_tool("status")``'s.

        Raises:
            StoreError: the index is damaged.
        """
        status = self.status()
        data: dict[str, Any] = {
            "config": self.config_source.to_json(),
            "index_path": str(self.index_path),
            "indexed": status.indexed,
            "files": status.files,
            "chunks": status.chunks,
            "size_bytes": status.size_bytes,
            "excluded": dict(sorted(status.excluded.items())),
            "semantic": self.semantic_status(),
            "last_indexed_at": status.last_indexed_at,
            "skipped_last_run": dict(sorted(status.skipped.items())),
            "stale_estimate": status.stale_estimate,
        }
        if not status.indexed:
            data["note"] = "nothing is indexed yet: run `hermes-workspace index`"
        data["roots"] = self._root_status(data["semantic"]["status"] != "disabled")
        data["storage"] = self._storage_status(status.indexed)
        data["plugins"] = self._plugin_status()
        return data

    def _root_status(self, semantic: bool) -> list[dict[str, Any]]:
        """``status``'s ``roots``: per root (as :meth:`roots`), ``{"root", "path", "indexed_at"}``
        plus its coverage row (``state`` and ``unsearched`` or ``reason``, as in a search's
        ``scope["coverage"]``); chunks without a vector count when an embedder is configured."""
        roots = self.roots()
        try:
            search = self._container.search_workspace()
        except IndexNotFoundError:  # before the first index: every root not indexed, or not there
            probe = self._container.root_probe()
            rows = [RootCoverage.of(str(r.name), None, probe(r.path)) for r in roots]
            recorded: dict[Path, Any] = {}
        else:
            rows = search.root_coverage(roots, semantic=semantic)
            recorded = search.store.root_counts()
        return [
            {"root": row.root, "path": str(root.path),
             "indexed_at": recorded[root.path].indexed_at if root.path in recorded else None, **row.to_json()}
            for root, row in zip(roots, rows, strict=True)
        ]

    def _storage_status(self, indexed: bool) -> dict[str, Any]:
        """``status``'s ``storage``: the index size against ``knowledgebase.storage``
        (:func:`~hermes_workspace.container.storage_report`)."""
        from hermes_workspace.container import storage_report

        container = self._container
        store = container.search_store() if indexed else None
        return storage_report(container.config(), container.index_dir(), container.index_path(), store)

    def _plugin_status(self) -> dict[str, Any]:
        """``status``'s ``plugins``: ``{"signature", "indexed_signature", "up_to_date", "notes"}``
        (see :meth:`plugins`), without importing the plugins nobody selected."""
        plugins = self._container.plugins()
        recorded = self._recorded_plugins()  # first: the bundle names the store opened (after a fallback)
        if not self._container.chunker.overridden:
            signature = plugins.bundle()["signature"]
            plugins.converters(builtin=False)  # built lazily while indexing: a broken one would go unseen
        else:
            signature = None
        indexed = (recorded or {}).get("signature")
        return {
            "signature": signature,
            "indexed_signature": indexed,
            "up_to_date": None if indexed is None or signature is None else indexed == signature,
            "notes": plugins.notes,
        }

    # -- project-history recall (issue 13) ------------------------------------------------------

    def history_search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        session_id: str | None = None,
        project: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        limit: int | None = None,
        context: int | None = None,
        max_tokens: int | None = None,
    ) -> HistorySearchResult:
        """``project_history_search`` (seed 003): search one project's history in the host's
        session store (``knowledgebase.history``), picking up new messages first.

        The project is that of ``session_id`` (the conversation's session in the host), or
        ``project`` (a project id or name of the host's registry, or ``git:<folder>``; not both),
        else that of the folder ``cwd`` (its registered project, else its git repository; the
        conversation's location, used only when neither is given). One of the three is required
        (the process's working directory is never looked at: pass ``os.getcwd()`` to behave as
        the CLI). A conversation in no project gets an empty result with the reason.
        ``mode``: ``hybrid`` (default), ``keyword`` or ``semantic``; ``limit`` hits (default
        ``knowledgebase.history.limit``); ``context`` neighbouring messages on each side;
        ``max_tokens`` the budget of the whole response (o200k tokens). ``to_json()`` gives seed
        003's response object.

        Raises:
            UsageError: no scope given, both ``session_id`` and ``project``, an unknown mode or
                project (``git:<folder>`` included: a folder that is no repository root here and
                that no session is in), an empty query, a number out of range.
            HistoryUnavailableError: the host's store cannot be read.
            StoreError: our history index cannot be written.
        """
        from hermes_workspace.application.history import HistoryRequest

        _check_type("query", query, str)
        _check_type("mode", mode, str)
        for name, value in (("session_id", session_id), ("project", project)):
            _check_type(name, value, (str, type(None)))
        _check_type("cwd", cwd, (str, os.PathLike, type(None)))
        for name, value in (("limit", limit), ("context", context), ("max_tokens", max_tokens)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise UsageError(f"{name} must be a whole number or None, got {_shown(value)}")
            if isinstance(value, int) and value.bit_length() > _INT_BITS:
                raise UsageError(f"{name} is far out of range")
        for name, value in (("session_id", session_id), ("project", project)):
            if value is not None and not value.strip():
                raise UsageError(f"{name} is empty", hint=f"Leave {name} out, or give one.")
        if session_id and project:
            # Two names for the project to search: refused rather than one silently ignored.
            raise UsageError("give session_id or project, not both",
                             hint="session_id (--session) searches the conversation's own project, project "
                                  "(--project) a named one; cwd is used only when neither is given.")
        if not (session_id or project or (cwd is not None and os.fspath(cwd).strip())):
            raise UsageError("history_search needs the conversation's session_id, a project, or a cwd",
                             hint="Pass cwd=os.getcwd() to search the project of the current folder.")
        request = HistoryRequest(query, mode=mode, session_id=session_id or None, project=project or None,
                                 cwd=Path(cwd) if cwd is not None and os.fspath(cwd).strip() else None,
                                 limit=limit, context_messages=context, max_tokens=max_tokens)
        return self._container.search_history().execute(request)

    def history_index(self, *, full: bool = False,
                      progress: Callable[[int, int], object] | None = None) -> dict[str, Any]:
        """``history index``: pick up the host's new, changed and deleted messages (``full``:
        re-read every session), then embed every pending message part the user allows (all with
        a local model; with a remote one only projects with a recorded consent). ``progress`` is
        called with ``(done, total)`` message parts embedded. Returns ``{"sync": {...},
        "embedded", "pending", "skipped_for_consent", "semantic_status"}`` (plus ``error`` when the
        embedder failed) and ``index`` (our index file).

        Raises:
            HistoryUnavailableError, StoreError: as :meth:`history_search`.
        """
        from hermes_workspace.application.history import index_project_history

        _check_type("full", full, bool)
        container = self._container
        embedder = container.history_embedder()
        report = index_project_history(
            container.sync_history(), container.session_history(), container.history_index(),
            container.consent_store(), embedder=embedder,
            remote_service=container.history_settings().remote_service, full=full, progress=progress,
        )
        report["index"] = str(container.history_index_path())
        return report

    def history_status(self) -> dict[str, Any]:
        """What ``history status`` prints: ``database`` (the host store), ``index`` (our file),
        ``counts`` (``sessions, messages, chunks, vectors`` indexed), ``host`` (``projects``,
        ``sessions``, ``messages`` of the indexed roles), ``embedder`` (its provider or ``None``),
        ``remote_service``, ``consents`` and ``notes``. Reads the host and our index; writes nothing.

        Raises:
            HistoryUnavailableError: the host's store cannot be read.
        """
        container = self._container
        settings = container.settings().history
        history = container.session_history()
        embedder = container.history_embedder()
        service = container.history_settings().remote_service
        stats = history.session_stats(settings.roles)  # also checks the messages table's names
        host = {"projects": len(history.projects()), "sessions": len(history.sessions()),
                "messages": sum(stat.messages for stat in stats.values())}
        notes = []
        if not host["projects"]:
            notes.append("the host's project registry is empty or absent: sessions belong to their git repository, "
                         "or to no project")
        if not host["messages"]:
            notes.append(f"the host store has no message of the roles indexed ({', '.join(settings.roles) or 'any'}); "
                         "check knowledgebase.history.roles")
        counts = container.history_index().counts()
        if embedder is not None and counts["vectors"] < counts["chunks"]:
            notes.append("message parts without a vector: sessions in no project are never embedded; others wait "
                         "for `history index` or the next search of their project" +
                         (", and a consent for the remote service" if service else ""))
        return {
            "database": str(settings.database or self.home / "state.db"),
            "provider": settings.provider,
            "index": str(container.history_index_path()),
            "counts": counts,
            "host": host,
            "embedder": None if embedder is None else container.settings().embedder.provider,
            "remote_service": service,
            "consents": [{"service": s, "project": p, "granted_at": at}
                         for s, p, at in container.consent_store().consents()],
            "notes": notes,
        }

    def history_consent(self, project: str, *, service: str | None = None, revoke: bool = False) -> dict[str, Any]:
        """Record (or with ``revoke`` forget) the user's consent to send ``project``'s history to
        the remote embedding ``service`` (default: the configured one, ``knowledgebase.embedder.base_url``).
        Seed 003 section 5: an agent asks the user first, in the conversation, naming the service,
        what is sent and the project; only the user's yes is recorded. ``project`` is a project id
        of the host's registry or ``git:<folder>`` (as ``history_search`` reports it); with
        ``revoke``, ``*`` forgets every project of the service. Returns ``{"service", "project",
        "granted"}`` (``revoked``: how many records went).

        Raises:
            UsageError: no remote service is configured and none is given; an empty project.
            ConfigError, ConfigWriteError: the consent file is damaged or cannot be written.
        """
        _check_type("project", project, str)
        _check_type("service", service, (str, type(None)))
        container = self._container
        service = (service or container.history_settings().remote_service or "").strip().rstrip("/")
        if not service:
            raise UsageError("no remote embedding service is configured, so there is nothing to consent to",
                             hint="A local embedder needs no consent; name the service (--service, or service=) "
                                  "to record a consent in advance.")
        project = project.strip()
        if not project:
            raise UsageError("give the project the consent is for (its id, or git:<folder>)")
        store = container.consent_store()
        if revoke:
            removed = store.revoke(service, None if project == "*" else project)
            return {"service": service, "project": project, "granted": False, "revoked": removed}
        project = self._consent_project(project)
        store.grant(service, project)
        return {"service": service, "project": project, "granted": True}

    def _consent_project(self, wanted: str) -> str:
        """The project id a consent is recorded under, the one ``history_search`` reports for
        ``wanted`` (a registered project's id or name, or ``git:<folder>``, which is the registered
        project holding that folder when there is one).

        Raises:
            UsageError: no registered project has that id or name; a repository no session of the
                host is in (a typo would be recorded and never used).
        """
        from hermes_workspace.application.history import project_folders, repository_scope
        from hermes_workspace.domain.history import AUTO_PREFIX, sessions_in_scope

        history = self._container.session_history()
        folders = project_folders(history)
        if wanted.startswith(AUTO_PREFIX):
            scope = repository_scope(folders, wanted[len(AUTO_PREFIX):])
            if scope.kind == "auto" and not sessions_in_scope(folders, history.sessions(), scope):
                raise UsageError(f"no session of the host is in the repository {wanted!r}: nothing was recorded",
                                 hint="Use project.id exactly as history search reports it.")
            return scope.id or wanted
        project = folders.find(wanted)
        if project is None:
            names = ", ".join(f"{p.id} ({p.name})" for p in folders.projects.values()) or "none"
            raise UsageError(f"no project {wanted!r} in the host's registry: nothing was recorded",
                             hint=f"Use project.id as history search reports it. Registered: {names}; "
                                  "a git repository is git:<folder>.")
        return project.id

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


def _changed_paths(paths: object) -> list[Path]:
    """``index(paths=...)`` as absolute paths (from the current folder, ``~`` expanded, not
    resolved: the index keeps the paths its walk saw).

    Raises:
        UsageError: ``paths`` is a single path or not a collection of non-empty paths.
    """
    from hermes_workspace.application.catalog import absolute

    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Iterable):
        raise UsageError(f"paths must be a list of paths (or None for every root), got {type(paths).__name__}",
                         hint="Pass paths=[\"docs/a.md\"], even for one path.")
    given = list(paths)
    for path in given:
        _check_type("paths[]", path, (str, os.PathLike))
    return [absolute(path) for path in given]
