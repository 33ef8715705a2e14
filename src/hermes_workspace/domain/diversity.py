"""Result diversity: near-duplicate collapse and the per-file cap (pure functions over hit lists).

Near-duplicates. Two hits from different files are near-duplicates when either holds:

1. **Shingle resemblance** (Broder, "On the resemblance and containment of documents", 1997):
   ``r(A, B) = |S(A) & S(B)| / |S(A) | S(B)|`` over the sets of :data:`SHINGLE_WORDS`-word
   shingles of the two chunks (words: whitespace-separated runs, case-folded; punctuation stays
   attached, which only matters between texts that are not copies anyway), at least :data:`RESEMBLANCE_THRESHOLD`. This catches vendored, generated or
   copied files (the same README in several packages) and chunks that are mostly one shared
   code block.
2. **Translated siblings**: the two paths are the same page in two languages (equal once their
   language parts are removed, see :func:`language_neutral`: ``docs/en/page.md`` and
   ``docs/zh/page.md``, ``guide.md`` and ``guide.fr.md``) and *each* chunk has at least
   :data:`SHARED_LINES_SHARE` of its words on lines that the other chunk holds verbatim
   (whitespace-normalized). Translated prose never matches line for line, so those lines are
   the untranslated part, code in practice: the two chunks are the same section of the same
   page, mostly code, and showing both spends a slot of the top hits on the same code. A
   translated chunk that is mostly prose is legitimately different text and is *not* collapsed
   (it fails the share in the language that has the longer prose), nor is any pair of files
   that are not language siblings by path: path evidence is what licenses the looser test.

Two hits of the same file are never collapsed, and a collapsed group holds at most one hit per
file. Collapse is greedy in rank order (leader clustering): each hit is compared with the hits
kept so far and joins the first it duplicates, so the kept hit is always the best-ranked copy,
and the others are listed in its ``duplicates`` (path and lines) in rank order.

Cost: shingle sets are built once per hit (a split and one set of hashes); prefix filtering
(see :func:`collapse_duplicates`) compares exactly only the pairs that can reach the threshold,
and the line test runs for language siblings only. Measured on the project's 2-core machine:
100 candidates of 200 words take about 7 ms (about 50 microseconds each, mostly building the
shingle sets); a keyword search of 10 hits fetches 30 (tests hold no timing).

Per-file cap: see :func:`cap_per_file`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath

from hermes_workspace.domain.model import Duplicate, SearchHit

SHINGLE_WORDS = 3
"""Words per shingle. Broder used ten for whole web pages; chunks are a few hundred words, and
three keeps one changed word from disturbing more than three shingles while word order still
counts (a bag of words would call any two chunks on one topic alike)."""

RESEMBLANCE_THRESHOLD = 0.8
"""Resemblance at or above which two chunks of different files are one hit. Each changed word
changes at most :data:`SHINGLE_WORDS` shingles, so a 200-word chunk stays at or above 0.8 with
about ten words changed (a package name, versions) or its boundary shifted by about twenty
words, while two texts that only share a code block with different prose around it (two
tutorials, a page and its translation) fall below unless that code is most of both. Broder et
al.'s clustering of the web used 0.5 to *group* related pages; hiding a hit behind another needs
a stricter bar."""

SHARED_LINES_SHARE = 0.5
"""For translated siblings: the share of each chunk's words that must sit on lines the other
chunk holds verbatim ("mostly code" in both languages)."""

MIN_SHARED_WORDS = 8
"""For translated siblings: fewer shared words than this (a lone ``pip install x``) is no
evidence that two chunks are the same section."""

ISO_639_1 = frozenset(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy
    da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy
    hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li
    ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa
    pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th
    ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu""".split()
)
"""The two-letter language codes of ISO 639-1, the primary subtags of BCP 47 tags such as
``zh-CN``, ``pt_BR`` or ``zh-hans`` that translated documentation uses as folder names or file
name infixes."""

_LANGUAGE_TAG = re.compile(r"([a-z]{2})(?:[-_][A-Za-z0-9]{2,8})*")


def language_neutral(path: PurePath) -> tuple[str, str | None]:
    """``(path without its language parts, language or None)``: a folder segment that is a
    language tag (:data:`ISO_639_1` code, optional subtags) is dropped, and so is a language
    infix of the file name (``guide.fr.md`` -> ``guide.md``). The last such tag found is the
    language. ``docs/zh-CN/a.md`` -> ``("docs/a.md", "zh-cn")``; ``docs/a.md`` -> ``("docs/a.md", None)``."""
    language: str | None = None
    kept: list[str] = []
    *folders, name = path.parts or ("",)
    for part in folders:
        match = _LANGUAGE_TAG.fullmatch(part)
        if match and match.group(1) in ISO_639_1:
            language = part.casefold().replace("_", "-")
        else:
            kept.append(part)
    pieces = name.split(".")
    if len(pieces) >= 3:
        match = _LANGUAGE_TAG.fullmatch(pieces[-2])
        if match and match.group(1) in ISO_639_1:
            language = pieces[-2].casefold().replace("_", "-")
            name = ".".join(pieces[:-2] + pieces[-1:])
    return str(PurePath(*kept, name)), language


class _Text:
    """What the comparisons need of one hit's content, computed once (lines lazily): its shingle
    set (hashed) and the prefix of it under a global order that prefix filtering indexes."""

    __slots__ = ("shingles", "prefix", "neutral", "_lines", "content")

    def __init__(self, hit: SearchHit) -> None:
        words = hit.content.casefold().split()
        if len(words) < SHINGLE_WORDS:
            self.shingles: set[int] = {hash(tuple(words))} if words else set()
        else:
            self.shingles = set(map(hash, zip(*(words[i:] for i in range(SHINGLE_WORDS)))))
        size = len(self.shingles)
        # Two sets of resemblance >= t share at least ceil(t * |x|) elements, so they share one of
        # the |x| - ceil(t * |x|) + 1 first elements of each under any common order.
        self.prefix = sorted(self.shingles)[: size - math.ceil(RESEMBLANCE_THRESHOLD * size) + 1]
        self.neutral = language_neutral(PurePath(hit.path))
        self.content = hit.content
        self._lines: dict[str, int] | None = None

    @property
    def lines(self) -> dict[str, int]:
        """Whitespace-normalized, case-folded non-blank line -> its word count."""
        if self._lines is None:
            self._lines = {}
            for line in self.content.splitlines():
                key = " ".join(line.casefold().split())
                if key:
                    self._lines[key] = len(key.split())
        return self._lines


def resemblance(a: set[int], b: set[int]) -> float:
    """Jaccard resemblance ``|a & b| / |a | b|`` of two shingle sets (0.0 when both are empty)."""
    if not a and not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def _siblings_share_code(x: _Text, y: _Text) -> bool:
    """Rule 2: translated siblings whose chunks are mostly the same lines (see the module)."""
    (x_key, x_lang), (y_key, y_lang) = x.neutral, y.neutral
    if x_key != y_key or x_lang == y_lang:
        return False
    return _mostly_shared_lines(x.lines, y.lines) and _mostly_shared_lines(y.lines, x.lines)


def _mostly_shared_lines(mine: dict[str, int], theirs: dict[str, int]) -> bool:
    total = sum(mine.values())
    shared = sum(n for line, n in mine.items() if line in theirs)
    return shared >= MIN_SHARED_WORDS and shared >= SHARED_LINES_SHARE * total


def collapse_duplicates(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """``hits`` (best first) with near-duplicates of other files folded into the best-ranked
    copy, whose ``duplicates`` lists them (:class:`Duplicate`: path and lines, in rank order,
    after any it already had). Order and every other field are kept. Never folds two hits of
    the same file, and a group holds at most one hit per file. See the module docstring for the
    rule and its sources.

    Prefix filtering (Chaudhuri, Ganti and Kaushik, ICDE 2006; Bayardo, Ma and Srikant, WWW
    2007): only the prefix of each kept hit's shingles under one order is indexed, so a hit is
    compared exactly only with the kept hits that can reach the threshold; the line test only
    runs for language siblings."""
    leaders: list[tuple[SearchHit, _Text, set[object], list[Duplicate]]] = []
    postings: dict[int, list[int]] = {}
    pages: dict[str, list[int]] = {}
    for hit in hits:
        text = _Text(hit)
        probed = {j for shingle in text.prefix for j in postings.get(shingle, ())}
        similar = {j for j in probed if resemblance(text.shingles, leaders[j][1].shingles) >= RESEMBLANCE_THRESHOLD}
        for j in sorted(similar.union(pages.get(text.neutral[0], ()))):
            _, leader_text, files, extra = leaders[j]
            if hit.path in files or not (j in similar or _siblings_share_code(leader_text, text)):
                continue
            files.add(hit.path)
            extra.append(Duplicate(hit.path, hit.line_start, hit.line_end))
            extra.extend(hit.duplicates)
            break
        else:
            index = len(leaders)
            leaders.append((hit, text, {hit.path}, []))
            for shingle in text.prefix:
                postings.setdefault(shingle, []).append(index)
            pages.setdefault(text.neutral[0], []).append(index)
    return [replace(hit, duplicates=hit.duplicates + tuple(extra)) if extra else hit for hit, _, _, extra in leaders]


def cap_per_file(hits: Sequence[SearchHit], max_per_file: int, limit: int) -> tuple[list[SearchHit], int]:
    """Per-file diversity: ``(hits reordered, how many hits beyond a file's cap are in the head)``.

    The hits among the ``max_per_file`` best of their file (by their order in ``hits``) come
    first, in their order; the others follow, in their order. Nothing is dropped. The *head* is
    the first ``limit`` hits of the result, what a search cut to ``limit`` returns: it holds at
    most ``max_per_file`` hits of one file whenever the candidates hold ``limit`` hits within
    their file's cap, and is filled with a file's further hits, best first, only when they do not.

    When the head holds such a further hit, every hit gets ``file_rank`` (its 1-based rank among
    its file's hits), so that the order is explained by a field (``file_rank <= max_per_file``
    first); otherwise the head is a subsequence of ``hits`` in their order and nothing is added.
    A stable partition: within each part the existing order, and so the exact-match and
    reranker keys, hold. ``max_per_file`` 0 returns ``hits`` unchanged.
    """
    if max_per_file <= 0:
        return list(hits), 0
    seen: dict[object, int] = {}
    ranks: list[int] = []
    for hit in hits:
        seen[hit.path] = seen.get(hit.path, 0) + 1
        ranks.append(seen[hit.path])
    order = [i for i, r in enumerate(ranks) if r <= max_per_file] + [i for i, r in enumerate(ranks) if r > max_per_file]
    beyond = sum(1 for i in order[:limit] if ranks[i] > max_per_file)
    if not beyond:
        return [hits[i] for i in order], 0
    return [replace(hits[i], file_rank=ranks[i]) for i in order], beyond
