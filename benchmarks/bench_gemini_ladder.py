"""The ladder on a Gemini CLI conversation, replayed request by request as the proxy manages it.

The fixture is the last request the real Gemini CLI 0.61.0 sent in a 20-tool-turn task (straight
to the scripted upstream of ``tests/test_agent_gemini_cli.py``, no proxy): its system instruction,
its tool declarations and 41 contents with the thought signatures the model gave. Each request
the CLI sent on the way (the contents up to each of its user turns) goes through the proxy's own
path without HTTP: ``apis_gemini`` reads it, ``Sessions`` matches and manages it with the
proxy's default ladder (``--cache auto``: ``CachePolicy``; a SQLite store in a temporary
directory), and the body it would forward is counted and checked, and compared with the
previous one: "prefix kept" when it starts with the previous request's contents byte for byte
(what a prompt cache serves). Baseline, same run: the same requests as the CLI sent them.

    python benchmarks/bench_gemini_ladder.py [--window 30000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from contextwarden.compaction.cache import CachePolicy
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis_gemini import GEMINI
from contextwarden.proxy.sessions import Sessions
from contextwarden.rules import validate
from contextwarden.stores import open_store
from contextwarden.tokens.heuristic import HeuristicCounter
from contextwarden.wire.gemini import messages_from_gemini

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "data"
    / "gemini"
    / "gemini-cli-0.61.0-20-reads.request.json"
)


def requests(last: dict[str, Any]) -> list[dict[str, Any]]:
    """Every request of the conversation: the contents up to each user content."""
    contents = last["contents"]
    ends = [i + 1 for i, c in enumerate(contents) if c.get("role", "user") == "user"]
    return [{**last, "contents": contents[:end]} for end in ends]


def tokens(body: dict[str, Any], counter: HeuristicCounter) -> int:
    """The request's count, as the scripted upstream counts it (messages + preamble JSON)."""
    preamble = json.dumps([body.get("systemInstruction"), body.get("tools")])
    messages = messages_from_gemini(body["contents"])
    return sum(map(counter.count_message, messages)) + counter.count_text(preamble)


def signatures(body: dict[str, Any]) -> dict[str, str]:
    """``{call id the CLI gave: thoughtSignature}`` of the signed calls in a request."""
    found = {}
    for content in body["contents"]:
        for part in content["parts"]:
            call = part.get("functionCall")
            if call and "thoughtSignature" in part:
                found[call.get("id", call["name"])] = part["thoughtSignature"]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--window", type=int, default=30_000)
    window = parser.parse_args().window
    counter = HeuristicCounter()
    limit = ContextPolicy(context_window=window).effective_window
    bodies = requests(json.loads(FIXTURE.read_text()))
    print(f"window {window:,} (effective {limit:,}), {len(bodies)} requests\n")
    print("| request | contents | CLI sent (tokens) | proxy sent (tokens) | prefix kept | rungs |")
    print("|---:|---:|---:|---:|---|---|")
    direct, managed, invalid, lost, over, kept_prefix = [], [], 0, 0, [0, 0], 0
    previous: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        manager = ContextManager(ContextPolicy(context_window=window), cache=CachePolicy())
        sessions = Sessions(open_store(str(Path(tmp) / "s.sqlite3")), manager, counter)
        for n, body in enumerate(bodies):
            result = sessions.manage(GEMINI.conversation(body, None))
            sent = GEMINI.render(body, result.messages)
            direct.append(tokens(body, counter))
            managed.append(tokens(sent, counter))
            invalid += bool(validate(messages_from_gemini(sent["contents"])))
            kept = signatures(sent)
            lost += sum(1 for k, v in kept.items() if signatures(body).get(k) != v)
            over[0] += direct[-1] > limit
            over[1] += managed[-1] > limit
            rungs = ", ".join(result.report.applied) if result.report else ""
            same = sent["contents"][: len(previous)] == previous
            kept_prefix += same and n > 0
            previous = sent["contents"]
            row = f"{len(body['contents'])} | {direct[-1]:,} | {managed[-1]:,}"
            print(f"| {n + 1} | {row} | {'yes' if same else 'no'} | {rungs} |")
    print()
    print(f"peak tokens: CLI {max(direct):,}, proxy {max(managed):,}")
    print(f"requests over the window: CLI {over[0]}, proxy {over[1]}")
    print(f"tokens sent over the session: CLI {sum(direct):,}, proxy {sum(managed):,} ", end="")
    print(f"(proxy / CLI {sum(managed) / sum(direct):.2f})")
    print(f"invalid requests sent by the proxy: {invalid}; signatures changed or lost: {lost}")
    print(f"requests whose prefix the previous request sent unchanged: {kept_prefix} of {n}")


if __name__ == "__main__":
    main()
