"""The proxy with the real ``openai`` client: chat completions and Responses, streaming and not,
tool-calling loops that overflow a small window, against a scripted upstream on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextwarden.policy import ContextPolicy
from tests.proxy_harness import (
    admin_get,
    check_request,
    opened,
    prompt_tokens,
    proxy_server,
    upstream,
)
from tests.test_proxy import config, file_text, reader_script

WINDOW = 8_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
KEY = "sk-test-openai-0123456789"
TOOLS_CHAT = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        },
    }
]
TOOLS_RESPONSES = [
    {
        "type": "function",
        "name": "Read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        "strict": False,
    }
]


def chat_agent(client: openai.OpenAI, stream: bool) -> tuple[list[Any], str]:
    messages: list[Any] = [
        {"role": "system", "content": "You read code."},
        {"role": "user", "content": "Read every module and summarize."},
    ]
    while True:
        if stream:
            chunks = client.chat.completions.create(
                model="scripted-1",
                messages=messages,
                tools=TOOLS_CHAT,
                stream=True,
                stream_options={"include_usage": True},
            )
            content, calls = "", {}
            for chunk in chunks:
                for choice in chunk.choices:
                    content += choice.delta.content or ""
                    for call in choice.delta.tool_calls or []:
                        calls[call.index] = call
            message: dict[str, Any] = {"role": "assistant", "content": content or None}
            tool_calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for c in calls.values()
            ]
        else:
            reply = client.chat.completions.create(
                model="scripted-1", messages=messages, tools=TOOLS_CHAT
            )
            choice = reply.choices[0].message
            content = choice.content or ""
            message = {"role": "assistant", "content": choice.content}
            tool_calls = [c.model_dump() for c in choice.tool_calls or []]
        if tool_calls:
            message["tool_calls"] = tool_calls
        messages.append(message)
        if not tool_calls:
            return messages, content
        for call in tool_calls:
            n = int(call["id"].split("_")[1])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": file_text(n)})


def responses_agent(client: openai.OpenAI, stream: bool) -> tuple[list[Any], str]:
    items: list[Any] = [{"role": "user", "content": "Read every module and summarize."}]
    while True:
        kwargs = dict(
            model="scripted-1", instructions="You read code.", input=items, tools=TOOLS_RESPONSES
        )
        if stream:
            events = client.responses.create(stream=True, **kwargs)
            response = next(e.response for e in events if e.type == "response.completed")
        else:
            response = client.responses.create(**kwargs)
        output = [item.model_dump(exclude_none=True) for item in response.output]
        items.extend(output)
        calls = [o for o in output if o["type"] == "function_call"]
        if not calls:
            return items, response.output_text
        for call in calls:
            n = int(call["call_id"].split("_")[1])
            items.append(
                {"type": "function_call_output", "call_id": call["call_id"], "output": file_text(n)}
            )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_chat_completions_tool_loop_fits_the_window(tmp_path: Path, stream: bool) -> None:
    path = "/v1/chat/completions"
    with upstream(reader_script(14)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0))
        sent, answer = chat_agent(client, stream)
        sessions = admin_get(url, "/sessions").json()["sessions"]
        shown = admin_get(url, f"/sessions/{sessions[0]}").json()
    assert answer == "Read 14 files."
    bodies = api.messages_requests(path)
    assert len(bodies) == 15
    for body in bodies:
        check_request(body, LIMIT, path)
        assert body["messages"][0] == {"role": "system", "content": "You read code."}
        assert body["tools"] == TOOLS_CHAT
    whole = {"messages": sent[:-1], "tools": TOOLS_CHAT}
    assert prompt_tokens(bodies[-1], path) < prompt_tokens(whole, path) / 2
    headers = [h for at, h, _ in api.requests if at == path]
    assert all(h["authorization"] == f"Bearer {KEY}" for h in headers)
    assert shown["usage_records"] == 15  # every reply's usage anchored the ledger
    assert shown["compactions"]  # each says what it took out of the context, and how to get it back
    for compaction in shown["compactions"]:
        lost = compaction["lost"]
        assert lost["tokens"] > 0 and lost["items"]
        assert all(item["refs"] for item in lost["items"] if item["kind"] == "tool_result")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_tool_loop_fits_the_window(tmp_path: Path, stream: bool) -> None:
    path = "/v1/responses"
    with upstream(reader_script(14)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0))
        sent, answer = responses_agent(client, stream)
    assert answer == "Read 14 files."
    bodies = api.messages_requests(path)
    assert len(bodies) == 15
    for body in bodies:
        check_request(body, LIMIT, path)
        assert body["instructions"] == "You read code."
    whole = {"input": sent[:-1], "tools": TOOLS_RESPONSES}
    assert prompt_tokens(bodies[-1], path) < prompt_tokens(whole, path) / 2
    # the call ids the model made are the ones it gets answers for
    last_ids = [
        i["call_id"] for i in bodies[-1]["input"] if i.get("type") == "function_call_output"
    ]
    assert last_ids[-1] == "call_13"


def test_openai_errors_keep_their_shape(tmp_path: Path) -> None:
    with upstream(reader_script(1)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0))
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": "word " * 40_000},  # nothing we may shorten
                    {"role": "user", "content": "hi"},
                ],
            )
    body = json.loads(caught.value.response.text)
    assert body["error"]["type"] == "context_length_exceeded"
    assert api.messages_requests("/v1/chat/completions") == []


def test_responses_continuing_server_state_pass_through_unmanaged(tmp_path: Path) -> None:
    body = {
        "model": "m",
        "previous_response_id": "resp_1",
        "input": [{"type": "function_call_output", "call_id": "call_0", "output": "x"}],
    }
    with upstream(reader_script(3)) as api, proxy_server(config(api.url, tmp_path)) as url:
        reply = httpx.post(f"{url}/v1/responses", json=body, headers={"authorization": "Bearer k"})
        sessions = admin_get(url, "/sessions").json()["sessions"]
    assert reply.status_code == 200 and reply.json()["object"] == "response"
    assert api.messages_requests("/v1/responses") == [body]  # byte for byte what was sent
    assert sessions == []
