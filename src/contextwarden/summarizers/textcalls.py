"""Tool calls made in the assistant's text, read as the calls they are.

Older Cline and its forks (Roo Code, Kilo Code) have the model call a tool by writing an XML
element in its text and answer in the next user message's text::

    <read_file>
    <path>src/app.ts</path>
    </read_file>

    [read_file for 'src/app.ts'] Result:
    …

A session resumed by ``specstory resume`` holds its source agent's tool calls as agent text,
each call and its answer one text block of the SpecStory CLI's step layout
(``formats/specstory_steps.py``)::

    List lore lib

    `ls -la scripts/lib`

    ```text
    total 200
    ```

A Cursor session SpecStory saved in its early-2025 layout shows a file read or a terminal
command as a bubble of the extension's own wording between ``_****_`` and ``---`` lines, or,
from about May 2025, between two ``---`` lines (``Read file: X``; a ```` ```bash ```` fence and
its output; Cursor's error line for a call it could not make): ``formats/specstory_bubbles.py``.

The loader keeps all three as text, as the model saw them or the export holds them. The
summarizer reads them as a native call and its result, so the files, commands and failures of
such a session are found as they are for any agent: ``as_native_calls`` pairs an element with
the answer that names it in the next user message (``toolnames.TEXT_RESULT_HEADER``), a text
block that is a whole step, or a bubble that is one, with the next user message, and nothing
else, so prose that merely holds a tag, a fence or the words "Read file" is left alone. The
messages it returns are for reading only; they are never sent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextwarden.formats.specstory_bubbles import BUBBLE, SEPARATED, bubbled
from contextwarden.formats.specstory_steps import Step, flattened
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.toolnames import TEXT_RESULT_HEADER

_CALL = re.compile(r"<(?P<name>[a-z][a-z0-9_]*)>\s*\n(?P<body>.*?)\n?</(?P=name)>", re.S)
"""An XML call: its element on a line of its own, its parameters as elements inside."""
_PARAMETER = re.compile(r"<(?P<key>[a-z][a-z0-9_]*)>\n?(?P<value>.*?)\n?</(?P=key)>", re.S)
_FAILED = "The tool execution failed with the following error:"
"""How Cline opens the answer of a call that failed."""
ID_PREFIX = "text-call-"
"""The id of a call read from text: this prefix and the index of the message that made it."""


def as_native_calls(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` with each tool call made in an assistant's text, and answered in the next
    user message's text, as a ``tool_use`` and its ``tool_result``; ``messages`` itself when
    there are none. A step read from the last message has its answer in a user message after
    it (one message more)."""
    out: list[Message] | None = None
    for index in range(len(messages) - 1):
        call, answer = messages[index], messages[index + 1]
        if call.role != "assistant" or answer.role != "user":
            continue
        pair = None if call.tool_uses else _pair(call, answer, f"{ID_PREFIX}{index}")
        pair = pair or _steps(call, answer, f"{ID_PREFIX}{index}-")
        if pair is not None:
            out = list(messages) if out is None else out
            out[index], out[index + 1] = pair
    last = messages[-1] if messages else None
    if last is not None and last.role == "assistant":
        # a step holds its own answer: the reply the messages end on is read even unanswered
        pair = _steps(last, Message("user", ()), f"{ID_PREFIX}{len(messages) - 1}-")
        if pair is not None:
            out = [*(out or messages)[:-1], *pair]
    return messages if out is None else out


def _steps(call: Message, answer: Message, prefix: str) -> tuple[Message, Message] | None:
    """The text blocks of ``call`` that are whole SpecStory steps, or hold bubbles that are,
    as calls in their place, and their answers first in ``answer`` (the user message the
    agent's turn ended before)."""
    blocks: list[Block] = []
    results: list[ToolResultBlock] = []
    for block in call.content:
        items = _steps_in(block)
        if items is None:
            blocks.append(block)
            continue
        for item in items:
            if isinstance(item, str):
                blocks.extend([TextBlock(item)] if item.strip() else [])
                continue
            call_id = f"{prefix}{len(results)}"
            blocks.append(ToolUseBlock(call_id, item.name, item.tool_input))
            results.append(ToolResultBlock(call_id, item.output, item.failed))
    if not results:
        return None
    new_call = Message("assistant", tuple(blocks), call.meta)
    return new_call, Message("user", (*results, *answer.content), answer.meta)


def _steps_in(block: Block) -> Sequence[str | Step] | None:
    """The steps a text block is or holds, with its prose (a step ends with its answer's
    fence: most text does not, and is not split into lines to find out)."""
    if not isinstance(block, TextBlock):
        return None
    if BUBBLE in block.text or SEPARATED.search(block.text):
        found = bubbled(block.text)
        if found is not None:
            return found
    if not block.text.rstrip().endswith("```"):
        return None
    step = flattened(block.text.splitlines())
    return None if step is None else [step]


def _pair(call: Message, answer: Message, call_id: str) -> tuple[Message, Message] | None:
    found = _answer(answer)
    if found is None:
        return None
    position, name = found
    text_at, match = _call_in(call, name)
    if match is None:
        return None
    block = call.content[text_at]
    assert isinstance(block, TextBlock)
    params = {m.group("key"): m.group("value") for m in _PARAMETER.finditer(match.group("body"))}
    prose = (block.text[: match.start()] + block.text[match.end() :]).strip()
    kept: list[Block] = [b for i, b in enumerate(call.content) if i != text_at]
    if prose:
        kept.insert(text_at, TextBlock(prose))
    answered = answer.content[position]
    assert isinstance(answered, TextBlock)
    body = TEXT_RESULT_HEADER.sub("", answered.text.lstrip(), count=1).lstrip("\n")
    result = ToolResultBlock(call_id, body, body.startswith(_FAILED))
    blocks = list(answer.content)
    blocks[position] = result
    new_call = Message("assistant", (*kept, ToolUseBlock(call_id, name, params)), call.meta)
    return new_call, Message("user", tuple(blocks), answer.meta)


def _answer(message: Message) -> tuple[int, str] | None:
    """Where the answer to a text call sits in ``message``, and the tool it names."""
    for position, block in enumerate(message.content):
        if isinstance(block, TextBlock):
            header = TEXT_RESULT_HEADER.match(block.text.lstrip())
            if header is not None:
                return position, header.group("name")
    return None


def _call_in(message: Message, name: str) -> tuple[int, re.Match[str] | None]:
    """The text block of ``message`` that calls ``name`` in XML, and the call."""
    for position, block in enumerate(message.content):
        if isinstance(block, TextBlock):
            for match in _CALL.finditer(block.text):
                if match.group("name") == name:
                    return position, match
    return -1, None
