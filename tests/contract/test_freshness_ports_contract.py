"""Contracts of ChangeFeed and TimeMark (issue 12): each fake and each real adapter. The real
feed is driven by real file events; waits are hang guards, never assertions on speed."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_workspace.adapters.file_time_mark import FileTimeMark
from hermes_workspace.adapters.memory import InMemoryTimeMark, ScriptedChangeFeed
from hermes_workspace.domain.model import FileChange, Root
from hermes_workspace.domain.ports import ChangeFeed, TimeMark

HANG_GUARD = 60.0


def collect(feed: ChangeFeed, roots: list[Root], act: Callable[[], None], until: Callable[[list[FileChange]], bool]
            ) -> list[FileChange]:
    """Changes the feed yields after ``act`` ran (at its first batch), until ``until(changes)``."""
    stop = threading.Event()
    seen: list[FileChange] = []
    acted = False
    deadline = time.monotonic() + HANG_GUARD
    batches = feed.batches(roots, stop, timeout_seconds=0.05)
    try:
        for batch in batches:
            assert isinstance(batch, list) and all(isinstance(c, FileChange) for c in batch)
            if not acted:
                act()
                acted = True
                continue
            seen.extend(batch)
            if until(seen) or time.monotonic() > deadline:
                break
    finally:
        batches.close()
    return seen


@pytest.fixture(params=["scripted", "watchfiles"])
def feed_kind(request: pytest.FixtureRequest) -> str:
    if request.param == "watchfiles":
        pytest.importorskip("watchfiles")
    return request.param


def make_feed(kind: str, script: list[list[FileChange]]) -> ChangeFeed:
    if kind == "scripted":
        return ScriptedChangeFeed([[], *script])
    from hermes_workspace.adapters.watchfiles_watcher import WatchfilesChangeFeed

    return WatchfilesChangeFeed()


def test_a_feed_reports_created_modified_and_deleted_files_under_a_recursive_root(feed_kind: str, tmp_path: Path
                                                                                   ) -> None:
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "a.md"
    script = [[FileChange(target, "added")], [FileChange(target, "modified")], [FileChange(target, "deleted")]]
    feed = make_feed(feed_kind, script)
    assert isinstance(feed, ChangeFeed)

    def act() -> None:
        target.write_text("one\n")
        time.sleep(0.3)
        with target.open("a") as handle:
            handle.write("two\n")
        time.sleep(0.3)
        os.remove(target)

    seen = collect(feed, [Root(tmp_path, recursive=True)], act,
                   until=lambda changes: any(c.kind == "deleted" for c in changes))
    assert {c.path for c in seen} == {target}
    # A loaded machine may hand all three over in one batch, in no order (watchfiles gives a set).
    assert {"added", "deleted"} <= {c.kind for c in seen}


def test_a_feed_ends_when_stopped_and_reports_missing_roots_deleted(feed_kind: str, tmp_path: Path) -> None:
    feed = make_feed(feed_kind, [[]] * 1000)
    stop = threading.Event()
    missing = Root(tmp_path / "not-there", recursive=True)
    count = 0
    started = time.monotonic()
    seen: list[list[FileChange]] = []
    for batch in feed.batches([missing], stop, timeout_seconds=0.05):
        seen.append(batch)
        count += 1
        if count == 3:
            stop.set()
        assert time.monotonic() - started < HANG_GUARD
    assert count == 3
    # A root gone before its watch began is said as its deletion (the scripted feed plays its
    # script): the caller, which found the folder, learns it went.
    expected = [[FileChange(missing.path, "deleted")], [], []] if feed_kind == "watchfiles" else [[], [], []]
    assert seen == expected


def test_the_real_feed_watches_a_non_recursive_root_without_its_sub_folders(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")
    from hermes_workspace.adapters.watchfiles_watcher import WatchfilesChangeFeed

    (tmp_path / "sub").mkdir()
    top, deep = tmp_path / "top.md", tmp_path / "sub" / "deep.md"

    def act() -> None:
        deep.write_text("deep\n")
        time.sleep(0.3)
        top.write_text("top\n")

    seen = collect(WatchfilesChangeFeed(), [Root(tmp_path, recursive=False)], act,
                   until=lambda changes: any(c.path == top for c in changes))
    assert top in {c.path for c in seen}
    assert deep not in {c.path for c in seen}


def test_the_real_feed_survives_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    # Trial: watchfiles ended its watch on such a name and the whole `watch` stopped with it.
    pytest.importorskip("watchfiles")
    from hermes_workspace.adapters.watchfiles_watcher import WatchfilesChangeFeed

    (tmp_path / "sub").mkdir()
    after = tmp_path / "after.md"

    def act() -> None:
        with open(os.path.join(os.fsencode(tmp_path / "sub"), b"bad\xff.txt"), "wb") as handle:
            handle.write(b"x\n")
        time.sleep(1.5)
        after.write_text("after\n")

    seen = collect(WatchfilesChangeFeed(), [Root(tmp_path, recursive=True)], act,
                   until=lambda changes: any(c.path == after for c in changes))
    paths = {c.path for c in seen}
    assert tmp_path / "sub" in paths  # the undecodable file's folder, to be walked
    assert after in paths  # and the watch goes on


def test_the_real_feed_asks_watchfiles_for_no_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """watchfiles clears what it collected when its ``rust_timeout`` runs out, dropping a change
    that comes in between (CI: a root's deletion never reported, the folder made again never
    watched). The stop flag is looked at every ``step`` without one."""
    watchfiles = pytest.importorskip("watchfiles")
    from hermes_workspace.adapters.watchfiles_watcher import WatchfilesChangeFeed

    calls: list[dict[str, object]] = []

    def fake_watch(*paths: str, **options: object):  # noqa: ANN202 - watchfiles' generator
        calls.append(options)
        return iter(())

    monkeypatch.setattr(watchfiles, "watch", fake_watch)
    stop = threading.Event()
    batches = WatchfilesChangeFeed().batches([Root(tmp_path, recursive=True)], stop, timeout_seconds=0.05)
    assert next(batches) == []
    stop.set()
    list(batches)
    assert [call["rust_timeout"] for call in calls] == [0]
    assert calls[0]["stop_event"] is not None


@pytest.fixture(params=["memory", "file"])
def mark(request: pytest.FixtureRequest, tmp_path: Path) -> TimeMark:
    return InMemoryTimeMark() if request.param == "memory" else FileTimeMark(tmp_path / "last.mark")


def test_time_mark_contract(mark: TimeMark) -> None:
    assert isinstance(mark, TimeMark)
    assert mark.age_seconds() is None
    assert mark.touch() is True
    age = mark.age_seconds()
    assert age is not None and 0 <= age < 60


def test_a_file_mark_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    mark = FileTimeMark(tmp_path / "no-such-folder" / "last.mark")
    assert mark.touch() is False
    assert mark.age_seconds() is None


def test_a_file_mark_is_shared_by_every_object_on_the_file(tmp_path: Path) -> None:
    first, second = FileTimeMark(tmp_path / "m"), FileTimeMark(tmp_path / "m")
    first.touch()
    past = time.time() - 100
    os.utime(tmp_path / "m", (past, past))
    age = second.age_seconds()
    assert age is not None and 99 <= age < 160
