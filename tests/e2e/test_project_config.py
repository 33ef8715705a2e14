"""Project configs (issue 12): a ``.hermes-workspace.yaml`` found in the nearest ancestor of the
working directory declares a repository's roots; its index lives under HERMES_HOME/projects.
Discovery order: explicit file, $HERMES_WORKSPACE_CONFIG, nearest project file, HERMES_HOME."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.domain.errors import ConfigError, UsageError

NAME = ".hermes-workspace.yaml"


def find_project_file(start: Path, **kwargs: object) -> Path | None:
    # Imported per call, so that each test of this file fails on its own before the feature.
    from hermes_workspace.adapters.config_discovery import find_project_file as find

    return find(start, **kwargs)


def discover_config(home: Path, **kwargs: object) -> object:
    from hermes_workspace.adapters.config_discovery import discover_config as discover

    return discover(home, **kwargs)


def project_index_dir(home: Path, path: Path) -> Path:
    from hermes_workspace.domain.project_config import project_index_dir as index_dir

    return index_dir(home, path)


def project(folder: Path, text: str = "") -> Path:
    """A project folder holding a project config with ``text``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NAME).write_text(text)
    return folder


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_explicit_file_beats_the_project_file_which_beats_home(home: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    repo = project(tmp_path / "repo")
    other = project(tmp_path / "other")
    (repo / "sub").mkdir()
    with Workspace.open(home, config=other / NAME, cwd=repo / "sub") as ws:
        assert (ws.config_source.path, ws.config_source.found) == (other / NAME, "option")
        assert ws.roots()[0].path == other
    monkeypatch.setenv("HERMES_WORKSPACE_CONFIG", str(other / NAME))
    with Workspace.open(home, cwd=repo / "sub") as ws:  # the variable beats discovery...
        assert (ws.config_source.path, ws.config_source.found) == (other / NAME, "env")
    with Workspace.open(home, config=repo / NAME) as ws:  # ...and the option beats the variable
        assert ws.config_source.found == "option" and ws.roots()[0].path == repo
    monkeypatch.delenv("HERMES_WORKSPACE_CONFIG")
    with Workspace.open(home, cwd=repo / "sub") as ws:
        assert (ws.config_source.path, ws.config_source.found, ws.config_source.project) == (repo / NAME, "project", True)
        assert ws.roots()[0].path == repo
    with Workspace.open(home, cwd=tmp_path) as ws:  # no project file above: the home config
        assert (ws.config_source.path, ws.config_source.found, ws.config_source.project) == (
            home / "config.yaml", "home", False)
        assert ws.roots()[0].path == home / "workspace"


def test_the_api_without_cwd_ignores_project_files(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = project(tmp_path / "repo", "knowledgebase:\n  roots: [../elsewhere]\n")
    monkeypatch.chdir(repo)  # the process's own working directory is never looked at
    with Workspace.open(home) as ws:
        assert ws.config_source.found == "home"
        assert [r.path for r in ws.roots()] == [home / "workspace"]
        assert ws.index_path == home / "workspace" / ".index" / "workspace.sqlite"


def test_the_nearest_ancestor_wins_over_a_farther_one(home: Path, tmp_path: Path) -> None:
    outer = project(tmp_path / "mono")
    inner = project(outer / "packages" / "api")
    (inner / "src" / "deep").mkdir(parents=True)
    assert find_project_file(inner / "src" / "deep") == inner / NAME
    assert find_project_file(outer / "packages") == outer / NAME
    with Workspace.open(home, cwd=inner / "src" / "deep") as ws:
        assert ws.config_source.path == inner / NAME and ws.roots()[0].path == inner


def test_relative_roots_resolve_against_the_file_not_the_working_directory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path / "repo", "knowledgebase:\n  roots:\n    - path: ../docs-site\n      recursive: true\n"
                                      "    - path: vendor/../../shared\n")
    (repo / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    for cwd in (repo, repo / "a" / "b"):
        with Workspace.open(home, cwd=cwd) as ws:
            assert [(r.path, r.recursive, r.primary) for r in ws.roots()] == [
                (repo, True, True), (tmp_path / "docs-site", True, False), (tmp_path / "shared", False, False)]


def test_tilde_and_a_missing_root_are_normalized_absolute_paths(home: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    # Beside the repository: inside it, a root would overlap the project's primary root (issue 12).
    repo = project(tmp_path / "repo", "knowledgebase:\n  roots: [~/notes, ./gone/../../missing]\n")
    with Workspace.open(home, cwd=repo) as ws:
        assert [r.path for r in ws.roots()[1:]] == [user_home / "notes", tmp_path / "missing"]


def test_the_project_index_lives_under_hermes_home_and_is_stable(home: Path, tmp_path: Path) -> None:
    repo = project(tmp_path / "my repo!", "# the team's roots\nknowledgebase:\n  roots: []\n")
    (repo / "guide.md").write_text("# Guide\n\nThe zebra crossing rule.\n")
    before = tree(repo)
    digest = hashlib.sha256(str(repo / NAME).encode()).hexdigest()[:16]
    expected = home / "projects" / f"my_repo-{digest}" / "workspace.sqlite"
    with Workspace.open(home, cwd=repo) as ws:
        assert ws.index_path == expected
        assert ws.index().files_indexed == 2  # the guide and the project file itself
        assert [h.path for h in ws.search("zebra crossing")] == [repo / "guide.md"]
    assert expected.exists()
    assert tree(repo) == before  # no .index, no seeded folders, no .hermesignore in the repository
    assert not (home / "workspace").exists()
    with Workspace.open(home, cwd=repo) as ws:  # another process, the same index
        assert ws.index_path == expected and ws.status().files == 2


def test_a_symlinked_project_folder_keeps_one_index(home: Path, tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    link = tmp_path / "link"
    link.symlink_to(repo)
    with Workspace.open(home, cwd=repo) as direct, Workspace.open(home, config=link / NAME) as linked:
        assert direct.index_path == linked.index_path


def test_two_project_files_sharing_a_root_get_two_indexes(home: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "common.md").write_text("# Common\n\nThe walrus protocol.\n")
    first = project(tmp_path / "one", "knowledgebase:\n  roots: [../shared]\n")
    second = project(tmp_path / "two", f"knowledgebase:\n  roots: [{shared}]\n")
    (first / "one.md").write_text("walrus one\n")
    paths = []
    for repo in (first, second):
        with Workspace.open(home, cwd=repo) as ws:
            ws.index()
            paths.append(ws.index_path)
            assert sorted(h.path.name for h in ws.search("walrus")) == sorted(
                ["common.md"] + (["one.md"] if repo == first else []))
    assert paths[0] != paths[1] and all(p.parent.parent == home / "projects" for p in paths)
    with Workspace.open(home, cwd=second) as ws:  # indexing the first did not change the second's index
        assert ws.status().files == 2  # common.md and its project file


def test_a_bad_project_file_is_a_config_error_naming_it(home: Path, tmp_path: Path) -> None:
    repo = project(tmp_path / "repo", "knowledgebase:\n  roots:\n    - path: x\n      recusive: true\n")
    with pytest.raises(ConfigError) as bad_key:
        Workspace.open(home, cwd=repo).roots()
    assert bad_key.value.message == f"{repo / NAME}: unknown setting knowledgebase.roots[0].recusive"
    assert bad_key.value.hint.startswith("Did you mean knowledgebase.roots[0].recursive?")
    assert f"nearest {NAME} above the working directory" in bad_key.value.hint
    (repo / NAME).write_text("knowledgebase: [\n")
    with pytest.raises(ConfigError) as bad_yaml:
        Workspace.open(home, cwd=repo).roots()
    assert bad_yaml.value.message.startswith(f"{repo / NAME} is not valid YAML at line 2")
    assert bad_yaml.value.code == "config_invalid" and bad_yaml.value.exit_code == 78


@pytest.mark.parametrize("text, key", [
    ("knowledgebase:\n  embedder:\n    provider: openai\n", "knowledgebase.embedder"),
    ("knowledgebase:\n  plugins: {}\n", "knowledgebase.plugins"),
    ("hermes_agent:\n  model: x\n", "hermes_agent"),
])
def test_a_project_file_cannot_hold_machine_wide_settings(home: Path, tmp_path: Path, text: str, key: str) -> None:
    repo = project(tmp_path / "repo", text)
    with pytest.raises(ConfigError) as raised:
        Workspace.open(home, cwd=repo).roots()
    assert raised.value.message == f"{repo / NAME}: {key} is not a setting of a project config"
    assert "HERMES_HOME/config.yaml" in raised.value.hint


def test_other_settings_come_from_the_home_config(home: Path, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("knowledgebase:\n  search:\n    default_limit: 3\n  roots: [/somewhere]\n")
    repo = project(tmp_path / "repo", "workspace:\n  name: repo\n")
    with Workspace.open(home, cwd=repo) as ws:
        config = ws._container.config()
        assert config.default_limit == 3  # from HERMES_HOME/config.yaml
        assert [(r.name, r.path) for r in ws.roots()] == [("repo", repo)]  # the home roots are not the project's


def test_writes_change_the_project_file_and_keep_its_comments(home: Path, tmp_path: Path) -> None:
    repo = project(tmp_path / "repo", "# roots of this repository\nknowledgebase:\n  roots:\n"
                                      "    - path: ../site  # the docs site\n")
    (tmp_path / "site").mkdir()
    (tmp_path / "api").mkdir()
    before = tree(repo)
    with Workspace.open(home, cwd=repo) as ws:
        assert ws.add_root(tmp_path / "api", recursive=True).action == "added"
        assert ws.rename_root("site", "docs").root.name == "docs"
        assert ws.rename_root("workspace", "repo").root.name == "repo"
        assert [r.name for r in ws.roots()] == ["repo", "docs", "api"]
    text = (repo / NAME).read_text()
    assert "# roots of this repository" in text and "# the docs site" in text
    assert "- path: ../api" in text  # a sibling is written relative to the file: the same in every clone
    assert "name: repo" in text and "name: docs" in text
    assert not (home / "config.yaml").exists()
    assert tree(repo) == before  # no lock file left in the repository
    with Workspace.open(home, cwd=tmp_path / "site") as ws:  # outside the project: the home config
        assert [r.name for r in ws.roots()] == ["workspace"]


def test_a_file_owned_by_another_user_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer = project(tmp_path / "shared")
    inner = project(outer / "mine")
    owner = os.stat(inner / NAME).st_uid
    assert find_project_file(inner) == inner / NAME
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)  # now both files belong to someone else
    assert find_project_file(inner) is None


def test_the_walk_stops_below_the_users_home(tmp_path: Path) -> None:
    user_home = project(tmp_path / "user")  # ~/.hermes-workspace.yaml is not a project file
    project(tmp_path)  # nor one above ~
    (user_home / "code").mkdir()
    assert find_project_file(user_home / "code", user_home=user_home) is None
    assert find_project_file(user_home, user_home=user_home) is None
    repo = project(user_home / "code" / "repo")
    assert find_project_file(repo, user_home=user_home) == repo / NAME
    # Outside the user's home the walk goes up to the filesystem root.
    assert find_project_file(tmp_path / "elsewhere", user_home=user_home) == tmp_path / NAME


def test_explicit_files_that_do_not_exist_are_errors_but_the_home_config_may_be_missing(
    home: Path, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        discover_config(home, explicit=tmp_path / "nope.yaml", environ={})
    with pytest.raises(UsageError, match="is empty"):
        discover_config(home, explicit="", environ={})
    with pytest.raises(ConfigError, match=r"\$HERMES_WORKSPACE_CONFIG .* is not a file"):
        discover_config(home, environ={"HERMES_WORKSPACE_CONFIG": str(tmp_path)})
    repo = project(tmp_path / "repo")
    source = discover_config(home, explicit=home / "config.yaml", cwd=repo, environ={})
    assert (source.path, source.found, source.project) == (home / "config.yaml", "option", False)


def test_project_index_dir_is_a_pure_function_of_the_real_path(tmp_path: Path) -> None:
    a = project_index_dir(tmp_path, Path("/src/app/.hermes-workspace.yaml"))
    assert a == project_index_dir(tmp_path, Path("/src/app/.hermes-workspace.yaml"))
    assert a.name == "app-" + hashlib.sha256(b"/src/app/.hermes-workspace.yaml").hexdigest()[:16]
    assert project_index_dir(tmp_path, Path("/x/.../f.yaml")).name.startswith("project-")


def test_status_report_names_the_config_in_use(home: Path, tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    with Workspace.open(home, cwd=repo) as ws:
        assert ws.status_report()["config"] == {"path": str(repo / NAME), "found": "project", "project": True}
    with Workspace.open(home) as ws:
        assert ws.status_report()["config"] == {"path": str(home / "config.yaml"), "found": "home", "project": False}


def test_the_mcp_pool_discovers_from_the_server_cwd_and_follows_project_edits(home: Path, tmp_path: Path) -> None:
    from hermes_workspace.entrypoints.mcp_server import open_pool

    repo = project(tmp_path / "repo")
    pool, _ = open_pool(home, cwd=str(repo))
    with pool.lease() as ws:
        assert ws.config_source.path == repo / NAME and ws.roots()[0].path == repo
    (tmp_path / "extra").mkdir()
    (repo / NAME).write_text("knowledgebase:\n  roots: [../extra, ../more]\n")
    with pool.lease() as ws:  # the project file changed: a new workspace reads it
        assert [r.path for r in ws.roots()] == [repo, tmp_path / "extra", tmp_path / "more"]
    pool.close()
