"""QuicktokCounter: exact counts, checked token for token against tiktoken.

The default suite checks hand-picked and generated text; with ``CONTEXTWARDEN_DATA`` set, every
shared text corpus and every transcript (raw lines and each string inside them) is checked too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import MissingDependencyError, TokenizerError
from contextwarden.model import Message
from contextwarden.tokens.exact import TiktokenCounter, load_encoding
from contextwarden.tokens.messages import count_message_with
from contextwarden.tokens.quick import QUICKTOK_ENCODINGS, QuicktokCounter

pytest.importorskip("quicktok")

ENCODINGS = ("o200k_base", "cl100k_base")
SAMPLES = (
    "",
    "hello world",
    "def f(x):\n    return {'a': [1, 2, 3]}\n",
    "上下文窗口是有限的\uff0c所以需要压缩。コンテキストウィンドウ",
    "Die Donaudampfschifffahrtsgesellschaftskapitänswitwe läuft.",
    "Привет, мир! Это проверка токенизатора.",
    "مرحبا بالعالم  नमस्ते दुनिया  สวัสดีชาวโลก  Xin chào thế giới  안녕하세요",
    "emoji 🚀🔥👩‍👩‍👧 and\ttabs\r\n  indents\n\n\n",
    "<|endoftext|> looks special but is text <|im_start|>",
    "x" * 5_000,
    " " * 3_000 + "\n" * 2_000,
    "1234567890" * 300,
    "\n".join(f"{n:012d}" for n in range(0, 10**12, 7_919_000_001)),
    "aGVsbG8gd29ybGQ=" * 200,
    "lone surrogate \ud800 inside",
)


def reference(encoding: str) -> Any:
    return load_encoding(encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("text", SAMPLES, ids=range(len(SAMPLES)))
def test_counts_equal_tiktoken(encoding: str, text: str) -> None:
    assert QuicktokCounter(encoding).count_text(text) == len(
        reference(encoding).encode_ordinary(text)
    )


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        # what the running Python's Unicode database assigns (14.0 on 3.11): quicktok 0.4 splits
        # a letter Unicode 17.0 assigned apart from tiktoken 0.14 (docs/tokens.md)
        st.characters(codec="utf-8", exclude_categories=("Cn",))
        | st.sampled_from(" \n\t0123456789xX.,'s"),
        max_size=300,
    )
)
def test_generated_text_counts_equal_tiktoken(text: str) -> None:
    for encoding in ENCODINGS:
        assert QuicktokCounter(encoding).count_text(text) == len(
            reference(encoding).encode_ordinary(text)
        ), encoding


def test_every_bundled_encoding_loads() -> None:
    text = "Hello, world! 你好"
    counts = {name: QuicktokCounter(name).count_text(text) for name in QUICKTOK_ENCODINGS}
    assert all(count > 0 for count in counts.values())
    assert counts["o200k_harmony"] == counts["o200k_base"]


def test_shares_the_exact_cache_key_and_message_rules() -> None:
    quick, tik = QuicktokCounter("cl100k_base"), TiktokenCounter("cl100k_base", threads=1)
    assert quick.cache_key == tik.cache_key
    assert quick.cache_key != QuicktokCounter("o200k_base").cache_key
    message = Message.user("Please fix the failing test in tests/test_io.py.")
    assert quick.count_message(message) == count_message_with(tik.count_text, message)


def test_unknown_encoding_lists_supported() -> None:
    with pytest.raises(TokenizerError, match="o200k_base"):
        QuicktokCounter("p50k_base")


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "quicktok", None)
    with pytest.raises(MissingDependencyError, match="quicktok"):
        QuicktokCounter("o200k_base")


# ----------------------------------------------------------------------------- whole corpora
CORPUS = os.environ.get("CONTEXTWARDEN_DATA")
needs_corpus = pytest.mark.skipif(
    not CORPUS, reason="set CONTEXTWARDEN_DATA to check every shared corpus and transcript"
)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _texts_of(path: Path) -> Iterator[str]:
    """A transcript's raw lines, then every string value inside it (the texts a loader reads)."""
    raw = path.read_text(encoding="utf-8")
    lines = raw.splitlines()
    yield from lines
    try:
        documents = [json.loads(raw)]
    except json.JSONDecodeError:  # JSON lines
        documents = [json.loads(line) for line in lines if line.strip()]
    for document in documents:
        yield from _strings(document)


@needs_corpus
def test_every_shared_text_corpus(transcripts: list[Path]) -> None:
    assert CORPUS
    files = sorted((Path(CORPUS) / "text").glob("*.txt"))
    assert files, f"no text corpora under {CORPUS}/text"
    for path in files:
        text = path.read_text(encoding="utf-8")
        for encoding in ENCODINGS:
            exact = len(reference(encoding).encode_ordinary(text))
            assert QuicktokCounter(encoding).count_text(text) == exact, f"{path} ({encoding})"


@needs_corpus
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_transcript_text(transcripts: list[Path], encoding: str) -> None:
    quick, exact = QuicktokCounter(encoding).count_text, reference(encoding).encode_ordinary
    for path in transcripts:
        for index, text in enumerate(_texts_of(path)):
            assert quick(text) == len(exact(text)), f"{path.name}: text {index}"
