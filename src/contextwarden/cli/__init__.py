"""The contextwarden command line: one module per subcommand, each adding its own parser.

Every subcommand runs through ``common.run_command``: errors are one line on stderr, exit 2 for a
command line that cannot be carried out, 1 for a failure while running, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from contextwarden import __version__
from contextwarden.cli import chat_cmd, compact_cmd, demo_cmd, inspect_cmd, proxy_cmd, replay_cmd
from contextwarden.cli.common import PROG, Parser, run_command

COMMANDS = (inspect_cmd, compact_cmd, replay_cmd, demo_cmd, proxy_cmd, chat_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Inspect, compact and replay LLM agent sessions.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


QUIET_LOGGERS = ("psycopg.pool",)
"""Libraries whose warnings would reach the terminal through logging's last resort: the
connection pool warns of every failed attempt before the store's one-line error says why."""


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``contextwarden`` console script."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).addHandler(logging.NullHandler())
    args = build_parser().parse_args(argv)
    raise SystemExit(run_command(lambda: int(args.run(args))))
