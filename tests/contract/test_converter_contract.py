"""The Converter and ConversionCache contracts, run against the fakes and every real adapter.

Converter: a name and a signature that holds the name; a small real document of the adapter's
format becomes markdown text ending with one line break, whose anchors (when the format has
them) are in line order on lines of that text and whose text holds what the document says;
bytes that are not a document of that format are a ``ConversionError`` (never another
exception). ConversionCache: a miss, then a hit of the same document, other signatures and
hashes apart, an entry replaced whole, prune keeps exactly what it is told to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_conversion_cache import FileConversionCache
from hermes_workspace.adapters.markitdown_converter import MarkitdownConverter
from hermes_workspace.adapters.memory import InMemoryConversionCache, LineConverter
from hermes_workspace.adapters.openpyxl_converter import OpenpyxlConverter
from hermes_workspace.adapters.pypdf_converter import PypdfConverter
from hermes_workspace.adapters.python_docx_converter import PythonDocxConverter
from hermes_workspace.adapters.python_pptx_converter import PythonPptxConverter
from hermes_workspace.domain.model import Anchor, ConvertedDocument
from hermes_workspace.domain.ports import ConversionCache, Converter
from hermes_workspace.testing import ConverterContract
from tests.documents import make_docx, make_epub, make_pdf, make_pptx, make_xlsx


# name -> (factory, suffix, a document, words it must hold, anchor kind or None)
CASES: dict[str, tuple[Callable[[], Converter], str, Callable[[], bytes], tuple[str, ...], str | None]] = {
    "fake": (LineConverter, ".lines", lambda: b"= Intro\nfirst page\x0csecond page\n", ("Intro", "second page"), "page"),
    "pypdf": (PypdfConverter, ".pdf", lambda: make_pdf([["Alpha page"], ["Beta page"]]), ("Alpha", "Beta"), "page"),
    "python-docx": (PythonDocxConverter, ".docx", make_docx, ("Rollback", "checksum"), None),
    "python-pptx": (PythonPptxConverter, ".pptx", make_pptx, ("Quarterly plan", "Appendix text"), "slide"),
    "openpyxl": (OpenpyxlConverter, ".xlsx", make_xlsx, ("Laptops", "Approved by finance"), "sheet"),
    "markitdown": (MarkitdownConverter, ".epub", make_epub, ("Tides", "spring tide"), None),
}


@pytest.fixture(params=sorted(CASES))
def _case(request: pytest.FixtureRequest) -> tuple[Callable[[], Converter], str, Callable[[], bytes], tuple[str, ...], str | None]:
    return CASES[request.param]


class TestEveryConverter(ConverterContract):
    """The shipped contract (hermes_workspace.testing), on the fake and every built-in adapter."""

    @pytest.fixture
    def converter(self, _case: tuple) -> Converter:
        return _case[0]()

    @pytest.fixture
    def sample(self, _case: tuple) -> tuple[str, bytes]:
        return f"sample{_case[1]}", _case[2]()

    @pytest.fixture
    def expected_words(self, _case: tuple) -> tuple[str, ...]:
        return _case[3]

    @pytest.fixture
    def anchor_kind(self, _case: tuple) -> str | None:
        return _case[4]

    @pytest.fixture
    def not_a_document(self, _case: tuple) -> bytes:
        # The fake reads any UTF-8 as text: only bytes that are not UTF-8 are not its format.
        return b"\xff\xfe not utf-8 \x00" if _case[1] == ".lines" else b"PK\x03\x04 not a zip nor a pdf" * 20


CACHES: dict[str, Callable[[Path], ConversionCache]] = {
    "memory": lambda _: InMemoryConversionCache(),
    "files": lambda folder: FileConversionCache(folder / "converted"),
}

H1, H2 = "a" * 64, "b" * 64
DOC = ConvertedDocument("# Title\nbody\n", (Anchor(1, "page", 1, "1"), Anchor(2, "sheet", 2, "Budget ü")))


@pytest.fixture(params=sorted(CACHES))
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> ConversionCache:
    return CACHES[request.param](tmp_path)


def test_cache_miss_then_hit(cache: ConversionCache) -> None:
    assert isinstance(cache, ConversionCache)
    assert cache.get(H1, "pypdf;1") is None
    cache.put(H1, "pypdf;1", DOC)
    assert cache.get(H1, "pypdf;1") == DOC
    assert cache.get(H1, "pypdf;2") is None
    assert cache.get(H2, "pypdf;1") is None


def test_cache_put_replaces_an_entry_whole(cache: ConversionCache) -> None:
    cache.put(H1, "s", DOC)
    cache.put(H1, "s", ConvertedDocument("other\n", ()))
    assert cache.get(H1, "s") == ConvertedDocument("other\n", ())


def test_cache_prune_keeps_exactly_the_pairs_given(cache: ConversionCache) -> None:
    cache.put(H1, "s1", DOC)
    cache.put(H1, "s2", DOC)
    cache.put(H2, "s1", DOC)
    assert cache.prune([(H1, "s1")]) == 2
    assert cache.get(H1, "s1") == DOC
    assert cache.get(H1, "s2") is None and cache.get(H2, "s1") is None
    assert cache.prune([(H1, "s1")]) == 0
