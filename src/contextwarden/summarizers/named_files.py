"""Files a transcript without tool calls names: the assistant's code spans that spell a file.

Some exports render the agent's tool steps as prose and keep no call (SpecStory's early Cursor
``## SpecStory`` layout and its VS Code Copilot layout before ``<tool-use>`` blocks, 2025): the
assistant's "Let me update `src/a.ts`:" is then the only record of the file it worked on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from contextwarden.model import Message, TextBlock
from contextwarden.summarizers.file_op import FileOp

NAMED = "named"
"""The operation of a file the assistant only named: no tool call says what was done to it."""
_CODE_SPAN = re.compile(r"`([^`\s]+)`")
"""A Markdown code span (CommonMark 6.1) holding one word."""
_FILE_NAME = re.compile(r"(?P<folders>(?:[\w@.-]+/)*)[\w@-][\w@.-]*\.(?P<ext>[a-z][a-z0-9]{0,4})")
"""A file's path or name: folders, then a name with an extension (lower case, as most are)."""
_KNOWN_EXTENSIONS = frozenset(
    # source code and its build files
    "al asm astro bash bat bzl c cc cjs clj cljs cmake cpp cs css cts cu cuh cxx dart edn ejs erb "
    "erl f90 glsl go h hbs hcl hlsl hpp hrl hs java jl js jsx kt kts lean less lua mjs mk ml mts "
    "nim php ps1 psm1 pug py pyi rb rs sass scala scss sh sln sol sql swift tf ts tsx vb vue wgsl "
    "xaml zig zsh "
    # configuration, documents and agents' rule files
    "adoc bib cfg conf csv diff docx epub htm html ini ipynb json jsonc jsonl md mdc mdx mmd nix "
    "odt patch plist pptx proto puml qmd rmd rst srt sty svg tex toml tsv txt vtt xls xlsx xml "
    "yaml yml "
    # data, media, fonts, archives, models, certificates and binaries
    "avi bin bmp bz2 ckpt crt csr db deb dll dmg exe flac gguf gif gpx gz h5 ico jar jpeg jpg kml "
    "log m4a mkv mov mp3 mp4 msi npy npz ogg onnx otf p12 pdf pem pfx pkl png psd pt pth rar rpm "
    "so tar tgz tif tiff ttf wasm wav webm webp whl woff woff2 xz zip zst".split()
)
"""Extensions a bare name must end in to be taken for a file: common languages' sources and the
configuration, document, data and media files they work with. With a folder the spelling says
it is a path; without one, ``self.name``, ``Math.sin``, ``jest.mock`` or ``api.example.com`` are
spelled like a file but are an attribute, a call or a host. Extensions that are as often an
attribute (``self.lock``, ``process.env``, ``cmd``) are left out; the files of theirs every
project has are named in ``_KNOWN_NAMES``."""
_KNOWN_NAMES = frozenset(
    "Cargo.lock Gemfile.lock bun.lock flake.lock go.mod go.sum poetry.lock uv.lock "
    "yarn.lock".split()
)


def named_file_ops(messages: Sequence[Message]) -> Iterator[tuple[int, FileOp]]:
    """Each file the assistant's text names in a code span, once per message, with its index."""
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        texts = (b.text for b in message.content if isinstance(b, TextBlock))
        spans = (m[1] for text in texts for m in _CODE_SPAN.finditer(text))
        for path in dict.fromkeys(s for s in spans if _names_a_file(s)):
            yield index, FileOp(path, NAMED)


def _names_a_file(span: str) -> bool:
    """A code span spelled as a path (with a folder), or as a name with a file's extension."""
    spelled = _FILE_NAME.fullmatch(span)
    return spelled is not None and bool(
        spelled["folders"] or spelled["ext"] in _KNOWN_EXTENSIONS or span in _KNOWN_NAMES
    )
