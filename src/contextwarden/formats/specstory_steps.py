"""What a SpecStory tool step's lines say of the call: whether the agent was told that it
failed, the patch a Codex step sent, and the call and answer a resumed session shows as plain
agent text.

The shapes are the SpecStory CLI's own (``specstory-cli/pkg/providers/claudecode/
markdown_tools.go``, Apache-2.0): a Bash step is its ``description`` line then
```` `command` ```` (a ```` ```bash ```` fence when the command has several lines); a Read step
`` `path``` (a space first); a Write step the ``content`` in a fence; an Edit step nothing but
its answer; the tool's output follows in a ```` ```text ```` fence (a plain fence after
``Result:`` or ``Error:`` in 2025's bare steps). ``specstory resume`` (``pkg/spi/
reconstruct.go``, ``FlattenSessionData``) folds each tool call of the source session into an
agent turn of exactly that text, with no ``<tool-use>`` wrapper: the resumed agent gets the
calls as text, so the loader keeps them as text, and the summarizer reads them back as the
calls they record (``summarizers/textcalls.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contextwarden.formats.specstory_markdown import FENCE, fence_after

_OUTPUT_INFO = "text"
"""The info string of the fence the CLI writes a tool's output in."""
_SHELL_INFO = "bash"
"""...and of the fence it writes a several-line Bash command in."""
_COMMAND = re.compile(r"^`(?P<command>[^`]+)`$")
_READ = re.compile(r"^ `(?P<path>[^`\s]+)`(?: (?P<description>\S.*))?$")
"""Claude Code's Read step: a space, the path in backticks, then its description if any."""
_CREATED = re.compile(r"^File created successfully at: (?P<path>\S.*?)(?: \(.*\))?$")
_UPDATED = re.compile(r"^The file (?P<path>\S.*?) has been updated\b")
"""Claude Code's answers to a Write and to an Edit (or a Write over a file), naming the file.
Claude Code 2.x glues a note on in parentheses (``File created successfully at: X (file state is
current in your context — no need to Read it back)``, as a SpecStory file of cocli shows): no
part of the path."""
_PATCH_HEAD = re.compile(r"^\*\*(?P<op>Add|Update|Delete): `(?P<path>[^`]+)`\*\*\s*$")
"""A file of a Codex patch step, as ``writePatchSection`` heads its diff."""
_TOOL_ERROR = "<tool_use_error>"
"""How Claude Code wraps a call it refused (a file not read first, a string not found)."""
_EXIT = re.compile(r"^Exit code:? (?P<code>-?\d+)$")
"""The first line of Claude Code's answer to a Bash command that failed (``Exit code 127``),
and of the CLI's rendering of a Codex command's answer (``Exit code: 1``, then ``Wall time``)."""
_ERROR_HEAD = "Error:"
"""What 2025's bare steps write above a failed call's answer (``Result:`` above the others), as
in specstoryai/tnyOffice's ``.specstory/history`` (``Tool use: **Bash**`` … ``Error:``)."""


@dataclass(frozen=True, slots=True)
class Step:
    """A tool call read from a step: the tool, the input it was sent, what it answered."""

    name: str
    tool_input: dict[str, Any]
    output: str
    refused: bool = False
    """True when the layout marks the call as one the agent could not make."""

    @property
    def failed(self) -> bool:
        return self.refused or _says_failed(self.output)


@dataclass(frozen=True, slots=True)
class Part:
    """A run of a step's lines: a fence (``info`` its info string) or one line of text."""

    lines: tuple[str, ...]
    info: str | None = None

    @property
    def inner(self) -> str:
        return "\n".join(self.lines[1:-1])


def parts_of(lines: list[str]) -> list[Part] | None:
    """The non-blank lines and the fences, in order (None: a fence never closes)."""
    parts: list[Part] = []
    fence: str | None = None
    opened: list[str] = []
    for raw in lines:
        after = fence_after(raw, fence)
        if fence is None and after is None:
            if raw.strip():
                parts.append(Part((raw,)))
        elif fence is None:
            opened = [raw]
        elif after is None:
            opened.append(raw)
            found = FENCE.match(opened[0])
            parts.append(Part(tuple(opened), found["info"].strip() if found else ""))
        else:
            opened.append(raw)
        fence = after
    return None if fence is not None else parts


def flattened(lines: list[str]) -> Step | None:
    """The call a whole agent turn shows in the CLI's tool layout, or None when the turn is
    anything else (prose, or a shape the layout does not make unambiguous)."""
    parts = parts_of(lines)
    if not parts or parts[-1].info != _OUTPUT_INFO:
        return None
    head, output = parts[:-1], parts[-1].inner
    if not head:
        return _answer_only(output)
    last = head[-1]
    described = (
        {"description": head[0].lines[0].strip()} if len(head) == 2 and head[0].info is None else {}
    )
    if len(head) > 2 or (len(head) == 2 and not described):
        return None
    command = _COMMAND.match(last.lines[0]) if last.info is None else None
    if command or last.info == _SHELL_INFO:
        text = command["command"] if command else last.inner
        return Step("Bash", {"command": text, **described}, output)
    first = output.splitlines()[0] if output else ""
    wrote = _CREATED.match(first) or _UPDATED.match(first)  # a new file, or one overwritten
    if last.info is not None and wrote:
        return Step("Write", {"file_path": wrote["path"], "content": last.inner}, output)
    read = _READ.match(last.lines[0]) if last.info is None and not described else None
    if read:
        facts = {k: v for k, v in read.groupdict().items() if v}
        return Step("Read", {"file_path": facts.pop("path"), **facts}, output)
    return None


def answered_file(line: str) -> str | None:
    """The file Claude Code's answer to a Write or an Edit names (its note left off), or None."""
    said = _CREATED.match(line) or _UPDATED.match(line)
    return said["path"] if said else None


def _answer_only(output: str) -> Step | None:
    """A step that shows only its answer: an Edit's (it names its file), or a refusal."""
    first = output.splitlines()[0] if output else ""
    updated = _UPDATED.match(first)
    if updated:
        return Step("Edit", {"file_path": updated["path"]}, output)
    if first.startswith(_TOOL_ERROR):
        return Step("unknown", {}, output)
    return None


def failed(body: list[str]) -> bool:
    """True when a step says its call failed: the answer (its last ```` ```text ```` or plain
    fence) is headed ``Error:`` instead of ``Result:`` (2025's bare steps), or opens with
    Claude Code's refusal or a non-zero exit code."""
    parts = parts_of(body) or []
    answers = [n for n, part in enumerate(parts) if part.info in (_OUTPUT_INFO, "")]
    if not answers:
        return False
    at = answers[-1]
    if at and parts[at - 1].info is None and parts[at - 1].lines[0].strip() == _ERROR_HEAD:
        return True
    return _says_failed(parts[at].inner)


def _says_failed(output: str) -> bool:
    """Claude Code's refusal, or a non-zero exit code, opens the answer."""
    first = output.lstrip().split("\n", 1)[0].strip()
    exited = _EXIT.match(first)
    return first.startswith(_TOOL_ERROR) or bool(exited and exited["code"] != "0")


def sent_patch(body: list[str]) -> tuple[str | None, list[str]]:
    """The patch a Codex ``apply_patch`` step shows, as the text the agent sent (the tool's
    input), and the block's other lines (its answer); ``(None, body)`` when it shows none.

    ``formatApplyPatch`` (``codexcli/markdown_tools.go``) drops the ``*** Begin Patch`` /
    ``*** End Patch`` envelope and writes each ``*** Add|Update|Delete File: X`` as a
    ``**Update: `X`**`` head over a ```` ```diff ```` fence of the lines under it: put back."""
    parts = parts_of(body) or []
    patch: list[str] = []
    rest: list[str] = []
    diff_at = -1  # the index of the diff under the last head
    for number, part in enumerate(parts):
        head = _PATCH_HEAD.match(part.lines[0]) if part.info is None else None
        if head:
            patch.append(f"*** {head['op']} File: {head['path']}")
            diff_at = number + 1
        elif number == diff_at and part.info == "diff":
            patch.extend(part.lines[1:-1])
        else:
            rest.extend(part.lines)  # neither a head nor the diff under one
    if not patch:
        return None, body
    return "\n".join(["*** Begin Patch", *patch, "*** End Patch"]), rest
