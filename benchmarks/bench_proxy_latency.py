"""What the proxy adds to each request at 100K-token conversations: the same requests sent
straight to a local upstream and through the proxy, in one run, interleaved.

The conversation holds ~100,000 tokens of tool results (window 200,000, so nothing is compacted
and every request carries the whole conversation); each request adds one turn, as an agent does.
The upstream on 127.0.0.1 answers at once (one write, TCP_NODELAY, as production servers do), so
the difference is the proxy's own work: parsing, hashing the items to find the seen prefix,
adding the new messages, prepare(), re-rendering, the store writes, and the extra loopback hop.
The first request of a session is timed after a warm-up request on another session, and the
proxy's own work is timed once more in process, without HTTP, where a shared machine's noise
matters less.

    python benchmarks/bench_proxy_latency.py [--turns 60] [--tokens 100000]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from contextwarden.compaction.cache import CachePolicy
from contextwarden.eval.proxy_replay import proxy_server
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.wording import dump_body, parse_body
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.anthropic import message_from_wire

WINDOW = 200_000
REPLY = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "bench",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100_000, "output_tokens": 1},
    }
).encode()


@contextmanager
def instant_upstream() -> Iterator[str]:
    """A Messages endpoint on 127.0.0.1 that reads the request and answers at once."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # As production servers do: without it, the reply's second write waits for the
            # client's delayed ACK (~40 ms on Linux loopback), direct and proxied alike.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            head = (
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                f"content-length: {len(REPLY)}\r\n\r\n"
            )
            self.wfile.write(head.encode() + REPLY)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def tool_turn(n: int, chars: int) -> list[dict[str, Any]]:
    lines = "\n".join(
        f"{n:04d}:{i:05d} value = compute({i}, {n}) # result line" for i in range(chars // 48)
    )
    use = {
        "type": "tool_use",
        "id": f"toolu_{n:05d}",
        "name": "Bash",
        "input": {"command": f"step {n}"},
    }
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": lines}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def conversation(tokens: int) -> list[dict[str, Any]]:
    counter = HeuristicCounter()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Run the steps."}]
    n = 0
    while sum(counter.count_message(message_from_wire(m)) for m in messages) < tokens:
        messages += tool_turn(n, 10_000)
        n += 1
    return messages


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def in_process(messages: list[dict[str, Any]], turns: int) -> tuple[float, list[float]]:
    """The proxy's own work per request without HTTP (parse the body, match and manage the
    session, render and encode the upstream body), on a SQLite store: the first request, then
    each one-turn-longer request."""
    with tempfile.TemporaryDirectory() as folder:
        manager = ContextManager(ContextPolicy(context_window=WINDOW), cache=CachePolicy())
        store = SqliteStore(Path(folder) / "bench.sqlite3")
        sessions = Sessions(store, manager, HeuristicCounter())

        def one(messages: list[dict[str, Any]]) -> float:
            raw = json.dumps({"model": "bench", "max_tokens": 100, "messages": messages}).encode()
            started = time.perf_counter()
            body = parse_body(raw)
            managed = sessions.manage(ANTHROPIC.conversation(body, "in-process"))
            dump_body(ANTHROPIC.render(body, managed.messages, cache=True))
            return (time.perf_counter() - started) * 1000

        first = one(messages)
        steps = []
        for turn in range(turns):
            messages = messages + tool_turn(20_000 + turn, 400)
            steps.append(one(messages))
        store.close()
    return first, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--tokens", type=int, default=100_000)
    args = parser.parse_args()
    messages = conversation(args.tokens)
    headers = {"x-api-key": "bench", "x-contextwarden-session": "latency"}
    direct_ms: list[float] = []
    proxy_ms: list[float] = []
    with (
        instant_upstream() as upstream,
        proxy_server(upstream, WINDOW) as proxy,
        httpx.Client() as client,
    ):

        def timed(url: str, body: dict[str, Any]) -> float:
            started = time.perf_counter()
            reply = client.post(f"{url}/v1/messages", json=body, headers=headers)
            elapsed = (time.perf_counter() - started) * 1000
            assert reply.status_code == 200, reply.text
            return elapsed

        body = {"model": "bench", "max_tokens": 100, "messages": messages}
        # The process's first request pays for imports and thread start-up: warm up on another
        # session, so the cold figure is a session's first request.
        hello = [{"role": "user", "content": "hi"}]
        warm = {"model": "bench", "max_tokens": 100, "messages": hello}
        reply = client.post(f"{proxy}/v1/messages", json=warm, headers={"x-api-key": "bench"})
        assert reply.status_code == 200, reply.text
        cold_direct = timed(upstream, body)
        cold = timed(proxy, body)
        for turn in range(args.turns):
            messages = messages + tool_turn(10_000 + turn, 400)
            body = {"model": "bench", "max_tokens": 100, "messages": messages}
            direct_ms.append(timed(upstream, body))
            proxy_ms.append(timed(proxy, body))
    size = len(json.dumps(body)) / 1e6
    added = [p - d for p, d in zip(proxy_ms, direct_ms, strict=True)]
    print(
        f"conversation ~{args.tokens:,} tokens ({size:.1f} MB of JSON, {len(messages)} messages), "
        f"{args.turns} turns, each adding one small tool turn\n"
    )
    print("| | p50 ms | p99 ms | mean ms |")
    print("|---|--:|--:|--:|")
    for name, values in (
        ("direct to upstream", direct_ms),
        ("through the proxy", proxy_ms),
        ("added by the proxy (paired)", added),
    ):
        print(
            f"| {name} | {percentile(values, 0.5):.1f} | {percentile(values, 0.99):.1f} |"
            f" {statistics.fmean(values):.1f} |"
        )
    print(
        f"\nfirst request of the session (every message new to the store): {cold:.0f} ms"
        f" through the proxy, {cold_direct:.0f} ms direct ({cold - cold_direct:.0f} ms added)"
    )
    first, steps = in_process(conversation(args.tokens), args.turns)
    print(
        f"the proxy's own work, in process (parse, manage, render, encode): first request"
        f" {first:.1f} ms; one turn longer: p50 {percentile(steps, 0.5):.1f} ms,"
        f" p99 {percentile(steps, 0.99):.1f} ms"
    )


if __name__ == "__main__":
    main()
