"""A small host world for the end-to-end tests of project-history recall (issue 13, seed 003):
a host session store and project registry (two SQLite files in WAL mode, written by a
:class:`~hermes_workspace.testing.host_history.HostWriter` that stays open as a running host
would, its automatic checkpoints off so the database files change only when the host itself
checkpoints), the project folders on disk, and a HERMES_HOME config that points at them.

Scopes and what they talk about (every scope mentions the error code ``E1042``, so a keyword
search for it has a hit in each and isolation is visible):

- ``p_alpha`` "Alpha" (folder ``src/alpha``): ``s_alpha_1`` (a release went wrong; the
  paraphrase target "To revert a bad deployment, redeploy the previous tag."), ``s_alpha_2``
  (parser design, ``E1042``; a tool message that is not indexed).
- ``p_beta`` "Beta" (folder ``src/beta``): ``s_beta_1`` (canary rollout, ``E1042``) and
  ``s_beta_2`` (45 short log lines, each with ``E1042``: more than a side's 40 candidates, so a
  filter applied after the top-k would leave Alpha with nothing).
- ``git:<base>/oss/tool`` (a git repository of no project, ``oss/tool/.git`` on disk):
  ``s_tool_1``.
- Home: ``s_home_1`` (no working directory), ``s_scratch_1`` (``scratch``: no project, no git).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hermes_workspace.testing.host_history import HostWriter, build_host_database

PARAPHRASE = "To revert a bad deployment, redeploy the previous tag."
BETA_LOG_LINES = 45


@dataclass
class World:
    """The host's files, the folders, the writer acting as the host, and the message ids by
    label (``alpha_revert``, ``alpha_e1042``, ``beta_e1042``, ``tool_e1042`` ...)."""

    base: Path
    host: HostWriter
    database: Path
    projects_database: Path
    alpha: Path
    beta: Path
    tool_repo: Path
    scratch: Path
    ids: dict[str, int] = field(default_factory=dict)

    @property
    def host_dir(self) -> Path:
        return self.database.parent

    @property
    def tool_id(self) -> str:
        return "git:" + str(self.tool_repo)

    def config(self, embedder: str = "") -> str:
        """The ``config.yaml`` text reading this host, with ``embedder`` (YAML lines under
        ``knowledgebase.embedder``, already indented by 4) when given."""
        text = (f"knowledgebase:\n  history:\n    database: {self.database}\n"
                f"    projects_database: {self.projects_database}\n")
        if embedder:
            text += "  embedder:\n" + embedder
        return text


ONNX = "    provider: onnx\n"
REMOTE_URL = "http://127.0.0.1:9/v1"
"""A remote embedding service nobody listens on (and sockets are disabled in the tests)."""
REMOTE = f"    provider: openai\n    base_url: {REMOTE_URL}\n    model: text-embedding-3-small\n"


def build_world(base: Path) -> World:
    """Create the folders and the host's files under ``base`` and fill them (see the module)."""
    alpha, beta = base / "src" / "alpha", base / "src" / "beta"
    tool_repo, scratch = base / "oss" / "tool", base / "scratch"
    for folder in (alpha / "src", beta, tool_repo / ".git", tool_repo / "lib", scratch):
        folder.mkdir(parents=True)
    host_dir = base / "host"
    host_dir.mkdir()
    database, projects = host_dir / "state.db", host_dir / "projects.db"
    host = build_host_database(database, projects_path=projects, wal=True, project_id_column=True,
                               autocheckpoint=False)
    world = World(base, host, database, projects, alpha, beta, tool_repo, scratch)
    ids = world.ids
    host.add_project("p_alpha", "Alpha", [str(alpha)])
    host.add_project("p_beta", "Beta", [str(beta)])

    host.add_session("s_alpha_1", title="Release went wrong", cwd=str(alpha), git_repo_root=str(alpha))
    ids["alpha_lexer"], ids["alpha_revert"], ids["alpha_sprint"] = host.add_messages("s_alpha_1", [
        ("user", "The lexer crashed on unicode identifiers after the last merge."),
        ("assistant", PARAPHRASE),
        ("user", "Noted, and the tokenizer fix goes into the next sprint."),
    ])
    host.add_session("s_alpha_2", title="Parser design", cwd=str(alpha / "src"), git_repo_root=str(alpha))
    ids["alpha_question"], ids["alpha_e1042"], ids["alpha_tool"] = host.add_messages("s_alpha_2", [
        ("user", "Should the parser keep a symbol table per module?"),
        ("assistant", "Yes: one symbol table per module, merged at link time; error E1042 means a duplicate symbol."),
        ("tool", '{"exit_code": 1, "output": "E1042 duplicate symbol main"}'),
    ])

    host.add_session("s_beta_1", title="Canary rollout", cwd=str(beta), git_repo_root=str(beta))
    ids["beta_question"], ids["beta_e1042"] = host.add_messages("s_beta_1", [
        ("user", "The canary rollout of the billing service stalled at wave two."),
        ("assistant",
         "Roll back the billing release with the deploy tool; error E1042 duplicate symbol was the cause."),
    ])
    host.add_session("s_beta_2", title="Error log triage", cwd=str(beta), git_repo_root=str(beta))
    host.add_messages("s_beta_2", [("user" if i % 2 == 0 else "assistant", f"E1042 duplicate symbol in build {i}")
                                   for i in range(BETA_LOG_LINES)])

    host.add_session("s_tool_1", title="Plugin loader", cwd=str(tool_repo / "lib"), git_repo_root=str(tool_repo))
    ids["tool_e1042"], = host.add_messages("s_tool_1", [
        ("user", "The plugin loader reports E1042 duplicate symbol for vendored modules."),
    ])
    host.add_session("s_home_1", title="Personal notes", cwd=None)
    ids["home_e1042"], = host.add_messages("s_home_1", [("user", "Remember E1042 duplicate symbol at home.")])
    host.add_session("s_scratch_1", title="Scratch", cwd=str(scratch))
    ids["scratch_e1042"], = host.add_messages("s_scratch_1", [("user", "Scratch note on E1042 duplicate symbol.")])
    return world


@contextmanager
def running_host(base: Path) -> Iterator[World]:
    """:func:`build_world`, the host closed at the end (its last close checkpoints, as SQLite does)."""
    world = build_world(base)
    try:
        yield world
    finally:
        world.host.close()


def fingerprint(path: Path) -> tuple[str, int, int]:
    """sha256, size and modification time (ns) of a file."""
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns
