"""How a harness frames a program's output or a tool's message: the exit code it shows, its
status lines, a result given as a JSON object (Codex) read back as the program's own lines, an
export's ``Result:`` frame, Claude Code's ``<tool_use_error>`` tag.

``failures`` judges an output from what the program printed; this room knows what the harness
put around it.
"""

from __future__ import annotations

import json
import re

from contextwarden.summarizers.gemini_shell import shell_result_output

SCAN_CHARS = 600
"""Exit codes are looked for only this far from the start and from the end of an output, where
the tools print them, so a number in the middle of a log is not taken for one."""

EXIT_RES = (
    re.compile(r"^Exit code:? (\d+)\s*$", re.M),
    re.compile(r"Process exited with code (\d+)"),
    re.compile(r"<returncode>(\d+)</returncode>"),
    re.compile(r"<exit_code>(\d+)</exit_code>"),  # Claude Code's TaskOutput of a background shell
    re.compile(r"\[Command finished with exit code (\d+)\]"),
    re.compile(r"\bexit(?:ed with)? (?:code|status):? (\d+)\b", re.I),
)
_STATUS_LINES = (
    "Command:",  # Gemini CLI's shell tool
    "Directory:",
    "Chunk ID:",
    "Wall time:",
    "Original token count:",
    "Output:",
    "<returncode>",  # mini-swe-agent's wrapping
    "<retrieval_status>",  # Claude Code's TaskOutput: the background task, then its output
    "<task_id>",
    "<task_type>",
    "<status>",
    "<exit_code>",
    "<output>",
    "</output>",
    "<output_head>",  # … and of an output too long to show whole: its head and tail
    "</output_head>",
    "<output_tail>",
    "</output_tail>",
)
"""How a harness frames an output (Codex, mini-swe-agent): never the line that says what failed."""
STREAM_PREFIX = re.compile(r"^\[std(?:err|out)\] ", re.M)
"""The stream a harness names before a background command's line (Claude Code's task output:
``[stderr] jq: parse error: …``): not the program's."""
RESULT_HEAD = re.compile(r"^(?:\*\*)?Result:(?:\*\*)?$")
FRAME_LINE = re.compile(rf"^```[\w-]*$|{RESULT_HEAD.pattern}")
"""How an export frames a tool's message (SpecStory's Markdown: ``Result:`` or
``**Result:**``, the call's input above it, then the message in a code fence): never its first
line."""
TOOL_ERROR_TAG = re.compile(r"</?tool_use_error>")
TOOL_ERROR = re.compile(r"<tool_use_error>(.*?)</tool_use_error>", re.S)
"""Claude Code's message for a call it refused or that failed (``<tool_use_error>File has not
been read yet. Read it first before writing to it.</tool_use_error>``): an export (SpecStory's
Markdown) shows the call's input above it, the content written, which is not what failed."""
READ_REFUSED = re.compile(r"\A\s*File too large to read at once \(\d[\d.]* [KMG]?B\)\.")
"""Copilot CLI's ``view`` in place of a file's contents when it did not read the file (``File
too large to read at once (42.1 KB). Consider using the grep tool …``; ``success: true`` in its
session files' ``tool.execution_complete``): a read that did not happen, which Claude Code's
Read flags as an error (``File content (31441 tokens) exceeds maximum allowed tokens``)."""
READ_UNCHANGED = re.compile(
    r"\A\s*(?P<said>(?:Wasted call \u2014 f|F)ile unchanged since (?:your )?last [Rr]ead\b"
    r"[^.\n]*\.)"
)
"""Claude Code's Read in place of a file's contents when it deduplicated a re-read of a file
its tools did not change (changelog 2.1.86; ``FILE_UNCHANGED_STUB``: ``File unchanged since last
read. The content from the earlier Read tool_result …``, later ``Wasted call \u2014 file
unchanged since your last Read. Refer to that earlier tool_result instead.``, anthropics/
claude-code#60684), no error flag: a read that returned nothing, its content only in an earlier
result, which compaction may have cleared or summarized. Its first sentence says so."""
OUTPUT_WITHHELD = re.compile(
    r"\A\s*(?P<said>Output too large to read at once \(\d[\d.]* [KMG]?B\)\.) Saved to: \S"
)
"""Copilot CLI's answer in place of any tool's output too long to give (a shell command's, a
``glob``'s, an ``rg``'s: ``Output too large to read at once (20.2 KB). Saved to: /tmp/x.txt``,
then advice and a 500-character preview; ``large_output: true`` in its telemetry, ``success:
true``): what the call was for did not reach the model, which must read the saved file, as a
``view`` of a file too large (``READ_REFUSED``) did not read it. Its first sentence says so;
the temporary file's path after it is kept in no summary, which an agent rarely reads back
(1 of 12 on the study sets) and each later request would pay for."""
_JSON_OUTPUT = re.compile(r'^\{"[a-z_]+":', re.M)
"""Where a command's result given as a JSON object starts: the whole text (older Codex CLI's
``shell``), or after its harness's header (Codex's multi-agent and unified-exec rollouts:
``Script completed``, ``Output:``, then ``{"chunk_id":…,"exit_code":1,…,"output":"…"}``)."""


def program_output(text: str) -> str:
    """``text`` with a command's result given as a JSON object read as what the program showed:
    ``Exit code: N`` and the output's own lines (its escaped newlines decoded).

    Codex writes ``{"exit_code":1,"output":"…"}`` or ``{"output":"…","metadata":{"exit_code":1,
    …}}``: read as it is stored, that is one long line with no exit code a reader knows. Gemini
    CLI's shell result is read as its output, error and exit code fields (``gemini_shell``). Any
    other text, and JSON of another shape (a tool's reply, a file's contents), is returned
    unchanged.
    """
    fields = shell_result_output(text)
    if fields is not None:
        return fields
    if not text.rstrip().endswith("}"):  # most outputs: no scan for an object's start
        return text
    found = _JSON_OUTPUT.search(text)
    if found is None:
        return text
    try:
        value = json.loads(text[found.start() :])
    except ValueError:
        return text
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return text
    metadata = value.get("metadata")
    code = value.get("exit_code", metadata.get("exit_code") if isinstance(metadata, dict) else None)
    if not isinstance(code, int) or isinstance(code, bool):
        return text
    return f"{text[: found.start()]}Exit code: {code}\n{value['output']}"


def exit_status(text: str) -> int | None:
    """The exit code an output shows near its start or end, or None when it shows none."""
    return shown_status(program_output(text))


def shown_status(text: str) -> int | None:
    """``exit_status`` of an output already read as the program's (``program_output``)."""
    for window in (text[:SCAN_CHARS], text[-SCAN_CHARS:]):
        for pattern in EXIT_RES:
            found = pattern.search(window)
            if found:
                return int(found.group(1))
    return None


def is_status_line(line: str) -> bool:
    return any(p.fullmatch(line) or p.match(line) for p in EXIT_RES[:2]) or line.startswith(
        _STATUS_LINES
    )


def harness_message(text: str) -> str:
    """What the last ``<tool_use_error>`` of ``text`` says when it has one (``TOOL_ERROR``),
    else ``text`` without the tag."""
    tagged = TOOL_ERROR.findall(text)
    return tagged[-1] if tagged else TOOL_ERROR_TAG.sub("", text)
