"""Copilot CLI session events: typed prompts, replies with their tool requests, and results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.typed import user_messages

SAMPLE = (
    Path(__file__).parent / "data" / "copilot" / "EntityProcess__agentv__269e1b9e5502-events.jsonl"
)


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_requests_and_results_pair_up_in_call_order_of_the_reply() -> None:
    events = _events()
    assert detect_format(SAMPLE) == "copilot"
    history = load(SAMPLE)
    requested = [
        r["toolCallId"]
        for e in events
        if e["type"] == "assistant.message"
        for r in e["data"]["toolRequests"]
    ]
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    assert [u.id for u in uses] == requested  # execution_start repeats them: not added twice
    completed = {
        e["data"]["toolCallId"]: e["data"]["result"]["content"]
        for e in events
        if e["type"] == "tool.execution_complete"
    }
    results = [b for m in history.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert {r.tool_use_id: r.content for r in results} == completed
    assert validate(history.messages) == []


def test_typed_text_system_prompt_model_and_reasoning_are_kept_apart() -> None:
    events = _events()
    history = load(SAMPLE)
    user = next(e["data"] for e in events if e["type"] == "user.message")
    first = history.messages[0]
    assert first.content == (TextBlock(user["content"]),)
    assert first.meta.extra["transformed_content"] == user["transformedContent"]
    system = next(e["data"]["content"] for e in events if e["type"] == "system.message")
    assert history.system == system
    reply = history.messages[1]
    assert reply.meta.extra["model"] == "claude-sonnet-4.6"
    assert reply.meta.extra["reasoning"]["reasoningText"].startswith("Let me investigate")
    assert reply.meta.extra["usage"] == {"output_tokens": 174}
    report = history.source
    assert report is not None and report.metadata["session"]["copilotVersion"] == "1.0.64"
    assert report.metadata["event_types"]["hook.start"] == 2
    assert report.issues == []


def test_calls_without_a_request_failures_and_subagents(tmp_path: Path) -> None:
    events = _events()[:10]  # up to the first reply
    reply = next(e for e in events if e["type"] == "assistant.message")
    reply["data"]["toolRequests"] = []  # an older CLI: the call appears only as execution_start
    events += [
        e
        for e in _events()
        if e["type"] == "tool.execution_start"
        and e["data"]["toolCallId"] == "toolu_bdrk_01SMxhwX6xh7yd7zJ2Mvkhq7"
    ]
    events.append(
        {
            "type": "tool.execution_complete",
            "id": "x1",
            "data": {
                "toolCallId": "toolu_bdrk_01SMxhwX6xh7yd7zJ2Mvkhq7",
                "success": False,
                "error": {"message": "Permission denied by preToolUse hook"},
            },
        }
    )
    events.append(
        {
            "type": "assistant.message",
            "id": "x2",
            "data": {
                "content": "subagent says hi",
                "parentToolCallId": "toolu_x",
                "toolRequests": [],
            },
        }
    )
    events.append({"type": "abort", "id": "x3", "data": {"reason": "user_initiated"}})
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    history = load(path)
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    assert [u.id for u in uses] == ["toolu_bdrk_01SMxhwX6xh7yd7zJ2Mvkhq7"]
    result = history.messages[-1].content[0]
    assert isinstance(result, ToolResultBlock) and result.is_error
    assert result.content == "Permission denied by preToolUse hook"
    report = history.source
    assert report is not None and report.metadata["subagent_events"] == 1
    assert report.metadata["event_types"]["abort"] == 1 and report.issues == []
    assert validate(history.messages) == []


def test_a_background_tasks_prompt_is_the_subagents_and_a_system_message_is_not_typed(
    tmp_path: Path,
) -> None:
    """Copilot CLI 2026: a ``task`` call in ``background`` mode answers at once; the prompt it
    hands the subagent is then written as a ``user.message`` whose ``source`` is
    ``agent-<session id>`` and whose events after it carry the call's id; the CLI's own reminders
    have ``source: system``."""
    events = _events()[:10]
    prompt = "# Car 46 FIX CYCLE\n\nYou are an implementer car. VERIFY FIRST, STOP IF WRONG."
    events += [
        {
            "type": "user.message",
            "id": "x1",
            "data": {"content": prompt, "source": "agent-e07fc822", "interactionId": "i"},
        },
        {
            "type": "user.message",
            "id": "x2",
            "data": {
                "content": "Deferred tools: call the tool search tool first.",
                "source": "system",
            },
        },
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    history = load(path)
    texts = [b.text for m in history.messages for b in m.content if isinstance(b, TextBlock)]
    assert prompt not in texts
    first = next(e["data"]["content"] for e in events if e["type"] == "user.message")
    assert [t.text for t in user_messages(history.messages)] == [first]
    report = history.source
    assert report is not None and report.metadata["subagent_events"] == 1


def _one_turn(
    tmp_path: Path, asked: str, calls: dict[str, tuple[str, dict[str, Any], str]]
) -> Path:
    """A Copilot CLI events file of one turn: ``asked``, then a reply requesting ``calls`` (id →
    tool, arguments, output), each completed with ``success: true`` as Copilot CLI logs them."""
    requests = [
        {"toolCallId": c, "name": name, "arguments": args} for c, (name, args, _) in calls.items()
    ]
    events: list[dict[str, Any]] = [
        {"type": "user.message", "id": "u", "data": {"content": asked}},
        {"type": "assistant.message", "id": "a", "data": {"content": "", "toolRequests": requests}},
    ]
    events += [
        {
            "type": "tool.execution_complete",
            "id": f"r{c}",
            "data": {"toolCallId": c, "success": True, "result": {"content": out}},
        }
        for c, (_, _, out) in calls.items()
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return path


def test_a_shell_result_ending_in_a_nonzero_exit_code_is_failed(tmp_path: Path) -> None:
    """Copilot CLI's shell tools (``bash``, ``powershell``) end their result in
    ``<shellId: N completed with exit code K>`` and log ``success: true`` whatever ``K``: a
    non-zero ``K`` is a failed command, as every other agent flags one."""
    calls = {"c0": "true", "c1": "false", "c2": "echo '<shellId: 9 completed with exit code 1>'"}
    outputs = {
        "c0": "<shellId: 0 completed with exit code 0>",
        "c1": "fatal: not a git repository\n<shellId: 1 completed with exit code 128>",
        "c2": "<shellId: 9 completed with exit code 1>\nnot the last line\n"
        "<shellId: 2 completed with exit code 0>",
    }
    path = _one_turn(
        tmp_path,
        "run them",
        {c: ("bash", {"command": command}, outputs[c]) for c, command in calls.items()},
    )
    results = [b for m in load(path).messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert [(r.tool_use_id, r.is_error) for r in results] == [
        ("c0", False),
        ("c1", True),
        ("c2", False),
    ]


def test_a_view_of_a_file_too_large_to_read_is_a_failed_read(tmp_path: Path) -> None:
    """Copilot CLI's ``view`` answers a file it would not read with its own words in place of
    the contents, ``success: true`` (its ``tool.execution_complete``, 2026): the summary lists
    that read as failed, as Claude Code's Read flags the same refusal."""
    refusal = (
        "File too large to read at once (42.1 KB). Consider using the grep tool to search "
        "within the file, or view with view_range to read specific sections."
    )
    results = {"c0": refusal, "c1": '1. {\n2.   "name": "gatomia"\n3. }'}
    path = _one_turn(
        tmp_path,
        "read the manifests",
        {c: ("view", {"path": f"/w/{c}/package.json"}, out) for c, out in results.items()},
    )
    errors = extract_facts(load(path).messages).errors
    assert [e.excerpt for e in errors] == [refusal]


def test_an_output_kept_back_as_too_large_is_a_failed_call_of_any_tool(tmp_path: Path) -> None:
    """Copilot CLI answers a call whose output is too long (a ``glob``'s, a shell's) with its
    own words, where it saved the output and a preview of it, ``success: true`` (2026): the
    call's output never reached the model, so the summary lists it as failed by its first
    sentence, the temporary file, advice and preview left out; a short output stays a
    success."""
    withheld = (
        "Output too large to read at once (20.2 KB). Saved to: /tmp/copilot-tool-output-1.txt\n"
        "Consider using tools like grep (for searching), head/tail (for viewing start/end), "
        "view with view_range (for specific sections), or jq (for JSON) to examine portions "
        "of the output.\n\nPreview (first 500 chars):\n/w/src/errors.ts\n/w/src/app.ts"
    )
    calls = {
        "c0": ("glob", {"pattern": "src/**/*.ts"}, withheld),
        "c1": ("bash", {"command": "git show HEAD:plan.md"}, withheld.replace("20.2", "27.2")),
        "c2": ("glob", {"pattern": "docs/*.md"}, "/w/docs/a.md"),
    }
    path = _one_turn(tmp_path, "find the sources", calls)
    errors = extract_facts(load(path).messages).errors
    assert [(e.excerpt, e.more) for e in errors] == [
        ("Output too large to read at once (20.2 KB).", ()),
        ("Output too large to read at once (27.2 KB).", ()),
    ]
