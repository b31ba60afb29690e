"""What more than one API converter shares: tolerant JSON, tool-call arguments and data URLs.

Pure functions over wire values; nothing here knows a history, a file or a store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from contextwarden.model import FrozenDict, ImageBlock

RAW_ARGUMENTS = "raw_arguments"
"""Key holding tool-call arguments that are not a JSON object, so they are kept verbatim."""
DATA_URL = re.compile(r"^data:(?P<mt>[^;,]+);base64,(?P<data>.*)$", re.DOTALL)
"""A ``data:<media type>;base64,<data>`` URL, as OpenAI-style APIs carry images and files."""


def loads(text: str | bytes) -> Any:
    """``json.loads``; a document nested too deeply for the parser (about 1,000 levels, less when
    called deep in a stack) is a JSONDecodeError like any other malformed JSON, never a
    RecursionError. Values that parse but nest deeper than ``model.MAX_NESTING`` are refused
    later, when they are frozen into blocks."""
    try:
        return json.loads(text)
    except RecursionError:
        document = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
        raise json.JSONDecodeError(
            "objects and arrays nested too deeply for the JSON parser", document, 0
        ) from None


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (wrong types read as absent)."""
    return value if isinstance(value, Mapping) else {}


def parse_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments sent as JSON text: the object, or ``{RAW_ARGUMENTS: text}`` verbatim."""
    try:
        parsed = loads(text)
    except json.JSONDecodeError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS: text}


def image_from_url(url: str) -> ImageBlock:
    """An image block from an http(s) URL or a ``data:<type>;base64,`` URL."""
    match = DATA_URL.match(url)
    if match:
        return ImageBlock(
            FrozenDict({"type": "base64", "media_type": match["mt"], "data": match["data"]})
        )
    return ImageBlock(FrozenDict({"type": "url", "url": url}))
