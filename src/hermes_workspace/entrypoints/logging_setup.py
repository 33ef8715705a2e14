"""structlog configuration (DESIGN.md §5 "Logs"), done by the entrypoints only.

Our modules log with structlog, through the lazy loggers of :mod:`hermes_workspace.logs`
(structlog is imported when the first record is written); records go through the standard
``logging`` module, so they reach two destinations:

- a JSON-lines file, ``HERMES_HOME/logs/workspace.log``, with the traceback of every per-file
  failure (without local variables: they would copy file contents into the log);
- for the CLI only, short lines on stderr at ``--log-level`` (default WARNING).

The CLI owns its process and configures the root logger (:func:`configure_cli_logging`). The Python
API is a guest in someone else's process (:func:`configure_library_logging`): it attaches the file
handler to the ``hermes_workspace`` logger only, prints nothing on stdout or stderr, and leaves an
application's own structlog configuration alone.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_workspace.logs import when_structlog_loads

LEVELS = ("debug", "info", "warning", "error", "critical")
LOG_FILE_MAX_BYTES = 10 * 1024 * 1024
LOG_FILE_BACKUPS = 3



def _shared_processors() -> list[Any]:
    import structlog

    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


class _DeferredFormatter(logging.Formatter):
    """Builds its structlog formatter when the first record is formatted: a command that logs
    nothing never imports structlog (see :mod:`hermes_workspace.logs`)."""

    def __init__(self, build: Callable[[], logging.Formatter]) -> None:
        super().__init__()
        self._build = build
        self._formatter: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._formatter is None:
            self._formatter = self._build()
        return self._formatter.format(record)


def _console_formatter() -> logging.Formatter:
    import structlog

    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _drop_exc_info,
            structlog.dev.ConsoleRenderer(colors=False, pad_event_to=0),
        ],
        foreign_pre_chain=_shared_processors(),
    )


def _file_formatter() -> logging.Formatter:
    import structlog

    return structlog.stdlib.ProcessorFormatter(
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.ExceptionRenderer(structlog.tracebacks.ExceptionDictTransformer(show_locals=False)),
            structlog.processors.JSONRenderer(),
        ],
        foreign_pre_chain=_shared_processors(),
    )

_NOISY_LIBRARIES = ("chonkie", "filelock", "charset_normalizer")
_DOCUMENT_LIBRARIES = ("pypdf", "openpyxl", "docx", "pptx", "markitdown")
"""Their warnings (``invalid pdf header``, ``EOF marker not found``...) come before the
conversion error the index summary reports for the same file: errors only."""
_MARK = "_hermes_handler"
_cli_configured = False


def configure_cli_logging(level: str = "warning", log_file: Path | None = None) -> Path | None:
    """Route all logging to stderr at ``level`` (one of :data:`LEVELS`) and to ``log_file`` at
    INFO (or ``level`` if lower). Returns the log file used, or ``None`` if it could not be opened
    (a read-only home must not break search). Safe to call again: our handlers are replaced."""
    global _cli_configured
    _cli_configured = True
    console_level = getattr(logging, level.upper())
    root = logging.getLogger()
    _remove_our_handlers(root)
    console = _CurrentStderrHandler()
    console.setLevel(console_level)
    console.setFormatter(_DeferredFormatter(_console_formatter))
    _mark(console)
    root.addHandler(console)
    file_level = min(logging.INFO, console_level)
    used = _add_file_handler(root, log_file, file_level)
    root.setLevel(min(console_level, file_level) if used else console_level)
    for name in _NOISY_LIBRARIES:
        logging.getLogger(name).setLevel(max(logging.WARNING, console_level))
    for name in _DOCUMENT_LIBRARIES:
        logging.getLogger(name).setLevel(max(logging.ERROR, console_level))
    when_structlog_loads(_configure_structlog)
    return used


def configure_library_logging(log_file: Path | None) -> Path | None:
    """For the Python API: write our INFO-and-up records to ``log_file`` through a handler on the
    ``hermes_workspace`` logger; add nothing to the root logger and print nothing. structlog is
    configured only if the application has not configured it. Returns the file used or ``None``.
    Does nothing in a process whose logging the CLI has configured."""
    if _cli_configured:
        return log_file
    logger = logging.getLogger("hermes_workspace")
    if any(getattr(h, _MARK, None) == str(log_file) for h in logger.handlers):
        return log_file
    _remove_our_handlers(logger)
    used = _add_file_handler(logger, log_file, logging.INFO)
    if used is not None and logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    when_structlog_loads(_configure_structlog_unless_configured)
    return used


class _CurrentStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler writing to whatever ``sys.stderr`` is when a record is emitted, not the
    object it was when the handler was made: a live Rich progress bar replaces ``sys.stderr``
    with a proxy that prints each line above the bar, so a warning during ``index`` no longer
    tears the bar apart."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass  # always the current sys.stderr


def _configure_structlog_unless_configured() -> None:
    import structlog

    if not structlog.is_configured():  # the application's own configuration stays
        _configure_structlog()


def _configure_structlog() -> None:
    import structlog

    structlog.configure(
        processors=[*_shared_processors(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


def _add_file_handler(logger: logging.Logger, log_file: Path | None, level: int) -> Path | None:
    if log_file is None:
        return None
    try:
        handler = _LazyRotatingFileHandler(
            log_file, maxBytes=LOG_FILE_MAX_BYTES, backupCount=LOG_FILE_BACKUPS, encoding="utf-8", delay=True
        )
    except OSError:
        return None
    handler.setLevel(level)
    handler.setFormatter(_DeferredFormatter(_file_formatter))
    _mark(handler, str(log_file))
    logger.addHandler(handler)
    return log_file


class _LazyRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Creates the log folder when the first record is written, so that read-only commands
    (search, status, roots list) leave no trace on disk; an unwritable folder drops the records
    instead of failing the command."""

    def _open(self):  # type: ignore[no-untyped-def]
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _mark(handler: logging.Handler, value: str = "console") -> None:
    setattr(handler, _MARK, value)


def _remove_our_handlers(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        if getattr(handler, _MARK, None) is not None:
            logger.removeHandler(handler)
            handler.close()


def _drop_exc_info(_logger: object, _name: str, event: dict) -> dict:
    # One line per event on the console; tracebacks belong in the log file.
    event.pop("exc_info", None)
    event.pop("exception", None)
    return event
