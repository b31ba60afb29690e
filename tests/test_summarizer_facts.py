"""The deterministic facts: which user text is typed, files, failures, commands, todos, concepts."""

from __future__ import annotations

from typing import Any

import pytest

from contextwarden.compaction import cuts
from contextwarden.compaction.summarize import CONTINUATION_NOTE
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock, ToolResultBlock
from contextwarden.model import ToolUseBlock as Use
from contextwarden.summarizers import typed
from contextwarden.summarizers.carry import carried_user_messages
from contextwarden.summarizers.commands import command_key
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.failures import (
    failure_excerpt,
    failure_lines,
    result_failure,
)
from contextwarden.summarizers.file_op import FileOp
from contextwarden.summarizers.outputs import exit_status
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.tools import file_ops
from contextwarden.summarizers.typed import user_messages


def user(*blocks: Any, **extra: Any) -> Message:
    content = tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks)
    return Message("user", content, MessageMeta(extra=FrozenDict(extra)))


def texts(messages: list[Message]) -> list[str]:
    return [m.text for m in user_messages(messages)]


# ----------------------------------------------------------------------------- typed text
def test_tool_results_are_not_typed_but_a_rejection_reason_is() -> None:
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected. "
        "To tell you how to proceed, the user said:\nno, I did not say commit anything"
    )
    messages = [
        user("start"),
        Message.assistant(
            [Use("a", "Bash", {"command": "git commit"}), Use("b", "Read", {"file_path": "x"})]
        ),
        user(ToolResultBlock("a", rejected, is_error=True), ToolResultBlock("b", "file text")),
    ]
    assert texts(messages) == ["start", "no, I did not say commit anything"]


# Cline's and Roo Code's own wording (src/core/prompts/responses.ts: formatToolDeniedFeedback,
# the attempt_completion feedback and ask_followup_question answers), and the
# <environment_details> they append to every user turn.
CLINE_DENIED = (
    "[read_file for 'src/app.ts'] Result:\nThe user denied this operation and provided the "
    "following feedback:\n<feedback>\nright now you're not following instructions well, "
    "read the spec first\n</feedback>\n<environment_details>\n# VSCode Visible Files\n"
    "src/app.ts\n</environment_details>"
)
CLINE_ANSWER = "[ask_followup_question for 'Which port?'] Result:\n<answer>\nuse 3001\n</answer>"


def test_what_a_cline_user_typed_inside_a_tool_answer_is_typed() -> None:
    answer = user(ToolResultBlock("t1", CLINE_DENIED), ToolResultBlock("t2", CLINE_ANSWER))
    calls = Message(
        "assistant",
        (Use("t1", "read_file", {"path": "src/app.ts"}), Use("t2", "ask_followup_question", {})),
    )
    task = user("<task>\nfix the login bug\n</task>\n<environment_details>\n# Time\n"
                "now\n</environment_details>")  # fmt: skip
    found = [m.text for m in user_messages([task, calls, answer])]
    assert found == [
        "<task>\nfix the login bug\n</task>",
        "right now you're not following instructions well, read the spec first",
        "use 3001",
    ]
    summary = StructuredSummarizer().summarize([task, calls, answer]).text
    assert "right now you're not following instructions well, read the spec first" in summary


def test_a_tool_answer_cline_writes_as_user_text_is_not_typed() -> None:
    """Older Cline and its forks call tools in XML in the assistant's text and answer in the
    user's; the answer, and the note on resuming a task, are the harness's words."""
    call = Message.assistant("<execute_command>\n<command>pytest -q</command>\n</execute_command>")
    ran = user("[execute_command for 'pytest -q'] Result:\nCommand executed.\nOutput:\n3 failed")
    denied = user(
        "[write_to_file for 'a.py'] Result:\nThe user denied this operation and provided the "
        "following feedback:\n<feedback>\nkeep the old name\n</feedback>"
    )
    not_run = user("Tool [read_file] was not executed because a tool has already been used")
    resumed = user(
        "[TASK RESUMPTION] This task was interrupted 2 minutes ago.\n\nNew instructions for "
        "task continuation:\n<user_message>\nalso update the docs\n</user_message>"
    )
    task = user("<task>\nfix the tests\n</task>")
    messages = [task, call, ran, call, denied, call, not_run, call, resumed]
    assert texts(messages) == ["<task>\nfix the tests\n</task>", "keep the old name",
                               "also update the docs"]  # fmt: skip


def test_loader_marks_decide_what_was_injected() -> None:
    listed = user(
        "typed text",
        "Base directory for this skill: …",
        injected_texts=("Base directory for this skill: …",),
    )
    assert texts([listed]) == ["typed text"]
    assert texts([user("all of it", injected=True)]) == []
    assert texts([user("meta record", isMeta=True)]) == []


def test_injected_elements_are_removed_and_typed_syntax_is_rewritten() -> None:
    orchestrator = (
        "<command-message>orchestrator is running…</command-message>\n"
        "<command-name>/orchestrator</command-name>\n"
        "<command-args>create TODO app by Next.js</command-args>"
    )
    exit_command = (
        "<command-name>/exit</command-name>\n            <command-message>exit</command-message>"
        "\n            <command-args></command-args>"
    )
    message = user(
        "fix it<system-reminder>The file changed.</system-reminder>",
        orchestrator,  # listed as injected by the loader, yet typed through the tool's syntax
        exit_command,
        "<bash-input>git pull --rebase</bash-input>",
        "<bash-stdout>Already up to date.</bash-stdout><bash-stderr></bash-stderr>",
        "<local-command-stdout>See ya!</local-command-stdout>",
        "[Request interrupted by user for tool use]",
        injected_texts=(orchestrator, exit_command),
    )
    assert texts([message]) == [
        "fix it",
        "/orchestrator create TODO app by Next.js",
        "/exit",
        "! git pull --rebase",
    ]


def test_a_background_agents_report_is_not_typed() -> None:
    """Claude Code delivers a background sub-agent's report in the user role, as a
    ``<task-notification>`` element; what the person typed around it stays."""
    report = (
        "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n"
        '<summary>Agent "Map the site" finished</summary>\n<result>Mapped the full IA: '
        "14 findings …</result>\n</task-notification>"
    )
    assert texts([user(report)]) == []
    assert texts([user(report + "\nnow fix the sidebar order")]) == ["now fix the sidebar order"]
    summary = StructuredSummarizer().summarize([user("map the site"), user(report)]).text
    assert "Mapped the full IA" not in summary and "map the site" in summary


def test_a_ci_monitor_event_is_not_typed() -> None:
    """Claude Code's CI monitor delivers a watched pull request's check runs and review comments
    in the user role as ``<ci-monitor-event>`` (anthropics/claude-code#55431), unmarked when a
    request comes through the proxy; what the person typed beside it stays."""
    event = (
        "<ci-monitor-event>acme/widgets PR #12 has 1 new review comment:\n"
        "- review-bot[bot]: <h3>Review</h3>\nConsider a guard here.</ci-monitor-event>"
    )
    assert texts([user(event)]) == []
    assert texts([user(event + "\nskip that one")]) == ["skip that one"]
    summary = StructuredSummarizer().summarize([user("open the PR"), user(event)]).text
    assert "Consider a guard here" not in summary and "open the PR" in summary


def test_agent_harness_observations_are_not_typed() -> None:
    task = "We're solving this issue.\n\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"
    observation = (
        "[File: /repo/a.py (3 lines total)]\n(Open file: /repo/a.py)\n"
        "(Current directory: /repo)\nbash-$"
    )
    messages = [
        user(task),
        Message.assistant("ls"),
        user(observation),
        Message.assistant("ok"),
        user("<returncode>0</returncode>\n<output>\na.py\n</output>"),
        Message.assistant("x"),
        user("Please always provide EXACTLY ONE action in triple backticks, found 2 actions."),
    ]
    assert texts(messages) == [task]  # the task ends with the prompt too, but answers nobody


def test_a_skill_claude_code_loads_is_not_typed_without_its_loader_mark() -> None:
    # Claude Code answers its Skill tool with the skill's SKILL.md in the user role, an isMeta
    # record whose text begins so (trimmed from a real session); a SpecStory export or a proxied
    # request carries it as plain user text, which would fill the summary's section 6.
    skill = (
        "Base directory for this skill: /home/me/.claude/skills/code-changes\n\n"
        "# Code Changes\n\nThe workflow for going from an issue to shipped code."
    )
    messages = [user("ship the fix"), Message.assistant("ok"), user(skill)]
    assert texts(messages) == ["ship the fix"]
    assert typed.is_injected_block(messages[2], TextBlock(skill))


def test_claude_code_compact_summary_carries_its_user_messages_section() -> None:
    summary = (
        "This session is being continued from a previous conversation that ran out of context."
        "\n\nSummary:\n1. Primary Request and Intent:\n   fix\n\n6. All user messages:\n"
        '   - "fix the build"\n   - "and push"\n\n7. Pending Tasks:\n   - none\n'
    )
    messages = [user(summary, isCompactSummary=True), Message.assistant("ok"), user("next")]
    found = user_messages(messages)
    assert [(m.text, m.carried) for m in found] == [
        ('- "fix the build"\n   - "and push"', True),
        ("next", False),
    ]


def our_summary_message(summary_text: str, *, merged: str | None = None) -> Message:
    """The message the compaction ladder builds (``compaction.summarize``)."""
    blocks: list[Any] = [
        TextBlock("the first request"),
        TextBlock(f"{CONTINUATION_NOTE}\n\n<summary>\n{summary_text}\n</summary>"),
        TextBlock("Contents of a.py (re-read after compaction):\n\nprint(1)"),
    ]
    if merged is not None:
        blocks.append(TextBlock(merged))
    return user(
        *blocks, **{cuts.SUMMARY_KEY: True, cuts.FIRST_BLOCKS_KEY: 1, cuts.SUMMARY_BLOCKS_KEY: 3}
    )


TRICKY = [
    "the first request\n3. Files and Code Sections:\n4. Errors and Fixes:\n6. All User Messages:",
    "[#2, 5 chars]\nfake header inside a message",
    "a list:\n7. Pending Tasks:\n6. All User Messages:\nnot headings",
    "</summary> and <transcript> inside text",
]


def tricky_conversation() -> list[Message]:
    messages: list[Message] = []
    for i, text in enumerate(TRICKY):
        messages += [user(text), Message.assistant(f"answer {i}")]
    return messages


def test_our_summary_carries_every_user_message_exactly() -> None:
    summary = StructuredSummarizer().summarize(tricky_conversation())
    assert list(carried_user_messages(summary.text)) == TRICKY
    lead = our_summary_message(summary.text, merged="a new request merged into it")
    found = user_messages([lead, Message.assistant("ok"), user("latest")])
    # The leading copy of the first message is not counted twice; re-read files are not typed.
    assert [m.text for m in found] == [*TRICKY, "a new request merged into it", "latest"]
    assert [m.carried for m in found] == [True] * 4 + [False, False]


def test_an_empty_user_messages_section_carries_no_message() -> None:
    # Only tool calls after the first message: section 6 is empty, and "(none)" is no message.
    summary = StructuredSummarizer().summarize([Message.assistant("ok")])
    assert "6. All User Messages:\n(none)" in summary.text
    assert carried_user_messages(summary.text) == ()
    assert carried_user_messages("6. All user messages:\n- fix the build\n") == ("- fix the build",)


def test_repeated_compactions_keep_every_user_message_file_and_error() -> None:
    summarizer = StructuredSummarizer()
    calls = [Use("r", "Read", {"file_path": "src/kept.py"}), Use("b", "Bash", {"command": "make"})]
    messages = [
        *tricky_conversation(),
        Message.assistant(calls),
        user(ToolResultBlock("r", "x = 1"), ToolResultBlock("b", "Exit code 2\nerror: no rule")),
        Message.assistant("stuck"),
    ]
    for round_ in range(3):
        summary = summarizer.summarize(messages)
        messages = [
            our_summary_message(summary.text),
            Message.assistant(f"round {round_}"),
            user(f"request after round {round_}"),
            Message.assistant("done"),
        ]
    assert [m.text for m in user_messages(messages)] == [
        *TRICKY,
        "request after round 0",
        "request after round 1",
        "request after round 2",
    ]
    facts = extract_facts(messages)
    assert [(f.path, f.operations, f.detail) for f in facts.files] == [
        ("src/kept.py", ("read",), "1 line")
    ]
    assert [(e.tool, e.target, e.excerpt, e.fixed) for e in facts.errors] == [
        ("Bash", "make", "error: no rule", False)
    ]


def test_mirrored_keys_match_the_compaction_ladder() -> None:
    assert (typed.SUMMARY_KEY, typed.FIRST_BLOCKS_KEY, typed.SUMMARY_BLOCKS_KEY) == (
        cuts.SUMMARY_KEY,
        cuts.FIRST_BLOCKS_KEY,
        cuts.SUMMARY_BLOCKS_KEY,
    )
    assert CONTINUATION_NOTE.startswith(typed.SUMMARY_PREFIX)


# ----------------------------------------------------------------------------- files
@pytest.mark.parametrize(
    ("name", "args", "result", "expected"),
    [
        (
            "Read",
            {"file_path": "/r/a.py"},
            "     1→a\n     2→b\n",
            [("/r/a.py", "read", "2 lines")],
        ),
        (
            "Read",
            {"file_path": "/r/a.py", "offset": 10, "limit": 5},
            "",
            [("/r/a.py", "read", "lines 10-14")],
        ),
        ("Write", {"file_path": "b.py", "content": "x\ny\n"}, "", [("b.py", "wrote", "2 lines")]),
        (
            "Edit",
            {"file_path": "c.py", "old_string": "a", "new_string": "b\nc"},
            "",
            [("c.py", "edited", "+2 -1 lines")],
        ),
        (
            "MultiEdit",
            {
                "file_path": "d.py",
                "edits": [
                    {"old_string": "a", "new_string": "b"},
                    {"old_string": "c\nd", "new_string": ""},
                ],
            },
            "",
            [("d.py", "edited", "+1 -3 lines")],
        ),
        (
            "NotebookEdit",
            {"notebook_path": "n.ipynb", "new_source": "x"},
            "",
            [("n.ipynb", "edited", "+1 -0 lines")],
        ),
        (
            "str_replace_editor",
            {"command": "view", "path": "/t/e.py"},
            "1\n2\n3",
            [("/t/e.py", "read", "3 lines")],
        ),
        (
            "str_replace_editor",
            {"command": "create", "path": "f.py", "file_text": "a"},
            "",
            [("f.py", "wrote", "1 line")],
        ),
        ("Grep", {"pattern": "x", "path": "src"}, "", [("src", "searched", "")]),
        ("mcp__linear-server__get_issue", {"id": "ENT-1"}, "", []),
    ],
)
def test_file_operations_from_tool_inputs(
    name: str, args: dict[str, Any], result: str, expected: list[tuple[str, str, str]]
) -> None:
    ops = file_ops(Use("id", name, args), result)
    assert [(op.path, op.operation, op.detail) for op in ops] == expected


def test_codex_patch_names_every_file() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: /r/a.ts\n@@\n-old\n+new\n+more\n"
        "*** Add File: docs/b.md\n+hello\n*** Delete File: c.json\n*** End Patch"
    )
    ops = file_ops(Use("id", "apply_patch", {"input": patch}))
    assert [(op.path, op.operation, op.detail) for op in ops] == [
        ("/r/a.ts", "edited", "+2 -1 lines"),
        ("docs/b.md", "wrote", "+1 -0 lines"),
        ("c.json", "deleted", ""),
    ]
    assert ops[0].code == "new\nmore"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat src/a.py", [("src/a.py", "read")]),
        ("cd /r && sed -n '10,20p' src/b.py | head", [("src/b.py", "read")]),
        ("sed -i 's/a/b/' src/c.py", [("src/c.py", "edited")]),
        ("cat > notes.md << 'EOF'\nhello\nEOF", [("notes.md", "wrote")]),
        ("head -n 5 a.txt b.txt", [("a.txt", "read"), ("b.txt", "read")]),
        ("cat src/*.py", []),  # a glob: the real paths are unknown
        ("grep -r foo src | cat", []),  # cat reads a pipe, not a file; a folder is searched
        # a search of named files lists them as a Grep call's path is (mini-swe-agent, Codex)
        ('grep -n "def add_new" pydicom/dataset.py -A 20', [("pydicom/dataset.py", "searched")]),
        ("rg -n -g '*.ts' needle src/app.ts | head", [("src/app.ts", "searched")]),
        ("grep -e foo -e bar a.py b.txt", [("a.py", "searched"), ("b.txt", "searched")]),
        ("grep -rn 'x' . --include=*.py", []),  # a folder, not a file touched
        ("grep foo.py", []),  # the pattern, not a path
        ("python cat.py", []),
        # a revision's file, read through git (``git show REV:PATH``)
        (
            "git --no-pager show HEAD:.claude/settings.json | jq .",
            [(".claude/settings.json", "read")],
        ),
        ("git show abc123:src/a.py", [("src/a.py", "read")]),
        ("git show HEAD --stat", []),
        ('git commit -m "show HEAD:b.py"', []),
        ("echo 'unterminated", []),
        # a here-document's lines are a program's input: a script's ``head = …`` is no command
        ("python - <<'PY'\nhead = s.index(x)\ncat = 1\nPY\ncat a.py", [("a.py", "read")]),
        (
            "cat > b.sh <<-END\n\ttail -3 c.log\n\tEND\nhead d.txt",
            [("b.sh", "wrote"), ("d.txt", "read")],
        ),
    ],
)
def test_obvious_shell_reads_and_writes_only(command: str, expected: list[tuple[str, str]]) -> None:
    ops = file_ops(Use("id", "Bash", {"command": command}))
    assert [(op.path, op.operation) for op in ops] == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # GNU sed: with -e/--expression the script is no operand, every operand is a file
        ("sed -i -e 's/a\\.db/b.db/g' -e 's/c/d/' x.go y.go", ["x.go", "y.go"]),
        ("sed -i --expression='s/x/y/' -- cmd/main.go", ["cmd/main.go"]),
        # BSD (macOS) sed: ``-i ''`` / ``-i .bak`` is the backup suffix, a word of its own
        ("sed -i '' -e 's/restore\\./sessionindex./g' pkg/cmd/reindex.go", ["pkg/cmd/reindex.go"]),
        ("sed -i '' 's/restore\\./sessionindex./g' pkg/cmd/reindex.go", ["pkg/cmd/reindex.go"]),
        ("sed -i .orig 's/v1/v2/' go.mod", ["go.mod"]),
        ("sed -i '' 's/a/b/' .env", [".env"]),  # a dotfile edited is no suffix
        ("sed -n -f fix.sed -e '1p' src/a.py", ["src/a.py"]),  # -f's script file is sed's
    ],
)
def test_a_sed_script_is_no_file(command: str, expected: list[str]) -> None:
    """GNU sed's synopsis, ``sed [OPTION]... {script-only-if-no-other-script}
    [input-file]...``: an ``-e``/``-f`` value is the script and every operand a file; BSD sed's
    ``-i`` takes the backup suffix as the next word."""
    ops = file_ops(Use("id", "Bash", {"command": command}))
    assert [op.path for op in ops] == expected


# ----------------------------------------------------------------------------- failures
@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("Exit code 2\nboom", 2),
        ("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n", 0),
        ("<returncode>1</returncode>\n<output>\n</output>", 1),
        ("ls\n[Command finished with exit code 127]", 127),
        ("plain output with no status", None),
    ],
)
def test_exit_status(text: str, status: int | None) -> None:
    assert exit_status(text) == status


def test_failures_need_a_flag_a_status_or_shell_error_output() -> None:
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad value\n'
    assert failure_excerpt(traceback, is_error=False, shell=True) == "ValueError: bad value"
    assert failure_excerpt("fatal: not a git repository", is_error=False, shell=True) == (
        "fatal: not a git repository"
    )
    # A file's content may say "error:"; only shell output is scanned.
    assert failure_excerpt("error: in the docs", is_error=False, shell=False) is None
    # A visible exit code 0 wins over error-looking text.
    assert failure_excerpt("Exit code: 0\nerror: handled", is_error=False, shell=True) is None
    assert (
        failure_excerpt(
            "<tool_use_error>File does not exist.</tool_use_error>", is_error=True, shell=False
        )
        == "File does not exist."
    )
    # grep found nothing: exit 1, not a failure.
    assert failure_excerpt("Exit code 1", is_error=True, shell=True, command="grep -r x .") is None
    # nothing else printed: the harness's own line, as it wrote it
    assert failure_excerpt("Exit code 1", is_error=True, shell=True, command="make") == (
        "Exit code 1"
    )


def test_a_failure_repeated_word_for_word_is_listed_once_where_it_was_last_seen() -> None:
    def run(n: int, output: str) -> list[Message]:
        call = Use(f"t{n}", "Bash", {"command": "pytest tests/test_a.py"})
        return [
            Message("assistant", (call,)),
            user(ToolResultBlock(f"t{n}", output, is_error="Exit code 1" in output)),
        ]

    failed = "E   KeyError: 'id'\nFAILED tests/test_a.py::test_id\nExit code 1"
    other = "E   KeyError: 'name'\nFAILED tests/test_a.py::test_name\nExit code 1"
    messages = [user("fix the tests"), *run(1, failed), *run(2, other), *run(3, failed)]
    errors = extract_facts(messages).errors
    assert [e.index for e in errors] == [4, 6]  # the first run's copy is left out
    assert ["name" in e.excerpt + "".join(e.more) for e in errors] == [True, False]
    assert not any(e.fixed for e in errors)
    # a rerun that passed in between fixes the earlier copy only: the one kept is the last
    passed = [*run(1, failed), *run(2, "1 passed\nExit code 0"), *run(3, failed)]
    assert [(e.index, e.fixed) for e in extract_facts([user("go"), *passed]).errors] == [(6, False)]


def test_the_same_failure_of_other_targets_is_listed_once_unless_its_status_differs() -> None:
    # An interpreter the shell cannot find fails every script run with it in the same words.
    def run(n: int, script: str, output: str) -> list[Message]:
        call = Use(f"t{n}", "Bash", {"command": f"python3.12 {script}"})
        return [
            Message("assistant", (call,)),
            user(ToolResultBlock(f"t{n}", output, is_error="Exit code 0" not in output)),
        ]

    missing = "(eval):1: command not found: python3.12\nExit code 127"
    messages = [
        user("check the keys"),
        *run(1, "keys.py a.jsonl", missing),
        *run(2, "keys.py b.jsonl", missing),
        *run(3, "branch.py a.jsonl", missing),
    ]
    errors = extract_facts(messages).errors
    assert [(e.index, e.target, e.fixed) for e in errors] == [
        (6, "python3.12 branch.py a.jsonl", False)
    ]
    # one of them fixed later (run again, it passed), the others not: two facts, both listed
    passed = run(4, "keys.py b.jsonl", "gitBranch\nExit code 0")
    errors = extract_facts([*messages, *passed]).errors
    assert [(e.index, e.fixed) for e in errors] == [(4, True), (6, False)]


def test_failure_lines_start_with_the_excerpt_and_stop_at_the_limit() -> None:
    make = Use("m", "Bash", {"command": "make"})
    output = "cc -c a.c\nerror: one\nwarning: w\nerror: two\nerror: one\nerror: three\nExit code 2"
    result = ToolResultBlock("m", output, is_error=True)
    assert result_failure(make, result) == "error: one"
    assert failure_lines(make, result, 3) == ("error: one", "error: two", "error: three")
    assert failure_lines(make, result, 1) == ("error: one",)
    assert failure_lines(make, result, 0) == ()
    assert failure_lines(make, ToolResultBlock("m", "all good\nExit code 0"), 3) == ()
    # Without its call a result is judged as a non-shell one: only the flag counts.
    assert failure_lines(None, ToolResultBlock("m", "error: x\nExit code 0"), 3) == ()
    grep = Use("g", "Bash", {"command": "grep -r needle ."})
    assert result_failure(grep, ToolResultBlock("g", "Exit code 1", is_error=True)) is None


def test_command_key_folds_reruns_of_the_same_command() -> None:
    assert command_key("cd /repo && pytest -x tests 2>&1 | tail -20") == "pytest -x tests"
    assert command_key("  pytest   -x tests ") == "pytest -x tests"
    assert command_key("pytest -x tests | grep FAIL") == "pytest -x tests | grep FAIL"


# ----------------------------------------------------------------------------- facts
def session() -> list[Message]:
    return [
        user("Fix the build and update the docs."),
        Message.assistant(
            [
                TextBlock("Running `make_build` via BuildRunner."),
                Use("1", "Bash", {"command": "make"}),
            ]
        ),
        user(ToolResultBlock("1", "Exit code 2\nerror: missing header", is_error=True)),
        Message.assistant(
            [
                Use("2", "Edit", {"file_path": "src/a.c", "old_string": "x", "new_string": "y"}),
                Use("3", "Bash", {"command": "cd /r && make 2>&1"}),
            ]
        ),
        user(ToolResultBlock("2", "updated"), ToolResultBlock("3", "ok")),
        Message.assistant(
            [
                Use(
                    "4",
                    "TodoWrite",
                    {
                        "todos": [
                            {"content": "fix build", "status": "completed"},
                            {"content": "update docs", "status": "in_progress"},
                        ]
                    },
                ),
                Use("5", "Read", {"file_path": "docs/README.md"}),
            ]
        ),
        user(
            ToolResultBlock(
                "5", "<tool_use_error>File does not exist.</tool_use_error>", is_error=True
            ),
            ToolResultBlock("4", "ok"),
        ),
        Message.assistant("The build passes now; BuildRunner and make_build are fine."),
        user("Now also bump the version."),
        Message.assistant(
            [TextBlock("Bumping."), Use("6", "Bash", {"command": "grep -n version x"})]
        ),
    ]


def test_facts_of_a_session() -> None:
    facts = extract_facts(session())
    assert [m.text for m in facts.user_messages] == [
        "Fix the build and update the docs.",
        "Now also bump the version.",
    ]
    assert [(e.tool, e.target, e.excerpt, e.fixed) for e in facts.errors] == [
        ("Bash", "make", "error: missing header", True),
        ("Read", "docs/README.md", "File does not exist.", False),
    ]
    assert [(c.command, c.status, c.failed) for c in facts.commands] == [
        ("make", 2, True),
        ("cd /r && make 2>&1", None, False),
    ]
    assert [(f.path, f.operations) for f in facts.files] == [
        ("src/a.c", ("edited",)),
        ("docs/README.md", ("read (failed)",)),
    ]  # grep: no file op
    assert [(t.text, t.status) for t in facts.todos] == [
        ("fix build", "completed"),
        ("update docs", "in_progress"),
    ]
    # The last request was not followed by a reply that ended the turn.
    assert [m.text for m in facts.pending_requests] == ["Now also bump the version."]
    assert facts.last_assistant_text == "Bumping."
    assert facts.last_tool_calls == ("Bash: grep -n version x",)
    assert facts.concepts == (("BuildRunner", 2), ("make_build", 2))
    assert facts.tool_counts[0] == ("Bash", 3)


def test_claude_code_task_board() -> None:
    messages = [
        user("plan it"),
        Message.assistant(
            [
                Use("1", "TaskCreate", {"subject": "Fix A", "description": "d"}),
                Use("2", "TaskCreate", {"subject": "Fix B", "description": "d"}),
            ]
        ),
        user(
            ToolResultBlock("1", "Task #1 created successfully: Fix A"),
            ToolResultBlock("2", "Task #2 created successfully: Fix B"),
        ),
        Message.assistant([Use("3", "TaskUpdate", {"taskId": "1", "status": "completed"})]),
        user(ToolResultBlock("3", "Updated task #1 status")),
    ]
    assert [(t.text, t.done) for t in extract_facts(messages).todos] == [
        ("Fix A", True),
        ("Fix B", False),
    ]


def test_file_op_is_a_value() -> None:
    assert FileOp("a", "read") == FileOp("a", "read")
