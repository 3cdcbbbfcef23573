"""Hypothesis strategies for omen's value types, events and sealed logs, shared by the test suite."""

from __future__ import annotations

from hypothesis import strategies as st

from omen_core.content import ATTRIBUTES, Attribute, Attributes, CombatantSheet, Skill
from omen_core.events import (
    GENESIS_HASH,
    CombatantJoined,
    ContestResolved,
    DiceRolled,
    Die,
    FightStarted,
    Modifier,
    RollTotal,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    seal,
)

ids = st.from_regex(r"[a-z][a-z0-9_-]{0,11}", fullmatch=True)
small = st.integers(-20, 40)
hexbytes = st.binary(min_size=1, max_size=40).map(bytes.hex)
hex64 = st.binary(min_size=32, max_size=32).map(bytes.hex)
text = st.text(max_size=30)

attribute = st.builds(lambda s, b: Attribute(die=f"d{s}", bonus=b), st.integers(2, 100), st.integers(-5, 10))
attributes = st.builds(lambda xs: Attributes(**dict(zip(ATTRIBUTES, xs))),
                       st.lists(attribute, min_size=5, max_size=5))
skill = st.builds(Skill, attribute=st.sampled_from(ATTRIBUTES), level=st.integers(0, 10))
sheets = st.builds(CombatantSheet, id=ids, name=text, side=ids, hp=st.integers(1, 200),
                   will=st.integers(0, 50), attributes=attributes,
                   skills=st.dictionaries(st.text(min_size=1, max_size=12), skill, max_size=3))

die = st.integers(2, 100).flatmap(
    lambda s: st.builds(Die, pool=st.sampled_from(["primary", "fcs", "res", "check", "save"]),
                        sides=st.just(s), face=st.integers(1, s)))
modifier = st.builds(Modifier, source=text, value=small)
roll_total = st.builds(RollTotal, roller=ids, attribute=st.sampled_from(ATTRIBUTES),
                       skill=st.none() | st.text(max_size=12), roll=st.integers(1, 10**6),
                       face=st.integers(1, 100), attribute_bonus=small, skill_level=st.integers(0, 10),
                       modifiers=st.lists(modifier, max_size=3).map(tuple), total=small)

events = st.one_of(
    st.builds(FightStarted, ruleset=text, ruleset_hash=st.just("") | hex64,
              dice=st.sampled_from(["seeded", "manual", "scripted"]),
              seed_commitment=st.none() | hex64, title=text),
    st.builds(CombatantJoined, sheet=sheets),
    st.builds(DiceRolled, counter=st.integers(1, 10**6), purpose=st.sampled_from(["check", "save", "hit"]),
              roller=ids, dice=st.lists(die, min_size=1, max_size=4).map(tuple),
              source=st.sampled_from(["seeded", "manual", "scripted"])),
    st.builds(StaticCheckResolved, check=roll_total, difficulty=small,
              outcome=st.sampled_from(["success", "tie", "failure"])),
    st.builds(ContestResolved, initiator=roll_total, defender=roll_total, winner=ids, tie=st.booleans()),
    st.builds(SaveResolved, effect=st.text(min_size=1, max_size=20), saver=roll_total,
              opposing=roll_total, success=st.booleans()),
    st.builds(SeedRevealed, seed=hexbytes),
)


def chained(fight_id: str, payloads: list, start_seq: int = 1, prev: str = GENESIS_HASH,
            recorded_at: int = 1_700_000_000_000) -> list[StoredEvent]:
    """Seal ``payloads`` into a hash-chained list starting at ``start_seq``."""
    out = []
    for i, event in enumerate(payloads):
        rec = seal(fight_id, start_seq + i, recorded_at + i, prev, event)
        out.append(rec)
        prev = rec.hash
    return out


logs = st.builds(chained, ids, st.lists(events, min_size=1, max_size=12))
