"""The proxy under hostile load, measured in one run: its peak memory for a request holding one
huge run of one letter, and other clients' latency while a faulty upstream streams.

Memory: a fresh ``contextwarden proxy`` process per measurement (its peak RSS, ``VmHWM``, is read
from /proc once the reply is in), for a request of N MB managed (``/v1/messages``) against the
same bytes passed through unmanaged (``/v1/messages/count_tokens``, the baseline: what holding the
body costs at all). Latency: small requests from another client, p50 and max, with the upstream
healthy (baseline) and while one client's upstream sends a 20 MB SSE event without separators, or
drips a non-streaming reply a byte at a time. Loopback only, bounded in count and time.

    python benchmarks/bench_proxy_faults.py [--sizes 20 50] [--seconds 4]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager

import httpx
from upstreams import messages_reply, serving

from contextwarden.eval.proxy_process import proxy_process

MB = 1_000_000
FLOOD = b"data: " + b"a" * (20 * MB)
REPLY = messages_reply(10)
COUNT = b'{"input_tokens": 1}'
JSON = {"content-type": "application/json"}
TIMEOUT = 5.0
"""The proxy's --timeout: the dripping reply ends there."""


def _read(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or b"\r\n\r\n"
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    while len(rest) < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        rest += chunk
    return head + b"\r\n\r\n" + rest[:200]


def _answer(sock: socket.socket, request: bytes) -> None:
    if b"flood" in request:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        )
        for i in range(0, len(FLOOD), 16384):
            sock.sendall(FLOOD[i : i + 16384])
        raise ConnectionAbortedError  # closes the connection: the stream ends
    if b"drip" in request:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n"
        )
        for _ in range(int(TIMEOUT * 4)):
            sock.sendall(b" ")
            time.sleep(0.5)
        raise ConnectionAbortedError
    body = COUNT if b"count_tokens" in request else REPLY
    head = (
        f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)


@contextmanager
def faulty_upstream() -> Iterator[str]:
    """Answers at once, unless the request says ``flood`` (20 MB SSE, no separator) or ``drip``."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                while request := _read(self.request):
                    _answer(self.request, request)
            except OSError:
                pass

    with serving(Handler) as url:
        yield url


def proxy(upstream: str, store: str) -> AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]:
    """A ``contextwarden proxy`` process on a free port; yields its URL and the process."""
    options = ["--upstream", upstream, "--store", store]
    options += ["--max-body", str(200 * MB), "--timeout", str(TIMEOUT)]
    return proxy_process(options)


def peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def one_letter(size_mb: int) -> bytes:
    text = "a" * (size_mb * MB)
    return json.dumps(
        {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": text}]}
    ).encode()


COUNTER_PEAK = """
import resource, sys
from contextwarden.tokens.heuristic import HeuristicCounter
text = "a" * int(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
HeuristicCounter().count_text(text)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
"""What counting the text alone adds to a process's peak (MB): the heuristic counter's share."""


def counter_mb(chars: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", COUNTER_PEAK, str(chars)], capture_output=True, check=True
    )
    return float(out.stdout)


def memory(sizes: list[int], upstream: str, store: str) -> None:
    print(
        "| request | proxy idle | peak, passed through (baseline) | peak, managed |"
        " managed / baseline | counting the text alone adds | rest of managed peak per byte |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|")
    for size in sizes:
        body = one_letter(size)
        row: list[float] = []
        for path in ("/v1/messages/count_tokens", "/v1/messages"):
            name = f"{store}/{size}{path.replace('/', '_')}.sqlite3"
            with proxy(upstream, name) as (url, process):
                idle = peak_mb(process.pid)
                started = time.perf_counter()
                reply = httpx.post(f"{url}{path}", content=body, timeout=600, headers=JSON)
                took = time.perf_counter() - started
                row += [idle, peak_mb(process.pid)]
            said = f"{reply.status_code} in {took:.1f} s: {reply.text[:80]!r}"
            print(f"  {size} MB to {path}: {said}", file=sys.stderr)
        idle, passed, managed = row[0], row[1], row[3]
        counting = counter_mb(size * MB)
        rest = (managed - idle - counting) * 2**20 / len(body)
        print(
            f"| {size} MB of one letter | {idle:.0f} MB | {passed:.0f} MB | {managed:.0f} MB |"
            f" {managed / passed:.1f}x | {counting:.0f} MB | {rest:.1f} bytes |"
        )
    print()


def others(url: str, seconds: float) -> list[float]:
    waits: list[float] = []
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hello"}]}
    with httpx.Client(timeout=60) as client:
        until = time.monotonic() + seconds
        n = 0
        while time.monotonic() < until:
            started = time.perf_counter()
            headers = {"x-contextwarden-session": f"other-{n}"}
            assert client.post(f"{url}/v1/messages", json=body, headers=headers).status_code == 200
            waits.append((time.perf_counter() - started) * 1000)
            n += 1
    return waits


FAULTS = {
    "flood": "upstream streams 20 MB without an event separator",
    "drip": "upstream drips a reply a byte per 0.5 s",
}


def latency(seconds: float, upstream: str, store: str) -> None:
    print("| while | other clients' requests | p50 ms | max ms | the faulty request |")
    print("|---|--:|--:|--:|---|")
    with proxy(upstream, f"{store}/latency.sqlite3") as (url, _):
        others(url, 1.0)  # warm up
        for fault in ("nothing (baseline)", "flood", "drip"):
            with ThreadPoolExecutor(1) as pool:
                faulty = None
                if fault != "nothing (baseline)":
                    body = {
                        "model": "m",
                        "max_tokens": 10,
                        "stream": fault == "flood",
                        "messages": [{"role": "user", "content": fault}],
                    }
                    faulty = pool.submit(httpx.post, f"{url}/v1/messages", json=body, timeout=120)
                    time.sleep(0.2)
                waits = others(url, seconds)
                outcome = "" if faulty is None else _outcome(faulty.result())
            p50, worst = statistics.median(waits), max(waits)
            name = FAULTS.get(fault, fault)
            print(f"| {name} | {len(waits)} | {p50:.1f} | {worst:.1f} | {outcome} |")


def _outcome(reply: httpx.Response) -> str:
    if reply.status_code == 200:
        return f"200, {len(reply.content) / MB:.0f} MB passed on"
    return f"{reply.status_code} {reply.json()['error']['message'][:70]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50], help="request MB")
    parser.add_argument("--seconds", type=float, default=4.0, help="other clients' run per fault")
    args = parser.parse_args()
    with faulty_upstream() as upstream, tempfile.TemporaryDirectory() as store:
        if args.sizes:
            memory(args.sizes, upstream, store)
        latency(args.seconds, upstream, store)


if __name__ == "__main__":
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    main()
