"""``omen status`` for people: where the fight is, whose turn, what it waits for, each combatant in a line, and the
``omen do`` commands of the likely choices, ready to paste.

Built from ``options()`` (every command offered is one the engine accepted) and the state. A command that rolls
dice runs as printed when the fight's dice can be rolled from the shell: a seeded fight whose seed is known (given
with ``--seed`` or ``OMEN_SEED``, revealed in the log, or published, as the bundled demo's are); otherwise the line
says which faces it needs (``dice``, C29 order), since only the table's physical dice can give them.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import msgspec

from omen_core.decisions import DECISION_POINTS
from omen_core.derive import standing_hit
from omen_core.dice import commitment
from omen_core.options import Choice, DiceRoll, Offer, Options, Waiting
from omen_core.state import FightState
from omen_replay.replay import conditions_words

__all__ = ["SeedKnown", "each_once", "published_seed", "status_lines", "next_commands", "combatant_line",
           "odds_summary", "answer_costs", "owed"]

#: At most this many ``omen do`` lines under ``next:``.
NEXT = 5


@dataclass(frozen=True)
class SeedKnown:
    """A seed the shell may roll with, and how ``omen do`` gets it: ``--seed HEX`` printed (``printed``) or from
    the environment (``OMEN_SEED``: nothing printed, the seed never shown)."""

    hex: str
    printed: bool


def published_seed(pledge: str | None) -> bytes | None:
    """The seed of a fight whose commitment is that of a published seed (the bundled demos': ``omen demo`` and
    ``omen demo --short``), else None."""
    if pledge is None:
        return None
    from omen_replay.demo import DEMO_SEED

    scenario = files("omen_replay") / "data" / "ember-ford" / "scenario.toml"
    seeds = [DEMO_SEED, bytes.fromhex(tomllib.loads(scenario.read_text())["fight"]["seed"])]
    return next((s for s in seeds if commitment(s) == pledge), None)


def _name(state: FightState, who: str | None) -> str:
    fighter = state.combatants.get(who or "")
    return fighter.sheet.name if fighter is not None else (who or "the GM")


def _where(found: Options, state: FightState) -> str:
    title = f"{state.title} ({found.fight_id})" if state.title else found.fight_id
    if state.ending is not None:
        side = f": {state.ending.side}" if getattr(state.ending, "side", None) else ""
        now = f"the fight is over ({state.ending.reason}{side}), round {found.round}"
    elif found.phase == "rounds":
        now = f"round {found.round}, {_name(state, found.turn)}'s turn" if found.turn else f"round {found.round}"
    else:
        now = f"{found.phase} phase"
    seed = "" if found.dice != "seeded" else ", seed revealed" if state.revealed_seed else ", seed kept"
    return f"{title} at seq {found.seq}: {now}; {found.dice} dice{seed}"


def _undeclared(state: FightState) -> str:
    """Where the open decision point is one no extension installed here declares (a log played with a Python
    extension, read without it): said, since nothing answers it here (docs/extensions.md); "" otherwise."""
    from omen_core.extensions import window

    opened = state.pending.decision if state.pending is not None else None
    if opened is None or window(opened.decision, state) is not None:
        return ""
    return (f"; but no extension installed here declares {opened.decision!r}, so nothing can answer it here: "
            "install the extension the fight was played with (docs/extensions.md)")


def _awaited(found: Options, state: FightState) -> str:
    w = found.waiting
    if w is not None:
        who = ", ".join(_name(state, x) for x in w.who) or "the GM"
        return (f"awaited: {who}: {w.title} ({w.rule}), with {' or '.join(w.answers)}; {answer_costs(w, state)}"
                f"{_undeclared(state)}")
    if state.ending is not None:
        left = [*(["reveal the seed"] if _offered(found, "reveal_seed") else []), *_undoing(state)]
        return f"awaited: nothing ({', or '.join(left)})" if left else "awaited: nothing: the fight is over"
    if found.phase == "rounds" and found.turn:
        fighter = state.combatants.get(found.turn)
        if fighter is not None and fighter.helpless:  # C10, C36: no action, reaction or ability use; the turn ends
            return (f"awaited: {_name(state, found.turn)} ends the turn (incapacitated or paralysed, it can take no "
                    "action: C10, C36)")
        budget = next((b for b in found.combatants if b.who == found.turn), None)
        left = [what for what, has in (("an Action", budget is None or budget.actions > 0),
                                       ("a Movement Action", budget is None or budget.movement > 0)) if has]
        if not left:  # C20: both spent; what else it may do (a Bonus Action's ability, a draw) status --all lists
            return f"awaited: {_name(state, found.turn)} ends the turn (its Action and Movement Action are spent)"
        return f"awaited: {_name(state, found.turn)} acts ({', '.join(left)} left) or ends the turn"
    if _offered(found, "roll_initiative"):
        return "awaited: the GM: an ambush, positions or initiative (roll_initiative)"
    return "awaited: the GM"


#: The triggers of the answers that cost nothing at a decision point whose answers cost: declining an Active
#: Defense (C8: the defender may also decline) and letting a thrown item hit (C22); an answer marked ``free`` (letting
#: an Interrupt or an Attack of Opportunity pass, C23, C24) is free too.
_DECLINING = frozenset({"decline", "decline_catch"})


def answer_costs(waiting: Waiting, state: FightState | None = None) -> str:
    """What answering the decision the fight waits on costs, in words: at a window whose answer costs, what that
    answer costs and that passing it costs nothing (``to Dodge, Parry or Block costs 1 Bonus Action, to decline
    (defense left out) is free``, C8, C22; with the fight's ``state``, an Active Defense window names only the
    defenses it allows, ``to Dodge costs ...``, §Which Defenses Apply); an extension's decision, each choice's cost
    as it declares them; a decision that costs nothing, ``at no cost``."""
    if waiting.cost == "free":
        return "at no cost"
    point = next((p for p in DECISION_POINTS if p.kind == waiting.kind), None)
    if point is None:  # an extension's decision point (C38): its cost per choice, as its row says it
        return f"per answer: {waiting.cost}"
    free = [a.label for a in point.answers if a.free or a.trigger in _DECLINING]
    paid = [a.label for a in point.answers if a.label not in free]
    window = getattr(state.pending, "window", None) if state is not None and state.pending is not None else None
    if waiting.kind == "active_defense" and window is not None and window.eligible:
        *first, last = [d.capitalize() for d in window.eligible]
        paid = [f"{', '.join(first)} or {last}" if first else last]
    return f"to {' or '.join(paid)} costs {waiting.cost}" + "".join(f", to {label} is free" for label in free)


def _undoing(state: FightState) -> list[str]:
    """What of undo and redo the GM may still give: an undo back to a point past the last seed revealed (C42), a
    redo of the last undo if nothing followed it."""
    from omen_core.state import redoable

    undo = state.undo_point and state.undo_point >= state.undo_floor
    return [*(["undo"] if undo else []), *(["redo"] if redoable(state) is not None else [])]


def _offered(found: Options, command: str) -> bool:
    return any(o.command == command for o in found.offers)


#: A surprise tier as a combatant's line says it until its first turn (combat.txt §Determine Ambush, C18).
_SURPRISE = {"complete": "Complete Surprise (C18: no turn in the first round, no drawing until its first turn)",
             "partial": "Partial Surprise (C18: -5 to its initiative)"}


def combatant_line(found: Options, state: FightState, who: str) -> str:
    """One combatant in a line: turn mark, name, side, HP, Will, Bonus Actions, the turn's Action and Movement,
    what is in hand, its surprise tier until its first turn (C18), conditions (with the ticks left), the uses left
    of its limited abilities and the deferred costs it owes (C41), out of the fight."""
    fighter = state.combatants[who]
    budget = next((b for b in found.combatants if b.who == who), None)
    mark = "▶" if found.turn == who and state.ending is None else " "  # after the end, nobody's turn
    parts = [f"{mark} {fighter.sheet.name} ({who}, {fighter.side})", f"HP {fighter.hp}/{fighter.sheet.hp}",
             f"Will {fighter.will}/{fighter.sheet.will}", f"BA {fighter.bonus_actions}"]
    if budget is not None and budget.turn and state.ending is None:
        parts.append(f"Action {budget.actions} Move {budget.movement}")
    parts.append("in hand: " + (", ".join(fighter.held) or "nothing"))
    tier = state.surprise.get(who)
    # while it matters: until its first turn, until initiative is rolled (a GM looked for it: a tester)
    if (tier == "complete" and not state.had_a_turn(who)) or (tier == "partial" and not state.order):
        parts.append(_SURPRISE[tier])
    lasting = state.lasting(who)  # (conditions in applied order, C40; it was by name)
    names = {u.of: state.combatants[u.of].sheet.name for u in lasting.values() if u.of in state.combatants}
    parts += conditions_words(dict(fighter.conditions_applied()), fighter.ticks_left(), lasting, names)
    if budget is not None and budget.uses:  # C41: the limited abilities' uses left, and the deferred costs owed
        parts.append("uses left: " + ", ".join(f"{ability} {left}" for ability, left in budget.uses.items()))
    costs = owed(state, who)
    if costs:
        parts.append("owes: " + ", ".join(costs))
    if fighter.left:
        parts.append(f"OUT: {fighter.left}")
    elif fighter.hp <= 0:
        parts.append("DOWN")
    return "  ".join(parts)


def owed(state: FightState, who: str) -> list[str]:
    """The deferred costs ``who`` owes (C41), each as its ability and moment: ``reckless_surge (at the end of next
    turn)``. One recorded by an action still in progress (an Interrupt window open on an ability's use) is owed only
    if the action goes through: an Interrupt that hits cancels it, and the cost with it (C24), so it says so."""
    going = {frame.declared_at for frame in state.stack}
    return [f"{p.ability} (at the {p.moment.replace('_', ' ')}"
            + (f", if the action at seq {p.action} goes through" if p.action in going else "") + ")"
            for p in state.deferred if p.who == who]


def _likely(found: Options, state: FightState) -> list[tuple[Offer, Choice]]:
    """The likely choices now: each answer to the open decision; else the turn's first attack on a foe, each ability
    it may use (its first choice; C37: a content tester saw only the attack and the end of the turn), and the end
    of the turn, which stays within :data:`NEXT`; else initiative; after the end, revealing the seed."""
    picks: list[tuple[Offer, Choice]] = []
    waiting = found.waiting
    if waiting is not None:
        for offer in found.offers:
            if offer.command in waiting.answers:
                picks += [(offer, c) for c in each_once(offer.choices)]
        return picks
    if state.ending is not None:
        return [(o, o.choices[0]) for o in found.offers if o.command == "reveal_seed" and o.choices]
    turn = found.turn
    if found.phase == "rounds" and turn is not None:
        side = state.combatants[turn].side if turn in state.combatants else None
        for offer in found.offers:
            if offer.actor == turn and offer.command == "declare_attack":
                foes = [c for c in offer.choices if state.combatants.get(str(c.args.get("target")), None) is not None
                        and state.combatants[str(c.args["target"])].side != side]
                # a foe still standing first (a GM tester's next: offered the Dying foe alone, beside a standing one)
                foes.sort(key=lambda c: state.combatants[str(c.args["target"])].down)
                if foes:
                    picks.append((offer, foes[0]))
        abilities: dict[str, tuple[Offer, Choice]] = {}
        for o in found.offers:
            if o.actor == turn and o.command == "use_ability":
                for c in o.choices:
                    abilities.setdefault(str(c.args.get("ability")), (o, c))
        ending = [(o, o.choices[0]) for o in found.offers if o.actor == turn and o.command == "end_turn"]
        return [*picks, *list(abilities.values())[:NEXT - len(picks) - len(ending)], *ending]
    return [(o, o.choices[0]) for o in found.offers if o.command == "roll_initiative" and o.choices]


def each_once(choices: tuple[Choice, ...]) -> list[Choice]:
    """The choices, each once: a Parry not naming its weapon is the first weapon's, listed by name beside it."""
    named = any(c.args.get("defense") == "parry" and c.args.get("weapon") for c in choices)
    return [c for c in choices if not (named and c.args.get("defense") == "parry" and not c.args.get("weapon"))]


def _dice(rolls: tuple[DiceRoll, ...]) -> str:
    return "; ".join(f"{r.roller}'s {r.purpose.replace('_', ' ')}: " + ", ".join(f"{d.pool} d{d.sides}"
                                                                                  for d in r.dice) for r in rolls)


#: What the dice a command may roll say of initiative roll-offs: which combatants tie depends on the faces, so the
#: roll-offs a probe happened to meet are not named (a rules tester scripted faces for the two they named, and two
#: others tied: C19, C32).
ROLL_OFFS = "a roll-off die for each combatant still tied, if the faces leave a tie (C19, C32)"


def maybe_said(rolls: tuple[DiceRoll, ...], say: Callable[[tuple[DiceRoll, ...]], str]) -> str:
    """The dice a command may roll, in words (``say``), its initiative roll-offs as :data:`ROLL_OFFS`."""
    others = tuple(r for r in rolls if r.purpose != "roll_off")
    return "; ".join(part for part in (say(others) if others else "",
                                       ROLL_OFFS if len(others) < len(rolls) else "") if part)


#: What a ``next:`` line says of the seed of a seeded fight that is not known here.
GM_SEED = "the seed is the GM's: give it with --seed (or set OMEN_SEED)"


def next_commands(found: Options, state: FightState, log: str, seed: SeedKnown | None,
                  fight: str | None = None) -> list[str]:
    """The ``omen do`` lines of the likely choices (at most :data:`NEXT`), with ``--fight`` when ``fight`` is given
    (a store holding several). One that needs a seeded fight's seed (dice it rolls, or the seed revealed) carries
    ``--seed`` with the seed when it is known and printable; nothing when it comes from OMEN_SEED; when it is not
    known here, ``--seed HEX`` and a comment saying whose the seed is (and for dice, that the faces do too).
    One that rolls the table's dice has a comment naming the faces it needs."""
    lines = []
    seeded = found.dice == "seeded" or state.seed_commitment is not None
    for offer, choice in _likely(found, state)[:NEXT]:
        command: dict[str, Any] = {"command": offer.command, **choice.args}
        text = json.dumps(command, separators=(",", ":"))
        line = f"omen do {shlex.quote(log)} {shlex.quote(text)}" + (f" --fight {shlex.quote(fight)}" if fight else "")
        rolls = bool(choice.dice or choice.may_roll)
        faces = f"\"dice\": the faces of {_dice(choice.dice)}" + (
            f"; then perhaps {maybe_said(choice.may_roll, _dice)}" if choice.may_roll else "")
        if seeded and (rolls or offer.command == "reveal_seed") and seed is not None:
            line += f" --seed {seed.hex}" if seed.printed else ""
        elif seeded and offer.command == "reveal_seed":
            line += f" --seed HEX   # {GM_SEED}"
        elif seeded and rolls:
            line += f" --seed HEX   # {GM_SEED}; or, for the table's dice, leave it out and add {faces}"
        elif rolls:
            line += f"   # add {faces}"
        lines.append(line)
    return lines


def odds_summary(offer: Offer) -> list[str]:
    """An Active Defense offer's exact odds in one line: each answer's chance to turn the hit into a miss (and
    whether a miss would remove a crit); nothing for an offer without odds."""
    shown = [f"{c.args.get('defense') or 'decline'}{' ' + c.args['weapon'] if c.args.get('weapon') else ''} "
             f"{c.odds.miss}" for c in each_once(offer.choices) if not isinstance(c.odds, msgspec.UnsetType)]
    crit = any(not isinstance(c.odds, msgspec.UnsetType) and c.odds.crit for c in offer.choices)
    return [f"odds of a miss: {', '.join(shown)}" + ("; the hit is a crit: a miss removes it" if crit else "")] \
        if shown else []


def status_lines(found: Options, state: FightState, log: str, seed: SeedKnown | None,
                 fight: str | None = None) -> list[str]:
    """``omen status``'s short default: where, awaited (with the exact odds of each answer to an Active Defense),
    a line per combatant, ``next:`` and the head; the commands it prints name ``fight`` if it is given (a store
    holding several)."""
    lines = [_where(found, state), _awaited(found, state)]
    frame = state.pending
    standing = standing_hit(state, frame) if frame is not None and frame.decision is not None else None
    if standing is not None:  # what an answer at an extension's decision inside an attack turns on (C38)
        lines.append(f"  {standing.said(_name(state, standing.attacker), _name(state, standing.defender))}")
    if found.waiting is not None:
        lines += [f"  {line}" for o in found.offers if o.command in found.waiting.answers for line in odds_summary(o)]
    order = [*state.order, *(w for w in state.combatants if w not in state.order)]
    lines += [combatant_line(found, state, who) for who in order]
    commands = next_commands(found, state, log, seed, fight)
    if commands:
        needs = seed is None and any(GM_SEED in c for c in commands)
        lines.append("next:" + (" (this seeded fight's seed is not known here: replace HEX with it)" if needs else ""))
        lines += [f"  {c}" for c in commands]
    chosen = f" --fight {shlex.quote(fight)}" if fight else ""
    lines.append(f"head {found.head}  (omen status {shlex.quote(log)}{chosen} --all lists every command accepted now)")
    return lines
