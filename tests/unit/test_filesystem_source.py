"""FilesystemSource specifics: ignore files and their gitignore semantics (as pathspec implements
them), pruning, symlinks, permissions, vanishing files. The shared contract is in
tests/contract/test_file_source_contract.py."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_workspace.adapters import filesystem_source
from hermes_workspace.adapters.filesystem_source import FilesystemSource, compile_ignore_rules
from hermes_workspace.domain.model import DiscoveryProblem, ExcludedPath, Root, SkippedFile, SourceFile

MB = 1024 * 1024


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "ws"
    path.mkdir()
    return path


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)


def discover(root: Path, *, recursive: bool = True, max_file_bytes: int = MB) -> list:
    return list(FilesystemSource(max_file_bytes).discover([Root(root, recursive=recursive)]))


def indexed(items: list, root: Path) -> set[str]:
    return {i.path.relative_to(root).as_posix() for i in items if isinstance(i, SourceFile)}


def problems(items: list) -> list[DiscoveryProblem]:
    return [i for i in items if isinstance(i, DiscoveryProblem)]


@pytest.fixture
def listed_dirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every directory the source lists with os.scandir."""
    seen: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path="."):
        seen.append(os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", recording_scandir)
    return seen


# -- construction ------------------------------------------------------------------------------


def test_negative_cap_is_rejected() -> None:
    with pytest.raises(ValueError):
        FilesystemSource(-1)


# -- ignore file precedence --------------------------------------------------------------------


TREE = {
    "a.txt": "a\n",
    "b.log": "b\n",
    "c.md": "c\n",
    "node_modules/pkg/index.js": "module.exports = 1\n",
    "__pycache__/x.txt": "cached\n",
    "src/app.py": "print(1)\n",
}


def test_hermesignore_wins_over_gitignore(root: Path) -> None:
    write(root, TREE | {".hermesignore": "*.log\n", ".gitignore": "*.txt\n"})
    items = discover(root)

    assert "b.log" not in indexed(items, root)
    assert {"a.txt", "__pycache__/x.txt", "node_modules/pkg/index.js"} <= indexed(items, root)


def test_gitignore_is_the_fallback(root: Path) -> None:
    write(root, TREE | {".gitignore": "*.txt\n"})
    items = discover(root)

    assert "a.txt" not in indexed(items, root)
    assert "__pycache__/x.txt" not in indexed(items, root)
    assert {"b.log", "c.md", "node_modules/pkg/index.js", "src/app.py"} <= indexed(items, root)


def test_default_rules_apply_without_an_ignore_file(root: Path, listed_dirs: list[str]) -> None:
    write(
        root,
        TREE
        | {
            ".git/config": "[core]\n",
            ".venv/lib/site.py": "x\n",
            "build/out.txt": "x\n",
            "pkg.egg-info/PKG-INFO": "x\n",
            "editor.swp": "x\n",
            "notes.txt~": "x\n",
            ".DS_Store": "x\n",
        },
    )
    items = discover(root)

    assert indexed(items, root) == {"a.txt", "b.log", "c.md", "src/app.py"}
    for pruned in ("node_modules", "__pycache__", ".git", ".venv", "build", "pkg.egg-info"):
        assert str(root / pruned) not in listed_dirs, f"{pruned} was listed"


def test_ignored_directories_are_pruned_not_walked(root: Path, listed_dirs: list[str]) -> None:
    write(root, {".gitignore": "node_modules/\n", "node_modules/a/b/c.js": "x\n", "src/a.js": "x\n"})
    items = discover(root)

    assert indexed(items, root) == {".gitignore", "src/a.js"}
    assert listed_dirs == [str(root), str(root / "src")]


def test_no_dotfile_filter(root: Path) -> None:
    write(root, {".github/workflows/ci.yml": "on: push\n", ".env": "KEY=1\n", ".editorconfig": "root = true\n"})

    # Dotfiles are indexed unless a rule excludes them; the default rules exclude `.env` (secrets).
    assert indexed(discover(root), root) == {".github/workflows/ci.yml", ".editorconfig"}


def test_hermesignore_excluding_env_keeps_github_workflows(root: Path) -> None:
    write(root, {".hermesignore": ".env\n", ".github/workflows/ci.yml": "on: push\n", ".env": "KEY=1\n"})

    assert indexed(discover(root), root) == {".github/workflows/ci.yml"}


def test_dotfiles_excluded_then_github_re_included(root: Path, listed_dirs: list[str]) -> None:
    write(
        root,
        {
            ".hermesignore": ".*\n!.github/\n!.github/**\n",
            ".github/workflows/ci.yml": "on: push\n",
            ".github/.hidden-in-github": "x\n",
            ".env": "KEY=1\n",
            ".cache/data.txt": "x\n",
            "visible.md": "x\n",
        },
    )
    items = discover(root)

    assert indexed(items, root) == {".github/workflows/ci.yml", ".github/.hidden-in-github", "visible.md"}
    assert str(root / ".cache") not in listed_dirs


def test_negated_file_pattern_re_includes_at_any_depth(root: Path) -> None:
    write(root, {".hermesignore": "*.yml\n!ci.yml\n", "ci.yml": "x\n", "other.yml": "x\n", "deploy/ci.yml": "x\n"})

    assert indexed(discover(root), root) == {"ci.yml", "deploy/ci.yml"}


def test_nothing_is_re_included_inside_an_excluded_directory(root: Path, listed_dirs: list[str]) -> None:
    # As in git: "It is not possible to re-include a file if a parent directory of that file is
    # excluded." (pathspec alone would say keep.txt is included; the directory is pruned first.)
    write(root, {".hermesignore": "build/\n!build/keep.txt\n", "build/keep.txt": "x\n", "build/a.txt": "x\n"})

    assert indexed(discover(root), root) == set()
    assert str(root / "build") not in listed_dirs


def test_whitelist_idiom_walks_directories_like_git(root: Path) -> None:
    write(
        root,
        {
            ".hermesignore": "*\n!*/\n!*.py\n",
            "top.py": "x\n",
            "top.txt": "x\n",
            "src/a.py": "x\n",
            "src/a.txt": "x\n",
            "src/sub/b.py": "x\n",
        },
    )

    assert indexed(discover(root), root) == {"top.py", "src/a.py", "src/sub/b.py"}


def test_directory_star_then_negation_re_includes_one_file(root: Path) -> None:
    write(root, {".hermesignore": "logs/*\n!logs/keep.txt\n", "logs/keep.txt": "x\n", "logs/a.txt": "x\n"})

    assert indexed(discover(root), root) == {"logs/keep.txt"}


def test_double_star_directory_then_negation_is_pruned_unlike_git(root: Path) -> None:
    # Known difference (see IgnoreRules): pathspec compiles `foo/**` to match `foo/`
    # itself, so the directory is pruned; git would keep foo/keep.txt.
    write(root, {".hermesignore": "foo/**\n!foo/keep.txt\n", "foo/keep.txt": "x\n", "foo/a.txt": "x\n"})

    assert indexed(discover(root), root) == set()


def test_anchored_and_double_star_patterns(root: Path) -> None:
    write(
        root,
        {
            ".hermesignore": "/top.txt\ndocs/**/*.tmp\n",
            "top.txt": "x\n",
            "sub/top.txt": "x\n",
            "docs/c.tmp": "x\n",
            "docs/a/b/c.tmp": "x\n",
            "docs/a/b/c.md": "x\n",
            "other/c.tmp": "x\n",
        },
    )

    assert indexed(discover(root), root) == {"sub/top.txt", "docs/a/b/c.md", "other/c.tmp"}


def test_pattern_without_slash_matches_directories_at_any_depth(root: Path) -> None:
    write(root, {".hermesignore": "vendor\n", "vendor/a.go": "x\n", "x/vendor/b.go": "x\n", "x/c.go": "x\n"})

    assert indexed(discover(root), root) == {"x/c.go"}


def test_directory_rule_does_not_match_a_file(root: Path) -> None:
    write(root, {".hermesignore": "build/\n", "build": "a file called build\n", "x/build/y.txt": "x\n"})

    assert indexed(discover(root), root) == {"build"}


def test_comments_blank_lines_and_escapes(root: Path) -> None:
    write(root, {".hermesignore": "# a comment\n\n\\#literal.txt\n", "#literal.txt": "x\n", "keep.txt": "x\n"})

    assert indexed(discover(root), root) == {"keep.txt"}


def test_ignore_rules_apply_in_non_recursive_roots(root: Path) -> None:
    write(root, {".gitignore": "*.log\n", "a.log": "x\n", "b.txt": "x\n", "sub/c.txt": "x\n"})

    assert indexed(discover(root, recursive=False), root) == {".gitignore", "b.txt"}


def test_gitignore_rules_leave_out_dot_git_like_git(root: Path, listed_dirs: list[str]) -> None:
    write(
        root,
        {".gitignore": "*.log\n", ".git/config": "x\n", "mod/.git": "gitdir: ../.git/modules/mod\n", "a.py": "x\n"},
    )

    assert indexed(discover(root), root) == {".gitignore", "a.py"}
    assert str(root / ".git") not in listed_dirs


def test_hermesignore_must_re_include_dot_git_explicitly(root: Path) -> None:
    # Version-control folders are always excluded; only a `!` pattern in a .hermesignore lets one in.
    write(root, {".hermesignore": "*.log\n", ".git/config": "[core]\n"})
    assert indexed(discover(root), root) == set()

    write(root, {".hermesignore": "*.log\n!.git/\n"})
    assert indexed(discover(root), root) == {".git/config"}


def test_invalid_pattern_lines_are_reported_and_skipped(root: Path) -> None:
    write(root, {".hermesignore": "!\n*.log\n", "a.log": "x\n", "b.txt": "x\n"})
    items = discover(root)

    assert indexed(items, root) == {"b.txt"}
    [problem] = problems(items)
    assert problem.path == root / ".hermesignore"
    assert problem.error_type == "IgnorePatternError"
    assert "line 1" in problem.message


def test_unreadable_ignore_file_falls_back_to_defaults(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, {".hermesignore": "*.txt\n", "a.txt": "x\n", "node_modules/m.js": "x\n"})
    ignore_file = str(root / ".hermesignore")
    real_open = open

    def guarded_open(path, *args, **kwargs):
        if os.fspath(path) == ignore_file:
            raise PermissionError(13, "Permission denied", ignore_file)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(filesystem_source, "open", guarded_open, raising=False)
    items = discover(root)

    [problem] = problems(items)
    assert (problem.path, problem.error_type) == (root / ".hermesignore", "PermissionError")
    assert "default rules" in problem.message
    assert "a.txt" in indexed(items, root)
    assert "node_modules/m.js" not in indexed(items, root)


def test_ignore_specs_are_compiled_once_per_content(root: Path) -> None:
    write(root, {".hermesignore": "*.unique-suffix-for-cache-test\n", "a.txt": "x\n"})
    compile_ignore_rules.cache_clear()
    discover(root)
    discover(root)

    info = compile_ignore_rules.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_ignore_file_with_bom_and_crlf(root: Path) -> None:
    write(
        root,
        {".hermesignore": b"\xef\xbb\xbf*.log\r\nsecret.txt\r\n", "a.log": "x\n", "secret.txt": "x\n", "b.md": "x\n"},
    )

    assert indexed(discover(root), root) == {"b.md"}


# -- nested ignore files -----------------------------------------------------------------------


def test_nested_gitignore_excludes_below_its_directory_only(root: Path) -> None:
    # The reported repro: git ignores sub/secret.txt; the root's own rules still apply below.
    write(
        root,
        {
            ".gitignore": "*.log\n",
            "sub/.gitignore": "secret.txt\n",
            "sub/secret.txt": "x\n",
            "sub/deeper/secret.txt": "x\n",
            "sub/a.log": "x\n",
            "sub/ok.txt": "x\n",
            "secret.txt": "x\n",
            "other/secret.txt": "x\n",
        },
    )

    assert indexed(discover(root), root) == {
        ".gitignore",
        "sub/.gitignore",
        "sub/ok.txt",
        "secret.txt",
        "other/secret.txt",
    }


def test_nested_directory_rule_prunes(root: Path, listed_dirs: list[str]) -> None:
    write(root, {".gitignore": "*.log\n", "sub/.gitignore": "cache/\n", "sub/cache/c.txt": "x\n", "cache/d.txt": "x\n"})

    assert indexed(discover(root), root) == {".gitignore", "sub/.gitignore", "cache/d.txt"}
    assert str(root / "sub" / "cache") not in listed_dirs


def test_nested_negation_re_includes_a_file_the_root_excluded(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.tmp\n",
            "sub/.gitignore": "!keep.tmp\n",
            "sub/keep.tmp": "x\n",
            "sub/other.tmp": "x\n",
            "sub/deeper/keep.tmp": "x\n",
            "keep.tmp": "x\n",
        },
    )

    assert indexed(discover(root), root) == {".gitignore", "sub/.gitignore", "sub/keep.tmp", "sub/deeper/keep.tmp"}


def test_nested_file_cannot_re_include_under_an_excluded_directory(root: Path, listed_dirs: list[str]) -> None:
    # git: "It is not possible to re-include a file if a parent directory of that file is excluded."
    # Neither sub/.gitignore nor the excluded directory's own .gitignore can bring keep.txt back.
    write(
        root,
        {
            ".gitignore": "sub/cache/\n",
            "sub/.gitignore": "!cache/keep.txt\n!keep.txt\n",
            "sub/cache/.gitignore": "!keep.txt\n",
            "sub/cache/keep.txt": "x\n",
            "sub/keep.txt": "x\n",
        },
    )

    assert indexed(discover(root), root) == {".gitignore", "sub/.gitignore", "sub/keep.txt"}
    assert str(root / "sub" / "cache") not in listed_dirs


def test_nested_file_can_re_include_a_directory_excluded_by_a_shallower_file(root: Path) -> None:
    # The directory's parent (sub) is not excluded, so the last matching pattern (sub's) wins.
    write(
        root, {".gitignore": "inner/\n", "sub/.gitignore": "!inner/\n", "sub/inner/a.txt": "x\n", "inner/b.txt": "x\n"}
    )

    assert indexed(discover(root), root) == {".gitignore", "sub/.gitignore", "sub/inner/a.txt"}


def test_anchored_patterns_in_a_nested_file_anchor_at_its_directory(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.log\n",
            "sub/.gitignore": "/top.txt\ndocs/a.txt\n",
            "sub/top.txt": "x\n",
            "sub/x/top.txt": "x\n",
            "top.txt": "x\n",
            "sub/docs/a.txt": "x\n",
            "sub/x/docs/a.txt": "x\n",
            "docs/a.txt": "x\n",
        },
    )

    assert indexed(discover(root), root) == {
        ".gitignore",
        "sub/.gitignore",
        "sub/x/top.txt",
        "top.txt",
        "sub/x/docs/a.txt",
        "docs/a.txt",
    }


def test_deeper_ignore_files_take_precedence(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.log\n!important.log\n",
            "sub/.gitignore": "important.log\n",
            "sub/deeper/.gitignore": "!important.log\n",
            "important.log": "x\n",
            "other.log": "x\n",
            "sub/important.log": "x\n",
            "sub/deeper/important.log": "x\n",
            "sub/deeper/other.log": "x\n",
            "sub/deeper/deepest/important.log": "x\n",
        },
    )

    assert indexed(discover(root), root) == {
        ".gitignore",
        "important.log",
        "sub/.gitignore",
        "sub/deeper/.gitignore",
        "sub/deeper/important.log",
        "sub/deeper/deepest/important.log",
    }


def test_a_deeper_directory_negation_does_not_re_include_the_files_below_it(root: Path) -> None:
    # git: `!build/` matches the directory sub/deep/build, not the files in it; x.tmp stays
    # excluded by the root's `*.tmp`. (pathspec alone lets `build/` match everything below.)
    write(
        root,
        {
            ".gitignore": "*.tmp\n",
            "sub/.gitignore": "!build/\n",
            "sub/deep/build/x.tmp": "x\n",
            "sub/deep/build/a.txt": "x\n",
        },
    )

    assert indexed(discover(root), root) == {".gitignore", "sub/.gitignore", "sub/deep/build/a.txt"}


def test_a_deeper_negation_of_a_parent_does_not_re_include_an_excluded_subdirectory(
    root: Path, listed_dirs: list[str]
) -> None:
    write(
        root,
        {
            ".gitignore": "build/\n",
            "sub/.gitignore": "!deep/\n",
            "sub/deep/build/a.txt": "x\n",
            "sub/deep/b.txt": "x\n",
        },
    )

    assert indexed(discover(root), root) == {".gitignore", "sub/.gitignore", "sub/deep/b.txt"}
    assert str(root / "sub" / "deep" / "build") not in listed_dirs


def test_whitelist_idiom_in_a_nested_file(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.log\n",
            "sub/.gitignore": "*\n!*/\n!*.py\n",
            "sub/a.py": "x\n",
            "sub/a.txt": "x\n",
            "sub/pkg/b.py": "x\n",
            "sub/pkg/b.txt": "x\n",
            "top.txt": "x\n",
        },
    )

    # `*` in sub/.gitignore also excludes sub/.gitignore itself, as in git.
    assert indexed(discover(root), root) == {".gitignore", "sub/a.py", "sub/pkg/b.py", "top.txt"}


def test_nested_hermesignore_files_are_read_when_the_root_has_one(root: Path) -> None:
    write(
        root,
        {
            ".hermesignore": "*.log\n",
            "sub/.hermesignore": "secret.txt\n",
            "sub/.gitignore": "*.md\n",
            "sub/secret.txt": "x\n",
            "sub/x.md": "x\n",
            "sub/a.log": "x\n",
            "secret.txt": "x\n",
        },
    )

    # The .hermesignore family: sub/.hermesignore applies, sub/.gitignore is an ordinary file.
    assert indexed(discover(root), root) == {"sub/.gitignore", "sub/x.md", "secret.txt"}


def test_nested_hermesignore_files_are_not_read_in_a_gitignore_root(root: Path) -> None:
    write(root, {".gitignore": "*.log\n", "sub/.hermesignore": "x.md\n", "sub/x.md": "x\n"})

    assert indexed(discover(root), root) == {".gitignore", "sub/x.md"}


def test_nested_gitignore_applies_on_top_of_the_default_rules(root: Path, listed_dirs: list[str]) -> None:
    write(
        root,
        {
            "sub/.gitignore": "secret.txt\n!keep.swp\n",
            "sub/secret.txt": "x\n",
            "sub/keep.swp": "x\n",
            "sub/other.swp": "x\n",
            "sub/node_modules/m.js": "x\n",
            "sub/ok.md": "x\n",
        },
    )

    assert indexed(discover(root), root) == {"sub/.gitignore", "sub/keep.swp", "sub/ok.md"}
    assert str(root / "sub" / "node_modules") not in listed_dirs


def test_unreadable_nested_ignore_file_is_a_problem_and_the_walk_goes_on(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        root,
        {
            ".gitignore": "*.log\n",
            "sub/.gitignore": "secret.txt\n",
            "sub/secret.txt": "x\n",
            "sub/a.log": "x\n",
            "z/.gitignore": "*.md\n",
            "z/x.md": "x\n",
            "z/y.txt": "x\n",
        },
    )
    nested = str(root / "sub" / ".gitignore")
    real_open = open

    def guarded_open(path, *args, **kwargs):
        if os.fspath(path) == nested:
            raise PermissionError(13, "Permission denied", nested)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(filesystem_source, "open", guarded_open, raising=False)
    items = discover(root)

    [problem] = problems(items)
    assert (problem.path, problem.root, problem.error_type) == (root / "sub" / ".gitignore", root, "PermissionError")
    assert "not applied" in problem.message
    # sub's own rules are lost, the root's still apply there, and later directories are unaffected.
    assert indexed(items, root) == {".gitignore", "sub/.gitignore", "sub/secret.txt", "z/.gitignore", "z/y.txt"}


def test_invalid_lines_in_a_nested_ignore_file_are_reported(root: Path) -> None:
    write(root, {".gitignore": "*.log\n", "sub/.gitignore": "# c\n!\nsecret.txt\n", "sub/secret.txt": "x\n"})
    items = discover(root)

    [problem] = problems(items)
    assert (problem.path, problem.error_type) == (root / "sub" / ".gitignore", "IgnorePatternError")
    assert "line 2" in problem.message
    assert indexed(items, root) == {".gitignore", "sub/.gitignore"}


def test_nested_ignore_files_are_not_read_in_a_non_recursive_root(root: Path) -> None:
    write(root, {".gitignore": "*.log\n", "sub/.gitignore": "!\n", "a.txt": "x\n"})

    items = discover(root, recursive=False)
    assert problems(items) == []
    assert indexed(items, root) == {".gitignore", "a.txt"}


def test_nested_ignore_specs_are_cached(root: Path) -> None:
    write(root, {".gitignore": "*.log\n", "a/.gitignore": "x.txt\n", "b/.gitignore": "x.txt\n", "b/x.txt": "x\n"})
    compile_ignore_rules.cache_clear()
    first = discover(root)
    second = discover(root)

    assert first == second
    info = compile_ignore_rules.cache_info()
    assert (info.misses, info.hits) == (3, 3)


def test_hermesignore_files_are_never_yielded(root: Path) -> None:
    # Neither indexed nor reported as skipped (an empty one would otherwise be SkippedFile("empty")),
    # at any depth and whatever the root's family.
    write(
        root,
        {
            ".hermesignore": "*.log\n",
            "sub/.hermesignore": "",
            "sub/deeper/.hermesignore": "# only a comment\n",
            "sub/a.txt": "x\n",
        },
    )
    other = root.parent / "other"
    write(other, {".gitignore": "*.log\n", "node/.hermesignore": "node_modules\n", "b.txt": "x\n"})
    plain = root.parent / "plain"
    write(plain, {".hermesignore": "", "c.txt": "x\n"})

    in_root, in_other, in_plain = discover(root), discover(other), discover(plain, recursive=False)

    assert [i.path.relative_to(root).as_posix() for i in in_root] == ["sub/a.txt"]
    assert [i.path.relative_to(other).as_posix() for i in in_other] == [".gitignore", "b.txt"]
    assert [i.path.name for i in in_plain] == ["c.txt"]


# -- walk order and shape ------------------------------------------------------------------------


def test_walk_order_is_depth_first_by_name(root: Path) -> None:
    write(root, {"b.txt": "x", "a/z.txt": "x", "a.txt": "x", "B.txt": "x", "a/b/c.txt": "x", "c/d.txt": "x"})
    order = [i.path.relative_to(root).as_posix() for i in discover(root)]

    assert order == ["B.txt", "a/b/c.txt", "a/z.txt", "a.txt", "b.txt", "c/d.txt"]


def test_non_recursive_root_lists_only_the_root(root: Path, listed_dirs: list[str]) -> None:
    write(root, {"a.txt": "x", "sub/b.txt": "x"})

    assert indexed(discover(root, recursive=False), root) == {"a.txt"}
    assert listed_dirs == [str(root)]


def test_very_deep_trees_do_not_hit_the_recursion_limit(root: Path) -> None:
    depth = 1100  # deeper than sys.getrecursionlimit(): the walk keeps its own stack
    dirs = [str(root)]
    try:
        for _ in range(depth):  # os.makedirs and Path.mkdir(parents=True) recurse themselves
            dirs.append(dirs[-1] + "/d")
            os.mkdir(dirs[-1])
        Path(dirs[-1], "bottom.txt").write_text("x\n")

        assert indexed(discover(root), root) == {"/".join(["d"] * depth) + "/bottom.txt"}
    finally:
        # shutil.rmtree (pytest's tmp_path cleanup) recurses too: leave no deep tree behind.
        Path(dirs[-1], "bottom.txt").unlink(missing_ok=True)
        for path in reversed(dirs[1:]):
            os.rmdir(path)


def test_size_and_mtime_come_from_stat(root: Path) -> None:
    write(root, {"a.txt": "hello\n"})
    [file] = discover(root)
    st = os.stat(root / "a.txt")

    assert (file.size, file.mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_binary_suffix_is_decided_without_stat(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, {"logo.PNG": b"\x89PNG", "a.txt": "x"})
    stat_calls: list[str] = []
    real_stat = os.stat

    def recording_stat(path, *args, **kwargs):
        stat_calls.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", recording_stat)
    items = discover(root)

    assert SkippedFile(root / "logo.PNG", root, "binary_suffix") in items
    assert str(root / "logo.PNG") not in stat_calls
    assert str(root / "a.txt") in stat_calls


def test_non_utf8_file_names_are_walked(root: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    (root / name).write_text("x\n")

    [file] = discover(root)
    assert isinstance(file, SourceFile) and file.path.name == name


def test_fifos_are_skipped_silently(root: Path) -> None:
    os.mkfifo(root / "pipe.txt")
    write(root, {"a.txt": "x"})

    assert [i.path.name for i in discover(root)] == ["a.txt"]


# -- roots ---------------------------------------------------------------------------------------


def test_symlinked_root_reports_resolved_paths(root: Path, tmp_path: Path) -> None:
    write(root, {"a.txt": "x", "sub/b.txt": "x"})
    link = tmp_path / "link-to-ws"
    link.symlink_to(root, target_is_directory=True)
    items = discover(link)

    assert {i.path for i in items} == {root / "a.txt", root / "sub" / "b.txt"}
    assert {i.root for i in items} == {link}


def test_root_that_is_a_file_is_a_problem(root: Path) -> None:
    write(root, {"a.txt": "x"})
    [problem] = discover(root / "a.txt")

    assert problem.path == problem.root == root / "a.txt"
    assert problem.error_type == "NotADirectoryError"


def test_unlistable_root_is_a_problem_with_path_equal_to_root(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, {"a.txt": "x"})
    deny_listing(monkeypatch, root)
    [problem] = discover(root)

    assert problem.path == problem.root == root
    assert problem.error_type == "PermissionError"


# -- symlinks ------------------------------------------------------------------------------------


def test_symlink_to_file_is_followed_at_its_walked_path(root: Path, tmp_path: Path) -> None:
    other = tmp_path.resolve() / "other-root"
    other.mkdir()
    target = other / "target.txt"
    target.write_text("other root content\n")
    (root / "link.txt").symlink_to(target)
    [file] = [i for i in FilesystemSource(MB).discover([Root(root), Root(other)]) if i.path.parent == root]

    found = os.stat(target)
    assert file == SourceFile(root / "link.txt", root, found.st_size, found.st_mtime_ns, (found.st_dev, found.st_ino))
    assert FilesystemSource(MB).read_bytes(file) == b"other root content\n"


def test_symlink_to_directory_followed_only_when_recursive(root: Path) -> None:
    write(root, {"real/x.md": "x\n", "top.txt": "x"})
    (root / "linked").symlink_to(root / "real", target_is_directory=True)

    assert indexed(discover(root), root) == {"linked/x.md", "real/x.md", "top.txt"}
    assert indexed(discover(root, recursive=False), root) == {"top.txt"}


def test_ignored_symlinked_directory_is_not_followed(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("x\n")
    (root / "node_modules").symlink_to(outside, target_is_directory=True)

    assert discover(root) == []  # ignored by the rules: not even counted as excluded


def test_symlinks_out_of_every_root_are_excluded(root: Path, tmp_path: Path) -> None:
    # Found in a trial: a repository may hold `docs/notes.md -> ~/.ssh/id_rsa`; the key was indexed.
    home = tmp_path / "home"
    write(home, {".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n", "shadow": "root:$6$hash\n",
                 "projects/x.md": "x\n"})
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").symlink_to(home / ".ssh" / "id_rsa")
    (root / "docs" / "setup.md").symlink_to(home / "shadow")
    (root / "projects").symlink_to(home / "projects", target_is_directory=True)
    items = discover(root)

    assert indexed(items, root) == set()
    assert {(i.path.relative_to(root).as_posix(), i.category) for i in items if isinstance(i, ExcludedPath)} == {
        ("docs/notes.md", "secret"), ("docs/setup.md", "outside_roots"), ("projects", "outside_roots")
    }


def test_symlinks_to_excluded_places_inside_the_root_are_excluded(root: Path) -> None:
    write(root, {".ssh/id_rsa": "key\n", ".git/HEAD": "ref\n", "a.md": "x\n"})
    (root / "notes.md").symlink_to(root / ".ssh" / "id_rsa")
    (root / "gitdir").symlink_to(root / ".git", target_is_directory=True)
    (root / "alias.md").symlink_to(root / "a.md")
    items = discover(root)

    assert indexed(items, root) == {"a.md", "alias.md"}
    found = {(i.path.relative_to(root).as_posix(), i.category) for i in items if isinstance(i, ExcludedPath)}
    assert {("notes.md", "secret"), ("gitdir", "version_control")} <= found


def test_symlink_loop_is_reported_and_the_walk_goes_on(root: Path) -> None:
    write(root, {"a/file.txt": "x", "z.txt": "x"})
    (root / "a" / "back").symlink_to(root, target_is_directory=True)
    (root / "a" / "self").symlink_to(root / "a", target_is_directory=True)
    items = discover(root)

    assert indexed(items, root) == {"a/file.txt", "z.txt"}
    loops = problems(items)
    assert [(p.path, p.error_type) for p in loops] == [
        (root / "a" / "back", "SymlinkLoop"),
        (root / "a" / "self", "SymlinkLoop"),
    ]
    assert str(root) in loops[0].message
    assert str(root / "a") in loops[1].message


def test_two_links_to_the_same_directory_are_both_walked(root: Path, tmp_path: Path) -> None:
    shared = root / "shared"
    shared.mkdir()
    (shared / "s.txt").write_text("x\n")
    (root / "one").symlink_to(shared, target_is_directory=True)
    (root / "two").symlink_to(shared, target_is_directory=True)

    assert indexed(discover(root), root) == {"one/s.txt", "two/s.txt", "shared/s.txt"}


def test_self_referencing_symlink_is_a_loop(root: Path) -> None:
    (root / "me.txt").symlink_to(root / "me.txt")
    write(root, {"ok.txt": "x"})
    items = discover(root)

    [problem] = problems(items)
    assert (problem.path, problem.error_type) == (root / "me.txt", "SymlinkLoop")
    assert indexed(items, root) == {"ok.txt"}


def test_dangling_symlink_is_a_file_not_found_problem(root: Path) -> None:
    (root / "dangling.md").symlink_to(root / "gone.md")
    write(root, {"ok.txt": "x"})
    items = discover(root)

    [problem] = problems(items)
    assert (problem.path, problem.root, problem.error_type) == (root / "dangling.md", root, "FileNotFoundError")
    assert indexed(items, root) == {"ok.txt"}


def test_dangling_symlink_with_binary_suffix_is_skipped_without_stat(root: Path) -> None:
    (root / "gone.png").symlink_to(root / "nowhere.png")

    assert discover(root) == [SkippedFile(root / "gone.png", root, "binary_suffix")]


# -- permissions and races -----------------------------------------------------------------------


def deny_listing(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make os.scandir raise PermissionError for ``denied`` (chmod 000 does not stop root)."""
    real_scandir = os.scandir

    def guarded_scandir(path="."):
        if os.fspath(path) == str(denied):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", guarded_scandir)


def test_unreadable_directory_is_a_problem_and_the_walk_goes_on(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, {"a/x.txt": "x", "locked/secret.txt": "x", "z/y.txt": "x"})
    deny_listing(monkeypatch, root / "locked")
    items = discover(root)

    assert indexed(items, root) == {"a/x.txt", "z/y.txt"}
    [problem] = problems(items)
    assert (problem.path, problem.root, problem.error_type) == (root / "locked", root, "PermissionError")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_chmod_000_directory_is_a_permission_problem(root: Path) -> None:
    write(root, {"locked/secret.txt": "x", "ok.txt": "x"})
    (root / "locked").chmod(0)
    try:
        items = discover(root)
    finally:
        (root / "locked").chmod(0o755)

    assert indexed(items, root) == {"ok.txt"}
    assert [(p.path, p.error_type) for p in problems(items)] == [(root / "locked", "PermissionError")]


def test_file_vanishing_between_listing_and_stat(root: Path) -> None:
    write(root, {"a.txt": "x", "b.txt": "x", "c.txt": "x"})
    walk: Iterator = FilesystemSource(MB).discover([Root(root)])

    first = next(walk)
    (root / "b.txt").unlink()  # the directory was listed already; b.txt goes before its stat
    rest = list(walk)

    # Trial: `rm -rf` during a run gave one FileNotFoundError per file, and kept their records
    # as unreadable. A path deleted meanwhile is simply not there, as if the walk came later.
    assert first.path == root / "a.txt"
    assert [item.path for item in rest] == [root / "c.txt"]
    assert isinstance(rest[0], SourceFile)


def test_folder_vanishing_between_listing_and_walking_it(root: Path) -> None:
    write(root, {"a.txt": "x", "sub/b.txt": "x", "sub/deep/c.txt": "x", "z.txt": "x"})
    walk: Iterator = FilesystemSource(MB).discover([Root(root, recursive=True)])
    first = next(walk)
    shutil.rmtree(root / "sub")  # listed with the root, gone before it is entered
    rest = list(walk)
    assert {item.path for item in (first, *rest)} == {root / "a.txt", root / "z.txt"}
    assert problems([first, *rest]) == []


def test_a_dangling_link_stays_a_problem(root: Path) -> None:
    write(root, {"a.txt": "x"})
    (root / "dangling.txt").symlink_to(root / "nowhere.txt")
    items = discover(root)
    assert [(p.path, p.error_type) for p in problems(items)] == [(root / "dangling.txt", "FileNotFoundError")]


def test_file_vanishing_simulated_with_stat(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, {"a.txt": "x", "b.txt": "x"})
    real_stat = os.stat
    gone = str(root / "a.txt")

    def vanishing_stat(path, *args, **kwargs):
        if os.fspath(path) == gone:
            raise FileNotFoundError(2, "No such file or directory", gone)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", vanishing_stat)
    items = discover(root)

    assert [(p.path, p.error_type) for p in problems(items)] == [(root / "a.txt", "FileNotFoundError")]
    assert indexed(items, root) == {"b.txt"}


def test_read_bytes_passes_os_errors_through(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, {"a.txt": "x"})
    [file] = discover(root)
    source = FilesystemSource(MB)

    def denied_open(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(filesystem_source.os, "open", denied_open)
    with pytest.raises(PermissionError):
        source.read_bytes(file)
    monkeypatch.undo()

    (root / "a.txt").unlink()
    (root / "a.txt").mkdir()
    with pytest.raises(IsADirectoryError):
        source.read_bytes(file)


def test_a_file_replaced_after_the_walk_is_not_read(root: Path, tmp_path: Path) -> None:
    # Found in a trial: files swapped for links to ~/.ssh/id_rsa between the walk and the read had
    # the key indexed (219 copies), and a file swapped for a FIFO blocked `index` forever.
    from hermes_workspace.adapters.filesystem_source import FileChangedError

    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVATE KEY\n")
    write(root, {"a.md": "a\n", "b.md": "b\n", "c.md": "c\n"})
    files = {f.path.name: f for f in discover(root) if isinstance(f, SourceFile)}
    (root / "a.md").unlink()
    (root / "a.md").symlink_to(secret)
    (root / "b.md").unlink()
    os.mkfifo(root / "b.md")
    source = FilesystemSource(MB)

    for name in ("a.md", "b.md"):
        with pytest.raises(FileChangedError, match="replaced since the walk"):
            source.read_bytes(files[name])
    assert source.read_bytes(files["c.md"]) == b"c\n"
