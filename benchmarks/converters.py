"""Document converters: throughput and the quality of hits on real documents we did not write.

    python -m benchmarks.converters [--repeat N]

Documents: the two PDF manuals Debian installs (``/usr/share/doc/libtasn1-doc/libtasn1.pdf``, 36
pages, and ``/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf``, 17 pages; read in
place, not copied: GFDL / freedesktop licences), and the MIT-licensed DOCX and PPTX files in
``benchmarks/data/documents`` (see its README). A missing PDF is skipped with a note.

Throughput: each converter's ``convert`` on every file of its format, ``--repeat`` times (best
run): pages (or slides) per second and MB per second. Quality: the documents are indexed in a
fresh home through the public API (default settings) and each query below searched (10 hits); a
hit is right when it is the expected file and its page/slide range covers the expected one (for
DOCX: its heading breadcrumb holds the expected heading). hit@1 and hit@3 over the queries, and
how often the top hit's first page (``page``) is exactly the expected one (a chunk is a section,
which may start on the page before). Small files are one chunk (``threshold``), whose anchor
covers all their slides.
Results: ``benchmarks/results/converters.json`` and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "documents"
RESULTS = ROOT / "results" / "converters.json"

PDFS = {
    "libtasn1.pdf": Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    "shared-mime-info-spec.pdf": Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
}

# (query, file, expected page/slide number or DOCX heading). Written from the documents' text,
# in other words than the passage where possible; pages are 1-based physical pages.
QUERIES: list[tuple[str, str, int | str]] = [
    ("comments start with two dashes and C-style comments are not supported", "libtasn1.pdf", 5),
    ("the REAL type and AUTOMATIC TAGS are not handled", "libtasn1.pdf", 6),
    ("asn1Parser reads one file of ASN.1 definitions and generates a C array", "libtasn1.pdf", 8),
    ("asn1Decoding builds a structure from a binary DER encoding", "libtasn1.pdf", 10),
    ("asn1_parser2tree file path of the ASN.1 declarations", "libtasn1.pdf", 11),
    ("copy a node into a destination field asn1_copy_node", "libtasn1.pdf", 14),
    ("boolean value must be the string TRUE or FALSE", "libtasn1.pdf", 15),
    ("error description like strerror", "libtasn1.pdf", 26),
    ("verbatim copying in any medium commercially", "libtasn1.pdf", 29),
    ("key words MUST SHOULD interpreted as RFC 2119", "shared-mime-info-spec.pdf", 2),
    ("glob-deleteall and magic-deleteall discard earlier definitions", "shared-mime-info-spec.pdf", 3),
    ("magic file begins with the string MIME-Magic without a version number", "shared-mime-info-spec.pdf", 9),
    ("MIME type stored in the user.mime_type extended attribute", "shared-mime-info-spec.pdf", 14),
    ("mount point is a subclass of inode/directory for mount and eject actions", "shared-mime-info-spec.pdf", 16),
    ("vertical anchor bottom unladen swallows", "tbl-cell.pptx", 1),
    ("paragraph space after 6 pt", "txt-paragraph-spacing.pptx", 2),
    ("line spacing of 1.5 lines", "txt-paragraph-spacing.pptx", 3),
    ("python-docx was here too", "test.docx", "python-docx was here!"),
]

_RANGE = re.compile(r"(?:page|slide)s? (\d+)(?:-(\d+))?")


def _covers(anchor: str | None, number: int) -> bool:
    match = _RANGE.fullmatch(anchor or "")
    if match is None:
        return False
    low = int(match.group(1))
    high = int(match.group(2) or low)
    return low <= number <= high


def _documents() -> tuple[dict[str, Path], list[str]]:
    found: dict[str, Path] = {}
    notes = []
    for name, path in PDFS.items():
        if path.is_file():
            found[name] = path
        else:
            notes.append(f"{path} not found: its queries are skipped")
    for path in sorted(DATA.iterdir()):
        if path.suffix in (".docx", ".pptx", ".xlsx", ".pdf"):
            found[path.name] = path
    return found, notes


def throughput(documents: dict[str, Path], repeat: int) -> list[dict[str, object]]:
    from hermes_workspace.container import make_converter
    from hermes_workspace.domain.conversion import DEFAULT_CONVERTERS

    rows = []
    for suffix, name in DEFAULT_CONVERTERS.items():
        files = [p for p in documents.values() if p.suffix == suffix]
        if not files:
            continue
        converter = make_converter(name)
        data = [(p, p.read_bytes()) for p in files]
        best = float("inf")
        units = 0
        for _ in range(repeat):
            started = time.perf_counter()
            units = 0
            for path, raw in data:
                document = converter.convert(raw, path)
                units += max(1, len(document.anchors))
            best = min(best, time.perf_counter() - started)
        size = sum(len(raw) for _, raw in data)
        rows.append({
            "converter": name, "files": len(files), "units": units, "bytes": size, "seconds": round(best, 4),
            "units_per_s": round(units / best, 1), "mb_per_s": round(size / best / 1e6, 2),
        })
    return rows


def quality(documents: dict[str, Path]) -> dict[str, object]:
    from hermes_workspace import Workspace

    work = Path(tempfile.mkdtemp(prefix="hermes-bench-converters-"))
    try:
        home = work / "home"
        docs = home / "workspace" / "docs"
        docs.mkdir(parents=True)
        for name, path in documents.items():
            shutil.copyfile(path, docs / name)
        per_query = []
        with Workspace.open(home) as ws:
            started = time.perf_counter()
            summary = ws.index()
            index_seconds = time.perf_counter() - started
            for query, name, expected in QUERIES:
                if name not in documents:
                    continue
                hits = ws.search(query, limit=10)
                rank = None
                for position, hit in enumerate(hits, start=1):
                    if hit.path.name != name:
                        continue
                    right = (_covers(hit.anchor, expected) if isinstance(expected, int)
                             else expected in (hit.breadcrumb or ""))
                    if right:
                        rank = position
                        break
                top = hits[0] if hits else None
                exact = (top is not None and top.path.name == name and isinstance(expected, int)
                         and top.page == expected)
                per_query.append({
                    "query": query, "file": name, "expected": expected, "rank": rank, "first_page_exact": exact,
                    "top": None if top is None else f"{top.path.name} {top.anchor or top.breadcrumb or ''}".strip(),
                })
        n = len(per_query)
        return {
            "queries": n,
            "hit_at_1": round(sum(1 for q in per_query if q["rank"] == 1) / n, 3) if n else None,
            "hit_at_3": round(sum(1 for q in per_query if q["rank"] and q["rank"] <= 3) / n, 3) if n else None,
            "paged_queries": sum(1 for q in per_query if isinstance(q["expected"], int)),
            "first_page_exact_at_1": sum(1 for q in per_query if q["first_page_exact"]),
            "index_seconds": round(index_seconds, 2),
            "files_indexed": summary.files_indexed,
            "files_errored": summary.files_errored,
            "per_query": per_query,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    documents, notes = _documents()
    speed = throughput(documents, args.repeat)
    scores = quality(documents)
    result = {"date": time.strftime("%Y-%m-%d"), "documents": sorted(documents), "notes": notes,
              "throughput": speed, "quality": scores}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("| converter | files | pages/slides | MB | best s | pages/s | MB/s |")
    print("|---|---|---|---|---|---|---|")
    for row in speed:
        print(f"| {row['converter']} | {row['files']} | {row['units']} | {int(row['bytes']) / 1e6:.2f} | "
              f"{row['seconds']} | {row['units_per_s']} | {row['mb_per_s']} |")
    print(f"\nquality: {scores['queries']} queries, hit@1 {scores['hit_at_1']}, hit@3 {scores['hit_at_3']}; "
          f"top hit's first page exactly the expected one: {scores['first_page_exact_at_1']}/{scores['paged_queries']} "
          f"(index {scores['index_seconds']} s, {scores['files_indexed']} files, {scores['files_errored']} errors)")
    for q in scores["per_query"]:  # type: ignore[union-attr]
        print(f"  rank {q['rank']!s:>4}  {q['file']} {q['expected']!s:<24} top: {q['top']}  <- {q['query']}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
