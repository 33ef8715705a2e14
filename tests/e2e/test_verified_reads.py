"""Verified reads, freshness marks, handles and pages, through the Python API and the CLI with every
real adapter (issue 10): drift cases, restarts, newer searches, expiry, paging."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.sqlite_result_sets import SqliteResultSets
from hermes_workspace.domain.errors import HandleExpiredError, HandleNotFoundError, StoreUnusableError, UsageError
from hermes_workspace.entrypoints.cli import main
from tests.e2e.test_readonly_home import _without_write_permission

SECTIONS = [
    "# Guide\n\nIntro words about the guide and what it covers for new readers.\n",
    "## Rollback\n\nTo roll back a release, run the rollback script with the release tag and wait.\n",
    "## Deploy\n\nDeploy with the deploy script after the tests pass on the main branch only.\n",
    "## Monitor\n\nWatch the dashboards for error rates for one hour after each deploy finishes.\n",
]
GUIDE = "\n".join(SECTIONS)
ROLLBACK = "## Rollback\n\nTo roll back a release, run the rollback script with the release tag and wait."


@pytest.fixture
def guide(home: Path) -> Path:
    """``workspace/notes/guide.md``, indexed in chunks of 20 words (one per section: the
    Rollback section is lines 5-7)."""
    (home / "config.yaml").write_text("knowledgebase:\n  chunking:\n    chunk_size: 20\n")
    notes = home / "workspace" / "notes"
    notes.mkdir(parents=True)
    path = notes / "guide.md"
    path.write_text(GUIDE)
    with Workspace.open(home) as ws:
        assert ws.index().files_indexed == 1
    return path


@pytest.fixture
def ws(home: Path, guide: Path) -> Workspace:
    with Workspace.open(home) as workspace:
        yield workspace


def _rollback_hit(ws: Workspace):  # type: ignore[no-untyped-def]
    hits = ws.search("rollback release tag", limit=1)
    assert [(h.line_start, h.line_end, h.chunk_index) for h in hits] == [(5, 7, 1)]
    return hits[0]


def test_hits_carry_the_indexed_hash_and_are_fresh(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    assert hit.file_hash == hashlib.sha256(GUIDE.encode()).hexdigest()
    assert hit.stale is False
    assert re.fullmatch(r"[0-9a-f]{8}:1", hit.handle)
    data = hit.to_json()
    assert (data["file_hash"], data["stale"], data["handle"]) == (hit.file_hash, False, hit.handle)


def test_hits_are_stale_after_an_edit_and_keep_the_indexed_hash(ws: Workspace, guide: Path) -> None:
    indexed = hashlib.sha256(GUIDE.encode()).hexdigest()
    guide.write_text(GUIDE + "\nOne more line.\n")
    hit = _rollback_hit(ws)
    assert (hit.file_hash, hit.stale) == (indexed, True)


def test_a_hit_whose_file_was_deleted_is_stale(ws: Workspace, guide: Path) -> None:
    guide.unlink()
    assert _rollback_hit(ws).stale is True


def test_a_verified_read_returns_the_exact_lines(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    result = ws.read(hit.handle)
    assert (result.status, result.line_start, result.line_end, result.moved_from) == ("verified", 5, 7, None)
    assert result.text == ROLLBACK
    assert result.handle == hit.handle
    assert result.to_json() == {
        "status": "verified", "path": str(guide), "line_start": 5, "line_end": 7, "text": ROLLBACK,
        "moved_from": None, "file_hash": hit.file_hash, "handle": hit.handle, "message": result.message,
    }
    by_locator = ws.read(f"{guide}:6-7")
    assert (by_locator.status, by_locator.text) == ("verified", "\nTo roll back a release, run the rollback script "
                                                                "with the release tag and wait.")
    assert ws.read(f"{guide}:1").text == "# Guide"


def test_an_edit_above_the_chunk_moves_it(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    guide.write_text("Added line one.\nAdded line two.\n" + GUIDE)
    result = ws.read(hit.handle)
    assert (result.status, result.line_start, result.line_end, result.moved_from) == ("moved", 7, 9, (5, 7))
    assert result.text == ROLLBACK
    assert result.message.endswith("moved 5-7 -> 7-9")
    assert result.to_json()["moved_from"] == {"line_start": 5, "line_end": 7}
    by_locator = ws.read(f"{guide}:5-7")
    assert (by_locator.status, by_locator.line_start, by_locator.line_end, by_locator.text) == ("moved", 7, 9, ROLLBACK)


def test_an_edited_chunk_is_stale_without_text(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    guide.write_text(GUIDE.replace("release tag", "release name"))
    result = ws.read(hit.handle)
    assert (result.status, result.line_start, result.line_end, result.text, result.moved_from) == (
        "stale", 5, 7, None, None)
    assert ws.read(f"{guide}:5-7").status == "stale"


def test_text_found_twice_is_stale(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    guide.write_text(GUIDE + "\n" + SECTIONS[1])
    assert ws.read(hit.handle).status == "stale"


def test_a_deleted_file_reads_as_deleted(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    guide.unlink()
    result = ws.read(hit.handle)
    assert (result.status, result.line_start, result.line_end, result.text) == ("deleted", 5, 7, None)
    assert ws.read(f"{guide}:5-7").status == "deleted"


def test_identical_bytes_with_a_new_mtime_are_verified(ws: Workspace, guide: Path) -> None:
    hit = _rollback_hit(ws)
    guide.unlink()
    guide.write_bytes(GUIDE.encode())
    os.utime(guide, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    result = ws.read(hit.handle)
    assert (result.status, result.line_start, result.line_end, result.text) == ("verified", 5, 7, ROLLBACK)
    assert _rollback_hit(ws).stale is False


def test_lines_between_chunks_of_a_changed_file_are_stale(ws: Workspace, guide: Path) -> None:
    guide.write_text("Added.\n" + GUIDE)
    result = ws.read(f"{guide}:4")  # the blank line between the Guide and Rollback chunks
    assert (result.status, result.text) == ("stale", None)
    assert "outside the indexed chunks" in result.message


def test_locator_mistakes_are_usage_errors(ws: Workspace, guide: Path, tmp_path: Path) -> None:
    for target, message in [
        (f"{guide}", "not a handle or a locator"),
        (f"{guide}:7-5", "line range 7-5 is not valid"),
        (f"{guide}:0", "line range 0-0 is not valid"),
        (f"{guide}:14-40", "has 15 lines; 14-40 is out of range"),
        ("  ", "read needs a handle or a locator"),
    ]:
        with pytest.raises(UsageError) as raised:
            ws.read(target)
        assert message in raised.value.message, target
        assert raised.value.hint


def test_an_unknown_handle_or_hit_number_is_not_found(ws: Workspace) -> None:
    hit = _rollback_hit(ws)
    with pytest.raises(HandleNotFoundError):
        ws.read("0000dead:1")
    set_id = hit.handle.split(":")[0]
    with pytest.raises(HandleNotFoundError) as raised:
        ws.read(f"{set_id}:999")
    assert "there is no hit 999" in raised.value.message


def test_a_handle_still_reads_after_a_restart(home: Path, guide: Path) -> None:
    with Workspace.open(home) as first:
        handle = _rollback_hit(first).handle
    with Workspace.open(home) as second:
        result = second.read(handle)
    assert (result.status, result.line_start, result.text) == ("verified", 5, ROLLBACK)


def test_a_newer_search_never_aliases_an_older_handle(ws: Workspace, guide: Path) -> None:
    older = _rollback_hit(ws)
    newer = ws.search("dashboards error rates", limit=1)[0]
    assert older.handle.split(":")[0] != newer.handle.split(":")[0]
    assert (ws.read(older.handle).text, ws.read(older.handle).line_start) == (ROLLBACK, 5)
    assert ws.read(newer.handle).line_start == 13
    again = _rollback_hit(ws)
    assert again.handle != older.handle


def test_an_expired_handle_is_an_explicit_error(home: Path, guide: Path) -> None:
    now = [1_000_000.0]
    with Workspace.open(home) as probe:
        index = probe.index_path
    sets = SqliteResultSets(index, ttl_seconds=3600, clock=lambda: now[0])
    with Workspace.open(home, result_sets=sets) as ws:
        hit = _rollback_hit(ws)
        cursor = ws.search("rollback deploy dashboards guide", limit=1).cursor
        now[0] += 3600
        for call in (lambda: ws.read(hit.handle), lambda: ws.more(cursor)):
            with pytest.raises(HandleExpiredError) as raised:
                call()
            assert (raised.value.code, raised.value.exit_code) == ("handle_expired", 66)
    sets.close()


def test_the_cli_exits_66_for_an_evicted_handle(home: Path, guide: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "config.yaml").write_text("knowledgebase:\n  chunking:\n    chunk_size: 20\n  handles:\n    max_sets: 1\n")
    assert main(["search", "rollback", "release", "--limit", "1"]) == 0
    first = json.loads(capsys.readouterr().out)[0]["handle"]
    assert main(["search", "dashboards", "--limit", "1"]) == 0
    capsys.readouterr()
    assert main(["read", first]) == 66
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "handle_expired"
    assert main(["read", "0000dead:1"]) == 66
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "handle_not_found"


def test_a_set_that_cannot_be_saved_leaves_hits_without_handles(home: Path, guide: Path) -> None:
    class ReadOnlySets:
        def save(self, *args: object) -> object:
            raise StoreUnusableError("the index is read-only: result sets cannot be saved")

        def load(self, set_id: str) -> object:
            raise HandleNotFoundError(f"no result set {set_id}")

    with Workspace.open(home, result_sets=ReadOnlySets()) as ws:
        hits = ws.search("rollback release tag", limit=1)
    assert [(h.line_start, h.handle, h.stale) for h in hits] == [(5, None, False)]
    assert (hits.result_set, hits.cursor) == (None, None)
    assert any("hits have no handles" in note and "read-only" in note for note in hits.notes)


def test_search_in_a_read_only_home_has_no_handles_and_says_why(home: Path, guide: Path) -> None:
    with Workspace.open(home) as ws:
        handle = _rollback_hit(ws).handle  # saved before: a read-only load must still work
    modes = {path: path.stat().st_mode for path in [home, *home.rglob("*")]}
    try:
        for path, mode in modes.items():
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        proc = subprocess.run(
            _without_write_permission([sys.executable, "-m", "hermes_workspace", "search", "rollback", "release",
                                       "--limit", "1", "--envelope"]),
            capture_output=True, text=True, timeout=120, env={**os.environ, "HERMES_HOME": str(home)},
        )
        read = subprocess.run(
            _without_write_permission([sys.executable, "-m", "hermes_workspace", "read", handle]),
            capture_output=True, text=True, timeout=120, env={**os.environ, "HERMES_HOME": str(home)},
        )
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert read.returncode == 0, read.stdout + read.stderr
    assert (json.loads(read.stdout)["status"], json.loads(read.stdout)["text"]) == ("verified", ROLLBACK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert [(h["line_start"], h["stale"], "handle" in h) for h in data["hits"]] == [(5, False, False)]
    assert (data["result_set"], data["cursor"]) == (None, None)
    assert any("hits have no handles" in note and "read-only" in note for note in data["notes"])


# -- paging ------------------------------------------------------------------------------------




def test_pages_are_consecutive_and_do_not_overlap(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        today = ws.search("needle", limit=10)
        first = ws.search("needle", limit=10)
        assert [h.key for h in first] == [h.key for h in today]
        assert (first.offset, first.total) == (0, 30)
        assert first.cursor == f"{first.result_set}@10"
        assert [h.handle for h in first] == [f"{first.result_set}:{n}" for n in range(1, 11)]
        second = ws.more(first.cursor)
        third = ws.more(second.cursor)
        assert (second.offset, third.offset, second.result_set) == (10, 20, first.result_set)
        assert [h.handle for h in second] == [f"{first.result_set}:{n}" for n in range(11, 21)]
        assert third.cursor is None and len(third) == 10
        keys = [h.key for page in (first, second, third) for h in page]
        assert len(set(keys)) == 30
        assert all(h.stale is False and h.file_hash for page in (first, second, third) for h in page)
        # The same page again names the same hits (no new search).
        assert [h.key for h in ws.more(first.cursor)] == [h.key for h in second]


def test_offset_pages_are_the_tail_of_a_longer_search(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        longer = ws.search("needle", limit=20)
        page = ws.search("needle", limit=10, offset=10)
        assert [h.key for h in page] == [h.key for h in longer[10:20]]
        assert [h.handle.split(":")[1] for h in page] == [str(n) for n in range(11, 21)]
        assert (page.offset, page.total) == (10, 30)
        with pytest.raises(UsageError):
            ws.search("needle", offset=-1)


def test_more_marks_hits_stale_after_an_edit(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        first = ws.search("needle", limit=5)
        second_page_paths = [h.path for h in ws.more(first.cursor)]
        second_page_paths[0].write_text("changed\n")
        again = ws.more(first.cursor)
        assert [h.stale for h in again] == [True, False, False, False, False]


def test_cli_search_offset_cursor_and_more(home: Path, many: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "needle", "--limit", "10", "--envelope"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["offset"], first["total"], first["cursor"]) == (0, 30, f"{first['result_set']}@10")
    assert main(["more", first["cursor"]]) == 0
    second = json.loads(capsys.readouterr().out)
    assert main(["search", "--cursor", first["cursor"]]) == 0
    same = json.loads(capsys.readouterr().out)
    assert [h["handle"] for h in same] == [h["handle"] for h in second["hits"]]
    assert second["offset"] == 10 and second["cursor"] == f"{first['result_set']}@20"
    assert main(["search", "needle", "--limit", "10", "--offset", "20"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 10
    assert main(["search", "needle", "--cursor", first["cursor"]]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "usage_error"
    assert main(["more", "not-a-cursor"]) == 2
    capsys.readouterr()
    handle = first["hits"][0]["handle"]
    assert main(["read", handle]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "verified"
