"""The plugin registry (issue 11): installed plugins by standard entry points, one group per
category (``hermes_workspace.chunkers``, ``.converters``, ``.embedders``, ``.rerankers``,
``.stores``, ``.sources``; see :data:`~hermes_workspace.domain.plugins.CATEGORIES`).

Listing and finding plugins reads distribution metadata only (no plugin module is imported);
:meth:`PluginRegistry.build` imports the one selected, calls its factory with a
:class:`~hermes_workspace.domain.plugins.PluginContext` and checks that the result satisfies the
category's port. Our own built-ins come through the same entry points (pyproject.toml); when the
installed metadata of ``hermes-workspace`` predates them (a source tree run with an old install),
:data:`BUILTIN_ENTRY_POINTS`, the same table, stands in, so the built-ins never go missing (a
test keeps both equal).

Tests inject entries (``PluginRegistry(entries=[PluginEntry(...)])``) instead of installing
packages.
"""

from __future__ import annotations

import difflib

import importlib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hermes_workspace.domain.config import config_key
from hermes_workspace.domain.errors import ConverterUnavailableError, UnknownPluginError, WorkspaceError
from hermes_workspace.domain.plugins import CATEGORIES, ENTRY_POINT_PREFIX, PluginContext, options_digest

BUILTIN_DISTRIBUTION = "hermes-workspace"
"""The distribution whose entry points are built-in plugins."""

_FACTORIES = "hermes_workspace.adapters.builtin_plugins"

BUILTIN_ENTRY_POINTS: dict[str, dict[str, str]] = {
    "chunkers": {"tree-sitter": f"{_FACTORIES}:tree_sitter_chunker", "chonkie": f"{_FACTORIES}:chonkie_chunker"},
    "embedders": {
        "onnx": f"{_FACTORIES}:onnx_embedder",
        "sentence-transformers": f"{_FACTORIES}:sentence_transformers_embedder",
        "model2vec": f"{_FACTORIES}:model2vec_embedder",
        "openai": f"{_FACTORIES}:openai_embedder",
    },
    "rerankers": {"heuristic": f"{_FACTORIES}:heuristic_reranker", "cross-encoder": f"{_FACTORIES}:cross_encoder_reranker"},
    "stores": {"sqlite-fts5": f"{_FACTORIES}:sqlite_fts5_store"},
    "sources": {"filesystem": f"{_FACTORIES}:filesystem_source"},
    "histories": {"hermes-state": f"{_FACTORIES}:hermes_state_history"},
    "converters": {
        "pypdf": "hermes_workspace.adapters.builtin_plugins:pypdf_converter",
        "python-docx": "hermes_workspace.adapters.builtin_plugins:python_docx_converter",
        "python-pptx": "hermes_workspace.adapters.builtin_plugins:python_pptx_converter",
        "openpyxl": "hermes_workspace.adapters.builtin_plugins:openpyxl_converter",
        "markitdown": "hermes_workspace.adapters.builtin_plugins:markitdown_converter",
    },
}
"""The entry points of pyproject.toml, ``category -> name -> "module:attribute"``."""

BUILTIN_OPTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("chunkers", "tree-sitter"): ("min_words", "mode"),
    ("chunkers", "chonkie"): ("mode",),
}
"""The ``knowledgebase.plugins.<name>`` keys each built-in plugin reads (adapters/builtin_plugins.py);
the others read none (embedders and rerankers take their settings from their own config sections)."""

DEFAULTS: dict[str, str | None] = {
    "chunkers": "tree-sitter",
    "embedders": "none",
    "rerankers": "none",
    "stores": "sqlite-fts5",
    "sources": "filesystem",
    "converters": None,
    "histories": None,
}
"""What a category falls back to when the configured plugin is broken (``none``: no embedder
or reranker; converters have no default: a suffix without a working converter is skipped)."""

SINGULAR = {
    "chunkers": "chunker", "converters": "converter", "embedders": "embedder", "rerankers": "reranker",
    "stores": "store", "sources": "source", "histories": "history source",
}


class PluginBrokenError(WorkspaceError):
    """A plugin could not be loaded or built, or built something that is not its category's
    port (EX_UNAVAILABLE). Raised only where nothing can stand in for it (the built-in default
    itself is broken); otherwise its category falls back with a note."""

    code = "plugin_broken"
    exit_code = 69
    default_hint = "Run `hermes-workspace plugins` to see the error; reinstall the package or choose another plugin."


@dataclass(frozen=True, slots=True)
class PluginEntry:
    """One installed entry point: ``name`` in ``category``, ``target`` (``module:attribute``),
    the ``distribution`` and ``version`` providing it (``None`` when unknown). ``loader``
    replaces importing ``target`` (tests)."""

    category: str
    name: str
    target: str
    distribution: str | None = None
    version: str | None = None
    loader: Callable[[], Any] | None = field(default=None, compare=False, repr=False)

    @property
    def builtin(self) -> bool:
        """True for our own distribution's entries."""
        return self.distribution == BUILTIN_DISTRIBUTION

    def load(self) -> Any:
        """The factory the entry point names (imports its module).

        Raises:
            Exception: whatever importing raises (``ImportError``, ``AttributeError``...).
        """
        if self.loader is not None:
            return self.loader()
        return load_target(self.target)


def load_target(target: str) -> Any:
    """The object ``"package.module:attribute.path"`` names, resolved as ``EntryPoint.load`` does
    (without importing :mod:`importlib.metadata`, which a search does not need).

    Raises:
        ImportError: the module cannot be imported.
        AttributeError: it has no such attribute.
    """
    module, _, attribute = target.partition(":")
    obj = importlib.import_module(module.strip())
    for part in filter(None, attribute.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def installed_entries() -> list[PluginEntry]:
    """Every entry point of the plugin groups, from installed distribution metadata (nothing is
    imported), plus :data:`BUILTIN_ENTRY_POINTS` when no installed metadata of ours has them."""
    # The root package is always imported before this module (importing it by name would make the
    # layer checker follow its lazy exports up to the entry points).
    version = getattr(sys.modules.get("hermes_workspace"), "__version__", None)
    import importlib.metadata

    entries: list[PluginEntry] = []
    selected = importlib.metadata.entry_points()
    for category in CATEGORIES:
        for point in selected.select(group=ENTRY_POINT_PREFIX + category):
            dist = getattr(point, "dist", None)
            name = dist.metadata["Name"] if dist is not None else None
            entries.append(PluginEntry(
                category, point.name, point.value,
                distribution=_canonical(name) if name else None,
                version=dist.version if dist is not None else None,
            ))
    if not any(entry.builtin for entry in entries):
        entries.extend(builtin_entries(version))
    return entries


def builtin_entries(version: str | None = None) -> list[PluginEntry]:
    """:data:`BUILTIN_ENTRY_POINTS` as entries of our distribution."""
    return [
        PluginEntry(category, name, target, distribution=BUILTIN_DISTRIBUTION, version=version)
        for category, names in BUILTIN_ENTRY_POINTS.items()
        for name, target in names.items()
    ]


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class PluginRegistry:
    """The installed plugins (``entries``; default: :func:`installed_entries`, read on first
    use). When two distributions register one name in one category, ours wins, else the first by
    distribution name; the others are listed as shadowed (:meth:`shadowed`)."""

    def __init__(self, entries: Iterable[PluginEntry] | None = None) -> None:
        self._given = list(entries) if entries is not None else None
        self._winners: dict[tuple[str, str], PluginEntry] | None = None
        self._shadowed: list[PluginEntry] = []
        self._builtins: dict[tuple[str, str], PluginEntry] | None = None

    def _index(self) -> dict[tuple[str, str], PluginEntry]:
        if self._winners is None:
            entries = self._given if self._given is not None else installed_entries()
            ordered = sorted(entries, key=lambda e: (e.category, e.name, not e.builtin, e.distribution or ""))
            winners: dict[tuple[str, str], PluginEntry] = {}
            for entry in ordered:
                if entry.category not in CATEGORIES:
                    continue
                key = (entry.category, entry.name)
                if key in winners:
                    self._shadowed.append(entry)
                else:
                    winners[key] = entry
            self._winners = winners
        return self._winners

    def entries(self, category: str | None = None) -> list[PluginEntry]:
        """The plugins in effect, by category then name (all categories when ``None``)."""
        return [e for key, e in sorted(self._index().items()) if category is None or key[0] == category]

    def shadowed(self) -> list[PluginEntry]:
        """Entries hidden by another distribution's entry of the same category and name."""
        self._index()
        return list(self._shadowed)

    def names(self, category: str) -> list[str]:
        """Installed names in ``category``, sorted; no plugin module is imported."""
        return [e.name for e in self.entries(category)]

    def _shortcut(self) -> dict[tuple[str, str], PluginEntry]:
        """The built-ins by ``(category, name)`` while the installed metadata has not been read
        (``{}`` once it has, or when entries were given). Ours wins any name clash, so a built-in
        name is found without reading every installed distribution's metadata (about 0.1 s in a
        large environment; a search that names only built-ins never pays it)."""
        if self._given is not None or self._winners is not None:
            return {}
        if self._builtins is None:
            version = getattr(sys.modules.get("hermes_workspace"), "__version__", None)
            self._builtins = {(e.category, e.name): e for e in builtin_entries(version)}
        return self._builtins

    def find(self, category: str, name: str, *, setting: str | None = None) -> PluginEntry:
        """The entry of ``name`` in ``category``.

        Raises:
            UnknownPluginError: none is installed; the message names ``setting`` (the config key)
                and lists the installed names of the category.
        """
        builtin = self._shortcut().get((category, name))
        if builtin is not None:
            return builtin
        entry = self._index().get((category, name))
        if entry is not None:
            return entry
        installed = tuple(self.names(category))
        where = f"{setting}: " if setting else ""
        listing = ", ".join(installed) if installed else "none"
        close = difflib.get_close_matches(name, installed, n=1, cutoff=0.7)
        raise UnknownPluginError(
            f"{where}no {SINGULAR[category]} plugin named {name!r} is installed "
            f"(installed {category}: {listing})",
            installed=installed,
            hint=(f"Did you mean {close[0]!r}? " if close else "")
            + f"Choose one of the installed {category}, or install the package that provides {name!r} "
              f"(entry-point group {ENTRY_POINT_PREFIX}{category}); `hermes-workspace plugins` lists them.",
        )

    def check_options_name(self, name: str) -> None:
        """Refuse ``knowledgebase.plugins.<name>`` when no installed plugin of any category is
        called ``name`` (a typo there would otherwise leave the plugin on its defaults, silently).

        Raises:
            UnknownPluginError: the message lists every installed plugin name.
        """
        if any(key[1] == name for key in self._shortcut()):
            return
        names = sorted({entry.name for entry in self.entries()})
        if name in names:
            return
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.7)
        raise UnknownPluginError(
            f"knowledgebase.plugins.{name}: no plugin named {name!r} is installed, so its options would "
            f"never be used (installed plugins: {', '.join(names)})",
            installed=tuple(names),
            hint=(f"Did you mean {close[0]!r}? " if close else "")
            + "The key under knowledgebase.plugins is the plugin's name as `hermes-workspace plugins` lists it.",
        )

    def build(self, entry: PluginEntry, context: PluginContext) -> Any:
        """Load ``entry``, call its factory with ``context`` (its ``from_context`` class method
        when it has one) and check the result against the category's port.

        Raises:
            PluginBrokenError: loading or the factory raised (the message names the exception),
                or the result is not the category's port.
        """
        what = f"{SINGULAR[entry.category]} plugin {entry.name!r} ({entry.target})"
        try:
            factory = entry.load()
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any import failure makes the plugin broken
            raise PluginBrokenError(f"{what} cannot be loaded: {type(exc).__name__}: {exc}") from exc
        make = getattr(factory, "from_context", factory)
        if not callable(make):
            raise PluginBrokenError(f"{what} is not callable (a factory taking a PluginContext is expected)")
        try:
            built = make(context)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of a plugin's factory is reported
            raise PluginBrokenError(f"{what} failed when built: {type(exc).__name__}: {exc}") from exc
        missing = missing_members(entry.category, built)
        if missing:
            raise PluginBrokenError(
                f"{what} built a {type(built).__name__}, which lacks {', '.join(missing)} "
                f"of the {SINGULAR[entry.category]} port"
            )
        if entry.category in _SIGNED:
            # Read now, so that a signature that raises makes the plugin broken (fallback, note)
            # instead of failing `status`, `plugins` and `index` later (a user trial).
            try:
                signature = built.signature
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of a plugin's own code is reported
                raise PluginBrokenError(f"{what} has a signature that fails: {type(exc).__name__}: {exc}") from exc
            if not isinstance(signature, str):
                raise PluginBrokenError(f"{what} has a signature of type {type(signature).__name__}, not str")
        return built


_PORT_MEMBERS: dict[str, tuple[str, ...]] = {
    "chunkers": ("signature", "chunk"),
    "embedders": ("signature", "dimensions", "max_input_tokens", "embed_documents", "embed_query", "coverage"),
    "rerankers": ("name", "rerank"),
    "stores": ("get_file", "file_records", "replace_file", "file_chunks", "touch_file", "delete_files", "batch",
               "search", "status", "record_exclusions", "list_files", "tombstones", "add_tombstones",
               "remove_tombstones", "record_run", "record_root_counts", "root_counts", "check_integrity", "close"),
    "sources": ("discover", "read_bytes"),
    "converters": ("convert",),
    "histories": ("signature", "projects", "sessions", "change_token", "session_stats", "messages", "window",
                  "close"),
}
"""What each category's port requires (:mod:`hermes_workspace.domain.ports`), checked by name
on the class, so that no property is evaluated (an embedder's ``dimensions`` may load its model)."""


_SIGNED = frozenset({"chunkers", "converters"})
"""Categories whose ``signature`` :meth:`PluginRegistry.build` reads (cheap by contract there; an
embedder's may load its model, so it is read when the embedder is first used)."""


def missing_members(category: str, obj: Any) -> list[str]:
    """The members of the category's port that ``obj`` lacks (``[]``: it has the shape)."""
    kind = type(obj)
    return [name for name in _PORT_MEMBERS[category] if not hasattr(kind, name) and not hasattr(obj, name)]


# -- the active selection: what config asks for, built with fallbacks -----------------------------------


@dataclass(frozen=True, slots=True)
class Activation:
    """One category's (or one chunker route's) selection: ``configured`` is the name config
    asks for, ``used`` the plugin in use (the category's default when ``configured`` is broken,
    ``error`` then saying why), ``routes`` the config keys it serves (chunkers: ``default``,
    kinds, suffixes; other categories: the category's singular)."""

    category: str
    configured: str
    used: str
    routes: tuple[str, ...]
    error: str | None = None

    @property
    def note(self) -> str | None:
        """The message shown in ``status`` and the log when ``configured`` fell back (a
        converter has no default: its files are left out)."""
        if self.error is None:
            return None
        if self.category == "converters":
            return (f"{self.error}; files ending in {', '.join(self.routes)} are left out of the index "
                    "(skipped as converter_unavailable)")
        return f"{self.error}; using {self.used} instead for {', '.join(self.routes)}"


@dataclass(frozen=True, slots=True)
class ChunkerPlan:
    """A picklable recipe of the routed chunker for worker processes: per route key, the plugin
    name, its target and its context (the worker imports the target and calls it, so that a
    third-party chunker runs in the workers too). Only plugins that built in the parent are in it."""

    routes: Any  # ChunkerRoutes
    chunkers: tuple[tuple[str, str, str, PluginContext], ...]  # (route, name, target, context)

    def build(self) -> Any:
        """The :class:`~hermes_workspace.domain.plugins.RoutedChunker` (raises what a factory raises)."""
        from hermes_workspace.domain.plugins import RoutedChunker

        built = {}
        for route, name, target, context in self.chunkers:
            factory = load_target(target)
            built[route] = (name, getattr(factory, "from_context", factory)(context), context.options)
        return RoutedChunker(self.routes, built)


class PluginSelection:
    """The plugins config selects (``knowledgebase.chunkers``, ``.embedder.provider``,
    ``.reranker.provider``, ``.store.provider``, ``.source.provider``), checked against the
    registry when created and built on first use, each once.

    Raises (when created): :class:`UnknownPluginError` for an embedder, reranker, store or source
    name that is not installed (chunker, converter and option names: :meth:`check_indexing_names`). A
    plugin that fails to load or build is logged, noted (:attr:`notes`) and replaced by its
    category's default (:data:`DEFAULTS`); when the default itself fails, its error is raised
    (a :class:`WorkspaceError` as is, e.g. ``MissingExtraError``; anything else as
    :class:`PluginBrokenError`).
    """

    def __init__(self, registry: PluginRegistry, config: Any, home: Any, models_dir: Any,
                 internal_dirs: tuple[Any, ...] = ()) -> None:
        self.registry = registry
        self.config = config
        self.home = home
        self.models_dir = models_dir
        self.internal_dirs = tuple(internal_dirs)
        self._activations: dict[tuple[str, str], Activation] = {}
        self._chunker: Any = None
        self._plan: ChunkerPlan | None = None
        self._converters: dict[str, Any] = {}
        self._cache: dict[str, Any] = {}
        # Unknown names of the plugins every command may use fail now, before anything is built
        # or opened; those of indexing when indexing needs them (check_indexing_names).
        for category, name, setting in self._singles():
            if name != "none":
                registry.find(category, name, setting=setting)
        self._indexing_checked = False

    def check_indexing_names(self) -> None:
        """Refuse a chunker (by route), converter (by suffix) or ``knowledgebase.plugins`` name
        that no installed plugin has. Called when the chunker or the converters are first built: a
        search needs neither, so a typo there stops ``index``, ``status`` and ``doctor``, not
        ``search``.

        Raises:
            UnknownPluginError: every unknown name, in one message (each listing the installed
                ones of its category; the hint and ``installed`` are the first one's).
        """
        if self._indexing_checked:
            return
        unknown = self.unknown_names()
        if unknown:
            first = unknown[0]
            if len(unknown) == 1:
                raise first
            raise UnknownPluginError(
                f"{len(unknown)} unknown plugin names: " + "; ".join(e.message for e in unknown),
                installed=first.installed, hint=first.hint,
            )
        self._indexing_checked = True

    def unknown_names(self) -> list[UnknownPluginError]:
        """One error per configured chunker, converter or ``knowledgebase.plugins`` name that no
        installed plugin has (``[]``: all are installed); embedder, reranker, store and source
        names were checked when this selection was created."""
        config, registry = self.config, self.registry
        checks: list[Callable[[], Any]] = [
            *(lambda r=route, n=name: registry.find("chunkers", n, setting=config_key("knowledgebase.chunkers", r))
              for route, name in config.chunkers.routes()),
            *(lambda s=suffix, n=name: registry.find("converters", n,
                                                      setting=config_key("knowledgebase.converters", s))
              for suffix, name in config.converters),
            *(lambda n=name: registry.check_options_name(n) for name, _ in config.plugin_options),
        ]
        unknown: list[UnknownPluginError] = []
        for check in checks:
            try:
                check()
            except UnknownPluginError as exc:
                if all(e.message != exc.message for e in unknown):  # one name on several routes: once
                    unknown.append(exc)
        return unknown

    def option_notes(self) -> list[str]:
        """One line per ``knowledgebase.plugins.<name>`` that gives a built-in plugin keys it does
        not read (:data:`BUILTIN_OPTIONS`): they would be ignored silently otherwise."""
        notes = []
        for name, options in self.config.plugin_options:
            keys = sorted(str(key) for key in (options or {}))
            for category in CATEGORIES:
                try:  # by find: a built-in name is found without reading installed metadata
                    entry = self.registry.find(category, name)
                except UnknownPluginError:
                    continue
                if not entry.builtin:
                    continue
                accepted = BUILTIN_OPTIONS.get((entry.category, name), ())
                ignored = [key for key in keys if key not in accepted]
                if not ignored:
                    continue
                where = f"knowledgebase.plugins.{name}"
                if accepted:
                    notes.append(f"{where}: the built-in {SINGULAR[entry.category]} {name} takes "
                                 f"{' and '.join(accepted)}; ignored: {', '.join(ignored)}")
                else:
                    notes.append(f"{where}: {name} takes no options; ignored: {', '.join(ignored)}")
        return notes

    def _singles(self) -> list[tuple[str, str, str]]:
        c = self.config
        return [
            ("embedders", c.embedder.provider, "knowledgebase.embedder.provider"),
            ("rerankers", c.reranker.provider, "knowledgebase.reranker.provider"),
            ("stores", c.store, "knowledgebase.store.provider"),
            ("sources", c.source, "knowledgebase.source.provider"),
        ]

    def context(self, category: str, name: str, **extra: Any) -> PluginContext:
        """The :class:`PluginContext` of plugin ``name`` in ``category`` under this config."""
        c = self.config
        return PluginContext(
            category=category, name=name, home=self.home, models_dir=self.models_dir,
            options=c.options_for(name), chunk_size=c.chunking.chunk_size, overlap=c.chunking.overlap,
            max_file_bytes=c.max_file_bytes, embedder=c.embedder, reranker=c.reranker,
            internal_dirs=self.internal_dirs, convertible=tuple(suffix for suffix, _ in c.converters), **extra,
        )

    def _build(self, category: str, name: str, routes: tuple[str, ...], **extra: Any) -> tuple[str, Any]:
        """``(name used, object)``: ``name`` built, or the category's default after noting why not."""
        entry = self.registry.find(category, name)
        try:
            return name, self.registry.build(entry, self.context(category, name, **extra))
        except PluginBrokenError as exc:
            default = DEFAULTS[category]
            if default is None or default == name:
                cause = exc.__cause__
                if isinstance(cause, WorkspaceError):
                    raise cause from None
                raise
            activation = Activation(category, name, default, routes, error=exc.message)
            self._activations[(category, ",".join(routes))] = activation
            _log_fallback(activation, exc)
            if default == "none":
                return default, None
            try:
                return default, self.registry.build(self.registry.find(category, default),
                                                     self.context(category, default, **extra))
            except PluginBrokenError as fallback_error:
                # The default's own WorkspaceError as is (a store with no index yet:
                # IndexNotFoundError, which callers expect), not as a broken built-in.
                cause = fallback_error.__cause__
                if isinstance(cause, WorkspaceError):
                    raise cause from None
                raise

    def chunker(self) -> Any:
        """The :class:`~hermes_workspace.domain.plugins.RoutedChunker` of ``knowledgebase.chunkers``
        (one instance per distinct plugin name)."""
        if self._chunker is None:
            from hermes_workspace.domain.plugins import RoutedChunker

            self.check_indexing_names()

            by_name: dict[str, tuple[str, Any]] = {}
            routes_of: dict[str, list[str]] = {}
            for route, name in self.config.chunkers.routes():
                routes_of.setdefault(name, []).append(route)
            built: dict[str, tuple[str, Any, Any]] = {}
            plan: list[tuple[str, str, str, PluginContext]] = []
            for route, name in self.config.chunkers.routes():
                if name not in by_name:
                    by_name[name] = self._build("chunkers", name, tuple(routes_of[name]))
                used, chunker = by_name[name]
                context = self.context("chunkers", used)
                built[route] = (used, chunker, context.options)
                plan.append((route, used, self.registry.find("chunkers", used).target, context))
            self._chunker = RoutedChunker(self.config.chunkers, built)
            self._plan = ChunkerPlan(self.config.chunkers, tuple(plan))
        return self._chunker

    def converters(self, *, builtin: bool = True) -> dict[str, Any]:
        """Each converter ``knowledgebase.converters`` names, built once: ``name -> converter``,
        ``None`` for one that cannot be loaded or built (noted: :attr:`notes`; converters have no
        default, so its files are skipped as ``converter_unavailable``). Indexing builds its own
        (in each worker); this is for ``plugins``, ``status`` and ``doctor``, which would not see
        a broken converter otherwise. ``builtin`` False: third-party converters only (``status``:
        a built-in converter fails only for want of its library, which ``index`` reports, and
        importing the five libraries costs about 0.6 s).

        Raises:
            UnknownPluginError: see :meth:`check_indexing_names`.
        """
        self.check_indexing_names()
        suffixes: dict[str, list[str]] = {}
        for suffix, name in self.config.converters:
            suffixes.setdefault(name, []).append(suffix)
        result: dict[str, Any] = {}
        for name, routes in sorted(suffixes.items()):
            entry = self.registry.find("converters", name)
            if not builtin and entry.builtin:
                continue
            if name not in self._converters:
                self._converters[name] = self._build_converter(entry, tuple(routes))
            result[name] = self._converters[name]
        return result

    def _build_converter(self, entry: PluginEntry, routes: tuple[str, ...]) -> Any:
        try:
            return self.registry.build(entry, self.context("converters", entry.name))
        except PluginBrokenError as exc:
            cause = exc.__cause__
            error = (f"converter plugin {entry.name!r}: {cause.message}. {cause.hint}"
                     if isinstance(cause, ConverterUnavailableError) else exc.message)
            activation = Activation("converters", entry.name, "none", routes, error=error)
            self._activations[("converters", entry.name)] = activation
            _log_fallback(activation, exc)
            return None

    def chunker_plan(self) -> ChunkerPlan:
        """The picklable recipe of :meth:`chunker` for worker processes."""
        self.chunker()
        assert self._plan is not None
        return self._plan

    def _single(self, category: str, name: str, **extra: Any) -> Any:
        if category not in self._cache:
            self._cache[category] = None if name == "none" else self._build(
                category, name, (SINGULAR[category],), **extra)[1]
        return self._cache[category]

    def embedder(self) -> Any:
        """The embedder of ``knowledgebase.embedder.provider``, or ``None``."""
        return self._single("embedders", self.config.embedder.provider)

    def reranker(self) -> Any:
        """The reranker of ``knowledgebase.reranker.provider``, or ``None``."""
        return self._single("rerankers", self.config.reranker.provider)

    def source(self) -> Any:
        """The file source of ``knowledgebase.source.provider``."""
        return self._single("sources", self.config.source)

    def source_recipe(self) -> tuple[str, PluginContext]:
        """``(target, context)`` of the source in use, for worker processes."""
        self.source()
        name = self.used("sources", self.config.source)
        return self.registry.find("sources", name).target, self.context("sources", name)

    def open_store(self, index_path: Any, readonly: bool) -> Any:
        """A new store of ``knowledgebase.store.provider`` on ``index_path`` (the caller closes it)."""
        return self._build("stores", self.config.store, ("store",), index_path=index_path, readonly=readonly)[1]

    def open_history(self, history: Any) -> Any:
        """A new session-history reader of ``knowledgebase.history.provider`` (the caller closes
        it), built with ``history`` (the section, its database paths resolved) in its context.

        Raises:
            PluginBrokenError: the plugin cannot be loaded or built (a history source has no
                default to fall back to); its own ``WorkspaceError`` (``HistoryUnavailableError``)
                as is.
        """
        return self._build("histories", history.provider, ("history",), history=history)[1]

    def used(self, category: str, configured: str) -> str:
        """The plugin name in use for a configured one (its default when it fell back)."""
        for activation in self._activations.values():
            if activation.category == category and activation.configured == configured:
                return activation.used
        return configured

    @property
    def activations(self) -> list[Activation]:
        """The fallbacks so far (broken plugins replaced by their default)."""
        return list(self._activations.values())

    @property
    def notes(self) -> list[str]:
        """One line per broken plugin replaced by its default (or, a converter, left out), and per
        built-in plugin given options it does not read (for ``status``, ``plugins``, ``doctor``)."""
        return [a.note for a in self._activations.values() if a.note] + self.option_notes()

    @property
    def broken_notes(self) -> list[str]:
        """:attr:`notes` of broken plugins only."""
        return [a.note for a in self._activations.values() if a.note]

    def active(self) -> dict[tuple[str, str], list[str]]:
        """``(category, name) -> routes`` of every plugin in use (config's names after fallbacks)."""
        active: dict[tuple[str, str], list[str]] = {}
        for route, name in self.config.chunkers.routes():
            active.setdefault(("chunkers", self.used("chunkers", name)), []).append(route)
        for category, name, _ in self._singles():
            used = self.used(category, name)
            if used != "none":
                active.setdefault((category, used), []).append(SINGULAR[category])
        for suffix, name in self.config.converters:
            active.setdefault(("converters", name), []).append(suffix)
        return active

    def bundle(self) -> dict[str, Any]:
        """The signature bundle recorded with the index: per chunker route its plugin and
        signature, the source in use, the store in use (as opened so far: the one that holds the
        index), the embedder and reranker configured (by name; the embedder's own signature
        lives with the vectors, a reranker invalidates nothing), per converter suffix its plugin
        (and ``options``, the digest of its ``knowledgebase.plugins`` options, when it has any),
        with ``signature``, a SHA-256 of the rest.

        Only what is built here for every caller alike (chunkers, source) is recorded by the name
        in use after a fallback: a name that depended on what a command happened to build (an
        embedder that fell back while indexing, not built by ``status``) made ``up_to_date``
        false forever (a user trial)."""
        import hashlib
        import json

        chunker = self.chunker()
        c = self.config
        if not self.registry.find("sources", c.source).builtin:
            self.source()  # it may fall back (the built-in is the default: it cannot)
        converters: dict[str, Any] = {}
        for suffix, name in c.converters:
            digest = options_digest(c.options_for(name))
            converters[suffix] = {"plugin": name, **({"options": digest} if digest else {})}
        data: dict[str, Any] = {
            "chunkers": {route: {"plugin": self.used("chunkers", name), "signature": chunker.route_signature(route)}
                         for route, name in c.chunkers.routes()},
            "embedder": {"plugin": c.embedder.provider, "model": c.embedder.model_name},
            "reranker": {"plugin": c.reranker.provider},
            "store": {"plugin": self.used("stores", c.store)},
            "source": {"plugin": self.used("sources", c.source)},
            "converters": converters,
        }
        data["signature"] = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
        return data


def _log_fallback(activation: Activation, exc: BaseException) -> None:
    from hermes_workspace.logs import get_logger

    get_logger("hermes_workspace.registry").warning(
        "plugin broken, using the default", category=activation.category, plugin=activation.configured,
        fallback=activation.used, routes=list(activation.routes), error=activation.error,
    )


# -- the listing of `hermes-workspace plugins` --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PluginListing:
    """What ``hermes-workspace plugins`` prints (:meth:`to_json`): every installed plugin, the
    signature bundle of the current selection and the one the index was built with, and notes
    (broken plugins replaced by their default, or a config naming a plugin that is not installed)."""

    plugins: tuple[dict[str, Any], ...]
    signature: str | None
    indexed_signature: str | None
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"plugins": [{"name", "category", "distribution", "version", "target", "builtin",
        "status" (ok | broken | shadowed), "error", "active", "used_for", "signature"}...],
        "signature", "indexed_signature", "up_to_date", "notes"}``; ``up_to_date`` is ``None``
        before the first index run recorded a bundle."""
        return {
            "plugins": [dict(p) for p in self.plugins],
            "signature": self.signature,
            "indexed_signature": self.indexed_signature,
            "up_to_date": None if self.indexed_signature is None or self.signature is None
            else self.signature == self.indexed_signature,
            "notes": list(self.notes),
        }


def plugin_listing(registry: PluginRegistry, selection: PluginSelection | None, *,
                   recorded: dict[str, Any] | None = None, notes: Iterable[str] = ()) -> PluginListing:
    """Every entry of ``registry`` (each module imported, to report the broken ones; nothing is
    built except what ``selection`` builds for the index anyway), marked with what
    ``selection`` uses. ``selection`` ``None``: config could not be resolved (``notes`` say why)."""
    notes = list(notes)
    active: dict[tuple[str, str], list[str]] = {}
    errors: dict[tuple[str, str], str] = {}
    signatures: dict[str, str] = {}
    bundle_signature = None
    if selection is not None:
        bundle = selection.bundle()
        selection.converters()  # built lazily while indexing: a broken one would go unseen
        bundle_signature = bundle["signature"]
        active = selection.active()
        for activation in selection.activations:
            errors[(activation.category, activation.configured)] = activation.error or ""
        for route, item in bundle["chunkers"].items():
            signatures.setdefault(item["plugin"], item["signature"])
        notes.extend(selection.notes)
    rows = []
    for entry in registry.entries():
        key = (entry.category, entry.name)
        error = errors.get(key)
        if error is None:
            try:
                entry.load()
            except Exception as exc:  # noqa: BLE001 - listing reports any import failure
                error = f"cannot be loaded: {type(exc).__name__}: {exc}"
        rows.append(_row(entry, "broken" if error else "ok", error, key in active, active.get(key, []),
                         signatures.get(entry.name) if entry.category == "chunkers" and key in active else None))
    for entry in registry.shadowed():
        winner = registry.find(entry.category, entry.name)
        rows.append(_row(entry, "shadowed", f"the same name from {winner.distribution} is used", False, [], None))
    return PluginListing(
        plugins=tuple(rows), signature=bundle_signature,
        indexed_signature=(recorded or {}).get("signature"), notes=tuple(notes),
    )


def _row(entry: PluginEntry, status: str, error: str | None, active: bool, used_for: list[str],
         signature: str | None) -> dict[str, Any]:
    return {
        "name": entry.name,
        "category": entry.category,
        "distribution": entry.distribution,
        "version": entry.version,
        "target": entry.target,
        "builtin": entry.builtin,
        "status": status,
        "error": error,
        "active": active,
        "used_for": list(used_for),
        "signature": signature,
    }
