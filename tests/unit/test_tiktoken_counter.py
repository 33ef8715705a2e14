"""TiktokenCounter: o200k_base counted offline from the shipped rank file, never estimated."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import tiktoken.load

from hermes_workspace.adapters import tiktoken_counter as module
from hermes_workspace.adapters.tiktoken_counter import RANK_FILE, RANK_FILE_SHA256, TiktokenCounter, file_sha256
from hermes_workspace.domain.errors import TokenizerUnavailableError
from hermes_workspace.domain.ports import TokenCounter


def test_the_shipped_rank_file_has_the_published_hash() -> None:
    assert RANK_FILE.is_file()
    assert RANK_FILE.stat().st_size == 3_613_922
    assert file_sha256() == RANK_FILE_SHA256 == "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def test_counts_o200k_base_tokens() -> None:
    counter = TiktokenCounter()
    assert isinstance(counter, TokenCounter)
    assert counter.name == "o200k_base"
    encoding = counter._encoding()
    # o200k_base's published facts: 200,019 ids (199,998 ranks and its special tokens up to
    # 200018) and "hello world" -> [24912, 2375], as tiktoken.get_encoding("o200k_base") gives.
    assert encoding.n_vocab == 200_019
    assert encoding.encode_ordinary("hello world") == [24912, 2375]
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    text = 'Привет, мир! {"a":1}\n\tdef f(): pass'
    assert encoding.decode(encoding.encode_ordinary(text)) == text
    assert counter.count("Привет, мир!") == 5
    assert counter.count('{"a":1}') == 5


def test_special_token_text_is_ordinary_text() -> None:
    counter = TiktokenCounter()
    # tiktoken's encode() refuses this text by default; a user's file may hold it.
    assert counter.count("<|endoftext|>") > 1
    assert counter.count("x <|endofprompt|> y") > 3


def test_lone_surrogates_are_counted_not_refused() -> None:
    assert TiktokenCounter().count("name \udcff.md") >= 3


def test_a_missing_rank_file_is_an_error_not_an_estimate(tmp_path: Path) -> None:
    counter = TiktokenCounter(rank_file=tmp_path / "absent.tiktoken")
    with pytest.raises(TokenizerUnavailableError, match="cannot be read") as raised:
        counter.count("hello")
    assert raised.value.code == "tokenizer_unavailable"
    assert raised.value.exit_code == 69


def test_an_altered_rank_file_is_refused(tmp_path: Path) -> None:
    altered = tmp_path / "o200k_base.tiktoken"
    data = bytearray(RANK_FILE.read_bytes())
    data[-2:-1] = b"8" if data[-2:-1] != b"8" else b"9"  # one rank changed
    altered.write_bytes(bytes(data))
    assert hashlib.sha256(bytes(data)).hexdigest() != RANK_FILE_SHA256
    with pytest.raises(TokenizerUnavailableError, match="not the published"):
        TiktokenCounter(rank_file=altered).preload()


def test_loading_touches_neither_the_network_nor_tiktokens_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(module, "_encoding", None)  # a fresh process's state
    read: list[str] = []
    real_read = tiktoken.load.read_file

    def spy(blobpath: str) -> bytes:
        read.append(blobpath)
        return real_read(blobpath)

    monkeypatch.setattr(tiktoken.load, "read_file", spy)
    assert TiktokenCounter().count("hello world") == 2
    assert read == [str(RANK_FILE)]  # the shipped file, no URL
    assert list(cache.iterdir()) == []  # tiktoken would have copied the file here
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(cache)  # restored


def test_the_encoding_is_loaded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "_encoding", None)
    builds: list[Path] = []
    real_build = module._build

    def counting(path: Path) -> object:
        builds.append(path)
        return real_build(path)

    monkeypatch.setattr(module, "_build", counting)
    first, second = TiktokenCounter(), TiktokenCounter()
    assert first.count("a b") == second.count("a b") == 2
    assert builds == [RANK_FILE]
