"""A multi-turn tool-calling agent loop driven with the real ``openai`` client (chat completions
and Responses, streaming off) against a scripted model on 127.0.0.1, through the library's
public API only: ConversationHistory, ContextManager.prepare, to_openai_request /
to_responses_request and the add_* methods. No conversion is written by hand here.

The scripted model answers from what it is sent (it reads the tool results in the request), and
the server checks every request: valid for the SDK's own types, every call answered in order,
and, for Responses, every item it produced before sent back exactly as it was.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.responses import ResponseInputItemParam, ToolParam
from pydantic import TypeAdapter
from servers import (
    OPENAI_PATH,
    RESPONSES_PATH,
    Captured,
    Reply,
    openai_completion,
    openai_error,
    openai_response,
    serving,
)

from contextwarden import ContextManager, ContextPolicy, ConversationHistory
from contextwarden.rules import validate

SYSTEM = "You are a careful assistant. Use the tools to answer."
TOOLS = [
    {
        "name": "list_files",
        "description": "List the files under a directory of the workspace",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "Read",
        "description": "Read a file of the workspace",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
]
QUESTION = "What is the key in notes.txt, and what does src/app.py define?"


@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(list[kind])


def _workspace(root: Path) -> Path:
    (root / "src").mkdir()
    (root / "notes.txt").write_text("the key is 42\n")
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    return root


def _run_tool(root: Path, name: str, arguments: dict[str, Any]) -> str:
    """The agent's real tools, bounded to the workspace."""
    target = (root / arguments["path"]).resolve()
    assert target.is_relative_to(root.resolve())
    if name == "list_files":
        return "\n".join(sorted(str(p.relative_to(root)) for p in target.rglob("*") if p.is_file()))
    return target.read_text()


class ScriptedModel:
    """Decides the next step from the tool results in the request, as an agent model would:
    list and read in parallel, then read the file the listing named, then answer."""

    def __init__(self) -> None:
        self.usage: list[tuple[int, int]] = []

    def step(self, results: list[str]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        """(text, calls) for a request holding these tool results (in order)."""
        if not results:
            return "Let me look.", [("list_files", {"path": "."}), ("Read", {"path": "notes.txt"})]
        if len(results) == 2:  # the listing may be cleared by now; the notes are the latest
            assert "the key is 42" in results[1]
            return "", [("Read", {"path": "src/app.py"})]
        assert len(results) == 3 and "def main" in results[2]
        return "The key is 42; src/app.py defines main().", []

    def tokens(self, captured: Captured) -> tuple[int, int]:
        """Usage this reply reports: the request's size in rough tokens, a fixed output."""
        counts = (len(json.dumps(captured.body)) // 4, 37 + len(self.usage))
        self.usage.append(counts)
        return counts


def _checked(reply: Callable[[Captured], Reply]) -> Callable[[Captured], Reply]:
    """A failed check answers 400 with its message, so the client raises it in the test."""

    def answer(captured: Captured) -> Reply:
        try:
            return reply(captured)
        except AssertionError as exc:
            return openai_error(400, "invalid_request_error", f"scripted check failed: {exc!r}")

    return answer


# ------------------------------------------------------------------ chat completions
def _chat_server(model: ScriptedModel, sent: list[dict[str, Any]]) -> Callable[[Captured], Reply]:
    @_checked
    def reply(captured: Captured) -> Reply:
        messages = captured.body["messages"]
        _adapter(ChatCompletionMessageParam).validate_python(messages)
        _adapter(ChatCompletionToolParam).validate_python(captured.body["tools"])
        assert messages[0] == {"role": "system", "content": SYSTEM}
        assistants = [m for m in messages if m["role"] == "assistant"]
        assert [_calls_of(m) for m in assistants] == [_calls_of(m) for m in sent]
        _check_chat_pairing(messages)
        results = [m["content"] for m in messages if m["role"] == "tool"]
        text, calls = model.step(results)
        prompt, completion = model.tokens(captured)
        body = openai_completion(text or None)
        message = body["choices"][0]["message"]
        if calls:
            turn = len(sent)
            message["tool_calls"] = [
                {
                    "id": f"call_{turn}{n}Dn2RJJSxzDm49vlVTeh",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": json.dumps(args, separators=(",", ":")),
                    },
                }
                for n, (name, args) in enumerate(calls)
            ]
            body["choices"][0]["finish_reason"] = "tool_calls"
        body["usage"].update(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        )
        sent.append(message)
        return Reply(body)

    return reply


def _calls_of(message: dict[str, Any]) -> list[Any]:
    return message.get("tool_calls") or []


def _check_chat_pairing(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered, in call order, by the tool messages after it."""
    for i, message in enumerate(messages):
        ids = [c["id"] for c in _calls_of(message)] if message["role"] == "assistant" else []
        answers = [m["tool_call_id"] for m in messages[i + 1 : i + 1 + len(ids)]]
        assert answers == ids


def _chat_loop(
    client: OpenAI, history: ConversationHistory, manager: ContextManager, root: Path
) -> None:
    for _turn in range(8):
        manager.prepare(history)
        completion = client.chat.completions.create(model="gpt-4.1", **history.to_openai_request())
        history.add_assistant_message(completion)
        assert completion.usage is not None
        assert history.estimate_tokens() == completion.usage.total_tokens
        calls = completion.choices[0].message.tool_calls or []
        if not calls:
            return
        history.add_tool_results(
            [
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": _run_tool(
                        root, call.function.name, json.loads(call.function.arguments)
                    ),
                }
                for call in calls
                if call.type == "function"
            ]
        )


def test_chat_completions_agent_loop_round_trips_through_the_real_client(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    model, sent = ScriptedModel(), []
    history = ConversationHistory(SYSTEM, TOOLS)
    history.add_user_message(QUESTION)
    with serving(OPENAI_PATH, _chat_server(model, sent)) as api:
        client = OpenAI(base_url=api.url + "/v1", api_key="test-key", max_retries=0)
        _chat_loop(client, history, ContextManager(), root)
    assert len(api.requests) == 3
    assert history.messages[-1].text == "The key is 42; src/app.py defines main()."
    assert [m.role for m in history.messages] == ["user", "assistant"] * 3
    assert validate(history.messages) == []


# ------------------------------------------------------------------ Responses
def _responses_server(
    model: ScriptedModel, sent: list[dict[str, Any]]
) -> Callable[[Captured], Reply]:
    @_checked
    def reply(captured: Captured) -> Reply:
        body = captured.body
        _adapter(ResponseInputItemParam).validate_python(body["input"])
        _adapter(ToolParam).validate_python(body["tools"])
        assert body["instructions"] == SYSTEM and body["store"] is False
        model_items = [
            i for i in body["input"] if i.get("type") not in (None, "function_call_output")
        ]
        assert model_items == sent  # every item the model produced, back exactly as it was
        _check_responses_pairing(body["input"])
        outputs = [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]
        text, calls = model.step(outputs)
        turn = len(api_turns(sent))
        output: list[dict[str, Any]] = [
            {
                "type": "reasoning",
                "id": f"rs_{turn}8af4030baa48193b0b43b4c2a176a1a",
                "summary": [{"type": "summary_text", "text": f"**Step {turn}**"}],
                "encrypted_content": f"gAAAAABor0A0-{turn}-" + "Zk9" * 30,
            }
        ]
        if text:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{turn}8af4033b4a481939b4ee1b5d3a4ea5f",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            )
        for n, (name, args) in enumerate(calls):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{turn}{n}af4034f6f08193a4e44c84c42d1bd0",
                    "call_id": f"call_{turn}{n}XJ0f1nGRvQ6f0dFNh9e5",
                    "name": name,
                    "arguments": json.dumps(args, separators=(",", ":")),
                    "status": "completed",
                }
            )
        sent.extend(output)
        prompt, completion = model.tokens(captured)
        return Reply(openai_response(output, input_tokens=prompt, output_tokens=completion))

    return reply


def api_turns(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reasoning items sent so far: one per reply."""
    return [i for i in sent if i["type"] == "reasoning"]


def _check_responses_pairing(items: list[dict[str, Any]]) -> None:
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert outputs == calls
    for i, item in enumerate(items):
        if item.get("type") == "function_call_output":
            earlier = [x.get("call_id") for x in items[:i] if x.get("type") == "function_call"]
            assert item["call_id"] in earlier


def _responses_loop(
    client: OpenAI, history: ConversationHistory, manager: ContextManager, root: Path
) -> None:
    for _turn in range(8):
        manager.prepare(history)
        response = client.responses.create(
            model="gpt-5", store=False, **history.to_responses_request()
        )
        history.add_assistant_message(response)
        assert response.usage is not None
        assert history.estimate_tokens() == response.usage.total_tokens
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return
        history.add_tool_results(
            [
                {
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": _run_tool(root, call.name, json.loads(call.arguments)),
                }
                for call in calls
            ]
        )


def test_responses_agent_loop_round_trips_items_exactly(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    model, sent = ScriptedModel(), []
    history = ConversationHistory(SYSTEM, TOOLS)
    history.add_user_message({"role": "user", "content": QUESTION})
    with serving(RESPONSES_PATH, _responses_server(model, sent)) as api:
        client = OpenAI(base_url=api.url + "/v1", api_key="test-key", max_retries=0)
        _responses_loop(client, history, ContextManager(), root)
    assert len(api.requests) == 3
    assert history.messages[-1].text == "The key is 42; src/app.py defines main()."
    assert validate(history.messages) == []
    final = history.to_responses_request()["input"]
    assert [i for i in final if i.get("type") == "reasoning"] == api_turns(sent)


def test_responses_loop_keeps_item_ids_when_compaction_clears_old_results(
    tmp_path: Path,
) -> None:
    """A small window: the manager clears old ``Read`` results between requests; the cleared
    outputs go back inside their original items and every call stays answered."""
    root = _workspace(tmp_path)
    (root / "notes.txt").write_text("the key is 42\n" + "filler line\n" * 1_500)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n" + "# pad\n" * 2_000)
    model, sent = ScriptedModel(), []
    policy = ContextPolicy(context_window=12_000, keep_recent_tool_results=1)
    manager = ContextManager(policy)
    history = ConversationHistory(SYSTEM, TOOLS)
    history.add_user_message(QUESTION)
    with serving(RESPONSES_PATH, _responses_server(model, sent)) as api:
        client = OpenAI(base_url=api.url + "/v1", api_key="test-key", max_retries=0)
        _responses_loop(client, history, manager, root)
    last = api.requests[-1].body["input"]
    outputs = [i["output"] for i in last if i.get("type") == "function_call_output"]
    assert policy.cleared_marker in outputs[1]  # the notes were read, then cleared
    assert "def main" in outputs[2]  # the latest result is kept
    assert len(api.requests) == 3 and validate(history.messages) == []


@pytest.mark.parametrize("api_path", [OPENAI_PATH, RESPONSES_PATH])
def test_a_history_built_on_one_api_gives_a_valid_request_for_the_other(
    api_path: str, tmp_path: Path
) -> None:
    root = _workspace(tmp_path)
    model, sent = ScriptedModel(), []
    history = ConversationHistory(SYSTEM, TOOLS)
    history.add_user_message(QUESTION)
    chat = api_path == OPENAI_PATH
    server, loop = (_chat_server, _chat_loop) if chat else (_responses_server, _responses_loop)
    with serving(api_path, server(model, sent)) as api:
        client = OpenAI(base_url=api.url + "/v1", api_key="test-key", max_retries=0)
        loop(client, history, ContextManager(), root)
    if chat:
        other = history.to_responses_request()
        _adapter(ResponseInputItemParam).validate_python(other["input"])
        _check_responses_pairing(other["input"])
        assert other["input"][-1] == {"role": "assistant", "content": sent[-1]["content"]}
    else:
        messages = history.to_openai_request()["messages"]
        _adapter(ChatCompletionMessageParam).validate_python(messages)
        _check_chat_pairing(messages)
        assert "gAAAA" not in json.dumps(messages)  # Responses reasoning stays out of chat
