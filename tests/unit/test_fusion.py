"""Weighted Reciprocal Rank Fusion and the per-query weights (domain/fusion.py)."""

from __future__ import annotations

import pytest

from hermes_workspace.domain.fusion import (
    LEANING_WEIGHT,
    LOOKUP_SEMANTIC_WEIGHT,
    code_names,
    fusion_weights,
    reciprocal_rank_fusion,
)
from hermes_workspace.domain.query import parse_query


def test_rrf_on_hand_made_lists_gives_the_exact_order_and_scores() -> None:
    keyword = ["a", "b", "c", "d"]
    semantic = ["c", "e", "a"]
    fused = reciprocal_rank_fusion([keyword, semantic], k=60)
    # a = c = 1/61 + 1/63 (both best at rank 1: a's list comes first), b = e = 1/62 (b's list
    # comes first), d = 1/64.
    assert [f.key for f in fused] == ["a", "c", "b", "e", "d"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 63)
    assert fused[0].ranks == (1, 3)
    assert fused[3].ranks == (None, 2)
    assert fused[4].score == pytest.approx(1 / 64)


def test_rrf_weights_multiply_each_lists_contribution() -> None:
    keyword = ["k1", "shared"]
    semantic = ["s1", "shared"]
    equal = [f.key for f in reciprocal_rank_fusion([keyword, semantic], [1, 1], k=0)]
    leaning = [f.key for f in reciprocal_rank_fusion([keyword, semantic], [1, 3], k=0)]
    # k=0 and equal weights: k1 = s1 = shared = 1; ties go to the better best rank (k1, s1: 1st;
    # shared: 2nd), then to the earlier list (k1).
    assert equal == ["k1", "s1", "shared"]
    # semantic weight 3: s1 = 3, shared = 0.5 + 1.5 = 2, k1 = 1.
    assert leaning == ["s1", "shared", "k1"]


def test_rrf_weight_zero_leaves_a_list_out() -> None:
    fused = reciprocal_rank_fusion([["a", "b"], ["c", "a"]], [1, 0])
    assert [f.key for f in fused] == ["a", "b"]
    assert fused[0].ranks == (1, None)


def test_rrf_counts_a_repeated_key_once_at_its_best_rank() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "a"]], k=60)
    assert [f.key for f in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(1 / 61)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"k": -1}, "k"), ({"weights": [1]}, "one weight"), ({"weights": [1, -1]}, ">= 0")],
)
def test_rrf_rejects_bad_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        reciprocal_rank_fusion([["a"], ["b"]], **kwargs)


def test_rrf_of_nothing_is_empty() -> None:
    assert reciprocal_rank_fusion([[], []]) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("how do I undo a release", "prose"),
        ("what causes rodent-borne hantavirus infections", "prose"),  # a hyphenated word is not code
        ("where is read_file defined", "identifier"),
        ("EmailMessage", "identifier"),
        ("the BoundLoggerLazyProxy class", "identifier"),
        ("how is json.loads used here", "identifier"),
        ("why did the us enter ww1", "prose"),  # digits in a word are not code
        ("tracheids are part of _____.", "terms"),  # a blank to fill in is not snake_case
        ("sigmet", "terms"),
        ("definition of a sigmet", "terms"),  # stopwords do not count
        ("hermes-agent", "terms"),
        ("what is a sigmet in aviation weather", "prose"),
        ("sigmet airmet pirep", "prose"),  # a known limit: three words count as prose
    ],
)
def test_query_kinds(text: str, kind: str) -> None:
    weights = fusion_weights(parse_query(text), coverage=0.95)
    assert weights.kind == kind
    leaning = (1.0, LEANING_WEIGHT) if kind == "prose" else (LEANING_WEIGHT, LOOKUP_SEMANTIC_WEIGHT)
    assert (weights.keyword, weights.semantic) == leaning


def test_code_names_are_the_words_that_look_like_code() -> None:
    query = parse_query('how does "EmailMessage" use json.loads, utf8 and read_file() here?')
    assert code_names(query) == ["EmailMessage", "json.loads", "read_file"]


def test_a_lookup_keeps_bm25_order_against_a_common_word_match() -> None:
    # "definition of a sigmet": S is keyword #2 (has the rare word), D keyword #31 and semantic #32
    # (shares only "definition"). With lookup weights, dense evidence cannot lift D above S.
    keyword = [f"k{i}" for i in range(1, 41)]
    keyword[1], keyword[30] = "S", "D"
    semantic = [f"s{i}" for i in range(1, 41)]
    semantic[31] = "D"
    weights = fusion_weights(parse_query("definition of a sigmet"), coverage=0.95)
    fused = [f.key for f in reciprocal_rank_fusion([keyword, semantic], [weights.keyword, weights.semantic], k=60)]
    assert fused.index("S") < fused.index("D")
    assert set(fused[:40]) == set(keyword)  # and no dense-only candidate above a keyword hit


def test_an_incomplete_vector_index_never_leans_to_the_vectors() -> None:
    prose = fusion_weights(parse_query("how do I undo a release"), coverage=0.95, complete=False)
    assert (prose.keyword, prose.semantic) == (1.0, 1.0)
    terms = fusion_weights(parse_query("sigmet"), coverage=0.95, complete=False)
    assert (terms.keyword, terms.semantic) == (LEANING_WEIGHT, LOOKUP_SEMANTIC_WEIGHT)


def test_leaning_keeps_every_exact_match_above_the_dense_only_candidates() -> None:
    keyword = [f"k{i}" for i in range(1, 41)]
    semantic = [f"s{i}" for i in range(1, 41)]
    fused = [f.key for f in reciprocal_rank_fusion([keyword, semantic], [LEANING_WEIGHT, 1.0], k=60)]
    assert fused[:40] == keyword  # 2/100 (keyword #40) > 1/61 (semantic #1)


def test_weights_follow_the_query_kind() -> None:
    prose = fusion_weights(parse_query("how do I undo a release"), coverage=0.95)
    assert (prose.keyword, prose.semantic, prose.kind) == (1.0, LEANING_WEIGHT, "prose")
    ident = fusion_weights(parse_query("where is read_file defined"), coverage=0.95)
    assert (ident.keyword, ident.semantic, ident.kind) == (LEANING_WEIGHT, LOOKUP_SEMANTIC_WEIGHT, "identifier")
    arabic = fusion_weights(parse_query("من هو عبد المطلب"), coverage=0.0)
    assert (arabic.keyword, arabic.semantic, arabic.kind) == (1.0, 0.0, "unreadable")
    assert arabic.to_json() == {"keyword_weight": 1.0, "semantic_weight": 0.0, "query_kind": "unreadable"}


def test_coverage_threshold_is_inclusive() -> None:
    assert fusion_weights(parse_query("words"), coverage=0.5).kind == "terms"
    assert fusion_weights(parse_query("words"), coverage=0.49).kind == "unreadable"
