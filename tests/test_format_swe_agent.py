"""SWE-agent .traj and mini-swe-agent .traj.json trajectories: real files and malformed input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    FIXTURE_TRANSCRIPTS,
    TRANSCRIPTS,
    TRANSCRIPTS_DIR,
    corpus,
    fixture_path,
    session_params,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock
from contextwarden.rules import validate
from tests.jsonpaths import draw_mutations

TRAJECTORIES = session_params("swe-agent", "openai-chat")
FIXTURE_TRAJECTORIES = [
    p for p in FIXTURE_TRANSCRIPTS if p.parent.name in ("swe-agent", "openai-chat")
]


def _chat(path: Path) -> list[dict[str, Any]]:
    document = json.loads(path.read_text())
    return document["history"] if "history" in document else document["messages"]


def _expected(raw: list[dict[str, Any]]) -> dict[str, int]:
    """Counts read straight off the raw file, independently of the loader."""
    chat = [m for m in raw if m["role"] not in ("system", "exit")]
    user_turns = sum(
        1
        for i, m in enumerate(chat)
        if m["role"] in ("user", "tool") and (i == 0 or chat[i - 1]["role"] == "assistant")
    )
    return {
        "assistant": sum(m["role"] == "assistant" for m in chat),
        "user": user_turns,
        "tool_use": sum(len(m.get("tool_calls") or []) for m in chat),
        "tool_result": sum(m["role"] == "tool" for m in chat),
    }


@corpus
def test_all_nine_trajectories_are_found() -> None:
    assert len([p for p in TRANSCRIPTS if p.parent.name in ("swe-agent", "openai-chat")]) == 9


@pytest.mark.parametrize("path", TRAJECTORIES)
def test_trajectory_loads_valid_with_counts_matching_the_raw_file(path: Path) -> None:
    assert detect_format(path) == "swe-agent"
    history = load(path)
    assert validate(history.messages) == []
    assert history.source is not None and history.source.issues == []
    # The one repair a real trajectory needs: demo-marshmallow reuses tool_call ids.
    assert all(r.action.startswith("renamed repeated tool_use ids") for r in history.repairs)
    raw = _chat(path)
    expected = _expected(raw)
    view = list(history.messages)
    assert sum(m.role == "assistant" for m in view) == expected["assistant"]
    assert sum(m.role == "user" for m in view) == expected["user"]
    assert sum(len(m.tool_uses) for m in view) == expected["tool_use"]
    assert sum(len(m.tool_results) for m in view) == expected["tool_result"]
    assert history.system == raw[0]["content"]
    assert history.source.records == len(raw)
    # every user text of the file is in the view, verbatim
    texts = "\n".join(m.text for m in view if m.role == "user")
    assert all(m["content"] in texts for m in raw if m["role"] == "user")


@pytest.mark.parametrize("path", TRAJECTORIES)
def test_info_goes_to_metadata(path: Path) -> None:
    document = json.loads(path.read_text())
    metadata = load(path).source.metadata  # type: ignore[union-attr]
    for key in ("exit_status", "submission", "model_stats"):
        assert metadata[key] == document["info"][key]
    if "trajectory" in document:
        assert metadata["trajectory_steps"] == len(document["trajectory"])
        assert metadata["variant"] == "swe-agent"
    else:
        assert metadata["variant"] == document["trajectory_format"]


def test_mini_swe_agent_v2_keeps_exit_record_reasoning_and_times() -> None:
    path = fixture_path(
        "swe-agent/SWE-agent__mini-swe-agent__pr816-deepseek-reasoner-sqlfluff-1733.traj.json"
    )
    history = load(path)
    metadata = history.source.metadata  # type: ignore[union-attr]
    assert metadata["exit"]["exit_status"] == "InternalServerError"
    assert "SSL" in metadata["exit"]["exception_str"]
    raw = _chat(path)
    first_reply = history.messages[1]
    assert first_reply.meta.extra["reasoning_content"] == raw[2]["reasoning_content"]
    assert first_reply.meta.timestamp == raw[2]["extra"]["timestamp"]
    assert first_reply.meta.source_ids == ("2",)
    assert first_reply.meta.extra["usage"]["prompt_tokens"] > 0


@corpus
def test_mini_swe_agent_v1_keeps_bash_blocks_as_text_and_the_huge_output() -> None:
    path = (
        TRANSCRIPTS_DIR
        / "swe-agent/gruckion__mini-swe-agent__gemini3pro-psf__requests-1142.traj.json"
    )
    history = load(path)
    raw = _chat(path)
    biggest = max(raw, key=lambda m: len(m["content"]))
    assert len(biggest["content"]) > 860_000
    assert any(m.text == biggest["content"] for m in history.messages)
    assert all(not m.tool_uses for m in history.messages)  # observations stay text in v1
    assert "```bash" in history.messages[1].text
    assert history.messages[1].meta.id == raw[2]["extra"]["response"]["id"]


def test_classic_fields_are_kept_in_meta() -> None:
    history = load(
        fixture_path("swe-agent/SWE-agent__SWE-agent__demo-marshmallow-1867-fc-replace.traj")
    )
    reply = history.messages[1]
    assert reply.meta.extra["action"] == "ls -F" and reply.meta.extra["agent"] == "main"
    assert reply.meta.extra["message_type"] == "action"
    assert reply.tool_uses[0].input == {"command": "ls -F"}
    demo = load(fixture_path("swe-agent/SWE-agent__SWE-agent__gpt4-pydicom-1458.traj"))
    first = demo.messages[0]  # demonstration + task, merged; only the demo part is marked
    assert "is_demo" not in first.meta.extra
    assert [dict(p).get("is_demo") for p in first.meta.extra["parts"]] == [True, None]


def _write(tmp_path: Path, document: Any, name: str = "run.traj") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_bad_entries_are_reported_by_file_index_and_the_rest_kept(tmp_path: Path) -> None:
    history_entries: list[Any] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": ["not", {"a": "part"}], "action": "ls"},
        "garbage",
        {"role": "assistant", "content": {"oops": 1}},
        {
            "role": "assistant",
            "content": "run it",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "done", "tool_call_ids": ["c1"]},
    ]
    path = _write(tmp_path, {"trajectory": [], "history": history_entries, "info": {}})
    history = load(path)
    issues = history.source.issues  # type: ignore[union-attr]
    assert sorted(i.index for i in issues) == [3, 4]
    assert validate(history.messages) == []
    reply = history.messages[1]
    assert reply.content[0] == TextBlock("not")  # a bare string part is text
    assert reply.content[1].type == "unknown"  # an unknown part is preserved whole
    assert history.messages[-1].tool_results[0].tool_use_id == "c1"  # tool_call_ids accepted
    assert history.messages[-1].meta.source_ids == ("6",)


def test_truncated_or_wrong_documents_raise_format_error_with_path(tmp_path: Path) -> None:
    real = fixture_path("swe-agent/SWE-agent__SWE-agent__gpt4-pydicom-1458.traj")
    path = tmp_path / "cut.traj"
    path.write_bytes(real.read_bytes()[:50_000])
    with pytest.raises(FormatError, match="malformed JSON") as info:
        load(path)
    assert info.value.path == str(path)
    with pytest.raises(FormatError, match="trajectory object"):
        load(_write(tmp_path, [1, 2]), format="swe-agent")
    with pytest.raises(FormatError, match="'history'"):
        load(_write(tmp_path, {"info": {}}), format="swe-agent")


def test_unnamed_trajectories_are_recognised_by_content(tmp_path: Path) -> None:
    classic = {"environment": "e", "trajectory": [], "history": [{"role": "user", "content": "x"}]}
    assert detect_format(_write(tmp_path, classic, "a.json")) == "swe-agent"
    mini = {
        "info": {"mini_version": "1.0"},
        "messages": [{"role": "user", "content": "x"}],
        "trajectory_format": "mini-swe-agent-1",
    }
    assert detect_format(_write(tmp_path, mini, "b.json")) == "swe-agent"
    assert load(tmp_path / "b.json").source.metadata["mini_version"] == "1.0"  # type: ignore[union-attr]


# ------------------------------------------------------------------ never crash on odd input
_NAMES = st.sampled_from(["user", "assistant", "tool", "system", "exit", "function", "toolu_1", ""])
_ODD = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=4) | _NAMES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["role", "content", "id", "type", "text", "name"]), inner, max_size=3
        )
    ),
    max_leaves=6,
)


def _shrunk(value: Any) -> Any:
    if isinstance(value, str):
        return value[:30]
    if isinstance(value, list):
        return [_shrunk(v) for v in value[:8]]
    if isinstance(value, dict):
        return {
            k: _shrunk(v) for k, v in value.items() if k not in ("response", "config", "trajectory")
        }
    return value


SEEDS = [_shrunk(json.loads(p.read_text())) for p in FIXTURE_TRAJECTORIES]


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_mutated_trajectories_load_valid_or_raise_format_error(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    document = json.loads(json.dumps(data.draw(st.sampled_from(SEEDS))))
    draw_mutations(data, document, _ODD)
    file = tmp_path_factory.mktemp("fuzz") / "case.traj.json"
    file.write_text(json.dumps(document))
    for fmt in ("swe-agent", "openai"):
        try:
            history = load(file, format=fmt)
        except FormatError:
            continue
        assert validate(history.messages) == []


# ------------------------------------------------------------------ environment observations
@pytest.mark.parametrize("path", TRAJECTORIES)
def test_environment_outputs_are_marked_injected_and_the_task_is_not(path: Path) -> None:
    """In these runs nobody typed after the task: every later user-role text is the harness's."""
    history = load(path)
    users = [m for m in history.messages if m.role == "user"]
    assert not users[0].meta.extra.get("injected")  # the task (merged after a demonstration)
    raw = _chat(path)
    answers = [
        m["content"]
        for i, m in enumerate(raw)
        if m["role"] == "user" and i > 0 and raw[i - 1]["role"] == "assistant"
    ]
    marked = [m for m in users if m.meta.extra.get("injected_kind") == "observation"]
    assert [m.text for m in marked] == answers
    for message in marked:
        assert message.meta.extra["injected_kind"] == "observation"
        assert message.meta.extra["injected_texts"] == (message.text,)


@corpus
def test_v1_observations_format_errors_and_the_final_diff_are_marked() -> None:
    path = (
        TRANSCRIPTS_DIR
        / "swe-agent/gruckion__mini-swe-agent__gemini3pro-psf__requests-1142.traj.json"
    )
    marked = [m.text for m in load(path).messages if m.meta.extra.get("injected")]
    assert sum(t.startswith("<returncode>") for t in marked) == 68
    assert sum(t.startswith("Please always provide EXACTLY ONE action") for t in marked) == 2
    assert marked[-1].startswith("diff --git")  # printed after COMPLETE_TASK_AND_SUBMIT


def _mini(*messages: dict[str, Any], version: str = "mini-swe-agent-1") -> dict[str, Any]:
    head = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]
    return {
        "info": {"mini_version": "1.0"},
        "messages": head + list(messages),
        "trajectory_format": version,
    }


def _marks(tmp_path: Path, document: dict[str, Any]) -> list[tuple[str, bool]]:
    history = load(_write(tmp_path, document, "run.traj.json"))
    return [
        (m.text, bool(m.meta.extra.get("injected"))) for m in history.messages if m.role == "user"
    ]


def test_what_the_person_typed_mid_run_is_never_marked(tmp_path: Path) -> None:
    said = "Interrupted by user: use pytest, not unittest"
    rejected = "Command not executed. The user rejected your command with the following message: no"
    document = _mini(
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": said},  # v1.0: no interrupt_type, only the wording
        {"role": "assistant", "content": "```bash\nrm -rf x\n```"},
        {"role": "user", "content": rejected, "extra": {"interrupt_type": "UserRejection"}},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "new ask", "extra": {"interrupt_type": "UserNewTask"}},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na\n</output>"},
    )
    assert _marks(tmp_path, document) == [
        ("the task", False),
        (said, False),
        (rejected, False),
        ("new ask", False),
        ("<returncode>0</returncode>\n<output>\na\n</output>", True),
    ]


def test_v2_extra_marks_outputs_and_format_errors_wherever_they_stand(tmp_path: Path) -> None:
    document = _mini(
        {"role": "user", "content": "User command: \n```bash\nls\n```"},  # human mode: typed
        {"role": "user", "content": "README", "extra": {"returncode": 0}},  # its output
        {"role": "assistant", "content": "thinking, no call"},
        {"role": "user", "content": "Use a tool.", "extra": {"interrupt_type": "FormatError"}},
        version="mini-swe-agent-2",
    )
    marks = _marks(tmp_path, document)
    # merge mode joins consecutive user messages; the merged turn lists what was injected
    history = load(tmp_path / "run.traj.json")
    first = history.messages[0]
    assert first.meta.extra["injected_texts"] == ("README",)
    assert first.meta.extra["injected"] is False  # a typed part: the turn is not all injected
    assert marks[-1] == ("Use a tool.", True)


def test_a_demonstration_is_marked_as_one_and_the_task_is_not(tmp_path: Path) -> None:
    document = {
        "trajectory": [],
        "history": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "demo", "is_demo": True},
            {"role": "assistant", "content": "```\nls\n```", "is_demo": True},
            {"role": "user", "content": "demo output", "is_demo": True},
            {"role": "user", "content": "the task\nbash-$"},
            {"role": "assistant", "content": "```\nls\n```"},
            {"role": "user", "content": "a b\n(Current directory: /r)\nbash-$"},
        ],
        "info": {},
    }
    history = load(_write(tmp_path, document, "run.traj"))
    kinds = [m.meta.extra.get("injected_kind") for m in history.messages if m.role == "user"]
    assert kinds == ["demonstration", None, "observation"]
    task = history.messages[2]  # the demo's last output merged with the task: the task is typed
    assert task.meta.extra["injected_texts"] == ("demo output",)
    assert task.meta.extra["injected"] is False


def test_a_trajectory_whose_messages_are_not_a_list_is_a_format_error(tmp_path: Path) -> None:
    """Read through the openai loader too, which hands trajectories to this one."""
    path = _write(tmp_path, {"trajectory_format": "mini-swe-agent-1", "messages": True}, "t.json")
    for fmt in ("swe-agent", "openai"):
        with pytest.raises(FormatError, match="'messages'"):
            load(path, format=fmt)


def test_an_exit_record_without_an_extra_object_keeps_its_content(tmp_path: Path) -> None:
    document = _mini({"role": "exit", "content": "Submitted", "extra": [1, 2]})
    metadata = load(_write(tmp_path, document, "run.traj.json")).source.metadata  # type: ignore[union-attr]
    assert metadata["exit"] == {"content": "Submitted"}


@corpus  # the trimmed fixture keeps too little of the file to repeat an id
def test_repeated_tool_call_ids_are_renamed_and_keep_their_own_observation() -> None:
    """demo-marshmallow reuses one tool_call id in several assistant messages; the API wants
    them unique, so merge mode renames each repeat and the observation that followed it."""
    path = next(p for p in TRANSCRIPTS if "demo-marshmallow" in p.name)
    raw = [m for m in _chat(path) if m["role"] != "system"]
    calls = [c["id"] for m in raw for c in m.get("tool_calls") or []]
    repeated = {i for i in calls if calls.count(i) > 1}
    assert repeated  # the file really does repeat ids
    observed = [
        (m["tool_calls"][0]["id"], raw[n + 1]["content"])
        for n, m in enumerate(raw)
        if m.get("tool_calls") and raw[n + 1]["role"] == "tool"
    ]
    history = load(path)
    assert validate(history.messages) == []
    view = history.messages
    paired = [
        (use.id, view[n + 1].tool_results[0].text)
        for n, m in enumerate(view)
        for use in m.tool_uses
    ]
    assert len({i for i, _ in paired}) == len(paired) == len(observed)
    for (old_id, text), (new_id, kept) in zip(observed, paired, strict=True):
        assert new_id == old_id or new_id.startswith(old_id + "_")
        assert kept.strip() == text.strip()  # the observation recorded after that very call
    renamed = [r for r in history.repairs if "renamed" in r.action]
    assert len(renamed) == len(calls) - len(set(calls))


def test_v2_responses_model_replies_and_outputs_are_read_as_responses_items(
    tmp_path: Path,
) -> None:
    """mini-swe-agent v2's Responses model classes store each reply as the whole response object
    and each output as a ``function_call_output`` item (``litellm_response_model.py``,
    ``actions_toolcall_response.py``); none of it may be dropped as an unknown role."""
    reply = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "output": [
            {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "Let me read it."}]},
            {"type": "function_call", "call_id": "call_1", "name": "bash",
             "arguments": '{"command": "cat dates.py"}'},
        ],
        "usage": {"input_tokens": 100, "output_tokens": 20},
        "extra": {"actions": [{"command": "cat dates.py", "tool_call_id": "call_1"}]},
    }  # fmt: skip
    messages = [
        {"role": "system", "content": "You are a helpful assistant.", "extra": {}},
        {"role": "user", "content": "Fix the bug in dates.py", "extra": {}},
        reply,
        {"type": "function_call_output", "call_id": "call_1", "output": "def parse(): pass",
         "extra": {"raw_output": "def parse(): pass", "returncode": 0}},
        {**reply, "id": "resp_2", "output": [{"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "No call here."}]}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text",
         "text": "Every response MUST include at least one tool call."}],
         "extra": {"interrupt_type": "FormatError"}},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}},
    ]  # fmt: skip
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"info": {"mini_version": "2.0.0"}, "messages": messages}))

    history = load(path)
    assert history.source is not None and history.source.issues == []
    assert history.system == "You are a helpful assistant."
    roles = [(m.role, [b.type for b in m.content]) for m in history.messages]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["text", "tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
    ]
    assert history.messages[1].meta.extra["usage"] == reply["usage"]
    assert history.messages[-1].meta.extra.get("injected") is True
    assert validate(history.messages) == []
