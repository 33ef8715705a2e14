"""The composition root: every adapter and use case is wired here, and only here.

Entry points build one :class:`Container` per process (``build_container(home)``) and ask it for
use cases. Tests and API users replace adapters with ``container.<provider>.override(...)`` (the
Python API's ``Workspace.open(..., store=fake)`` does exactly that). No ``@inject``/``wire()``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from dependency_injector import containers, providers

from hermes_workspace.adapters.charset_decoder import CharsetDecoder
from hermes_workspace.adapters.chonkie_chunker import ChonkieChunker
from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.adapters.filesystem_layout import FilesystemLayout
from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.process_pool import ProcessTaskPool, available_cpus
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.adapters.yaml_config import YamlConfigRepository
from hermes_workspace.application.indexing import FileTools, IndexWorkspace
from hermes_workspace.application.roots import AddRoot, ListRoots, RemoveRoot
from hermes_workspace.application.search import SearchWorkspace
from hermes_workspace.domain import constants as c
from hermes_workspace.domain.config import WorkspaceConfig


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The Hermes home: ``home`` if given, else ``$HERMES_HOME``, else ``~/.hermes``; absolute."""
    if home is None or str(home) == "":
        home = os.environ.get(c.HERMES_HOME_ENV) or Path.home() / c.DEFAULT_HOME_DIRNAME
    return Path(home).expanduser().absolute()


def _load(repository: YamlConfigRepository) -> WorkspaceConfig:
    return repository.load()


def _open_store(path: Path, readonly: bool = False) -> Iterator[SqliteFts5Store]:
    store = SqliteFts5Store(path, readonly=readonly)
    try:
        yield store
    finally:
        store.close()


def _index_dir(config: WorkspaceConfig, home: Path) -> Path:
    return config.primary_path(home) / c.INDEX_DIRNAME


INDEX_WORKERS_ENV = "HERMES_INDEX_WORKERS"
"""Worker processes for reading and chunking during ``index``: ``1`` keeps everything in the
indexing process; ``auto``: one per available CPU, at most :data:`MAX_INDEX_WORKERS`. Unset: the
CLI uses ``auto``; the Python API uses 1 unless ``Workspace.index(workers=...)`` says otherwise,
because worker processes started by a library would re-import a caller's unguarded script."""

MAX_INDEX_WORKERS = 4
"""Beyond this the single writer (SQLite) is the bottleneck, and each worker holds its own
chunkers (tens of MB)."""

_WORKER_PRELOAD = (
    "hermes_workspace.container",
    "hermes_workspace.adapters.chonkie_chunker",
    "chonkie",
    "tree_sitter_language_pack",
)
"""Imported once by the fork server, so that workers start warm."""


def auto_index_workers() -> int:
    """One worker per available CPU, at most :data:`MAX_INDEX_WORKERS`."""
    return min(MAX_INDEX_WORKERS, available_cpus())


def index_workers(default: int = 1) -> int:
    """Workers from :data:`INDEX_WORKERS_ENV` (a number, or ``auto``), else ``default``."""
    value = os.environ.get(INDEX_WORKERS_ENV, "").strip().lower()
    if value == "auto":
        return auto_index_workers()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            pass
    return default


def make_index_pool(workers: int) -> ProcessTaskPool | None:
    """A process pool of ``workers`` for indexing, or ``None`` (in-process) below 2."""
    if workers < 2:
        return None
    return ProcessTaskPool(workers, in_flight_per_worker=2, items_per_call=4, preload=_WORKER_PRELOAD)


def _index_pool() -> ProcessTaskPool | None:
    return make_index_pool(index_workers())


def build_worker_tools(max_file_bytes: int, chunk_size: int, overlap: int) -> FileTools:
    """The reading and chunking adapters, built inside a worker process (the same as the
    ``file_source``, ``decoder``, ``chunker`` and ``fallback_chunker`` providers build)."""
    return FileTools(
        source=FilesystemSource(max_file_bytes=max_file_bytes),
        decoder=CharsetDecoder(),
        chunker=ChonkieChunker(chunk_size=chunk_size, overlap=overlap),
        fallback_chunker=ChonkieChunker(chunk_size=chunk_size, overlap=overlap, mode="text"),
    )


def _worker_tools(settings: WorkspaceConfig, *adapters: providers.Provider) -> Callable[[], FileTools] | None:
    """A picklable recipe for :func:`build_worker_tools` with this container's settings, or
    ``None`` (no worker processes) when one of those adapters was replaced: a replacement (a
    test's fake, an API user's own chunker) exists in this process only."""
    if any(provider.overridden for provider in adapters):
        return None
    return partial(build_worker_tools, settings.max_file_bytes, settings.chunking.chunk_size, settings.chunking.overlap)


class Container(containers.DeclarativeContainer):
    """Providers: ``home`` (a :class:`Path`, required), adapters as singletons, use cases as
    factories. ``config`` reloads the file on every use; ``settings`` is the first load, used to
    build adapters once per process."""

    home = providers.Dependency(instance_of=Path)

    config_repository = providers.Singleton(
        YamlConfigRepository, path=providers.Callable(lambda h: h / c.CONFIG_FILENAME, home)
    )
    config = providers.Callable(_load, config_repository)
    settings = providers.Singleton(_load, config_repository)

    index_dir = providers.Callable(_index_dir, settings, home)
    index_path = providers.Callable(lambda d: d / c.INDEX_FILENAME, index_dir)
    log_file = providers.Callable(lambda h: h / c.LOGS_DIRNAME / c.LOG_FILENAME, home)

    file_source = providers.Singleton(FilesystemSource, max_file_bytes=settings.provided.max_file_bytes)
    decoder = providers.Singleton(CharsetDecoder)
    chunker = providers.Singleton(
        ChonkieChunker,
        chunk_size=settings.provided.chunking.chunk_size,
        overlap=settings.provided.chunking.overlap,
    )
    fallback_chunker = providers.Singleton(
        ChonkieChunker,
        chunk_size=settings.provided.chunking.chunk_size,
        overlap=settings.provided.chunking.overlap,
        mode="text",
    )
    # Resources, so that `shutdown_resources()` closes the connections that were opened, and only those.
    store = providers.Resource(_open_store, path=index_path)
    search_store = providers.Resource(_open_store, path=index_path, readonly=True)
    index_lock = providers.Singleton(FileIndexLock, path=providers.Callable(lambda d: d / c.LOCK_FILENAME, index_dir))
    layout = providers.Singleton(FilesystemLayout)

    # Reading and chunking in worker processes (HERMES_INDEX_WORKERS); the workers build their own
    # adapters from `worker_tools`, which is None when one of them was replaced in this process.
    index_pool = providers.Callable(_index_pool)
    worker_tools = providers.Callable(
        _worker_tools, settings, file_source.provider, decoder.provider, chunker.provider, fallback_chunker.provider
    )
    index_workspace = providers.Factory(
        IndexWorkspace,
        config=config,
        home=home,
        source=file_source,
        decoder=decoder,
        chunker=chunker,
        fallback_chunker=fallback_chunker,
        store=store,
        lock=index_lock,
        layout=layout,
        pool=index_pool,
        worker_tools=worker_tools,
    )
    search_workspace = providers.Factory(
        SearchWorkspace, store=search_store, default_limit=config.provided.default_limit
    )
    list_roots = providers.Factory(ListRoots, config=config_repository, home=home)
    add_root = providers.Factory(AddRoot, config=config_repository, home=home)
    remove_root = providers.Factory(RemoveRoot, config=config_repository, home=home)


def build_container(home: str | os.PathLike[str] | None = None) -> Container:
    """A container for the workspace of ``home`` (see :func:`resolve_home`)."""
    container = Container()
    container.home.override(providers.Object(resolve_home(home)))
    return container
