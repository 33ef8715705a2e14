"""The --glob matcher (domain/globs.py): what each pattern matches, and which patterns are refused."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.globs import MAX_ALTERNATIVES, compile_glob


def matches(pattern: str, path: str) -> bool:
    return compile_glob(pattern).matches(path)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # without '/': the file name only, at any depth
        ("*.md", "/a/b/x.md", True),
        ("*.md", "/a/b.md/x.txt", False),  # a directory named like the pattern does not count
        ("*md*", "/ws/md/notes.txt", False),
        ("test_*.py", "/src/tests/test_globs.py", True),
        ("test_*.py", "/src/tests/conftest.py", False),
        ("test_*.py", "/src/test_x/a.py", False),
        ("[!t]*", "/a/run.md", True),
        ("[!t]*", "/a/todo.txt", False),
        ("[^t]*", "/a/todo.txt", False),
        ("*.{md,rst}", "/a/x.md", True),
        ("*.{md,rst}", "/a/x.rst", True),
        ("*.{md,rst}", "/a/x.txt", False),
        ("*", "/a/.hidden", True),  # a leading '.' is not special
        # with '/': whole segments at the end of the absolute path
        ("docs/*.md", "/any/where/docs/x.md", True),
        ("docs/*.md", "/docs/x.md", True),
        ("docs/*.md", "/x/docs/a/b.md", False),  # '*' never crosses '/'
        ("docs/*.md", "/x/mydocs/x.md", False),  # segment boundary, not substring
        ("docs/*.md", "/x/docs/x.md/y", False),
        ("*/x.md", "/a/x.md", True),
        ("*/x.md", "/x.md", False),  # '*' is a directory name: not the empty one before the root '/'
        ("*/*", "/x.md", False),
        ("x?y", "/x/y", False),  # nor does '?'
        ("a[!b]c", "/a/c", False),  # nor a negated class
        ("a[+-0]c", "/a/c", False),  # nor a range spanning '/'
        ("a[+-0]c", "/a-c", True),
        # '**': zero or more whole segments
        ("docs/**/*.md", "/r/docs/x.md", True),
        ("docs/**/*.md", "/r/docs/a/b/x.md", True),
        ("docs/**/*.md", "/r/docs/a/b/x.txt", False),
        ("docs/**/*.md", "/r/mydocs/x.md", False),
        ("**/*.md", "/a/b.md", True),
        ("**/*.md", "/a/b/c/d.md", True),
        ("docs/**", "/r/docs/a/b/x.txt", True),
        ("docs/**", "/r/docs", False),  # everything below docs, not a file named docs
        ("a/**/**/b", "/a/b", True),
        ("a**b.md", "/ab.md", True),  # '**' inside a segment is '*'
        ("a**b.md", "/a/b.md", False),
        # a leading '/': anchored at the filesystem root
        ("/ws/code/*", "/ws/code/g.py", True),
        ("/ws/code/*", "/ws/code/md/notes.txt", False),
        ("/ws/code/**", "/ws/code/md/notes.txt", True),
        ("/code/*", "/ws/code/g.py", False),
        ("/**/g.py", "/ws/code/g.py", True),
        # braces: nested, several groups, '/' inside, empty alternative
        ("*.{md,{r,t}st}", "/a/x.tst", True),
        ("*.{md,{r,t}st}", "/a/x.xst", False),
        ("{docs,notes}/*.{md,txt}", "/w/notes/a.txt", True),
        ("{docs,notes}/*.{md,txt}", "/w/code/a.txt", False),
        ("{docs/*.md,*.rst}", "/w/docs/a.md", True),
        ("{docs/*.md,*.rst}", "/w/x/a.rst", True),
        ("{docs/*.md,*.rst}", "/w/x/a.md", False),  # the '*.rst' alternative is name-only
        ("{/ws/*.md,*.rst}", "/ws/a.md", True),
        ("{/ws/*.md,*.rst}", "/x/ws/a.md", False),  # the first alternative is anchored
        ("notes{,.bak}", "/w/notes.bak", True),
        ("notes{,.bak}", "/w/notes", True),
        # escapes and literal class members
        (r"a\*", "/w/a*", True),
        (r"a\*", "/w/ab", False),
        (r"\{a,b\}", "/w/{a,b}", True),
        ("[[]x]", "/w/[x]", True),
        ("[]x]", "/w/]", True),
        ("[!]]", "/w/]", False),
        (r"\!x", "/w/!x", True),
        (r"docs\/*.md", "/w/docs/a.md", True),  # an escaped '/' is still the separator
        (r"docs\/*.md", "/w/docs/a/b.md", False),
        # repeated slashes are one
        ("docs//*.md", "/w/docs/a.md", True),
        # special regex characters are literal
        ("a+b(1).md", "/w/a+b(1).md", True),
        ("a.md", "/w/aXmd", False),
        # case-sensitive
        ("*.MD", "/a/x.md", False),
        ("Docs/*.md", "/a/docs/x.md", False),
        # a newline in a file name is an ordinary character
        ("*.md", "/a/line\nbreak.md", True),
    ],
)
def test_glob_matches(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "fault", "hint"),
    [
        ("", "empty glob", "*.md"),
        ("*.{md", "'{' at position 3 is never closed", "*.{md,rst}"),
        ("{a,{b,c}", "'{' at position 1 is never closed", r"\{"),
        ("[abc", "'[' at position 1 is never closed", r"\["),
        ("*.[!md", "'[' at position 3 is never closed", r"\["),
        ("[!]", "'[' at position 1 is never closed", r"\["),
        ("*.md}", "'}' at position 5 closes no '{'", r"\}"),
        ("{md}", "brace group at position 1 has no ','", "*.{md,rst}"),
        ("{,*.md}", "empty alternative", "*.{md,rst}"),
        ("[a/b]", "holds '/'", "outside [...]"),
        ("[+-/]", "holds '/'", "outside [...]"),
        ("[z-a]", "range z-a at position 2 is reversed", "[a-z]"),
        ("a\\", "lone '\\'", "\\\\"),
        ("docs/", "ends with '/'", "docs/**"),
        ("/", "names no file", "*.md"),
        ("./docs/*.md", "'.' and '..' name no file", "end of the absolute path"),
        ("docs/../x.md", "'.' and '..' name no file", "end of the absolute path"),
        ("..", "'.' and '..' name no file", "file names"),
        ("!*.md", "leading '!'", "\\!"),
        ("{a,b}" * 9, f"more than {MAX_ALTERNATIVES} alternatives", "fewer"),
    ],
)
def test_malformed_patterns_are_usage_errors(pattern: str, fault: str, hint: str) -> None:
    with pytest.raises(UsageError) as raised:
        compile_glob(pattern)
    error = raised.value
    assert (error.code, error.exit_code) == ("usage_error", 2)
    assert fault in error.message
    assert hint in error.hint
    if pattern:
        assert repr(pattern) in error.message


def test_many_alternatives_below_the_cap_are_fine() -> None:
    pattern = "{a,b}" * 8  # 256
    assert matches(pattern, "/w/abababab")
    assert not matches(pattern, "/w/abababac")


def test_patterns_are_cached() -> None:
    assert compile_glob("docs/**/*.md") is compile_glob("docs/**/*.md")


# A name-only pattern of '*', '?', letters and simple classes means what fnmatch means on the
# file name (the rule the store used before, and Python's reference for these characters).
_NAME_PATTERN = st.lists(st.sampled_from(["a", "b", ".", "*", "?", "[ab]", "[!a]", "[a-b]"]), max_size=6).map("".join)


@given(
    pattern=_NAME_PATTERN.filter(lambda p: p not in ("", ".", "..")),
    name=st.text(alphabet="ab.", min_size=1, max_size=6).filter(lambda n: n not in (".", "..")),
    parent=st.sampled_from(["/", "/d/", "/d/ab/"]),
)
def test_name_patterns_agree_with_fnmatch_on_the_file_name(pattern: str, name: str, parent: str) -> None:
    assert matches(pattern, parent + name) is fnmatchcase(name, pattern)


@pytest.mark.parametrize(
    ("pattern", "prefilters"),
    [
        ("*.py", ("*/*.py",)),
        ("docs/*.md", ("*/docs/*.md",)),
        ("docs/**/*.md", ("*/docs/*.md",)),
        ("/ws/**", ("/ws/*",)),
        ("*.{md,rst}", ("*/*.md", "*/*.rst")),
        ("{a,b}.{md,md}", ("*/a.md", "*/b.md")),  # duplicates once
        ("[!t]?", ("*/??",)),  # classes widen to '?'
        (r"a\*\?\[b]", ("*/a[*][?][[]b]",)),  # literal metacharacters in brackets
    ],
)
def test_prefilters(pattern: str, prefilters: tuple[str, ...]) -> None:
    assert compile_glob(pattern).prefilters == prefilters


_PIECES = ["a", "b", ".", "*", "?", "**", "/", "[ab]", "[!a]", "{a,b/}", "{*,?a}", "\\*", "\\["]


@given(
    pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=7),
    path=st.lists(st.text(alphabet="ab.*[", min_size=1, max_size=4), min_size=1, max_size=4),
)
def test_every_match_passes_a_prefilter(pieces: list[str], path: list[str]) -> None:
    # The SQLite store tests the prefilters with GLOB and only then calls the matcher: a path the
    # matcher accepts but no prefilter lets through would be lost silently.
    try:
        glob = compile_glob("".join(pieces))
    except UsageError:
        return
    absolute = "/" + "/".join(path)
    if glob.matches(absolute):
        assert any(fnmatchcase(absolute, prefilter) for prefilter in glob.prefilters)
