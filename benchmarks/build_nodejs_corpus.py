"""Build a blind genre of tests/data/text/held_out/ from a local clone of the Node.js website.

    python benchmarks/build_nodejs_corpus.py MIRRORS    # MIRRORS/nodejs+nodejs.org/repo

The Node.js website (MIT) translates its pages (about, download, governance, end of life…) into
13 languages: Markdown and MDX files as an agent reads them, with front matter, JSX components,
tables, links and shell commands. Its English blog holds the release notes, lists of commits
(``[`1a2b3c4d5e`] - **deps**: update undici to 6.20.1 (Node.js GitHub Bot) [#55503]``), and its
i18n package the site's strings as JSON per locale.

The genre was first measured blind, all of it held out, once the weights of session 7 were
chosen (as the tldr pages were when they found the counter 5-13 % under): French came out 1.151
with o200k. Now, like the other genres, each file is split between ``fit/`` and ``held_out/`` by
``build_prose_corpus.part_of`` of its path inside the language folder (one page falls on the same
side in every language), taken in ``draw_order`` until a part has PART_CHARS: pages to
``<part>/<language>.nodejs.txt``, release notes to ``<part>/en.nodejs-releases.txt``, the locale
files to ``<part>/json.nodejs-locales.txt``. tests/data/SOURCES.md lists the commit.
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_prose_corpus import OUT, draw_order, git, part_of

REPOSITORY = "nodejs/nodejs.org"
PAGES = "apps/site/pages/"
RELEASES = "apps/site/pages/en/blog/release/"
LOCALES = "packages/i18n/src/locales/"
PART_CHARS = 15_000
LANGUAGES = {
    "ar": "ar",
    "en": "en",
    "es": "es",
    "fa": "fa",
    "fr": "fr",
    "id": "id",
    "ja": "ja",
    "ko": "ko",
    "pt": "pt-br",
    "ta": "ta",
    "tr": "tr",
    "uk": "uk",
    "zh": "zh-cn",
}
"""Our kind → the site's folder (Portuguese from pt-br, which has more pages than pt; Romanian
and Traditional Chinese left out: no kind of ours, and zh is Simplified)."""
JSON_LOCALES = ("ar", "es", "fr", "id", "ja", "ko", "pt-br", "ta", "tr", "uk", "zh-cn")


def take(repo: Path, paths: list[str], root: str) -> dict[str, list[str]]:
    """Part -> the files of ``paths`` on that side (``part_of`` their path below ``root``), in
    draw order until PART_CHARS characters each."""
    texts: dict[str, list[str]] = {"fit": [], "held_out": []}
    sizes = dict.fromkeys(texts, 0)
    for path in sorted(paths, key=draw_order):
        part = part_of(path.removeprefix(root))
        if sizes[part] >= PART_CHARS:
            continue
        text = git(repo, "show", f"HEAD:{path}")
        texts[part].append(text)
        sizes[part] += len(text) + 1
    return texts


def write(name: str, texts: dict[str, list[str]]) -> str:
    for part, chosen in texts.items():
        (OUT / part / name).write_text("\n".join(chosen), encoding="utf-8")
    return f"{len(texts['fit'])} fit, {len(texts['held_out'])} held out"


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[2].strip())
    repo = Path(sys.argv[1]) / REPOSITORY.replace("/", "+") / "repo"
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    print(f"{REPOSITORY} at {git(repo, 'rev-parse', 'HEAD').strip()}")
    for kind, folder in LANGUAGES.items():
        prefix = f"{PAGES}{folder}/"
        pages = [
            p
            for p in tree
            if p.startswith(prefix)
            and p.endswith((".md", ".mdx"))
            and not p.startswith(f"{prefix}blog/")
        ]
        print(f"| {kind} | {folder} | {write(f'{kind}.nodejs.txt', take(repo, pages, prefix))} |")
    releases = [p for p in tree if p.startswith(RELEASES) and p.endswith(".md")]
    taken = write("en.nodejs-releases.txt", take(repo, releases, RELEASES))
    print(f"| en | release notes | {taken} |")
    locales = [f"{LOCALES}{name}.json" for name in JSON_LOCALES]
    taken = write("json.nodejs-locales.txt", take(repo, locales, LOCALES))
    print(f"| json | locales {', '.join(JSON_LOCALES)} | {taken} |")


if __name__ == "__main__":
    main()
