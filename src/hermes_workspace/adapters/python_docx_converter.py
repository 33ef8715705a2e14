"""DOCX -> markdown text, with python-docx (MIT; reads the file's XML, no network).

The body in document order: paragraphs and tables. Paragraph styles ``Title`` and ``Heading 1``
to ``Heading 6`` become ``#`` to ``######`` headings (so that chunks get heading breadcrumbs;
``Title`` is level 1, deeper headings are level 6); list paragraphs (a ``List ...`` style, or
numbering) become ``- `` items, indented two spaces per level; tables become markdown tables (the
first row as header; a cell merged across columns appears once). A DOCX has no pages (they
depend on the renderer), so there are no anchors: a hit says where it is by its heading
breadcrumb. Headers, footers, comments and text boxes are left out.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._document_files import WORD, is_read_error, load_library, unreadable
from hermes_workspace.domain.conversion import DocumentBuilder, markdown_table, plain_line
from hermes_workspace.domain.model import ConvertedDocument

ADAPTER_VERSION = 1
"""Bump when this module's output changes for the same library version (re-converts DOCX files)."""

_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
MAX_HEADING_LEVEL = 6


class PythonDocxConverter:
    """The ``python-docx`` converter (see the module docstring).

    Raises (when built):
        ConverterUnavailableError: python-docx is not installed.
    """

    def __init__(self) -> None:
        self._version, (self._docx, table) = load_library("python-docx", "python-docx", "docx", "docx.table")
        self._table = table.Table

    @property
    def name(self) -> str:
        return "python-docx"

    @property
    def signature(self) -> str:
        return f"python-docx;python-docx={self._version};adapter={ADAPTER_VERSION}"

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        """The document body as markdown (no anchors).

        Raises:
            ConversionError: not a readable DOCX (damaged, encrypted, another format).
        """
        try:
            document = self._docx.Document(io.BytesIO(data))
            builder = DocumentBuilder()
            for item in document.iter_inner_content():
                if isinstance(item, self._table):
                    self._add_table(builder, item)
                else:
                    self._add_paragraph(builder, item)
        except Exception as exc:
            if not is_read_error(exc, "docx", "lxml"):
                raise
            raise unreadable(data, path.name, WORD, "python-docx", exc) from exc
        return builder.build()

    @staticmethod
    def _add_paragraph(builder: DocumentBuilder, paragraph: Any) -> None:
        text = paragraph.text
        if not text.strip():
            return
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        level = _heading_level(style)
        if level:
            builder.blank()
            builder.add(f"{'#' * level} {' '.join(text.split())}")
            builder.blank()
            return
        depth = _list_depth(paragraph, style)
        if depth is not None:
            lines = text.replace("\r", "\n").split("\n")
            builder.add(f"{'  ' * depth}- {plain_line(lines[0]).lstrip()}")
            for more in lines[1:]:
                builder.add(f"{'  ' * (depth + 1)}{plain_line(more).lstrip()}")
            return
        builder.blank()
        builder.add_text(text)
        builder.blank()

    @staticmethod
    def _add_table(builder: DocumentBuilder, table: Any) -> None:
        rows: list[list[str]] = []
        for row in table.rows:
            cells: list[str] = []
            previous = None
            for cell in row.cells:
                if previous is not None and cell._tc is previous:  # one cell merged across columns
                    continue
                previous = cell._tc
                cells.append(cell.text)
            if any(c.strip() for c in cells):
                rows.append(cells)
        if rows:
            builder.blank()
            for line in markdown_table(rows):
                builder.add(line)
            builder.blank()


def _heading_level(style: str) -> int:
    """1-6 for ``Title`` and ``Heading N`` styles (N > 6: 6), else 0."""
    if style.strip().lower() == "title":
        return 1
    match = _HEADING_STYLE.fullmatch(style.strip())
    return min(int(match.group(1)), MAX_HEADING_LEVEL) if match else 0


def _list_depth(paragraph: Any, style: str) -> int | None:
    """The 0-based list level of a list paragraph (numbering, or a ``List ...`` style), else ``None``."""
    properties = paragraph._p.pPr
    numbering = properties.numPr if properties is not None else None
    if numbering is not None and numbering.numId is not None:
        level = numbering.ilvl.val if numbering.ilvl is not None else 0
        return int(level or 0)
    if style.lower().startswith("list"):
        match = re.search(r"(\d+)$", style)
        return int(match.group(1)) - 1 if match else 0
    return None
