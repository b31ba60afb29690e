"""Run a child process under a time limit and an output cap, enforced while it runs.

Output is read as it arrives and kept up to a byte cap: past it the child is stopped, so
``cat /dev/zero`` costs the cap, not gigabytes. The child leads its own process group, and the whole
group (background jobs included) is killed when the time runs out, the cap is reached, or the user
presses Ctrl-C.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Finished", "run_bounded"]

READ_CHUNK = 65_536
"""Bytes read from the child's output per system call."""

Stop = Literal["exited", "timeout", "output cap"]


@dataclass(frozen=True, slots=True)
class Finished:
    """What a bounded run produced: its output (at most the cap), exit code, and why it ended."""

    output: bytes
    returncode: int | None
    stopped: Stop


def run_bounded(
    args: str | Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    max_bytes: int,
    shell: bool = False,
) -> Finished:
    """Run ``args`` (a shell command when ``shell``) with no input, stdout and stderr merged,
    for at most ``timeout`` seconds and ``max_bytes`` of output."""
    with subprocess.Popen(
        args,
        shell=shell,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # Ctrl-C reaches us, and we stop the command's whole group
    ) as process:
        try:
            output, stopped = _collect(process, time.monotonic() + timeout, max_bytes)
        except BaseException:
            _kill_group(process)
            raise
        if stopped != "exited":
            _kill_group(process)
            return Finished(output, None, stopped)
        return Finished(output, process.returncode, stopped)


def _collect(
    process: subprocess.Popen[bytes], deadline: float, max_bytes: int
) -> tuple[bytes, Stop]:
    """Read the child's output until end of file, the deadline, or ``max_bytes``."""
    assert process.stdout is not None
    kept = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return bytes(kept), "timeout"
            chunk = os.read(process.stdout.fileno(), READ_CHUNK)
            if not chunk:
                break
            kept += chunk[: max_bytes - len(kept)]
            if len(kept) >= max_bytes:
                return bytes(kept), "output cap"
    try:
        process.wait(max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        return bytes(kept), "timeout"
    return bytes(kept), "exited"


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
