"""Root profiles (issue 12): which files of a root are indexed, by file extension.

A root may carry ``extensions`` (an explicit list) and a ``profile``. The only profile is
``code``, a source repository: without explicit extensions, the project type is detected from
marker files at the top of the root (:data:`PROJECT_MARKERS`, after seed 002 "Project type
auto-detection"), the extensions of every marker found are merged, markdown
(:data:`ALWAYS_INCLUDED`) is always added, and a root without any marker gets
:data:`FALLBACK_EXTENSIONS`. Explicit ``extensions`` win: exactly those are indexed (seed 002,
"Explicit extensions override auto-detection": ``[.go, .proto]`` indexes only those two), in any
root, with or without a profile.

Detection runs at every index run (the file source lists the root's top level anyway, so it costs
no extra system call): a repository that gains a ``go.mod`` starts indexing ``.go`` files at the
next run, and files that no longer qualify leave the index like deleted ones.

Extensions are compared with a file's last suffix, lower-cased (``.py``; a file without a suffix,
``Makefile``, has none and never matches). Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hermes_workspace.domain.constants import CODE_LANGUAGES, MARKDOWN_SUFFIXES

PROFILES: tuple[str, ...] = ("code",)
"""The values of ``knowledgebase.roots[].profile`` and ``roots add --profile``."""

_NODE = (".ts", ".tsx", ".js", ".jsx", ".json", ".css", ".html")
_PYTHON = (".py", ".pyi")
_JVM = (".java", ".kt")

PROJECT_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("package.json", _NODE),
    ("pyproject.toml", _PYTHON),
    ("setup.py", _PYTHON),
    ("requirements.txt", _PYTHON),
    ("go.mod", (".go",)),
    ("Cargo.toml", (".rs",)),
    ("pom.xml", _JVM),
    ("build.gradle", _JVM),
    ("build.gradle.kts", _JVM),
    ("Gemfile", (".rb",)),
)
"""Marker file name (exact, case-sensitive, at the top of the root) -> the extensions of that
project type. Source: seed 002, decision D7 and the requirement "Project type auto-detection for
default extensions"; ``build.gradle.kts`` (Gradle's Kotlin spelling of ``build.gradle``) is ours."""

ALWAYS_INCLUDED: frozenset[str] = MARKDOWN_SUFFIXES
"""Added to every detected set (seed 002: "Always include .md files": READMEs and docs):
``.md``, ``.mdx``, ``.markdown``."""

COMMON_TEXT_EXTENSIONS: frozenset[str] = frozenset(
    {".txt", ".rst", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".xml", ".html", ".css", ".scss",
     ".proto", ".graphql"}
)
"""Text and configuration files that sit next to code in most repositories (part of the fallback)."""

FALLBACK_EXTENSIONS: frozenset[str] = (
    frozenset(CODE_LANGUAGES)
    | frozenset(ext for _, exts in PROJECT_MARKERS for ext in exts)
    | COMMON_TEXT_EXTENSIONS
    | ALWAYS_INCLUDED
)
"""A ``code`` root with no marker file: every code suffix the code chunker knows
(:data:`~hermes_workspace.domain.constants.CODE_LANGUAGES`), every extension of the marker table,
:data:`COMMON_TEXT_EXTENSIONS` and markdown; a superset of seed 002's fallback list."""

EXTENSION_PATTERN = re.compile(r"^\.[A-Za-z0-9][A-Za-z0-9_+-]{0,31}$")
"""What an extension looks like: a dot and up to 32 letters, digits, ``_``, ``+`` or ``-``
(``.py``, ``.c++``, ``.tar-gz``...). One suffix: ``.tar.gz`` would never match a file's last suffix."""


def extension_problem(value: object) -> str | None:
    """Why ``value`` is not an extension (a string matching :data:`EXTENSION_PATTERN`), or ``None``."""
    if not isinstance(value, str):
        return f"an extension must be a string such as '.py', got {value!r}"
    if not value.startswith("."):
        return f"an extension starts with a dot: write '.{value}' rather than {value!r}"
    if not EXTENSION_PATTERN.match(value):
        return f"{value!r} is not one file extension (a dot, then letters or digits, such as '.py')"
    return None


def normalize_extensions(values: Iterable[str]) -> tuple[str, ...]:
    """``values`` lower-cased, without duplicates, sorted: the stored form of a root's
    ``extensions``. The caller has checked each with :func:`extension_problem`."""
    return tuple(sorted({v.lower() for v in values}))


def detect_markers(names: Iterable[str]) -> tuple[str, ...]:
    """The marker files of :data:`PROJECT_MARKERS` among ``names`` (file names at the top of a
    root), in the table's order."""
    present = set(names)
    return tuple(marker for marker, _ in PROJECT_MARKERS if marker in present)


def detected_extensions(names: Iterable[str]) -> frozenset[str]:
    """What a ``code`` root whose top level holds the files ``names`` indexes: the merged
    extensions of every marker found plus :data:`ALWAYS_INCLUDED`, or :data:`FALLBACK_EXTENSIONS`
    when none is found."""
    markers = set(detect_markers(names))
    if not markers:
        return FALLBACK_EXTENSIONS
    found = {ext for marker, exts in PROJECT_MARKERS if marker in markers for ext in exts}
    return frozenset(found) | ALWAYS_INCLUDED


def root_extensions(
    profile: str | None, extensions: tuple[str, ...] | None, names: Iterable[str]
) -> frozenset[str] | None:
    """The extensions a root indexes, or ``None`` for every file (no filter).

    ``extensions`` (explicit, lower-cased) win whatever the profile; else a ``code`` profile
    detects them from ``names``, the file names at the top of the root
    (:func:`detected_extensions`); else ``None``."""
    if extensions is not None:
        return frozenset(extensions)
    if profile == "code":
        return detected_extensions(names)
    return None


def needs_top_level_names(profile: str | None, extensions: tuple[str, ...] | None) -> bool:
    """Whether :func:`root_extensions` reads ``names`` for this root (so a source lists them)."""
    return extensions is None and profile == "code"


def suffix_of(name: str) -> str:
    """The last suffix of the file name ``name``, lower-cased (``""`` when none; a leading dot
    alone, ``.bashrc``, is not a suffix), as :func:`root_extensions` sets are compared with."""
    dot = name.rfind(".")
    if dot <= 0:
        return ""
    return name[dot:].lower()
