"""An example hermes-workspace chunker plugin: INI-style files (``.ini``, ``.cfg``, ``.toml``) cut
at their ``[table]`` headers, each chunk's section being its table (``[server]``).

The built-in chunker reads these files as plain text (paragraphs); a table is the unit a question
about a setting is answered by. Select it in config.yaml::

    knowledgebase:
      chunkers:
        .ini: ini-tables
        .toml: ini-tables
      plugins:
        ini-tables: {min_table_words: 0}
"""

from __future__ import annotations

import re
from pathlib import Path

from hermes_workspace.domain.chunking import build_chunks
from hermes_workspace.domain.constants import MAX_CHARS_PER_WORD
from hermes_workspace.domain.model import Chunk
from hermes_workspace.domain.plugins import PluginContext

__version__ = "0.1.0"

_TABLE = re.compile(r"^[ \t]*\[{1,2}[^\[\]\n]+\]{1,2}[ \t]*(?:[#;].*)?$", re.MULTILINE)
"""A table header line: ``[name]`` or TOML's ``[[array.of.tables]]``, optionally commented."""


class IniTablesChunker:
    """A :class:`~hermes_workspace.domain.ports.Chunker`: one chunk per ``[table]`` (tables longer
    than ``chunk_size`` words are split by the shared chunking rules of
    :func:`hermes_workspace.domain.chunking.build_chunks`, which also keeps every chunk's offsets and
    line ranges exact); text before the first table is a chunk of its own.

    Built from a :class:`~hermes_workspace.domain.plugins.PluginContext` (the factory contract):
    ``chunk_size`` and ``overlap`` in words; ``options["min_table_words"]`` (default 0): tables with
    fewer words are merged into the previous chunk.
    """

    VERSION = 1

    def __init__(self, context: PluginContext) -> None:
        self.chunk_size = context.chunk_size
        self.overlap = context.overlap
        self.min_table_words = int(context.options.get("min_table_words", 0))
        if self.min_table_words < 0:
            raise ValueError(f"min_table_words must be >= 0, got {self.min_table_words}")

    @property
    def signature(self) -> str:
        """Name, version and every setting: a change re-chunks the files this chunker handles."""
        return (f"ini-tables;version={self.VERSION};chunk_size={self.chunk_size};overlap={self.overlap};"
                f"min_table_words={self.min_table_words}")

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        """Chunks of ``text`` cut at table headers; ``[]`` for whitespace-only text."""
        headers = [(m.start(), m.group().strip()) for m in _TABLE.finditer(text)]
        cuts = [start for start, _ in headers if start > 0]
        if self.min_table_words:
            cuts = [cut for cut, nxt in zip(cuts, [*cuts[1:], len(text)])
                    if len(text[cut:nxt].split()) >= self.min_table_words]

        def section_at(offset: int) -> str | None:
            current = None
            for start, header in headers:
                if start > offset:
                    break
                current = header
            return current

        return build_chunks(text, cuts, kind="text", overlap=self.overlap, section_at=section_at,
                            max_chars=self.chunk_size * MAX_CHARS_PER_WORD)
