"""The structural :class:`~hermes_workspace.domain.ports.Chunker`: tree-sitter outlines of code,
heading outlines of documents, chunked by :mod:`hermes_workspace.domain.structure` (DESIGN.md §6).

This adapter only builds a file's outline; the chunking policy (decompose, split, pack,
breadcrumbs) is the domain's:

- markdown (``.md``, ``.mdx``, ``.markdown``): heading sections, nested by level;
- code (suffixes of :data:`~hermes_workspace.domain.constants.CODE_LANGUAGES`): definitions found
  in the tree-sitter syntax tree of tree-sitter-language-pack's grammar for the language
  (functions, methods, classes, structs, ``impl`` blocks, interfaces, traits, modules...), each
  starting at the comments and attributes directly above it; classes and other containers are
  always decomposed into header and members, functions only when larger than ``chunk_size``
  (their nested definitions are looked up only then). A language whose grammar cannot be loaded
  is chunked as text;
- any other file: reStructuredText-style underlined sections when it has some, else paragraphs.

Offline by construction: grammars ship inside tree-sitter-language-pack. Instances are not
thread-safe (parsers are reused); use one per thread or process.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path
from typing import Any, Literal

from hermes_workspace.domain.chunking import (
    MAX_SECTION_CHARS,
    POLICY_VERSION,
    heading_sections,
    markdown_headings,
    underlined_headings,
)
from hermes_workspace.domain.constants import CODE_LANGUAGES, MARKDOWN_SUFFIXES, MAX_CHARS_PER_WORD
from hermes_workspace.domain.errors import MissingExtraError
from hermes_workspace.domain.lines import LineIndex
from hermes_workspace.domain.model import Chunk
from hermes_workspace.domain.structure import (
    DEFAULT_MIN_WORDS,
    StructureSettings,
    Unit,
    markdown_outline,
    structured_chunks,
    underlined_outline,
)

ADAPTER_VERSION = 1
"""Version of this adapter's outline rules (node types, names, comment attachment); part of
:attr:`TreeSitterChunker.signature`."""

INSTALL_HINT = "pip install 'hermes-workspace[workspace]' (from a source checkout: pip install -e '.[workspace]')"

Mode = Literal["auto", "text"]

_DEFINITION_TYPES = frozenset(
    {
        # Python
        "function_definition", "class_definition", "decorated_definition",
        # JavaScript / TypeScript
        "function_declaration", "generator_function_declaration", "class_declaration",
        "abstract_class_declaration", "method_definition", "interface_declaration",
        "enum_declaration", "type_alias_declaration", "internal_module", "module",
        # Rust
        "function_item", "struct_item", "enum_item", "union_item", "impl_item", "trait_item",
        "mod_item", "macro_definition",
        # Go
        "method_declaration", "type_declaration",
        # Java, C#, Kotlin, Scala, Swift, Dart
        "constructor_declaration", "record_declaration", "struct_declaration",
        "namespace_declaration", "object_declaration", "object_definition", "trait_definition",
        "protocol_declaration", "extension_declaration",
        # C / C++
        "struct_specifier", "class_specifier", "union_specifier", "enum_specifier",
        "namespace_definition",
        # Ruby, PHP, Lua, shell, Elixir...
        "method", "class", "singleton_method", "function_definition_statement",
        "trait_declaration",
        # Declarations without a body: Rust trait methods, TypeScript interface members
        "function_signature_item", "method_signature", "abstract_method_signature",
    }
)  # fmt: skip
"""Syntax node types that start a definition, across the grammars of CODE_LANGUAGES."""

_CONTAINER_WORDS = ("class", "struct", "impl", "interface", "trait", "module", "namespace", "object",
                    "protocol", "extension", "record", "enum", "union", "mod_item")
"""A definition whose node type holds one of these is a container: always split into members."""

_SPECIFIERS_NEED_BODY = frozenset({"struct_specifier", "class_specifier", "union_specifier", "enum_specifier"})
"""C/C++ specifiers are definitions only with a body (``struct point p;`` merely uses one)."""

_VARIABLE_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_VARIABLE_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_NAME_TYPES = ("identifier", "type_identifier", "field_identifier", "property_identifier", "constant",
               "name", "simple_identifier", "word", "scope_resolution", "qualified_identifier")
_ATTACHED = ("comment", "attribute_item", "attribute", "decorator", "annotation", "line_comment",
             "block_comment", "doc_comment")
_MAX_NAME_CHARS = 120
_GENERIC_ARGUMENTS = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")
_RECEIVER_TYPE = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*\)\s*$")


class TreeSitterChunker:
    """Structure-following chunker (see the module docstring).

    Args:
        chunk_size: most words per chunk before overlap (> 0); a chunk also holds at most
            ``chunk_size * MAX_CHARS_PER_WORD`` characters before overlap.
        overlap: words repeated between consecutive parts of one split unit
            (``0 <= overlap < chunk_size``); never across units.
        min_words: pieces smaller than this are packed with siblings (>= 0).
        mode: ``"auto"`` dispatches by suffix; ``"text"`` uses the document path for every file
            (the application's fallback when the auto path raises).

    Raises:
        ValueError: a size out of range or an unknown ``mode``.
        MissingExtraError: ``mode="auto"`` and tree-sitter-language-pack is not installed.
    """

    def __init__(self, chunk_size: int, overlap: int, *, min_words: int = DEFAULT_MIN_WORDS,
                 mode: Mode = "auto") -> None:
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0 words, got {chunk_size}")
        if overlap < 0 or overlap >= chunk_size:
            raise ValueError(f"overlap must be >= 0 and < chunk_size ({chunk_size}) words, got {overlap}")
        if min_words < 0:
            raise ValueError(f"min_words must be >= 0, got {min_words}")
        if mode not in ("auto", "text"):
            raise ValueError(f"mode must be 'auto' or 'text', got {mode!r}")
        self.chunk_size = chunk_size
        self.overlap = overlap
        self.min_words = min_words
        self.mode: Mode = mode
        self._pack: Any = import_language_pack() if mode == "auto" else None
        self._tslp_version = installed_version("tree-sitter-language-pack")
        self._grammars: dict[str, _Grammar | None] = {}  # language -> grammar, None: missing

    @property
    def signature(self) -> str:
        """Changes whenever the grammar package, our policy or a setting changes the chunks."""
        return (
            f"structure;tree-sitter-language-pack={self._tslp_version};policy={POLICY_VERSION};"
            f"adapter={ADAPTER_VERSION};mode={self.mode};chunk_size={self.chunk_size};"
            f"overlap={self.overlap};min_words={self.min_words}"
        )

    @property
    def max_chars(self) -> int:
        """Most characters in a chunk before overlap, ``chunk_size * MAX_CHARS_PER_WORD``."""
        return self.chunk_size * MAX_CHARS_PER_WORD

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        """Chunks of ``text`` (the decoded content of ``path``; only its suffix is used), in file
        order, ``index`` 0..n-1, ``text[c.start_char:c.end_char] == c.content``, with
        breadcrumbs; ``[]`` for whitespace-only text.

        Raises:
            Exception: whatever tree-sitter raises; the caller falls back to a ``mode="text"``
                chunker.
        """
        if not text or text.isspace():
            return []
        suffix = path.suffix.lower()
        lines = LineIndex(text)
        if self.mode == "auto" and suffix in MARKDOWN_SUFFIXES:
            headings = markdown_headings(text)
            return structured_chunks(
                text, markdown_outline(text, lines, headings), self._settings(" > "), kind="markdown", lines=lines,
                fenced=True, section_at=heading_sections(headings),
            )
        if self.mode == "auto" and suffix in CODE_LANGUAGES:
            grammar = self._grammar(CODE_LANGUAGES[suffix])
            if grammar is not None:
                outline = grammar.outline(text, self.chunk_size)
                if outline is not None:
                    return structured_chunks(text, outline, self._settings("."), kind="code", lines=lines)
        headings = underlined_headings(text)
        return structured_chunks(
            text, underlined_outline(text, lines, headings), self._settings(" > "), kind="text", lines=lines,
            section_at=heading_sections(headings),
        )

    def _settings(self, separator: str) -> StructureSettings:
        return StructureSettings(self.chunk_size, self.overlap, self.min_words, self.max_chars, separator)

    def _grammar(self, language: str) -> _Grammar | None:
        if language not in self._grammars:
            try:
                self._grammars[language] = _Grammar(self._pack, language)
            except (LookupError, ValueError, ImportError, OSError, RuntimeError, NameError):
                self._grammars[language] = None  # grammar missing: text path, remembered
        return self._grammars[language]


class _Grammar:
    """A language's parser and the query that captures its definition nodes (run in C, so that
    finding definitions costs nothing per syntax node in Python)."""

    def __init__(self, pack: Any, language: str) -> None:
        import tree_sitter

        self.parser = pack.get_parser(language)
        grammar = pack.get_language(language)
        kinds = [k for k in sorted(_DEFINITION_TYPES) if grammar.id_for_node_kind(k, True) is not None]
        patterns = " ".join(f"({kind}) @definition" for kind in kinds)
        variable = " ".join(
            f"(variable_declarator value: ({kind})) @variable"
            for kind in sorted(_VARIABLE_FUNCTIONS)
            if grammar.id_for_node_kind(kind, True) is not None
        )
        try:
            self.query = tree_sitter.Query(grammar, f"{patterns} {variable}")
        except Exception:  # noqa: BLE001 - a grammar without those fields: definitions only
            self.query = tree_sitter.Query(grammar, patterns) if patterns else None
        self._cursor_type = tree_sitter.QueryCursor

    def outline(self, text: str, chunk_size: int) -> list[Unit] | None:
        """Top-level definitions of ``text`` as units with their nested definitions, or ``None``
        when the file is one long line (minified code: its definitions share lines, the text
        path cuts it by characters)."""
        data = text.encode("utf-8", "replace")  # lone surrogates: one byte each, rows unchanged
        root = self.parser.parse(data).root_node
        if root.end_point[0] == 0 and len(text) > chunk_size * MAX_CHARS_PER_WORD:
            return None
        if self.query is None:
            return []
        captures = self._cursor_type(self.query).captures(root)
        nodes = [n for n in captures.get("definition", ()) if _is_definition(n)]
        nodes += [v.parent for v in captures.get("variable", ()) if v.parent is not None and v.parent.type in _VARIABLE_DECLARATIONS]
        return _nest_nodes(nodes, data)


def _is_definition(node: Any) -> bool:
    parent = node.parent
    if parent is None:
        return False  # the root: Python's syntax tree root is a `module`, a Ruby definition type
    if node.type in _SPECIFIERS_NEED_BODY and node.child_by_field_name("body") is None:
        return False
    return parent.type != "decorated_definition"  # the decorated node covers it


def _nest_nodes(nodes: list[Any], data: bytes) -> list[Unit]:
    """Definition nodes (any order, nested ones included) as a tree of units, by containment."""
    nodes = sorted({(n.start_byte, n.end_byte): n for n in nodes}.values(), key=lambda n: (n.start_byte, -n.end_byte))
    top: list[Any] = []
    children: dict[int, list[Any]] = {}
    stack: list[Any] = []
    for node in nodes:
        while stack and stack[-1].end_byte <= node.start_byte:
            stack.pop()
        (children.setdefault(id(stack[-1]), []) if stack else top).append(node)
        stack.append(node)

    def build(group: list[Any]) -> tuple[Unit, ...]:
        units: list[Unit] = []
        for node in group:
            unit = _unit(node, build(children.get(id(node), [])), data)
            if units and unit.start <= units[-1].end:
                continue  # definitions sharing a row (one-liners): the first stands
            units.append(unit)
        return tuple(units)

    return list(build(top))


def _unit(node: Any, nested: tuple[Unit, ...], data: bytes) -> Unit:
    definition = node
    if node.type == "decorated_definition":
        definition = node.child_by_field_name("definition") or node
    elif node.type in _VARIABLE_DECLARATIONS:
        definition = next((c for c in node.named_children if c.type == "variable_declarator"), node)
    start = node.start_point[0]
    above = node.prev_named_sibling
    while above is not None and (above.type in _ATTACHED or above.type.endswith("comment")) and above.end_point[0] >= start - 1:
        start = above.start_point[0]
        above = above.prev_named_sibling
    end_row, end_column = node.end_point
    if end_column == 0 and end_row > node.start_point[0]:
        end_row -= 1
    container = any(word in definition.type for word in _CONTAINER_WORDS)
    nested = tuple(u for u in nested if start <= u.start and u.end <= end_row)
    return Unit(start, end_row, _name(definition, data), nested, container=container, label=_label(definition, data))


def _label(definition: Any, data: bytes) -> str:
    """The definition's first line, stripped (its ``section``): below decorators, as
    :func:`~hermes_workspace.domain.chunking.section_finder` reports it."""
    row_start = definition.start_byte - definition.start_point[1]
    row_end = data.find(b"\n", definition.start_byte)
    line = data[row_start : len(data) if row_end == -1 else row_end].decode("utf-8", "replace").strip()
    return line if len(line) <= MAX_SECTION_CHARS else line[: MAX_SECTION_CHARS - 1] + "\u2026"


def _name(node: Any, data: bytes) -> str | None:
    """The identifier a definition node declares: ``save_session``, ``Config``, a C function's
    name (through its declarators, not its return type), a Rust ``impl``'s type without generic
    arguments (``impl<T> Filter<T>`` -> ``Filter``), a Go method qualified by its receiver's type
    (``func (c *Client) Run`` -> ``Client.Run``)."""
    target = node.child_by_field_name("name")
    if target is None:
        declarator = node.child_by_field_name("declarator")  # C/C++ functions
        while declarator is not None and declarator.child_by_field_name("declarator") is not None:
            declarator = declarator.child_by_field_name("declarator")
        target = declarator
    if target is None:
        target = node.child_by_field_name("type")  # Rust impl blocks
    if target is None:
        for child in node.named_children:
            if child.type == "type_spec":
                target = child.child_by_field_name("name") or child
                break
            if child.type in _NAME_TYPES:
                target = child
                break
    if target is None:
        return None
    name = _GENERIC_ARGUMENTS.sub("", _text(target, data))
    receiver = node.child_by_field_name("receiver") if node.type == "method_declaration" else None
    if receiver is not None:  # Go: the receiver's type names the method's owner
        owner = _RECEIVER_TYPE.search(_text(receiver, data))
        if owner:
            name = f"{owner.group(1)}.{name}"
    name = " ".join(name.split())
    return name[:_MAX_NAME_CHARS] or None


def _text(node: Any, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def import_language_pack() -> Any:
    """The ``tree_sitter_language_pack`` module.

    Raises:
        MissingExtraError: it is not installed (the ``workspace`` extra)."""
    try:
        import tree_sitter_language_pack
    except ImportError as exc:
        raise MissingExtraError(
            f"code chunking needs the optional dependency tree-sitter-language-pack, which is not installed ({exc})",
            hint=INSTALL_HINT,
        ) from exc
    return tree_sitter_language_pack


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``"none"`` (part of chunker signatures)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "none"
