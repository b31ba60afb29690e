"""What a recall round through the proxy costs (``--recall``): tokens and latency, in one run.

A conversation of ``Deploy`` results (results microcompact may not clear, so a summary takes
them) is sent through the proxy at a small window, as an SSE request; its first request
compacts it and every repeat is a retry of that turn (the same view, nothing compacted again).
A local Anthropic upstream streams each reply as ``--deltas`` text deltas ``--delay`` ms apart,
as a model generating would. Three cases, interleaved per iteration:

- ``off``: ``--recall`` off (the baseline);
- ``offered``: ``--recall`` on, the tool offered, the model does not call it: an Anthropic
  stream passes through the recall gate (``proxy.recall_stream``), held only from a recall
  block on, so this is what the gate costs;
- ``recalled``: ``--recall`` on, the model recalls the summary's span (one page) and answers.

Tokens are the upstream's usage (request bytes / 4, the same for every case), as the proxy's
``/sessions/{id}`` records them for the hidden round.

    python benchmarks/bench_proxy_recall.py [--iterations 15] [--deltas 20] [--delay 10]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from contextwarden.proxy import ProxyConfig, running

WINDOW = 20_000
MODULES = 40
ASK_RECALL = "Quote what deploying module 0 printed."
ASK_PLAIN = "Say done."
SPAN = re.compile(r'recall\(id=\\"([^"\\]+)\\"\)')
ADMIN = "bench-admin-token-0123456789"
QUESTION_PROMPTS: list[int] = []
"""Prompt tokens of each request the proxy sent for ``ASK_RECALL`` itself (the view)."""


def conversation(question: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "Deploy every module."}]
    for n in range(MODULES):
        log = "\n".join(f"module {n} step {i}: deployed ok in {i * 7 % 13} ms" for i in range(60))
        use = {"type": "tool_use", "id": f"call_{n}", "name": "Deploy", "input": {"n": n}}
        result = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": log}
        out += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    out.append({"role": "assistant", "content": "All deployed."})
    return [*out, {"role": "user", "content": question}]


def reply_events(body: dict[str, Any], raw: bytes, deltas: int) -> Iterator[tuple[str, Any]]:
    """The SSE events of the scripted model's reply to ``body``."""
    content = body["messages"][-1]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    last = "".join(b.get("text", "") for b in blocks)
    offered = any(t.get("name") == "recall" for t in body.get("tools") or [])
    usage = {"input_tokens": len(raw) // 4, "output_tokens": 1}
    if last == ASK_RECALL:
        QUESTION_PROMPTS.append(usage["input_tokens"])
    message = {"id": "msg_b", "type": "message", "role": "assistant", "model": "b", "content": []}
    yield "message_start", {"type": "message_start", "message": {**message, "usage": usage}}
    span = SPAN.findall(raw.decode())
    if offered and last == ASK_RECALL and span:
        call = {"type": "tool_use", "id": "recall_0", "name": "recall", "input": {}}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": call},
        )
        partial = json.dumps({"id": span[-1]})
        delta = {"type": "input_json_delta", "partial_json": partial}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        for i in range(deltas):
            delta = {"type": "text_delta", "text": f"word{i} "}
            yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        stop = "end_turn"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    end = {"stop_reason": stop, "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": 20}}
    yield "message_stop", {"type": "message_stop"}


@contextmanager
def streaming_upstream(deltas: int, delay: float) -> Iterator[str]:
    """A Messages endpoint on 127.0.0.1 streaming each text delta ``delay`` seconds apart."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.loads(raw)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in reply_events(body, raw, deltas):
                if name == "content_block_delta":
                    time.sleep(delay)
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

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


def timed(client: httpx.Client, url: str, question: str) -> tuple[float, float]:
    """(seconds to the first text delta, seconds to the end) of one SSE request."""
    body = {"model": "b", "max_tokens": 100, "stream": True, "messages": conversation(question)}
    body["tools"] = [{"name": "Deploy", "description": "d", "input_schema": {"type": "object"}}]
    started = time.perf_counter()
    first = None
    with client.stream("POST", f"{url}/v1/messages", json=body, headers={"x-api-key": "k"}) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if first is None and "text_delta" in line:
                first = time.perf_counter() - started
    return first or float("nan"), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--deltas", type=int, default=20)
    parser.add_argument("--delay", type=float, default=10.0, help="ms between text deltas")
    args = parser.parse_args()
    cases = {
        "off": (False, ASK_PLAIN),
        "offered": (True, ASK_PLAIN),
        "recalled": (True, ASK_RECALL),
    }
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    with (
        tempfile.TemporaryDirectory() as tmp,
        streaming_upstream(args.deltas, args.delay / 1000) as up,
    ):
        configs = {
            on: ProxyConfig(
                upstream=up,
                window=WINDOW,
                store=f"{tmp}/{on}.sqlite3",
                recall=on,
                admin_token=ADMIN,
            )
            for on in (False, True)
        }
        with (
            running(configs[False]) as plain,
            running(configs[True]) as recalling,
            httpx.Client(timeout=60) as client,
        ):
            urls = {False: plain, True: recalling}
            for on, question in cases.values():
                timed(client, urls[on], question)  # the session's first request compacts it
            for _ in range(args.iterations):
                for name, (on, question) in cases.items():
                    seen[name].append(timed(client, urls[on], question))
            auth = {"authorization": f"Bearer {ADMIN}"}
            shown = [
                client.get(f"{recalling}/sessions/{sid}", headers=auth).json()
                for sid in client.get(f"{recalling}/sessions", headers=auth).json()["sessions"]
            ]
    rounds = [r for s in shown for r in s["recall_rounds"]]
    print(
        f"load average {os.getloadavg()[0]:.1f}; {args.iterations} iterations, SSE, "
        f"{args.deltas} text deltas {args.delay:g} ms apart\n"
    )
    print("| case | first text byte p50 ms | whole reply p50 ms |")
    print("|---|--:|--:|")
    base = statistics.median(t for t, _ in seen["off"])
    for name, values in seen.items():
        first = statistics.median(t for t, _ in values)
        whole = statistics.median(w for _, w in values)
        print(f"| {name} | {first * 1000:.1f} ({first / base:.1f}x) | {whole * 1000:.1f} |")
    view = statistics.median(QUESTION_PROMPTS)
    print(f"\nthe question's own request: {view:.0f} prompt tokens p50")
    prompt = statistics.median(r["hidden_prompt_tokens"] for r in rounds)
    output = statistics.median(r["hidden_output_tokens"] for r in rounds)
    added = statistics.median(r["seconds"] for r in rounds)
    print(
        f"one recall round: {len(rounds)} recorded; hidden prompt tokens p50 {prompt:.0f} "
        f"({prompt / view:.1f}x the question's), "
        f"hidden output tokens p50 {output:.0f}, "
        f"time after the first reply p50 {added * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
