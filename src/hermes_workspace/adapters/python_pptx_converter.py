"""PPTX -> markdown text with one anchor per slide, with python-pptx (MIT; no network).

Each slide is a section ``## Slide N: <title>`` (``## Slide N`` without a title), anchored as
slide N: the text of its other shapes in the slide's shape order (groups opened, paragraphs
indented as ``- `` items by their outline level when they are bullets), tables as markdown
tables, then the speaker notes under ``### Notes``. Pictures and charts have no text.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._document_files import POWERPOINT, is_read_error, load_library, unreadable
from hermes_workspace.domain.conversion import DocumentBuilder, markdown_table, plain_line
from hermes_workspace.domain.model import ConvertedDocument

ADAPTER_VERSION = 1
"""Bump when this module's output changes for the same library version (re-converts PPTX files)."""


class PythonPptxConverter:
    """The ``python-pptx`` converter (see the module docstring).

    Raises (when built):
        ConverterUnavailableError: python-pptx is not installed.
    """

    def __init__(self) -> None:
        self._version, (self._pptx, shapes) = load_library("python-pptx", "python-pptx", "pptx", "pptx.enum.shapes")
        self._group = shapes.MSO_SHAPE_TYPE.GROUP

    @property
    def name(self) -> str:
        return "python-pptx"

    @property
    def signature(self) -> str:
        return f"python-pptx;python-pptx={self._version};adapter={ADAPTER_VERSION};notes=yes"

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        """One ``## Slide N`` section and ``slide`` anchor per slide (label: N).

        Raises:
            ConversionError: not a readable PPTX.
        """
        try:
            presentation = self._pptx.Presentation(io.BytesIO(data))
            builder = DocumentBuilder()
            for number, slide in enumerate(presentation.slides, start=1):
                self._add_slide(builder, number, slide)
        except Exception as exc:
            if not is_read_error(exc, "pptx", "lxml"):
                raise
            raise unreadable(data, path.name, POWERPOINT, "python-pptx", exc) from exc
        return builder.build()

    def _add_slide(self, builder: DocumentBuilder, number: int, slide: Any) -> None:
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        builder.blank()
        builder.anchor("slide", number, str(number))
        builder.add(f"## Slide {number}: {title}" if title else f"## Slide {number}")
        builder.blank()
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            self._add_shape(builder, shape)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                builder.blank()
                builder.add("### Notes")
                builder.blank()
                builder.add_text(notes.text)
        builder.blank()

    def _add_shape(self, builder: DocumentBuilder, shape: Any) -> None:
        if shape.shape_type == self._group:
            for inner in shape.shapes:
                self._add_shape(builder, inner)
            return
        if getattr(shape, "has_table", False) and shape.has_table:
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            rows = [row for row in rows if any(c.strip() for c in row)]
            if rows:
                builder.blank()
                for line in markdown_table(rows):
                    builder.add(line)
                builder.blank()
            return
        if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
            return
        paragraphs = [p for p in shape.text_frame.paragraphs if p.text.strip()]
        if not paragraphs:
            return
        bullets = len(paragraphs) > 1
        for paragraph in paragraphs:
            text = " ".join(paragraph.text.replace("\x0b", "\n").split("\n"))
            line = plain_line(text).strip()
            if bullets:
                builder.add(f"{'  ' * (paragraph.level or 0)}- {line}")
            else:
                builder.add(line)
        builder.blank()
