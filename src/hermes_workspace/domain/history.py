"""Project-history recall (issue 13, seed 003): the vocabulary of searching another application's
session history, and the pure rules that decide which project a session belongs to.

The *host* is the application that owns the session store (an agent's ``state.db``: sessions and
their messages, plus a registry of projects and their folders). We only ever read it. What we
derive (message chunks, the keyword index, vectors, consents) lives in our own files.

Attribution (seed 003 section 3) is decided at query time, from the host's current rows, so a
session the host moves to another project is found there by the next search, and nothing is
re-embedded: vectors are keyed by session and message, never by project.

1. A session whose persisted ``project_id`` names a registered project belongs to it.
2. Else the session's ``cwd``, then its git repository root, is matched against the registered
   project folders; the longest folder that is the path or one of its ancestors wins
   (an *explicit* project).
3. Else a git repository root is a project of its own (an *auto* project, id ``git:<path>``).
4. Else the session is in the *Home* bucket: it belongs to no project, and a search from it
   returns an explicit empty result with the reason, never a search of everything.

Paths are compared as written by the host, after :func:`path_key` normalization; the host's paths
may not exist on this machine, so nothing here touches the file system.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
import ntpath
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from hermes_workspace.domain.errors import ConfigError

HISTORY_MODES = ("hybrid", "keyword", "semantic")
"""``project_history_search`` modes (seed 003 section 4): both sides fused (default), BM25 only
(exact symbols, error codes), vectors only (the same question in other words)."""

ScopeKind = Literal["explicit", "auto", "home"]

HOME_NO_LOCATION = "no_location"
"""Home-bucket reason: the session (or the search) has neither a working directory nor a git root."""
HOME_NO_PROJECT = "no_project"
"""Home-bucket reason: the working directory is in no registered project folder and in no git
repository."""
HOME_UNKNOWN_SESSION = "unknown_session"
"""Home-bucket reason: the session id the search was asked from is not in the host's store."""

HOME_REASONS = {
    HOME_NO_LOCATION: "the conversation has no working directory and no git repository, so it belongs to no "
                      "project; project history is searched only inside a project",
    HOME_NO_PROJECT: "the conversation's working directory is in no registered project folder and in no git "
                     "repository, so it belongs to no project; project history is searched only inside a project",
    HOME_UNKNOWN_SESSION: "the host has no session with this id, so its project is unknown",
}
"""What each Home-bucket reason tells the user (the ``message`` of an empty result)."""

AUTO_PREFIX = "git:"
"""Auto projects are named by their repository root: ``git:/home/me/src/app``."""

DEFAULT_ROLES = ("user", "assistant")
"""Message roles indexed by default (seed 003 section 4.2): what the people and the agent said;
tool output and system prompts are noise for recall and can be large."""

DEFAULT_CONTEXT_MESSAGES = 2
"""Neighbouring messages read from the host on each side of a hit (seed 003: "前后各 N 条")."""

DEFAULT_HISTORY_CHUNK_WORDS = 200
"""A message longer than this many words is indexed in parts. Chat messages are short; a long one
(a pasted log, a plan) holds several topics, and a 200-word part is about what a 256-token
sentence-embedding model reads whole (all-MiniLM-L6-v2 truncates at 256 word pieces)."""

DEFAULT_SNIPPET_CHARS = 480
"""A hit's ``snippet`` is cut to about this many characters around its first matching word."""

DEFAULT_NEIGHBOUR_CHARS = 240
"""Each neighbouring message in a hit's ``context`` is cut to about this many characters."""

MAX_CONTEXT_MESSAGES = 20
"""Upper bound of the neighbours asked for on each side."""

MAX_HISTORY_LIMIT = 100
"""Upper bound of the hits of one history search (``--limit``, ``knowledgebase.history.limit``)."""


@lru_cache(maxsize=65_536)
def path_key(path: str) -> str:
    """The comparable form of a host path: separators and ``.``/``..`` normalized, no trailing
    separator; Windows paths (``C:\\...``, ``\\\\server\\...``) case-folded with ``/`` separators.
    ``""`` for an empty or blank path."""
    text = (path or "").strip()
    if not text:
        return ""
    if re.match(r"^[A-Za-z]:[\\/]", text) or text.startswith("\\\\"):
        return ntpath.normpath(text).replace("\\", "/").casefold().rstrip("/") or "/"
    normal = posixpath.normpath(text)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal.rstrip("/") or "/"


def is_at_or_under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it; both already :func:`path_key` normalized."""
    if not path or not folder:
        return False
    if folder == "/":
        return path.startswith("/")
    return path == folder or path.startswith(folder + "/")


@dataclass(frozen=True, slots=True)
class HostProject:
    """A project of the host's registry: its ``id``, display ``name`` and ``folders`` (host paths)."""

    id: str
    name: str
    folders: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HostSession:
    """A session row of the host: ``id``, ``title``, ``started_at`` (as stored: epoch seconds or
    an ISO-8601 text), ``cwd`` and ``git_root`` (host paths, ``None`` when unknown), and
    ``project_id`` (the host's persisted attribution, ``None`` when it keeps none)."""

    id: str
    title: str | None = None
    started_at: Any = None
    cwd: str | None = None
    git_root: str | None = None
    project_id: str | None = None


@dataclass(frozen=True, slots=True)
class HostMessage:
    """A message row of the host: ``id`` (unique in the store, increasing with time within a
    session), ``session_id``, ``role``, ``content`` and ``timestamp`` (as stored)."""

    id: int
    session_id: str
    role: str
    content: str
    timestamp: Any = None


@dataclass(frozen=True, slots=True)
class SessionStat:
    """A cheap fingerprint of one session's messages in the host store: ``messages`` (count of
    indexed-role rows), ``last_id`` (largest message id) and ``chars`` (total content size, as the
    store measures it cheaply: characters or bytes; only ever compared with itself). A session
    whose fingerprint changed is re-read; new messages, deleted ones and most edits change it (an
    edit that keeps the size is found by a ``full`` sync)."""

    messages: int
    last_id: int
    chars: int


@dataclass(frozen=True, slots=True)
class MessageChunk:
    """One indexed part of a message: ``session_id``, ``message_id``, ``offset`` (the part's
    first character in the message, 0-based), ``content`` (the part's text: ``content ==
    message[offset:offset + len(content)]``), ``content_hash`` (:func:`content_hash` of the
    part), ``role`` and ``timestamp`` (the message's, as stored)."""

    session_id: str
    message_id: int
    offset: int
    content: str
    content_hash: str
    role: str = ""
    timestamp: Any = None

    @property
    def key(self) -> tuple[str, int, int]:
        """``(session_id, message_id, offset)``: the chunk's identity in our index."""
        return (self.session_id, self.message_id, self.offset)


@dataclass(frozen=True, slots=True)
class HistoryMatch:
    """A chunk found by one side of a search: its identity, ``content`` and ``score`` (higher is
    better within one side: negated BM25 for keywords, cosine similarity for vectors)."""

    session_id: str
    message_id: int
    offset: int
    content: str
    score: float
    role: str = ""
    timestamp: Any = None


def content_hash(text: str) -> str:
    """The SHA-256 hex digest of ``text`` (UTF-8): a vector is reused while its chunk's hash and
    the model signature are unchanged."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ProjectScope:
    """The project a search is scoped to: ``kind`` (``explicit``: a registered project;
    ``auto``: a git repository; ``home``: no project), ``id`` (project id, ``git:<root>`` for an
    auto project, ``None`` for Home), ``name`` (display name), ``folders`` (the project's folders,
    or the repository root) and ``reason`` (Home only: :data:`HOME_REASONS` key)."""

    kind: ScopeKind
    id: str | None = None
    name: str | None = None
    folders: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def is_home(self) -> bool:
        """True for the Home bucket: nothing is searched."""
        return self.kind == "home"

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "id", "name"}`` (seed 003 section 4.3), plus ``folders``, and ``reason`` for
        Home."""
        data: dict[str, Any] = {"kind": self.kind, "id": self.id, "name": self.name, "folders": list(self.folders)}
        if self.reason is not None:
            data["reason"] = self.reason
        return data


HOME_SCOPE = ProjectScope("home", reason=HOME_NO_LOCATION)


class ProjectFolders:
    """The registered projects, indexed for longest-ancestor lookup (seed 003 section 3).

    Built from :class:`HostProject` rows; a folder registered for two projects goes to the project
    whose id sorts first, so the answer never depends on row order.
    """

    def __init__(self, projects: Iterable[HostProject]) -> None:
        self.projects: dict[str, HostProject] = {}
        owners: dict[str, str] = {}
        for project in sorted(projects, key=lambda p: p.id):
            self.projects.setdefault(project.id, project)
            for folder in project.folders:
                key = path_key(folder)
                if key:
                    owners.setdefault(key, project.id)
        # Longest first: the first folder containing a path is its longest registered ancestor.
        self._folders = sorted(owners.items(), key=lambda item: (-len(item[0]), item[0]))

    def match(self, path: str | None) -> HostProject | None:
        """The project owning the longest registered folder that is ``path`` or an ancestor of it;
        ``None`` when no folder contains it."""
        key = path_key(path or "")
        if not key:
            return None
        for folder, project_id in self._folders:
            if is_at_or_under(key, folder):
                return self.projects[project_id]
        return None

    def find(self, wanted: str) -> HostProject | None:
        """The project whose id is ``wanted``, else the only one whose name is ``wanted``
        (case-insensitive); ``None`` when none or several match by name."""
        if wanted in self.projects:
            return self.projects[wanted]
        named = [p for p in self.projects.values() if p.name.casefold() == wanted.casefold()]
        return named[0] if len(named) == 1 else None


def explicit_scope(project: HostProject) -> ProjectScope:
    """The scope of a registered project."""
    return ProjectScope("explicit", project.id, project.name, tuple(project.folders))


def auto_scope(git_root: str) -> ProjectScope:
    """The scope of a git repository that is no registered project: id ``git:<root>`` (the
    :func:`path_key` of the root), named after the root's last folder."""
    key = path_key(git_root)
    name = key.rstrip("/").rsplit("/", 1)[-1] or key
    return ProjectScope("auto", AUTO_PREFIX + key, name, (key,))


def attribute(
    folders: ProjectFolders,
    *,
    cwd: str | None,
    git_root: str | None,
    project_id: str | None = None,
) -> ProjectScope:
    """The project of a session or of a search location (the rules of the module docstring).

    ``cwd`` and ``git_root`` are host paths (``None``/blank: unknown); ``project_id`` the host's
    persisted attribution, used when it names a registered project. Pure: no I/O.
    """
    if project_id and project_id in folders.projects:
        return explicit_scope(folders.projects[project_id])
    for path in (cwd, git_root):
        project = folders.match(path)
        if project is not None:
            return explicit_scope(project)
    if path_key(git_root or ""):
        return auto_scope(git_root or "")
    if path_key(cwd or ""):
        return ProjectScope("home", reason=HOME_NO_PROJECT)
    return ProjectScope("home", reason=HOME_NO_LOCATION)


def session_scope(folders: ProjectFolders, session: HostSession) -> ProjectScope:
    """:func:`attribute` of a host session row."""
    return attribute(folders, cwd=session.cwd, git_root=session.git_root, project_id=session.project_id)


def sessions_in_scope(
    folders: ProjectFolders, sessions: Iterable[HostSession], scope: ProjectScope
) -> list[HostSession]:
    """The sessions attributed to ``scope`` (none for Home), in the order given."""
    if scope.is_home or scope.id is None:
        return []
    # Sessions share few distinct locations (a project's sessions start in a handful of folders):
    # each location is attributed once.
    seen: dict[tuple[str | None, str | None, str | None], str | None] = {}
    kept = []
    for session in sessions:
        where = (session.cwd, session.git_root, session.project_id)
        if where not in seen:
            seen[where] = session_scope(folders, session).id
        if seen[where] == scope.id:
            kept.append(session)
    return kept


def timestamp_text(value: Any) -> str | None:
    """A host timestamp as ``YYYY-MM-DD HH:MM`` in UTC (seed 003's ``when``): epoch seconds (or
    milliseconds, when larger than 10^11) as numbers or digit strings, or an ISO-8601 text; any other
    text is returned as stored, ``None`` as ``None``."""
    if value is None or value == "":
        return None
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        number = float(value)
    if number is not None:
        if number > 1e11:
            number /= 1000.0
        try:
            return datetime.fromtimestamp(number, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
        except (OverflowError, OSError, ValueError):
            return str(value)
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(timezone.utc)
    return parsed.strftime("%Y-%m-%d %H:%M")


def session_link(session_id: str) -> str:
    """``@session:<id>`` (seed 003 section 4.3): the host's reference to a session."""
    return f"@session:{session_id}"


def excerpt(text: str, words: Sequence[str], limit: int) -> str:
    """At most about ``limit`` characters of ``text`` around the first of ``words`` (case-folded)
    found in it, with ``…`` where text was cut; the start of ``text`` when none is found. Cuts fall
    on spaces where one is near, so no word is split in half."""
    text = text.strip()
    if len(text) <= limit:
        return text
    folded = text.casefold()
    hits = [i for i in (folded.find(w.casefold()) for w in words if w) if i >= 0]
    center = min(hits) if hits else 0
    start = max(0, center - limit // 3)
    end = min(len(text), start + limit)
    start = max(0, end - limit)
    if start > 0:
        space = text.find(" ", start, start + 40)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", end - 40, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + text[start:end].strip() + ("…" if end < len(text) else "")


# -- configuration ---------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

SCHEMA_DEFAULTS: dict[str, dict[str, str | None]] = {
    "sessions": {"table": "sessions", "id": "id", "title": "title", "started_at": "started_at", "cwd": "cwd",
                 "git_root": "git_repo_root", "project_id": "project_id"},
    "messages": {"table": "messages", "id": "id", "session_id": "session_id", "role": "role", "content": "content",
                 "timestamp": "timestamp"},
    "projects": {"table": "projects", "id": "id", "name": "name"},
    "project_folders": {"table": "project_folders", "project_id": "project_id", "path": "path"},
}
"""The host tables and columns read, with seed 003's names as defaults. Every name can be set in
``knowledgebase.history.schema.<table>.<field>``; ``null`` for an optional column (``title``,
``started_at``, ``cwd``, ``git_root``, ``project_id``, ``role``, ``timestamp``) says the host has
none. ``sessions.project_id`` is read only when the table has that column."""

OPTIONAL_COLUMNS = {
    "sessions": ("title", "started_at", "cwd", "git_root", "project_id"),
    "messages": ("role", "timestamp"),
    "projects": ("name",),
    "project_folders": (),
}


def _pairs(table: str) -> tuple[tuple[str, str | None], ...]:
    return tuple(SCHEMA_DEFAULTS[table].items())


@dataclass(frozen=True, slots=True)
class HistorySchema:
    """The host's table and column names (:data:`SCHEMA_DEFAULTS`), one ``(field, name)`` tuple
    per table (tuples keep the config hashable); read them with :meth:`table`. ``configured``:
    the tables whose names the configuration set (by key, sorted), so a reader can tell a
    registry the user named, which must exist, from the default one a host may not keep."""

    sessions: tuple[tuple[str, str | None], ...] = _pairs("sessions")
    messages: tuple[tuple[str, str | None], ...] = _pairs("messages")
    projects: tuple[tuple[str, str | None], ...] = _pairs("projects")
    project_folders: tuple[tuple[str, str | None], ...] = _pairs("project_folders")
    configured: tuple[str, ...] = ()

    @property
    def registry_configured(self) -> bool:
        """Whether the configuration named the ``projects`` or ``project_folders`` table or a
        column of them: the host is then expected to keep that registry."""
        return bool({"projects", "project_folders"} & set(self.configured))

    def table(self, name: str) -> dict[str, str | None]:
        """The ``field -> name`` mapping of one table (``sessions``, ``messages``, ``projects``,
        ``project_folders``); ``None`` for an optional column the host does not have."""
        return dict(getattr(self, name))

    def signature(self) -> str:
        """A stable text of every name, for our index's identity (``configured`` is no name:
        it changes nothing that is read)."""
        return ";".join(f"{t}." + ",".join(f"{k}={v}" for k, v in sorted(self.table(t).items()))
                        for t in SCHEMA_DEFAULTS)


def history_schema(value: Any, prefix: str = "knowledgebase.history.schema") -> HistorySchema:
    """Validate ``knowledgebase.history.schema`` (a mapping of table -> mapping of field -> name).

    Raises:
        ConfigError: an unknown table or field, a required name set to ``null``, or a name that is
            not a plain SQL identifier (letters, digits, ``_``; so it can never inject SQL).
    """
    if value is None:
        return HistorySchema()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{prefix} must be a mapping of tables, got {type(value).__name__}",
                          hint="For example: schema: {messages: {table: chat_messages}}")
    tables: dict[str, dict[str, str | None]] = {}
    for table, defaults in SCHEMA_DEFAULTS.items():
        given = value.get(table) or {}
        if not isinstance(given, Mapping):
            raise ConfigError(f"{prefix}.{table} must be a mapping of fields to names, got {type(given).__name__}")
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            raise ConfigError(f"{prefix}.{table}: unknown field {unknown[0]!r}",
                              hint=f"The fields of {table} are: {', '.join(defaults)}.")
        names: dict[str, str | None] = dict(defaults)
        for key, name in given.items():
            where = f"{prefix}.{table}.{key}"
            if name is None:
                if key not in OPTIONAL_COLUMNS[table]:
                    raise ConfigError(f"{where} is required and cannot be null",
                                      hint="Give the host's name for it.")
                names[key] = None
                continue
            if not isinstance(name, str) or not _IDENTIFIER.match(name):
                raise ConfigError(f"{where} must be a plain SQL name (letters, digits, _), got {name!r}",
                                  hint="Table and column names are identifiers, never SQL expressions.")
            names[key] = name
        tables[table] = names
    unknown_tables = sorted(set(value) - set(SCHEMA_DEFAULTS))
    if unknown_tables:
        raise ConfigError(f"{prefix}: unknown table {unknown_tables[0]!r}",
                          hint=f"The tables are: {', '.join(SCHEMA_DEFAULTS)}.")
    configured = tuple(sorted(t for t in SCHEMA_DEFAULTS if value.get(t)))
    return HistorySchema(**{t: tuple(names.items()) for t, names in tables.items()}, configured=configured)
