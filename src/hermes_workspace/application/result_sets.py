"""Use cases: searches frozen into result sets, and pages through them (``search --offset``,
``--cursor``, ``more CURSOR``).

A search freezes the hits it ranked (:attr:`SearchResults.ranked`), at least
:data:`MIN_FROZEN` and at most :data:`MAX_FROZEN` of them, under a random set id, and returns one
page with a handle on each hit (``SET:ORDINAL``, the 1-based position in the set) and a cursor to
the next page (``SET@OFFSET``). Later pages come from the frozen set, never from a new search, so
pages are consecutive and never overlap, and a handle keeps naming the same hit until the set
expires (:mod:`hermes_workspace.domain.handles`).

Why the frozen hits are the search's own ranked list and not a deeper search cut later: the
ranking depends on ``limit`` (how many candidates each retriever fetches, the per-file cap's
head). Measured on the whole-repository sets (keyword mode, 40 queries each): the top 20 of a
``limit=50`` search differ from a ``limit=20`` search for 8 code-nav-flask queries and 11
docs-qa-pydantic queries (never in the first 5). So a search of ``offset + limit`` hits runs as
before, its first ``offset + limit`` hits are exactly what that search returns today, and the
frozen tail continues its own ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from os import PathLike
from typing import Any

from hermes_workspace.application.search import MAX_LIMIT, SearchWorkspace
from hermes_workspace.application.verification import FreshnessMarker
from hermes_workspace.domain.errors import IndexNotFoundError, StoreError, UsageError
from hermes_workspace.domain.handles import Cursor, Handle, parse_cursor, removed_note
from hermes_workspace.domain.model import ResultSet, SearchHit, SearchResults, scope_json
from hermes_workspace.domain.ports import ResultSetStore

MIN_FROZEN = 50
"""Hits frozen at least (when the search ranked that many): a ``limit=20`` search can be paged
twice more without searching again."""

MAX_FROZEN = 200
"""Hits frozen at most: bounds a set's size in the index file (compressed, about 40 kB per 50
code hits). Hits beyond it are returned without a handle and end the paging."""

RetrievePager = Callable[[ResultSet, int], Any]
"""``page(result_set, offset) -> RetrievePack``: the next pack of a ``retrieve`` set (wired by the
container to ``RetrieveContext.page``)."""


@dataclass
class PagedSearch:
    """``search`` with paging: runs :class:`SearchWorkspace`, marks freshness, freezes the set and
    returns the page ``[offset, offset + limit)``.

    ``result_sets`` ``None``, or a save that fails (a read-only index, a lock held too long):
    the hits are returned without handles, ``result_set`` and ``cursor`` are ``None``, and a note
    says why; the search itself never fails for it.
    """

    search: SearchWorkspace
    freshness: FreshnessMarker
    result_sets: ResultSetStore | None

    def execute(
        self,
        text: str,
        *,
        path: str | None = None,
        glob: str | None = None,
        limit: int | None = None,
        mode: str | None = None,
        offset: int = 0,
        roots: Sequence[str] | None = None,
        all_roots: bool = False,
        cwd: str | PathLike[str] | None = None,
    ) -> SearchResults:
        """The page of hits ``offset``..``offset + limit - 1`` (0-based) of the search, each with
        ``file_hash``, ``stale`` and (when saved) ``handle``; see :class:`SearchResults` for
        ``result_set``, ``offset``, ``total``, ``cursor`` and ``scope`` (frozen with the set,
        so later pages report it too). Options as :meth:`SearchWorkspace.execute`.

        Raises:
            UsageError: ``offset`` below 0 or above :data:`MAX_LIMIT`; as the search.
            IndexNotFoundError, StoreError: as the search.
        """
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_LIMIT:
            raise UsageError(f"offset must be a whole number from 0 to {MAX_LIMIT}, got {offset!r}")
        size = self.search.default_limit if limit is None else max(1, limit)
        size = min(size, MAX_LIMIT)
        results = self.search.execute(
            text, path=path, glob=glob, limit=min(MAX_LIMIT, offset + size), mode=mode, roots=roots,
            all_roots=all_roots, cwd=cwd,
        )
        ranked = results.ranked
        depth = min(MAX_FROZEN, max(offset + size, MIN_FROZEN), len(ranked))
        page_hits = ranked[offset : offset + size]  # == the head a search of offset + size returns
        frozen = self.freshness.mark(ranked[:depth])
        marked_page = frozen[offset : offset + size]
        if len(marked_page) < len(page_hits):  # hits beyond the frozen set: marked, no handle
            marked_page += self.freshness.mark(page_hits[len(marked_page) :])
        options = {
            "path": path, "glob": glob, "limit": size, "mode": results.mode,
            "requested_mode": results.requested_mode, "semantic_status": results.semantic_status,
            "scope": results.scope,
        }
        saved: ResultSet | None = None
        notes = list(results.notes)
        if self.result_sets is not None and frozen:
            try:
                saved = self.result_sets.save("search", text, options, frozen)
            except (StoreError, IndexNotFoundError) as exc:
                notes.append(f"hits have no handles: the result set could not be saved ({exc.message})")
        page = SearchResults(
            [_with_handle(hit, saved, offset + i) for i, hit in enumerate(marked_page)],
            mode=results.mode,
            requested_mode=results.requested_mode,
            semantic_status=results.semantic_status,
            fusion=results.fusion,
            reranker=results.reranker,
            notes=notes,
        )
        page.scope = results.scope
        _set_paging(page, saved, offset, len(frozen) if saved is not None else len(ranked))
        return page


@dataclass
class MoreResults:
    """``more CURSOR`` (and ``search --cursor``): the next page of a frozen set, without
    searching again; hits are marked for freshness anew, and hits whose files the index no
    longer holds (removed with ``delete``) are left out of the page, with a note saying how many
    (their content is not served any more; the page keeps its place in the set, so handles and
    the next cursor do not shift). A ``retrieve`` set is handed to ``retrieve_pager`` (slice A's
    ``RetrieveContext.page``), which leaves them out the same way."""

    result_sets: ResultSetStore
    freshness: FreshnessMarker
    retrieve_pager: RetrievePager | None = None

    def execute(self, cursor: str, *, limit: int | None = None) -> Any:
        """The page of the set named by ``cursor`` (``SET@OFFSET``) starting at its offset:
        ``limit`` hits (default: the set's own page size), as :class:`SearchResults` for a
        ``search`` set; for a ``retrieve`` set, whatever ``retrieve_pager`` returns
        (a ``RetrievePack``).

        Raises:
            UsageError: ``cursor`` is not ``SET@OFFSET``; ``limit`` below 1; no pager for a
                ``retrieve`` set.
            HandleNotFoundError: no such set in this index.
            HandleExpiredError: the set expired or was evicted.
            StoreError: the database failed.
        """
        position = parse_cursor(cursor) if isinstance(cursor, str) else _bad_cursor(cursor)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise UsageError(f"limit must be a whole number >= 1 or None, got {limit!r}")
        saved = self.result_sets.load(position.set_id)
        if saved.kind == "retrieve":
            if self.retrieve_pager is None:
                raise UsageError(
                    f"{cursor} is a cursor of a retrieve pack, which this workspace cannot page",
                    hint="Run retrieve again with a larger budget.",
                )
            return self.retrieve_pager(saved, position.offset)
        size = limit or int(saved.options.get("limit") or 20)
        start = position.offset
        window = saved.hits[start : start + size]
        removed = self.freshness.not_indexed(window)
        kept = [(start + i, hit) for i, hit in enumerate(window) if hit.path not in removed]
        marked = self.freshness.mark([hit for _, hit in kept])
        notes = [] if start < len(saved.hits) else [f"{cursor} is past the last of the {len(saved.hits)} hits"]
        if len(kept) < len(window):
            notes.append(removed_note(len(window) - len(kept)))
        page = SearchResults(
            [_with_handle(hit, saved, index) for (index, _), hit in zip(kept, marked, strict=True)],
            mode=str(saved.options.get("mode") or "keyword"),
            requested_mode=saved.options.get("requested_mode") or None,
            semantic_status=str(saved.options.get("semantic_status") or "disabled"),
            notes=notes,
        )
        page.scope = scope_json(saved.options.get("scope"))  # sets frozen before issue 12 have none
        _set_paging(page, saved, start, len(saved.hits), end=start + len(window))
        return page


def _bad_cursor(cursor: object) -> Cursor:
    raise UsageError(f"cursor must be a string like 5e0c17aa@20, got {type(cursor).__name__}")


def _with_handle(hit: SearchHit, saved: ResultSet | None, index: int) -> SearchHit:
    if saved is None or index >= len(saved.hits):
        return hit
    return replace(hit, handle=str(Handle(saved.set_id, index + 1)))


def _set_paging(page: SearchResults, saved: ResultSet | None, offset: int, total: int, end: int | None = None) -> None:
    """Sets ``ranked``, ``offset``, ``total``, ``result_set`` and ``cursor`` of ``page``; ``end``:
    where the next page starts, by default after the page's hits (a page that left hits out
    passes the end of the slice it read)."""
    page.ranked = list(page)
    page.offset = offset
    page.total = total
    page.result_set = saved.set_id if saved is not None else None
    end = offset + len(page) if end is None else end
    page.cursor = str(Cursor(saved.set_id, end)) if saved is not None and end < len(saved.hits) else None
