"""The y scales of the report's charts: a linear or log range, its tick values and their labels.

A scale maps a value to a share of the plot's height (0 at the bottom, 1 at the top); the chart
turns shares into pixels. Ticks are round numbers a reader can add up in their head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Unit = Literal["tokens", "usd", "percent"]
"""What a chart's values count; it picks tick labels here and hover text in the page's script."""

TARGET_TICKS = 8
"""At most about this many labelled ticks on a linear axis (the next round step up is taken)."""
NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
"""Linear tick steps are one of these times a power of ten."""
LOG_TICK_DIGITS = (1, 2, 5)
"""A log axis is labelled at 1, 2 and 5 of each decade: every digit crowds."""
THOUSAND = 1_000
MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Scale:
    """One way to look at a chart: a button label and the y range it shows."""

    label: str
    low: float
    high: float
    log: bool = False

    def share(self, value: float) -> float:
        """Where ``value`` sits between ``low`` (0.0) and ``high`` (1.0); outside is clipped by
        the chart. On a log scale values at or below zero sit at the bottom."""
        if self.log:
            floor = math.log10(self.low)
            spot = math.log10(value) if value > 0 else floor
            return (spot - floor) / (math.log10(self.high) - floor)
        return (value - self.low) / (self.high - self.low)

    def ticks(self) -> list[float]:
        return log_ticks(self.low, self.high) if self.log else linear_ticks(self.low, self.high)


def linear_ticks(low: float, high: float, target: int = TARGET_TICKS) -> list[float]:
    """Round values from ``low`` to ``high``, a round step apart."""
    step = nice_step((high - low) / max(1, target))
    first = math.ceil(low / step - 1e-9)
    count = math.floor(high / step + 1e-9) - first + 1
    return [round((first + i) * step, 10) for i in range(max(0, count))]


def nice_step(raw: float) -> float:
    """The smallest step of 1, 2, 2.5 or 5 times a power of ten that is at least ``raw``."""
    if raw <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(n * power for n in NICE_STEPS if n * power >= raw * (1 - 1e-9))


def log_ticks(low: float, high: float) -> list[float]:
    """1, 2 and 5 times each power of ten between ``low`` and ``high``."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    values = (d * 10.0**k for k in range(first, last + 1) for d in LOG_TICK_DIGITS)
    return [v for v in values if low <= v <= high]


def integer_ticks(last: int, target: int = TARGET_TICKS) -> list[int]:
    """Ticks for the request axis, 0 … ``last``: whole requests, a round step apart."""
    step = max(1, int(nice_step(last / target))) if last > 0 else 1
    return list(range(0, last + 1, step))


def tick_label(value: float, unit: Unit, step: float = 1.0) -> str:
    """A short label: ``20k`` tokens, ``$12.50``, ``80%``."""
    if unit == "usd":
        places = 0 if step >= 1 else min(4, max(1, -math.floor(math.log10(step))))
        return f"${value:,.{places}f}"
    if unit == "percent":
        return f"{value:g}%"
    return compact(value)


def compact(value: float) -> str:
    """``950``, ``12k``, ``12.5k``, ``1.2M``."""
    for size, suffix in ((MILLION, "M"), (THOUSAND, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:g}"


def padded_top(peak: float, headroom: float) -> float:
    """A linear range's top: ``peak`` times ``headroom``, up to the next round tick."""
    top = max(peak * headroom, 1e-9)
    step = nice_step(top / TARGET_TICKS)
    return math.ceil(top / step) * step
