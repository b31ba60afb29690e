"""FastokensCounter: exact counts, checked against tiktoken on the same texts as QuicktokCounter
(hand-picked, generated and, with ``CONTEXTWARDEN_DATA`` set, every shared text corpus)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import MissingDependencyError, TokenizerError
from contextwarden.tokens.exact import TiktokenCounter, load_encoding
from contextwarden.tokens.fast import FASTOKENS_ENCODINGS, FastokensCounter, load_fastokens
from tests.test_tokens_quick import CORPUS, SAMPLES, needs_corpus

pytest.importorskip("fastokens")


@pytest.mark.parametrize("encoding", FASTOKENS_ENCODINGS)
@pytest.mark.parametrize("text", SAMPLES, ids=range(len(SAMPLES)))
def test_counts_equal_tiktoken(encoding: str, text: str) -> None:
    expected = len(load_encoding(encoding).encode_ordinary(text))
    assert FastokensCounter(encoding).count_text(text) == expected


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400), st.sampled_from(FASTOKENS_ENCODINGS))
def test_generated_text_counts_equal_tiktoken(text: str, encoding: str) -> None:
    expected = len(load_encoding(encoding).encode_ordinary(text))
    assert FastokensCounter(encoding).count_text(text) == expected


def test_shares_the_exact_cache_key() -> None:
    assert FastokensCounter("o200k_base").cache_key == TiktokenCounter("o200k_base").cache_key


def test_runs_on_one_thread_unless_told_otherwise() -> None:
    load_fastokens("o200k_base")
    assert os.environ.get("FASTOKENS_BPE_THREADS")


def test_unknown_encoding_names_the_supported_ones() -> None:
    with pytest.raises(TokenizerError, match="o200k_base"):
        FastokensCounter("llama3")


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    load_fastokens.cache_clear()
    monkeypatch.setitem(sys.modules, "fastokens", None)
    try:
        with pytest.raises(MissingDependencyError, match=r"contextwarden\[fastokens\]"):
            FastokensCounter("cl100k_base")
    finally:
        load_fastokens.cache_clear()


@needs_corpus
def test_every_shared_text_corpus() -> None:
    for path in sorted((Path(str(CORPUS)) / "text").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        for encoding in FASTOKENS_ENCODINGS:
            expected = len(load_encoding(encoding).encode_ordinary(text))
            assert FastokensCounter(encoding).count_text(text) == expected, (path.name, encoding)
