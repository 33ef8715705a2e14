"""Project-history recall (issue 13, seed 003): attribution rules and the search use case, on fakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import (
    HashEmbedder,
    InMemoryConsentStore,
    InMemoryHistoryIndex,
    InMemorySessionHistory,
    ParagraphChunker,
    WhitespaceTokenCounter,
)
from hermes_workspace.application.history import (
    HistoryRequest,
    HistorySettings,
    SearchProjectHistory,
    SyncHistory,
    index_project_history,
    message_chunks,
)
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.history import (
    HostMessage,
    HostProject,
    HostSession,
    ProjectFolders,
    attribute,
    excerpt,
    path_key,
    timestamp_text,
)

P = HostProject("p_alpha", "Alpha", ("/src/alpha",))
Q = HostProject("p_beta", "Beta", ("/src/beta", "/docs/beta"))
NESTED = HostProject("p_inner", "Inner", ("/src/alpha/inner",))


def _folders(*projects: HostProject) -> ProjectFolders:
    return ProjectFolders(projects or (P, Q, NESTED))


# -- attribution -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "git_root", "project_id", "expected"),
    [
        ("/src/alpha", None, None, ("explicit", "p_alpha")),
        ("/src/alpha/lib/x", "/src/alpha", None, ("explicit", "p_alpha")),
        ("/src/alpha/inner/deep", None, None, ("explicit", "p_inner")),  # longest ancestor wins
        ("/src/alphabet", None, None, ("home", None)),  # a name prefix is no ancestor
        ("/docs/beta/", None, None, ("explicit", "p_beta")),  # trailing separator
        ("/tmp/scratch", "/repos/tool", None, ("auto", "git:/repos/tool")),
        (None, "/repos/tool/", None, ("auto", "git:/repos/tool")),
        ("/tmp/scratch", None, None, ("home", None)),
        (None, None, None, ("home", None)),
        ("/tmp/scratch", None, "p_beta", ("explicit", "p_beta")),  # persisted attribution
        ("/src/alpha", None, "p_gone", ("explicit", "p_alpha")),  # unknown persisted id ignored
    ],
)
def test_attribution_rules(cwd, git_root, project_id, expected) -> None:
    scope = attribute(_folders(), cwd=cwd, git_root=git_root, project_id=project_id)
    assert (scope.kind, scope.id) == expected


def test_home_reasons_tell_no_location_from_no_project() -> None:
    assert attribute(_folders(), cwd=None, git_root=None).reason == "no_location"
    assert attribute(_folders(), cwd="/tmp/x", git_root=None).reason == "no_project"


def test_a_folder_registered_twice_goes_to_the_first_project_id_whatever_the_row_order() -> None:
    a = HostProject("b_second", "B", ("/shared",))
    b = HostProject("a_first", "A", ("/shared",))
    assert ProjectFolders([a, b]).match("/shared/x").id == "a_first"
    assert ProjectFolders([b, a]).match("/shared/x").id == "a_first"


def test_path_key_normalizes_windows_and_posix_paths() -> None:
    assert path_key("C:\\Users\\Me\\Proj\\") == "c:/users/me/proj"
    assert path_key("/a/./b/../c/") == "/a/c"
    assert path_key("  ") == ""
    assert path_key("/") == "/"


def test_timestamp_text_reads_epoch_seconds_milliseconds_and_iso() -> None:
    assert timestamp_text(1788273022) == "2026-09-01 14:30"
    assert timestamp_text(1788273022000) == "2026-09-01 14:30"
    assert timestamp_text("2026-09-01T16:30:22+02:00") == "2026-09-01 14:30"
    assert timestamp_text(None) is None
    assert timestamp_text("yesterday") == "yesterday"


def test_excerpt_centers_on_the_first_query_word() -> None:
    text = ("filler " * 200) + "the rollback plan is here " + ("tail " * 200)
    cut = excerpt(text, ["rollback"], 80)
    assert "rollback" in cut and cut.startswith("…") and cut.endswith("…")
    assert len(cut) <= 82


def test_long_messages_are_indexed_in_parts_whose_offsets_point_into_the_message() -> None:
    body = "\n\n".join(f"paragraph {i} " + "word " * 150 for i in range(4))
    message = HostMessage(7, "s1", "assistant", "  " + body)
    parts = message_chunks(message, ParagraphChunker(), chunk_words=200)
    assert len(parts) == 4
    for part in parts:
        assert message.content[part.offset:part.offset + len(part.content)] == part.content
    short = message_chunks(HostMessage(8, "s1", "user", "\n hello there \n"), ParagraphChunker(), 200)
    assert [(p.offset, p.content) for p in short] == [(2, "hello there")]
    assert message_chunks(HostMessage(9, "s1", "user", "   "), ParagraphChunker(), 200) == []


# -- the use case --------------------------------------------------------------------------------


def _host() -> InMemorySessionHistory:
    sessions = [
        HostSession("s_p1", "Alpha deploy", 1788273022, "/src/alpha", "/src/alpha"),
        HostSession("s_p2", "Alpha tests", 1788273022, "/src/alpha/tests", "/src/alpha"),
        HostSession("s_q1", "Beta deploy", 1788273022, "/src/beta", None),
        HostSession("s_auto", "Tool", 1788273022, "/repos/tool/sub", "/repos/tool"),
        HostSession("s_home", "Chat", 1788273022, None, None),
    ]
    messages = [
        HostMessage(1, "s_p1", "user", "How do we roll back the alpha deployment?", 1788273022),
        HostMessage(2, "s_p1", "assistant", "Redeploy the previous tag with the deploy script.", 1788273082),
        HostMessage(3, "s_p1", "user", "Thanks, noted.", 1788273142),
        HostMessage(4, "s_p2", "user", "The flaky test in alpha is test_cache_expiry.", 1788273202),
        HostMessage(5, "s_q1", "user", "How do we roll back the beta deployment?", 1788273262),
        HostMessage(6, "s_q1", "assistant", "Beta uses blue-green switching for deployment.", 1788273322),
        HostMessage(7, "s_auto", "user", "The tool deployment failed with E1234.", 1788273382),
        HostMessage(8, "s_home", "user", "A deployment question with no project.", 1788273442),
        HostMessage(9, "s_p1", "tool", "deployment log output", 1788273502),
    ]
    return InMemorySessionHistory([P, Q], sessions, messages)


def _search(host, *, embedder=None, service=None, consents=None, index=None, max_tokens=3200, chunker=None):
    index = index if index is not None else InMemoryHistoryIndex()
    sync = SyncHistory(host, index, chunker or ParagraphChunker(), roles=("user", "assistant"), chunk_words=200)
    settings = HistorySettings(max_tokens=max_tokens, remote_service=service)
    use_case = SearchProjectHistory(host, index, sync, WhitespaceTokenCounter(), consents or InMemoryConsentStore(),
                                    embedder=embedder, settings=settings,
                                    git_root=lambda path: Path("/repos/tool") if str(path).startswith("/repos/tool") else None)
    return use_case, index


def _ids(result) -> list[tuple[str, int]]:
    return [(r.session_id, r.message_id) for r in result.results]


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_project_sees_only_its_own_sessions_in_every_mode(mode: str) -> None:
    use_case, _ = _search(_host(), embedder=HashEmbedder())
    alpha = use_case.execute(HistoryRequest("roll back deployment", mode=mode, cwd=Path("/src/alpha/tests")))
    beta = use_case.execute(HistoryRequest("roll back deployment", mode=mode, cwd=Path("/src/beta")))
    assert alpha.project.id == "p_alpha" and beta.project.id == "p_beta"
    assert alpha.results and beta.results
    assert {s for s, _ in _ids(alpha)} <= {"s_p1", "s_p2"}
    assert {s for s, _ in _ids(beta)} == {"s_q1"}
    assert (alpha.sessions_in_scope, beta.sessions_in_scope) == (2, 1)
    # A keyword search embeds nothing; it reports how far the vectors are.
    assert alpha.mode == mode and alpha.semantic_status == ("indexing" if mode == "keyword" else "ready")


def test_a_git_repository_outside_every_project_is_a_project_of_its_own() -> None:
    use_case, _ = _search(_host())
    result = use_case.execute(HistoryRequest("deployment", mode="keyword", cwd=Path("/repos/tool/sub/dir")))
    assert result.project.to_json() == {"kind": "auto", "id": "git:/repos/tool", "name": "tool",
                                        "folders": ["/repos/tool"]}
    assert _ids(result) == [("s_auto", 7)]


def test_the_home_bucket_searches_nothing_and_says_why() -> None:
    use_case, index = _search(_host())
    result = use_case.execute(HistoryRequest("deployment", cwd=Path("/tmp/elsewhere")))
    data = result.to_json()
    assert data["results"] == [] and data["sessions_in_scope"] == 0
    assert data["project"]["kind"] == "home" and data["project"]["reason"] == "no_project"
    assert "belongs to no project" in data["message"]
    from_home_session = use_case.execute(HistoryRequest("deployment", session_id="s_home")).to_json()
    assert from_home_session["project"]["reason"] == "no_location" and from_home_session["results"] == []
    unknown = use_case.execute(HistoryRequest("deployment", session_id="nope")).to_json()
    assert unknown["project"]["reason"] == "unknown_session" and unknown["results"] == []


def test_a_search_from_a_session_uses_that_sessions_project() -> None:
    use_case, _ = _search(_host())
    result = use_case.execute(HistoryRequest("deployment", mode="keyword", session_id="s_q1"))
    assert result.project.id == "p_beta" and {s for s, _ in _ids(result)} == {"s_q1"}


def test_moving_a_session_changes_its_project_at_query_time_without_re_embedding() -> None:
    host, embedder = _host(), HashEmbedder()
    use_case, _ = _search(host, embedder=embedder)
    use_case.execute(HistoryRequest("flaky test cache expiry", cwd=Path("/src/alpha")))
    before = use_case.execute(HistoryRequest("flaky test cache expiry", cwd=Path("/src/beta")))
    assert "s_p2" not in {s for s, _ in _ids(before)}
    embedded = embedder.documents_embedded
    host.move("s_p2", cwd="/src/beta/tests")
    after_beta = use_case.execute(HistoryRequest("flaky test cache expiry", cwd=Path("/src/beta")))
    after_alpha = use_case.execute(HistoryRequest("flaky test cache expiry", cwd=Path("/src/alpha")))
    assert _ids(after_beta)[0] == ("s_p2", 4)
    assert "s_p2" not in {s for s, _ in _ids(after_alpha)}
    assert embedder.documents_embedded == embedded
    assert after_beta.semantic_status == "ready"


def test_new_messages_are_picked_up_before_the_next_search_reading_only_the_changed_session() -> None:
    host = _host()
    use_case, _ = _search(host)
    first = use_case.execute(HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha")))
    assert first.results == [] and first.sync.sessions == 5  # every session with messages, Home's too
    reads = host.reads
    host.add(HostMessage(10, "s_p2", "assistant", "Move the cache to kubernetes.", 1788273600))
    second = use_case.execute(HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha")))
    assert _ids(second) == [("s_p2", 10)]
    assert host.reads == reads + 1 and second.sync.sessions == 1


def test_sessions_deleted_by_the_host_leave_the_index() -> None:
    host = _host()
    use_case, index = _search(host)
    use_case.execute(HistoryRequest("deployment", mode="keyword", cwd=Path("/src/beta")))
    host.rows = [m for m in host.rows if m.session_id != "s_q1"]
    del host.session_rows["s_q1"]
    result = use_case.execute(HistoryRequest("deployment", mode="keyword", cwd=Path("/src/beta")))
    assert result.results == [] and result.sync.removed == 1 and "s_q1" not in index.session_stats()


def test_tool_messages_are_not_indexed_by_default() -> None:
    use_case, _ = _search(_host())
    result = use_case.execute(HistoryRequest("log output", mode="keyword", cwd=Path("/src/alpha")))
    assert result.results == []


def test_the_semantic_side_finds_a_paraphrase_keywords_miss() -> None:
    embedder = HashEmbedder(synonyms={"revert": "roll", "release": "deployment", "undo": "back"})
    use_case, _ = _search(_host(), embedder=embedder)
    keyword = use_case.execute(HistoryRequest("revert release undo", mode="keyword", cwd=Path("/src/alpha")))
    hybrid = use_case.execute(HistoryRequest("revert release undo", cwd=Path("/src/alpha")))
    assert keyword.results == []
    assert _ids(hybrid)[0] == ("s_p1", 1)
    assert hybrid.results[0].score_source == "semantic"


def test_hits_found_by_both_sides_say_both() -> None:
    use_case, _ = _search(_host(), embedder=HashEmbedder())
    result = use_case.execute(HistoryRequest("roll back the alpha deployment", cwd=Path("/src/alpha")))
    assert _ids(result)[0] == ("s_p1", 1) and result.results[0].score_source == "both"


def test_each_hit_carries_its_neighbouring_messages_and_the_seed_fields() -> None:
    use_case, _ = _search(_host())
    result = use_case.execute(HistoryRequest("previous tag", mode="keyword", cwd=Path("/src/alpha")))
    hit = result.to_json()["results"][0]
    assert {k: hit[k] for k in ("session_id", "link", "title", "message_id", "role", "score_source", "when")} == {
        "session_id": "s_p1", "link": "@session:s_p1", "title": "Alpha deploy", "message_id": 2,
        "role": "assistant", "score_source": "keyword", "when": "2026-09-01 14:31"}
    assert hit["snippet"] == "Redeploy the previous tag with the deploy script."
    assert [m["message_id"] for m in hit["context"]["before"]] == [1]
    assert [m["message_id"] for m in hit["context"]["after"]] == [3]  # the tool message 9 is no neighbour
    data = result.to_json()
    assert {"success", "mode", "project", "results", "sessions_in_scope", "semantic_status"} <= set(data)


def test_the_response_fits_its_token_budget_and_counts_what_was_left_out() -> None:
    host = _host()
    host.add(*[HostMessage(100 + i, "s_p1", "user", f"deployment note {i} " + "padding " * 60, 1788273600 + i)
               for i in range(10)])
    use_case, _ = _search(host)
    roomy = use_case.execute(HistoryRequest("deployment note", mode="keyword", cwd=Path("/src/alpha"), limit=10))
    tight = use_case.execute(HistoryRequest("deployment note", mode="keyword", cwd=Path("/src/alpha"), limit=10,
                                            max_tokens=400))
    assert len(roomy.results) == 10 and roomy.omitted == 0
    assert 1 <= len(tight.results) < 10
    assert tight.omitted == 10 - len(tight.results)
    assert tight.tokens <= 400
    assert any("left out" in note for note in tight.notes)


def test_a_remote_embedder_needs_consent_per_service_and_project() -> None:
    embedder, consents = HashEmbedder(), InMemoryConsentStore()
    use_case, _ = _search(_host(), embedder=embedder, service="https://embed.example/v1", consents=consents)
    refused = use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/src/alpha")))
    assert refused.semantic_status == "consent_required" and refused.mode == "keyword"
    assert refused.results  # keyword search still works
    assert embedder.calls == [] and embedder.queries_embedded == 0  # nothing was sent
    assert refused.consent["service"] == "https://embed.example/v1" and refused.consent["project"]["id"] == "p_alpha"
    consents.grant("https://embed.example/v1", "p_alpha")
    allowed = use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/src/alpha")))
    assert allowed.semantic_status == "ready" and embedder.queries_embedded == 1
    sent = {text for call in embedder.calls for text in call}
    assert sent and all("beta" not in text.lower() for text in sent)  # only the consented project's text
    other = use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/src/beta")))
    assert other.semantic_status == "consent_required"
    elsewhere, _ = _search(_host(), embedder=embedder, service="https://other.example/v1", consents=consents)
    assert elsewhere.execute(HistoryRequest("x", cwd=Path("/src/alpha"))).semantic_status == "consent_required"


def test_index_embeds_only_consented_projects_with_a_remote_embedder() -> None:
    host, embedder, consents = _host(), HashEmbedder(), InMemoryConsentStore()
    index = InMemoryHistoryIndex()
    sync = SyncHistory(host, index, ParagraphChunker(), roles=("user", "assistant"), chunk_words=200)
    consents.grant("svc", "p_beta")
    report = index_project_history(sync, host, index, consents, embedder=embedder, remote_service="svc")
    assert report["embedded"] == 2 and report["semantic_status"] == "ready"
    assert report["skipped_for_consent"] == 3  # s_p1, s_p2, s_auto; s_home is in no project
    local = index_project_history(sync, host, index, consents, embedder=embedder, remote_service=None)
    assert local["embedded"] == 5 and local["pending"] == 0  # every project's messages; never Home's


def test_bad_requests_are_usage_errors() -> None:
    use_case, _ = _search(_host())
    for request in (HistoryRequest("x", mode="fuzzy", cwd=Path("/src/alpha")),
                    HistoryRequest("  ", cwd=Path("/src/alpha")),
                    HistoryRequest("x", limit=0, cwd=Path("/src/alpha")),
                    HistoryRequest("x", context_messages=99, cwd=Path("/src/alpha")),
                    HistoryRequest("x", max_tokens=5, cwd=Path("/src/alpha")),
                    HistoryRequest("x", project="nope")):
        with pytest.raises(UsageError):
            use_case.execute(request)


def test_a_project_can_be_named_by_id_name_or_git_root() -> None:
    use_case, _ = _search(_host())
    assert use_case.execute(HistoryRequest("deployment", mode="keyword", project="p_beta")).project.id == "p_beta"
    assert use_case.execute(HistoryRequest("deployment", mode="keyword", project="beta")).project.id == "p_beta"
    auto = use_case.execute(HistoryRequest("deployment", mode="keyword", project="git:/repos/tool"))
    assert _ids(auto) == [("s_auto", 7)]


def test_an_embedder_that_fails_costs_only_the_semantic_side() -> None:
    embedder = HashEmbedder()
    embedder.fail = RuntimeError("model crashed")
    use_case, _ = _search(_host(), embedder=embedder)
    result = use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/src/alpha")))
    assert result.semantic_status == "unavailable" and result.mode == "keyword" and result.results
    assert any("model crashed" in note for note in result.notes)


def test_a_session_the_index_refuses_is_reported_and_the_others_are_indexed() -> None:
    from hermes_workspace.domain.errors import StoreError, StoreUnusableError

    class Refusing(InMemoryHistoryIndex):
        def __init__(self, error: Exception) -> None:
            super().__init__()
            self.error = error

        def replace_session(self, session_id, stat, chunks):
            if session_id == "s_p2":
                raise self.error
            super().replace_session(session_id, stat, chunks)

    host = _host()
    use_case, _ = _search(host, index=Refusing(StoreError("bad session id")))
    result = use_case.execute(HistoryRequest("deployment", mode="keyword", cwd=Path("/src/alpha")))
    assert [f["session_id"] for f in result.sync.failed] == ["s_p2"] and result.sync.sessions == 4
    assert _ids(result) == [("s_p1", 1)]
    broken, _ = _search(host, index=Refusing(StoreUnusableError("disk full")))
    with pytest.raises(StoreUnusableError):
        broken.execute(HistoryRequest("deployment", mode="keyword", cwd=Path("/src/alpha")))


class _ProbingEmbedder(HashEmbedder):
    """A remote embedder learns its vector length by embedding a probe text when its
    ``signature`` is first asked for: every read of ``signature`` counts as contacting it."""

    def __init__(self) -> None:
        super().__init__()
        self.probes = 0

    @property
    def signature(self) -> str:
        self.probes += 1
        return super().signature


def test_index_without_any_consent_never_contacts_the_remote_embedder() -> None:
    # history index with a remote service and no consent recorded read embedder.signature,
    # which for the openai embedder sends a probe request to the service before any consent.
    host, embedder, consents = _host(), _ProbingEmbedder(), InMemoryConsentStore()
    index = InMemoryHistoryIndex()
    sync = SyncHistory(host, index, ParagraphChunker(), roles=("user", "assistant"), chunk_words=200)
    report = index_project_history(sync, host, index, consents, embedder=embedder, remote_service="svc")
    assert (embedder.probes, embedder.calls, embedder.queries_embedded) == (0, [], 0)
    assert (report["embedded"], report["pending"], report["skipped_for_consent"]) == (0, 0, 4)
    assert report["semantic_status"] == "consent_required" and "error" not in report
    consents.grant("svc", "p_beta")
    allowed = index_project_history(sync, host, index, consents, embedder=embedder, remote_service="svc")
    assert (allowed["embedded"], allowed["skipped_for_consent"], allowed["semantic_status"]) == (2, 3, "ready")


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_limit_above_the_candidates_per_side_is_honoured(mode: str) -> None:
    # Each side took 40 candidates whatever the limit (1..100): limit=60 gave at most 40 hits.
    sessions = [HostSession("s_big", "Log", 1788273022, "/src/alpha", None)]
    messages = [HostMessage(i, "s_big", "user", f"deployment failed in build {i}", 1788273022 + i)
                for i in range(1, 61)]
    use_case, _ = _search(InMemorySessionHistory([P], sessions, messages), embedder=HashEmbedder(),
                          max_tokens=1_000_000)
    result = use_case.execute(HistoryRequest("deployment failed", mode=mode, project="p_alpha", limit=60))
    assert (len(result.results), result.omitted) == (60, 0)


def test_a_message_the_host_writes_during_a_sync_is_picked_up_by_the_next_one() -> None:
    class WritingHost(InMemorySessionHistory):
        """The host appends to s_p1 right after our aggregate query, before we read the session."""

        armed = True

        def messages(self, session_id, roles):
            if self.armed and session_id == "s_p1":
                self.armed = False
                self.add(HostMessage(50, "s_p1", "user", "late kubernetes question", 1788273700))
            return super().messages(session_id, roles)

    base = _host()
    host = WritingHost(base.project_rows, base.session_rows.values(), base.rows)
    use_case, index = _search(host)
    first = use_case.execute(HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha")))
    assert _ids(first) == [("s_p1", 50)]  # read with the session, although the aggregate predates it
    second = use_case.execute(HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha")))
    # The recorded fingerprint predates the message, so the session is read once more, then settles.
    assert second.sync.sessions == 1 and _ids(second) == [("s_p1", 50)]
    assert use_case.execute(HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha"))).sync.sessions == 0


def test_an_unchanged_store_costs_no_aggregate_query_and_any_write_brings_it_back() -> None:
    class Counting(InMemorySessionHistory):
        aggregates = 0

        def session_stats(self, roles):
            self.aggregates += 1
            return super().session_stats(roles)

    base = _host()
    host = Counting(base.project_rows, base.session_rows.values(), base.rows)
    use_case, _ = _search(host)
    request = HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha"))
    use_case.execute(request)
    use_case.execute(request)
    assert host.aggregates == 1
    host.add(HostMessage(60, "s_p2", "user", "kubernetes again", 1788273800))
    assert _ids(use_case.execute(request)) == [("s_p2", 60)] and host.aggregates == 2
    use_case.sync.execute(full=True)  # a full sync always compares
    assert host.aggregates == 3


def test_a_keyword_search_never_asks_the_embedder_and_home_reports_disabled() -> None:
    class Untouchable(HashEmbedder):
        asked = 0

        @property
        def signature(self) -> str:
            self.asked += 1
            return super().signature

    embedder = Untouchable()
    use_case, _ = _search(_host(), embedder=embedder, service="https://embed.example/v1")
    use_case.consents.grant("https://embed.example/v1", "p_alpha")
    first = use_case.execute(HistoryRequest("roll back deployment", mode="keyword", cwd=Path("/src/alpha")))
    assert first.semantic_status == "indexing" and embedder.asked == 0 and embedder.calls == []
    use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/src/alpha")))  # hybrid embeds
    asked = embedder.asked
    again = use_case.execute(HistoryRequest("roll back deployment", mode="keyword", cwd=Path("/src/alpha")))
    assert again.semantic_status == "ready" and embedder.asked == asked
    home = use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/tmp/nowhere")))
    assert home.semantic_status == "disabled" and home.results == []


def test_a_linked_working_directory_finds_the_project_of_its_real_folder(tmp_path: Path) -> None:
    from hermes_workspace.adapters.filesystem_probe import git_root

    outer = tmp_path / "clone"  # a repository holding the link, as a checkout the user works in
    (outer / ".git").mkdir(parents=True)
    real = tmp_path / "src" / "helix"
    real.mkdir(parents=True)
    link = outer / "lnk"
    link.symlink_to(real)
    project = HostProject("p_helix", "Helix", (str(real),))
    host = InMemorySessionHistory(
        [project], [HostSession("s1", "genome", 1.0, str(real), str(real))],
        [HostMessage(1, "s1", "user", "the genome variant pipeline", 2.0)])
    index = InMemoryHistoryIndex()
    sync = SyncHistory(host, index, ParagraphChunker(), roles=("user",), chunk_words=200)
    use_case = SearchProjectHistory(host, index, sync, WhitespaceTokenCounter(), InMemoryConsentStore(),
                                    git_root=git_root)
    for folder in (link, link / "sub", real):
        result = use_case.execute(HistoryRequest("genome", mode="keyword", cwd=folder))
        assert result.project.id == "p_helix" and _ids(result) == [("s1", 1)], folder
    # A linked folder of no project: its repository is the real folder's, never the link's.
    plain = tmp_path / "plain"
    plain.mkdir()
    (outer / "other").symlink_to(plain)
    assert use_case.execute(HistoryRequest("genome", cwd=outer / "other")).project.reason == "no_project"


def test_limit_counts_messages_even_when_many_parts_of_one_message_match() -> None:
    long = "\n\n".join(f"part {i} about the kubernetes cluster" for i in range(30))
    host = InMemorySessionHistory(
        [P], [HostSession("s1", "t", 1.0, "/src/alpha")],
        [HostMessage(1, "s1", "assistant", long, 1.0)]
        + [HostMessage(10 + i, "s1", "user", f"kubernetes question {i}", 2.0 + i) for i in range(45)])
    use_case, _ = _search(host, chunker=ParagraphChunker(), max_tokens=100_000)
    use_case.sync.chunk_words = 5  # every paragraph of the long message is a part of its own
    result = use_case.execute(HistoryRequest("kubernetes", mode="keyword", cwd=Path("/src/alpha"), limit=40,
                                             context_messages=0))
    assert len(result.results) == 40 and len(set(_ids(result))) == 40


def test_a_repository_name_is_checked_and_a_registered_folder_is_its_project() -> None:
    use_case, _ = _search(_host())
    for bad in ("git:", "git:relative/x", "git:  "):
        with pytest.raises(UsageError):
            use_case.execute(HistoryRequest("deployment", project=bad))
    inside = use_case.execute(HistoryRequest("deployment", mode="keyword", project="git:/src/beta/"))
    assert inside.project.id == "p_beta" and {s for s, _ in _ids(inside)} == {"s_q1"}
    with pytest.raises(UsageError) as caught:  # no such folder, and no session there
        use_case.execute(HistoryRequest("deployment", mode="keyword", project="git:/nowhere"))
    assert caught.value.message == "git:/nowhere names no folder on this machine, and the host has no session there"


def test_a_repository_name_that_is_no_repository_root_here_is_a_usage_error_with_a_hint(tmp_path: Path) -> None:
    """Trial finding: ``--project git:/nonexistent`` answered 0 sessions with only the note "the
    host has no session in this project yet", so a typo looked like an empty project."""
    from hermes_workspace.adapters.filesystem_probe import git_root

    repo, plain = tmp_path / "repo", tmp_path / "plain"
    (repo / ".git").mkdir(parents=True)
    (repo / "lib").mkdir()
    plain.mkdir()
    gone = tmp_path / "gone"  # a repository the host has sessions in, deleted since: still searched
    host = InMemorySessionHistory([P], [HostSession("s1", "t", 1.0, str(gone), str(gone))],
                                  [HostMessage(1, "s1", "user", "the plugin loader", 2.0)])
    index = InMemoryHistoryIndex()
    sync = SyncHistory(host, index, ParagraphChunker(), roles=("user",), chunk_words=200)
    use_case = SearchProjectHistory(host, index, sync, WhitespaceTokenCounter(), InMemoryConsentStore(),
                                    git_root=git_root)
    hint = ("Registered projects: p_alpha (Alpha). A git repository is named git:<its root folder> (the folder "
            "holding .git), as project.id shows it; or leave the project out to search the project of the "
            "working directory.")
    for folder, message in (
            (tmp_path / "nonexistent", "names no folder on this machine"),
            (plain, "names a folder in no git repository"),
            (repo / "lib", f"names a folder inside the repository {repo}, not its root")):
        with pytest.raises(UsageError) as caught:
            use_case.execute(HistoryRequest("loader", project=f"git:{folder}"))
        assert caught.value.message == f"git:{folder} {message}, and the host has no session there"
        assert caught.value.hint.endswith(hint)
    assert caught.value.hint.startswith(f"Did you mean git:{repo}? ")
    empty = use_case.execute(HistoryRequest("loader", mode="keyword", project=f"git:{repo}"))
    assert (empty.project.id, empty.results, empty.sessions_in_scope) == (f"git:{repo}", [], 0)
    assert "the host has no session in this project yet" in empty.notes
    found = use_case.execute(HistoryRequest("loader", mode="keyword", project=f"git:{gone}"))
    assert _ids(found) == [("s1", 1)]


def test_a_query_without_words_searches_nothing_on_either_side() -> None:
    embedder = HashEmbedder()
    use_case, _ = _search(_host(), embedder=embedder)
    for text in ("!!!", "...", "*", "a"):
        result = use_case.execute(HistoryRequest(text, cwd=Path("/src/alpha")))
        assert result.results == [] and embedder.queries_embedded == 0
        assert "no word to search for" in " ".join(result.notes)


@pytest.mark.parametrize(("key", "value"), [("limit", 500), ("limit", 0), ("context_messages", 21), ("max_tokens", 50),
                                            ("chunk_size", 5), ("roles", "")])
def test_history_settings_out_of_range_are_config_errors(key: str, value: object) -> None:
    from hermes_workspace.domain.config import WorkspaceConfig
    from hermes_workspace.domain.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        WorkspaceConfig.from_dict({"knowledgebase": {"history": {key: value}}})
    assert f"knowledgebase.history.{key}" in caught.value.message


def test_index_reports_an_embedder_failure_with_what_is_still_pending() -> None:
    from hermes_workspace.domain.errors import EmbedderUnavailableError

    host, embedder, consents = _host(), HashEmbedder(), InMemoryConsentStore()
    index = InMemoryHistoryIndex()
    sync = SyncHistory(host, index, ParagraphChunker(), roles=("user", "assistant"), chunk_words=200)
    embedder.fail = EmbedderUnavailableError("endpoint down")
    report = index_project_history(sync, host, index, consents, embedder=embedder, remote_service=None)
    assert (report["semantic_status"], report["embedded"], report["pending"]) == ("unavailable", 0, 7)
    assert report["error"]["code"] == "embedder_unavailable"


def test_a_project_registered_through_a_link_owns_the_sessions_recorded_under_the_real_folder(tmp_path: Path) -> None:
    from hermes_workspace.adapters.filesystem_probe import git_root

    real = tmp_path / "dev" / "tempo"
    (real / ".git").mkdir(parents=True)
    link = tmp_path / "lnktempo"
    link.symlink_to(real)
    project = HostProject("p_tempo", "Tempo", (str(link),))  # registered as the user typed it
    host = InMemorySessionHistory(
        [project], [HostSession("s1", "t", 1.0, str(real / "lib"), str(real))],  # recorded by getcwd()
        [HostMessage(1, "s1", "user", "the metronome drifts", 2.0)])
    index = InMemoryHistoryIndex()
    sync = SyncHistory(host, index, ParagraphChunker(), roles=("user",), chunk_words=200)
    use_case = SearchProjectHistory(host, index, sync, WhitespaceTokenCounter(), InMemoryConsentStore(),
                                    git_root=git_root)
    for request in (HistoryRequest("metronome", mode="keyword", cwd=link),
                    HistoryRequest("metronome", mode="keyword", cwd=real),
                    HistoryRequest("metronome", mode="keyword", project=f"git:{link}"),
                    HistoryRequest("metronome", mode="keyword", project=f"git:{real}")):
        result = use_case.execute(request)
        assert (result.project.id, _ids(result)) == ("p_tempo", [("s1", 1)]), request


def test_a_linked_repository_name_is_its_real_folder(tmp_path: Path) -> None:
    real = tmp_path / "oss" / "tool"
    real.mkdir(parents=True)
    link = tmp_path / "lnk"
    link.symlink_to(real)
    host = InMemorySessionHistory([], [HostSession("s1", "t", 1.0, str(real), str(real))],
                                  [HostMessage(1, "s1", "user", "plugin loader", 2.0)])
    use_case, _ = _search(host)
    result = use_case.execute(HistoryRequest("loader", mode="keyword", project=f"git:{link}"))
    assert (result.project.id, _ids(result)) == (f"git:{real}", [("s1", 1)])


def test_a_semantic_search_the_model_cannot_read_falls_back_to_keywords_and_says_so() -> None:
    use_case, _ = _search(_host(), embedder=HashEmbedder())
    result = use_case.execute(HistoryRequest("deployment 日本語の質問ですかそれとも", mode="semantic", cwd=Path("/src/alpha")))
    assert result.mode == "keyword" and _ids(result) == [("s_p1", 1)]
    assert any("does not read the query's language" in note for note in result.notes)


NO_EMBEDDER = "semantic side disabled: keyword results only"


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_every_answer_reports_the_mode_used_with_the_same_note(mode: str) -> None:
    """Trial finding: Home answers and queries without words said ``mode: hybrid`` with the
    semantic side disabled and no note, while a search said ``keyword`` with a note."""
    use_case, _ = _search(_host())
    requests = [HistoryRequest("deployment", mode=mode, cwd=Path("/src/alpha")),  # a search
                HistoryRequest("deployment", mode=mode, cwd=Path("/tmp/elsewhere")),  # Home: no project
                HistoryRequest("deployment", mode=mode, session_id="nope"),  # Home: unknown session
                HistoryRequest("!!!", mode=mode, cwd=Path("/src/alpha"))]  # no word
    for request in requests:
        result = use_case.execute(request)
        assert (result.mode, result.semantic_status) == ("keyword", "disabled"), request
        expected = [] if mode == "keyword" else [NO_EMBEDDER]
        assert [n for n in result.notes if n.startswith("semantic side")] == expected, request
        assert result.to_json()["mode"] == "keyword"


def test_a_semantic_side_that_could_run_but_was_not_used_says_skipped() -> None:
    use_case, _ = _search(_host(), embedder=HashEmbedder())
    assert use_case.execute(HistoryRequest("roll back deployment", cwd=Path("/src/alpha"))).mode == "hybrid"
    for request in (HistoryRequest("!!!", cwd=Path("/src/alpha")),
                    HistoryRequest("deployment 日本語の質問ですかそれとも", mode="semantic", cwd=Path("/src/alpha"))):
        result = use_case.execute(request)
        assert (result.mode, result.semantic_status) == ("keyword", "ready")
        assert [n for n in result.notes if n.startswith("semantic side")] == ["semantic side skipped: keyword results only"]


def _tool_call_host() -> InMemorySessionHistory:
    return InMemorySessionHistory([P], [HostSession("s1", "t", 1.0, "/src/alpha")], [
        HostMessage(1, "s1", "user", "Why does the cache expire early?", 1.0),
        HostMessage(2, "s1", "assistant", "", 2.0),  # a turn that only called tools
        HostMessage(3, "s1", "assistant", "  \n", 3.0),
        HostMessage(4, "s1", "assistant", "The TTL is read in milliseconds.", 4.0),
        HostMessage(5, "s1", "assistant", "", 5.0),
        HostMessage(6, "s1", "user", "Thanks, fixed.", 6.0),
    ])


def test_neighbours_without_text_are_left_out_and_the_nearest_with_text_come_instead() -> None:
    """Trial finding: ``{"message_id": 6108, "role": "assistant", "text": ""}`` in a hit's context."""
    use_case, _ = _search(_tool_call_host())
    result = use_case.execute(HistoryRequest("TTL milliseconds", mode="keyword", cwd=Path("/src/alpha"),
                                             context_messages=1))
    hit = result.to_json()["results"][0]
    assert hit["message_id"] == 4
    assert [(m["message_id"], m["text"]) for m in hit["context"]["before"]] == [(1, "Why does the cache expire early?")]
    assert [(m["message_id"], m["text"]) for m in hit["context"]["after"]] == [(6, "Thanks, fixed.")]


def test_a_store_plugin_that_returns_empty_neighbours_has_them_left_out() -> None:
    class OldStore(InMemorySessionHistory):
        def window(self, session_id, message_id, before, after, roles=()):
            rows = self._of(session_id, roles)
            return ([m for m in rows if m.id < message_id][-before:] + [m for m in rows if m.id == message_id]
                    + [m for m in rows if m.id > message_id][:after])

    host = _tool_call_host()
    use_case, _ = _search(OldStore(host.project_rows, list(host.session_rows.values()), host.rows))
    result = use_case.execute(HistoryRequest("TTL milliseconds", mode="keyword", cwd=Path("/src/alpha"),
                                             context_messages=2))
    context = result.to_json()["results"][0]["context"]
    assert [m["message_id"] for m in context["before"]] == []  # 2 and 3 have no text: fewer than asked
    assert [m["message_id"] for m in context["after"]] == [6]
