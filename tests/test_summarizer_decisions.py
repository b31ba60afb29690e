"""Decisions in the assistant's words: a reason, a choice, a diagnosis or a plan's step, in the
languages agents write; a short line whole, code only by its comments; diagnoses go first."""

from __future__ import annotations

import pytest

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer
from contextwarden.summarizers.carry import DECISION_PREFIX
from contextwarden.summarizers.decisions import EDIT_UNITS, PLAN_LINES, decisions, standing
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.sentences import MAX_DECISION_CHARS, clipped
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()


@pytest.mark.parametrize(
    "line",
    [
        "I'll keep the SQLite store as the default because it needs no server to run.",
        "I see the issue - I accidentally duplicated a catch block.",
        "The real problem is the stale cache entry, not the network.",
        "Оставлю SQLite по умолчанию, потому что ему не нужен сервер.",
        "Usaré SQLite en lugar de PostgreSQL porque no necesita servidor.",
        "Je garde SQLite parce que la base ne demande aucun serveur.",
        "Ich nehme SQLite statt PostgreSQL, weil es keinen Server braucht.",
        # a purpose (what it guards against), and a choice gone ahead with
        "The wrapper gets an inactivity watchdog to prevent hangs on a silent child.",
        "Añado un temporizador de inactividad para evitar bloqueos del proceso hijo.",
        "I'm going ahead with the part we control: a details view in our own sidebar.",
        "我们保留 SQLite\uff0c因为它不需要服务器。",
        "サーバーが不要なため、SQLite をそのまま使います。",
        # a conclusion drawn from what was just read
        "The `ImportError` confirms that the wheel was built without the C extension.",
        "The timeout suggests a deadlock between the two worker threads.",
        "The stack trace indicates that the handler runs before the config loads.",
        "It seems the retry wrapper swallows the original exception here.",
        "El log sugiere que el proceso hijo muere antes de conectar.",
        "Der Stacktrace bestätigt, dass der Handler zu früh läuft.",
        "日志表明子进程在连接之前就退出了。",
        # diagnoses without the classic signal words
        "X was never called — the handler is registered after the event fires.",
        "Looks like the port is taken by the old container.",
        "The `onSave` prop isn't being passed down to the nested form.",
        "Похоже, порт занят старым контейнером.",
        "Parece que el puerto está ocupado por el contenedor anterior.",
        "Il semble que le port soit occupé par l'ancien conteneur.",
        "Es scheint, dass der Port noch vom alten Container belegt ist.",
        "看起来端口一直被之前启动的那个旧容器占用着。",
        "The filter was too narrow — the tests are in the `log::tests` module.",
        "The upstream client changed from `convert(**kwargs)` to `stream(**kwargs)` in 2.0.",
        # a choice, a cause found, something missing: CJK words with no boundary to anchor on
        "既存の API を変更するのではなく、新しいエンドポイントを追加することにしました。",
        "設定ファイルの読み込み順序が逆になっていたことが判明しました。",
        "为了避免重复请求\uff0c我们采用缓存而不是每次都查询数据库。",
        "캐시 키가 누락되어 매번 데이터베이스를 조회하고 있었습니다.",
    ],
)
def test_a_reason_a_choice_or_a_diagnosis_is_a_decision(line: str) -> None:
    assert decisions(f"Reading the file now.\n{line}") == [line]


def test_chatter_is_not_a_decision() -> None:
    assert decisions("Now let me read the remaining key files.\nLet me run the tests.") == []
    assert decisions("次にテストを実行して、結果を確認します。\n接下来我运行全部测试。") == []


# Real texts of messages that edit a file (a Claude Code and an OpenHands session).
CHECKED = (
    "Good, the `agentsFiles.length === 0` check at line ~1008 is correct - it should still "
    "check original `agentsFiles` (if no files at all were found). Now update the `job.started` "
    "event and the unified/independent mode calls:"
)
RULE = (
    'The `parampattern` rule is defined on line 651 as `DEF(parampattern); RULE("pattern", '
    "prefix, postfix); DONE();`."
)


def test_what_a_message_that_edits_says_is_a_decision_but_its_announcements() -> None:
    found = decisions(CHECKED, edits=True)
    assert found == [CHECKED.split(" Now ")[0]]
    assert decisions(CHECKED) == []  # the same words before a read decide nothing
    assert decisions("Now update `discoverLinkedDocs` to use `evaluatorFiles`:", edits=True) == []
    assert decisions("Теперь обновлю обработчик `onSave` в форме:", edits=True) == []
    voucher = "Voucher validation rejects the code when the cart total is zero."
    assert decisions(voucher, edits=True) == [voucher]  # "vou" (Portuguese) is a whole word
    assert decisions(RULE, edits=True) == [RULE]


def test_what_an_edit_says_leaves_a_short_summary_before_a_diagnosis() -> None:
    diagnosis = "The real problem was the stale lock file left by the crashed run."
    edit = ToolUseBlock(id="e1", name="Edit", input={"file_path": "a.ts", "old_string": "x"})
    messages = [
        Message.user("Fix the count."),
        Message.assistant(diagnosis),
        Message.user("Go on."),
        Message("assistant", (TextBlock(RULE), edit)),
        Message("user", (ToolResultBlock(tool_use_id="e1", content="ok"),)),
        Message.assistant("Done."),
    ]
    assert standing(RULE) == 0
    full = StructuredSummarizer().summarize(messages).text
    assert f"{DECISION_PREFIX}{RULE}" in full and f"{DECISION_PREFIX}{diagnosis}" in full
    assert_goes_first(messages, RULE, diagnosis)


def test_only_the_lines_nearest_the_edit_are_kept() -> None:
    lines = [f"The value {n} comes back from the cache layer unchanged here." for n in range(6)]
    signalled = "The real problem is the stale lock file the crashed run left."
    found = decisions("\n".join([signalled, *lines]), edits=True)
    assert found == [signalled, *lines[-EDIT_UNITS:]]


def test_the_facts_read_a_message_by_whether_it_edits() -> None:
    edit = ToolUseBlock(id="e1", name="Edit", input={"file_path": "a.ts", "old_string": "x"})
    read = ToolUseBlock(id="r1", name="Read", input={"file_path": "a.ts"})
    for call, kept in ((edit, True), (read, False)):
        messages = [
            Message.user("Fix the count."),
            Message("assistant", (TextBlock(RULE), call)),
            Message("user", (ToolResultBlock(tool_use_id=call.id, content="ok"),)),
        ]
        assert ((1, RULE) in extract_facts(messages).decisions) is kept


def test_a_short_line_is_kept_whole_and_a_long_one_by_its_sentences() -> None:
    short = "Same tab issue. My edit strings were using spaces."
    assert decisions(short) == [short]
    filler = "This sentence only describes what was read in the file, nothing more. " * 3
    long = f"{filler}The cause is the stale lock file the crashed run left behind."
    assert decisions(long) == ["The cause is the stale lock file the crashed run left behind."]


FILLER = "This sentence only describes what was read in the file, nothing more. " * 2


def test_adjacent_decisions_of_a_long_line_stay_one_span_while_short() -> None:
    cause = "The cache key is wrong because it ignores the locale."
    choice = "I'll key it by path and locale instead of path alone."
    assert decisions(f"{FILLER}{cause} {choice} {FILLER}") == [f"{cause} {choice}"]
    gap = f"{cause} {FILLER}{choice}"  # not adjacent: two units, as the line has them apart
    assert decisions(f"{FILLER}{gap}") == [cause, choice]
    wordy = choice.replace("path alone", "path alone " + "and nothing else " * 6)
    assert decisions(f"{FILLER}{cause} {wordy}") == [cause, wordy]  # too long together


def test_a_list_items_label_is_not_a_sentence_of_its_own() -> None:
    item = "B. **Full fix** keeps the old API because three callers still rely on it."
    assert decisions(f"{item} {FILLER}") == [item]
    assert decisions(f"2. {item[3:]} {FILLER}") == [f"2. {item[3:]}"]
    # a sentence long enough to stand alone (a shorter one leads into the decision after it)
    assert decisions(f"See the reviewer's note on this in section A. {item[3:]} {FILLER}") == [
        item[3:]
    ]


def test_a_sentence_too_long_to_keep_keeps_its_head_and_its_last_clause() -> None:
    middle = "which the parser already uses for the other escapes it knows about, " * 5
    outcome = "now also rejects a run of two `{` bytes via the new `break_runs` helper."
    line = (
        f"Rather than dropping the render, the fix extends the `escape` closure, {middle}{outcome}"
    )
    [kept] = decisions(line)
    assert len(kept) <= MAX_DECISION_CHARS
    assert kept.startswith("Rather than dropping the render, the fix extends")
    _, tail = kept.split(" \u2026 ")
    assert tail.endswith(outcome) and line.endswith(tail)
    assert line[: -len(tail)].endswith(", ")  # the tail starts where a clause does
    unbroken = "x" * 400
    assert clipped(unbroken) == unbroken[:MAX_DECISION_CHARS]  # no clause to keep: the head


def test_code_is_read_only_by_its_comments() -> None:
    text = (
        "```bash\n"
        "# Let's find the line number again since I might have shifted things\n"
        'grep -n "because" src/app.py  # the code itself is not a decision\n'
        "```"
    )
    assert decisions(text) == [
        "# Let's find the line number again since I might have shifted things"
    ]


def test_the_steps_after_a_plan_are_decisions() -> None:
    steps = [f"**Step {i}:** move the token store behind the new interface {i}" for i in range(8)]
    found = decisions("Here's the plan:\n\n" + "\n\n".join(steps))
    assert found == steps[:PLAN_LINES]


def test_diagnoses_leave_a_short_summary_before_reasons() -> None:
    reason = "I'll keep the SQLite store as the default because it needs no server to run."
    diagnosis = "The real problem was the stale lock file left by the crashed run."
    assert standing(reason) == 2 and standing(diagnosis) == 1
    messages = [Message.user("Make the store pluggable.")]
    messages += [Message.assistant(reason), Message.user("Go on."), Message.assistant(diagnosis)]
    messages += [Message.user("And then?"), Message.assistant("Done.")]
    full = StructuredSummarizer().summarize(messages).text
    assert f"{DECISION_PREFIX}{diagnosis}" in full and f"{DECISION_PREFIX}{reason}" in full
    assert_goes_first(messages, diagnosis, reason)


# Plan and review bullets and research findings, from Codex rollouts of chikachow/cyspbot (MIT;
# benchmarks/fresh_probes3), short spans.
REVIEW = (
    "The adversarial pass found three necessary revisions:\n\n"
    "- Retain the duplicated Google/Fly binding checks in policy as deliberate "
    "defense-in-depth.\n"
    "- Replace the larger `TrustedOidcIssuer` interface refactor with a narrow rename.\n"
    "- Remove brittle acceptance criteria such as an exact final test count.\n"
    "- Do not accept `accounts.google.com` without the HTTPS scheme.\n"
    "- Do not make email mandatory for service-account identity.\n"
)


def test_a_plans_or_a_reviews_directives_are_decisions() -> None:
    bullets = [line for line in REVIEW.splitlines() if line.startswith("- ")]
    assert decisions(REVIEW) == bullets  # more than PLAN_LINES: each says itself it is one
    assert all(standing(line) == 2 for line in bullets)
    assert decisions("- Keeping an eye on the build output while the tests run.") == []


@pytest.mark.parametrize(
    "line",
    [
        "Cloud Run IAM Conditions support attributes like `request.host` and `request.path`, "
        "not body-level token request authorization.",
        "The script itself starts, but the `oxfmt` shim expects `node` to be discoverable by name.",
    ],
)
def test_a_finding_set_against_what_it_is_not_is_a_decision(line: str) -> None:
    assert decisions(line) == [line]
    assert standing(line) == 1


def test_the_agents_own_caution_is_no_finding() -> None:
    assert decisions("I can use `sed` with the line numbers here, but I must be careful.") == []


def test_a_sentence_that_refers_back_is_kept_with_the_one_it_refers_to() -> None:
    said = (
        "[CONTEXT.md](/Users/cysp/src/cyspbot/CONTEXT.md:18) says cyspbot does not require "
        "issuer-specific claims unless policy names them."
    )
    finding = "That is no longer true: the Google adapter requires `sub` and `azp`."
    filler = "The section after it lists the provider bindings the adapters check today."
    assert decisions(f"{filler} {said} {finding}") == [f"{said} {finding}"]
    long_said = said.replace("issuer-specific", "issuer-specific " * 12)
    assert decisions(f"{long_said} {finding}") == [finding]  # too long together: alone


def assert_goes_first(messages: list[Message], newer: str, older: str) -> None:
    """Shrinking the budget, the decision ``newer`` leaves the summary while ``older`` (said
    before it, but of a higher standing) is still there."""
    full = StructuredSummarizer().summarize(messages).text
    for budget in range(COUNTER.count_text(full), 0, -5):
        text = StructuredSummarizer(budget_tokens=budget).summarize(messages).text
        if f"{DECISION_PREFIX}{newer}" not in text:  # the newer line, yet it went first
            assert f"{DECISION_PREFIX}{older}" in text
            return
    pytest.fail(f"no budget left {newer!r} out")
