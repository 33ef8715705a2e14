"""Navigation signals on top of BM25: what kind of file a hit is in, and whether it defines what
the query names.

Both hold for any repository and use no per-query rule:

- **File role.** Tests and changelogs repeat the names and messages of the code they test or
  describe: a test asserts the exact error text a function raises, a changelog line spells out
  ``package.module.SomeError``. An agent navigating to an answer wants the definition or the
  documentation first, so the BM25 score of a hit in such a file is multiplied by
  :data:`ROLE_WEIGHTS` (the convention of code search engines that rank tests and generated
  files lower, as GitHub code search and Sourcegraph do), unless the query itself asks for that
  role (``test``, ``changelog``, ``release``...).
- **Definitions.** A short query that names identifiers (``from_prefixed_env``, ``FlaskGroup
  get_command``) is answered by the chunk whose breadcrumb or definitions name them, not by the
  call sites and tests that mention them: :func:`definition_matches` counts them, and the search
  orders hits by it before the exact-literal count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePath
from typing import Literal

from hermes_workspace.domain.query import ENGLISH_STOPWORDS

FileRole = Literal["test", "changelog", "other"]

ROLE_WEIGHTS: dict[str, float] = {"test": 0.6, "changelog": 0.6, "other": 1.0}
"""Multiplier of a hit's BM25 score by the role of its file. 0.6 lifts a definition over a test
or changelog entry that scores up to two thirds higher on the same words (a test repeats a
message once or twice more than the code raising it) while a test that matches clearly more of
the query still wins. Measured on the whole-repository sets of ``benchmarks/workspace_qa.py``."""

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "test_data", "testdata"})
_TEST_FILE = re.compile(
    r"^(?:test_.+|.+_tests?|.+[._-](?:test|spec)|.+(?:Test|Tests|Spec)|conftest)\.[A-Za-z0-9]+$"
)
_CHANGELOG_STEMS = frozenset(
    {"changelog", "changes", "history", "news", "releases", "release-notes", "release_notes", "whatsnew"}
)
_CHANGELOG_DIRS = frozenset({"changelog", "changelogs", "changes", "release-notes", "releasenotes", "whatsnew"})
_ASKS_FOR = {
    "test": frozenset({"test", "tests", "testing", "pytest", "unittest", "spec", "fixture", "fixtures"}),
    "changelog": frozenset(
        {"changelog", "changes", "changed", "release", "released", "releases", "version", "versions", "history",
         "deprecated", "added", "removed"}
    ),
}


def file_role(relative: PurePath) -> FileRole:
    """The role of a file from its path relative to its root: ``test`` (a folder named ``tests``,
    ``spec``... or a name such as ``test_x.py``, ``x_test.go``, ``x.spec.ts``, ``XTest.java``,
    ``conftest.py``), ``changelog`` (``CHANGES.rst``, ``CHANGELOG.md``, ``HISTORY``, ``NEWS``,
    files under ``changelog/``), else ``other``."""
    parts = relative.parts
    name = parts[-1] if parts else ""
    folders = {p.lower() for p in parts[:-1]}
    if folders & _TEST_DIRS or _TEST_FILE.match(name):
        return "test"
    stem = name.split(".", 1)[0].lower()
    if stem in _CHANGELOG_STEMS or folders & _CHANGELOG_DIRS:
        return "changelog"
    return "other"


def role_weight(role: FileRole, query_words: Iterable[str]) -> float:
    """:data:`ROLE_WEIGHTS` for ``role``, or 1.0 when one of ``query_words`` (case-folded) asks
    for that role (``pytest fixture for the app``, ``what changed in version 3``)."""
    asks = _ASKS_FOR.get(role)
    if asks is not None and any(word.casefold() in asks for word in query_words):
        return 1.0
    return ROLE_WEIGHTS.get(role, 1.0)


_PHRASE_WORD = re.compile(r"[^\W_]+")


def query_word_list(text: str) -> list[str]:
    """The words of ``text`` for phrase matching, case-folded: runs of letters and digits (one
    regular-expression pass; :func:`~hermes_workspace.domain.query.split_words` minus combining
    marks, which makes no difference to the order of words)."""
    return _PHRASE_WORD.findall(text.casefold())


PHRASE_MIN_WORDS = 3
"""Shortest run of the query's words, in its order, that counts as a phrase match."""

PHRASE_STRENGTH = 0.25
"""Weight of a phrase match relative to the BM25 score (a whole-query match multiplies it by
1.25). Measured: msmarco nDCG@10 0.7332 -> 0.7341, docs-qa-pydantic paraphrase top-3 50% -> 60%,
code-nav-flask unchanged; at 1.0 the docs and flask paraphrases gain more (+10 points each) but
msmarco falls to 0.7263, and requiring 4 words instead of 3 does not avoid that (0.7274)."""


def phrase_weight(query_words: Sequence[str], content: str) -> float:
    """Multiplier of a chunk's BM25 score for holding a run of the query's words in the query's
    order: ``1 + PHRASE_STRENGTH * run / len(query_words)`` for the longest such run of at least
    :data:`PHRASE_MIN_WORDS` words with two or more that are not stopwords, else 1.0 (at most
    1.25, when the whole query appears as typed). ``query_words`` are the words of the query as
    typed, case-folded (stopwords included).

    BM25 scores words independently; a pasted error message or a quoted sentence is found where
    it was written only by the order of its words (term proximity, as in the sequential
    dependence model of Metzler & Croft 2005, whose ordered-window feature gets a small weight
    next to single words). Applied to the fetched candidates, it reorders them without changing
    which chunks match."""
    if len(query_words) < PHRASE_MIN_WORDS:
        return 1.0

    def counts(run: Sequence[str]) -> bool:
        return len(run) >= PHRASE_MIN_WORDS and sum(1 for w in run if w not in ENGLISH_STOPWORDS) >= 2

    best = longest_ordered_run(query_words, query_word_list(content), counts)
    return 1.0 + PHRASE_STRENGTH * best / len(query_words) if best else 1.0


def longest_ordered_run(
    query_words: Sequence[str],
    text_words: Sequence[str],
    counts: Callable[[Sequence[str]], bool] | None = None,
) -> int:
    """Length of the longest run of consecutive ``query_words`` that also occurs, in that order
    and consecutively, in ``text_words`` (both case-folded), among the runs ``counts`` accepts
    (all when ``None``); 0 when there is none. Dynamic programming over the query words and the
    text positions of each word: O(query words x occurrences)."""
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(text_words):
        positions.setdefault(word, []).append(i)
    best = 0
    previous: dict[int, int] = {}  # text position -> length of the run ending there
    for qi, word in enumerate(query_words):
        current: dict[int, int] = {}
        for position in positions.get(word, ()):
            length = previous.get(position - 1, 0) + 1
            current[position] = length
            if length > best and (counts is None or counts(query_words[qi - length + 1 : qi + 1])):
                best = length
        previous = current
    return best


SHORT_CHUNK_WORDS = 8
"""Chunks with fewer words than this have their BM25 score scaled by ``sqrt(words / 8)``."""


def brevity_weight(words: int) -> float:
    """Multiplier of the BM25 score of a chunk of ``words`` words: 1.0 from
    :data:`SHORT_CHUNK_WORDS` up, ``sqrt(words / SHORT_CHUNK_WORDS)`` below (a 2-word chunk 0.5).

    BM25's length normalization (Robertson & Zaragoza 2009, parameter b) rewards a short text for
    each match, with no floor: a file that is only a title, or an ``.. include::`` stub, outranks
    the page that explains the title's words. Chunks are units of meaning of 40 words or more
    after packing, so the few that stay tiny are whole files with almost nothing in them."""
    if words >= SHORT_CHUNK_WORDS:
        return 1.0
    return (max(words, 1) / SHORT_CHUNK_WORDS) ** 0.5


_SEGMENT_SPLIT = re.compile(r"[.:#/\\>\s]+|::")


def definition_matches(
    literals: Iterable[str],
    definitions: Iterable[str],
    place: PurePath | None = None,
) -> int:
    """How many of ``literals`` (case-folded identifiers from the query, as ``_literals`` in the
    search use case gives them: ``from_prefixed_env``, ``flaskgroup``,
    ``securecookiesessioninterface.save_session``, ``json.loads``) a chunk defines, from the
    qualified names of the definitions that start in it (``definitions``; a later part of a
    split definition starts none, so the part with the signature is the one that counts).

    A plain literal counts when it equals one segment of a definition's qualified name
    (``Config.from_prefixed_env`` defines ``from_prefixed_env`` and ``config``); a name that
    merely contains it (``test_from_prefixed_env``) does not. A dotted literal counts when it is
    a qualified name or the tail of one (``SecureCookieSessionInterface.save_session``), or when
    its last part is the last segment of a definition (the thing defined: ``click.option`` is not
    ``Option.__init__``) and each qualifier names a segment or a folder or the stem of ``place``,
    the file's path from its root's folder name down (``json/__init__.py``,
    ``requests/api.py``), as people write module-qualified names."""
    folded = [n.casefold() for n in definitions if n]
    if not folded:
        return 0
    split = [[s.strip("`'\"()[]{}*,;!?") for s in _SEGMENT_SPLIT.split(n)] for n in folded]
    segments = {s for parts in split for s in parts if s}
    last_segments = {next((s for s in reversed(parts) if s), "") for parts in split}
    places: set[str] = set()
    if place is not None and place.parts:
        parts = [p.casefold() for p in place.parts]
        places = {*parts[:-1], parts[-1].split(".", 1)[0]}
    count = 0
    for literal in literals:
        if "." in literal or "::" in literal:
            if any(n == literal or n.endswith("." + literal) or n.endswith("::" + literal) for n in folded):
                count += 1
                continue
            *qualifiers, tail = [p for p in _SEGMENT_SPLIT.split(literal) if p]
            if tail in last_segments and qualifiers and all(q in segments or q in places for q in qualifiers):
                count += 1
        elif literal in segments:
            count += 1
    return count
