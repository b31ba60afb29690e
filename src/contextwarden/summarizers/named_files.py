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
_FILE_NAME = re.compile(r"(?:[\w@.-]+/)*[\w@-][\w@.-]*\.[a-z][a-z0-9]{0,4}")
"""A file's path or name: folders, then a name with an extension (lower case, as most are)."""


def named_file_ops(messages: Sequence[Message]) -> Iterator[tuple[int, FileOp]]:
    """Each file the assistant's text names in a code span, once per message, with its index."""
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        texts = (b.text for b in message.content if isinstance(b, TextBlock))
        spans = (m[1] for text in texts for m in _CODE_SPAN.finditer(text))
        for path in dict.fromkeys(s for s in spans if _FILE_NAME.fullmatch(s)):
            yield index, FileOp(path, NAMED)
