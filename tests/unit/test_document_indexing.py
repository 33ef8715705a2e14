"""Indexing converted documents over fakes: anchors on hits, the converted name the chunker sees,
the conversion cache, scanned documents, a missing converter library, and converter upgrades."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import (
    InlineTaskPool,
    InMemoryConversionCache,
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    LineConverter,
    ParagraphChunker,
    RecordingProgressSink,
    Utf8Decoder,
)
from hermes_workspace.adapters.tree_sitter_chunker import TreeSitterChunker
from hermes_workspace.application.conversion import Conversions
from hermes_workspace.application.file_processing import FileTools
from hermes_workspace.application import indexing
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.domain.config import ChunkingConfig, WorkspaceConfig
from hermes_workspace.domain.conversion import anchor_span, join_anchor_labels
from hermes_workspace.domain.errors import ConverterUnavailableError
from hermes_workspace.domain.model import Anchor
from hermes_workspace.domain.query import parse_query

HOME = Path("/home/u/.hermes")
WS = HOME / "workspace"
REPORT = WS / "docs" / "report.pdf"

# Pages separated by form feeds (the LineConverter's format); page 2 is long enough to be split.
PAGES = [
    "= Overview\nThe quarterly report covers revenue.",
    "\n\n".join(f"Paragraph {i} about canary deployments and rollback windows." for i in range(6)),
    "= Appendix\nThe glossary defines idempotent.",
]


def report_bytes(pages: list[str] = PAGES) -> bytes:
    return "\f".join(pages).encode()


@pytest.fixture(params=["in_process", "pool"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def make(source, conversions, mode="in_process", *, chunker=None, store=None):  # type: ignore[no-untyped-def]
    config = WorkspaceConfig(chunking=ChunkingConfig(chunk_size=20, overlap=0, threshold=10))
    chunker = chunker or ParagraphChunker()
    fallback = ParagraphChunker(name="fallback")
    parallel = {}
    if mode == "pool":
        parallel = {
            "pool": InlineTaskPool(window=2),
            "worker_tools": partial(FileTools, source, Utf8Decoder(), chunker, fallback, conversions),
            "parallel_min_files": 0,
            "parallel_min_bytes": 0,
        }
    return IndexWorkspace(
        config=config, home=HOME, source=source, decoder=Utf8Decoder(), chunker=chunker, fallback_chunker=fallback,
        store=store if store is not None else InMemoryIndexStore(), lock=InMemoryIndexLock(), layout=InMemoryLayout(),
        clock=lambda: 1.7e9, conversions=conversions, **parallel,
    )


def source_with(files: dict[Path, bytes | str]) -> InMemoryFileSource:
    source = InMemoryFileSource(convertible={".pdf"})
    for path, data in files.items():
        source.write(path, data)
    return source


def test_hits_on_a_converted_document_carry_page_and_anchor(mode: str) -> None:
    converter = LineConverter()
    source = source_with({REPORT: report_bytes(), WS / "notes.txt": "canary notes in plain text\n"})
    store = InMemoryIndexStore()
    summary = make(source, Conversions.of({".pdf": converter}), mode, store=store).execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.files_errored) == (2, 0)
    chunks = store.files[REPORT][1]
    # Converted text: "# Overview" (1), line 2, blank (3), page 2's six paragraphs (4..14), blank (15),
    # "# Appendix" (16), line 17.
    assert [(c.line_start, c.line_end, c.page, c.anchor) for c in chunks] == [
        (1, 2, 1, "page 1"),
        (4, 4, 2, "page 2"), (6, 6, 2, "page 2"), (8, 8, 2, "page 2"), (10, 10, 2, "page 2"),
        (12, 12, 2, "page 2"), (14, 14, 2, "page 2"), (16, 17, 3, "page 3"),
    ]
    hits = store.search(parse_query("glossary idempotent"))
    assert [(h.path, h.page, h.anchor, h.line_start, h.line_end) for h in hits] == [(REPORT, 3, "page 3", 16, 17)]
    assert hits[0].to_json()["page"] == 3 and hits[0].to_json()["anchor"] == "page 3"
    plain = store.search(parse_query("plain text"))
    assert [h.path for h in plain] == [WS / "notes.txt"]
    assert "page" not in plain[0].to_json() and "anchor" not in plain[0].to_json()


def test_converted_text_is_chunked_under_its_markdown_name() -> None:
    """The chunker sees ``report.pdf.md``: any chunker takes its markdown path."""
    chunker = ParagraphChunker()
    make(source_with({REPORT: report_bytes()}), Conversions.of({".pdf": LineConverter()}), chunker=chunker).execute(
        RecordingProgressSink()
    )
    assert chunker.calls == [WS / "docs" / "report.pdf.md"]


def test_converted_headings_become_breadcrumbs_with_the_structure_chunker() -> None:
    store = InMemoryIndexStore()
    chunker = TreeSitterChunker(chunk_size=20, overlap=0)
    make(source_with({REPORT: report_bytes()}), Conversions.of({".pdf": LineConverter()}), chunker=chunker,
         store=store).execute(RecordingProgressSink())
    hits = store.search(parse_query("glossary"))
    assert [(h.breadcrumb, h.anchor, h.line_start, h.line_end) for h in hits] == [("# Appendix", "page 3", 16, 17)]


def test_a_document_without_text_is_reported_by_path_with_stage_convert(mode: str) -> None:
    scanned = WS / "scans" / "contract.pdf"
    source = source_with({REPORT: report_bytes(), scanned: "\f  \f\n"})
    store = InMemoryIndexStore()
    summary = make(source, Conversions.of({".pdf": LineConverter()}), mode, store=store).execute(RecordingProgressSink())
    assert summary.files_indexed == 1
    assert [e.to_json() for e in summary.errors] == [{
        "path": str(scanned), "stage": "convert", "error_type": "NoTextLayerError",
        "message": "contract.pdf has no text layer on any of its 3 pages",
    }]
    assert scanned not in store.files


def test_reindexing_after_a_chunker_change_reads_the_conversion_from_the_cache() -> None:
    converter, cache = LineConverter(), InMemoryConversionCache()
    conversions = Conversions.of({".pdf": converter}, cache)
    source, store = source_with({REPORT: report_bytes()}), InMemoryIndexStore()
    make(source, conversions, store=store).execute(RecordingProgressSink())
    assert converter.calls == [REPORT]
    # A new chunker signature re-chunks every file; the converted text comes from the cache.
    summary = make(source, conversions, store=store, chunker=ParagraphChunker(name="other")).execute(
        RecordingProgressSink()
    )
    assert summary.files_indexed == 1
    assert converter.calls == [REPORT]
    assert cache.puts == 1


def test_a_converter_upgrade_reindexes_the_converted_files_only(mode: str) -> None:
    converter = LineConverter(version="1")
    conversions = Conversions.of({".pdf": converter}, InMemoryConversionCache())
    source = source_with({REPORT: report_bytes(), WS / "a.txt": "alpha\n", WS / "b.md": "# B\nbravo\n"})
    store = InMemoryIndexStore()
    make(source, conversions, mode, store=store).execute(RecordingProgressSink())
    assert converter.calls == [REPORT]
    unchanged = make(source, conversions, mode, store=store).execute(RecordingProgressSink())
    assert (unchanged.files_indexed, unchanged.skipped) == (0, {"unchanged": 3})
    converter.version = "2"
    upgraded = make(source, conversions, mode, store=store).execute(RecordingProgressSink())
    assert (upgraded.files_indexed, upgraded.skipped) == (1, {"unchanged": 2})
    assert converter.calls == [REPORT, REPORT]


def test_the_cache_is_pruned_to_the_indexed_documents() -> None:
    converter, cache = LineConverter(), InMemoryConversionCache()
    conversions = Conversions.of({".pdf": converter}, cache)
    other = WS / "other.pdf"
    source, store = source_with({REPORT: report_bytes(), other: "= Other\ntext\n"}), InMemoryIndexStore()
    make(source, conversions, store=store).execute(RecordingProgressSink())
    assert len(cache.entries) == 2
    del source.files[other]
    source.write(REPORT, report_bytes(PAGES[:1]))
    make(source, conversions, store=store).execute(RecordingProgressSink())
    assert [key[0] for key in cache.entries] == [store.files[REPORT][0].content_hash]


def test_a_missing_converter_library_skips_its_files_with_one_note(mode: str) -> None:
    def load(name: str) -> LineConverter:
        raise ConverterUnavailableError("the pypdf converter needs pypdf, which is not installed")

    conversions = Conversions({".pdf": "pypdf"}, load)
    source = source_with({REPORT: report_bytes(), WS / "b.pdf": "x", WS / "a.txt": "alpha\n"})
    store = InMemoryIndexStore()
    summary = make(source, conversions, mode, store=store).execute(RecordingProgressSink())
    assert (summary.files_indexed, summary.files_errored, summary.skipped) == (1, 0, {"converter_unavailable": 2})
    assert summary.to_json()["notes"] == [
        ".pdf files skipped: the pypdf converter needs pypdf, which is not installed. Install the document "
        "converters (pip install 'hermes-workspace[documents]'), or turn the suffix off in knowledgebase.converters "
        "(e.g. '.pdf': none)."
    ]
    assert source.reads == [WS / "a.txt"]  # skipped without reading
    assert set(store.files) == {WS / "a.txt"}


def test_a_converter_that_fails_to_import_counts_as_unavailable() -> None:
    def load(name: str) -> LineConverter:
        raise RuntimeError("plugin exploded")

    conversions = Conversions({".pdf": "broken"}, load)
    assert conversions.converter_for(REPORT) is None
    error = conversions.unavailable_for(REPORT)
    assert error is not None and error.message == "the broken converter cannot be loaded (RuntimeError: plugin exploded)"


def test_anchor_span_and_labels() -> None:
    anchors = (Anchor(1, "page", 1, "1"), Anchor(5, "page", 2, "2"), Anchor(9, "page", 4, "4"))
    assert anchor_span(anchors, 1, 4) == (1, "page 1")
    assert anchor_span(anchors, 4, 5) == (1, "pages 1-2")
    assert anchor_span(anchors, 6, 20) == (2, "pages 2-4")
    assert anchor_span((), 1, 2) == (None, None)
    sheets = (Anchor(1, "sheet", 1, "Budget"), Anchor(7, "sheet", 2, "Notes"))
    assert anchor_span(sheets, 2, 8) == (1, "sheets Budget, Notes")
    assert join_anchor_labels(["page 3", None, "pages 3-4", "page 6"]) == "pages 3-6"
    assert join_anchor_labels(["sheet A", "sheet B"]) == "sheet A, sheet B"
    assert join_anchor_labels([None]) is None


class _BrokenUpgrade(LineConverter):
    """A converter whose new version raises on every document (a plugin upgrade gone wrong)."""

    def convert(self, data: bytes, path: Path):  # type: ignore[no-untyped-def]
        if self.version == "2":
            raise KeyError("converter exploded")
        return super().convert(data, path)


def test_a_converter_that_breaks_after_an_upgrade_keeps_the_indexed_version(mode: str) -> None:
    """Found by a trial: re-converting an unchanged document failed and the document silently
    left the index (`files_pruned: 0`)."""
    converter = _BrokenUpgrade()
    source = source_with({REPORT: report_bytes()})
    store = InMemoryIndexStore()
    make(source, Conversions.of({".pdf": converter}), mode, store=store).execute(RecordingProgressSink())
    before = store.files[REPORT][1]
    converter.version = "2"
    summary = make(source, Conversions.of({".pdf": converter}), mode, store=store).execute(RecordingProgressSink())
    assert (summary.files_errored, summary.errors[0].stage) == (1, "convert")
    assert store.files[REPORT][1] == before
    assert summary.notes == [indexing.KEPT_NOTE]
    converter.version = "3"  # fixed: the next run converts it again
    again = make(source, Conversions.of({".pdf": converter}), mode, store=store).execute(RecordingProgressSink())
    assert (again.files_indexed, again.files_errored) == (1, 0)


def test_a_converter_that_cannot_load_keeps_unchanged_documents_and_drops_changed_ones(mode: str) -> None:
    source = source_with({REPORT: report_bytes(), WS / "b.pdf": report_bytes(PAGES[:1])})
    store = InMemoryIndexStore()
    make(source, Conversions.of({".pdf": LineConverter()}), mode, store=store).execute(RecordingProgressSink())
    source.write(WS / "b.pdf", report_bytes(PAGES[1:]))  # changed since: its chunks no longer match it

    def load(name: str) -> LineConverter:
        raise ConverterUnavailableError("the lines converter cannot be loaded")

    summary = make(source, Conversions({".pdf": "lines"}, load), mode, store=store).execute(RecordingProgressSink())
    assert summary.skipped == {"converter_unavailable": 2}
    assert set(store.files) == {REPORT}
    assert indexing.KEPT_NOTE in summary.notes


class _Rogue(LineConverter):
    def __init__(self, returns: object) -> None:
        super().__init__(name="rogue")
        self.returns = returns

    def convert(self, data: bytes, path: Path):  # type: ignore[no-untyped-def]
        if isinstance(self.returns, Exception):
            raise self.returns
        return self.returns


@pytest.mark.parametrize(("returns", "message"), [
    (KeyError("converter exploded"), "the rogue converter failed: KeyError: 'converter exploded'"),
    ("# just a string", "the rogue converter failed: TypeError: it returned str, not a ConvertedDocument"),
])
def test_a_converter_s_own_failure_names_it(returns: object, message: str) -> None:
    """Found by a trial: a plugin's KeyError reached the summary as just "'converter exploded'"."""
    summary = make(source_with({REPORT: report_bytes()}), Conversions.of({".pdf": _Rogue(returns)})).execute(
        RecordingProgressSink())
    assert [(e.stage, e.message) for e in summary.errors] == [("convert", message)]
