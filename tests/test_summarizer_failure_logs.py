"""A log viewer's output (``docker logs``, ``journalctl``, OpenWrt's ``logread``) fails with the
service it shows: its error-level entries are the failure lines (``log_levels``), and a Python
exception line a ``--tail`` left without its traceback's header counts. Warnings do not. The
outputs are written here in the layouts the loggers document."""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import failure_lines, more_lines, result_failure
from contextwarden.summarizers.log_levels import logged_errors

SYSLOG = (
    "Sat Jan 10 18:54:05 2026 daemon.info dnsd[7882]: [2026-01-10 18:54:05]  INFO server: up\n"
    "Sat Jan 10 18:54:05 2026 daemon.info dnsd[7882]: [2026-01-10 18:54:05] ERROR list_cache: "
    'cannot open source: Get "https://lists.example.org/ads.txt": dial tcp: lookup '
    "lists.example.org on [::1]:53: write: operation not permitted\n"
    "Sat Jan 10 18:54:05 2026 daemon.info dnsd[7882]: [2026-01-10 18:54:05]  WARN list_cache: "
    "Populating of group cache failed group=ads total_count=0\n"
    "Sat Jan 10 18:54:06 2026 daemon.info dnsd[7882]: [2026-01-10 18:54:06] ERROR list_cache: "
    "cannot open source: got status code 404 count=0 source=https://lists.example.org/gone.txt\n"
)
TAILED = (
    '  File "/app/.venv/lib/python3.12/site-packages/sqlalchemy/engine/default.py", line 952, '
    "in do_execute\n"
    "    cursor.execute(statement, parameters)\n"
    "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) server closed the connection "
    "unexpectedly\n"
    "\tThis probably means the server terminated abnormally\n"
    "[SQL: UPDATE job SET status=%(status)s WHERE job.id = %(job_id)s]\n"
)


def _bash(command: str) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name="Bash", input={"command": command})


def _result(text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="c1", content=text)


def test_logread_error_entries_are_the_failure() -> None:
    call = _bash('ssh root@192.168.1.1 "logread | grep dnsd | tail -n 20"')
    excerpt = result_failure(call, _result(SYSLOG))
    assert excerpt is not None
    assert excerpt.startswith("ERROR list_cache: cannot open source: Get ")
    assert "lookup lists.example.org on [::1]:53" in excerpt
    # each view of a log repeats its service's errors: the first one is kept, in a summary too
    assert failure_lines(call, _result(SYSLOG), 4) == (excerpt,)
    assert more_lines(call, _result(SYSLOG), excerpt, 3) == ()


def test_a_logged_traceback_keeps_its_further_lines() -> None:
    call = _bash("docker logs api-1 2>&1 | grep -A3 ERROR")
    text = (
        "ERROR:app.persist:Persist failed for job 7: 'list' object is not a mapping\n"
        "Traceback (most recent call last):\n"
        '  File "/app/persist.py", line 141, in update\n'
        "TypeError: 'list' object is not a mapping\n"
        "WARNING app.trace: Failed to start span persist\n"
    )
    kept = failure_lines(call, _result(text), 4)
    assert kept[0] == "TypeError: 'list' object is not a mapping"
    assert len(kept) > 1


def test_a_log_of_warnings_only_did_not_fail() -> None:
    warned = "".join(line + "\n" for line in SYSLOG.splitlines() if "ERROR" not in line)
    warned = warned.replace("failed", "skipped")
    assert result_failure(_bash("logread | tail -n 5"), _result(warned)) is None


def test_a_tail_that_cut_the_traceback_header_keeps_the_exception() -> None:
    call = _bash("docker logs api-1 --tail 20 2>&1")
    assert result_failure(call, _result(TAILED)) == (
        "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) server closed the "
        "connection unexpectedly"
    )


def test_the_same_text_from_a_program_that_is_no_log_viewer_is_not_judged_so() -> None:
    assert result_failure(_bash('ssh root@192.168.1.1 "cat /tmp/notes"'), _result(SYSLOG)) is None


def test_logged_errors_reads_the_documented_layouts() -> None:
    log = (
        "ERROR:app.db:connection lost\n"  # Python logging's default format
        "WARNING:app.db:retrying\n"
        'time="2026-01-10T18:54:05Z" level=error msg="bind: address already in use"\n'  # logrus
        "Jan 10 18:54:05 host daemon.err svc[9]: Error: start failed\n"  # syslog priority
        "Jan 10 18:54:09 host daemon.info svc[10]: [2026-01-10 18:54:09] ERROR retry gave up\n"
        "Jan 10 18:54:19 host daemon.info svc[11]: [2026-01-10 18:54:19] ERROR retry gave up\n"
        "INFO: no errors found\n"
    )
    assert logged_errors(log) == (
        "ERROR:app.db:connection lost",
        'level=error msg="bind: address already in use"',
        "Error: start failed",
        "ERROR retry gave up",  # logged again by the restarted service: once
    )


PGO_JOB = "build-tarball-macos-arm64\tbuild-tarball aarch64-apple-darwin\t2026-07-16T19:22:{}Z {}\n"
LOG_FAILED = "".join(
    PGO_JOB.format(at, line)
    for at, line in (
        ("33.2547170", "  train: pass 1"),
        (
            "33.4344160",
            "LLVM Profile Error: Runtime and instrumentation version mismatch : "
            "expected 10, but get 8",
        ),
        (
            "34.4408240",
            "ERROR: no .profraw files written to target/pgo-data/profraw after training",
        ),
        ("34.4408880", "  Training ran but the instrumented binary did not record profile data."),
        ("59.1417880", "##[error]Final attempt failed. Child_process exited with error code 1"),
    )
)
"""A failed release job's log as ``gh run view RUN --job JOB --log-failed`` prints it (cli/cli:
job, step and timestamp before each line), trimmed from study set 30 (jdx/mise, MIT, session
``c8-a0f662cd26``)."""


def test_a_ci_runs_log_keeps_its_further_failure_lines() -> None:
    # a CI job ran once: its other failure lines say what the service-log rule would drop
    call = _bash("gh run view 29524504773 --job 87715021564 --log-failed")
    kept = failure_lines(call, _result(LOG_FAILED), 4)
    assert kept[0] == "ERROR: no .profraw files written to target/pgo-data/profraw after training"
    assert any("LLVM Profile Error: Runtime and instrumentation" in line for line in kept[1:])
    assert any("##[error]Final attempt failed." in line for line in kept[1:])
