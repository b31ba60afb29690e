"""Replay priced: each strategy's requests through the cache model, in the CLI, JSON, report and
``inspect``'s recorded cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextwarden.cost import default_prices
from contextwarden.cost.recorded import recorded_bill, unseen_preamble
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from tests.cliruns import run_cli, run_json

FIXTURE = Path(__file__).parent / "data" / "claude-code" / "claude-code-viewer-5c0375b4-main.jsonl"
SONNET = default_prices().get("claude-sonnet-4")


def test_unmanaged_requests_read_what_the_previous_request_sent() -> None:
    session = load(FIXTURE)
    extra = unseen_preamble(session)
    result = replay(session, ["none"], pricing=SONNET, unseen_preamble=extra)
    bill = result.runs["none"].bill
    assert bill is not None and len(bill.usages) == result.turns
    inputs = [u.input for u in bill.usages]
    assert inputs[0] == session.preamble_tokens + extra + result.runs["none"].tokens[0]
    stamps = [m.meta.timestamp for m in session.messages if m.role == "assistant"]
    for k in range(1, len(inputs)):
        gap = (stamps[k] or 0) - (stamps[k - 1] or 0)
        if gap < 300:  # the 5-minute entry is alive: the whole previous request is read
            assert bill.usages[k].cache_read == inputs[k - 1]
    # and the model's cost of the unmanaged session is close to what was billed
    recorded = recorded_bill(session, default_prices())["claude-sonnet-4-20250514"]
    assert bill.cost == pytest.approx(recorded.cost, rel=0.10)


def test_replay_cli_prints_cost_columns_and_prices_can_be_overridden(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    base = run_json(capsys, "replay", str(FIXTURE), "--pricing", "claude-sonnet-4-20250514")
    cost = base["strategies"]["ladder"]["cost"]
    assert cost["model"] == "claude-sonnet-4" and cost["cost_usd"] > 0
    assert len(cost["cost_per_request_usd"]) == base["turns"]
    assert cost["cost_without_cache_usd"] > cost["cost_usd"]
    doubled = ",".join(
        f"{f}:{2 * getattr(SONNET, f)}"
        for f in ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
    )
    spec = f"claude-sonnet-4={doubled}"
    twice = run_json(
        capsys, "replay", str(FIXTURE), "--pricing", "claude-sonnet-4", "--prices", spec
    )
    assert twice["strategies"]["ladder"]["cost"]["cost_usd"] == pytest.approx(
        2 * cost["cost_usd"], rel=1e-4
    )
    report = tmp_path / "r.html"
    code, out, _ = run_cli(
        capsys, "replay", str(FIXTURE), "--pricing", "claude-sonnet-4", "--report", str(report)
    )
    assert code == 0 and "% none $" in out
    assert 'id="cost-chart"' in report.read_text()
    unpriced = run_json(capsys, "replay", str(FIXTURE))
    assert "cost" not in unpriced["strategies"]["ladder"]


def test_an_unknown_model_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "replay", str(FIXTURE), "--pricing", "gpt-99")
    assert code == 2 and "no price for model 'gpt-99'" in err and "--prices" in err
    code, _, err = run_cli(
        capsys, "replay", str(FIXTURE), "--pricing", "x", "--prices", "x=input:1"
    )
    assert code == 2 and "'input' and 'output' are required" in err


def test_inspect_shows_the_recorded_cost(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "inspect", str(FIXTURE))
    recorded = recorded_bill(load(FIXTURE), default_prices())
    assert data["recorded_cost"]["cost_usd"] == pytest.approx(
        sum(b.cost for b in recorded.values()), abs=1e-6
    )
    assert data["recorded_cost"]["requests"] == 10
    code, out, _ = run_cli(capsys, "inspect", str(FIXTURE))
    assert code == 0 and "recorded cost: $" in out
