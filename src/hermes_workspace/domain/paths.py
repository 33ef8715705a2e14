"""File names that are not valid UTF-8, in storage and in JSON.

On POSIX a file name is bytes. Python hands names that are not valid UTF-8 over as ``str`` with
each undecodable byte ``0xNN`` turned into the lone surrogate ``U+DCNN`` (PEP 383,
"surrogateescape"); ``os.fsencode`` gives the bytes back. Such a ``str`` is the project's one
in-memory form of a path, but it cannot be written where text must be valid Unicode: SQLite TEXT
(UTF-8) and a JSON document read as UTF-8. So:

- in the index, each ``U+DCNN`` (``NN`` in ``80..FF``) is stored as ``U+10FFNN``, the last 128
  code points of Supplementary Private Use Area-B, which file names do not use in practice; a
  name that does use them is refused (:func:`to_storage` raises), so the mapping stays one to one
  and a stored path always gives back the real bytes;
- in JSON, the lone surrogate is written as the escape ``\\udcNN``: valid JSON text that a Python
  reader turns back into the same ``str`` (``json.loads``), and ``os.fsencode`` into the bytes.

Standard library only.
"""

from __future__ import annotations

import json

import re

_ESCAPED = re.compile("[\udc80-\udcff]")
_STORED = re.compile("[\U0010ff80-\U0010ffff]")
_OFFSET = 0x10FF80 - 0xDC80


def to_storage(text: str) -> str:
    """``text`` (a path or file name) in the form stored in the index: valid Unicode.

    Raises:
        ValueError: ``text`` holds one of U+10FF80..U+10FFFF, reserved for the mapping.
    """
    if _STORED.search(text):
        raise ValueError("the name holds a character of U+10FF80..U+10FFFF, which the index reserves")
    if not _ESCAPED.search(text):
        return text
    return _ESCAPED.sub(lambda m: chr(ord(m.group()) + _OFFSET), text)


def from_storage(text: str) -> str:
    """The in-memory form of a path read from the index (the inverse of :func:`to_storage`)."""
    if not _STORED.search(text):
        return text
    return _STORED.sub(lambda m: chr(ord(m.group()) - _OFFSET), text)


def escape_json_surrogates(document: str) -> str:
    """A JSON document made by ``json.dumps(..., ensure_ascii=False)`` with every lone surrogate
    ``U+DCNN`` written as the escape ``\\udcNN``, so that the document is valid UTF-8. Lone
    surrogates can only occur inside JSON strings, where the escape means the same character."""
    if not _ESCAPED.search(document):
        return document
    return _ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


def json_text(data: object, *, spaced: bool = False) -> str:
    """``data`` as the JSON text responses are printed and counted in: compact (no space after
    ``,`` and ``:``; with ``spaced``, one space after each, as Python's ``json.dumps`` defaults
    write it), non-ASCII characters as they are, lone surrogates escaped
    (:func:`escape_json_surrogates`: valid UTF-8)."""
    separators = (", ", ": ") if spaced else (",", ":")
    return escape_json_surrogates(json.dumps(data, ensure_ascii=False, separators=separators))


def display_name(text: str) -> str:
    """``text`` for a terminal: each undecodable byte shown as ``\\xNN`` (never a raw byte)."""
    if not _ESCAPED.search(text):
        return text
    return _ESCAPED.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)
