"""File names that are not valid UTF-8 are indexed and reported with their real bytes recoverable
(found in a trial: each such file was a StoreError), and a root under a folder without permission
is a root_not_found error, not an internal error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InMemoryConfigRepository
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.application.roots import AddRoot
from hermes_workspace.domain.errors import RootNotFoundError, StoreError, UsageError
from hermes_workspace.domain.paths import display_name, escape_json_surrogates, from_storage, to_storage
from hermes_workspace.domain.query import parse_query
from hermes_workspace.entrypoints.cli import main
from tests.store_files import make_file

ODD = os.fsdecode(b"/ws/caf\xe9/r\xe9sum\xe9 \xff.md")


def test_every_undecodable_byte_round_trips_through_storage() -> None:
    name = os.fsdecode(bytes(range(0x80, 0x100)))
    stored = to_storage(name)
    stored.encode("utf-8")  # valid Unicode: SQLite can hold it
    assert from_storage(stored) == name
    assert os.fsencode(from_storage(stored)) == bytes(range(0x80, 0x100))
    assert to_storage("/plain/ünïcode/名前.md") == "/plain/ünïcode/名前.md"


def test_the_reserved_code_points_are_refused_not_confused() -> None:
    with pytest.raises(ValueError, match="reserves"):
        to_storage("/x/\U0010ffe9.md")


def test_json_and_terminal_forms() -> None:
    document = escape_json_surrogates(json.dumps({"path": ODD}, ensure_ascii=False))
    document.encode("utf-8")
    assert os.fsencode(json.loads(document)["path"]) == b"/ws/caf\xe9/r\xe9sum\xe9 \xff.md"
    assert display_name(ODD) == "/ws/caf\\xe9/r\\xe9sum\\xe9 \\xff.md"


def test_the_store_keeps_an_undecodable_name(tmp_path: Path) -> None:
    with SqliteFts5Store(tmp_path / "index.sqlite") as store:
        record, chunks = make_file(ODD, ["bonjour from an odd name"])
        store.replace_file(record, chunks)
        assert store.get_file(Path(ODD)) is not None
        assert [r.path for r in store.file_records()] == [Path(ODD)]
        hits = store.search(parse_query("bonjour"), path_prefix=os.fsdecode(b"/ws/caf\xe9/"), glob="*\udcff.md")
        assert [h.path for h in hits] == [Path(ODD)]
        assert store.delete_files([Path(ODD)]) == 1


def test_a_reserved_code_point_in_a_name_is_that_files_store_error(tmp_path: Path) -> None:
    with SqliteFts5Store(tmp_path / "index.sqlite") as store:
        with pytest.raises(StoreError, match="Rename the file|reserves"):
            store.replace_file(*make_file("/ws/\U0010ffe9.md", ["x y"]))


def test_cli_indexes_and_reports_undecodable_names(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    os.makedirs(os.fsencode(root) + b"/sub\xff")
    Path(os.fsdecode(os.fsencode(root) + b"/caf\xe9.txt")).write_text("bonjour latin name\n")
    Path(os.fsdecode(os.fsencode(root) + b"/sub\xff/n\xe4me.md")).write_text("# Title\n\nbonjour again\n")
    assert main(["roots", "add", str(root), "--recursive"]) == 0
    capsys.readouterr()
    assert main(["index"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["files_indexed"], summary["files_errored"]) == (2, 0)

    assert main(["search", "bonjour"]) == 0
    raw = capsys.readouterr().out
    raw.encode("utf-8")
    found = {os.fsencode(hit["path"]) for hit in json.loads(raw)}
    assert found == {os.fsencode(root) + b"/caf\xe9.txt", os.fsencode(root) + b"/sub\xff/n\xe4me.md"}
    assert all(os.path.exists(path) for path in found)

    assert main(["--human", "search", "bonjour", "--glob", "sub\udcff/*.md"]) == 0
    human = capsys.readouterr().out
    assert "sub\\xff/n\\xe4me.md:1-3" in human


def test_a_root_under_a_folder_without_permission_is_root_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root a real chmod 000 does not stop os.stat, so the denial is simulated where it happens.
    def denied(self: Path, *args: object, **kwargs: object) -> os.stat_result:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "stat", denied)
    with pytest.raises(RootNotFoundError, match="cannot look at .*: Permission denied") as info:
        AddRoot(InMemoryConfigRepository(), tmp_path).execute(tmp_path / "locked" / "notes")
    assert (info.value.code, info.value.exit_code) == ("root_not_found", 66)
    assert "permissions" in info.value.hint


def test_a_root_whose_name_holds_reserved_code_points_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "notes\U0010ffe9"
    folder.mkdir()
    repo = InMemoryConfigRepository()
    with pytest.raises(UsageError, match="cannot index .*reserves"):
        AddRoot(repo, tmp_path).execute(folder)
    assert repo.saves == 0
