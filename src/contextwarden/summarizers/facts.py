"""The facts a summary must not lose, extracted deterministically from the transcript itself.

``extract_facts`` walks the messages once: typed user messages (the rule is in ``typed.py``), files
touched by tools, failures and whether they were fixed, commands, the todo list, requests still
open, the current work and frequent identifiers. Same messages in, same facts out, in message
order (ties broken by name), with no dependence on time or hashing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.searchable import strings
from contextwarden.summarizers.actions import as_action_calls
from contextwarden.summarizers.asides import aside_decisions
from contextwarden.summarizers.carry import (
    carried_decisions,
    carried_errors,
    carried_excerpts,
    carried_files,
    carried_findings,
    carried_hits,
    split_alias,
)
from contextwarden.summarizers.code_mode import WaitedCalls
from contextwarden.summarizers.commands import command_key, failed_job_log
from contextwarden.summarizers.concepts import identifiers, top_concepts
from contextwarden.summarizers.decisions import decisions
from contextwarden.summarizers.failures import (
    more_lines,
    result_failure,
)
from contextwarden.summarizers.file_facts import EARLIER, FileFact, carried_operations, file_facts
from contextwarden.summarizers.file_op import FileOp
from contextwarden.summarizers.findings import FOLDED, findings, folded_findings
from contextwarden.summarizers.named_files import NAMED, named_file_ops
from contextwarden.summarizers.outputs import exit_status
from contextwarden.summarizers.plans import plan_decisions
from contextwarden.summarizers.rejections import is_rejection, is_rejection_notice
from contextwarden.summarizers.remembered import Remembered
from contextwarden.summarizers.restated import said_once
from contextwarden.summarizers.spellings import slashed_tails
from contextwarden.summarizers.textcalls import ID_PREFIX, as_native_calls
from contextwarden.summarizers.tools import (
    TodoItem,
    canonical_input,
    file_ops,
    plain_input,
    shell_command,
    todo_items,
)
from contextwarden.summarizers.typed import TypedMessage, summary_block_index, user_messages
from contextwarden.toolnames import base_name

MAX_ERROR_LINES = 4
"""Further lines kept per failed call, beyond its most telling one (a summary shows fewer)."""
JOB_LOG_LINES = 2
"""Further lines a failed CI job's log (``commands.failed_job_log``: the GitHub Actions
runner's ``##[error]Process completed with exit code N.`` in it) gives past
``MAX_ERROR_LINES``: such a log holds every step's and job's output, each failure its own (a
test's, a build's, a later step's that read a file the failed one never wrote), where a
program's output holds one. A summary shows them in the room its budget leaves
(``structured_builder``)."""
_EDITS = frozenset({"wrote", "edited", "deleted"})
"""File operations whose message's text says what the edit does and why (``decisions``)."""
_EARLIER_RE = re.compile(rf"^(?:{EARLIER})+")
_TASK_CREATED = re.compile(r"Task #(\w+) created")


@dataclass(frozen=True, slots=True)
class ErrorFact:
    """A failed tool call: which tool, on what, what it said, and whether a later retry worked.

    ``rejected``: the person refused to let the call run. That is their decision, not a failure:
    it is never ``fixed`` by a later call that succeeds, and a summary keeps it like an
    unresolved error."""

    index: int
    tool: str
    target: str
    excerpt: str
    fixed: bool
    more: tuple[str, ...] = ()
    """Further lines of the output that say what went wrong, in order (not the excerpt)."""
    rejected: bool = False

    @property
    def further(self) -> tuple[str, ...]:
        """The further lines every failure gives (``MAX_ERROR_LINES``): with the excerpt, what
        tells one failure from another."""
        return self.more[:MAX_ERROR_LINES]

    @property
    def job_log(self) -> tuple[str, ...]:
        """The further lines past those, which only a failed CI job's log gives
        (``JOB_LOG_LINES``)."""
        return self.more[MAX_ERROR_LINES:]


@dataclass(frozen=True, slots=True)
class CommandFact:
    index: int
    command: str
    status: int | None
    failed: bool


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything ``extract_facts`` found, in message order."""

    user_messages: tuple[TypedMessage, ...]
    files: tuple[FileFact, ...]
    errors: tuple[ErrorFact, ...]
    commands: tuple[CommandFact, ...]
    todos: tuple[TodoItem, ...]
    pending_requests: tuple[TypedMessage, ...]
    last_assistant_text: str
    answers: tuple[tuple[int, str], ...]
    """(message index, text) of each assistant reply that ended a turn (answered the user)."""
    last_tool_calls: tuple[str, ...]
    decisions: tuple[tuple[int, str], ...]
    """(message index, sentence): what the assistant decided or gave as a reason, in order."""
    concepts: tuple[tuple[str, int], ...]
    tool_counts: tuple[tuple[str, int], ...]
    message_count: int
    findings: tuple[tuple[int, int, str], ...] = ()
    """(message index, place, unit): the rest of what the assistant wrote that says something
    (``findings``), in order; the summary keeps what its other lines do not hold. ``place``:
    the unit's position among the findings of its text (``findings.LEAD_FINDINGS``); 0 for one
    an earlier summary lists, which that summary chose already."""

    @property
    def unresolved_errors(self) -> tuple[ErrorFact, ...]:
        return tuple(e for e in self.errors if not e.fixed)


@dataclass(slots=True)
class _Attempt:
    index: int
    tool: str
    target: str
    excerpt: str | None
    more: tuple[str, ...] = ()
    rejected: bool = False


@dataclass(slots=True)
class _Walk:
    """Mutable state of one pass over the messages (private to ``extract_facts``)."""

    open_calls: dict[str, ToolUseBlock] = field(default_factory=dict)
    call_index: dict[str, int] = field(default_factory=dict)
    file_ops: list[tuple[int, FileOp]] = field(default_factory=list)
    """Every file operation in order, with the index of the message that made it."""
    attempts: list[_Attempt] = field(default_factory=list)
    carried: list[ErrorFact] = field(default_factory=list)
    commands: list[CommandFact] = field(default_factory=list)
    todos: tuple[TodoItem, ...] = ()
    tasks: dict[str, TodoItem] = field(default_factory=dict)
    last_text: str = ""
    last_calls: tuple[ToolUseBlock, ...] = ()
    turn_end: int = -1
    answers: list[tuple[int, str]] = field(default_factory=list)
    decisions: list[tuple[int, str]] = field(default_factory=list)
    findings: list[tuple[int, int, str]] = field(default_factory=list)
    concepts: Counter[str] = field(default_factory=Counter)
    tool_counts: Counter[str] = field(default_factory=Counter)
    aliases: dict[str, str] = field(default_factory=dict)
    """Each carried file's other spelling, by path (``FileFact.alias``)."""


def extract_facts(messages: Sequence[Message]) -> Facts:
    """The facts of ``messages`` (see the module docstring)."""
    count = len(messages)
    messages = as_native_calls(messages)
    messages = as_action_calls(messages)
    walk = _Walk()
    waited = WaitedCalls(messages)
    for index, message in enumerate(messages):
        walk.decisions.extend((index, s) for s in aside_decisions(message))
        if message.role == "assistant":
            _assistant(walk, message, index)
        else:
            _carry(walk, message, index)
            for result in message.tool_results:
                call = walk.open_calls.pop(result.tool_use_id, None)
                if call is not None:
                    judged = waited.judged(walk.call_index[call.id], call)
                    _result(walk, call, judged, result, index)
    for call in walk.open_calls.values():  # calls still waiting for a result at the cut
        _add_files(walk, file_ops(call), walk.call_index[call.id])
    if not walk.tool_counts and all(op.operation == NAMED for _, op in walk.file_ops):
        # an export that kept no call (nor did the span an earlier summary read): the files it
        # names are its record; a span of prose in a session whose tools worked is not
        walk.file_ops.extend(named_file_ops(messages))
    typed = user_messages(messages)
    prose = [m.text for m in messages if m.role == "assistant"] + [m.text for m in typed]
    prose += [s for m in messages for call in m.tool_uses for s in strings(call.input)]
    return Facts(
        user_messages=typed,
        files=file_facts(walk.file_ops, walk.aliases, slashed_tails("\n".join(prose))),
        errors=_distinct((*walk.carried, *_errors(walk.attempts))),
        commands=tuple(walk.commands),
        todos=walk.todos + tuple(walk.tasks.values()),
        pending_requests=tuple(m for m in typed if m.index > walk.turn_end and not m.carried),
        last_assistant_text=walk.last_text,
        answers=tuple(walk.answers),
        last_tool_calls=tuple(describe_call(c) for c in walk.last_calls),
        decisions=said_once(walk.decisions),
        concepts=top_concepts(walk.concepts),
        tool_counts=tuple(sorted(walk.tool_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        message_count=count,
        findings=tuple(walk.findings),
    )


def _assistant(walk: _Walk, message: Message, index: int) -> None:
    texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text.strip()]
    calls = message.tool_uses
    if texts:
        walk.last_text = texts[-1]
        edits = any(op.operation in _EDITS for call in calls for op in file_ops(call))
        for text in texts:
            walk.concepts.update(_identifiers(text))
            decided, own, folded = _read(text, edits)
            walk.decisions.extend((index, s) for s in decided)
            walk.findings.extend((index, *found) for found in enumerate(own))
            walk.findings.extend((index, FOLDED, unit) for unit in folded)
    if calls:
        walk.last_calls = calls
    if texts and (not calls or _answered_after(message)):
        walk.turn_end = index  # a reply without tool calls ends the agent's turn
        walk.answers.append((index, "\n".join(texts)))
    for call in calls:
        walk.open_calls[call.id] = call
        walk.call_index[call.id] = index
        walk.tool_counts[call.name] += 1
        for string in _input_strings(call):
            walk.concepts.update(_identifiers(string))
        todos = todo_items(call)
        if todos is not None:
            walk.todos = todos


def _reading(text: str, edits: bool) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """What an assistant's ``text`` says: its decisions, its findings, and the findings only a
    step's output folded into it holds (``edits``: its message edits a file)."""
    decided = decisions(text, edits=edits)
    own = findings(text, decided)
    return tuple(decided), tuple(own), tuple(folded_findings(text, decided, own))


_read = Remembered(_reading)
"""An assistant's text is read again at every compaction of its session (the loss report reads
every message from the first one changed), and what it says depends on it alone."""


def _identifiers_of(text: str) -> tuple[str, ...]:
    return tuple(identifiers((text,)))


_identifiers = Remembered(_identifiers_of)
"""``identifiers`` of one text, remembered as ``_read``: those of several are each one's, in
order."""


def _answered_after(message: Message) -> bool:
    """True when a reply whose calls were read from its text (a resumed session's steps, all
    one message) goes on in prose after the last of them: the agent answered, its turn ended."""
    last = message.content[-1]
    calls = message.tool_uses
    from_text = all(call.id.startswith(ID_PREFIX) for call in calls)
    return from_text and isinstance(last, TextBlock) and bool(last.text.strip())


def _result(
    walk: _Walk, call: ToolUseBlock, judged: ToolUseBlock, result: ToolResultBlock, index: int
) -> None:
    """What ``call`` did, its ``result`` judged as ``judged``'s (a ``wait``'s, as its script's)."""
    text = result.text
    ops = file_ops(call, text)
    command = shell_command(call)
    excerpt = result_failure(judged, result)
    if excerpt is not None:  # a failed call read or wrote nothing, but it tried
        ops = tuple(FileOp(op.path, f"{op.operation} (failed)") for op in ops)
    _add_files(walk, ops, walk.call_index[call.id])
    if command is not None:
        walk.commands.append(CommandFact(index, command, exit_status(text), excerpt is not None))
    # the attempt is the judged call's (a poll's, its command's), which a later run may fix
    judged_command = command if judged is call else shell_command(judged)
    if judged_command is not None:
        target = command_key(judged_command)
    else:
        target = ops[0].path if ops else canonical_input(judged)
    limit = MAX_ERROR_LINES + (JOB_LOG_LINES if failed_job_log(text) else 0)
    more = () if excerpt is None else more_lines(judged, result, excerpt, limit)
    # a harness that flags no refusal is known by its notice, quoted as the excerpt
    rejected = excerpt is not None and (is_rejection(result) or is_rejection_notice(excerpt))
    walk.attempts.append(_Attempt(index, judged.name, target, excerpt, more, rejected))
    if excerpt is None:  # a plan the person approved, or wrote down (not one turned down)
        planned = plan_decisions(call)
        walk.decisions.extend((walk.call_index[call.id], s) for s in planned)
    _track_tasks(walk, call, text)


def _carry(walk: _Walk, message: Message, index: int) -> None:
    """Files and errors an earlier summary of ours lists stay listed (files as ``earlier: …``),
    its decisions and findings too, and what it quotes of the assistant only in excerpts is
    read again for decisions and findings that no line it carries holds."""
    at = summary_block_index(message)
    block = message.content[at] if at is not None else None
    text = (
        message.text
        if message.meta.extra.get("isCompactSummary")
        else (block.text if isinstance(block, TextBlock) else "")
    )
    for path, line in carried_files(text):
        alias, done = split_alias(line)
        if alias:
            walk.aliases[path] = alias
        _add_files(walk, carried_operations(path, _EARLIER_RE.sub("", done)), index)
    for error in carried_errors(text):
        # A summary written before refusals had their own status listed one as fixed or not.
        rejected = error.rejected or is_rejection_notice(error.excerpt)
        fixed = error.fixed and not rejected
        walk.carried.append(
            ErrorFact(index, error.tool, error.target, error.excerpt, fixed, error.more, rejected)
        )
    decided, found, hits = carried_decisions(text), carried_findings(text), carried_hits(text)
    walk.decisions.extend((index, sentence) for sentence in decided)
    walk.findings.extend((index, 0, unit) for unit in found)
    walk.findings.extend((index, FOLDED, unit) for unit in hits)
    held = (*decided, *found, *hits)
    for excerpt in carried_excerpts(text):  # read as the assistant's prose it was
        read = decisions(excerpt)
        walk.decisions.extend((index, s) for s in read if _new(s, held))
        walk.findings.extend(
            (index, place, u) for place, u in enumerate(findings(excerpt, read)) if _new(u, held)
        )


def _new(unit: str, held: Sequence[str]) -> bool:
    """Whether no line in ``held`` contains ``unit`` or is contained in it (the same sentence
    read from an excerpt, with or without the one next to it)."""
    return not any(unit in line or line in unit for line in held)


def _add_files(walk: _Walk, ops: Iterable[FileOp], index: int) -> None:
    walk.file_ops.extend((index, op) for op in ops)


def _track_tasks(walk: _Walk, call: ToolUseBlock, result_text: str) -> None:
    """Claude Code's TaskCreate/TaskUpdate tools: a task board keyed by the id the result gives."""
    name, args = base_name(call.name), plain_input(call)
    if name == "taskcreate":
        created = _TASK_CREATED.search(result_text)
        subject = args.get("subject") or args.get("description")
        if created and isinstance(subject, str):
            walk.tasks[created.group(1)] = TodoItem(subject, "pending")
    elif name == "taskupdate":
        task, status = walk.tasks.get(str(args.get("taskId"))), args.get("status")
        if task is not None and isinstance(status, str):
            walk.tasks[str(args.get("taskId"))] = TodoItem(task.text, status)


def _errors(attempts: list[_Attempt]) -> tuple[ErrorFact, ...]:
    """The failed ``attempts``, each ``fixed`` when the same tool later worked on its target.

    The attempts are read once, last first, with the calls that worked so far: each failure
    read every attempt after it, minutes for a session that ran one failing command
    thousands of times."""
    worked: set[tuple[str, str]] = set()
    errors = []
    for attempt in reversed(attempts):
        if attempt.excerpt is None:
            worked.add((attempt.tool, attempt.target))
            continue
        fixed = not attempt.rejected and (attempt.tool, attempt.target) in worked
        errors.append(
            ErrorFact(
                attempt.index,
                attempt.tool,
                attempt.target,
                attempt.excerpt,
                fixed,
                attempt.more,
                attempt.rejected,
            )
        )
    return tuple(reversed(errors))


def _distinct(errors: Sequence[ErrorFact]) -> tuple[ErrorFact, ...]:
    """``errors`` with a failure that a later one repeats word for word left out: the same call
    on the same target saying the same lines (an agent reruns a failing test or command many
    times), or another target saying the same lines with the same status (a search retried with
    other patterns, each failing with ``zsh: no matches found: --include=*.go``). Each copy of
    an unresolved error is kept in every summary whatever its budget, at the cost of the
    decisions, and the error line is what a summary carries: the target only says which call
    it was. The latest copy stays, where it was last seen and with its status then (a call that
    failed once more is not fixed by what came between; one fixed and one not are two facts)."""
    same_call: set[tuple[str, str, str, tuple[str, ...], bool]] = set()
    same_failure: set[tuple[str, str, tuple[str, ...], bool, bool]] = set()
    kept: list[ErrorFact] = []
    for error in reversed(errors):
        call = (error.tool, error.target, error.excerpt, error.further, error.rejected)
        failure = (error.tool, error.excerpt, error.further, error.rejected, error.fixed)
        if call not in same_call and failure not in same_failure:
            same_call.add(call)
            same_failure.add(failure)
            kept.append(error)
    return tuple(reversed(kept))


def describe_call(call: ToolUseBlock, limit: int = 300) -> str:
    """A one-line description of a tool call: its command, its path, or its input."""
    command = shell_command(call)
    if command is not None:
        what = command
    else:
        ops = file_ops(call)
        what = ", ".join(op.path for op in ops) if ops else canonical_input(call)
    what = " ".join(what.split())
    if len(what) > limit:
        what = what[: limit - 1] + "…"
    return f"{call.name}: {what}"


def _input_strings(call: ToolUseBlock) -> list[str]:
    return [v for v in plain_input(call).values() if isinstance(v, str)]
