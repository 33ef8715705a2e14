"""Use case: free-text search over the index (seed 000 "Search")."""

from __future__ import annotations

import os
from dataclasses import dataclass

from hermes_workspace.domain.model import SearchHit
from hermes_workspace.domain.ports import IndexStore
from hermes_workspace.domain.query import parse_query


@dataclass
class SearchWorkspace:
    """Normalizes the text into a query and asks the store for ranked hits."""

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
                path is taken from the current directory; a trailing ``/`` is kept).
            glob: keep hits whose file name matches (``*.py``), or whose absolute path matches
                when the pattern contains ``/``.
            limit: at most this many hits; ``None`` means ``default_limit``; values below 1
                become 1 (seed 000 hardening P2).

        Raises:
            IndexNotFoundError: the workspace was never indexed.
            StoreError: the database failed.
        """
        query = parse_query(text)
        if query.is_empty:
            return []
        limit = self.default_limit if limit is None else max(1, limit)
        return self.store.search(query, path_prefix=_absolute_prefix(path), glob=glob or None, limit=limit)


def _absolute_prefix(path: str | None) -> str | None:
    if not path:
        return None
    expanded = os.path.expanduser(path)
    absolute = os.path.abspath(expanded)
    if expanded.endswith(os.sep) and not absolute.endswith(os.sep):
        absolute += os.sep
    return absolute
