"""Roots and search use cases built from fakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryConfigRepository, InMemoryIndexStore
from hermes_workspace.application.roots import AddRoot, ListRoots, RemoveRoot
from hermes_workspace.application.search import SearchWorkspace
from hermes_workspace.domain.errors import RootNotConfiguredError, RootNotFoundError, UsageError
from hermes_workspace.domain.model import Chunk, FileRecord, Root
from hermes_workspace.domain.query import parse_query


def test_list_roots_starts_with_the_recursive_primary_workspace(tmp_path: Path) -> None:
    repo = InMemoryConfigRepository()
    assert ListRoots(repo, tmp_path).execute() == [
        Root(tmp_path / "workspace", recursive=True, primary=True, name="workspace")
    ]


def test_add_root_resolves_symlinks_and_is_idempotent(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    repo = InMemoryConfigRepository()
    added = AddRoot(repo, tmp_path).execute(link, recursive=True)
    assert (added.root, added.action, added.previous) == (Root(real, recursive=True, name="real"), "added", None)
    again = AddRoot(repo, tmp_path).execute(real, recursive=True)
    assert (again.action, again.message) == (
        "unchanged", f"{real} is already a root (recursive); nothing changed (pass --no-recursive to change it)"
    )
    assert repo.config.roots == (Root(real, recursive=True),)
    assert repo.saves == 1
    changed = AddRoot(repo, tmp_path).execute(real, recursive=False)
    assert (changed.action, changed.previous) == ("updated", Root(real, recursive=True, name="real"))
    assert changed.message == f"{real} was already a root; changed from recursive to top level only"
    assert repo.config.roots == (Root(real, recursive=False),)


def test_adding_an_existing_root_without_a_choice_keeps_it_recursive(tmp_path: Path) -> None:
    # Found in a trial: `roots add X` on a recursive root silently made it non-recursive.
    repo = InMemoryConfigRepository()
    # HOME (whose primary workspace is HOME/workspace) beside the root: a recursive root
    # holding the primary workspace would index it twice (issue 12: overlapping roots are refused).
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    AddRoot(repo, home).execute(project, recursive=True)
    kept = AddRoot(repo, home).execute(project)
    assert (kept.action, kept.recursive) == ("unchanged", True)
    assert repo.config.roots == (Root(project, recursive=True),) and repo.saves == 1
    new = AddRoot(repo, home).execute(tmp_path)  # holds both, but indexes its own files only
    assert (new.action, new.recursive) == ("added", False)


def test_add_root_rejects_missing_paths_and_files(tmp_path: Path) -> None:
    repo = InMemoryConfigRepository()
    with pytest.raises(RootNotFoundError) as info:
        AddRoot(repo, tmp_path).execute(tmp_path / "nope")
    assert info.value.code == "root_not_found"
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(RootNotFoundError):
        AddRoot(repo, tmp_path).execute(tmp_path / "file.txt")
    assert repo.saves == 0


def test_remove_root(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    repo = InMemoryConfigRepository()
    AddRoot(repo, tmp_path).execute(tmp_path / "a")
    assert RemoveRoot(repo, tmp_path).execute(tmp_path / "a") == Root(tmp_path / "a", name="a")
    assert repo.config.roots == ()
    with pytest.raises(RootNotConfiguredError):
        RemoveRoot(repo, tmp_path).execute(tmp_path / "a")
    with pytest.raises(UsageError):
        RemoveRoot(repo, tmp_path).execute(tmp_path / "workspace")


def _store_with(paths: list[str]) -> InMemoryIndexStore:
    store = InMemoryIndexStore()
    for p in paths:
        text = f"deployment rollback notes {p}"  # distinct texts: copies would collapse into one hit
        record = FileRecord(Path(p), Path("/"), "h", "s", len(text), 1, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
        store.replace_file(record, [Chunk(0, text, 0, len(text), 1, 1, 4, "text")])
    return store


def test_search_clamps_limit_and_uses_the_default() -> None:
    store = _store_with([f"/w/f{i}.txt" for i in range(30)])
    search = SearchWorkspace(store, default_limit=20)
    assert len(search.execute("deployment")) == 20
    assert len(search.execute("deployment", limit=0)) == 1
    assert len(search.execute("deployment", limit=-5)) == 1
    assert len(search.execute("deployment", limit=7)) == 7


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "a", "? ! ,", '"', "*"])
def test_search_without_words_is_an_empty_result(text: str) -> None:
    assert SearchWorkspace(_store_with(["/w/a.txt"]), default_limit=20).execute(text) == []


def test_search_path_prefix_is_made_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store_with(["/w/docs/a.txt", "/w/docsx/b.txt", "/w/other/c.txt"])
    monkeypatch.chdir("/")
    search = SearchWorkspace(store, default_limit=20)
    assert [str(h.path) for h in search.execute("notes", path="w/docs/")] == ["/w/docs/a.txt"]
    assert sorted(str(h.path) for h in search.execute("notes", path="/w/docs")) == ["/w/docs/a.txt", "/w/docsx/b.txt"]


def _store_of(texts: dict[str, str]) -> InMemoryIndexStore:
    """A fake store holding one one-chunk file per ``path: text``."""
    store = InMemoryIndexStore()
    for p, text in texts.items():
        record = FileRecord(Path(p), Path("/w"), "h", "s", len(text), 1, "t", "t")
        store.replace_file(record, [Chunk(0, text, 0, len(text), 1, 1, 3, "code")])
    return store


def test_exact_compound_matches_come_first() -> None:
    texts = {
        "/w/noisy.py": "read the file; read another file; read file after file, read file",
        "/w/defines.py": "def read_file(path):\n    return path",
        "/w/other.py": "unrelated words only",
    }
    store = _store_of(texts)
    plain = store.search(parse_query("read_file"))
    assert [h.path.name for h in plain] == ["noisy.py", "defines.py"]
    search = SearchWorkspace(store, default_limit=20)
    assert [h.path.name for h in search.execute("read_file()")] == ["defines.py", "noisy.py"]
    assert [h.path.name for h in search.execute("READ_FILE", limit=1)] == ["defines.py"]


def test_exact_compound_match_respects_word_boundaries() -> None:
    texts = {
        "/w/thread.py": "thread_file read file read file read file",
        "/w/files.py": "_read_files read file read file read file",
        "/w/defines.py": "def read_file(path):",
    }
    store = _store_of(texts)
    assert SearchWorkspace(store, default_limit=20).execute("read_file")[0].path.name == "defines.py"


def test_limit_is_capped() -> None:
    from hermes_workspace.application.search import MAX_LIMIT

    store = _store_with([f"/w/f{i}.txt" for i in range(3)])
    assert len(SearchWorkspace(store, default_limit=20).execute("notes", limit=10**30)) == 3
    assert MAX_LIMIT == 10_000


def test_search_path_prefix_resolves_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    store = _store_with([str(real / "a.txt"), str(tmp_path / "other" / "b.txt")])
    hits = SearchWorkspace(store, default_limit=20).execute("notes", path=str(tmp_path / "link"))
    assert [h.path for h in hits] == [real / "a.txt"]
