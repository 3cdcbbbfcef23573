"""A run's summary (omen_replay/simulate/summary.py): counted from the records, in index order."""

from __future__ import annotations

from pathlib import Path

from omen_replay.simulate.encounter import load_encounter
from omen_replay.simulate.play import CombatantRecord, FightRecord
from omen_replay.simulate.stats import rate
from omen_replay.simulate.summary import Tally, compare, summarise
from tests.replay.simulate.encounters import mirror_duel


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
    0, 12, 4; Bo went down in 2 fights and was first down in both; the longest fight is #3, the shortest #2; the
    upset (south won once) is #1."""
    s = summarise(load_encounter(mirror_duel(tmp_path)), RECORDS, {"north": "aggressive", "south": "cautious"})
    assert [(x.side, x.policy, x.wins) for x in s.sides] == [("north", "aggressive", rate(2, 4)),
                                                            ("south", "cautious", rate(1, 4))]
    assert (s.fights, s.draws, s.rounds.mean, s.rounds_histogram) == (4, rate(1, 4), 4.75,
                                                                       ((2, 1), (3, 1), (5, 1), (9, 1)))
    ash, bo = s.combatants
    assert (ash.hp_left.mean, ash.down, ash.falls_first, ash.down_round.mean) == (5.25, rate(1, 4), rate(1, 4), 5.0)
    assert (bo.down, bo.falls_first, s.no_one_down) == (rate(2, 4), rate(2, 4), rate(1, 4))
    assert [p.index for p in s.extremes.longest] == [3, 1, 0] and s.extremes.shortest[0].index == 2
    assert [p.index for p in s.extremes.upsets] == [1] and "south (who win 25% of fights)" in s.extremes.upsets[0].why


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
