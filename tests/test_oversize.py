"""One message larger than the window (``compaction.cap.Oversize``): it is cut, not the summary.

The paste is a CI log written for these tests in the wording of the tools that print it: meson's
``Installing <file> to <dir>`` lines, a clang-tidy diagnostic (``file:line:col: error: message
[check]``, as clang-tidy's documentation shows it), ninja's ``FAILED:`` and ``ninja: build
stopped: subcommand failed.``, and Jenkins' ``Finished: FAILURE``. The push failure is git's own
wording for an HTTPS remote that refuses the user (``remote: Permission to … denied to …`` and
``The requested URL returned error: 403``).
"""

from __future__ import annotations

import re

from contextwarden.compaction.apply import AddedResults
from contextwarden.compaction.base import CompactionContext
from contextwarden.compaction.cap import Oversize
from contextwarden.compaction.cuts import SUMMARY_KEY
from contextwarden.compaction.summarize import as_added
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.structured_policy import StructuredPolicy
from contextwarden.tokens.heuristic import HeuristicCounter

WINDOW = 40_000
COUNTER = HeuristicCounter()
PUSH_ERROR = "remote: Permission to acme/widget.git denied to jdoe."
HTTP_403 = (
    "fatal: unable to access 'https://github.com/acme/widget.git/': "
    "The requested URL returned error: 403"
)
QUESTION = "why did it fail now?"
REHYDRATE = re.compile(r"history\.rehydrate\('([^']+)'\)")


def ci_log(lines: int) -> str:
    """A Jenkins console log of a meson install and a clang-tidy failure, ``lines`` lines long."""
    installs = [
        f"Installing /var/jenkins/workspace/widget/schema/dmtf/Schema{n}_v1.xml to "
        "/usr/local/share/www/redfish/v1/schema"
        for n in range(lines)
    ]
    failure = [
        "../src/metadata.hpp:156:5: error: do not use 'else' after 'return' "
        "[readability-else-after-return,-warnings-as-errors]",
        "FAILED: meson-internal__clang-tidy-fix",
        "ninja: build stopped: subcommand failed.",
        "Build step 'Execute shell' marked build as failure",
        "Finished: FAILURE",
    ]
    return "\n".join(["Started by Gerrit change 89173", *installs, *failure, "", QUESTION])


def manager() -> ContextManager:
    summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), COUNTER)
    return ContextManager(ContextPolicy(context_window=WINDOW), summarizer)


def session_before_the_paste() -> ConversationHistory:
    """A first failure, its root cause, then a push refused by the remote, each talked over at
    length, so that the paste arrives in a context already near the autocompact threshold."""
    history = ConversationHistory(counter=COUNTER)
    history.add(Message.user("Jenkins failed on my change; the log is below. Why?\n" + ci_log(40)))
    history.add(
        Message.assistant(
            "The root cause is the commit_gitlint check: the author is a user id, not a legal name."
        )
    )
    history.add(Message.user("I pushed again and got this:\n" + PUSH_ERROR + "\n" + HTTP_403))
    history.add(
        Message.assistant("The remote points at GitHub instead of Gerrit; push to Gerrit instead.")
    )
    for n in range(24):
        history.add(Message.user(f"Step {n}: what does this part of the log mean?\n" + ci_log(30)))
        history.add(Message.assistant(f"Step {n}: these lines install the schema files. " * 8))
    return history


def test_a_paste_larger_than_the_window_is_cut_and_the_summary_stays() -> None:
    history = session_before_the_paste()
    paste = ci_log(4_000)
    assert COUNTER.count_text(paste) > WINDOW
    history.add(Message.user(paste))
    ladder = manager()
    report = ladder.prepare(history)

    assert report.applied[0] == "oversize" and "cap" not in report.applied
    assert history.estimate_tokens() <= ladder.policy.effective_window
    view = history.messages
    assert view[0].meta.extra.get(SUMMARY_KEY)  # the earlier turns live on in a summary...
    early = "\n".join(m.text for m in view[:-1])
    assert PUSH_ERROR in early and "returned error: 403" in early  # ...with their facts whole
    last = view[-1].text
    assert last.startswith("Started by Gerrit change 89173") and last.endswith(QUESTION)
    named = REHYDRATE.search(last)
    assert named is not None and history.rehydrate(named.group(1)).text == paste
    cut = COUNTER.count_text(last)
    assert cut <= ladder.policy.message_result_tokens + 100  # the note's own few tokens


def test_the_cut_is_made_once_so_the_prefix_stays_the_same() -> None:
    history = session_before_the_paste()
    history.add(Message.user(ci_log(4_000)))
    ladder = manager()
    ladder.prepare(history)
    before = history.messages
    history.add(Message.assistant("The clang-tidy check readability-else-after-return failed."))
    history.add(Message.user("How do I fix it?"))
    report = ladder.prepare(history)
    assert report.applied == ()
    assert history.messages[: len(before)] == before


def test_a_summary_reads_the_cut_paste_whole() -> None:
    history = session_before_the_paste()
    paste = ci_log(4_000)
    history.add(Message.user(paste))
    manager().prepare(history)
    view = history.messages
    assert view[-1].text != paste
    restored = as_added(view, AddedResults(history))
    assert restored[-1].text == paste
    assert restored[0] == view[0]  # a summary that quotes no cut text of its own is left alone


def test_a_tool_result_larger_than_the_window_is_cut_and_earlier_turns_are_not() -> None:
    output = ci_log(4_000)
    messages = (
        Message.user("Run the build and tell me why it fails."),
        Message.assistant("I will run it."),
        Message.user("Please do."),
        Message("assistant", (ToolUseBlock("toolu_1", "Bash", {"command": "ninja -C build"}),)),
        Message("user", (ToolResultBlock("toolu_1", output),)),
    )
    policy = ContextPolicy(context_window=WINDOW)
    context = CompactionContext(COUNTER, policy=policy)
    result = Oversize()(messages, context)
    assert result.applied
    assert result.messages[:4] == messages[:4]
    text = result.messages[4].content[0]
    assert isinstance(text, ToolResultBlock) and "history.rehydrate('toolu_1')" in text.text
    assert text.text.endswith(QUESTION)
    assert result.report.tokens_after <= policy.effective_window


def test_nothing_is_cut_when_no_text_is_that_large() -> None:
    messages = tuple(
        Message.user(ci_log(150)) if n % 2 == 0 else Message.assistant(ci_log(150))
        for n in range(11)
    )
    context = CompactionContext(COUNTER, policy=ContextPolicy(context_window=WINDOW))
    result = Oversize()(messages, context)
    assert not result.applied and result.messages == messages


def test_a_large_paste_that_fits_beside_a_summary_is_left_whole() -> None:
    """Larger than one message's share, but the summary of what came before makes room for it:
    what the person just typed stays whole."""
    history = session_before_the_paste()
    paste = ci_log(450)
    share = ContextPolicy(context_window=WINDOW).message_result_tokens
    assert share < COUNTER.count_text(paste) < WINDOW // 2
    history.add(Message.user(paste))
    ladder = manager()
    report = ladder.prepare(history)
    assert "oversize" not in report.applied and "cap" not in report.applied
    assert history.messages[-1].text == paste
    assert history.estimate_tokens() <= ladder.policy.effective_window
