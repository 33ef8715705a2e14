"""Text normalization for keyword search: one pure function, :func:`normalize_for_search`,
applied both to the text an index stores for matching and to every query word, so that the two
sides always agree. Standard library only.

Today it normalizes Arabic script only (FTS5's ``porter`` stemmer handles ASCII words, and its
``unicode61`` tokenizer folds Latin diacritics, but neither knows Arabic orthography). Text
without an Arabic-script character is returned unchanged (the same object) after a cheap check,
so indexing code, English prose or any other script costs one ``str.isascii()`` call, or one
regular-expression scan for non-ASCII text.

Sources: *Larkey* = L. S. Larkey, L. Ballesteros and M. E. Connell, "Improving Stemming for
Arabic Information Retrieval: Light Stemming and Co-occurrence Analysis" (SIGIR 2002), and
"Light Stemming for Arabic Information Retrieval" (in *Arabic Computational Morphology*,
Springer 2007): the normalization and the ``light8``/``light10`` article rule below. *Lucene* =
Apache Lucene's ``ArabicAnalyzer`` (``ArabicNormalizer``, ``ArabicStemmer``,
``DecimalDigitFilter``), an implementation of Larkey's rules. Where a rule goes beyond them, it
says so.

Rules, in order, for text that contains Arabic script (:data:`ARABIC_SCRIPT_RANGES`):

1. **Unicode NFC** (UAX #15), so that a letter typed as base letter + combining hamza/madda
   (``ا`` + U+0654) and its precomposed form (``أ``) fold alike in the next steps.
2. **Presentation forms to letters**: characters of the Arabic Presentation Forms-A and -B blocks
   (contextual glyph forms and ligatures from legacy encodings and PDFs, e.g. ``ﻻ``, ``ﷲ``) are
   replaced by their Unicode compatibility decomposition (NFKC), the nominal letters; the Unicode
   Standard (ch. 9, "Arabic") keeps them for compatibility only.
3. **Diacritics and tatweel removed** (Larkey; Lucene): the short-vowel marks (harakat
   U+064B-U+0652: fathatan ... sukun) and the tatweel (kashida) U+0640, which only stretches a
   word; beyond the sources, every other nonspacing mark (category Mn) of the Arabic blocks too
   (dagger alef U+0670, combining hamza/madda U+0653-U+0655 left over after NFC, Quranic
   annotation signs), all of them vowel or reading marks. Without this, FTS5's ``unicode61``
   splits a vocalized word at every mark (``كِتَاب`` became the tokens ``ك``, ``ت``, ``اب``) and
   keeps ``الكتـــاب`` apart from ``الكتاب``.
4. **Letter variants folded** (Larkey; Lucene): alef with hamza above/below or madda
   (``أ إ آ``) -> bare alef ``ا``; alef maqsura ``ى`` -> ya ``ي``; ta marbuta ``ة`` -> ha ``ه``.
   Writers and keyboards mix these freely (``أبراج`` / ``ابراج``, ``على`` / ``علي``). Like
   Lucene, the last two are folded wherever they occur (both letters are word-final in
   practice), not only at the end of a word as Larkey words it.
5. **Arabic-Indic digits** (U+0660-U+0669) and extended (Persian/Urdu) digits (U+06F0-U+06F9)
   -> ASCII ``0``-``9`` (Lucene's ``DecimalDigitFilter``), so ``٢٠١٥`` matches ``2015``.
6. **Definite article stripped** (Larkey's ``light8``/``light10`` prefixes; Lucene's
   ``ArabicStemmer``): a word starting with one of ``وال بال كال فال لل ال`` (*wa-l-, bi-l-,
   ka-l-, fa-l-, li-l-, al-*: "and the", "with the", "like the", "so the", "for the", "the")
   loses it when at least :data:`MIN_ARTICLE_STEM` (2) letters remain, Larkey's limit, so short
   words survive: ``الم`` (pain), ``الف`` (thousand), ``الي`` (to, after folding ``إلى``) are
   kept whole, ``الكتاب`` becomes ``كتاب``. Beyond the sources, which strip once, the article is
   stripped repeatedly while the rule applies, so a stem that itself begins with ``ال`` after
   folding (``الالتزام`` -> ``التزام`` -> ``تزام``; indefinite ``التزام`` -> ``تزام``) ends in the
   same form with or without the article, and the function is idempotent. Only the article is
   stripped, not Larkey's other prefixes (``و`` alone) or suffixes: those conflate more words,
   and the light stemmers differ on them. Known conflation of the article rule, as in Larkey's
   and Lucene's stemmers: ``الله`` -> ``له``.

Word boundaries are those of the query parser (:func:`hermes_workspace.domain.query.split_words`)
and of FTS5's ``unicode61`` tokenizer: an article is stripped only at the start of a run of
letters and digits (``_`` separates), so normalizing a whole text and normalizing each of its
words give the same tokens.

Persian/Urdu-specific letters (Farsi yeh ``ی``, keheh ``ک``) and alef wasla ``ٱ`` are not folded:
the sources above do not fold them for Arabic.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ARABIC_SCRIPT_RANGES", "MIN_ARTICLE_STEM", "has_arabic_script", "has_cjk", "normalize_for_search"]

ARABIC_SCRIPT_RANGES: tuple[tuple[int, int], ...] = (
    (0x0600, 0x06FF),  # Arabic
    (0x0750, 0x077F),  # Arabic Supplement
    (0x0870, 0x08FF),  # Arabic Extended-B and Extended-A
    (0xFB50, 0xFDFF),  # Arabic Presentation Forms-A
    (0xFE70, 0xFEFC),  # Arabic Presentation Forms-B (U+FEFF, the byte-order mark, is not one)
)
"""Code point blocks whose presence switches the Arabic rules on."""

MIN_ARTICLE_STEM = 2
"""Letters that must remain after stripping the definite article (Larkey et al.: "remove any of
the definite articles if this leaves 2 or more characters"; Lucene's ``ArabicStemmer`` alike)."""

_ARABIC_SCRIPT = re.compile("[" + "".join(f"\\u{lo:04X}-\\u{hi:04X}" for lo, hi in ARABIC_SCRIPT_RANGES) + "]")

_ALEF, _YA, _HA = "\u0627", "\u064a", "\u0647"
_LETTER_FOLDS = {
    "\u0622": _ALEF,  # آ alef with madda above
    "\u0623": _ALEF,  # أ alef with hamza above
    "\u0625": _ALEF,  # إ alef with hamza below
    "\u0649": _YA,  # ى alef maqsura
    "\u0629": _HA,  # ة ta marbuta
    "\u0640": "",  # ـ tatweel
}


def _build_table() -> dict[int, str]:
    """One ``str.translate`` table for rules 2-5 (built once, at import)."""
    table: dict[int, str] = {ord(k): v for k, v in _LETTER_FOLDS.items()}
    for base in (0x0660, 0x06F0):
        for digit in range(10):
            table[base + digit] = str(digit)
    for lo, hi in ARABIC_SCRIPT_RANGES:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            if unicodedata.category(ch) == "Mn":
                table[cp] = ""
    for lo, hi in ARABIC_SCRIPT_RANGES[3:]:  # presentation forms -> nominal letters, then folded
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            nominal = unicodedata.normalize("NFKC", ch)
            if nominal != ch:
                table[cp] = unicodedata.normalize("NFC", nominal).translate(table)
    return table


_TABLE = _build_table()

_ARTICLES = (
    "\u0648\u0627\u0644",
    "\u0628\u0627\u0644",
    "\u0643\u0627\u0644",
    "\u0641\u0627\u0644",
    "\u0644\u0644",
    "\u0627\u0644",
)
"""وال بال كال فال لل ال, longest first (the alternation below is ordered)."""

_ARTICLE = re.compile(
    r"(?<![^\W_])"  # at the start of a word: not after a letter or digit ("_" separates)
    "(?:" + "|".join(_ARTICLES) + ")+"  # one article, repeated while the rule applies
    rf"(?=[^\W_]{{{MIN_ARTICLE_STEM}}})"  # and at least MIN_ARTICLE_STEM letters/digits remain
)


_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
"""Kana, CJK ideographs (with extension A and compatibility forms), Hangul syllables."""


def has_cjk(text: str) -> bool:
    """True when ``text`` holds Chinese, Japanese or Korean characters: scripts written without
    spaces between words, which the keyword index cannot split into words."""
    return not text.isascii() and _CJK.search(text) is not None


def has_arabic_script(text: str) -> bool:
    """True when ``text`` holds at least one character of :data:`ARABIC_SCRIPT_RANGES`."""
    return not text.isascii() and _ARABIC_SCRIPT.search(text) is not None


def normalize_for_search(text: str) -> str:
    """``text`` as keyword search should see it (rules in the module docstring).

    Pure and idempotent (``f(f(x)) == f(x)``); returns ``text`` itself when it is ASCII, its NFC
    form when it has no Arabic-script character (so a decomposed ``a`` + U+0301 in a file and a
    composed ``á`` in a query are one word, whether normalized whole or word by word). Normalizing a text and normalizing each word of it separately give the same words,
    so an index can apply it to whole chunks and a query compiler to single words. The result is
    for matching only: it may be shorter than ``text`` and its offsets do not map back.
    """
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    if _ARABIC_SCRIPT.search(text) is None:
        return text
    # NFC again after the marks are gone: a Latin letter and its accent that an Arabic mark kept
    # apart compose only now ("a" U+064B U+0301 -> "á"), and f(f(x)) must equal f(x).
    text = unicodedata.normalize("NFC", text.translate(_TABLE))
    return _ARTICLE.sub("", text)
