"""``contextwarden inspect FILE``: what a session holds and where its tokens go."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from rich.table import Table

from contextwarden.breakdown import CATEGORIES, ContextBreakdown, breakdown
from contextwarden.cli.common import (
    PROG,
    add_counter_option,
    add_input_options,
    add_json_options,
    bar,
    console,
    make_counter,
    positive_int,
    print_json,
    printable,
    progress_enabled,
    shown,
    status,
)
from contextwarden.cli.losses import show_losses
from contextwarden.cli.sessions import (
    is_store,
    load_input,
    open_existing,
    session_ids,
    sessions_table,
    summaries,
)
from contextwarden.compaction.loss import LossReport, log_losses, losses
from contextwarden.cost.prices import default_prices
from contextwarden.cost.recorded import recorded_cost
from contextwarden.formats.codex import NAME as CODEX
from contextwarden.formats.codex_compactions import contexts, sent_after_last
from contextwarden.history import ConversationHistory
from contextwarden.model import Message
from contextwarden.rules import validate
from contextwarden.tokens.base import TokenCounter

MAX_LISTED = 20
CODEX_KINDS = {
    "read": "local compaction",
    "encrypted": "remote compaction",
    "absent": "compaction without summary",
}
"""Codex's compaction by what it kept of its summary: a local one writes it as a user message, a
remote one (OpenAI's server) sends it back encrypted; some records carry neither."""
MAX_METADATA_CHARS = 200
"""A metadata value longer than this is shown as its head and how much was left out (a
trajectory's ``submission`` can be a whole 868 KB diff)."""


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "inspect",
        help="show a session's messages, token use by category and tool, and rule violations",
        description="Load a saved agent session and show where its context tokens go.",
    )
    add_input_options(parser)
    add_counter_option(parser)
    parser.add_argument(
        "--top", type=positive_int, default=5, help="how many largest messages to list"
    )
    add_json_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    counter = make_counter(args.counter)
    if args.session is None and is_store(args.file):
        return show_store(args, counter)
    with status(f"Loading {args.file}…", enabled=progress_enabled(args)):
        history = load_input(args, counter)
    parts = breakdown(
        history.messages, counter, system=history.system, tools=history.tools, largest=args.top
    )
    result = summary(history, parts)
    result["sent_context"] = _sent_summary(history, counter)
    with status(
        "Comparing the context before and after each compaction…", enabled=progress_enabled(args)
    ):
        result["compactions_lost"] = recorded_losses(history, counter) + [
            {"strategy": b.strategy, "trigger": b.trigger, "lost": lost.as_json()}
            for b, lost in log_losses(history.log, counter)
        ]
    if args.json:
        print_json(result, args)
    else:
        show(result, parts)
    return 0


def show_store(args: argparse.Namespace, counter: TokenCounter) -> int:
    """A store without ``--session``: its sessions, newest first."""
    store = open_existing(args.file, schema=args.schema)
    try:
        with status(f"Reading {args.file}…", enabled=progress_enabled(args)):
            found = summaries(store, counter) if session_ids(store, args.file) else []
    finally:
        store.close()
    if args.json:
        print_json({"store": str(args.file), "sessions": [s.as_json() for s in found]}, args)
        return 0
    out = console()
    out.print(f"[bold]{args.file}[/]: session store, {len(found)} session(s)")
    out.print(sessions_table(found))
    if found:
        out.print(f"Inspect one with: {PROG} inspect {args.file} --session {found[0].id}")
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
    """Counts for long lists (compactions, summaries…), scalar facts as they are, long text cut."""
    out: dict[str, Any] = {}
    for key, value in sorted(metadata.items()):
        if isinstance(value, list | dict):
            out[key] = len(value)
        elif isinstance(value, str) and len(value) > MAX_METADATA_CHARS:
            left = len(value) - MAX_METADATA_CHARS
            out[key] = f"{value[:MAX_METADATA_CHARS]}… [{left:,} more characters in the file]"
        else:
            out[key] = value
    return out


def sent_context(history: ConversationHistory) -> tuple[dict[str, Any], tuple[Message, ...]]:
    """What the agent really sent after the session's last compaction: that compaction's summary
    as the first user message, then every message after it (Codex: its replacement history, then
    every message after it; ``codex_compactions.sent_after_last``). The loaded view is the whole
    log (nothing said is dropped), so without this a compacted session looks over its window.
    Empty when the loader recorded no compaction with a summary (Codex: with a replacement)."""
    entry, head, tail = _sent(history)
    return entry, (*head, *tail)


def _sent(
    history: ConversationHistory,
) -> tuple[dict[str, Any], tuple[Message, ...], tuple[Message, ...]]:
    """``sent_context`` as the compaction, what stood for the context it replaced, and the rest."""
    found = history.source.metadata.get("compactions") if history.source else None
    if _is_codex(history):
        entry, kept, after = sent_after_last(history.messages, found or [])
        return dict(entry), kept, after
    last = next((c for c in reversed(found or []) if _has_summary(c)), None)
    if last is None:
        return {}, (), ()
    head = Message.user(last["summary"]["text"])
    tail = history.messages[last["messages_before"] :]
    if tail and tail[0].role == "user":  # the summary and the next user turn are one message
        head, tail = replace(tail[0], content=head.content + tail[0].content), tail[1:]
    return last, (head,), tail


def recorded_losses(history: ConversationHistory, counter: TokenCounter) -> list[dict[str, Any]]:
    """What each compaction the agent recorded in its file (Claude Code's ``/compact``, qwen-code's
    compression, Codex CLI's, ours written by ``compact``) took out of the context: the context it
    replaced (the previous summary, then every message since) against the one it left (its
    summary, then the messages it kept verbatim). ``summary`` says whether that summary could be
    read; where not, what is listed was not kept verbatim, and the summary may still carry it."""
    if _is_codex(history):
        return _codex_losses(history, counter)
    found = history.source.metadata.get("compactions") if history.source else None
    agent = history.source.format if history.source else "recorded"
    out: list[dict[str, Any]] = []
    summary: tuple[Message, ...] = ()
    start = 0
    for entry in (c for c in found or [] if _has_summary(c)):
        kept, end = _kept_span(entry)
        before = summary + history.messages[start:end]
        summary = (Message.user(entry["summary"]["text"]),)
        lost = losses(before, summary + history.messages[kept:end], counter)
        trigger = entry.get("trigger") if isinstance(entry.get("trigger"), str) else "recorded"
        out.append(_recorded(f"{agent} compaction", trigger, "read", lost))
        start = kept
    return out


def _is_codex(history: ConversationHistory) -> bool:
    """Codex records a compaction as the replacement history it sent, not as a summary text:
    its sent context and losses are rebuilt from that (``formats.codex_compactions``)."""
    return history.source is not None and history.source.format == CODEX


def _codex_losses(history: ConversationHistory, counter: TokenCounter) -> list[dict[str, Any]]:
    """Codex CLI's compactions, each its replaced context against its replacement history
    (``formats.codex_compactions`` says what is exact); its record names no trigger."""
    found = history.source.metadata.get("compactions") if history.source else None
    out = []
    for context in contexts(history.messages, found or []):
        state = context.entry["summary_state"]
        lost = losses(context.before, context.after, counter)
        out.append(_recorded(f"codex {CODEX_KINDS[state]}", "recorded", state, lost))
    return out


def _recorded(strategy: str, trigger: str, summary: str, lost: LossReport) -> dict[str, Any]:
    return {"strategy": strategy, "trigger": trigger, "summary": summary, "lost": lost.as_json()}


def _kept_span(entry: dict[str, Any]) -> tuple[int, int]:
    """Where the messages a recorded compaction kept verbatim start, and where the context it
    compacted ended: at its boundary, or after the segment a partial compaction preserved."""
    kept = entry["messages_before"]
    segment = entry.get("preserved_segment")
    if isinstance(segment, dict) and segment.get("in_view"):
        return kept, int(segment["last_message"]) + 1
    return kept, kept


def _has_summary(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("messages_before"), int)
        and isinstance(entry.get("summary"), dict)
        and isinstance(entry["summary"].get("text"), str)
    )


def _sent_summary(history: ConversationHistory, counter: TokenCounter) -> dict[str, Any] | None:
    compaction, head, tail = _sent(history)
    if not head and not tail:
        return None
    messages = (*head, *tail)
    parts = breakdown(messages, counter, system=history.system, tools=history.tools, largest=0)
    return {
        "after_compaction_at_line": compaction.get("line"),
        "compactions": len(history.source.metadata["compactions"]) if history.source else 0,
        "messages": len(messages),
        "replacement_messages": len(head),
        "summary": compaction.get("summary_state", "read"),
        "tokens": {"total": parts.total, "by_category": parts.by_category},
    }


def show(result: dict[str, Any], parts: ContextBreakdown) -> None:
    out = console()
    roles = result["messages_by_role"]
    out.print(
        f"[bold]{shown(result['file'])}[/]  format [cyan]{result['format']}[/]  "
        f"{result['messages']} messages ({roles['user']} user, {roles['assistant']} assistant)  "
        f"[bold]{parts.total:,}[/] tokens"
    )
    for key, value in result["metadata"].items():
        flat = printable(" ".join(str(value).split()))
        out.print(f"  {key}: {flat}", markup=False, overflow="fold")
    if result["recorded_cost"] is not None:
        out.print(f"  recorded cost: {_cost_text(result['recorded_cost'])}")
    sent = result["sent_context"]
    if sent is not None:
        out.print(
            f"[bold]Context as sent after the last of {sent['compactions']} compaction(s)[/] "
            f"(line {sent['after_compaction_at_line']}): {_replacement_text(sent)} + "
            f"{sent['messages'] - sent['replacement_messages']:,} messages, "
            f"[bold]{sent['tokens']['total']:,}[/] tokens. The tables below count the full log "
            f"({result['messages']:,} messages, {parts.total:,} tokens)."
        )
    if result["compactions_lost"]:
        n = len(result["compactions_lost"])
        show_losses(result["compactions_lost"], f"{n} compaction(s) recorded; what each removed:")
    out.print(_category_table(parts))
    if parts.tool_results_by_tool:
        out.print(_tool_table(parts))
    out.print(_largest_table(result["largest_messages"]))
    _show_problems(result)


def _replacement_text(sent: dict[str, Any]) -> str:
    """What stood for the compacted context in the sent one, in words."""
    if sent["replacement_messages"] == 1 and sent["summary"] == "read":
        return "its summary"
    unread = {"encrypted": " and an encrypted summary, not counted", "absent": ", no summary"}
    n = sent["replacement_messages"]
    replaced = f"its replacement ({n} message{'' if n == 1 else 's'}"
    return f"{replaced}{unread.get(sent['summary'], '')})"


def _cost_text(cost: dict[str, Any]) -> str:
    """The recorded cost in words; a model without a price is named, never billed $0.00."""
    unpriced = ", ".join(cost["unpriced_models"])
    if not cost["by_model"]:
        return (
            f"no price for {unpriced} in the {cost['prices_date']} price table "
            f"({cost['requests']} requests recorded)"
        )
    priced = ", ".join(cost["by_model"])
    text = (
        f"[bold]${cost['cost_usd']:,.2f}[/] over {cost['requests']} requests at "
        f"{cost['prices_date']} prices"
    )
    return f"{text} for {priced} only; no price for {unpriced}" if unpriced else text


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
    for column in ("index", "role", "tokens"):
        table.add_column(column, justify="left" if column == "role" else "right", no_wrap=True)
    table.add_column("preview", overflow="fold", ratio=1)
    for item in largest:
        preview = shown(item["preview"])
        table.add_row(str(item["index"]), item["role"], f"{item['tokens']:,}", preview)
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
            what = str(item.get("message") or item.get("action"))
            out.print(f"  {where}: {printable(what)}", markup=False)
        if len(items) > MAX_LISTED:
            out.print(f"  … and {len(items) - MAX_LISTED} more (see --json)")
    if not result["violations"]:
        out.print("[green]The loaded view passes every API rule.[/]")
