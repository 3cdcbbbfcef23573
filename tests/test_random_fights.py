"""Properties of random legal fights (tests/random_fights.py): one reader, every surface agreeing with the log,
undo and redo, the audit and tampering, explain, rendering."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from hypothesis import assume, event, given, settings, target
from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core.errors import BadInput
from omen_core.events import (
    HEADER_EVENTS,
    ActiveDefenseChosen,
    AttackDeclared,
    CatchAnswered,
    CombatantJoined,
    CommandIssued,
    DamageResolved,
    DamageRouted,
    DiceRolled,
    Event,
    FightEnded,
    FightStarted,
    HitDetermined,
    InitiativeAgreed,
    InitiativeRollOff,
    Redone,
    ResourceChanged,
    RollTotal,
    SaveCalled,
    SaveResolved,
    TurnSkipped,
    Undone,
    encode_line,
    is_undo_batch,
    seal,
)
from omen_core.machine import Phase
from omen_core.parts import TERM_SOURCES, Term
from omen_core.state import side_down
from omen_core.walk import StoreSource, landmarks_of, project, replay, step_through
from omen_replay.cards import _CARD_LABELS as CARD_LABELS
from omen_replay.cards import Card, entries
from omen_replay.cards import _sides as card_sides
from omen_replay.explain import Explanation, explain_records
from omen_replay.narrate import _WORDS as STORY_WORDS
from omen_replay.narrate import narrate
from omen_replay.render import render_records
from omen_replay.verify import Head, verify, verify_lines
from tests.fights import assert_legal_order, present
from tests.random_fights import RandomFight, fights, same_state

#: Examples per property: a fight of up to 40 commands takes 0.05-0.2 s to generate; the file stays under a minute.
EXAMPLES = 25


def reached(rf: RandomFight) -> None:
    """Tell hypothesis's statistics (pytest --hypothesis-show-statistics) how deep this fight went."""
    seen = set()
    for rec in rf.records:
        e = rec.event
        match e:
            case HitDetermined(hit=True, crit=crit):
                seen.add("a crit" if crit else "a hit")
            case AttackDeclared(reaction=str() as kind):
                seen.add(f"{kind.replace('_', ' ')} taken")
            case ActiveDefenseChosen():
                seen.add(f"{e.defense} chosen")
            case CatchAnswered(caught=caught):
                seen.add("caught" if caught else "catch declined")
            case FightEnded(reason=reason):
                seen.add(f"fight ended ({reason})")
            case DamageRouted() | InitiativeRollOff() | InitiativeAgreed() | TurnSkipped() | Undone() | Redone():
                seen.add(type(e).__name__)
    for name in sorted(seen):
        event(name)
    target(float(len({type(rec.event) for rec in rf.records})), label="event types in the log")


def _source(rf: RandomFight) -> StoreSource:
    return StoreSource(rf.fight.store, rf.fight.fight_id)


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_replay_of_the_log_is_the_live_state(rf: RandomFight) -> None:
    """The walk's state-only way (skimming) gives exactly the live state the engine kept at every version a command
    left, where no side is down and no Dying combatant holds the turn once nothing waits (C33, C36); the live
    events are in a legal order, and each accepted command is one whole batch."""
    reached(rf)
    records = rf.records
    source = _source(rf)
    assert project(records) == rf.state == replay(source)
    for version, state in rf.states.items():
        assert replay(source, to_seq=version) == state, f"at seq {version}"
        if state.phase is Phase.ROUNDS and not state.stack and state.pending is None:  # a command's end, settled
            assert not side_down(state), f"at seq {version}: a side is down and the fight goes on (C33)"
            assert state.turn is None or not state.combatants[state.turn].dying, \
                f"at seq {version}: {state.turn}'s turn goes on at 0 HP (C36)"
    voided = landmarks_of(records).voided()
    assert_legal_order([r for r in records if r.seq not in voided and not is_undo_batch(r.event)])
    for played in rf.accepted():
        first, last = present(played.seqs)
        batch = records[first - 1:last]
        assert {r.batch for r in batch} == {first} and {r.batch_size for r in batch} == {last - first + 1}, \
            played.label


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_every_surface_agrees_with_the_log_at_every_seq(rf: RandomFight) -> None:
    """One reader: the timeline (step-through) and the state-only replay give the same state at every seq; the
    narrative's numbers are the log's (hit totals, damage, HP and Will moves); and the audit, which recomputes
    every number, finds nothing to disagree with."""
    records = rf.records
    source = _source(rf)
    told: dict[int, list[str]] = {}
    for line in narrate(records):
        told.setdefault(line.seq, []).append(line.text)
    for step in step_through(source):
        rec, after = step.rec, step.after
        assert replay(source, to_seq=rec.seq) == after, f"seq {rec.seq}"
        text = " ".join(told.get(rec.seq, []))
        match rec.event:
            case HitDetermined(attack=a, defense=d):
                assert f"hit total {a.total} " in text and f"{a.total} vs {d.total}" in text, text
            case ResourceChanged(who=who, resource=resource, before=before, after=value):
                assert f"{before} \u2192 {value}" in text, text
                assert getattr(after.combatants[who], resource) == value
    assert verify(records).clean


def _state_before_batch(rf: RandomFight, seq: int) -> Any:
    """The live state the engine kept just before the batch holding ``seq``."""
    batch = rf.records[seq - 1].batch
    return rf.states[batch - 1]


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_undo_then_replay_is_the_state_before_and_redo_restores_it(rf: RandomFight) -> None:
    """Every undo in the log (and one more at the end) replays to the state before the undone commands, and every
    redo to exactly the state just before the undo's batch (docs/events.md, Undo)."""
    records = rf.records
    source = _source(rf)
    for rec in records:
        if isinstance(rec.event, Undone):
            assert same_state(replay(source, to_seq=rec.seq), rf.states[rec.event.from_seq - 1]), f"undo at {rec.seq}"
        elif isinstance(rec.event, Redone):
            assert same_state(replay(source, to_seq=rec.seq), _state_before_batch(rf, rec.event.undo_seq)), \
                f"redo at {rec.seq}"
    if not rf.state.undo_point or rf.state.undo_point < rf.state.undo_floor:  # nothing, or only past a reveal (C42)
        return
    before = rf.state
    undone = rf.fight.undo()
    assert same_state(rf.state, rf.states[undone.from_seq - 1])
    assert project(rf.records) == rf.state
    rf.fight.redo()
    assert same_state(rf.state, before) and project(rf.records) == rf.state


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_verify_finds_nothing_in_a_played_log(rf: RandomFight) -> None:
    """omen verify decides every command of a played log again, recomputes every event and its raw lines, and finds
    no integrity problem; seeded dice also check out against the seed before it is revealed; every undo that voided
    dice is listed as an undo re-roll."""
    records = rf.records
    report = verify(records)
    assert report.clean, report.problems
    assert report.events == len(records)
    assert report.redecided == sum(r.seq == r.batch for r in records)
    assert len(report.undone) == sum(isinstance(r.event, Undone) for r in records)
    marks = landmarks_of(records)
    voided_rolls = {u.seq for u in marks.undos if u.redone_at is None
                    for r in records[u.from_seq - 1:u.to_seq] if isinstance(r.event, DiceRolled)}
    assert {f.seq for f in report.rerolls} == voided_rolls
    assert verify_lines(rf.lines()).clean
    assert report.head == Head(seq=rf.state.version, hash=rf.state.last_hash)
    if rf.seed is not None:
        with_seed = verify(records, seed=rf.seed)
        assert with_seed.clean, with_seed.problems


# -- tampering, with the chain recomputed ------------------------------------------------------------------------

#: Fields no rule derives, so that only a witnessed head protects them once the chain is recomputed (docs/verify.md):
#: the fight's title, and who gave a command.
FREE_FIELDS = {("fight_started", "title"), ("command_issued", "by")}


def reseal(pieces: list[tuple[Event, int]]) -> list[bytes]:
    """Seal ``(event, batch key)`` pieces into a sound chain, as someone editing the log would: seqs renumbered,
    each run of one batch key a batch (its size counted), every hash recomputed."""
    lines, prev, seq = [], "0" * 64, 0
    runs: list[list[Event]] = []
    keys: list[int] = []
    for ev, key in pieces:
        if keys and keys[-1] == key:
            runs[-1].append(ev)
        else:
            runs.append([ev])
            keys.append(key)
    for run in runs:
        batch = seq + 1
        for ev in run:
            seq += 1
            rec = seal("random", seq, 0, prev, ev, batch, len(run))
            lines.append(encode_line(rec) + b"\n")
            prev = rec.hash
    return lines


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, (*path, i))]
    return [(path, value)]


def _altered(ev: Event, data: st.DataObject) -> Event | None:
    """``ev`` with one field changed to another valid value, or None if the draw gives none."""
    raw = msgspec.to_builtins(ev)
    tag = raw["type"]
    leaves = [(path, v) for path, v in _leaves(raw) if path != ("type",) and (tag, path[0]) not in FREE_FIELDS]
    if not leaves:
        return None
    path, value = data.draw(st.sampled_from(leaves), label="field")
    if isinstance(value, bool):
        new: Any = not value
    elif isinstance(value, int):
        new = value + data.draw(st.sampled_from([-1, 1, 2]), label="delta")
    elif isinstance(value, str):
        new = value + "x" if value else "x"
    elif value is None:
        new = 1
    else:
        return None
    holder = raw
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = new
    try:
        changed = msgspec.convert(raw, type(ev))
    except msgspec.ValidationError:
        return None
    return changed if changed != ev else None


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(fights(), st.data())
def test_tampering_is_detected_even_with_the_chain_recomputed(rf: RandomFight, data: st.DataObject) -> None:
    """Drop, duplicate, swap, insert or alter any event of a random fight and recompute the whole chain: the hash
    chain holds, yet omen verify reports a finding every time (the re-decision of each command, issue #10 5a); and
    against a witnessed head, a log cut short, or one with a whole command dropped (which can leave a fight the
    rules accept: a join nobody names later), is a finding too (5b)."""
    records = rf.records
    pieces = [(r.event, r.batch) for r in records]
    change = data.draw(st.sampled_from(["drop", "duplicate", "swap", "insert", "alter", "cut"]), label="change")
    event(f"tamper: {change}")
    i = data.draw(st.integers(0, len(pieces) - 1), label="event")
    j = i  # the other event of a swap
    if change == "drop":
        whole = sum(1 for _event, key in pieces if key == pieces[i][1]) == 1
        del pieces[i]
        if whole:  # a whole command gone (a join nobody names later, say) leaves a log the rules accept: only
            lines = reseal(pieces)  # a witnessed head shows it (5b)
            assume(lines != rf.lines())
            head = Head(seq=rf.state.version, hash=rf.state.last_hash)
            assert not verify_lines(lines, heads=[head]).clean, f"drop at {i} went unnoticed against the head"
            return
    elif change == "duplicate":
        pieces.insert(i, pieces[i])
    elif change == "swap":
        j = data.draw(st.integers(0, len(pieces) - 1).filter(lambda j: j != i), label="other")
        pieces[i], pieces[j] = (pieces[j][0], pieces[i][1]), (pieces[i][0], pieces[j][1])
    elif change == "insert":
        j = data.draw(st.integers(0, len(pieces) - 1), label="copied")
        pieces.insert(i, (pieces[j][0], pieces[i][1]))
    elif change == "alter":
        altered = _altered(pieces[i][0], data)
        assume(altered is not None)
        assert altered is not None  # (assume has refused None: this tells mypy)
        pieces[i] = (altered, pieces[i][1])
    else:
        assume(len(pieces) > 1)
        lines = [encode_line(r) + b"\n" for r in records[:i or 1]]
        head = Head(seq=rf.state.version, hash=rf.state.last_hash)
        assert not verify_lines(lines, heads=[head]).clean
        return
    assume(pieces != [(r.event, r.batch) for r in records])  # a swap of two equal events changes nothing
    lines = reseal(pieces)
    try:
        report = verify_lines(lines)
    except BadInput:
        event("tamper: the log no longer reads")
        return
    if not report.problems and ((change == "alter" and isinstance(records[i].event, CommandIssued))
                                or (change == "swap" and all(isinstance(records[k].event, HEADER_EVENTS)
                                                            for k in (i, j)))):
        # a command altered so that it decides to the very events recorded (two stacks or one onto a condition
        # already at its cap, say), or two joins swapped that nothing later tells apart (the same fight with
        # its combatants joining in the other order), leaves a log the rules accept: only a witnessed head
        # shows it (5b)
        head = Head(seq=rf.state.version, hash=rf.state.last_hash)
        assert not verify_lines(lines, heads=[head]).clean, f"{change} at {i} went unnoticed against the head"
        return
    assert report.problems, f"{change} at {i} went unnoticed"
    assert not any(f.rule == "chain" for f in report.problems), "the recomputed chain itself holds"


# -- explain ---------------------------------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_explain_names_each_live_action_and_lists_exactly_its_dice(rf: RandomFight) -> None:
    """For every action not undone, omen explain names the right actors and weapon, lists exactly that action's live
    dice (by the seq of each roll), and each part's terms add up to its total, which is the total the log records."""
    records = rf.records
    voided = landmarks_of(records).voided()
    for rec in records:
        decl = rec.event
        if rec.seq in voided or not isinstance(decl, (AttackDeclared, SaveCalled)):
            continue
        found = explain_records(records, rec.seq, rf.seed)
        assert found.seq == rec.seq and not found.undone
        if isinstance(decl, AttackDeclared):
            assert f"{decl.attacker} attacks {decl.target} with {decl.weapon or 'no weapon'}" in found.title
        else:
            assert f"{decl.caller}'s {decl.effect.name}: {decl.saver} saves" in found.title
        rolls = [r for r in records if isinstance(r.event, DiceRolled) and r.event.action == decl.action]
        assert [d.seq for d in found.dice] == [r.seq for r in rolls for _ in r.as_(DiceRolled).dice]
        assert [d.face for d in found.dice] == [d.face for r in rolls for d in r.as_(DiceRolled).dice]
        for part in found.parts:
            assert sum(t.value for t in part.terms) == part.total, part
        hit = next((r.event for r in records if isinstance(r.event, HitDetermined) and r.event.action == decl.action),
                   None)
        if hit is not None:
            totals = {p.name: p.total for p in found.parts}
            assert totals["hit total"] == hit.attack.total and totals["total defense"] == hit.defense.total


@settings(max_examples=20, deadline=None)
@given(fights(max_commands=30, abilities=("counter_strike",)))
def test_explain_explains_every_seq_of_a_fight_whose_attacks_an_ability_answers(rf: RandomFight) -> None:
    """Every seq of a log explains, every combatant able to strike back at a melee miss with Counter Strike (C38, an
    ``attack_declared`` with ``reaction = "ability"``: it raised KeyError: 'ability'); an action explained from any
    of its events, or from the command that declared or answered it, is the same explanation (the command's first
    verdict says it was asked), and an ability's attack names the attack it answers."""
    records = rf.records
    said: dict[int, Explanation] = {}
    for rec in records:
        found = explain_records(records, rec.seq, rf.seed)
        if found.kind == "attack":  # (a command's seq explains its action, its first verdict saying which was asked)
            if found.verdicts and found.verdicts[0].startswith(f"seq {rec.seq} is the command "):
                found = msgspec.structs.replace(found, verdicts=found.verdicts[1:])
            assert said.setdefault(found.seq, found) == found, f"seq {rec.seq}"
        decl = rec.event
        if isinstance(decl, AttackDeclared) and decl.reaction == "ability":
            event("an ability's attack explained")
            assert found.title.endswith(f"an ability's attack answering the action at seq {decl.reacting_to} (C38)")


# -- rendering -------------------------------------------------------------------------------------------------


@settings(max_examples=EXAMPLES - 5, deadline=None)
@given(fights())
def test_every_log_renders_as_text_markdown_and_html(rf: RandomFight) -> None:
    """The session logs tell every event that has something to tell, by seq, in text, Markdown and HTML, end with
    the audit's verdict, and the HTML page is complete with an HP and a Will line per combatant (by id) in its
    charts."""
    records = rf.records
    told = {line.seq for line in narrate(records)}
    assert told == {r.seq for r in records if not isinstance(r.event, CommandIssued)}
    report = verify(records)
    text = render_records(records, "text")
    assert {int(m) for m in re.findall(r"^#(\d+)", text, re.MULTILINE)} == told
    assert ("verified: hash chain intact" in text) == report.clean
    markdown = render_records(records, "md")
    assert {int(m) for m in re.findall(r"`#(\d+)`", markdown)} <= told and "## The end" in markdown
    page = render_records(records, "html")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    joined = {r.event.sheet.id for r in records if isinstance(r.event, CombatantJoined)}
    assert '<svg id="chart-hp"' in page and page.count('<polyline class="series"') == 2 * len(joined)
    assert set(re.findall(r'data-id="([^"]+)"', page)) == joined


def test_the_title_is_free_text_that_only_a_witnessed_head_protects() -> None:
    """Free text no rule derives (the fight's title) can be changed once the chain is recomputed, and only a
    witnessed head catches it: the limit docs/verify.md states."""
    from omen_core import Fight, MemoryStore, ScriptedDice
    from tests.sheets import sheet

    fight = Fight.start(MemoryStore(), "random", dice=ScriptedDice([]), clock=lambda: 0, title="Duel")
    fight.join(sheet("ana", "heroes"))
    records = fight.events
    pieces = [(replace(r.event, title="Another duel") if isinstance(r.event, FightStarted) else r.event, r.batch)
              for r in records]
    lines = reseal(pieces)
    assert verify_lines(lines).clean
    witnessed = Head(seq=fight.version, hash=fight.state.last_hash)
    assert not verify_lines(lines, heads=[witnessed]).clean



# -- every total carries its terms, and every surface shows exactly those (issue 27, item 3) ----------------------

#: The terms whose label is free text (a modifier's own source, a mitigation step's name): explain shows it as is.
FREE_LABELS = frozenset({"situational", "modifier", "defense_modifier", "damage_modifier", "mitigation"})


def _totals(event: Event) -> list[tuple[int, tuple[Term, ...]]]:
    """Every total an event records, beside its own terms: they must add up to it."""
    found: list[tuple[int, tuple[Term, ...]]] = []
    match event:
        case HitDetermined(attack=a, defense=d, crit_check=c):
            found += [(a.total, a.terms()), (d.total, d.terms()), (d.base, d.base_terms()),
                      (c.fcs_portion, c.fcs_terms()), (c.res_portion, c.res_terms()), (a.total, a.terms(-1))]
            if d.active is not None:
                found.append((d.active.amount, d.active.terms()))
        case DamageResolved(terms=t):
            found += [(t.raw, t.terms()), (event.final, event.mitigation_terms())]
            found += [(s.after - before, s.terms()) for s, before in
                      zip(event.steps, [t.raw, *(s.after for s in event.steps)], strict=False)
                      if s.step in ("floor", "incoming")]
    found += [(side.total, side.terms()) for side in _roll_totals(event)]
    return found


def _roll_totals(event: Event) -> tuple[RollTotal, ...]:
    """The roll totals of a check, a contest, a save, Perception, initiative, a roll-off or Stealth rolls."""
    if isinstance(event, SaveResolved):
        return (event.saver, event.opposing)
    return card_sides(event)


def _expected_parts(events: list[Event]) -> list[Callable[[int], tuple[Term, ...]]]:
    """The terms of each part ``omen explain`` shows for these events (a card's), in its order, each as a function
    of what conditions changed of the bonus in it (C28: explain splits a bonus where they did)."""
    parts: list[Callable[[int], tuple[Term, ...]]] = []
    for e in events:
        if isinstance(e, HitDetermined):
            parts += [e.attack.terms, e.defense.terms, e.crit_check.fcs_terms, e.crit_check.res_terms]
        elif isinstance(e, DamageResolved):
            parts += [_constant(e.terms.terms()), _constant(e.mitigation_terms())]
        else:
            parts += [side.terms for side in _roll_totals(e)]
    return parts


def _constant(terms: tuple[Term, ...]) -> Callable[[int], tuple[Term, ...]]:
    """Terms no condition splits (damage, mitigation), as a function of what conditions changed, like the others."""
    return lambda _conditions: terms


def _shown(terms: Iterable[Any], value: str = "value", origin: str = "source") -> list[tuple[int, str]]:
    """The terms worth showing (a zero adds nothing and may be left out), as (value, source)."""
    return [(getattr(t, value), getattr(t, origin)) for t in terms if getattr(t, value)]


#: A damage roll of several dice as the story tells it, a die a term: ``5 + 4 (2d6)``.
_EACH_DIE = re.compile(r"(\d+(?: \+ \d+)+) \(\d+d\d+\)")


def _merged(terms: list[tuple[int, str]], only: str | None = None) -> list[tuple[int, str]]:
    """Terms with runs of one source (or label; ``only``: that one alone) summed: a damage roll of several dice is
    shown a die a term (``3 (d6) + 4 (d6)``) where the event records their sum; the totals and the order are what
    must agree."""
    out: list[tuple[int, str]] = []
    for value, source in terms:
        if out and out[-1][1] == source and (only is None or source == only):
            out[-1] = (out[-1][0] + value, source)
        else:
            out.append((value, source))
    return out


def _unsplit(terms: Iterable[Any], value: str = "value", origin: str = "source", mark: str = "condition"
             ) -> list[Any]:
    """Terms with each conditions' part (``origin`` equal to ``mark``) added back into the bonus before it, as
    (value, origin): explain splits a bonus into the sheet's value and what conditions changed (C12, C28), where
    the event records their sum; the sum and its place are what must agree."""
    out: list[list[Any]] = []
    for t in terms:
        if getattr(t, origin) == mark and out:
            out[-1][0] += getattr(t, value)
        else:
            out.append([getattr(t, value), getattr(t, origin)])
    return [Term(str(o), v, o, "") for v, o in out]


#: What conditions changed of a bonus, as the narrative writes it (``- 1 conditions``, C28).
_CONDITIONS = re.compile(r"([+-]) (\d+) conditions")


def _conditions_in(text: str) -> int:
    """What conditions changed of the bonus a narrative line splits (C12, C28), signed; 0 if it splits none."""
    found = _CONDITIONS.search(text)
    return 0 if found is None else int(found.group(2)) * (1 if found.group(1) == "+" else -1)


def _damage_split(terms: tuple[Term, ...]) -> Callable[[int], tuple[Term, ...]]:
    """A damage's terms with its primary bonus (and a crit's) split as the narrative splits them: the sheet's value
    and what conditions changed (``conditions``), as a function of that change."""
    def split(conditions: int) -> tuple[Term, ...]:
        if not conditions:
            return terms
        out: list[Term] = []
        for t in terms:
            if t.kind == "primary_bonus" or (t.kind == "crit_bonus" and t.value):  # a crit's, where there is one
                out += [Term(t.label, t.value - conditions, t.source, t.kind),
                        Term("conditions", conditions, "condition", "conditions")]
            else:
                out.append(t)
        return tuple(out)
    return split


def _named(shown: tuple[int, str], recorded: tuple[int, str]) -> tuple[int, str]:
    """An explained term as the event records it: a modifier named after a condition or an ability is explained
    with that origin (``condition``, ``ability:<name>``) where the event's list says ``situational`` or an
    ability's (docs/explain.md); any other origin must be the recorded one."""
    named = shown[1] == "condition" or shown[1].startswith("ability:")
    if named and shown[0] == recorded[0] and (recorded[1] == "situational" or recorded[1].startswith("ability:")):
        return recorded
    return shown


def _check_card(card: Card, by_seq: dict[int, Event]) -> None:
    events = [by_seq[s] for s in sorted({line.seq for line in card.story}) if s in by_seq]
    expected = _expected_parts(events)
    if card.explanation is not None:
        healing = [p for p in card.explanation.parts if p.name.endswith("'s healing")]
        rolled = [sum(d.face for d in e.dice) for e in events if isinstance(e, DiceRolled) and e.purpose == "healing"]
        for part in healing:  # a heal's amount: its dice (a healing roll of the card's) and its flat amount (C37)
            assert sum(t.value for t in part.terms) == part.total
            assert [t.value for t in part.terms if t.origin == "dice"] in ([], *([r] for r in rolled)), part
        parts = [p for p in card.explanation.parts if p.name != "Ambush Difficulty" and p not in healing]
        assert len(parts) == len(expected), (card.seq, [p.name for p in parts])
        for part, terms_of in zip(parts, expected, strict=True):
            split = next((t.value for t in part.terms if t.origin == "condition"), 0)
            own = terms_of(split)
            assert sum(t.value for t in part.terms) == part.total == sum(t.value for t in own), part.name
            shown = _merged(_shown(_unsplit(part.terms, origin="origin")), "dice")
            recorded = _merged(_shown(_unsplit(own)), "dice")
            assert [_named(o, r) for o, r in zip(shown, recorded, strict=True)] == recorded, (card.seq, part.name)
            labels = [t.label for t in own if t.kind in FREE_LABELS and t.value]
            assert labels == [t.label for t in part.terms if t.value and t.label in labels], part.name
    healed = [r for r in card.rolls if r.name.endswith("'s healing")]  # a heal's roll (C37): its dice and flat
    faces = [sum(d.face for d in e.dice) for e in events if isinstance(e, DiceRolled) and e.purpose == "healing"]
    for roll in healed:
        assert sum(t.value for t in roll.terms) == roll.total, (card.seq, roll.name)
        assert not any(t.die for t in roll.terms) or sum(t.value for t in roll.terms if t.die) in faces, \
            (card.seq, roll.name)
    rolls = [r for r in card.rolls if r not in healed]
    totals = [(e.attack.terms, e.defense.terms) for e in events if isinstance(e, HitDetermined)]
    sides = [side.terms for e in events for side in _roll_totals(e)]
    wanted = [t for pair in totals for t in pair] + sides
    assert len(rolls) == len(wanted), card.seq
    for roll, terms_of in zip(rolls, wanted, strict=True):  # a bonus split into the sheet's and the conditions' part
        # (a defense splits its RES bonus and its Active Defense's bonus by the same conditions, as explain does)
        own = terms_of(next((t.value for t in roll.terms if t.label == "conditions"), 0))
        assert [(t.value, t.label) for t in roll.terms if t.value] == [
            (t.value, CARD_LABELS.get(t.kind, t.label)) for t in own if t.value], (card.seq, roll.name)
    damages = [e for e in events if isinstance(e, DamageResolved)]
    assert len(card.damage) == len(damages)
    for dealt, damage in zip(card.damage, damages, strict=True):
        assert _merged([(t.value, t.source) for t in _unsplit(dealt.raw.terms, origin="label", mark="conditions")
                        if t.value]) == _merged([
            (t.value, CARD_LABELS.get(t.kind, t.label)) for t in damage.terms.terms() if t.value])
        assert [(s.change, s.step) for s in dealt.steps] == [
            (t.value, t.label) for t in damage.mitigation_terms()[1:]]
    story = [line.text for line in card.story]
    for e in events:
        told: list[tuple[str, Callable[[int], tuple[Term, ...]]]] = []
        if isinstance(e, HitDetermined):
            told += [(f"  hit total {e.attack.total} = ", e.attack.terms),
                     (f"  defense {e.defense.total} = ", e.defense.terms)]
        elif isinstance(e, DamageResolved):
            told.append((f"  {e.source}: {e.terms.raw} {e.damage_type} (", _damage_split(e.terms.terms())))
        for head, terms_of in told:
            text = next(text for text in story if text.startswith(head))
            for t in terms_of(_conditions_in(text)):
                if t.value:
                    dice = [sum(map(int, m.group(1).split(" + "))) for m in _EACH_DIE.finditer(text)]
                    assert f"{abs(t.value)} " in text or f"{abs(t.value)} (" in text \
                        or (t.kind == "damage_dice" and t.value in dice), (text, t)
                    assert STORY_WORDS.get(t.kind, t.label) in text or (t.kind == "damage_dice" and dice), (text, t)


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_every_total_is_its_terms_and_every_surface_shows_exactly_them(rf: RandomFight) -> None:
    """Random fights: every total a hit, damage, save, check, contest, initiative or Stealth roll records is the sum
    of its own terms (a mitigation step's subtraction a negative term); and for every card, ``omen explain`` shows
    exactly those terms (value and source, a modifier's own label; a bonus split where conditions changed it, C28),
    the card's roll strings show them (value and label) and the session log's lines name each one."""
    records = rf.records
    for rec in records:
        for total, terms in _totals(rec.event):
            assert sum(t.value for t in terms) == total, (rec.seq, terms)
            assert all(t.source in TERM_SOURCES or t.source.startswith("ability:") for t in terms)
    by_seq = {rec.seq: rec.event for rec in records}
    for entry in entries(records)[0]:
        if isinstance(entry, Card):
            _check_card(entry, by_seq)


def test_every_fixtures_totals_are_their_terms_and_every_surface_shows_them() -> None:
    """The same over every golden fixture (rage dice, a routed die, Will conversion, each Active Defense, a helpless
    defender, consequences' own damage, saves, contests, Stealth and Perception among them)."""
    from pathlib import Path

    from omen_core.events import decode_line

    checked = 0
    for log in sorted((Path(__file__).resolve().parent.parent / "fixtures").glob("*/fight.jsonl")):
        records = [decode_line(line) for line in log.read_bytes().splitlines()]
        for rec in records:
            for total, terms in _totals(rec.event):
                assert sum(t.value for t in terms) == total, (log.parent.name, rec.seq)
                checked += 1
        by_seq = {rec.seq: rec.event for rec in records}
        for entry in entries(records)[0]:
            if isinstance(entry, Card):
                _check_card(entry, by_seq)
    assert checked > 500
