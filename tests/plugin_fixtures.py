"""Third-party-style plugins for the registry tests, importable by worker processes
(``tests.plugin_fixtures:<name>`` targets)."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_workspace.domain.chunking import build_chunks
from hermes_workspace.domain.constants import MAX_CHARS_PER_WORD
from hermes_workspace.domain.model import Chunk
from hermes_workspace.domain.plugins import PluginContext


class MarkerChunker:
    """Paragraph chunks whose ``section`` is ``"marker <tag> pid=<process id>"``: the tag is
    ``options["tag"]`` (default ``m``), so a test sees which plugin (and which process) chunked."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.tag = str(context.options.get("tag", "m"))

    @property
    def signature(self) -> str:
        return f"marker;tag={self.tag};chunk_size={self.context.chunk_size};overlap={self.context.overlap}"

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        cuts = [i for i in range(len(text)) if text.startswith("\n\n", i)]
        label = f"marker {self.tag} pid={os.getpid()}"
        return build_chunks(text, cuts, kind="text", overlap=self.context.overlap,
                            section_at=lambda offset: label,
                            max_chars=self.context.chunk_size * MAX_CHARS_PER_WORD)


def marker_chunker(context: PluginContext) -> MarkerChunker:
    """The factory an entry point would name."""
    return MarkerChunker(context)


def failing_factory(context: PluginContext) -> object:
    raise RuntimeError("the plugin's model file is missing")


def shapeless_factory(context: PluginContext) -> object:
    return object()


class PrintingChunker(MarkerChunker):
    """A :class:`MarkerChunker` that prints, as careless plugins do: when built, when its
    signature is read and for every file it chunks (a user trial found such output in the
    JSON of the CLI and on the MCP stdio wire)."""

    @property
    def signature(self) -> str:
        print("print-plugin: signature read")
        return super().signature

    def chunk(self, text: str, path: Path) -> list[Chunk]:
        print(f"print-plugin: chunking {path.name}")
        os.write(1, b"print-plugin: written to file descriptor 1\n")
        return super().chunk(text, path)


def printing_chunker(context: PluginContext) -> PrintingChunker:
    import atexit

    print("print-plugin: built")
    # Output after the command: an exit handler (a third trial found its line after the JSON).
    atexit.register(print, "print-plugin: at exit")
    atexit.register(os.write, 1, b"print-plugin: at exit, file descriptor 1\n")
    return PrintingChunker(context)


class SignatureFailsChunker(MarkerChunker):
    """Builds, but reading its ``signature`` raises."""

    @property
    def signature(self) -> str:
        raise KeyError("version")


def signature_fails_chunker(context: PluginContext) -> SignatureFailsChunker:
    return SignatureFailsChunker(context)
