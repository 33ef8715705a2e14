"""Root names (issue 12, "Named roots"): every root has a stable name that hits, ``--root`` and
responses use.

Rules (after seed 004's member names): a name is 1-64 ASCII letters, digits, ``_`` or ``-``.
The primary workspace is named ``workspace`` unless ``workspace.name`` says otherwise; an added
root is named by its ``name`` key, else by its folder's name with every other character replaced
by ``-`` (``My Notes`` -> ``My-Notes``), cut to 64 characters. Configured names must differ
(a ``ConfigError`` otherwise) and are taken first; a derived name that is already taken gets
``-2``, ``-3``... in root order (the primary first, then ``knowledgebase.roots`` as listed). The
same config therefore always gives the same names; removing a root may rename a derived name
that had a suffix, a configured name never changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal
from pathlib import Path

from hermes_workspace.domain.model import Root

PRIMARY_ROOT_NAME = "workspace"
"""The primary workspace's name when ``workspace.name`` is not set."""

MAX_ROOT_NAME = 64
"""Longest root name, in characters (seed 004: 1-64)."""

_NAME = re.compile(r"[A-Za-z0-9_-]{1,%d}" % MAX_ROOT_NAME)
_OTHER = re.compile(r"[^A-Za-z0-9_-]")

NAME_RULE = f"1-{MAX_ROOT_NAME} ASCII letters, digits, '_' or '-'"
"""The rule in words, for messages."""


def root_name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid root name (a sentence naming the rule), or ``None`` when it is."""
    if not isinstance(name, str):
        return f"a root name must be a string of {NAME_RULE}, got {name!r}"
    if _NAME.fullmatch(name) is None:
        return f"a root name must be {NAME_RULE}, got {name!r}"
    return None


def default_root_name(path: Path) -> str:
    """The name derived from ``path``'s folder name: characters other than ASCII letters, digits,
    ``_`` and ``-`` become ``-``, cut to :data:`MAX_ROOT_NAME`; ``root`` for a path without a
    name (``/``)."""
    base = _OTHER.sub("-", path.name)[:MAX_ROOT_NAME]
    return base or "root"


def name_roots(roots: Sequence[Root]) -> list[Root]:
    """``roots`` in the same order, each with its name: the configured one, else
    :func:`default_root_name` made unique with ``-2``, ``-3``... (the suffix counted from 2, the
    base cut so that the whole stays within :data:`MAX_ROOT_NAME`). Configured names are assumed
    valid and distinct (the config loader checks them) and are never changed."""
    taken = {r.name for r in roots if r.name is not None}
    named: list[Root] = []
    for root in roots:
        if root.name is None:
            base = default_root_name(root.path)
            name, n = base, 1
            while name in taken:
                n += 1
                suffix = f"-{n}"
                name = base[: MAX_ROOT_NAME - len(suffix)] + suffix
            taken.add(name)
            root = replace(root, name=name)
        named.append(root)
    return named


def covering_root(path: Path, roots: Sequence[Root]) -> Root | None:
    """The deepest root of ``roots`` that indexes ``path``: ``path`` is below a recursive root, or
    directly in a root; ``None`` when no root does. Roots overlap nowhere (the config refuses
    it, :func:`root_overlap`), but may nest inside a non-recursive root, whose files are only
    those directly in it: the deepest root that indexes ``path`` names it."""
    best: Root | None = None
    for root in roots:
        try:
            relative = path.relative_to(root.path)
        except ValueError:
            continue
        if not relative.parts or (not root.recursive and len(relative.parts) > 1):
            continue
        if best is None or len(root.path.parts) > len(best.path.parts):
            best = root
    return best


def containing_root(path: Path, roots: Sequence[Root]) -> Root | None:
    """The deepest root of ``roots`` whose folder is ``path`` or one of its ancestors, recursive
    or not (a working directory inside a project: issue 12's "longest ancestor"); ``None`` when
    ``path`` is in no root's folder. Both are compared as given (absolute, symlinks resolved)."""
    best: Root | None = None
    for root in roots:
        if path == root.path or root.path in path.parents:
            if best is None or len(root.path.parts) > len(best.path.parts):
                best = root
    return best


OverlapKind = Literal["same", "inside", "contains"]
"""How a root overlaps an earlier one (:func:`root_overlap`)."""


def root_overlap(first: Root, first_real: Path, second: Root, second_real: Path) -> OverlapKind | None:
    """Whether the files ``second`` indexes meet those ``first`` indexes (seed 004: "Duplicate
    and overlapping roots within one workspace are errors, including symlink aliases"), from
    their folders with symlinks resolved (``*_real``; a missing folder as written):

    - ``same``: the same folder (twice, or under another path through a symbolic link);
    - ``inside``: ``second`` lies inside ``first`` and ``first`` is recursive;
    - ``contains``: ``first`` lies inside ``second`` and ``second`` is recursive;
    - ``None``: no file is under both. A non-recursive root indexes only the files directly in
      its folder, and a folder inside it holds none of them, so roots may nest inside a
      non-recursive root (and a non-recursive root may hold a recursive one's folder).
    """
    if first_real == second_real:
        return "same"
    if first.recursive and first_real in second_real.parents:
        return "inside"
    if second.recursive and second_real in first_real.parents:
        return "contains"
    return None


def first_overlap(roots: Sequence[tuple[Root, Path]]) -> tuple[int, int, OverlapKind] | None:
    """The first pair ``(i, j, kind)``, ``i < j`` in ``roots`` order (``(root, real folder)``
    pairs), whose files meet (:func:`root_overlap`, ``kind`` as ``roots[j]`` relates to
    ``roots[i]``), or ``None`` when no two overlap."""
    for j, (second, second_real) in enumerate(roots):
        for i in range(j):
            first, first_real = roots[i]
            kind = root_overlap(first, first_real, second, second_real)
            if kind is not None:
                return i, j, kind
    return None
