"""The :class:`~hermes_workspace.domain.ports.TaskPool` adapter over worker processes
(``concurrent.futures.ProcessPoolExecutor``).

Workers are started with ``forkserver`` where the platform has it (Linux, macOS), else
``spawn``; never with a plain ``fork`` of the caller, which holds an open SQLite connection and
may run threads (a progress bar). Each worker builds its state once (``setup``: its own
adapters), ignores Ctrl-C (the parent stops the run and the workers with it) and writes nothing
on stdout, nor log records on stderr (what a worker has to report goes back with its results).
Like any use of ``multiprocessing`` with these start methods, a script that indexes through the
Python API must guard its entry point with ``if __name__ == "__main__":``.

Items go to the workers ``items_per_call`` at a time (fewer round trips); results come back in
item order, with at most ``workers * in_flight_per_worker`` such calls submitted and not yet
consumed, so memory stays bounded whatever the number of items. The pool
lives for one :meth:`ProcessTaskPool.map_ordered` run: started at the first item, shut down when
the run ends; if it ends early (an exception, the iterator closed), the pending items are
cancelled and the workers terminated.

No worker outlives the process that started the pool, however that process ends (``kill -9``
included): each worker runs a watchdog thread that ends it as soon as its parent is gone. Without
it a worker blocks forever on its task queue (it holds that queue's write end itself, so it never
sees end-of-file), and since every worker also holds the fork server's "alive" pipe and the
resource tracker's pipe, the fork server and the resource tracker live on too. Once the workers
are gone, both end by themselves (end-of-file on those pipes). The watchdog waits on the parent
sentinel that ``multiprocessing`` gives every child (:func:`multiprocessing.parent_process`: a pipe
end on POSIX, a process handle on Windows), so it works with every start method and needs no
polling. A parent-death signal (Linux ``PR_SET_PDEATHSIG``) would not do: a forkserver worker's
parent is the fork server, not the process that started the pool.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # imported when a pool starts: `search` and small runs never pay for them
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["ProcessTaskPool", "available_cpus"]

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

_state: Any = None
_setup_error: str | None = None


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class WorkerSetupError(RuntimeError):
    """The worker's ``setup()`` failed; raised for every item of that worker."""


def _start_worker(setup: Callable[[], Any]) -> None:
    """Initializer of each worker process."""
    global _state, _setup_error
    # Ctrl-C reaches the whole foreground process group: the parent handles it (and terminates
    # us); a worker must not die with a traceback on the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent()
    # stdout belongs to the parent's output (JSON for the CLI): nothing of ours goes there.
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the worker's life
    # Nor on stderr: without a handler, a library's warning would reach logging's last-resort
    # handler (stderr). What workers have to report comes back with the results.
    logging.getLogger().addHandler(logging.NullHandler())
    try:
        _state = setup()
    except Exception as exc:  # noqa: BLE001 - reported for each item, as a picklable error
        _setup_error = f"{type(exc).__name__}: {exc}"


ORPHAN_EXIT_CODE = 70
"""Exit code of a worker that ends because the process that started it is gone (``EX_SOFTWARE``;
nobody reads it, the fork server reaps the worker)."""


def _watch_parent() -> None:
    """Start a daemon thread that ends this worker (``os._exit``, no cleanup: the state it would
    clean up belongs to the dead parent) once its parent process has exited, killed or not."""
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing (a test calling the initializer itself)
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of the sentinel closes: at its exit
        os._exit(ORPHAN_EXIT_CODE)

    threading.Thread(target=watch, name="hermes-parent-watchdog", daemon=True).start()


def _call(fn: Callable[[Any, Any], Any], items: list[Any]) -> list[tuple[bool, Any]]:
    """``fn`` over a group of items: ``(True, result)`` or ``(False, exception)`` for each, so
    that one item's exception does not lose the results before it."""
    if _setup_error is not None:
        raise WorkerSetupError(f"worker setup failed: {_setup_error}")
    results: list[tuple[bool, Any]] = []
    for item in items:
        try:
            results.append((True, fn(_state, item)))
        except BaseException as exc:  # noqa: BLE001 - raised in the parent at its item
            results.append((False, exc))
            break
    return results


class ProcessTaskPool:
    """Runs ``fn(state, item)`` in ``workers`` processes; see the module docstring.

    Args:
        workers: worker processes (>= 1); default :func:`available_cpus`.
        in_flight_per_worker: calls submitted per worker and not yet consumed (>= 1).
        items_per_call: items sent to a worker in one call (>= 1).
        start_method: ``"forkserver"``, ``"spawn"`` (or ``"fork"``, not recommended); default
            ``forkserver`` where available, else ``spawn``.
        preload: modules the fork server imports once before forking workers, so that each
            worker starts warm (ignored by other start methods, and when a fork server is
            already running in this process).
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        in_flight_per_worker: int = 4,
        items_per_call: int = 1,
        start_method: str | None = None,
        preload: Sequence[str] = (),
    ) -> None:
        self._workers = max(1, workers if workers is not None else available_cpus())
        self._per_worker = max(1, in_flight_per_worker)
        self._per_call = max(1, items_per_call)
        self.start_method = start_method  # None: chosen when a run starts
        self.preload = tuple(preload)

    @property
    def workers(self) -> int:
        return self._workers

    def map_ordered(self, fn: Callable[[S, T], R], setup: Callable[[], S], items: Iterable[T]) -> Iterator[R]:
        return self._run(fn, setup, iter(items))

    def _run(self, fn: Callable[[S, T], R], setup: Callable[[], S], items: Iterator[T]) -> Iterator[R]:
        groups = _groups(items, self._per_call)
        first = next(groups, None)
        if first is None:
            return
        executor = self._executor(setup)
        pending: deque[Future[list[tuple[bool, Any]]]] = deque([executor.submit(_call, fn, first)])
        limit = self._workers * self._per_worker
        finished = False
        try:
            while pending:
                while len(pending) < limit:
                    group = next(groups, None)
                    if group is None:
                        break
                    pending.append(executor.submit(_call, fn, group))
                for ok, value in pending.popleft().result():
                    if not ok:
                        raise value
                    yield value
            finished = True
        finally:
            if finished:
                executor.shutdown(wait=True)
            else:
                _abandon(executor, pending)

    def _executor(self, setup: Callable[[], Any]) -> ProcessPoolExecutor:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        method = self.start_method
        if method is None:
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        if method == "forkserver" and self.preload:
            # '__main__' first, as multiprocessing does by default: the main module is then
            # imported once, in the fork server, not in every worker.
            context.set_forkserver_preload(["__main__", *self.preload])
        if method == "forkserver":
            _start_fork_server()
        return ProcessPoolExecutor(
            max_workers=self._workers, mp_context=context, initializer=_start_worker, initargs=(setup,)
        )


_FORK_SERVER_LOCK = threading.Lock()


def _start_fork_server() -> None:
    """Start the fork server (once per process) without the current folder on its ``sys.path``.

    The fork server runs as ``python -c ...``, so the current folder comes first on its path, and
    CPython 3.11 ignores the parent's ``sys.path`` it is sent: run from the root of a repository
    that holds a package folder (``pydantic/`` in pydantic's own repository), the server imported
    that folder instead of the installed package and every worker failed. ``PYTHONSAFEPATH=1``
    (Python 3.11+) keeps the folder off the path; it is set only while the server starts, so
    nothing else this process starts sees it.
    """
    from multiprocessing import forkserver

    with _FORK_SERVER_LOCK:
        before = os.environ.get("PYTHONSAFEPATH")
        os.environ["PYTHONSAFEPATH"] = "1"
        try:
            forkserver.ensure_running()
        finally:
            if before is None:
                os.environ.pop("PYTHONSAFEPATH", None)
            else:
                os.environ["PYTHONSAFEPATH"] = before


def _groups(items: Iterator[T], size: int) -> Iterator[list[T]]:
    while group := list(islice(items, size)):
        yield group


def _abandon(executor: ProcessPoolExecutor, pending: deque[Future[Any]]) -> None:
    """Stop a run that ended early: cancel what has not started and terminate the workers, so
    that a Ctrl-C or an error does not wait for the files still being chunked.

    A worker terminated while it was sending a result leaves half a message in the result pipe;
    the executor's manager thread, reading it, then waits forever for the rest (this process
    holds a write end of that pipe too, so it never sees end-of-file), and the interpreter's exit,
    which joins that thread, hangs. Closing this process's write end turns that wait into
    end-of-file once the workers are gone: the thread marks the abandoned pool broken and ends.
    """
    for future in pending:
        future.cancel()
    # No public API for either before 3.14; both exist from 3.8 on.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    results = getattr(executor, "_result_queue", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)
    writer = getattr(results, "_writer", None)
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()
