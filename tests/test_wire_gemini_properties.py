"""Generated Gemini conversations (signed calls, repeated calls, thoughts, media, the three
response shapes, ids or none) read into our messages and written back: the parts are the same
bytes, the conversation is valid, and reading only a request's new contents gives the same
messages as reading it whole (what the proxy does)."""

from __future__ import annotations

import base64
import json
from typing import Any

from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.rules import validate
from contextwarden.wire.gemini import messages_from_gemini, new_messages
from contextwarden.wire.gemini_out import gemini_contents

texts = st.text(min_size=1, max_size=30).filter(str.strip)
signatures = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode())
names = st.sampled_from(["read_file", "ls", "run_shell_command"])
values = st.one_of(st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=3))
args = st.dictionaries(st.text(min_size=1, max_size=5), values, max_size=3)
bodies = st.one_of(
    texts.map(lambda t: {"output": t}),
    texts.map(lambda t: {"error": t}),
    st.dictionaries(st.text(min_size=1, max_size=5), st.integers(), min_size=2, max_size=3),
)


@st.composite
def call_part(draw: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"name": draw(names), "args": draw(args)}
    if draw(st.booleans()):
        call = {"id": f"{call['name']}_{draw(st.integers(0, 999))}", **call}
    part: dict[str, Any] = {"functionCall": call}
    if draw(st.booleans()):
        part["thoughtSignature"] = draw(signatures)
    return part


@st.composite
def turn(draw: Any) -> list[dict[str, Any]]:
    """A model content and, when it calls tools, the user content answering every call."""
    parts: list[dict[str, Any]] = []
    if draw(st.booleans()):
        parts.append({"text": draw(texts), "thought": True, "thoughtSignature": draw(signatures)})
    calls = draw(st.lists(call_part(), max_size=3))  # wire ids may repeat, as agents reuse them
    parts += calls
    if not calls or draw(st.booleans()):
        text: dict[str, Any] = {"text": draw(texts)}
        if draw(st.booleans()):
            text["thoughtSignature"] = draw(signatures)
        parts.append(text)
    contents = [{"role": "model", "parts": parts}]
    answers = []
    for part in calls:
        response: dict[str, Any] = {"name": part["functionCall"]["name"], "response": draw(bodies)}
        wire = part["functionCall"].get("id")
        if wire is not None:  # the call's id, or an agent's own (as Gemini CLI's)
            response["id"] = wire if draw(st.booleans()) else f"{wire}-{draw(st.integers(0, 9))}"
        answers.append({"functionResponse": response})
    if answers:
        contents.append({"role": "user", "parts": answers})
    return contents


@st.composite
def conversation(draw: Any) -> list[dict[str, Any]]:
    first: list[dict[str, Any]] = [{"text": draw(texts)}]
    if draw(st.booleans()):
        data = base64.b64encode(draw(st.binary(min_size=1, max_size=16))).decode()
        first.append({"inlineData": {"mimeType": "image/png", "data": data}})
    contents = [{"role": "user", "parts": first}]
    for contents_of_turn in draw(st.lists(turn(), min_size=1, max_size=5)):
        if contents[-1]["role"] == "model":
            contents.append({"role": "user", "parts": [{"text": draw(texts)}]})
        contents += contents_of_turn
    return contents


@settings(max_examples=150, deadline=None)
@given(conversation())
def test_generated_conversations_round_trip_and_stay_valid(contents: list[dict[str, Any]]) -> None:
    messages = messages_from_gemini(contents)
    assert not validate(messages)
    back = gemini_contents(messages)
    assert json.dumps(back) == json.dumps(contents)
    assert [types.Content.model_validate(c) for c in back] == [
        types.Content.model_validate(c) for c in contents
    ]
    for start in range(len(contents) + 1):
        assert new_messages(contents, start) == messages[start:]
    uses = [u.id for m in messages for u in m.tool_uses]
    assert len(set(uses)) == len(uses)
