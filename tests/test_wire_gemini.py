"""The Gemini API wire: contents, responses and streams built with the real ``google.genai``
SDK types, read into our messages and written back byte for byte where the API requires it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from contextwarden import ConversationHistory
from contextwarden.errors import FormatError, ToolPairingError
from contextwarden.model import (
    FrozenDict,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from contextwarden.rules import validate
from contextwarden.wire.anthropic import messages_to_wire
from contextwarden.wire.gemini import ID_PREFIX, messages_from_gemini, new_messages
from contextwarden.wire.gemini_out import gemini_contents, tools_to_gemini
from contextwarden.wire.gemini_stream import assemble_stream, message_from_gemini_stream

SIG_CALL = bytes(range(256)) * 3  # a signature is opaque bytes: every byte value must survive
SIG_TEXT = b"\x00\xff\x10signature"


def wire(contents: list[types.Content]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents]


def conversation() -> list[types.Content]:
    """A Gemini 3 style turn: thoughts, a signed parallel call of the same function twice, the
    agent's responses carrying its own ids (as Gemini CLI sends them), a signed answer."""
    read = types.FunctionCall(name="read_file", args={"path": "a.py", "lines": [1, 2]})
    return [
        types.Content(
            role="user",
            parts=[
                types.Part(text="Read a.py twice and look at this."),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\r\n")),
            ],
        ),
        types.Content(
            role="model",
            parts=[
                types.Part(text="**Planning** I read it.", thought=True, thought_signature=b"t"),
                types.Part(function_call=read, thought_signature=SIG_CALL),
                types.Part(function_call=read),
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="read_file-1764748800-1", name="read_file", response={"output": "x = 1"}
                    )
                ),
                types.Part(
                    function_response=types.FunctionResponse(
                        id="read_file-1764748800-2", name="read_file", response={"error": "gone"}
                    )
                ),
            ],
        ),
        types.Content(
            role="model",
            parts=[
                types.Part(text="a.py sets x.", thought_signature=SIG_TEXT),
                types.Part(executable_code=types.ExecutableCode(code="x", language="PYTHON")),
            ],
        ),
    ]


def test_sdk_conversation_round_trips_byte_exact() -> None:
    contents = conversation()
    messages = messages_from_gemini(contents)
    assert not validate(messages)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    back = gemini_contents(messages)
    expected = wire(contents)
    for ours, theirs in zip(back, expected, strict=True):  # same keys in the same order
        assert json.dumps(ours["parts"]) == json.dumps(theirs["parts"])
        assert ours["role"] == theirs["role"]
    rebuilt = [types.Content.model_validate(c) for c in back]
    assert rebuilt == contents
    assert rebuilt[1].parts[1].thought_signature == SIG_CALL  # type: ignore[index]
    assert rebuilt[3].parts[0].thought_signature == SIG_TEXT  # type: ignore[index]


def test_id_less_calls_get_distinct_deterministic_ids_never_sent() -> None:
    first, again = messages_from_gemini(conversation()), messages_from_gemini(conversation())
    calls = first[1].tool_uses
    assert [c.id for c in calls] == [c.id for c in again[1].tool_uses]
    assert len({c.id for c in calls}) == 2 and all(c.id.startswith(ID_PREFIX) for c in calls)
    # the responses answer them by name, in call order, though their own ids differ
    assert [r.tool_use_id for r in first[2].tool_results] == [c.id for c in calls]
    assert first[2].tool_results[1].is_error
    sent = json.dumps(gemini_contents(first))
    assert ID_PREFIX not in sent


def test_reading_only_the_new_contents_gives_the_same_ids() -> None:
    contents = wire(conversation())
    whole = messages_from_gemini(contents)
    assert new_messages(contents, 2) == whole[2:]


def test_a_compacted_result_keeps_its_call_id_and_name() -> None:
    messages = messages_from_gemini(conversation())
    result = messages[2].tool_results[0]
    cleared = replace(result, content="[cleared: 5 bytes]")
    edited = Message("user", (cleared, *messages[2].content[1:]))
    part = gemini_contents([*messages[:2], edited])[2]["parts"][0]
    assert part == {
        "functionResponse": {
            "id": "read_file-1764748800-1",
            "name": "read_file",
            "response": {"output": "[cleared: 5 bytes]"},
        }
    }


def test_thoughts_and_unknown_parts_are_kept_verbatim() -> None:
    messages = messages_from_gemini(conversation())
    thought, code = messages[1].content[0], messages[3].content[1]
    assert isinstance(thought, UnknownBlock) and thought.raw["thought"] is True
    assert isinstance(code, UnknownBlock) and code.raw["executableCode"]["code"] == "x"
    # a part of a kind the API adds later is sent back too; other APIs' blocks are not
    future = {"role": "model", "parts": [{"text": "hi"}, {"holographicData": {"x": [1]}}]}
    (message,) = messages_from_gemini([future])
    other = Message("assistant", (*message.content, UnknownBlock(FrozenDict({"type": "x"}))))
    assert gemini_contents([other]) == [future]


def test_snake_case_dicts_read_like_the_wire() -> None:
    snake = [
        {"role": "model", "parts": [{"function_call": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "ls", "response": {"a": 1}}}]},
    ]
    messages = messages_from_gemini(snake)
    assert messages[1].tool_results[0].tool_use_id == messages[0].tool_uses[0].id
    assert gemini_contents(messages)[1]["parts"][0] == {
        "functionResponse": {"name": "ls", "response": {"a": 1}}
    }


def test_gemini_blocks_render_to_anthropic_without_gemini_fields() -> None:
    rendered = messages_to_wire(messages_from_gemini(conversation()))
    modelled = [b for m in rendered for b in m["content"] if "type" in b]
    assert {b["type"] for b in modelled} == {"text", "image", "tool_use", "tool_result"}
    assert not [b for b in modelled if "gemini_part" in b or "thoughtSignature" in b]


def test_contents_that_cannot_be_read_name_their_index() -> None:
    with pytest.raises(FormatError, match="message 1: a content needs") as caught:
        messages_from_gemini([{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model"}])
    assert caught.value.index == 1
    with pytest.raises(FormatError, match="'user' or 'model'"):
        messages_from_gemini([{"role": "system", "parts": [{"text": "hi"}]}])


def response(parts: list[types.Part], prompt: int = 120) -> types.GenerateContentResponse:
    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=parts),
                finish_reason=types.FinishReason.STOP,
            )
        ],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt,
            cached_content_token_count=20,
            candidates_token_count=7,
            thoughts_token_count=30,
        ),
        model_version="gemini-3-pro-preview",
        response_id="resp-1",
    )


TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def test_history_runs_a_gemini_tool_loop_with_sdk_objects() -> None:
    history = ConversationHistory(system="You read code.", tools=TOOLS)
    history.add_user_message("Read a.py")
    call = types.FunctionCall(name="read_file", args={"path": "a.py"})
    history.add_assistant_message(
        response([types.Part(function_call=call, thought_signature=b"s")])
    )
    assert history.estimate_tokens() >= 127  # anchored on the reply's usage (100 + 20 + 7)
    assert history.messages[-1].meta.extra["model"] == "gemini-3-pro-preview"
    with pytest.raises(ToolPairingError):
        history.add_user_message("never mind")
    answer = types.Part(
        function_response=types.FunctionResponse(name="read_file", response={"output": "x = 1"})
    )
    history.add_tool_results([answer])
    # the same call again, in a later turn: a new id, though name and arguments are the same
    history.add_assistant_message(response([types.Part(function_call=call)]))
    history.add_tool_results([types.Content(role="user", parts=[answer])])
    ids = [u.id for m in history.messages for u in m.tool_uses]
    assert len(set(ids)) == 2
    request = history.to_gemini_request()
    config = types.GenerateContentConfig.model_validate(request["config"])
    assert config.system_instruction == types.Content(parts=[types.Part(text="You read code.")])
    declaration = config.tools[0].function_declarations[0]  # type: ignore[index]
    assert declaration.name == "read_file"
    assert declaration.parameters_json_schema == TOOLS[0]["input_schema"]
    contents = [types.Content.model_validate(c) for c in request["contents"]]
    assert contents[1].parts[0].thought_signature == b"s"  # type: ignore[index]
    assert [c.role for c in contents] == ["user", "model", "user", "model", "user"]


def test_a_response_without_parts_is_a_clear_error() -> None:
    empty = types.GenerateContentResponse(
        candidates=[types.Candidate(finish_reason=types.FinishReason.SAFETY)]
    )
    with pytest.raises(FormatError, match="SAFETY"):
        ConversationHistory().add_assistant_message(empty)


def test_stream_chunks_assemble_into_the_whole_response() -> None:
    chunks = [
        response([types.Part(text="Let me ", thought=True)]),
        response([types.Part(text="think.", thought=True, thought_signature=b"a")]),
        response([types.Part(text="The answer ")]),
        response([types.Part(text="is 4.")]),
        response([types.Part(text="", thought_signature=SIG_TEXT)], prompt=130),
    ]
    whole = assemble_stream(chunks)
    parts = whole["candidates"][0]["content"]["parts"]
    assert [p.get("text") for p in parts] == ["Let me think.", "The answer is 4."]
    assert types.Part.model_validate(parts[1]).thought_signature == SIG_TEXT
    assert whole["usageMetadata"]["promptTokenCount"] == 130  # the last chunk's usage
    message = message_from_gemini_stream(chunks)
    assert isinstance(message.content[1], TextBlock) and message.content[1].text.endswith("4.")


def test_tools_from_every_api_become_function_declarations() -> None:
    chat = {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}
    search = {"googleSearch": {}}
    out = tools_to_gemini([TOOLS[0], chat, search])
    assert [d["name"] for d in out[0]["functionDeclarations"]] == ["read_file", "ls"]
    assert out[1] == search


def test_fresh_blocks_render_with_their_ids_and_names() -> None:
    messages = [
        Message.user("go"),
        Message.assistant([ToolUseBlock("toolu_1", "ls", {"d": "."})]),
        Message.user([ToolResultBlock("toolu_1", "a b", is_error=True)]),
    ]
    parts = [c["parts"][0] for c in gemini_contents(messages)[1:]]
    assert parts[0] == {"functionCall": {"name": "ls", "args": {"d": "."}, "id": "toolu_1"}}
    assert parts[1] == {
        "functionResponse": {"name": "ls", "response": {"error": "a b"}, "id": "toolu_1"}
    }


CLI_REQUEST = Path(__file__).parent / "data" / "gemini" / "gemini-cli-0.61.0-20-reads.request.json"


def test_a_real_gemini_cli_request_round_trips_part_for_part() -> None:
    body = json.loads(CLI_REQUEST.read_text())
    contents = body["contents"]
    messages = messages_from_gemini(contents)
    assert not validate(messages)
    assert sum(len(m.tool_uses) for m in messages) == 20
    back = gemini_contents(messages)
    assert [json.dumps(c["parts"]) for c in back] == [json.dumps(c["parts"]) for c in contents]
    assert [c["role"] for c in back] == [c["role"] for c in contents]
    # the CLI's call ids are the wire's: its responses pair with them by id
    assert all(not u.id.startswith(ID_PREFIX) for m in messages for u in m.tool_uses)
    assert new_messages(contents, 21) == messages[21:]


def test_history_takes_gemini_contents_and_parts_as_they_come() -> None:
    history = ConversationHistory()
    history.add_user_message(
        {"role": "user", "parts": [{"text": "Look", "partMetadata": {"a": 1}}]}
    )
    history.add({"role": "model", "parts": [{"text": "Seen.", "thoughtSignature": "AAEC"}]})
    history.add_user_message(
        [{"text": "And this"}, {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]
    )
    out = history.to_gemini()
    assert out[0]["parts"] == [{"text": "Look", "partMetadata": {"a": 1}}]
    assert out[1] == {"role": "model", "parts": [{"text": "Seen.", "thoughtSignature": "AAEC"}]}
    assert out[2]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}


def test_gemini_results_answer_calls_read_from_another_api() -> None:
    history = ConversationHistory(tools=TOOLS)
    history.add_user_message("go")
    history.add_assistant_message(
        Message.assistant([ToolUseBlock("toolu_1", "ls", {}), ToolUseBlock("toolu_2", "ls", {})])
    )
    second = {"functionResponse": {"id": "toolu_2", "name": "ls", "response": {"output": "b"}}}
    first = {"functionResponse": {"name": "ls", "response": {"output": "a"}}}
    added = history.add_tool_results([second, first])  # by id, then by name in call order
    assert [(r.tool_use_id, r.text) for r in added.tool_results] == [
        ("toolu_2", "b"),
        ("toolu_1", "a"),
    ]


def test_a_failure_gemini_cli_sends_as_output_is_a_failed_result_written_back_as_sent() -> None:
    """Gemini CLI's tools word a refused call as ``{"output": "Error: …"}`` (``Error: Invalid
    parameters provided. Reason: …``), not as ``{"error": …}``."""
    refused = "Error: Invalid parameters provided. Reason: Path must be within one of the workspace"
    contents: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"text": "list /data"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "ls-1", "name": "list_directory"}}]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "ls-1",
                        "name": "list_directory",
                        "response": {"output": refused},
                    }
                }
            ],
        },
    ]
    messages = messages_from_gemini(contents)
    (result,) = messages[2].tool_results
    assert result.is_error and result.content == refused
    assert gemini_contents(messages)[2]["parts"] == contents[2]["parts"]
    listing = {"output": "Directory listing for /data:\nError.log"}  # a name, not a failure
    contents[2]["parts"][0]["functionResponse"]["response"] = listing
    assert not messages_from_gemini(contents)[2].tool_results[0].is_error


def _shell_answer(output: str, name: str = "run_shell_command") -> list[dict[str, Any]]:
    call = {"id": "sh-1", "name": name, "args": {"command": "ls", "directory": "/data"}}
    response = {"id": "sh-1", "name": name, "response": {"output": output}}
    return [
        {"role": "user", "parts": [{"text": "list it"}]},
        {"role": "model", "parts": [{"functionCall": call}]},
        {"role": "user", "parts": [{"functionResponse": response}]},
    ]


@pytest.mark.parametrize(
    "refused",
    [
        "Directory cannot be absolute. Please refer to workspace directories by their name.",
        "Directory 'docs' is not a registered workspace directory.",
        "Command is not allowed: rm -rf build",
        "Command cannot be empty.",
    ],
)
def test_a_command_gemini_cli_s_shell_tool_refused_is_a_failed_result(refused: str) -> None:
    """The shell tool's ``validateToolParams`` messages, which its 2025 versions sent back bare
    as the call's output."""
    contents = _shell_answer(refused)
    messages = messages_from_gemini(contents)
    (result,) = messages[2].tool_results
    assert result.is_error and result.content == refused
    assert gemini_contents(messages)[2]["parts"] == contents[2]["parts"]


@pytest.mark.parametrize(
    ("output", "name"),
    [
        (
            "Command: ls\nDirectory cannot be absolute. Please refer to workspace directories "
            "by their name.",
            "run_shell_command",
        ),  # printed inside a command's output
        ("Command cannot be empty.", "read_file"),  # another tool's text
    ],
)
def test_a_shell_refusal_s_words_elsewhere_are_not_a_failure(output: str, name: str) -> None:
    (result,) = messages_from_gemini(_shell_answer(output, name))[2].tool_results
    assert not result.is_error
