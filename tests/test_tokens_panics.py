"""A Rust tokenizer's panic (a BaseException, which ``except Exception`` misses) reaches callers of
every exact counter as TokenizerError, the error they already handle."""

from __future__ import annotations

import pytest

from contextwarden.errors import TokenizerError
from contextwarden.model import Message, TextBlock
from contextwarden.tokens.exact import TiktokenCounter, panics_as_errors
from contextwarden.tokens.quick import QuicktokCounter

PanicException = type("PanicException", (BaseException,), {})  # as pyo3_runtime defines it


@pytest.mark.parametrize("threads", [1, 2])
def test_tiktoken_panic_on_a_million_spaces_is_a_tokenizer_error(threads: int) -> None:
    counter = TiktokenCounter(threads=threads)
    spaces = " " * 1_000_000
    with pytest.raises(TokenizerError, match=r"TiktokenCounter\(o200k_base\) failed on a text "):
        counter.count_text(spaces)
    with pytest.raises(TokenizerError, match="1,000,000 characters"):
        counter.count_message(Message("user", (TextBlock(spaces),)))
    assert counter.count_text("still counts") == 2


def test_a_panic_in_any_wrapped_counter_becomes_a_tokenizer_error() -> None:
    def panicking(text: str) -> int:
        raise PanicException("called `Result::unwrap()` on an `Err` value\nbacktrace…")

    with pytest.raises(TokenizerError, match=r"X failed on a text of 3 characters \(called"):
        panics_as_errors("X", panicking)("abc")


def test_interrupts_and_ordinary_errors_pass_through_unchanged() -> None:
    def interrupted(text: str) -> int:
        raise KeyboardInterrupt

    def wrong(text: str) -> int:
        raise TypeError("lone surrogate")

    with pytest.raises(KeyboardInterrupt):
        panics_as_errors("X", interrupted)("abc")
    with pytest.raises(TypeError):
        panics_as_errors("X", wrong)("abc")


def test_quicktok_keeps_counting_lone_surrogates_through_the_guard() -> None:
    assert QuicktokCounter().count_text("a\ud800b") == TiktokenCounter().count_text("a\ud800b")
