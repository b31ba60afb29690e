"""SWE-agent ``.traj`` and mini-swe-agent ``.traj.json`` trajectories as conversations.
Both hold the OpenAI-shaped chat messages the model saw (``history`` / ``messages``).

The run's outcome (``info``: exit status, submission, model stats) goes to ``report.metadata``.
mini-swe-agent v2 keeps "the model's native output" as each message: with a Responses-API model
class a reply is a whole response object and a command output a ``function_call_output`` item;
such a trajectory is read as Responses items (``wire.responses``).

These agents write the environment's side of the exchange in the user role: command outputs
(mini-swe-agent v1 ``<returncode>…``, classic SWE-agent observations ending in its ``bash-$``
prompt), format-error reminders, the final diff after a submission. Those messages are marked
``meta.extra["injected"] = True`` with ``injected_texts`` and ``injected_kind`` "observation", so
readers need not recognise them by their text. Which they are is read off the structure: a user
message answering an assistant message, or one whose mini-swe-agent ``extra`` says so
(``returncode``, ``interrupt_type`` "FormatError"). What the person typed into an interactive run
(``HUMAN_INTERRUPTS``, ``HUMAN_PREFIXES``) is never marked. SWE-agent's demonstrations (``is_demo``
user entries, a worked example the harness shows the model) are marked too, with ``injected_kind``
"demonstration"; the task statement is not marked.

The command a text-action reply runs is kept as ``meta.extra["action"]``: classic SWE-agent
records it beside each history entry; mini-swe-agent finds it in the reply's text, the one
fenced block its ``action_regex`` matches (``MINI_ACTION``), and so does this loader, so a
reader can pair the command with the observation that answers it
(``summarizers.actions``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import build_history, parse_json, read_text, relocate_issues
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping
from contextwarden.wire.openai_in import messages_from_openai
from contextwarden.wire.responses import message_from_response, messages_from_responses

NAME = "swe-agent"
EXPECTED = "a SWE-agent .traj or mini-swe-agent .traj.json trajectory with messages"

HUMAN_INTERRUPTS = frozenset({"UserInterruption", "UserRejection", "UserNewTask"})
"""mini-swe-agent ``extra.interrupt_type`` of user messages holding what the person typed."""
HUMAN_PREFIXES = (
    "Interrupted by user:",
    "The user added a new task:",
    "Command not executed. The user rejected",
    "Commands not executed. The user rejected",
)
"""How mini-swe-agent's interactive agent opens a message quoting the person (versions before
``interrupt_type`` wrote only this text); such a message answers the agent but is not its
environment's output."""
OBSERVATION_EXTRA = ("returncode", "raw_output")
"""mini-swe-agent ``extra`` keys that only an environment output has."""
MINI_ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.S)
"""mini-swe-agent's ``action_regex``: ```` ```bash ```` in v1 (``agents/default.py``'s
``AgentConfig``), ```` ```mswea_bash_command ```` in v2's text-based models; a reply with no match
or more than one is a format error, and ran nothing."""
_INFO_KEYS = ("exit_status", "submission", "model_stats", "mini_version", "exception_str")
_ENTRY_META = ("agent", "message_type", "is_demo", "action")
"""SWE-agent history fields worth keeping with a message (``thought`` is kept only when it is not
already the message text)."""
_HEAD = re.compile(
    r'^\s*\{\s*"(environment|trajectory|history|info|messages)"\s*:'
    r'|"trajectory_format"\s*:\s*"mini-swe-agent|"agent_type"\s*:\s*"minisweagent'
)


def sniff(path: Path, head: str) -> bool:
    if not head.lstrip().startswith("{"):
        return False
    if path.name.endswith((".traj", ".traj.json")):
        return True
    if not _HEAD.search(head):
        return False
    # A classic trajectory has both; a mini-swe-agent one names itself in `info` or at the end.
    classic = '"trajectory"' in head and '"history"' in head
    mini = "trajectory_format" in head or "mini_version" in head or "minisweagent" in head
    return classic or mini


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    document = parse_json(read_text(path, report), str(path))
    if not isinstance(document, Mapping):
        raise FormatError(
            f"expected a trajectory object, got a {type(document).__name__}", path=str(path)
        )
    return from_document(document, report, counter=counter)


def from_document(
    document: Mapping[str, Any], report: LoadReport, *, counter: TokenCounter | None = None
) -> ConversationHistory:
    """The conversation of a parsed trajectory (``history`` or mini-swe-agent ``messages``)."""
    classic = isinstance(document.get("history"), list)
    raw = document["history"] if classic else document.get("messages")
    if not isinstance(raw, list):
        raise FormatError(
            "no 'history' (SWE-agent) or 'messages' (mini-swe-agent) list", path=report.path
        )
    _keep_info(document, report)
    report.metadata["variant"] = (
        "swe-agent" if classic else str(document.get("trajectory_format", "mini-swe-agent"))
    )
    report.records += len(raw)
    chat: list[Any] = []
    positions: list[int] = []  # index in the file of each message passed on
    for i, entry in enumerate(raw):
        if isinstance(entry, Mapping) and entry.get("role") == "exit":
            # mini-swe-agent's last record: how the run ended; never sent to the model.
            extra = entry.get("extra")
            kept = (
                extra if isinstance(extra, Mapping) and extra else {"content": entry.get("content")}
            )
            report.metadata["exit"] = dict(kept)
            continue
        chat.append(_normalised(entry) if classic else entry)
        positions.append(i)
    first_issue = len(report.issues)
    if any(_responses_entry(entry) for entry in chat):
        system, messages = _messages_from_responses_log(chat, report)
    else:
        system, messages = messages_from_openai(chat, report)
    injected = _injected_kinds(raw)
    messages = [_with_file_meta(m, raw, positions, classic, injected) for m in messages]
    relocate_issues(report, first_issue, indices=positions)
    return build_history(system, messages, report, counter=counter)


def _responses_entry(entry: Any) -> bool:
    """An entry only a Responses model class writes: a whole ``response`` object, or an item with
    a ``type`` (``function_call_output``, a ``message``); chat messages carry no ``type``."""
    return isinstance(entry, Mapping) and (
        entry.get("object") == "response" or isinstance(entry.get("type"), str)
    )


def _messages_from_responses_log(
    chat: Sequence[Any], report: LoadReport
) -> tuple[str | None, list[Message]]:
    """mini-swe-agent v2 with a Responses model class (``litellm_response``,
    ``openrouter_response``, ``portkey_response``) keeps each reply as the whole response object,
    each command output as a ``function_call_output`` item and its templates as chat messages;
    the model is sent the objects' output items and every entry less its ``extra``
    (``LitellmResponseModel._prepare_messages_for_api``). Read the same way, entry by entry, each
    message keeping its entry's index as its source id."""
    system: list[str] = []
    messages: list[Message] = []
    for index, entry in enumerate(chat):
        try:
            if not isinstance(entry, Mapping):
                raise FormatError(f"expected an object, got {entry!r:.60}")
            if entry.get("object") == "response":
                lead, found = None, [message_from_response(entry)]
            else:
                item = {k: v for k, v in entry.items() if k != "extra"}
                lead, found = messages_from_responses([item])
        except FormatError as exc:
            report.skip(f"{exc}; message skipped", index=index)
            continue
        if lead is not None and not messages:
            system.append(lead)
        elif lead is not None:
            found = [Message("user", (TextBlock(lead),))]
        ids = (str(index),)
        messages += [replace(m, meta=replace(m.meta, source_ids=ids)) for m in found]
    return ("\n\n".join(system) if system else None), messages


def _keep_info(document: Mapping[str, Any], report: LoadReport) -> None:
    info = document.get("info")
    if isinstance(info, Mapping):
        report.metadata.update({k: info[k] for k in _INFO_KEYS if k in info})
    for key in ("instance_id", "environment", "trajectory_format"):
        if isinstance(document.get(key), str):
            report.metadata[key] = document[key]
    if isinstance(document.get("trajectory"), list):
        report.metadata["trajectory_steps"] = len(document["trajectory"])


def _normalised(entry: Any) -> Any:
    """SWE-agent writes ``tool_call_ids`` (a list) on tool messages; OpenAI has ``tool_call_id``."""
    if not isinstance(entry, Mapping) or entry.get("role") != "tool" or "tool_call_id" in entry:
        return entry
    ids = entry.get("tool_call_ids")
    if isinstance(ids, list) and ids and isinstance(ids[0], str):
        # SWE-agent runs one tool call per turn; extra ids get placeholder results in merge mode.
        return {**entry, "tool_call_id": ids[0]}
    return entry


def _injected_kinds(raw: list[Any]) -> dict[int, str]:
    """File index → kind of each user message the harness wrote (see the module docstring)."""
    found: dict[int, str] = {}
    previous: Any = None
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            previous = None
            continue
        if entry.get("role") == "user" and entry.get("is_demo") is True:
            found[i] = "demonstration"
        elif entry.get("role") == "user" and _from_environment(entry, previous == "assistant"):
            found[i] = "observation"
        previous = entry.get("role")
    return found


def _from_environment(entry: Mapping[str, Any], answers_agent: bool) -> bool:
    extra = as_mapping(entry.get("extra"))
    interrupt = extra.get("interrupt_type")
    if interrupt in HUMAN_INTERRUPTS:
        return False
    if interrupt == "FormatError" or any(key in extra for key in OBSERVATION_EXTRA):
        return True
    content = entry.get("content")
    quotes_person = isinstance(content, str) and content.lstrip().startswith(HUMAN_PREFIXES)
    return answers_agent and not quotes_person


def _with_file_meta(
    message: Message, raw: list[Any], positions: list[int], classic: bool, injected: dict[int, str]
) -> Message:
    """Source ids that point into the file, SWE-agent's own fields, the harness's mark."""
    ids = tuple(str(positions[int(i)]) for i in message.meta.source_ids if i.isdigit())
    extra = dict(message.meta.extra)
    if classic and ids:
        entry = raw[int(ids[0])]
        extra.update({k: entry[k] for k in _ENTRY_META if k in entry})
        thought = entry.get("thought")
        if isinstance(thought, str) and thought.strip() != message.text.strip():
            extra["thought"] = thought
    elif message.role == "assistant" and not message.tool_uses:
        actions = MINI_ACTION.findall(message.text)
        if len(actions) == 1:
            extra["action"] = actions[0].strip()  # stripped, as the harness runs it
    kind = injected.get(int(ids[0])) if message.role == "user" and len(ids) == 1 else None
    if kind is not None:
        texts = tuple(b.text for b in message.content if isinstance(b, TextBlock))
        extra.update(injected=True, injected_texts=texts, injected_kind=kind)
    meta = MessageMeta(message.meta.timestamp, message.meta.id, ids, FrozenDict(extra))
    return Message(message.role, message.content, meta)
