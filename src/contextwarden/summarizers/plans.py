"""Decisions an agent puts in a plan: the one it presents for approval and the one it writes down;
and the facts it stores for its later sessions.

Claude Code's ``ExitPlanMode`` tool takes the plan the agent presents as Markdown in its ``plan``
input, and Copilot CLI's ``exit_plan_mode`` a summary of it in ``summary``; the tool's result
says whether the person approved it (a rejection is an error carrying the harness's rejection
notice). Copilot CLI's agent writes its plan to ``plan.md`` in its session folder
(``~/.copilot/session-state/<id>/plan.md``, as its system prompt allows). Claude Code's agent
writes its draft under ``~/.claude/plans/`` before presenting it: that draft is not read, the
approval decides. A plan the person turned down is not a decision: they said no. An issue or a
pull request the agent files through a tracker's tool (the GitHub, GitLab, Linear and Jira MCP
servers' ``create_issue``, ``update_issue``, ``create_pull_request``, ``create_merge_request``)
is a plan for work too: its ``body`` or ``description`` states what is wrong and the fix chosen,
and its ``title`` names the problem or the change in one line. So is one filed through a
tracker's command line, as a shell command: GitHub CLI's ``gh issue create``, ``gh pr create``
(``--title``/``-t``, ``--body``/``-b``) and ``gh issue comment``, ``gh pr comment``
(``--body``/``-b``), GitLab CLI's ``glab issue create``, ``glab mr create``
(``--title``/``-t``, ``--description``/``-d``), and beads' ``bd create`` (alias ``bd new``; the
title its first argument or ``--title``, the text ``--description``/``-d``: ``bd create --help``,
github.com/steveyegge/beads); PowerShell's ``$url = gh issue create …`` keeps what the command
prints, and files it the same.

A fact the agent stores for its later sessions is a decision it writes down as well: Gemini CLI's
``save_memory`` takes one ``fact``, "a clear, self-contained statement" (gemini-cli
``docs/tools/memory.md``), and Copilot CLI's ``store_memory`` a ``fact`` with its ``subject``,
``citations`` and ``reason`` (the tool's description in its sessions, 2026). The fact is kept
whole, as an issue's title is: it is one statement, short by the tool's own rule.

A plan is the agent's own words, so its lines are read as its text is (``decisions.decisions``)
and ranked as its lines are (``decisions.standing``); of them only those that give a reason or
name a choice (a directive, a labelled fix: ``CHOICE``) are kept. Its other lines restate what
the agent found and said already: read whole, plans made summaries longer without keeping a fact
more (``docs/benchmarks.md``). Plans are often wrapped at a fixed width; Markdown reads a
paragraph's line breaks as spaces (CommonMark's soft line breaks), so its lines are joined before
they are read: a reason cut in half is no decision.
"""

from __future__ import annotations

import re

from contextwarden.model import ToolUseBlock
from contextwarden.summarizers.decisions import decisions, standing
from contextwarden.summarizers.remembered import Remembered
from contextwarden.summarizers.sentences import clipped
from contextwarden.summarizers.shell_syntax import pipeline_heads, shell_words
from contextwarden.summarizers.tools import file_ops, plain_input, shell_command

CHOICE = 2
"""The ``decisions.standing`` of a line that gives a reason or names a choice: a plan's kept
lines."""
_PLAN_INPUTS = {"ExitPlanMode": "plan", "exit_plan_mode": "summary"}
"""The input holding the plan a plan-mode tool presents: Claude Code's, Copilot CLI's."""
_TRACKER_TOOL = re.compile(r"(?:^|[_-])(?:create|update)_(?:issue|pull_request|merge_request)$")
"""A tracker's tool filing an issue or a pull request, by its name's end (an MCP server's tool
is named ``mcp__<server>__<tool>`` by Claude Code, ``<server>-<tool>`` by others)."""
_TRACKER_INPUTS = ("body", "description")
"""The inputs holding what an issue or a pull request says, as those servers name them."""
_TITLE = "title"
_MEMORY_INPUTS = {"save_memory": "fact", "store_memory": "fact"}
"""The input holding the fact a memory tool stores: Gemini CLI's, Copilot CLI's."""
_FILING_COMMANDS = frozenset(
    {
        ("gh", "issue", "create"),
        ("gh", "pr", "create"),
        ("gh", "issue", "comment"),
        ("gh", "pr", "comment"),
        ("glab", "issue", "create"),
        ("glab", "mr", "create"),
    }
)
"""A tracker's command line filing an issue, a pull (merge) request or a comment on one."""
_TITLED_FILING_COMMANDS = frozenset({("bd", "create"), ("bd", "new")})
"""One whose first argument is the title (beads' ``bd create [title]``): its ``-t`` is the
issue's type, not its title."""
_TITLED_FILING_FLAGS = {"--title": _TITLE, "--description": "body", "-d": "body"}
"""Those commands' flags for the title and the text (beads')."""
_FILERS = sorted({command[0] for command in _FILING_COMMANDS | _TITLED_FILING_COMMANDS})
_FILING_PROGRAM = re.compile(rf"\b(?:{'|'.join(_FILERS)})\b")
"""The programs of those command lines: a command that names none is not split into words."""
_FILING_FLAGS = {
    "--title": _TITLE,
    "-t": _TITLE,
    "--body": "body",
    "-b": "body",
    "--description": "body",
    "-d": "body",
}
"""Those commands' flags for the title and the text (GitHub CLI's, GitLab CLI's)."""
_ASSIGNED = 2
"""Words before a command whose output a shell variable keeps (``$url =``)."""
_PLAN_FILE = re.compile(r"/session-state/[^/]+/plan\.md$")
"""Where Copilot CLI's agent keeps its plan: its session folder."""
_WRITES = ("wrote", "edited")
_BLOCK_START = re.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|#|\||>|```|~~~)")
"""A line that opens a block of its own (a list item, a heading, a table row, a quote, a fence),
not a wrapped paragraph's next line."""
_FENCE = re.compile(r"\s*(?:```|~~~)")


def plan_decisions(call: ToolUseBlock) -> list[str]:
    """The decisions of the plan ``call`` presents or writes, in order, or the fact it stores;
    the caller passes only a call that succeeded (a presented plan the person approved)."""
    memory = _MEMORY_INPUTS.get(call.name)
    if memory is not None:
        return _whole(plain_input(call).get(memory))
    key = _PLAN_INPUTS.get(call.name)
    tracker = _TRACKER_TOOL.search(call.name) is not None
    keys = (key,) if key is not None else _TRACKER_INPUTS if tracker else ()
    if keys:
        inputs = plain_input(call)
        return [
            *_whole(inputs.get(_TITLE) if tracker else None),
            *(line for k in keys if isinstance(t := inputs.get(k), str) for line in _choices(t)),
        ]
    command = shell_command(call)
    if command is not None:
        if _FILING_PROGRAM.search(command) is None:
            return []
        return [line for head in pipeline_heads(command) for line in _filings(head)]
    found: list[str] = []
    for op in file_ops(call):
        if op.operation in _WRITES and _PLAN_FILE.search(op.path):
            found += _choices(op.code)
    return found


def _filed(command: str) -> tuple[str, ...]:
    """The title and the choices of what ``command`` files through a tracker's command line
    (``_FILING_COMMANDS``), or none."""
    words = shell_words(command.strip())
    said: dict[str, str] = {}
    for at in range(_ASSIGNED + 1):
        if at and words[at - 1 : at] != ["="]:
            continue
        if tuple(words[at : at + 3]) in _FILING_COMMANDS:
            said = _flagged(words[at + 3 :], _FILING_FLAGS)
        elif tuple(words[at : at + 2]) in _TITLED_FILING_COMMANDS:
            args = words[at + 2 :]
            said = _flagged(args, _TITLED_FILING_FLAGS)
            if args and not args[0].startswith("-"):
                said[_TITLE] = args[0]
        else:
            continue
        return (*_whole(said.get(_TITLE)), *_choices(said.get("body", "")))
    return ()


_filings = Remembered(_filed)
"""A successful call's command is read for what it files at every compaction of its session,
and splitting it into words (``shlex``) is most of what that costs: once is enough."""


def _flagged(args: list[str], flags: dict[str, str]) -> dict[str, str]:
    """The title and the text ``args`` give by ``flags`` (``--flag value`` or ``--flag=value``)."""
    said: dict[str, str] = {}
    for flag, value in zip(args, [*args[1:], ""], strict=True):
        name, equals, inline = flag.partition("=")
        if (kind := flags.get(name)) is not None:
            said[kind] = inline if equals else value
    return said


def _whole(said: object) -> list[str]:
    """A statement kept as its one line (an issue's title, the problem or the change it names; a
    stored fact); none if empty."""
    text = said.strip() if isinstance(said, str) else ""
    return [clipped(text)] if text else []


def _choices(plan: str) -> list[str]:
    """The lines of ``plan`` that give a reason or name a choice, in order."""
    return [line for line in decisions(_unwrapped(plan)) if standing(line) == CHOICE]


def _unwrapped(text: str) -> str:
    """``text`` with each wrapped paragraph or list item on one line; code blocks as they are."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            lines.append(line)
        elif not fenced and lines and _continues(lines[-1], line):
            lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
        else:
            lines.append(line)
    return "\n".join(lines)


def _continues(previous: str, line: str) -> bool:
    """Whether ``line`` goes on with the paragraph or list item of ``previous``."""
    return (
        bool(previous.strip() and line.strip())
        and not _FENCE.match(previous)
        and not previous.lstrip().startswith(("#", "|"))
        and not _BLOCK_START.match(line)
    )
