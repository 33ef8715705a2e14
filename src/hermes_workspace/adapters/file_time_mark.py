"""``FileTimeMark``: a :class:`~hermes_workspace.domain.ports.TimeMark` kept as the modification
time of a small file (in the index folder, so that every process using that index shares it)."""

from __future__ import annotations

import os
import time
from pathlib import Path


class FileTimeMark:
    """The mark is ``path``'s modification time; setting it creates the file (empty) or updates
    its time. Another process's mark is seen at once: no cache."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def age_seconds(self) -> float | None:
        """Seconds since the mark was set (0 for a time in the future, as after a clock change),
        ``None`` when the file does not exist or cannot be looked at."""
        try:
            modified = os.stat(self.path).st_mtime
        except OSError:
            return None
        return max(0.0, time.time() - modified)

    def touch(self) -> bool:
        """Set the mark to now; False when the file cannot be written. Never raises."""
        try:
            self.path.touch()
            os.utime(self.path)
        except OSError:
            return False
        return True
