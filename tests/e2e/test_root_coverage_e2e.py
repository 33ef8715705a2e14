"""Per-root coverage and overlapping roots on a small real corpus (issue 12): the real file
source and SQLite store, through the Python API, the CLI and the MCP server, which must give the
same JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace import Workspace
from hermes_workspace.entrypoints.cli import main
from hermes_workspace.entrypoints.mcp_server import build_server, open_pool
from tests.cli.test_cli import run
from tests.e2e.test_mcp_server import call, document

PARTIAL_NOTES = {"root": "notes", "state": "partial",
                 "unsearched": {"unreadable": 1, "too_large": 1, "excluded": 1, "embedding_pending": 0}}


@pytest.fixture
def corpus(home: Path, tmp_path: Path) -> dict[str, Path]:
    """An indexed workspace whose roots end up in every state:

    - ``workspace`` (the primary): one file, complete;
    - ``notes``: one file indexed, one over the 1 KiB size cap (``max_file_mb: 0.001``), a dangling
      link (unreadable) and a link to a file outside every root (excluded);
    - ``gone``: indexed, then its folder deleted (unavailable: missing);
    - ``flat``: indexed, then its folder replaced by a file (unavailable: not_a_directory);
    - ``later``: added after the index run (unavailable: not_indexed).
    """
    (home / "config.yaml").write_text("knowledgebase:\n  indexing:\n    max_file_mb: 0.001\n")
    (home / "workspace").mkdir()
    (home / "workspace" / "plan.md").write_text("# Plan\n\nThe rollback plan of the gateway.\n")
    folders = {name: tmp_path / name for name in ("notes", "gone", "flat", "later", "outside")}
    for folder in folders.values():
        folder.mkdir()
    notes = folders["notes"]
    (notes / "diary.md").write_text("# Diary\n\nToday the rollback of the gateway worked.\n")
    (notes / "huge.md").write_text("rollback " * 200)  # 1,800 bytes, over the 1,048-byte cap
    (notes / "lost.md").symlink_to(notes / "nowhere.md")  # dangling, inside the root: cannot be read
    (folders["outside"] / "secret.md").write_text("rollback outside every root\n")
    (notes / "elsewhere.md").symlink_to(folders["outside"] / "secret.md")
    (folders["gone"] / "old.md").write_text("an old rollback note\n")
    (folders["flat"] / "f.md").write_text("a flat rollback note\n")
    with Workspace.open(home) as ws:
        for name in ("notes", "gone", "flat"):
            ws.add_root(folders[name], name=name)
        summary = ws.index()
        assert (summary.files_errored, summary.skipped.get("too_large"), summary.excluded.get("outside_roots")) == (
            1, 1, 1)
        ws.add_root(folders["later"], name="later")
    (folders["gone"] / "old.md").unlink()
    folders["gone"].rmdir()
    (folders["flat"] / "f.md").unlink()
    folders["flat"].rmdir()
    folders["flat"].write_text("now a file\n")
    return folders


EXPECTED = [
    {"root": "workspace", "state": "complete"},
    PARTIAL_NOTES,
    {"root": "gone", "state": "unavailable", "reason": "missing"},
    {"root": "flat", "state": "unavailable", "reason": "not_a_directory"},
    {"root": "later", "state": "unavailable", "reason": "not_indexed"},
]


def test_search_and_retrieve_report_each_root_s_coverage(home: Path, corpus: dict[str, Path]) -> None:
    with Workspace.open(home) as ws:
        hits = ws.search("rollback gateway", all_roots=True)
        assert sorted(h.path.name for h in hits) == ["diary.md", "plan.md"]
        assert hits.scope["coverage"] == EXPECTED
        assert hits.to_json()["scope"]["coverage"] == EXPECTED
        # Scoped from inside a root: only its row.
        assert ws.search("rollback", cwd=corpus["notes"]).scope["coverage"] == [PARTIAL_NOTES]
        gone = ws.search("old rollback note", roots=["gone"])
        assert gone.scope["coverage"] == [EXPECTED[2]]
        assert list(gone) == []  # its old.md is still in the index, but the folder is gone: not served
        pack = ws.retrieve("rollback gateway", all_roots=True)
        assert pack.scope["coverage"] == EXPECTED
        assert json.loads(pack.serialize())["scope"]["coverage"] == EXPECTED
        # `more` pages report the coverage frozen with the set.
        first = ws.search("rollback", all_roots=True, limit=1)
        assert ws.more(first.cursor).scope == first.scope


def test_cli_mcp_and_api_give_the_same_coverage(
    capsys: pytest.CaptureFixture[str], home: Path, corpus: dict[str, Path]
) -> None:
    with Workspace.open(home) as ws:
        api = ws.search("rollback gateway", all_roots=True).to_json()["scope"]
        api_pack = ws.retrieve("rollback gateway", all_roots=True).to_json()["scope"]
    code, envelope, _ = run(capsys, "search", "rollback", "gateway", "--all", "--envelope")
    assert (code, envelope["scope"]) == (0, api)
    code, pack, _ = run(capsys, "retrieve", "rollback", "gateway", "--all")
    assert (code, pack["scope"]) == (0, api_pack) and api_pack["coverage"] == EXPECTED
    pool, _ = open_pool(home)
    try:
        server = build_server(pool)
        searched = document(call(server, "legacy", "search", {"query": "rollback gateway", "all_roots": True}))
        retrieved = json.loads(call(server, "legacy", "retrieve", {"query": "rollback gateway", "all_roots": True})
                               .content[0].text)
    finally:
        pool.close()
    assert searched["scope"] == api and retrieved["scope"] == api_pack
    code, text, _ = run(capsys, "--human", "search", "rollback", "gateway", "--all")
    assert code == 0 and text.rstrip().splitlines()[-1] == (
        "coverage: workspace complete; notes partial (1 unreadable, 1 too large, 1 excluded); gone unavailable "
        "(missing); flat unavailable (not a directory); later unavailable (not indexed)")
    code, text, _ = run(capsys, "--human", "retrieve", "rollback", "--root", "notes")
    assert code == 0 and text.rstrip().splitlines()[-1] == (
        "coverage: notes partial (1 unreadable, 1 too large, 1 excluded)")


def test_status_shows_each_root_s_coverage(capsys: pytest.CaptureFixture[str], home: Path,
                                           corpus: dict[str, Path]) -> None:
    code, data, _ = run(capsys, "status")
    assert code == 0
    rows: list[dict[str, Any]] = data["roots"]
    when = rows[0]["indexed_at"]
    assert isinstance(when, str) and when.endswith("Z")
    assert rows == [
        {"path": str(home / "workspace"), "indexed_at": when, **EXPECTED[0]},
        {"path": str(corpus["notes"]), "indexed_at": when, **PARTIAL_NOTES},
        {"path": str(corpus["gone"]), "indexed_at": when, **EXPECTED[2]},
        {"path": str(corpus["flat"]), "indexed_at": when, **EXPECTED[3]},
        {"path": str(corpus["later"]), "indexed_at": None, **EXPECTED[4]},
    ]
    with Workspace.open(home) as ws:
        assert ws.status_report()["roots"] == rows
    code, text, _ = run(capsys, "--human", "status")
    assert "coverage: workspace complete; notes partial (1 unreadable, 1 too large, 1 excluded);" in text


def test_status_before_the_first_index_says_not_indexed(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, data, _ = run(capsys, "status")
    assert code == 0 and data["roots"] == [
        {"root": "workspace", "path": str(home / "workspace"), "indexed_at": None, "state": "unavailable",
         "reason": "missing"}]


def test_a_fixed_root_is_complete_after_the_next_index(home: Path, corpus: dict[str, Path]) -> None:
    notes = corpus["notes"]
    (notes / "huge.md").unlink()
    (notes / "lost.md").unlink()
    (notes / "elsewhere.md").unlink()
    with Workspace.open(home) as ws:
        ws.index()
        assert ws.search("rollback", roots=["notes"]).scope["coverage"] == [{"root": "notes", "state": "complete"}]


# -- overlapping roots through the CLI -----------------------------------------------------------------


def test_roots_add_of_an_overlapping_folder_exits_2_with_root_overlap(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    inside = home / "workspace" / "docs"
    inside.mkdir(parents=True)
    code, data, err = run(capsys, "roots", "add", str(inside))
    assert code == 2 and "Traceback" not in err
    assert data["error"]["code"] == "root_overlap"
    assert data["error"]["message"] == f"{inside} lies inside root workspace ({home / 'workspace'}), which is recursive"
    assert not (home / "config.yaml").exists()
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(project)
    assert run(capsys, "roots", "add", str(project), "--recursive")[0] == 0
    code, data, _ = run(capsys, "roots", "add", str(project / "sub"))
    assert (code, data["error"]["code"]) == (2, "root_overlap")
    assert data["error"]["hint"].endswith(f"hermes-workspace roots add {project} --no-recursive")
    # Through a symlink, `roots add` resolves the path: the same root, nothing to refuse.
    code, data, _ = run(capsys, "roots", "add", str(tmp_path / "alias"))
    assert (code, data["action"]) == (0, "unchanged")


def test_a_config_declaring_overlapping_roots_fails_to_load(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    (home / "config.yaml").write_text(
        f"knowledgebase:\n  roots:\n    - path: {tmp_path / 'other'}\n    - path: {real}\n"
        f"    - path: {tmp_path / 'alias'}\n      recursive: true\n"
    )
    for command in (["status"], ["search", "x"], ["roots", "list"]):
        code, data, err = run(capsys, *command)
        assert code == 78 and "Traceback" not in err, command
        assert data["error"]["code"] == "config_invalid"
        assert data["error"]["message"] == (
            f"knowledgebase.roots[2] ({tmp_path / 'alias'}) is the same folder as knowledgebase.roots[1] "
            f"({real}), through a symbolic link")
    assert main(["--human", "status"]) == 78


def test_an_index_of_changed_paths_keeps_every_root_s_counts(home: Path, corpus: dict[str, Path]) -> None:
    with Workspace.open(home) as ws:
        before = ws.status_report()["roots"]
        (corpus["notes"] / "huge.md").unlink()  # fixed, but only a whole run walks the root again
        summary = ws.index(paths=[corpus["notes"] / "diary.md", corpus["notes"] / "huge.md"])
        assert summary.changed_paths == {"given": 2, "ignored": 0}
        assert ws.status_report()["roots"] == before
        ws.index()
        assert ws.search("rollback", roots=["notes"]).scope["coverage"] == [{
            "root": "notes", "state": "partial",
            "unsearched": {"unreadable": 1, "too_large": 0, "excluded": 1, "embedding_pending": 0}}]



def test_a_root_written_through_a_symlink_keeps_its_name_on_every_hit(home: Path, tmp_path: Path) -> None:
    # Trial: a hand-written root whose path is a link was indexed under the link's target, so
    # hits had root_name null, `--root NAME` found nothing and scoping from inside it had no home.
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("# A\n\nthe kakapo booms\n")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    (home / "config.yaml").write_text(f"knowledgebase:\n  roots:\n    - path: {tmp_path / 'link'}\n"
                                      "      name: linked\n      recursive: true\n")
    with Workspace.open(home) as ws:
        assert [r.path for r in ws.roots() if r.name == "linked"] == [real]  # canonical (seed 004)
        ws.index()
        hits = ws.search("kakapo", roots=["linked"])
        assert [(h.path, h.root_name) for h in hits] == [(real / "a.md", "linked")]
        assert ws.search("kakapo", cwd=tmp_path / "link").scope["home"] == "linked"


def test_an_unavailable_root_s_hits_leave_no_note_behind(home: Path, tmp_path: Path) -> None:
    # Trial: with a root's folder gone, `search --envelope` said "4 hit(s) come after the others
    # because their file already has 3 hits above them" beside no hit at all: the per-file cap
    # ran on hits that the unavailable root's filter then dropped.
    import shutil

    gone, kept = tmp_path / "gone", tmp_path / "kept"
    gone.mkdir()
    kept.mkdir()
    sections = "\n\n".join(f"## Part {i}\n\n" + "the executor pool runs tasks. " * 40 for i in range(8))
    (gone / "big.md").write_text(f"# Big\n\n{sections}\n")
    (kept / "small.md").write_text("# Small\n\nthe executor is elsewhere\n")
    with Workspace.open(home) as ws:
        ws.add_root(gone, recursive=True)
        ws.add_root(kept, recursive=True)
        ws.index()
        before = ws.search("executor pool", all_roots=True, limit=10)
        assert sum(hit.path.name == "big.md" for hit in before) > 3
        assert any("come after the others" in note for note in before.notes)
        shutil.rmtree(gone)
        after = ws.search("executor pool", all_roots=True, limit=10)
    assert [hit.path.name for hit in after] == ["small.md"]
    assert not any("come after the others" in note for note in after.notes)
