"""Handles and cursors: stable names for the hits of a persisted result set.

A result set is one search (or one ``retrieve``) frozen in the index file under a random id of 8
lowercase hex characters (``5e0c17aa`` is the shape; ids are random, so a set made after an index
was rebuilt never takes the name of an older one). A *handle* names one hit of a set,
``SET:ORDINAL`` with a 1-based ordinal in rank order (``5e0c17aa:3``); a *cursor* names the
position where the next page starts, ``SET@OFFSET`` with a 0-based offset (``5e0c17aa@20``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_workspace.domain.errors import UsageError

SET_ID_PATTERN = re.compile(r"[0-9a-f]{8}")
_HANDLE = re.compile(r"([0-9a-f]{8}):([1-9][0-9]{0,6})")
_CURSOR = re.compile(r"([0-9a-f]{8})@([0-9]{1,7})")
_HANDLE_SHAPE = re.compile(r"([0-9a-fA-F]{8}):([0-9]+)(-[0-9]+)?")
"""What a reader means as a handle, right or wrong: 8 hex digits of either case, ``:``, a number
(``0`` included) and perhaps a range (``SET:1-3``). ``read`` takes such a target as a handle, so
that a mistake gets the handle's hint instead of "not an indexed file" or "line range 0-0"."""

HANDLE_HINT = (
    "A handle is a result set id (8 lowercase hex characters) and one hit number counted from 1, like "
    "5e0c17aa:3, as printed with each hit; read the hits of a range one by one."
)


@dataclass(frozen=True, slots=True)
class Handle:
    """One hit of a result set: ``set_id`` (8 hex characters) and its 1-based ``ordinal``."""

    set_id: str
    ordinal: int

    def __str__(self) -> str:
        return f"{self.set_id}:{self.ordinal}"


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the next page of a result set starts: ``set_id`` and a 0-based ``offset``."""

    set_id: str
    offset: int

    def __str__(self) -> str:
        return f"{self.set_id}@{self.offset}"


def looks_like_handle(text: str) -> bool:
    """True when ``text`` is meant as a handle, so that ``read`` can tell a handle from a
    ``PATH:START-END`` locator: a valid ``SET:ORDINAL``, or one of its usual mistakes (an
    upper-case id, hit ``0``, a range ``SET:1-3``), which :func:`parse_handle` then explains."""
    return _HANDLE_SHAPE.fullmatch(text.strip()) is not None


def parse_handle(text: str) -> Handle:
    """The :class:`Handle` written as ``SET:ORDINAL``.

    Raises:
        UsageError: ``text`` is not of that shape; the message names the mistake (hit 0, a range,
            an upper-case id) when it has the shape of one, and the hint gives the shape
            (:data:`HANDLE_HINT`).
    """
    stripped = text.strip()
    match = _HANDLE.fullmatch(stripped)
    if match is not None:
        return Handle(match[1], int(match[2]))
    shape = _HANDLE_SHAPE.fullmatch(stripped)
    why = ""
    if shape is not None:
        if shape[3]:
            why = ": a handle names one hit, not a range"
        elif not shape[2].strip("0"):  # zero; not int(): Python refuses to read 4,300+ digits
            why = ": hits are numbered from 1"
        elif shape[1] != shape[1].lower():
            why = ": result set ids are lowercase"
        elif shape[2].startswith("0"):
            why = ": write the hit number without leading zeros"
        else:
            why = ": the hit number is too large"
    raise UsageError(f"not a handle: {text!r:.80}{why}", hint=HANDLE_HINT)


def parse_cursor(text: str) -> Cursor:
    """The :class:`Cursor` written as ``SET@OFFSET``.

    Raises:
        UsageError: ``text`` is not of that shape.
    """
    match = _CURSOR.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"not a cursor: {text!r:.80}",
            hint="A cursor is a result set id and an offset, like 5e0c17aa@20, as printed as `cursor` in a response.",
        )
    return Cursor(match[1], int(match[2]))


def removed_note(count: int) -> str:
    """The note of a page (``more``) that left out ``count`` hits of its frozen set because their
    files are no longer in the index (``delete``): their content is not served any more."""
    return (
        f"{count} hit(s) of this page left out: their files were removed from the index "
        "(`roots add` for their folder, or a change to a file, brings it back at the next `index`)"
    )
