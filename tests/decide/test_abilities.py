"""Abilities used on their owner's turn (omen_core.decide.abilities, C37): costs, targets, uses, saves, healing.

Sheets are tests.sheets' (every attribute d6 +0, 20 HP). Shipped abilities (docs/abilities.md): Healing Word
(a Bonus Action: an ally or oneself regains 1d6 + 1), Flame Burst (an Action, a spell: AGI save against INT,
2d6 fire on a failure, half on a success), Shove (an Action on an enemy within reach: STR against STR, Prone on
a failure).
"""

from __future__ import annotations

import msgspec
import pytest

from omen_core.commands import UseAbility
from omen_core.content import Ability, CombatantSheet, decode_content
from omen_core.engine import Fight
from omen_core.errors import RuleViolation
from omen_core.events import (
    AbilityUsed,
    ConditionCleared,
    DamageResolved,
    ReactionWindowOpened,
    SaveCalled,
)
from omen_core.parts import Modifier
from tests.fights import assert_replays, new_fight
from tests.sheets import sheet


def caster(*abilities: str | Ability, cid: str = "ana") -> CombatantSheet:
    """A heroes' sheet with ``abilities``."""
    return msgspec.structs.replace(sheet(cid), abilities=abilities)


def use(fight: Fight, who: str, ability: str, target: str | None = None) -> None:
    """``who`` uses ``ability`` on ``target``."""
    fight.execute(UseAbility(who=who, ability=ability, target=target))


def wounded(fight: Fight, who: str) -> None:
    """The orc hits ``who`` unarmed with the next scripted faces (STR, FCS, RES; the defender declines): the raw STR
    die lands (C12)."""
    fight.attack("orc", who, unarmed=True)
    fight.defend(who, None)


def test_healing_word_heals_an_ally_and_costs_a_bonus_action() -> None:
    """Healing Word: the orc's 6 + 6 = 12 beats Bram's 1, raw 6: 20 to 14; Ana's Healing Word rolls d6 = 3, +1:
    Bram regains 4 (18), and Ana spends 1 of her 2 Bonus Actions (C22)."""
    fight = new_fight(sheet("orc", side="raiders"), caster("healing_word"), sheet("bram"), faces=[6, 6, 1, 3])
    wounded(fight, "bram")
    use(fight, "ana", "healing_word", "bram")
    assert fight.state.combatants["bram"].hp == 18 and fight.state.combatants["ana"].bonus_actions == 1
    used = [r.event for r in fight.events if isinstance(r.event, AbilityUsed)]
    assert used == [AbilityUsed(action=used[0].action, who="ana", ability="healing_word", name="Healing Word",
                                target="bram")]
    assert fight.state.at_rest
    assert_replays(fight)


def test_healing_never_goes_above_the_sheet_and_a_dying_ally_is_raised() -> None:
    """C36: Bram (3 HP) hit for raw 6 drops to 0 and is Dying; Healing Word's 2 + 1 = 3 raises him to 3 and he is no
    longer Dying (a condition_cleared citing C36); healed again by 6 + 1 he stops at his sheet's 3 HP."""
    fight = new_fight(sheet("orc", side="raiders"), caster("healing_word"), sheet("bram", hp=3),
                      faces=[6, 6, 1, 2, 6])
    wounded(fight, "bram")
    assert fight.state.combatants["bram"].has("Dying")
    use(fight, "ana", "healing_word", "bram")
    bram = fight.state.combatants["bram"]
    assert bram.hp == 3 and not bram.has("Dying")
    cleared = [r.event for r in fight.events if isinstance(r.event, ConditionCleared)]
    assert cleared and cleared[-1].condition == "Dying" and "C36" in cleared[-1].reason
    use(fight, "ana", "healing_word", "bram")
    assert fight.state.combatants["bram"].hp == 3
    assert_replays(fight)


def test_a_target_the_ability_does_not_allow_is_refused_and_nothing_is_written() -> None:
    """Healing Word targets an ally (or its owner): used on the orc it is refused (C37), the log unchanged."""
    fight = new_fight(sheet("orc", side="raiders"), caster("healing_word"))
    before = list(fight.events)
    with pytest.raises(RuleViolation, match="targets an ally"):
        use(fight, "ana", "healing_word", "orc")
    assert fight.events == before


def test_flame_burst_deals_2d6_fire_on_a_failed_save() -> None:
    """Flame Burst (C15, C25): the orc's AGI 3 against Ana's INT 4 fails; 2d6 = 5 + 6 = 11 fire, no armor (a spell,
    C13): 20 to 9. The save names the ability (save_called.ability)."""
    fight = new_fight(sheet("orc", side="raiders"), caster("flame_burst"), faces=[3, 4, 5, 6])
    use(fight, "ana", "flame_burst", "orc")
    assert fight.state.combatants["orc"].hp == 9
    called = next(r.event for r in fight.events if isinstance(r.event, SaveCalled))
    assert called.ability == "flame_burst" and called.effect.name == "Flame Burst"
    assert fight.state.uses == {"ana/flame_burst": (1, 1, 1)}
    assert_replays(fight)


def test_flame_burst_deals_half_on_a_success_and_the_terms_add_up() -> None:
    """Flame Burst on a success (the saver wins ties, C15: AGI 4 against INT 4): 2d6 = 5 + 6 = 11, half rounded down
    is 5, written as a term of -6 so the terms add up; the orc 20 to 15."""
    fight = new_fight(sheet("orc", side="raiders"), caster("flame_burst"), faces=[4, 4, 5, 6])
    use(fight, "ana", "flame_burst", "orc")
    dealt = next(r.event for r in fight.events if isinstance(r.event, DamageResolved))
    assert dealt.terms.raw == 5 and dealt.terms.dice == 11
    assert dealt.terms.modifiers == (Modifier(source="half (a save's success)", value=-6),)
    assert fight.state.combatants["orc"].hp == 15


def test_shove_needs_its_target_within_reach() -> None:
    """Shove (within_reach): refused while the orc is not within Ana's reach; once it is, STR 2 against STR 5 fails
    and the orc falls Prone (C25)."""
    fight = new_fight(sheet("orc", side="raiders"), caster("shove"), faces=[2, 5])
    with pytest.raises(RuleViolation, match="'orc' is not within the reach of 'ana'"):
        use(fight, "ana", "shove", "orc")
    fight.engage("ana", "orc")
    use(fight, "ana", "shove", "orc")
    assert fight.state.combatants["orc"].prone
    assert_replays(fight)


def test_in_the_rounds_an_action_ability_costs_the_turns_action_and_may_be_interrupted() -> None:
    """C20, C24: in the rounds, on Ana's turn, Shove costs her Action; the orc within reach, who has had its first
    turn and has 2 Bonus Actions, is offered an Interrupt first. It passes; the save rolls: STR 1 against 6, Prone.
    A second Action ability this turn is refused (1 Action per turn)."""
    fight = new_fight(sheet("orc", side="raiders"), caster("shove", "flame_burst"), faces=[6, 1, 1, 6])
    fight.engage("ana", "orc")
    fight.roll_initiative()  # AGI checks in the order they joined (C29): the orc 6, Ana 1: the orc first
    fight.end_turn("orc")
    assert fight.state.turn == "ana"
    use(fight, "ana", "shove", "orc")
    assert isinstance(fight.waiting_for, ReactionWindowOpened) and fight.waiting_for.reaction == "interrupt"
    fight.pass_reaction("orc")
    assert fight.state.combatants["orc"].prone and fight.state.turn_actions == 0
    with pytest.raises(RuleViolation, match="C20"):
        use(fight, "ana", "flame_burst", "orc")
    assert_replays(fight)


def test_a_once_per_fight_ability_written_in_the_sheet_is_refused_the_second_time() -> None:
    """C41: an ability written out in the sheet with one use per fight: the second use is refused, naming the rule."""
    rally = decode_content('id = "rally"\nname = "Rally"\nuse = "free"\ntarget = "self"\n'
                           'uses = { count = 1, per = "fight" }\n'
                           'effects = [{ kind = "clear", to = "actor", condition = "Prone" }]\n', Ability, fmt="toml")
    fight = new_fight(caster(rally))
    fight.apply_condition("ana", "Prone")
    use(fight, "ana", "rally")
    assert not fight.state.combatants["ana"].prone
    with pytest.raises(RuleViolation, match=r"\[C41\].*no use left this fight"):
        use(fight, "ana", "rally")


def test_a_passive_or_triggered_ability_is_not_used_with_use_ability() -> None:
    """C37: use_ability is for abilities used on one's turn; a triggered one (Riposte) is refused, naming it."""
    fight = new_fight(sheet("orc", side="raiders"), caster("riposte"))
    with pytest.raises(RuleViolation, match="triggered"):
        use(fight, "ana", "riposte", "orc")


def test_an_extensions_action_costing_an_action_opens_the_interrupt_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """C24, C37: an extension's action (a TurnAction) costing an Action is an Action declared, as an ability
    written as data is: the orc within reach is offered an Interrupt right after ability_used, before the cost is
    paid; it passes, then the Action is paid and the handler does what it does (the orc falls Prone)."""
    from types import MappingProxyType

    from omen_core import extensions
    from omen_core.decide import setup
    from omen_core.events import ConditionApplied, CostPaid
    from omen_core.hooks import Acting, Cost, Extension, TurnAction, Used

    def topple(acting: Acting, used: Used) -> None:
        acting.emit(ConditionApplied(action=used.action, who=used.target, condition="Prone", added=1, stacks=1,
                                     reason="Topple"))

    topple_ext = Extension(id="topple", name="Topple", action=TurnAction(
        summary="an Action: an enemy within reach falls Prone", cost=Cost(actions=1), does=topple,
        target="enemy", within_reach=True))
    registry = MappingProxyType({**extensions.BY_ID, "topple": topple_ext})  # registered as a module's EXTENSION is
    monkeypatch.setattr(extensions, "BY_ID", registry)
    monkeypatch.setattr(setup, "BY_ID", registry)
    fight = new_fight(sheet("orc", side="raiders"), caster("topple"), faces=[6, 1])
    fight.engage("ana", "orc")
    fight.roll_initiative()  # AGI: the orc 6, Ana 1: the orc first
    fight.end_turn("orc")
    use(fight, "ana", "topple", "orc")
    assert isinstance(fight.waiting_for, ReactionWindowOpened) and fight.waiting_for.reaction == "interrupt"
    assert not any(isinstance(r.event, CostPaid) for r in fight.events) and fight.state.turn_actions == 1
    fight.pass_reaction("orc")
    paid = [r.event for r in fight.events if isinstance(r.event, CostPaid)]
    assert [(p.resource, p.amount, p.purpose) for p in paid] == [("action", 1, "Topple")]
    assert fight.state.combatants["orc"].prone and fight.state.turn_actions == 0 and fight.state.at_rest
    assert_replays(fight)


def test_an_interrupt_that_hits_cancels_an_extensions_action_its_action_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """C24: the orc Interrupts Ana's Topple (an extension's Action): STR 6 + FCS 6 = 12 beats her base RES 1; she
    declines to defend; 6 crushing lands raw (C12): 20 to 14. The hit cancels Topple: only its Action is spent,
    the orc stays standing."""
    from types import MappingProxyType

    from omen_core import extensions
    from omen_core.decide import setup
    from omen_core.events import ActionCancelled, CostPaid
    from omen_core.hooks import Acting, Cost, Extension, TurnAction, Used

    def topple(acting: Acting, used: Used) -> None:  # pragma: no cover - cancelled before it runs
        raise AssertionError("a cancelled action does nothing")

    topple_ext = Extension(id="topple", name="Topple", action=TurnAction(
        summary="an Action: an enemy within reach falls Prone", cost=Cost(actions=1), does=topple,
        target="enemy", within_reach=True))
    registry = MappingProxyType({**extensions.BY_ID, "topple": topple_ext})
    monkeypatch.setattr(extensions, "BY_ID", registry)
    monkeypatch.setattr(setup, "BY_ID", registry)
    fight = new_fight(sheet("orc", side="raiders"), caster("topple"), faces=[6, 1, 6, 6, 1])
    fight.engage("ana", "orc")
    fight.roll_initiative()
    fight.end_turn("orc")
    use(fight, "ana", "topple", "orc")
    fight.react("orc", unarmed=True)
    fight.defend("ana", None)
    cancelled = [r.event for r in fight.events if isinstance(r.event, ActionCancelled)]
    assert len(cancelled) == 1 and "C24" in cancelled[0].reason
    assert fight.state.combatants["ana"].hp == 14 and not fight.state.combatants["orc"].prone
    assert fight.state.turn_actions == 0
    assert [(p.who, p.resource) for p in (r.event for r in fight.events if isinstance(r.event, CostPaid))
            if p.purpose == "Topple"] == []
    assert_replays(fight)


def test_an_interrupt_that_hits_cancels_a_deferred_cost_with_the_ability() -> None:
    """C24, C41: War Cry (an Action, 1 Will; Fatigued at the end of Ana's next turn) is Interrupted by the orc:
    STR 6 + FCS 6 = 12 beats her base RES 1; she declines; 6 crushing lands raw (C12). The cancel spends only her
    Action: no Will paid, nothing owed; its use stays counted; her next turn ends without Fatigued."""
    war_cry = decode_content(
        'id = "war_cry"\nname = "War Cry"\nuse = "action"\ntarget = "self"\ncost = { will = 1 }\n'
        'deferred = { at = "end_of_next_turn", effects = [{ kind = "condition", to = "actor", '
        'condition = "Fatigued" }] }\neffects = [{ kind = "condition", to = "actor", condition = "Exhausted" }]\n',
        Ability, fmt="toml")
    fight = new_fight(sheet("orc", side="raiders"), caster(war_cry), faces=[6, 1, 6, 6, 1])
    fight.engage("ana", "orc")
    fight.roll_initiative()  # AGI: the orc 6, Ana 1: the orc first
    fight.end_turn("orc")
    use(fight, "ana", "war_cry")
    assert fight.state.deferred != ()  # owed while the window is open: the use is counted at ability_used
    fight.react("orc", unarmed=True)
    fight.defend("ana", None)
    ana = fight.state.combatants["ana"]
    assert ana.hp == 14 and ana.will == 10 and not ana.has("Exhausted")
    assert fight.state.deferred == () and fight.state.uses
    fight.end_turn("ana")
    fight.end_turn("orc")
    fight.end_turn("ana")  # the end of her next turn: nothing settles
    assert not fight.state.combatants["ana"].has("Fatigued")
    assert_replays(fight)


def test_the_gms_cancel_takes_back_a_deferred_cost_too() -> None:
    """C41, C33: the GM calls off War Cry while the orc's Interrupt window is open: nothing owed afterwards."""
    war_cry = decode_content(
        'id = "war_cry"\nname = "War Cry"\nuse = "action"\ntarget = "self"\n'
        'deferred = { at = "end_of_next_turn", effects = [{ kind = "condition", to = "actor", '
        'condition = "Fatigued" }] }\neffects = [{ kind = "condition", to = "actor", condition = "Exhausted" }]\n',
        Ability, fmt="toml")
    fight = new_fight(sheet("orc", side="raiders"), caster(war_cry), faces=[6, 1])
    fight.engage("ana", "orc")
    fight.roll_initiative()
    fight.end_turn("orc")
    use(fight, "ana", "war_cry")
    fight.cancel("horn lost")
    assert fight.state.deferred == ()
    assert_replays(fight)
