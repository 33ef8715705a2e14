"""Failures of the index database as a whole, with the real SQLite adapters: a full disk stops
``index`` with ``store_error`` (exit 74) and keeps what was committed; a read-only index file
during the embedding pass does the same; Ctrl-C during the embedding pass keeps the vectors the
embedder handed out. The full disk is SQLite's own SQLITE_FULL (``PRAGMA max_page_count``), the
read-only file SQLite's own SQLITE_READONLY (a read-only connection: these tests may run as
root, whom ``chmod 0444`` does not stop)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.memory import HashEmbedder
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.application import batch_writer
from hermes_workspace.application.embedding import EmbedChunks
from hermes_workspace.domain.errors import StoreUnusableError
from hermes_workspace.entrypoints import cli as cli_module
from hermes_workspace.entrypoints.cli import main
from tests.store_files import FullDiskStore, integrity

LATE_FILES = 300


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(list(args))
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def write_notes(folder: Path, prefix: str, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        words = " ".join(f"{prefix}{i}word{j}" for j in range(120))
        (folder / f"{prefix}{i:03}.md").write_text(f"# {prefix} {i}\n\n{words}\n", encoding="utf-8")


def files_in(path: Path) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        conn.close()


def log_records(home: Path) -> Iterator[dict]:
    for line in (home / "logs" / "workspace.log").read_text(encoding="utf-8").splitlines():
        yield json.loads(line)


def test_a_full_disk_is_exit_74_and_the_next_run_finishes_the_work(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_INDEX_WORKERS", "1")
    notes = home / "workspace" / "notes"
    write_notes(notes, "early", 10)
    assert cli(capsys, "--quiet", "index")[0] == 0
    index = home / "workspace" / ".index" / "workspace.sqlite"

    write_notes(notes, "late", LATE_FILES)
    monkeypatch.setattr(batch_writer, "BATCH_MAX_FILES", 10)

    def full_disk(path: Path, readonly: bool = False) -> SqliteFts5Store:
        return SqliteFts5Store(path, readonly=True) if readonly else FullDiskStore(path, headroom_pages=120)

    # The built-in store plugin builds its store from this module attribute when called.
    monkeypatch.setattr("hermes_workspace.adapters.sqlite_fts5_store.SqliteFts5Store", full_disk)
    code, data = cli(capsys, "--quiet", "index")
    assert code == 74
    error = data["error"]
    assert error["code"] == "store_error"
    assert "database or disk is full" in error["message"]
    found = re.search(r"indexing stopped after (\d+) files had been indexed in this run \(they are kept\)",
                      error["message"])
    assert found is not None, error["message"]
    indexed = int(found.group(1))
    assert 0 < indexed < LATE_FILES  # it stopped at the first failure, after some batches
    assert error["hint"] == (
        f"The disk holding {index.parent} is full: free space on it. Then run `hermes-workspace index` again: "
        "what was indexed is kept, only the rest is done."
    )
    assert files_in(index) == 10 + indexed
    assert integrity(index) == [("ok",)]
    stopped = [r for r in log_records(home) if r.get("event") == "index stopped: the index database failed"]
    assert [(r["files_indexed"], r["files_errored"], r["level"]) for r in stopped] == [(indexed, 0, "error")]

    monkeypatch.setattr("hermes_workspace.adapters.sqlite_fts5_store.SqliteFts5Store", SqliteFts5Store)  # space freed
    code, summary = cli(capsys, "--quiet", "index")
    assert code == 0
    assert (summary["files_indexed"], summary["files_errored"]) == (LATE_FILES - indexed, 0)
    assert summary["skipped"]["unchanged"] == 10 + indexed
    assert integrity(index) == [("ok",)]
    assert files_in(index) == 10 + LATE_FILES
    for word, name in (("early0word7", "early000.md"), (f"late{LATE_FILES - 1}word3", f"late{LATE_FILES - 1:03}.md")):
        code, hits = cli(capsys, "search", word)
        assert code == 0 and [Path(h["path"]).name for h in hits] == [name]


# -- the embedding pass ---------------------------------------------------------------------


@pytest.fixture
def sqlite_vec() -> None:
    pytest.importorskip("sqlite_vec")


def read_only_vectors(path: Path):  # type: ignore[no-untyped-def]
    """A vector index on a read-only connection that still sends its writes to SQLite, which
    refuses them with SQLITE_READONLY, as for an index file made read-only."""
    from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex

    index = SqliteVecIndex(path, readonly=True)
    index.readonly = False
    return index


@pytest.mark.usefixtures("sqlite_vec")
def test_a_read_only_index_during_the_embedding_pass_is_exit_74(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_INDEX_WORKERS", "1")
    notes = home / "workspace" / "notes"
    write_notes(notes, "early", 3)
    # The CLI's workspace, with the fake embedder (and below, the read-only vector index).
    monkeypatch.setattr(cli_module, "_workspace", lambda: Workspace.open(home, embedder=HashEmbedder()))
    code, summary = cli(capsys, "--quiet", "index")
    assert (code, summary["semantic"]["status"], summary["semantic"]["embedded"]) == (0, "ready", 3)

    write_notes(notes, "late", 2)
    index = home / "workspace" / ".index" / "workspace.sqlite"
    monkeypatch.setattr(cli_module, "_workspace", lambda: Workspace.open(
        home, embedder=HashEmbedder(), vector_index=read_only_vectors(index)))
    code, data = cli(capsys, "--quiet", "index")
    assert code == 74
    error = data["error"]
    assert error["code"] == "store_error"
    assert "attempt to write a readonly database" in error["message"]
    assert error["message"].endswith(
        "; computing vectors stopped after 0 chunks got theirs in this run (they are kept); "
        "the keyword index is up to date (2 files indexed in this run)"
    )
    assert "writable" in error["hint"] and "run `hermes-workspace index` again" in error["hint"]
    code, hits = cli(capsys, "search", "--mode", "keyword", "late1word5")
    assert code == 0 and [Path(h["path"]).name for h in hits] == ["late001.md"]


def chmod_stops_writes(folder: Path) -> bool:
    """Whether a file made read-only refuses this process's writes (not for root, who has
    CAP_DAC_OVERRIDE)."""
    probe = folder / "probe"
    probe.write_text("x")
    probe.chmod(0o444)
    try:
        with probe.open("a"):
            return False
    except PermissionError:
        return True
    finally:
        probe.chmod(0o644)
        probe.unlink()


def test_a_read_only_index_file_is_exit_74(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if not chmod_stops_writes(tmp_path):
        pytest.skip("chmod 0444 does not stop this user's writes (root); the test above covers SQLITE_READONLY")
    monkeypatch.setenv("HERMES_INDEX_WORKERS", "1")
    notes = home / "workspace" / "notes"
    write_notes(notes, "early", 3)
    assert cli(capsys, "--quiet", "index")[0] == 0
    index = home / "workspace" / ".index" / "workspace.sqlite"
    write_notes(notes, "late", 2)
    index.chmod(0o444)
    try:
        code, data = cli(capsys, "--quiet", "index")
    finally:
        index.chmod(0o644)
    assert (code, data["error"]["code"]) == (74, "store_error")
    assert files_in(index) == 3


class HandsOutThenInterrupted(HashEmbedder):
    """Hands out one vector per ``embed_documents_progressively`` yield; Ctrl-C at the
    ``interrupt_at``-th."""

    def __init__(self, interrupt_at: int) -> None:
        super().__init__()
        self.interrupt_at = interrupt_at

    def embed_documents_progressively(self, texts):  # type: ignore[no-untyped-def]
        for index, text in enumerate(texts):
            if index + 1 == self.interrupt_at:
                raise KeyboardInterrupt
            yield [(index, self._vector(text))]


@pytest.mark.usefixtures("sqlite_vec")
def test_ctrl_c_during_the_embedding_pass_keeps_the_vectors_handed_out(home: Path) -> None:
    from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex

    write_notes(home / "workspace" / "notes", "note", 12)
    with Workspace.open(home) as ws:
        assert ws.index().files_indexed == 12
        path = ws.index_path
    with pytest.raises(KeyboardInterrupt):
        EmbedChunks(embedder=HandsOutThenInterrupted(interrupt_at=8),
                    open_vectors=lambda: SqliteVecIndex(path)).execute()
    with SqliteVecIndex(path, readonly=True) as vectors:
        status = vectors.status()
    assert (status.embedded, status.pending, status.vectors) == (7, 5, 7)
    assert integrity(path) == [("ok",)]
    with pytest.raises(StoreUnusableError):  # and a read-only index refuses to take the rest
        EmbedChunks(embedder=HashEmbedder(), open_vectors=lambda: read_only_vectors(path)).execute()
