"""``contextwarden chat``'s session commands, in-process against a scripted model on 127.0.0.1
that speaks the streaming chat-completions API: ``--resume`` picks the session used last,
``/undo-compact`` brings back exactly the view before ``/compact``, ``/sessions`` shows when,
what and how much, piped slash commands are commands, and ``/cost`` says why it has no figure."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextwarden.agent.providers import make_provider
from contextwarden.agent.workspace import Workspace
from contextwarden.cli.chat_cmd import Chat, latest_session, piped
from contextwarden.cli.chat_ui import ConsoleUI
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.stores import SqliteStore
from tests.servers import Captured, FakeAPI, Reply, openai_completion, openai_stream, serving

OLD_ID = "chat-20250101-090000-aaaa"
"""Created long ago by its id; used last in the tests that say so."""
UNPRICED = "local-llama-3"


def answer(request: Captured) -> Reply:
    asked = request.body["messages"][-1]["content"]
    body = openai_completion(f"Noted: {asked} " + "and more detail " * 300, model=UNPRICED)
    return openai_stream(body)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with serving("/v1/chat/completions", answer) as server:
        yield server


@pytest.fixture
def chat(api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Chat]:
    monkeypatch.setenv("OPENAI_API_KEY", "scripted")
    store = SqliteStore(tmp_path / "chat.db")
    provider = make_provider("openai", UNPRICED, f"{api.url}/v1")
    manager = ContextManager(ContextPolicy(context_window=30_000, summary_keep_tokens=300))
    ui = ConsoleUI(lambda _: None, quiet=True)
    yield Chat(store, Workspace(tmp_path), manager, provider, ui)
    store.close()


def shown(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().out.split())


def test_resume_opens_the_session_used_last_not_the_one_clear_made(chat: Chat) -> None:
    chat.open("chat-20250101-080000-bbbb")
    chat.turn("the newer-created but older-used task")
    chat.open(OLD_ID)
    chat.turn("the task used last")
    chat.command("/clear")  # a new, empty session: created last, never used
    assert chat.session_id not in (OLD_ID, "chat-20250101-080000-bbbb")
    assert latest_session(chat.store) == OLD_ID
    assert latest_session(chat.store, other_than=OLD_ID) == "chat-20250101-080000-bbbb"


def test_undo_compact_restores_exactly_the_view_before_compact(
    chat: Chat, capsys: pytest.CaptureFixture[str]
) -> None:
    chat.open(OLD_ID)
    for n in range(8):
        chat.turn(f"step {n}: keep going")
    before, tokens = chat.history.messages, chat.history.estimate_tokens()
    chat.command("/compact")
    assert len(chat.history.messages) < len(before)
    capsys.readouterr()
    chat.command("/undo-compact")
    assert chat.history.messages == before
    said = shown(capsys)
    assert f"Restored the view before the last compaction: {len(before):,} messages, " in said
    assert f"{tokens:,} tokens" in said


def test_sessions_lists_date_first_request_and_size(
    chat: Chat, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextwarden.cli.common import console

    monkeypatch.setattr(console(), "width", 160)  # a wide terminal: nothing shortened
    chat.open(OLD_ID)
    chat.turn("rename the parser module")
    capsys.readouterr()
    chat.command("/sessions")
    said = shown(capsys)
    assert f"▶ {OLD_ID}" in said and "rename the parser module" in said
    row = said.split(OLD_ID, 1)[1]
    assert row.split()[0].count("-") == 2  # a date, YYYY-MM-DD, then the time
    assert f" {len(chat.history.messages)} " in row


def test_piped_slash_commands_are_commands_not_turns(
    chat: Chat, api: FakeAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    chat.open(OLD_ID)
    assert piped(chat, io.StringIO("/context\nwhat is in the repo?\n/exit\nnever sent\n")) == 0
    assert [m["content"] for m in api.requests[-1].body["messages"] if m["role"] == "user"] == [
        "what is in the repo?"
    ]
    assert len(api.requests) == 1
    assert "free space" in shown(capsys)


def test_cost_with_an_unknown_model_says_why_there_is_no_figure(
    chat: Chat, capsys: pytest.CaptureFixture[str]
) -> None:
    chat.open(OLD_ID)
    chat.turn("hello")
    capsys.readouterr()
    chat.command("/cost")
    assert f"no cost: no price for {UNPRICED} in the" in shown(capsys)


def test_a_resumed_session_of_a_claude_model_is_counted_calibrated(
    api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's model reaches the history it resumes: a Claude model's session (here through
    an OpenAI-compatible gateway) is counted with the family's calibration, not the heuristic."""
    monkeypatch.setenv("OPENAI_API_KEY", "scripted")
    store = SqliteStore(tmp_path / "claude.db")
    ConversationHistory.open(store, OLD_ID).add_user_message("some words to count " * 200)
    counts = {}
    for model in (UNPRICED, "claude-sonnet-4-5"):
        provider = make_provider("openai", model, f"{api.url}/v1")
        manager = ContextManager(ContextPolicy(context_window=30_000))
        chat = Chat(store, Workspace(tmp_path), manager, provider, ConsoleUI(lambda _: None))
        chat.open(OLD_ID)
        counts[model] = (chat.history.estimate_tokens(), chat.history.counted_tokens())
    store.close()
    plain, claude = counts[UNPRICED], counts["claude-sonnet-4-5"]
    assert plain[0] == plain[1]
    assert claude[0] > claude[1] * 1.1
