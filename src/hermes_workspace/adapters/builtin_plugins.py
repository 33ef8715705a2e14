"""The factories of the built-in plugins: the objects our own entry points name (pyproject.toml,
``[project.entry-points."hermes_workspace.<category>"]``), exactly as a third party's would.

Each takes a :class:`~hermes_workspace.domain.plugins.PluginContext` and returns the adapter. The
adapter modules are imported inside each factory, so that loading this module (to list or pick a
plugin) imports no adapter library, and only the selected adapters are ever imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_workspace.domain.plugins import PluginContext

if TYPE_CHECKING:
    from hermes_workspace.domain.ports import Chunker, Converter, Embedder, FileSource, IndexStore, Reranker, SessionHistory


def tree_sitter_chunker(context: PluginContext) -> Chunker:
    """``tree-sitter``: :class:`~hermes_workspace.adapters.tree_sitter_chunker.TreeSitterChunker`
    with ``chunk_size``/``overlap``; ``options``: ``min_words`` (pieces smaller are packed with
    their siblings) and ``mode`` (``auto``: by suffix; ``text``: the document path for every file)."""
    from hermes_workspace.adapters.tree_sitter_chunker import TreeSitterChunker
    from hermes_workspace.domain.structure import DEFAULT_MIN_WORDS

    return TreeSitterChunker(
        context.chunk_size,
        context.overlap,
        min_words=int(context.options.get("min_words", DEFAULT_MIN_WORDS)),
        mode=context.options.get("mode", "auto"),
    )


def chonkie_chunker(context: PluginContext) -> Chunker:
    """``chonkie``: :class:`~hermes_workspace.adapters.chonkie_chunker.ChonkieChunker` (chonkie's
    recursive and code chunkers); ``options``: ``mode`` (``auto`` or ``text``)."""
    from hermes_workspace.adapters.chonkie_chunker import ChonkieChunker

    return ChonkieChunker(context.chunk_size, context.overlap, mode=context.options.get("mode", "auto"))


def onnx_embedder(context: PluginContext) -> Embedder:
    """``onnx``: a sentence-transformers model run with onnxruntime (``knowledgebase.embedder``:
    ``model``, ``batch_size``, ``quantize``); derived files go to ``models_dir``."""
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    config = context.embedder
    return OnnxEmbedder(config.model, cache_dir=context.models_dir, batch_size=config.batch_size,
                        quantize=config.quantize)


def sentence_transformers_embedder(context: PluginContext) -> Embedder:
    """``sentence-transformers``: the same models with torch."""
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder(context.embedder.model, batch_size=context.embedder.batch_size)


def model2vec_embedder(context: PluginContext) -> Embedder:
    """``model2vec``: a static model from a local folder (``knowledgebase.embedder.model``)."""
    from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

    return Model2VecEmbedder(context.embedder.model, batch_size=context.embedder.batch_size)


def openai_embedder(context: PluginContext) -> Embedder:
    """``openai``: an OpenAI-compatible HTTP endpoint; sends nothing without consent."""
    from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder

    config = context.embedder
    return OpenAICompatibleEmbedder(
        config.base_url,
        config.model,
        api_key_env=config.api_key_env,
        dimensions=config.dimensions,
        timeout_s=config.timeout_s,
        batch_size=config.batch_size,
        consent=config.consent,
    )


def heuristic_reranker(context: PluginContext) -> Reranker:
    """``heuristic``: reorders by phrase, proximity and field evidence; no model."""
    from hermes_workspace.adapters.heuristic_reranker import HeuristicReranker

    return HeuristicReranker()


def cross_encoder_reranker(context: PluginContext) -> Reranker:
    """``cross-encoder``: a local cross-encoder (``knowledgebase.reranker.model``, a folder)."""
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    return CrossEncoderReranker(context.reranker.model)


def sqlite_fts5_store(context: PluginContext) -> IndexStore:
    """``sqlite-fts5``: the SQLite FTS5 index at ``index_path`` (read-only when ``readonly``)."""
    from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store

    if context.index_path is None:
        raise ValueError("the sqlite-fts5 store needs context.index_path")
    return SqliteFts5Store(context.index_path, readonly=context.readonly)


def filesystem_source(context: PluginContext) -> FileSource:
    """``filesystem``: walks the roots on the local disk, applying ignore rules and the size cap."""
    from hermes_workspace.adapters.filesystem_source import FilesystemSource

    return FilesystemSource(max_file_bytes=context.max_file_bytes, internal_dirs=context.internal_dirs,
                            convertible=context.convertible)


def pypdf_converter(context: PluginContext) -> Converter:
    """``pypdf``: PDF text per page (page anchors), bookmarks as headings; the ``documents`` extra."""
    from hermes_workspace.adapters.pypdf_converter import PypdfConverter

    return PypdfConverter()


def python_docx_converter(context: PluginContext) -> Converter:
    """``python-docx``: DOCX body in order, Heading styles as markdown headings, tables."""
    from hermes_workspace.adapters.python_docx_converter import PythonDocxConverter

    return PythonDocxConverter()


def python_pptx_converter(context: PluginContext) -> Converter:
    """``python-pptx``: one section per slide (slide anchors), tables and notes."""
    from hermes_workspace.adapters.python_pptx_converter import PythonPptxConverter

    return PythonPptxConverter()


def openpyxl_converter(context: PluginContext) -> Converter:
    """``openpyxl``: one section per sheet (sheet anchors), rows as table rows, capped."""
    from hermes_workspace.adapters.openpyxl_converter import OpenpyxlConverter

    return OpenpyxlConverter()


def markitdown_converter(context: PluginContext) -> Converter:
    """``markitdown``: EPUB, and HTML when a suffix is given to it in ``knowledgebase.converters``."""
    from hermes_workspace.adapters.markitdown_converter import MarkitdownConverter

    return MarkitdownConverter()


def hermes_state_history(context: PluginContext) -> SessionHistory:
    """``hermes-state``: :class:`~hermes_workspace.adapters.sqlite_session_history.SqliteSessionHistory`,
    a host's SQLite session store read-only (``knowledgebase.history``: ``database``, default
    ``home/state.db``; ``projects_database``, default ``home/projects.db`` when that file exists,
    else the projects tables of ``database``; ``schema``)."""
    from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory

    history = context.history
    database = history.database or context.home / "state.db"
    projects = history.projects_database
    if projects is None and (context.home / "projects.db").is_file():
        projects = context.home / "projects.db"
    # A registry file named in config must exist and hold the registry (so must registry tables
    # named in knowledgebase.history.schema, the reader checks that): a typo would otherwise
    # attribute every session to its git repository, silently.
    return SqliteSessionHistory(database, projects, schema=history.schema,
                                projects_required=history.projects_database is not None)
