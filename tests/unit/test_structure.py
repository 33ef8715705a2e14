"""Structural chunking (domain/structure.py through TreeSitterChunker): exact line ranges,
breadcrumbs and definitions for code, markdown, reStructuredText and plain text."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.tree_sitter_chunker import TreeSitterChunker
from hermes_workspace.domain.model import Chunk
from hermes_workspace.domain.structure import StructureSettings, Unit, markdown_outline, structured_chunks
from tests.chunk_checks import assert_chunk_invariants


def _words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def shape(chunks: list[Chunk]) -> list[tuple[int, int, str | None, tuple[str, ...]]]:
    return [(c.line_start, c.line_end, c.breadcrumb, c.definitions) for c in chunks]


PYTHON = f'''import os

LIMIT = 3


class Loader:
    """Loads things. {_words(30, "doc")}"""

    retries = 2

    def load(self, path):
        """{_words(40, "load")}"""
        return open(path).read()

    def save(self, path, data):
        """{_words(40, "save")}"""
        with open(path, "w") as handle:
            handle.write(data)


def helper():
    """{_words(45, "helper")}"""
    return Loader()
'''


def test_python_classes_split_into_header_and_methods() -> None:
    text = PYTHON
    chunks = TreeSitterChunker(200, 0, min_words=10).chunk(text, Path("/w/loader.py"))
    assert_chunk_invariants(text, chunks)
    assert shape(chunks) == [
        # Imports and constants (tiny) go with the class header, docstring and fields below.
        (1, 9, "Loader", ("Loader",)),
        (11, 13, "Loader.load", ("Loader.load",)),
        (15, 18, "Loader.save", ("Loader.save",)),
        (21, 23, "helper", ("helper",)),
    ]
    assert chunks[1].section == "def load(self, path):"


def test_tiny_siblings_are_packed_under_their_parent_only() -> None:
    text = "class A:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n\n\ndef c():\n    return 3\n"
    chunks = TreeSitterChunker(200, 0, min_words=40).chunk(text, Path("/w/a.py"))
    # A's header and both tiny methods pack together; c is not under A: a chunk of its own.
    # Named after the first member, past the class line that introduces it.
    assert shape(chunks) == [(1, 6, "A.a", ("A", "A.a", "A.b")), (9, 10, "c", ("c",))]


def test_two_definitions_of_normal_size_never_share_a_chunk() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(30))
    text = f"def first():\n{body}\n\n\ndef second():\n{body}\n"
    chunks = TreeSitterChunker(200, 0, min_words=40).chunk(text, Path("/w/two.py"))
    assert shape(chunks) == [(1, 31, "first", ("first",)), (34, 64, "second", ("second",))]


def test_a_long_function_is_split_at_blank_lines_with_overlap_only_inside_it() -> None:
    block = "\n".join(f"    step_{i} = run({i}, 'a b c d')" for i in range(12))
    text = "def long():\n" + "\n\n".join([block] * 4) + "\n\n\ndef after():\n    return 1\n"
    chunks = TreeSitterChunker(100, 10, min_words=0).chunk(text, Path("/w/long.py"))
    assert_chunk_invariants(text, chunks)
    parts = [c for c in chunks if c.breadcrumb == "long"]
    assert len(parts) >= 2
    assert parts[0].definitions == ("long",) and all(p.definitions == () for p in parts[1:])
    for previous, part in zip(parts, parts[1:]):
        assert part.line_start <= previous.line_end  # overlap inside the split function
    last = chunks[-1]
    assert (last.breadcrumb, last.line_start) == ("after", text.split("\n").index("def after():") + 1)


def test_javascript_and_rust_definitions_are_named() -> None:
    js = "export class Cart {\n  add(item) {\n    this.items.push(item);\n  }\n}\n\nconst total = (cart) => {\n  return 0;\n};\n"
    chunks = TreeSitterChunker(200, 0, min_words=0).chunk(js, Path("/w/cart.js"))
    assert {d for c in chunks for d in c.definitions} == {"Cart", "Cart.add", "total"}
    rust = "struct Point { x: i32 }\n\nimpl Point {\n    fn norm(&self) -> i32 {\n        self.x\n    }\n}\n"
    chunks = TreeSitterChunker(200, 0, min_words=0).chunk(rust, Path("/w/point.rs"))
    assert {d for c in chunks for d in c.definitions} == {"Point", "Point.norm"}


MARKDOWN = f"""# Guide

{_words(60, "intro")}

## Install

{_words(60, "install")}

## Usage

### Basics

{_words(60, "basics")}

```python
# not a heading
```

### Advanced

{_words(60, "advanced")}
"""


def test_markdown_sections_run_from_heading_to_next_heading() -> None:
    chunks = TreeSitterChunker(200, 0, min_words=40).chunk(MARKDOWN, Path("/w/guide.md"))
    assert_chunk_invariants(MARKDOWN, chunks)
    assert shape(chunks) == [
        (1, 3, "# Guide", ("# Guide",)),
        (5, 7, "# Guide > ## Install", ("# Guide > ## Install",)),
        # "## Usage" alone is tiny: packed with its first sub-section, named after it.
        (9, 17, "# Guide > ## Usage > ### Basics", ("# Guide > ## Usage", "# Guide > ## Usage > ### Basics")),
        (19, 21, "# Guide > ## Usage > ### Advanced", ("# Guide > ## Usage > ### Advanced",)),
    ]
    assert chunks[2].section == "## Usage"  # the heading at its first line


def test_a_long_section_is_split_at_paragraphs_outside_fences() -> None:
    fence = "```\n" + "\n\n".join(_words(15, f"code{i}_") for i in range(4)) + "\n```"
    text = "# Title\n\n" + _words(90, "p") + "\n\n" + fence + "\n\n" + _words(90, "q") + "\n"
    chunks = TreeSitterChunker(100, 0, min_words=0).chunk(text, Path("/w/long.md"))
    assert_chunk_invariants(text, chunks)
    lines = text.split("\n")
    fence_rows = {i + 1 for i, line in enumerate(lines) if line.startswith("```")}
    inside = range(min(fence_rows) + 1, max(fence_rows))
    assert all(c.line_start not in inside for c in chunks)
    assert {c.breadcrumb for c in chunks} == {"# Title"}


def test_restructuredtext_sections() -> None:
    text = "Title\n=====\n\n" + _words(50, "a") + "\n\nSub\n---\n\n" + _words(50, "b") + "\n"
    chunks = TreeSitterChunker(200, 0, min_words=10).chunk(text, Path("/w/page.rst"))
    assert shape(chunks) == [(1, 4, "Title", ("Title",)), (6, 9, "Title > Sub", ("Title > Sub",))]


def test_plain_text_paragraphs_pack_up_to_the_cap() -> None:
    text = "\n\n".join(_words(30, f"p{i}_") for i in range(10)) + "\n"
    chunks = TreeSitterChunker(100, 0, min_words=0).chunk(text, Path("/w/notes.txt"))
    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 5), (7, 11), (13, 17), (19, 19)]
    assert all(c.breadcrumb is None for c in chunks)


def test_a_single_line_longer_than_the_cap_is_cut_at_sentences() -> None:
    text = " ".join(f"Sentence {i} has five words." for i in range(60))
    chunks = TreeSitterChunker(100, 0, min_words=0).chunk(text, Path("/w/one.txt"))
    assert_chunk_invariants(text, chunks)
    assert all(c.tokens <= 100 for c in chunks)
    assert all(c.content.endswith(".") for c in chunks)


def test_outline_units_may_compute_children_lazily() -> None:
    calls = []

    def children() -> tuple[Unit, ...]:
        calls.append(1)
        return (Unit(1, 1, "inner"),)

    text = "def outer():\n    def inner(): pass\n    return inner\n"
    settings = StructureSettings(chunk_size=200, min_words=0)
    chunks = structured_chunks(text, [Unit(0, 2, "outer", children)], settings, kind="code")
    assert calls == []  # small enough: kept whole, nested definitions never looked up
    assert shape(chunks) == [(1, 3, "outer", ("outer",))]


@pytest.mark.parametrize("text", ["", "   \n\n", "\n"])
def test_blank_text_has_no_chunks(text: str) -> None:
    assert TreeSitterChunker(200, 0).chunk(text, Path("/w/x.md")) == []


def test_markdown_outline_nests_by_level() -> None:
    units = markdown_outline("# A\ntext\n## B\ntext\n### C\n## D\n")
    assert [(u.name, u.start, u.end) for u in units] == [("# A", 0, 5)]
    b, d = units[0].nested()
    assert [(b.name, b.start, b.end), (d.name, d.start, d.end)] == [("## B", 2, 4), ("## D", 5, 5)]
    assert [(c.name, c.start, c.end) for c in b.nested()] == [("### C", 4, 4)]


def test_definition_names_in_c_go_and_rust() -> None:
    chunker = TreeSitterChunker(256, 0, min_words=0)
    c_text = "static int add_numbers(int a, int b) {\n    return a + b;\n}\n\nPyObject *Xxo_demo(PyObject *self) {\n    return NULL;\n}\n"
    go_text = "package main\n\nfunc (c *Client) Run(x int) error {\n\treturn nil\n}\n\nfunc (s Stack[T]) Push(v T) {}\n"
    rust_text = (
        "impl<T> SchemaFilter<T> {\n    pub fn from_schema(x: T) -> Self { todo!() }\n}\n\n"
        "pub trait Plugin {\n    fn activate_plugin(&self);\n}\n\nmod inner {\n    pub fn helper() -> u32 { 1 }\n}\n"
    )
    names = {
        suffix: [d for c in chunker.chunk(text, Path(f"/w/x{suffix}")) for d in c.definitions]
        for suffix, text in ((".c", c_text), (".go", go_text), (".rs", rust_text))
    }
    assert names == {
        ".c": ["add_numbers", "Xxo_demo"],
        ".go": ["Client.Run", "Stack.Push"],
        ".rs": ["SchemaFilter", "SchemaFilter.from_schema", "Plugin", "Plugin.activate_plugin", "inner", "inner.helper"],
    }


def test_tiny_labels_and_lone_headings_join_what_follows() -> None:
    text = "(parameter-types)=\n\n# Parameter Types\n\n## Built-in\n\n### Strings\n\n" + _words(60, "s") + "\n"
    chunks = TreeSitterChunker(256, 0, min_words=40).chunk(text, Path("/w/types.md"))
    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 9)]
    assert chunks[0].breadcrumb == "# Parameter Types > ## Built-in > ### Strings"


def test_a_closing_brace_stays_with_the_split_method_above_it() -> None:
    body = "\n".join(f"        let v{i} = compute({i}, 1, 2, 3);" for i in range(80))
    text = f"impl Filter {{\n    fn run(&self) {{\n{body}\n    }}\n}}\n"
    chunks = TreeSitterChunker(256, 0, min_words=40).chunk(text, Path("/w/filter.rs"))
    assert chunks[-1].line_end == text.count("\n")
    assert all(c.content.strip() not in ("}", "    }") for c in chunks)


def test_split_parts_are_of_about_equal_size() -> None:
    # Paragraphs of 150, 190 and 20 words: greedy packing at 256 would leave a 20-word scrap.
    text = "# T\n\n" + "\n\n".join(_words(n, f"p{i}_") for i, n in enumerate((150, 190, 20))) + "\n"
    chunks = TreeSitterChunker(256, 0, min_words=0).chunk(text, Path("/w/t.md"))
    assert [c.tokens for c in chunks] == [152, 210]


def test_chinese_text_is_measured_by_characters_and_cut_at_sentence_ends() -> None:
    sentence = "我们的数据库连接在周一晚上失败了原因是端口配置错误。"  # 26 characters
    text = sentence * 40 + "\n"  # one line of 1,040 characters, no spaces
    chunks = TreeSitterChunker(256, 0, min_words=0).chunk(text, Path("/w/zh.md"))
    assert_chunk_invariants(text, chunks)
    assert len(chunks) == 5
    # Sized by characters (the chunk's `tokens` stays its str.split() count, the Chunk contract).
    assert all(len(c.content) <= 256 and c.content.endswith("。") for c in chunks)
    assert "".join(c.content for c in chunks) == text.strip()


def test_a_scrap_after_a_full_chunk_joins_it_rather_than_stand_alone() -> None:
    body = "\n".join(f"    step_{i} = run({i}, 'a', 'b', 'c')" for i in range(40))  # 240 words
    text = f"def main():\n{body}\n\n\nif __name__ == '__main__':\n    main()\n"
    chunks = TreeSitterChunker(250, 0, min_words=40).chunk(text, Path("/w/tool.py"))
    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 45)]


def test_a_group_cut_by_the_character_cap_names_each_part_after_its_own_unit() -> None:
    blob = "x" * 700  # one word of 700 characters: the 64-word cap allows 1,024 characters
    text = f'class A:\n    def a(self):\n        return "{blob}"\n\n    def b(self):\n        return "{blob}"\n'
    chunks = TreeSitterChunker(64, 0, min_words=40).chunk(text, Path("/w/a.py"))
    assert_chunk_invariants(text, chunks)
    def_lines = {"A": 1, "A.a": 2, "A.b": 5}
    assert len(chunks) >= 2
    for chunk in chunks:  # a definition is listed by the chunk its first line is in, once
        assert all(chunk.line_start <= def_lines[name] <= chunk.line_end for name in chunk.definitions)
    assert sorted(n for c in chunks for n in c.definitions) == ["A", "A.a", "A.b"]
    # The part that holds b's body (cut from its def line by the cap) is named after b, not a.
    assert chunks[-1].breadcrumb == "A.b" and chunks[-1].line_end == 6
