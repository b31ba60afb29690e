"""SWE-agent .traj and mini-swe-agent .traj.json trajectories: real files and malformed input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock
from contextwarden.rules import validate

TRANSCRIPTS = SHARED_DATA / "transcripts"
TRAJECTORIES = sorted((TRANSCRIPTS / "swe-agent").glob("*.traj*")) + sorted(
    (TRANSCRIPTS / "openai-chat").glob("*.traj.json")
)


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


def test_all_nine_trajectories_are_found() -> None:
    assert len(TRAJECTORIES) == 9


@pytest.mark.parametrize("path", TRAJECTORIES, ids=lambda p: p.name[:45])
def test_trajectory_loads_valid_with_counts_matching_the_raw_file(path: Path) -> None:
    assert detect_format(path) == "swe-agent"
    history = load(path)
    assert validate(history.messages) == []
    assert history.source is not None and history.source.issues == []
    assert history.repairs == []
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


@pytest.mark.parametrize("path", TRAJECTORIES, ids=lambda p: p.name[:45])
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
    path = (
        TRANSCRIPTS
        / "swe-agent"
        / "SWE-agent__mini-swe-agent__pr816-deepseek-reasoner-sqlfluff-1733.traj.json"
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


def test_mini_swe_agent_v1_keeps_bash_blocks_as_text_and_the_huge_output() -> None:
    path = (
        TRANSCRIPTS
        / "swe-agent"
        / "gruckion__mini-swe-agent__gemini3pro-psf__requests-1142.traj.json"
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
        TRANSCRIPTS / "swe-agent" / "SWE-agent__SWE-agent__demo-marshmallow-1867-fc-replace.traj"
    )
    reply = history.messages[1]
    assert reply.meta.extra["action"] == "ls -F" and reply.meta.extra["agent"] == "main"
    assert reply.meta.extra["message_type"] == "action"
    assert reply.tool_uses[0].input == {"command": "ls -F"}
    demo = load(TRANSCRIPTS / "swe-agent" / "SWE-agent__SWE-agent__gpt4-pydicom-1458.traj")
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
    real = TRANSCRIPTS / "swe-agent" / "SWE-agent__SWE-agent__gpt4-pydicom-1458.traj"
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


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    return [prefix] + [p for key, child in children for p in _paths(child, (*prefix, key))]


SEEDS = [_shrunk(json.loads(p.read_text())) for p in TRAJECTORIES[:3] + TRAJECTORIES[-3:]]


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_mutated_trajectories_load_valid_or_raise_format_error(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    document = json.loads(json.dumps(data.draw(st.sampled_from(SEEDS))))
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(_paths(document)[1:]))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict | list) and (isinstance(parent, dict) or path[-1] < len(parent)):
            parent[path[-1]] = data.draw(_ODD)
    file = tmp_path_factory.mktemp("fuzz") / "case.traj.json"
    file.write_text(json.dumps(document))
    for fmt in ("swe-agent", "openai"):
        try:
            history = load(file, format=fmt)
        except FormatError:
            continue
        assert validate(history.messages) == []
