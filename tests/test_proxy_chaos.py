"""Chaos: two proxy processes on one PostgreSQL store, 50 agents talking through them at once,
and the processes killed with SIGKILL again and again (each restarted on its port). An agent
retries a failed request on the other process, as agents do. Nothing acknowledged may be lost,
nothing may be stored twice, and every request that reached the upstream must be valid.

Bounded: KILLS kills; each agent holds conversations of TURNS + 1 requests one after another
until the kills are done (at most CONVERSATIONS); every request and wait has a timeout."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextwarden.eval.proxy_process import free_port, proxy_command
from contextwarden.log import CompactionBoundary, MessageAdded, MetadataSet, derive_view
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.matching import TURN_KEY
from contextwarden.stores import PostgresStore, SqliteStore
from contextwarden.wire.anthropic import message_to_wire
from tests.proxy_harness import Scripted, check_request, last_results, text, tool_call, upstream
from tests.test_proxy import file_text
from tests.test_proxy_postgres import WINDOW, store_options

AGENTS = 50
TURNS = 4
CONVERSATIONS = 12
KILLS = 8
KILL_EVERY = 1.0
"""Seconds from both processes being up to the next kill."""
UPSTREAM_SECONDS = 0.15
"""How long the scripted model takes to answer, so kills land while requests are in flight."""
RETRY_FOR = 120.0
"""Seconds an agent keeps retrying one request (both processes may be restarting)."""
TIMEOUT = 30.0
START_TIMEOUT = 60.0
LIMIT = ContextPolicy(context_window=WINDOW).effective_window


def script(path: str, body: dict[str, Any]) -> Scripted:
    time.sleep(UPSTREAM_SECONDS)
    done = last_results(path, body)
    step = int(done[-1].split("_")[1]) + 1 if done else 0
    return text("done") if step >= TURNS else tool_call("Read", f"call_{step}", n=step)


class Restartable:
    """A proxy process on a fixed port that can be killed and started again."""

    def __init__(self, args: list[str], port: int) -> None:
        self.args, self.port = args, port
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.wait_up()

    def wait_up(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("proxy process did not start") from None
                time.sleep(0.1)

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)


class Agent:
    """One agent holding conversations one after another; each request goes to either process,
    retried (on the other first) when the one it went to dies under it: a connection error or
    a 5xx."""

    def __init__(self, n: int, proxies: list[Restartable], chaos_over: threading.Event) -> None:
        self.n, self.proxies, self.chaos_over = n, proxies, chaos_over
        self.conversations: dict[str, list[Any]] = {}
        self.failed_attempts = 0
        self.refused: list[str] = []
        self.acknowledged: dict[str, int] = {}
        """Messages of each conversation's last request a proxy answered with 200."""

    def run(self) -> Agent:
        for c in range(CONVERSATIONS):
            self.converse(f"{self.n}.{c}")
            if self.chaos_over.is_set():
                break
        return self

    def converse(self, name: str) -> None:
        messages = self.conversations[name] = [
            {"role": "user", "content": f"Read the files. (chaos {name})"}
        ]
        for turn in range(TURNS + 1):
            content = self.send(name, messages, turn)
            if content is None:
                return
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in content if b["type"] == "tool_use"]
            if not uses:
                return
            results = [
                {"type": "tool_result", "tool_use_id": u["id"], "content": file_text(turn)}
                for u in uses
            ]
            messages.append({"role": "user", "content": results})
        raise AssertionError("the scripted model never finished")

    def send(self, name: str, messages: list[Any], turn: int) -> Any | None:
        """The reply's content; None when a proxy refused the request as a client error."""
        body = {"model": "m", "max_tokens": 50, "messages": messages}
        headers = {"x-contextwarden-session": f"chaos-{name}", "x-api-key": "k"}
        deadline = time.monotonic() + RETRY_FOR
        attempt, last = 0, ""
        while time.monotonic() < deadline:
            proxy = self.proxies[(self.n + turn + attempt) % 2]
            try:
                reply = httpx.post(
                    f"{proxy.url}/v1/messages", json=body, headers=headers, timeout=TIMEOUT
                )
            except httpx.HTTPError as exc:
                reply, last = None, f"{type(exc).__name__}: {exc}"
            if reply is not None and reply.status_code == 200:
                self.acknowledged[name] = len(messages)
                return reply.json()["content"]
            if reply is not None and reply.status_code < 500:  # never a client error: say which
                self.refused.append(f"{name} turn {turn}: {reply.status_code} {reply.text[:200]}")
                return None
            last = last if reply is None else f"{reply.status_code}: {reply.text[:300]}"
            self.failed_attempts += 1
            attempt += 1
            time.sleep(0.2)
        raise AssertionError(
            f"{name} turn {turn}: no proxy answered in {RETRY_FOR:g} s; last: {last}"
        )


def stored_conversations(store: PostgresStore) -> dict[str, list[Any]]:
    """Each stored session's added messages (wire form), by the conversation its first names."""
    found: dict[str, list[Any]] = {}
    for session in store.list_sessions():
        added = [
            message_to_wire(e.message) for e in store.log(session) if isinstance(e, MessageAdded)
        ]
        first = json.dumps(added[0])
        name = first.split("(chaos ")[1].split(")")[0]
        assert name not in found, f"conversation {name} has two sessions"
        found[name] = added
    return found


def text_of(message: Any) -> str:
    """A message compared by what it says (cache marks and string-vs-block form aside)."""
    content = message["content"]
    if isinstance(content, str):
        return f"{message['role']}:{content}"
    parts = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
    if len(parts) == 1 and parts[0].get("type") == "text":
        return f"{message['role']}:{parts[0]['text']}"
    return f"{message['role']}:{json.dumps(parts, sort_keys=True)}"


class RefusedRetry(AssertionError):
    """A proxy answered an agent's retried turn with a client error (the turn is stuck)."""


class StoredTwice(AssertionError):
    """A message an agent sent once is in the store twice."""


def dict_twice(body: dict[str, Any]) -> list[str]:
    """The user messages an upstream request holds more than once, and which conversation."""
    said = Counter(text_of(m) for m in body["messages"] if m["role"] == "user")
    twice = [t[:100] for t, n in said.items() if n > 1]
    return [text_of(body["messages"][0])[:60], *twice] if twice else []


def trace(name: str, bodies: list[dict[str, Any]]) -> list[tuple[int, list[str]]]:
    """Conversation ``name``'s upstream requests in order: how many messages each carried and
    which tool calls its last message answered (what the scripted model answers from)."""
    mine = [b for b in bodies if f"(chaos {name})" in json.dumps(b["messages"][0])]
    return [(len(b["messages"]), last_results("/v1/messages", b)) for b in mine]


def store_tail(store: PostgresStore, name: str) -> list[str]:
    """Conversation ``name``'s stored log, entry by entry (type; role and tool ids of each
    added message), to show how a refused retry found its session."""
    out: list[str] = []
    for session in store.list_sessions():
        log = store.log(session)
        added = [e for e in log if isinstance(e, MessageAdded)]
        if not added or f"(chaos {name})" not in json.dumps(message_to_wire(added[0].message)):
            continue
        for entry in log:
            if isinstance(entry, MessageAdded):
                m = entry.message
                ids = [u.id for u in m.tool_uses] + [r.tool_use_id for r in m.tool_results]
                out.append(f"added {m.role} {ids}{' merge' if entry.merge else ''}")
            else:
                out.append(type(entry).__name__)
        out.append(f"[{session}]")
    return out


def test_sigkill_under_fifty_agents_loses_and_duplicates_nothing(
    postgres_dsn: str, schema: str
) -> None:
    kills: list[int] = []
    chaos_over = threading.Event()
    with upstream(script) as api:
        proxies = [
            Restartable(proxy_command(store_options(api.url, postgres_dsn, schema), port), port)
            for port in (free_port(), free_port())
        ]
        for proxy in proxies:
            proxy.start()
        agents = [Agent(n, proxies, chaos_over) for n in range(AGENTS)]

        def chaos() -> None:
            try:
                for k in range(KILLS):
                    time.sleep(KILL_EVERY)
                    for proxy in proxies:  # one always serves; the kill finds work
                        proxy.wait_up()
                    victim = proxies[k % 2]
                    in_flight = len(api.messages_requests())
                    victim.kill()
                    kills.append(in_flight)
                    victim.process = subprocess.Popen(
                        victim.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                    )
            finally:
                chaos_over.set()

        try:
            with ThreadPoolExecutor(AGENTS + 1) as pool:
                killer = pool.submit(chaos)
                finished = list(pool.map(Agent.run, agents))
                killer.result()
        finally:
            for proxy in proxies:
                proxy.kill()
    assert len(kills) == KILLS
    assert sum(a.failed_attempts for a in finished) > 0  # the kills hit requests in flight
    bodies = api.messages_requests()
    assert kills[-1] < len(bodies)  # the agents were still at work at the last kill
    for body in bodies:  # 0 invalid upstream requests
        check_request(body, LIMIT)
    doubled = [dict_twice(body) for body in bodies]
    assert not any(doubled), [d for d in doubled if d][:3]  # a message twice upstream
    refused = [r for a in finished for r in a.refused]
    with PostgresStore(postgres_dsn, schema=schema) as store:
        stored = stored_conversations(store)
        shown = store_tail(store, refused[0].split()[0]) if refused else []
    lost: dict[str, list[str]] = {}
    twice: dict[str, list[str]] = {}
    for agent in finished:
        for name, messages in agent.conversations.items():
            acknowledged = [text_of(m) for m in messages[: agent.acknowledged[name]]]
            kept = Counter(text_of(m) for m in stored.get(name, []))
            if missing := [t for t in acknowledged if kept[t] == 0]:
                lost[name] = [t[:100] for t in missing]
            if repeated := [t[:100] for t, n in kept.items() if n > 1]:
                twice[name] = repeated
    turns = sum(n // 2 + 1 for a in finished for n in a.acknowledged.values())
    conversations = sum(len(a.conversations) for a in finished)
    failed = sum(a.failed_attempts for a in finished)
    print(  # the run's size, for docs/benchmarks.md (pytest -s shows it)
        f"chaos: {KILLS} kills, {conversations} conversations, {turns} acknowledged turns, "
        f"{len(bodies)} upstream requests, {failed} failed attempts retried; lost "
        f"{len(lost)}, stored twice {len(twice)}, refused {len(refused)}"
    )
    assert lost == {}, f"acknowledged messages lost: {lost}"
    if twice:
        raise StoredTwice(f"messages stored twice: {twice}")
    if refused:
        name = refused[0].split()[0]
        raise RefusedRetry(
            f"{len(refused)} of {conversations} conversations refused a retried turn "
            f"({turns} acknowledged turns, {len(bodies)} upstream requests, 0 lost, 0 twice): "
            f"{refused}; upstream: {trace(name, bodies)}; store: {shown}"
        )


def crash_state(log: list[Any], cut: str) -> list[Any]:
    """The log as a process killed during a turn left it: the latest turn's first new item
    stored (``first-item``), everything of it but its record (``before-record``: it ends with
    the turn's CompactionBoundary, which snipped the tool result the retry sends again), or the
    session's first turn without its record (``first-turn``)."""
    records = [i for i, e in enumerate(log) if isinstance(e, MetadataSet) and e.key == TURN_KEY]
    if cut == "first-turn":
        return log[: records[0]]
    if cut == "before-record":
        return log[: records[-1]]
    first = next(i for i in range(records[-2], len(log)) if isinstance(log[i], MessageAdded))
    return log[: first + 1]


@pytest.mark.parametrize(
    "cut",
    [
        "first-item",
        "before-record",
        "first-turn",
    ],
)
def test_a_retry_after_a_crash_before_the_turn_record_is_stored_once(
    tmp_path: Path, cut: str
) -> None:
    """What the chaos test finds, made deterministic: a turn managed on one store, its log cut
    where a SIGKILL can leave it, and the client's retry of that turn sent to a fresh process
    over the cut log."""
    from contextwarden.proxy import ProxyConfig
    from tests.proxy_harness import proxy_server

    headers = {"x-contextwarden-session": "crash", "x-api-key": "k"}
    messages: list[Any] = [{"role": "user", "content": "Read the files. (chaos crash)"}]
    with upstream(script) as api:
        config = ProxyConfig(upstream=api.url, window=WINDOW, store=str(tmp_path / "a.sqlite3"))
        with proxy_server(config) as url:
            for turn in range(3):
                body = {"model": "m", "max_tokens": 50, "messages": messages}
                reply = httpx.post(f"{url}/v1/messages", json=body, headers=headers, timeout=30)
                assert reply.status_code == 200, reply.text
                uses = reply.json()["content"]
                messages.append({"role": "assistant", "content": uses})
                result = {"type": "tool_result", "tool_use_id": uses[0]["id"]}
                messages.append(
                    {"role": "user", "content": [result | {"content": file_text(turn)}]}
                )
            # the turn the crash interrupts: the last one sent, or the session's first
            messages = messages[:1] if cut == "first-turn" else messages[:-2]
        with SqliteStore(config.store) as store:
            [session] = store.list_sessions()
            log = list(store.log(session))
        crashed = replace(config, store=str(tmp_path / "b.sqlite3"))
        cut_log = crash_state(log, cut)
        if cut == "before-record":  # the case this cut is for: compaction changed the tail
            assert isinstance(cut_log[-1], CompactionBoundary)
            assert derive_view(cut_log)[-1] != derive_view(cut_log[:-1])[-1]
        with SqliteStore(crashed.store) as store:
            store.append(session, cut_log)
        with proxy_server(crashed) as url:
            body = {"model": "m", "max_tokens": 50, "messages": messages}
            retried = httpx.post(f"{url}/v1/messages", json=body, headers=headers, timeout=30)
        with SqliteStore(crashed.store) as store:
            added = [e.message for e in store.log(session) if isinstance(e, MessageAdded)]
    assert retried.status_code == 200, retried.text
    assert len(added) == len(messages)  # every item once
