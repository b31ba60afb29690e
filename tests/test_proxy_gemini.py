"""The proxy with the real ``google-genai`` SDK: ``generateContent`` and
``streamGenerateContent?alt=sse`` tool loops that overflow a small window, against a scripted
Gemini upstream on 127.0.0.1 that refuses calls sent back without their thought signatures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from contextwarden.policy import ContextPolicy
from contextwarden.wire.gemini_stream import assemble_stream, message_from_gemini_stream
from tests.gemini_upstream import check_request, gemini_upstream, prompt_tokens, signature
from tests.proxy_harness import opened, proxy_server
from tests.test_proxy import config, file_text

WINDOW = 8_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
KEY = "gemini-test-key-0123456789"
MODEL = "gemini-3-pro-preview"
SYSTEM = "You read code."
READ = types.FunctionDeclaration(
    name="read_file",
    description="Read a file",
    parameters_json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)
CONFIG = types.GenerateContentConfig(
    system_instruction=SYSTEM,
    tools=[types.Tool(function_declarations=[READ])],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def reader(calls: int) -> Any:
    """The scripted model: reads ``src/mod0.py`` … then answers; it looks only at the last
    content (the file it was sent), which every managed conversation keeps."""

    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        last = body["contents"][-1]["parts"]
        outputs = [
            p["functionResponse"]["response"]["output"] for p in last if "functionResponse" in p
        ]
        done = [int(m) for o in outputs for m in re.findall(r"module (\d+)", o)[:1]]
        step = done[-1] + 1 if done else 0
        if step >= calls:
            return [{"text": f"Read {calls} files."}]
        return [{"functionCall": {"name": "read_file", "args": {"path": f"src/mod{step}.py"}}}]

    return script


def run_agent(client: genai.Client, stream: bool) -> tuple[list[types.Content], str]:
    """A plain SDK tool loop that resends the whole conversation each turn."""
    contents = [types.Content(role="user", parts=[types.Part(text="Read every module.")])]
    while True:
        if stream:
            parts = [
                part
                for chunk in client.models.generate_content_stream(
                    model=MODEL, contents=contents, config=CONFIG
                )
                for part in chunk.candidates[0].content.parts  # type: ignore[index, union-attr]
            ]
        else:
            reply = client.models.generate_content(model=MODEL, contents=contents, config=CONFIG)
            parts = reply.candidates[0].content.parts  # type: ignore[index, union-attr, assignment]
        contents.append(types.Content(role="model", parts=parts))
        calls = [p.function_call for p in parts if p.function_call is not None]
        if not calls:
            return contents, "".join(p.text or "" for p in parts)
        answers = [
            types.Part.from_function_response(
                name="read_file",
                response={"output": f"module {c.args['path'][7:-3]}\n{file_text(0)}"},  # type: ignore[index]
            )
            for c in calls
        ]
        contents.append(types.Content(role="user", parts=answers))


def wire(content: types.Content) -> dict[str, Any]:
    return content.model_dump(mode="json", by_alias=True, exclude_none=True)


def client_for(url: str) -> genai.Client:
    options = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    return opened(genai.Client(api_key=KEY, http_options=options))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_gemini_tool_loop_fits_the_window(tmp_path: Path, stream: bool) -> None:
    with gemini_upstream(reader(14)) as api, proxy_server(config(api.url, tmp_path)) as url:
        sent, answer = run_agent(client_for(url), stream)
    assert answer == "Read 14 files."
    requests = api.requests
    assert len(requests) == 15  # none refused: every signed call went back with its signature
    method = "streamGenerateContent" if stream else "generateContent"
    assert all(("alt=sse" in q) is stream for q in api.queries)
    for path, headers, body in requests:
        assert path.endswith(f"/models/{MODEL}:{method}")  # the client's path, version and all
        assert headers["x-goog-api-key"] == KEY
        check_request(body, LIMIT)
        assert body["systemInstruction"] == {"parts": [{"text": SYSTEM}], "role": "user"}
        assert body["tools"][0]["functionDeclarations"][0]["name"] == "read_file"
    # the client's conversation outgrew the window; the proxy sent less than half of it
    whole = {**requests[-1][2], "contents": [wire(c) for c in sent[:-1]]}
    assert prompt_tokens(requests[-1][2]) < prompt_tokens(whole) / 2, "the proxy never compacted"
    assert prompt_tokens(whole) > LIMIT


def test_bad_requests_get_gemini_errors(tmp_path: Path) -> None:
    with gemini_upstream(reader(1)) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = client_for(url)
        with pytest.raises(errors.ClientError) as caught:
            client.models.generate_content(
                model=MODEL,
                contents=[types.Content(role="system", parts=[types.Part(text="Be brief.")])],
                config=CONFIG,
            )
        raw = httpx.post(f"{url}/v1beta/models/{MODEL}:generateContent", json={"contents": 3})
        counted = client.models.count_tokens(model=MODEL, contents="How long is this?")
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
    assert "content role must be 'user' or 'model'" in str(caught.value.message)
    assert raw.status_code == 400
    error = raw.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert "'contents' list" in error["message"]
    assert api.requests == []  # neither reached the upstream
    # countTokens is passed through as it is (the scripted upstream counts with the heuristic)
    assert counted.total_tokens == prompt_tokens(
        {"contents": [{"role": "user", "parts": [{"text": "How long is this?"}]}]}
    )


def test_too_long_upstream_compacts_and_retries(tmp_path: Path) -> None:
    """The proxy's window is larger than what the upstream takes: each refusal in the API's
    wording makes it compact once and send the turn again, and the agent never sees one."""
    real = 20_000  # room for what a summary keeps (the recent turns) and the next few turns
    with (
        gemini_upstream(reader(20), limit=real) as api,
        proxy_server(config(api.url, tmp_path, window=60_000)) as url,
    ):
        _, answer = run_agent(client_for(url), stream=False)
    assert answer == "Read 20 files."
    assert api.refused >= 1
    accepted = [b for b in api.bodies() if prompt_tokens(b) <= real]
    assert len(accepted) == 21  # one reply per turn of the agent
    assert len(api.bodies()) == 21 + api.refused  # each refusal retried once, then accepted


def test_a_relayed_stream_assembles_into_the_reply_the_upstream_would_give(tmp_path: Path) -> None:
    """The SSE stream comes through the proxy as the upstream sent it: its chunks, read with
    ``wire.gemini_stream``, make the very response the upstream gives without streaming."""
    call = {"name": "read_file", "args": {"path": "src/mod2.py"}}
    answer = {"name": "read_file", "response": {"output": "module 2\nx = 1"}}
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "Read every module."}]},
            {
                "role": "model",
                "parts": [{"functionCall": call, "thoughtSignature": signature(call)}],
            },
            {"role": "user", "parts": [{"functionResponse": answer}]},
        ],
        "tools": [{"functionDeclarations": [READ.model_dump(by_alias=True, exclude_none=True)]}],
    }
    base = f"/v1beta/models/{MODEL}"
    with gemini_upstream(reader(3)) as api, proxy_server(config(api.url, tmp_path)) as url:
        headers = {"x-goog-api-key": KEY}
        whole = httpx.post(f"{url}{base}:generateContent", json=request, headers=headers)
        streamed = httpx.post(
            f"{url}{base}:streamGenerateContent?alt=sse", json=request, headers=headers
        )
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = [
        json.loads(line[5:]) for line in streamed.text.splitlines() if line.startswith("data:")
    ]
    assert len(events) > 1
    assert assemble_stream(events) == whole.json()
    message = message_from_gemini_stream(events)
    assert message.text == "Read 3 files."
    assert (
        message.meta.extra["usage"]["input_tokens"]
        == whole.json()["usageMetadata"]["promptTokenCount"]
    )


def test_one_log_line_per_request_never_with_the_query_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Gemini's key may travel in the query string: the proxy's line per request (uvicorn's
    access line, which logs the query, is off) names the path without it, on every route."""
    caplog.set_level("INFO", logger="contextwarden.proxy")
    contents = {"contents": [{"role": "user", "parts": [{"text": "How long is this?"}]}]}
    with gemini_upstream(reader(1)) as api, proxy_server(config(api.url, tmp_path)) as url:
        counted = httpx.post(f"{url}/v1beta/models/{MODEL}:countTokens?key={KEY}", json=contents)
        generate = f"{url}/v1beta/models/{MODEL}:generateContent"
        managed = httpx.post(f"{generate}?key={KEY}", json=contents)
        unknown = httpx.get(f"{url}/elsewhere?key={KEY}")
    assert (counted.status_code, managed.status_code, unknown.status_code) == (200, 200, 404)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "contextwarden.proxy"]
    assert [(line["path"], line["status"]) for line in lines] == [
        (f"/v1beta/models/{MODEL}:countTokens", 200),
        (f"/v1beta/models/{MODEL}:generateContent", 200),
        ("/elsewhere", 404),
    ]
    assert lines[1]["api"] == "gemini" and lines[1]["session"]
    assert KEY not in caplog.text
