"""A tool step SpecStory's CLI (Markdown v2.1.0) draws by its fields, read back as the call: the
arguments the agent sent, and the text the tool returned.

For a tool it has no layout of its own for (VS Code Copilot's ``read_file``,
``run_in_terminal``, ``grep_search``, ``replace_string_in_file``; Claude Code's ``Skill`` and
``ToolSearch``), the CLI writes the call's arguments as a list under ``**Input:**`` and the answer
in a fence under ``**Result:**``, as in openbmc/bmcweb's and nndeploy/nndeploy's
``.specstory/history`` (Apache-2.0)::

    **Input:**

    - command: `git push gerrit HEAD:refs/for/master`
    - oldString:

    ```
    several lines
    ```

    **Result:**

    ```
    Enumerating objects: 15, done.
    ```

Stored as the step's text, the call had no input (its command, file and search were lines of the
result, where neither the summary nor failure recognition looks for them). A value the CLI wrote
in backticks or in a fence goes back under its name, as the text it shows (Go's ``fmt``
rendering of a list, ``[a b]``, stays as written).

VS Code's answers are often the prompt its tool rendered for the model (``@vscode/prompt-tsx``),
which the CLI writes as that tree's JSON (``{"node":{"children":[…]}}``, cut after a line with
``… (output truncated)``): the model read the tree's text pieces in order, so the result is those
pieces (a piece marked ``lineBreakBefore`` starts a line), with the cut marked as the CLI
marked it; the tree itself is kept whole (``FieldsStep.kept``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from contextwarden.formats.specstory_steps import Part, parts_of

INPUT, RESULT = "**Input:**", "**Result:**"
_FIELD = re.compile(r"^- (?P<key>[A-Za-z_][\w.-]*):(?: `(?P<value>.*)`)?\s*$")
"""One argument: ``- key: `value``` on its line, or ``- key:`` over a fence holding it."""
_TREE = '{"node":'
"""How the JSON of a rendered ``prompt-tsx`` tree opens."""
_PIECE = re.compile(
    r'"lineBreakBefore"\s*:\s*(?P<brk>true|false)|"text"\s*:\s*"(?P<text>(?:[^"\\]|\\.)*)"'
)
"""A tree's text pieces and the line-break flag that comes before each, read in document order
(a token scan: the CLI cuts long trees mid-JSON, where a parser would read nothing)."""
_CUT = "… (output truncated)"
"""The line the CLI writes after a result it cut."""


@dataclass(frozen=True, slots=True)
class FieldsStep:
    """A step read back: the call's arguments, the tool's answer, and the tree it was drawn
    from (``{"result_tree": json}``, when the answer was one)."""

    tool_input: dict[str, str]
    output: str
    kept: dict[str, Any]


def fields_step(body: list[str]) -> FieldsStep | None:
    """The call a step's lines record in the CLI's field layout, or None when the step is in
    another layout (no ``**Input:**`` line first) or holds a line the layout does not explain."""
    parts = parts_of(body)
    if not parts or parts[0].info is not None or parts[0].lines[0].strip() != INPUT:
        return None
    tool_input: dict[str, str] = {}
    rest = parts[1:]
    while rest and not _is(rest[0], RESULT):
        field = _FIELD.match(rest[0].lines[0]) if rest[0].info is None else None
        if field is None:
            return None
        if field["value"] is not None:
            tool_input[field["key"]] = field["value"]
            rest = rest[1:]
        elif len(rest) > 1 and rest[1].info is not None:
            tool_input[field["key"]] = rest[1].inner
            rest = rest[2:]
        else:
            return None
    answer = rest[1:]
    if len(answer) > 1 or (answer and answer[0].info is None):
        return None
    output = answer[0].inner if answer else ""
    tree = output.split("\n", 1)[0] if output.startswith(_TREE) else None
    if tree is None:
        return FieldsStep(tool_input, output, {})
    text, cut = tree_text(tree), output[len(tree) :].strip()
    if cut:
        text += cut if text.endswith("\n") or not text else f"\n{cut}"
    return FieldsStep(tool_input, text, {"result_tree": output})


def _is(part: Part, label: str) -> bool:
    return part.info is None and part.lines[0].strip() == label


def tree_text(tree: str) -> str:
    """The text a rendered ``prompt-tsx`` tree's JSON holds, piece by piece (whole or cut)."""
    out: list[str] = []
    breaks = False
    for piece in _PIECE.finditer(tree):
        if piece["brk"] is not None:
            breaks = piece["brk"] == "true"
            continue
        text = json.loads(f'"{piece["text"]}"')
        if breaks and text and out and not out[-1].endswith("\n"):
            out.append("\n")
        if text:
            out.append(text)
        breaks = False
    return "".join(out)
