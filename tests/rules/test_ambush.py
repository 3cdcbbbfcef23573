"""Tests for omen_core.rules.ambush: the time-waited table (C17) and the surprise tiers (C18)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.ambush import TIME_WAITED, ambush_difficulty, band, surprise_tier


class TestAmbushDifficulty:
    def test_under_a_minute_uses_lowest_plus_2(self) -> None:
        """§Determine Ambush, C17: Stealth rolls 9, 14, 12 and less than a minute waited: 9 + 2 = 11."""
        assert ambush_difficulty([9, 14, 12], "under_a_minute") == 11

    def test_one_to_two_minutes_uses_average_rounded_down_plus_3(self) -> None:
        """C17: (9 + 14 + 12) / 3 = 11.67, rounded down 11, + 3 = 14."""
        assert ambush_difficulty([9, 14, 12], "one_to_two_minutes") == 14

    def test_three_minutes_uses_highest_plus_4(self) -> None:
        """C17: highest 14 + 4 = 18."""
        assert ambush_difficulty([9, 14, 12], "three_minutes_or_more") == 18

    def test_single_ambusher(self) -> None:
        """C17 with one ambusher: lowest, average and highest are the same roll 10: 12, 13, 14."""
        assert [ambush_difficulty([10], t) for t in
                ("under_a_minute", "one_to_two_minutes", "three_minutes_or_more")] == [12, 13, 14]

    def test_no_ambusher_is_an_error(self) -> None:
        """An ambush without ambushers has no difficulty."""
        with pytest.raises(ValueError):
            ambush_difficulty([], "under_a_minute")


class TestSurpriseTier:
    @pytest.mark.parametrize("roll, tier", [(16, "alert"), (15, "partial"), (11, "partial"),
                                            (10, "complete"), (3, "complete")])
    def test_boundaries_at_difficulty_15(self, roll: int, tier: str) -> None:
        """C18 at D = 15: D + 1 Alert; D (a tie) Partial; D − 4 Partial; D − 5 (the text's 10) Complete."""
        assert surprise_tier(roll, 15) == tier

    @given(st.integers(-10, 40), st.integers(-10, 40))
    def test_tiers_partition_the_rolls(self, roll: int, difficulty: int) -> None:
        """C18 for all rolls: Alert iff roll > D, Complete iff roll ≤ D − 5, Partial otherwise."""
        tier = surprise_tier(roll, difficulty)
        assert (tier == "alert") == (roll > difficulty)
        assert (tier == "complete") == (roll <= difficulty - 5)


class TestBand:
    @pytest.mark.parametrize("minutes, expected", [
        (0, "under_a_minute"), (0.999, "under_a_minute"), (1, "one_to_two_minutes"), (2, "one_to_two_minutes"),
        (2.5, "one_to_two_minutes"), (2.999, "one_to_two_minutes"), (3, "three_minutes_or_more"),
        (60, "three_minutes_or_more")])
    def test_boundaries(self, minutes: float, expected: str) -> None:
        """C30: under 1 minute; from 1 up to, not including, 3; 3 or more."""
        assert band(minutes) == expected

    @given(st.floats(0, 1e6, allow_nan=False), st.floats(0, 1e6, allow_nan=False))
    def test_bands_cover_every_time_in_order(self, a: float, b: float) -> None:
        """C30: every time waited has a band (no gap), and a longer wait never falls in an earlier band."""
        lo, hi = sorted((a, b))
        assert TIME_WAITED.index(band(lo)) <= TIME_WAITED.index(band(hi))
