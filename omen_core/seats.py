"""What one seat may see of a fight and do in it, beside the log: its sight (whose combatants it owns, which it may
not see, how others' HP shows), its options and the combatants as it sees them.

The pure half of the per-seat views (no I/O, no server): the HTTP server's seats (:mod:`omen_server.views`,
which adds the view of every event) and the simulator's policies (:mod:`omen_replay.simulate`) read the same
functions, so a simulated player sees exactly what a player's seat at the table sees: its own combatants in
full, the others as the fight's HP display says (exact, banded or hidden).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from .commands import Command
from .content import SHIPPED_ABILITIES, CombatantSheet
from .options import Budget, Choice, DiceRoll, Offer, Options, Waiting
from .state import FightState, Lasting

__all__ = ["SeatKind", "HpDisplay", "HP_BANDS", "PLAYER_COMMANDS", "PLAYER_ACTIONS", "GM_ARGUMENTS", "gm_arguments",
           "player_may_act", "NAMING_FIELDS", "names_in", "HpBand", "hp_band", "actor_of", "Sight", "sight_of",
           "hidden_from_players", "scrub", "typed_in", "seat_options", "seen_cost", "CombatantView", "combatant_views",
           "PUBLIC_GEAR_NAMES", "gear_fields"]

#: The kinds of seat at a table: the GM (sees everything), a player (its own combatants), a spectator.
SeatKind = Literal["gm", "player", "spectator"]
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
    "answer_decision": "who",
    "use_ability": "who",
    "move": "who",
    "stand_up": "who",
    "disengage": "who",
    "draw": "who",
    "end_turn": "who",
}

#: The arguments of a player's command that are the GM's call, not the player's: a claim of high ground ("GM's
#: call on what qualifies", combat.txt §Special Combat Conditions, C27) or of Encircled (positions are the GM's, C26),
#: damage modifiers and an attack's consequences (the GM's situational word, like a check's modifiers: docs/rulings.md,
#: "A player sees every term of its own roll"). A player's seat is not offered them and is refused them (403); the
#: GM may give its combatant's command with them (a tester's player claimed +2 for itself).
GM_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "declare_attack": ("situational", "damage_modifiers", "branches"),
    "react": ("situational",),
}


def gm_arguments(command: Any) -> tuple[str, ...]:
    """The arguments :data:`GM_ARGUMENTS` lists that ``command`` (a command struct) gives, set to other than their
    default, in that table's order."""
    kind = str(type(command).__struct_config__.tag)
    defaults = {f.name: f.default for f in msgspec.structs.fields(command)}
    return tuple(name for name in GM_ARGUMENTS.get(kind, ()) if getattr(command, name) != defaults.get(name))


#: The player's commands that begin an action of its own (not an answer to a window, not a draw): before the rounds
#: (the set-up, an ambush, initiative) single actions are the GM's to resolve (docs/machine.md), so a player's seat
#: gives them from round 1 on.
PLAYER_ACTIONS: frozenset[str] = frozenset({"declare_attack", "use_ability", "move", "stand_up", "disengage",
                                           "end_turn"})


def player_may_act(command: str, phase: str) -> bool:
    """Whether a player's seat may give ``command`` in ``phase``: an answer or a draw at any time; an action of
    its own (:data:`PLAYER_ACTIONS`) in the rounds only."""
    return command not in PLAYER_ACTIONS or phase == "rounds"


#: The fields of a player's commands that name combatants (a seat's command may name only those it sees).
NAMING_FIELDS = ("attacker", "target", "defender", "who", "leaves", "others")

def names_in(values: Iterable[Any]) -> list[str]:
    """The names among ``values`` (a command's naming fields, an offer's arguments): each text, and each text in
    a list or tuple of them (a move's ``leaves``), in order; anything else is no name."""
    return [w for v in values for w in (v if isinstance(v, (list, tuple)) else (v,)) if isinstance(w, str)]


#: HP bands, from the top (ruling, docs/server.md "HP display"): full, above half, half or less, none left.
HP_BANDS = ("unhurt", "hurt", "bloodied", "down")


#: The bands of the ``banded`` HP display (:func:`hp_band`).
HpBand = Literal["unhurt", "hurt", "bloodied", "down"]


def hp_band(hp: int, max_hp: int) -> HpBand:
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
    scrub from any text it is sent; ``dealers``: who dealt each damage an ability answering a decision dealt, by its
    action and source (the ability's name): its terms are the dealer's sheet's (C37)."""

    kind: SeatKind
    own: frozenset[str] = frozenset()
    hidden: frozenset[str] = frozenset()
    hp: HpDisplay = "banded"
    max_hp: Mapping[str, int] = field(default_factory=dict)
    participants: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    roll_groups: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    tie_answers: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # a tie's group, by the answer's batch
    secrets: tuple[str, ...] = ()
    sides: frozenset[str] = frozenset()
    public_effects: frozenset[str] = frozenset()
    dealers: Mapping[tuple[int, str], frozenset[str]] = field(default_factory=dict)

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


def hidden_from_players(state: FightState, hidden_by_gm: Iterable[str]) -> frozenset[str]:
    """The combatants the table hides from the players: those the GM hides and the Unseen (C27); a seat that plays
    one of them still sees it (:func:`sight_of`)."""
    return frozenset(hidden_by_gm) | {who for who, c in state.combatants.items() if c.unseen}


#: The default names of armor and shields: they say nothing of a sheet, so every seat is shown them.
PUBLIC_GEAR_NAMES = frozenset({"armor", "shield"})


def sight_of(kind: SeatKind, own: Iterable[str], state: FightState, hidden_by_gm: Iterable[str], hp: HpDisplay,
             participants: Mapping[int, tuple[str, ...]],
             sheets: Mapping[str, CombatantSheet] | None = None, public_effects: Iterable[str] = (),
             roll_groups: Mapping[int, tuple[str, ...]] | None = None,
             dealers: Mapping[tuple[int, str], frozenset[str]] | None = None,
             tie_answers: Mapping[int, tuple[str, ...]] | None = None) -> Sight:
    """The sight of one seat on ``state``: the GM's hidden combatants and the Unseen are hidden to everyone but
    their owners; the secrets to scrub from the engine's words are every hidden name and id and every gear and
    ability id and name of a sheet the seat does not own (the GM's notes never reach the engine, so no refusal can
    hold them). ``sheets`` are every sheet that ever joined (an undone join included: its events stay in the log);
    by default the state's. ``public_effects``: the save effects and abilities whose names the GM made public. The
    ids and names of the abilities a sheet lists are secrets as its gear is (an ability is its owner's, C37)."""
    mine = frozenset(own)
    hidden = hidden_from_players(state, hidden_by_gm) - mine
    secrets: list[str] = []
    public: set[str] = set(PUBLIC_GEAR_NAMES)
    every = dict(sheets or {}) | {who: c.sheet for who, c in state.combatants.items()}
    named = frozenset(public_effects)
    for who, sheet in every.items():
        gear = _gear(sheet) + _abilities(sheet, named)
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
                 roll_groups=dict(roll_groups or {}), tie_answers=dict(tie_answers or {}), secrets=ordered,
                 sides=sides, public_effects=frozenset(public_effects), dealers=dict(dealers or {}))


def _abilities(sheet: CombatantSheet, public: frozenset[str]) -> list[str]:
    """The ids and names of the abilities a sheet lists (C37; a shipped one listed by its id is named by the shipped
    library), but those whose names the GM made public (``public``). The abilities a sheet's shorthand keys stand
    for (Will conversion, Rogue routing) are the rulebook's terms, which the engine's words use of anyone: they are
    not scrubbed (else the words would differ by whether another sheet has one)."""
    found: list[str] = []
    for entry in sheet.abilities:
        ability = SHIPPED_ABILITIES.get(entry) if isinstance(entry, str) else entry
        names = [ability.id, ability.name] if ability is not None else [entry] if isinstance(entry, str) else []
        if not any(name in public for name in names):
            found += names
    return found


def gear_fields(sheet: CombatantSheet) -> Iterator[tuple[str, str]]:
    """The ids and names of a sheet's weapons, shield and armor, each with its path in the sheet
    (``.weapons[0].id``)."""
    for i, weapon in enumerate(sheet.weapons):
        yield f".weapons[{i}].id", weapon.id
        yield f".weapons[{i}].name", weapon.name
    if sheet.shield is not None:
        yield ".shield.id", sheet.shield.id
        yield ".shield.name", sheet.shield.name
    if sheet.armor is not None:
        yield ".armor.name", sheet.armor.name


def _gear(sheet: CombatantSheet) -> list[str]:
    """The ids and names of a sheet's weapons, shield and armor."""
    return [g for _, g in gear_fields(sheet) if g]


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

    How many secrets a list holds is scrubbed too, and a list holding nothing else goes:

    >>> scrub("'kael' may not answer this window (responders: ash, axe)", sight)
    "'kael' may not answer this window"

    A hidden combatant in a list of combatants beside others is left out, as the seat's views leave it out of
    every list (a window's responders); an answer only hidden ones may give goes from what is "legal now", as the
    seat's options say nothing of it (``waiting`` is null):

    >>> scrub("legal now: react or pass_reaction by ash, vesh (Interrupt, C24); the GM's end_fight or undo", sight)
    "legal now: react or pass_reaction by vesh (Interrupt, C24); the GM's end_fight or undo"
    >>> scrub("legal now: react or pass_reaction by ash (Interrupt, C24); the GM's end_fight or undo", sight)
    "legal now: the GM's end_fight or undo"
    """
    if sight.gm:
        return text
    mine = set(typed)
    secrets = [s for s in sight.secrets if s not in mine]
    if not secrets:
        return text
    unseen = sight.hidden - mine
    said = _COMBATANTS.sub(lambda m: ", ".join(w for w in m.group().split(", ") if w not in unseen) or "(hidden)"
                           if any(w in unseen for w in m.group().split(", ")) else m.group(), text)
    pattern = "|".join(re.escape(s) for s in secrets)
    said = re.sub(rf"(?<![\w.-])(?:{pattern})(?![\w-]|\.\w)", "(hidden)", said)
    said = _HIDDEN_RUN.sub("(hidden)", said)  # how many are hidden is itself hidden
    said = _HIDDEN_ANSWER.sub("", said)  # an answer only hidden ones give: the seat's options do not show it
    return _HIDDEN_LIST.sub("", said)  # and a list of nothing but hidden ones, that there are any


#: A run of hidden items in a list (``(hidden), (hidden)``), and a parenthesised list of nothing but hidden ones
#: (`` (responders: (hidden))``).
_HIDDEN_RUN = re.compile(r"\(hidden\)(?:, \(hidden\))+")
#: A list of two or more ids (``skarn, vesh``); and what is legal now for those who answer a decision, when the
#: only ones left are hidden (``react or pass_reaction by (hidden) (Interrupt, C24); ``).
_COMBATANTS = re.compile(r"(?<![\w.'-])[\w.-]+(?:, [\w.-]+)+(?![\w'-])")
_HIDDEN_ANSWER = re.compile(r"[a-z_]+(?: or [a-z_]+)* by \(hidden\) \((?:[^()]|\(hidden\))*\)(?:; )?")
_HIDDEN_LIST = re.compile(r" \([a-z ]+: \(hidden\)\)")


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


def _seen_roll(roll: DiceRoll, sight: Sight) -> bool:
    return sight.owns(roll.roller)


#: The commands a player gives that may stop at a window before they roll (C24: an Interrupt window as an Action is
#: declared; C38: an ability's decision as an attack is declared): whether one does turns on what a player's seat
#: is not shown (a foe's Bonus Actions, a hidden foe's reach, a foe's abilities), so in the rounds a player's
#: options list none of their dice (they listed the attack's hit dice, or none when a window came first, which told
#: a player whether a foe could Interrupt: found by a tester); its dice are asked for when they are rolled.
DICE_UNSAID = frozenset({"declare_attack", "react", "use_ability"})


#: An amount a cost in words takes of a combatant's own pools (``2 Will``, ``3 HP``; a deferred heal's ``3 HP healed``
#: is what the ability does, seen as it happens, not a cost).
_POOL_AMOUNT = re.compile(r"\b\d+ (Will|HP)\b(?! healed)")


def seen_cost(words: str, payers: Iterable[str], sight: Sight) -> str:
    """A cost in words (``1 Action and 2 Will``; a decision's, per answer) as the seat of ``sight`` sees it, when
    ``payers`` pay it: whole to the GM and to a seat that plays every payer; to any other seat an amount of Will
    reads ``some Will`` (a combatant's Will is its owner's, as ``cost_paid``'s amount is: a decision's public cost
    told every seat what the payer's Will went down by, after that amount was made the owner's: a reviewer), and
    one of HP ``some HP`` unless the fight's HP display shows numbers. Actions and Bonus Actions stay as they are
    (their use is seen at the table)."""
    payers = tuple(payers)
    if sight.gm or (payers and all(sight.owns(who) for who in payers)):
        return words
    return _POOL_AMOUNT.sub(lambda m: m.group(0) if m.group(1) == "HP" and sight.hp == "exact"
                            else f"some {m.group(1)}", words)


def seat_options(options: Options, sight: Sight) -> Options:
    """What this seat may do now: the GM every offer; a player the offers of its own combatants among the commands a
    player gives (:data:`PLAYER_COMMANDS`; before the rounds, no action of its own: :func:`player_may_act`), with
    the choices naming only combatants it sees and the dice only of its own rollers, its own combatants' standing,
    and the open decision with only the answerers it sees; a spectator the phase, round, turn and open decision. A
    decision point an extension or an ability opens (``answer_decision``) is named (its kind, title, cost) only to
    the seat it asks, or where the GM made its title public: to the others it is ``a decision`` of the combatant
    asked (its abilities are its sheet's). In the rounds, the commands of :data:`DICE_UNSAID` list no dice."""
    if sight.gm:
        return options
    offers: list[Offer] = []
    for offer in options.offers:
        if offer.actor is None or not sight.owns(offer.actor) or offer.command not in PLAYER_COMMANDS \
                or not player_may_act(offer.command, options.phase):
            continue
        unsaid = offer.command in DICE_UNSAID and options.phase == "rounds"
        choices = tuple(msgspec.structs.replace(choice, dice=(), may_roll=()) if unsaid else _own_dice(choice, sight)
                        for choice in offer.choices if _names_seen(choice.args, sight))
        if choices or not offer.choices:
            gms = GM_ARGUMENTS.get(offer.command, ())
            offers.append(msgspec.structs.replace(offer, choices=choices, note="",
                                                  free=tuple(a for a in offer.free if a.name not in gms)))
    waiting = options.waiting
    if waiting is not None:
        who = tuple(w for w in waiting.who if sight.sees(w))
        if waiting.kind == "initiative_tie" and len(who) < len(waiting.who):
            who = ()  # a tie with one the seat does not see is not the seat's to see at all (its events are withheld)
        named = waiting.answers != ("answer_decision",) or any(sight.owns(w) for w in waiting.who) \
            or waiting.title in sight.public_effects
        waiting = Waiting(kind=waiting.kind if named else "decision", title=waiting.title if named else "a decision",
                          rule=waiting.rule, who=who, answers=waiting.answers,
                          cost=seen_cost(waiting.cost, waiting.who, sight) if named else "",
                          resumes=waiting.resumes if named else "",
                          action=waiting.action) if who or not waiting.who else None
    budgets: tuple[Budget, ...] = tuple(
        msgspec.structs.replace(b, until=seen_lasting(b.until, sight))
        for b in options.combatants if sight.owns(b.who))
    turn = options.turn if options.turn is None or sight.sees(options.turn) else None
    return msgspec.structs.replace(options, waiting=waiting, combatants=budgets, offers=tuple(offers), turn=turn)


def _own_dice(choice: Choice, sight: Sight) -> Choice:
    """A choice with the dice a player's seat gives with the command: its own rolls up to the first that is another
    seat's (C29: faces go in order, so its rolls after another seat's die it gives when the command, staged, asks
    for them; listed, a client sent them and was refused, surplus-faces: found by a tester), and of the rolls that
    may follow only its own, none once another seat's die comes first."""
    dice = tuple(itertools.takewhile(lambda r: _seen_roll(r, sight), choice.dice))
    may = tuple(itertools.takewhile(lambda r: _seen_roll(r, sight), choice.may_roll)) \
        if len(dice) == len(choice.dice) else ()
    return msgspec.structs.replace(choice, dice=dice, may_roll=may)


def _names_seen(args: Mapping[str, Any], sight: Sight) -> bool:
    return not any(who in sight.hidden for who in names_in(args.values()))


class CombatantView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A combatant as a seat sees it at the table: name and side always; HP as exact (``hp``, ``max_hp``) or a
    band (``hp_band``) or nothing, as the fight's HP display says (its owner and the GM: exact); Will, Bonus
    Actions and what is in hand to its owner and the GM; the conditions with their stacks, in the order they were
    applied (C40: the order they take effect in at one moment; every seat that sees the combatant sees each
    application), and, for those with a duration, the ticks left (``remaining``: C28, public as their ticks are),
    for those lasting until a combatant's next turn, whose and which moment (``until``, C40: ``of`` is None for a
    combatant the seat does not see, as the table page says "another combatant");
    whether it is out of the fight (fled, yielded, dead); whether it is the one whose turn it is."""

    id: str
    name: str
    side: str
    turn: bool = False
    hp: int | None = None
    max_hp: int | None = None
    hp_band: HpBand | None = None
    will: int | None = None
    bonus_actions: int | None = None
    in_hand: tuple[str, ...] | None = None
    conditions: dict[str, int] = {}
    remaining: dict[str, int] = {}
    until: dict[str, Lasting] = {}
    left: str | None = None
    own: bool = False
    hidden: bool = False


def seen_lasting(until: Mapping[str, Lasting], sight: Sight) -> dict[str, Lasting]:
    """``until`` as a seat may see it: the combatant whose turn a condition waits for left unnamed (None) where the
    seat does not see it (C40)."""
    return {k: u if u.of is None or sight.sees(u.of) else msgspec.structs.replace(u, of=None)
            for k, u in until.items()}


def combatant_views(state: FightState, sight: Sight, hidden_by_gm: Iterable[str] = ()) -> tuple[CombatantView, ...]:
    """Every combatant this seat may see, as it may see it (the GM: everyone, with ``hidden`` marking those the
    players do not see)."""
    secret = hidden_from_players(state, hidden_by_gm)
    views: list[CombatantView] = []
    for who, c in state.combatants.items():
        if not sight.sees(who):
            continue
        mine = sight.owns(who)
        exact = mine or sight.hp == "exact"
        views.append(CombatantView(
            id=who, name=c.sheet.name, side=c.sheet.side, turn=state.whose_turn == who,
            hp=c.hp if exact else None, max_hp=c.sheet.hp if exact else None,
            hp_band=hp_band(c.hp, c.sheet.hp) if not exact and sight.hp == "banded" else None,
            will=c.will if mine else None, bonus_actions=c.bonus_actions if mine else None,
            in_hand=c.held if mine else None,
            conditions=dict(c.conditions_applied()),
            remaining=c.ticks_left(), until=seen_lasting(state.lasting(who), sight),
            left=c.left,
            own=who in sight.own, hidden=sight.gm and who in secret))
    return tuple(views)
