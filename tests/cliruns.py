"""Running the command line in-process for tests: exit code, stdout and stderr, or its JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextwarden.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``contextwarden *args``: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out = capsys.readouterr()
    code = exit_info.value.code
    return code if isinstance(code, int) else 1, out.out, out.err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``contextwarden *args --json``, which must succeed: its JSON object."""
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data
