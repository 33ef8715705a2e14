"""``knowledgebase.auto_index`` (issue 12): a catch-up index before a search, debounced per
workspace (keyed by its index, shared by every process using it), never waiting for a writer."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hermes_workspace import Workspace
from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.container import INDEX_MARK_FILENAME


def make_home(base: Path, name: str, debounce: float = 60, enabled: bool = True) -> Path:
    home = base / name
    (home / "workspace").mkdir(parents=True)
    (home / "config.yaml").write_text(
        f"knowledgebase:\n  auto_index:\n    enabled: {str(enabled).lower()}\n    debounce_seconds: {debounce}\n")
    (home / "workspace" / "note.md").write_text("# Note\n\nthe old wording\n")
    with Workspace.open(home) as ws:
        assert ws.index().files_indexed == 1
    return home


def age_mark(home: Path, seconds: float = 3600) -> None:
    mark = home / "workspace" / ".index" / INDEX_MARK_FILENAME
    past = time.time() - seconds
    os.utime(mark, (past, past))


def edit(home: Path, words: str) -> None:
    note = home / "workspace" / "note.md"
    note.write_text(f"# Note\n\n{words}\n")
    later = time.time() + 5  # a different mtime whatever the file system's time resolution
    os.utime(note, (later, later))


def found(home: Path, query: str) -> int:
    with Workspace.open(home) as ws:
        return len(ws.search(query, all_roots=True))


def test_the_debounce_of_one_workspace_does_not_hold_up_another(tmp_path: Path) -> None:
    a, b = make_home(tmp_path, "a"), make_home(tmp_path, "b")
    age_mark(a)
    age_mark(b)
    edit(a, "freshly written alpha")
    edit(b, "freshly written bravo")
    assert found(a, "alpha") == 1  # a's debounce had passed: indexed before the search
    assert found(b, "bravo") == 1  # b's too: a's run (just now) does not count for b
    # Within a's debounce now, in a new Workspace as a separate process would be: no run.
    edit(a, "second edit charlie")
    assert found(a, "charlie") == 0
    assert found(a, "alpha") == 1


def test_an_index_run_sets_the_mark_so_a_search_right_after_it_does_not_index(tmp_path: Path) -> None:
    home = make_home(tmp_path, "h")
    edit(home, "unindexed delta")
    assert found(home, "delta") == 0  # `index` ran seconds ago
    age_mark(home)
    assert found(home, "delta") == 1


def test_a_search_never_waits_for_another_writer(tmp_path: Path) -> None:
    home = make_home(tmp_path, "h")
    age_mark(home)
    edit(home, "waiting echo")
    other = FileIndexLock(home / "workspace" / ".index" / "index.lock")
    with other.hold():  # another process's index run
        started = time.monotonic()
        assert found(home, "echo") == 0
        assert found(home, "wording") == 1
        assert time.monotonic() - started < 30  # no wait for the lock (generous: a slow machine)
    age_mark(home)
    assert found(home, "echo") == 1


def test_disabled_auto_index_never_indexes(tmp_path: Path) -> None:
    home = make_home(tmp_path, "h", enabled=False)
    age_mark(home)
    edit(home, "never foxtrot")
    assert found(home, "foxtrot") == 0
    with Workspace.open(home) as ws:
        pack = ws.retrieve("foxtrot", all_roots=True)
    assert "never foxtrot" not in pack.text


def test_retrieve_indexes_first_too(tmp_path: Path) -> None:
    home = make_home(tmp_path, "h")
    age_mark(home)
    edit(home, "retrieved golf")
    with Workspace.open(home) as ws:
        pack = ws.retrieve("golf", all_roots=True)
    assert "retrieved golf" in pack.serialize()


def test_no_index_yet_means_no_automatic_first_build(home: Path) -> None:
    (home / "workspace").mkdir()
    (home / "workspace" / "a.md").write_text("hotel\n")
    with Workspace.open(home) as ws:
        try:
            ws.search("hotel")
        except Exception as exc:  # noqa: BLE001 - the documented error
            assert getattr(exc, "code", None) == "index_missing"
        else:
            raise AssertionError("a search before the first index must say so, not build it")
