"""The watch use case (issue 12) with a scripted change feed and an injected clock."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hermes_workspace.application.watching import WatchBatch, WatchWorkspace
from hermes_workspace.domain.errors import ConfigError, IndexBusyError, StoreUnusableError
from hermes_workspace.domain.model import FileChange, IndexSummary, Root
from hermes_workspace.testing import ScriptedChangeFeed

ROOT = Path("/w/notes")
FLAT = Path("/w/flat")
INDEX = ROOT / ".index"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Runs:
    """Records the index runs; ``fail`` holds errors to raise at the next runs, in order."""

    def __init__(self) -> None:
        self.changed: list[list[Path]] = []
        self.full = 0
        self.fail: list[Exception] = []

    def index_changed(self, paths: list[Path]) -> IndexSummary:
        if self.fail:
            raise self.fail.pop(0)
        self.changed.append(list(paths))
        return IndexSummary(files_indexed=len(paths))

    def index_all(self) -> IndexSummary:
        if self.fail:
            raise self.fail.pop(0)
        self.full += 1
        return IndexSummary(files_indexed=0)


def at(clock: Clock, seconds: float, *changes: FileChange):
    """A script step: the clock moves to ``seconds`` after the start, then ``changes`` arrive."""

    def step() -> list[FileChange]:
        clock.now = 1000.0 + seconds
        return list(changes)

    return step


def mod(path: Path | str) -> FileChange:
    return FileChange(Path(path), "modified")


def watcher(clock: Clock, runs: Runs, steps, **options) -> tuple[WatchWorkspace, list[WatchBatch]]:
    batches: list[WatchBatch] = []
    options.setdefault("catch_up", False)
    options.setdefault("reconcile_seconds", None)
    use_case = WatchWorkspace(
        feed=options.pop("feed", None) or ScriptedChangeFeed(steps),
        roots=options.pop("roots", lambda: [Root(ROOT, recursive=True, primary=True), Root(FLAT, recursive=False)]),
        index_changed=runs.index_changed,
        index_all=runs.index_all,
        internal_dirs=[INDEX],
        debounce_seconds=0.3,
        clock=clock,
        wall_clock=clock,
        on_batch=batches.append,
        **options,
    )
    return use_case, batches


def test_a_burst_of_events_less_than_the_debounce_apart_is_one_batch() -> None:
    clock, runs = Clock(), Runs()
    steps = [at(clock, 0.0, mod(ROOT / "a.md"), mod(ROOT / "b.md")),
             at(clock, 0.2, mod(ROOT / "c.md")),
             at(clock, 0.4, mod(ROOT / "a.md"), FileChange(ROOT / "d.md", "deleted")),
             at(clock, 0.6),  # 0.2 s of quiet: not yet
             at(clock, 0.8),  # 0.4 s: the batch goes
             at(clock, 5.0)]
    use_case, batches = watcher(clock, runs, steps)
    summary = use_case.execute(threading.Event())
    assert runs.changed == [[ROOT / "a.md", ROOT / "b.md", ROOT / "c.md", ROOT / "d.md"]]
    assert [(b.reason, b.paths, b.pending) for b in batches] == [("changes", 4, 0)]
    assert (summary.batches, summary.paths_changed, summary.files_indexed, summary.stopped_by) == (1, 4, 4, "feed_ended")


def test_a_file_written_without_pause_is_indexed_after_max_batch_seconds() -> None:
    clock, runs = Clock(), Runs()
    steps = [at(clock, t / 10, mod(ROOT / "log.md")) for t in range(0, 121)]  # every 0.1 s for 12 s
    use_case, _ = watcher(clock, runs, steps, max_batch_seconds=5.0)
    use_case.execute(threading.Event())
    assert runs.changed[0] == [ROOT / "log.md"]
    assert len(runs.changed) == 2  # at 5 s and at 10 s, none waiting for the end of the stream


def test_events_outside_roots_and_in_the_workspaces_own_folders_are_dropped() -> None:
    clock, runs = Clock(), Runs()
    kept = [ROOT / "docs" / "deep" / "x.md", FLAT / "top.md", ROOT / "gone", FLAT]
    dropped = [
        Path("/elsewhere/a.md"),           # outside every root
        FLAT / "sub" / "b.md",             # below a non-recursive root
        INDEX / "workspace.sqlite-wal",    # the index's own writes
        ROOT / ".git" / "objects" / "ab",  # a repository's database
        ROOT / "repo" / ".git" / "refs" / "heads" / "main",
        ROOT / ".env",                     # a secret
        ROOT / "keys" / "server.pem",
        ROOT / "photo.png",                # never indexed: binary suffix
    ]
    changes = [mod(p) for p in kept[:2]] + [FileChange(kept[2], "deleted"), FileChange(kept[3], "modified")]
    steps = [at(clock, 0.0, *changes, *(mod(p) for p in dropped)), at(clock, 1.0)]
    use_case, _ = watcher(clock, runs, steps)
    summary = use_case.execute(threading.Event())
    assert runs.changed == [sorted(kept)]
    assert summary.events_ignored == len(dropped)


def test_only_ignored_events_start_no_run() -> None:
    clock, runs = Clock(), Runs()
    steps = [at(clock, 0.0, mod(INDEX / "workspace.sqlite")), at(clock, 2.0), at(clock, 4.0)]
    use_case, batches = watcher(clock, runs, steps)
    use_case.execute(threading.Event())
    assert runs.changed == [] and batches == []


def test_a_git_checkout_waits_for_quiet_after_head_changes() -> None:
    clock, runs = Clock(), Runs()
    steps = [at(clock, 0.0, mod(ROOT / ".git" / "HEAD"), mod(ROOT / "a.py")),
             at(clock, 0.5),               # quiet for 0.5 s: enough for an edit, not for a checkout
             at(clock, 0.7, *(mod(ROOT / f"f{i}.py") for i in range(500))),
             at(clock, 1.2),
             at(clock, 1.8),               # 1.1 s of quiet: the checkout is over
             at(clock, 3.0, mod(ROOT / "b.py")),
             at(clock, 3.4)]               # an ordinary edit again: the 0.3 s debounce
    use_case, batches = watcher(clock, runs, steps, vcs_settle_seconds=1.0)
    use_case.execute(threading.Event())
    assert [len(paths) for paths in runs.changed] == [501, 1]
    assert batches[0].to_json()["paths"] == 501


def test_a_busy_index_keeps_the_paths_and_tries_again_later() -> None:
    clock, runs = Clock(), Runs()
    runs.fail = [IndexBusyError("another index run is in progress")]
    steps = [at(clock, 0.0, mod(ROOT / "a.md")),
             at(clock, 0.5),                         # runs: busy
             at(clock, 1.0, mod(ROOT / "b.md")),     # a new change meanwhile
             at(clock, 1.5),                         # too early to retry (2 s)
             at(clock, 2.6),                         # retried, with both paths
             at(clock, 4.0)]
    use_case, batches = watcher(clock, runs, steps, retry_seconds=2.0)
    summary = use_case.execute(threading.Event())
    assert runs.changed == [[ROOT / "a.md", ROOT / "b.md"]]
    assert [(b.reason, b.paths, b.pending, (b.error or {}).get("code")) for b in batches] == [
        ("changes", 1, 1, "index_busy"), ("retry", 2, 0, None)]
    assert batches[0].to_json()["error"]["code"] == "index_busy"
    assert (summary.busy_retries, summary.pending) == (1, 0)


def test_a_busy_catch_up_is_retried_as_a_full_run() -> None:
    clock, runs = Clock(), Runs()
    runs.fail = [IndexBusyError("busy")]
    steps = [at(clock, 1.0), at(clock, 2.5), at(clock, 3.0)]
    use_case, batches = watcher(clock, runs, steps, catch_up=True, retry_seconds=2.0)
    use_case.execute(threading.Event())
    assert runs.full == 1
    assert [(b.reason, b.summary is None) for b in batches] == [("catch_up", True), ("catch_up", False)]


def test_reconciliation_runs_every_reconcile_seconds() -> None:
    clock, runs = Clock(), Runs()
    steps = [at(clock, t) for t in (0, 30, 59, 61, 90, 119, 125, 150)]
    use_case, batches = watcher(clock, runs, steps, catch_up=True, reconcile_seconds=60.0)
    use_case.execute(threading.Event())
    # catch-up at 0, then 60 s after each full run: at 61 and at 125 (61 + 60 = 121)
    assert [b.reason for b in batches] == ["catch_up", "reconcile", "reconcile"]
    assert runs.full == 3


def test_the_index_becoming_unwritable_stops_the_watch_with_its_error() -> None:
    clock, runs = Clock(), Runs()
    runs.fail = [StoreUnusableError("database or disk is full")]
    steps = [at(clock, 0.0, mod(ROOT / "a.md")), at(clock, 1.0), at(clock, 2.0)]
    use_case, _ = watcher(clock, runs, steps)
    with pytest.raises(StoreUnusableError) as raised:
        use_case.execute(threading.Event())
    assert raised.value.exit_code == 74


def test_other_failures_keep_the_paths_and_the_watch_going() -> None:
    clock, runs = Clock(), Runs()
    runs.fail = [ConfigError("knowledgebase.chunking.chunk_size must be > 0")]
    steps = [at(clock, 0.0, mod(ROOT / "a.md")), at(clock, 0.5), at(clock, 3.0), at(clock, 4.0)]
    use_case, batches = watcher(clock, runs, steps)
    summary = use_case.execute(threading.Event())
    assert runs.changed == [[ROOT / "a.md"]]
    assert [(b.error or {}).get("code") for b in batches] == ["config_invalid", None]
    assert summary.failed_runs == 1


def test_changed_roots_restart_the_feed_on_the_new_roots_with_a_full_run(tmp_path: Path) -> None:
    clock, runs = Clock(), Runs()
    primary = tmp_path / "notes"
    primary.mkdir()
    (tmp_path / "new").mkdir()
    config = {"stamp": 1, "roots": [Root(primary, recursive=True, primary=True)]}
    new_root = Root(tmp_path / "new", recursive=True)

    def edit_config() -> list[FileChange]:
        clock.now = 1005.0
        config["stamp"] = 2
        config["roots"] = [Root(primary, recursive=True, primary=True), new_root]
        return []

    feed = ScriptedChangeFeed([at(clock, 2.0), edit_config, at(clock, 6.0),  # the new feed: a full run
                               at(clock, 6.5, mod(new_root.path / "n.md")), at(clock, 7.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, roots=lambda: list(config["roots"]),
                                config_stamp=lambda: config["stamp"])
    summary = use_case.execute(threading.Event())
    assert [r.path for r in feed.calls[0]] == [primary]
    assert [r.path for r in feed.calls[1]] == [primary, new_root.path]
    assert [b.reason for b in batches] == ["roots_changed", "changes"]
    assert runs.changed == [[new_root.path / "n.md"]]
    assert summary.config_reloads == 1 and summary.roots == [str(primary), str(new_root.path)]


def test_the_feed_watches_only_the_roots_found_and_a_root_it_says_went_restarts_it(tmp_path: Path) -> None:
    # Trial (under load): a root deleted after the watch looked at it and made again (same inode
    # number) before its feed began stayed unwatched: nothing told the new folder from the old.
    # The feed is given the roots found, and says a given one that is gone as deleted.
    clock, runs = Clock(), Runs()
    repo, absent = tmp_path / "repo", tmp_path / "absent"
    repo.mkdir()
    feed = ScriptedChangeFeed([at(clock, 0.0, FileChange(repo, "deleted")), at(clock, 1.0), at(clock, 2.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, catch_up=True,
                                roots=lambda: [Root(repo, recursive=True), Root(absent, recursive=True)])
    use_case.execute(threading.Event())
    assert [[r.path for r in call] for call in feed.calls] == [[repo], [repo]]
    assert [b.reason for b in batches] == ["catch_up", "roots_changed"]


@pytest.mark.parametrize("edit", [{"profile": "code"}, {"extensions": (".py",)}, {"max_file_size": 10},
                                  {"name": "renamed"}])
def test_a_root_s_file_settings_edited_make_a_full_run_and_its_name_does_not(edit: dict[str, object]) -> None:
    # Trial: a profile, extensions or size cap edited while watching waited for the reconcile.
    import dataclasses

    clock, runs = Clock(), Runs()
    repo = Root(Path("/w/repo"), recursive=True, name="repo")
    config = {"stamp": 1, "roots": [repo]}

    def edit_config() -> list[FileChange]:
        clock.now = 1005.0
        config["stamp"] = 2
        config["roots"] = [dataclasses.replace(repo, **edit)]
        return []

    feed = ScriptedChangeFeed([at(clock, 2.0), edit_config, at(clock, 6.0), at(clock, 7.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, roots=lambda: list(config["roots"]),
                                config_stamp=lambda: config["stamp"])
    use_case.execute(threading.Event())
    expected = [] if "name" in edit else ["roots_changed"]
    assert [b.reason for b in batches] == expected


def test_a_marker_file_of_a_code_root_has_the_root_walked(tmp_path: Path) -> None:
    # Trial: adding or removing package.json (or go.mod...) changed nothing until the reconcile.
    clock, runs = Clock(), Runs()
    repo = Root(tmp_path, recursive=True, profile="code")
    feed = ScriptedChangeFeed([at(clock, 1.0, mod(tmp_path / "package.json")), at(clock, 2.0),
                               at(clock, 3.0, mod(tmp_path / "sub" / "package.json")), at(clock, 4.0)])
    use_case, _ = watcher(clock, runs, [], feed=feed, roots=lambda: [repo])
    use_case.execute(threading.Event())
    # The root is walked for a top-level marker only (the run folds the file into it).
    assert [set(paths) for paths in runs.changed] == [{tmp_path, tmp_path / "package.json"},
                                                      {tmp_path / "sub" / "package.json"}]


def test_an_invalid_config_edit_keeps_the_roots() -> None:
    clock, runs = Clock(), Runs()
    calls = {"n": 0, "stamp": 1}

    def roots() -> list[Root]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise ConfigError("config.yaml: bad YAML")
        return [Root(ROOT, recursive=True, primary=True)]

    def edit() -> list[FileChange]:
        clock.now = 1003.0
        calls["stamp"] = 2
        return []

    feed = ScriptedChangeFeed([edit, at(clock, 4.0, mod(ROOT / "a.md")), at(clock, 5.0)])
    use_case, _ = watcher(clock, runs, [], feed=feed, roots=roots, config_stamp=lambda: calls["stamp"])
    use_case.execute(threading.Event())
    assert len(feed.calls) == 1 and runs.changed == [[ROOT / "a.md"]]


def test_stop_ends_the_watch_and_interrupt_reports_what_is_pending() -> None:
    clock, runs = Clock(), Runs()
    stop = threading.Event()

    def stop_now() -> list[FileChange]:
        stop.set()
        return []

    use_case, _ = watcher(clock, runs, [stop_now, at(clock, 9.0, mod(ROOT / "never.md"))])
    assert use_case.execute(stop).stopped_by == "stop"

    def interrupt() -> list[FileChange]:
        raise KeyboardInterrupt

    use_case, _ = watcher(clock, Runs(), [at(clock, 0.0, mod(ROOT / "a.md")), interrupt])
    summary = use_case.execute(threading.Event())
    assert (summary.stopped_by, summary.pending) == ("interrupt", 1)


def test_the_catch_up_run_starts_once_the_feed_watches() -> None:
    clock, runs, order = Clock(), Runs(), []
    full = runs.index_all

    def index_all() -> IndexSummary:
        order.append("full run")
        return full()

    runs.index_all = index_all  # type: ignore[method-assign]

    def first() -> list[FileChange]:
        order.append("feed watching")
        return []

    use_case, batches = watcher(clock, runs, [first, at(clock, 1.0)], catch_up=True)
    use_case.execute(threading.Event())
    assert order == ["feed watching", "full run"]
    assert [b.reason for b in batches] == ["catch_up"]


def test_a_root_created_by_the_first_run_is_watched_from_then_on(tmp_path: Path) -> None:
    clock, runs = Clock(), Runs()
    primary = tmp_path / "workspace"  # created by the first index run, as the layout does
    full = runs.index_all

    def index_all() -> IndexSummary:
        primary.mkdir(exist_ok=True)
        return full()

    runs.index_all = index_all  # type: ignore[method-assign]
    feed = ScriptedChangeFeed([at(clock, 0.0), at(clock, 1.0), at(clock, 1.5, mod(primary / "a.md")), at(clock, 2.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, catch_up=True,
                                roots=lambda: [Root(primary, recursive=True, primary=True)])
    use_case.execute(threading.Event())
    assert len(feed.calls) == 2  # restarted once the folder existed
    # A full run once the new watch is set up (files made before it began), then a.md.
    assert [b.reason for b in batches] == ["catch_up", "roots_changed", "changes"]
    assert (runs.full, runs.changed) == (2, [[primary / "a.md"]])


def test_a_root_replaced_by_a_new_folder_is_watched_again_and_indexed_in_full(tmp_path: Path) -> None:
    # Trial: `rm -rf repo && mkdir repo` under a running watch left the new folder unwatched.
    import shutil

    clock, runs = Clock(), Runs()
    repo = tmp_path / "repo"
    repo.mkdir()

    def replace_repo() -> list[FileChange]:
        shutil.rmtree(repo)
        repo.mkdir()
        (repo / "d.md").write_text("# moved\n")
        clock.now = 1000.0 + 2.0
        return [FileChange(repo, "deleted")]

    feed = ScriptedChangeFeed([at(clock, 0.0), at(clock, 1.0), replace_repo, at(clock, 3.0), at(clock, 4.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, catch_up=True,
                                roots=lambda: [Root(repo, recursive=True)])
    use_case.execute(threading.Event())
    assert len(feed.calls) == 2  # a new watch on the new folder
    # A full run: d.md is indexed, the old folder's files pruned (its deletion event is covered).
    assert [b.reason for b in batches] == ["catch_up", "roots_changed"]
    assert (runs.full, runs.changed) == (2, [])


def test_a_root_symlink_pointed_elsewhere_is_watched_there_and_fully_indexed(tmp_path: Path) -> None:
    # Trial: `ln -sfn relB root` under a running watch indexed relB's files but left relA's in
    # the index: they are under no root now, and only a full run prunes them. No event says so
    # (the link changed in a folder nobody watches): the folder it names is another one.
    clock, runs = Clock(), Runs()
    (tmp_path / "relA").mkdir()
    (tmp_path / "relB").mkdir()
    link = tmp_path / "root"
    link.symlink_to(tmp_path / "relA")

    def repoint() -> list[FileChange]:
        (tmp_path / "next").symlink_to(tmp_path / "relB")
        os.replace(tmp_path / "next", link)
        clock.now = 1000.0 + 2.0
        return []

    feed = ScriptedChangeFeed([at(clock, 0.0), at(clock, 1.0), repoint, at(clock, 3.0), at(clock, 4.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, catch_up=True, roots=lambda: [Root(link, recursive=True)])
    use_case.execute(threading.Event())
    assert len(feed.calls) == 2
    assert [b.reason for b in batches] == ["catch_up", "roots_changed"]


def test_a_root_deleted_without_an_event_is_indexed_in_full_when_made_again(tmp_path: Path) -> None:
    # CI: the deletion event was dropped as the old watch stopped (the folder was found gone
    # first); the folder was made again before the new watch began, and its files were never
    # indexed. The roots watched before the restart are walked, whatever exists at the time.
    import shutil

    clock, runs = Clock(), Runs()
    repo = tmp_path / "repo"
    repo.mkdir()

    def delete_repo() -> list[FileChange]:
        shutil.rmtree(repo)
        clock.now = 1000.0 + 2.0
        return []

    def make_repo_again() -> list[FileChange]:
        repo.mkdir()
        (repo / "new.md").write_text("# new\n")
        clock.now = 1000.0 + 4.0
        return []

    feed = ScriptedChangeFeed([at(clock, 0.0), at(clock, 1.0), delete_repo, make_repo_again, at(clock, 6.0),
                               at(clock, 8.0)])
    use_case, batches = watcher(clock, runs, [], feed=feed, catch_up=True,
                                roots=lambda: [Root(repo, recursive=True)])
    use_case.execute(threading.Event())
    assert len(feed.calls) == 3  # the folder gone, then back
    assert [b.reason for b in batches] == ["catch_up", "roots_changed", "roots_changed"]
    assert (runs.full, runs.changed) == (3, [])


def test_paths_no_root_covers_any_more_are_dropped_not_retried() -> None:
    from hermes_workspace.domain.errors import UsageError

    clock, runs = Clock(), Runs()
    runs.fail = [UsageError("no root covers the path given")]
    steps = [at(clock, 0.0, mod(ROOT / "a.md")), at(clock, 0.5), at(clock, 3.0), at(clock, 6.0)]
    use_case, batches = watcher(clock, runs, steps)
    summary = use_case.execute(threading.Event())
    assert runs.changed == []
    assert [(b.error or {}).get("code") for b in batches] == ["usage_error"]
    assert (summary.failed_runs, summary.pending) == (1, 0)
