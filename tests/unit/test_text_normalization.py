"""normalize_for_search: each Arabic rule, the no-op for other text, idempotence, and that whole
texts and their single words normalize alike (the index sees texts, the query compiler words);
cjk_bigrams: exact bigrams of Chinese, Japanese and Korean runs, the no-op for other scripts and
the same properties."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_workspace.domain.query import split_words
from hermes_workspace.domain.text_normalization import (
    MIN_ARTICLE_STEM,
    cjk_bigrams,
    has_arabic_script,
    has_cjk,
    normalize_for_search,
)

# -- rules, one by one ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 4. alef with hamza above / below / madda -> bare alef
        ("أحمد", "احمد"),
        ("إسلام", "اسلام"),
        ("آمن", "امن"),
        # 4. alef maqsura -> ya; ta marbuta -> ha
        ("مستشفى", "مستشفي"),
        ("مدرسة", "مدرسه"),
        # 3. tatweel removed
        ("كتـــاب", "كتاب"),
        # 3. short vowels (harakat), shadda, sukun, tanwin, dagger alef removed
        ("كِتَابٌ", "كتاب"),
        ("مُحَمَّد", "محمد"),
        ("هٰذا", "هذا"),
        # 1. + 4. a decomposed hamza (alef + U+0654) folds like the precomposed letter
        ("\u0627\u0654حمد", "احمد"),
        ("\u0648\u0654", "\u0624"),  # waw + hamza above composes to U+0624 and stays
        # 2. presentation forms -> nominal letters, then folded
        ("\ufefb", "لا"),  # lam-alef ligature
        ("\ufef7", "لا"),  # lam-alef with hamza above
        ("\ufe8d\ufedf\ufedc\ufe98\ufe8e\ufe8f", "كتاب"),  # الكتاب in isolated/initial/medial/final forms
        # 5. Arabic-Indic and extended digits -> ASCII
        ("٢٠١٥", "2015"),
        ("۱۲۳", "123"),
    ],
)
def test_letter_rules(text: str, expected: str) -> None:
    assert normalize_for_search(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("الكتاب", "كتاب"),  # al-
        ("والكتاب", "كتاب"),  # wa-l-
        ("بالقلم", "قلم"),  # bi-l-
        ("كالبحر", "بحر"),  # ka-l-
        ("فالولد", "ولد"),  # fa-l-
        ("للطلاب", "طلاب"),  # li-l-
        ("الأبراج", "ابراج"),  # folded first, then stripped
        ("المدرسة", "مدرسه"),
        # exactly MIN_ARTICLE_STEM letters left: stripped
        ("الدم", "دم"),
        # fewer left: the word is kept whole
        ("الم", "الم"),
        ("الف", "الف"),
        ("إلى", "الي"),
        ("لله", "لله"),
        ("بال", "بال"),
        # stripped again while the rule applies, so definite and indefinite forms meet
        ("الالتزام", "تزام"),
        ("التزام", "تزام"),
        ("الألم", "الم"),  # al- + alam (pain): the second "al" would leave one letter
        # only at the start of a word
        ("مالك", "مالك"),
        ("سؤال", "سؤال"),
        ("2الكتاب", "2الكتاب"),
        # "_" separates words, as in the query parser and FTS5
        ("x_الكتاب", "x_كتاب"),
        ("في الكتاب والقلم", "في كتاب قلم"),
    ],
)
def test_article_rule(text: str, expected: str) -> None:
    assert MIN_ARTICLE_STEM == 2
    assert normalize_for_search(text) == expected


def test_mixed_text_keeps_everything_else() -> None:
    text = "Read الكتاب (page ٣) — café_au_lait, x = 1\n"
    assert normalize_for_search(text) == "Read كتاب (page 3) — café_au_lait, x = 1\n"


# -- no-op without Arabic script -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain ASCII: def read_file(path): return open(path).read()\n",
        "café naïve cafe\u0301 Straße",
        "日本語のテキスト",
        "עברית עם נִקּוּד",
        "Ελληνικά Кириллица",
        "\ufeffbyte-order mark and U+FEFF are not Arabic",
        "emoji 🙂 and math ∑",
    ],
)
def test_text_without_arabic_script_is_only_composed(text: str) -> None:
    assert not has_arabic_script(text)
    assert normalize_for_search(text) == unicodedata.normalize("NFC", text)


def test_decomposed_accents_are_composed() -> None:
    assert normalize_for_search("cafe\u0301") == "caf\u00e9"
    assert normalize_for_search("plain ascii") == "plain ascii"


@pytest.mark.parametrize("text", ["\u0600", "\u06ff", "\u0750", "\u08a0", "\ufb50", "\ufefc", "a ب"])
def test_every_arabic_block_switches_the_rules_on(text: str) -> None:
    assert has_arabic_script(text)


# -- properties -----------------------------------------------------------------------------------

_ALPHABET = (
    "ابتثجحخدذرسشصضطظعغفقكلمنهويءآأإؤئىةـ"  # letters, variants, tatweel
    "\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652\u0654\u0655\u0670"  # marks
    "٠١٢۳\ufefb\ufe8d\ufedf\ufdf2"  # digits, presentation forms
    "al_ -.\n\u0301é"  # Latin, separators, a Latin combining mark
)
_texts = st.text(alphabet=_ALPHABET, max_size=40)


@settings(max_examples=400, deadline=None)
@given(_texts)
@example("\u0621a\u064b\u0301")  # an Arabic mark between a letter and its accent (found by hypothesis)
def test_idempotent(text: str) -> None:
    once = normalize_for_search(text)
    assert normalize_for_search(once) == once


@settings(max_examples=400, deadline=None)
@given(_texts)
@example("\u0621_a\u0301")  # a decomposed accent in a word without Arabic (found by hypothesis)
def test_a_text_and_its_words_normalize_alike(text: str) -> None:
    """The store normalizes whole chunks, the query compiler single words: both must give the
    same words, or a query word would miss its own text."""
    whole = split_words(normalize_for_search(text))
    by_word = [w for word in split_words(text) for w in split_words(normalize_for_search(word))]
    assert whole == by_word


# -- cjk_bigrams ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("数据库连接", "数据 据库 库连 连接"),
        ("数据", "数据"),  # a run of two is its own bigram
        ("书", "书"),  # a run of one stays itself
        ("hello数据库world", "hello 数据 据库 world"),  # cut off from other scripts' letters
        ("a书b", "a 书 b"),
        ("v2数据", "v2 数据"),  # digits too
        ("我们的数据库连接失败了。", "我们 们的 的数 数据 据库 库连 连接 接失 失败 败了。"),
        ("「数据库」、表", "「数据 据库」、表"),  # CJK punctuation separates, as in the tokenizer
        # Japanese: one run across kanji, hiragana and katakana; the prolonged sound mark is a letter
        ("データベースに接続", "デー ータ タベ ベー ース スに に接 接続"),
        ("ひらがな", "ひら らが がな"),
        ("カタカナ・テスト", "カタ タカ カナ・テス スト"),  # the middle dot separates
        ("ｶﾀｶﾅ", "ｶﾀ ﾀｶ ｶﾅ"),  # halfwidth katakana
        ("人々", "人々"),  # the iteration mark is a letter
        # Korean: bigrams inside each space-separated word (particles attach to nouns)
        ("데이터베이스가 연결", "데이 이터 터베 베이 이스 스가 연결"),
        ("𠀀𠀁𠀂", "𠀀𠀁 𠀁𠀂"),  # Extension B ideographs (outside the BMP)
        ("", ""),
    ],
)
def test_cjk_bigrams(text: str, expected: str) -> None:
    assert cjk_bigrams(text) == expected
    assert has_cjk(text) == (text != "")


@pytest.mark.parametrize(
    "text",
    [
        "plain ASCII text, with punctuation: x = a + b_c",
        "café naïve Ærøskøbing",  # Latin with accents
        "cafe\u0301",  # a decomposed accent
        "الأبراج وفي المدرسة ٢٠٢٤",  # Arabic
        "Привет, мир! Ёжик",  # Cyrillic
        "Ελληνικά, עברית, हिन्दी, ไทย",  # Greek, Hebrew, Devanagari, Thai (spaceless too, not CJK)
        "・、。「」",  # CJK punctuation only
    ],
)
def test_cjk_bigrams_leaves_other_scripts_alone(text: str) -> None:
    assert cjk_bigrams(text) is text
    assert not has_cjk(text)


_CJK_ALPHABET = "数据库连接书的データベースにひら한국어데이터 ab1_-.\n。、・é\u0301"
_cjk_texts = st.text(alphabet=_CJK_ALPHABET, max_size=30)


@settings(max_examples=300, deadline=None)
@given(_cjk_texts)
@example("a数b")
def test_cjk_bigrams_is_idempotent(text: str) -> None:
    once = cjk_bigrams(text)
    assert cjk_bigrams(once) == once


@settings(max_examples=300, deadline=None)
@given(_cjk_texts)
@example("hello数据库 world")
def test_a_text_and_its_words_give_the_same_bigrams(text: str) -> None:
    """The store bigrams whole chunks, the query compiler single words."""
    whole = split_words(cjk_bigrams(normalize_for_search(text)))
    by_word = [w for word in split_words(text) for w in split_words(cjk_bigrams(normalize_for_search(word)))]
    assert whole == by_word


def test_every_bigram_of_a_word_is_found_adjacent_in_a_run_holding_it() -> None:
    """What makes a word inside a run findable: the word's bigrams occur, in order and adjacent,
    among the run's bigrams."""
    run, word = cjk_bigrams("我们的数据库连接失败了").split(), cjk_bigrams("数据库").split()
    assert word == ["数据", "据库"]
    assert any(run[i : i + len(word)] == word for i in range(len(run)))
