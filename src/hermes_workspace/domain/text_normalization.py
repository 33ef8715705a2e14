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

A second pure function, :func:`cjk_bigrams`, splits runs of Chinese, Japanese and Korean letters
into overlapping character bigrams (Lucene's ``CJKAnalyzer``); an index applies it after
:func:`normalize_for_search` to both the text it stores for matching and to each query word. It is
separate because it turns one word into several tokens, which word-level callers (a reranker
comparing query words with text words) must not get unasked.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "ARABIC_SCRIPT_RANGES",
    "CJK_RANGES",
    "MIN_ARTICLE_STEM",
    "cjk_bigrams",
    "has_arabic_script",
    "has_cjk",
    "normalize_for_search",
]

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


CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3005, 0x3007),  # 々 〆 〇: ideographic iteration mark, closing mark, number zero
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3031, 0x3035),  # vertical kana repeat marks
    (0x303B, 0x303C),  # vertical ideographic iteration mark, masu mark
    (0x3041, 0x3096),  # Hiragana letters
    (0x309D, 0x309F),  # Hiragana iteration marks, digraph yori
    (0x30A1, 0x30FA),  # Katakana letters (not U+30A0 ゠ nor U+30FB ・, punctuation)
    (0x30FC, 0x30FF),  # prolonged sound mark ー, Katakana iteration marks, digraph koto
    (0x3131, 0x318E),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97C),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7A3),  # Hangul Syllables
    (0xD7B0, 0xD7FB),  # Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0xFFA0, 0xFFDC),  # halfwidth Hangul
    (0x1B000, 0x1B16F),  # Kana Supplement, Kana Extended-A, Small Kana Extension
    (0x20000, 0x323AF),  # CJK Unified Ideographs Extensions B-H, Compatibility Supplement
)
"""Letters of the Han, Hiragana, Katakana and Hangul scripts (the four scripts Lucene's
``CJKBigramFilter`` bigrams by default), plus the Katakana prolonged sound mark ``ー``, which
Unicode assigns to the Common script but is only written inside Katakana words. Punctuation of
these blocks (``、 。 「 」 ・``) is left out: it separates words."""

_CJK = re.compile("[" + "".join(f"\\U{lo:08X}-\\U{hi:08X}" for lo, hi in CJK_RANGES) + "]")
CJK_CHARACTER = _CJK
"""One character of :data:`CJK_RANGES` (a compiled pattern)."""
_CJK_RUN = re.compile(_CJK.pattern + "+")


def cjk_characters(text: str) -> int:
    """How many characters of :data:`CJK_RANGES` ``text`` holds (0 for ASCII text, at no cost)."""
    return 0 if text.isascii() else len(_CJK.findall(text))


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a character of :data:`CJK_RANGES` (Chinese, Japanese or Korean
    letters), which :func:`cjk_bigrams` rewrites."""
    return not text.isascii() and _CJK.search(text) is not None


def cjk_bigrams(text: str) -> str:
    """``text`` with every run of Chinese, Japanese or Korean letters (:data:`CJK_RANGES`)
    replaced by its overlapping character bigrams, separated by spaces; other text unchanged.

    ``"数据库连接"`` -> ``"数据 据库 库连 连接"``; a run of two characters is its own bigram
    (``"数据"``), a run of one stays itself (``"书"``). A run is also cut off from the letters or
    digits of another script that touch it: ``"hello数据库world"`` -> ``"hello 数据 据库 world"``.
    Runs span the four scripts (``"データベースに接続"`` is one run, bigrams ``"スに" "に接"``
    included). Text without such a letter is returned unchanged (the same object).

    Why: Chinese and Japanese are written without spaces between words, and Korean attaches
    particles to the word they follow (``데이터베이스가``), so a tokenizer that splits on spaces and
    punctuation (FTS5's ``unicode61``) makes a whole run one token and a word inside it cannot be
    found. Overlapping bigrams need no dictionary, and a word of two or more characters becomes
    a phrase of adjacent bigrams that occurs exactly where the word occurs as a substring. This is
    the standard dictionary-free indexing of these languages: Lucene's ``CJKAnalyzer``
    (``CJKBigramFilter`` with its default scripts Han, Hiragana, Katakana and Hangul, and unigrams
    for lone characters), Elasticsearch's ``cjk`` analyzer; bigrams were found as effective as word
    segmentation for Chinese retrieval (J.-Y. Nie, J. Gao, J. Zhang, M. Zhou, "On the use of words
    and n-grams for Chinese information retrieval", IRAL 2000; K. L. Kwok, "Comparing
    representations in Chinese information retrieval", SIGIR 1997).

    Pure and idempotent (``f(f(x)) == f(x)``: a bigram is a run of two). Applying it to a whole
    text or to each whitespace-separated word gives the same tokens. Apply it after
    :func:`normalize_for_search` (NFC first, so a kana and a separate voicing mark compose). Like
    that function, the result is for matching only; its offsets do not map back.
    """
    if text.isascii() or _CJK.search(text) is None:
        return text
    return _CJK_RUN.sub(_bigram_run, text)


def _bigram_run(match: re.Match[str]) -> str:
    run = match.group()
    pieces = run if len(run) <= 2 else " ".join(run[i : i + 2] for i in range(len(run) - 1))
    text, start, end = match.string, match.start(), match.end()
    # A space only where a letter or digit of another script touches the run (the tokenizer
    # would otherwise glue them into one token); nowhere else, so the function is idempotent.
    if start > 0 and unicodedata.category(text[start - 1])[0] in "LN":
        pieces = " " + pieces
    if end < len(text) and unicodedata.category(text[end])[0] in "LN":
        pieces += " "
    return pieces


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
