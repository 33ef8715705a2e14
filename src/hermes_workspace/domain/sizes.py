"""Human-readable byte sizes in config and on the command line (``knowledgebase.storage``, a
root's ``max_file_size``): :func:`parse_size` reads them, :func:`format_size` shows them to people
and :func:`size_setting` writes them back into config.

Units are binary: ``KB`` = ``KiB`` = 1024 bytes, ``MB`` = ``MiB`` = 1024**2, ``GB`` = ``GiB`` =
1024**3, ``TB`` = ``TiB`` = 1024**4, ``PB`` = ``PiB`` = 1024**5 (the largest size accepted). This
follows seed 002 (``parseSize('2GB')`` returns 2147483648) and ``knowledgebase.indexing.max_file_mb``, which is in mebibytes; it is also what
``du -h`` and ``df -h`` print, so a size copied from them means what it says. Both spellings are
accepted so that nobody has to guess which one this file wants.
"""

from __future__ import annotations

import math
import re

from hermes_workspace.domain.errors import ConfigError, WorkspaceError

UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "k": 1024, "kb": 1024, "kib": 1024,
    "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
    "g": 1024**3, "gb": 1024**3, "gib": 1024**3,
    "t": 1024**4, "tb": 1024**4, "tib": 1024**4,
    "p": 1024**5, "pb": 1024**5, "pib": 1024**5,
}
"""Unit (lower case, as written after the number) -> bytes."""

MAX_SIZE_BYTES = 1024**5
"""Largest size accepted (a pebibyte): beyond it a value is a typo, not a disk."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([A-Za-z]*)\s*$")

_HINT = "Write a whole number of bytes or a number with a unit: 500MB, 2GB, 1.5 GiB (binary units: 1 GB = 1024 MB); 0 turns the limit off."


def parse_size(value: object, name: str, error: type[WorkspaceError] = ConfigError) -> int:
    """Bytes meant by ``value``: an int (bytes), or a string of a number and an optional unit
    of :data:`UNITS`, case-insensitive, a space allowed between them (``"500MB"``, ``"2 GiB"``,
    ``"1.5gb"``, ``"1048576"``). Fractions are rounded down to whole bytes. ``name`` is the
    config key or option, for the message.

    Raises:
        ConfigError (or ``error``, e.g. ``UsageError`` for a command-line option): ``value`` is a bool, a float, negative, not a number with a known unit, or
            larger than :data:`MAX_SIZE_BYTES`; the hint shows the accepted forms.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise error(f"{name} must be a size such as 2GB or a number of bytes, got {value!r}", hint=_HINT)
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(value)
        unit = match.group(2).lower() if match else None
        if match is not None and unit not in UNITS:
            raise error(f"{name} has an unknown size unit {match.group(2)!r} in {value!r}", hint=_HINT)
        if match is None:
            raise error(f"{name} must be a size such as 2GB or a number of bytes, got {value!r}", hint=_HINT)
        number = float(match.group(1))
        if not math.isfinite(number) or number * UNITS[unit] > MAX_SIZE_BYTES:
            size = MAX_SIZE_BYTES + 1
        else:
            size = int(number * UNITS[unit])
    if size < 0:
        raise error(f"{name} must be 0 or more, got {value!r}", hint=_HINT)
    if size > MAX_SIZE_BYTES:
        raise error(f"{name} must be at most 1 PiB, got {value!r}", hint=_HINT)
    return size


def format_size(size: int) -> str:
    """``size`` bytes in the largest binary unit that keeps it >= 1, one decimal where it is not
    whole: ``2 GiB``, ``1.5 MiB``, ``512 B``."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            value = size / factor
            text = f"{value:.1f}".removesuffix(".0")
            return f"{text} {unit}"
    return f"{size} B"


def size_setting(size: int) -> str:
    """``size`` bytes as written into config: the largest unit that divides it exactly
    (``1048576`` -> ``"1MB"``, ``1536`` -> ``"1536B"``), so that nothing is rounded and
    ``parse_size(size_setting(n), key) == n`` for every ``n >= 0``."""
    for unit, factor in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"
