"""The plugin installed: listed by the workspace, selected by config, used by an index run (the
run asks for two workers; runs this small stay in-process, larger ones rebuild the plugin in each
worker from its entry point), and its chunks carry the tables as sections."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_example_chunker import IniTablesChunker
from hermes_workspace import Workspace
from hermes_workspace.testing import plugin_context

CONFIG = "knowledgebase:\n  chunkers:\n    .ini: ini-tables\n"
INI = "; settings\n[server]\nport = 8080\nhost = example.org\n\n[client]\nretries = 3\ntimeout = 30\n"


def test_tables_are_chunks_with_their_header_as_section() -> None:
    chunks = IniTablesChunker(plugin_context("chunkers", "ini-tables", chunk_size=64, overlap=0)).chunk(
        INI, Path("/ws/app.ini"))
    assert [(c.section, c.line_start, c.line_end) for c in chunks] == [
        (None, 1, 1), ("[server]", 2, 4), ("[client]", 6, 8)]


def test_listed_selected_and_used_by_an_index_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    (home / "config.yaml").write_text(CONFIG)
    for i in range(8):
        (docs / f"app{i}.ini").write_text(INI.replace("8080", f"80{i}").replace("retries = 3", f"retries = {i}"))
        (docs / f"notes{i}.md").write_text(f"# Notes {i}\n\nthe server port is in app{i}.ini\n")
    with Workspace.open(home) as ws:
        [row] = [p for p in ws.plugins().to_json()["plugins"] if p["name"] == "ini-tables"]
        assert (row["category"], row["distribution"], row["builtin"], row["status"], row["active"],
                row["used_for"]) == ("chunkers", "hermes-workspace-example-chunker", False, "ok", True, [".ini"])
        summary = ws.index(workers=2)
        assert (summary.files_indexed, summary.files_errored) == (16, 0)
        hits = ws.search("retries", glob="*.ini", limit=20)
        assert len(hits) == 8 and {h.section for h in hits} == {"[client]"}
        assert json.loads(json.dumps(ws.status_report()["plugins"]))["up_to_date"] is True
