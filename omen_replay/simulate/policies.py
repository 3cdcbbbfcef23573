"""Policies: the decisions a simulated combatant makes, chosen among the commands the fight offers it, seeing only
what its side's seat at the table would see.

A policy is any object with a ``decide(decision) -> Command`` method (:class:`Policy`). The simulator asks the
policy of a combatant's side whenever that combatant must choose: on its turn (``kind`` ``"turn"``, once per
command until it ends the turn) and at each decision point it answers (``"active_defense"``, ``"interrupt"``,
``"attack_of_opportunity"``, ``"catch"``, ``"routing"``, ``"will_conversion"``). The :class:`Decision` holds
every legal command (``choices``: exactly what ``options()`` offers that combatant, :mod:`.moves`), the seat's
view (:class:`SeatView`: the combatants as a player's seat sees them, :mod:`omen_core.seats`: a foe's HP as a
band, or not at all), the deciding combatant's own sheet, the exact odds of each Active Defense answer, and a
random source seeded from the fight's seed and the side; at a triggered ability's decision point, what each choice
costs (``costs``).

A policy must be a function of what it is given: the simulator makes a fresh one for every fight and side, and
regenerating a fight (``omen simulate --replay``) asks it the same questions, so it must give the same answers.

Three are built in (:data:`BUILT_IN`): ``random`` (uniformly among the choices), ``aggressive`` (focus fire on the
weakest enemy in sight, defend when a defense can turn the hit) and ``cautious`` (defend whenever it may, retreat
at low HP). A policy of your own is named ``module:attribute`` or ``path/to/file.py:attribute`` (a class, or any
callable making a policy):

    >>> from omen_replay.simulate.policies import load_policy
    >>> load_policy("aggressive").name
    'aggressive'
    >>> load_policy("omen_replay.simulate.policies:Cautious").name
    'cautious'
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

from omen_core.commands import (
    AnswerActiveDefense,
    AnswerCatch,
    AnswerDecision,
    ChooseWillConversion,
    Command,
    DeclareAttack,
    Disengage,
    Draw,
    EndTurn,
    Move,
    PassReaction,
    React,
    RouteDamage,
    UseAbility,
)
from omen_core.content import Ability, CombatantSheet, DealDamage, Save
from omen_core.errors import BadInput
from omen_core.hooks import Cost
from omen_core.options import Odds
from omen_core.seats import HP_BANDS, CombatantView

__all__ = ["SeatView", "Decision", "Policy", "PolicyError", "RandomPolicy", "Aggressive", "Cautious", "BUILT_IN",
           "load_policy", "harms", "harmful_ability"]


@dataclass(frozen=True)
class SeatView:
    """The fight as the deciding side's seat sees it: the round, whose turn it is, every combatant it may see (its
    own in full; the others' HP as the fight's HP display says: :class:`omen_core.seats.CombatantView`), who is
    within whose reach among them, and whether the turn's owner has Disengaged this turn (C23)."""

    round: int
    turn: str | None
    combatants: tuple[CombatantView, ...]
    engaged: frozenset[tuple[str, str]] = frozenset()
    disengaged: bool = False

    def combatant(self, who: str) -> CombatantView | None:
        """The view of combatant ``who``, if the seat sees it."""
        return next((c for c in self.combatants if c.id == who), None)

    def within_reach(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` are within each other's reach."""
        return (min(a, b), max(a, b)) in self.engaged


@dataclass(frozen=True)
class Decision:
    """One choice a combatant must make (see the module's docstring)."""

    who: str
    side: str
    kind: str
    choices: tuple[Command, ...]
    view: SeatView
    sheet: CombatantSheet
    rng: random.Random
    odds: tuple[Odds | None, ...] = ()
    rolled: tuple[int, ...] = ()
    costs: tuple[Cost | None, ...] = ()

    @property
    def me(self) -> CombatantView:
        """The deciding combatant as its own seat sees it (exactly)."""
        found = self.view.combatant(self.who)
        assert found is not None
        return found


@runtime_checkable
class Policy(Protocol):
    """What the simulator asks of a side's policy: a name for the report, and a command for each decision."""

    name: str

    def decide(self, decision: Decision) -> Command:
        """The command to give: one of ``decision.choices``, or any command the rules accept now (a move leaving
        several of the enemies the choices list, together, say)."""
        ...


class PolicyError(BadInput, ValueError):
    """A policy that cannot be loaded (an unknown name, a module or attribute not found, not a policy)."""


# -- what the built-in policies read off a decision -----------------------------------------------------------


def _down(view: CombatantView) -> bool:
    """Down as the seat can tell (C33): out of the fight, at 0 HP (exact), in the band ``down``, or Dying."""
    return view.left is not None or view.hp == 0 or view.hp_band == "down" or "Dying" in view.conditions


def _weakness(view: CombatantView) -> tuple[int, int]:
    """How hurt a combatant looks, lowest first: its HP as shown (exact, else its band), else nothing known."""
    if view.hp is not None:
        return 0, view.hp
    if view.hp_band is not None:
        return 1, -HP_BANDS.index(view.hp_band)  # bloodied before hurt before unhurt
    return 2, 0


def enemies_in_sight(decision: Decision) -> list[CombatantView]:
    """The enemies the seat sees still standing, the weakest-looking first (ties: the order they joined)."""
    foes = [c for c in decision.view.combatants if c.side != decision.side and not _down(c)]
    return sorted(foes, key=_weakness)


def _attack_strength(decision: Decision, cmd: DeclareAttack) -> tuple[int, int]:
    """How hard an attack of ours hits, by the sheet: rage dice first, then the weapon's damage (unarmed last)."""
    weapon = decision.sheet.weapon(cmd.weapon) if cmd.weapon else None
    if cmd.unarmed or (weapon is None and cmd.weapon is not None):
        return int(cmd.rage), -1
    held = weapon or next((w for w in decision.sheet.weapons if w.id in (decision.me.in_hand or ())), None)
    return int(cmd.rage), held.weapon_damage + held.hit_bonus if held else -1


def best_attack(decision: Decision, only_ranged: bool = False) -> DeclareAttack | None:
    """An attack on the weakest enemy in sight, with the strongest weapon offered (``only_ranged``: a ranged one)."""
    attacks = [c for c in decision.choices if isinstance(c, DeclareAttack)]
    if only_ranged:
        attacks = [c for c in attacks if c.weapon and _ranged(decision.sheet, c.weapon)]
    for foe in enemies_in_sight(decision):
        on_it = [c for c in attacks if c.target == foe.id]
        if on_it:
            return max(on_it, key=lambda c: _attack_strength(decision, c))  # max keeps the first of equals
    return None


def armed_attack(decision: Decision, only_ranged: bool = False) -> Command | None:
    """:func:`best_attack`, armed first: one that would attack with its fists only (no weapon in hand, or no ranged
    one for ``only_ranged``) draws the strongest weapon it carries (by the sheet, as :func:`best_attack` ranks
    them) if the rules let it draw now (C35: on its own turn, at the ruleset's cost; C18: a Completely Surprised
    combatant once its first turn has come), and attacks on its next command; None with no enemy in sight to
    attack. For ``only_ranged`` an enemy in sight is enough: out of its reach with the Movement Action spent, a
    melee attack is not offered (closing in is movement, docs/rulings.md), but a shot needs no closing in."""
    attack = best_attack(decision, only_ranged)
    if attack is not None and not attack.unarmed:
        return attack
    foes = {c.id for c in enemies_in_sight(decision)}
    if not any(isinstance(c, DeclareAttack) and c.target in foes for c in decision.choices) \
            and not (only_ranged and foes):
        return attack
    draws = [c for c in decision.choices if isinstance(c, Draw) and (w := decision.sheet.weapon(c.weapon)) is not None
             and "spell" not in w.properties and (not only_ranged or "ranged" in w.properties)]
    if not draws:
        return attack
    return max(draws, key=lambda c: _attack_strength(decision, DeclareAttack(attacker=c.who, target="",
                                                                              weapon=c.weapon)))


def harms(ability: Ability) -> bool:
    """Whether an ability, used on a foe, harms it: it calls a save (C15) or deals damage to its target."""
    return any(isinstance(e, Save) or (isinstance(e, DealDamage) and e.to == "target") for e in ability.effects)


def harmful_ability(decision: Decision) -> UseAbility | None:
    """An ability used on one's turn that harms a foe (:func:`harms`), on the weakest enemy in sight it is offered
    on (the first offered of equals), if one is offered: only those taking an Action or a Bonus Action (C37), so
    that each use spends what the turn has; its cost, uses and targets as the choices offer them (C20, C22)."""
    mine = {a.id: a for a in decision.sheet.written_abilities() if a.use in ("action", "bonus_action") and harms(a)}
    offered = [c for c in decision.choices if isinstance(c, UseAbility) and c.ability in mine]
    for foe in enemies_in_sight(decision):
        on_it = [c for c in offered if c.target == foe.id]
        if on_it:
            return on_it[0]
    return None


def _ranged(sheet: CombatantSheet, weapon_id: str) -> bool:
    weapon = sheet.weapon(weapon_id)
    return weapon is not None and "ranged" in weapon.properties


def best_defense(decision: Decision) -> tuple[AnswerActiveDefense, Fraction] | None:
    """The Active Defense answer most likely to turn the hit into a miss, and that chance (the first of equals, in
    the order offered); None when only declining is offered."""
    best: tuple[AnswerActiveDefense, Fraction] | None = None
    for cmd, odds in zip(decision.choices, decision.odds, strict=False):
        if isinstance(cmd, AnswerActiveDefense) and cmd.defense is not None and odds is not None:
            chance = Fraction(odds.miss)
            if best is None or chance > best[1]:
                best = cmd, chance
    return best


def _first(decision: Decision, kind: type[Command]) -> Command | None:
    return next((c for c in decision.choices if isinstance(c, kind)), None)


def _decline(decision: Decision) -> Command:
    return next(c for c in decision.choices if isinstance(c, AnswerActiveDefense) and c.defense is None)


def _answer(decision: Decision, react: bool) -> Command:
    """The answers the built-in policies share: a reaction (a strike with the strongest melee weapon, if ``react``,
    else let it pass), catch what is thrown, route the highest die, convert damage to Will where offered."""
    kind = decision.kind
    if kind in ("interrupt", "attack_of_opportunity"):
        strikes = [c for c in decision.choices if isinstance(c, React)]
        if react and strikes:
            return max(strikes, key=lambda c: _attack_strength(
                decision, DeclareAttack(attacker=c.who, target="", weapon=c.weapon, unarmed=c.unarmed)))
        return next(c for c in decision.choices if isinstance(c, PassReaction))
    if kind == "catch":
        return next(c for c in decision.choices if isinstance(c, AnswerCatch) and c.catch)
    if kind == "routing":
        dice = decision.rolled
        best = max(range(len(dice)), key=lambda i: dice[i]) if dice else None
        return next(c for c in decision.choices if isinstance(c, RouteDamage) and c.die == best)
    if kind == "will_conversion":
        return next(c for c in decision.choices if isinstance(c, ChooseWillConversion) and c.convert)
    answers = [c for c in decision.choices if isinstance(c, AnswerDecision)]
    if answers:  # an ability's or extension's decision point: use it (its first choice), or keep what it costs
        return answers[0] if react or _free(decision, answers[0]) else \
            next((c for c in answers if c.choice == "pass"), answers[-1])
    raise PolicyError(f"no built-in answer to a {kind} decision")


def _free(decision: Decision, choice: Command) -> bool:
    """Whether ``choice`` costs nothing, as the decision's ``costs`` say (a choice whose cost is not known is not
    free)."""
    i = decision.choices.index(choice)
    cost = decision.costs[i] if i < len(decision.costs) else None
    return cost is not None and not cost.entries()


def _end_turn(decision: Decision) -> Command:
    found = _first(decision, EndTurn)
    if found is None:
        raise PolicyError(f"{decision.who} has no end_turn among its choices: {decision.choices}")
    return found


# -- the built-in policies -----------------------------------------------------------------------------------------


@dataclass
class RandomPolicy:
    """Uniformly at random among every legal command (attacks on allies, moves and draws included): a floor to
    compare others with, and a fuzzer of the rules."""

    name: str = "random"

    def decide(self, decision: Decision) -> Command:
        """Any choice, each as likely as the others."""
        return decision.rng.choice(decision.choices)


@dataclass
class Aggressive:
    """Focus fire: on its turn, use on the weakest-looking enemy in sight an ability that harms it (a save or
    damage, taking an Action or a Bonus Action: :func:`harmful_ability`) while it can pay for one, and attack that
    enemy (the one its allies hit too) with its strongest weapon (holding none, it first draws the strongest it
    carries, when the rules let it: C35, C18), rage dice if it has them, then end the turn; strike at every
    Interrupt or Attack of Opportunity it is offered; at an Active Defense window, defend with the answer most
    likely to turn the hit into a miss when one can (its odds above 0), else keep the Bonus Action. (A combatant
    at 0 HP is never asked for a turn: the engine skips it, C36.)"""

    name: str = "aggressive"

    def decide(self, decision: Decision) -> Command:
        """See the class docstring."""
        if decision.kind == "active_defense":
            best = best_defense(decision)
            return best[0] if best is not None and best[1] > 0 else _decline(decision)
        if decision.kind != "turn":
            return _answer(decision, react=True)
        return harmful_ability(decision) or armed_attack(decision) or _end_turn(decision)


@dataclass
class Cautious:
    """Defend whenever it may (the answer most likely to turn the hit, whatever its odds), let Interrupts and
    Attacks of Opportunity pass (keeping Bonus Actions for defense), use a triggered ability only if that costs
    nothing (``decision.costs``), else pass. On its turn, at a third of its HP or less
    and within an enemy's reach, it Disengages (if it has the Bonus Action) and moves out of every enemy's reach,
    then shoots with a ranged weapon (drawing one it carries first, if it holds none); otherwise it fights as
    :class:`Aggressive` does."""

    name: str = "cautious"
    low: Fraction = field(default=Fraction(1, 3))

    def decide(self, decision: Decision) -> Command:
        """See the class docstring."""
        if decision.kind == "active_defense":
            best = best_defense(decision)
            return best[0] if best is not None else _decline(decision)
        if decision.kind != "turn":
            return _answer(decision, react=False)
        me = decision.me
        if me.hp is not None and me.max_hp and Fraction(me.hp, me.max_hp) <= self.low:
            return self._retreat(decision)
        return armed_attack(decision) or _end_turn(decision)

    def _retreat(self, decision: Decision) -> Command:
        near = sorted({c.id for c in decision.view.combatants if c.side != decision.side
                       and decision.view.within_reach(decision.who, c.id)})
        moves = [c for c in decision.choices if isinstance(c, Move)]
        if near and moves:
            disengage = _first(decision, Disengage)
            if disengage is not None and not decision.view.disengaged:
                return disengage
            return Move(who=decision.who, leaves=tuple(near))
        return armed_attack(decision, only_ranged=True) or _end_turn(decision)


#: The built-in policies by name.
BUILT_IN: Mapping[str, Callable[[], Policy]] = {"random": RandomPolicy, "aggressive": Aggressive,
                                                 "cautious": Cautious}


def load_policy(name: str) -> Policy:
    """A fresh policy: a built-in one by name, or ``module:attribute`` (a class or factory, called with no
    arguments); :class:`PolicyError` naming what is wrong otherwise."""
    factory = BUILT_IN.get(name)
    if factory is None:
        factory = _imported(name)
    try:
        made = factory()
    except TypeError as exc:
        raise PolicyError(f"policy {name!r}: cannot be made with no arguments: {exc}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's code: whatever it raises (SystemExit too) is said, not a traceback
        raise PolicyError(f"policy {name!r}: cannot be made: it raised {raised(exc)}") from None
    if not isinstance(made, Policy):  # say which of the two is missing (both were said missing: found by a tester)
        lacks = [what for what, has in (("name attribute", hasattr(made, "name")),
                                        ("decide(decision) method", callable(getattr(made, "decide", None))))
                 if not has]
        raise PolicyError(f"policy {name!r}: {type(made).__name__} has no {' and no '.join(lacks) or 'name'} "
                          "(a policy has both: docs/simulate.md, \"Policies\")")
    return made


def _imported(name: str) -> Callable[[], Policy]:
    """``module:attribute`` (an importable module) or ``path/to/file.py:attribute`` (a file, read as a module)."""
    module, colon, attribute = name.rpartition(":")
    if not colon or not module or not attribute:
        raise PolicyError(f"unknown policy {name!r}: built in are {', '.join(BUILT_IN)}; or give module:attribute "
                          "or file.py:attribute")
    try:
        loaded = _from_file(module) if module.endswith(".py") else importlib.import_module(module)
    except (ImportError, OSError, SyntaxError) as exc:
        raise PolicyError(f"policy {name!r}: cannot import {module!r}: {exc}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the module's own code raised (SystemExit too): said in one line, no traceback
        raise PolicyError(f"policy {name!r}: cannot import {module!r}: it raised {raised(exc)}") from None
    found = getattr(loaded, attribute, None)
    if found is None:
        raise PolicyError(f"policy {name!r}: module {module!r} has no {attribute!r}")
    if not callable(found):
        raise PolicyError(f"policy {name!r}: {attribute!r} is not a class or function making a policy")
    return found  # type: ignore[no-any-return]


def raised(exc: BaseException) -> str:
    """What a policy's code raised, in a few words: the exception's type and message (``SystemExit: 0``)."""
    said = str(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def _from_file(path: str) -> Any:
    """A policy module read from a file (each process that plays fights reads it once)."""
    key = "omen_policy_" + hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:16]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None or not os.path.isfile(path):
        raise ImportError(f"no such file: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[key]
        raise
    return module


def policies_for(names: Mapping[str, str], sides: Sequence[str], default: str = "aggressive") -> dict[str, Policy]:
    """A fresh policy for each side: its name in ``names``, else ``default``."""
    return {side: load_policy(names.get(side, default)) for side in sides}
