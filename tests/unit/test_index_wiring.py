"""The container's wiring of the index worker processes (HERMES_INDEX_WORKERS, replaced adapters)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from dependency_injector import providers

from hermes_workspace.adapters.memory import ParagraphChunker
from hermes_workspace.adapters.process_pool import ProcessTaskPool
from hermes_workspace.container import build_container


@pytest.mark.parametrize(("value", "workers"), [("1", None), ("", None), ("3", 3), ("auto", "cpus")])
def test_the_number_of_workers_comes_from_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch, value: str, workers: object
) -> None:
    monkeypatch.setattr("hermes_workspace.adapters.process_pool.available_cpus", lambda: 2)
    monkeypatch.setenv("HERMES_INDEX_WORKERS", value)
    pool = build_container(home).index_pool()
    if workers is None:
        assert pool is None
    else:
        assert isinstance(pool, ProcessTaskPool)
        assert pool.workers == (2 if workers == "cpus" else workers)


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_number_of_workers_in_the_environment_is_a_config_error(
    home: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    from hermes_workspace.domain.errors import ConfigError

    monkeypatch.setenv("HERMES_INDEX_WORKERS", value)
    with pytest.raises(ConfigError, match="HERMES_INDEX_WORKERS"):
        build_container(home).index_pool()


def test_one_cpu_means_no_worker_processes(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hermes_workspace.adapters.process_pool.available_cpus", lambda: 1)
    monkeypatch.setenv("HERMES_INDEX_WORKERS", "auto")
    assert build_container(home).index_pool() is None


def test_the_library_default_is_in_process(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hermes_workspace.adapters.process_pool.available_cpus", lambda: 4)
    monkeypatch.delenv("HERMES_INDEX_WORKERS", raising=False)
    assert build_container(home).index_pool() is None


def test_worker_tools_are_a_picklable_recipe_unless_an_adapter_was_replaced(home: Path) -> None:
    container = build_container(home)
    recipe = container.worker_tools()
    assert recipe is not None
    assert pickle.loads(pickle.dumps(recipe)).args == recipe.args
    container.chunker.override(providers.Object(ParagraphChunker()))
    assert container.worker_tools() is None
    assert container.index_workspace().worker_tools is None
