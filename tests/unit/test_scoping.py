"""Scoping from the working directory (issue 12, second slice): the home root, widening to every
root when it has no hit, explicit selections that never widen, roots nested in a non-recursive
root, linked worktrees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.application.roots import home_root, linked_worktree
from hermes_workspace.application.search import SearchWorkspace
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.model import Chunk, FileRecord, Root, RootCounts, scope_json
from hermes_workspace.domain.root_names import containing_root


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, list[Root]]:
    """``ws`` (the primary workspace), ``code`` (non-recursive: its own files only) holding the
    root ``code/proj``, and ``other`` beside them; each folder exists (``tmp_path`` resolved, as
    roots are stored). Roots overlap nowhere (issue 12: the config refuses overlaps), so the only
    nesting is inside a non-recursive root."""
    base = tmp_path.resolve()
    for folder in ("ws/notes", "code/proj/src", "code/notes", "other", "outside"):
        (base / folder).mkdir(parents=True)
    roots = [Root(base / "ws", recursive=True, primary=True, name="workspace"),
             Root(base / "code", recursive=False, name="code"),
             Root(base / "code" / "proj", recursive=True, name="proj"),
             Root(base / "other", recursive=True, name="other")]
    return base, roots


ALL = ["workspace", "code", "proj", "other"]


def _scope(roots: list[str], home: str | None, widened: bool) -> dict[str, Any]:
    """The expected ``scope``: every root of these tests was indexed whole (``complete``)."""
    return {"roots": roots, "home": home, "widened": widened,
            "coverage": [{"root": name, "state": "complete"} for name in roots]}


def _search(base: Path, roots: list[Root]) -> SearchWorkspace:
    """A search over one file per root: ``ws/a.md``, ``code/d.md`` and ``code/proj/b.md`` about
    rollbacks, ``other/c.md`` about rollbacks and quokkas (only ``other`` has a quokka). Every
    root has its counts recorded, with nothing left out."""
    store = InMemoryIndexStore()
    for relative, text in (("ws/a.md", "deployment rollback in the workspace"),
                           ("code/d.md", "deployment rollback of the code folder"),
                           ("code/proj/b.md", "deployment rollback of the project"),
                           ("other/c.md", "deployment rollback and a quokka")):
        record = FileRecord(base / relative, base, "h", "s", len(text), 1, "2026-01-01T00:00:00Z",
                            "2026-01-01T00:00:00Z")
        store.replace_file(record, [Chunk(0, text, 0, len(text), 1, 1, 5, "text")])
    store.record_root_counts({root.path: RootCounts("2026-01-01T00:00:00Z") for root in roots})
    return SearchWorkspace(store=store, default_limit=10, roots=roots)


def _files(hits: list) -> list[str]:
    return sorted(h.path.name for h in hits)


def test_inside_a_root_its_files_come_first_and_nothing_else(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    hits = _search(base, roots).execute("rollback", cwd=base / "code" / "proj" / "src")
    assert _files(hits) == ["b.md"]
    assert hits.scope == _scope(["proj"], "proj", False)


def test_a_home_root_without_any_hit_widens_to_every_root(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    hits = _search(base, roots).execute("quokka", cwd=str(base / "code" / "proj"))
    assert _files(hits) == ["c.md"]
    assert hits.scope == _scope(ALL, "proj", True)
    # Nothing anywhere: still widened, and still empty.
    none = _search(base, roots).execute("zebra", cwd=base / "code" / "proj")
    assert list(none) == [] and none.scope == _scope(ALL, "proj", True)


def test_a_path_filter_outside_the_home_root_widens(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    hits = _search(base, roots).execute("rollback", cwd=base / "code" / "proj", path=str(base / "other"))
    assert _files(hits) == ["c.md"]
    assert hits.scope["widened"] is True


def test_explicit_roots_never_widen_and_have_no_home(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    hits = _search(base, roots).execute("quokka", cwd=base / "code" / "proj", roots=["proj"])
    assert list(hits) == []
    assert hits.scope == _scope(["proj"], None, False)


def test_all_roots_ignores_the_working_directory(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    hits = _search(base, roots).execute("rollback", cwd=base / "code" / "proj", all_roots=True)
    assert _files(hits) == ["a.md", "b.md", "c.md", "d.md"]
    assert hits.scope == _scope(ALL, None, False)
    with pytest.raises(UsageError, match="give root names or all roots, not both"):
        _search(base, roots).execute("rollback", roots=["proj"], all_roots=True)


def test_outside_every_root_or_without_a_working_directory_every_root(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    for cwd in (base / "outside", None):
        hits = _search(base, roots).execute("rollback", cwd=cwd)
        assert _files(hits) == ["a.md", "b.md", "c.md", "d.md"], cwd
        assert hits.scope == _scope(ALL, None, False)


def test_the_deepest_root_is_home_and_a_non_recursive_home_holds_its_own_files_only(
    layout: tuple[Path, list[Root]],
) -> None:
    base, roots = layout
    search = _search(base, roots)
    from_code = search.execute("rollback", cwd=base / "code" / "notes")
    # code/proj/b.md is under code's folder but is proj's file: code indexes its own files only.
    assert _files(from_code) == ["d.md"]
    assert from_code.scope == _scope(["code"], "code", False)
    assert _files(search.execute("rollback", roots=["code"])) == ["d.md"]  # the same when chosen explicitly
    assert search.execute("rollback", cwd=base / "code" / "proj").scope["home"] == "proj"
    assert search.execute("rollback", cwd=base / "ws" / "notes").scope["home"] == "workspace"


def test_a_symlink_to_a_root_scopes_as_the_root(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    (base / "link").symlink_to(base / "other")
    hits = _search(base, roots).execute("rollback", cwd=f"{base}/link")
    assert hits.scope == _scope(["other"], "other", False)


def test_containing_root_counts_a_non_recursive_root_and_not_a_sibling_prefix() -> None:
    roots = [Root(Path("/a"), recursive=False, name="a"), Root(Path("/a/b"), recursive=True, name="b")]
    assert containing_root(Path("/a/x/y"), roots) == roots[0]
    assert containing_root(Path("/a/b/c"), roots) == roots[1]
    assert containing_root(Path("/a/bc"), roots) == roots[0]  # /a/bc is not inside /a/b
    assert containing_root(Path("/ab"), roots) is None


# -- linked git worktrees -------------------------------------------------------------------------


def _worktree(base: Path, main: Path, gitdir: str | None = None) -> Path:
    """A linked worktree of ``main`` at ``base/wt/feature`` as ``git worktree add`` lays it out:
    a ``.git`` file naming ``main/.git/worktrees/feature`` (``gitdir`` overrides the line)."""
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True, exist_ok=True)
    top = base / "wt" / "feature"
    (top / "src").mkdir(parents=True)
    (top / ".git").write_text(f"gitdir: {gitdir or main / '.git' / 'worktrees' / 'feature'}\n")
    return top


def test_a_linked_worktree_of_a_root_scopes_as_that_root(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    top = _worktree(base, base / "code" / "proj")
    assert linked_worktree(top / "src") == (top, base / "code" / "proj")
    hits = _search(base, roots).execute("rollback", cwd=top / "src")
    assert _files(hits) == ["b.md"]  # the root's own indexed files, not the worktree's
    assert hits.scope == _scope(["proj"], "proj", False)
    widened = _search(base, roots).execute("quokka", cwd=top)
    assert widened.scope == _scope(ALL, "proj", True)


def test_a_worktree_folder_maps_into_nested_roots_of_its_main_repository(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    top = _worktree(base, base / "code")  # a worktree of the code folder's repository
    (top / "proj").mkdir()
    assert home_root(top / "proj", roots) == roots[2]  # wt/feature/proj stands for code/proj
    assert home_root(top / "src", roots) == roots[1]


def test_a_relative_gitdir_is_read_from_the_worktree_folder(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    top = _worktree(base, base / "other", gitdir="../../other/.git/worktrees/feature")
    assert linked_worktree(top) == (top, base / "other")
    assert home_root(top / "src", roots) == roots[3]


def test_a_root_inside_the_worktree_itself_is_nearer(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    top = _worktree(base, base / "code" / "proj")
    indexed = Root(top, recursive=True, name="feature")
    assert home_root(top / "src", [*roots, indexed]) == indexed


def test_what_is_not_a_linked_worktree(layout: tuple[Path, list[Root]]) -> None:
    base, roots = layout
    # A submodule's .git file points into .git/modules: not a worktree.
    sub = _worktree(base, base / "code" / "proj", gitdir=str(base / "code" / "proj" / ".git" / "modules" / "lib"))
    assert linked_worktree(sub / "src") is None
    assert home_root(sub / "src", roots) is None
    # An ordinary repository (a .git folder) inside a worktree stops the walk up.
    inner = sub / "vendored"
    (inner / ".git").mkdir(parents=True)
    assert linked_worktree(inner) is None
    # Not a gitdir line, or not text.
    (sub / ".git").write_text("nonsense\n")
    assert linked_worktree(sub) is None
    (sub / ".git").write_bytes(b"\xff\xfe\x00gitdir")
    assert linked_worktree(sub) is None
    assert linked_worktree(base / "outside") is None


def test_scope_json_reads_scopes_recorded_before_home_and_coverage() -> None:
    assert scope_json({"roots": ["a"], "widened": True}) == {"roots": ["a"], "home": None, "widened": True,
                                                              "coverage": []}
    assert scope_json(None) == {"roots": [], "home": None, "widened": False, "coverage": []}
    assert scope_json({"roots": ["a"], "home": "a", "widened": False}) == {"roots": ["a"], "home": "a",
                                                                           "widened": False, "coverage": []}
    row = {"root": "a", "state": "complete"}
    assert scope_json({"roots": ["a"], "coverage": [row, "junk"]})["coverage"] == [row]
