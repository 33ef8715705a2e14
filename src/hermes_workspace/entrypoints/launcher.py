"""The console script's entry point: ``hermes-workspace --version`` answers before the command
line library and the adapters are imported (about 0.2 s of start-up); everything else goes to
:func:`hermes_workspace.entrypoints.cli.main`, with dependency-injector imported without the
optional integrations it would load (:func:`import_dependency_injector`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

DI_INTEGRATIONS = ("pydantic_settings", "pydantic", "fastapi", "starlette", "werkzeug", "fast_depends", "yaml")
"""Modules dependency-injector imports when they are installed, to support them in
``Configuration`` (pydantic settings, YAML files) and ``wire()`` (FastAPI, Starlette, Werkzeug).
We use neither. With the ``mcp`` extra installed they cost about 0.1 s of every command: Starlette
and pydantic directly, and because pydantic is then imported, cyclopts validates every argument
with a pydantic ``TypeAdapter`` (60 ms more), a third of a ``search`` in all."""


def _stand_in(name: str) -> ModuleType | None:
    """What :func:`_absent` puts in ``sys.modules[name]``: ``None`` (the import system's "not
    importable" mark), except for ``pydantic``, which dependency-injector imports with a plain
    ``import`` whose compiled form hands back that ``None`` and then reads ``pydantic.VERSION``:
    it gets a module that says it is not version 1, so that nothing else of it is looked at."""
    if name != "pydantic":
        return None
    module = ModuleType(name)
    module.VERSION = "absent"  # type: ignore[attr-defined]
    return module


@contextmanager
def _absent(modules: tuple[str, ...]) -> Iterator[None]:
    """While inside, each of ``modules`` not yet imported cannot be imported (see
    :func:`_stand_in`); afterwards they import normally again (the MCP server imports pydantic and
    Starlette itself)."""
    placed = {name: _stand_in(name) for name in modules if name not in sys.modules}
    sys.modules.update(placed)  # type: ignore[arg-type]
    try:
        yield
    finally:
        for name, stand_in in placed.items():
            if name in sys.modules and sys.modules[name] is stand_in:
                del sys.modules[name]


def import_dependency_injector() -> None:
    """Import dependency-injector's providers and containers without :data:`DI_INTEGRATIONS`.
    Only the console script does this: it owns its process and imports this before any thread
    starts. The Python API, a guest in another program, imports the library as it is."""
    with _absent(DI_INTEGRATIONS):
        import dependency_injector.containers  # noqa: F401
        import dependency_injector.providers  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code.
    ``--version`` (or ``-V``) alone prints the version and returns 0 without importing the CLI."""
    tokens = sys.argv[1:] if argv is None else argv
    if tokens in (["--version"], ["-V"]):
        from hermes_workspace import __version__

        sys.stdout.write(__version__ + "\n")
        return 0
    if "dependency_injector" not in sys.modules:
        import_dependency_injector()
    from hermes_workspace.entrypoints.cli import main as cli_main

    return cli_main(argv)
