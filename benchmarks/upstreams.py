"""What the proxy benchmarks run against on 127.0.0.1, written once: the Messages reply a local
upstream answers with, serving an upstream for a ``with`` block, and a ``contextwarden proxy``
process on a free port.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

START_SECONDS = 60
"""How long a proxy process may take to start listening (or to stop)."""


def messages_reply(input_tokens: int) -> bytes:
    """A whole Messages reply saying ``ok``, its usage ``input_tokens`` (what the proxy anchors
    its count on)."""
    return json.dumps(
        {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "bench",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }
    ).encode()


@contextmanager
def serving(handler: type[socketserver.BaseRequestHandler]) -> Iterator[str]:
    """A server on a free port answering each connection with ``handler`` in a thread of its
    own, for the ``with`` block; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=START_SECONDS)


@contextmanager
def proxy_process(options: list[str], src: str | None = None) -> Iterator[tuple[str, int]]:
    """``contextwarden proxy`` with ``options`` in a process of its own on a free port, its
    modules from ``src`` (a ``PYTHONPATH``) or this interpreter's; yields its URL and pid."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "contextwarden", "proxy", "--listen", f"127.0.0.1:{port}"]
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(part) for part in src.split(os.pathsep))
    quiet = subprocess.DEVNULL  # its log line per request
    process = subprocess.Popen(command + options, env=env, stdout=quiet, stderr=quiet)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the proxy from {src or 'here'} did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(timeout=START_SECONDS)
