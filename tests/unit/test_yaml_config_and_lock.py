"""YamlConfigRepository (comments kept), FileIndexLock, FilesystemLayout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.adapters.filesystem_layout import FilesystemLayout
from hermes_workspace.adapters.yaml_config import YamlConfigRepository
from hermes_workspace.domain.constants import DEFAULT_IGNORE_RULES
from hermes_workspace.domain.errors import ConfigError, IndexBusyError
from hermes_workspace.domain.model import Root

USER_CONFIG = """\
# my hermes settings
model:
  name: big-model   # keep me
workspace:
  enabled: true
knowledgebase:
  # roots I care about
  roots: []
  chunking:
    chunk_size: 256   # smaller chunks
"""


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    config = YamlConfigRepository(tmp_path / "config.yaml").load()
    assert config.chunking.chunk_size == 256
    assert config.roots == ()


def test_save_roots_keeps_comments_and_other_sections(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(USER_CONFIG)
    repo = YamlConfigRepository(path)
    repo.save_roots((Root(Path("/data/notes"), recursive=True), Root(Path("/src"))))
    text = path.read_text()
    assert "# my hermes settings" in text
    assert "name: big-model   # keep me" in text
    assert "chunk_size: 256   # smaller chunks" in text
    assert "# roots I care about" in text
    config = repo.load()
    assert config.roots == (Root(Path("/data/notes"), True), Root(Path("/src"), False))
    assert config.chunking.chunk_size == 256


def test_save_roots_creates_the_file_and_section(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.yaml"
    YamlConfigRepository(path).save_roots((Root(Path("/x")),))
    assert YamlConfigRepository(path).load().roots == (Root(Path("/x")),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("knowledgebase: [unclosed\n", "not valid YAML at line"),
        ("- a\n- b\n", "mapping at the top level"),
        ("knowledgebase:\n  chunking:\n    overlap: 9999\n", "overlap must be >= 0 and < chunk_size"),
    ],
)
def test_invalid_files_raise_config_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        YamlConfigRepository(path).load()
    assert message in info.value.message


def test_lock_refuses_a_second_holder_and_frees_on_exit(tmp_path: Path) -> None:
    path = tmp_path / ".index" / "index.lock"
    first, second = FileIndexLock(path), FileIndexLock(path)
    with first.hold():
        with pytest.raises(IndexBusyError) as info:
            with second.hold():
                pass
        assert info.value.exit_code == 75
        # Which process holds it, and a hint that also fits a running watch (trial).
        assert f"(process {os.getpid()}, lock: {path})" in info.value.message
        assert "`watch`" in info.value.hint
    with second.hold():
        pass


def test_layout_seeds_folders_and_never_overwrites_the_ignore_file(tmp_path: Path) -> None:
    primary = tmp_path / "ws"
    FilesystemLayout().ensure(primary, create_folders=True)
    assert sorted(p.name for p in primary.iterdir()) == [
        ".hermesignore", ".index", "code", "data", "docs", "media", "notes", "uploads"
    ]
    assert (primary / ".hermesignore").read_text() == DEFAULT_IGNORE_RULES
    (primary / ".hermesignore").write_text("mine\n")
    FilesystemLayout().ensure(primary, create_folders=True)
    assert (primary / ".hermesignore").read_text() == "mine\n"


def test_layout_without_folders_creates_only_the_index_dir(tmp_path: Path) -> None:
    FilesystemLayout().ensure(tmp_path / "ws", create_folders=False)
    assert [p.name for p in (tmp_path / "ws").iterdir()] == [".index"]


EDGE_CONFIG = """\
base: &base
  recursive: true
knowledgebase:
  roots:
    - <<: *base
      path: /tmp/hw-small/docs
    # a commented-out root I keep for later:
    # - path: /tmp/old
    - path: ~/hw-notes # my notes
      recursive: false
    - relative/dir
other:
  ref: *base
"""


def test_save_roots_edits_entries_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "config.yaml"
    path.write_text(EDGE_CONFIG)
    repo = YamlConfigRepository(path)
    roots = repo.load().roots
    assert roots == (
        Root(Path("/tmp/hw-small/docs"), True),
        Root(tmp_path / "hw-notes", False),
        Root(tmp_path / "relative" / "dir", False),
    )
    monkeypatch.chdir("/")
    assert repo.load().roots == roots  # relative to the config file, not the current directory
    repo.save_roots((*roots, Root(Path("/new/root"), True)))
    assert path.read_text() == EDGE_CONFIG.replace(
        "    - relative/dir\n", "    - relative/dir\n    - path: /new/root\n      recursive: true\n"
    )

    repo.save_roots((roots[1], Root(tmp_path / "relative" / "dir", True)))
    text = path.read_text()
    assert "<<: *base" not in text
    assert "base: &base" in text and "ref: *base" in text
    assert "- path: ~/hw-notes # my notes" in text
    assert "path: relative/dir\n      recursive: true" in text
    assert repo.load().roots == (Root(tmp_path / "hw-notes", False), Root(tmp_path / "relative" / "dir", True))


def test_unwritable_config_is_its_own_error(tmp_path: Path) -> None:
    from hermes_workspace.domain.errors import ConfigWriteError

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigWriteError) as info:
        YamlConfigRepository(blocker / "config.yaml").save_roots((Root(Path("/x")),))
    assert (info.value.code, info.value.exit_code) == ("config_unwritable", 73)


COMMENTED = """\
knowledgebase:
  roots:
    - path: /tmp/hw-t4/a
    # between a and c
    - path: /tmp/hw-t4/c
      recursive: true
    # - path: /tmp/old/trailing
  # after roots
  chunking:
    chunk_size: 100
"""


def test_removing_a_root_keeps_the_comments_after_it(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(COMMENTED)
    repo = YamlConfigRepository(path)
    repo.save_roots((Root(Path("/tmp/hw-t4/a")),))
    text = path.read_text()
    assert "# between a and c" in text
    assert "# - path: /tmp/old/trailing" in text
    assert "  # after roots\n  chunking:" in text
    assert repo.load().roots == (Root(Path("/tmp/hw-t4/a")),)
    assert repo.load().chunking.chunk_size == 100
    repo.save_roots(())
    text = path.read_text()
    assert "# after roots" in text
    assert repo.load().roots == ()


def test_a_comment_only_file_keeps_its_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("# just my notes\n")
    YamlConfigRepository(path).save_roots((Root(Path("/x")),))
    assert path.read_text().startswith("# just my notes\n")
    assert YamlConfigRepository(path).load().roots == (Root(Path("/x")),)


def test_the_file_is_parsed_once_per_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text("knowledgebase:\n  search:\n    default_limit: 7\n")
    repo = YamlConfigRepository(config_file)
    reads: list[int] = []
    original = YamlConfigRepository._read
    monkeypatch.setattr(YamlConfigRepository, "_read", lambda self: reads.append(1) or original(self))

    first, second = repo.load(), repo.load()
    assert first is second and first.default_limit == 7 and len(reads) == 1

    # An edit through this repository, then one by another process (another repository object).
    repo.save_roots((Root(tmp_path / "notes"),))
    assert [r.path for r in repo.load().roots] == [tmp_path / "notes"] and len(reads) == 3
    YamlConfigRepository(config_file).save_roots(())
    assert repo.load().roots == () and repo.load().default_limit == 7


def test_a_deleted_config_file_means_defaults_again(tmp_path: Path) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text("knowledgebase:\n  search:\n    default_limit: 7\n")
    repo = YamlConfigRepository(config_file)
    assert repo.load().default_limit == 7
    config_file.unlink()
    assert repo.load().default_limit == 20
