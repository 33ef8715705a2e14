"""What never enters an index by default, whatever ignore file a root has (DESIGN.md §6).

Seed 000 lets the first ignore file of a root (``.hermesignore``, else ``.gitignore``, else the
built-in defaults) decide alone. A root whose ``.gitignore`` says only ``*.log`` would then offer
``.env``, ``server.key`` and ``.git/`` for indexing, and a search would serve secrets to an agent.
So a small deny list applies in every root before those rules: secrets (environment files, keys
and certificates, credential stores), version-control folders, and the workspace's own files.
Only an explicit re-include in a ``.hermesignore`` (the deciding ``!pattern``, as gitignore
decides, naming the path's last segment literally: ``!.env.example``, not ``!*``) lets such a path in; a ``.gitignore`` cannot, because
it was written for git, not for a search index.

Matching is by entry name (case-insensitive, since ``.ENV`` on a case-insensitive file system is
the same file), plus a few names that are secrets only inside a known folder
(``.aws/credentials``). Standard library only, so the real and the in-memory file sources apply
the same list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import translate
from typing import Literal

ExclusionCategory = Literal["secret", "version_control", "workspace_internal", "outside_roots"]
"""Why a path is always excluded: ``secret`` (a file or folder that holds credentials),
``version_control`` (a repository's own database: ``.git``...), ``workspace_internal`` (the
workspace's index, logs and model files), ``outside_roots`` (a symbolic link whose target lies
outside every root: a cloned repository may hold ``notes.md -> ~/.ssh/id_rsa``; add the target's
folder as a root to index it)."""

EXCLUSION_CATEGORIES: tuple[ExclusionCategory, ...] = ("secret", "version_control", "workspace_internal", "outside_roots")

SECRET_FILE_PATTERNS: tuple[str, ...] = (
    # environment files: dotenv and its variants (.env.local, .env.production, prod.env), direnv
    ".env", ".env.*", "*.env", ".envrc",
    # private keys, certificates and key stores
    "*.pem", "*.key", "*.crt", "*.cer", "*.der", "*.p8", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "*.ppk", "*.kdbx", "*.gpg", "*.asc", "*.ovpn", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
    "id_ecdsa_sk", "id_ed25519_sk",
    # credential stores of common tools
    ".netrc", "_netrc", ".pgpass", ".git-credentials", ".pypirc", ".npmrc", ".htpasswd",
    ".dockercfg", "*.tfstate", "*.tfstate.*", "credentials.json", "service-account*.json", "kubeconfig",
    "*.kubeconfig", "secrets.yaml", "secrets.yml", ".vault-token", ".s3cfg", ".boto", ".my.cnf",
    # shell, database and REPL histories (typed passwords and tokens end up there)
    ".*_history", ".histfile", ".lesshst",
)
"""File names (fnmatch patterns, compared lower-cased) that are secrets wherever they are; a backup
of one (:data:`BACKUP_SUFFIXES`) is one too."""

BACKUP_SUFFIXES: tuple[str, ...] = (".bak", ".backup", ".old", ".orig", ".save", ".sav", ".tmp", ".swp", "~")
"""Endings that editors and people add to a copy: ``id_rsa.bak`` and ``.env~`` are the secret they copy."""

SECRET_FILES_IN_FOLDER: frozenset[tuple[str, str]] = frozenset(
    {
        (".aws", "credentials"), (".aws", "config"), (".docker", "config.json"), (".kube", "config"),
        (".config/gcloud", "credentials.db"), (".config/gcloud", "access_tokens.db"),
        (".config/gh", "hosts.yml"), (".cargo", "credentials"), (".cargo", "credentials.toml"),
        (".azure", "accesstokens.json"), (".azure", "msal_token_cache.json"),
        (".terraform.d", "credentials.tfrc.json"), (".gem", "credentials"), (".config/rclone", "rclone.conf"),
    }
)
"""``(folder, file name)`` pairs (compared lower-cased) that are credential stores only inside that
folder."""

SECRET_DIR_NAMES: frozenset[str] = frozenset({".ssh", ".gnupg"})
"""Folders that hold keys and nothing else worth searching."""

VERSION_CONTROL_NAMES: frozenset[str] = frozenset({".git", ".svn", ".hg", ".bzr", "_darcs", ".jj"})
"""Repository databases (a ``.git`` file, as in a submodule or a linked worktree, included)."""

WORKSPACE_INTERNAL_DIR_NAMES: frozenset[str] = frozenset({".index"})
"""The index folder of a Hermes workspace, wherever one is met (absolute internal folders, such
as ``HERMES_HOME/logs``, are given to the file source by path)."""

_SECRET_FILE = re.compile("|".join(translate(pattern) for pattern in SECRET_FILE_PATTERNS))


def _without_backup_suffix(name: str) -> str:
    for suffix in BACKUP_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def always_excluded(name: str, *, is_dir: bool, parent: str = "") -> ExclusionCategory | None:
    """The category that excludes the entry called ``name``, or ``None``.

    Args:
        name: the entry's own name (no ``/``).
        is_dir: whether the entry is a directory (after following a symlink).
        parent: the path of the folder holding it, ``/``-separated, without a trailing ``/``
            (relative to the root or absolute); only its last one or two parts matter.

    Never raises.
    """
    folded = name.lower()
    if folded in VERSION_CONTROL_NAMES:
        return "version_control"
    if is_dir:
        if folded in SECRET_DIR_NAMES:
            return "secret"
        if folded in WORKSPACE_INTERNAL_DIR_NAMES:
            return "workspace_internal"
        return None
    stem = _without_backup_suffix(folded)
    if _SECRET_FILE.match(folded) or _SECRET_FILE.match(stem):
        return "secret"
    if parent:
        folder = parent.lower()
        for secret_folder, secret_name in SECRET_FILES_IN_FOLDER:
            if secret_name in (stem, folded) and (folder == secret_folder or folder.endswith("/" + secret_folder)):
                return "secret"
    return None


def excluded_path(parts: Sequence[str], *, is_dir: bool) -> ExclusionCategory | None:
    """The category that excludes a path given as its ``parts`` (from the filesystem root or from a
    root folder), checking every folder on the way and the last part (a folder when ``is_dir``):
    a root added inside ``~/.aws`` or ``repo/.git``, or a link whose target lies there, is
    excluded like the folder itself. ``None`` when no part is excluded. Never raises."""
    for depth, name in enumerate(parts):
        last = depth == len(parts) - 1
        category = always_excluded(name, is_dir=is_dir or not last, parent="/".join(parts[:depth]))
        if category is not None:
            return category
    return None
