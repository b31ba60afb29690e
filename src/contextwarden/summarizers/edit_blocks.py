"""aider's edits: the SEARCH/REPLACE blocks of a reply and aider's output after it, read as the
edit calls and results they are.

aider makes no tool calls. In its "diff" edit format (aider's docs, "Edit formats"; the prompt in
``aider/coders/editblock_prompts.py``) the model edits a file by writing, in its reply, the
file's path alone on a line, a fence, ``<<<<<<< SEARCH``, the lines to find, ``=======``, the
lines to put in their place and ``>>>>>>> REPLACE`` (``editblock_coder.py`` takes five to nine
of each mark, and a block with no path line before it edits the previous block's file). aider
applies the blocks after the reply and says so in its output: ``Applied edit to PATH`` for each
file it changed (for a reply in the "whole" format, the file's whole text in a fence, that line
is the only one naming it), or the failure report ``formats.aider_output`` reads, which names
the file of each block that failed (``SearchReplaceNoExactMatch: This SEARCH block failed to
exactly match lines in PATH``) and quotes the block.

The loader keeps both as the text they are (``formats.aider``: the reply is the model's text,
aider's output is injected, ``injected_kind`` "aider"). ``as_edit_calls`` reads each block, and
each file aider says it edited, as an ``Edit`` call of the reply, answered in aider's output,
failed when the report quotes the block; ``failed_edit`` is the call a cleared report answers,
so microcompact keeps its error lines. The messages they return are for reading only; they are
never sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from contextwarden.formats.aider_output import EDIT_FAILURE, FAILURE_END, RETRY
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.actions import ID_PREFIX as ACTION_PREFIX

AIDER_KIND = "aider"
"""The ``injected_kind`` the aider loader gives aider's own output."""
EDIT_TOOL = "Edit"
"""The tool an edit block is read as: it replaces the lines it quotes in one file."""
ID_PREFIX = "aider-edit-"
"""The id of a call read from an edit block: this prefix, the reply's index and the block's."""
_BLOCK = re.compile(
    r"^<{5,9} SEARCH[ \t]*\n(?P<search>.*?)^={5,9}[ \t]*\n.*?^>{5,9} REPLACE[ \t]*$",
    re.M | re.S,
)
_FENCE = re.compile(r"^\s*(?:```|~~~|<(?:source|code|pre|codeblock|sourcecode)>)")
"""The fences aider may ask for (``base_coder.all_fences``): backticks, or a tag when the file
holds backticks itself."""
_APPLIED = re.compile(r"^Applied edit to (?P<path>\S.*?)\s*$", re.M)
"""aider's line for each file a reply's edits changed (``base_coder.apply_updates``)."""
_NO_MATCH = re.compile(
    r"This SEARCH block failed to exactly match lines in (?P<path>\S.*?)\s*$", re.M
)
"""The line of the failure report that names a failed block's file (``editblock_coder``)."""


def as_edit_calls(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` with each reply that aider's output answers given an ``Edit`` call per
    edit block (and per other file aider says it edited) after its text, and the output the
    calls' results, in front of what the answer holds; ``messages`` itself when there are none."""
    out: list[Message] | None = None
    for index in range(len(messages) - 1):
        reply, answer = messages[index], messages[index + 1]
        output = _aider_output(answer) if reply.role == "assistant" else None
        if output is None:
            continue
        edits = _edits(reply, output)
        if not edits:
            continue
        ids = [f"{ID_PREFIX}{index}-{n}" for n in range(len(edits))]
        calls = tuple(_call(path, i) for (path, _), i in zip(edits, ids, strict=True))
        results = tuple(_result(*edit, output, i) for edit, i in zip(edits, ids, strict=True))
        out = list(messages) if out is None else out
        out[index] = Message("assistant", (*reply.content, *calls), reply.meta)
        out[index + 1] = Message("user", (*results, *answer.content), answer.meta)
    return messages if out is None else out


def failed_edit(
    reply: Message, output: str, call_id: str
) -> tuple[ToolUseBlock, ToolResultBlock] | None:
    """The first edit block of ``reply`` that aider's failure report in ``output`` (its output
    after the reply) quotes, as a call with id ``call_id``, and the report as its failed result;
    None when the output reports no failed block of the reply."""
    if reply.role != "assistant" or _report(output) is None:
        return None
    for path, search in _edits(reply, output):
        result = _result(path, search, output, call_id)
        if result.is_error:
            return _call(path, call_id), result
    return None


def is_edit_call(call: ToolUseBlock) -> bool:
    """True for a call read from an edit block or an ``Applied edit to`` line."""
    return call.id.startswith(ID_PREFIX)


def _aider_output(answer: Message) -> str | None:
    """The text of aider's output in ``answer``, or None when it holds none: the texts its
    loader listed as aider's (merge mode joins them to what the person typed next), or the
    result ``actions.as_action_calls`` made of them."""
    extra = answer.meta.extra
    parts = extra.get("parts")
    kinds = [p.get("injected_kind") for p in parts if isinstance(p, Mapping)] if parts else []
    if answer.role != "user" or AIDER_KIND not in (extra.get("injected_kind"), *kinds):
        return None  # a message merged from several keeps each part's marks in ``parts``
    listed = extra.get("injected_texts")
    texts = [
        b.text
        for b in answer.content
        if isinstance(b, TextBlock) and (not isinstance(listed, tuple) or b.text in listed)
    ]
    texts += [r.text for r in answer.tool_results if r.tool_use_id.startswith(ACTION_PREFIX)]
    return "\n".join(texts) if texts else None


def _edits(reply: Message, output: str) -> list[tuple[str, str]]:
    """(path, SEARCH lines) of each edit block of the reply, then (path, "") for each other file
    ``output`` says aider edited."""
    edits: list[tuple[str, str]] = []
    path: str | None = None
    for block in reply.content:
        if not isinstance(block, TextBlock) or not block.text.strip():
            continue
        for match in _BLOCK.finditer(block.text):
            path = _path_before(block.text[: match.start()]) or path
            if path is not None:  # aider cannot apply a block that names no file either
                edits.append((path, match["search"]))
    named = {path for path, _ in edits}
    for applied in _APPLIED.finditer(output):
        if applied["path"] not in named:
            named.add(applied["path"])
            edits.append((applied["path"], ""))
    return edits


def _call(path: str, call_id: str) -> ToolUseBlock:
    """An edit of ``path``. Only the path: the block's lines stay in the reply's text, where the
    summary reads them as the model's (``prose``), and would be quoted twice as code written."""
    return ToolUseBlock(call_id, EDIT_TOOL, {"file_path": path})


def _path_before(text: str) -> str | None:
    """The path on the line before a block's fence (aider strips a ``#``, backticks, asterisks
    and a trailing colon), or None when that line is not one word or there is no fence line."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or not _FENCE.match(lines[-1]):
        return None
    name = lines[-2].strip().rstrip(":").lstrip("#").strip().strip("`*")
    return name if name and len(name.split()) == 1 else None


def _result(path: str, search: str, output: str, call_id: str) -> ToolResultBlock:
    """What aider's ``output`` says of the block editing ``path`` with ``search``: the failure
    report when it quotes the block, else the line saying aider applied an edit to the file."""
    report = _report(output)
    if report is not None and _quotes(report, path, search):
        return ToolResultBlock(call_id, report, is_error=True)
    applied = [m[0] for m in _APPLIED.finditer(output) if m["path"] == path]
    return ToolResultBlock(call_id, "\n".join(applied))


def _quotes(report: str, path: str, search: str) -> bool:
    """Whether ``report`` names ``path`` and quotes ``search`` (blank lines and line ends
    aside: the log keeps no blank line of aider's output, and its markdown adds trailing
    spaces)."""
    named = {m["path"] for m in _NO_MATCH.finditer(report)}
    return bool(search.strip()) and path in named and _trimmed(search) in _trimmed(report)


def _trimmed(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


def _report(output: str) -> str | None:
    """aider's failure report in ``output``: from its first line to its last (``RETRY`` when
    some of the blocks applied, else ``FAILURE_END``), or to the output's end."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if EDIT_FAILURE.fullmatch(line.strip())), None)
    if start is None:
        return None
    rest = lines[start:]
    end = next((i for i, line in enumerate(rest) if line.startswith(RETRY)), None)
    if end is None:
        end = next((i for i, line in enumerate(rest) if line.startswith(FAILURE_END)), None)
    return "\n".join(rest if end is None else rest[: end + 1])
