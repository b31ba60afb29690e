"""Summaries: size and time of the offline summary, and what it keeps next to Claude Code's own.

    python benchmarks/bench_summarizers.py                               # print the two sections
    python benchmarks/bench_summarizers.py --write docs/benchmarks.md    # replace them in place

Sizes are o200k_base tokens (exact, offline through the ``tiktoken`` extra). The side-by-side table
replays each Claude Code compaction found in ``$CONTEXTWARDEN_DATA/transcripts/claude-code``: at
the same cut point (the messages before Claude Code's ``compact_boundary``), our offline summary is
built the way the compaction ladder would have built it (a second compaction summarizes the first
summary plus what came after), and both summaries are checked for the same facts, verbatim.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.formats import load
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.summarizers import StructuredSummarizer, extract_facts, user_messages
from contextwarden.summarizers.typed import SUMMARY_PREFIX
from contextwarden.tokens.exact import TiktokenCounter

DATA = Path(
    os.environ.get("CONTEXTWARDEN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TRANSCRIPTS = DATA / "transcripts"
RUNS = 7
"""Timed runs on the longest transcript (the median is reported)."""
FILE_KEYS = ("file_path", "notebook_path", "filename")
SECTION_SUMMARIES = "## Summaries"
SECTION_VERSUS = "## Our summary vs Claude Code's"
COMMAND = "python benchmarks/bench_summarizers.py --write docs/benchmarks.md"
NOTE = (
    f"{SUMMARY_PREFIX} that ran out of context. The summary below covers the earlier portion "
    "of the conversation."
)


def transcript_files() -> list[Path]:
    return sorted(
        p
        for p in TRANSCRIPTS.rglob("*")
        if p.is_file() and p.suffix in {".jsonl", ".json", ".traj"}
    )


def tokens(counter: TiktokenCounter, messages: Sequence[Message]) -> int:
    return sum(counter.count_message(m) for m in messages)


# ----------------------------------------------------------------------------- sizes and time
def size_table(counter: TiktokenCounter) -> tuple[list[str], tuple[str, int, float, float]]:
    summarizer = StructuredSummarizer()
    rows = [
        "| transcript | messages | transcript tokens | summary tokens | ratio | "
        "user msgs | files | errors | time (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    longest: tuple[str, int, Sequence[Message]] = ("", -1, ())
    for path in transcript_files():
        messages = tuple(load(path).messages)
        started = time.perf_counter()
        summary = summarizer.summarize(messages)
        elapsed = (time.perf_counter() - started) * 1000
        facts = extract_facts(messages)
        before, after = tokens(counter, messages), counter.count_text(summary.text)
        cells = [
            f"{path.parent.name}/{_short(path.name)}",
            str(len(messages)),
            f"{before:,}",
            f"{after:,}",
            f"{after / max(before, 1):.1%}",
            str(len(facts.user_messages)),
            str(len(facts.files)),
            str(len(facts.errors)),
            f"{elapsed:.0f}",
        ]
        rows.append(_row(cells))
        if before > longest[1]:
            longest = (path.name, before, messages)
    name, size, longest_messages = longest
    runs, facts_runs = [], []
    for _ in range(RUNS):  # interleaved, so load on the machine affects both alike
        started = time.perf_counter()
        summarizer.summarize(longest_messages)
        runs.append(time.perf_counter() - started)
        started = time.perf_counter()
        extract_facts(longest_messages)
        facts_runs.append(time.perf_counter() - started)
    return rows, (name, size, statistics.median(runs) * 1000, statistics.median(facts_runs) * 1000)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _short(name: str) -> str:
    return name if len(name) <= 48 else name[:45] + "…"


# ----------------------------------------------------------------------------- side by side
@dataclass(frozen=True)
class Kept:
    users: tuple[int, int]
    files: tuple[int, int]
    names: tuple[int, int]
    """Files named at least by their last two path parts (``cli/hooks.go``): a looser test."""
    errors: tuple[int, int]
    tokens: int


def _fold(text: str) -> str:
    return " ".join(text.split())


def _share(wanted: Sequence[str], text: str) -> tuple[int, int]:
    folded = _fold(text)
    return sum(1 for w in wanted if _fold(w) in folded), len(wanted)


def touched_files(messages: Sequence[Message]) -> list[str]:
    """Files a tool input names as read or written (the same oracle as the tests)."""
    paths: dict[str, None] = {}
    for message in messages:
        for use in message.tool_uses:
            for key in FILE_KEYS:
                value = use.input.get(key)
                if isinstance(value, str) and value.strip():
                    paths[value] = None
    return list(paths)


def kept(text: str, said: Sequence[Message], counter: TiktokenCounter) -> Kept:
    facts = extract_facts(said)
    users = [m.text for m in user_messages(said)]
    errors = list(dict.fromkeys(e.excerpt for e in facts.errors))
    files = touched_files(said)
    names = ["/".join(f.rstrip("/").split("/")[-2:]) for f in files]
    return Kept(
        _share(users, text),
        _share(files, text),
        _share(names, text),
        _share(errors, text),
        counter.count_text(text),
    )


def ladder_input(previous: str | None, messages: Sequence[Message]) -> list[Message]:
    """What the compaction ladder summarizes: the last summary message, then what came after."""
    if previous is None:
        return list(messages)
    lead = TextBlock(f"{NOTE}\n\n<summary>\n{previous}\n</summary>")
    extra = FrozenDict({"contextwarden.compact_summary": True})
    if messages and messages[0].role == "user":
        first = Message("user", (lead, *messages[0].content), MessageMeta(extra=extra))
        return [first, *messages[1:]]
    return [Message("user", (lead,), MessageMeta(extra=extra)), *messages]


def versus_table(counter: TiktokenCounter) -> list[str]:
    summarizer = StructuredSummarizer()
    rows = [
        "| session | cut | pre-compact tokens | Claude Code: tokens | ours: tokens | "
        "user msgs CC / ours | files CC / ours | file names CC / ours | errors CC / ours |",
        "|---|---:|---:|---:|---:|---|---|---|---|",
    ]
    keys = ("users", "files", "names", "errors")
    totals: dict[str, list[int]] = {k: [0, 0, 0, 0] for k in keys}
    size = [0, 0]
    for path in sorted((TRANSCRIPTS / "claude-code").glob("*.jsonl")):
        history = load(path)
        assert history.source is not None
        messages = tuple(history.messages)
        previous: str | None = None
        start = 0
        compactions = [
            c
            for c in history.source.metadata.get("compactions", [])
            if c.get("summary") and c.get("messages_before")
        ]
        for n, compaction in enumerate(compactions, start=1):
            cut = compaction["messages_before"]
            said = messages[:cut]
            ours = summarizer.summarize(ladder_input(previous, messages[start:cut])).text
            theirs = _strip_claude_preamble(compaction["summary"]["text"])
            a, b = kept(theirs, said, counter), kept(ours, said, counter)
            cells = [
                _short(path.stem.split("__")[-1]),
                str(n),
                f"{compaction.get('pre_tokens') or 0:,}",
                f"{a.tokens:,}",
                f"{b.tokens:,}",
            ]
            cells += [_pair(getattr(a, k), getattr(b, k)) for k in keys]
            rows.append(_row(cells))
            for key in totals:
                x, y = getattr(a, key), getattr(b, key)
                totals[key] = [
                    totals[key][0] + x[0],
                    totals[key][1] + x[1],
                    totals[key][2] + y[0],
                    totals[key][3] + y[1],
                ]
            size = [size[0] + a.tokens, size[1] + b.tokens]
            previous, start = ours, cut
    rows.append(
        f"| **all** | | | {size[0]:,} | {size[1]:,} | "
        + " | ".join(_pair((t[0], t[1]), (t[2], t[3])) for t in totals.values())
        + " |"
    )
    return rows


def _strip_claude_preamble(text: str) -> str:
    """Claude Code's summary without its fixed opening and closing lines (not summary content)."""
    text = re.sub(r"^This session is being continued[^\n]*\n", "", text)
    return re.sub(
        r"\nIf you need specific details from before compaction.*\Z", "", text, flags=re.S
    )


def _pair(a: tuple[int, int], b: tuple[int, int]) -> str:
    return f"{_pct(a)} / {_pct(b)}"


def _pct(x: tuple[int, int]) -> str:
    return f"{x[0]}/{x[1]} ({x[0] / x[1]:.0%})" if x[1] else "n/a"


# ----------------------------------------------------------------------------- output
def sections(counter: TiktokenCounter) -> dict[str, str]:
    rows, (name, size, ms, facts_ms) = size_table(counter)
    summaries = "\n".join(
        [
            SECTION_SUMMARIES,
            "",
            f"Made by `{COMMAND}` ({sys.platform}, Python {sys.version.split()[0]}). The offline "
            "`StructuredSummarizer` (default budget: 10 % of a 200,000-token window = 20,000 "
            "tokens) on every transcript in `$CONTEXTWARDEN_DATA/transcripts/`; sizes in "
            "o200k_base tokens; time is one `summarize()` call (facts extraction included, "
            "loading excluded).",
            "",
            *rows,
            "",
            f"Time on the longest transcript ({name}, {size:,} tokens): **{ms:.0f} ms** per "
            f"summary, of which {facts_ms:.0f} ms is fact extraction (median of {RUNS} runs).",
        ]
    )
    versus = "\n".join(
        [
            SECTION_VERSUS,
            "",
            f"Made by `{COMMAND}`. At each point where Claude Code compacted one of these sessions "
            "(the messages before its `compact_boundary`), our offline summary is built as the "
            "ladder would have (the second compaction summarizes the first summary plus what came "
            "after) and compared with Claude Code's own LLM summary (its fixed opening and closing "
            "lines removed). Counted: typed user messages of the whole session so far, files a "
            "tool read or wrote (`file_path`/`notebook_path`/`filename` inputs; *file names* "
            "accepts the last two parts of the path, since Claude Code often writes paths "
            "relative to the project), and error strings "
            "(the failure line of each failed tool call as our fact extractor finds it) present "
            "verbatim (whitespace folded). Sizes in o200k_base tokens.",
            "",
            *versus_table(counter),
            "",
            "A shortened user message (head + tail, when it alone exceeds its share of the budget) "
            "does not count as verbatim. The error strings come from our own extractor, so ours "
            "keeps them unless the budget dropped them; the column measures what Claude Code's "
            "prose kept of them.",
        ]
    )
    return {SECTION_SUMMARIES: summaries, SECTION_VERSUS: versus}


def write(path: Path, new: dict[str, str]) -> None:
    """Replace our two sections in ``path`` (or append them), leaving every other section as is."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    for heading, body in new.items():
        pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.M | re.S)
        found = pattern.search(text)
        if found:
            text = text[: found.start()] + body.rstrip() + "\n\n" + text[found.end() :]
        else:
            text = text.rstrip() + "\n\n" + body.rstrip() + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, help="update these sections in a Markdown file")
    args: Any = parser.parse_args(argv)
    new = sections(TiktokenCounter("o200k_base"))
    if args.write:
        write(args.write, new)
    print("\n\n".join(new.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
