"""Failures nobody flagged: a command that exits 0 on one, and what microcompact keeps of it.

The outputs are real, trimmed, from blind set 14's Claude Code sessions on `Safecast/safecast-map-
MCP` (MIT, as its README says; `benchmarks/fresh_probes14/README.md` names the sessions and the
commit): ``curl`` fetching CloudFront's and nginx's error pages (exit 0), ``journalctl`` showing a
unit that could not start, a Read of the file a background task's output was saved to; zsh's and
bash's lines are written from their manuals (zsh's ``NOMATCH`` option, bash's ``failglob``).
"""

from __future__ import annotations

from contextwarden.compaction import CompactionContext, MicroCompact
from contextwarden.compaction.microcompact import UNFLAGGED_LINES_NOTE
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from contextwarden.summarizers.failures import result_failure
from contextwarden.summarizers.unflagged import failure_like_lines, shows_output, unflagged_lines

CLOUDFRONT = (
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n'
    '<HTML><HEAD><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-1">\n'
    "<TITLE>ERROR: The request could not be satisfied</TITLE>\n"
    "</HEAD><BODY>\n"
    "<H1>504 Gateway Timeout ERROR</H1>\n"
    "<H2>The request could not be satisfied.</H2>\n"
)
NGINX_SAVED = (
    "     1→[stderr] Ubuntu 24.04.4 LTS\n"
    "     2→<html>\n"
    "     3→<head><title>504 Gateway Time-out</title></head>\n"
    "     4→<body>\n"
    "     5→<center><h1>504 Gateway Time-out</h1></center>\n"
    "     6→<hr><center>nginx/1.24.0 (Ubuntu)</center>\n"
)
JOURNAL = (
    "Feb 24 07:29:34 simplemap.safecast.org systemd[1]: Started safecast-mcp.service - Safecast"
    " MCP Server.\n"
    "Feb 24 07:29:34 simplemap.safecast.org (cast-mcp)[672943]: safecast-mcp.service: Failed to"
    " execute /root/safecast-mcp-server/safecast-mcp: Text file busy\n"
)
# a passing command's output that uses failure words of the work, not of a failure
GIT_LOG = (
    "bfb0f688 ci(e2e): fail when an expected shell is unavailable\n"
    "47c3efb0 fix(website): remove brittle selectors and fail on broken links\n"
)


def bash(command: str, call_id: str = "toolu_curl") -> ToolUseBlock:
    return ToolUseBlock(call_id, "Bash", {"command": command})


def test_an_error_page_curl_fetched_keeps_its_heading() -> None:
    call = bash('curl -s "https://simplemap.safecast.org/api/radiation?lat=37.42"')
    # curl exits 0 on a 504; the page's heading says the request failed
    assert result_failure(call, ToolResultBlock(call.id, CLOUDFRONT)) == (
        "<H1>504 Gateway Timeout ERROR</H1>"
    )
    script = bash("./check-api.sh", "toolu_script")  # a script printing the page it got
    assert result_failure(script, ToolResultBlock(script.id, CLOUDFRONT)) is None
    assert shows_output(call) and shows_output(script)
    assert failure_like_lines(CLOUDFRONT, 2, 200) == ("504 Gateway Timeout ERROR",)


def test_saved_output_read_back_is_output_with_its_line_numbers_and_tags_off() -> None:
    read = ToolUseBlock("toolu_read", "Read", {"file_path": "/tmp/tasks/b6efdf7.output"})
    assert shows_output(read)
    assert failure_like_lines(NGINX_SAVED, 2, 200) == ("504 Gateway Time-out",)
    source = ToolUseBlock("toolu_src", "Read", {"file_path": "cmd/server/main.go"})
    assert not shows_output(source)  # a source file names errors everywhere


def test_the_shells_line_that_a_command_did_not_run_is_kept() -> None:
    output = (
        "Chunk ID: 3f\nProcess exited with code 0\nOutput:\n"
        "zsh:1: no matches found: api/trees/main?recursive=1\n"
    )
    assert failure_like_lines(output, 1, 200) == (
        "zsh:1: no matches found: api/trees/main?recursive=1",
    )
    assert failure_like_lines("bash: no match: src/*.rs", 1, 200) == ("bash: no match: src/*.rs",)
    assert failure_like_lines("sh: 1: pnpm: not found", 1, 200) == ("sh: 1: pnpm: not found",)
    quoted = 'docs/shell.md:3: zsh:1: no matches found: *.go\n  "zsh: no matches found: x"'
    assert failure_like_lines(quoted, 1, 200) == ()


def test_text_file_busy_is_an_os_error_a_log_shows() -> None:
    call = bash("ssh root@host \"journalctl -u safecast-mcp --since '1 minute ago' | tail -30\"")
    excerpt = result_failure(call, ToolResultBlock(call.id, JOURNAL))
    assert excerpt is not None and excerpt.endswith(
        "Failed to execute /root/safecast-mcp-server/safecast-mcp: Text file busy"
    )


def test_a_programs_own_error_lines_and_shown_text_keep_nothing() -> None:
    """Exit 0 after ``Error: …`` says the program handled it; failure words alone are the work's
    subject; what ``rg``/``cat`` show is text, whatever it holds."""
    assert failure_like_lines(GIT_LOG, 2, 200) == ()
    assert failure_like_lines("Error: Cross origin http://localhost forbidden\nok", 2, 200) == ()
    assert not shows_output(bash('rg -n "Errorf" pkg', "toolu_rg"))
    assert not shows_output(bash("cat templates/504.html", "toolu_cat"))
    assert failure_like_lines(CLOUDFRONT, 0, 200) == ()


def test_lines_are_clipped_to_their_bound() -> None:
    long = "zsh:1: no matches found: " + "x" * 300
    (kept,) = failure_like_lines(long, 2, 50)
    assert len(kept) == 50 and kept.endswith("…")


def curl_session(extra: int) -> list[Message]:
    messages = [Message("user", (TextBlock("Is the API up?"),))]
    for n in range(extra + 1):
        call = bash("./check-api.sh", f"toolu_{n}")
        body = CLOUDFRONT + "x" * 2_000 if n == 0 else "ok " * 700
        messages.append(Message("assistant", (call,)))
        messages.append(Message("user", (ToolResultBlock(call.id, body),)))
    return messages


def test_microcompact_keeps_an_unflagged_failure_line_by_default() -> None:
    messages = curl_session(3)
    context = CompactionContext(policy=ContextPolicy(cleared_unflagged_lines=2))
    cleared = MicroCompact(min_saving=0)(messages, context).messages[2].tool_results[0].text
    assert cleared.split("\n") == [
        CLEARED_MARKER,
        UNFLAGGED_LINES_NOTE,
        "504 Gateway Timeout ERROR",
    ]
    default = MicroCompact(min_saving=0)(messages).messages[2].tool_results[0].text
    assert default == "\n".join((CLEARED_MARKER, UNFLAGGED_LINES_NOTE, "504 Gateway Timeout ERROR"))
    off = CompactionContext(policy=ContextPolicy(cleared_unflagged_lines=0))
    assert MicroCompact(min_saving=0)(messages, off).messages[2].tool_results[0].text == (
        CLEARED_MARKER
    )


def search_session(answer: str) -> list[Message]:
    """A Gemini CLI glob (its tool's wording when nothing matched, from its glob tool), then
    enough other results for microcompact to clear it."""
    call = ToolUseBlock("glob-1", "glob", {"pattern": "**/*.png"})
    messages = [Message("user", (TextBlock("Add a PNG logo to the README."),))]
    messages += [
        Message("assistant", (call,)),
        Message("user", (ToolResultBlock(call.id, answer),)),
    ]
    for n in range(6):
        read = bash(f"cat part{n}.txt", f"toolu_{n}")
        messages.append(Message("assistant", (read,)))
        messages.append(Message("user", (ToolResultBlock(read.id, "line " * 700),)))
    return messages


def test_a_search_that_matched_nothing_keeps_its_answer_when_cleared() -> None:
    nothing = 'No files found matching pattern "**/*.png" within /w/session-bridge'
    glob = ToolUseBlock("g1", "Glob", {"pattern": "**/*.png"})
    assert unflagged_lines(glob, nothing, 1, 200) == (nothing,)
    assert unflagged_lines(glob, "No files found", 1, 200) == ("No files found",)
    hits = 'Found 2 file(s) matching "**/*.png"\n/w/media/logo.png\n/w/media/dark/play.png'
    assert unflagged_lines(glob, hits, 1, 200) == ()
    assert unflagged_lines(glob, nothing, 0, 200) == ()  # off
    # the same words in a program's output or a file are not a search's answer
    assert unflagged_lines(bash("cat notes.txt", "b1"), nothing, 1, 200) == ()
    # a short answer costs more cleared than kept: microcompact leaves it whole
    kept = MicroCompact(min_saving=0)(search_session(nothing)).messages[2].tool_results[0].text
    assert kept == nothing
    cleared = MicroCompact(min_saving=0)(search_session(hits)).messages[2].tool_results[0].text
    assert cleared == CLEARED_MARKER
