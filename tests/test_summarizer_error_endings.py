"""An output ends at its error when one of its last lines that say something is an error line
(``summarizers.error_endings``): what comes before does not count, and is not read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contextwarden.summarizers import error_endings

CallsTo = Callable[[object, str], list[Any]]
"""The ``calls_to`` fixture (conftest.py)."""

_LOG = "\n".join(f"[{i:04}] fetched shard {i} of 4000" for i in range(4000))


def test_the_error_a_script_printed_last_is_where_it_stopped() -> None:
    text = f"{_LOG}\nError: name 'shard_map' is not defined\n\nExit code: 0\n"
    assert error_endings.stopped_at_error(text)


def test_an_error_further_up_is_one_the_script_went_on_from() -> None:
    text = f"Error: shard 12 timed out, retrying\n{_LOG}\nExit code: 0\n"
    assert not error_endings.stopped_at_error(text)


def test_only_the_ending_lines_are_read(calls_to: CallsTo) -> None:
    """A 4,000-line log is read from its end: the lines before its last are never looked at."""
    read = calls_to(error_endings, "is_status_line")
    assert not error_endings.stopped_at_error(f"{_LOG}\nExit code: 0\n")
    assert read == ["Exit code: 0", "[3999] fetched shard 3999 of 4000"]
