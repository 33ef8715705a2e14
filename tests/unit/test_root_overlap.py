"""Overlapping roots and symlink aliases are errors (issue 12, seed 004: "Duplicate and
overlapping roots within one workspace are errors, including symlink aliases"): in config.yaml
(``config_invalid``, naming both entries) and for ``roots add`` (``root_overlap``, naming the
other root). A root may nest inside a non-recursive one: their files never meet."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryConfigRepository
from hermes_workspace.application.roots import AddRoot
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError, RootOverlapError
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.root_names import root_overlap


def _overlap(a: str, a_recursive: bool, b: str, b_recursive: bool) -> str | None:
    return root_overlap(Root(Path(a), a_recursive), Path(a), Root(Path(b), b_recursive), Path(b))


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (("/a", True), ("/a", False), "same"),
        (("/a", False), ("/a", False), "same"),
        (("/a", True), ("/a/b", False), "inside"),
        (("/a", True), ("/a/b/c", True), "inside"),
        (("/a/b", False), ("/a", True), "contains"),
        # A non-recursive root indexes only the files directly in it: a folder inside holds none.
        (("/a", False), ("/a/b", True), None),
        (("/a", False), ("/a/b", False), None),
        (("/a/b", True), ("/a", False), None),
        (("/a", True), ("/ab", True), None),  # a sibling sharing a prefix of the name
        (("/a/b", True), ("/a/c", True), None),
    ],
)
def test_which_roots_overlap(first: tuple[str, bool], second: tuple[str, bool], expected: str | None) -> None:
    assert _overlap(*first, *second) == expected


def _config(roots: list[dict[str, object]], home: Path | None = None, **workspace: object) -> WorkspaceConfig:
    data: dict[str, object] = {"knowledgebase": {"roots": roots}}
    if workspace:
        data["workspace"] = workspace
    return WorkspaceConfig.from_dict(data, base_dir=home)


def test_config_refuses_a_root_inside_a_recursive_one_naming_both_entries() -> None:
    with pytest.raises(ConfigError) as info:
        _config([{"path": "/data/a", "recursive": True}, {"path": "/data/b"}, {"path": "/data/a/notes"}])
    error = info.value
    assert (error.code, error.exit_code) == ("config_invalid", 78)
    assert error.message == (
        "knowledgebase.roots[2] (/data/a/notes) lies inside knowledgebase.roots[0] (/data/a), which is "
        "recursive: its files would be indexed twice")
    assert error.hint == "Remove knowledgebase.roots[2], or make knowledgebase.roots[0] non-recursive (recursive: false)."


def test_config_refuses_a_recursive_root_holding_an_earlier_one() -> None:
    with pytest.raises(ConfigError) as info:
        _config([{"path": "/data/a/notes"}, {"path": "/data/a", "recursive": True}])
    assert info.value.message == (
        "knowledgebase.roots[1] (/data/a) contains knowledgebase.roots[0] (/data/a/notes) and is recursive: the "
        "files of knowledgebase.roots[0] would be indexed twice")
    assert info.value.hint == "Remove knowledgebase.roots[0], or make knowledgebase.roots[1] non-recursive (recursive: false)."


def test_config_refuses_a_symlink_alias_of_another_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    with pytest.raises(ConfigError) as info:
        _config([{"path": str(real)}, {"path": str(tmp_path / "alias"), "recursive": True}])
    assert info.value.message == (
        f"knowledgebase.roots[1] ({tmp_path / 'alias'}) is the same folder as knowledgebase.roots[0] ({real}), "
        "through a symbolic link")
    # Through a link to a folder above: the alias's folder lies inside the recursive root.
    (tmp_path / "up").symlink_to(tmp_path)
    with pytest.raises(ConfigError, match=r"knowledgebase.roots\[1\] .* lies inside knowledgebase.roots\[0\]"):
        _config([{"path": str(tmp_path), "recursive": True}, {"path": str(tmp_path / "up" / "real")}])


def test_config_refuses_roots_inside_or_holding_the_primary_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(ConfigError) as info:
        _config([{"path": "workspace/docs"}], home=home)  # relative to the config's folder, HOME
    assert info.value.message == (
        f"knowledgebase.roots[0] ({home / 'workspace' / 'docs'}) lies inside the primary workspace "
        f"({home / 'workspace'}), which is recursive: its files would be indexed twice")
    assert "set workspace.enabled: false" in info.value.hint
    with pytest.raises(ConfigError, match=r"contains workspace.path \(/srv/ws\) and is recursive"):
        _config([{"path": "/srv", "recursive": True}], home=home, path="/srv/ws")
    # Without the primary workspace (disabled), or with a non-recursive root holding it: no overlap.
    assert len(_config([{"path": str(home / "workspace" / "docs")}], home=home, enabled=False).roots) == 1
    assert len(_config([{"path": str(tmp_path)}], home=home).roots) == 1


def test_config_allows_nesting_in_a_non_recursive_root_and_missing_roots() -> None:
    config = _config([{"path": "/nowhere/a"}, {"path": "/nowhere/a/b", "recursive": True}, {"path": "/nowhere/c"}])
    assert [str(r.path) for r in config.roots] == ["/nowhere/a", "/nowhere/a/b", "/nowhere/c"]


# -- roots add ---------------------------------------------------------------------------------------


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """HOME (its primary workspace HOME/workspace) and folders beside it (resolved, as roots are)."""
    base = tmp_path.resolve()
    paths = {name: base / name for name in ("home/workspace/docs", "proj/src", "other")}
    for path in paths.values():
        path.mkdir(parents=True)
    (base / "link").symlink_to(base / "proj")
    return {"base": base, "home": base / "home", **{p.split("/")[0]: base / p.split("/")[0] for p in paths}}


def _add(repo: InMemoryConfigRepository, home: Path, path: Path, **options: object) -> object:
    return AddRoot(repo, home).execute(path, **options)


def test_roots_add_inside_the_primary_workspace_is_refused(folders: dict[str, Path]) -> None:
    repo = InMemoryConfigRepository()
    docs = folders["home"] / "workspace" / "docs"
    with pytest.raises(RootOverlapError) as info:
        _add(repo, folders["home"], docs)
    error = info.value
    assert (error.code, error.exit_code) == ("root_overlap", 2)
    assert error.message == f"{docs} lies inside root workspace ({folders['home'] / 'workspace'}), which is recursive"
    assert error.hint == (f"Its files are indexed already as part of workspace: narrow a search with "
                          f"--root workspace --path {docs}.")
    assert repo.saves == 0


def test_roots_add_inside_or_around_a_recursive_root_is_refused(folders: dict[str, Path]) -> None:
    repo, home, proj = InMemoryConfigRepository(), folders["home"], folders["proj"]
    _add(repo, home, proj, recursive=True)
    with pytest.raises(RootOverlapError) as info:
        _add(repo, home, proj / "src")
    assert info.value.message == f"{proj / 'src'} lies inside root proj ({proj}), which is recursive"
    assert info.value.hint.endswith(f"hermes-workspace roots add {proj} --no-recursive")
    with pytest.raises(RootOverlapError) as info:
        _add(repo, home, folders["base"], recursive=True)
    assert info.value.message == (
        f"{folders['base']} contains root workspace ({home / 'workspace'}): added recursively, it would index "
        "those files twice")
    assert repo.saves == 1  # only the first add was written
    # Non-recursive, it indexes its own files only: allowed.
    assert _add(repo, home, folders["base"]).action == "added"  # type: ignore[attr-defined]


def test_roots_add_of_a_symlink_alias_and_making_a_root_recursive_around_another(folders: dict[str, Path]) -> None:
    repo, home, proj = InMemoryConfigRepository(), folders["home"], folders["proj"]
    # config.yaml written by hand may keep a link as written; `roots add` resolves the new path.
    repo.config = repo.config.with_roots((Root(folders["base"] / "link", name="alias"),))
    with pytest.raises(RootOverlapError) as info:
        _add(repo, home, proj)
    assert info.value.message == f"{proj} is the same folder as root alias ({folders['base'] / 'link'}), through a symbolic link"
    assert "hermes-workspace roots remove" in info.value.hint
    repo.config = repo.config.with_roots((Root(proj / "src", name="src"), Root(proj, name="proj")))
    with pytest.raises(RootOverlapError, match=rf"^{proj} contains root src \({proj / 'src'}\)"):
        _add(repo, home, proj, recursive=True)  # an update of proj: it would now hold src
    assert repo.saves == 0
