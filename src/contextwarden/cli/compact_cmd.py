"""``contextwarden compact FILE -o OUT``: compact a saved session once and write the result."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from contextwarden.cli.common import (
    FORMAT_CHOICES,
    add_counter_option,
    add_lenient_option,
    console,
    make_counter,
    print_json,
)
from contextwarden.errors import ContextWardenError
from contextwarden.formats import load
from contextwarden.formats.openai import tools_to_openai
from contextwarden.history import ConversationHistory
from contextwarden.manager import CompactionReport, ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.base import Summarizer

WRITABLE = ("anthropic", "openai", "claude-code")
"""Formats ``compact`` writes; a session read from any other is written as Anthropic JSON."""
FALLBACK_FORMAT = "anthropic"
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
    parser.add_argument("file", type=Path, help="session file (JSONL, JSON, .traj)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="where to write")
    parser.add_argument("--format", default="auto", choices=FORMAT_CHOICES, help="input format")
    add_lenient_option(parser)
    parser.add_argument("--index", type=int, default=0, help="conversation in multi-run files")
    parser.add_argument(
        "--to",
        choices=WRITABLE,
        help="output format (default: the input's, "
        f"or {FALLBACK_FORMAT} for formats we cannot write)",
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
        type=int,
        default=DEFAULT_WINDOW,
        help=f"context window in tokens (default {DEFAULT_WINDOW:,})",
    )
    parser.add_argument("--model", help="model for --summarizer anthropic/openai")
    parser.add_argument("--base-url", help="API base URL (proxies, vLLM, llama.cpp, Ollama…)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per LLM request")
    add_counter_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.output.resolve() == args.file.resolve():
        raise ContextWardenError(
            f"{args.output}: refusing to write over the input; choose another -o path"
        )
    counter = make_counter(args.counter)
    history = load(args.file, args.format, index=args.index, counter=counter, lenient=args.lenient)
    source_format = history.source.format if history.source else FALLBACK_FORMAT
    target = args.to or (source_format if source_format in WRITABLE else FALLBACK_FORMAT)
    summarizer = make_summarizer(args)
    manager = ContextManager(ContextPolicy(context_window=args.window), summarizer)
    report = manager.compact(history, instructions=args.instructions)
    write(history, target, args.output)
    result = _summary(args, source_format, target, report)
    if args.json:
        print_json(result)
    else:
        _show(result)
    return 0


def make_summarizer(args: argparse.Namespace) -> Summarizer | None:
    """The summarizer ``--summarizer`` names (``None``: the manager's offline default)."""
    if args.summarizer == "structured":
        return None
    if not args.model:
        raise ContextWardenError(f"--summarizer {args.summarizer} needs --model")
    env = API_KEY_ENV[args.summarizer]
    key = os.environ.get(env)
    if not key:
        raise ContextWardenError(
            f"--summarizer {args.summarizer} reads its API key from {env}; set it (any value for "
            "a local server that checks none)"
        )
    options: dict[str, Any] = {"base_url": args.base_url, "api_key": key, "timeout": args.timeout}
    if args.summarizer == "anthropic":
        from contextwarden.summarizers.anthropic import AnthropicSummarizer

        return AnthropicSummarizer(args.model, **options)
    from contextwarden.summarizers.openai import OpenAISummarizer

    return OpenAISummarizer(args.model, **options)


def write(history: ConversationHistory, target: str, path: Path) -> None:
    """Write the compacted session: the view (Anthropic, OpenAI) or the whole log (Claude Code)."""
    if target == "claude-code":
        from contextwarden.stores.claude_code_writer import write_claude_code

        write_claude_code(history.log, path, session_id=_session_id(history, path))
        return
    if target == "openai":
        body: dict[str, Any] = {"messages": history.to_openai()}
        if history.tools:
            body["tools"] = tools_to_openai(history.tools)
    else:
        body = history.to_anthropic()
    _write_atomically(path, json.dumps(body, ensure_ascii=False, indent=2) + "\n")


def _session_id(history: ConversationHistory, path: Path) -> str:
    metadata = history.source.metadata if history.source else {}
    found = metadata.get("session_id") or metadata.get("sessionId")
    return found if isinstance(found, str) and found else path.stem


def _write_atomically(path: Path, text: str) -> None:
    """A temporary file renamed over ``path``: a failed write never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _summary(
    args: argparse.Namespace, source_format: str, target: str, report: CompactionReport
) -> dict[str, Any]:
    note = None
    if args.to is None and target != source_format:
        note = f"{source_format} files cannot be written back; wrote {target} instead (see --to)"
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
    }


def _show(result: dict[str, Any]) -> None:
    out = console()
    before, after = result["tokens_before"], result["tokens_after"]
    saved = f" ({1 - after / before:.0%} fewer)" if before and result["compacted"] else ""
    out.print(
        f"[bold]{result['file']}[/] ({result['format']}): {before:,} → [bold]{after:,}[/] tokens"
        f"{saved}, {result['messages_before']:,} → {result['messages_after']:,} messages"
    )
    for action in result["actions"]:
        mark = "[green]✓[/]" if action["applied"] else "[dim]·[/]"
        out.print(f"  {mark} {action['name']}: {action['description']}")
    if not result["compacted"]:
        out.print("[yellow]Nothing was compacted; the session was written unchanged.[/]")
    if result["note"]:
        out.print(f"[yellow]{result['note']}[/]")
    out.print(f"Wrote [bold]{result['output']}[/] ({result['output_format']})")
