"""SqliteSessionHistory beyond the port's contract: the host's files are left byte for byte as
they were (rollback journal and WAL, while the host writes, a WAL it did not checkpoint), and every
failure is a HistoryUnavailableError with a hint: missing or foreign files, missing tables and
columns, locks, a hot journal, a WAL folder we may not write. Custom table and column names."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from hermes_workspace.adapters import sqlite_session_history as module
from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory
from hermes_workspace.domain.errors import HistoryUnavailableError
from hermes_workspace.domain.history import HostMessage, HostProject, HostSession, SessionStat, history_schema
from hermes_workspace.testing.host_history import HostWriter, build_host_database

CHAT = ("user", "assistant")


def fingerprint(path: Path) -> tuple[str, int, int]:
    """sha256, size and modification time (ns) of a file."""
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns


def read_everything(history: SqliteSessionHistory) -> dict[str, SessionStat]:
    history.projects()
    sessions = history.sessions()
    stats = history.session_stats(CHAT)
    for session in sessions:
        rows = history.messages(session.id, ())
        if rows:
            history.window(session.id, rows[len(rows) // 2].id, 2, 2)
    history.session_stats(())
    return stats


def seeded_host(tmp_path: Path, *, wal: bool, projects_db: bool = False, autocheckpoint: bool = True) -> HostWriter:
    host = build_host_database(tmp_path / "state.db", projects_path=tmp_path / "projects.db" if projects_db else None,
                               wal=wal, project_id_column=True, autocheckpoint=autocheckpoint)
    host.add_project("p1", "Alpha", ["/w/alpha"])
    host.add_session("s1", title="one", cwd="/w/alpha", git_repo_root="/w/alpha")
    host.add_session("s2", title="two", cwd=None)
    host.add_messages("s1", [("user", "lexer question"), ("assistant", "lexer answer"), ("tool", "{}")])
    host.add_messages("s2", [("user", "home question")])
    return host


# -- read-only ---------------------------------------------------------------------------------


def test_reading_a_rollback_journal_store_while_the_host_writes_changes_no_byte(tmp_path: Path) -> None:
    host = seeded_host(tmp_path, wal=False)
    database = tmp_path / "state.db"
    with SqliteSessionHistory(database) as history:
        for round_ in range(3):
            host.add_messages("s1", [("user", f"round {round_}"), ("assistant", f"reply {round_}")])
            before, listing = fingerprint(database), sorted(os.listdir(tmp_path))
            stats = read_everything(history)
            assert stats["s1"].messages == 2 + 2 * (round_ + 1)  # the host's last commit is seen
            assert fingerprint(database) == before
            assert sorted(os.listdir(tmp_path)) == listing == ["state.db"]  # no journal of ours
    host.close()


def test_reading_a_wal_store_while_the_host_writes_changes_neither_the_file_nor_its_wal(tmp_path: Path) -> None:
    # Without automatic checkpoints the host's commits go to the -wal only, so the database
    # file must stay exactly as it was, and the -wal changes only with the host's commits.
    host = seeded_host(tmp_path, wal=True, projects_db=True, autocheckpoint=False)
    database, projects, wal = tmp_path / "state.db", tmp_path / "projects.db", tmp_path / "state.db-wal"
    main_before = fingerprint(database)
    with SqliteSessionHistory(database, tmp_path / "projects.db") as history:
        assert history.projects() == [HostProject("p1", "Alpha", ("/w/alpha",))]
        for round_ in range(3):
            host.add_messages("s2", [("assistant", f"reply {round_}")])
            host.move_session("s1", cwd=f"/w/other{round_}", project_id="p1")
            wal_before, projects_before = fingerprint(wal), fingerprint(projects)
            stats = read_everything(history)
            assert stats["s2"].messages == 2 + round_
            assert {s.id: s.cwd for s in history.sessions()}["s1"] == f"/w/other{round_}"
            assert fingerprint(wal) == wal_before
            assert fingerprint(projects) == projects_before
            assert fingerprint(database) == main_before
    assert fingerprint(database) == main_before  # closing our connection did not checkpoint
    host.close()


def test_our_close_never_checkpoints_a_wal_the_host_left_behind(tmp_path: Path) -> None:
    """The host stopped without checkpointing (its commits are only in the -wal). We are then the
    last connection to close, which for a writer means checkpoint and delete the -wal: ours
    must do neither, and still read the host's commits from the -wal."""
    host = build_host_database(tmp_path / "state.db", autocheckpoint=False)
    host.close()
    database, wal = tmp_path / "state.db", tmp_path / "state.db-wal"
    conn = apsw.Connection(str(database))
    conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO sessions (id, started_at) VALUES ('s1', 1.0)")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'kept', 2.0)")
    conn.close()
    main_before, wal_before = fingerprint(database), fingerprint(wal)
    assert wal_before[1] > 0
    history = SqliteSessionHistory(database)
    assert history.messages("s1", CHAT)[0].content == "kept"
    history.close()
    assert fingerprint(database) == main_before
    assert fingerprint(wal) == wal_before


def test_a_wal_store_without_shm_in_a_folder_we_may_not_write_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_host_database(tmp_path / "state.db").close()  # closed: no -wal, no -shm left
    assert sorted(os.listdir(tmp_path)) == ["state.db"]
    monkeypatch.setattr(module, "_folder_writable", lambda folder: False)
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db").sessions()
    assert "WAL mode" in caught.value.message and "state.db-shm" in caught.value.message
    assert "immutable" in caught.value.hint and "Start the host" in caught.value.hint
    assert sorted(os.listdir(tmp_path)) == ["state.db"]  # nothing opened, nothing created


def test_sqlite_refusing_the_wal_index_gives_the_same_error(tmp_path: Path) -> None:
    """What SQLite says when it cannot create the -shm (a folder of another user): translated to
    the same message, whichever read-only code it uses."""
    history = SqliteSessionHistory(tmp_path / "state.db")
    for name in ("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT", "SQLITE_READONLY_RECOVERY"):
        error = apsw.ReadOnlyError("attempt to write a readonly database")
        error.extendedresult = apsw.mapping_extended_result_codes[name]
        with pytest.raises(HistoryUnavailableError) as caught:
            with history._translated("read the sessions", tmp_path / "state.db"):
                raise error
        assert "WAL mode" in caught.value.message, name


def test_a_hot_journal_left_by_a_crashed_host_is_reported_and_left_alone(tmp_path: Path) -> None:
    host = seeded_host(tmp_path, wal=False)
    host.close()
    database = tmp_path / "state.db"
    crash = ("import sqlite3, os, sys\n"
             "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
             "c.execute('PRAGMA cache_size=1'); c.execute('BEGIN')\n"
             "c.executemany('INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)',\n"
             "              [('s1', 'user', 'x' * 3000, 1.0)] * 300)\n"
             "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", crash, str(database)], check=True, timeout=120)
    journal = tmp_path / "state.db-journal"
    assert journal.exists() and journal.stat().st_size > 0
    before = fingerprint(database), fingerprint(journal)
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(database).session_stats(CHAT)
    assert "hot journal" in caught.value.message and "Start the host" in caught.value.hint
    assert (fingerprint(database), fingerprint(journal)) == before


def test_a_rollback_journal_host_holding_its_write_lock_past_the_busy_timeout(tmp_path: Path) -> None:
    host = seeded_host(tmp_path, wal=False)
    history = SqliteSessionHistory(tmp_path / "state.db", busy_timeout_ms=0)
    assert history.session_stats(CHAT)["s1"].messages == 2
    with host.write_lock():
        with pytest.raises(HistoryUnavailableError) as caught:
            history.session_stats(CHAT)
    assert "stayed locked for more than 0 ms" in caught.value.message and "try again" in caught.value.hint
    assert history.session_stats(CHAT)["s1"].messages == 2  # usable again once the host is done
    history.close()
    host.close()


def test_a_wal_host_holding_its_write_lock_does_not_stop_reads(tmp_path: Path) -> None:
    host = seeded_host(tmp_path, wal=True)
    with SqliteSessionHistory(tmp_path / "state.db", busy_timeout_ms=0) as history:
        with host.write_lock():
            assert history.session_stats(CHAT)["s1"].messages == 2
    host.close()


# -- unavailable stores ------------------------------------------------------------------------


def test_a_missing_store_is_history_unavailable_with_exit_66(tmp_path: Path) -> None:
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "nope" / "state.db").sessions()
    error = caught.value
    assert (error.code, error.exit_code) == ("history_unavailable", 66)
    assert str(tmp_path / "nope" / "state.db") in error.message and "does not exist" in error.message
    assert "knowledgebase.history.database" in error.hint
    assert not (tmp_path / "nope").exists()


def test_a_store_created_after_the_reader_is_found(tmp_path: Path) -> None:
    history = SqliteSessionHistory(tmp_path / "state.db")
    with pytest.raises(HistoryUnavailableError):
        history.sessions()
    seeded_host(tmp_path, wal=True).close()
    assert [s.id for s in history.sessions()] == ["s1", "s2"]
    history.close()


def test_a_file_that_is_no_database(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_text("this is a text file, long enough to hold a header of one hundred bytes " * 3)
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(path).session_stats(())
    assert "not a SQLite database" in caught.value.message
    assert "knowledgebase.history.database" in caught.value.hint


def test_a_folder_instead_of_a_file(tmp_path: Path) -> None:
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path).sessions()
    assert "is not a file" in caught.value.message


def test_a_missing_table_names_it_the_setting_and_the_tables_there(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=True).close()
    schema = history_schema({"messages": {"table": "chat_messages"}})
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db", schema=schema).messages("s1", ())
    assert "no table 'chat_messages'" in caught.value.message
    assert "knowledgebase.history.schema.messages.table" in caught.value.hint
    assert "messages, messages_fts" in caught.value.hint


def test_a_missing_optional_column_suggests_null_and_a_required_one_does_not(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=True).close()
    schema = history_schema({"sessions": {"cwd": "workdir"}})
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db", schema=schema).sessions()
    assert "has no column 'workdir' (the sessions cwd)" in caught.value.message
    assert "knowledgebase.history.schema.sessions.cwd" in caught.value.hint
    assert "or to null" in caught.value.hint and "git_repo_root" in caught.value.hint
    schema = history_schema({"messages": {"content": "body"}})
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db", schema=schema).session_stats(())
    assert "knowledgebase.history.schema.messages.content" in caught.value.hint
    assert "null" not in caught.value.hint


def test_the_project_id_column_is_read_only_when_the_table_has_it(tmp_path: Path) -> None:
    without = build_host_database(tmp_path / "a.db")
    without.add_session("s1", cwd="/w")
    with SqliteSessionHistory(tmp_path / "a.db") as history:
        assert history.sessions()[0].project_id is None
        # The host migrates while we hold the connection: the new column is read from then on.
        conn = apsw.Connection(str(tmp_path / "a.db"))  # the reader's library: see host_history
        conn.execute("ALTER TABLE sessions ADD COLUMN project_id TEXT")
        conn.execute("UPDATE sessions SET project_id = 'p9'")
        conn.close()
        assert history.sessions()[0].project_id == "p9"
    without.close()
    with_column = build_host_database(tmp_path / "b.db", project_id_column=True)
    with_column.add_session("s1", cwd="/w", project_id="p1")
    with_column.add_session("s2", cwd="/w")
    with SqliteSessionHistory(tmp_path / "b.db") as history:
        assert [s.project_id for s in history.sessions()] == ["p1", None]
    with_column.close()


def test_the_registry_may_be_absent_but_not_half_present(tmp_path: Path) -> None:
    host = build_host_database(tmp_path / "state.db", projects_path=tmp_path / "projects.db")
    host.add_project("p1", "Alpha", ["/w/a", "/w/b"])
    host.close()
    assert SqliteSessionHistory(tmp_path / "state.db", tmp_path / "missing.db").projects() == []
    # The registry in the sessions file, where this host keeps none:
    assert SqliteSessionHistory(tmp_path / "state.db").projects() == []
    assert SqliteSessionHistory(tmp_path / "state.db", tmp_path / "projects.db").projects() == [
        HostProject("p1", "Alpha", ("/w/a", "/w/b"))]
    conn = apsw.Connection(str(tmp_path / "projects.db"))
    conn.execute("DROP TABLE project_folders")
    conn.close()
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db", tmp_path / "projects.db").projects()
    assert "no table 'project_folders'" in caught.value.message
    assert "knowledgebase.history.schema.project_folders.table" in caught.value.hint


@pytest.mark.parametrize(("table", "field", "name"), [
    ("projects", "table", "projectz"), ("project_folders", "table", "project_folderz"),
    ("projects", "name", "title"), ("project_folders", "path", "folder")])
def test_a_misspelt_registry_name_is_history_unavailable_never_an_empty_registry(
        tmp_path: Path, table: str, field: str, name: str) -> None:
    """Trial finding: ``projects.table: projectz`` read as a host without a registry, so every
    session fell to its git repository or to Home, with exit 0. Any wrong registry name fails,
    naming the setting."""
    seeded_host(tmp_path, wal=True).close()  # the registry tables in the session store
    schema = history_schema({table: {field: name}})
    with SqliteSessionHistory(tmp_path / "state.db", schema=schema) as history:
        with pytest.raises(HistoryUnavailableError) as caught:
            history.projects()
    assert repr(name) in caught.value.message
    assert f"knowledgebase.history.schema.{table}.{field}" in caught.value.hint


def test_a_registry_the_config_names_must_exist_even_where_the_host_keeps_none(tmp_path: Path) -> None:
    host = build_host_database(tmp_path / "state.db", projects_path=tmp_path / "projects.db")
    host.add_project("p1", "Alpha", ["/w/a"])
    host.close()
    # Nothing configured: the session store keeps no registry, and that is a host without one.
    assert SqliteSessionHistory(tmp_path / "state.db").projects() == []
    # The config names the registry tables (even with their default names): they must be there.
    named = history_schema({"projects": {"table": "projects"}})
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db", schema=named).projects()
    assert "no table 'projects'" in caught.value.message
    assert "knowledgebase.history.schema.projects.table" in caught.value.hint
    assert SqliteSessionHistory(tmp_path / "state.db", tmp_path / "projects.db", schema=named).projects() == [
        HostProject("p1", "Alpha", ("/w/a",))]
    # A registry file named in config must hold the registry, not only exist.
    empty = tmp_path / "empty.db"
    apsw.Connection(str(empty)).execute("CREATE TABLE other (x)")
    assert SqliteSessionHistory(tmp_path / "state.db", empty).projects() == []
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db", empty, projects_required=True).projects()
    assert "no table 'projects'" in caught.value.message and "other" in caught.value.hint


def test_a_folders_table_without_its_projects_table_is_a_misspelt_registry(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=False).close()
    conn = apsw.Connection(str(tmp_path / "state.db"))
    conn.execute("ALTER TABLE projects RENAME TO old_projects")
    conn.close()
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(tmp_path / "state.db").projects()
    assert "no table 'projects'" in caught.value.message
    assert "knowledgebase.history.schema.projects.table" in caught.value.hint and "old_projects" in caught.value.hint


def test_a_registry_file_that_appears_later_is_read(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=True).close()
    history = SqliteSessionHistory(tmp_path / "state.db", tmp_path / "projects.db")
    assert history.projects() == []
    registry = build_host_database(tmp_path / "other.db", projects_path=tmp_path / "projects.db")
    registry.add_project("p2", "Beta", ["/w/beta"])
    registry.close()
    assert history.projects() == [HostProject("p2", "Beta", ("/w/beta",))]
    history.close()


# -- custom schemas and odd rows ---------------------------------------------------------------


CUSTOM = """
CREATE TABLE chat_sessions (session_key TEXT PRIMARY KEY, name TEXT, created TEXT, folder TEXT, repo TEXT);
CREATE TABLE chat_messages (msg_id INTEGER PRIMARY KEY, conv, speaker TEXT, body, at);
CREATE TABLE workspaces (wid INTEGER PRIMARY KEY, label TEXT);
CREATE TABLE workspace_dirs (wid INTEGER, dir TEXT);
INSERT INTO chat_sessions VALUES ('c1', 'Custom', '2026-09-01T14:30:22Z', '/srv/app', '/srv/app');
INSERT INTO chat_sessions VALUES ('c2', NULL, NULL, NULL, NULL);
INSERT INTO chat_messages VALUES (10, 'c1', 'human', 'first question', '2026-09-01T14:30:23Z');
INSERT INTO chat_messages VALUES (11, 'c1', 'ai', 42, 1788000000);
INSERT INTO chat_messages VALUES (12, 'c1', 'ai', 2.5, NULL);
INSERT INTO chat_messages VALUES (13, 'c1', 'human', CAST(X'6f6b20ff21' AS TEXT), 1788000001.5);
INSERT INTO chat_messages VALUES (14, 'c2', 'human', x'cafe', 1);
INSERT INTO workspaces VALUES (1, NULL);
INSERT INTO workspace_dirs VALUES (1, '/srv/app');
"""
CUSTOM_SCHEMA = {
    "sessions": {"table": "chat_sessions", "id": "session_key", "title": "name", "started_at": "created",
                 "cwd": "folder", "git_root": "repo"},
    "messages": {"table": "chat_messages", "id": "msg_id", "session_id": "conv", "role": "speaker",
                 "content": "body", "timestamp": "at"},
    "projects": {"table": "workspaces", "id": "wid", "name": "label"},
    "project_folders": {"table": "workspace_dirs", "project_id": "wid", "path": "dir"},
}


def custom_store(tmp_path: Path) -> Path:
    path = tmp_path / "chat.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute(CUSTOM)
    conn.close()
    return path


def test_a_host_with_other_table_and_column_names(tmp_path: Path) -> None:
    with SqliteSessionHistory(custom_store(tmp_path), schema=history_schema(CUSTOM_SCHEMA)) as history:
        # A project without a name is named by its id; integer project ids are read as text.
        assert history.projects() == [HostProject("1", "1", ("/srv/app",))]
        assert history.sessions() == [HostSession("c1", "Custom", "2026-09-01T14:30:22Z", "/srv/app", "/srv/app"),
                                      HostSession("c2")]
        assert history.messages("c1", ("ai",)) == [HostMessage(11, "c1", "ai", "42", 1788000000),
                                                   HostMessage(12, "c1", "ai", "2.5", None)]
        # Text that is not valid UTF-8 never stops a read: the bad byte is replaced.
        assert history.messages("c1", ("human",))[1] == HostMessage(13, "c1", "human", "ok \ufffd!", 1788000001.5)
        assert history.messages("c2", ())[0].content == "\ufffd\ufffd"
        stats = history.session_stats(("human", "ai"))
        assert stats["c1"] == SessionStat(4, 13, len("first question") + 2 + 3 + 5)
        assert history.window("c1", 12, 1, 1) == [HostMessage(11, "c1", "ai", "42", 1788000000),
                                                  HostMessage(12, "c1", "ai", "2.5", None),
                                                  HostMessage(13, "c1", "human", "ok \ufffd!", 1788000001.5)]


def test_optional_columns_set_to_null_read_as_null_and_no_role_column_filters_nothing(tmp_path: Path) -> None:
    custom = {**CUSTOM_SCHEMA,
              "sessions": {**CUSTOM_SCHEMA["sessions"], "title": None, "started_at": None, "git_root": None},
              "messages": {**CUSTOM_SCHEMA["messages"], "role": None, "timestamp": None}}
    with SqliteSessionHistory(custom_store(tmp_path), schema=history_schema(custom)) as history:
        assert history.sessions()[0] == HostSession("c1", None, None, "/srv/app", None)
        messages = history.messages("c1", CHAT)
        assert [(m.id, m.role, m.timestamp) for m in messages] == [(10, "", None), (11, "", None), (12, "", None),
                                                                 (13, "", None)]
        assert history.session_stats(CHAT)["c1"].messages == 4


def test_message_ids_that_are_not_integers_are_a_schema_error(tmp_path: Path) -> None:
    path = custom_store(tmp_path)
    schema = history_schema({**CUSTOM_SCHEMA, "messages": {**CUSTOM_SCHEMA["messages"], "id": "speaker"}})
    with pytest.raises(HistoryUnavailableError) as caught:
        SqliteSessionHistory(path, schema=schema).messages("c1", ())
    assert "not an integer" in caught.value.message
    assert "knowledgebase.history.schema.messages.id" in caught.value.hint


def test_a_session_id_sqlite_cannot_hold_matches_nothing(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=True).close()
    with SqliteSessionHistory(tmp_path / "state.db") as history:
        assert history.messages("s1\udc80", ()) == []
        assert history.window("s1\udc80", 1, 1, 1) == []
        assert history.messages("s1", ("user\udc80",)) == []


def test_a_store_the_host_replaced_is_read_anew(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=False).close()
    history = SqliteSessionHistory(tmp_path / "state.db")
    assert len(history.sessions()) == 2
    (tmp_path / "state.db").rename(tmp_path / "old.db")
    fresh = build_host_database(tmp_path / "state.db", wal=False)
    fresh.add_session("new", cwd="/w")
    fresh.close()
    assert [s.id for s in history.sessions()] == ["new"]
    (tmp_path / "state.db").unlink()
    with pytest.raises(HistoryUnavailableError):
        history.sessions()
    history.close()


# -- identity and lifecycle ---------------------------------------------------------------------


def test_signature_names_the_resolved_files_and_the_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    relative = SqliteSessionHistory(Path("state.db"), Path("projects.db"))
    absolute = SqliteSessionHistory(tmp_path / "state.db", tmp_path / "projects.db")
    assert relative.signature == absolute.signature
    assert absolute.signature.startswith(f"sqlite-history:{tmp_path.resolve() / 'state.db'}|"
                                         f"projects:{tmp_path.resolve() / 'projects.db'}|sessions.")
    assert SqliteSessionHistory(tmp_path / "state.db").signature.startswith(
        f"sqlite-history:{tmp_path.resolve() / 'state.db'}|projects:{tmp_path.resolve() / 'state.db'}|")
    other = SqliteSessionHistory(tmp_path / "state.db", tmp_path / "projects.db",
                                 schema=history_schema({"messages": {"timestamp": None}}))
    assert other.signature != absolute.signature and "timestamp=None" in other.signature


def test_close_is_idempotent_and_a_closed_reader_says_so(tmp_path: Path) -> None:
    seeded_host(tmp_path, wal=True).close()
    with SqliteSessionHistory(tmp_path / "state.db") as history:
        assert len(history.sessions()) == 2
    history.close()
    with pytest.raises(HistoryUnavailableError) as caught:
        history.sessions()
    assert "closed" in caught.value.message


def test_the_change_token_moves_only_when_the_host_commits(tmp_path: Path) -> None:
    database = tmp_path / "state.db"
    with build_host_database(database) as host:
        host.add_session("s1", title="t", started_at=1.0, cwd="/w")
        host.add_message("s1", "user", "hello", timestamp=2.0)
        with SqliteSessionHistory(database) as history:
            first = history.change_token()
            history.session_stats(())
            history.messages("s1", ())
            assert history.change_token() == first  # our own reads change nothing
            host.add_message("s1", "assistant", "hi", timestamp=3.0)
            second = history.change_token()
            assert second != first
            assert history.change_token() == second
            assert [s.cwd for s in history.sessions()] == ["/w"]
            host.move_session("s1", cwd="/elsewhere")  # the session list is read again after a commit
            assert [s.cwd for s in history.sessions()] == ["/elsewhere"]


def test_a_registry_file_named_in_config_must_exist(tmp_path: Path) -> None:
    database = tmp_path / "state.db"
    with build_host_database(database) as host:
        host.add_session("s1", title="t", started_at=1.0, cwd="/w")
    missing = tmp_path / "nope" / "projects.db"
    assert SqliteSessionHistory(database, missing).projects() == []  # a host that keeps no registry
    with SqliteSessionHistory(database, missing, projects_required=True) as history:
        with pytest.raises(HistoryUnavailableError) as caught:
            history.projects()
    assert "registry" in caught.value.message and "projects_database" in caught.value.hint
