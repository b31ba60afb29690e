"""Why each hand-written probe missing at the last request was lost (issue #26): never extracted,
pushed out of a summary by its budget, lost when a later summary re-summarized an earlier one, or
kept by a summary that was itself cut later.

    python benchmarks/bench_losses.py --probes benchmarks/fresh_probes3 --data DATA/fresh3
    python benchmarks/bench_losses.py --data DATA/fresh --half fit
    python benchmarks/bench_losses.py --corpus --half fit       # bench_retention's fit half

Each session is replayed as ``bench_fresh`` does (40,000-token window, default ladder and offline
summarizer); every summary is also written once more with no budget, from the same messages, so
what the budget left out can be told from what was never extracted. For a probe missing at the
end, the request where it left the context is found, and the compaction there is read:

- *not extracted*: it was in the messages summarized, and not in the summary even without a budget;
- *budget*: the summary without a budget held it, the summary sent did not;
- *re-summarized*: it was in the messages summarized only inside an earlier summary (then
  *budget* or *not carried* says whether a summary without a budget still held it);
- *summary cut*: the summary sent held it and a later rung cut that summary;
- *cleared by RUNG*: another rung (the tool-result budget, microcompact) cut it before any summary
  read it (whether a later summary without a budget holds it is said too);
- *never in context*: no request ever held it (a rung cut it before the first request after it).

An earlier summary may hold a probe only in an excerpt (the last assistant message of section 8,
an answer's excerpt) whose prose a later summary reads again without finding it a decision or a
finding there: *re-summarized, only in an excerpt*.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_fresh import PRICED_AT, PROBES, WINDOW, bench_for
from bench_retention import split

from contextwarden.cost.prices import default_prices
from contextwarden.eval.probes import Probe, default_probes, load_probes, reasoning_probes
from contextwarden.eval.replay import Mark, replay
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.searchable import SEPARATOR, message_text
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
from contextwarden.summarizers.base import Summary
from contextwarden.summarizers.carry import (
    carried_decisions,
    carried_errors,
    carried_excerpts,
    carried_files,
    carried_findings,
    carried_hits,
    carried_user_messages,
    split_alias,
)
from contextwarden.summarizers.decisions import decisions
from contextwarden.summarizers.findings import findings
from contextwarden.summarizers.typed import is_summary_message
from contextwarden.tokens.heuristic import HeuristicCounter

UNBOUNDED = 10**9
"""A budget no summary reaches: the summary of everything extracted."""


@dataclass(frozen=True, slots=True)
class Call:
    """One summary written during the replay: at which request, of what, and both renderings."""

    turn: int
    raw: str
    """The summarized messages that are not earlier summaries, joined."""
    carried: str
    """The earlier summaries among the summarized messages, joined."""
    sent: str
    unbounded: str


@dataclass
class Recorder:
    """A summarizer that writes each summary twice (with its budget and without) and keeps both."""

    inner: StructuredSummarizer
    turns: list[str] = field(default_factory=list)
    marks: tuple[Mark, ...] = ()
    calls: list[Call] = field(default_factory=list)

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        summary = self.inner.summarize(messages, instructions=instructions)
        free = StructuredSummarizer(self.inner.policy, self.inner.counter, UNBOUNDED)
        unbounded = free.summarize(messages, instructions=instructions).text
        raw = SEPARATOR.join(message_text(m) for m in messages if not is_summary_message(m))
        carried = SEPARATOR.join(message_text(m) for m in messages if is_summary_message(m))
        self.calls.append(Call(len(self.turns), raw, carried, summary.text, unbounded))
        return summary

    def observe(self, _name: str, _turn: int, sent: Sequence[Message]) -> None:
        self.turns.append(SEPARATOR.join(message_text(m) for m in sent))


def why(text: str, recorder: Recorder) -> str:
    """The cause of ``text`` missing at the end (see the module docstring)."""
    held = [i for i, context in enumerate(recorder.turns) if text in context]
    if not held:
        return "never in context"
    left = held[-1] + 1
    calls = [c for c in recorder.calls if c.turn == left]
    if not calls:
        rungs = "/".join(sorted({m.name for m in recorder.marks if m.turn == left}))
        later = any(text in c.unbounded for c in recorder.calls if c.turn > left)
        return f"cleared by {rungs or 'nothing'}" + (", a later summary held it" if later else "")
    call = calls[-1]
    if text in call.sent:
        return "summary cut"
    if text in call.raw:
        return "budget" if text in call.unbounded else "not extracted"
    if text in call.carried:
        if text in call.unbounded:
            return "re-summarized, budget"
        carried = "\n".join(_carried_facts(call.carried))
        where = "not carried" if text in carried else "only in an excerpt"
        return f"re-summarized, {where}"
    return "summary cut (not in what was summarized)"


def _carried_facts(summary: str) -> list[str]:
    """What a later summary reads back from ``summary``: decisions, findings, errors, files,
    user text, and what it finds again in the assistant's words it quotes in excerpts."""
    errors = [" ".join((e.excerpt, *e.more)) for e in carried_errors(summary)]
    files = [f"{path} {split_alias(done)[0]}" for path, done in carried_files(summary)]
    mined = [u for text in carried_excerpts(summary) for u in (*decisions(text), *findings(text))]
    listed = (*carried_decisions(summary), *carried_findings(summary), *carried_hits(summary))
    return [*listed, *mined, *errors, *files, *carried_user_messages(summary)]


def classify(data: Path, probes: Path, half: str | None) -> list[tuple[str, str, str, str]]:
    """(session, kind, probe, cause) for every probe missing at the last request."""
    bench = bench_for(probes, data)
    counter = HeuristicCounter()
    found = []
    for session in bench.sessions:
        if half is None or session.half == half:
            history = load(data / session.path, index=session.index, counter=counter)
            chosen = load_probes(bench.probes / session.probes)
            found += losses(session.path, history, chosen, counter)
    return found


def classify_corpus(half: str | None) -> list[tuple[str, str, str, str]]:
    """The same for ``bench_retention``'s sessions and probes (its fit or held-out half)."""
    fit, held = split()
    counter = HeuristicCounter()
    found = []
    for path in {"fit": fit, "blind": held, None: fit + held}[half]:
        history = load(path, counter=counter)
        chosen = (*default_probes(history.messages), *reasoning_probes(history.messages))
        found += losses(path.name, history, chosen, counter)
    return found


def losses(
    label: str, history: ConversationHistory, probes: Sequence[Probe], counter: HeuristicCounter
) -> list[tuple[str, str, str, str]]:
    """(label, kind, probe, cause) for every probe of ``history`` missing at the last request."""
    recorder = Recorder(StructuredSummarizer(StructuredPolicy(context_window=WINDOW), counter))
    result = replay(
        history,
        ("ladder",),
        probes=probes,
        summarizer=recorder,
        policy=ContextPolicy(context_window=WINDOW),
        pricing=default_prices().get(PRICED_AT),
        observe=recorder.observe,
    )
    recorder.marks = result.runs["ladder"].marks
    kinds = {p.text: p.kind for p in result.probes.probes}
    missing = result.runs["ladder"].retention.missing_at_end
    return [(label, kinds[text], text, why(text, recorder)) for text in missing]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="folder of fresh sessions")
    parser.add_argument(
        "--corpus", action="store_true", help="bench_retention's sessions ($CONTEXTWARDEN_DATA)"
    )
    parser.add_argument("--probes", type=Path, default=None, help="folder of probe files")
    parser.add_argument("--half", choices=("fit", "blind"), help="only this half (blind: held out)")
    args = parser.parse_args(argv)
    if args.corpus:
        found = classify_corpus(args.half)
    elif args.data is not None:
        found = classify(args.data, args.probes or PROBES, args.half)
    else:
        parser.error("--data or --corpus")
    for session, kind, text, cause in found:
        print(f"- `{session}` {kind}: “{text}” — {cause}")
    print()
    for cause, n in Counter(cause for *_, cause in found).most_common():
        print(f"{n:4d}  {cause}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
