"""A stand-in for the *host* of project-history recall (issue 13, seed 003): SQLite files shaped
like an agent application's session store (``state.db``: sessions, messages and the host's own
FTS5 index) and project registry (``projects.db``: projects and their folders), and a writer that
acts as the host does while we read (adds sessions and messages, edits, moves sessions).

It writes with apsw, the SQLite library the reader uses: two SQLite libraries in one process
do not see each other's locks (POSIX locks belong to the process), so a host in the test's own
process must share the reader's library for its locks to count. No pytest: the tests, the
benchmarks and the README's "try it" use it.

- :func:`build_host_database` creates empty files and returns a :class:`HostWriter` on them.
- :func:`populate` creates files holding a large, realistic, deterministic history
  (:class:`HostSummary` says what is in it).
- ``python -m hermes_workspace.testing.host_history PATH [--projects-db PATH] [--messages N]``
  runs :func:`populate` from the command line and prints the summary and the config to read it.

The schema (the column names are seed 003's, the defaults of
:data:`~hermes_workspace.domain.history.SCHEMA_DEFAULTS`)::

    sessions(id TEXT PRIMARY KEY, source, title, model, started_at REAL, ended_at REAL, cwd,
             git_repo_root, git_branch, parent_session_id, message_count, input_tokens,
             output_tokens[, project_id])
    messages(id INTEGER PRIMARY KEY AUTOINCREMENT, session_id, role, content (NULL for a turn
             that only calls tools), tool_call_id, tool_calls (JSON), tool_name, timestamp REAL,
             token_count, finish_reason)
    messages_fts  (FTS5 over messages.content, kept by triggers; optional)
    projects(id TEXT PRIMARY KEY, name, created_at REAL, archived)
    project_folders(project_id, path, added_at REAL, PRIMARY KEY (project_id, path))
"""

from __future__ import annotations

import argparse
import os
import calendar
import itertools
import json
import random
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import apsw

from hermes_workspace.domain.history import (
    HostProject,
    ProjectFolders,
    attribute,
    is_at_or_under,
    path_key,
)

EPOCH = float(calendar.timegm((2026, 6, 1, 9, 0, 0)))
"""Where the generated histories start (2026-06-01 09:00 UTC, epoch seconds): fixed, so a seed
gives the same bytes of content and the same timestamps on every run."""

HOST_ROLES = ("system", "user", "assistant", "tool")
"""The roles the generated host writes (``tool``: a tool's output; ``system``: a prompt)."""


def _sessions_sql(*, project_id_column: bool, integer_ids: bool) -> str:
    id_type = "INTEGER" if integer_ids else "TEXT"
    extra = ",\n    project_id TEXT" if project_id_column else ""
    return f"""
CREATE TABLE sessions (
    id {id_type} PRIMARY KEY,
    source TEXT NOT NULL DEFAULT 'cli',
    title TEXT,
    model TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    cwd TEXT,
    git_repo_root TEXT,
    git_branch TEXT,
    parent_session_id {id_type},
    message_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0{extra}
);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id {id_type} NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""


FTS_SQL = """
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
"""
"""The host's own keyword index (an external-content FTS5 table kept by triggers), as agent
applications keep one for their built-in session search. We never read it."""

PROJECTS_SQL = """
CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE project_folders (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    added_at REAL,
    PRIMARY KEY (project_id, path)
);
"""


def _connect(path: Path, *, create: bool = False) -> apsw.Connection:
    """A read-write connection of the host, waiting up to 10 s for a lock (a reader in
    rollback-journal mode holds one while it reads)."""
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    conn = apsw.Connection(str(path), flags=flags)
    conn.set_busy_timeout(10_000)
    return conn


class HostWriter:
    """The host writing its files, for tests: each method is one committed transaction, as the
    host commits each turn. ``database`` holds sessions and messages; ``projects_database`` the
    registry (``None``: in ``database``). Timestamps default to a clock that starts at
    :data:`EPOCH` and advances one second per row written.

    ``autocheckpoint=False`` turns off the host connection's automatic WAL checkpoints, so in
    WAL mode the database file itself stays byte for byte the same while the host writes (its
    commits go to the ``-wal`` file): a test can then tell any change of the file apart.

    Raises ``apsw.Error`` as the host's library does (a test acting as the host wants to see
    them); ``ValueError`` for a ``project_id`` when the sessions table has no such column.
    """

    def __init__(self, database: Path, *, projects_database: Path | None = None, autocheckpoint: bool = True) -> None:
        self.database = Path(database)
        self.projects_database = Path(projects_database) if projects_database is not None else None
        self._conn = _connect(self.database)
        self._projects = _connect(self.projects_database) if self.projects_database is not None else self._conn
        for conn in {id(self._conn): self._conn, id(self._projects): self._projects}.values():
            if not autocheckpoint:
                conn.execute("PRAGMA wal_autocheckpoint=0")
        self._clock = EPOCH
        self.project_id_column = "project_id" in {
            row[1] for row in self._conn.execute("PRAGMA table_info(sessions)").fetchall()}

    def _now(self, given: float | None) -> float:
        if given is not None:
            return given
        self._clock += 1.0
        return self._clock

    @contextmanager
    def _transaction(self, conn: apsw.Connection) -> Iterator[apsw.Connection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def add_project(self, project_id: str, name: str, folders: Sequence[str] = (), *,
                    created_at: float | None = None) -> None:
        """Register a project and its folders (host paths)."""
        when = self._now(created_at)
        with self._transaction(self._projects) as conn:
            conn.execute("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)", (project_id, name, when))
            conn.executemany("INSERT INTO project_folders (project_id, path, added_at) VALUES (?, ?, ?)",
                             [(project_id, folder, when) for folder in folders])

    def add_folder(self, project_id: str, path: str) -> None:
        """Add a folder to a registered project."""
        with self._transaction(self._projects) as conn:
            conn.execute("INSERT INTO project_folders (project_id, path, added_at) VALUES (?, ?, ?)",
                         (project_id, path, self._now(None)))

    def add_session(
        self,
        session_id: str | int,
        *,
        title: str | None = None,
        started_at: float | None = None,
        cwd: str | None = None,
        git_repo_root: str | None = None,
        project_id: str | None = None,
        model: str = "hermes-4-70b",
        source: str = "cli",
    ) -> None:
        """Start a session (the host's ``sessions`` row)."""
        columns = ["id", "source", "title", "model", "started_at", "cwd", "git_repo_root"]
        values: list[Any] = [session_id, source, title, model, self._now(started_at), cwd, git_repo_root]
        if project_id is not None:
            self._require_project_id_column()
            columns.append("project_id")
            values.append(project_id)
        with self._transaction(self._conn) as conn:
            conn.execute(f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({', '.join('?' * len(values))})",
                         values)

    def add_message(
        self,
        session_id: str | int,
        role: str,
        content: str | bytes | int | float | None,
        *,
        timestamp: float | None = None,
        tool_calls: Any = None,
    ) -> int:
        """Append one message (``content`` as the host stores it: text, ``None``, or bytes and
        numbers for tests of odd rows); returns its id."""
        return self.add_messages(session_id, [(role, content)], timestamp=timestamp, tool_calls=tool_calls)[0]

    def add_messages(
        self,
        session_id: str | int,
        items: Iterable[tuple[str, str | bytes | int | float | None]],
        *,
        timestamp: float | None = None,
        tool_calls: Any = None,
    ) -> list[int]:
        """Append ``(role, content)`` messages in one transaction; returns their ids in order."""
        ids: list[int] = []
        calls = json.dumps(tool_calls) if tool_calls is not None else None
        with self._transaction(self._conn) as conn:
            for role, content in items:
                conn.execute(
                    "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?)",
                    (session_id, role, content, calls, self._now(timestamp)))
                ids.append(conn.last_insert_rowid())
            conn.execute("UPDATE sessions SET message_count = message_count + ? WHERE id = ?", (len(ids), session_id))
        return ids

    def edit_message(self, message_id: int, content: str | bytes | None) -> None:
        """Replace a message's content (the host's edit or regeneration)."""
        with self._transaction(self._conn) as conn:
            conn.execute("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))

    def delete_message(self, message_id: int) -> None:
        """Delete a message (the host's undo or rewind)."""
        with self._transaction(self._conn) as conn:
            conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))

    def delete_session(self, session_id: str | int) -> None:
        """Delete a session and its messages in one transaction (the host's "delete conversation")."""
        with self._transaction(self._conn) as conn:
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def move_session(self, session_id: str | int, *, cwd: str | None, git_repo_root: str | None = None,
                     project_id: str | None = None) -> None:
        """Move a session (the host's ``session.workspace.move``): its working directory and git
        root change, and its persisted ``project_id`` when the table has that column."""
        with self._transaction(self._conn) as conn:
            conn.execute("UPDATE sessions SET cwd = ?, git_repo_root = ? WHERE id = ?",
                         (cwd, git_repo_root, session_id))
            if self.project_id_column:
                conn.execute("UPDATE sessions SET project_id = ? WHERE id = ?", (project_id, session_id))
            elif project_id is not None:
                self._require_project_id_column()

    def _require_project_id_column(self) -> None:
        if not self.project_id_column:
            raise ValueError("this host's sessions table has no project_id column "
                             "(build it with project_id_column=True)")

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the host's write lock (``BEGIN EXCLUSIVE``) for the block, then roll back: in
        rollback-journal mode readers wait meanwhile; in WAL mode they read on."""
        self._conn.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            self._conn.execute("ROLLBACK")

    def close(self) -> None:
        """Close the host's connections (the last close of a WAL database checkpoints it and
        removes its ``-wal`` and ``-shm`` files, as SQLite does). Idempotent."""
        for conn in {id(self._conn): self._conn, id(self._projects): self._projects}.values():
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def build_host_database(
    path: Path,
    *,
    projects_path: Path | None = None,
    wal: bool = True,
    project_id_column: bool = False,
    integer_ids: bool = False,
    fts: bool = True,
    autocheckpoint: bool = True,
) -> HostWriter:
    """Create an empty host store at ``path`` (and the registry at ``projects_path``; ``None``:
    the registry tables go into ``path``) and return a :class:`HostWriter` on it.

    ``wal``: WAL mode (as agent applications use, so that readers never wait), else the
    rollback journal (``DELETE`` mode). ``project_id_column``: the sessions table has the
    persisted attribution column. ``integer_ids``: session ids are ``INTEGER`` (some hosts use
    row ids). ``fts``: the host's own FTS5 index of messages. ``autocheckpoint``: see
    :class:`HostWriter`.

    Raises:
        FileExistsError: ``path`` or ``projects_path`` exists (never overwrite a real store).
    """
    path = Path(path)
    for target in (path, projects_path):
        if target is not None and Path(target).exists():
            raise FileExistsError(f"{target} exists; the host builder writes new files only")
    mode = "WAL" if wal else "DELETE"
    conn = _connect(path, create=True)
    try:
        conn.execute(f"PRAGMA journal_mode={mode}")
        conn.execute(_sessions_sql(project_id_column=project_id_column, integer_ids=integer_ids)
                     + (FTS_SQL if fts else "") + (PROJECTS_SQL if projects_path is None else ""))
    finally:
        conn.close()
    if projects_path is not None:
        conn = _connect(projects_path, create=True)
        try:
            conn.execute(f"PRAGMA journal_mode={mode}")
            conn.execute(PROJECTS_SQL)
        finally:
            conn.close()
    return HostWriter(path, projects_database=projects_path, autocheckpoint=autocheckpoint)


# -- a large synthetic history -------------------------------------------------------------------

DOMAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Ledger", ("invoice", "refund", "chargeback", "settlement", "payout", "merchant", "reconciliation",
                "idempotency", "proration", "dunning", "escrow", "remittance", "subscription", "receipt")),
    ("Skyward", ("telescope", "photometry", "redshift", "spectrograph", "ephemeris", "parallax", "flatfield",
                 "guider", "nebula", "exposure", "collimation", "airmass", "declination", "astrometry")),
    ("Crumb", ("sourdough", "proofing", "croissant", "laminated", "levain", "hydration", "glaze", "pastry",
               "brioche", "yeast", "ganache", "baguette", "scoring", "crumbshot")),
    ("Lowering", ("lexer", "bytecode", "inliner", "codegen", "typechecker", "monomorphization", "liveness",
                  "dominator", "peephole", "regalloc", "desugaring", "intrinsic", "lifetimes", "vtable")),
    ("Helix", ("genome", "variant", "fastq", "exon", "haplotype", "methylation", "primer", "allele",
               "transcriptome", "kmer", "phylogeny", "amplicon", "codon", "telomere")),
    ("Junction", ("timetable", "interlocking", "siding", "locomotive", "freight", "dispatcher", "signalling",
                  "pantograph", "bogie", "gradient", "headway", "turnout", "rollingstock", "catenary")),
    ("Tempo", ("chord", "metronome", "sampler", "reverb", "waveform", "synthesizer", "midi", "equalizer",
               "arpeggio", "sidechain", "quantize", "oscillator", "polyphony", "timbre")),
    ("Nimbus", ("forecast", "barometer", "precipitation", "isobar", "anemometer", "dewpoint", "jetstream",
                "cyclone", "radiosonde", "graupel", "inversion", "nowcast", "hailstone", "squall")),
    ("Orchard", ("irrigation", "greenhouse", "seedling", "compost", "harvest", "pruning", "mulch", "trellis",
                 "rootstock", "grafting", "pollinator", "espalier", "cider", "blossom")),
    ("Pixelforge", ("sprite", "shader", "tilemap", "hitbox", "raycast", "skybox", "framebuffer", "particle",
                    "navmesh", "rigidbody", "mipmap", "texel", "cutscene", "savegame")),
)
"""Named topic vocabularies: one per project or repository of a generated history (synthetic
words beyond ten), so that a word of one is in no session of another (isolation tests)."""

HOME_WORDS = ("vacation", "flight", "birthday", "groceries", "dentist", "budget", "resume", "weekend",
              "passport", "recipe", "marathon", "mortgage")
"""What Home sessions (no working directory) talk about."""

COMMON_WORDS = tuple(
    "the a an and or but so because when then if it this that these we you I our your is are was were "
    "be been have has do does did can could should would will please thanks also just now still again "
    "error test tests function file files config run build fix change update add remove check why how what "
    "works fails failing output input value values line lines module class method call return step "
    "first next last new old small large fast slow case cases issue result results log logs path version "
    "here there with without into from about after before while until".split())
"""Words every conversation uses (in every project: they say nothing about the project)."""

_SYLLABLES = ("ka", "zu", "mi", "ro", "te", "vex", "lo", "qui", "dra", "no", "pha", "sil", "tor", "bre", "ux",
              "gal", "fen", "ori", "zam", "ply")


@dataclass(frozen=True, slots=True)
class HostSummary:
    """What :func:`populate` wrote: the files, the registered ``projects``, the ``auto_repos``
    (git roots of no project), the counts, and ``vocabulary``: the topic words of each scope
    (project id, ``git:<root>`` of an auto repository, or ``"home"``), found only in the
    sessions attributed to it (the rules of :mod:`hermes_workspace.domain.history`)."""

    database: Path
    projects_database: Path | None
    projects: tuple[HostProject, ...]
    auto_repos: tuple[str, ...]
    sessions: int
    messages: int
    long_messages: int
    home_sessions: int
    sessions_by_scope: dict[str, int] = field(default_factory=dict)
    vocabulary: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def describe(self) -> list[str]:
        """Human-readable lines: the files, the counts, each scope with its sessions and a few of
        its topic words."""
        lines = [f"host session store: {self.database}"]
        if self.projects_database is not None:
            lines.append(f"host project registry: {self.projects_database}")
        lines.append(f"{self.sessions} sessions, {self.messages} messages ({self.long_messages} long), "
                     f"{len(self.projects)} projects, {len(self.auto_repos)} git repositories of no project, "
                     f"{self.home_sessions} Home sessions")
        for project in self.projects:
            lines.append(f"  project {project.id} {project.name!r}: {self.sessions_by_scope.get(project.id, 0)} "
                         f"sessions, folders {', '.join(project.folders)}; words: "
                         + ", ".join(self.vocabulary.get(project.id, ())[:4]))
        for root in self.auto_repos:
            scope = "git:" + root
            lines.append(f"  repository {root}: {self.sessions_by_scope.get(scope, 0)} sessions; words: "
                         + ", ".join(self.vocabulary.get(scope, ())[:4]))
        return lines


def _slug(name: str) -> str:
    return name.lower().replace(" ", "-")


def _synthetic_domain(rng: random.Random, taken: set[str]) -> tuple[str, tuple[str, ...]]:
    words: list[str] = []
    while len(words) < 15:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(3))
        if word not in taken:
            taken.add(word)
            words.append(word)
    return words[0].capitalize(), tuple(words[1:])


_POOLS: dict[tuple[str, ...], tuple[tuple[str, ...], list[float]]] = {}


def _pool(topic: Sequence[str]) -> tuple[tuple[str, ...], list[float]]:
    """The words of a conversation on ``topic`` and their cumulative weights: one word in four
    is a topic word (enough for a topic to dominate its project's statistics, few enough to read
    as chat), the rest common words."""
    key = tuple(topic)
    if key not in _POOLS:
        words = COMMON_WORDS + key
        weights = [3.0 / len(COMMON_WORDS)] * len(COMMON_WORDS) + [1.0 / len(key)] * len(key)
        _POOLS[key] = (words, list(itertools.accumulate(weights)))
    return _POOLS[key]


def _sentence(rng: random.Random, topic: Sequence[str], length: int) -> str:
    words, cumulative = _pool(topic)
    return " ".join(rng.choices(words, cum_weights=cumulative, k=length)).capitalize() + rng.choice(".?!.")


def _text(rng: random.Random, topic: Sequence[str], sentences: int) -> str:
    return " ".join(_sentence(rng, topic, 6 + int(rng.random() * 13)) for _ in range(sentences))


def _long_text(rng: random.Random, bank: Sequence[str], words: int) -> str:
    """At least ``words`` words: a pasted log or a long plan, paragraphs of about 80 words under
    a numbered heading each, drawn from a bank of the topic's sentences (a log repeats itself;
    and it is 7 times faster than drawing every word)."""
    paragraphs = []
    part = 1
    while words > 0:
        size = min(words, 60 + int(rng.random() * 41))
        sentences: list[str] = []
        count = 0
        while count < size:
            sentence = bank[int(rng.random() * len(bank))]
            sentences.append(sentence)
            count += sentence.count(" ") + 1
        paragraphs.append(f"## Part {part}\n" + " ".join(sentences))
        words -= count
        part += 1
    return "\n\n".join(paragraphs)


def populate(
    path: Path,
    *,
    projects_path: Path | None = None,
    projects: int = 5,
    sessions: int | None = None,
    messages: int = 100_000,
    seed: int = 0,
    wal: bool = True,
    project_id_column: bool = True,
    fts: bool = True,
    long_fraction: float = 0.01,
    base: str = "/home/dev",
) -> HostSummary:
    """Write a host store at ``path`` (registry at ``projects_path``, or in ``path``) holding a
    realistic history: ``projects`` registered projects (one with two folders, one nested inside
    another's folder), git repositories of no project (*auto* projects), Home sessions (no
    working directory) and sessions in a folder of no project and no repository; ``sessions``
    sessions (default ``messages // 40``, at least 4) of chat-like turns (system prompt, user,
    assistant, tool output, turns that only call tools with ``NULL`` content), about
    ``long_fraction`` of the messages several thousand words long. Every scope talks about its
    own topic (:attr:`HostSummary.vocabulary`). With ``project_id_column``, some sessions carry a
    persisted ``project_id`` that differs from their folder (moved sessions). Every folder is
    under ``base`` (``src/<project>``, ``notes/<project>``, ``oss/<repository>``, ``scratch``);
    nothing is created there (see :func:`create_folders`).

    Deterministic: one ``seed`` gives the same files' content. Fast: one transaction of
    ``executemany`` inserts, the host's FTS index built once at the end (100,000 messages in a
    few seconds).

    Raises:
        FileExistsError: ``path`` or ``projects_path`` exists.
        ValueError: a count is negative, or ``messages`` is smaller than twice the sessions.
    """
    if projects < 0 or messages < 0 or (sessions is not None and sessions < 1):
        raise ValueError("projects and messages must be >= 0, sessions >= 1")
    for target in (path, projects_path):
        if target is not None and Path(target).exists():  # before minutes of work, not after
            raise FileExistsError(f"{target} exists; the host builder writes new files only")
    n_sessions = sessions if sessions is not None else max(4, messages // 40)
    if messages < 2 * n_sessions:
        raise ValueError(f"{messages} messages cannot fill {n_sessions} sessions of at least 2 messages")
    rng = random.Random(seed)
    taken = {w for _, words in DOMAINS for w in words} | set(HOME_WORDS) | set(COMMON_WORDS)

    def next_domain(index: int) -> tuple[str, tuple[str, ...]]:
        return DOMAINS[index] if index < len(DOMAINS) else _synthetic_domain(rng, taken)

    # Projects: ids like the host's (p_ and hex), folders under one home.
    registered: list[HostProject] = []
    vocabulary: dict[str, tuple[str, ...]] = {}
    for i in range(projects):
        name, words = next_domain(i)
        project_id = f"p_{rng.getrandbits(40):010x}"
        folders = [f"{base}/src/{_slug(name)}"]
        if i == 1:
            folders.append(f"{base}/notes/{_slug(name)}")
        if i == 2 and registered:
            # Nested in the first project's folder: the longest registered ancestor wins.
            folders = [f"{registered[0].folders[0]}/packages/{_slug(name)}"]
        registered.append(HostProject(project_id, name, tuple(folders)))
        vocabulary[project_id] = words
    auto_count = max(1, (projects + 1) // 2)
    auto_repos: list[str] = []
    for j in range(auto_count):
        name, words = next_domain(projects + j)
        root = f"{base}/oss/{_slug(name)}"
        auto_repos.append(root)
        vocabulary["git:" + root] = words
    vocabulary["home"] = HOME_WORDS
    folders_index = ProjectFolders(registered)

    # Session locations: mostly projects, then repositories, Home, and a scratch folder.
    kinds = (["project"] * 14 + ["auto"] * 3 + ["home"] * 2 + ["scratch"])
    session_rows: list[tuple[Any, ...]] = []
    scope_of: list[str] = []
    sessions_by_scope: dict[str, int] = {}
    used_ids: set[str] = set()
    start = EPOCH
    for s in range(n_sessions):
        kind = ("project", "auto", "home", "scratch")[s] if s < 4 and projects else rng.choice(kinds)
        if kind == "project" and not registered:
            kind = "auto"
        cwd: str | None = None
        git_root: str | None = None
        project_id: str | None = None
        if kind == "project":
            project = rng.choice(registered)
            folder = rng.choice(project.folders)
            cwd = folder if rng.random() < 0.6 else f"{folder}/{rng.choice(('src', 'docs', 'tests', 'scripts'))}"
            git_root = folder if rng.random() < 0.8 else None
            if project_id_column and rng.random() < 0.05 and len(registered) > 1:
                # Moved by the host: the persisted project wins over the folder.
                project_id = project.id
                other = rng.choice([p for p in registered if p.id != project.id])
                cwd, git_root = other.folders[0], other.folders[0]
        elif kind == "auto":
            git_root = rng.choice(auto_repos)
            cwd = git_root if rng.random() < 0.7 else f"{git_root}/{rng.choice(('lib', 'cmd', 'examples'))}"
        elif kind == "scratch":
            cwd = f"{base}/scratch"
        scope = attribute(folders_index, cwd=cwd, git_root=git_root, project_id=project_id)
        scope_key = scope.id if scope.id is not None else "home"
        scope_of.append(scope_key)
        sessions_by_scope[scope_key] = sessions_by_scope.get(scope_key, 0) + 1
        start += rng.uniform(600, 7200)
        while True:
            session_id = time.strftime("%Y%m%d_%H%M%S", time.gmtime(start)) + f"_{rng.getrandbits(16):04x}"
            if session_id not in used_ids:
                used_ids.add(session_id)
                break
        topic = vocabulary.get(scope_key, HOME_WORDS)
        title = " ".join(rng.sample(topic, 2)).capitalize() + " " + rng.choice(("fix", "design", "question", "plan"))
        row = [session_id, rng.choice(("cli", "cli", "desktop", "telegram")), title,
               rng.choice(("hermes-4-70b", "hermes-4-405b")), start, None, cwd, git_root,
               "main" if git_root else None, None, 0, 0, 0]
        if project_id_column:
            row.append(project_id)
        session_rows.append(tuple(row))

    # Messages: at least two per session, the rest spread unevenly (a few long sessions).
    counts = [2] * n_sessions
    weights = [rng.lognormvariate(0, 1) for _ in range(n_sessions)]
    for index in rng.choices(range(n_sessions), weights=weights, k=messages - 2 * n_sessions):
        counts[index] += 1
    message_rows: list[tuple[Any, ...]] = []
    long_messages = 0
    banks: dict[str, list[str]] = {}
    final_rows: list[tuple[Any, ...]] = []
    for s, row in enumerate(session_rows):
        session_id, started = row[0], row[4]
        topic = vocabulary.get(scope_of[s], HOME_WORDS)
        clock = started
        tokens_in = tokens_out = 0
        for k in range(counts[s]):
            clock += rng.uniform(2, 90)
            calls = None
            if k == 0 and rng.random() < 0.3:
                role, content = "system", "You are Hermes, a helpful agent. " + _text(rng, COMMON_WORDS, 2)
            elif k % 2 == 0:
                role, content = "user", _text(rng, topic, rng.randint(1, 3))
            else:
                dice = rng.random()
                if dice < 0.08:
                    role, content = "assistant", None
                    calls = json.dumps([{"id": f"call_{s}_{k}", "type": "function", "function": {
                        "name": "terminal", "arguments": json.dumps({"command": f"pytest -k {rng.choice(topic)}"})}}])
                elif dice < 0.18:
                    role, content = "tool", json.dumps({"exit_code": rng.choice((0, 1)),
                                                        "output": _text(rng, topic, rng.randint(1, 4))})
                else:
                    role, content = "assistant", _text(rng, topic, rng.randint(2, 6))
            if content is not None and role != "system" and rng.random() < long_fraction:
                if scope_of[s] not in banks:
                    banks[scope_of[s]] = [_sentence(rng, topic, 6 + int(rng.random() * 13)) for _ in range(400)]
                content = _long_text(rng, banks[scope_of[s]], rng.randint(2000, 6000))
                long_messages += 1
            tokens = len(content.split()) if content else 12
            if role == "assistant":
                tokens_out += tokens
            else:
                tokens_in += tokens
            message_rows.append((session_id, role, content, calls, clock, tokens,
                                 "tool_calls" if calls else ("stop" if role == "assistant" else None)))
        ended = clock + rng.uniform(5, 300)
        final = list(row)
        final[5], final[10], final[11], final[12] = ended, counts[s], tokens_in, tokens_out
        final_rows.append(tuple(final))

    writer = build_host_database(path, projects_path=projects_path, wal=wal, project_id_column=project_id_column,
                                 fts=False)
    writer.close()
    columns = "id, source, title, model, started_at, ended_at, cwd, git_repo_root, git_branch, " \
              "parent_session_id, message_count, input_tokens, output_tokens" + \
              (", project_id" if project_id_column else "")
    conn = _connect(path)
    try:
        conn.execute("BEGIN")
        conn.executemany(f"INSERT INTO sessions ({columns}) VALUES ({', '.join('?' * len(final_rows[0]))})",
                         final_rows)
        conn.executemany("INSERT INTO messages (session_id, role, content, tool_calls, timestamp, token_count, "
                         "finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?)", message_rows)
        conn.execute("COMMIT")
        if fts:
            # The triggers would index row by row; one rebuild after the bulk insert is faster.
            conn.execute("BEGIN;" + FTS_SQL + "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild'); COMMIT;")
    finally:
        conn.close()
    registry = _connect(projects_path if projects_path is not None else path)
    try:
        registry.execute("BEGIN")
        registry.executemany("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)",
                             [(p.id, p.name, EPOCH - 86400.0 * (len(registered) - i))
                              for i, p in enumerate(registered)])
        registry.executemany("INSERT INTO project_folders (project_id, path, added_at) VALUES (?, ?, ?)",
                             [(p.id, f, EPOCH) for p in registered for f in p.folders])
        registry.execute("COMMIT")
    finally:
        registry.close()
    return HostSummary(
        database=Path(path),
        projects_database=Path(projects_path) if projects_path is not None else None,
        projects=tuple(registered),
        auto_repos=tuple(auto_repos),
        sessions=n_sessions,
        messages=messages,
        long_messages=long_messages,
        home_sessions=sessions_by_scope.get("home", 0),
        sessions_by_scope=sessions_by_scope,
        vocabulary=vocabulary,
    )


def create_folders(summary: HostSummary, base: Path) -> list[Path]:
    """Create on disk the folders :func:`populate` wrote under ``base``: every project folder,
    each repository of no project with an empty ``.git`` folder (so a search from inside it finds
    its repository), and ``base/scratch`` (in no project). Returns the folders created or found."""
    made = []
    for folder in [f for p in summary.projects for f in p.folders] + list(summary.auto_repos):
        made.append(Path(folder))
    for root in summary.auto_repos:
        made.append(Path(root) / ".git")
    made.append(base / "scratch")
    for folder in made:
        folder.mkdir(parents=True, exist_ok=True)
    return made


def move_session(database: Path, session_id: str, folder: str, *, projects_database: Path | None = None) -> str | None:
    """Act as the host moving a session to ``folder`` (its ``session.workspace.move``): the
    session's ``cwd`` becomes ``folder``, its git root the registered project folder holding
    ``folder`` (else the git repository holding it on disk, else ``NULL``), its ``project_id``
    (when the table has one) that project's id (else ``NULL``). Returns the project id.

    Raises:
        KeyError: no session ``session_id``.
    """
    from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory

    with SqliteSessionHistory(database, projects_database) as history:
        if not any(s.id == str(session_id) for s in history.sessions()):
            raise KeyError(f"no session {session_id!r} in {database}")
        project = ProjectFolders(history.projects()).match(folder)
    if project is not None:
        repository: str | None = max(
            (f for f in project.folders if is_at_or_under(path_key(folder), path_key(f))), key=len)
    else:
        # What the host records: the folder's git repository on disk, if any (none for a folder
        # in no repository, which then belongs to no project).
        from hermes_workspace.adapters.filesystem_probe import git_root

        found = git_root(Path(folder)) if Path(folder).is_dir() else None
        repository = str(found) if found is not None else None
    with HostWriter(database, projects_database=projects_database) as host:
        host.move_session(session_id, cwd=folder, git_repo_root=repository,
                          project_id=project.id if project is not None and host.project_id_column else None)
    return project.id if project is not None else None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hermes_workspace.testing.host_history PATH [--projects-db PATH] [--messages N]
    [--projects N] [--sessions N] [--seed N] [--rollback-journal] [--no-project-id] [--base DIR]``: build a
    host-like store with :func:`populate`, print what it holds and the config to read it.
    Exit 0; 1 (with a message) when a file exists or a count is invalid."""
    parser = argparse.ArgumentParser(
        prog="python -m hermes_workspace.testing.host_history",
        description="Build a synthetic agent session store (state.db) to try project-history recall on.")
    parser.add_argument("path", type=Path, help="the session database to create (must not exist)")
    parser.add_argument("--projects-db", type=Path, default=None,
                        help="create the project registry in this separate file (default: inside PATH)")
    parser.add_argument("--messages", type=int, default=20_000, help="number of messages (default 20000)")
    parser.add_argument("--projects", type=int, default=5, help="registered projects (default 5)")
    parser.add_argument("--sessions", type=int, default=None, help="sessions (default: messages / 40)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--rollback-journal", action="store_true", help="rollback-journal mode instead of WAL")
    parser.add_argument("--no-project-id", action="store_true", help="no sessions.project_id column")
    parser.add_argument("--base", type=Path, default=None,
                        help="put the sessions' folders under this folder and create them (project folders, "
                             "repositories with a .git folder, a scratch folder in no project), to search from "
                             "inside them; default: paths under /home/dev, not created")
    parser.add_argument("--move", metavar="SESSION_ID", default=None,
                        help="instead of building: act as the host moving this session of the existing PATH "
                             "to the folder --to (its working directory, git root and project_id follow)")
    parser.add_argument("--to", metavar="FOLDER", default=None, help="the folder --move moves the session to")
    args = parser.parse_args(argv)
    if args.move is not None:
        if not args.to:
            parser.error("--move needs --to FOLDER")
        try:
            project = move_session(args.path, args.move, os.path.abspath(args.to), projects_database=args.projects_db)
        except (KeyError, OSError, apsw.Error) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"moved session {args.move} to {os.path.abspath(args.to)} (project: {project or 'none registered'})")
        return 0
    base = Path(os.path.abspath(args.base)) if args.base is not None else None
    began = time.perf_counter()
    try:
        for database in (args.path, args.projects_db):
            if database is not None:
                database.parent.mkdir(parents=True, exist_ok=True)  # `~/hermes-try/state.db` on a new machine
        summary = populate(args.path, projects_path=args.projects_db, projects=args.projects,
                           sessions=args.sessions, messages=args.messages, seed=args.seed,
                           wal=not args.rollback_journal, project_id_column=not args.no_project_id,
                           base=str(base) if base is not None else "/home/dev")
        if base is not None:
            create_folders(summary, base)
    except (FileExistsError, ValueError, OSError, apsw.Error) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for line in summary.describe():
        print(line)
    print(f"built in {time.perf_counter() - began:.1f} s")
    if base is not None:
        from hermes_workspace.adapters.filesystem_probe import git_root

        print(f"folders created under {base} (a search from {base}/scratch is in no project)")
        outer = git_root(base)
        if outer is not None:
            print(f"warning: {base} is inside the git repository {outer}: a search from {base}/scratch "
                  "belongs to that repository, not to no project; choose a --base outside any repository",
                  file=sys.stderr)
    print("\nTo search it, in HERMES_HOME/config.yaml:\n\nknowledgebase:\n  history:\n"
          f"    database: {summary.database.resolve()}")
    if summary.projects_database is not None:
        print(f"    projects_database: {summary.projects_database.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
