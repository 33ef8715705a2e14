"""Concurrent edits of config.yaml lose nothing (found in a trial: 4 of 10 two-way races of
`roots add` lost a root, silently, exit 0), and an edit that would make the file unreadable is
never written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hermes_workspace.adapters.yaml_config import YamlConfigRepository
from hermes_workspace.domain.errors import ConfigError, ConfigWriteError
from hermes_workspace.domain.model import Root

CONFIG = """\
# my settings
knowledgebase:
  roots: []   # added by hand below
  chunking:
    chunk_size: 256   # small chunks
"""


def test_twelve_concurrent_roots_add_all_persist(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG)
    folders = [tmp_path / f"folder{i:02d}" for i in range(12)]
    for folder in folders:
        folder.mkdir()
    env = {**os.environ, "HERMES_HOME": str(home)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "hermes_workspace", "roots", "add", str(folder)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        for folder in folders
    ]
    results = [(proc.wait(timeout=120), proc.stdout.read(), proc.stderr.read()) for proc in procs]  # type: ignore[union-attr]

    assert [code for code, _, _ in results] == [0] * 12, results
    assert sorted(json.loads(out)["action"] for _, out, _ in results) == ["added"] * 12
    repo = YamlConfigRepository(home / "config.yaml")
    assert sorted(root.path for root in repo.load().roots) == folders
    text = (home / "config.yaml").read_text()
    assert "# my settings" in text and "chunk_size: 256   # small chunks" in text
    assert not [p.name for p in home.iterdir() if p.name.startswith(".config.") and p.suffix == ".yaml"]


def test_concurrent_edits_in_threads_are_serialized(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def add(i: int) -> None:
        repo = YamlConfigRepository(path)
        barrier.wait()
        try:
            repo.update_roots(lambda config: (*config.roots, Root(Path(f"/data/r{i}"))))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert sorted(str(r.path) for r in YamlConfigRepository(path).load().roots) == [f"/data/r{i}" for i in range(8)]


def test_an_edit_that_would_not_load_back_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    repo = YamlConfigRepository(path)

    with pytest.raises(ConfigError, match="not written: the edit would make"):
        repo.save_roots((Root(Path("/x"), recursive="no"),))  # type: ignore[arg-type]

    assert path.read_text() == CONFIG
    assert repo.load().roots == ()


def test_a_failing_change_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)

    def change(config):  # type: ignore[no-untyped-def]
        raise ConfigError("no")

    with pytest.raises(ConfigError):
        YamlConfigRepository(path).update_roots(change)
    assert path.read_text() == CONFIG


def test_a_lock_held_too_long_is_a_config_write_error(tmp_path: Path) -> None:
    from filelock import FileLock

    path = tmp_path / "config.yaml"
    repo = YamlConfigRepository(path, lock_wait_seconds=0.05)
    with FileLock(str(repo.lock_path)):
        with pytest.raises(ConfigWriteError, match="another process has been editing") as info:
            repo.save_roots((Root(Path("/x")),))
    assert info.value.exit_code == 73
    assert not path.exists()
