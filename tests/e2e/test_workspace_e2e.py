"""The Python API with every real adapter: exact line ranges, re-index rules, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.file_lock import FileIndexLock
from hermes_workspace.adapters.memory import InMemoryIndexStore

TRICKY_FILES: dict[str, bytes] = {
    "crlf.txt": b"first line\r\nsecond line\r\n\r\nthird paragraph here\r\n",
    "no_newline.md": b"# Title\n\nlast line without newline",
    "trailing.md": b"# Heading\n\nbody text\n",
    "formfeed.py": b"import os\n\x0c\ndef handler():\n    return 'form\x0cfeed'\n",
    "bom.md": "\ufeff# Bom heading\n\nafter the byte order mark\n".encode(),
    "unicode.md": "# Ünïcödé\n\nnaïve café 東京 🚀 text before\n\nthe target sentence\n".encode(),
    "sep.txt": "para one \u2028 still line one\nline two \x1c here\n".encode(),
}


def file_lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8-sig")
    return text.split("\n")


def assert_hit_is_exact(hit) -> None:  # type: ignore[no-untyped-def]
    lines = file_lines(hit.path)
    window = "\n".join(lines[hit.line_start - 1 : hit.line_end])
    assert hit.content in window, (hit.path, hit.line_start, hit.line_end)
    assert window.startswith(hit.content.split("\n")[0]) or lines[hit.line_start - 1].endswith(
        hit.content.split("\n")[0]
    ) or hit.content.split("\n")[0] in lines[hit.line_start - 1]
    assert hit.content.split("\n")[-1] in lines[hit.line_end - 1]


@pytest.fixture
def ws(home: Path) -> Workspace:
    with Workspace.open(home) as workspace:
        yield workspace


def test_line_ranges_are_exact_on_tricky_files(ws: Workspace, home: Path) -> None:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    for name, data in TRICKY_FILES.items():
        (docs / name).write_bytes(data)
    summary = ws.index()
    assert summary.files_errored == 0
    expectations = {
        "second": ("crlf.txt", 1, 4),
        "newline": ("no_newline.md", 1, 3),
        "body": ("trailing.md", 1, 3),
        "handler": ("formfeed.py", 1, 4),
        "byte order mark": ("bom.md", 1, 3),
        "target sentence": ("unicode.md", 1, 5),
        "still": ("sep.txt", 1, 2),
    }
    for query, (name, start, end) in expectations.items():
        hits = ws.search(query, glob=name)
        assert [(h.path.name, h.line_start, h.line_end) for h in hits] == [(name, start, end)], query
        assert_hit_is_exact(hits[0])
    assert ws.search("Bom heading")[0].section == "# Bom heading"


def long_markdown(sections: int = 12, words: int = 120, marker: str = "") -> str:
    parts = ["# Handbook\n\nIntro paragraph.\n"]
    for s in range(sections):
        body = " ".join(f"s{s}w{i}{marker}" for i in range(words))
        parts.append(f"## Section {s}\n\n{body}\n")
    return "\n".join(parts)


def test_long_markdown_follows_headings_and_lines_are_exact(ws: Workspace, home: Path) -> None:
    path = home / "workspace" / "docs" / "handbook.md"
    path.parent.mkdir(parents=True)
    path.write_text(long_markdown())
    ws.index()
    hits = ws.search("s7w60")
    assert len(hits) >= 1
    top = hits[0]
    assert_hit_is_exact(top)
    assert top.section is not None and top.section.startswith("## Section")
    heading_line = file_lines(path).index("## Section 7") + 1
    assert top.line_start <= heading_line + 2 <= top.line_end


def test_changing_overlap_really_changes_chunks(ws: Workspace, home: Path) -> None:
    # Sections of 500 words one per line: each is split in three parts; overlap repeats words
    # between the parts of one section only, never across a heading.
    path = home / "workspace" / "docs" / "handbook.md"
    path.parent.mkdir(parents=True)
    path.write_text(long_markdown(sections=3, words=500).replace(" s", "\ns"))
    ws.index()
    before = sorted((h.chunk_index, h.line_start, h.line_end, h.breadcrumb) for h in ws.search("Section", limit=100))
    (home / "config.yaml").write_text("knowledgebase:\n  chunking:\n    overlap: 40\n")
    with Workspace.open(home) as fresh:
        summary = fresh.index()
        after = sorted((h.chunk_index, h.line_start, h.line_end, h.breadcrumb) for h in fresh.search("Section", limit=100))
    assert summary.files_indexed == 1
    assert [a[2] for a in after] == [b[2] for b in before]  # the same ends
    for (_, start, _, crumb), (_, prev_start, prev_end, prev_crumb) in zip(after[1:], after):
        if crumb == prev_crumb:
            assert prev_start < start <= prev_end  # 40 words (40 lines) of the previous part
        else:
            assert start > prev_end  # a new section starts at its heading


def test_replaced_adapter_is_used(home: Path) -> None:
    store = InMemoryIndexStore()
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nalpha\n")
    with Workspace.open(home, store=store) as ws:
        ws.index()
        assert [h.path.name for h in ws.search("alpha")] == ["a.md"]
    assert store.get_file(docs / "a.md") is not None
    assert not (home / "workspace" / ".index" / "workspace.sqlite").exists()


def test_search_during_index_sees_whole_old_or_new_files(home: Path) -> None:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    for i in range(40):
        (docs / f"f{i:02}.md").write_text(long_markdown(sections=8, marker="v1") + "\nmarkerword\n")
    with Workspace.open(home) as writer:
        writer.index()
    for i in range(40):
        (docs / f"f{i:02}.md").write_text(long_markdown(sections=8, marker="v2") + "\nmarkerword\n")

    errors: list[BaseException] = []

    def reindex() -> None:
        try:
            with Workspace.open(home) as w:
                w.index()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=reindex)
    thread.start()
    searches = 0
    with Workspace.open(home) as reader:
        while thread.is_alive() or searches < 5:
            hits = reader.search("markerword s0w1v1 s0w1v2", limit=200)
            by_file: dict[Path, set[str]] = {}
            for h in reader.search("s3w5v1 s3w5v2 s0w0v1 s0w0v2 markerword", limit=500):
                versions = {v for v in ("v1", "v2") if f"w1{v}" in h.content or f"w0{v}" in h.content}
                by_file.setdefault(h.path, set()).update(versions)
            assert all(len(v) <= 1 for v in by_file.values()), by_file
            assert hits
            searches += 1
    thread.join()
    assert errors == []
    assert searches >= 5


def test_second_index_run_says_clearly_that_one_is_running(home: Path) -> None:
    lock_path = home / "workspace" / ".index" / "index.lock"
    env = {**os.environ, "HERMES_HOME": str(home)}
    with FileIndexLock(lock_path).hold():
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_workspace", "--quiet", "index"],
            capture_output=True, text=True, env=env, timeout=120,
        )
    assert proc.returncode == 75
    assert json.loads(proc.stdout)["error"]["code"] == "index_busy"
    assert "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_workspace", "--quiet", "index"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_unknown_adapter_name_is_a_usage_error(home: Path) -> None:
    from hermes_workspace import UsageError

    with pytest.raises(UsageError):
        Workspace.open(home, stroe=InMemoryIndexStore())


def test_minified_file_is_cut_into_capped_chunks(ws: Workspace, home: Path) -> None:
    code = home / "workspace" / "code"
    code.mkdir(parents=True)
    minified = "var a=" + "x" * 30_000 + ";needle=1;\n"
    (code / "app.min.js").write_text(minified)
    ws.index()
    hits = ws.search("needle")
    assert [h.path.name for h in hits] == ["app.min.js"]
    assert len(hits[0].content) <= 512 * 16 * 2
    assert hits[0].content in minified


def test_a_second_index_is_refused_at_once_even_while_the_first_writes(home: Path) -> None:
    # Found in a trial: a second `index` sometimes waited seconds for the first run's transaction
    # (opening the index for writing comes before the lock), then failed, or even ran after it.
    import apsw

    from hermes_workspace import Workspace
    from hermes_workspace.adapters.file_lock import FileIndexLock
    from hermes_workspace.domain.errors import IndexBusyError

    notes = home / "workspace" / "notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text("# A\n\nalpha\n")
    with Workspace.open(home) as ws:
        ws.index()
        index_file, lock_file = ws.index_path, ws.index_path.parent / "index.lock"
    other_run = FileIndexLock(lock_file)
    writer = apsw.Connection(str(index_file))
    with other_run.hold():
        writer.execute("BEGIN IMMEDIATE")
        try:
            with Workspace.open(home) as ws, pytest.raises(IndexBusyError):
                ws.index()
        finally:
            writer.execute("ROLLBACK")
            writer.close()
