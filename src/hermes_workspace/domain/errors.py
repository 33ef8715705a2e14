"""Errors with stable codes. Adapters translate library exceptions into these at the boundary.

Every :class:`WorkspaceError` carries a ``code`` (a stable snake_case string that callers may
match on), a human ``message``, a ``hint`` saying what to do, and the process ``exit_code`` the
CLI uses (values from BSD ``sysexits.h`` where one fits).
"""

from __future__ import annotations

from typing import Any


class WorkspaceError(Exception):
    """Base of every error the project raises on purpose.

    Raises nothing itself. ``to_json()`` gives ``{"code", "message", "hint"}``, the body of the
    CLI's ``{"error": ...}`` object.
    """

    code = "workspace_error"
    exit_code = 1
    default_hint = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def to_json(self) -> dict[str, Any]:
        """``{"code": str, "message": str, "hint": str}``."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


class ConfigError(WorkspaceError):
    """The configuration file or a value in it is invalid (EX_CONFIG)."""

    code = "config_invalid"
    exit_code = 78
    default_hint = "Fix the value in config.yaml (HERMES_HOME/config.yaml) and run the command again."


class UnknownPluginError(ConfigError):
    """Config names a plugin that no installed package provides in that category (EX_CONFIG).
    ``installed`` lists the names that are (the message lists them too)."""

    code = "plugin_unknown"
    exit_code = 78

    def __init__(self, message: str, *, installed: tuple[str, ...] = (), hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.installed = installed


class ConfigWriteError(WorkspaceError):
    """The configuration file cannot be written (EX_CANTCREAT)."""

    code = "config_unwritable"
    exit_code = 73
    default_hint = "Check that HERMES_HOME and its config.yaml are writable."


class UsageError(WorkspaceError):
    """A command line or API argument is invalid (exit 2, as argparse and click use)."""

    code = "usage_error"
    exit_code = 2
    default_hint = "Run with --help to see the accepted options."


class RootOverlapError(UsageError):
    """``roots add`` of a folder whose files another root indexes already (the same folder under
    another path, inside a recursive root) or that, recursive, would hold another root (seed 004:
    overlapping roots and symlink aliases are errors). Exit 2, as a usage error; the message
    names the other root, the hint what to do."""

    code = "root_overlap"


class RootNotFoundError(WorkspaceError):
    """A root to add does not exist or is not a directory (EX_NOINPUT)."""

    code = "root_not_found"
    exit_code = 66
    default_hint = "Check the path; roots must be existing directories."


class RootNotConfiguredError(WorkspaceError):
    """``roots remove`` named a path that is not a configured root (EX_NOINPUT)."""

    code = "root_not_configured"
    exit_code = 66
    default_hint = "Run `hermes-workspace roots list` to see the configured roots."


class MissingExtraError(WorkspaceError):
    """An optional dependency group is not installed (EX_UNAVAILABLE)."""

    code = "extra_missing"
    exit_code = 69


class IndexBusyError(WorkspaceError):
    """Another index run holds the workspace's index lock (EX_TEMPFAIL)."""

    code = "index_busy"
    exit_code = 75
    default_hint = ("Another `index`, or a `watch` (or `mcp --watch`) indexing a batch, writes this index: run "
                    "it again once that is done; a watch holds it only for the seconds a batch takes.")


class IndexNotFoundError(WorkspaceError):
    """Search was asked of a workspace that has never been indexed (EX_NOINPUT)."""

    code = "index_missing"
    exit_code = 66
    default_hint = "Run `hermes-workspace index` first."


class StoreError(WorkspaceError):
    """The index database failed: corrupt, not writable, or locked for too long (EX_IOERR)."""

    code = "store_error"
    exit_code = 74
    default_hint = "Check that the index directory is writable; delete <workspace>/.index to rebuild it."


class StoreUnusableError(StoreError):
    """The index database cannot be written at all: the disk is full, the file or its folder is
    read-only, an I/O error, the file is gone, damaged, or locked by another writer for longer
    than the busy timeout. Every later write would fail the same way, so ``index`` stops at the
    first one (exit 74, like any :class:`StoreError`) instead of reporting it for each file;
    what was committed before stays. A plain :class:`StoreError` during ``index`` is one file's
    failure (its chunks broke a constraint, its name is not valid Unicode) and the run goes on.
    Adapters choose the class from the database's own error class."""


class DiskSpaceLowError(StoreUnusableError):
    """``index`` stopped writing because the index's file system has less free space than
    ``knowledgebase.storage.min_free_disk``: checked before each batch of writes, so nothing is
    half-written and every batch committed before stays. A full disk caught before SQLite hits
    it: exit 74 like :class:`StoreUnusableError`, with its own code."""

    code = "disk_space_low"
    default_hint = ("Free some disk space, or lower knowledgebase.storage.min_free_disk in config.yaml "
                    "(0 turns the check off).")


class BinaryContentError(WorkspaceError):
    """A file's bytes look binary (NUL bytes without a UTF-16/32 byte-order mark): skip it."""

    code = "binary_content"


class DecodeError(WorkspaceError):
    """A file's bytes could not be decoded to text without loss (seed 000: ``EncodingError``)."""

    code = "encoding_error"
    default_hint = "Convert the file to UTF-8, or add it to .hermesignore."


class AmbiguousEncodingError(DecodeError):
    """Several legacy encodings read a file's bytes equally well. ``candidates`` names them (Python
    codec names, best first): evidence from elsewhere, such as the encoding the other files of its
    folder were read with, may pick one (see
    :func:`~hermes_workspace.domain.encodings.sibling_hint`)."""

    def __init__(self, message: str, *, candidates: tuple[str, ...], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.candidates = candidates


class ChunkingError(WorkspaceError):
    """A chunker could not chunk a file."""

    code = "chunking_error"


class ConversionError(WorkspaceError):
    """A document converter could not turn a file into text (a damaged, encrypted or mislabelled
    document): that file fails with stage ``convert`` and the run goes on."""

    code = "conversion_error"
    default_hint = "Open the file in its application to check it, or add it to .hermesignore."


class NoTextLayerError(ConversionError):
    """A PDF none of whose pages has extractable text (a scanned document, or one whose text is
    drawn as images): nothing to index. Reported per file so that the user can see which."""

    code = "no_text_layer"
    default_hint = "Run OCR on it first (e.g. ocrmypdf adds a text layer), then index again."


DOCUMENTS_EXTRA_HINT = "pip install 'hermes-workspace[documents]'"
"""How to install the document converters' libraries (the ``documents`` extra)."""


class ConverterUnavailableError(WorkspaceError):
    """A configured document converter cannot run because its library is not installed
    (EX_UNAVAILABLE). ``index`` skips the files it would convert (``converter_unavailable``) and
    says once how to install it."""

    code = "converter_unavailable"
    exit_code = 69
    default_hint = (
        f"Install the document converters ({DOCUMENTS_EXTRA_HINT}), or turn the suffix off in "
        "knowledgebase.converters (e.g. '.pdf': none)."
    )


class EmbedderUnavailableError(WorkspaceError):
    """The configured embedder cannot run: extra not installed, model not found, endpoint
    unreachable or answering nonsense (EX_UNAVAILABLE). Search falls back to keywords and reports
    ``semantic_status: unavailable``; ``index`` keeps the keyword index and says so."""

    code = "embedder_unavailable"
    exit_code = 69
    default_hint = (
        "Install the semantic extra (pip install 'hermes-workspace[semantic]'), check "
        "knowledgebase.embedder in config.yaml, or set its provider to none."
    )


class ConsentRequiredError(WorkspaceError):
    """A remote embedder is configured but the user has not agreed to send text to it; nothing
    was sent (EX_NOPERM)."""

    code = "consent_required"
    exit_code = 77
    default_hint = (
        "To allow sending chunk text to the endpoint, set knowledgebase.embedder.consent to the "
        "same URL as knowledgebase.embedder.base_url in config.yaml."
    )


class HistoryUnavailableError(WorkspaceError):
    """The host's session store cannot be read: missing, unreadable, not a SQLite database, or
    lacking a configured table or column (EX_NOINPUT). Nothing was written to it."""

    code = "history_unavailable"
    exit_code = 66
    default_hint = (
        "Set knowledgebase.history.database (and projects_database) in config.yaml to the host's "
        "session store, and knowledgebase.history.schema to its table and column names."
    )


class RerankTimeoutError(WorkspaceError):
    """A reranker did not finish by its deadline; the fused order is kept."""

    code = "rerank_timeout"


class RerankerUnavailableError(WorkspaceError):
    """The configured reranker cannot load or run; the fused order is kept."""

    code = "reranker_unavailable"
    exit_code = 69
    default_hint = "Install the semantic extra, check knowledgebase.reranker in config.yaml, or set its provider to none."


class HandleNotFoundError(WorkspaceError):
    """A handle or cursor names no result set this index holds (EX_NOINPUT): mistyped, or made
    by another index."""

    code = "handle_not_found"
    exit_code = 66
    default_hint = "Run the search again and use a handle from its hits (they look like 5e0c17aa:3)."


class HandleExpiredError(WorkspaceError):
    """A handle or cursor names a result set that expired or was evicted (EX_NOINPUT)."""

    code = "handle_expired"
    exit_code = 66
    default_hint = (
        "Run the search again: a result set lasts knowledgebase.handles.ttl_hours (24 h by default), and only the "
        "newest knowledgebase.handles.max_sets (200) are kept."
    )


class TokenizerUnavailableError(WorkspaceError):
    """The token counter for budgets cannot be loaded (EX_UNAVAILABLE): its rank file is missing
    or does not have its published SHA-256. Budgets are never estimated from bytes instead."""

    code = "tokenizer_unavailable"
    exit_code = 69
    default_hint = "Reinstall hermes-workspace: the o200k_base rank file ships inside the package."


class NotIndexedError(WorkspaceError):
    """``delete`` (or another command naming indexed files) was given a path under which the
    index holds no file (EX_NOINPUT)."""

    code = "not_indexed"
    exit_code = 66
    default_hint = "Run `hermes-workspace list` to see the indexed files (paths are absolute, or relative to the current folder)."


def reraise_interrupt(exc: BaseException) -> None:
    """Raise the ``KeyboardInterrupt`` found in ``exc`` or its chain of causes and contexts, if
    any; else return. For handlers that turn failures into results (a per-file error, a fallback,
    a database error): an interrupt (Ctrl-C, or a subclass such as the CLI's SIGTERM) that the
    interrupted code turned into another error while handling it (a rollback that failed, a
    library's own cleanup) must still stop the run. The interrupt is raised anew, of its own
    class, with ``exc`` as its cause.

    Raises:
        KeyboardInterrupt: (or its subclass) when the chain holds one.
    """
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            if cause is exc:
                raise exc
            raise type(cause)(*cause.args) from exc
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__


class PluginExit(Exception):
    """A plugin's code called ``sys.exit`` (``SystemExit``) while it was building, chunking or
    converting: reported as that plugin's failure, so that one plugin cannot end the run or the
    MCP server (a user trial's ``chunk()`` that exited killed both)."""

    def __init__(self, code: object) -> None:
        super().__init__(f"the plugin called sys.exit({code!r})")
