"""Line numbers as editors, ``sed -n`` and read_file tools count them (DESIGN.md §5).

A line ends at ``\\n`` and nowhere else: ``\\r\\n`` is one break (the ``\\r`` stays on its line),
while form feed, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029`` are ordinary characters.
``str.splitlines()`` splits on all of those, which is why it is not used here.
"""

from __future__ import annotations

from bisect import bisect_left


class LineIndex:
    """Maps character offsets of one text to 1-based line numbers in O(log lines).

    Build once per file: ``LineIndex(text)`` records the offset of every ``\\n``.
    """

    __slots__ = ("_newlines", "_length")

    def __init__(self, text: str) -> None:
        newlines: list[int] = []
        find = text.find
        pos = find("\n")
        while pos != -1:
            newlines.append(pos)
            pos = find("\n", pos + 1)
        self._newlines = newlines
        self._length = len(text)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding the character at ``offset`` (0 <= offset <= len(text)); a
        ``\\n`` belongs to the line it ends."""
        return bisect_left(self._newlines, offset) + 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """``(line_start, line_end)``, 1-based and inclusive, of ``text[start:end]``
        (``start < end``): the lines of its first and last characters."""
        return self.line_of(start), self.line_of(max(start, end - 1))

    def line_start_offset(self, line: int) -> int:
        """Offset of the first character of 1-based ``line``."""
        return 0 if line <= 1 else self._newlines[line - 2] + 1

    def start_of_line_containing(self, offset: int) -> int:
        """Offset of the first character of the line that holds ``offset``."""
        return self.line_start_offset(self.line_of(offset))

    @property
    def line_count(self) -> int:
        """Lines in the text: a final ``\\n`` ends the last line rather than starting a new one,
        so a 142-line file that ends in ``\\n`` has 142 lines; an empty text has 0."""
        if self._length == 0:
            return 0
        ends_with_newline = bool(self._newlines) and self._newlines[-1] == self._length - 1
        return len(self._newlines) + (0 if ends_with_newline else 1)
