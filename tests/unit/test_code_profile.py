"""Code profile of a root (issue 12): extensions from marker files, explicit extensions, a size
cap per root, the config keys, and the File/Language/Lines header of code chunks for the embedder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.memory import HashEmbedder, InMemoryFileSource, InMemoryIndexStore, InMemoryVectorIndex
from hermes_workspace.application.embedding import EmbedChunks
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError
from hermes_workspace.domain.model import Root, SkippedFile, SourceFile
from hermes_workspace.domain.profiles import (
    ALWAYS_INCLUDED,
    FALLBACK_EXTENSIONS,
    PROJECT_MARKERS,
    detect_markers,
    root_extensions,
)
from hermes_workspace.domain.semantic import chunk_embedding_input
from hermes_workspace.domain.sizes import parse_size, size_setting
from hermes_workspace.testing.files import make_file

MARKDOWN = {".md", ".mdx", ".markdown"}


# -- marker detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("marker", "extensions"),
    [
        ("package.json", {".ts", ".tsx", ".js", ".jsx", ".json", ".css", ".html"}),
        ("pyproject.toml", {".py", ".pyi"}),
        ("setup.py", {".py", ".pyi"}),
        ("requirements.txt", {".py", ".pyi"}),
        ("go.mod", {".go"}),
        ("Cargo.toml", {".rs"}),
        ("pom.xml", {".java", ".kt"}),
        ("build.gradle", {".java", ".kt"}),
        ("Gemfile", {".rb"}),
    ],
)
def test_each_marker_gives_its_extensions_and_markdown(marker: str, extensions: set[str]) -> None:
    assert root_extensions("code", None, [marker, "README.md", "notes.txt"]) == extensions | MARKDOWN


def test_several_markers_merge() -> None:
    got = root_extensions("code", None, ["package.json", "pyproject.toml", "go.mod"])
    assert got == {".ts", ".tsx", ".js", ".jsx", ".json", ".css", ".html", ".py", ".pyi", ".go"} | MARKDOWN
    assert detect_markers(["go.mod", "x", "package.json"]) == ("package.json", "go.mod")


def test_no_marker_gives_the_fallback_of_every_code_and_text_type() -> None:
    got = root_extensions("code", None, ["README.md", "Makefile", "go.sum"])
    assert got == FALLBACK_EXTENSIONS
    # Seed 002's fallback list, and the rest of what the code chunker reads, and common text.
    assert {".ts", ".tsx", ".js", ".jsx", ".py", ".go", ".rs", ".java", ".kt", ".rb", ".md"} <= got
    assert {".c", ".cpp", ".swift", ".sql", ".txt", ".rst", ".yaml", ".toml", ".mdx"} <= got


def test_markers_are_exact_names() -> None:
    # A folder listing is case-sensitive on Linux: `gemfile` is not Ruby's Gemfile.
    assert root_extensions("code", None, ["gemfile", "GO.MOD"]) == FALLBACK_EXTENSIONS


def test_explicit_extensions_win_over_detection_and_markdown() -> None:
    assert root_extensions("code", (".go", ".proto"), ["package.json"]) == {".go", ".proto"}
    assert root_extensions(None, (".txt",), []) == {".txt"}


def test_markdown_is_in_every_detected_set() -> None:
    assert ALWAYS_INCLUDED == MARKDOWN
    for marker, _ in PROJECT_MARKERS:
        assert MARKDOWN <= root_extensions("code", None, [marker])


def test_a_root_without_profile_or_extensions_takes_every_file() -> None:
    assert root_extensions(None, None, ["package.json"]) is None


# -- sizes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [("1MB", 1048576), ("1 mb", 1048576), ("500KB", 512000), ("1.5KiB", 1536), ("2000", 2000), ("7B", 7),
     (4096, 4096), ("1GB", 1073741824)],
)
def test_parse_size(text: object, size: int) -> None:
    assert parse_size(text, "max_file_size") == size


@pytest.mark.parametrize("bad", ["", "MB", "1 XB", "-1MB", "1,5MB", True, 1.5, -3, None])
def test_parse_size_refuses(bad: object) -> None:
    with pytest.raises(ConfigError):
        parse_size(bad, "max_file_size")


def test_size_setting_reads_back() -> None:
    assert [size_setting(n) for n in (1048576, 1536, 0, 3 * 1024**3)] == ["1MB", "1536B", "0B", "3GB"]
    assert all(parse_size(size_setting(n), "max_file_size") == n for n in (1, 1023, 1024, 1048577, 5 * 1024**4))


# -- config ------------------------------------------------------------------------------------


def _roots(entry: dict[str, object], tmp_path: Path) -> tuple[Root, ...]:
    return WorkspaceConfig.from_dict({"knowledgebase": {"roots": [{"path": str(tmp_path), **entry}]}}).roots


def test_config_reads_profile_extensions_and_size(tmp_path: Path) -> None:
    (root,) = _roots({"profile": "code", "extensions": [".PY", ".md", ".py"], "max_file_size": "1MB"}, tmp_path)
    assert (root.profile, root.extensions, root.max_file_size, root.recursive) == (
        "code", (".md", ".py"), 1048576, True)
    (plain,) = _roots({}, tmp_path)
    assert (plain.profile, plain.extensions, plain.max_file_size, plain.recursive) == (None, None, None, False)
    (flat,) = _roots({"profile": "code", "recursive": False, "max_file_size": 300}, tmp_path)
    assert (flat.recursive, flat.max_file_size) == (False, 300)
    assert flat.to_json()["profile"] == "code" and flat.to_json()["max_file_size"] == 300


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"profile": "docs"}, "knowledgebase.roots[0].profile must be one of code, got the string 'docs'"),
        ({"profile": 3}, "knowledgebase.roots[0].profile must be one of code, got the number 3"),
        ({"extensions": "py"}, "knowledgebase.roots[0].extensions: an extension starts with a dot: write '.py'"),
        ({"extensions": [".tar.gz"]}, "knowledgebase.roots[0].extensions: '.tar.gz' is not one file extension"),
        ({"extensions": []}, "knowledgebase.roots[0].extensions is empty: no file would be indexed"),
        ({"extensions": {".py": 1}}, "knowledgebase.roots[0].extensions must be a list of file extensions"),
        ({"max_file_size": "1 XB"}, "knowledgebase.roots[0].max_file_size has an unknown size unit 'XB' in '1 XB'"),
        ({"max_file_size": 0}, "knowledgebase.roots[0].max_file_size must be at least 1 byte, got 0"),
        ({"max_file_size": "big"}, "knowledgebase.roots[0].max_file_size must be a size such as 2GB or a number of bytes, got 'big'"),
        ({"max_file_sise": "1MB"}, "unknown setting knowledgebase.roots[0].max_file_sise"),
    ],
)
def test_config_errors_name_the_key(entry: dict[str, object], message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _roots(entry, tmp_path)
    assert info.value.code == "config_invalid" and info.value.exit_code == 78
    assert info.value.message.startswith(message)
    assert info.value.hint


# -- discovery ---------------------------------------------------------------------------------


def _tree(base: Path, files: dict[str, int | str]) -> Path:
    for rel, body in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body if isinstance(body, str) else "x" * body)
    return base


def _walk(source: object, root: Root) -> tuple[list[str], dict[str, list[str]]]:
    found: list[str] = []
    skipped: dict[str, list[str]] = {}
    for item in source.discover([root]):  # type: ignore[attr-defined]
        rel = os.path.relpath(item.path, root.path)
        if isinstance(item, SourceFile):
            found.append(rel)
        elif isinstance(item, SkippedFile):
            skipped.setdefault(item.reason, []).append(rel)
    return sorted(found), skipped


REPO = {
    "go.mod": "module x\n",
    "main.go": "package main\n",
    "README.md": "# X\n",
    "docs/guide.mdx": "# Guide\n",
    "web/app.ts": "let a = 1\n",
    "tools/gen.py": "print(1)\n",
    "Makefile": "all:\n",
    "notes.txt": "notes\n",
}


def test_filesystem_source_indexes_what_the_markers_choose(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", REPO)
    source = FilesystemSource(10_000)
    found, _ = _walk(source, Root(repo, recursive=True, profile="code"))
    assert found == ["README.md", "docs/guide.mdx", "main.go"]
    # Detection happens at each walk: a package.json added later brings the .ts files in.
    (repo / "package.json").write_text("{}\n")
    found, _ = _walk(source, Root(repo, recursive=True, profile="code"))
    assert found == ["README.md", "docs/guide.mdx", "main.go", "package.json", "web/app.ts"]
    # A marker inside a sub-folder is not the project's: only the top level counts.
    sub = _tree(tmp_path / "other", {"src/pyproject.toml": "", "src/a.py": "x\n", "b.go": "package b\n"})
    found, _ = _walk(source, Root(sub, recursive=True, profile="code"))
    assert found == ["b.go", "src/a.py"]  # the fallback: every code type


def test_filesystem_source_explicit_extensions_win(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", REPO)
    found, _ = _walk(FilesystemSource(10_000), Root(repo, recursive=True, profile="code", extensions=(".py", ".txt")))
    assert found == ["notes.txt", "tools/gen.py"]
    found, _ = _walk(FilesystemSource(10_000), Root(repo, recursive=True))
    assert found == sorted(REPO)  # no profile, no extensions: everything


def test_per_root_size_cap_skips_as_too_large(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", {"go.mod": 10, "a.go": 100, "b.go": 101, "c.go": 5000, "d.md": 101, "e.ts": 9999})
    other = _tree(tmp_path / "other", {"big.go": 5000})
    source = FilesystemSource(4000)
    found, skipped = _walk(source, Root(repo, recursive=True, profile="code", max_file_size=100))
    assert found == ["a.go"]  # go.mod itself is not a .go file
    assert skipped == {"too_large": ["b.go", "c.go", "d.md"]}  # e.ts is not a Go project's: not counted
    # Larger than the global cap is allowed where the root says so; other roots keep the global cap.
    found, skipped = _walk(source, Root(repo, recursive=True, profile="code", max_file_size=5000))
    assert (found, skipped) == (["a.go", "b.go", "c.go", "d.md"], {})
    assert _walk(source, Root(other, recursive=True)) == ([], {"too_large": ["big.go"]})


def test_in_memory_source_applies_profile_and_cap_like_the_real_one() -> None:
    base = Path("/repo")
    files = {base / name: b"x" * size for name, size in {"go.mod": 5, "a.go": 50, "b.go": 500, "c.py": 5}.items()}
    source = InMemoryFileSource(files)
    assert _walk(source, Root(base, recursive=True, profile="code", max_file_size=100)) == (
        ["a.go"], {"too_large": ["b.go"]}
    )


def test_index_summary_counts_the_per_root_cap(tmp_path: Path) -> None:
    from hermes_workspace import Workspace

    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    repo = _tree(tmp_path / "repo", {"pyproject.toml": "[project]\n", "a.py": "def a():\n    return 1\n",
                                      "big.py": "x = 1\n" * 100, "c.js": "let c\n"})
    with Workspace.open(home) as ws:
        ws.add_root(repo, profile="code", max_file_size=100)
        summary = ws.index()
    assert (summary.files_indexed, summary.skipped) == (1, {"too_large": 1})  # a.py; c.js is not Python


# -- the embedding header -------------------------------------------------------------------


def test_header_text_for_a_code_chunk() -> None:
    text = chunk_embedding_input("io.reader", "def read(path):\n    return 1", path="/ws/src/io/read.py", root="/ws",
                                 start_line=10, end_line=45, code_header=True)
    assert text == "File: src/io/read.py\nLanguage: python\nLines: 10-45\n\nio.reader\ndef read(path):\n    return 1"
    ts = chunk_embedding_input(None, "let a = 1", path="/r/src/auth/login.ts", root="/r/", start_line=1, end_line=1,
                               code_header=True)
    assert ts == "File: src/auth/login.ts\nLanguage: typescript\nLines: 1-1\n\nlet a = 1"
    assert chunk_embedding_input("## Intro", "Some prose.", path="/ws/a.md", root="/ws", start_line=1,
                                 end_line=3, code_header=True) == "## Intro\nSome prose."
    # Off (the default of knowledgebase.embedder.code_header): the text as before.
    assert chunk_embedding_input("io.reader", "def read(path):\n    return 1", path="/ws/src/io/read.py", root="/ws",
                                 start_line=10, end_line=45, code_header=False) == "io.reader\ndef read(path):\n    return 1"


def test_embedder_gets_the_header_and_the_stored_chunk_stays(tmp_path: Path) -> None:
    store = InMemoryIndexStore()
    code, code_chunks = make_file("/ws/pkg/mod.py", ["def alpha():\n    return 1", "def beta():\n    return 2"])
    prose, prose_chunks = make_file("/ws/notes.md", ["Alpha and beta are functions."])
    store.replace_file(code, code_chunks)
    store.replace_file(prose, prose_chunks)
    embedder = HashEmbedder()
    vectors = InMemoryVectorIndex(store, code_header=True)
    report = EmbedChunks(embedder, lambda: vectors, batch_size=8).execute()
    assert report.embedded == 3
    assert sorted(text for call in embedder.calls for text in call) == [
        "Alpha and beta are functions.",
        "File: pkg/mod.py\nLanguage: python\nLines: 1-2\n\ndef alpha():\n    return 1",
        "File: pkg/mod.py\nLanguage: python\nLines: 4-5\n\ndef beta():\n    return 2",
    ]
    stored = store.files[Path("/ws/pkg/mod.py")][1]
    assert [(c.content, c.line_start, c.line_end) for c in stored] == [
        ("def alpha():\n    return 1", 1, 2), ("def beta():\n    return 2", 4, 5)
    ]
    assert vectors.input_version == "2"


def test_switching_the_header_makes_the_vectors_again() -> None:
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/a.py", ["x = 1"]))
    embedder = HashEmbedder()
    plain = InMemoryVectorIndex(store)
    EmbedChunks(embedder, lambda: plain).execute()
    assert (plain.input_version, embedder.calls) == ("1", [["x = 1"]])
    assert EmbedChunks(embedder, lambda: plain).execute().reembedded is False
    plain.code_header = True  # knowledgebase.embedder.code_header: true
    again = EmbedChunks(embedder, lambda: plain).execute()
    assert (again.reembedded, again.embedded, plain.input_version) == (True, 1, "2")
    assert embedder.calls[-1] == ["File: a.py\nLanguage: python\nLines: 1-1\n\nx = 1"]


def test_config_code_header(tmp_path: Path) -> None:
    assert WorkspaceConfig.from_dict({}).embedder.code_header is False
    on = WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"provider": "onnx", "code_header": True}}})
    assert on.embedder.code_header is True
    with pytest.raises(ConfigError) as info:
        WorkspaceConfig.from_dict({"knowledgebase": {"embedder": {"code_header": "yes"}}})
    assert (info.value.code, info.value.message) == (
        "config_invalid", "knowledgebase.embedder.code_header must be true or false, got 'yes'")
