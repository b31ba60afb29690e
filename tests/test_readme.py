"""The README's commands are the ones CI runs and the ones that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def bash_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README, re.DOTALL)


def test_ci_runs_the_readme_test_command() -> None:
    test_command = bash_blocks()[1].strip()
    assert "pytest" in test_command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci


def test_first_command_runs_the_demo() -> None:
    assert bash_blocks()[0].strip().endswith("contextwarden demo")


def test_documented_subcommands_exist(capsys: pytest.CaptureFixture[str]) -> None:
    from contextwarden.cli import main

    commands = set(re.findall(r"^contextwarden (\w+)", README, re.MULTILINE))
    assert commands == {"inspect", "compact", "replay", "demo", "proxy", "chat"}
    for command in sorted(commands):
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        assert f"contextwarden {command}" in capsys.readouterr().out
