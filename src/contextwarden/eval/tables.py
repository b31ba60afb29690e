"""The per-strategy table, defined once for the terminal, the HTML report and docs/benchmarks.md."""

from __future__ import annotations

from contextwarden.eval.runs import ReplayResult, StrategyRun

HEADERS = (
    "strategy",
    "total sent",
    "% of none",
    "peak",
    "over window",
    "invalid",
    "compactions",
    "compaction s",
    "retention",
)
SHORT_HEADERS = ("strategy", "sent", "% none", "peak", "over", "invalid", "compact", "s", "kept")
"""The same columns, narrow enough for an 80-column terminal."""
COST_HEADERS = ("cost", "% of none cost", "without cache")
"""Added when the replay was priced: modeled cost with prompt caching, the same share of
``none``'s, and the cost had nothing been cached."""
SHORT_COST_HEADERS = ("$", "% none $", "no-cache $")
COMPACTIONS = HEADERS.index("compactions")
NUMERIC = frozenset(range(1, len(HEADERS) + len(COST_HEADERS))) - {COMPACTIONS}
"""Columns aligned right (the numbers)."""


def rows(result: ReplayResult, *, short: bool = False) -> tuple[tuple[str, ...], list[list[str]]]:
    """The headers and one row of text cells per strategy; ``short``: narrow headers and the
    compaction count without its kinds."""
    none = result.runs.get("none")
    body = [_row(run, none) for run in result.runs.values()]
    if short:
        for row, run in zip(body, result.runs.values(), strict=True):
            row[COMPACTIONS] = str(run.compactions)
    head: tuple[str, ...] = SHORT_HEADERS if short else HEADERS
    if any(run.bill is not None for run in result.runs.values()):
        head = (*head, *(SHORT_COST_HEADERS if short else COST_HEADERS))
        for row, run in zip(body, result.runs.values(), strict=True):
            row.extend(_cost_cells(run, none))
    return head, body


def _cost_cells(run: StrategyRun, none: StrategyRun | None) -> list[str]:
    if run.bill is None:
        return ["—"] * len(COST_HEADERS)
    base = none.bill.cost if none is not None and none.bill is not None else 0.0
    share = f"{run.bill.cost / base:.1%}" if base else "—"
    return [f"${run.bill.cost:,.2f}", share, f"${run.bill.uncached_cost:,.2f}"]


def _row(run: StrategyRun, none: StrategyRun | None) -> list[str]:
    base = none.total_tokens_sent if none is not None else 0
    share = f"{run.total_tokens_sent / base:.1%}" if base else "—"
    return [
        run.name,
        f"{run.total_tokens_sent:,}",
        share,
        f"{run.peak_context:,}",
        str(run.over_window),
        str(run.invalid_requests),
        compactions_text(run),
        f"{run.compaction_seconds:.2f}",
        f"{run.retention.share:.1%}",
    ]


def warning_lines(result: ReplayResult) -> list[str]:
    """One line per warning a strategy's reports gave (a window too small for the session,
    requests that could not fit), for the terminal, the HTML report and docs."""
    return [f"warning: {w}" for w in result.warnings]


def compactions_text(run: StrategyRun) -> str:
    """``26 (14 microcompact, 10 summarize, 2 tool_result_budget)``."""
    return f"{run.compactions} ({kinds_text(run)})" if run.marks else "0"


def kinds_text(run: StrategyRun) -> str:
    """``14 microcompact, 10 summarize, 2 tool_result_budget`` (most frequent first)."""
    return ", ".join(f"{n} {name}" for name, n in sorted(run.kinds.items(), key=lambda kv: -kv[1]))
