"""What every subcommand shares: the parser and its validators, the one error wrapper, the
console, progress on stderr, JSON output, counter choice, format names, bars."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.markup import escape

from contextwarden.errors import ContextWardenError, FormatError, UsageError
from contextwarden.formats import FORMATS
from contextwarden.stores.postgres import DEFAULT_SCHEMA
from contextwarden.tokens.base import TokenCounter

FORMAT_CHOICES = ("auto", *FORMATS)
COUNTER_CHOICES = ("heuristic", "o200k", "cl100k")
BAR_WIDTH = 24

EXIT_RUNTIME = 1
"""The command ran and failed (unreadable input, a write that failed, a result over the window)."""
EXIT_USAGE = 2
"""The command line asks for something impossible (bad option value, a directory as the file)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report SIGINT."""
PROG = "contextwarden"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``contextwarden compact: error: …`` and exit 2, no usage
    block (``--help`` shows that). Subparsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def run_command(command: Callable[[], int]) -> int:
    """Run one subcommand and turn every expected failure into one line on stderr and an exit
    code; every command, present and future, goes through here (see ``cli.main``)."""
    try:
        return command()
    except (UsageError, FormatError) as exc:  # a command line or an input file that cannot be used
        return _fail(str(exc), EXIT_USAGE)
    except ContextWardenError as exc:
        return _fail(str(exc), EXIT_RUNTIME)
    except BrokenPipeError:
        # The reader (``| head -1``) took what it wanted and left: nothing failed, nothing more
        # to say, nowhere to say it; exit 0 as with ``--json``, so ``set -o pipefail`` passes.
        _silence_stdout()
        return 0
    except OSError as exc:
        return _fail(os_error_text(exc), EXIT_RUNTIME)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)


def _fail(message: str, code: int) -> int:
    first = " ".join(message.split())  # one line, whatever the message holds
    print(f"{PROG}: error: {first}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def os_error_text(exc: OSError) -> str:
    """``path: reason`` for an OSError (``out.json: Permission denied``)."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason


# ----------------------------------------------------------------------------- argument types
def _number(text: str, kind: type[int] | type[float]) -> int | float:
    cleaned = text.strip().replace("_", "").replace(",", "")
    try:
        return kind(cleaned)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None


def positive_int(text: str) -> int:
    """An int > 0 (``200000``, ``200_000`` and ``200,000`` all read)."""
    value = int(_number(text, int))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def positive_float(text: str) -> float:
    value = float(_number(text, float))
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number greater than 0, got {text!r}")
    return value


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe); sessions are read twice (to detect the format, then to load)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def input_file(text: str) -> Path:
    """An existing regular file: a directory, FIFO or device says what it is."""
    path = Path(text)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"{text}: no such file") from None
    except OSError as exc:
        raise argparse.ArgumentTypeError(os_error_text(exc)) from None
    kind = _kind(mode)
    if kind is not None:
        raise argparse.ArgumentTypeError(f"{text} is {kind}, not a session file")
    return path


DSN_PREFIXES = ("postgresql://", "postgres://")
"""An input that starts so is a PostgreSQL store's DSN, kept as text (a Path would fold its
``//``)."""


def input_path(text: str) -> Path | str:
    """A session file, or a session store: a SQLite file, a JSONL store's directory, or a
    PostgreSQL DSN (returned as text)."""
    if text.startswith(DSN_PREFIXES):
        return text
    path = Path(text)
    return path if path.is_dir() else input_file(text)


def output_file(text: str) -> Path:
    """A file to write: its directory must exist (nothing is created), and it is not a directory
    itself; whether it can be written shows when writing."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file path, got an empty string")
    try:
        kind = _kind(path.stat().st_mode)
    except OSError:
        kind = None  # does not exist yet (or cannot be looked at): the write will say
    if kind is not None:
        hint = "; give a file path inside it" if path.is_dir() else ", not a file to write"
        raise argparse.ArgumentTypeError(f"{text} is {kind}{hint}")
    parent = path.parent
    if not parent.exists():
        raise argparse.ArgumentTypeError(f"{text}: directory {parent} does not exist")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {parent} is not a directory")
    return path


def existing_dir(text: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such directory")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a directory")
    return path


# ----------------------------------------------------------------------------- output
class _Console(Console):
    """rich's console, except that a reader leaving (``| head -1``) is what it is with
    ``--json`` too: a BrokenPipeError for ``run_command`` (exit 0), not rich's exit 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


@cache
def console() -> Console:
    return _Console(highlight=False)


_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}
del _CONTROLS[ord("\n")], _CONTROLS[ord("\t")]
"""What a terminal would act on rather than show: a tool's ANSI colours (ESC), a bell, a
carriage return that overwrites the line. Shown as the escape that names the character."""


def printable(text: str) -> str:
    """``text`` from a session file with its control characters written out (``\\x1b``), so
    a CI log's colours or a carriage return are printed as they were written, never obeyed."""
    return text.translate(_CONTROLS)


def shown(text: str) -> str:
    """``text`` from a session file, ready for markup: ``printable`` and its brackets escaped,
    so a message quoting ``[bold]`` or ``[/]`` reads as written (a stray closing tag made rich
    raise, an opening one vanished)."""
    return escape(printable(text))


def add_json_options(parser: argparse.ArgumentParser, what: str = "print one JSON object") -> None:
    """``--json`` (one line, for line tools: ``| jq``, ``| head -1``) and ``--pretty``."""
    parser.add_argument("--json", action="store_true", help=f"{what}, on one line")
    parser.add_argument("--pretty", action="store_true", help="with --json: indented, for people")


def print_json(value: Any, args: argparse.Namespace) -> None:
    """``value`` as one line of JSON, or indented under ``--pretty``."""
    indent = 2 if getattr(args, "pretty", False) else None
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()  # a closed pipe fails here, inside run_command, not at exit


def progress_enabled(args: argparse.Namespace) -> bool:
    """Progress goes to stderr, and only to a terminal, never under ``--json``."""
    return not getattr(args, "json", False) and sys.stderr.isatty()


@contextmanager
def status(message: str, *, enabled: bool) -> Iterator[None]:
    """A spinner on stderr while a long step (loading a large file, building a session) runs."""
    if not enabled:
        yield
        return
    with Console(stderr=True).status(message):
        yield


def add_counter_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--counter",
        default="heuristic",
        choices=COUNTER_CHOICES,
        help="token counter: fast heuristic (default) or exact tiktoken encodings",
    )


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """The session file or store and how to read it (``inspect``, ``compact``, ``replay``)."""
    parser.add_argument(
        "file",
        type=input_path,
        metavar="FILE",
        help="session file (JSONL, JSON, .traj, .md, OpenCode's .db or storage folder), or a "
        "session store (the SQLite file, JSONL directory or postgresql:// DSN of "
        "`contextwarden proxy`/`chat`) with --session",
    )
    parser.add_argument(
        "--schema",
        default=DEFAULT_SCHEMA,
        help=f"PostgreSQL schema of a postgresql:// store (default: {DEFAULT_SCHEMA})",
    )
    parser.add_argument(
        "--session", metavar="ID", help="the session of a store to read (see `inspect STORE`)"
    )
    parser.add_argument("--format", default="auto", choices=FORMAT_CHOICES, help="input format")
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="keep whatever could be read from a file that is mostly not in the format "
        "(by default such a file is an error; a file with no readable message always is)",
    )
    parser.add_argument(
        "--index",
        type=non_negative_int,
        default=0,
        help="conversation in files that hold several (OpenHands output.jsonl, Aider history, "
        "OpenCode's database)",
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
