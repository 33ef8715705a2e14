"""Documents end to end with every real adapter: a PDF, a DOCX, a PPTX and an XLSX indexed through
the Python API and the CLI (in this process and in worker processes), hits with page, slide or
sheet and heading breadcrumbs, verified reads of converted lines, retrieve headers, a scanned PDF
reported, a missing library, and the cache."""

from __future__ import annotations

import json
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.container import build_container
from hermes_workspace.domain.conversion import DEFAULT_CONVERTERS
from hermes_workspace.domain.errors import UsageError
from hermes_workspace.domain.model import ConvertedDocument
from hermes_workspace.entrypoints.cli import main
from tests.documents import make_docx, make_pdf, make_pptx, make_xlsx

PDF_PAGES = [
    ["Introduction", "This manual covers the deployment pipeline."],
    ["Canary releases", "A canary release sends one percent of traffic to the new build."],
    None,  # a page without text (a figure)
    ["Rollback", "The rollback controller restores the previous release within minutes."],
]


CHUNKING = "knowledgebase:\n  chunking:\n    chunk_size: 15\n    overlap: 0\n    threshold: 5\n"


@pytest.fixture
def docs(home: Path) -> Path:
    folder = home / "workspace" / "docs"
    folder.mkdir(parents=True)
    # Small chunks, so that each page or section is its own chunk.
    (home / "config.yaml").write_text(CHUNKING)
    (folder / "manual.pdf").write_bytes(
        make_pdf(PDF_PAGES, outline=[("Introduction", 0), ("Canary releases", 1), ("Rollback", 3)])
    )
    (folder / "guide.docx").write_bytes(make_docx())
    (folder / "plan.pptx").write_bytes(make_pptx())
    (folder / "budget.xlsx").write_bytes(make_xlsx())
    (folder / "scan.pdf").write_bytes(make_pdf([None, None]))
    return folder


def test_documents_are_indexed_with_anchors_and_read_as_converted_text(home: Path, docs: Path) -> None:
    with Workspace.open(home) as ws:
        summary = ws.index()
        assert (summary.files_indexed, summary.files_errored) == (4, 1)
        assert [(e.path, e.stage, e.error_type) for e in summary.errors] == [
            (str(docs / "scan.pdf"), "convert", "NoTextLayerError")
        ]
        # PDF: the hit's page, its line range in the converted text, the outline as breadcrumb.
        [hit] = ws.search("rollback controller", limit=1)
        assert (hit.path, hit.page, hit.anchor, hit.line_start, hit.line_end, hit.breadcrumb) == (
            docs / "manual.pdf", 4, "page 4", 7, 8, "# Rollback",
        )
        read = ws.read(f"{docs / 'manual.pdf'}:7-8")
        assert (read.status, read.text) == (
            "verified", "# Rollback\nThe rollback controller restores the previous release within minutes."
        )
        # DOCX: heading breadcrumb, no page.
        [hit] = ws.search("rollback controller restores", limit=1, path=str(docs / "guide.docx"))
        assert (hit.breadcrumb, hit.page, hit.anchor) == ("# Install > ## Rollback", None, None)
        # PPTX: slide; XLSX: sheet.
        [hit] = ws.search("appendix", limit=1)
        assert (hit.path.name, hit.page, hit.anchor) == ("plan.pptx", 2, "slide 2")
        [hit] = ws.search("laptops", limit=1)
        assert (hit.path.name, hit.page, hit.anchor) == ("budget.xlsx", 1, "sheet Budget")
        # 440, not 400 as first written: the pack's scope grew by a coverage row per root (issue 12).
        pack = ws.retrieve("rollback controller restores previous release", budget=440)
        headers = [block.framed().split("\n", 1)[0] for block in pack.blocks]
        assert "[Workspace source: docs/manual.pdf, lines 7-8, page 4 (# Rollback)]" in headers
    cached = sorted(p.name.split(".")[0] for p in (home / "workspace" / ".index" / "converted").rglob("*.json.gz"))
    assert len(cached) == 4


def test_cli_search_json_carries_page_and_anchor_only_for_documents(
    home: Path, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (docs / "notes.md").write_text("# Notes\n\nThe canary release checklist lives here.\n")
    assert main(["index"]) == 0
    capsys.readouterr()
    assert main(["search", "canary", "--limit", "5"]) == 0
    hits = json.loads(capsys.readouterr().out)
    by_name: dict[str, dict[str, object]] = {}
    for h in hits:
        by_name.setdefault(Path(h["path"]).name, h)
    assert (by_name["manual.pdf"]["page"], by_name["manual.pdf"]["anchor"]) == (2, "page 2")
    assert "page" not in by_name["notes.md"] and "anchor" not in by_name["notes.md"]


def test_worker_processes_convert_too(home: Path, docs: Path) -> None:
    with Workspace.open(home) as ws:
        summary = ws.index(workers=2)
        assert (summary.files_indexed, summary.files_errored) == (4, 1)
        [hit] = ws.search("canary traffic", limit=1)
        assert (hit.path.name, hit.anchor) == ("manual.pdf", "page 2")
    # What a worker process builds: the recipe crosses a pickle, and names its converters by plugin.
    recipe = build_container(home).worker_tools()
    tools = pickle.loads(pickle.dumps(recipe))()
    assert tools.conversions is not None and tools.conversions.suffixes == set(DEFAULT_CONVERTERS)
    converter = tools.conversions.converter_for(docs / "manual.pdf")
    assert converter is not None and converter.name == "pypdf"


def test_a_missing_library_skips_documents_with_the_install_hint(
    home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf now raises ImportError
    with Workspace.open(home) as ws:
        summary = ws.index()
    assert summary.skipped == {"converter_unavailable": 2}
    assert summary.files_indexed == 3
    assert summary.notes == [
        ".pdf files skipped: the pypdf converter needs pypdf, which is not installed. Install the document "
        "converters (pip install 'hermes-workspace[documents]'), or turn the suffix off in knowledgebase.converters "
        "(e.g. '.pdf': none)."
    ]


def test_config_turns_a_suffix_off_and_html_on(home: Path, docs: Path) -> None:
    (home / "config.yaml").write_text(CHUNKING + "  converters:\n    .pdf: none\n    .html: markitdown\n")
    (docs / "page.html").write_text("<html><body><h1>Status</h1><p>All <b>systems</b> nominal.</p></body></html>")
    with Workspace.open(home) as ws:
        summary = ws.index()
        assert summary.skipped == {"binary_suffix": 2}
        [hit] = ws.search("systems nominal", limit=1)
    assert (hit.path.name, hit.content) == ("page.html", "# Status\n\nAll **systems** nominal.")


def test_a_converter_upgrade_reindexes_documents_only(home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (docs / "notes.md").write_text("# Notes\n\ntext\n")
    with Workspace.open(home) as ws:
        assert ws.index().files_indexed == 5
    from hermes_workspace.adapters import pypdf_converter

    monkeypatch.setattr(pypdf_converter, "ADAPTER_VERSION", pypdf_converter.ADAPTER_VERSION + 1)
    with Workspace.open(home) as ws:
        summary = ws.index()
    assert (summary.files_indexed, summary.files_errored, summary.skipped) == (1, 1, {"unchanged": 4})


def test_read_uses_the_cache_and_says_stale_without_the_library(
    home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Workspace.open(home) as ws:
        ws.index()
    from hermes_workspace.adapters import pypdf_converter

    def fail(self: object, data: bytes, path: Path) -> object:
        raise AssertionError("converted again instead of read from the cache")

    monkeypatch.setattr(pypdf_converter.PypdfConverter, "convert", fail)
    with Workspace.open(home) as ws:
        read = ws.read(f"{docs / 'manual.pdf'}:7-7")
    assert (read.status, read.text) == ("verified", "# Rollback")
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with Workspace.open(home) as ws:
        read = ws.read(f"{docs / 'manual.pdf'}:7-7")
    assert read.status == "stale" and read.text is None
    assert "pip install 'hermes-workspace[documents]'" in read.message


def test_a_damaged_document_is_one_error_line_not_library_warnings(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a trial: pypdf's own warnings (`invalid pdf header`, `EOF marker not found`) and
    openpyxl's were printed while indexing, before the error the summary reports anyway."""
    (docs / "broken.pdf").write_bytes(b"this is not a pdf at all\n" * 40)
    (docs / "broken.xlsx").write_bytes(b"plain text named xlsx\n")
    assert main(["index"]) == 0
    out, err = capsys.readouterr()
    errors = {Path(e["path"]).name: e for e in json.loads(out)["errors"]}
    assert errors["broken.pdf"]["stage"] == "convert"
    assert errors["broken.pdf"]["message"] == "broken.pdf is not a PDF: it is plain text"
    assert errors["broken.xlsx"]["message"].startswith("broken.xlsx is not an Excel workbook (.xlsx): it is plain text")
    assert "invalid pdf header" not in err.lower() and "EOF marker" not in err and "UserWarning" not in err


def _convert_differently(monkeypatch: pytest.MonkeyPatch, change: Callable[[str], str]) -> None:
    """A converter upgrade: the same PDF bytes now convert to ``change(old text)``."""
    from hermes_workspace.adapters import pypdf_converter

    convert = pypdf_converter.PypdfConverter.convert

    def upgraded(self: object, data: bytes, path: Path) -> ConvertedDocument:
        return ConvertedDocument(change(convert(self, data, path).text), ())  # type: ignore[arg-type]

    monkeypatch.setattr(pypdf_converter, "ADAPTER_VERSION", pypdf_converter.ADAPTER_VERSION + 1)
    monkeypatch.setattr(pypdf_converter.PypdfConverter, "convert", upgraded)


def test_a_read_after_a_converter_upgrade_is_moved_not_verified_other_text(
    home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a trial: after a converter's options changed (same bytes, other converted text),
    `read HANDLE` said "verified" and returned other text."""
    pdf = docs / "manual.pdf"
    rollback = "# Rollback\nThe rollback controller restores the previous release within minutes."
    with Workspace.open(home) as ws:
        ws.index()
        [hit] = ws.search("rollback controller", limit=1)
        assert (hit.line_start, hit.line_end, hit.handle is not None) == (7, 8, True)
    _convert_differently(monkeypatch, lambda text: "# Preface\n\nAdded by the new version.\n\n" + text)
    expected = (
        f"{pdf} was converted differently since it was indexed (the converter or its options changed): the "
        "indexed text moved 7-8 -> 11-12"
    )
    with Workspace.open(home) as ws:
        read = ws.read(hit.handle)
        assert (read.status, read.line_start, read.line_end, read.moved_from, read.text, read.message) == (
            "moved", 11, 12, (7, 8), rollback, expected)
        read = ws.read(f"{pdf}:7-8")  # the index's chunks of those lines are compared too
        assert (read.status, read.line_start, read.text, read.message) == ("moved", 11, rollback, expected)
        read = ws.read(f"{pdf}:7-7")  # part of a chunk: its text is looked for as well
        assert (read.status, read.line_start, read.text) == ("moved", 11, "# Rollback")


def test_a_read_past_the_end_of_a_new_conversion_is_stale_not_a_usage_error(
    home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a trial: when the old range fell past the new converted text's end, `read HANDLE`
    failed with a usage error (exit 2, "has 13 lines; 1-20 is out of range")."""
    pdf = docs / "manual.pdf"
    with Workspace.open(home) as ws:
        ws.index()
        [hit] = ws.search("rollback controller", limit=1)
    _convert_differently(monkeypatch, lambda text: "# Manual\n\nOne short page now.\n")
    with Workspace.open(home) as ws:
        read = ws.read(hit.handle)
        assert (read.status, read.line_start, read.line_end, read.text, read.message) == (
            "stale", 7, 8, None,
            f"{pdf} was converted differently since it was indexed (the converter or its options changed) and the "
            "indexed text of 7-8 is not there exactly once: run `index`, then the search again",
        )
        assert ws.read(f"{pdf}:7-8").status == "stale"
        # Lines the index never held are still out of range once the file is indexed again.
        ws.index()
        with pytest.raises(UsageError, match="has 3 lines; 7-8 is out of range"):
            ws.read(f"{pdf}:7-8")
        assert ws.read(f"{pdf}:1-3").status == "verified"
    capsys.readouterr()
    assert main(["read", hit.handle]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "stale"


def test_an_upgrade_that_converts_the_same_text_stays_verified(
    home: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A converter upgrade whose text is the same for this file: the reads stay verified."""
    pdf = docs / "manual.pdf"
    with Workspace.open(home) as ws:
        ws.index()
        [hit] = ws.search("rollback controller", limit=1)
    _convert_differently(monkeypatch, lambda text: text)
    with Workspace.open(home) as ws:
        assert (ws.read(hit.handle).status, ws.read(f"{pdf}:7-8").status) == ("verified", "verified")
        with pytest.raises(UsageError, match="out of range"):
            ws.read(f"{pdf}:7-80")

