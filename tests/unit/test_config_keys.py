"""Nothing in config.yaml is silently ignored: unknown keys in any section we read are errors with a
"did you mean", absurd sizes are refused, and so are bad environment values (found in a trial:
`recusive: true` and `chunk_size: 100000000000000000000` were accepted, HERMES_INDEX_WORKERS=abc
was ignored)."""

from __future__ import annotations

import pytest

from hermes_workspace.container import index_workers
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError


@pytest.mark.parametrize(
    ("data", "message", "hint"),
    [
        ({"workspace": {"enabeld": False}}, "unknown setting workspace.enabeld", "Did you mean workspace.enabled?"),
        ({"knowledgebase": {"chunkin": {}}}, "unknown setting knowledgebase.chunkin", "Did you mean knowledgebase.chunking?"),
        ({"knowledgebase": {"embeder": {}}}, "unknown setting knowledgebase.embeder", "Did you mean knowledgebase.embedder?"),
        ({"knowledgebase": {"chunking": {"chunk_sise": 100}}}, "unknown setting knowledgebase.chunking.chunk_sise",
         "Did you mean knowledgebase.chunking.chunk_size?"),
        ({"knowledgebase": {"indexing": {"max_file_bm": 3}}}, "unknown setting knowledgebase.indexing.max_file_bm",
         "Did you mean knowledgebase.indexing.max_file_mb?"),
        ({"knowledgebase": {"search": {"limit": 3}}}, "unknown setting knowledgebase.search.limit",
         "Known keys of knowledgebase.search: default_limit."),
        ({"knowledgebase": {"roots": [{"path": "/x", "recusive": True}]}}, "unknown setting knowledgebase.roots[0].recusive",
         "Did you mean knowledgebase.roots[0].recursive?"),
        ({"knowledgebase": {"retriever": {"modle": "hybrid"}}}, "unknown setting knowledgebase.retriever.modle",
         "Did you mean knowledgebase.retriever.mode?"),
        ({"knowlegebase": {"roots": []}}, "unknown section knowlegebase", "Did you mean knowledgebase?"),
        ({"knowledgebase": {"max_file_mb": 50}}, "knowledgebase.max_file_mb is not a setting of this version",
         "knowledgebase.indexing.max_file_mb"),
        ({"knowledgebase": {"watch_for_changes": True}},
         "knowledgebase.watch_for_changes is not a setting of this version", "hermes-workspace watch"),
        ({"knowledgebase": {"watch": {"debounse_ms": 100}}}, "unknown setting knowledgebase.watch.debounse_ms",
         "Did you mean knowledgebase.watch.debounce_ms?"),
        ({"knowledgebase": {"auto_index": {"debounce": 5}}}, "unknown setting knowledgebase.auto_index.debounce",
         "Did you mean knowledgebase.auto_index.debounce_seconds?"),
    ],
)
def test_unknown_keys_are_errors_with_a_suggestion(data: dict, message: str, hint: str) -> None:
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict(data)
    assert message in raised.value.message
    assert hint in raised.value.hint
    assert raised.value.exit_code == 78


def test_other_top_level_sections_belong_to_the_host_and_are_left_alone() -> None:
    config = WorkspaceConfig.from_dict({"model": {"name": "x"}, "display": {"theme": "dark"}, "workspace": {}})
    assert config.enabled


@pytest.mark.parametrize(
    ("chunking", "message"),
    [
        ({"chunk_size": 100000000000000000000}, "chunk_size must be > 0 and <= 100000"),
        ({"chunk_size": 1e20}, "chunk_size must be an integer"),
        ({"chunk_size": 0}, "chunk_size must be > 0"),
        ({"threshold": 10**12}, "threshold must be >= 0 and <= 10000000"),
        ({"threshold": -1}, "threshold must be >= 0"),
    ],
)
def test_absurd_chunking_values_are_refused(chunking: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        WorkspaceConfig.from_dict({"knowledgebase": {"chunking": chunking}})


@pytest.mark.parametrize("value", ["abc", "0", "-2", "2.5", "65", "1e3", "two"])
def test_bad_index_workers_environment_values_are_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HERMES_INDEX_WORKERS", value)
    with pytest.raises(ConfigError, match="HERMES_INDEX_WORKERS must be a whole number from 1 to 64") as raised:
        index_workers()
    assert "HERMES_INDEX_WORKERS=2" in raised.value.hint


@pytest.mark.parametrize(("value", "expected"), [("", 3), (" 2 ", 2), ("64", 64), ("1", 1)])
def test_good_index_workers_environment_values(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv("HERMES_INDEX_WORKERS", value)
    assert index_workers(default=3) == expected


def test_root_paths_are_folded_lexically_so_one_folder_is_one_root() -> None:
    # Found in a trial: `/x/cc/d1` and `/x/cc/../cc/d1` were two roots with different settings.
    from pathlib import Path

    config = WorkspaceConfig.from_dict({"knowledgebase": {"roots": [{"path": "/x/cc/../cc/d1", "recursive": True}]}})
    assert [(r.path, r.recursive) for r in config.roots] == [(Path("/x/cc/d1"), True)]
    # Issue 12 (seed 004: duplicate roots are errors): the same folder twice is refused, naming
    # both entries, instead of the second being dropped silently.
    with pytest.raises(ConfigError) as info:
        WorkspaceConfig.from_dict(
            {"knowledgebase": {"roots": [{"path": "/x/cc/../cc/d1", "recursive": True}, {"path": "/x/cc/d1"}]}}
        )
    assert info.value.message == "knowledgebase.roots[1] (/x/cc/d1) repeats knowledgebase.roots[0] (/x/cc/d1)"
