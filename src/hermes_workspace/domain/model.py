"""The domain model: plain dataclasses that cross every port.

Units used throughout:
- lines are 1-based and inclusive, counted by ``\\n`` only (see :mod:`hermes_workspace.domain.lines`);
- ``start_char``/``end_char`` are offsets in Python characters (code points) into the decoded text
  of a file, half-open: ``text[start_char:end_char] == content``;
- token counts are words (whitespace-separated runs), the unit of ``chunk_size`` and ``overlap``;
- sizes are bytes, times are UTC ISO-8601 strings ending in ``Z``.
"""

from __future__ import annotations

import hashlib
import os

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.domain.exclusions import ExclusionCategory
from hermes_workspace.domain.semantic import EmbeddingReport

ChunkKind = Literal["markdown", "code", "text"]
"""Which chunking path produced a chunk: heading-aware markdown, syntax-tree code, or paragraphs."""

ErrorStage = Literal["discover", "read", "convert", "chunk", "store"]
"""Where a per-file failure happened (seed 000): the walk/stat, decoding, document conversion
(PDF, DOCX...: a damaged file, or a scanned PDF without text), chunking, or the database."""

SkipReason = Literal[
    "unchanged", "binary_suffix", "too_large", "empty", "binary_content", "deleted_by_user", "converter_unavailable",
    "budget", "vanished", "replaced",
]
"""Why a candidate file produced no new chunks without being an error (``deleted_by_user``: removed
with ``delete`` and unchanged since, see :mod:`hermes_workspace.domain.catalog`;
``converter_unavailable``: a document whose converter's library is not installed; ``budget``: its
chunks would have taken the index past ``knowledgebase.storage.max_size``; ``vanished``: deleted
between the walk and its read, pruned as a deleted file is; ``replaced``: another file, a link or
a pipe by the time it was read, left to the next run, as a watch's next batch)."""


@dataclass(frozen=True, slots=True)
class Root:
    """A directory the workspace indexes.

    ``path`` is absolute and resolved (symlinks followed). ``recursive`` False means only the files
    directly inside ``path`` are indexed. ``primary`` marks the workspace directory itself, which
    is always recursive and cannot be removed with ``roots remove``.

    ``name``: the root's stable name (:mod:`hermes_workspace.domain.root_names`). In
    ``WorkspaceConfig.roots`` it is the configured ``name`` (``None`` when the entry has none);
    the roots of ``WorkspaceConfig.all_roots`` (what ``roots list``, search and retrieve use) all
    have one, configured or derived from the folder's name.

    Which files (issue 12, :mod:`hermes_workspace.domain.profiles`): ``profile`` ``None`` or
    ``"code"`` (extensions detected from the project's marker files at each index run);
    ``extensions`` an explicit tuple of lower-cased suffixes (``(".go", ".proto")``), which wins
    over detection, ``None`` when not set; ``max_file_size`` the root's own size cap in bytes
    (larger files are skipped as ``too_large``), replacing ``knowledgebase.indexing.max_file_mb``
    for this root; ``None``: the global cap.
    """

    path: Path
    recursive: bool = False
    primary: bool = False
    name: str | None = None
    profile: str | None = None
    extensions: tuple[str, ...] | None = None
    max_file_size: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``roots list`` JSON shape: ``{"name": str | null, "path": str, "recursive": bool,
        "primary": bool, "profile": "code" | null, "extensions": [str] | null,
        "max_file_size": int (bytes) | null}``."""
        return {
            "name": self.name, "path": str(self.path), "recursive": self.recursive, "primary": self.primary,
            "profile": self.profile,
            "extensions": list(self.extensions) if self.extensions is not None else None,
            "max_file_size": self.max_file_size,
        }


def _file_settings(root: Root) -> list[str]:
    """``root``'s profile, extensions and size cap in words (``profile code``), for messages."""
    words = []
    if root.profile is not None:
        words.append(f"profile {root.profile}")
    if root.extensions is not None:
        words.append(f"extensions {' '.join(root.extensions)}")
    if root.max_file_size is not None:
        words.append(f"files up to {root.max_file_size} bytes")
    return words


RootAction = Literal["added", "updated", "unchanged"]
"""What ``roots add`` did to the config."""


@dataclass(frozen=True, slots=True)
class RootChange:
    """The result of adding a root: the configured ``root`` as it now is, the ``action`` taken,
    and the root as it was before (``previous``, ``None`` when it was not configured). ``path``,
    ``recursive`` and ``primary`` read through to ``root``. ``message`` says what changed, in one
    sentence for people and agents."""

    root: Root
    action: RootAction
    previous: Root | None = None

    @property
    def path(self) -> Path:
        return self.root.path

    @property
    def recursive(self) -> bool:
        return self.root.recursive

    @property
    def primary(self) -> bool:
        return self.root.primary

    @property
    def message(self) -> str:
        def mode(root: Root) -> str:
            return "recursive" if root.recursive else "top level only"

        def described(root: Root) -> str:
            return ", ".join([mode(root), *_file_settings(root)])

        previous = self.previous
        if self.action == "updated" and previous is not None and previous.name != self.root.name:
            renamed = f"renamed root {previous.name} ({self.root.path}) to {self.root.name}"
            if previous.recursive != self.root.recursive:
                renamed += f"; changed from {mode(previous)} to {mode(self.root)}"
            return renamed
        if self.root.primary:
            return f"{self.root.path} is the primary workspace, always indexed recursively; nothing changed"
        if self.action == "added":
            return f"added {self.root.path} as {self.root.name} ({described(self.root)})"
        if self.action == "updated" and previous is not None and _file_settings(previous) != _file_settings(self.root):
            return f"{self.root.path} was already a root; now {described(self.root)}"
        if self.action == "updated" and previous is not None and previous.recursive == self.root.recursive:
            # `roots add PATH --name N` with the name it had by default: the name is pinned.
            return f"{self.root.path} keeps the name {self.root.name}, now written to the config"
        if self.action == "updated" and previous is not None:
            return f"{self.root.path} was already a root; changed from {mode(previous)} to {mode(self.root)}"
        other = "--no-recursive" if self.root.recursive else "--recursive"
        return f"{self.root.path} is already a root ({mode(self.root)}); nothing changed (pass {other} to change it)"

    def to_json(self) -> dict[str, Any]:
        """``{"path", "recursive", "primary"}`` of :meth:`Root.to_json`, plus ``"action"``,
        ``"previous"`` (the earlier ``Root`` JSON or ``null``) and ``"message"``."""
        return {
            **self.root.to_json(),
            "action": self.action,
            "previous": self.previous.to_json() if self.previous is not None else None,
            "message": self.message,
        }


AnchorKind = Literal["page", "slide", "sheet"]
"""What a converted document's anchors count: PDF pages, presentation slides, spreadsheet sheets."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a part of the original document starts in its converted text: ``line`` (1-based,
    a line of the converted text), ``kind``, ``number`` (1-based page, slide or sheet number in
    the document's order) and ``label`` (what people call it: ``"3"`` for a page, the sheet's
    name for a sheet)."""

    line: int
    kind: AnchorKind
    number: int
    label: str


@dataclass(frozen=True, slots=True)
class ConvertedDocument:
    """A document (PDF, DOCX, PPTX, XLSX, EPUB...) as text: ``text`` is markdown (headings, lists,
    tables), ``anchors`` in line order (empty for formats without pages). Line ranges of the
    chunks of a converted file are lines of ``text``."""

    text: str
    anchors: tuple[Anchor, ...] = ()


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A candidate file found under a root: absolute ``path``, its ``root``, ``size`` in bytes,
    ``mtime_ns`` (nanoseconds since the epoch, as ``os.stat`` gives) and ``file_id``, the
    ``(st_dev, st_ino)`` the walk saw (``None`` when the source has none), so that a read can tell
    that the file was replaced since."""

    path: Path
    root: Path
    size: int
    mtime_ns: int
    file_id: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the source saw but will not offer for indexing, with the reason."""

    path: Path
    root: Path
    reason: SkipReason


@dataclass(frozen=True, slots=True)
class ExcludedPath:
    """A file or folder the source left out because it is never indexed by default (a secret,
    a version-control folder, the workspace's own files; see
    :mod:`hermes_workspace.domain.exclusions`). A folder is one item: nothing under it is walked."""

    path: Path
    root: Path
    category: ExclusionCategory
    is_dir: bool = False


@dataclass(frozen=True, slots=True)
class DiscoveryProblem:
    """A path the walk could not look at (vanished, permission denied, symlink loop...)."""

    path: Path
    root: Path
    error_type: str
    message: str


@dataclass(frozen=True, slots=True)
class ChangedScope:
    """What :meth:`~hermes_workspace.domain.ports.FileSource.discover_paths` made of one changed
    path ``given``, yielded before the walk's items: ``path``, the file or folder re-walked for it,
    in the form the walk yields paths (under the resolved root; an ignore file's folder for a
    changed ignore file; the whole root for a folder holding a root), whose indexed files not found
    again are pruned; or ``None`` when no root covers ``given`` (``category``: ``outside_roots``,
    also for a folder a non-recursive root does not walk, or ``workspace_internal`` for the
    index, logs and model folders). A path under two roots gives one item per root."""

    given: Path
    path: Path | None
    category: ExclusionCategory | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """One searchable piece of a file.

    ``content == text[start_char:end_char]`` of the decoded file text, and lines
    ``line_start..line_end`` (1-based, inclusive) of the file hold it. ``tokens`` is its length in
    words. ``section`` is the markdown heading line it sits under (``"## Rollback Procedures"``),
    the code symbol it starts in, or ``None``. ``index`` is its 0-based position in the file.
    ``breadcrumb`` is the path of the structural unit it comes from (``Config.from_file`` for
    code, ``# Models > ## Validators`` for markdown, ``None`` outside every unit) and
    ``definitions`` the qualified names of the definitions or sections that start in it
    (:mod:`hermes_workspace.domain.structure`). For a converted document (PDF, DOCX...), the
    offsets and lines are those of its converted text, ``page`` is the number of the page,
    slide or sheet holding most of the chunk's words and ``anchor`` says where it is in the original (``"page 3"``,
    ``"pages 3-4"``, ``"slide 2"``, ``"sheet Budget"``; :mod:`hermes_workspace.domain.conversion`);
    both ``None`` for other files.
    """

    index: int
    content: str
    start_char: int
    end_char: int
    line_start: int
    line_end: int
    tokens: int
    kind: ChunkKind
    section: str | None = None
    breadcrumb: str | None = None
    definitions: tuple[str, ...] = ()
    page: int | None = None
    anchor: str | None = None


@dataclass(frozen=True, slots=True)
class DecodedText:
    """A file's text and the encoding it was read with: a Python codec name (``utf-8``,
    ``utf-16-le``, ``cp1251``...)."""

    text: str
    encoding: str


def content_hash(data: bytes) -> str:
    """The SHA-256 hex digest of a file's bytes: :attr:`FileRecord.content_hash`, what ``index``
    compares to skip an unchanged file and what ``search``/``read``/``doctor`` compare to tell
    whether the file on disk is still the indexed one."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What the index remembers about one file, to decide whether to re-index it.

    ``content_hash`` is the SHA-256 hex digest of the file's bytes; ``config_signature`` the digest
    of the chunking settings and chunker versions (see :func:`WorkspaceConfig.signature`).
    ``modified_at`` and ``indexed_at`` are UTC ISO-8601 strings. ``encoding`` is the legacy
    encoding (Python codec name) the file was read with, ``None`` for UTF-8 (and UTF-16/32 with a
    byte-order mark) or when unknown.
    """

    path: Path
    root: Path
    content_hash: str
    config_signature: str
    size: int
    mtime_ns: int
    modified_at: str
    indexed_at: str
    chunk_count: int = 0
    encoding: str | None = None

    def same_stat(self, size: int, mtime_ns: int) -> bool:
        """True when ``size`` (bytes) and ``mtime_ns`` are the ones recorded at indexing: the
        file is taken as unchanged without reading it, as ``index`` does."""
        return size == self.size and mtime_ns == self.mtime_ns


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Where a near-duplicate of a hit's chunk also is: an absolute ``path`` and the 1-based,
    inclusive ``line_start``..``line_end`` of that copy (see :mod:`hermes_workspace.domain.diversity`)."""

    path: Path
    line_start: int
    line_end: int

    def to_json(self) -> dict[str, Any]:
        """``{"path": str, "line_start": int, "line_end": int}``."""
        return {"path": str(self.path), "line_start": self.line_start, "line_end": self.line_end}


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A ranked search result. Field names are a public JSON contract (seed 000).

    ``score`` is a relevance score, higher is better: BM25 as computed by the store (sign flipped
    from SQLite's convention so that all scores in the project sort the same way) in keyword
    mode, the cosine similarity in semantic mode, the RRF score in hybrid mode, the reranker's
    score after reranking.

    How a hit was found, set in semantic and hybrid modes only (``None`` otherwise, and then left
    out of the JSON, so keyword results look as they always did): ``keyword_rank`` and
    ``semantic_rank`` (1-based rank among each retriever's candidates, ``None`` when that
    retriever did not return it), ``similarity`` (cosine, -1..1), ``fused_score`` (RRF) and
    ``rerank_score``. In the JSON they are all present (``null`` where unset) as soon as one is
    set, all absent otherwise.

    Order: hits are sorted by ``score``, best first, except for documented keys that come
    before it. ``exact_matches`` is set (and in the JSON) when the query holds identifiers typed
    whole (``read_file``, ``json.loads``): how many of them the chunk contains exactly; hits are
    then ordered by ``exact_matches`` first. For a short lookup (at most four words),
    ``definition_matches`` is set too, how many of those identifiers the chunk *defines* (its
    ``breadcrumb`` or ``definitions`` name them, :mod:`hermes_workspace.domain.ranking`), and
    comes before ``exact_matches``. Within that, with a reranker, the hits it scored
    (``rerank_score`` set, their ``score`` is that score) come before the others, which keep the
    fused order and score. Before all of these comes the per-file cap
    (``knowledgebase.retriever.max_hits_per_file``, N): the hits that are among the N best of
    their file come first, then the others, each part in the order just described.
    ``file_rank`` (the hit's 1-based rank among the hits of its file) is set, and in the JSON, on
    every hit when the list holds such a moved hit (``file_rank > N``); absent otherwise, when the
    cap changed nothing that is shown. The full key is thus ``(file_rank <= N,
    definition_matches, exact_matches, reranked, score)``, each descending. In hybrid mode the best keyword hit of a distinctive query
    may be lifted to rank 3 (:func:`~hermes_workspace.domain.fusion.keep_best_keyword_hit`); its
    ``score`` then equals that of the hit below it (``fused_score`` keeps its own).

    ``breadcrumb`` and ``definitions`` come from the chunk (:class:`Chunk`); ``root`` is the
    root the file was indexed under (not in the JSON). ``root_name``: the name of the root the
    hit belongs to (the deepest configured root that indexes its path,
    :func:`~hermes_workspace.domain.root_names.covering_root`), set by the search; ``null`` in
    the JSON when no configured root holds the file (a root removed since indexing).

    ``duplicates``: near-duplicates of this chunk in other files that were folded into this hit
    (the best-ranked copy), each as a :class:`Duplicate` (path and lines), in rank order; in the
    JSON a list of ``{"path", "line_start", "line_end"}`` objects, present only when non-empty.
    The rule is in :mod:`hermes_workspace.domain.diversity`.

    Verification (set by ``search`` and ``retrieve``, in the JSON when set): ``file_hash``, the
    SHA-256 hex digest of the file's bytes when it was indexed (what ``read`` compares the file
    on disk with); ``stale``, True when the file on disk is no longer those bytes (edited or
    deleted since indexing: its line range may point at other text), False when it still is;
    ``handle``, the stable ``SET:ORDINAL`` name of this hit in a persisted result set
    (:mod:`hermes_workspace.domain.handles`), for ``read HANDLE``.

    Converted documents (PDF, DOCX, PPTX, XLSX, EPUB): ``line_start``/``line_end`` are lines of
    the converted text (what ``read`` returns), ``page`` the page/slide/sheet number holding
    most of the chunk's words and ``anchor`` where it is in the original (``"pages 3-4"``, see :class:`Chunk`); in the
    JSON both, only for hits of converted files (absent otherwise, as the other optional fields).
    """

    path: Path
    line_start: int
    line_end: int
    section: str | None
    chunk_index: int
    score: float
    tokens: int
    modified: str
    content: str
    keyword_rank: int | None = None
    semantic_rank: int | None = None
    similarity: float | None = None
    fused_score: float | None = None
    rerank_score: float | None = None
    exact_matches: int | None = None
    breadcrumb: str | None = None
    definitions: tuple[str, ...] = ()
    definition_matches: int | None = None
    root: Path | None = None
    duplicates: tuple[Duplicate, ...] = ()
    file_rank: int | None = None
    file_hash: str | None = None
    stale: bool | None = None
    handle: str | None = None
    page: int | None = None
    anchor: str | None = None
    root_name: str | None = None

    @property
    def key(self) -> tuple[Path, int]:
        """``(path, chunk_index)``: the chunk this hit is, the same whichever retriever found it."""
        return (self.path, self.chunk_index)

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object of seed 000: path, ``root_name`` (issue 12), line_start, line_end,
        section, chunk_index, score, tokens, modified, content; ``breadcrumb`` (the chunk's unit
        path, or ``null``) and ``definitions`` (a list of qualified names) always; plus ``exact_matches``,
        ``definition_matches``, ``file_rank``, ``file_hash``, ``stale``, ``handle`` and the
        provenance fields when they are set, ``page`` and ``anchor`` for a converted document,
        and ``duplicates`` when non-empty."""
        data = asdict(self)
        data["path"] = str(self.path)
        data = {"path": data.pop("path"), "root_name": data.pop("root_name"), **data}
        data["definitions"] = list(self.definitions)
        del data["root"]  # internal: the file role is computed from the path below it
        if data["definition_matches"] is None:
            del data["definition_matches"]
        data["score"] = round(self.score, 6)
        for name in ("exact_matches", "file_rank", "file_hash", "stale", "handle"):
            if data[name] is None:
                del data[name]
        if self.anchor is None:
            del data["page"], data["anchor"]
        if self.duplicates:
            data["duplicates"] = [d.to_json() for d in self.duplicates]
        else:
            del data["duplicates"]
        if all(data[name] is None for name in _PROVENANCE):
            for name in _PROVENANCE:
                del data[name]
            return data
        for name in _PROVENANCE:
            if isinstance(data[name], float):
                data[name] = round(data[name], 6)
        return data


_PROVENANCE = ("keyword_rank", "semantic_rank", "similarity", "fused_score", "rerank_score")


def scope_json(value: Any) -> dict[str, Any]:
    """The ``scope`` of a search or retrieve response, from ``value`` (a scope as recorded, or
    ``None``): ``{"roots": [names], "home": name or None, "widened": bool, "coverage": [rows]}``.

    ``roots``: the roots whose files were searched, in root order. ``home``: the root the search
    started in because the working directory is inside it (issue 12's scoping; ``None`` when the
    roots were chosen explicitly, no working directory was given, or it is in no root).
    ``widened``: the home root had no hit at all, so every root was searched (then ``roots``
    lists them all). ``coverage``: one row per root of ``roots``, in the same order, saying
    whether everything in it could be searched (:class:`RootCoverage`, :meth:`RootCoverage.to_json`).
    Keys missing from ``value`` (result sets frozen before issue 12, before ``home`` or before
    ``coverage``) read as empty, ``None``, ``false`` and ``[]``."""
    if not isinstance(value, Mapping):
        value = {}
    home = value.get("home")
    rows = value.get("coverage")
    return {
        "roots": [str(name) for name in value.get("roots") or ()],
        "home": home if isinstance(home, str) else None,
        "widened": bool(value.get("widened")),
        "coverage": [dict(row) for row in rows if isinstance(row, Mapping)] if isinstance(rows, list) else [],
    }


UNSEARCHED_KINDS = ("unreadable", "too_large", "excluded", "embedding_pending")
"""The kinds of content a root's coverage counts as not searched (:class:`RootCounts`,
:class:`RootCoverage`), in the order of the JSON."""

UnavailableReason = Literal["missing", "not_a_directory", "not_readable", "not_indexed"]
"""Why a root could not be searched at all: its folder is ``missing``, is ``not_a_directory`` or
is ``not_readable`` now (one ``stat`` at query time), or it was never walked by an index run
(``not_indexed``: added since, or indexed by a version that did not record coverage)."""


@dataclass(frozen=True, slots=True)
class RootCounts:
    """What the last index run that walked a root could not make searchable under it, recorded
    per root (``IndexStore.record_root_counts``) so that a search reports it without a walk.

    ``unreadable``: files and folders that could not be listed, read, decoded, converted or
    chunked (every per-file error of the run under the root, the root itself included when it
    could not be walked; an invalid ignore-file line is not one). ``too_large``: files over
    ``knowledgebase.indexing.max_file_mb``. ``excluded``: files left out for a reason the user
    may not expect and can change: a symbolic link leading outside every root
    (``outside_roots``: add its target's folder as a root) and a document whose converter's
    library is not installed (``converter_unavailable``), and a file refused because the index
    reached ``knowledgebase.storage.max_size`` (``budget``). Secrets, version-control folders and
    the workspace's own files are left out by design, like binary, empty and ignored files and
    files removed with ``delete``: they never make a root partial. ``indexed_at``: when the run
    finished (UTC ISO-8601)."""

    indexed_at: str
    unreadable: int = 0
    too_large: int = 0
    excluded: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{"indexed_at", "unreadable", "too_large", "excluded"}``."""
        return {"indexed_at": self.indexed_at, "unreadable": self.unreadable, "too_large": self.too_large,
                "excluded": self.excluded}

    @classmethod
    def from_json(cls, data: Any) -> RootCounts | None:
        """The counts :meth:`to_json` gave, or ``None`` for anything else (a damaged record reads
        as no record: the root is then reported ``not_indexed`` until the next run)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("indexed_at"), str):
            return None
        counts = {k: data.get(k, 0) for k in ("unreadable", "too_large", "excluded")}
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
            return None
        return cls(indexed_at=data["indexed_at"], **counts)


CoverageState = Literal["complete", "partial", "unavailable"]
"""A root's coverage in a response: everything searchable, some content not searched, or nothing."""


@dataclass(frozen=True, slots=True)
class RootCoverage:
    """Whether everything under one root could be searched (issue 12, after seed 004's member
    coverage), derived by :meth:`of` from the root's recorded :class:`RootCounts`, a ``stat`` of
    its folder at query time and its chunks without vectors.

    ``state``: ``unavailable`` (``reason``, see :data:`UnavailableReason`) when nothing of it can
    be searched now; else ``partial`` when one of the counts is above 0, else ``complete``.
    ``unsearched``: by kind (:data:`UNSEARCHED_KINDS`): ``unreadable``, ``too_large``,
    ``excluded`` (files, see :class:`RootCounts`) and ``embedding_pending`` (chunks without a
    vector, counted only for a semantic or hybrid search, or in ``status`` when an embedder is
    configured)."""

    root: str
    state: CoverageState
    unsearched: dict[str, int] = field(default_factory=dict)
    reason: UnavailableReason | None = None

    @classmethod
    def of(
        cls, name: str, counts: RootCounts | None, problem: UnavailableReason | None, pending: int = 0
    ) -> RootCoverage:
        """The coverage of the root ``name``: ``problem`` (its folder now) first, then no
        ``counts`` (``not_indexed``), then the counts and ``pending`` chunks."""
        if problem is not None:
            return cls(name, "unavailable", reason=problem)
        if counts is None:
            return cls(name, "unavailable", reason="not_indexed")
        unsearched = {"unreadable": counts.unreadable, "too_large": counts.too_large, "excluded": counts.excluded,
                      "embedding_pending": max(0, pending)}
        if any(unsearched.values()):
            return cls(name, "partial", unsearched)
        return cls(name, "complete")

    def to_json(self) -> dict[str, Any]:
        """``{"root": name, "state": "complete"}``; ``{"root", "state": "partial", "unsearched":
        {"unreadable", "too_large", "excluded", "embedding_pending"}}`` (all four counts);
        ``{"root", "state": "unavailable", "reason"}``."""
        data: dict[str, Any] = {"root": self.root, "state": self.state}
        if self.state == "partial":
            data["unsearched"] = {kind: int(self.unsearched.get(kind, 0)) for kind in UNSEARCHED_KINDS}
        elif self.state == "unavailable":
            data["reason"] = self.reason
        return data

    def describe(self) -> str:
        """One phrase for people: ``notes complete``, ``notes partial (3 unsearched: 2 unreadable,
        1 too large)``, ``old unavailable (missing)``."""
        if self.state == "unavailable":
            return f"{self.root} unavailable ({str(self.reason).replace('_', ' ')})"
        if self.state == "complete":
            return f"{self.root} complete"
        parts = [f"{n} {kind.replace('_', ' ')}" for kind in UNSEARCHED_KINDS if (n := self.unsearched.get(kind, 0))]
        return f"{self.root} partial ({', '.join(parts)})"


def coverage_line(rows: Iterable[Mapping[str, Any]]) -> str:
    """The rows of a ``scope["coverage"]`` (:meth:`RootCoverage.to_json`) as one line for
    people: ``coverage: workspace complete; notes partial (2 unreadable)``; ``""`` for none."""
    phrases = []
    for row in rows:
        state = row.get("state")
        if state == "partial":
            counts = row.get("unsearched") or {}
            phrases.append(RootCoverage(str(row.get("root")), "partial", dict(counts)).describe())
        else:
            phrases.append(RootCoverage(str(row.get("root")), state, reason=row.get("reason")).describe())
    return f"coverage: {'; '.join(phrases)}" if phrases else ""


class SearchResults(list[SearchHit]):
    """The hits of one search (a ``list``, best first) and how they were produced.

    ``mode``: the mode that ran (``keyword``, ``semantic``, ``hybrid``); ``requested_mode``: the
    one asked for (``hybrid`` falls back to ``keyword`` when the semantic side cannot help);
    ``semantic_status``: see :data:`~hermes_workspace.domain.semantic.SemanticStatus`;
    ``fusion``: the RRF weights used, or ``None``; ``reranker``: the reranker that ordered the
    hits, or ``None``; ``notes``: human sentences on fallbacks (empty when nothing fell back).
    ``scope``: the roots searched, ``{"roots": [names], "home": name or None, "widened": bool}``
    (:func:`scope_json`).

    Paging (set by ``Workspace.search`` and ``Workspace.more``): ``result_set``, the id of the
    frozen result set these hits are a page of (``None`` when it could not be saved, e.g. a
    read-only index); ``offset``, the 0-based position of the first hit in it; ``total``, the
    hits frozen in it; ``cursor``, ``SET@OFFSET`` of the next page, ``None`` when there is none
    (:mod:`hermes_workspace.domain.handles`).
    """

    def __init__(
        self,
        hits: Iterable[SearchHit] = (),
        *,
        mode: str = "keyword",
        requested_mode: str | None = None,
        semantic_status: str = "disabled",
        fusion: dict[str, Any] | None = None,
        reranker: str | None = None,
        notes: Iterable[str] = (),
    ) -> None:
        super().__init__(hits)
        self.mode = mode
        self.requested_mode = requested_mode or mode
        self.semantic_status = semantic_status
        self.fusion = fusion
        self.reranker = reranker
        self.notes = list(notes)
        self.scope: dict[str, Any] = scope_json(None)
        self.result_set: str | None = None
        self.offset = 0
        self.total = len(self)
        self.cursor: str | None = None
        self.ranked: list[SearchHit] = list(self)
        """Every hit the search ranked, before the cut to ``limit`` (these hits are its head):
        what a result set freezes, so that the next pages continue the same ranking. Not in
        the JSON."""

    def envelope(self) -> dict[str, Any]:
        """``{"mode", "requested_mode", "semantic_status", "fusion", "reranker", "notes", "scope",
        "result_set", "offset", "total", "cursor", "hits": [hit JSON...]}``: the response object
        of ``search --envelope`` and ``more``."""
        return {
            "mode": self.mode,
            "requested_mode": self.requested_mode,
            "semantic_status": self.semantic_status,
            "fusion": self.fusion,
            "reranker": self.reranker,
            "notes": list(self.notes),
            "scope": scope_json(self.scope),
            "result_set": self.result_set,
            "offset": self.offset,
            "total": self.total,
            "cursor": self.cursor,
            "hits": [hit.to_json() for hit in self],
        }

    def to_json(self) -> dict[str, Any]:
        """The same object as :meth:`envelope` (every result object has ``to_json``)."""
        return self.envelope()


@dataclass(frozen=True, slots=True)
class FileFailure:
    """One per-file failure in an index run (seed 000 calls it ``IndexError``)."""

    path: str
    stage: ErrorStage
    error_type: str
    message: str

    def to_json(self) -> dict[str, Any]:
        """``{"path", "stage", "error_type", "message"}``."""
        return asdict(self)


MAX_REPORTED_ERRORS = 50
"""Seed 000: the summary keeps at most 50 errors; ``files_errored`` holds the full count."""


@dataclass(slots=True)
class IndexSummary:
    """The result of an index run; :meth:`to_json` is the summary object of seed 000.

    ``files_skipped`` counts every candidate that produced no new chunks without an error;
    ``skipped`` breaks it down by :data:`SkipReason`. ``excluded`` counts the files and folders
    left out by the always-on exclusions, by
    :data:`~hermes_workspace.domain.exclusions.ExclusionCategory` (a folder counts once; these
    are not candidates, so not in ``files_skipped``). ``duration_seconds`` is wall time.
    """

    files_indexed: int = 0
    files_skipped: int = 0
    files_pruned: int = 0
    files_errored: int = 0
    chunks_created: int = 0
    duration_seconds: float = 0.0
    errors: list[FileFailure] = field(default_factory=list)
    errors_truncated: bool = False
    skipped: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, int] = field(default_factory=dict)
    semantic: EmbeddingReport | None = None
    vectors_pruned: int = 0
    """Orphaned vectors deleted at the end of the run (no chunk uses them: their files changed,
    were deleted or pruned); in the JSON only when non-zero."""
    notes: list[str] = field(default_factory=list)
    """Sentences for the user about the run as a whole (a converter whose library is missing,
    with the install command), each once; in the JSON only when non-empty."""
    changed_paths: dict[str, int] | None = None
    """For a run over changed paths only (``index --path``): ``{"given": n, "ignored": k}``, the
    paths given and those no root covers (outside every root, or in the index folder), which were
    left alone; ``None`` for a whole run. In the JSON only when set."""

    _roots: dict[str, dict[str, int]] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Per-root counts of the roots this run walks (:meth:`track_roots`), by root folder as
    configured (``str``), for :meth:`root_counts`. Not in the JSON."""
    _folders: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Each tracked folder (configured and resolved) -> the configured one, its key in ``_roots``."""

    def add_note(self, note: str) -> None:
        """Add ``note`` unless it is there already."""
        if note not in self.notes:
            self.notes.append(note)

    def track_roots(self, roots: Iterable[tuple[Path, Path]]) -> None:
        """Count, from now on, what each root leaves unsearched (:class:`RootCounts`): a run that
        walks these roots whole calls it before the walk. ``roots``: ``(folder as configured,
        folder with symlinks resolved)`` pairs (the file source yields paths under the resolved
        one); a counted path belongs to the deepest tracked folder holding it, which is its root
        since roots overlap nowhere (the config refuses it)."""
        for configured, real in roots:
            key = str(configured)
            self._roots.setdefault(key, {"unreadable": 0, "too_large": 0, "excluded": 0})
            self._folders[key] = key
            self._folders.setdefault(str(real), key)

    def _count_for_root(self, path: Path | str, kind: str) -> None:
        if not self._folders:
            return
        text = str(path)
        best = None
        for folder in self._folders:
            if (text == folder or text.startswith(folder.rstrip(os.sep) + os.sep)) and (
                best is None or len(folder) > len(best)
            ):
                best = folder
        if best is not None:
            self._roots[self._folders[best]][kind] += 1

    def root_counts(self, finished_at: str) -> dict[Path, RootCounts]:
        """The counts of every tracked root (:meth:`track_roots`), stamped ``finished_at``;
        ``{}`` when no root was tracked (a run that did not walk its roots whole)."""
        return {Path(folder): RootCounts(indexed_at=finished_at, **counts) for folder, counts in self._roots.items()}

    def add_error(self, failure: FileFailure) -> None:
        """Count a failure; keep it in ``errors`` while fewer than 50 are kept. It counts as
        ``unreadable`` for its root (:meth:`track_roots`), unless it is an invalid line of an
        ignore file (the files are walked all the same)."""
        self.files_errored += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(failure)
        else:
            self.errors_truncated = True
        if failure.error_type != "IgnorePatternError":
            self._count_for_root(failure.path, "unreadable")

    def add_skip(self, reason: SkipReason, path: Path | None = None) -> None:
        """Count a skipped file under ``reason``; with its ``path``, a ``too_large``,
        ``converter_unavailable`` or ``budget`` skip also counts for its root (:class:`RootCounts`)."""
        self.files_skipped += 1
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if path is not None and reason in _ROOT_SKIP_KINDS:
            self._count_for_root(path, _ROOT_SKIP_KINDS[reason])

    def add_exclusion(self, category: str, path: Path | None = None) -> None:
        """Count a path left out by the always-on exclusions; with its ``path``, an
        ``outside_roots`` link also counts as ``excluded`` for its root (:class:`RootCounts`)."""
        self.excluded[category] = self.excluded.get(category, 0) + 1
        if path is not None and category in _ROOT_EXCLUSIONS:
            self._count_for_root(path, "excluded")

    def to_json(self) -> dict[str, Any]:
        """The seed 000 summary object, plus ``skipped`` (a breakdown by reason), ``excluded``
        (always-on exclusions by category, see :meth:`add_exclusion`) and, when an embedder is
        configured, ``semantic`` (the embedding pass, see :class:`EmbeddingReport`), and ``notes``
        when there are any (see :attr:`notes`)."""
        return {
            "files_indexed": self.files_indexed,
            "files_skipped": self.files_skipped,
            "files_pruned": self.files_pruned,
            "files_errored": self.files_errored,
            "chunks_created": self.chunks_created,
            "duration_seconds": round(self.duration_seconds, 3),
            "errors": [e.to_json() for e in self.errors],
            "errors_truncated": self.errors_truncated,
            "skipped": dict(sorted(self.skipped.items())),
            "excluded": dict(sorted(self.excluded.items())),
            **({"semantic": self.semantic.to_json()} if self.semantic is not None else {}),
            **({"vectors_pruned": self.vectors_pruned} if self.vectors_pruned else {}),
            **({"notes": list(self.notes)} if self.notes else {}),
            **({"changed_paths": dict(self.changed_paths)} if self.changed_paths is not None else {}),
        }


_ROOT_SKIP_KINDS: dict[str, str] = {"too_large": "too_large", "converter_unavailable": "excluded",
                                    "budget": "excluded"}
"""Skip reasons that leave a root partial, and the :class:`RootCounts` field they count in."""

_ROOT_EXCLUSIONS = frozenset({"outside_roots"})
"""Always-on exclusion categories that leave a root partial (:class:`RootCounts`): the user can
change them (add the link's target as a root); secrets, version control and the workspace's own
files are out by design."""


@dataclass(frozen=True, slots=True)
class ResultSet:
    """One frozen list of hits, persisted so that handles and cursors name the same hits later
    (:mod:`hermes_workspace.domain.handles`).

    ``set_id``: 8 lowercase hex characters, random, never reused; ``kind``: ``"search"`` or
    ``"retrieve"``; ``query`` and ``options`` (JSON-able: mode, path, glob, limit, budget...) as
    asked; ``hits``: the hits in rank order (handle ``set_id:1`` is ``hits[0]``), each with its
    content, ``file_hash`` and ``root``; ``created_at`` and ``expires_at``: Unix seconds."""

    set_id: str
    kind: str
    query: str
    options: dict[str, Any]
    hits: tuple[SearchHit, ...]
    created_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class StoreStatus:
    """Counts and size of an index: ``files``, ``chunks``, ``size_bytes`` on disk (0 for memory),
    ``excluded``: the always-on exclusions of the last index run by category (empty before
    the first run; see :meth:`IndexSummary.add_exclusion`), and ``indexed``: False when there is
    no index yet (all counts are then 0)."""

    files: int
    chunks: int
    size_bytes: int
    excluded: dict[str, int] = field(default_factory=dict)
    indexed: bool = True
    last_indexed_at: str | None = None
    """When the last index run finished (UTC ISO-8601), ``None`` before the first one."""
    skipped: dict[str, int] = field(default_factory=dict)
    """The last index run's skipped files by reason (as :attr:`IndexSummary.skipped`)."""
    stale_estimate: dict[str, Any] | None = None
    """How many indexed files changed on disk since, estimated from a small stat-only sample
    (``{"total", "sampled", "changed", "missing", "unreadable", "estimated_stale", "method",
    "examples"}``); ``None`` when not computed (a store reports none; ``Workspace.status`` adds it)."""

    def to_json(self) -> dict[str, Any]:
        """``{"indexed", "files", "chunks", "size_bytes", "excluded", "last_indexed_at",
        "skipped_last_run", "stale_estimate"}``."""
        return {
            "indexed": self.indexed,
            "files": self.files,
            "chunks": self.chunks,
            "size_bytes": self.size_bytes,
            "excluded": dict(sorted(self.excluded.items())),
            "last_indexed_at": self.last_indexed_at,
            "skipped_last_run": dict(sorted(self.skipped.items())),
            "stale_estimate": self.stale_estimate,
        }


ChangeKind = Literal["added", "modified", "deleted"]
"""What happened to a path, as a file watcher reports it. A rename is a ``deleted`` of the old
path and an ``added`` of the new one (OS event APIs report it so, or as two unrelated events)."""

CHANGE_KINDS: tuple[ChangeKind, ...] = ("added", "modified", "deleted")


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file-system event: ``path`` (absolute, as the watcher saw it; a file or a folder, which
    may no longer exist) and its ``kind`` (:data:`ChangeKind`)."""

    path: Path
    kind: ChangeKind
