"""Defects a fresh user's trial found in verified reads and pages (issue 10), through the Python API
and the CLI with every real adapter: reads without a size limit, content of deleted files served
through old handles and cursors, handle mistakes taken for paths, and ``--human search`` without
handles, cursor or ranks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hermes_workspace import Workspace
from hermes_workspace.adapters.tiktoken_counter import TiktokenCounter
from hermes_workspace.domain.errors import NotIndexedError, UsageError
from hermes_workspace.domain.handles import HANDLE_HINT
from hermes_workspace.entrypoints.cli import main

COUNTER = TiktokenCounter()


def _tokens(result) -> int:  # type: ignore[no-untyped-def]
    """Tokens of a read response as printed (compact) and as a client may re-serialize it (spaced)."""
    return max(COUNTER.count(result.serialize()), COUNTER.count(result.serialize(spaced=True)))


def _minified(chars: int) -> str:
    """One line of minified-looking JavaScript, ``chars`` characters long, no line break."""
    parts: list[str] = []
    size, i = 0, 0
    while size < chars:
        part = f"var a{i}=function(b,c){{return b*{i % 97}+c.x{i % 13}||\"k{i}\"}};"
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)[:chars]


@pytest.fixture
def code(home: Path) -> Path:
    """``workspace/code``: ``bundle.min.js`` (one line of 166,363 characters, as in the trial) and
    ``app.py`` (1,600 lines), indexed."""
    folder = home / "workspace" / "code"
    folder.mkdir(parents=True)
    (folder / "bundle.min.js").write_text(_minified(166_363) + "\n")
    (folder / "app.py").write_text("".join(f"def handler_{i}(request):\n    return respond(request, {i})\n"
                                           for i in range(800)))
    with Workspace.open(home) as ws:
        assert ws.index().files_indexed == 2
    return folder


# -- 1. read has a token budget ---------------------------------------------------------------------


def test_a_hit_on_a_minified_line_is_cut_at_a_character_to_the_default_budget(home: Path, code: Path) -> None:
    line = _minified(166_363)
    with Workspace.open(home) as ws:
        hit = next(h for h in ws.search("function", glob="*.js", limit=100) if line.startswith(h.content))
        result = ws.read(hit.handle)
    data = result.to_json()
    assert (result.status, result.line_start, result.line_end) == ("verified", 1, 1)
    assert (data["truncated"], data["full_line_end"], data["next"]) == (True, 1, None)
    assert (data["line_chars_from"], data["line_chars_total"]) == (0, 166_363)
    assert 0 < data["line_chars_returned"] < 166_363
    assert result.text == line[: data["line_chars_returned"]]
    tokens = _tokens(result)
    assert 8000 - 100 < tokens <= 8000  # the budget is used, not only respected
    assert "line 1 cut to its first" in result.message


def test_a_hit_inside_a_long_line_reads_from_where_the_hit_starts(home: Path, code: Path) -> None:
    line = _minified(166_363)
    with Workspace.open(home) as ws:
        hits = [h for h in ws.search("a2000 function", limit=10) if h.path.name == "bundle.min.js"]
        inside = next(h for h in hits if line.find(h.content) > 0)
        result = ws.read(inside.handle)
    data = result.to_json()
    start = line.find(inside.content)
    assert (data["line_chars_from"], data["line_chars_total"]) == (start, 166_363)
    assert result.text == line[start : start + data["line_chars_returned"]]
    assert result.text.startswith(inside.content)  # the hit's own text, not the start of the line
    assert _tokens(result) <= 8000


def test_a_long_range_keeps_the_leading_whole_lines_that_fit_and_names_the_rest(home: Path, code: Path) -> None:
    app = code / "app.py"
    lines = app.read_text().split("\n")
    with Workspace.open(home) as ws:
        result = ws.read(f"{app}:1-1600")
        end = result.line_end
        assert (result.status, result.line_start, result.full_line_end, result.truncated) == ("verified", 1, 1600, True)
        assert 1 < end < 1600
        assert result.text == "\n".join(lines[:end])
        assert result.next == f"{app}:{end + 1}-1600"
        assert "line_chars_returned" not in result.to_json()
        assert 8000 - 60 < _tokens(result) <= 8000
        following = ws.read(result.next)
    assert (following.status, following.line_start) == ("verified", end + 1)
    assert following.text.split("\n")[0] == lines[end]


def test_a_read_budget_is_an_argument_a_cli_option_and_a_config_key(
    home: Path, code: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = code / "app.py"
    with Workspace.open(home) as ws:
        small = ws.read(f"{app}:1-100", budget=400)
    assert small.truncated and _tokens(small) <= 400
    assert main(["read", f"{app}:1-100", "--budget", "400"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1  # one compact line: what was counted is what is printed
    assert COUNTER.count(printed.rstrip("\n")) <= 400
    assert json.loads(printed) == small.to_json()
    (home / "config.yaml").write_text("knowledgebase:\n  injection:\n    read_max_tokens: 300\n")
    with Workspace.open(home) as ws:
        configured = ws.read(f"{app}:1-100")
    assert configured.truncated and _tokens(configured) <= 300 and configured.line_end < small.line_end


def test_a_budget_below_the_smallest_response_names_the_minimum(home: Path, code: Path) -> None:
    app = code / "app.py"
    with Workspace.open(home) as ws:
        with pytest.raises(UsageError) as raised:
            ws.read(f"{app}:1-100", budget=20)
        minimum = int(re.search(r"at least (\d+) tokens", raised.value.hint)[1])
        at_minimum = ws.read(f"{app}:1-100", budget=minimum)
        assert _tokens(at_minimum) <= minimum and at_minimum.text  # something is returned
        with pytest.raises(UsageError):
            ws.read(f"{app}:1-100", budget=minimum - 1)
        for bad in (0, -5, True, 2_000_000):
            with pytest.raises(UsageError):
                ws.read(f"{app}:1", budget=bad)  # type: ignore[arg-type]


def test_a_moved_text_cut_to_the_budget_names_the_rest_in_the_indexed_numbering(home: Path) -> None:
    notes = home / "workspace" / "notes"
    notes.mkdir(parents=True)
    doc = notes / "long.md"
    body = [f"Step {i}: check the gauge number {i} and write its value in the log book." for i in range(12)]
    doc.write_text("# Procedure\n\n" + "\n".join(body) + "\n")
    with Workspace.open(home) as ws:
        ws.index()
        hit = ws.search("gauge log book", limit=1)[0]
        assert (hit.line_start, hit.line_end) == (1, 14)
        doc.write_text("Added one.\nAdded two.\n" + doc.read_text())
        whole = _tokens(ws.read(hit.handle))
        with pytest.raises(UsageError) as raised:
            ws.read(hit.handle, budget=1)
        minimum = int(re.search(r"at least (\d+) tokens", raised.value.hint)[1])
        first = ws.read(hit.handle, budget=(minimum + whole) // 2)
        assert (first.status, first.line_start, first.moved_from, first.full_line_end) == ("moved", 3, (1, 14), 16)
        kept = first.line_end - first.line_start + 1
        assert first.next == f"{doc}:{1 + kept}-14"  # lines as indexed: read verifies them as it did these
        rest = ws.read(first.next, budget=8000)
    assert (rest.status, rest.line_start, rest.line_end) == ("moved", first.line_end + 1, 16)
    assert first.text + "\n" + rest.text == "# Procedure\n\n" + "\n".join(body)


def test_the_cli_rejects_a_budget_that_is_not_a_number(
    home: Path, code: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["read", f"{code / 'app.py'}:1", "--budget", "lots"]) == 2
    assert "--budget must be a whole number" in json.loads(capsys.readouterr().out)["error"]["message"]


# -- 2. files removed from the index are not served -------------------------------------------------




def test_a_handle_of_a_deleted_file_is_not_indexed(home: Path, many: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Workspace.open(home) as ws:
        hit = ws.search("needle", limit=1)[0]
        assert ws.read(hit.handle).status == "verified"
        ws.delete(hit.path)
        with pytest.raises(NotIndexedError) as raised:
            ws.read(hit.handle)
    assert (raised.value.code, raised.value.exit_code) == ("not_indexed", 66)
    assert "removed from the index" in raised.value.hint and "roots add" in raised.value.hint
    assert main(["read", hit.handle]) == 66
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "not_indexed"
    assert main(["read", f"{hit.path}:1"]) == 66  # its locator too
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "not_indexed"


def test_a_handle_of_a_file_gone_from_disk_and_from_the_index_reads_as_deleted(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        hit = ws.search("needle", limit=1)[0]
        hit.path.unlink()
        assert ws.index().files_pruned == 1
        result = ws.read(hit.handle)
    assert (result.status, result.text) == ("deleted", None)


def test_a_locator_on_a_file_that_is_not_indexed_is_not_indexed(
    home: Path, many: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("root:x:0:0\n")
    for target in (f"{outside}:1", f"{tmp_path / 'missing.md'}:1-2"):
        assert main(["read", target]) == 66
        error = json.loads(capsys.readouterr().out)["error"]
        expected = f"{target.rsplit(':', 1)[0]} is not an indexed file"
        assert (error["code"], error["message"]) == ("not_indexed", expected)


def test_more_leaves_out_hits_of_deleted_files_and_says_how_many(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        first = ws.search("needle", limit=5)
        second = ws.more(first.cursor)
        gone = [second[1], second[3]]
        for hit in gone:
            ws.delete(hit.path)
        again = ws.more(first.cursor)
    assert [h.handle for h in again] == [second[i].handle for i in (0, 2, 4)]
    assert all(h.content for h in again)
    assert (again.offset, again.cursor, again.total) == (5, f"{first.result_set}@10", 30)
    assert any(n.startswith("2 hit(s) of this page left out: their files were removed from the index")
               for n in again.notes)


def test_more_of_a_retrieve_leaves_out_candidates_of_deleted_files(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        pack = ws.retrieve("needle", max_chunks=1)
        assert pack.cursor == f"{pack.result_set}@2"
        before = ws.more(pack.cursor)
        shown = [b.path for b in before.blocks] + [o.path for o in before.omitted]
        assert len(shown) == 2
        ws.delete(shown[0])
        after = ws.more(pack.cursor)
    paths = [b.path for b in after.blocks] + [o.path for o in after.omitted]
    assert paths == [shown[1]]
    assert any(n.startswith("1 hit(s) of this page left out") for n in after.notes)
    assert after.cursor == before.cursor


# -- 3. handle mistakes get the handle's hint ------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("abcd1234:0", "hits are numbered from 1"),
        ("ABCD1234:1", "result set ids are lowercase"),
        ("abcd1234:1-3", "a handle names one hit, not a range"),
        ("abcd1234:007", "without leading zeros"),
    ],
)
def test_a_mistaken_handle_is_a_handle_error(
    home: Path, many: Path, capsys: pytest.CaptureFixture[str], target: str, why: str
) -> None:
    with Workspace.open(home) as ws:
        with pytest.raises(UsageError) as raised:
            ws.read(target)
    assert raised.value.message.endswith(why) and raised.value.hint == HANDLE_HINT
    assert main(["read", target]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["hint"] == HANDLE_HINT


def test_more_past_the_end_reports_the_offset_asked_for(home: Path, many: Path) -> None:
    with Workspace.open(home) as ws:
        first = ws.search("needle", limit=10)
        page = ws.more(f"{first.result_set}@45")
    assert (list(page), page.offset, page.total, page.cursor) == ([], 45, 30, None)
    assert page.notes == [f"{first.result_set}@45 is past the last of the 30 hits"]


# -- 4. --human search shows handles, ranks and the cursor ----------------------------------------------


def test_human_search_numbers_hits_by_rank_with_handles_and_prints_the_cursor(
    home: Path, many: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "needle", "--limit", "3", "--offset", "3", "--envelope"]) == 0
    page = json.loads(capsys.readouterr().out)
    assert main(["--human", "search", "needle", "--limit", "3", "--offset", "3"]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if re.match(r"\d+\. ", line)]
    set_id = re.search(r"([0-9a-f]{8}):4", out)[1]
    assert [h.split(". ")[0] for h in heads] == ["4", "5", "6"]
    assert [f"{set_id}:{n}" in head for n, head in zip((4, 5, 6), heads, strict=True)] == [True] * 3
    assert [h.split(". ")[1].split(":")[0] for h in heads] == [h["path"] for h in page["hits"]]
    assert out.rstrip().splitlines()[-2:] == [f"more: hermes-workspace more {set_id}@6", "coverage: workspace complete"]
    assert main(["--human", "more", f"{set_id}@6"]) == 0
    following = capsys.readouterr().out
    assert re.search(r"^7\. .*" + set_id + ":7", following, re.M)
