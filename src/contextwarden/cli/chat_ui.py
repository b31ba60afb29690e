"""What ``contextwarden chat`` shows: the streamed reply, tool calls and results, compaction
notices, the confirmation question, and the ``/context`` and ``/cost`` tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from contextwarden.agent.tools import Call, Outcome
from contextwarden.breakdown import CATEGORIES, breakdown
from contextwarden.cli.common import bar, console
from contextwarden.compaction.apply import CompactionReport
from contextwarden.compaction.loss import CONTENT_KINDS, log_losses
from contextwarden.cost.bill import recorded_usage
from contextwarden.cost.cache import Usage
from contextwarden.cost.prices import default_prices
from contextwarden.history import ConversationHistory
from contextwarden.log import UsageRecorded
from contextwarden.manager import ContextManager

__all__ = ["ConsoleUI", "context_table", "cost_table"]

PREVIEW_LINES = 12
"""Lines of a tool result shown on screen (the model gets the whole result)."""
PREVIEW_CHARS = 160
"""Characters of a tool call's input shown in the one-line notice of the call."""
MAX_APPROVAL_CHARS = 100_000
"""Longest tool input shown whole for approval; a longer one is declined without running."""
SUMMARY_RUNGS = frozenset({"summarize", "truncate"})


class ConsoleUI:
    """The agent's UI on a terminal; ``ask`` reads one answer (None: no one to ask)."""

    def __init__(self, ask: Callable[[str], str | None], *, quiet: bool = False) -> None:
        self.ask = ask
        self.quiet = quiet
        self._streaming = False

    def text(self, delta: str) -> None:
        if self.quiet:
            return
        sys.stdout.write(delta)
        sys.stdout.flush()
        self._streaming = True

    def end_reply(self) -> None:
        if self._streaming:
            sys.stdout.write("\n")
            sys.stdout.flush()
        self._streaming = False

    def tool(self, call: Call) -> None:
        if not self.quiet:
            console().print(f"[bold cyan]⏺ {call.name}[/]({escape(_args(call))})")

    def result(self, call: Call, outcome: Outcome) -> None:
        if self.quiet:
            return
        lines = outcome.text.splitlines() or [""]
        shown = "\n".join(f"  ⎿ {escape(line)}" for line in lines[:PREVIEW_LINES])
        more = len(lines) - PREVIEW_LINES
        style = "red" if outcome.is_error else "dim"
        console().print(
            f"[{style}]{shown}[/]" + (f"\n  [dim]… {more} more lines[/]" if more > 0 else "")
        )

    def compaction(self, report: CompactionReport) -> None:
        """A notice for every compaction: a line for a summary, a dim one for lighter rungs; on
        stderr when quiet (``-p``), so the answer alone is on stdout."""
        out = _stderr() if self.quiet else console()
        applied = set(report.applied)
        sizes = f"{report.tokens_before:,} → {report.tokens_after:,} tokens"
        if applied & SUMMARY_RUNGS:
            kinds = ", ".join(sorted(applied & SUMMARY_RUNGS))
            out.print(f"[bold yellow]Compacting conversation… {sizes} ({kinds})[/]")
        else:
            out.print(f"[dim]· context trimmed ({', '.join(report.applied)}): {sizes}[/]")
        if report.lost:
            facts = len(report.lost.items) - len(report.lost.of(*CONTENT_KINDS))
            out.print(f"[dim]  {len(report.lost.items)} item(s) left the context ({facts} "
                      "fact(s) no longer in it); /context lists them[/]")  # fmt: skip

    def confirm(self, call: Call) -> bool:
        """Show the call's whole input, then ask; an input too long to read is declined."""
        shown = approval_text(call)
        if shown is None:
            console().print(
                f"[yellow]{call.name} not run: its input is longer than {MAX_APPROVAL_CHARS:,} "
                "characters, too long to show whole for approval[/]"
            )
            return False
        console().print(Text(f"{call.name} wants to run:\n{shown}", style="bold"))
        answer = self.ask(f"Allow {call.name}? [y/N] ")
        if answer is None:
            console().print(f"[yellow]{call.name} not run: no one to confirm it (use --yes)[/]")
            return False
        return answer.strip().lower() in ("y", "yes")


@cache
def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _args(call: Call) -> str:
    """A one-line preview of the input (not for approval: ``approval_text`` shows it whole)."""
    text = visible(json.dumps(dict(call.input), ensure_ascii=False, default=str))
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def approval_text(call: Call) -> str | None:
    """Every argument of ``call`` on its own lines, whole, with nothing a terminal would hide or
    move (control, format and invisible characters are written as escapes); None when the input
    is too long to be read before approving it."""
    lines = []
    for name, value in call.input.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"  {visible(str(name))}: " + "\n    ".join(map(visible, text.split("\n"))))
    shown = "\n".join(lines)
    return shown if len(shown) <= MAX_APPROVAL_CHARS else None


def visible(text: str) -> str:
    """``text`` with every character a terminal would not print as itself (escape, carriage
    return, bidi overrides, zero-width spaces …) written as ``⟨U+001B⟩``, so what is shown is what
    runs. A tab stays a tab: it moves the cursor but hides nothing."""
    return "".join(c if c.isprintable() or c == "\t" else f"⟨U+{ord(c):04X}⟩" for c in text)


def context_table(history: ConversationHistory, manager: ContextManager) -> Table:
    """Where the context's tokens go, the free space and the thresholds (``/context``)."""
    policy = manager.policy
    parts = breakdown(history.messages, history.counter, system=history.system, tools=history.tools)
    window = policy.context_window
    table = Table(title=f"Context: {history.estimate_tokens():,} of {window:,} tokens")
    table.add_column("part")
    table.add_column("tokens", justify="right")
    table.add_column("share", justify="right")
    table.add_column("")
    for name in CATEGORIES:
        tokens = parts.by_category.get(name, 0)
        if tokens:
            table.add_row(name, f"{tokens:,}", f"{tokens / window:.1%}", bar(tokens / window))
    free = max(window - history.estimate_tokens(), 0)
    table.add_row("free space", f"{free:,}", f"{free / window:.1%}", bar(free / window))
    table.add_section()
    for label, value in (
        ("warning at", policy.warning_threshold),
        ("autocompact at", policy.autocompact_threshold),
        ("effective window", policy.effective_window),
    ):
        table.add_row(label, f"{value:,}", f"{value / window:.0%}", "")
    return table


LOST_SHOWN = 15
"""Items of the last compaction's loss report ``/context`` lists (the rest are counted)."""


def lost_table(history: ConversationHistory) -> Table | None:
    """What the last compaction took out of the context, item by item, with the ids the model
    (or ``recall``) gets each back by; None before any compaction."""
    recorded = log_losses(history.log, history.counter)
    if not recorded:
        return None
    boundary, lost = recorded[-1]
    table = Table(
        title=f"Last compaction ({boundary.strategy}, {boundary.trigger}) removed "
        f"{lost.tokens:,} tokens; the recall tool brings back any id below"
    )
    for column in ("kind", "tokens", "what", "recall id"):
        table.add_column(column, justify="right" if column == "tokens" else "left")
    for item in lost.items[:LOST_SHOWN]:
        table.add_row(item.kind, f"{item.tokens:,}", escape(item.what), ", ".join(item.refs[:2]))
    if len(lost.items) > LOST_SHOWN:
        table.add_row("…", "", f"{len(lost.items) - LOST_SHOWN} more", "")
    return table


def cost_table(history: ConversationHistory, model: str) -> Table:
    """What the session's requests reported (``/cost``): input by how it was billed (uncached,
    cache reads, cache writes) and output, and their cost at ``model``'s price when known."""
    usages = [recorded_usage(e.raw) for e in history.log if isinstance(e, UsageRecorded)]
    total = sum(usages, Usage())
    prices = default_prices()
    price = prices.find(model)
    title = f"Usage over {len(usages)} model requests"
    if price is not None:
        title += f": ${total.cost(price):,.4f} at {model}'s prices"
    else:
        title += f"; no cost: no price for {model} in the {prices.date} price table"
    table = Table(title=title)
    table.add_column("tokens")
    table.add_column("", justify="right")
    for label, value in (
        ("input, uncached", total.uncached),
        ("input, cache reads", total.cache_read),
        ("input, cache writes", total.cache_write),
        ("output", total.output),
    ):
        table.add_row(label, f"{value:,}")
    return table


def show(renderable: Any) -> None:
    console().print(renderable)
