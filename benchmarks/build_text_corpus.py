"""Rebuild the machine-made kinds of tests/data/text/: minified assets, encoded data, command
output, logs and source code, each cut into a FIT part and a HELD_OUT part.

    python benchmarks/build_text_corpus.py            # writes tests/data/text/{fit,held_out}/

The sources are files of permissively licensed packages installed in the dev environment
(plotly MIT, litellm MIT, pyarrow Apache-2.0, cffi MIT, rich MIT), the output of ordinary
commands, and the system's package logs; tests/data/SOURCES.md lists each one. The prose kinds
(de, fr, ru, ar, hi, vi, ko) are excerpts of the react.dev translations (CC-BY-4.0), kept as
committed files and not rebuilt here. Two different regions (or files) feed the two parts, so a
held-out sample never shares text with a fitted one.
"""

from __future__ import annotations

import base64
import subprocess
import sysconfig
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "text"
SITE = Path(sysconfig.get_paths()["purelib"])
PART_CHARS = 8_000
"""Characters per kind and part: several 2,000-character samples each."""


def region(path: Path, start: int, size: int = PART_CHARS) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    return text[start : start + size]


def encoded(path: Path, start: int, encode: Callable[[bytes], str]) -> str:
    """``encode`` of the bytes of ``path`` from ``start``, wrapped at 76 characters as in MIME."""
    data = path.read_bytes()[start : start + PART_CHARS]
    text = encode(data)[:PART_CHARS]
    return "\n".join(text[i : i + 76] for i in range(0, len(text), 76)) + "\n"


def run(*commands: str) -> str:
    """Each command's output after a ``$ command`` line, as a terminal transcript shows it."""
    parts = []
    for command in commands:
        result = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
        parts.append(f"$ {command}\n{result.stdout}{result.stderr}")
    return "".join(parts)[:PART_CHARS]


def chunks_js() -> list[Path]:
    chunks = SITE / "litellm" / "proxy" / "_experimental" / "out" / "_next" / "static" / "chunks"
    return sorted(chunks.glob("*.js"), key=lambda p: p.stat().st_size)


def css_files() -> list[Path]:
    chunks = SITE / "litellm" / "proxy" / "_experimental" / "out" / "_next" / "static" / "chunks"
    return sorted(chunks.glob("*.css"), key=lambda p: -p.stat().st_size)


def kinds() -> dict[str, tuple[str, str]]:
    """kind -> (fit text, held-out text)."""
    plotly = SITE / "plotly" / "package_data" / "plotly.min.js"
    js = chunks_js()
    css = css_files()
    png = SITE / "litellm" / "proxy" / "logo.png"
    assets = SITE / "litellm" / "proxy" / "_experimental" / "out" / "assets"
    png2 = assets / "audit-logs-preview.png"
    arrow = SITE / "pyarrow" / "src" / "arrow" / "python"
    return {
        "minified_js": (region(plotly, 1_000_000), region(js[-1], 10_000)),
        "minified_css": (region(css[0], 0), region(css[1], 0)),
        "base64": (
            encoded(png, 0, lambda b: base64.b64encode(b).decode()),
            encoded(png2, 0, lambda b: base64.b64encode(b).decode()),
        ),
        "hex": (
            run(f"sha256sum {SITE}/rich/*.py", f"xxd -l 2048 {png}"),
            run(f"sha256sum {SITE}/httpx/*.py", f"xxd -l 2048 {png2}"),
        ),
        "shell": (
            run(f"ls -la {SITE}/rich", "df -h /", f"du -sh {SITE}/pandas {SITE}/numpy"),
            run(f"ls -la {SITE}/httpx", "pip list --disable-pip-version-check", "uname -srm"),
        ),
        "logs": (region(Path("/var/log/dpkg.log"), 0), region(Path("/var/log/apt/term.log"), 0)),
        "code_c": (region(SITE / "cffi" / "_cffi_include.h", 0), region(arrow / "common.h", 800)),
        "code_py": (
            region(SITE / "rich" / "console.py", 20_000),
            region(SITE / "rich" / "table.py", 5_000),
        ),
    }


def main() -> None:
    for kind, (fit, held_out) in kinds().items():
        for part, text in (("fit", fit), ("held_out", held_out)):
            path = OUT / part / f"{kind}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: {len(text):,} characters")


if __name__ == "__main__":
    main()
