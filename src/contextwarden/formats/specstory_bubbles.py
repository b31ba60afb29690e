"""The tool steps of SpecStory's early-2025 Cursor layout, read from the lines the extension
itself wrote for them: there is no tool marker, only fixed wording.

From about February to April 2025 the SpecStory extension saved a Cursor agent turn as its
bubbles, each after a ``_****_`` line and up to the next ``---``: the model's text, or a tool
call rendered in the extension's own words (read across the ``.specstory/history`` and
``chop-logs`` files of idvorkin/Settings, idvorkin/idvorkin.github.io, idvorkin/nlp and
idvorkin/omnifocus_cli, and twardoch/nyord-vpn's)::

    Read file: src/app.py                                         (read_file)

    ```bash                                                        (run_terminal_cmd)
    pytest -q
    ```

    ```
    <the terminal's output, when it ran>
    ```

    ### Rule: NAME                                                 (fetch_rules)

    **the rule's description**

    ```markdown
    the rule's text, its fence closed at the end of its last line```

A bubble is read as a call only when it is wholly one of these shapes, so prose that mentions
"Read file" or shows a command among other lines stays prose. The rules a ``fetch_rules`` call
brought back (one heading per rule; edobry/minsky's ``.specstory/history``, April-May 2025) are
the project's instructions, not the model's words: read as prose, their "NEVER …" lines filled
the summary's decisions. The loader keeps these turns as text, as the export holds them; the
summarizer reads the steps as the calls they record (``summarizers/textcalls.py``). Also the
extension's, and left as text: a search or a listing (``<details>`` over ``<summary>Searched
codebase "q" • **N** results</summary>``, ``Grep search for``, ``Searched web``, ``Listed
directory d``), whose hits name the files the agent
saw and are read as such only in text (a search's answer is never scanned for files: read as
calls, the files only ever found by a search left the fit sessions' summaries); an edit (a bare
```` ```diff ```` fence, which names no file); ``Cancelled``; and a step whose file SpecStory
could not name (``Read file: undefined``).

From about May 2025 the extension dropped the ``_****_`` line: the bubbles of a turn are only
the ``---`` lines between them (iterative/dvc's ``.specstory/history`` on
``refs/pull/10769/head``, June 2025), so a turn with no ``_****_`` is read bubble by bubble at
its ``---`` lines, and its first bubble from the turn's start. Either way, a call Cursor
refused is a bubble of Cursor's own error line alone: ``Could not find file 'X' in the
workspace.`` (twardoch/nyord-vpn's, as in buildermethods/agent-os#25), ``Error calling
tool.``, ``Model failed to call the tool with correct arguments.`` (the wording Cursor rules
in public repositories tell the model how to recover from), and, for a folder ``list_dir``
could not find, ``Could not resolve URI: Error: …`` with the editor's message: read as a call
that failed.

From about July 2025 the extension shows an edit with no tool marker as a bubble that is wholly
a ``<details>`` block: ``<details><summary>Edit file: X</summary>``, the edit's instructions on
a line of their own (``undefined`` when the model gave none), then each chunk of the diff it
made (``**Chunk N**``, ``Lines added: A, lines removed: B``, a ```` ```diff ```` fence), then
``</details>`` (twardoch/lmstrix, daviswhitehead/chef-chopsky, robin-collins/next-ppdb and
design4pro/mcp-rag-server, July to September 2025: some 1,300 such edits). It is read as
Cursor's ``edit_file`` call (``target_file``, ``instructions``) answered by the chunks: read as
prose, the files a session changed this way were at most files it had read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextwarden.formats.specstory_markdown import SEPARATOR, after_separator, fence_after
from contextwarden.formats.specstory_steps import Step, parts_of

BUBBLE = "_****_"
"""The line the extension opens each bubble of an agent turn with."""
SEPARATED = re.compile(rf"^[ \t]*{re.escape(SEPARATOR)}[ \t]*$", re.M)
"""A ``---`` line: where a bubble ends (and, with no ``_****_`` line, the next one opens)."""
_READ = re.compile(r"^Read file: (?P<path>\S.*?)\s*$")
_UNNAMED = "undefined"
"""What the extension wrote where it could not name the file read."""
_REFUSED = re.compile(
    r"^(?:Could not find file '(?P<path>[^']+)' in the workspace\.|Error calling tool\."
    r"|Model failed to call the tool with correct arguments\.)$"
)
"""Cursor's answer to a call it could not make, as the bubble shows it (the whole bubble)."""
_NO_FOLDER = re.compile(r"^Could not resolve URI: Error: (?:.*'(?P<path>[^']+)'|.+)$")
"""Cursor's answer to a ``list_dir`` of a folder that does not exist: its prefix, then the
editor's message in the editor's language (``Unable to resolve nonexistent file 'X'``;
cursor/cursor#3284 shows it in Chinese), which ends on the folder named."""
_EDIT = re.compile(r"^<details><summary>Edit file: (?P<path>\S.*?)</summary>$")
"""How the extension opens an edit it shows with no tool marker (from about July 2025): the
file, then Cursor's ``instructions`` for the edit on a line of their own (``undefined`` when
there were none) and the chunks of its diff, up to ``</details>``."""
_DETAILS_END = "</details>"
_CHUNK = re.compile(r"^\*\*Chunk \d+\*\*$")
"""The heading of each chunk of an edit's diff."""
_RULE = re.compile(r"^### Rule: (?P<name>\S.*?)\s*$")
"""How the extension heads each rule a ``fetch_rules`` call brought back (the rule's name)."""
_RULE_BODY = re.compile(r"^\*\*.*\*\*$|^```markdown$")
"""What follows a rule's heading: its description in bold, then its text in a ``markdown``
fence."""
_SHELL_INFO = "bash"
"""The info string of the fence the extension writes a terminal command in (its output
follows in a fence with none)."""


def bubbled(text: str) -> Sequence[str | Step] | None:
    """``text`` (an agent turn in this layout) as its prose and the steps read in it, in
    order; None when no bubble is a step. The prose keeps every line that is not a step's but
    the layout lines around it."""
    opener = BUBBLE if BUBBLE in text else SEPARATOR
    # with no ``_****_`` line a bubble opens after each ``---``, the first at the turn's start
    lines = text.split("\n") if opener == BUBBLE else [SEPARATOR, *text.split("\n")]
    out: list[str | Step] = []
    kept: list[str] = []
    fence: str | None = None
    number = 0
    while number < len(lines):
        raw = lines[number]
        if fence is None and raw.strip() == opener:
            end, step = _bubble(lines, number + 1, opener)
            if step is None:
                kept.extend(lines[number:end])
            else:
                out.extend([*_prose(kept), step])
                kept = []
            number = end
            continue
        fence = fence_after(raw, fence)
        kept.append(raw)
        number += 1
    if not out:
        return None
    return [*out, *_prose(kept)]


def _prose(lines: list[str]) -> list[str]:
    """The prose between two steps, without the layout lines around it (none when it is only
    layout: the ``---`` and ``_****_`` lines between two steps)."""
    layout = ("", SEPARATOR, BUBBLE)
    start, end = 0, len(lines)
    while start < end and lines[start].strip() in layout:
        start += 1
    while end > start and lines[end - 1].strip() in layout:
        end -= 1
    return ["\n".join(lines[start:end])] if start < end else []


def _bubble(lines: list[str], start: int, opener: str) -> tuple[int, Step | None]:
    """Where the bubble whose lines start at ``start`` ends, and the step it is (None: prose).

    Bubble by bubble: a bubble whose fences do not pair up (an edit of a file that holds
    fences) ends at the next bubble and leaves no fence open after it. With no ``_****_``
    line to find the next bubble by, such an edit can pair its stray fence with a later
    bubble's and swallow the bubbles between; a step's own shape holds no ``---`` outside its
    fences, so a bubble that is not a step is read once more up to its next ``---`` line.
    Rules brought back by ``fetch_rules`` are read up to that line first (``_rules``)."""
    separated = next((n for n in range(start, len(lines)) if _separates(lines[n])), len(lines))
    rules = _rules(lines[start:separated])
    if rules:
        return separated, Step("fetch_rules", rules, "\n".join(lines[start:separated]).strip())
    end = _bubble_end(lines, start)
    step = read(lines[start:end])
    if step is not None or opener == BUBBLE:
        return end, step
    end = min(end, separated)
    return end, read(lines[start:end])


def _separates(line: str) -> bool:
    """Whether ``line`` is a ``---`` line, where a bubble ends."""
    return line.strip() == SEPARATOR


def _bubble_end(lines: list[str], start: int) -> int:
    """The index of the ``---`` line closing the bubble whose lines start at ``start``: the
    first outside a code fence, or, when the bubble's fences do not pair up, the one above the
    next bubble."""
    fence: str | None = None
    for number in range(start, len(lines)):
        if fence is None and _separates(lines[number]):
            return number
        fence = fence_after(lines[number], fence)
    if fence is None:
        return len(lines)
    for number in range(start + 1, len(lines)):
        if lines[number].strip() == BUBBLE and after_separator(lines, number):
            return next(n for n in range(number - 1, start - 1, -1) if lines[n].strip())
    return len(lines)


def read(body: list[str]) -> Step | None:
    """The call a bubble's lines are, or None when they are anything else."""
    edit = _edit(body)
    if edit is not None:
        return edit
    found = parts_of(body)
    if not found:
        return None
    first = found[0]
    if first.info == _SHELL_INFO and len(found) <= 2:
        output = found[1] if len(found) == 2 else None
        if output is not None and output.info != "":
            return None
        answer = output.inner if output is not None else ""
        return Step("run_terminal_cmd", {"command": first.inner}, answer)
    if len(found) != 1 or found[0].info is not None:
        return None
    line = found[0].lines[0].strip()
    no_folder = _NO_FOLDER.match(line)
    if no_folder is not None:
        folder = {"relative_workspace_path": no_folder["path"]} if no_folder["path"] else {}
        return Step("list_dir", folder, line, refused=True)
    refused = _REFUSED.match(line)
    if refused is not None:
        named = {"target_file": refused["path"]} if refused["path"] else {}
        return Step("read_file" if named else "unknown", named, line, refused=True)
    read_file = _READ.match(line)
    if read_file is None or read_file["path"] == _UNNAMED:
        return None
    return Step("read_file", {"target_file": read_file["path"]}, "")


def _edit(body: list[str]) -> Step | None:
    """Cursor's ``edit_file`` call a bubble that is wholly an edit's ``<details>`` shows (its
    file, and its instructions when it had some), answered by the chunks of the diff it made;
    None for any other bubble."""
    shown = [n for n, line in enumerate(body) if line.strip()]
    opened = _EDIT.match(body[shown[0]].strip()) if shown else None
    if opened is None or body[shown[-1]].strip() != _DETAILS_END or parts_of(body) is None:
        return None
    tool_input = {"target_file": opened["path"]}
    first = shown[1] if len(shown) > 2 else shown[-1]
    said = body[first].strip()
    if first != shown[-1] and not _CHUNK.match(said):
        if said != _UNNAMED:
            tool_input["instructions"] = said
        first += 1
    return Step("edit_file", tool_input, "\n".join(body[first : shown[-1]]).strip("\n"))


def _rules(body: list[str]) -> dict[str, list[str]]:
    """The input of the ``fetch_rules`` call a bubble answers when it opens on a rule's
    heading and then its description or its fence (empty when it does not): the names of
    the rules it holds. The extension writes a rule's closing fence at the end of the rule's
    last line, not on a line of its own, so the fences need not pair up and the headings are
    read line by line."""
    text = [line for line in body if line.strip()]
    if len(text) < 2 or not _RULE.match(text[0]) or not _RULE_BODY.match(text[1].strip()):
        return {}
    return {"rule_names": [found["name"] for line in text if (found := _RULE.match(line))]}
