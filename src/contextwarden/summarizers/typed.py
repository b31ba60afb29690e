"""Which user text the person typed, and how earlier summaries carry user messages forward.

The rule (every summary keeps these verbatim, so it is stated once, here):

1. Only text blocks of ``user`` messages count; tool results, images and documents do not — with
   two exceptions: when a person rejects a tool call and types a reason, Claude Code stores that
   reason inside the ``tool_result`` after "the user said:"; and Cline and Roo Code put what the
   person typed in answer to a tool (a denial's feedback, a reply to a question, a message sent
   while the task runs) inside the tool's answer as ``<feedback>``, ``<answer>`` or
   ``<user_message>`` elements; and an agent's question tool returns the person's answers as its
   result (``summarizers.answers``: each is kept as ``"<question>"="<answer>"``). Those texts are
   typed and are kept (``typed_in_result``).
2. Text the agent tool wrote itself is not typed. Loaders say so in the message's meta: a text
   listed in ``meta.extra["injected_texts"]`` (the Claude Code loader lists ``isMeta`` records'
   text and tool-injected text there), or every text of a message flagged ``meta.extra["injected"]``
   or ``["isMeta"]`` when no list is given.
3. An earlier compaction summary is not a user message: a message flagged
   ``meta.extra["isCompactSummary"]`` (Claude Code), or a text block starting with
   ``SUMMARY_PREFIX`` (ours) or Claude Code's "This session is being continued from a previous
   conversation". The user messages such a summary lists are carried forward in its place (see
   ``carried_user_messages``), so they survive repeated compactions. In our own summary message
   (``SUMMARY_KEY``), the leading copy of the first user message is skipped when the summary
   carries messages (it is their #1), the re-read files and hook output after the summary block
   are not typed, and a turn merged after them is read by these same rules.
4. Inside a text, what the tool injected is removed: ``<system-reminder>``,
   ``<local-command-stdout>``/``-stderr``, ``<local-command-caveat>``, ``<bash-stdout>``/``-stderr``
   and ``<command-message>`` elements, tag and content, the ``<task-notification>`` in which
   Claude Code hands a background sub-agent's report to the conversation, and the
   ``<ci-monitor-event>`` in which its CI monitor hands it a pull request's check run or review
   comment. What the person typed through the tool's own syntax is rewritten as typed, and counts
   even when a loader listed it as injected:
   ``<command-name>/x</command-name><command-args>a</command-args>`` becomes ``/x a`` (a session's
   real primary request can be ``/orchestrator create TODO app by Next.js``), and
   ``<bash-input>ls</bash-input>`` becomes ``! ls``. Codex's wrappers are removed the same way,
   so a request that reaches us without a loader's marks (through the proxy) reads alike:
   ``<environment_context>``, ``<user_instructions>``, ``<permissions instructions>``, its
   ``*_instructions``, ``<collaboration_mode>``, ``<personality_spec>``, ``<turn_aborted>``, and
   ``# AGENTS.md instructions for <dir>`` with its ``<INSTRUCTIONS>`` element; and Copilot CLI's
   ``<current_datetime>`` and ``<system_reminder>`` around what the person typed. Cursor wraps
   what the person typed in ``<user_query>`` and puts its own context (``<attached_files>``,
   ``<external_links>``, ``<timestamp>``) beside it in the same text: a text that opens with an
   element and holds a ``<user_query>`` is read as the content of its ``<user_query>`` elements
   only (prose that quotes the tag stays whole).
5. Text an agent harness writes in the user role is not typed: markers such as ``[Request
   interrupted by user…]``, the tool answers Cline and its forks write as user text (``[read_file
   for 'x'] Result:``, also after a call made in XML in the assistant's text) and their ``[TASK
   RESUMPTION]`` note (of these only rule 1's typed elements count), and the environment
   observations of text-action agents, recognised by their fixed formats — mini-swe-agent's
   ``<returncode>N</returncode>`` outputs and its "Please always provide EXACTLY ONE action"
   reminder, and SWE-agent's outputs ending in the ``(Current directory: …)`` / ``bash-$`` prompt
   when they answer an assistant message (the task statement ends with that prompt too), and the
   final diff mini-swe-agent prints when the agent runs its
   ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` command; the instructions of a skill Claude Code loads
   when its ``Skill`` tool runs ("Base directory for this skill: <dir>" and the ``SKILL.md`` body,
   an ``isMeta`` record in its own files, unflagged in a SpecStory export or a proxied request);
   the reference a summary message carries in place of injected context
   (``INJECTED_REFERENCE``); and the note a truncation leaves where it dropped messages
   (``policy.DROPPED_NOTE``). A text that is empty after steps 4 and 5 is
   not a message.

``is_injected_block`` applies rules 2 and 4 to one text: the agent tool wrote it (a summary
message carries it as a reference, ``compaction.injected``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from contextwarden.model import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import DROPPED_NOTE_OPENING
from contextwarden.summarizers.answers import question_answers
from contextwarden.summarizers.carry import carried_user_messages
from contextwarden.toolnames import TEXT_NOT_RUN_HEADER, TEXT_RESULT_HEADER

SUMMARY_PREFIX = "This session is being continued from an earlier conversation"
"""How the compaction ladder's summary block begins (``compaction.summarize.CONTINUATION_NOTE``)."""
SUMMARY_PREFIXES: tuple[str, ...] = (
    SUMMARY_PREFIX,
    "This session is being continued from a previous conversation",  # Claude Code's
)
WHOLE_SUMMARY_FLAG = "isCompactSummary"
"""A message flagged so (Claude Code's record) is a summary from its first block to its last."""
# The compaction ladder's summary message (``compaction.cuts``; mirrored here so summarizers do
# not depend on compaction, and checked equal by a test): it begins with the conversation's first
# user message (FIRST_BLOCKS_KEY blocks), then the summary block, then re-read files and hook
# output (up to SUMMARY_BLOCKS_KEY blocks); a turn merged into it follows.
SUMMARY_KEY = "contextwarden.compact_summary"
FIRST_BLOCKS_KEY = "contextwarden.first_blocks"
SUMMARY_BLOCKS_KEY = "contextwarden.summary_blocks"
INJECTED_FLAGS: tuple[str, ...] = ("injected", "isMeta")

_DROPPED_ELEMENTS = (
    "system-reminder",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-stdout",
    "bash-stderr",
    "command-message",
    "task-notification",  # a background sub-agent's report, delivered in the user role
    "ci-monitor-event",  # a GitHub event on a watched pull request, delivered the same way
    "environment_details",  # Cline and Roo Code append it to every user turn
    # Codex's (its loader marks them too; the proxy's requests come unmarked)
    "environment_context",
    "user_instructions",
    "permissions instructions",
    "apps_instructions",
    "skills_instructions",
    "plugins_instructions",
    "collaboration_mode",
    "personality_spec",
    "turn_aborted",
    # Copilot CLI wraps what the person typed in these when it sends it (``transformedContent``)
    "current_datetime",
    "system_reminder",
)
_DROP_RE = re.compile(
    r"<(" + "|".join(_DROPPED_ELEMENTS) + r")>.*?</\1>"
    r"|(?:# AGENTS\.md instructions for [^\n]*\s*)?<(INSTRUCTIONS)>.*?</\2>",  # Codex's AGENTS.md
    re.DOTALL,
)
INJECTED_REFERENCE = "[Injected by the agent tool, not typed: "
"""How the reference a summary message carries in place of injected context begins."""
_COMMAND_RE = re.compile(
    r"<command-name>\s*(.*?)\s*</command-name>\s*(?:<command-args>(.*?)</command-args>)?",
    re.DOTALL,
)
_ARGS_RE = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH_INPUT_RE = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)
_QUERY_OPEN, _QUERY_CLOSE = "<user_query>", "</user_query>"
"""Cursor's wrapping of a typed prompt (rule 4)."""
_TOOL_MARKER_RE = re.compile(r"^\[Request interrupted by user[^\]]*\]$")
_HARNESS_TEXT_RE = re.compile(
    r"\A<returncode>-?\d+</returncode>"  # mini-swe-agent
    r"|\APlease always provide EXACTLY ONE action in triple backticks"  # mini-swe-agent
    r"|\ABase directory for this skill: "  # Claude Code's Skill tool, loading a skill's SKILL.md
    r"|\A" + re.escape(DROPPED_NOTE_OPENING)  # ours: where a truncation dropped messages
)
# SWE-agent ends every environment message with this prompt, the task statement included, so it
# marks an observation only in a message that answers the agent.
_PROMPT_TRAILER_RE = re.compile(r"\(Current directory: [^\n]*\)\s*\nbash-\$\s*\Z")
_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_TYPED_SYNTAX = ("<command-name>", "<bash-input>")
_TYPED_ELEMENT_RE = re.compile(r"<(feedback|answer|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)
"""Cline's and Roo Code's wrapping of what the person typed inside a tool's answer."""
_RESUMPTION = "[TASK RESUMPTION]"
"""Cline's note on resuming an interrupted task; what the person adds follows in
``<user_message>``."""
_REJECTION_RE = re.compile(r"To tell you how to proceed, the user said:\n(.+)\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class TypedMessage:
    """A message the person typed: where and what (``carried``: quoted by an earlier summary)."""

    index: int
    text: str
    carried: bool = False


def is_summary_text(text: str) -> bool:
    return text.lstrip().startswith(SUMMARY_PREFIXES)


def summary_block_index(message: Message) -> int | None:
    """Index of the block holding an earlier compaction summary, or None."""
    if message.role != "user":
        return None
    if message.meta.extra.get(WHOLE_SUMMARY_FLAG):
        return 0
    for i, block in enumerate(message.content):
        if isinstance(block, TextBlock) and is_summary_text(block.text):
            return i
    return None


def is_summary_message(message: Message) -> bool:
    """True for a message holding an earlier compaction summary (flagged or recognised)."""
    return summary_block_index(message) is not None


def _injected_texts(message: Message) -> frozenset[str] | None:
    """Texts a loader marked as written by the tool; None when all of them are (rule 2)."""
    listed = message.meta.extra.get("injected_texts")
    if isinstance(listed, tuple | list):
        return frozenset(t for t in listed if isinstance(t, str))
    if any(message.meta.extra.get(flag) for flag in INJECTED_FLAGS):
        return None
    return frozenset()


def clean_typed_text(text: str) -> str:
    """The part of ``text`` the person typed (rule 4 and 5 above); '' when nothing is left."""
    text = _DROP_RE.sub("", _queries(text))
    text = _COMMAND_RE.sub(_typed_command, text)
    text = _ARGS_RE.sub(lambda m: m.group(1).strip(), text)
    text = _BASH_INPUT_RE.sub(lambda m: "! " + m.group(1).strip(), text).strip()
    if text.startswith(INJECTED_REFERENCE):
        return ""
    return "" if _TOOL_MARKER_RE.match(text) or _HARNESS_TEXT_RE.search(text) else text


def _queries(text: str) -> str:
    """The content of Cursor's ``<user_query>`` elements when ``text`` is Cursor's (it opens
    with an element) and holds one, else ``text``: a person's words that quote the tag are
    theirs whole (found with ``str.find``: linear however many openings are left unclosed)."""
    start = text.find(_QUERY_OPEN)
    if start < 0 or not text.lstrip().startswith("<"):
        return text
    found: list[str] = []
    while start >= 0:
        start += len(_QUERY_OPEN)
        end = text.find(_QUERY_CLOSE, start)
        found.append(text[start:] if end < 0 else text[start:end])
        start = -1 if end < 0 else text.find(_QUERY_OPEN, end)
    return "\n".join(part.strip() for part in found)


def is_injected_block(message: Message, block: TextBlock) -> bool:
    """True for a non-blank text of a user message that holds nothing the person typed: marked
    so by its loader (rule 2) or nothing left once the tool's elements and markers are removed
    (rules 4 and 5)."""
    if message.role != "user" or not block.text.strip():
        return False
    return _marked(block.text, _injected_texts(message)) or not clean_typed_text(block.text)


def _marked(text: str, injected: frozenset[str] | None) -> bool:
    """Rule 2: a loader marked ``text`` as the tool's, and it holds none of the tool's typed
    syntax (rule 4's exception)."""
    listed = injected is None or text in injected
    return listed and not any(tag in text for tag in _TYPED_SYNTAX)


def _typed_command(match: re.Match[str]) -> str:
    args = (match.group(2) or "").strip()
    return f"{match.group(1)} {args}" if args else match.group(1)


def typed_texts(message: Message, *, answers: Message | None = None) -> Iterator[str]:
    """The typed texts of one message, in block order (rules 1, 2, 4 and 5).

    ``answers``: the message just before this one, when it is the assistant's (rule 5).
    """
    yield from _typed_in(message, message.content, answers)


def _typed_in(message: Message, blocks: Sequence[Block], answers: Message | None) -> Iterator[str]:
    if message.role != "user":
        return
    if answers is not None and answers.role == "assistant" and _SUBMIT in answers.text:
        return  # mini-swe-agent's submission: the harness prints the final diff
    injected = _injected_texts(message)
    for block in blocks:
        if isinstance(block, TextBlock):
            if _marked(block.text, injected):
                continue
            if _answers_in_text(block.text):
                yield from _typed_elements(block.text)
                continue
            text = clean_typed_text(block.text)
            if answers is not None and _PROMPT_TRAILER_RE.search(text):
                continue
        elif isinstance(block, ToolResultBlock):
            yield from typed_in_result(block, _call(answers, block.tool_use_id))
            continue
        else:
            continue
        if text:
            yield text


def _answers_in_text(text: str) -> bool:
    """A tool's answer Cline or a fork wrote as user text (``[name for 'x'] Result:``, ``Tool [x]
    was not executed``), or its note on resuming a task: harness text (rule 5), in which only
    the typed elements count (rule 1's second exception)."""
    text = text.lstrip()
    return (
        TEXT_RESULT_HEADER.match(text) is not None
        or TEXT_NOT_RUN_HEADER.match(text) is not None
        or text.startswith(_RESUMPTION)
    )


def _typed_elements(text: str) -> Iterator[str]:
    """What a person typed inside a tool's answer (rule 1's second exception)."""
    for found in _TYPED_ELEMENT_RE.finditer(text):
        typed = clean_typed_text(found.group(2))
        if typed:
            yield typed


def _call(answers: Message | None, tool_use_id: str) -> ToolUseBlock | None:
    """The call in the assistant message just before that ``tool_use_id`` answers, or None."""
    if answers is None:
        return None
    calls = (b for b in answers.content if isinstance(b, ToolUseBlock) and b.id == tool_use_id)
    return next(calls, None)


def typed_in_result(block: ToolResultBlock, call: ToolUseBlock | None = None) -> tuple[str, ...]:
    """What the person typed that a tool's result holds (rule 1's exceptions): a rejected call's
    reason, the answers to a question tool (``call``: the call it answers), or Cline's typed
    elements; () for a result that holds none. Microcompact never clears such a result."""
    reason = rejection_reason(block)
    if reason:
        return (reason,)
    return question_answers(block, call) or tuple(_typed_elements(block.text))


def rejection_reason(block: ToolResultBlock) -> str | None:
    """The reason a person typed when rejecting a tool call (rule 1's exception), or None."""
    if not block.is_error:
        return None
    found = _REJECTION_RE.search(block.text)
    reason = found.group(1).strip() if found else ""
    return reason or None


def user_messages(messages: Sequence[Message]) -> tuple[TypedMessage, ...]:
    """Every typed user message in order, with those carried by earlier summaries in their place."""
    found: list[TypedMessage] = []
    for index, message in enumerate(messages):
        previous = messages[index - 1] if index > 0 else None
        answers = previous if previous is not None and previous.role == "assistant" else None
        at = summary_block_index(message)
        if at is None:
            texts = typed_texts(message, answers=answers)
            found.extend(TypedMessage(index, t) for t in texts)
            continue
        found.extend(_around_summary(index, message, at, answers))
    return tuple(found)


def _around_summary(
    index: int, message: Message, at: int, answers: Message | None
) -> Iterator[TypedMessage]:
    """A summary message: what it carries, and typed text merged into it before or after."""
    extra = message.meta.extra
    if extra.get(WHOLE_SUMMARY_FLAG):
        yield from (TypedMessage(index, t, True) for t in carried_user_messages(message.text))
        return
    block = message.content[at]
    carried = carried_user_messages(block.text if isinstance(block, TextBlock) else "")
    first = _int(extra.get(FIRST_BLOCKS_KEY)) if extra.get(SUMMARY_KEY) else 0
    # The leading copy of the conversation's first message is quoted in what the summary carries.
    start = first if carried and first <= at else 0
    for text in _typed_in(message, message.content[start:at], answers):
        yield TypedMessage(index, text)
    yield from (TypedMessage(index, t, True) for t in carried)
    end = _int(extra.get(SUMMARY_BLOCKS_KEY)) if extra.get(SUMMARY_KEY) else 0
    for text in _typed_in(message, message.content[max(end, at + 1) :], answers):
        yield TypedMessage(index, text)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
