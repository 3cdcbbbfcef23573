"""Explain a roll, an attack, a save or a check: every die, every bonus and where it came from, every rule applied.

``explain(records, seq)`` looks at the event at ``seq``; if it belongs to an
attack or a save, the whole action is explained. Each part (hit total,
defense, crit portions, damage) lists its terms and their total, and the
terms add up to the total. Bonuses are split into the sheet's value and what
conditions changed (C28), so a disputed number can be traced to its source.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from omen_core.dice import commitment, seeded_mismatches
from omen_core.errors import BadInput
from omen_core.events import (
    AmbushDifficultySet,
    AttackDeclared,
    ContestResolved,
    DamageResolved,
    DiceRolled,
    Event,
    FightStarted,
    HitDetermined,
    InitiativeRolled,
    ResourceChanged,
    RollTotal,
    SaveCalled,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    SurpriseDetermined,
)
from omen_core.machine import action_of
from omen_core.state import FightState, condition_adjustment, project

__all__ = ["Term", "Part", "DieLine", "Explanation", "explain"]


class Term(msgspec.Struct, frozen=True):
    """One number that went into a total, and where it came from."""

    label: str
    value: int
    source: str = ""


class Part(msgspec.Struct, frozen=True, kw_only=True):
    """A total and its terms (which add up to it), with the rule that governs it."""

    name: str
    terms: tuple[Term, ...]
    total: int
    rule: str = ""


class DieLine(msgspec.Struct, frozen=True, kw_only=True):
    """One die: which roll, whose, its pool, size and face, its source, and whether the seed confirms it."""

    roll: int
    seq: int
    purpose: str
    roller: str
    pool: str
    sides: int
    face: int
    source: str
    seed_confirms: bool | None = None


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """The derivation of one roll, attack, save or check."""

    seq: int
    kind: str
    title: str
    dice: tuple[DieLine, ...]
    parts: tuple[Part, ...]
    verdicts: tuple[str, ...]
    seed: str


class _Log:
    """A log read once: the events by seq, and the state right before any seq."""

    def __init__(self, records: Iterable[StoredEvent]):
        self.records = list(records)
        self.by_seq = {r.seq: r for r in self.records}

    def state_before(self, seq: int) -> FightState:
        return project([r for r in self.records if r.seq < seq])

    def action_events(self, action: int) -> list[StoredEvent]:
        return [r for r in self.records if action_of(r.event) == action]

    def seed_status(self, seed: bytes | None) -> tuple[str, bytes | None]:
        started = next((r.event for r in self.records if isinstance(r.event, FightStarted)), None)
        revealed = next((r.event.seed for r in self.records if isinstance(r.event, SeedRevealed)), None)
        if started is None or started.seed_commitment is None:
            return "no seeded dice in this fight", None
        seed = seed if seed is not None else (bytes.fromhex(revealed) if revealed else None)
        if seed is None:
            return "seeded dice, seed not revealed yet: the faces cannot be checked", None
        if commitment(seed) != started.seed_commitment:
            return "the seed does NOT match the commitment recorded at the start", None
        return "seeded dice; the seed matches its commitment", seed


def explain(records: Iterable[StoredEvent], seq: int, seed: bytes | None = None) -> Explanation:
    """Explain the event at ``seq`` (the whole attack or save it belongs to, if any)."""
    log = _Log(records)
    if seq not in log.by_seq:
        raise BadInput(f"no event with seq {seq} in this log (seq 1 to {len(log.records)})")
    status, good_seed = log.seed_status(seed)
    event = log.by_seq[seq].event
    action = action_of(event)
    if action is not None:
        first = next((r for r in log.records if action_of(r.event) == action), None)
        if first is not None and isinstance(first.event, AttackDeclared):
            return _attack(log, first, status, good_seed)
        if first is not None and isinstance(first.event, SaveCalled):
            return _save(log, first, status, good_seed)
    return _single(log, log.by_seq[seq], status, good_seed)


def _dice(log: _Log, recs: Iterable[StoredEvent], seed: bytes | None) -> tuple[DieLine, ...]:
    lines = []
    for rec in recs:
        if not isinstance(rec.event, DiceRolled):
            continue
        rolled = rec.event
        wrong = {i for i, _, _ in seeded_mismatches(seed, rec.fight_id, rolled)} if seed and rolled.source == "seeded" else set()
        for i, die in enumerate(rolled.dice):
            confirms = (i not in wrong) if seed and rolled.source == "seeded" else None
            lines.append(DieLine(roll=rolled.counter, seq=rec.seq, purpose=rolled.purpose, roller=rolled.roller,
                                 pool=die.pool, sides=die.sides, face=die.face, source=rolled.source,
                                 seed_confirms=confirms))
    return tuple(lines)


def _bonus_terms(state: FightState, who: str, attribute: str, effective: int) -> list[Term]:
    """An effective attribute bonus split into the sheet's value and the conditions' adjustment (C1, C28)."""
    sheet = state.combatants[who].sheet.attributes[attribute].bonus
    adjust = condition_adjustment(state, who)
    conditions = ", ".join(f"{k} x{v}" for k, v in state.combatants[who].conditions.items()) or "none"
    terms = [Term(f"{attribute} bonus", sheet, f"{who}'s sheet")]
    if adjust or effective != sheet:
        terms.append(Term("conditions", effective - sheet, f"{conditions} (C28)"))
    return terms


def _attack(log: _Log, first: StoredEvent, status: str, seed: bytes | None) -> Explanation:
    decl = first.event
    assert isinstance(decl, AttackDeclared)
    recs = log.action_events(decl.action)
    hit_rec = next((r for r in recs if isinstance(r.event, HitDetermined)), None)
    parts: list[Part] = []
    verdicts: list[str] = []
    title = (f"{decl.attacker} attacks {decl.target} with {decl.weapon or 'no weapon (unarmed)'} "
             f"({decl.kind.replace('_', ' ')}), action {decl.action}")
    if hit_rec is not None:
        state = log.state_before(hit_rec.seq)
        hd = hit_rec.event
        assert isinstance(hd, HitDetermined)
        parts += _hit_parts(state, decl, hd)
        tie = " (a tie: the defender wins ties)" if hd.attack.total == hd.defense.total else ""
        verdicts.append(f"{'HIT' if hd.hit else 'MISS'}: {hd.attack.total} {'>' if hd.hit else 'is not >'} "
                        f"{hd.defense.total}{tie} (§Hit Determination)")
        c = hd.crit_check
        crit = ("CRITICAL" if hd.crit else "no crit" if not c.exceeds
                else "the crit would have been, but the attack missed (C7)")
        verdicts.append(f"crit: FCS portion {c.fcs_portion} vs RES portion {c.res_portion}: {crit} "
                        "(C7: strictly more; ties are no crit)")
    weapon_damage = hit_rec is not None and hd.hit  # on a hit, the weapon's damage comes first (C25)
    for rec in recs:
        if isinstance(rec.event, DamageResolved):
            parts += _damage_parts(rec.event, consequence=not weapon_damage)
            weapon_damage = False
            verdicts.append(f"{rec.event.final} {rec.event.damage_type} damage to {rec.event.target}'s "
                            f"{rec.event.resource.upper()}")
        elif isinstance(rec.event, ResourceChanged):
            verdicts.append(f"{rec.event.who}: {rec.event.resource.upper()} {rec.event.before} -> {rec.event.after}")
    return Explanation(seq=first.seq, kind="attack", title=title, dice=_dice(log, recs, seed), parts=tuple(parts),
                       verdicts=tuple(verdicts), seed=status)


def _hit_parts(state: FightState, decl: AttackDeclared, hd: HitDetermined) -> list[Part]:
    a, d, c = hd.attack, hd.defense, hd.crit_check
    weapon = state.combatants[decl.attacker].sheet.weapon(decl.weapon) if decl.weapon else None
    hit_terms = ([Term(f"primary die ({a.attribute})", f, "hit roll") for f in a.primary_dice]
                 + [Term("FCS die", f, "hit roll") for f in a.fcs_dice]
                 + _bonus_terms(state, decl.attacker, a.attribute, a.attribute_bonus)
                 + [Term("weapon hit bonus", a.weapon_hit_bonus, weapon.label if weapon else "unarmed"),
                    Term("training bonus", a.training_bonus, f"{decl.attacker}'s sheet (training)")]
                 + [Term(m.source, m.value, "situational") for m in a.situational])
    res = ([Term("RES die", d.res_die, "base defense roll")] if d.res_die is not None
           else [Term("no RES die", 0, "incapacitated or paralysed (C10)")])
    armor_note = ("no armor worn" if state.combatants[decl.target].sheet.armor is None
                  else "armor applies" if d.armor_applies
                  else "armor does not apply (mundane armor against a spell or non-physical attack, C13)")
    defense_terms = (res + _bonus_terms(state, decl.target, "RES", d.res_bonus)
                     + [Term("armor", d.armor, f"{armor_note} (C11)")])
    if d.active is not None:
        x = d.active
        defense_terms += [Term(f"{x.defense} die ({x.attribute})", x.die, "Active Defense roll (C8)"),
                          *(Term(f"{x.defense}: {t.label}", t.value, t.source)
                            for t in _bonus_terms(state, decl.target, x.attribute, x.attribute_bonus)),
                          Term(f"{x.defense} rating", x.rating, "Parry or Block Rating (§Active Defense)")]
    fcs_terms = ([Term("FCS die", f, "hit roll") for f in c.fcs_dice]
                 + _bonus_terms(state, decl.attacker, "FCS", c.fcs_bonus))
    res_terms = ([Term("RES die", c.res_die, "base defense roll")] if c.res_die is not None else []) \
        + _bonus_terms(state, decl.target, "RES", c.res_bonus)
    return [Part(name="hit total", terms=tuple(hit_terms), total=a.total, rule="C5"),
            Part(name="total defense", terms=tuple(defense_terms), total=d.total, rule="C10, C11, §Active Defense"),
            Part(name="FCS portion", terms=tuple(fcs_terms), total=c.fcs_portion, rule="C7"),
            Part(name="RES portion", terms=tuple(res_terms), total=c.res_portion, rule="C7, C10")]


def _damage_parts(event: DamageResolved, *, consequence: bool) -> list[Part]:
    """C12's damage formula term by term (or a consequence's own damage roll, C25), then C13 step by step."""
    t = event.terms
    steps = tuple(Term(s.step, -s.amount if s.step not in ("floor", "incoming") else s.amount,
                       f"after: {s.after} (C13)") for s in event.steps)
    mitigation = Part(name="after mitigation", terms=(Term("raw damage", t.raw, "C12"), *steps), total=event.final,
                      rule="C13: resistance, physical rollover, armor, floor 0, incoming")
    if consequence:
        terms = [Term("damage dice", t.dice, f"the consequence's own {event.damage_type} damage roll"),
                 *(Term(m.source, m.value, "the consequence's flat damage") for m in t.modifiers)]
        return [Part(name=f"damage ({event.source}: a consequence)", terms=tuple(terms), total=t.raw, rule="C25"),
                mitigation]
    dice_label = f"routed die #{t.routed_die} (C12)" if t.routed_die is not None else "primary dice result"
    terms = [Term(dice_label, t.dice, "the hit roll, not re-rolled"),
             Term("primary bonus", t.primary_bonus, "attribute bonus (none when unarmed, C12)"),
             Term("crit bonus", t.crit_bonus, "one extra primary bonus on a crit (C12)"),
             Term("Weapon Damage", t.weapon_damage, event.source),
             *(Term("ability die", f, "rage / ability damage dice (C12)") for f in t.ability_dice),
             *(Term(m.source, m.value, "damage modifier") for m in t.modifiers)]
    return [Part(name=f"damage ({event.source})", terms=tuple(terms), total=t.raw, rule="C12"), mitigation]


def _side_part(name: str, side: RollTotal, state: FightState, rule: str) -> Part:
    terms = [Term(f"{side.attribute} die", side.face, f"roll #{side.roll}"),
             *_bonus_terms(state, side.roller, side.attribute, side.attribute_bonus)]
    if side.skill is not None:
        terms.append(Term(f"{side.skill} level", side.skill_level, f"{side.roller}'s sheet (C2)"))
    terms += [Term(m.source, m.value, "situational") for m in side.modifiers]
    return Part(name=name, terms=tuple(terms), total=side.total, rule=rule)


def _save(log: _Log, first: StoredEvent, status: str, seed: bytes | None) -> Explanation:
    called = first.event
    assert isinstance(called, SaveCalled)
    recs = log.action_events(called.action)
    parts, verdicts = [], []
    for rec in recs:
        if isinstance(rec.event, SaveResolved):
            state = log.state_before(rec.seq)
            e = rec.event
            parts += [_side_part(f"{e.saver.roller}'s save", e.saver, state, "C15"),
                      _side_part(f"{e.opposing.roller}'s opposing roll", e.opposing, state, "C15")]
            verdicts.append(f"{'saved' if e.success else 'failed'}: {e.saver.total} "
                            f"{'>=' if e.success else '<'} {e.opposing.total} (C15: the saver wins ties)")
        elif isinstance(rec.event, DamageResolved):
            parts += _damage_parts(rec.event, consequence=True)
            verdicts.append(f"{rec.event.final} {rec.event.damage_type} damage to {rec.event.target}")
    title = f"{called.caller}'s {called.effect.name}: {called.saver} saves with {called.effect.save}"
    return Explanation(seq=first.seq, kind="save", title=title, dice=_dice(log, recs, seed), parts=tuple(parts),
                       verdicts=tuple(verdicts), seed=status)


def _single(log: _Log, rec: StoredEvent, status: str, seed: bytes | None) -> Explanation:
    """A roll, a check or anything else: its dice and, for results, the roll primitive of each side."""
    event: Event = rec.event
    state = log.state_before(rec.seq)
    parts: list[Part] = []
    verdicts: list[str] = []
    recs = [rec]
    match event:
        case StaticCheckResolved(check=side):
            parts.append(_side_part(f"{side.roller}'s check", side, state, "C1, C2"))
            verdicts.append(f"{event.outcome} against difficulty {event.difficulty} (C16: a tie is a tie)")
            recs = _rolls(log, [side])
        case ContestResolved(initiator=ini, defender=dfd):
            parts += [_side_part(f"{ini.roller} (initiator)", ini, state, "C16"),
                      _side_part(f"{dfd.roller} (defender)", dfd, state, "C16")]
            verdicts.append(f"{event.winner} wins (C16: the initiator must be strictly higher)")
            recs = _rolls(log, [ini, dfd])
        case SurpriseDetermined(perception=side):
            parts.append(_side_part(f"{side.roller}'s Perception", side, state, "C18"))
            verdicts.append(f"{event.tier} against difficulty {event.difficulty} (C18)")
            recs = _rolls(log, [side])
        case AmbushDifficultySet(stealth=sides, time_waited=waited) if sides:
            parts += [_side_part(f"{side.roller}'s Stealth", side, state, "C17") for side in sides]
            rows = {"under_a_minute": ("the lowest Stealth roll", min(s.total for s in sides), 2),
                    "one_to_two_minutes": ("the average Stealth roll, rounded down",
                                           sum(s.total for s in sides) // len(sides), 3),
                    "three_minutes_or_more": ("the highest Stealth roll", max(s.total for s in sides), 4)}
            if waited in rows:
                label, base, plus = rows[waited]
                parts.append(Part(name="Ambush Difficulty", rule="C17", total=event.difficulty,
                                  terms=(Term(label, base, f"time waited: {waited.replace('_', ' ')}"),
                                         Term("time waited", plus, "C17's table"))))
            verdicts.append(f"Ambush Difficulty {event.difficulty} (C17)")
            recs = _rolls(log, list(sides))
        case AmbushDifficultySet():
            verdicts.append(f"Ambush Difficulty {event.difficulty}, set by the GM (C17)")
        case InitiativeRolled(check=side):
            parts.append(_side_part(f"{side.roller}'s initiative", side, state, "C19"))
            recs = _rolls(log, [side])
    title = f"{type(event).__name__} at seq {rec.seq}"
    return Explanation(seq=rec.seq, kind=type(event).__name__, title=title, dice=_dice(log, recs, seed),
                       parts=tuple(parts), verdicts=tuple(verdicts), seed=status)


def _rolls(log: _Log, sides: list[RollTotal]) -> list[StoredEvent]:
    wanted = {s.roll for s in sides}
    return [r for r in log.records if isinstance(r.event, DiceRolled) and r.event.counter in wanted]
