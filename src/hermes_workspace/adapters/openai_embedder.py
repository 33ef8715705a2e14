"""The ``openai`` embedder: any endpoint speaking OpenAI's ``POST /embeddings`` (OpenAI itself,
Ollama, vLLM, llama.cpp, LM Studio, text-embeddings-inference...).

Chunk text leaves the machine, so nothing is sent unless the user wrote the endpoint's URL into
``knowledgebase.embedder.consent``. Standard library only (``urllib``): no new dependency.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from hermes_workspace.domain.errors import ConsentRequiredError, EmbedderUnavailableError
from hermes_workspace.domain.semantic import Vector, mean_of_unit_vectors, token_windows, unit

MAX_INPUT_TOKENS = 8191
"""What OpenAI's embedding models read per input (tokens of their tokenizer)."""

WINDOW_CHARS = 24_000
"""Texts longer than this many characters are sent in windows of this many characters (no
tokenizer of the remote model is at hand here; ~3 characters per token for code and non-English
text keeps a window under :data:`MAX_INPUT_TOKENS`), overlapping by :data:`WINDOW_OVERLAP_CHARS`,
and represented by the character-weighted mean of the window vectors."""
WINDOW_OVERLAP_CHARS = 200

PROBE_TEXT = "dimensions"
"""Embedded once, after the consent check, when the vector length is asked before any embedding
and the configuration does not give it."""

_MAX_RETRY_AFTER_S = 5.0
_DEFAULT_BACKOFF_S = 0.5
_MAX_MESSAGE_CHARS = 300


class OpenAICompatibleEmbedder:
    """An :class:`~hermes_workspace.domain.ports.Embedder` calling ``POST {base_url}/embeddings``
    with ``{"model", "input": [texts], "encoding_format": "float"}`` (plus ``"dimensions"`` when
    configured > 0) and ``Authorization: Bearer <key>`` when the environment variable
    ``api_key_env`` holds a key (local servers often need none: no header is sent then).

    ``base_url`` up to the API version (``https://api.openai.com/v1``); ``dimensions`` 0 means the
    model's own (learned from the first answer); ``timeout_s`` per HTTP request (seconds);
    ``batch_size`` inputs per request; ``consent`` must equal ``base_url`` (trailing ``/``
    ignored) or nothing is sent.

    Vectors: float32, normalized here to unit length (whatever the server returns), in the order of
    the texts (answers are matched by their ``index``). Texts longer than :data:`WINDOW_CHARS`
    characters are windowed by characters (see there). One retry on HTTP 429 and 5xx, after the
    server's ``Retry-After`` (at most 5 s) or 0.5 s. The key is never logged nor put in a message.

    Raises (embed calls, ``dimensions`` and ``signature`` when the length must be learned):
        ConsentRequiredError: ``consent`` does not name ``base_url``; nothing was sent.
        EmbedderUnavailableError: connection refused, timeout, an HTTP error (with the server's
            message; 401/403 hint at ``api_key_env``), or an answer that is not JSON, lacks
            vectors, or holds vectors of the wrong count, length or non-finite numbers.
    """

    provider = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        dimensions: int = 0,
        timeout_s: float = 30.0,
        batch_size: int = 64,
        consent: str = "",
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if dimensions < 0:
            raise ValueError(f"dimensions must be >= 0, got {dimensions}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self.base_url = base_url.strip().rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.batch_size = batch_size
        self.consent = consent.strip()
        self._configured_dimensions = dimensions
        self._learned_dimensions = 0
        self._lock = threading.Lock()
        self.requests_sent = 0
        """HTTP requests made so far (retries included)."""

    # -- Embedder ----------------------------------------------------------------------------

    @property
    def signature(self) -> str:
        """``openai:<base_url>:<model>:<dimensions>``. May embed :data:`PROBE_TEXT` (after the
        consent check) to learn the dimensions; raises as the embed calls."""
        return f"{self.provider}:{self.base_url}:{self.model}:{self.dimensions}"

    @property
    def dimensions(self) -> int:
        """The configured dimensions, else the length of the vectors the endpoint returned
        (embedding :data:`PROBE_TEXT` once if nothing was embedded yet)."""
        if self._configured_dimensions:
            return self._configured_dimensions
        if not self._learned_dimensions:
            self.embed_query(PROBE_TEXT)
        return self._learned_dimensions

    @property
    def max_input_tokens(self) -> int:
        """:data:`MAX_INPUT_TOKENS` (the remote model's tokens); windowing here is by characters."""
        return MAX_INPUT_TOKENS

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One unit float32 vector per text, in order (``[]`` for none), in requests of at most
        ``batch_size`` inputs. All or nothing: an error in any request raises and returns nothing.

        Raises:
            ConsentRequiredError, EmbedderUnavailableError: see the class."""
        self._check_consent()
        if not texts:
            return []
        pieces: list[str] = []
        parts: list[list[tuple[int, int]]] = []
        for text in texts:
            spans = token_windows(len(text), WINDOW_CHARS, WINDOW_OVERLAP_CHARS) or [(0, 0)]
            parts.append([(len(pieces) + i, end - start) for i, (start, end) in enumerate(spans)])
            pieces.extend(text[start:end] for start, end in spans)
        rows: list[list[float]] = []
        for start in range(0, len(pieces), self.batch_size):
            rows.extend(self._request(pieces[start : start + self.batch_size]))
        vectors = []
        for entry in parts:
            if len(entry) == 1:
                vectors.append(unit(rows[entry[0][0]]))
            else:
                vectors.append(mean_of_unit_vectors([unit(rows[i]) for i, _ in entry], [n for _, n in entry]))
        return vectors

    def embed_query(self, text: str) -> Vector:
        """The vector of a search query. Raises as :meth:`embed_documents`."""
        return self.embed_documents([text])[0]

    def coverage(self, text: str) -> float:
        """1.0: the remote model's tokenizer is not at hand, so every text counts as readable."""
        return 1.0

    # -- HTTP --------------------------------------------------------------------------------

    def _check_consent(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise EmbedderUnavailableError(
                f"the embedding endpoint {self.base_url!r} is not an http(s) URL",
                hint="Set knowledgebase.embedder.base_url, e.g. https://api.openai.com/v1.",
            )
        if not self.consent or self.consent.rstrip("/") != self.base_url:
            raise ConsentRequiredError(
                f"sending chunk text to {self.base_url} needs your consent; nothing was sent",
                hint=(
                    f"To allow it, set knowledgebase.embedder.consent: {self.base_url} in config.yaml "
                    "(the same URL as base_url)."
                ),
            )

    def _key(self) -> str:
        return os.environ.get(self.api_key_env, "").strip() if self.api_key_env else ""

    def _request(self, inputs: list[str]) -> list[list[float]]:
        """The raw vectors for ``inputs``, validated, in input order."""
        payload: dict[str, Any] = {"model": self.model, "input": inputs, "encoding_format": "float"}
        if self._configured_dimensions:
            payload["dimensions"] = self._configured_dimensions
        body = json.dumps(payload).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "hermes-workspace"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.base_url}/embeddings"
        for attempt in (1, 2):
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            with self._lock:
                self.requests_sent += 1
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    raw = response.read()
                break
            except urllib.error.HTTPError as exc:
                status = exc.code
                detail = _server_message(exc, key)
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                exc.close()
                if attempt == 1 and (status == 429 or status >= 500):
                    time.sleep(_backoff(retry_after))
                    continue
                raise self._http_error(status, detail) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, TimeoutError):
                    message = f"the embedding endpoint {url} did not answer within {self.timeout_s:g} s"
                else:
                    message = f"cannot reach the embedding endpoint {url}: {_redact(str(reason), key)}"
                raise EmbedderUnavailableError(
                    message,
                    hint="Check that the server is running and knowledgebase.embedder.base_url is right "
                    "(raise timeout_s for a slow server).",
                ) from None
        return self._vectors(raw, len(inputs), url)

    def _http_error(self, status: int, detail: str) -> EmbedderUnavailableError:
        message = f"the embedding endpoint {self.base_url} answered HTTP {status}" + (f": {detail}" if detail else "")
        if status in (401, 403):
            hint = (
                f"Check the API key in the environment variable {self.api_key_env} "
                "(knowledgebase.embedder.api_key_env names the variable)."
            )
        elif status == 404:
            hint = "Check knowledgebase.embedder.base_url (up to /v1) and model."
        elif status == 429:
            hint = "The endpoint is rate limiting; run the command again later or lower batch_size."
        else:
            hint = "Check knowledgebase.embedder.model and the server's log."
        return EmbedderUnavailableError(message, hint=hint)

    def _vectors(self, raw: bytes, count: int, url: str) -> list[list[float]]:
        def bad(why: str) -> EmbedderUnavailableError:
            return EmbedderUnavailableError(
                f"the embedding endpoint {url} gave an unusable answer: {why}",
                hint="Check that base_url points at an OpenAI-compatible embeddings API and model is an embedding model.",
            )

        try:
            document = json.loads(raw)
        except ValueError:
            raise bad("not JSON") from None
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list):
            raise bad("no 'data' list")
        if len(data) != count:
            raise bad(f"{len(data)} vectors for {count} inputs")
        by_index: dict[int, list[float]] = {}
        for position, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise bad("an item without an 'embedding' list")
            index = item.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or index in by_index:
                raise bad(f"bad or repeated index {index!r}")
            values = item["embedding"]
            if not values or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in values
            ):
                raise bad("an embedding that is empty or holds something other than finite numbers")
            by_index[index] = [float(x) for x in values]
        rows = [by_index[i] for i in range(count)]
        expected = self._configured_dimensions or self._learned_dimensions or len(rows[0])
        if any(len(row) != expected for row in rows):
            raise bad(f"vectors of {sorted({len(r) for r in rows})} dimensions, expected {expected}")
        if any(not any(row) for row in rows):
            raise bad("a zero vector")
        self._learned_dimensions = expected
        return rows


def _backoff(retry_after: str | None) -> float:
    """Seconds to wait before the retry: the server's ``Retry-After`` seconds, at most 5."""
    try:
        seconds = float(retry_after) if retry_after is not None else _DEFAULT_BACKOFF_S
    except ValueError:
        seconds = _DEFAULT_BACKOFF_S  # an HTTP date: not worth parsing for a 5 s cap
    if not math.isfinite(seconds):
        seconds = _DEFAULT_BACKOFF_S
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER_S)


def _server_message(exc: urllib.error.HTTPError, key: str) -> str:
    """The error message of an HTTP error body (OpenAI: ``{"error": {"message": ...}}``), cut
    short, without the key should the server echo it."""
    try:
        raw = exc.read(64 * 1024)
    except OSError:
        return ""
    text = raw.decode("utf-8", "replace")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        error = document.get("error", document)
        if isinstance(error, dict):
            text = str(error.get("message") or error.get("detail") or error)
        else:
            text = str(error)
    text = " ".join(text.split())
    if len(text) > _MAX_MESSAGE_CHARS:
        text = text[: _MAX_MESSAGE_CHARS - 3] + "..."
    return _redact(text, key)


def _redact(text: str, key: str) -> str:
    return text.replace(key, "***") if key else text
