"""An agent that rewrites its fixed lead-in stays on one session: aider resends its example
exchange and READ ONLY files ahead of its history, the files message growing as the user adds
files, and rewrites its last user message with a reminder it removes after the turn. Two
genuinely different conversations still get different sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextwarden.compaction.cache import CachePolicy
from contextwarden.log import CompactionBoundary
from contextwarden.manager import ContextManager
from contextwarden.model import TextBlock
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis_openai import CHAT
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.values import Managed
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter

SYSTEM = {"role": "system", "content": "Act as an expert software developer."}
REMINDER = "\n\nAlways reply in SEARCH/REPLACE blocks."
ANSWER = "Here is the change, explained step by step. " * 60
FILE = "x = 1  # line\n" * 40


def lead(
    files: int, ack: str = "Ok, I will use these files as references.", lines: int = 40
) -> list[Any]:
    """aider's lead-in: its example exchange, the code base switch, and the READ ONLY files."""
    body = FILE[: len(FILE) // 40 * lines]
    read_only = "\n".join(f"src/m{i}.py\n```\n{body}```" for i in range(files))
    return [
        {"role": "user", "content": "Change the greeting to be more casual"},
        {"role": "assistant", "content": "Ok, I will change the greeting."},
        {"role": "user", "content": "I switched to a new code base."},
        {"role": "assistant", "content": "Ok."},
        {"role": "user", "content": f"Here are some READ ONLY files:\n{read_only}"},
        {"role": "assistant", "content": ack},
    ]


def request(
    files: int, history: list[Any], ask: str, ack: str | None = None, lines: int = 40
) -> Any:
    opening = lead(files, lines=lines) if ack is None else lead(files, ack, lines)
    current = {"role": "user", "content": ask + REMINDER}
    return CHAT.conversation(
        {"model": "m", "messages": [SYSTEM, *opening, *history, current]}, None
    )


def run(sessions: Sessions, turns: int, lines: int = 40) -> list[Managed]:
    """``turns`` aider turns, each adding a read-only file; the reminder goes after each."""
    history: list[Any] = []
    out = []
    for n in range(turns):
        ask = f"Step {n}: refactor module {n}."
        out.append(sessions.manage(request(n + 1, history, ask, lines=lines)))
        history += [{"role": "user", "content": ask}, {"role": "assistant", "content": ANSWER}]
    return out


def make(tmp_path: Path, window: int) -> Sessions:
    manager = ContextManager(ContextPolicy(context_window=window), cache=CachePolicy())
    return Sessions(SqliteStore(tmp_path / "s.sqlite3"), manager, HeuristicCounter())


def text(managed: Managed) -> str:
    return "".join(b.text for m in managed.messages for b in m.content if isinstance(b, TextBlock))


def test_a_rewritten_lead_in_is_an_edit_of_the_same_session(tmp_path: Path) -> None:
    sessions = make(tmp_path, 200_000)
    managed = run(sessions, 6)
    assert len({m.session_id for m in managed}) == 1
    assert sessions.store.list_sessions() == [managed[0].session_id]
    last = managed[-1].messages
    assert "src/m5.py" in "".join(b.text for b in last[4].content if isinstance(b, TextBlock))
    assert len(last) == 6 + 2 * 5 + 1  # the lead-in, five turns, this turn: nothing doubled
    assert text(managed[-1]).count(REMINDER.strip()) == 1  # the old reminders are gone


def test_a_turn_resent_with_a_new_lead_in_gets_the_new_one(tmp_path: Path) -> None:
    sessions = make(tmp_path, 200_000)
    history = [{"role": "user", "content": "Step 0."}, {"role": "assistant", "content": ANSWER}]
    sent = sessions.manage(request(1, history, "Step 1."))
    again = sessions.manage(request(2, history, "Step 1."))  # a file added, the same turn
    assert again.session_id == sent.session_id
    assert len(again.messages) == len(sent.messages)
    assert "src/m1.py" in text(again) and "src/m1.py" not in text(sent)


def summaries(sessions: Sessions, managed: list[Managed]) -> int:
    assert len({m.session_id for m in managed}) == 1
    assert all(m.tokens <= sessions.manager.policy.effective_window for m in managed)
    log = sessions.store.log(managed[0].session_id)
    return sum(isinstance(e, CompactionBoundary) and e.summary is not None for e in log)


def test_a_small_lead_in_is_put_back_after_a_summary_took_it(tmp_path: Path) -> None:
    sessions = make(tmp_path, 30_000)
    turns = 60
    managed = run(sessions, turns, lines=4)
    assert 1 <= summaries(sessions, managed) <= turns // 5
    assert f"src/m{turns - 1}.py" in text(managed[-1])  # the files added after the summary


def test_a_lead_in_outgrowing_the_room_stays_summarized_and_summaries_stay_rare(
    tmp_path: Path,
) -> None:
    sessions = make(tmp_path, 30_000)
    turns = 45  # the READ ONLY files grow to ~9K tokens, a third of the window
    managed = run(sessions, turns)
    assert 1 <= summaries(sessions, managed) <= turns // 5


def test_different_conversations_with_the_same_opening_get_their_own_sessions(
    tmp_path: Path,
) -> None:
    sessions = make(tmp_path, 200_000)
    first = run(sessions, 2)[-1]
    history = [{"role": "user", "content": "Step 0: refactor module 0."}]
    history.append({"role": "assistant", "content": ANSWER})
    # another files message answered differently: not the agent's canned lead-in
    other = sessions.manage(request(3, history, "Step 1.", ack="Sure, noted."))
    # the same lead-in rewrite, but a different conversation after it
    elsewhere = [
        {"role": "user", "content": "Write docs."},
        {"role": "assistant", "content": "Here are the docs."},
    ]
    third = sessions.manage(request(3, elsewhere, "Step 1: refactor module 1."))
    assert len({first.session_id, other.session_id, third.session_id}) == 3
