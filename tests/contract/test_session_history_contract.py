"""Contract of SessionHistory (issue 13): the fake InMemorySessionHistory (the reference
semantics) and SqliteSessionHistory over a host store built with HostWriter, loaded with the same
history: WAL and rollback-journal files, the registry in the same file or in its own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemorySessionHistory
from hermes_workspace.adapters.sqlite_session_history import SqliteSessionHistory
from hermes_workspace.domain.history import HostMessage, HostProject, HostSession, SessionStat
from hermes_workspace.domain.ports import SessionHistory
from hermes_workspace.testing.host_history import build_host_database

PROJECTS = [
    HostProject("p_alpha", "Alpha", ("/w/alpha", "/w/alpha-docs")),
    HostProject("p_beta", "Beta", ("/w/beta",)),
    HostProject("p_empty", "Empty", ()),
]
SESSIONS = [
    HostSession("20260901_143022_a1b2", "Alpha parser", 1788000000.5, "/w/alpha", "/w/alpha", None),
    HostSession("20260902_090000_c3d4", "Beta moved", 1788090000.0, "/w/alpha/src", None, "p_beta"),
    HostSession("20260903_120000_e5f6", None, 1788180000.0, None, None, None),
    HostSession("20260904_080000_0000", "No messages yet", 1788260000.0, "/w/beta", "/w/beta", None),
]
A, B, HOME = (s.id for s in SESSIONS[:3])

# (session, role, stored content, content as read): messages of A and B interleave, as a host
# writing two sessions at once stores them. None is NULL (a turn that only calls tools); bytes a
# BLOB, decoded as UTF-8 with invalid bytes replaced.
WRITES: list[tuple[str, str, str | bytes | None, str]] = [
    (A, "system", "You are Hermes.", "You are Hermes."),
    (A, "user", "Why does the lexer fail on tabs?", "Why does the lexer fail on tabs?"),
    (B, "user", "Plan the beta release", "Plan the beta release"),
    (A, "assistant", "The lexer treats a tab as two spaces.", "The lexer treats a tab as two spaces."),
    (A, "assistant", None, ""),
    (B, "assistant", "Release plan: freeze, tag, ship. 完成", "Release plan: freeze, tag, ship. 完成"),
    (A, "tool", '{"exit_code": 1}', '{"exit_code": 1}'),
    (A, "user", "caf\u00e9 again", "caf\u00e9 again"),
    (HOME, "user", "caf\u00e9 ok ".encode() + b"\xff\xfe", "caf\u00e9 ok \ufffd\ufffd"),
    (A, "assistant", "Fixed: tabs are expanded before lexing.", "Fixed: tabs are expanded before lexing."),
    (A, "user", "Thanks", "Thanks"),
]
DELETED = 6  # the position in WRITES of the message the host deletes (A's tool output)


@dataclass
class Loaded:
    history: SessionHistory
    ids: list[int]  # message id of each WRITES entry
    deleted_id: int

    def message(self, index: int) -> HostMessage:
        session, role, _, text = WRITES[index]
        return HostMessage(self.ids[index], session, role, text, 1788300000.0 + index)

    def of(self, session: str, roles: tuple[str, ...] = ()) -> list[HostMessage]:
        return [self.message(i) for i, w in enumerate(WRITES)
                if w[0] == session and i != DELETED and (not roles or w[1] in roles)]


def _load_sqlite(tmp_path: Path, kind: str) -> tuple[SessionHistory, list[int]]:
    database = tmp_path / "state.db"
    projects_db = tmp_path / "projects.db" if kind == "sqlite-projects-db" else None
    with build_host_database(database, projects_path=projects_db, wal=kind != "sqlite-rollback",
                             project_id_column=True) as host:
        for project in PROJECTS:
            host.add_project(project.id, project.name, project.folders)
        for s in SESSIONS:
            host.add_session(s.id, title=s.title, started_at=s.started_at, cwd=s.cwd, git_repo_root=s.git_root,
                             project_id=s.project_id)
        ids = [host.add_message(session, role, stored, timestamp=1788300000.0 + i)
               for i, (session, role, stored, _) in enumerate(WRITES)]
        host.delete_message(ids[DELETED])
    return SqliteSessionHistory(database, projects_db), ids


@pytest.fixture(params=["memory", "sqlite-wal", "sqlite-rollback", "sqlite-projects-db"])
def loaded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Loaded]:
    if request.param == "memory":
        ids = list(range(1, len(WRITES) + 1))
        rows = [HostMessage(ids[i], w[0], w[1], w[3], 1788300000.0 + i) for i, w in enumerate(WRITES) if i != DELETED]
        history: SessionHistory = InMemorySessionHistory(PROJECTS, SESSIONS, reversed(rows))
    else:
        history, ids = _load_sqlite(tmp_path, request.param)
    assert isinstance(history, SessionHistory)
    yield Loaded(history, ids, ids[DELETED])
    history.close()
    history.close()  # idempotent


def test_projects_with_their_folders(loaded: Loaded) -> None:
    assert sorted(loaded.history.projects(), key=lambda p: p.id) == PROJECTS


def test_sessions_as_the_host_holds_them(loaded: Loaded) -> None:
    assert sorted(loaded.history.sessions(), key=lambda s: s.id) == SESSIONS


def test_session_stats_count_the_messages_of_the_roles_asked(loaded: Loaded) -> None:
    def stat(session: str, roles: tuple[str, ...]) -> tuple[int, int]:
        rows = loaded.of(session, roles)
        return len(rows), max(m.id for m in rows)

    def counted(roles: tuple[str, ...]) -> dict[str, tuple[int, int]]:
        # The size is the store's own cheap measure (characters or bytes): compared only with itself.
        return {s: (st.messages, st.last_id) for s, st in loaded.history.session_stats(roles).items()}

    assert counted(()) == {s: stat(s, ()) for s in (A, B, HOME)}
    chat = ("user", "assistant")
    assert counted(chat) == {s: stat(s, chat) for s in (A, B, HOME)}
    assert all(st.chars > 0 for st in loaded.history.session_stats(()).values())
    assert loaded.history.session_stats(("tool",)) == {}  # the only tool message was deleted
    assert loaded.history.session_stats(("nobody",)) == {}
    # Exact values, not only agreement with the helper: A keeps 7 messages, 6 of them chat.
    assert loaded.history.session_stats(())[A].messages == 7
    assert loaded.history.session_stats(chat)[A].messages == 6
    home = loaded.history.session_stats(())[HOME]
    assert (home.messages, home.last_id) == (1, loaded.ids[8])


def test_messages_by_increasing_id_with_the_role_filter(loaded: Loaded) -> None:
    everything = loaded.history.messages(A, ())
    assert everything == loaded.of(A)
    assert [m.id for m in everything] == sorted(m.id for m in everything)
    assert [m.role for m in everything] == ["system", "user", "assistant", "assistant", "user", "assistant", "user"]
    assert loaded.history.messages(A, ("user",)) == loaded.of(A, ("user",))
    assert loaded.history.messages(B, ("user", "assistant")) == loaded.of(B)
    assert loaded.history.messages("no-such-session", ()) == []
    assert loaded.history.messages(SESSIONS[3].id, ()) == []


def test_null_and_binary_content_read_as_text(loaded: Loaded) -> None:
    assert loaded.history.messages(A, ("assistant",))[1].content == ""  # NULL: a tool-call turn
    assert loaded.history.messages(HOME, ())[0].content == "caf\u00e9 ok \ufffd\ufffd"
    assert loaded.history.messages(B, ())[1].content.endswith("完成")


def test_window_in_the_middle_and_at_the_edges(loaded: Loaded) -> None:
    a = loaded.of(A)  # 7 messages of A, by id
    history = loaded.history
    assert history.window(A, a[3].id, 2, 2) == a[1:6]
    assert history.window(A, a[0].id, 2, 1) == a[0:2]  # nothing before the first
    assert history.window(A, a[-1].id, 1, 5) == a[-2:]  # nothing after the last
    assert history.window(A, a[3].id, 0, 0) == [a[3]]
    assert history.window(A, a[3].id, 0, 1) == a[3:5]
    assert history.window(A, a[3].id, -1, -1) == [a[3]]
    assert history.window(A, a[3].id, 10**30, 0) == a[:4]
    # Any role: the system prompt is a neighbour too.
    assert history.window(A, a[1].id, 1, 1) == a[0:3]


def test_window_skips_neighbours_without_text_but_keeps_the_message_itself(loaded: Loaded) -> None:
    """Trial finding: a tool-call turn (NULL content) came back as a neighbour with ``text: ""``;
    neighbours are the nearest messages with text, as many as asked for where the session has them."""
    a = loaded.of(A)  # a[3] is the NULL-content assistant turn
    history = loaded.history
    assert a[3].content == ""
    assert history.window(A, a[2].id, 0, 1) == [a[2], a[4]]
    assert history.window(A, a[4].id, 2, 0) == [a[1], a[2], a[4]]
    assert history.window(A, a[2].id, 1, 2) == [a[1], a[2], a[4], a[5]]
    assert history.window(A, a[3].id, 1, 1) == a[2:5]  # asked about it: the empty message itself is returned
    assert history.window(A, a[2].id, 0, 1, ("assistant",)) == [a[2], a[5]]


def test_window_with_roles_skips_other_neighbours_but_keeps_the_message_itself(loaded: Loaded) -> None:
    a = loaded.of(A)  # roles: system, user, assistant, assistant, user, assistant, user
    history = loaded.history
    users = [m for m in a if m.role == "user"]
    assert history.window(A, a[3].id, 1, 1, ("user",)) == [users[0], a[3], users[1]]
    assert history.window(A, a[1].id, 5, 0, ("user", "assistant")) == [a[1]]  # the system prompt is left out
    assert history.window(A, a[0].id, 0, 0, ("user",)) == [a[0]]  # a system message hit is still returned


def test_window_of_a_deleted_or_foreign_message_has_only_the_neighbours(loaded: Loaded) -> None:
    a = loaded.of(A)
    after_deleted = [m for m in a if m.id > loaded.deleted_id]
    before_deleted = [m for m in a if m.id < loaded.deleted_id]
    with_text = [m for m in before_deleted if m.content]  # the one just before is a NULL-content turn
    assert loaded.history.window(A, loaded.deleted_id, 1, 1) == [with_text[-1], after_deleted[0]]
    # B's message id inside A's id range: A's neighbours of that position, never B's message.
    b_id = loaded.of(B)[0].id
    window = loaded.history.window(A, b_id, 1, 1)
    assert [m.session_id for m in window] == [A, A]
    assert [m.id for m in window] == [max(m.id for m in a if m.id < b_id), min(m.id for m in a if m.id > b_id)]
    assert loaded.history.window("no-such-session", a[0].id, 3, 3) == []


def test_integer_session_ids_are_read_as_text(tmp_path: Path) -> None:
    """A host whose session ids are INTEGER: the reader returns them as text, and finds the
    session from that text, as the fake holding text ids does."""
    database = tmp_path / "state.db"
    with build_host_database(database, integer_ids=True) as host:
        host.add_session(7, title="seven", started_at=1.0, cwd="/w/alpha")
        first = host.add_message(7, "user", "hello", timestamp=2.0)
        second = host.add_message(7, "assistant", "hi", timestamp=3.0)
    expected = [HostMessage(first, "7", "user", "hello", 2.0), HostMessage(second, "7", "assistant", "hi", 3.0)]
    fake = InMemorySessionHistory([], [HostSession("7", "seven", 1.0, "/w/alpha")], expected)
    with SqliteSessionHistory(database) as real:
        for history in (fake, real):
            assert history.sessions() == [HostSession("7", "seven", 1.0, "/w/alpha")]
            assert history.session_stats(()) == {"7": SessionStat(2, second, 7)}  # ASCII: 7 either way
            assert history.messages("7", ()) == expected
            assert history.window("7", second, 1, 0) == expected
            assert history.messages("07", ()) == []  # another text, another id


def test_window_skips_whitespace_only_neighbours_as_str_strip_does(tmp_path: Path) -> None:
    """Blank is what ``str.strip`` removes, Unicode spaces included, the same in the store and
    in the fake; a character that only looks empty (a zero-width space) is text."""
    contents = ["first question", "", "  \n\t ", "\u3000\u00a0\u2029", None, "\u200b", "last answer"]
    database = tmp_path / "state.db"
    with build_host_database(database) as host:
        host.add_session("s1", cwd="/w/alpha")
        ids = [host.add_message("s1", "assistant", text, timestamp=float(i)) for i, text in enumerate(contents)]
    rows = [HostMessage(ids[i], "s1", "assistant", text or "", float(i)) for i, text in enumerate(contents)]
    fake = InMemorySessionHistory([], [HostSession("s1", cwd="/w/alpha")], rows)
    with SqliteSessionHistory(database) as real:
        for history in (fake, real):
            assert history.window("s1", ids[0], 0, 2) == [rows[0], rows[5], rows[6]]
            assert history.window("s1", ids[6], 1, 0) == [rows[5], rows[6]]
            assert history.window("s1", ids[5], 5, 0) == [rows[0], rows[5]]
            assert history.window("s1", ids[2], 0, 0) == [rows[2]]
