"""How an addition is checked before the history records it: the rule violations a new message
(strict mode) or a merge's changed tail (merge mode) would cause, and the HistoryError naming one.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import replace

from contextwarden.errors import HistoryError, RoleAlternationError, ToolPairingError
from contextwarden.model import Message
from contextwarden.repair import Step, merge_messages
from contextwarden.rules import Rule, UniqueToolUseIds, Violation, validate

MERGE_CONTEXT = 3
"""Messages before a merge's changed tail checked with it; earlier ones are known valid."""


def addition_problems(
    view: Sequence[Message], message: Message, rules: Sequence[Rule], use_ids: Set[str]
) -> list[Violation]:
    """Violations the new message would cause, checked against the last message only."""
    window = [*view[-1:], message]
    offset = len(view) + 1 - len(window)
    found = validate(window, rules)
    # A tool_pairing violation at the previous message counts only when it is an assistant
    # message (its calls unanswered by the new one): the previous user message's results
    # answer a message outside this window, so they look orphaned here but are not.
    relevant = [
        v
        for v in found
        if v.index == len(window) - 1
        or (v.rule == "tool_pairing" and window[v.index].role == "assistant")
    ]
    # The new message's own faults first: a wrong tool_use_id is named, not the pending one.
    relevant.sort(key=lambda v: v.index != len(window) - 1)
    found = [replace(v, index=v.index + offset) for v in relevant]
    if any(isinstance(rule, UniqueToolUseIds) for rule in rules):
        index = len(view)
        found += [
            Violation(UniqueToolUseIds.name, index, f"tool_use id {u.id!r} is already in use", u.id)
            for u in message.tool_uses
            if u.id in use_ids
        ]
    return found


def merge_problems(
    view: Sequence[Message], steps: Sequence[Step], rules: Sequence[Rule]
) -> list[Violation]:
    """Violations the merge ``steps`` would cause, checked on the changed tail with enough
    context before it (``MERGE_CONTEXT``)."""
    context = min(len(view), MERGE_CONTEXT)
    tail = list(view[len(view) - context :])
    for step in steps:
        if not step.message.content:
            continue
        if step.merge:
            tail[-1] = merge_messages(tail[-1], step.message)
        else:
            tail.append(step.message)
    whole = context == len(view)
    # Results may still arrive in the next merged user record; finish_import() repairs the rest.
    waiting = {u.id for u in tail[-2].tool_uses} if len(tail) > 1 else set()
    return [
        v
        for v in validate(tail, rules)
        if (whole or v.index > 0) and not (v.index == len(tail) - 2 and v.tool_use_id in waiting)
    ]


def error_for(violation: Violation, message: Message, *, added: bool = True) -> HistoryError:
    hint = {
        "role_alternation": " Roles must alternate user/assistant, starting with user.",
        "tool_pairing": (
            " Answer every tool_use of the last assistant message with add_tool_results()."
        ),
        "block_placement": "",
        "thinking_order": "",
        "unique_tool_use_ids": " Give each tool call its own id (merge mode renames repeats).",
        "tool_block_shape": " tool_use needs a string id and name; tool_result a tool_use_id.",
    }.get(violation.rule, "")
    cls: type[HistoryError] = {
        "role_alternation": RoleAlternationError,
        "tool_pairing": ToolPairingError,
        "block_placement": ToolPairingError,
        "unique_tool_use_ids": ToolPairingError,
        "tool_block_shape": ToolPairingError,
    }.get(violation.rule, HistoryError)
    return cls(
        f"{violation}.{hint}{' Nothing was added.' if added else ''}",
        index=violation.index,
        role=message.role,
        tool_use_id=violation.tool_use_id,
        rule=violation.rule,
    )
