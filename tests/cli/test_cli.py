"""The CLI end to end, in process (``main([...])``) against a temporary HERMES_HOME."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from hermes_workspace.entrypoints.cli import main

RUNBOOK = """\
# Deploy runbook

How we ship the hermes-agent service.

## Rollout

Deployment happens in three waves. Each wave waits for health checks.

## Rollback Procedures

If a wave fails, the rollback controller restores the previous release.
Run read_file on the release manifest to confirm the version.
"""

SEARCH_FIELDS = [
    "path", "root_name", "line_start", "line_end", "section", "chunk_index", "score", "tokens", "modified", "content",
    "breadcrumb", "definitions",
]
SUMMARY_FIELDS = [
    "files_indexed", "files_skipped", "files_pruned", "files_errored", "chunks_created",
    "duration_seconds", "errors", "errors_truncated", "skipped", "excluded",
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, object, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    try:
        data: object = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        data = out
    return code, data, err


@pytest.fixture
def workspace(home: Path) -> Path:
    ws = home / "workspace"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "runbook.md").write_text(RUNBOOK)
    (ws / "notes").mkdir()
    (ws / "notes" / "todo.txt").write_text("TODO: fix the deployment dashboard\nNOT agent related\n")
    (ws / "code").mkdir()
    (ws / "code" / "tool.py").write_text("def read_file(path, start, end):\n    return open(path).read()\n")
    return ws


def test_roots_add_list_remove(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    code, data, _ = run(capsys, "roots", "list")
    files = {"profile": None, "extensions": None, "max_file_size": None}  # issue 12, codebase profile
    primary = {"name": "workspace", "path": str(home / "workspace"), "recursive": True, "primary": True, **files}
    assert (code, data) == (0, [primary])

    code, data, _ = run(capsys, "roots", "add", str(extra), "--recursive")
    config = {"path": str(home / "config.yaml"), "found": "home", "project": False}  # the file written
    assert (code, data) == (0, {"name": "extra", "path": str(extra), "recursive": True, "primary": False, **files,
                                "action": "added", "previous": None, "message": f"added {extra} as extra (recursive)",
                                "config": config})
    code, data, _ = run(capsys, "roots", "list")
    assert data == [primary, {"name": "extra", "path": str(extra), "recursive": True, "primary": False, **files}]
    assert "recursive: true" in (home / "config.yaml").read_text()

    code, data, _ = run(capsys, "roots", "remove", str(extra))
    assert (code, data) == (0, {"name": "extra", "path": str(extra), "recursive": True, "primary": False, **files,
                                "config": config})
    assert run(capsys, "roots", "list")[1] == [primary]


def test_roots_errors_are_json_with_codes(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> None:
    code, data, _ = run(capsys, "roots", "add", str(tmp_path / "missing"))
    assert code == 66
    assert data["error"]["code"] == "root_not_found"
    assert set(data["error"]) == {"code", "message", "hint"}
    code, data, _ = run(capsys, "roots", "remove", str(tmp_path))
    assert (code, data["error"]["code"]) == (66, "root_not_configured")


def test_index_then_search(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    code, summary, _ = run(capsys, "--quiet", "index")
    assert code == 0
    assert list(summary) == SUMMARY_FIELDS
    assert (summary["files_indexed"], summary["files_errored"], summary["errors"]) == (3, 0, [])
    # runbook.md, todo.txt and tool.py; the seeded .hermesignore is configuration, not content

    code, hits, _ = run(capsys, "search", "rollback")
    assert code == 0
    # A one-word query may name a definition: definition_matches is set (1: the section that
    # starts in this chunk is titled "Rollback Procedures").
    # Every search hit is verified and named (issue 10): file_hash, stale, handle.
    assert [list(h) for h in hits] == [[*SEARCH_FIELDS, "definition_matches", "file_hash", "stale", "handle"]]
    assert hits[0]["definition_matches"] == 1
    assert hits[0]["stale"] is False
    hit = hits[0]
    assert hit["path"] == str(workspace / "docs" / "runbook.md")
    assert (hit["line_start"], hit["line_end"]) == (1, 12)
    assert hit["section"] == "# Deploy runbook"
    lines = (workspace / "docs" / "runbook.md").read_text().split("\n")
    assert "\n".join(lines[hit["line_start"] - 1 : hit["line_end"]]) == hit["content"]
    assert hit["score"] > 0

    code, again, _ = run(capsys, "--quiet", "index")
    assert (again["files_indexed"], again["skipped"]) == (0, {"unchanged": 3})


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["hermes-agent"], ["docs/runbook.md"]),
        (["read_file"], ["code/tool.py", "docs/runbook.md"]),
        (["NOT", "agent"], ["notes/todo.txt", "docs/runbook.md"]),
        (["deployment", "--glob", "*.txt"], ["notes/todo.txt"]),
        (["deployment", "--path", "docs"], ["docs/runbook.md"]),
        (["deployment", "--path", "doc_"], []),
        (["deploy", "--limit", "1"], ["docs/runbook.md"]),
    ],
)
def test_search_options(
    capsys: pytest.CaptureFixture[str], workspace: Path, monkeypatch: pytest.MonkeyPatch,
    args: list[str], expected: list[str],
) -> None:
    run(capsys, "--quiet", "index")
    monkeypatch.chdir(workspace)
    code, hits, _ = run(capsys, "search", *args)
    assert code == 0
    assert [str(Path(h["path"]).relative_to(workspace)) for h in hits] == expected


def test_path_filter_with_absolute_prefix(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    run(capsys, "--quiet", "index")
    code, hits, _ = run(capsys, "search", "deployment", "--path", str(workspace / "docs"))
    assert [h["path"] for h in hits] == [str(workspace / "docs" / "runbook.md")]


@pytest.mark.parametrize(
    "query",
    ["NOT agent", "hermes-agent", "read_file", "TODO: fix", "ZX-4471", 'foo"bar', '"', "(", "*", "near(a b)",
     "a AND", "café", "naïve", "x" * 10_000, "section:rollback", "-", "OR OR OR", "^rollback"],
)
def test_hostile_queries_never_fail(capsys: pytest.CaptureFixture[str], workspace: Path, query: str) -> None:
    run(capsys, "--quiet", "index")
    code, hits, err = run(capsys, "search", "--", query)
    assert code == 0
    assert isinstance(hits, list)
    assert "Traceback" not in err


def test_human_output(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    run(capsys, "--quiet", "index")
    code, out, _ = run(capsys, "--human", "search", "rollback")
    assert code == 0
    assert f"{workspace / 'docs' / 'runbook.md'}:1-12" in out
    code, out, _ = run(capsys, "--human", "search", "zzzzqqq")
    # The last line says whether each searched root was searched whole (issue 12).
    assert (code, out.strip()) == (0, "No results.\ncoverage: workspace complete")


def test_human_output_names_the_definition_and_the_copies(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    body = "\n".join(f"        total += price_{i} * quantity_{i}" for i in range(12))
    code_text = f"class Cart:\n    def checkout_total(self):\n        total = 0\n{body}\n        return total\n"
    for folder in ("shop", "vendor"):
        (workspace / folder).mkdir()
        (workspace / folder / "cart.py").write_text(code_text)
    run(capsys, "--quiet", "index")
    code, out, _ = run(capsys, "--human", "search", "checkout_total")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("1. ") and ":1-16  Cart.checkout_total" in first
    copies = [line.strip() for line in out.splitlines() if line.strip().startswith("also: ")]
    assert len(copies) == 1 and copies[0].endswith("cart.py:1-16")


def test_search_before_index_is_a_clean_error(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, data, err = run(capsys, "search", "anything")
    assert (code, data["error"]["code"]) == (66, "index_missing")
    assert "hermes-workspace index" in data["error"]["hint"]


def test_invalid_config_is_a_clean_error(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    (home / "config.yaml").write_text("knowledgebase:\n  chunking:\n    chunk_size: 0\n")
    for args in (["roots", "list"], ["--quiet", "index"], ["search", "x"]):
        code, data, err = run(capsys, *args)
        assert code == 78, args
        assert data["error"]["code"] == "config_invalid"
        assert "chunk_size must be > 0" in data["error"]["message"]
    code, out, err = run(capsys, "--human", "roots", "list")
    assert code == 78
    assert err.startswith("error: knowledgebase.chunking.chunk_size must be > 0")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args",
    [["search", "x", "--bogus"], ["--bogus", "search", "x"], ["frobnicate"], ["search", "x", "--limit", "many"],
     ["--log-level", "loud", "roots", "list"]],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], home: Path, args: list[str]) -> None:
    code, data, err = run(capsys, *args)
    assert code == 2
    assert data["error"]["code"] == "usage_error"
    assert "Traceback" not in err


def test_index_without_the_workspace_extra(
    capsys: pytest.CaptureFixture[str], workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "--quiet", "index")
    (workspace / "notes" / "new.txt").write_text("new file\n")
    monkeypatch.setitem(sys.modules, "tree_sitter_language_pack", None)
    code, data, _ = run(capsys, "--quiet", "index")
    assert (code, data["error"]["code"]) == (69, "extra_missing")
    assert "hermes-workspace[workspace]" in data["error"]["hint"]
    code, hits, _ = run(capsys, "search", "rollback")
    assert code == 0
    assert len(hits) == 1


def test_log_file_gets_per_file_failures(capsys: pytest.CaptureFixture[str], workspace: Path, home: Path) -> None:
    (workspace / "notes" / "bad.txt").write_bytes(b"\x81\x8d\x8f\x90\x9d" * 3)
    code, summary, _ = run(capsys, "--quiet", "index")
    assert code == 0
    assert summary["files_errored"] == 1
    assert summary["errors"][0]["stage"] == "read"
    records = [json.loads(line) for line in (home / "logs" / "workspace.log").read_text().splitlines()]
    failure = next(r for r in records if r.get("event") == "file failed")
    assert failure["path"] == str(workspace / "notes" / "bad.txt")
    assert failure["stage"] == "read"
    assert failure["level"] == "warning"
    assert failure["exception"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["deployment", "--glob", "[!t]*"], ["docs/runbook.md"]),
        (["deployment", "--glob", "[t]*"], ["notes/todo.txt"]),
        (["deployment", "--glob", "notes/*.txt"], ["notes/todo.txt"]),
        (["deployment", "--glob", "*.TXT"], []),
        (["deployment", "--limit", "99999999999999999999999"], ["docs/runbook.md", "notes/todo.txt"]),
    ],
)
def test_glob_and_limit_edges(
    capsys: pytest.CaptureFixture[str], workspace: Path, args: list[str], expected: list[str]
) -> None:
    run(capsys, "--quiet", "index")
    code, hits, _ = run(capsys, "search", *args)
    assert code == 0
    assert sorted(str(Path(h["path"]).relative_to(workspace)) for h in hits) == expected


@pytest.fixture
def glob_tree(workspace: Path) -> Path:
    """Files two directories apart under docs/, and an .rst beside the .md files."""
    (workspace / "docs" / "a").mkdir()
    (workspace / "docs" / "a" / "b.md").write_text("A nested deployment guide.\n")
    (workspace / "docs" / "guide.rst").write_text("A deployment guide in reStructuredText.\n")
    return workspace


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("docs/*.md", ["docs/runbook.md"]),  # '*' stays within docs/: docs/a/b.md is out
        ("docs/*/*.md", ["docs/a/b.md"]),
        ("docs/**/*.md", ["docs/a/b.md", "docs/runbook.md"]),
        ("**/*.md", ["docs/a/b.md", "docs/runbook.md"]),
        ("*.{md,rst}", ["docs/a/b.md", "docs/guide.rst", "docs/runbook.md"]),
        ("{notes/*.txt,*.rst}", ["docs/guide.rst", "notes/todo.txt"]),
    ],
)
def test_glob_path_segments_globstar_and_braces(
    capsys: pytest.CaptureFixture[str], glob_tree: Path, glob: str, expected: list[str]
) -> None:
    run(capsys, "--quiet", "index")
    code, hits, _ = run(capsys, "search", "deployment", "--glob", glob)
    assert code == 0
    assert sorted(str(Path(h["path"]).relative_to(glob_tree)) for h in hits) == expected


@pytest.mark.parametrize(
    ("glob", "fault"),
    [("*.{md", "'{' at position 3 is never closed"), ("[abc", "'[' at position 1 is never closed"), ("", "empty glob")],
)
def test_malformed_glob_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], workspace: Path, glob: str, fault: str
) -> None:
    run(capsys, "--quiet", "index")
    code, data, err = run(capsys, "search", "deployment", "--glob", glob)
    assert code == 2
    assert data["error"]["code"] == "usage_error"
    assert fault in data["error"]["message"]
    assert data["error"]["hint"]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (["search", "x", "--limit", "1.5"], 2, "usage_error"),
        (["search", "x", "--limit", "abc"], 2, "usage_error"),
        (["roots", "add", ""], 2, "usage_error"),
        (["roots", "remove", "  "], 2, "usage_error"),
        (["search", "-x"], 2, "usage_error"),
    ],
)
def test_bad_values_are_usage_errors(
    capsys: pytest.CaptureFixture[str], workspace: Path, args: list[str], code: int, error: str
) -> None:
    run(capsys, "--quiet", "index")
    got, data, err = run(capsys, *args)
    assert (got, data["error"]["code"]) == (code, error)
    assert "Traceback" not in err


def test_dash_hint_mentions_the_separator(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    _, data, _ = run(capsys, "search", "-x")
    assert "put it after --" in data["error"]["hint"]


def test_an_empty_hermes_home_means_the_default_but_an_empty_home_option_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("HERMES_HOME", "")
    monkeypatch.chdir(tmp_path)
    code, data, _ = run(capsys, "roots", "list")
    assert (code, data[0]["path"]) == (0, str(tmp_path / "user" / ".hermes" / "workspace"))
    # `--home "$UNSET"` in a script must not quietly use the user's own index.
    code, data, _ = run(capsys, "--home", "", "roots", "list")
    assert (code, data["error"]["code"], data["error"]["message"]) == (2, "usage_error", "the home folder is empty")
    assert not (tmp_path / "logs").exists()


def test_a_home_that_is_a_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Found in a trial: HERMES_HOME pointing to a file gave "nothing indexed yet", then store_error.
    not_a_folder = tmp_path / "home-file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("HERMES_HOME", str(not_a_folder))
    code, data, _ = run(capsys, "status")
    assert (code, data["error"]["code"]) == (78, "config_invalid")
    assert data["error"]["message"] == f"HERMES_HOME {not_a_folder} is not a folder"
    code, data, _ = run(capsys, "--home", str(not_a_folder), "index")
    assert (code, data["error"]["code"]) == (2, "usage_error")


def test_an_empty_path_prefix_is_a_usage_error(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    run(capsys, "--quiet", "index")
    code, data, _ = run(capsys, "search", "deploy", "--path", "")
    assert (code, data["error"]["message"]) == (2, "the path prefix is empty")


def test_huge_config_values_are_config_errors(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    (home / "config.yaml").write_text("knowledgebase:\n  search:\n    default_limit: 100000000000000000000\n")
    code, data, _ = run(capsys, "search", "x")
    assert (code, data["error"]["code"]) == (78, "config_invalid")
    (home / "config.yaml").write_text("knowledgebase:\n  indexing:\n    max_file_mb: 1.0e+308\n")
    code, data, _ = run(capsys, "--quiet", "index")
    assert (code, data["error"]["code"]) == (78, "config_invalid")


def test_disabled_workspace_is_not_listed(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("workspace:\n  enabled: false\n")
    assert run(capsys, "roots", "list")[1] == []


def test_read_only_commands_leave_no_log_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    code, data, _ = run(capsys, "--home", str(home), "roots", "list")
    assert code == 0
    code, data, _ = run(capsys, "--home", str(home), "search", "x")
    assert data["error"]["code"] == "index_missing"
    assert not (home / "logs").exists()


def test_human_output_escapes_control_characters(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    (workspace / "notes" / "esc.txt").write_text("x\x1b]0;PWNED\x07 \x1b[2J escapeword\n")
    run(capsys, "--quiet", "index")
    code, out, _ = run(capsys, "--human", "search", "escapeword")
    assert code == 0
    assert "\x1b]0" not in out and "\x07" not in out
    assert "\\x1b]0;PWNED\\x07 \\x1b[2J escapeword" in out


@pytest.mark.parametrize("human", [False, True], ids=["json", "human"])
def test_unwritable_stdout_is_exit_74_without_traceback(home: Path, human: bool) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "hermes_workspace", *(["--human"] if human else []), "roots", "list"],
        stdout=open("/dev/full", "w"), stderr=subprocess.PIPE, text=True, timeout=60,
    )
    assert proc.returncode == 74
    assert "Traceback" not in proc.stderr
    assert "cannot write the output" in proc.stderr


def test_a_closed_pipe_in_human_mode_is_exit_74_like_json(home: Path) -> None:
    # Found in a trial: `--human search x | head -1` exited 1 without a word (Rich's own reaction).
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_workspace", "--human", "roots", "list"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the command writes anything
    code = proc.wait(timeout=60)
    err = proc.stderr.read()
    assert code == 74, err
    assert "cannot write the output" in err and "Traceback" not in err


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_stops_a_command_like_ctrl_c(
    capsys: pytest.CaptureFixture[str],
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    name: str,
    code: int,
) -> None:
    # SIGHUP (a closed terminal) used to kill `index` without a word and with leaked semaphores.
    from hermes_workspace.entrypoints import cli
    from hermes_workspace.entrypoints.api import Workspace

    signum = getattr(signal, name)
    before = signal.getsignal(signum)
    assert before is not cli._raise_terminated
    if before is signal.SIG_IGN:
        # Run under nohup (SIGHUP ignored): the CLI rightly keeps an ignored signal ignored
        # (test_an_ignored_sigterm_stays_ignored); test the handler with the default in place.
        signal.signal(signum, signal.SIG_DFL)
        request.addfinalizer(lambda: signal.signal(signum, signal.SIG_IGN))
        before = signal.SIG_DFL

    def roots_then_signal(self: Workspace) -> list[object]:
        if signal.getsignal(signum) is not cli._raise_terminated:  # would end pytest
            raise AssertionError(f"no {name} handler during the command")
        signal.raise_signal(signum)
        raise AssertionError(f"{name} did not stop the command")

    monkeypatch.setattr(Workspace, "roots", roots_then_signal)
    exit_code, data, err = run(capsys, "roots", "list")
    assert exit_code == code
    assert isinstance(data, dict) and data["error"]["code"] == "terminated"
    assert data["error"]["message"] == f"terminated ({name})"
    assert err == ""
    assert signal.getsignal(signum) is before  # the caller's handler is back


def test_an_ignored_sigterm_stays_ignored(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_workspace.entrypoints.api import Workspace

    original = Workspace.roots

    def roots_then_sigterm(self: Workspace) -> list[object]:
        signal.raise_signal(signal.SIGTERM)
        return original(self)

    monkeypatch.setattr(Workspace, "roots", roots_then_sigterm)
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        code, data, _ = run(capsys, "roots", "list")
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert code == 0
    assert isinstance(data, list)


@pytest.mark.parametrize("config", ["", "knowledgebase:\n  embedder:\n    provider: onnx\n"], ids=["keyword", "semantic"])
def test_status_before_the_first_index_is_zero_counts_and_a_note(
    capsys: pytest.CaptureFixture[str], home: Path, config: str
) -> None:
    # Found in a trial: `status` on a fresh home exited 66 (index_missing).
    (home / "config.yaml").write_text(config)
    code, data, _ = run(capsys, "status")
    assert code == 0
    assert (data["indexed"], data["files"], data["chunks"], data["size_bytes"], data["excluded"]) == (
        False, 0, 0, 0, {}
    )
    assert data["note"] == "nothing is indexed yet: run `hermes-workspace index`"
    assert data["semantic"]["status"] == ("indexing" if config else "disabled")
    code, _, _ = run(capsys, "--human", "status")
    assert code == 0


def test_search_with_an_unknown_mode_is_a_usage_error_even_before_the_first_index(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    from hermes_workspace import Workspace
    from hermes_workspace.domain.errors import UsageError

    with Workspace.open(home) as ws, pytest.raises(UsageError, match="unknown search mode 'fuzzy'"):
        ws.search("x", mode="fuzzy")


@pytest.mark.parametrize("query", ["", "   "])
def test_search_with_no_query_is_a_usage_error(capsys: pytest.CaptureFixture[str], workspace: Path, query: str) -> None:
    run(capsys, "--quiet", "index")
    code, data, _ = run(capsys, "search", "--", query)
    assert code == 2 and data["error"]["code"] == "usage_error"
    assert data["error"]["message"] == "search needs a query"


def test_human_roots_output_shows_paths_literally(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found in a trial: `/x/[red]dir[/red]` was shown as `/x/dir` by `--human roots list/remove`.
    monkeypatch.setenv("COLUMNS", "400")
    odd = tmp_path / "[bold]dir"
    odd.mkdir()
    run(capsys, "roots", "add", str(odd))
    _, out, _ = run(capsys, "--human", "roots", "list")
    assert "[bold]dir" in str(out)
    _, out, _ = run(capsys, "--human", "roots", "remove", str(odd))
    assert str(out).strip() == f"Removed {odd}"


def test_human_output_shows_emoji_codes_and_line_feeds_literally(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found in a trial: `:fire:` in a heading or a path was shown as an emoji, and a line feed in a
    # file name broke the one-line-per-hit layout.
    monkeypatch.setenv("COLUMNS", "400")
    folder = home / "workspace" / "notes" / ":thumbs_up:"
    folder.mkdir(parents=True)
    (folder / "two\nlines.md").write_text("# Release :fire:\n\nship it :smile:\n")
    run(capsys, "--quiet", "index")
    code, out, _ = run(capsys, "--human", "search", "ship")
    assert code == 0
    assert ":thumbs_up:/two\\x0alines.md:1-3" in str(out)
    assert "# Release :fire:" in str(out) and "ship it :smile:" in str(out)


def test_a_search_that_falls_back_warns_on_stderr(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    run(capsys, "--quiet", "index")
    code, hits, err = run(capsys, "search", "--mode", "hybrid", "rollback")
    assert code == 0 and len(hits) == 1
    assert "warning" in err and "keyword search only" in err


def test_a_chinese_word_inside_a_sentence_is_found(capsys: pytest.CaptureFixture[str], workspace: Path) -> None:
    (workspace / "notes" / "故障.md").write_text("# 故障记录\n\n周一晚上我们的数据库连接失败了。\n\n原因是端口配置错误。\n")
    (workspace / "notes" / "ja.txt").write_text("データベースに接続できない場合は設定を確認してください。\n")
    run(capsys, "--quiet", "index")
    code, hits, err = run(capsys, "search", "数据库")
    assert code == 0
    assert err == ""  # how a CJK query matched is an informational note: envelope only
    assert [(h["path"], h["line_start"], h["line_end"]) for h in hits] == [(str(workspace / "notes" / "故障.md"), 1, 5)]
    assert "数据库连接失败" in hits[0]["content"]
    code, hits, _ = run(capsys, "search", "データベース")
    assert [h["path"] for h in hits] == [str(workspace / "notes" / "ja.txt")]
    code, envelope, _ = run(capsys, "search", "--envelope", "数据库为什么连接失败")
    assert envelope["hits"][0]["path"] == str(workspace / "notes" / "故障.md")
    assert any("two-character pieces" in n for n in envelope["notes"])
    code, hits, _ = run(capsys, "search", "故障")  # the file name and heading are bigrammed too
    assert [h["path"] for h in hits] == [str(workspace / "notes" / "故障.md")]


def test_roots_remove_takes_a_root_name_too(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path) -> None:
    # Trial: `roots remove NAME` said "not a configured root" though `roots list` shows the name.
    extra = tmp_path / "extra"
    extra.mkdir()
    run(capsys, "roots", "add", str(extra), "--name", "reqsrc")
    code, data, _ = run(capsys, "roots", "remove", "reqsrc")
    assert code == 0 and (data["name"], data["path"]) == ("reqsrc", str(extra))
    code, data, _ = run(capsys, "roots", "remove", "reqsrc")
    assert code == 66 and data["error"]["code"] == "root_not_configured"
    assert "path or name" in data["error"]["hint"]
    code, data, _ = run(capsys, "roots", "remove", "workspace")
    assert code == 2 and data["error"]["message"] == "the primary workspace cannot be removed"
