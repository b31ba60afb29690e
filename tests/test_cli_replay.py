"""``contextwarden replay``: the real command, its JSON shape, probes file, report and errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import fixture_path

from contextwarden.cli import main
from contextwarden.formats import load
from tests.cliruns import run_cli, run_json

SESSION = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
SHAPE = {
    "total_tokens_sent": int,
    "peak_context": int,
    "over_window": int,
    "invalid_requests": int,
    "compactions": int,
    "probe_retention": float,
    "compaction_seconds": float,
}


def test_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "replay", str(SESSION), "--window", "8000")
    replies = sum(m.role == "assistant" for m in load(SESSION).messages)  # one request each
    assert type(data["turns"]) is int and data["turns"] == replies
    assert data["window"] == 8_000
    assert list(data["strategies"]) == ["ladder", "ladder-cache", "truncate", "mask", "none"]
    for name, numbers in data["strategies"].items():
        for key, kind in SHAPE.items():
            assert type(numbers[key]) is kind, (name, key, numbers[key])
        assert numbers["total_tokens_sent"] == sum(numbers["tokens_per_request"])
        assert numbers["peak_context"] == max(numbers["tokens_per_request"])
        assert 0.0 <= numbers["probe_retention"] <= 1.0
        assert numbers["compactions"] == sum(numbers["compactions_by_kind"].values())
    ladder, none = data["strategies"]["ladder"], data["strategies"]["none"]
    assert ladder["over_window"] == 0 and ladder["invalid_requests"] == 0
    assert none["over_window"] > 0 and none["compactions"] == 0
    assert ladder["total_tokens_sent"] < none["total_tokens_sent"]
    assert data["report"] is None


def test_strategies_and_mask_keep_are_chosen(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("replay", str(SESSION), "--window", "8000", "--strategy", "mask")
    kept = run_json(capsys, *base, "none", "--mask-keep", "100000")
    assert list(kept["strategies"]) == ["mask", "none"]
    assert kept["strategies"]["mask"]["compactions"] == 0  # nothing is old enough to mask
    assert (
        kept["strategies"]["mask"]["tokens_per_request"]
        == kept["strategies"]["none"]["tokens_per_request"]
    )
    masked = run_json(capsys, *base, "--mask-keep", "1")
    assert masked["strategies"]["mask"]["compactions"] > 0


def test_probes_file_replaces_the_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    probes = tmp_path / "PROBES.json"
    probes.write_text(json.dumps(["entire", {"text": "no such words anywhere", "turn": 1}]))
    data = run_json(capsys, "replay", str(SESSION), "--probes", str(probes), "--strategy", "none")
    assert data["probes"] == 1 and data["probes_unchecked"] == 1
    assert data["strategies"]["none"]["probe_retention"] == 1.0
    assert data["strategies"]["none"]["probe_checks"] == data["turns"]  # "entire" is in request 0


def test_table_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.html"
    code, out, _ = run_cli(
        capsys, "replay", str(SESSION), "--window", "8000", "--report", str(report)
    )
    assert code == 0
    assert "Strategies compared" in out and "ladder" in out and "none" in out
    assert f"Report written to {report}" in " ".join(out.split())
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_usage_errors_and_bad_input_files_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "replay", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in err
    bad = tmp_path / "PROBES.json"
    bad.write_text('{"probes": [{"turn": 1}]}')
    code, _, err = run_cli(capsys, "replay", str(SESSION), "--probes", str(bad))
    assert code == 2 and "message 0: a probe needs a non-empty string 'text'" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", str(SESSION), "--strategy", "summary"])
    assert exit_info.value.code == 2  # argparse: not one of the choices
    assert "invalid choice: 'summary'" in capsys.readouterr().err


def test_the_table_fits_or_wraps_never_cuts_a_number() -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from contextwarden.cli.replay_cmd import strategies_view
    from contextwarden.eval.replay import replay

    result = replay(load(SESSION), window=8_000)
    wide = strategies_view(result, 200)
    assert isinstance(wide, Table)
    narrow = strategies_view(result, 50)
    assert isinstance(narrow, Text)
    for width, view in ((200, wide), (50, narrow)):
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(view)
        shown = console.export_text()
        assert "…" not in shown, shown
        for run in result.runs.values():
            assert f"{run.total_tokens_sent:,}" in shown and f"{run.retention.share:.1%}" in shown


def test_a_priced_comparison_at_80_columns_stays_a_table() -> None:
    from rich.console import Console, Group

    from contextwarden.cli.replay_cmd import strategies_view
    from contextwarden.cost.prices import default_prices
    from contextwarden.eval.replay import replay

    price = default_prices().get("claude-sonnet-4-5")
    result = replay(load(SESSION), window=8_000, pricing=price)
    view = strategies_view(result, 80)
    assert isinstance(view, Group)  # the token columns, then the cost columns
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(view)
    shown = console.export_text()
    assert "…" not in shown and max(map(len, shown.splitlines())) <= 80
    for run in result.runs.values():
        assert run.bill is not None
        row = next(line for line in shown.splitlines() if line.startswith(run.name + " "))
        assert f"{run.total_tokens_sent:,}" in row
        assert f"${run.bill.cost:,.2f}" in shown


def test_the_terminal_ends_with_the_reports_conclusion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from contextwarden.eval.replay import replay

    code, out, _ = run_cli(capsys, "replay", str(SESSION), "--window", "8000")
    assert code == 0
    result = replay(load(SESSION), window=8_000)
    fits = [r for r in result.runs.values() if r.over_window == 0 and r.invalid_requests == 0]
    cheapest = min(fits, key=lambda r: r.total_tokens_sent)
    last = " ".join(out.split()).rsplit("Cheapest: ", 1)[-1]
    assert last.startswith(f"{cheapest.name} at {cheapest.total_tokens_sent:,} tokens sent")
    assert last.endswith("(by tokens sent)")


def test_text_view_prints_a_lost_fact_quoting_markup_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Hand-built: typed messages quoting rich's closing tag, lost by truncation at the end,
    # made the "no longer holds" line raise MarkupError after the whole replay had run.
    turns = [
        [
            {"role": "user", "content": f"step {i}: fix the regex [/] in p{i}.py " + "w " * 300},
            {"role": "assistant", "content": "ok " * 300},
        ]
        for i in range(12)
    ]
    session = tmp_path / "chat.json"
    session.write_text(json.dumps([message for turn in turns for message in turn]))
    code, out, err = run_cli(
        capsys, "replay", str(session), "--window", "4000", "--strategy", "truncate"
    )
    assert code == 0, err
    assert "'step 1: fix the regex [/] in p1.py" in " ".join(out.split())
