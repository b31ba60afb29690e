"""Exact token counts at estimate speed: OpenAI, Llama-3 and Qwen encodings through quicktok.

quicktok (``pip install 'contextwarden[quicktok]'``, MIT) ships its vocabularies and counts
without building a list of ids: 3-8x tiktoken's speed by text and encoding (docs/benchmarks.md), the
same counts (tests/test_tokens_quick.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from contextwarden.errors import TokenizerError, require
from contextwarden.model import Message
from contextwarden.tokens.exact import exact_cache_key, panics_as_errors
from contextwarden.tokens.messages import count_message_with

QUICKTOK_ENCODINGS: Final = ("cl100k_base", "llama3", "o200k_base", "o200k_harmony", "qwen3")
"""Encodings quicktok bundles (Llama-3's vocabulary is under Meta's Llama 3 licence)."""


def load_quicktok(encoding: str) -> Any:
    """quicktok's tokenizer for ``encoding`` (quicktok caches it), or TokenizerError."""
    if encoding not in QUICKTOK_ENCODINGS:
        raise TokenizerError(
            f"quicktok has no encoding {encoding!r}; supported: {', '.join(QUICKTOK_ENCODINGS)}"
        )
    module: Any = require("quicktok", "quicktok")
    try:
        return module.get_encoding(encoding)
    except (RuntimeError, OSError) as exc:
        raise TokenizerError(f"quicktok cannot load {encoding!r}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class QuicktokCounter:
    """Exact counts with quicktok: ``o200k_base`` (GPT-4o and later), ``cl100k_base`` (GPT-4,
    GPT-3.5), ``o200k_harmony`` (gpt-oss), ``llama3`` (Llama 3.x), ``qwen3`` (Qwen 2.5 / 3).

    Text that looks like a special token (``<|endoftext|>``) is counted as the plain text it is,
    as ``TiktokenCounter`` does; the two give the same counts and the same ``cache_key``, so counts
    stored by one are reused by the other.
    """

    encoding: str = "o200k_base"
    cache_key: str = field(init=False, repr=False, compare=False)
    _count: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tokenizer = load_quicktok(self.encoding)
        counter = f"QuicktokCounter({self.encoding})"
        object.__setattr__(self, "_count", panics_as_errors(counter, tokenizer.count))
        object.__setattr__(self, "cache_key", exact_cache_key(self.encoding))

    def count_text(self, text: str) -> int:
        try:
            count: int = self._count(text)
        except TypeError:
            # Lone surrogates cannot become UTF-8: replace them with U+FFFD, as tiktoken does.
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            if fixed == text:
                raise
            count = self._count(fixed)
        return count

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
