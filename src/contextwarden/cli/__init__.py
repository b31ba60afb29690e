"""The contextwarden command line: one module per subcommand, each adding its own parser."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from contextwarden.cli import chat_cmd, compact_cmd, demo_cmd, inspect_cmd, replay_cmd
from contextwarden.errors import ContextWardenError

COMMANDS = (inspect_cmd, compact_cmd, replay_cmd, demo_cmd, chat_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contextwarden",
        description="Inspect, compact and replay LLM agent sessions.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``contextwarden`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.run(args)
    except ContextWardenError as exc:
        print(f"contextwarden: error: {exc}", file=sys.stderr)
        code = 2
    except FileNotFoundError as exc:
        print(f"contextwarden: error: {exc.filename}: no such file", file=sys.stderr)
        code = 2
    raise SystemExit(code)
