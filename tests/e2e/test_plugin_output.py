"""A plugin that prints (found by a user trial of issue 11): whatever a plugin writes to stdout,
through ``print`` or straight to file descriptor 1, must stay off the CLI's JSON and off the MCP
stdio wire; it goes to stderr instead. The plugin (``tests.plugin_fixtures:printing_chunker``)
prints when built, when its signature is read and for every file it chunks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from functools import partial

import pytest

from tests.e2e.test_mcp_transports import reap, rpc_answer, rpc_initialize, rpc_send

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_SECONDS = 120

_WITH_A_PRINTING_PLUGIN = (
    "import sys; import hermes_workspace.registry as r; "
    "loud = r.PluginEntry('chunkers', 'loud', 'tests.plugin_fixtures:printing_chunker', 'someone', '1'); "
    "r.installed_entries = lambda: [*r.builtin_entries('0'), loud]; "
    "from hermes_workspace.entrypoints.launcher import main; sys.exit(main({argv!r}))"
)


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}


@pytest.fixture
def loud_home(home: Path) -> Path:
    (home / "workspace").mkdir()
    (home / "workspace" / "app.ini").write_text("[server]\nport = 80\n\nThe rollback switch lives here.\n")
    (home / "config.yaml").write_text("knowledgebase:\n  chunkers:\n    .ini: loud\n")
    return home


def _cli(home: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITH_A_PRINTING_PLUGIN.format(argv=argv)], capture_output=True,
                          text=True, env=_env(home), cwd=ROOT)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_printing_plugin_leaves_the_cli_json_whole(loud_home: Path, workers: str) -> None:
    index = _cli(loud_home, ["index", "--workers", workers])
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["files_indexed"] == 1
    assert "print-plugin: chunking app.ini" in index.stderr
    assert "print-plugin: written to file descriptor 1" in index.stderr
    for argv in (["status"], ["plugins"], ["doctor"], ["search", "rollback switch"]):
        run = _cli(loud_home, argv)
        assert run.returncode == 0, (argv, run.stdout, run.stderr)
        data = json.loads(run.stdout)  # nothing but the JSON on stdout, also after the command
        assert "print-plugin" not in run.stdout
        if argv != ["search", "rollback switch"]:  # search builds no chunker
            assert "print-plugin: at exit, file descriptor 1" in run.stderr
        if argv == ["search", "rollback switch"]:
            assert data[0]["path"] == str(loud_home / "workspace" / "app.ini")
        if argv == ["status"]:
            assert data["plugins"]["up_to_date"] is True
            assert "print-plugin: built" in run.stderr


def test_help_and_version_still_go_to_stdout(loud_home: Path) -> None:
    assert _cli(loud_home, ["search", "--help"]).stdout.startswith("Usage: hermes-workspace search")
    assert _cli(loud_home, ["--version"]).stdout.strip()


def test_a_printing_plugin_leaves_the_mcp_stdio_wire_whole(loud_home: Path) -> None:
    """Every line the server writes to stdout is a JSON-RPC message, until it ends, although the
    plugin prints while ``status`` builds it and while ``index`` chunks (and its print is still
    buffered when the server ends)."""
    pytest.importorskip("mcp")
    process = subprocess.Popen(
        [sys.executable, "-c", _WITH_A_PRINTING_PLUGIN.format(argv=["mcp", "--allow-write"])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(loud_home), cwd=ROOT,
        text=True, encoding="utf-8",
    )
    guard = threading.Timer(HANG_GUARD_SECONDS, process.kill)
    guard.daemon = True
    guard.start()
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None

    send, answer = partial(rpc_send, process), partial(rpc_answer, process)

    try:
        rpc_initialize(process)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "index", "arguments": {}}})
        assert answer(2)["result"]["isError"] is False
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status", "arguments": {}}})
        status = answer(3)["result"]
        assert status["isError"] is False
        assert status["structuredContent"]["files"] == 1
        process.stdin.close()
        assert process.wait() == 0
        rest = process.stdout.read()
        for line in rest.splitlines():
            json.loads(line)  # anything after the last answer is a JSON-RPC message too
        assert "print-plugin" not in rest
        errors = process.stderr.read()
        assert "print-plugin: chunking app.ini" in errors
        assert "print-plugin: written to file descriptor 1" in errors
    finally:
        reap(process, guard)
