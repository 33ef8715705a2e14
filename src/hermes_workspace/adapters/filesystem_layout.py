"""``FilesystemLayout``: creates the primary workspace's folders and seeds ``.hermesignore``."""

from __future__ import annotations

from pathlib import Path

from hermes_workspace.domain.constants import DEFAULT_IGNORE_RULES, IGNORE_FILENAME, INDEX_DIRNAME, WORKSPACE_SUBDIRS
from hermes_workspace.domain.errors import StoreError


class FilesystemLayout:
    """A :class:`~hermes_workspace.domain.ports.WorkspaceLayout` on the local disk."""

    def ensure(self, primary: Path, *, create_folders: bool) -> None:
        """Create ``primary/.index`` and, with ``create_folders``, the seed 000 folders and a
        default ``.hermesignore`` if none exists. Raises :class:`StoreError` if the folders
        cannot be created."""
        try:
            (primary / INDEX_DIRNAME).mkdir(parents=True, exist_ok=True)
            if not create_folders:
                return
            for name in WORKSPACE_SUBDIRS:
                (primary / name).mkdir(exist_ok=True)
            ignore = primary / IGNORE_FILENAME
            try:
                with ignore.open("x", encoding="utf-8") as handle:
                    handle.write(DEFAULT_IGNORE_RULES)
            except FileExistsError:
                pass
        except OSError as exc:
            raise StoreError(f"cannot create the workspace at {primary}: {exc}",
                             hint="Check permissions, or set workspace.path in config.yaml.") from exc
