"""What a task runner prints when a task fails, and which of its lines are the failing task's.

A task runner (mise, go-task, yarn, pnpm) runs a project's checks and says at the end that one
failed; an agent pipes the run through ``tail``, so that verdict is what is left of its exit code.
mise prints each task's lines after the task's name in brackets, so the failing task's own lines
can be told from its siblings' (``failures`` quotes those, ``failure_marks`` knows the verdicts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MISE_VERDICT = r"(?P<prefix>\[[^\]\n]+\]) ERROR task failed\s*$"
"""mise's verdict, the failing task's prefix first (``Task::prefix`` in src/task/mod.rs:
``[<name>]``, its name cut to 40 characters, the same prefix its output lines carry)."""
TASK_FAILED = re.compile(
    # mise: the first failed task's prefix, then "ERROR task failed" (jdx/mise,
    # src/task/task_results_display.rs, ``exit_if_failed``, ``_MISE_VERDICT``); with
    # --continue-on-error first the count ("ERROR 2 task(s) failed:",
    # ``maybe_print_failure_summary``)
    rf"^(?:{_MISE_VERDICT}|ERROR \d+ task\(s\) failed:\s*$"
    # go-task: ``TaskRunError.Error`` (go-task/task, errors/errors_task.go):
    # task: Failed to run task "build": exit status 1
    r'|task: Failed to run task "[^"\n]*": )',
    re.M,
)
"""A task runner's line naming the task that failed, printed only when the runner exits
non-zero: a failure, ranked by its words as just's ``error: Recipe `x` failed`` is by its
prefix, since which task failed is what tells one run's failure from another's (mise's own
lines carry no task prefix in its ``interleave`` output mode: then nothing else names it)."""
SCRIPT_FAILED = (
    # yarn 1: its reporter's "error " and the ``commandFailedWithCode`` message
    # (yarnpkg/yarn, src/reporters/lang/en.js): "error Command failed with exit code 1."
    r"error Command failed with exit code \d+\.\s*$"
    # pnpm: its reporter's badge of the error code, then the message (" ELIFECYCLE  Command
    # failed with exit code 1.", the same message as yarn's ``commandFailedWithCode``)
    r"|\s*ELIFECYCLE\s+Command failed with exit code \d+\."
)
"""A package manager's line saying the script it ran failed, naming neither the script nor why:
a run's verdict (``failure_marks.TRAILER``), printed only when it exits non-zero."""
_MISE_TASK_FAILED = re.compile(rf"^{_MISE_VERDICT}", re.M)
"""``_MISE_VERDICT`` alone: the line ``failed_task`` reads the failing task's prefix from."""

_MISE_ECHO = re.compile(r"\$ \S")
"""mise's own line before a task's, the script it runs after ``$ `` (src/task/task_executor.rs:
``format!("$ {display_script}")``): what ran, not what the task printed."""


@dataclass(frozen=True, slots=True)
class FailedTask:
    """The task a runner named as failed: its ``prefix`` (``[lint:go]``) and what it printed
    (``output``: its own lines before the verdict, the prefix taken off so they read as the
    program printed them, mise's echo of the script it ran left out)."""

    prefix: str
    output: str

    def quoted(self, line: str) -> str:
        """``line`` of the task's output as the run printed it, after the task's prefix."""
        return f"{self.prefix} {line}"


def failed_task(text: str) -> FailedTask | None:
    """The task mise's verdict names as failed (the first one: ``exit_if_failed`` names the
    first task that failed), with the lines its prefix marks before that verdict; None when no
    verdict is in ``text`` or the task printed nothing else (its output was cut by a pager:
    the verdict is then the line to quote)."""
    verdict = _MISE_TASK_FAILED.search(text)
    if verdict is None:
        return None
    prefix = verdict.group("prefix")
    own = f"{prefix} "
    lines = [
        line[len(own) :] if line.startswith(own) else ""
        for line in text[: verdict.start()].splitlines()
        if line.rstrip() == prefix
        or (line.startswith(own) and not _MISE_ECHO.match(line, len(own)))
    ]
    if not any(line.strip() for line in lines):
        return None
    return FailedTask(prefix, "\n".join(lines))
