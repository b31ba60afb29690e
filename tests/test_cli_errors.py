"""Every command against a catalogue of bad arguments and inputs: exit 2 for a command line that
cannot be carried out, 1 for a failure while running, one line on stderr, never a traceback.

A new command joins by adding one row to ``COMMANDS`` (how to call it on a good input); the bad
values for every option it shares with the others (``--window``, ``--timeout``, ``-o``…) are
found from its parser and tried automatically.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import fixture_path

from contextwarden.cli import build_parser, main
from contextwarden.cli.common import EXIT_INTERRUPTED, EXIT_RUNTIME, EXIT_USAGE, run_command

SESSION = fixture_path("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl")
BROKEN_PIPE_TIMEOUT = 300

COMMANDS: dict[str, tuple[str, ...]] = {
    "inspect": ("inspect", "{file}"),
    "compact": ("compact", "{file}", "-o", "{out}"),
    "replay": ("replay", "{file}", "--window", "8000"),
    "demo": ("demo", "--dir", "{project}", "--no-report", "--strategy", "none"),
}
"""Each command called on a good input; ``{file}`` is the session argument."""

BAD_NUMBERS: dict[str, tuple[str, ...]] = {
    "--window": ("abc", "0", "-5", "12k", ""),
    "--timeout": ("-1", "0", "abc", "nan", "inf"),
    "--index": ("-1", "x", "1.5"),
    "--top": ("0", "-3", "many"),
    "--mask-keep": ("-1", "some"),
}
"""Values each numeric option must refuse with a clean message (never ``invalid int value``)."""


@dataclass(frozen=True)
class Case:
    """One bad call: the arguments, the exit code it must give, a phrase the error must hold."""

    argv: tuple[str, ...]
    code: int
    says: str

    @property
    def id(self) -> str:
        return " ".join(a.rsplit("/", 1)[-1] for a in self.argv)[:80]


@dataclass(frozen=True)
class Places:
    """Real things on disk to point arguments at."""

    file: Path
    out: Path
    project: Path
    directory: Path
    fifo: Path
    empty: Path
    binary: Path
    missing: Path
    no_dir: Path
    unwritable: Path


@pytest.fixture
def places(tmp_path: Path) -> Places:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    directory = tmp_path / "a-directory"
    directory.mkdir()
    fifo = tmp_path / "a-fifo"
    os.mkfifo(fifo)
    (empty := tmp_path / "empty.jsonl").write_bytes(b"")
    (binary := tmp_path / "binary.jsonl").write_bytes(bytes(range(256)) * 16)
    return Places(
        file=SESSION,
        out=tmp_path / "out.json",
        project=project,
        directory=directory,
        fifo=fifo,
        empty=empty,
        binary=binary,
        missing=tmp_path / "missing.jsonl",
        no_dir=tmp_path / "no-such-dir" / "out.json",
        unwritable=Path("/proc/contextwarden-out.json"),  # not writable, even for root
    )


def good(command: str, places: Places, **swap: Path) -> list[str]:
    values = {**vars(places), **swap}
    return [part.format(**{k: str(v) for k, v in values.items()}) for part in COMMANDS[command]]


def options(command: str) -> dict[str, argparse.Action]:
    """The option strings of one subcommand, from the real parser."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[command]
    return {s: a for a in parser._actions for s in a.option_strings}


def catalogue(command: str, p: Places) -> Iterator[Case]:
    argv = good(command, p)
    takes = options(command)
    if "{file}" in COMMANDS[command]:
        yield Case(tuple(good(command, p, file=p.missing)), EXIT_USAGE, "no such file")
        yield Case(tuple(good(command, p, file=p.directory)), EXIT_USAGE, "is a directory")
        yield Case(tuple(good(command, p, file=p.fifo)), EXIT_USAGE, "is a FIFO")
        # A file that is not a session of the format is bad input (#10): exit 2, like usage.
        yield Case(tuple(good(command, p, file=p.empty)), EXIT_USAGE, "empty.jsonl")
        yield Case(tuple(good(command, p, file=p.binary)), EXIT_USAGE, "binary.jsonl")
    for option, values in BAD_NUMBERS.items():
        if option in takes:
            for value in values:
                yield Case((*argv, option, value), EXIT_USAGE, f"argument {option}")
    for option in ("-o", "--report"):
        if option in takes:
            yield Case((*argv, option, str(p.directory)), EXIT_USAGE, "is a directory")
            yield Case((*argv, option, str(p.no_dir)), EXIT_USAGE, "does not exist")
            yield Case((*argv, option, "/dev/null"), EXIT_USAGE, "is a device")
            if "--no-report" not in argv:
                yield Case((*argv, option, str(p.unwritable)), EXIT_RUNTIME, str(p.unwritable))
    if "--probes" in takes:
        yield Case((*argv, "--probes", str(p.directory)), EXIT_USAGE, "is a directory")
        yield Case((*argv, "--probes", str(p.binary)), EXIT_USAGE, "binary.jsonl")
    if "--dir" in takes:
        yield Case((*argv, "--dir", str(p.missing)), EXIT_USAGE, "no such directory")
        yield Case((*argv, "--dir", str(p.empty)), EXIT_USAGE, "is not a directory")
    yield Case((*argv, "--no-such-option"), EXIT_USAGE, "unrecognized arguments")


def run(argv: tuple[str, ...] | list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:  # any other exception is a traceback: the test fails
        main(list(argv))
    code = info.value.code
    return (code if isinstance(code, int) else -1), capsys.readouterr().err


def assert_one_line_error(err: str, says: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("contextwarden") and "error: " in lines[0], err
    assert says in lines[0], err
    assert "Traceback" not in err, err
    assert re.search(r"invalid \w+ value", err) is None, err  # argparse's name for a type function


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_bad_call_exits_2_or_1_with_one_line(
    command: str, places: Places, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = list(catalogue(command, places))
    assert len(cases) >= 5
    for case in cases:
        code, err = run(case.argv, capsys)
        assert code == case.code, (case.id, err)
        assert_one_line_error(err, case.says)
        assert not places.no_dir.parent.exists()  # -o into a missing directory creates nothing


def test_numbers_say_what_is_wrong(places: Places, capsys: pytest.CaptureFixture[str]) -> None:
    argv = good("compact", places)
    _, err = run([*argv, "--window", "abc"], capsys)
    assert "argument --window: expected a whole number, got 'abc'" in err
    _, err = run([*argv, "--window", "0"], capsys)
    assert "argument --window: must be greater than 0, got '0'" in err
    _, err = run([*argv, "--timeout", "-1"], capsys)
    assert "argument --timeout: must be a finite number greater than 0" in err
    code, _ = run([*argv, "--window", "200_000", "--json"], capsys)
    assert code == 0  # separators are fine


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    from contextwarden import __version__

    code, _ = run(["--version"], capsys)
    assert code == 0
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert (
        info.value.code == 0 and capsys.readouterr().out.strip() == f"contextwarden {__version__}"
    )
    for command in COMMANDS:
        code, _ = run([command, "--help"], capsys)
        assert code == 0


def test_ctrl_c_exits_130_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted() -> int:
        raise KeyboardInterrupt

    assert run_command(interrupted) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "contextwarden: error: interrupted\n"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_pipe_is_a_quiet_exit(command: str, places: Places) -> None:
    """``contextwarden … --json | head -0``: the reader is gone before the first byte."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "contextwarden", *good(command, places), "--json"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(argv, env=env, cwd=places.project, **pipes) as proc:  # type: ignore[call-overload]
        proc.stdout.close()  # like `head` exiting early
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=BROKEN_PIPE_TIMEOUT)
    assert code == 0, err  # the reader chose to stop: nothing failed
    assert err == "", err


def test_a_proxy_on_a_port_in_use_says_so_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    for name in [k for k in os.environ if k.startswith("CONTEXTWARDEN_")]:
        monkeypatch.delenv(name)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        argv = ["proxy", "--upstream", "http://127.0.0.1:9", "--listen", listen]
        code, err = run(argv, capsys)
    assert code == EXIT_USAGE
    assert_one_line_error(err, f"{listen} is in use by another process")
