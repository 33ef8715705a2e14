"""The composition root: every adapter and use case is wired here, and only here.

Entry points build one :class:`Container` per process (``build_container(home)``) and ask it for
use cases. Tests and API users replace adapters with ``container.<provider>.override(...)`` (the
Python API's ``Workspace.open(..., store=fake)`` does exactly that). No ``@inject``/``wire()``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from dependency_injector import containers, providers

from hermes_workspace.adapters.charset_decoder import CharsetDecoder
from hermes_workspace.adapters.chonkie_chunker import ChonkieChunker
from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.adapters.filesystem_layout import FilesystemLayout
from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.adapters.yaml_config import YamlConfigRepository
from hermes_workspace.application.indexing import IndexWorkspace
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
