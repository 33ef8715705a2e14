"""The File/Language/Lines header of code chunks (issue 12) with the SQLite store and sqlite-vec:
what the embedder is given, what is stored and keyword-searched, and the re-embedding of vectors
made before the header existed."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

pytest.importorskip("sqlite_vec")

from hermes_workspace.adapters.memory import HashEmbedder  # noqa: E402
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store  # noqa: E402
from hermes_workspace.adapters.sqlite_vec_index import SqliteVecIndex  # noqa: E402
from hermes_workspace.application.embedding import EmbedChunks  # noqa: E402
from hermes_workspace.domain.query import parse_query  # noqa: E402
from hermes_workspace.testing.files import make_file  # noqa: E402


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / ".index" / "workspace.sqlite"
    store = SqliteFts5Store(path)
    store.replace_file(*make_file("/repo/src/app/views.py", ["def index():\n    return render()", "x = 1"],
                                  root=Path("/repo")))
    store.replace_file(*make_file("/repo/README.md", ["Views render pages."], root=Path("/repo")))
    store.close()
    return path


def test_sqlite_pending_gives_the_header_and_keeps_the_chunk(db: Path) -> None:
    embedder = HashEmbedder()
    report = EmbedChunks(embedder, lambda: SqliteVecIndex(db, code_header=True)).execute()
    assert (report.embedded, report.pending) == (3, 0)
    assert sorted(text for call in embedder.calls for text in call) == [
        "File: src/app/views.py\nLanguage: python\nLines: 1-2\n\ndef index():\n    return render()",
        "File: src/app/views.py\nLanguage: python\nLines: 4-4\n\nx = 1",
        "Views render pages.",
    ]
    store = SqliteFts5Store(db)
    try:
        chunks = store.file_chunks(Path("/repo/src/app/views.py"))
        assert [(c.content, c.line_start, c.line_end) for c in chunks] == [
            ("def index():\n    return render()", 1, 2), ("x = 1", 4, 4)
        ]
        assert store.search(parse_query("language python")) == []  # the header is not in the keyword index
    finally:
        store.close()


def _stored_version(db: Path) -> list[tuple[str]]:
    conn = apsw.Connection(str(db))
    try:
        return conn.execute("SELECT value FROM meta WHERE key = 'vector_input_version'").fetchall()
    finally:
        conn.close()


def test_vectors_are_made_again_only_when_the_header_setting_changes(db: Path) -> None:
    embedder = HashEmbedder()
    EmbedChunks(embedder, lambda: SqliteVecIndex(db)).execute()
    assert _stored_version(db) == [("1",)]
    conn = apsw.Connection(str(db))
    conn.execute("DELETE FROM meta WHERE key = 'vector_input_version'")  # as an index of the version before
    conn.close()
    # Vectors of the version before are plain ones: upgrading costs no embedding.
    same = EmbedChunks(embedder, lambda: SqliteVecIndex(db)).execute()
    assert (same.reembedded, same.embedded) == (False, 0)
    on = EmbedChunks(embedder, lambda: SqliteVecIndex(db, code_header=True)).execute()
    assert (on.reembedded, on.embedded, on.pending, _stored_version(db)) == (True, 3, 0, [("2",)])
    off = EmbedChunks(embedder, lambda: SqliteVecIndex(db)).execute()
    assert (off.reembedded, off.embedded, _stored_version(db)) == (True, 3, [("1",)])


@pytest.mark.parametrize(("setting", "expected"), [("", False), ("    code_header: true\n", True)])
def test_the_container_hands_the_setting_to_the_writer(home: Path, setting: str, expected: bool) -> None:
    from hermes_workspace.container import build_container

    (home / "config.yaml").write_text("knowledgebase:\n  embedder:\n    provider: onnx\n" + setting)
    container = build_container(home)
    opener, search_opener = container.vector_index(), container.search_vector_index()
    assert opener.args[2] is expected  # (path, readonly, code_header): what the embedding pass writes with
    assert search_opener.args[1:] == (True, False)  # searching embeds no chunk: the setting does not matter
