"""Rebuild the command-documentation kinds of tests/data/text/ from a local clone of tldr-pages.

    python benchmarks/build_tldr_corpus.py MIRRORS [LANGUAGE ...]   # MIRRORS/tldr-pages+tldr/repo

tldr pages are short pages of command documentation: a line or two of prose, then commands
with placeholders (``cp {{pfad/zu/datei}}``), in 40 languages. They are a second genre beside the
react.dev prose: text an agent reads, prose in the language mixed with command lines, whose
placeholders are words of the language between slashes and braces. Pages are whole; each
language's pages are split between ``fit/`` and ``held_out/`` by the same hash of their path as
the prose (``build_prose_corpus.part_of``), taken in its draw order until a part has PART_CHARS,
and written as ``<language>.tldr.txt`` (kind: the language). Licence: CC-BY-4.0 (the repository's
LICENSE.md); tests/data/SOURCES.md lists the commit.
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_prose_corpus import OUT, draw_order, git, part_of

REPOSITORY = "tldr-pages/tldr"
PART_CHARS = 15_000
LANGUAGES = {
    "en": "pages",
    "de": "pages.de",
    "fr": "pages.fr",
    "es": "pages.es",
    "pt": "pages.pt_BR",
    "it": "pages.it",
    "pl": "pages.pl",
    "tr": "pages.tr",
    "id": "pages.id",
    "ru": "pages.ru",
    "uk": "pages.uk",
    "el": "pages.el",
    "ar": "pages.ar",
    "fa": "pages.fa",
    "hi": "pages.hi",
    "bn": "pages.bn",
    "ta": "pages.ta",
    "ml": "pages.ml",
    "th": "pages.th",
    "zh": "pages.zh",
    "ja": "pages.ja",
    "ko": "pages.ko",
}
"""The languages of the prose corpus that tldr-pages has (no Vietnamese, Hebrew, Armenian,
Khmer, Sinhala or Gujarati pages), by their folder."""


def build(repo: Path, language: str, tree: list[str]) -> dict[str, int]:
    """Writes OUT/<part>/<language>.tldr.txt; part -> pages taken."""
    folder = LANGUAGES[language] + "/"
    pages = sorted((p for p in tree if p.startswith(folder) and p.endswith(".md")), key=draw_order)
    texts: dict[str, list[str]] = {"fit": [], "held_out": []}
    sizes = dict.fromkeys(texts, 0)
    for page in pages:
        part = part_of(page.removeprefix(folder))  # one command falls on one side in every language
        if sizes[part] >= PART_CHARS:
            if all(size >= PART_CHARS for size in sizes.values()):
                break
            continue
        text = git(repo, "show", f"HEAD:{page}")
        texts[part].append(text)
        sizes[part] += len(text) + 1
    for part, chosen in texts.items():
        (OUT / part / f"{language}.tldr.txt").write_text("\n".join(chosen), encoding="utf-8")
    return {part: len(chosen) for part, chosen in texts.items()}


def main() -> None:
    mirrors, chosen = Path(sys.argv[1]), sys.argv[2:] or list(LANGUAGES)
    unknown = sorted(set(chosen) - set(LANGUAGES))
    if unknown:
        sys.exit(f"unknown languages {unknown}: choose among {', '.join(LANGUAGES)}")
    repo = mirrors / REPOSITORY.replace("/", "+") / "repo"
    commit = git(repo, "rev-parse", "HEAD").strip()
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    print(f"{REPOSITORY} at {commit}")
    for language in chosen:
        counts = build(repo, language, tree)
        print(f"| {language} | {LANGUAGES[language]} | {counts['fit']} | {counts['held_out']} |")


if __name__ == "__main__":
    main()
