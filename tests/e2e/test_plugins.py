"""Plugins (issue 11): the registry over entry points, config naming plugins, broken plugins
falling back with a note, per-route chunker signatures, worker processes running a third-party
chunker, ``plugins --json``, and our own entry points."""

from __future__ import annotations

import re
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.process_pool import ProcessTaskPool
from hermes_workspace.adapters.progress_sinks import NullProgressSink
from hermes_workspace.container import build_container
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError, UnknownPluginError
from hermes_workspace.domain.plugins import CATEGORIES, RoutedChunker, options_digest
from hermes_workspace.entrypoints.cli import main
from hermes_workspace.registry import (
    BUILTIN_ENTRY_POINTS,
    PluginBrokenError,
    PluginEntry,
    PluginRegistry,
    builtin_entries,
    installed_entries,
    missing_members,
)
from hermes_workspace.testing import plugin_context
from dependency_injector import providers

REPO = Path(__file__).resolve().parents[2]


def registry_with(*extra: PluginEntry) -> PluginRegistry:
    """The built-ins plus ``extra`` (no installation needed)."""
    return PluginRegistry([*builtin_entries("0.1.0"), *extra])


MARKER = PluginEntry("chunkers", "marker", "tests.plugin_fixtures:marker_chunker", "example-plugins", "1.2.3")


def write_config(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text)


def make_docs(home: Path) -> Path:
    docs = home / "workspace" / "docs"
    docs.mkdir(parents=True)
    for i in range(3):
        (docs / f"guide{i}.md").write_text(f"# Guide {i}\n\nrollback steps {i}\n\nmore words here\n")
        (docs / f"app{i}.ini").write_text(f"[server]\nport = 80{i}\n\n[client]\nretries = {i}\n")
    return docs


# -- the registry ------------------------------------------------------------------------------


def test_listing_and_finding_names_imports_no_plugin() -> None:
    loaded: list[str] = []
    entry = PluginEntry("chunkers", "lazy", "nowhere:factory", "x", "1", loader=lambda: loaded.append("lazy"))
    registry = registry_with(entry)
    assert registry.names("chunkers") == ["chonkie", "lazy", "tree-sitter"]
    assert registry.find("chunkers", "lazy") is entry
    assert loaded == []


def test_a_builtin_name_is_found_without_reading_installed_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search naming only built-ins never scans every distribution (about 0.1 s)."""
    scans: list[int] = []
    monkeypatch.setattr("hermes_workspace.registry.installed_entries", lambda: scans.append(1) or builtin_entries())
    registry = PluginRegistry()
    assert registry.find("stores", "sqlite-fts5").target == "hermes_workspace.adapters.builtin_plugins:sqlite_fts5_store"
    assert registry.find("chunkers", "tree-sitter").builtin
    assert scans == []
    with pytest.raises(UnknownPluginError):
        registry.find("chunkers", "third-party")
    assert scans == [1]


def test_an_unknown_name_lists_what_is_installed() -> None:
    with pytest.raises(UnknownPluginError) as raised:
        registry_with(MARKER).find("chunkers", "rst-sections", setting='knowledgebase.chunkers[".rst"]')
    error = raised.value
    assert (error.code, error.exit_code, isinstance(error, ConfigError)) == ("plugin_unknown", 78, True)
    assert error.message == ("""knowledgebase.chunkers[".rst"]: no chunker plugin named 'rst-sections' is installed """
                             "(installed chunkers: chonkie, marker, tree-sitter)")
    assert error.installed == ("chonkie", "marker", "tree-sitter")
    assert "hermes_workspace.chunkers" in error.hint


def test_a_name_registered_twice_prefers_ours_and_lists_the_other_as_shadowed() -> None:
    other = PluginEntry("chunkers", "tree-sitter", "elsewhere:f", "someone-else", "9")
    registry = registry_with(other)
    assert registry.find("chunkers", "tree-sitter").builtin
    assert registry.shadowed() == [other]


def test_an_unknown_chunker_in_config_fails_when_the_workspace_opens(home: Path) -> None:
    write_config(home, "knowledgebase:\n  chunkers:\n    .rst: rst-sections\n")
    with Workspace.open(home, plugin_registry=registry_with(MARKER)) as ws:
        with pytest.raises(UnknownPluginError, match=r"installed chunkers: chonkie, marker, tree-sitter"):
            ws.index()


def test_the_cli_reports_an_unknown_embedder_with_exit_78(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(home, "knowledgebase:\n  embedder:\n    provider: bert\n")
    code = main(["index"])
    error = json.loads(capsys.readouterr().out)["error"]
    assert (code, error["code"]) == (78, "plugin_unknown")
    assert error["message"] == ("knowledgebase.embedder.provider: no embedder plugin named 'bert' is installed "
                                "(installed embedders: model2vec, onnx, openai, sentence-transformers)")


@pytest.mark.parametrize(
    ("chunkers", "message"),
    [
        ({"ini": "marker"}, "unknown key knowledgebase.chunkers.ini"),
        ({".rst": ""}, 'knowledgebase.chunkers[".rst"] must name a chunker'),
        ({"default": "none"}, "knowledgebase.chunkers.default must name a chunker"),
        ({".RST": "a", ".rst": "b"}, "knowledgebase.chunkers names the suffix .rst twice"),
        (["tree-sitter"], "knowledgebase.chunkers must be a mapping"),
    ],
)
def test_bad_chunker_routes_are_config_errors(chunkers: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        WorkspaceConfig.from_dict({"knowledgebase": {"chunkers": chunkers}})


def test_routes_pick_suffix_then_kind_then_default() -> None:
    config = WorkspaceConfig.from_dict(
        {"knowledgebase": {"chunkers": {"default": "a", "markdown": "b", ".INI": "c"}}}
    )
    routes = config.chunkers
    assert [routes.route_for(Path(p)) for p in ("x.ini", "x.md", "x.py", "x.txt")] == [".ini", "markdown", "default",
                                                                                           "default"]
    assert [routes.name_for_route(r) for r in (".ini", "markdown", "default")] == ["c", "b", "a"]


# -- broken plugins fall back ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (PluginEntry("chunkers", "marker", "tests.no_such_module:factory", "example-plugins", "1"),
         "chunker plugin 'marker' (tests.no_such_module:factory) cannot be loaded: ModuleNotFoundError: "
         "No module named 'tests.no_such_module'"),
        (PluginEntry("chunkers", "marker", "tests.plugin_fixtures:failing_factory", "example-plugins", "1"),
         "chunker plugin 'marker' (tests.plugin_fixtures:failing_factory) failed when built: RuntimeError: "
         "the plugin's model file is missing"),
        (PluginEntry("chunkers", "marker", "tests.plugin_fixtures:shapeless_factory", "example-plugins", "1"),
         "chunker plugin 'marker' (tests.plugin_fixtures:shapeless_factory) built a object, which lacks "
         "signature, chunk of the chunker port"),
        # Found by a user trial: a signature that raised crashed plugins/status/index (exit 70)
        # while doctor said all was well.
        (PluginEntry("chunkers", "marker", "tests.plugin_fixtures:signature_fails_chunker", "example-plugins", "1"),
         "chunker plugin 'marker' (tests.plugin_fixtures:signature_fails_chunker) has a signature that fails: "
         "KeyError: 'version'"),
    ],
    ids=["import", "factory", "shape", "signature"],
)
def test_a_broken_chunker_falls_back_to_the_builtin_with_a_note(home: Path, entry: PluginEntry, error: str) -> None:
    docs = make_docs(home)
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: marker\n")
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        summary = ws.index()
        assert (summary.files_indexed, summary.files_errored) == (6, 0)
        note = f"{error}; using tree-sitter instead for .ini"
        assert ws.status_report()["plugins"]["notes"] == [note]
        doctor = ws.doctor().check("plugins")
        assert (doctor.status, doctor.detail) == ("failed", note)
        [row] = [p for p in ws.plugins().to_json()["plugins"] if p["name"] == "marker"]
        assert (row["status"], row["error"], row["active"]) == ("broken", error, False)
        hits = ws.search("port", glob="*.ini")
        assert hits and all(not (h.section or "").startswith("marker") for h in hits)
    assert (docs / "app0.ini").exists()


def test_a_broken_default_builtin_is_an_error_not_a_silent_fallback(home: Path) -> None:
    broken = PluginEntry("chunkers", "tree-sitter", "tests.plugin_fixtures:failing_factory", "hermes-workspace", "0")
    container = build_container(home)
    others = [e for e in builtin_entries("0") if e.name != "tree-sitter"]
    container.plugin_registry.override(providers.Object(PluginRegistry([broken, *others])))
    with pytest.raises(PluginBrokenError) as raised:
        container.chunker()
    assert raised.value.message == ("chunker plugin 'tree-sitter' (tests.plugin_fixtures:failing_factory) failed "
                                    "when built: RuntimeError: the plugin's model file is missing")
    assert (raised.value.code, raised.value.exit_code) == ("plugin_broken", 69)


# -- per-route signatures: a change re-chunks only that route's files ---------------------------


def test_changing_the_ini_chunker_rechunks_only_ini_files(home: Path) -> None:
    make_docs(home)
    registry = registry_with(MARKER)
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: marker\n")
    with Workspace.open(home, plugin_registry=registry) as ws:
        assert ws.index().files_indexed == 6
        first = ws.plugins().to_json()
        sections = {h.section.split(" pid=")[0] for h in ws.search("port retries", glob="*.ini", limit=20)}
        assert sections == {"marker m"}
    # The marker's options change its signature: the .ini files, and only they, are re-chunked.
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: marker\n  plugins:\n    marker: {tag: t2}\n")
    with Workspace.open(home, plugin_registry=registry) as ws:
        before = ws.status_report()["plugins"]
        assert (before["up_to_date"], before["indexed_signature"]) == (False, first["signature"])
        summary = ws.index()
        assert (summary.files_indexed, summary.skipped) == (3, {"unchanged": 3})
        assert {h.section.split(" pid=")[0] for h in ws.search("port", glob="*.ini", limit=20)} == {"marker t2"}
        assert ws.status_report()["plugins"]["up_to_date"] is True
    # Back to the built-in for .ini: again only those three.
    write_config(home, "knowledgebase: {}\n")
    with Workspace.open(home, plugin_registry=registry) as ws:
        summary = ws.index()
        assert (summary.files_indexed, summary.skipped) == (3, {"unchanged": 3})


def test_the_builtin_signature_is_unchanged_by_the_router(home: Path) -> None:
    """An index made before plugins is not re-chunked by the upgrade: the default route's
    signature is the built-in chunker's own."""
    container = build_container(home)
    chunker = container.chunker()
    assert isinstance(chunker, RoutedChunker)
    from hermes_workspace.adapters.tree_sitter_chunker import TreeSitterChunker

    assert chunker.signature_for(Path("/x/a.md")) == TreeSitterChunker(256, 0).signature


# -- worker processes build the third-party chunker ---------------------------------------------


def test_worker_processes_run_a_third_party_chunker(home: Path) -> None:
    make_docs(home)
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: marker\n")
    container = build_container(home)
    container.plugin_registry.override(providers.Object(registry_with(MARKER)))
    # A preload makes the fork server take this process's sys.path (the tests package).
    pool = ProcessTaskPool(2, in_flight_per_worker=2, items_per_call=1, preload=("hermes_workspace.container",))
    try:
        use_case = container.index_workspace(pool=pool, parallel_min_files=0, parallel_min_bytes=0)
        assert use_case.worker_tools is not None
        summary = use_case.execute(NullProgressSink())
        assert (summary.files_indexed, summary.files_errored) == (6, 0)
        hits = container.search_workspace().execute("port retries", glob="*.ini", limit=20)
    finally:
        pool.close() if hasattr(pool, "close") else None
        container.shutdown_resources()
    pids = {int(h.section.split("pid=")[1]) for h in hits}
    assert hits and all(h.section.startswith("marker m pid=") for h in hits)
    assert os.getpid() not in pids


# -- `plugins`: CLI mirrors the API ---------------------------------------------------------------


PLUGIN_FIELDS = ["name", "category", "distribution", "version", "target", "builtin", "status", "error", "active",
                 "used_for", "signature"]


def test_plugins_json_fields(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_docs(home)
    assert main(["index"]) == 0
    capsys.readouterr()
    assert main(["plugins"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["plugins", "signature", "indexed_signature", "up_to_date", "notes"]
    assert all(list(row) == PLUGIN_FIELDS for row in data["plugins"])
    rows = {(row["category"], row["name"]): row for row in data["plugins"]}
    tree = rows[("chunkers", "tree-sitter")]
    assert {k: tree[k] for k in ("distribution", "target", "builtin", "status", "error", "active", "used_for")} == {
        "distribution": "hermes-workspace",
        "target": "hermes_workspace.adapters.builtin_plugins:tree_sitter_chunker",
        "builtin": True, "status": "ok", "error": None, "active": True, "used_for": ["default"],
    }
    assert tree["signature"].startswith("structure;tree-sitter-language-pack=")
    assert (rows[("stores", "sqlite-fts5")]["used_for"], rows[("embedders", "onnx")]["active"]) == (["store"], False)
    # Found by a trial: the converters in use were listed as inactive.
    assert {name: (rows[("converters", name)]["active"], rows[("converters", name)]["used_for"])
            for name in ("pypdf", "python-docx", "markitdown")} == {
        "pypdf": (True, [".pdf"]), "python-docx": (True, [".docx"]), "markitdown": (True, [".epub"])}
    assert data["up_to_date"] is True and data["signature"] == data["indexed_signature"]
    with Workspace.open(home) as ws:
        assert ws.plugins().to_json() == data


def test_plugins_lists_even_when_config_names_a_missing_plugin(home: Path) -> None:
    write_config(home, "knowledgebase:\n  reranker:\n    provider: cohere\n")
    with Workspace.open(home) as ws:
        data = ws.plugins().to_json()
    assert data["signature"] is None
    assert data["notes"][0].startswith("knowledgebase.reranker.provider: no reranker plugin named 'cohere'")
    assert not any(row["active"] for row in data["plugins"])


# -- our own entry points ---------------------------------------------------------------------------


def test_pyproject_entry_points_are_the_builtin_table() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {group.removeprefix("hermes_workspace."): dict(names)
                for group, names in project["entry-points"].items() if group.startswith("hermes_workspace.")}
    assert declared == BUILTIN_ENTRY_POINTS
    assert set(declared) == set(CATEGORIES)


def test_installed_builtin_entry_points_resolve_and_satisfy_their_port(tmp_path: Path) -> None:
    """Every built-in entry point (as installed, or the stand-in table before a reinstall) loads
    and builds an object with its port's members; converters are checked once their modules exist."""
    entries = [e for e in installed_entries() if e.builtin]
    assert {(e.category, e.name) for e in entries} == {(c, n) for c, names in BUILTIN_ENTRY_POINTS.items() for n in names}
    registry = PluginRegistry(entries)
    embedder = {"model": str(tmp_path / "model")}
    for entry in entries:
        if entry.category == "converters":
            continue  # TODO(converters merge): build them too once the Converter port is in
        context = plugin_context(entry.category, entry.name, index_path=tmp_path / "index.sqlite")
        if entry.category == "embedders":
            from hermes_workspace.domain.config import EmbedderConfig

            context = plugin_context(entry.category, entry.name, embedder=EmbedderConfig(
                provider=entry.name, base_url="http://127.0.0.1:9/v1", **embedder))
        built = registry.build(entry, context)
        assert missing_members(entry.category, built) == [], entry.name
        if entry.category == "stores":
            built.close()


def test_a_misspelt_plugin_name_suggests_the_installed_one(home: Path) -> None:
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: markr\n")
    with pytest.raises(UnknownPluginError) as raised:
        Workspace.open(home, plugin_registry=registry_with(MARKER)).index()
    assert raised.value.hint.startswith("Did you mean 'marker'? ")


def test_options_for_a_plugin_that_is_not_installed_are_refused(home: Path) -> None:
    """Found by a trial: `plugins: {log-entires: {...}}` (a typo) was accepted and the plugin ran
    on its defaults, silently."""
    make_docs(home)
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: marker\n  plugins:\n    markr: {tag: t2}\n")
    with pytest.raises(UnknownPluginError) as raised:
        Workspace.open(home, plugin_registry=registry_with(MARKER)).index()
    assert raised.value.message.startswith("knowledgebase.plugins.markr: no plugin named 'markr' is installed")
    assert raised.value.hint.startswith("Did you mean 'marker'? ")
    write_config(home, "knowledgebase:\n  plugins:\n    tree-sitter: {min_words: 5}\n    marker: {tag: x}\n")
    with Workspace.open(home, plugin_registry=registry_with(MARKER)) as ws:
        assert ws.index().files_indexed == 6  # a built-in's or an inactive plugin's options are fine


def test_a_misspelt_chunker_stops_index_but_not_search(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a trial: a typo in `knowledgebase.chunkers` made every command fail, search too,
    which builds no chunker."""
    docs = make_docs(home)
    assert main(["index"]) == 0
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: ini-tabels\n  converters:\n    .pdf: pdfminr\n")
    capsys.readouterr()
    assert main(["search", "port"]) == 0
    assert json.loads(capsys.readouterr().out)
    # Neither does `read` (found by a second trial: an agent got hits it could not open).
    assert main(["read", f"{docs / 'app0.ini'}:1-2"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "verified"
    assert main(["index"]) == 78
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "plugin_unknown"
    assert error["message"].startswith('2 unknown plugin names: knowledgebase.chunkers[".ini"]: no chunker plugin '
                                       "named 'ini-tabels'")
    assert """; knowledgebase.converters[".pdf"]: no converter plugin named 'pdfminr'""" in error["message"]
    assert main(["plugins"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [n.split(": no ")[0] for n in notes[:2]] == ['knowledgebase.chunkers[".ini"]', 'knowledgebase.converters[".pdf"]']


# -- broken plugins of every category are reported (a user trial of issue 11) -------------------------


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("tests.plugin_fixtures:failing_factory",
         "converter plugin 'conv' (tests.plugin_fixtures:failing_factory) failed when built: RuntimeError: "
         "the plugin's model file is missing"),
        ("tests.plugin_fixtures:shapeless_factory",
         "converter plugin 'conv' (tests.plugin_fixtures:shapeless_factory) built a object, which lacks convert "
         "of the converter port"),
        ("tests.plugin_fixtures:signature_fails_chunker",
         "converter plugin 'conv' (tests.plugin_fixtures:signature_fails_chunker) built a SignatureFailsChunker, "
         "which lacks convert of the converter port"),
    ],
    ids=["factory", "shape", "wrong-port"],
)
def test_a_broken_converter_is_reported_by_plugins_status_and_doctor(home: Path, target: str, error: str) -> None:
    """Converters are built lazily while indexing: `plugins` showed a broken one as ok, and
    `status` and doctor did not mention it."""
    docs = make_docs(home)
    (docs / "report.pdf").write_bytes(b"%PDF-1.4 not really\n")
    write_config(home, "knowledgebase:\n  converters:\n    .pdf: conv\n")
    entry = PluginEntry("converters", "conv", target, "example-plugins", "1")
    note = f"{error}; files ending in .pdf are left out of the index (skipped as converter_unavailable)"
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        listing = ws.plugins().to_json()
        [row] = [p for p in listing["plugins"] if p["name"] == "conv"]
        assert (row["status"], row["error"], row["used_for"]) == ("broken", error, [".pdf"])
        assert listing["notes"] == [note]
        assert ws.status_report()["plugins"]["notes"] == [note]
        doctor = ws.doctor().check("plugins")
        assert (doctor.status, doctor.detail) == ("failed", note)
        summary = ws.index()
        assert summary.skipped == {"converter_unavailable": 1}
        assert summary.files_indexed == 6


def test_a_broken_source_is_reported_and_the_index_is_up_to_date_after_reindexing(home: Path) -> None:
    """The source fell back while indexing, but `status` (which never built it) computed the
    bundle with the configured name: `up_to_date` stayed false however often one re-indexed."""
    make_docs(home)
    write_config(home, "knowledgebase:\n  source:\n    provider: cloud\n")
    entry = PluginEntry("sources", "cloud", "tests.plugin_fixtures:failing_factory", "example-plugins", "1")
    note = ("source plugin 'cloud' (tests.plugin_fixtures:failing_factory) failed when built: RuntimeError: "
            "the plugin's model file is missing; using filesystem instead for source")
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        assert ws.index().files_indexed == 6
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        status = ws.status_report()["plugins"]
        assert (status["up_to_date"], status["notes"]) == (True, [note])
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        listing = ws.plugins().to_json()
        assert (listing["up_to_date"], listing["notes"]) == (True, [note])
        [row] = [p for p in listing["plugins"] if p["name"] == "cloud"]
        assert row["status"] == "broken"
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        doctor = ws.doctor().check("plugins")
        assert (doctor.status, doctor.detail) == ("failed", note)


def test_a_broken_embedder_that_fell_back_while_indexing_leaves_the_index_up_to_date(home: Path) -> None:
    make_docs(home)
    write_config(home, "knowledgebase:\n  embedder:\n    provider: vectors\n")
    entry = PluginEntry("embedders", "vectors", "tests.plugin_fixtures:failing_factory", "example-plugins", "1")
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        assert ws.index().files_indexed == 6
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        assert ws.status_report()["plugins"]["up_to_date"] is True


def test_a_broken_store_with_no_index_yet_still_lists_the_plugins(home: Path) -> None:
    """`plugins` and `status` exited 69 blaming the built-in store (which had no index to open
    read-only yet), with a hint to run `plugins`."""
    write_config(home, "knowledgebase:\n  store:\n    provider: vault\n")
    entry = PluginEntry("stores", "vault", "tests.plugin_fixtures:failing_factory", "example-plugins", "1")
    note = ("store plugin 'vault' (tests.plugin_fixtures:failing_factory) failed when built: RuntimeError: "
            "the plugin's model file is missing; using sqlite-fts5 instead for store")
    with Workspace.open(home, plugin_registry=registry_with(entry)) as ws:
        listing = ws.plugins().to_json()
        assert (listing["notes"], listing["up_to_date"]) == ([note], None)
        [row] = [p for p in listing["plugins"] if p["name"] == "vault"]
        assert row["status"] == "broken"
        status = ws.status_report()
        assert (status["indexed"], status["plugins"]["notes"]) == (False, [note])


def test_converter_options_count_in_the_bundle(home: Path) -> None:
    make_docs(home)
    with Workspace.open(home) as ws:
        ws.index()
        assert ws.status_report()["plugins"]["up_to_date"] is True
    write_config(home, "knowledgebase:\n  plugins:\n    markitdown: {style: atx}\n")
    with Workspace.open(home) as ws:
        bundle = ws._container.plugins().bundle()
        assert bundle["converters"][".epub"] == {"plugin": "markitdown", "options": options_digest({"style": "atx"})}
        assert bundle["converters"][".pdf"] == {"plugin": "pypdf"}
        assert ws.status_report()["plugins"]["up_to_date"] is False


def test_options_a_builtin_plugin_does_not_read_are_noted(home: Path) -> None:
    write_config(home, "knowledgebase:\n  plugins:\n    pypdf: {bogus: 1}\n"
                       "    tree-sitter: {min_words: 5, modee: text}\n    chonkie: {mode: text}\n")
    notes = ["knowledgebase.plugins.pypdf: pypdf takes no options; ignored: bogus",
             "knowledgebase.plugins.tree-sitter: the built-in chunker tree-sitter takes min_words and mode; "
             "ignored: modee"]
    with Workspace.open(home) as ws:
        assert ws.plugins().to_json()["notes"] == notes
        assert ws.status_report()["plugins"]["notes"] == notes
        doctor = ws.doctor().check("plugins")
        assert (doctor.status, doctor.detail) == ("passed", "every configured plugin loads; " + "; ".join(notes))


def test_every_unknown_name_is_reported(home: Path) -> None:
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: nope1\n    .md: nope2\n"
                       "  converters:\n    .pdf: nope3\n  plugins:\n    nope4: {a: 1}\n")
    with Workspace.open(home) as ws:
        notes = ws.plugins().to_json()["notes"]
        assert [note.split(":")[0] for note in notes] == [
            'knowledgebase.chunkers[".ini"]', 'knowledgebase.chunkers[".md"]', 'knowledgebase.converters[".pdf"]',
            "knowledgebase.plugins.nope4"]
        with pytest.raises(UnknownPluginError) as raised:
            ws.index()
    message = raised.value.message
    assert message.startswith("4 unknown plugin names: ")
    assert all(f"named {name!r}" in message for name in ("nope1", "nope2", "nope3", "nope4"))


def test_a_broken_embedder_is_listed_as_broken_by_plugins(home: Path) -> None:
    """Found by a third trial: `plugins` listed a broken embedder as `ok` while `status` and
    `doctor` said it fell back to none."""
    broken = PluginEntry("embedders", "broken-emb", "tests.plugin_fixtures:failing_factory", "example-plugins", "1")
    write_config(home, "knowledgebase:\n  embedder:\n    provider: broken-emb\n")
    with Workspace.open(home, plugin_registry=registry_with(broken)) as ws:
        data = ws.plugins().to_json()
    [row] = [p for p in data["plugins"] if p["name"] == "broken-emb"]
    assert (row["status"], row["active"]) == ("broken", False)
    assert row["error"] == ("embedder plugin 'broken-emb' (tests.plugin_fixtures:failing_factory) failed when built: "
                            "RuntimeError: the plugin's model file is missing")
    assert any(note.startswith("embedder plugin 'broken-emb'") for note in data["notes"])


def test_the_index_summary_carries_the_plugin_notes(home: Path) -> None:
    """Found by a third trial: `status` and `plugins` noted a broken plugin and options a
    built-in does not read, the summary of the `index` that used them did not."""
    make_docs(home)
    broken = PluginEntry("chunkers", "marker", "tests.plugin_fixtures:failing_factory", "example-plugins", "1")
    write_config(home, "knowledgebase:\n  chunkers:\n    .ini: marker\n  plugins:\n    tree-sitter: {min_word: 3}\n")
    with Workspace.open(home, plugin_registry=registry_with(broken)) as ws:
        notes = ws.index().notes
    assert any(n.startswith("chunker plugin 'marker'") and n.endswith("using tree-sitter instead for .ini")
               for n in notes)
    assert any(n.startswith("knowledgebase.plugins.tree-sitter:") and "min_word" in n for n in notes)


def test_a_misspelt_chunker_kind_suggests_the_kind() -> None:
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"chunkers": {"markdwn": "tree-sitter"}}})
    assert raised.value.hint.startswith("Did you mean knowledgebase.chunkers.markdown? ")
