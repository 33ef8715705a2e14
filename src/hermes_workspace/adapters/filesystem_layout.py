"""``FilesystemLayout``: creates the workspace's index folder and, for the home workspace, the
primary workspace's folders and a seeded ``.hermesignore``."""

from __future__ import annotations

from pathlib import Path

from hermes_workspace.domain.constants import DEFAULT_IGNORE_RULES, IGNORE_FILENAME, INDEX_DIRNAME, WORKSPACE_SUBDIRS
from hermes_workspace.domain.errors import StoreError


class FilesystemLayout:
    """A :class:`~hermes_workspace.domain.ports.WorkspaceLayout` on the local disk.

    ``index_dir``: where the index lives (``None``: ``<primary>/.index``). ``seed``: whether the
    primary workspace gets the seed 000 folders and ``.hermesignore``; False for a project
    config, whose primary root is a repository that must not gain files (its index is under
    HERMES_HOME/projects, :mod:`hermes_workspace.domain.project_config`)."""

    def __init__(self, index_dir: Path | None = None, seed: bool = True) -> None:
        self.index_dir = index_dir
        self.seed = seed

    def ensure(self, primary: Path, *, create_folders: bool) -> None:
        """Create the index folder and, with ``create_folders`` and ``seed``, the seed 000 folders
        and a default ``.hermesignore`` if none exists. Raises :class:`StoreError` if the folders
        cannot be created."""
        index_dir = self.index_dir if self.index_dir is not None else primary / INDEX_DIRNAME
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
            if not (create_folders and self.seed):
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
