"""Small real documents for the converter tests, built here: PDF by hand (a valid PDF 1.4 file
with a cross-reference table), DOCX, PPTX and XLSX with the libraries that read them, EPUB as a
zip by hand; and the damaged and mislabelled variants of them that real folders hold."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Sequence


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def make_pdf(pages: Sequence[Sequence[str] | None], outline: Sequence[tuple[str, int]] = ()) -> bytes:
    """A PDF with one page per item of ``pages``: a list of text lines (drawn with Helvetica,
    one per line, top down), or ``None`` for a page with a drawing and no text (as a scanned
    page has). ``outline``: bookmarks ``(title, 0-based page index)``, all at the top level."""
    objects: list[str] = []

    def add(body: str) -> int:
        objects.append(body)
        return len(objects)

    catalog = add("")  # filled in below
    pages_id = add("")
    font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_ids = []
    for lines in pages:
        if lines is None:
            stream = "0.5 g 72 72 400 600 re f"
        else:
            parts = ["BT /F1 12 Tf 14 TL 72 720 Td"]
            for line in lines:
                parts.append(f"{_pdf_string(line)} Tj T*")
            parts.append("ET")
            stream = "\n".join(parts)
        content = add(f"<< /Length {len(stream.encode('latin-1'))} >>\nstream\n{stream}\nendstream")
        page_ids.append(add(
            f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
        ))
    objects[pages_id - 1] = (
        f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(page_ids)} >>"
    )
    outline_ref = ""
    if outline:
        root = add("")
        items = [len(objects) + 1 + i for i in range(len(outline))]
        for i, (title, page) in enumerate(outline):
            links = f"/Parent {root} 0 R"
            if i > 0:
                links += f" /Prev {items[i - 1]} 0 R"
            if i < len(outline) - 1:
                links += f" /Next {items[i + 1]} 0 R"
            add(f"<< /Title {_pdf_string(title)} {links} /Dest [{page_ids[page]} 0 R /XYZ 0 792 0] >>")
        objects[root - 1] = f"<< /Type /Outlines /First {items[0]} 0 R /Last {items[-1]} 0 R /Count {len(items)} >>"
        outline_ref = f" /Outlines {root} 0 R"
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {pages_id} 0 R{outline_ref} >>"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root {catalog} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def make_docx() -> bytes:
    """A DOCX: a title, two headings with paragraphs, a bulleted list, and a table."""
    import docx

    document = docx.Document()
    document.add_heading("Deployment Guide", 0)
    document.add_heading("Install", 1)
    document.add_paragraph("Run the installer on every build agent.")
    document.add_paragraph("download the package", style="List Bullet")
    document.add_paragraph("verify the checksum", style="List Bullet 2")
    document.add_heading("Rollback", 2)
    document.add_paragraph("The rollback controller restores the previous release.")
    table = document.add_table(rows=2, cols=2)
    for (r, c), value in {(0, 0): "Stage", (0, 1): "Owner", (1, 0): "canary", (1, 1): "ops|team"}.items():
        table.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pptx() -> bytes:
    """A PPTX of two slides: a titled bullet slide with speaker notes, and an untitled one with a
    text box and a table."""
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Quarterly plan"
    body = first.placeholders[1].text_frame
    body.text = "Grow revenue"
    nested = body.add_paragraph()
    nested.text = "hire two engineers"
    nested.level = 1
    first.notes_slide.notes_text_frame.text = "Say the budget is approved."
    second = presentation.slides.add_slide(presentation.slide_layouts[6])
    second.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text_frame.text = "Appendix text"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    for (r, c), value in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "North", (1, 1): "12"}.items():
        table.cell(r, c).text = value
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def make_xlsx(extra_rows: int = 0, *, streamed: bool = False) -> bytes:
    """An XLSX with the sheets ``Budget`` (a header and two rows, plus ``extra_rows`` numbered
    rows) and ``Notes`` (one cell). ``streamed``: written by openpyxl's write-only mode, which
    (as streaming writers do) gives the sheets no ``<dimension>`` element."""
    import openpyxl

    workbook = openpyxl.Workbook(write_only=streamed)
    budget = workbook.create_sheet("Budget") if streamed else workbook.active
    budget.title = "Budget"
    budget.append(["Item", "Cost"])
    budget.append(["Laptops", 1200.0])
    budget.append(["Travel", 350.5])
    for i in range(extra_rows):
        budget.append([f"row{i}", i])
    notes = workbook.create_sheet("Notes")
    notes.append(["Approved by finance"])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def rewrite_zip(data: bytes, edit: Callable[[str, bytes], bytes]) -> bytes:
    """``data`` (a zip) with every member's bytes passed through ``edit(name, body)``."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info, edit(info.filename, source.read(info.filename)))
    return out.getvalue()


def with_dimension(data: bytes, ref: str) -> bytes:
    """An XLSX whose first sheet states ``<dimension ref="{ref}"/>`` whatever it holds (some
    writers state a wrong one)."""
    def edit(name: str, body: bytes) -> bytes:
        if name != "xl/worksheets/sheet1.xml":
            return body
        return re.sub(rb'<dimension ref="[^"]*"/>', f'<dimension ref="{ref}"/>'.encode(), body, count=1)

    return rewrite_zip(data, edit)


_STRICT_NAMESPACES = {
    b"http://schemas.openxmlformats.org/wordprocessingml/2006/main": b"http://purl.oclc.org/ooxml/wordprocessingml/main",
    b"http://schemas.openxmlformats.org/spreadsheetml/2006/main": b"http://purl.oclc.org/ooxml/spreadsheetml/main",
    b"http://schemas.openxmlformats.org/presentationml/2006/main": b"http://purl.oclc.org/ooxml/presentationml/main",
    b"http://schemas.openxmlformats.org/drawingml/2006/main": b"http://purl.oclc.org/ooxml/drawingml/main",
    b"http://schemas.openxmlformats.org/officeDocument/2006/relationships":
        b"http://purl.oclc.org/ooxml/officeDocument/relationships",
}
"""Transitional -> Strict namespaces (ECMA-376 Part 1, Strict conformance); the package's own
(OPC: content types, the relationships part's namespace) are the same in both."""


def make_strict(data: bytes) -> bytes:
    """An OOXML file (DOCX, PPTX, XLSX) turned into its Strict Open XML variant, as Office's
    "Strict Open XML" save writes it: every part in the Strict namespaces."""
    def edit(name: str, body: bytes) -> bytes:
        if name == "[Content_Types].xml" or not name.endswith((".xml", ".rels")):
            return body
        for transitional, strict in _STRICT_NAMESPACES.items():
            body = body.replace(transitional, strict)
        return body

    return rewrite_zip(data, edit)


def make_zip(members: dict[str, str]) -> bytes:
    """A zip of text members (name -> text)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return out.getvalue()


def make_epub() -> bytes:
    """A minimal EPUB 2 (zip: mimetype, container, OPF with a spine of one XHTML chapter)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", (
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>"))
        z.writestr("OEBPS/content.opf", (
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="id">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Field Notes</dc:title>'
            '<dc:identifier id="id">x</dc:identifier></metadata>'
            '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="c1"/></spine></package>'))
        z.writestr("OEBPS/c1.xhtml", (
            '<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Tides</h1>'
            "<p>The spring tide follows the full moon.</p></body></html>"))
    return out.getvalue()
