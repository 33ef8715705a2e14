"""Result diversity: near-duplicate collapse, the per-file cap, and hybrid keeping the best keyword
hit of a distinctive query (domain functions and the search use case, with fakes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePath

import pytest

from hermes_workspace.adapters.memory import InMemoryIndexStore
from hermes_workspace.application.search import RetrievalSettings, SearchWorkspace, candidates, fuse
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.diversity import cap_per_file, collapse_duplicates, language_neutral
from hermes_workspace.domain.errors import ConfigError
from hermes_workspace.domain.fusion import FusionWeights, is_distinctive, keep_best_keyword_hit
from hermes_workspace.domain.model import Duplicate, SearchHit
from hermes_workspace.domain.query import parse_query
from tests.store_files import make_file

CODE = """```python
from fastapi import FastAPI
app = FastAPI()
@app.get("/items/{item_id}")
async def read_item(item_id: int, q: str | None = None):
    return {"item_id": item_id, "q": q}
```"""
EN = "Declare the path parameter item_id with its type annotation and read it back:\n" + CODE
ZH = "使用类型注解声明路径参数并读取它：\n" + CODE
EN_PROSE = (
    "Path parameters are declared with the same syntax as format strings, and their values are passed\n"
    "to your function as arguments; a type annotation converts and validates them, and the editor\n"
    "then knows the type everywhere you use it, which gives completion and error checks for free.\n"
    "```python\nasync def read_item(item_id: int):\n```"
)
ZH_PROSE = "路径参数的声明方式与格式字符串相同，其值作为参数传给你的函数；类型注解会转换并校验它们。\n```python\nasync def read_item(item_id: int):\n```"


def _search(store: InMemoryIndexStore, **settings: int) -> SearchWorkspace:
    return SearchWorkspace(store=store, default_limit=10, settings=RetrievalSettings(**settings))


def _hit(path: str, score: float, content: str = "", index: int = 0, **fields: object) -> SearchHit:
    return SearchHit(Path(path), 1 + index * 10, 9 + index * 10, None, index, score, 1, "2026-01-01T00:00:00Z",
                     content or f"{path} {index}", **fields)  # type: ignore[arg-type]


# -- near-duplicate collapse -----------------------------------------------------------------


def test_translated_pages_collapse_into_one_hit_listing_the_other_path_and_lines() -> None:
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/docs/en/path-params.md", ["# Path parameters", EN]))
    store.replace_file(*make_file("/ws/docs/zh/path-params.md", [ZH]))
    store.replace_file(*make_file("/ws/docs/en/other.md", ["Query parameters: item_id is not one of them."]))

    hits = _search(store).execute("item_id")

    assert [(str(h.path), h.line_start) for h in hits] == [
        ("/ws/docs/en/path-params.md", 3),
        ("/ws/docs/en/other.md", 1),
    ]
    assert hits[0].duplicates == (Duplicate(Path("/ws/docs/zh/path-params.md"), 1, 8),)


def test_the_same_chunks_under_unrelated_paths_or_mostly_prose_stay_apart() -> None:
    # Shared code with different prose is no copy unless the paths say it is a translation.
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/docs/tutorial/path-params.md", [EN]))
    store.replace_file(*make_file("/ws/blog/path-params.md", [ZH]))
    assert [h.duplicates for h in _search(store).execute("item_id")] == [(), ()]
    # A translation that is mostly prose is different text: both stay.
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/docs/en/p.md", [EN_PROSE]))
    store.replace_file(*make_file("/ws/docs/zh/p.md", [ZH_PROSE]))
    assert [h.duplicates for h in _search(store).execute("read_item")] == [(), ()]


def test_copies_of_a_readme_in_other_packages_collapse_by_shingle_resemblance() -> None:
    readme = (
        "The {name} package ships the command line tools of the project. Install it with pip, then run "
        "the tools from any folder; every command prints its options with --help and exits with a "
        "non-zero status on failure, so scripts can stop on the first error they meet."
    )
    store = InMemoryIndexStore()
    for name in ("alpha", "beta", "gamma"):
        store.replace_file(*make_file(f"/ws/{name}/README.md", [readme.format(name=name)]))

    hits = _search(store).execute("command line tools")

    assert len(hits) == 1 and len(hits[0].duplicates) == 2
    assert {hits[0].path, *(d.path for d in hits[0].duplicates)} == {
        Path(f"/ws/{n}/README.md") for n in ("alpha", "beta", "gamma")
    }


def test_two_hits_of_the_same_file_are_never_collapsed() -> None:
    same = "Rollback: revert the deployment to the previous tag, then restart every worker of the service."
    hits = collapse_duplicates([_hit("/a.md", 3.0, same, 0), _hit("/a.md", 2.0, same, 1), _hit("/b.md", 1.0, same, 0)])
    assert [(str(h.path), h.chunk_index) for h in hits] == [("/a.md", 0), ("/a.md", 1)]
    # /b.md joined the best-ranked copy; /a.md's second chunk is its own hit, not a duplicate.
    assert hits[0].duplicates == (Duplicate(Path("/b.md"), 1, 9),)
    assert hits[1].duplicates == ()


def test_a_group_holds_one_hit_per_file() -> None:
    same = "Rollback: revert the deployment to the previous tag, then restart every worker of the service."
    hits = collapse_duplicates([_hit("/a.md", 3.0, same, 0), _hit("/b.md", 2.0, same, 0), _hit("/b.md", 1.0, same, 1)])
    assert [(str(h.path), h.chunk_index, len(h.duplicates)) for h in hits] == [("/a.md", 0, 1), ("/b.md", 1, 0)]


def test_language_neutral_paths() -> None:
    assert language_neutral(PurePath("/d/docs/zh-CN/a.md")) == ("/d/docs/a.md", "zh-cn")
    assert language_neutral(PurePath("/d/docs/a.md")) == ("/d/docs/a.md", None)
    assert language_neutral(PurePath("/d/guide.fr.md")) == ("/d/guide.md", "fr")
    assert language_neutral(PurePath("/d/src/api/a.md")) == ("/d/src/api/a.md", None)  # not a language


def test_hit_json_with_and_without_duplicates() -> None:
    plain = _hit("/ws/docs/en/p.md", 1.5, "text")
    assert "duplicates" not in plain.to_json() and "file_rank" not in plain.to_json()
    folded = _hit("/ws/docs/en/p.md", 1.5, "text", duplicates=(Duplicate(Path("/ws/docs/zh/p.md"), 3, 12),))
    assert folded.to_json() == {
        "path": "/ws/docs/en/p.md", "root_name": None, "line_start": 1, "line_end": 9, "section": None,
        "chunk_index": 0,
        "score": 1.5, "tokens": 1, "modified": "2026-01-01T00:00:00Z", "content": "text",
        "breadcrumb": None, "definitions": [],
        "duplicates": [{"path": "/ws/docs/zh/p.md", "line_start": 3, "line_end": 12}],
    }
    assert _hit("/a", 1.0, file_rank=3).to_json()["file_rank"] == 3


# -- the per-file cap ----------------------------------------------------------------------


def _crowded_store() -> InMemoryIndexStore:
    """Five chunks of /ws/big.py that each say "token" more often than any other file's chunk."""
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/big.py", [f"token {'token ' * (8 - i)} part{i} alpha{i}" for i in range(5)]))
    for name, count in (("b", 3), ("c", 2), ("d", 1)):
        store.replace_file(*make_file(f"/ws/{name}.py", [f"{'token ' * count}in {name}"]))
    return store


def test_cap_of_two_puts_other_files_before_a_files_third_hit() -> None:
    results = _search(_crowded_store(), max_hits_per_file=2).execute("token", limit=8)

    assert [(h.path.name, h.chunk_index) for h in results] == [
        ("big.py", 0), ("big.py", 1), ("b.py", 0), ("c.py", 0), ("d.py", 0), ("big.py", 2), ("big.py", 3), ("big.py", 4),
    ]
    assert [h.file_rank for h in results] == [1, 2, 1, 1, 1, 3, 4, 5]
    assert any("3 hit(s) come after the others" in n for n in results.notes)


def test_the_cap_keeps_limit_and_adds_nothing_when_no_moved_hit_is_shown() -> None:
    search = _search(_crowded_store(), max_hits_per_file=2)
    results = search.execute("token", limit=4)
    assert [(h.path.name, h.chunk_index) for h in results] == [("big.py", 0), ("big.py", 1), ("b.py", 0), ("c.py", 0)]
    assert all(h.file_rank is None for h in results) and results.notes == []
    # Fewer candidates of other files than the limit: the file's further hits fill it, best first.
    assert len(search.execute("token", limit=6)) == 6


def test_a_cap_of_zero_keeps_the_score_order() -> None:
    results = _search(_crowded_store(), max_hits_per_file=0).execute("token", limit=8)
    assert [h.path.name for h in results] == ["big.py"] * 5 + ["b.py", "c.py", "d.py"]


def test_the_cap_is_applied_after_the_exact_identifier_rule_and_keeps_its_order() -> None:
    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/io.py", [f"def read_file{i}(): read_file() # variant {i}" for i in range(4)]))
    store.replace_file(*make_file("/ws/notes.md", ["read the file, read a file: read file read file read file"]))

    results = _search(store, max_hits_per_file=2).execute("read_file", limit=5)

    assert [(h.path.name, h.chunk_index, h.exact_matches, h.file_rank) for h in results] == [
        ("io.py", 0, 1, 1), ("io.py", 1, 1, 2), ("notes.md", 0, 0, 1), ("io.py", 2, 1, 3), ("io.py", 3, 1, 4),
    ]

    def key(hit: SearchHit) -> tuple[bool, int, float]:
        return ((hit.file_rank or 0) <= 2, hit.exact_matches or 0, hit.score)

    assert all(key(a) >= key(b) for a, b in zip(results, results[1:]))


def test_cap_per_file_is_a_stable_partition() -> None:
    hits = [_hit("/a", 9, index=i) for i in range(5)] + [_hit(p, 1) for p in ("/b", "/c", "/d")]
    capped, beyond = cap_per_file(hits, 2, limit=8)
    assert [(str(h.path), h.chunk_index) for h in capped] == [
        ("/a", 0), ("/a", 1), ("/b", 0), ("/c", 0), ("/d", 0), ("/a", 2), ("/a", 3), ("/a", 4)
    ]
    assert beyond == 3
    assert cap_per_file(hits, 2, limit=5)[1] == 0


def test_enough_candidates_are_fetched_for_the_cut() -> None:
    assert (candidates(1), candidates(10), candidates(20), candidates(1000)) == (3, 30, 60, 1100)


# -- hybrid keeps the best keyword hit of a distinctive query -------------------------------


ERROR_HIT = "raise ConnectionError(f'connection refused while reading the upstream response header from {host}')"


def _sixth() -> tuple[list[SearchHit], list[SearchHit]]:
    """The keyword side's first hit /k is not among the dense hits; /a../e are in both lists."""
    sparse = [_hit("/k", 20.0, ERROR_HIT)] + [_hit(f"/{c}", 10.0 - i) for i, c in enumerate("abcde")]
    dense = [_hit(f"/{c}", 0.9 - i / 10) for i, c in enumerate("abcde")]
    return sparse, dense


@pytest.mark.parametrize(
    ("query", "weights"),
    [
        ("upstream_timeout", FusionWeights(2.0, 0.5, "identifier")),
        ("Connection refused while reading the upstream response header from the proxy", FusionWeights(1.0, 2.0, "prose")),
    ],
)
def test_a_distinctive_query_keeps_its_best_keyword_hit_in_the_top_3(query: str, weights: FusionWeights) -> None:
    sparse, dense = _sixth()
    fused = fuse(sparse, dense, weights, 60)
    assert [str(h.path) for h in fused].index("/k") == 5

    assert is_distinctive(parse_query(query), weights.kind, sparse[0].content)
    kept = keep_best_keyword_hit(fused)

    assert [str(h.path) for h in kept] == ["/a", "/b", "/k", "/c", "/d", "/e"]
    k = kept[2]
    assert k.score == kept[3].score and k.fused_score == fused[5].fused_score  # a tie; its RRF score kept
    assert [h.score for h in kept] == sorted((h.score for h in kept), reverse=True)


def test_a_prose_query_keeps_the_fused_order() -> None:
    sparse, dense = _sixth()
    weights = FusionWeights(1.0, 2.0, "prose")
    query = parse_query("why does the server stop answering requests behind the proxy")
    assert not is_distinctive(query, weights.kind, sparse[0].content)
    # Four shared words in a row are not a phrase of five.
    assert not is_distinctive(parse_query("what is refused while reading the logs"), "prose", sparse[0].content)
    assert not is_distinctive(parse_query("connection refused while reading"), "prose", sparse[0].content)


def test_keep_best_keyword_hit_leaves_a_top_3_hit_alone() -> None:
    fused = [_hit("/a", 3.0, keyword_rank=2), _hit("/k", 2.0, keyword_rank=1), _hit("/c", 1.0)]
    assert keep_best_keyword_hit(fused) == fused


# -- configuration ---------------------------------------------------------------------------


def test_max_hits_per_file_is_read_and_validated() -> None:
    assert WorkspaceConfig.from_dict({}).retriever.max_hits_per_file == 3
    config = WorkspaceConfig.from_dict({"knowledgebase": {"retriever": {"max_hits_per_file": 0}}})
    assert config.retriever.max_hits_per_file == 0
    for bad in (-1, "two", 1.5, True, 10_001):
        with pytest.raises(ConfigError) as raised:
            WorkspaceConfig.from_dict({"knowledgebase": {"retriever": {"max_hits_per_file": bad}}})
        assert "knowledgebase.retriever.max_hits_per_file" in raised.value.message
        assert raised.value.hint and raised.value.code == "config_invalid"
    with pytest.raises(ConfigError) as raised:
        WorkspaceConfig.from_dict({"knowledgebase": {"retriever": {"max_hits_per_fle": 2}}})
    assert "Did you mean knowledgebase.retriever.max_hits_per_file" in (raised.value.hint or "")


def test_the_container_passes_max_hits_per_file_to_the_search(tmp_path: Path) -> None:
    from hermes_workspace.container import _retrieval_settings

    config = WorkspaceConfig.from_dict({"knowledgebase": {"retriever": {"max_hits_per_file": 5}}})
    assert _retrieval_settings(config, None).max_hits_per_file == 5


class _FixedVectors:
    """A vector index whose nearest chunks are always ``order`` (paths), every chunk embedded."""

    def __init__(self, store: InMemoryIndexStore, order: list[str], signature: str) -> None:
        self.store, self.order, self.signature = store, order, signature

    def status(self):  # type: ignore[no-untyped-def]
        from hermes_workspace.domain.semantic import VectorStatus

        n = len(self.store.files)
        return VectorStatus(chunks=n, embedded=n, unreadable=0, pending=0, vectors=n, signature=self.signature)

    def search(self, vector, *, path_prefix=None, glob=None, limit=20):  # type: ignore[no-untyped-def]
        by_path = {str(h.path): h for h in self.store.search(parse_query("upstream"), limit=100)}
        return [replace(by_path[p], score=0.9 - i / 10) for i, p in enumerate(self.order)][:limit]


def test_hybrid_search_lifts_the_pasted_message_but_not_for_prose() -> None:
    from hermes_workspace.adapters.memory import HashEmbedder
    from hermes_workspace.application.search import SemanticSide

    store = InMemoryIndexStore()
    store.replace_file(*make_file("/ws/k.py", [ERROR_HIT]))
    for c in "abcde":
        store.replace_file(*make_file(f"/ws/{c}.md", [f"notes {c}: the upstream connection and its header ({c})"]))
    embedder = HashEmbedder()
    vectors = _FixedVectors(store, [f"/ws/{c}.md" for c in "abcde"], embedder.signature)
    search = SearchWorkspace(
        store=store, default_limit=10, settings=RetrievalSettings(default_mode="hybrid"),
        semantic=SemanticSide(embedder=embedder, open_vectors=lambda: vectors),
    )
    pasted = search.execute("Connection refused while reading the upstream response header from the proxy")
    assert pasted.fusion == {"keyword_weight": 1.0, "semantic_weight": 2.0, "query_kind": "prose"}
    assert [h.path.stem for h in pasted][:4] == ["a", "b", "k", "c"]
    assert pasted[2].keyword_rank == 1
    prose = search.execute("why is the upstream connection header refused")
    assert prose[0].path.stem != "k" and [h.keyword_rank for h in prose].index(1) == 5
