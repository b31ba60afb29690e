"""A JSON document's string values read as the text they hold: the logs a tool returns inside JSON.

Many tools print JSON whose string values are logs or a program's output: ``gh … --json``
(a check run's ``output.text``, ``gh api …/jobs``), MCP servers' results (the GitHub server's
``get_job_logs``), skills' scripts (the gh-fix-ci skill's ``inspect_pr_checks.py`` prints each
failed job's ``logSnippet`` and ``logTail``). JSON escapes a string's line breaks as ``\\n``
(RFC 8259, section 7), so as stored such a log is one long line whose failure lines no reader
finds. Here each such value is read as its lines (a job log's without its timestamps), and every
other value as ``key: value``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import islice

from contextwarden.summarizers.commands import LOG_PREFIX

_DOCUMENT_START = re.compile(r"^[ \t]*[\[{]", re.M)
"""Where a JSON document may start: a line opening an object or an array. A harness may put
lines of its own before it (Codex's ``Script completed``, ``Output:``, its truncation
warnings)."""
DOCUMENT_STARTS = 3
"""How many such lines are tried as a document's start (a log line may open with ``[``)."""
_ESCAPED_BREAK = "\\n"
"""A line break as JSON writes it inside a string: no text without it holds a log in JSON."""


def json_text(text: str) -> str:
    """``text`` with a JSON document that ends it read as text: the lines before it as they
    are, then, for each of its values in order, a string holding line breaks as ``key:`` and
    its lines, any other value as ``key: value`` (a list's items under the list's key).

    Text holding no such document, or one whose strings hold no line break, is returned
    unchanged; only text holding an escaped line break and ending as a document ends is parsed.
    """
    if _ESCAPED_BREAK not in text or not text.rstrip().endswith(("}", "]")):
        return text
    for found in islice(_DOCUMENT_START.finditer(text), DOCUMENT_STARTS):
        try:
            value = json.loads(text[found.start() :])
            if not _holds_break(value):
                return text
            return text[: found.start()] + "\n".join(_value_lines("", value)) + "\n"
        except ValueError:
            continue
        except RecursionError:  # nested too deeply to parse or to walk: read as it is
            return text
    return text


def _holds_break(value: object) -> bool:
    """Some string in ``value`` holds a line break."""
    if isinstance(value, dict):
        return any(_holds_break(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_break(item) for item in value)
    return isinstance(value, str) and "\n" in value


def _value_lines(key: str, value: object) -> Iterator[str]:
    """The lines ``value`` (found under ``key``) reads as (``json_text``)."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _value_lines(str(name), item)
    elif isinstance(value, list):
        for item in value:
            yield from _value_lines(key, item)
    elif isinstance(value, str) and "\n" in value:
        yield f"{key}:"
        yield from _log_lines(value)
    else:
        shown = value if isinstance(value, str) else json.dumps(value)
        yield f"{key}: {shown}" if key else str(shown)


def _log_lines(value: str) -> list[str]:
    """The lines of a string value; a log that opens with a stamped line (GitHub's job logs API:
    a timestamp; ``gh run view --log``: the job and step before it, ``commands.LOG_PREFIX``) is
    read without its stamps, as a job's log a command printed is (``failures``): a line then
    ranks by what it says."""
    if LOG_PREFIX.match(value.lstrip("\n")) is None:
        return value.splitlines()
    return LOG_PREFIX.sub("", value).splitlines()
