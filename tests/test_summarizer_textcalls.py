"""Tool calls made in XML in the assistant's text (older Cline, Roo Code, Kilo Code), and the
steps a SpecStory-resumed session holds as agent text, are read as the calls they are: their
files, commands and failures reach the summary."""

from __future__ import annotations

from pathlib import Path

from contextwarden.formats import load
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.textcalls import as_native_calls

TASK = Message.user("<task>\nMake the tests pass.\n</task>")
RUN = Message.assistant(
    "The suite is the quickest check.\n\n<execute_command>\n<command>npm test</command>\n"
    "<requires_approval>false</requires_approval>\n</execute_command>"
)
FAILED = Message.user(
    "[execute_command for 'npm test'] Result:\nCommand executed.\nOutput:\n"
    "FAIL src/parse.test.ts\n  ● parses dates\n    TypeError: Cannot read properties of "
    "undefined (reading 'getTime')\n\nTests: 1 failed, 12 passed"
)
WRITE = Message.assistant(
    "<write_to_file>\n<path>src/parse.ts</path>\n<content>\nexport const parse = "
    "(s: string) => new Date(s);\n</content>\n</write_to_file>"
)
WROTE = Message.user(
    "[write_to_file for 'src/parse.ts'] Result:\nThe content was successfully saved to "
    "src/parse.ts."
)


def test_an_xml_call_and_its_text_answer_become_a_call_and_its_result() -> None:
    messages = [TASK, RUN, FAILED, WRITE, WROTE]
    native = as_native_calls(messages)
    assert [len(m.tool_uses) for m in native] == [0, 1, 0, 1, 0]
    call = native[1].tool_uses[0]
    assert call == ToolUseBlock("text-call-1", "execute_command", call.input)
    assert dict(call.input) == {"command": "npm test", "requires_approval": "false"}
    assert native[1].text == "The suite is the quickest check."  # the prose stays, the XML not
    result = native[2].tool_results[0]
    assert isinstance(result, ToolResultBlock) and result.text.startswith("Command executed.")
    assert list(messages) == [TASK, RUN, FAILED, WRITE, WROTE]  # the input is not changed


def test_the_summary_lists_the_files_commands_and_failures_of_xml_calls() -> None:
    facts = extract_facts([TASK, RUN, FAILED, WRITE, WROTE])
    assert [f.path for f in facts.files] == ["src/parse.ts"]
    summary = StructuredSummarizer().summarize([TASK, RUN, FAILED, WRITE, WROTE]).text
    assert "`npm test`" in summary
    assert "TypeError: Cannot read properties of undefined (reading 'getTime')" in summary
    assert "[execute_command for" not in summary.split("6. All User Messages")[1]


def test_a_failed_call_is_an_error_and_prose_with_tags_is_left_alone() -> None:
    failed = Message.user(
        "[read_file for 'a.ts'] Result:\nThe tool execution failed with the following error:\n"
        "<error>\nError reading file: ENOENT: no such file or directory\n</error>"
    )
    read = Message.assistant("<read_file>\n<path>a.ts</path>\n</read_file>")
    native = as_native_calls([TASK, read, failed])
    assert native[2].tool_results[0].is_error
    prose = Message.assistant("Wrap it in <section>\nlike this\n</section> and go on.")
    reply = Message.user("looks good")
    assert as_native_calls([TASK, prose, reply]) == [TASK, prose, reply]
    unanswered = [TASK, read, Message.user("stop, read b.ts instead")]
    assert as_native_calls(unanswered) == unanswered


RESUMED = (
    Path(__file__).parent
    / "data"
    / "specstory"
    / "specstoryai__getspecstory__2026-06-23_14-17-56Z-resumed-session.md"
)


def test_a_resumed_sessions_steps_are_read_as_the_calls_they_record() -> None:
    messages = list(load(RESUMED).messages)
    native = as_native_calls(messages)
    assert len(native) == len(messages)
    uses = [u for m in native for u in m.tool_uses]
    names = ["unknown", "Read", "Edit", "Edit", "Bash", "Bash", "apply_patch"]
    assert [u.name for u in uses] == names
    assert dict(uses[1].input) == {"file_path": "./docs/RESTORE-DB.md"}
    assert uses[4].input["description"] == "Inspect Claude JSONL record keys for gitBranch"
    assert uses[5].input["command"].startswith("f=$(ls -t ~/.claude/projects/*/*.jsonl")
    results = [r for m in native for r in m.tool_results]
    assert [r.is_error for r in results] == [True, False, False, False, True, False, False]
    assert results[4].text.startswith("Exit code 127\n")
    prose = native[3].content[0]
    assert isinstance(prose, TextBlock) and prose.text.startswith("Agreed — that header")
    assert list(messages) == list(load(RESUMED).messages)  # the input is not changed


def test_the_summary_of_a_resumed_session_has_its_files_failures_and_answers() -> None:
    messages = list(load(RESUMED).messages)
    facts = extract_facts(messages)
    assert [f.path for f in facts.files] == [
        "./docs/RESTORE-DB.md",
        "/Users/sean/Source/SpecStory/getspecstory/specstory-cli/docs/RESTORE-DB.md",
        "pkg/sessionindex/store.go",
    ]
    assert [e.excerpt for e in facts.errors] == [
        "String to replace not found in file.",
        "(eval):1: command not found: python3.12",
    ]
    # the prose after its steps answered the user: their request is not left pending
    assert facts.pending_requests == () and len(facts.answers) == 3
    assert facts.message_count == len(messages)


def test_prose_ending_in_a_text_fence_is_not_a_step() -> None:
    prose = Message.assistant("The log says:\n\n```text\nok\n```")
    reply = Message.user("good")
    assert as_native_calls([TASK, prose, reply]) == [TASK, prose, reply]
    answer_only = Message.assistant("```text\nAll 12 tests passed.\n```")
    assert as_native_calls([TASK, answer_only, reply]) == [TASK, answer_only, reply]


def test_a_reply_ending_on_steps_has_their_answers_after_it() -> None:
    step = "List the apps\n\n`ls apps`\n\n```text\napi\nweb\n```"
    last = Message("assistant", (TextBlock("Let me look."), TextBlock(step)))
    native = as_native_calls([TASK, last])
    assert [m.role for m in native] == ["user", "assistant", "user"]
    [use] = native[1].tool_uses
    assert dict(use.input) == {"command": "ls apps", "description": "List the apps"}
    assert native[2].tool_results[0].text == "api\nweb"
    assert extract_facts([TASK, last]).message_count == 2
