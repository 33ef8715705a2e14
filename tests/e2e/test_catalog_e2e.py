"""list, delete (tombstones), doctor and the extended status, through the Python API and the CLI,
with every real adapter."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.domain.errors import IndexBusyError, NotIndexedError, RootOverlapError, UsageError
from hermes_workspace.entrypoints.cli import main
from tests.e2e.test_readonly_home import _without_write_permission

FILES = {
    "docs/guide.md": "# Guide\n\nThe rollback controller restores the release.\n",
    "docs/deep/notes.md": "# Notes\n\nhealth checks wait for each wave\n",
    "top.txt": "a plain paragraph about deployments\n",
}


@pytest.fixture
def ws(home: Path) -> Workspace:
    primary = home / "workspace"
    for rel, text in FILES.items():
        path = primary / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    with Workspace.open(home) as workspace:
        workspace.index()
        yield workspace


def primary(home: Path) -> Path:
    return home / "workspace"


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# -- list ---------------------------------------------------------------------------------------------


def test_list_pages_sorted_by_path_with_every_field(ws: Workspace, home: Path) -> None:
    root = primary(home)
    first = ws.list_files(limit=2)
    assert [p.path for p in first.files] == [root / "docs/deep/notes.md", root / "docs/guide.md"]
    assert (first.total, first.offset, first.next_offset) == (3, 0, 2)
    second = ws.list_files(limit=2, offset=first.next_offset)
    assert [p.path for p in second.files] == [root / "top.txt"]
    assert second.next_offset is None
    entry = second.to_json()["files"][0]
    data = (root / "top.txt").read_bytes()
    import hashlib

    assert entry == {
        "path": str(root / "top.txt"),
        "root": str(root),
        "content_hash": hashlib.sha256(data).hexdigest(),
        "size_bytes": len(data),
        "modified_at": entry["modified_at"],
        "indexed_at": entry["indexed_at"],
        "chunks": 1,
        "encoding": None,
    }
    assert entry["modified_at"].endswith("Z") and entry["indexed_at"].endswith("Z")


def test_list_a_folder_recursively_or_not_and_a_file(ws: Workspace, home: Path) -> None:
    root = primary(home)
    assert [f.path for f in ws.list_files(root / "docs").files] == [root / "docs/deep/notes.md", root / "docs/guide.md"]
    assert [f.path for f in ws.list_files(root / "docs", recursive=False).files] == [root / "docs/guide.md"]
    assert [f.path for f in ws.list_files(str(root / "top.txt")).files] == [root / "top.txt"]
    assert ws.list_files(root / "nothing").total == 0


def test_list_takes_relative_paths_from_the_current_folder(
    ws: Workspace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(primary(home))
    assert [f.path.name for f in ws.list_files("docs").files] == ["notes.md", "guide.md"]


@pytest.mark.parametrize(("kwargs", "word"), [({"limit": 0}, "limit"), ({"limit": 1001}, "limit"),
                                              ({"offset": -1}, "offset"), ({"limit": True}, "limit")])
def test_list_refuses_bad_paging(ws: Workspace, kwargs: dict, word: str) -> None:
    with pytest.raises(UsageError, match=word):
        ws.list_files(**kwargs)


# -- delete -------------------------------------------------------------------------------------------


def test_delete_removes_from_the_index_only_and_keeps_the_file_out(ws: Workspace, home: Path) -> None:
    guide = primary(home) / "docs/guide.md"
    before = guide.read_bytes()
    result = ws.delete(guide)
    assert (result.kind, result.files_deleted, result.chunks_deleted, result.tombstones) == ("file", 1, 1, 1)
    assert guide.read_bytes() == before  # never touched on disk
    assert ws.search("rollback controller") == []
    assert ws.list_files().total == 2

    summary = ws.index()
    assert (summary.files_indexed, summary.skipped) == (0, {"deleted_by_user": 1, "unchanged": 2})
    assert ws.search("rollback controller") == []

    bump_mtime(guide)  # touched, same bytes: still out, and later runs need not read it again
    summary = ws.index()
    assert (summary.files_indexed, summary.skipped) == (0, {"deleted_by_user": 1, "unchanged": 2})

    guide.write_text("# Guide\n\nThe rollback controller was rewritten.\n")
    bump_mtime(guide)
    summary = ws.index()
    assert (summary.files_indexed, summary.skipped) == (1, {"unchanged": 2})
    assert [h.path for h in ws.search("rollback controller")] == [guide]
    assert ws.index().skipped == {"unchanged": 3}  # the tombstone is gone


def test_a_file_edited_before_the_delete_stays_out(ws: Workspace, home: Path) -> None:
    # The tombstone holds the bytes on disk at the delete, not the (older) indexed ones.
    top = primary(home) / "top.txt"
    top.write_text("edited after indexing, before the delete\n")
    bump_mtime(top)
    ws.delete(top)
    assert ws.index().skipped == {"deleted_by_user": 1, "unchanged": 2}


def test_delete_a_folder_and_readmit_it_with_roots_add(ws: Workspace, home: Path) -> None:
    root = primary(home)
    result = ws.delete(root / "docs")
    assert (result.kind, result.files_deleted, result.tombstones) == ("folder", 2, 2)
    assert result.paths == (root / "docs/deep/notes.md", root / "docs/guide.md")
    assert ws.index().skipped == {"deleted_by_user": 2, "unchanged": 1}
    # A folder inside the primary workspace cannot be a root (issue 12: it would be indexed twice),
    # and the refused add leaves the tombstones; re-adding the root that holds it takes them back.
    with pytest.raises(RootOverlapError):
        ws.add_root(root / "docs")
    assert ws.index().skipped == {"deleted_by_user": 2, "unchanged": 1}
    assert ws.add_root(root).action == "unchanged"
    assert ws.index().files_indexed == 2
    assert ws.list_files().total == 3


def test_roots_add_of_the_primary_workspace_readmits_its_files(ws: Workspace, home: Path) -> None:
    ws.delete(primary(home) / "top.txt")
    assert ws.add_root(primary(home)).action == "unchanged"
    summary = ws.index()
    assert (summary.files_indexed, summary.skipped) == (1, {"unchanged": 2})


def test_a_deleted_file_removed_from_disk_loses_its_tombstone(ws: Workspace, home: Path) -> None:
    top = primary(home) / "top.txt"
    data = top.read_bytes()
    ws.delete(top)
    top.unlink()
    ws.index()
    top.write_bytes(data)  # the same bytes again: a new file now
    assert ws.index().files_indexed == 1


def test_delete_of_a_path_that_is_not_indexed_is_a_clear_error(ws: Workspace, home: Path) -> None:
    with pytest.raises(NotIndexedError) as caught:
        ws.delete(primary(home) / "missing.md")
    assert (caught.value.code, caught.value.exit_code) == ("not_indexed", 66)
    assert "hermes-workspace list" in caught.value.hint
    with pytest.raises(UsageError):
        ws.delete("  ")


def test_delete_waits_for_no_index_run(ws: Workspace, home: Path) -> None:
    with FileIndexLock(ws.index_path.parent / "index.lock").hold(), pytest.raises(IndexBusyError):
        ws.delete(primary(home) / "top.txt")
    assert ws.list_files().total == 3


def test_delete_prunes_the_vectors_of_the_deleted_chunks(home: Path) -> None:
    pytest.importorskip("sqlite_vec")
    from hermes_workspace.adapters.memory import HashEmbedder  # type: ignore[attr-defined]

    root = primary(home)
    root.mkdir(parents=True)
    (root / "a.md").write_text("alpha unique words\n")
    (root / "b.md").write_text("beta other words\n")
    with Workspace.open(home, embedder=HashEmbedder()) as ws:
        ws.index()
        assert ws.semantic_status()["vectors"]["vectors"] == 2
        result = ws.delete(root / "a.md")
        assert result.vectors_pruned == 1
        assert ws.semantic_status()["vectors"]["vectors"] == 1
        assert ws.doctor().check("vectors").status == "passed"


# -- doctor -------------------------------------------------------------------------------------------


def statuses(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.name: c.status for c in report.checks}


def test_doctor_on_a_healthy_index(ws: Workspace) -> None:
    report = ws.doctor()
    assert statuses(report) == {
        "sqlite_integrity": "passed",
        "fulltext_index": "passed",
        "schema_version": "passed",
        "vectors": "incomplete",  # semantic search is off
        "tokenizer": "passed",
        "lock": "passed",
        "drift": "passed",
        "plugins": "passed",  # every configured plugin loads
    }
    assert report.ok and report.exit_code == 0
    assert report.check("drift").data["sampled"] == 3
    assert report.check("lock").data == {"held": False, "pid": None}  # the last run's pid is not a holder


def test_doctor_sees_the_lock_of_a_running_index(ws: Workspace) -> None:
    with FileIndexLock(ws.index_path.parent / "index.lock").hold():
        check = ws.doctor().check("lock")
    assert (check.status, check.data["held"], check.data["pid"]) == ("passed", True, os.getpid())


def test_doctor_reports_drift(ws: Workspace, home: Path) -> None:
    guide = primary(home) / "docs/guide.md"
    guide.write_text("# Guide\n\nchanged\n")
    bump_mtime(guide)
    (primary(home) / "top.txt").unlink()
    bump_mtime(primary(home) / "docs/deep/notes.md")  # touched only: not drift
    report = ws.doctor()
    drift = report.check("drift")
    assert drift.status == "failed"
    assert {k: drift.data[k] for k in ("sampled", "changed", "missing", "estimated_stale")} == {
        "sampled": 3, "changed": 1, "missing": 1, "estimated_stale": 2
    }
    assert drift.data["examples"] == [str(guide), str(primary(home) / "top.txt")]
    assert not report.ok and report.exit_code == 1


def _sql(path: Path, *statements: str) -> None:
    conn = apsw.Connection(str(path))
    for statement in statements:
        conn.execute(statement)
    conn.close()


def test_doctor_fails_when_the_fulltext_index_lost_rows(ws: Workspace) -> None:
    _sql(ws.index_path, "DELETE FROM chunks_fts WHERE rowid = (SELECT min(id) FROM chunks)")
    check = ws.doctor().check("fulltext_index")
    assert check.status == "failed"
    assert (check.data["chunks_missing_from_fts"], check.data["fts_rows_without_chunk"]) == (1, 0)


def test_doctor_fails_when_chunks_were_deleted_behind_fts5s_back(ws: Workspace) -> None:
    _sql(ws.index_path, "DROP TRIGGER chunks_fts_delete", "DELETE FROM chunks WHERE id = (SELECT max(id) FROM chunks)")
    report = ws.doctor()
    check = report.check("fulltext_index")
    assert check.status == "failed"
    assert (check.data["chunks_missing_from_fts"], check.data["fts_rows_without_chunk"]) == (0, 1)
    assert report.exit_code == 1


def test_doctor_fails_on_a_damaged_fts5_structure(ws: Workspace) -> None:
    _sql(ws.index_path, "DELETE FROM chunks_fts_data WHERE id > 10")
    report = ws.doctor()
    assert report.check("sqlite_integrity").status == "failed"
    assert report.check("fulltext_index").status == "failed"


def test_doctor_fails_on_garbage_in_the_file(ws: Workspace) -> None:
    path = ws.index_path
    _sql(path, "PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xa5" * (size - 4096))
    report = ws.doctor()  # never raises
    assert report.check("sqlite_integrity").status == "failed"
    assert report.exit_code == 1


def test_doctor_on_a_read_only_index_writes_nothing(ws: Workspace, home: Path) -> None:
    index_dir = ws.index_path.parent
    _sql(ws.index_path, "PRAGMA wal_checkpoint(TRUNCATE)")
    before = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.is_file()}
    writable = {p: p.stat().st_mode for p in [home, *home.rglob("*")]}
    try:
        for p, mode in writable.items():
            p.chmod(stat.S_IMODE(mode) & ~0o222)
        proc = subprocess.run(
            _without_write_permission([sys.executable, "-m", "hermes_workspace", "doctor"]),
            capture_output=True, text=True, timeout=120, env={**os.environ, "HERMES_HOME": str(home)},
        )
    finally:
        for p, mode in writable.items():
            p.chmod(stat.S_IMODE(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert report["sqlite_integrity"]["status"] == "passed"
    assert report["fulltext_index"]["status"] == "incomplete"  # FTS5's command is an INSERT: needs a writer
    assert report["fulltext_index"]["data"]["fts5_integrity_check"] == "skipped: the index file is read-only here"
    assert (report["drift"]["status"], report["lock"]["status"]) == ("passed", "passed")
    assert {p.name: p.read_bytes() for p in index_dir.iterdir() if p.is_file()} == before


def test_doctor_before_the_first_index(home: Path) -> None:
    with Workspace.open(home) as ws:
        report = ws.doctor()
    assert statuses(report)["sqlite_integrity"] == "incomplete"
    assert report.ok


# -- status -------------------------------------------------------------------------------------------


def test_status_has_the_last_run_and_a_stale_estimate(ws: Workspace, home: Path) -> None:
    ws.delete(primary(home) / "top.txt")
    ws.index()
    (primary(home) / "docs/guide.md").write_text("changed\n")
    status = ws.status()
    assert status.last_indexed_at is not None and status.last_indexed_at.endswith("Z")
    assert status.skipped == {"deleted_by_user": 1, "unchanged": 2}
    assert {k: status.stale_estimate[k] for k in ("total", "sampled", "changed", "missing")} == {
        "total": 2, "sampled": 2, "changed": 1, "missing": 0
    }
    assert status.stale_estimate["method"] == "stat only (size and mtime), every file"


# -- CLI ----------------------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, object]:
    code = main(list(args))
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def test_cli_list_delete_doctor_status(capsys: pytest.CaptureFixture[str], ws: Workspace, home: Path) -> None:
    root = primary(home)
    code, data = run(capsys, "list", str(root / "docs"), "--no-recursive", "--limit", "5")
    assert code == 0
    assert list(data) == ["path", "recursive", "total", "offset", "limit", "next_offset", "files"]
    assert (data["total"], data["recursive"], data["limit"], data["next_offset"]) == (1, False, 5, None)
    assert list(data["files"][0]) == ["path", "root", "content_hash", "size_bytes", "modified_at", "indexed_at",
                                      "chunks", "encoding"]

    code, data = run(capsys, "list", "--limit", "x")
    assert (code, data["error"]["code"]) == (2, "usage_error")

    code, data = run(capsys, "delete", str(root / "nope.md"))
    assert (code, data["error"]["code"]) == (66, "not_indexed")

    code, data = run(capsys, "delete", str(root / "top.txt"))
    assert code == 0
    assert (data["kind"], data["files_deleted"], data["tombstones"], data["paths_truncated"]) == ("file", 1, 1, False)
    assert (root / "top.txt").exists()

    code, data = run(capsys, "doctor")
    assert (code, data["ok"]) == (0, True)
    assert [c["name"] for c in data["checks"]] == [
        "sqlite_integrity", "fulltext_index", "schema_version", "vectors", "tokenizer", "lock", "drift", "plugins"
    ]
    (root / "docs/guide.md").write_text("drifted\n")
    code, data = run(capsys, "doctor")
    assert (code, data["ok"]) == (1, False)

    code, data = run(capsys, "status")
    assert code == 0
    for key in ("index_path", "indexed", "files", "chunks", "size_bytes", "excluded", "semantic",
                "last_indexed_at", "skipped_last_run", "stale_estimate"):
        assert key in data
    assert data["files"] == 2

    for args in (("list",), ("doctor",), ("status",), ("delete", str(root / "docs"))):
        assert main(["--human", *args]) in (0, 1)
    capsys.readouterr()
