"""Human-readable byte sizes in config and on the command line (``1MB``, ``512 KiB``, ``2000``).

Units are binary, as ``knowledgebase.indexing.max_file_mb`` (mebibytes) already is: ``KB`` and
``KiB`` are 1024 bytes, ``MB``/``MiB`` 1024**2, ``GB``/``GiB`` 1024**3, ``TB``/``TiB`` 1024**4.
``B`` or no unit is bytes. Standard library only.
"""

from __future__ import annotations

import math
import re

SIZE_UNITS: dict[str, int] = {
    "": 1, "b": 1,
    "k": 1024, "kb": 1024, "kib": 1024,
    "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
    "g": 1024**3, "gb": 1024**3, "gib": 1024**3,
    "t": 1024**4, "tb": 1024**4, "tib": 1024**4,
}
"""Unit (lower-cased) -> bytes. Binary multiples for both spellings: a size cap is compared with
``os.stat`` sizes, and the project's other size setting (``max_file_mb``) counts mebibytes."""

MAX_SIZE_BYTES = 1024**5
"""The largest size accepted (a pebibyte): larger values are typos, and overflow SQLite integers
once multiplied."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]*)\s*$")


def parse_size(value: object) -> int:
    """``value`` as a whole number of bytes: an ``int`` (bytes) or a string ``<number>[ ]<unit>``
    (``"1MB"``, ``"1.5 mb"``, ``"512KiB"``, ``"2000"``; units of :data:`SIZE_UNITS`, any case).
    Fractions of a byte are rounded down.

    Raises:
        ValueError: ``value`` is a bool, a float, negative, not a size string, has an unknown
            unit, or exceeds :data:`MAX_SIZE_BYTES`; the message says which and shows the form.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"a size must be a whole number of bytes or a string such as '1MB', got {value!r}")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(value)
        if match is None:
            raise ValueError(f"{value!r} is not a size; write a number with an optional unit, such as 500KB or 1MB")
        number, unit = match.groups()
        factor = SIZE_UNITS.get(unit.lower())
        if factor is None:
            raise ValueError(
                f"unknown size unit {unit!r} in {value!r}; use B, KB, MB, GB or TB (binary: 1KB = 1024 bytes)"
            )
        size = math.floor(float(number) * factor)
    if size < 0:
        raise ValueError(f"a size cannot be negative, got {value!r}")
    if size > MAX_SIZE_BYTES:
        raise ValueError(f"{value!r} is larger than the largest size accepted (1024TB)")
    return size


def format_size(size: int) -> str:
    """``size`` bytes in the largest unit of :data:`SIZE_UNITS` that divides it exactly
    (``1048576`` -> ``"1MB"``, ``1536`` -> ``"1536B"``), so that ``parse_size(format_size(n)) == n``
    for every ``n >= 0``."""
    for unit, factor in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"
