"""Ranking for navigation on a small repository, through the public API with every real adapter:
definitions above call sites, tests and changelog lines; a pasted error message finds the code
that raises it; a documented option finds its documentation; roles asked for are not demoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.domain.ranking import brevity_weight, definition_matches, file_role, phrase_weight, role_weight

CONFIG_PY = '''"""Configuration objects."""

import os


class Config(dict):
    """A dict with helpers to load settings.

    Each call reads the process environment once, keeps the order of the keys stable, and never changes a setting that the application has already frozen for its workers.
    """

    def from_prefixed_env(self, prefix="APP"):
        """Load every environment variable starting with the prefix.

        Each call reads the process environment once, keeps the order of the keys stable, and never changes a setting that the application has already frozen for its workers.
        """
        for key in sorted(os.environ):
            if key.startswith(prefix):
                self[key[len(prefix) + 1 :]] = os.environ[key]
        return True

    def from_envvar(self, variable_name):
        """Load a file named by an environment variable.

        Each call reads the process environment once, keeps the order of the keys stable, and never changes a setting that the application has already frozen for its workers.
        """
        value = os.environ.get(variable_name)
        if not value:
            raise RuntimeError(
                f"The environment variable {variable_name!r} is not set and as such"
                " configuration could not be loaded."
            )
        return value
'''

TEST_PY = '''import pytest

from pkg.config import Config


def test_from_prefixed_env(monkeypatch):
    monkeypatch.setenv("APP_A", "1")
    config = Config()
    config.from_prefixed_env()
    assert config.from_prefixed_env()
    assert config["A"] == "1"


def test_from_envvar_missing():
    """Each call reads the process environment once, keeps the order of the keys stable, and never changes a setting that the application has already frozen for its workers."""
    with pytest.raises(RuntimeError, match="is not set and as such configuration could not be loaded"):
        Config().from_envvar("OTHER_SETTINGS")
'''

CHANGES = """Version 2.0
-----------

-   ``Config.from_prefixed_env`` loads prefixed environment variables. ``from_prefixed_env``
    replaces the old loader; call ``from_prefixed_env`` from your factory.
-   ``from_envvar`` raises ``RuntimeError`` when the environment variable is not set and as such
    configuration could not be loaded.
"""

DOCS = """# Configuration

## Environment variables

Settings can come from environment variables with a prefix. Each call reads the process environment once, keeps the order of the keys stable, and never changes a setting that the application has already frozen for its workers.

## The `SECRET_PREFIX` option

`SECRET_PREFIX` sets the prefix that the loader reads; the default is `APP`. Each call reads the process environment once, keeps the order of the keys stable, and never changes a setting that the application has already frozen for its workers.
"""


CACHE_DOCS = """# Caching

## Eviction

When the cache is full, the eviction policy drops the least recently used entry first; entries
pinned by a request stay until the request ends.
"""

CACHE_TEST = """def test_eviction_policy(cache):
    # eviction policy: least recently used entry goes first
    cache.fill()
    assert cache.evicted == ["least recently used entry"]
"""


CODEC_PY = '''"""Encoding and decoding of key=value text."""


def loads(text):
    """Decode ``text`` into objects, strictly."""
    return [line.split("=") for line in text.splitlines() if line]


def dumps(items):
    """Encode ``items`` as text."""
    return "\\n".join("=".join(item) for item in items)
'''

CODEC_DOCS = """# Codec

Call `codec.loads` on the text. `codec.loads` is strict: `codec.loads("a=1")` gives `[["a", "1"]]`.
"""


@pytest.fixture
def repo_ws(home: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "docs").mkdir()
    (repo / "src" / "pkg" / "config.py").write_text(CONFIG_PY)
    (repo / "tests" / "test_config.py").write_text(TEST_PY)
    (repo / "CHANGES.rst").write_text(CHANGES)
    (repo / "docs" / "config.md").write_text(DOCS)
    (repo / "tests" / "test_settings.md").write_text("SECRET_PREFIX is tested with SECRET_PREFIX=APP here.\n")
    (repo / "docs" / "cache.md").write_text(CACHE_DOCS)
    (repo / "src" / "codec").mkdir()
    (repo / "src" / "codec" / "__init__.py").write_text(CODEC_PY)
    (repo / "docs" / "codec.md").write_text(CODEC_DOCS)
    (repo / "tests" / "test_cache.py").write_text(CACHE_TEST)
    with Workspace.open(home) as ws:
        ws.add_root(repo, recursive=True)
        ws.index()
        yield ws, repo


def lines(text: str, first: str, last: str) -> tuple[int, int]:
    """1-based lines of the first line holding ``first`` and the next one holding ``last``."""
    rows = text.split("\n")
    start = next(i for i, row in enumerate(rows) if first in row)
    end = next(i for i in range(start, len(rows)) if last in rows[i])
    return start + 1, end + 1


def _top(ws: Workspace, query: str, n: int = 3) -> list[tuple[str, int, int, str | None]]:
    return [
        (h.path.name, h.line_start, h.line_end, h.breadcrumb) for h in ws.search(query, limit=n)
    ]


def test_an_identifier_finds_its_definition_first(repo_ws) -> None:  # type: ignore[no-untyped-def]
    ws, _ = repo_ws
    hits = ws.search("from_prefixed_env", limit=3)
    expected = lines(CONFIG_PY, "def from_prefixed_env", "return True")
    assert (hits[0].path.name, hits[0].line_start, hits[0].line_end) == ("config.py", *expected)
    assert (hits[0].breadcrumb, hits[0].definition_matches) == ("Config.from_prefixed_env", 1)
    assert hits[0].to_json()["definition_matches"] == 1
    assert {h.path.name for h in hits[1:]} == {"test_config.py", "CHANGES.rst"}


def test_class_and_method_words_find_the_method(repo_ws) -> None:  # type: ignore[no-untyped-def]
    ws, _ = repo_ws
    expected = ("config.py", *lines(CONFIG_PY, "def from_envvar", "return value"), "Config.from_envvar")
    assert _top(ws, "Config from_envvar", 1) == [expected]
    assert _top(ws, "Config.from_envvar", 1) == [expected]


def test_a_module_qualified_name_finds_its_definition(repo_ws) -> None:  # type: ignore[no-untyped-def]
    ws, _ = repo_ws
    hits = ws.search("codec.loads", limit=3)
    assert (hits[0].path.name, hits[0].breadcrumb, hits[0].definition_matches) == ("__init__.py", "loads", 1)
    # A small module is one chunk (its pieces are tiny): it holds the definition.
    assert (hits[0].line_start, hits[0].line_end) == (1, len(CODEC_PY.splitlines()))
    assert hits[0].definitions == ("loads", "dumps")


def test_a_module_qualified_name_when_the_root_is_the_package_itself(home: Path, tmp_path: Path) -> None:
    package = tmp_path / "codec"
    package.mkdir()
    (package / "__init__.py").write_text(CODEC_PY)
    (tmp_path / "notes.md").write_text(CODEC_DOCS)
    with Workspace.open(home) as ws:
        ws.add_root(package, recursive=True)
        ws.add_root(tmp_path, recursive=False)
        ws.index()
        hits = ws.search("codec.loads", limit=2)
    assert [(h.path.name, h.definition_matches) for h in hits] == [("__init__.py", 1), ("notes.md", 0)]


def test_a_one_word_name_finds_its_definition_before_a_stemmed_neighbour(home: Path, tmp_path: Path) -> None:
    doc = " ".join(f"word{i}" for i in range(45))
    (tmp_path / "io.py").write_text(
        f'def load(stream):\n    """Read loads of records from the stream: load them all. {doc}"""\n    return stream\n\n\n'
        f'def loads(text):\n    """Parse text. {doc}"""\n    return text\n'
    )
    with Workspace.open(home) as ws:
        ws.add_root(tmp_path, recursive=False)  # its own files: recursive, it would hold HERMES_HOME's workspace
        ws.index()
        hits = ws.search("loads", limit=2)
    assert [(h.breadcrumb, h.definition_matches, h.exact_matches) for h in hits] == [("loads", 1, None), ("load", 0, None)]


def test_a_version_number_finds_its_changelog_section(home: Path, tmp_path: Path) -> None:
    sections = "\n".join(f"## Version {v}\n\n- fixed issue {n} in the parser\n" for n, v in enumerate(
        ["8.1.7", "8.1.6", "1.1", "7.8.1"]))
    (tmp_path / "CHANGES.md").write_text("# Changes\n\n" + sections)
    with Workspace.open(home) as ws:
        ws.add_root(tmp_path, recursive=False)  # its own files: recursive, it would hold HERMES_HOME's workspace
        ws.index()
        assert [h.breadcrumb for h in ws.search("8.1.7", limit=1)] == ["# Changes > ## Version 8.1.7"]
        assert ws.search("Version 8.1.7", limit=1)[0].breadcrumb == "# Changes > ## Version 8.1.7"


def test_a_pasted_error_message_finds_the_code_that_raises_it(repo_ws) -> None:  # type: ignore[no-untyped-def]
    ws, _ = repo_ws
    query = (
        "RuntimeError: The environment variable 'INVENTORY_SETTINGS' is not set and as such configuration "
        "could not be loaded."
    )
    hits = ws.search(query, limit=3)
    assert (hits[0].path.name, hits[0].breadcrumb) == ("config.py", "Config.from_envvar")
    assert hits[0].definition_matches is None  # a long query: no definition tier


def test_an_option_finds_its_documentation_before_a_test(repo_ws) -> None:  # type: ignore[no-untyped-def]
    ws, _ = repo_ws
    expected = lines(DOCS, "## The `SECRET_PREFIX` option", "the default is")
    assert _top(ws, "SECRET_PREFIX", 1) == [("config.md", *expected, "# Configuration > ## The `SECRET_PREFIX` option")]


def test_words_found_in_a_test_and_in_the_docs_rank_the_docs_first(repo_ws) -> None:  # type: ignore[no-untyped-def]
    ws, _ = repo_ws
    assert [h.path.name for h in ws.search("eviction policy least recently used entry", limit=2)] == [
        "cache.md", "test_cache.py"
    ]
    # Unless the query asks for tests.
    assert ws.search("test eviction policy least recently used entry", limit=1)[0].path.name == "test_cache.py"


@pytest.mark.parametrize(
    ("relative", "role"),
    [
        ("tests/test_app.py", "test"),
        ("src/app/test_utils.py", "test"),
        ("pkg/handler_test.go", "test"),
        ("web/cart.spec.ts", "test"),
        ("src/test/java/CartTest.java", "test"),
        ("conftest.py", "test"),
        ("CHANGES.rst", "changelog"),
        ("CHANGELOG.md", "changelog"),
        ("docs/changelog/3.0.md", "changelog"),
        ("HISTORY.txt", "changelog"),
        ("src/flask/testing.py", "other"),
        ("docs/testing.rst", "other"),
        ("src/contest.py", "other"),
        ("README.md", "other"),
    ],
)
def test_file_roles(relative: str, role: str) -> None:
    assert file_role(Path(relative)) == role


def test_brevity_weight_only_touches_chunks_under_eight_words() -> None:
    assert [brevity_weight(n) for n in (0, 2, 8, 9, 300)] == [0.3535533905932738, 0.5, 1.0, 1.0, 1.0]


def test_phrase_weight_rewards_the_query_words_in_their_order() -> None:
    words = "event loop is closed".split()
    assert phrase_weight(words, "raise RuntimeError('Event loop is closed')") == 1.25
    assert phrase_weight(words, "the loop of this event is closed") == 1.0  # "is closed": one content word
    assert phrase_weight(words, "when the event loop is stopped") == 1.0 + 0.25 * 3 / 4
    assert phrase_weight(words, "closed is loop event") == 1.0
    assert phrase_weight(["it", "is", "the", "loop"], "it is the loop") == 1.0  # one word not a stopword
    assert phrase_weight(["loop", "closed"], "loop closed") == 1.0  # shorter than three words


def test_role_weights_yield_when_the_query_asks_for_the_role() -> None:
    assert role_weight("test", ["session", "cookie"]) == 0.6
    assert role_weight("test", ["session", "Tests"]) == 1.0
    assert role_weight("changelog", ["changed", "in", "version"]) == 1.0
    assert role_weight("other", ["test"]) == 1.0


def test_definition_matches_counts_whole_segments_only() -> None:
    assert definition_matches(["from_prefixed_env"], ("Config.from_prefixed_env",)) == 1
    assert definition_matches(["from_prefixed_env"], ("test_from_prefixed_env",)) == 0
    assert definition_matches(["flaskgroup", "get_command"], ("FlaskGroup.get_command",)) == 2
    assert definition_matches(["flaskgroup", "get_command"], ("FlaskGroup",)) == 1
    assert definition_matches(["secure.save_session"], ("Secure.save_session",)) == 1
    assert definition_matches(["a.save_session"], ("Secure.save_session",)) == 0
    assert definition_matches(["cache_strings"], ("# JSON > ### `cache_strings`",)) == 1
    assert definition_matches(["helper"], ("Loader", "Loader.load", "helper")) == 1
    assert definition_matches(["helper"], ()) == 0  # a later part of a split `helper` starts nothing
    # Module-qualified names: the qualifiers may name the file's folders or stem, the last part
    # must be what is defined.
    assert definition_matches(["json.loads"], ("loads",), Path("json/__init__.py")) == 1
    assert definition_matches(["requests.get"], ("get",), Path("src/requests/api.py")) == 1
    assert definition_matches(["json.loads"], ("loads",), Path("yaml/__init__.py")) == 0
    assert definition_matches(["json.loads"], ("dumps",), Path("json/__init__.py")) == 0
    assert definition_matches(["click.option"], ("Option.__init__",), Path("click/core.py")) == 0
    assert definition_matches(["click.option"], ("option",), Path("click/decorators.py")) == 1


def test_a_file_that_is_only_a_title_does_not_outrank_the_page_that_explains_it(home: Path, tmp_path: Path) -> None:
    (tmp_path / "stub.md").write_text("# Parameter Types\n")
    explanation = (
        "Parameter types convert the strings of the command line into values. Each parameter type has a name, "
        "a converter and a message for bad input; the built-in parameter types cover integers, floats, paths, "
        "choices and dates, and a custom parameter type subclasses the base type."
    )
    (tmp_path / "guide.md").write_text(f"# Guide\n\n## Parameter types\n\n{explanation}\n")
    with Workspace.open(home) as ws:
        ws.add_root(tmp_path, recursive=False)  # its own files: recursive, it would hold HERMES_HOME's workspace
        ws.index()
        hits = ws.search("parameter types", limit=2)
    assert [h.path.name for h in hits] == ["guide.md", "stub.md"]
