"""FastokensCounter: exact counts, checked against tiktoken on the same texts as QuicktokCounter
(hand-picked, generated and, with ``CONTEXTWARDEN_DATA`` set, every shared text corpus)."""

from __future__ import annotations

import logging
import os
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import MissingDependencyError, TokenizerError
from contextwarden.model import Message
from contextwarden.tokens import fast
from contextwarden.tokens.exact import TiktokenCounter, load_encoding
from contextwarden.tokens.fast import FASTOKENS_ENCODINGS, FastokensCounter
from contextwarden.tokens.heuristic import HeuristicCounter
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
    FastokensCounter("o200k_base")
    assert os.environ.get("FASTOKENS_BPE_THREADS")


def test_unknown_encoding_names_the_supported_ones() -> None:
    with pytest.raises(TokenizerError, match="o200k_base"):
        FastokensCounter("llama3")


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastokens", None)
    with pytest.raises(MissingDependencyError, match=r"contextwarden\[fastokens\]"):
        FastokensCounter("cl100k_base")


def test_with_an_interim_counter_it_counts_at_once_then_switches() -> None:
    text = "Zähle genau: ünïcödé, 12345, ``code``, and \ud800 a lone surrogate."
    expected = len(load_encoding("o200k_base").encode_ordinary(text.replace("\ud800", "\ufffd")))
    counter = FastokensCounter("o200k_base", interim=TiktokenCounter("o200k_base"))
    assert counter.count_text(text) == expected  # whichever counts now
    assert counter.wait(timeout=60) and counter.ready
    assert counter.count_text(text) == expected
    assert counter.count_message(Message.user(text)) == TiktokenCounter().count_message(
        Message.user(text)
    )


def test_interim_must_count_the_same_encoding_exactly() -> None:
    with pytest.raises(ValueError, match="o200k_base exactly"):
        FastokensCounter("o200k_base", interim=TiktokenCounter("cl100k_base"))
    with pytest.raises(ValueError, match="exactly"):
        FastokensCounter("o200k_base", interim=HeuristicCounter())


class FailingFastokens:
    """A stand-in for the fastokens module whose build fails, as a corrupt install's would."""

    class Tokenizer:
        @staticmethod
        def from_tiktoken(path: str, **options: object) -> None:
            raise RuntimeError("simulated build failure")


def test_a_failed_build_leaves_the_interim_counter_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(fast, "_builds", {})
    monkeypatch.setitem(sys.modules, "fastokens", FailingFastokens)
    interim = TiktokenCounter("o200k_base")
    with caplog.at_level(logging.WARNING, logger="contextwarden.tokens.fast"):
        counter = FastokensCounter("o200k_base", interim=interim)
        assert not counter.wait(timeout=60)
    assert counter.count_text("hello world") == interim.count_text("hello world")
    assert "simulated build failure" in caplog.text
    # Without an interim counter the failure is the caller's, as a TokenizerError.
    with pytest.raises(TokenizerError, match="simulated build failure"):
        FastokensCounter("o200k_base")


def test_a_forked_child_forgets_builds_it_cannot_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    done: Future[object] = Future()
    done.set_result(object())
    monkeypatch.setattr(fast, "_builds", {"o200k_base": done, "cl100k_base": Future()})
    fast._forget_unfinished_builds()
    assert fast._builds == {"o200k_base": done}


@needs_corpus
def test_every_shared_text_corpus() -> None:
    for path in sorted((Path(str(CORPUS)) / "text").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        for encoding in FASTOKENS_ENCODINGS:
            expected = len(load_encoding(encoding).encode_ordinary(text))
            assert FastokensCounter(encoding).count_text(text) == expected, (path.name, encoding)
