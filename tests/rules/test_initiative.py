"""Tests for omen_core.rules.initiative: highest first, AGI bonus, then roll-off groups (C19)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from omen_core.rules.initiative import break_ties, initiative_order


class TestInitiativeOrder:
    def test_highest_first(self) -> None:
        """C19: totals 8, 15, 11 go 15, 11, 8."""
        assert initiative_order({"a": 8, "b": 15, "c": 11}, {"a": 0, "b": 0, "c": 0}) == [["b"], ["c"], ["a"]]

    def test_tie_broken_by_agi_bonus(self) -> None:
        """§Determine Initiative: tied on 12, the higher AGI bonus (+3 over +1) goes first."""
        assert initiative_order({"a": 12, "c": 12}, {"a": 1, "c": 3}) == [["c"], ["a"]]

    def test_still_tied_stay_grouped_in_joined_order(self) -> None:
        """C19: tied on total and AGI bonus, they form one group (to roll off), in the order they joined."""
        assert initiative_order({"d": 12, "a": 12}, {"a": 1, "d": 1}) == [["d", "a"]]

    @given(st.dictionaries(st.sampled_from("abcdefgh"), st.tuples(st.integers(0, 20), st.integers(-2, 4)),
                           min_size=1))
    def test_groups_are_ordered_and_tied_within(self, entries: dict[str, tuple[int, int]]) -> None:
        """C19 for any rolls: groups descend by (total, AGI bonus), and each group shares both."""
        totals = {k: v[0] for k, v in entries.items()}
        agi = {k: v[1] for k, v in entries.items()}
        groups = initiative_order(totals, agi)
        keys = [{(totals[w], agi[w]) for w in g} for g in groups]
        assert all(len(k) == 1 for k in keys)
        flat = [next(iter(k)) for k in keys]
        assert flat == sorted(flat, reverse=True) and len(set(flat)) == len(flat)
        assert sorted(w for g in groups for w in g) == sorted(entries)


class TestBreakTies:
    def test_roll_off_orders_the_group(self) -> None:
        """C19: a roll-off of 5 against 9 puts the 9 first."""
        assert break_ties(["a", "d"], {"a": 5, "d": 9}) == [["d"], ["a"]]

    def test_tied_roll_off_stays_tied(self) -> None:
        """C19: equal roll-offs leave the group tied, to roll again."""
        assert break_ties(["a", "d"], {"a": 7, "d": 7}) == [["a", "d"]]
