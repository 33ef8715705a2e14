"""Config validation (seed 000) and query normalization."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.errors import ConfigError
from hermes_workspace.domain.model import Root
from hermes_workspace.domain.query import ENGLISH_STOPWORDS, Compound, parse_query


def test_defaults() -> None:
    config = WorkspaceConfig.from_dict({})
    assert (config.chunking.chunk_size, config.chunking.overlap, config.chunking.threshold) == (256, 0, 0)
    assert (config.max_file_mb, config.default_limit, config.enabled) == (10.0, 20, True)
    assert config.primary_path(Path("/h")) == Path("/h/workspace")


def test_valid_config_loads() -> None:
    config = WorkspaceConfig.from_dict(
        {
            "workspace": {"enabled": True, "path": "/srv/ws"},
            "knowledgebase": {
                "roots": [{"path": "/a", "recursive": True}, {"path": "/b"}, "/c"],
                "chunking": {"chunk_size": 256, "overlap": 0, "threshold": 16000},
                "indexing": {"max_file_mb": 0.5},
                "search": {"default_limit": 5},
            },
            "model": {"other": "sections are ignored"},
        }
    )
    assert config.workspace_path == Path("/srv/ws")
    assert config.roots == (Root(Path("/a"), True), Root(Path("/b"), False), Root(Path("/c"), False))
    assert config.chunking.threshold == 16000
    assert config.max_file_bytes == 524288


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"knowledgebase": {"chunking": {"chunk_size": 0}}}, "chunk_size must be > 0"),
        ({"knowledgebase": {"chunking": {"chunk_size": 100, "overlap": 100}}}, "overlap must be >= 0 and < chunk_size"),
        ({"knowledgebase": {"chunking": {"overlap": -1}}}, "overlap must be >= 0"),
        ({"knowledgebase": {"chunking": {"threshold": -1}}}, "threshold must be >= 0"),
        ({"knowledgebase": {"indexing": {"max_file_mb": 0}}}, "max_file_mb must be > 0"),
        ({"knowledgebase": {"indexing": {"max_file_mb": -2}}}, "max_file_mb must be > 0"),
        ({"knowledgebase": {"search": {"default_limit": 0}}}, "default_limit must be >= 1"),
        ({"knowledgebase": {"search": {"default_limit": -3}}}, "default_limit must be >= 1"),
        ({"knowledgebase": {"chunking": {"chunk_size": "big"}}}, "chunk_size must be an integer"),
        ({"knowledgebase": {"chunking": {"chunk_size": True}}}, "chunk_size must be an integer"),
        ({"knowledgebase": {"chunking": []}}, "knowledgebase.chunking must be a mapping"),
        ({"knowledgebase": {"roots": "/a"}}, "knowledgebase.roots must be a list"),
        ({"knowledgebase": {"roots": [{"recursive": True}]}}, "knowledgebase.roots[0]"),
        ({"workspace": {"enabled": "yes"}}, "workspace.enabled must be true or false"),
        ({"workspace": {"path": 3}}, "workspace.path must be a string"),
        (["not", "a", "mapping"], "mapping at the top level"),
    ],
)
def test_invalid_values_fail_early_naming_the_key(data: object, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        WorkspaceConfig.from_dict(data)  # type: ignore[arg-type]
    assert key in info.value.message
    assert info.value.code == "config_invalid"
    assert info.value.exit_code == 78


def test_signature_changes_with_every_chunking_setting() -> None:
    base = WorkspaceConfig.from_dict({})
    sigs = {
        base.chunking_signature("c1"),
        base.chunking_signature("c2"),
        WorkspaceConfig.from_dict({"knowledgebase": {"chunking": {"overlap": 10}}}).chunking_signature("c1"),
        WorkspaceConfig.from_dict({"knowledgebase": {"chunking": {"chunk_size": 300}}}).chunking_signature("c1"),
        WorkspaceConfig.from_dict({"knowledgebase": {"chunking": {"threshold": 9}}}).chunking_signature("c1"),
    }
    assert len(sigs) == 5


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("container CLI", ("container", "CLI")),
        ("NOT agent", ("agent",)),  # "not" is a stopword (operators are plain words)
        ("hermes-agent", (Compound(("hermes", "agent")),)),
        ("read_file", (Compound(("read", "file")),)),
        ("hermes-agent deployment", (Compound(("hermes", "agent")), "deployment")),
        ("TODO: fix", ("TODO", "fix")),
        ("ZX-4471", (Compound(("ZX", "4471")),)),
        ('foo"bar', ("foo", "bar")),
        ("near(a b)", ("near",)),
        ("a AND", ("AND",)),
        ("café naïve", ("café", "naïve")),
        ("cafe\u0301", ("café",)),
        ("x-y", ()),
        ("gpt-4.1", ("gpt",)),
        ("Deploy deploy DEPLOY", ("Deploy",)),
        ("", ()),
        ('"', ()),
        ("   ", ()),
    ],
)
def test_parse_query(text: str, groups: tuple[object, ...]) -> None:
    assert parse_query(text).groups == groups


def test_long_query_is_capped() -> None:
    query = parse_query(" ".join(f"word{i}" for i in range(2000)))
    assert len(query.words) == 64


# -- stopwords ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        # plain stopwords go when another word stays
        ("what is the rollback procedure", ("what", "rollback", "procedure")),
        ("The deployment OF the agent", ("deployment", "agent")),
        ("how to use it", ("how", "use")),
        # a compound counts as a remaining word, and is never thinned
        ("the is_file", (Compound(("is", "file")),)),
        ("is_file", (Compound(("is", "file")),)),
        ("with_statement in python", (Compound(("with", "statement")), "python")),
        ("to-be-or-not-to-be", (Compound(("to", "be", "or", "not", "to", "be")),)),
        # nothing else would remain: every word is kept
        ("to be or not to be", ("to", "be", "or", "not")),
        ("The This", ("The", "This")),
        ("a AND", ("AND",)),
        # "who" is not in the list, so "the" goes
        ("the who", ("who",)),
    ],
)
def test_stopwords(text: str, groups: tuple[object, ...]) -> None:
    assert parse_query(text).groups == groups


def test_stopword_list_is_lucenes_english_set() -> None:
    lucene = "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    lucene += "they this to was will with"
    assert frozenset(lucene.split(" ")) == ENGLISH_STOPWORDS
    assert len(ENGLISH_STOPWORDS) == 33


def test_stopwords_do_not_use_up_the_term_budget() -> None:
    text = "the of and " * 100 + " ".join(f"word{i}" for i in range(100))
    query = parse_query(text)
    assert query.words == [f"word{i}" for i in range(64)]


def test_compound_at_the_budget_keeps_its_first_parts_and_literal() -> None:
    text = " ".join(f"w{i}" for i in range(62)) + " the alpha-beta-gamma"
    query = parse_query(text)
    assert len(query.words) == 64
    assert query.groups[-1] == Compound(("alpha", "beta"))
    assert query.groups[-1].literal == "alpha-beta"


@pytest.mark.parametrize(
    ("text", "groups", "literals"),
    [
        ("Version 8.1.7", ("Version", Compound(("8", "1", "7"))), ["8.1.7"]),
        ("v3.12 release", (Compound(("3", "12")), "release"), ["3.12"]),
        ("(2.0.1),", (Compound(("2", "0", "1")),), ["2.0.1"]),
        ("json.loads", ("json", "loads"), []),
        ("a.b", (), []),
    ],
)
def test_versions_keep_their_one_digit_parts(text: str, groups: tuple[object, ...], literals: list[str]) -> None:
    query = parse_query(text)
    assert query.groups == groups
    assert [g.literal for g in query.groups if isinstance(g, Compound)] == literals
