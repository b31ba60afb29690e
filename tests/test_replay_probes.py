"""Probes: reading PROBES.json, deriving the defaults from the facts, giving each its first turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fixture_path

from contextwarden.errors import FormatError
from contextwarden.eval.probes import (
    MIN_PROBE_CHARS,
    Probe,
    default_probes,
    load_probes,
    resolve,
)
from contextwarden.formats import load
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock, freeze
from contextwarden.searchable import message_text
from contextwarden.summarizers.facts import extract_facts

SESSION = fixture_path(
    "openai-chat/SWE-agent__mini-swe-agent__pr816-deepseek-chat-astroid-1333.traj.json"
)


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "PROBES.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_probes_file_takes_strings_and_objects(tmp_path: Path) -> None:
    path = _write(
        tmp_path, ["keep the API stable", {"text": "src/app.py", "turn": 3, "kind": "file"}]
    )
    assert load_probes(path) == (
        Probe("keep the API stable"),
        Probe("src/app.py", kind="file", turn=3),
    )
    wrapped = _write(tmp_path, {"probes": ["only this"]})
    assert load_probes(wrapped) == (Probe("only this"),)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"facts": []}, "expected a list of probes"),
        ([{"turn": 2}], "message 0: a probe needs a non-empty string 'text'"),
        (["ok", {"text": "x", "turn": -1}], "message 1: 'turn' must be an int >= 0"),
        ([3], "message 0: a probe is a string or an object"),
    ],
)
def test_bad_probes_file_says_what_and_where(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        load_probes(_write(tmp_path, data))


def test_probes_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "PROBES.json"
    path.write_text('[\n"a",\n}', encoding="utf-8")
    with pytest.raises(FormatError, match=r"PROBES.json, line 3: not valid JSON"):
        load_probes(path)


def test_default_probes_are_the_facts_a_summary_promises() -> None:
    messages = load(SESSION).messages
    probes = default_probes(messages)
    facts = extract_facts(messages)
    texts = {p.text for p in probes}
    typed = [m.text for m in facts.user_messages if not m.carried]
    assert {t for t in typed if len(t.strip()) >= MIN_PROBE_CHARS} <= texts
    assert {f.path for f in facts.files if len(f.path) >= MIN_PROBE_CHARS} <= texts
    kinds = {p.kind for p in probes}
    assert kinds == {"user_message", "file_path", "error"}
    assert len(texts) == len(probes)  # each fact once
    assert all(len(p.text.strip()) >= MIN_PROBE_CHARS for p in probes)
    for probe in probes:  # every derived probe is found in the message it came from
        if probe.kind != "file_path" or probe.source is not None:
            assert probe.source is not None
            assert probe.text in message_text(messages[probe.source]), probe


def _conversation() -> list[Message]:
    call = ToolUseBlock("t1", "Read", freeze({"file_path": "/repo/src/app.py"}))
    return [
        Message.user("Please look at /repo/src/app.py, it crashes"),  # request 0 sees this
        Message.assistant((TextBlock("Reading it."), call)),
        Message.user((ToolResultBlock("t1", "Traceback: ValueError: bad input"),)),  # request 1
        Message.assistant("It raises ValueError on bad input."),
        Message.user("Then fix it and add a test"),  # request 2
        Message.assistant("Done."),
        Message.user("thanks, bye"),  # no request follows
    ]


def test_first_turn_is_the_request_after_the_probes_message() -> None:
    messages = _conversation()
    probes = [
        Probe("ValueError: bad input"),
        Probe("Then fix it and add a test", kind="user_message", source=4),
        Probe("/repo/src/app.py", kind="file_path", source=1),  # said earlier by the user
        Probe("ValueError: bad input", turn=0),  # a turn before the fact is moved to it
        Probe("SYSTEM-ONLY", turn=1),
        Probe("thanks, bye"),
        Probe("never said"),
    ]
    resolved = resolve(probes, messages, system="rules: SYSTEM-ONLY")
    keys = [(p.text, p.turn) for p in resolved.probes]
    got = dict(zip(keys, resolved.first_turns, strict=True))
    assert got == {
        ("ValueError: bad input", None): 1,
        ("Then fix it and add a test", None): 2,
        ("/repo/src/app.py", None): 1,
        ("ValueError: bad input", 0): 1,
        ("SYSTEM-ONLY", 1): 1,
    }
    assert [(p.text, why) for p, why in resolved.unchecked] == [
        ("thanks, bye", "first appears after the last request"),
        ("never said", "not present verbatim anywhere in the conversation"),
    ]


def test_a_probe_never_matches_across_two_blocks() -> None:
    message = Message.user((TextBlock("first half"), TextBlock("second half")))
    resolved = resolve(
        [Probe("half\nsecond"), Probe("halfsecond")], [message, Message.assistant("x")]
    )
    assert len(resolved) == 0 and len(resolved.unchecked) == 2
