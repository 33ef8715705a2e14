"""Token counting for budgets: OpenAI's ``o200k_base`` encoding, offline, with tiktoken.

tiktoken downloads an encoding's rank file on first use. We ship that file as package data
(``hermes_workspace/data/o200k_base.tiktoken``; origin and licence in ``data/README.md``), check it
against the SHA-256 that tiktoken itself checks downloads against, parse it with tiktoken's own
loader (:func:`tiktoken.load.load_tiktoken_bpe`) and build the :class:`tiktoken.Encoding` with the
pattern and special tokens of tiktoken's own ``o200k_base`` constructor
(``tiktoken_ext.openai_public``), run with our loader in place of the download. Nothing goes to
the network and tiktoken's cache folder is neither read nor written. A missing or altered file is
an error (:class:`TokenizerUnavailableError`): budgets are never estimated from bytes.
"""

from __future__ import annotations

import hashlib
import os
import threading
import types
from pathlib import Path
from typing import Any

from hermes_workspace.domain.errors import TokenizerUnavailableError

ENCODING_NAME = "o200k_base"
"""The encoding counted: the tokenizer of GPT-4o, GPT-4.1, o1/o3/o4 and GPT-5 models."""

RANK_FILE = Path(__file__).resolve().parent.parent / "data" / "o200k_base.tiktoken"
"""The shipped rank file (``base64(token) rank`` per line)."""

RANK_FILE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of :data:`RANK_FILE`: the ``expected_hash`` of ``o200k_base`` in
``tiktoken_ext/openai_public.py`` (tiktoken 0.8 to 0.14 at least)."""

RANK_COUNT = 199_998
"""Ordinary tokens in o200k_base (ranks 0..199997; the special tokens come on top)."""

_CACHE_ENV = "TIKTOKEN_CACHE_DIR"
_lock = threading.Lock()
_encoding: Any = None


def file_sha256(path: Path = RANK_FILE) -> str:
    """SHA-256 hex digest of ``path`` (for ``doctor``). Raises ``OSError`` when it cannot be read."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _unavailable(message: str) -> TokenizerUnavailableError:
    return TokenizerUnavailableError(message)


def _load_ranks(path: Path) -> dict[bytes, int]:
    """The ranks of ``path`` after checking its hash, parsed by tiktoken's loader with its cache
    turned off. With the cache on, tiktoken copies even a local file into its cache folder (keyed
    by the path); with it off it skips its own hash check, so the hash is checked here first."""
    import tiktoken.load

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unavailable(f"the {ENCODING_NAME} rank file cannot be read: {path}: {exc.strerror or exc}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != RANK_FILE_SHA256:
        raise _unavailable(
            f"the {ENCODING_NAME} rank file {path} has SHA-256 {actual}, not the published {RANK_FILE_SHA256}"
        )
    # An empty TIKTOKEN_CACHE_DIR is tiktoken's documented switch for "no cache". The variable is
    # set only for this call, once per process, under the lock; hosts that start threads early
    # can call TiktokenCounter.preload() first, so that no other thread reads the environment
    # while it changes.
    previous = os.environ.get(_CACHE_ENV)
    os.environ[_CACHE_ENV] = ""
    try:
        ranks = tiktoken.load.load_tiktoken_bpe(str(path), expected_hash=RANK_FILE_SHA256)
    except (OSError, ValueError) as exc:
        raise _unavailable(f"the {ENCODING_NAME} rank file {path} cannot be parsed: {exc}") from None
    finally:
        if previous is None:
            del os.environ[_CACHE_ENV]
        else:
            os.environ[_CACHE_ENV] = previous
    if len(ranks) != RANK_COUNT:  # the file changed between the hash check and the parse
        raise _unavailable(f"the {ENCODING_NAME} rank file {path} holds {len(ranks)} ranks, not {RANK_COUNT}")
    return ranks


def _build(path: Path) -> Any:
    """The :class:`tiktoken.Encoding`: tiktoken's own ``o200k_base`` constructor, run with a copy of
    its module globals where ``load_tiktoken_bpe`` reads our file instead of downloading (the
    module itself is not changed, so other users of tiktoken in the process are unaffected)."""
    import tiktoken
    import tiktoken_ext.openai_public as public

    def local_ranks(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is not None and expected_hash != RANK_FILE_SHA256:
            raise _unavailable(
                f"this tiktoken expects {ENCODING_NAME} with SHA-256 {expected_hash}; the shipped file has "
                f"{RANK_FILE_SHA256}"
            )
        return _load_ranks(path)

    constructor = types.FunctionType(
        public.o200k_base.__code__, {**public.__dict__, "load_tiktoken_bpe": local_ranks}, "o200k_base"
    )
    spec = constructor()
    return tiktoken.Encoding(
        name=spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


class TiktokenCounter:
    """:class:`~hermes_workspace.domain.ports.TokenCounter` counting ``o200k_base`` tokens.

    The encoding is loaded at the first :meth:`count` (or :meth:`preload`), once per process and
    shared by every instance (thread-safe); about 0.3-0.5 s and 60 MB. ``rank_file``: another
    copy of the file (tests); it must have :data:`RANK_FILE_SHA256` too.

    Raises (from :meth:`count` and :meth:`preload`):
        TokenizerUnavailableError: the rank file is missing, unreadable or has another hash.
    """

    def __init__(self, rank_file: Path | None = None) -> None:
        self._rank_file = rank_file

    @property
    def name(self) -> str:
        """``"o200k_base"``."""
        return ENCODING_NAME

    def preload(self) -> None:
        """Load the encoding now (a no-op when it is loaded)."""
        self._encoding()

    def count(self, text: str) -> int:
        """Tokens of ``text`` in ``o200k_base``; special-token strings (``<|endoftext|>``) are
        counted as the ordinary text they are in a user's file, never refused."""
        return len(self._encoding().encode_ordinary(text))

    def _encoding(self) -> Any:
        global _encoding
        if self._rank_file is not None:
            return self._private()
        encoding = _encoding
        if encoding is None:
            with _lock:
                if _encoding is None:
                    _encoding = _build(RANK_FILE)
                encoding = _encoding
        return encoding

    def _private(self) -> Any:
        with _lock:
            cached = getattr(self, "_own", None)
            if cached is None:
                cached = self._own = _build(self._rank_file)  # type: ignore[arg-type]
            return cached
