"""What each seat may see: the GM everything; a player its own combatants in full and the rest as the table would.

A seat's view of an event is built from :data:`EVENT_VIEWS`, one entry per event type saying, field by field,
who may see it. Anything the table does not list is withheld (default deny): an event type missing from it is
shown to a player or spectator as its envelope alone (seq, hashes, type), and a field missing from its entry
is left out, so adding an event type or a field to the log withholds it until someone decides otherwise (a test
checks that every field of every event type is listed).

The field rules:

- ``public``: every seat sees it;
- ``name``: it names a combatant; if the seat may not see that combatant (hidden by the GM, or Unseen, and not
  the seat's own) the whole event is withheld;
- ``names``: it lists combatants; those the seat may not see are left out of the list;
- ``own:FIELD``: only the seat that owns the combatant named by FIELD (and the GM) sees it;
- ``hp:FIELD``: an amount of the HP of the combatant named by FIELD: its owner sees it, the others as the
  fight's HP display says (``exact``: as is; ``banded``, ``hidden``: left out);
- ``roll`` / ``rolls``: one or several roll totals (:class:`~omen_core.parts.RollTotal`): the roller's seat sees
  every term, values and sources, the GM's situational modifiers included (it must be able to check its own
  total: a ruling, docs/rulings.md), the others the roller and the total only (the attribute bonus and skill
  level are sheet values);
- ``gm``: free text the engine or the GM wrote (reasons, notes): it may name anything, so only the GM sees it;
- a save's effect (``save_called.effect``, ``save_resolved.effect``) is its caller's, as a weapon is its
  wielder's: the caller's seat sees it whole; every other seat (the saver's too) sees what it needs to check its
  own roll (the attributes opposed, whether it is a spell, its cost) and its name as ``a save``, unless the GM
  made that name public (the table settings' ``public_effects``); what each branch does it sees as it happens.

Every event of an action is also withheld when the action involves a combatant the seat may not see
(:class:`Sight.participants`): the attack of a hidden ambusher shows nothing of itself until it is seen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from omen_core.commands import Command
from omen_core.content import CombatantSheet
from omen_core.events import AttackDeclared, MovementDeclared, SaveCalled, StoredEvent
from omen_core.options import Budget, DiceRoll, Offer, Options, Waiting
from omen_core.state import FightState

from .keep import SeatKind

__all__ = ["NAMING_FIELDS", "HpDisplay", "Sight", "SeenEvent", "CombatantView", "EVENT_VIEWS", "PLAYER_COMMANDS",
           "seen_event", "named_by", "seat_options", "combatant_views", "hp_band", "actor_of", "scrub", "typed_in",
           "HP_BANDS", "names_in", "UNNAMED_EFFECT"]

HpDisplay = Literal["exact", "banded", "hidden"]

#: The commands a player's seat may give, and the field naming the combatant that acts (it must be the seat's).
#: Every other command is the GM's.
PLAYER_COMMANDS: dict[str, str] = {
    "declare_attack": "attacker",
    "answer_active_defense": "defender",
    "route_damage": "attacker",
    "choose_will_conversion": "who",
    "react": "who",
    "pass_reaction": "who",
    "answer_catch": "who",
    "move": "who",
    "disengage": "who",
    "draw": "who",
    "end_turn": "who",
}

#: The fields of a player's commands that name combatants (a seat's command may name only those it sees).
NAMING_FIELDS = ("attacker", "target", "defender", "who", "leaves", "others")

def names_in(values: Iterable[Any]) -> list[str]:
    """The names among ``values`` (a command's naming fields, an offer's arguments): each text, and each text in
    a list or tuple of them (a move's ``leaves``), in order; anything else is no name."""
    return [w for v in values for w in (v if isinstance(v, (list, tuple)) else (v,)) if isinstance(w, str)]


#: HP bands, from the top (ruling, docs/server.md "HP display"): full, above half, half or less, none left.
HP_BANDS = ("unhurt", "hurt", "bloodied", "down")


def hp_band(hp: int, max_hp: int) -> str:
    """The band an HP amount falls in (``banded`` display): unhurt at full, hurt above half, bloodied at half or
    less, down at 0.

    >>> [hp_band(hp, 20) for hp in (20, 11, 10, 1, 0)]
    ['unhurt', 'hurt', 'bloodied', 'bloodied', 'down']
    """
    if hp <= 0:
        return "down"
    if hp >= max_hp:
        return "unhurt"
    return "hurt" if 2 * hp > max_hp else "bloodied"


def actor_of(command: Command) -> str | None:
    """The combatant a player's command acts for (None: a GM's command)."""
    name = PLAYER_COMMANDS.get(type(command).__struct_config__.tag)  # type: ignore[arg-type]
    return None if name is None else str(getattr(command, name))


@dataclass(frozen=True)
class Sight:
    """What one seat may see of a fight now: whose combatants it owns, which it may not see at all (hidden by the
    GM, or Unseen, and not its own), how others' HP shows, the sides of the combatants it sees, and the strings to
    scrub from any text it is sent."""

    kind: SeatKind
    own: frozenset[str] = frozenset()
    hidden: frozenset[str] = frozenset()
    hp: HpDisplay = "banded"
    max_hp: Mapping[str, int] = field(default_factory=dict)
    participants: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    sides: frozenset[str] = frozenset()
    public_effects: frozenset[str] = frozenset()

    @property
    def gm(self) -> bool:
        """Whether this is the GM's seat (which sees everything)."""
        return self.kind == "gm"

    def sees(self, who: str) -> bool:
        """Whether the seat may see combatant ``who`` at all."""
        return self.gm or who in self.own or who not in self.hidden

    def owns(self, who: str) -> bool:
        """Whether the seat sees ``who``'s sheet and private facts (the GM owns everyone)."""
        return self.gm or who in self.own


def sight_of(kind: SeatKind, own: Iterable[str], state: FightState, hidden_by_gm: Iterable[str], hp: HpDisplay,
             participants: Mapping[int, tuple[str, ...]],
             sheets: Mapping[str, CombatantSheet] | None = None, public_effects: Iterable[str] = ()) -> Sight:
    """The sight of one seat on ``state``: the GM's hidden combatants and the Unseen are hidden to everyone but
    their owners; the secrets to scrub from the engine's words are every hidden name and id and every gear id and
    name of a sheet the seat does not own (the GM's notes never reach the engine, so no refusal can hold them).
    ``sheets`` are every sheet that ever joined (an undone join included: its events stay in the log); by default
    the state's. ``public_effects``: the save effects whose names the GM made public."""
    mine = frozenset(own)
    unseen = {who for who, c in state.combatants.items() if c.unseen}
    hidden = frozenset((set(hidden_by_gm) | unseen) - mine)
    secrets: list[str] = []
    public: set[str] = {"armor", "shield"}  # the default names of armor and shields say nothing
    every = dict(sheets or {}) | {who: c.sheet for who, c in state.combatants.items()}
    for who, sheet in every.items():
        gear = _gear(sheet)
        if who in mine:
            public.update(gear)
        if who in hidden:
            secrets += [who, sheet.name]
        else:
            public.update((who, sheet.name))
        if who not in mine:
            secrets += gear
    secrets = [s for s in secrets if s and s not in public]
    max_hp = {who: sheet.hp for who, sheet in every.items()}
    ordered = tuple(sorted(set(secrets), key=len, reverse=True))
    sides = frozenset(sheet.side for who, sheet in every.items() if who not in hidden)
    return Sight(kind=kind, own=mine, hidden=hidden, hp=hp, max_hp=max_hp, participants=participants,
                 secrets=ordered, sides=sides, public_effects=frozenset(public_effects))


def _gear(sheet: CombatantSheet) -> list[str]:
    """The ids and names of a sheet's weapons, shield and armor."""
    gear = [w.id for w in sheet.weapons] + [w.name for w in sheet.weapons]
    if sheet.shield is not None:
        gear += [sheet.shield.id, sheet.shield.name]
    if sheet.armor is not None:
        gear.append(sheet.armor.name)
    return [g for g in gear if g]


def scrub(text: str, sight: Sight, typed: Iterable[str] = ()) -> str:
    """The engine's own words (a refusal's text) as a seat may read them: every secret of ``sight`` that stands as
    a word of its own (not inside a longer id or word) replaced by ``(hidden)``, except what the seat itself
    ``typed``: a refusal echoes a player's input as given, so that it reads the same whether or not the text
    typed happens to be a secret (a player's command is checked first to name only combatants it sees, so what it
    typed can be a secret only by chance: another sheet's gear id it guessed).

    >>> sight = Sight(kind="player", own=frozenset({"kael"}), hidden=frozenset({"ash"}), secrets=("ash", "axe"))
    >>> scrub("ash waits for kael's dash", sight)
    "(hidden) waits for kael's dash"
    >>> scrub("'kael' has no weapon 'axe' (weapons: knife)", sight, typed=["kael", "axe"])
    "'kael' has no weapon 'axe' (weapons: knife)"
    """
    if sight.gm:
        return text
    mine = set(typed)
    secrets = [s for s in sight.secrets if s not in mine]
    if not secrets:
        return text
    pattern = "|".join(re.escape(s) for s in secrets)
    return re.sub(rf"(?<![\w.-])(?:{pattern})(?![\w-]|\.\w)", "(hidden)", text)


def typed_in(value: Any) -> list[str]:
    """Every text in a command as a seat gave it (its fields, lists and nested values), to echo unscrubbed.

    >>> typed_in({"command": "draw", "who": "kael", "weapon": "axe", "dice": [3]})
    ['draw', 'kael', 'axe']
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in typed_in(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in typed_in(item)]
    return []


# -- events --------------------------------------------------------------------------------------------------


class SeenEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event as one seat sees it: the envelope (so every seat follows the chain: ``prev_hash`` to ``hash``),
    the event's type, its fields this seat may see (None: none of it), and the names of the fields left out.

    The ``salt`` the hash covers comes only with an event the seat sees whole (nothing withheld): with it the seat
    can check that event's hash; without it a hash confirms no guess of what was withheld (docs/events.md, "Why
    the salt"). An event withheld whole comes without its ``type`` too (None): the seat learns that something
    happened, not what. The GM's seat sees everything; ``GET /fights/{id}/log`` gives the stored lines byte for
    byte."""

    fight_id: str
    seq: int
    batch: int
    batch_size: int
    recorded_at: int
    schema_version: int
    prev_hash: str
    salt: str | None = None
    hash: str
    type: str | None
    event: dict[str, Any] | None
    withheld: tuple[str, ...] = ()


Rule = str
Custom = Callable[[dict[str, Any], Sight], dict[str, Any] | None]

_ACTION = {"action": "public"}
#: Per event type, per field, who may see it (the rules in the module's docstring). Default deny.
EVENT_VIEWS: dict[str, dict[str, Rule]] = {
    "fight_started": {"ruleset": "public", "ruleset_hash": "public", "dice": "public", "seed_commitment": "public",
                      "title": "public"},
    "combatant_joined": {"sheet": "custom", "sheet_hash": "own:sheet.id"},
    "command_issued": {"command": "custom", "by": "public"},
    "dice_source_changed": {"before": "public", "after": "public", "reason": "gm"},
    "dice_rolled": {"counter": "public", "purpose": "public", "roller": "name", "dice": "own:roller",
                    "source": "public", "action": "public"},
    "static_check_resolved": {"check": "roll", "difficulty": "public", "outcome": "public"},
    "contest_resolved": {"initiator": "roll", "defender": "roll", "winner": "name", "tie": "public"},
    "save_resolved": {**_ACTION, "effect": "custom", "saver": "roll", "opposing": "roll", "success": "public"},
    "attack_declared": {**_ACTION, "attacker": "name", "target": "name", "weapon": "own:attacker", "kind": "public",
                        "situational": "public", "rage": "public", "damage_modifiers": "own:attacker",
                        "branches": "own:attacker", "reaction": "public", "reacting_to": "public"},
    "save_called": {**_ACTION, "caller": "name", "saver": "name", "effect": "custom"},
    "cost_paid": {**_ACTION, "who": "name", "resource": "public", "amount": "public", "purpose": "own:who"},
    "active_defense_window_opened": {**_ACTION, "defender": "name", "attack_total": "public",
                                     "base_defense": "own:defender", "eligible": "own:defender",
                                     "ineligible": "own:defender"},
    "active_defense_window_skipped": {**_ACTION, "defender": "name", "reason": "gm"},
    "active_defense_chosen": {**_ACTION, "defender": "name", "defense": "public", "weapon": "own:defender"},
    "active_defense_declined": {**_ACTION, "defender": "name"},
    "hit_determined": {**_ACTION, "attack": "custom", "defense": "custom", "hit": "public",
                       "crit_check": "custom", "crit": "public"},
    "routing_window_opened": {**_ACTION, "attacker": "name", "dice": "own:attacker"},
    "damage_routed": {**_ACTION, "attacker": "name", "die": "own:attacker"},
    "damage_resolved": {**_ACTION, "target": "name", "damage_type": "public", "source": "custom", "spell": "public",
                        "terms": "custom", "steps": "own:target", "final": "hp:target", "resource": "public",
                        "overflow": "hp:target"},
    "will_conversion_offered": {**_ACTION, "who": "name", "damage_type": "own:who", "source": "custom",
                                "spell": "own:who", "terms": "custom", "final": "own:who", "will": "own:who",
                                "then": "own:who"},
    "will_conversion_chosen": {**_ACTION, "who": "name", "convert": "public"},
    "resource_changed": {**_ACTION, "who": "name", "resource": "public", "before": "custom", "after": "custom"},
    "condition_applied": {**_ACTION, "who": "name", "condition": "public", "added": "public", "stacks": "public",
                          "reason": "gm"},
    "condition_cleared": {**_ACTION, "who": "name", "condition": "public", "reason": "gm"},
    "action_settled": {**_ACTION},
    "action_cancelled": {**_ACTION, "reason": "gm"},
    "seed_revealed": {"seed": "public"},
    "ambush_started": {"ambushers": "names", "defenders": "names", "time_waited": "public",
                       "preset_difficulty": "public", "minutes": "public"},
    "ambush_difficulty_set": {"stealth": "rolls", "time_waited": "public", "difficulty": "public"},
    "surprise_determined": {"who": "name", "perception": "roll", "difficulty": "public", "tier": "public"},
    "initiative_rolled": {"who": "name", "check": "roll"},
    "initiative_tied": {"group": "names", "allies": "public"},
    "initiative_roll_off": {"group": "names", "rolls": "rolls"},
    "initiative_agreed": {"order": "names"},
    "initiative_order_set": {"order": "names"},
    "round_started": {"round": "public"},
    "round_ended": {"round": "public"},
    "turn_started": {"round": "public", "who": "name"},
    "turn_skipped": {"round": "public", "who": "name", "reason": "gm"},
    "turn_ended": {"round": "public", "who": "name"},
    "bonus_actions_refilled": {"who": "name", "before": "own:who", "after": "own:who"},
    "condition_ticked": {"who": "name", "condition": "public", "remaining": "public"},
    "engagement_changed": {"who": "name", "others": "names", "engaged": "public"},
    "weapon_drawn": {"who": "name", "weapon": "own:who", "cost": "public"},
    "disengaged": {"who": "name", "cost": "public"},
    "movement_declared": {**_ACTION, "who": "name", "leaves": "names"},
    "moved": {**_ACTION, "who": "name", "left": "names"},
    "reaction_window_opened": {**_ACTION, "reaction": "public", "responders": "names"},
    "reaction_passed": {**_ACTION, "who": "name"},
    "reaction_window_closed": {**_ACTION},
    "catch_window_opened": {**_ACTION, "target": "name"},
    "catch_answered": {**_ACTION, "who": "name", "caught": "public"},
    "combatant_left": {"who": "name", "reason": "public", "note": "gm"},
    "fight_ended": {"reason": "public", "side": "custom", "note": "gm"},
    "undone": {"from_seq": "public", "to_seq": "public", "reason": "public"},
    "redone": {"undo_seq": "public", "reason": "public"},
}


class _Withhold(Exception):
    """The whole event is withheld from this seat."""


def _field(path: str, payload: dict[str, Any]) -> Any:
    value: Any = payload
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _roll(total: Any, sight: Sight) -> Any:
    """A roll total as a seat sees it: whole to the roller's seat, the roller and total to the others."""
    if not isinstance(total, dict):
        return total
    roller = str(total.get("roller", ""))
    if not sight.sees(roller):
        raise _Withhold
    return total if sight.owns(roller) else {"roller": roller, "total": total.get("total")}


def _joined(payload: dict[str, Any], sight: Sight) -> Any:
    sheet = payload["sheet"]
    who = sheet["id"]
    if not sight.sees(who):
        raise _Withhold
    return sheet if sight.owns(who) else {"id": who, "name": sheet["name"], "side": sheet["side"]}


def _command(payload: dict[str, Any], sight: Sight) -> Any:
    """A command as given, to the seat of the combatant it acts for (unless it names one that seat does not see:
    the GM's attack for it on a hidden foe), but for the faces it carried (``dice``: one command may roll others'
    dice too, as passing a reaction rolls the attack that goes on; the seat's own faces are in its own rolls); its
    name alone (and the combatant it acts for, if seen) otherwise."""
    command = payload["command"]
    kind = command.get("command", "")
    actor_field = PLAYER_COMMANDS.get(kind)
    actor = command.get(actor_field) if actor_field else None
    flat = names_in(command.get(name) for name in NAMING_FIELDS)
    if actor is not None and sight.owns(str(actor)) and all(sight.sees(w) for w in flat):
        return {name: value for name, value in command.items() if name != "dice"}
    shown: dict[str, Any] = {"command": kind}
    if actor_field and actor is not None and sight.sees(str(actor)):
        shown[actor_field] = actor
    return shown


def _participants(payload: dict[str, Any], sight: Sight) -> tuple[str, ...]:
    action = payload.get("action")
    return sight.participants.get(action, ()) if isinstance(action, int) else ()


def _attacker_and_target(payload: dict[str, Any], sight: Sight) -> tuple[str, str]:
    who = _participants(payload, sight)
    return (who[0], who[1]) if len(who) >= 2 else ("", "")


def _hit_part(name: str) -> Custom:
    def part(payload: dict[str, Any], sight: Sight) -> Any:
        attacker, target = _attacker_and_target(payload, sight)
        value = payload.get(name)
        if name == "attack":
            return value if sight.owns(attacker) else {"total": value.get("total") if value else None}
        if name == "defense":
            return value if sight.owns(target) else {"total": value.get("total") if value else None}
        return value if sight.owns(attacker) and sight.owns(target) else _WITHHELD  # crit_check: both sheets
    return part


def _damage_part(name: str) -> Custom:
    def part(payload: dict[str, Any], sight: Sight) -> Any:
        attacker, _target = _attacker_and_target(payload, sight)
        return payload.get(name) if sight.owns(attacker) else _WITHHELD
    return part


def _hp_amount(name: str) -> Custom:
    def part(payload: dict[str, Any], sight: Sight) -> Any:
        who = str(payload.get("who", ""))
        value = payload.get(name)
        if sight.owns(who):
            return value
        if payload.get("resource") != "hp":
            return _WITHHELD  # Will is its owner's
        if sight.hp == "exact":
            return value
        if sight.hp == "banded" and isinstance(value, int):
            return hp_band(value, sight.max_hp.get(who, 1))
        return _WITHHELD
    return part


def _side(payload: dict[str, Any], sight: Sight) -> Any:
    """The side a fight ended on (the side defeated, or the GM's): named only to a seat that sees some combatant
    of that side, so that the end of a fight does not give away a side the table has not met."""
    side = payload.get("side")
    return side if side is None or sight.gm or side in sight.sides else _WITHHELD


#: A save effect's name as a seat that does not own its caller sees it, unless the GM made the name public.
UNNAMED_EFFECT = "a save"
#: What of a save's effect a seat that does not own its caller sees: what it needs to check its own roll.
_EFFECT_SEEN = ("save", "against", "spell", "action_cost")


def _effect_name(name: Any, payload: dict[str, Any], sight: Sight) -> Any:
    caller, _saver = _attacker_and_target(payload, sight)
    return name if sight.owns(caller) or name in sight.public_effects else UNNAMED_EFFECT


def _effect_called(payload: dict[str, Any], sight: Sight) -> Any:
    """A called save's effect: whole to its caller's seat; to the others its name (:func:`_effect_name`), the
    attributes opposed, whether it is a spell and its cost (each branch is seen as it happens)."""
    effect = payload["effect"]
    if sight.owns(str(payload.get("caller", ""))):
        return effect
    return {"name": _effect_name(effect.get("name"), payload, sight),
            **{key: effect[key] for key in _EFFECT_SEEN if key in effect}}


def _effect_resolved(payload: dict[str, Any], sight: Sight) -> Any:
    """A resolved save's effect (its name): as :func:`_effect_name` says."""
    return _effect_name(payload.get("effect"), payload, sight)


_WITHHELD = object()
_CUSTOM: dict[tuple[str, str], Custom] = {
    ("fight_ended", "side"): _side,
    ("save_called", "effect"): _effect_called,
    ("save_resolved", "effect"): _effect_resolved,
    ("combatant_joined", "sheet"): _joined,
    ("command_issued", "command"): _command,
    ("hit_determined", "attack"): _hit_part("attack"),
    ("hit_determined", "defense"): _hit_part("defense"),
    ("hit_determined", "crit_check"): _hit_part("crit_check"),
    ("damage_resolved", "source"): _damage_part("source"),
    ("damage_resolved", "terms"): _damage_part("terms"),
    ("will_conversion_offered", "source"): _damage_part("source"),
    ("will_conversion_offered", "terms"): _damage_part("terms"),
    ("resource_changed", "before"): _hp_amount("before"),
    ("resource_changed", "after"): _hp_amount("after"),
}


def _project(kind: str, payload: dict[str, Any], sight: Sight) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The fields of one event this seat may see, and the names of those left out or shown only in part (a roll's
    total without its terms, a list without the hidden, a sheet's name and side, a command's name alone: raises
    _Withhold when the whole event is withheld)."""
    rules = EVENT_VIEWS[kind]
    if not all(sight.sees(who) for who in _participants(payload, sight)):
        raise _Withhold
    shown: dict[str, Any] = {"type": kind}
    withheld: list[str] = []
    for name, value in payload.items():
        if name == "type":
            continue
        rule = rules.get(name, "gm")
        if rule == "public":
            shown[name] = value
        elif rule == "name":
            if value is not None and not sight.sees(str(value)):
                raise _Withhold
            shown[name] = value
        elif rule == "names":
            shown[name] = [who for who in value if sight.sees(str(who))]
        elif rule == "roll":
            shown[name] = _roll(value, sight)
        elif rule == "rolls":
            shown[name] = [_roll(total, sight) for total in value if sight.sees(str(total.get("roller", "")))]
        elif rule.startswith(("own:", "hp:")):
            who = _field(rule.partition(":")[2], payload)
            if sight.owns(str(who)) or (rule.startswith("hp:") and sight.hp == "exact"):
                shown[name] = value
            else:
                withheld.append(name)
        elif rule == "custom":
            seen = _CUSTOM[(kind, name)](payload, sight)
            if seen is _WITHHELD:
                withheld.append(name)
            else:
                shown[name] = seen
        else:  # "gm", or a field nobody listed: default deny
            withheld.append(name)
        if name in shown and shown[name] != value:
            withheld.append(name)  # shown in part: the seat cannot check the event's hash (it gets no salt)
    return shown, tuple(withheld)


def _TO_BUILTINS(value: Any) -> Any:
    """An event as JSON values in the log's own order (mappings sorted, as the line is written: a seat shown an
    event whole rebuilds the line's body from it and checks its hash)."""
    return msgspec.to_builtins(value, order="deterministic")


def seen_event(rec: StoredEvent, sight: Sight) -> SeenEvent:
    """One stored event as the seat of ``sight`` sees it."""
    payload: dict[str, Any] = _TO_BUILTINS(rec.event)
    kind = str(payload["type"])
    if sight.gm:
        shown: dict[str, Any] | None = payload
        withheld: tuple[str, ...] = ()
    elif kind not in EVENT_VIEWS:
        shown, withheld = None, ("*",)
    else:
        try:
            shown, withheld = _project(kind, payload, sight)
        except _Withhold:
            shown, withheld = None, ("*",)
    whole = not withheld
    return SeenEvent(fight_id=rec.fight_id, seq=rec.seq, batch=rec.batch, batch_size=rec.batch_size,
                     recorded_at=rec.recorded_at, schema_version=rec.schema_version, prev_hash=rec.prev_hash,
                     salt=rec.salt if whole and rec.salt else None, hash=rec.hash,
                     type=kind if shown is not None else None, event=shown, withheld=withheld)


def named_by(rec: StoredEvent) -> list[str]:
    """Every combatant an event names, read off its field rules (``name``, ``names``, ``roll``, ``rolls``), and,
    for an action's declaration, every combatant the action involves."""
    payload: dict[str, Any] = _TO_BUILTINS(rec.event)
    rules = EVENT_VIEWS.get(str(payload["type"]), {})
    found: list[str] = []
    for name, rule in rules.items():
        value = payload.get(name)
        if rule == "name" and isinstance(value, str):
            found.append(value)
        elif rule == "names":
            found += names_in(value or ())
        elif rule in ("roll", "rolls"):
            totals = value if isinstance(value, list) else [value]
            found += [str(t["roller"]) for t in totals if isinstance(t, dict) and "roller" in t]
    involved = participants_of(rec)
    return found + list(involved[1] if involved else ())


def participants_of(rec: StoredEvent) -> tuple[int, tuple[str, ...]] | None:
    """The combatants an action involves, from the event that declares it (attacker and target first)."""
    event = rec.event
    if isinstance(event, AttackDeclared):
        return event.action, (event.attacker, event.target)
    if isinstance(event, SaveCalled):
        return event.action, (event.caller, event.saver)
    if isinstance(event, MovementDeclared):
        return event.action, (event.who,)
    return None


# -- options and the table -------------------------------------------------------------------------------------


def _seen_roll(roll: DiceRoll, sight: Sight) -> bool:
    return sight.owns(roll.roller)


def seat_options(options: Options, sight: Sight) -> Options:
    """What this seat may do now: the GM every offer; a player the offers of its own combatants among the
    commands a player gives (:data:`PLAYER_COMMANDS`), with the choices naming only combatants it sees and the
    dice only of its own rollers, its own combatants' standing, and the open decision with only the answerers it
    sees; a spectator the phase, round, turn and open decision."""
    if sight.gm:
        return options
    offers: list[Offer] = []
    for offer in options.offers:
        if offer.actor is None or not sight.owns(offer.actor) or offer.command not in PLAYER_COMMANDS:
            continue
        choices = tuple(
            msgspec.structs.replace(choice, dice=tuple(r for r in choice.dice if _seen_roll(r, sight)),
                                    may_roll=tuple(r for r in choice.may_roll if _seen_roll(r, sight)))
            for choice in offer.choices if _names_seen(choice.args, sight))
        if choices or not offer.choices:
            offers.append(msgspec.structs.replace(offer, choices=choices, note=""))
    waiting = options.waiting
    if waiting is not None:
        who = tuple(w for w in waiting.who if sight.sees(w))
        waiting = Waiting(kind=waiting.kind, title=waiting.title, rule=waiting.rule, who=who,
                          answers=waiting.answers, cost=waiting.cost, resumes=waiting.resumes,
                          action=waiting.action) if who or not waiting.who else None
    budgets: tuple[Budget, ...] = tuple(b for b in options.combatants if sight.owns(b.who))
    turn = options.turn if options.turn is None or sight.sees(options.turn) else None
    return msgspec.structs.replace(options, waiting=waiting, combatants=budgets, offers=tuple(offers), turn=turn)


def _names_seen(args: Mapping[str, Any], sight: Sight) -> bool:
    return not any(who in sight.hidden for who in names_in(args.values()))


class CombatantView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A combatant as a seat sees it at the table: name and side always; HP as exact (``hp``, ``max_hp``) or a
    band (``hp_band``) or nothing, as the fight's HP display says (its owner and the GM: exact); Will, Bonus
    Actions and what is in hand to its owner and the GM; the conditions with their stacks and, for those with a
    duration, the ticks left (``remaining``: C28, public as their ticks are); whether it is out of
    the fight (fled, yielded, dead); whether it is the one whose turn it is."""

    id: str
    name: str
    side: str
    turn: bool = False
    hp: int | None = None
    max_hp: int | None = None
    hp_band: str | None = None
    will: int | None = None
    bonus_actions: int | None = None
    in_hand: tuple[str, ...] | None = None
    conditions: dict[str, int] = {}
    remaining: dict[str, int] = {}
    left: str | None = None
    own: bool = False
    hidden: bool = False


def combatant_views(state: FightState, sight: Sight, hidden_by_gm: Iterable[str] = ()) -> tuple[CombatantView, ...]:
    """Every combatant this seat may see, as it may see it (the GM: everyone, with ``hidden`` marking those the
    players do not see)."""
    secret = set(hidden_by_gm) | {who for who, c in state.combatants.items() if c.unseen}
    views: list[CombatantView] = []
    for who, c in state.combatants.items():
        if not sight.sees(who):
            continue
        mine = sight.owns(who)
        exact = mine or sight.hp == "exact"
        views.append(CombatantView(
            id=who, name=c.sheet.name, side=c.sheet.side, turn=state.turn == who,
            hp=c.hp if exact else None, max_hp=c.sheet.hp if exact else None,
            hp_band=hp_band(c.hp, c.sheet.hp) if not exact and sight.hp == "banded" else None,
            will=c.will if mine else None, bonus_actions=c.bonus_actions if mine else None,
            in_hand=tuple(c.wielding) if mine else None, conditions=dict(c.conditions),
            remaining={k: v for k, v in c.remaining.items() if k in c.conditions}, left=c.left,
            own=who in sight.own, hidden=sight.gm and who in secret))
    return tuple(views)
