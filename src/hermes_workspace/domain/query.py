"""Free text -> a backend-neutral :class:`Query` (seed 000, "Query Normalization").

User text never reaches a backend's query language: this module only extracts words; each store
compiles a :class:`Query` into its own syntax, quoting every term. Operators such as ``NOT``,
``AND``, ``NEAR`` or ``section:`` are ordinary words here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from hermes_workspace.domain.constants import MAX_QUERY_TERMS, MIN_TERM_CHARS

_COMPOUND_SEPARATORS = frozenset("-_")
_VERSION = re.compile(r"[^\w.]*[vV]?(\d+(?:\.\d+)+)[^\w.]*\.?")
"""A version or dotted number as typed (``8.1.7``, ``v3.12``, ``(2.0.1),``): a compound of its
digit groups, which are kept even when shorter than ``MIN_TERM_CHARS``."""

ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
        "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
        "they", "this", "to", "was", "will", "with",
    }
)  # fmt: skip
"""Lucene's English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``, 33 words), which is
also bm25s's ``stopwords="en"`` (``bm25s.stopwords.STOPWORDS_EN``), the list whose removal from
queries the benchmark's ablation measured (``benchmarks/quality.py``: +0.003 nDCG@10 on msmarco).
Chosen over longer lists (bm25s's 179-word ``STOPWORDS_EN_PLUS``, NLTK's) because those drop
words that carry meaning in code and technical search (``after``, ``before``, ``over``, ``own``,
``same``, ``only``...). Case-folded; see :func:`parse_query` for when they are dropped."""


@dataclass(frozen=True, slots=True)
class Compound:
    """Sub-words of a hyphenated or underscored input word (``hermes-agent``, ``read_file``):
    a store should require all ``parts`` and prefer them adjacent, in order. ``literal`` is the
    word as typed, from its first part to its last (``read_file`` out of ``read_file()``), for
    exact-match boosting; it does not take part in equality."""

    parts: tuple[str, ...]
    literal: str = field(default="", compare=False)


Group = str | Compound
"""One element of a query: a single word or a compound."""


@dataclass(frozen=True, slots=True)
class Query:
    """Normalized search terms: ``groups`` in input order, without duplicates (case-folded),
    at most :data:`MAX_QUERY_TERMS` words in all. ``text`` is the original input."""

    text: str
    groups: tuple[Group, ...]

    @property
    def is_empty(self) -> bool:
        """True when no searchable word was found (empty, whitespace or punctuation-only input)."""
        return not self.groups

    @property
    def words(self) -> list[str]:
        """Every word of every group, flattened."""
        out: list[str] = []
        for g in self.groups:
            out.extend(g.parts if isinstance(g, Compound) else (g,))
        return out


def _is_word_char(ch: str) -> bool:
    # Letters, digits and combining marks (so "café" in decomposed form stays one word);
    # underscore is a separator, as in FTS5's unicode61 tokenizer.
    return ch != "_" and unicodedata.category(ch)[0] in "LNM"


def split_words(text: str) -> list[str]:
    """Runs of letters, digits and combining marks; every other character separates.

    Equivalent to seed 000's ``re.findall(r'[^\\W_]+', text)`` plus combining marks.
    """
    words: list[str] = []
    current: list[str] = []
    for ch in text:
        if _is_word_char(ch):
            current.append(ch)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


def parse_query(text: str) -> Query:
    """Normalize free text into a :class:`Query`. Never raises for any ``str``.

    Rules (seed 000): text is NFC-normalized; words shorter than 2 characters are dropped, except
    in a version or dotted number (``8.1.7``), which becomes a compound of its digit groups; an input
    word (a whitespace-separated run) whose kept sub-words are two or more and which contains
    ``-`` or ``_`` becomes a :class:`Compound`; other sub-words become single terms. Repeats are
    dropped (case-insensitively).

    Stopwords: single terms that are English stopwords (:data:`ENGLISH_STOPWORDS`, compared
    case-folded) are dropped when the query keeps at least one other group (a non-stopword or a
    compound): ``what is the rollback procedure`` searches ``what rollback procedure``,
    ``NOT agent`` searches ``agent`` (operators are plain words) and ``the who`` searches ``who``
    (not in the list). They are kept when nothing else would remain (``to be or not to be``,
    ``the this``), and never removed from a compound (``is_file``, ``with_statement``), whose
    words are matched as a phrase. Under BM25 a stopword adds little score yet rewards long
    chunks that merely repeat it; dropping it is what Lucene's and bm25s's English analyzers do
    to queries.

    The query is then cut at :data:`MAX_QUERY_TERMS` words (a compound at the cut keeps its first
    parts), after stopwords are dropped.
    """
    text = unicodedata.normalize("NFC", text)
    candidates: list[tuple[Group, str]] = []  # (group, the input word it came from)
    seen: set[object] = set()
    content_words = 0  # words in groups that are not stopwords
    for raw_word in text.split():
        version = _VERSION.fullmatch(raw_word)
        if version:  # "8.1.7": its one-digit parts are kept, as a phrase
            raw_word = version.group(1)
            parts = raw_word.split(".")
        else:
            parts = [w for w in split_words(raw_word) if len(w) >= MIN_TERM_CHARS]
        if not parts:
            continue
        if len(parts) > 1 and (version or any(ch in _COMPOUND_SEPARATORS for ch in raw_word)):
            key: object = tuple(p.casefold() for p in parts)
            if key in seen:
                continue
            seen.add(key)
            candidates.append((Compound(tuple(parts)), raw_word))
            content_words += len(parts)
        else:
            for part in parts:
                key = part.casefold()
                if key in seen:
                    continue
                seen.add(key)
                candidates.append((part, raw_word))
                content_words += key not in ENGLISH_STOPWORDS
        if content_words >= MAX_QUERY_TERMS:
            break  # the budget is full whatever the rest holds
    if content_words:
        candidates = [(g, raw) for g, raw in candidates if not _is_stopword(g)]
    groups: list[Group] = []
    budget = MAX_QUERY_TERMS
    for group, raw_word in candidates:
        if isinstance(group, Compound):
            parts = group.parts[:budget]
            start = raw_word.find(parts[0])
            end = raw_word.rfind(parts[-1]) + len(parts[-1])
            groups.append(Compound(parts, literal=raw_word[start:end]))
            budget -= len(parts)
        else:
            groups.append(group)
            budget -= 1
        if budget < 1:
            break
    return Query(text=text, groups=tuple(groups))


def _is_stopword(group: Group) -> bool:
    return isinstance(group, str) and group.casefold() in ENGLISH_STOPWORDS
