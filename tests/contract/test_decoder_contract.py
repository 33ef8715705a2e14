"""The Decoder contract, run against the fake (strict UTF-8 only) and CharsetDecoder.

What both promise: UTF-8 round trips, a UTF-8 byte-order mark is removed, NUL bytes are binary,
the optional ``hint`` keyword is accepted and changes none of that, any bytes give text or a
``WorkspaceError`` (never another exception), and whatever else happens the output never holds a
U+FFFD that the bytes did not encode. Whether
non-UTF-8 text is decoded (CharsetDecoder) or refused (the fake) is adapter-specific:
tests/unit/test_charset_decoder.py.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_workspace.adapters.charset_decoder import CharsetDecoder
from hermes_workspace.adapters.memory import Utf8Decoder
from hermes_workspace.domain.errors import BinaryContentError, DecodeError, WorkspaceError
from hermes_workspace.domain.ports import Decoder


def random_bytes(seed: int, count: int, low: int, high: int | None = None) -> bytes:
    """``count`` reproducible random bytes in ``range(low, high)`` (``range(low)`` if no ``high``)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(low, high) if high is not None else rng.randrange(low) for _ in range(count))


DECODERS = {"utf8-fake": Utf8Decoder, "charset": CharsetDecoder}


@pytest.fixture(params=sorted(DECODERS))
def decoder(request: pytest.FixtureRequest) -> Decoder:
    return DECODERS[request.param]()


def test_satisfies_the_protocol(decoder: Decoder) -> None:
    assert isinstance(decoder, Decoder)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain ascii\n",
        "café naïve résumé\r\nline two\n",
        "日本語のテキスト\n",
        "emoji 🙂 and math ∑\n",
        "a literal replacement character \ufffd is kept\n",
        "no trailing newline",
    ],
)
def test_utf8_round_trips(decoder: Decoder, text: str) -> None:
    assert decoder.decode(text.encode("utf-8")) == text


@given(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))))
def test_any_utf8_text_without_nul_round_trips(text: str) -> None:
    text = text.lstrip("\ufeff")
    for decoder_class in DECODERS.values():
        assert decoder_class().decode(text.encode("utf-8")) == text


def test_utf8_bom_is_removed(decoder: Decoder) -> None:
    assert decoder.decode(b"\xef\xbb\xbfhello caf\xc3\xa9\n") == "hello café\n"


@pytest.mark.parametrize(
    "data",
    [
        b"abc\x00def",
        b"\x00",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        random_bytes(7, 4096, 256) + b"\x00",
    ],
    ids=["nul-in-text", "single-nul", "png-header", "random-binary"],
)
def test_nul_bytes_are_binary(decoder: Decoder, data: bytes) -> None:
    with pytest.raises(BinaryContentError) as info:
        decoder.decode(data)
    assert isinstance(info.value, WorkspaceError)
    assert info.value.code == "binary_content"


@pytest.mark.parametrize(
    "data",
    [
        "Le café est près de la gare, où les élèves déjeunent. “Quotes” and it’s fine.\n".encode("cp1252"),
        b"caf\xe9",
        b"\xc3\x28 invalid two-byte sequence",
        b"truncated \xe2\x82",
        random_bytes(3, 300, 0x80, 0x100),
    ],
    ids=["cp1252-paragraph", "cp1252-word", "bad-continuation", "truncated", "random-high-bytes"],
)
def test_non_utf8_is_refused_or_decoded_without_replacement_characters(decoder: Decoder, data: bytes) -> None:
    try:
        text = decoder.decode(data)
    except DecodeError as exc:
        assert exc.code == "encoding_error"
        assert exc.message
    else:
        assert "\ufffd" not in text
        assert isinstance(text, str)


HINTS = [None, "cp1252", "koi8_r", "shift_jis", "no-such-codec"]


@pytest.mark.parametrize("hint", HINTS)
def test_a_hint_does_not_change_utf8_or_binary(decoder: Decoder, hint: str | None) -> None:
    assert decoder.decode("café naïve 日本語\n".encode(), hint=hint) == "café naïve 日本語\n"
    assert decoder.decode(b"\xef\xbb\xbfhello\n", hint=hint) == "hello\n"
    with pytest.raises(BinaryContentError):
        decoder.decode(b"caf\xe9\x00", hint=hint)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300), hint=st.sampled_from(HINTS))
def test_any_bytes_give_text_or_a_workspace_error(data: bytes, hint: str | None) -> None:
    for decoder_class in DECODERS.values():
        try:
            text = decoder_class().decode(data, hint=hint)
        except WorkspaceError as exc:
            assert exc.code in ("encoding_error", "binary_content")
            continue
        assert isinstance(text, str)
        if "\ufffd" in text:
            assert any(form in data for form in REPLACEMENT_CHARACTER_FORMS)


REPLACEMENT_CHARACTER_FORMS = [
    "\ufffd".encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "gb18030")
]
"""U+FFFD as bytes in every encoding a decoder may read it from."""
