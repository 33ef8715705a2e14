"""The synthetic host store of hermes_workspace.testing.host_history (issue 13): deterministic by
seed, the counts asked for, every kind of session location, long and NULL messages, and each
scope's topic words only in the sessions attributed to it (what isolation tests rely on)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import apsw
import pytest

from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory
from hermes_workspace.domain.history import ProjectFolders, session_scope
from hermes_workspace.testing import HostWriter, build_host_database, populate
from hermes_workspace.testing.host_history import EPOCH, main

WORD = re.compile(r"[a-z]+")


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def content_digest(path: Path) -> str:
    digest = hashlib.sha256()
    for table in ("sessions", "messages", "projects", "project_folders"):
        for row in rows(path, f"SELECT * FROM {table} ORDER BY 1, 2"):
            digest.update(repr(row).encode())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("host")
    summary = populate(folder / "state.db", projects_path=folder / "projects.db", messages=6000, seed=3,
                       long_fraction=0.01)
    return folder, summary


def test_one_seed_gives_the_same_history_and_another_seed_another(tmp_path: Path) -> None:
    populate(tmp_path / "a.db", messages=1500, seed=7)
    populate(tmp_path / "b.db", messages=1500, seed=7)
    populate(tmp_path / "c.db", messages=1500, seed=8)
    assert content_digest(tmp_path / "a.db") == content_digest(tmp_path / "b.db")
    assert content_digest(tmp_path / "a.db") != content_digest(tmp_path / "c.db")


def test_counts_kinds_of_location_and_odd_messages(small) -> None:
    folder, summary = small
    database = folder / "state.db"
    assert rows(database, "SELECT count(*) FROM messages") == [(6000,)]
    assert rows(database, "SELECT count(*) FROM sessions") == [(150,)] == [(summary.sessions,)]
    assert rows(database, "SELECT min(n) >= 2 FROM (SELECT count(*) AS n FROM messages GROUP BY session_id)") == [(1,)]
    assert rows(database, "SELECT sum(message_count) FROM sessions") == [(6000,)]
    assert [p.name for p in summary.projects] == ["Ledger", "Skyward", "Crumb", "Lowering", "Helix"]
    assert len(summary.projects[1].folders) == 2  # a project with two folders
    assert summary.projects[2].folders[0].startswith(summary.projects[0].folders[0] + "/")  # nested
    assert rows(folder / "projects.db", "SELECT count(*) FROM project_folders") == [(6,)]
    assert rows(database, "SELECT name FROM sqlite_schema WHERE name = 'projects'") == []  # in projects.db
    assert rows(database, "PRAGMA journal_mode") == [("wal",)]
    # Every kind of location: explicit projects, git repositories of no project, Home.
    with SqliteSessionHistory(database, folder / "projects.db") as history:
        registry = ProjectFolders(history.projects())
        kinds = {session_scope(registry, s).kind for s in history.sessions()}
        moved = [s for s in history.sessions() if s.project_id is not None]
    assert kinds == {"explicit", "auto", "home"}
    assert summary.auto_repos and all(summary.sessions_by_scope.get("git:" + r, 0) > 0 for r in summary.auto_repos)
    assert summary.home_sessions == summary.sessions_by_scope["home"] > 0
    assert rows(database, "SELECT count(*) > 0 FROM sessions WHERE cwd IS NULL AND git_repo_root IS NULL") == [(1,)]
    assert moved  # persisted project ids that differ from the folder
    # Long messages of thousands of words, turns that only call tools (NULL content), all roles.
    long_rows = rows(database, "SELECT content FROM messages WHERE length(content) > 10000")
    assert len(long_rows) == summary.long_messages > 0
    assert all(len(str(r[0]).split()) >= 2000 for r in long_rows)
    assert rows(database, "SELECT count(*) > 0 FROM messages WHERE content IS NULL AND tool_calls IS NOT NULL"
                ) == [(1,)]
    assert {r[0] for r in rows(database, "SELECT DISTINCT role FROM messages")} == {
        "system", "user", "assistant", "tool"}
    # The host's own FTS index is complete.
    assert rows(database, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'photometry'") == rows(
        database, "SELECT count(*) FROM messages WHERE content LIKE '%photometry%'")


def test_each_scopes_topic_words_are_only_in_its_sessions(small) -> None:
    folder, summary = small
    with SqliteSessionHistory(folder / "state.db", folder / "projects.db") as history:
        registry = ProjectFolders(history.projects())
        scope_of = {s.id: session_scope(registry, s).id or "home" for s in history.sessions()}
        words_by_scope: dict[str, set[str]] = {}
        for session_id, scope in scope_of.items():
            for message in history.messages(session_id, ("user", "assistant", "tool")):
                words_by_scope.setdefault(scope, set()).update(WORD.findall(message.content.lower()))
    assert set(words_by_scope) == set(summary.vocabulary)
    for scope, topic in summary.vocabulary.items():
        assert set(topic) & words_by_scope[scope], scope  # the scope talks about its topic
        for other, words in words_by_scope.items():
            if other != scope:
                assert not set(topic) & words, (scope, other)


def test_more_projects_than_named_topics_get_distinct_made_up_topics(tmp_path: Path) -> None:
    summary = populate(tmp_path / "state.db", projects=12, messages=2000, seed=1, project_id_column=False)
    topics = list(summary.vocabulary.values())
    assert len(topics) == 12 + 6 + 1  # projects, (projects + 1) // 2 repositories, Home
    assert all(not set(a) & set(b) for i, a in enumerate(topics) for b in topics[i + 1:])
    assert "project_id" not in {r[1] for r in rows(tmp_path / "state.db", "PRAGMA table_info(sessions)")}


def test_the_builders_never_overwrite_a_file(tmp_path: Path) -> None:
    (tmp_path / "state.db").write_text("the user's real store")
    with pytest.raises(FileExistsError):
        build_host_database(tmp_path / "state.db")
    with pytest.raises(FileExistsError):
        populate(tmp_path / "other.db", projects_path=tmp_path / "state.db", messages=100)
    assert (tmp_path / "state.db").read_text() == "the user's real store"
    assert not (tmp_path / "other.db").exists()
    with pytest.raises(ValueError):
        populate(tmp_path / "few.db", sessions=10, messages=19)


def test_the_writer_acts_as_the_host(tmp_path: Path) -> None:
    with build_host_database(tmp_path / "state.db", wal=False, project_id_column=True) as host:
        assert isinstance(host, HostWriter)
        host.add_project("p1", "Alpha", ["/w/a"])
        host.add_folder("p1", "/w/b")
        host.add_session("s1", title="t", cwd="/w/a", git_repo_root="/w/a")
        first, second = host.add_messages("s1", [("user", "one"), ("assistant", "two")])
        host.edit_message(first, "one, edited")
        host.delete_message(second)
        host.move_session("s1", cwd="/w/b", project_id="p1")
    assert rows(tmp_path / "state.db", "SELECT id, content FROM messages") == [(first, "one, edited")]
    assert rows(tmp_path / "state.db", "SELECT cwd, git_repo_root, project_id, message_count FROM sessions") == [
        ("/w/b", None, "p1", 2)]
    assert rows(tmp_path / "state.db", "PRAGMA journal_mode") == [("delete",)]
    # Timestamps come from a clock that advances one second per row written: reproducible.
    stamps = [r[0] for r in rows(tmp_path / "state.db", "SELECT timestamp FROM messages")]
    assert stamps == [EPOCH + 4]  # after the project, its folder, the session and nothing else
    with build_host_database(tmp_path / "plain.db") as plain:
        with pytest.raises(ValueError, match="project_id"):
            plain.add_session("s1", project_id="p1")


def test_the_command_line_builds_and_prints_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "state.db"
    assert main([str(target), "--projects-db", str(tmp_path / "projects.db"), "--messages", "800"]) == 0
    out = capsys.readouterr().out
    assert "20 sessions, 800 messages" in out and "5 projects" in out
    assert f"database: {target}" in out and f"projects_database: {tmp_path / 'projects.db'}" in out
    assert rows(target, "SELECT count(*) FROM messages") == [(800,)]
    assert main([str(target), "--messages", "800"]) == 1
    assert "exists" in capsys.readouterr().err


def test_the_command_line_creates_the_database_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial: the README's `~/hermes-try/state.db` on a machine without that folder gave a traceback.
    target, projects = tmp_path / "new" / "state.db", tmp_path / "other" / "projects.db"
    assert main([str(target), "--projects-db", str(projects), "--messages", "800"]) == 0
    assert rows(target, "SELECT count(*) FROM messages") == [(800,)] and projects.exists()
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    assert main([str(blocked / "state.db"), "--messages", "800"]) == 1
    assert "error:" in capsys.readouterr().err


def test_base_puts_the_folders_under_it_and_creates_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_workspace.adapters.filesystem_probe import git_root
    from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory

    base = tmp_path / "dev"
    assert main([str(tmp_path / "state.db"), "--messages", "800", "--base", str(base)]) == 0
    with SqliteSessionHistory(tmp_path / "state.db") as history:
        folders = [f for p in history.projects() for f in p.folders]
        locations = {s.cwd for s in history.sessions() if s.cwd}
    assert folders and all(f.startswith(f"{base}/") and Path(f).is_dir() for f in folders)
    assert all(loc.startswith(f"{base}/") for loc in locations)
    repos = sorted(p for p in (base / "oss").iterdir())
    assert repos and all(git_root(repo / "lib") == repo for repo in repos)
    assert (base / "scratch").is_dir() and f"{base}/scratch" in locations
    assert f"folders created under {base}" in capsys.readouterr().out


def test_move_acts_as_the_host_moving_a_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory
    from hermes_workspace.domain.history import ProjectFolders, session_scope

    database, projects = tmp_path / "state.db", tmp_path / "projects.db"
    base = tmp_path / "dev"
    assert main([str(database), "--projects-db", str(projects), "--messages", "800", "--base", str(base)]) == 0
    with SqliteSessionHistory(database, projects) as history:
        folders = ProjectFolders(history.projects())
        target = sorted(folders.projects.values(), key=lambda p: p.id)[0]
        session = next(s for s in history.sessions() if session_scope(folders, s).id != target.id)
    assert main([str(database), "--projects-db", str(projects), "--move", session.id,
                 "--to", f"{target.folders[0]}/src"]) == 0
    assert f"(project: {target.id})" in capsys.readouterr().out
    with SqliteSessionHistory(database, projects) as history:
        moved = next(s for s in history.sessions() if s.id == session.id)
    assert (moved.cwd, moved.git_root, moved.project_id) == (f"{target.folders[0]}/src", target.folders[0], target.id)
    assert main([str(database), "--move", "no-such-session", "--to", str(base)]) == 1
    # To a folder of no project and no repository: no git root is recorded, the session is in no project.
    assert main([str(database), "--projects-db", str(projects), "--move", session.id, "--to", str(base / "scratch")]) == 0
    with SqliteSessionHistory(database, projects) as history:
        moved = next(s for s in history.sessions() if s.id == session.id)
        scope = session_scope(ProjectFolders(history.projects()), moved)
    assert (moved.git_root, moved.project_id, scope.kind) == (None, None, "home")
