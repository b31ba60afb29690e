"""The pydantic-ai adapter: lossless conversions, and a real ``Agent`` with the history processor
driven by pydantic-ai's own ``FunctionModel`` over a window it overflows, across runs and a
restart. The venv has pydantic-ai 2; the same tests pass on 1.x (1.107: ``pip install --target
DIR --no-deps pydantic-ai-slim==1.107.10 pydantic-graph==1.107.10`` and DIR first on PYTHONPATH)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic_ai")

import pydantic_ai
from pydantic_ai import Agent
from pydantic_ai import messages as pm
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from contextwarden import ContextPolicy
from contextwarden.integrations.pydantic_ai import (
    ContextWardenProcessor,
    from_pydantic_ai,
    to_pydantic_ai,
)
from contextwarden.log import CompactionBoundary
from contextwarden.model import ToolResultBlock
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter

pytestmark = pytest.mark.usefixtures("close_event_loop")
WINDOW = 8_000
PYDANTIC_AI_MAJOR = int(pydantic_ai.__version__.split(".")[0])
FAILED: Any = "retried" if hasattr(pm, "ERROR_OUTCOMES") else "failed"
"""A failed tool return's outcome: 2.x asks the model to retry, 1.x only says it failed."""
texts = st.text(min_size=1, max_size=40).filter(str.strip)


@st.composite
def conversations(draw: st.DrawFn) -> list[pm.ModelMessage]:
    """Valid pydantic-ai histories: prompts (with a system prompt first), responses with text,
    thinking and tool calls, answered by tool returns (some retried), and a file part we do
    not model."""
    out: list[pm.ModelMessage] = []
    calls = 0
    for turn in range(draw(st.integers(1, 4))):
        parts: list[Any] = [pm.UserPromptPart(draw(texts))]
        if turn == 0 and draw(st.booleans()):
            parts.insert(0, pm.SystemPromptPart(draw(texts)))
        out.append(pm.ModelRequest(parts=parts))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"call_{calls + k}" for k in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            head: list[Any] = []
            if draw(st.booleans()):
                head.append(pm.ThinkingPart(draw(texts), signature=draw(st.none() | texts)))
            calls_parts = [pm.ToolCallPart("read", {"p": i}, i) for i in ids]
            usage = RequestUsage(input_tokens=draw(st.integers(1, 999)), output_tokens=5)
            out.append(pm.ModelResponse(parts=[*head, *calls_parts], usage=usage))
            returns: list[Any] = [
                draw(
                    st.sampled_from(
                        [
                            pm.ToolReturnPart("read", "contents", i),
                            pm.ToolReturnPart("read", "bad path", i, outcome=FAILED),
                        ]
                    )
                )
                for i in ids
            ]
            out.append(pm.ModelRequest(parts=returns))
        final: list[Any] = [pm.TextPart(draw(texts))]
        if draw(st.booleans()):
            final.append(pm.FilePart(pm.BinaryContent(b"\x89PNG", media_type="image/png")))
        out.append(pm.ModelResponse(parts=final))
    return out


@settings(max_examples=25, deadline=None)
@given(conversations())
def test_conversion_round_trips_and_is_valid(messages: list[pm.ModelMessage]) -> None:
    system, ours = from_pydantic_ai(messages)
    assert validate(ours) == []
    # Compared as pydantic-ai serialises them (its own adapter turns BinaryContent of an image
    # into BinaryImage, so object equality would fail on pydantic-ai's side, not ours).
    dump = pm.ModelMessagesTypeAdapter.dump_python
    assert dump(to_pydantic_ai(ours, system), mode="json") == dump(messages, mode="json")


@settings(max_examples=25, deadline=None)
@given(conversations())
def test_rebuilt_messages_convert_back_to_the_same_blocks(messages: list[pm.ModelMessage]) -> None:
    """A message compaction edited is rebuilt from its blocks; reading it back gives the same
    blocks, so the next call (which continues the managed view) is recognised."""
    system, ours = from_pydantic_ai(messages)
    bare = [type(m)(m.role, m.content) for m in ours]  # no stash: forces the rebuild path
    assert from_pydantic_ai(to_pydantic_ai(bare, system))[1] == bare


# ----------------------------------------------------------------------------- a real agent
class ScriptedModel:
    """A scripted model for pydantic-ai's ``FunctionModel``: reads ``reads`` files one call at a
    time, then answers; it records every message list it is sent."""

    def __init__(self, reads: int, start: int = 0) -> None:
        self.reads, self.start = reads, start
        self.seen: list[list[pm.ModelMessage]] = []

    def __call__(self, messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        self.seen.append(list(messages))
        step = len(self.seen) - 1
        usage = RequestUsage(input_tokens=400 + 900 * step, output_tokens=20)
        if step < self.reads:
            n = self.start + step
            call = pm.ToolCallPart("read_file", {"path": f"f{n}.txt"}, f"call_{n}")
            return pm.ModelResponse(parts=[call], usage=usage)
        return pm.ModelResponse(parts=[pm.TextPart("all read")], usage=usage)


HOOKS = ["capabilities"] + (["history_processors"] if PYDANTIC_AI_MAJOR < 2 else [])
"""How an Agent takes the processor: a capability (1.107+, 2.x), and history_processors (1.x)."""


def make_agent(
    model: ScriptedModel, processor: ContextWardenProcessor, hook: str = "capabilities"
) -> Agent[None, str]:
    function = FunctionModel(model.__call__)
    if hook == "capabilities":
        agent = Agent(function, capabilities=[ProcessHistory(processor)])
    else:
        options: dict[str, Any] = {"history_processors": [processor]}  # gone in 2.x
        with warnings.catch_warnings():  # late 1.x deprecates it in favour of capabilities
            warnings.simplefilter("ignore")
            agent = Agent(function, **options)

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        return f"contents of {path}: " + " ".join(f"line {i} of {path}" for i in range(500))

    return agent


def check_requests(seen: list[list[pm.ModelMessage]]) -> None:
    counter, limit = HeuristicCounter(), ContextPolicy(context_window=WINDOW).effective_window
    for request in seen:
        system, ours = from_pydantic_ai(request)
        assert validate(ours) == []
        assert sum(map(counter.count_message, ours)) + counter.count_text(system or "") <= limit


def processor(db: Path) -> ContextWardenProcessor:
    return ContextWardenProcessor(store=str(db), policy=ContextPolicy(context_window=WINDOW))


@pytest.mark.parametrize("hook", HOOKS)
def test_agent_compacts_keeps_state_across_runs_and_restart(tmp_path: Path, hook: str) -> None:
    db = tmp_path / "sessions.db"
    first, cw = ScriptedModel(12), processor(db)
    result = make_agent(first, cw, hook).run_sync("read all twelve files")
    assert result.output == "all read" and len(first.seen) == 13
    check_requests(first.seen)
    assert cw.last is not None
    history = cw.last.history
    assert any(isinstance(e, CompactionBoundary) for e in history.log)
    cleared = [b for m in history.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert any("contents of" not in b.text for b in cleared), "old tool results were cleared"

    # Next run in a new process: a new processor on the same store continues the conversation.
    second, again = ScriptedModel(3, start=12), processor(db)
    result = make_agent(second, again, hook).run_sync(
        "now three more", message_history=result.all_messages()
    )
    assert result.output == "all read"
    check_requests(second.seen)
    assert again.last is not None and again.last.session_id == cw.last.session_id
    resumed = again.last.history
    assert resumed.log[: len(history.log)] == history.log, "the stored log was continued"
    assert any("read all twelve files" in m.text for m in resumed.messages)
