"""``contextwarden replay FILE``: feed a saved session through context strategies, compare."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from contextwarden.cli.common import (
    add_counter_option,
    add_input_options,
    add_json_options,
    console,
    input_file,
    make_counter,
    non_negative_int,
    output_file,
    positive_int,
    print_json,
    progress_enabled,
    shown,
    status,
)
from contextwarden.cli.sessions import load_input
from contextwarden.compaction.mask import MASK_KEEP_RECENT
from contextwarden.cost.prices import Price, default_prices, load_prices
from contextwarden.cost.recorded import unseen_preamble
from contextwarden.errors import PricingError, UsageError
from contextwarden.eval.probes import load_probes
from contextwarden.eval.replay import Progress as ProgressFn
from contextwarden.eval.replay import ReplayResult, replay
from contextwarden.eval.report_text import verdict
from contextwarden.eval.strategies import STRATEGY_NAMES
from contextwarden.eval.tables import (
    COMPACTIONS,
    NUMERIC,
    SHORT_HEADERS,
    kinds_text,
    rows,
    warning_lines,
)

DEFAULT_WINDOW = 200_000
UNBOUNDED_WIDTH = 10_000
"""A console width no table reaches: measuring in it gives the table's natural width."""
MAX_MISSING_SHOWN = 3
"""Probes missing at the last request printed per strategy (the report lists more)."""


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "replay",
        help="replay a saved session through context strategies and compare cost and retention",
        description=(
            "Feed a saved agent session request by request through each strategy "
            f"({', '.join(STRATEGY_NAMES)}) and measure the tokens sent, the window, API "
            "validity and which facts stay in the context."
        ),
    )
    add_input_options(parser)
    add_replay_options(parser, window=DEFAULT_WINDOW)
    parser.add_argument(
        "--probes",
        type=input_file,
        metavar="PROBES.json",
        help="facts to check: a JSON list of strings or {text, turn, kind} objects "
        "(default: every typed user message, file path touched and error line)",
    )
    parser.add_argument(
        "--report",
        type=output_file,
        metavar="REPORT.html",
        help="also write the self-contained HTML report here (its directory must exist)",
    )
    parser.set_defaults(run=run)


def add_replay_options(parser: argparse.ArgumentParser, *, window: int) -> None:
    """Options ``replay`` and ``demo`` share."""
    parser.add_argument(
        "--window",
        type=positive_int,
        default=window,
        help=f"context window in tokens (default {window:,})",
    )
    parser.add_argument(
        "--strategy",
        action="extend",
        nargs="+",
        choices=STRATEGY_NAMES,
        metavar="NAME",
        help=f"strategies to compare (default: all of {', '.join(STRATEGY_NAMES)})",
    )
    parser.add_argument(
        "--mask-keep",
        type=non_negative_int,
        default=MASK_KEEP_RECENT,
        metavar="M",
        help=f"mask: tool results kept in full (default {MASK_KEEP_RECENT})",
    )
    add_counter_option(parser)
    add_pricing_options(parser)
    add_json_options(parser)


def add_pricing_options(parser: argparse.ArgumentParser) -> None:
    """``--pricing MODEL`` and ``--prices`` (the price table's overrides)."""
    parser.add_argument(
        "--pricing",
        metavar="MODEL",
        help="also model each strategy's cost with prompt caching at MODEL's prices "
        "(e.g. claude-opus-4-6, gpt-5; dated names such as claude-opus-4-5-20251101 work)",
    )
    parser.add_argument(
        "--prices",
        action="append",
        metavar="SPEC",
        help="override the shipped price table: a JSON file shaped like "
        "contextwarden/cost/prices.json, or MODEL=field:value,... (USD per million tokens; "
        "fields: provider, input, output, cache_read, cache_write_5m, cache_write_1h, "
        "min_cacheable_tokens); repeatable",
    )


def pricing(args: argparse.Namespace) -> Price | None:
    """The price ``--pricing`` names, in the table as ``--prices`` overrides it."""
    if getattr(args, "pricing", None) is None:
        if getattr(args, "prices", None):
            raise UsageError("--prices overrides the prices --pricing MODEL bills at; give both")
        return None
    try:
        table = default_prices()
        for spec in args.prices or ():
            table = load_prices(spec, table)
        return table.get(args.pricing)
    except PricingError as exc:  # from the command line's options: a usage error (exit 2)
        raise UsageError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    probes = load_probes(args.probes) if args.probes else None
    with status(f"Loading {args.file}…", enabled=progress_enabled(args)):
        session = load_input(args, make_counter(args.counter))
    result = run_replay(session, args, probes=probes)
    report = _write_report(result, args.report, None) if args.report else None
    if args.json:
        print_json({**result.as_json(), "report": str(report) if report else None}, args)
    else:
        show(result, report)
    return 0


def run_replay(session: Any, args: argparse.Namespace, **kwargs: Any) -> ReplayResult:
    """The replay with the options of ``add_replay_options`` and a progress bar on a TTY."""
    strategies = _unique(args.strategy or STRATEGY_NAMES)
    price = pricing(args)
    with progress_bar(enabled=progress_enabled(args)) as progress:
        return replay(
            session,
            strategies,
            window=args.window,
            mask_keep=args.mask_keep,
            counter=make_counter(args.counter),
            progress=progress,
            pricing=price,
            unseen_preamble=unseen_preamble(session) if price is not None else 0,
            **kwargs,
        )


@contextmanager
def progress_bar(*, enabled: bool) -> Iterator[ProgressFn | None]:
    """A rich progress bar on stderr, one task per strategy; ``None`` when disabled."""
    if not enabled:
        yield None
        return
    columns = (
        TextColumn("{task.description:>9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("requests"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(strategy: str, done: int, total: int) -> None:
            if strategy not in tasks:
                tasks[strategy] = bar.add_task(strategy, total=total)
            bar.update(tasks[strategy], completed=done)

        yield update


def show(result: ReplayResult, report: Path | None) -> None:
    out = console()
    p = result.policy
    out.print(
        f"[bold]{shown(result.source)}[/]: {result.messages:,} messages, {result.turns:,} "
        f"requests; window {p.context_window:,} (effective {p.effective_window:,}, autocompact at "
        f"{p.autocompact_threshold:,}); {len(result.probes):,} probes"
    )
    out.print(strategies_view(result, out.width))
    for run_ in result.runs.values():
        if run_.marks:
            out.print(f"  {run_.name} compactions: {kinds_text(run_)}")
    for run_ in result.runs.values():
        missing = run_.retention.missing_at_end
        if missing:
            listed = "; ".join(shown(repr(_short(m))) for m in missing[:MAX_MISSING_SHOWN])
            more = len(missing) - MAX_MISSING_SHOWN
            tail = f" … and {more} more" if more > 0 else ""
            out.print(f"  [dim]{run_.name} no longer holds at the last request: {listed}{tail}[/]")
        for problem in run_.problems:
            out.print(f"  [red]{run_.name}: {shown(problem)}[/]")
    for line in warning_lines(result):
        out.print(f"  {line}", style="yellow", markup=False)
    found = verdict(result, lambda name: f"[bold]{escape(name)}[/]", escape)
    if found is not None:  # the report's conclusion, on the terminal too
        out.print(f"{found[0]}. [dim](by {found[1]})[/]")
    if report is not None:
        out.print(f"Report written to [bold]{shown(str(report))}[/]")


def strategies_view(result: ReplayResult, width: int) -> Table | Group | Text:
    """The comparison as one table when it fits ``width`` columns, else as two (tokens, then
    cost, as an 80-column terminal shows a priced replay), else one wrapped paragraph per
    strategy: numbers are never cut to ``100.…``."""
    head, body = rows(result, short=True)
    table = strategy_table(head, body, range(len(head)))
    if _width(table) <= width:
        return table
    tokens = strategy_table(head, body, range(len(SHORT_HEADERS)))
    cost = strategy_table(head, body, [0, *range(len(SHORT_HEADERS), len(head))], title=None)
    if len(head) > len(SHORT_HEADERS) and max(_width(tokens), _width(cost)) <= width:
        return Group(tokens, Text(""), cost)
    return _paragraphs(result)


def _paragraphs(result: ReplayResult) -> Text:
    head, body = rows(result)
    lines = Text("Strategies compared\n", style="italic")
    for row in body:
        lines.append(row[0], style="bold")
        lines.append(": " + ", ".join(f"{h} {v}" for h, v in zip(head[1:], row[1:], strict=True)))
        lines.append("\n")
    return lines


def _width(table: Table) -> int:
    return Console(width=UNBOUNDED_WIDTH).measure(table).maximum


def strategy_table(
    head: Sequence[str],
    body: Sequence[Sequence[str]],
    columns: Sequence[int],
    *,
    title: str | None = "Strategies compared",
) -> Table:
    """The ``columns`` of the short rows as a compact table."""
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        show_edge=False,
    )
    for i in columns:
        right = i in NUMERIC or i == COMPACTIONS  # the short table shows only the count
        table.add_column(head[i], justify="right" if right else "left", no_wrap=True)
    for row in body:
        table.add_row(*(row[i] for i in columns))
    return table


def _write_report(result: ReplayResult, path: Path, note: str | None) -> Path:
    from contextwarden.eval.report import write_report

    return write_report(result, path, note=note)


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))
