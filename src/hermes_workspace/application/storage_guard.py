"""Storage limits of an index run (issue 12, seed 002): the size budget
(``knowledgebase.storage.max_size``) and the free-disk floor (``knowledgebase.storage.min_free_disk``).

:class:`StorageGuard` is handed to :class:`~hermes_workspace.application.indexing.IndexWorkspace`
and asked two questions: may this file's chunks be added (:meth:`StorageGuard.admit`), and may a
batch of writes start (:meth:`StorageGuard.check_disk`). It reads the index size and the free
space through two injected functions, so that tests give it any numbers.

What counts as the index size is the measuring function's business (the container's, see
:func:`hermes_workspace.adapters.index_storage.index_size`): the bytes the database's pages hold
(files, chunks, the full-text index, vectors, result sets; free pages SQLite reuses before it
grows the file are not counted) plus every other file in the index folder (the converted-text
cache, the lock file). The database's ``-wal`` and ``-shm`` files are not counted: they are
working space that SQLite folds into the database and deletes when the index is closed, and
their size depends on batch timing and concurrent readers, not on what is indexed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hermes_workspace.logs import get_logger
from hermes_workspace.domain.errors import DiskSpaceLowError, reraise_interrupt
from hermes_workspace.domain.sizes import format_size

log = get_logger("hermes_workspace.index")

INDEX_BYTES_PER_CHAR = 1.3
"""Index bytes per character of chunk text: the text itself (stored once, in ``chunks.content``)
plus 0.295 bytes of FTS5 postings. Measured by indexing the Python 3.11 standard library
(29,415 files, 177,412 chunks, 235,481,166 characters of chunk text; SQLite ``dbstat``):
``chunks_fts_data`` 69,410,816 bytes = 0.295 a character."""

INDEX_BYTES_PER_CHUNK = 530
"""Index bytes per chunk besides its text: the row's metadata (lines, section, breadcrumb,
definitions), B-tree slack, its ``chunks_fts_docsize`` row and unique-index entry. Same
measurement as :data:`INDEX_BYTES_PER_CHAR`: (``chunks`` 324,390,912 - content 235,620,971 +
``chunks_fts_docsize`` 2,854,912 + ``sqlite_autoindex_chunks_1`` 2,568,192) / 177,412 chunks."""

INDEX_BYTES_PER_FILE = 515
"""Index bytes per file record: (``files`` 11,345,920 + ``sqlite_autoindex_files_1``
3,796,992) / 29,415 files, same measurement. The three constants together give 414.3 MB for
the measured 414.6 MB of used pages."""

SQLITE_PAGE_SIZE = 4096
"""The index database's page size (SQLite's default, which the store keeps)."""

VECTOR_ROW_BYTES = 70
"""A ``vectors`` row's payload besides its ``4 * dimensions`` bytes of floats: the 64-character
key and the record header."""

VECTOR_INDEX_BYTES = 110
"""Bytes per vector outside its row: its entry in the UNIQUE index on ``key`` and its
``chunk_vectors`` row and index entry."""


def vector_bytes(dimensions: int) -> int:
    """Bytes one stored vector of ``dimensions`` float32 values takes in the index: its
    ``vectors`` row laid out as SQLite's file format lays out a table b-tree leaf cell (a payload
    over ``page - 35`` bytes keeps a local part and spills the rest to overflow pages; a page holds
    as many whole cells as fit, so page packing, not the floats, sets the cost), plus
    :data:`VECTOR_INDEX_BYTES`. Checked against vectors stored by
    :class:`~hermes_workspace.adapters.sqlite_vec_index.SqliteVecIndex` (used pages after minus
    before, per vector): 64 dimensions 450 bytes (formula 451), 256: 1,477 (1,475), 384: 2,161
    (2,158), 512 and 768: 4,213 (4,206), 1024: 4,718 (4,718), 1536: 8,309 (8,302), 3072: 12,910
    (12,910)."""
    usable = SQLITE_PAGE_SIZE
    payload = 4 * max(0, dimensions) + VECTOR_ROW_BYTES
    max_local = usable - 35
    min_local = (usable - 12) * 32 // 255 - 23
    if payload <= max_local:
        local, overflow = payload, 0
    else:
        spill = min_local + (payload - min_local) % (usable - 4)
        local = spill if spill <= max_local else min_local
        overflow = -(-(payload - local) // (usable - 4))
    cell = local + 7 + (4 if overflow else 0)  # size and rowid varints, cell pointer, overflow page number
    per_page = max(1, (usable - 8) // cell)
    return usable // per_page + overflow * usable + VECTOR_INDEX_BYTES


def estimated_cost(chars: int, chunks: int, vector_dimensions: int = 0) -> int:
    """Bytes one file with ``chunks`` chunks of ``chars`` characters in all adds to the index,
    with ``vector_dimensions`` float32 values per chunk when an embedder will give them vectors
    (0: none; an upper bound: a vector shared by chunks of the same text is stored once). See
    :data:`INDEX_BYTES_PER_CHAR` and :func:`vector_bytes` for the measurements behind it."""
    vectors = chunks * vector_bytes(vector_dimensions) if vector_dimensions > 0 else 0
    return int(chars * INDEX_BYTES_PER_CHAR + chunks * INDEX_BYTES_PER_CHUNK + INDEX_BYTES_PER_FILE + vectors)


@dataclass
class StorageGuard:
    """The storage limits of one index run.

    ``max_size``: the budget in bytes (0: none); ``min_free_disk``: the free bytes that must be
    left on the index's file system (0: no check). ``measure()`` gives the index size in bytes
    (see the module docstring); ``free_disk()`` the free bytes where the index is (for
    ``shutil.disk_usage(index folder).free``); ``location`` names that folder in messages.
    ``vector_dimensions()``, when an embedder is configured, gives its vector length, so that the
    estimate reserves room for the vectors the embedding pass adds to the admitted chunks
    (asked once, on the first estimate; a failure counts as no vectors, logged).

    Budget: :meth:`start` measures the index; each file's chunks are admitted while the size at
    the last commit plus the estimates (:func:`estimated_cost`) of the files admitted since stays
    within ``max_size``; after each commit (:meth:`committed`) the size is measured again, so the
    estimates' error never builds up beyond one batch. The first file that does not fit ends the
    admissions: it and every later file that would add chunks are refused (counted in
    ``skipped``), so that the index holds a prefix of the walk and which files get in does not
    depend on their sizes. A refused file that is already indexed keeps its indexed version.
    After the first refusal the run reads no new file (see :meth:`refuse`): each is counted under
    ``budget``, also one that reading would have shown to be empty or binary.
    Space that deleting and pruning frees inside the database counts as free: SQLite reuses it
    before it grows the file.
    """

    max_size: int
    min_free_disk: int
    measure: Callable[[], int]
    free_disk: Callable[[], int]
    location: str = "the index folder"
    vector_dimensions: Callable[[], int] | None = None
    skipped: int = 0
    """Files refused in this run (the summary's ``skipped["budget"]``)."""
    _size: int = field(default=0, init=False)
    _pending: int = field(default=0, init=False)
    _reached: bool = field(default=False, init=False)
    _dimensions: int | None = field(default=None, init=False)

    def start(self) -> None:
        """Begin a run: measure the index (only when there is a budget) and reset the counts."""
        self.skipped, self._pending, self._reached = 0, 0, False
        self._size = self.measure() if self.max_size else 0

    @property
    def reached(self) -> bool:
        """True once a file was refused in this run."""
        return self._reached

    def admit(self, chars: int, chunks: int) -> bool:
        """Whether a file whose chunks hold ``chars`` characters in ``chunks`` chunks may be
        added; False (and counted in :attr:`skipped`) once the budget is reached."""
        if not self.max_size:
            return True
        if not self._reached:
            cost = estimated_cost(chars, chunks, self._vector_dimensions())
            if self._size + self._pending + cost <= self.max_size:
                self._pending += cost
                return True
            self._reached = True
            log.warning("index size budget reached: files not yet indexed are skipped", max_size=self.max_size,
                        size=self._size + self._pending, next_file_estimate=cost)
        self.skipped += 1
        return False

    def refuse(self) -> None:
        """Count a file refused without being read (a new file after the budget was reached:
        it could only add chunks)."""
        self.skipped += 1

    def committed(self) -> None:
        """After a batch was committed: measure the index again (its size replaces the
        estimates of the files admitted since the last measurement)."""
        if self.max_size and not self._reached:
            self._size, self._pending = self.measure(), 0

    def check_disk(self) -> None:
        """Before a batch of writes.

        Raises:
            DiskSpaceLowError: less than ``min_free_disk`` bytes are free where the index is.
        """
        if not self.min_free_disk:
            return
        free = self.free_disk()
        if free < self.min_free_disk:
            log.warning("free disk space below knowledgebase.storage.min_free_disk: writes stopped",
                        free_bytes=free, min_free_disk=self.min_free_disk, location=self.location)
            raise DiskSpaceLowError(
                f"only {format_size(free)} free on the disk of {self.location}, less than "
                f"knowledgebase.storage.min_free_disk ({format_size(self.min_free_disk)}): writes stopped before the "
                "next batch, nothing was half-written"
            )

    def note(self) -> str | None:
        """The summary's note when files were refused for the budget, else ``None``."""
        if not self.skipped:
            return None
        files = "1 file was" if self.skipped == 1 else f"{self.skipped} files were"
        return (f"{files} not indexed because the index reached knowledgebase.storage.max_size "
                f"({format_size(self.max_size)}); files already indexed keep their indexed version. Raise max_size "
                "in config.yaml (0: no limit) and run `hermes-workspace index` again")

    def _vector_dimensions(self) -> int:
        if self._dimensions is None:
            self._dimensions = 0
            if self.vector_dimensions is not None:
                try:
                    self._dimensions = max(0, int(self.vector_dimensions()))
                except Exception as exc:  # noqa: BLE001 - the embedding pass reports the embedder's failure itself
                    reraise_interrupt(exc)
                    log.warning("vector size unknown: the budget estimate leaves vectors out", error=str(exc))
        return self._dimensions
