"""``contextwarden inspect FILE``: what a session holds and where its tokens go."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from contextwarden.breakdown import CATEGORIES, ContextBreakdown, breakdown
from contextwarden.cli.common import (
    FORMAT_CHOICES,
    add_counter_option,
    add_lenient_option,
    bar,
    console,
    make_counter,
    print_json,
)
from contextwarden.cost.prices import default_prices
from contextwarden.cost.recorded import recorded_cost
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.rules import validate

MAX_LISTED = 20


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "inspect",
        help="show a session's messages, token use by category and tool, and rule violations",
        description="Load a saved agent session and show where its context tokens go.",
    )
    parser.add_argument("file", type=Path, help="session file (JSONL, JSON, .traj)")
    parser.add_argument("--format", default="auto", choices=FORMAT_CHOICES)
    add_lenient_option(parser)
    parser.add_argument("--index", type=int, default=0, help="conversation in multi-run files")
    add_counter_option(parser)
    parser.add_argument("--top", type=int, default=5, help="how many largest messages to list")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    counter = make_counter(args.counter)
    history = load(args.file, args.format, index=args.index, counter=counter, lenient=args.lenient)
    parts = breakdown(
        history.messages, counter, system=history.system, tools=history.tools, largest=args.top
    )
    result = summary(history, parts)
    if args.json:
        print_json(result)
    else:
        show(result, parts)
    return 0


def summary(history: ConversationHistory, parts: ContextBreakdown) -> dict[str, Any]:
    report = history.source
    violations = validate(history.messages)
    roles = {"user": 0, "assistant": 0}
    for message in history.messages:
        roles[message.role] += 1
    out: dict[str, Any] = {
        "file": report.path if report else None,
        "format": report.format if report else None,
        "messages": len(history.messages),
        "messages_by_role": roles,
        "tokens": {"total": parts.total, "by_category": parts.by_category},
        "tool_results_by_tool": parts.tool_results_by_tool,
        "tool_calls_by_tool": parts.tool_calls_by_tool,
        "largest_messages": parts.as_json()["largest_messages"],
        "violations": [
            {"rule": v.rule, "index": v.index, "message": v.message} for v in violations
        ],
        "repairs": [{"index": r.index, "action": r.action} for r in history.repairs],
        "issues": [
            {"line": i.line, "index": i.index, "message": i.message}
            for i in (report.issues if report else [])
        ],
        "records": report.records if report else None,
        "metadata": _public_metadata(report.metadata if report else {}),
        "recorded_cost": recorded_cost(history, default_prices()),
    }
    return out


def _public_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Counts for long lists (compactions, summaries…) and scalar facts as they are."""
    out: dict[str, Any] = {}
    for key, value in sorted(metadata.items()):
        out[key] = len(value) if isinstance(value, list | dict) else value
    return out


def show(result: dict[str, Any], parts: ContextBreakdown) -> None:
    out = console()
    roles = result["messages_by_role"]
    out.print(
        f"[bold]{result['file']}[/]  format [cyan]{result['format']}[/]  "
        f"{result['messages']} messages ({roles['user']} user, {roles['assistant']} assistant)  "
        f"[bold]{parts.total:,}[/] tokens"
    )
    for key, value in result["metadata"].items():
        out.print(f"  {key}: {value}")
    cost = result["recorded_cost"]
    if cost is not None:
        unpriced = (
            f" (no price for {', '.join(cost['unpriced_models'])})"
            if cost["unpriced_models"]
            else ""
        )
        out.print(
            f"  recorded cost: [bold]${cost['cost_usd']:,.2f}[/] over {cost['requests']} requests "
            f"at {cost['prices_date']} prices{unpriced}"
        )
    out.print(_category_table(parts))
    if parts.tool_results_by_tool:
        out.print(_tool_table(parts))
    out.print(_largest_table(result["largest_messages"]))
    _show_problems(result)


def _category_table(parts: ContextBreakdown) -> Table:
    table = Table(title="Tokens by category", title_justify="left")
    table.add_column("category")
    table.add_column("tokens", justify="right")
    table.add_column("share", justify="right")
    table.add_column("")
    for name in CATEGORIES:
        tokens = parts.by_category[name]
        share = tokens / parts.total if parts.total else 0.0
        table.add_row(name, f"{tokens:,}", f"{share:.1%}", bar(share))
    return table


def _tool_table(parts: ContextBreakdown) -> Table:
    table = Table(title="Tool results by tool", title_justify="left")
    table.add_column("tool")
    table.add_column("calls", justify="right")
    table.add_column("result tokens", justify="right")
    table.add_column("")
    top = max(parts.tool_results_by_tool.values(), default=0)
    for name, tokens in list(parts.tool_results_by_tool.items())[:MAX_LISTED]:
        calls = parts.tool_calls_by_tool.get(name, 0)
        table.add_row(name, str(calls), f"{tokens:,}", bar(tokens / top if top else 0.0))
    return table


def _largest_table(largest: list[dict[str, Any]]) -> Table:
    table = Table(title="Largest messages", title_justify="left")
    for column in ("index", "role", "tokens", "preview"):
        table.add_column(column, justify="right" if column in ("index", "tokens") else "left")
    for item in largest:
        table.add_row(str(item["index"]), item["role"], f"{item['tokens']:,}", item["preview"])
    return table


def _show_problems(result: dict[str, Any]) -> None:
    out = console()
    sections = (
        ("Rule violations", result["violations"], "red"),
        ("Repairs made while loading", result["repairs"], "yellow"),
        ("Records that could not be read", result["issues"], "yellow"),
    )
    for title, items, colour in sections:
        if not items:
            continue
        out.print(f"[{colour}]{title}: {len(items)}[/]")
        for item in items[:MAX_LISTED]:
            where = ", ".join(
                f"{k} {item[k]}" for k in ("rule", "line", "index") if item.get(k) is not None
            )
            out.print(f"  {where}: {item.get('message') or item.get('action')}")
        if len(items) > MAX_LISTED:
            out.print(f"  … and {len(items) - MAX_LISTED} more (see --json)")
    if not result["violations"]:
        out.print("[green]The loaded view passes every API rule.[/]")
