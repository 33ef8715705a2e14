"""The ``model2vec`` embedder: static embeddings (a vector per vocabulary piece, averaged).

Very fast (no transformer runs: thousands of texts per second on one core) and weaker than a
transformer. A static model has no input window: every token of a text counts, however long.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._model_folder import folder_digest, local_folder
from hermes_workspace.adapters._model_libraries import hf_offline, missing_library
from hermes_workspace.adapters._model_tokenizer import ModelTokenizer
from hermes_workspace.adapters._numpy_vectors import to_vector, unit_rows
from hermes_workspace.domain.errors import EmbedderUnavailableError
from hermes_workspace.domain.semantic import Vector

NO_WINDOW_TOKENS = 1_000_000
"""What :attr:`Model2VecEmbedder.max_input_tokens` reports: a static model reads any number of
tokens (the mean of their vectors), so texts are never windowed; the number only has to be larger
than any chunk."""


class Model2VecEmbedder:
    """An :class:`~hermes_workspace.domain.ports.Embedder` over a local ``model2vec`` static model
    (``model2vec.StaticModel``).

    ``model``: a folder holding a static model (``config.json``, ``model.safetensors``,
    ``tokenizer.json``, as ``StaticModel.save_pretrained`` writes), ``~`` expanded; no model is
    bundled and none is downloaded. ``batch_size``: texts per encode call.

    Vectors: float32, unit length, the model's dimensions; the mean of the vectors of all the
    text's tokens (word pieces), without truncation (``encode(max_length=None)``). A text none of
    whose tokens is in the vocabulary (e.g. ``""``) has no direction: its vector is all zeros.

    Building one imports nothing; ``signature`` digests the folder; ``coverage`` reads only the
    tokenizer; the first embed call (or ``dimensions``) loads the model (well under a second).

    Raises (from any member but the constructor): :class:`EmbedderUnavailableError` when the folder
    does not exist or holds no static model, or model2vec is not installed (hint: ``pip install
    'hermes-workspace[semantic]'``).
    """

    provider = "model2vec"

    def __init__(self, model: str, *, batch_size: int = 1024) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self._lock = threading.RLock()
        self._folder: Path | None = None
        self._digest: str | None = None
        self._tokenizer: ModelTokenizer | None = None
        self._static: Any = None

    def folder(self) -> Path:
        """The model's folder.

        Raises:
            EmbedderUnavailableError: ``model`` is not an existing folder."""
        with self._lock:
            if self._folder is None:
                folder = local_folder(self.model)
                if folder is None:
                    raise EmbedderUnavailableError(
                        f"no static model named {self.model!r} on this machine; give a local folder",
                        hint=(
                            "Set knowledgebase.embedder.model to a folder holding a model2vec model "
                            "(config.json, model.safetensors, tokenizer.json); models are never downloaded."
                        ),
                    )
                self._folder = folder
            return self._folder

    @property
    def signature(self) -> str:
        """``model2vec:<folder name>:<digest12>:<dimensions>:whole``; the same in every process
        for the same model files."""
        with self._lock:
            if self._digest is None:
                self._digest = folder_digest(self.folder())
        return f"{self.provider}:{self.folder().name}:{self._digest[:12]}:{self.dimensions}:whole"

    @property
    def dimensions(self) -> int:
        """Vector length (loads the model: a static model loads in well under a second)."""
        return int(self._load().dim)

    @property
    def max_input_tokens(self) -> int:
        """:data:`NO_WINDOW_TOKENS`: static models have no input window."""
        return NO_WINDOW_TOKENS

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One unit float32 vector per text (zeros for a text without known tokens), in order;
        ``[]`` for no texts.

        Raises:
            EmbedderUnavailableError: see the class."""
        if not texts:
            return []
        model = self._load()
        try:
            matrix = model.encode(
                list(texts),
                max_length=None,
                batch_size=self.batch_size,
                show_progress_bar=False,
                use_multiprocessing=False,
            )
        except Exception as exc:  # noqa: BLE001 - numpy / tokenizers errors must not cross the port
            raise EmbedderUnavailableError(
                f"the static model in {self.folder()} failed: {type(exc).__name__}: {exc}",
                hint="Check the model folder, or try another model.",
            ) from None
        return [to_vector(row) for row in unit_rows(matrix.reshape(len(texts), -1))]

    def embed_query(self, text: str) -> Vector:
        """The vector of a search query (as a document: static models have no query prompt).

        Raises:
            EmbedderUnavailableError: see the class."""
        return self.embed_documents([text])[0]

    def coverage(self, text: str) -> float:
        """Share (0..1) of ``text``'s letters the vocabulary reads in pieces of 2+ letters (the
        model's ``tokenizer.json``; the model is not loaded)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = ModelTokenizer.from_file(self.folder() / "tokenizer.json")
        return self._tokenizer.coverage(text)

    def _load(self) -> Any:
        with self._lock:
            if self._static is not None:
                return self._static
            folder = self.folder()
            hf_offline()
            try:
                from model2vec import StaticModel
            except ImportError as exc:
                raise missing_library(exc, "the model2vec embedder") from None
            try:
                # force_download=False: with a folder that exists model2vec reads it and never asks the hub.
                self._static = StaticModel.from_pretrained(str(folder), force_download=False)
            except Exception as exc:  # noqa: BLE001 - any load failure makes the embedder unavailable
                raise EmbedderUnavailableError(
                    f"cannot load a static model from {folder}: {type(exc).__name__}: {exc}",
                    hint="Check that the folder holds a model2vec model (config.json, model.safetensors, tokenizer.json).",
                ) from None
            return self._static
