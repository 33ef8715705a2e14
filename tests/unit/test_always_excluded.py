"""Secrets, version-control folders and the workspace's own files never enter an index by default,
whatever ignore file a root has (issue: a root whose .gitignore said only `*.log` had its `.env`,
`server.key` and `cert.pem` indexed and searchable). Only a `.hermesignore` `!` pattern lets one in."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.filesystem_source import FilesystemSource
from hermes_workspace.adapters.memory import (
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    NullProgressSink,
    ParagraphChunker,
    Utf8Decoder,
)
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.exclusions import always_excluded
from hermes_workspace.domain.model import ExcludedPath, FileRecord, Root, SourceFile

SECRETS = {
    ".env": "API_TOKEN=sk-live-123\n",
    ".env.production": "DB_PASSWORD=hunter2\n",
    "deploy/prod.env": "TOKEN=abc\n",
    "server.key": "-----BEGIN PRIVATE KEY-----\nMIIE\n",
    "cert.pem": "-----BEGIN CERTIFICATE-----\nMIIC\n",
    "keys/store.p12": "binaryish\n",
    "home/.aws/credentials": "[default]\naws_secret_access_key = x\n",
    "home/.ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    "web/.npmrc": "//registry/:_authToken=abc\n",
    ".netrc": "machine example login me password pw\n",
}
ORDINARY = {"a.py": "print(1)\n", "docs/env.md": "How to set up .env files\n", "home/.aws/notes.md": "# AWS\n"}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "repo"
    path.mkdir()
    write(path, SECRETS | ORDINARY | {".git/config": "[core]\n", "vendor/lib/.hg/store": "x\n"})
    return path


def walk(root: Path, *, recursive: bool = True, internal: tuple[Path, ...] = ()) -> list:
    return list(FilesystemSource(1 << 20, internal_dirs=internal).discover([Root(root, recursive=recursive)]))


def offered(items: list, root: Path) -> set[str]:
    return {i.path.relative_to(root).as_posix() for i in items if isinstance(i, SourceFile)}


def excluded(items: list, root: Path) -> dict[str, str]:
    return {i.path.relative_to(root).as_posix(): i.category for i in items if isinstance(i, ExcludedPath)}


EXPECTED_EXCLUDED = {
    ".env": "secret",
    ".env.production": "secret",
    "deploy/prod.env": "secret",
    "server.key": "secret",
    "cert.pem": "secret",
    "keys/store.p12": "secret",
    "home/.aws/credentials": "secret",
    "home/.ssh": "secret",
    "web/.npmrc": "secret",
    ".netrc": "secret",
    ".git": "version_control",
    "vendor/lib/.hg": "version_control",
}


@pytest.mark.parametrize(
    "ignore_files",
    [
        {},  # the built-in defaults
        {".gitignore": "*.log\n"},  # the case that leaked: a .gitignore that says nothing of secrets
        {".gitignore": "*.log\n!.env\n!*.key\n"},  # a .gitignore cannot let a secret in
        {".hermesignore": "*.log\n"},  # nor can a .hermesignore that does not name it
        {".hermesignore": "*.log\n", "deploy/.hermesignore": "!prod.env.bak\n"},
    ],
    ids=["defaults", "gitignore", "gitignore-negations", "hermesignore", "nested-hermesignore"],
)
def test_secrets_and_version_control_are_excluded_whatever_the_ignore_file(root: Path, ignore_files: dict) -> None:
    write(root, ignore_files)
    items = walk(root)

    assert excluded(items, root) == EXPECTED_EXCLUDED
    assert offered(items, root) == {"a.py", "docs/env.md", "home/.aws/notes.md"} | {
        name for name in ignore_files if name.endswith(".gitignore")
    }


def test_excluded_folders_are_not_walked(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    listed: list[str] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": (listed.append(os.fspath(path)), real(path))[1])
    walk(root)

    assert str(root / ".git") not in listed and str(root / "home" / ".ssh") not in listed


def test_an_explicit_hermesignore_negation_lets_one_path_in(root: Path) -> None:
    write(root, {".hermesignore": "*.log\n!.env.production\n!.git/\n", "deploy/.hermesignore": "!prod.env\n"})
    items = walk(root)

    assert {".env.production", ".git/config", "deploy/prod.env"} <= offered(items, root)
    assert ".env" in excluded(items, root) and "server.key" in excluded(items, root)


def test_a_later_pattern_undoes_the_negation(root: Path) -> None:
    # gitignore order: the last matching pattern decides, so `!.env` then `.env*` keeps it out.
    write(root, {".hermesignore": "!.env\n.env*\n"})

    assert ".env" in excluded(walk(root), root)


def test_non_recursive_root_reports_excluded_files_but_not_folders(root: Path) -> None:
    items = walk(root, recursive=False)

    assert excluded(items, root) == {".env": "secret", ".env.production": "secret", "server.key": "secret",
                                     "cert.pem": "secret", ".netrc": "secret"}
    assert offered(items, root) == {"a.py"}


def test_workspace_internal_folders_are_excluded_by_identity(tmp_path: Path) -> None:
    home = tmp_path.resolve() / "home"
    write(home, {".hermes/logs/workspace.log": "search for hunter2\n", ".hermes/models/vocab.txt": "x\n",
                 "notes/a.md": "# A\n"})
    (home / "link-to-logs").symlink_to(home / ".hermes" / "logs")
    items = walk(home, internal=(home / ".hermes" / "logs", home / ".hermes" / "models"))

    assert offered(items, home) == {"notes/a.md"}
    assert excluded(items, home) == {".hermes/logs": "workspace_internal", ".hermes/models": "workspace_internal",
                                     "link-to-logs": "workspace_internal"}


@pytest.mark.parametrize(
    ("name", "is_dir", "parent", "expected"),
    [
        (".ENV", False, "", "secret"),
        (".env.local", False, "app", "secret"),
        ("Server.KEY", False, "", "secret"),
        ("id_rsa", False, "x/.ssh", "secret"),
        ("id_rsa.pub", False, "", None),
        ("credentials", False, "u/.aws", "secret"),
        ("credentials", False, "docs", None),
        ("config.json", False, ".docker", "secret"),
        (".git", True, "", "version_control"),
        (".git", False, "sub", "version_control"),
        (".index", True, "", "workspace_internal"),
        (".index", False, "", None),
        ("environment.md", False, "", None),
        (".envoy.yaml", False, "", None),
        (".github", True, "", None),
    ],
)
def test_always_excluded_names(name: str, is_dir: bool, parent: str, expected: str | None) -> None:
    assert always_excluded(name, is_dir=is_dir, parent=parent) == expected


def test_index_counts_exclusions_records_them_and_prunes_a_secret_indexed_before() -> None:
    ws = Path("/h/workspace")
    source = InMemoryFileSource()
    source.write(ws / "notes" / "a.md", "alpha\n")
    source.write(ws / ".env", "TOKEN=abc\n")
    source.write(ws / "repo" / ".git" / "config", "[core]\n")
    store = InMemoryIndexStore()
    # An index made before the deny list existed holds the secret.
    store.replace_file(FileRecord(ws / ".env", ws, "h", "sig", 1, 1, "", ""), [])
    use_case = IndexWorkspace(
        config=WorkspaceConfig(), home=Path("/h"), source=source, decoder=Utf8Decoder(),
        chunker=ParagraphChunker(), fallback_chunker=ParagraphChunker(), store=store,
        lock=InMemoryIndexLock(), layout=InMemoryLayout(),
    )
    summary = use_case.execute(NullProgressSink())

    assert summary.excluded == {"secret": 1, "version_control": 1}
    assert summary.to_json()["excluded"] == {"secret": 1, "version_control": 1}
    assert summary.files_pruned == 1 and store.get_file(ws / ".env") is None
    assert store.status().excluded == {"secret": 1, "version_control": 1}
    assert [r.path for r in store.file_records()] == [ws / "notes" / "a.md"]


@pytest.mark.parametrize("negation", ["!*", "!**", "!/**", "!*/", "!.env*", "!*.key", "!.e?v", "![.]env"])
def test_a_broad_negation_does_not_let_secrets_in(root: Path, negation: str) -> None:
    # Found in a trial: a .hermesignore of `!*` indexed .env, server.key, .ssh/id_rsa and .git/HEAD.
    write(root, {".hermesignore": f"{negation}\n"})
    items = walk(root)

    assert excluded(items, root) == EXPECTED_EXCLUDED


def test_an_internal_folder_created_during_the_walk_is_excluded(tmp_path: Path) -> None:
    # Found in a trial: the first warning of a run creates HERMES_HOME/logs, after the walk began;
    # a root holding HERMES_HOME then indexed the log.
    root = tmp_path.resolve() / "root"
    write(root, {"a.md": "# A\n"})
    (root / "z-home").mkdir()
    logs = root / "z-home" / "logs"
    walk_items = FilesystemSource(1 << 20, internal_dirs=(logs,)).discover([Root(root, recursive=True)])
    first = next(walk_items)
    write(root, {"z-home/logs/workspace.log": '{"event": "file failed"}\n'})
    items = [first, *walk_items]

    assert offered(items, root) == {"a.md"}
    assert excluded(items, root) == {"z-home/logs": "workspace_internal"}


def test_a_root_inside_a_secret_or_version_control_folder_is_excluded(tmp_path: Path) -> None:
    # Found in a trial: `roots add ~/.aws` (or ~/.ssh, repo/.git) indexed the credentials.
    home = tmp_path.resolve() / "home"
    write(home, {".aws/credentials": "aws_secret_access_key = X\n", ".aws/config": "[default]\n",
                 ".aws/notes.md": "# AWS\n", ".ssh/known_hosts": "host key\n", "repo/.git/HEAD": "ref\n",
                 ".config/gh/hosts.yml": "oauth_token: x\n"})
    source = FilesystemSource(1 << 20)

    aws = list(source.discover([Root(home / ".aws", recursive=True)]))
    assert offered(aws, home / ".aws") == {"notes.md"}
    assert excluded(aws, home / ".aws") == {"credentials": "secret", "config": "secret"}
    for folder, category in ((home / ".ssh", "secret"), (home / "repo" / ".git", "version_control")):
        [item] = list(source.discover([Root(folder, recursive=True)]))
        assert item == ExcludedPath(folder, folder, category, True)
    gh = list(source.discover([Root(home / ".config", recursive=True)]))
    assert excluded(gh, home / ".config") == {"gh/hosts.yml": "secret"}


def test_adding_a_root_inside_a_never_indexed_folder_is_refused(tmp_path: Path) -> None:
    from hermes_workspace.adapters.memory import InMemoryConfigRepository
    from hermes_workspace.application.roots import AddRoot
    from hermes_workspace.domain.errors import UsageError

    (tmp_path / ".ssh" / "keys").mkdir(parents=True)
    repo = InMemoryConfigRepository()
    with pytest.raises(UsageError, match=r"\.ssh/keys is never indexed \(secret folder\)"):
        AddRoot(repo, tmp_path).execute(tmp_path / ".ssh" / "keys")
    assert repo.saves == 0


@pytest.mark.parametrize(
    "name",
    ["id_rsa.bak", "server.key.orig", ".env~", ".netrc.old", "secrets.yaml.bak", ".bash_history", ".psql_history",
     ".vault-token", ".s3cfg", ".my.cnf", "vpn.ovpn", "backup.gpg", "id_ed25519_sk"],
)
def test_backups_histories_and_more_credential_files_are_secrets(name: str) -> None:
    assert always_excluded(name, is_dir=False) == "secret"


@pytest.mark.parametrize("name", ["notes.bak", "report.old", "README.md", "history.md", "config.yml"])
def test_ordinary_backups_are_not_secrets(name: str) -> None:
    assert always_excluded(name, is_dir=False) is None


def test_a_link_never_bypasses_the_ignore_rules_of_its_target(tmp_path: Path) -> None:
    # Found in a trial: `A/anotes.md -> private/diary.md` with `private/` in A's .gitignore was indexed.
    a, b, flat = (tmp_path.resolve() / name for name in ("a", "b", "flat"))
    write(a, {".gitignore": "private/\n", "private/diary.md": "dear diary\n", "public/ok.md": "ok\n"})
    write(b, {".hermesignore": "private/\n", "private/diary.md": "dear diary\n", "sub/.hermesignore": "*.tmp\n",
              "sub/x.tmp": "tmp\n"})
    write(flat, {"top.md": "top\n", "deep/inner.md": "inner\n"})
    (a / "anotes.md").symlink_to(a / "private" / "diary.md")
    (a / "pdir").symlink_to(a / "private", target_is_directory=True)
    (a / "bnotes.md").symlink_to(b / "private" / "diary.md")
    (a / "btmp.md").symlink_to(b / "sub" / "x.tmp")
    (a / "okay.md").symlink_to(a / "public" / "ok.md")
    (a / "flat-top.md").symlink_to(flat / "top.md")
    (a / "flat-deep.md").symlink_to(flat / "deep" / "inner.md")
    roots = [Root(a, recursive=True), Root(b, recursive=True), Root(flat, recursive=False)]
    items = [i for i in FilesystemSource(1 << 20).discover(roots) if i.root == a]

    assert offered(items, a) == {".gitignore", "public/ok.md", "okay.md", "flat-top.md"}
    assert excluded(items, a) == {"flat-deep.md": "outside_roots"}


def test_a_link_that_cannot_be_resolved_is_one_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Found in a trial: `roots add /proc` ended in internal_error (realpath of /proc/N/exe raised).
    import os

    from hermes_workspace.domain.model import DiscoveryProblem

    root = tmp_path.resolve() / "r"
    write(root, {"a.md": "a\n", "target.md": "t\n"})
    (root / "gone").symlink_to(root / "target.md")
    real_realpath = os.path.realpath

    def flaky(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith("gone"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_realpath(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", flaky)
    items = walk(root)

    assert offered(items, root) == {"a.md", "target.md"}
    assert [(i.path.name, i.error_type) for i in items if isinstance(i, DiscoveryProblem)] == [
        ("gone", "FileNotFoundError")
    ]
