"""OpenCode session exports: real exports load by detection, each step becomes one request with
its tool results, usage and cost are read, and nothing is dropped without a line in the report."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES_DIR

from contextwarden.cost.prices import default_prices
from contextwarden.cost.recorded import recorded_cost
from contextwarden.errors import FormatError
from contextwarden.formats import SNIFF_BYTES, detect_format, load
from contextwarden.rules import validate
from contextwarden.summarizers.failures import result_failure
from contextwarden.summarizers.typed import user_messages

DIR = FIXTURES_DIR / "opencode"
SHORT = DIR / "victoryforphil__dark-factory__jolly-eagle.json"
ERRORS = DIR / "victoryforphil__dark-factory__curious-harbor-first9.json"
RUNNING = DIR / "victoryforphil__dark-factory__silent-nebula.json"
COMPACTION = DIR / "victoryforphil__dark-factory__curious-sailor-compaction.json"
BUILD_EXIT = DIR / "dayhaysoos__nimbus__report-ui-build-exit.json"
ALL = sorted(DIR.glob("*.json"))


def _document(path: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def _parts(path: Path, kind: str) -> list[dict[str, Any]]:
    return [p for m in _document(path)["messages"] for p in m["parts"] if p["type"] == kind]


def _exit(part: dict[str, Any]) -> Any:
    return (part["state"].get("metadata") or {}).get("exit")


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_real_exports_load_by_detection_with_every_tool_call_and_result(path: Path) -> None:
    assert detect_format(path) == "opencode"
    history = load(path)
    assert validate(history.messages) == []
    assert history.source is not None and history.source.unreadable == 0
    tools = _parts(path, "tool")
    uses = [u.id for m in history.messages for u in m.tool_uses]
    assert uses == [p["callID"] for p in tools]
    finished = [p for p in tools if p["state"]["status"] in ("completed", "error")]
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    for part in finished:
        result = results[part["callID"]]
        errored = part["state"]["status"] == "error"
        assert result.is_error == (errored or _exit(part) not in (None, 0))
        assert result.content == part["state"]["error" if errored else "output"]


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_each_step_is_one_recorded_request(path: Path) -> None:
    history = load(path)
    document = _document(path)
    finishes = _parts(path, "step-finish")
    stepped = [
        m
        for m in document["messages"]
        if any(p["type"] in ("text", "tool") for p in m["parts"])
        and m["info"]["role"] == "assistant"
    ]
    cost = recorded_cost(history, default_prices())
    assert cost is not None and stepped
    assert cost["requests"] <= len(finishes)
    usages = [m.meta.extra["usage"] for m in history.messages if "usage" in m.meta.extra]
    unfinished = [m["info"]["tokens"] for m in document["messages"] if "tokens" in m["info"]]
    recorded = [f["tokens"] for f in finishes] + unfinished  # a step cut short: the message's
    for usage in usages:
        assert any(
            usage["input_tokens"] == t["input"]
            and usage["output_tokens"] == t["output"]
            and usage["cache_read_input_tokens"] == t["cache"]["read"]
            for t in recorded
        )


def test_text_and_reasoning_go_where_the_model_saw_them() -> None:
    history = load(SHORT)
    document = _document(SHORT)
    assert history.messages[0].text == document["messages"][0]["parts"][0]["text"]
    last = history.messages[-1]
    assert last.role == "assistant" and last.text.startswith("Done")
    assert last.meta.extra["reasoning"][0]["type"] == "reasoning"
    assert last.meta.extra["model"] == "gpt-5.3-codex"


def test_a_running_tool_in_the_last_reply_is_reported_and_left_pending() -> None:
    history = load(RUNNING)
    running = next(p for p in _parts(RUNNING, "tool") if p["state"]["status"] == "running")
    assert history.source is not None
    assert any(running["callID"] in i.message for i in history.source.issues)
    last = history.messages[-1]
    assert last.role == "assistant" and running["callID"] in [u.id for u in last.tool_uses]
    assert not any(
        r.tool_use_id == running["callID"] for m in history.messages for r in m.tool_results
    )


def test_an_empty_reply_is_kept_in_metadata_and_reported() -> None:
    history = load(COMPACTION)
    assert history.source is not None
    empty = history.source.metadata["empty_messages"]
    assert len(empty) == sum("empty_messages" in i.message for i in history.source.issues) == 1
    assert history.source.metadata["compactions"]


def test_tool_errors_are_results_marked_as_errors() -> None:
    history = load(ERRORS)
    errors = [r for m in history.messages for r in m.tool_results if r.is_error]
    assert errors and len(errors) == sum(
        p["state"]["status"] == "error" for p in _parts(ERRORS, "tool")
    )


def test_a_command_that_exited_non_zero_is_a_failed_result(tmp_path: Path) -> None:
    # OpenCode calls the build ``completed``; only ``metadata.exit`` says it failed.
    bash = {p["callID"]: _exit(p) for p in _parts(BUILD_EXIT, "tool")}
    assert sorted(bash.values()) == [0, 1]
    history = load(BUILD_EXIT)
    calls = {u.id: u for m in history.messages for u in m.tool_uses}
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    failed = [i for i, code in bash.items() if code == 1]
    assert [i for i, r in results.items() if r.is_error] == failed
    excerpt = result_failure(calls[failed[0]], results[failed[0]])
    assert excerpt is not None and "error TS2769: No overload matches this call." in excerpt

    document = _document(BUILD_EXIT)
    for message in document["messages"]:
        for part in message["parts"]:
            if part["type"] == "tool":
                part["state"]["metadata"]["exit"] = 0
    passed = tmp_path / "passed.json"
    passed.write_text(json.dumps(document), encoding="utf-8")
    assert not any(r.is_error for m in load(passed).messages for r in m.tool_results)


def test_a_command_the_shell_tool_stopped_is_a_failed_result(tmp_path: Path) -> None:
    # OpenCode's shell tool closes the output with a note when the person aborted the command
    # or its timeout ran out; ``exit`` is then null and the part still ``completed``.
    notes = {
        "shell_metadata": "User aborted the command",
        "bash_metadata": "bash tool terminated command after exceeding timeout 30000 ms",
    }
    for tag, line in notes.items():
        document = _document(BUILD_EXIT)
        tools = [p for m in document["messages"] for p in m["parts"] if p["type"] == "tool"]
        ok = [p for p in tools if _exit(p) == 0]
        ok[0]["state"]["metadata"]["exit"] = None
        ok[0]["state"]["output"] = f"(no output)\n\n<{tag}>\n{line}\n</{tag}>"
        path = tmp_path / f"{tag}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        results = {r.tool_use_id: r for m in load(path).messages for r in m.tool_results}
        assert results[ok[0]["callID"]].is_error, tag
        ok[0]["state"]["output"] = f"<{tag}>\n{line}\n</{tag}>\nthen it ran to the end"
        path.write_text(json.dumps(document), encoding="utf-8")
        results = {r.tool_use_id: r for m in load(path).messages for r in m.tool_results}
        assert not results[ok[0]["callID"]].is_error, tag


def test_an_export_whose_first_message_carries_its_diffs_is_still_detected(tmp_path: Path) -> None:
    """OpenCode 1.2 writes a user message's ``info.summary.diffs`` (each changed file's text
    before and after) ahead of its ``parts``: a big change puts the first ``parts`` past the
    sniffed head, and the export must still be told apart by its shape."""
    document = _document(SHORT)
    first = document["messages"][0]
    text = "export const line = 1;\n" * (SNIFF_BYTES // 20)
    diff = {
        "file": "src/index.ts",
        "before": text,
        "after": text,
        "additions": 1,
        "deletions": 0,
        "status": "modified",
    }
    info = {**first["info"], "summary": {"diffs": [diff]}}
    document["messages"][0] = {"info": info, "parts": first["parts"]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert path.read_text(encoding="utf-8").index('"parts"') > SNIFF_BYTES
    assert detect_format(path) == "opencode"
    assert len(load(path).messages) == len(load(SHORT).messages)


def _redacted(value: Any) -> Any:
    """``value`` with every session id replaced as the Entire CLI's redaction writes it."""
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    is_id = isinstance(value, str) and value.startswith("ses_")
    return "REDACTED" if is_id else value


def test_an_export_whose_session_ids_were_redacted_is_still_detected(tmp_path: Path) -> None:
    """Entire stores some OpenCode exports with every id written ``REDACTED`` (four in one
    mirrored repository): no ``ses_`` id is left, and detection said Gemini API and refused."""
    nimbus = DIR / "dayhaysoos__nimbus__report-ui-build-exit.json"
    path = tmp_path / "full.jsonl"
    text = json.dumps(_redacted(_document(nimbus)), indent=2)
    assert '"ses_' not in text
    path.write_text(text, encoding="utf-8")
    assert detect_format(path) == "opencode"
    assert load(path).messages == load(nimbus).messages


def test_an_object_without_messages_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"info": {"id": "ses_1"}, "parts": []}), encoding="utf-8")
    with pytest.raises(FormatError, match="'messages' list"):
        load(path, "opencode")
    path.write_text(json.dumps({"info": {"id": "ses_1"}, "messages": [{"x": 1}]}), encoding="utf-8")
    with pytest.raises(FormatError, match="no message could be read"):
        load(path, "opencode", lenient=True)


def _store(export: Path, root: Path) -> Path:
    """The export written out in OpenCode's storage layout; returns the session file."""
    document = _document(export)
    info = document["info"]
    session = root / "session" / info["projectID"] / f"{info['id']}.json"
    session.parent.mkdir(parents=True)
    session.write_text(json.dumps(info), encoding="utf-8")
    for message in document["messages"]:
        msg = message["info"]
        folder = root / "message" / info["id"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{msg['id']}.json").write_text(json.dumps(msg), encoding="utf-8")
        parts = root / "part" / msg["id"]
        parts.mkdir(parents=True)
        for part in message["parts"]:
            (parts / f"{part['id']}.json").write_text(json.dumps(part), encoding="utf-8")
    return session


@pytest.mark.parametrize("path", [SHORT, RUNNING], ids=lambda p: p.name)
def test_the_storage_directory_reads_as_its_export(path: Path, tmp_path: Path) -> None:
    session = _store(path, tmp_path / "storage")
    assert detect_format(session) == "opencode-storage"
    stored, exported = load(session), load(path)
    assert stored.messages == exported.messages
    assert [m.meta.extra for m in stored.messages] == [m.meta.extra for m in exported.messages]
    assert stored.source is not None and stored.source.records == len(_document(path)["messages"])


def test_a_broken_file_in_storage_is_reported_by_path(tmp_path: Path) -> None:
    session = _store(SHORT, tmp_path / "storage")
    document = _document(SHORT)
    first_reply = document["messages"][1]
    part = first_reply["parts"][-1]
    broken = tmp_path / "storage" / "part" / first_reply["info"]["id"] / f"{part['id']}.json"
    broken.write_text("{not json", encoding="utf-8")
    history = load(session)
    assert history.source is not None
    assert any(str(broken) in i.message for i in history.source.issues)
    (tmp_path / "storage" / "message").rename(tmp_path / "storage" / "messages-moved")
    with pytest.raises(FormatError, match="no message folder"):
        load(session)


def _database(exports: list[Path], path: Path) -> Path:
    """The exports written into OpenCode's SQLite tables (newer OpenCode keeps sessions there)."""
    with closing(sqlite3.connect(path)) as db:
        db.executescript(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, slug TEXT, "
            "directory TEXT, title TEXT, version TEXT, time_created INTEGER);"
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, "
            "time_updated INTEGER, data TEXT);"
            "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, "
            "time_created INTEGER, time_updated INTEGER, data TEXT);"
        )
        for export in exports:
            document = _document(export)
            info = document["info"]
            db.execute(
                "INSERT INTO session VALUES (?, ?, ?, ?, ?, ?, ?)",
                (info["id"], info["projectID"], info["slug"], info["directory"], info["title"],
                 info["version"], info["time"]["created"]),
            )  # fmt: skip
            for message in document["messages"]:
                msg = dict(message["info"])
                created = msg["time"]["created"]
                row = (msg.pop("id"), msg.pop("sessionID"), created, created, json.dumps(msg))
                db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", row)
                for part in message["parts"]:
                    data = {
                        k: v for k, v in part.items() if k not in ("id", "messageID", "sessionID")
                    }
                    db.execute(
                        "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                        (part["id"], row[0], row[1], created, created, json.dumps(data)),
                    )
        db.commit()
    return path


def test_the_sqlite_database_reads_each_session_as_its_export(tmp_path: Path) -> None:
    exports = sorted([SHORT, RUNNING], key=lambda p: _document(p)["info"]["time"]["created"])
    path = _database(exports, tmp_path / "opencode.db")
    assert detect_format(path) == "opencode-db"
    for index, export in enumerate(exports):
        stored, exported = load(path, index=index), load(export)
        assert stored.messages == exported.messages
        assert [m.meta.extra for m in stored.messages] == [m.meta.extra for m in exported.messages]
        assert stored.source is not None
        assert [s["id"] for s in stored.source.metadata["sessions"]] == [
            _document(e)["info"]["id"] for e in exports
        ]
    with pytest.raises(FormatError, match=r"holds 2 session.*--index 0 to 1"):
        load(path, index=2)
    empty = _database([], tmp_path / "empty.db")
    with pytest.raises(FormatError, match="holds no session"):
        load(empty)


def test_a_sqlite_file_of_another_kind_is_not_taken_for_opencode(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (id TEXT)")
        db.commit()
    with pytest.raises(FormatError, match="--format"):
        load(path)
    with pytest.raises(FormatError, match="not an OpenCode database"):
        load(path, "opencode-db")


def test_synthetic_parts_are_listed_as_injected_and_not_typed() -> None:
    # The first message of RUNNING: the person's request, then the directories its @-mentions
    # named, which OpenCode read and sent as synthetic texts.
    first = load(RUNNING).messages[0]
    listed = first.meta.extra["injected_texts"]
    assert len(listed) == 6 and first.meta.extra["injected"] is False
    assert all(t.startswith(("Called the Read tool", "<path>")) for t in listed)
    (typed,) = user_messages([first])
    assert typed.text.startswith("make @scripts/ useing @docs/external/opencode/")
