"""The ``cross-encoder`` reranker: a sentence-transformers ``CrossEncoder`` reading the query and
each candidate together, which orders a short list better than comparing two separate vectors.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._model_folder import local_folder
from hermes_workspace.adapters._model_libraries import hf_offline, missing_library, quiet_transformers
from hermes_workspace.domain.errors import RerankerUnavailableError, RerankTimeoutError
from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.semantic import embedding_input


class CrossEncoderReranker:
    """A :class:`~hermes_workspace.domain.ports.Reranker` over
    ``sentence_transformers.CrossEncoder(folder, device="cpu")``, loaded on the first
    :meth:`rerank`.

    ``model``: a local folder holding a cross-encoder (a transformers sequence-classification model
    with one output, and its tokenizer), ``~`` expanded. No cross-encoder is bundled and none is
    downloaded. ``batch_size``: (query, hit) pairs per model call; the deadline is checked before
    each call, so a call overruns it by at most one batch.

    Each hit is read as its section line then its content
    (:func:`~hermes_workspace.domain.semantic.embedding_input`); the model's tokenizer cuts a pair
    at the model's maximum length (tokens), so a very long hit is judged by its beginning.

    Building one and :attr:`name` never raise; :meth:`rerank` raises as it says.
    """

    provider = "cross-encoder"

    def __init__(self, model: str, *, batch_size: int = 16, clock: Callable[[], float] = time.monotonic) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self._clock = clock
        """:func:`time.monotonic` (replaceable in tests): deadlines are instants of that clock."""
        self._lock = threading.Lock()
        self._encoder: Any = None

    @property
    def name(self) -> str:
        """``cross-encoder:<folder name or model as given>``."""
        text = self.model.strip()
        return f"{self.provider}:{Path(text).expanduser().name if text else '(none)'}"

    def rerank(self, query: str, hits: Sequence[SearchHit], *, deadline: float) -> list[float]:
        """One score per hit (higher is more relevant; the model's output after its activation,
        0..1 for the usual sigmoid heads), in the order of ``hits``. ``[]`` for no hits.

        Raises:
            RerankTimeoutError: ``time.monotonic()`` passed ``deadline`` before a batch. The time
                spent loading the model on the first call does not count: the deadline bounds
                the scoring, and a fresh process pays the load (seconds, for torch) on top.
            RerankerUnavailableError: the folder is missing, a library is missing (hint: ``pip
                install 'hermes-workspace[semantic]'``), or the model fails to load or run.
        """
        if not hits:
            return []
        # Loading (torch alone takes seconds) is not scoring: the deadline moves by the load time,
        # so a cross-encoder can succeed in a fresh CLI process; the deadline bounds the scoring.
        loading_started = self._clock()
        encoder = self._load()
        deadline += self._clock() - loading_started
        pairs = [(query, embedding_input(hit.breadcrumb or hit.section, hit.content)) for hit in hits]
        scores: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            self._check(deadline, start, len(pairs))
            batch = pairs[start : start + self.batch_size]
            try:
                result = encoder.predict(batch, batch_size=len(batch), show_progress_bar=False, convert_to_numpy=True)
            except Exception as exc:  # noqa: BLE001 - torch / transformers errors must not cross the port
                raise RerankerUnavailableError(
                    f"the cross-encoder {self.name} failed: {type(exc).__name__}: {exc}"
                ) from None
            values = result.reshape(len(batch), -1)
            if values.shape[1] != 1:
                raise RerankerUnavailableError(
                    f"the cross-encoder {self.name} gives {values.shape[1]} scores per pair; a reranker needs one",
                    hint="Use a cross-encoder trained for relevance (num_labels = 1).",
                )
            batch_scores = [float(x) for x in values[:, 0]]
            if not all(math.isfinite(x) for x in batch_scores):
                raise RerankerUnavailableError(f"the cross-encoder {self.name} gave non-finite scores")
            scores.extend(batch_scores)
        return scores

    def _check(self, deadline: float, done: int, total: int) -> None:
        if self._clock() > deadline:
            raise RerankTimeoutError(f"reranking stopped at the deadline after {done} of {total} hits")

    def _load(self) -> Any:
        with self._lock:
            if self._encoder is not None:
                return self._encoder
            folder = local_folder(self.model)
            if folder is None:
                raise RerankerUnavailableError(
                    f"no cross-encoder named {self.model!r} on this machine; give a local folder",
                    hint=(
                        "Set knowledgebase.reranker.model to a folder holding a cross-encoder (config.json, "
                        "weights, tokenizer files), or set knowledgebase.reranker.provider to heuristic or none; "
                        "models are never downloaded."
                    ),
                )
            _require_cross_encoder(folder)
            hf_offline()
            try:
                import torch  # noqa: F401
                from sentence_transformers import CrossEncoder
            except ImportError as exc:
                raise missing_library(exc, "the cross-encoder reranker", RerankerUnavailableError) from None
            try:
                with quiet_transformers():
                    self._encoder = CrossEncoder(str(folder), device="cpu", local_files_only=True)
            except Exception as exc:  # noqa: BLE001 - any load failure makes the reranker unavailable
                raise RerankerUnavailableError(
                    f"cannot load a cross-encoder from {folder}: {type(exc).__name__}: {exc}",
                    hint="Check that the folder holds a transformers sequence-classification model and its tokenizer.",
                ) from None
            return self._encoder


def _require_cross_encoder(folder: Path) -> None:
    """Refuse a folder that holds no sequence-classification model (an embedding model, say):
    sentence-transformers would bolt an untrained head on it and rank by noise, silently."""
    import json

    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    architectures = config.get("architectures") or []
    if not any(str(a).endswith("ForSequenceClassification") for a in architectures):
        raise RerankerUnavailableError(
            f"{folder} does not hold a cross-encoder (its config.json names no *ForSequenceClassification "
            f"architecture: {architectures or 'none'})",
            hint="A cross-encoder scores (query, passage) pairs with a classification head; an embedding "
            "model cannot. Give the folder of a cross-encoder, or set knowledgebase.reranker.provider to heuristic.",
        )
