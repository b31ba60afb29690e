"""``--summarizer upstream``: summaries written by the upstream model itself, asked directly
(never through the proxy) and marked as summary requests; a summary request that does reach the
proxy is forwarded unmanaged (the recursion guard)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from contextwarden.policy import ContextPolicy
from contextwarden.proxy import ProxyConfig
from contextwarden.proxy.config import SummaryApiChoice
from contextwarden.summarizers.llm import QUERY_SOURCE_HEADER
from tests.proxy_harness import (
    Scripted,
    check_request,
    last_results,
    opened,
    proxy_server,
    text,
    tool_call,
    upstream,
)
from tests.test_proxy import KEY, file_text

EPHEMERAL = {"type": "ephemeral"}
WINDOW = 8_000
SUMMARY = "The user asked to deploy every module; modules 0 to 5 were deployed without errors."


def deployer(path: str, body: dict[str, Any]) -> Scripted:
    """Deploys 10 modules (a tool microcompact may not clear), or writes a summary when asked."""
    if "tools" not in body:
        return text(SUMMARY)
    done = last_results(path, body)
    step = int(done[-1].split("_")[1]) + 1 if done else 0
    if step >= 10:
        return text("Deployed.")
    return tool_call("Deploy", f"call_{step}", module=f"m{step}")


def summarizing(url: str, tmp_path: Path, api: SummaryApiChoice) -> ProxyConfig:
    """A proxy whose summaries the scripted upstream writes, asked over ``api``."""
    return ProxyConfig(
        upstream=url,
        window=WINDOW,
        store=str(tmp_path / "p.sqlite3"),
        summarizer="upstream",
        summary_model="scripted-summarizer",
        summary_api=api,
    )


def deploy_all(url: str, output: Callable[[int], str]) -> list[Any]:
    """Drive the scripted deployer through the proxy at ``url`` with the real Anthropic SDK until
    it stops calling tools; module ``n``'s Deploy call returns ``output(n)``. The conversation."""
    client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
    tools = [
        {"name": "Deploy", "description": "Deploy a module", "input_schema": {"type": "object"}}
    ]
    messages: list[Any] = [{"role": "user", "content": "Deploy every module."}]
    while True:
        reply = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return messages
        result = [
            {"type": "tool_result", "tool_use_id": u.id, "content": output(int(u.id[5:]))}
            for u in uses
        ]
        messages.append({"role": "user", "content": result})


def test_upstream_model_writes_the_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("CONTEXTWARDEN_SUMMARY_API_KEY", "sk-summary-key")
    with upstream(deployer) as api:
        config = summarizing(api.url, tmp_path, "anthropic")
        with proxy_server(config) as url:
            messages = deploy_all(url, file_text)
            guarded = httpx.post(
                f"{url}/v1/messages",
                headers={QUERY_SOURCE_HEADER: "compact"},
                json={"model": "m", "max_tokens": 10, "messages": messages[:1]},
            )
    summaries = [(h, b) for at, h, b in api.requests if at == "/v1/messages" and "tools" not in b]
    assert summaries, "the upstream was never asked for a summary"
    for headers, body in summaries[:-1]:
        assert headers[QUERY_SOURCE_HEADER] == "compact"
        assert headers["authorization"] == "Bearer sk-summary-key"  # never the client's key
        assert body["model"] == "scripted-summarizer"
    # a client's request is the client's, whatever it claims: managed (the proxy placed its
    # cache breakpoint), and the claim dropped
    assert guarded.status_code == 200
    [first] = summaries[-1][1]["messages"][0]["content"]
    assert first == {"type": "text", "text": messages[0]["content"], "cache_control": EPHEMERAL}
    assert QUERY_SOURCE_HEADER not in summaries[-1][0]
    limit = ContextPolicy(context_window=WINDOW).effective_window
    managed = [b for at, _, b in api.requests if at == "/v1/messages" and "tools" in b]
    for body in managed:
        check_request(body, limit)
    assert any(SUMMARY in str(b["messages"]) for b in managed)


def test_an_openai_upstream_writes_the_summaries_over_chat_completions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--summary-api openai``: an agent on chat completions (Codex, aider, qwen-code) behind a
    proxy whose upstream speaks only OpenAI's API gets its summaries from that API, with the
    summary key and model, not the client's."""
    import openai

    monkeypatch.setenv("CONTEXTWARDEN_SUMMARY_API_KEY", "sk-summary-key")
    tools = [{"type": "function", "function": {"name": "Deploy", "parameters": {"type": "object"}}}]
    path = "/v1/chat/completions"
    with upstream(deployer) as api:
        config = summarizing(api.url, tmp_path, "openai")
        with proxy_server(config) as url:
            client = opened(openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0))
            messages: list[Any] = [{"role": "user", "content": "Deploy every module."}]
            while True:
                reply = (
                    client.chat.completions.create(model="m", tools=tools, messages=messages)
                    .choices[0]
                    .message
                )
                messages.append(reply.model_dump(exclude_none=True))
                if not reply.tool_calls:
                    break
                for call in reply.tool_calls:
                    n = int(call.id.split("_")[1])
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": file_text(n)}
                    )
    assert api.messages_requests() == []  # nothing asked in the Anthropic API
    summaries = [(h, b) for at, h, b in api.requests if at == path and "tools" not in b]
    assert summaries, "the upstream was never asked for a summary"
    for headers, body in summaries:
        assert headers[QUERY_SOURCE_HEADER] == "compact"
        assert headers["authorization"] == "Bearer sk-summary-key"
        assert body["model"] == "scripted-summarizer"
    limit = ContextPolicy(context_window=WINDOW).effective_window
    managed = [b for at, _, b in api.requests if at == path and "tools" in b]
    for body in managed:
        check_request(body, limit, path)
    assert any(SUMMARY in str(b["messages"]) for b in managed)


def test_an_upstream_summary_that_never_saves_tokens_backs_off_and_never_opens_the_breaker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A summary the upstream writes that is larger than what it replaces (a model that copies
    the transcript out) is declined, and autocompact backs off for ``retry_after_tokens`` of
    growth (``manager.py``): the proxy asks for far fewer summaries than it forwards requests
    over the threshold, the breaker stays closed, and every request still fits the window."""
    from contextwarden.compaction.breaker import BACKOFF_KEY, BREAKER_KEY
    from contextwarden.stores import SqliteStore

    monkeypatch.setenv("CONTEXTWARDEN_SUMMARY_API_KEY", "sk-summary-key")
    modules = 50

    def copier(path: str, body: dict[str, Any]) -> Scripted:
        if "tools" not in body:
            return text(" ".join(file_text(n) for n in range(8)))
        done = last_results(path, body)
        step = int(done[-1].split("_")[1]) + 1 if done else 0
        if step >= modules:
            return text("Deployed.")
        return tool_call("Deploy", f"call_{step}", module=f"m{step}")

    with upstream(copier) as api:
        with proxy_server(summarizing(api.url, tmp_path, "anthropic")) as url:
            deploy_all(url, lambda n: file_text(n)[:800])
    policy = ContextPolicy(context_window=WINDOW)
    managed = [b for at, _, b in api.requests if at == "/v1/messages" and "tools" in b]
    for body in managed:
        check_request(body, policy.effective_window)
    asked = [b for at, _, b in api.requests if at == "/v1/messages" and "tools" not in b]
    # one summary is asked in parts when the transcript is too long for one request
    calls = [b for b in asked if not str(b["messages"][0]["content"]).startswith("This is part 2")]
    store = SqliteStore(tmp_path / "p.sqlite3")
    [session] = store.list_sessions()
    metadata = store.load(session).metadata
    store.close()
    assert BREAKER_KEY not in metadata  # no failure was ever counted
    assert metadata[BACKOFF_KEY]["declined_at"] > 0
    # the baseline asked 3 times, opened the breaker and truncated from then on; each turn adds
    # ~250 tokens here, so the 520 tokens of growth (doubled after each decline in a row) come
    # every other request at most
    assert 3 < len(calls) <= len(managed) // 2
