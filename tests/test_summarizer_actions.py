"""Text actions (a command in the reply's text, its output in the next user message) are read as
the shell calls they are: the files, commands and failures of a SWE-agent or mini-swe-agent v1
session reach the summary, and microcompact keeps a failed observation's error lines, as it
does a failed tool result's.

The steps below are trimmed from the mini-swe-agent v1.15.0 trajectory of SWE-bench Verified's
``pytest-dev__pytest-6197`` with Gemini 3 Pro (``gruckion/mini-swe-agent``, MIT,
``swebench_results/20251118_gemini-3-pro-74pct/trajs/pytest-dev__pytest-6197/…traj.json`` at
``d12a71affd95403b036b2bdbd827349b77bfffb9``): messages 3-4, 70-71 and 126-127, the replies'
thoughts and the script shortened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextwarden.compaction import CompactionContext, MicroCompact
from contextwarden.compaction.microcompact import FAILED_LINES_NOTE, is_cleared
from contextwarden.compaction.observations import named_id
from contextwarden.content_ids import content_id
from contextwarden.formats import load
from contextwarden.formats.swe_agent import from_document
from contextwarden.loadreport import LoadReport
from contextwarden.model import Message, TextBlock, ToolUseBlock
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.actions import (
    ACTION_TOOL,
    action_call,
    as_action_calls,
    is_observation,
)
from contextwarden.summarizers.facts import extract_facts

DATA = Path(__file__).parent / "data" / "transcripts" / "swe-agent"
ED = (
    "ed src/_pytest/main.py <<EOF\n516a\n"
    '                                    print(f"DEBUG: pkginit={pkginit}, new_col={new_col}")\n'
    ".\nw\nq\nEOF"
)
WRITE = (
    "cat <<'EOF' > reproduce_issue.sh\n#!/bin/bash\nmkdir -p foobar\n"
    "echo 'assert False' > foobar/__init__.py\npytest\nEOF\nchmod +x reproduce_issue.sh"
)
STEPS = [
    (
        "THOUGHT: I'll create a reproduction script `reproduce_issue.sh`.\n\n"
        f"```bash\n{WRITE}\n```",
        "<returncode>0</returncode>\n<output>\n</output>",
    ),
    (
        "THOUGHT: Let's debug by adding print statements in `src/_pytest/main.py`.\n\n"
        f"```bash\n{ED}\n```",
        "<returncode>127</returncode>\n<output>\nbash: line 1: ed: command not found\n</output>",
    ),
    (
        "THOUGHT: Run test again.\n\n"
        "```bash\npytest testing/test_collection.py::test_collect_init_tests\n```",
        "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
        '  File "/opt/miniconda3/envs/testbed/bin/pytest", line 5, in <module>\n'
        "    from pytest import main\n"
        '  File "/testbed/src/_pytest/main.py", line 588\n'
        '    print(f"DEBUG: _collectfile {path} handle_dupes={handle_dupes}")\n'
        "IndentationError: expected an indented block\n</output>",
    ),
]


def trajectory(steps: list[tuple[str, str]], extra_steps: int = 0) -> list[Message]:
    """The messages the loader makes of a mini-swe-agent v1 trajectory holding ``steps`` (and
    ``extra_steps`` passing runs after them, so the failures are old enough to clear)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant that can interact …"},
        {"role": "user", "content": "<pr_description>\nRegression in 5.2.3 …\n</pr_description>"},
    ]
    passing = ("THOUGHT: Check.\n\n```bash\nls src/_pytest\n```", "<returncode>0</returncode>")
    for reply, output in [*steps, *[passing] * extra_steps]:
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": output}]
    document = {"trajectory_format": "mini-swe-agent-1", "messages": messages}
    return list(from_document(document, LoadReport("t.traj.json", "swe-agent")).messages)


def test_the_loader_keeps_the_one_fenced_command_as_the_action() -> None:
    messages = trajectory(STEPS)
    assert messages[3].meta.extra["action"] == ED
    assert is_observation(messages[4]) and "action" not in messages[4].meta.extra
    # mini-swe-agent runs no command from a reply with two blocks (a format error): no action
    two = "```bash\nls\n```\nthen\n```bash\npwd\n```"
    (reply,) = [m for m in trajectory([(two, "Please always provide EXACTLY ONE action")])[1:2]]
    assert "action" not in reply.meta.extra


def test_a_text_action_is_read_as_the_shell_call_it_runs() -> None:
    (call,) = [action_call(m, "c") for m in trajectory(STEPS)[3:4]]
    assert call == ToolUseBlock("c", ACTION_TOOL, {"command": ED})
    # classic SWE-agent records the action; its own commands run in its bash session
    classic = load(DATA / "SWE-agent__SWE-agent__gpt4-pydicom-1458.traj").messages
    assert [action_call(m, "c") for m in classic[1:3]] == [
        ToolUseBlock("c", ACTION_TOOL, {"command": "create reproduce_bug.py"}),
        None,  # the observation
    ]


def test_a_text_action_and_its_observation_become_a_shell_call_and_its_result() -> None:
    messages = trajectory(STEPS)
    native = as_action_calls(messages)
    (call,) = native[3].tool_uses
    assert call.name == ACTION_TOOL and call.input["command"] == ED
    # the reply's text stays as the model wrote it (a script's comments say why), the call after
    assert native[3].content[:-1] == messages[3].content and native[3].content[-1] == call
    (result,) = native[4].tool_results
    assert result.tool_use_id == call.id and result.text == STEPS[1][1]
    assert as_action_calls(messages[:2]) == messages[:2]  # a reply with no answer yet


def test_the_summary_finds_the_commands_files_and_failures_of_text_actions() -> None:
    facts = extract_facts(trajectory(STEPS))
    assert [c.command for c in facts.commands] == [
        WRITE,
        ED,
        "pytest testing/test_collection.py::test_collect_init_tests",
    ]
    assert [c.status for c in facts.commands] == [0, 127, 1]
    excerpts = [e.excerpt for e in facts.errors]
    assert excerpts == [
        "bash: line 1: ed: command not found",
        "IndentationError: expected an indented block",
    ]
    assert [f.path for f in facts.files] == ["reproduce_issue.sh"]


def test_a_classic_swe_agent_action_is_read_as_the_shell_command_it_runs() -> None:
    # SWE-agent's own commands (create, edit, python …) run in its bash session
    facts = extract_facts(load(DATA / "SWE-agent__SWE-agent__gpt4-pydicom-1458.traj").messages)
    commands = [c.command for c in facts.commands]
    assert commands[:3] == ["create reproduce_bug.py", commands[1], "python reproduce_bug.py"]
    assert commands[1].startswith("edit 1:1\nimport numpy as np")
    assert any(e.excerpt.startswith("AttributeError") for e in facts.errors)


PKGFILE = (
    "<returncode>1</returncode>\n<output>\n"
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.9.20, pytest-5.2.4.dev6+ge856638ba, py-1.11.0, pluggy-0.13.1\n"
    "rootdir: /testbed, inifile: tox.ini\ncollected 72 items\n\n"
    "testing/test_collection.py .............................x............... [ 62%]\n"
    ".F.........................                                              [100%]\n\n"
    "=================================== FAILURES ===================================\n"
    "______________________ Test_getinitialnodes.test_pkgfile _______________________\n\n"
    "        col = testdir.getnode(config, x)\n"
    '        assert col.name == "x.py"\n'
    "        assert isinstance(col, pytest.Module)\n"
    ">       assert isinstance(col.parent, pytest.Package)\n"
    "E       AssertionError: assert False\n\n"
    "/testbed/testing/test_collection.py:657: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED testing/test_collection.py::Test_getinitialnodes::test_pkgfile - Asser...\n"
    "=================== 1 failed, 70 passed, 1 xfailed in 5.12s ====================\n"
    "</output>"
)
"""Message 41 of the same trajectory (the run of ``pytest testing/test_collection.py``), the
captured output and most of the test's source cut."""
LISTING = (
    "<returncode>0</returncode>\n<output>\n"
    + "".join(
        f"src/_pytest/{name}.py\n"
        for name in ("main", "python", "nodes", "hookspec", "pathlib") * 9
    )
    + "</output>"
)


def test_microcompact_keeps_a_cleared_failed_observations_error_lines() -> None:
    run = "THOUGHT: I'll run the existing tests.\n\n```bash\npytest testing/test_collection.py\n```"
    listing = "THOUGHT: Check.\n\n```bash\nls src/_pytest\n```"
    messages = trajectory([(run, PKGFILE), (listing, LISTING)], extra_steps=2)
    policy = ContextPolicy(keep_recent_tool_results=2, microcompact_min_saving=0)
    result = MicroCompact()(messages, CompactionContext(policy=policy))
    failed, listed = result.messages[2].text, result.messages[4].text
    marker = policy.cleared_marker
    for cleared, original in ((failed, PKGFILE), (listed, LISTING)):
        assert is_cleared(TextBlock(cleared), marker)  # never cleared again
        assert named_id(cleared) == content_id(original)  # rehydrate still finds the original
        assert len(cleared) < len(original)
    # the lines the summary quotes for this failure, as a cleared tool result keeps them
    kept = failed.splitlines()[1:]
    assert kept[0] == FAILED_LINES_NOTE
    assert (
        "FAILED testing/test_collection.py::Test_getinitialnodes::test_pkgfile - Asser..." in kept
    )
    assert len(kept) <= 1 + policy.cleared_error_lines
    assert listed.count("\n") == 0  # a passing one keeps the marker and its id only
