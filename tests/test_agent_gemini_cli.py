"""The real Gemini CLI (npm ``@google/gemini-cli``, pinned in ``tests/agents/package.json``)
through the proxy, pointed at it by ``GOOGLE_GEMINI_BASE_URL`` with API-key auth, against the
scripted Gemini upstream on 127.0.0.1: a 20-tool-turn task at a small window.

Its outside traffic is blocked: proxy variables point at the discard port (the CLI honours them
and ``NO_PROXY``: with 127.0.0.1 left out of ``NO_PROXY`` it never reaches the proxy), telemetry,
usage statistics and update checks are off in a settings file of a HOME of its own. Without the
CLI installed (``.ci/run`` installs it into ``.agents/``) the test skips saying so; under
``CI=true`` that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from contextwarden.log import CompactionBoundary, MessageAdded
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import ProxyConfig
from contextwarden.stores import open_store
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.gemini_upstream import check_request, gemini_upstream, prompt_tokens
from tests.proxy_harness import proxy_server

pytestmark = pytest.mark.agents

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / ".agents" / "node_modules" / ".bin" / "gemini"
PINNED = json.loads((ROOT / "tests" / "agents" / "package.json").read_text())["dependencies"][
    "@google/gemini-cli"
]
WINDOW = 30_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
FILES = 20
LINES = 120
"""Lines per file read: 20 files of them (about 24K tokens) do not fit beside the CLI's own
system prompt and tool declarations (about 12K) in the window."""
MODEL = "gemini-3-pro-preview"
STREAM = ":streamGenerateContent"
TIMEOUT = 300
BLOCKED = "http://127.0.0.1:9"
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "tools": {"useRipgrep": False},
}


def cli() -> Path:
    """The pinned CLI; skips saying why when it is not there (fails under ``CI=true``)."""
    manifest = CLI.parent.parent / "@google" / "gemini-cli" / "package.json"
    installed = json.loads(manifest.read_text())["version"] if manifest.exists() else None
    reason = None
    if shutil.which("node") is None:
        reason = "Node.js is not installed (Gemini CLI needs node >= 20)"
    elif installed is None or not CLI.exists():
        reason = f"Gemini CLI {PINNED} is not installed in .agents/ (.ci/run installs it)"
    elif installed != PINNED:
        reason = f"Gemini CLI {installed} is installed in .agents/, the tests pin {PINNED}"
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; in CI it must be")
        pytest.skip(reason)
    return CLI


def is_agent(body: dict[str, Any]) -> bool:
    """A request of the agent loop (it offers the tools), not a side request of the CLI."""
    return "read_file" in json.dumps(body.get("tools") or [])


def reader(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model: reads ``mod0.py`` … ``mod19.py`` one call per turn, then answers. It
    looks only at the last content (the file just read); side requests (no tools) get text."""
    if not is_agent(body):
        return [{"text": "ok"}]
    last = json.dumps([p for p in body["contents"][-1]["parts"] if "functionResponse" in p])
    done = [int(n) for n in re.findall(r"module (\d+) of", last)]
    step = done[-1] + 1 if done else 0
    if step >= FILES:
        return [{"text": f"Read {FILES} files."}]
    return [{"functionCall": {"name": "read_file", "args": {"file_path": f"mod{step}.py"}}}]


def workspace(root: Path) -> Path:
    work = root / "work"
    work.mkdir()
    for n in range(FILES):
        lines = [f"def f{n}_{i}(x):  # line {i}\n    return x * {i}" for i in range(LINES)]
        (work / f"mod{n}.py").write_text(f"# module {n} of {FILES}\n" + "\n".join(lines) + "\n")
    return work


def environment(home: Path, url: str) -> dict[str, str]:
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GEMINI_API_KEY": "gemini-e2e-key-0123456789",
        "GOOGLE_GEMINI_BASE_URL": url,
        "HTTPS_PROXY": BLOCKED,
        "HTTP_PROXY": BLOCKED,
        "ALL_PROXY": BLOCKED,
        "NO_PROXY": "127.0.0.1,localhost",
        "GEMINI_TELEMETRY_ENABLED": "false",
        "NO_COLOR": "1",
    }


def test_gemini_cli_finishes_a_20_tool_turn_task_through_the_proxy(tmp_path: Path) -> None:
    binary = cli()
    work = workspace(tmp_path)
    store = str(tmp_path / "proxy.sqlite3")
    with (
        gemini_upstream(reader) as api,
        proxy_server(ProxyConfig(upstream=api.url, window=WINDOW, store=store)) as url,
    ):
        done = subprocess.run(
            [str(binary), "-p", "Read every module here.", "-y", "-o", "json", "-m", MODEL],
            cwd=work,
            env=environment(tmp_path / "home", url),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    output = json.loads(done.stdout[done.stdout.index("{") :])
    assert output["response"].strip() == f"Read {FILES} files."
    # the agent's own requests (the CLI may route the model name it was given to a newer one)
    main = [b for path, _, b in api.requests if path.endswith(STREAM) and is_agent(b)]
    assert len(main) == FILES + 1, [
        path for path, _, _ in api.requests
    ]  # none refused: every signed call went back signed
    for body in main:
        check_request(body, LIMIT)  # valid for the API, inside the window by the upstream's count
    sessions = open_store(store).list_sessions()
    assert len(sessions) == 1, f"one session for the conversation, got {sessions}"
    log = open_store(store).load(sessions[0]).log
    assert any(isinstance(e, CompactionBoundary) for e in log), "the proxy never compacted"
    # unmanaged, the conversation the CLI sent last would not have fit
    added = [e.message for e in log if isinstance(e, MessageAdded)]
    counter = HeuristicCounter()
    whole = prompt_tokens({**main[0], "contents": []}) + sum(map(counter.count_message, added))
    assert whole > LIMIT
