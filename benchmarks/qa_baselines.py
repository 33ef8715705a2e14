"""Baselines for the workspace QA part: what an agent gets without hermes-workspace.

Both read the unpacked corpus directly (none of ``hermes_workspace`` is imported) and give, per
query, up to :data:`HITS` hits ``{"path", "line_start", "line_end"}`` (path relative to the
corpus root, POSIX separators; lines 1-based and inclusive), the form the datasets'
``score_workspace_qa.py`` reads.

Files (:func:`corpus_files`), the same for both baselines and chosen to match what ``rg`` searches
by default in a folder that is not a git checkout (the sets are ``git archive`` output, so no
``.gitignore`` applies): hidden files and folders are skipped, symbolic links are not followed, a
file holding a NUL byte is binary and skipped, everything else is read as UTF-8 (undecodable
bytes replaced). Lines come from splitting on ``"\\n"`` (a final newline starts no extra line),
as the gold sets count them.

- ``bm25s-units`` (:func:`bm25s_units`): bm25s (Lucene BM25, k1 = 1.5, b = 0.75) over structural
  units (:func:`file_units`): Python ``ast`` definitions, markdown heading sections, 50-line
  windows for every other file. A unit's indexed text is its path's words, then its text;
  ``bm25s.tokenize(stopwords="en", stemmer=Stemmer.Stemmer("english"))`` as in the quality part
  (no stemmer when PyStemmer is missing; the result says which). Queries are given as they are.
- ``ripgrep-proxy`` (:func:`ripgrep_proxy`): files ranked by the number of lines that contain any
  query word (case-insensitive, as ``rg -c -i -F -e WORD ...`` counts them), the way an agent
  ranks ``rg -c`` output; the hit is the span from the first to the last matching line, capped to
  the 60-line window that holds the most matching lines. ``rg`` runs when it is on the PATH, else
  an equivalent pure-Python line scan; the result says which.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HITS = 10
"""Hits per query: the scorer reads the first 10."""

WINDOW_LINES = 50
"""Unit size (lines) of files that are neither Python nor markdown: non-overlapping windows."""

RG_WINDOW = 60
"""The longest span the ripgrep proxy returns: the scorer's smallest length limit (``max(3 x gold
span, 60)``), so a short enough window is never refused for its length alone."""

PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})

_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
"""CommonMark ATX heading: up to 3 spaces, 1-6 ``#``, then a space, a tab or the line's end."""
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
"""CommonMark code fence opener: up to 3 spaces, then 3 or more backticks or tildes."""
_QUERY_WORD = re.compile(r"\w+")
"""A query word for the ripgrep proxy: a run of letters, digits and ``_`` (as ``\\w`` in rg), so
identifiers stay whole (``from_prefixed_env``)."""
_PATH_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Unit:
    """One retrievable piece of a file: 1-based inclusive ``start``..``end`` lines and ``kind``
    (``function``, ``class``, ``module``, ``section``, ``window``)."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class SourceText:
    """A corpus file: ``path`` relative to the corpus root (POSIX) and its ``lines``."""

    path: str
    lines: list[str]


# -- files ------------------------------------------------------------------------------------


def split_lines(text: str) -> list[str]:
    """Lines as the gold sets count them: split on ``"\\n"``; a final newline starts no extra line;
    a ``"\\r"`` before the newline is dropped."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def corpus_files(root: Path) -> list[SourceText]:
    """Every file ``rg`` would search under ``root`` by default (see the module docstring),
    sorted by path. Unreadable files are left out."""
    out: list[SourceText] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            full = os.path.join(folder, name)
            if name.startswith(".") or os.path.islink(full):
                continue
            try:
                data = Path(full).read_bytes()
            except OSError:
                continue
            if b"\0" in data:
                continue
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            out.append(SourceText(rel, split_lines(data.decode("utf-8", errors="replace"))))
    out.sort(key=lambda f: f.path)
    return out


# -- structural units -------------------------------------------------------------------------


def windows(line_count: int, size: int = WINDOW_LINES) -> list[Unit]:
    """Non-overlapping ``size``-line windows over ``line_count`` lines (the last may be shorter)."""
    return [Unit(s, min(s + size - 1, line_count), "window") for s in range(1, line_count + 1, size)]


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def python_units(source: str, line_count: int) -> list[Unit] | None:
    """Units of a Python file from its ``ast``, or ``None`` when it does not parse.

    - every function and method, at any depth: first decorator line (or the ``def`` line) to
      ``end_lineno``; nested definitions stay inside their parent and are units of their own too;
    - every class: first decorator (or ``class``) line to the line before its first method's first
      line, or the whole class when no method is directly in its body;
    - module-level code: each maximal run of lines outside every definition, without its leading
      and trailing blank lines.

    Sorted by start line, then end line.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    units: list[Unit] = []
    covered = [False] * (line_count + 2)
    for node in ast.walk(tree):
        if not isinstance(node, _DEFS):
            continue
        start, end = _first_line(node), node.end_lineno or node.lineno
        for n in range(start, min(end, line_count) + 1):
            covered[n] = True
        end = min(end, line_count)
        if start > end:
            continue  # ast counted a line break the gold sets do not (a lone "\r")
        if isinstance(node, ast.ClassDef):
            methods = [c for c in node.body if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if methods:
                end = max(start, _first_line(methods[0]) - 1)  # max: `class A: def f(self): ...`
            units.append(Unit(start, end, "class"))
        else:
            units.append(Unit(start, end, "function"))
    lines = source.split("\n")

    def blank(n: int) -> bool:
        return n > len(lines) or not lines[n - 1].strip()

    n = 1
    while n <= line_count:
        if covered[n]:
            n += 1
            continue
        run_start = n
        while n <= line_count and not covered[n]:
            n += 1
        lo, hi = run_start, n - 1
        while lo <= hi and blank(lo):
            lo += 1
        while hi >= lo and blank(hi):
            hi -= 1
        if lo <= hi:
            units.append(Unit(lo, hi, "module"))
    return sorted(units, key=lambda u: (u.start, u.end))


def markdown_units(lines: Sequence[str]) -> list[Unit]:
    """Heading sections of a markdown file: each ATX heading outside fenced code, from its line to
    the line before the next heading of any level (or the last line); the text before the first
    heading is a unit too when it is not blank."""
    headings: list[int] = []
    fence: str | None = None
    for n, line in enumerate(lines, start=1):
        opener = _FENCE.match(line)
        if fence is None:
            if opener:
                fence = opener.group(1)
            elif _ATX_HEADING.match(line):
                headings.append(n)
        elif opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence) \
                and not line.strip()[len(opener.group(1)):].strip():
            fence = None  # a closing fence: the same character, at least as long, nothing after it
    units: list[Unit] = []
    first = headings[0] if headings else len(lines) + 1
    if any(line.strip() for line in lines[: first - 1]):
        units.append(Unit(1, first - 1, "section"))
    bounds = [*headings, len(lines) + 1]
    units += [Unit(bounds[i], bounds[i + 1] - 1, "section") for i in range(len(headings))]
    return units


def file_units(path: str, lines: Sequence[str]) -> list[Unit]:
    """The units of one file by its suffix: Python (:func:`python_units`; 50-line windows when it
    does not parse), markdown (:func:`markdown_units`), anything else (:func:`windows`)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in PYTHON_SUFFIXES:
        units = python_units("\n".join(lines), len(lines))
        if units is not None:
            return units
    elif suffix in MARKDOWN_SUFFIXES:
        return markdown_units(lines)
    return windows(len(lines))


# -- bm25s over units -------------------------------------------------------------------------


def _stemmer() -> tuple[Any, str]:
    try:
        import Stemmer
    except ImportError:
        return None, "none (PyStemmer not installed)"
    return Stemmer.Stemmer("english"), "Snowball English (PyStemmer)"


def bm25s_units(files: Sequence[SourceText], queries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Rank every unit of ``files`` for every query (``{"id", "query"}``) with bm25s.

    Returns ``{"system", "description", "hits": [{"id", "hits": [...]}], "units", "unit_kinds",
    "index_seconds", "search_seconds"}``. Zero-score units (no query word) are left out.

    Raises:
        ImportError: bm25s is not installed (the ``bench`` extra).
    """
    import bm25s

    stemmer, stemmer_name = _stemmer()
    refs: list[tuple[str, Unit]] = []
    texts: list[str] = []
    kinds: dict[str, int] = {}
    started = time.perf_counter()
    for f in files:
        path_words = " ".join(_PATH_WORD.findall(f.path))
        for unit in file_units(f.path, f.lines):
            body = "\n".join(f.lines[unit.start - 1 : unit.end])
            if not body.strip():
                continue
            refs.append((f.path, unit))
            texts.append(f"{path_words}\n{body}")
            kinds[unit.kind] = kinds.get(unit.kind, 0) + 1
    corpus_tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    index_seconds = time.perf_counter() - started
    started = time.perf_counter()
    q_tokens = bm25s.tokenize([q["query"] for q in queries], stopwords="en", stemmer=stemmer, show_progress=False)
    docs, scores = retriever.retrieve(q_tokens, k=min(HITS, len(refs)), show_progress=False, n_threads=1)
    rows = []
    for i, q in enumerate(queries):
        hits = []
        for d, s in zip(docs[i], scores[i]):
            if s > 0:
                path, unit = refs[int(d)]
                hits.append({"path": path, "line_start": unit.start, "line_end": unit.end})
        rows.append({"id": q["id"], "hits": hits})
    return {
        "system": "bm25s-units",
        "description": (f"bm25s {_version('bm25s')} (Lucene BM25, k1 1.5, b 0.75), English stopwords, stemmer "
                        f"{stemmer_name}, over ast definitions / markdown sections / {WINDOW_LINES}-line windows; "
                        "unit text = path words + text"),
        "hits": rows,
        "units": len(refs),
        "unit_kinds": kinds,
        "index_seconds": round(index_seconds, 2),
        "search_seconds": round(time.perf_counter() - started, 3),
    }


def _version(dist: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


# -- ripgrep proxy ----------------------------------------------------------------------------


def english_stopwords() -> frozenset[str]:
    """bm25s's English stopword list (the one the bm25s baseline removes).

    Raises:
        ImportError: bm25s is not installed (the ``bench`` extra)."""
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def grep_words(query: str, stopwords: Iterable[str]) -> list[str]:
    """What an agent greps for: the query's ``\\w+`` runs, lower-cased, of 2 or more characters,
    without ``stopwords``, without repeats, in query order."""
    stop = {w.lower() for w in stopwords}
    out: list[str] = []
    for word in _QUERY_WORD.findall(query.lower()):
        if len(word) >= 2 and word not in stop and word not in out:
            out.append(word)
    return out


def best_span(matching: Sequence[int], window: int = RG_WINDOW) -> tuple[int, int]:
    """From sorted matching line numbers: first..last matching line when that is at most
    ``window`` lines; else, of the ``window``-line windows, the one holding the most matching
    lines (the earliest on a tie), trimmed to its first and last matching line."""
    if matching[-1] - matching[0] + 1 <= window:
        return matching[0], matching[-1]
    best = (0, 0, 0)  # (count, first index, last index)
    for i, start in enumerate(matching):
        j = bisect.bisect_right(matching, start + window - 1) - 1
        if j - i + 1 > best[0]:
            best = (j - i + 1, i, j)
    return matching[best[1]], matching[best[2]]


def rank_files(matches: dict[str, list[int]], limit: int = HITS) -> list[dict[str, Any]]:
    """Hits from ``path -> matching line numbers``: files by the number of matching lines (most
    first; path order on a tie), each with :func:`best_span`."""
    ranked = sorted((p for p, lines in matches.items() if lines), key=lambda p: (-len(matches[p]), p))
    out = []
    for path in ranked[:limit]:
        start, end = best_span(sorted(matches[path]))
        out.append({"path": path, "line_start": start, "line_end": end})
    return out


def scan_lines(files: Sequence[SourceText], words: Sequence[str]) -> dict[str, list[int]]:
    """Pure-Python stand-in for ``rg -n -i -F -e WORD ...``: per file, the line numbers that
    contain any of ``words`` (lower-case) as a substring, case-insensitively."""
    if not words:
        return {}
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
    out: dict[str, list[int]] = {}
    for f in files:
        hits = [n for n, line in enumerate(f.lines, start=1) if pattern.search(line.lower())]
        if hits:
            out[f.path] = hits
    return out


def parse_rg_output(output: bytes, root: Path) -> dict[str, list[int]]:
    """``path -> line numbers`` from ``rg --null -n --no-heading --with-filename`` output (each
    line ``PATH\\0LINE:TEXT``), paths made relative to ``root``."""
    out: dict[str, list[int]] = {}
    for raw in output.split(b"\n"):
        path, sep, rest = raw.partition(b"\0")
        if not sep:
            continue
        number = rest.split(b":", 1)[0]
        if not number.isdigit():
            continue
        rel = os.path.relpath(os.fsdecode(path), root).replace(os.sep, "/")
        out.setdefault(rel, []).append(int(number))
    return out


def rg_lines(rg: str, root: Path, words: Sequence[str]) -> dict[str, list[int]]:
    """``rg``'s matching lines of ``words`` under ``root`` (its default file selection)."""
    if not words:
        return {}
    argv = [rg, "--no-config", "--null", "-n", "-i", "-F", "--no-heading", "--with-filename", "--color", "never"]
    for w in words:
        argv += ["-e", w]
    done = subprocess.run([*argv, "--", str(root)], check=False, capture_output=True)
    if done.returncode not in (0, 1):  # 1: no match
        raise RuntimeError(f"rg exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}")
    return parse_rg_output(done.stdout, root)


def ripgrep_proxy(root: Path, files: Sequence[SourceText], queries: Sequence[dict[str, Any]],
                  stopwords: Iterable[str]) -> dict[str, Any]:
    """Rank files per query by matching lines (:func:`rank_files`), with ``rg`` when on the PATH,
    else :func:`scan_lines` over ``files``. Returns ``{"system", "description", "scanner",
    "hits", "search_seconds"}``."""
    rg = shutil.which("rg")
    stop = frozenset(stopwords)
    rows = []
    started = time.perf_counter()
    for q in queries:
        words = grep_words(q["query"], stop)
        matches = rg_lines(rg, root, words) if rg else scan_lines(files, words)
        rows.append({"id": q["id"], "hits": rank_files(matches)})
    scanner = f"rg ({rg})" if rg else "pure-Python line scan (rg not on the PATH)"
    return {
        "system": "ripgrep-proxy",
        "description": ("files ranked by lines matching any query word (case-insensitive substring, words of 2+ "
                        f"characters, English stopwords removed); hit = first..last matching line, capped to the "
                        f"{RG_WINDOW}-line window with the most matching lines; scanner: {scanner}"),
        "scanner": scanner,
        "hits": rows,
        "search_seconds": round(time.perf_counter() - started, 3),
    }
