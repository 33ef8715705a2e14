"""CharsetDecoder specifics: byte-order marks, charset-normalizer detection, the coherence threshold,
the cp1252 tie-break and the U+FFFD guard. The shared contract is in
tests/contract/test_decoder_contract.py.

What charset-normalizer 3.x does with these inputs (checked when writing the tests): Latin-1 French
and cp1252 English rank cp1250, cp1252, cp1257... equal, with cp1250 first (``près`` -> ``prčs``),
hence the tie-break; random high bytes give no match at all; a lone ``caf\\xe9`` and short Czech
text (correctly guessed cp1250) fall below the 0.5 coherence of seed 000.
"""

from __future__ import annotations

import codecs
import random
from dataclasses import dataclass, field

import pytest

from hermes_workspace.adapters import charset_decoder
from hermes_workspace.adapters.charset_decoder import CharsetDecoder
from hermes_workspace.domain.errors import BinaryContentError, DecodeError


def random_bytes(seed: int, count: int, low: int, high: int | None = None) -> bytes:
    """``count`` reproducible random bytes in ``range(low, high)`` (``range(low)`` if no ``high``)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(low, high) if high is not None else rng.randrange(low) for _ in range(count))


FRENCH = (
    "Le café est situé près de la gare. Les élèves y mènent des débats animés sur la littérature "
    "française, où chaque idée est défendue avec fierté. Ils boivent un thé très chaud, naïvement "
    "persuadés que l'hiver ne finira jamais.\n"
)
GERMAN = (
    "Die Bücher liegen auf dem Tisch. Grüße aus München! Der Käse ist sehr gut, und die Straße führt "
    "über die Brücke zum schönen Schloß am Fluß. Ärger über Öl ist selten.\n"
)
SMART_QUOTES = (
    "“Smart quotes” are used in the café menu — it’s a naïve résumé of the day’s specials, "
    "and the chef’s “soupe du jour” costs €4.\n"
)
CZECH = (
    "Příliš žluťoučký kůň úpěl ďábelské ódy. Česká republika je středoevropský stát. "
    "Hlavním městem je Praha, která leží na řece Vltavě.\n"
)


@pytest.fixture
def decoder() -> CharsetDecoder:
    return CharsetDecoder()


# -- byte-order marks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
@pytest.mark.parametrize("text", [FRENCH, "日本語 🙂\r\n", "x"])
def test_bom_decides_the_codec_and_is_removed(decoder: CharsetDecoder, bom: bytes, codec: str, text: str) -> None:
    assert decoder.decode(bom + text.encode(codec)) == text


def test_python_utf16_and_utf32_output_round_trips(decoder: CharsetDecoder) -> None:
    # Python's "utf-16"/"utf-32" codecs write a native-order BOM (FF FE / FF FE 00 00 here).
    assert decoder.decode(GERMAN.encode("utf-16")) == GERMAN
    assert decoder.decode(GERMAN.encode("utf-32")) == GERMAN


def test_utf16_le_text_starting_with_nul_char_is_not_taken_for_utf32(decoder: CharsetDecoder) -> None:
    # FF FE 00 00 is the UTF-32 LE BOM; this is UTF-16 LE "\x00hi", invalid as UTF-32 LE, so
    # UTF-16 LE is tried, and a decoded U+0000 means binary.
    with pytest.raises(BinaryContentError):
        decoder.decode(codecs.BOM_UTF16_LE + "\x00hi".encode("utf-16-le"))


def test_utf16_with_nul_bytes_is_text(decoder: CharsetDecoder) -> None:
    data = codecs.BOM_UTF16_LE + "plain ascii has NUL high bytes".encode("utf-16-le")
    assert b"\x00" in data
    assert decoder.decode(data) == "plain ascii has NUL high bytes"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (codecs.BOM_UTF16_LE + "odd".encode("utf-16-le") + b"\x41", "UTF-16-LE"),
        (codecs.BOM_UTF16_BE + b"\xd8\x00\x00\x41", "UTF-16-BE"),  # lone high surrogate
        (codecs.BOM_UTF32_BE + b"\x00\x11\x00\x00", "UTF-32-BE"),  # beyond U+10FFFF
        (codecs.BOM_UTF8 + b"caf\xe9", "UTF-8"),
    ],
    ids=["utf16le-odd-length", "utf16be-lone-surrogate", "utf32be-out-of-range", "utf8-bom-then-cp1252"],
)
def test_invalid_bytes_after_a_bom_are_a_decode_error(decoder: CharsetDecoder, data: bytes, expected: str) -> None:
    with pytest.raises(DecodeError, match=f"{expected} byte-order mark"):
        decoder.decode(data)


def test_utf8_bom_with_nul_is_binary(decoder: CharsetDecoder) -> None:
    with pytest.raises(BinaryContentError):
        decoder.decode(codecs.BOM_UTF8 + b"abc\x00")


def test_utf16_decoded_nul_character_is_binary(decoder: CharsetDecoder) -> None:
    with pytest.raises(BinaryContentError):
        decoder.decode(codecs.BOM_UTF16_BE + "a\x00b".encode("utf-16-be"))


# -- binary ----------------------------------------------------------------------------------------


def test_random_binary_with_nul_is_binary(decoder: CharsetDecoder) -> None:
    data = random_bytes(42, 8192, 256)
    assert b"\x00" in data and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))

    with pytest.raises(BinaryContentError, match="NUL"):
        decoder.decode(data)


# -- detection -------------------------------------------------------------------------------------


def test_cp1252_smart_quotes_and_cafe(decoder: CharsetDecoder) -> None:
    data = SMART_QUOTES.encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")

    assert decoder.decode(data) == SMART_QUOTES


@pytest.mark.parametrize("text", [FRENCH, GERMAN], ids=["french", "german"])
def test_latin1_paragraphs(decoder: CharsetDecoder, text: str) -> None:
    assert decoder.decode(text.encode("latin-1")) == text


def test_tie_between_code_pages_goes_to_cp1252() -> None:
    from charset_normalizer import from_bytes

    data = FRENCH.encode("latin-1")
    matches = from_bytes(data)
    best = matches.best()
    tied = [m.encoding for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)]

    # The installed charset-normalizer ranks these equal; if it one day puts cp1252 first, the
    # tie-break just agrees with it.
    assert "cp1252" in tied
    assert CharsetDecoder().decode(data) == FRENCH
    assert "prčs" not in CharsetDecoder().decode(data)


def test_random_high_bytes_without_nul_are_a_decode_error(decoder: CharsetDecoder) -> None:
    data = random_bytes(1234, 300, 0x80, 0x100)

    with pytest.raises(DecodeError, match="no encoding that fits") as info:
        decoder.decode(data)
    assert info.value.code == "encoding_error"
    assert "not UTF-8" in info.value.message


def test_low_coherence_names_the_guess_and_its_coherence(decoder: CharsetDecoder) -> None:
    with pytest.raises(DecodeError, match=r"best guess \S+ has coherence 0\.\d\d, below the minimum 0\.50"):
        decoder.decode(b"caf\xe9")


def test_coherence_threshold_is_configurable() -> None:
    data = CZECH.encode("cp1250")

    with pytest.raises(DecodeError, match="best guess cp1250 has coherence"):
        CharsetDecoder().decode(data)
    assert CharsetDecoder(min_coherence=0.3).decode(data) == CZECH


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_coherence_out_of_range_is_rejected(value: float) -> None:
    with pytest.raises(ValueError):
        CharsetDecoder(min_coherence=value)


def test_strict_utf8_comes_before_detection(decoder: CharsetDecoder, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_detection(data: bytes) -> None:
        raise AssertionError("detection must not run on valid UTF-8")

    monkeypatch.setattr(charset_decoder, "from_bytes", no_detection)
    assert decoder.decode("naïve\n".encode()) == "naïve\n"


# -- the U+FFFD guard ------------------------------------------------------------------------------


@dataclass
class FakeMatch:
    encoding: str
    coherence: float = 0.9
    chaos: float = 0.0
    could_be_from_charset: list[str] = field(default_factory=list)


class FakeMatches(list):
    def best(self) -> FakeMatch | None:
        return self[0] if self else None


def _lossy_codec_search(name: str) -> codecs.CodecInfo | None:
    """A test codec that turns every byte >= 0x80 into U+FFFD (what errors="replace" would do)."""
    if name != "hermes_test_lossy":
        return None

    def decode(data: bytes, errors: str = "strict") -> tuple[str, int]:
        return "".join(chr(b) if b < 0x80 else "\ufffd" for b in bytes(data)), len(data)

    def encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
        return text.replace("\ufffd", "?").encode("ascii"), len(text)

    return codecs.CodecInfo(encode, decode, name=name)


@pytest.fixture
def lossy_codec() -> None:
    codecs.register(_lossy_codec_search)
    yield
    codecs.unregister(_lossy_codec_search)


def test_detected_encoding_that_invents_replacement_characters_is_refused(
    decoder: CharsetDecoder, monkeypatch: pytest.MonkeyPatch, lossy_codec: None
) -> None:
    monkeypatch.setattr(charset_decoder, "from_bytes", lambda data: FakeMatches([FakeMatch("hermes_test_lossy")]))

    with pytest.raises(DecodeError, match="U\\+FFFD"):
        decoder.decode(b"caf\xe9 au lait")


def test_replacement_characters_the_bytes_encode_are_kept(
    decoder: CharsetDecoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = "\ufffd中文".encode("utf-16-le")  # no NUL byte, not UTF-8
    assert b"\x00" not in data
    monkeypatch.setattr(charset_decoder, "from_bytes", lambda data: FakeMatches([FakeMatch("utf_16_le")]))

    assert decoder.decode(data) == "\ufffd中文"


def test_detected_encoding_that_fails_strict_decoding_is_a_decode_error(
    decoder: CharsetDecoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(charset_decoder, "from_bytes", lambda data: FakeMatches([FakeMatch("ascii")]))

    with pytest.raises(DecodeError, match="does not decode it without loss"):
        decoder.decode(b"caf\xe9")


def test_no_match_is_a_decode_error(decoder: CharsetDecoder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(charset_decoder, "from_bytes", lambda data: FakeMatches())

    with pytest.raises(DecodeError, match="no encoding that fits"):
        decoder.decode(b"\xff\xfe\xfd"[::-1] + b"abc")


def test_pep263_declared_encoding_is_used_before_detection() -> None:
    source = "# -*- coding: koi8-r -*-\nprint('Привет, мир')\n"
    assert CharsetDecoder().decode(source.encode("koi8-r")) == source
    vim = "#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\ns = 'naïve'\n"
    assert CharsetDecoder().decode(vim.encode("latin-1")) == vim


def test_declaration_on_line_three_is_ignored_and_unknown_codecs_fall_through() -> None:
    late = "x = 1\ny = 2\n# coding: koi8-r\nz = 'Привет'\n".encode("koi8-r")
    with pytest.raises(DecodeError):
        CharsetDecoder().decode(late)
    bogus = "# coding: no-such-codec\ns = 'caf\xe9 au lait, cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade'\n".encode("cp1252")
    assert "crème" in CharsetDecoder().decode(bogus)


def test_latin1_french_is_not_read_as_a_baltic_code_page() -> None:
    line = "Le caf\xe9 est tr\xe8s chaud. Voil\xe0 la cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu, \xe0 c\xf4t\xe9. latinword\n"
    text = CharsetDecoder().decode((line * 3).encode("latin-1"))
    assert text == line * 3
    assert "très" in text and "crème brûlée" in text


def test_cyrillic_cp1251_still_decodes_as_cp1251() -> None:
    text = "Привет, мир! Это тестовый текст на русском языке для проверки кодировки.\n"
    assert CharsetDecoder().decode(text.encode("cp1251")) == text
