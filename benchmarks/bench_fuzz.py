"""Fuzzing at scale: thousands of mutated real files and generated documents through every loader
(each format and ``auto``), and corrupted events through the stores' codec. Every failure must be
a ContextWardenError; anything else is counted as escaped and listed by where it was raised.

    python benchmarks/bench_fuzz.py                          # 3,000 + 3,000 cases
    python benchmarks/bench_fuzz.py --baseline-rev f21f9b7   # the same cases on older code too
    python benchmarks/bench_fuzz.py --write                  # also update docs/benchmarks.md

The cases come from the shared transcripts (trimmed copies, see ``tests/fuzzing.py``) and from
generated documents; a seed makes them reproducible. ``--max-seconds`` bounds each target's run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import TRANSCRIPTS  # noqa: E402
from tests.fuzzing import FuzzResult, fuzz_codec, fuzz_loaders, trimmed  # noqa: E402

BATCH = 250
"""Cases per batch; the time bound is checked between batches."""
DOC_SECTION = "## Fuzzing: loaders and the stores' codec"


def run(cases: int, seed: int, max_seconds: float) -> dict[str, dict[str, object]]:
    """Both targets' results as plain data (so a baseline run can send them back as JSON)."""
    from contextwarden.formats import load

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "sources").mkdir()
        sources = [trimmed(p, work / "sources") for p in TRANSCRIPTS]
        lines = [_encoded(load, p) for p in sources[:8]]
        events = [line for group in lines for line in group]
        loaders = _batched(lambda n, s: fuzz_loaders(sources, n, work, s), cases, seed, max_seconds)
        codec = _batched(lambda n, s: fuzz_codec(events, n, s), cases, seed, max_seconds)
    return {"loaders": loaders, "codec": codec}


def _encoded(load: object, path: Path) -> list[str]:
    from contextwarden.errors import ContextWardenError
    from contextwarden.stores.codec import encode

    try:
        history = load(path)  # type: ignore[operator]
    except ContextWardenError:
        return []
    return [encode(e) for e in history.log]


def _batched(fuzz: object, cases: int, seed: int, max_seconds: float) -> dict[str, object]:
    total = FuzzResult()
    started = time.perf_counter()
    batch = 0
    while total.cases < cases and time.perf_counter() - started < max_seconds:
        part: FuzzResult = fuzz(min(BATCH, cases - total.cases), seed * 10_000 + batch)  # type: ignore[operator]
        total.cases += part.cases
        total.loaded += part.loaded
        total.escaped += part.escaped
        for name, count in part.errors.items():
            total.errors[name] = total.errors.get(name, 0) + count
        batch += 1
    seconds = time.perf_counter() - started
    return {
        "cases": total.cases,
        "loaded": total.loaded,
        "errors": sum(total.errors.values()),
        "escaped": len(total.escaped),
        "where": Counter(e.split(": ", 1)[1].split(": ")[0] for e in total.escaped).most_common(8),
        "seconds": round(seconds, 2),
    }


def baseline(rev: str, args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """The same run on ``rev``'s ``src/`` (exported to a temporary directory), in a subprocess."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "src"],
        check=True,
        capture_output=True,
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        command = [sys.executable, __file__, "--json", "--cases", str(args.cases)]
        command += ["--seed", str(args.seed), "--max-seconds", str(args.max_seconds)]
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, dict[str, object]] = json.loads(out)
    return result


INTRO = (
    "Each case is a mutated trimmed real transcript (truncation, invalid UTF-8, deleted slices, "
    "1,200-deep nests, values swapped for wrong types, huge or 500-deep ones) or a generated "
    "document, loaded as one of the formats or `auto`; codec cases are corrupted store events. "
    "*loaded*: read without error; *clean errors*: a ContextWardenError; *escaped*: any other "
    "exception. The baseline is the same cases, same seed, on the older `src/` in the same run. "
    "*cases/s* is fuzzing throughput on a shared machine (it varies by tens of percent from run "
    "to run), not a speed claim."
)


def table(results: dict[str, dict[str, dict[str, object]]]) -> str:
    rows = [
        INTRO,
        "",
        "| code | target | cases | loaded | clean errors | escaped | cases/s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for code, targets in results.items():
        for target, r in targets.items():
            rate = float(r["cases"]) / max(float(r["seconds"]), 1e-9)  # type: ignore[arg-type]
            rows.append(
                f"| {code} | {target} | {r['cases']:,} | {r['loaded']:,} | {r['errors']:,} | "
                f"{r['escaped']:,} | {rate:,.0f} |"
            )
    notes = [
        f"- {code} {target}: `{where}` (x{count})"
        for code, targets in results.items()
        for target, r in targets.items()
        for where, count in r["where"]  # type: ignore[attr-defined]
    ]
    return "\n".join(
        rows + (["", "Escaped exceptions by kind and place:", *notes] if notes else [])
    )


def write_doc(text: str, command: str) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    doc = path.read_text(encoding="utf-8")
    section = f"{DOC_SECTION}\n\n`{command}`\n\n{text}\n"
    if DOC_SECTION in doc:
        start = doc.index(DOC_SECTION)
        end = doc.find("\n## ", start + len(DOC_SECTION))
        doc = doc[:start] + section + (doc[end + 1 :] if end >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + section
    path.write_text(doc, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=3_000, help="cases per target")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=300.0, help="bound per target")
    parser.add_argument("--baseline-rev", help="also run the cases on this git revision's src/")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    if not TRANSCRIPTS:
        sys.exit("no shared transcripts found (../shared/data/transcripts); see tests/conftest.py")
    if args.json:
        print(json.dumps(run(args.cases, args.seed, args.max_seconds)))
        return
    results: dict[str, dict[str, dict[str, object]]] = {}
    if args.baseline_rev:
        results[f"baseline {args.baseline_rev}"] = baseline(args.baseline_rev, args)
    results["this tree"] = run(args.cases, args.seed, args.max_seconds)
    text = table(results)
    print(text)
    if args.write:
        command = "python benchmarks/bench_fuzz.py " + " ".join(sys.argv[1:])
        write_doc(text, command.replace(" --write", "").strip())


if __name__ == "__main__":
    main()
