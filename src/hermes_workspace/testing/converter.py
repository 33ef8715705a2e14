"""The Converter contract as a reusable pytest class: subclass :class:`ConverterContract` in a
test module (name the subclass ``Test...``) and override its fixtures.

What every converter promises (:class:`~hermes_workspace.domain.ports.Converter`): a non-empty
``name`` that its ``signature`` holds; a document of its format becomes markdown text that ends
with exactly one line break and holds what the document says; anchors (page, slide, sheet), when
the format has them, are on lines of that text, in line order, numbered in increasing order;
the same bytes convert to the same document; bytes that are not a document of its format raise
:class:`~hermes_workspace.domain.errors.ConversionError`, never another exception (one bad file
must not stop an index run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.domain.errors import ConversionError
from hermes_workspace.domain.model import Anchor, ConvertedDocument
from hermes_workspace.domain.ports import Converter


class ConverterContract:
    """The Converter contract. Override ``converter`` (the converter under test), ``sample``
    (``(file name, bytes)`` of a small real document of its format), ``expected_words`` (words
    the converted text must hold) and ``anchor_kind`` (``"page"``, ``"slide"``, ``"sheet"``, or
    ``None`` when the format has no anchors); ``not_a_document`` if the default garbage could be
    read as your format."""

    @pytest.fixture
    def converter(self) -> Converter:
        raise NotImplementedError("override the `converter` fixture")

    @pytest.fixture
    def sample(self) -> tuple[str, bytes]:
        raise NotImplementedError("override the `sample` fixture: (file name, bytes)")

    @pytest.fixture
    def expected_words(self) -> tuple[str, ...]:
        return ()

    @pytest.fixture
    def anchor_kind(self) -> str | None:
        return None

    @pytest.fixture
    def not_a_document(self) -> bytes:
        return b"PK\x03\x04 this is neither a zip nor a pdf \xff\xfe\x00" * 20

    def test_has_a_name_its_signature_holds(self, converter: Converter) -> None:
        assert isinstance(converter, Converter)
        assert converter.name and converter.name in converter.signature

    def test_converts_the_sample_to_markdown_with_anchors_in_line_order(
        self, converter: Converter, sample: tuple[str, bytes], expected_words: tuple[str, ...],
        anchor_kind: str | None,
    ) -> None:
        name, data = sample
        document = converter.convert(data, Path("/docs") / name)
        assert isinstance(document, ConvertedDocument)
        assert document.text.endswith("\n") and not document.text.endswith("\n\n")
        for word in expected_words:
            assert word in document.text
        lines = document.text.count("\n")
        assert all(isinstance(a, Anchor) and 1 <= a.line <= lines for a in document.anchors)
        assert [a.line for a in document.anchors] == sorted(a.line for a in document.anchors)
        if anchor_kind is None:
            assert document.anchors == ()
        else:
            assert document.anchors and {a.kind for a in document.anchors} == {anchor_kind}
            numbers = [a.number for a in document.anchors]
            assert numbers == sorted(set(numbers))

    def test_the_same_bytes_convert_to_the_same_document(self, converter: Converter,
                                                         sample: tuple[str, bytes]) -> None:
        name, data = sample
        assert converter.convert(data, Path("/a") / name) == converter.convert(data, Path("/a") / name)

    def test_bytes_of_another_format_are_a_conversion_error(
        self, converter: Converter, sample: tuple[str, bytes], not_a_document: bytes,
    ) -> None:
        with pytest.raises(ConversionError):
            converter.convert(not_a_document, Path("/docs") / f"broken{Path(sample[0]).suffix}")
