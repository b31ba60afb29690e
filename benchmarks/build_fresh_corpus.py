"""Rebuild the fresh sessions ``bench_fresh`` replays, from local clones of their repositories.

    python benchmarks/build_fresh_corpus.py MIRRORS OUT   # MIRRORS/<owner>+<name>/repo (git dirs)

Each session is a file of a public, permissively licensed repository at a recorded commit (the
Claude Code ones on the ``entire/checkpoints/v1`` branch the Entire CLI pushes, the aider one
the commit before the chat log was deleted), copied byte for byte and checked against its
SHA-256. They stay outside this repository (they hold people's paths and, in one case, an
e-mail address in a log line); the probes written for them are ``benchmarks/fresh_probes/``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple


class Source(NamedTuple):
    repository: str
    commit: str
    path: str
    out: str
    sha256: str


FSM1 = ("FSM1/cipher-box", "e227f1183b594fa6bd5dbe58c75272434067e89b")  # MIT
# Apache-2.0
PACKMIND = ("PackmindHub/context-evaluator", "63679d4764ce74bb41f8e5794f6183d43ea9ee88")
MOZGOSLAV = ("AlexShchuka/mozgoslav", "1f66bc9d44c5950cada7054a9581d7058caaac66")  # MIT
PM = PACKMIND
CHECKPOINTS = (
    (FSM1, "29/4ec7fb98f3/0", "f2a2c50b82088b4d453ad8fd8f546481b6b4db47def55f1ce4da4198c6d8b7c9"),
    (FSM1, "49/85d640fadb/3", "5af947d617277a186787ccfaf9576deb899cac10301588db85eed31fe519a0e0"),
    (FSM1, "b4/b33d460b93/0", "5bdbd05e8ebe20a880cd811a85efa33e58f08ef249b15a4a56cf12b482b8ebe5"),
    (FSM1, "56/4c4834ac78/1", "9c11e3272617a536502a4928107b0f71e31b7e9b6fb8403b25cf1c3950beaff6"),
    (FSM1, "ce/af0d869e9a/6", "93a98fd947de551927efd6677ac868b25faa46660f573800c21561a1d45e489e"),
    (PM, "09/597b5bde42/0", "cf18fc42eefe92b3279cb39bbcf01dbddabcb09886a643a0cf91ae10344d7ea9"),
    (PM, "18/8f64dd752f/1", "f9aea97c41d1b5e04b7a3df6b0cf1af6fc0491c796df8ee8ac73a766af37885b"),
    (PM, "5f/3390ed3fa8/1", "23f7c31630227227f5939d12248c550888350a9b3d968ef3f2500a5ffd18fd36"),
    (PM, "7b/904be9fc93/0", "56dde4228a8f1253cdddd9efd870fecfb942d11551f604ed803efcc759174251"),
    (PM, "b5/ef23574320/0", "e8be48dad6f93e44a6c5a13594ed58dc2497364dcf04c2b07eb324e51ae58ae7"),
    (PM, "d7/20ae45fb41/0", "d2879859b01fccf13f7aae0c011b6a340e8d8a9bf13b7371c6c13cb4c6559b8b"),
)
SOURCES = (
    *(
        Source(
            repo,
            commit,
            f"{checkpoint}/full.jsonl",
            f"claude-code/{repo.replace('/', '__')}__{checkpoint.replace('/', '-')}.jsonl",
            sha,
        )
        for (repo, commit), checkpoint, sha in CHECKPOINTS
    ),
    Source(
        *MOZGOSLAV,
        ".aider.chat.history.md",
        "aider/AlexShchuka+mozgoslav.md",
        "86ad776a0be8f086cffd4b500c7924da9762088aa99f9cf0d6903d6e1d2578f9",
    ),
)


def build(mirrors: Path, out: Path) -> None:
    for source in SOURCES:
        git_dir = mirrors / source.repository.replace("/", "+") / "repo"
        blob = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{source.commit}:{source.path}"],
            check=True,
            capture_output=True,
        ).stdout
        digest = hashlib.sha256(blob).hexdigest()
        if digest != source.sha256:
            raise SystemExit(f"{source.repository}:{source.path}: sha256 {digest}, expected "
                             f"{source.sha256}")  # fmt: skip
        target = out / source.out
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        print(f"{target} ({len(blob):,} bytes)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    build(Path(sys.argv[1]), Path(sys.argv[2]))
