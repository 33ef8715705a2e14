"""Use cases over the catalog of indexed files: ``list``, ``delete`` (with tombstones), re-admitting
deleted files, ``doctor``, and the stale-file estimate of ``status``.

Deleted files (the rule, also in the README): ``delete PATH`` removes a file, or every indexed file
under a folder, from the index only (never from disk), with its chunks and their vectors, and
writes a tombstone holding the bytes' SHA-256, size and mtime. Later ``index`` runs skip a
tombstoned file (summary ``skipped.deleted_by_user``) while its bytes hash to the tombstone's hash;
when they differ it is indexed again and the tombstone dropped. ``roots add FOLDER`` (also for a
root already configured, the primary workspace included) drops the tombstones under ``FOLDER``: the
next ``index`` takes those files back. A tombstoned file that is gone from disk loses its
tombstone at the next ``index``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_workspace.application.embedding import close_vectors
from hermes_workspace.domain.catalog import (
    LIST_MAX_LIMIT,
    LIST_MAX_OFFSET,
    DeleteResult,
    DoctorCheck,
    DoctorReport,
    FileListing,
    Tombstone,
)
from hermes_workspace.domain.errors import (
    IndexNotFoundError,
    NotIndexedError,
    StoreError,
    StoreUnusableError,
    UsageError,
    WorkspaceError,
)
from hermes_workspace.domain.model import FileRecord
from hermes_workspace.domain.ports import Embedder, IndexStore, VectorIndex

DRIFT_SAMPLE = 200
"""Files ``doctor`` compares with the disk at most (stat, then SHA-256 when the stat differs)."""

STALE_SAMPLE = 50
"""Files ``status`` stats at most for its stale-file estimate (stat only: cheap, never reads)."""

_HASH_BLOCK = 1 << 20


def absolute(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute against the current folder, ``~`` expanded, ``.``/``..`` folded;
    symlinks are not resolved (the index stores the paths its walk saw).

    Raises:
        UsageError: the path is empty.
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise UsageError("the path is empty", hint="Give a file or folder, e.g. `docs` or `/home/me/notes/a.md`.")
    return Path(os.path.normpath(Path(text).expanduser().absolute()))


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of the file's bytes, read in 1 MiB blocks.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


# -- list --------------------------------------------------------------------------------------------


@dataclass
class ListFiles:
    """Pages through the indexed files (``store`` may be read-only)."""

    store: IndexStore

    def execute(
        self, path: str | os.PathLike[str] | None = None, *, recursive: bool = True, limit: int = 100, offset: int = 0
    ) -> FileListing:
        """The files under ``path`` (a folder, or one file; ``None``: all), sorted by path, from
        ``offset`` (0-based, 0..:data:`LIST_MAX_OFFSET`), at most ``limit``
        (1..:data:`LIST_MAX_LIMIT`). ``recursive=False``:
        only the files directly in the folder (with no ``path``: directly in their root). A path
        holding no indexed file gives an empty listing (``total`` 0), not an error.

        Raises:
            UsageError: ``limit`` or ``offset`` out of range, an empty path.
            StoreError: the index cannot be read.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIST_MAX_LIMIT:
            raise UsageError(f"limit must be a whole number from 1 to {LIST_MAX_LIMIT}, got {_short(limit)}",
                             hint="Page with --offset: the answer's next_offset is the next page's offset.")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= LIST_MAX_OFFSET:
            raise UsageError(f"offset must be a whole number from 0 to {LIST_MAX_OFFSET:,}, got {_short(offset)}",
                             hint="Page with --offset: the answer's next_offset is the next page's offset.")
        where = None if path is None else absolute(path)
        records, total = self.store.list_files(where, recursive=recursive, limit=limit, offset=offset)
        return FileListing(tuple(records), total, offset, limit, path=where, recursive=recursive)


def _short(value: object) -> str:
    """``repr(value)`` for a message, at most 40 characters: a bad argument can be a number of
    10,000 digits, which Python refuses to print (ValueError beyond 4,300)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a {'negative ' if value < 0 else ''}number of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- delete ------------------------------------------------------------------------------------------


def _now_iso(clock: Callable[[], float]) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock()))


def _all_under(store: IndexStore, path: Path) -> list[FileRecord]:
    """Every indexed file at ``path`` or under it, paged through the store."""
    found: list[FileRecord] = []
    while True:
        page, total = store.list_files(path, recursive=True, limit=LIST_MAX_LIMIT, offset=len(found))
        found.extend(page)
        if not page or len(found) >= total:
            return found


def _tombstone(record: FileRecord, deleted_at: str) -> Tombstone | None:
    """The tombstone of ``record`` as its bytes are on disk now: the indexed hash when the stat
    still matches the record, else the hash of the current bytes (so that an edit made before
    the delete does not bring the file back); ``None`` when it is no longer there."""
    try:
        stat = record.path.stat()
    except OSError:
        return None
    if record.same_stat(stat.st_size, stat.st_mtime_ns):
        return Tombstone(record.path, record.content_hash, record.size, record.mtime_ns, deleted_at)
    try:
        content_hash = sha256_file(record.path)
    except OSError:
        return None
    return Tombstone(record.path, content_hash, stat.st_size, stat.st_mtime_ns, deleted_at)


@dataclass
class DeleteFiles:
    """Removes files from the index, never from disk, and keeps them out of later runs (see the
    module docstring). ``store`` is the writer; ``open_vectors`` opens the vector index to prune
    the vectors no chunk uses any more (``None`` when semantic search is off). The caller holds
    the index lock."""

    store: IndexStore
    open_vectors: Callable[[], VectorIndex] | None = None
    clock: Callable[[], float] = time.time

    def execute(self, path: str | os.PathLike[str]) -> DeleteResult:
        """Delete the file at ``path``, or every indexed file under the folder ``path``, in one
        transaction with their tombstones; then prune orphaned vectors.

        Raises:
            UsageError: an empty path.
            NotIndexedError: no indexed file is at or under ``path``.
            StoreError: the index cannot be written (read-only, disk full...): nothing changed.
        """
        target = absolute(path)
        exact = self.store.get_file(target)
        records = [exact] if exact is not None else _all_under(self.store, target)
        if not records:
            raise NotIndexedError(
                f"nothing is indexed at or under {target}",
                hint="Run `hermes-workspace list` to see the indexed files (paths are absolute, or relative to the "
                "current folder); a file left out by .hermesignore or never indexed needs no delete.",
            )
        deleted_at = _now_iso(self.clock)
        graves = [t for t in (_tombstone(r, deleted_at) for r in records) if t is not None]
        with self.store.batch():
            files = self.store.delete_files(r.path for r in records)
            self.store.add_tombstones(graves)
        return DeleteResult(
            path=target,
            kind="file" if exact is not None else "folder",
            files_deleted=files,
            chunks_deleted=sum(r.chunk_count for r in records),
            vectors_pruned=self._prune_vectors(),
            tombstones=len(graves),
            paths=tuple(r.path for r in records),
        )

    def _prune_vectors(self) -> int | None:
        """Vectors left without a chunk, deleted; ``None`` without a vector index (or when it
        cannot be opened: the next ``index`` prunes them)."""
        if self.open_vectors is None:
            return None
        vectors: VectorIndex | None = None
        try:
            vectors = self.open_vectors()
            return vectors.prune()
        except StoreUnusableError:
            raise
        except WorkspaceError:
            return None
        finally:
            close_vectors(vectors)


@dataclass
class Readmit:
    """Drops the tombstones under a folder (``roots add``), so the next ``index`` takes the files
    back."""

    store: IndexStore

    def execute(self, folder: Path) -> int:
        """How many tombstones were dropped.

        Raises:
            StoreError: the index cannot be written.
        """
        return self.store.remove_tombstones(under=folder)


# -- drift between index and disk ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DriftSample:
    """Files of the index compared with the disk: ``sampled`` of ``total``; ``changed`` (bytes
    differ: hashed when ``hashed``, else the stat differs), ``missing`` (gone from disk),
    ``unreadable``; ``estimated_stale`` = round((changed + missing) / sampled * total)."""

    total: int
    sampled: int
    changed: int
    missing: int
    unreadable: int
    hashed: bool
    changed_paths: tuple[Path, ...] = ()
    missing_paths: tuple[Path, ...] = ()

    @property
    def estimated_stale(self) -> int:
        if not self.sampled:
            return 0
        return round((self.changed + self.missing) / self.sampled * self.total)

    def to_json(self) -> dict[str, Any]:
        """``{"total", "sampled", "changed", "missing", "unreadable", "estimated_stale",
        "method", "examples"}`` (up to 5 example paths)."""
        return {
            "total": self.total,
            "sampled": self.sampled,
            "changed": self.changed,
            "missing": self.missing,
            "unreadable": self.unreadable,
            "estimated_stale": self.estimated_stale,
            "method": ("stat, then SHA-256 when the stat differs" if self.hashed else "stat only (size and mtime)")
            + (", random sample" if self.sampled < self.total else ", every file"),
            "examples": [str(p) for p in (*self.changed_paths, *self.missing_paths)[:5]],
        }


def sample_drift(
    records: Sequence[FileRecord], *, sample_size: int, hash_changed: bool, rng: random.Random | None = None
) -> DriftSample:
    """Compare up to ``sample_size`` of ``records`` (a uniform random sample, all of them when
    fewer) with the disk: a file whose size and mtime match is unchanged; otherwise, with
    ``hash_changed``, it is changed only when its SHA-256 differs from the indexed one (a
    ``touch`` is not drift), without, when the stat differs."""
    total = len(records)
    chosen = list(records) if total <= sample_size else (rng or random.Random()).sample(list(records), sample_size)
    changed: list[Path] = []
    missing: list[Path] = []
    unreadable = 0
    for record in chosen:
        try:
            stat = record.path.stat()
        except FileNotFoundError:
            missing.append(record.path)
            continue
        except OSError:
            unreadable += 1
            continue
        if record.same_stat(stat.st_size, stat.st_mtime_ns):
            continue
        if not hash_changed:
            changed.append(record.path)
            continue
        try:
            if sha256_file(record.path) != record.content_hash:
                changed.append(record.path)
        except FileNotFoundError:
            missing.append(record.path)
        except OSError:
            unreadable += 1
    return DriftSample(total, len(chosen), len(changed), len(missing), unreadable, hash_changed,
                       tuple(changed), tuple(missing))


# -- doctor ------------------------------------------------------------------------------------------

LockProbe = Callable[[], tuple[bool | None, int | None]]
"""``() -> (held, pid)``: whether an index run holds the lock now (``None``: cannot tell) and the
process id written in the lock file (``None`` when unknown). Must not block."""


def check_rank_file(rank_file: Any, expected_sha256: str) -> DoctorCheck:
    """``tokenizer`` check: the SHA-256 of the token counter's rank file (a path, or an object
    with ``read_bytes()`` such as an ``importlib.resources`` traversable) against its published
    digest."""
    try:
        data = rank_file.read_bytes() if hasattr(rank_file, "read_bytes") else Path(rank_file).read_bytes()
    except OSError as exc:
        return DoctorCheck("tokenizer", "failed", f"cannot read the o200k_base rank file {rank_file}: {exc}",
                           {"rank_file": str(rank_file)})
    found = hashlib.sha256(data).hexdigest()
    data_json = {"rank_file": str(rank_file), "sha256": found, "expected_sha256": expected_sha256}
    if found == expected_sha256:
        return DoctorCheck("tokenizer", "passed", f"o200k_base rank file {found[:12]}... matches its published hash",
                           data_json)
    return DoctorCheck("tokenizer", "failed",
                       f"the o200k_base rank file hashes to {found[:12]}..., not {expected_sha256[:12]}...: reinstall "
                       "hermes-workspace", data_json)


@dataclass
class Doctor:
    """Checks an index without repairing or writing anything (works on a read-only index).

    ``open_store`` opens the index read-only (it may raise: a damaged file is a failed check);
    ``embedder`` is the configured one (``None``: semantic search off) and ``open_vectors`` opens
    its vector index read-only; ``lock_probe`` and ``tokenizer`` give the lock and tokenizer
    checks; ``drift_sample`` files are compared with the disk."""

    index_path: Path
    open_store: Callable[[], IndexStore]
    embedder: Embedder | None = None
    open_vectors: Callable[[], VectorIndex] | None = None
    lock_probe: LockProbe | None = None
    tokenizer: Callable[[], DoctorCheck] | None = None
    drift_sample: int = DRIFT_SAMPLE
    rng: random.Random = field(default_factory=random.Random)

    def execute(self) -> DoctorReport:
        """Every check, in this order: ``sqlite_integrity``, ``fulltext_index``,
        ``schema_version``, ``vectors``, ``tokenizer``, ``lock``, ``drift``. An index that cannot
        be opened fails ``sqlite_integrity`` and leaves the store checks incomplete; before the
        first ``index`` they are all incomplete.

        The store's checks and the file records of the drift sample are read in one snapshot of
        the index (the store's ``read_snapshot()``, when it has one), so an index run committing
        meanwhile cannot make them disagree. While an index run holds the lock (probed before
        and after the checks), a result that run explains is not a finding: an index that
        cannot be opened, or whose ``schema_version``, ``vectors`` or ``drift`` check failed
        (the run is rebuilding, embedding or re-indexing), is ``incomplete``, with the reason;
        the integrity checks, made on one snapshot, stay as they are."""
        started = time.perf_counter()
        before = self._probe()
        checks: list[DoctorCheck] = []
        records: list[FileRecord] | str | None = None
        try:
            store = self.open_store()
            snapshot = getattr(store, "read_snapshot", None)
            with snapshot() if snapshot is not None else contextlib.nullcontext():
                checks += store.check_integrity()
                records = self._records(store)
        except IndexNotFoundError:
            why = "nothing is indexed yet: run `hermes-workspace index`"
            checks = [DoctorCheck(n, "incomplete", why) for n in ("sqlite_integrity", "fulltext_index",
                                                                 "schema_version", "vectors")]
        except StoreError as exc:  # the index cannot be opened, or no snapshot of it taken
            checks = self._unopened(exc)
        else:
            checks.append(self._vectors())
        checks.append(self._tokenizer())
        held, pid = self._held(before, self._probe())
        checks.append(self._lock(held, pid))
        checks.append(self._drift(records))
        if held:
            checks = [_mid_run(c, pid) for c in checks]
        return DoctorReport(self.index_path, tuple(checks), time.perf_counter() - started)

    def _unopened(self, exc: StoreError) -> list[DoctorCheck]:
        return [DoctorCheck("sqlite_integrity", "failed", exc.message, {"hint": exc.hint, "opened": False}),
                *(DoctorCheck(n, "incomplete", "the index cannot be opened")
                  for n in ("fulltext_index", "schema_version", "vectors"))]

    @staticmethod
    def _records(store: IndexStore) -> list[FileRecord] | str:
        """Every file record, or why they cannot be read."""
        try:
            return list(store.file_records())
        except StoreError as exc:
            return exc.message

    def _probe(self) -> tuple[bool | None, int | None] | None:
        return None if self.lock_probe is None else self.lock_probe()

    @staticmethod
    def _held(*probes: tuple[bool | None, int | None] | None) -> tuple[bool | None, int | None]:
        """``(held, pid)`` over several probes: held when one saw the lock held (its pid), else
        unknown when one could not tell, else free."""
        seen = [p for p in probes if p is not None]
        if not seen:
            return None, None
        for held, pid in seen:
            if held:
                return True, pid
        if any(held is None for held, _ in seen):
            return None, None
        return False, None

    def _vectors(self) -> DoctorCheck:
        if self.embedder is None or self.open_vectors is None:
            return DoctorCheck("vectors", "incomplete", "semantic search is off (knowledgebase.embedder.provider: none)")
        vectors: VectorIndex | None = None
        try:
            vectors = self.open_vectors()
            status = vectors.status()
            expected = self.embedder.signature
            stored_dims, bad = vectors.check_dimensions() if hasattr(vectors, "check_dimensions") else (None, 0)
        except WorkspaceError as exc:
            return DoctorCheck("vectors", "incomplete", f"cannot read the vectors: {exc.message}")
        finally:
            close_vectors(vectors)
        data = {**status.to_json(), "expected_signature": expected, "dimensions": stored_dims,
                "wrong_dimensions": bad}
        if status.signature is None:
            return DoctorCheck("vectors", "incomplete", "no vectors yet: run `hermes-workspace index`", data)
        if status.signature != expected:
            return DoctorCheck("vectors", "failed",
                               "the stored vectors were made by another embedder than the configured one: run "
                               "`hermes-workspace index` to embed again", data)
        if bad:
            return DoctorCheck("vectors", "failed",
                               f"{bad} stored vectors do not have {stored_dims} dimensions: delete the index file "
                               "and run `hermes-workspace index`", data)
        return DoctorCheck("vectors", "passed",
                           f"{status.vectors} vectors of {stored_dims} dimensions from the configured embedder; "
                           f"{status.embedded} of {status.chunks} chunks embedded, {status.pending} pending", data)

    def _tokenizer(self) -> DoctorCheck:
        if self.tokenizer is None:
            return DoctorCheck("tokenizer", "incomplete", "no token counter is installed")
        return self.tokenizer()

    def _lock(self, held: bool | None, pid: int | None) -> DoctorCheck:
        if self.lock_probe is None:
            return DoctorCheck("lock", "incomplete", "this index has no lock file to look at")
        data = {"held": held, "pid": pid if held else None}  # a free lock file names its last holder
        if held is None:
            return DoctorCheck("lock", "incomplete", "cannot tell whether an index run holds the lock", data)
        if held:
            who = f" (process {pid})" if pid else ""
            return DoctorCheck("lock", "passed",
                               f"an index run is in progress{who}: the other checks saw the index mid-run", data)
        return DoctorCheck("lock", "passed", "no index run holds the lock", data)

    def _drift(self, records: list[FileRecord] | str | None) -> DoctorCheck:
        if records is None:
            return DoctorCheck("drift", "incomplete", "the index cannot be read")
        if isinstance(records, str):
            return DoctorCheck("drift", "incomplete", f"cannot read the file records: {records}")
        sample = sample_drift(records, sample_size=self.drift_sample, hash_changed=True, rng=self.rng)
        data = sample.to_json()
        if not sample.sampled:
            return DoctorCheck("drift", "passed", "no file is indexed", data)
        scope = f"{sample.sampled} of {sample.total} files" if sample.sampled < sample.total else f"all {sample.total} files"
        if not (sample.changed or sample.missing):
            return DoctorCheck("drift", "passed", f"{scope} checked: the index matches the disk", data)
        estimate = "" if sample.sampled == sample.total else f" (about {sample.estimated_stale} in the whole index)"
        return DoctorCheck(
            "drift", "failed",
            f"{scope} checked: {sample.changed} changed and {sample.missing} missing on disk since indexing"
            f"{estimate}: run `hermes-workspace index`",
            data,
        )


_EXPLAINED_BY_A_RUN = frozenset({"sqlite_integrity", "schema_version", "vectors", "drift"})
"""Checks whose failure an index run in progress explains: it creates or rebuilds the file (which
cannot be opened, or has no schema or an old one, until its first commit), embeds anew (vectors
of another embedder, until it is done) and re-indexes what changed on disk (drift). For
``sqlite_integrity`` only the failure to open the index counts (``data["opened"] is False``):
``PRAGMA integrity_check`` itself reads one snapshot, which a writer cannot make inconsistent."""


def _mid_run(check: DoctorCheck, pid: int | None) -> DoctorCheck:
    """``check`` as seen while an index run (process ``pid``) holds the lock: ``incomplete``
    instead of ``failed`` when the run explains the failure (:data:`_EXPLAINED_BY_A_RUN`)."""
    if check.status != "failed" or check.name not in _EXPLAINED_BY_A_RUN:
        return check
    if check.name == "sqlite_integrity" and check.data.get("opened") is not False:
        return check
    who = f" (process {pid})" if pid else ""
    return DoctorCheck(check.name, "incomplete",
                       f"an index run{who} is in progress, which explains this; run doctor again when it has "
                       f"finished: {check.detail}", {**check.data, "index_run_in_progress": True})
