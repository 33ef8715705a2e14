"""Named roots (issue 12, first slice): naming rules, config validation, add/rename, the YAML
round trip, ``roots=`` selection and ``root_name`` on hits."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryConfigRepository
from hermes_workspace.adapters.yaml_config import YamlConfigRepository
from hermes_workspace.application.roots import AddRoot, ListRoots, RenameRoot
from hermes_workspace.application.search import SearchWorkspace
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError, UsageError
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.root_names import covering_root, default_root_name, name_roots
from tests.unit.test_roots_and_search import _store_with


def _names(config: WorkspaceConfig, home: Path) -> list[str | None]:
    return [r.name for r in config.all_roots(home)]


# -- naming rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "name"),
    [("notes", "notes"), ("My Notes", "My-Notes"), ("café.v2", "caf--v2"), ("a_b-c", "a_b-c"), ("", "root"),
     ("x" * 70, "x" * 64)],
)
def test_default_name_is_the_sanitized_folder_name(folder: str, name: str) -> None:
    assert default_root_name(Path("/data") / folder if folder else Path("/")) == name


def test_derived_names_are_made_unique_in_root_order_and_configured_names_win(tmp_path: Path) -> None:
    config = WorkspaceConfig.from_dict({"knowledgebase": {"roots": [
        {"path": "/a/docs"}, {"path": "/b/docs"}, {"path": "/c/docs", "name": "docs"}, {"path": "/d/docs"},
        {"path": "/e/workspace"},
    ]}})
    assert _names(config, tmp_path) == ["workspace", "docs-2", "docs-3", "docs", "docs-4", "workspace-2"]
    assert _names(config, tmp_path) == _names(WorkspaceConfig.from_dict({"knowledgebase": {"roots": [
        {"path": "/a/docs"}, {"path": "/b/docs"}, {"path": "/c/docs", "name": "docs"}, {"path": "/d/docs"},
        {"path": "/e/workspace"},
    ]}}), tmp_path)  # stable: the same config gives the same names


def test_a_suffixed_name_stays_within_64_characters() -> None:
    roots = [Root(Path("/a") / ("x" * 64)), Root(Path("/b") / ("x" * 64))]
    assert [r.name for r in name_roots(roots)] == ["x" * 64, "x" * 62 + "-2"]


def test_the_primary_name_comes_from_workspace_name(tmp_path: Path) -> None:
    config = WorkspaceConfig.from_dict({"workspace": {"name": "home"}, "knowledgebase": {"roots": ["/x/workspace"]}})
    assert _names(config, tmp_path) == ["home", "workspace"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"knowledgebase": {"roots": [{"path": "/a", "name": "has space"}]}},
         "knowledgebase.roots[0].name: a root name must be 1-64 ASCII letters, digits, '_' or '-', got 'has space'"),
        ({"knowledgebase": {"roots": [{"path": "/a", "name": ""}]}}, "knowledgebase.roots[0].name"),
        ({"knowledgebase": {"roots": [{"path": "/a", "name": "x" * 65}]}}, "knowledgebase.roots[0].name"),
        ({"knowledgebase": {"roots": [{"path": "/a", "name": 7}]}}, "must be a string"),
        ({"workspace": {"name": "é"}}, "workspace.name"),
        ({"knowledgebase": {"roots": [{"path": "/a", "name": "n"}, {"path": "/b", "name": "n"}]}},
         "root name 'n' is used twice (/a and /b)"),
        ({"knowledgebase": {"roots": [{"path": "/a", "name": "workspace"}]}},
         "root name 'workspace' is used twice (the primary workspace and /a)"),
    ],
)
def test_invalid_or_duplicate_names_are_config_errors(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        WorkspaceConfig.from_dict(data)
    assert message in info.value.message


def test_covering_root_is_the_deepest_root_that_indexes_the_path() -> None:
    outer, inner, flat = Root(Path("/w"), recursive=True, name="w"), Root(Path("/w/p"), recursive=True, name="p"), \
        Root(Path("/w/q"), recursive=False, name="q")
    roots = [outer, inner, flat]
    assert covering_root(Path("/w/p/a/b.md"), roots) is inner
    assert covering_root(Path("/w/q/top.md"), roots) is flat
    assert covering_root(Path("/w/q/deep/x.md"), roots) is outer  # q is top level only
    assert covering_root(Path("/elsewhere/x.md"), roots) is None


# -- add and rename ------------------------------------------------------------------------------


def test_add_with_a_name_and_rename(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    repo = InMemoryConfigRepository()
    added = AddRoot(repo, tmp_path).execute(tmp_path / "a", name="alpha")
    assert (added.root.name, added.message) == ("alpha", f"added {tmp_path / 'a'} as alpha (top level only)")
    assert repo.config.roots == (Root(tmp_path / "a", name="alpha"),)
    renamed = RenameRoot(repo, tmp_path).execute("alpha", "beta")
    assert (renamed.action, renamed.previous.name, renamed.root.name) == ("updated", "alpha", "beta")
    assert renamed.message == f"renamed root alpha ({tmp_path / 'a'}) to beta"
    assert [r.name for r in ListRoots(repo, tmp_path).execute()] == ["workspace", "beta"]
    (tmp_path / "c").mkdir()
    AddRoot(repo, tmp_path).execute(tmp_path / "c")
    pinned = AddRoot(repo, tmp_path).execute(tmp_path / "c", name="c")  # its default name, now written
    assert pinned.action == "updated"
    assert pinned.message == f"{tmp_path / 'c'} keeps the name c, now written to the config"
    assert repo.config.roots[-1] == Root(tmp_path / "c", name="c")
    primary = RenameRoot(repo, tmp_path).execute("workspace", "main")
    assert primary.root.primary and repo.config.workspace_name == "main"
    assert [r.name for r in ListRoots(repo, tmp_path).execute()] == ["main", "beta", "c"]


def test_add_and_rename_refuse_bad_or_taken_names(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    repo = InMemoryConfigRepository()
    AddRoot(repo, tmp_path).execute(tmp_path / "a")
    with pytest.raises(UsageError) as taken:
        AddRoot(repo, tmp_path).execute(tmp_path / "b", name="a")  # a's derived name: it would rename a
    assert taken.value.message == f"the name 'a' is taken by {tmp_path / 'a'}"
    with pytest.raises(UsageError) as bad:
        AddRoot(repo, tmp_path).execute(tmp_path / "b", name="b/c")
    assert "1-64 ASCII letters" in bad.value.message
    with pytest.raises(UsageError) as unknown:
        RenameRoot(repo, tmp_path).execute("nope", "x")
    assert unknown.value.message == "unknown root name 'nope'; the roots are: workspace, a"
    with pytest.raises(UsageError):
        RenameRoot(repo, tmp_path).execute("a", "workspace")
    assert repo.saves == 1


# -- config.yaml round trip ----------------------------------------------------------------------


def test_rename_keeps_comments_and_writes_only_the_name(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text(
        "# my settings\n"
        "knowledgebase:\n"
        "  roots:\n"
        "    # the team's docs\n"
        f"    - path: {tmp_path / 'docs'}  # shared drive\n"
        "      recursive: true\n"
        "other_app:\n"
        "  keep: me\n"
    )
    repo = YamlConfigRepository(config)
    RenameRoot(repo, tmp_path).execute("docs", "team-docs")
    text = config.read_text()
    for kept in ("# my settings", "# the team's docs", "# shared drive", "keep: me"):
        assert kept in text
    assert "name: team-docs" in text
    assert [r.name for r in repo.load().all_roots(tmp_path)] == ["workspace", "team-docs"]
    RenameRoot(repo, tmp_path).execute("workspace", "home")
    assert "workspace:\n  name: home\n" in config.read_text()
    assert [r.name for r in YamlConfigRepository(config).load().all_roots(tmp_path)] == ["home", "team-docs"]


def test_a_bare_string_entry_becomes_a_mapping_only_when_named(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text(f"knowledgebase:\n  roots:\n    - {tmp_path / 'a'}\n    - {tmp_path / 'b'}\n")
    repo = YamlConfigRepository(config)
    RenameRoot(repo, tmp_path).execute("b", "bee")
    text = config.read_text()
    assert f"    - {tmp_path / 'a'}\n" in text
    assert "name: bee" in text
    assert [(r.path.name, r.name) for r in repo.load().roots] == [("a", None), ("b", "bee")]


# -- selection and root_name on hits -------------------------------------------------------------


ROOTS = [Root(Path("/ws"), recursive=True, primary=True, name="workspace"),
         Root(Path("/code/proj"), recursive=True, name="proj"),
         Root(Path("/other"), recursive=True, name="other"),
         Root(Path("/code"), recursive=False, name="code")]
"""Roots overlap nowhere (issue 12): ``proj`` nests inside ``code``, which indexes only the files
directly in it."""


def test_roots_select_files_and_every_hit_names_its_root() -> None:
    search = SearchWorkspace(store=_store_with(["/ws/a.md", "/code/proj/b.md", "/other/c.md", "/loose/d.md", "/code/e.md"]),
                             default_limit=10, roots=ROOTS)
    every = search.execute("deployment rollback")
    assert sorted((str(h.path), h.root_name) for h in every) == [
        ("/code/e.md", "code"), ("/code/proj/b.md", "proj"), ("/loose/d.md", None), ("/other/c.md", "other"),
        ("/ws/a.md", "workspace")]
    # This store recorded no per-root counts (never indexed): every root is reported so.
    assert every.scope == {"roots": ["workspace", "proj", "other", "code"], "home": None, "widened": False,
                           "coverage": [{"root": name, "state": "unavailable", "reason": "not_indexed"}
                                        for name in ("workspace", "proj", "other", "code")]}
    assert every[0].to_json()["root_name"] == every[0].root_name
    other = search.execute("deployment rollback", roots=["other"])
    assert [str(h.path) for h in other] == ["/other/c.md"] and other.scope["roots"] == ["other"]
    two = search.execute("deployment rollback", roots=["other", "proj"])
    assert sorted(str(h.path) for h in two) == ["/code/proj/b.md", "/other/c.md"]
    assert two.scope["roots"] == ["proj", "other"]  # in root order
    # A root inside a non-recursive root is not part of it, though its folder is below it.
    nested = search.execute("deployment", roots=["code"])
    assert [str(h.path) for h in nested] == ["/code/e.md"]


def test_roots_and_path_must_both_hold() -> None:
    search = SearchWorkspace(store=_store_with(["/ws/a.md", "/code/proj/b.md", "/other/c.md"]), default_limit=10,
                             roots=ROOTS)
    assert [str(h.path) for h in search.execute("rollback", roots=["workspace"], path="/ws/a")] == ["/ws/a.md"]
    assert [str(h.path) for h in search.execute("rollback", roots=["proj"], path="/code")] == ["/code/proj/b.md"]
    assert list(search.execute("rollback", roots=["code"], path="/code/proj")) == []  # proj's, not code's
    assert list(search.execute("rollback", roots=["other"], path="/ws")) == []


def test_an_unknown_root_name_is_a_usage_error_listing_the_names() -> None:
    search = SearchWorkspace(store=_store_with(["/ws/a.md"]), default_limit=10, roots=ROOTS)
    with pytest.raises(UsageError) as info:
        search.execute("rollback", roots=["proj", "nope", "gone"])
    assert info.value.code == "usage_error" and info.value.exit_code == 2
    assert info.value.message == "unknown root names 'nope', 'gone'; the roots are: workspace, proj, other, code"
