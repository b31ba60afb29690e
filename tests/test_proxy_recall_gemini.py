"""``--recall`` on the Gemini API, driven through the real ``google-genai`` SDK: the proxy
declares ``recall`` once a summary names a span, answers the model's ``functionCall`` from the
session's log with a ``functionResponse`` (the call sent back with its thought signature: the
scripted upstream refuses it otherwise), and the agent gets the final reply, the text written
before the call in front, with its own request's usage."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from contextwarden.policy import ContextPolicy
from contextwarden.recall import RECALL_TOOL_NAME, original
from contextwarden.stores import open_store
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.gemini_upstream import (
    OUTPUT_TOKENS,
    check_request,
    conversation,
    gemini_upstream,
    prompt_tokens,
    signature,
)
from tests.proxy_harness import admin_get, proxy_server
from tests.test_proxy import file_text
from tests.test_proxy_gemini import MODEL, client_for
from tests.test_proxy_recall import MODULES, QUESTION, WINDOW, config

SPAN = re.compile(r'recall\(id="([^"]+)"\)')
LEAD = "Let me look that up. "
SHOWN = 60
"""Characters of the recalled page the scripted model quotes in its answer."""
DEPLOY = types.FunctionDeclaration(
    name="deploy",
    description="Deploy a module",
    parameters_json_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
)
CONFIG = types.GenerateContentConfig(
    tools=[types.Tool(function_declarations=[DEPLOY])],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def model(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Asked ``QUESTION`` with recall declared, it says ``LEAD`` and recalls the span the
    summary names; given the page, it quotes its start."""
    last = body["contents"][-1]["parts"]
    pages = [p["functionResponse"] for p in last if "functionResponse" in p]
    if pages and pages[0]["name"] == RECALL_TOOL_NAME:
        return [{"text": f"It recalled: {pages[0]['response']['output'][:SHOWN]}"}]
    declared = [d["name"] for t in body.get("tools") or [] for d in t["functionDeclarations"]]
    if RECALL_TOOL_NAME in declared and last == [{"text": QUESTION}]:
        call = {"name": RECALL_TOOL_NAME, "args": {"id": SPAN.findall(said_text(body))[-1]}}
        return [{"text": LEAD}, {"functionCall": call}]
    return [{"text": "You are welcome."}]


def said_text(body: dict[str, Any]) -> str:
    return "\n".join(b.text for m in conversation(body) for b in m.content if b.type == "text")


def prior() -> list[types.Content]:
    """``MODULES`` signed ``deploy`` calls whose results are far over the window, then
    ``QUESTION``: the summary takes the calls and names its span's recall id."""
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "Read every module."}]}]
    for n in range(MODULES):
        call = {"name": "deploy", "args": {"n": n}}
        result = {"name": "deploy", "response": {"output": file_text(n)}}
        contents.append(
            {
                "role": "model",
                "parts": [{"functionCall": call, "thoughtSignature": signature(call)}],
            }
        )
        contents.append({"role": "user", "parts": [{"functionResponse": result}]})
    contents.append({"role": "model", "parts": [{"text": "All modules read."}]})
    contents.append({"role": "user", "parts": [{"text": QUESTION}]})
    return [types.Content.model_validate(c) for c in contents]


def ask(url: str, stream: bool) -> tuple[str, types.GenerateContentResponseUsageMetadata]:
    client = client_for(url)
    if not stream:
        reply = client.models.generate_content(model=MODEL, contents=prior(), config=CONFIG)
        assert reply.usage_metadata is not None
        return reply.text or "", reply.usage_metadata
    chunks = list(
        client.models.generate_content_stream(model=MODEL, contents=prior(), config=CONFIG)
    )
    usage = chunks[-1].usage_metadata
    assert usage is not None
    return "".join(c.text or "" for c in chunks), usage


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_gemini_recall_is_answered_by_the_proxy(tmp_path: Path, stream: bool) -> None:
    with gemini_upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, usage = ask(url, stream)
        [session] = admin_get(url, "/sessions").json()["sessions"]
        [noted] = admin_get(url, f"/sessions/{session}").json()["recall_rounds"]
    store = open_store(str(tmp_path / "p.sqlite3"))
    try:
        history = store.load(session, counter=HeuristicCounter(), mode="merge")
    finally:
        store.close()
    asked, follow_up = api.bodies()  # the signed recall call went back: not refused
    for body in (asked, follow_up):
        check_request(body, ContextPolicy(context_window=WINDOW).effective_window)
    span = SPAN.findall(said_text(asked))[-1]
    # the agent got the lead and the answer from the log's original, and no recall call
    assert answer == f"{LEAD}It recalled: {(original(history, span) or '')[:SHOWN]}"
    assert noted["rounds"] == 1 and noted["ids"] == [span]
    # its usage is its own request's; the hidden one is in the session's view
    question = prompt_tokens(asked)
    assert prompt_tokens(follow_up) > question
    assert usage.prompt_token_count == question
    assert usage.total_token_count == question + OUTPUT_TOKENS
    assert noted["hidden_prompt_tokens"] == prompt_tokens(follow_up)
