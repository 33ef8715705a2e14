"""A model's ``tokenizers`` tokenizer as the local transformer embedders use it: token ids without
special tokens and without cutting, the special tokens a text is wrapped in, and the share of a
text's letters the vocabulary reads (coverage). "Tokens" are the model's own word pieces.
``tokenizers`` is imported only when a tokenizer is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._model_libraries import missing_library
from hermes_workspace.domain.errors import EmbedderUnavailableError
from hermes_workspace.domain.semantic import letter_coverage


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
