"""What the proxy benchmarks' local upstreams share, written once: the Messages reply they answer
with, and serving one on 127.0.0.1 for a ``with`` block. (A proxy in a process of its own:
``contextwarden.eval.proxy_process``.)
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

STOP_SECONDS = 60
"""How long stopping an upstream waits for its serving thread."""


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
        thread.join(timeout=STOP_SECONDS)
