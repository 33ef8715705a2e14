"""Use case: ``retrieve``, the best evidence for a query packed into a token budget, and the
turn-by-turn helpers of seed 001 (gating and query enrichment) for agent hosts.

Packing rules, framing and the response shape: :mod:`hermes_workspace.domain.packing`.
"""

from __future__ import annotations

import re
from os import PathLike
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.handles import removed_note
from hermes_workspace.domain.model import ResultSet, SearchHit, SearchResults, scope_json
from hermes_workspace.domain.packing import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_CHUNKS,
    RetrievePack,
    WIDEST_SET_ID,
    checked_budget,
    minimum_budget,
    pack_hits,
    window_size,
)
from hermes_workspace.domain.ports import ResultSetStore, TokenCounter

MAX_MAX_CHUNKS = 50
"""Most blocks one pack may ask for."""

RETRIEVE_KIND = "retrieve"
"""The ``kind`` of result sets frozen by ``retrieve`` (``more`` dispatches on it)."""


def candidate_count(max_chunks: int) -> int:
    """Hits fetched and frozen per ``retrieve``: ``max(4 * max_chunks, 20)``, two windows of
    :func:`~hermes_workspace.domain.packing.window_size` at least, so ``more`` has a second pack."""
    return max(4 * max_chunks, 20)


SearchFunction = Callable[..., SearchResults]
"""``search(text, *, path, glob, limit, mode, roots, all_roots, cwd) -> SearchResults``, as
:meth:`~hermes_workspace.application.search.SearchWorkspace.execute`."""


@dataclass
class RetrieveContext:
    """Search, freeze the candidates as a ``retrieve`` result set, pack the first window.

    ``search``: the search use case's ``execute``; ``counter``: the budget's tokenizer;
    ``result_sets``: where candidate lists are frozen (handles ``SET:N``, 1-based in candidate
    order; cursors ``SET@OFFSET``); ``roots``: the workspace's root folders (citation paths);
    ``file_counts``: a function giving ``(files indexed, files seen by the last index run)``
    for coverage (the second None when unknown), or None;
    ``verify``: marks hits whose file changed since indexing (sets ``stale``/``file_hash``),
    or None when not wired; ``not_indexed``: the files of some hits that the index no longer
    holds (removed with ``delete``): their hits are left out of a page of a frozen set, or None
    when not wired; ``default_budget`` and ``default_max_chunks``: from
    ``knowledgebase.injection``.
    """

    search: SearchFunction
    counter: TokenCounter
    result_sets: ResultSetStore
    roots: Sequence[Path] = ()
    file_counts: Callable[[], tuple[int, int | None]] | None = None
    verify: Callable[[Sequence[SearchHit]], Sequence[SearchHit]] | None = None
    not_indexed: Callable[[Sequence[SearchHit]], set[Path]] | None = None
    default_budget: int = DEFAULT_BUDGET
    default_max_chunks: int = DEFAULT_MAX_CHUNKS

    def execute(
        self,
        query: str,
        *,
        budget: int | None = None,
        path: str | None = None,
        glob: str | None = None,
        mode: str | None = None,
        max_chunks: int | None = None,
        require_keyword_match: bool = False,
        roots: Sequence[str] | None = None,
        all_roots: bool = False,
        cwd: str | PathLike[str] | None = None,
    ) -> RetrievePack:
        """The first pack for ``query``. ``budget`` (tokens) and ``max_chunks`` default to the
        configured values; ``path``, ``glob``, ``mode``, ``roots``, ``all_roots`` and ``cwd`` as for
        search (the pack's ``scope`` says which roots were searched, the home root and whether
        it widened; it is frozen with the set for ``more``). With
        ``require_keyword_match`` (seed 001's gated mode) the pack is empty unless at least one
        candidate matched the query's words (a keyword hit), not only its meaning.

        Raises:
            UsageError: a budget below the smallest response (the hint says the minimum) or
                above :data:`~hermes_workspace.domain.packing.MAX_BUDGET`, ``max_chunks`` outside 1..:data:`MAX_MAX_CHUNKS`, or
                what search refuses (mode, glob).
            IndexNotFoundError: nothing was indexed yet.
            TokenizerUnavailableError: the budget's tokenizer cannot load.
            StoreError: the index or the result-set store failed.
        """
        budget = self._budget(budget)
        max_chunks = self._max_chunks(max_chunks)
        self.counter.count("")  # a missing tokenizer fails before anything is searched or frozen
        hits = self.search(query, path=path, glob=glob, limit=candidate_count(max_chunks), mode=mode, roots=roots,
                           all_roots=all_roots, cwd=cwd)
        candidates: Sequence[SearchHit] = list(hits)
        notes = list(hits.notes)
        if require_keyword_match and candidates and not any(_keyword_match(h, hits.mode) for h in candidates):
            candidates = []
            notes.append("no hit matched the query's words (gated mode): nothing retrieved")
        if self.verify is not None and candidates:
            candidates = list(self.verify(candidates))
        options = {
            "budget": budget,
            "max_chunks": max_chunks,
            "path": path,
            "glob": glob,
            "mode": mode,
            "semantic_status": hits.semantic_status,
            "notes": notes,
            "scope": hits.scope,
        }
        if not candidates:
            return pack_hits(query, [], counter=self.counter, budget=budget, max_chunks=max_chunks,
                             roots=self.roots, coverage=self._coverage([], hits.semantic_status), notes=notes,
                             scope=hits.scope)
        self._check_every_page_fits(query, candidates, budget, max_chunks, notes, hits.semantic_status, hits.scope)
        frozen = self.result_sets.save(RETRIEVE_KIND, query, options, candidates)
        return self.page(frozen, 0)

    def _check_every_page_fits(
        self, query: str, candidates: Sequence[SearchHit], budget: int, max_chunks: int, notes: Sequence[str],
        semantic_status: str, scope: dict[str, Any],
    ) -> None:
        """Refuse, before anything is frozen, a budget that some later page (``more``, from any
        cursor) could not hold: the largest minimum over every starting candidate, counted with
        the widest set id. Raises UsageError naming it."""
        named = [replace(h, handle=f"{WIDEST_SET_ID}:{i}") for i, h in enumerate(candidates, start=1)]
        coverage = self._coverage(named, semantic_status)  # one store lookup, not one per page
        need = max(
            minimum_budget(query, self.counter, named, max_chunks=max_chunks, offset=offset, set_id=WIDEST_SET_ID,
                           roots=self.roots, coverage=coverage, notes=notes if offset == 0 else (), scope=scope)
            for offset in range(len(named))
        )
        if budget < need:
            raise UsageError(
                f"a budget of {budget} tokens cannot hold every page of this retrieve",
                hint=f"Give a budget of at least {need} tokens (the default is {self.default_budget}).",
            )

    def page(self, result_set: ResultSet, offset: int) -> RetrievePack:
        """The pack that starts at candidate ``offset`` (0-based) of a frozen ``retrieve`` set,
        with the budget and block limit it was made with (``more SET@OFFSET``). The window's
        candidates are marked for freshness anew (``stale``); those whose files the index no
        longer holds are left out, and a note says how many.

        Raises:
            UsageError: ``result_set`` is not a retrieve set, or ``offset`` is past its end.
            TokenizerUnavailableError: the budget's tokenizer cannot load.
        """
        if result_set.kind != RETRIEVE_KIND:
            raise UsageError(f"result set {result_set.set_id} holds a {result_set.kind}, not a retrieve")
        total = len(result_set.hits)
        if offset < 0 or (offset >= total and total > 0):
            raise UsageError(
                f"offset {offset} is past the end of result set {result_set.set_id} ({total} candidates)",
                hint="Use the cursor printed with the previous pack; null means there is no more.",
            )
        options = result_set.options
        budget = int(options.get("budget") or self.default_budget)
        max_chunks = int(options.get("max_chunks") or self.default_max_chunks)
        handled = [replace(h, handle=f"{result_set.set_id}:{i}") for i, h in enumerate(result_set.hits, start=1)]
        semantic_status = str(options.get("semantic_status") or "disabled")
        notes = list(options.get("notes") or ()) if offset == 0 else []
        window = handled[offset : offset + window_size(max_chunks)]
        if self.verify is not None and window:  # files may have changed since the set was frozen
            marked = list(self.verify(window))
            handled[offset : offset + len(window)] = marked
            window = marked
        withheld: set[int] = set()
        if self.not_indexed is not None:
            removed = self.not_indexed(window)
            withheld = {offset + i for i, hit in enumerate(window) if hit.path in removed}
            if withheld:
                notes.append(removed_note(len(withheld)))
        return pack_hits(
            result_set.query,
            handled,
            counter=self.counter,
            budget=budget,
            max_chunks=max_chunks,
            offset=offset,
            set_id=result_set.set_id,
            roots=self.roots,
            coverage=self._coverage(handled, semantic_status),
            notes=notes,
            withheld=withheld,
            scope=scope_json(options.get("scope")),
        )

    def _coverage(self, hits: Sequence[SearchHit], semantic_status: str) -> dict[str, Any]:
        """``{"files_indexed", "files_total", "stale", "semantic_status"}``: ``files_total`` is
        the indexed files plus those the last index run left out (too large, binary, deleted by
        the user...), null when unknown; ``stale``: candidate files found changed, null when
        unchecked."""
        checked = [h for h in hits if h.stale is not None]
        indexed, total = self.file_counts() if self.file_counts is not None else (None, None)
        return {
            "files_indexed": indexed,
            "files_total": total,
            "stale": len({h.path for h in checked if h.stale}) if checked else None,
            "semantic_status": semantic_status,
        }

    def _budget(self, budget: int | None) -> int:
        return checked_budget(budget, self.default_budget, "knowledgebase.injection.max_tokens")

    def _max_chunks(self, max_chunks: int | None) -> int:
        if max_chunks is None:
            return self.default_max_chunks
        if isinstance(max_chunks, bool) or not isinstance(max_chunks, int) or not 1 <= max_chunks <= MAX_MAX_CHUNKS:
            raise UsageError(
                f"max_chunks must be a whole number from 1 to {MAX_MAX_CHUNKS}, got {max_chunks!r:.40}",
                hint=f"The default is {self.default_max_chunks} (knowledgebase.injection.max_chunks).",
            )
        return max_chunks


def _keyword_match(hit: SearchHit, mode: str) -> bool:
    """True when the keyword retriever found ``hit`` (every hit of a keyword search)."""
    return mode == "keyword" or hit.keyword_rank is not None


# -- seed 001: gating and query enrichment ----------------------------------------------------

TURN_MODES = ("off", "gated", "always")
"""``knowledgebase.retrieval_mode``: seed 001's three modes."""

WORKSPACE_WORDS = frozenset(
    {
        "workspace", "docs", "doc", "documentation", "document", "documents", "file", "files", "folder",
        "notes", "note", "readme", "project", "repo", "repository", "code", "source", "config",
        "configuration", "deployment", "deploy", "plan", "spec", "design", "architecture", "guide",
        "runbook", "wiki", "meeting", "report", "policy", "procedure", "function", "class", "module",
    }
)
"""Words that make a message look workspace-relevant (seed 001 names "workspace", "docs",
"deployment"; the rest are the same kind: things users keep in files)."""

QUESTION_WORDS = frozenset(
    {"what", "where", "how", "why", "which", "who", "when", "explain", "describe", "summarize", "find", "show", "list"}
)
"""Question words and requests that ask for information (seed 001: "what", "where", "how")."""

PRONOUNS = frozenset({"it", "this", "that", "they", "them", "these", "those", "its"})
"""Seed 001: queries with these (it, this, that, they, and their forms) lean on the conversation."""

SHORT_QUERY_WORDS = 5
"""Seed 001: a query of fewer words than this is enriched with recent turns."""

ENRICHED_MAX_CHARS = 500
"""Seed 001: an enriched query is capped at 500 characters."""

RECENT_TURNS = 3
"""Seed 001: enrichment uses the last 2-3 user messages; we take up to 3, most recent first."""

_WORD = re.compile(r"[\w'-]+")


def _words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in _WORD.findall(text)]


def looks_workspace_relevant(message: str) -> bool:
    """Seed 001's gate: a workspace word or a question word, and 3 or more words or a ``?``."""
    words = _words(message)
    topical = any(w in WORKSPACE_WORDS or w in QUESTION_WORDS for w in words)
    return topical and (len(words) >= 3 or "?" in message)


def needs_enrichment(message: str) -> bool:
    """Seed 001: fewer than :data:`SHORT_QUERY_WORDS` words, or a pronoun."""
    words = _words(message)
    return len(words) < SHORT_QUERY_WORDS or any(w in PRONOUNS for w in words)


def user_texts(recent_messages: Sequence[Any]) -> list[str]:
    """The texts of the user messages in ``recent_messages`` (oldest first): plain strings are
    user messages; mappings count when their ``role`` is ``user`` (chat-completion shape), their
    ``content`` a string or a list of parts with ``text``.

    Raises:
        UsageError: an item is neither a string nor a mapping.
    """
    texts: list[str] = []
    for item in recent_messages:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping):
            if item.get("role", "user") != "user":
                continue
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, Sequence):
                texts.append(" ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping)))
        else:
            raise UsageError(
                f"recent_messages must hold strings or {{'role', 'content'}} mappings, got {type(item).__name__}"
            )
    return [t for t in texts if t.strip()]


def enrich_query(message: str, recent_messages: Sequence[Any] = ()) -> str:
    """Seed 001's query enrichment: a short or pronoun query gets the text of the last
    :data:`RECENT_TURNS` user messages appended, most recent first, the whole cut at
    :data:`ENRICHED_MAX_CHARS` characters (at a word boundary). Other queries come back as they are
    (stripped). A recent message equal to ``message`` (a host that passes the current turn too)
    is skipped."""
    query = " ".join(message.split())
    if not needs_enrichment(message):
        return query
    previous = [" ".join(t.split()) for t in user_texts(recent_messages)]
    previous = [t for t in previous if t and t != query][-RECENT_TURNS:]
    enriched = " ".join([query, *reversed(previous)]).strip()
    if len(enriched) <= ENRICHED_MAX_CHARS:
        return enriched
    cut = enriched[: ENRICHED_MAX_CHARS + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > len(query) else enriched[:ENRICHED_MAX_CHARS]).strip()
