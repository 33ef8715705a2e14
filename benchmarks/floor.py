"""The raw floor that indexing is compared with: the same files, read and inserted whole (no
chunking, no hashing, no per-file transactions) into one FTS5 table with the same tokenizer, in one
transaction, by a process of its own.

    python -m benchmarks.floor LIST_FILE DB_FILE TOKENIZER [per-file]

``LIST_FILE`` holds one absolute path a line. ``per-file`` is a diagnostic variant: one
transaction per file in WAL mode with ``synchronous=NORMAL``, as the index store commits. Prints ``{"files": n, "bytes": m}``. Text is decoded
as UTF-8 with replacement (the floor does not detect charsets). The table stores its content (a
regular FTS5 table), as the index stores each chunk's text once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import apsw


def build(paths: list[str], db: Path, tokenizer: str, per_file: bool = False) -> dict[str, int]:
    conn = apsw.Connection(str(db))
    if per_file:
        conn.pragma("journal_mode", "wal")
        conn.pragma("synchronous", "NORMAL")
    conn.execute(f"CREATE VIRTUAL TABLE docs USING fts5(path, content, tokenize='{tokenizer.replace(chr(39), chr(39) * 2)}')")
    total = 0
    if not per_file:
        conn.execute("BEGIN")
    for path in paths:
        data = Path(path).read_bytes()
        total += len(data)
        if per_file:
            conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO docs (path, content) VALUES (?, ?)", (path, data.decode("utf-8", "replace")))
        if per_file:
            conn.execute("COMMIT")
    if not per_file:
        conn.execute("COMMIT")
    conn.close()
    return {"files": len(paths), "bytes": total}


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "per-file"):
        print(__doc__, file=sys.stderr)
        return 2
    list_file, db, tokenizer = argv[:3]
    paths = [p for p in Path(list_file).read_text(encoding="utf-8").split("\n") if p]
    print(json.dumps(build(paths, Path(db), tokenizer, per_file=len(argv) == 4)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
