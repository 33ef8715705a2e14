"""The ``hermes-workspace`` command line (cyclopts). Commands are thin: each calls the Python API
and returns what to print.

Output: JSON on stdout by default (seed 000 shapes); ``--human`` before the subcommand switches to
Rich tables. Errors: in JSON mode ``{"error": {"code", "message", "hint"}}`` on stdout, in human
mode a short message on stderr; the exit code is the error's (see domain/errors.py), 2 for a
command-line mistake, 0 for success including "no results". Never a traceback: unexpected errors
are logged with their traceback to ``HERMES_HOME/logs/workspace.log``.

SIGTERM and SIGHUP stop a command like Ctrl-C does (what is finished stays, the worker processes
end) with the error ``terminated`` and exit 128 + the signal number (143, 129). Only :func:`main`
(the console script and ``python -m hermes_workspace``) installs those handlers, for the time of
the command: the Python API and ``app`` mounted in a host program never touch the host's signal
handling.

To mount these commands in another cyclopts program as ``<host> workspace ...``::

    from hermes_workspace.entrypoints.cli import app
    host.command(app.meta, name="workspace")
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter
from cyclopts.exceptions import CycloptsError

from hermes_workspace import __version__
from hermes_workspace.domain.errors import UsageError, WorkspaceError
from hermes_workspace.domain.model import SearchResults, coverage_line
from hermes_workspace.domain.paths import display_name, escape_json_surrogates

LogLevel = Literal["debug", "info", "warning", "error", "critical"]

app = App(
    name="hermes-workspace",
    help="Index folders and search them; hits carry absolute paths and exact line ranges.",
    version=__version__,
    version_flags=["--version", "-V"],
    result_action="return_value",
    suppress_keyboard_interrupt=False,
)
app.meta.suppress_keyboard_interrupt = False
roots_app = App(name="roots", help="List, add, rename and remove the folders the workspace indexes.")
app.command(roots_app)
history_app = App(name="history", help="Search another application's session history, scoped to the conversation's project (read-only).")
app.command(history_app)


@dataclass
class _Options:
    human: bool = False
    home: str | None = None
    config: str | None = None
    quiet: bool = False
    errors_on_stderr: bool = False
    """The command's stdout is a protocol channel (``mcp``): errors go to stderr, see :func:`_emit_error`."""
    owns_stdout: bool = False
    result_stream: Any = None
    """Where results go once descriptor 1 was diverted to stderr (see
    :func:`_stdout_kept_for_the_result`); ``None``: ``sys.stdout``."""
    """The process runs the CLI (:func:`main`): descriptor 1 may be diverted while a command runs."""


_options = _Options()


@dataclass
class _Output:
    """What a command prints: ``data`` as JSON, or ``human(console)`` with ``--human``; ``raw``:
    text printed verbatim instead of ``data`` in JSON mode (a retrieve pack, whose budget counts
    its exact serialization)."""

    data: Any
    human: Callable[[Any], None]
    exit_code: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    raw: str | None = None


def _workspace() -> Any:
    from hermes_workspace.entrypoints.api import Workspace

    return Workspace.open(_options.home, config=_options.config, cwd=_cwd())


def _config_line(source: Any) -> str:
    """``config: PATH (project)``: which config file a command used and how it was found."""
    return _safe(f"config: {source.path} ({source.found})")


@roots_app.command(name="list")
def roots_list() -> _Output:
    """List the roots with their names: the primary workspace (always recursive) and the added folders."""
    with _workspace() as ws:
        roots, source = ws.roots(), ws.config_source

    def human(con: Any) -> None:
        con.print(_config_line(source), markup=False)
        _human_roots(con, roots)

    return _Output([r.to_json() for r in roots], human)


@roots_app.command(name="add")
def roots_add(
    path: str, /, *, recursive: bool | None = None, name: str | None = None, profile: str | None = None,
    extension: list[str] | None = None, max_file_size: str | None = None,
) -> _Output:
    """Add a folder to index, or change whether an added one is recursive, its name or which files it indexes.

    Parameters
    ----------
    path
        An existing directory (symlinks are resolved).
    recursive
        Index sub-folders too (--recursive), or only the files directly inside (--no-recursive).
        Default: only the files directly inside for a new root; unchanged for one already added.
    name
        The root's name for --root (1-64 ASCII letters, digits, _ or -). Default: the folder's
        name, made unique (-2, -3...); unchanged for one already added.
    profile
        "code": a source repository, recursive unless --no-recursive; the file extensions are
        chosen at each index run from its marker files (package.json, pyproject.toml, go.mod,
        Cargo.toml, pom.xml, Gemfile...), markdown always; "none" removes the profile.
    extension
        Index only files with this extension (repeat: --extension .go --extension .proto); wins
        over the profile's choice. Default: unchanged.
    max_file_size
        Skip this root's files larger than this (1MB, 500KB, bytes; binary units), instead of
        knowledgebase.indexing.max_file_mb. Default: unchanged.
    """
    with _workspace() as ws:
        change = ws.add_root(path, recursive=recursive, name=name, profile=profile, extensions=extension,
                             max_file_size=max_file_size)
        source = ws.config_source
    return _Output({**change.to_json(), "config": source.to_json()}, lambda con: _human_change(con, change.message, source))


def _human_change(console: Any, message: str, source: Any) -> None:
    """What a roots edit did, and which file it wrote when that is not HERMES_HOME's config."""
    console.print(_safe(message), markup=False)
    if source.found != "home":
        console.print(_config_line(source), markup=False)


@roots_app.command(name="rename")
def roots_rename(old: str, new: str, /) -> _Output:
    """Rename a root (the primary workspace too: its name goes to workspace.name).

    Parameters
    ----------
    old
        The root's current name, as `roots list` shows it.
    new
        The new name: 1-64 ASCII letters, digits, _ or -, not another root's.
    """
    with _workspace() as ws:
        change, source = ws.rename_root(old, new), ws.config_source
    return _Output({**change.to_json(), "config": source.to_json()}, lambda con: _human_change(con, change.message, source))


@roots_app.command(name="remove")
def roots_remove(path: str, /) -> _Output:
    """Remove an added folder; its files leave the index at the next `index`.

    Parameters
    ----------
    path
        The folder as it was added (or its resolved path), or the root's name (roots list).
    """
    with _workspace() as ws:
        root, source = ws.remove_root(path), ws.config_source
    return _Output({**root.to_json(), "config": source.to_json()},
                   lambda con: _human_change(con, f"Removed {root.path}", source))


@app.command(name="index")
def index_command(
    *, workers: int | None = None, path: Annotated[list[str] | None, Parameter(negative="")] = None
) -> _Output:
    """Index every root: new and changed files are chunked, unchanged ones skipped, deleted ones pruned.

    Parameters
    ----------
    workers
        Processes that read and chunk in parallel (1: none); default $HERMES_INDEX_WORKERS,
        else one per CPU (at most 4).
    path
        Only this file or folder (repeatable), e.g. what an editor just saved: judged by the same
        rules, a folder walked whole; indexed files gone from under it are pruned. Relative to the
        current folder.
    """
    from hermes_workspace.container import auto_index_workers, index_workers

    from rich.console import Console

    from hermes_workspace.adapters.progress_sinks import NullProgressSink
    from hermes_workspace.adapters.rich_progress import RichProgressSink

    progress = NullProgressSink() if _options.quiet else RichProgressSink(Console(stderr=True, emoji=False))
    if workers is None:
        workers = index_workers(default=auto_index_workers())
    with _workspace() as ws:
        summary = ws.index(progress=progress, workers=workers, paths=path)
    if summary.semantic is not None and summary.semantic.error is not None:
        from hermes_workspace.logs import get_logger

        error = summary.semantic.error
        get_logger("hermes_workspace.index").warning(
            f"keyword index updated, vectors not: {error['message']}", hint=error["hint"], code=error["code"]
        )
    return _Output(summary.to_json(), lambda con: _human_summary(con, summary))


@app.command(name="watch")
def watch_command(
    *, workers: int | None = None, debounce_ms: int | None = None, reconcile_minutes: float | None = None,
    catch_up: bool = True,
) -> _Output:
    """Keep the index fresh while files change, until Ctrl-C or SIGTERM (then exit 0).

    First a full index run (stat only for unchanged files), then, per burst of file events, a
    run of the changed paths only; a full run every few minutes as a safety net. Prints one JSON
    line per run on stdout ({"event": "batch", "reason", "paths", "pending", "error", ...the index
    summary}), and a last line {"event": "stopped", ...} with the totals. Another process
    writing the index is waited for (the paths are kept); an index that cannot be written
    ends the watch (exit 74).

    Parameters
    ----------
    workers
        Processes for the full runs, as for index; changed paths are indexed in this process.
    debounce_ms
        Quiet time after the last event before indexing (default knowledgebase.watch.debounce_ms, 300).
    reconcile_minutes
        Minutes between full runs (default knowledgebase.watch.reconcile_minutes, 10; 0: never).
    catch_up
        Start with a full run (--no-catch-up: only changes from now on).
    """
    from hermes_workspace.container import auto_index_workers, index_workers

    if workers is None:
        workers = index_workers(default=auto_index_workers())
    out = _result_stream()

    def report(batch: Any) -> None:
        if _options.human:
            _human_console().print(_safe(_batch_line(batch)), markup=False)
        else:
            out.write(escape_json_surrogates(json.dumps(batch.to_json(), ensure_ascii=False)) + "\n")
            out.flush()

    with _workspace() as ws:
        summary = ws.watch(on_batch=report, catch_up=catch_up, debounce_ms=debounce_ms,
                           reconcile_minutes=reconcile_minutes, workers=workers)
    data = summary.to_json()
    return _Output(data, lambda con: con.print(_safe(_stopped_line(summary)), markup=False),
                   raw=escape_json_surrogates(json.dumps(data, ensure_ascii=False)))


def _batch_line(batch: Any) -> str:
    import time

    when = time.strftime("%H:%M:%S", time.localtime(batch.at))
    what = batch.reason.replace("_", " ")
    if batch.paths:
        what += f" ({batch.paths} path{'s' if batch.paths != 1 else ''})"
    if batch.error is not None:
        return f"{when} {what}: not indexed: {batch.error['message']}; {batch.pending} paths kept for a retry"
    summary = batch.summary
    return (f"{when} {what}: {summary.files_indexed} indexed, {summary.files_pruned} removed, "
            f"{summary.files_errored} errors in {batch.seconds:.2f}s")


def _stopped_line(summary: Any) -> str:
    pending = f", {summary.pending} changed paths not indexed yet" if summary.pending else ""
    return (f"Stopped after {summary.duration_seconds:.0f}s: {summary.batches} runs, {summary.files_indexed} files "
            f"indexed, {summary.files_pruned} removed, {summary.files_errored} errors{pending}")


@app.command(name="search")
def search_command(
    *query: str,
    path: str | None = None,
    glob: str | None = None,
    limit: str | None = None,
    mode: Literal["keyword", "semantic", "hybrid"] | None = None,
    envelope: bool = False,
    offset: str | None = None,
    cursor: str | None = None,
    root: Annotated[list[str] | None, Parameter(negative="")] = None,
    all_: Annotated[bool, Parameter(name="--all", negative="")] = False,
) -> _Output:
    """Search the index with free text (operators like NOT or quotes are ordinary words).

    Parameters
    ----------
    query
        Words to look for; several arguments are joined with spaces.
    path
        Only files whose absolute path starts with this prefix.
    glob
        Only files matching this pattern (case-sensitive). Without `/` it matches the file
        name: `*.md`, `test_*.py`, `[!t]*`, `*.{md,rst}`. With `/` it matches whole path
        segments at the end of the absolute path: `docs/*.md` takes `/x/docs/a.md`, not
        `/x/docs/sub/a.md`; a leading `/` anchors it at the root. `*`, `?` and `[...]` never
        match `/`; `**` matches any number of directories (`docs/**/*.md`); `{a,b}` lists
        alternatives; `\\` makes the next character literal. A malformed pattern (unclosed
        `[` or `{`, empty) is an error (exit 2).
    limit
        Maximum number of hits (default: knowledgebase.search.default_limit, 20).
    mode
        keyword (BM25), semantic (nearest vectors) or hybrid (both, fused); default:
        knowledgebase.retriever.mode, which is hybrid when an embedder is configured.
    envelope
        Print {"mode", "semantic_status", "fusion", "reranker", "notes", "scope", "result_set",
        "offset", "total", "cursor", "hits": [...]} instead of the bare list of hits.
    offset
        Skip this many hits of the ranked list (0-based; --offset 20 --limit 20 is the second page).
    cursor
        Print the page a cursor names (SET@OFFSET, the `cursor` of an earlier page), without
        searching again; the same as `more CURSOR`. No query is given with it.
    root
        Only the files of the root of this name (`roots list`); repeat for several roots.
        Never widened. An unknown name is an error (exit 2) listing the names. Default: the
        root the working directory is in (the deepest; a linked git worktree counts as its
        main repository's root), then every root if that one has no hit at all; outside every
        root, every root. The envelope's `scope` says which.
    all_
        Every root, wherever the working directory is (not with --root).
    """
    text = " ".join(query)
    with _workspace() as ws:
        if cursor is not None:
            if text.strip() or offset is not None:
                raise UsageError("--cursor names a page of an earlier search: give no query and no --offset with it",
                                 hint="hermes-workspace search --cursor 5e0c17aa@20")
            hits = ws.more(cursor, limit=_whole_number("--limit", limit))
        else:
            hits = ws.search(text, path=path, glob=glob, limit=_whole_number("--limit", limit), mode=mode,
                             offset=_whole_number("--offset", offset, 0), roots=root, all_roots=all_,
                             cwd=_cwd())
    if hits.notes and not envelope and not _options.human:  # --human prints them with the hits
        from hermes_workspace.logs import get_logger

        # A search that did not run as asked (keyword instead of hybrid, vectors missing) is a
        # warning on stderr; other notes (how a CJK query matched, hits moved by the per-file
        # cap) explain a normal result: logged at info, and always in --envelope.
        degraded = hits.mode != hits.requested_mode or hits.semantic_status in ("partial", "indexing", "unavailable")
        log = get_logger("hermes_workspace.search")
        for note in hits.notes:
            (log.warning if degraded else log.info)(note, semantic_status=hits.semantic_status)
    data: Any = hits.envelope() if envelope else [h.to_json() for h in hits]
    return _Output(data, lambda con: _human_hits(con, hits))


@app.command(name="retrieve")
def retrieve_command(
    *query: str,
    budget: str | None = None,
    max_chunks: str | None = None,
    path: str | None = None,
    glob: str | None = None,
    mode: Literal["keyword", "semantic", "hybrid"] | None = None,
    root: Annotated[list[str] | None, Parameter(negative="")] = None,
    all_: Annotated[bool, Parameter(name="--all", negative="")] = False,
) -> _Output:
    """The best evidence for a question, packed into a token budget, for an agent's context.

    Prints one compact JSON object (blocks of text with paths, exact line ranges and handles,
    what was left out, a cursor for the next pack) whose o200k_base token count, as printed, is
    at most the budget; with --human, the framed text to paste into a prompt (also within the
    budget), then one line saying each searched root's coverage. Workspace text is framed as
    untrusted data, never instructions.

    Parameters
    ----------
    query
        The question or words to look for; several arguments are joined with spaces.
    budget
        Most tokens of the whole output (o200k_base); default knowledgebase.injection.max_tokens (3200).
    max_chunks
        Most blocks; default knowledgebase.injection.max_chunks (6).
    path
        Only files whose absolute path starts with this prefix.
    glob
        Only files matching this pattern, as for search.
    mode
        keyword, semantic or hybrid, as for search.
    root
        Only the files of the root of this name, as for search; repeatable.
    all_
        Every root, wherever the working directory is, as for search.
    """
    text = " ".join(query)
    with _workspace() as ws:
        pack = ws.retrieve(
            text, budget=_whole_number("--budget", budget), max_chunks=_whole_number("--max-chunks", max_chunks),
            path=path, glob=glob, mode=mode, roots=root, all_roots=all_, cwd=_cwd(),
        )
    return _Output(pack.to_json(), lambda con: _human_pack(con, pack), raw=pack.serialize())


@history_app.command(name="search")
def history_search_command(
    *query: str,
    mode: Literal["hybrid", "keyword", "semantic"] = "hybrid",
    session: str | None = None,
    project: str | None = None,
    cwd: str | None = None,
    limit: str | None = None,
    context: str | None = None,
    max_tokens: str | None = None,
) -> _Output:
    """Search the project's earlier sessions (knowledgebase.history): which project is the
    conversation's, from --session or --project (one of them), else --cwd or the working directory.

    Prints seed 003's response object: project, results (session_id, @session link, title,
    message_id, snippet, score_source, when, neighbouring messages), sessions_in_scope,
    semantic_status. From a folder in no project (no registered project folder, no git
    repository) nothing is searched and the reason is given. The host's database is only read.

    Parameters
    ----------
    query
        Words or a question; several arguments are joined with spaces.
    mode
        hybrid (keywords and meaning, fused), keyword (exact words, symbols, error codes) or
        semantic (the same question in other words).
    session
        The conversation's session id in the host: its project is searched (not with --project).
    project
        A project id or name of the host's registry, or git:<folder> for a repository (the folder
        holding .git).
    cwd
        Search the project of this folder instead of the working directory (not with --session or
        --project).
    limit
        Most hits (default knowledgebase.history.limit, 10).
    context
        Neighbouring messages shown on each side of a hit (default 2).
    max_tokens
        Most tokens of the whole response (o200k_base; default knowledgebase.history.max_tokens, 3200).
    """
    text = " ".join(query)
    given = [flag for flag, value in (("--session", session), ("--project", project), ("--cwd", cwd))
             if value is not None]
    if len(given) > 1:
        # Each names the project to search: refused rather than all but one silently ignored.
        raise UsageError(f"{' and '.join(given)} cannot be used together",
                         hint="--session searches the conversation's own project, --project a named one, --cwd "
                              "the project of a folder (default: the working directory's); give one.")
    with _workspace() as ws:
        result = ws.history_search(
            text, mode=mode, session_id=session, project=project, cwd=cwd if cwd is not None else (_cwd() or "/"),
            limit=_whole_number("--limit", limit), context=_whole_number("--context", context),
            max_tokens=_whole_number("--max-tokens", max_tokens),
        )
    # Printed as counted: the budget holds for exactly this text (compact JSON, as `retrieve`).
    return _Output(result.to_json(), lambda con: _human_history(con, result), raw=result.serialize())


@history_app.command(name="index")
def history_index_command(*, full: bool = False) -> _Output:
    """Pick up the host's new messages now and embed what the user allows (searches do the
    first part themselves); with a remote embedder only projects with a recorded consent.

    Parameters
    ----------
    full
        Re-read every session (finds an edit that kept a message's length).
    """
    with _workspace() as ws:
        report = ws.history_index(full=full)
    if report.get("error"):
        from hermes_workspace.logs import get_logger

        # As `index`: the keyword index is up to date (exit 0); the embedding failure is a warning.
        get_logger("hermes_workspace.history").warning(
            f"embedding stopped: {report['error']['message']}", hint=report["error"].get("hint"))

    def human(con: Any) -> None:
        sync = report["sync"]
        con.print(f"sessions read: {sync['sessions']}, removed: {sync['removed']}, messages: {sync['messages']}, "
                  f"parts: {sync['chunks']} ({sync['seconds']} s)", markup=False)
        con.print(f"embedded: {report['embedded']}, pending: {report['pending']}, "
                  f"semantic_status: {report['semantic_status']}", markup=False)
        if report["skipped_for_consent"]:
            con.print(f"{report['skipped_for_consent']} sessions wait for a consent (history consent --grant)",
                      markup=False)

    return _Output(report, human)


@history_app.command(name="status")
def history_status_command() -> _Output:
    """The host store read, our index of it (counts), the embedder and the recorded consents."""
    with _workspace() as ws:
        data = ws.history_status()

    def human(con: Any) -> None:
        for key in ("database", "index", "embedder", "remote_service"):
            con.print(_safe(f"{key}: {data[key] if data[key] is not None else 'none'}"), markup=False)
        con.print("indexed: " + ", ".join(f"{k} {v}" for k, v in data["counts"].items()), markup=False)
        host = data["host"]
        con.print(f"host: {host['projects']} projects, {host['sessions']} sessions, {host['messages']} messages "
                  "of the indexed roles", markup=False)
        for consent in data["consents"]:
            con.print(_safe(f"consent: {consent['project']} -> {consent['service']} ({consent['granted_at']})"),
                      markup=False)
        for note in data["notes"]:
            con.print(_safe(f"note: {note}"), markup=False)

    return _Output(data, human)


@history_app.command(name="consent")
def history_consent_command(
    *, project: str, grant: bool = False, revoke: bool = False, service: str | None = None,
) -> _Output:
    """Record or withdraw the user's consent to send a project's history to the remote embedding
    service. Without it nothing is sent and searches are keyword-only for that project.

    Parameters
    ----------
    project
        The project id as history search reports it (project.id), or git:<folder>; with
        --revoke, * for every project.
    grant
        Record the consent.
    revoke
        Forget it.
    service
        The service's base URL (default: knowledgebase.embedder.base_url).
    """
    if grant == revoke:
        raise UsageError("say --grant or --revoke", hint="hermes-workspace history consent --grant --project p_abc")
    with _workspace() as ws:
        data = ws.history_consent(project, service=service, revoke=revoke)
    verb = "granted" if data["granted"] else f"revoked ({data.get('revoked', 0)})"
    return _Output(data, lambda con: con.print(f"{verb}: {data['project']} -> {data['service']}", markup=False))


def _human_history(console: Any, result: Any) -> None:
    data = result.to_json()
    project = data["project"]
    console.print(_safe(f"project: {project['name'] or '-'} ({project['kind']}, {project['id'] or project.get('reason')}); "
                        f"{data['sessions_in_scope']} sessions; mode {data['mode']}; "
                        f"semantic {data['semantic_status']}"), markup=False)
    if data.get("message"):
        console.print(_safe(data["message"]), markup=False)
    for hit in data["results"]:
        console.print()  # a blank line between hits; inside _safe its line feed would show as \x0a
        console.print(_safe(f"{hit['link']}  #{hit['message_id']} {hit['role']}  {hit['when'] or ''}  "
                            f"[{hit['score_source']}]  {hit['title'] or ''}"), markup=False, highlight=False)
        for side, marker in (("before", "  ^ "), ("after", "  v ")):
            if side == "after":
                for line in hit["snippet"].splitlines() or [""]:
                    console.print(_safe("  " + line), markup=False, highlight=False)
            for near in hit["context"][side]:
                text = " ".join(near["text"].split())
                console.print(_safe(f"{marker}#{near['message_id']} {near['role']}: {text[:160]}"), markup=False,
                              highlight=False)
    for note in data["notes"]:
        console.print(_safe(f"note: {note}"), markup=False)


def _cwd() -> str | None:
    """The working directory search and retrieve scope from; ``None`` (every root) when it is
    gone (deleted while the shell sat in it)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def _human_pack(console: Any, pack: Any) -> None:
    # The framed text as is (it is what goes into a prompt); control characters stay escaped.
    if pack.text:
        console.print(_CONTROL.sub(lambda m: "\n" if m.group() == "\n" else f"\\x{ord(m.group()):02x}",
                                   display_name(pack.text)), markup=False, highlight=False)
    else:
        for note in pack.notes:
            console.print(_safe(f"note: {note}"), style="dim", markup=False)
        if not pack.notes:
            console.print("Nothing retrieved.")
    # After the framed text (which alone is within the budget): which roots could not be searched whole.
    line = coverage_line((getattr(pack, "scope", None) or {}).get("coverage") or ())
    if line:
        console.print(_safe(line), style="dim", markup=False)



@app.command(name="more")
def more_command(cursor: str, /, *, limit: str | None = None) -> _Output:
    """Print the next page of an earlier search (or retrieve), without searching again.

    Parameters
    ----------
    cursor
        The `cursor` of the previous page (SET@OFFSET, e.g. 5e0c17aa@20).
    limit
        Hits in this page (default: the page size of the search that made the set).
    """
    with _workspace() as ws:
        page = ws.more(cursor, limit=_whole_number("--limit", limit))
    if isinstance(page, SearchResults):
        return _Output(page.envelope(), lambda con: _human_hits(con, page))
    return _Output(page.to_json(), lambda con: _human_pack(con, page), raw=page.serialize())  # the budget holds as printed


@app.command(name="read")
def read_command(target: str, /, *, budget: str | None = None) -> _Output:
    """Print lines of an indexed file, verified against the file on disk, as one compact JSON
    object of at most --budget o200k_base tokens.

    Status verified: the text is the indexed text. moved: the file changed and the indexed text is
    now, once, at other lines (moved_from has the old ones). stale: the file changed and the text
    cannot be found exactly once: no text is printed, search again. deleted: the file is gone.
    Text longer than the budget keeps its leading whole lines: truncated is true, full_line_end
    the last line of the whole, next the locator of the rest (a line longer than the budget is
    cut: line_chars_returned).

    Parameters
    ----------
    target
        A handle printed with a hit (5e0c17aa:3), or an indexed file and 1-based lines:
        /path/file.py:12-30 or /path/file.py:12.
    budget
        Most tokens of the whole output (o200k_base); default knowledgebase.injection.read_max_tokens (8000).
    """
    with _workspace() as ws:
        result = ws.read(target, budget=_whole_number("--budget", budget))
    return _Output(result.to_json(), lambda con: _human_read(con, result), raw=result.serialize())


def _human_read(console: Any, result: Any) -> None:
    where = f"{result.path}:{result.line_start}-{result.line_end}"
    console.print(_safe(f"{result.status}: {where}  ({result.message})"), markup=False)
    if result.text is not None:
        for line in result.text.split("\n"):
            console.print(f"    {_safe(line)}", markup=False)
    if result.truncated:
        rest = f"; next: {result.next}" if result.next else ""
        console.print(_safe(f"    … truncated at line {result.line_end} of {result.full_line_end}{rest}"),
                      style="dim", markup=False)


@app.command(name="status")
def status_command() -> _Output:
    """Show the index location, its files, chunks and size on disk, when it was last indexed, the
    last run's exclusions and skipped files, an estimate of the files changed since (a small
    stat-only sample), and what semantic search can do."""
    with _workspace() as ws:
        data = ws.status_report()
    return _Output(data, lambda con: _human_status(con, data))


# -- catalog (issue 10): list, delete, doctor ------------------------------------------------------------


@app.command(name="list")
def list_command(
    path: str | None = None, /, *, recursive: bool = True, limit: str | None = None, offset: str | None = None
) -> _Output:
    """List the indexed files with their hash, size, times and chunk count, sorted by path.

    Parameters
    ----------
    path
        A folder (its files) or one file; default: every indexed file. Relative to the current folder.
    recursive
        Files in sub-folders too (default), or only those directly in the folder (--no-recursive).
    limit
        Files per page, 1 to 1000 (default 100).
    offset
        Files to skip (0-based); the answer's next_offset is the next page's.
    """
    with _workspace() as ws:
        listing = ws.list_files(path, recursive=recursive, limit=_whole_number("--limit", limit, 100),
                                offset=_whole_number("--offset", offset, 0))
    return _Output(listing.to_json(), lambda con: _human_listing(con, listing))


@app.command(name="delete")
def delete_command(path: str, /) -> _Output:
    """Remove a file, or every indexed file under a folder, from the index (never from disk).

    They stay out of later `index` runs until their content changes, or until `roots add` is run
    for a folder that holds them.

    Parameters
    ----------
    path
        An indexed file or a folder holding indexed files. Relative to the current folder.
    """
    with _workspace() as ws:
        result = ws.delete(path)
    return _Output(result.to_json(), lambda con: con.print(_safe(result.message), markup=False))


@app.command(name="doctor")
def doctor_command() -> _Output:
    """Check the index without changing it: SQLite and FTS5 integrity, schema version, vectors,
    tokenizer file, index lock, and drift between the index and the disk (a sample of 200 files).

    Exit 0 when every check passed or could not be done (incomplete), 1 when one failed.
    """
    with _workspace() as ws:
        report = ws.doctor()
    return _Output(report.to_json(), lambda con: _human_doctor(con, report), exit_code=report.exit_code)



@app.command(name="plugins")
def plugins_command() -> _Output:
    """List the installed plugins (chunkers, converters, embedders, rerankers, stores, sources):
    version, package, target, whether each is active and for which file kinds, broken ones with
    their error, and the signature of the selection against the one the index was built with."""
    with _workspace() as ws:
        listing = ws.plugins()
    data = listing.to_json()
    return _Output(data, lambda con: _human_plugins(con, data))


def _human_plugins(console: Any, data: dict[str, Any]) -> None:
    for p in data["plugins"]:
        state = "active" + (f" ({', '.join(p['used_for'])})" if p["used_for"] else "") if p["active"] else p["status"]
        origin = "builtin" if p["builtin"] else f"{p['distribution'] or '?'} {p['version'] or ''}".strip()
        line = f"{p['category']:<10} {p['name']:<22} {state:<28} {origin}"
        if p["error"]:
            line += f"  [{p['error']}]"
        console.print(_safe(line), markup=False)
    if data["indexed_signature"] is not None:
        console.print("index built with these plugins" if data["up_to_date"]
                      else "index built with other plugins: `index` re-does what they change", markup=False)
    for note in data["notes"]:
        console.print(_safe(f"note: {note}"), markup=False)


def _human_listing(console: Any, listing: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None)
    table.add_column("path", overflow="fold")
    table.add_column("size", justify="right")
    table.add_column("chunks", justify="right")
    table.add_column("modified")
    table.add_column("sha256")
    for r in listing.files:
        table.add_row(Text(_safe(r.path)), str(r.size), str(r.chunk_count), r.modified_at, r.content_hash[:12])
    console.print(table)
    shown = f"{listing.offset + 1}-{listing.offset + len(listing.files)}" if listing.files else "none"
    more = f"; next: --offset {listing.next_offset}" if listing.next_offset is not None else ""
    console.print(f"{shown} of {listing.total} files{more}", markup=False)


def _human_doctor(console: Any, report: Any) -> None:
    marks = {"passed": "ok  ", "failed": "FAIL", "incomplete": "--  "}
    for check in report.checks:
        console.print(_safe(f"{marks[check.status]} {check.name}: {check.detail}"), markup=False)
    console.print("all checks passed or could not run" if report.ok else "some checks failed", markup=False)


@app.command(name="mcp")
def mcp_command(
    *, http: bool = False, host: str | None = None, port: int | None = None, allow_write: bool = False,
    watch: bool = False,
) -> int:
    """Serve the workspace to AI agents over the Model Context Protocol (needs the mcp extra).

    Tools: search, retrieve, read, more, status, list, doctor; index and delete with --allow-write.

    Parameters
    ----------
    http
        Streamable HTTP on http://HOST:PORT/mcp instead of stdio (stdio: the server ends when
        its standard input ends).
    host
        Loopback address to listen on with --http: 127.0.0.1 (default), ::1 or localhost; any
        other is refused (the server has no authentication).
    port
        TCP port with --http (default 8765; 0: any free port, announced on stderr). A port in
        use is a usage error (exit 2).
    allow_write
        Also serve the tools that change the index (index, delete). Files are never changed.
    watch
        Keep the index fresh while the server runs, as `watch` does, on a thread of the server
        (runs are logged to the log file; tool calls never wait for it).

    Errors of this command, from startup to SIGTERM, go to stderr (one JSON line, or the
    --human message): stdout carries the protocol only.
    """
    from hermes_workspace.entrypoints.mcp_server import DEFAULT_PORT, serve

    if not http:
        given = [name for name, value in (("--host", host), ("--port", port)) if value is not None]
        if given:
            raise UsageError(f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} only with --http "
                             "(the default transport is stdio)",
                             hint="Add --http to serve streamable HTTP, or leave them out for stdio.")
    return serve(_options.home, config=_options.config, http=http, host=host or "127.0.0.1",
                 port=DEFAULT_PORT if port is None else port, allow_write=allow_write,
                 keep_stdout_claimed=_options.owns_stdout, watch=watch)


def _storage_line(storage: dict[str, Any]) -> str:
    """``status --human``'s line on knowledgebase.storage: size against the budget, free space
    against the floor (binary units, as config.yaml writes them)."""
    from hermes_workspace.domain.sizes import format_size

    size, budget = storage["size_bytes"], storage["max_size_bytes"]
    line = f"storage: {format_size(size)} of " + (f"{format_size(budget)} (max_size)" if budget else "no size limit")
    free, floor = storage["free_disk_bytes"], storage["min_free_disk_bytes"]
    if free is not None:
        line += f"; {format_size(free)} free on disk"
        line += f", index writes stop below {format_size(floor)} (min_free_disk)" if floor else ""
    return line


def _human_status(console: Any, data: dict[str, Any]) -> None:
    if data.get("config"):
        console.print(_safe(f"config: {data['config']['path']} ({data['config']['found']})"), markup=False)
    console.print(
        _safe(f"{data['index_path']}: {data['files']} files, {data['chunks']} chunks, {data['size_bytes'] / 1e6:.1f} MB"),
        markup=False,
    )
    if data.get("last_indexed_at"):
        console.print(f"last indexed: {data['last_indexed_at']}", markup=False)
    if storage := data.get("storage"):
        console.print(_storage_line(storage), markup=False)
    stale = data.get("stale_estimate")
    if stale and stale["sampled"]:
        console.print(f"changed on disk since (estimate from {stale['sampled']} files, stat only): "
                      f"about {stale['estimated_stale']} of {stale['total']}", markup=False)
    if data.get("skipped_last_run"):
        counts = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in data["skipped_last_run"].items())
        console.print(f"skipped by the last run: {counts}", markup=False)
    if data.get("note"):
        console.print(_safe(f"note: {data['note']}"), markup=False)
    if data["excluded"]:
        counts = ", ".join(f"{count} {category.replace('_', ' ')}" for category, count in data["excluded"].items())
        console.print(f"never indexed (always excluded): {counts}", markup=False)
    line = coverage_line(data.get("roots") or ())
    if line:
        console.print(_safe(line), markup=False)
    semantic = data["semantic"]
    line = f"semantic: {semantic['status']} (provider {semantic['provider']}"
    if semantic["model"]:
        line += f", model {semantic['model']}"
    line += f"; default mode {semantic['default_mode']})"
    vectors = semantic["vectors"]
    if vectors:
        line += (f"; {vectors['embedded']} of {vectors['chunks']} chunks embedded, {vectors['pending']} pending, "
                 f"{vectors['unreadable']} outside the model's languages")
    console.print(_safe(line), markup=False)
    if semantic["note"]:
        console.print(_safe(f"note: {semantic['note']}"), markup=False)
    for note in data.get("plugins", {}).get("notes", []):
        console.print(_safe(f"plugin: {note}"), markup=False)


@app.meta.default
def launcher(
    *tokens: Annotated[str, Parameter(show=False, allow_leading_hyphen=True)],
    human: bool = False,
    home: str | None = None,
    config: str | None = None,
    log_level: LogLevel = "warning",
    quiet: bool = False,
) -> int:
    """Global options go before the subcommand: `hermes-workspace --human search deploy`.

    Parameters
    ----------
    human
        Rich, human-readable output instead of JSON.
    home
        Hermes home (config.yaml, logs, default workspace); default $HERMES_HOME or ~/.hermes.
    config
        The config file to use; default $HERMES_WORKSPACE_CONFIG, else the nearest
        .hermes-workspace.yaml in the working directory or above it, else HERMES_HOME/config.yaml.
    log_level
        Console log level on stderr; the log file under HERMES_HOME/logs gets INFO and above.
    quiet
        No progress bar.
    """
    from hermes_workspace.container import resolve_home
    from hermes_workspace.entrypoints.logging_setup import configure_cli_logging

    _options.human, _options.home, _options.config, _options.quiet = human, home, config, quiet
    _options.errors_on_stderr = _serves_a_protocol(tokens)
    try:
        resolved_home = resolve_home(home)
    except WorkspaceError as exc:
        return _emit_error(exc)
    # --quiet also quiets per-file warnings (they are in the summary), unless a level is asked for.
    configure_cli_logging("error" if quiet and log_level == "warning" else log_level,
                          resolved_home / "logs" / "workspace.log")
    try:
        with _stdout_kept_for_the_result(tokens):
            result = app(tokens, exit_on_error=False, print_error=False)
    except CycloptsError as exc:
        return _emit_error(_usage_error(exc))
    except WorkspaceError as exc:
        return _emit_error(exc)
    except Terminated as stop:
        return _emit_error(_terminated(stop.signum), 128 + stop.signum)
    except KeyboardInterrupt:
        return _emit_error(_interrupted(), 130)
    except Exception as exc:  # a bug: log the traceback, show a clean error
        from hermes_workspace.logs import get_logger

        get_logger("hermes_workspace.cli").error("unexpected error", exc_info=exc)
        error = WorkspaceError(
            f"unexpected {type(exc).__name__}: {exc}",
            hint=f"This is a bug; the traceback is in {resolved_home / 'logs' / 'workspace.log'}.",
        )
        error.code = "internal_error"
        return _emit_error(error, 70)
    if isinstance(result, _Output):
        _render(result)
        return result.exit_code
    return result if isinstance(result, int) else 0


_HELP_FLAGS = frozenset({"--help", "-h", "--version"})


@contextmanager
def _stdout_kept_for_the_result(tokens: tuple[str, ...] | list[str]) -> Iterator[None]:
    """While a command runs, whatever else writes to stdout (a plugin's ``print``, a library's
    banner) goes to stderr, so that stdout carries only the result :func:`_render` writes
    afterwards (or the error): a user trial found a plugin's ``print`` before the JSON of
    ``status``. ``sys.stdout`` is redirected, and, when the process runs the CLI (:func:`main`)
    and ``sys.stdout`` writes file descriptor 1, so is descriptor 1 (C-level writes, and the
    worker processes, which inherit it). Not for ``mcp`` (it claims stdout for the protocol
    itself: :func:`~hermes_workspace.entrypoints.mcp_server.serve`) nor for help and version
    text (cyclopts prints it while "running" the command)."""
    if _serves_a_protocol(tokens) or _HELP_FLAGS.intersection(tokens[: _options_end(tokens)]):
        yield
        return
    if _options.result_stream is not None:  # already diverted (a second command in one process)
        with contextlib.redirect_stdout(sys.stderr if sys.stderr is not None else io.StringIO()):
            yield
        return
    saved = _divert_descriptor_1() if _options.owns_stdout else None
    if saved is not None:
        # Descriptor 1 stays on stderr until the process ends, and the result goes to the real
        # stdout through a stream of its own: a plugin's exit handler or background thread,
        # which runs after the command, cannot write there either (a third trial's `atexit`
        # print corrupted the JSON of every command that loaded the plugin).
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        _options.result_stream = io.TextIOWrapper(
            os.fdopen(saved, "wb", closefd=False), encoding=encoding, errors="backslashreplace", newline=None,
        )
    with contextlib.redirect_stdout(sys.stderr if sys.stderr is not None else io.StringIO()):
        yield


def _options_end(tokens: tuple[str, ...] | list[str]) -> int:
    return tokens.index("--") if "--" in tokens else len(tokens)


def _divert_descriptor_1() -> int | None:
    """Point descriptor 1 at stderr's; the duplicate of the old one to restore, or ``None`` when
    ``sys.stdout`` is not descriptor 1 (a test's capture, an embedding host) or it cannot be done."""
    try:
        if sys.stdout is None or sys.stderr is None or sys.stdout.fileno() != 1 or sys.stderr.fileno() != 2:
            return None
        sys.stdout.flush()
        saved = os.dup(1)
    except (AttributeError, OSError, ValueError):
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        return None
    return saved


def _render(output: _Output) -> None:
    out = _result_stream()
    if _options.human:
        # No emoji codes: a file named `:fire:.md` is shown as written.
        output.human(_human_console())
    elif output.raw is not None:
        out.write(output.raw + "\n")
        out.flush()
    else:
        out.write(escape_json_surrogates(json.dumps(output.data, ensure_ascii=False, indent=2)) + "\n")
        out.flush()


def _result_stream() -> Any:
    """The stream results are written to: the real stdout (see :attr:`_Options.result_stream`)."""
    return _options.result_stream if _options.result_stream is not None else sys.stdout


def _human_console() -> Any:
    """The Rich console of ``--human`` output. A closed pipe (``| head -1``) raises
    ``BrokenPipeError``, so that :func:`main` ends with exit 74 as in JSON mode; Rich's own
    reaction is ``SystemExit(1)`` without a word."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "the output pipe was closed")

    return _Console(file=_options.result_stream, soft_wrap=True, highlight=False, emoji=False)


def _emit_error(error: WorkspaceError, exit_code: int | None = None) -> int:
    """Report ``error`` and return the exit code: with ``--human`` a short message on stderr; in JSON
    mode the error object on stdout, or, for a command whose stdout is a protocol channel
    (``mcp``: only JSON-RPC may go there, a client would see just "connection closed"), the same
    object on one line of stderr."""
    if _options.human:
        message = f"error: {_safe(error.message)}"
        if error.hint:
            message += f"\nhint: {_safe(error.hint)}"
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    elif _options.errors_on_stderr:
        sys.stderr.write(escape_json_surrogates(json.dumps({"error": error.to_json()}, ensure_ascii=False)) + "\n")
        sys.stderr.flush()
    else:
        out = _result_stream()
        out.write(escape_json_surrogates(json.dumps({"error": error.to_json()}, ensure_ascii=False)) + "\n")
        out.flush()
    return exit_code if exit_code is not None else error.exit_code


_PROTOCOL_COMMANDS = frozenset({"mcp"})
"""Commands whose stdout carries a protocol (JSON-RPC): nothing else may be written there."""
_GLOBAL_OPTIONS_WITH_VALUE = frozenset({"--home", "--config", "--log-level"})


def _serves_a_protocol(tokens: list[str] | tuple[str, ...]) -> bool:
    """Whether the command in ``tokens`` (global options first, as the launcher takes them) is one
    of :data:`_PROTOCOL_COMMANDS`. Decided on the raw tokens, so that it holds for errors found
    before or while parsing them."""
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token == "--":
            return False
        elif token.startswith("-"):
            skip = token in _GLOBAL_OPTIONS_WITH_VALUE
        else:
            return token in _PROTOCOL_COMMANDS
    return False


def _stopped(code: str, message: str) -> WorkspaceError:
    """The error of a command stopped from outside (Ctrl-C, SIGTERM): what was finished stays."""
    error = WorkspaceError(
        message,
        hint="Nothing half-written is kept; files indexed and vectors computed so far stay. Run the command "
        "again to finish.",
    )
    error.code = code
    return error


def _interrupted() -> WorkspaceError:
    return _stopped("interrupted", "interrupted")


class Terminated(KeyboardInterrupt):  # noqa: N818 - named like KeyboardInterrupt, its base
    """Raised in the main thread by the SIGTERM (or SIGHUP) handler of :func:`main`. A
    ``KeyboardInterrupt``, so that every layer stops on it exactly as on Ctrl-C (the open batch of
    files is committed, the worker processes are terminated), and the CLI reports ``terminated``,
    exit 128 + ``signum`` (143 for SIGTERM, 129 for SIGHUP: the terminal was closed)."""

    def __init__(self, signum: int = 15) -> None:
        super().__init__()
        self.signum = signum


def _terminated(signum: int = 15) -> WorkspaceError:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    return _stopped("terminated", f"terminated ({name})")


_STOP_SIGNALS = ("SIGTERM", "SIGHUP")
"""Signals that stop a command like Ctrl-C: a service manager's stop, and a closed terminal."""


def _raise_terminated(signum: int, frame: object) -> None:
    # Once: a second signal while the run stops takes the default action (the process ends at
    # once; its worker processes still end, see adapters/process_pool.py).
    signal.signal(signum, signal.SIG_DFL)
    raise Terminated(signum)


@contextmanager
def _sigterm_stops_the_command() -> Iterator[None]:
    """SIGTERM and SIGHUP (:data:`_STOP_SIGNALS`) raise :class:`Terminated` in the main thread
    while the block runs; the previous handlers are restored afterwards. Nothing is installed
    outside the main thread (Python allows signal handlers there only), for a signal the platform
    lacks, or for one that is ignored (``nohup`` ignores SIGHUP; Python itself leaves an ignored
    SIGINT alone)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}
    for name in _STOP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _usage_error(exc: CycloptsError) -> UsageError:
    return UsageError(
        _cyclopts_message(exc),
        hint="Run with --help to see the accepted options; to search for text that starts with '-', "
        "put it after --: hermes-workspace search -- -text",
    )


def _whole_number(option: str, value: str | None, default: int | None = None) -> int | None:
    """``value`` (an option's text) as an int, ``default`` when the option was not given.
    Raises UsageError naming ``option`` when it is not a whole number."""
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise UsageError(f"{option} must be a whole number, got {value!r}") from None



def _cyclopts_message(exc: CycloptsError) -> str:
    text = str(exc).strip()
    return " ".join(text.split()) or type(exc).__name__


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _safe(text: object) -> str:
    """``text`` on one line with control characters (a line feed included) shown as ``\\xNN``:
    file names and contents must not send escape sequences to the user's terminal, nor break
    the one-line-per-hit layout."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", display_name(str(text)))


def _human_roots(console: Any, roots: list[Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None)
    table.add_column("name", overflow="fold")
    table.add_column("path", overflow="fold")  # a path cut with an ellipsis cannot be copied
    table.add_column("recursive")
    table.add_column("primary")
    for r in roots:
        table.add_row(Text(_safe(r.name)), Text(_safe(r.path)), "yes" if r.recursive else "no",
                      "yes" if r.primary else "")
    console.print(table)


def _human_summary(console: Any, summary: Any) -> None:
    console.print(
        f"Indexed {summary.files_indexed} files ({summary.chunks_created} chunks), "
        f"skipped {summary.files_skipped}, pruned {summary.files_pruned}, "
        f"errors {summary.files_errored} in {summary.duration_seconds:.1f}s"
    )
    if summary.excluded:
        counts = ", ".join(f"{count} {category.replace('_', ' ')}" for category, count in sorted(summary.excluded.items()))
        console.print(f"Never indexed (always excluded): {counts}", markup=False)
    for note in getattr(summary, "notes", ()):
        console.print(_safe(f"Note: {note}"), markup=False)
    if summary.errors:
        console.print("\nErrors:")
        for e in summary.errors:
            console.print(_safe(f"  [{e.stage}] {e.path}: {e.error_type}: {e.message}"), markup=False)
        if summary.errors_truncated:
            console.print(f"  ... and {summary.files_errored - len(summary.errors)} more (see the log file)")
    semantic = summary.semantic
    if semantic is not None:
        console.print(
            f"Vectors: {semantic.status}; {semantic.embedded} chunks embedded, {semantic.reused} reused, "
            f"{semantic.unreadable} outside the model's languages, {semantic.pending} pending "
            f"in {semantic.seconds:.1f}s" + (" (model changed: all re-embedded)" if semantic.reembedded else ""),
            markup=False,
        )


def _scope_line(scope: dict[str, Any]) -> str:
    """The line --human prints when the working directory chose the roots (``""``: none):
    a search limited to the home root, or widened from it, must not look like a search of all."""
    home = scope.get("home")
    if not home:
        return ""
    if scope.get("widened"):
        return f"nothing in root {home} (the working directory's): every root searched"
    return f"root {home} only (the working directory's; --all searches every root)"


def _human_hits(console: Any, hits: Any) -> None:
    mode = getattr(hits, "mode", "keyword")
    if mode != "keyword" or getattr(hits, "requested_mode", mode) != mode:
        console.print(f"[dim]{mode} search (asked: {hits.requested_mode}; semantic: {hits.semantic_status})[/dim]")
    scope = getattr(hits, "scope", None) or {}
    scope_line = _scope_line(scope)
    if scope_line:
        console.print(_safe(scope_line), style="dim", markup=False)
    for note in getattr(hits, "notes", ()):
        console.print(_safe(f"note: {note}"), style="dim", markup=False)
    from rich.markup import escape

    if not hits:
        console.print("No results.")
    # Numbered by rank in the whole result (a page from --offset 3 starts at 4; a hit's handle
    # holds its rank), each with the handle that reads it.
    for i, hit in enumerate(hits, start=(getattr(hits, "offset", 0) or 0) + 1):
        handle = getattr(hit, "handle", None)
        number = int(handle.rsplit(":", 1)[1]) if handle else i
        # The breadcrumb (qualified name, heading path) says where the hit is better than the
        # section line alone; the section remains for hits without one.
        label = getattr(hit, "breadcrumb", None) or hit.section
        section = f"  {escape(_safe(label))}" if label else ""
        anchor = getattr(hit, "anchor", None)  # a document's page, slide or sheet
        if anchor:
            section = f"  ({escape(_safe(anchor))}){section}"
        found = ""
        if hit.fused_score is not None or hit.semantic_rank is not None:
            ranks = [f"keyword #{hit.keyword_rank}" if hit.keyword_rank else "",
                     f"semantic #{hit.semantic_rank}" if hit.semantic_rank else ""]
            found = " · " + ", ".join(r for r in ranks if r)
        named = f"  [dim]{escape(handle)}[/dim]" if handle else ""
        console.print(f"[bold]{number}. {escape(_safe(hit.path))}:{hit.line_start}-{hit.line_end}[/bold]"
                      f"{section}{named}  [dim](score {hit.score:.3g}{found})[/dim]", markup=True, highlight=False)
        lines = hit.content.split("\n")
        preview = lines[:4]
        for line in preview:
            console.print(f"    {_safe(line[:160])}", markup=False)
        if len(lines) > len(preview):
            console.print(f"    … {len(lines) - len(preview)} more lines", style="dim")
        for copy in getattr(hit, "duplicates", ()):
            console.print(_safe(f"    also: {copy.path}:{copy.line_start}-{copy.line_end}"), style="dim", markup=False)
    if getattr(hits, "cursor", None):
        console.print(f"more: hermes-workspace more {hits.cursor}", style="dim", markup=False, highlight=False)
    # Last: whether each searched root could be searched whole (issue 12's per-root coverage).
    line = coverage_line(scope.get("coverage") or ())
    if line:
        console.print(_safe(line), style="dim", markup=False)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: run the CLI and return its exit code (never raises). Output that
    cannot be written (stdout closed, disk full, a closed pipe) ends the run with exit 74.
    While it runs, SIGTERM and SIGHUP stop the command like Ctrl-C (error ``terminated``, exit 143 or 129)."""
    tokens = sys.argv[1:] if argv is None else argv
    _options.owns_stdout = True
    try:
        with _sigterm_stops_the_command():
            return _main(tokens)
    except Terminated as stop:  # after the command's own handling (its output is written): just the code
        return 128 + stop.signum
    except (OSError, AttributeError, ValueError) as exc:
        if sys.stdout is not None and not _stdout_broken(exc):
            raise
        _silence_stdout()
        if sys.stderr is not None:
            try:
                sys.stderr.write(f"error: cannot write the output: {exc}\n")
            except (OSError, ValueError):
                pass
        return 74


def _stdout_broken(exc: BaseException) -> bool:
    return isinstance(exc, (BrokenPipeError, OSError)) or sys.stdout is None


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    except OSError:
        pass


def _main(tokens: list[str]) -> int:
    _options.errors_on_stderr = _serves_a_protocol(tokens)
    try:
        result = app.meta(tokens, exit_on_error=False, print_error=False)
    except CycloptsError as exc:
        _options.human = "--human" in tokens
        _options.errors_on_stderr = _serves_a_protocol(tokens)
        return _emit_error(_usage_error(exc))
    except Terminated as stop:
        return _emit_error(_terminated(stop.signum), 128 + stop.signum)
    except KeyboardInterrupt:
        return _emit_error(_interrupted(), 130)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
