"""The ``onnx`` embedder: a sentence-transformers model run with onnxruntime.

Why: loading torch and sentence-transformers takes ~6 s per process, which every CLI search
would pay for its query vector. The model's transformer is exported once (with torch and
transformers) to ``<cache_dir>/<model>-<digest12>/model.onnx``; every later process reads it with
onnxruntime, tokenizes with ``tokenizers`` and pools with numpy, and embeds its first query in
~0.4 s without importing torch. The vectors equal sentence-transformers' to ~1e-6.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._model_folder import ModelLayout, read_layout, resolve_model_folder, slug
from hermes_workspace.adapters._model_libraries import SEMANTIC_INSTALL, hf_offline, missing_library, quiet_transformers
from hermes_workspace.adapters._model_tokenizer import ModelTokenizer
from hermes_workspace.adapters._numpy_vectors import pad_batch, unit_rows
from hermes_workspace.adapters._windowed_embedder import WindowedTransformerEmbedder
from hermes_workspace.domain.errors import EmbedderUnavailableError

ONNX_OPSET = 17
_OUTPUT = "last_hidden_state"
_EXPORT_TOLERANCE = 1e-3
"""Largest difference between torch's and onnxruntime's token vectors accepted for a fresh export
(a faithful export differs by ~1e-6; a wrong trace by whole units)."""


class OnnxEmbedder(WindowedTransformerEmbedder):
    """An :class:`~hermes_workspace.domain.ports.Embedder` running a local sentence-transformers
    model (mean or CLS pooling) with onnxruntime.

    ``model``: ``""`` / ``"all-MiniLM-L6-v2"`` / ``"sentence-transformers/all-MiniLM-L6-v2"``
    (the bundled copy) or a local folder (``~`` expanded). ``cache_dir`` holds the ONNX exports,
    one folder per model identity. ``batch_size``: windows per model call. ``threads``:
    onnxruntime intra-op threads (``None``: one per core). ``quantize``: run an int8 copy of the
    export (onnxruntime's dynamic quantization, made once next to it): measured with MiniLM on
    this 2-core CPU (benchmarks/results/semantic.json), about 2x the throughput (191 vs 84 msmarco
    passages/s) for 0.004 less nDCG@10 in hybrid search (0.7961 vs 0.8003); its vectors differ, so
    it has its own signature.

    Vectors: float32, unit length, ``dimensions`` long (384 for MiniLM). A text of more than
    ``max_input_tokens - 2`` tokens (word pieces, specials excluded) is read in windows of that
    many tokens overlapping by 32, each wrapped in its special tokens, and represented by the
    token-weighted mean of the window vectors; nothing is cut.

    Building one reads no file and imports nothing heavy. ``signature``, ``dimensions``,
    ``max_input_tokens`` and ``coverage`` read the model folder's small files; the first embed call
    loads onnxruntime (and, once per model and cache folder, exports the ONNX file with torch,
    transformers and onnx, ~5 s; two processes racing both export, the last rename wins).

    Raises (from any member but the constructor): :class:`EmbedderUnavailableError` when the model
    is unknown or unsupported (pooling other than mean/CLS, extra modules such as Dense: use the
    ``sentence-transformers`` provider), a library is missing (hint: ``pip install
    'hermes-workspace[semantic]'``), or the export or the model fails.
    """

    provider = "onnx"

    def __init__(
        self,
        model: str = "",
        *,
        cache_dir: Path,
        batch_size: int = 32,
        threads: int | None = None,
        quantize: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1 or None, got {threads}")
        self.model = model
        self.cache_dir = Path(cache_dir).expanduser()
        self.batch_size = batch_size
        self.threads = threads
        self.quantize = quantize
        self._lock = threading.RLock()
        self._layout: ModelLayout | None = None
        self._tokenizer: ModelTokenizer | None = None
        self._session: Any = None
        self._inputs: frozenset[str] = frozenset()
        self._pad_id = 0

    # -- model files -------------------------------------------------------------------------

    def layout(self) -> ModelLayout:
        """The model folder's settings and digest (read once).

        Raises:
            EmbedderUnavailableError: unknown model, or one this adapter cannot reproduce."""
        with self._lock:
            if self._layout is None:
                folder, name = resolve_model_folder(self.model)
                layout = read_layout(folder, name)
                if layout.other_modules:
                    raise EmbedderUnavailableError(
                        f"the model {name} has sentence-transformers modules the onnx provider does not run: "
                        f"{', '.join(layout.other_modules)}",
                        hint="Set knowledgebase.embedder.provider to sentence-transformers for this model.",
                    )
                if layout.pooling is None:
                    raise EmbedderUnavailableError(
                        f"the model {name} pools token vectors by {layout.pooling_note}; the onnx provider "
                        "supports mean and cls",
                        hint="Set knowledgebase.embedder.provider to sentence-transformers for this model.",
                    )
                self._layout = layout
            return self._layout

    def _tokens(self) -> ModelTokenizer:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = ModelTokenizer.from_file(self.layout().transformer_dir / "tokenizer.json")
            return self._tokenizer

    @property
    def onnx_path(self) -> Path:
        """Where this model's ONNX export lives: ``cache_dir/<model-slug>-<digest12>/model.onnx``."""
        layout = self.layout()
        return self.cache_dir / f"{slug(layout.name)}-{layout.short_digest}" / "model.onnx"

    # -- Embedder ----------------------------------------------------------------------------

    @property
    def signature(self) -> str:
        """``onnx:<name>:<digest12>:<dimensions>:<pooling>:w<window>o<overlap>``, e.g.
        ``onnx:all-MiniLM-L6-v2:0123456789ab:384:mean:w254o32``. The same in every process for
        the same model files; cheap (no model load)."""
        layout = self.layout()
        window, overlap = self._window()
        int8 = ":int8" if self.quantize else ""
        return (
            f"{self.provider}:{layout.name}:{layout.short_digest}:{self.dimensions}:{layout.pooling}"
            f":w{window}o{overlap}{int8}"
        )

    @property
    def dimensions(self) -> int:
        """Vector length, from the model's config files (loads the model only if they do not say)."""
        layout = self.layout()
        if layout.dimensions is not None:
            return layout.dimensions
        return len(self.embed_query(""))

    # -- running -----------------------------------------------------------------------------

    def _run(self, batch: list[Sequence[int]]) -> Any:
        import numpy as np

        input_ids, mask = pad_batch(batch, self._pad_id)
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            hidden = self._session.run([_OUTPUT], feeds)[0]
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own untyped errors
            raise EmbedderUnavailableError(
                f"the onnx model {self.layout().name} failed: {type(exc).__name__}: {exc}",
                hint=f"Delete {self.onnx_path.parent} to export the model again.",
            ) from None
        if self.layout().pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(hidden.dtype)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return unit_rows(pooled)

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            layout = self.layout()
            self._tokens()
            try:
                import numpy  # noqa: F401
                import onnxruntime
            except ImportError as exc:
                raise missing_library(exc, "the onnx embedder") from None
            source = self.onnx_path
            exported = False
            if not source.is_file():
                export_onnx(layout.transformer_dir, source)
                exported = True
            path = self._quantized(source) if self.quantize else source
            try:
                session = _open_session(onnxruntime, path, self.threads)
            except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own untyped errors
                if exported and not self.quantize:
                    raise EmbedderUnavailableError(
                        f"onnxruntime cannot load {path}: {exc}", hint=f"Check the install: {SEMANTIC_INSTALL}"
                    ) from None
                # A damaged cache file (a disk that filled up, a hand edit): make it afresh once,
                # the int8 copy from a fresh export, never by renaming the float32 file.
                if self.quantize:
                    path.unlink(missing_ok=True)
                export_onnx(layout.transformer_dir, source)
                path = self._quantized(source) if self.quantize else source
                try:
                    session = _open_session(onnxruntime, path, self.threads)
                except Exception as again:  # noqa: BLE001 - as above
                    raise EmbedderUnavailableError(
                        f"onnxruntime cannot load {path}: {again}", hint=f"Check the install: {SEMANTIC_INSTALL}"
                    ) from None
            self._inputs = frozenset(i.name for i in session.get_inputs())
            self._pad_id = _pad_id(layout.transformer_dir)
            self._session = session


    def _quantized(self, source: Path) -> Path:
        """The int8 copy of ``source`` (``model.int8.onnx`` beside it), made once, atomically."""
        target = source.with_name("model.int8.onnx")
        if target.is_file():
            return target
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError as exc:
            raise missing_library(exc, "the quantized onnx embedder") from None
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            # The quantizer logs advice with a web address on the root logger: not for our users.
            logging.disable(logging.WARNING)
            try:
                quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8)
            finally:
                logging.disable(logging.NOTSET)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except Exception as exc:  # noqa: BLE001 - onnx / onnxruntime raise their own untyped errors
            tmp.unlink(missing_ok=True)
            raise EmbedderUnavailableError(
                f"cannot quantize {source} to int8: {type(exc).__name__}: {exc}",
                hint="Set knowledgebase.embedder.quantize to false, or check that the folder is writable.",
            ) from None
        return target


def _open_session(onnxruntime: Any, path: Path, threads: int | None) -> Any:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or 0
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: its warnings would land on the CLI's stderr
    # Idle intra-op threads spin by default, taking the cores that the indexer's own work and
    # the user's other programs need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _pad_id(folder: Path) -> int:
    """The model's padding token id (masked out, but position ids of RoBERTa-like models are
    computed from it, so it must be the model's own)."""
    import json

    try:
        value = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("pad_token_id")
    except (OSError, ValueError):
        value = None
    return value if isinstance(value, int) and value >= 0 else 0


def export_onnx(folder: Path, target: Path) -> None:
    """Export the transformer of the model in ``folder`` to ``target`` (ONNX opset 17; inputs
    ``input_ids``, ``attention_mask`` and, when the model takes it, ``token_type_ids``, int64 of
    shape (batch, sequence); output ``last_hidden_state``, float32 (batch, sequence, hidden)).

    The file is written next to ``target`` under a temporary name, checked against torch on a
    padded sample, then renamed over ``target`` (atomic: a concurrent reader sees no half file).
    Needs torch, transformers and onnx; runs offline (``local_files_only``).

    Raises:
        EmbedderUnavailableError: a library is missing, the weights cannot be loaded, the export
            fails or its output differs from torch's.
    """
    hf_offline()
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedderUnavailableError(
            f"exporting the model to ONNX (done once per model) needs the Python package "
            f"{getattr(exc, 'name', None) or exc!s}, which is not installed",
            hint=f"Install the semantic extra: {SEMANTIC_INSTALL}",
        ) from None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".model-", suffix=".onnx.tmp", dir=target.parent)
        os.close(fd)
    except OSError as exc:
        raise EmbedderUnavailableError(
            f"cannot write the ONNX export to {target.parent}: {exc.strerror or exc}",
            hint=f"Make {target.parent.parent} writable, or point HERMES_MODELS_DIR at a writable folder.",
        ) from None
    tmp = Path(tmp_name)
    try:
        with quiet_transformers():
            # eager attention: the fused SDPA kernels trace into graphs older opsets cannot hold.
            model = AutoModel.from_pretrained(str(folder), local_files_only=True, attn_implementation="eager")
        model = model.float().eval()
        takes_types = "token_type_ids" in inspect.signature(model.forward).parameters

        class LastHiddenState(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
                extra = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
                return self.inner(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state

        wrapper = LastHiddenState(model).eval()
        vocab = int(getattr(model.config, "vocab_size", 1000) or 1000)
        generator = torch.Generator().manual_seed(0)
        # A padded batch of two, so the trace keeps batch and mask handling general.
        input_ids = torch.randint(min(5, vocab - 1), vocab, (2, 9), generator=generator)
        mask = torch.ones_like(input_ids)
        mask[1, 6:] = 0
        sample = {"input_ids": input_ids, "attention_mask": mask}
        if takes_types:
            sample["token_type_ids"] = torch.zeros_like(input_ids)
        names = list(sample)
        axes = {name: {0: "batch", 1: "sequence"} for name in [*names, _OUTPUT]}
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            expected = wrapper(**sample).numpy()
            torch.onnx.export(
                wrapper,
                (),
                str(tmp),
                kwargs=sample,
                input_names=names,
                output_names=[_OUTPUT],
                dynamic_axes=axes,
                opset_version=ONNX_OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        _check_export(tmp, {k: v.numpy() for k, v in sample.items()}, expected)
        tmp.chmod(0o644)  # mkstemp makes it owner-only; the export holds nothing secret
        os.replace(tmp, target)
    except EmbedderUnavailableError:
        raise
    except Exception as exc:  # noqa: BLE001 - torch's exporter fails in many ways; none may leak
        raise EmbedderUnavailableError(
            f"could not export the model in {folder} to ONNX: {type(exc).__name__}: {exc}",
            hint="Set knowledgebase.embedder.provider to sentence-transformers for this model.",
        ) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _check_export(path: Path, sample: dict[str, Any], expected: Any) -> None:
    import numpy as np

    try:
        import onnxruntime
    except ImportError as exc:
        raise missing_library(exc, "the onnx embedder") from None
    session = _open_session(onnxruntime, path, 1)
    got = session.run([_OUTPUT], sample)[0]
    mask = sample["attention_mask"][:, :, None].astype(bool)
    error = float(np.max(np.abs(np.where(mask, got - expected, 0.0))))
    if not error <= _EXPORT_TOLERANCE:
        raise EmbedderUnavailableError(
            f"the ONNX export differs from the torch model by {error:.3g}",
            hint="Set knowledgebase.embedder.provider to sentence-transformers for this model.",
        )
