"""Model name → tokenizer → the best installed counter, and histories that pick it by model."""

from __future__ import annotations

import hashlib
import sys

import pytest

from contextwarden import ContextManager, ContextPolicy, ConversationHistory, Message
from contextwarden.tokens.exact import TiktokenCounter, load_encoding
from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter
from contextwarden.tokens.messages import count_message_with
from contextwarden.tokens.models import MODEL_TOKENIZERS, counter_for_model, tokenizer_for_model
from contextwarden.tokens.quick import QUICKTOK_ENCODINGS, QuicktokCounter


@pytest.mark.parametrize(
    ("model", "tokenizer"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("openai/gpt-4.1-mini", "o200k_base"),
        ("GPT-5", "o200k_base"),
        ("gpt-5.1-codex", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini-2025-04-16", "o200k_base"),
        ("ft:gpt-4o-mini-2024-07-18:acme::9xYz", "o200k_base"),
        ("gpt-oss-120b", "o200k_harmony"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo-2024-04-09", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3"),
        ("llama3:70b", "llama3"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen3"),
        ("qwen3-32b", "qwen3"),
        ("claude-sonnet-4-5", None),
        ("claude-3-5-haiku-20241022", None),
        ("llama-2-7b", None),
        ("gpt-40", None),
        ("o", None),
        ("", None),
    ],
)
def test_tokenizer_for_model(model: str, tokenizer: str | None) -> None:
    assert tokenizer_for_model(model) == tokenizer


def test_every_mapped_tokenizer_is_one_quicktok_bundles() -> None:
    assert set(MODEL_TOKENIZERS.values()) <= set(QUICKTOK_ENCODINGS)


def test_quicktok_first() -> None:
    pytest.importorskip("quicktok")
    counter = counter_for_model("gpt-4o")
    assert isinstance(counter, QuicktokCounter) and counter.encoding == "o200k_base"
    assert counter_for_model("meta-llama/Llama-3.3-70B-Instruct") == QuicktokCounter("llama3")


def test_tiktoken_when_quicktok_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "quicktok", None)
    assert counter_for_model("gpt-4") == TiktokenCounter("cl100k_base")
    # Llama-3 has no tiktoken encoding here: the heuristic it is.
    assert counter_for_model("llama-3.1-8b") == HeuristicCounter(O200K_WEIGHTS)


def test_heuristic_when_no_tokenizer_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "quicktok", None)
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    assert counter_for_model("gpt-3.5-turbo") == HeuristicCounter(CL100K_WEIGHTS)
    assert counter_for_model("gpt-4o") == HeuristicCounter(O200K_WEIGHTS)


@pytest.mark.parametrize("model", [None, "claude-opus-4-1", "mistral-large"])
def test_unknown_tokenizers_get_the_heuristic(model: str | None) -> None:
    assert counter_for_model(model) == HeuristicCounter()
    assert isinstance(ConversationHistory(model=model).counter, HeuristicCounter)


def test_history_counts_exactly_for_a_known_model() -> None:
    history = ConversationHistory("You are terse.", model="gpt-4o-mini")
    text = "Die Donaudampfschifffahrtsgesellschaft " * 40
    history.add_user_message(text)
    exact = load_encoding("o200k_base").encode_ordinary
    expected = count_message_with(lambda t: len(exact(t)), Message.user(text))
    assert history.message_tokens(-1) == expected
    # An explicit counter still wins over the model's.
    assert isinstance(
        ConversationHistory(model="gpt-4o", counter=HeuristicCounter()).counter, HeuristicCounter
    )


def test_manager_decides_on_exact_counts_for_a_known_model() -> None:
    """The heuristic over-counts hashes (by design it errs high); with the model's tokenizer the
    manager sees the real size and leaves a history that fits alone."""
    text = "\n".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(300))
    exact_history = ConversationHistory(model="gpt-4o")
    heuristic_history = ConversationHistory()
    for history in (exact_history, heuristic_history):
        history.add_user_message(text)
    exact_total = exact_history.estimate_tokens()
    assert exact_total < heuristic_history.estimate_tokens()
    policy = ContextPolicy(context_window=exact_total + 64, max_output_reserve=0)
    assert not ContextManager(policy).prepare(exact_history).over_window
    assert exact_history.estimate_tokens() == exact_total
    # By the heuristic's count the same message does not fit: alone larger than the window, the
    # typed text is cut (``Oversize``) where exact counting knows it can go out whole.
    report = ContextManager(policy).prepare(heuristic_history)
    assert "oversize" in report.applied and heuristic_history.messages[0].text != text
