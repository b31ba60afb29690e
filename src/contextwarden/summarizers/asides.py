"""Decisions said outside the assistant's own text: in its reasoning (thinking blocks) and in a
sub-agent's report, of which a summary keeps only the lines their author labels.

Claude Code delivers a background agent's final report in the user role, as a
``<task-notification>`` whose ``<result>`` element holds the agent's answer (``typed`` drops the
element from what the person typed). Reasoning and reports are long and dense with the words
``decisions`` reads as a reason or a choice; read whole, they push the assistant's own decisions
out of a summary's room (thinking read whole: 20 probes of fresh set 4 lost; reports read whole:
8; ``docs/benchmarks.md``). A line labelled as the cause or the choice ("**Root cause:** …",
"**Execution Strategy:** …") is one the author meant to be read as such.
"""

from __future__ import annotations

import re

from contextwarden.model import Message, TextBlock, ThinkingBlock
from contextwarden.summarizers.decisions import decisions, labelled

_REPORT = re.compile(r"<task-notification>.*?<result>(.*?)</result>", re.S)
"""A background agent's report in Claude Code's notification."""


def aside_decisions(message: Message) -> list[str]:
    """The labelled decisions of ``message``'s thinking blocks and of the sub-agent reports its
    texts deliver, in order."""
    found: list[str] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock):
            found += decisions(block.thinking)
        elif isinstance(block, TextBlock) and message.role == "user":
            for report in _REPORT.finditer(block.text):
                found += decisions(report.group(1))
    return [decision for decision in found if labelled(decision)]
