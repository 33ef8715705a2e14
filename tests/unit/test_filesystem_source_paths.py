"""FilesystemSource.discover_paths: every path of a tree rich in rules (nested ignore files of
both families, re-includes, secrets, version control, links, a loop, a non-recursive root) is
judged exactly as the whole walk judges it, without listing any folder above it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.domain.model import ChangedScope, DiscoveryProblem, ExcludedPath, Root, SkippedFile, SourceFile

TREE: dict[str, str] = {
    "gitroot/.gitignore": "*.tmp\nbuild/\n",
    "gitroot/a.md": "a\n",
    "gitroot/x.tmp": "tmp\n",
    "gitroot/build/out.md": "built\n",
    "gitroot/sub/.gitignore": "!keep.tmp\nlocal.md\n",
    "gitroot/sub/keep.tmp": "kept\n",
    "gitroot/sub/other.tmp": "tmp\n",
    "gitroot/sub/local.md": "local\n",
    "gitroot/sub/deep/d.md": "deep\n",
    "gitroot/sub/deep/.env": "SECRET=1\n",
    "gitroot/sub/deep/id_rsa": "key\n",
    "gitroot/.git/config": "[core]\n",
    "gitroot/img/p.png": "png\n",
    "gitroot/empty.md": "",
    "gitroot/big.md": "x" * 2000,
    "hermroot/.hermesignore": "drafts/\n!.env.example\n",
    "hermroot/.env.example": "EXAMPLE=1\n",
    "hermroot/drafts/d.md": "draft\n",
    "hermroot/n/.hermesignore": "z.md\n",
    "hermroot/n/.gitignore": "y.md\n",  # not the root's family: content, and its rules unread
    "hermroot/n/y.md": "y\n",
    "hermroot/n/z.md": "z\n",
    "flat/top.md": "top\n",
    "flat/sub/below.md": "below\n",
}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    base = tmp_path.resolve()
    for rel, text in TREE.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    (base / "gitroot" / "sub" / "link.md").symlink_to(base / "gitroot" / "a.md")
    (base / "gitroot" / "sub" / "outside.md").symlink_to(base / "flat" / "sub" / "below.md")
    (base / "gitroot" / "sub" / "deep" / "loop").symlink_to(base / "gitroot" / "sub", target_is_directory=True)
    return base


def roots(base: Path) -> list[Root]:
    return [Root(base / "gitroot", recursive=True), Root(base / "hermroot", recursive=True),
            Root(base / "flat", recursive=False)]


def comparable(items: list) -> set[tuple[str, str, str]]:
    return {(type(i).__name__, str(i.path), str(getattr(i, "reason", getattr(i, "category", ""))))
            for i in items if isinstance(i, (SourceFile, SkippedFile, ExcludedPath, DiscoveryProblem))}


def expected_for(whole: list, path: Path) -> set[tuple[str, str, str]]:
    """The whole walk's items at or under ``path``, and the excluded folders above it."""
    return comparable([
        i for i in whole
        if i.path == path or path in i.path.parents
        or (isinstance(i, ExcludedPath) and i.path in path.parents)
    ])


def every_path(base: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d != "loop"]
        found += [Path(folder) / name for name in dirs + files]
    return sorted(found)


def test_every_path_is_judged_as_the_whole_walk_judges_it(base: Path) -> None:
    source = FilesystemSource(max_file_bytes=1000)
    whole = list(source.discover(roots(base)))
    checked = 0
    for path in every_path(base):
        if path.name in (".gitignore", ".hermesignore") or (path.parent == base / "flat" / "sub"):
            continue  # an ignore file stands for its folder; a grandchild of flat: no root covers it
        items = [i for i in source.discover_paths(roots(base), [path]) if not isinstance(i, ChangedScope)]
        assert comparable(items) == expected_for(whole, path), path
        checked += 1
    assert checked >= 25


def test_the_secret_and_the_ignored_are_out_and_the_reincluded_in(base: Path) -> None:
    source = FilesystemSource(max_file_bytes=1000)
    paths = [base / "gitroot" / "sub" / "deep" / ".env", base / "gitroot" / "x.tmp", base / "gitroot" / "sub" / "keep.tmp",
             base / "hermroot" / ".env.example", base / "gitroot" / ".git" / "config"]
    items = list(source.discover_paths(roots(base), paths))
    assert {str(i.path.relative_to(base)) for i in items if isinstance(i, SourceFile)} == {
        "gitroot/sub/keep.tmp", "hermroot/.env.example"}
    assert {(str(i.path.relative_to(base)), i.category) for i in items if isinstance(i, ExcludedPath)} == {
        ("gitroot/sub/deep/.env", "secret"), ("gitroot/.git", "version_control")}


def test_placing_paths(base: Path) -> None:
    source = FilesystemSource(max_file_bytes=1000)
    given = [base / "gitroot" / "sub" / ".gitignore", base / "flat" / "sub" / "below.md", base / "flat" / "sub",
             base, base / "gitroot" / "gone.md", Path("/nowhere/at/all.md")]
    scopes = [i for i in source.discover_paths(roots(base), given) if isinstance(i, ChangedScope)]
    assert scopes == [
        ChangedScope(given[0], base / "gitroot" / "sub"),  # an ignore file: its folder
        ChangedScope(given[1], None, "outside_roots"),  # a grandchild of a non-recursive root
        ChangedScope(given[2], base / "flat" / "sub"),  # a child folder: covered, and yields nothing
        ChangedScope(base, base / "gitroot"),  # a folder holding roots: each root
        ChangedScope(base, base / "hermroot"),
        ChangedScope(base, base / "flat"),
        ChangedScope(given[4], base / "gitroot" / "gone.md"),  # gone: its scope only
        ChangedScope(given[5], None, "outside_roots"),
    ]


def test_the_index_folder_is_never_placed(base: Path) -> None:
    index = base / "gitroot" / ".index"
    index.mkdir()
    (index / "workspace.sqlite").write_text("db")
    source = FilesystemSource(max_file_bytes=1000, internal_dirs=[index])
    items = list(source.discover_paths(roots(base), [index / "workspace.sqlite", index]))
    assert items == [ChangedScope(index / "workspace.sqlite", None, "workspace_internal"),
                     ChangedScope(index, None, "workspace_internal")]


def test_only_the_folders_of_the_changed_path_are_looked_at(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    real_scandir = os.scandir

    def recording(path="."):  # type: ignore[no-untyped-def]
        listed.append(os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", recording)
    source = FilesystemSource(max_file_bytes=1000)
    items = list(source.discover_paths(roots(base), [base / "gitroot" / "sub" / "deep" / "d.md"]))
    assert listed == []  # not the root, not sub, not deep
    assert [str(i.path.relative_to(base)) for i in items if isinstance(i, SourceFile)] == ["gitroot/sub/deep/d.md"]
    list(source.discover_paths(roots(base), [base / "gitroot" / "sub" / "deep"]))
    assert listed == [str(base / "gitroot" / "sub" / "deep")]  # a changed folder is listed, and what is below


def test_a_changed_folder_is_walked_whole_beside_a_sibling_sharing_its_prefix(base: Path) -> None:
    (base / "gitroot" / "sub-x").mkdir()
    (base / "gitroot" / "sub-x" / "s.md").write_text("s\n")
    source = FilesystemSource(max_file_bytes=1000)
    sub = base / "gitroot" / "sub"
    items = list(source.discover_paths(roots(base), [sub, base / "gitroot" / "sub-x", sub / "deep" / "d.md"]))
    whole = list(source.discover(roots(base)))
    assert comparable([i for i in items if not isinstance(i, ChangedScope)]) == (
        expected_for(whole, sub) | expected_for(whole, base / "gitroot" / "sub-x"))
    assert "gitroot/sub/keep.tmp" in {str(i.path.relative_to(base)) for i in items if isinstance(i, SourceFile)}


def test_a_code_profile_root_chooses_the_same_extensions_for_a_changed_path(tmp_path: Path) -> None:
    # The trial's bug: the guided walk lists nothing, so the marker files were never seen and
    # every changed file of a code-profile root was judged "not this project's type" and pruned.
    repo = tmp_path.resolve() / "repo"
    for rel in ("pyproject.toml", "a.py", "pkg/b.py", "notes.md", "data.csv", "tool/x.go"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("print('kiwi')\n")
    root = Root(repo, recursive=True, profile="code")
    source = FilesystemSource(max_file_bytes=1000)
    whole = list(source.discover([root]))
    assert {i.path.name for i in whole if isinstance(i, SourceFile)} == {"a.py", "b.py", "notes.md"}
    for rel in ("a.py", "pkg/b.py", "pkg", "notes.md", "data.csv", "tool/x.go"):
        path = repo / rel
        items = [i for i in source.discover_paths([root], [path]) if not isinstance(i, ChangedScope)]
        assert comparable(items) == expected_for(whole, path), rel
