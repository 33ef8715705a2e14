"""Loggers that import structlog on their first call, for the application and the entry points.

Why: importing structlog costs about 0.1 s (it also imports Rich, for its console renderer, when
Rich is installed), a third of a CLI ``search`` that usually logs nothing at all. Our modules
hold ``log = get_logger(name)`` at import time as before; structlog is imported, and the
configuration the entry points registered with :func:`when_structlog_loads` applied, the first
time a logger method is called.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_pending: list[Callable[[], None]] = []


def when_structlog_loads(configure: Callable[[], None]) -> None:
    """Run ``configure`` (a structlog configuration) now if structlog is already imported, else
    just before the first logger of :func:`get_logger` logs."""
    if "structlog" in sys.modules:
        configure()
    else:
        _pending.append(configure)


def _load_structlog() -> Any:
    import structlog

    while _pending:
        _pending.pop(0)()
    return structlog


class LazyLogger:
    """Stands for ``structlog.get_logger(name)``: attribute access (``log.info``, ``log.bind``...)
    imports structlog, runs the pending configuration, and is then forwarded to the real logger."""

    __slots__ = ("_name", "_logger")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:
        logger = self._logger
        if logger is None:
            logger = self._logger = _load_structlog().get_logger(self._name)
        return getattr(logger, attribute)

    def __repr__(self) -> str:
        return f"LazyLogger({self._name!r})"


def get_logger(name: str) -> Any:
    """A :class:`LazyLogger` named ``name`` (a dotted name under ``hermes_workspace``)."""
    return LazyLogger(name)
