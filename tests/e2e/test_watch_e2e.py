"""``Workspace.watch`` with the real watchfiles feed on a temporary folder (issue 12): created,
modified, renamed and deleted files (and a renamed folder) become searchable, or stop being
found, without an index run of our own. Polls with a generous overall timeout; no assertion on
how fast."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_workspace import Workspace

pytest.importorskip("watchfiles")

TIMEOUT = 90.0


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {TIMEOUT:.0f}s: {what}")
        time.sleep(0.05)


def paths_for(ws: Workspace, query: str) -> set[str]:
    return {str(hit.path) for hit in ws.search(query, all_roots=True, limit=50)}


class Running:
    """A watch on its own thread; its batches on a queue."""

    def __init__(self, home: Path, open_options: dict[str, object] | None = None, **options: object) -> None:
        self.stop = threading.Event()
        self.batches: queue.Queue = queue.Queue()
        self.seen: list = []
        self.summary = None
        self.error: BaseException | None = None

        def on_batch(batch: object) -> None:
            self.seen.append(batch)
            self.batches.put(batch)

        def run() -> None:
            try:
                with Workspace.open(home, **(open_options or {})) as ws:
                    self.summary = ws.watch(stop=self.stop, on_batch=on_batch, **options)
            except BaseException as exc:  # noqa: BLE001 - checked by the test
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait_for(self, reason: str) -> object:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                batch = self.batches.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {reason} batch within {TIMEOUT:.0f}s (error: {self.error!r})") from None
            if batch.reason == reason:
                return batch

    def end(self) -> object:
        self.stop.set()
        self.thread.join(timeout=TIMEOUT)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.summary


@pytest.fixture
def watching(home: Path) -> Iterator[tuple[Path, Running]]:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "edit.md").write_text("# Edit\n\nthe quokka sleeps\n")
    (docs / "move.md").write_text("# Move\n\nthe wombat digs\n")
    (docs / "drop.md").write_text("# Drop\n\nthe platypus swims\n")
    (home / "workspace" / "folder").mkdir()
    (home / "workspace" / "folder" / "inner.md").write_text("# Inner\n\nthe numbat eats\n")
    (home / "workspace" / "before.md").write_text("# Before\n\nwritten before the watch: bilby\n")
    running = Running(home, debounce_ms=50, reconcile_minutes=0)
    running.wait_for("catch_up")
    yield home / "workspace", running
    if running.thread.is_alive():
        running.end()


def test_changes_under_a_running_watch_become_searchable(watching: tuple[Path, Running], home: Path) -> None:
    root, running = watching
    docs = root / "docs"
    with Workspace.open(home) as ws:
        assert paths_for(ws, "bilby") == {str(root / "before.md")}  # the catch-up run
        (docs / "new.md").write_text("# New\n\nthe echidna arrives\n")
        edited = docs / "edit.md"
        edited.write_text("# Edit\n\nthe quokka wakes up\n")
        os.rename(docs / "move.md", docs / "moved.md")
        os.remove(docs / "drop.md")
        os.rename(root / "folder", root / "renamed")

        eventually(lambda: paths_for(ws, "echidna") == {str(docs / "new.md")}, "a created file is found")
        eventually(lambda: paths_for(ws, "wakes") == {str(edited)}, "a modified file's new text is found")
        eventually(lambda: paths_for(ws, "sleeps") == set(), "a modified file's old text is gone")
        eventually(lambda: paths_for(ws, "wombat") == {str(docs / "moved.md")}, "a renamed file is found by its new name")
        eventually(lambda: paths_for(ws, "platypus") == set(), "a deleted file is gone")
        eventually(lambda: paths_for(ws, "numbat") == {str(root / "renamed" / "inner.md")},
                   "a renamed folder's files are found under its new path only")
    summary = running.end()
    assert summary.stopped_by == "stop"
    assert summary.full_runs == 1  # the catch-up only: every change was a changed-path run
    assert summary.paths_changed >= 5
    assert summary.files_pruned >= 3  # drop.md, move.md, folder/inner.md
    assert all(b.error is None for b in running.seen)


def test_a_changed_ignore_file_is_applied_without_a_full_run(watching: tuple[Path, Running], home: Path) -> None:
    root, running = watching
    with Workspace.open(home) as ws:
        assert paths_for(ws, "quokka") == {str(root / "docs" / "edit.md")}
        (root / ".hermesignore").write_text("docs/\n")
        eventually(lambda: paths_for(ws, "quokka") == set(), "files newly ignored leave the index")
    summary = running.end()
    assert summary.full_runs == 1


def test_a_watch_started_after_edits_catches_up_first(home: Path) -> None:
    root = home / "workspace"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nthe first kakapo\n")
    with Workspace.open(home) as ws:
        ws.index()
    (root / "a.md").write_text("# A\n\nthe second takahe\n")
    (root / "b.md").write_text("# B\n\nthe new tuatara\n")
    running = Running(home, debounce_ms=50, reconcile_minutes=0)
    batch = running.wait_for("catch_up")
    assert batch.summary.files_indexed == 2
    with Workspace.open(home) as ws:
        assert paths_for(ws, "takahe tuatara") == {str(root / "a.md"), str(root / "b.md")}
        assert paths_for(ws, "kakapo") == set()
    running.end()


def test_a_root_added_while_watching_is_indexed_and_watched(watching: tuple[Path, Running], home: Path,
                                                            tmp_path: Path) -> None:
    _, running = watching
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "first.md").write_text("# First\n\nthe kiwi was here before\n")
    with Workspace.open(home) as ws:
        ws.add_root(extra, recursive=True)  # config.yaml changes
        running.wait_for("roots_changed")
        assert paths_for(ws, "kiwi") == {str(extra / "first.md")}
        (extra / "later.md").write_text("# Later\n\nthe kea came later\n")
        eventually(lambda: paths_for(ws, "kea") == {str(extra / "later.md")}, "a file of the new root is found")
    summary = running.end()
    assert summary.config_reloads == 1 and str(extra) in summary.roots


def test_roots_added_to_a_project_file_while_watching_are_indexed(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "readme.md").write_text("# Project\n\nthe weta lives here\n")
    config = project / ".hermes-workspace.yaml"
    config.write_text("workspace:\n  name: project\n")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.md").write_text("# Notes\n\nthe kiwi was here before\n")
    running = Running(home, open_options={"cwd": project}, debounce_ms=50, reconcile_minutes=0)
    running.wait_for("catch_up")
    with Workspace.open(home, cwd=project) as ws:
        assert paths_for(ws, "weta") == {str(project / "readme.md")}
        config.write_text(f"workspace:\n  name: project\nknowledgebase:\n  roots:\n    - path: {extra}\n"
                          "      recursive: true\n")
        running.wait_for("roots_changed")
        assert paths_for(ws, "kiwi") == {str(extra / "notes.md")}
    summary = running.end()
    assert summary.config_reloads == 1 and str(extra) in summary.roots


def test_a_root_deleted_and_made_again_is_watched_again(home: Path, tmp_path: Path) -> None:
    import shutil

    (home / "workspace").mkdir(exist_ok=True)  # else its creation restarts the watch meanwhile
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "old.md").write_text("# Old\n\nthe moa was here\n")
    with Workspace.open(home) as ws:
        ws.add_root(repo, recursive=True)
    running = Running(home, debounce_ms=50, reconcile_minutes=0)
    running.wait_for("catch_up")
    # The OS watch is set up before the first batch but says nothing when it is; on a loaded
    # machine a deletion right after it could be missed (the reconcile would catch up, later).
    # A file written and found proves the watch is live, whatever the load.
    (repo / "probe.md").write_text("# Probe\n\nthe weka looks around\n")
    with Workspace.open(home) as ws:
        eventually(lambda: paths_for(ws, "weka") == {str(repo / "probe.md")}, "the watch is live")
    shutil.rmtree(repo)
    repo.mkdir()
    (repo / "new.md").write_text("# New\n\nthe takahe arrived\n")
    with Workspace.open(home) as ws:
        eventually(lambda: paths_for(ws, "takahe") == {str(repo / "new.md")}, "a file of the new folder is found")
        eventually(lambda: paths_for(ws, "moa") == set(), "the old folder's file is gone")
        (repo / "later.md").write_text("# Later\n\nthe kokako sings\n")
        eventually(lambda: paths_for(ws, "kokako") == {str(repo / "later.md")}, "the new folder is watched")
    running.end()


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_root_made_a_symlink_then_pointed_elsewhere_indexes_the_target_and_prunes_the_old(
        home: Path, tmp_path: Path) -> None:
    # Trial: a root folder replaced by a symlink, then the link pointed elsewhere (`ln -sfn`): the
    # old target's files stayed in the index until the reconcile. They were under no root any
    # more, and a changed-paths run never prunes there.
    import shutil

    (home / "workspace").mkdir(exist_ok=True)
    root = tmp_path / "root"
    root.mkdir()
    (root / "old.md").write_text("# Old\n\nthe moa was here\n")
    (tmp_path / "relA").mkdir()
    (tmp_path / "relA" / "a.md").write_text("# A\n\nthe tuatara basks\n")
    (tmp_path / "relB").mkdir()
    (tmp_path / "relB" / "b.md").write_text("# B\n\nthe kea whistles\n")
    with Workspace.open(home) as ws:
        ws.add_root(root, recursive=True)
    running = Running(home, debounce_ms=50, reconcile_minutes=0)
    running.wait_for("catch_up")
    with Workspace.open(home) as ws:
        assert paths_for(ws, "moa") == {str(root / "old.md")}
        shutil.rmtree(root)
        root.symlink_to(tmp_path / "relA")
        eventually(lambda: paths_for(ws, "tuatara") != set(), "the link's target is indexed")
        eventually(lambda: paths_for(ws, "moa") == set(), "the old folder's file is gone")
        (tmp_path / "next").symlink_to(tmp_path / "relB")
        os.replace(tmp_path / "next", root)
        eventually(lambda: paths_for(ws, "kea") != set(), "the new target's file is found")
        eventually(lambda: paths_for(ws, "tuatara") == set(), "the old target's file is gone")
    running.end()
