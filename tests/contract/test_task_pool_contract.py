"""The TaskPool contract, run against the in-memory fake and the process pool adapter.

Functions handed to a pool must be picklable, so they live at module level here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from hermes_workspace.adapters.memory import InlineTaskPool
from hermes_workspace.adapters.process_pool import ProcessTaskPool, WorkerSetupError
from hermes_workspace.domain.ports import TaskPool


def make_state(offset: int) -> dict[str, int]:
    return {"offset": offset, "pid": os.getpid()}


def add(state: dict[str, int], item: int) -> int:
    return item + state["offset"]


def pid_of(state: dict[str, int], item: int) -> tuple[int, int]:
    assert state["pid"] == os.getpid()  # built in the process that works on the item
    return item, os.getpid()


def fail_on_seven(state: dict[str, int], item: int) -> int:
    if item == 7:
        raise ValueError("seven")
    return item


def failing_setup() -> None:
    raise RuntimeError("no grammar")


def prints(state: dict[str, int], item: int) -> int:
    print("a worker must not write on stdout")
    return item


@pytest.fixture(params=["inline", "process"])
def pool(request: pytest.FixtureRequest) -> TaskPool:
    if request.param == "inline":
        p: TaskPool = InlineTaskPool(window=4)
    else:
        p = ProcessTaskPool(2, in_flight_per_worker=2)
    assert isinstance(p, TaskPool)
    return p


class Counted:
    """An iterable that counts how many items were pulled from it."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pulled = 0

    def __iter__(self) -> Iterator[int]:
        for i in range(self.n):
            self.pulled += 1
            yield i


def test_results_come_back_in_item_order(pool: TaskPool) -> None:
    assert list(pool.map_ordered(add, partial(make_state, 100), range(50))) == [i + 100 for i in range(50)]


def test_no_items_no_results(pool: TaskPool) -> None:
    assert list(pool.map_ordered(add, partial(make_state, 1), [])) == []


def test_state_is_built_where_the_items_are_worked_on(pool: TaskPool) -> None:
    results = list(pool.map_ordered(pid_of, partial(make_state, 0), range(20)))
    assert [item for item, _ in results] == list(range(20))
    assert 1 <= len({pid for _, pid in results}) <= pool.workers


def test_items_are_pulled_lazily_with_a_bounded_number_in_flight(pool: TaskPool) -> None:
    items = Counted(1000)
    results = pool.map_ordered(add, partial(make_state, 0), items)
    bound = 4 * pool.workers  # the fixture's pools: at most 4 items in flight per worker
    for consumed in range(1, 30):
        assert next(results) == consumed - 1
        assert items.pulled <= consumed + bound
    results.close()  # type: ignore[attr-defined]
    assert items.pulled < 1000


def test_an_exception_of_fn_is_raised_at_its_item(pool: TaskPool) -> None:
    results = pool.map_ordered(fail_on_seven, partial(make_state, 0), range(20))
    assert [next(results) for _ in range(7)] == list(range(7))
    with pytest.raises(ValueError, match="seven"):
        next(results)


def test_closing_early_cancels_the_rest(pool: TaskPool) -> None:
    results = pool.map_ordered(add, partial(make_state, 0), range(10_000))
    assert next(results) == 0
    results.close()  # type: ignore[attr-defined]
    # A new run works afterwards.
    assert list(pool.map_ordered(add, partial(make_state, 1), range(3))) == [1, 2, 3]


def test_a_failing_setup_fails_the_run() -> None:
    with pytest.raises(WorkerSetupError, match="RuntimeError: no grammar"):
        list(ProcessTaskPool(2).map_ordered(add, failing_setup, range(5)))


def test_workers_write_nothing_on_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    assert list(ProcessTaskPool(2).map_ordered(prints, partial(make_state, 0), range(5))) == list(range(5))
    assert "must not" not in capfd.readouterr().out


# -- the process pool only: ending early while workers send results ------------------------------

EARLY_CLOSE_SCRIPT = '''
from hermes_workspace.adapters.process_pool import ProcessTaskPool


def setup():
    return None


def large(state, item):
    return b"x" * (4 << 20) if item else b""  # 4 MB: the result pipe takes it in many writes


if __name__ == "__main__":
    for _ in range(5):
        results = ProcessTaskPool(2, in_flight_per_worker=2).map_ordered(large, setup, range(100))
        next(results), next(results)
        results.close()  # workers terminated, some of them in the middle of sending a result
    print("closed")
'''


def test_closing_early_while_workers_send_results_lets_the_process_exit(tmp_path: Path) -> None:
    # A worker terminated in the middle of a result left the executor's manager thread waiting
    # for the rest of it, and the interpreter's exit (which joins that thread) hung.
    script = tmp_path / "close_early.py"
    script.write_text(EARLY_CLOSE_SCRIPT)
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path)
    try:
        stdout, stderr = process.communicate(timeout=60)  # a bound for a hang, not a measurement
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert (process.returncode, stdout) == (0, "closed\n")
    assert "leaked" not in stderr
