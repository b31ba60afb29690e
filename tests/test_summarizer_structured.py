"""StructuredSummarizer: the nine sections, the budget, shortening, determinism."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import SECTION_TITLES, StructuredPolicy, StructuredSummarizer
from contextwarden.summarizers.base import AsyncSummarizer, Summarizer
from contextwarden.summarizers.failure_marks import says_what_failed
from contextwarden.summarizers.sections import head_lines_tail, head_tail
from contextwarden.summarizers.structured import _fair_cap
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()


def small_session() -> list[Message]:
    return [
        Message.user("Add a --json flag to the inspect command."),
        Message.assistant(
            [
                TextBlock("Reading cli/inspect.py."),
                ToolUseBlock("1", "Read", {"file_path": "cli/inspect.py"}),
            ]
        ),
        Message.user([ToolResultBlock("1", "def inspect():\n    pass\n")]),
        Message.assistant(
            [
                ToolUseBlock(
                    "2",
                    "Edit",
                    {
                        "file_path": "cli/inspect.py",
                        "old_string": "pass",
                        "new_string": "if args.json:\n    print(json.dumps(report))",
                    },
                )
            ]
        ),
        Message.user([ToolResultBlock("2", "updated")]),
        Message.assistant([ToolUseBlock("3", "Bash", {"command": "pytest tests/test_cli.py"})]),
        Message.user(
            [
                ToolResultBlock(
                    "3", "Exit code 1\nFAILED test_json - KeyError: 'tokens'", is_error=True
                )
            ]
        ),
        Message.assistant("The report lacks a tokens key; adding it next."),
        Message.user("Also keep the table output unchanged."),
    ]


def test_nine_sections_in_order_with_their_headings() -> None:
    summary = StructuredSummarizer().summarize(small_session(), instructions="the CLI flags")
    headings = re.findall(r"^(\d)\. ([^\n]+):$", summary.text, re.M)
    assert headings == [(str(n), t) for n, t in enumerate(SECTION_TITLES, start=1)]
    assert list(summary.sections) == list(range(1, 10))
    assert "Focus requested for this summary: the CLI flags" in summary.section(1)
    assert "Add a --json flag to the inspect command." in summary.section(
        "primary request and intent"
    )
    assert "- `cli/inspect.py` — read, edited; last: edited (+2 -1 lines)" in summary.sections[3]
    assert "print(json.dumps(report))" in summary.sections[3]
    assert "FAILED test_json - KeyError: 'tokens'" in summary.sections[4]
    assert "unresolved" in summary.sections[4]
    assert "[#2, 37 chars]\nAlso keep the table output unchanged." in summary.sections[6]
    answer = "The report lacks a tokens key; adding it next."
    assert answer in summary.sections[8] and answer not in summary.sections[5]  # quoted once
    assert "Open user request (#2" in summary.sections[7]
    assert "Answer the open user request" in summary.sections[9]
    assert summary.requests == 0 and summary.added_facts == ()


def test_protocols_and_async_give_the_same_summary() -> None:
    summarizer = StructuredSummarizer()
    assert isinstance(summarizer, Summarizer) and isinstance(summarizer, AsyncSummarizer)
    sync = summarizer.summarize(small_session())
    assert asyncio.run(summarizer.asummarize(small_session())) == sync


def test_default_budget_is_ten_percent_of_200k() -> None:
    assert StructuredSummarizer().budget == 20_000
    assert StructuredSummarizer(policy=StructuredPolicy(context_window=100_000)).budget == 10_000
    assert StructuredSummarizer(budget_tokens=5_000).budget == 5_000


def test_small_windows_get_a_floor_under_the_budget() -> None:
    assert StructuredPolicy(context_window=80_000).budget == 8_000  # 10 % is the floor here
    assert StructuredPolicy(context_window=40_000).budget == 8_000  # 10 % would be 4,000
    assert StructuredPolicy(context_window=30_000).budget == 7_500  # the floor's cap: 25 %
    assert StructuredPolicy(context_window=12_000).budget == 3_000
    assert StructuredPolicy(context_window=30_000, min_budget_tokens=0).budget == 3_000
    assert StructuredPolicy(context_window=30_000, budget_tokens=1_000).budget == 1_000


def test_a_derived_budget_grows_until_the_user_messages_fit_their_share() -> None:
    policy = StructuredPolicy(context_window=40_000)  # 8,000; user share 0.5
    assert policy.budget_for(4_000) == 8_000  # they fit: the budget is the floor
    assert policy.budget_for(4_500) == 9_000  # 4,500 is 50 % of 9,000
    assert policy.budget_for(4_501) == 9_002  # rounded up, never short
    assert policy.budget_for(1_000_000) == 10_000  # never past max_floor_ratio of the window
    assert StructuredPolicy(budget_tokens=4_000).budget_for(8_000) == 4_000  # the caller's limit
    assert StructuredSummarizer(budget_tokens=3_000).budget_for(8_000) == 3_000
    assert StructuredPolicy().budget_for(15_000) == 30_000  # 200,000: 20,000 grows too
    assert StructuredPolicy(context_window=40_000, user_share=0.7).budget_for(6_300) == 9_000


def pasted_logs_session() -> list[Message]:
    """Two pasted logs of ~1,600 tokens among short requests, and files touched."""
    log = "\n".join(
        f"Feb  8 21:52:{i:02d}.7{i:02d} |INFO| phase transition from=idle to=active "
        f"session_id={i:08x}-3c5f-4539-af1d-07ae450e639d component=session"
        for i in range(45)
    )
    messages: list[Message] = []
    for n in range(30):
        text = f"request {n}: please look at item {n} next"
        if n in (10, 20):
            text = f"so, testing build {n}:\n```\n{log}\n```\nwhat happened here? debug"
        use = ToolUseBlock(f"r{n}", "Read", {"file_path": f"src/pkg/area_{n}/module_{n}.py"})
        messages += [
            Message.user(text),
            Message.assistant([use]),
            Message.user([ToolResultBlock(use.id, "code " * 50)]),
            Message.assistant(f"done with item {n}"),
        ]
    return messages


def test_pasted_logs_stay_verbatim_while_the_window_allows_it() -> None:
    messages = pasted_logs_session()
    typed = [m.text for m in messages if m.role == "user" and m.text]
    users = sum(COUNTER.count_text(text) for text in typed)
    policy = StructuredPolicy(context_window=48_000, min_budget_tokens=4_000)  # 10 %, no floor
    assert users > policy.user_share * policy.budget  # more than the plain budget allows
    summarizer = StructuredSummarizer(policy)
    summary = summarizer.summarize(messages)
    assert all(text in summary.sections[6] for text in typed)
    assert "characters omitted" not in summary.sections[6]
    assert COUNTER.count_text(summary.text) <= summarizer.budget_for(users) < 12_000
    # At a window too small for them they are shortened, the budget capped at 25 % of it.
    small = StructuredSummarizer(StructuredPolicy(context_window=16_000, min_budget_tokens=4_000))
    assert small.budget_for(users) == 4_000
    assert "characters omitted" in small.summarize(messages).sections[6]


def failing_session(users: int, failures: int) -> list[Message]:
    """Long user messages, then ``failures`` commands that fail; odd ones are fixed later."""
    messages = []
    for u in range(users):
        messages += [Message.user(f"request {u}: " + "please " * 150), Message.assistant("ok")]
    for n in range(failures):
        use = ToolUseBlock(f"f{n}", "Bash", {"command": f"make target{n}"})
        out = f"error: target{n} has no rule to build it"
        messages += [Message.assistant([use]), Message.user([ToolResultBlock(use.id, out, True)])]
        if n % 2:
            again = ToolUseBlock(f"g{n}", "Bash", {"command": f"make target{n}"})
            messages += [
                Message.assistant([again]),
                Message.user([ToolResultBlock(again.id, "built", False)]),
            ]
    return [*messages, Message.assistant("done")]


def test_unresolved_errors_are_never_dropped_and_fixed_ones_go_last() -> None:
    messages = failing_session(users=12, failures=10)
    summary = StructuredSummarizer(budget_tokens=2_000).summarize(messages)
    errors = summary.sections[4]
    for n in range(0, 10, 2):  # unresolved: kept, whatever the budget
        assert f"error: target{n} has no rule to build it — unresolved" in errors
    assert "errors fixed later left out by contextwarden" in errors
    # Everything else that may go went first: commands, concepts, answers.
    assert "commands left out by contextwarden" in summary.sections[5]
    roomy = StructuredSummarizer(budget_tokens=4_000).summarize(messages)
    assert "errors fixed later left out" not in roomy.sections[4]
    assert "target1 has no rule to build it — fixed" in roomy.sections[4]


def busy_session(users: int, commands: int) -> list[Message]:
    """Many commands and written files around a few user messages."""
    messages: list[Message] = []
    for u in range(users):
        messages += [Message.user(f"request number {u}: please handle item {u} carefully")]
        for c in range(commands):
            n = u * commands + c
            code = "\n".join(f"line {k} of generated module_{n}" for k in range(30))
            messages += [
                Message.assistant(
                    [
                        ToolUseBlock(
                            f"w{n}",
                            "Write",
                            {"file_path": f"src/pkg/module_{n}.py", "content": code},
                        ),
                        ToolUseBlock(
                            f"b{n}", "Bash", {"command": f"python -m pytest tests/t_{n}.py"}
                        ),
                    ]
                ),
                Message.user(
                    [ToolResultBlock(f"w{n}", "ok"), ToolResultBlock(f"b{n}", f"{n} passed")]
                ),
            ]
        messages.append(Message.assistant(f"done with item {u}"))
    return messages


def test_over_budget_drops_the_least_important_first_and_keeps_facts() -> None:
    messages = busy_session(users=6, commands=25)
    full = StructuredSummarizer(budget_tokens=1_000_000).summarize(messages)
    summary = StructuredSummarizer(budget_tokens=4_000).summarize(messages)
    assert COUNTER.count_text(full.text) > 4_000 >= COUNTER.count_text(summary.text)
    for u in range(6):
        assert f"request number {u}: please handle item {u} carefully" in summary.text
    for n in range(150):
        assert f"`src/pkg/module_{n}.py`" in summary.text  # paths are never dropped
    # Code sections go first, then concepts, then commands, oldest first.
    assert "code sections left out by contextwarden" in summary.sections[3]
    assert "concepts left out by contextwarden" in summary.sections[2]
    assert "generated module_" not in summary.sections[3]
    assert "commands left out by contextwarden" in summary.sections[5]
    kept = re.findall(r"tests/t_(\d+)\.py", summary.sections[5])
    assert kept == sorted(kept, key=int) and (not kept or kept[-1] == "149")


def test_only_a_message_over_its_share_is_shortened() -> None:
    huge = "HEAD-MARKER " + " ".join(f"token{i}" for i in range(20_000)) + " TAIL-MARKER"
    smalls = [f"short message {i}" for i in range(5)]
    messages = [
        Message.user(smalls[0]),
        Message.assistant("a"),
        Message.user(huge),
        Message.assistant("b"),
    ]
    for text in smalls[1:]:
        messages += [Message.user(text), Message.assistant("c")]
    summary = StructuredSummarizer(budget_tokens=8_000).summarize(messages)
    section = summary.sections[6]
    assert all(f"\n{text}\n" in section for text in smalls)
    assert huge not in summary.text
    assert "HEAD-MARKER token0 token1" in section and "token19999 TAIL-MARKER" in section
    assert re.search(
        r"\[\d+ characters omitted by contextwarden to fit the summary budget\]", section
    )
    assert COUNTER.count_text(summary.text) <= 8_000


def test_user_messages_win_over_an_impossible_budget() -> None:
    texts = [f"message {i}: " + " ".join(["word"] * 60) for i in range(20)]
    messages: list[Message] = []
    for text in texts:
        messages += [Message.user(text), Message.assistant("ok")]
    summary = StructuredSummarizer(budget_tokens=300).summarize(messages)
    assert all(text in summary.text for text in texts)  # never shortened below the floor
    assert COUNTER.count_text(summary.text) > 300


@pytest.mark.parametrize(
    ("costs", "total", "cap"),
    [([10, 20, 30], 100, 30), ([10, 20, 300], 100, 70), ([50, 50, 50], 90, 30), ([], 10, 0)],
)
def test_fair_cap(costs: list[int], total: int, cap: int) -> None:
    assert _fair_cap(costs, total) == cap
    if sum(costs) > total:  # the largest cap that fits: one more token per message would not
        assert sum(min(c, cap) for c in costs) <= total < sum(min(c, cap + 1) for c in costs)


def test_head_tail_keeps_both_ends_and_fits() -> None:
    text = "start " + "x" * 50_000 + " end"
    short = head_tail(text, 500, COUNTER)
    assert short.startswith("start ") and short.endswith(" end")
    assert COUNTER.count_text(short) <= 500
    assert head_tail("tiny", 500, COUNTER) == "tiny"


def test_code_fence_cannot_be_closed_by_the_code() -> None:
    code = "Example:\n```python\nprint(1)\n```\n"
    messages = [
        Message.user("write the docs"),
        Message.assistant([ToolUseBlock("1", "Write", {"file_path": "d.md", "content": code})]),
        Message.user([ToolResultBlock("1", "ok")]),
    ]
    section = StructuredSummarizer().summarize(messages).sections[3]
    indented = "\n".join(f"  {line}" if line else "" for line in f"````\n{code}\n````".split("\n"))
    assert indented in section


def test_empty_conversation_still_has_nine_sections() -> None:
    summary = StructuredSummarizer().summarize([])
    assert list(summary.sections) == list(range(1, 10))
    assert "no message typed by the user" in summary.sections[1]


def pasted_test_run(passing: int) -> str:
    lines = ["here is the CI output, why does it fail?", "```"]
    lines += [f"tests/test_mod.py::test_case_{i} PASSED" for i in range(passing)]
    lines[passing // 2] = "E   ValueError: invalid literal for int() with base 10: 'x'"
    lines[passing // 2 + 1] = "FAILED tests/test_mod.py::test_case_rows - ValueError"
    lines += [f"tests/test_other.py::test_more_{i} PASSED" for i in range(passing)]
    return "\n".join([*lines, f"{2 * passing} passed, 1 failed in 3.2s", "```"])


def test_a_shortened_paste_keeps_the_lines_of_its_middle_that_say_what_failed() -> None:
    paste = pasted_test_run(300)
    messages = [Message.user(paste), Message.assistant("Looking."), Message.user("thanks")]
    summary = StructuredSummarizer(budget_tokens=2_000).summarize(messages)
    section = summary.sections[6]
    assert paste not in section and section.startswith("[#1, ")
    assert "\nE   ValueError: invalid literal for int() with base 10: 'x'\n" in section
    assert "\nFAILED tests/test_mod.py::test_case_rows - ValueError\n" in section
    assert "here is the CI output, why does it fail?" in section  # its head
    assert "600 passed, 1 failed in 3.2s" in section  # and its tail
    assert COUNTER.count_text(summary.text) <= 2_000
    plain = StructuredPolicy(budget_tokens=2_000, telling_lines_share=0.0)
    assert "ValueError" not in StructuredSummarizer(plain).summarize(messages).sections[6]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(["ok line of output", "error: disk full", "", "x" * 120, "failed: 2"]),
        min_size=1,
        max_size=80,
    ),
    tokens=st.integers(min_value=20, max_value=400),
    share=st.sampled_from([0.0, 0.25, 0.5]),
)
def test_head_lines_tail_fits_and_keeps_whole_lines_in_order(
    lines: list[str], tokens: int, share: float
) -> None:
    text = "\n".join(lines)
    short = head_lines_tail(text, tokens, COUNTER, says_what_failed, share)
    if COUNTER.count_text(text) <= tokens:
        assert short == text
        return
    assert COUNTER.count_text(short) <= max(
        tokens, COUNTER.count_text(head_tail(text, tokens, COUNTER))
    )
    notes = [int(n) for n in re.findall(r"\[(\d+) characters omitted by contextwarden", short)]
    kept = re.split(
        r"\n\[\d+ characters omitted by contextwarden to fit the summary budget\]\n", short
    )
    assert sum(notes) + sum(len(k) for k in kept) == len(text)  # every character accounted for
    at = 0
    for piece in kept:  # verbatim pieces of the text, in order
        found = text.find(piece, at)
        assert found >= 0
        at = found + len(piece)


def reasoned_failing_session(failures: int, decisions: int) -> list[Message]:
    """``failures`` commands that fail and stay unresolved, then ``decisions`` reasoned choices
    among commands that pass: more than 4,000 tokens of what a summary has to carry."""
    messages: list[Message] = [Message.user("Fix the build of every target.")]
    for n in range(failures):
        use = ToolUseBlock(f"f{n}", "Bash", {"command": f"make target{n} --jobs 4 --keep-going"})
        out = f"src/target{n}/main.c:{n + 10}:5: error: unknown type name 'size{n}_t' in header"
        messages += [Message.assistant([use]), Message.user([ToolResultBlock(use.id, out, True)])]
    for n in range(decisions):
        use = ToolUseBlock(f"d{n}", "Bash", {"command": f"ls src/target{n}"})
        said = (
            f"I chose to vendor the header for target{n} instead of patching the toolchain, "
            f"because the toolchain image {n} is shared with the release pipeline."
        )
        messages += [
            Message.assistant([TextBlock(said), use]),
            Message.user([ToolResultBlock(use.id, "main.c")]),
        ]
    return [*messages, Message.assistant("done")]


# A 4,000-token budget that may grow to 6,000 to carry: what the sessions below are built for.
CARRYING = StructuredPolicy(
    context_window=40_000, min_budget_tokens=4_000, carry_ceiling_ratio=0.15
)


def test_a_derived_budget_grows_to_carry_decisions_and_errors_within_its_ceiling() -> None:
    messages = reasoned_failing_session(failures=40, decisions=60)
    policy = CARRYING
    fixed = StructuredSummarizer(budget_tokens=policy.budget).summarize(messages)
    assert "decisions left out by contextwarden" in fixed.sections[5]  # 4,000 is too short
    grown = StructuredSummarizer(policy).summarize(messages)
    assert "decisions left out" not in grown.sections[5]
    assert all(f"vendor the header for target{n} " in grown.sections[5] for n in range(60))
    assert "commands left out by contextwarden" in grown.sections[5]  # restatements still go
    tokens = COUNTER.count_text(grown.text)
    assert policy.budget < tokens <= policy.context_window * policy.carry_ceiling_ratio
    # Beyond the ceiling, decisions go again, and the summary stays under it.
    many = StructuredSummarizer(policy).summarize(reasoned_failing_session(40, 120))
    assert "decisions left out by contextwarden" in many.sections[5]
    assert COUNTER.count_text(many.text) <= 6_000


def test_the_budget_does_not_grow_for_what_restates_the_rest() -> None:
    messages = busy_session(users=4, commands=40)  # commands and code over the budget
    policy = CARRYING
    summary = StructuredSummarizer(policy).summarize(messages)
    assert "commands left out by contextwarden" in summary.sections[5]
    assert summary == StructuredSummarizer(budget_tokens=policy.budget).summarize(messages)
    assert policy.budget_to_carry(4_000, 9_000) == 6_000
    assert policy.budget_to_carry(4_000, 3_000) == 4_000
    assert StructuredPolicy(budget_tokens=4_000).budget_to_carry(4_000, 5_000) == 4_000


def test_an_error_fixed_later_reads_back_fixed_in_the_short_and_the_older_layout() -> None:
    from contextwarden.summarizers.carry import FIXED_BEFORE, carried_errors, format_error

    head = "3. Files and Code Sections:\n\n4. Errors and Fixes:\n"
    short = format_error("Bash", "make", "error: no rule", True)
    assert short.endswith("— fixed later") and COUNTER.count_text(short) < COUNTER.count_text(
        short.replace("fixed later", FIXED_BEFORE)
    )
    older = f"- Bash `make all`: error: no rule — {FIXED_BEFORE}"
    open_one = format_error("Bash", "make lint", "error: lint", False)
    read = carried_errors(f"{head}{short}\n{older}\n{open_one}\n")
    assert [(e.target, e.fixed) for e in read] == [
        ("make", True),
        ("make all", True),
        ("make lint", False),
    ]


def test_a_command_lists_the_folder_it_changes_to_by_its_last_two_parts() -> None:
    project = "/Users/me/Library/Mobile\\ Documents/My\\ Drive/code/shop/web"
    messages = [
        Message("user", (TextBlock("run the tests"),)),
        Message(
            "assistant",
            (ToolUseBlock("c1", "Bash", {"command": f"cd {project} && npm test"}),),
        ),
        Message("user", (ToolResultBlock("c1", "Tests: 4 passed"),)),
        Message("assistant", (ToolUseBlock("c2", "Bash", {"command": "cd src && ls"}),)),
        Message("user", (ToolResultBlock("c2", "app.ts"),)),
        Message("assistant", (TextBlock("All four pass."),)),
    ]
    text = StructuredSummarizer().summarize(messages).text
    assert "- `cd …/shop/web && npm test` → ok" in text
    assert "- `cd src && ls` → ok" in text  # a short folder is written as it was
    assert project not in text


def test_a_command_run_again_with_the_same_outcome_is_listed_once_at_its_last_run() -> None:
    # A server restarted and a request retried until it worked, as Cursor's terminal tool
    # reports them (commands and outputs trimmed from a SpecStory export in set 7).
    request = 'curl -s -X POST http://localhost:3000/api/conversations -d \'{"title": "T"}\''
    calls = [
        ("pkill -f 'next dev'", ""),
        (request, "curl: (7) Failed to connect to localhost port 3000: Connection refused"),
        ("pkill -f 'next dev'", ""),
        (request, "curl: (7) Failed to connect to localhost port 3000: Connection refused"),
        (request, '{"id": "3f1c", "title": "T"}'),
    ]
    messages = [Message.user("get the conversation API working")]
    for n, (command, output) in enumerate(calls):
        messages += [
            Message.assistant([ToolUseBlock(f"t{n}", "Bash", {"command": command})]),
            Message.user([ToolResultBlock(f"t{n}", output, is_error=output.startswith("curl:"))]),
        ]
    messages.append(Message.assistant("The API answers now."))
    five = StructuredSummarizer().summarize(messages).sections[5]
    listed = [line for line in five.splitlines() if line.startswith("- `")]
    assert listed == [
        "- `pkill -f 'next dev'` → ok (2 runs)",
        f"- `{request}` → failed (2 runs)",
        f"- `{request}` → ok",
    ]


def test_an_error_names_its_call_by_the_head_of_its_command() -> None:
    # A compound command of set 9's design session (Claude Code): the failure line is what the
    # summary carries; the command's head says which call it was, and section 5 quotes more of
    # it while the budget lets it.
    command = (
        'echo "=== go version & sqlite-ish deps ===" && head -5 go.mod && grep -iE '
        '"sqlite|mattn|modernc" go.mod go.sum | head; echo "(none if empty)"; ls pkg/providers/*.go'
    )
    messages = [
        Message.user("which sqlite driver do we use?"),
        Message.assistant([ToolUseBlock("t1", "Bash", {"command": command})]),
        Message.user(
            [
                ToolResultBlock(
                    "t1", "(eval):1: no matches found: pkg/providers/*.go\nExit code 1", True
                )
            ]
        ),
        Message.assistant("None yet: the module has no sqlite dependency."),
    ]
    summary = StructuredSummarizer().summarize(messages)
    head = command[:79] + "…"  # StructuredPolicy.error_target_chars, 80 by default
    line = f"- Bash `{head}`: (eval):1: no matches found: pkg/providers/*.go — unresolved"
    assert summary.sections[4] == line
    assert command in summary.sections[5]
