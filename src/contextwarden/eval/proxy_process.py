"""A ``contextwarden proxy`` in a process of its own on a free 127.0.0.1 port, for measurements
and tests that need what one process cannot show: its own memory, its own interpreter lock,
another ``src`` tree, two processes over one store, a process killed mid-request."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from contextwarden.errors import ProxyConfigError

START_SECONDS = 60.0
"""How long the process may take to listen (imports, store set-up on a loaded machine)."""
STOP_SECONDS = 30.0
"""How long it may take to stop when asked before it is killed."""
POLL_SECONDS = 0.05


def free_port() -> int:
    """A 127.0.0.1 port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def proxy_command(options: Sequence[str], port: int) -> list[str]:
    """The command line of ``contextwarden proxy`` with ``options`` on 127.0.0.1:``port``."""
    return [
        sys.executable,
        "-m",
        "contextwarden",
        "proxy",
        *options,
        "--listen",
        f"127.0.0.1:{port}",
    ]


@contextmanager
def proxy_process(
    options: Sequence[str], src: str | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``contextwarden proxy`` with ``options`` (all but ``--listen``), its modules from ``src``
    (a ``PYTHONPATH``) or from where this process has them, for the ``with`` block; yields its
    URL once it listens (uvicorn listens after the app has started) and the process."""
    port = free_port()
    command = proxy_command(options, port)
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in src.split(os.pathsep))
    quiet = subprocess.DEVNULL  # its log line per request
    process = subprocess.Popen(command, env=env, stdout=quiet, stderr=quiet)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _listening(port):
            if time.monotonic() > deadline or process.poll() is not None:
                raise ProxyConfigError(
                    f"the proxy process did not listen within {START_SECONDS:.0f} s (exit code"
                    f" {process.poll()}); run {' '.join(command)} to see why"
                )
            time.sleep(POLL_SECONDS)
        yield f"http://127.0.0.1:{port}", process
    finally:
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
