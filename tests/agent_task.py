"""The scripted model the end-to-end agent tests run against: a 20-step tool task over the
project's own source (read a module, grep, run a command, in turn), then a final answer.

It is a script, not a model: the step to play comes from the id of the tool call the request's
last message answers (``call_scripted_07`` answered: play step 8), so it survives any compaction
that keeps the latest turn. Tool names and arguments come from the request's own ``tools``, so
every agent is asked to use its own tools (Claude Code's ``Read``, qwen-code's ``read_file``,
Codex's ``shell``…). A request that offers no tools (a title, a summary, a side question) gets
a short text answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.model import Message
from contextwarden.rules import DEFAULT_RULES, RoleAlternation, validate
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.proxy_harness import Scripted, conversation, prompt_tokens, text

STEPS = 20
FINAL_ANSWER = "Scripted task done: read, searched and ran commands over the source."
SIDE_ANSWER = "Reading the contextwarden source"
ANTHROPIC = "/v1/messages"
API_RULES = {
    path: tuple(r for r in DEFAULT_RULES if not isinstance(r, RoleAlternation))
    for path in ("/v1/chat/completions", "/v1/responses")
}
"""The OpenAI APIs take consecutive messages of one role (opencode's title request sends two
user messages); every other rule holds for them as for Anthropic's."""
CALL_ID = re.compile(r"call_scripted_(\d+)$")

READ_TOOLS = ("read", "read_file", "view")
GREP_TOOLS = ("grep", "grep_search", "search_file_content")
SHELL_TOOLS = ("bash", "shell", "shell_command", "exec_command", "run_shell_command")
PATH_KEYS = ("file_path", "absolute_path", "filePath", "path")
COMMAND_KEYS = ("command", "cmd")


@dataclass(frozen=True)
class Tool:
    """One tool a request offers: its name and JSON-schema parameters."""

    name: str
    schema: dict[str, Any]

    @property
    def properties(self) -> dict[str, Any]:
        props = self.schema.get("properties")
        return props if isinstance(props, dict) else {}


def offered_tools(body: dict[str, Any]) -> list[Tool]:
    """The function tools of an Anthropic, chat-completions or Responses request."""
    found = []
    for tool in body.get("tools") or ():
        spec = tool.get("function", tool)
        name = spec.get("name")
        schema = spec.get("input_schema") or spec.get("parameters") or {}
        if isinstance(name, str) and isinstance(schema, dict):
            found.append(Tool(name, schema))
    return found


class ScriptedTask:
    """Plays the task in ``workspace`` (a copy of the project's source) for one agent."""

    def __init__(self, workspace: Path, modules: Sequence[str]) -> None:
        self.workspace = workspace
        self.modules = list(modules)
        self.seen: list[Seen] = []
        """Every model request, in order, as this model judged it."""

    def reply(self, path: str, body: dict[str, Any]) -> Scripted:
        """The next step's answer, or a 400 in the API's shape for an invalid request."""
        try:
            messages = request_conversation(body, path)
        except ContextWardenError as exc:
            self.seen.append(Seen(path, body, 0, (str(exc),)))
            return invalid(str(exc))
        problems = tuple(str(p) for p in validate(messages, API_RULES.get(path, DEFAULT_RULES)))
        self.seen.append(Seen(path, body, request_tokens(body, path), problems))
        if problems:
            return invalid("; ".join(problems))
        tools = offered_tools(body)
        if not tools:
            return text(SIDE_ANSWER)
        step = next_step(messages)
        if step > STEPS:
            return text(FINAL_ANSWER)
        name, arguments = self.action(step, tools)
        call = {"type": "tool_use", "id": f"call_scripted_{step:02d}", "name": name}
        return Scripted([{**call, "input": arguments}], "tool_use")

    def action(self, step: int, tools: list[Tool]) -> tuple[str, dict[str, Any]]:
        """Step ``step``'s tool call: a read, a grep or a command, each in the agent's terms."""
        module = self.workspace / self.modules[(step - 1) % len(self.modules)]
        kind = ("read", "grep", "shell")[(step - 1) % 3]
        wanted = {"read": READ_TOOLS, "grep": GREP_TOOLS, "shell": SHELL_TOOLS}[kind]
        tool = _named(tools, wanted)
        if tool is not None and kind == "read":
            return tool.name, self._fill(tool, path=str(module))
        if tool is not None and kind == "grep":
            return tool.name, self._fill(tool, pattern="def ", path=str(module))
        shell = _named(tools, SHELL_TOOLS)
        if shell is None:
            raise AssertionError(f"no shell tool among {[t.name for t in tools]}")
        command = {
            "read": f"cat {module}",
            "grep": f"grep -n 'def ' {module}",
            "shell": f"wc -l {module} && head -c 6000 {module}",
        }[kind]
        return shell.name, self._fill(shell, command=command)

    def _fill(self, tool: Tool, **values: str) -> dict[str, Any]:
        """Arguments for ``tool`` from its schema: the path, pattern or command where its
        parameters want one, a short description where one is required."""
        props, required = tool.properties, tool.schema.get("required") or []
        args: dict[str, Any] = {}
        for key in PATH_KEYS:
            if "path" in values and key in props:
                args[key] = values["path"]
                break
        if "pattern" in values and "pattern" in props:
            args["pattern"] = values["pattern"]
        for key in COMMAND_KEYS:
            if "command" in values and key in props:
                array = props[key].get("type") == "array"
                command = values["command"]
                args[key] = ["bash", "-lc", command] if array else command
                break
        if "workdir" in props:
            args["workdir"] = str(self.workspace)
        if "description" in required:
            args["description"] = "Scripted step"
        return args


@dataclass(frozen=True)
class Seen:
    """One model request: its path and body, its size by this model's count, what is wrong."""

    path: str
    body: dict[str, Any]
    tokens: int
    problems: tuple[str, ...]


def request_conversation(body: dict[str, Any], path: str) -> list[Message]:
    """The request's conversation as the project's wire converters read it. Anthropic
    ``role: "system"`` messages (Claude Code sends them inside ``messages``; the API takes them
    as instructions in place) stand outside the user/assistant alternation the rules check."""
    return conversation(_without_system_messages(body, path), path)


def request_tokens(body: dict[str, Any], path: str) -> int:
    """The request's size by this model's count: the harness's heuristic over the whole body,
    ``role: "system"`` messages included."""
    rest = _without_system_messages(body, path)
    inline = [m for m in body.get("messages") or () if m not in rest.get("messages", ())]
    return prompt_tokens(rest, path) + HeuristicCounter().count_text(json.dumps(inline))


def _without_system_messages(body: dict[str, Any], path: str) -> dict[str, Any]:
    if path != ANTHROPIC or not isinstance(body.get("messages"), list):
        return body
    kept = [m for m in body["messages"] if not (isinstance(m, dict) and m.get("role") == "system")]
    return {**body, "messages": kept}


def next_step(messages: list[Message]) -> int:
    """One past the step whose tool call the last message answers (1 when it answers none)."""
    answered = [r.tool_use_id for r in messages[-1].tool_results] if messages else []
    steps = [int(m.group(1)) for i in answered if (m := CALL_ID.search(i))]
    return max(steps, default=0) + 1


def invalid(reason: str) -> Scripted:
    return Scripted(status=400, error={"type": "invalid_request_error", "message": reason})


def _named(tools: list[Tool], names: Sequence[str]) -> Tool | None:
    return next((t for t in tools if t.name.lower() in names), None)
