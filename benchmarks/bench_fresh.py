"""Hand-written probes on fresh sessions nobody tuned on (issue #26): what the ladder keeps at a
40,000-token window with the offline summary, per kind, on a fit half and a blind half.

    python benchmarks/bench_fresh.py --data DATA/fresh                       # print the section
    python benchmarks/bench_fresh.py --data DATA/fresh --baseline BASE/src --write FILE
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes3 --data DATA/fresh3
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes4 --data DATA/fresh4
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes6 --data DATA/fresh6  # 5 too
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes7 --data DATA/fresh7
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes8 --data DATA/fresh8
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes9 --data DATA/fresh9
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes10 --data DATA/fresh10
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes11 --data DATA/fresh11
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes18 --data DATA/fresh18
    python benchmarks/bench_fresh.py --probes benchmarks/fresh_probes19 --data DATA/fresh19

The sessions (``SESSIONS``) are real ones from public, permissively licensed repositories that
neither the project's corpus nor its tests hold; ``benchmarks/build_fresh_corpus.py`` copies
them out of clones of those repositories. Each has a ``benchmarks/fresh_probes/<name>.json``
(the format ``eval.probes.load_probes`` reads) written by hand from reading the session, before
any summarizer ran on it: what the person asked, files touched, decisions (a root cause, a
chosen approach, a rejected alternative) and errors (the distinctive line of a failure). Which
half a session is in was fixed before the first measurement (see ``SESSIONS``); changes were
made looking at the fit half only.

Each session is replayed twice through the ladder: ``ContextPolicy()`` and
``ContextPolicy(recall=True)`` (each summary names the span it covers; a probe missing at the
end counts as recalled when an original the last context names holds it). ``--baseline SRC``
runs the same measurement with the package found in ``SRC`` (another checkout's ``src``), in a
subprocess, and shows it as *before*.

``--probes DIR`` measures another folder of probes written the same way (``fresh_probes3`` to
``fresh_probes19``, the third to nineteenth sets, built by ``build_fresh_corpus.py --set 3`` to
``--set 19``; set 7's Cursor sessions are SpecStory exports, set 8's are OpenCode, Codex and
Copilot CLI sessions, set 9's are SpecStory CLI exports of Claude Code, Codex and Gemini CLI
sessions, set 10's are mini-swe-agent trajectories, set 11's are Cursor sessions SpecStory saved
in its 2025 and 2026 layouts, set 18's are Cursor sessions SpecStory saved in its early-2025
layout and a Claude Code session from an Entire checkpoint ref, set 19's are Codex, Claude Code
and Copilot CLI sessions from Entire checkpoint branches, one of them in Portuguese): one file
per session, named after the session file under the data folder without its extension; every
session of such a set is blind. Each probe missing from the last request's context is listed
under the table, with whether recall got it back.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_retention import write

from contextwarden.cost.prices import default_prices
from contextwarden.errors import FormatError
from contextwarden.eval.probes import load_probes
from contextwarden.eval.replay import StrategyRun, replay
from contextwarden.formats import load
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers import StructuredPolicy, StructuredSummarizer
from contextwarden.tokens.heuristic import HeuristicCounter

PROBES = Path(__file__).resolve().parent / "fresh_probes"
SECTION = "## Hand-written probes on fresh sessions (issue #26, 40,000-token window)"
COMMAND = (
    "git archive ab14e75 src | tar -x -C /tmp/base && python benchmarks/bench_fresh.py "
    "--data DATA/fresh --baseline /tmp/base/src --write docs/benchmarks.md"
)
"""``ab14e75``: main when this measurement started (the *before*)."""
WINDOW = 40_000
PRICED_AT = "claude-sonnet-4-6"
"""The model whose prices (with its prompt cache) give the modeled cost of every session."""
KINDS = ("user_message", "file_path", "decision", "error")
HALVES = ("blind", "fit")


@dataclass(frozen=True, slots=True)
class Session:
    """A session file under the data folder, the chat in it, its half and what it is."""

    path: str
    index: int
    half: str
    about: str

    @property
    def probes(self) -> str:
        """The probe file's name: the session's, without its extension (``.traj.json`` whole, as
        ``_session_for`` finds the session by what precedes it; a plain ``.json``, such as a
        Gemini CLI ``/chat save`` checkpoint, too)."""
        name = Path(self.path).name
        stem = name.removesuffix(".traj.json").removesuffix(".jsonl").removesuffix(".json")
        stem = stem.removesuffix(".md")
        return f"{stem}{f'#{self.index}' if self.index else ''}.json"


@dataclass(frozen=True, slots=True)
class Bench:
    """A folder of hand-written probes, the sessions they were written for, and the title,
    command and account the section gives."""

    probes: Path
    sessions: tuple[Session, ...]
    title: str
    command: str
    explained: str


SESSIONS = (
    # Split, fixed before measuring: within each source repository, sessions sorted by name,
    # odd positions blind; the one Russian session is blind, so no rule is tuned on it.
    Session(
        "claude-code/FSM1__cipher-box__29-4ec7fb98f3-0.jsonl",
        0,
        "fit",
        "Claude Code, English: dev servers, ngrok, CORS, DB host, auth e-mail",
    ),
    Session(
        "claude-code/FSM1__cipher-box__49-85d640fadb-3.jsonl",
        0,
        "blind",
        "Claude Code, English: seven review comments on a React file browser, gh API",
    ),
    Session(
        "claude-code/FSM1__cipher-box__b4-b33d460b93-0.jsonl",
        0,
        "fit",
        "Claude Code, English: test-login endpoint for E2E, pnpm store errors",
    ),
    Session(
        "claude-code/PackmindHub__context-evaluator__09-597b5bde42-0.jsonl",
        0,
        "fit",
        "Claude Code, English: evaluator skip rules, failing prompt tests, lint",
    ),
    Session(
        "claude-code/PackmindHub__context-evaluator__18-8f64dd752f-1.jsonl",
        0,
        "blind",
        "Claude Code, English: multi-remediation history UI, unused variable lint",
    ),
    Session(
        "claude-code/PackmindHub__context-evaluator__5f-3390ed3fa8-1.jsonl",
        0,
        "fit",
        "Claude Code, English: AGENTS.md/CLAUDE.md consolidation, tsc errors",
    ),
    Session(
        "claude-code/PackmindHub__context-evaluator__7b-904be9fc93-0.jsonl",
        0,
        "blind",
        "Claude Code, English: remediation progress UI, Edit tool and tabs, hook deps",
    ),
    Session(
        "claude-code/PackmindHub__context-evaluator__b5-ef23574320-0.jsonl",
        0,
        "fit",
        "Claude Code, English: front-end re-run button, tab indentation",
    ),
    Session(
        "claude-code/PackmindHub__context-evaluator__d7-20ae45fb41-0.jsonl",
        0,
        "blind",
        "Claude Code, English: lightweight model per provider, pre-commit hook",
    ),
    # Added after the rules were tuned (probes written first, measured once): blind too.
    Session(
        "claude-code/FSM1__cipher-box__56-4c4834ac78-1.jsonl",
        0,
        "blind",
        "Claude Code, English: database migration protocol, a duplication the user ruled out",
    ),
    Session(
        "claude-code/FSM1__cipher-box__ce-af0d869e9a-6.jsonl",
        0,
        "blind",
        "Claude Code, English: CI E2E failure (a wrong CSS selector), review comments",
    ),
    Session(
        "aider/AlexShchuka+mozgoslav.md",
        1,
        "blind",
        "aider (local Qwen), Russian: push-to-talk bug hunt in an Electron app",
    ),
)


EXPLAINED = """\
Sources (copied byte for byte by `build_fresh_corpus.py`, SHA-256 checked; kept outside the
repository under `DATA/fresh/`): `FSM1/cipher-box` (MIT; 5 Claude Code sessions from its
`entire/checkpoints/v1` branch at `e227f11`), `PackmindHub/context-evaluator` (Apache-2.0; 6
Claude Code sessions, same kind of branch at `63679d4`), `AlexShchuka/mozgoslav` (MIT; chat 1 of
its `.aider.chat.history.md` at `1f66bc9`, an aider session with a local Qwen model, in Russian).
Only sessions longer than the window were kept (41,000 to 110,000 tokens; a shorter one is never
compacted and tests nothing). Kinds of work: web back end and front end (React, NestJS), dev
environment and infrastructure (dev servers, ngrok, CORS, Docker hosts, pnpm stores, pre-commit
hooks, database migrations, a CI end-to-end failure), code review replies over the GitHub API, an
Electron app's push-to-talk bug. 173 probes: 30 user requests, 61 files, 54 decisions, 28 errors;
4 more sit in the last message (no request after them) and cannot be checked. The two FSM1
sessions listed last in the blind half were added after the rules were tuned (probes written
first, measured once). The one Russian session is in the blind half, so no rule was
tuned on it; the rules for other languages were written from the languages, not from sessions.

What changed (looking at the fit half only): *decisions* (`summarizers/decisions.py`): the old
rule knew one English phrasing of a reason or a choice: the summary's facts held 11 of the fit
half's 39 decision and error probes (30 now). Now a decision is a line (whole when 160 characters or
shorter, so the sentence next to a conclusion that gives its reason stays with it) giving a
reason or a choice, or a diagnosis (`the issue`, `root cause`, `accidentally`, `wrong`,
`missing`, `conflict`…), or one of the four lines after a line announcing a plan (`Here's the
plan:`); signals in Russian, Spanish, Portuguese, French, German, Chinese, Japanese and Korean;
code blocks are read by their comments only. Under a short budget bare diagnoses and plan steps
go before decisions giving a reason or a choice. *Errors* (`summarizers/failures.py`): a shell
output that lost its exit code (piped through `tail`) still fails when it holds a line a
compiler, linter, test runner or package manager prints for a failure (`path:line: error`,
`path(l,c): error TS…`, `Found N errors`, `FAIL`/`(fail)`/cross marks, `ERR_PNPM_…`, a command's
usage error); that line is the excerpt and marked lines are kept as further lines. Rules tried
and dropped: `but`, `should`, `only`, `must` and negations as decision signals, and the plan rule
on any signal: on the project's own sessions they tripled the decision lines and pushed the
older reasoned ones out of the budget (its held-out decisions fell to 72.5 %).

Cost: not kept at or below main's, but within 0.11 %: tokens sent +0.06 % on both halves,
modeled cost +0.03 % (fit) and +0.11 % (blind), tokens sent on the project's held-out sessions
+0.10 %. They are not monotone in the summary's size (a summary a little larger or smaller
moves every later compaction): shortening decisions to 240 characters, or capping bare
diagnoses at 8, *raised* the tokens sent on the project's held-out sessions."""


FIRST = Bench(PROBES, SESSIONS, SECTION, COMMAND, EXPLAINED)
"""The first set: its own sessions, halves and account of what was tuned on its fit half."""


def bench_for(probes: Path, data: Path) -> Bench:
    """The set whose probes are in ``probes``: the first set, or a blind set found on disk."""
    if probes.resolve() == PROBES:
        return FIRST
    sessions = tuple(_session_for(path, data) for path in sorted(probes.glob("*.json")))
    if not sessions:
        raise FormatError("no probe files (*.json) here", path=str(probes))
    name = probes.name
    return Bench(
        probes,
        sessions,
        f"## Hand-written probes on the blind set `{name}` (issue #26, 40,000-token window)",
        f"python benchmarks/bench_fresh.py --probes benchmarks/{name} --data DATA "
        "--write docs/benchmarks.md",
        f"Sessions, sources, licences and what each is about: `benchmarks/{name}/README.md`; "
        "`DATA` is the folder `build_fresh_corpus.py` wrote them into. Every session is blind: "
        "its probes were written and committed before any summarizer or replay ran on it, and "
        "nothing is tuned on it.",
    )


def _session_for(probes: Path, data: Path) -> Session:
    stem, _, index = probes.stem.partition("#")
    found = sorted(data.glob(f"*/{stem}.*"))
    if not found:
        raise FormatError(f"no session {stem}.* under {data}/*/", path=str(probes))
    path = found[0].relative_to(data).as_posix()
    return Session(path, int(index or 0), "blind", path)


@dataclass(frozen=True, slots=True)
class Lost:
    """A probe missing from the last request's context, and whether recall got it back."""

    session: str
    kind: str
    text: str
    recalled: bool


@dataclass
class Tally:
    """Per kind: (present, checks) over every request; at the last request, due, kept, and
    kept or recalled with the recall tool."""

    checks: Counter[str]
    hits: Counter[str]
    due: Counter[str]
    kept: Counter[str]
    recalled: Counter[str]
    sent: int = 0
    sent_recall: int = 0
    unchecked: int = 0
    cost: float = 0.0
    cost_recall: float = 0.0

    @classmethod
    def empty(cls) -> Tally:
        return cls(Counter(), Counter(), Counter(), Counter(), Counter())

    def add(self, run: StrategyRun, with_recall: StrategyRun, kinds: dict[str, str]) -> None:
        for kind, (present, checks) in run.retention.by_kind.items():
            self.hits[kind] += present
            self.checks[kind] += checks
        missing = Counter(kinds[t] for t in run.retention.missing_at_end)
        lost = Counter(kinds[t] for t in with_recall.retention.missing_at_end)
        back = with_recall.recall.recovered if with_recall.recall else ()
        recovered = Counter(kinds[t] for t in back)
        for kind, n in Counter(kinds.values()).items():
            self.due[kind] += n
            self.kept[kind] += n - missing[kind]
            self.recalled[kind] += n - lost[kind] + recovered[kind]
        self.sent += run.total_tokens_sent
        self.sent_recall += with_recall.total_tokens_sent
        self.cost += run.bill.cost if run.bill else 0.0
        self.cost_recall += with_recall.bill.cost if with_recall.bill else 0.0

    def as_json(self) -> dict[str, Any]:
        return {name: value for name, value in vars(self).items()}


def measure(data: Path, bench: Bench) -> tuple[dict[str, Tally], list[Lost]]:
    tallies = {half: Tally.empty() for half in HALVES}
    lost: list[Lost] = []
    counter = HeuristicCounter()
    price = default_prices().get(PRICED_AT)
    for session in bench.sessions:
        history = load(data / session.path, index=session.index, counter=counter)
        probes = load_probes(bench.probes / session.probes)
        runs = []
        for policy in (
            ContextPolicy(context_window=WINDOW),
            ContextPolicy(context_window=WINDOW, recall=True),
        ):
            summarizer = StructuredSummarizer(StructuredPolicy(context_window=WINDOW), counter)
            result = replay(
                history,
                ("ladder",),
                probes=probes,
                summarizer=summarizer,
                policy=policy,
                pricing=price,
            )
            runs.append(result.runs["ladder"])
        kinds = {p.text: p.kind for p in result.probes.probes}
        tally = tallies[session.half]
        tally.add(runs[0], runs[1], kinds)
        tally.unchecked += len(result.probes.unchecked)
        for probe, why in result.probes.unchecked:
            print(f"unchecked ({session.probes}): {probe.text!r}: {why}", file=sys.stderr)
        back = set(runs[1].recall.recovered) if runs[1].recall else set()
        kept_with_recall = back | (set(kinds) - set(runs[1].retention.missing_at_end))
        lost += [
            Lost(session.path, kinds[text], text, text in kept_with_recall)
            for text in runs[0].retention.missing_at_end
        ]
    return tallies, lost


def baseline(src: Path, data: Path, probes: Path) -> dict[str, Tally]:
    """``measure`` run with the package in ``src``, in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--data", str(data), "--probes", str(probes), "--json"]
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    return {half: _tally(values) for half, values in json.loads(out).items()}


def _tally(values: dict[str, Any]) -> Tally:
    def counts(name: str) -> Counter[str]:
        return Counter(values[name])

    return Tally(
        counts("checks"),
        counts("hits"),
        counts("due"),
        counts("kept"),
        counts("recalled"),
        values["sent"],
        values["sent_recall"],
        values["unchecked"],
        values["cost"],
        values["cost_recall"],
    )


def table(title: str, before: Tally | None, after: Tally) -> list[str]:
    """The per-kind table; without a *before*, one column per measure instead of two."""
    tallies = (after,) if before is None else (before, after)
    heads = ("checks kept", "at last request", "+ recall")
    head = heads if before is None else [f"{h}, {w}" for h in heads for w in ("before", "after")]
    blank = "| " * (len(head) - 1)
    lines = [
        title,
        "",
        "| kind | probes | " + " | ".join(head) + " |",
        "|---|---:|" + "---:|" * len(head),
    ]
    for kind in (*KINDS, "all"):
        cells = [str(_n(after.due, kind))]
        cells += [_share(_n(t.hits, kind), _n(t.checks, kind)) for t in tallies]
        cells += [_frac(_n(t.kept, kind), _n(t.due, kind)) for t in tallies]
        cells += [_frac(_n(t.recalled, kind), _n(t.due, kind)) for t in tallies]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines.append(
        f"| probes said after the last request (not checked) | {after.unchecked} | {blank}|"
    )
    sent = [f"{t.sent:,} / {t.sent_recall:,}" for t in tallies]
    cost = [f"${t.cost:,.2f} / ${t.cost_recall:,.2f}" for t in tallies]
    if before is not None:
        sent[-1] += f" ({after.sent / max(1, before.sent):.4f}x)"
        cost[-1] += f" ({after.cost / max(1e-9, before.cost):.4f}x)"
    rest = "| " * (len(head) - len(tallies))
    lines.append("| tokens sent (without / with recall) | | " + " | ".join(sent) + f" {rest}|")
    lines.append(
        f"| modeled cost at {PRICED_AT} prices, prompt cache (without / with recall) | | "
        + " | ".join(cost)
        + f" {rest}|"
    )
    return lines


def _n(counts: Counter[str], kind: str) -> int:
    return sum(counts.values()) if kind == "all" else counts[kind]


def _share(present: int, checks: int) -> str:
    return f"{present / checks:.1%}" if checks else "n/a"


def _frac(n: int, of: int) -> str:
    return f"{n}/{of} ({n / of:.0%})" if of else "n/a"


def section(data: Path, bench: Bench, base: Path | None) -> str:
    started = time.process_time()
    after, lost = measure(data, bench)
    before = baseline(base, data, bench.probes) if base is not None else None
    parts = [bench.title, ""]
    for half in HALVES:
        n = sum(s.half == half for s in bench.sessions)
        if n:
            title = f"**{half.capitalize()} half ({n} sessions)**"
            parts += [*table(title, before[half] if before else None, after[half]), ""]
    parts.append("| session | half |\n|---|---|")
    parts += [f"| {s.about} | {s.half} |" for s in bench.sessions]
    parts += ["", f"Missing from the last request's context ({len(lost)}):", ""]
    parts += [
        f"- `{x.session}` {x.kind}: “{x.text}”{' (back with recall)' if x.recalled else ''}"
        for x in lost
    ]
    # The first set's section also says how its sessions were chosen and split (the third
    # paragraph of this docstring); another set's README says that for it.
    method = __doc__.split("\n\n", 2 if bench is FIRST else 3)[-1]
    parts += ["", bench.explained, "", method.strip(), ""]
    parts.append(
        f"`{bench.command}` ({sys.platform}, Python {sys.version.split()[0]}; "
        f"{time.process_time() - started:.0f} s CPU in this process; run "
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)."
    )
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of fresh sessions")
    parser.add_argument("--baseline", type=Path, help="a src folder to measure as 'before'")
    parser.add_argument("--probes", type=Path, default=PROBES, help="folder of probe files")
    parser.add_argument("--json", action="store_true", help="print the raw tallies as JSON")
    parser.add_argument("--write", type=Path, help="update the section in a Markdown file")
    args = parser.parse_args(argv)
    bench = bench_for(args.probes, args.data)
    if not (args.data / bench.sessions[0].path).is_file():
        raise FormatError("no sessions here: run build_fresh_corpus.py", path=str(args.data))
    if args.json:
        tallies, _ = measure(args.data, bench)
        print(json.dumps({h: t.as_json() for h, t in tallies.items()}))
        return 0
    text = section(args.data, bench, args.baseline)
    if args.write:
        write(args.write, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
