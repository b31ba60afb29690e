"""Size of the HTML replay report, whole and by part, for the demo and for real sessions.

Each report is written by the CLI exactly as a user would (`contextwarden demo --report`,
`contextwarden replay SESSION --window W --pricing MODEL --report`), then split into its parts:
the charts (SVG and their data), the page's script, the compactions' summaries and the rest
(tables, previews, styles). Baseline, same run: the plotly.js bundle the report used to inline,
when the plotly package happens to be installed (the report no longer needs it).

    python benchmarks/bench_report_size.py [--window 40000 20000] [--pricing claude-sonnet-4-5]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from contextwarden.cli import main

DATA = (
    Path(
        os.environ.get("CONTEXTWARDEN_DATA")
        or Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    / "transcripts"
)
"""The corpus: ``$CONTEXTWARDEN_DATA/transcripts`` (as ``.ci/run`` sets it), else ../shared/data."""
LARGEST = 3
"""Sessions measured: this many of the corpus's largest files."""
SUFFIXES = {".jsonl", ".json", ".traj"}
MB = 1_000_000
PARTS = {
    "charts": r'<figure class="chart".*?</figure>',
    "script": r"<script>.*?</script>",
    "summaries": r'<pre class="summary">.*?</pre>',
}


def parts(page: bytes) -> dict[str, int]:
    """Bytes of each part of the page; ``rest`` is everything else."""
    text = page.decode("utf-8")
    sizes = {
        name: sum(len(m.encode()) for m in re.findall(pattern, text, re.S))
        for name, pattern in PARTS.items()
    }
    return {"total": len(page), **sizes, "rest": len(page) - sum(sizes.values())}


def report(argv: Sequence[str], path: Path) -> bytes:
    """Run the CLI with ``argv`` (its output swallowed); the report it wrote."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main([*argv, "--report", str(path)])
    return path.read_bytes()


def plotly_bundle() -> int | None:
    """Bytes of plotly.js as the plotly package ships it (what the report inlined before)."""
    try:
        offline = importlib.import_module("plotly.offline")
    except ImportError:
        return None
    return len(str(offline.get_plotlyjs()).encode())


def largest(count: int) -> list[Path]:
    files = [p for p in DATA.rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    return sorted(files, key=lambda p: p.stat().st_size, reverse=True)[:count]


def row(label: str, sizes: dict[str, int]) -> str:
    cells = " | ".join(f"{sizes[k] / MB:.3f}" for k in ("total", *PARTS, "rest"))
    return f"| {label} | {cells} |"


def run(windows: Sequence[int], pricing: str) -> None:
    print("| report | MB | charts | script | summaries | rest |")
    print("|---|--:|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        page = report(["demo", "--json"], Path(tmp) / "demo.html")
        print(row("`contextwarden demo`", parts(page)))
        for session in largest(LARGEST):
            for window in windows:
                argv = ["replay", str(session), "--window", str(window), "--pricing", pricing]
                page = report([*argv, "--json"], Path(tmp) / "replay.html")
                print(row(f"{session.name}, window {window:,}", parts(page)))
    bundle = plotly_bundle()
    inlined = f"{bundle / MB:.3f} MB" if bundle else "not measured (plotly not installed)"
    print(f"\nBaseline: plotly.js from the plotly package (the report inlined it): {inlined}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--window", type=int, nargs="+", default=[40_000, 20_000])
    parser.add_argument("--pricing", default="claude-sonnet-4-5")
    args = parser.parse_args()
    run(args.window, args.pricing)


if __name__ == "__main__":
    cli()
