"""Converted documents cached as small compressed files under the index folder.

Layout: ``<index_dir>/converted/<hash[:2]>/<content_hash>.<signature digest>.json.gz``, where the
signature digest is the first 16 hex digits of the SHA-256 of the converter's signature. Each file
is gzip-compressed JSON ``{"v": 1, "signature", "text", "anchors": [[line, kind, number, label],
...]}``, written to a temporary file in the same folder and renamed over the entry (atomic on
POSIX and Windows), so that index workers and readers in other processes see a whole entry or
none. Files rather than a table in the index database: worker processes write their own entries
without going through the single SQLite writer, and a cache read never takes a database lock.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from hermes_workspace.logs import get_logger
from hermes_workspace.domain.model import Anchor, ConvertedDocument

log = get_logger("hermes_workspace.conversion")

CACHE_DIRNAME = "converted"
"""The cache's folder under the index folder."""

FORMAT_VERSION = 1
"""Version of the entry format above; entries of another version are misses."""

COMPRESS_LEVEL = 6
"""gzip level: text compresses about 3-4x at this level, at about 50 MB/s."""

ABANDONED_SECONDS = 3600.0
"""A temporary entry file this old was left by a process that died while writing it (a write
takes milliseconds); younger ones may be a write in progress in another process."""

_ENTRY = re.compile(r"([0-9a-f]{64})\.([0-9a-f]{16})\.json\.gz")


def signature_digest(signature: str) -> str:
    """The 16 hex digits naming a converter signature in entry names."""
    return hashlib.sha256(signature.encode()).hexdigest()[:16]


class FileConversionCache:
    """A :class:`~hermes_workspace.domain.ports.ConversionCache` in ``folder`` (created on the
    first write). Unreadable entries are misses; write failures (read-only index, disk full) are
    logged once per cache and ignored."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._warned = False

    def _entry(self, content_hash: str, signature: str) -> Path:
        return self.folder / content_hash[:2] / f"{content_hash}.{signature_digest(signature)}.json.gz"

    def get(self, content_hash: str, signature: str) -> ConvertedDocument | None:
        """The cached document, or ``None``."""
        try:
            raw = gzip.decompress(self._entry(content_hash, signature).read_bytes())
            data = json.loads(raw)
            if data.get("v") != FORMAT_VERSION or data.get("signature") != signature:
                return None
            anchors = tuple(Anchor(int(line), kind, int(number), str(label))
                            for line, kind, number, label in data["anchors"])
            return ConvertedDocument(str(data["text"]), anchors)
        except (OSError, EOFError, ValueError, KeyError, TypeError, gzip.BadGzipFile):
            return None

    def put(self, content_hash: str, signature: str, document: ConvertedDocument) -> None:
        """Write the entry atomically; failures are logged (once) and ignored."""
        target = self._entry(content_hash, signature)
        payload = {
            "v": FORMAT_VERSION,
            "signature": signature,
            "text": document.text,
            "anchors": [[a.line, a.kind, a.number, a.label] for a in document.anchors],
        }
        data = gzip.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass"),
                             COMPRESS_LEVEL, mtime=0)
        temp: str | None = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, target)
            temp = None
        except OSError as exc:
            if not self._warned:
                self._warned = True
                log.warning("cannot write the conversion cache", folder=str(self.folder), error=str(exc))
        finally:
            if temp is not None:
                try:
                    os.unlink(temp)
                except OSError:
                    pass

    def prune(self, keep: Iterable[tuple[str, str]]) -> int:
        """Delete every entry not named by a ``(content_hash, signature)`` in ``keep``, and
        temporary files left by dead writers; returns how many entries went."""
        wanted = {(h, signature_digest(s)) for h, s in keep}
        removed = 0
        try:
            shards = list(os.scandir(self.folder))
        except OSError:
            return 0
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            try:
                entries = list(os.scandir(shard.path))
            except OSError:
                continue
            for entry in entries:
                match = _ENTRY.fullmatch(entry.name)
                if match is not None and (match.group(1), match.group(2)) in wanted:
                    continue
                if match is None and not (entry.name.startswith(".tmp-") and self._abandoned(entry)):
                    continue  # not ours, or a write in progress in another process: left alone
                try:
                    os.unlink(entry.path)
                    removed += match is not None
                except OSError:
                    pass
            try:
                os.rmdir(shard.path)  # only when empty
            except OSError:
                pass
        return removed

    @staticmethod
    def _abandoned(entry: os.DirEntry[str]) -> bool:
        """A temporary file older than :data:`ABANDONED_SECONDS` (its writer died)."""
        try:
            return time.time() - entry.stat(follow_symlinks=False).st_mtime > ABANDONED_SECONDS
        except OSError:
            return False
