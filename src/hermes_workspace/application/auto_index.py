"""Use case: index what changed before a search, at most once per debounce time per workspace
(``knowledgebase.auto_index``, seed 001).

The debounce is a :class:`~hermes_workspace.domain.ports.TimeMark` of the workspace's index (a
file in its index folder), so it is per workspace and shared by every process using that index:
separate CLI searches, the MCP server, a running watch (which keeps it fresh, so that searches do
not index while it does). Seed 001's debounce was one module-global variable for the whole
process, whatever the workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hermes_workspace.domain.errors import IndexBusyError, WorkspaceError
from hermes_workspace.domain.model import IndexSummary
from hermes_workspace.domain.ports import TimeMark
from hermes_workspace.logs import get_logger

log = get_logger("hermes_workspace.auto_index")


@dataclass
class AutoIndex:
    """Runs ``index()`` (a catch-up run: stat only for unchanged files) when ``enabled`` and at
    least ``debounce_seconds`` passed since ``mark`` was last set (by any index run of this
    workspace, this use case included); the mark is set before the run, so that concurrent
    searches of other processes do not start one too."""

    mark: TimeMark
    index: Callable[[], IndexSummary]
    enabled: bool = True
    debounce_seconds: float = 30.0

    def execute(self) -> IndexSummary | None:
        """The run's summary, or ``None`` when no run was made: disabled, within the debounce,
        the mark cannot be written (a read-only index), another process is writing the index
        (:class:`IndexBusyError`: the search goes on at once, never waits), or the run failed
        (logged; the search goes on with the index as it is). Raises only ``KeyboardInterrupt``."""
        if not self.enabled:
            return None
        age = self.mark.age_seconds()
        if age is not None and age < self.debounce_seconds:
            return None
        if not self.mark.touch():
            return None
        try:
            summary = self.index()
        except IndexBusyError:
            log.info("auto index skipped: another process is writing the index")
            return None
        except WorkspaceError as exc:
            log.warning("auto index failed; searching the index as it is", code=exc.code, error=exc.message,
                        hint=exc.hint)
            return None
        log.info("auto index", files_indexed=summary.files_indexed, files_pruned=summary.files_pruned,
                 seconds=round(summary.duration_seconds, 3))
        return summary
