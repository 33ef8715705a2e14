"""Handles and cursors: stable names for the hits of a persisted result set.

A result set is one search (or one ``retrieve``) frozen in the index file under a random id of 8
lowercase hex characters (``k3f9q2ab`` is the shape; ids are random, so a set made after an index
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
    """True when ``text`` has the shape of a handle (``SET:ORDINAL``), so that ``read`` can tell
    a handle from a ``PATH:START-END`` locator."""
    return _HANDLE.fullmatch(text.strip()) is not None


def parse_handle(text: str) -> Handle:
    """The :class:`Handle` written as ``SET:ORDINAL``.

    Raises:
        UsageError: ``text`` is not of that shape.
    """
    match = _HANDLE.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"not a handle: {text!r:.80}",
            hint="A handle is a result set id and a hit number, like 5e0c17aa:3, as printed with each hit.",
        )
    return Handle(match[1], int(match[2]))


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
