"""``contextwarden chat``: the real command against a scripted model server on 127.0.0.1 that
speaks the streaming chat-completions API — in tmux as a person uses it, in ``-p`` mode, after a
``kill -9`` mid-tool — and its tools kept inside the workspace."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextwarden.agent.tools import Call, Tools
from contextwarden.agent.workspace import Workspace
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.repair import merge_messages
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.openai_in import messages_from_openai
from tests.servers import Captured, Reply, openai_completion, openai_stream, serving

WINDOW = 8_000
FILES = 10


# ----------------------------------------------------------------------------- the scripted model
class ScriptedCoder:
    """A scripted model: asked to read the files, it reads them one request at a time, then says
    "Done reading"; asked to run the slow command, it calls bash ``sleep``. Every request it
    receives is checked: valid for the API and within the window."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.requests = 0
        self.lock = threading.Lock()

    def __call__(self, request: Captured) -> Reply:
        with self.lock:
            self.requests += 1
        messages = request.body["messages"]
        size = self._check(messages, request.body.get("tools") or [])
        typed = [m for m in messages if m["role"] == "user"]
        task = _text(typed[-1]) if typed else ""
        done = sum(1 for m in messages[messages.index(typed[-1]) :] if m["role"] == "tool")
        if "slow" in task and done == 0:
            body = _call("bash", {"command": "sleep 30"})
        elif "read" in task and done < FILES:
            body = _call("read_file", {"path": f"notes/f{done}.txt"})
        else:
            body = openai_completion(f"Done reading. Your last words: {task[:40]}")
        # Usage as a real server reports it: this request's prompt size (counted here).
        body["usage"].update(
            prompt_tokens=size, total_tokens=size + body["usage"]["completion_tokens"]
        )
        return openai_stream(body)

    def _check(self, messages: list[dict[str, Any]], tools: list[Any]) -> int:
        system, wire = messages_from_openai(messages)
        ours: list[Message] = []
        for message in wire:  # chat completions lets a tool message and a user turn follow
            if ours and ours[-1].role == message.role:  # each other: one user message for us
                ours[-1] = merge_messages(ours[-1], message)
            else:
                ours.append(message)
        violations = validate(ours)
        if violations:
            self.problems.append(f"request {self.requests}: {violations[0]}")
        counter = HeuristicCounter()
        total = sum(map(counter.count_message, ours)) + counter.count_text(system or "")
        total += counter.count_text(json.dumps(tools))
        if total > ContextPolicy(context_window=WINDOW).context_window:
            self.problems.append(f"request {self.requests}: {total} tokens")
        return total


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = openai_completion(None, tool_call={"name": name, "arguments": arguments})
    body["choices"][0]["message"]["tool_calls"][0]["id"] = f"call_{uuid.uuid4().hex[:12]}"
    return body


@pytest.fixture
def model() -> Iterator[tuple[ScriptedCoder, str]]:
    coder = ScriptedCoder()
    with serving("/v1/chat/completions", coder) as api:
        yield coder, f"{api.url}/v1"


def notes_workspace(tmp_path: Path) -> Path:
    """A workspace of ``FILES`` notes of 180 numbered lines each, too many for ``WINDOW``."""
    root = tmp_path / "ws"
    (root / "notes").mkdir(parents=True)
    for n in range(FILES):
        lines = [f"note {n}, line {i}: the value of setting {n}.{i} is {i * n}" for i in range(180)]
        (root / "notes" / f"f{n}.txt").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return notes_workspace(tmp_path)


def chat_command(url: str, home: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "contextwarden",
        "chat",
        "--provider",
        "openai",
        "--base-url",
        url,
        "--window",
        str(WINDOW),
        "--store",
        str(home / "sessions.db"),
        *extra,
    ]


def print_mode(
    url: str, home: Path, task: str, workspace: Path
) -> subprocess.CompletedProcess[str]:
    """``contextwarden chat -p TASK`` against the scripted model at ``url``."""
    return subprocess.run(
        chat_command(url, home, "-p", task, "--workspace", str(workspace)),
        capture_output=True,
        text=True,
        env=chat_env(),
        timeout=120,
        check=False,
    )


def chat_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


# ----------------------------------------------------------------------------- print mode
def test_print_mode_runs_a_task_that_overflows_the_window(
    model: tuple[ScriptedCoder, str], workspace: Path, tmp_path: Path
) -> None:
    coder, url = model
    done = print_mode(url, tmp_path, "read the notes please", workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done reading. Your last words: read the notes please"
    assert coder.requests == FILES + 1
    assert coder.problems == []
    assert "Compacting conversation" in done.stderr or "context trimmed" in done.stderr


def test_kill_9_mid_tool_then_resume(
    model: tuple[ScriptedCoder, str], workspace: Path, tmp_path: Path
) -> None:
    coder, url = model
    first = subprocess.Popen(
        chat_command(
            url, tmp_path, "--yes", "-p", "run the slow command", "--workspace", str(workspace)
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=chat_env(),
    )
    deadline = time.monotonic() + 60
    while coder.requests < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)  # the model asked for `sleep 30`: the tool is running now
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    again = subprocess.run(
        chat_command(
            url, tmp_path, "--resume", "-p", "read them now", "--workspace", str(workspace)
        ),
        capture_output=True,
        text=True,
        env=chat_env(),
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert "Done reading" in again.stdout
    assert coder.problems == []
    from contextwarden.stores import SqliteStore

    store = SqliteStore(tmp_path / "sessions.db")
    (session,) = store.list_sessions()
    history = store.load(session)
    texts = [m.text for m in history.messages]
    assert any("run the slow command" in t for t in texts), "the first turn was kept"
    results = [r for m in history.messages for r in m.tool_results]
    assert results[0].is_error and "session ended" in results[0].text
    store.close()


# ----------------------------------------------------------------------------- tmux
def tmux_available() -> bool:
    if shutil.which("tmux"):
        return True
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("tmux is needed for the chat terminal test (.ci/run installs it)")
    pytest.skip("tmux is not installed")
    return False


class Tmux:
    """One tmux server of our own (its own socket) running one window."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.socket = f"cw-{uuid.uuid4().hex[:8]}"
        script = cwd.parent / "run-chat.sh"
        exports = "".join(f"export {k}={_quote(v)}\n" for k, v in env.items() if k in KEEP_ENV)
        script.write_text(
            f"{exports}cd {_quote(str(cwd))}\nexec {' '.join(map(_quote, command))}\n"
        )
        self._tmux("new-session", "-d", "-x", "160", "-y", "50", f"bash {_quote(str(script))}")

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def send(self, text: str) -> None:
        self._tmux("send-keys", "-t", "0", text, "Enter")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "0", "-S", "-2000")

    def wait_for(self, text: str, timeout: float = 60, after: int = 0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen.count(text) > after:
                return screen
            time.sleep(0.2)
        tail = "\n".join(self.screen().splitlines()[-40:])
        raise AssertionError(f"{text!r} did not appear; the end of the screen:\n{tail}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


KEEP_ENV = ("PATH", "PYTHONPATH", "HOME", "LANG", "LC_ALL", "VIRTUAL_ENV")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_chat_in_tmux_compacts_and_keeps_working(
    model: tuple[ScriptedCoder, str], workspace: Path, tmp_path: Path
) -> None:
    tmux_available()
    coder, url = model
    term = Tmux(chat_command(url, tmp_path, "--yes"), workspace, chat_env())
    try:
        term.wait_for("/help for commands", timeout=60)
        term.send("please read the notes")
        screen = term.wait_for("Done reading", timeout=120)
        assert "Compacting conversation" in screen or "context trimmed" in screen
        assert "read_file" in screen
        term.send("/context")
        screen = term.wait_for("free space")
        assert "autocompact at" in screen and "tool_result" in screen
        term.send("/cost")
        screen = term.wait_for("input, cache reads")
        assert f"Usage over {FILES + 1} model requests" in screen
        term.send("/compact keep the file names")
        screen = term.wait_for(
            "Compacting conversation", after=screen.count("Compacting conversation")
        )
        term.send("/undo-compact")
        term.wait_for("Restored the view before the last compaction")
        term.send("now read them again")
        term.wait_for("Done reading", after=1, timeout=120)
        term.send("/exit")
        time.sleep(0.5)
    finally:
        term.kill()
    assert coder.problems == []
    assert coder.requests >= 2 * (FILES + 1)


# ----------------------------------------------------------------------------- the workspace
def test_tools_cannot_leave_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    (root / "inside.txt").write_text("inside\n")
    (root / "link").symlink_to(tmp_path / "secret.txt")
    (root / "dirlink").symlink_to(tmp_path)
    tools = Tools(Workspace(root))
    refused = [
        Call("read_file", {"path": "../secret.txt"}),
        Call("read_file", {"path": str(tmp_path / "secret.txt")}),
        Call("read_file", {"path": "link"}),
        Call("read_file", {"path": "dirlink/secret.txt"}),
        Call("read_file", {"path": "inside\x00.txt"}),
        Call("write_file", {"path": "../evil.txt", "content": "x"}),
        Call("write_file", {"path": "link", "content": "x"}),
        Call("edit_file", {"path": "link", "old_string": "outside", "new_string": "x"}),
        Call("grep", {"pattern": "outside", "path": ".."}),
        Call("list_files", {"path": "/"}),
    ]
    for call in refused:
        outcome = tools.run(call)
        assert (
            outcome.is_error and "outside the workspace" in outcome.text
        ) or "cannot name" in outcome.text, call
    assert (tmp_path / "secret.txt").read_text() == "outside"
    assert not (tmp_path / "evil.txt").exists()
    listed = tools.run(Call("list_files", {})).text
    assert "inside.txt" in listed and "secret" not in listed
    assert "No matches" in tools.run(Call("grep", {"pattern": "outside"})).text
    edit = tools.run(
        Call("edit_file", {"path": "inside.txt", "old_string": "inside", "new_string": "in"})
    )
    assert not edit.is_error and "-inside" in edit.text and "+in" in edit.text
