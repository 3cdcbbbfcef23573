"""A run's summary (omen_replay/simulate/summary.py): counted from the records, in index order."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_replay.simulate.encounter import load_encounter
from omen_replay.simulate.play import CombatantRecord, FightRecord
from omen_replay.simulate.stats import rate
from omen_replay.simulate.summary import Tally, compare, summarise
from tests.fights import present
from tests.replay.simulate.encounters import mirror_duel, three_sides


def record(index: int, winner: str | None, rounds: int, ash_hp: int, bo_hp: int, first: str | None = None
           ) -> FightRecord:
    """A duel's record: Ash (north) and Bo (south) with the HP given; whoever is at 0 went down in the last round."""
    def one(hp: int) -> CombatantRecord:
        return CombatantRecord(hp=hp, will=4, dealt=12 - hp, taken=12 - hp, down=rounds if hp == 0 else None)

    return FightRecord(index=index, winner=winner, defeated={"north": "south", "south": "north"}.get(winner or ""),
                       ended="defeated" if winner else "round_limit", rounds=rounds, first_down=first,
                       combatants=(one(ash_hp), one(bo_hp)), commands=10, events=50)


RECORDS = [record(0, "north", 3, 5, 0, "bo"), record(1, "south", 5, 0, 2, "ash"), record(2, "north", 2, 12, 0, "bo"),
           record(3, None, 9, 4, 4)]


def test_the_summary_counts_the_records(tmp_path: Path) -> None:
    """C33: two wins of four for north, one for south, one draw; rounds 3, 5, 2, 9 (mean 4.75); Ash's HP left 5,
    0, 12, 4; Bo went down in 2 fights and was first down in both; the longest fight is #3 (alone at 9 rounds: the
    only one listed), the shortest #2; the upset (south won once) is #1."""
    s = summarise(load_encounter(mirror_duel(tmp_path)), RECORDS, {"north": "aggressive", "south": "cautious"})
    assert [(x.side, x.policy, x.wins) for x in s.sides] == [("north", "aggressive", rate(2, 4)),
                                                            ("south", "cautious", rate(1, 4))]
    assert (s.fights, s.draws, s.rounds.mean, s.rounds_histogram) == (4, rate(1, 4), 4.75,
                                                                       ((2, 1), (3, 1), (5, 1), (9, 1)))
    ash, bo = s.combatants
    assert (ash.hp_left.mean, ash.down, ash.falls_first, present(ash.down_round).mean) == (5.25, rate(1, 4),
                                                                                            rate(1, 4), 5.0)
    assert (bo.down, bo.falls_first, s.no_one_down) == (rate(2, 4), rate(2, 4), rate(1, 4))
    assert [(p.index, p.why) for p in s.extremes.longest] == [(3, "the longest: 9 rounds")]
    assert [(p.index, p.why) for p in s.extremes.shortest] == [(2, "the shortest: 2 rounds")]
    assert [p.index for p in s.extremes.upsets] == [1] and "south (who win 25.0% of fights)" in s.extremes.upsets[0].why


def test_a_combatant_that_never_went_down_has_no_round_it_went_down_in(tmp_path: Path) -> None:
    """Ash won both fights at full HP: he went down in none, so his ``down_round`` is None (null in the run's
    JSON), not a mean of 0 (a round no fight has); Bo's is the mean of 3 and 2."""
    s = summarise(load_encounter(mirror_duel(tmp_path)), [RECORDS[0], RECORDS[2]], {"north": "aggressive",
                                                                                      "south": "cautious"})
    ash, bo = s.combatants
    assert (ash.down, ash.down_round) == (rate(0, 2), None)
    assert (bo.down, present(bo.down_round).mean) == (rate(2, 2), 2.5)


@settings(max_examples=200, deadline=None)
@given(rounds=st.lists(st.integers(1, 6), min_size=1, max_size=40))
def test_the_longest_and_the_shortest_are_what_they_are_called(tmp_path_factory: pytest.TempPathFactory,
                                                               rounds: list[int]) -> None:
    """Whatever the fights' lengths: every fight listed as the longest lasted the most rounds of the run (and
    every shortest the fewest), the lowest indices of those first, up to three; it is "the longest" only when no
    other fight lasted as long, else "one of the N longest", N the fights that did. (The tester's run of rounds
    [[1, 91], [2, 107], [3, 2]] listed a 2-round fight as "the longest" beside the two of 3.)"""
    encounter = load_encounter(mirror_duel(tmp_path_factory.mktemp("duel")))
    records = [record(i, "north", n, 5, 0, "bo") for i, n in enumerate(rounds)]
    s = summarise(encounter, records, {"north": "aggressive", "south": "aggressive"})
    for picks, end, word in ((s.extremes.longest, max(rounds), "longest"),
                             (s.extremes.shortest, min(rounds), "shortest")):
        at = [i for i, n in enumerate(rounds) if n == end]
        unit = "round" if end == 1 else "rounds"
        why = f"the {word}: {end} {unit}" if len(at) == 1 else f"one of the {len(at)} {word}: {end} {unit}"
        assert [(p.index, p.rounds, p.why) for p in picks] == [(i, end, why) for i in at[:3]]


def test_the_widest_interval_is_the_largest_of_every_rate(tmp_path: Path) -> None:
    """--until-ci's measure: the largest half-width among the win, draw, down, first-down and no-one rates."""
    encounter = load_encounter(mirror_duel(tmp_path))
    tally = Tally(sides=encounter.sides, ids=("ash", "bo"))
    for rec in RECORDS:
        tally.add(rec)
    assert tally.widest() == max((r.high - r.low) / 2 for r in tally.rates())
    assert len(tally.rates()) == 2 + 1 + 1 + 2 + 2 + 1


def test_every_side_down_is_counted_apart_from_draws_and_wins(tmp_path: Path) -> None:
    """C33: a fight ended with north defeated and nobody standing (``all_down``) is neither a win nor a draw: of
    four fights, north won 2, south 1, and 1 ended with every side down; no draws; A - B says so."""
    both = FightRecord(index=3, winner=None, defeated="north", ended="all_down", rounds=2, first_down="ash",
                       combatants=(CombatantRecord(hp=0, will=4, dealt=12, taken=12, down=2),
                                   CombatantRecord(hp=0, will=4, dealt=12, taken=12, down=2)), commands=9, events=40)
    records = [*RECORDS[:3], both]
    encounter = load_encounter(mirror_duel(tmp_path))
    s = summarise(encounter, records, {"north": "aggressive", "south": "aggressive"})
    assert ([x.wins for x in s.sides], s.draws, s.all_down) == ([rate(2, 4), rate(1, 4)], rate(0, 4), rate(1, 4))
    found = {d.what: d for d in compare(encounter, encounter, records, RECORDS).differences}
    assert (found["every side down"].difference, found["draws"].difference) == (0.25, -0.25)


def test_a_comparison_pairs_fight_i_with_fight_i(tmp_path: Path) -> None:
    """A against B: north's wins differ in fight 1 only (+1/4), each paired difference is the mean of the
    fight-by-fight differences."""
    encounter = load_encounter(mirror_duel(tmp_path))
    other = [RECORDS[0], record(1, "north", 5, 3, 0, "bo"), RECORDS[2], RECORDS[3]]
    found = {d.what: d for d in compare(encounter, encounter, other, RECORDS).differences}
    assert found["north wins"].difference == 0.25 and found["south wins"].difference == -0.25
    assert found["rounds"].difference == 0.0 and found["ash HP left"].difference == 0.75


def test_the_upset_line_gives_the_underdogs_share_as_the_win_rates_are_given(tmp_path: Path) -> None:
    """The underdog winning 89 of 200 fights (44.5 %) is said "who win 44.5% of fights", to a tenth of a percent as
    the report gives every win rate (it said 44 %, rounded half to even, where its own win line said 44.5 %)."""
    records = [record(i, "south" if i < 89 else "north", 3, 0 if i < 89 else 5, 5 if i < 89 else 0)
               for i in range(200)]
    s = summarise(load_encounter(mirror_duel(tmp_path)), records, {"north": "aggressive", "south": "aggressive"})
    assert s.sides[1].wins.rate == 0.445
    assert s.extremes.upsets[0].why == "an upset: south (who win 44.5% of fights) won with 5 of 12 HP left"


def test_with_three_sides_every_fight_is_a_side_defeated_with_no_winner(tmp_path: Path) -> None:
    """C33: with three sides a fight ends when the first side is down, two left standing: no winner. Each side's
    ``defeated_no_winner`` counts the fights it lost so (north 2, south 1, west 0 of 3), so that the wins, the draws,
    every side down and these add up to every fight; with two sides it is None (a side defeated leaves a winner)."""
    three = load_encounter(three_sides(tmp_path))

    def lost(index: int, side: str) -> FightRecord:
        hp = {"north": (0, 6, 6), "south": (6, 0, 6)}[side]
        return FightRecord(index=index, winner=None, defeated=side, ended="defeated", rounds=2, first_down=None,
                           combatants=tuple(CombatantRecord(hp=h, will=4, dealt=0, taken=6 - h,
                                                            down=2 if h == 0 else None) for h in hp),
                           commands=5, events=20)

    records = [lost(0, "north"), lost(1, "south"), lost(2, "north")]
    s = summarise(three, records, dict.fromkeys(three.sides, "aggressive"))
    assert [(x.side, x.wins.count, x.defeated_no_winner) for x in s.sides] == [
        ("north", 0, rate(2, 3)), ("south", 0, rate(1, 3)), ("west", 0, rate(0, 3))]
    assert sum(x.wins.count + (x.defeated_no_winner or rate(0, 3)).count for x in s.sides) + s.draws.count \
        + s.all_down.count == 3
    duel = summarise(load_encounter(mirror_duel(tmp_path)), RECORDS, {"north": "aggressive", "south": "cautious"})
    assert [x.defeated_no_winner for x in duel.sides] == [None, None]
    c = compare(three, three, records, records[::-1])
    assert [(d.what, d.a, d.difference) for d in c.differences if "defeated" in d.what] == [
        ("north defeated, no winner", 2 / 3, 0.0), ("south defeated, no winner", 1 / 3, 0.0),
        ("west defeated, no winner", 0.0, 0.0)]
