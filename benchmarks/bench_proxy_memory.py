"""Memory per open session of the proxy: N agent sessions of realistic size sent through a real
proxy (uvicorn, SQLite store) in this process, the Python heap measured with tracemalloc after
each batch; then the same with ``--max-sessions`` below N, where memory stops growing.

Each session is a ~``--tokens``-token conversation of tool turns (the latency benchmark's
shape) sent as an agent sends it: a first request, then ``--turns`` requests each one turn
longer. Memory per session is the heap growth over the N sessions divided by N, and the JSON
size of one session's last request is printed beside it.

    python benchmarks/bench_proxy_memory.py [--sessions 40] [--tokens 20000] [--turns 3]
        [--max-sessions 10]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import tracemalloc
from dataclasses import fields
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_proxy_latency import WINDOW, conversation, instant_upstream, tool_turn

from contextwarden.proxy import ProxyConfig, running

MB = 1024 * 1024


def heap() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def rss() -> int:
    """Resident memory of this process, in bytes (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096


def open_sessions(count: int, tokens: int, turns: int, options: dict[str, Any]) -> list[str]:
    """Table rows: heap and RSS growth after ``count`` sessions through a proxy with ``options``."""
    base = conversation(tokens)
    label = ", ".join(f"{k} {v}" for k, v in options.items()) or "default"
    rows = []
    with (
        tempfile.TemporaryDirectory() as folder,
        instant_upstream(one_send=True) as upstream,
    ):
        config = ProxyConfig(upstream=upstream, window=WINDOW, store=f"{folder}/p.sqlite3")
        config = ProxyConfig(**{**_values(config), **options})
        with running(config) as url, httpx.Client() as client:
            send(client, url, "warm-up", [{"role": "user", "content": "hi"}])
            heap0, rss0 = heap(), rss()
            for n in range(count):
                messages = [{"role": "user", "content": f"Session {n}: run the steps."}, *base[1:]]
                send(client, url, f"s{n}", messages)
                for turn in range(turns):
                    messages = messages + tool_turn(30_000 + turn, 400)
                    send(client, url, f"s{n}", messages)
                if n + 1 in (count // 4, count // 2, count):
                    grown, resident = heap() - heap0, rss() - rss0
                    rows.append(
                        f"| {label} | {n + 1} | {grown / MB:.1f} |"
                        f" {grown / (n + 1) / MB:.3f} | {resident / MB:.1f} |"
                    )
    size = len(json.dumps({"messages": messages})) / MB
    rows.append(f"\none session's last request: {size:.3f} MB of JSON, {len(messages)} messages")
    return rows


def send(client: httpx.Client, url: str, session: str, messages: list[dict[str, Any]]) -> None:
    body = {"model": "bench", "max_tokens": 100, "messages": messages}
    headers = {"x-api-key": "bench", "x-contextwarden-session": session}
    reply = client.post(f"{url}/v1/messages", json=body, headers=headers, timeout=120)
    assert reply.status_code == 200, reply.text


def _values(config: ProxyConfig) -> dict[str, Any]:
    return {f.name: getattr(config, f.name) for f in fields(config)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--max-sessions", type=int, default=10)
    args = parser.parse_args()
    tracemalloc.start()
    print("| proxy options | sessions opened | heap growth MB | per session MB | RSS growth MB |")
    print("|---|--:|--:|--:|--:|")
    runs: list[dict[str, Any]] = [{}]
    if "max_sessions" in {f.name for f in fields(ProxyConfig)}:
        runs.append({"max_sessions": args.max_sessions})
    else:
        print("(this source has no max_sessions option: the bounded run is skipped)")
    for options in runs:
        rows = open_sessions(args.sessions, args.tokens, args.turns, options)
        print("\n".join(rows[:-1]))
    print(rows[-1])


if __name__ == "__main__":
    main()
