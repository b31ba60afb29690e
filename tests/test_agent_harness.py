"""The end-to-end agent tests' own parts, checked without any agent: the scripted model picks
each agent's tools and the right step, refuses invalid requests, and the prefix accounting tells
a proxy's compaction and an agent's rewrite from an unexplained change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_checks import ProxyLine, extends, run_stats
from tests.agent_recorder import Sent
from tests.agent_task import FINAL_ANSWER, SIDE_ANSWER, STEPS, ScriptedTask, Seen

MESSAGES = "/v1/messages"
RESPONSES = "/v1/responses"
CLAUDE_TOOLS = [
    {"name": n, "input_schema": {"type": "object", "properties": p, "required": list(p)}}
    for n, p in (
        ("Read", {"file_path": {"type": "string"}}),
        ("Grep", {"pattern": {"type": "string"}, "path": {"type": "string"}}),
        ("Bash", {"command": {"type": "string"}, "description": {"type": "string"}}),
    )
]
CODEX_TOOLS = [
    {
        "type": "function",
        "name": "shell",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "array"}, "workdir": {"type": "string"}},
            "required": ["command"],
        },
    }
]


def task(tmp_path: Path) -> ScriptedTask:
    return ScriptedTask(tmp_path, ["contextwarden/a.py", "contextwarden/b.py"])


def anthropic_after(step: int) -> dict[str, Any]:
    """A Claude Code-shaped request whose last message answers step ``step``'s call."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Study the package."}]
    if step:
        call = {"type": "tool_use", "id": f"call_scripted_{step:02d}", "name": "Read", "input": {}}
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": "x = 1"}
        messages += [
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
    return {"model": "m", "max_tokens": 100, "tools": CLAUDE_TOOLS, "messages": messages}


def test_the_step_follows_the_answered_call_and_uses_the_agents_tools(tmp_path: Path) -> None:
    model = task(tmp_path)
    first = model.reply(MESSAGES, anthropic_after(0)).content[0]
    assert first["name"] == "Read" and first["id"] == "call_scripted_01"
    assert first["input"] == {"file_path": str(tmp_path / "contextwarden/a.py")}
    grep = model.reply(MESSAGES, anthropic_after(1)).content[0]
    assert grep["name"] == "Grep" and grep["input"]["pattern"] == "def "
    shell = model.reply(MESSAGES, anthropic_after(2)).content[0]
    assert shell["name"] == "Bash" and shell["input"]["description"]
    assert shell["input"]["command"].startswith("wc -l ")
    final = model.reply(MESSAGES, anthropic_after(STEPS)).content
    assert final == [{"type": "text", "text": FINAL_ANSWER}]


def test_an_agent_with_only_a_shell_reads_with_it(tmp_path: Path) -> None:
    body = {"model": "m", "tools": CODEX_TOOLS, "input": [{"role": "user", "content": "go"}]}
    call = task(tmp_path).reply(RESPONSES, body).content[0]
    assert call["name"] == "shell"
    assert call["input"]["command"] == ["bash", "-lc", f"cat {tmp_path / 'contextwarden/a.py'}"]
    assert call["input"]["workdir"] == str(tmp_path)


def test_side_requests_get_text_and_invalid_requests_a_400(tmp_path: Path) -> None:
    model = task(tmp_path)
    side = {"model": "m", "messages": [{"role": "user", "content": "A title, please."}]}
    assert model.reply(MESSAGES, side).content == [{"type": "text", "text": SIDE_ANSWER}]
    orphan = anthropic_after(3)
    del orphan["messages"][1]  # the result now answers no call
    refused = model.reply(MESSAGES, orphan)
    assert refused.status == 400 and model.seen[-1].problems


def test_system_messages_inside_messages_are_counted_not_refused(tmp_path: Path) -> None:
    body = anthropic_after(0)
    body["messages"].append({"role": "system", "content": "# Environment\n" + "x " * 2_000})
    model = task(tmp_path)
    model.reply(MESSAGES, anthropic_after(0))
    model.reply(MESSAGES, body)
    assert not model.seen[-1].problems
    assert model.seen[-1].tokens > model.seen[0].tokens + 1_000


def test_a_prefix_extends_whatever_cache_control_does() -> None:
    before = anthropic_after(1)
    after = anthropic_after(2)
    after["messages"][1:3] = before["messages"][1:3]
    after["messages"] += anthropic_after(2)["messages"][1:]
    after["messages"][-1]["content"][0]["cache_control"] = {"type": "ephemeral"}
    assert extends(before, after, MESSAGES)
    assert not extends(before | {"system": "changed"}, after, MESSAGES)
    assert not extends(anthropic_after(2), anthropic_after(1), MESSAGES)


def test_prefix_changes_are_explained_by_a_compaction_or_by_the_agent() -> None:
    one, rewritten = anthropic_after(1), anthropic_after(1) | {"system": "new reminder"}
    seen = [_seen(one), _seen(rewritten), _seen(one)]
    sent = [Sent("POST", MESSAGES, b, 200) for b in (one, rewritten, one)]
    plain = [ProxyLine("s", 200, ())] * 3
    stats = run_stats(MESSAGES, seen, sent, plain)
    assert stats.prefix_breaks == 2 and stats.unexplained_breaks == ()
    unchanged = [Sent("POST", MESSAGES, one, 200)] * 3
    stats = run_stats(MESSAGES, seen, unchanged, plain)
    assert stats.unexplained_breaks == (1, 2)
    compacted = [ProxyLine("s", 200, ()), *[ProxyLine("s", 200, ("summarize",))] * 2]
    stats = run_stats(MESSAGES, seen, unchanged, compacted)
    assert stats.unexplained_breaks == () and stats.summaries == 2 and stats.sessions == 1


def _seen(body: dict[str, Any]) -> Seen:
    return Seen(MESSAGES, body, 100, ())
