"""Rebuild the prose kinds of tests/data/text/ from local clones of the react.dev translations.

    python benchmarks/build_prose_corpus.py MIRRORS   # MIRRORS/<owner>+<repo>/repo: git dirs

Pages come from src/content/learn/ and src/content/reference/ (all depths; content/docs/ in the
archived reactjs.org translations). Each language's pages are split by a hash of the page path:
pages of one half feed ``fit/``, pages of the other ``held_out/``, so no held-out sample shares a
page with a fitted one. Within a part, pages are taken in the order of a second hash of their path
(learn and reference mixed, no bias to the alphabet's start). From each page the prose is kept
(front matter, fenced code and lines that are only a JSX tag dropped) and its first PAGE_CHARS
characters taken, until the part has PART_CHARS; a language with fewer translated pages gets what
there is. Excerpts still in English (a translation in progress) are skipped, judged by their share
of English words (``untranslated``). Prints one row of the tests/data/SOURCES.md prose table per
language. Licence: CC-BY-4.0 (each repository's README and LICENSE-DOCS.md); SOURCES.md lists
repository, commit and pages.
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
PART_CHARS = 15_000
ENGLISH_WORDS = 0.05
"""An excerpt with more than this share of its words in ENGLISH is (still) English. Of the words
of react.dev's own excerpts 15-33 % are among them, of translated excerpts mostly under 2 %, so an
excerpt is skipped once roughly a sixth to a third of it is English."""
ENGLISH = frozenset(
    "the and of is you that it for with this your can are be will when from how".split()
)
"""Frequent English words, rarely words of the other 21 languages (unlike "a", "in", "to")."""
PAGES = re.compile(r"(src/content/(learn|reference)/.+|content/docs/[^/]+)\.md")
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
_NOT_PROSE = re.compile(r"`[^`\n]*`|\]\([^)]*\)|\{/\*.*?\*/\}|<[^>\n]*>")
_WORD = re.compile(r"[^\W\d_]+")


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


def draw_order(path: str) -> bytes:
    """A page's place in the queue of its part: independent of part_of's byte."""
    return hashlib.sha256(b"order:" + path.encode()).digest()


def excerpt(text: str) -> str:
    """The first PAGE_CHARS characters of ``text``, cut at a line end."""
    end = text.find("\n", PAGE_CHARS)
    return text if end < 0 else text[: end + 1]


def untranslated(text: str) -> bool:
    """Whether ``text`` is still English, judged by its words outside code, links and tags."""
    words = _WORD.findall(_NOT_PROSE.sub(" ", text).lower())
    return sum(word in ENGLISH for word in words) > ENGLISH_WORDS * len(words)


def build(language: str, repo: Path) -> dict[str, list[str]]:
    """part -> the pages taken; writes OUT/<part>/<language>.txt."""
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    pages = sorted((p for p in tree if PAGES.fullmatch(p)), key=draw_order)
    texts: dict[str, str] = {"fit": "", "held_out": ""}
    used: dict[str, list[str]] = {"fit": [], "held_out": []}
    for page in pages:
        part = part_of(page)
        text = prose(git(repo, "show", f"HEAD:{page}"))
        if len(texts[part]) >= PART_CHARS or len(text) < PAGE_CHARS:
            continue
        piece = excerpt(text)
        if language != "en" and untranslated(piece):
            continue
        texts[part] += piece + "\n"
        used[part].append(page)
    for part, text in texts.items():
        (OUT / part / f"{language}.txt").write_text(text, encoding="utf-8")
    return used


def row(language: str, name: str, commit: str, used: dict[str, list[str]]) -> str:
    """The language's row of the SOURCES.md prose table: pages by path under content/."""
    sizes = " / ".join(
        f"{len((OUT / part / f'{language}.txt').read_text(encoding='utf-8')):,}" for part in used
    )
    lists = [
        ", ".join(sorted(re.sub(r"^(src/)?content/|\.md$", "", p) for p in used[part]))
        for part in used
    ]
    return f"| {language} | {name} | `{commit[:12]}` | {sizes} | {' | '.join(lists)} |"


def main() -> None:
    mirrors = Path(sys.argv[1])
    for language, name in LANGUAGES.items():
        repo = mirrors / name.replace("/", "+") / "repo"
        used = build(language, repo)
        print(row(language, name, git(repo, "rev-parse", "HEAD").strip(), used))


if __name__ == "__main__":
    main()
