"""Price inputs a careless or hostile user gives: every one is refused with one line naming what is
wrong, never a traceback, a hang on a FIFO, or a ``$nan`` bill."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextwarden.cost.prices import Price, load_prices
from contextwarden.errors import PricingError
from tests.cliruns import run_cli
from tests.conftest import fixture_path

SESSION = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("claude-opus-4-6=input:nan", "'nan' is not a finite number"),
        ("claude-opus-4-6=output:inf", "'inf' is not a finite number"),
        ("m=input:1,output:2,min_cacheable_tokens:1.5", "must be a whole number"),
        ("m\x00=input:1,output:2", "NUL"),
    ],
)
def test_bad_overrides_are_refused(spec: str, message: str) -> None:
    with pytest.raises(PricingError, match=message):
        load_prices(spec)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"models": {"m": {"input": NaN, "output": 2}}}', "input must be a finite number"),
        (b'{"models": {"m": {"input": 1, "output": Infinity}}}', "output must be a finite"),
        (b'{"models": {"m": {"input": 1e999, "output": 2}}}', "input must be a finite"),
        (b'{"models": {"m": {"input": 1' + b"0" * 400 + b', "output": 2}}}', "too large"),
        (b'{"models": {"m": {"input": 1' + b"0" * 5000 + b', "output": 2}}}', "not a usable"),
        (b'{"models": {"m": {"input": "1", "output": 2}}}', "input must be a finite number"),
        (b'{"models": {"m": {"input": 1, "output": 2, "provider": 3}}}', "provider must be"),
        (b'{"models": {}, "sources": 5}', "'sources' must be a list of strings"),
        (b'{"models": {}, "date": {"y": 2026}}', "'date' must be a string"),
        (b'{"models": []}', "expected an object with a 'models' object"),
        (b'{"models": {"m": 5}}', "expected an object of prices"),
        (b'{"models": {"m": {"input": 1, "output": 2}}} \xff', "not UTF-8 \\(byte 45\\)"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_bad_price_files_are_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "prices.json"
    path.write_bytes(content)
    with pytest.raises(PricingError, match=message):
        load_prices(path)


def test_a_fifo_as_price_file_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(PricingError, match="not a regular file"):
        load_prices(tmp_path / "fifo")


def test_a_price_cannot_be_built_with_nan() -> None:
    with pytest.raises(PricingError, match="cache_read must be a finite number >= 0, got nan"):
        Price("m", "anthropic", 1, 2, float("nan"), 1, 1)


def test_the_cli_gives_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "bad.json").write_bytes(b'{"models": {"m": {"input": NaN, "output": 1}}}')
    for spec in (str(tmp_path / "fifo"), str(tmp_path / "bad.json"), "claude-opus-4-6=input:nan"):
        base = ("replay", str(SESSION), "--window", "8000", "--pricing", "claude-opus-4-6")
        code, out, err = run_cli(capsys, *base, "--prices", spec)
        assert code == 2 and out == "", err
        assert err.count("\n") == 1 and "Traceback" not in err and "$nan" not in err


def test_prices_without_pricing_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "replay", str(SESSION), "--prices", "m=input:1,output:2")
    assert code == 2 and "give both" in err
