"""The session file the real qwen-code writes loads as the conversation it had.

The pinned qwen-code (tests/agents/package.json) plays the scripted 20-step task of the
end-to-end tests (tests/agent_task.py) directly against the scripted model, in its own network
namespace (tests/agent_runs.py); then its chat file under ``~/.qwen/projects/*/chats/`` is loaded
by detection: every scripted call is a tool_use answered by its result, in order, and the last
message is the scripted final answer. Without the agent installed the test skips saying why (under
``CI=true`` that is a failure).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contextwarden.formats import detect_format, load
from contextwarden.rules import validate
from tests.agent_recorder import recording
from tests.agent_runs import AGENTS, required, run_isolated, task_workspace
from tests.agent_task import FINAL_ANSWER, STEPS, ScriptedTask
from tests.agent_upstream import scripted_model

pytestmark = pytest.mark.agents


def test_the_chat_file_qwen_code_writes_loads_as_its_conversation(tmp_path: Path) -> None:
    agent = required(next(a for a in AGENTS if a.name == "qwen-code"))
    root, home = tmp_path / "workspace", tmp_path / "home"
    modules = task_workspace(root)
    home.mkdir()
    task = ScriptedTask(root, modules)
    with scripted_model(task) as model, recording(tmp_path / "agent.sock", model.url):
        done = run_isolated(agent, root, home, tmp_path / "agent.sock", modules)
    assert done.returncode == 0, done.stderr[-2000:]
    (chat,) = home.glob(".qwen/projects/*/chats/*.jsonl")
    assert detect_format(chat) == "qwen-code"
    history = load(chat)
    assert validate(history.messages) == []
    assert history.source is not None and history.source.unreadable == 0
    uses = [u for m in history.messages for u in m.tool_uses]
    assert [u.id for u in uses] == [f"call_scripted_{n:02d}" for n in range(1, STEPS + 1)]
    answered = [r.tool_use_id for m in history.messages for r in m.tool_results]
    assert answered == [u.id for u in uses]
    assert history.messages[-1].role == "assistant"
    assert history.messages[-1].text == FINAL_ANSWER
