"""A warning logged while the progress bar is live is printed above the bar, not through it (found
in a trial: per-file warnings broke the bar into fragments)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import structlog
from rich.console import Console

from hermes_workspace.adapters.rich_progress import RichProgressSink
from hermes_workspace.entrypoints.logging_setup import configure_cli_logging


def test_a_warning_during_progress_goes_through_the_bar(tmp_path: Path) -> None:
    terminal = io.StringIO()
    configure_cli_logging("warning", tmp_path / "workspace.log")
    try:
        sink = RichProgressSink(Console(file=terminal, force_terminal=True, width=100))
        sink.start(3)
        sink.advance(1, 3, Path("/a.txt"))
        structlog.get_logger("hermes_workspace.index").warning("file failed", path="/x/broken.txt")
        sink.advance(2, 3, Path("/b.txt"))
        sink.finish()
    finally:
        for handler in list(logging.getLogger().handlers):
            if getattr(handler, "_hermes_handler", None) is not None:
                logging.getLogger().removeHandler(handler)
                handler.close()

    output = terminal.getvalue()
    # The bar's line is cleared, the warning printed on lines of its own, then the bar redrawn.
    at = output.index("file failed")
    line_start = output.rindex("\n", 0, at) if "\n" in output[:at] else -1
    assert output[: at].rfind("\x1b[2K") > line_start
    assert "Indexing [2/3]" in output[at:]
