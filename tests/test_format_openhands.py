"""OpenHands event histories: output.jsonl runs and JSON event lists, both event schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TRANSCRIPTS_DIR, corpus, fixture_path
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.model import ToolResultBlock
from contextwarden.repair import MISSING_RESULT_TEXT
from contextwarden.rules import validate
from tests.jsonpaths import draw_mutations

PONYC = fixture_path("openhands/All-Hands-AI__OpenHands__multi-swe-bench-ponyc-llama4-output.jsonl")
RESOLVER = fixture_path("openhands/All-Hands-AI__OpenHands__resolver-mock-output.jsonl")
GUI = fixture_path("openhands/All-Hands-AI__OpenHands__runtime-traj-basic_gui_mode.json")
FULL_PONYC = TRANSCRIPTS_DIR / "openhands" / PONYC.name  # all three runs, whole
TOOL_ACTIONS = {"run", "run_ipython", "read", "edit", "write", "browse", "browse_interactive"}


def _runs(path: Path) -> list[list[dict[str, Any]]]:
    if path.suffix == ".json":
        return [json.loads(path.read_text())]
    return [json.loads(line)["history"] for line in path.read_text().splitlines() if line.strip()]


def _expected(events: list[dict[str, Any]]) -> dict[str, int]:
    """Tool calls, results and user messages counted straight off the raw events."""
    tool_call_ids = {
        e["tool_call_metadata"]["tool_call_id"]
        for e in events
        if "action" in e and e.get("tool_call_metadata")
    }
    old_schema_calls = [
        e for e in events if e.get("action") in TOOL_ACTIONS and not e.get("tool_call_metadata")
    ]
    answered = [
        e
        for e in events
        if "observation" in e
        and (
            e.get("tool_call_metadata") or ("source" not in e and e["observation"] in TOOL_ACTIONS)
        )
    ]
    user_messages = [
        e for e in events if e.get("action") == "message" and e.get("source", "user") == "user"
    ]
    return {
        "tool_use": len(tool_call_ids) + len(old_schema_calls),
        "tool_result": len(answered),
        "user_messages": len(user_messages),
    }


CASES = [(path, i) for path in (PONYC, RESOLVER, GUI) for i in range(len(_runs(path)))]


def test_the_fixtures_hold_five_conversations() -> None:
    assert [len(_runs(p)) for p in (PONYC, RESOLVER, GUI)] == [2, 2, 1]


@corpus
def test_the_corpus_files_hold_six_conversations() -> None:
    files = [TRANSCRIPTS_DIR / "openhands" / p.name for p in (FULL_PONYC, RESOLVER, GUI)]
    assert [len(_runs(p)) for p in files] == [3, 2, 1]


@pytest.mark.parametrize(
    ("path", "index"), CASES, ids=lambda c: c.name[20:45] if isinstance(c, Path) else str(c)
)
def test_each_conversation_loads_valid_with_counts_matching_the_raw_events(
    path: Path, index: int
) -> None:
    assert detect_format(path) == "openhands"
    history = load(path, index=index)
    report = history.source
    assert report is not None and report.issues == []
    assert validate(history.messages) == []
    events = _runs(path)[index]
    expected = _expected(events)
    view = list(history.messages)
    assert sum(len(m.tool_uses) for m in view) == expected["tool_use"]
    assert sum(len(m.tool_results) for m in view) == expected["tool_result"]
    assert report.metadata["events"] == len(events)
    assert sum(report.metadata["event_kinds"].values()) == len(events)
    assert report.metadata["conversations"] == len(_runs(path))
    # the user's own words are all in the view
    user_text = "\n".join(m.text for m in view if m.role == "user")
    for event in events:
        if event.get("action") == "message" and event.get("source", "user") == "user":
            content = event["args"]["content"] if "args" in event else event["content"]
            assert content in user_text
    assert expected["user_messages"] >= 1


def test_index_picks_the_run_and_out_of_range_says_how_many() -> None:
    lines = [json.loads(line) for line in PONYC.read_text().splitlines()]
    second = load(PONYC, index=1)
    assert second.source.metadata["instance_id"] == lines[1]["instance_id"]  # type: ignore[union-attr]
    assert second.messages[0].text.startswith(lines[1]["instruction"][:200])
    assert second.messages != load(PONYC).messages
    with pytest.raises(FormatError, match=r"holds 2 conversation\(s\), numbered 0 to 1") as info:
        load(PONYC, index=2)
    assert info.value.path == str(PONYC)
    with pytest.raises(FormatError, match="holds 1 conversation"):
        load(GUI, index=1)


def test_current_schema_system_tools_and_tool_calls() -> None:
    history = load(PONYC)
    events = _runs(PONYC)[0]
    assert history.system == events[0]["args"]["content"]
    assert [t["name"] for t in history.tools] == [
        "execute_bash",
        "think",
        "finish",
        "str_replace_editor",
    ]
    assert "input_schema" in history.tools[0]
    reply = history.messages[1]
    (use,) = reply.tool_uses
    assert use.id == "toolu_01" and use.name == "execute_bash"
    assert use.input == {"command": "ls -l /workspace/ponylang__ponyc__0.1"}  # the model's own args
    assert reply.text == events[4]["args"]["thought"]
    result = history.messages[2].tool_results[0]
    assert result.text.endswith("[The command completed with exit code 0.]")
    assert history.messages[1].meta.timestamp is not None and history.messages[1].meta.id == "5"
    assert history.messages[-1].tool_uses[0].name == "finish"  # the last call may wait


@corpus
def test_recall_and_error_observations_are_injected_user_text() -> None:
    history = load(FULL_PONYC, index=1)  # the error is event 28, after the fixture's cut
    first = history.messages[0]
    assert first.meta.extra["injected"] is False  # the task itself was typed
    (recall,) = first.meta.extra["injected_texts"]
    assert recall.startswith("Added workspace context")
    errors = [
        m
        for m in history.messages
        if any("expected to be one of" in t for t in m.meta.extra.get("injected_texts", ()))
    ]
    assert len(errors) == 1
    assert [dict(p).get("injected_kind") for p in errors[0].meta.extra["parts"]] == [None, "error"]


def test_old_schema_pairs_observations_with_the_action_before() -> None:
    history = load(RESOLVER)
    events = _runs(RESOLVER)[0]
    reply = history.messages[1]
    (use,) = reply.tool_uses
    assert (
        use.id == "openhands-1" and use.name == "run" and use.input == {"command": "touch LICENSE"}
    )
    assert reply.text == events[1]["thought"]
    assert history.messages[2].tool_results[0].tool_use_id == "openhands-1"
    assert history.messages[-1].text == events[-1]["thought"]  # finish without tool metadata


def test_gui_trajectory_counts_events_the_model_never_saw() -> None:
    history = load(GUI)
    kinds = history.source.metadata["event_kinds"]  # type: ignore[union-attr]
    assert kinds["observation:agent_state_changed"] == 4
    assert kinds["observation:null"] == 3
    assert kinds["action:change_agent_state"] == 1
    assert history.messages[-1].role == "assistant"
    assert history.messages[-1].text.startswith("I've created a complete Vue.js todo application")


def _events_file(tmp_path: Path, events: list[Any]) -> Path:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(events))
    return path


def _call(
    event_id: int, call_id: str, response: str, calls: list[str], command: str
) -> dict[str, Any]:
    tool_calls = [
        {
            "id": c,
            "type": "function",
            "function": {"name": "execute_bash", "arguments": json.dumps({"command": c})},
        }
        for c in calls
    ]
    return {
        "id": event_id,
        "source": "agent",
        "action": "run",
        "args": {"command": command, "thought": "", "blocking": False},
        "tool_call_metadata": {
            "function_name": "execute_bash",
            "tool_call_id": call_id,
            "model_response": {
                "id": response,
                "choices": [{"message": {"content": "two at once", "tool_calls": tool_calls}}],
            },
        },
    }


def _obs(event_id: int, cause: int, content: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": event_id,
        "source": "agent",
        "observation": "run",
        "cause": cause,
        "content": content,
        **extra,
    }


def test_parallel_calls_form_one_assistant_message_and_bad_events_are_skipped(
    tmp_path: Path,
) -> None:
    events: list[Any] = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "do both"}},
        _call(1, "a", "r1", ["a", "b"], "a"),
        _obs(2, 1, "out a"),
        "not an event",
        {"id": 4, "source": "agent"},
        _call(5, "b", "r1", ["a", "b"], "b"),
        _obs(6, 5, "out b"),
        {"id": 7, "source": "agent", "action": "run", "args": {"command": "x", "thought": "alone"}},
        {"id": 8, "source": "agent", "action": "message", "args": {"content": "done"}},
        {
            "id": 9,
            "source": "agent",
            "action": "finish",
            "args": {"thought": "t", "final_thought": "all good"},
        },
    ]
    history = load(_events_file(tmp_path, events))
    assert [(i.index, i.line) for i in history.source.issues] == [(3, None), (4, None)]  # type: ignore[union-attr]
    assert validate(history.messages) == []
    reply = history.messages[1]
    assert reply.text == "two at once" and [u.id for u in reply.tool_uses] == ["a", "b"]
    assert [r.content for r in history.messages[2].tool_results] == ["out a", "out b"]
    lone = history.messages[3]
    assert lone.tool_uses[0].id == "openhands-7" and lone.tool_uses[0].input == {"command": "x"}
    placeholder = history.messages[4].tool_results[0]
    assert isinstance(placeholder, ToolResultBlock) and placeholder.content == MISSING_RESULT_TEXT
    assert history.repairs  # the unanswered call was repaired, and recorded
    assert history.messages[5].text == "done\nt\n\nall good"  # finish keeps both texts


def test_run_without_a_user_message_gets_its_instruction(tmp_path: Path) -> None:
    run = {
        "instruction": "fix it",
        "history": [{"source": "agent", "action": "message", "args": {"content": "ok"}}],
    }
    path = tmp_path / "output.jsonl"
    path.write_text("{broken\n" + json.dumps({"no": "history"}) + "\n" + json.dumps(run) + "\n")
    history = load(path, format="openhands", lenient=True)  # 2 of 3 lines are not runs
    report = history.source
    assert report is not None and report.metadata["conversations"] == 1
    assert [i.line for i in report.issues] == [1, 2]
    assert [m.text for m in history.messages] == ["fix it", "ok"]
    assert report.metadata["instruction_added"] is True


def test_truncated_event_list_raises_format_error_with_path(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_bytes(GUI.read_bytes()[:20_000])
    with pytest.raises(FormatError, match="malformed JSON") as info:
        load(path, format="openhands")
    assert info.value.path == str(path)


# ------------------------------------------------------------------ never crash on odd input
_NAMES = st.sampled_from(
    ["message", "run", "system", "recall", "error", "agent", "user", "toolu_01", 5, 0]
)
_ODD = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=4) | _NAMES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["id", "cause", "content", "tool_call_id", "args", "source"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=6,
)


def _shrunk(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return value[:30]
    if isinstance(value, list):
        return [_shrunk(v, depth + 1) for v in value[:12]]
    if isinstance(value, dict):
        drop = ("llm_metrics", "metadata", "metrics", "instance", "test_result")
        return {k: _shrunk(v, depth + 1) for k, v in value.items() if k not in drop or depth > 6}
    return value


SEEDS = [_shrunk(runs[0]) for runs in (_runs(PONYC), _runs(RESOLVER), _runs(GUI))]


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_mutated_events_load_valid_or_raise_format_error(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    events = json.loads(json.dumps(data.draw(st.sampled_from(SEEDS))))
    draw_mutations(data, events, _ODD)
    directory = tmp_path_factory.mktemp("fuzz")
    (directory / "events.json").write_text(json.dumps(events))
    (directory / "output.jsonl").write_text(
        json.dumps({"instruction": "task", "history": events}) + "\n"
    )
    for name in ("events.json", "output.jsonl"):
        try:
            history = load(directory / name, format="openhands")
        except FormatError:
            continue
        assert validate(history.messages) == []


# ----------------------------------------------------------------------------- V1 and pairs
SAMPLES = Path(__file__).parent / "data" / "openhands"
V1_EVENTS = SAMPLES / "OpenHands__software-agent-sdk__v1-events-pwd.json"
V1_OUTPUT = SAMPLES / "OpenHands__software-agent-sdk__v1-output.jsonl"
PAIRS = SAMPLES / "All-Hands-AI__openhands-resolver__pairs-output.jsonl"


def test_v1_events_become_the_messages_the_model_saw() -> None:
    events = json.loads(V1_EVENTS.read_text(encoding="utf-8"))
    history = load(V1_EVENTS)
    assert history.source is not None and history.source.metadata["schema"] == "v1"
    assert history.system == events[0]["system_prompt"]["text"]
    assert history.source.metadata["tool_names"] == ["terminal", "finish", "think"]
    roles = [m.role for m in history.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    call = history.messages[1].content[0]
    assert call.type == "tool_use" and call.id == events[2]["tool_call"]["id"]
    assert call.input == json.loads(events[2]["tool_call"]["arguments"])
    result = history.messages[2].content[0]
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == call.id
    assert result.content == "\n[The command completed with exit code 0.]"  # suffix framed in
    typed = events[6]["llm_message"]["content"][0]["text"]
    assert history.messages[4].content[-1].text == typed  # after the finish tool's result
    assert validate(history.messages) == []


def test_a_v1_output_jsonl_run_reads_like_its_event_list() -> None:
    run = load(V1_OUTPUT, index=0)
    assert run.messages == load(V1_EVENTS).messages
    with pytest.raises(FormatError, match="index 1 is out of range"):
        load(V1_OUTPUT, index=1)


def test_an_old_output_jsonl_of_action_observation_pairs_reads_every_event() -> None:
    run = json.loads(PAIRS.read_text(encoding="utf-8"))
    history = load(PAIRS)
    assert detect_format(PAIRS) == "openhands"
    uses = [b for m in history.messages for b in m.content if b.type == "tool_use"]
    commands = [
        pair[0]["args"].get("command") or pair[0]["args"].get("code") for pair in run["history"][1:]
    ]
    assert [u.input.get("command") or u.input.get("code") for u in uses] == commands
    results = [b for m in history.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert [r.content for r in results] == [pair[1]["content"] for pair in run["history"][1:]]
    assert history.messages[0].text == run["instruction"]
    assert history.source is not None and history.source.issues == []


def test_v1_kinds_without_a_mapping_are_noted_and_errors_answer_their_call(
    tmp_path: Path,
) -> None:
    events = json.loads(V1_EVENTS.read_text(encoding="utf-8"))[:3]
    events.append({"id": "x1", "kind": "HologramEvent", "source": "agent"})
    events.append({"id": "x2", "kind": "ConversationStateUpdateEvent", "key": "status"})
    events.append(
        {
            "id": "x3",
            "kind": "Condensation",
            "forgotten_event_ids": ["a", "b"],
            "summary": "earlier work",
            "llm_response_id": "r",
        }
    )
    second = dict(
        events[2],
        id="a2",
        tool_call_id="call_2",
        tool_call=dict(events[2]["tool_call"], id="call_2"),
    )
    events.append(second)
    events.append(
        {
            "id": "e2",
            "kind": "AgentErrorEvent",
            "source": "agent",
            "tool_name": "terminal",
            "tool_call_id": "call_2",
            "error": "sandbox died",
        }
    )
    path = tmp_path / "events.json"
    path.write_text(json.dumps(events))
    history = load(path)
    report = history.source
    assert report is not None
    assert [i.index for i in report.issues if "HologramEvent" in i.message] == [3]
    assert not any("ConversationStateUpdateEvent" in i.message for i in report.issues)
    assert report.metadata["condensations"][0]["forgotten_events"] == 2
    error = history.messages[-1].content[0]
    assert isinstance(error, ToolResultBlock) and error.is_error and error.content == "sandbox died"
    assert validate(history.messages) == []
