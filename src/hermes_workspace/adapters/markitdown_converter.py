"""EPUB and (opt-in) HTML -> markdown text, with Microsoft's markitdown (MIT; no network).

markitdown's own converter for the file's kind is called directly (``markitdown.converters``:
``EpubConverter`` for ``.epub``, ``HtmlConverter`` for ``.html``/``.htm``/``.xhtml``), not
``MarkItDown.convert``, whose format guessing runs a model over every file and may follow URLs.
EPUB chapters come out in spine order with their headings; there are no page anchors (an EPUB
has none), so a hit says where it is by its heading breadcrumb.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from hermes_workspace.adapters._document_files import EPUB, load_library, unreadable
from hermes_workspace.domain.conversion import DocumentBuilder
from hermes_workspace.domain.errors import ConversionError
from hermes_workspace.domain.model import ConvertedDocument

ADAPTER_VERSION = 1
"""Bump when this module's output changes for the same library version."""

_KINDS = {
    ".epub": ("EpubConverter", "application/epub+zip"),
    ".html": ("HtmlConverter", "text/html"),
    ".htm": ("HtmlConverter", "text/html"),
    ".xhtml": ("HtmlConverter", "application/xhtml+xml"),
}
"""Suffix -> (markitdown converter class, MIME type); other suffixes are tried as HTML."""


class MarkitdownConverter:
    """The ``markitdown`` converter (see the module docstring).

    Raises (when built):
        ConverterUnavailableError: markitdown is not installed.
    """

    def __init__(self) -> None:
        self._version, (markitdown, self._converters) = load_library(
            "markitdown", "markitdown", "markitdown", "markitdown.converters"
        )
        self._stream_info = markitdown.StreamInfo
        self._instances: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return "markitdown"

    @property
    def signature(self) -> str:
        return f"markitdown;markitdown={self._version};adapter={ADAPTER_VERSION}"

    def convert(self, data: bytes, path: Path) -> ConvertedDocument:
        """The document as markdown (no anchors).

        Raises:
            ConversionError: markitdown cannot read it (for an EPUB, the message says what
                the file is instead where that can be told).
        """
        suffix = path.suffix.lower()
        class_name, mimetype = _KINDS.get(suffix, ("HtmlConverter", "text/html"))
        converter = self._instances.get(class_name)
        if converter is None:
            converter = self._instances[class_name] = getattr(self._converters, class_name)()
        info = self._stream_info(mimetype=mimetype, extension=suffix, filename=path.name, charset=None)
        try:
            result = converter.convert(io.BytesIO(data), info)
        except Exception as exc:  # noqa: BLE001 - markitdown and its parsers raise many kinds
            if isinstance(exc, (KeyboardInterrupt, MemoryError)):
                raise
            if suffix == EPUB.suffix:
                raise unreadable(data, path.name, EPUB, "markitdown", exc) from exc
            raise ConversionError(f"markitdown cannot read {path.name}: {type(exc).__name__}: {exc}") from exc
        builder = DocumentBuilder()
        for line in (result.markdown or "").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            builder.add(line.replace("\x00", "").rstrip())  # markitdown writes markdown: kept as structure
        return builder.build()
