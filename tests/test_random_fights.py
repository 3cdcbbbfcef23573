"""Properties of random legal fights (tests/random_fights.py): replay, undo and redo, audit, tampering, rendering."""

from __future__ import annotations

import re

from hypothesis import event, given, settings, target
from hypothesis import strategies as st

from omen_core.errors import BadInput
from omen_core.events import (
    UNDO_MARKERS,
    ActiveDefenseChosen,
    AttackDeclared,
    CatchAnswered,
    CombatantJoined,
    DamageRouted,
    FightEnded,
    HitDetermined,
    InitiativeAgreed,
    InitiativeRollOff,
    Redone,
    TurnSkipped,
    Undone,
    chain_breaks,
    decode_line,
)
from omen_core.state import project, undo_history
from omen_replay.narrate import narrate
from omen_replay.render import HtmlWriter, MarkdownWriter, TextWriter, render
from omen_replay.replay import replay
from omen_replay.verify import verify, verify_lines
from tests.fights import assert_legal_order
from tests.random_fights import RandomFight, fights, same_state

#: Examples per property: a fight of up to 40 commands takes 0.1-0.4 s to generate; the file stays under a minute.
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


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_replay_of_the_log_is_the_live_state(rf):
    """Folding the stored log (omen_core.state.project, omen_replay.replay.replay) gives exactly the live state at
    every version a command left, the live events are in a legal order, and each accepted command is one batch."""
    reached(rf)
    records = rf.records
    assert project(records) == rf.state == replay(records)
    for version, state in rf.states.items():
        assert replay(records, to_seq=version) == state, f"at seq {version}"
    voided = undo_history(records)[0]
    assert_legal_order([r for r in records if r.seq not in voided and not isinstance(r.event, UNDO_MARKERS)])
    for played in rf.accepted():
        first, last = played.seqs
        assert {r.batch for r in records[first - 1:last]} == {first}, played.label


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_undo_then_replay_is_the_state_before_and_redo_restores_it(rf):
    """Every undo in the log (and one more at the end) replays to the state before the undone commands, and every
    redo to exactly the state the undo took away (docs/events.md, Undo)."""
    records = rf.records
    for i, rec in enumerate(records):
        if isinstance(rec.event, Undone):
            assert same_state(replay(records[:i + 1]), rf.states[rec.event.from_seq - 1]), f"undo at {rec.seq}"
        elif isinstance(rec.event, Redone):
            assert same_state(replay(records[:i + 1]), rf.states[rec.event.undo_seq - 1]), f"redo at {rec.seq}"
    if not rf.undoable() or rf.state.ending is not None:
        return
    before = rf.state
    undone = rf.fight.undo()
    assert same_state(rf.state, rf.states[undone.from_seq - 1])
    assert project(rf.records) == rf.state
    rf.fight.redo()
    assert same_state(rf.state, before) and project(rf.records) == rf.state


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights())
def test_verify_finds_nothing_in_a_played_log(rf):
    """omen verify (omen_replay.verify) recomputes every event of a played log, its undos and its raw lines, and
    finds nothing; seeded dice also check out against the seed before it is revealed."""
    records = rf.records
    report = verify(records)
    assert not report.findings, report.findings
    assert report.events == len(records)
    assert len(report.undone) == sum(isinstance(r.event, Undone) for r in records)
    assert not (found := verify_lines(rf.lines()).findings), found
    if rf.seed is not None:
        with_seed = verify(records, seed=rf.seed)
        assert not with_seed.findings, with_seed.findings
        assert with_seed.seed_revealed


@settings(max_examples=EXAMPLES, deadline=None)
@given(fights(), st.data())
def test_tampering_with_the_log_is_always_detected(rf, data):
    """A changed byte, a dropped, swapped or repeated line of the JSON Lines log is always a finding of omen verify
    (or the log no longer reads at all), and a dropped last line breaks the chain against the known head."""
    lines = rf.lines()
    change = data.draw(st.sampled_from(["byte", "drop", "swap", "repeat"]), label="change")
    event(f"tamper: {change}")
    if change == "byte":
        blob = b"".join(lines)
        i = data.draw(st.integers(0, len(blob) - 1), label="byte")
        new = data.draw(st.integers(0, 255).filter(lambda b: b != blob[i]), label="value")
        lines = (blob[:i] + bytes([new]) + blob[i + 1:]).splitlines(keepends=True)
    elif change == "drop":
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        del lines[i]
        if i == len(lines):
            kept = [decode_line(line[:-1]) for line in lines]
            assert list(chain_breaks(kept, head=rf.state.last_hash))
            return
    elif change == "swap":
        i, j = data.draw(st.lists(st.integers(0, len(lines) - 1), min_size=2, max_size=2, unique=True), label="lines")
        lines[i], lines[j] = lines[j], lines[i]
    else:
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        lines.insert(data.draw(st.integers(0, len(lines)), label="at"), lines[i])
    try:
        assert verify_lines(lines).findings
    except BadInput:
        event("tamper: the log no longer reads")


@settings(max_examples=EXAMPLES - 5, deadline=None)  # rendering audits the log three times over
@given(fights())
def test_every_log_renders_as_text_markdown_and_html(rf):
    """The session logs of omen_replay.render tell every event by seq in text, Markdown and HTML, end with the
    audit's verdict, and the HTML page is complete with an HP and a Will line per combatant in its chart."""
    records = rf.records
    seqs = {r.seq for r in records}
    assert {line.seq for line in narrate(records)} == seqs
    report = verify(records)  # the renderer runs the audit for its verdict
    text = render(records, TextWriter())
    assert {int(m) for m in re.findall(r"^#(\d+)", text, re.MULTILINE)} == seqs
    assert ("verified: hash chain intact" in text) == report.clean
    markdown = render(records, MarkdownWriter())
    assert {int(m) for m in re.findall(r"`#(\d+)`", markdown)} <= seqs and "## The end" in markdown
    page = render(records, HtmlWriter())
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    joined = {r.event.sheet.name for r in records if isinstance(r.event, CombatantJoined)}
    assert '<svg id="chart"' in page and page.count('<polyline class="series"') == 2 * len(joined)
