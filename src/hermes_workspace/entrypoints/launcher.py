"""The console script's entry point: ``hermes-workspace --version`` answers before the command
line library and the adapters are imported (about 0.2 s of start-up); everything else goes to
:func:`hermes_workspace.entrypoints.cli.main`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code.
    ``--version`` alone prints the version and returns 0 without importing the CLI."""
    tokens = sys.argv[1:] if argv is None else argv
    if tokens == ["--version"]:
        from hermes_workspace import __version__

        sys.stdout.write(__version__ + "\n")
        return 0
    from hermes_workspace.entrypoints.cli import main as cli_main

    return cli_main(argv)
