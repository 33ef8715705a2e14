"""PDF -> markdown text with one anchor per page, with pypdf (BSD; pure Python, no network).

Text is pypdf's ``extract_text()`` of each page in order, pages separated by a blank line; a
page without text adds nothing (and no anchor). The outline (bookmarks), when the PDF has one,
becomes markdown headings (one ``#`` per nesting level, at most six), so that chunks get heading
breadcrumbs: the line of the page that reads as the bookmark's title (``2.1 ASN.1 syntax`` for
the bookmark ``ASN.1 syntax``) becomes the heading; when no line does, the title is put before
the page's text. A PDF none of whose pages has text is :class:`NoTextLayerError` (scanned).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._document_files import PDF, load_library, unreadable
from hermes_workspace.domain.conversion import DocumentBuilder, plain_line
from hermes_workspace.domain.errors import ConversionError, NoTextLayerError
from hermes_workspace.domain.model import ConvertedDocument

ADAPTER_VERSION = 1
"""Bump when this module's output changes for the same library version (re-converts PDFs)."""

MAX_OUTLINE_DEPTH = 6
"""Markdown has six heading levels; deeper bookmarks are level 6."""

_SECTION_NUMBER = re.compile(r"(?:[0-9]+|[a-z])(?:\.[0-9]+)*\.?")  # on casefolded text


def _normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


class PypdfConverter:
    """The ``pypdf`` converter (see the module docstring).

    Raises (when built):
        ConverterUnavailableError: pypdf is not installed.
    """

    def __init__(self) -> None:
        self._version, (self._pypdf,) = load_library("pypdf", "pypdf", "pypdf")

    @property
    def name(self) -> str:
        return "pypdf"

    @property
    def signature(self) -> str:
        return f"pypdf;pypdf={self._version};adapter={ADAPTER_VERSION};outline=headings"

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        """The PDF's text, one ``page`` anchor (label: the 1-based page number, as a viewer's
        page box counts, not the printed page label) per page with text.

        Raises:
            NoTextLayerError: no page has extractable text.
            ConversionError: pypdf cannot read the file (damaged, or encrypted with a password);
                the message says what the file is instead where that can be told (empty, cut
                off, another kind: see :func:`~hermes_workspace.adapters._document_files.diagnose`).
        """
        errors = self._pypdf.errors
        try:
            reader = self._pypdf.PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise ConversionError(f"{path.name} is encrypted with a password",
                                      hint="Remove the password (or add the file to .hermesignore).")
            texts = [page.extract_text() or "" for page in reader.pages]
        except ConversionError:
            raise
        except (errors.PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
            raise unreadable(data, path.name, PDF, "pypdf", exc) from exc
        if not texts:
            return ConvertedDocument("", ())
        if not any(text.strip() for text in texts):
            raise NoTextLayerError(
                f"{path.name} has no text layer on any of its {len(texts)} pages (a scanned document?)"
            )
        headings = self._outline(reader)
        builder = DocumentBuilder()
        for number, text in enumerate(texts, start=1):
            if not text.strip():
                continue
            builder.blank()
            builder.anchor("page", number, str(number))
            lines = [plain_line(line) for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
            for line in _with_headings(lines, headings.get(number - 1, [])):
                builder.add(line)
        return builder.build()

    def _outline(self, reader: Any) -> dict[int, list[tuple[int, str]]]:
        """0-based page index -> ``(level, title)`` of the bookmarks pointing at it, in outline
        order; ``{}`` when the PDF has no outline or pypdf cannot read it (text still counts)."""
        found: dict[int, list[tuple[int, str]]] = {}

        def walk(items: list[Any], level: int) -> None:
            for item in items:
                if isinstance(item, list):
                    walk(item, level + 1)
                    continue
                title = " ".join(str(getattr(item, "title", "") or "").split())
                page = reader.get_destination_page_number(item)
                if title and page is not None and page >= 0:
                    found.setdefault(page, []).append((min(level, MAX_OUTLINE_DEPTH), title))

        try:
            walk(reader.outline, 1)
        except Exception:  # noqa: BLE001 - a broken outline costs the headings, not the text
            return {}
        return found


def _with_headings(lines: list[str], headings: list[tuple[int, str]]) -> list[str]:
    """``lines`` of one page with each bookmark of the page made a heading: the first line after
    the previous heading that reads as its title (alone, or after a section number) gets the
    ``#`` marks; else the title is inserted before the page's text."""
    out = list(lines)
    inserted = 0
    after = 0
    for level, title in headings:
        marks = "#" * level
        wanted = _normalized(title)
        for i in range(after, len(out)):
            line = _normalized(out[i].lstrip("\\"))
            prefix = line[: -len(wanted)].strip() if line.endswith(wanted) else None
            if prefix is not None and (not prefix or _SECTION_NUMBER.fullmatch(prefix)):
                out[i] = f"{marks} {out[i].lstrip().lstrip(chr(92))}"
                after = i + 1
                break
        else:
            out.insert(inserted, f"{marks} {title}")
            inserted += 1
            after = max(after, inserted)
    return out
