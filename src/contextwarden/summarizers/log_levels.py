"""The entries a service's log records at error level: what a log viewer (``docker logs``,
``journalctl``, OpenWrt's ``logread``) shows failed in the run it watches, though the viewer
itself exits 0 and prints no failure mark a compiler or test runner would.

A log entry says its level in a field of its own, in one of a few documented layouts:

- the level word before the message, upper case: Python's ``logging`` default format
  (``ERROR:name:message``, ``logging.BASIC_FORMAT``), uvicorn's ``ERROR:    …``, logrus's and
  Blocky's text format after a bracketed time (``[2026-01-10 18:54:05] ERROR list_cache: …``),
  log4j/logback's and Go's ``log/slog`` text (``… ERROR …``/``level=ERROR``);
- logrus's key-value format, ``level=error`` (``level=fatal``, ``level=panic``);
- syslog's ``facility.priority`` as BusyBox's and OpenWrt's ``logread`` print it
  (``daemon.err blocky[9593]: …``; RFC 5424 severities ``err``, ``crit``, ``alert``,
  ``emerg``).

Warnings are not errors: a log full of them still ran.
"""

from __future__ import annotations

import re

from contextwarden.summarizers.commands import SERVICE_LOG_VIEWER

_LEVEL = re.compile(
    r"(?:^|[\s\]|:])(?:ERROR|FATAL|CRITICAL|PANIC)(?=[\s:\]|]|$)"
    r"|\blevel=\"?(?:error|fatal|panic|critical|ERROR|FATAL|CRITICAL)\b"
    r"|\s(?:kern|user|daemon|auth|authpriv|syslog|cron|local\d)\.(?:err|crit|alert|emerg)\s"
)
_STAMP = re.compile(r"^.*?(?=\b(?:ERROR|FATAL|CRITICAL|PANIC)\b|level=)", re.I)
"""What comes before an entry's level: its time and the process that logged it."""


def logged_errors(text: str) -> tuple[str, ...]:
    """The entries of ``text`` (a log) logged at error level or above, in order, each once and
    from its level on: the time and process before it say when, not what failed, and an entry
    a restarting service repeats counts once."""
    found: dict[str, None] = {}
    for line in text.splitlines():
        if _LEVEL.search(line):
            found.setdefault(_STAMP.sub("", line.strip(), count=1))
    return tuple(found)


def viewed_errors(text: str, command: str | None) -> tuple[str, ...]:
    """``logged_errors`` of ``text`` when ``command`` shows a service's log
    (``commands.SERVICE_LOG_VIEWER``), else none: what the service logged as failed. Its
    warnings are not among them: they say what a service retried or skipped, and a log holds
    many. A CI run's log (``gh run view --log-failed``) is no service's: its job ran once, and
    its failure lines each say something else."""
    if command is None or not SERVICE_LOG_VIEWER.search(command):
        return ()
    return logged_errors(text)
