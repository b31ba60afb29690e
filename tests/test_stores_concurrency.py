"""Processes against one store: killed mid-append, and eight appending and compacting at once.

The workers are this file run as a script (``python test_stores_concurrency.py <role> …``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from test_stores import KINDS, StoreSpec, compaction, make_spec, turn

from contextwarden.errors import StoreError
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, MessageAdded, derive_view
from contextwarden.model import Message
from contextwarden.rules import validate
from contextwarden.stores import StoreConflictError, StoreWarning

WORKERS = 8
TURNS = 24
COMPACT_EVERY = 3
"""Each worker tries a compaction after every third of its turns."""
ACKS_BEFORE_KILL = 40


@pytest.fixture(params=KINDS)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    yield from make_spec(request, tmp_path)


def spawn(role: str, spec: StoreSpec, *args: object) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, role, spec.to_json(), *map(str, args)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ----------------------------------------------------------------------------- killed mid-append
def appender(spec: StoreSpec, session_id: str) -> None:
    """Add messages through a bound history forever, printing each one once it is stored."""
    history = ConversationHistory.open(spec.open(), session_id, system="kill me")
    for i in range(1_000_000):
        history.add_user_message(f"q{i} " + "x" * 2000)
        print(f"q{i}", flush=True)
        history.add_assistant_message(Message.assistant(f"a{i}"))
        print(f"a{i}", flush=True)


def test_resume_after_the_process_is_killed_mid_append(spec: StoreSpec) -> None:
    with spawn("appender", spec, "k") as worker:
        assert worker.stdout is not None and worker.stderr is not None
        acked = [worker.stdout.readline().strip() for _ in range(ACKS_BEFORE_KILL)]
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        acked += worker.stdout.read().split()  # acknowledged between our read and the kill
        errors = worker.stderr.read()
    assert worker.returncode == -signal.SIGKILL, errors
    assert acked[ACKS_BEFORE_KILL - 1] == f"a{ACKS_BEFORE_KILL // 2 - 1}", errors

    store = spec.open()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = ConversationHistory.open(store, "k")
    # A torn last JSONL line is reported as a warning, never an error; SQL stores have none.
    assert all(issubclass(w.category, StoreWarning) for w in caught)
    assert spec.kind == "jsonl" or not caught
    stored = [m.text.split()[0] for m in history.messages]
    assert stored[: len(acked)] == acked  # every acknowledged append is there, in order
    assert len(stored) - len(acked) <= 1  # plus at most the one in flight at the kill
    assert stored == [f"{'qa'[i % 2]}{i // 2}" for i in range(len(stored))]  # no gap, no repeat
    assert not validate(history.messages)
    if history.messages[-1].role == "user":
        history.add_assistant_message(Message.assistant("resumed"))
    else:
        history.add_user_message("resumed")
    assert store.load("k").messages[-1].text == "resumed"
    store.close()


# ----------------------------------------------------------------------------- 8 workers at once
def contender(spec: StoreSpec, session_id: str, worker: int) -> None:
    """Append turns and try compactions; print how many compactions were applied / refused."""
    store = spec.open()
    applied = refused = 0
    for i in range(TURNS):
        store.append(session_id, turn(f"w{worker} t{i}"))
        if i % COMPACT_EVERY != COMPACT_EVERY - 1:
            continue
        try:
            if worker % 2:  # half through a bound history, half through the store itself
                history = ConversationHistory.open(store, session_id)
                version = len(history.log)
                boundary = compaction(history.messages, f"w{worker} v{version}")
                history._replace_view(_with_base(boundary, version))
            else:
                entries = store.log(session_id)
                version = len(entries)
                boundary = compaction(derive_view(entries), f"w{worker} v{version}")
                store.append(session_id, [_with_base(boundary, version)], expected_version=version)
            applied += 1
        except StoreConflictError:
            refused += 1
    print(json.dumps({"applied": applied, "refused": refused}), flush=True)
    store.close()


def _with_base(boundary: CompactionBoundary, version: int) -> CompactionBoundary:
    return replace(boundary, details={"base_version": version})


@pytest.mark.timeout(300)
def test_eight_processes_append_and_compact_one_session(spec: StoreSpec) -> None:
    spec.open().close()  # create the database/schema once, before the race
    workers = [spawn("contender", spec, "shared", w) for w in range(WORKERS)]
    outcomes = []
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err
        outcomes.append(json.loads(out))
    store = spec.open()
    log = store.log("shared")

    texts = Counter(e.message.text for e in log if isinstance(e, MessageAdded))
    expected = {f"w{w} t{i} {s}" for w in range(WORKERS) for i in range(TURNS) for s in "qa"}
    assert set(texts) == expected and set(texts.values()) == {1}  # each exactly once

    boundaries = [(i, e) for i, e in enumerate(log) if isinstance(e, CompactionBoundary)]
    assert len(boundaries) == sum(o["applied"] for o in outcomes) > 0
    for index, boundary in boundaries:  # one chain: each built on exactly the log before it
        assert boundary.details["base_version"] == index
        assert boundary.view[1:] == tuple(derive_view(log[:index])[-3:])
    assert list(store.load("shared").messages) == derive_view(log)
    assert not validate(derive_view(log))
    store.close()


def main(role: str, spec_json: str, *args: str) -> None:
    spec = StoreSpec.from_json(spec_json)
    try:
        if role == "appender":
            appender(spec, args[0])
        else:
            contender(spec, args[0], int(args[1]))
    except StoreError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        raise


if __name__ == "__main__":
    main(*sys.argv[1:])
