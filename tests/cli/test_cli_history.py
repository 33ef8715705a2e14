"""``hermes-workspace history search|index|status|consent`` in process (``main([...])``), against
a temporary HERMES_HOME reading the host world of :mod:`tests.history_world` (the host's files
in WAL mode, its connection open). Exact JSON fields (seed 003 section 4.3), error codes and
exit codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace.domain.history import HOME_REASONS
from hermes_workspace.entrypoints.cli import main
from tests.history_world import REMOTE, REMOTE_URL, World, running_host

RESPONSE_FIELDS = ["success", "query", "mode", "project", "results", "sessions_in_scope", "semantic_status",
                   "tokens", "max_tokens", "omitted", "notes", "sync"]
RESULT_FIELDS = ["session_id", "link", "title", "message_id", "role", "snippet", "score_source", "when", "score",
                 "context"]
SYNC_FIELDS = ["sessions", "removed", "messages", "chunks", "rebuilt", "seconds", "failed"]
ERROR_FIELDS = ["code", "message", "hint"]
NO_EMBEDDER_NOTE = "semantic side disabled: keyword results only"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    try:
        data: Any = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        data = out
    return code, data, err


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with running_host(tmp_path / "world") as built:
        yield built


@pytest.fixture
def configured(home: Path, world: World) -> World:
    (home / "config.yaml").write_text(world.config(), encoding="utf-8")
    return world


def index_file(home: Path) -> str:
    files = sorted((home / "history").glob("index-*.sqlite"))
    assert len(files) == 1
    return str(files[0])


# -- search --------------------------------------------------------------------------------------


def test_search_from_inside_a_project_folder_prints_seed_003s_object(
    capsys: pytest.CaptureFixture[str], configured: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, ids = configured, configured.ids
    monkeypatch.chdir(world.alpha / "src")
    code, data, err = run(capsys, "history", "search", "E1042", "duplicate", "symbol")
    assert (code, err) == (0, "")
    assert list(data) == RESPONSE_FIELDS
    assert data["success"] is True and data["query"] == "E1042 duplicate symbol"
    assert data["project"] == {"kind": "explicit", "id": "p_alpha", "name": "Alpha", "folders": [str(world.alpha)]}
    # Asked hybrid; without an embedder the answer is the keyword side, and it says so.
    assert (data["mode"], data["semantic_status"], data["notes"]) == ("keyword", "disabled", [NO_EMBEDDER_NOTE])
    assert (data["sessions_in_scope"], data["max_tokens"], data["omitted"]) == (2, 3200, 0)
    assert 0 < data["tokens"] <= 3200
    assert list(data["sync"]) == SYNC_FIELDS
    assert (data["sync"]["sessions"], data["sync"]["messages"], data["sync"]["rebuilt"]) == (7, 55, True)
    assert [list(hit) for hit in data["results"]] == [RESULT_FIELDS, RESULT_FIELDS]
    assert data["results"][0] == {
        "session_id": "s_alpha_2",
        "link": "@session:s_alpha_2",
        "title": "Parser design",
        "message_id": ids["alpha_e1042"],
        "role": "assistant",
        "snippet": "Yes: one symbol table per module, merged at link time; error E1042 means a duplicate symbol.",
        "score_source": "keyword",
        "when": "2026-06-01 09:00",
        "score": round(1 / 61, 6),  # RRF, rank 1 of the keyword side alone, k = 60
        "context": {
            "before": [{"message_id": ids["alpha_question"], "role": "user", "when": "2026-06-01 09:00",
                        "text": "Should the parser keep a symbol table per module?"}],
            "after": [],
        },
    }
    second = data["results"][1]
    assert (second["message_id"], second["role"], second["score"]) == (ids["alpha_question"], "user", round(1 / 62, 6))
    assert second["context"]["after"][0]["message_id"] == ids["alpha_e1042"]


def test_project_session_cwd_and_mode_choose_the_scope(
    capsys: pytest.CaptureFixture[str], configured: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, ids = configured, configured.ids
    monkeypatch.chdir(world.alpha)
    code, beta, _ = run(capsys, "history", "search", "rollout", "--project", "p_beta", "--mode", "keyword")
    assert code == 0 and beta["project"]["id"] == "p_beta"
    assert (beta["mode"], beta["notes"]) == ("keyword", [])  # keyword asked: nothing to note
    assert [(h["session_id"], h["message_id"]) for h in beta["results"]] == [("s_beta_1", ids["beta_question"])]
    code, by_name, _ = run(capsys, "history", "search", "rollout", "--project", "Beta")
    assert code == 0 and by_name["project"]["id"] == "p_beta"

    code, tool, _ = run(capsys, "history", "search", "E1042", "--session", "s_tool_1", "--mode", "keyword")
    assert code == 0
    assert tool["project"] == {"kind": "auto", "id": world.tool_id, "name": "tool", "folders": [str(world.tool_repo)]}
    assert [(h["session_id"], h["message_id"]) for h in tool["results"]] == [("s_tool_1", ids["tool_e1042"])]

    code, other_cwd, _ = run(capsys, "history", "search", "E1042", "--cwd", str(world.tool_repo / "lib"))
    assert other_cwd["project"]["id"] == world.tool_id

    code, home, _ = run(capsys, "history", "search", "E1042", "--cwd", str(world.scratch))
    assert code == 0 and list(home) == [*RESPONSE_FIELDS[:-1], "message", "sync"]
    assert home["project"] == {"kind": "home", "id": None, "name": None, "folders": [], "reason": "no_project"}
    assert (home["results"], home["sessions_in_scope"], home["message"]) == ([], 0, HOME_REASONS["no_project"])

    code, limited, _ = run(capsys, "history", "search", "E1042", "--project", "p_beta", "--limit", "3",
                           "--context", "0", "--max-tokens", "5000")
    assert code == 0 and len(limited["results"]) == 3 and limited["max_tokens"] == 5000
    assert all(h["context"] == {"before": [], "after": []} for h in limited["results"])


def test_search_human_output(capsys: pytest.CaptureFixture[str], configured: World,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(configured.alpha)
    code, out, _ = run(capsys, "--human", "history", "search", "E1042", "duplicate", "symbol")
    ids = configured.ids
    assert code == 0
    assert out.splitlines() == [
        "project: Alpha (explicit, p_alpha); 2 sessions; mode keyword; semantic disabled",
        "",
        f"@session:s_alpha_2  #{ids['alpha_e1042']} assistant  2026-06-01 09:00  [keyword]  Parser design",
        f"  ^ #{ids['alpha_question']} user: Should the parser keep a symbol table per module?",
        "  Yes: one symbol table per module, merged at link time; error E1042 means a duplicate symbol.",
        "",
        f"@session:s_alpha_2  #{ids['alpha_question']} user  2026-06-01 09:00  [keyword]  Parser design",
        "  Should the parser keep a symbol table per module?",
        f"  v #{ids['alpha_e1042']} assistant: Yes: one symbol table per module, merged at link time; error E1042 "
        "means a duplicate symbol.",
        f"note: {NO_EMBEDDER_NOTE}",
    ]
    code, out, _ = run(capsys, "--human", "history", "search", "E1042", "--cwd", str(configured.scratch))
    assert code == 0
    assert out.splitlines() == ["project: - (home, no_project); 0 sessions; mode keyword; semantic disabled",
                                HOME_REASONS["no_project"], f"note: {NO_EMBEDDER_NOTE}"]


# -- errors ---------------------------------------------------------------------------------------


def test_a_missing_host_store_is_history_unavailable_exit_66(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "state.db"
    (home / "config.yaml").write_text(f"knowledgebase:\n  history:\n    database: {missing}\n", encoding="utf-8")
    for args in (("history", "search", "E1042", "--project", "p_alpha"), ("history", "index"), ("history", "status")):
        code, data, _ = run(capsys, *args)
        assert code == 66, args
        assert list(data) == ["error"] and list(data["error"]) == ERROR_FIELDS
        assert data["error"]["code"] == "history_unavailable"
        assert str(missing) in data["error"]["message"]
    assert not missing.exists() and not missing.parent.exists()  # nothing created on the host's side


@pytest.mark.parametrize(("table", "field"), [("projects", "table"), ("project_folders", "table"),
                                              ("projects", "id"), ("project_folders", "path")])
def test_a_misspelt_registry_name_is_history_unavailable_exit_66(
    capsys: pytest.CaptureFixture[str], home: Path, world: World, table: str, field: str
) -> None:
    """Trial finding: a wrong ``schema.projects.table`` answered Home with 0 results (exit 0) and
    ``history status`` counted 0 projects; every wrong registry name is now exit 66."""
    (home / "config.yaml").write_text(
        world.config() + f"    schema:\n      {table}:\n        {field}: wrongname\n", encoding="utf-8")
    for args in (("history", "search", "E1042", "--cwd", str(world.alpha)), ("history", "status")):
        code, data, _ = run(capsys, *args)
        assert code == 66, args
        assert data["error"]["code"] == "history_unavailable"
        assert "'wrongname'" in data["error"]["message"]
        assert f"knowledgebase.history.schema.{table}.{field}" in data["error"]["hint"]


def test_a_host_without_a_registry_still_searches_its_repositories_and_status_says_so(
    capsys: pytest.CaptureFixture[str], home: Path, world: World
) -> None:
    """Nothing in the config names a registry and the session store keeps none: that host is
    legitimate, searched by git repository, and ``history status`` notes the empty registry."""
    (home / "config.yaml").write_text(f"knowledgebase:\n  history:\n    database: {world.database}\n",
                                      encoding="utf-8")
    code, data, _ = run(capsys, "history", "search", "E1042", "--cwd", str(world.tool_repo))
    assert code == 0 and data["project"]["id"] == world.tool_id and data["results"]
    code, status, _ = run(capsys, "history", "status")
    assert code == 0 and status["host"]["projects"] == 0
    assert status["notes"] == ["the host's project registry is empty or absent: sessions belong to their git "
                               "repository, or to no project"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--project", "nope"), "no project 'nope' in the host's registry"),
        (("--limit", "abc"), "--limit must be a whole number, got 'abc'"),
        (("--limit", "0"), "limit must be between 1 and 100, got 0"),
        (("--limit", "101"), "limit must be between 1 and 100, got 101"),
        (("--context", "21"), "context must be between 0 and 20 messages, got 21"),
        (("--max-tokens", "99"), "max_tokens must be between 100 and 1000000, got 99"),
        (("--session", ""), "session_id is empty"),
        (("--project", " "), "project is empty"),
        (("--project", "git:relative/x"), "git:relative/x does not name a repository folder"),
        # Trial finding: --project was silently ignored beside --session. Each names the project.
        (("--session", "s_beta_1", "--project", "p_alpha"), "--session and --project cannot be used together"),
        (("--project", "p_alpha", "--cwd", "/"), "--project and --cwd cannot be used together"),
        (("--session", "s_beta_1", "--cwd", "/"), "--session and --cwd cannot be used together"),
        (("--session", "s_beta_1", "--project", "p_alpha", "--cwd", "/"),
         "--session and --project and --cwd cannot be used together"),
    ],
)
def test_bad_arguments_are_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], configured: World, monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...], message: str
) -> None:
    monkeypatch.chdir(configured.alpha)
    code, data, _ = run(capsys, "history", "search", "E1042", *args)
    assert code == 2
    assert list(data["error"]) == ERROR_FIELDS
    assert (data["error"]["code"], data["error"]["message"]) == ("usage_error", message)
    if args[:2] == ("--project", "nope"):
        assert data["error"]["hint"] == ("Registered projects: p_alpha (Alpha), p_beta (Beta). "
                                         "A git repository is named git:<folder>.")


def test_a_repository_name_that_is_no_repository_root_is_a_usage_error_with_a_hint(
    capsys: pytest.CaptureFixture[str], configured: World
) -> None:
    """Trial finding: ``--project git:/nonexistent`` answered 0 sessions, the typo unflagged."""
    world = configured
    naming = ("Registered projects: p_alpha (Alpha), p_beta (Beta). A git repository is named git:<its root "
              "folder> (the folder holding .git), as project.id shows it; or leave the project out to search "
              "the project of the working directory.")
    for folder, message in ((world.base / "nonexistent", "names no folder on this machine"),
                            (world.scratch, "names a folder in no git repository"),
                            (world.tool_repo / "lib", f"names a folder inside the repository {world.tool_repo}, "
                                                      "not its root")):
        code, data, _ = run(capsys, "history", "search", "E1042", "--project", f"git:{folder}")
        assert (code, data["error"]["code"]) == (2, "usage_error")
        assert data["error"]["message"] == f"git:{folder} {message}, and the host has no session there"
        assert data["error"]["hint"].endswith(naming)
    assert data["error"]["hint"].startswith(f"Did you mean {world.tool_id}? ")
    # A repository here without a session of the host is no typo: an empty answer that says so.
    (world.base / "oss" / "fresh" / ".git").mkdir(parents=True)
    code, fresh, _ = run(capsys, "history", "search", "E1042", "--project", f"git:{world.base / 'oss' / 'fresh'}")
    assert (code, fresh["results"], fresh["sessions_in_scope"]) == (0, [], 0)
    assert "the host has no session in this project yet" in fresh["notes"]


def test_a_bad_mode_and_an_empty_query_are_usage_errors(capsys: pytest.CaptureFixture[str], configured: World) -> None:
    code, data, _ = run(capsys, "history", "search", "E1042", "--mode", "fuzzy", "--cwd", str(configured.alpha))
    assert (code, data["error"]["code"]) == (2, "usage_error") and "fuzzy" in data["error"]["message"]
    code, data, _ = run(capsys, "history", "search", "--cwd", str(configured.alpha))
    assert (code, data["error"]["code"], data["error"]["message"]) == (2, "usage_error", "the query is empty")


# -- index and status ----------------------------------------------------------------------------


def test_index_and_status(capsys: pytest.CaptureFixture[str], home: Path, configured: World) -> None:
    code, report, _ = run(capsys, "history", "index")
    assert code == 0
    assert list(report) == ["sync", "embedded", "pending", "skipped_for_consent", "semantic_status", "index"]
    assert report["sync"] | {"seconds": 0} == {"sessions": 7, "removed": 0, "messages": 55, "chunks": 55,
                                                "rebuilt": True, "seconds": 0, "failed": []}
    assert (report["embedded"], report["pending"], report["skipped_for_consent"], report["semantic_status"]) == (
        0, 0, 0, "disabled")
    assert report["index"] == index_file(home)
    code, again, _ = run(capsys, "history", "index")
    assert (again["sync"]["sessions"], again["sync"]["rebuilt"]) == (0, False)
    code, full, _ = run(capsys, "history", "index", "--full")
    assert (full["sync"]["sessions"], full["sync"]["messages"], full["sync"]["rebuilt"]) == (7, 55, False)

    code, status, _ = run(capsys, "history", "status")
    assert code == 0
    assert status == {
        "database": str(configured.database),
        "provider": "hermes-state",
        "index": index_file(home),
        "counts": {"sessions": 7, "messages": 55, "chunks": 55, "vectors": 0},
        "host": {"projects": 2, "sessions": 7, "messages": 55},
        "embedder": None,
        "remote_service": None,
        "consents": [],
        "notes": [],
    }
    code, out, _ = run(capsys, "--human", "history", "status")
    assert code == 0
    assert out.splitlines() == [
        f"database: {configured.database}", f"index: {index_file(home)}", "embedder: none", "remote_service: none",
        "indexed: sessions 7, messages 55, chunks 55, vectors 0",
        "host: 2 projects, 7 sessions, 55 messages of the indexed roles",
    ]


# -- consent ---------------------------------------------------------------------------------------


def test_consent_without_a_remote_service(capsys: pytest.CaptureFixture[str], home: Path, configured: World) -> None:
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", "p_alpha")
    assert (code, data["error"]["code"]) == (2, "usage_error")
    assert data["error"]["message"] == "no remote embedding service is configured, so there is nothing to consent to"
    for flags in ((), ("--grant", "--revoke")):
        code, data, _ = run(capsys, "history", "consent", *flags, "--project", "p_alpha")
        assert (code, data["error"]["code"], data["error"]["message"]) == (2, "usage_error", "say --grant or --revoke")
    assert not (home / "history" / "consent.json").exists()

    # A service named explicitly is recorded in advance.
    service = "https://embed.example/v1"
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", "p_alpha", "--service", service + "/")
    assert (code, data) == (0, {"service": service, "project": "p_alpha", "granted": True})
    code, status, _ = run(capsys, "history", "status")
    assert [(c["service"], c["project"]) for c in status["consents"]] == [(service, "p_alpha")]
    code, data, _ = run(capsys, "history", "consent", "--revoke", "--project", "*", "--service", service)
    assert (code, data) == (0, {"service": service, "project": "*", "granted": False, "revoked": 1})

    # A typo is refused, not recorded; a name is recorded as the project's id; a repository by its folder.
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", "p_alhpa", "--service", service)
    assert (code, data["error"]["code"]) == (2, "usage_error") and "p_alpha (Alpha)" in data["error"]["hint"]
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", "Alpha", "--service", service)
    assert (code, data["project"]) == (0, "p_alpha")
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", configured.tool_id + "/",
                        "--service", service)
    assert (code, data["project"]) == (0, configured.tool_id)
    # A repository folder inside a registered project is that project; one no session is in is refused.
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", f"git:{configured.alpha}",
                        "--service", service)
    assert (code, data["project"]) == (0, "p_alpha")
    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", "git:/x/tool", "--service", service)
    assert (code, data["error"]["code"]) == (2, "usage_error")
    code, status, _ = run(capsys, "history", "status")
    assert [c["project"] for c in status["consents"]] == [configured.tool_id, "p_alpha"]


@pytest.mark.filterwarnings("ignore:A test tried to use socket")  # the one attempt after the consent
def test_consent_with_a_configured_remote_service(
    capsys: pytest.CaptureFixture[str], home: Path, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "config.yaml").write_text(world.config(REMOTE), encoding="utf-8")
    monkeypatch.chdir(world.alpha)
    code, refused, _ = run(capsys, "history", "search", "E1042")
    assert code == 0 and list(refused) == [*RESPONSE_FIELDS[:-1], "consent", "sync"]
    assert (refused["semantic_status"], refused["mode"]) == ("consent_required", "keyword")
    assert refused["consent"]["service"] == REMOTE_URL and refused["consent"]["project"]["id"] == "p_alpha"
    assert refused["consent"]["grant"] == (
        f"hermes-workspace history consent --grant --service {REMOTE_URL} --project p_alpha")
    assert refused["results"]  # the keyword side still answers

    code, data, _ = run(capsys, "history", "consent", "--grant", "--project", "p_alpha")
    assert (code, data) == (0, {"service": REMOTE_URL, "project": "p_alpha", "granted": True})
    code, out, _ = run(capsys, "--human", "history", "consent", "--grant", "--project", "p_alpha")
    assert (code, out) == (0, f"granted: p_alpha -> {REMOTE_URL}\n")  # idempotent
    code, allowed, _ = run(capsys, "history", "search", "E1042")
    assert allowed["semantic_status"] == "unavailable" and "consent" not in allowed  # tried, could not connect
    code, other, _ = run(capsys, "history", "search", "E1042", "--project", "p_beta")
    assert other["semantic_status"] == "consent_required" and other["consent"]["project"]["id"] == "p_beta"
    code, status, _ = run(capsys, "history", "status")
    assert (status["embedder"], status["remote_service"]) == ("openai", REMOTE_URL)
    assert [(c["service"], c["project"]) for c in status["consents"]] == [(REMOTE_URL, "p_alpha")]

    code, data, _ = run(capsys, "history", "consent", "--revoke", "--project", "p_alpha")
    assert (code, data) == (0, {"service": REMOTE_URL, "project": "p_alpha", "granted": False, "revoked": 1})
    code, out, _ = run(capsys, "--human", "history", "consent", "--revoke", "--project", "p_alpha")
    assert (code, out) == (0, f"revoked (0): p_alpha -> {REMOTE_URL}\n")
    code, again, _ = run(capsys, "history", "search", "E1042")
    assert again["semantic_status"] == "consent_required"
