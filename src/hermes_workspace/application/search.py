"""Use case: free-text search over the index (seed 000 "Search")."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.ports import IndexStore
from hermes_workspace.domain.query import Compound, parse_query

MAX_LIMIT = 10_000
"""Largest number of hits one search returns; larger ``limit`` values are cut to it."""

EXACT_CANDIDATES = 50
"""Candidates fetched when a query holds a compound, among which exact matches are moved up."""


@dataclass
class SearchWorkspace:
    """Normalizes the text into a query and asks the store for ranked hits.

    Identifiers typed whole (``read_file``, ``hermes-agent``) get one ranking rule on top of the
    store's BM25: among the best ``max(limit, 50)`` candidates, hits whose content contains the
    compound exactly as typed (case-insensitive) come first, in BM25 order. BM25 alone ranks a
    chunk that says "read" and "file" many times above the one that defines ``read_file``.
    """

    store: IndexStore
    default_limit: int

    def execute(
        self,
        text: str,
        *,
        path: str | None = None,
        glob: str | None = None,
        limit: int | None = None,
    ) -> list[SearchHit]:
        """Hits, best first.

        Args:
            text: free text; operators and punctuation are ordinary characters. Text with no word
                of two or more characters gives ``[]``.
            path: keep hits whose absolute path starts with this (``~`` expanded; a relative
                path is taken from the current directory; an existing path has its symlinks
                resolved, as roots do; a trailing ``/`` is kept).
            glob: keep hits whose file name matches (``*.py``, ``[!t]*``; case-sensitive); a
                pattern with ``/`` matches the end of the absolute path (``json/*.py``) unless it
                starts with ``/`` or ``*``.
            limit: at most this many hits; ``None`` means ``default_limit``; values below 1
                become 1 (seed 000 hardening P2), values above :data:`MAX_LIMIT` become it.

        Raises:
            IndexNotFoundError: the workspace was never indexed.
            StoreError: the database failed.
        """
        query = parse_query(text)
        if query.is_empty:
            return []
        limit = min(MAX_LIMIT, self.default_limit if limit is None else max(1, limit))
        literals = [g.literal.casefold() for g in query.groups if isinstance(g, Compound) and g.literal]
        fetch = max(limit, EXACT_CANDIDATES) if literals else limit
        hits = self.store.search(query, path_prefix=_absolute_prefix(path), glob=_glob(glob), limit=fetch)
        if literals:
            hits = _exact_first(hits, literals)
        return hits[:limit]


def _glob(pattern: str | None) -> str | None:
    if not pattern:
        return None
    if "/" in pattern and not pattern.startswith(("/", "*")):
        return "*/" + pattern
    return pattern


def _exact_first(hits: list[SearchHit], literals: list[str]) -> list[SearchHit]:
    # Whole identifiers only: `read_file` must not match inside `thread_file` or `_read_files`.
    patterns = [re.compile(rf"(?<!\w){re.escape(literal)}(?!\w)") for literal in literals]

    def exact_matches(hit: SearchHit) -> int:
        text = hit.content.casefold()
        return sum(1 for pattern in patterns if pattern.search(text))

    # sorted() is stable: BM25 order is kept within each group.
    return sorted(hits, key=lambda h: -exact_matches(h))


def _absolute_prefix(path: str | None) -> str | None:
    if not path:
        return None
    expanded = os.path.expanduser(path)
    # Roots are stored with symlinks resolved, so an existing prefix is resolved the same way.
    absolute = os.path.realpath(expanded) if os.path.exists(expanded) else os.path.abspath(expanded)
    if expanded.endswith(os.sep) and not absolute.endswith(os.sep):
        absolute += os.sep
    return absolute
