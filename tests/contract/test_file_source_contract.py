"""The FileSource contract, run against the in-memory fake and the filesystem adapter.

The fake has no ignore rules and the real source applies the built-in defaults to a root without an
ignore file, so the tree below avoids every name the defaults exclude. Ignore rules, symlinks and
permissions are adapter specifics: tests/unit/test_filesystem_source.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.memory import InMemoryFileSource
from hermes_workspace.domain.model import ChangedScope, DiscoveryProblem, Root, SkippedFile, SourceFile
from hermes_workspace.domain.ports import FileSource

MAX_BYTES = 100

TREE: dict[str, bytes] = {
    "notes.md": b"# Notes\n\nhello world\n",
    "readme.txt": b"plain text\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "Photo.JPG": b"\xff\xd8\xff\xe0 not really a jpeg",
    "big.txt": b"x" * (MAX_BYTES + 1),
    "exact.txt": b"y" * MAX_BYTES,
    "empty.txt": b"",
    "sub/deep.py": b"print('deep')\n",
    "sub/inner/more.md": b"## More\n",
    "sub/inner/archive.zip": b"PK\x03\x04",
    "sub/zero.md": b"",
    "a.b/c.txt": b"dotted dir name\n",
}

TOP_LEVEL_FILES = {"notes.md", "readme.txt", "exact.txt"}
NESTED_FILES = {"sub/deep.py", "sub/inner/more.md", "a.b/c.txt"}
TOP_LEVEL_SKIPS = {
    "logo.png": "binary_suffix",
    "Photo.JPG": "binary_suffix",
    "big.txt": "too_large",
    "empty.txt": "empty",
}
NESTED_SKIPS = {"sub/inner/archive.zip": "binary_suffix", "sub/zero.md": "empty"}


@dataclass
class Harness:
    """A source over a tree rooted at ``root``; ``remove`` deletes a file behind the source's back."""

    source: FileSource
    root: Path
    remove: Callable[[Path], None]


def _memory(base: Path, files: dict[str, bytes]) -> Harness:
    root = base / "ws"
    source = InMemoryFileSource({root / rel: data for rel, data in files.items()}, max_file_bytes=MAX_BYTES)
    return Harness(source, root, lambda path: source.files.pop(path))


def _filesystem(base: Path, files: dict[str, bytes]) -> Harness:
    root = base.resolve() / "ws"
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return Harness(FilesystemSource(max_file_bytes=MAX_BYTES), root, Path.unlink)


@pytest.fixture(params=["memory", "filesystem"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[dict[str, bytes]], Harness]:
    builder = {"memory": _memory, "filesystem": _filesystem}[request.param]
    return lambda files=TREE: builder(tmp_path, files)


def _rel(items: list, root: Path, kind: type) -> set[str]:
    return {item.path.relative_to(root).as_posix() for item in items if isinstance(item, kind)}


def _skips(items: list, root: Path) -> dict[str, str]:
    return {item.path.relative_to(root).as_posix(): item.reason for item in items if isinstance(item, SkippedFile)}


def test_satisfies_the_protocol(make) -> None:
    assert isinstance(make().source, FileSource)


def test_non_recursive_root_yields_only_top_level_files(make) -> None:
    h = make()
    items = list(h.source.discover([Root(h.root, recursive=False)]))

    assert _rel(items, h.root, SourceFile) == TOP_LEVEL_FILES
    assert _skips(items, h.root) == TOP_LEVEL_SKIPS
    assert not [i for i in items if isinstance(i, DiscoveryProblem)]


def test_recursive_root_yields_the_whole_tree(make) -> None:
    h = make()
    items = list(h.source.discover([Root(h.root, recursive=True)]))

    assert _rel(items, h.root, SourceFile) == TOP_LEVEL_FILES | NESTED_FILES
    assert _skips(items, h.root) == TOP_LEVEL_SKIPS | NESTED_SKIPS
    assert not [i for i in items if isinstance(i, DiscoveryProblem)]


def test_source_files_carry_root_size_and_mtime(make) -> None:
    h = make()
    files = [i for i in h.source.discover([Root(h.root, recursive=True)]) if isinstance(i, SourceFile)]

    for file in files:
        assert file.root == h.root
        assert file.path.is_absolute()
        assert file.size == len(TREE[file.path.relative_to(h.root).as_posix()])
        assert isinstance(file.mtime_ns, int) and file.mtime_ns > 0


def test_size_cap_is_inclusive_and_empty_files_are_skipped(make) -> None:
    h = make()
    items = {i.path.name: i for i in h.source.discover([Root(h.root)])}

    assert isinstance(items["exact.txt"], SourceFile)  # size == max_file_bytes is allowed
    assert items["big.txt"] == SkippedFile(h.root / "big.txt", h.root, "too_large")
    assert items["empty.txt"] == SkippedFile(h.root / "empty.txt", h.root, "empty")


def test_binary_suffix_is_case_insensitive_and_wins_over_size(make) -> None:
    files = dict(TREE)
    files["huge.pdf"] = b"%" * (MAX_BYTES * 3)
    files["nothing.GIF"] = b""
    h = make(files)
    skips = _skips(list(h.source.discover([Root(h.root)])), h.root)

    assert skips["huge.pdf"] == "binary_suffix"
    assert skips["nothing.GIF"] == "binary_suffix"
    assert skips["Photo.JPG"] == "binary_suffix"


def test_order_is_deterministic_and_sorted(make) -> None:
    h = make()
    roots = [Root(h.root, recursive=True)]
    first = [i.path for i in h.source.discover(roots)]
    second = [i.path for i in h.source.discover(roots)]

    assert first == second
    assert first == sorted(first)


def test_missing_root_is_a_problem_and_the_run_goes_on(make) -> None:
    h = make()
    missing = h.root.parent / "does-not-exist"
    items = list(h.source.discover([Root(missing, recursive=True), Root(h.root)]))

    problems = [i for i in items if isinstance(i, DiscoveryProblem)]
    assert len(problems) == 1
    assert problems[0].path == problems[0].root == missing
    assert problems[0].error_type == "FileNotFoundError"
    assert items[0] == problems[0]
    assert _rel(items[1:], h.root, SourceFile) == TOP_LEVEL_FILES


def test_roots_are_walked_in_the_order_given(make) -> None:
    h = make()
    sub = h.root / "sub"
    items = list(h.source.discover([Root(sub), Root(h.root)]))
    paths = [i.path for i in items]

    first_of_root = next(k for k, p in enumerate(paths) if p.parent == h.root)
    assert all(p.is_relative_to(sub) for p in paths[:first_of_root])
    assert paths[0] == sub / "deep.py"


def test_overlapping_roots_yield_a_file_once_per_root(make) -> None:
    h = make()
    items = list(h.source.discover([Root(h.root, recursive=True), Root(h.root / "sub")]))
    deep = [i for i in items if isinstance(i, SourceFile) and i.path.name == "deep.py"]

    assert [d.root for d in deep] == [h.root, h.root / "sub"]


def test_read_bytes_returns_the_content(make) -> None:
    h = make()
    files = [i for i in h.source.discover([Root(h.root, recursive=True)]) if isinstance(i, SourceFile)]

    for file in files:
        assert h.source.read_bytes(file) == TREE[file.path.relative_to(h.root).as_posix()]


def test_read_bytes_of_a_vanished_file_raises_file_not_found(make) -> None:
    h = make()
    file = next(i for i in h.source.discover([Root(h.root)]) if isinstance(i, SourceFile))
    h.remove(file.path)

    with pytest.raises(FileNotFoundError):
        h.source.read_bytes(file)


def test_discover_is_lazy(make) -> None:
    h = make()
    iterator = h.source.discover([Root(h.root.parent / "nope")])

    assert iter(iterator) is iterator  # a generator: nothing happens before the first next()
    assert isinstance(next(iterator), DiscoveryProblem)
    assert next(iterator, None) is None


def test_discover_paths_yields_the_scopes_then_the_items_of_discover_under_them(make) -> None:
    h = make()
    roots = [Root(h.root, recursive=True)]
    given = [h.root / "sub", h.root / "notes.md", h.root / "big.txt", h.root / "gone.md", h.root.parent / "elsewhere.md"]
    items = list(h.source.discover_paths(roots, given))
    assert [i for i in items if isinstance(i, ChangedScope)] == [
        ChangedScope(given[0], given[0]), ChangedScope(given[1], given[1]), ChangedScope(given[2], given[2]),
        ChangedScope(given[3], given[3]), ChangedScope(given[4], None, "outside_roots"),
    ]
    assert _rel(items, h.root, SourceFile) == {"notes.md", "sub/deep.py", "sub/inner/more.md"}
    assert _skips(items, h.root) == {"big.txt": "too_large", "sub/inner/archive.zip": "binary_suffix",
                                     "sub/zero.md": "empty"}


def test_discover_paths_in_a_non_recursive_root_covers_direct_children_only(make) -> None:
    h = make()
    roots = [Root(h.root, recursive=False)]
    items = list(h.source.discover_paths(roots, [h.root / "notes.md", h.root / "sub" / "deep.py"]))
    assert _rel(items, h.root, SourceFile) == {"notes.md"}
    assert ChangedScope(h.root / "sub" / "deep.py", None, "outside_roots") in items
