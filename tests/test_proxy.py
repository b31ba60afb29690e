"""The proxy end to end: the real ``anthropic`` client → a real uvicorn proxy → a scripted
upstream, all on 127.0.0.1, running tool-calling conversations that overflow a small window."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from contextwarden.errors import ProxyConfigError
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import ProxyConfig
from contextwarden.proxy.matching import credential_scope, scoped
from contextwarden.proxy.serve import build_app
from contextwarden.proxy.upstream import environment_proxy
from contextwarden.stores import SqliteStore
from contextwarden.wire.anthropic_cache import count_markers
from tests.proxy_harness import (
    ADMIN_TOKEN,
    Scripted,
    admin_get,
    check_request,
    last_results,
    opened,
    prompt_tokens,
    proxy_server,
    text,
    tool_call,
    upstream,
)

WINDOW = 8_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
SYSTEM = "You are a careful code reader."
TOOLS = [
    {
        "name": "Read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    }
]
KEY = "sk-ant-test-key-0123456789"
EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture(autouse=True)
def _key_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK would send a bearer token from the environment instead of our test key."""
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def sid(name: str) -> str:
    """The stored id of session ``name`` for requests made with ``KEY``."""
    return scoped(name, credential_scope({"x-api-key": KEY}))


def reader_script(calls: int) -> Any:
    """The scripted model: reads files ``call_0`` … ``call_{calls-1}``, then answers. It looks
    only at the last message, which every managed conversation keeps."""

    def reply(path: str, body: dict[str, Any]) -> Scripted:
        done = last_results(path, body)
        step = int(done[-1].split("_")[1]) + 1 if done else 0
        if step >= calls:
            return text(f"Read {calls} files.")
        return tool_call("Read", f"call_{step}", file_path=f"src/mod{step}.py")

    return reply


def file_text(n: int) -> str:
    return "\n".join(
        f"def f{n}_{i}(x):  # line {i} of module {n}\n    return x * {i}" for i in range(60)
    )


def run_agent(client: anthropic.Anthropic, stream: bool, **extra: Any) -> tuple[list[Any], str]:
    """A plain SDK tool loop that resends the whole conversation each turn."""
    messages: list[Any] = [{"role": "user", "content": "Read every module and summarize."}]
    while True:
        kwargs = dict(model="scripted-1", max_tokens=200, system=SYSTEM, tools=TOOLS, **extra)
        if stream:
            with client.messages.stream(messages=messages, **kwargs) as events:
                final = events.get_final_message()
        else:
            final = client.messages.create(messages=messages, **kwargs)
        messages.append({"role": "assistant", "content": [b.model_dump() for b in final.content]})
        uses = [b for b in final.content if b.type == "tool_use"]
        if not uses:
            return messages, final.content[0].text  # type: ignore[union-attr]
        results = [
            {"type": "tool_result", "tool_use_id": u.id, "content": file_text(int(u.id[5:]))}
            for u in uses
        ]
        messages.append({"role": "user", "content": results})


def config(api_url: str, tmp_path: Path, window: int = WINDOW) -> ProxyConfig:
    store = str(tmp_path / "proxy.sqlite3")
    return ProxyConfig(upstream=api_url, window=window, store=store, admin_token=ADMIN_TOKEN)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_tool_loop_fits_the_window(tmp_path: Path, stream: bool) -> None:
    with upstream(reader_script(14)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        sent, answer = run_agent(client, stream)
    assert answer == "Read 14 files."
    bodies = api.messages_requests()
    assert len(bodies) == 15
    for body in bodies:
        check_request(body, LIMIT)
        # the client placed no breakpoints: the proxy puts them where they pay (--cache auto)
        assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
        assert body["tools"] == [*TOOLS[:-1], {**TOOLS[-1], "cache_control": EPHEMERAL}]
        assert "cache_control" in body["messages"][-1]["content"][-1]
        assert count_markers(body) <= 4
        assert body.get("stream", False) is stream
    whole = {"messages": sent[:-1], "system": SYSTEM, "tools": TOOLS}
    assert prompt_tokens(bodies[-1]) < prompt_tokens(whole) / 2, "the proxy never compacted"
    headers = [h for path, h, _ in api.requests if path == "/v1/messages"]
    assert all(h["authorization"] == f"Bearer {KEY}" for h in headers)
    assert not any(k.startswith("x-contextwarden") for h in headers for k in h)


def test_the_clients_own_breakpoints_are_kept_and_none_added(tmp_path: Path) -> None:
    marked = [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
    with upstream(reader_script(3)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        client.messages.create(
            model="scripted-1",
            max_tokens=200,
            system=marked,  # type: ignore[arg-type]
            tools=TOOLS,
            messages=[{"role": "user", "content": "Read every module and summarize."}],
        )
    (body,) = api.messages_requests()
    assert body["system"] == marked and body["tools"] == TOOLS
    assert count_markers(body) == 1


def test_cache_off_adds_no_breakpoints(tmp_path: Path) -> None:
    off = replace(config("http://127.0.0.1:1", tmp_path), cache="off")
    with upstream(reader_script(14)) as api, proxy_server(replace(off, upstream=api.url)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        run_agent(client, False)
    bodies = api.messages_requests()
    assert all(b["system"] == SYSTEM and count_markers(b) == 0 for b in bodies)


def test_a_retry_gets_the_same_managed_conversation(tmp_path: Path) -> None:
    with upstream(reader_script(14)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        sent, _ = run_agent(client, False)
        before = len(api.messages_requests())
        again = sent[:-1]  # the last request, sent once more (the client retries it)
        client.messages.create(
            model="scripted-1", max_tokens=200, system=SYSTEM, tools=TOOLS, messages=again
        )
        bodies = api.messages_requests()
        assert len(bodies) == before + 1
        assert bodies[-1]["messages"] == bodies[before - 1]["messages"]
        # an earlier turn, retried after later ones: the view that turn got, not a new one
        client.messages.create(
            model="scripted-1", max_tokens=200, system=SYSTEM, tools=TOOLS, messages=sent[:5]
        )
        assert api.messages_requests()[-1]["messages"] == bodies[2]["messages"]


def test_managed_prefix_changes_only_at_compactions(tmp_path: Path) -> None:
    with upstream(reader_script(14)) as api, proxy_server(config(api.url, tmp_path)) as url:
        headers = {"x-contextwarden-session": "stable"}
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        run_agent(client, False, extra_headers=headers)
        compactions = len(admin_get(url, f"/sessions/{sid('stable')}").json()["compactions"])
    bodies = api.messages_requests()
    kept = changed = 0
    for before, after in itertools.pairwise(bodies):
        n = len(before["messages"])
        prefix = after["messages"][:n]
        # the last message's cache breakpoint moves; compare without it
        if _plain(prefix) == _plain(before["messages"]):
            kept += 1
        else:
            changed += 1
    assert kept > 0 and changed > 0
    assert changed <= compactions, f"prefix changed {changed} times, {compactions} compactions"


def _plain(messages: list[dict[str, Any]]) -> str:
    return json.dumps(
        [
            [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]
            for m in messages
        ]
    )


def test_branching_conversation_continues_in_a_fork(tmp_path: Path) -> None:
    with upstream(reader_script(3)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        sent, _ = run_agent(client, False)
        # deeper than the few trailing items an agent rewrites (EDIT_DEPTH): a branch
        edited = [
            *sent[:2],
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "edited"}],
            },
        ]
        client.messages.create(
            model="scripted-1", max_tokens=200, system=SYSTEM, tools=TOOLS, messages=edited
        )
        assert api.messages_requests()[-1]["messages"][-1]["content"][0]["content"] == "edited"
    with SqliteStore(tmp_path / "proxy.sqlite3") as store:
        ids = store.list_sessions()
    assert len(ids) == 2 and any(i.startswith("f-") for i in ids)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate"}),
        (400, {"type": "invalid_request_error", "message": "max_tokens: 10 > 8 (read first)"}),
    ],
)
def test_upstream_errors_come_back_unchanged(
    tmp_path: Path, status: int, error: dict[str, str]
) -> None:
    with (
        upstream(lambda path, body: Scripted(status=status, error=error)) as api,
        proxy_server(config(api.url, tmp_path)) as url,
    ):
        reply = httpx.post(
            f"{url}/v1/messages",
            headers={"x-api-key": KEY},
            json={"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
        )
    assert reply.status_code == status
    assert reply.json() == {"type": "error", "error": error}
    assert reply.headers["request-id"] == "req_scripted"


def test_prompt_too_long_compacts_once_and_retries(tmp_path: Path) -> None:
    answers = iter(
        [
            Scripted(
                status=400,
                error={
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens",
                },
            )
        ]
    )

    def reply(path: str, body: dict[str, Any]) -> Scripted:
        return next(answers, text("done"))

    history = _long_history(12)
    with upstream(reply) as api, proxy_server(config(api.url, tmp_path, 60_000)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        final = client.messages.create(model="m", max_tokens=10, tools=TOOLS, messages=history)
    assert final.content[0].text == "done"  # type: ignore[union-attr]
    first, second = api.messages_requests()
    assert len(second["messages"]) < len(first["messages"])
    assert check_request(second, 60_000) < check_request(first, 60_000)


def _long_history(calls: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read them all."}]
    for n in range(calls):
        use = {
            "type": "tool_use",
            "id": f"call_{n}",
            "name": "Read",
            "input": {"file_path": f"m{n}"},
        }
        messages.append({"role": "assistant", "content": [use]})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"call_{n}", "content": file_text(n)}
                ],
            }
        )
    return messages


def test_a_conversation_that_cannot_fit_is_refused_not_sent(tmp_path: Path) -> None:
    huge = "word " * 40_000  # a system prompt: nothing the proxy may shorten
    with (
        upstream(lambda path, body: text("never")) as api,
        proxy_server(config(api.url, tmp_path)) as url,
    ):
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model="m", max_tokens=10, system=huge, messages=[{"role": "user", "content": "hi"}]
            )
    assert "contextwarden proxy" in str(caught.value) and "window" in str(caught.value)
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert api.messages_requests() == []


def test_malformed_request_gets_an_api_error(tmp_path: Path) -> None:
    with (
        upstream(lambda path, body: text("never")) as api,
        proxy_server(config(api.url, tmp_path)) as url,
    ):
        reply = httpx.post(f"{url}/v1/messages", json={"model": "m", "messages": "nope"})
        empty = httpx.post(f"{url}/v1/messages", json={"model": "m", "messages": []})
        bad_role = httpx.post(
            f"{url}/v1/messages",
            json={
                "model": "m",
                "messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}],
            },
        )
    assert reply.status_code == 400 and reply.json()["type"] == "error"
    assert "'messages' list" in reply.json()["error"]["message"]
    assert bad_role.status_code == 400 and "message 1" in bad_role.json()["error"]["message"]
    assert empty.status_code == 400 and "empty" in empty.json()["error"]["message"]
    assert api.messages_requests() == []


def test_models_count_tokens_metrics_and_sessions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="contextwarden.proxy")
    with upstream(reader_script(2)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        assert [m.id for m in client.models.list()] == ["scripted-1"]
        counted = client.messages.count_tokens(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert counted.input_tokens > 0
        sent, _ = run_agent(client, False, extra_headers={"x-contextwarden-session": "demo-1"})
        metrics = admin_get(url, "/metrics").text
        listed = admin_get(url, "/sessions").json()
        shown = admin_get(url, f"/sessions/{sid('demo-1')}").json()
        missing = admin_get(url, "/sessions/nope")
    assert 'contextwarden_proxy_requests_total{api="anthropic",status="200"} 3' in metrics
    assert listed == {"sessions": [sid("demo-1")]}
    assert shown["turns"] == 3 and shown["incoming_items"] == len(sent) - 1
    assert shown["usage_records"] == 3
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "contextwarden.proxy"]
    managed = [line for line in lines if "session" in line]
    assert [line["session"] for line in managed] == [sid("demo-1")] * 3
    assert all(set(line) >= {"tokens", "rungs", "upstream_ms", "status"} for line in managed)
    # one line per request, every route: the models list, the token count, the admin views
    routes = [(line["method"], line["path"], line["status"]) for line in lines]
    assert routes == [
        ("GET", "/v1/models", 200),
        ("POST", "/v1/messages/count_tokens", 200),
        *[("POST", "/v1/messages", 200)] * 3,
        ("GET", "/metrics", 200),
        ("GET", "/sessions", 200),
        ("GET", f"/sessions/{sid('demo-1')}", 200),
        ("GET", "/sessions/nope", 404),
    ]
    assert all(line["client"].startswith("127.0.0.1:") for line in lines)
    assert KEY not in caplog.text
    assert missing.status_code == 404


def test_options_come_from_the_environment() -> None:
    env = {
        "CONTEXTWARDEN_UPSTREAM": "http://127.0.0.1:1",
        "CONTEXTWARDEN_WINDOW": "30000",
        "CONTEXTWARDEN_LISTEN": "0.0.0.0:9000",
        "CONTEXTWARDEN_MAX_SESSIONS": "50",
    }
    config = ProxyConfig.from_env(env, window=40_000)
    assert (config.upstream, config.window, config.listen, config.max_sessions) == (
        "http://127.0.0.1:1",
        40_000,
        "0.0.0.0:9000",
        50,
    )
    with pytest.raises(Exception, match="CONTEXTWARDEN_WINDOW must be a number"):
        ProxyConfig.from_env({**env, "CONTEXTWARDEN_WINDOW": "lots"})
    with pytest.raises(ProxyConfigError, match="max_sessions must be a positive number"):
        ProxyConfig.from_env({**env, "CONTEXTWARDEN_MAX_SESSIONS": "0"})


def test_max_sessions_bounds_the_histories_in_memory(tmp_path: Path) -> None:
    store = str(tmp_path / "p.sqlite3")
    app = build_app(ProxyConfig(upstream="http://127.0.0.1:1", store=store, max_sessions=3))
    assert app.state.proxy.sessions.max_open == 3  # the LRU itself: tests/test_proxy_sessions.py
    app.state.proxy.sessions.store.close()


def test_inspect_reads_a_proxy_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from contextwarden.cli import main

    with upstream(reader_script(3)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        run_agent(client, False, extra_headers={"x-contextwarden-session": "agent-7"})
    store = str(tmp_path / "proxy.sqlite3")
    with pytest.raises(SystemExit) as done:
        main(["inspect", store, "--session", sid("agent-7"), "--json"])
    assert done.value.code == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["messages"] == 7 and shown["violations"] == []
    assert shown["tool_calls_by_tool"]["Read"] == 3


def test_a_slow_session_does_not_hold_up_others(tmp_path: Path) -> None:
    import threading
    import time

    def reply(path: str, body: dict[str, Any]) -> Scripted:
        if "slow" in str(body["messages"][0]):
            time.sleep(3)
        return text("ok")

    def ask(url: str, words: str) -> float:
        started = time.perf_counter()
        answer = httpx.post(
            f"{url}/v1/messages",
            timeout=30,
            json={"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": words}]},
        )
        assert answer.status_code == 200
        return time.perf_counter() - started

    with upstream(reply) as api, proxy_server(config(api.url, tmp_path)) as url:
        slow = threading.Thread(target=ask, args=(url, "a slow task"))
        slow.start()
        while not api.messages_requests():
            time.sleep(0.01)  # the slow request is upstream now
        fast = ask(url, "a quick task")
        still_waiting = slow.is_alive()
        slow.join()
    assert still_waiting and fast < 2.0, f"the quick session took {fast:.2f} s"


def test_the_upstream_is_reached_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://gateway.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert environment_proxy("https://api.anthropic.com") == "http://gateway.internal:3128"
    assert environment_proxy("http://127.0.0.1:8080") is None  # NO_PROXY
    assert environment_proxy("http://models.internal") is None  # no HTTP_PROXY
    monkeypatch.setenv("ALL_PROXY", "http://all.internal:3128")
    assert environment_proxy("http://models.internal") == "http://all.internal:3128"
