"""ChonkieChunker: dispatch by suffix, offsets, sections, overlap, fallbacks, offline behaviour.

chunk_size and overlap are words; offsets are characters; lines are 1-based, counted by "\\n".
Sockets are disabled for the whole suite (pytest-socket): nothing here may download anything.
"""

from __future__ import annotations

import importlib.metadata
import logging
import subprocess
import sys
import sysconfig
from itertools import pairwise
from pathlib import Path

import pytest

from hermes_workspace.adapters.chonkie_chunker import ChonkieChunker
from hermes_workspace.domain.chunking import POLICY_VERSION, count_words
from hermes_workspace.domain.constants import MAX_CHARS_PER_WORD
from hermes_workspace.domain.errors import ChunkingError, MissingExtraError
from tests.chunk_checks import (
    INVARIANT_TEXTS,
    LINES_142,
    assert_chunk_invariants,
    assert_chunks_start_lines,
    assert_core_cap,
    minified_js,
)

# -- sample files ----------------------------------------------------------------------------------


def _prose(tag: str, words: int, per_line: int = 12) -> str:
    """``words`` words named ``<tag><n>``, 12 to a line ending in ".", 4 lines to a paragraph."""
    names = [f"{tag}{i}" for i in range(words)]
    lines = [" ".join(names[i : i + per_line]) + "." for i in range(0, words, per_line)]
    return "\n\n".join("\n".join(lines[i : i + 4]) for i in range(0, len(lines), 4))


def _markdown() -> str:
    sections = [
        ("## Overview", 180),
        ("## Installation", 90),
        ("## Configuration", 260),
        ("## Rollback Procedures", 1400),
        ("## Monitoring", 120),
        ("## Troubleshooting", 700),
        ("## FAQ", 60),
        ("## Appendix", 300),
    ]
    parts = ["# Operations Guide\n\n" + _prose("intro", 40)]
    for title, words in sections:
        body = _prose(title.split()[-1].lower()[:4], words)
        if title == "## Configuration":
            body += "\n\n```bash\n# not a heading\necho done\n```\n\n" + _prose("conftail", 20)
        parts.append(f"{title}\n\n{body}")
    parts.append("Setext Section\n--------------\n\n" + _prose("setext", 150))
    parts.append("Closing Notes\n=============\n\n" + _prose("closing", 80))
    return "\n\n".join(parts) + "\n"


MARKDOWN = _markdown()


def _python_body(tag: str, lines: int, indent: str = "    ") -> str:
    return "\n".join(f"{indent}{tag}_{i} = compute({tag!r}, {i}) + offset" for i in range(lines))


PYTHON = f'''"""Deployment helpers."""

import os
import sys

LIMIT = 10


def deploy(target, *, dry_run=False):
    """Deploy to target."""
{_python_body("deploy", 12)}
    return target


# Rollback undoes a deploy.
# It keeps the previous release.
def rollback(target):
{_python_body("rollback", 14)}
    return None


class Release:
    """A release."""

    def __init__(self, name):
{_python_body("init", 8, "        ")}

    @property
    def version(self):
{_python_body("version", 9, "        ")}
        return self.name

    def publish(self, channel):
{_python_body("publish", 10, "        ")}


def helper():
    return 1


if __name__ == "__main__":
{_python_body("main", 11)}
'''


def _js_function(name: str, lines: int) -> str:
    body = "\n".join(f"  const {name}{i} = compute('{name}', {i});" for i in range(lines))
    return f"function {name}(a, b) {{\n{body}\n  return a + b;\n}}\n"


JAVASCRIPT = (
    "import { compute } from './compute.js';\n\n"
    + _js_function("alpha", 12)
    + "\n// Beta does the second step.\n"
    + _js_function("beta", 14)
    + "\nexport class Gamma {\n  constructor(x) {\n"
    + "\n".join(f"    this.v{i} = compute('gamma', {i});" for i in range(12))
    + "\n  }\n}\n"
)


def _go_function(name: str, lines: int) -> str:
    body = "\n".join(f'\tv{i} := compute("{name}", {i})' for i in range(lines))
    return f"func {name}(a int, b int) int {{\n{body}\n\treturn a + b\n}}\n"


GO = (
    'package main\n\nimport "fmt"\n\n'
    + _go_function("alpha", 12)
    + "\n"
    + _go_function("beta", 14)
    + "\nfunc main() {\n\tfmt.Println(alpha(1, 2))\n}\n"
)


def _layout(chunks: list) -> list[tuple[int, int, str | None, str]]:
    """(line_start, line_end, section, first line) of each chunk."""
    return [(c.line_start, c.line_end, c.section, c.content.split("\n", 1)[0]) for c in chunks]


# -- chonkie behaviours we rely on ------------------------------------------------------------------


NON_ASCII_CODE = "# café naïve 日本語 😀🎉 ünïcödé\n" + "\n\n".join(
    f'def f{n}(x):\n    """Ré{n} 日本 😀."""\n    return x + {n}  # é{n}\n' for n in range(30)
)


def test_chonkie_code_chunker_offsets_are_character_offsets() -> None:
    from chonkie import CodeChunker

    pieces = CodeChunker(tokenizer=count_words, chunk_size=20, language="python").chunk(NON_ASCII_CODE)
    assert len(pieces) > 5
    assert [NON_ASCII_CODE[p.start_index : p.end_index] for p in pieces] == [p.text for p in pieces]
    assert pieces[0].start_index == 0 and pieces[-1].end_index == len(NON_ASCII_CODE)
    # The byte offset differs from the character offset once non-ASCII text precedes the chunk.
    assert pieces[1].start_index < len(NON_ASCII_CODE[: pieces[1].start_index].encode("utf-8"))


def test_chonkie_recursive_chunker_offsets_are_character_offsets() -> None:
    from chonkie import RecursiveChunker, RecursiveLevel, RecursiveRules

    text = INVARIANT_TEXTS["non_ascii"]
    rules = RecursiveRules(levels=[RecursiveLevel(delimiters=["\n\n"]), RecursiveLevel(whitespace=True)])
    pieces = RecursiveChunker(tokenizer=count_words, chunk_size=40, rules=rules).chunk(text)
    assert len(pieces) > 5
    assert [text[p.start_index : p.end_index] for p in pieces] == [p.text for p in pieces]
    assert pieces[-1].end_index == len(text)


def test_chonkie_takes_our_word_counter_and_its_own_word_tokenizer_would_miscount() -> None:
    from chonkie import AutoTokenizer, WordTokenizer

    assert AutoTokenizer(count_words).count_tokens("a\nb\tc d") == 4
    assert WordTokenizer().count_tokens("a\nb\tc d") == 2  # splits on " " only: not usable for code


def test_chonkie_default_rules_need_encode_which_a_counter_lacks() -> None:
    from chonkie import RecursiveChunker

    with pytest.raises(NotImplementedError):  # why our rules stop at whitespace, with no token level
        RecursiveChunker(tokenizer=count_words, chunk_size=2).chunk("a\tb\tc\td")  # tabs: no space to split at


# -- construction, signature ---------------------------------------------------------------------------


def test_signature_names_libraries_policy_mode_and_settings() -> None:
    chunker = ChonkieChunker(512, 80)
    assert chunker.signature == (
        f"chonkie={importlib.metadata.version('chonkie')};"
        f"tree-sitter-language-pack={importlib.metadata.version('tree-sitter-language-pack')};"
        f"policy={POLICY_VERSION};adapter=1;mode=auto;chunk_size=512;overlap=80"
    )
    assert "chonkie=1.6.5" in chunker.signature
    others = {
        ChonkieChunker(512, 40).signature,
        ChonkieChunker(256, 80).signature,
        ChonkieChunker(512, 80, mode="text").signature,
    }
    assert len(others | {chunker.signature}) == 4


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((0, 0), {}), ((10, -1), {}), ((10, 10), {}), ((10, 2), {"mode": "fast"})],
)
def test_invalid_arguments_raise_value_error(args: tuple[int, int], kwargs: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        ChonkieChunker(*args, **kwargs)  # type: ignore[arg-type]


def test_missing_chonkie_raises_missing_extra_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "chonkie", None)
    with pytest.raises(MissingExtraError) as caught:
        ChonkieChunker(512, 80)
    assert caught.value.code == "extra_missing"
    assert caught.value.hint.startswith("pip install 'hermes-workspace[workspace]'")
    assert "pip install -e '.[workspace]'" in caught.value.hint
    assert "chonkie" in caught.value.message


def test_missing_language_pack_fails_auto_mode_but_not_text_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter_language_pack", None)
    with pytest.raises(MissingExtraError) as caught:
        ChonkieChunker(512, 80)
    assert "tree-sitter-language-pack" in caught.value.message
    chunks = ChonkieChunker(50, 0, mode="text").chunk(PYTHON, Path("deploy.py"))
    assert {c.kind for c in chunks} == {"text"}


def test_module_imports_without_chonkie() -> None:
    code = (
        "import sys; sys.modules['chonkie'] = None; sys.modules['tree_sitter_language_pack'] = None\n"
        "import hermes_workspace.adapters.chonkie_chunker as m\n"
        "try:\n    m.ChonkieChunker(10, 2)\nexcept m.MissingExtraError as e:\n    print(e.code)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == "extra_missing\n"
    assert result.stderr == ""


# -- invariants on every path ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(INVARIANT_TEXTS))
@pytest.mark.parametrize("suffix", [".md", ".py", ".js", ".txt", ".go"])
@pytest.mark.parametrize(("chunk_size", "overlap"), [(8, 3), (64, 0), (64, 20)])
def test_invariants_on_every_path(name: str, suffix: str, chunk_size: int, overlap: int) -> None:
    text = INVARIANT_TEXTS[name]
    chunks = ChonkieChunker(chunk_size, overlap).chunk(text, Path("sample" + suffix))
    assert chunks
    assert_chunk_invariants(text, chunks)


@pytest.mark.parametrize(
    ("name", "text", "suffix"),
    [("md", MARKDOWN, ".md"), ("py", PYTHON, ".py"), ("js", JAVASCRIPT, ".js"), ("go", GO, ".go")],
)
@pytest.mark.parametrize("mode", ["auto", "text"])
def test_invariants_on_the_samples(name: str, text: str, suffix: str, mode: str) -> None:
    for chunk_size, overlap in [(50, 0), (50, 10), (512, 80)]:
        chunks = ChonkieChunker(chunk_size, overlap, mode=mode).chunk(text, Path(name + suffix))  # type: ignore[arg-type]
        assert_chunk_invariants(text, chunks)


def test_142_line_file_is_one_chunk_ending_at_line_142() -> None:
    chunks = ChonkieChunker(1000, 80).chunk(LINES_142, Path("notes.txt"))
    assert [(c.line_start, c.line_end, c.start_char, c.end_char) for c in chunks] == [(1, 142, 0, len(LINES_142) - 1)]


@pytest.mark.parametrize("text", ["", " ", "\n\n\t \r\n", "\x0c\u2028 \u3000"])
@pytest.mark.parametrize("suffix", [".md", ".py", ".txt"])
def test_whitespace_only_text_gives_no_chunks(text: str, suffix: str) -> None:
    assert ChonkieChunker(50, 10).chunk(text, Path("empty" + suffix)) == []


def test_bom_passed_in_is_kept_in_offsets_and_headings_still_found() -> None:
    text = "\ufeff# Title\n\n" + _prose("w", 120) + "\n\n## Second\n\n" + _prose("v", 120) + "\n"
    chunks = ChonkieChunker(100, 0).chunk(text, Path("bom.md"))
    assert_chunk_invariants(text, chunks)
    assert chunks[0].start_char == 0 and chunks[0].content.startswith("\ufeff# Title")
    assert [c.section for c in chunks] == ["# Title", "# Title", "## Second", "## Second"]


def test_words_separated_by_newlines_count_one_each() -> None:
    chunks = ChonkieChunker(100, 0).chunk("x\n" * 1000, Path("list.txt"))
    assert [c.tokens for c in chunks] == [100] * 10
    assert [c.line_start for c in chunks] == list(range(1, 1000, 100))


def test_minified_javascript_is_cut_inside_its_one_line() -> None:
    text = minified_js(200_000)
    chunks = ChonkieChunker(512, 80).chunk(text, Path("app.min.js"))
    assert_chunk_invariants(text, chunks)
    assert len(chunks) == 29
    assert {(c.line_start, c.line_end, c.kind) for c in chunks} == {(1, 1, "code")}
    assert 0 < chunks[1].start_char < chunks[0].end_char  # overlap inside the line, not from 0
    assert count_words(text[chunks[1].start_char : chunks[0].end_char]) == 80


# -- line starts and the character cap ------------------------------------------------------------------

STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_MODULES = ["json/decoder.py", "http/__init__.py", "argparse.py", "typing.py"]


@pytest.mark.parametrize("module", STDLIB_MODULES)
@pytest.mark.parametrize(("chunk_size", "overlap"), [(512, 80), (64, 8)])
def test_stdlib_chunks_start_at_line_starts(module: str, chunk_size: int, overlap: int) -> None:
    path = STDLIB / module
    if not path.is_file():
        pytest.skip(f"{path} is not installed")
    text = path.read_text(encoding="utf-8")
    chunker = ChonkieChunker(chunk_size, overlap)
    chunks = chunker.chunk(text, path)
    assert_chunk_invariants(text, chunks)
    assert_chunks_start_lines(text, chunks, long_line=chunker.max_chars)
    assert_core_cap(text, chunks, chunker.max_chars)


def test_http_package_second_chunk_starts_at_a_line_start() -> None:
    path = STDLIB / "http/__init__.py"
    if not path.is_file():
        pytest.skip(f"{path} is not installed")
    text = path.read_text(encoding="utf-8")
    chunks = ChonkieChunker(512, 80).chunk(text, path)
    # POLICY_VERSION 2: lines 1-99, starting at character 35 of line 1.
    assert text[chunks[1].start_char - 1] == "\n"
    assert chunks[1].line_start > 1


def test_max_chars_is_chunk_size_times_max_chars_per_word() -> None:
    assert MAX_CHARS_PER_WORD == 16
    assert ChonkieChunker(512, 80).max_chars == 8192
    assert ChonkieChunker(64, 8, mode="text").max_chars == 1024


@pytest.mark.parametrize("suffix", [".js", ".py", ".md", ".txt"])
@pytest.mark.parametrize("mode", ["auto", "text"])
def test_text_without_whitespace_is_cut_at_max_chars_on_every_path(suffix: str, mode: str) -> None:
    text = "".join(chr(0x41 + (i * 7919) % 26) for i in range(100_000))  # one 100,000-character "word"
    chunker = ChonkieChunker(64, 8, mode=mode)  # type: ignore[arg-type]
    chunks = chunker.chunk(text, Path("blob" + suffix))
    assert_chunk_invariants(text, chunks)
    assert [len(c.content) for c in chunks] == [1024] * 97 + [672]  # one word per chunk: no overlap


def test_long_lines_without_whitespace_are_cut_at_max_chars_and_new_lines_start_chunks() -> None:
    text = ("a" * 2500 + "\n") * 4 + "short line\n"
    chunks = ChonkieChunker(64, 8).chunk(text, Path("data.txt"))
    assert_chunk_invariants(text, chunks)
    per_line = [(line, line, size) for line in (1, 2, 3, 4) for size in (1024, 1024, 452)]
    per_line[-1] = (4, 5, 452 + 1 + len("short line"))  # the tail of line 4 fits with line 5
    assert [(c.line_start, c.line_end, len(c.content)) for c in chunks] == per_line
    assert [c.start_char for c in chunks][3::3] == [2501, 5002, 7503]  # each line starts a chunk


# -- markdown ---------------------------------------------------------------------------------------------


def test_markdown_chunks_start_at_headings_and_carry_their_section() -> None:
    chunks = ChonkieChunker(512, 0).chunk(MARKDOWN, Path("guide.md"))
    assert_chunk_invariants(MARKDOWN, chunks)
    assert {c.kind for c in chunks} == {"markdown"}
    assert _layout(chunks) == [
        (1, 39, "# Operations Guide", "# Operations Guide"),  # + Overview + Installation: they fit
        (41, 77, "## Configuration", "## Configuration"),
        (79, 129, "## Rollback Procedures", "## Rollback Procedures"),  # 1400 words: split
        (
            131,
            179,
            "## Rollback Procedures",
            "proc480 proc481 proc482 proc483 proc484 proc485 proc486 proc487 proc488 proc489 proc490 proc491.",
        ),
        (
            181,
            226,
            "## Rollback Procedures",
            "proc960 proc961 proc962 proc963 proc964 proc965 proc966 proc967 proc968 proc969 proc970 proc971.",
        ),
        (228, 241, "## Monitoring", "## Monitoring"),
        (243, 293, "## Troubleshooting", "## Troubleshooting"),
        (
            295,
            317,
            "## Troubleshooting",
            "trou480 trou481 trou482 trou483 trou484 trou485 trou486 trou487 trou488 trou489 trou490 trou491.",
        ),
        (319, 360, "## FAQ", "## FAQ"),  # + Appendix
        (362, 392, "## Setext Section", "Setext Section"),  # + Closing Notes (setext too)
    ]
    assert all(c.tokens <= 512 for c in chunks)
    configuration = chunks[1]
    assert "# not a heading" in configuration.content
    assert all(c.section != "# not a heading" for c in chunks)


def test_markdown_heading_lines_are_chunk_starts_wherever_a_section_fits() -> None:
    chunks = ChonkieChunker(200, 0).chunk(MARKDOWN, Path("guide.md"))
    starts = {c.start_char for c in chunks}
    lines = MARKDOWN.split("\n")
    offsets = [sum(len(x) + 1 for x in lines[:n]) for n in range(len(lines))]
    for title in ["## Configuration", "## Rollback Procedures", "## Monitoring", "## Troubleshooting", "## Appendix"]:
        assert MARKDOWN.index(title + "\n") in starts, title
    assert all(offsets[c.line_start - 1] == c.start_char for c in chunks)  # every chunk starts a line


def test_markdown_suffix_is_case_insensitive() -> None:
    chunks = ChonkieChunker(512, 0).chunk(MARKDOWN, Path("GUIDE.MD"))
    assert chunks[1].kind == "markdown" and chunks[1].section == "## Configuration"


# -- overlap ------------------------------------------------------------------------------------------------


def test_overlap_zero_gives_disjoint_chunks() -> None:
    chunks = ChonkieChunker(512, 0).chunk(MARKDOWN, Path("guide.md"))
    assert all(b.start_char > a.end_char for a, b in pairwise(chunks))


def test_overlap_repeats_about_overlap_words_from_a_line_start() -> None:
    plain = ChonkieChunker(512, 0).chunk(MARKDOWN, Path("guide.md"))
    chunks = ChonkieChunker(512, 20).chunk(MARKDOWN, Path("guide.md"))
    assert_chunk_invariants(MARKDOWN, chunks)
    assert [c.end_char for c in chunks] == [c.end_char for c in plain]  # overlap only moves starts
    assert [c.section for c in chunks] == [c.section for c in plain]
    for previous, chunk in pairwise(chunks):
        assert previous.start_char < chunk.start_char < previous.end_char
        assert MARKDOWN[chunk.start_char - 1] == "\n"
        shared = count_words(MARKDOWN[chunk.start_char : previous.end_char])
        assert 20 <= shared <= 40


def test_changing_overlap_or_chunk_size_changes_the_chunks() -> None:
    base = ChonkieChunker(512, 20).chunk(MARKDOWN, Path("guide.md"))
    assert ChonkieChunker(512, 40).chunk(MARKDOWN, Path("guide.md")) != base
    assert ChonkieChunker(256, 20).chunk(MARKDOWN, Path("guide.md")) != base
    assert ChonkieChunker(512, 20).chunk(MARKDOWN, Path("guide.md")) == base


# -- code -----------------------------------------------------------------------------------------------------


def test_python_chunks_start_at_definitions_with_their_section() -> None:
    chunks = ChonkieChunker(50, 0).chunk(PYTHON, Path("deploy.py"))
    assert_chunk_invariants(PYTHON, chunks)
    assert {c.kind for c in chunks} == {"code"}
    assert _layout(chunks) == [
        (1, 6, None, '"""Deployment helpers."""'),
        (9, 17, "def deploy(target, *, dry_run=False):", "def deploy(target, *, dry_run=False):"),
        (18, 23, "def deploy(target, *, dry_run=False):", "    deploy_7 = compute('deploy', 7) + offset"),
        (26, 36, "def rollback(target):", "# Rollback undoes a deploy."),
        (37, 43, "def rollback(target):", "    rollback_8 = compute('rollback', 8) + offset"),
        (46, 57, "class Release:", "class Release:"),
        (59, 68, "def version(self):", "    @property"),
        (69, 70, "def version(self):", "        version_8 = compute('version', 8) + offset"),
        (72, 80, "def publish(self, channel):", "    def publish(self, channel):"),
        (81, 89, "def publish(self, channel):", "        publish_8 = compute('publish', 8) + offset"),
        (90, 97, None, "    main_0 = compute('main', 0) + offset"),
        (98, 100, None, "    main_8 = compute('main', 8) + offset"),
    ]


def test_javascript_chunks_start_at_functions_and_classes() -> None:
    chunks = ChonkieChunker(50, 0).chunk(JAVASCRIPT, Path("app.js"))
    assert_chunk_invariants(JAVASCRIPT, chunks)
    assert _layout(chunks) == [
        (1, 1, None, "import { compute } from './compute.js';"),
        (3, 12, "function alpha(a, b) {", "function alpha(a, b) {"),
        (13, 17, "function alpha(a, b) {", "  const alpha9 = compute('alpha', 9);"),
        (19, 29, "function beta(a, b) {", "// Beta does the second step."),
        (30, 36, "function beta(a, b) {", "  const beta9 = compute('beta', 9);"),
        (38, 53, "export class Gamma {", "export class Gamma {"),  # its closing "}" stays with it
    ]


def test_go_chunks_start_at_functions() -> None:
    chunks = ChonkieChunker(50, 0).chunk(GO, Path("main.go"))
    assert_chunk_invariants(GO, chunks)
    assert _layout(chunks) == [
        (1, 3, None, "package main"),
        (5, 17, "func alpha(a int, b int) int {", "func alpha(a int, b int) int {"),
        (18, 19, "func alpha(a int, b int) int {", "\treturn a + b"),
        (21, 33, "func beta(a int, b int) int {", "func beta(a int, b int) int {"),
        (34, 41, "func beta(a int, b int) int {", '\tv12 := compute("beta", 12)'),
    ]


def test_code_piece_larger_than_a_chunk_is_cut_like_prose() -> None:
    paragraphs = "\n\n".join("    " + " ".join(f"d{p}w{i}" for i in range(30)) for p in range(15))
    text = f'def documented():\n    """\n{paragraphs}\n    """\n    return 1\n'
    chunks = ChonkieChunker(50, 0).chunk(text, Path("doc.py"))
    assert_chunk_invariants(text, chunks)
    assert len(chunks) == 16
    assert [c.tokens for c in chunks] == [33] + [30] * 14 + [3]  # header + first paragraph, ..., closing
    assert {c.section for c in chunks} == {"def documented():"}


def test_text_mode_uses_the_paragraph_path_for_every_file() -> None:
    chunker = ChonkieChunker(50, 0, mode="text")
    for text, name in [(PYTHON, "deploy.py"), (MARKDOWN, "guide.md"), (GO, "main.go")]:
        chunks = chunker.chunk(text, Path(name))
        assert_chunk_invariants(text, chunks)
        assert {c.kind for c in chunks} == {"text"}
        if name != "guide.md":  # markdown's setext headings are underlined headings in text mode too
            assert {c.section for c in chunks} == {None}


def test_missing_grammar_falls_back_to_text_for_that_language(monkeypatch: pytest.MonkeyPatch) -> None:
    import tree_sitter_language_pack

    real_get_parser = tree_sitter_language_pack.get_parser
    asked: list[str] = []

    def get_parser(language: str):  # type: ignore[no-untyped-def]
        asked.append(language)
        if language == "go":
            raise LookupError(f"Could not find language library for {language}")
        return real_get_parser(language)

    monkeypatch.setattr(tree_sitter_language_pack, "get_parser", get_parser)
    chunker = ChonkieChunker(50, 0)
    go_chunks = chunker.chunk(GO, Path("main.go"))
    assert_chunk_invariants(GO, go_chunks)
    assert {c.kind for c in go_chunks} == {"text"}
    assert {c.kind for c in chunker.chunk(GO, Path("other.go"))} == {"text"}
    assert {c.kind for c in chunker.chunk(PYTHON, Path("deploy.py"))} == {"code"}
    assert asked == ["go", "python"]  # the failure is remembered: one attempt per language


def test_code_chunkers_are_built_once_per_language(monkeypatch: pytest.MonkeyPatch) -> None:
    import chonkie

    built: list[str] = []
    real = chonkie.CodeChunker

    def counting(**kwargs):  # type: ignore[no-untyped-def]
        built.append(kwargs["language"])
        return real(**kwargs)

    monkeypatch.setattr(chonkie, "CodeChunker", counting)
    chunker = ChonkieChunker(50, 0)
    for name in ["a.py", "b.py", "c.pyi", "d.js", "e.mjs", "f.go"]:
        chunker.chunk(PYTHON, Path(name))
    assert built == ["python", "javascript", "go"]


def test_chonkie_offsets_that_do_not_tile_the_text_raise_chunking_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from chonkie import Chunk as ChonkieChunk

    chunker = ChonkieChunker(50, 0, mode="text")
    recursive = chunker._recursive_chunker()
    monkeypatch.setattr(
        recursive,
        "chunk",
        lambda text: [ChonkieChunk(text=text[1:], start_index=1, end_index=len(text), token_count=1)],
    )
    with pytest.raises(ChunkingError):
        chunker.chunk("some text here", Path("a.txt"))


# -- quiet, offline ------------------------------------------------------------------------------------------


def test_chonkie_logging_is_silenced(capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    chunker = ChonkieChunker(50, 0)
    chunker.chunk(PYTHON, Path("deploy.py"))
    chunker.chunk(MARKDOWN, Path("guide.md"))
    logging.getLogger("chonkie.chunker.code").warning("this must not be printed")
    logging.getLogger("chonkie").error("nor this")
    captured = capfd.readouterr()
    assert (captured.out, captured.err) == ("", "")
    assert not [r for r in caplog.records if r.name.startswith("chonkie")]
    assert not any(isinstance(h, logging.StreamHandler) for h in logging.getLogger("chonkie").handlers)


def test_token_count_cache_is_cleared_after_each_file() -> None:
    from chonkie import RecursiveChunker

    ChonkieChunker(50, 0).chunk(MARKDOWN, Path("guide.md"))
    assert RecursiveChunker._estimate_token_count.cache_info().currsize == 0


@pytest.mark.parametrize(("suffix", "mode"), [(".py", "auto"), (".md", "auto"), (".txt", "auto"), (".py", "text")])
def test_lone_surrogates_are_chunked_like_any_other_character(suffix: str, mode: str) -> None:
    text = PYTHON.replace("Deploy to target.", "Deploy \udc80 to target.")  # a str only the API can pass
    with pytest.raises(UnicodeEncodeError):
        text.encode("utf-8")
    chunks = ChonkieChunker(50, 0, mode=mode).chunk(text, Path("deploy" + suffix))  # type: ignore[arg-type]
    assert_chunk_invariants(text, chunks)
    expected = ChonkieChunker(50, 0, mode=mode).chunk(PYTHON, Path("deploy" + suffix))  # type: ignore[arg-type]
    assert _layout(chunks) == _layout(expected)
