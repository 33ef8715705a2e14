"""structlog configuration, done once per process by an entrypoint (DESIGN.md §5 "Logs").

Two destinations through the standard library's handlers: JSON lines with full tracebacks in
``HERMES_HOME/logs/workspace.log`` (DEBUG and up, or ``level`` if lower), and short console
lines on stderr at ``level`` (default WARNING). Libraries that log through the standard ``logging``
module (chonkie, for instance) end up in the same places.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

import structlog

LEVELS = ("debug", "info", "warning", "error", "critical")

_SHARED_PROCESSORS: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure_logging(level: str = "warning", log_file: Path | None = None) -> Path | None:
    """Route structlog and stdlib logging to stderr (``level`` and up) and to ``log_file``.

    ``level`` is one of :data:`LEVELS` (case-insensitive). Returns the log file path actually used,
    or ``None`` when it could not be opened (the console still works; a read-only home must not
    break search). Safe to call more than once: handlers are replaced.
    """
    console_level = getattr(logging, level.upper())
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_hermes", False):
            root.removeHandler(handler)
            handler.close()

    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                _drop_exc_info,
                structlog.dev.ConsoleRenderer(colors=False, pad_event_to=0, exception_formatter=structlog.dev.plain_traceback),
            ],
            foreign_pre_chain=_SHARED_PROCESSORS,
        )
    )
    console._hermes = True  # type: ignore[attr-defined]
    root.addHandler(console)

    used: Path | None = None
    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = logging.handlers.RotatingFileHandler(
                log_file, maxBytes=10 * 1024 * 1024, backupCount=3, encoding="utf-8", delay=True
            )
            file_handler.setLevel(min(logging.INFO, console_level))
            file_handler.setFormatter(
                structlog.stdlib.ProcessorFormatter(
                    processors=[
                        structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                        structlog.processors.dict_tracebacks,
                        structlog.processors.JSONRenderer(),
                    ],
                    foreign_pre_chain=_SHARED_PROCESSORS,
                )
            )
            file_handler._hermes = True  # type: ignore[attr-defined]
            root.addHandler(file_handler)
            used = log_file
        except OSError:
            used = None
    root.setLevel(min(h.level for h in root.handlers if getattr(h, "_hermes", False)))
    # Chatty libraries: their INFO lines are not ours to show.
    for noisy in ("chonkie", "filelock", "charset_normalizer"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, console_level))

    structlog.configure(
        processors=[*_SHARED_PROCESSORS, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    return used


def _drop_exc_info(_logger: object, _name: str, event: dict) -> dict:
    # The console gets one line per event; tracebacks belong in the log file.
    event.pop("exc_info", None)
    event.pop("exception", None)
    return event
