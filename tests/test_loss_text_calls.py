"""A Cursor turn larger than the window, as the SpecStory extension exports it (one assistant
text, its terminal steps between ``---`` lines), is cut to fit; the loss report names the cut
text and the failure it held, and the refs of each get the whole turn back through ``recall``.

The failure is read from the turn's text as a call and its answer (``summarizers/textcalls``),
the answer in the message after it: the report's refs are those of the message that holds the
failure's line, not of that next message. The session is invented.
"""

from __future__ import annotations

from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.recall import recall
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.structured_policy import StructuredPolicy
from contextwarden.tokens.heuristic import HeuristicCounter

WINDOW = 40_000
COUNTER = HeuristicCounter()
FAILURE = "FAILED tests/test_kms.py::test_deny - KeyError: None"


def step(command: str, output: str) -> str:
    """A terminal step as the extension writes it: the command's fence, then its output's."""
    return f"```bash\n{command}\n```\n\n```\n{output}\n```"


def cut_turn() -> tuple[ConversationHistory, str]:
    passed = "\n".join(f"tests/test_kms.py::test_case_{n} PASSED" for n in range(3_000))
    turn = "\n\n---\n\n".join(
        [
            "Let me run the tests.",
            step("pytest tests/test_kms.py", passed),
            step("pytest tests/test_kms.py -k deny", f"E   KeyError: None\n{FAILURE}"),
            step("pytest tests/test_kms.py", passed),
            "Done.",
        ]
    )
    assert COUNTER.count_text(turn) > WINDOW
    history = ConversationHistory(counter=COUNTER)
    history.add(Message.user("Make the mock respect key policies."))
    history.add(Message.assistant(turn))
    history.add(Message.user("go on"))
    return history, turn


def test_the_loss_report_names_the_cut_turn_and_its_failure_and_recall_returns_them() -> None:
    history, turn = cut_turn()
    summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), COUNTER)
    report = ContextManager(ContextPolicy(context_window=WINDOW), summarizer).prepare(history)
    assert FAILURE not in "\n".join(m.text for m in history.messages)  # the cut took it
    [text] = report.lost.of("text")
    [error] = report.lost.of("error")
    assert error.what == FAILURE
    assert error.refs == text.refs and error.index == text.index == 1
    first = recall(history, {"id": error.refs[0], "offset": turn.index(FAILURE)})
    assert not first.is_error and first.text.startswith(FAILURE)
