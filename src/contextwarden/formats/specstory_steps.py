"""What a SpecStory tool step's lines say of the call: the answer the tool gave, and whether
the agent was told that the call failed.

The shapes are the SpecStory CLI's own (``specstory-cli/pkg/providers/claudecode/
markdown_tools.go`` and ``codexcli/markdown_tools.go``, Apache-2.0): the tool's output follows
the call in a ```` ```text ```` fence (a plain fence after ``Result:`` or ``Error:`` in 2025's
bare steps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contextwarden.formats.specstory_markdown import FENCE, fence_after

_OUTPUT_INFO = "text"
"""The info string of the fence the CLI writes a tool's output in."""
_TOOL_ERROR = "<tool_use_error>"
"""How Claude Code wraps a call it refused (a file not read first, a string not found)."""
_EXIT = re.compile(r"^Exit code:? (?P<code>-?\d+)$")
"""The first line of Claude Code's answer to a Bash command that failed (``Exit code 127``),
and of the CLI's rendering of a Codex command's answer (``Exit code: 1``, then ``Wall time``)."""
_ERROR_HEAD = "Error:"
"""What 2025's bare steps write above a failed call's answer (``Result:`` above the others), as
in specstoryai/tnyOffice's ``.specstory/history`` (``Tool use: **Bash**`` … ``Error:``)."""


@dataclass(frozen=True, slots=True)
class _Part:
    """A run of a step's lines: a fence (``info`` its info string) or one line of text."""

    lines: tuple[str, ...]
    info: str | None = None

    @property
    def inner(self) -> str:
        return "\n".join(self.lines[1:-1])


def _parts(lines: list[str]) -> list[_Part] | None:
    """The non-blank lines and the fences, in order (None: a fence never closes)."""
    parts: list[_Part] = []
    fence: str | None = None
    opened: list[str] = []
    for raw in lines:
        after = fence_after(raw, fence)
        if fence is None and after is None:
            if raw.strip():
                parts.append(_Part((raw,)))
        elif fence is None:
            opened = [raw]
        elif after is None:
            opened.append(raw)
            found = FENCE.match(opened[0])
            parts.append(_Part(tuple(opened), found["info"].strip() if found else ""))
        else:
            opened.append(raw)
        fence = after
    return None if fence is not None else parts


def failed(body: list[str]) -> bool:
    """True when a step says its call failed: the answer (its last ```` ```text ```` or plain
    fence) is headed ``Error:`` instead of ``Result:`` (2025's bare steps), or opens with
    Claude Code's refusal or a non-zero exit code."""
    parts = _parts(body) or []
    answers = [n for n, part in enumerate(parts) if part.info in (_OUTPUT_INFO, "")]
    if not answers:
        return False
    at = answers[-1]
    if at and parts[at - 1].info is None and parts[at - 1].lines[0].strip() == _ERROR_HEAD:
        return True
    first = parts[at].inner.lstrip().split("\n", 1)[0].strip()
    exited = _EXIT.match(first)
    return first.startswith(_TOOL_ERROR) or bool(exited and exited["code"] != "0")
