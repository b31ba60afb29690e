"""The request shapes real agents send, through a real proxy to a scripted upstream on
127.0.0.1: Anthropic ``role: "system"`` messages, ``?beta=true`` and ``anthropic-beta``,
count_tokens for the managed conversation, Responses requests with only ``developer`` items,
probes, and the APIs' own compaction passed through untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai

from contextwarden.proxy.apis import interject, split_system
from contextwarden.stores import SqliteStore
from tests.proxy_harness import opened, prompt_tokens, proxy_server, text, upstream
from tests.test_proxy import KEY, SYSTEM, TOOLS, config, reader_script, run_agent

HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


def sessions_in(tmp_path: Path) -> list[str]:
    with SqliteStore(tmp_path / "proxy.sqlite3") as store:
        return store.list_sessions()


def test_system_messages_inside_messages_stay_in_place_and_count(tmp_path: Path) -> None:
    reminder = {"role": "system", "content": "The user switched to plan mode. " * 400}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        reminder,
        {"role": "user", "content": "plan it"},
    ]
    body = {"model": "m", "max_tokens": 10, "system": SYSTEM, "messages": messages}
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        reply = httpx.post(f"{url}/v1/messages", json=body, headers=HEADERS)
        shown = httpx.get(f"{url}/sessions/{sessions_in(tmp_path)[0]}").json()
    assert reply.status_code == 200, reply.text
    sent = api.messages_requests()[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "system", "user"]
    assert sent[2] == reminder
    assert shown["tokens"] > 2_000  # the reminder is counted with the system prompt


def test_system_messages_go_back_the_same_distance_from_the_end() -> None:
    items = [
        {"role": "system", "content": "a"},
        {"role": "user", "content": "1"},
        {"role": "assistant", "content": "2"},
        {"role": "system", "content": "b"},
        {"role": "user", "content": "3"},
    ]
    conversation, interjected = split_system(items)
    assert interject(conversation, interjected) == items
    compacted = [{"role": "user", "content": "summary"}, conversation[-1]]
    assert [m["content"] for m in interject(compacted, interjected)] == ["a", "summary", "b", "3"]


def test_beta_query_and_header_pass_through(tmp_path: Path) -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    beta = {**HEADERS, "anthropic-beta": "context-management-2025-06-27"}
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        reply = httpx.post(f"{url}/v1/messages?beta=true", json=body, headers=beta)
    assert reply.status_code == 200
    assert api.queries == ["beta=true"]
    assert api.requests[0][1]["anthropic-beta"] == "context-management-2025-06-27"


def test_count_tokens_counts_the_managed_conversation(tmp_path: Path) -> None:
    with (
        upstream(reader_script(14)) as api,
        proxy_server(config(api.url, tmp_path)) as url,
    ):
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        sent, _ = run_agent(client, False)
        kwargs: dict[str, Any] = {"model": "m", "system": SYSTEM, "tools": TOOLS}
        managed = client.messages.count_tokens(messages=sent, **kwargs).input_tokens
        plain = client.messages.count_tokens(
            messages=[{"role": "user", "content": "unknown conversation"}], **kwargs
        ).input_tokens
    counted = [b for p, _, b in api.requests if p == "/v1/messages/count_tokens"]
    whole = {"messages": sent, "system": SYSTEM, "tools": TOOLS}
    assert prompt_tokens(counted[0]) < prompt_tokens(whole) / 2  # the managed view + new turn
    assert counted[0]["messages"][-1]["content"][0]["text"] == sent[-1]["content"][0]["text"]
    assert counted[1]["messages"] == [{"role": "user", "content": "unknown conversation"}]
    assert 0 < plain < managed


def test_responses_with_only_developer_items_and_no_instructions(tmp_path: Path) -> None:
    developer = {"type": "message", "role": "developer", "content": "You are Codex."}
    with upstream(reader_script(2)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0))
        items: list[Any] = [developer, {"role": "user", "content": "Read the modules."}]
        for _ in range(3):
            reply = client.responses.create(model="m", input=items, store=False)
            items += [o.model_dump(exclude_none=True) for o in reply.output]
            calls = [o for o in reply.output if o.type == "function_call"]
            items += [
                {"type": "function_call_output", "call_id": c.call_id, "output": "x = 1"}
                for c in calls
            ]
    bodies = api.messages_requests("/v1/responses")
    assert len(bodies) == 3
    assert all(b["input"][0] == developer and b["store"] is False for b in bodies)
    assert len(sessions_in(tmp_path)) == 1


def test_probes_and_models(tmp_path: Path) -> None:
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        head = httpx.head(f"{url}/", headers=HEADERS)
        root = httpx.get(f"{url}/", headers=HEADERS)
        models = httpx.get(f"{url}/v1/models", headers=HEADERS)
        direct = httpx.head(f"{api.url}/", headers=HEADERS)
    assert head.status_code == direct.status_code  # the upstream's own answer to the probe
    assert root.status_code == models.status_code == 200
    assert [p for p, _, _ in api.requests] == ["/", "/v1/models"]
    assert models.json()["data"][0]["id"] == "scripted-1"


def test_the_apis_own_compaction_is_passed_through_untouched(tmp_path: Path) -> None:
    compacted = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": [{"type": "compaction", "content": "earlier: ..."}]},
            {"role": "user", "content": "go on"},
        ],
    }
    asked = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "context_management": {"edits": [{"type": "compact_20260112"}]},
    }
    responses = {
        "model": "m",
        "input": [
            {"type": "compaction", "encrypted_content": "..."},
            {"role": "user", "content": "x"},
        ],
    }
    with upstream(lambda p, b: text("ok")) as api, proxy_server(config(api.url, tmp_path)) as url:
        for path, body in (("/v1/messages", compacted), ("/v1/messages", asked)):
            assert httpx.post(f"{url}{path}", json=body, headers=HEADERS).status_code == 200
        assert httpx.post(f"{url}/v1/responses", json=responses, headers=HEADERS).status_code == 200
    assert [b for _, _, b in api.requests] == [compacted, asked, responses]
    assert sessions_in(tmp_path) == []
