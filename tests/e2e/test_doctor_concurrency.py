"""``doctor`` while an index run writes: no false corruption from a long-lived connection, one
snapshot for every check of a run, and ``incomplete`` (not ``failed``) for what a run in
progress explains. The writer's commits are interleaved at fixed points (an exec trace hook),
so these tests do not depend on timing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.application.catalog import Doctor
from hermes_workspace.domain.errors import StoreError
from tests.store_files import make_file

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def _paragraphs(n: int, salt: int) -> list[str]:
    return [" ".join(WORDS[(i + j + salt) % len(WORDS)] + str(i + salt) for j in range(8)) for i in range(n)]


def _fill(writer: SqliteFts5Store, files: int, *, salt: int = 0) -> None:
    for i in range(files):
        record, chunks = make_file(f"/ws/f{i:03}.md", _paragraphs(4, salt + i), content_hash=f"h{salt}-{i}")
        writer.replace_file(record, chunks)


@pytest.fixture
def index_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / ".index" / "workspace.sqlite"
    with SqliteFts5Store(path) as writer:
        _fill(writer, 40)  # one transaction per file: one FTS5 segment each, merged as they come
    yield path


def statuses(checks) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.name: c.status for c in checks}


# -- the cause: FTS5's structure cache on a long-lived connection ---------------------------------


def test_a_long_lived_store_sees_no_corruption_after_another_connection_merged_the_fts_segments(
    index_file: Path,
) -> None:
    """The tester's MCP server keeps one read-only store per thread. Its first check cached the
    FTS5 structure; an index run then replaced every file and merged the segments, deleting the
    pages that structure names. ``PRAGMA integrity_check`` on the old connection reported "fts5:
    corruption found reading blob ..." for this sound index."""
    with SqliteFts5Store(index_file, readonly=True) as reader:
        assert statuses(reader.check_integrity())["sqlite_integrity"] == "passed"
        with SqliteFts5Store(index_file) as writer:
            _fill(writer, 40, salt=100)
            writer._conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")  # type: ignore[union-attr]
        checks = reader.check_integrity()
        assert statuses(checks) == {"sqlite_integrity": "passed", "fulltext_index": "passed",
                                    "schema_version": "passed"}, [c.detail for c in checks]
        # The store's own connection still searches after the snapshot connection is gone.
        assert reader.status().chunks == 160


# -- one snapshot per doctor run ------------------------------------------------------------------


@pytest.fixture
def interleave() -> Iterator[Callable[[str, Callable[[], None]], None]]:
    """``interleave(sql, commit)``: run ``commit`` once, just before the first statement whose
    text is ``sql`` starts on any connection opened from now on (apsw.connection_hooks)."""
    pending: list[tuple[str, Callable[[], None]]] = []

    def tracer(_cursor: apsw.Cursor, sql: str, _bindings: object) -> bool:
        for item in list(pending):
            if sql.strip() == item[0]:
                pending.remove(item)
                item[1]()
        return True

    def hook(conn: apsw.Connection) -> None:
        conn.exec_trace = tracer

    apsw.connection_hooks.append(hook)
    try:
        yield lambda sql, commit: pending.append((sql, commit))
    finally:
        apsw.connection_hooks.remove(hook)


def test_every_check_of_one_doctor_run_reads_one_snapshot(
    index_file: Path, interleave: Callable[[str, Callable[[], None]], None]
) -> None:
    """A writer commits 5 more files (20 chunks) between the first and the second statement of
    the full-text check. Read in autocommit, the check counted 160 chunks but 180 FTS rows, and
    the drift sample read 45 files; in one snapshot everything sees the 40 files of its start."""
    writer = SqliteFts5Store(index_file)  # opened before the hook: its own statements are not traced

    def commit() -> None:
        for i in range(5):
            record, chunks = make_file(f"/ws/new{i}.md", _paragraphs(4, 500 + i))
            writer.replace_file(record, chunks)

    reader = SqliteFts5Store(index_file, readonly=True)
    interleave("SELECT count(*) FROM chunks_fts", commit)
    try:
        report = Doctor(index_file, open_store=lambda: reader).execute()
    finally:
        reader.close()
        writer.close()
    fulltext = report.check("fulltext_index")
    assert (fulltext.data["chunks"], fulltext.data["fts_rows"]) == (160, 160)
    assert report.check("drift").data["total"] == 40
    assert report.check("sqlite_integrity").status == "passed"


def test_doctor_follows_an_index_file_deleted_since_the_workspace_opened_it(home: Path) -> None:
    (home / "workspace").mkdir()
    (home / "workspace" / "a.md").write_text("# A\n\nthe rollback controller\n")
    with Workspace.open(home) as ws:
        ws.index()
        assert ws.doctor().ok
        for suffix in ("", "-wal", "-shm"):
            Path(f"{ws.index_path}{suffix}").unlink(missing_ok=True)
        report = ws.doctor()
    assert statuses(report.checks)["sqlite_integrity"] == "incomplete"
    assert report.check("sqlite_integrity").detail.startswith("nothing is indexed yet")


def test_an_index_file_without_its_schema_yet_is_failed_alone_and_incomplete_mid_run(index_file: Path) -> None:
    """What a long-lived store sees when an index run has just created the file anew and not yet
    committed its schema."""
    reader = SqliteFts5Store(index_file, readonly=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_file}{suffix}").unlink(missing_ok=True)
    apsw.Connection(str(index_file)).close()  # an empty database file
    try:
        alone = Doctor(index_file, open_store=lambda: reader, lock_probe=lambda: (False, None)).execute()
        mid_run = Doctor(index_file, open_store=lambda: reader, lock_probe=lambda: (True, 4242)).execute()
    finally:
        reader.close()
    assert alone.check("sqlite_integrity").status == "failed"
    assert "no index schema" in alone.check("sqlite_integrity").detail
    check = mid_run.check("sqlite_integrity")
    assert (check.status, check.data["index_run_in_progress"]) == ("incomplete", True)
    assert check.detail.startswith("an index run (process 4242) is in progress")
    assert mid_run.ok


# -- what an index run in progress explains --------------------------------------------------------


def _unopenable() -> InMemoryIndexStore:
    raise StoreError("the index database x stayed locked for more than 10000 ms while trying to open")


@pytest.mark.parametrize(("probe", "status"), [
    ((True, 77), "incomplete"),
    ((False, None), "failed"),
    ((None, None), "failed"),  # cannot tell: not excused
])
def test_an_index_that_cannot_be_opened_is_incomplete_only_while_a_run_holds_the_lock(
    tmp_path: Path, probe: tuple[bool | None, int | None], status: str
) -> None:
    report = Doctor(tmp_path / "x", open_store=_unopenable, lock_probe=lambda: probe).execute()
    assert report.check("sqlite_integrity").status == status
    assert report.ok is (status == "incomplete")


def test_a_lock_taken_during_the_checks_counts_too(tmp_path: Path) -> None:
    probes = iter([(False, 12), (True, 99)])
    report = Doctor(tmp_path / "x", open_store=_unopenable, lock_probe=lambda: next(probes)).execute()
    assert report.check("sqlite_integrity").status == "incomplete"
    assert report.check("lock").data == {"held": True, "pid": 99}


def test_drift_mid_run_is_incomplete_but_a_damaged_index_still_fails(tmp_path: Path) -> None:
    store = InMemoryIndexStore()
    record, chunks = make_file(tmp_path / "gone.md", ["alpha"], root=tmp_path)  # not on disk: drift
    store.replace_file(record, chunks)
    damaged = [*store.check_integrity()]
    damaged[1] = type(damaged[1])("fulltext_index", "failed", "3 chunks are not searchable")
    store.check_integrity = lambda: damaged  # type: ignore[method-assign]
    report = Doctor(tmp_path / "x", open_store=lambda: store, lock_probe=lambda: (True, 5)).execute()
    assert statuses(report.checks)["drift"] == "incomplete"
    assert report.check("drift").data["missing"] == 1
    assert statuses(report.checks)["fulltext_index"] == "failed"
    quiet = Doctor(tmp_path / "x", open_store=lambda: store, lock_probe=lambda: (False, None)).execute()
    assert statuses(quiet.checks)["drift"] == "failed"
