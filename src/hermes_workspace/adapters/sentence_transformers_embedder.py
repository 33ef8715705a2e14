"""The ``sentence-transformers`` embedder: any sentence-transformers model folder, run with torch.

Slower to start than the ``onnx`` provider (~6 s to import torch and load the model) but runs
every model sentence-transformers runs (Dense heads, other poolings). Texts are tokenized here, cut
into token windows and fed to the model as token ids, so long texts are read whole, the same way
the ``onnx`` provider reads them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from hermes_workspace.adapters._model_folder import ModelLayout, read_layout, resolve_model_folder
from hermes_workspace.adapters._model_libraries import hf_offline, missing_library, quiet_transformers
from hermes_workspace.adapters._model_tokenizer import ModelTokenizer
from hermes_workspace.adapters._numpy_vectors import pad_batch, unit_rows
from hermes_workspace.adapters._windowed_embedder import WindowedTransformerEmbedder
from hermes_workspace.domain.errors import EmbedderUnavailableError


class SentenceTransformersEmbedder(WindowedTransformerEmbedder):
    """An :class:`~hermes_workspace.domain.ports.Embedder` over
    ``sentence_transformers.SentenceTransformer(folder, device="cpu")``.

    ``model``: ``""`` / ``"all-MiniLM-L6-v2"`` / ``"sentence-transformers/all-MiniLM-L6-v2"``
    (the bundled copy) or a local folder (``~`` expanded); never downloaded. ``batch_size``:
    windows per model call.

    Vectors: float32, unit length (the model's ``sentence_embedding``, normalized). A text of more
    than ``max_input_tokens`` minus the special tokens (word pieces) is read in windows of that
    many tokens overlapping by 32 and represented by the token-weighted mean of the window vectors.

    Building one imports nothing heavy; ``coverage`` needs only ``tokenizer.json``; the first embed
    call (or ``dimensions`` for a model whose files do not tell it) loads torch and the model.

    Raises (from any member but the constructor): :class:`EmbedderUnavailableError` for an unknown
    model, a missing library (hint: ``pip install 'hermes-workspace[semantic]'``) or a model that
    fails to load or run.
    """

    provider = "sentence-transformers"

    def __init__(self, model: str = "", *, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self._lock = threading.RLock()
        self._layout: ModelLayout | None = None
        self._tokenizer: ModelTokenizer | None = None
        self._model: Any = None
        self._use_types = True
        self._pad_id = 0

    def layout(self) -> ModelLayout:
        """The model folder's settings and digest (read once).

        Raises:
            EmbedderUnavailableError: unknown model."""
        with self._lock:
            if self._layout is None:
                self._layout = read_layout(*resolve_model_folder(self.model))
            return self._layout

    def _tokens(self) -> ModelTokenizer:
        with self._lock:
            if self._tokenizer is None:
                path = self.layout().transformer_dir / "tokenizer.json"
                if path.is_file():
                    self._tokenizer = ModelTokenizer.from_file(path)
                else:
                    backend = getattr(self._load().tokenizer, "backend_tokenizer", None)
                    if backend is None:
                        raise EmbedderUnavailableError(
                            f"the model {self.layout().name} has no fast tokenizer",
                            hint="Use a model saved with a fast tokenizer (tokenizer.json).",
                        )
                    from tokenizers import Tokenizer

                    # A copy: padding and truncation are turned off on it, the model's stays as is.
                    self._tokenizer = ModelTokenizer(Tokenizer.from_str(backend.to_str()))
            return self._tokenizer

    @property
    def signature(self) -> str:
        """``sentence-transformers:<name>:<digest12>:<dimensions>:w<window>o<overlap>``; the same
        in every process for the same model files."""
        layout = self.layout()
        window, overlap = self._window()
        return f"{self.provider}:{layout.name}:{layout.short_digest}:{self.dimensions}:w{window}o{overlap}"

    @property
    def dimensions(self) -> int:
        """Vector length: from the config files, else from the loaded model."""
        layout = self.layout()
        if layout.dimensions is not None:
            return layout.dimensions
        model = self._load()
        getter = getattr(model, "get_sentence_embedding_dimension", None)
        dims = getter() if getter is not None else None
        return dims if isinstance(dims, int) and dims > 0 else len(self.embed_query(""))

    def _run(self, batch: list[Sequence[int]]) -> Any:
        import torch

        input_ids, mask = pad_batch(batch, self._pad_id)
        features = {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(mask)}
        if self._use_types:
            features["token_type_ids"] = torch.zeros_like(features["input_ids"])
        try:
            with torch.inference_mode():
                pooled = self._model(features)["sentence_embedding"]
        except Exception as exc:  # noqa: BLE001 - torch and transformers raise many types; none may leak
            raise EmbedderUnavailableError(
                f"the model {self.layout().name} failed: {type(exc).__name__}: {exc}",
                hint="Check the model folder, or try another model.",
            ) from None
        return unit_rows(pooled.float().numpy())

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            layout = self.layout()
            hf_offline()
            try:
                import torch  # noqa: F401
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise missing_library(exc, "the sentence-transformers embedder") from None
            try:
                with quiet_transformers():
                    model = SentenceTransformer(str(layout.folder), device="cpu", local_files_only=True)
                model.eval()
            except Exception as exc:  # noqa: BLE001 - any load failure makes the embedder unavailable
                raise EmbedderUnavailableError(
                    f"cannot load the model in {layout.folder}: {type(exc).__name__}: {exc}",
                    hint="Check that the folder holds a complete sentence-transformers model.",
                ) from None
            tokenizer = getattr(model, "tokenizer", None)
            names = getattr(tokenizer, "model_input_names", None)
            self._use_types = names is None or "token_type_ids" in names
            pad = getattr(tokenizer, "pad_token_id", None)
            self._pad_id = pad if isinstance(pad, int) and pad >= 0 else 0
            self._model = model
            return model
