"""The person's answers to an agent's question tool are typed words, kept and never cleared.

The results below are written in each tool's real wording (sources in ``summarizers.answers``):
Claude Code's ``AskUserQuestion`` result text as its session JSONL records it (in both
wordings), SpecStory v2.1.0's markdown export of it, Codex's ``request_user_input`` output as its
rollout files record it, and Gemini CLI's ``ask_user`` output as ``docs/tools/ask-user.md``
documents it, qwen-code 0.24's ``ask_user_question`` answer as its tool writes it, and Copilot
CLI's ``ask_user`` result as its session files record it. The questions and answers are ours.
"""

from __future__ import annotations

from typing import Any

from contextwarden.compaction.microcompact import MicroCompact
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.answers import question_answers
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.typed import user_messages

CLAUDE_CODE = (
    'User has answered your questions: "Which database should the service use?"="SQLite", '
    '"How should failures be reported?"="Exit code and a one-line message" user notes: no '
    "stack traces. You can now continue with the user's answers in mind."
)
CLAUDE_CODE_CALL = {
    "questions": [
        {"question": "Which database should the service use?", "header": "Database"},
        {"question": "How should failures be reported?", "header": "Errors"},
    ]
}
CLAUDE_CODE_2026 = (
    'Your questions have been answered: "Which release should be tagged?"="v1.4.0 (Recommended)", '
    '"Update the changelog first?"="Yes". You can now continue with these answers in mind.'
)
CLAUDE_CODE_OTHER = (
    'User has answered your questions: "Which license?"="MIT, and add a NOTICE file" user notes: '
    "MIT, and add a NOTICE file. You can now continue with the user's answers in mind."
)
CLAUDE_CODE_PREVIEW = (
    'User has answered your questions: "Which endpoint should fetch versions?"="/{pkg}/latest" '
    "selected markdown:\n## /{pkg}/latest\n\nGET https://registry.npmjs.org/{pkg}/latest\n"
    '- version, license, dependencies, "Run requests in parallel?"="Yes (Recommended)". '
    "You can now continue with the user's answers in mind."
)
SPECSTORY = (
    "**How far should the first-run wizard go?**\n\nOptions:\n"
    "- **Full 3-step (Recommended)** - locate the CLI, create an agent, try it.\n"
    "- **1-step welcome** - a single page with a dismiss button.\n\n\n"
    "**Answer:** Full 3-step (Recommended)"
)
CODEX = (
    '{"answers":{"audience":{"answers":["Custom audience (Recommended)"]},'
    '"callers":{"answers":["Only callers in the same project, explain the trade-off"]}}}'
)
CODEX_CALL = {
    "questions": [
        {"id": "callers", "header": "Callers", "question": "Where do the callers live?"},
        {"id": "audience", "header": "Audience", "question": "Which OIDC audience?"},
    ]
}
GEMINI_CLI = '{"answers":{"0":"Option A","1":"Keep the old flag for one release"}}'
GEMINI_CALL = {
    "questions": [
        {"question": "Which layout?", "header": "Layout", "type": "choice"},
        {"question": "Anything about the CLI flags?", "header": "Flags", "type": "text"},
    ]
}
QWEN_CODE = (
    "User has provided the following answers:\n\n**Layout**: Option A\n"
    "**Question 2**: Keep the old flag\nfor one release"
)
QWEN_CALL = {
    "questions": [
        {"question": "Which layout?", "header": "Layout", "options": []},
        {"question": "Anything about the CLI flags?", "options": []},
    ]
}

COPILOT_CALL = {
    "question": "Which part should the plan cover?",
    "choices": ["Large files (Recommended)", "Boundaries", "Both, by impact"],
    "allow_freeform": True,
}


def asked(tool: str, result: str, call_input: dict[str, Any] | None = None) -> list[Message]:
    call = ToolUseBlock("toolu_q", tool, call_input or {})
    return [
        Message.user("Plan the service"),
        Message("assistant", (call,)),
        Message("user", (ToolResultBlock(call.id, result),)),
    ]


def typed(messages: list[Message]) -> list[str]:
    return [m.text for m in user_messages(messages)]


def test_claude_code_answers_are_kept_verbatim_with_their_questions() -> None:
    assert typed(asked("AskUserQuestion", CLAUDE_CODE)) == [
        "Plan the service",
        '"Which database should the service use?"="SQLite", "How should failures be reported?"='
        '"Exit code and a one-line message" user notes: no stack traces',
    ]


def test_claude_code_2026_wording_is_read_as_the_earlier_one() -> None:
    assert typed(asked("AskUserQuestion", CLAUDE_CODE_2026))[1:] == [
        '"Which release should be tagged?"="v1.4.0 (Recommended)", '
        '"Update the changelog first?"="Yes"'
    ]


def test_with_the_call_each_question_is_named_by_its_header() -> None:
    assert typed(asked("AskUserQuestion", CLAUDE_CODE, CLAUDE_CODE_CALL))[1:] == [
        '"Database"="SQLite", "Errors"="Exit code and a one-line message" user notes: no '
        "stack traces"
    ]


def test_a_typed_other_answer_is_not_repeated_by_its_note() -> None:
    assert typed(asked("AskUserQuestion", CLAUDE_CODE_OTHER))[1:] == [
        '"Which license?"="MIT, and add a NOTICE file"'
    ]


def test_the_preview_of_a_chosen_option_is_the_agents_not_the_persons() -> None:
    assert typed(asked("AskUserQuestion", CLAUDE_CODE_PREVIEW))[1:] == [
        '"Which endpoint should fetch versions?"="/{pkg}/latest", '
        '"Run requests in parallel?"="Yes (Recommended)"'
    ]


def test_specstorys_export_keeps_the_question_and_answer_not_the_options() -> None:
    assert typed(asked("AskUserQuestion", SPECSTORY))[1:] == [
        '"How far should the first-run wizard go?"="Full 3-step (Recommended)"'
    ]


def test_codex_answers_are_named_by_the_calls_question_headers() -> None:
    assert typed(asked("request_user_input", CODEX, CODEX_CALL))[1:] == [
        '"Audience"="Custom audience (Recommended)"',
        '"Callers"="Only callers in the same project, explain the trade-off"',
    ]
    # Without the call (a cut history), the question's id stands in for it.
    alone = question_answers(ToolResultBlock("toolu_q", CODEX))
    assert alone[0] == '"audience"="Custom audience (Recommended)"'


def test_gemini_cli_answers_are_named_by_position() -> None:
    assert typed(asked("ask_user", GEMINI_CLI, GEMINI_CALL))[1:] == [
        '"Layout"="Option A"',
        '"Flags"="Keep the old flag for one release"',
    ]


def test_qwen_code_answers_are_named_by_header_or_by_the_calls_question() -> None:
    assert typed(asked("ask_user_question", QWEN_CODE, QWEN_CALL))[1:] == [
        '"Layout"="Option A"',
        '"Anything about the CLI flags?"="Keep the old flag\nfor one release"',
    ]
    declined = ToolResultBlock("toolu_q", "User declined to answer the questions.")
    assert question_answers(declined) == ()


def test_copilot_cli_choice_answers_its_calls_question() -> None:
    result = "User selected: Both, by impact"
    assert typed(asked("ask_user", result, COPILOT_CALL))[1:] == [
        '"Which part should the plan cover?"="Both, by impact"'
    ]
    # Without the call that asked, the same words are a program's output, not an answer.
    assert question_answers(ToolResultBlock("toolu_q", result)) == ()
    assert typed(asked("bash", result, {"command": "./menu.sh"})) == ["Plan the service"]


def test_copilot_cli_reply_typed_in_place_of_a_choice_is_the_answer() -> None:
    result = "User responded: av-xwm would require us building a merge UI right which is heavy."
    assert typed(asked("ask_user", result, COPILOT_CALL))[1:] == [
        '"Which part should the plan cover?"="av-xwm would require us building a merge UI'
        ' right which is heavy."'
    ]
    assert typed(asked("bash", result, {"command": "./menu.sh"})) == ["Plan the service"]


def test_results_that_only_look_like_answers_are_not_typed() -> None:
    faq = "# FAQ\n\n**Is it free?**\n\n**Answer:** yes, MIT licensed\n"
    config = '{"answers": {"0": "cached"}, "version": 2}'
    failed = ToolResultBlock("toolu_q", CLAUDE_CODE, is_error=True)
    for result in (faq, config, '{"answers": ["a"]}', "not json {"):
        assert question_answers(ToolResultBlock("toolu_r", result)) == ()
    assert question_answers(failed) == ()
    assert typed(asked("Read", faq)) == ["Plan the service"]


def test_the_summary_quotes_the_answer_as_the_persons_words() -> None:
    summary = StructuredSummarizer().summarize(asked("AskUserQuestion", SPECSTORY)).text
    assert '"How far should the first-run wizard go?"="Full 3-step (Recommended)"' in summary
    assert "1-step welcome" not in summary


def test_microcompact_never_clears_an_answer() -> None:
    messages = asked("AskUserQuestion", SPECSTORY)
    for n in range(4):
        read = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": f"f{n}.py"})
        messages += [
            Message("assistant", (read,)),
            Message("user", (ToolResultBlock(read.id, "x = 1\n" * 400),)),
        ]
    result = MicroCompact(1, tools=("AskUserQuestion", "Read"), min_saving=0)(messages)
    assert result.applied
    assert result.messages[2] is messages[2]  # the answer stays whole
    assert result.messages[4] is not messages[4]  # an old read is cleared
