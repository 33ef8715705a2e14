"""The console script's launcher: `--version` without importing the CLI, everything else through it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_workspace import __version__
from hermes_workspace.entrypoints.launcher import main


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_answers_without_importing_the_command_line(flag: str) -> None:
    code = (f"import sys; from hermes_workspace.entrypoints.launcher import main; rc = main([{flag!r}]); "
            "print(sorted(m for m in sys.modules if m.startswith(('cyclopts', 'hermes_workspace.entrypoints.cli', "
            "'hermes_workspace.container', 'dependency_injector')))); sys.exit(rc)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == [__version__, "[]"]


def test_every_other_command_goes_through_the_command_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roots", "list"]) == 0
    roots = json.loads(capsys.readouterr().out)
    assert roots[0]["primary"] is True


_LOADED_AFTER = (
    "import sys, json; from hermes_workspace.entrypoints.launcher import main; rc = main({argv!r}); "
    "print(json.dumps(sorted(m for m in ('structlog', 'rich', 'pydantic', 'starlette', 'yaml') if m in sys.modules)), file=sys.stderr); sys.exit(rc)"
)


def _modules_loaded_by(argv: list[str], home: Path) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    run = subprocess.run([sys.executable, "-c", _LOADED_AFTER.format(argv=argv)], capture_output=True, text=True,
                         env={**os.environ, "HERMES_HOME": str(home), "HERMES_INDEX_WORKERS": "1"})
    return json.loads(run.stderr.strip().splitlines()[-1]), run


def test_a_search_that_logs_nothing_imports_neither_structlog_nor_the_integrations_of_dependency_injector(home: Path) -> None:
    (home / "workspace").mkdir()
    (home / "workspace" / "notes.md").write_text("# Deploy\n\nRoll back with the blue-green switch.\n")
    _, indexed = _modules_loaded_by(["index"], home)
    assert indexed.returncode == 0, indexed.stderr
    loaded, searched = _modules_loaded_by(["search", "rollback", "blue-green"], home)
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)[0]["line_start"] == 1
    assert loaded == []


def test_a_warning_still_reaches_stderr_and_the_log_file_through_structlog(home: Path) -> None:
    (home / "workspace").mkdir()
    (home / "workspace" / "notes.md").write_text("# Deploy\n\nRoll back with the blue-green switch.\n")
    loaded, run = _modules_loaded_by(["--log-level", "info", "index"], home)
    assert run.returncode == 0, run.stderr
    assert "structlog" in loaded
    assert "index finished" in run.stderr
    records = [json.loads(line) for line in (home / "logs" / "workspace.log").read_text().splitlines()]
    finished = [r for r in records if r["event"] == "index finished"]
    assert finished and finished[0]["level"] == "info" and finished[0]["logger"] == "hermes_workspace.index"


def test_the_integrations_import_normally_once_dependency_injector_is_loaded() -> None:
    code = ("import sys; from hermes_workspace.entrypoints.launcher import import_dependency_injector as load; load(); "
            "before = [m for m in ('pydantic', 'starlette', 'yaml') if m in sys.modules]; "
            "import pydantic, starlette.requests, yaml, dependency_injector.providers as p; "
            "print(before, pydantic.VERSION.startswith('2.'), hasattr(yaml, 'safe_load'), p.Configuration.__name__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["[]", "True", "True", "Configuration"]


_WITH_A_BROKEN_PLUGIN = (
    "import sys; import hermes_workspace.registry as r; "
    "broken = r.PluginEntry('chunkers', 'marker', 'tests.plugin_fixtures:failing_factory', 'someone', '1'); "
    "r.installed_entries = lambda: [*r.builtin_entries('0'), broken]; "
    "from hermes_workspace.entrypoints.launcher import main; sys.exit(main({argv!r}))"
)


@pytest.mark.parametrize("argv", [["index"], ["--quiet", "index"], ["status"], ["plugins"], ["doctor"]])
def test_a_plugin_warning_goes_to_stderr_and_leaves_the_json_whole(home: Path, argv: list[str]) -> None:
    """Found by a trial: the "plugin broken" warning was printed on stdout, before the JSON of
    `index`, `status`, `doctor` and `plugins` (structlog imported outside the lazy loggers, so
    the CLI's logging setup was never applied to it)."""
    (home / "workspace").mkdir()
    (home / "workspace" / "app.ini").write_text("[server]\nport = 80\n")
    (home / "config.yaml").write_text("knowledgebase:\n  chunkers:\n    .ini: marker\n")
    if argv != ["index"]:
        subprocess.run([sys.executable, "-c", _WITH_A_BROKEN_PLUGIN.format(argv=["--quiet", "index"])],
                       env={**os.environ, "HERMES_HOME": str(home)}, cwd=Path(__file__).parents[2], check=True,
                       capture_output=True)
    run = subprocess.run([sys.executable, "-c", _WITH_A_BROKEN_PLUGIN.format(argv=argv)], capture_output=True,
                         text=True, env={**os.environ, "HERMES_HOME": str(home)}, cwd=Path(__file__).parents[2])
    assert run.returncode in (0, 1), run.stderr  # doctor exits 1: its `plugins` check failed
    json.loads(run.stdout)
    assert "plugin broken" not in run.stdout
    if "--quiet" not in argv:
        assert "plugin broken, using the default" in run.stderr
