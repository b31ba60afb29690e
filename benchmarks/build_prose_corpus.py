"""Rebuild the prose kinds of tests/data/text/ from local clones of the react.dev translations.

    python benchmarks/build_prose_corpus.py MIRRORS   # MIRRORS/<owner>+<repo>/repo: git dirs

Each language's translated pages are split by a hash of the page path: pages of one half feed
``fit/``, pages of the other ``held_out/``, so no held-out sample shares a page with a fitted
one. From each page the prose is kept (front matter, fenced code and lines that are only a JSX
tag dropped) and its first PAGE_CHARS characters taken, until the part has PART_CHARS. Pages still
in English (a translation in progress) are skipped. Licence: CC-BY-4.0 (each repository's
README and LICENSE-DOCS.md); tests/data/SOURCES.md lists repository, commit and pages.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "text"
PAGE_CHARS = 1_500
PART_CHARS = 6_000
ENGLISH_SHARE = 0.004
"""A page whose prose has more than this many " the " per character is not translated."""
LANGUAGES = {
    "en": "reactjs/react.dev",
    "de": "reactjs/de.react.dev",
    "fr": "reactjs/fr.react.dev",
    "es": "reactjs/es.react.dev",
    "pt": "reactjs/pt-br.react.dev",
    "it": "reactjs/it.react.dev",
    "pl": "reactjs/pl.react.dev",
    "tr": "reactjs/tr.react.dev",
    "id": "reactjs/id.react.dev",
    "vi": "reactjs/vi.react.dev",
    "ru": "reactjs/ru.react.dev",
    "uk": "reactjs/uk.react.dev",
    "ar": "reactjs/ar.react.dev",
    "fa": "reactjs/fa.react.dev",
    "he": "reactjs/he.react.dev",
    "hi": "reactjs/hi.react.dev",
    "bn": "reactjs/bn.react.dev",
    "th": "stale-reactjs-org-translations/th.reactjs.org",
    "el": "stale-reactjs-org-translations/el.reactjs.org",
    "ko": "reactjs/ko.react.dev",
    "ja": "reactjs/ja.react.dev",
    "zh": "reactjs/zh-hans.react.dev",
}
_FENCE = re.compile(r"^```.*?^```[^\n]*\n", re.M | re.S)
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z][^>]*>\s*$\n?", re.M)
_BLANKS = re.compile(r"\n{3,}")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def prose(markdown: str) -> str:
    text = _FRONT.sub("", markdown)
    text = _FENCE.sub("", text)
    text = _TAG_LINE.sub("", text)
    return _BLANKS.sub("\n\n", text).strip() + "\n"


def part_of(path: str) -> str:
    return "fit" if hashlib.sha256(path.encode()).digest()[0] % 2 else "held_out"


def excerpt(text: str) -> str:
    """The first PAGE_CHARS characters of ``text``, cut at a line end."""
    end = text.find("\n", PAGE_CHARS)
    return text if end < 0 else text[: end + 1]


def build(language: str, repo: Path) -> dict[str, list[str]]:
    """part -> the pages taken; writes OUT/<part>/<language>.txt."""
    pages = [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
        if re.match(r"(src/content/learn|content/docs)/[^/]+\.md$", p)
    ]
    texts: dict[str, str] = {"fit": "", "held_out": ""}
    used: dict[str, list[str]] = {"fit": [], "held_out": []}
    for page in pages:
        part = part_of(page)
        text = prose(git(repo, "show", f"HEAD:{page}"))
        if len(texts[part]) >= PART_CHARS or len(text) < PAGE_CHARS:
            continue
        if language != "en" and text.count(" the ") > ENGLISH_SHARE * len(text):
            continue
        texts[part] += excerpt(text) + "\n"
        used[part].append(page)
    for part, text in texts.items():
        (OUT / part / f"{language}.txt").write_text(text, encoding="utf-8")
    return used


def main() -> None:
    mirrors = Path(sys.argv[1])
    for language, name in LANGUAGES.items():
        repo = mirrors / name.replace("/", "+") / "repo"
        used = build(language, repo)
        commit = git(repo, "rev-parse", "HEAD").strip()
        for part, pages in used.items():
            names = ", ".join(Path(p).stem for p in pages)
            print(f"| {language} | {name} | {commit} | {part} | {names} |")


if __name__ == "__main__":
    main()
