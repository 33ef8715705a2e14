"""Use cases: freshness marks on hits, and verified reads of indexed line ranges.

Both compare the file on disk with the bytes that were indexed, by their SHA-256 digest (the
``content_hash`` indexing records: ``hashlib.sha256`` of the raw bytes, see
:func:`hermes_workspace.application.file_processing.process_file`). Peers serve edited and deleted files
silently (qmd#961), and a stale line range applied to a fresh read returns the wrong region
(codegraph#1474); here a hit says whether its file changed, and ``read`` returns text only when
it is the indexed text.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.application.conversion import Conversions
from hermes_workspace.domain.config import DEFAULT_READ_MAX_TOKENS
from hermes_workspace.domain.errors import HandleNotFoundError, NotIndexedError, UsageError, WorkspaceError
from hermes_workspace.domain.handles import looks_like_handle, parse_handle
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import Chunk, FileRecord, SearchHit, SourceFile, content_hash
from hermes_workspace.domain.packing import checked_budget, largest_that_fits
from hermes_workspace.domain.paths import json_text
from hermes_workspace.domain.ports import Decoder, FileSource, IndexStore, ResultSetStore, TokenCounter

ReadStatus = Literal["verified", "moved", "stale", "deleted"]
"""What ``read`` found: ``verified`` (the lines hold the indexed text), ``moved`` (the file changed
and the indexed text is now, once, at other lines), ``stale`` (the file changed and the indexed
text cannot be found exactly once: no text is returned), ``deleted`` (the file is gone)."""


def _read_file(source: FileSource, path: Path) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), read through ``source``,
    which checks on the open descriptor that it is the file just looked at (never a FIFO).

    Raises:
        OSError: missing (``FileNotFoundError``, ``NotADirectoryError``), unreadable, or not a
            regular file.
    """
    found = os.stat(path)
    if not stat.S_ISREG(found.st_mode):
        raise IsADirectoryError(f"not a regular file: {path}")
    file = SourceFile(path, path.parent, found.st_size, found.st_mtime_ns, (found.st_dev, found.st_ino))
    return source.read_bytes(file)


_MISSING = (FileNotFoundError, NotADirectoryError)


@dataclass
class FreshnessMarker:
    """Marks hits with ``file_hash`` and ``stale`` (:class:`SearchHit`, "Verification").

    ``file_hash``: kept when the hit has one (a frozen hit keeps the digest of the version its
    content came from), else the indexed file's ``content_hash`` (one ``store.get_file`` per
    path). ``stale``: the file on disk is no longer those bytes. A file whose size and
    ``mtime_ns`` equal the index record's (and whose record has that digest) is fresh without
    being read, as ``index`` decides; otherwise it is read once and hashed. A missing or
    unreadable file, or a hit whose file is no longer indexed, is stale.
    """

    store: IndexStore
    source: FileSource

    def mark(self, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """``hits`` with ``file_hash`` and ``stale`` set, in the same order. Each path is looked
        up, stat-ed and (when needed) read at most once per call.

        Raises:
            StoreError: the index database failed.
        """
        records: dict[Path, FileRecord | None] = {}
        digests: dict[Path, str | None] = {}
        marked: list[SearchHit] = []
        for hit in hits:
            if hit.path not in records:
                records[hit.path] = self.store.get_file(hit.path)
            record = records[hit.path]
            expected = hit.file_hash or (record.content_hash if record is not None else None)
            if expected is None:
                marked.append(replace(hit, stale=True))
                continue
            if record is not None and record.content_hash == expected and _unchanged(hit.path, record):
                marked.append(replace(hit, file_hash=expected, stale=False))
                continue
            if hit.path not in digests:
                digests[hit.path] = self._digest(hit.path)
            marked.append(replace(hit, file_hash=expected, stale=digests[hit.path] != expected))
        return marked

    def not_indexed(self, hits: Sequence[SearchHit]) -> set[Path]:
        """The files of ``hits`` the index no longer holds (removed with ``delete``, or pruned by
        ``index`` because they were gone or left out): their hits must not be served any more
        from a frozen result set. One ``store.get_file`` per distinct path.

        Raises:
            StoreError: the index database failed.
        """
        return {path for path in {hit.path for hit in hits} if self.store.get_file(path) is None}

    def _digest(self, path: Path) -> str | None:
        try:
            return content_hash(_read_file(self.source, path))
        except OSError:
            return None


def _unchanged(path: Path, record: FileRecord) -> bool:
    """True when ``path`` has the size and modification time (ns) the index recorded."""
    try:
        found = os.stat(path)
    except OSError:
        return False
    return record.same_stat(found.st_size, found.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What ``read`` returns (:data:`ReadStatus`).

    ``path``: the absolute file; ``line_start``/``line_end``: 1-based, inclusive, where the text
    is now (``verified``, ``moved``) or was when indexed (``stale``, ``deleted``); ``text``: the
    characters of those lines of the file on disk (without the ``\\n`` ending the last one), or
    ``None`` unless verified or moved; ``moved_from``: the indexed ``(line_start, line_end)`` when
    moved; ``file_hash``: SHA-256 of the indexed bytes compared with the disk; ``handle``: the
    handle read, ``None`` for a locator; ``message``: one sentence on what was found.

    Cut to a token budget (:func:`fit_read`): ``full_line_end`` is the last line of the whole
    text (``line_end`` the last line returned), ``next`` the locator of the lines not returned
    (``PATH:A-B`` in the indexed numbering, so that ``read`` verifies them as it did these; None
    when none are left), and, when not even the first line fit, ``line_chars_returned`` of its
    ``line_chars_total`` characters were returned, from character ``line_chars_from`` (0-based;
    ``line_end == line_start``)."""

    status: ReadStatus
    path: Path
    line_start: int
    line_end: int
    text: str | None
    file_hash: str | None
    message: str
    moved_from: tuple[int, int] | None = None
    handle: str | None = None
    full_line_end: int | None = None
    next: str | None = None
    line_chars_returned: int | None = None
    line_chars_total: int | None = None
    line_chars_from: int | None = None

    @property
    def truncated(self) -> bool:
        """True when the text was cut to fit a token budget."""
        return self.full_line_end is not None

    def to_json(self) -> dict[str, Any]:
        """``{"status", "path", "line_start", "line_end", "text", "moved_from": {"line_start",
        "line_end"} | null, "file_hash", "handle", "message"}``; when cut to a budget also
        ``"truncated": true, "full_line_end", "next"`` and, for a cut line, ``"line_chars_from",
        "line_chars_returned", "line_chars_total"``."""
        data: dict[str, Any] = {
            "status": self.status,
            "path": str(self.path),
            "line_start": self.line_start,
            "line_end": self.line_end,
            "text": self.text,
            "moved_from": (
                {"line_start": self.moved_from[0], "line_end": self.moved_from[1]} if self.moved_from else None
            ),
            "file_hash": self.file_hash,
            "handle": self.handle,
            "message": self.message,
        }
        if self.full_line_end is not None:
            data["truncated"] = True
            data["full_line_end"] = self.full_line_end
            data["next"] = self.next
            if self.line_chars_returned is not None:
                data["line_chars_from"] = self.line_chars_from
                data["line_chars_returned"] = self.line_chars_returned
                data["line_chars_total"] = self.line_chars_total
        return data

    def serialize(self, *, spaced: bool = False) -> str:
        """The response as the CLI prints it and the MCP server returns it: compact JSON, non-ASCII
        as is, lone surrogates of undecodable file names escaped (valid UTF-8). ``spaced``: with
        a space after ``,`` and ``:``, as a client re-serializing the structured content with
        Python's defaults shows it; a read budget holds for both forms."""
        return json_text(self.to_json(), spaced=spaced)


def fit_read(
    result: ReadResult, counter: TokenCounter, budget: int, *, default: int = DEFAULT_READ_MAX_TOKENS, focus: int = 0
) -> ReadResult:
    """``result`` cut so that its serialized response (:meth:`ReadResult.serialize`, compact and
    spaced) has at most ``budget`` tokens of ``counter``; ``result`` itself when it fits.

    The leading whole lines that fit are kept (:func:`largest_that_fits` over the line count);
    when not even the first line fits (minified code), the first line is cut at a character
    boundary that does not separate a base character from the combining marks, joiners and
    variation selectors after it (:func:`_char_boundary`), starting at character ``focus`` of
    that line (where a hit's text starts inside a long line: the hit's own text is returned, not
    the start of the line). ``line_end`` becomes the last line
    returned, ``full_line_end`` the whole text's, ``next`` names the rest (see
    :class:`ReadResult`), and ``message`` says what was cut. The status is unchanged.

    Raises:
        UsageError: ``budget`` is below the smallest response: the one without text (stale,
            deleted), else the one holding the first character (or the first line, when it is
            empty); the hint gives that minimum. ``default`` is named in the hint.
    """

    def tokens(candidate: ReadResult) -> int:
        return max(counter.count(candidate.serialize()), counter.count(candidate.serialize(spaced=True)))

    def fits(candidate: ReadResult) -> bool:
        return tokens(candidate) <= budget

    if fits(result):
        return result
    text = result.text
    lines = text.split("\n") if text is not None else []
    first, count = result.line_start, len(lines)
    base = result.moved_from[0] if result.moved_from is not None else first  # numbering of the index

    def rest(kept: int) -> str | None:
        return f"{result.path}:{base + kept}-{base + count - 1}" if kept < count else None

    def by_lines(kept: int) -> ReadResult:
        following = rest(kept)
        return replace(
            result, line_end=first + kept - 1, text="\n".join(lines[:kept]), full_line_end=result.line_end,
            next=following,
            message=f"{result.message}; cut to lines {first}-{first + kept - 1} of {first}-{result.line_end} to fit in "
            f"{budget} tokens" + (f": read {following} for the rest" if following else ""),
        )

    start = focus if lines and 0 <= focus < len(lines[0]) else 0
    line = lines[0][start:] if lines else ""

    def by_chars(chars: int) -> ReadResult:
        following = rest(1)
        after = f"; read {following} for the lines after it" if following else ""
        which = f"its first {chars}" if start == 0 else f"{chars} (from character {start}, where the hit starts)"
        return replace(
            result, line_end=first, text=line[:chars], full_line_end=result.line_end, next=following,
            line_chars_from=start, line_chars_returned=chars, line_chars_total=len(lines[0]),
            message=f"{result.message}; line {first} cut to {which} of its {len(lines[0])} characters to fit "
            f"in {budget} tokens{after}; a larger budget shows more of it",
        )

    if not lines:
        smallest = result
    elif len(lines[0]) <= 1:
        smallest = by_lines(1)
    else:
        smallest = by_chars(_char_boundary(line, 1) if len(line) > 1 else len(line))
    minimum = tokens(smallest)
    if minimum > budget:
        raise UsageError(
            f"a read budget of {budget} tokens cannot hold even the smallest response for {result.path}",
            hint=f"Give a budget of at least {minimum} tokens (the default is {default}, "
            "knowledgebase.injection.read_max_tokens).",
        )
    kept = largest_that_fits(1, count - 1, lambda k: fits(by_lines(k)))
    if kept is not None:
        return by_lines(kept)
    if len(lines[0]) <= 1 or fits(by_lines(1)):
        return by_lines(1)
    if len(line) > 1 and fits(by_chars(len(line))):  # the hit's end of the line fits whole
        return by_chars(len(line))
    chars = largest_that_fits(1, len(line) - 1, lambda c: fits(by_chars(_char_boundary(line, c))))
    return by_chars(_char_boundary(line, chars or 1) if len(line) > 1 else len(line))


_JOINERS = frozenset("\u200c\u200d\u034f")


def _char_boundary(line: str, chars: int) -> int:
    """``chars`` moved back (never below 1) to where a cut keeps each base character with the
    combining marks (categories Mn, Mc, Me), variation selectors and joiners that follow it, and
    with the character a joiner (ZWJ, ZWNJ) links it to. Python strings hold code points, so a
    cut never splits a surrogate pair; a lone surrogate (an undecodable byte) is a character of
    its own."""
    while chars > 1 and (_attached(line[chars]) or line[chars - 1] in _JOINERS):
        chars -= 1
    return chars


def _attached(char: str) -> bool:
    """True for a character that belongs to the one before it."""
    if char in _JOINERS or "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef":
        return True
    return unicodedata.category(char) in ("Mn", "Mc", "Me")


_LOCATOR = re.compile(r"(?P<path>.+):(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?")

LOCATOR_HINT = (
    "Give a handle printed with a hit (5e0c17aa:3), or an indexed file and 1-based lines: "
    "/abs/path/file.py:12-30 or /abs/path/file.py:12."
)


_MAX_LINE_DIGITS = 100
"""Longest line number :func:`parse_locator` reads: shorter ones are compared with the file's
line count (the error names it); longer ones cannot be a line of any file, and Python refuses to
read an int of over 4,300 digits (ValueError)."""


def parse_locator(target: str) -> tuple[str, int, int]:
    """``(path, line_start, line_end)`` of ``PATH:START-END`` or ``PATH:LINE`` (the last ``:``
    separates the lines, so a path may hold ``:``).

    Raises:
        UsageError: another shape, a line below 1, ``START > END``, or a line number of more than
            :data:`_MAX_LINE_DIGITS` digits.
    """
    match = _LOCATOR.fullmatch(target.strip())
    if match is None:
        raise UsageError(f"not a handle or a locator: {target!r:.120}", hint=LOCATOR_HINT)
    if max(len(match["start"]), len(match["end"] or "")) > _MAX_LINE_DIGITS:
        raise UsageError(f"the line numbers of {target!r:.120} are too large for any file", hint=LOCATOR_HINT)
    start = int(match["start"])
    end = int(match["end"]) if match["end"] is not None else start
    if start < 1 or end < start:
        raise UsageError(
            f"line range {start}-{end} is not valid: lines are 1-based and the first comes before the last",
            hint=LOCATOR_HINT,
        )
    return match["path"], start, end


def line_text(text: str, lines: LineIndex, start: int, end: int) -> str:
    """Lines ``start``..``end`` (1-based, inclusive, within ``lines.line_count``) of ``text``,
    without the ``\\n`` that ends the last one (a ``\\r`` before it stays, as lines are counted
    by ``\\n`` only: :mod:`hermes_workspace.domain.lines`)."""
    begin = lines.line_start_offset(start)
    if end < lines.line_count:
        stop = lines.line_start_offset(end + 1) - 1  # the "\n" ending line `end`
    else:
        stop = len(text) - 1 if text.endswith("\n") else len(text)
    return text[begin:stop]


def indexed_lines(chunks: Sequence[Chunk], start: int, end: int) -> str | None:
    """The indexed text of lines ``start``..``end``, rebuilt from a file's stored ``chunks``, or
    ``None`` when some of those lines lie outside the chunks' text (blank lines between chunks,
    whose exact whitespace was not stored).

    Overlapping and adjacent chunks (same offsets into the indexed text) are joined into runs,
    and so is a chunk that starts on the line after a run ends when exactly one character lies
    between them (that character is the ``\n``; a longer gap holds whitespace that was not
    stored: trailing spaces, a ``\r``). The lines must lie inside one run. Chunks start at line
    starts (domain/chunking.py, rule 1), so a run's first line is whole; its last line ends where
    the chunk's text ends (trailing whitespace was trimmed at indexing).
    """
    runs: list[tuple[int, int, str]] = []  # (start_char, first line, text)
    for chunk in sorted(chunks, key=lambda c: c.start_char):
        if runs:
            begin, first, text = runs[-1]
            end_char = begin + len(text)
            if chunk.start_char <= end_char:
                if chunk.end_char > end_char:
                    text += chunk.content[end_char - chunk.start_char :]
                runs[-1] = (begin, first, text)
                continue
            if chunk.start_char == end_char + 1 and chunk.line_start == first + text.count("\n") + 1:
                runs[-1] = (begin, first, text + "\n" + chunk.content)
                continue
        runs.append((chunk.start_char, chunk.line_start, chunk.content))
    for _, first, text in runs:
        lines = LineIndex(text)
        last = first + lines.line_count - 1
        if first <= start and end <= last:
            return line_text(text, lines, start - first + 1, end - first + 1)
    return None


@dataclass
class ReadSpan:
    """``read TARGET``: the lines a handle or a locator names, verified against the file on disk.

    The file is read once and hashed. Equal to the indexed digest: ``verified``, with the text of
    those lines. Changed: the indexed text (a handle's chunk content; for a locator, the indexed
    text of its lines rebuilt from the stored chunks, :func:`indexed_lines`) is looked for in the
    new text, decoded with the encoding recorded at indexing (the decoder's hint); found exactly
    once, starting at a line start: ``moved`` with the new lines, ``moved_from`` the old ones
    (``verified`` when they are the same lines: the file changed elsewhere); otherwise ``stale``,
    with the old locator and no text. A missing file: ``deleted``. A file that cannot be read or
    decoded any more: ``stale``.

    Only files the index holds are served: a handle whose file was removed from the index
    (``delete``, or pruned by ``index``) and a locator on a file the index does not hold are
    :class:`NotIndexedError` (a handle whose file is also gone from disk reads as ``deleted``).

    The response is cut to a token budget (:func:`fit_read`) counted with ``counter``
    (o200k_base in the container); ``default_budget`` is ``knowledgebase.injection.read_max_tokens``.
    Without a ``counter`` no budget applies.

    A converted document (PDF, DOCX...: a suffix of ``conversions``) is read as its converted
    text, whose lines the index's line ranges count: from the conversion cache when it holds the
    file's current bytes, else converted again (and kept). A document that cannot be converted
    any more (its library missing, the file damaged) reads as ``stale``. Equal bytes are not
    enough for a converted file: a converter's new version or options turn the same bytes into
    other text (the cache is keyed by the converter's signature). So its text is compared with
    the index's too: for a handle, the lines must hold the hit's text (it starts in the first and
    ends in the last); for a locator, every stored chunk of the file must be at its offsets
    (:meth:`IndexStore.file_chunks`; lines between chunks were not stored and are not compared).
    When not, it is read as a changed file (``moved`` or ``stale``, the message saying that it
    was converted differently and ``index`` must run), never ``verified`` with other text nor
    out of range for lines that existed when it was indexed.
    """

    store: IndexStore
    source: FileSource
    decoder: Decoder
    result_sets: ResultSetStore | None = None
    counter: TokenCounter | None = None
    default_budget: int = DEFAULT_READ_MAX_TOKENS
    conversions: Conversions | None = None

    def execute(self, target: str, *, budget: int | None = None) -> ReadResult:
        """Read ``target``: a handle ``SET:N`` or a locator ``PATH:START-END`` / ``PATH:LINE``
        (an indexed file's absolute path, or one relative to the current directory; ``~``
        expanded), within ``budget`` tokens of the serialized response (default
        ``default_budget``; see :func:`fit_read`).

        Raises:
            UsageError: ``target`` is neither (a malformed handle gets the handle's hint); the
                lines are out of range (beyond the end of a file that has not changed since
                indexing, and for a converted file whose converted text has not either); ``budget`` not a whole number from 1 to :data:`~hermes_workspace.domain.packing.MAX_BUDGET`, or
                below the smallest response (the hint gives it).
            NotIndexedError: the file is not in the index (exit 66).
            HandleNotFoundError: the handle's set is unknown, or has no hit N.
            HandleExpiredError: the handle's set expired or was evicted.
            TokenizerUnavailableError: the budget's tokenizer cannot load.
            StoreError: the database failed.
        """
        if not isinstance(target, str) or not target.strip():
            raise UsageError("read needs a handle or a locator", hint=LOCATOR_HINT)
        limit = self._budget(budget)
        result, focus = self._read_handle(target) if looks_like_handle(target) else (self._read_locator(target), 0)
        if self.counter is None:
            return result
        return fit_read(result, self.counter, limit, default=self.default_budget, focus=focus)

    def _budget(self, budget: int | None) -> int:
        return checked_budget(budget, self.default_budget, "knowledgebase.injection.read_max_tokens")

    def _read_handle(self, target: str) -> tuple[ReadResult, int]:
        """The result and where the hit's text starts in its first line (characters; 0 unless
        the hit is a piece of a long line: a chunk cut from minified code)."""
        handle = parse_handle(target)
        if self.result_sets is None:
            raise HandleNotFoundError(f"no result sets are kept for this workspace: {handle} cannot be read")
        saved = self.result_sets.load(handle.set_id)
        if handle.ordinal > len(saved.hits):
            raise HandleNotFoundError(
                f"result set {handle.set_id} holds {len(saved.hits)} hits; there is no hit {handle.ordinal}"
            )
        hit = saved.hits[handle.ordinal - 1]
        record = self.store.get_file(hit.path)
        if record is None and os.path.lexists(hit.path):
            raise NotIndexedError(
                f"{hit.path} is no longer in the index: {handle} cannot be read",
                hint="It was removed from the index (`delete`, or left out by a later `index`); `roots add` for its "
                "folder, or a change to the file, brings it back at the next `index`.",
            )
        indexed_hash = hit.file_hash or (record.content_hash if record is not None else None)
        start, end = hit.line_start, hit.line_end
        result = self._verify(
            hit.path, start, end, indexed_hash, lambda: hit.content,
            encoding=record.encoding if record is not None else None, handle=str(handle), locator=False,
            same_conversion=lambda text, lines: _holds(text, lines, start, end, hit.content),
        )
        return result, _start_in_first_line(result.text, hit.content)

    def _read_locator(self, target: str) -> ReadResult:
        raw, start, end = parse_locator(target)
        path, record = self._indexed(raw)
        stored: list[list[Chunk]] = []

        def chunks() -> list[Chunk]:  # one query, and only when the text must be compared
            if not stored:
                stored.append(self.store.file_chunks(path))
            return stored[0]

        return self._verify(
            path, start, end, record.content_hash, lambda: indexed_lines(chunks(), start, end),
            encoding=record.encoding, handle=None, locator=True,
            same_conversion=lambda text, lines: _chunks_match(text, chunks()),
        )

    def _indexed(self, raw: str) -> tuple[Path, FileRecord]:
        expanded = Path(os.path.expanduser(raw))
        absolute = Path(os.path.abspath(expanded))
        candidates = [absolute]
        real = Path(os.path.realpath(expanded))
        if real != absolute:
            candidates.append(real)
        for path in candidates:
            record = self.store.get_file(path)
            if record is not None:
                return path, record
        raise NotIndexedError(
            f"{absolute} is not an indexed file",
            hint="Give the absolute path as printed in a hit's `path` (`hermes-workspace list` shows the indexed "
            "files); a file removed from the index comes back with `roots add` for its folder, or when it changes, "
            "at the next `index`.",
        )

    def _verify(
        self,
        path: Path,
        start: int,
        end: int,
        indexed_hash: str | None,
        indexed_text: Any,
        *,
        encoding: str | None,
        handle: str | None,
        locator: bool,
        same_conversion: Callable[[str, LineIndex], bool],
    ) -> ReadResult:
        """The read of ``start``..``end`` (see :class:`ReadSpan`). ``indexed_text()`` gives the
        indexed text of those lines (``None``/empty when unknown); ``same_conversion(text,
        lines)`` says whether a converted file's current converted text still holds the indexed
        text there (asked only when the bytes are unchanged)."""
        def result(status: ReadStatus, message: str, **fields: Any) -> ReadResult:
            values: dict[str, Any] = {"line_start": start, "line_end": end, "text": None, **fields}
            return ReadResult(status, path, file_hash=indexed_hash, message=message, handle=handle, **values)

        where = f"{path}:{start}-{end}"
        try:
            data = _read_file(self.source, path)
        except _MISSING:
            return result("deleted", f"{path} no longer exists")
        except OSError as exc:
            return result("stale", f"{path} cannot be read any more ({exc.strerror or exc}): {where} is not verified")
        digest = content_hash(data)
        converter = self.conversions.converter_for(path) if self.conversions is not None else None
        missing = self.conversions.unavailable_for(path) if self.conversions is not None else None
        if missing is not None:
            return result(
                "stale", f"{path} cannot be converted: {missing.message} ({missing.hint}): {where} is not verified"
            )
        try:
            if converter is not None:
                assert self.conversions is not None
                text = self.conversions.document(converter, data, digest, path).text
            else:
                text = self._decode(data, encoding)
        except WorkspaceError as exc:
            verb = "converted" if converter is not None else "decoded"
            return result("stale", f"{path} cannot be {verb} any more ({exc.message}): {where} is not verified")
        except Exception as exc:  # noqa: BLE001 - a converter library's own failure on this file
            if converter is None or isinstance(exc, (KeyboardInterrupt, MemoryError)):
                raise
            return result(
                "stale", f"{path} cannot be converted any more ({type(exc).__name__}): {where} is not verified"
            )
        lines = LineIndex(text)
        # Same bytes, but a converter's version or options may have changed since indexing: its
        # text then differs from the one the line ranges count (the cache is keyed by signature).
        reconverted = digest == indexed_hash and converter is not None and not same_conversion(text, lines)
        if digest == indexed_hash and not reconverted:
            if end > lines.line_count:
                raise UsageError(
                    f"{path} has {lines.line_count} lines; {start}-{end} is out of range",
                    hint=f"Give lines from 1 to {lines.line_count}.",
                )
            return result("verified", f"{where} holds the indexed text", text=line_text(text, lines, start, end))
        if reconverted:
            changed = f"{path} was converted differently since it was indexed (the converter or its options changed)"
            since, again = "", "run `index`, then the search again"
        else:
            changed, since, again = f"{path} changed", " since it was indexed", "run the search again"
        old = indexed_text()
        if not old:
            what = "those lines are outside the indexed chunks" if locator else "the hit has no text"
            return result("stale", f"{changed}{since} and {what}: {again}")
        found = _find_once(text, old)
        if found is None:
            return result(
                "stale", f"{changed}{since} and the indexed text of {start}-{end} is not there exactly once: {again}"
            )
        new_start, new_end = lines.span(found, found + len(old))
        now = line_text(text, lines, new_start, new_end)
        if (new_start, new_end) == (start, end):
            what = f"{changed}; {start}-{end}" if reconverted else f"{changed} elsewhere; {start}-{end}"
            return result("verified", f"{what} still holds the indexed text", text=now)
        return result(
            "moved",
            f"{changed}: the indexed text moved {start}-{end} -> {new_start}-{new_end}",
            line_start=new_start, line_end=new_end, text=now, moved_from=(start, end),
        )

    def _decode(self, data: bytes, encoding: str | None) -> str:
        return self.decoder.decode(data, hint=encoding) if encoding else self.decoder.decode(data)


def _start_in_first_line(text: str | None, content: str) -> int:
    """Where ``content`` starts in the first line of ``text`` (characters), 0 when it starts the
    text, lies beyond the first line or is not found."""
    if not text or not content:
        return 0
    position = text.find(content)
    return position if position > 0 and "\n" not in text[:position] else 0


def _holds(text: str, lines: LineIndex, start: int, end: int, content: str) -> bool:
    """True when lines ``start``..``end`` of ``text`` hold ``content`` (a hit's chunk text) as
    indexed: it starts in the first of them and ends in the last (a chunk starts at a line start
    or inside a long line, and its trailing whitespace was trimmed). Also true for an empty
    ``content`` within the text's lines: there is nothing to compare."""
    if end > lines.line_count:
        return False
    now = line_text(text, lines, start, end)
    position = now.find(content)
    return position != -1 and "\n" not in now[:position] and "\n" not in now[position + len(content):]


def _chunks_match(text: str, chunks: Sequence[Chunk]) -> bool:
    """True when every chunk's content is at its offsets in ``text``: the text the file's chunks
    were cut from (a converted file's text as indexed) is still ``text`` wherever the index holds
    some of it (blank lines between chunks were not stored)."""
    return all(text[chunk.start_char:chunk.end_char] == chunk.content for chunk in chunks)


def _find_once(text: str, needle: str) -> int | None:
    """The offset of the only occurrence of ``needle`` in ``text`` (overlapping occurrences
    count), when it starts at a line start; else ``None``."""
    first = text.find(needle)
    if first == -1 or text.find(needle, first + 1) != -1:
        return None
    if first > 0 and text[first - 1] != "\n":
        return None
    return first
