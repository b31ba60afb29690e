"""ContextPolicy: the seed's numbers by default, scaled for small windows, nonsense refused."""

from __future__ import annotations

import dataclasses

import pytest

from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.structured_policy import StructuredPolicy


def test_defaults_are_the_seed_numbers() -> None:
    policy = ContextPolicy()
    assert policy.context_window == 200_000
    assert policy.max_output_reserve == 20_000
    assert policy.autocompact_buffer == 13_000
    assert policy.effective_window == 180_000
    assert policy.autocompact_threshold == 167_000
    assert policy.warning_threshold == 160_000
    assert policy.keep_recent_turns == 10
    assert policy.max_consecutive_failures == 3
    assert policy.result_limit("Bash") == 30_000
    assert policy.result_limit("bash") == 30_000
    assert policy.result_limit("Read") == policy.default_max_result_chars
    assert policy.keep_recent_tool_results == 3
    assert policy.idle_minutes == 60
    assert policy.cleared_marker == "[Old tool result content cleared]"
    assert policy.compactable_tools == (
        "Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write",
    )  # fmt: skip
    assert (policy.max_files, policy.max_tokens_per_file, policy.restore_budget) == (
        5,
        5_000,
        50_000,
    )
    assert policy.min_saving == 20_000


def test_small_window_scales_reserve_and_buffer() -> None:
    policy = ContextPolicy(context_window=30_000)
    assert policy.max_output_reserve == 3_000
    assert policy.autocompact_buffer == 1_950
    assert policy.effective_window == 27_000
    assert policy.autocompact_threshold == 25_050
    assert policy.microcompact_threshold < policy.autocompact_threshold
    assert policy.message_result_tokens == 5_400


def test_explicit_numbers_win_over_scaling() -> None:
    policy = ContextPolicy(context_window=30_000, max_output_reserve=1_000, autocompact_buffer=0)
    assert policy.autocompact_threshold == 29_000


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"context_window": 0}, "context_window"),
        ({"autocompact_buffer": -1}, "autocompact_buffer"),
        ({"warning_ratio": 1.5}, "warning_ratio"),
        ({"keep_recent_turns": 0}, "keep_recent_turns"),
        ({"idle_minutes": 0}, "idle_minutes"),
        ({"max_result_chars": {"Bash": -5}}, "max_result_chars"),
        ({"context_window": 1_000, "max_output_reserve": 900, "autocompact_buffer": 100}, "window"),
    ],
)
def test_nonsense_is_refused_naming_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        ContextPolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ContextPolicy().context_window = 1  # type: ignore[misc]


def test_reattached_files_fit_a_small_window() -> None:
    """Re-read files take at most ``restore_window_ratio`` of the effective window, so a summary
    at 8,000 tokens can still shrink the context; at 200,000 the 50,000 budget stands."""
    assert ContextPolicy().reattach_tokens == 50_000
    small = ContextPolicy(context_window=8_000)
    assert small.reattach_tokens == int(small.effective_window * 0.3) < 5_000


def test_the_kept_tail_gives_up_what_the_summary_floor_takes_at_a_small_window() -> None:
    """A summary and the tail kept verbatim share the room: 10 % and 20 % of the window, until
    the summary's floor (8,000 tokens, at most 25 % of the window) takes more than 10 %."""
    assert ContextPolicy().keep_tokens == 40_000  # 200,000: 20 %
    assert ContextPolicy(context_window=80_000).keep_tokens == 16_000  # the floor is 10 % here
    assert ContextPolicy(context_window=40_000).keep_tokens == 4_000  # 8,000 - (8,000 - 4,000)
    assert ContextPolicy(context_window=20_000).keep_tokens == 1_000  # 5 % from 25 % - 10 %
    assert ContextPolicy(context_window=40_000, summary_keep_tokens=9_000).keep_tokens == 9_000
    for window in (10_000, 30_000, 40_000, 60_000, 80_000, 200_000):
        policy, summary = (
            ContextPolicy(context_window=window),
            StructuredPolicy(context_window=window),
        )
        assert summary.budget + policy.keep_tokens == round(0.3 * window)


def test_the_kept_tail_leaves_room_under_the_threshold_for_a_large_preamble() -> None:
    policy = ContextPolicy(context_window=30_000, summary_keep_tokens=6_000)
    assert policy.kept_tail_budget(2_000) == policy.keep_tokens  # a small preamble: unchanged
    room = policy.autocompact_threshold - 20_000
    assert policy.kept_tail_budget(20_000) == room // 2 < policy.keep_tokens
    assert policy.kept_tail_budget(40_000) == 0
    whole = ContextPolicy(context_window=30_000, summary_keep_tokens=6_000, summary_room_ratio=1.0)
    assert whole.kept_tail_budget(20_000) == min(room, policy.keep_tokens)


def test_autocompact_backs_off_for_the_autocompact_buffer_of_growth() -> None:
    """After a summary that would not save tokens, autocompact waits for as much growth as the
    room between its threshold and the effective window."""
    for window in (200_000, 40_000, 8_000):
        policy = ContextPolicy(context_window=window)
        assert policy.retry_after == policy.effective_window - policy.autocompact_threshold
    assert ContextPolicy().retry_after_tokens == 13_000
    assert ContextPolicy(context_window=40_000).retry_after_tokens == 2_600
    assert ContextPolicy(retry_after_tokens=1_000).retry_after == 1_000
    with pytest.raises(ValueError, match="retry_after_tokens"):
        ContextPolicy(retry_after_tokens=-1)
