"""The workspace QA baselines (benchmarks/qa_baselines.py): structural units with exact line
ranges, and the ripgrep proxy's file selection, ranking and spans. Pure Python: bm25s is not
needed here (the bm25s ranking itself is the library's)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from benchmarks import qa_baselines as qb
from benchmarks.qa_baselines import Unit

PYTHON = textwrap.dedent('''\
    """Module doc."""
    import os


    @decorator
    def top(a):
        def inner():
            return a
        return inner


    class Plain:
        x = 1


    class WithMethods(Base):
        """Doc."""

        attr = 2

        @property
        def first(self):
            return 1

        async def second(self):
            return 2


    CONSTANT = top(1)
    ''')


def _spans(units: list[Unit]) -> list[tuple[int, int, str]]:
    return [(u.start, u.end, u.kind) for u in units]


def test_python_units_are_ast_definitions_with_exact_line_ranges() -> None:
    lines = qb.split_lines(PYTHON)
    assert len(lines) == 29
    assert _spans(qb.file_units("pkg/mod.py", lines)) == [
        (1, 2, "module"),  # the code before the first definition; the blank lines after it are dropped
        (5, 9, "function"),  # from the decorator line
        (7, 8, "function"),  # a nested function is a unit of its own, inside its parent's
        (12, 13, "class"),  # no method: the whole class
        (16, 20, "class"),  # header to the line before the first method's decorator
        (21, 23, "function"),
        (25, 26, "function"),
        (29, 29, "module"),
    ]


def test_python_file_that_does_not_parse_falls_back_to_windows() -> None:
    lines = ["def broken(:"] + ["x = 1"] * 59
    assert _spans(qb.file_units("bad.py", lines)) == [(1, 50, "window"), (51, 60, "window")]


def test_class_and_method_on_one_line_keep_a_one_line_class_unit() -> None:
    assert _spans(qb.file_units("one.py", ["class A: x = 1; y = 2", "class B:", "    def f(self): pass"])) == [
        (1, 1, "class"), (2, 2, "class"), (3, 3, "function"),
    ]


MARKDOWN = [
    "intro text",  # 1
    "",
    "# Title",  # 3
    "text",
    "```python",  # 5
    "# not a heading: inside a fence",
    "```",
    "## Sub",  # 8
    "body",
    "~~~~",  # 10
    "## inside a tilde fence",
    "```",  # a backtick line does not close a tilde fence
    "## still inside",
    "~~~~",  # 14
    "#no space: not a heading",
    "    # indented four spaces: not a heading",
    "### Last",  # 17
    "end",
]


def test_markdown_units_are_heading_sections_outside_fences() -> None:
    assert _spans(qb.file_units("docs/page.md", MARKDOWN)) == [
        (1, 2, "section"),  # the text before the first heading
        (3, 7, "section"),
        (8, 16, "section"),  # up to the next heading of any level
        (17, 18, "section"),
    ]


def test_markdown_without_preamble_or_headings() -> None:
    assert _spans(qb.markdown_units(["", "# A", "x"])) == [(2, 3, "section")]
    assert _spans(qb.markdown_units(["just text", "more"])) == [(1, 2, "section")]


def test_other_files_are_cut_into_non_overlapping_50_line_windows() -> None:
    assert _spans(qb.file_units("notes.rst", ["line"] * 120)) == [
        (1, 50, "window"), (51, 100, "window"), (101, 120, "window"),
    ]
    assert qb.windows(50) == [Unit(1, 50, "window")]
    assert qb.windows(0) == []


def test_split_lines_counts_as_the_gold_sets_do() -> None:
    assert qb.split_lines("a\r\nb\n") == ["a", "b"]
    assert qb.split_lines("a\n\n") == ["a", ""]
    assert qb.split_lines("a") == ["a"]
    assert qb.split_lines("") == []


def test_grep_words_keep_identifiers_whole_and_drop_stopwords_and_short_words() -> None:
    words = qb.grep_words("The SecureCookieSessionInterface.save_session of I/O the", stopwords={"the", "of"})
    assert words == ["securecookiesessioninterface", "save_session"]


def test_best_span_caps_long_spans_to_the_densest_60_line_window() -> None:
    assert qb.best_span([1, 5]) == (1, 5)
    assert qb.best_span([1, 60]) == (1, 60)  # exactly 60 lines: kept whole
    assert qb.best_span([1, 100, 120, 130, 200]) == (100, 130)
    assert qb.best_span([10, 200]) == (10, 10)  # a tie: the earliest window


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "src").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "a.txt").write_text("retry here\nnothing\nRETRY again\nbudget\n", encoding="utf-8")
    (root / "src" / "b.py").write_text("x = 1\n# retry\n", encoding="utf-8")
    (root / "src" / "c.md").write_text("# Title\nunrelated\n", encoding="utf-8")
    (root / "z.txt").write_text("retry\n", encoding="utf-8")
    (root / ".hidden" / "many.txt").write_text("retry\n" * 20, encoding="utf-8")
    (root / ".dotfile").write_text("retry\n" * 20, encoding="utf-8")
    (root / "blob.bin").write_bytes(b"retry\n" * 20 + b"\0")
    os.symlink(root / "a.txt", root / "link.txt")
    return root


def test_corpus_files_skip_hidden_binary_and_linked_files(tiny_corpus: Path) -> None:
    assert [f.path for f in qb.corpus_files(tiny_corpus)] == ["a.txt", "src/b.py", "src/c.md", "z.txt"]


def test_ripgrep_proxy_ranks_files_by_matching_lines(tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qb.shutil, "which", lambda name: None)  # the pure-Python scan, wherever rg is
    files = qb.corpus_files(tiny_corpus)
    queries = [{"id": "q1", "query": "the Retry budget"}, {"id": "q2", "query": "the"}]
    result = qb.ripgrep_proxy(tiny_corpus, files, queries, stopwords={"the"})
    assert result["scanner"].startswith("pure-Python")
    assert result["hits"] == [
        {"id": "q1", "hits": [
            {"path": "a.txt", "line_start": 1, "line_end": 4},  # 3 lines: 1, 3 (upper case), 4
            {"path": "src/b.py", "line_start": 2, "line_end": 2},  # 1 line each: by path on the tie
            {"path": "z.txt", "line_start": 1, "line_end": 1},
        ]},
        {"id": "q2", "hits": []},  # only stopwords: nothing to grep for
    ]


def test_rank_files_keeps_the_first_ten_files() -> None:
    matches = {f"f{i:02d}.txt": list(range(1, i + 2)) for i in range(12)}
    ranked = qb.rank_files(matches)
    assert [h["path"] for h in ranked] == [f"f{i:02d}.txt" for i in range(11, 1, -1)]
    assert ranked[0] == {"path": "f11.txt", "line_start": 1, "line_end": 12}


def test_parse_rg_output_reads_null_separated_paths(tmp_path: Path) -> None:
    out = f"{tmp_path}/a.txt\x0012:text: with colons\n{tmp_path}/sub/b.py\x003:x\n{tmp_path}/a.txt\x0014:y\n"
    assert qb.parse_rg_output(out.encode(), tmp_path) == {"a.txt": [12, 14], "sub/b.py": [3]}
