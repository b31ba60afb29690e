"""Decisions in a plan the agent presents or writes down, an issue it files, or a fact it stores
for later sessions (``summarizers.plans``).

The calls are in the shapes the harnesses write: Claude Code's ``ExitPlanMode`` takes the plan as
Markdown in ``{"plan": "..."}`` and answers "User has approved your plan." or, flagged an error,
its rejection notice; Copilot CLI's agent writes ``plan.md`` in its session folder
(``~/.copilot/session-state/<id>/plan.md``) with ``apply_patch``; Gemini CLI's ``save_memory``
takes ``{"fact": "..."}``, Copilot CLI's ``store_memory`` the fact with its subject, citations and
reason. The plans' text is invented,
wrapped at a fixed width as agents often write them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from contextwarden.model import Message, ToolResultBlock
from contextwarden.model import ToolUseBlock as Use
from contextwarden.summarizers import plans
from contextwarden.summarizers.facts import extract_facts

PLAN = (
    "# Fix: WAL files are never reset on shutdown\n\n"
    "## Approach\n\n"
    "Rotate only the hosts that received a fresh snapshot, because a host without one still\n"
    "holds writes no snapshot has captured.\n\n"
    "- Do not call the channel-based `RotateWALFiles` here: its goroutines have exited.\n"
)
REASON = (
    "Rotate only the hosts that received a fresh snapshot, because a host without one still "
    "holds writes no snapshot has captured."
)
DIRECTIVE = "- Do not call the channel-based `RotateWALFiles` here: its goroutines have exited."
APPROVED = (
    "User has approved your plan. You can now start coding. Start with updating your todo list "
    "if applicable"
)
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\nKeep the WAL, just fix the comment."
)


def decisions_of(call: Use, result: ToolResultBlock) -> list[str]:
    messages = [
        Message.user("The WAL files grow forever. Plan a fix."),
        Message.assistant([call]),
        Message("user", (result,)),
    ]
    return [text for _, text in extract_facts(messages).decisions]


def test_an_approved_plans_reasons_and_directives_are_decisions_a_rejected_ones_not() -> None:
    call = Use("p1", "ExitPlanMode", {"plan": PLAN})
    found = decisions_of(call, ToolResultBlock("p1", APPROVED))
    assert REASON in found  # its wrapped lines read as the one line Markdown renders
    assert DIRECTIVE in found
    assert decisions_of(call, ToolResultBlock("p1", REJECTED, is_error=True)) == []


def test_a_plan_written_to_copilots_session_folder_carries_its_decisions() -> None:
    path = "/Users/dev/.copilot/session-state/378ab881/plan.md"
    body = "".join(f"+{line}\n" for line in PLAN.splitlines())
    patch = f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch"
    call = Use("c1", "apply_patch", {"input": patch})
    found = decisions_of(call, ToolResultBlock("c1", f"Added 1 file(s): {path}"))
    assert REASON in found
    assert DIRECTIVE in found
    # a Markdown file of the project says what the file says, not what the agent chose
    project = Use("w1", "Write", {"file_path": "/repo/docs/plan.md", "content": PLAN})
    assert REASON not in decisions_of(project, ToolResultBlock("w1", "File created successfully"))


ISSUE = (
    "## Problem\n\nRunning the launcher inside tmux nests a second session in the first.\n\n"
    "## Fix\n\nCheck `$TMUX` first: inside tmux, use `tmux switch-client` instead of\n"
    "`tmux attach-session`.\n"
)
SWITCH = (
    "Check `$TMUX` first: inside tmux, use `tmux switch-client` instead of `tmux attach-session`."
)


def test_an_issue_or_a_pull_request_the_agent_files_carries_its_decisions() -> None:
    # Linear's MCP server names the text ``description``, GitHub's ``body`` (Claude Code's
    # ``mcp__<server>__<tool>``, another harness's ``<server>-<tool>``).
    filed = "Created issue DUAL-12: Nested tmux sessions"
    for name, key in [
        ("mcp__linear__create_issue", "description"),
        ("github-create_pull_request", "body"),
        ("mcp__gitlab__update_merge_request", "description"),
    ]:
        call = Use("i1", name, {"title": "Nested tmux sessions", key: ISSUE})
        assert SWITCH in decisions_of(call, ToolResultBlock("i1", filed))
    # a tool that only reads an issue says what someone else wrote
    read = Use("i2", "mcp__linear__get_issue", {"id": "DUAL-12", "description": ISSUE})
    assert SWITCH not in decisions_of(read, ToolResultBlock("i2", ISSUE))


def test_an_issue_filed_through_a_trackers_command_line_carries_its_title_and_decisions() -> None:
    # GitHub's and GitLab's CLIs by their flags; beads' ``bd create [title]`` (alias ``bd new``)
    # by its first argument or ``--title``, its text ``--description``/``-d``, its ``-t`` the
    # issue's type
    title = "Nested tmux sessions when the launcher runs inside tmux"
    body = ISSUE.replace("`", "")
    for command in [
        f"gh issue create --title '{title}' --body '{body}' --label bug | Tee-Object url",
        f"$url = gh pr create -t '{title}' -b '{body}'",
        f"glab mr create --title='{title}' --description '{body}'",
        f"cd /repo && bd create '{title}' \\\n  --type bug -p 1 \\\n  --description '{body}'",
        f"bd new -t bug --title='{title}' -d '{body}' --json",
    ]:
        call = Use("g1", "Bash", {"command": command})
        found = decisions_of(call, ToolResultBlock("g1", "https://github.com/o/r/issues/7"))
        assert found[0] == title
        assert SWITCH.replace("`", "") in found
    # the words of another command, or a tracker's command that only reads, file nothing
    for command in [
        f"echo gh issue create --title '{title}'",
        f"gh issue list --search '{title}'",
        f"bd show av-raf --description '{body}'",
    ]:
        call = Use("g2", "Bash", {"command": command})
        assert decisions_of(call, ToolResultBlock("g2", "")) == []


def test_an_issue_a_trackers_tool_files_carries_its_title() -> None:
    call = Use("i1", "mcp__linear__create_issue", {"title": "Nested tmux", "description": ISSUE})
    assert decisions_of(call, ToolResultBlock("i1", "Created issue DUAL-12"))[0] == "Nested tmux"


def test_a_fact_the_agent_stores_for_later_sessions_is_a_decision() -> None:
    fact = "The staging cluster reads its secrets from Vault; local runs read them from `.env`."
    gemini = Use("m1", "save_memory", {"fact": fact})
    saved = f'Okay, I\'ve remembered that: "{fact}"'
    assert decisions_of(gemini, ToolResultBlock("m1", saved)) == [fact]
    copilot = Use(
        "m2",
        "store_memory",
        {"subject": "secrets", "fact": fact, "citations": "deploy/vault.tf:12", "reason": "x"},
    )
    assert decisions_of(copilot, ToolResultBlock("m2", "Memory stored.")) == [fact]
    # a memory the tool failed to store is not kept
    failed = ToolResultBlock("m1", "Error saving memory: disk full", is_error=True)
    assert decisions_of(gemini, failed) == []


def test_a_filed_issue_s_command_is_split_into_words_once(
    calls_to: Callable[[object, str], list[Any]],
) -> None:
    """Every compaction reads a session's calls again; what a command files is the same each
    time, and ``shlex`` (most of the cost) runs once per command."""
    split = calls_to(plans, "shell_words")
    title = f"Nested tmux sessions, seen {uuid.uuid4().hex}"
    call = Use("g3", "Bash", {"command": f"gh issue create --title '{title}' --body '{ISSUE}'"})
    first = plans.plan_decisions(call)
    again = plans.plan_decisions(Use("g4", "Bash", dict(call.input)))
    assert first == again
    assert first[0] == title
    assert len(split) == 1
