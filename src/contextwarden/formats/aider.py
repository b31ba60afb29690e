"""Aider's chat log (``.aider.chat.history.md``) into a history: one chat per
``# aider chat started at …`` header; ``index=`` picks the chat (0 is the first).

Mapping rules (from the way aider writes the file):

- ``#### `` lines are what the person typed (one message per run of them; a bare ``####`` is
  an empty line of it) → user text.
- ``> `` lines are aider's own output shown in the terminal (files added, edits applied,
  commits, command output, warnings; markdown line breaks stripped) → user text marked injected
  (``injected_kind`` "aider"), in place: merge mode joins it to the user turn around it. So are
  the unquoted rest of a reply's failed-edit report, and the ``#### `` lines of a message aider
  sent the model itself (a lint or failed-edit report, the files it added) in the person's name
  (``aider_output``: how aider's own code writes them).
- Every other line is the model's reply (markdown, edit blocks included) → assistant text.
- Meta: ``extra``: ``lines`` (first and last line of the block); a reply whose edits aider then
  linted, with errors, has the linter's command line as ``action`` (read with the report as a
  shell call and its result, ``summarizers.actions``); one whose SEARCH/REPLACE blocks aider
  could not apply has the file of the first that failed as ``edit`` (read with the report as
  a failed edit of that file). The chat's start time and the command
  line it ran (the first ``> `` line naming ``aider``) go to ``metadata``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from contextwarden.errors import FormatError
from contextwarden.formats.aider_output import (
    QUOTE,
    STARTED,
    TYPED,
    failed_edit_path,
    lint_command,
    reflected,
    unquoted_output,
)
from contextwarden.formats.base import add_or_report, read_text
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import FrozenDict, Message, MessageMeta, Role, TextBlock
from contextwarden.tokens.base import TokenCounter

NAME = "aider"
EXPECTED = "an aider chat log (.aider.chat.history.md): '# aider chat started at' headers"
HEADER = re.compile(rf"^{re.escape(STARTED)} (?P<start>.+)$")
_USER, _TOOL = f"{TYPED} ", QUOTE
_COMMAND = re.compile(r"(^|/)aider(\s|$)")
"""The command line aider echoes when a chat starts."""


def sniff(path: Path, head: str) -> bool:
    if path.name.endswith(".aider.chat.history.md"):
        return True
    return any(HEADER.match(line) for line in head.splitlines()[:50])


@dataclass
class _Block:
    kind: str
    """``user``, ``aider`` (tool output) or ``assistant``."""
    first: int
    lines: list[str] = field(default_factory=list)
    last: int = 0


@dataclass
class _Chat:
    line: int
    started: str
    blocks: list[_Block] = field(default_factory=list)


def _kind_and_text(raw: str) -> tuple[Literal["user", "aider", "assistant"], str]:
    if raw.startswith(_USER) or raw.rstrip() == TYPED:
        return "user", raw[len(_USER) :].rstrip()
    if raw.startswith(_TOOL) or raw.rstrip() == ">":
        return "aider", raw[len(_TOOL) :].rstrip()
    return "assistant", raw


def _chats(text: str) -> list[_Chat]:
    chats: list[_Chat] = []
    raws = text.splitlines()
    continued = unquoted_output(raws)
    for number, raw in enumerate(raws, start=1):
        header = HEADER.match(raw)
        if header:
            chats.append(_Chat(number, header["start"].strip()))
            continue
        if not raw.strip():
            blocks = chats[-1].blocks if chats else []
            if blocks and blocks[-1].kind == "assistant":
                blocks[-1].lines.append("")  # a blank line inside the model's markdown
            continue
        if not chats:
            chats.append(_Chat(number, ""))  # a log whose first header was cut off
        blocks = chats[-1].blocks
        own = number - 1 in continued  # the unquoted rest of aider's own report
        kind, line_text = ("aider", raw.rstrip()) if own else _kind_and_text(raw)
        if not blocks or blocks[-1].kind != kind:
            blocks.append(_Block(kind, number))
        blocks[-1].lines.append(line_text)
        blocks[-1].last = number
    return chats


def _shown(block: _Block | None) -> list[str]:
    """``block``'s lines when it is aider's output, else none."""
    return block.lines if block is not None and block.kind == "aider" else []


def _own_messages(blocks: list[_Block]) -> None:
    """Give aider's kind to each run of ``#### `` lines aider sent in the person's name."""
    for index, block in enumerate(blocks):
        before = _shown(blocks[index - 1] if index else None)
        if block.kind == "user" and reflected(block.lines, before):
            block.kind = "aider"


def _message(block: _Block, following: _Block | None) -> Message | None:
    text = "\n".join(block.lines).strip()
    if not text:
        return None
    extra: dict[str, object] = {"lines": (block.first, block.last)}
    command = lint_command(_shown(following)) if block.kind == "assistant" else None
    if command is not None:  # aider linted the files this reply edited, with errors
        extra["action"] = command
    edited = failed_edit_path(_shown(following)) if block.kind == "assistant" else None
    if command is None and edited is not None:  # aider could not apply this reply's edits
        extra["edit"] = edited
    if block.kind == "aider":
        extra.update(injected=True, injected_kind="aider", injected_texts=(text,))
    role: Role = "assistant" if block.kind == "assistant" else "user"
    meta = MessageMeta(source_ids=(f"line:{block.first}",), extra=FrozenDict(extra))
    return Message(role, (TextBlock(text),), meta)


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Chat ``index`` of the log (``report.metadata["conversations"]`` says how many)."""
    chats = _chats(read_text(path, report))
    report.metadata["conversations"] = len(chats)
    if not 0 <= index < len(chats):
        raise FormatError(
            f"conversation index {index} is out of range: the log holds {len(chats)} chat(s)",
            path=str(path),
        )
    chat = chats[index]
    _own_messages(chat.blocks)
    report.records = len(chat.blocks)
    if not chat.started and chat.blocks:  # text before any chat header: not aider's log
        first = chat.blocks[0]
        report.reject(
            "no '# aider chat started at' header before it", first.lines[0], line=first.first
        )
        report.unreadable = report.records
    report.metadata.update(started=chat.started, header_line=chat.line)
    report.metadata["command"] = next(
        (t for b in chat.blocks if b.kind == "aider" for t in b.lines if _COMMAND.search(t)), None
    )
    history = ConversationHistory(mode="merge", counter=counter)
    for position, block in enumerate(chat.blocks):
        following = chat.blocks[position + 1] if position + 1 < len(chat.blocks) else None
        message = _message(block, following)
        if message is None:
            report.metadata.setdefault("blank_blocks", []).append(block.first)
            continue
        add_or_report(history, message, report)
    return history
