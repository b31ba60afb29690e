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
aider runs a command of its own after a reply: its linter, on the files the reply edited; the
aider loader gives such a reply the linter's command line as its action, so a lint report with
errors reads as that command's failed output (``formats.aider_output``); aider also applies the
reply's SEARCH/REPLACE blocks, and a reply whose blocks it could not apply is read as an edit
call (``EDIT_KEY``) answered by its failed-edit report.
This module is the one reading of those marks: ``is_observation`` for the rungs that budget, cut
or clear an observation (``compaction.observations``), ``action_call`` for the call an
observation answers (microcompact keeps a failed one's error lines), and ``as_action_calls`` for
the summary's facts, so a text-action session's files, commands and failures are found as for
any agent's shell calls. The messages it returns are for reading only; they are never sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock

NOT_OBSERVATIONS = frozenset({"demonstration", "recall"})
"""Injected kinds that are not the environment's answer to an action: SWE-agent's worked example
and OpenHands' workspace context stay as they are, like the task statement."""
ACTION_KEY = "action"
"""Where a loader keeps the command a text-action reply runs."""
EDIT_KEY = "edit"
"""Where a loader keeps the file a reply's edit blocks changed when its harness answered that
it could not apply them (aider's failed-edit report, ``formats.aider_output.failed_edits``)."""
EDIT_TOOL = "Edit"
"""The tool such a reply is read as: an edit of that file whose result is the harness's report,
so the file is marked failed and the report's lines are the failure (``summarizers.failures``)."""
ACTION_TOOL = "bash"
"""The tool a text action is read as: both agents run every action in one bash session
(SWE-agent's own commands, ``open``, ``edit``, ``find_file``…, are shell functions it installs
there)."""
ID_PREFIX = "text-action-"
"""The id of a call read from a text action: this prefix and the index of the reply."""


def is_observation(message: Message) -> bool:
    """True for a user message a loader marked as an agent's observation (see the docstring)."""
    if message.role != "user" or message.tool_results:
        return False
    extra = message.meta.extra
    kind = extra.get("injected_kind")
    return extra.get("injected") is True and isinstance(kind, str) and kind not in NOT_OBSERVATIONS


def action_call(message: Message, call_id: str) -> ToolUseBlock | None:
    """The shell call a text-action reply makes, with id ``call_id``, or the edit call of a reply
    whose edits its harness could not apply (``EDIT_KEY``); None for a message that is not such
    a reply (a native call's, the person's, a reply whose format ran nothing)."""
    if message.role != "assistant" or message.tool_uses:
        return None
    action = message.meta.extra.get(ACTION_KEY)
    if isinstance(action, str) and action.strip():
        return ToolUseBlock(call_id, ACTION_TOOL, {"command": action.strip()})
    edited = message.meta.extra.get(EDIT_KEY)
    if isinstance(edited, str) and edited.strip():
        return ToolUseBlock(call_id, EDIT_TOOL, {"file_path": edited.strip()})
    return None


def as_action_calls(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` with each text-action reply answered by an observation given its shell
    ``tool_use`` after its text, and the observation as the call's ``tool_result``;
    ``messages`` itself when there are none."""
    out: list[Message] | None = None
    for index in range(len(messages) - 1):
        reply, answer = messages[index], messages[index + 1]
        call = action_call(reply, f"{ID_PREFIX}{index}")
        if call is None or not is_observation(answer):
            continue
        result = _as_result(answer, call.id)
        if result is not None:
            out = list(messages) if out is None else out
            # the reply's text stays whole: the comments of a script it runs say why
            out[index] = Message("assistant", (*reply.content, call), reply.meta)
            out[index + 1] = result
    return messages if out is None else out


def _as_result(answer: Message, call_id: str) -> Message | None:
    """``answer`` with its observed texts (those its loader listed as injected, when it lists
    them: a summary merged in front is not) as one ``tool_result`` where the first was."""
    listed = answer.meta.extra.get("injected_texts")
    observed = {
        i: b.text
        for i, b in enumerate(answer.content)
        if isinstance(b, TextBlock) and (not isinstance(listed, tuple) or b.text in listed)
    }
    if not observed:
        return None
    first = min(observed)
    result = ToolResultBlock(call_id, "\n".join(observed.values()))
    blocks = [
        result if i == first else b
        for i, b in enumerate(answer.content)
        if i == first or i not in observed
    ]
    return Message("user", tuple(blocks), answer.meta)
