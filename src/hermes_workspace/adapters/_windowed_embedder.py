"""What the two local transformer embedders (``onnx``, ``sentence-transformers``) share: cutting
texts longer than the model's input into overlapping token windows, running the windows in
batches sorted by length, and combining each text's windows into one vector
(:class:`WindowedTransformerEmbedder`).

Units: "tokens" are the model's own word pieces. Nothing here imports a heavy library at module
import time, so building an adapter stays cheap and a keyword-only search never pays for them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_workspace.adapters._model_folder import ModelLayout, document_prompt, query_prompt
from hermes_workspace.adapters._model_tokenizer import ModelTokenizer
from hermes_workspace.adapters._numpy_vectors import to_vector
from hermes_workspace.domain.semantic import Vector, mean_of_unit_vectors, token_windows

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

WINDOW_OVERLAP = 32
"""Tokens shared by consecutive windows of a text longer than the model's input, so a sentence cut
at a window edge is read whole by one of the two windows."""


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
