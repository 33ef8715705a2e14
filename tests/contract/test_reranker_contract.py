"""The Reranker contract (:class:`hermes_workspace.testing.RerankerContract`), run against the fake
(ScriptedReranker) and the built-in heuristic reranker, directly and through its entry point."""

from __future__ import annotations

import pytest

from hermes_workspace.adapters.heuristic_reranker import HeuristicReranker
from hermes_workspace.adapters.memory import ScriptedReranker
from hermes_workspace.domain.ports import Reranker
from hermes_workspace.registry import PluginRegistry
from hermes_workspace.testing import RerankerContract, plugin_context


class TestScriptedFake(RerankerContract):
    @pytest.fixture
    def reranker(self) -> Reranker:
        return ScriptedReranker("rollback")


class TestHeuristic(RerankerContract):
    @pytest.fixture
    def reranker(self) -> Reranker:
        return HeuristicReranker()


class TestHeuristicPlugin(RerankerContract):
    @pytest.fixture
    def reranker(self) -> Reranker:
        registry = PluginRegistry()
        return registry.build(registry.find("rerankers", "heuristic"), plugin_context("rerankers", "heuristic"))
