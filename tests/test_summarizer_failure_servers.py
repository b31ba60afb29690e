"""Failures a server or a harness reports in its own form: nginx's error log line, an HTTP error
page a client printed with exit 0, Claude Code's background task output. Each input is written
from the documented format, not copied from a session."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_ranks import ERROR_RANK, line_rank
from contextwarden.summarizers.failures import failure_excerpt, result_failure

NGINX_TEST = (
    "Exit code 1\n"
    '2026/01/02 03:04:05 [emerg] 41#41: unknown directive "proxy_pas" in '
    "/etc/nginx/conf.d/app.conf:7\n"
    "nginx: configuration file /etc/nginx/nginx.conf test failed"
)


def test_nginx_names_what_failed_on_its_error_log_line() -> None:
    """``nginx -t`` prints the failing directive at ``[emerg]`` (nginx's ``error_log`` levels)
    before its ``test failed`` verdict: the line to quote is the one saying what."""
    excerpt = failure_excerpt(NGINX_TEST, is_error=True, shell=True, command="nginx -t")
    assert excerpt == NGINX_TEST.splitlines()[1]


@pytest.mark.parametrize("level", ["error", "crit", "alert", "emerg"])
def test_nginx_failing_levels_rank_as_error_lines(level: str) -> None:
    line = f"2026/01/02 03:04:05 [{level}] 7#7: *3 upstream timed out while reading response header"
    assert line_rank(line) == ERROR_RANK


def test_an_nginx_log_shown_is_no_failure() -> None:
    """A log's lines do not make the command showing them failed, and a warning is advice."""
    log = (
        '2026/01/02 03:04:05 [warn] 7#7: conflicting server name "a.test" on 0.0.0.0:80\n'
        '2026/01/02 03:04:06 [error] 7#7: *3 open() "/srv/x.ico" failed (2: No such file)\n'
    )
    assert failure_excerpt(log, is_error=False, shell=True, command="less error.log") is None
    assert line_rank(log.splitlines()[0]) is None


@pytest.mark.parametrize(
    ("page", "heading"),
    [
        # nginx's built-in error page
        (
            "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n"
            "<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n"
            "</body>\r\n</html>",
            "<head><title>504 Gateway Time-out</title></head>",
        ),
        # Apache's
        (
            '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n'
            "<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n"
            "<p>The requested URL was not found on this server.</p>\n</body></html>",
            "<title>404 Not Found</title>",
        ),
    ],
)
def test_an_http_error_page_curl_printed_is_a_failure(page: str, heading: str) -> None:
    """``curl`` exits 0 on a 5xx (without ``-f``): the page's heading, its status and reason
    (RFC 9110, 15.5 and 15.6), says the request failed."""
    command = 'curl -s "https://api.example.test/v1/items?limit=2"'
    assert failure_excerpt(page, is_error=False, shell=True, command=command) == heading


def test_a_page_about_http_errors_is_no_failure() -> None:
    page = "<html><head><title>Status codes</title></head><body><p>504 means the gateway timed out"
    command = "curl -s https://docs.example.test/status"
    assert failure_excerpt(page, is_error=False, shell=True, command=command) is None


def task_output(status: str, code: int, output: str) -> str:
    """Claude Code's ``TaskOutput`` result for a background shell task."""
    return (
        "<retrieval_status>success</retrieval_status>\n\n<task_id>b1</task_id>\n\n"
        f"<task_type>local_bash</task_type>\n\n<status>{status}</status>\n\n"
        f"<exit_code>{code}</exit_code>\n\n<output>\n{output}\n</output>"
    )


def test_a_background_tasks_exit_code_and_stderr_line_say_it_failed() -> None:
    """The task's ``<exit_code>`` is its command's, and ``[stderr]`` names the stream before
    the program's own line (jq's manual: ``jq: error …``, a parse error exits 2 or 5)."""
    call = ToolUseBlock(id="t1", name="TaskOutput", input={"task_id": "b1"})
    text = task_output("failed", 5, "[stderr] jq: parse error: Expected separator at line 3, col 9")
    result = ToolResultBlock(tool_use_id="t1", content=text)
    assert result_failure(call, result) == "jq: parse error: Expected separator at line 3, col 9"


def test_a_background_task_that_completed_is_no_failure() -> None:
    call = ToolUseBlock(id="t1", name="TaskOutput", input={"task_id": "b1"})
    result = ToolResultBlock(tool_use_id="t1", content=task_output("completed", 0, "done"))
    assert result_failure(call, result) is None
