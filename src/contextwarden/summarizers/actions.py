"""Text actions: a command written in the reply's text, answered by an observation, read as the
shell call and result they are.

SWE-agent and mini-swe-agent v1 have the model run a command by writing it in a fenced block of
its reply; the harness runs it and answers in the next user message, the observation
(mini-swe-agent v1: ``<returncode>N</returncode>`` then ``<output>…</output>``)::

    THOUGHT: Now I will run the reproduction script.

    ```bash
    ./reproduce_issue.sh
    ```

The loaders keep both as the text the model saw and mark them: the reply's command as
``meta.extra["action"]`` (``formats.swe_agent``), the answer as an observation (``injected``
with an ``injected_kind``; OpenHands marks its observations that answer no call the same way).
This module is the one reading of those marks: ``is_observation`` for the rungs that budget, cut
or clear an observation (``compaction.observations``), and ``action_call`` for the shell call an
observation answers, so a failed command's observation is judged as a failed shell call is
(microcompact keeps its error lines).
"""

from __future__ import annotations

from contextwarden.model import Message, ToolUseBlock

NOT_OBSERVATIONS = frozenset({"demonstration", "recall"})
"""Injected kinds that are not the environment's answer to an action: SWE-agent's worked example
and OpenHands' workspace context stay as they are, like the task statement."""
ACTION_KEY = "action"
"""Where a loader keeps the command a text-action reply runs."""
ACTION_TOOL = "bash"
"""The tool a text action is read as: both agents run every action in one bash session
(SWE-agent's own commands, ``open``, ``edit``, ``find_file``…, are shell functions it installs
there)."""


def is_observation(message: Message) -> bool:
    """True for a user message a loader marked as an agent's observation (see the docstring)."""
    if message.role != "user" or message.tool_results:
        return False
    extra = message.meta.extra
    kind = extra.get("injected_kind")
    return extra.get("injected") is True and isinstance(kind, str) and kind not in NOT_OBSERVATIONS


def action_call(message: Message, call_id: str) -> ToolUseBlock | None:
    """The shell call a text-action reply makes, with id ``call_id``; None for a message that is
    not such a reply (a native call's, the person's, a reply whose format ran nothing)."""
    if message.role != "assistant" or message.tool_uses:
        return None
    action = message.meta.extra.get(ACTION_KEY)
    if not isinstance(action, str) or not action.strip():
        return None
    return ToolUseBlock(call_id, ACTION_TOOL, {"command": action.strip()})
