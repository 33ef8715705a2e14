"""Use case: index every root of a workspace (DESIGN.md §4, seed 000 "Re-Indexing Strategy")."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import structlog

from hermes_workspace.domain.chunking import build_chunks, count_words
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.constants import INDEX_DIRNAME, MAX_CHARS_PER_WORD
from hermes_workspace.domain.errors import BinaryContentError, DecodeError
from hermes_workspace.domain.filetypes import kind_for_path
from hermes_workspace.domain.model import (
    Chunk,
    DiscoveryProblem,
    ErrorStage,
    FileFailure,
    FileRecord,
    IndexSummary,
    Root,
    SkippedFile,
    SourceFile,
)
from hermes_workspace.domain.ports import (
    Chunker,
    Decoder,
    FileSource,
    IndexLock,
    IndexStore,
    ProgressSink,
    WorkspaceLayout,
)

log = structlog.get_logger("hermes_workspace.index")


def utc_iso(timestamp_ns: int | float) -> str:
    """``2026-04-15T10:32:00Z`` for a POSIX time in nanoseconds (seconds precision, UTC)."""
    seconds = timestamp_ns / 1e9 if isinstance(timestamp_ns, int) else timestamp_ns
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _reraise_interrupt(exc: BaseException) -> None:
    """Re-raise a Ctrl-C that a library swallowed and turned into another error while handling it
    (seen in chonkie): a user's interrupt must stop the run, not trigger the fallback chunker."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            raise KeyboardInterrupt from exc
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__


class _FileFailed(Exception):
    """Carries the stage of a per-file failure up to the run loop."""

    def __init__(self, stage: ErrorStage, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.stage = stage
        self.cause = cause


@dataclass
class IndexWorkspace:
    """Indexes the primary workspace and the added roots into ``store``.

    Per file: skip when size, mtime and config signature are unchanged (no read); else read and
    hash (SHA-256); skip when the hash is unchanged (the stored mtime is refreshed); else decode,
    chunk (files of at most ``threshold`` words are one chunk; a failing ``chunker`` falls back to
    ``fallback_chunker``) and replace the file's chunks in one transaction. After the walk, indexed
    files that were not found again are pruned, except under roots that could not be read at all.
    One file's failure is recorded with its stage and the run goes on.

    Raises (from :meth:`execute`): ``IndexBusyError`` when another run holds ``lock``.
    """

    config: WorkspaceConfig
    home: Path
    source: FileSource
    decoder: Decoder
    chunker: Chunker
    fallback_chunker: Chunker
    store: IndexStore
    lock: IndexLock
    layout: WorkspaceLayout
    clock: Callable[[], float] = time.time

    def execute(self, progress: ProgressSink) -> IndexSummary:
        """Run one index pass; returns the summary (seed 000 shape). ``progress`` gets
        ``start(total)``, one ``advance`` per candidate file, and ``finish()``."""
        started = time.perf_counter()
        with self.lock.hold():
            summary = IndexSummary()
            self.layout.ensure(self.config.primary_path(self.home), create_folders=self.config.enabled)
            roots = self._roots()
            signature = self.config.chunking_signature(self.chunker.signature)
            candidates, seen, unreadable = self._discover(roots, summary)
            progress.start(len(candidates))
            try:
                for position, file in enumerate(candidates, start=1):
                    progress.advance(position, len(candidates), file.path)
                    self._index_file(file, signature, summary)
            finally:
                progress.finish()
            self._prune(seen, unreadable, summary)
        summary.duration_seconds = time.perf_counter() - started
        log.info("index finished", **{k: v for k, v in summary.to_json().items() if k != "errors"})
        return summary

    def _roots(self) -> list[Root]:
        roots = self.config.all_roots(self.home)
        if not self.config.enabled:
            roots = [r for r in roots if not r.primary]
        return roots

    def _discover(
        self, roots: list[Root], summary: IndexSummary
    ) -> tuple[list[SourceFile], set[Path], set[Path]]:
        """Candidates in walk order (first root wins for a file under two roots), every path
        seen, and the paths that could not be looked at: whatever the index holds under those is
        kept rather than pruned (an unmounted drive or a folder without permission is not a
        deletion)."""
        candidates: list[SourceFile] = []
        seen: set[Path] = set()
        unreadable: set[Path] = set()
        own_index = self.config.primary_path(self.home) / INDEX_DIRNAME
        for item in self.source.discover(roots):
            if isinstance(item, SourceFile):
                if own_index in item.path.parents:
                    continue
                if item.path not in seen:
                    seen.add(item.path)
                    candidates.append(item)
            elif isinstance(item, SkippedFile):
                summary.add_skip(item.reason)
            elif isinstance(item, DiscoveryProblem):
                unreadable.add(item.path)
                summary.add_error(FileFailure(str(item.path), "discover", item.error_type, item.message))
                log.warning("cannot look at path", path=str(item.path), stage="discover",
                            error_type=item.error_type, message=item.message)
        return candidates, seen, unreadable

    def _index_file(self, file: SourceFile, signature: str, summary: IndexSummary) -> None:
        try:
            self._index_one(file, signature, summary)
        except _FileFailed as failed:
            error_type = type(failed.cause).__name__
            if isinstance(failed.cause, DecodeError):
                error_type = "EncodingError"
            summary.add_error(FileFailure(str(file.path), failed.stage, error_type, str(failed.cause)))
            log.warning(
                "file failed",
                path=str(file.path),
                stage=failed.stage,
                error_type=error_type,
                exc_info=failed.cause,
            )

    def _index_one(self, file: SourceFile, signature: str, summary: IndexSummary) -> None:
        try:
            existing = self.store.get_file(file.path)
        except Exception as exc:
            raise _FileFailed("store", exc) from exc
        same_signature = existing is not None and existing.config_signature == signature
        if same_signature and existing.size == file.size and existing.mtime_ns == file.mtime_ns:
            summary.add_skip("unchanged")
            return

        try:
            data = self.source.read_bytes(file)
        except FileNotFoundError as exc:
            raise _FileFailed("discover", exc) from exc
        except Exception as exc:
            raise _FileFailed("read", exc) from exc
        content_hash = hashlib.sha256(data).hexdigest()
        record = FileRecord(
            path=file.path,
            root=file.root,
            content_hash=content_hash,
            config_signature=signature,
            size=len(data),
            mtime_ns=file.mtime_ns,
            modified_at=utc_iso(file.mtime_ns),
            indexed_at=utc_iso(self.clock()),
        )
        if same_signature and existing.content_hash == content_hash:
            self._store(lambda: self.store.touch_file(record))
            summary.add_skip("unchanged")
            return

        # From here on the file is known to have changed: if it cannot be decoded or chunked,
        # its old chunks go, since their text and line ranges no longer match the file.
        try:
            text = self.decoder.decode(data)
            del data
            chunks = self._chunk(text, file.path)
        except BinaryContentError:
            self._forget(file.path)
            summary.add_skip("binary_content")
            return
        except _FileFailed:
            self._forget(file.path)
            raise
        except Exception as exc:
            self._forget(file.path)
            raise _FileFailed("read", exc) from exc
        if not chunks:
            self._forget(file.path)
            summary.add_skip("empty")
            return
        self._store(lambda: self.store.replace_file(record, chunks))
        summary.files_indexed += 1
        summary.chunks_created += len(chunks)

    def _forget(self, path: Path) -> None:
        self._store(lambda: self.store.delete_files([path]))

    def _chunk(self, text: str, path: Path) -> list[Chunk]:
        # A file is one chunk when it has at most `threshold` words and is not longer than that
        # many words can reasonably be (a 3 MB minified file is "2 words").
        chunking = self.config.chunking
        max_chars = max(chunking.threshold, chunking.chunk_size) * MAX_CHARS_PER_WORD
        if len(text) <= max_chars and count_words(text) <= chunking.threshold:
            return build_chunks(text, [], kind=kind_for_path(path), overlap=0, max_chars=max_chars)
        try:
            return self.chunker.chunk(text, path)
        except Exception as exc:
            _reraise_interrupt(exc)
            log.warning("chunker failed, using the default chunker", path=str(path),
                        error_type=type(exc).__name__, exc_info=exc)
        try:
            return self.fallback_chunker.chunk(text, path)
        except Exception as exc:
            _reraise_interrupt(exc)
            raise _FileFailed("chunk", exc) from exc

    @staticmethod
    def _store(operation: Callable[[], object]) -> None:
        try:
            operation()
        except Exception as exc:
            raise _FileFailed("store", exc) from exc

    def _prune(self, seen: set[Path], unreadable: set[Path], summary: IndexSummary) -> None:
        stale = [
            record.path
            for record in self.store.file_records()
            if record.path not in seen
            and record.path not in unreadable
            and not any(parent in unreadable for parent in record.path.parents)
        ]
        if stale:
            summary.files_pruned = self.store.delete_files(stale)
