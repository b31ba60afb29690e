"""``contextwarden compact FILE -o OUT``: compact a saved session once and write the result."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from contextwarden.breakdown import breakdown
from contextwarden.cli.common import (
    EXIT_RUNTIME,
    add_counter_option,
    add_input_options,
    add_json_options,
    console,
    make_counter,
    output_file,
    positive_float,
    positive_int,
    print_json,
    progress_enabled,
    shown,
    status,
)
from contextwarden.cli.losses import show_losses
from contextwarden.cli.sessions import load_input
from contextwarden.errors import UsageError
from contextwarden.fileio import write_atomically
from contextwarden.formats.claude_code import NAME
from contextwarden.formats.openai import tools_to_openai
from contextwarden.history import ConversationHistory
from contextwarden.manager import CompactionReport, ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.base import Summarizer
from contextwarden.tokens.base import TokenCounter

WRITABLE = ("anthropic", "openai", "claude-code")
"""Formats ``compact`` writes; which one a run writes: ``output_format``."""
FALLBACK_FORMAT = "anthropic"
STORE_FORMATS = "contextwarden-"
"""``LoadReport.format`` of sessions read from a store (``contextwarden-sqlite``, …)."""
JSONL_FORMAT = "claude-code"
"""The one writable format that is JSON Lines; the others are one JSON object."""
SUMMARIZERS = ("structured", "anthropic", "openai")
API_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
DEFAULT_WINDOW = 200_000


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "compact",
        help="compact a saved session once (summary + recent turns) and write it out",
        description=(
            "Load a saved session, run a manual compaction (/compact) and write the result in "
            "the same format, or in the one --to names."
        ),
    )
    add_input_options(parser)
    parser.add_argument(
        "-o",
        "--output",
        type=output_file,
        required=True,
        help="where to write (its directory must exist)",
    )
    parser.add_argument(
        "--to",
        choices=WRITABLE,
        help=f"output format (default: {JSONL_FORMAT} for a .jsonl name; for a .json name the "
        f"input's JSON format or {FALLBACK_FORMAT}; else the input's, or {FALLBACK_FORMAT})",
    )
    parser.add_argument(
        "--summarizer",
        choices=SUMMARIZERS,
        default="structured",
        help="structured (offline, default) or an LLM API",
    )
    parser.add_argument("--instructions", help="what the summary should focus on")
    parser.add_argument(
        "--window",
        type=positive_int,
        default=DEFAULT_WINDOW,
        help=f"context window in tokens (default {DEFAULT_WINDOW:,})",
    )
    parser.add_argument("--model", help="model for --summarizer anthropic/openai")
    parser.add_argument("--base-url", help="API base URL (proxies, vLLM, llama.cpp, Ollama…)")
    parser.add_argument(
        "--timeout", type=positive_float, default=60.0, help="seconds per LLM request"
    )
    add_counter_option(parser)
    add_json_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compact and write; exit 1 (after writing and saying so) when the result is still larger
    than the effective window, since a request built from it would fail."""
    if isinstance(args.file, Path) and args.output.resolve() == args.file.resolve():
        raise UsageError(f"{args.output}: refusing to write over the input; choose another -o path")
    summarizer = make_summarizer(args)
    counter = make_counter(args.counter)
    with status(f"Loading {args.file}…", enabled=progress_enabled(args)):
        history = load_input(args, counter)
    source_format = history.source.format if history.source else FALLBACK_FORMAT
    target = output_format(args.to, source_format, args.output)
    policy = ContextPolicy(context_window=args.window)
    manager = ContextManager(policy, summarizer)
    with status("Compacting…", enabled=progress_enabled(args)):
        report = manager.compact(history, instructions=args.instructions)
    write(history, target, args.output, session_id=args.session)
    result = _summary(args, source_format, target, report, policy.effective_window)
    result["not_written"] = _not_written(history, target, counter)
    if args.json:
        print_json(result, args)
    else:
        _show(result)
    return EXIT_RUNTIME if result["over_window"] else 0


def output_format(wanted: str | None, source_format: str, output: Path) -> str:
    """``--to``, else the format the output's name asks for (``.jsonl``: Claude Code; ``.json``:
    the input's JSON format, or Anthropic), else the input's when we can write it, else
    Anthropic. A name that says JSONL for one JSON object, or JSON for JSONL, is refused, and so
    is any other name (``out.md``) for an input we cannot write back."""
    suffix = output.suffix.lower()
    if wanted is None:
        if suffix == ".jsonl":
            wanted = JSONL_FORMAT
        elif source_format in WRITABLE and (suffix, source_format) != (".json", JSONL_FORMAT):
            wanted = source_format
        elif suffix in ("", ".json"):
            wanted = FALLBACK_FORMAT
        else:
            raise UsageError(
                f"{output}: {source_format} files cannot be written back, and compact writes "
                f"JSON ({', '.join(f for f in WRITABLE if f != JSONL_FORMAT)}) or JSON Lines "
                f"({JSONL_FORMAT}), not what a {suffix} name promises; name the output *.json "
                "or *.jsonl, or choose --to"
            )
    lines = wanted == JSONL_FORMAT
    if (suffix == ".jsonl" and not lines) or (suffix == ".json" and lines):
        kind = "JSON Lines" if lines else "one JSON object"
        fits = ".jsonl" if lines else ".json"
        other = [f"--to {f}" for f in WRITABLE if (f == JSONL_FORMAT) == (suffix == ".jsonl")]
        raise UsageError(
            f"{output}: {wanted} output is {kind}, not what a {suffix} name promises; "
            f"name the output *{fits}, or choose {' or '.join(other)}"
        )
    return wanted


def make_summarizer(args: argparse.Namespace) -> Summarizer | None:
    """The summarizer ``--summarizer`` names (``None``: the manager's offline default)."""
    if args.summarizer == "structured":
        return None
    if not args.model:
        raise UsageError(f"--summarizer {args.summarizer} needs --model")
    env = API_KEY_ENV[args.summarizer]
    key = os.environ.get(env)
    if not key:
        raise UsageError(
            f"--summarizer {args.summarizer} reads its API key from {env}; set it (any value for "
            "a local server that checks none)"
        )
    options: dict[str, Any] = {"base_url": args.base_url, "api_key": key, "timeout": args.timeout}
    if args.summarizer == "anthropic":
        from contextwarden.summarizers.anthropic import AnthropicSummarizer

        return AnthropicSummarizer(args.model, **options)
    from contextwarden.summarizers.openai import OpenAISummarizer

    return OpenAISummarizer(args.model, **options)


def write(
    history: ConversationHistory, target: str, path: Path, *, session_id: str | None = None
) -> None:
    """Write the compacted session: the view (Anthropic, OpenAI) or the whole log (Claude Code,
    as ``session_id``: the store's, else the file's own, else the output's name)."""
    if target == "claude-code":
        from contextwarden.stores.claude_code_writer import prior_compactions, write_claude_code

        source = history.source
        prior = prior_compactions(source.metadata) if source and source.format == NAME else ()
        write_claude_code(
            history.log,
            path,
            session_id=session_id or _session_id(history, path),
            prior_compactions=prior,
        )
        return
    if target == "openai":
        body: dict[str, Any] = {"messages": history.to_openai()}
        if history.tools:
            body["tools"] = tools_to_openai(history.tools)
    else:
        body = history.to_anthropic()
    write_atomically(path, json.dumps(body, ensure_ascii=False, indent=2) + "\n")


def _not_written(
    history: ConversationHistory, target: str, counter: TokenCounter
) -> dict[str, int] | None:
    """What the output format has no place for: OpenAI chat messages carry no thinking."""
    if target != "openai":
        return None
    thinking = breakdown(history.messages, counter, largest=0).by_category["thinking"]
    return {"thinking_tokens": thinking} if thinking else None


def _session_id(history: ConversationHistory, path: Path) -> str:
    metadata = history.source.metadata if history.source else {}
    found = metadata.get("session_id") or metadata.get("sessionId")
    return found if isinstance(found, str) and found else path.stem


def _summary(
    args: argparse.Namespace,
    source_format: str,
    target: str,
    report: CompactionReport,
    effective_window: int,
) -> dict[str, Any]:
    note = None
    if args.to is None and target != source_format:
        if source_format in WRITABLE:
            why = f"a {args.output.suffix} name asks for {target}"
        elif source_format.startswith(STORE_FORMATS):
            why = "a session from a store has no file format of its own"
        else:
            why = f"{source_format} files cannot be written back"
        note = f"{why}; wrote {target} instead (see --to)"
    return {
        "file": str(args.file),
        "format": source_format,
        "output": str(args.output),
        "output_format": target,
        "summarizer": args.summarizer,
        "compacted": report.compacted,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "messages_before": report.messages_before,
        "messages_after": report.messages_after,
        "window": args.window,
        "effective_window": effective_window,
        "over_window": report.tokens_after > effective_window,
        "seconds": round(report.seconds, 4),
        "actions": [
            {
                "name": a.name,
                "applied": a.applied,
                "tokens_before": a.tokens_before,
                "tokens_after": a.tokens_after,
                "description": a.description,
            }
            for a in report.actions
        ],
        "note": note,
        "lost": report.lost.as_json(),
    }


def _show(result: dict[str, Any]) -> None:
    out = console()
    before, after = result["tokens_before"], result["tokens_after"]
    saved = f" ({1 - after / before:.0%} fewer)" if before and result["compacted"] else ""
    out.print(
        f"[bold]{shown(result['file'])}[/] ({result['format']}): {before:,} → [bold]{after:,}[/] "
        f"tokens{saved}, {result['messages_before']:,} → {result['messages_after']:,} messages"
    )
    for action in result["actions"]:
        mark = "[green]✓[/]" if action["applied"] else "[dim]·[/]"
        out.print(f"  {mark} {action['name']}: {shown(action['description'])}")
    if not result["compacted"]:
        out.print("[yellow]Nothing was compacted; the session was written unchanged.[/]")
    if result["lost"]["items"]:
        applied = "+".join(a["name"] for a in result["actions"] if a["applied"])
        lost = [{"strategy": applied, "trigger": "manual", "lost": result["lost"]}]
        show_losses(lost, "What left the context (the input file still holds all of it):")
    if result["over_window"]:
        out.print(
            f"[red]Still over the window: {after:,} tokens > {result['effective_window']:,} "
            f"(window {result['window']:,} less the reply reserve); a request built from this "
            "would fail. Written anyway; try a larger --window or another summarizer.[/]"
        )
    if result["note"]:
        out.print(f"[yellow]{shown(result['note'])}[/]")
    if result["not_written"]:
        out.print(
            f"[yellow]OpenAI chat messages have no place for thinking: "
            f"{result['not_written']['thinking_tokens']:,} tokens of thinking were not written.[/]"
        )
    out.print(f"Wrote [bold]{shown(str(result['output']))}[/] ({result['output_format']})")
