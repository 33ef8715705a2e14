"""Plugins (issue 11): what a plugin factory is called with, and the chunker that routes each file
to the chunker configured for its kind or suffix.

A plugin is an entry point in one of the groups of :data:`CATEGORIES` (``hermes_workspace.chunkers``
...). The object it names is a *factory*: a callable (a class, a function) called with one
:class:`PluginContext` and returning an object that satisfies the category's port
(:mod:`hermes_workspace.domain.ports`). A class whose constructor takes other arguments may define
a ``from_context(context)`` class method instead; it is preferred when present. No library type
crosses the contract: the context holds paths, numbers, strings and the validated config
sections, nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_workspace.domain import constants as c
from hermes_workspace.domain.config import ChunkerRoutes, EmbedderConfig, HistoryConfig, RerankerConfig, WorkspaceConfig
from hermes_workspace.domain.model import Chunk
from hermes_workspace.domain.ports import Chunker

ENTRY_POINT_PREFIX = "hermes_workspace."
"""Entry-point groups are ``hermes_workspace.<category>``."""

CATEGORIES = ("chunkers", "converters", "embedders", "rerankers", "stores", "sources", "histories")
"""Plugin categories, one entry-point group each (``hermes_workspace.chunkers``...):

- ``chunkers``: a :class:`~hermes_workspace.domain.ports.Chunker`; several are active at once,
  chosen per file kind or suffix (``knowledgebase.chunkers``).
- ``converters``: turn a document's bytes into text with anchors (PDF, DOCX...), by suffix.
- ``embedders``: an :class:`~hermes_workspace.domain.ports.Embedder` (``knowledgebase.embedder.provider``).
- ``rerankers``: a :class:`~hermes_workspace.domain.ports.Reranker` (``knowledgebase.reranker.provider``).
- ``stores``: an :class:`~hermes_workspace.domain.ports.IndexStore` opened on
  :attr:`PluginContext.index_path` (``knowledgebase.store.provider``); it is closed with ``close()``.
- ``sources``: a :class:`~hermes_workspace.domain.ports.FileSource` (``knowledgebase.source.provider``).
- ``histories``: a :class:`~hermes_workspace.domain.ports.SessionHistory`, another application's
  session store read-only (``knowledgebase.history.provider``; issue 13); it is closed with ``close()``.
"""


@dataclass(frozen=True, slots=True)
class PluginContext:
    """What a plugin factory is called with (the factory contract). Picklable: worker processes
    build their chunkers from the same context.

    Every category gets ``category``, ``name`` (the entry-point name selected), ``home`` (the
    Hermes home), ``models_dir`` (where derived model files go) and ``options`` (the mapping
    ``knowledgebase.plugins.<name>`` of config.yaml, plain YAML values, ``{}`` when absent: a
    plugin's own settings, which it should validate itself and put into its ``signature``).
    Per category:

    - chunkers: ``chunk_size`` and ``overlap`` in words (``knowledgebase.chunking``);
    - embedders: ``embedder``, the validated ``knowledgebase.embedder`` section;
    - rerankers: ``reranker``, the validated ``knowledgebase.reranker`` section;
    - stores: ``index_path`` (the SQLite file of the built-in store; another store may use its
      folder) and ``readonly`` (a search opens it read-only);
    - sources: ``max_file_bytes`` (files larger are skipped), ``internal_dirs`` (never to
      be walked: the index, the logs, the model files) and ``convertible`` (suffixes a converter
      reads, ``.pdf``...: offered although they look binary);
    - converters: ``max_file_bytes``;
    - histories: ``history``, the validated ``knowledgebase.history`` section with ``database``
      and ``projects_database`` resolved to absolute paths.
    """

    category: str
    name: str
    home: Path
    models_dir: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    chunk_size: int = c.DEFAULT_CHUNK_SIZE
    overlap: int = c.DEFAULT_OVERLAP
    max_file_bytes: int = int(c.DEFAULT_MAX_FILE_MB * 1024 * 1024)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    reranker: RerankerConfig = field(default_factory=RerankerConfig)
    index_path: Path | None = None
    readonly: bool = False
    internal_dirs: tuple[Path, ...] = ()
    convertible: tuple[str, ...] = ()
    history: HistoryConfig = field(default_factory=HistoryConfig)


def options_digest(options: Mapping[str, Any]) -> str:
    """A short, stable digest of a plugin's options (16 hex digits of SHA-256 over sorted JSON),
    so that changing them re-does what the plugin produced even when its own signature omits
    them; ``""`` for no options."""
    if not options:
        return ""
    payload = json.dumps(options, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


class RoutedChunker:
    """A :class:`~hermes_workspace.domain.ports.Chunker` that hands each file to the chunker of its
    route (``knowledgebase.chunkers``, see :class:`~hermes_workspace.domain.config.ChunkerRoutes`).

    ``chunkers`` maps each route key (``"default"``, a kind, a suffix) to ``(name, chunker,
    options)``; a key missing from it uses ``"default"``'s. :meth:`signature_for` is the signature
    of the chunker that handles a path (plus a digest of its options), so that changing one
    route's chunker re-chunks only that route's files; :attr:`signature` combines them all.
    """

    def __init__(self, routes: ChunkerRoutes, chunkers: Mapping[str, tuple[str, Chunker, Mapping[str, Any]]]) -> None:
        if "default" not in chunkers:
            raise ValueError("a chunker for the 'default' route is required")
        self.routes = routes
        self._chunkers = dict(chunkers)
        self._signatures: dict[str, str] = {}

    def chunker_for(self, path: Path) -> Chunker:
        """The chunker that handles ``path``."""
        return self._entry(self.routes.route_for(path))[1]

    def name_for(self, path: Path) -> str:
        """The plugin name of the chunker that handles ``path``."""
        return self._entry(self.routes.route_for(path))[0]

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        """The chunks of ``path``'s chunker (raises what it raises)."""
        return self.chunker_for(path).chunk(text, path)

    def signature_for(self, path: Path) -> str:
        """The signature of ``path``'s chunker; ``;options=<digest>`` is appended when its
        ``knowledgebase.plugins`` options are not empty (so the built-in chunker's signature is
        unchanged from before plugins, and no index is re-chunked by an upgrade)."""
        return self.route_signature(self.routes.route_for(path))

    def route_signature(self, route: str) -> str:
        """The signature of the chunker of a route key."""
        signature = self._signatures.get(route)
        if signature is None:
            _, chunker, options = self._entry(route)
            digest = options_digest(options)
            signature = chunker.signature + (f";options={digest}" if digest else "")
            self._signatures[route] = signature
        return signature

    @property
    def signature(self) -> str:
        """Every route's key and signature, in route order."""
        return "|".join(f"{key}={self.route_signature(key)}" for key in sorted(self._chunkers))

    def _entry(self, route: str) -> tuple[str, Chunker, Mapping[str, Any]]:
        return self._chunkers.get(route) or self._chunkers["default"]


def file_signatures(config: WorkspaceConfig, chunker: Chunker) -> Callable[[Path], str]:
    """The per-file config signature (stored with each file; a change re-chunks the file):
    :meth:`WorkspaceConfig.chunking_signature` of the signature of the chunker that handles the
    file (:meth:`RoutedChunker.signature_for`), or of ``chunker.signature`` for a chunker without
    ``signature_for`` (one given to the Python API). Memoized per chunker signature."""
    signature_for = getattr(chunker, "signature_for", None)
    if signature_for is None:
        constant = config.chunking_signature(chunker.signature)
        return lambda path: constant
    cache: dict[str, str] = {}

    def of(path: Path) -> str:
        own = signature_for(path)
        digest = cache.get(own)
        if digest is None:
            digest = cache[own] = config.chunking_signature(own)
        return digest

    return of
