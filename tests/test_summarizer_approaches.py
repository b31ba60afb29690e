"""An approach the assistant states as its next step (the change, what it changes, how or what
for) is a decision; a step it only narrates ("Let me update the README:", "Let me fix this:")
is not. A purpose said in Chinese (以便, 以免) is a reason."""

from __future__ import annotations

import pytest

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer
from contextwarden.summarizers.approaches import states_approach
from contextwarden.summarizers.decisions import approach_only, decisions, standing
from contextwarden.summarizers.facts import extract_facts


@pytest.mark.parametrize(
    "line",
    [
        # how: by doing what, into what, with what
        "Let me fix this by making the connection pool a module-level singleton:",
        "I'll refactor the retry logic by extracting it into a reusable `Backoff` class.",
        "We'll patch the loader by skipping every entry without an `mtime` field.",
        "Now I'll replace the polling loop with an inotify watcher on `config.yaml`.",
        # what for: the behaviour the change gives
        "Let's update the `parse_header` function to accept lowercase field names:",
        "Now, let's change the build script to use the release profile for benchmarks.",
        # what kind of thing it builds, or a plan already agreed
        "Now I'll build a lock-free `RingBuffer` for the audio callback thread.",
        "Let's create a dedicated settings module for the CLI's defaults.",
        "Next, let's add the migration for the `orders` table as discussed above.",
        # a plan's numbered step; a curly apostrophe
        "2. Then let's split the exporter module to share one writer between CSV and JSON:",
        "I\u2019m going to rework the `Scheduler` to use a binary heap for its timers.",
    ],
)
def test_a_stated_approach_is_a_decision(line: str) -> None:
    assert states_approach(line)
    assert decisions(f"Reading the file now.\n{line}") == [line]
    assert approach_only(line)


@pytest.mark.parametrize(
    "line",
    [
        # no manner: what the step touches, not how
        "Let me update the README with the new flag:",
        "Now let's fix the failing tests in `test_api.py`:",
        "Let me fix this:",
        # a step that reads, runs or checks, whatever it names
        "Let me read `src/app.py` to see how the router is built.",
        "Now let's run the tests to verify the fix works end to end.",
        "I'll create a quick script to check whether the port is open.",
        "Let me add a README to the `docs/` folder to document the new layout:",
        # how, but of nothing the program has
        "Let's make it more robust by trying again later.",
        # a question wonders, whatever it states
        "Let's rework the `Cache` class to evict by size instead?",
    ],
)
def test_a_narrated_step_is_no_decision(line: str) -> None:
    assert decisions(f"Reading the file now.\n{line}") == []


def test_a_purpose_said_in_chinese_is_a_reason() -> None:
    line = "我会把 `cache` 设为模块级变量\uff0c以便测试可以替换它。"
    assert decisions(f"Reading the file now.\n{line}") == [line]
    assert standing(line) == 2


def test_a_narrated_step_keeps_only_its_approach() -> None:
    line = "I'll rewrite the loader to use `mmap` for large inputs. Let me open the file:"
    assert decisions(f"Reading the file now.\n{line}") == [
        "I'll rewrite the loader to use `mmap` for large inputs."
    ]


def test_a_stated_approach_goes_before_the_answers_and_the_reasons() -> None:
    approach = "Let's fix the loader by reading `config.toml` lazily on first access."
    reason = "The loader reads `config.toml` at import time because `main` imports it."
    messages = [
        Message.user("Why does the CLI start slowly?"),
        Message.assistant(reason),
        Message.user("Fix it then."),
        Message(
            "assistant",
            (TextBlock(approach), ToolUseBlock("t1", "Edit", {"file_path": "loader.py"})),
        ),
        Message("user", (ToolResultBlock("t1", "ok"),)),
        Message.assistant("The loader now reads its config on first access."),
        Message.user("Thanks."),
        Message.assistant("You're welcome."),
    ]
    sections, _ = StructuredSummarizer().layout(extract_facts(messages))
    ranked = [item for items in sections.values() for item in items if item.drop_rank]

    def ranks(kind: str, text: str = "") -> list[tuple[int, int]]:
        return [i.drop_rank for i in ranked if i.kind == kind and text in i.text and i.drop_rank]

    stated, reasoned = ranks("decisions", approach), ranks("decisions", reason)
    assert stated and reasoned and ranks("answers")
    assert max(stated) < min(ranks("answers")) and max(stated) < min(reasoned)


@pytest.mark.parametrize(
    "line",
    [
        # a change said as an attempt, the code span holding a path's dots
        'I will try to modify `src/_pytest/python.py` to remove `+ ["__init__.py"]`.',
        # what the change takes out or puts in
        "Let me update the `collect` function to exclude vendored directories:",
    ],
)
def test_an_attempted_change_and_what_it_takes_out_state_an_approach(line: str) -> None:
    assert states_approach(line)
    assert decisions(f"Reading the file now.\n{line}") == [line]
