"""Deciding set-up and GM commands: start, join, apply or clear a condition, reveal the seed."""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterator

import msgspec

from ..abilities import ON_TURN
from ..commands import (
    ApplyConditionCommand,
    ClearConditionCommand,
    Join,
    RevealSeed,
    StartFight,
)
from ..content import (
    SHIPPED_ABILITIES,
    Ability,
    ApplyCondition,
    ClearCondition,
    CombatantSheet,
    Consequence,
    DealDamage,
    Heal,
    Reroll,
    Ruleset,
    Save,
    canonical,
    content_hash,
    known_words,
)
from ..dice import commitment
from ..errors import RuleViolation, SeedMismatch
from ..events import (
    CombatantJoined,
    ConditionApplied,
    ConditionCleared,
    FightStarted,
    SeedCommitted,
    SeedRevealed,
)
from ..extensions import BY_ID, EXTENSIONS
from ..limits import MAX_MULTIPLY
from .draft import Draft

__all__ = ["start", "join", "apply_condition", "clear_condition", "reveal_seed", "check_damage_type",
           "condition_stacks"]


def start(draft: Draft, cmd: StartFight) -> None:
    """Open the fight: record the whole ruleset and its hash, the dice source and any commitment."""
    if draft.state.started:
        raise RuleViolation("setup", f"fight {draft.state.fight_id!r} has already started")
    if (cmd.dice_source == "seeded") != (cmd.seed_commitment is not None):
        raise RuleViolation("dice", "a seed commitment is recorded for seeded dice, and only for them")
    ruleset = canonical(cmd.ruleset)  # as the log holds it: a live state is the state replayed, byte for byte
    draft.emit(FightStarted(ruleset=ruleset, ruleset_hash=ruleset.content_hash(), dice=cmd.dice_source,
                            seed_commitment=cmd.seed_commitment, title=cmd.title))


def join(draft: Draft, cmd: Join) -> None:
    """Add a combatant; its damage types and resistances must be ones the ruleset knows (C14). A refusal names
    the sheet's field (``field``: ``$.weapons[1].damage_type``), so a file's error can say where it is."""
    draft.require("setup")
    sheet = cmd.sheet
    if sheet.id in draft.state.combatants:
        raise RuleViolation("setup", f"a combatant with id {sheet.id!r} has already joined", field="$.id")
    if not shows_something(sheet.name):  # every page, story and prompt names a combatant by it (a tester's blank
        # name left a card with no name and an attack offered "with Sword" on no one)
        raise RuleViolation("setup", f"{sheet.id}'s name {sheet.name!r} shows nothing: give it a name a player can "
                                     "read (its id is for commands; its name is what every page and story says)",
                            field="$.name")
    _check_sheet_types(draft, sheet)
    if sheet.incoming_damage.too_large():  # a sheet that multiplied by 1e300 joined, and its first hit made a
        # damage total no log can hold: every answer to that attack was refused (a tester)
        raise RuleViolation("C13", f"{sheet.id}'s incoming damage multiplier {sheet.incoming_damage.multiply} is more "
                                   f"than {MAX_MULTIPLY}, the most a sheet may write (C13 step 5, C34)",
                            field="$.incoming_damage.multiply")
    _check_abilities(draft, sheet)
    sheet = canonical(sheet)  # as the log holds it (its skills and resistances in the log's order)
    draft.emit(CombatantJoined(sheet=sheet, sheet_hash=content_hash(sheet)))


def shows_something(name: str) -> bool:
    """Whether ``name`` holds a character a reader sees: not empty, nor spaces, format characters (a zero-width
    space), controls or marks alone.

    >>> shows_something("Ærwyn"), shows_something(""), shows_something("  \u200b ")
    (True, False, False)
    """
    return any(not ch.isspace() and unicodedata.category(ch)[0] not in "CZ" and unicodedata.category(ch) != "Mn"
               for ch in name)


def _check_sheet_types(draft: Draft, sheet: CombatantSheet) -> None:
    for i, weapon in enumerate(sheet.weapons):
        check_damage_type(draft, weapon.damage_type, f"{sheet.id}'s weapon {weapon.id!r}",
                          f"$.weapons[{i}].damage_type")
    for kind in sheet.resistances:
        if kind != "physical":
            check_damage_type(draft, kind, f"{sheet.id}'s resistances", f"$.resistances.{kind}")


def _check_abilities(draft: Draft, sheet: CombatantSheet) -> None:
    """Each ability a sheet lists is an extension a sheet opts into, or an ability written out as data (C37); the
    sheet's shorthand keys (``features``, ``training``) stand for shipped abilities, which a sheet may not list
    too (the sheet itself refuses that)."""
    for i, ability in enumerate(sheet.abilities):
        if not isinstance(ability, str):
            _check_written(draft, sheet, ability, f"$.abilities[{i}]")
            continue
        extension = BY_ID.get(ability)
        if extension is None:
            ids = [*(e.id for e in EXTENSIONS if e.listed), *SHIPPED_ABILITIES.abilities]
            near = difflib.get_close_matches(ability, ids, n=3, cutoff=0.75)
            mean = f": did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            raise RuleViolation("C37", f"{sheet.id}'s abilities list {ability!r}, which is neither shipped nor "
                                       f"written out{mean} (abilities a sheet may list by id: {', '.join(ids)}; "
                                       "a table's own are "
                                       "written out in the sheet or come from a scenario's ability library, "
                                       "docs/abilities.md; a Python extension's only where it is installed, "
                                       "docs/extensions.md)", field=f"$.abilities[{i}]")
        if not extension.listed:
            raise RuleViolation("C37", f"{sheet.id}'s abilities list {ability!r}, which its sheet gives by its own "
                                       f"keys ({extension.keys}), not in abilities", field=f"$.abilities[{i}]")


def _check_written(draft: Draft, sheet: CombatantSheet, ability: Ability, field: str) -> None:
    """An ability written out: its id is no extension's, nor a shipped ability's unless it is that ability, no other
    combatant's sheet writes another ability under it, and the damage types and conditions it names are the
    ruleset's (C14, C28)."""
    if ability.id in BY_ID:
        raise RuleViolation("C37", f"{sheet.id}'s ability {ability.id!r} has the id of a shipped extension "
                                   f"({BY_ID[ability.id].name}): give it another id", field=f"{field}.id")
    shipped = SHIPPED_ABILITIES.abilities.get(ability.id)  # a library taking a shipped id is refused (content.py)
    if shipped is not None and msgspec.structs.replace(shipped, id=ability.id) != ability:
        raise RuleViolation("C37", f"{sheet.id}'s ability {ability.id!r} differs from the shipped ability of that "
                                   f"id ({shipped.name}): one id, one ability in a fight; give it another id",
                            field=f"{field}.id")
    for other in draft.state.combatants.values():
        theirs = next((a for a in other.sheet.written_abilities() if a.id == ability.id), None)
        if theirs is not None and theirs != ability:
            raise RuleViolation("C37", f"{sheet.id}'s ability {ability.id!r} differs from the one {other.id}'s "
                                       "sheet writes under that id: one id, one ability in a fight",
                                field=f"{field}.id")
    whose = f"{sheet.id}'s ability {ability.id!r}"
    unknown = unknown_names(draft.ruleset, ability, whose)
    if unknown is not None:
        raise RuleViolation(unknown[0], unknown[1], field=f"{field}.{unknown[2]}")
    for place, consequence, on_owner in _written_consequences(ability):
        _check_consequence(draft, whose, f"{field}.{place}", consequence, on_owner)
    _check_payable(draft, sheet, ability, field)
    _check_reroll_faces(sheet, ability, field)


def _check_reroll_faces(sheet: CombatantSheet, ability: Ability, field: str) -> None:
    """A reroll's face that no die of its pool on the owner's sheet can show (C39: ``faces = [99]`` on a d8 pool)
    would never reroll anything: refused at the join, naming the face. The primary die is the attack's attribute's
    (C6), so a face any of the sheet's attributes can show stands; the FCS die is the sheet's FCS."""
    attributes = sheet.attributes
    for j, effect in enumerate(ability.effects):
        if not isinstance(effect, Reroll):
            continue
        sides = attributes.FCS.sides if effect.pool == "fcs" else max(
            attributes[name].sides for name in ("STR", "AGI", "INT", "RES", "FCS"))
        for k, face in enumerate(effect.faces):
            if face > sides:
                die = "FCS die" if effect.pool == "fcs" else "largest attribute die"
                raise RuleViolation("C39", f"{sheet.id}'s ability {ability.id!r} rerolls a {effect.pool} die showing "
                                           f"{face}, but {sheet.id}'s {die} is a d{sides}: it could never reroll",
                                    field=f"{field}.effects[{j}].faces[{k}]")


def unknown_names(ruleset: Ruleset, ability: Ability, whose: str) -> tuple[str, str, str] | None:
    """The first damage type (C14) or condition (C28) an ability names that ``ruleset`` does not know: its rule,
    the words (naming ``whose``) and its path below the ability; None if every name is known (the join checks every
    ability a sheet lists with it)."""
    types, conditions = ruleset.damage_types, ruleset.conditions
    for place, c, _on_owner in _written_consequences(ability):
        if isinstance(c, DealDamage) and c.damage_type not in types:
            return ("C14", f"unknown damage type {c.damage_type!r} in {whose} ({place}) "
                           f"({known_words(c.damage_type, [*types.physical, *types.other])})", f"{place}.damage_type")
        if isinstance(c, (ApplyCondition, ClearCondition)) and c.condition not in conditions:
            return ("C28", f"unknown condition {c.condition!r} in {whose} ({place}; "
                           f"{known_words(c.condition, conditions)})", f"{place}.condition")
    named = [("trigger.condition", ability.trigger.condition)] if ability.trigger is not None else []
    named += [(f"when.{name}[{k}]", condition) for name in ("target_has", "target_lacks", "owner_has", "owner_lacks")
              for k, condition in enumerate(getattr(ability.when, name))]
    for place, condition in named:
        if condition is not None and condition not in conditions:
            return ("C28", f"unknown condition {condition!r} in {whose} ({known_words(condition, conditions)})",
                    place)
    return None


def _check_payable(draft: Draft, sheet: CombatantSheet, ability: Ability, field: str) -> None:
    """An ability's cost no combatant could ever pay under the ruleset (C20, C22, C41): more Bonus Actions than a
    round gives, more Actions or Movement Actions than a turn does, counting the Action or Bonus Action an on-turn
    ability's ``use`` takes with its ``cost``; it would never be offered, so it is refused at the join, naming the
    cost's field. (A Will or HP cost past the owner's own sheet is not: it is not offered, as when its Will is
    spent; a ruling, docs/rulings.md.)"""
    cost, economy = ability.cost, draft.ruleset.economy
    limits = (("bonus_actions", cost.bonus_actions, "bonus_action", economy.bonus_actions, "Bonus Actions",
               "a round's", "C22"),
              ("actions", cost.actions, "action", economy.actions, "Actions", "a turn's", "C20"),
              ("movement", cost.movement, None, economy.movement_actions, "Movement Actions", "a turn's", "C20"))
    for key, amount, use, most, words, why, rule in limits:
        own = 1 if ability.use == use else 0  # the use's own Action or Bonus Action (C20, C22)
        if amount + own > most:
            parts = f" (1 to use it, {amount} more)" if own else ""
            raise RuleViolation(rule, f"{sheet.id}'s ability {ability.id!r} costs {amount + own} {words}{parts}, but "
                                      f"{sheet.id} can never spend more than {most} ({why}): it could never be used",
                                field=f"{field}.cost.{key}")


def _written_consequences(ability: Ability) -> Iterator[tuple[str, Consequence, bool]]:
    """Every consequence an ability writes, where (its path below the ability), and whether it lands on the owner
    itself: its effects (``to = "target"`` lands on the owner when the ability targets only itself), each branch of
    its save (whose saver is never the owner, C15), and its deferred cost (the owner's own, C41)."""
    for j, effect in enumerate(ability.effects):
        if isinstance(effect, (DealDamage, ApplyCondition, ClearCondition, Heal)):
            yield f"effects[{j}]", effect, effect.to == "actor" or (ability.target == "self" and ability.use in ON_TURN)
        elif isinstance(effect, Save):
            for branch in ("on_success", "on_failure"):
                for k, consequence in enumerate(getattr(effect, branch)):
                    yield f"effects[{j}].{branch}[{k}]", consequence, consequence.to == "actor"
    for k, consequence in enumerate(ability.deferred.effects if ability.deferred is not None else ()):
        yield f"deferred.effects[{k}]", consequence, True


def _check_consequence(draft: Draft, whose: str, where: str, c: Consequence, on_owner: bool) -> None:
    """A consequence an ability writes does not put on its own owner a condition a save ends (C15, C40; the names
    it uses are checked first, :func:`unknown_names`); a refusal names the ability and the field."""
    at = where.partition(".")[2].partition(".")[2]  # the path below the ability: effects[0].on_failure[1]
    if isinstance(c, ApplyCondition) and on_owner and draft.ruleset.conditions[c.condition].save_ends is not None:
        raise RuleViolation("C40", f"{whose} applies {c.condition} to its own owner ({at}), but a save ends "
                                   f"{c.condition}: the save is opposed by whoever applied it (C15), who must be "
                                   "another", field=f"{where}.to")


def check_damage_type(draft: Draft, damage_type: str, where: str, field: str = "") -> None:
    """Refuse a damage type the ruleset does not list (C14); ``field`` says where it is written."""
    types = draft.ruleset.damage_types
    if damage_type not in types:
        raise RuleViolation("C14", f"unknown damage type {damage_type!r} in {where} "
                                   f"({known_words(damage_type, [*types.physical, *types.other])})", field=field)


def condition_stacks(draft: Draft, who: str, condition: str, add: int, field: str | None = None) -> tuple[int, int]:
    """(stacks added, stacks after) when ``add`` stacks of ``condition`` land, capped at its maximum (C28);
    ``field``: where a command names the condition (the refusal's ``field`` fact), if one does."""
    defs = draft.ruleset.conditions
    if condition not in defs:
        raise RuleViolation("C28", f"unknown condition {condition!r} ({known_words(condition, defs)})",
                            **({"field": field} if field else {}))
    now = draft.combatant(who).conditions.get(condition, 0)
    after = min(now + add, defs[condition].max_stacks)
    return after - now, after


def apply_condition(draft: Draft, cmd: ApplyConditionCommand) -> None:
    """The GM applies stacks of a condition, outside any action: ``by`` names who applied it (needed for a
    condition a save ends, and another than the afflicted: C15, C40), ``until`` the start or end of the next turn
    of ``of`` (by default ``by``) that ends it (C40)."""
    draft.require("apply_condition")
    if cmd.condition == "Dying":
        hp = draft.combatant(cmd.who).hp
        raise RuleViolation("C36", f"Dying follows HP: it is set when HP reaches 0 (C28) and ends when HP rises above "
                                   f"0 (C36), never applied by hand ({cmd.who!r} is at {hp} HP)", field="$.condition")
    added, after = condition_stacks(draft, cmd.who, cmd.condition, cmd.stacks, "$.condition")
    for named in (cmd.by, cmd.of):
        if named is not None:
            draft.combatant(named)
    if draft.ruleset.conditions[cmd.condition].save_ends is not None:
        if cmd.by is None:
            raise RuleViolation("C40", f"a save ends {cmd.condition}, opposed by whoever applied it (C15): say who "
                                       "did (by)", field="$.by")
        if cmd.by == cmd.who:
            raise RuleViolation("C40", f"a save ends {cmd.condition}, opposed by whoever applied it (C15): {cmd.who!r} "
                                       "cannot oppose its own save", field="$.by")
    of = cmd.of if cmd.of is not None else cmd.by
    if cmd.until is None and cmd.of is not None:
        raise RuleViolation("C40", "`of` names whose next turn ends the condition: give `until` with it",
                            field="$.until")
    if cmd.until is not None and of is None:
        raise RuleViolation("C40", f"{cmd.condition} lasts until the {cmd.until.replace('_', ' ')} of whom? "
                                   "name them (of), or who applied it (by)", field="$.of")
    draft.emit(ConditionApplied(action=None, who=cmd.who, condition=cmd.condition, added=added, stacks=after,
                                reason=cmd.reason or "applied by the GM", by=cmd.by, until=cmd.until,
                                of=of if cmd.until is not None else None))


def clear_condition(draft: Draft, cmd: ClearConditionCommand) -> None:
    """The GM clears a condition the combatant has."""
    draft.require("clear_condition")
    if not draft.combatant(cmd.who).has(cmd.condition):
        raise RuleViolation("C28", f"{cmd.who!r} is not {cmd.condition}", field="$.condition")
    if cmd.condition == "Dying":
        raise RuleViolation("C36", f"Dying ends when HP rises above 0 (C36), never cleared by hand: {cmd.who!r} is at "
                                   "0 HP, so still Dying; an ability's heal raises it", field="$.condition")
    draft.emit(ConditionCleared(action=None, who=cmd.who, condition=cmd.condition,
                                reason=cmd.reason or "cleared by the GM"))


def reveal_seed(draft: Draft, cmd: RevealSeed) -> None:
    """Disclose the seed the dice are drawn under now; it must hash to its commitment. A revealed seed is spent
    (C42): a fight that goes on commits to a fresh seed in the same command (``next_commitment``, never the
    commitment being revealed; the engine also refuses one revealed earlier in the log); a fight that is over takes
    none."""
    draft.require("setup")
    state = draft.state
    if state.seed_commitment is None:
        raise RuleViolation("dice", "this fight has no seed commitment: its dice are not seeded")
    if state.revealed_seed is not None:
        raise RuleViolation("dice", "the seed has already been revealed")
    if not cmd.seed:
        raise RuleViolation("dice", "no seed given: give the seed the dice are drawn under now (seed: its hex), which "
                                    "must hash to the commitment")
    try:
        actual = commitment(bytes.fromhex(cmd.seed))
    except ValueError:
        raise RuleViolation("dice", f"the seed must be hex, got {cmd.seed!r}") from None
    if actual != state.seed_commitment:
        raise SeedMismatch(state.seed_commitment, actual)
    going_on = state.ending is None
    if going_on and cmd.next_commitment is None:
        raise RuleViolation("C42", "the fight goes on after this reveal, and a revealed seed is spent: commit to a "
                                   "fresh seed in the same command (next_commitment: the sha256 of a new seed, which "
                                   "the dice are drawn from next; Fight.reveal_seed and omen do make one)")
    if not going_on and cmd.next_commitment is not None:
        raise RuleViolation("C42", "the fight is over: no fresh seed is needed (leave next_commitment out)")
    if cmd.next_commitment is not None and cmd.next_commitment in (state.seed_commitment, *state.spent):
        which = "this command reveals" if cmd.next_commitment == state.seed_commitment else "this fight has revealed"
        raise RuleViolation("C42", f"next_commitment {cmd.next_commitment[:16]}… is the commitment of a seed {which}: "
                                   "a revealed seed is spent, and dice drawn under it again would be predictable by "
                                   "anyone holding the log; commit to a fresh seed")
    draft.emit(SeedRevealed(seed=cmd.seed.lower()))
    if cmd.next_commitment is not None:
        draft.emit(SeedCommitted(commitment=cmd.next_commitment))
