"""omen_server.views: what each seat may see of the events, the options and the table (default deny)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from omen_core import Fight, MemoryStore, SeededDice
from omen_core.commands import (
    ApplyConditionCommand,
    CallSave,
    CheckSpec,
    Command,
    DeclareAttack,
    EndTurn,
    Engage,
    RollInitiative,
    StaticCheck,
)
from omen_core.content import DealDamage, SaveEffect, load_sheet
from omen_core.events import EVENT_TYPES, SaveCalled
from omen_core.parts import Modifier
from omen_core.seats import HpDisplay
from omen_server.views import (
    EVENT_VIEWS,
    PLAYER_COMMANDS,
    UNNAMED_EFFECT,
    SeatIndex,
    Sight,
    actor_of,
    combatant_views,
    hp_band,
    participants_of,
    scrub,
    seat_options,
    seen_event,
    sight_of,
)
from tests.fights import present
from tests.server.test_app import SHEETS


def _fight() -> Fight:
    sheets = [load_sheet(SHEETS / f"{n}.toml") for n in ("kael", "vesh")]
    fight = Fight.start(MemoryStore(), "duel", dice=SeededDice(b"\x01" * 32), combatants=sheets)
    fight.execute(RollInitiative())
    return fight


def _sight(fight: Fight, kind: Any = "player", own: tuple[str, ...] = ("kael",), hidden: tuple[str, ...] = (),
           hp: Any = "banded") -> Sight:
    index = dict(found for rec in fight.store.read("duel") if (found := participants_of(rec)) is not None)
    return sight_of(kind, own, fight.state, hidden, hp, index)


def test_every_field_of_every_event_type_is_ruled_on() -> None:
    """The view table names every event type and every one of its fields, so nothing new is shown (or withheld)
    without a decision."""
    for kind in EVENT_TYPES:
        tag = kind.__struct_config__.tag
        assert tag in EVENT_VIEWS, tag
        assert set(EVENT_VIEWS[tag]) == set(kind.__struct_fields__), tag


def test_a_field_nobody_listed_is_withheld() -> None:
    """Default deny: a field the table does not list is left out of a player's view."""
    fight = _fight()
    rec = next(r for r in fight.store.read("duel") if r.event.__struct_config__.tag == "round_started")
    saved = EVENT_VIEWS["round_started"]
    EVENT_VIEWS["round_started"] = {}
    try:
        seen = seen_event(rec, _sight(fight))
    finally:
        EVENT_VIEWS["round_started"] = saved
    assert seen.event == {"type": "round_started"} and seen.withheld == ("round",)


def test_a_player_sees_its_own_sheet_and_only_the_table_view_of_others() -> None:
    """combatant_joined: the player's own sheet whole; another's id, name and side, nothing of its sheet (the sheet
    listed as withheld, being shown only in part, so the event comes without its salt)."""
    fight = _fight()
    joined = [r for r in fight.store.read("duel") if r.event.__struct_config__.tag == "combatant_joined"]
    own, other = (seen_event(r, _sight(fight)) for r in joined)
    assert own.event is not None and own.event["sheet"]["attributes"]
    assert other.event == {"type": "combatant_joined", "sheet": {"id": "vesh", "name": "Vesh the Cinder-Hand",
                                                                 "side": "raiders"}}
    assert other.withheld == ("sheet", "sheet_hash") and other.salt is None and own.salt is not None


def test_a_hidden_combatant_is_withheld_whole_and_kept_out_of_lists() -> None:
    """A combatant the GM hides: its join is the envelope alone, and the initiative order leaves it out."""
    fight = _fight()
    sight = _sight(fight, hidden=("vesh",))
    for rec in fight.store.read("duel"):
        seen = seen_event(rec, sight)
        assert seen.hash == rec.hash and seen.prev_hash == rec.prev_hash  # the chain is every seat's
        assert "vesh" not in msgspec.json.encode(seen).decode().replace('"type"', "")
    order = next(r for r in fight.store.read("duel") if r.event.__struct_config__.tag == "initiative_order_set")
    assert seen_event(order, sight).event == {"type": "initiative_order_set", "order": ["kael"]}


def test_an_attack_shows_others_totals_but_not_their_terms() -> None:
    """hit_determined: the attacker's seat sees every term; the defender's seat the hit total and its own defense
    whole; the crit check needs both sheets."""
    fight = _fight()
    attacker = fight.state.turn or "kael"
    target = "vesh" if attacker == "kael" else "kael"
    fight.execute(DeclareAttack(attacker=attacker, target=target,
                                weapon=fight.state.combatants[attacker].wielding[0]))
    while fight.state.stack:  # answer whatever window opens with its first offered choice
        options = fight.options()
        assert options.waiting is not None
        offer = next(o for o in options.offers if o.command in options.waiting.answers and o.choices)
        fight.execute(msgspec.convert({"command": offer.command, **offer.choices[0].args}, type=Command))
    hit = next(r for r in fight.store.read("duel") if r.event.__struct_config__.tag == "hit_determined")
    mine = seen_event(hit, _sight(fight, own=(attacker,)))
    theirs = seen_event(hit, _sight(fight, own=(target,)))
    assert mine.event is not None and theirs.event is not None
    assert "attribute_bonus" in mine.event["attack"] and set(theirs.event["attack"]) == {"total"}
    assert "res_bonus" in theirs.event["defense"] and set(mine.event["defense"]) == {"total"}
    assert "crit_check" in mine.withheld and "crit_check" in theirs.withheld


@pytest.mark.parametrize("hp,shown", [("exact", {"before": 12, "after": 7}),
                                      ("banded", {"before": "unhurt", "after": "hurt"}),
                                      ("hidden", {})])
def test_others_hp_shows_as_the_table_settings_say(hp: HpDisplay, shown: dict[str, object]) -> None:
    """resource_changed on another's HP: exact, a band (unhurt / hurt / bloodied / down) or withheld; Will is
    always its owner's."""
    fight = _fight()
    rec = msgspec.convert({"fight_id": "duel", "seq": 99, "batch": 99, "batch_size": 1, "recorded_at": 0,
                           "schema_version": 3, "prev_hash": "0" * 64, "hash": "1" * 64,
                           "event": {"type": "resource_changed", "action": None, "who": "vesh", "resource": "hp",
                                     "before": 12, "after": 7}}, type=type(next(fight.store.read("duel"))))
    seen = seen_event(rec, _sight(fight, hp=hp))
    assert seen.event is not None
    assert {k: v for k, v in seen.event.items() if k in ("before", "after")} == shown
    will = msgspec.structs.replace(rec, event=msgspec.structs.replace(rec.event, resource="will"))
    assert set(seen_event(will, _sight(fight, hp="exact")).withheld) == {"before", "after"}


def test_hp_bands() -> None:
    """The bands: unhurt at full, hurt above half, bloodied at half or less, down at 0 (ruling)."""
    assert [hp_band(n, 12) for n in (12, 7, 6, 1, 0, -3)] == ["unhurt", "hurt", "bloodied", "bloodied", "down",
                                                               "down"]


def test_a_player_is_offered_only_its_own_combatants_commands() -> None:
    """seat_options: the offers of the player's combatants among the player commands, their standing only; the
    GM sees them all; a spectator none."""
    fight = _fight()
    options = fight.options()
    mine = seat_options(options, _sight(fight))
    assert mine.offers and all(o.actor == "kael" and o.command in PLAYER_COMMANDS for o in mine.offers)
    assert [b.who for b in mine.combatants] == ["kael"]
    assert seat_options(options, Sight(kind="gm")) == options
    watcher = seat_options(options, _sight(fight, kind="spectator", own=()))
    assert watcher.offers == () and watcher.combatants == () and watcher.phase == options.phase


def test_the_table_view_of_combatants() -> None:
    """combatant_views: own exact with Will and what is in hand; others banded; hidden ones absent; the GM sees
    everyone, the hidden marked."""
    fight = _fight()
    views = {v.id: v for v in combatant_views(fight.state, _sight(fight))}
    assert views["kael"].hp == 24 and views["kael"].will is not None and views["kael"].in_hand is not None
    assert views["vesh"].hp is None and views["vesh"].hp_band == "unhurt" and views["vesh"].will is None
    assert [v.id for v in combatant_views(fight.state, _sight(fight, hidden=("vesh",)))] == ["kael"]
    gm = {v.id: v for v in combatant_views(fight.state, Sight(kind="gm"), ["vesh"])}
    assert gm["vesh"].hidden and gm["vesh"].hp == 12


def test_an_unseen_combatant_is_hidden_from_the_other_seats() -> None:
    """Unseen (C27) hides a combatant from every seat but its own until it is seen again."""
    fight = _fight()
    fight.execute(ApplyConditionCommand(who="vesh", condition="Unseen"))
    assert "vesh" in _sight(fight).hidden
    assert "vesh" not in _sight(fight, own=("vesh",)).hidden


def test_errors_are_scrubbed_of_secrets() -> None:
    """scrub: another's gear and hidden names standing as words of their own become (hidden) in the engine's
    words; the same text inside a longer word, and what the seat typed itself, stay as they are."""
    fight = _fight()
    sight = _sight(fight, hidden=("vesh",))
    text = "Vesh the Cinder-Hand has no knife here; knifes and knife-work; kael holds his sword"
    assert scrub(text, sight) == "(hidden) has no (hidden) here; knifes and knife-work; kael holds his sword"
    typed = scrub(text, sight, typed=["knife"])
    assert typed == "(hidden) has no knife here; knifes and knife-work; kael holds his sword"
    assert scrub(text, Sight(kind="gm")) == text


def test_the_actor_of_a_command() -> None:
    """actor_of: the combatant a player's command acts for; None for the GM's commands."""
    assert actor_of(DeclareAttack(attacker="kael", target="vesh")) == "kael"
    assert actor_of(RollInitiative()) is None


@pytest.mark.parametrize("hidden", [(), ("vesh",)])
def test_a_command_naming_a_hidden_combatant_in_a_list_shows_its_name_alone(hidden: tuple[()] | tuple[str]) -> None:
    """A move the GM gives for a player's combatant, leaving the reach of a combatant the GM hides (``leaves`` is
    a list of names, C23): the player's seat is shown the command's name and its actor, not the hidden name;
    with nobody hidden, the command whole. Found by the seats property: only single names were checked."""
    from omen_core.commands import Move
    from omen_core.events import GENESIS_HASH, CommandIssued, seal

    fight = _fight()
    rec = seal("duel", fight.version + 1, 0, GENESIS_HASH, CommandIssued(command=Move(who="kael", leaves=("vesh",)),
                                                                         by="gm"))
    seen = seen_event(rec, _sight(fight, hidden=hidden))
    assert seen.event is not None
    if hidden:
        assert seen.event["command"] == {"command": "move", "who": "kael"}
        assert "vesh" not in msgspec.json.encode(seen).decode()
    else:
        assert seen.event["command"]["leaves"] == ("vesh",)


@pytest.mark.parametrize("command", [
    DeclareAttack(attacker="vesh", target="kael", weapon="knife"),  # a hidden one acts
    StaticCheck(check=CheckSpec(who="vesh", skill="Stealth"), difficulty=10),  # the GM's check of a hidden one
    Engage(who="vesh", others=("kael",)),  # the GM's: an unseen one with a seen one
])
def test_a_command_naming_a_hidden_combatant_not_for_the_seats_own_is_an_envelope(command: Command) -> None:
    """A command that names a combatant the seat does not see, and does not act for the seat's own, is withheld
    whole (its name alone told that a hidden one attacked or was checked, or that a seen one was put beside one
    unseen); Kael's player, who plays none of them, gets its envelope. Found by a tester reading batches."""
    from omen_core.events import GENESIS_HASH, CommandIssued, seal

    fight = _fight()
    rec = seal("duel", fight.version + 1, 0, GENESIS_HASH, CommandIssued(command=command, by="gm"))
    assert seen_event(rec, _sight(fight, own=("ash",), hidden=("vesh",))).event is None
    assert seen_event(rec, _sight(fight, own=("ash",))).event is not None


def test_a_hidden_combatant_in_a_list_or_as_an_applier_changes_nothing_a_seat_is_shown() -> None:
    """Two commands that differ only in a combatant the seat does not see, in a list of names (an engagement's
    ``others``, a move's ``leaves``, an ambush's ``ambushers``) or as who applied a condition (``by``): the seat is
    shown the same command, and the condition's event the same way, ``by`` left out whether it named the hidden one
    or no one (found by a tester: a hidden name in a list withheld the whole command, and a hidden ``by`` the whole
    event, telling that a hidden one was there). A move the GM gives for the seat's own combatant shows its
    ``leaves`` without the hidden, in part (no salt) whether or not one was there (a second tester: it was whole,
    salt and all, with none hidden, and its name alone with one)."""
    from omen_core.commands import BeginAmbush, Move
    from omen_core.events import GENESIS_HASH, CommandIssued, ConditionApplied, seal

    fight = _fight()
    sight = _sight(fight, own=("kael",), hidden=("skarn",))

    def shown(event: Any) -> tuple[Any, ...]:
        seen = seen_event(seal("duel", fight.version + 1, 0, GENESIS_HASH, event), sight)
        return seen.type, seen.event, seen.withheld, seen.salt is None

    pairs: list[tuple[Command, Command]] = [(Engage(who="vesh", others=("kael", "skarn")),
                                             Engage(who="vesh", others=("kael",))),
             (Move(who="vesh", leaves=("kael", "skarn")), Move(who="vesh", leaves=("kael",))),
             (Move(who="kael", leaves=("vesh", "skarn")), Move(who="kael", leaves=("vesh",))),  # the seat's own
             (Move(who="kael", leaves=("skarn",)), Move(who="kael")),
             (BeginAmbush(ambushers=("vesh", "skarn"), defenders=("kael",)),
              BeginAmbush(ambushers=("vesh",), defenders=("kael",))),
             (ApplyConditionCommand(who="kael", condition="Prone", reason="tripped", by="skarn"),
              ApplyConditionCommand(who="kael", condition="Prone", reason="tripped"))]
    for with_hidden, without in pairs:
        assert shown(CommandIssued(command=with_hidden, by="gm")) == shown(CommandIssued(command=without, by="gm"))
    own_move = shown(CommandIssued(command=pairs[2][0], by="gm"))  # the GM's move for Kael: its list, in part
    assert own_move[1]["command"] == {"command": "move", "who": "kael", "leaves": ("vesh",)} and own_move[3]
    assert not shown(CommandIssued(command=pairs[2][1], by="player:Alice"))[3]  # her own: whole, salt and all
    applied = shown(ConditionApplied(action=None, who="kael", condition="Prone", added=1, stacks=1, by="skarn"))
    assert applied == shown(ConditionApplied(action=None, who="kael", condition="Prone", added=1, stacks=1))
    assert applied[1] is not None and "by" not in applied[1] and "by" in applied[2]
    assert shown(CommandIssued(command=pairs[-1][1], by="gm"))[1]["command"]["reason"] == "tripped"


def _saved(fight: Fight, caller: str = "kael") -> list[Any]:
    """A save called by ``caller`` (on its turn) on the other: the GM's effect, named, with a branch."""
    effect = SaveEffect(name="Cinder breath", save="AGI", against="FCS",
                        on_failure=(DealDamage(flat=3, damage_type="fire"),))
    saver = "vesh" if caller == "kael" else "kael"
    if fight.state.turn != caller:
        fight.execute(EndTurn(who=str(fight.state.turn)))
    return [r for r in fight.execute(CallSave(caller=caller, saver=saver, effect=effect))
            if r.event.__struct_config__.tag in ("save_called", "save_resolved")]


def test_a_save_effect_is_its_callers_and_the_others_see_a_save() -> None:
    """Ruling (docs/rulings.md, "A save's effect"): Vesh's effect on Kael shows Kael's player what it needs to check
    its own save (AGI against FCS, a spell, 1 Action: those two at their defaults, so left out as every line leaves
    them, docs/events.md), named "a save", without what a failure does; the GM, and a player of the caller, see it
    whole."""
    fight = _fight()
    called, resolved = _saved(fight, caller="vesh")
    kael = _sight(fight)
    effect = called.as_(SaveCalled).effect
    assert effect.spell and effect.action_cost == 1
    assert present(seen_event(called, kael).event)["effect"] == {"name": UNNAMED_EFFECT, "save": "AGI",
                                                                  "against": "FCS"}
    assert present(seen_event(resolved, kael).event)["effect"] == UNNAMED_EFFECT
    vesh = _sight(fight, own=("vesh",))
    whole = present(seen_event(called, vesh).event)["effect"]
    assert whole == msgspec.to_builtins(called.event.effect) and whole["on_failure"]
    assert present(seen_event(resolved, vesh).event)["effect"] == "Cinder breath"
    assert present(seen_event(called, Sight(kind="gm")).event)["effect"]["name"] == "Cinder breath"


def test_a_save_effect_the_gm_made_public_is_named_to_every_seat() -> None:
    """An effect whose name is in the table settings' public_effects is named to every seat; what a branch does
    is still the caller's."""
    fight = _fight()
    called, resolved = _saved(fight, caller="vesh")
    index = dict(found for rec in fight.store.read("duel") if (found := participants_of(rec)) is not None)
    public = sight_of("spectator", (), fight.state, (), "banded", index, {}, public_effects=["Cinder breath"])
    assert present(seen_event(called, public).event)["effect"]["name"] == "Cinder breath"
    assert "on_failure" not in present(seen_event(called, public).event)["effect"]
    assert present(seen_event(resolved, public).event)["effect"] == "Cinder breath"


def test_a_player_sees_every_term_of_its_own_roll_the_gms_modifiers_and_their_sources_too() -> None:
    """Ruling (docs/rulings.md, "A player's own roll"): the GM's situational modifier on Kael's check reaches
    Kael's player with its value and its source (it must be able to check its own total); Vesh's player sees the
    roller and the total alone."""
    fight = _fight()
    fog = Modifier(source="the GM's fog", value=-1)
    done = fight.execute(StaticCheck(check=CheckSpec(who="kael", attribute="AGI", modifiers=(fog,)), difficulty=10))
    resolved = next(r for r in done if r.event.__struct_config__.tag == "static_check_resolved")
    own = present(seen_event(resolved, _sight(fight)).event)["check"]
    assert list(own["modifiers"]) == [{"source": "the GM's fog", "value": -1}]
    assert present(seen_event(resolved, _sight(fight, own=("vesh",))).event)["check"] == {"roller": "kael",
                                                                                 "total": own["total"]}


def _warded() -> Fight:
    """Vesh's unarmed hit (5 + 3 = 8) on Kael (base defense 1 + 0 RES), Shade beside Kael warding him (+2, C11, C38:
    defense 3), Kael declining his Active Defense (C8): the hit stands, 8 against 3."""
    from omen_core import ScriptedDice
    from tests.sheets import sheet

    shade = msgspec.structs.replace(sheet("shade"), abilities=("arcane_ward",))
    fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([5, 3, 1]), clock=lambda: 0,
                        combatants=[sheet("kael"), shade, sheet("vesh", side="raiders")])
    fight.engage("shade", "kael")
    fight.attack("vesh", "kael", unarmed=True)
    fight.answer_decision("arcane_ward", "shade", "ward")
    fight.defend("kael", None)
    return fight


def test_a_decision_of_a_combatant_a_seat_does_not_see_is_withheld_with_it() -> None:
    """A hidden ally's Arcane Ward (C38): when Vesh's hit (5 + 3 = 8) would beat Kael's base defense (1), the hidden
    Shade is asked and wards (+2, C11: defense 3; Kael declines his Active Defense). Kael's player sees its defense
    with an "Arcane Ward" term, but no decision event, and the hidden one's id nowhere in what it receives; the GM
    sees it all."""
    from omen_core.events import DecisionAnswered, DecisionClosed, DecisionOpened, HitDetermined

    fight = _warded()
    hit = next(r.as_(HitDetermined) for r in fight.events if isinstance(r.event, HitDetermined))
    assert (hit.defense.modifiers, hit.defense.total) == ((Modifier(source="Arcane Ward", value=2,
                                                                    origin="ability:Arcane Ward", owner="shade"),), 3)
    alice = _sight(fight, own=("kael",), hidden=("shade",))
    decisions = (DecisionOpened, DecisionAnswered, DecisionClosed)
    for rec in fight.events:
        seen = seen_event(rec, alice)
        if isinstance(rec.event, decisions):
            assert seen.event is None and seen.type is None, rec.event
        assert "shade" not in msgspec.json.encode(seen).decode(), rec.event
    gm = _sight(fight, kind="gm", own=())
    assert all(seen_event(r, gm).event is not None for r in fight.events if isinstance(r.event, decisions))


def test_a_seat_sees_its_own_abilitys_term_in_anothers_total_and_no_other_term() -> None:
    """An ally's Arcane Ward in Kael's defense (C37, C38: Vesh's 5 + 3 = 8 against Kael's 1 die + 0 RES, + 2 ward =
    3): the warder's seat, which does not own Kael, is shown the total and its own term alone (the term names its
    owner, the warder); a seat owning neither sees the total alone; Kael's seat sees every term, the warder named
    because it sees her, and a line of the story says the warder's term is its own."""
    from omen_core.events import HitDetermined
    from omen_server.story import story

    fight = _warded()
    rec = next(r for r in fight.events if isinstance(r.event, HitDetermined))
    ward = {"source": "Arcane Ward", "value": 2, "origin": "ability:Arcane Ward", "owner": "shade"}
    warder = seen_event(rec, _sight(fight, own=("shade",)))
    assert warder.event is not None and warder.event["defense"] == {"total": 3, "modifiers": [ward]}
    assert "defense" in warder.withheld and warder.salt is None  # shown in part: no salt to check a hash with
    other = seen_event(rec, _sight(fight, own=("vesh",)))
    assert other.event is not None and other.event["defense"] == {"total": 3}
    kael = seen_event(rec, _sight(fight, own=("kael",)))
    assert kael.event is not None and list(kael.event["defense"]["modifiers"]) == [ward]
    names = {"kael": "Kael", "shade": "Shade", "vesh": "Vesh"}
    said = [line for card in story([seen_event(r, _sight(fight, own=("shade",))) for r in fight.events], names)
            for line in (card.headline, *card.lines)]
    assert any("against defense 3 (of which + 2 Arcane Ward, yours)" in text for text in said), said


@pytest.mark.parametrize("hidden", [(), ("skarn",)])
def test_a_hosts_seat_index_shows_a_seat_what_the_server_shows_it(hidden: tuple[str, ...]) -> None:
    """docs/live.md, "Each seat's view from Python": a host that reads a fight's log once with ``SeatIndex.of`` and
    shows a seat ``seen_event`` of each event under ``index.sight(...)`` shows it exactly what ``omen serve``'s
    ``GET /events`` shows that seat (Alice, Kael's player, as Skarn attacks Kael: Skarn seen or hidden by the GM),
    and its options exactly the server's."""
    from omen_core.walk import StoreSource, replay
    from tests.server.test_app import Table
    from tests.server.test_table import skarn_attacks_kael

    table = Table()
    with table.client:
        alice = skarn_attacks_kael(table)
        if hidden:
            answer = table.client.post("/fights/duel/settings", headers=table.auth(), json={"hide": list(hidden)})
            assert answer.status_code == 200, answer.text
        served = table.client.get("/fights/duel/events", headers=table.auth(alice)).json()
        offered = table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"]
    records = list(table.store.read("duel"))
    index = SeatIndex.of(records)
    fight = Fight.load(table.store, "duel")
    sight = index.sight("player", ("kael",), replay(StoreSource(table.store, "duel")), hidden_by_gm=hidden)
    ours = msgspec.json.decode(msgspec.json.encode([seen_event(r, sight) for r in records]))
    assert ours == served["events"] and len(ours) == len(records)
    assert any(e["withheld"] for e in ours)  # something is withheld from Alice: the comparison means something
    assert msgspec.json.decode(msgspec.json.encode(seat_options(fight.options(), sight))) == offered


def test_an_npcs_triggered_ability_is_named_only_to_its_owner_and_where_the_gm_made_it_public() -> None:
    """An ability is its owner's sheet (GM-only for an NPC, C37): when Kael's unarmed 1 + 1 = 2 misses Vesh's 6,
    Vesh's Riposte is offered (C38). Kael's player sees that the fight waits on Vesh's decision (kind "decision",
    title "a decision", the choices and their costs), but not its name or what it does, in the events and in its
    options; Vesh's own seat and the GM see it whole; once the GM makes "Riposte" public, every seat sees it."""
    from omen_core import ScriptedDice
    from omen_core.events import DecisionAnswered, DecisionOpened
    from omen_core.seats import seat_options
    from tests.sheets import sheet

    vesh = msgspec.structs.replace(sheet("vesh", side="raiders"), abilities=("riposte",))
    fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([1, 1, 6, 4]), clock=lambda: 0,
                        combatants=[sheet("kael"), vesh])
    fight.attack("kael", "vesh", unarmed=True)
    opened = next(r for r in fight.events if isinstance(r.event, DecisionOpened))
    alice = _sight(fight, own=("kael",))
    seen = present(seen_event(opened, alice).event)
    assert (seen["decision"], seen["title"], list(seen["choices"])) == ("decision", "a decision", ["use", "pass"])
    assert "labels" not in seen and "Riposte" not in msgspec.json.encode(seen).decode()
    waiting = seat_options(fight.options(), alice).waiting
    assert waiting is not None and (waiting.kind, waiting.title, waiting.cost) == ("decision", "a decision", "")
    owner = _sight(fight, own=("vesh",))
    assert present(seen_event(opened, owner).event)["title"] == "Riposte"
    owned = seat_options(fight.options(), owner).waiting
    assert owned is not None and owned.title == "Riposte"
    fight.answer_decision("riposte", "vesh", "use")
    answered = next(r for r in fight.events if isinstance(r.event, DecisionAnswered))
    told = present(seen_event(answered, alice).event)
    assert (told["decision"], told["choice"]) == ("decision", "use") and "label" not in told
    public = sight_of("player", ("kael",), fight.state, (), "banded",
                      dict(found for rec in fight.events if (found := participants_of(rec)) is not None), {},
                      public_effects=["Riposte"])
    assert present(seen_event(opened, public).event)["title"] == "Riposte"


def test_an_abilitys_will_cost_is_its_owners_even_where_the_decision_is_public() -> None:
    """A combatant's Will is its owner's (C41 costs; ``cost_paid``'s amount is withheld): Kael attacks Vesh, whose
    Evasive Footwork (1 Will, at attack.declared, C38) opens a decision. Kael's player, the GM having made the name
    public, sees the decision and that using it costs Will, "some Will", in the event (``costs`` named in
    ``withheld``) and in its options' ``waiting.cost``; Vesh's seat and the GM see "1 Will"; "free" is free."""
    from omen_core import ScriptedDice
    from omen_core.events import DecisionOpened
    from omen_core.seats import seat_options
    from tests.sheets import sheet

    vesh = msgspec.structs.replace(sheet("vesh", side="raiders"), abilities=("evasive_footwork",))
    fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([3, 3, 4, 4]), clock=lambda: 0,
                        combatants=[sheet("kael"), vesh])
    fight.attack("kael", "vesh", unarmed=True)
    opened = next(r for r in fight.events if isinstance(r.event, DecisionOpened))
    assert isinstance(opened.event, DecisionOpened) and list(opened.event.costs) == ["1 Will", "free"]
    index = dict(found for rec in fight.events if (found := participants_of(rec)) is not None)
    alice = sight_of("player", ("kael",), fight.state, (), "exact", index, {}, public_effects=["Evasive Footwork"])
    seen = seen_event(opened, alice)
    assert present(seen.event)["title"] == "Evasive Footwork"
    assert list(present(seen.event)["costs"]) == ["some Will", "free"] and "costs" in seen.withheld
    waiting = seat_options(fight.options(), alice).waiting
    assert waiting is not None and "some Will" in waiting.cost and "1 Will" not in waiting.cost, waiting
    for own in (_sight(fight, own=("vesh",)), _sight(fight, kind="gm", own=())):
        whole = seen_event(opened, own)
        assert list(present(whole.event)["costs"]) == ["1 Will", "free"] and "costs" not in whole.withheld
        told = seat_options(fight.options(), own).waiting
        assert told is not None and "1 Will" in told.cost, told


@pytest.mark.parametrize(("hp", "words"), [("exact", "1 Action and 2 HP and some Will"),
                                           ("banded", "1 Action and some HP and some Will"),
                                           ("hidden", "1 Action and some HP and some Will")])
def test_a_cost_in_words_shows_hp_as_the_hp_display_does_and_will_to_the_payers_seat(hp: Any, words: str) -> None:
    """``seen_cost``: an amount of HP in a cost reads as the fight's HP display shows HP (a number only where it is
    exact), of Will only to the seat that plays every payer (and the GM); Actions stay; a deferred heal's "3 HP
    healed" is what the ability does, not a cost, and stays."""
    from omen_core import ScriptedDice
    from omen_core.seats import seen_cost
    from tests.sheets import sheet

    fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([]), clock=lambda: 0,
                        combatants=[sheet("kael"), sheet("vesh", side="raiders")])
    cost = "1 Action and 2 HP and 3 Will"
    assert seen_cost(cost, ["vesh"], _sight(fight, own=("kael",), hp=hp)) == words
    assert seen_cost(cost, ["vesh"], _sight(fight, own=("vesh",), hp=hp)) == cost
    assert seen_cost(cost, ["vesh", "kael"], _sight(fight, own=("vesh",), hp="exact")) != cost
    assert seen_cost(cost, ["vesh"], _sight(fight, kind="gm", own=(), hp=hp)) == cost
    assert seen_cost("free now; then 3 HP healed at the start of next turn (C41)", ["vesh"],
                     _sight(fight, own=("kael",), hp=hp)).endswith("3 HP healed at the start of next turn (C41)")


def test_the_damage_an_npcs_ability_deals_back_is_named_only_to_its_owner() -> None:
    """Vesh's Riposte (C37, C38) deals 1d6 to Kael, the attacker, within Kael's own attack: Kael's player sees the
    damage land (its type, the HP it costs) but not its source (the ability's name) nor its terms (Vesh's die),
    which are Vesh's sheet; Vesh's seat sees both; Kael's own hit on another, its damage source and terms."""
    from omen_core import ScriptedDice
    from omen_core.events import DamageResolved
    from tests.sheets import sheet

    vesh = msgspec.structs.replace(sheet("vesh", side="raiders"), abilities=("riposte",))
    fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([1, 1, 6, 4]), clock=lambda: 0,
                        combatants=[sheet("kael"), vesh])
    fight.attack("kael", "vesh", unarmed=True)
    fight.answer_decision("riposte", "vesh", "use")
    back = next(r for r in fight.events if isinstance(r.event, DamageResolved))
    dealt = back.as_(DamageResolved)
    assert (dealt.target, dealt.source) == ("kael", "Riposte")
    seen = seen_event(back, _sight(fight))
    assert seen.event is not None and "source" not in present(seen.event) and "terms" not in present(seen.event)
    assert {"source", "terms"} <= set(seen.withheld) and present(seen.event)["final"] == dealt.final
    owner = present(seen_event(back, _sight(fight, own=("vesh",))).event)
    assert owner["source"] == "Riposte" and owner["terms"] == msgspec.to_builtins(dealt.terms)


def test_a_window_or_engagement_of_hidden_combatants_alone_is_withheld_whole() -> None:
    """C23, C24: an Interrupt window for hidden Skarn alone is withheld from Kael's player whole (shown with no
    responder it read "Interrupt window for someone", telling that a hidden foe was within reach: found by a
    tester), and so is an engagement with Skarn alone; one for Vesh and Skarn is shown exactly as one for Vesh
    alone."""
    from omen_core.events import GENESIS_HASH, EngagementChanged, ReactionWindowOpened, seal

    fight = _fight()
    sight = _sight(fight, own=("kael",), hidden=("skarn",))

    def shown(event: Any) -> tuple[Any, ...]:
        seen = seen_event(seal("duel", fight.version + 1, 0, GENESIS_HASH, event), sight)
        return seen.type, seen.event, seen.withheld

    for alone, both, seen in (
            (ReactionWindowOpened(action=5, reaction="interrupt", responders=("skarn",)),
             ReactionWindowOpened(action=5, reaction="interrupt", responders=("vesh", "skarn")),
             ReactionWindowOpened(action=5, reaction="interrupt", responders=("vesh",))),
            (EngagementChanged(who="kael", others=("skarn",), engaged=True),
             EngagementChanged(who="kael", others=("vesh", "skarn"), engaged=True),
             EngagementChanged(who="kael", others=("vesh",), engaged=True))):
        assert shown(alone)[:2] == (None, None)
        assert shown(both)[:2] == shown(seen)[:2] and shown(seen)[0] is not None


@pytest.mark.parametrize("ally", [False, True])
def test_an_answers_damage_shows_its_terms_to_the_answerers_seat_alone(ally: bool) -> None:
    """C37, C38: the damage an ability answering a decision deals is its owner's sheet's: its source and terms go to
    the seat that plays the answerer, not the other party's. Leave Sting (move.left: 2 piercing to the mover) answers
    the orc leaving Ana's reach (the move names the mover alone: Alice, who plays Ana, was not shown her own
    ability's terms: a tester); and, ``ally``, Ana's Sting Back (ally_of_target at attack.damaged: 2 piercing to the
    attacker) answers the orc's hit on Bram (the terms went to Bram's seat, as if Bram dealt it)."""
    from tests.server.test_app import Table
    from tests.sheets import sheet as plain

    sting = {"id": "sting", "name": "Sting", "use": "trigger",
             "trigger": ({"moment": "attack.damaged", "owner": "ally_of_target"} if ally
                         else {"moment": "move.left", "owner": "left_behind"}),
             "effects": [{"kind": "damage", "flat": 2, "damage_type": "piercing", "to": "target"}]}
    table = Table()
    with table.client:
        table.create(dice="manual", names=(), combatants=[
            {**msgspec.to_builtins(plain("ana")), "abilities": [sting]}, msgspec.to_builtins(plain("bram")),
            msgspec.to_builtins(plain("orc", side="raiders"))])
        tokens = {who: table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": who, "combatants": [who]}).json()["token"] for who in ("ana", "bram")}
        steps: list[tuple[dict[str, Any], str | None]] = [
            ({"command": "roll_initiative", "dice": [1, 2, 6]}, None),  # the orc first
            ({"command": "engage", "who": "orc", "others": ["ana", "bram"]}, None)]
        if ally:
            steps += [({"command": "engage", "who": "ana", "others": ["bram"]}, None),
                      ({"command": "declare_attack", "attacker": "orc", "target": "bram", "unarmed": True,
                        "dice": [6, 1, 1]}, None),
                      ({"command": "answer_active_defense", "defender": "bram", "defense": None}, tokens["bram"]),
                      ({"command": "answer_decision", "decision": "sting", "who": "ana", "choice": "use"},
                       tokens["ana"])]
        else:
            steps += [({"command": "move", "who": "orc", "leaves": ["ana"]}, None),  # no AoO before Ana's first
                      ({"command": "answer_decision", "decision": "sting", "who": "ana", "choice": "use"},  # turn
                       tokens["ana"])]
        for body, token in steps:
            answer = table.command(body, token=token)
            assert answer.status_code == 201, (body, answer.text)

        def sting_damage(token: str) -> dict[str, Any]:
            events = table.client.get("/fights/duel/events?limit=500", headers=table.auth(token)).json()["events"]
            return next(e for e in events if e["type"] == "damage_resolved" and e["event"]["target"] == "orc")

        mine, theirs = sting_damage(tokens["ana"]), sting_damage(tokens["bram"])
        assert mine["event"]["source"] == "Sting" and mine["event"]["terms"]["raw"] == 2, mine
        assert "terms" in theirs["withheld"] and "source" in theirs["withheld"], theirs
        assert "terms" not in theirs["event"] and "Sting" not in str(theirs), theirs


def test_a_field_a_seat_would_not_be_shown_looks_the_same_there_or_left_out() -> None:
    """An event whose GM-only field (a note, a reason) or owner's field (an attacker's damage modifiers) is left out
    of the log (its default) is shown to a player exactly as one that holds it: the field named in ``withheld``, no
    salt, either way (found by a tester: an end of the fight with the GM's note was ``withheld: ["note"]`` and
    without it ``[]`` and a salt, telling the player the GM had written one)."""
    from omen_core.events import (
        GENESIS_HASH,
        AttackDeclared,
        CombatantLeft,
        ConditionCleared,
        DiceSourceChanged,
        FightEnded,
        seal,
    )

    fight = _fight()
    sight = _sight(fight, own=("kael",))

    def shown(event: Any) -> tuple[Any, ...]:
        seen = seen_event(seal("duel", fight.version + 1, 0, GENESIS_HASH, event), sight)
        return seen.type, seen.event, seen.withheld, seen.salt is None

    pairs = [(FightEnded(reason="yielded", side="raiders", note="they ran"), FightEnded(reason="yielded",
                                                                                      side="raiders")),
             (CombatantLeft(who="vesh", reason="fled", note="to the ford"), CombatantLeft(who="vesh", reason="fled")),
             (ConditionCleared(action=None, who="kael", condition="Prone", reason="stood"),
              ConditionCleared(action=None, who="kael", condition="Prone")),
             (DiceSourceChanged(before="seeded", after="manual", reason="dice on the table"),
              DiceSourceChanged(before="seeded", after="manual")),
             (AttackDeclared(action=5, attacker="vesh", target="kael", weapon="knife", kind="melee",
                             damage_modifiers=(Modifier(source="Cinder", value=2),)),
              AttackDeclared(action=5, attacker="vesh", target="kael", weapon="knife", kind="melee"))]
    for there, left_out in pairs:
        assert shown(there) == shown(left_out), type(there).__name__
        assert shown(left_out)[3], "no salt: the seat cannot check a hash that holds what it is not shown"


def test_who_typed_a_commands_faces_looks_the_same_to_a_seat_whether_recorded_or_not() -> None:
    """``command_issued.faces_by`` is withheld with the faces it tells of (a command's ``dice``, no other seat's to
    see): a player's own command carrying faces shows the same whether or not another typed some (``faces_by``
    named as withheld either way), and one carrying none keeps its salt (nothing withheld); the GM sees it."""
    from omen_core.commands import EndTurn, PassReaction
    from omen_core.events import GENESIS_HASH, CommandIssued, FacesGiven, seal

    fight = _fight()
    alice = _sight(fight, own=("kael",))

    def shown(event: Any, sight: Sight = alice) -> tuple[Any, ...]:
        seen = seen_event(seal("duel", fight.version + 1, 0, GENESIS_HASH, event), sight)
        return seen.event, seen.withheld, seen.salt is None

    typed = CommandIssued(command=PassReaction(who="kael", dice=(6, 6, 1)), by="player:Alice",
                          faces_by=(FacesGiven(by="gm", faces=2), FacesGiven(by="player:Alice", faces=1)))
    alone = msgspec.structs.replace(typed, faces_by=())
    assert shown(typed) == shown(alone) and shown(typed)[1] == ("command", "faces_by") and shown(typed)[2]
    assert shown(CommandIssued(command=EndTurn(who="kael"), by="player:Alice"))[1:] == ((), False)
    gm = shown(typed, _sight(fight, kind="gm", own=()))
    assert gm[0]["faces_by"] == ({"by": "gm", "faces": 2}, {"by": "player:Alice", "faces": 1}) and not gm[1]


def test_a_gms_command_for_a_combatant_the_seat_sees_names_it() -> None:
    """docs/server.md: any other command reaches a seat as its name and the combatant it acts for: the GM's
    condition on Kael, with or without a reason, and Vesh leaving the fight name their ``who`` to Kael's player
    (apply_condition without a reason, and leave_fight, came as their names alone: found by a tester); one for a
    hidden combatant is still withheld whole."""
    from omen_core.commands import LeaveFight
    from omen_core.events import GENESIS_HASH, CommandIssued, seal

    fight = _fight()
    sight = _sight(fight, own=("kael",), hidden=("skarn",))

    def shown(command: Command) -> Any:
        return seen_event(seal("duel", fight.version + 1, 0, GENESIS_HASH, CommandIssued(command=command, by="gm")),
                          sight).event

    assert shown(ApplyConditionCommand(who="kael", condition="Prone"))["command"] == {
        "command": "apply_condition", "who": "kael"}
    assert shown(ApplyConditionCommand(who="kael", condition="Prone", reason="tripped"))["command"] == {
        "command": "apply_condition", "who": "kael", "reason": "tripped"}
    assert shown(LeaveFight(who="vesh", reason="fled"))["command"] == {"command": "leave_fight", "who": "vesh"}
    assert shown(LeaveFight(who="skarn", reason="fled")) is None
