"""A file that two legacy encodings read equally well is read in the encoding its siblings were
read with (issue: use all the evidence, sibling files of the same root among it), deterministically,
and the encodings chosen are kept in the index as evidence for later runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_workspace.adapters.charset_decoder import CharsetDecoder
from hermes_workspace.adapters.memory import (
    InlineTaskPool,
    InMemoryFileSource,
    InMemoryIndexLock,
    InMemoryIndexStore,
    InMemoryLayout,
    NullProgressSink,
    ParagraphChunker,
)
from hermes_workspace.adapters.sqlite_fts5_store import SqliteFts5Store
from hermes_workspace.application.file_processing import FileTools
from hermes_workspace.application.indexing import IndexWorkspace
from hermes_workspace.domain.config import WorkspaceConfig
from hermes_workspace.domain.encodings import sibling_hint
from hermes_workspace.domain.model import FileRecord
from tests.store_files import make_file

HOME = Path("/h")
WS = HOME / "workspace"
AMBIGUOUS = "она уже спит\n"  # reads as cleanly in cp1251 and KOI8-R (as "НМЮ СФЕ ЯОХР" / "ПОБ ХЦЕ УРЙФ")
CLEAR = ["мы пошли домой вечером\n", "я люблю читать книги\n"]  # unambiguous in either code page


def test_the_nearest_folder_with_evidence_decides() -> None:
    decided = [(Path("/r/a/1.txt"), "cp1251"), (Path("/r/a/2.txt"), "windows-1251"), (Path("/r/b/3.txt"), "koi8_r"),
               (Path("/r/b/4.txt"), "koi8_r"), (Path("/r/b/5.txt"), "koi8_r")]
    assert sibling_hint(Path("/r/a/x.txt"), Path("/r"), ["cp1251", "koi8_r"], decided) == "cp1251"
    assert sibling_hint(Path("/r/c/x.txt"), Path("/r"), ["cp1251", "koi8-r"], decided) == "koi8-r"  # codec name
    # the folder votes for an encoding that is not a candidate: no hint, even if the root would give one
    assert sibling_hint(Path("/r/a/x.txt"), Path("/r"), ["koi8_r", "shift_jis"], decided) is None


def test_the_nearest_ancestor_folder_with_evidence_decides() -> None:
    # Issue 8's second trial kept Mac OS Roman and windows-1252 files in sibling folders of one
    # root, one file per subfolder: the root's majority (windows-1252) must not decide for a file
    # under mac/, whose nearest folder with evidence is mac/ itself.
    decided = [(Path("/r/mac/00/t.txt"), "mac_roman"), (Path("/r/mac/01/t.txt"), "mac_roman"),
               (Path("/r/win/00/t.txt"), "cp1252"), (Path("/r/win/01/t.txt"), "cp1252"),
               (Path("/r/win/02/t.txt"), "cp1252")]
    # (the hint is Python's codec name)
    assert sibling_hint(Path("/r/mac/02/t.txt"), Path("/r"), ["cp1252", "mac_roman"], decided) == "mac-roman"
    assert sibling_hint(Path("/r/win/03/t.txt"), Path("/r"), ["cp1252", "mac_roman"], decided) == "cp1252"
    assert sibling_hint(Path("/r/other/t.txt"), Path("/r"), ["cp1252", "mac_roman"], decided) == "cp1252"
    assert sibling_hint(Path("/r/mac/02/t.txt"), Path("/r/mac"), ["cp1252", "mac_roman"], decided) == "mac-roman"


def test_a_split_folder_or_no_evidence_gives_no_hint() -> None:
    split = [(Path("/r/a/1.txt"), "cp1251"), (Path("/r/a/2.txt"), "koi8_r")]
    assert sibling_hint(Path("/r/a/x.txt"), Path("/r"), ["cp1251", "koi8_r"], split) is None
    assert sibling_hint(Path("/r/a/x.txt"), Path("/r"), ["cp1251", "koi8_r"], []) is None
    assert sibling_hint(Path("/r/a/x.txt"), Path("/r"), ["cp1251"], [(Path("/other/y.txt"), "cp1251")]) is None
    assert sibling_hint(Path("/r/a/x.txt"), Path("/r"), ["no-such-codec"], split) is None


def index(source: InMemoryFileSource, store, *, pool: bool = False):  # type: ignore[no-untyped-def]
    decoder = CharsetDecoder()
    use_case = IndexWorkspace(
        config=WorkspaceConfig(), home=HOME, source=source, decoder=decoder, chunker=ParagraphChunker(),
        fallback_chunker=ParagraphChunker(), store=store, lock=InMemoryIndexLock(), layout=InMemoryLayout(),
        pool=InlineTaskPool() if pool else None,
        worker_tools=(lambda: FileTools(source, decoder, ParagraphChunker(), ParagraphChunker())) if pool else None,
        parallel_min_files=1, parallel_min_bytes=1,
    )
    return use_case.execute(NullProgressSink())


@pytest.mark.parametrize("encoding", ["cp1251", "koi8_r"])
@pytest.mark.parametrize("pool", [False, True], ids=["in_process", "pool"])
def test_an_ambiguous_file_is_read_in_the_encoding_of_its_folder(encoding: str, pool: bool) -> None:
    source = InMemoryFileSource()
    # The ambiguous file comes first in walk order: the evidence is gathered after the pass.
    source.write(WS / "ru" / "a-short.txt", AMBIGUOUS.encode(encoding))
    for i, text in enumerate(CLEAR):
        source.write(WS / "ru" / f"b{i}.txt", text.encode(encoding))
    store = InMemoryIndexStore()

    summary = index(source, store, pool=pool)

    assert (summary.files_indexed, summary.files_errored) == (3, 0)
    record = store.get_file(WS / "ru" / "a-short.txt")
    assert record is not None and record.encoding == encoding
    assert [c.content for c in store.files[WS / "ru" / "a-short.txt"][1]] == [AMBIGUOUS.strip()]


def test_without_siblings_an_ambiguous_file_is_a_read_error_naming_the_candidates() -> None:
    source = InMemoryFileSource()
    source.write(WS / "ru" / "alone.txt", AMBIGUOUS.encode("cp1251"))
    summary = index(source, InMemoryIndexStore())

    assert summary.files_errored == 1
    error = summary.errors[0]
    assert (error.stage, error.error_type) == ("read", "EncodingError")
    assert "ambiguous" in error.message and "cp1251" in error.message and "koi8_r" in error.message


def test_siblings_indexed_in_an_earlier_run_are_evidence(tmp_path: Path) -> None:
    source = InMemoryFileSource()
    for i, text in enumerate(CLEAR):
        source.write(WS / "ru" / f"b{i}.txt", text.encode("koi8_r"))
    with SqliteFts5Store(tmp_path / "index.sqlite") as store:
        assert index(source, store).files_indexed == 2
    source.write(WS / "ru" / "later.txt", "как дела у тебя и у меня\n".encode("koi8_r"))
    source.write(WS / "ru" / "z-later.txt", AMBIGUOUS.encode("koi8_r"))
    with SqliteFts5Store(tmp_path / "index.sqlite") as store:
        summary = index(source, store)
        assert (summary.files_indexed, summary.files_errored) == (2, 0)
        assert {r.path.name: r.encoding for r in store.file_records()}["z-later.txt"] == "koi8_r"


def test_the_store_keeps_the_encoding_and_a_touch_does_not_lose_it(tmp_path: Path) -> None:
    with SqliteFts5Store(tmp_path / "index.sqlite") as store:
        record, chunks = make_file("/ws/a.txt", ["x y"])
        store.replace_file(_with_encoding(record, "cp1251"), chunks)
        assert store.get_file(Path("/ws/a.txt")).encoding == "cp1251"  # type: ignore[union-attr]
        store.touch_file(_with_encoding(record, None))
        assert store.get_file(Path("/ws/a.txt")).encoding == "cp1251"  # type: ignore[union-attr]
        store.replace_file(_with_encoding(record, None), chunks)
        assert store.get_file(Path("/ws/a.txt")).encoding is None  # type: ignore[union-attr]
        store.replace_file(_with_encoding(record, "koi8_r"), chunks)
        assert store.delete_files([Path("/ws/a.txt")]) == 1
        store.replace_file(_with_encoding(record, None), chunks)
        assert store.get_file(Path("/ws/a.txt")).encoding is None  # type: ignore[union-attr]


def _with_encoding(record: FileRecord, encoding: str | None) -> FileRecord:
    from dataclasses import replace

    return replace(record, encoding=encoding)
