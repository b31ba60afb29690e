"""The demo session: real tool outputs over a real directory, valid, and honest about its agent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contextwarden.agent.tools import TOOL_DEFINITIONS, Call, Tools
from contextwarden.agent.workspace import Workspace
from contextwarden.errors import ContextWardenError
from contextwarden.eval.demo import build_session, default_root, generate, source_files
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate

TOOL_NAMES = [t["name"] for t in TOOL_DEFINITIONS]


def _project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text('"""A tiny package."""\n\nLIMIT = 200_000\n')
    (root / "pkg" / "core.py").write_text(
        '"""Core."""\n\n\ndef add(a, b):\n    return a + b\n\n\nclass Thing:\n    pass\n'
    )
    (root / "README.md").write_text("# tiny\n\nTODO: write docs\n")
    return root


def _calls(messages: tuple[Message, ...]) -> list[tuple[ToolUseBlock, ToolResultBlock]]:
    results = {r.tool_use_id: r for m in messages for r in m.tool_results}
    return [(u, results[u.id]) for m in messages for u in m.tool_uses]


def test_session_over_a_small_project_is_valid_and_real(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    scratch = tmp_path / "scratch"
    history = build_session(root, scratch)
    messages = history.messages
    assert validate(messages) == []
    assert "scripted agent" in str(history.system)
    pairs = _calls(messages)
    assert len(pairs) >= 20
    names = {u.name for u, _ in pairs}
    assert set(TOOL_NAMES) <= names
    stamps = [m.meta.timestamp for m in messages]
    assert all(s is not None for s in stamps) and stamps == sorted(stamps)  # type: ignore[type-var]
    for use, result in pairs:
        if use.name == "read_file" and not result.is_error:
            path = Path(use.input["path"])
            lines = path.read_text().splitlines()
            assert result.text == "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 1))
    note = scratch / "ORIENTATION.md"
    assert note.read_text().startswith("# Orientation: project\n\n## Thresholds")
    assert any("LIMIT = 200_000" in r.text for u, r in pairs if u.name == "grep")
    assert (root / "pkg" / "core.py").read_text().startswith('"""Core."""')  # never written


def test_failures_are_real_and_reported_as_errors(tmp_path: Path) -> None:
    history = build_session(_project(tmp_path / "p"), tmp_path / "s")
    errors = [(u, r) for u, r in _calls(history.messages) if r.is_error]
    kinds = {u.name for u, _ in errors}
    assert "read_file" in kinds  # the guessed utils module that is not there
    traceback = next(r.text for u, r in errors if u.name == "bash")
    assert traceback.startswith("Exit code 1\n") and "FileNotFoundError" in traceback


def test_the_checker_the_agent_writes_runs_and_its_tests_pass(tmp_path: Path) -> None:
    history = build_session(_project(tmp_path / "p"), tmp_path / "s")
    runs = [r.text for u, r in _calls(history.messages) if "-m unittest" in str(u.input)]
    assert len(runs) == 1 and re.search(r"Ran 3 tests.*\n\nOK", runs[0], re.S)
    listed = [r.text for u, r in _calls(history.messages) if "check_docstrings.py " in str(u.input)]
    assert listed[-1].splitlines()[1:] == [
        f"{tmp_path / 'p' / 'pkg' / 'core.py'}:4: add",
        f"{tmp_path / 'p' / 'pkg' / 'core.py'}:8: Thing",
    ]


def test_the_default_directory_is_this_package(tmp_path: Path) -> None:
    root = default_root()
    assert (root / "eval" / "demo.py").is_file()
    files = source_files(root)
    assert files and files == sorted(files, key=lambda p: (-p.stat().st_size, str(p)))
    history = generate()
    assert validate(history.messages) == []
    assert sum(1 for m in history.messages if m.role == "assistant") >= 30
    assert history.estimate_tokens() > 60_000


def test_writes_outside_the_scratch_directory_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    (tmp_path / "s").mkdir()
    tools = Tools(Workspace(root, tmp_path / "s"))
    target = root / "pkg" / "core.py"
    before = target.read_text()
    out = tools.run(Call("write_file", {"path": str(target), "content": "oops"}))
    assert out.is_error and "outside the workspace" in out.text
    assert target.read_text() == before


def test_a_directory_without_text_files_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01")
    with pytest.raises(ContextWardenError, match="no text files to review"):
        generate(tmp_path)
    with pytest.raises(ContextWardenError, match="is not a directory"):
        generate(tmp_path / "missing")
