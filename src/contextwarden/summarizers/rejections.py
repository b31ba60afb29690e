"""A tool call the person refused to let run: how each harness words its notice.

A refused call never ran, so it did not fail, and a later call that succeeds does not fix it:
the refusal is the person's decision. ``failures`` quotes a notice no harness flagged;
``facts`` files a refusal with the decisions.
"""

from __future__ import annotations

from contextwarden.model import ToolResultBlock
from contextwarden.summarizers.outputs import FRAME_LINE, RESULT_HEAD, TOOL_ERROR_TAG

REJECTION_NOTICES = (
    "The user doesn't want to proceed with this tool use",  # Claude Code
    "Action rejected:",  # OpenHands V1's UserRejectObservation (formats.openhands_v1)
    "The user chose to skip the tool call",  # VS Code's Copilot Chat, on the person's Skip
)
"""How an agent harness opens the result of a tool call the person refused to let run (some
flag it an error, VS Code's does not)."""


def is_rejection_notice(text: str) -> bool:
    """True when ``text`` (a result, or the excerpt a summary quotes of one) opens with the
    notice of a refused call (``REJECTION_NOTICES``; Claude Code prefixes it "Error: " on some
    versions)."""
    return text.lstrip().removeprefix("Error: ").startswith(REJECTION_NOTICES)


def is_rejection(result: ToolResultBlock) -> bool:
    """True when the person refused the call ``result`` answers: the harness flagged it an
    error and wrote its rejection notice (a harness that flags none: ``failure_excerpt`` quotes
    its notice). The call never ran, so it did not fail and a later call that succeeds does not
    fix it: the refusal is the person's decision."""
    return result.is_error and is_rejection_notice(TOOL_ERROR_TAG.sub("", result.text))


def refusal(text: str) -> str | None:
    """The line of a rejection notice that opens what the tool answered (after an export's
    ``Result:`` heading, when it shows the call's input above one), or None."""
    if not any(notice in text for notice in REJECTION_NOTICES):  # most results: no split
        return None
    lines = TOOL_ERROR_TAG.sub("", text).splitlines()
    heads = [i for i, line in enumerate(lines) if RESULT_HEAD.match(line.strip())]
    answer = [n.strip() for n in lines[heads[-1] + 1 if heads else 0 :] if n.strip()]
    opening = next((n for n in answer if not FRAME_LINE.match(n)), "")
    return opening if is_rejection_notice(opening) else None
