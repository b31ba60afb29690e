"""Rebuild the prose kinds of tests/data/text/ from local clones of the react.dev translations.

    python benchmarks/build_prose_corpus.py MIRRORS [LANGUAGE ...]   # MIRRORS/<owner>+<repo>/repo

MIRRORS holds the repositories' git directories; LANGUAGEs (default: all) are the files rebuilt,
so a language added later is built without touching the others' files.

Pages come from src/content/learn/ and src/content/reference/ (all depths; content/docs/ in the
archived reactjs.org translations). Each language's pages are split by a hash of the page path:
pages of one half feed ``fit/``, pages of the other ``held_out/``, so no held-out sample shares a
page with a fitted one. Within a part, pages are taken in the order of a second hash of their path
(learn and reference mixed, no bias to the alphabet's start). From each page the prose is kept
(front matter, fenced code, lines that are only a JSX tag and the legacy site's English notice
dropped) and its first PAGE_CHARS characters taken, until the part has PART_CHARS; a language with
fewer translated pages gets what there is. Excerpts still in English (a translation in progress)
are skipped, judged by their share of English words (``untranslated``), and so are excerpts left
with merge-conflict markers. A language whose translation is too thin for a part (EXTRA) tops
its parts up from a second source, taken only after the first is used up: its repository's
last commit of the reactjs.org era, whose content/docs/ holds the legacy site's translated pages
(other documents than the react.dev pages, and split by the same hash of their path). Prints one
row of the tests/data/SOURCES.md prose table per language. Licence: CC-BY-4.0 (each repository's
README and LICENSE-DOCS.md, at both commits); SOURCES.md lists repository, commits and pages.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

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
"""Frequent English words, rarely words of the other languages (unlike "a", "in", "to")."""
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
    "hy": "stale-reactjs-org-translations/hy.reactjs.org",
    "km": "stale-reactjs-org-translations/km.reactjs.org",
    "si": "stale-reactjs-org-translations/si.reactjs.org",
    "ta": "stale-reactjs-org-translations/ta.reactjs.org",
    "ml": "stale-reactjs-org-translations/ml.reactjs.org",
    "gu": "stale-reactjs-org-translations/gu.reactjs.org",
    "ko": "reactjs/ko.react.dev",
    "ja": "reactjs/ja.react.dev",
    "zh": "reactjs/zh-hans.react.dev",
}
LEGACY_PAGES = re.compile(r"content/docs/[^/]+\.md")


class Source(NamedTuple):
    """Where a language's pages come from: a repository (cloned at MIRRORS/<owner>+<name>/repo),
    a commit of it, and which of its files are pages."""

    repository: str
    commit: str
    pages: re.Pattern[str]


EXTRA = {
    "de": Source("reactjs/de.react.dev", "7bf706fcfd128edf7faab3bfe1bf869283c59988", LEGACY_PAGES),
    "he": Source("reactjs/he.react.dev", "d1582c73b574ae786bf528c35bccba231c532b04", LEGACY_PAGES),
}
"""German and Hebrew react.dev have 7 and 2 translated pages of PAGE_CHARS+ characters (8,079 /
3,045 and 3,180 / 0 characters a part). Their commits are the first parent of the merge that moved
the reactjs.org site out ("merge-react-dev", April 2023): the last state of its translated docs."""
_FENCE = re.compile(r"^```.*?^```[^\n]*\n", re.M | re.S)
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
_NOTICE = re.compile(r"^> Try the new React documentation\.\n(?:>.*\n)*", re.M)
"""The notice reactjs.org put atop its pages in 2022, in English in most translations: the site's,
not the page's."""
_CONFLICT = re.compile(r"^<<<<<<< .*\n(?:.*\n)*?=======\n", re.M)
"""An unresolved merge (in 11 of Hebrew's legacy pages): two versions of a passage, one English."""
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
    text = _NOTICE.sub("", text)
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


def clone(mirrors: Path, source: Source) -> Path:
    return mirrors / source.repository.replace("/", "+") / "repo"


def queue(mirrors: Path, sources: list[Source]) -> list[tuple[Path, str, str]]:
    """(clone, commit, page) of every page, source after source, each in draw order. A path met
    in an earlier source is left out: under one path it is one document, whatever the commit."""
    seen: set[str] = set()
    pages: list[tuple[Path, str, str]] = []
    for source in sources:
        repo = clone(mirrors, source)
        tree = git(repo, "ls-tree", "-r", "--name-only", source.commit).split()
        new = sorted(
            (p for p in tree if source.pages.fullmatch(p) and p not in seen), key=draw_order
        )
        seen.update(new)
        pages += [(repo, source.commit, page) for page in new]
    return pages


def build(language: str, mirrors: Path, sources: list[Source]) -> dict[str, list[str]]:
    """part -> the pages taken; writes OUT/<part>/<language>.txt."""
    texts: dict[str, str] = {"fit": "", "held_out": ""}
    used: dict[str, list[str]] = {"fit": [], "held_out": []}
    for repo, commit, page in queue(mirrors, sources):
        part = part_of(page)
        if len(texts[part]) >= PART_CHARS:
            continue
        text = prose(git(repo, "show", f"{commit}:{page}"))
        if len(text) < PAGE_CHARS:
            continue
        piece = excerpt(text)
        if _CONFLICT.search(piece) or (language != "en" and untranslated(piece)):
            continue
        texts[part] += piece + "\n"
        used[part].append(page)
    for part, text in texts.items():
        (OUT / part / f"{language}.txt").write_text(text, encoding="utf-8")
    return used


def row(language: str, commits: list[tuple[str, str]], used: dict[str, list[str]]) -> str:
    """The language's row of the SOURCES.md prose table from its sources' (repository, commit):
    pages by path under content/, a second repository named after its commit."""
    sizes = " / ".join(
        f"{len((OUT / part / f'{language}.txt').read_text(encoding='utf-8')):,}" for part in used
    )
    lists = [
        ", ".join(sorted(re.sub(r"^(src/)?content/|\.md$", "", p) for p in used[part]))
        for part in used
    ]
    name = commits[0][0]
    shown = " + ".join(f"`{c[:12]}`" + ("" if r == name else f" ({r})") for r, c in commits)
    return f"| {language} | {name} | {shown} | {sizes} | {' | '.join(lists)} |"


def main() -> None:
    mirrors, chosen = Path(sys.argv[1]), sys.argv[2:] or list(LANGUAGES)
    unknown = sorted(set(chosen) - set(LANGUAGES))
    if unknown:
        sys.exit(f"unknown languages {unknown}: choose among {', '.join(LANGUAGES)}")
    for language in chosen:
        name = LANGUAGES[language]
        sources = [Source(name, "HEAD", PAGES)]
        if language in EXTRA:
            sources.append(EXTRA[language])
        used = build(language, mirrors, sources)
        commits = [
            (s.repository, git(clone(mirrors, s), "rev-parse", s.commit).strip()) for s in sources
        ]
        print(row(language, commits, used))


if __name__ == "__main__":
    main()
