"""SqliteHistoryIndex specifics (the shared behaviour is in tests/contract/test_history_index_contract.py):
persistence, large session filters, the keyword side's text handling (as the workspace store's),
the three ways of computing a vector search, and database failures translated into StoreError."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from hermes_workspace.adapters.sqlite_history_index import SCHEMA_VERSION, VECTOR_MATH, SqliteHistoryIndex
from hermes_workspace.domain.errors import EmbedderUnavailableError, StoreError, StoreUnusableError
from hermes_workspace.domain.history import MessageChunk, SessionStat, content_hash
from hermes_workspace.domain.query import parse_query
from hermes_workspace.domain.semantic import unit
from tests.e2e.test_readonly_home import _without_write_permission
from tests.store_files import integrity

SIG = "test:model"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "plugins" / "project-history-recall" / "embeddings.db"


@pytest.fixture
def index(db_path: Path) -> Iterator[SqliteHistoryIndex]:
    with SqliteHistoryIndex(db_path) as opened:
        yield opened


def chunk(session_id: str, message_id: int, content: str, offset: int = 0, **kw: object) -> MessageChunk:
    return MessageChunk(session_id, message_id, offset, content, content_hash(content), **kw)  # type: ignore[arg-type]


def put(index: SqliteHistoryIndex, session_id: str, chunks: list[MessageChunk]) -> None:
    index.replace_session(session_id, SessionStat(len(chunks), len(chunks), sum(len(c.content) for c in chunks)),
                          chunks)


FILLER = ["lorem ipsum dolor sit amet", "consectetur adipiscing elit sed", "tempor incididunt ut labore",
          "magna aliqua enim minim", "veniam quis nostrud exercitation", "ullamco laboris nisi aliquip"]
"""Unrelated messages, so that query terms are rare enough for a positive BM25 IDF."""


def add_filler(index: SqliteHistoryIndex) -> None:
    put(index, "filler", [chunk("filler", i, text) for i, text in enumerate(FILLER)])


def found(index: SqliteHistoryIndex, text: str, sessions: list[str], limit: int = 10) -> list[tuple[str, int]]:
    return [(m.session_id, m.message_id) for m in index.keyword_search(parse_query(text), sessions, limit)]


def raw(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.set_busy_timeout(5_000)
    return conn


# -- file, schema, persistence ------------------------------------------------------------------


def test_creates_its_folder_in_wal_mode_with_the_schema_version(db_path: Path, index: SqliteHistoryIndex) -> None:
    assert db_path.is_file()
    conn = raw(db_path)
    try:
        assert conn.pragma("journal_mode") == "wal"
        assert conn.execute("SELECT value FROM meta WHERE key = 'history_schema_version'").fetchone() == (
            str(SCHEMA_VERSION),)
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        assert {"meta", "sessions", "chunks", "chunks_fts", "vectors"} <= tables
    finally:
        conn.close()


def test_everything_persists_across_a_reopen(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path) as index:
        index.reset("host:v1")
        add_filler(index)
        parts = [chunk("s1", 4, "deploy the release", role="user", timestamp=1_700_000_123),
                 chunk("s1", 5, "rollback done", role="assistant", timestamp="2026-09-01 14:30")]
        put(index, "s1", parts)
        index.add_vectors(SIG, [(parts[0], unit([1, 0])), (parts[1], None)])
    with SqliteHistoryIndex(db_path) as index:
        assert index.source == "host:v1"
        assert index.session_stats()["s1"] == SessionStat(2, 2, len("deploy the release") + len("rollback done"))
        assert index.counts() == {"sessions": 2, "messages": 8, "chunks": 8, "vectors": 1}
        (hit,) = index.keyword_search(parse_query("rollback"), ["s1"], 5)
        assert (hit.message_id, hit.role, hit.timestamp) == (5, "assistant", "2026-09-01 14:30")
        (near,) = index.vector_search(SIG, unit([1, 0]), ["s1"], 5)
        assert (near.message_id, near.timestamp) == (4, 1_700_000_123)
        assert index.pending(SIG, ["s1"], 5) == []


def test_an_older_schema_is_rebuilt_empty(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path) as index:
        index.reset("host:v1")
        put(index, "s", [chunk("s", 1, "kept until the upgrade")])
    conn = raw(db_path)
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'history_schema_version'")
    conn.close()
    with SqliteHistoryIndex(db_path) as index:
        assert index.source is None  # the use case resets and reads the host again
        assert index.counts() == {"sessions": 0, "messages": 0, "chunks": 0, "vectors": 0}


def test_a_newer_schema_is_refused(db_path: Path) -> None:
    SqliteHistoryIndex(db_path).close()
    conn = raw(db_path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'history_schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.close()
    with pytest.raises(StoreError) as info:
        SqliteHistoryIndex(db_path)
    assert "newer" in info.value.message and str(db_path) in info.value.hint


def test_another_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    conn = raw(path)
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT)")
    conn.close()
    with pytest.raises(StoreError) as info:
        SqliteHistoryIndex(path)
    assert "not a hermes-workspace history index" in info.value.message
    conn = raw(path)
    assert {n for (n,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")} == {"messages"}
    conn.close()


def test_a_damaged_file_says_how_to_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.db"
    path.write_bytes(b"this is not a database" * 200)
    with pytest.raises(StoreUnusableError) as info:
        SqliteHistoryIndex(path)
    assert "damaged or not a SQLite database" in info.value.message
    assert f"Delete {path}" in info.value.hint and "rebuilds" in info.value.hint


def test_a_folder_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreUnusableError) as info:
        SqliteHistoryIndex(tmp_path / "file" / "embeddings.db")
    assert "cannot open" in info.value.message and str(tmp_path / "file") in info.value.message


def test_an_unknown_vector_math_is_refused(db_path: Path) -> None:
    with pytest.raises(ValueError, match="vector_math"):
        SqliteHistoryIndex(db_path, vector_math="faiss")  # type: ignore[arg-type]


def test_closed_index_raises_store_unusable(index: SqliteHistoryIndex) -> None:
    index.close()
    with pytest.raises(StoreUnusableError) as info:
        index.counts()
    assert "history index" in info.value.message and "closed" in info.value.message


# -- keyword side: the workspace store's text handling ---------------------------------------


def test_chinese_words_are_found_inside_longer_runs(index: SqliteHistoryIndex) -> None:
    add_filler(index)
    put(index, "zh", [chunk("zh", 1, "数据库连接失败，需要检查配置"), chunk("zh", 2, "我们把数据表重新建了一遍"),
                      chunk("zh", 3, "部署完成")])
    assert found(index, "数据库", ["zh"]) == [("zh", 1)]
    assert found(index, "连接", ["zh"]) == [("zh", 1)]
    assert found(index, "数据", ["zh"]) == [("zh", 1), ("zh", 2)]  # eleven bigrams each: a tie, in key order
    assert found(index, "检查配置失败", ["zh"]) == [("zh", 1)]  # a long run: any of its bigrams
    assert found(index, "数据仓库", ["zh"]) == []  # four characters: the phrase is required


def test_compounds_stop_words_stemming_and_arabic_match_as_in_the_workspace(index: SqliteHistoryIndex) -> None:
    add_filler(index)
    put(index, "s", [chunk("s", 1, "the hermes agent restarted"), chunk("s", 2, "hermes and the agent"),
                     chunk("s", 3, "Deploying releases nightly"), chunk("s", 4, "قرأت الكتاب أمس")])
    assert found(index, "hermes-agent", ["s"]) == [("s", 1), ("s", 2)]  # adjacent parts first
    assert found(index, "what is the deploy", ["s"]) == [("s", 3)]  # stop words dropped, stems match
    assert found(index, "كتاب", ["s"]) == [("s", 4)]
    assert found(index, 'NOT "section:" release*', ["s"]) == [("s", 3)]  # no FTS5 syntax leaks


def test_a_filter_of_thousands_of_sessions(index: SqliteHistoryIndex) -> None:
    add_filler(index)
    items = []
    for i in range(300):
        first = chunk(f"s{i:05d}", 1, f"timeout in job {i}")
        put(index, f"s{i:05d}", [first, chunk(f"s{i:05d}", 2, "all good")])
        items.append((first, unit([1, i / 300])))
    index.add_vectors(SIG, items)
    scope = [f"s{i:05d}" for i in range(0, 300, 3)] + [f"missing-{i}" for i in range(5000)]
    hits = index.keyword_search(parse_query("timeout"), scope, 1000)
    assert sorted(m.session_id for m in hits) == sorted(f"s{i:05d}" for i in range(0, 300, 3))
    near = index.vector_search(SIG, unit([1, 0]), scope, 1000)
    assert [m.session_id for m in near] == [f"s{i:05d}" for i in range(0, 300, 3)]  # nearest: smallest i
    assert index.vector_counts(SIG, scope) == (100, 200)
    assert len(index.pending(SIG, scope, 1000)) == 100


def test_session_ids_are_parameters_never_sql(index: SqliteHistoryIndex) -> None:
    odd = ["x') OR 1=1 --", 'quote"d', "日本語", "a,b", "%", "_"]
    for session_id in odd:
        put(index, session_id, [chunk(session_id, 1, f"needle in {session_id}")])
    for session_id in odd:
        assert found(index, "needle", [session_id]) == [(session_id, 1)]
    assert index.delete_sessions([odd[0]]) == 1
    assert sorted(found(index, "needle", odd)) == sorted((s, 1) for s in odd[1:])


def test_unchanged_chunks_keep_their_rows_and_fulltext_entries(db_path: Path, index: SqliteHistoryIndex) -> None:
    add_filler(index)
    first = [chunk("s", 1, "first message"), chunk("s", 2, "second message")]
    put(index, "s", first)
    conn = raw(db_path)
    try:
        before = dict(conn.execute("SELECT message_id, id FROM chunks WHERE session_id = 's'").fetchall())
        put(index, "s", [first[0], chunk("s", 2, "second message, edited"), chunk("s", 3, "third message")])
        after = dict(conn.execute("SELECT message_id, id FROM chunks WHERE session_id = 's'").fetchall())
        assert after[1] == before[1] and set(after) == {1, 2, 3}
        # the contentless FTS table holds exactly one row per chunk
        assert conn.execute("SELECT count(*) FROM chunks_fts").fetchone() == conn.execute(
            "SELECT count(*) FROM chunks").fetchone()
        index.delete_sessions(["s"])
        assert conn.execute("SELECT count(*) FROM chunks_fts").fetchone() == (len(FILLER),)
    finally:
        conn.close()
    assert found(index, "edited", ["s"]) == []


def test_text_with_lone_surrogates_round_trips(index: SqliteHistoryIndex) -> None:
    add_filler(index)
    text = "bad byte \udcff inside a message"
    put(index, "s", [chunk("s", 1, text, role="user")])
    (hit,) = index.keyword_search(parse_query("inside"), ["s"], 5)
    assert hit.content == text
    (job,) = index.pending(SIG, ["s"], 5)
    assert job.content == text and job.content_hash == content_hash(text)
    put(index, "s", [chunk("s", 1, text, role="user")])  # unchanged: nothing pending again
    index.add_vectors(SIG, [(job, unit([1, 0]))])
    assert index.pending(SIG, ["s"], 5) == []


def test_a_session_id_that_is_not_unicode_fails_that_session_only(index: SqliteHistoryIndex) -> None:
    bad = "s\udcff"
    with pytest.raises(StoreError) as info:
        put(index, bad, [chunk(bad, 1, "text")])
    assert not isinstance(info.value, StoreUnusableError)
    assert "not valid Unicode" in info.value.message
    assert index.keyword_search(parse_query("text"), [bad, "other"], 5) == []
    put(index, "good", [chunk("good", 1, "text")])
    assert found(index, "text", [bad, "good"]) == [("good", 1)]


# -- vector side ------------------------------------------------------------------------------


def available_math() -> list[str]:
    """The ways of computing a vector search installed here (pure Python always is)."""
    return ["python"] + [way for way, module in (("numpy", "numpy"), ("sqlite-vec", "sqlite_vec"))
                         if importlib.util.find_spec(module) is not None]


def test_auto_picks_the_first_available_way(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path) as index:
        assert index.vector_math == next(m for m in VECTOR_MATH if m in available_math())


def test_every_way_of_computing_gives_the_same_ranking(db_path: Path) -> None:
    rng = random.Random(13)
    with SqliteHistoryIndex(db_path, vector_math="python") as index:
        items = []
        for s in range(40):
            chunks = [chunk(f"s{s:02d}", m, f"message {m} of {s}") for m in range(25)]
            put(index, f"s{s:02d}", chunks)
            items += [(c, unit([rng.gauss(0, 1) for _ in range(64)])) for c in chunks]
        # ties: two chunks with the query's exact vector, in two sessions
        query = unit([rng.gauss(0, 1) for _ in range(64)])
        items[30] = (items[30][0], query)
        items[700] = (items[700][0], query)
        items[5] = (items[5][0], None)
        index.add_vectors(SIG, items)
    scope = [f"s{s:02d}" for s in range(0, 40, 2)] + ["s01", "s27"]  # s01 holds items[30], s28 items[700]
    results = {}
    for way in available_math():
        with SqliteHistoryIndex(db_path, vector_math=way) as index:  # type: ignore[arg-type]
            assert index.vector_math == way
            results[way] = index.vector_search(SIG, query, scope, 50)
    python = results["python"]
    assert len(python) == 50
    assert (python[0].session_id, python[0].message_id) == ("s01", 5)
    assert python[0].score == pytest.approx(1.0, abs=1e-6)
    assert all(m.session_id in scope for m in python)
    assert [m.score for m in python] == sorted((m.score for m in python), reverse=True)
    for way, matches in results.items():
        assert [(m.session_id, m.message_id) for m in matches] == [(m.session_id, m.message_id) for m in python], way
        assert [m.score for m in matches] == pytest.approx([m.score for m in python], abs=1e-5), way


def test_equal_scores_are_ordered_by_key_in_every_way(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path) as index:
        chunks = [chunk(s, m, f"{s} {m}") for s in ("b", "a") for m in (2, 1)]
        for s in ("b", "a"):
            put(index, s, [c for c in chunks if c.session_id == s])
        index.add_vectors(SIG, [(c, unit([1, 1])) for c in chunks])
    for way in available_math():
        with SqliteHistoryIndex(db_path, vector_math=way) as index:  # type: ignore[arg-type]
            ranked = index.vector_search(SIG, unit([1, 0]), ["a", "b"], 3)
            assert [(m.session_id, m.message_id) for m in ranked] == [("a", 1), ("a", 2), ("b", 1)], way


def test_asking_for_a_missing_way_is_embedder_unavailable(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)  # import fails
    with pytest.raises(EmbedderUnavailableError) as info:
        SqliteHistoryIndex(db_path, vector_math="sqlite-vec")
    assert "sqlite-vec" in info.value.message
    with SqliteHistoryIndex(db_path) as index:
        assert index.vector_math in ("numpy", "python")


# -- failures ---------------------------------------------------------------------------------


class FullDiskIndex(SqliteHistoryIndex):
    """An index whose file may grow by ``headroom_pages`` pages only (``PRAGMA max_page_count``
    fails writes past them with SQLITE_FULL, as a full disk does)."""

    headroom_pages = 8

    def _open(self, *, create: bool = False) -> apsw.Connection:
        conn = super()._open(create=create)
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        conn.pragma("max_page_count", pages + self.headroom_pages)
        return conn


def test_a_full_disk_is_store_unusable_and_keeps_what_was_committed(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path) as index:
        add_filler(index)
    with FullDiskIndex(db_path) as full:
        with pytest.raises(StoreUnusableError) as info:
            for i in range(1000):
                put(full, f"s{i}", [chunk(f"s{i}", m, " ".join(f"w{i}x{m}x{j}" for j in range(50)))
                                    for m in range(5)])
        stored = full.counts()["sessions"]
    assert isinstance(info.value.__cause__, apsw.FullError)
    assert (info.value.code, info.value.exit_code) == ("store_error", 74)
    assert "is full" in info.value.message and f"store history session s{stored - 1}" in info.value.message
    assert info.value.hint == f"The disk holding {db_path.parent} is full: free space on it."
    assert 1 < stored < 1001
    assert integrity(db_path) == [("ok",)]
    with SqliteHistoryIndex(db_path) as index:
        assert index.counts()["sessions"] == stored
        assert found(index, "w0x0x0", ["s0"]) == [("s0", 0)]


def test_a_second_writer_gives_up_after_the_busy_timeout(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path, busy_timeout_ms=50) as index:
        holder = raw(db_path)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreUnusableError) as info:
                put(index, "s", [chunk("s", 1, "blocked")])
            assert isinstance(info.value.__cause__, apsw.BusyError)
            assert info.value.message.startswith(f"the history index {db_path} stayed locked for more than 50 ms")
            assert "store history session s" in info.value.message
            assert "Another hermes-workspace process" in info.value.hint
            assert found(index, "blocked", ["s"]) == []  # reads go on under WAL
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        put(index, "s", [chunk("s", 1, "unblocked")])
        assert index.counts()["chunks"] == 1


def test_a_second_writer_waits_for_the_first(db_path: Path) -> None:
    SqliteHistoryIndex(db_path).close()
    holder = raw(db_path)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO meta (key, value) VALUES ('other', 'writer')")
    errors: list[BaseException] = []
    started = threading.Event()

    def write() -> None:
        try:
            with SqliteHistoryIndex(db_path, busy_timeout_ms=30_000) as index:
                started.set()
                put(index, "s", [chunk("s", 1, "after the other writer")])
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            errors.append(exc)
            started.set()

    thread = threading.Thread(target=write)
    thread.start()
    thread.join(0.3)  # the writer runs into the lock and must wait, not fail
    holder.execute("COMMIT")
    holder.close()
    thread.join(60)
    assert errors == [] and started.is_set()
    with SqliteHistoryIndex(db_path) as index:
        assert found(index, "writer", ["s"]) == [("s", 1)]


def test_two_objects_on_one_file_see_each_others_commits(db_path: Path) -> None:
    with SqliteHistoryIndex(db_path) as first, SqliteHistoryIndex(db_path) as second:
        put(first, "s", [chunk("s", 1, "written by the server")])
        assert found(second, "server", ["s"]) == [("s", 1)]
        second.reset("host:v2")
        assert first.source == "host:v2" and first.counts()["chunks"] == 0


_OPEN_AND_WRITE = """
import json, sys
from pathlib import Path
from hermes_workspace.adapters.sqlite_history_index import SqliteHistoryIndex
from hermes_workspace.domain.errors import StoreError
from hermes_workspace.domain.history import SessionStat
out = {}
for name in sys.argv[1:]:
    try:
        with SqliteHistoryIndex(Path(name)) as index:
            index.replace_session("s", SessionStat(0, 0, 0), [])
        out[name] = None
    except StoreError as exc:
        out[name] = [type(exc).__name__, exc.message, exc.hint]
print(json.dumps(out))
"""


def test_a_read_only_folder_is_a_clear_store_error(tmp_path: Path) -> None:
    folder = tmp_path / "readonly"
    folder.mkdir()
    existing = folder / "existing.db"
    with SqliteHistoryIndex(existing) as index:
        put(index, "s", [chunk("s", 1, "kept")])
    modes = {p: p.stat().st_mode for p in (folder, existing)}
    try:
        for path, mode in modes.items():
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        proc = subprocess.run(
            _without_write_permission([sys.executable, "-c", _OPEN_AND_WRITE, str(folder / "new.db"), str(existing)]),
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    for name in (str(folder / "new.db"), str(existing)):
        kind, message, hint = result[name]
        assert kind == "StoreUnusableError", result
        assert message.startswith("cannot ") and name in message
        assert str(folder) in hint and "writable" in hint
