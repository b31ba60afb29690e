"""A session large in one dimension (an output of many lines, many calls, many files, many
decisions) is summarized, and its loss report made, in time linear in its size: no step reads
the whole of one thing again for each item of another."""

from __future__ import annotations

import itertools

import pytest

from contextwarden.compaction.loss import losses
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.carry import DECISION_PREFIX
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.findings import chosen, findings
from contextwarden.summarizers.restated import repeated_in, restated
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.structured_builder import CARRIED_RANK, REPEATED_RANK
from contextwarden.tokens.heuristic import HeuristicCounter

MANY_LINES = 300_000


@pytest.mark.timeout(60)
def test_an_output_of_many_failure_lines_is_ranked_in_linear_time() -> None:
    """Each failure line looked ahead at a copy of every line after it (the next non-blank
    one, a matcher's values, a rustc label): minutes for a long failed build's output."""
    lines = ["error: x"] * MANY_LINES
    output = "\n".join(["Exit code 1", *lines, "error: linker failed for target app"])
    messages = [
        Message.user("Build it."),
        Message.assistant([ToolUseBlock("t1", "Bash", {"command": "make app"})]),
        Message.user([ToolResultBlock("t1", output, is_error=True)]),
        Message.user("Try again."),
    ]
    summary = StructuredSummarizer().summarize(messages).text
    assert "error: linker failed for target app" in summary


MANY_CALLS = 80_000


@pytest.mark.timeout(60)
def test_many_failures_of_one_command_are_judged_in_linear_time() -> None:
    """Whether a failure was fixed was asked of every attempt after it: minutes for a session
    that ran one failing command tens of thousands of times. The last run worked: every
    failure before it is fixed."""
    messages = [Message.user("Test it.")]
    for i in range(MANY_CALLS):
        failed = i < MANY_CALLS - 1
        output = "Exit code 1\nError: the tests failed" if failed else "All tests passed"
        messages += [
            Message.assistant([ToolUseBlock(f"t{i}", "Bash", {"command": "npm test"})]),
            Message.user([ToolResultBlock(f"t{i}", output, is_error=failed)]),
        ]
    facts = extract_facts(messages)
    assert facts.errors and all(error.fixed for error in facts.errors)


MANY_FILES = 20_000


@pytest.mark.timeout(60)
def test_many_files_are_told_apart_in_linear_time() -> None:
    """Which spellings name one file was asked of every pair of paths: minutes for a session
    that read twenty thousand files. The relative spelling of one of them is still folded
    into its full path."""
    paths = [f"/repo/src/pkg{i % 50}/module_{i}.py" for i in range(MANY_FILES)]
    messages = [Message.user("Read them all.")]
    for i, path in enumerate([*paths, "src/pkg7/module_7.py"]):
        messages += [
            Message.assistant([ToolUseBlock(f"r{i}", "Read", {"file_path": path})]),
            Message.user([ToolResultBlock(f"r{i}", "     1\timport os\n")]),
        ]
    files = extract_facts(messages).files
    assert [f.path for f in files] == paths
    assert files[7].operations == ("read", "read")


MANY_POLLS = 15_000


@pytest.mark.timeout(60)
def test_many_polls_of_one_process_are_read_in_linear_time() -> None:
    """Each ``write_stdin`` poll looked for the command it polls through every answer before
    it: minutes for a session that polled one long build thousands of times. The build's
    failure, in the last poll's answer, is still the build's."""
    start = ToolUseBlock("c0", "exec_command", {"cmd": "npm run build"})
    messages = [
        Message.user("Build it."),
        Message.assistant([start]),
        Message.user([ToolResultBlock("c0", "Process running with session ID 7\nbuilding…")]),
    ]
    for i in range(MANY_POLLS):
        last = i == MANY_POLLS - 1
        output = "Process exited with code 1\nerror: build failed" if last else f"step {i}"
        messages += [
            Message.assistant([ToolUseBlock(f"p{i}", "write_stdin", {"session_id": 7})]),
            Message.user([ToolResultBlock(f"p{i}", output)]),
        ]
    errors = extract_facts(messages).errors
    assert [(e.tool, e.target, e.excerpt) for e in errors] == [
        ("exec_command", "npm run build", "error: build failed")
    ]


MANY_REQUESTS = 25_000


@pytest.mark.timeout(60)
def test_a_loss_report_of_many_facts_is_made_in_linear_time() -> None:
    """Each fact (here each request the person typed) was looked for in the whole text of the
    view before, then of the view after: minutes for a long session summarized at once. Every
    request but the last, which the view after keeps, is reported lost."""
    note = "The rest of this note repeats the plan in words. " * 20
    messages = []
    for i in range(MANY_REQUESTS):
        messages += [
            Message.user(f"Request {i}: rename the helper in module_{i}. {note}"),
            Message.assistant(f"Renamed it ({i})."),
        ]
    after = [Message.user("<summary>Earlier work.</summary>"), *messages[-2:]]
    lost = losses(messages, after, HeuristicCounter()).of("user_text")
    assert [item.index for item in lost] == list(range(0, 2 * MANY_REQUESTS - 2, 2))


MANY_SENTENCES = 50_000


@pytest.mark.timeout(60)
def test_a_text_of_many_sentences_is_read_in_linear_time() -> None:
    """Each sentence of a text was looked for in every decision read from it, to keep it
    apart from its neighbours: minutes for one text of tens of thousands of sentences. A
    sentence that is a decision still stands alone among the findings."""
    body = " ".join(
        f"The bug in module_{i}.py is caused by the stale cache entry {i}."
        if i % 2 == 0
        else f"Module number {i} reads the value {i * 3} from table_{i % 17} and writes it back."
        for i in range(MANY_SENTENCES)
    )
    messages = [Message.user("Explain the build."), Message.assistant(body)]
    found = [unit for _, _, unit in extract_facts(messages).findings]
    assert "The bug in module_4.py is caused by the stale cache entry 4." in found


MANY_DECISIONS = 10_000


@pytest.mark.timeout(60)
def test_many_decisions_among_many_requests_are_ranked_in_linear_time() -> None:
    """Each decision was looked for in every message the person typed (one a request quotes
    back goes first): minutes for a session of thousands of both. A decision no request quotes
    is still listed, and one a request quotes goes before it."""
    note = "The rest of this request repeats the plan in other words. " * 10
    messages = []
    for i in range(MANY_DECISIONS):
        quoted = f"We should keep the lock in worker_{i - 1} to avoid a race on its queue."
        messages += [
            Message.user(f"Request {i}: you said {quoted} {note}"),
            Message.assistant(
                f"I chose to rebuild `cache_{i}` because the old index {i * 7} is wrong.\n"
                f"We should keep the lock in worker_{i} to avoid a race on its queue."
            ),
        ]
    sections, _ = StructuredSummarizer().layout(extract_facts(messages))
    ranks = {item.text: item.drop_rank for item in sections[5]}
    said = f"{DECISION_PREFIX}We should keep the lock in worker_{{}} to avoid a race on its queue."
    assert ranks[said.format(0)] == (REPEATED_RANK, 1)
    last = MANY_DECISIONS - 2  # the last one listed: section 8 quotes the last message
    chose = f"{DECISION_PREFIX}I chose to rebuild `cache_{last}` because the old index"
    assert ranks[f"{chose} {last * 7} is wrong."][0] == CARRIED_RANK


MANY_FINDINGS = 60_000


@pytest.mark.timeout(60)
def test_many_findings_are_chosen_in_linear_time() -> None:
    """Each finding was looked for in the whole of the rest of the summary, and compared with
    every later finding sharing one of its common words: minutes for a session of tens of
    thousands of findings. Each finding a later one restates still goes, and so does each
    the rest of the summary holds."""
    units = [
        f"The handler in module_{i}.py reads the table and writes 4 rows back to the store."
        for i in range(MANY_FINDINGS)
    ]
    held = "\n".join(f"- said: {unit}" for unit in units[1::2])
    candidates = [(i, 0, unit) for i, unit in enumerate(units)]
    found = chosen(candidates, held, 1_000_000, HeuristicCounter())
    assert [unit for _, _, unit in found] == units[-2:-1]


ONE_WORD_SENTENCES = 40_000


@pytest.mark.timeout(30)
def test_sentences_of_one_word_are_kept_apart_in_linear_time() -> None:
    """A sentence with no inner word (one word and its full stop) was looked for in each
    decision of its text, a word index being of no help: minutes for a text of tens of
    thousands of such sentences and as many decisions. The one a decision says still stands
    alone; the others are joined in runs."""
    said = [f"Reconfigured_the_module_{i}_cache." for i in range(ONE_WORD_SENTENCES)]
    decided = [
        *(f"We should keep the lock in worker_{i} to avoid a race." for i in range(len(said))),
        said[5],
    ]
    found = findings(" ".join(said), decided)
    assert said[5] in found
    assert " ".join(said[:4]) in found


FEW_WORDS_PRIME = 13


@pytest.mark.timeout(30)
def test_lines_of_a_few_shared_words_are_restated_in_bounded_time() -> None:
    """Each line was compared with every later line sharing its rarest words: lines built of
    a few shared words, none restating another, were compared pairwise (minutes for tens of
    thousands). Here each line is a polynomial of degree under 4 over the integers modulo a
    prime, written as its values at 5 points: two lines share at most 3 of their 5 words, yet
    each word is in a prime's cube of lines. Only the first line, said again last, goes."""
    q = FEW_WORDS_PRIME
    units = [
        " ".join(f"p{x}v{(a + b * x + c * x * x + d * x**3) % q}" for x in range(5))
        for a, b, c, d in itertools.product(range(q), repeat=4)
    ]
    assert restated([*units, units[0]]) == {0}


FEW_WORDS_UNITS = 40_000


@pytest.mark.timeout(30)
def test_units_of_a_few_shared_words_are_looked_up_in_bounded_time() -> None:
    """Whether one line holds every word of a unit intersected the lines of each of its words,
    the rarest first: with a few shared words, every word is in most lines, and each unit read
    them all (minutes for tens of thousands). Lines of 12 of 14 words never hold a unit of 13
    of them, yet any k of its words are in most lines; the unit made of one line's words is
    repeated."""
    vocabulary = [f"w{k}" for k in range(14)]
    shapes = [
        " ".join(w for k, w in enumerate(vocabulary) if k not in left_out)
        for left_out in itertools.combinations(range(14), 2)
    ]
    lines = shapes * (FEW_WORDS_UNITS // len(shapes))
    units = [
        " ".join(w for k, w in enumerate(vocabulary) if k != i % 14) for i in range(FEW_WORDS_UNITS)
    ]
    assert repeated_in([*units, lines[5]], lines) == {len(units)}


COMMON_WORD_FINDINGS = 30_000


@pytest.mark.timeout(30)
def test_findings_of_common_words_are_looked_for_in_bounded_time() -> None:
    """A finding was looked for in every line of the summary holding its rarest inner word:
    when all its inner words are common ones, every line, for each finding (minutes for tens
    of thousands of both). Here the summary's lines take every other word of 24 and each
    finding three consecutive ones; only the one the summary holds goes."""
    vocabulary = [f"w{k}" for k in range(24)]
    lines = [" ".join(vocabulary[(i + 2 * k) % 24] for k in range(12)) for i in range(24)]
    held = "\n".join(f"- {line}" for line in lines * (COMMON_WORD_FINDINGS // len(lines)))
    units = [
        f"{i}: {' '.join(vocabulary[(i + k) % 24] for k in range(3))}."
        for i in range(COMMON_WORD_FINDINGS)
    ]
    units[9] = f"- {lines[9]}"
    found = chosen([(i, 0, unit) for i, unit in enumerate(units)], held, 10**9, HeuristicCounter())
    assert len(found) == len(units) - 1
    assert units[9] not in {unit for _, _, unit in found}
