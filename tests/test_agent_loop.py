"""The agent loop: Ctrl-C during a reply or a tool keeps a valid session, declined tools are
answered, and calls a crash left pending are answered on resume. A scripted provider stands in
for the model (the real SDKs are driven in tests/test_chat.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextwarden.agent.loop import DECLINED, ENDED, INTERRUPTED, Agent, Interrupted
from contextwarden.agent.tools import Call, Outcome, Tools
from contextwarden.agent.workspace import Workspace
from contextwarden.compaction.apply import CompactionReport
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock, ToolUseBlock
from contextwarden.rules import validate


class ScriptedProvider:
    """Answers from a list of steps: a Message to return, or a callable run while 'streaming'."""

    name, model = "scripted", "scripted-1"
    errors: tuple[type[Exception], ...] = ()

    def __init__(self, steps: list[Message | Callable[[Callable[[str], None]], Any]]) -> None:
        self.steps: Iterator[Message | Callable[[Callable[[str], None]], Any]] = iter(steps)

    def complete(self, history: ConversationHistory, on_text: Callable[[str], None]) -> Any:
        step = next(self.steps)
        if isinstance(step, Message):
            on_text(step.text)
            return step
        return step(on_text)


class QuietUI:
    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def text(self, delta: str) -> None: ...

    def end_reply(self) -> None: ...

    def tool(self, call: Call) -> None: ...

    def result(self, call: Call, outcome: Outcome) -> None: ...

    def compaction(self, report: CompactionReport) -> None: ...

    def confirm(self, call: Call) -> bool:
        self.asked.append(call.name)
        return self.answer


def calls(*names: str) -> Message:
    uses = [
        ToolUseBlock(f"t{i}", n, {"command": "true"} if n == "bash" else {"path": "."})
        for i, n in enumerate(names)
    ]
    return Message("assistant", (TextBlock("working"), *uses))


def agent(tmp_path: Path, steps: list[Any], ui: QuietUI | None = None) -> Agent:
    history = ConversationHistory(system="s", mode="merge")
    tools = Tools(Workspace(tmp_path))
    return Agent(history, ContextManager(), ScriptedProvider(steps), tools, ui or QuietUI())


def test_ctrl_c_while_streaming_keeps_the_partial_reply_and_a_valid_session(tmp_path: Path) -> None:
    def interrupted(on_text: Callable[[str], None]) -> Any:
        on_text("Half of an ans")
        raise KeyboardInterrupt

    a = agent(tmp_path, [interrupted, Message.assistant("second answer")])
    with pytest.raises(Interrupted):
        a.run("first question")
    last = a.history.messages[-1]
    assert last.role == "assistant" and last.text == f"Half of an ans\n\n{INTERRUPTED}"
    assert a.run("go on") == "second answer"
    assert validate(a.history.messages) == []


def test_ctrl_c_in_a_tool_answers_every_call_and_keeps_the_session(tmp_path: Path) -> None:
    a = agent(tmp_path, [calls("list_files", "list_files")])

    def interrupt(call: Call) -> Outcome:
        raise KeyboardInterrupt

    a.tools.run = interrupt  # type: ignore[method-assign]
    with pytest.raises(Interrupted):
        a.run("list things")
    results = a.history.messages[-1].tool_results
    assert [r.text for r in results] == [INTERRUPTED, INTERRUPTED] and all(
        r.is_error for r in results
    )
    assert validate(a.history.messages) == []


def test_declined_tools_are_answered_and_read_only_tools_are_not_asked(tmp_path: Path) -> None:
    ui = QuietUI(answer=False)
    a = agent(tmp_path, [calls("bash", "list_files"), Message.assistant("ok")], ui)
    assert a.run("do it") == "ok"
    assert ui.asked == ["bash"]
    bash, listing = a.history.messages[-2].tool_results
    assert bash.is_error and bash.text == DECLINED and not listing.is_error


def test_calls_a_crash_left_pending_are_answered_on_resume(tmp_path: Path) -> None:
    history = ConversationHistory(system="s", mode="merge")
    history.add_user_message("run it")
    history.add(calls("bash"))
    Agent(history, ContextManager(), ScriptedProvider([]), Tools(Workspace(tmp_path)), QuietUI())
    (result,) = history.messages[-1].tool_results
    assert result.is_error and result.text == ENDED
    assert validate(history.messages) == []
