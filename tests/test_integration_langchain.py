"""The LangChain / LangGraph adapter: lossless conversions, and real agents (``create_agent``
with the middleware, ``create_react_agent`` with the pre-model hook) driven by a scripted model
over a window they overflow, with compaction state kept across turns and restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
)
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from contextwarden import ContextPolicy
from contextwarden.integrations.langchain import (
    ContextWardenMiddleware,
    from_langchain,
    to_langchain,
)
from contextwarden.rules import validate
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter

pytestmark = pytest.mark.usefixtures("close_event_loop")
WINDOW = 8_000


# ----------------------------------------------------------------------------- conversions
texts = st.text(min_size=1, max_size=40).filter(str.strip)


@st.composite
def conversations(draw: st.DrawFn) -> list[BaseMessage]:
    """Valid LangChain agent conversations: human turns, AI replies with tool calls (text or
    content-part lists), answered by tool messages (some errors, some with list content)."""
    out: list[BaseMessage] = []
    if draw(st.booleans()):
        out.append(SystemMessage(draw(texts)))
    calls = 0
    for turn in range(draw(st.integers(1, 5))):
        out.append(HumanMessage(draw(texts), id=f"h{turn}"))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"call_{calls + k}" for k in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            content: Any = draw(st.one_of(texts, st.just([{"type": "text", "text": "x"}])))
            out.append(
                AIMessage(
                    content=content,
                    id=f"ai{calls}",
                    tool_calls=[{"name": "read", "args": {"p": i}, "id": i} for i in ids],
                    usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13},
                )
            )
            for i in ids:
                body: Any = draw(st.one_of(texts, st.just([{"type": "text", "text": "r"}])))
                status = draw(st.sampled_from(["success", "error"]))
                out.append(ToolMessage(body, tool_call_id=i, name="read", status=status))
        out.append(AIMessage(draw(texts), id=f"final{turn}"))
    return out


@settings(max_examples=25, deadline=None)
@given(conversations())
def test_conversion_round_trips_and_is_valid(messages: list[BaseMessage]) -> None:
    system, ours = from_langchain(messages)
    assert validate(ours) == []
    assert to_langchain(ours, system) == messages


def test_edited_messages_are_rebuilt_from_blocks() -> None:
    messages = [
        HumanMessage("read it"),
        AIMessage("", tool_calls=[{"name": "read", "args": {}, "id": "c1"}]),
        ToolMessage("long output", tool_call_id="c1", name="read"),
    ]
    _, ours = from_langchain(messages)
    from dataclasses import replace

    from contextwarden.model import ToolResultBlock

    cleared = replace(ours[2], content=(ToolResultBlock("c1", "[cleared]"),))
    back = to_langchain([*ours[:2], cleared])
    assert back[:2] == messages[:2]
    assert isinstance(back[2], ToolMessage)
    assert (back[2].content, back[2].tool_call_id, back[2].name) == ("[cleared]", "c1", "read")


# ----------------------------------------------------------------------------- real agents
class ScriptedChatModel(FakeMessagesListChatModel):
    """A scripted model (LangChain's fake list model) that records every request it receives."""

    seen: ClassVar[list[list[BaseMessage]]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def script(turns: int, start: int = 0) -> list[BaseMessage]:
    replies: list[BaseMessage] = []
    for n in range(start, start + turns):
        call = {"name": "read_file", "args": {"path": f"f{n}.txt"}, "id": f"call_{n}"}
        replies.append(AIMessage("", tool_calls=[call], usage_metadata=_usage(n)))
    replies.append(AIMessage("done", usage_metadata=_usage(start + turns)))
    return replies


def _usage(n: int) -> Any:
    return {"input_tokens": 500 + 900 * n, "output_tokens": 20, "total_tokens": 520 + 900 * n}


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}: " + " ".join(f"line {i} of {path}" for i in range(500))


def check_requests(seen: list[list[BaseMessage]]) -> None:
    counter, policy = HeuristicCounter(), ContextPolicy(context_window=WINDOW)
    for request in seen:
        system, ours = from_langchain(request)
        assert validate(ours) == [], request
        total = sum(counter.count_message(m) for m in ours) + counter.count_text(system or "")
        assert total <= policy.effective_window


def run_agent(
    store: Path, replies: list[BaseMessage], prompt: str
) -> tuple[ContextWardenMiddleware, list[BaseMessage]]:
    cw = ContextWardenMiddleware(store=str(store), policy=ContextPolicy(context_window=WINDOW))
    model = ScriptedChatModel(responses=replies)
    agent = create_agent(model, tools=[read_file], middleware=[cw], checkpointer=SAVER)
    result = agent.invoke(
        {"messages": [HumanMessage(prompt)]},
        {"configurable": {"thread_id": "t1"}, "recursion_limit": 100},
    )
    return cw, result["messages"]


def tokens(messages: list[BaseMessage]) -> int:
    return sum(HeuristicCounter().count_message(m) for m in from_langchain(messages)[1])


SAVER = InMemorySaver()


def test_create_agent_compacts_stays_valid_and_survives_restart(tmp_path: Path) -> None:
    ScriptedChatModel.seen = []
    db = tmp_path / "sessions.db"
    cw, state = run_agent(db, script(12), "read all twelve files")
    assert len(ScriptedChatModel.seen) == 13
    check_requests(ScriptedChatModel.seen)
    history = cw.mirror.history("langgraph-t1")
    compactions = [e for e in history.log if type(e).__name__ == "CompactionBoundary"]
    assert compactions, "a 12-read session in an 8,000-token window must compact"
    # The graph's state kept everything (unmanaged, over the window); the model got far less.
    assert len(state) == 1 + 12 * 2 + 1
    sent = tokens(ScriptedChatModel.seen[-1])
    assert tokens(state[:-1]) > WINDOW > sent and tokens(state[:-1]) > 2 * sent

    # A new process: a new middleware on the same store and thread resumes the managed state.
    ScriptedChatModel.seen = []
    again, _ = run_agent(db, script(3, start=12), "now three more")
    check_requests(ScriptedChatModel.seen)
    resumed = again.mirror.history("langgraph-t1")
    assert len(resumed.log) > len(history.log)
    assert [type(e).__name__ for e in resumed.log[: len(history.log)]] == [
        type(e).__name__ for e in history.log
    ]
    first_request = ScriptedChatModel.seen[0]
    assert any("read all twelve files" in str(m.content) for m in first_request), (
        "the first typed user message survives compaction"
    )
    store = SqliteStore(db)
    assert "langgraph-t1" in store.list_sessions()
    store.close()


def test_react_agent_pre_model_hook(tmp_path: Path) -> None:
    from langgraph.prebuilt import create_react_agent

    ScriptedChatModel.seen = []
    cw = ContextWardenMiddleware(
        store=str(tmp_path / "s.db"), policy=ContextPolicy(context_window=WINDOW)
    )
    model = ScriptedChatModel(responses=script(10))
    with pytest.warns(Warning):  # create_react_agent is deprecated in favour of create_agent
        agent = create_react_agent(model, [read_file], pre_model_hook=cw.pre_model_hook)
    result = agent.invoke({"messages": [HumanMessage("read ten files")]}, {"recursion_limit": 100})
    assert len(result["messages"]) == 1 + 10 * 2 + 1  # the graph's state is not rewritten
    check_requests(ScriptedChatModel.seen)
    assert cw.last is not None and cw.last.history.log
    assert any(type(e).__name__ == "CompactionBoundary" for e in cw.last.history.log)
