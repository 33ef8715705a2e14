"""The :class:`~hermes_workspace.domain.ports.Decoder` adapter: byte-order marks, strict UTF-8, a
declared encoding, then legacy-encoding detection that weighs all the evidence. Never lossy (no
``errors="replace"``, no invented U+FFFD), and it refuses rather than pick between two plausible
readings.

Detection in short: decode the bytes strictly with each legacy encoding of :data:`ENCODINGS`.
Encodings that give the same text do not compete: whether cp1250, cp1252 or cp1257 wrote
``Grüße aus Köln`` does not matter, the text is the same. Each distinct text (a *reading*) is
*implausible* when no real text looks like it (a control character, a word mixing two alphabets, a
symbol inside a word, a letter of a script its encodings' languages do not write); otherwise its
*flaws* (strong evidence against it: unusual symbols, case flips inside words, letters no one
language writes together, rare ideographs, charset-normalizer's mess ratio) and *doubts* (weak
evidence: rare or lone letters, no capitalised word, Greek without accents, few frequent Chinese
characters, a few letters of a script among Latin words) are counted. The text is the flawless
reading with the fewest doubts, when no other flawless reading has as few and there is enough of
it to tell; between Latin readings with as few doubts, the one whose letters are far likelier in
its language (a unigram letter model). A script that is only a few letters among Latin words
never wins. See :class:`CharsetDecoder`.
"""

from __future__ import annotations

import codecs
import math
import re
import string
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from charset_normalizer.constant import COMMON_CHINESE_CHARACTERS, FREQUENCIES
from charset_normalizer.md import mess_ratio

from hermes_workspace.domain.errors import AmbiguousEncodingError, BinaryContentError, DecodeError
from hermes_workspace.domain.model import DecodedText

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

_MARKUP_DECLARATION = re.compile(
    rb"""<\?xml[^>]*?\bencoding\s*=\s*["']([-\w.:]+)["']"""  # <?xml version="1.0" encoding="koi8-r"?>
    rb"""|<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([-\w.:]+)""",  # <meta charset=...>, or http-equiv content=
    re.IGNORECASE,
)
"""An XML declaration or an HTML ``<meta>`` charset, looked for in the first :data:`MARKUP_PRESCAN`
bytes."""

MARKUP_PRESCAN = 1024
"""Bytes searched for a markup declaration: the HTML standard's prescan length."""

_WEB_LABELS: dict[str, str] = {
    # The WHATWG Encoding Standard reads these labels as a superset: a page that says ISO-8859-1
    # and holds curly quotes (0x93, 0x94) is windows-1252, as every browser shows it.
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "l1": "cp1252", "ascii": "cp1252",
    "us-ascii": "cp1252", "iso-8859-9": "cp1254", "latin5": "cp1254", "gb2312": "gb18030", "gbk": "gb18030",
    "x-gbk": "gb18030", "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "shift_jis": "cp932", "sjis": "cp932",
    "x-sjis": "cp932", "windows-31j": "cp932", "big5": "cp950", "tis-620": "cp874", "iso-8859-11": "cp874",
}
"""Markup labels that mean a superset codec (WHATWG Encoding Standard, section 4.2, "Names and labels")."""

# -- languages and encodings -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Language:
    """A written language as detection sees it.

    ``script``: ``Latin``, ``Cyrillic``, ``Greek``, ``Hebrew``, ``Arabic``, ``Japanese``,
    ``Chinese`` or ``Korean``. ``letters``: for alphabets, the lower-case letters beyond ASCII that
    the language writes (ASCII letters are allowed in every language: names, code, English words).
    ``rare``: those of them seldom seen in running text (under about 0.3% of letters), a doubt.
    ``single``: its one-letter words beyond ASCII (French ``à``, Italian ``è``); another lone
    letter is a doubt. ``top``: for non-Latin alphabets, its :data:`TOP_LETTERS` most frequent
    letters (charset-normalizer's ``FREQUENCIES``). The letter sets are compiled by hand from each
    orthography and published letter frequencies, so approximate: they decide between two
    flawless readings only (French ``à`` or Slovak ``ŕ`` for byte 0xE0).
    """

    name: str
    script: str
    letters: frozenset[str] = frozenset()
    rare: frozenset[str] = frozenset()
    single: frozenset[str] = frozenset()
    top: frozenset[str] = frozenset()


TOP_LETTERS = 6

MIN_TOP_SHARE = 0.2
"""Least share of a Cyrillic, Greek, Hebrew or Arabic reading's letters (over at least
:data:`MIN_TOP_LETTERS`) among its language's :data:`TOP_LETTERS` most frequent (о е а и н т in
Russian): about 45% in text, none of ا ل ي م و ن in all-capital Russian read as Arabic. Below it:
a doubt."""

MIN_TOP_LETTERS = 8

VOWELS: dict[str, tuple[frozenset[str], float, str]] = {
    "Cyrillic": (frozenset("аеёиоуыэюяіїєў"), 0.25, "flaw"),
    "Greek": (frozenset("αεηιουωάέήίόύώϊϋΐΰ"), 0.36, "doubt"),
}
"""Per alphabet: its vowels, the least share of them among its letters (over at least
:data:`MIN_VOWEL_LETTERS`), and whether less is a flaw or a doubt. Russian text is about 42%
vowels, Greek about 47%; in our corpus no correct reading went under 0.32 (Cyrillic) or 0.43
(Greek), while Russian read as KOI8-R/cp1251 sits near 0.30, Russian read as Greek near 0.31-0.33,
and the Cyrillic letters random bytes decode to near 0.2-0.3."""

MIN_VOWEL_LETTERS = 10


def _language(
    name: str, script: str, letters: str, rare: str = "", single: str = "", frequencies: str | None = None
) -> Language:
    """``frequencies``: the name of the ``FREQUENCIES`` entry for ``top`` (default ``name``; none
    for Latin scripts, where the most frequent letters are ASCII and say nothing)."""
    top = frozenset(FREQUENCIES[frequencies or name][:TOP_LETTERS]) if script != "Latin" else frozenset()
    return Language(name, script, frozenset(letters + rare), frozenset(rare), frozenset(single), top)


def _latin(name: str, letters: str, rare: str = "", single: str = "") -> Language:
    return _language(name, "Latin", letters, rare, single)


_LATIN_LANGUAGES = (
    _latin("English", ""),
    _latin("German", "äöüß"),
    _latin("French", "éèàêçôâîûùœ", "ëïüÿæ", "à"),
    _latin("Spanish", "áéíóúñ", "ü"),
    _latin("Portuguese", "ãçéáíóêâõú", "àô", "àé"),
    _latin("Italian", "àèéìòù", "íîóú", "è"),
    _latin("Catalan", "àèéíòóúç", "ïü"),
    _latin("Dutch", "éë", "áíóúàèïöü"),
    _latin("Danish", "æøå", "é", "åø"),
    _latin("Norwegian", "æøå", "éèêóò", "åø"),
    _latin("Swedish", "åäö", "é", "åö"),
    _latin("Finnish", "äö", "åšž"),
    _latin("Icelandic", "áðéíóúýþæö", "", "áíó"),
    _latin("Estonian", "äöõü", "šž"),
    _latin("Albanian", "ëç"),
    _latin("Polish", "ąćęłńóśźż"),
    _latin("Czech", "áčéěířšúůýž", "ďňóť"),
    _latin("Slovak", "áčéíýšžôľťú", "äďĺňóŕ"),
    _latin("Slovene", "čšž", "ćđ"),
    _latin("Croatian", "čćđšž"),
    _latin("Hungarian", "áéíóöőúüű", "", "ő"),
    _latin("Romanian", "ăâîșțşţ"),
    _latin("Lithuanian", "ąčęėįšųūž", "", "į"),
    _latin("Latvian", "āčēģīķļņšūž"),
    _latin("Turkish", "çğıİöşü", "âîû"),
)
LATIN = {lang.name: lang for lang in _LATIN_LANGUAGES}

_RUSSIAN = "абвгдежзийклмнопрстуфхцчшщъыьэюяё"


def _without(letters: str, dropped: str) -> str:
    return "".join(c for c in letters if c not in dropped)


CYRILLIC = (
    _language("Russian", "Cyrillic", _RUSSIAN, single="авиоксуяжб"),
    _language("Ukrainian", "Cyrillic", _without(_RUSSIAN, "ёъыэ") + "ґєії", single="авзійоуя"),
    _language("Belarusian", "Cyrillic", _without(_RUSSIAN, "ищъ") + "іў", single="аізўуя", frequencies="Russian"),
    _language("Bulgarian", "Cyrillic", _without(_RUSSIAN, "ёыэ"), single="аивсуя"),
    _language("Serbian", "Cyrillic", "абвгдђежзијклљмнњопрстћуфхцчџш", single="аиуско"),
    _language("Macedonian", "Cyrillic", "абвгдѓежзѕијклљмнњопрстќуфхцчџш", single="аиво", frequencies="Serbian"),
)
GREEK = _language("Greek", "Greek", "αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώ", "ϊϋΐΰ", "οηή")
HEBREW = _language("Hebrew", "Hebrew", "".join(map(chr, range(0x05D0, 0x05EB))) + "\u05f0\u05f1\u05f2", single="ו")
ARABIC = _language(
    "Arabic", "Arabic", "".join(map(chr, [*range(0x0621, 0x063B), *range(0x0641, 0x064B)])) + "پچژگکیٹڈڑںھہےۓ",
    single="و",
)
JAPANESE = Language("Japanese", "Japanese")
CHINESE = Language("Chinese", "Chinese")
KOREAN = Language("Korean", "Korean")


LETTER_RANKS: dict[str, str] = {
    # Latin languages charset-normalizer's FREQUENCIES lacks, ranked by hand from published letter
    # frequencies (approximate: only the order counts, and the letters after the list share one
    # probability).
    "Catalan": "easirnltocudmpgvbfqàèéóíhòxjçúüï",
    "Icelandic": "arniestulðgmkfvhoádíbþjóyæpöéúýx",
    "Albanian": "eëitranshoukmjdlpqgvbfyzçcx",
    "Latvian": "aiseturnkālmpvdoījzēgbcšņūļžčfhģķ",
    "German": "enirstadhulgocmbfkwzpvüäößj",  # FREQUENCIES' list, with ß (0.3%) in its place
}
"""The letters of each Latin language by falling frequency, for :func:`letter_log_odds`: its
``FREQUENCIES`` entry (charset-normalizer's 26 most frequent letters, from Wikipedia's letter
frequency tables) or this table."""


@lru_cache(maxsize=64)
def letter_model(language: Language) -> tuple[dict[str, float], float]:
    """Natural logarithms of the probability of each lower-case letter of a Latin ``language``'s
    alphabet (ASCII letters and :attr:`Language.letters`) in its text, and the one for a letter
    outside it. The listed letters (:data:`LETTER_RANKS`) of rank ``r`` get Gusein-Zade's law of
    letter frequencies, ``(1/N) * sum(1/k for k in r..N)``, with ``N`` = :data:`ALPHABET_SIZE`
    (about 12% for the first letter, 0.5% for the 26th); the letters of its alphabet the list
    leaves out are rarer than all of them (``k`` and ``w`` in Italian, ``q`` in Polish: about
    0.01-0.05%), a tenth of the last listed one; a letter outside the alphabet a tenth of that."""
    ranked = [c for c in LETTER_RANKS.get(language.name) or FREQUENCIES[language.name] if c.isalpha()]
    alphabet = set(string.ascii_lowercase) | language.letters
    ranked = [c for c in dict.fromkeys(ranked) if c in alphabet]
    size = max(ALPHABET_SIZE, len(ranked))
    probabilities = [sum(1 / k for k in range(rank, size + 1)) / size for rank in range(1, len(ranked) + 1)]
    model = {c: math.log(p) for c, p in zip(ranked, probabilities, strict=True)}
    rare = math.log(probabilities[-1] / 10)
    model.update(dict.fromkeys(alphabet - set(ranked), rare))
    return model, rare - math.log(10)


ALPHABET_SIZE = 32
"""``N`` of :func:`letter_model`: the letters that matter in one of these languages' text (the
26 of the ranking and a few more)."""


def letter_log_odds(reading: Reading) -> tuple[float, int] | None:
    """The log-likelihood (natural logarithm) of the Latin letters of ``reading``'s sample under
    the best-fitting of its Latin languages' :func:`letter_model` (a unigram model: ``Café crème``
    is likelier French than ``Café crčme`` Czech, since Czech writes little ``f`` and ``c``), and
    the number of those letters (two readings compare only with as many letters: ``z³`` is not
    likelier than ``zł`` for lacking a letter); ``None`` when it has a letter of another script
    or no Latin language."""
    counts: dict[str, int] = {}
    for char in _sample(reading.text):
        if char.isalpha():
            if char.isascii():
                lower = char.lower()
            elif _script(char) == "Latin":
                lower = char.lower()[0]  # İ lowers to i and a combining dot
            else:
                return None
            counts[lower] = counts.get(lower, 0) + 1
    best: float | None = None
    for language in reading.languages:
        if language.script == "Latin":
            model, outside = letter_model(language)
            score = sum(n * model.get(c, outside) for c, n in counts.items())
            best = score if best is None else max(best, score)
    return None if best is None else (best, sum(counts.values()))


def _pick(*names: str) -> tuple[Language, ...]:
    return tuple(LATIN[name] for name in names)


_WESTERN = _pick("English", "German", "French", "Spanish", "Portuguese", "Italian", "Catalan", "Dutch", "Danish",
                 "Norwegian", "Swedish", "Finnish", "Icelandic", "Estonian", "Albanian")
_CENTRAL = _pick("English", "German", "Polish", "Czech", "Slovak", "Slovene", "Croatian", "Hungarian", "Romanian",
                 "Albanian")


@dataclass(frozen=True, slots=True)
class Encoding:
    """A legacy encoding that detection tries: ``codecs``, Python codec names of which the first
    that decodes the bytes strictly is used (a superset first), the ``languages`` written in it,
    and ``symbols``: characters beyond :data:`COMMON_SYMBOLS` that its text commonly holds (the
    box drawing of the DOS code pages, :data:`DOS_SYMBOLS`; :data:`DOS_MATH`, :data:`MAC_MATH`)."""

    name: str
    codecs: tuple[str, ...]
    languages: tuple[Language, ...]
    symbols: frozenset[str] = frozenset()


DOS_SYMBOLS = frozenset(map(chr, range(0x2500, 0x25A1)))
"""Box drawing (U+2500-U+257F), block elements (U+2580-U+259F) and the black square: the
pseudo-graphics of DOS code pages (tables, frames, ``.nfo`` art), common in their text when they
touch no letter (``│ Name │``); touching one (``─rger``) they remain unusual symbols, as which
windows-1252 capitals read in a DOS code page."""

DOS_MATH = frozenset("≥≤≈≡∞")
MAC_MATH = frozenset("≠≤≥≈∞")
"""The relations of code page 437 and of Mac OS Roman, and infinity (``x ≤ 10``, ``y ≈ 1.4``):
common in their text, like pseudo-graphics, when they touch no letter; with no operand beside
them (``of ≡ is``, ``≥ Name ≥``: a number, a one-letter variable or a bracket) a doubt."""
_MATH = DOS_MATH | MAC_MATH


ENCODINGS: tuple[Encoding, ...] = (
    Encoding("cp1252", ("cp1252",), _WESTERN),
    Encoding("iso8859_15", ("iso8859_15",), _WESTERN),
    Encoding("cp1250", ("cp1250",), _CENTRAL),
    Encoding("iso8859_2", ("iso8859_2",), _CENTRAL),
    Encoding("cp1257", ("cp1257",), _pick("English", "German", "Lithuanian", "Latvian", "Estonian")),
    Encoding("cp1254", ("cp1254",), _pick("English", "Turkish")),
    # Mac OS Roman: text files of the classic Mac OS (before OS X), in the western languages but
    # Icelandic (Mac OS Icelandic replaced symbols with its letters).
    Encoding("mac_roman", ("mac_roman",), tuple(lang for lang in _WESTERN if lang.name != "Icelandic"), MAC_MATH),
    # The DOS code pages of western Europe and America: README, .nfo and .txt files of DOS programs.
    Encoding("cp437", ("cp437",), _WESTERN, DOS_SYMBOLS | DOS_MATH),
    Encoding("cp850", ("cp850",), _WESTERN, DOS_SYMBOLS),
    Encoding("cp1251", ("cp1251",), CYRILLIC),
    Encoding("koi8_r", ("koi8_r",), CYRILLIC, DOS_SYMBOLS),
    Encoding("koi8_u", ("koi8_u",), CYRILLIC, DOS_SYMBOLS),
    Encoding("iso8859_5", ("iso8859_5",), CYRILLIC),
    Encoding("cp866", ("cp866",), CYRILLIC, DOS_SYMBOLS),
    Encoding("cp1253", ("cp1253",), (GREEK,)),
    Encoding("iso8859_7", ("iso8859_7",), (GREEK,)),
    Encoding("cp1255", ("cp1255",), (HEBREW,)),
    Encoding("iso8859_8", ("iso8859_8",), (HEBREW,)),
    # Windows-1256 also has the French letters, for North African text that mixes both.
    Encoding("cp1256", ("cp1256",), (ARABIC, LATIN["French"])),
    Encoding("iso8859_6", ("iso8859_6",), (ARABIC,)),
    Encoding("shift_jis", ("cp932", "shift_jis_2004"), (JAPANESE,)),
    Encoding("euc_jp", ("euc_jp", "euc_jis_2004"), (JAPANESE,)),
    Encoding("gb18030", ("gb18030",), (CHINESE,)),
    Encoding("big5", ("cp950", "big5hkscs"), (CHINESE,)),
    Encoding("euc_kr", ("cp949",), (KOREAN,)),
)
"""The legacy encodings detection tries, in the order messages name them (a reading several give
is recorded under the first: box drawing alone is ``cp437``). ISO-8859-1 is not among them:
where it differs from windows-1252 (0x80-0x9F) it gives C1 control characters, which
no text holds; ISO-8859-9 is windows-1254 without its 0x80-0x9F punctuation."""

_SCRIPTS_OF: dict[str, frozenset[str]] = {
    # The letter scripts (see _script) a language's text may hold besides ASCII letters.
    "Latin": frozenset({"Latin"}),
    "Cyrillic": frozenset({"Cyrillic"}),
    "Greek": frozenset({"Greek"}),
    "Hebrew": frozenset({"Hebrew"}),
    "Arabic": frozenset({"Arabic"}),
    "Japanese": frozenset({"Han", "Hiragana", "Katakana", "HalfwidthKatakana", "Fullwidth"}),
    "Chinese": frozenset({"Han", "Bopomofo", "Fullwidth"}),
    "Korean": frozenset({"Hangul", "Jamo", "Han", "Fullwidth"}),
}
_ALPHABETS = frozenset({"Latin", "Cyrillic", "Greek", "Hebrew", "Arabic"})
_IDEOGRAPHIC = frozenset({"Han", "Hiragana", "Katakana", "HalfwidthKatakana", "Hangul", "Jamo", "Bopomofo"})
_CASED = frozenset({"Cyrillic", "Greek"})

COMMON_SYMBOLS = frozenset(
    "\u00a0«»“”‘’‚„‹›–—…•·°§©®™€£¥¢×÷±¿¡‰†‡№²³½¼¾µªº′″"
    "\u05be\u05f3\u05f4"  # Hebrew maqaf, geresh, gershayim
    "،؛؟٪٫٬"  # Arabic comma, semicolon, question mark, percent sign, decimal and thousands separators
    "\u0387"  # Greek ano teleia
)
"""Non-ASCII punctuation and symbols of ordinary text in these languages. Also common: any space
separator, decimal digit, dash, bracket or quotation mark below U+2E80, CJK punctuation (U+3000-
U+303F), full-width forms (U+FF01-U+FF65) and currency signs but ``¤``. Any other non-letter
beyond ASCII (box drawing, ``¤``, ``¬``, ``¦``, spacing accents such as ``¨ ´ ¸``) is an *unusual
symbol*: a flaw."""

_AFTER_WORD = frozenset("°©®™²³")
_BEFORE_WORD = frozenset("°№§©")
"""Symbols that may follow (``Python®``, ``m²``) or precede (``°C``, ``№5``) a letter; other
symbols touching a letter are a doubt."""

_IN_WORD = frozenset("’·\u2010\u2011\u05be\u05f3\u05f4\u0640")
"""Non-letters that may stand between two letters: apostrophe, Catalan middle dot (between two
``l`` only), hyphens, Hebrew maqaf and geresh, Arabic tatweel (dashes may too)."""

_NUMBER_SIGNS = re.compile("[№‰]")
_NUMBER_SIGN_USE = re.compile(r"№ ?\d|\d ?‰")
"""The numero sign precedes a number (``№ 5``), the per mille sign follows one (``3 ‰``); away
from a number (``№ is``, ``Zo‰``) they are a doubt: what other code pages' ``π`` or ``ë`` read as."""

_CAPITAL_ON_NUMBER = re.compile(r"(?<!\w)\d+([^\W\d_])(?!\w)|(?<!\w)([^\W\d_])\d+(?!\w)")
"""A number with one non-ASCII letter glued to it (``20Ç``, ``А20``) is a doubt when the letter is
a capital: what the euro sign (0x80 in the Windows code pages) reads as in code page 437 (``Ç``),
866 (``А``) or windows-1251 (``Ђ``); and when it is an accented Latin letter (``10ý``: code page
437's ``10²`` in windows-1252). Lower-case ordinals of other scripts (Greek ``1η``) are not
doubted."""

_UTF8_AS_LATIN = re.compile(
    "[ÂÃâ][" + re.escape(bytes(range(0x80, 0xC0)).decode("cp1252", errors="ignore") + "\u00a0") + "]"
)
"""A UTF-8 lead byte (C2, C3, E2) read as windows-1252 or Latin-1 (``Â Ã â``), followed by what a
continuation byte (80-BF) reads as there: ``Ã©`` for ``é``, ``Ã\u00a0`` for ``à``, ``â€™`` for
``’``. No orthography writes them so; bytes that do are UTF-8 in a legacy-encoded file."""

_TRIPLED = re.compile(r"([^\W\d_a-zA-Z])\1\1", re.IGNORECASE)
"""A non-ASCII letter (or syllable, or ideograph) three times in a row: no orthography writes
so but laughter (``ههه``, ``哈哈哈``); box drawing read as letters does (``ؤؤؤ``, ``컴컴컴``, ``ДДД``)."""

_SUPERSCRIPTS = frozenset("¹²³")
"""Superscript digits, which follow a letter or digit (``m²``, ``10³``); alone they are a doubt
(``³`` is what many code pages' letters read as in windows-1252 or windows-1256)."""

MAX_MESS = 0.2
"""charset-normalizer's mess ratio (``md.mess_ratio``: the weight of suspicious characters and
sequences, 0 for clean text) above which a reading is flawed: the library's own default limit."""

MAX_ACCENT_SHARE = 0.4
"""Largest share of accented letters among the Latin letters of a reading (over at least
:data:`MIN_ACCENTED` accented ones): the most accented orthographies (Czech, Hungarian, Slovak)
stay near 0.2 over a sentence, while Hebrew, Greek or Cyrillic bytes read as Latin are all accents."""

MIN_ACCENTED = 4

MAX_RARE_IDEOGRAPHS = 0.1
"""Largest share of rare ideographs in a CJK reading (at least one is always allowed). Rare:
outside the frequency-chosen first level of the national standard (JIS X 0208 level 1, GB 2312
level 1, Big5 level 1, KS X 1001 hanja). Prose stays near 1%; the same bytes read in another CJK
encoding land mostly on rare ones."""

MIN_FREQUENT_CHINESE = 0.3
"""Least share of a Chinese reading's ideographs (over at least :data:`MIN_CHINESE`) among the
~500 most frequent (charset-normalizer's ``COMMON_CHINESE_CHARACTERS``, simplified forms; for
traditional text the forms both scripts share): above 0.33 on every sample of our corpus,
including one-line traditional ones; 0.15-0.2 for Korean read as GB 18030. Below it: a doubt."""

MIN_MOST_FREQUENT_CHINESE = 0.15
"""Least share of a Chinese reading's ideographs among the 100 most frequent of that list (about
half of running text; 3% of random GB 2312 level-1 characters). Below either: a doubt."""

MIN_KANJI = 2
"""Ideographs from which a Japanese reading without kana is doubted (names and addresses are
written so, but EUC-JP kanji also read as ordinary GB 2312 Chinese)."""

MIN_CHINESE = 2
"""Ideographs from which a Chinese reading's frequency is looked at."""

MIN_FREQUENT_HANGUL = 0.08
"""Least share of a Korean reading's syllables among Korean's 26 most frequent (charset-normalizer's
``FREQUENCIES["Korean"]``): about a quarter in Korean prose, about 1% in the KS X 1001 syllables
that other CJK bytes decode to. Below it: a flaw from :data:`MIN_SYLLABLES` syllables on, a
doubt under."""

MIN_SYLLABLES = 10

MAX_HANGUL_RUN = 12
"""Longest run of Hangul syllables without a space: Korean puts spaces between words of 2-5
syllables; Chinese read as EUC-KR gives long unbroken runs."""

MIN_GREEK_ACCENTED = 0.5
"""Least share of lower-case Greek words of 5+ letters with an accent (monotonic Greek marks the
stressed vowel of every word of two syllables or more); Cyrillic or Hebrew read as Greek has none.
Below it (over at least 2 such words): a doubt."""

MIN_ARABIC_WORDS = 5
"""Arabic words from which a reading without the article (ا followed by ل, in any word) is
doubted: the article is in most sentences, and its two letters are among the most frequent; Arabic
bytes read with the other Arabic code page lose it."""

MIN_UTF8_SHARE = 0.9
MIN_UTF8_SEQUENCES = 3
"""Bytes that are not UTF-8 but hold at least :data:`MIN_UTF8_SEQUENCES` well-formed UTF-8
sequences covering this share of their bytes >= 0x80 are refused as mixed or damaged UTF-8: every
legacy reading of them is mojibake somewhere (``rÃ©union``). Legacy text reaches 0.75 by chance
on a short CJK line, about half on longer ones."""

MIN_SCRIPT_LETTERS = 3
"""Non-ASCII letters of a second alphabet (Arabic in French text, which windows-1256 can hold)
under which they are doubted: one or two are more likely bytes of something else."""

MIN_WORDLESS_LETTERS = 3
"""Letters of a Cyrillic, Greek, Hebrew or Arabic reading from which, when none of them stands in a
word of two or more letters, the reading is flawed: text in an alphabet forms words; one-letter
"words" only (``Ц В 3.14159``, ``x С 10``) are another code page's symbols read as letters."""

ISLAND = " among Latin words"
MAX_ISLAND_LETTERS = 8
MAX_ISLAND_SHARE = 1 / 3
"""A Cyrillic, Greek, Hebrew or Arabic reading with fewer than :data:`MAX_ISLAND_LETTERS` letters
of that alphabet, under this share of all its letters, is an *island*: doubted, and never chosen
(it stays a rival of the other readings; a sibling hint may still pick it). A word or two of it
amid Latin words (``عؤؤ؟ box drawing``, ``Non и possibile``, ``Price: 20А only``) is more likely
what another code page's symbols or accented letters read as; text of that alphabet has most of
its letters in it. A third rather than a quarter: code page 437's box drawing also reads as four
Cyrillic letters among ten Latin ones in KOI8-R (``здд© box drawing Ё``)."""

ENGLISH_WORDS = frozenset("the and of to is are was with for that this it you not be on as by".split())
MIN_ENGLISH_WORDS = 3
_WESTERN_PAGES = frozenset({"cp1252", "iso8859_15", "mac_roman", "cp437", "cp850"})
"""English function words: a reading holding :data:`MIN_ENGLISH_WORDS` different ones, with
accented Latin letters not decoded as windows-1252, ISO-8859-15, Mac OS Roman or a western DOS code page, is
doubted. English text with
a ``naïve`` or a ``café`` comes from the Western code pages; read as windows-1250 it turns the
French letters into Czech ones (``naďve``)."""

MIN_LOG_ODDS = 4.0
"""Natural-log likelihood ratio (:func:`letter_log_odds`) by which one Latin reading must beat
every other with as few doubts to be chosen (odds of about 55 to 1). In our corpus the right
reading of ``Café crème`` wins by 5.8; the worst wrong reading beat the right one by 2.0 (Slovak
``slnečné``, read as windows-1252 ``slneèné``)."""

MAX_CONTRARY_LOG_ODDS = 1.0
"""Natural-log likelihood ratio by which another flawless Latin reading with as many letters may
beat the reading the doubts chose; beyond it (odds of e to 1) the two kinds of evidence disagree
and neither decides. English ``A naïve approach`` in windows-1252 has a rare letter, and its
windows-1257 reading ``naļve`` none, but the latter's letters are 4.7 times less likely. In our
corpus no right choice was beaten at all."""

MIN_EVIDENCE = 10
"""Letters (ASCII included; an ideograph is a letter) from which doubts count. Under it, a reading
is accepted only as the one flawless reading, without doubts: two ideographs (``此致``) that
another code page reads as four plausible Cyrillic letters, or four random bytes that read as two
Hangul syllables, are too little to go on."""

MIN_RIVAL_DOUBTS = 2
"""Doubts every other flawless reading must have for a reading without doubts to be taken under
:data:`MIN_EVIDENCE` letters (``Price: 20€ only``: code page 866's ``20А`` is a Cyrillic letter
among Latin words and a capital glued to a number)."""

SAMPLE_CHARS = 8192
"""Characters of each reading examined in a longer text: lines with non-ASCII characters from all
over it (see :func:`_sample`). Bounds the cost on large files; the statistics need far fewer."""

SAMPLE_PARTS = 32

_WORD_FINAL = frozenset("ךםןףץ" "ةى")
"""Letters written only at the end of a word: the Hebrew final forms, Arabic taa marbuta and alif
maqsura."""

_FULLWIDTH_TO_ASCII = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
"""Full-width ASCII forms folded before the mess ratio, which counts ``１，５００`` as a mess."""

_DOS_TO_SPACE = {ord(char): 0x20 for char in DOS_SYMBOLS}

_SCRIPT_PUNCTUATION = {"Arabic": "،؛؟٪٫٬", "Hebrew": "\u05be\u05f3\u05f4"}
"""Punctuation of one script only (Arabic comma, semicolon, question mark, percent and number
separators; Hebrew maqaf, geresh, gershayim): in a text without a letter of that script, a flaw
(``25 ،C``, ``Item ؛ and``: Mac OS Roman's ``°`` and ``ª`` in windows-1256)."""

_NO_SIGN_AFTER = VOWELS["Cyrillic"][0] | frozenset("йъь")
"""Letters the hard and soft signs never follow: ъ and ь mark the consonant before them (Russian
``объект``, ``день``; Bulgarian ``път``, ``шофьор``), so no orthography writes them after a vowel,
й or another sign. Lower-case windows-1251 read as KOI8-R (and the reverse) does: ``я`` reads as
``Ъ``, ``ш`` as ``Ь``, so ``тебя`` is ``РЕАЪ``, ``наш`` is ``МЮЬ``."""

_KOREAN_FREQUENT = frozenset(FREQUENCIES["Korean"])
_CHINESE_FREQUENT = frozenset(COMMON_CHINESE_CHARACTERS)
_CHINESE_MOST_FREQUENT = frozenset(COMMON_CHINESE_CHARACTERS[:100])
_GREEK_ACCENTS = frozenset("άέήίόύώΐΰ")
_TOKEN = re.compile(r"\S*[^\x00-\x7f]\S*")
_NON_ASCII_LINE = re.compile(r"[^\n]*[^\x00-\x7f][^\n]*")
_ASCII_LETTERS = re.compile(r"[A-Za-z]")
_ASCII_WORD = re.compile(r"\b[A-Za-z]+\b")


# -- readings --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Reading:
    """One candidate text: the ``encodings`` (names) and ``codec`` that decode the bytes to it, the
    ``languages`` they are written in, and its assessment: ``rejection`` (why it is implausible),
    ``flaws`` and ``doubts`` (description -> count), with one ``examples`` entry per description,
    and ``letters``, the letters examined (the evidence)."""

    text: str
    codec: str
    encodings: list[str]
    languages: tuple[Language, ...]
    symbols: frozenset[str] = frozenset()
    rejection: str | None = None
    flaws: dict[str, int] = field(default_factory=dict)
    doubts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)
    letters: int = 0

    def flaw(self, what: str, example: str, count: int = 1) -> None:
        self.flaws[what] = self.flaws.get(what, 0) + count
        self.examples.setdefault(what, example)

    def doubt(self, what: str, example: str, count: int = 1) -> None:
        self.doubts[what] = self.doubts.get(what, 0) + count
        self.examples.setdefault(what, example)

    @property
    def names(self) -> str:
        return "/".join(self.encodings)

    def describe(self, examples: bool = False) -> str:
        """``"cp1251: 2 case flips inside words"`` for messages, which hold no text of the file
        (logs must not copy file contents); with ``examples``, each followed by one (debugging)."""
        if self.rejection is not None:
            return f"{self.names}: {self.rejection}" + (f" ({self.examples.get('rejection')!r})" if examples else "")
        found = {**self.flaws, **self.doubts}
        return f"{self.names}: " + ", ".join(
            f"{n} {what}" + (f" ({self.examples[what]!r})" if examples else "") for what, n in found.items()
        )


class CharsetDecoder:
    """Decodes file bytes to ``str`` without loss, and refuses rather than guess.

    Order: (1) a byte-order mark decides: UTF-32 LE/BE, UTF-8, UTF-16 LE/BE, decoded strictly, BOM
    removed (FF FE 00 00 that is not valid UTF-32 is tried as UTF-16 LE); (2) without a UTF-16/32
    BOM, a NUL byte means binary; (3) strict UTF-8; (4) more than 1% control bytes (C0 other than
    tab, line feed, vertical tab, form feed, carriage return, escape, backspace and the DOS
    end-of-file 0x1A) is refused as binary-like, and mostly-UTF-8 bytes (:data:`MIN_UTF8_SHARE`)
    as mixed or damaged; (5) a declared encoding: PEP 263's
    ``# -*- coding: koi8-r -*-`` in the first two lines, or ``<?xml ... encoding="..."?>`` /
    ``<meta charset=...>`` in the first :data:`MARKUP_PRESCAN` bytes (with the WHATWG label
    supersets), taken when it decodes strictly to a plausible reading that is flawless, or that
    has no flawless rival; (6) detection over :data:`ENCODINGS`.

    Detection. Each encoding decodes strictly (its first codec that can, without inventing
    U+FFFD); identical texts are one *reading*, in all the languages of the encodings behind it.
    Each reading's first :data:`SAMPLE_CHARS` characters of non-ASCII lines are examined.

    - *Implausible* (out): a control, private-use, format or unassigned character; a letter of a
      script none of its languages writes; a word mixing two alphabets (``GrьЯe``); an ideograph
      or a full-width letter between two Latin letters (``Gr崩e``, ``dｇu``); a symbol inside a
      word (``Zaż±ł``); a combining mark after no letter, or on a letter of another script.
    - *Flaws* (strong evidence against): unusual symbols (see :data:`COMMON_SYMBOLS`; the DOS
      code pages' box drawing only where it forms a drawing, :data:`DOS_SYMBOLS`); too few
      Cyrillic vowels (:data:`VOWELS`); case flips inside a word involving a non-ASCII letter
      (``пРИВЕТ``, ``ТЕКСт``); letters outside the alphabet of its best-fitting language, script
      by script; Latin text more than :data:`MAX_ACCENT_SHARE` accented with a word of accented
      letters only (a doubt when every word has a plain letter: ``Zażółć gęślą jaźń``); UTF-8
      read as windows-1252 (``Ã©``); word-final letters inside words (Hebrew final forms,
      Arabic ة ى); rare ideographs beyond :data:`MAX_RARE_IDEOGRAPHS`, or rare Hangul syllables;
      Korean with few frequent syllables (:data:`MIN_FREQUENT_HANGUL`), long unspaced runs
      (:data:`MAX_HANGUL_RUN`), stray jamo, hanja inside Hangul words, or hanja without Hangul;
      symbols where their use never puts them (:func:`_misplaced_symbols`: ordinal indicators
      away from numbers and abbreviations, ``Widgetª``; fractions before a word or number,
      ``½50``; guillemets without their pair, ``Size: « inch``, or low quotes without a closing
      one; daggers before a word; Spanish inverted marks before a space; currency signs glued to
      a word; Arabic or Hebrew punctuation without a letter of the script; accented letters as a
      formula's operands, ``xý + yý = zý``; pseudo-graphics glued to a digit, ``20█``; a lone
      half-width katakana glued to a Latin word, ``ﾒquotedﾓ``); letters where the languages that
      write them never do (:data:`_UNWRITTEN`: ``naãve``, ``Śakki``); Cyrillic hard or soft
      signs after a vowel (``РЕАЪ``, :data:`_NO_SIGN_AFTER`); Cyrillic, Greek, Hebrew or Arabic
      letters that form no word (:data:`MIN_WORDLESS_LETTERS`); charset-normalizer's mess ratio
      above :data:`MAX_MESS`.
    - *Doubts* (weak evidence, to rank flawless readings): letters rare in the best-fitting
      language or lone letters it has no word for (:class:`Language`); few of its most frequent
      letters (:data:`MIN_TOP_SHARE`); symbols stuck to words (``£ukasz``); superscripts after no
      letter or digit (``³``); number signs away from numbers (``№ is``); a non-ASCII capital
      glued to a number (``20А``, what ``20€`` reads as in code page 866), or an accented Latin
      letter (``10ý``); currency and degree signs away from numbers; a double dagger without a dagger
      (``Citt‡``); dashes joining a word to a letter (``Espa–a``); opening quotation marks after
      a word (``Zo‘ said``); middle dots stuck to words; Spanish inverted marks never closed;
      mathematical symbols without an operand (``of ≡ is``); a non-ASCII letter
      three times in a row (``ؤؤؤ``); a Latin word of accented letters only (``ìèð``); Cyrillic
      words starting with ь ъ ы; Cyrillic or Greek without a capitalised word (3+ words); too few
      Greek vowels; Greek without accents (:data:`MIN_GREEK_ACCENTED`); Arabic without the
      article (:data:`MIN_ARABIC_WORDS`); a few rare ideographs; Japanese without kana
      (:data:`MIN_KANJI`); few frequent Chinese characters (:data:`MIN_FREQUENT_CHINESE`,
      :data:`MIN_MOST_FREQUENT_CHINESE`); few frequent Hangul syllables in a short text;
      half-width katakana; English text with accented letters outside the Western code pages
      (:data:`ENGLISH_WORDS`); one or two letters of a second alphabet (:data:`MIN_SCRIPT_LETTERS`);
      a few Cyrillic, Greek, Hebrew or Arabic letters among Latin words (:data:`MAX_ISLAND_LETTERS`).

    Decision: the flawless readings, ranked by their number of doubts. The first is the text when
    it is the only flawless reading and has no doubt, or when it has fewer doubts than every
    other flawless reading and either at least :data:`MIN_EVIDENCE` letters or no doubt against
    at least :data:`MIN_RIVAL_DOUBTS` for each rival (``Price: 20€ only``). Between Latin
    readings with as few doubts and as many letters, the one whose letters are likelier by
    :data:`MIN_LOG_ODDS` under its best language's letter frequencies (:func:`letter_log_odds`:
    ``Café crème``, not ``Café crčme``). A choice is dropped when another flawless Latin reading's
    letters are likelier by :data:`MAX_CONTRARY_LOG_ODDS` (doubts and frequencies disagree), or
    when its script is only a few letters among Latin words (an *island*: such a reading is a
    rival, never the choice). Otherwise ``hint``, when it names an encoding of one of the
    flawless readings with the fewest doubts, picks that one (a hint breaks a tie; it does not
    overrule the evidence); else the bytes are refused as ambiguous (the encodings
    named, with the byte where the readings first differ) or too short to tell. No flawless
    reading: refused, naming the closest one and its flaws. Messages never quote the file (they
    end up in logs). Measured on 2,041 short and long samples in 28 languages and 32 encodings
    (``benchmarks/encodings.py``; 516 of them mostly-ASCII lines, DOS, Mac OS Roman and
    ISO-8859-15 text and lower-case Russian like those of issue 8's two trials): 90% read, 10%
    refused (mostly single lines), none misread; of the 1,525 samples of running text, 95% read.
    With a misleading hint (each wrong encoding, on the 174 samples refused as ambiguous), none
    is read from a flawed reading; 137 of them have a flawless wrong reading a wrong folder
    would pick (a genuine tie).

    Raises (from :meth:`decode`):
        BinaryContentError: NUL bytes without a UTF-16/32 BOM, or a BOM-decoded text containing
            U+0000.
        DecodeError: invalid bytes after a BOM; control bytes beyond 1%; mostly UTF-8; no
            flawless plausible reading; too short to tell; or ambiguous.
    """

    def decode(self, data: bytes, *, hint: str | None = None) -> str:
        """``data`` as text, without a byte-order mark. ``hint``: an encoding name (any Python
        codec alias), e.g. the one other files of the same folder were read with; it picks among
        the flawless readings with the fewest doubts only, and never makes a flawed one
        acceptable. Raises as :meth:`read`."""
        return self.read(data, hint=hint).text

    def read(self, data: bytes, *, hint: str | None = None) -> DecodedText:
        """:meth:`decode`, with the encoding used (``utf-8``, ``utf-16-le``..., or the name of the
        legacy encoding in :data:`ENCODINGS`, ``cp1251``).

        Raises:
            BinaryContentError: see the class docstring.
            AmbiguousEncodingError: the flawless readings tie, or the only one is too short to
                tell (``candidates`` names their encodings); a ``hint`` naming one of the least
                doubted decides.
            DecodeError: any other refusal.
        """
        for bom, codec in _BOMS:
            if data.startswith(bom):
                text = self._decode_with_bom(data, bom, codec)
                if text is not None:
                    return DecodedText(text, codec)
        if b"\x00" in data:
            raise BinaryContentError(f"contains NUL bytes (first at byte {data.index(0)})")
        try:
            return DecodedText(data.decode("utf-8"), "utf-8")
        except UnicodeDecodeError as exc:
            utf8_error = f"not UTF-8 ({exc.reason} at byte {exc.start})"
        controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
        if controls * 100 > len(data):
            raise DecodeError(
                f"{utf8_error}, and {controls} of its {len(data)} bytes are control characters: it looks binary",
                hint="If it is text, convert it to UTF-8; otherwise add it to .hermesignore.",
            )
        sequences, share = _utf8_share(data)
        if sequences >= MIN_UTF8_SEQUENCES and share >= MIN_UTF8_SHARE:
            raise DecodeError(
                f"{utf8_error}, though {share:.0%} of its non-ASCII bytes are UTF-8: it mixes UTF-8 with another "
                "encoding, or is damaged",
                hint="Re-save it as UTF-8 (fix the bytes at the position named), or add it to .hermesignore.",
            )
        readings = readings_of(data)
        declared = _declared(data, readings)
        if declared is not None:
            return declared
        chosen = _choose(readings, utf8_error, hint)
        return DecodedText(chosen.text, chosen.encodings[0])

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


_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _utf8_share(data: bytes) -> tuple[int, float]:
    """The number of well-formed UTF-8 multi-byte sequences in ``data`` and the share of its
    bytes >= 0x80 that they cover."""
    high = len(data) - len(data.translate(None, _HIGH_BYTES))
    covered = 0
    count = 0
    for match in _UTF8_SEQUENCE.finditer(data):
        covered += len(match.group())
        count += 1
    return count, covered / high if high else 0.0


_HIGH_BYTES = bytes(range(0x80, 0x100))
_CONTROL_BYTES = bytes([*range(0x01, 0x08), 0x0E, 0x0F, *range(0x10, 0x1A), 0x1C, 0x1D, 0x1E, 0x1F])


def readings_of(data: bytes, encodings: Sequence[Encoding] | None = None) -> list[Reading]:
    """The distinct strict decodings of ``data`` by ``encodings`` (default :data:`ENCODINGS`),
    assessed, in the order of their first encoding (see :class:`CharsetDecoder`)."""
    by_text: dict[str, Reading] = {}
    for encoding in ENCODINGS if encodings is None else encodings:
        decoded = _strict(data, encoding.codecs)
        if decoded is None:
            continue
        codec, text = decoded
        reading = by_text.get(text)
        if reading is None:
            by_text[text] = Reading(text, codec, [encoding.name], encoding.languages, encoding.symbols)
        else:
            reading.encodings.append(encoding.name)
            reading.languages += tuple(lang for lang in encoding.languages if lang not in reading.languages)
            reading.symbols |= encoding.symbols
    readings = list(by_text.values())
    for reading in readings:
        assess(reading)
    return readings


def _strict(data: bytes, codec_names: Iterable[str]) -> tuple[str, str] | None:
    """``(codec, text)`` for the first codec that decodes ``data`` strictly without inventing
    U+FFFD (one in the text must re-encode to the same bytes), else ``None``."""
    for codec in codec_names:
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        if "\ufffd" in text and text.encode(codec) != data:
            continue
        return codec, text
    return None


def _declared(data: bytes, readings: list[Reading]) -> DecodedText | None:
    """The text in the declared encoding, when it decodes strictly to a plausible reading that is
    flawless or has no flawless rival."""
    codec = _declared_codec(data)
    if codec is None:
        return None
    decoded = _strict(data, (codec,))
    if decoded is None:
        return None
    reading = next((r for r in readings if r.text == decoded[1]), None)
    if reading is None:
        # A codec outside ENCODINGS (mac_roman, cp437, ...): judged without knowing its languages.
        reading = Reading(decoded[1], codec, [codec], ())
        assess(reading)
    if reading.rejection is not None:
        return None
    if not reading.flaws or not any(r.rejection is None and not r.flaws for r in readings):
        return DecodedText(reading.text, codec)
    return None


def _declared_codec(data: bytes) -> str | None:
    """The codec declared by a PEP 263 cookie in the first two lines or by markup in the first
    :data:`MARKUP_PRESCAN` bytes, when Python has it."""
    head = b"\n".join(data.split(b"\n", 2)[:2])
    cookie = _CODING_COOKIE.search(head)
    if cookie is not None:
        label = cookie.group(1).decode("ascii")
    else:
        markup = _MARKUP_DECLARATION.search(data[:MARKUP_PRESCAN])
        if markup is None:
            return None
        label = (markup.group(1) or markup.group(2)).decode("ascii").lower()
        label = _WEB_LABELS.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _choose(readings: list[Reading], utf8_error: str, hint: str | None) -> Reading:
    """The decision of :class:`CharsetDecoder` over the assessed ``readings``."""
    plausible = [r for r in readings if r.rejection is None]
    flawless = sorted((r for r in plausible if not r.flaws), key=lambda r: sum(r.doubts.values()))
    if flawless:
        best = flawless[0]
        fewest = sum(best.doubts.values())
        chosen: Reading | None = None
        if len(flawless) == 1:
            if fewest == 0 or best.letters >= MIN_EVIDENCE:
                chosen = best
        else:
            rivals = sum(flawless[1].doubts.values())
            odds = {id(r): letter_log_odds(r) for r in flawless}
            if rivals > fewest and (best.letters >= MIN_EVIDENCE or (fewest == 0 and rivals >= MIN_RIVAL_DOUBTS)):
                chosen = best
            else:
                chosen = _likeliest([r for r in flawless if sum(r.doubts.values()) == fewest], odds)
            if chosen is not None and _contradicted(chosen, flawless, odds):
                chosen = None
        if chosen is not None and not any(what.endswith(ISLAND) for what in chosen.doubts):
            return chosen
        hinted = _hinted([r for r in flawless if sum(r.doubts.values()) == fewest], hint)
        if hinted is not None:
            return hinted
        candidates = tuple(r.encodings[0] for r in flawless)
        if len(flawless) == 1:
            raise AmbiguousEncodingError(
                f"{utf8_error}; too short to tell: its one clean reading, {best.describe()}, is doubtful",
                hint=f"If it is {best.encodings[0]}, convert it to UTF-8 (iconv -f {best.encodings[0]} -t UTF-8); "
                "otherwise add it to .hermesignore.",
                candidates=candidates,
            )
        where = _first_difference(flawless[0].text, flawless[1].text)
        at = len(flawless[0].text[:where].encode(flawless[0].codec))
        options = " or ".join(r.names for r in flawless[:4])
        raise AmbiguousEncodingError(
            f"{utf8_error}; ambiguous: it reads as well as {options} (they differ from byte {at} on)",
            hint=f"Convert it to UTF-8 from its real encoding (e.g. iconv -f {best.encodings[0]} -t UTF-8), "
            "or add it to .hermesignore.",
            candidates=candidates,
        )
    if plausible:
        closest = min(plausible, key=lambda r: sum(r.flaws.values()))
        raise DecodeError(
            f"{utf8_error}; no encoding reads it as clean text (closest: {closest.describe()})",
            hint=f"If it is {closest.encodings[0]}, convert it to UTF-8 (iconv -f {closest.encodings[0]} -t UTF-8); "
            "otherwise add it to .hermesignore.",
        )
    if readings:
        raise DecodeError(f"{utf8_error}; no encoding reads it as text (e.g. {readings[0].describe()})")
    raise DecodeError(f"{utf8_error}, and no legacy encoding decodes it")


def _likeliest(tied: list[Reading], odds: dict[int, tuple[float, int] | None]) -> Reading | None:
    """Of readings with as few doubts, the one whose Latin letters are likelier than every other's
    by :data:`MIN_LOG_ODDS` (:func:`letter_log_odds`), if all are Latin text with as many letters."""
    scored = [(odds[id(r)], r) for r in tied]
    if len(scored) < 2 or any(score is None for score, _ in scored):
        return None
    if len({score[1] for score, _ in scored if score is not None}) > 1:
        return None
    scored.sort(key=lambda pair: -pair[0][0] if pair[0] is not None else 0.0)
    (first, reading), (second, _) = scored[0], scored[1]
    assert first is not None and second is not None
    return reading if first[0] - second[0] >= MIN_LOG_ODDS else None


def _contradicted(chosen: Reading, flawless: list[Reading], odds: dict[int, tuple[float, int] | None]) -> bool:
    """Whether another flawless Latin reading with as many letters is likelier than ``chosen`` by
    :data:`MIN_LOG_ODDS`: the doubts and the letter frequencies disagree, so neither decides."""
    own = odds[id(chosen)]
    if own is None:
        return False
    for reading in flawless:
        other = odds[id(reading)]
        if reading is chosen or other is None or other[1] != own[1]:
            continue
        if other[0] - own[0] >= MAX_CONTRARY_LOG_ODDS:
            return True
    return False


def _hinted(readings: list[Reading], hint: str | None) -> Reading | None:
    """The reading of the encoding ``hint`` names, if it is among ``readings``."""
    if hint is None:
        return None
    try:
        wanted = codecs.lookup(hint).name
    except LookupError:
        return None
    for reading in readings:
        names = {reading.codec, *(c for e in ENCODINGS if e.name in reading.encodings for c in e.codecs)}
        if wanted in {codecs.lookup(name).name for name in names}:
            return reading
    return None


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


# -- assessment ------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _script(char: str) -> str:
    """The script of a letter or mark, from its Unicode name: ``Latin``, ``Cyrillic``, ``Greek``,
    ``Hebrew``, ``Arabic``, ``Han``, ``Hiragana``, ``Katakana``, ``HalfwidthKatakana``,
    ``Hangul``, ``Jamo`` (compatibility jamo), ``Bopomofo``, ``Fullwidth`` (Latin) or ``Other``."""
    name = unicodedata.name(char, "")
    if name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")) or char in "々〆〇":
        return "Han"
    if name.startswith(("HALFWIDTH KATAKANA", "HALFWIDTH HANGUL")):
        return "HalfwidthKatakana" if "KATAKANA" in name else "Jamo"
    if name.startswith("HANGUL LETTER"):
        return "Jamo"
    if name.startswith("KATAKANA-HIRAGANA"):
        return "Katakana"
    if name.startswith("FULLWIDTH LATIN"):
        return "Fullwidth"
    return {
        "LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "HEBREW": "Hebrew", "ARABIC": "Arabic",
        "HIRAGANA": "Hiragana", "KATAKANA": "Katakana", "HANGUL": "Hangul", "BOPOMOFO": "Bopomofo",
    }.get(name.split(" ", 1)[0], "Other")


@lru_cache(maxsize=65536)
def _kind(char: str) -> str:
    """``letter``, ``mark`` (combining), ``common`` (see :data:`COMMON_SYMBOLS`), ``bad``
    (control, private use, unassigned, surrogate, format) or ``unusual``."""
    if char in COMMON_SYMBOLS:
        return "common"
    if char == "\u00a4":
        return "unusual"  # the generic currency sign: what other code pages' € or ₪ read as
    category = unicodedata.category(char)
    if category[0] == "L":
        return "letter" if _script(char) != "Other" else "unusual"
    if category[0] == "M":
        return "mark"
    if category in ("Cc", "Co", "Cn", "Cs", "Cf"):
        return "bad"
    code = ord(char)
    if (
        0x3000 <= code <= 0x303F
        or 0xFF01 <= code <= 0xFF65
        or category in ("Zs", "Nd", "Sc")
        or (category in ("Pd", "Ps", "Pe", "Pi", "Pf") and code < 0x2E80)
    ):
        return "common"
    return "unusual"


def _sample(text: str) -> str:
    """``text``, or when longer than :data:`SAMPLE_CHARS`, lines of it with non-ASCII characters,
    taken from the start of each of :data:`SAMPLE_PARTS` equal parts, up to that many in all."""
    if len(text) <= SAMPLE_CHARS:
        return text
    share = SAMPLE_CHARS // SAMPLE_PARTS
    step = len(text) // SAMPLE_PARTS
    pieces: list[str] = []
    for part in range(SAMPLE_PARTS):
        size = 0
        for match in _NON_ASCII_LINE.finditer(text, part * step, (part + 1) * step):
            pieces.append(match.group()[: share - size])
            size += len(pieces[-1]) + 1
            if size >= share:
                break
    return "\n".join(pieces)


_LEVEL_ONE: dict[str, tuple[tuple[str, int, int], ...]] = {
    # (codec, first, last): the frequency-chosen first level of each national standard.
    "Japanese": (("cp932", 0x889F, 0x9872),),  # JIS X 0208 level 1, in Shift_JIS
    "Chinese": (("gb2312", 0xB0A1, 0xD7F9), ("big5", 0xA440, 0xC67E)),  # GB 2312 / Big5 level 1
    "Korean": (("euc_kr", 0xCAA1, 0xFDFE),),  # KS X 1001 hanja
}


@lru_cache(maxsize=65536)
def _common_ideograph(char: str, language: str) -> bool:
    """Whether the ideograph is in the first level of ``language``'s national standard."""
    for codec, first, last in _LEVEL_ONE[language]:
        try:
            raw = char.encode(codec)
        except UnicodeEncodeError:
            continue
        if len(raw) == 2 and first <= int.from_bytes(raw, "big") <= last:
            return True
    return False


@lru_cache(maxsize=16384)
def _common_syllable(char: str) -> bool:
    """Whether the Hangul syllable is one of KS X 1001's 2,350 (EUC-KR proper; CP949 adds the
    other 8,822, which text hardly uses)."""
    try:
        return len(char.encode("euc_kr")) == 2  # others come out as 8-byte jamo sequences
    except UnicodeEncodeError:
        return False


@dataclass(slots=True)
class _Tally:
    """What one pass over a reading's sample found."""

    letters: dict[str, int] = field(default_factory=dict)  # non-ASCII alphabet letters, lower case
    singles: dict[str, int] = field(default_factory=dict)  # one-letter words beyond ASCII, lower case
    scripts: dict[str, int] = field(default_factory=dict)  # letters by script
    words: dict[str, int] = field(default_factory=dict)  # words of 2+ letters by alphabet
    titled: dict[str, int] = field(default_factory=dict)  # of which capitalised
    unaccented: int = 0  # Latin words of 2+ letters without an ASCII letter
    greek_long: int = 0  # lower-case Greek words of 5+ letters
    greek_accented: int = 0  # of which with an accent
    hangul_run: int = 0
    hanja_in_hangul: int = 0
    ideographs: list[str] = field(default_factory=list)


def assess(reading: Reading) -> None:
    """Fill in the reading's ``rejection``, or its ``flaws`` and ``doubts`` (see
    :class:`CharsetDecoder`)."""
    text = _sample(reading.text)
    allowed: set[str] = set()
    for language in reading.languages:
        allowed |= _SCRIPTS_OF[language.script]
    tally = _Tally()
    mojibake = _UTF8_AS_LATIN.search(text)
    if mojibake is not None:
        reading.flaw("UTF-8 read as windows-1252", mojibake.group())
    for match in _TOKEN.finditer(text):
        token = match.group()
        near = max(0, match.start() - 2), match.end() + 2
        if _NUMBER_SIGNS.search(token) and not _NUMBER_SIGN_USE.search(text, *near):
            reading.doubt("number signs away from numbers", token[:40])
        glued = [c for pair in _CAPITAL_ON_NUMBER.findall(token) for c in pair if c and not c.isascii()]
        if any(c.isupper() for c in glued):
            reading.doubt("a capital letter glued to a number", token[:40])
        elif any(_script(c) == "Latin" for c in glued):
            reading.doubt("an accented letter glued to a number", token[:40])
        rejection = _scan_token(token, reading, allowed, tally)
        if rejection is not None:
            reading.rejection = rejection
            return
    _misplaced_symbols(reading, text)
    _judge(reading, text, tally)


def _misplaced_symbols(reading: Reading, text: str) -> None:
    """Flaw symbols that stand where their use never puts them, and doubt those in unusual places:
    what another code page's letters or symbols read as (see :data:`_ORDINALS`,
    :data:`_FRACTIONS`, :data:`_GUILLEMETS`, :data:`_DAGGERS`, :data:`_INVERTED`,
    :data:`_CURRENCIES`, :data:`_SCALES`, :data:`_LOW_QUOTES`, :data:`_DASHES`,
    :data:`_OPENING_QUOTES`, :data:`DOS_MATH`, :data:`MAX_OPERAND`; pseudo-graphics glued to a
    digit, ``20█``; a lone half-width katakana glued to a Latin word, ``ﾒquotedﾓ``; a middle dot
    at one side of a word); and letters where their languages never write them
    (:data:`_UNWRITTEN`)."""
    present: dict[str, bool] = {}  # partner marks searched in the whole text, once per reading
    for match in _ODD_SYMBOL.finditer(text):
        char, index = match.group(), match.start()
        before = text[index - 1] if index else ""
        after = text[index + 1] if index + 1 < len(text) else ""
        if char in _ORDINALS:
            start = index
            while start > 0 and text[start - 1] == " " and start > index - 4:
                start -= 1
            if before == "." or text[start - 1 : start].isdigit():
                continue
            start = index
            while start > 0 and text[start - 1].isalpha() and start > index - 16:
                start -= 1
            letters = text[start:index]
            if not after.isalnum() and (
                letters in ("n", "N") or (0 < len(letters) <= MAX_ABBREVIATION and letters[0].isupper())
            ):
                continue
            reading.flaw("ordinal indicators away from numbers and abbreviations", text[max(0, index - 8) : index + 2])
        elif char in _FRACTIONS:
            if after.isalnum() and not before.isdigit():
                reading.flaw("fractions before a word or number", text[index : index + 8])
        elif char in _GUILLEMETS:
            if _present(present, _GUILLEMETS[char], reading.text) or _guillemet_arrow(text, index):
                continue
            reading.flaw("guillemets without their pair", text[max(0, index - 8) : index + 8])
        elif char in _LOW_QUOTES:
            if not any(_present(present, close, reading.text) for close in _LOW_QUOTES[char]):
                reading.flaw("low quotation marks without a closing one", text[max(0, index - 8) : index + 8])
        elif char == "°":
            start = index
            while start > 0 and text[start - 1] == " " and start > index - 3:
                start -= 1
            if not text[start - 1 : start].isdigit() and after not in _SCALES:
                reading.doubt("degree signs away from numbers", text[max(0, index - 8) : index + 8])
        elif char in _DAGGERS:
            if after.isalpha():
                reading.flaw("daggers before a word", text[max(0, index - 4) : index + 8])
            elif char == "‡" and not _present(present, "†", reading.text):
                reading.doubt("double daggers without a dagger", text[max(0, index - 8) : index + 2])
        elif char in _CURRENCIES:
            if _NEAR_NUMBER.search(text, max(0, index - 2), index + 3):
                continue
            if before.isalpha() or after.isalpha():
                reading.flaw("currency signs glued to a word", text[max(0, index - 8) : index + 8])
            else:
                reading.doubt("currency signs away from numbers", text[max(0, index - 8) : index + 8])
        elif char in _DASHES:
            if before.isalpha() and after.isalpha() and _uneven_join(text, index):
                reading.doubt("dashes joining a word to a letter", text[max(0, index - 8) : index + 4])
        elif char in _OPENING_QUOTES:
            german = any(_present(present, low, reading.text) for low in _LOW_QUOTES)
            if before.isalpha() and not after.isalnum() and not german:
                reading.doubt("opening quotation marks after a word", text[max(0, index - 8) : index + 4])
        elif char == "·":
            if before.isalpha() != after.isalpha():
                reading.doubt("middle dots stuck to words", text[max(0, index - 8) : index + 8])
        elif char in _INVERTED:
            if after.isspace() or not after:
                reading.flaw("inverted marks before a space", text[index : index + 12])
            elif text.find(_INVERTED[char], index) < 0:
                reading.doubt("inverted marks without their closing mark", text[index : index + 12])
        elif char in _MATH:
            if char in reading.symbols and _without_operand(text, index):
                reading.doubt("mathematical symbols without an operand", text[max(0, index - 8) : index + 8])
        elif char in reading.symbols:  # pseudo-graphics (DOS_SYMBOLS), by _ODD_SYMBOL's range
            if before.isdigit() or after.isdigit():
                reading.flaw("unusual symbols", text[max(0, index - 4) : index + 4])
        elif _HALFWIDTH_KANA.match(char):
            lone = not _HALFWIDTH_KANA.match(before or " ") and not _HALFWIDTH_KANA.match(after or " ")
            if lone and (_ASCII_LETTERS.match(before or " ") or _ASCII_LETTERS.match(after or " ")):
                reading.flaw("a lone half-width katakana glued to a Latin word", text[max(0, index - 8) : index + 8])
    unwritten = _UNWRITTEN.search(text)
    if unwritten is not None:
        start = unwritten.start()
        reading.flaw("letters where their language never writes them", text[max(0, start - 6) : start + 4])
    for line in text.splitlines():
        if not _OPERATOR_TOKEN.search(line):
            continue
        tokens = line.split()
        for position, token in enumerate(tokens):
            if token not in _OPERATORS:
                continue
            for neighbour in tokens[max(0, position - 1) : position] + tokens[position + 1 : position + 2]:
                operand = neighbour.strip(",.;:()")
                if (
                    len(operand) <= MAX_OPERAND
                    and all(c.isalnum() or c in _SUPERSCRIPTS for c in operand)
                    and any(not c.isascii() and _script(c) == "Latin" for c in operand)
                ):
                    reading.flaw("accented letters as a formula's operands", line[:40])


def _guillemet_arrow(text: str, index: int) -> bool:
    """Whether the guillemet at ``text[index]``, which has no partner in the text, is an arrow
    (``Tools » Options``, ``« Back``, ``Next »``): a token of its own that ends or starts its
    line, or comes before a capitalised word."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    line_before = text[start:index]
    line_after = text[index + 1 : end if end >= 0 else len(text)]
    if (line_before and not line_before[-1].isspace()) or (line_after and not line_after[0].isspace()):
        return False
    following = line_after.split(None, 1)
    return not line_before.strip() or not following or following[0][:1].isupper()


def _uneven_join(text: str, index: int) -> bool:
    """Whether the dash at ``text[index]``, between two letters, joins a word to a single letter
    (``Espa–a``, ``canci—n``) or two single letters of different case (``A–o``), rather than two
    words (``Austria–Hungary``) or a range (``A–Z``, ``a–z``)."""
    start = index
    while start > 0 and text[start - 1].isalpha():
        start -= 1
    end = index + 1
    while end < len(text) and text[end].isalpha():
        end += 1
    left, right = text[start:index], text[index + 1 : end]
    if len(left) == 1 and len(right) == 1:
        return left.isupper() != right.isupper()
    return (len(left) == 1) != (len(right) == 1)


def _without_operand(text: str, index: int) -> bool:
    """Whether the symbol at ``text[index]`` stands apart with no operand beside it on its line:
    nothing, or a word of two or more letters, on each side (``of ≡ is``, ``≥ Name ≥``), where a
    formula has a number, a one-letter variable or a bracket (``x ≤ 10``, ``√2``, ``≈ (a)``)."""
    before_char = text[index - 1] if index else "\n"
    after_char = text[index + 1] if index + 1 < len(text) else "\n"
    if not before_char.isspace() or not after_char.isspace():
        return False
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    before = text[start:index].split()[-1:]
    after = text[index + 1 : end if end >= 0 else len(text)].split()[:1]
    return all(len(word.strip(",.;:")) >= 2 and word.strip(",.;:").isalpha() for word in before + after)


def _present(cache: dict[str, bool], char: str, text: str) -> bool:
    """Whether ``char`` is in ``text``, searched once per ``cache`` (one reading's whole text)."""
    if char not in cache:
        cache[char] = char in text
    return cache[char]


_DASHES = frozenset("–—")
"""En and em dashes join words (``Austria–Hungary``, ``word—word``) and ranges (``A–Z``); one that
joins a word to a single letter (``Espa–a``, ``A–o``, ``canci—n``) is a doubt: Mac OS Roman's
``ñ`` and ``ó`` read in windows-1252 (:func:`_uneven_join`)."""

_OPENING_QUOTES = frozenset("‘“")
"""An opening quotation mark glued to the end of a word (``Zo‘ said``) is a doubt: what Mac OS
Roman's ``ë`` and windows-1252's ``ì`` read as in each other; but not in a text with low quotes,
whose closing marks they are (``„Tag“``)."""

_DAGGERS = frozenset("†‡")
"""Footnote marks follow the word they mark (``word†``), and a dagger before a name or year stands
apart (``† 1832``): one glued before a word (``‡ÈÎ``) is a flaw, and a double dagger (the second
footnote mark) in a text without a dagger a doubt (``Citt‡``, ``mise ‡ jour``): what
windows-1252's ``à`` and windows-1251's ``а`` read as in Mac OS Roman."""

_CURRENCIES = frozenset("€£¥¢")
_NEAR_NUMBER = re.compile(r"\d")
"""A currency sign stands next to an amount (``20 €``, ``£3``, ``25¢``, ``US$5``): one with no
digit within two characters is a doubt (``€  RELEASE NOTES``: code page 437's ``█`` in Mac OS
Roman), and a flaw when glued to a word (``O¥``: Mac OS Roman's ``ù`` in code page 437)."""

_INVERTED = {"¿": "?", "¡": "!"}
"""Spanish opens a question with ``¿`` and an exclamation with ``¡``, glued to its first word, and
closes it: one before a space is a flaw (``¿ noter : la mise``, windows-1252's ``À`` read in Mac
OS Roman), one never closed a doubt."""

_UNWRITTEN = re.compile(
    r"[ãÃ](?=[^\W\d_oeisOEIS])"
    r"|[ñÑ](?=[b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z])"
    r"|[śźńŚŹŃ](?=[aeiouyąęóAEIOUYĄĘÓ])"
    r"|[ìùÌÙ](?=[^\W\d_])"
    r"|[œŒ](?![^\W\d_])"
)
"""Letters in places the languages that write them never put them: Portuguese ``ã`` stands before
``o``, ``e``, ``i``, ``s`` or at a word's end (``não``, ``mãe``, ``irmãs``); Spanish ``ñ`` before
a vowel (``año``); Polish writes ``ś``, ``ź``, ``ń`` only before a consonant or at a word's end
(before a vowel it writes ``si``, ``zi``, ``ni``); Italian ``ì`` and ``ù`` (and French ``où``)
end a word (``così``, ``più``); French ``œ`` never does (``cœur``, ``œil``). A flaw: ``naãve`` is
code page 437's ``naïve`` in Mac OS Roman, ``faìade`` Mac OS Roman's ``façade`` in code page 437,
``Śakki`` ISO-8859-15's ``Šakki`` in ISO-8859-2."""

_ORDINALS = frozenset("ªº")
"""The ordinal indicators follow a number (``1º``, ``2ª``, ``1.º``; ``25 º`` typed for degrees)
or an abbreviation (``nº``, ``Mª``, ``Exmº``: ``n`` or a capitalised word of at most
:data:`MAX_ABBREVIATION` letters); after a longer word (``Widgetª``, what Mac OS Roman's ``™``
reads as in windows-1252), before a letter (``ªimonen``, ISO-8859-15's ``Š`` in code page 850) or
alone they are a flaw."""

MAX_ABBREVIATION = 4

_FRACTIONS = frozenset("¼½¾")
"""Vulgar fractions follow a number (``2½``) or stand apart (``½ cup``); glued before a word or
number (``½50``, ``¼uvre``) they are a flaw: code page 850's ``¢`` and ISO-8859-15's ``Œ`` read
in windows-1252."""

_GUILLEMETS = {"«": "»", "»": "«", "‹": "›", "›": "‹"}
"""Guillemets quote in pairs (« », » «, ‹ ›); one whose partner is nowhere in the text is a flaw
(``Size: « inch``, ``Price ›50``: code page 437's ``½`` and ``¢`` read in windows-1252), unless
it is an arrow (:func:`_guillemet_arrow`)."""

_LOW_QUOTES = {"„": "“”", "‚": "‘’"}
"""German and other quotes open low (``„Tag“``, ``‚Tag‘``) and close high: a low one with no
closing mark in the text is a flaw (``„ r``: code page 437's ``π`` in windows-1252)."""

_SCALES = frozenset("CFKNSEW")
"""A degree sign follows a number (``25°``, ``25 °C``) or comes before a scale or compass point
(``in °C``); elsewhere (``° loop``: Mac OS Roman's ``∞`` in windows-1252) it is a doubt."""

_OPERATORS = frozenset("= + × ÷ ± < > ≤ ≥ ≈ ≠ * ^".split())
_OPERATOR_TOKEN = re.compile(r"(?:^|\s)[=+×÷±<>≤≥≈≠*^](?:\s|$)")
MAX_OPERAND = 3
"""An operand of a formula (a token beside a free-standing operator of :data:`_OPERATORS`) is a
number or a variable of a letter or two, with superscripts; one of at most this many letters,
digits and superscripts holding an accented Latin letter (``xý + yý = zý``, ``E = mcý``,
``Angle Ó = 30°``) is a code page's superscript or Greek letter read as a letter: a flaw. ``-``
and ``/`` are no operators here: ``Jean - né en 1950``."""

_HALFWIDTH_KANA = re.compile("[\uff66-\uff9f]")
_ODD_SYMBOL = re.compile(
    "["
    + re.escape("".join(sorted(_ORDINALS | _FRACTIONS | set(_GUILLEMETS) | _DAGGERS | _CURRENCIES | _DASHES)))
    + re.escape("".join(sorted(_OPENING_QUOTES | set(_INVERTED) | _MATH | set(_LOW_QUOTES) | {"·", "°"})))
    + "\u2500-\u25a0\uff66-\uff9f]"
)
"""The characters :func:`_misplaced_symbols` looks at: the symbols above, pseudo-graphics and
half-width katakana."""


def _scan_token(token: str, reading: Reading, allowed: set[str], tally: _Tally) -> str | None:
    """Count what ``token`` (a whitespace-delimited run with non-ASCII characters) holds; the
    reason it is implausible, if it is."""
    word_start = -1
    base = ""  # the script of the letter a combining mark would sit on
    end = len(token)
    for index in range(end + 1):
        char = token[index] if index < end else " "
        kind = ("letter" if char.isalpha() else "ascii") if char.isascii() else _kind(char)
        if kind == "mark" and word_start >= 0:
            script = _script(char)
            if script != "Other" and script != base:
                reading.examples["rejection"] = token[:40]
                return f"{script} mark U+{ord(char):04X} on a {base} letter"
            continue
        if kind == "letter":
            if word_start < 0:
                word_start = index
            base = "Latin" if char.isascii() else _script(char)
            if not char.isascii():
                script = base
                if reading.languages and script not in allowed:
                    written = "/".join(sorted({language.script for language in reading.languages}))
                    reading.examples["rejection"] = char
                    return f"{script} letter U+{ord(char):04X} in {written} text"
                tally.scripts[script] = tally.scripts.get(script, 0) + 1
                if script in _ALPHABETS:
                    lower = char.lower() if len(char.lower()) == 1 else char
                    tally.letters[lower] = tally.letters.get(lower, 0) + 1
            continue
        if kind == "mark":
            return f"combining mark U+{ord(char):04X} after no letter"
        if kind == "bad":
            return f"control or unassigned character U+{ord(char):04X}"
        if word_start >= 0:
            problem = _word(token[word_start:index], reading, tally)
            if problem is not None:
                return problem
            word_start = -1
        if kind == "ascii":
            continue
        after_letter = index > 0 and token[index - 1].isalpha()
        before_letter = index + 1 < end and token[index + 1].isalpha()
        if kind == "unusual" and (
            char not in reading.symbols
            or after_letter
            or before_letter
            or not _in_drawing(token, index, reading.symbols)
        ):
            reading.flaw("unusual symbols", char)
        if unicodedata.category(char) in ("Sc", "Sm", "So", "Sk", "No") and (
            (after_letter and char not in _AFTER_WORD) or (before_letter and char not in _BEFORE_WORD)
        ):
            reading.doubt("symbols stuck to words", token[:40])
        if char in _SUPERSCRIPTS and not (index > 0 and token[index - 1].isalnum()):
            reading.doubt("superscripts after no letter or digit", token[:40])
        if (
            0 < index < end - 1
            and not _joins(char, token[index - 1], token[index + 1])
            and _alphabet_letter(token[index - 1])
            and _alphabet_letter(token[index + 1])
        ):
            reading.examples["rejection"] = token[:40]
            return f"symbol U+{ord(char):04X} inside a word"
    return None


def _in_drawing(token: str, index: int, symbols: frozenset[str]) -> bool:
    """Whether the pseudo-graphics character ``token[index]`` (:data:`DOS_SYMBOLS`) fits a drawing:
    it connects with its neighbours (:func:`_connect`); a corner or junction has no stroke
    dangling at the token's edge (``├──``, ``──┤``, ``│``, but not a lone ``╢``); a plain
    horizontal line (``─── Menu ───``) or a shade (``░▒▓``) stands in a run. Otherwise it is
    the single symbol or letter of another code page (``¶``, ``²``, ``€``)."""
    char = token[index]
    before = token[index - 1] if index > 0 and token[index - 1] in symbols else ""
    after = token[index + 1] if index + 1 < len(token) and token[index + 1] in symbols else ""
    if after and not _connect(char, after):
        return False
    sides = _box_sides(char)
    if sides is None:
        return char not in _SHADES or bool(before or after)
    if _box_line(char):
        return bool(before or after)
    return (bool(before) or not sides[0]) and (bool(after) or not sides[1])


_SHADES = frozenset("░▒▓")


@lru_cache(maxsize=256)
def _box_line(char: str) -> bool:
    """Whether the box-drawing character is a plain horizontal line (``─ ═ ━``), no junction."""
    name = unicodedata.name(char, "")
    return "HORIZONTAL" in name and not any(word in name for word in ("VERTICAL", "UP", "DOWN"))


@lru_cache(maxsize=256)
def _connect(left: str, right: str) -> bool:
    """Whether two pseudo-graphics characters (:data:`DOS_SYMBOLS`) can stand side by side in a
    drawing: box drawing whose facing sides both have a horizontal stroke or both have none
    (``┌─``, ``│ │``, not ``╔┌``), or two block elements (``█▀``). Lower-case Cyrillic in KOI8-R
    read as code page 437 is box drawing that does not connect (``╔┌`` for ``из``)."""
    sides = _box_sides(left), _box_sides(right)
    if sides[0] is None or sides[1] is None:
        return sides[0] is None and sides[1] is None
    return sides[0][1] == sides[1][0]


@lru_cache(maxsize=256)
def _box_sides(char: str) -> tuple[bool, bool] | None:
    """For a box-drawing character, whether it has a stroke on its left and on its right side
    (from its Unicode name: ``... DOWN AND RIGHT``, ``... HORIZONTAL``); ``None`` for a block
    element or the black square."""
    name = unicodedata.name(char, "")
    if not name.startswith("BOX DRAWINGS"):
        return None
    horizontal = "HORIZONTAL" in name
    return horizontal or "LEFT" in name, horizontal or "RIGHT" in name


def _joins(char: str, before: str, after: str) -> bool:
    """Whether ``char`` may stand between the letters ``before`` and ``after`` (see :data:`_IN_WORD`)."""
    if char == "·":
        return before in "lL" and after in "lL"  # Catalan's ela geminada (col·lecció) is its only use
    return char in _IN_WORD or unicodedata.category(char) == "Pd"


def _alphabet_letter(char: str) -> bool:
    return char.isalpha() and (char.isascii() or _script(char) in _ALPHABETS)


def _word(word: str, reading: Reading, tally: _Tally) -> str | None:
    """Count what one letter run holds; why it cannot be a word, if it cannot."""
    if word.isascii():
        return None
    if len(word) == 1 and _script(word) in _ALPHABETS:
        lower = word.lower() if len(word.lower()) == 1 else word
        tally.singles[lower] = tally.singles.get(lower, 0) + 1
    alphabets = {"Latin" if c.isascii() else _script(c) for c in word if c.isalpha()} & _ALPHABETS
    if len(alphabets) > 1:
        reading.examples["rejection"] = word[:40]
        return f"a word mixing {' and '.join(sorted(alphabets))} letters"
    previous = before = ""
    run = 0
    for index, char in enumerate(word):
        if not (char.isascii() and previous.isascii()) and (
            (char.isupper() and previous.islower()) or (char.islower() and previous.isupper() and before.isupper())
        ):
            reading.flaw("case flips inside words", before + previous + char)
        before, previous = previous, char
        if char.isascii():
            continue
        script = _script(char)
        if (
            (script in _IDEOGRAPHIC or script == "Fullwidth")
            and 0 < index < len(word) - 1
            and word[index - 1].isascii()
            and word[index + 1].isascii()
        ):
            # Full-width Latin letters write whole words in CJK text (ＰＣ), never one letter of
            # an ASCII word: "dｇu" is code page 437's "déçu" in Shift_JIS.
            reading.examples["rejection"] = word[:40]
            return "an ideograph or full-width letter between Latin letters"
        if script == "Hangul":
            run += 1
            tally.hangul_run = max(tally.hangul_run, run)
        else:
            run = 0
        if script == "Han":
            tally.ideographs.append(char)
            if 0 < index < len(word) - 1 and _script(word[index - 1]) == "Hangul" == _script(word[index + 1]):
                tally.hanja_in_hangul += 1
    letters = [c for c in word if c.isalpha()]
    tripled = _TRIPLED.search(word)
    if tripled is not None:
        reading.doubt("a letter three times in a row", tripled.group())
    medial = sum(1 for c in letters[:-1] if c in _WORD_FINAL)
    if medial:
        reading.flaw("word-final letters inside words", word[:40], medial)
    if alphabets == {"Cyrillic"}:
        if word[0] in "ьъыЬЪЫ":
            reading.doubt("Cyrillic words starting with ь, ъ or ы", word[:40])
        lower = word.lower()
        signs = sum(1 for a, b in zip(lower, lower[1:]) if b in "ъь" and a in _NO_SIGN_AFTER)
        if signs:
            reading.flaw("hard or soft signs after a vowel", word[:40], signs)
    if len(alphabets) == 1 and len(word) >= 2:
        (alphabet,) = alphabets
        tally.words[alphabet] = tally.words.get(alphabet, 0) + 1
        if alphabet == "Latin" and not any(c.isascii() for c in word):
            tally.unaccented += 1
            if len(word) >= 3:
                # Latin orthographies accent some letters of a word; a whole word of accented
                # letters (ÍÉÒ, ģčš) is Cyrillic or Greek read in a Latin code page.
                reading.doubt("Latin words without a plain letter", word[:40])
        if word[0].isupper() and any(c.islower() for c in word[1:]):
            tally.titled[alphabet] = tally.titled.get(alphabet, 0) + 1
        if alphabet == "Greek" and len(word) >= 5 and word.islower():
            tally.greek_long += 1
            tally.greek_accented += any(c in _GREEK_ACCENTS for c in word)
    return None


def _judge(reading: Reading, text: str, tally: _Tally) -> None:
    """Add the flaws and doubts that need the whole sample's tally."""
    latin = sum(k for c, k in tally.letters.items() if _script(c) == "Latin")
    ascii_letters = len(_ASCII_LETTERS.findall(text))
    reading.letters = ascii_letters + sum(tally.scripts.values())
    if latin >= MIN_ACCENTED and latin > MAX_ACCENT_SHARE * (latin + ascii_letters):
        # Only a doubt when every word also has a plain letter (Polish "Zażółć gęślą jaźń"); a
        # word of accented letters only is what Greek, Hebrew or Cyrillic read as Latin gives.
        judge = reading.flaw if tally.unaccented else reading.doubt
        judge("accented letters in Latin text", f"{latin} accented", 1)
    if reading.languages and tally.letters:
        _fit(reading, tally.letters, tally.singles)
        _top_letters(reading, tally.letters)
    _vowels(reading, tally.letters)
    alphabets = {script: count for script, count in tally.scripts.items() if script in _ALPHABETS}
    if len(alphabets) > 1 and min(alphabets.values()) < MIN_SCRIPT_LETTERS:
        reading.doubt("a few letters of another alphabet", min(alphabets, key=alphabets.__getitem__))
    for script, count in alphabets.items():
        if script != "Latin" and count < MAX_ISLAND_LETTERS and count < MAX_ISLAND_SHARE * reading.letters:
            reading.doubt(f"a few {script} letters{ISLAND}", script)
    for script, count in alphabets.items():
        if script != "Latin" and count >= MIN_WORDLESS_LETTERS and not tally.words.get(script):
            reading.flaw(f"{script} letters that form no words", script)
    for script in _CASED:
        if tally.words.get(script, 0) >= 3 and not tally.titled.get(script):
            reading.doubt(f"no capitalised {script} word", "", 1)
    for script, marks in _SCRIPT_PUNCTUATION.items():
        if not tally.scripts.get(script):
            found = [c for c in marks if c in text]
            if found:
                reading.flaw(f"{script} punctuation without {script} letters", found[0])
    if tally.words.get("Arabic", 0) >= MIN_ARABIC_WORDS and "\u0627\u0644" not in text:
        reading.doubt("Arabic without the article", "")
    if tally.greek_long >= 2 and tally.greek_accented < MIN_GREEK_ACCENTED * tally.greek_long:
        reading.doubt("Greek words without accents", f"{tally.greek_accented} of {tally.greek_long}", 1)
    if latin and not _WESTERN_PAGES & set(reading.encodings):
        english = {word.lower() for word in _ASCII_WORD.findall(text)} & ENGLISH_WORDS
        if len(english) >= MIN_ENGLISH_WORDS:
            reading.doubt("English text in a non-Western code page", " ".join(sorted(english)[:4]))
    names = {language.name for language in reading.languages}
    for name in ("Japanese", "Chinese", "Korean"):
        if name in names:
            _ideograph_checks(reading, name, text, tally)
            break
    halfwidth = tally.scripts.get("HalfwidthKatakana", 0)
    if halfwidth:
        reading.doubt("half-width katakana", next(c for c in text if _script(c) == "HalfwidthKatakana"), halfwidth)
    if not reading.flaws:
        # Pseudo-graphics that passed (touching no letter) count as a mess there: folded to spaces.
        folded = text.translate(_FULLWIDTH_TO_ASCII)
        if reading.symbols:
            folded = folded.translate(_DOS_TO_SPACE)
        mess = mess_ratio(folded, maximum_threshold=1.0)
        if mess > MAX_MESS:
            reading.flaw("mess (charset-normalizer)", f"{mess:.2f}")


def _fit(reading: Reading, letters: dict[str, int], singles: dict[str, int]) -> None:
    """Flaw the letters outside the best-fitting language's alphabet; doubt its rare ones and the
    one-letter words it does not have; script by script (Arabic text with French words is fine in
    windows-1256)."""
    by_script: dict[str, dict[str, int]] = {}
    for char, count in letters.items():
        by_script.setdefault(_script(char), {})[char] = count
    for script, found in by_script.items():
        best: tuple[int, int, str, str] | None = None
        for language in reading.languages:
            if language.script != script:
                continue
            outside = "".join(sorted(c for c in found if c not in language.letters))
            rare = "".join(sorted(c for c in found if c in language.rare))
            lone = "".join(sorted(c for c in singles if _script(c) == script and c not in language.single))
            doubts = sum(found[c] for c in rare) + sum(singles[c] for c in lone)
            score = (sum(found[c] for c in outside), doubts, outside, rare + (f" alone: {lone}" if lone else ""))
            if best is None or score[:2] < best[:2]:
                best = score
                best_name = language.name
        if best is None:
            continue
        if best[0]:
            reading.flaw("letters no single language writes together", f"{best[2]} (not {best_name})", best[0])
        if best[1]:
            reading.doubt("rare letters or lone letters", f"{best[3]} ({best_name})", best[1])


def _vowels(reading: Reading, letters: dict[str, int]) -> None:
    """Flaw Cyrillic, doubt Greek with too few vowels (see :data:`VOWELS`)."""
    for script, (vowels, least, judge) in VOWELS.items():
        found = {c: k for c, k in letters.items() if _script(c) == script}
        total = sum(found.values())
        if total < MIN_VOWEL_LETTERS:
            continue
        share = sum(k for c, k in found.items() if c in vowels) / total
        if share < least:
            getattr(reading, judge)(f"few {script} vowels", f"{share:.0%}")


def _top_letters(reading: Reading, letters: dict[str, int]) -> None:
    """Doubt a non-Latin alphabet whose letters are seldom its language's most frequent ones."""
    by_script: dict[str, dict[str, int]] = {}
    for char, count in letters.items():
        by_script.setdefault(_script(char), {})[char] = count
    for script, found in by_script.items():
        total = sum(found.values())
        tops = [lang.top for lang in reading.languages if lang.script == script and lang.top]
        if total < MIN_TOP_LETTERS or not tops:
            continue
        share = max(sum(found.get(c, 0) for c in top) for top in tops) / total
        if share < MIN_TOP_SHARE:
            reading.doubt(f"few of the most frequent {script} letters", f"{share:.0%}")


def _ideograph_checks(reading: Reading, language: str, text: str, tally: _Tally) -> None:
    """Rare ideographs; Japanese without kana; Korean syllable statistics; Chinese frequency."""
    ideographs = tally.ideographs
    rare = [c for c in ideographs if not _common_ideograph(c, language)]
    if len(rare) > max(1, MAX_RARE_IDEOGRAPHS * len(ideographs)):
        reading.flaw("rare ideographs", "".join(rare[:6]), len(rare))
    elif rare:
        reading.doubt("rare ideographs", "".join(rare), len(rare))
    scripts = tally.scripts
    if language == "Japanese" and len(ideographs) >= MIN_KANJI and not (
        scripts.get("Hiragana") or scripts.get("Katakana")
    ):
        reading.doubt("Japanese without kana", "".join(ideographs[:6]))
    if language == "Chinese" and len(ideographs) >= MIN_CHINESE:
        frequent = sum(1 for c in ideographs if c in _CHINESE_FREQUENT)
        most = sum(1 for c in ideographs if c in _CHINESE_MOST_FREQUENT)
        count = len(ideographs)
        if frequent < max(1.0, MIN_FREQUENT_CHINESE * count) or most < MIN_MOST_FREQUENT_CHINESE * count:
            reading.doubt("few frequent Chinese characters", "".join(ideographs[:6]))
    if language == "Korean":
        syllables = [c for c in text if "\uac00" <= c <= "\ud7a3"]
        if not syllables:
            if ideographs:
                reading.flaw("hanja without Hangul", "".join(ideographs[:6]))
            return
        rare = [c for c in syllables if not _common_syllable(c)]
        if len(rare) > max(1, MAX_RARE_IDEOGRAPHS * len(syllables)):
            reading.flaw("rare Hangul syllables", "".join(rare[:6]), len(rare))
        frequent = sum(1 for c in syllables if c in _KOREAN_FREQUENT)
        if frequent < MIN_FREQUENT_HANGUL * len(syllables):
            if len(syllables) >= MIN_SYLLABLES:
                reading.flaw("few frequent Hangul syllables", "".join(syllables[:6]))
            else:
                reading.doubt("few frequent Hangul syllables", "".join(syllables[:6]))
        if tally.hangul_run > MAX_HANGUL_RUN:
            reading.flaw("Hangul without spaces", f"{tally.hangul_run} syllables")
        if scripts.get("Jamo", 0) * 5 > len(syllables):
            reading.flaw("stray jamo", next(c for c in text if _script(c) == "Jamo"), scripts["Jamo"])
        if tally.hanja_in_hangul:
            reading.flaw("hanja inside Hangul words", "", tally.hanja_in_hangul)
