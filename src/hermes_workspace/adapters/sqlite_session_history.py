"""The host's SQLite session store, read strictly read-only (issue 13, seed 003 section 4.1): a
:class:`~hermes_workspace.domain.ports.SessionHistory` over another application's ``state.db``
(sessions and messages) and its project registry (``projects`` and ``project_folders``, in the
same file or in a ``projects.db`` beside it), with apsw.

Read-only is a hard rule (seed 003: "插件对 state.db 只有 SELECT"). The file is opened with a
``file:...?mode=ro`` URI and ``SQLITE_OPEN_READONLY``, checkpoint-on-close is switched off, and
only ``SELECT`` statements and reading pragmas (``encoding``, ``table_info``) run. It is never
opened ``immutable=1``: the host writes while we read, and an immutable reader ignores the host's
locks and its ``-wal`` file, so it could return torn or stale rows.

Reading works while the host has the file open and writes to it, in both journal modes: in WAL
mode a read sees the last commit and never blocks the host; in rollback-journal mode a read waits
up to ``busy_timeout_ms`` while the host writes. What SQLite itself does beside the file for any
reader is left as it is: a WAL database needs its ``-wal`` and ``-shm`` files, which SQLite creates
(empty) when the host has none open, and a reader records its read position in the ``-shm``. The
database file and the ``-wal`` are never changed by us. While our connection to a WAL database is
open it holds the shared lock every WAL connection holds: the host's last close then leaves its
``-wal`` and ``-shm`` in place, as with any other reader (an idle connection never holds the
``-wal`` back from being checkpointed or restarted). In rollback-journal mode an idle connection
holds no lock at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import apsw

from hermes_workspace.adapters.sqlite_common import sqlite_int
from hermes_workspace.domain.errors import HistoryUnavailableError, WorkspaceError, reraise_interrupt
from hermes_workspace.domain.history import (
    OPTIONAL_COLUMNS,
    HistorySchema,
    HostMessage,
    HostProject,
    HostSession,
    SessionStat,
)

SCHEMA_KEY = "knowledgebase.history.schema"
"""The config key under which the host's table and column names are set (hints name it)."""

_SQLITE_HEADER = b"SQLite format 3\x00"
_CODECS = {"UTF-8": "utf-8", "UTF-16le": "utf-16-le", "UTF-16be": "utf-16-be"}
_INTEGER_ID = re.compile(r"-?[1-9][0-9]{0,18}|0")
_INT64 = range(-(2**63), 2**63)

_BLANK = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
"""Every character ``str.strip()`` removes (Unicode white space; none lies above U+3000): a
neighbour made of these alone has no text."""

_CODE = apsw.mapping_extended_result_codes
_READONLY_ROLLBACK = _CODE["SQLITE_READONLY_ROLLBACK"]
_READONLY_WAL_INDEX = {_CODE["SQLITE_READONLY_RECOVERY"], _CODE["SQLITE_READONLY_CANTINIT"],
                       _CODE["SQLITE_READONLY_DIRECTORY"], _CODE["SQLITE_READONLY_CANTLOCK"]}


def _quoted(name: str) -> str:
    """``name`` as a double-quoted SQL identifier. Names come validated from
    :func:`~hermes_workspace.domain.history.history_schema` (letters, digits, ``_``); quoting
    still keeps a host column called ``order`` or ``group`` readable."""
    return '"' + name.replace('"', '""') + '"'


def _uri(path: Path) -> str:
    """The read-only URI of ``path`` (absolute): ``file:<percent-encoded path>?mode=ro``; ``?``,
    ``#`` and ``%`` in a folder name are encoded, so they cannot start URI parameters."""
    return "file:" + quote(os.fsencode(path)) + "?mode=ro"


def _is_wal(path: Path) -> bool:
    """Whether the file's header says WAL mode (read and write versions 2, bytes 18 and 19 of the
    100-byte header: sqlite.org/fileformat2.html section 1.3.3). Reads 20 bytes, writes nothing."""
    with open(path, "rb") as handle:
        header = handle.read(20)
    return len(header) == 20 and header.startswith(_SQLITE_HEADER) and 2 in (header[18], header[19])


def _folder_writable(folder: Path) -> bool:
    """Whether this user may create files in ``folder`` (SQLite must, for a WAL file's ``-shm``)."""
    return os.access(folder, os.W_OK | os.X_OK)


def _wal_error(path: Path) -> HistoryUnavailableError:
    return HistoryUnavailableError(
        f"cannot read the host's session store {path}: it is in WAL mode and its shared-memory file "
        f"({path.name}-shm) does not exist, and this user may not create it in {path.parent}",
        hint="Start the host application (while it has the database open, the -wal and -shm files exist and "
             f"can be read), or read as a user who may write to {path.parent}. The file is not opened as "
             "immutable instead: that could return a torn view while the host writes.",
    )


def _session_id_params(session_id: str) -> tuple[Any, Any] | None:
    """The two values a stored session id may equal: the text, and the integer when the text is
    a canonical integer (a host may store ids as INTEGER in a column without affinity, where
    ``42 = '42'`` is false; :func:`_same_session` then checks the text). ``None`` when the
    text cannot be sent to SQLite (a lone surrogate): no stored id can equal it."""
    try:
        session_id.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if _INTEGER_ID.fullmatch(session_id) and int(session_id) in _INT64:
        return session_id, int(session_id)
    return session_id, session_id


class _Layout:
    """The resolved names of one host table: ``table`` and each field's column (``None`` when
    the schema sets it to null, or, for ``sessions.project_id``, when the table lacks it)."""

    def __init__(self, table: str, columns: Mapping[str, str | None]) -> None:
        self.table = table
        self.columns = dict(columns)

    def q(self, field: str, alias: str = "") -> str | None:
        """The quoted column of ``field`` (prefixed ``alias.``), or ``None`` when absent."""
        name = self.columns.get(field)
        if name is None:
            return None
        return (alias + "." if alias else "") + _quoted(name)

    def text(self, field: str, alias: str = "") -> str:
        """The column as bytes (``CAST ... AS BLOB``), for decoding in Python: apsw raises on text
        that is not valid UTF-8, and a host may have written some; an INTEGER id becomes its
        digits. ``NULL`` when absent."""
        column = self.q(field, alias)
        return f"CAST({column} AS BLOB)" if column else "NULL"

    def stored(self, field: str) -> str:
        """The column as stored (numbers stay numbers), text as bytes; ``NULL`` when absent."""
        column = self.q(field)
        if column is None:
            return "NULL"
        return f"CASE WHEN typeof({column}) IN ('text', 'blob') THEN CAST({column} AS BLOB) ELSE {column} END"


class SqliteSessionHistory:
    """The :class:`~hermes_workspace.domain.ports.SessionHistory` of a host's SQLite files.

    ``database`` holds the sessions and messages; ``projects_database`` the project registry
    (``None``: the registry tables are in ``database``). ``schema`` gives the table and column
    names (seed 003's by default). ``busy_timeout_ms`` (clamped to >= 0) is how long a read waits
    while a host in rollback-journal mode writes.

    Connections open lazily, at the first call, and are reopened when the file was replaced
    (another inode at the path), so the object can be built before the host ever ran. The
    tables' columns are checked again whenever the host changed its schema (``PRAGMA
    schema_version``), so a migration that adds ``project_id`` is seen at the next call.

    Semantics, beyond the port:

    - A missing ``database`` raises :class:`HistoryUnavailableError`. The project registry is
      *expected* (:attr:`registry_expected`) when ``projects_required`` (its file was named in
      config) or when the schema was configured with a name of the ``projects`` or
      ``project_folders`` table: then a missing registry file, ``projects`` table or
      ``project_folders`` table raises, naming the setting to fix. Otherwise a missing registry
      (no ``projects_database`` file, or neither table) is a host that keeps none:
      :meth:`projects` returns ``[]``. One registry table without the other is a misspelt name
      and always raises.
    - A required table or column that is missing raises, naming it and the
      ``knowledgebase.history.schema.<table>.<field>`` setting; so does an optional column the
      schema names but the table lacks (set it to ``null``), except ``sessions.project_id``,
      which is read only when the table has it.
    - Ids: session and project ids are returned as text (an INTEGER id as its digits); message
      ids must be integers. Timestamps are returned as stored (numbers as numbers, text as text).
    - Text is decoded with the database's encoding, invalid bytes replaced by U+FFFD, so no row
      can stop a read. Message content: ``NULL`` reads as ``""``, a BLOB as its UTF-8 decoding,
      a number as SQLite's text of it.
    - Without a ``role`` column (schema ``messages.role: null``) every message has role ``""``
      and the ``roles`` filters are ignored: every message is conversation.
    - :attr:`SessionStat.chars` is SQLite's ``octet_length()`` of the stored values (bytes of
      text in the database's encoding, of a BLOB as is): read from the record headers without
      loading long messages (about 25 ms instead of 42 ms for 100,000 messages); a change
      fingerprint, consistent from one call to the next.
    - :meth:`change_token` is the connection's ``PRAGMA data_version``: it changes whenever
      another connection (the host) commits, so an unchanged token proves nothing was written.

    Raises (every method): :class:`HistoryUnavailableError`, with a hint, for any failure
    (missing or unreadable file, not a database, locked for longer than the busy timeout, a
    missing table or column, a closed object). No ``apsw`` exception escapes.

    Not thread-safe: one object per thread.
    """

    def __init__(
        self,
        database: Path,
        projects_database: Path | None = None,
        schema: HistorySchema | None = None,
        busy_timeout_ms: int = 2000,
        *,
        projects_required: bool = False,
    ) -> None:
        self.projects_required = projects_required
        self.database = Path(os.path.abspath(Path(database).expanduser()))
        given = Path(os.path.abspath(Path(projects_database).expanduser())) if projects_database else None
        self.projects_database = None if given is None or _same_path(given, self.database) else given
        self.schema = schema if schema is not None else HistorySchema()
        self.busy_timeout_ms = max(0, int(busy_timeout_ms))
        self._conns: dict[Path, tuple[apsw.Connection, tuple[int, int], str]] = {}
        self._layouts: dict[tuple[Path, str, int], _Layout] = {}
        self._generation: dict[Path, int] = {}
        self._sessions: tuple[object, list[HostSession]] | None = None
        self._closed = False

    # -- identity ------------------------------------------------------------------------------

    @property
    def signature(self) -> str:
        """``sqlite-history:<database>|projects:<projects file>|<schema signature>``, paths
        resolved (symbolic links followed): stable text."""
        database = _resolved(self.database)
        projects = _resolved(self.projects_database or self.database)
        return f"sqlite-history:{database}|projects:{projects}|{self.schema.signature()}"

    # -- the port ------------------------------------------------------------------------------

    @property
    def registry_expected(self) -> bool:
        """Whether the host must keep a project registry: ``projects_required`` was given (its
        file was named in config) or the schema's ``configured`` names a registry table."""
        return self.projects_required or self.schema.registry_configured

    def projects(self) -> list[HostProject]:
        """The registered projects, by id, each with its folders (deduplicated, in byte order of
        the stored path); a project without a name is named by its id."""
        path = self.projects_database or self.database
        with self._translated("read the projects", path):
            expected = self.registry_expected
            conn = self._connection(path, optional=self.projects_database is not None)
            if conn is None:
                if expected:
                    raise HistoryUnavailableError(
                        f"the host's project registry {path} does not exist",
                        hint="Fix knowledgebase.history.projects_database in config.yaml (or remove it: the "
                             "registry is then read from the session database, or from HERMES_HOME/projects.db).")
                return []
            # No projects table is a host that keeps no registry only when nothing says it keeps
            # one: not the config, and not a project_folders table beside it (a misspelt name of
            # either table would otherwise attribute every session to its git repository, silently).
            folders_table = self.schema.table("project_folders")["table"]
            optional = not expected and not _has_table(conn, folders_table or "")
            projects = self._layout(conn, path, "projects", optional=optional)
            if projects is None:
                return []
            folders = self._layout(conn, path, "project_folders")
            assert folders is not None  # required: _layout raised otherwise
            rows = conn.execute(
                f"SELECT {projects.text('id', 'p')}, {projects.text('name', 'p')}, {folders.text('path', 'f')} "
                f"FROM {_quoted(projects.table)} AS p LEFT JOIN {_quoted(folders.table)} AS f "
                f"ON CAST({folders.q('project_id', 'f')} AS TEXT) = CAST({projects.q('id', 'p')} AS TEXT) "
                "ORDER BY 1, 3"
            ).fetchall()
            codec = self._codec(path)
            found: dict[str, tuple[str, list[str]]] = {}
            for raw_id, raw_name, raw_path in rows:
                project_id = _decoded(raw_id, codec)
                if project_id is None:
                    continue
                name, paths = found.setdefault(project_id, (_decoded(raw_name, codec) or project_id, []))
                folder = _decoded(raw_path, codec)
                if folder and folder not in paths:
                    paths.append(folder)
            return [HostProject(pid, name, tuple(paths)) for pid, (name, paths) in found.items()]

    def sessions(self) -> list[HostSession]:
        """Every session row, by id (byte order of its text). Kept while the store's
        ``data_version`` is unchanged (no commit by the host since): a long-lived server reads
        2,500 sessions (about 12 ms) only after the host wrote."""
        with self._translated("read the sessions", self.database):
            conn = self._connection(self.database)
            assert conn is not None
            version = (id(conn), conn.execute("PRAGMA data_version").fetchall()[0][0])
            if self._sessions is not None and self._sessions[0] == version:
                return list(self._sessions[1])
            s = self._layout(conn, self.database, "sessions")
            assert s is not None
            rows = conn.execute(
                f"SELECT {s.text('id')}, {s.text('title')}, {s.stored('started_at')}, {s.text('cwd')}, "
                f"{s.text('git_root')}, {s.text('project_id')} FROM {_quoted(s.table)} ORDER BY 1"
            ).fetchall()
            codec = self._codec(self.database)
            out: list[HostSession] = []
            for raw_id, title, started, cwd, git_root, project_id in rows:
                session_id = _decoded(raw_id, codec)
                if session_id is None:
                    continue  # a NULL id (a column that is no primary key): nothing can refer to it
                out.append(HostSession(session_id, _decoded(title, codec), _as_stored(started, codec),
                                       _decoded(cwd, codec), _decoded(git_root, codec), _decoded(project_id, codec)))
            self._sessions = (version, out)
            return list(out)

    def change_token(self) -> object | None:
        """``(connection generation, PRAGMA data_version)`` of the session store: equal between two
        calls only when no other connection committed to it in between and the file was not
        replaced (each new connection is a new generation). Costs one pragma."""
        with self._translated("check the store for changes", self.database):
            conn = self._connection(self.database)
            assert conn is not None
            version = conn.execute("PRAGMA data_version").fetchall()[0][0]
            return (id(conn), self._generation.get(self.database, 0), version)

    def session_stats(self, roles: Sequence[str]) -> dict[str, SessionStat]:
        """One aggregate query over the messages of ``roles`` (all when empty), grouped by
        session id; ids stored both as INTEGER and as text are merged."""
        with self._translated("read the message counts", self.database):
            conn = self._connection(self.database)
            assert conn is not None
            m = self._layout(conn, self.database, "messages")
            assert m is not None
            where, params = _role_filter(m, roles)
            rows = conn.execute(
                f"SELECT {m.text('session_id')}, count(*), max({m.q('id')}), "
                f"coalesce(sum(octet_length({m.q('content')})), 0) "
                f"FROM {_quoted(m.table)} {where} GROUP BY {m.q('session_id')}",
                params,
            ).fetchall()
            codec = self._codec(self.database)
            stats: dict[str, SessionStat] = {}
            for raw_id, count, last_id, chars in rows:
                session_id = _decoded(raw_id, codec)
                if session_id is None:
                    continue
                stat = SessionStat(int(count), _message_id(last_id, self.database), int(chars))
                old = stats.get(session_id)
                if old is not None:
                    stat = SessionStat(old.messages + stat.messages, max(old.last_id, stat.last_id),
                                       old.chars + stat.chars)
                stats[session_id] = stat
            return stats

    def messages(self, session_id: str, roles: Sequence[str]) -> list[HostMessage]:
        """The messages of ``roles`` (all when empty) of ``session_id``, by increasing id."""
        ids = _session_id_params(session_id)
        if ids is None:
            return []
        with self._translated("read a session's messages", self.database):
            conn = self._connection(self.database)
            assert conn is not None
            m = self._layout(conn, self.database, "messages")
            assert m is not None
            where, params = _role_filter(m, roles)
            where = (where + " AND " if where else "WHERE ") + _same_session(m)
            params.update(sid=ids[0], sid_n=ids[1])
            rows = conn.execute(
                f"SELECT {_message_columns(m)} FROM {_quoted(m.table)} {where} ORDER BY {m.q('id')}", params
            ).fetchall()
            return self._messages(rows, session_id)

    def window(self, session_id: str, message_id: int, before: int, after: int,
               roles: Sequence[str] = ()) -> list[HostMessage]:
        """Up to ``before`` messages of ``roles`` (any role when empty) with text before
        ``message_id`` in its session, the message when it exists (whatever its role and
        content), up to ``after`` after, by increasing id: one statement (a consistent snapshot),
        each side an index range with its own ``LIMIT``. A neighbour whose content is ``NULL`` or
        only the characters Python's ``str.strip`` removes is skipped in SQL (``trim`` with that
        set), so the ``LIMIT`` counts messages with text."""
        ids = _session_id_params(session_id)
        if ids is None:
            return []
        with self._translated("read the messages around a hit", self.database):
            conn = self._connection(self.database)
            assert conn is not None
            m = self._layout(conn, self.database, "messages")
            assert m is not None
            table, mid, columns = _quoted(m.table), m.q("id"), _message_columns(m)
            same = _same_session(m)
            where, role_params = _role_filter(m, roles)
            role = f" AND {where.removeprefix('WHERE ')}" if where else ""
            content = m.q("content")
            role += f" AND {content} IS NOT NULL AND trim(CAST({content} AS TEXT), :blank) <> ''"
            rows = conn.execute(
                f"SELECT * FROM (SELECT {columns} FROM {table} WHERE {same} AND {mid} < :mid{role} "
                f"ORDER BY {mid} DESC LIMIT :before) "
                f"UNION ALL SELECT {columns} FROM {table} WHERE {same} AND {mid} = :mid "
                f"UNION ALL SELECT * FROM (SELECT {columns} FROM {table} WHERE {same} AND {mid} > :mid{role} "
                f"ORDER BY {mid} LIMIT :after)",
                {"sid": ids[0], "sid_n": ids[1], "mid": sqlite_int(message_id, -(2**63)),
                 "before": sqlite_int(before, 0), "after": sqlite_int(after, 0), "blank": _BLANK,
                 **role_params},
            ).fetchall()
            return sorted(self._messages(rows, session_id), key=lambda message: message.id)

    def close(self) -> None:
        """Release the connections. Idempotent; later calls raise :class:`HistoryUnavailableError`."""
        self._closed = True
        conns, self._conns = self._conns, {}
        self._layouts.clear()
        for conn, _, _ in conns.values():
            try:
                conn.close()
            except apsw.Error:
                pass  # a read-only connection holds nothing to lose

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.database)!r}{', closed' if self._closed else ''})"

    # -- plumbing ------------------------------------------------------------------------------

    def _messages(self, rows: list[tuple[Any, ...]], session_id: str) -> list[HostMessage]:
        codec = self._codec(self.database)
        return [
            HostMessage(_message_id(raw_id, self.database), session_id, _decoded(role, codec) or "",
                        _content(kind, content, codec), _as_stored(timestamp, codec))
            for raw_id, role, kind, content, timestamp in rows
        ]

    def _codec(self, path: Path) -> str:
        return self._conns[path][2]

    def _connection(self, path: Path, *, optional: bool = False) -> apsw.Connection | None:
        """The open connection to ``path``, opened (or reopened, when another file now has that
        path) as needed; ``None`` when ``optional`` and the file does not exist.

        Raises:
            HistoryUnavailableError: closed object, missing (not ``optional``) or unreadable file.
            apsw.Error: opening failed (translated by the caller's :meth:`_translated`).
        """
        if self._closed:
            raise HistoryUnavailableError(
                f"the session history reader of {self.database} is closed",
                hint="Open a new one; a closed reader cannot be reused.")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._drop(path)
            if optional:
                return None
            raise HistoryUnavailableError(
                f"the host's session store {path} does not exist",
                hint="Set knowledgebase.history.database in config.yaml to the host's session database "
                     "(for a Hermes agent: ~/.hermes/state.db), or start the host once so it creates it.",
            ) from None
        identity = (st.st_dev, st.st_ino)
        held = self._conns.get(path)
        if held is not None and held[1] == identity:
            return held[0]
        self._drop(path)
        if not path.is_file():
            raise HistoryUnavailableError(f"the host's session store {path} is not a file",
                                          hint="Point the setting at the database file itself, not at its folder.")
        if _is_wal(path) and not os.path.exists(f"{path}-shm") and not _folder_writable(path.parent):
            raise _wal_error(path)
        conn = apsw.Connection(_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            # Before the first read: a host writing in rollback-journal mode is waited for.
            conn.set_busy_timeout(self.busy_timeout_ms)
            # Belt and braces: a read-only connection cannot checkpoint anyway.
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()  # reads the header: NOTADB here
            encoding = conn.execute("PRAGMA encoding").fetchall()[0][0]
        except BaseException:
            conn.close()
            raise
        self._conns[path] = (conn, identity, _CODECS.get(encoding, "utf-8"))
        self._generation[path] = self._generation.get(path, 0) + 1
        return conn

    def _drop(self, path: Path) -> None:
        held = self._conns.pop(path, None)
        for key in [k for k in self._layouts if k[0] == path]:
            del self._layouts[key]
        if held is not None:
            try:
                held[0].close()
            except apsw.Error:
                pass

    def _layout(self, conn: apsw.Connection, path: Path, table_key: str, *, optional: bool = False) -> _Layout | None:
        """The checked names of ``table_key`` (``"sessions"``...) in ``path``, cached per
        connection and schema version; ``None`` when ``optional`` and the table is missing.

        Raises:
            HistoryUnavailableError: the table (not ``optional``) or a named column is missing.
        """
        # The host may migrate its tables while we hold the connection (add project_id, create
        # the registry): the cache holds for one schema version only.
        version = conn.execute("PRAGMA schema_version").fetchall()[0][0]
        key = (path, table_key, version)
        if key in self._layouts:
            return self._layouts[key]
        names = self.schema.table(table_key)
        table = names["table"]
        assert table is not None  # history_schema never lets a table name be null
        present = {str(row[0]).casefold(): str(row[0])
                   for row in conn.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall()}
        if not present:
            if optional:
                return None
            tables = [str(r[0]) for r in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name").fetchall()]
            raise HistoryUnavailableError(
                f"the host's session store {path} has no table {table!r} (the {table_key} table)",
                hint=f"Set {SCHEMA_KEY}.{table_key}.table in config.yaml to the host's table name; "
                     f"the tables in that file are: {', '.join(tables) or 'none'}.",
            )
        columns: dict[str, str | None] = {}
        for field_name, column in names.items():
            if field_name == "table":
                continue
            if column is None or column.casefold() in present:
                columns[field_name] = column
            elif table_key == "sessions" and field_name == "project_id":
                columns[field_name] = None  # the host keeps no persisted attribution
            else:
                optional_field = field_name in OPTIONAL_COLUMNS[table_key]
                raise HistoryUnavailableError(
                    f"the host's table {table!r} in {path} has no column {column!r} (the {table_key} {field_name})",
                    hint=f"Set {SCHEMA_KEY}.{table_key}.{field_name} in config.yaml to the host's column name"
                         + (", or to null if it has none" if optional_field else "")
                         + f"; the columns of {table!r} are: {', '.join(sorted(present.values()))}.",
                )
        layout = _Layout(table, columns)
        self._layouts[key] = layout
        return layout

    @contextmanager
    def _translated(self, action: str, path: Path) -> Iterator[None]:
        """Run the block; turn apsw, OS and decoding errors into :class:`HistoryUnavailableError`
        naming ``path`` and ``action``, with a hint. A ``KeyboardInterrupt`` stays one."""
        try:
            try:
                yield
            except Exception as exc:
                reraise_interrupt(exc)
                raise
        except WorkspaceError:
            raise
        except (apsw.BusyError, apsw.LockedError) as exc:
            raise HistoryUnavailableError(
                f"the host's session store {path} stayed locked for more than {self.busy_timeout_ms} ms "
                f"while trying to {action}",
                hint="The host application is writing (in rollback-journal mode a write keeps readers out); "
                     "try again in a moment.",
            ) from exc
        except (apsw.NotADBError, apsw.CorruptError) as exc:
            raise HistoryUnavailableError(
                f"the host's session store {path} is damaged or not a SQLite database ({exc})",
                hint="Check that knowledgebase.history.database (and projects_database) point to the host's "
                     "SQLite files.",
            ) from exc
        except apsw.ReadOnlyError as exc:
            code = getattr(exc, "extendedresult", None)
            if code == _READONLY_ROLLBACK:
                raise HistoryUnavailableError(
                    f"cannot {action}: the host's session store {path} has an unfinished write (a hot "
                    f"journal, {path.name}-journal), which only a writer may roll back",
                    hint="Start the host application once (it rolls the write back when it opens the "
                         "database), then try again; this reader never writes to the host's files.",
                ) from exc
            if code in _READONLY_WAL_INDEX:
                raise _wal_error(path) from exc
            raise HistoryUnavailableError(f"cannot {action} in the host's session store {path}: {exc}") from exc
        except (apsw.CantOpenError, apsw.PermissionsError, apsw.AuthError) as exc:
            raise HistoryUnavailableError(
                f"cannot open the host's session store {path}: {exc}",
                hint="Check that this user may read the file and its folder (and its -wal and -shm files, "
                     "when the host uses WAL mode).",
            ) from exc
        except apsw.SQLError as exc:
            raise HistoryUnavailableError(
                f"cannot {action} in the host's session store {path}: {exc}",
                hint=f"The host's tables changed; check {SCHEMA_KEY} in config.yaml against them.",
            ) from exc
        except (apsw.ConnectionClosedError, apsw.CursorClosedError) as exc:
            raise HistoryUnavailableError(f"the session history reader of {path} is closed",
                                          hint="Open a new one; a closed reader cannot be reused.") from exc
        except apsw.Error as exc:
            raise HistoryUnavailableError(f"cannot {action} in the host's session store {path}: {exc}") from exc
        except OSError as exc:
            raise HistoryUnavailableError(
                f"cannot {action}: {exc.strerror or exc} ({path})",
                hint="Check that the file exists and that this user may read it and its folder.",
            ) from exc
        except (UnicodeError, ValueError, TypeError) as exc:
            raise HistoryUnavailableError(
                f"cannot {action} in the host's session store {path}: {exc}",
                hint=f"A value has a type this reader does not expect (message ids must be integers); check "
                     f"{SCHEMA_KEY} in config.yaml against the host's columns.",
            ) from exc


def _resolved(path: Path) -> Path:
    """``path`` with symbolic links followed; as given when they loop or cannot be read."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _has_table(conn: apsw.Connection, table: str) -> bool:
    """Whether ``table`` (a table or view) exists in ``conn``'s main database."""
    return bool(table) and bool(conn.execute("SELECT 1 FROM pragma_table_info(?) LIMIT 1", (table,)).fetchall())


def _same_path(a: Path, b: Path) -> bool:
    return _resolved(a) == _resolved(b)


def _same_session(m: _Layout) -> str:
    """The condition "this message's session id is ``:sid``": ``IN (:sid, :sid_n)`` lets an
    index on the column answer; the text comparison makes it exact (with INTEGER affinity,
    ``'07' = 7`` holds, yet ``07`` is not the id ``7``)."""
    column = m.q("session_id")
    return f"{column} IN (:sid, :sid_n) AND CAST({column} AS TEXT) = :sid"


def _role_filter(m: _Layout, roles: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """``WHERE role IN (...)`` and its parameters; empty when ``roles`` is empty or the host has
    no role column."""
    column = m.q("role")
    wanted = [r for r in dict.fromkeys(roles) if _encodable(r)]
    if column is None or not roles:
        return "", {}
    if not wanted:
        return "WHERE 0", {}
    params = {f"role_{i}": role for i, role in enumerate(wanted)}
    return f"WHERE {column} IN ({', '.join(':' + name for name in params)})", params


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _message_columns(m: _Layout) -> str:
    """id, role, typeof(content), content as bytes, timestamp as stored."""
    content = m.q("content")
    return (f"{m.q('id')}, {m.text('role')}, typeof({content}), CAST({content} AS BLOB), "
            f"{m.stored('timestamp')}")


def _decoded(value: Any, codec: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode(codec, "replace")
    return str(value)


def _as_stored(value: Any, codec: str) -> Any:
    return value.decode(codec, "replace") if isinstance(value, bytes) else value


def _content(kind: str, value: Any, codec: str) -> str:
    """A message's content as text: ``NULL`` is ``""``; a BLOB is decoded as UTF-8 (what a host
    that stores bytes writes); text and numbers (already SQLite's text of them) with the
    database's encoding. Invalid bytes become U+FFFD."""
    if value is None:
        return ""
    if not isinstance(value, bytes):
        return str(value)
    return value.decode("utf-8" if kind == "blob" else codec, "replace")


def _message_id(value: Any, path: Path) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        raise HistoryUnavailableError(
            f"the host's session store {path} has a message id that is not an integer: {value!r}",
            hint=f"Set {SCHEMA_KEY}.messages.id in config.yaml to the host's integer message id column "
                 "(usually the INTEGER PRIMARY KEY).",
        ) from None
