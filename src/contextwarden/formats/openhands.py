"""OpenHands event histories: ``output.jsonl`` evaluation runs (one per line) or a JSON event list.
The loader: which run of the file, and the run's facts; ``openhands_events`` converts the events
of the original schema (``action``/``observation`` names), ``openhands_v1`` those of the V1
software-agent-sdk schema (``kind``). An old ``output.jsonl`` whose ``history`` is a list of
``[action, observation]`` pairs is read as the events of its pairs, in order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import build_history, iter_jsonl, parse_json, read_text
from contextwarden.formats.openhands_events import EventBuilder
from contextwarden.formats.openhands_v1 import V1EventBuilder, is_v1_event
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping

NAME = "openhands"
EXPECTED = "OpenHands events: a JSON event list, or output.jsonl runs with a 'history' list"

_VOCAB = re.compile(
    r'"action"\s*:\s*"(message|run|run_ipython|read|edit|write|browse|browse_interactive|finish'
    r'|think|system|recall|change_agent_state|delegate|mcp)"'
    r'|"observation"\s*:\s*"(run|run_ipython|read|edit|write|browse|error|recall|think'
    r'|agent_state_changed|null|user_rejected|success|mcp)"'
)

_V1_KINDS = re.compile(
    r'"kind"\s*:\s*"(MessageEvent|ActionEvent|ObservationEvent|SystemPromptEvent|AgentErrorEvent)"'
)


def sniff(path: Path, head: str) -> bool:
    start = head.lstrip()[:1]
    vocabulary = _VOCAB.search(head) or _V1_KINDS.search(head)
    if path.name.endswith((".traj", ".traj.json")) or not vocabulary:
        return False
    if start == "[":
        return True
    return start == "{" and bool(re.search(r'"history"\s*:\s*\[', head))


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Conversation ``index`` of the file (``report.metadata["conversations"]`` says how many)."""
    runs = _runs(path, report)
    report.metadata["conversations"] = len(runs)
    if not 0 <= index < len(runs):
        raise FormatError(
            f"conversation index {index} is out of range: the file holds {len(runs)} "
            f"conversation(s), numbered 0 to {len(runs) - 1}",
            path=str(path),
        )
    line, run = runs[index]
    _keep_run_facts(run, report)
    events = _flatten_pairs(run["history"])
    v1 = any(is_v1_event(e) for e in events)
    report.metadata["schema"] = "v1" if v1 else "v0"
    builder = (V1EventBuilder if v1 else EventBuilder)(report, line)
    for i, event in enumerate(events):
        try:
            builder.add(event, i)
        except FormatError as exc:  # a value inside it cannot be held (e.g. nested too deeply)
            report.skip(f"{exc}; event skipped", line=line, index=i)
    builder.ensure_instruction(run.get("instruction"))
    report.metadata["events"] = len(events)
    report.metadata["event_kinds"] = dict(builder.kinds)
    return build_history(
        builder.system, builder.messages, report, tools=builder.tools, counter=counter
    )


def _flatten_pairs(history: list[Any]) -> list[Any]:
    """Events in order, from a list of events or of ``[action, observation]`` pairs."""
    if not any(isinstance(item, list) for item in history):
        return history
    return [e for item in history for e in (item if isinstance(item, list) else [item])]


def _runs(path: Path, report: LoadReport) -> list[tuple[int | None, Mapping[str, Any]]]:
    """Each run with its line number (None for a .json file)."""
    text = read_text(path, report)
    if text.lstrip().startswith("[") or path.suffix == ".json":
        document = parse_json(text, str(path))
        report.records += 1
        if isinstance(document, list):
            return [(None, {"history": document})]
        if isinstance(document, Mapping) and isinstance(document.get("history"), list):
            return [(None, document)]
        raise FormatError(
            "expected a list of events or a run with a 'history' list", path=str(path)
        )
    runs: list[tuple[int | None, Mapping[str, Any]]] = []
    for item in iter_jsonl(text, report):
        if isinstance(item.value, Mapping) and isinstance(item.value.get("history"), list):
            runs.append((item.line, item.value))
        else:
            report.reject(
                "not an OpenHands run (no 'history' list); line skipped", item.value, line=item.line
            )
    return runs


def _keep_run_facts(run: Mapping[str, Any], report: LoadReport) -> None:
    for key in ("instance_id", "error", "success", "issue_type"):
        if run.get(key) is not None:
            report.metadata[key] = run[key]
    metadata = as_mapping(run.get("metadata"))
    if isinstance(metadata.get("agent_class"), str):
        report.metadata["agent_class"] = metadata["agent_class"]
    llm = as_mapping(metadata.get("llm_config"))
    if isinstance(llm.get("model"), str):
        report.metadata["model"] = llm["model"]
    metrics = as_mapping(run.get("metrics"))
    if isinstance(metrics.get("accumulated_cost"), int | float):
        report.metadata["accumulated_cost"] = metrics["accumulated_cost"]
