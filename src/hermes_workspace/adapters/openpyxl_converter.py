"""XLSX -> markdown text with one anchor per sheet, with openpyxl (MIT; no network).

The workbook is opened ``read_only`` (rows streamed, memory flat) and ``data_only`` (the values
Excel last computed, not formulas). Each worksheet is a section ``## Sheet: <name>`` anchored as
that sheet: its non-empty rows as markdown table rows, the first one as the header, trailing
empty cells dropped. Sheets are cut at :data:`MAX_ROWS_PER_SHEET` rows and
:data:`MAX_COLUMNS` columns, cells at :data:`MAX_CELL_CHARS`, with a line saying what was left out.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from hermes_workspace.domain.conversion import DocumentBuilder, markdown_table
from hermes_workspace.domain.errors import ConversionError, ConverterUnavailableError
from hermes_workspace.domain.model import ConvertedDocument

ADAPTER_VERSION = 1
"""Bump when this module's output changes for the same library version (re-converts XLSX files)."""

MAX_ROWS_PER_SHEET = 5_000
"""Rows kept per sheet. A spreadsheet is searched for what it is about (headers, labels, notes),
which its first rows show; a sheet of 100,000 rows of numbers would make thousands of chunks of
digits that match no words and crowd the index (about 1 MB of text per 5,000 rows of 20 columns)."""

MAX_COLUMNS = 64
"""Columns kept per row (wider sheets are tables of data, as above); the ``A``..``BL`` range."""

MAX_CELL_CHARS = 1_000
"""Characters kept per cell: a cell holding a whole document is cut, the rest of its row stays
readable in one table line."""


def _cell(value: Any) -> str:
    """A cell value as text: whole floats without ``.0``, dates in ISO 8601, ``None`` empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    text = str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS] + "…"


class OpenpyxlConverter:
    """The ``openpyxl`` converter (see the module docstring).

    Raises (when built):
        ConverterUnavailableError: openpyxl is not installed.
    """

    def __init__(self) -> None:
        try:
            import openpyxl
        except ImportError as exc:
            raise ConverterUnavailableError("the openpyxl converter needs openpyxl, which is not installed") from exc
        self._openpyxl = openpyxl
        self._version = metadata.version("openpyxl")

    @property
    def name(self) -> str:
        return "openpyxl"

    @property
    def signature(self) -> str:
        return (
            f"openpyxl;openpyxl={self._version};adapter={ADAPTER_VERSION};rows={MAX_ROWS_PER_SHEET};"
            f"columns={MAX_COLUMNS};cell_chars={MAX_CELL_CHARS}"
        )

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        """One ``## Sheet: name`` section and ``sheet`` anchor (label: the name, number: its
        1-based position) per worksheet; chart sheets are left out.

        Raises:
            ConversionError: not a readable XLSX.
        """
        try:
            workbook = self._openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except (ValueError, KeyError, zipfile.BadZipFile, OSError, TypeError) as exc:
            raise ConversionError(f"openpyxl cannot read {path.name}: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # openpyxl's InvalidFileException, lxml's XMLSyntaxError
            if type(exc).__module__.startswith(("openpyxl", "lxml")):
                raise ConversionError(f"openpyxl cannot read {path.name}: {type(exc).__name__}: {exc}") from exc
            raise
        builder = DocumentBuilder()
        try:
            for number, sheet in enumerate(workbook.worksheets, start=1):
                self._add_sheet(builder, number, sheet)
        except (ValueError, KeyError, OSError, TypeError, AttributeError) as exc:
            raise ConversionError(f"openpyxl cannot read {path.name}: {type(exc).__name__}: {exc}") from exc
        finally:
            workbook.close()
        return builder.build()

    @staticmethod
    def _add_sheet(builder: DocumentBuilder, number: int, sheet: Any) -> None:
        rows: list[list[str]] = []
        left_rows = 0
        wide = False
        for values in sheet.iter_rows(values_only=True):
            cells = [_cell(v) for v in values]
            while cells and not cells[-1].strip():
                cells.pop()
            if not cells:
                continue
            if len(rows) >= MAX_ROWS_PER_SHEET:
                left_rows += 1
                continue
            if len(cells) > MAX_COLUMNS:
                cells, wide = cells[:MAX_COLUMNS], True
            rows.append(cells)
        builder.blank()
        builder.anchor("sheet", number, sheet.title)
        builder.add(f"## Sheet: {' '.join(sheet.title.split())}")
        builder.blank()
        for line in markdown_table(rows):
            builder.add(line)
        if left_rows or wide:
            builder.blank()
            cut = []
            if left_rows:
                cut.append(f"{left_rows} more rows")
            if wide:
                cut.append(f"columns after the first {MAX_COLUMNS}")
            builder.add(f"({' and '.join(cut)} not converted)")
        builder.blank()
