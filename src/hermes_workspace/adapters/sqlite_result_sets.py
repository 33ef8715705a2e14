"""Result sets in the index file: the :class:`~hermes_workspace.domain.ports.ResultSetStore` that
makes handles (``SET:ORDINAL``) and cursors (``SET@OFFSET``) survive restarts.

Schema (created on first use, in the SQLite file of the keyword index, beside its tables; an index
rebuild leaves it alone, so an id is never given twice)::

    result_sets(id TEXT PRIMARY KEY, kind, query, options JSON, created_at REAL, expires_at REAL,
                evicted INTEGER)            -- Unix seconds; evicted rows are tombstones
    result_hits(set_id, ordinal, hit BLOB, PRIMARY KEY (set_id, ordinal)) WITHOUT ROWID
                                            -- hit: zlib-compressed JSON of one SearchHit

An expired or evicted set loses its hits, its query and options, and keeps its id row (a few
dozen bytes) so that loading it says *expired*, not *unknown*; at most
:data:`TOMBSTONES_PER_SET` x ``max_sets`` tombstones are kept (the oldest go first, and their ids
then read as unknown).

Concurrency: one connection per store object, guarded by a lock (the MCP server calls from
several threads); each save is one short ``BEGIN IMMEDIATE`` transaction, waiting up to the busy
timeout for an index run's batch (committed at least every half second). On an index this process
cannot write (a read-only home, opened ``immutable``), :meth:`SqliteResultSets.save` raises
:class:`StoreUnusableError` and :meth:`SqliteResultSets.load` still reads.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import apsw

from hermes_workspace.adapters.sqlite_common import immediate_transaction, open_index_connection, translated_sqlite_errors
from hermes_workspace.domain.errors import (
    HandleExpiredError,
    HandleNotFoundError,
    IndexNotFoundError,
    StoreUnusableError,
)
from hermes_workspace.domain.model import Duplicate, ResultSet, SearchHit

__all__ = ["SqliteResultSets", "hit_from_json", "hit_to_json"]

DEFAULT_BUSY_TIMEOUT_MS = 5_000
"""How long a save waits for an index run's write lock (milliseconds). Index batches commit at
least every 0.5 s (``BATCH_MAX_SECONDS`` in application/batch_writer.py); past this wait, the search
returns its hits without handles rather than keep the agent waiting."""

TOMBSTONES_PER_SET = 10
"""Tombstones kept per live set allowed (``max_sets``): 2,000 by default, a few dozen bytes each."""

_ID_ATTEMPTS = 16
"""Fresh random ids tried before giving up (one collision in 2**32 per existing id)."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS result_sets (
        id         TEXT PRIMARY KEY,
        kind       TEXT NOT NULL,
        query      TEXT NOT NULL,
        options    TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        evicted    INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS result_sets_live ON result_sets (evicted, created_at)",
    """CREATE TABLE IF NOT EXISTS result_hits (
        set_id  TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        hit     BLOB NOT NULL,
        PRIMARY KEY (set_id, ordinal)
    ) WITHOUT ROWID""",
)

_DROPPED_FIELDS = frozenset({"stale", "handle"})
"""Hit fields not frozen: freshness is marked again on every read of a set, handles from its id."""


def hit_to_json(hit: SearchHit) -> dict[str, Any]:
    """Every field of ``hit`` but ``stale`` and ``handle`` as JSON values (``root`` included, unlike
    :meth:`SearchHit.to_json`): paths as strings, ``definitions`` a list, ``duplicates`` a list of
    ``{"path", "line_start", "line_end"}``. :func:`hit_from_json` reverses it."""
    data: dict[str, Any] = {}
    for f in fields(SearchHit):
        if f.name in _DROPPED_FIELDS:
            continue
        value = getattr(hit, f.name)
        if f.name in ("path", "root"):
            value = None if value is None else str(value)
        elif f.name == "definitions":
            value = list(value)
        elif f.name == "duplicates":
            value = [d.to_json() for d in value]
        data[f.name] = value
    return data


def hit_from_json(data: Mapping[str, Any]) -> SearchHit:
    """The :class:`SearchHit` of :func:`hit_to_json`'s object (unknown keys ignored, so sets
    written by a later version with more fields still load)."""
    known = {f.name for f in fields(SearchHit)}
    values = {k: v for k, v in data.items() if k in known}
    values["path"] = Path(values["path"])
    if values.get("root") is not None:
        values["root"] = Path(values["root"])
    values["definitions"] = tuple(values.get("definitions") or ())
    values["duplicates"] = tuple(
        Duplicate(Path(d["path"]), int(d["line_start"]), int(d["line_end"])) for d in values.get("duplicates") or ()
    )
    return SearchHit(**values)


def _pack(hit: SearchHit) -> bytes:
    # ensure_ascii keeps a path's lone surrogates (undecodable names) as \udcxx escapes.
    return zlib.compress(json.dumps(hit_to_json(hit), separators=(",", ":")).encode("ascii"), 6)


def _unpack(blob: bytes) -> SearchHit:
    return hit_from_json(json.loads(zlib.decompress(blob)))


class SqliteResultSets:
    """A :class:`~hermes_workspace.domain.ports.ResultSetStore` in the index file ``path``.

    Args:
        path: the index database (``<workspace>/.index/workspace.sqlite``); it must exist (made by
            ``index``); the tables are created on the first save.
        ttl_seconds: life of a set (``knowledgebase.handles.ttl_hours`` x 3600).
        max_sets: live sets kept; saving one more evicts the oldest.
        clock: Unix seconds (replaceable in tests).
        busy_timeout_ms: see :data:`DEFAULT_BUSY_TIMEOUT_MS`.

    Raises (from the methods): :class:`IndexNotFoundError` when the index file does not exist;
    :class:`StoreError` for database failures (:class:`StoreUnusableError` for a save on an index
    that cannot be written).
    """

    def __init__(
        self,
        path: Path,
        *,
        ttl_seconds: float = 24 * 3600.0,
        max_sets: int = 200,
        clock: Callable[[], float] = time.time,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = Path(path)
        self.ttl_seconds = float(ttl_seconds)
        self.max_sets = max(1, int(max_sets))
        self.clock = clock
        self.busy_timeout_ms = max(0, int(busy_timeout_ms))
        self._lock = threading.Lock()
        self._conn: apsw.Connection | None = None
        self._readonly = False
        self._schema_ready = False

    # -- connection ---------------------------------------------------------------------------

    def _translate(self, action: str) -> Any:
        return translated_sqlite_errors(self.path, action, busy_timeout_ms=self.busy_timeout_ms, subject="result sets")

    def _connection(self) -> apsw.Connection:
        """The connection (opened on first use): read-write when the file and its folder may be
        written, else read-only (``immutable`` in a read-only folder)."""
        if self._conn is not None:
            return self._conn
        if not self.path.exists():
            raise IndexNotFoundError(f"no index at {self.path}")
        conn: apsw.Connection | None = None
        try:
            # With the index writer's pragmas: in WAL mode a commit then needs no fsync (a crash
            # may lose the last sets, never corrupt the file); an fsync per search cost ~4 ms.
            conn = open_index_connection(self.path, readonly=False, busy_timeout_ms=self.busy_timeout_ms)
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
            if conn.readonly("main"):
                raise apsw.ReadOnlyError("the index file is read-only")
        except (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError):
            if conn is not None:
                conn.close()
            conn = open_index_connection(self.path, readonly=True, busy_timeout_ms=self.busy_timeout_ms)
            self._readonly = True
        self._conn = conn
        return conn

    def _has_tables(self, conn: apsw.Connection) -> bool:
        if self._schema_ready:
            return True
        found = conn.execute(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('result_sets', 'result_hits')"
        ).fetchone()[0]
        self._schema_ready = found == 2
        return self._schema_ready

    # -- ResultSetStore -------------------------------------------------------------------------

    def save(self, kind: str, query: str, options: Mapping[str, Any], hits: Sequence[SearchHit]) -> ResultSet:
        """Freeze ``hits`` under a fresh random id (8 hex characters) that no set of this index
        ever had (tombstones included), after evicting expired sets and, beyond ``max_sets``, the
        oldest; one transaction.

        Raises:
            StoreUnusableError: the index cannot be written (read-only), or stayed locked longer
                than the busy timeout.
            IndexNotFoundError: no index file.
            StoreError: another database failure.
        """
        options_text = json.dumps(dict(options), sort_keys=True, ensure_ascii=True)
        blobs = [_pack(hit) for hit in hits]
        with self._lock, self._translate("save a result set"):
            conn = self._connection()
            if self._readonly:
                raise StoreUnusableError(
                    f"the index {self.path} is read-only: result sets cannot be saved",
                    hint="Hits have no handles; make the index folder writable to get them.",
                )
            now = self.clock()
            with immediate_transaction(conn):
                if not self._has_tables(conn):
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    self._schema_ready = True
                self._evict(conn, now)
                set_id = self._fresh_id(conn)
                expires = now + self.ttl_seconds
                conn.execute(
                    "INSERT INTO result_sets (id, kind, query, options, created_at, expires_at, evicted) "
                    "VALUES (?, ?, ?, ?, ?, ?, 0)",
                    (set_id, kind, query, options_text, now, expires),
                )
                conn.cursor().executemany(
                    "INSERT INTO result_hits (set_id, ordinal, hit) VALUES (?, ?, ?)",
                    [(set_id, ordinal, blob) for ordinal, blob in enumerate(blobs, start=1)],
                )
        return ResultSet(set_id, kind, query, dict(options), tuple(hits), now, expires)

    def load(self, set_id: str) -> ResultSet:
        """The set ``set_id`` with its hits in rank order (``stale`` and ``handle`` unset).

        Raises:
            HandleExpiredError: it expired (also when not yet evicted) or was evicted.
            HandleNotFoundError: this index never had it (or its tombstone was dropped).
            IndexNotFoundError: no index file.
            StoreError: the database failed.
        """
        with self._lock, self._translate("load a result set"):
            conn = self._connection()
            row = None
            if self._has_tables(conn):
                row = conn.execute(
                    "SELECT kind, query, options, created_at, expires_at, evicted FROM result_sets WHERE id = ?",
                    (set_id,),
                ).fetchone()
            if row is None:
                raise HandleNotFoundError(f"no result set {set_id} in this index")
            kind, query, options, created, expires, evicted = row
            if evicted or expires <= self.clock():
                raise HandleExpiredError(
                    f"result set {set_id} has {'been evicted' if evicted and expires > self.clock() else 'expired'}"
                )
            blobs = conn.execute(
                "SELECT hit FROM result_hits WHERE set_id = ? ORDER BY ordinal", (set_id,)
            ).fetchall()
        hits = tuple(_unpack(blob) for (blob,) in blobs)
        return ResultSet(set_id, kind, query, json.loads(options), hits, created, expires)

    # -- housekeeping -------------------------------------------------------------------------

    def _evict(self, conn: apsw.Connection, now: float) -> None:
        """Turn expired sets, and the oldest live sets beyond ``max_sets - 1``, into tombstones
        (hits deleted, query and options emptied); drop the oldest tombstones beyond
        ``TOMBSTONES_PER_SET * max_sets``."""
        doomed = [
            set_id
            for (set_id,) in conn.execute("SELECT id FROM result_sets WHERE evicted = 0 AND expires_at <= ?", (now,))
        ]
        (live,) = conn.execute("SELECT count(*) FROM result_sets WHERE evicted = 0 AND expires_at > ?", (now,)).fetchone()
        excess = live - (self.max_sets - 1)
        if excess > 0:
            doomed += [
                set_id
                for (set_id,) in conn.execute(
                    "SELECT id FROM result_sets WHERE evicted = 0 AND expires_at > ? ORDER BY created_at, rowid LIMIT ?",
                    (now, excess),
                )
            ]
        for set_id in doomed:
            conn.execute("DELETE FROM result_hits WHERE set_id = ?", (set_id,))
            conn.execute("UPDATE result_sets SET evicted = 1, query = '', options = '{}' WHERE id = ?", (set_id,))
        keep = TOMBSTONES_PER_SET * self.max_sets
        conn.execute(
            "DELETE FROM result_sets WHERE evicted = 1 AND id NOT IN "
            "(SELECT id FROM result_sets WHERE evicted = 1 ORDER BY created_at DESC, rowid DESC LIMIT ?)",
            (keep,),
        )

    def _fresh_id(self, conn: apsw.Connection) -> str:
        for _ in range(_ID_ATTEMPTS):
            candidate = secrets.token_hex(4)
            if conn.execute("SELECT 1 FROM result_sets WHERE id = ?", (candidate,)).fetchone() is None:
                return candidate
        raise StoreUnusableError("could not find an unused result set id", hint="Try the search again.")

    def close(self) -> None:
        """Release the connection (idempotent; a later call opens a new one)."""
        with self._lock:
            conn, self._conn = self._conn, None
            self._schema_ready = False
            if conn is not None:
                conn.close()

    def __repr__(self) -> str:
        return f"SqliteResultSets({str(self.path)!r})"
