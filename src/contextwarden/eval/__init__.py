"""Evaluation: replay sessions through context strategies, check fact retention, report, demo."""

from contextwarden.eval.probes import Probe, ProbeSet, default_probes, load_probes
from contextwarden.eval.replay import replay
from contextwarden.eval.retention import Retention
from contextwarden.eval.runs import Mark, ReplayResult, StrategyRun
from contextwarden.eval.strategies import STRATEGIES, STRATEGY_NAMES, StrategySpec

__all__ = [
    "STRATEGIES",
    "STRATEGY_NAMES",
    "Mark",
    "Probe",
    "ProbeSet",
    "ReplayResult",
    "Retention",
    "StrategyRun",
    "StrategySpec",
    "default_probes",
    "load_probes",
    "replay",
]
