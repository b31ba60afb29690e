"""Reading a summary's lists back in tests, as the next summary reads them (``carry``)."""

from __future__ import annotations

from contextwarden.summarizers.carry import carried_decisions, carried_findings

FIVE = "5. Problem Solving:\n"
"""Section 5's heading, put in front of a section's body so it reads as a summary."""


def _whole(text: str) -> str:
    return text if FIVE in text else f"{FIVE}{text}"


def findings_of(text: str) -> tuple[str, ...]:
    """The findings a summary (or its section 5's body) lists."""
    return carried_findings(_whole(text))


def decisions_of(text: str) -> tuple[str, ...]:
    """The decisions a summary (or its section 5's body) lists."""
    return carried_decisions(_whole(text))
