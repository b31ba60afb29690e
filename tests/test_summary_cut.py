"""A summary the cap cut to fit (a system prompt that fills most of the window), or an assistant
turn larger than the window, reaches the next summary whole: it is read back from the log, not
lost with the cut.

An agent with a large system prompt (Copilot CLI's, Claude Code's with MCP servers) leaves a few
thousand tokens for the conversation at a small window; a long message the person types then
does not fit beside the summary, and the cap cuts the summary (it cuts what the person typed
last). The session is invented: a deploy config read, pod logs, and notes typed at length.
"""

from __future__ import annotations

from contextwarden.compaction.apply import AddedResults
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
SYSTEM = "You are a coding agent. Follow the repository's conventions.\n" * 2_300
"""About 33,000 tokens: the room a Copilot CLI session leaves at a 40,000-token window."""
PATH = "/srv/widget/config/deploy.yaml"


def ladder() -> ContextManager:
    summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), COUNTER)
    return ContextManager(ContextPolicy(context_window=WINDOW), summarizer)


def logs(history: ConversationHistory, manager: ContextManager, pods: range, lines: int) -> None:
    """One ``kubectl logs`` call per pod, each answered, with a pass of the ladder after it."""
    for n in pods:
        command = {"command": f"kubectl logs pod-{n}"}
        history.add(Message("assistant", (ToolUseBlock(f"toolu_{n}", "Bash", command),)))
        body = "\n".join(f"pod-{n} line {i}: GET /healthz 200 OK in 3 ms" for i in range(lines))
        history.add(Message("user", (ToolResultBlock(f"toolu_{n}", body),)))
        manager.prepare(history)


def session_with_a_cut_summary() -> tuple[ConversationHistory, ContextManager]:
    """A file read early, summarized; then notes too long to fit beside that summary."""
    history, manager = ConversationHistory(system=SYSTEM, counter=COUNTER), ladder()
    history.add(Message.user("Fix the deploy config."))
    history.add(Message("assistant", (ToolUseBlock("toolu_1", "Read", {"file_path": PATH}),)))
    history.add(Message("user", (ToolResultBlock("toolu_1", "replicas: 3\nimage: widget:1.2\n"),)))
    logs(history, manager, range(2, 6), 40)
    assert PATH in history.messages[0].text  # carried by a summary
    history.add(Message.assistant("The config reads fine."))
    note = "the canary stays at one replica until the error rate is flat"
    notes = "\n".join(f"note {i}: {note}" for i in range(150))
    history.add(Message.user("Here are my notes on the rollout:\n" + notes))
    report = manager.prepare(history)
    assert report.applied[-1] == "cap" and PATH not in history.messages[0].text
    return history, manager


def test_the_next_summary_carries_what_the_cut_summary_held() -> None:
    history, manager = session_with_a_cut_summary()
    logs(history, manager, range(6, 12), 60)
    lead = history.messages[0]
    assert lead.meta.extra.get(SUMMARY_KEY) and PATH in lead.text


def test_a_cut_summary_is_read_back_whole_from_the_log() -> None:
    history, _ = session_with_a_cut_summary()
    restored = as_added(history.messages, AddedResults(history))
    assert PATH in restored[0].text


def test_an_assistant_turn_larger_than_the_window_is_read_back_whole() -> None:
    """A SpecStory export writes a whole agent turn, its tool calls and their output included, as
    one assistant text; one larger than the window is cut, and a summary reads it whole."""
    history, manager = ConversationHistory(counter=COUNTER), ladder()
    history.add(Message.user("The server list is empty; find out why."))
    calls = "\n".join(f"Read file: src/vpn/server_{n}.py\n---\n" for n in range(6_000))
    decision = "I see the issue - we're still using the v1 API endpoint for recommendations."
    turn = f"Let me check the server code.\n{calls}\n{decision}\n{calls}\nDone."
    assert COUNTER.count_text(turn) > WINDOW
    history.add(Message.assistant(turn))
    history.add(Message.user("go on"))
    manager.prepare(history)
    assert decision not in "\n".join(m.text for m in history.messages)  # the cut took it
    restored = as_added(history.messages, AddedResults(history))
    assert any(m.text == turn for m in restored)
