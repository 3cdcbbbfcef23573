"""Tests for omen_core.rules.checks: the roll primitive, static and contested checks, saves."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.checks import (
    contest_winner,
    roll_total,
    save_succeeds,
    static_outcome,
)

totals = st.integers(-50, 100)


class TestRollTotal:
    def test_attribute_check(self) -> None:
        """C1: an attribute check is die + bonus + situational: 6 on the die, bonus 2, -1 = 7."""
        assert roll_total(6, 2, modifiers=[-1]) == 7

    def test_skill_roll(self) -> None:
        """C2: a skill roll adds the skill level: 4 + AGI 2 + Stealth 3 + high ground 2 = 11."""
        assert roll_total(4, 2, 3, [2]) == 11

    def test_negative_bonus(self) -> None:
        """C1: a bonus may be negative: 3 on the die with bonus -2 totals 1."""
        assert roll_total(3, -2) == 1


class TestStaticCheck:
    def test_higher_succeeds(self) -> None:
        """C16: a total of 13 against difficulty 12 succeeds."""
        assert static_outcome(13, 12) == "success"

    def test_tie_is_a_tie(self) -> None:
        """C16: 12 against 12 is recorded as a tie, never a success."""
        assert static_outcome(12, 12) == "tie"

    def test_lower_fails(self) -> None:
        """C16: 11 against 12 fails."""
        assert static_outcome(11, 12) == "failure"

    @given(totals, totals)
    def test_success_iff_strictly_higher(self, total: int, difficulty: int) -> None:
        """C16 for all totals: success iff total > difficulty, tie iff equal."""
        outcome = static_outcome(total, difficulty)
        assert (outcome == "success") == (total > difficulty)
        assert (outcome == "tie") == (total == difficulty)


class TestContest:
    def test_tie_favours_the_defender(self) -> None:
        """C16 / §Determining the Outcome: 10 vs 10 goes to the defender."""
        assert contest_winner(10, 10) == "defender"

    def test_initiator_must_exceed(self) -> None:
        """C16: the initiator wins with 11 against 10."""
        assert contest_winner(11, 10) == "initiator"

    @given(totals, totals)
    def test_initiator_wins_iff_strictly_higher(self, a: int, d: int) -> None:
        """C16 for all totals: the initiator wins iff its total is strictly higher."""
        assert (contest_winner(a, d) == "initiator") == (a > d)


class TestSave:
    def test_saver_wins_ties(self) -> None:
        """C15 / §Saves and Opposed Checks: the saver succeeds on a tie, unlike an attack."""
        assert save_succeeds(9, 9) is True

    def test_saver_below_fails(self) -> None:
        """C15: 8 against 9 fails the save."""
        assert save_succeeds(8, 9) is False

    @given(totals, totals)
    def test_save_and_contest_tie_rules_are_mirror_images(self, s: int, o: int) -> None:
        """C15 vs C16: the save succeeds exactly when the opposing side could not win a contest as initiator."""
        assert save_succeeds(s, o) == (contest_winner(o, s) == "defender")


class TestNoFumble:
    def test_a_one_is_no_fumble(self) -> None:
        """§Failure and Fumbles: there is no universal fumble: a 1 on the die + STR 5 + level 3 = 9 beats 8."""
        assert static_outcome(roll_total(1, 5, 3), 8) == "success"

    def test_failure_is_simply_failure(self) -> None:
        """§Failure and Fumbles: a failed check is a failure and nothing more: 2 + 0 against 8 fails."""
        assert static_outcome(roll_total(2, 0), 8) == "failure"
