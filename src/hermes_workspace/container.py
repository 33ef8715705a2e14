"""The composition root: every adapter and use case is wired here, and only here.

Entry points build one :class:`Container` per process (``build_container(home)``) and ask it for
use cases. Tests and API users replace adapters with ``container.<provider>.override(...)`` (the
Python API's ``Workspace.open(..., store=fake)`` does exactly that). No ``@inject``/``wire()``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from dependency_injector import containers, providers

from hermes_workspace.adapters.yaml_config import ProjectConfigRepository, YamlConfigRepository
from hermes_workspace.domain import constants as c
from hermes_workspace.domain.errors import ConfigError, ConverterUnavailableError, UnknownPluginError, UsageError
from hermes_workspace.domain.plugins import PluginContext
from hermes_workspace.domain.project_config import ConfigSource, project_index_dir
from hermes_workspace.registry import ChunkerPlan, PluginBrokenError, PluginRegistry, PluginSelection, load_target

if TYPE_CHECKING:
    from hermes_workspace.adapters.process_pool import ProcessTaskPool
    from hermes_workspace.adapters.sqlite_result_sets import SqliteResultSets
    from hermes_workspace.application.conversion import Conversions
    from hermes_workspace.application.embedding import EmbedChunks
    from hermes_workspace.application.file_processing import FileTools
    from hermes_workspace.application.history import HistorySettings
    from hermes_workspace.application.retrieve import RetrieveContext
    from hermes_workspace.application.search import RetrievalSettings, SearchWorkspace, SemanticSide
    from hermes_workspace.application.storage_guard import StorageGuard
    from hermes_workspace.application.verification import FreshnessMarker
    from hermes_workspace.domain.catalog import DoctorCheck
    from hermes_workspace.domain.config import WorkspaceConfig
    from hermes_workspace.domain.model import Root
    from hermes_workspace.domain.ports import (
        Chunker,
        Converter,
        Embedder,
        HistoryIndex,
        IndexStore,
        ResultSetStore,
        SessionHistory,
        TokenCounter,
        VectorIndex,
    )


def lazy(target: str) -> Callable[..., Any]:
    """A callable standing for ``target`` (``module:attribute``, entry-point syntax) that imports
    it on its first call and then calls it: a command imports only the adapters and use cases it
    builds (a ``search`` never imports the indexer, the decoder, the chunkers or the token
    counter). Raises what importing or calling the target raises."""
    resolved: list[Any] = []

    def build(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            resolved.append(load_target(target))
        return resolved[0](*args, **kwargs)

    build.__name__ = build.__qualname__ = target.rpartition(":")[2]
    build.__doc__ = f"Imports and calls {target}."
    return build


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The Hermes home: ``home`` if given, else ``$HERMES_HOME`` (an empty value counts as unset),
    else ``~/.hermes``; absolute. It need not exist yet.

    Raises:
        UsageError: ``home`` is an empty string, or names something that is not a folder.
        ConfigError: ``$HERMES_HOME`` names something that is not a folder.
    """
    if home is not None:
        if not str(home).strip():
            raise UsageError("the home folder is empty", hint="Give a folder, or leave it out for $HERMES_HOME or ~/.hermes.")
        return _folder(Path(home).expanduser().absolute(), UsageError, "the home folder")
    from_env = os.environ.get(c.HERMES_HOME_ENV, "").strip()
    if from_env:
        return _folder(Path(from_env).expanduser().absolute(), ConfigError, c.HERMES_HOME_ENV)
    return (Path.home() / c.DEFAULT_HOME_DIRNAME).absolute()


def _folder(path: Path, error: type[UsageError] | type[ConfigError], what: str) -> Path:
    if path.exists() and not path.is_dir():
        raise error(f"{what} {path} is not a folder", hint="Point it at a folder (it is created when missing).")
    return path


def _load(repository: YamlConfigRepository) -> WorkspaceConfig:
    return repository.load()


def home_config_source(home: Path) -> ConfigSource:
    """``home/config.yaml``, found as the home config (no discovery)."""
    return ConfigSource(home / c.CONFIG_FILENAME, "home", False)


def _project_dir(source: ConfigSource, home: Path) -> Path | None:
    """The project's folder under ``home/projects`` (its index, lock and converted texts), keyed by
    the config file's real path; ``None`` for the home config."""
    if not source.project:
        return None
    return project_index_dir(home, Path(os.path.realpath(source.path)))


def _config_repository(source: ConfigSource, home: Path, project_dir: Path | None) -> YamlConfigRepository:
    """The repository of the config in use: HERMES_HOME's config.yaml, or a project config laid
    over it (edits go to the project file; its lock in the project's folder under HERMES_HOME)."""
    home_repository = YamlConfigRepository(home / c.CONFIG_FILENAME)
    if project_dir is None:
        return YamlConfigRepository(source.path, home=home) if source.path != home / c.CONFIG_FILENAME else home_repository
    return ProjectConfigRepository(source.path, home_config=home_repository, lock_dir=project_dir, found=source.found)


def _open_store(path: Path, plugins: PluginSelection, readonly: bool = False) -> Iterator[IndexStore]:
    """The store of ``knowledgebase.store.provider`` (a plugin), closed when the resource is."""
    store = plugins.open_store(path, readonly)
    try:
        yield store
    finally:
        store.close()


def _open_result_sets(path: Path, config: WorkspaceConfig) -> Iterator[SqliteResultSets]:
    from hermes_workspace.adapters.sqlite_result_sets import SqliteResultSets

    sets = SqliteResultSets(path, ttl_seconds=config.handles.ttl_hours * 3600, max_sets=config.handles.max_sets)
    try:
        yield sets
    finally:
        sets.close()


def _index_dir(config: WorkspaceConfig, home: Path, project_dir: Path | None = None) -> Path:
    """``<primary workspace>/.index``, or for a project config its folder under
    ``home/projects`` (never inside the repository)."""
    return project_dir if project_dir is not None else config.primary_path(home) / c.INDEX_DIRNAME


INDEX_MARK_FILENAME = "last_index.mark"
"""In the index folder: its modification time is when this workspace's index was last brought up
to date (a full run, an automatic one, or a running watch), for ``knowledgebase.auto_index``."""


def _internal_dirs(index_dir: Path, home: Path) -> list[Path]:
    """The workspace's own folders, never indexed even under a root that holds them: the index,
    the logs (queries and paths) and the derived model files."""
    return [index_dir, home / c.LOGS_DIRNAME, models_dir(home)]


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
    "hermes_workspace.adapters.builtin_plugins",
    "hermes_workspace.adapters.tree_sitter_chunker",
    "hermes_workspace.adapters.filesystem_source",
    "hermes_workspace.adapters.chonkie_chunker",
    "chonkie",
    "tree_sitter_language_pack",
)
"""Imported once by the fork server, so that workers start warm."""


def auto_index_workers() -> int:
    """One worker per available CPU, at most :data:`MAX_INDEX_WORKERS`."""
    from hermes_workspace.adapters.process_pool import available_cpus

    return min(MAX_INDEX_WORKERS, available_cpus())


WORKERS_LIMIT = 64
"""Most worker processes one index run may ask for: each one holds its own chunkers (tens of MB)
and the single writer is saturated long before (see :data:`MAX_INDEX_WORKERS`)."""


def index_workers(default: int = 1) -> int:
    """Workers from :data:`INDEX_WORKERS_ENV` (a whole number from 1 to :data:`WORKERS_LIMIT`, or
    ``auto``), else ``default`` when it is unset or empty.

    Raises:
        ConfigError: the variable holds anything else (``abc``, ``0``, ``2.5``).
    """
    value = os.environ.get(INDEX_WORKERS_ENV, "").strip().lower()
    if not value:
        return default
    if value == "auto":
        return auto_index_workers()
    if value.isdecimal() and 1 <= int(value) <= WORKERS_LIMIT:
        return int(value)
    raise ConfigError(
        f"{INDEX_WORKERS_ENV} must be a whole number from 1 to {WORKERS_LIMIT} or 'auto', got {value!r}",
        hint=f"Unset it, or set e.g. {INDEX_WORKERS_ENV}=2 (1: no worker processes).",
    )


def make_index_pool(workers: int) -> ProcessTaskPool | None:
    """A process pool of ``workers`` for indexing, or ``None`` (in-process) below 2."""
    if workers < 2:
        return None
    from hermes_workspace.adapters.process_pool import ProcessTaskPool

    return ProcessTaskPool(workers, in_flight_per_worker=2, items_per_call=4, preload=_WORKER_PRELOAD)


def _index_pool() -> ProcessTaskPool | None:
    return make_index_pool(index_workers())


def build_worker_tools(source: tuple[str, PluginContext], chunkers: ChunkerPlan, chunk_size: int,
                       overlap: int, converters: ConverterPlan | None = None) -> FileTools:
    """The reading, converting and chunking adapters, built inside a worker process from plugin
    targets and contexts (picklable), the same as the ``file_source``, ``decoder``, ``chunker``,
    ``fallback_chunker`` and ``conversions`` providers build in this process: a third-party
    chunker, converter or source chosen in config runs in the workers too."""
    from hermes_workspace.adapters.charset_decoder import CharsetDecoder
    from hermes_workspace.application.file_processing import FileTools

    target, context = source
    factory = load_target(target)
    return FileTools(
        source=getattr(factory, "from_context", factory)(context),
        decoder=CharsetDecoder(),
        chunker=chunkers.build(),
        fallback_chunker=_text_chunker(chunk_size, overlap),
        conversions=converters.build() if converters is not None and converters.selection else None,
    )


def _text_chunker(chunk_size: int, overlap: int) -> Chunker:
    """The fallback chunker: the built-in one on the document path for every file."""
    from hermes_workspace.adapters.tree_sitter_chunker import TreeSitterChunker

    return TreeSitterChunker(chunk_size=chunk_size, overlap=overlap, mode="text")


def _fallback_chunker(settings: WorkspaceConfig) -> Chunker:
    return _text_chunker(settings.chunking.chunk_size, settings.chunking.overlap)


def _worker_tools(settings: WorkspaceConfig, plugins: PluginSelection, index_dir: Path,
                  *adapters: providers.Provider) -> Callable[[], FileTools] | None:
    """A picklable recipe for :func:`build_worker_tools` (plugin targets and contexts, not
    objects), or ``None`` (no worker processes) when one of those adapters was replaced: a
    replacement (a test's fake, an API user's own chunker object) exists in this process only."""
    if any(provider.overridden for provider in adapters):
        return None
    return partial(build_worker_tools, plugins.source_recipe(), plugins.chunker_plan(),
                   settings.chunking.chunk_size, settings.chunking.overlap,
                   converter_plan(plugins, conversion_cache_dir(index_dir)))


# -- document converters (PDF, DOCX, PPTX, XLSX, EPUB; the `documents` extra) ---------------------------

def conversion_cache_dir(index_dir: Path) -> Path:
    """``<index_dir>/converted``: converted texts of documents, by content hash."""
    from hermes_workspace.adapters.filesystem_conversion_cache import CACHE_DIRNAME

    return index_dir / CACHE_DIRNAME


def load_converter(name: str, target: str, context: PluginContext) -> Converter:
    """Converter plugin ``name`` built from its entry-point ``target`` and ``context``.

    Raises:
        ConverterUnavailableError: it cannot be imported or built (its library is not installed:
            the adapter's own error, with the install hint; anything else: the error's message).
    """
    from hermes_workspace.registry import PluginEntry

    entry = PluginEntry(category="converters", name=name, target=target)
    try:
        return PluginRegistry([entry]).build(entry, context)
    except PluginBrokenError as exc:
        cause = exc.__cause__
        if isinstance(cause, ConverterUnavailableError):
            raise cause from None
        raise ConverterUnavailableError(exc.message, hint=_broken_converter_hint(name)) from exc


def _broken_converter_hint(name: str) -> str:
    return (f"Fix or reinstall the package that provides the {name!r} converter (`hermes-workspace plugins` shows "
            f"its error), or turn its suffixes off with `none` under knowledgebase.converters.")


def make_converter(name: str, home: Path | None = None) -> Converter:
    """Converter plugin ``name`` as the installed registry finds it, built with a context of
    ``home`` (default: :func:`resolve_home`) and no options (tools, benchmarks).

    Raises:
        UnknownPluginError: no converter of that name is installed.
        ConverterUnavailableError: it cannot be imported or built.
    """
    home = home if home is not None else resolve_home()
    entry = PluginRegistry().find("converters", name)
    context = PluginContext(category="converters", name=name, home=home, models_dir=models_dir(home))
    return load_converter(name, entry.target, context)


@dataclass(frozen=True, slots=True)
class ConverterPlan:
    """The converters of ``knowledgebase.converters`` as picklable recipes: ``selection``
    (suffix, name) pairs, ``recipes`` (name, entry-point target, context) triples, and the cache
    folder (``None``: no cache)."""

    selection: tuple[tuple[str, str], ...]
    recipes: tuple[tuple[str, str, PluginContext], ...]
    cache_dir: Path | None = None
    missing: tuple[tuple[str, str, str], ...] = ()
    """``(name, message, hint)`` of the converters config names that are not installed."""

    def build(self) -> Conversions:
        """The :class:`~hermes_workspace.application.conversion.Conversions` of this plan; each
        converter is built when a file of one of its suffixes is first met."""
        from hermes_workspace.adapters.filesystem_conversion_cache import FileConversionCache
        from hermes_workspace.application.conversion import Conversions

        recipes = {name: (target, context) for name, target, context in self.recipes}
        missing = {name: (message, hint) for name, message, hint in self.missing}

        def load(name: str) -> Converter:
            if name in missing:
                message, hint = missing[name]
                raise ConverterUnavailableError(message, hint=hint)
            target, context = recipes[name]
            return load_converter(name, target, context)

        cache = FileConversionCache(self.cache_dir) if self.cache_dir is not None else None
        return Conversions(dict(self.selection), load, cache)


def converter_plan(plugins: PluginSelection, cache_dir: Path | None) -> ConverterPlan:
    """The :class:`ConverterPlan` of ``plugins``' config.

    A converter name nothing installed has is not an error here (``index`` refuses it when it
    checks the config, see ``PluginSelection.check_indexing_names``): its files read as
    unavailable, so that ``read`` of other files still works.
    """
    selection = tuple(plugins.config.converters)
    recipes: list[tuple[str, str, PluginContext]] = []
    missing: list[tuple[str, str, str]] = []
    for name in sorted({name for _, name in selection}):
        try:
            target = plugins.registry.find("converters", name).target
        except UnknownPluginError as exc:
            missing.append((name, exc.message, exc.hint))
            continue
        recipes.append((name, target, plugins.context("converters", name)))
    return ConverterPlan(selection, tuple(recipes), cache_dir, tuple(missing))


def _conversions(plugins: PluginSelection, index_dir: Path) -> Conversions | None:
    plan = converter_plan(plugins, conversion_cache_dir(index_dir))
    return plan.build() if plan.selection else None


MODELS_DIRNAME = "models"
"""``HERMES_HOME/models``: files derived from models (the ONNX export of a local model)."""

MODELS_DIR_ENV = "HERMES_MODELS_DIR"
"""Where derived model files go instead of ``HERMES_HOME/models`` (share one export between
several homes)."""


def models_dir(home: Path) -> Path:
    """:data:`MODELS_DIR_ENV` if set, else ``home/models``."""
    value = os.environ.get(MODELS_DIR_ENV, "").strip()
    return Path(value).expanduser().absolute() if value else home / MODELS_DIRNAME


def _plugin_selection(registry: PluginRegistry, settings: WorkspaceConfig, home: Path,
                      index_dir: Path) -> PluginSelection:
    """The plugins config selects, checked against the installed ones (raises
    ``UnknownPluginError``, a ``ConfigError``, for a name not installed)."""
    return PluginSelection(registry, settings, home, models_dir(home), tuple(_internal_dirs(index_dir, home)))


def _chunker(plugins: PluginSelection) -> Chunker:
    return plugins.chunker()


def _embedder(plugins: PluginSelection) -> Embedder | None:
    """The embedder ``knowledgebase.embedder`` asks for, or ``None`` for provider ``none``.
    Adapters load their models lazily: building one costs nothing."""
    return plugins.embedder()


def _reranker(plugins: PluginSelection) -> Any:
    return plugins.reranker()


def _file_source(plugins: PluginSelection) -> Any:
    return plugins.source()


def _code_header(settings: WorkspaceConfig) -> bool:
    return settings.embedder.code_header


def _open_vector_index(path: Path, readonly: bool, code_header: bool) -> VectorIndex:
    from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex

    return SqliteVecIndex(path, readonly=readonly, code_header=code_header)


def vector_index_opener(path: Path, readonly: bool = False, code_header: bool = False) -> Callable[[], VectorIndex]:
    """A function opening the sqlite-vec index in the index file (raises
    ``EmbedderUnavailableError`` when sqlite-vec is not installed); ``code_header``:
    ``knowledgebase.embedder.code_header`` (what the writer gives the embedder)."""
    return partial(_open_vector_index, path, readonly, code_header)


def _semantic_side(
    settings: WorkspaceConfig, embedder: Embedder | None, open_vectors: Callable[[], VectorIndex]
) -> SemanticSide | None:
    if embedder is None:
        return None
    from hermes_workspace.application.search import SemanticSide

    status = "consent_required" if not settings.embedder.consented else None
    return SemanticSide(embedder=embedder, open_vectors=open_vectors, status=status)


def _embedding(
    settings: WorkspaceConfig, embedder: Embedder | None, open_vectors: Callable[[], VectorIndex]
) -> EmbedChunks | None:
    if embedder is None:
        return None
    from hermes_workspace.application.embedding import EmbedChunks

    return EmbedChunks(embedder=embedder, open_vectors=open_vectors, batch_size=settings.embedder.batch_size)


DEFAULT_VECTOR_DIMENSIONS = 384
"""Vector length the storage budget assumes before the first embedding pass when
``knowledgebase.embedder.dimensions`` does not say: that of the default local model
(all-MiniLM-L6-v2). The embedder is not asked: that can load a model or call an endpoint."""


def _vector_dimensions(settings: WorkspaceConfig, index_path: Path) -> int:
    """The vector length the budget reserves room for: configured, else recorded in the index by
    the last embedding pass, else :data:`DEFAULT_VECTOR_DIMENSIONS`."""
    if settings.embedder.dimensions:
        return settings.embedder.dimensions
    from hermes_workspace.adapters.sqlite_vec_index import stored_dimensions

    return stored_dimensions(index_path) or DEFAULT_VECTOR_DIMENSIONS


def storage_guard(
    config: WorkspaceConfig, index_dir: Path, index_path: Path, store: object, embedder: Embedder | None
) -> StorageGuard:
    """The :class:`StorageGuard` of ``knowledgebase.storage``: the index size measured as
    ``store.used_bytes()`` plus the other files of ``index_dir`` (every file there, for a store
    without ``used_bytes``), the free space of ``index_dir``'s file system, and room for vectors
    when ``embedder`` is configured."""
    from hermes_workspace.adapters.index_storage import free_disk, index_size
    from hermes_workspace.application.storage_guard import StorageGuard

    return StorageGuard(
        max_size=config.storage.max_size,
        min_free_disk=config.storage.min_free_disk,
        measure=partial(index_size, index_dir, index_path, getattr(store, "used_bytes", None)),
        free_disk=partial(free_disk, index_dir),
        location=str(index_dir),
        vector_dimensions=None if embedder is None else partial(_vector_dimensions, config, index_path),
    )


def storage_report(config: WorkspaceConfig, index_dir: Path, index_path: Path, store: object | None) -> dict[str, Any]:
    """``status``'s ``storage``: ``{"size_bytes"`` (the index size as the budget counts it, see
    :func:`storage_guard`; ``store`` is the read-only store, ``None`` before the first index),
    ``"max_size_bytes"`` (0: no budget), ``"free_disk_bytes"`` (where the index is; ``None`` when
    it cannot be read), ``"min_free_disk_bytes"`` (0: no check)``}``."""
    from hermes_workspace.adapters.index_storage import free_disk, index_size

    try:
        free: int | None = free_disk(index_dir)
    except OSError:
        free = None
    return {
        "size_bytes": index_size(index_dir, index_path, getattr(store, "used_bytes", None)),
        "max_size_bytes": config.storage.max_size,
        "free_disk_bytes": free,
        "min_free_disk_bytes": config.storage.min_free_disk,
    }


def _vector_pruner(config: WorkspaceConfig, embedder: Embedder | None, index_path: Path) -> Callable[[], int] | None:
    """Prunes orphaned vectors after a run without an embedding pass (``None`` with an embedder:
    its pass prunes; ``None`` for a store plugin, whose file holds no vectors of ours)."""
    from hermes_workspace.domain.config import DEFAULT_STORE

    if embedder is not None or config.store != DEFAULT_STORE:
        return None
    from hermes_workspace.adapters.sqlite_vec_index import prune_orphaned_vectors

    return partial(prune_orphaned_vectors, index_path)


def _retrieval_settings(config: WorkspaceConfig, embedder: Embedder | None) -> RetrievalSettings:
    from hermes_workspace.application.search import RetrievalSettings

    mode = config.retriever.mode
    if mode == "auto":  # an embedder given to the API counts as configured
        mode = "hybrid" if embedder is not None else "keyword"
    return RetrievalSettings(
        default_mode=mode,
        sparse_top_k=config.retriever.sparse_top_k,
        dense_top_k=config.retriever.dense_top_k,
        rrf_k=config.retriever.rrf_k,
        max_hits_per_file=config.retriever.max_hits_per_file,
        rerank_top_n=config.reranker.top_n,
        rerank_deadline_ms=config.reranker.deadline_ms,
    )


# -- catalog (issue 10, slice C): list, delete, doctor ---------------------------------------------------

def tokenizer_check() -> DoctorCheck:
    """``doctor``'s ``tokenizer`` check: the rank file shipped with the token counter against its
    published SHA-256."""
    from hermes_workspace.adapters import tiktoken_counter
    from hermes_workspace.application.catalog import check_rank_file

    return check_rank_file(tiktoken_counter.RANK_FILE, tiktoken_counter.RANK_FILE_SHA256)


def _vectors_if_semantic(embedder: Embedder | None, opener: Callable[[], VectorIndex]) -> Callable[[], VectorIndex] | None:
    return None if embedder is None else opener


def _lock_probe(lock: object) -> Callable[[], tuple[bool | None, int | None]] | None:
    return getattr(lock, "probe", None)


def _searched_roots(config: WorkspaceConfig, home: Path) -> list[Root]:
    """The named roots a search selects from and names hits by: ``all_roots``, without the
    primary workspace when ``workspace.enabled`` is false (as ``roots list``)."""
    roots = config.all_roots(home)
    return roots if config.enabled else [r for r in roots if not r.primary]


def _retrieve_context(
    search: SearchWorkspace, counter: TokenCounter, result_sets: ResultSetStore, config: WorkspaceConfig,
    home: Path, freshness: FreshnessMarker,
) -> RetrieveContext:
    from hermes_workspace.application.retrieve import RetrieveContext

    return RetrieveContext(
        search=search.execute,
        counter=counter,
        result_sets=result_sets,
        verify=freshness.mark,
        not_indexed=freshness.not_indexed,
        roots=[root.path for root in config.all_roots(home)],
        file_counts=partial(_file_counts, search.store),
        default_budget=config.injection.max_tokens,
        default_max_chunks=config.injection.max_chunks,
    )


def _file_counts(store: IndexStore) -> tuple[int, int | None]:
    """``(indexed, total)`` for retrieve's coverage: total adds the files the last index run
    skipped for a reason other than being unchanged (they are not in the index)."""
    status = store.status()
    left_out = sum(count for reason, count in status.skipped.items() if reason != "unchanged")
    return status.files, (status.files + left_out) if status.last_indexed_at else None


def _retrieve_pager(context: RetrieveContext) -> Callable[..., Any]:
    """``more`` on a retrieve set: the next pack of its frozen candidates."""
    return context.page


HISTORY_DIRNAME = "history"
"""Our files of project-history recall under HERMES_HOME: one index per host store, and the
consent file."""


def history_index_file(settings: WorkspaceConfig, home: Path) -> Path:
    """``HERMES_HOME/history/index-<digest>.sqlite``: our index of the host store
    ``knowledgebase.history.database`` (one file per store, so switching stores keeps both)."""
    import hashlib

    database = settings.history.database or home / "state.db"
    digest = hashlib.sha256(os.fsencode(os.path.abspath(database))).hexdigest()[:12]
    return home / HISTORY_DIRNAME / f"index-{digest}.sqlite"


def _open_session_history(plugins: PluginSelection, settings: WorkspaceConfig) -> Iterator[SessionHistory]:
    """The reader of ``knowledgebase.history.provider`` (a plugin), closed with the resource."""
    history = plugins.open_history(settings.history)
    try:
        yield history
    finally:
        history.close()


def _open_history_index(path: Path) -> Iterator[HistoryIndex]:
    from hermes_workspace.adapters.sqlite_history_index import SqliteHistoryIndex

    index = SqliteHistoryIndex(path)
    try:
        yield index
    finally:
        index.close()


def _history_chunker(settings: WorkspaceConfig) -> Chunker:
    """The built-in text chunker at ``knowledgebase.history.chunk_size`` words (a message's parts
    overlap by the workspace's overlap, at most a quarter of a part)."""
    size = settings.history.chunk_size
    return _text_chunker(size, min(settings.chunking.overlap, size // 4))


def history_remote_service(settings: WorkspaceConfig, embedder: Embedder | None) -> str | None:
    """The service a history embedding would send text to: ``knowledgebase.embedder.base_url``
    for the ``openai`` provider, a plugin embedder's own ``remote_service`` attribute when it
    declares one, else ``None`` (a local model: nothing leaves the machine)."""
    if embedder is None or not settings.history.semantic:
        return None
    if settings.embedder.remote:
        return settings.embedder.base_url.rstrip("/")
    service = getattr(embedder, "remote_service", None)
    return service if isinstance(service, str) and service else None


def _history_embedder(registry: PluginRegistry, settings: WorkspaceConfig, home: Path, index_dir: Path) -> Embedder | None:
    """The embedder of ``knowledgebase.embedder`` for history, or ``None`` (no embedder, or
    ``knowledgebase.history.semantic: false``). A remote one is built as consented: history has its
    own consent per service and project, which :class:`SearchProjectHistory` checks before any
    call (seed 003 section 5)."""
    from dataclasses import replace

    if not settings.history.semantic or not settings.embedder.enabled:
        return None
    if settings.embedder.remote:
        settings = replace(settings, embedder=replace(settings.embedder, consent=settings.embedder.base_url))
    return _plugin_selection(registry, settings, home, index_dir).embedder()


def _history_settings(settings: WorkspaceConfig, embedder: Embedder | None) -> HistorySettings:
    from hermes_workspace.application.history import HistorySettings

    history = settings.history
    return HistorySettings(limit=history.limit, context_messages=history.context_messages,
                           max_tokens=history.max_tokens, semantic=history.semantic,
                           remote_service=history_remote_service(settings, embedder))


class Container(containers.DeclarativeContainer):
    """Providers: ``home`` (a :class:`Path`, required), adapters as singletons, use cases as
    factories. ``config`` loads the file on every use (parsed again only when it changed);
    ``settings`` is the first load, used to build adapters once per process. Adapters and use
    cases are named through :func:`lazy`, so that building one imports only its own modules."""

    home = providers.Dependency(instance_of=Path)
    # The config file in use (issue 12): HERMES_HOME's unless build_container found another
    # (an explicit file or the nearest project file, adapters/config_discovery.py).
    config_source = providers.Singleton(home_config_source, home)
    project_dir = providers.Singleton(_project_dir, config_source, home)

    config_repository = providers.Singleton(_config_repository, config_source, home, project_dir)
    config = providers.Callable(_load, config_repository)
    settings = providers.Singleton(_load, config_repository)

    index_dir = providers.Callable(_index_dir, settings, home, project_dir)
    index_path = providers.Callable(lambda d: d / c.INDEX_FILENAME, index_dir)
    log_file = providers.Callable(lambda h: h / c.LOGS_DIRNAME / c.LOG_FILENAME, home)

    # Plugins (issue 11): installed entry points; config picks them by name (registry.py).
    plugin_registry = providers.Singleton(PluginRegistry)
    plugins = providers.Singleton(_plugin_selection, plugin_registry, settings, home, index_dir)

    file_source = providers.Singleton(_file_source, plugins)
    # Document converters by suffix (knowledgebase.converters), each imported on first use; the
    # converted texts are cached under <index>/converted. None when no suffix is converted.
    conversions = providers.Singleton(_conversions, plugins=plugins, index_dir=index_dir)
    decoder = providers.Singleton(lazy("hermes_workspace.adapters.charset_decoder:CharsetDecoder"))
    chunker = providers.Singleton(_chunker, plugins)
    fallback_chunker = providers.Singleton(_fallback_chunker, settings)
    # Resources, so that `shutdown_resources()` closes the connections that were opened, and only those.
    store = providers.Resource(_open_store, path=index_path, plugins=plugins)
    search_store = providers.Resource(_open_store, path=index_path, plugins=plugins, readonly=True)
    index_lock = providers.Singleton(lazy("hermes_workspace.adapters.file_lock:FileIndexLock"), path=providers.Callable(lambda d: d / c.LOCK_FILENAME, index_dir))
    # A project workspace gets its index folder under HERMES_HOME and no seeded folders.
    layout = providers.Singleton(
        lazy("hermes_workspace.adapters.filesystem_layout:FilesystemLayout"),
        index_dir=index_dir, seed=providers.Callable(lambda d: d is None, project_dir),
    )

    # Reading and chunking in worker processes (HERMES_INDEX_WORKERS); the workers build their own
    # adapters from `worker_tools`, which is None when one of them was replaced in this process.
    index_pool = providers.Callable(_index_pool)
    worker_tools = providers.Callable(
        _worker_tools, settings, plugins, index_dir, file_source.provider, decoder.provider, chunker.provider,
        fallback_chunker.provider, conversions.provider,
    )
    # Dense retrieval (knowledgebase.embedder / retriever / reranker): `embedder` is None when
    # the provider is none; the vector index lives in the same SQLite file as the keyword index.
    embedder = providers.Singleton(_embedder, plugins)
    reranker = providers.Singleton(_reranker, plugins)
    vector_index = providers.Callable(
        vector_index_opener, path=index_path, code_header=providers.Callable(_code_header, settings)
    )
    search_vector_index = providers.Callable(vector_index_opener, path=index_path, readonly=True)
    embedding = providers.Factory(_embedding, settings=settings, embedder=embedder, open_vectors=vector_index)
    semantic_side = providers.Factory(
        _semantic_side, settings=settings, embedder=embedder, open_vectors=search_vector_index
    )

    index_workspace = providers.Factory(
        lazy("hermes_workspace.application.indexing:IndexWorkspace"),
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
        embedding=embedding,
        conversions=conversions,
        storage=providers.Callable(storage_guard, config, index_dir, index_path, store, embedder),
        prune_vectors=providers.Callable(_vector_pruner, config, embedder, index_path),
    )
    # Per-root coverage (issue 12): one stat of each root's folder at query time.
    root_probe = providers.Object(lazy("hermes_workspace.adapters.filesystem_probe:root_unavailable"))
    search_workspace = providers.Factory(
        lazy("hermes_workspace.application.search:SearchWorkspace"),
        store=search_store,
        default_limit=config.provided.default_limit,
        semantic=semantic_side,
        reranker=reranker,
        settings=providers.Callable(_retrieval_settings, config, embedder),
        roots=providers.Callable(_searched_roots, config, home),
        root_probe=root_probe,
    )
    # Catalog (issue 10): `doctor` opens the read-only store itself, so that a damaged file is a
    # failed check rather than an error.
    list_files = providers.Factory(lazy("hermes_workspace.application.catalog:ListFiles"), store=search_store)
    delete_files = providers.Factory(
        lazy("hermes_workspace.application.catalog:DeleteFiles"), store=store, open_vectors=providers.Callable(_vectors_if_semantic, embedder, vector_index)
    )
    readmit = providers.Factory(lazy("hermes_workspace.application.catalog:Readmit"), store=store)
    doctor = providers.Factory(
        lazy("hermes_workspace.application.catalog:Doctor"),
        index_path=index_path,
        open_store=search_store.provider,
        embedder=embedder,
        open_vectors=providers.Callable(_vectors_if_semantic, embedder, search_vector_index),
        lock_probe=providers.Callable(_lock_probe, index_lock),
        tokenizer=providers.Object(tokenizer_check),
    )
    # Verified reads, freshness marks and result sets (handles, cursors) in the index file.
    result_sets = providers.Resource(_open_result_sets, path=index_path, config=settings)
    freshness = providers.Factory(lazy("hermes_workspace.application.verification:FreshnessMarker"), store=search_store, source=file_source)
    paged_search = providers.Factory(
        lazy("hermes_workspace.application.result_sets:PagedSearch"), search=search_workspace, freshness=freshness, result_sets=result_sets
    )
    # retrieve: budgets in o200k_base tokens; candidate lists frozen as result sets; `more` on a
    # retrieve set packs its next window.
    token_counter = providers.Singleton(lazy("hermes_workspace.adapters.tiktoken_counter:TiktokenCounter"))
    retrieve_context = providers.Factory(
        _retrieve_context, search=search_workspace, counter=token_counter, result_sets=result_sets, config=config,
        home=home, freshness=freshness,
    )
    retrieve_pager = providers.Factory(_retrieve_pager, retrieve_context)
    more_results = providers.Factory(
        lazy("hermes_workspace.application.result_sets:MoreResults"), result_sets=result_sets, freshness=freshness, retrieve_pager=retrieve_pager
    )
    read_span = providers.Factory(
        lazy("hermes_workspace.application.verification:ReadSpan"), store=search_store, source=file_source, decoder=decoder, result_sets=result_sets,
        counter=token_counter, default_budget=config.provided.injection.read_max_tokens, conversions=conversions,
    )
    # Freshness (issue 12): file events for `watch`, and the mark of this workspace's last index
    # run that `knowledgebase.auto_index` debounces on (a file in the index folder: shared by
    # every process using the index).
    change_feed = providers.Singleton(lazy("hermes_workspace.adapters.watchfiles_watcher:WatchfilesChangeFeed"))
    index_mark = providers.Singleton(
        lazy("hermes_workspace.adapters.file_time_mark:FileTimeMark"),
        path=providers.Callable(lambda d: d / INDEX_MARK_FILENAME, index_dir),
    )
    internal_dirs = providers.Callable(_internal_dirs, index_dir, home)
    list_roots = providers.Factory(lazy("hermes_workspace.application.roots:ListRoots"), config=config_repository, home=home)
    add_root = providers.Factory(lazy("hermes_workspace.application.roots:AddRoot"), config=config_repository, home=home)
    remove_root = providers.Factory(lazy("hermes_workspace.application.roots:RemoveRoot"), config=config_repository, home=home)
    rename_root = providers.Factory(lazy("hermes_workspace.application.roots:RenameRoot"), config=config_repository, home=home)

    # Project-history recall (issue 13): the host's store read-only, our index and consents.
    history_index_path = providers.Callable(history_index_file, settings, home)
    session_history = providers.Resource(_open_session_history, plugins=plugins, settings=settings)
    history_index = providers.Resource(_open_history_index, path=history_index_path)
    consent_store = providers.Singleton(
        lazy("hermes_workspace.adapters.json_consent_store:JsonConsentStore"),
        path=providers.Callable(lambda h: h / HISTORY_DIRNAME / "consent.json", home),
    )
    history_chunker = providers.Singleton(_history_chunker, settings)
    history_embedder = providers.Singleton(_history_embedder, plugin_registry, settings, home, index_dir)
    history_settings = providers.Callable(_history_settings, settings, history_embedder)
    git_root = providers.Object(lazy("hermes_workspace.adapters.filesystem_probe:git_root"))
    # One per container: it remembers the store's change token of its last complete sync.
    sync_history = providers.Singleton(
        lazy("hermes_workspace.application.history:SyncHistory"), history=session_history, index=history_index,
        chunker=history_chunker, roles=providers.Callable(lambda s: s.history.roles, settings),
        chunk_words=providers.Callable(lambda s: s.history.chunk_size, settings),
    )
    search_history = providers.Factory(
        lazy("hermes_workspace.application.history:SearchProjectHistory"), history=session_history,
        index=history_index, sync=sync_history, counter=token_counter, consents=consent_store,
        embedder=history_embedder, git_root=git_root, settings=history_settings,
    )


def build_container(
    home: str | os.PathLike[str] | None = None,
    *,
    config: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Container:
    """A container for the workspace of ``home`` (see :func:`resolve_home`) with the config file
    :func:`~hermes_workspace.adapters.config_discovery.discover_config` picks: ``config`` if
    given, else ``$HERMES_WORKSPACE_CONFIG``, else the nearest project file above ``cwd`` (only
    when ``cwd`` is given), else ``home/config.yaml``.

    Raises:
        UsageError: a bad ``home`` or ``config`` (empty, missing, not a file).
        ConfigError: a bad ``$HERMES_HOME`` or ``$HERMES_WORKSPACE_CONFIG``.
    """
    from hermes_workspace.adapters.config_discovery import discover_config

    resolved = resolve_home(home)
    container = Container()
    container.home.override(providers.Object(resolved))
    container.config_source.override(providers.Object(discover_config(resolved, explicit=config, cwd=cwd)))
    return container
