"""``contextwarden chat``: a terminal coding agent whose context never runs out.

The user types; the model reads, edits and runs things in the workspace through the agent's tools;
before every request the ContextManager prepares the context, and a compaction shows as a notice.
Sessions are written through to a store as they happen and can be resumed after a crash.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from contextwarden.agent.loop import Agent, Interrupted
from contextwarden.agent.providers import Provider, make_provider
from contextwarden.agent.tools import TOOL_DEFINITIONS, Tools
from contextwarden.agent.workspace import Workspace
from contextwarden.cli.chat_ui import ConsoleUI, context_table, cost_table, lost_table, show
from contextwarden.cli.common import console, existing_dir, positive_int
from contextwarden.cli.sessions import (
    LAST_ACTIVE_KEY,
    sessions_table,
    summaries,
)
from contextwarden.errors import ContextWardenError, StoreError
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.recall import RECALL_TOOL
from contextwarden.stores import store_from
from contextwarden.stores.base import SessionStore

__all__ = ["Chat", "register"]

DEFAULT_WINDOWS = {"anthropic": 200_000, "openai": 128_000}
SESSION_PREFIX = "chat-"
PROMPT = "> "
SYSTEM_PROMPT = (
    "You are a coding agent working in the directory {root}. Use the tools to read, search, "
    "edit and write files and to run shell commands there; paths are relative to it. Work step "
    "by step, check your changes, and answer briefly when done."
)
HELP = """Commands:
  /context              where the context's tokens go, free space and thresholds
  /compact [focus]      summarize the conversation now (optional instructions)
  /undo-compact         bring back the view before the last compaction
  /clear                start a new session (the old one stays in the store)
  /resume [id]          continue another session (default: the other one used last)
  /sessions             the stored sessions: when, first request, messages, tokens
  /cost                 tokens the model reported so far, and their cost with caching
  /help                 this list
  /exit                 leave (Ctrl-D too); Ctrl-C interrupts a reply or a tool"""


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "chat",
        help="a terminal coding agent that never runs out of context",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("--provider", choices=sorted(DEFAULT_WINDOWS), default="anthropic")
    parser.add_argument("--model", help="model name (default: a current model of the provider)")
    parser.add_argument("--base-url", help="API root, e.g. a local OpenAI-compatible server")
    parser.add_argument("--window", type=positive_int, help="context window in tokens")
    parser.add_argument(
        "--workspace",
        type=existing_dir,
        default=Path("."),
        help="directory the tools may touch (default: .)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--session", help="session id to start or continue")
    which.add_argument("--resume", action="store_true", help="continue the chat session used last")
    parser.add_argument(
        "--store",
        help="session store: a SQLite file or postgresql://… (default: the user's data dir)",
    )
    parser.add_argument(
        "--yes", action="store_true", help="run bash, edit_file and write_file without asking"
    )
    parser.add_argument(
        "-p", "--print", dest="task", help="run one task to completion, print the answer, exit"
    )
    parser.set_defaults(run=run)


class Chat:
    """The session the user talks to: store, history, manager and agent, switchable by id."""

    def __init__(
        self,
        store: SessionStore,
        workspace: Workspace,
        manager: ContextManager,
        provider: Provider,
        ui: ConsoleUI,
        *,
        yes: bool = False,
    ) -> None:
        self.store, self.workspace, self.manager = store, workspace, manager
        self.provider, self.ui, self.yes = provider, ui, yes
        self.session_id = ""
        self.agent: Agent | None = None
        self._before_compact: tuple[tuple[Message, ...], int] | None = None
        """The view and its token figure before the last /compact, for /undo-compact."""

    @property
    def history(self) -> ConversationHistory:
        assert self.agent is not None, "open a session first"
        return self.agent.history

    def open(self, session_id: str) -> None:
        history = ConversationHistory.open(
            self.store,
            session_id,
            system=SYSTEM_PROMPT.format(root=self.workspace.root),
            tools=(*TOOL_DEFINITIONS, RECALL_TOOL),
            mode="merge",  # a turn whose request failed is followed by the next one, merged
            model=self.provider.model,  # its counter, and a Claude model's calibration
        )
        tools = Tools(self.workspace)
        self.agent = Agent(
            history, self.manager, self.provider, tools, self.ui, auto_approve=self.yes
        )
        self.session_id = session_id

    def turn(self, text: str) -> str | None:
        """Run one user turn; the answer, or None when it was interrupted or failed."""
        assert self.agent is not None, "open a session first"
        self.history.set_metadata(LAST_ACTIVE_KEY, time.time())  # for --resume and /sessions
        try:
            return self.agent.run(text)
        except Interrupted:
            console().print("[yellow]Interrupted.[/] The conversation is kept; go on or /exit.")
        except self.provider.errors as exc:
            console().print(f"[red]The model request failed:[/] {exc}")
        except ContextWardenError as exc:
            console().print(f"[red]{type(exc).__name__}:[/] {exc}")
        return None

    def command(self, line: str) -> bool:
        """Run a slash command; False when the user wants to leave."""
        name, _, rest = line.strip().partition(" ")
        action = self._commands().get(name)
        if action is None:
            console().print(f"unknown command {name}; /help lists them")
            return True
        return action(rest.strip()) is not False

    def _commands(self) -> dict[str, Callable[[str], bool | None]]:
        return {
            "/help": lambda _: console().print(HELP, markup=False),
            "/exit": lambda _: False,
            "/quit": lambda _: False,
            "/context": self._context,
            "/cost": lambda _: show(cost_table(self.history, self.provider.model)),
            "/compact": self._compact,
            "/undo-compact": self._undo,
            "/clear": lambda _: self._switch(new_session_id()),
            "/resume": self._resume,
            "/sessions": self._sessions,
        }

    def _context(self, _: str) -> None:
        show(context_table(self.history, self.manager))
        lost = lost_table(self.history)
        if lost is not None:
            show(lost)

    def _compact(self, instructions: str) -> None:
        before = (self.history.messages, self.history.estimate_tokens())
        report = self.manager.compact(self.history, instructions or None)
        if report.compacted:
            self._before_compact = before
            self.ui.compaction(report)
        else:
            why = report.actions[-1].description if report.actions else report.skipped
            console().print(f"Nothing to compact: {why}")

    def _undo(self, _: str) -> None:
        try:
            self.store.undo_compaction(self.session_id)
        except StoreError as exc:
            console().print(f"Nothing undone: {exc}")
            return
        self.open(self.session_id)  # the history mirrors the store again
        tokens = self.history.estimate_tokens()
        saved, self._before_compact = self._before_compact, None
        if saved is not None and saved[0] == self.history.messages:
            # The same view as before /compact: the same figure, anchored on the model's usage
            # then (reopened, the history has no usage recorded since the boundary to anchor on).
            tokens = saved[1]
        console().print(
            f"Restored the view before the last compaction: {len(self.history):,} messages, "
            f"{tokens:,} tokens"
        )

    def _resume(self, wanted: str) -> None:
        target = wanted or latest_session(self.store, other_than=self.session_id)
        if not target or target not in self.store.list_sessions():
            console().print(f"No session {wanted!r} to resume; /sessions lists them")
            return
        self._switch(target)

    def _sessions(self, _: str) -> None:
        found = summaries(self.store, self.history.counter)
        show(sessions_table(found, current=self.session_id))

    def _switch(self, session_id: str) -> None:
        self.open(session_id)
        console().print(f"Session {session_id} ({len(self.history)} messages)", markup=False)


def new_session_id() -> str:
    return f"{SESSION_PREFIX}{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def latest_session(store: SessionStore, other_than: str = "") -> str | None:
    """The chat session used last that holds a conversation (not the empty one ``/clear``
    opened): by its last turn, else the time in its id."""
    return next(
        (
            s.id
            for s in summaries(store)
            if s.id.startswith(SESSION_PREFIX) and s.id != other_than and s.messages
        ),
        None,
    )


def run(args: argparse.Namespace) -> int:
    workspace = Workspace(args.workspace)
    provider = make_provider(args.provider, args.model, args.base_url)
    window = args.window or DEFAULT_WINDOWS[args.provider]
    manager = ContextManager(
        ContextPolicy(context_window=window, recall=True), workspace=workspace.root
    )
    store = store_from(args.store)
    interactive = args.task is None and sys.stdin.isatty()
    ui = ConsoleUI(_ask if interactive else lambda _: None, quiet=not interactive)
    chat = Chat(store, workspace, manager, provider, ui, yes=args.yes)
    session = args.session or (latest_session(store) if args.resume else None)
    if args.resume and session is None:
        raise ContextWardenError(
            "no chat session to resume in the store; start one without --resume"
        )
    chat.open(session or new_session_id())
    if args.task is not None:
        return _answer(chat, args.task)
    if not interactive:
        return piped(chat, sys.stdin)
    return repl(chat)


def piped(chat: Chat, lines: Iterable[str]) -> int:
    """Lines piped in: each a turn, or a slash command as at the prompt; 1 when a turn failed."""
    code = 0
    for line in lines:
        if line.startswith("/"):
            if not chat.command(line):
                break
        elif line.strip():
            code = max(code, _answer(chat, line))
    return code


def _answer(chat: Chat, text: str) -> int:
    answer = chat.turn(text.strip())
    if answer is None:
        return 1
    print(answer, flush=True)
    return 0


def _ask(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def repl(chat: Chat) -> int:
    """Read, run, repeat, until /exit or Ctrl-D."""
    try:
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:
        pass
    console().print(
        f"contextwarden chat · {chat.provider.name} {chat.provider.model} · session "
        f"{chat.session_id} · {len(chat.history)} messages · /help for commands",
        markup=False,
    )
    while True:
        try:
            line = input(PROMPT)
        except EOFError:
            print()
            return 0
        except KeyboardInterrupt:
            print("\n(Ctrl-D or /exit to leave)")
            continue
        if not line.strip():
            continue
        if line.startswith("/"):
            if not chat.command(line):
                return 0
            continue
        try:
            chat.turn(line)
        except KeyboardInterrupt:
            console().print("[yellow]Interrupted.[/]")
