"""``--recall``: the proxy offers the recall tool once a session was compacted, answers it from the
session's log and sends the follow-up itself; the agent, driven through the real SDKs, sees only
the final reply, and its next request continues the same session."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from contextwarden.log import UsageRecorded
from contextwarden.policy import CLEARED_MARKER as CLEARED
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import ProxyConfig
from contextwarden.proxy.recalling import MAX_RECALL_ROUNDS, NO_ROOM, NOT_RUN, OVER_LIMIT
from contextwarden.recall import RECALL_TOOL_NAME, original
from contextwarden.stores import open_store
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.proxy_harness import (
    ADMIN_TOKEN,
    Scripted,
    admin_get,
    check_request,
    conversation,
    opened,
    prompt_tokens,
    proxy_server,
    text,
    tool_call,
    upstream,
)
from tests.test_proxy import KEY, file_text

WINDOW = 24_000
MODULES = 36
QUESTION = "What exactly did reading module 9 return?"
NEEDLE = file_text(9)
"""What the question asks about: past the first page of the summary's span."""
THANKS = "Thanks."
SPAN = re.compile(r'recall\(id="([^"]+)"\)')
MORE = re.compile(r"\n\n\[[\d,]+ more characters: recall again with offset=(\d+)\]\Z")
MESSAGES, CHAT, RESPONSES = "/v1/messages", "/v1/chat/completions", "/v1/responses"


class Model:
    """A scripted model following the markers: asked ``QUESTION`` with the recall tool offered,
    it recalls the id the summary names (else the first cleared result's call id), page after
    page (next to an agent tool call when ``mixed``) until the pages hold ``needle`` (None:
    until the end, or until there is no room), then answers from them. ``recalled`` keeps the
    text each question got back; ``endless`` never stops recalling."""

    def __init__(
        self,
        needle: str | None = NEEDLE,
        mixed: str = "",
        endless: bool = False,
        lead: str = "",
    ) -> None:
        self.needle = needle
        self.mixed = mixed
        """"after": an agent tool call after each recall call, "before": before it, "around":
        one before and one after."""
        self.lead = lead
        """Text the model writes before each recall call."""
        self.endless = endless
        self.pages: list[str] = []
        self.recalled: list[str] = []

    def __call__(self, path: str, body: dict[str, Any]) -> Scripted:
        messages = conversation(body, path)
        answered = [r for r in messages[-1].tool_results if r.tool_use_id.startswith("recall_")]
        if answered:
            page = answered[0].text
            more = MORE.search(page)
            refused = page in (NO_ROOM, OVER_LIMIT)
            if not refused:
                self.pages.append(page[: more.start()] if more else page)
            joined = "".join(self.pages)
            found = self.needle is not None and self.needle in joined
            if self.endless or (more and not found and not refused):
                return self._recall(messages, len(self.pages), int(more[1]) if more else 0)
            self.recalled.append(joined)
            self.pages = []
            return text(f"It returned: {self.needle[-60:]}" if found else "I could not recall it.")
        if RECALL_TOOL_NAME in tool_names(body) and messages[-1].text == QUESTION:
            return self._recall(messages, 0, 0)
        return text("You are welcome.")

    def _recall(self, messages: list[Any], n: int, offset: int) -> Scripted:
        """Recall what the summary names, else the first result a marker says was cleared."""
        said = "\n".join(b.text for m in messages for b in m.content if b.type == "text")
        cleared = [r.tool_use_id for m in messages for r in m.tool_results if r.text == CLEARED]
        ids = SPAN.findall(said)[-1:] or cleared[:1]
        assert ids, "nothing in the context names a recall id"
        asked = tool_call(RECALL_TOOL_NAME, f"recall_{n}", id=ids[0], offset=offset)
        extra = tool_call("Read", f"call_extra_{n}", path="m0.py").content
        later = tool_call("Read", f"call_later_{n}", path="m1.py").content
        if self.mixed:
            before, after = {"before": (extra, []), "after": ([], extra)}.get(
                self.mixed, (extra, later)
            )
            asked.content = [*before, *asked.content, *after]
        if self.lead:
            asked.content.insert(0, {"type": "text", "text": self.lead})
        return asked


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t.get("function", {}).get("name") for t in body.get("tools") or []]


def prior(api_path: str, tool: str = "Deploy") -> list[dict[str, Any]]:
    """An agent's conversation so far: ``MODULES`` calls of ``tool`` whose results are far over
    the window, then ``QUESTION``, in the wire shape of ``api_path``. Results of ``Deploy`` may
    not be cleared (a summary takes them), results of ``Read`` may (microcompact clears them)."""
    if api_path == MESSAGES:
        out: list[dict[str, Any]] = [{"role": "user", "content": "Read every module."}]
        for n in range(MODULES):
            call = {"type": "tool_use", "id": f"call_{n}", "name": tool, "input": {"n": n}}
            result = {"type": "tool_result", "tool_use_id": f"call_{n}", "content": file_text(n)}
            out += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
        out.append({"role": "assistant", "content": "All modules read."})
        return [*out, {"role": "user", "content": QUESTION}]
    if api_path == RESPONSES:
        items: list[dict[str, Any]] = [{"role": "user", "content": "Read every module."}]
        for n in range(MODULES):
            arguments = json.dumps({"n": n})
            call = {"type": "function_call", "call_id": f"call_{n}", "name": tool}
            items.append({**call, "arguments": arguments})
            items.append(
                {"type": "function_call_output", "call_id": f"call_{n}", "output": file_text(n)}
            )
        items.append({"role": "assistant", "content": "All modules read."})
        return [*items, {"role": "user", "content": QUESTION}]
    chat: list[dict[str, Any]] = [{"role": "user", "content": "Read every module."}]
    for n in range(MODULES):
        function = {"name": tool, "arguments": json.dumps({"n": n})}
        chat.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{n}", "type": "function", "function": function}],
            }
        )
        chat.append({"role": "tool", "tool_call_id": f"call_{n}", "content": file_text(n)})
    chat.append({"role": "assistant", "content": "All modules read."})
    return [*chat, {"role": "user", "content": QUESTION}]


READ_TOOL = {"name": "Read", "description": "Read a module", "input_schema": {"type": "object"}}
READ_FUNCTION = {
    "type": "function",
    "function": {"name": "Read", "description": "Read a module", "parameters": {"type": "object"}},
}
DEPLOY_TOOL = {**READ_TOOL, "name": "Deploy", "description": "Deploy a module"}
DEPLOY_FUNCTION = {"type": "function", "function": {**READ_FUNCTION["function"], "name": "Deploy"}}


@dataclass(frozen=True)
class Answer:
    """What the agent got back through the real SDK."""

    text: str
    calls: list[Any]
    usage: dict[str, Any] | None


def answer(url: str, path: str, messages: list[dict[str, Any]], stream: bool) -> Answer:
    """The agent's request through the real SDK (a stream read to its end)."""
    if path == MESSAGES:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        create: dict[str, Any] = {
            "model": "m",
            "max_tokens": 200,
            "tools": [READ_TOOL, DEPLOY_TOOL],
        }
        if stream:
            with client.messages.stream(**create, messages=messages) as events:
                reply = events.get_final_message()
        else:
            reply = client.messages.create(**create, messages=messages)
        uses = [b for b in reply.content if b.type == "tool_use"]
        text = "".join(b.text for b in reply.content if b.type == "text")
        return Answer(text, uses, reply.usage.model_dump(exclude_none=True))
    chat = opened(openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0))
    if path == RESPONSES:
        functions = [
            {"type": "function", **f["function"]} for f in (READ_FUNCTION, DEPLOY_FUNCTION)
        ]
        asked: dict[str, Any] = {"model": "m", "tools": functions, "input": messages}
        if stream:
            events = chat.responses.create(**asked, stream=True)
            response = next(e.response for e in events if e.type == "response.completed")
        else:
            response = chat.responses.create(**asked)
        calls = [o for o in response.output if o.type == "function_call"]
        used = response.usage.model_dump(exclude_none=True) if response.usage else None
        return Answer(response.output_text, calls, used)
    tools = [READ_FUNCTION, DEPLOY_FUNCTION]
    kwargs: dict[str, Any] = {"model": "m", "tools": tools, "messages": messages}
    if not stream:
        completion = chat.chat.completions.create(**kwargs)
        message = completion.choices[0].message
        used = completion.usage.model_dump(exclude_none=True) if completion.usage else None
        return Answer(message.content or "", list(message.tool_calls or []), used)
    said, calls, usage = [], [], None
    options = {"include_usage": True}  # else the proxy cannot count the hidden rounds' tokens
    for chunk in chat.chat.completions.create(**kwargs, stream=True, stream_options=options):
        for choice in chunk.choices:
            said.append(choice.delta.content or "")
            calls += choice.delta.tool_calls or []
        usage = chunk.usage or usage
    used = usage.model_dump(exclude_none=True) if usage else None
    return Answer("".join(said), calls, used)


def ask(url: str, path: str, messages: list[dict[str, Any]], stream: bool) -> tuple[str, list[Any]]:
    """The agent's request through the real SDK: the reply's text and its tool calls."""
    got = answer(url, path, messages, stream)
    return got.text, got.calls


def config(api_url: str, tmp_path: Path, recall: bool = True) -> ProxyConfig:
    return ProxyConfig(
        upstream=api_url,
        window=WINDOW,
        store=str(tmp_path / "p.sqlite3"),
        admin_token=ADMIN_TOKEN,
        recall=recall,
    )


def without_breakpoints(value: Any) -> Any:
    """``value`` with every ``cache_control`` dropped (the proxy moves them to the tail)."""
    if isinstance(value, dict):
        return {k: without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_breakpoints(v) for v in value]
    return value


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    "path", [MESSAGES, CHAT, RESPONSES], ids=["anthropic", "openai-chat", "responses"]
)
def test_the_proxy_answers_recall_unseen_by_the_agent(
    tmp_path: Path, path: str, stream: bool
) -> None:
    model = Model()
    messages = prior(path)
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, calls = ask(url, path, messages, stream)
        messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": THANKS}]
        thanks, _ = ask(url, path, messages, stream)
        sessions = admin_get(url, "/sessions").json()["sessions"]
        shown = admin_get(url, f"/sessions/{sessions[0]}").json()
        metrics = admin_get(url, "/metrics").text
    store = open_store(str(tmp_path / "p.sqlite3"))
    try:
        history = store.load(sessions[0], counter=HeuristicCounter(), mode="merge")
    finally:
        store.close()
    asked, *follow_ups, after = api.messages_requests(path)
    for body in (asked, *follow_ups, after):  # the proxy's own requests fit the window too
        check_request(body, ContextPolicy(context_window=WINDOW).effective_window, path)
    span = SPAN.findall(said_text(asked, path))[-1]
    rounds = len(follow_ups)  # the proxy's own requests; the agent sent two
    assert 2 <= rounds <= MAX_RECALL_ROUNDS  # the span is longer than what one round has room for
    # the agent saw no recall call, only the reply the model wrote from what it recalled
    assert calls == []
    [recalled] = model.recalled
    assert answer == f"It returned: {NEEDLE[-60:]}"
    assert thanks == "You are welcome."
    # the recalled pages are the log's original, byte for byte, up to the question's answer
    whole = original(history, span) or ""
    assert recalled == whole[: len(recalled)] and NEEDLE in recalled
    # one session, no fork; its view shows the rounds, with the id the summary named
    assert len(sessions) == 1
    [noted] = shown["recall_rounds"]
    assert noted["rounds"] == rounds and noted["ids"] == [span] * rounds
    # its tokens are the upstream's usage of the proxy's own requests, and of the replies
    # that called recall (the scripted upstream reports 20 output tokens a reply)
    assert noted["hidden_prompt_tokens"] == sum(prompt_tokens(b, path) for b in follow_ups)
    assert noted["hidden_output_tokens"] == 20 * rounds
    assert f"contextwarden_proxy_recall_rounds_total {rounds}" in metrics
    # the ledger was anchored on the question's own usage (the view), not a hidden round's
    anchored = [e.total for e in history.log if isinstance(e, UsageRecorded)]
    assert anchored == [prompt_tokens(asked, path), prompt_tokens(after, path)]
    # the tool is offered after the agent's own; the hidden turns are not kept: the next
    # request continues the view the question was sent with (the cached prefix)
    assert tool_names(asked)[-1] == RECALL_TOOL_NAME and tool_names(after) == tool_names(asked)
    key = "input" if path == RESPONSES else "messages"
    sent = without_breakpoints(asked[key])
    for body in (*follow_ups, after):
        assert without_breakpoints(body[key])[: len(sent)] == sent
    assert "recall_0" not in json.dumps(after[key])


def said_text(body: dict[str, Any], path: str) -> str:
    messages = conversation(body, path)
    return "\n".join(b.text for m in messages for b in m.content if b.type == "text")


def test_a_cleared_result_is_recalled_by_its_call_id(tmp_path: Path) -> None:
    model = Model(needle=file_text(0))
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, calls = ask(url, MESSAGES, prior(MESSAGES, tool="Read"), stream=False)
    asked = conversation(api.messages_requests()[0])
    assert [r.text for r in asked[2].tool_results] == [CLEARED]  # call_0's result was cleared
    assert calls == [] and model.recalled == [file_text(0)]  # the original, as it was added
    assert answer == f"It returned: {file_text(0)[-60:]}"


def test_off_by_default_and_not_offered_before_a_compaction(tmp_path: Path) -> None:
    model = Model()
    small = [{"role": "user", "content": QUESTION}]
    with upstream(model) as api:
        with proxy_server(config(api.url, tmp_path, recall=False)) as url:
            off, _ = ask(url, MESSAGES, prior(MESSAGES), stream=False)
        with proxy_server(config(api.url, tmp_path / "b")) as url:
            nothing_yet, _ = ask(url, MESSAGES, small, stream=False)
    assert off == nothing_yet == "You are welcome."
    assert all(RECALL_TOOL_NAME not in tool_names(b) for b in api.messages_requests())
    assert model.recalled == []


def test_forbidding_tool_choice_gets_no_recall_tool(tmp_path: Path) -> None:
    with upstream(Model()) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        client.messages.create(
            model="m",
            max_tokens=10,
            tools=[READ_TOOL],
            tool_choice={"type": "tool", "name": "Read"},
            messages=prior(MESSAGES),
        )
    [body] = api.messages_requests()
    assert tool_names(body) == ["Read"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("path", [MESSAGES, CHAT], ids=["anthropic", "openai-chat"])
def test_recall_next_to_an_agent_call_is_answered_and_asked_again(
    tmp_path: Path, path: str, stream: bool
) -> None:
    model = Model(mixed="after")
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, calls = ask(url, path, prior(path), stream=stream)
    assert calls == [] and answer == f"It returned: {NEEDLE[-60:]}"
    follow_up = api.messages_requests(path)[1]
    [results] = [
        r for r in conversation(follow_up, path)[-1].tool_results if r.tool_use_id == "call_extra_0"
    ]
    assert results.text == NOT_RUN


@pytest.mark.parametrize("path", [MESSAGES, CHAT], ids=["anthropic", "openai-chat"])
def test_a_recall_after_a_streamed_agent_call_is_dropped(tmp_path: Path, path: str) -> None:
    """The agent already has its call when recall starts: it cannot be asked again, so the
    recall call is left out and the rest of the message goes on, renumbered."""
    model = Model(mixed="around", lead="Checking.")
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, calls = ask(url, path, prior(path), stream=True)
    assert answer == "Checking." and len(api.messages_requests(path)) == 1
    if path == MESSAGES:  # the SDK builds the message by block index: a gap would break it
        assert [(c.name, c.id) for c in calls] == [
            ("Read", "call_extra_0"),
            ("Read", "call_later_0"),
        ]
    else:
        assert [(c.id, c.index) for c in calls] == [("call_extra_0", 0), ("call_later_0", 1)]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("path", [MESSAGES, CHAT], ids=["anthropic", "openai-chat"])
def test_text_before_a_recall_call(tmp_path: Path, path: str, stream: bool) -> None:
    """Streamed, the text went to the agent before recall started: the final reply continues
    the same message. Whole, the reply gets the same text in front."""
    model = Model(lead="Let me look that up. ")
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, calls = ask(url, path, prior(path), stream=stream)
    final = f"It returned: {NEEDLE[-60:]}"
    rounds = len(api.messages_requests(path)) - 1  # the model says it before each recall call
    assert rounds >= 2 and calls == []
    assert answer == "Let me look that up. " * rounds + final


@pytest.mark.parametrize("path", [MESSAGES, CHAT], ids=["anthropic", "openai-chat"])
def test_a_stream_is_passed_on_before_it_ends(tmp_path: Path, path: str) -> None:
    """The upstream holds its reply's end until the agent has its first text: were the stream
    held whole while recall is offered, the agent would get nothing before the end."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import httpx

    from tests.proxy_harness import chat_chunks, chat_completion, sse_events

    first_text = threading.Event()
    seen: list[dict[str, Any]] = []
    released: list[bool] = []

    def events(body: dict[str, Any]) -> list[tuple[str | None, Any]]:
        if path == CHAT:
            reply = chat_completion(body, text("Done."), 10)
            return [(None, c) for c in chat_chunks(reply, body)]
        usage = {"input_tokens": 10, "output_tokens": 2}
        message = {"id": "m", "type": "message", "role": "assistant", "model": "m"}
        message |= {"content": [{"type": "text", "text": "Done."}], "usage": usage}
        return list(sse_events(message | {"stop_reason": "end_turn", "stop_sequence": None}))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            seen.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for n, (name, data) in enumerate(events(seen[-1])):
                if n == 3 or (path == CHAT and n == 1):  # the text is out: the agent sees it?
                    released.append(first_text.wait(timeout=10))
                head = f"event: {name}\n" if name else ""
                payload = data if isinstance(data, str) else json.dumps(data)
                self.wfile.write(f"{head}data: {payload}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    body = {"model": "m", "max_tokens": 10, "stream": True, "messages": prior(path)}
    body["tools"] = [READ_TOOL if path == MESSAGES else READ_FUNCTION]
    try:
        with proxy_server(config(f"http://127.0.0.1:{server.server_address[1]}", tmp_path)) as url:
            with httpx.stream("POST", f"{url}{path}", json=body, timeout=30) as response:
                for line in response.iter_lines():
                    if "Done." in line:
                        first_text.set()
    finally:
        server.shutdown()
        server.server_close()
    assert released == [True]
    assert RECALL_TOOL_NAME in tool_names(seen[0])  # the tool was offered: the gate was on


def test_a_model_that_keeps_recalling_gets_the_agent_an_error(tmp_path: Path) -> None:
    model = Model(endless=True)
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.APIStatusError) as caught:
            client.messages.create(
                model="m", max_tokens=10, tools=[READ_TOOL], messages=prior(MESSAGES)
            )
    assert caught.value.status_code == 502
    assert f"after {MAX_RECALL_ROUNDS} answered rounds" in str(caught.value)
    *_, told, last = api.messages_requests()
    assert len(api.messages_requests()) == MAX_RECALL_ROUNDS + 2  # and the limit round
    assert [r.text for r in conversation(last)[-1].tool_results] == [OVER_LIMIT]
    assert OVER_LIMIT not in str(told)


def test_an_error_in_a_hidden_round_reaches_the_agent_in_the_api_shape(tmp_path: Path) -> None:
    model = Model()

    def failing(path: str, body: dict[str, Any]) -> Scripted:
        if conversation(body, path)[-1].tool_results:
            error = {"type": "overloaded_error", "message": "Overloaded"}
            return Scripted(status=529, error=error)
        return model(path, body)

    with upstream(failing) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.APIStatusError) as caught:
            client.messages.create(
                model="m", max_tokens=10, tools=[READ_TOOL], messages=prior(MESSAGES)
            )
    assert caught.value.status_code == 529
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    # streamed, the message has begun: the error comes as the stream's error event
    with upstream(failing) as api, proxy_server(config(api.url, tmp_path / "s")) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.APIStatusError) as streamed:
            with client.messages.stream(
                model="m", max_tokens=10, tools=[READ_TOOL], messages=prior(MESSAGES)
            ) as events:
                events.get_final_message()
    assert "a recall round got 529" in str(streamed.value) and "Overloaded" in str(streamed.value)


# ----------------------------------------------------------------------------- when it is offered
def test_the_flag_and_the_variable_turn_it_on(capsys: pytest.CaptureFixture[str]) -> None:
    from contextwarden.cli import main
    from contextwarden.errors import ProxyConfigError

    with pytest.raises(SystemExit):
        main(["proxy", "--upstream", "http://127.0.0.1:9", "--recall", "--check", "--json"])
    assert json.loads(capsys.readouterr().out)["recall"] is True
    env = {"CONTEXTWARDEN_UPSTREAM": "http://127.0.0.1:9"}
    assert ProxyConfig.from_env(env).recall is False
    assert ProxyConfig.from_env({**env, "CONTEXTWARDEN_RECALL": "Yes"}).recall is True
    assert ProxyConfig.from_env({**env, "CONTEXTWARDEN_RECALL": "0"}).recall is False
    with pytest.raises(ProxyConfigError, match="CONTEXTWARDEN_RECALL must be one of 1/true"):
        ProxyConfig.from_env({**env, "CONTEXTWARDEN_RECALL": "sometimes"})


@pytest.mark.parametrize(
    ("api", "body", "offered"),
    [
        ("openai-chat", {"tools": [READ_FUNCTION]}, True),
        ("openai-chat", {}, True),  # an agent without tools: the tool is the proxy's to answer
        ("openai-chat", {"tools": [READ_FUNCTION], "tool_choice": "required"}, True),
        ("openai-chat", {"tools": [READ_FUNCTION], "tool_choice": "none"}, False),
        ("openai-chat", {"tool_choice": {"type": "function", "function": {"name": "Read"}}}, False),
        ("openai-responses", {"tool_choice": {"type": "allowed_tools", "tools": []}}, False),
        ("openai-responses", {"tool_choice": {"type": "file_search"}}, False),
        ("openai-responses", {"tool_choice": "auto"}, True),
        ("anthropic", {"tool_choice": {"type": "any"}}, True),
        ("anthropic", {"tool_choice": {"type": "none"}}, False),
        ("anthropic", {"tools": [{**READ_TOOL, "name": RECALL_TOOL_NAME}]}, False),
        ("openai-chat", {"tools": [{"type": "function", "function": {"name": "recall"}}]}, False),
        ("gemini", {}, True),
        ("gemini", {"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}}, True),
        ("gemini", {"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}, False),
        (
            "gemini",
            {"toolConfig": {"functionCallingConfig": {"allowedFunctionNames": ["read"]}}},
            False,
        ),
        (
            "gemini",
            {"tools": [{"functionDeclarations": [{"name": "x"}, {"name": "recall"}]}]},
            False,
        ),
        ("gemini", {"tools": [{"function_declarations": [{"name": "recall"}]}]}, False),
        ("gemini", {"tools": [{"googleSearch": {}}]}, False),  # may not mix with functions
    ],
)
def test_offered_only_where_the_model_may_call_it(
    api: str, body: dict[str, Any], offered: bool
) -> None:
    from contextwarden.model import Message, TextBlock
    from contextwarden.proxy.recalling import offer

    summary = Message("user", (TextBlock('The summary. recall(id="sha256-abc")'),))
    plain = Message("user", (TextBlock("Nothing was compacted."),))
    assert offer(api, body, [summary]) is offered
    assert offer(api, body, [plain]) is False  # nothing to recall yet


def test_recalled_pages_fit_the_room_left_and_then_there_is_none(tmp_path: Path) -> None:
    model = Model(needle=None)  # reads the whole span: far more than the window holds
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        answer, calls = ask(url, MESSAGES, prior(MESSAGES), stream=False)
    asked, *follow_ups = api.messages_requests()
    limit = ContextPolicy(context_window=WINDOW).effective_window
    for body in (asked, *follow_ups):
        check_request(body, limit)
    pages = [conversation(b)[-1].tool_results[0].text for b in follow_ups]
    assert pages[-1] in (NO_ROOM, OVER_LIMIT) and all(MORE.search(p) for p in pages[:-1])
    assert len(pages[1]) < len(pages[0])  # the second page is cut to the room the first left
    assert calls == [] and answer == "I could not recall it."


# ----------------------------------------------------------------------------- reading replies
def sse(events: list[tuple[str | None, Any]]) -> bytes:
    return b"".join(
        (f"event: {n}\n" if n else "").encode() + b"data: " + json.dumps(d).encode() + b"\n\n"
        for n, d in events
    )


def test_a_streamed_reply_reads_as_the_whole_reply_does() -> None:
    from contextwarden.proxy.replies import read_reply
    from tests.proxy_harness import chat_chunks, chat_completion, sse_events

    content = [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "recall_0", "name": "recall", "input": {"id": "sha256-ab"}},
    ]
    usage = {"input_tokens": 900, "output_tokens": 20}
    message = {"id": "m", "type": "message", "role": "assistant", "model": "m", "usage": usage}
    message |= {"content": content, "stop_reason": "tool_use"}
    whole = read_reply("anthropic", json.dumps(message).encode(), streamed=False)
    streamed = read_reply("anthropic", sse(list(sse_events(message))), streamed=True)
    assert streamed.message == whole.message
    assert [(u.name, dict(u.input)) for u in streamed.message.tool_uses] == [
        ("recall", {"id": "sha256-ab"})
    ]
    assert streamed.usage == {"input_tokens": 900, "output_tokens": 20}

    completion = chat_completion({}, Scripted(content, "tool_use"), 900)
    chunks = json.loads(
        json.dumps(list(chat_chunks(completion, {"stream_options": {"include_usage": True}})))
    )
    # arguments split across deltas, as servers stream them
    call = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
    arguments = call["function"]["arguments"]
    call["function"]["arguments"] = arguments[:5]
    more = {"index": 0, "function": {"arguments": arguments[5:]}}
    extra = {**chunks[0], "choices": [{"index": 0, "delta": {"tool_calls": [more]}}]}
    stream = sse([(None, c) for c in [chunks[0], extra, *chunks[1:]]])
    whole = read_reply("openai-chat", json.dumps(completion).encode(), streamed=False)
    streamed = read_reply("openai-chat", stream, streamed=True)
    assert streamed.message == whole.message and streamed.usage == completion["usage"]


def test_a_reply_that_is_no_message_is_a_format_error() -> None:
    from contextwarden.errors import FormatError
    from contextwarden.proxy.replies import read_reply

    with pytest.raises(FormatError, match="not JSON"):
        read_reply("anthropic", b"<html>bad gateway</html>", streamed=False)
    with pytest.raises(FormatError, match=r"without response\.completed"):
        read_reply("openai-responses", sse([("response.created", {"type": "x"})]), streamed=True)


def test_a_retried_question_replays_its_turn_with_its_rounds_on_one_session(
    tmp_path: Path,
) -> None:
    model = Model()
    with upstream(model) as api, proxy_server(config(api.url, tmp_path)) as url:
        first, _ = ask(url, MESSAGES, prior(MESSAGES), stream=False)
        again, _ = ask(url, MESSAGES, prior(MESSAGES), stream=True)  # the agent retries
        sessions = admin_get(url, "/sessions").json()["sessions"]
        shown = admin_get(url, f"/sessions/{sessions[0]}").json()
    assert first == again == f"It returned: {NEEDLE[-60:]}"
    assert len(sessions) == 1 and len(shown["recall_rounds"]) == 2
    requests = api.messages_requests()
    questions = [b for b in requests if conversation(b)[-1].text == QUESTION]
    assert len(questions) == 2 and questions[0]["messages"] == questions[1]["messages"]
    assert shown["compactions"] and len(shown["compactions"]) == 1  # not compacted twice
