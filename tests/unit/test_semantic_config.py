"""The knowledgebase.embedder / retriever / reranker sections of config.yaml."""

from __future__ import annotations

import pytest

from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError


def test_defaults_are_keyword_only() -> None:
    config = WorkspaceConfig.from_dict({})
    assert (config.embedder.provider, config.embedder.enabled, config.embedder.model_name) == ("none", False, None)
    assert (config.retriever.sparse_top_k, config.retriever.dense_top_k, config.retriever.rrf_k) == (40, 40, 60)
    assert (config.reranker.provider, config.reranker.top_n, config.reranker.deadline_ms) == ("none", 20, 2000)
    assert config.default_mode == "keyword"


def test_an_embedder_makes_hybrid_the_default_unless_a_mode_is_set() -> None:
    onnx = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "onnx"}}})
    assert (onnx.default_mode, onnx.embedder.model_name) == ("hybrid", "all-MiniLM-L6-v2")
    pinned = WorkspaceConfig.from_dict(
        {"knowledgebase": {"embedder": {"provider": "onnx"}, "retriever": {"mode": "keyword"}}}
    )
    assert pinned.default_mode == "keyword"


def test_remote_consent_must_name_the_same_endpoint() -> None:
    base = {"provider": "openai", "base_url": "http://localhost:11434/v1", "model": "nomic-embed-text"}
    without = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": base}}).embedder
    assert (without.remote, without.consented) == (True, False)
    same = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {**base, "consent": "http://localhost:11434/v1/"}}})
    assert same.embedder.consented is True
    other = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {**base, "consent": "https://api.example.com/v1"}}})
    assert other.embedder.consented is False
    local = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "onnx"}}})
    assert local.embedder.consented is True


@pytest.mark.parametrize(
    ("section", "data", "key"),
    [
        ("embedder", {"provider": "bert base"}, "knowledgebase.embedder.provider"),  # not a plugin name
        ("embedder", {"provider": 3}, "knowledgebase.embedder.provider"),
        ("embedder", {"batch_size": 0}, "knowledgebase.embedder.batch_size"),
        ("embedder", {"batch_size": "32"}, "knowledgebase.embedder.batch_size"),
        ("embedder", {"dimensions": -1}, "knowledgebase.embedder.dimensions"),
        ("embedder", {"timeout_s": 0}, "knowledgebase.embedder.timeout_s"),
        ("embedder", {"provider": "openai", "model": "m"}, "knowledgebase.embedder.base_url"),
        ("embedder", {"provider": "openai", "base_url": "ftp://x"}, "knowledgebase.embedder.base_url"),
        ("embedder", {"provider": "openai", "base_url": "http://x"}, "knowledgebase.embedder.model"),
        ("embedder", {"consent": True}, "knowledgebase.embedder.consent"),
        ("retriever", {"mode": "dense"}, "knowledgebase.retriever.mode"),
        ("retriever", {"sparse_top_k": 0}, "knowledgebase.retriever.sparse_top_k"),
        ("retriever", {"dense_top_k": 1001}, "knowledgebase.retriever.dense_top_k"),
        ("retriever", {"rrf_k": -1}, "knowledgebase.retriever.rrf_k"),
        ("retriever", {"rrf_k": 1.5}, "knowledgebase.retriever.rrf_k"),
        ("reranker", {"provider": "cohere/v2"}, "knowledgebase.reranker.provider"),
        ("reranker", {"top_n": 0}, "knowledgebase.reranker.top_n"),
        ("reranker", {"deadline_ms": 0}, "knowledgebase.reranker.deadline_ms"),
    ],
)
def test_invalid_values_name_the_key(section: str, data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {section: data}})
    assert key in raised.value.message


@pytest.mark.parametrize("section", ["embedder", "retriever", "reranker"])
def test_a_section_must_be_a_mapping(section: str) -> None:
    with pytest.raises(ConfigError, match=f"knowledgebase.{section} must be a mapping"):
        WorkspaceConfig.from_dict({"knowledgebase": {section: "onnx"}})


def test_consent_false_or_empty_means_none() -> None:
    for value in (False, None, ""):
        config = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"consent": value}}})
        assert config.embedder.consent == ""


def test_unknown_keys_are_errors_with_a_suggestion() -> None:
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "onnx", "modle": "x"}}})
    assert raised.value.message == "unknown setting knowledgebase.embedder.modle"
    assert raised.value.hint.startswith("Did you mean knowledgebase.embedder.model?")
    with pytest.raises(ConfigError, match="knowledgebase.retriever.final_top_k is not a setting") as moved:
        WorkspaceConfig.from_dict({"knowledgebase": {"retriever": {"final_top_k": 8}}})
    assert "default_limit" in moved.value.hint


def test_model2vec_needs_a_model_folder() -> None:
    with pytest.raises(ConfigError, match="knowledgebase.embedder.model must be the folder"):
        WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "model2vec"}}})


def test_type_errors_speak_yaml() -> None:
    with pytest.raises(ConfigError, match="knowledgebase.embedder must be a mapping, got a list"):
        WorkspaceConfig.from_dict({"knowledgebase": {"embedder": ["onnx"]}})


def test_reranker_model_belongs_to_the_cross_encoder() -> None:
    with pytest.raises(ConfigError, match="knowledgebase.reranker.model must be the folder of a cross-encoder"):
        WorkspaceConfig.from_dict({"knowledgebase": {"reranker": {"provider": "cross-encoder"}}})
    with pytest.raises(ConfigError, match="read by the cross-encoder provider only"):
        WorkspaceConfig.from_dict({"knowledgebase": {"reranker": {"provider": "heuristic", "model": "x"}}})


def test_a_misspelled_section_name_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown setting knowledgebase.embeder") as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"embeder": {"provider": "onnx"}}})
    assert raised.value.hint.startswith("Did you mean knowledgebase.embedder?")
    # Keys of the spec that this version does not read are errors that say so, not silence.
    with pytest.raises(ConfigError, match="knowledgebase.watch_for_changes is not a setting of this version"):
        WorkspaceConfig.from_dict({"knowledgebase": {"retrieval_mode": "gated", "watch_for_changes": True}})
