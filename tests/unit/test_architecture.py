"""The dependency rule of DESIGN.md §1, checked by import-linter (contracts in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 4 kept, 0 broken." in proc.stdout


def test_no_name_is_undefined_or_silently_redefined() -> None:
    """Merging parallel branches once dropped the import of two ports (annotations named
    undefined names) and once shadowed a module function with a second one of the same name,
    which broke ``doctor``: pyflakes finds both kinds in the sources and the benchmarks."""
    from pyflakes import api, messages, reporter

    found: list[str] = []

    class Collect(reporter.Reporter):
        def __init__(self) -> None:
            super().__init__(sys.stdout, sys.stderr)

        def flake(self, message: messages.Message) -> None:
            if isinstance(message, (messages.UndefinedName, messages.RedefinedWhileUnused,
                                    messages.UndefinedExport, messages.UndefinedLocal)):
                found.append(str(message))

    api.checkRecursive([str(ROOT / "src"), str(ROOT / "benchmarks")], Collect())
    assert found == []
