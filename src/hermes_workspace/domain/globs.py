"""Path globs for the ``--glob`` search filter: parse and validate a pattern once, match paths.

The one definition of what a ``glob`` means, shared by the application (which validates it before
any search), the SQLite adapters (which call it from SQL, before the top-k cut) and the in-memory
fakes. Standard library only: a pattern compiles to one :mod:`re` regular expression matched
against the whole absolute path.

Semantics (case-sensitive; ``/`` is the only separator):

- A pattern **without** ``/`` matches the file name (the last path segment) only:
  ``*.md``, ``test_*.py``, ``[!t]*``, ``*.{md,rst}``.
- A pattern **with** ``/`` matches whole path segments at the **end** of the absolute path:
  ``docs/*.md`` matches ``/any/where/docs/x.md`` but not ``/x/docs/a/b.md`` nor
  ``/x/mydocs/x.md``. A pattern starting with ``/`` is anchored at the filesystem root and
  matches the whole absolute path (``/home/me/notes/*.txt``).
- ``*`` matches any run of characters within one segment (also none), ``?`` one character,
  ``[abc]``, ``[a-z]``, ``[!abc]`` / ``[^abc]`` one character of (not of) a class; none of them
  ever matches ``/``. A ``]`` first in a class is a member (``[]x]``). A leading ``.`` is not
  special: ``*`` matches ``.hidden.md`` (as Python's fnmatch, unlike a shell).
- ``**`` as a whole segment matches zero or more whole segments: ``docs/**/*.md`` matches
  ``docs/x.md`` and ``docs/a/b/x.md``; a trailing ``/**`` matches everything below
  (``docs/**``). Elsewhere (``a**b``) ``**`` is the same as ``*``.
- ``{a,b}`` expands to alternatives before matching, as in bash: nested braces and several
  groups work (``{docs,notes}/*.{md,txt}``, ``*.{md,{r,t}st}``), an alternative may be empty
  (``notes{,.bak}``) or hold ``/`` (``{docs/*.md,*.rst}``; each alternative then follows the
  rules above on its own). At most :data:`MAX_ALTERNATIVES` alternatives.
- ``\\`` makes the next character literal outside a class (``\\*``, ``\\{``, ``\\[``; ``\\/`` is
  still the separator); inside ``[...]`` every character but the closing ``]`` is literal.
- Repeated slashes count as one (``docs//x.md`` = ``docs/x.md``), as the file system reads them.

Refused with :class:`~hermes_workspace.domain.errors.UsageError` (never silently zero hits): an
empty pattern; a leading ``!`` (exclusion in ripgrep and .gitignore; write ``\\!`` for a name
starting with ``!``); an unclosed ``[`` or ``{``; a stray ``}``; a brace group without a ``,``
(bash would read ``{md}`` literally, other tools as ``md``); an alternative that leaves no
pattern at all (``{,*.md}``); a ``/`` inside ``[...]``; a reversed range (``[z-a]``); a lone trailing
``\\``; a trailing ``/`` (a glob matches files); a ``.`` or ``..`` segment (the pattern is not
relative to the current directory); more than :data:`MAX_ALTERNATIVES` alternatives.

Sources: bash's brace expansion and pathname matching (``man bash``, "Brace Expansion",
"Pattern Matching"); ``**`` as in bash's ``globstar`` option, git's wildmatch and Python's
``glob(recursive=True)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hermes_workspace.domain.errors import UsageError

__all__ = ["MAX_ALTERNATIVES", "PathGlob", "compile_glob"]

MAX_ALTERNATIVES = 256
"""Most alternatives a pattern's braces may expand to; ``{a,b}{c,d}`` is 4. Far above any
hand-written filter, low enough that a pasted pattern cannot build a huge regular expression."""

_BRACE_HINT = r"Braces list alternatives: '*.{md,rst}'. For a literal '{' or '}' write \{ or \}."
_CLASS_HINT = r"Close the class with ']' ('[a-z]*'), or write \[ for a literal '['."


@dataclass(frozen=True, slots=True)
class _Lit:
    char: str


@dataclass(frozen=True, slots=True)
class _Star:
    pass


@dataclass(frozen=True, slots=True)
class _Any:
    pass


@dataclass(frozen=True, slots=True)
class _Class:
    regex: str


@dataclass(frozen=True, slots=True)
class _Slash:
    pass


_Atom = _Lit | _Star | _Any | _Class | _Slash


@dataclass(frozen=True, slots=True)
class _Group:
    """``{...}``: each alternative is a sequence of atoms and groups."""

    alternatives: tuple[tuple[_Atom | _Group, ...], ...]


@dataclass(frozen=True, slots=True)
class PathGlob:
    """A validated glob. Build with :func:`compile_glob`.

    Attributes:
        pattern: the text as given.
        regex: the compiled expression (the union of the brace alternatives) that must match the
            whole absolute path; :meth:`matches` is the filter.
        prefilters: a cheap necessary condition for backends that can test classic globs
            natively (SQLite's ``GLOB`` runs in C, a Python call per row costs several times
            more): every absolute path :meth:`matches` accepts matches at least one of these.
            Their dialect is what Python's ``fnmatchcase`` and SQLite ``GLOB`` share: ``*`` any
            run of characters *including* ``/``, ``?`` any one character, ``[c]`` the literal
            ``c`` (for ``*``, ``?`` and ``[``); every other character stands for itself. One per
            distinct alternative, classes widened to ``?``; a path matching one may still fail
            :meth:`matches` (``docs/*.md`` gives ``*/docs/*.md``, which ``/docs/a/b.md`` passes).
    """

    pattern: str
    regex: re.Pattern[str]
    prefilters: tuple[str, ...]

    def matches(self, path: str) -> bool:
        """Whether the absolute ``path`` (``/``-separated, no trailing ``/``) passes the filter."""
        return self.regex.fullmatch(path) is not None


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> PathGlob:
    """Parse and validate ``pattern`` (semantics in the module docstring) into a :class:`PathGlob`.

    Cached: the SQLite adapters call it for every file that passes the prefilters, with the same
    pattern.

    Raises:
        UsageError: the pattern is malformed (see the module docstring for the list); the
            message names the pattern and the fault, the hint says how to write it.
    """
    if not isinstance(pattern, str):
        raise UsageError(f"glob must be a string, got {type(pattern).__name__}")
    if not pattern:
        raise UsageError("empty glob", hint="Give a pattern such as '*.md' or 'docs/**/*.md', or leave --glob out.")
    if pattern.startswith("!"):
        raise _error(
            pattern,
            "a leading '!' (exclusion, as in ripgrep or .gitignore) is not supported",
            r"Match the files to keep instead ('[!t]*' keeps names not starting with t); write \! for a name "
            "that starts with '!'.",
        )
    sequence = _Parser(pattern).parse()
    expanded = _expand(sequence, pattern)
    translated = dict.fromkeys(_alternative(atoms, pattern) for atoms in expanded)
    regexes = list(dict.fromkeys(regex for regex, _ in translated))
    body = regexes[0] if len(regexes) == 1 else "|".join(f"(?:{r})" for r in regexes)
    prefilters = tuple(dict.fromkeys(prefilter for _, prefilter in translated))
    # DOTALL: a file name may hold a newline, which `.` must match like any other character.
    return PathGlob(pattern, re.compile(body, re.DOTALL), prefilters)


def _error(pattern: str, fault: str, hint: str) -> UsageError:
    return UsageError(f"invalid glob {pattern!r}: {fault}", hint=hint)


class _Parser:
    """Recursive descent over the pattern text: atoms, ``[...]`` classes, ``{a,b}`` groups."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pos = 0

    def parse(self) -> tuple[_Atom | _Group, ...]:
        items = self._sequence(depth=0)
        if self.pos < len(self.pattern):  # at depth 0 only a stray '}' stops _sequence early
            raise _error(self.pattern, f"the '}}' at position {self.pos + 1} closes no '{{'", _BRACE_HINT)
        return items

    def _sequence(self, depth: int) -> tuple[_Atom | _Group, ...]:
        items: list[_Atom | _Group] = []
        text = self.pattern
        while self.pos < len(text):
            char = text[self.pos]
            if char == "}" or (char == "," and depth > 0):
                break
            if char == "{":
                items.append(self._group(depth + 1))
                continue
            self.pos += 1
            if char == "\\":
                if self.pos >= len(text):
                    raise _error(text, "it ends with a lone '\\'", r"Write \\ for a literal backslash.")
                # '\/' is still the separator: no file name holds a '/'.
                items.append(_Slash() if text[self.pos] == "/" else _Lit(text[self.pos]))
                self.pos += 1
            elif char == "*":
                items.append(_Star())
            elif char == "?":
                items.append(_Any())
            elif char == "[":
                items.append(self._class(self.pos - 1))
            elif char == "/":
                items.append(_Slash())
            else:
                items.append(_Lit(char))
        return tuple(items)

    def _group(self, depth: int) -> _Group:
        start = self.pos
        self.pos += 1  # the '{'
        alternatives = [self._sequence(depth)]
        while self.pos < len(self.pattern) and self.pattern[self.pos] == ",":
            self.pos += 1
            alternatives.append(self._sequence(depth))
        if self.pos >= len(self.pattern):
            raise _error(self.pattern, f"the '{{' at position {start + 1} is never closed", _BRACE_HINT)
        self.pos += 1  # the '}'
        if len(alternatives) < 2:
            raise _error(
                self.pattern,
                f"the brace group at position {start + 1} has no ','",
                _BRACE_HINT,
            )
        return _Group(tuple(alternatives))

    def _class(self, start: int) -> _Class:
        text = self.pattern
        pos = start + 1
        negate = pos < len(text) and text[pos] in "!^"
        if negate:
            pos += 1
        members: list[str] = []
        spans_slash = False
        first = True  # a ']' right after '[' or '[!' is a member, not the end
        while pos < len(text) and (first or text[pos] != "]"):
            first = False
            is_range = pos + 2 < len(text) and text[pos + 1] == "-" and text[pos + 2] != "]"
            low, high = text[pos], text[pos + 2] if is_range else text[pos]
            if "/" in (low, high):
                raise _error(
                    text,
                    f"the class at position {start + 1} holds '/', which a class never matches",
                    "A class matches one character of a file or directory name; put '/' outside [...].",
                )
            if low > high:
                raise _error(
                    text,
                    f"the range {low}-{high} at position {pos + 1} is reversed",
                    f"Write it low to high: [{high}-{low}].",
                )
            spans_slash = spans_slash or low < "/" < high
            members.append(f"{_class_char(low)}-{_class_char(high)}" if is_range else _class_char(low))
            pos += 3 if is_range else 1
        if pos >= len(text):
            raise _error(text, f"the '[' at position {start + 1} is never closed", _CLASS_HINT)
        self.pos = pos + 1
        body = "".join(members)
        if negate:
            return _Class(f"[^/{body}]")
        # A range such as [+-0] spans '/', which no class may match: exclude it up front.
        return _Class(f"(?!/)[{body}]" if spans_slash else f"[{body}]")


def _class_char(char: str) -> str:
    """``char`` as a member of a regex character class."""
    return "\\" + char if char in "\\]^-[" else char


def _expand(sequence: tuple[_Atom | _Group, ...], pattern: str) -> list[tuple[_Atom, ...]]:
    """Brace expansion: the flat atom sequences ``sequence`` stands for, left to right (bash
    order: ``{a,b}{1,2}`` -> a1 a2 b1 b2)."""
    results: list[tuple[_Atom, ...]] = [()]
    for item in sequence:
        if isinstance(item, _Group):
            options = [option for alternative in item.alternatives for option in _expand(alternative, pattern)]
            if len(results) * len(options) > MAX_ALTERNATIVES:
                raise _error(
                    pattern,
                    f"its braces expand to more than {MAX_ALTERNATIVES} alternatives",
                    "Use fewer or smaller brace groups, or a class such as [mt]d instead of {m,t}d.",
                )
            results = [prefix + option for prefix in results for option in options]
        else:
            results = [prefix + (item,) for prefix in results]
    return results


def _alternative(atoms: tuple[_Atom, ...], pattern: str) -> tuple[str, str]:
    """The regex one brace-free alternative stands for, to be matched against the whole absolute
    path, and its prefilter (see :attr:`PathGlob.prefilters`)."""
    absolute = bool(atoms) and isinstance(atoms[0], _Slash)
    segments: list[list[_Atom]] = [[]]
    for atom in atoms:
        if isinstance(atom, _Slash):
            segments.append([])
        else:
            segments[-1].append(atom)
    if absolute:
        segments = segments[1:]
    if segments and not segments[-1] and any(segments):
        raise _error(
            pattern, "it ends with '/', but a glob matches files", "Write 'docs/**' for every file under docs."
        )
    segments = [segment for segment in segments if segment]  # 'a//b' is 'a/b'
    if not atoms:
        raise _error(pattern, "its braces give an empty alternative, which names no file", _BRACE_HINT)
    if not segments:
        raise _error(pattern, "it names no file", "Give a pattern such as '*.md' or 'docs/**/*.md'.")
    for segment in segments:
        if segment in ([_Lit(".")], [_Lit("."), _Lit(".")]):
            raise _error(
                pattern,
                "'.' and '..' name no file (a glob is not relative to the current directory)",
                "A pattern without '/' matches file names ('*.md'); with '/' the end of the absolute path "
                "('docs/*.md'), or the whole path when it starts with '/'.",
            )
    globstar = [len(s) == 2 and all(isinstance(a, _Star) for a in s) for s in segments]
    # '**/**' is '**'; and a relative pattern already matches at any depth, so leading '**/' adds nothing.
    kept = [(s, g) for i, (s, g) in enumerate(zip(segments, globstar)) if not (g and i > 0 and globstar[i - 1])]
    if not absolute:
        while len(kept) > 1 and kept[0][1]:
            kept.pop(0)
    # A relative pattern starts right after some '/' of the path, so its first segment is a
    # directory or file name, never the empty name before the root's '/' ('*/x' is not '/x').
    parts, coarse = ["/" if absolute else ".*/"], ["/" if absolute else "*/"]
    for index, (segment, is_globstar) in enumerate(kept):
        last = index == len(kept) - 1
        if is_globstar:
            parts.append("[^/]+(?:/[^/]+)*" if last else "(?:[^/]+/)*")
            coarse.append("*")  # zero or more 'dir/' (or the last segments): any run, '/' included
        else:
            parts.append(_segment_regex(segment))
            coarse.append(_segment_prefilter(segment))
            if not last:
                parts.append("/")
                coarse.append("/")
    return "".join(parts), re.sub(r"\*+", "*", "".join(coarse))


def _segment_prefilter(segment: list[_Atom]) -> str:
    parts: list[str] = []
    for atom in segment:
        if isinstance(atom, _Star):
            parts.append("*")
        elif isinstance(atom, (_Any, _Class)):
            parts.append("?")
        elif isinstance(atom, _Lit):
            parts.append(f"[{atom.char}]" if atom.char in "*?[" else atom.char)
    return "".join(parts)


def _segment_regex(segment: list[_Atom]) -> str:
    parts: list[str] = []
    for atom in segment:
        if isinstance(atom, _Star):
            if parts and parts[-1] == "[^/]*":
                continue  # 'a**b' is 'a*b'; one star also avoids exponential backtracking
            parts.append("[^/]*")
        elif isinstance(atom, _Any):
            parts.append("[^/]")
        elif isinstance(atom, _Class):
            parts.append(atom.regex)
        elif isinstance(atom, _Lit):
            parts.append(re.escape(atom.char))
    return "".join(parts)

