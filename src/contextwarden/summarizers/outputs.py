"""How a harness frames a program's output or a tool's message: the exit code it shows, its
status lines, a result given as a JSON object (Codex) read back as the program's own lines, an
export's ``Result:`` frame, Claude Code's ``<tool_use_error>`` tag.

``failures`` judges an output from what the program printed; this room knows what the harness
put around it.
"""

from __future__ import annotations

import json
import re

from contextwarden.summarizers.code_mode import SCRIPT_ERROR, ScriptAnswer, script_answer
from contextwarden.summarizers.gemini_shell import shell_result_output
from contextwarden.summarizers.remembered import Remembered

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
STREAM_MARK = "[std"
"""What every ``STREAM_PREFIX`` holds (``without``)."""
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
``shell``), after another harness's header, or in what a Codex code-mode script showed
(``{"chunk_id":…,"exit_code":1,…,"output":"…"}``, ``code_mode``)."""


_SHOWN_RESULTS = re.compile(rf"{_JSON_OUTPUT.pattern}|^\[\{{\"[a-z_]+\":", re.M)
"""Where a code-mode script shows a command result, or an array of them, as JSON."""
_UNSTARTED = re.compile(r"exec_command failed for `.*`: (?P<why>.*)")
"""Codex's answer when it could not start a command (``exec_command failed for `CMD`: ERR``,
``ERR`` the error's Rust ``Debug`` form: ``codex-rs/core/src/tools/handlers/unified_exec.rs``),
to a direct call or, thrown, to a code-mode script's: the command named again, then why. Only
an answer that opens so is one: a log a command shows may quote it."""
_REJECTED = re.compile(r'Rejected\(\\*"(?:`.*` )?(?P<reason>.*?)\\*"\)')
"""…where a policy or the person refused it: ``CreateProcess { message: "Rejected(\\"`CMD`
rejected: rm -f style commands are not permitted\\")" }``, ``Rejected(\\"rejected by
user\\")``."""


def unstarted(text: str) -> str | None:
    """Why Codex could not start a command (``_UNSTARTED``): a refusal's reason, else the error,
    the command it names left out; None for any other output."""
    found = _UNSTARTED.match(text.lstrip())
    if found is None:
        return None
    rejected = _REJECTED.search(found.group("why"))
    return rejected.group("reason") if rejected is not None else found.group("why")


def program_output(text: str) -> str:
    """``text`` with a command's result given as a JSON object read as what the program showed:
    ``Exit code: N`` and the output's own lines (its escaped newlines decoded).

    Codex writes ``{"exit_code":1,"output":"…"}`` or ``{"output":"…","metadata":{"exit_code":1,
    …}}``: read as it is stored, that is one long line with no exit code a reader knows. Gemini
    CLI's shell result is read as its output, error and exit code fields (``gemini_shell``), a
    Codex code-mode script's answer as what it showed (``_script_output``). Any
    other text, and JSON of another shape (a tool's reply, a file's contents), is returned
    unchanged.
    """
    fields = shell_result_output(text)
    if fields is not None:
        return fields
    answer = script_answer(text)
    if answer is not None:
        return _script_output(answer)
    if not text.rstrip().endswith("}"):  # most outputs: no scan for an object's start
        return text
    found = _JSON_OUTPUT.search(text)
    if found is None:
        return text
    try:
        value = json.loads(text[found.start() :])
    except (ValueError, RecursionError):  # malformed, or nested too deeply for the parser
        return text
    code = _result_code(value)
    if code is None:
        return text
    return f"{text[: found.start()]}Exit code: {code}\n{value['output']}"


def _script_output(answer: ScriptAnswer) -> str:
    """What a Codex code-mode script showed, its harness's header left out: each command result
    it showed whole (``JSON.stringify(r)``: ``{"exit_code":1,…,"output":"…"}``; several in an
    array, ``JSON.stringify(await Promise.all([…]))``) as its output's lines, under one ``Exit
    code: N`` line, the first that is not 0 (a script that runs several commands failed when one
    did); what the script threw last, after ``Script error:``."""
    parts: list[str] = []
    codes: list[int] = []
    at = 0
    for found in _SHOWN_RESULTS.finditer(answer.shown):
        if found.start() < at:
            continue
        try:
            value, end = json.JSONDecoder().raw_decode(answer.shown, found.start())
        except (ValueError, RecursionError):
            continue
        results = value if isinstance(value, list) else [value]
        found_codes = [_result_code(result) for result in results]
        if not all(code is not None for code in found_codes):
            continue
        parts.append(answer.shown[at : found.start()])
        parts.extend(result["output"] for result in results)
        codes.extend(code for code in found_codes if code is not None)
        at = end
    shown = "".join(parts) + answer.shown[at:]
    if codes:
        shown = f"Exit code: {next((c for c in codes if c), 0)}\n{shown}"
    return f"{shown}\n{SCRIPT_ERROR}{answer.error}" if answer.error else shown


def _result_code(value: object) -> int | None:
    """The exit code of a command's result given as a JSON object (Codex's ``{"exit_code":1,
    "output":"…"}`` or ``{"output":"…","metadata":{"exit_code":1,…}}``), or None for JSON of
    another shape (a tool's reply, a file's contents)."""
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return None
    metadata = value.get("metadata")
    code = value.get("exit_code", metadata.get("exit_code") if isinstance(metadata, dict) else None)
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def exit_status(text: str) -> int | None:
    """The exit code an output shows near its start or end, or None when it shows none."""
    return _status(text)


_status = Remembered(lambda text: shown_status(program_output(text)))
"""An output's exit code is asked for by each reading of it (its failure, its files, its
command's verdict) at every compaction; reading a JSON result or a code-mode answer as the
program's output each time is most of what that costs."""


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


def without(pattern: re.Pattern[str], text: str, *marks: str) -> str:
    """``text`` with ``pattern``'s matches taken out, where ``marks`` are strings one of which
    every match holds: a text holding none of them is returned as it is, unscanned. A pattern
    anchored at each line's start is tried at every place of a long output; looking for a
    string is a fast scan in C."""
    return pattern.sub("", text) if any(mark in text for mark in marks) else text
