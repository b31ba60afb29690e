"""Anthropic's ``context_management`` request field, applied by the proxy for any upstream.

``clear_tool_uses_20250919`` is MicroCompact with the client's numbers: once the conversation
reaches ``trigger`` input tokens, the results of all but the latest ``keep`` tool uses are
cleared (tools in ``exclude_tools`` never), and only if that frees ``clear_at_least`` tokens;
with ``clear_tool_inputs`` the old calls' inputs are emptied too (ClearToolInputs). The
reply reports it as the API does: ``context_management.applied_edits``. Edit types the proxy does
not implement are left in the request for an upstream that does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.compaction.base import Strategy, StrategyReport
from contextwarden.compaction.inputs import ClearToolInputs
from contextwarden.compaction.microcompact import MicroCompact
from contextwarden.errors import CompactionError, FormatError
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager

log = logging.getLogger("contextwarden.proxy")

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
DEFAULT_TRIGGER = 100_000
"""Input tokens at which the API clears tool uses when ``trigger`` is not given."""
DEFAULT_KEEP = 3
"""Tool uses the API keeps when ``keep`` is not given."""
FIELD = "context_management"


@dataclass(frozen=True, slots=True)
class ClearToolUses:
    """One ``clear_tool_uses_20250919`` edit with the API's defaults filled in."""

    trigger: int = DEFAULT_TRIGGER
    keep: int = DEFAULT_KEEP
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool | tuple[str, ...] = False
    """Also empty the inputs of the old calls (True: of every tool cleared; a list: of those)."""


def parse(body: Mapping[str, Any]) -> tuple[tuple[ClearToolUses, ...], dict[str, Any] | None]:
    """The edits the proxy applies, and the ``context_management`` field left for the upstream
    (None: remove it). FormatError names the edit that is malformed."""
    field = body.get(FIELD)
    if field is None:
        return (), None
    edits = field.get("edits") if isinstance(field, Mapping) else None
    if not isinstance(edits, list):
        raise FormatError(f"{FIELD} must be an object with an 'edits' list")
    ours = [e for e in edits if isinstance(e, Mapping) and e.get("type") == CLEAR_TOOL_USES]
    rest = [e for e in edits if e not in ours]
    parsed = tuple(_edit(e, i) for i, e in enumerate(ours))
    return parsed, ({**field, "edits": rest} if rest else None)


def _edit(raw: Mapping[str, Any], index: int) -> ClearToolUses:
    def amount(name: str, kind: str, default: int) -> int:
        value = raw.get(name)
        if value is None:
            return default
        if not isinstance(value, Mapping) or not isinstance(value.get("value"), int):
            raise FormatError(
                f"{FIELD}.edits[{index}].{name} must be {{'type': '{kind}', 'value': <int>}}"
            )
        return int(value["value"])

    exclude = raw.get("exclude_tools") or []
    inputs = raw.get("clear_tool_inputs", False)
    return ClearToolUses(
        trigger=amount("trigger", "input_tokens", DEFAULT_TRIGGER),
        keep=amount("keep", "tool_uses", DEFAULT_KEEP),
        clear_at_least=amount("clear_at_least", "input_tokens", 0),
        exclude_tools=tuple(str(t) for t in exclude),
        clear_tool_inputs=inputs if isinstance(inputs, bool) else tuple(inputs),
    )


def apply(
    manager: ContextManager, history: ConversationHistory, edits: Sequence[ClearToolUses]
) -> list[dict[str, Any]]:
    """Apply ``edits`` in order; the ``applied_edits`` entries of those that changed anything."""
    applied: list[dict[str, Any]] = []
    for edit in edits:
        if history.estimate_tokens() < edit.trigger:
            continue
        excluded = {t.lower() for t in edit.exclude_tools}
        used = {u.name for m in history.messages for u in m.tool_uses}
        tools = sorted(t for t in used if t.lower() not in excluded)
        reports = [
            _apply(
                manager,
                history,
                MicroCompact(edit.keep, tools=tools, min_saving=edit.clear_at_least),
            )
        ]
        if edit.clear_tool_inputs:
            named = tools if isinstance(edit.clear_tool_inputs, bool) else edit.clear_tool_inputs
            kept = [t for t in named if t.lower() not in excluded]
            reports.append(_apply(manager, history, ClearToolInputs(edit.keep, tools=kept)))
        done = [r for r in reports if r is not None]
        if done:
            applied.append(
                {
                    "type": CLEAR_TOOL_USES,
                    "cleared_tool_uses": max(int(r.details.get("cleared", 0)) for r in done),
                    "cleared_input_tokens": sum(r.saved for r in done),
                }
            )
    return applied


def _apply(
    manager: ContextManager, history: ConversationHistory, strategy: Strategy
) -> StrategyReport | None:
    """The report of ``strategy`` applied through the manager's guarded path; None when it
    changed nothing (or was refused: the view stays as it was, the ladder still runs)."""
    try:
        report = manager.apply(history, strategy, trigger=CLEAR_TOOL_USES)
    except CompactionError as exc:
        log.warning("%s not applied: %s", CLEAR_TOOL_USES, exc)
        return None
    return report if report.applied else None
