"""Rebuild the fresh sessions ``bench_fresh`` replays, from local clones of their repositories.

    python benchmarks/build_fresh_corpus.py MIRRORS OUT            # the first set
    python benchmarks/build_fresh_corpus.py --set 3 MIRRORS OUT    # the third, blind set
    python benchmarks/build_fresh_corpus.py --set 4 MIRRORS OUT    # the fourth, blind set
    python benchmarks/build_fresh_corpus.py --set 5 MIRRORS OUT    # the fifth, blind set
    python benchmarks/build_fresh_corpus.py --set 6 MIRRORS OUT    # the sixth, blind set
    python benchmarks/build_fresh_corpus.py --set 7 MIRRORS OUT    # the seventh, blind set
    python benchmarks/build_fresh_corpus.py --set 8 MIRRORS OUT    # the eighth, blind set
    python benchmarks/build_fresh_corpus.py --set 9 MIRRORS OUT    # the ninth, blind set
    python benchmarks/build_fresh_corpus.py --set 10 MIRRORS OUT   # the tenth, blind set
    python benchmarks/build_fresh_corpus.py --set 11 MIRRORS OUT   # the eleventh, blind set
    python benchmarks/build_fresh_corpus.py --set 12 MIRRORS OUT   # the twelfth, blind set
    python benchmarks/build_fresh_corpus.py --set 13 MIRRORS OUT   # the thirteenth, blind set
    python benchmarks/build_fresh_corpus.py --set 14 MIRRORS OUT   # the fourteenth, blind set
    python benchmarks/build_fresh_corpus.py --set 15 MIRRORS OUT   # the fifteenth, blind set
    python benchmarks/build_fresh_corpus.py --set 16 MIRRORS OUT   # the sixteenth, blind set
    python benchmarks/build_fresh_corpus.py --set 17 MIRRORS OUT   # the seventeenth, blind set
    python benchmarks/build_fresh_corpus.py --set 18 MIRRORS OUT   # the eighteenth, blind set
    python benchmarks/build_fresh_corpus.py --set 19 MIRRORS OUT   # the nineteenth, blind set
    python benchmarks/build_fresh_corpus.py --set 20 MIRRORS OUT   # the twentieth, blind set
    python benchmarks/build_fresh_corpus.py --set 21 MIRRORS OUT   # the twenty-first, blind set
    python benchmarks/build_fresh_corpus.py --set 22 MIRRORS OUT   # the twenty-second, blind set
    python benchmarks/build_fresh_corpus.py --set 23 MIRRORS OUT   # the twenty-third, blind set
    python benchmarks/build_fresh_corpus.py --set 24 MIRRORS OUT   # the twenty-fourth, blind set
    python benchmarks/build_fresh_corpus.py --set 25 MIRRORS OUT   # the twenty-fifth, a study set
    python benchmarks/build_fresh_corpus.py --set 26 MIRRORS OUT   # the twenty-sixth, blind set
    python benchmarks/build_fresh_corpus.py --set 27 MIRRORS OUT   # the twenty-seventh, blind set
    python benchmarks/build_fresh_corpus.py --set 28 MIRRORS OUT   # the twenty-eighth, a study set
    python benchmarks/build_fresh_corpus.py --set 29 MIRRORS OUT   # the twenty-ninth, blind set
    python benchmarks/build_fresh_corpus.py --set 30 MIRRORS OUT   # the thirtieth, a study set
    python benchmarks/build_fresh_corpus.py --set 31 MIRRORS OUT   # the thirty-first, blind set
    python benchmarks/build_fresh_corpus.py --set 32 MIRRORS OUT   # the thirty-second, a study set
    python benchmarks/build_fresh_corpus.py --set 33 MIRRORS OUT   # the thirty-third, blind set
    python benchmarks/build_fresh_corpus.py --set 34 MIRRORS OUT   # the thirty-fourth, a study set
    python benchmarks/build_fresh_corpus.py --set 35 MIRRORS OUT   # the thirty-fifth, blind set
    python benchmarks/build_fresh_corpus.py --set 36 MIRRORS OUT   # the thirty-sixth, blind set
    python benchmarks/build_fresh_corpus.py --set 37 MIRRORS OUT   # the thirty-seventh, blind set
    python benchmarks/build_fresh_corpus.py --set 38 MIRRORS OUT   # the thirty-eighth, blind set
    python benchmarks/build_fresh_corpus.py --set 39 MIRRORS OUT   # the thirty-ninth, study set
    python benchmarks/build_fresh_corpus.py --set 40 MIRRORS OUT   # the fortieth, blind set
    python benchmarks/build_fresh_corpus.py --set 41 MIRRORS OUT   # the forty-first, study set
    python benchmarks/build_fresh_corpus.py --set 42 MIRRORS OUT   # the forty-second, blind set
    # MIRRORS/<owner>+<name>/repo are git dirs (bare clones or fetched snapshots)

Each session is a file of a public, permissively licensed repository at a recorded commit (the
Claude Code, Codex and Copilot CLI ones on the checkpoint refs the Entire CLI pushes or, in set 6,
in the ``.entire/metadata`` folder it committed, the aider one the commit before the chat log was
deleted, the SpecStory ones of sets 7 and 9 in the ``.specstory/history`` folder the SpecStory
extension or CLI writes, the mini-swe-agent trajectories of set 10 in the run folders two forks
of mini-swe-agent committed, the SpecStory ones of set 11 in ``.specstory/history`` again, from
Cursor in 2025 and 2026 layouts, and those of set 12 there too, written by the SpecStory CLI and
extension from Claude Code, VS Code Copilot and the Cursor IDE, set 13's Gemini CLI session on
an Entire checkpoint ref again, those of set 14 on the checkpoint branch of an infrastructure and
data project, set 15's Claude Code, Codex and OpenCode sessions of CI, release,
developer-environment and front-end work on Entire checkpoint branches, and set 16's Cursor sessions
SpecStory saved into ``.specstory/history`` on two pull-request refs, set 17's Gemini CLI
sessions its users committed as ``/chat share`` Markdown exports or a ``/chat save`` checkpoint,
set 18's Cursor sessions of a task-workflow CLI in ``.specstory/history`` and a Claude Code
session on a checkpoint ref of a research project, set 19's Codex, Claude Code and Copilot CLI
sessions of release CI, a prompt engine's cache, an HPC monitor's resampler, server operations and
a Portuguese modularisation plan on Entire checkpoint branches, and set 20's Copilot CLI, OpenCode
and Codex sessions of a sync design, a footer widget, a VS Code tree split, a hook runtime port and
a playbook-driven read model on Entire checkpoint branches, and set 21's Claude Code sessions of a
book manuscript written in Japanese and of a CLI's roadmap work on Entire checkpoint branches, and
set 22's Codex and OpenCode sessions of an eval framework's questions, results layout and checkpoint
settings, a webview's tool cards and a deploy tool's refocus on Entire checkpoint branches, and
set 23's Claude Code sessions of failing tests, a sandbox git-auth fix, an upload race, a starved
thread pool and a lint and type-check clean-up on Entire checkpoint branches, and set 24's Codex
and OpenCode sessions of a config rename merged through a rebase, a session-selection contract, a
legacy-flow removal and a dashboard prototype on Entire checkpoint branches, with two native Gemini
CLI sessions of desktop administration its user committed, and set 25's failure-rich Claude Code
sessions of an end-to-end pipeline run and an LLM pipeline node on an Entire checkpoint branch,
with a native Gemini CLI session of router and DNS-blocker administration, and set 26's OpenCode
sessions of a hosted-auth slice and a checkpoint-data survey on an Entire checkpoint branch, with
two native Gemini CLI sessions of Windows CPU tuning and Linux suspend and launcher troubleshooting
its user committed, and set 27's two aider chats of a Next.js compliance front end and its API
proxy in one ``.aider.chat.history.md``, each probe file naming its chat as ``#<index>``, and
set 28's aider chats of a paper-retrieval script, its LLM extraction and a
reference checker, with one of an AI band's motor planning, in the ``.aider.chat.history.md`` two
forks of aider committed: each file is copied whole, and the probe file's ``#N`` picks its chat),
and set 29's Codex desktop sessions of CI failures, a release task and a branch guard on an
Entire checkpoint branch, with a Claude Code session in Turkish of a NuGet release moved to
Trusted Publishing on an Entire checkpoint ref, set 30's Codex desktop sessions in code mode
(JavaScript cells around ``tools.exec_command``) of CI failures, a failed release, a merge
conflict and a Fedora packaging failure on an Entire checkpoint branch, and set 31's Codex
desktop sessions of two discussion-reported bugs fixed through pull requests on an Entire
checkpoint branch, with Claude Code sessions of Renovate and GitHub Actions design work for a
Docker image on Entire checkpoint refs, and set 34's SpecStory histories of a Cursor session on
a VS Code agent extension's profile bug, a Copilot session on a Business Central migration
extension and a Cursor session on a Next.js report page, set 35's Claude Code sessions of a
Rust project's failing CI (a coverage ratchet, open PRs triaged, a sub-agent swarm fixing them and
an auto-merge script's jq errors) on an Entire checkpoint branch, and set 36's SpecStory histories
of a VS Code Copilot session on a manga reader's Electron front end, a Codex CLI session on an
e-mail rewriting companion's model discovery and a Cursor session on a municipal register's .NET
and Blazor workflows, and set 37's SpecStory histories of a Claude Code session on a Minecraft
mod checked against its description, a Cursor session on a desktop app's failing Windows
installer and auto-update and a Cursor session reviewing an authentication service, and set 38's
Claude Code sessions of a local-first Markdown knowledge-base agent (a Python CLI) on Entire
checkpoint refs, and set 40's Claude Code session of a service's release, deployment and
discovery documents on an Entire checkpoint ref, with a SpecStory history of a Cursor session in
Russian tutoring a course on AI agents, each copied byte for byte and checked against its SHA-256.
They stay outside this repository (they hold people's paths and, in some repositories, an e-mail
address in a log line or in the paths); the probes written for them are
``benchmarks/fresh_probes/`` (set 1), ``benchmarks/fresh_probes3/`` (set 3),
``benchmarks/fresh_probes4/`` (set 4), ``benchmarks/fresh_probes5/`` (set 5),
``benchmarks/fresh_probes6/`` (set 6), ``benchmarks/fresh_probes7/`` (set 7),
``benchmarks/fresh_probes8/`` (set 8), ``benchmarks/fresh_probes9/`` (set 9),
``benchmarks/fresh_probes10/`` (set 10), ``benchmarks/fresh_probes11/`` (set 11),
``benchmarks/fresh_probes12/`` (set 12), ``benchmarks/fresh_probes13/`` (set 13),
``benchmarks/fresh_probes14/`` (set 14), ``benchmarks/fresh_probes15/`` (set 15),
``benchmarks/fresh_probes16/`` (set 16), ``benchmarks/fresh_probes17/`` (set 17),
``benchmarks/fresh_probes18/`` (set 18), ``benchmarks/fresh_probes19/`` (set 19),
``benchmarks/fresh_probes20/`` (set 20), ``benchmarks/fresh_probes21/`` (set 21),
``benchmarks/fresh_probes22/`` (set 22), ``benchmarks/fresh_probes23/`` (set 23),
``benchmarks/fresh_probes24/`` (set 24), ``benchmarks/fresh_probes25/`` (set 25, a study
set), ``benchmarks/fresh_probes26/`` (set 26), ``benchmarks/fresh_probes27/`` (set 27),
``benchmarks/fresh_probes28/`` (set 28, a study set), ``benchmarks/fresh_probes29/`` (set 29),
``benchmarks/fresh_probes30/`` (set 30, a study set), ``benchmarks/fresh_probes31/`` (set 31),
``benchmarks/fresh_probes32/`` (set 32, a study set), ``benchmarks/fresh_probes33/`` (set 33),
``benchmarks/fresh_probes34/`` (set 34, a study set), ``benchmarks/fresh_probes35/`` (set 35),
``benchmarks/fresh_probes36/`` (set 36), ``benchmarks/fresh_probes37/`` (set 37),
``benchmarks/fresh_probes38/`` (set 38),
``benchmarks/fresh_probes39/`` (set 39, a study set) and ``benchmarks/fresh_probes40/`` (set 40);
the README of each says where its sessions come from.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
from pathlib import Path
from typing import NamedTuple


class Source(NamedTuple):
    repository: str
    commit: str
    path: str
    out: str
    sha256: str


def checkpoint(
    repository: str, commit: str, folder: str, sha256: str, agent: str = "claude-code"
) -> Source:
    """A session the Entire CLI pushed: ``<folder>/full.jsonl`` on its checkpoint branch, written
    as ``<agent>/<owner>__<name>__<folder with dashes>.jsonl``."""
    name = f"{repository.replace('/', '__')}__{folder.replace('/', '-')}"
    return Source(repository, commit, f"{folder}/full.jsonl", f"{agent}/{name}.jsonl", sha256)


def checkpoint_ref(
    repository: str,
    commit: str,
    ref: str,
    sha256: str,
    agent: str = "claude-code",
    session: str = "-0",
) -> Source:
    """A session on a checkpoint ref the Entire CLI pushed (``refs/entire/checkpoints/<ref>``),
    read at the ref's tip: its ``0/full.jsonl``, written as
    ``<agent>/<owner>__<name>__<ref with dashes><session>.jsonl``."""
    name = f"{repository.replace('/', '__')}__{ref.replace('/', '-')}{session}"
    return Source(repository, commit, "0/full.jsonl", f"{agent}/{name}.jsonl", sha256)


def specstory(repository: str, commit: str, stem: str, sha256: str, folder: str = "") -> Source:
    """A Markdown file SpecStory saved: ``<folder>.specstory/history/<stem>.md``, written as
    ``specstory/<owner>__<name>__<stem>.md``."""
    out = f"specstory/{repository.replace('/', '__')}__{stem}.md"
    return Source(repository, commit, f"{folder}.specstory/history/{stem}.md", out, sha256)


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
SET1 = (
    *(checkpoint(repo, commit, folder, sha) for (repo, commit), folder, sha in CHECKPOINTS),
    Source(
        *MOZGOSLAV,
        ".aider.chat.history.md",
        "aider/AlexShchuka+mozgoslav.md",
        "86ad776a0be8f086cffd4b500c7924da9762088aa99f9cf0d6903d6e1d2578f9",
    ),
)

# Set 3 (issue #26's third, blind set): each Codex session is the newest full.jsonl of its own
# checkpoint ref (refs/entire/checkpoints/<id>) in chikachow/cyspbot (MIT); the Claude Code one
# is on stat-guy/imessage-mail's (MIT) entire/checkpoints/v1 branch.
CYSPBOT = "chikachow/cyspbot"
CYSPBOT_CHECKPOINTS = (
    ("08/40a5c20d5108", "0938c271235295c910d3b21337cd2f1bf9c940ec",
     "866809be5aa43d76e52ef8cf79c647f037fab79cda7e2f4ae38b7f5eeb7b0067"),
    ("08/1cbadb653608", "e0c03cc15a4f774c160c10170795db1f72de9d3e",
     "07163401be4413cb1cc5a576c703d1e99b536465bf9e2b477ed0560cec08225e"),
    ("2c/ee170305c92c", "46f238558eb193f6ed171c6ebe125834f2340806",
     "e53a53ff5dc4036fd10e165c5b9277c2260f424909f1d279a8b521694e8af732"),
    ("4d/22222ed5984d", "779a53cef43471f113c5a16d938f052263006034",
     "c64fa927c9e6e6f0a6297974ab499ae99cc7b7e923de44d454c157d30562d1cd"),
    ("2a/49ea1f60292a", "36f589d27f59340f65c4f762c6e5b7ab10d73097",
     "c8c0ee78b56dac0cf6a180e66e5d47e8fdca8ce8cb217f1dacf64073edc819a9"),
    ("0d/ea03077ace0d", "f12c1daf251fa260361212bb62c7f57241cab9d2",
     "3ae19c5b120fb2c2ae127c4b1c1cd9e0b1b4f4cf02b916873d7302a7cdf91c99"),
    ("38/f34522128a38", "3a7abf1d292e2394ec9e236ee60aaef01d6114be",
     "e1588b7082ddddf318dc012204dc69bd43ec0a713f0fbdf318e9b4b67f55b2f5"),
)  # fmt: skip
SET3 = (
    *(
        Source(
            CYSPBOT,
            commit,
            "0/full.jsonl",
            f"codex/chikachow__cyspbot__{checkpoint.replace('/', '-')}.jsonl",
            sha,
        )
        for checkpoint, commit, sha in CYSPBOT_CHECKPOINTS
    ),
    Source(
        "stat-guy/imessage-mail",
        "caf82d9179a43ac9662afe7c39cc8132490adf37",
        "57/e8437ebd48/0/full.jsonl",
        "claude-code/stat-guy__imessage-mail__57-e8437ebd48-0.jsonl",
        "158e7b127d83da8bd27bae681d7939c5df0ab20b6084d4c47dbba5afc03fb994",
    ),
)

# Set 4 (issue #26's fourth, blind set): other agents and repositories than set 3's. The Claude
# Code sessions are on JanDeDobbeleer/oh-my-posh's (MIT, its COPYING) entire/checkpoints/v1
# branch, one checkpoint per session; the Copilot CLI one is on a checkpoint ref of
# JeffreyCA/azure-dev (MIT, a fork of Azure/azure-dev).
OH_MY_POSH = ("JanDeDobbeleer/oh-my-posh", "0d1116c02814bec7231dbe3c3b9661106418a724")
OH_MY_POSH_CHECKPOINTS = (
    ("d8/4718082c10/0", "b315064dd0f5ac84ec2dbf6ecff7eb539c27d75cfe7f4b202552df83f86060f1"),
    ("f1/cc7fb29063/0", "6377bbecac356c6fdd3c28ed9508c3857a79b63bedbbcec1c31525f3cc34423e"),
    ("b9/2894c37c38/0", "739479b390e0592b6abac50d1aa9de5baaa4b6db88b0f360039c2da5ef71f575"),
    ("85/522027570b/1", "fb8a85e4c1d3c39fb6a0d8191b041842eb4bc6ec565ed29c4643d3d3894f0548"),
    ("1c/fa5e2d5f1f/0", "825e410497bf88e554181e5cc94a2753081bccfb9e95f0b2dca1b2ec4345d872"),
    ("b4/e8927b833b/0", "68b2f7f806bea6c60184a692a297707603ec000431aafb528a3cd7b0654b64bf"),
    ("11/6e27a41b09/0", "d1ad8cf03c29a759cff21a044d8d51cab77d82f4a0e572c4a2a7a701f6bddc7b"),
)
SET4 = (
    *(checkpoint(*OH_MY_POSH, folder, sha) for folder, sha in OH_MY_POSH_CHECKPOINTS),
    checkpoint_ref(
        "JeffreyCA/azure-dev",
        "091d53d91dc455da47b6b9179ad1ad25368b9288",
        "7E/01KXYAY6X6AX6YHS3EQP27BY7E",
        "7bad78bce86dee5df8262b3a0a318c8bd6b9161df42cbd2097a4d986f539b5f7",
        "copilot",
    ),
)
# Set 5 (issue #26's fifth, blind set): repositories and developers none of the earlier sets used,
# each session one checkpoint of the entire/checkpoints/v1 branch the Entire CLI pushes, read at
# that branch's tip commit. All four repositories are MIT (each its LICENSE); the tij sessions are
# in Japanese.
SET5_CHECKPOINTS = (
    ("nakamura-shuta/tij", "b073c1b2556a9d57b7bd2ff6a24e41463bffc053", "3c/79e00521d9/0",
     "ba198f4d35556ece1e1cc90fd175f67ee0c917bcd24dce34b8d853f91781dbd2"),
    ("nakamura-shuta/tij", "b073c1b2556a9d57b7bd2ff6a24e41463bffc053", "68/b88a394690/1",
     "03f0f9f89cc7f1ef84736345b7deb0139753cea8187aa0b84c5ffec2a5724898"),
    ("punt-labs/langlearn-tts", "59919ba6544982052a51991c77804b193d8f1b72", "85/697a5a86cc/0",
     "d8275c5ee876e4572d8602d084c2e97bd8e78fd0d33b1c981ed18ff61976d1a7"),
    ("punt-labs/langlearn-tts", "59919ba6544982052a51991c77804b193d8f1b72", "af/4be3b86e14/0",
     "84ca3d15a1b14814bd671b9a734be7e931d1a24c6c7452f74f4edee2a47c4eda"),
    ("ClusterCockpit/cc-backend", "aba3a344129b2d25f6749bdf5c01692d9cf3d1c3", "3a/40b75edd68/1",
     "ef3b13c0b51b67706a93ffe617a94486f86a364c1f279f7dd234bb5c6145c80a"),
    ("ClusterCockpit/cc-backend", "aba3a344129b2d25f6749bdf5c01692d9cf3d1c3", "3c/179f9caa8f/0",
     "1907aac79ad9277ed5d483d0e20e73757a177804ba74a207d4f6fe67d9f067dd"),
    ("ClusterCockpit/cc-backend", "aba3a344129b2d25f6749bdf5c01692d9cf3d1c3", "ea/70a955214d/0",
     "6b13f37bb9b6568e0cd504fb4abdbbf649442cfc23222562a396f6dec7f1e395"),
    ("dougnukem/orpheus", "7656bca2a2cf872c166e9c0d5a3f4d604cf10051", "29/9e6288b78e/0",
     "1f93c635ec34f1c86c1ca62b672b9b0655724538746f216ba56e441b5d607689"),
)  # fmt: skip
SET5 = tuple(
    checkpoint(repo, commit, folder, sha) for repo, commit, folder, sha in SET5_CHECKPOINTS
)
# Set 6 (issue #26's sixth, blind set): repositories and developers none of the earlier sets used.
# tomochang/aidev (MIT, its LICENSE) committed two Claude Code sessions of its implementation
# agent under .entire/metadata/<session>/full.jsonl (the Entire CLI's local copy), read at the one
# commit that added them; yutakobayashidev/repiq (MIT, its LICENSE) pushes its sessions, in
# Japanese, as checkpoints of the entire/checkpoints/v1 branch, read at that branch's tip.
AIDEV = ("tomochang/aidev", "1110b219b3545972f318badad008c2787742c6df")
AIDEV_SESSIONS = (
    ("a58cb2da-b71d-4517-8d14-9af8f79cd489",
     "3897ff2ef051ee0acb82b15582daecb2ac16c1f2cc2881f5a06f8b1259b27073"),
    ("c5f4a9cc-124d-4ca2-a57a-a111f631f14c",
     "b0f20a09fd0398570d14e47fd1ce3d52ca9387c7433435b61d3a4c0a65875a66"),
)  # fmt: skip
REPIQ = ("yutakobayashidev/repiq", "a26c516407605bc1eed371774e25f5b17dc4038e")
REPIQ_CHECKPOINTS = (
    ("84/2316335707/0", "4b597b82cfb18be851ff1bb9b4c4bc55aa8ea7e75c1c164b77bc78e6c9269f6f"),
    ("f5/0445a6555d/0", "72f218cb020f704fd41da7bbdfdf0dd046e66e4ee5063fc0a915bcef9402b862"),
    ("01/c5812055dc/1", "354bcd4dae33194b223ec2cb6f6c4882eb0e6ff08a77077c9c2ea28d0f5fad8c"),
    ("24/723c7a3c59/0", "e0181dd99c7440040fdf5df22b5bd078120b9191cd66c34cc04cc3dad57557fc"),
)
SET6 = (
    *(
        Source(
            *AIDEV,
            f".entire/metadata/{session}/full.jsonl",
            f"claude-code/{AIDEV[0].replace('/', '__')}__{session}.jsonl",
            sha,
        )
        for session, sha in AIDEV_SESSIONS
    ),
    *(checkpoint(*REPIQ, folder, sha) for folder, sha in REPIQ_CHECKPOINTS),
)
# Set 7 (issue #26's seventh, blind set): Markdown the SpecStory extension saved from Cursor into
# .specstory/history/ and the developers committed, each read at the newest commit holding that
# version of the file. Licences (each the repository's licence file at that commit):
# closup/process-xbrl MIT (License.txt), Singingkettle/ChangShuoRadioRecognition Apache-2.0 (in
# Chinese), hpm27/agente-bsc-rag MIT (in Portuguese), daviswhitehead/chef-chopsky CC0-1.0.
SET7_SESSIONS = (
    ("closup/process-xbrl", "8eda6aa26fb04117f93bfb402fcfd35fcb159f48",
     "look-at-the-python-files-in-models",
     "3585309ed288433787737bdecb8e0d36c5e5743bc50e3e73ef89b1cda6bb42de"),
    ("Singingkettle/ChangShuoRadioRecognition", "94fad50cf43d2b80ec7e852532ffb4f8ceb56309",
     "2026-03-18_06-23Z-pyrightconfig-json-exclusion-settings",
     "fa11ff82a66625b1f322e7a8527bfc876a65113dde4c176a9878caeca2b1cbf9"),
    ("hpm27/agente-bsc-rag", "ff6065a0afb13ae9f837cee156f11429844b53cb",
     "2025-10-14_22-20Z-leia-o-plano-e-aguarde-instruções",
     "404086a9cdc057f6c050457edb3749afed54ab4f3d0ded8c3dbdc837a948a285"),
    ("daviswhitehead/chef-chopsky", "fd2ca1e76428bad700450056e85bf294ec04f625",
     "2025-09-24_15-15Z-debugging-ci-flow-for-auto-fix",
     "3bc868d38820360a96879cf5cbe3025de74c3d46be621b59e669b550cc127f70"),
    ("daviswhitehead/chef-chopsky", "fd2ca1e76428bad700450056e85bf294ec04f625",
     "2025-09-24_19-15Z-debugging-e2e-test-flakiness-in-playwright",
     "629ea2c7e059518b1d57dbd711c8e16014d9b8a30e64baef33d5cb9ca622b1ed"),
    ("daviswhitehead/chef-chopsky", "fd2ca1e76428bad700450056e85bf294ec04f625",
     "2025-09-25_19-36Z-get-all-frontend-unit-tests-passing",
     "202af6fbc4647417902aad42c0bafd4431a7fb7c287ca29e3e39eeec12f55f8f"),
)  # fmt: skip
SET7 = tuple(specstory(repo, commit, stem, sha) for repo, commit, stem, sha in SET7_SESSIONS)
# Set 8 (issue #26's eighth, blind set): agents other than Claude Code (OpenCode, Codex and the
# Copilot CLI), each session the full.jsonl of a checkpoint on the entire/checkpoints/v1 branch the
# Entire CLI pushes, read at that branch's tip; savekirk/session-bridge (MIT, its LICENSE.md),
# eitatech/gatomia-vscode, The-Best-Codes/bestcodes.dev and polecatspeaks/StarCar (MIT, their
# LICENSE).
SESSION_BRIDGE = ("savekirk/session-bridge", "ea93acc9980a726327988d82d8b35a2853169544")
GATOMIA = ("eitatech/gatomia-vscode", "9ed6cc87c8b5fd1a74d710c463c39126d636445a")
BESTCODES = ("The-Best-Codes/bestcodes.dev", "9f7d8b234c451b617c32d48d35f49a73b858654a")
STARCAR = ("polecatspeaks/StarCar", "c1dbef906e331aa1742a1e653923fb767ab125e8")
SET8_CHECKPOINTS = (
    (SESSION_BRIDGE, "opencode", "13/dddd416599/0",
     "4f7d07c4856def070ff2c51a7f46ee37888344b302cc751fffc8e6cbd45f5493"),
    (SESSION_BRIDGE, "codex", "91/8f936c1bcb/0",
     "7fa1d935686c270e511fef1ecf7367651566376e59028b3ded7eeb0301b3c954"),
    (SESSION_BRIDGE, "codex", "af/8e1ffd64b6/6",
     "2202103729b4d1e40371e8a30e7b21f5efda7ecdb0aecf9e590184ec1b433242"),
    (SESSION_BRIDGE, "codex", "06/e6d229b394/0",
     "331129427986563df4b93652472a1e8188e4ff654b3845e7bb4f3a11454109a8"),
    (GATOMIA, "opencode", "17/6a36dde4c6/1",
     "8f4cd6706a1cbd52be47e9b46efa0f3aab07141200f1fef9e0318d3721260a54"),
    (BESTCODES, "opencode", "27/240dc223d2/0",
     "be22329df7ae5bb7629e1c3ad79e966ac321b01570e352ffb1f2aa0169646a9e"),
    (STARCAR, "copilot", "84/e7f6fdba43/0",
     "c987121476d38c169a09f45e52e3ceddb35a741ca5061e217f1e5381875231b1"),
)  # fmt: skip
SET8 = tuple(
    checkpoint(repository, commit, folder, sha, agent)
    for (repository, commit), agent, folder, sha in SET8_CHECKPOINTS
)
# Set 9 (issue #26's ninth, blind set): Markdown the SpecStory CLI saved from Claude Code, Codex CLI
# and Gemini CLI into .specstory/history/, read at one commit per repository; specstoryai/
# getspecstory Apache-2.0 (LICENSE.txt), specstoryai/keyframe-blogger MIT (LICENSE).
GETSPECSTORY = ("specstoryai/getspecstory", "210d6095c58e26c49ca8093789c491ebe8f28203")
KEYFRAME = ("specstoryai/keyframe-blogger", "b909c7ed00c6da0ff6cf8f94c224438ffe0f5a12")
SET9_SESSIONS = (
    (GETSPECSTORY, "specstory-cli/", "2026-06-18_15-52-09Z-read-docs-git-provenance",
     "1e9faee5da8718bc593ea3e0eeb5c919bee503b29d1c44498a6b33786acc4213"),
    (GETSPECSTORY, "specstory-cli/", "2026-02-20_15-53-44Z-read-docs-git-provenance",
     "922d35db2ff8ac576f7e3f2f4a15ed71dd98af6481cabc796c61e0a5f52e2b69"),
    (GETSPECSTORY, "specstory-cli/", "2026-06-23_14-17-56Z-read-at-docs-session",
     "a262fd6e301c47178ceeac5c733bc09be2b3c8167d96e3a9d02f2133f19e135a"),
    (GETSPECSTORY, "specstory-cli/", "2026-05-13_13-48-53Z-i-ve-got-a",
     "89926703fedecd527f3cde5e7f649445560bb6c9a8e8bde3ccceb25f7d178295"),
    (KEYFRAME, "", "2025-07-11_00-01-50Z-we-re-going-to",
     "eac4a81f2dc44d4c24f0c3eae910359fea424ea0fcb81f6ba3b161f5f6d0f930"),
    (KEYFRAME, "", "2025-07-14_13-17-14Z-ok-we-have-a",
     "f8566b7c8230a037dba88691b5401b5b3081d6fb29f7cdb43e5b4234fb3ebb9c"),
)  # fmt: skip
SET9 = tuple(
    specstory(repository, commit, stem, sha, folder)
    for (repository, commit), folder, stem, sha in SET9_SESSIONS
)
# Set 10 (issue #26's tenth, blind set): mini-swe-agent trajectories (``.traj.json``, read by the
# swe-agent loader), one SWE-bench task each. gruckion/mini-swe-agent (MIT, its LICENSE.md) holds
# the Gemini 3 Pro run of SWE-bench Verified in swebench_results/; the DeepSeek runs are in
# output/ on SWE-agent/mini-swe-agent's refs/pull/816/head (MIT, its LICENSE.md at that commit).
GRUCKION = ("gruckion/mini-swe-agent", "d12a71affd95403b036b2bdbd827349b77bfffb9")
PR816 = ("SWE-agent/mini-swe-agent", "ec0e8e849fea5b1619deb1753007201000904672")
GEMINI_RUN = "swebench_results/20251118_gemini-3-pro-74pct/trajs"
SET10_TRAJECTORIES = (
    (GRUCKION, GEMINI_RUN, "gemini-3-pro", "pytest-dev__pytest-6197",
     "1087293876905d56c1ccb79f68df589c3726c8be9007e824f6c59c8265d9824b"),
    (GRUCKION, GEMINI_RUN, "gemini-3-pro", "sphinx-doc__sphinx-9258",
     "ab4359c4d89261bdff9f1b72f5b3006926dc1f919b66099645345d92c1cc3bad"),
    (GRUCKION, GEMINI_RUN, "gemini-3-pro", "scikit-learn__scikit-learn-25102",
     "4959391d6342d992df2a7e3e0f035a3b1bbfcdd34365ca4a903d632fae6d17d9"),
    (GRUCKION, GEMINI_RUN, "gemini-3-pro", "django__django-15629",
     "4b5fedee7586b5960cfbe273b091804cae77837a379e4651c2a35ada9bcec7ca"),
    (PR816, "output/deepseek_lite_dev_noparallel", "deepseek-lite", "pydicom__pydicom-1413",
     "61639f1bc3c90b8385f60d4a032dc15607851e57a3d434a6fb436b407ef8c4f6"),
    (PR816, "output/deepseek_chat_dev_rerun", "deepseek-chat", "pvlib__pvlib-python-1606",
     "0e9e63178e64be8d0e05095048eca520eb8896d3d36b94c9c3ab5e337bbea4c9"),
    (PR816, "output/deepseek_reasoner_dev", "deepseek-reasoner", "sqlfluff__sqlfluff-1517",
     "a9728df3eaf634ab1618ea4ea7bf977cbeed0f7ae959e034443db8d62ae81940"),
)  # fmt: skip
SET10 = tuple(
    Source(
        repository,
        commit,
        f"{run}/{task}/{task}.traj.json",
        f"swe-agent/{repository.replace('/', '__')}__{label}__{task}.traj.json",
        sha,
    )
    for (repository, commit), run, label, task, sha in SET10_TRAJECTORIES
)
# Set 11 (issue #26's eleventh, blind set): Markdown the SpecStory extension saved from Cursor into
# .specstory/history/, each read at the newest commit holding that version of the file: Chinese
# research sessions on a fork of NVlabs/alpamayo (Apache-2.0, its LICENSE), February 2025 sessions
# whose tool steps are prose only on a VPN client, twardoch/nyord-vpn (MIT, its LICENSE), and a
# July 2025 one on twardoch/lmstrix (MIT, its LICENSE).
SET11_SESSIONS = (
    ("BillWan-zzzyyy/alpamayo", "3ee668a7995bdabbe180ad222b0a629661d6f8a7",
     "2026-03-02_06-49Z-推理速度与论文不符",
     "a18e554401066c74ea29e38eb37fa6430d5e1f44fa39ea19e09614c377430996"),
    ("BillWan-zzzyyy/alpamayo", "7ae1fbd06a4202288a4955f49bdb131c8159df5c",
     "2026-03-11_04-52Z-model-input-and-output-analysis",
     "0690a0ebade6ec8a124ee045bb8e2e6d9c30c699b9a9708c36da5e3f0b4a2544"),
    ("twardoch/nyord-vpn", "c9054cbf8748ce80657a0b2f0300fdef3343c575",
     "2025-02-24_08-10-vpn-server-availability-issues",
     "e358eb6e37e070344c2604890a5cdfcbad0d6ab9459edf208055fdd00e274474"),
    ("twardoch/nyord-vpn", "3dccfa6f9a0c3ccaeacb0ab9864bb67ace0ecb79",
     "2025-02-24_17-19-vpn-country-resolution-issue",
     "2b5169fb89cb295953e838948c72a94115e3cd0ea7b6a955ba8a47b2df58bc0c"),
    ("twardoch/lmstrix", "b6ff70f230fb6975f7521624cf8a9ebbf55b983e",
     "2025-07-27_11-44Z-implement-code-from-docstring-in-python",
     "7eee60dbdaeb36ffe1f8dadb6477821b75883e6b67854285b585e0edcaec0d0d"),
)  # fmt: skip
SET11 = tuple(specstory(repo, commit, stem, sha) for repo, commit, stem, sha in SET11_SESSIONS)
# Set 12 (issue #26's twelfth, blind set): SpecStory Markdown v2.1.0 files in .specstory/history/,
# each read at the newest commit holding that version: a Claude Code session in Chinese on
# yixian-huang/cocli (MIT and Apache-2.0, its LICENSE), VS Code Copilot sessions with Gemini 3 Pro
# on DakineMI/tree-sitter-languages-rs (MIT, its LICENSE), with Claude Sonnet 4.5 on a Gerrit change
# of openbmc/bmcweb (Apache-2.0, its LICENSE) and in Chinese on nndeploy/nndeploy (Apache-2.0, its
# LICENSE), and a Cursor IDE session on Bucur21/PaperBites (MIT, its LICENSE).
BMCWEB = ("openbmc/bmcweb", "875cc17e0931348ea730b6d06b021dd66722e2c1")  # refs/changes/26/93326/5
SET12_SESSIONS = (
    (("yixian-huang/cocli", "4b5390bd7eda3f45233142fcaf0f98d1f39bf69e"),
     "2026-05-21_06-41-36Z-cocli-oss-local-gui",
     "4dbc4f33423f93f93bf9fdfc4033fe4c10759d586b50644283e23c5ec8391e18"),
    (("DakineMI/tree-sitter-languages-rs", "dfca0c5a42118d0efee738414936c6733bcca92a"),
     "2025-12-15_23-48Z-initialization-process-discussion",
     "739df02fef7c458f53fb6b4d2d9c1a72d8d4866373f29ccc46fa0865efc6c9a0"),
    (BMCWEB, "2026-04-20_11-56-52Z-jenkins-build-failure-analysis",
     "abff6107dbe10434bcc655a30101fad4d762a3672f7ed574e3690b65ec81c68e"),
    (BMCWEB, "2026-04-11_13-38-41Z-review-of-bmcweb-ram",
     "b98dd49096946d75827f48dfd04a650554e41c3260d1a6911e53726647e03136"),
    (("nndeploy/nndeploy", "7188da68458bc4b66b824ab907cf45dc23ac5731"),
     "2026-07-28_09-21-01Z-depth-yolo-depth",
     "665b6249e0f09cf8377be1dbaa80d12ed85e2e896a7f34711bd1b36d582fbd87"),
    (("Bucur21/PaperBites", "7a7c53c5a6880fed5597aeb499e57a3e5d2d8363"),
     "2026-04-07_19-37-09Z-404-error-handling-and-paper-entry-navigation",
     "fadda6b07488502d987ed929cde60cd14826d940159cec7c0b07665ad0c243d6"),
)  # fmt: skip
SET12 = tuple(specstory(repo, commit, stem, sha) for (repo, commit), stem, sha in SET12_SESSIONS)
# Set 13 (issue #26's thirteenth, blind set): a Gemini CLI session in its own JSON layout
# ({sessionId, projectHash, messages}), the full.jsonl of a checkpoint the Entire CLI pushed to
# savekirk/session-bridge's entire/checkpoints/v1 (MIT, its LICENSE.md; set 8 took that repository's
# OpenCode and Codex sessions, none of its Gemini CLI ones). The only permissively licensed native
# Gemini CLI, Cline/Roo/Kilo, qwen-code or OpenHands session above the 40,000-token window found
# (fresh_probes13/README.md says where else was looked and why each was left).
SET13_CHECKPOINTS = (
    (SESSION_BRIDGE, "gemini-cli", "e9/4f17cdc65d/0",
     "4c8650d6b1a25fc78dd32aa992dae4fd9bc9932efb0ea6161b853efb82f5d783"),
)  # fmt: skip
SET13 = tuple(
    checkpoint(repository, commit, folder, sha, agent)
    for (repository, commit), agent, folder, sha in SET13_CHECKPOINTS
)
# Set 14 (issue #26's fourteenth, blind set): work other than application coding (nginx, CloudFront,
# systemd and PostgreSQL operations, a server move, CI health checks, a chat page's CSS, steering a
# local model through MCP tool descriptions), six Claude Code sessions the Entire CLI pushed to
# Safecast/safecast-map-MCP's entire/checkpoints/v1 branch, read at that branch's tip. The
# repository has no licence file; its README (at main, 3758342aaa495815d16dc1e7f9c165e4f4fbc72d)
# says "## License / MIT".
SAFECAST = ("Safecast/safecast-map-MCP", "5ef9f6d6457c05904937ba02be8b2aae721c59c5")
SAFECAST_CHECKPOINTS = (
    ("6d/f663cdee01/0", "1e7f641ae48f0b729239eb118c7f35bae0cadf30a6bf803ced8579919357a3d8"),
    ("da/1a12cda362/0", "a0e6f8c310d144b8665bfa5b1a8fb6063f3d17ca02c961e7599afb2f79ba66c9"),
    ("91/7513b9d7ec/0", "c27b9321b28e637835f1385f2d9a70003226b5cf32d100d8f8c26ccd3b753490"),
    ("05/2c8105444f/0", "9be9dae1fa4da4eb2319f6324f6174f1c46d8461c2652b1c8e9ed2dc907c5c4c"),
    ("22/3b4daa0a26/0", "4775f294790d4543db6ed0caec85dc5af1db9685eb8e778633754e12297d8b6e"),
    ("a6/6e89150b24/0", "323030ef893332aad092ba86326ad8c13bce39120c3e41e35a0f1153f334c0ef"),
)
SET14 = tuple(checkpoint(*SAFECAST, folder, sha) for folder, sha in SAFECAST_CHECKPOINTS)

# Set 15 (issue #26's fifteenth, blind set): work other than application coding, each session the
# full.jsonl of a checkpoint on the entire/checkpoints/v1 branch the Entire CLI pushes, read at that
# branch's tip: Claude Code building a GitHub Action and setting up a remote environment's hook on
# entireio/cli (MIT, its LICENSE), Codex moving npm publishing to a trusted-publisher workflow on
# EntityProcess/agentv (MIT, its LICENSE), and OpenCode hardening CI and building a report UI on
# dayhaysoos/nimbus (MIT as its README says; the repository has no licence file).
ENTIRE_CLI = ("entireio/cli", "394f81fab87f71aa8938d91ff7a067c524ff344b")
AGENTV = ("EntityProcess/agentv", "47dca0eea369e545808f72dd9473c846f66dd79f")
NIMBUS = ("dayhaysoos/nimbus", "5e57daf29555c422dd6d397f47bd4067b36e1cde")
SET15_CHECKPOINTS = (
    (ENTIRE_CLI, "claude-code", "61/a440d894cc/0",
     "f8874714c6a4065cf805276a09af9b4be7f0c06059abe3ebdf1e22ef3bc15f27"),
    (ENTIRE_CLI, "claude-code", "55/04c1f4266f/0",
     "d981f95a9d2c3e48ded48a9ce56ce386174e823e7a6541c34190d22e9009e35a"),
    (AGENTV, "codex", "a6/0726a7452e/1",
     "b9dbc877f1413fa2cbf78e52d778acf75dd25c6a652b93e065290ada77f471e3"),
    (NIMBUS, "opencode", "b1/7c51a35a6a/1",
     "36fad22fda68752e680d91b76ee70c6171d101f47454f2c5271fad0b67ac1937"),
    (NIMBUS, "opencode", "41/9355fccd46/3",
     "a5939e532e85380852711ed235bba8db2e5a89a6da73c6db4efa0fc45cc0387e"),
)  # fmt: skip
SET15 = tuple(
    checkpoint(repository, commit, folder, sha, agent)
    for (repository, commit), agent, folder, sha in SET15_CHECKPOINTS
)
# Set 16 (issue #26's sixteenth, blind set): Markdown the SpecStory extension saved from Cursor into
# .specstory/history/ on pull-request refs, each read at the commit that added it: three 2025
# sessions of data-labelling work (PR-improvement tasks and rubrics on mitmproxy, dvc and moto code)
# on iterative/dvc's refs/pull/10769/head (Apache-2.0, its LICENSE), and a test-coverage and
# developer-environment session on CODAP, a data-analysis web app, on concord-consortium/codap's
# refs/pull/1857/head (MIT, its LICENSE.md).
DVC_PR = ("iterative/dvc", "be005a44b5edd06d730c1bab5fbd29c10f7db8ec")
CODAP_PR = ("concord-consortium/codap", "0ddb0365d5e630c2bda57b939e19d8570389e892")
SET16_SESSIONS = (
    (DVC_PR, "2025-06-07_12-19-check-tests-and-resolve-issues",
     "4e65451551a8f672cbaa2b6129918bbc802cd3f980fc222b9c960b56162b1f8a"),
    (DVC_PR, "2025-06-08_07-18-improvements-for-kms-key-policy-enforcement",
     "87fcb738a0271cdb85b76c6e3764f87650b30aadd8e914386dfe5d0226498000"),
    (DVC_PR, "2025-06-08_14-30-suggestions-for-codebase-improvements",
     "81cd6d421ebfeba23436212a25cfe0af7600756f8358bea4c446c6a5f53588a3"),
    (CODAP_PR, "2025-03-13_18-47-setting-up-local-environment-for-v3-application",
     "20952589f4c50d68fd420d1a5f0faa9f33f69cafb25a9793e6877f2f8414f43d"),
)  # fmt: skip
SET16 = tuple(specstory(repo, commit, stem, sha) for (repo, commit), stem, sha in SET16_SESSIONS)


def committed(repository: str, commit: str, path: str, sha256: str, agent: str) -> Source:
    """A session file a user committed to a repository, written as
    ``<agent>/<owner>__<name>__<file name>``."""
    name = f"{repository.replace('/', '__')}__{path.rsplit('/', 1)[-1]}"
    return Source(repository, commit, path, f"{agent}/{name}", sha256)


# Set 17 (issue #26's seventeenth, blind set): Gemini CLI sessions committed by their users, each
# read at a commit that holds it: two `/chat share` Markdown exports of audio-tagging performance
# and analysis work on Manamama-Gemini-Cloud-AI-01/audioset_tagging_cnn (MIT, its LICENSE.MIT), a
# `/chat save` checkpoint of Termux path debugging on the same account's fork of gemini-cli,
# gemini-cli_modding_and_bug_solving (Apache-2.0, its LICENSE), and a `/chat share` export of a
# Chinese-speaking user's seek ("jump") design for a Vue/PixiJS script player on inu-tsuki/kmd
# (Apache-2.0, its LICENSE).
AUDIOSET = "Manamama-Gemini-Cloud-AI-01/audioset_tagging_cnn"
GEMINI_FORK = "Manamama-Gemini-Cloud-AI-01/gemini-cli_modding_and_bug_solving"
SET17_SESSIONS = (
    (AUDIOSET, "b3e54ecdc872aa9352d7f3a39acda9eaccb4b323", "duck1.md", "gemini-cli-share",
     "e1dd610c53d6ac0510943280db222dfb6e6246bfc5d53251d463deebb50ec669"),
    (AUDIOSET, "a4ff5211ab3df435c72acc4992a6b3ffe66b8c02", "a.md", "gemini-cli-share",
     "8e10b1a2f31b2822ee6f3d24c7dd165dfbf72acd32783315af9bcd0e695ef156"),
    (GEMINI_FORK, "f0bb14090dafee3008e88c180160a9fe830b135e", "checkpoint-path_B4.json", "gemini",
     "ae4a26528bf3f548ad8aab95c1ea1686543b40c0958cf7aae9c7a7f781288eb8"),
    ("inu-tsuki/kmd", "041b0e0e64556a7344e3513649d637929521ff86",
     "docs/archive/jump_discussion.md", "gemini-cli-share",
     "c5e24543398237a9ad63988af42b5306ef72891dd4686fb113ec423851722655"),
)  # fmt: skip
SET17 = tuple(
    committed(repository, commit, path, sha, agent)
    for repository, commit, path, agent, sha in SET17_SESSIONS
)
# Set 18 (issue #26's eighteenth, blind set): three Cursor sessions SpecStory saved in its
# early-2025 layout into .specstory/history/ of edobry/minsky, a CLI for agents' task and session
# workflow, read at the commit 2d0f5d07 that holds them (its README: "## License / MIT"; the MIT
# LICENSE file came later), and a Claude Code session triaging an external audit of a research
# project into GitHub issues and fixing two of them, the full.jsonl of the per-checkpoint ref
# refs/entire/checkpoints/3K/01M0A849X503RG701VEF101N3K of Nomos-N4s/nomos (Apache-2.0, LICENSE).
MINSKY = ("edobry/minsky", "2d0f5d07ebe40b8b2245be819c49558147c3cad8")
SET18_SESSIONS = (
    ("2025-04-29_18-53-starting-task-002",
     "58c723b05ccf51b64fd1b1ab74a7de203ba7087a35452e8191fdb6486c641174"),
    ("2025-04-30_19-35-task-008-testing-and-review-updates",
     "7f31f911ea76712bac51871d30753a251c82be259d949bf6ca2d05f066b8656e"),
    ("2025-05-01_19-32-starting-task-027",
     "30b98841065f217017b6ed182717fdfafeaa05f0ced362ac89d3ed805ac85bf0"),
)  # fmt: skip
SET18 = (
    *(specstory(*MINSKY, stem, sha) for stem, sha in SET18_SESSIONS),
    checkpoint_ref(
        "Nomos-N4s/nomos",
        "3095047da99408de083896c7c11905198bac328d",
        "3K/01M0A849X503RG701VEF101N3K",
        "118f0c42dd0a592f7e7d6fc12c30b525e88bdf11c682aa7209ba0a21d544a4fc",
        session="",
    ),
)
# Set 19 (issue #26's nineteenth, blind set): sessions none of sets 1-18 took (no session id of
# theirs), each the full.jsonl of a checkpoint on the entire/checkpoints/v1 branch the Entire CLI
# pushes, read at that branch's tip: Codex repairing an npm publish that never ran for release tags
# on EntityProcess/agentv (MIT, LICENSE), Claude Code reviewing and fixing a pull request's segment
# cache that blanked the prompt on JanDeDobbeleer/oh-my-posh (MIT, COPYING), Claude Code adding an
# RRDTool-style average resampler to an HPC job monitor on ClusterCockpit/cc-backend (MIT,
# LICENSE), Claude Code closing an exposed Redis and CloudFront's buffering of a chat stream on
# Safecast/safecast-map-MCP (its README: "## License / MIT"), and Copilot CLI planning, in
# Portuguese, how to modularise a VS Code extension on eitatech/gatomia-vscode (MIT, LICENSE).
CC_BACKEND = ("ClusterCockpit/cc-backend", "aba3a344129b2d25f6749bdf5c01692d9cf3d1c3")
SET19_CHECKPOINTS = (
    (AGENTV, "codex", "46/c11fcf0c5c/0",
     "558987761b8a18ad9c9d5b042f57c0cbf550256d8f63b1661b42eea063df28f8"),
    (OH_MY_POSH, "claude-code", "ee/a3a34195eb/0",
     "95dfcbae18d3d73fb62f3f42f2e11066d74ae39d786a87bf5ebeb28ded220213"),
    (CC_BACKEND, "claude-code", "89/3a1de325b5/0",
     "4202939423b762601910b8a2503b87416d2f9a79e16465fa0f821cb7d06afcaf"),
    (SAFECAST, "claude-code", "64/6c2e6296c0/0",
     "f532c3ca9f4121d17fb9b0dee8abc1b28753bf53c7094ac0629cb4a7b71fc475"),
    (GATOMIA, "copilot", "6c/b81d4365f5/0",
     "1c0992adbfdc403d4d9b4f1c548012c2ddbf99c555ec8dd6e83ce6beef59ac2f"),
)  # fmt: skip
SET19 = tuple(
    checkpoint(repository, commit, folder, sha, agent)
    for (repository, commit), agent, folder, sha in SET19_CHECKPOINTS
)
# Set 20 (issue #26's twentieth, blind set): agents other than Claude Code, sessions none of sets
# 1-19 took (no session id of theirs), each the full.jsonl of a checkpoint on the
# entire/checkpoints/v1 branch the Entire CLI pushes, read at that branch's tip: Copilot CLI
# designing a results sync without force push on EntityProcess/agentv (MIT, LICENSE), OpenCode with
# a DeepSeek model adding a Shielded Site button to a footer on The-Best-Codes/bestcodes.dev (MIT,
# LICENSE), Codex splitting a VS Code extension's sessions tree on savekirk/session-bridge (MIT,
# LICENSE.md), Copilot CLI porting a repository's hooks from Claude Code and closing a reviewed
# change on polecatspeaks/StarCar (MIT, LICENSE), and OpenCode run by a playbook (Maestro Auto Run)
# building a read model on eitatech/gatomia-vscode (MIT, LICENSE).
SET20_CHECKPOINTS = (
    (AGENTV, "copilot", "d8/8be769afd1/0",
     "b9dd68ae97fef5b814cb1f213f4e9fda4cd79948795129c4646ddf7496e9a972"),
    (BESTCODES, "opencode", "55/d262fed8cf/0",
     "9b9c84099f57d3dcb0e73acc5cbe532c88e375f604e2c0dd79af0700f654cce8"),
    (SESSION_BRIDGE, "codex", "f6/4d6f38e0ad/1",
     "bb4f906e3d39f9d6a0b50221df857f71546058d5aaa952d7ae655836bc0e7231"),
    (STARCAR, "copilot", "11/9681650804/0",
     "9e6ca3d690707c5490084af9b235aaa50445dc7a3d2db02b8c4d8dc2f40c3506"),
    (GATOMIA, "opencode", "04/3777f29eaf/5",
     "4f0db68414930474f31a3c52e8bd6cf191385ef45c4c19eb6df0ce1ea9c94c0b"),
)  # fmt: skip
SET20 = tuple(
    checkpoint(repository, commit, folder, sha, agent)
    for (repository, commit), agent, folder, sha in SET20_CHECKPOINTS
)
# Set 21 (issue #26's twenty-first, blind set): repositories and people none of sets 1-20 used, each
# session the full.jsonl of a checkpoint on the entire/checkpoints/v1 branch the Entire CLI pushes,
# read at that branch's tip: Claude Code helping, in Japanese, to write and review chapters of a
# book manuscript on broad listening on digitaldemocracy2030/broad-listening-book (its README.MD
# until 2026-05-03: the manuscript is CC BY 4.0; since then: commits up to the tag
# license-cc-by-4.0-final are distributed under CC BY 4.0; this branch tip is of 2026-03-20), and
# Claude Code carrying out a roadmap plan for a CLI on jeevanpillay/dual (MIT, LICENSE).
BROAD_LISTENING = ("digitaldemocracy2030/broad-listening-book",
                   "b200408f458ed1b3c574fdb26216ad54f6bba0e1")  # fmt: skip
DUAL = ("jeevanpillay/dual", "a5158ee78a029e5c8ec286429deee1d8daf5ec91")
SET21_CHECKPOINTS = (
    (BROAD_LISTENING, "50/84721c6305/0",
     "de00cf65c4fe00cd088ec0a69447990d727ef6d9e17a7f4f9e17ecad0fbb8c9b"),
    (BROAD_LISTENING, "84/d373457973/1",
     "e1ef8bc42545709f76355316227eeb87db2bef0f794115e656cde0e3d90f0074"),
    (DUAL, "84/b2b35255d7/0", "325c83c82e605775e37fafa626ebd5545bf6dd1eb12efbbf1d0b768f568be5ea"),
    (DUAL, "84/b2b35255d7/1", "e90388c6dce2d742d38494c2126d805d29c8237bc62b5691f1eed4a29f7e8e5f"),
)  # fmt: skip
SET21 = tuple(
    checkpoint(repository, commit, folder, sha)
    for (repository, commit), folder, sha in SET21_CHECKPOINTS
)
# Set 22 (issue #26's twenty-second, blind set): sessions none of sets 1-21 took (no session id of
# theirs), each the full.jsonl of a checkpoint on the entire/checkpoints/v1 branch the Entire CLI
# pushes, read at that branch's tip: Codex answering how expected_output and assertions combine and
# enabling session pushes in .entire/settings.json, and Codex coordinating workers that move eval
# results into per-experiment folders and design repeat runs, on EntityProcess/agentv (MIT,
# LICENSE); Codex giving a webview's tool cards one design on savekirk/session-bridge (MIT,
# LICENSE.md); and OpenCode exploring a checkpoint deploy tool and writing specs for its refocus on
# sandboxes on dayhaysoos/nimbus (MIT as its README says; the repository has no licence file).
SET22_CHECKPOINTS = (
    (AGENTV, "codex", "4f/7325a9ab13/0",
     "9a0a2d32548c6354552a9cfbc081812833cb6a379891bf43b1d2def3edcda516"),
    (AGENTV, "codex", "3c/162d1d8ad4/1",
     "b05200b1a2dada48c77ca11f0c3d535c040827aab5a7264e6a65426d78cc8952"),
    (SESSION_BRIDGE, "codex", "64/b5e5660349/2",
     "086d3653a60f142f2e819357bab9a1c3c5b1593ace67a2b186ade6fc51ebe412"),
    (NIMBUS, "opencode", "d2/adab458cd6/0",
     "5a72151e8564bc3870760fa0c844bad941433ccdb6f7c4421c1bdc91bf4c04bd"),
)  # fmt: skip
SET22 = tuple(
    checkpoint(repository, commit, folder, sha, agent)
    for (repository, commit), agent, folder, sha in SET22_CHECKPOINTS
)
# Set 23 (issue #26's twenty-third, blind set): repositories none of sets 1-22 used and sessions
# with real failures (failing vitest, pytest, ruff and mypy runs, tracebacks), each the full.jsonl
# of a checkpoint on the entire/checkpoints/v1 branch the Entire CLI pushes, read at that branch's
# tip: Claude Code repairing a sandbox orchestrator's PR test and its agents' git push on
# theogbrand/napoli-matcha (Apache-2.0, its LICENSE, added on 2026-02-17 by a commit that carries
# checkpoint 085de903e0fb), and Claude Code diagnosing a PDF upload race and a starved thread pool,
# then taking a monorepo's ruff, mypy and pytest to zero errors, on ElixirTrials/medgemma-hackathon
# (Apache-2.0, its LICENSE, "Copyright 2025 ElixirTrials", added after this branch tip).
NAPOLI = ("theogbrand/napoli-matcha", "4d6a0100bc8ba12d3e347d7417049bdf03dc63f0")
MEDGEMMA = ("ElixirTrials/medgemma-hackathon", "68bbfa7f7f9a71ec4b2a39ae2efb8c35f24293a6")
SET23_CHECKPOINTS = (
    (NAPOLI, "08/5de903e0fb/2", "268ae9bf30a35f1f2431c647fe105f76163f37f89dff68c62fe177d94c01a6dd"),
    (NAPOLI, "08/5de903e0fb/1", "e2383a44342b2a60c323a9ae6e7af57ed6961b6f716f82125589c3328c4edc55"),
    (MEDGEMMA, "bb/2f46f05975/8",
     "66c9fccf9d7a7789befee37a5d7d59f05047ad9ba7db18e72983649d6ce0c48d"),
    (MEDGEMMA, "bb/2f46f05975/4",
     "50a20ba715fb3d7bf6eaf9d145817be692abfb64614c997af8020ba964f34d56"),
)  # fmt: skip
SET23 = tuple(
    checkpoint(repository, commit, folder, sha)
    for (repository, commit), folder, sha in SET23_CHECKPOINTS
)
# Set 24 (issue #26's twenty-fourth, blind set): agents other than Claude Code only, sessions none
# of sets 1-23 took (no session id of theirs), with failing builds, tests, linters and commands.
# Four are the full.jsonl of a checkpoint on the entire/checkpoints/v1 branch the Entire CLI pushes,
# read at that branch's tip: Codex renaming an eval option to max_concurrency and merging it through
# a conflicted rebase on EntityProcess/agentv (MIT, LICENSE), Codex scoping a VS Code extension's
# session details to one checkpoint entry and one session id on savekirk/session-bridge (MIT,
# LICENSE.md), OpenCode removing a deploy tool's legacy prompt flow and Node 14 on dayhaysoos/nimbus
# (MIT as its README says; no licence file) and OpenCode run by a playbook building an
# orchestration dashboard on eitatech/gatomia-vscode (MIT, LICENSE). Two are native Gemini CLI
# session files (``{sessionId, projectHash, messages}``) a user committed, redacted, to
# mischa-thisness/M-Gemini (CC0-1.0, LICENSE), read at its newest snapshot: installing and removing
# a laptop's fan and LED drivers on Arch Linux, and a desktop-wide dark/light theme toggle.
M_GEMINI = ("mischa-thisness/M-Gemini", "3bad8d462ef0a93165eb373a44f09a77910e5ecd")
SET24_CHECKPOINTS = (
    (AGENTV, "codex", "96/eca76f596a/0",
     "04eea494aa2e956147d9177e51acc3926aa29b8153cd186625de18a5973709ed"),
    (SESSION_BRIDGE, "codex", "22/0ab22aaa68/0",
     "016cfd19b827573f15b8341865f0f8144267144af7949cc17fb03b21a16b18a6"),
    (NIMBUS, "opencode", "5c/64e86a2232/0",
     "907941dbf2e712ac8378721b04310c85872be3d7bdb923ea2d1662ec9cce49ec"),
    (GATOMIA, "opencode", "0f/1be78a364c/1",
     "c786cab3bf2eb03585cf2d8490c97a9d2a44465fa117f7261b3d7a4db0ca7806"),
)  # fmt: skip
SET24_SESSIONS = (
    ("Archives/session-2026-01-01T03-48-e0af73a9.json",
     "7faf39d707180c5418f6e8c4fa08bd00afa2f7ad4a8357b9da6c61e1266a2dbc"),
    ("Archives/session-2025-12-30T01-31-271ace30.json",
     "44b409db4bc295851137a26fdaee957004f380f40b0a87069d7f3c8572b81e12"),
)  # fmt: skip
SET24 = (
    *(
        checkpoint(repository, commit, folder, sha, agent)
        for (repository, commit), agent, folder, sha in SET24_CHECKPOINTS
    ),
    *(committed(*M_GEMINI, path, sha, "gemini-cli") for path, sha in SET24_SESSIONS),
)
# Set 25 (issue #26's twenty-fifth set, a STUDY set: its losses are looked at): sessions none of
# sets 1-24 took (no session id of theirs), rich in real failures (pytest, ruff, mypy, psycopg,
# git, BusyBox, opkg, Blocky, curl). Two are the full.jsonl of a checkpoint on the
# entire/checkpoints/v1 branch of ElixirTrials/medgemma-hackathon (Apache-2.0, as for set 23), read
# at that branch's tip: Claude Code running a protocol end to end and finding the persist node's
# crash, and Claude Code adding an ordinal-resolution LangGraph node and taking ruff, mypy and
# pytest to green. One is a native Gemini CLI session file committed to mischa-thisness/M-Gemini
# (CC0-1.0), read at the same snapshot as set 24: a travel router administered over SSH, AdGuard
# Home replaced by Blocky, and a GTK dashboard for it.
SET25_CHECKPOINTS = (
    (MEDGEMMA, "bb/2f46f05975/2",
     "954c0d72c62d271b3a3572dc7599cfa152adaa0d0b5cd806f37b44d7bb059217"),
    (MEDGEMMA, "a2/4993385302/2",
     "ae7b4d9bd79effa9b6f6b62742263ebde6435dadd8cf1c2e39cd9cfb759da2c3"),
)  # fmt: skip
SET25 = (
    *(
        checkpoint(repository, commit, folder, sha)
        for (repository, commit), folder, sha in SET25_CHECKPOINTS
    ),
    committed(
        *M_GEMINI,
        "Archives/session-2026-01-11T00-25-17b4d5e9.json",
        "b6600bc20c10b22e9e4ed0ba638ae14386b776b0a1ca9561c5b4e9f135176076",
        "gemini-cli",
    ),
)
# Set 26 (issue #26's twenty-sixth, blind set): agents other than Claude Code, sessions none of sets
# 1-25 took (no session id of theirs), with failing commands, builds and tests. Two are the
# full.jsonl of a checkpoint on dayhaysoos/nimbus's entire/checkpoints/v1 branch (MIT as its README
# says; no licence file), read at that branch's tip: OpenCode (gpt-5.3-codex) implementing the
# first of three hosted-auth slices and then asking why its own commit has no Entire checkpoint,
# and OpenCode surveying the checkpoint branch's data to judge whether a co-change lookup is
# feasible (the only checkpoint of its session that holds a full.jsonl). Two are native Gemini CLI
# session files committed to mischa-thisness/M-Gemini (CC0-1.0), read at the same snapshot as sets
# 24 and 25: looking for Intel XTU's removed CLI on Windows and reading a laptop's CPU tuning
# values through Lenovo's WMI classes, and an NVIDIA suspend glitch fixed with a kernel parameter
# in rEFInd's config, then launcher entries and a Helium PWA that will not reinstall.
SET26_CHECKPOINTS = (
    (NIMBUS, "opencode", "3c/ef55468ff7/0",
     "1985fb2c441d0f317771622a4d82e44d9dc6a5bb23736055861cc4694c5274be"),
    (NIMBUS, "opencode", "d3/d79e2ffd92/12",
     "8719893c4e427a0a370e702beda6f8ced2134fd733449cbfdb6ca765a49dbcd1"),
)  # fmt: skip
SET26_SESSIONS = (
    ("Archives/session-2025-12-25T21-07-7ee43789.json",
     "1d642002c2ceecf10a0391534a0913a43662ee07cf9f3591f9f95776180b3ab9"),
    ("Archives/session-2025-12-30T18-12-d5169a00.json",
     "df94460a0b8d82684c6ce50046ca1cd9d0a8e6e7553df35b4f3b61637f690e3a"),
)  # fmt: skip
SET26 = (
    *(
        checkpoint(repository, commit, folder, sha, agent)
        for (repository, commit), agent, folder, sha in SET26_CHECKPOINTS
    ),
    *(committed(*M_GEMINI, path, sha, "gemini-cli") for path, sha in SET26_SESSIONS),
)
# Set 27 (issue #26's twenty-seventh, blind set): aider, an agent no blind set had. One chat log,
# ArkMaster123/clientdemoNISTAI's `.aider.chat.history.md` (MIT as its README says; no licence
# file), read at the newest snapshot and copied whole: its chats 3 and 5 (aider 0.68.0,
# claude-3-5-sonnet, December 2024) are the set, each probe file naming its chat as `#3` or `#5`
# (bench_fresh loads that chat with the aider loader's `index=`). Chat 3 reworks a compliance
# report page (a proxy route, Next.js build and type errors, upload progress), chat 5 wires a PDF
# upload and PDF URL front end to a FastAPI service (405 Method Not Allowed until the request
# matches); every commit of both fails on gpg signing.
NISTAI = ("ArkMaster123/clientdemoNISTAI", "b035b3bfec029e80d76d2189281090b9a5ec2381")
SET27 = (
    committed(
        *NISTAI,
        ".aider.chat.history.md",
        "458ad8f42a38f1ad5537e654d215f8236704470ede4cedeb8a890e79aa778533",
        "aider",
    ),
)
# Set 28 (issue #26's twenty-eighth set, a STUDY set: aider, which the earlier sets barely hold):
# four chats of the ``.aider.chat.history.md`` two forks of aider (Apache-2.0, their LICENSE.txt)
# committed in September 2024, while their owner ran aider (claude-3-5-sonnet, diff edit format)
# on his own projects: chats 48, 53 and 57 of DigitalKin-ai/aider_kinchercheur's (in French: a
# script that finds papers through a search API and downloads them, an LLM extraction of each
# into a Pydantic model, a checker of a literature review's references) and chat 64 of
# Lesterpaintstheworld/aider's (an AI band's motor planning between rooms). A file holds every chat
# aider logged there; ``bench_fresh`` loads the one its probe file's ``#N`` names.
SET28 = (
    Source(
        "DigitalKin-ai/aider_kinchercheur",
        "73e950a07e8ed01225a4b1ca6fe177541a33222a",
        ".aider.chat.history.md",
        "aider/DigitalKin-ai__aider_kinchercheur.md",
        "8091b788838b7acf33b29bd1e88acdaea716f09176ce86a59bc33936cfdba9d4",
    ),
    Source(
        "Lesterpaintstheworld/aider",
        "61082ffd941ec0f26b735c50c42476c755d6be69",
        ".aider.chat.history.md",
        "aider/Lesterpaintstheworld__aider.md",
        "7c6c5433d14175206dfad7801bdaf0d648ea4eb850e0356edec2181ac4236d91",
    ),
)
# Set 29 (issue #26's twenty-ninth, blind set): repositories no earlier set used, work the earlier
# sets have little of (CI and release engineering), Codex desktop sessions of 2026 and a session
# not in English. Four are the full.jsonl of a checkpoint on jdx/hk's (MIT, its LICENSE)
# entire/checkpoints/v1 branch, read at that branch's tip, each the largest copy of its session:
# Codex (gpt-5.5, gpt-5.6-sol) finding why a macOS Bats job failed (a scheduling race), why a
# no-git job failed (a pklr bump a release task's `cargo update` pulled in), why a branch guard
# fails during a rebase (a detached HEAD), and why nested `hk util` runs load configuration. One
# is the full.jsonl of refs/entire/checkpoints/BC/01KZXPDDY1Q0GK62J7YH9P75BC of
# keparlak/NumWordify (MIT, its LICENSE): Claude Code, in Turkish, reviewing and releasing a .NET
# package, its NuGet push refused (403) and moved to Trusted Publishing.
HK = ("jdx/hk", "6eb3f8b24548e894551674489163d2edfe996cb4")
SET29_CHECKPOINTS = (
    ("2a/d768bbbb7b/0", "d7d0ae92df26f14c5b5d4eec59ab63be5869de9867109f0bc54155de52712415"),
    ("a3/e13cc6b6d2/0", "64a8a11f9b2d637853a8cf7a42824328f1733aece5a5605ba1a973fc90574bb5"),
    ("7e/c11713634f/0", "494eab706c2465599d8b149121cfd9560ace35434390b6c0d88a1841183b1b95"),
    ("e5/cb0813e003/0", "6430d597a246758507633d33c23fd57fa6915422dc6acdfba1f74b69c1c3dc2c"),
)
SET29 = (
    *(checkpoint(*HK, folder, sha, "codex") for folder, sha in SET29_CHECKPOINTS),
    checkpoint_ref(
        "keparlak/NumWordify",
        "a8dde7c9754928f3eb7e3feec93114bccc33ff1d",
        "BC/01KZXPDDY1Q0GK62J7YH9P75BC",
        "825b752a0061e3d8fa5b3c1f095aeec888590dbc63043fe6940a97cc381cd843",
    ),
)
# Set 30 (issue #26's thirtieth set, a STUDY set): Codex desktop sessions in code mode, where the
# model's one `exec` tool takes JavaScript that calls `tools.exec_command(...)` and the result is
# the script's printout after "Script completed", from a repository no earlier set used. Each is
# the full.jsonl of a checkpoint on jdx/mise's (MIT, its LICENSE) entire/checkpoints/v1 branch,
# read at that branch's tip, the largest copy of its session: a PR's stale merge conflict then a
# real one, two Renovate PRs whose CI failed on a breaking crate API (chacha20poly1305 0.11,
# rmcp 2), a failed release (LLVM PGO profile version mismatch on macOS ARM64) and a Fedora COPR
# build failure (a PIE link in aws-lc-sys's compiler probe) reproduced over ssh in a container.
MISE = ("jdx/mise", "08f23942f7740d472f6c42f23e5f5d8aaa29e3c4")
SET30_CHECKPOINTS = (
    ("b1/013c87fa8a/0", "5dcff3be07df751864b9b5a0cc2c412323fe06c11aaa3815b9728034b94501cf"),
    ("2f/b96a15c25a/0", "71658224838e4047383bdea8359b616eca1af8470613ffc29e2ca27571553c7b"),
    ("04/fb7b73ba2f/0", "98d87c1871557a2ad0138604feaea8e9e93762aafce463804afa4ed5fa2dff7c"),
    ("c8/a0f662cd26/2", "2ef20826d99b71eeb7bf6850ed8093864064bddf034ee4cd622f6d748ed3c325"),
    ("37/c30f3fe0b7/0", "5dd02fe57e2c621552048e9d581c17a362fda2d814b6b74e5fb3c1fa32874d12"),
)
SET30 = tuple(checkpoint(*MISE, folder, sha, "codex") for folder, sha in SET30_CHECKPOINTS)
# Set 31 (issue #26's thirty-first, blind set): repositories no earlier set used, CI and release
# work again. Two are the full.jsonl of a checkpoint on jdx/fnox's (MIT, its LICENSE)
# entire/checkpoints/v1 branch, read at that branch's tip: Codex desktop (gpt-5.5) turning two
# GitHub discussions into pull requests (a daemon cache cleared for every profile; a relative
# password-store directory resolved against the config that declared it), with bats submodules
# to restore, a missing GNU parallel and a Clippy failure. Two are the full.jsonl of a checkpoint
# ref of gmeligio/flutter-docker-image (MIT, its LICENSE.md), each read at its ref's tip: Claude
# Code (claude-opus-5) reviewing a Renovate apt-pin fix and the build-arg wiring of GitHub
# Actions workflows in OpenSpec explore and apply modes.
FNOX = ("jdx/fnox", "0e9b95d42d039b0fcaa35cc31b2f2c4bdaee88ed")
SET31_CHECKPOINTS = (
    ("fe/b81ae5d175/0", "5c0988e14f43883f22bb5da5587d114543e7799609910a68c2b7e2a3edadf513"),
    ("26/0569e91552/0", "eb6c29812e376035166a8cc1a2fe70fb63bc4e8bc934101cc9ea9f5402c793eb"),
)
FLUTTER_DOCKER = "gmeligio/flutter-docker-image"
SET31_REFS = (
    ("1K/01KZHANPYAD8WSC1Y548MRKC1K", "711a328ac42985cd7f5062756dc907f31c2ddd0e",
     "11144b5bbf57e05496bcd21f7f27eb4783aa3dcbbe0f906446b6467e295e26d8"),
    ("6X/01KZKDDBW0KNWG4KRPZCDH5K6X", "1e1a6843fc909c89c25d341834ca7f2fe746d7bd",
     "f1c5022458caf9d44f52c97e28972e8c64c235cba35554eefa031d7c22dcce7a"),
)  # fmt: skip
SET31 = (
    *(checkpoint(*FNOX, folder, sha, "codex") for folder, sha in SET31_CHECKPOINTS),
    *(checkpoint_ref(FLUTTER_DOCKER, commit, ref, sha) for ref, commit, sha in SET31_REFS),
)
# Set 32 (issue #26's thirty-second set, a STUDY set): Claude Code sessions of three people on
# two repositories no earlier set used, each the full.jsonl of a checkpoint on the repository's
# entire/checkpoints/v1 branch, read at that branch's tip, the largest copy of its session: two on
# entireio/git-sync (MIT, its LICENSE), a Git replication tool, debugging a permanent sync error on
# a repository of 50,000 refs and a relay's chunked HTTP streaming under GITSYNC_HTTP_TRACE; two on
# entireio/auth-go (MIT, its LICENSE), an OAuth library, a branch rebased onto main and reviewed by
# a review toolkit's agents, and a security and performance review of a JSON response reader.
GIT_SYNC = ("entireio/git-sync", "8e24a4e9214edf84e753675e5c3ebe0f60e15264")
AUTH_GO = ("entireio/auth-go", "5ba12fda4864db5b5a49613bb62d70d011b242a7")
SET32_CHECKPOINTS = (
    (GIT_SYNC, "7f/01a5ec2f19/0",
     "988ee8319f651ffb9410425f2d2efc86199c2fe5fed766259643aaf12b2f9e3f"),
    (GIT_SYNC, "d3/38d26c7dd5/0",
     "9e0de345c9fbc2d4728b478ff61dcccdf761d9e4087c702203f8ce1649c68813"),
    (AUTH_GO, "c3/e870840354/0",
     "4464ce539fdfe05bf6d2d8338e17c71a933affbc69d4bbbbcfc22c3ebc2dac26"),
    (AUTH_GO, "d2/f79443bed0/0",
     "37399e685aae38cb7a11ec62253bf7bcc07b01dbebd4d41d574d71985b710071"),
)  # fmt: skip
SET32 = tuple(checkpoint(*repo, folder, sha) for repo, folder, sha in SET32_CHECKPOINTS)
# Set 33 (issue #26's thirty-third, blind set): repositories and people no earlier set used, and
# agents and kinds of work the sets have little of. Two are the full.jsonl of a checkpoint on
# obsessiondb/chkit's (MIT, its LICENSE) entire/checkpoints/v1 branch, read at that branch's tip,
# the largest copy of its session: Claude Code on a ClickHouse schema CLI's npm release (a manual
# publish script's error) and on failing GitHub Actions checks. Two are the full.jsonl of a
# checkpoint ref of MandavkarPranjal/prsui (MIT, its LICENSE), each read at its ref's tip:
# OpenCode sessions on a pull-request review UI. One is a Markdown file SpecStory saved of a Cursor
# session on AmbidextrousCoatie/league_analyzer (MIT, its LICENSE), a bowling-league statistics
# app: a pandas league table and its front end.
CHKIT = ("obsessiondb/chkit", "8ae9093f4c23a92cc74a774bef7166e96a67a238")
SET33_CHECKPOINTS = (
    ("8e/c4ea04f81c/0", "3e7bb7b1f73def9e420e2f1a9614b9c3b5abe5fa96e5d1522a153985cc626967"),
    ("d4/320fb4ea12/0", "8511364a66dc2c44a0f3d21a3adaf5edca9d6575936009498d5137a516452386"),
)
SET33_REFS = (
    ("ZE/01KYP8H2MKMX8VFFT9NB9AVDZE", "8c13ec2d648ae7c66330482809f3f10e7ecf7ba6",
     "4136a54f42606a96c50718ea86e395ea6616a16019b16b13965fb9401c76adbb"),
    ("8A/01KZ3NV3TTQYK03FMHX9RSEZ8A", "665e6045624755c139018ba5e32b0548a6bea5ad",
     "32e664812fdf706bc034d6531707a732c9eb247e53e44d9be789d026102ddba1"),
)  # fmt: skip
SET33 = (
    *(checkpoint(*CHKIT, folder, sha) for folder, sha in SET33_CHECKPOINTS),
    *(
        checkpoint_ref("MandavkarPranjal/prsui", commit, ref, sha, "opencode")
        for ref, commit, sha in SET33_REFS
    ),
    specstory(
        "AmbidextrousCoatie/league_analyzer",
        "aad233ccb6d72a72bfec9fb916c06ea691d5225d",
        "2025-10-05_15-35Z-issue-in-get-league-table-simple",
        "2df0df3b9b694264f7281098f0297a5832b2ab22b9744d7fa900db86780aaeb1",
    ),
)
# Set 34 (issue #26's thirty-fourth, a study set): Markdown files SpecStory saved, of agents and
# work the sets have little of. One is a Cursor session on robin-collins/Roo-Cline (Apache-2.0, its
# LICENSE at that commit), a fork of a VS Code coding-agent extension: a configuration-profile bug
# diagnosed, fixed across the extension and its webview, then its type-check and lint failures; the
# file is on no branch tip any more, so it is read at the one commit that added it. One is a VS Code
# Copilot session on Hornsyld/economic-bc-connector (MIT, its LICENSE), a Business Central extension
# in AL that migrates an e-conomic ledger: compile and runtime errors, JSON shapes of the e-conomic
# REST API, a codeunit split and posting entries by voucher. One is a Cursor session with tool calls
# on robin-collins/next-ppdb (MIT, its LICENSE), a Next.js front end: a report page built from a
# mock-up, and every padding utility found zeroed by a universal CSS reset. Each is read at its
# repository's tip, which holds both the file and the licence.
SET34 = (
    specstory(
        "robin-collins/Roo-Cline",
        "b21edece2756bc8e3e8ddf1c3f845b278d73bc82",
        "debugging-configuration-profile-issues-in-roo-cline",
        "658678f44317c0adff0210fa6aabbcba2656b905bffa0c661e2209848a1ac73c",
    ),
    specstory(
        "Hornsyld/economic-bc-connector",
        "1880787f26a84d53e4163a34f5640a43f4b233ca",
        "2025-10-03_06-42Z-consolidating-duplicate-objects-in-business-central-extension",
        "62b167ff44c75ddc6a86640914a1acdec471b01529dc45d201101af1eb82e8e7",
    ),
    specstory(
        "robin-collins/next-ppdb",
        "1ccee7a00ac69ebd521ea7901f69802f33259ca2",
        "2025-11-17_12-40Z-implement-daily-totals-page-in-next-js",
        "4ac3a183bb70898f09deac4220d2985eae6161aa9ca7c39f19732c8e0b9450b2",
    ),
)
# Set 35 (issue #26's thirty-fifth, blind set): Claude Code sessions (glm-4.7 behind it) of one
# person on anchapin/ironclaw (MIT, its LICENSE), a Rust orchestrator of Firecracker micro-VMs
# with a Python agent, each the full.jsonl of a checkpoint on its entire/checkpoints/v1 branch, read
# at that branch's tip, the largest copy of its session: 17 open PRs triaged against failing CI and
# Windows dropped from the matrix; a Rust coverage ratchet chased with tarpaulin through rustc, test
# and rustfmt failures until the ratchet is lowered; a swarm of sub-agents fixing 15 PRs in git
# worktrees, then a merge plan, a tracking issue and an auto-merge script's jq and bash errors.
IRONCLAW = ("anchapin/ironclaw", "92e8098665c34465f268f4d3613a4a07a5c70eab")
SET35_CHECKPOINTS = (
    ("bd/f40454b1a2/0", "0b214c5c48a2daa9de1cc750fdefc70ab1ee7f0b8990f6b17d60841e1b4883e0"),
    ("5f/44571a6da0/0", "bc858ab458bcb001812af8efa7e888bbba4bafdbcd3198ffd47868f832cc8d6f"),
    ("5f/44571a6da0/1", "0b2528d483372366c8b21e79a56ddc7e9f6da2876c91b79c2235c6b57579e92b"),
)
SET35 = tuple(checkpoint(*IRONCLAW, folder, sha) for folder, sha in SET35_CHECKPOINTS)
# Set 36 (issue #26's thirty-sixth, blind set): Markdown files SpecStory saved, from people and
# repositories no earlier set used, each read at its repository's tip, which holds the file and the
# licence. A VS Code Copilot session on Firedogs2x/Houdoku-2 (MIT, its LICENSE), a manga reader's
# Electron and React front end: a button that scans a folder of series into the library, through
# several failures. A Codex CLI session on IngoS11/EmailBuddy (MIT, its LICENSE), a Gmail rewriting
# companion: why Claude fell back to Ollama, then model discovery for every provider. A Cursor IDE
# session on JobiJoba/SchaerbeekMunicipality (MIT, its LICENSE), a .NET and Blazor population
# register: pasted exceptions, search filters and closing cases opened in error.
SET36 = (
    specstory(
        "Firedogs2x/Houdoku-2",
        "eaeba1ff73239814cceaebf921bf968251725c18",
        "2025-11-30_10-21Z-implementing-series-auto-feature-with-validations",
        "abafa94ce34d65ce8249eb7c22b8451779830d9808f5456775c37f884e7298c5",
    ),
    specstory(
        "IngoS11/EmailBuddy",
        "7c6a638cbca024c7f3c2df3eb5628e39e73a5f4e",
        "2026-03-07_00-05-24Z-i-added-a-claude",
        "8d44d2ebfc0c4c261a734edafdc099b5db1085d2bb5ec1b33d5b233ea8e76edf",
    ),
    specstory(
        "JobiJoba/SchaerbeekMunicipality",
        "0a9678d5a709517c461fd72158ab37705befd3be",
        "2026-07-20_07-14-35Z-unsupported-workflow-error",
        "9a91e84f2edad4ce60a6ff8630a8085274e1efa37baefd02889d7c58e21235b5",
    ),
)
# Set 37 (issue #26's thirty-seventh, blind set): Markdown files SpecStory saved, from people and
# repositories no earlier set used, each read at its repository's default branch tip, which holds
# the file and the licence. A Claude Code session (minimaxai/minimax-m3 behind it) on
# Excellencedev/yin-minecraft-mod (CC0-1.0, its LICENSE), a Minecraft mod checked against its
# description. A Cursor IDE session on Itsme23476/App-interface (MIT, its LICENSE), a desktop file
# organiser whose Windows installer and auto-update fail. A Cursor IDE session on 0-auth/zero-auth
# (MIT, its LICENSE), a line-by-line review of an authentication service.
SET37 = (
    specstory(
        "Excellencedev/yin-minecraft-mod",
        "ec30bbf7c341a6577044fdf206b628031ae94535",
        "2026-07-26_15-24-38Z-analyze-the-code-files",
        "d84d23bb92e73710928d87c3ae07b6c12dac6607d03da47ab10f8c82844182ff",
    ),
    specstory(
        "Itsme23476/App-interface",
        "da6fd1b57925917dae0001baab8b4c82eb084041",
        "2026-04-19_23-14-06Z-github-repository-code-download",
        "f34e0829a581737014eb8163bc3d1b62cdce3f1cbf4377a1b10b90b937dd00b3",
    ),
    specstory(
        "0-auth/zero-auth",
        "77eb9fded6b200f8c8efc813aa46d05869ea16d2",
        "2026-08-06_21-16-53Z-codebase-review-and-improvements",
        "150b742aab2b9d64167c902ebfc99c1af1a12fd292d5d44b41f8b51f5e27a322",
    ),
)
# Set 38 (issue #26's thirty-eighth, blind set): native session files, not SpecStory, from a person
# and repository no earlier set used. Three Claude Code sessions (claude-sonnet-5, claude-opus-5)
# on ebridges/wakil (MIT, its LICENSE.md), a local-first Python CLI agent over a Markdown knowledge
# base (SQLite index, git history), each the 0/full.jsonl of a checkpoint ref the Entire CLI
# pushed (refs/entire/checkpoints/<ref>), read at its ref's tip, the largest copy of its session.
WAKIL = "ebridges/wakil"
SET38_REFS = (
    ("32/340547b1ec32", "fe1358c5d3c3d8f9782709ea17ff7eee7fa7d51f",
     "5634ba4458114c3be88cb89acd99ef42d8b81923242c247d37a3c28272b097c1"),
    ("05/d7775e82da05", "4519ad72855bc69025a5dbce06a9e1e61d518844",
     "4589720db04f6936dc9e79ac605633812a8161732b53085ad6ee5d2b5ebf4390"),
    ("4Z/01KZEDN7PQPSM0V9644PRZM74Z", "a192e02eebc166d94f7ddd9fcdb734cd37389621",
     "aef7656149233a9e77bf38509a096013de0e73c87c37352276aaac9447f02b13"),
)  # fmt: skip
SET38 = tuple(checkpoint_ref(WAKIL, commit, ref, sha) for ref, commit, sha in SET38_REFS)
# Set 39 (issue #26's thirty-ninth, a study set of failures): Markdown files SpecStory saved, from
# people and repositories no earlier set used, each read at a commit that holds the file and the
# licence. A Cursor session in Chinese on pichsy/download-manager (Apache-2.0, its LICENSE), an
# Android download library in Kotlin, through a run of Gradle build failures. Two Cursor sessions in
# Polish on design4pro/mcp-rag-server (MIT, its LICENSE), an MCP server over Qdrant in Python: the
# server built and started (tracebacks, Docker), then its tools checked under pytest.
MCP_RAG = ("design4pro/mcp-rag-server", "7798379c2c452452e2b173cc8b0e55c83e39c287")
SET39 = (
    specstory(
        "pichsy/download-manager",
        "185ac56e5f680506c36a9aaa1fad22ccddc7389a",
        "2025-09-12_10-07Z-阅读文档和下载库的见解",
        "b9d77756fa484facb7ff76575611cf91a9b02e47018f30d8d47853d416ecb2c4",
    ),
    specstory(
        *MCP_RAG,
        "2025-07-24_19-57Z-tworzenie-serwera-mcp-rag-z-qdrant",
        "869643b645e259d0ddd23d43086fad6220dcb4f4791dbe6d0cadc0caec3e9846",
    ),
    specstory(
        *MCP_RAG,
        "2025-07-25_14-01Z-sprawdzenie-działania-narzędzi-mcp-rag",
        "7e5e4ecbe4b0dddcc09e3304acef037fb3c8fe90552741495914d6775f437e93",
    ),
)
# Set 40 (issue #26's fortieth, blind set): from people and repositories no earlier set used. A
# Claude Code session (claude-opus-5) on flop-labs/technocore-chat (Apache-2.0, its LICENSE), a
# plain-HTTP chat service for agents: a release tagged, deployed to a VM from another repository's
# infra, an MCP wrapper published, rate limits raised and a 0.3.1 of discovery documents; the
# 0/full.jsonl of the checkpoint ref the Entire CLI pushed, read at the ref's tip, the first of the
# session's four copies. A Cursor session in Russian SpecStory saved on CentOsss/ai-agents-in-action
# (MIT, its LICENSE), tutoring a course on AI agents section by section, read at the repository's
# tip, which holds the file and the licence.
SET40 = (
    checkpoint_ref(
        "flop-labs/technocore-chat",
        "11e0f28340968a290f42c5516c5283eb95d3ff5f",
        "S1/01KZXNNAHY6H2KK4EFKE117XS1",
        "1231f02639c5229d35ce4d23b799aef879bf340306e91ef0336c0fcd65b8cbda",
    ),
    specstory(
        "CentOsss/ai-agents-in-action",
        "78a764942bbc43c81731e139070b055996d00e17",
        "2025-07-06_18-50-47Z-продолжение-обучения-курса-по-prompting",
        "55ce69285907eb9559dd8258342d9bddf4288f4d983cf9c97a6aefd1b431ec19",
    ),
)
# Set 41 (issue #26's forty-first, study set, built to find where error probes are lost): a Cursor
# session SpecStory saved on HypeRankCode/hyperank (MIT, its LICENSE), a Next.js and Supabase site
# rebuilt and deployed on Vercel through many failed builds, read at the snapshot's tip, which
# holds the file and the licence; sets 37 and 40 left it only as too long to read.
SET41 = (
    specstory(
        "HypeRankCode/hyperank",
        "12e60d427bbd1cea15ca5540887aae1ddbcb1d2d",
        "2026-06-15_05-27-29Z-pleas",
        "f75a369b6826e0100cd0d8060174c880ef47591577fbc870eb968cb9946c4999",
    ),
)
# Set 42 (issue #26's forty-second, blind set): a Cursor session (composer-2.5) SpecStory saved
# on BenjaminScholtens/Afterburn (MIT, its LICENSE), a Vite, React and TypeScript browser game
# (Star Fox Royale) on a multiplayer game API, deployed on Netlify: endpoints in different
# environments (Forbidden on bootstrap), mobile controls and a fullscreen HUD, a TypeScript build
# error, a late joiner unseen, a regression on the deploy, Playwright failures, Safari CORS errors
# on the Netlify proxy and an app ID rejected at the UDP layer; read at the snapshot's tip, which
# holds the file and the licence.
SET42 = (
    specstory(
        "BenjaminScholtens/Afterburn",
        "a4b57412fa25c5572d18e1637a610948aa5baebf",
        "2026-06-10_15-44-22Z-game-api-configuration",
        "669079cef66c0c7d9d022087e46786b26f87fa3a269b6e471af6fd35fb4121f2",
    ),
)
SETS = {
    1: SET1,
    3: SET3,
    4: SET4,
    5: SET5,
    6: SET6,
    7: SET7,
    8: SET8,
    9: SET9,
    10: SET10,
    11: SET11,
    12: SET12,
    13: SET13,
    14: SET14,
    15: SET15,
    16: SET16,
    17: SET17,
    18: SET18,
    19: SET19,
    20: SET20,
    21: SET21,
    22: SET22,
    23: SET23,
    24: SET24,
    25: SET25,
    26: SET26,
    27: SET27,
    28: SET28,
    29: SET29,
    30: SET30,
    31: SET31,
    32: SET32,
    33: SET33,
    34: SET34,
    35: SET35,
    36: SET36,
    37: SET37,
    38: SET38,
    39: SET39,
    40: SET40,
    41: SET41,
    42: SET42,
}


def build(mirrors: Path, out: Path, sources: tuple[Source, ...]) -> None:
    for source in sources:
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=int, choices=sorted(SETS), default=1, help="which set")
    parser.add_argument("mirrors", type=Path, help="folder of <owner>+<name>/repo git dirs")
    parser.add_argument("out", type=Path, help="folder to write the sessions into")
    args = parser.parse_args()
    build(args.mirrors, args.out, SETS[args.set])
