"""Prices per model: the shipped table (``prices.json``, dated, with its sources) and overrides.

A model name is looked up as given, then without a trailing date (``claude-opus-4-5-20251101``
→ ``claude-opus-4-5``). Overrides come from a JSON file shaped like the shipped one or from
``MODEL=field:value,…`` (fields not given are derived from ``input`` by the provider's ratios).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from contextwarden.errors import PricingError

Provider = Literal["anthropic", "openai"]
PRICE_FILE = "prices.json"
WRITE_5M_RATIO = 1.25
"""Anthropic: a 5-minute cache write costs 1.25 times base input."""
WRITE_1H_RATIO = 2.0
"""Anthropic: a 1-hour cache write costs 2 times base input."""
READ_RATIO = 0.1
"""Anthropic: a cache hit costs 0.1 times base input (the default for a new OpenAI model too)."""
DEFAULT_MIN_CACHEABLE = 1024
"""Minimum cacheable prefix when an override does not say (Anthropic Sonnet, OpenAI)."""
PRICE_DIGITS = 6
"""Derived prices are rounded to this many decimals (no 0.6000000000000001)."""
MAX_PRICE_FILE_BYTES = 10_000_000
"""A price file larger than this is refused (the shipped one is a few kilobytes)."""
PER_TOKENS = 1_000_000
"""Prices are quoted per million tokens."""
_DATE_SUFFIX = re.compile(r"-\d{8}$")


@dataclass(frozen=True, slots=True)
class Price:
    """One model's prices in USD per million tokens, and its cache rules' model-specific part."""

    model: str
    provider: Provider
    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    """Anthropic 5-minute write; OpenAI charges no write surcharge (this equals ``input``)."""
    cache_write_1h: float
    min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE
    """A prefix shorter than this is never cached."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            kind = int if f.name == "min_cacheable_tokens" else int | float
            if f.name not in ("model", "provider") and (
                not isinstance(value, kind) or not _finite(value) or value < 0
            ):
                what = "a whole number" if kind is int else "a finite number"
                raise PricingError(
                    f"price of {self.model!r}: {f.name} must be {what} >= 0, got {_shown(value)}"
                )
        if self.provider not in ("anthropic", "openai"):
            raise PricingError(
                f"price of {self.model!r}: provider must be 'anthropic' or 'openai', "
                f"got {self.provider!r}"
            )


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model, with the date and sources they were taken from."""

    models: Mapping[str, Price]
    date: str
    sources: tuple[str, ...] = ()

    def get(self, model: str) -> Price:
        """The price of ``model`` (dated names fall back to their undated form)."""
        for name in (model, _DATE_SUFFIX.sub("", model)):
            if name in self.models:
                return self.models[name]
        known = ", ".join(sorted(self.models))
        raise PricingError(
            f"no price for model {model!r}; known: {known}. Give one with "
            f"--prices '{model}=input:…,output:…' or a JSON file"
        )

    def find(self, model: str | None) -> Price | None:
        """Like ``get``, but ``None`` for an unknown or missing model."""
        if model is None:
            return None
        try:
            return self.get(model)
        except PricingError:
            return None

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s models added or replaced."""
        sources = self.sources + tuple(s for s in other.sources if s not in self.sources)
        return PriceTable({**self.models, **other.models}, other.date or self.date, sources)


def default_prices() -> PriceTable:
    """The table shipped in ``contextwarden/cost/prices.json``."""
    text = resources.files("contextwarden.cost").joinpath(PRICE_FILE).read_text("utf-8")
    return parse_table(json.loads(text), PRICE_FILE)


def load_prices(spec: str | Path, base: PriceTable | None = None) -> PriceTable:
    """``base`` (default: the shipped table) overridden by ``spec``: a JSON file shaped like
    ``prices.json`` (``{"models": {...}}``, date and sources optional), or ``MODEL=field:value,…``
    (e.g. ``claude-opus-4-6=input:5,output:25``)."""
    table = base or default_prices()
    text = str(spec)
    if "\x00" in text:
        raise PricingError("--prices: a price spec or file name cannot hold a NUL character")
    if "=" in text and not Path(text).exists():
        model, _, assignments = text.partition("=")
        return table.merged(PriceTable({model: _override(table, model, assignments)}, ""))
    path = Path(text)
    return table.merged(parse_table(_read_json(path), str(path)))


def _read_json(path: Path) -> Any:
    """The JSON document in the regular file ``path`` (never a FIFO, which would block), strict
    UTF-8, no ``NaN``/``Infinity``, at most ``MAX_PRICE_FILE_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise PricingError(f"{path}: cannot read the price file: {exc.strerror}") from exc
    with open(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PricingError(f"{path}: not a regular file; give a JSON price file")
        if info.st_size > MAX_PRICE_FILE_BYTES:
            raise PricingError(
                f"{path}: {info.st_size:,} bytes is too large for a price file "
                f"(at most {MAX_PRICE_FILE_BYTES:,})"
            )
        data = file.read(MAX_PRICE_FILE_BYTES + 1)
    try:
        return json.loads(data.decode("utf-8"))  # NaN/Infinity parse, and Price refuses them
    except UnicodeDecodeError as exc:
        raise PricingError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8") from exc
    except json.JSONDecodeError as exc:
        raise PricingError(f"{path}: line {exc.lineno}: not JSON: {exc.msg}") from exc
    except ValueError as exc:  # an integer of more digits than Python converts
        raise PricingError(f"{path}: not a usable price file: {exc}") from exc
    except RecursionError as exc:
        raise PricingError(f"{path}: JSON nested too deeply for a price file") from exc


def _shown(value: Any) -> str:
    """``value`` as the error shows it: short, whatever it is."""
    if isinstance(value, int) and not _finite(value):
        return "a number too large"
    return f"{value!r:.40}"


def _finite(value: Any) -> bool:
    """Whether ``value`` is a number (not a bool) a float can hold, and not NaN or infinite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer of hundreds of digits
        return False


def parse_table(data: Any, where: str) -> PriceTable:
    """A PriceTable from the JSON shape of ``prices.json``; errors name ``where`` and the model."""
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise PricingError(f"{where}: expected an object with a 'models' object")
    models = {name: _price(name, entry, where) for name, entry in data["models"].items()}
    sources, date = data.get("sources", []), data.get("date", "")
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise PricingError(f"{where}: 'sources' must be a list of strings")
    if not isinstance(date, str):
        raise PricingError(f"{where}: 'date' must be a string such as \"2026-12-01\"")
    return PriceTable(models, date, tuple(sources))


def _price(name: str, entry: Any, where: str) -> Price:
    if not isinstance(entry, dict):
        raise PricingError(f"{where}: model {name!r}: expected an object of prices")
    provider = entry.get("provider", "anthropic")
    known = {f.name for f in fields(Price)} - {"model"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise PricingError(f"{where}: model {name!r}: unknown field {unknown[0]!r}")
    if "input" not in entry or "output" not in entry:
        raise PricingError(f"{where}: model {name!r}: 'input' and 'output' are required")
    values = {"provider": provider, **_derived(provider, entry["input"]), **entry}
    try:
        return Price(model=name, **values)
    except TypeError as exc:
        raise PricingError(f"{where}: model {name!r}: {exc}") from exc


def _derived(provider: str, base: Any) -> dict[str, Any]:
    """The prices a provider derives from base input, for fields an entry leaves out."""
    if not _finite(base):  # nothing to derive from: Price refuses the base, naming the field
        return dict.fromkeys(("cache_read", "cache_write_5m", "cache_write_1h"), base)
    read = round(base * READ_RATIO, PRICE_DIGITS)
    if provider == "openai":
        return {"cache_read": read, "cache_write_5m": base, "cache_write_1h": base}
    return {
        "cache_read": read,
        "cache_write_5m": round(base * WRITE_5M_RATIO, PRICE_DIGITS),
        "cache_write_1h": round(base * WRITE_1H_RATIO, PRICE_DIGITS),
    }


def _override(table: PriceTable, model: str, assignments: str) -> Price:
    """``field:value,…`` over the model's current price (or a new Anthropic-style one)."""
    values: dict[str, Any] = {}
    for item in filter(None, (a.strip() for a in assignments.split(","))):
        key, sep, raw = item.partition(":")
        if not sep:
            raise PricingError(f"--prices {model}=…: expected field:value, got {item!r}")
        values[key.strip()] = raw.strip() if key.strip() == "provider" else _number(model, raw)
    current = table.find(model)
    if current is None:
        return _price(model, values, "--prices")
    entry = {f.name: getattr(current, f.name) for f in fields(Price) if f.name != "model"}
    if "input" in values:  # the ratios follow a new base price unless given too
        entry.update(_derived(str(values.get("provider", current.provider)), values["input"]))
    return replace(current, **{**entry, **values})


def _number(model: str, raw: str) -> float | int:
    try:
        value = float(raw)
    except ValueError:
        raise PricingError(f"--prices {model}=…: {raw.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise PricingError(f"--prices {model}=…: {raw.strip()!r} is not a finite number")
    return int(value) if value.is_integer() else value
