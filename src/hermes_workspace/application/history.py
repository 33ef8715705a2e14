"""Project-history recall (issue 13, seed 003): keep our index of a host's session store up to
date, and search one project's history by keywords, vectors or both.

Two use cases: :class:`SyncHistory` (pick up new, changed and deleted messages; run before each
search and by ``history index``) and :class:`SearchProjectHistory` (``project_history_search``).
Attribution is decided at query time from the host's rows (:mod:`hermes_workspace.domain.history`),
so the index holds sessions and messages, never projects.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_workspace.domain.errors import (
    ConsentRequiredError,
    EmbedderUnavailableError,
    StoreError,
    StoreUnusableError,
    UsageError,
    WorkspaceError,
)
from hermes_workspace.domain.fusion import DEFAULT_RRF_K, fusion_weights, reciprocal_rank_fusion
from hermes_workspace.domain.history import (
    AUTO_PREFIX,
    DEFAULT_CONTEXT_MESSAGES,
    DEFAULT_NEIGHBOUR_CHARS,
    DEFAULT_SNIPPET_CHARS,
    HISTORY_MODES,
    HOME_REASONS,
    HOME_UNKNOWN_SESSION,
    MAX_CONTEXT_MESSAGES,
    MAX_HISTORY_LIMIT,
    HistoryMatch,
    HostMessage,
    HostProject,
    HostSession,
    MessageChunk,
    ProjectFolders,
    ProjectScope,
    attribute,
    content_hash,
    excerpt,
    explicit_scope,
    path_key,
    session_link,
    session_scope,
    sessions_in_scope,
    timestamp_text,
)
from hermes_workspace.domain.paths import json_text
from hermes_workspace.domain.ports import Chunker, ConsentStore, Embedder, HistoryIndex, SessionHistory, TokenCounter
from hermes_workspace.domain.query import parse_query, split_words
from hermes_workspace.domain.semantic import COVERAGE_THRESHOLD, SemanticStatus

CANDIDATES_PER_SIDE = 40
"""Chunks taken from each side before fusion (the workspace retriever's ``sparse_top_k`` /
``dense_top_k`` default); at least the request's ``limit``, as the workspace search does, so a
limit above it is not silently cut to it."""

EMBED_BATCH = 64
"""Chunks embedded per embedder call during a search's catch-up."""

DEFAULT_EMBED_SECONDS = 5.0
"""How long a search spends embedding its project's new chunks before it answers; the rest is
embedded by the next searches or ``history index`` (``semantic_status: partial`` until then)."""

_PART_PATH = Path("message.txt")


def message_chunks(message: HostMessage, chunker: Chunker, chunk_words: int) -> list[MessageChunk]:
    """The indexed parts of one message: the whole message (stripped of surrounding blank space)
    when it has at most ``chunk_words`` words, else the chunker's parts (a long message: a pasted
    log, a plan). Each part satisfies ``content == message.content[offset:offset + len(content)]``;
    an empty message has none.

    Raises:
        Exception: whatever the chunker raises (the caller keeps the message as one part).
    """
    text = message.content or ""
    stripped = text.strip()
    if not stripped:
        return []
    if len(split_words(stripped)) <= chunk_words:
        offset = text.index(stripped)
        return [MessageChunk(message.session_id, message.id, offset, stripped, content_hash(stripped),
                             message.role, message.timestamp)]
    parts = []
    for chunk in chunker.chunk(text, _PART_PATH):
        if chunk.content.strip():
            parts.append(MessageChunk(message.session_id, message.id, chunk.start_char, chunk.content,
                                      content_hash(chunk.content), message.role, message.timestamp))
    return parts


@dataclass(slots=True)
class SyncReport:
    """What one :class:`SyncHistory` run did: ``sessions`` re-read, ``removed`` (sessions gone
    from the host), ``messages`` and ``chunks`` written, ``rebuilt`` (the index was reset because
    the store, schema, roles or chunking changed), ``seconds`` taken and ``failed`` (sessions our
    index refused, each ``{"session_id", "code", "message", "hint"}``; the others were indexed)."""

    sessions: int = 0
    removed: int = 0
    messages: int = 0
    chunks: int = 0
    rebuilt: bool = False
    seconds: float = 0.0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object (the field names)."""
        return {"sessions": self.sessions, "removed": self.removed, "messages": self.messages,
                "chunks": self.chunks, "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3),
                "failed": list(self.failed)}


class SyncHistory:
    """Bring our :class:`HistoryIndex` up to date with the host's messages of ``roles``.

    Each run compares the host's per-session fingerprints (:class:`SessionStat`, one aggregate
    query) with the ones recorded; a session whose fingerprint changed is re-read whole and its
    chunks replaced (unchanged chunks keep their vectors); a session gone from the host is
    removed. ``full`` re-reads every session (an edit that kept a message's length). When the
    store's :meth:`~hermes_workspace.domain.ports.SessionHistory.change_token` is the one of the
    last complete sync by this object, nothing was written since and the run ends at once (a
    long-lived server keeps one object: its searches then cost no aggregate query).
    """

    def __init__(self, history: SessionHistory, index: HistoryIndex, chunker: Chunker, *,
                 roles: Sequence[str], chunk_words: int) -> None:
        self.history = history
        self.index = index
        self.chunker = chunker
        self.roles = tuple(roles)
        self.chunk_words = chunk_words
        self._synced_token: object | None = None

    def source(self) -> str:
        """What the index is built from: the store, the roles and the chunking."""
        return (f"{self.history.signature}|roles={','.join(self.roles)}|words={self.chunk_words}"
                f"|chunker={self.chunker.signature}")

    def execute(self, *, full: bool = False) -> SyncReport:
        """Run one sync.

        Raises:
            HistoryUnavailableError: the host store cannot be read.
            StoreError: our index cannot be written.
        """
        started = time.monotonic()
        report = SyncReport()
        source = self.source()
        token = self.history.change_token()
        if self.index.source != source:
            self.index.reset(source)
            report.rebuilt = True
        elif not full and token is not None and token == self._synced_token:
            report.seconds = time.monotonic() - started
            return report  # nothing was written to the store since the last complete sync
        host = self.history.session_stats(self.roles)
        ours = self.index.session_stats()
        for session_id in sorted(host):
            if not full and ours.get(session_id) == host[session_id]:
                continue
            messages = self.history.messages(session_id, self.roles)
            chunks = [part for message in messages for part in self._parts(message)]
            try:
                # The aggregate's fingerprint, taken before the read: anything the host writes after
                # it changes the fingerprint, so the next run reads the session again.
                self.index.replace_session(session_id, host[session_id], chunks)
            except StoreUnusableError:
                raise
            except StoreError as exc:  # this session only (an id that is not valid text): go on
                report.failed.append({"session_id": session_id, **exc.to_json()})
                continue
            report.sessions += 1
            report.messages += len(messages)
            report.chunks += len(chunks)
        gone = [session_id for session_id in ours if session_id not in host]
        if gone:
            report.removed = self.index.delete_sessions(gone)
        # Taken before the aggregate: a write during this sync changes the token, so the next
        # sync compares the fingerprints again. A session that failed is retried likewise.
        self._synced_token = token if not report.failed else None
        report.seconds = time.monotonic() - started
        return report

    def _parts(self, message: HostMessage) -> list[MessageChunk]:
        try:
            return message_chunks(message, self.chunker, self.chunk_words)
        except Exception:  # noqa: BLE001 - one message the chunker cannot cut is indexed whole
            text = (message.content or "").strip()
            if not text:
                return []
            return [MessageChunk(message.session_id, message.id, (message.content or "").index(text), text,
                                 content_hash(text), message.role, message.timestamp)]


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """One ``project_history_search``: ``query`` (free text), ``mode`` (:data:`HISTORY_MODES`),
    where it is asked from (``session_id``: the conversation's session in the host; else
    ``project``: a project id, name or ``git:<root>``; else ``cwd``: a folder), ``limit`` hits,
    ``context_messages`` neighbours on each side (``None``: the configured number), ``max_tokens``
    budget of the whole response (o200k tokens; ``None``: the configured one), ``sync`` (pick up
    new messages first)."""

    query: str
    mode: str = "hybrid"
    session_id: str | None = None
    project: str | None = None
    cwd: Path | None = None
    limit: int | None = None
    context_messages: int | None = None
    max_tokens: int | None = None
    sync: bool = True


@dataclass(slots=True)
class HistoryResult:
    """One hit: a message of the project's history (seed 003 section 4.3)."""

    session_id: str
    title: str | None
    message_id: int
    role: str
    snippet: str
    score_source: str
    when: str | None
    score: float
    before: list[dict[str, Any]] = field(default_factory=list)
    after: list[dict[str, Any]] = field(default_factory=list)

    def serialize(self, *, spaced: bool = False) -> str:
        """The hit as JSON, compact or with spaces after separators (as in the response)."""
        return json_text(self.to_json(), spaced=spaced)

    def to_json(self) -> dict[str, Any]:
        """Seed 003's fields (``session_id, link, title, message_id, snippet, score_source,
        when``) plus ``role``, ``score`` (fused RRF score) and ``context`` (``before``/``after``:
        neighbouring messages with text, each ``{message_id, role, when, text}``)."""
        return {
            "session_id": self.session_id,
            "link": session_link(self.session_id),
            "title": self.title,
            "message_id": self.message_id,
            "role": self.role,
            "snippet": self.snippet,
            "score_source": self.score_source,
            "when": self.when,
            "score": round(self.score, 6),
            "context": {"before": self.before, "after": self.after},
        }


@dataclass(slots=True)
class HistorySearchResult:
    """The answer of :class:`SearchProjectHistory` (seed 003 section 4.3): ``mode`` used
    (``hybrid``/``semantic`` only when the vectors were searched, else ``keyword``, with a note
    when another mode was asked for),
    ``project``, ``results``, ``sessions_in_scope``, ``semantic_status``, plus ``query``,
    ``notes`` (fallbacks, budget cuts), ``consent`` (what a remote embedding would send, when
    ``semantic_status`` is ``consent_required``), ``tokens``/``max_tokens`` (the budget),
    ``omitted`` (hits left out by the budget) and ``sync`` (what was picked up first)."""

    query: str
    mode: str
    project: ProjectScope
    results: list[HistoryResult]
    sessions_in_scope: int
    semantic_status: SemanticStatus
    notes: list[str] = field(default_factory=list)
    message: str | None = None
    consent: dict[str, Any] | None = None
    tokens: int = 0
    max_tokens: int = 0
    omitted: int = 0
    sync: SyncReport | None = None
    fusion: dict[str, Any] | None = None

    def serialize(self, *, spaced: bool = False) -> str:
        """The response as printed and returned (CLI, MCP): compact JSON, non-ASCII as is, lone
        surrogates escaped; ``spaced``: a space after ``,`` and ``:``, as a client re-serializing
        it with Python's defaults shows it. ``tokens <= max_tokens`` holds for both forms."""
        return json_text(self.to_json(), spaced=spaced)

    def to_json(self) -> dict[str, Any]:
        """The response object; ``message`` only for an empty Home result, ``consent`` only when
        asked for, ``fusion`` (the RRF weights and query kind) only when both sides returned hits."""
        data: dict[str, Any] = {
            "success": True,
            "query": self.query,
            "mode": self.mode,
            "project": self.project.to_json(),
            "results": [r.to_json() for r in self.results],
            "sessions_in_scope": self.sessions_in_scope,
            "semantic_status": self.semantic_status,
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
            "omitted": self.omitted,
            "notes": list(self.notes),
        }
        if self.message is not None:
            data["message"] = self.message
        if self.consent is not None:
            data["consent"] = self.consent
        if self.sync is not None:
            data["sync"] = self.sync.to_json()
        if self.fusion is not None:
            data["fusion"] = self.fusion
        return data


@dataclass(frozen=True, slots=True)
class HistorySettings:
    """The defaults of a search (``knowledgebase.history``): ``limit``, ``context_messages``,
    ``max_tokens``, ``semantic`` (use the embedder at all), ``remote_service`` (the service a
    remote embedder sends text to; ``None`` for a local model: no consent needed) and
    ``embed_seconds`` (catch-up embedding per search)."""

    limit: int = 10
    context_messages: int = DEFAULT_CONTEXT_MESSAGES
    max_tokens: int = 3200
    semantic: bool = True
    remote_service: str | None = None
    embed_seconds: float = DEFAULT_EMBED_SECONDS


def resolve_scope(
    folders: ProjectFolders,
    sessions: Sequence[HostSession],
    request: HistoryRequest,
    git_root: Callable[[Path], Path | None],
) -> ProjectScope:
    """The project ``request`` is asked from: its session's attribution, the named project, or
    the attribution of its folder (the folder's git repository found on disk by ``git_root``).

    Raises:
        UsageError: ``project`` names no registered project (the hint lists them), or names
            ``git:<folder>`` where the host has no session and ``folder`` is no repository root
            here (:func:`check_repository`).
    """
    if request.session_id:
        for session in sessions:
            if session.id == request.session_id:
                return session_scope(folders, session)
        return ProjectScope("home", reason=HOME_UNKNOWN_SESSION)
    if request.project:
        wanted = request.project.strip()
        if wanted.startswith(AUTO_PREFIX):
            scope = repository_scope(folders, wanted[len(AUTO_PREFIX):])
            if scope.kind == "auto" and not sessions_in_scope(folders, sessions, scope):
                check_repository(folders, scope, git_root)
            return scope
        project = folders.find(wanted)
        if project is None:
            raise UsageError(f"no project {wanted!r} in the host's registry",
                             hint=f"Registered projects: {_registered(folders)}. A git repository is named "
                                  "git:<folder>.")
        return explicit_scope(project)
    folder = Path(request.cwd) if request.cwd is not None else Path.cwd()
    written = folder.absolute()
    try:
        real = folder.resolve()
    except (OSError, RuntimeError):
        real = written
    # A registered folder may be known by the path as written (a link the user works through) or
    # by its real path; the repository is the real one (as git itself finds it through links).
    for path in dict.fromkeys((written, real)):
        project = folders.match(str(path))
        if project is not None:
            return explicit_scope(project)
    root = git_root(real)
    return attribute(folders, cwd=str(real), git_root=str(root) if root is not None else None)


def _registered(folders: ProjectFolders) -> str:
    return ", ".join(f"{p.id} ({p.name})" for p in folders.projects.values()) or "none"


def check_repository(folders: ProjectFolders, scope: ProjectScope, git_root: Callable[[Path], Path | None]) -> None:
    """Refuse an ``auto`` scope named ``git:<folder>`` in which the host has no session when
    ``folder`` is no git repository root on this machine: a typo would otherwise answer "no
    session in this project yet", as a real repository without sessions does. (A repository the
    host has sessions in is searched even when its folder is gone: its history is still there.)

    Raises:
        UsageError: the folder does not exist, is in no repository, or is inside one without
            being its root; the hint says how projects are named.
    """
    folder = scope.folders[0] if scope.folders else ""
    naming = (f"Registered projects: {_registered(folders)}. A git repository is named git:<its root folder> "
              "(the folder holding .git), as project.id shows it; or leave the project out to search the "
              "project of the working directory.")
    if not os.path.isdir(folder):
        raise UsageError(f"{scope.id} names no folder on this machine, and the host has no session there",
                         hint=naming)
    root = git_root(Path(folder))
    if root is None:
        raise UsageError(f"{scope.id} names a folder in no git repository, and the host has no session there",
                         hint=naming)
    if path_key(str(root)) not in (path_key(folder), path_key(_real_folder(folder) or folder)):
        raise UsageError(f"{scope.id} names a folder inside the repository {root}, not its root, and the host has "
                         "no session there", hint=f"Did you mean {AUTO_PREFIX}{path_key(str(root))}? {naming}")


def project_folders(history: SessionHistory) -> ProjectFolders:
    """The host's registered projects, each folder also under its real path when it exists here
    and is reached through a link: a host that registered the path as typed (``/tmp/app``) and
    records sessions' working directories as the system gives them (``/private/tmp/app``) still
    attributes them to the project.

    Raises:
        HistoryUnavailableError: the registry cannot be read.
    """
    projects = []
    for project in history.projects():
        folders = list(project.folders)
        for folder in project.folders:
            real = _real_folder(folder)
            if real is not None and real not in folders:
                folders.append(real)
        projects.append(HostProject(project.id, project.name, tuple(folders))
                        if len(folders) > len(project.folders) else project)
    return ProjectFolders(projects)


def _real_folder(folder: str) -> str | None:
    """``folder`` with its links resolved, when it exists on this machine and differs; else None."""
    try:
        if not os.path.isdir(folder):
            return None
        real = os.path.realpath(folder)
    except (OSError, ValueError):
        return None
    return real if path_key(real) != path_key(folder) else None


def repository_scope(folders: ProjectFolders, root: str) -> ProjectScope:
    """The scope named ``git:<root>``: the registered project holding ``root`` when there is
    one (a repository inside a project folder belongs to the project), else the repository's own.

    Raises:
        UsageError: ``root`` is empty or not an absolute path.
    """
    key = path_key(root)
    if not key or not (key.startswith("/") or re.match(r"^[a-z]:/", key)):
        raise UsageError(f"git:{root} does not name a repository folder",
                         hint="Give the repository's absolute folder, as project.id shows it: git:/home/me/src/app.")
    scope = attribute(folders, cwd=None, git_root=key)
    real = _real_folder(key)
    if scope.kind == "auto" and real is not None:
        return attribute(folders, cwd=None, git_root=real)  # git records a repository by its real path
    return scope


class SearchProjectHistory:
    """``project_history_search``: one project's history, by keywords (BM25), vectors or both
    fused by message with RRF (Cormack et al. 2009, k = 60; the workspace search's per-query
    weights, :func:`~hermes_workspace.domain.fusion.fusion_weights`), each hit expanded with neighbouring
    messages read from the host, the whole response fitted to a token budget.

    The project filter is applied before the top-k cut on both sides. A search from the Home
    bucket searches nothing and says why. A remote embedder is used only for a project whose
    consent is recorded for its service; otherwise nothing is sent (not even the query) and
    ``semantic_status`` is ``consent_required``.
    """

    def __init__(
        self,
        history: SessionHistory,
        index: HistoryIndex,
        sync: SyncHistory,
        counter: TokenCounter,
        consents: ConsentStore,
        *,
        embedder: Embedder | None = None,
        git_root: Callable[[Path], Path | None] = lambda _path: None,
        settings: HistorySettings = HistorySettings(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.history = history
        self.index = index
        self.sync = sync
        self.counter = counter
        self.consents = consents
        self.embedder = embedder if settings.semantic else None
        self.git_root = git_root
        self.settings = settings
        self.clock = clock

    def execute(self, request: HistoryRequest) -> HistorySearchResult:
        """Search.

        Raises:
            UsageError: an unknown mode, an empty query, a limit or context out of range, an
                unknown project.
            HistoryUnavailableError: the host store cannot be read.
            StoreError: our index cannot be written or read.
        """
        mode, limit, context, budget = self._checked(request)
        report = self.sync.execute() if request.sync else None
        folders = project_folders(self.history)
        sessions = self.history.sessions()
        scope = resolve_scope(folders, sessions, request, self.git_root)
        # "disabled" until the semantic side is asked; it stays so for Home, where nothing is searched.
        result = HistorySearchResult(request.query, mode, scope, [], 0, "disabled", max_tokens=budget, sync=report)
        if scope.is_home:
            result.message = HOME_REASONS.get(scope.reason or "", HOME_REASONS["no_location"])
            _keyword_only(result, mode)
            self._settle_tokens(result)
            return result
        in_scope = sessions_in_scope(folders, sessions, scope)
        result.sessions_in_scope = len(in_scope)
        ids = [s.id for s in in_scope]
        if not ids:
            result.notes.append("the host has no session in this project yet")
        query = parse_query(request.query)
        if query.is_empty:
            # Punctuation or one-letter words only: nothing to match, and a vector of such a
            # query is noise (its nearest messages would be returned as if they answered).
            result.notes.append("the query has no word to search for (letters or digits, two or more)")
            self._report_status(scope, ids, result)
            _keyword_only(result, mode)
            self._expand([], {}, request, limit, context, budget, result)
            return result
        per_side = max(CANDIDATES_PER_SIDE, limit)
        keyword: list[HistoryMatch] = []
        semantic: list[HistoryMatch] | None = None
        if mode in ("hybrid", "keyword"):
            keyword = _by_message(lambda k: self.index.keyword_search(query, ids, k), per_side)
        if mode in ("hybrid", "semantic"):
            semantic = self._semantic(request.query, scope, ids, result, per_side)
        else:
            self._report_status(scope, ids, result)
        if mode == "semantic" and semantic is None:
            keyword = _by_message(lambda k: self.index.keyword_search(query, ids, k), per_side)
        if semantic is None:
            _keyword_only(result, mode)
        semantic = semantic or []
        titles = {s.id: s.title for s in in_scope}
        weights = (1.0, 1.0)
        if keyword and semantic:
            chosen = fusion_weights(query, 1.0, complete=result.semantic_status == "ready")
            weights = (chosen.keyword, chosen.semantic)
            result.fusion = chosen.to_json()
        ranked = self._fused(keyword, semantic, weights)
        self._expand(ranked, titles, request, limit, context, budget, result)
        return result

    def _checked(self, request: HistoryRequest) -> tuple[str, int, int, int]:
        mode = (request.mode or "hybrid").strip().lower()
        if mode not in HISTORY_MODES:
            raise UsageError(f"unknown mode {request.mode!r}", hint=f"Use one of: {', '.join(HISTORY_MODES)}.")
        if not (request.query or "").strip():
            raise UsageError("the query is empty", hint="Give the words to look for in the project's history.")
        limit = self.settings.limit if request.limit is None else request.limit
        if not 1 <= limit <= MAX_HISTORY_LIMIT:
            raise UsageError(f"limit must be between 1 and {MAX_HISTORY_LIMIT}, got {limit}")
        context = self.settings.context_messages if request.context_messages is None else request.context_messages
        if not 0 <= context <= MAX_CONTEXT_MESSAGES:
            raise UsageError(f"context must be between 0 and {MAX_CONTEXT_MESSAGES} messages, got {context}")
        budget = self.settings.max_tokens if request.max_tokens is None else request.max_tokens
        if not 100 <= budget <= 1_000_000:
            raise UsageError(f"max_tokens must be between 100 and 1000000, got {budget}",
                             hint="It is the token budget of the whole response.")
        return mode, limit, context, budget

    # -- the semantic side ---------------------------------------------------------------

    def _semantic(self, query: str, scope: ProjectScope, ids: list[str], result: HistorySearchResult,
                  per_side: int) -> list[HistoryMatch] | None:
        """The semantic side's matches, or ``None`` when it did not run (no embedder, no consent,
        no vector yet, a query in a language the model does not read, a failing model), with
        ``semantic_status`` and a note saying why."""
        embedder = self.embedder
        if embedder is None:
            result.semantic_status = "disabled"
            return None
        service = self.settings.remote_service
        if service is not None and not self.consents.granted(service, scope.id or ""):
            result.semantic_status = "consent_required"
            done, total = self.index.vector_counts("", ids)
            result.consent = {
                "service": service,
                "project": scope.to_json(),
                "sends": f"the text of {total} message parts in {len(ids)} sessions of this project, and each query",
                "grant": f"hermes-workspace history consent --grant --service {service} --project {scope.id}",
            }
            result.notes.append("nothing was sent to the remote embedding service: the user has not agreed to send "
                                "this project's history to it")
            return None
        try:
            signature = embedder.signature
            self._catch_up(embedder, signature, ids)
            done, total = self.index.vector_counts(signature, ids)
            if total and done == 0:
                result.semantic_status = "indexing"
                return None
            result.semantic_status = "ready" if done >= total else "partial"
            if done < total:
                result.notes.append(f"{total - done} of {total} message parts have no vector yet; "
                                    "semantic hits come from the others")
            if embedder.coverage(query) < COVERAGE_THRESHOLD:
                result.notes.append("the embedding model does not read the query's language")
                return None
            vector = embedder.embed_query(query)
            return _by_message(lambda k: self.index.vector_search(signature, vector, ids, k), per_side)
        except (EmbedderUnavailableError, ConsentRequiredError) as exc:
            result.semantic_status = "unavailable"
            result.notes.append(f"semantic side unavailable: {exc.message}")
            return None
        except WorkspaceError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing model never costs the keyword answer
            result.semantic_status = "unavailable"
            result.notes.append(f"semantic side unavailable: {type(exc).__name__}: {exc}")
            return None

    def _report_status(self, scope: ProjectScope, ids: list[str], result: HistorySearchResult) -> None:
        """``semantic_status`` of a keyword search, which neither embeds nor asks the embedder
        anything (its signature may load a model or call a remote service): how far the
        project's vectors of the last model used are."""
        if self.embedder is None:
            return
        service = self.settings.remote_service
        if service is not None and not self.consents.granted(service, scope.id or ""):
            result.semantic_status = "consent_required"
            return
        signature = self.index.vector_signature
        done, total = self.index.vector_counts(signature, ids) if signature is not None else (0, 1)
        result.semantic_status = "ready" if done >= total else "partial" if done else "indexing"

    def _catch_up(self, embedder: Embedder, signature: str, ids: list[str]) -> None:
        deadline = self.clock() + self.settings.embed_seconds
        while self.clock() < deadline:
            batch = self.index.pending(signature, ids, EMBED_BATCH)
            if not batch:
                return
            embed_history_batch(embedder, self.index, signature, batch)

    # -- fusion and expansion ------------------------------------------------------------

    @staticmethod
    def _fused(keyword: list[HistoryMatch], semantic: list[HistoryMatch],
               weights: tuple[float, float]) -> list[tuple[float, str, HistoryMatch]]:
        best: dict[tuple[str, int], HistoryMatch] = {}
        lists: list[list[tuple[str, int]]] = []
        for side in (keyword, semantic):
            keys: list[tuple[str, int]] = []
            for match in side:
                key = (match.session_id, match.message_id)
                if key not in keys:
                    keys.append(key)
                    # The keyword side's part holds the query's words: it makes the better snippet.
                    best.setdefault(key, match)
            lists.append(keys)
        fused = reciprocal_rank_fusion(lists, weights, k=DEFAULT_RRF_K)
        out = []
        for item in fused:
            in_keyword, in_semantic = (rank is not None for rank in item.ranks)
            source = "both" if in_keyword and in_semantic else "keyword" if in_keyword else "semantic"
            out.append((item.score, source, best[item.key]))  # type: ignore[index]
        return out

    def _expand(self, ranked: list[tuple[float, str, HistoryMatch]], titles: dict[str, str | None],
                request: HistoryRequest, limit: int, context: int, budget: int, result: HistorySearchResult) -> None:
        """Read each hit's neighbours from the host and fit the response to ``budget`` tokens,
        counted on :meth:`HistorySearchResult.serialize` exactly as printed (compact, and with
        spaces after separators: the budget holds for both). Whole hits are kept in rank order;
        the first one that does not fit loses neighbours from the far end (the first hit also its
        snippet's length) and, if that is not enough, it and every later hit are left out
        (``omitted``, with a note).

        Raises:
            UsageError: not even the response without hits fits ``budget`` (the hint names the
                smallest budget for this query).
        """
        words = parse_query(request.query).words
        candidates: list[tuple[HistoryResult, str]] = []
        for score, source, match in ranked:
            if len(candidates) >= limit:
                break
            window = self.history.window(match.session_id, match.message_id, context, context, self.sync.roles)
            own = [m for m in window if m.id == match.message_id]
            if not own:
                continue  # deleted in the host since it was indexed; the next sync drops it
            candidates.append((HistoryResult(
                match.session_id, titles.get(match.session_id), match.message_id, own[0].role,
                excerpt(match.content, words, DEFAULT_SNIPPET_CHARS), source, timestamp_text(own[0].timestamp), score,
                # The store skips neighbours without text; a plugin store that returns them
                # still has them left out here (then fewer than asked for).
                before=[_neighbour(m) for m in window if m.id < match.message_id and (m.content or "").strip()],
                after=[_neighbour(m) for m in window if m.id > match.message_id and (m.content or "").strip()],
            ), match.content))
        notes = list(result.notes)

        def measure(kept: list[HistoryResult], omitted: int) -> int:
            result.results = kept
            result.omitted = omitted
            result.notes = notes + ([f"{omitted} more hits left out to stay within {budget} tokens; raise "
                                     "max_tokens or lower context to see them"] if omitted else [])
            return self._settle_tokens(result)

        kept: list[HistoryResult] = []
        omitted = 0
        # Hits that surely fit are taken on an estimate (the frame's exact count plus each hit's
        # own, with a margin for the note and for tokens merging at the joins); only the hits near
        # the budget are measured exactly, on the whole response.
        estimate = measure([], 0) + ESTIMATE_MARGIN
        start = 0
        for hit, _ in candidates:
            cost = max(self.counter.count(hit.serialize()), self.counter.count(hit.serialize(spaced=True))) + 2
            if estimate + cost > budget:
                break
            kept.append(hit)
            estimate += cost
            start += 1
        for position, (hit, content) in enumerate(candidates[start:], start=start):
            later = len(candidates) - position - 1
            if measure(kept + [hit], later) <= budget or self._shrink(
                    hit, content, words, first=not kept, fits=lambda: measure(kept + [hit], later) <= budget):
                kept.append(hit)
                continue
            omitted = len(candidates) - position
            break
        total = measure(kept, omitted)
        while total > budget and kept:
            kept.pop()  # the note about what was left out did not fit beside the last hit
            omitted += 1
            total = measure(kept, omitted)
        if total > budget:
            minimum = total
            long_query = self.counter.count(request.query) > budget // 4
            raise UsageError(
                f"max_tokens {budget} is below the smallest response to this search ({minimum} tokens "
                "without any hit)",
                hint=f"Give max_tokens of at least {minimum}, more to see hits."
                     + (" The query is repeated in the response: a shorter one needs less." if long_query else ""))

    def _settle_tokens(self, result: HistorySearchResult) -> int:
        """Set ``result.tokens`` to the token count of the response as printed (compact JSON),
        repeated until the number it prints settles; return the larger of that and the count of
        the spaced form, which is what the budget is checked against."""
        tokens = result.max_tokens
        for _ in range(4):
            result.tokens = tokens
            counted = self.counter.count(result.serialize())
            if counted == tokens:
                break
            tokens = counted
        result.tokens = counted
        return max(counted, self.counter.count(result.serialize(spaced=True)))

    @staticmethod
    def _shrink(hit: HistoryResult, content: str, words: list[str], *, first: bool, fits: Callable[[], bool]) -> bool:
        """Make ``hit`` fit (``fits()``) by dropping neighbours from the far end, then, for the
        first hit only, by cutting its snippet down to 60 characters; False when it cannot."""
        while hit.before or hit.after:
            if len(hit.before) >= len(hit.after):
                hit.before.pop(0)
            else:
                hit.after.pop()
            if fits():
                return True
        chars = DEFAULT_SNIPPET_CHARS
        while first and chars > 60:
            chars //= 2
            hit.snippet = excerpt(content, words, chars)
            if fits():
                return True
        return False


ESTIMATE_MARGIN = 64
"""Tokens kept free when hits are taken on their own counts (:meth:`SearchProjectHistory._expand`):
room for the note about left-out hits (about 25 tokens) and for tokens merging or splitting where
hits are joined; the exact count of the whole response decides the rest."""

MAX_CANDIDATES = 4_000
"""The most message parts one side of a search reads while collecting distinct messages."""


_SEMANTIC_WHY = frozenset({"disabled", "consent_required", "indexing", "unavailable"})
"""The ``semantic_status`` values that explain by themselves why the semantic side did not run."""


def _keyword_only(result: HistorySearchResult, requested: str) -> None:
    """Record that the semantic side did not take part in ``result`` (any answer: a search, a
    Home answer, a query without words): ``mode`` becomes ``keyword`` and, when ``requested``
    asked for the semantic side, one note says so, the same in every case: ``semantic side
    <why>: keyword results only``, ``<why>`` being ``semantic_status`` when it explains it, else
    ``skipped`` (the vectors are there, but this query or scope does not use them; another note
    says why)."""
    result.mode = "keyword"
    if requested != "keyword":
        status = result.semantic_status
        why = status if status in _SEMANTIC_WHY else "skipped"
        result.notes.append(f"semantic side {why}: keyword results only")


def _by_message(search: Callable[[int], list[HistoryMatch]], wanted: int) -> list[HistoryMatch]:
    """``search(k)``'s best ``k`` parts, with ``k`` doubled until they hold ``wanted`` distinct
    messages or the side has no more (several parts of one long message can match: counting
    parts would return fewer messages than asked for)."""
    k = wanted
    while True:
        matches = search(k)
        messages = {(m.session_id, m.message_id) for m in matches}
        if len(messages) >= wanted or len(matches) < k or k >= MAX_CANDIDATES:
            return matches
        k = min(MAX_CANDIDATES, k * 2)


def _neighbour(message: HostMessage) -> dict[str, Any]:
    return {"message_id": message.id, "role": message.role, "when": timestamp_text(message.timestamp),
            "text": excerpt(message.content or "", (), DEFAULT_NEIGHBOUR_CHARS)}


def embed_history_batch(embedder: Embedder, index: HistoryIndex, signature: str, batch: Sequence[MessageChunk]) -> None:
    """Embed one batch of chunks and store the vectors; a chunk the model does not read (its
    :meth:`~hermes_workspace.domain.ports.Embedder.coverage` is below the threshold) is marked
    unreadable instead of sent.

    Raises:
        EmbedderUnavailableError, ConsentRequiredError: the embedder cannot run; nothing stored.
    """
    readable = [chunk for chunk in batch if embedder.coverage(chunk.content) >= COVERAGE_THRESHOLD]
    vectors = embedder.embed_documents([chunk.content for chunk in readable]) if readable else []
    by_key = {chunk.key: vector for chunk, vector in zip(readable, vectors)}
    index.add_vectors(signature, [(chunk, by_key.get(chunk.key)) for chunk in batch])


def index_project_history(
    sync: SyncHistory,
    history: SessionHistory,
    index: HistoryIndex,
    consents: ConsentStore,
    *,
    embedder: Embedder | None,
    remote_service: str | None,
    full: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """``history index``: sync, then embed every pending chunk the user allows: all projects with
    a local model; with a remote one, only the projects whose consent is recorded for its service.
    Returns ``{"sync", "embedded", "pending", "skipped_for_consent", "semantic_status"}``; ``progress``
    is called with ``(done, total)`` chunks. With a remote service and no project consented, the
    embedder is not touched at all (``semantic_status: consent_required``).

    Raises:
        HistoryUnavailableError, StoreError: as :class:`SyncHistory`.
    """
    report = sync.execute(full=full)
    out: dict[str, Any] = {"sync": report.to_json(), "embedded": 0, "pending": 0, "skipped_for_consent": 0,
                           "semantic_status": "disabled"}
    if embedder is None:
        return out
    folders = project_folders(history)
    sessions = history.sessions()
    allowed: list[str] = []
    for session in sessions:
        scope = session_scope(folders, session)
        if scope.is_home:
            continue
        if remote_service is not None and not consents.granted(remote_service, scope.id or ""):
            out["skipped_for_consent"] += 1
            continue
        allowed.append(session.id)
    if not allowed and remote_service is not None:
        # Nothing may be sent: the embedder is not even asked for its signature, which a remote
        # one may learn by sending a probe request to the service (seed 003 section 5).
        out["semantic_status"] = "consent_required" if out["skipped_for_consent"] else "ready"
        return out
    try:
        signature = embedder.signature
        _, total = index.vector_counts(signature, allowed)
        while True:
            batch = index.pending(signature, allowed, EMBED_BATCH * 4)
            if not batch:
                break
            embed_history_batch(embedder, index, signature, batch)
            out["embedded"] += len(batch)
            if progress is not None:
                progress(out["embedded"], total)
    except (EmbedderUnavailableError, ConsentRequiredError) as exc:
        out["semantic_status"] = "unavailable"
        out["error"] = exc.to_json()
    # After a failure the embedder is not asked again: progress is that of the vectors stored.
    signature = embedder.signature if "error" not in out else index.vector_signature
    done, total = index.vector_counts(signature or "", allowed)
    out["pending"] = total - done
    if "error" not in out:
        out["semantic_status"] = "ready" if done >= total else "partial"
    return out


__all__ = [
    "HistoryRequest",
    "HistoryResult",
    "HistorySearchResult",
    "HistorySettings",
    "SearchProjectHistory",
    "SyncHistory",
    "SyncReport",
    "check_repository",
    "embed_history_batch",
    "index_project_history",
    "message_chunks",
    "resolve_scope",
]
