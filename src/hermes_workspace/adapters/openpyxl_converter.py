"""XLSX -> markdown text with one anchor per sheet, with openpyxl (MIT; no network).

The workbook is opened ``read_only`` (rows streamed, memory flat) and ``data_only`` (the values
Excel last computed, not formulas). Each worksheet is a section ``## Sheet: <name>`` anchored as
that sheet: its non-empty rows as markdown table rows, the first one as the header, trailing
empty cells dropped. Sheets are cut at :data:`MAX_ROWS_PER_SHEET` rows and
:data:`MAX_COLUMNS` columns, cells at :data:`MAX_CELL_CHARS`, with a line saying what was left out:
``(rows 5001 to 200000 not converted)``, the end being the last row the sheet's ``<dimension>``
states, or ``(rows after row 5000 not converted)`` when it states none or one that is wrong; a
sheet is not read past its cap. (openpyxl itself parses a sheet without a ``<dimension>`` whole
once, when it opens the workbook, to look for one: such a sheet, as streaming writers make, still
costs about 4 s per 200,000 rows of 5 columns (measured); one with it, as Excel and LibreOffice
write, 0.25 s.)
"""

from __future__ import annotations

import datetime as dt
import io
import warnings
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._document_files import EXCEL, diagnose, is_read_error, load_library, unreadable
from hermes_workspace.domain.conversion import DocumentBuilder, markdown_table
from hermes_workspace.domain.errors import ConversionError
from hermes_workspace.domain.model import ConvertedDocument

ADAPTER_VERSION = 2
"""Bump when this module's output changes for the same library version (re-converts XLSX files)."""

MAX_ROWS_PER_SHEET = 5_000
"""Rows read per sheet: its rows 1 to 5,000 (by row number, empty ones included), the rest
is not read at all. A spreadsheet is searched for what it is about (headers, labels, notes),
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
        self._version, (self._openpyxl,) = load_library("openpyxl", "openpyxl", "openpyxl")

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
            ConversionError: not a readable XLSX (the message says what the file is instead,
                where that can be told: see :func:`~hermes_workspace.adapters._document_files.diagnose`).
        """
        try:
            with warnings.catch_warnings():
                # openpyxl warns about what it cannot read (a Strict Open XML workbook, data
                # validation, styles) on stderr; what matters is reported below, per file.
                warnings.simplefilter("ignore")
                workbook = self._openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except Exception as exc:
            if not is_read_error(exc, "openpyxl", "lxml"):
                raise
            raise unreadable(data, path.name, EXCEL, "openpyxl", exc) from exc
        builder = DocumentBuilder()
        try:
            if not workbook.worksheets:
                # openpyxl reads a Strict Open XML workbook as one without worksheets (with a
                # warning), which would index as an empty file: say what it is instead.
                problem = diagnose(data, path.name, EXCEL)
                if problem is not None:
                    raise problem
            for number, sheet in enumerate(workbook.worksheets, start=1):
                _add_sheet(builder, number, sheet)
        except ConversionError:
            raise
        except Exception as exc:
            if not is_read_error(exc, "openpyxl", "lxml"):
                raise
            raise unreadable(data, path.name, EXCEL, "openpyxl", exc) from exc
        finally:
            workbook.close()
        return builder.build()


def _add_sheet(builder: DocumentBuilder, number: int, sheet: Any) -> None:
    """``sheet`` (a read-only worksheet) as a section: its rows 1 to :data:`MAX_ROWS_PER_SHEET`
    are read, and one more to know whether there are more; nothing after that is parsed."""
    # <dimension> as the file states it (None without one); it may be wrong (some writers put
    # "A1"), and openpyxl would then cut the rows and columns to it: read the cells that are
    # there, and use the stated size only to say how many rows were left out.
    declared_rows = sheet.max_row
    sheet.reset_dimensions()
    rows: list[list[str]] = []
    more_rows = wide = False
    for index, values in enumerate(sheet.iter_rows(max_row=MAX_ROWS_PER_SHEET + 1, values_only=True), start=1):
        if index > MAX_ROWS_PER_SHEET:
            more_rows = True  # a row element past the cap exists (it may be empty: not parsed further)
            break
        wide = wide or any(_filled(v) for v in values[MAX_COLUMNS:])
        cells = [_cell(v) for v in values[:MAX_COLUMNS]]
        while cells and not cells[-1].strip():
            cells.pop()
        if cells:
            rows.append(cells)
    builder.blank()
    builder.anchor("sheet", number, sheet.title)
    builder.add(f"## Sheet: {' '.join(sheet.title.split())}")
    builder.blank()
    for line in markdown_table(rows):
        builder.add(line)
    if more_rows or wide:
        cut = []
        if more_rows and declared_rows == MAX_ROWS_PER_SHEET + 1:
            cut.append(f"row {declared_rows}")
        elif more_rows and declared_rows is not None and declared_rows > MAX_ROWS_PER_SHEET:
            cut.append(f"rows {MAX_ROWS_PER_SHEET + 1} to {declared_rows}")
        elif more_rows:
            cut.append(f"rows after row {MAX_ROWS_PER_SHEET}")
        if wide:
            cut.append(f"columns after the first {MAX_COLUMNS}")
        builder.blank()
        builder.add(f"({' and '.join(cut)} not converted)")
    builder.blank()


def _filled(value: Any) -> bool:
    """Whether a cell value shows anything (``_cell`` of it is not blank), without formatting it."""
    return value is not None and (not isinstance(value, str) or bool(value.strip()))
