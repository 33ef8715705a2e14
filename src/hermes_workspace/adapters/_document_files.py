"""What the document converters share: loading their library, and saying in words what a file
their library could not read really is.

A converter's library reports a file of the wrong kind with its own internals (``KeyError:
"There is no item named '[Content_Types].xml' in the archive"`` for a text file named
``.docx``). When the library fails, :func:`unreadable` looks at the bytes itself (only then: a
good file costs nothing) and names what they are: empty, plain text, a PDF, an older binary
Office file, a password-protected Office file, a zip archive that is cut off, a zip of another
kind (a ``.docx`` named ``.xlsx``, an OpenDocument file), a Strict Open XML document; else the
library's own message stands. The signatures used are the published ones: zip local file header
``PK\\x03\\x04`` (PKWARE APPNOTE 4.3.7), OLE2 compound file ``D0 CF 11 E0 A1 B1 1A E1`` (MS-CFB
2.2), whose stream ``EncryptedPackage`` holds a password-protected OOXML file (MS-OFFCRYPTO 2.3.4),
the OPC part ``[Content_Types].xml`` and the main content types (ECMA-376 Part 2), the Strict
relationship namespace ``http://purl.oclc.org/ooxml/`` (ECMA-376 Part 1, Strict conformance),
the ``mimetype`` member of EPUB (OCF 3.0) and OpenDocument (ODF 1.2 Part 3) files, a PDF's
``%PDF-`` header and ``%%EOF`` marker (ISO 32000-1, 7.5.2 and 7.5.5).
"""

from __future__ import annotations

import codecs
import importlib
import io
import zipfile
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType

from hermes_workspace.domain.errors import ConversionError, ConverterUnavailableError


def load_library(converter: str, distribution: str, *modules: str) -> tuple[str, list[ModuleType]]:
    """``(version, [module, ...])``: the installed version of ``distribution`` and the
    ``modules`` imported, for the converter named ``converter``.

    Raises:
        ConverterUnavailableError: one of the modules cannot be imported (the library is not
            installed); the message names the converter and the distribution to install.
    """
    try:
        loaded = [importlib.import_module(module) for module in modules]
    except ImportError as exc:
        raise ConverterUnavailableError(
            f"the {converter} converter needs {distribution}, which is not installed"
        ) from exc
    return metadata.version(distribution), loaded


_READ_ERRORS = (ValueError, KeyError, zipfile.BadZipFile, OSError, EOFError, AttributeError, TypeError,
                IndexError, RecursionError)
"""Built-in exceptions the reading libraries raise on a malformed file (a missing part, a bad
value, a damaged zip member, a missing element read as ``None``)."""


def is_read_error(exc: Exception, *packages: str) -> bool:
    """Whether ``exc`` is a library's way of saying it cannot read a file: one of the built-in
    kinds above, or an exception class of one of ``packages`` (top-level package names such as
    ``"docx"``, ``"lxml"``). Anything else (a bug of ours) is not, and propagates."""
    return isinstance(exc, _READ_ERRORS) or type(exc).__module__.split(".")[0] in packages


@dataclass(frozen=True)
class DocumentFormat:
    """A document format as a user knows it. ``noun``: with its article and suffix (``"a Word
    document (.docx)"``); ``member``: the zip member every file of it has (``None``: not a zip
    format); ``content_type``: the main part's content type (OOXML only); ``save_as``: where its
    application saves the standard variant (OOXML only)."""

    noun: str
    suffix: str
    member: str | None = None
    content_type: str | None = None
    save_as: str | None = None


_OOXML = "application/vnd.openxmlformats-officedocument."
WORD = DocumentFormat("a Word document (.docx)", ".docx", "[Content_Types].xml",
                      _OOXML + "wordprocessingml.document.main+xml", "Word: Save As > Word Document")
POWERPOINT = DocumentFormat("a PowerPoint presentation (.pptx)", ".pptx", "[Content_Types].xml",
                            _OOXML + "presentationml.presentation.main+xml",
                            "PowerPoint: Save As > PowerPoint Presentation")
EXCEL = DocumentFormat("an Excel workbook (.xlsx)", ".xlsx", "[Content_Types].xml",
                       _OOXML + "spreadsheetml.sheet.main+xml", "Excel: Save As > Excel Workbook")
EPUB = DocumentFormat("an EPUB e-book (.epub)", ".epub", "META-INF/container.xml")
PDF = DocumentFormat("a PDF", ".pdf")

_OTHER_OOXML = {
    "application/vnd.ms-word.document.macroEnabled.main+xml": "a macro-enabled Word document (.docm)",
    _OOXML + "wordprocessingml.template.main+xml": "a Word template (.dotx)",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml": "a macro-enabled Excel workbook (.xlsm)",
    _OOXML + "spreadsheetml.template.main+xml": "an Excel template (.xltx)",
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml":
        "a macro-enabled PowerPoint presentation (.pptm)",
    _OOXML + "presentationml.slideshow.main+xml": "a PowerPoint show (.ppsx)",
    _OOXML + "presentationml.template.main+xml": "a PowerPoint template (.potx)",
}
"""Main content types (ECMA-376 Part 2) of the OOXML kinds no built-in converter reads as such,
-> what they are called."""

_MIMETYPES = {
    "application/epub+zip": EPUB.noun,
    "application/vnd.oasis.opendocument.text": "an OpenDocument text document (.odt)",
    "application/vnd.oasis.opendocument.spreadsheet": "an OpenDocument spreadsheet (.ods)",
    "application/vnd.oasis.opendocument.presentation": "an OpenDocument presentation (.odp)",
}
"""The ``mimetype`` member of EPUB and OpenDocument zips -> what the file is called."""

_ZIP = b"PK\x03\x04"
_CFB = bytes.fromhex("D0CF11E0A1B11AE1")
_STRICT_OFFICE_DOCUMENT = b"http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument"
_PDF_HEADER = b"%PDF-"
_HEAD = 1024
"""Bytes a PDF's header may be preceded by, and its ``%%EOF`` followed by (readers look that far,
ISO 32000-1 Annex H.3)."""

_REDO = "Copy or download the file again, or add it to .hermesignore."
_RENAME = "Give the file the suffix of what it is, or add it to .hermesignore."


def unreadable(data: bytes, name: str, kind: DocumentFormat, library: str, exc: BaseException) -> ConversionError:
    """The error for ``data`` (the file ``name``, meant to be ``kind``), which ``library``
    failed to read with ``exc``: what the file is in words when :func:`diagnose` can tell,
    else ``"<library> cannot read <name>: <ExceptionType>: <message>"``."""
    return diagnose(data, name, kind) or ConversionError(f"{library} cannot read {name}: {type(exc).__name__}: {exc}")


def diagnose(data: bytes, name: str, kind: DocumentFormat) -> ConversionError | None:
    """Why ``data`` is not a readable ``kind`` file, as a :class:`ConversionError` whose message
    says so in words (``"fake.docx is not a Word document (.docx): it is plain text, not a zip
    archive as every .docx file is"``); ``None`` when the bytes look like ``kind`` (the library
    failed on what is inside: the caller reports its error)."""
    not_kind = f"{name} is not {kind.noun}"
    if not data:
        return ConversionError(f"{not_kind}: the file is empty (0 bytes)")
    if kind.member is None:
        return _diagnose_pdf(data, name, not_kind)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return _not_a_zip(data, name, kind, not_kind)
    with archive:
        return _diagnose_zip(archive, name, kind, not_kind)


def _diagnose_pdf(data: bytes, name: str, not_kind: str) -> ConversionError | None:
    if _PDF_HEADER not in data[:_HEAD]:
        what = _what_else(data)
        if what is None:
            return ConversionError(f"{not_kind}: it does not start with %PDF-, as every PDF does")
        return ConversionError(f"{not_kind}: {what}", hint=_RENAME)
    if b"%%EOF" not in data[-_HEAD:]:
        return ConversionError(f"{name} is damaged: the PDF is cut off (it has no %%EOF end marker; "
                               "an unfinished download or copy?)", hint=_REDO)
    return None


def _not_a_zip(data: bytes, name: str, kind: DocumentFormat, not_kind: str) -> ConversionError:
    if data.startswith(_ZIP):
        return ConversionError(f"{name} is damaged: its zip archive is cut off or corrupt "
                               "(an unfinished download or copy?)", hint=_REDO)
    if data.startswith(_CFB) and "EncryptedPackage".encode("utf-16-le") in data:
        return ConversionError(f"{name} is encrypted with a password",
                               hint="Remove the password (or add the file to .hermesignore).")
    what = _what_else(data)
    if what is None:
        return ConversionError(f"{not_kind}: it is not a zip archive, as every {kind.suffix} file is")
    if data.startswith(_CFB):
        return ConversionError(f"{not_kind}: {what}",
                               hint=f"Open it in its application and save it as {kind.suffix}, "
                                    "or add it to .hermesignore.")
    return ConversionError(f"{not_kind}: {what}, not a zip archive as every {kind.suffix} file is",
                           hint=_RENAME if what.startswith("it is a ") else None)


def _what_else(data: bytes) -> str | None:
    """What a file that is not of the wanted kind is, as ``"it is ..."``; ``None``: unknown."""
    if data.startswith(_CFB):
        return "it is in the older binary Office format (.doc, .xls or .ppt)"
    if _PDF_HEADER in data[:_HEAD]:
        return f"it is {PDF.noun}"
    if data.startswith(_ZIP):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                other = _zip_kind(archive)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError):
            other = None
        return f"it is {other}" if other else "it is a zip archive"
    if _is_text(data[:4096]):
        return "it is plain text"
    return None


def _is_text(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) reads as UTF-8 text without control characters
    other than tab, line breaks and form feed."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return all(ch >= " " or ch in "\t\n\r\f" for ch in text)


def _zip_kind(archive: zipfile.ZipFile) -> str | None:
    """What an OOXML, EPUB or OpenDocument zip is, by its content types or ``mimetype`` member;
    ``None`` for any other zip."""
    names = set(archive.namelist())
    if "[Content_Types].xml" in names:
        types = archive.read("[Content_Types].xml").decode("utf-8", "replace")
        for known in (WORD, POWERPOINT, EXCEL):
            if f'"{known.content_type}"' in types:
                return known.noun
        for content_type, noun in _OTHER_OOXML.items():
            if f'"{content_type}"' in types:
                return noun
        return "an Office Open XML file"
    if "mimetype" in names:
        mimetype = archive.read("mimetype").decode("ascii", "replace").strip()
        return _MIMETYPES.get(mimetype)
    return None


def _diagnose_zip(archive: zipfile.ZipFile, name: str, kind: DocumentFormat, not_kind: str) -> ConversionError | None:
    try:
        other = _zip_kind(archive)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError):
        return ConversionError(f"{name} is damaged: its zip archive is cut off or corrupt "
                               "(an unfinished download or copy?)", hint=_REDO)
    if other is not None and other != kind.noun and not (other == "an Office Open XML file" and kind.content_type):
        return ConversionError(f"{not_kind}: it is {other}", hint=_RENAME)
    names = set(archive.namelist())
    if kind.member not in names:
        return ConversionError(f"{not_kind}: it is a zip archive without {kind.member}, "
                               f"which every {kind.suffix} file has")
    if kind.content_type and "_rels/.rels" in names and _STRICT_OFFICE_DOCUMENT in archive.read("_rels/.rels"):
        return ConversionError(
            f"{name} is a Strict Open XML document, a variant of {kind.suffix} that is not supported: "
            f"save it as a standard {kind.suffix} ({kind.save_as})",
            hint=f"Save it as a standard {kind.suffix} file, or add it to .hermesignore.",
        )
    return None
