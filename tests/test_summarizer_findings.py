"""What else the assistant found or said: its conclusions written without a signal word are
kept (markers off, backticks on), narration is not, the summary lists them only in the room its
budget leaves, drops them before its excerpts and decisions but keeps them over the commands run
(which restate), and a second summary carries them on."""

from __future__ import annotations

import pytest
from conftest import summary_message

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer, extract_facts
from contextwarden.summarizers.carry import FINDING_PREFIX, FINDINGS_LABEL, carried_findings
from contextwarden.summarizers.findings import chosen, findings, substance
from contextwarden.summarizers.sentences import WHOLE_LINE_CHARS, sentences
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()
DECISION = "I'll keep the Cloudflare Worker as the broker because it needs no new deployment."

# An adversarial review's revisions, from a Codex session of chikachow/cyspbot (MIT), abridged.
REVIEW = (
    "The adversarial pass found three necessary revisions:\n\n"
    "- Retain the duplicated Google/Fly binding checks in policy as deliberate "
    "defense-in-depth. Removing them would make policy authorization depend completely on "
    "callers always supplying a legitimately authenticated context.\n"
    "- Replace the larger `TrustedOidcIssuer` interface refactor with a narrow `issuer` → "
    "`verifiedIssuer` rename.\n"
    "2. Do not accept `accounts.google.com` without the HTTPS scheme\n"
    "## Cloud Run IAM is service-level, not issuer-aware.\n"
    "- The production policy serializes to 3,451 bytes minified.\n"
    "```ts\nconst issuer = 'https://accounts.google.com';\n```\n"
)
REMOVING = (
    "Removing them would make policy authorization depend completely on callers always "
    "supplying a legitimately authenticated context."
)
"""A finding from the middle of ``REVIEW``, which its answer's excerpt does not quote."""
NARRATION = (
    "Let me look at the issuer adapter and its tests first.\n"
    "Now I'll run the whole test suite against the worker.\n"
    "I\u2019m going to inspect `wrangler.jsonc` for the bindings.\n"
    "I am reading the service contract before I change anything.\n"
    "Voy a revisar la configuración del servidor ahora mismo.\n"
    "Давайте посмотрим на конфигурацию сервера и тесты.\n"
    "让我看看这个服务的配置文件和所有的测试结果。\n"
    "Done.\n"
)


def test_conclusions_without_a_signal_word_are_found_verbatim_without_their_markers() -> None:
    assert findings(REVIEW) == [
        "Retain the duplicated Google/Fly binding checks in policy as deliberate defense-in-depth.",
        "Removing them would make policy authorization depend completely on callers always "
        "supplying a legitimately authenticated context.",
        "Replace the larger `TrustedOidcIssuer` interface refactor with a narrow `issuer` → "
        "`verifiedIssuer` rename.",
        "Do not accept `accounts.google.com` without the HTTPS scheme",
        "Cloud Run IAM is service-level, not issuer-aware.",
        "The production policy serializes to 3,451 bytes minified.",
    ]  # the list's introduction (a colon at its end) and the code are not findings


def test_adjacent_findings_of_a_long_line_are_one_span_without_a_decision_in_it() -> None:
    told = "Let me check the remaining call sites of the parser before I go on with the rest."
    first = "`config.lock` is not tracked, so CI resolves it fresh."
    second = "The test edits are the whole change."
    line = f"{first} {second} {told} {told}"
    assert len(line) > WHOLE_LINE_CHARS
    assert findings(line) == [f"{first} {second}"]
    assert findings(line, decided=[first]) == [first, second]  # a decision stays alone


def test_a_line_ending_in_a_colon_says_something_when_a_sentence_comes_first() -> None:
    stated = "The migration ran on the primary — the replica still has the old schema."
    intro = "Apply it there too:"
    assert findings(f"{stated} {intro}") == [f"{stated} {intro}"]
    assert findings("The remaining call sites in the parser module:") == []  # introduces only


@pytest.mark.parametrize(
    "question",
    [
        "Maybe `Package.collect` is not called because the session did not yield it?",
        "**Would you like me to apply these changes to `inference.py`?**",
        "Section 6 的 client.ts 重写量是否担心一次太大\uff1f",
    ],
)
def test_a_question_alone_is_no_finding_one_after_a_statement_keeps_its_line(
    question: str,
) -> None:
    stated = "The debug output never reaches stderr in `runpytest`."
    assert findings(question) == []
    assert findings(f"{stated} {question}") == [f"{stated} {question}"]


def test_narration_in_each_language_and_a_bare_word_are_not_findings() -> None:
    assert findings(NARRATION) == []


@pytest.mark.parametrize(
    ("richer", "poorer"),
    [
        ("`parents != nil` should be `len(parents) != 0`", "The layout of the page looks fine"),
        ("serializes to 3,451 bytes minified", "serializes to a small payload minified"),
        ("Do not store policy in Secret Manager", "Store policy in the deploy repository"),
        ("`src/segments/path.go` re-renders the path", "the segment re-renders the path"),
        ("不做的话所有请求都会失败", "做的话所有请求都会成功"),
        ("このキャッシュは使われていません", "このキャッシュは使われています"),
        ("이 설정은 필요 없습니다", "이 설정은 필요 합니다"),
    ],
)
def test_substance_counts_identifiers_numbers_negations_and_paths(richer: str, poorer: str) -> None:
    assert substance(richer) > substance(poorer)


def test_a_markdown_link_counts_by_its_text_not_its_target() -> None:
    # an audit's table row of issue links (a Claude Code session of Nomos-N4s/nomos, set 18)
    row = (
        "| **A** — Code defects | [#288](https://github.com/Nomos-N4s/nomos/issues/288) to "
        "[#294](https://github.com/Nomos-N4s/nomos/issues/294) | A1 to A7 |"
    )
    assert substance(row) == substance("| **A** — Code defects | [#288] to [#294] | A1 to A7 |")
    bare = "PR open: https://github.com/yixian-huang/cocli/pull/13"
    assert substance(bare) == 1  # a bare address is what the line says


# Three texts of an agent's turn after it read a test run, as Cursor's steps or three replies
# write them: what each concludes first, then detail.
FIRST_READ = (
    "The fixture closes the session before the test body runs.",
    "The teardown order is fixture scope first, then `autouse` hooks in `conftest.py` line 40.",
)
SECOND_READ = ("Only the async tests fail; the sync ones pass.",)


def test_each_texts_lead_is_chosen_before_detail_saying_more() -> None:
    candidates = [
        (1, 0, FIRST_READ[0]),
        (1, 1, FIRST_READ[1]),
        (1, 2, "Both `db` and `client` fixtures use `scope=module` in `conftest.py`, 2 of 14."),
        (3, 0, SECOND_READ[0]),
    ]
    detail = candidates[2][2]
    assert substance(detail) > substance(FIRST_READ[0])  # it would go first by substance
    room = sum(COUNTER.count_text(unit) + 1 for unit in (*FIRST_READ, *SECOND_READ))
    picked = chosen(candidates, "", room, COUNTER)
    assert [(lead, unit) for lead, _, unit in picked] == [
        (True, FIRST_READ[0]),
        (True, FIRST_READ[1]),
        (True, SECOND_READ[0]),
    ]
    everything = chosen(candidates, "", 1_000, COUNTER)
    assert (False, detail) in [(lead, unit) for lead, _, unit in everything]


def test_a_place_counts_within_each_text_block_and_a_carried_finding_leads() -> None:
    steps = Message.assistant(
        [
            TextBlock("\n".join(FIRST_READ)),
            ToolUseBlock("t1", "Bash", {"command": "pytest -q tests/test_async.py"}),
            TextBlock(SECOND_READ[0]),
        ]
    )
    messages = [
        Message.user("Find out why the async tests fail."),
        steps,
        Message.user([ToolResultBlock("t1", "2 failed, 12 passed")]),
    ]
    places = {unit: place for _, place, unit in extract_facts(messages).findings}
    assert places == {FIRST_READ[0]: 0, FIRST_READ[1]: 1, SECOND_READ[0]: 0}
    first = StructuredSummarizer().summarize(messages).text
    later = [summary_message(first), Message.assistant("Continuing."), Message.user("Go on.")]
    carried = {u: p for _, p, u in extract_facts(later).findings if u in carried_findings(first)}
    assert carried and set(carried.values()) == {0}  # chosen once already


PLAN = (
    "Here's the plan:\n"
    "- Move the session fixture to function scope in the shared conftest module.\n"
    "- Mark each async test with the asyncio marker of the plugin.\n"
)


def _plan_session() -> list[Message]:
    """A text that leads with two findings, a plan's steps and a decision that gives a reason."""
    return [
        Message.user("Find out why the async tests fail, then fix them."),
        Message.assistant(
            [TextBlock("\n".join(FIRST_READ)), ToolUseBlock("t1", "Read", {"path": "conftest.py"})]
        ),
        Message.user([ToolResultBlock("t1", "import pytest")]),
        Message.assistant(PLAN),
        Message.user("Do it."),
        Message.assistant(DECISION),
        Message.user("Thanks."),
        Message.assistant("Done."),
    ]


def test_a_texts_lead_outlasts_a_plans_steps_not_a_reason() -> None:
    messages = _plan_session()
    full = COUNTER.count_text(StructuredSummarizer().summarize(messages).text)
    assert f"{FINDING_PREFIX}{FIRST_READ[0]}" in StructuredSummarizer().summarize(messages).text
    summaries = [
        StructuredSummarizer(budget_tokens=budget).summarize(messages).sections[5]
        for budget in range(full, 0, -5)
    ]
    steps_gone = next(five for five in summaries if "decisions left out" in five)
    assert f"{FINDING_PREFIX}{FIRST_READ[0]}" in steps_gone  # the plan's steps went first
    lead_gone = next(five for five in summaries if FIRST_READ[0] not in five)
    assert DECISION in lead_gone  # a reason outlasts the lead


def test_over_its_budget_a_texts_lead_past_the_share_takes_a_plans_steps_room() -> None:
    messages = _plan_session()
    full = COUNTER.count_text(StructuredSummarizer().summarize(messages).text)
    one = COUNTER.count_text(FIRST_READ[1]) + 3  # the share holds one of the two leads

    def summary(budget: int) -> str:
        policy = StructuredPolicy(findings_share=one / budget, budget_tokens=budget)
        return StructuredSummarizer(policy).summarize(messages).text

    assert f"{FINDING_PREFIX}{FIRST_READ[1]}" not in summary(full)  # under budget: the share
    tight = next(
        (budget, text)
        for budget in range(full, 0, -4)
        if "decisions left out" in (text := summary(budget))
    )
    # over it, the plan's step goes, and both leads of the text are listed
    assert all(f"{FINDING_PREFIX}{line}" in tight[1] for line in FIRST_READ)
    assert COUNTER.count_text(tight[1]) <= tight[0]


def test_the_thought_label_of_a_text_action_reply_is_layout() -> None:
    # mini-swe-agent's format opens every reply with "THOUGHT:" before its command
    assert findings("THOUGHT: Now let's build the docs again and check the output.") == []
    assert findings("THOUGHT: The parser drops the `~` prefix before it resolves the target.") == [
        "The parser drops the `~` prefix before it resolves the target."
    ]


def test_chosen_skips_what_the_summary_holds_spends_its_room_on_substance_keeps_order() -> None:
    candidates = [
        (1, 0, "The deploy runs from the other repository entirely."),
        (2, 0, "Do not accept `accounts.google.com` without the HTTPS scheme"),
        (3, 0, "The deploy runs from the other repository entirely."),  # said again
        (4, 0, "Cloud Run IAM is service-level, not issuer-aware."),
    ]
    held = "- said: Cloud Run IAM is service-level, not issuer-aware."
    everything = chosen(candidates, held, 1_000, COUNTER)
    assert [unit for _, _, unit in everything] == [candidates[0][2], candidates[1][2]]
    (_, richer_rank, _), (_, poorer_rank, _) = everything[1], everything[0]
    assert richer_rank > poorer_rank  # the one saying more is dropped later
    room = COUNTER.count_text(candidates[1][2]) + 1
    assert chosen(candidates, held, room, COUNTER) == [(True, 2, candidates[1][2])]


# An audit's findings as an agent lists them: a table row of issue links, then two short lines.
AUDIT_ROW = (
    "| **A** — Code defects | [#288](https://github.com/acme/app/issues/288) to "
    "[#294](https://github.com/acme/app/issues/294) | 7 issues |"
)
AUDIT_LINES = (
    "`auth.py` line 40 lets one principal clear 3 of 5 approvals.",
    "The digest in `sweep.py` was made on 2 CRLF checkouts.",
)


def test_a_re_summary_spends_the_room_on_what_names_most_for_its_length() -> None:
    audit = Message.assistant(
        [
            TextBlock("\n".join((AUDIT_ROW, *AUDIT_LINES))),
            ToolUseBlock("t1", "Bash", {"command": "gh issue list"}),
        ]
    )
    messages = [
        Message.user("Check the audit's findings."),
        audit,
        Message.user([ToolResultBlock("t1", "288 open")]),
        Message.assistant("Filing the rest."),
        Message.user("Go on."),
    ]
    first = StructuredSummarizer().summarize(messages).text
    assert carried_findings(first) == (AUDIT_ROW, *AUDIT_LINES)
    later = [summary_message(first), Message.assistant("Filing."), Message.user("Go on.")]
    carried = extract_facts(later).findings
    # the row names less than both lines (its links count by their text) and costs about as
    # much as both
    assert substance(AUDIT_ROW) < sum(map(substance, AUDIT_LINES))
    room = COUNTER.count_text(AUDIT_ROW) + 1
    assert sum(COUNTER.count_text(line) + 1 for line in AUDIT_LINES) <= room
    assert [unit for _, _, unit in chosen(carried, "", room, COUNTER)] == list(AUDIT_LINES)


def conversation() -> list[Message]:
    return [
        Message.user("Review the Google OIDC issuer change and revise the plan."),
        Message.assistant(REVIEW),
        Message.user("Go ahead with the revised plan."),
        Message.assistant(DECISION),
    ]


def test_the_summary_lists_them_once_below_decisions_and_drops_them_before_decisions() -> None:
    summary = StructuredSummarizer().summarize(conversation())
    five = summary.sections[5]
    assert FINDINGS_LABEL in five
    size = "The production policy serializes to 3,451 bytes minified."
    # the directives and contrasts are decisions; this line ends the review, which the
    # answers' excerpt quotes: listed once, there
    assert five.count(size) == 1 and f"{FINDING_PREFIX}{size}" not in five
    listed = [line for line in five.splitlines() if line.startswith(("- said: ", "- noted: "))]
    # the last message's decision is quoted by section 8, and listed in neither list
    assert DECISION in summary.sections[8]
    assert not any(DECISION in line for line in listed)
    assert sum("Removing them would make" in line for line in listed) == 1
    full = COUNTER.count_text(summary.text)
    tight = StructuredSummarizer(budget_tokens=full - 20).summarize(conversation())
    # the review's lead (its first findings) outlasts the answer's excerpt, head and tail
    assert "answers left out" in tight.sections[5]
    assert f"{FINDING_PREFIX}{REMOVING}" in tight.sections[5]
    tighter = next(
        shorter
        for budget in range(full - 20, 0, -5)
        if "findings left out"
        in (
            shorter := StructuredSummarizer(budget_tokens=budget).summarize(conversation())
        ).sections[5]
    )
    assert "Do not accept" in tighter.text  # a decision, not dropped with the findings
    none = StructuredSummarizer(StructuredPolicy(findings_share=0)).summarize(conversation())
    assert FINDINGS_LABEL not in none.text


def test_a_lead_an_answers_excerpt_quoted_is_listed_when_the_budget_drops_the_excerpt() -> None:
    jose = "The `jose` import accounts for 28 KiB of the 41.2 KiB bundle."
    messages = [
        Message.user("Why is the worker bundle so large?"),
        Message.assistant(jose),
        Message.user("Fix it."),
        Message.assistant(PLAN),
        Message.user("Go ahead."),
        Message.assistant(DECISION),
    ]
    five = StructuredSummarizer().summarize(messages).sections[5]
    assert f"(after #1) {jose}" in five and f"{FINDING_PREFIX}{jose}" not in five  # once
    full = COUNTER.count_text(StructuredSummarizer().summarize(messages).text)
    tight = StructuredSummarizer(budget_tokens=full - 5).summarize(messages)
    # the excerpts go, and the conclusion they quoted stays, listed as a text's lead
    assert "2 answers left out" in tight.sections[5]
    assert f"{FINDING_PREFIX}{jose}" in tight.sections[5]
    assert COUNTER.count_text(tight.text) <= full - 5


def commands_then_review(commands: int) -> list[Message]:
    """Many shell calls, then the review: the commands list is long, the findings few."""
    messages = [Message.user("Check the worker builds, then review the OIDC issuer change.")]
    for n in range(commands):
        use = ToolUseBlock(
            f"c{n}", "Bash", {"command": f"npx wrangler deploy --dry-run --env e{n}"}
        )
        messages += [
            Message.assistant([TextBlock(f"Dry run {n}."), use]),
            Message.user([ToolResultBlock(f"c{n}", "Total Upload: 41.2 KiB / gzip: 9.8 KiB")]),
        ]
    return [
        *messages,
        Message.assistant(REVIEW),
        Message.user("Go ahead."),
        Message.assistant(DECISION),
    ]


def test_over_its_budget_a_summary_keeps_findings_over_the_commands_run() -> None:
    size = REMOVING  # the answer's excerpt (head and tail) does not quote it
    messages = commands_then_review(60)
    full = COUNTER.count_text(StructuredSummarizer().summarize(messages).text)
    tight = StructuredSummarizer(budget_tokens=full * 3 // 4).summarize(messages)
    assert "commands" in tight.sections[5] and "left out" in tight.sections[5]
    assert f"{FINDING_PREFIX}{size}" in tight.sections[5]  # the commands went for it
    assert COUNTER.count_text(tight.text) <= full * 3 // 4


# Measurements an agent reports after dry runs, written without a signal word (abridged from the
# same kind of Cloudflare Worker session as REVIEW).
MEASURED = (
    "The worker bundle is 41.2 KiB, 9.8 KiB gzipped, under the 1 MiB free-plan limit.\n"
    "`wrangler.jsonc` binds `OIDC_ISSUER` in all 3 environments.\n"
    "The `e7` environment has no `routes` entry, so it deploys to `workers.dev` only.\n"
    "The `jose` import accounts for 28 KiB of the 41.2 KiB bundle.\n"
)


def test_within_its_budget_findings_take_the_place_of_commands_not_more_room() -> None:
    *before, last = commands_then_review(30)
    messages = [*before, Message.assistant(MEASURED), Message.user("Keep going."), last]
    # the share holds one finding; the answers' excerpts are kept short, so that the findings
    # are not lines they quote (those are not listed twice)
    policy = StructuredPolicy(findings_share=0.002, answer_chars=80)
    summarizer = StructuredSummarizer(policy)
    summary = summarizer.summarize(messages)
    listed = [line for line in summary.sections[5].splitlines() if line.startswith(FINDING_PREFIX)]
    room = int(policy.budget * policy.findings_share)
    assert sum(COUNTER.count_text(line) + 1 for line in listed) > room
    assert "commands left out" in summary.sections[5]  # they made the room
    none = StructuredPolicy(findings_share=0, answer_chars=80)
    without = StructuredSummarizer(none).summarize(messages)
    assert COUNTER.count_text(summary.text) <= COUNTER.count_text(without.text) + room


def test_a_second_summary_carries_them_within_its_budget() -> None:
    summarizer = StructuredSummarizer()
    first = summarizer.summarize(conversation()).text
    listed = carried_findings(first)
    assert REMOVING in listed
    later = [
        summary_message(first),
        Message.assistant("Continuing with the plan."),
        Message.user("Now split the commits."),
        Message.assistant("Split into two commits."),
    ]
    facts = extract_facts(later)
    assert set(listed) <= {unit for _, _, unit in facts.findings}
    second = summarizer.summarize(later).text
    assert second.count(REMOVING) == 1
    assert second.count("The production policy serializes to 3,451 bytes minified.") == 1
    assert carried_findings(second)[: len(listed)] == listed  # oldest first, as they were


def test_a_failure_the_assistant_quotes_in_a_code_block_is_read_not_the_code() -> None:
    # the person ran the commands and pasted nothing the export kept; the answer quotes git's
    # own messages (git-apply: "can't open patch", git-rev-parse: "ambiguous argument")
    answer = (
        "Both commands used the example paths from the docs.\n\n"
        "```\n"
        "error: can't open patch 'save/location/test_diff.diff': No such file or directory\n"
        "```\n\n"
        "```\n"
        "fatal: ambiguous argument 'test/file/path': unknown revision or path not in the "
        "working tree.\n"
        "```\n\n"
        "```bash\n"
        "mkdir -p save/location && git diff -- src/app.py > save/location/test_diff.diff\n"
        "```\n"
    )
    found = findings(answer)
    assert "error: can't open patch 'save/location/test_diff.diff': No such file or directory" in (
        found
    )
    assert any(unit.startswith("fatal: ambiguous argument 'test/file/path'") for unit in found)
    assert not any("mkdir" in unit for unit in found)


def test_a_sentence_in_bold_ends_where_its_bold_closes() -> None:
    # Claude Code's replies set a conclusion in bold, then go on: "**X.** Y". Markdown closes
    # the emphasis after the full stop, so the sentence ends after the ``**``, not at the line's
    # end: the line is the conclusion and a list's introduction, not an introduction alone.
    line = (
        "**The opencode setup isn't in the repo I'm working in.** You have two clones of"
        " `Nomos-N4s/nomos`:"
    )
    assert findings(f"{line}\n\n| Clone | Branch |\n|---|---|\n| `repos/nomos` | `main` |") == [
        line
    ]
    # a bold list label opening the line is the item's label, not a sentence of its own
    assert sentences("**2.** Then move the cache. It is read once.") == [
        "**2.** Then move the cache.",
        "It is read once.",
    ]


def test_under_its_budget_a_summary_leaves_nothing_out_for_a_texts_lead() -> None:
    messages = [
        Message.user("Check the worker builds."),
        Message.assistant(MEASURED),
        Message.user("Keep going."),
        Message.assistant(DECISION),
    ]
    one = COUNTER.count_text(MEASURED.splitlines()[0]) + 3  # the share holds one finding
    budget = 2_000
    policy = StructuredPolicy(findings_share=one / budget, answer_chars=80, budget_tokens=budget)
    summary = StructuredSummarizer(policy).summarize(messages)
    assert COUNTER.count_text(summary.text) < budget // 4  # far under its budget
    # the leads past the share do not push the answer's excerpt out: nothing is over
    assert "left out" not in summary.text
    assert "(after #1) The worker bundle is 41.2 KiB" in summary.sections[5]
    assert f"{FINDING_PREFIX}{MEASURED.splitlines()[0]}" in summary.sections[5]
