"""The :class:`~hermes_workspace.domain.ports.Decoder` adapter: strict UTF-8, byte-order marks, then
charset-normalizer detection. Never lossy: no ``errors="replace"``, no invented U+FFFD."""

from __future__ import annotations

import codecs
import re
from typing import Any

from charset_normalizer import from_bytes

from hermes_workspace.domain.errors import BinaryContentError, DecodeError

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 LE first: its BOM (FF FE 00 00) starts with the UTF-16 LE one (FF FE).
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
"""PEP 263's encoding declaration (also the Emacs/Vim ``-*- coding: x -*-`` form) in line 1 or 2."""

PREFERRED_ON_TIE = "cp1252"
"""Windows-1252, by far the most common legacy single-byte encoding. charset-normalizer often ranks
a Baltic or Central European code page first for short Western European text (``très`` decoded as
cp1257 reads ``trčs``); when Windows-1252 is nearly as plausible (see :data:`NEAR_BEST`), it wins."""

NEAR_BEST = 0.1
"""How far (in charset-normalizer's chaos and coherence, both 0..1) a Windows-1252 reading may be
from the best guess and still be preferred to it. Measured on French Latin-1 text: best cp1257 with
chaos 0.07 / coherence 0.50, cp1252 with 0.14 / 0.50."""


class CharsetDecoder:
    """Decodes file bytes to ``str`` without loss.

    ``min_coherence`` (0.0..1.0, default 0.5 as in seed 000): the least charset-normalizer
    coherence accepted for a detected encoding.

    Order: (1) a byte-order mark decides: UTF-32 LE/BE, UTF-8, UTF-16 LE/BE, decoded strictly, BOM
    removed (FF FE 00 00 that is not valid UTF-32 is tried as UTF-16 LE); (2) without a UTF-16/32
    BOM, a NUL byte means binary; (3) strict UTF-8; (4) an encoding declared in the first two lines
    (PEP 263 ``# -*- coding: koi8-r -*-``), decoded strictly; (5) charset-normalizer's best match, accepted if
    its coherence >= ``min_coherence``, ties between equally ranked code pages going to
    :data:`PREFERRED_ON_TIE`, then decoded strictly; output containing U+FFFD is refused unless the
    bytes really encode it (re-encoding gives back the same bytes).

    Raises (from :meth:`decode`):
        BinaryContentError: NUL bytes without a UTF-16/32 BOM, or a BOM-decoded text containing
            U+0000.
        DecodeError: invalid bytes after a BOM, no detected encoding, coherence below
            ``min_coherence``, or a detected encoding that does not decode the bytes strictly.
        ValueError: ``min_coherence`` outside 0.0..1.0 (from the constructor).
    """

    def __init__(self, min_coherence: float = 0.5) -> None:
        if not 0.0 <= min_coherence <= 1.0:
            raise ValueError(f"min_coherence must be between 0.0 and 1.0, got {min_coherence}")
        self.min_coherence = min_coherence

    def decode(self, data: bytes) -> str:
        """``data`` as text, without a byte-order mark. See the class docstring for the rules."""
        for bom, codec in _BOMS:
            if data.startswith(bom):
                text = self._decode_with_bom(data, bom, codec)
                if text is not None:
                    return text
        if b"\x00" in data:
            raise BinaryContentError(f"contains NUL bytes (first at byte {data.index(0)})")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            utf8_error = f"not UTF-8 ({exc.reason} at byte {exc.start})"
        declared = _declared_encoding(data)
        if declared is not None:
            return declared
        return self._detect(data, utf8_error)

    @staticmethod
    def _decode_with_bom(data: bytes, bom: bytes, codec: str) -> str | None:
        """Decode after ``bom`` with ``codec``; ``None`` lets a failed UTF-32 LE try UTF-16 LE."""
        if codec == "utf-8" and b"\x00" in data:
            raise BinaryContentError("starts with a UTF-8 byte-order mark but contains NUL bytes")
        try:
            text = data[len(bom) :].decode(codec)
        except UnicodeDecodeError as exc:
            if codec == "utf-32-le":
                return None
            raise DecodeError(
                f"starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()} "
                f"({exc.reason} at byte {exc.start + len(bom)})"
            ) from exc
        if "\x00" in text:
            raise BinaryContentError(f"decoded as {codec.upper()} but contains NUL characters")
        return text

    def _detect(self, data: bytes, utf8_error: str) -> str:
        matches = from_bytes(data)
        best = matches.best()
        if best is None:
            raise DecodeError(f"{utf8_error}, and charset detection found no encoding that fits")
        chosen = _prefer_cp1252(matches, best)
        if chosen.coherence < self.min_coherence:
            raise DecodeError(
                f"{utf8_error}; best guess {chosen.encoding} has coherence {chosen.coherence:.2f}, "
                f"below the minimum {self.min_coherence:.2f}"
            )
        candidates = [chosen.encoding]
        if PREFERRED_ON_TIE in chosen.could_be_from_charset and chosen.encoding != PREFERRED_ON_TIE:
            candidates.insert(0, PREFERRED_ON_TIE)
        failure: Exception | None = None
        for encoding in candidates:
            try:
                text = data.decode(encoding)
            except (UnicodeDecodeError, LookupError) as exc:
                failure = exc
                continue
            if "\ufffd" in text and text.encode(encoding) != data:
                failure = ValueError(f"decoding as {encoding} produces U+FFFD replacement characters")
                continue
            return text
        raise DecodeError(
            f"{utf8_error}; detected {best.encoding} (coherence {best.coherence:.2f}) does not decode it "
            f"without loss: {failure}"
        ) from failure


def _prefer_cp1252(matches: Any, best: Any) -> Any:
    """The Windows-1252 match when it is within :data:`NEAR_BEST` of ``best`` in both chaos and
    coherence, else ``best``."""
    for match in matches:
        if (
            PREFERRED_ON_TIE in (match.encoding, *match.could_be_from_charset)
            and match.chaos <= best.chaos + NEAR_BEST
            and match.coherence >= best.coherence - NEAR_BEST
        ):
            return match
    return best


def _declared_encoding(data: bytes) -> str | None:
    """The text decoded with the codec its first two lines declare, or ``None`` when there is no
    declaration, the codec is unknown, or the bytes do not decode strictly with it."""
    head = b"\n".join(data.split(b"\n", 2)[:2])
    match = _CODING_COOKIE.search(head)
    if match is None:
        return None
    try:
        codec = codecs.lookup(match.group(1).decode("ascii"))
        return data.decode(codec.name)
    except (LookupError, UnicodeDecodeError, UnicodeError):
        return None
