"""Which chunking path a file takes, by its suffix."""

from __future__ import annotations

from pathlib import Path

from hermes_workspace.domain.constants import CODE_LANGUAGES, MARKDOWN_SUFFIXES
from hermes_workspace.domain.model import ChunkKind


def kind_for_path(path: Path) -> ChunkKind:
    """``"markdown"`` for .md/.mdx/.markdown, ``"code"`` for a suffix in
    :data:`~hermes_workspace.domain.constants.CODE_LANGUAGES`, else ``"text"`` (case-insensitive)."""
    suffix = path.suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in CODE_LANGUAGES:
        return "code"
    return "text"


def code_language(path: Path) -> str | None:
    """The tree-sitter grammar name for ``path``'s suffix, or ``None``."""
    return CODE_LANGUAGES.get(path.suffix.lower())
