"""Two proxy processes sharing one PostgreSQL store: 50 concurrent sessions whose turns
alternate between the processes lose and duplicate nothing, every upstream request is valid, and
killing a process mid-request loses nothing it acknowledged. Loopback only, bounded in count
(50 sessions x 3 turns) and time (every request has a timeout)."""

from __future__ import annotations

import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from contextwarden.eval.proxy_process import proxy_process
from contextwarden.log import MessageAdded
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.matching import credential_scope, recorded_turns, scoped
from contextwarden.stores import PostgresStore
from tests.proxy_harness import Scripted, check_request, last_results, text, tool_call, upstream
from tests.test_proxy import file_text

SESSIONS = 50
TURNS = 3
WINDOW = 8_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
TIMEOUT = 60.0
SLOW = "slow"
"""Session whose replies the scripted upstream delays, so a process can be killed mid-request."""


def script(path: str, body: dict[str, Any]) -> Scripted:
    done = last_results(path, body)
    step = int(done[-1].split("_")[1]) + 1 if done else 0
    if any(SLOW in str(m.get("content")) for m in body["messages"][:1]):
        time.sleep(3)
    if step >= TURNS:
        return text("done")
    return tool_call("Read", f"call_{step}", file_path=f"f{step}.py")


def store_options(upstream_url: str, dsn: str, schema: str) -> list[str]:
    """The options of a proxy process over the PostgreSQL store."""
    return ["--upstream", upstream_url, "--store", dsn, "--schema", schema, "--window", str(WINDOW)]


def proxy(
    upstream_url: str, dsn: str, schema: str
) -> AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]:
    """A proxy process over the PostgreSQL store."""
    return proxy_process(store_options(upstream_url, dsn, schema))


def stored(name: str) -> str:
    """The stored id of session ``name`` for requests made with the key ``k``."""
    return scoped(name, credential_scope({"x-api-key": "k"}))


def converse(urls: list[str], session: int, first: str = "Read the files.") -> list[Any]:
    """One agent: each turn goes to the other process; returns what it sent last."""
    messages: list[Any] = [{"role": "user", "content": f"{first} (session {session})"}]
    headers = {"x-contextwarden-session": f"pg-{session}", "x-api-key": "k"}
    for turn in range(TURNS + 1):
        body = {"model": "m", "max_tokens": 50, "messages": messages}
        reply = httpx.post(
            f"{urls[(session + turn) % 2]}/v1/messages", json=body, headers=headers, timeout=TIMEOUT
        )
        assert reply.status_code == 200, reply.text
        content = reply.json()["content"]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return messages
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u["id"], "content": file_text(turn)}
                    for u in uses
                ],
            }
        )
    raise AssertionError("the scripted model never finished")


def added(store: PostgresStore, session: str) -> int:
    return sum(isinstance(e, MessageAdded) for e in store.log(session))


def test_two_processes_share_sessions_without_loss(postgres_dsn: str, schema: str) -> None:
    with (
        upstream(script) as api,
        proxy(api.url, postgres_dsn, schema) as (a, _),
        proxy(api.url, postgres_dsn, schema) as (b, _),
        ThreadPoolExecutor(SESSIONS) as pool,
    ):
        finals = list(pool.map(lambda i: converse([a, b], i), range(SESSIONS)))
        # the same request to both processes at once: one manages it, the other replays it
        again = {"model": "m", "max_tokens": 50, "messages": finals[0][:-1]}
        headers = {"x-contextwarden-session": "pg-0", "x-api-key": "k"}
        both = list(
            pool.map(
                lambda u: httpx.post(
                    f"{u}/v1/messages", json=again, headers=headers, timeout=TIMEOUT
                ),
                [a, b],
            )
        )
    assert [r.status_code for r in both] == [200, 200]
    bodies = api.messages_requests()
    assert len(bodies) == SESSIONS * (TURNS + 1) + 2
    for body in bodies:
        check_request(body, LIMIT)
    assert bodies[-1]["messages"] == bodies[-2]["messages"]
    with PostgresStore(postgres_dsn, schema=schema) as store:
        assert len(store.list_sessions()) == SESSIONS
        for i, sent in enumerate(finals):
            turns = recorded_turns(store.log(stored(f"pg-{i}")))
            incoming = [t.incoming for t in turns]
            assert incoming[: TURNS + 1] == list(range(1, len(sent), 2)), incoming
            assert added(store, stored(f"pg-{i}")) == len(sent) - 1  # every item once, none twice


def test_killing_a_process_mid_request_loses_nothing_acknowledged(
    postgres_dsn: str, schema: str
) -> None:
    with upstream(script) as api, proxy(api.url, postgres_dsn, schema) as (b, _):
        with proxy(api.url, postgres_dsn, schema) as (a, victim):
            messages: list[Any] = [{"role": "user", "content": f"{SLOW}: read the files"}]
            headers = {"x-contextwarden-session": "victim", "x-api-key": "k"}
            first = httpx.post(
                f"{a}/v1/messages",
                headers=headers,
                timeout=TIMEOUT,
                json={"model": "m", "max_tokens": 50, "messages": messages},
            )
            messages.append({"role": "assistant", "content": first.json()["content"]})
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "call_0", "content": "x = 1"}
                    ],
                }
            )
            body = {"model": "m", "max_tokens": 50, "messages": messages}
            with ThreadPoolExecutor(1) as pool:
                pending = pool.submit(
                    httpx.post, f"{a}/v1/messages", json=body, headers=headers, timeout=TIMEOUT
                )
                deadline = time.monotonic() + 20
                while len(api.messages_requests()) < 2 and time.monotonic() < deadline:
                    time.sleep(0.05)
                victim.send_signal(signal.SIGKILL)
                with pytest.raises(httpx.HTTPError):
                    pending.result()
        retried = httpx.post(f"{b}/v1/messages", json=body, headers=headers, timeout=TIMEOUT)
    assert retried.status_code == 200
    second, third = api.messages_requests()[1:]
    assert third["messages"] == second["messages"]  # the killed turn's managed view, replayed
    with PostgresStore(postgres_dsn, schema=schema) as store:
        assert added(store, stored("victim")) == len(messages)
        assert [t.incoming for t in recorded_turns(store.log(stored("victim")))] == [1, 3]


def test_a_broken_store_is_an_api_error_not_an_unmanaged_request(
    postgres_dsn: str, schema: str
) -> None:
    import psycopg

    from contextwarden.proxy import ProxyConfig
    from tests.proxy_harness import ADMIN_TOKEN, admin_get, proxy_server

    with upstream(script) as api:
        config = ProxyConfig(
            upstream=api.url,
            window=WINDOW,
            store=postgres_dsn,
            schema=schema,
            admin_token=ADMIN_TOKEN,
        )
        with proxy_server(config) as url:
            body = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
            assert httpx.post(f"{url}/v1/messages", json=body, timeout=TIMEOUT).status_code == 200
            with psycopg.connect(postgres_dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            broken = httpx.post(f"{url}/v1/messages", json=body, timeout=TIMEOUT)
            metrics = admin_get(url, "/metrics").text
    assert broken.status_code == 503
    assert broken.json()["type"] == "error" and broken.json()["error"]["type"] == "api_error"
    assert "PostgreSQL error" in broken.json()["error"]["message"]
    assert len(api.messages_requests()) == 1  # nothing unmanaged was sent
    assert 'contextwarden_proxy_errors_total{reason="store"} 1' in metrics
