"""The per-file work of indexing: read, hash, decode and chunk one file (:func:`process_file`).

No store access, so that it runs in a worker process (a :class:`~hermes_workspace.domain.ports.TaskPool`)
as well as in the indexing process; everything that crosses between them (:class:`FileTask`,
:class:`FileOutcome`, :class:`Problem`) pickles.
"""

from __future__ import annotations

import pickle
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.domain.catalog import Tombstone
from hermes_workspace.domain.chunking import build_chunks, checked_chunks, count_words
from hermes_workspace.domain.config import ChunkingConfig
from hermes_workspace.domain.constants import MAX_CHARS_PER_WORD
from hermes_workspace.application.conversion import Conversions
from hermes_workspace.domain.conversion import converted_view, split_at_pages, with_anchors
from hermes_workspace.domain.errors import (
    AmbiguousEncodingError,
    BinaryContentError,
    ConversionError,
    ConverterUnavailableError,
    DecodeError,
    PluginExit,
    reraise_interrupt,
)
from hermes_workspace.domain.filetypes import kind_for_path
from hermes_workspace.domain.model import Anchor, Chunk, ErrorStage, SourceFile, content_hash
from hermes_workspace.domain.ports import Chunker, Converter, Decoder, FileSource


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process, as text: the ``__cause__`` of
    the copy of that exception that comes back (tracebacks cannot cross processes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class WorkerError(Exception):
    """Stands for an exception raised in a worker process that could not be copied back."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A per-file failure: ``error_type`` as the summary reports it (``EncodingError`` for a
    :class:`DecodeError`), its message, and the exception itself, for the log. When it comes
    back from a worker process, ``exception`` is a copy without a traceback whose ``__cause__``
    is a :class:`WorkerTraceback` holding the worker's traceback (a :class:`WorkerError` when
    the exception cannot be copied)."""

    error_type: str
    message: str
    exception: BaseException

    @classmethod
    def of(cls, exc: BaseException) -> Problem:
        error_type = "EncodingError" if isinstance(exc, DecodeError) else type(exc).__name__
        return cls(error_type, str(exc), exc)

    def __reduce__(self) -> tuple[Any, ...]:
        exc = self.exception
        text = "".join(traceback.format_exception(exc))
        try:
            copy = pickle.loads(pickle.dumps(exc))
            portable = type(copy) is type(exc)
        except Exception:  # noqa: BLE001 - any exception type may fail to round-trip
            portable = False
        remote: BaseException = exc if portable else WorkerError(f"{type(exc).__name__}: {exc}")
        return (_problem_from_worker, (self.error_type, self.message, remote, text))


def _problem_from_worker(error_type: str, message: str, exception: BaseException, text: str) -> Problem:
    exception.__cause__ = WorkerTraceback(text)
    return Problem(error_type, message, exception)


@dataclass(frozen=True, slots=True)
class FileTools:
    """The adapters that turn one file into chunks. A worker process builds its own (a
    ``TaskPool`` setup function); in this process they are the use case's own."""

    source: FileSource
    decoder: Decoder
    chunker: Chunker
    fallback_chunker: Chunker
    conversions: Conversions | None = None
    """Document converters by suffix and their cache; ``None``: no file is converted."""


@dataclass(frozen=True, slots=True)
class FileTask:
    """One file to read: ``indexed`` when the index holds a version of it, ``known_hash`` the
    content hash of that version when it was indexed with the current settings, ``hint`` an
    encoding to prefer when several read the file equally well (from its siblings)."""

    file: SourceFile
    indexed: bool = False
    known_hash: str | None = None
    hint: str | None = None
    tombstone: Tombstone | None = None
    """Set when ``delete`` removed the file: ``known_hash`` is then the hash it had, and an
    ``unchanged`` outcome means "still the deleted file"."""
    indexed_hash: str | None = None
    """The content hash of the version in the index, whatever settings it was indexed with: when
    the file is read again with the same bytes and fails (a converter or chunker that breaks after
    an upgrade), that version is kept rather than dropped."""


Status = Literal["chunked", "unchanged", "binary_content", "empty", "failed", "converter_unavailable", "over_budget"]
"""``over_budget``: not read at all, because the storage budget was reached before its turn and a
new file can only add chunks (made by the index run, never by :func:`process_file`)."""


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """What :func:`process_file` made of one file. ``failed``: ``stage`` and ``problem`` say why,
    and ``changed`` whether the file was known to have changed by then (its old chunks must go,
    since their text and line ranges no longer match the file). ``fallback``: the chunker failed
    and the fallback chunker was tried (logged as a warning). ``encoding``: the legacy encoding
    the text was read with (``None`` for UTF-8, a BOM, or a decoder that does not say).
    ``ambiguous``: for a read failure because several encodings fit, their names.
    ``converter_unavailable``: the file's converter cannot run (its library is missing),
    ``problem`` says so."""

    status: Status
    content_hash: str = ""
    size: int = 0
    chunks: Sequence[Chunk] = ()
    stage: ErrorStage | None = None
    problem: Problem | None = None
    changed: bool = False
    fallback: Problem | None = None
    encoding: str | None = None
    ambiguous: tuple[str, ...] = ()


class _ChunkFailed(Exception):
    def __init__(self, problem: Problem, fallback: Problem | None) -> None:
        super().__init__(problem.message)
        self.problem = problem
        self.fallback = fallback


def process_file(tools: FileTools, task: FileTask, *, chunking: ChunkingConfig) -> FileOutcome:
    """Read, hash, decode (or convert) and chunk one file; no store access, so that it can run in
    a worker.

    Unchanged content (``task.known_hash``) stops after hashing. A file whose suffix has a
    converter (``tools.conversions``) is converted instead of decoded (through the conversion
    cache) and its markdown text chunked under :func:`~hermes_workspace.domain.conversion.converted_view`
    (``report.pdf.md``), so that any chunker takes its markdown path; its chunks get their page,
    slide or sheet (:func:`~hermes_workspace.domain.conversion.with_anchors`). Files of at most
    ``chunking.threshold`` words are one chunk; a failing ``tools.chunker`` falls back to
    ``tools.fallback_chunker``. The file's own failures come back as a ``failed`` outcome with
    their stage (``discover``: it vanished; ``read``: unreadable or undecodable; ``convert``: a
    damaged document, or a PDF without a text layer; ``chunk``).

    Raises:
        KeyboardInterrupt: also when a chunker turned one into another error.
    """
    try:
        data = tools.source.read_bytes(task.file)
    except FileNotFoundError as exc:
        return FileOutcome("failed", stage="discover", problem=Problem.of(exc))
    except Exception as exc:  # noqa: BLE001 - any read failure is this file's, reported with its stage
        reraise_interrupt(exc)
        return FileOutcome("failed", stage="read", problem=Problem.of(exc))
    digest = content_hash(data)
    size = len(data)
    if task.known_hash == digest:
        return FileOutcome("unchanged", digest, size)
    conversions = tools.conversions
    converter = conversions.converter_for(task.file.path) if conversions is not None else None
    if conversions is not None and converter is None:
        unavailable = conversions.unavailable_for(task.file.path)
        if unavailable is not None:
            return FileOutcome("converter_unavailable", digest, size, problem=Problem.of(unavailable))
    if converter is not None:
        assert conversions is not None
        try:
            document = conversions.document(converter, data, digest, task.file.path)
        except ConverterUnavailableError as exc:
            return FileOutcome("converter_unavailable", digest, size, problem=Problem.of(exc))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any conversion failure is this file's
            reraise_interrupt(exc)
            exc = _no_exit(exc)
            return FileOutcome("failed", digest, size, stage="convert", problem=_conversion_problem(converter, exc),
                               changed=True)
        return _chunked(tools, document.text, converted_view(task.file.path), chunking, digest, size, None,
                        document.anchors)
    try:
        text, encoding = _decode(tools.decoder, data, task.hint)
    except BinaryContentError:
        return FileOutcome("binary_content", digest, size)
    except AmbiguousEncodingError as exc:
        return FileOutcome("failed", digest, size, stage="read", problem=Problem.of(exc), changed=True,
                           ambiguous=exc.candidates)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is this file's
        reraise_interrupt(exc)
        return FileOutcome("failed", digest, size, stage="read", problem=Problem.of(exc), changed=True)
    del data
    return _chunked(tools, text, task.file.path, chunking, digest, size, encoding, ())


def _conversion_problem(converter: Converter, exc: Exception) -> Problem:
    """The failure of ``converter`` on a file: a :class:`ConversionError` as it is (its message
    says what is wrong with the document); anything else is the converter's own fault, and the
    message names it (``KeyError: 'x'`` alone tells a user nothing)."""
    if isinstance(exc, ConversionError):
        return Problem.of(exc)
    name = getattr(converter, "name", type(converter).__name__)
    return Problem(type(exc).__name__, f"the {name} converter failed: {type(exc).__name__}: {exc}", exc)


def _chunked(
    tools: FileTools, text: str, path: Path, chunking: ChunkingConfig, digest: str, size: int,
    encoding: str | None, anchors: Sequence[Anchor],
) -> FileOutcome:
    """The outcome of chunking ``text`` (the file's text, or its converted text under its
    converted name ``path``), with ``anchors`` set on the chunks."""
    try:
        chunks, fallback = _chunk(tools, text, path, chunking)
    except _ChunkFailed as failed:
        return FileOutcome("failed", digest, size, stage="chunk", problem=failed.problem, changed=True,
                           fallback=failed.fallback)
    except Exception as exc:  # noqa: BLE001 - the one-chunk path (our own policy) failed
        reraise_interrupt(exc)
        return FileOutcome("failed", digest, size, stage="chunk", problem=Problem.of(exc), changed=True)
    if not chunks:
        return FileOutcome("empty", digest, size, fallback=fallback)
    chunks = with_anchors(split_at_pages(text, chunks, anchors), anchors)
    return FileOutcome("chunked", digest, size, chunks=chunks, fallback=fallback, encoding=encoding)


UNICODE_ENCODINGS = frozenset({"utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"})
"""Encodings that are not evidence about a folder's legacy code page."""


def _decode(decoder: Decoder, data: bytes, hint: str | None) -> tuple[str, str | None]:
    """The text, and the legacy encoding it was read with (``None`` for Unicode, or a decoder
    without ``read``)."""
    read = getattr(decoder, "read", None)
    if read is None:
        return (decoder.decode(data, hint=hint) if hint else decoder.decode(data)), None
    decoded = read(data, hint=hint)
    return decoded.text, (None if decoded.encoding in UNICODE_ENCODINGS else decoded.encoding)


def _chunk(tools: FileTools, text: str, path: Path, chunking: ChunkingConfig) -> tuple[list[Chunk], Problem | None]:
    # A file is one chunk when it has at most `threshold` words and is not longer than that
    # many words can reasonably be (a 3 MB minified file is "2 words").
    max_chars = max(chunking.threshold, chunking.chunk_size) * MAX_CHARS_PER_WORD
    if len(text) <= max_chars and count_words(text) <= chunking.threshold:
        return build_chunks(text, [], kind=kind_for_path(path), overlap=0, max_chars=max_chars), None
    try:
        return checked_chunks(text, tools.chunker.chunk(text, path)), None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the fallback below is for any chunker failure or bad output
        reraise_interrupt(exc)
        fallback = Problem.of(_no_exit(exc))
    try:
        return checked_chunks(text, tools.fallback_chunker.chunk(text, path)), fallback
    except (Exception, SystemExit) as exc:
        reraise_interrupt(exc)
        raise _ChunkFailed(Problem.of(_no_exit(exc)), fallback) from exc


def _no_exit(exc: BaseException) -> Exception:
    """``exc``, or for a plugin's ``SystemExit`` a :class:`PluginExit` saying so."""
    return PluginExit(exc.code) if isinstance(exc, SystemExit) else exc  # type: ignore[return-value]
