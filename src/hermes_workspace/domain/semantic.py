"""Dense (semantic) retrieval: the vocabulary shared by embedders, vector indexes and search.

Units: a :data:`Vector` is float32, unit length (L2 norm 1), so cosine similarity is the dot
product; model input lengths are in the model's own tokens (word pieces), never in words.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hermes_workspace.domain.constants import CODE_LANGUAGES
from hermes_workspace.domain.paths import display_name

Vector = array
"""A float32 vector (``array('f')``), unit length. The standard library's ``array`` keeps numpy
and every other library type out of the ports; ``vector.tobytes()`` is the little-endian float32
blob sqlite-vec reads."""

SearchMode = Literal["keyword", "semantic", "hybrid"]
"""How a search finds candidates: BM25 only, nearest vectors only, or both fused with RRF."""

SEARCH_MODES: tuple[SearchMode, ...] = ("keyword", "semantic", "hybrid")

SemanticStatus = Literal["disabled", "consent_required", "indexing", "partial", "ready", "unavailable"]
"""What the semantic side could contribute to a response (seed 003):

- ``disabled``: no embedder is configured (keyword search only, by choice);
- ``consent_required``: a remote embedder is configured but the user has not agreed to send text
  to it; nothing was sent;
- ``indexing``: no chunk has a vector yet (run ``index``);
- ``partial``: some chunks have vectors, others are still waiting (an interrupted or running
  ``index``); semantic hits come from the embedded part only;
- ``ready``: every chunk the model can read has a vector of the configured model;
- ``unavailable``: an embedder is configured but cannot run (extra not installed, model missing,
  endpoint down, vectors made by another model); results are keyword-only.
"""

COVERAGE_THRESHOLD = 0.5
"""Below this share of a text's letters read as multi-letter vocabulary pieces (see
:func:`letter_coverage`), the model is taken not to read the text's language: such chunks are not
embedded and such queries are answered by keyword search alone. Measured with all-MiniLM-L6-v2:
English queries and passages 0.89-1.0, Python source 0.65-1.0, Arabic and Russian 0.0-0.05."""


@dataclass(frozen=True, slots=True)
class EmbeddingJob:
    """A chunk that has no vector yet. ``chunk_id`` is the index's own handle for the chunk
    (valid for the current index run), ``text`` what is embedded (:func:`chunk_embedding_input`) and
    ``key`` its digest (:func:`embedding_key`): chunks with equal ``key`` share one vector."""

    chunk_id: int
    text: str
    key: str


@dataclass(frozen=True, slots=True)
class VectorStatus:
    """How far the vector index is: ``chunks`` in the index, ``embedded`` with a vector,
    ``unreadable`` left without one on purpose (the model does not read their language),
    ``pending`` still waiting; ``vectors`` distinct vectors stored (identical chunks share one);
    ``signature`` of the embedder that made them (``None`` before the first); ``last_error``:
    ``{"code", "message", "hint"}`` of the failure that stopped the last embedding pass, ``None``
    after a pass that finished."""

    chunks: int
    embedded: int
    unreadable: int
    pending: int
    vectors: int
    signature: str | None
    last_error: dict[str, Any] | None = None

    def semantic_status(self) -> SemanticStatus:
        """``ready`` when nothing is pending, ``indexing`` when nothing is embedded yet (and
        something is pending), else ``partial``."""
        if self.pending == 0:
            return "ready"
        if self.embedded == 0:
            return "indexing"
        return "partial"

    def to_json(self) -> dict[str, object]:
        """``{"chunks", "embedded", "unreadable", "pending", "vectors", "signature", "last_error"}``."""
        return {
            "chunks": self.chunks,
            "embedded": self.embedded,
            "unreadable": self.unreadable,
            "pending": self.pending,
            "vectors": self.vectors,
            "signature": self.signature,
            "last_error": self.last_error,
        }


def embedding_input(section: str | None, content: str) -> str:
    """The text embedded for a chunk: its context line (callers pass the breadcrumb, a heading
    path or qualified name, else the section line: what the chunk is about) then its content. The path is left out so that a moved or
    copied file reuses its vectors; :func:`chunk_embedding_input` adds it for code chunks only."""
    content = content.strip()
    if section and section.strip() and section.strip() not in content[: len(section) + 8]:
        return f"{section.strip()}\n{content}"
    return content


PLAIN_INPUT = "1"
"""Input version of :func:`chunk_embedding_input` without the code header: breadcrumb and content
(what every index made before the version was recorded holds)."""
CODE_HEADER_INPUT = "2"
"""Input version with :func:`code_chunk_header` before the text of code chunks (issue 12)."""


def embedding_input_version(code_header: bool) -> str:
    """The version of what :func:`chunk_embedding_input` gives the embedder with ``code_header``
    on or off (:data:`PLAIN_INPUT`, :data:`CODE_HEADER_INPUT`). A vector index stores it next to
    the embedder's signature: when it changes, every stored vector is dropped and the chunks are
    embedded again, as for a new model."""
    return CODE_HEADER_INPUT if code_header else PLAIN_INPUT


def code_chunk_header(relative_path: str, language: str, start_line: int, end_line: int) -> str:
    """The lines put before a code chunk's text for the embedder (seed 002, "File metadata header
    in indexed content"): ``File: <path relative to its root>\nLanguage: <language>\nLines:
    <start>-<end>\n\n``. Only the embedder sees it: the stored chunk, its keyword index and its
    line range are unchanged."""
    return f"File: {relative_path}\nLanguage: {language}\nLines: {start_line}-{end_line}\n\n"


def chunk_embedding_input(
    section: str | None, content: str, *, path: str, root: str, start_line: int, end_line: int,
    code_header: bool,
) -> str:
    """What is embedded for a chunk of the file ``path`` (absolute, ``/``-separated) under the
    root folder ``root``, lines ``start_line``-``end_line``: :func:`embedding_input`, preceded
    (when ``code_header``) by :func:`code_chunk_header` when the file's suffix is a code language
    (:data:`~hermes_workspace.domain.constants.CODE_LANGUAGES`: the language is the tree-sitter
    grammar name, ``python``, ``typescript``...). The header names the file, so code that moves
    is embedded again; prose (markdown, text, converted documents) has no header and keeps
    sharing vectors across copies."""
    body = embedding_input(section, content)
    if not code_header:
        return body
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    language = CODE_LANGUAGES.get(name[dot:].lower()) if dot > 0 else None
    if language is None:
        return body
    prefix = root.rstrip("/") + "/"
    relative = path[len(prefix):] if path.startswith(prefix) else name
    return code_chunk_header(display_name(relative), language, start_line, end_line) + body


def embedding_key(text: str) -> str:
    """SHA-256 hex digest of ``text`` (UTF-8): identical inputs are embedded once."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def token_windows(length: int, window: int, overlap: int) -> list[tuple[int, int]]:
    """Half-open ``(start, end)`` token ranges covering ``0..length`` with windows of at most
    ``window`` tokens, consecutive windows sharing ``overlap`` tokens; the last window ends at
    ``length``. One window when ``length <= window``; ``[]`` when ``length == 0``.

    Raises:
        ValueError: ``window < 1`` or not ``0 <= overlap < window``.
    """
    if window < 1 or not 0 <= overlap < window:
        raise ValueError(f"need window >= 1 and 0 <= overlap < window, got window={window}, overlap={overlap}")
    if length <= 0:
        return []
    if length <= window:
        return [(0, length)]
    step = window - overlap
    spans = []
    start = 0
    while True:
        end = min(start + window, length)
        spans.append((start, end))
        if end == length:
            return spans
        start += step


def mean_of_unit_vectors(vectors: Sequence[Sequence[float]], weights: Sequence[float] | None = None) -> Vector:
    """The (weighted) mean of ``vectors`` scaled back to unit length: how a text longer than the
    model's input is represented by its windows (weights = tokens per window), rather than by its
    first window alone. A zero mean gives a zero vector.

    Raises:
        ValueError: no vectors, vectors of different lengths, or a weight per vector missing.
    """
    if not vectors:
        raise ValueError("no vectors to combine")
    dims = len(vectors[0])
    if any(len(v) != dims for v in vectors):
        raise ValueError("vectors of different dimensions")
    weights = [1.0] * len(vectors) if weights is None else list(weights)
    if len(weights) != len(vectors):
        raise ValueError("one weight per vector is needed")
    total = [0.0] * dims
    for vector, weight in zip(vectors, weights):
        for i, x in enumerate(vector):
            total[i] += weight * x
    return unit(total)


def unit(values: Sequence[float]) -> Vector:
    """``values`` as a float32 :data:`Vector` of L2 norm 1 (a zero vector stays zero)."""
    norm = math.sqrt(sum(x * x for x in values))
    if norm == 0 or not math.isfinite(norm):
        return array("f", [0.0] * len(values))
    return array("f", [x / norm for x in values])


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Dot product of two unit vectors (their cosine similarity, -1..1)."""
    return float(sum(x * y for x, y in zip(a, b)))


def letter_coverage(text: str, pieces: Sequence[tuple[int, int]], unknown: Sequence[bool] | None = None) -> float:
    """Share (0..1) of the letters of ``text`` that a tokenizer read as pieces of two or more
    letters. ``pieces`` are the ``(start, end)`` character spans of the tokens; ``unknown`` flags
    tokens the vocabulary does not hold (``[UNK]``), whose letters never count as read.

    Why: a subword vocabulary that never saw a language falls back to one piece per letter (an
    English-trained BERT reads Arabic ``عبد`` as ``ع ##ب ##د``) or to ``[UNK]``, and the model's
    vectors for such text are noise. Text without letters (numbers, symbols) counts as read: 1.0.
    """
    letters = sum(1 for ch in text if ch.isalpha())
    if letters == 0:
        return 1.0
    read = 0
    for i, (start, end) in enumerate(pieces):
        if unknown is not None and unknown[i]:
            continue
        n = sum(1 for ch in text[start:end] if ch.isalpha())
        if n >= 2:
            read += n
    return min(1.0, read / letters)


@dataclass(slots=True)
class EmbeddingReport:
    """What an embedding pass did. Counts are chunks: ``embedded`` got a new vector from the
    model, ``reused`` the stored vector of an identical chunk, ``unreadable`` none because the
    model does not read their language; ``pending`` are still without a vector afterwards.
    ``reembedded`` is True when the embedder's signature changed and every old vector was dropped.
    ``status`` is the ``semantic_status`` after the pass; ``error`` the ``{"code", "message",
    "hint"}`` of the failure that stopped it, if any. ``seconds`` is wall time."""

    status: SemanticStatus
    signature: str | None = None
    embedded: int = 0
    reused: int = 0
    unreadable: int = 0
    pending: int = 0
    reembedded: bool = False
    seconds: float = 0.0
    error: dict[str, Any] | None = None
    vectors_pruned: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{"status", "signature", "embedded", "reused", "unreadable", "pending", "reembedded",
        "vectors_pruned", "seconds", "error"}``."""
        return {
            "status": self.status,
            "signature": self.signature,
            "embedded": self.embedded,
            "reused": self.reused,
            "unreadable": self.unreadable,
            "pending": self.pending,
            "reembedded": self.reembedded,
            "vectors_pruned": self.vectors_pruned,
            "seconds": round(self.seconds, 3),
            "error": self.error,
        }
