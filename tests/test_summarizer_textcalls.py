"""Tool calls made in XML in the assistant's text (older Cline, Roo Code, Kilo Code) are read as
the calls they are: their files, commands and failures reach the summary."""

from __future__ import annotations

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
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
