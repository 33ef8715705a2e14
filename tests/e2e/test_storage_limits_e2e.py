"""Storage limits (issue 12) with the real SQLite store, through the API and the CLI: the size
budget skips files with reason ``budget`` and exit 0, the free-disk floor stops ``index`` with
``disk_space_low`` (exit 74), ``status`` reports the size as the budget counts it, and a run
without an embedder prunes the vectors an earlier run left without a chunk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import apsw
import pytest

from hermes_workspace import Workspace
from hermes_workspace.entrypoints.cli import main


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(list(args))
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def write(home: Path, name: str, text: str) -> None:
    path = home / "workspace" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def configure(home: Path, **storage: object) -> None:
    lines = "".join(f"    {key}: {value}\n" for key, value in storage.items())
    (home / "config.yaml").write_text(f"knowledgebase:\n  storage:\n{lines}", encoding="utf-8")


def storage_of(home: Path) -> dict:
    with Workspace.open(home) as ws:
        return ws.status_report()["storage"]


def used_bytes(index: Path) -> int:
    conn = apsw.Connection(str(index), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        pages, free, size = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count",
                                                                                 "page_size"))
    finally:
        conn.close()
    return (pages - free) * size


@pytest.fixture
def corpus(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An indexed, empty workspace; then, in walk order, two small files, a big one (about 200 kB
    of text: more than 300 kB estimated) and three small ones."""
    monkeypatch.setenv("HERMES_INDEX_WORKERS", "1")
    (home / "workspace").mkdir()
    with Workspace.open(home) as ws:
        ws.index()
    for name in ("a1", "a2"):
        write(home, f"{name}.md", f"# {name}\n\n{words(name, 80)}\n")
    write(home, "b.md", "# b\n\n" + words("big", 30_000) + "\n")
    for name in ("c1", "c2", "c3"):
        write(home, f"{name}.md", f"# {name}\n\n{words(name, 80)}\n")
    return home


def test_a_tiny_budget_indexes_a_prefix_and_skips_the_rest_with_exit_0(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = storage_of(corpus)["size_bytes"]
    configure(corpus, max_size=base + 100_000)
    code, summary = cli(capsys, "--quiet", "index")
    assert code == 0  # a configured limit at work, not a failure
    assert (summary["files_indexed"], summary["files_skipped"], summary["skipped"]) == (2, 4, {"budget": 4})
    assert summary["notes"][0].startswith("4 files were not indexed because the index reached "
                                          "knowledgebase.storage.max_size (")
    with Workspace.open(corpus) as ws:
        assert sorted(Path(f.path).name for f in ws.list_files().files) == ["a1.md", "a2.md"]
        status = ws.status_report()
    assert status["skipped_last_run"] == {"budget": 4}
    assert status["storage"]["size_bytes"] <= base + 100_000

    configure(corpus, max_size=0)  # no limit: the next run does the rest
    code, summary = cli(capsys, "--quiet", "index")
    assert (code, summary["files_indexed"], summary["skipped"]) == (0, 4, {"unchanged": 2})


def test_at_the_budget_a_changed_file_keeps_its_indexed_version(corpus: Path) -> None:
    with Workspace.open(corpus) as ws:
        assert ws.index().files_indexed == 6
    write(corpus, "c1.md", "# c1\n\n" + words("grown", 3000) + "\n")
    write(corpus, "d.md", "# d\n\nnew file\n")
    configure(corpus, max_size=storage_of(corpus)["size_bytes"])
    with Workspace.open(corpus) as ws:
        summary = ws.index()
        assert (summary.files_indexed, summary.skipped) == (0, {"budget": 2, "unchanged": 5})
        assert [Path(h.path).name for h in ws.search("c17")] == ["c1.md"]  # the old version answers
        assert ws.search("grown17") == []


def test_status_reports_the_size_the_budget_counts(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(corpus, max_size="1MB", min_free_disk=0)
    asked: list[Path] = []
    monkeypatch.setattr("hermes_workspace.adapters.index_storage.free_disk", lambda path: asked.append(path) or 12345)
    with Workspace.open(corpus) as ws:
        ws.index()
        report = ws.status_report()
    index_dir = corpus / "workspace" / ".index"
    others = sum(p.stat().st_size for p in index_dir.rglob("*")
                 if p.is_file() and not p.name.startswith("workspace.sqlite"))
    storage = report["storage"]
    assert set(storage) == {"size_bytes", "max_size_bytes", "free_disk_bytes", "min_free_disk_bytes"}
    assert storage["size_bytes"] == used_bytes(index_dir / "workspace.sqlite") + others
    assert (storage["max_size_bytes"], storage["min_free_disk_bytes"]) == (1_048_576, 0)
    assert storage["free_disk_bytes"] == 12345
    assert asked == [index_dir]


def test_free_disk_asks_the_nearest_existing_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_workspace.adapters import index_storage

    asked: list[Path] = []

    def disk_usage(path: Path) -> shutil._ntuple_diskusage:  # type: ignore[name-defined]
        asked.append(path)
        return shutil._ntuple_diskusage(100, 60, 40)  # type: ignore[attr-defined]

    monkeypatch.setattr(index_storage.shutil, "disk_usage", disk_usage)
    assert index_storage.free_disk(tmp_path / "ws" / ".index") == 40  # before the first run
    assert asked == [tmp_path]


def test_status_human_shows_the_limits(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(corpus, max_size="2GB", min_free_disk="100MB")
    assert main(["--human", "status"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("storage: "))
    assert " of 2 GiB (max_size); " in line
    assert line.endswith(" free on disk, index writes stop below 100 MiB (min_free_disk)")


def test_low_disk_stops_index_with_disk_space_low_and_nothing_half_written(
    corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(corpus, min_free_disk="1GB")
    monkeypatch.setattr("hermes_workspace.adapters.index_storage.free_disk", lambda path: 500 * 1024**2)
    code, data = cli(capsys, "--quiet", "index")
    assert code == 74
    error = data["error"]
    assert error["code"] == "disk_space_low"
    assert error["message"].startswith(
        f"only 500 MiB free on the disk of {corpus / 'workspace' / '.index'}, less than "
        "knowledgebase.storage.min_free_disk (1 GiB): writes stopped before the next batch")
    assert error["message"].endswith("indexing stopped after 0 files had been indexed in this run (they are kept)")
    with Workspace.open(corpus) as ws:
        assert ws.status().files == 0

    monkeypatch.setattr("hermes_workspace.adapters.index_storage.free_disk", lambda path: 2 * 1024**3)
    code, summary = cli(capsys, "--quiet", "index")
    assert (code, summary["files_indexed"]) == (0, 6)


def test_a_run_without_an_embedder_prunes_orphaned_vectors(corpus: Path) -> None:
    pytest.importorskip("sqlite_vec")
    from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex
    from hermes_workspace.domain.semantic import unit

    with Workspace.open(corpus) as ws:
        ws.index()
        index = ws.index_path
    with SqliteVecIndex(index) as vectors:  # as an earlier semantic run would have left them
        vectors.prepare("test:model:3", 3)
        vectors.add([(job, unit((1.0, float(job.chunk_id), 0.0))) for job in vectors.pending(1000)])
        before = vectors.status()
    (corpus / "workspace" / "c2.md").unlink()
    (corpus / "workspace" / "c3.md").unlink()
    with Workspace.open(corpus) as ws:
        summary = ws.index()
    assert summary.files_pruned == 2
    assert summary.vectors_pruned == 2  # one chunk each
    assert summary.to_json()["vectors_pruned"] == 2
    with SqliteVecIndex(index, readonly=True) as vectors:
        after = vectors.status()
    assert (after.vectors, after.embedded, after.pending) == (before.vectors - 2, before.embedded - 2, 0)
