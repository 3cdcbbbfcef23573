"""A run's summary, computed from its fights' records in index order: who wins (with Wilson intervals), in how many
rounds, who goes down and who first, HP and Will left, damage dealt and taken (means with intervals), the fights
worth a look (the longest, the shortest, the upsets), and the comparison of two runs on the same seeds.

A pure function of the records: the same fights give the same summary, byte for byte, however they were run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from .encounter import Encounter
from .play import Ended, FightRecord
from .stats import Difference, Mean, Rate, difference_of_means, difference_of_rates, half_width, mean, percent, rate

__all__ = ["SideSummary", "CombatantSummary", "Pick", "Extremes", "Summary", "Comparison", "Tally", "summarise",
           "compare"]


class SideSummary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A side: its policy (as ``--policy`` named it), and the fights it won (the only side standing when another
    was defeated, C33); ``policy_name``: the policy's own ``name`` (a policy of one's own named by its file or
    module); ``defeated_no_winner``: in an encounter of three sides or more, the fights that ended with this side
    defeated and two sides or more still standing, so no winner (C33 ends the fight when the first side is down);
    None with two sides, where a side defeated leaves a winner or no side standing."""

    side: str
    policy: str
    wins: Rate
    policy_name: str = ""
    defeated_no_winner: Rate | None = None


class CombatantSummary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A combatant over the run: HP and Will left at the end, final damage dealt and taken (after mitigation,
    C13), how often it went down (0 HP or out of the fight, C33) and was the first to, and the mean round it went
    down in when it did (``down_round``; null if it never went down: there is no round to average)."""

    id: str
    name: str
    side: str
    max_hp: int
    max_will: int
    hp_left: Mean
    will_left: Mean
    dealt: Mean
    taken: Mean
    down: Rate
    falls_first: Rate
    down_round: Mean | None


class Pick(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A fight worth a look: its index (``omen simulate --replay RUN INDEX`` rebuilds it), rounds, winner, why it
    was picked, how it ended (as its record's ``ended``), and the side defeated (as its record's ``defeated``:
    with three sides or more, a side may be defeated with no winner, C33)."""

    index: int
    rounds: int
    winner: str | None
    why: str
    ended: Ended | Literal[""] = ""
    defeated: str | None = None


class Extremes(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The fights worth a look: the longest (up to three of the fights that lasted the most rounds, none of
    another length), the shortest (likewise, of the fewest), and the upsets (the underdog's wins, its side's HP
    left highest first)."""

    longest: tuple[Pick, ...]
    shortest: tuple[Pick, ...]
    upsets: tuple[Pick, ...]


class Summary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a run of ``fights`` fights found: each side's wins (the only side standing when a side was defeated,
    C33); ``draws``: the fights still going at the end of the round limit, ended as the GM's call (record
    ``ended`` ``round_limit``); ``all_down``: the fights a side lost with no side left standing (every side down
    in the same blow: ``ended`` ``all_down``, no winner); the rounds; each combatant; ``no_one_down``: fights in
    which nobody went down; ``widest``: the largest half-width of any rate's interval (what ``--until-ci`` compares
    with its target); ``rounds_histogram``: how many fights lasted each number of rounds; ``extremes``: the
    fights worth a look. Every rate has its Wilson 95 % interval, every mean its normal one."""

    fights: int
    sides: tuple[SideSummary, ...]
    draws: Rate
    all_down: Rate = msgspec.field(default_factory=lambda: rate(0, 0))
    rounds: Mean
    rounds_histogram: tuple[tuple[int, int], ...]
    combatants: tuple[CombatantSummary, ...]
    no_one_down: Rate
    widest: float
    extremes: Extremes


class Comparison(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two runs on the same seeds (fight i of A and of B rolled the same dice in the same order while they went the
    same way): each difference A - B, paired and unpaired; and what is in one encounter only, so not compared: its
    sides (``sides_only_in_a``, ``sides_only_in_b``) and its combatants, by id (``combatants_only_in_a``,
    ``combatants_only_in_b``)."""

    fights: int
    differences: tuple[Difference, ...]
    sides_only_in_a: tuple[str, ...] = ()
    sides_only_in_b: tuple[str, ...] = ()
    combatants_only_in_a: tuple[str, ...] = ()
    combatants_only_in_b: tuple[str, ...] = ()

    def not_compared(self) -> str:
        """What the comparison leaves out, in words ("" if nothing): each side and combatant in one encounter
        only."""
        parts = [f"{what}{'s' if len(names) > 1 else ''} {', '.join(names)} (in {label} only)"
                 for what, names, label in (("side", self.sides_only_in_a, "A"), ("side", self.sides_only_in_b, "B"),
                                            ("combatant", self.combatants_only_in_a, "A"),
                                            ("combatant", self.combatants_only_in_b, "B")) if names]
        return "; ".join(parts)


@dataclass
class Tally:
    """The counts the rates are made of, added to fight by fight in index order: what ``--until-ci`` looks at
    after each batch (:meth:`widest`), without summing the whole run again."""

    sides: tuple[str, ...]
    ids: tuple[str, ...]
    n: int = 0
    wins: Counter[str] = field(default_factory=Counter)
    draws: int = 0
    all_down: int = 0
    down: Counter[str] = field(default_factory=Counter)
    first: Counter[str] = field(default_factory=Counter)
    nobody: int = 0
    no_winner: Counter[str] = field(default_factory=Counter)

    def add(self, rec: FightRecord) -> None:
        """Count one more fight."""
        self.n += 1
        if rec.winner is not None:
            self.wins[rec.winner] += 1
        elif rec.ended == "round_limit":
            self.draws += 1
        elif rec.ended == "all_down":
            self.all_down += 1
        elif rec.defeated is not None:  # a side defeated, two or more standing: no winner
            self.no_winner[rec.defeated] += 1
        for who, c in zip(self.ids, rec.combatants, strict=True):
            if c.down is not None:
                self.down[who] += 1
        if rec.first_down is None:
            self.nobody += 1
        else:
            self.first[rec.first_down] += 1

    def rates(self) -> list[Rate]:
        """Every rate the summary reports."""
        n = self.n
        return [*(rate(self.wins[s], n) for s in self.sides), rate(self.draws, n), rate(self.all_down, n),
                *(rate(self.down[w], n) for w in self.ids), *(rate(self.first[w], n) for w in self.ids),
                rate(self.nobody, n), *(rate(self.no_winner[s], n) for s in self.sides if self.many_sides())]

    def many_sides(self) -> bool:
        """Whether a fight can end with no winner and a side defeated: three sides or more."""
        return len(self.sides) > 2

    def widest(self) -> float:
        """The largest half-width among the rates' intervals (1.0 before any fight)."""
        return max(half_width(r) for r in self.rates()) if self.n else 1.0


def _mean_of(values: Sequence[int], lowest: int = 0, highest: int | None = None) -> Mean:
    """The mean of ``values`` (HP, Will, damage, rounds: none below ``lowest``, none above ``highest`` if given),
    its interval kept within them."""
    return mean(sum(values), sum(v * v for v in values), len(values), lowest, highest)


def summarise(encounter: Encounter, records: Sequence[FightRecord], policies: dict[str, str],
              names: dict[str, str] | None = None) -> Summary:
    """The summary of a run's ``records`` (in index order) of ``encounter``, its sides played by ``policies``
    (``names``: each policy's own name, by what ``policies`` call it)."""
    sheets = encounter.combatants
    ids = tuple(s.id for s in sheets)
    tally = Tally(sides=encounter.sides, ids=ids)
    for rec in records:
        tally.add(rec)
    n = tally.n
    combatants = []
    for i, s in enumerate(sheets):
        mine = [rec.combatants[i] for rec in records]
        combatants.append(CombatantSummary(
            id=s.id, name=s.name, side=s.side, max_hp=s.hp, max_will=s.will,
            hp_left=_mean_of([c.hp for c in mine], 0, s.hp), will_left=_mean_of([c.will for c in mine], 0, s.will),
            dealt=_mean_of([c.dealt for c in mine]), taken=_mean_of([c.taken for c in mine]),
            down=rate(tally.down[s.id], n), falls_first=rate(tally.first[s.id], n),
            down_round=_mean_of(fell, 1) if (fell := [c.down for c in mine if c.down is not None]) else None))
    histogram = Counter(rec.rounds for rec in records)
    return Summary(
        fights=n,
        sides=tuple(SideSummary(side=side, policy=policies[side], wins=rate(tally.wins[side], n),
                                policy_name=(names or {}).get(policies[side], policies[side]),
                                defeated_no_winner=rate(tally.no_winner[side], n) if tally.many_sides() else None)
                    for side in encounter.sides),
        draws=rate(tally.draws, n), all_down=rate(tally.all_down, n),
        rounds=_mean_of([rec.rounds for rec in records], 1),
        rounds_histogram=tuple(sorted(histogram.items())), combatants=tuple(combatants),
        no_one_down=rate(tally.nobody, n), widest=tally.widest(),
        extremes=_extremes(encounter, records, tally))


def _rounds(n: int) -> str:
    return f"{n} round{'s' if n != 1 else ''}"


def _pick(rec: FightRecord, why: str) -> Pick:
    return Pick(index=rec.index, rounds=rec.rounds, winner=rec.winner, why=why, ended=rec.ended,
                defeated=rec.defeated)


def _at_the_end(records: Sequence[FightRecord], rounds: int, word: str, keep: int) -> tuple[Pick, ...]:
    """Up to ``keep`` of the fights that lasted ``rounds`` rounds (the most or the fewest), the lowest indices
    first, each said to be "the longest" (or shortest) when it alone lasted that long, else "one of the N longest":
    never a fight of another length, which would not be what it is called."""
    at = sorted((r for r in records if r.rounds == rounds), key=lambda r: r.index)
    why = f"the {word}: {_rounds(rounds)}" if len(at) == 1 else f"one of the {len(at):,} {word}: {_rounds(rounds)}"
    return tuple(_pick(r, why) for r in at[:keep])


def _extremes(encounter: Encounter, records: Sequence[FightRecord], tally: Tally, keep: int = 3) -> Extremes:
    """The longest fights (up to ``keep`` of those that lasted the most rounds: fewer when fewer did; ties, the
    lower index) and the shortest (likewise), and the underdog's wins: the side that won least often (of those that
    won at all, with another side winning more), its wins ranked by its HP left, most first."""
    lengths = [r.rounds for r in records]
    longest = _at_the_end(records, max(lengths), "longest", keep) if records else ()
    shortest = _at_the_end(records, min(lengths), "shortest", keep) if records else ()
    won = [s for s in encounter.sides if tally.wins[s]]
    upsets: tuple[Pick, ...] = ()
    if len(won) > 1:
        underdog = min(won, key=lambda s: (tally.wins[s], -encounter.sides.index(s)))
        share = tally.wins[underdog] / tally.n
        mine = [i for i, s in enumerate(encounter.combatants) if s.side == underdog]
        full = sum(encounter.combatants[i].hp for i in mine)
        wins = [r for r in records if r.winner == underdog]
        ranked = sorted(wins, key=lambda r: (-sum(r.combatants[i].hp for i in mine), r.index))
        upsets = tuple(_pick(r, f"an upset: {underdog} (who win {percent(share)}% of fights) won with "
                                f"{sum(r.combatants[i].hp for i in mine)} of {full} HP left")
                       for r in ranked[:keep])
    return Extremes(longest=longest, shortest=shortest, upsets=upsets)


def _no_winner(rec: FightRecord, side: str) -> bool:
    """Whether ``rec`` ended with ``side`` defeated and two sides or more still standing (no winner)."""
    return rec.ended == "defeated" and rec.winner is None and rec.defeated == side


def compare(a: Encounter, b: Encounter, ra: Sequence[FightRecord], rb: Sequence[FightRecord]) -> Comparison:
    """A against B, fight by fight on the same seeds: each side's wins, draws, every side down and rounds; for
    each combatant in both (by id), HP left, going down and damage dealt; the sides and combatants in one of them
    only, named as not compared."""
    diffs: list[Difference] = []
    for side in a.sides:
        if side in b.sides:
            diffs.append(difference_of_rates(f"{side} wins", [r.winner == side for r in ra],
                                             [r.winner == side for r in rb]))
    for side in a.sides:
        if side in b.sides and max(len(a.sides), len(b.sides)) > 2:
            diffs.append(difference_of_rates(f"{side} defeated, no winner", [_no_winner(r, side) for r in ra],
                                             [_no_winner(r, side) for r in rb]))
    diffs.append(difference_of_rates("draws", [r.ended == "round_limit" for r in ra],
                                     [r.ended == "round_limit" for r in rb]))
    diffs.append(difference_of_rates("every side down", [r.ended == "all_down" for r in ra],
                                     [r.ended == "all_down" for r in rb]))
    diffs.append(difference_of_means("rounds", [r.rounds for r in ra], [r.rounds for r in rb]))
    where_b = {s.id: i for i, s in enumerate(b.combatants)}
    for i, s in enumerate(a.combatants):
        j = where_b.get(s.id)
        if j is None:
            continue
        diffs.append(difference_of_means(f"{s.id} HP left", [r.combatants[i].hp for r in ra],
                                         [r.combatants[j].hp for r in rb]))
        diffs.append(difference_of_rates(f"{s.id} down", [r.combatants[i].down is not None for r in ra],
                                         [r.combatants[j].down is not None for r in rb]))
        diffs.append(difference_of_means(f"{s.id} damage dealt", [r.combatants[i].dealt for r in ra],
                                         [r.combatants[j].dealt for r in rb]))
    ids_a, ids_b = [s.id for s in a.combatants], [s.id for s in b.combatants]
    return Comparison(fights=len(ra), differences=tuple(diffs),
                      sides_only_in_a=tuple(x for x in a.sides if x not in b.sides),
                      sides_only_in_b=tuple(x for x in b.sides if x not in a.sides),
                      combatants_only_in_a=tuple(x for x in ids_a if x not in ids_b),
                      combatants_only_in_b=tuple(x for x in ids_b if x not in ids_a))
