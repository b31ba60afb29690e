"""Failures an exit code 0 hides that microcompact cleared unread: a program's diagnostic from
inside a pipeline (the pipeline's status is its last command's) and FastAPI's 422 reply to a
script's HTTP call (the client raises on none). The judgement is the one both the summary's facts
and microcompact's kept lines ask, so a cleared result keeps the line the summary would quote."""

from __future__ import annotations

import pytest

from contextwarden.compaction.microcompact import FAILED_LINES_NOTE, failure_lines_kept
from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import failure_excerpt

SORTED_SIZES = "du -h -d 2 /overlay | sort -rh | head -n 20"
SORT_REFUSED = "** WARNING: connection is not post-quantum\nsort: unknown sort type\nExit Code: 0"


def _excerpt(text: str, command: str) -> str | None:
    return failure_excerpt(text, is_error=False, shell=True, command=command)


@pytest.mark.parametrize(
    "command",
    [
        SORTED_SIZES,
        f"ssh root@192.168.8.1 '\necho sizes\n{SORTED_SIZES}\n' > usage.txt",
        "/usr/bin/sort -k9 access.log | uniq -c",
    ],
)
def test_a_piped_stage_s_diagnostic_is_a_failure(command: str) -> None:
    assert _excerpt(SORT_REFUSED, command) == "sort: unknown sort type"


@pytest.mark.parametrize(
    ("command", "text"),
    [
        ("sort -rh sizes.txt", SORT_REFUSED),  # the last stage: its exit code 0 is its own
        ("du -h /overlay 2>&1 | sort -rh | head", "du: 12K\tsort: x"),  # stderr into the pipe
        ("du -h /overlay | sort -rh", "grep: x: one"),  # no grep in the command
        ("sort -rh big.txt | head -n 1", "sort: write failed: standard output: Broken pipe"),
        ("grep -r foo . | head", "grep: warning: stray \\ before -"),
        ("grep -r version pytorch/ | head -n 20", "grep: pytorch/a.pyc: binary file matches"),
        ("go get x@latest 2>/dev/null; go list -m all | tail -3", "go: upgraded x v1 => v2"),
        ("echo 'sort: unknown sort type'", "sort: unknown sort type"),  # sort is echo's text
    ],
)
def test_other_diagnostic_looking_lines_are_no_failure(command: str, text: str) -> None:
    assert _excerpt(text, command) is None


VALIDATION = (
    '{"detail":[{"type":"missing","loc":["body","file_size_bytes"],"msg":"Field required",'
    '"input":{"filename":"a.pdf"}}]}'
)
SCRIPT = (
    'uv run python3 -c "\nimport jwt, httpx\n'
    "client = httpx.Client(base_url='http://localhost:8000')\n"
    "r = client.post('/api/upload', json={'filename': 'a.pdf'})\n"
    'print(r.status_code)\nprint(r.text)\n"'
)


@pytest.mark.parametrize(
    "command", [SCRIPT, "python -c 'import requests; print(requests.post(URL).text)'"]
)
def test_fastapi_s_validation_reply_to_a_script_is_a_failure(command: str) -> None:
    assert _excerpt(f"422\n{VALIDATION}", command) == VALIDATION
    assert _excerpt(f"422\n{VALIDATION}", "cat reply.json") is None  # a file shown, not a reply
    assert _excerpt('200\n{"detail":"uploaded","id":3}', command) is None


def test_microcompact_keeps_the_line_after_its_marker() -> None:
    call = ToolUseBlock(id="c1", name="Bash", input={"command": SORTED_SIZES})
    result = ToolResultBlock(tool_use_id="c1", content=SORT_REFUSED)
    kept = failure_lines_kept(4, None, 1)(result, call)
    assert kept == (FAILED_LINES_NOTE, "sort: unknown sort type")
