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

Then small one-turn requests against two plain HTTP/1.1 upstreams that differ only in how they
write a reply: headers and body in one send, or in two (as ``http.server`` does) without
TCP_NODELAY. The second is where a kept-alive connection waits ~40 ms per request (Nagle holds the
body until the headers are acknowledged; Linux delays that ACK); the proxy acknowledges at once
(TCP_QUICKACK, ``proxy.upstream.acknowledge``), shown against itself with that turned off.

With ``--compare SRC`` (repeatable) the same requests also go, in rotation within each turn, to
proxies run as processes of their own (``contextwarden proxy``) with ``PYTHONPATH=SRC``: an older
``src`` (``git archive <commit> src | tar -x -C BASE``) beside this one, in the same minutes of a
shared machine. A proxy in its own process does not share the benchmark's interpreter lock either.
Then ``--small`` one-message requests, each on a new session, the same way: the fixed cost of a
request, whatever the conversation's size. Each proxy's CPU time per request is read from the
kernel too (Linux): unlike the wall-clock figures, it hardly moves with the machine's load.

    python benchmarks/bench_proxy_latency.py [--turns 60] [--tokens 100000] [--small 40]
        [--compare BASE/src --compare src]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
from upstreams import messages_reply, serving

from contextwarden.compaction.cache import CachePolicy
from contextwarden.eval.proxy_process import proxy_process
from contextwarden.eval.proxy_replay import proxy_server
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import upstream as upstream_module
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.wording import dump_body, parse_body
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.anthropic import message_from_wire

WINDOW = 200_000
REPLY = messages_reply(100_000)
SETTLE_SECONDS = 0.5
"""Wait before reading the proxies' CPU time at the end, so their last anchors are counted."""


@contextmanager
def instant_upstream(one_send: bool = False) -> Iterator[str]:
    """A Messages endpoint on 127.0.0.1 that reads the request and answers at once, its headers
    and body in two sends (as ``http.server`` writes them) or in ``one_send``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # As production servers do: without it, the reply's second write waits for the
            # client's delayed ACK (~40 ms on Linux loopback), direct and proxied alike.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if one_send:
                head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(REPLY)}\r\n"
                self.wfile.write(f"{head}content-type: application/json\r\n\r\n".encode() + REPLY)
                return
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(REPLY)))
            self.end_headers()
            self.wfile.write(REPLY)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url


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


def unacknowledged(reply: upstream_module.Reply) -> None:
    """The proxy without TCP_QUICKACK: the ACK waits for the kernel's delayed-ACK timer."""


def small_requests(count: int) -> None:
    """p50 of ``count`` one-turn requests, direct and through the proxy (acknowledging at once,
    and not), against an upstream writing its reply in one send and in two."""
    body = {"model": "bench", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    acknowledge = upstream_module.acknowledge
    print(f"\n{count} one-turn requests on one kept-alive connection, p50 ms (first not counted)\n")
    print("| upstream writes its reply in | direct | proxy | proxy without TCP_QUICKACK |")
    print("|---|--:|--:|--:|")
    for one_send in (True, False):
        row: list[float] = []
        with instant_upstream(one_send) as upstream, httpx.Client() as client:
            for url, quickack in ((upstream, True), (None, True), (None, False)):
                upstream_module.acknowledge = acknowledge if quickack else unacknowledged
                with proxy_server(upstream, WINDOW) as proxy:
                    target = url or proxy
                    times = []
                    for n in range(count + 1):
                        headers = {"x-api-key": "bench", "x-contextwarden-session": f"s{n}"}
                        started = time.perf_counter()
                        reply = client.post(f"{target}/v1/messages", json=body, headers=headers)
                        times.append((time.perf_counter() - started) * 1000)
                        assert reply.status_code == 200, reply.text
                    row.append(percentile(times[1:], 0.5))
        upstream_module.acknowledge = acknowledge
        shape = "one send" if one_send else "two sends (headers, then body)"
        print(f"| {shape} | {row[0]:.1f} | {row[1]:.1f} | {row[2]:.1f} |")


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


def compare(sources: list[str], tokens: int, turns: int, firsts: int, small: int) -> None:
    """Added p50/p99 (paired with a direct request in the same turn), the p50 of ``firsts``
    sessions' first requests and of ``small`` one-message requests (each a new session), for a
    proxy process per source, taking turns within each turn."""
    messages = conversation(tokens)
    with (
        tempfile.TemporaryDirectory() as folder,
        instant_upstream() as upstream,
        httpx.Client(timeout=120) as client,
        ExitStack() as stack,
    ):
        options = ["--upstream", upstream, "--window", str(WINDOW)]
        started = [
            stack.enter_context(proxy_process([*options, "--store", f"{folder}/{n}.db"], src))
            for n, src in enumerate(sources)
        ]
        urls = [url for url, _ in started]
        pids = [process.pid for _, process in started]

        def timed(url: str, body: dict[str, Any], session: str = "latency") -> float:
            headers = {"x-api-key": "bench", "x-contextwarden-session": session}
            started = time.perf_counter()
            reply = client.post(f"{url}/v1/messages", json=body, headers=headers)
            elapsed = (time.perf_counter() - started) * 1000
            assert reply.status_code == 200, reply.text
            return elapsed

        hello = {
            "model": "bench",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "hi"}],
        }
        for url in urls:  # each process's own first request pays for imports: not counted
            assert client.post(f"{url}/v1/messages", json=hello).status_code == 200
        body = {"model": "bench", "max_tokens": 100, "messages": messages}
        first: list[list[float]] = [[] for _ in urls]
        for n in range(firsts):
            for which, url in enumerate(urls):
                direct = timed(upstream, body)
                first[which].append(timed(url, body, f"first-{n}") - direct)
        added: list[list[float]] = [[] for _ in urls]
        before = [cpu_ms(pid) for pid in pids]
        for turn in range(turns):
            messages = messages + tool_turn(10_000 + turn, 400)
            body = {"model": "bench", "max_tokens": 100, "messages": messages}
            for k in range(len(urls)):
                which = (turn + k) % len(urls)  # each proxy goes first in turn
                direct = timed(upstream, body)
                added[which].append(timed(urls[which], body) - direct)
        middle = [cpu_ms(pid) for pid in pids]
        fixed: list[list[float]] = [[] for _ in urls]
        for n in range(small):
            for k in range(len(urls)):
                which = (n + k) % len(urls)
                direct = timed(upstream, hello)
                fixed[which].append(timed(urls[which], hello, f"small-{n}") - direct)
        time.sleep(SETTLE_SECONDS)  # the last anchors are written after their replies
        after = [cpu_ms(pid) for pid in pids]
    print(f"\n~{tokens:,} tokens, {turns} turns, proxies in their own processes, in rotation\n")
    print(
        "| source | added p50 ms | added p99 ms | added mean ms | first request added p50 ms |"
        f" {small} one-message requests added p50 ms | proxy CPU ms a request: turn, one-message |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|")
    for n, (src, values, cold, tiny) in enumerate(zip(sources, added, first, fixed, strict=True)):
        busy = (middle[n] - before[n]) / max(turns, 1), (after[n] - middle[n]) / max(small, 1)
        print(
            f"| {src} | {percentile(values, 0.5):.1f} | {percentile(values, 0.99):.1f} |"
            f" {statistics.fmean(values):.1f} | {percentile(cold, 0.5):.0f} |"
            f" {percentile(tiny, 0.5) if tiny else float('nan'):.2f} |"
            f" {busy[0]:.2f}, {busy[1]:.2f} |"
        )


def cpu_ms(pid: int) -> float:
    """CPU time all of process ``pid``'s threads have used so far, in ms (Linux's schedstat, in
    ns: steadier on a shared machine than any wall-clock time; NaN elsewhere)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e6 if total else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=40, help="one-turn requests per upstream")
    parser.add_argument(
        "--compare", action="append", metavar="SRC", help="a src tree to run as a proxy process"
    )
    parser.add_argument("--firsts", type=int, default=5, help="with --compare: first requests")
    args = parser.parse_args()
    if args.compare:
        compare(args.compare, args.tokens, args.turns, args.firsts, args.small)
        return
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
    small_requests(args.small)


if __name__ == "__main__":
    main()
