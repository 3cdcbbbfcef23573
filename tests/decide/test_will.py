"""Tests for omen_core.decide.will and Will conversion's floor (C31): where converted damage lands, and the
defender's choice as a decision point.

Sheets and dice as in tests/decide/test_attack.py: Kael's sword hit with faces [6, 1, 1] (STR 6, FCS 1, Vesh's
RES 1) hits (10 against 2), is no crit (FCS 1 + 1 against RES 1 + 1), and deals 6 + 2 STR + 4 WD = 12 slashing
(physical). Vesh declines the Active Defense window.
"""

from __future__ import annotations

from typing import Any

import pytest

from omen_core import Fight
from omen_core.commands import CancelAction, ChooseWillConversion
from omen_core.content import ApplyCondition, Branches, DamageDice, DealDamage, Features, SaveEffect
from omen_core.errors import RuleViolation
from omen_core.events import (
    ActionSettled,
    ConditionApplied,
    DamageResolved,
    ResourceChanged,
    WillConversionChosen,
    WillConversionOffered,
)
from omen_core.machine import Step
from omen_replay.verify import verify_lines
from tests.decide.test_attack import Play, duel, kael, play, refused, vesh  # noqa: F401 (play is a fixture)
from tests.fights import last, payloads, present

AUTO = Features(will_conversion=True)
CHOICE = Features(will_conversion="choice")


def changes(fight: Fight) -> list[tuple[str, int, int]]:
    """Every HP and Will change, as (resource, before, after)."""
    return [(e.resource, e.before, e.after) for e in payloads(fight) if isinstance(e, ResourceChanged)]


def hit_for_12(play: Play, **defender: Any) -> Fight:
    """Kael's sword hits Vesh for 12 slashing; Vesh declines the Active Defense window."""
    fight = duel(play, [6, 1, 1], defender=vesh(**defender))
    fight.attack("kael", "vesh")
    fight.defend("vesh", None)
    return fight


def lines(fight: Fight) -> list[bytes]:
    """The fight's log as stored lines."""
    from omen_core.events import encode_line

    return [encode_line(rec) + b"\n" for rec in fight.events]


class TestAutomaticConversion:
    def test_will_takes_what_it_can_and_the_rest_goes_to_hp(self, play: Play) -> None:
        """C31: 12 physical on 5 Will: Will 5 -> 0, and the 7 beyond it go to HP (20 -> 13); both are recorded."""
        fight = hit_for_12(play, will=5, features=AUTO)
        dealt = last(fight, DamageResolved)
        assert (dealt.final, dealt.resource, dealt.overflow) == (12, "will", 7)
        assert changes(fight) == [("will", 5, 0), ("hp", 20, 13)]

    def test_enough_will_takes_it_all(self, play: Play) -> None:
        """C31: 12 physical on 20 Will: Will 20 -> 8, nothing overflows, HP stays 20."""
        fight = hit_for_12(play, will=20, features=AUTO)
        assert (last(fight, DamageResolved).overflow, changes(fight)) == (0, [("will", 20, 8)])

    def test_exactly_the_will_left_overflows_nothing(self, play: Play) -> None:
        """C31: 12 physical on 12 Will: Will 12 -> 0, no HP change."""
        fight = hit_for_12(play, will=12, features=AUTO)
        assert (last(fight, DamageResolved).overflow, changes(fight)) == (0, [("will", 12, 0)])

    def test_no_will_left_all_goes_to_hp(self, play: Play) -> None:
        """C31: with Will 0 the whole 12 overflows to HP (20 -> 8); Will does not go below 0."""
        fight = hit_for_12(play, will=0, features=AUTO)
        assert (last(fight, DamageResolved).overflow, changes(fight)) == (12, [("hp", 20, 8)])

    def test_overflow_that_empties_hp_sets_dying(self, play: Play) -> None:
        """C31, C28: 12 physical on 2 Will and 6 HP: Will 2 -> 0, 10 to HP: 6 -> 0, and Dying is set."""
        fight = hit_for_12(play, will=2, hp=6, features=AUTO)
        assert changes(fight) == [("will", 2, 0), ("hp", 6, 0)]
        assert last(fight, ConditionApplied).condition == "Dying"

    def test_automatic_conversion_asks_nothing(self, play: Play) -> None:
        """C31: the feature's default is automatic: no choice is offered and the attack settles."""
        fight = hit_for_12(play, will=20, features=AUTO)
        assert not [e for e in payloads(fight) if isinstance(e, WillConversionOffered)]
        assert isinstance(payloads(fight)[-1], ActionSettled)


class TestTheChoice:
    def test_a_choice_sheet_is_asked_before_the_damage_lands(self, play: Play) -> None:
        """C31: with will_conversion = "choice", the hit's final 12 waits on Vesh's choice: no damage yet, the
        fight waits at the Will-conversion decision with Vesh to answer."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        offer = last(fight, WillConversionOffered)
        assert (offer.who, offer.final, offer.will, offer.damage_type, offer.then) == ("vesh", 12, 5, "slashing", 0)
        assert not [e for e in payloads(fight) if isinstance(e, DamageResolved)]
        assert present(fight.state.pending).step is Step.WILL_CHOICE_OPEN
        waiting = present(fight.options().waiting)
        assert (waiting.kind, waiting.who, waiting.rule, waiting.answers) == (
            "will_conversion", ("vesh",), "C31", ("choose_will_conversion",))

    def test_choosing_will_converts_with_the_floor(self, play: Play) -> None:
        """C31: Vesh converts: Will 5 -> 0 and the 7 beyond it to HP (20 -> 13); the choice is an event."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        fight.choose_will_conversion("vesh", True)
        assert last(fight, WillConversionChosen) == WillConversionChosen(
            action=last(fight, WillConversionOffered).action, who="vesh", convert=True)
        assert (last(fight, DamageResolved).resource, last(fight, DamageResolved).overflow) == ("will", 7)
        assert changes(fight) == [("will", 5, 0), ("hp", 20, 13)]
        assert isinstance(payloads(fight)[-1], ActionSettled)

    def test_declining_takes_it_on_hp(self, play: Play) -> None:
        """C31: Vesh keeps the Will: the 12 go to HP (20 -> 8), Will stays 5."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        fight.choose_will_conversion("vesh", False)
        assert (last(fight, DamageResolved).resource, last(fight, DamageResolved).overflow) == ("hp", 0)
        assert changes(fight) == [("hp", 20, 8)]

    def test_the_choice_is_the_defenders_and_only_while_open(self, play: Play) -> None:
        """C31: only Vesh may answer; with no choice open the command is refused; the log stays as it was."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        refused(fight, lambda: fight.choose_will_conversion("kael", True), "C31")
        fight.choose_will_conversion("vesh", True)
        refused(fight, lambda: fight.choose_will_conversion("vesh", True), "C31")

    def test_the_gm_cannot_call_the_action_off_at_the_choice(self, play: Play) -> None:
        """C31: the damage is already determined: the action may not be cancelled while the choice is open."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        with pytest.raises(RuleViolation):
            fight.execute(CancelAction(reason="no"))
        assert present(fight.state.pending).step is Step.WILL_CHOICE_OPEN

    def test_options_offer_exactly_both_answers(self, play: Play) -> None:
        """C31: what options() offers at the choice is Vesh converting or not, free, and each is accepted."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        offers = [o for o in fight.options().offers if o.command == "choose_will_conversion"]
        assert [(o.actor, o.cost, [c.args for c in o.choices]) for o in offers] == [
            ("vesh", "free", [{"who": "vesh", "convert": True}, {"who": "vesh", "convert": False}])]

    @pytest.mark.parametrize("features, will", [(CHOICE, 0), (Features(), 5)])
    def test_no_choice_without_will_or_without_the_feature(self, play: Play, features: Features, will: int) -> None:
        """C31: with no Will left (all of it would go to HP anyway), or no feature, nothing is asked: 12 to HP."""
        fight = hit_for_12(play, will=will, features=features)
        assert not [e for e in payloads(fight) if isinstance(e, WillConversionOffered)]
        assert ("hp", 20, 8) in changes(fight)

    def test_a_defender_at_0_hp_is_not_asked(self, play: Play) -> None:
        """C31, C36: Vesh (5 HP, 5 Will) takes the first 12 on HP (5 -> 0, Dying); Kael's second hit (6 + 1 + 3 =
        10 against the Defense Rating 1 alone: a hit, and a crit, FCS 1 + 1 > RES bonus 1: 6 + 2 + 2 + 4 = 14)
        asks nothing of Vesh at 0 HP, which makes no choice: it lands as if HP were chosen, and Will stays 5."""
        fight = duel(play, [6, 1, 1, 6, 1], defender=vesh(hp=5, will=5, features=CHOICE))
        fight.attack("kael", "vesh")
        fight.defend("vesh", None)
        fight.choose_will_conversion("vesh", False)
        assert changes(fight) == [("hp", 5, 0)]
        fight.attack("kael", "vesh")
        assert len([e for e in payloads(fight) if isinstance(e, WillConversionOffered)]) == 1
        dealt = last(fight, DamageResolved)
        assert (dealt.final, dealt.resource) == (14, "hp") and changes(fight) == [("hp", 5, 0)]
        assert isinstance(payloads(fight)[-1], ActionSettled) and fight.state.combatants["vesh"].will == 5

    def test_fire_is_not_converted_and_not_asked(self, play: Play) -> None:
        """C31, C13: conversion is for physical damage: a fire consequence lands on HP with no choice offered."""
        fire = SaveEffect(name="cinder flask", save="AGI", against="INT", action_cost=0,
                          on_failure=(DealDamage(flat=4, damage_type="fire"),))
        fight = duel(play, [1, 4], defender=vesh(will=5, features=CHOICE))   # AGI 1 + 2 = 3 vs INT 4 + 4 = 8
        fight.call_save("kael", "vesh", fire)
        assert not [e for e in payloads(fight) if isinstance(e, WillConversionOffered)]
        assert changes(fight) == [("hp", 20, 16)]


class TestResumingTheAction:
    def test_each_damage_consequence_asks_in_written_order_and_the_rest_follows(self, play: Play) -> None:
        """C31, C25: a save's failure deals 3 crushing, then 1d4 (face 2) slashing, then Prone: the first damage
        asks (then=1), the answer lands it and rolls the next, which asks (then=2); the last answer lands it,
        Prone follows, and the save settles."""
        effect = SaveEffect(name="rockfall", save="AGI", against="INT", action_cost=0, on_failure=(
            DealDamage(flat=3, damage_type="crushing"),
            DealDamage(dice=DamageDice(count=1, die="d4"), damage_type="slashing"),
            ApplyCondition(condition="Prone")))
        # Vesh AGI 1 + 2 = 3 against Kael INT 4 + 4 = 8: fails.
        fight = duel(play, [1, 4, 2], defender=vesh(will=4, features=CHOICE))
        fight.call_save("kael", "vesh", effect)
        assert (last(fight, WillConversionOffered).final, last(fight, WillConversionOffered).then) == (3, 1)
        fight.choose_will_conversion("vesh", True)                # Will 4 -> 1
        offer = last(fight, WillConversionOffered)
        assert (offer.final, offer.will, offer.then) == (2, 1, 2)
        fight.choose_will_conversion("vesh", True)                # Will 1 -> 0, 1 to HP
        assert changes(fight) == [("will", 4, 1), ("will", 1, 0), ("hp", 20, 19)]
        assert last(fight, ConditionApplied).condition == "Prone"
        assert isinstance(payloads(fight)[-1], ActionSettled)

    def test_a_hit_with_on_hit_consequences_resumes_them_after_the_choice(self, play: Play) -> None:
        """C31, C25: the hit's own damage asks first (then=0); after the answer its on-hit Prone follows."""
        fight = duel(play, [6, 1, 1], defender=vesh(will=5, features=CHOICE))
        fight.attack("kael", "vesh", branches=Branches(on_hit=(ApplyCondition(condition="Prone"),)))
        fight.defend("vesh", None)
        assert not [e for e in payloads(fight) if isinstance(e, ConditionApplied)]
        fight.choose_will_conversion("vesh", False)
        assert last(fight, ConditionApplied).condition == "Prone"
        assert isinstance(payloads(fight)[-1], ActionSettled)


class TestAudit:
    def test_a_fight_with_choices_verifies_clean(self, play: Play) -> None:
        """C31: the offer, the answer, the damage split and both resource changes are re-decided and recomputed
        without a finding."""
        fight = hit_for_12(play, will=5, features=CHOICE)
        fight.choose_will_conversion("vesh", True)
        report = verify_lines(lines(fight))
        assert report.clean, report.findings

    def test_a_forged_split_is_found(self, play: Play) -> None:
        """C31: a log whose damage claims no overflow where 7 went beyond the Will (chain recomputed) is
        found by verify."""
        import msgspec

        from omen_core.events import StoredEvent, encode_line, seal

        fight = hit_for_12(play, will=5, features=AUTO)
        records = list(fight.events)
        forged, prev = [], records[0].prev_hash
        for rec in records:
            event = rec.event
            if isinstance(event, DamageResolved):
                event = msgspec.structs.replace(event, overflow=0)
            resealed = seal(rec.fight_id, rec.seq, rec.recorded_at, prev, event, rec.batch, rec.batch_size, rec.salt)
            forged.append(resealed)
            prev = resealed.hash
        assert isinstance(forged[0], StoredEvent)
        report = verify_lines([encode_line(r) + b"\n" for r in forged])
        assert not report.clean
        assert any(f.rule == "C31" for f in report.findings)


def test_the_command_validates_like_the_decoder() -> None:
    """C31: convert must be a boolean; a string is refused with its field path before anything is decided."""
    from omen_core.engine import validated
    from omen_core.errors import InvalidCommand

    with pytest.raises(InvalidCommand) as info:
        validated(ChooseWillConversion(who="vesh", convert="yes"))  # type: ignore[arg-type]
    assert "convert" in str(info.value)


class TestHelplessOwner:
    """A passive ability of an owner at 0 HP, Incapacitated or Paralysed gives nothing (C10, C36;
    docs/abilities.md "Passive abilities"): Will conversion among them."""

    @pytest.mark.parametrize("features", [AUTO, CHOICE], ids=["automatic", "choice"])
    def test_an_incapacitated_owner_converts_nothing(self, play: Play, features: Features) -> None:
        """C10, C31: Vesh Incapacitated rolls no base defense die and has no Active Defense window (C10): Kael's
        faces [6, 1] hit (6 + 1 + 3 = 10 against the Defense Rating 1) and crit (FCS 1 + 1 > RES bonus 1):
        6 + 2 + 2 + 4 = 14 slashing lands on HP (20 -> 6), not on Will, and no Will-conversion choice is
        offered: Will stays 10."""
        fight = duel(play, [6, 1], defender=vesh(features=features))
        fight.apply_condition("vesh", "Incapacitated")
        fight.attack("kael", "vesh")
        dealt = last(fight, DamageResolved)
        assert (dealt.final, dealt.resource, dealt.overflow) == (14, "hp", 0)
        assert changes(fight) == [("hp", 20, 6)]
        assert not any(isinstance(e, WillConversionOffered) for e in payloads(fight))
        assert fight.state.combatants["vesh"].will == 10

    def test_a_dying_owner_converts_nothing(self, play: Play) -> None:
        """C31, C36: a cinder flask's 4 fire (not converted: C13) takes Vesh (4 HP, 5 Will, automatic conversion)
        to 0 HP, Dying (AGI 1 + 2 = 3 against INT 4 + 4 = 8, failed); Kael's faces [6, 1] then hit and crit as
        against any helpless defender (C10 through C36): 14 slashing lands on HP, which stays 0, and Will stays 5."""
        fire = SaveEffect(name="cinder flask", save="AGI", against="INT", action_cost=0,
                          on_failure=(DealDamage(flat=4, damage_type="fire"),))
        fight = duel(play, [1, 4, 6, 1], defender=vesh(hp=4, will=5, features=AUTO))
        fight.call_save("kael", "vesh", fire)
        assert fight.state.combatants["vesh"].dying
        fight.attack("kael", "vesh")
        dealt = last(fight, DamageResolved)
        assert (dealt.final, dealt.resource, dealt.overflow) == (14, "hp", 0)
        assert changes(fight) == [("hp", 4, 0)]  # the hit at 0 HP changes no resource
        assert fight.state.combatants["vesh"].will == 5
