"""``contextwarden replay FILE``: feed a saved session through context strategies, compare."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from contextwarden.cli.common import (
    FORMAT_CHOICES,
    add_counter_option,
    add_lenient_option,
    console,
    make_counter,
    print_json,
)
from contextwarden.compaction.mask import MASK_KEEP_RECENT
from contextwarden.cost.prices import Price, default_prices, load_prices
from contextwarden.cost.recorded import unseen_preamble
from contextwarden.eval.probes import load_probes
from contextwarden.eval.replay import Progress as ProgressFn
from contextwarden.eval.replay import ReplayResult, replay
from contextwarden.eval.strategies import STRATEGY_NAMES
from contextwarden.eval.tables import COMPACTIONS, NUMERIC, kinds_text, rows
from contextwarden.formats import load

DEFAULT_WINDOW = 200_000
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
    parser.add_argument("file", type=Path, help="session file (JSONL, JSON, .traj)")
    add_replay_options(parser, window=DEFAULT_WINDOW)
    parser.add_argument("--format", default="auto", choices=FORMAT_CHOICES)
    add_lenient_option(parser)
    parser.add_argument("--index", type=int, default=0, help="conversation in multi-run files")
    parser.add_argument(
        "--probes",
        type=Path,
        metavar="PROBES.json",
        help="facts to check: a JSON list of strings or {text, turn, kind} objects "
        "(default: every typed user message, file path touched and error line)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="REPORT.html",
        help="also write the self-contained HTML report here",
    )
    parser.set_defaults(run=run)


def add_replay_options(parser: argparse.ArgumentParser, *, window: int) -> None:
    """Options ``replay`` and ``demo`` share."""
    parser.add_argument(
        "--window",
        type=_positive,
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
        type=int,
        default=MASK_KEEP_RECENT,
        metavar="M",
        help=f"mask: tool results kept in full (default {MASK_KEEP_RECENT})",
    )
    add_counter_option(parser)
    add_pricing_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


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
        return None
    table = default_prices()
    for spec in args.prices or ():
        table = load_prices(spec, table)
    return table.get(args.pricing)


def run(args: argparse.Namespace) -> int:
    session = load(
        args.file,
        args.format,
        index=args.index,
        counter=make_counter(args.counter),
        lenient=args.lenient,
    )
    probes = load_probes(args.probes) if args.probes else None
    result = run_replay(session, args, probes=probes)
    report = _write_report(result, args.report, None) if args.report else None
    if args.json:
        print_json({**result.as_json(), "report": str(report) if report else None})
    else:
        show(result, report)
    return 0


def run_replay(session: Any, args: argparse.Namespace, **kwargs: Any) -> ReplayResult:
    """The replay with the options of ``add_replay_options`` and a progress bar on a TTY."""
    strategies = _unique(args.strategy or STRATEGY_NAMES)
    price = pricing(args)
    with progress_bar(enabled=not args.json and sys.stderr.isatty()) as progress:
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
        f"[bold]{result.source}[/]: {result.messages:,} messages, {result.turns:,} requests; "
        f"window {p.context_window:,} (effective {p.effective_window:,}, autocompact at "
        f"{p.autocompact_threshold:,}); {len(result.probes):,} probes"
    )
    out.print(strategy_table(result))
    for run_ in result.runs.values():
        if run_.marks:
            out.print(f"  {run_.name} compactions: {kinds_text(run_)}")
    for run_ in result.runs.values():
        missing = run_.retention.missing_at_end
        if missing:
            shown = "; ".join(repr(_short(m)) for m in missing[:MAX_MISSING_SHOWN])
            more = len(missing) - MAX_MISSING_SHOWN
            tail = f" … and {more} more" if more > 0 else ""
            out.print(f"  [dim]{run_.name} no longer holds at the last request: {shown}{tail}[/]")
        for problem in run_.problems:
            out.print(f"  [red]{run_.name}: {problem}[/]")
    if report is not None:
        out.print(f"Report written to [bold]{report}[/]")


def strategy_table(result: ReplayResult) -> Table:
    head, body = rows(result, short=True)
    table = Table(
        title="Strategies compared",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        show_edge=False,
    )
    for i, name in enumerate(head):
        right = i in NUMERIC or i == COMPACTIONS  # the short table shows only the count
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    for row in body:
        table.add_row(*row)
    return table


def _write_report(result: ReplayResult, path: Path, note: str | None) -> Path:
    from contextwarden.eval.report import write_report

    return write_report(result, path, note=note)


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _positive(text: str) -> int:
    value = int(text.replace("_", "").replace(",", ""))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of tokens, got {text}")
    return value
