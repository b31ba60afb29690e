"""What every subcommand shares: the console, JSON output, counter choice, format names, bars."""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from typing import Any

from rich.console import Console

from contextwarden.formats import FORMATS
from contextwarden.tokens.base import TokenCounter

FORMAT_CHOICES = ("auto", *FORMATS)
COUNTER_CHOICES = ("heuristic", "o200k", "cl100k")
BAR_WIDTH = 24


@cache
def console() -> Console:
    return Console(highlight=False)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def add_counter_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--counter",
        default="heuristic",
        choices=COUNTER_CHOICES,
        help="token counter: fast heuristic (default) or exact tiktoken encodings",
    )


def add_lenient_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="keep whatever could be read from a file that is mostly not in the format "
        "(by default such a file is an error)",
    )


def make_counter(name: str) -> TokenCounter:
    from contextwarden.tokens.exact import TiktokenCounter
    from contextwarden.tokens.heuristic import HeuristicCounter

    if name == "heuristic":
        return HeuristicCounter()
    return TiktokenCounter(f"{name}_base")


def bar(share: float) -> str:
    filled = round(max(0.0, min(1.0, share)) * BAR_WIDTH)
    return "█" * filled + "·" * (BAR_WIDTH - filled)
