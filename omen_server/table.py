"""The table page of ``omen serve``: plain server-rendered HTML (Jinja2, autoescaped) and a little JavaScript.

Pages (no token needed; they hold nothing of any fight but, on ``/``, its id and title, which are public):

- ``GET /``: set up a fight (title, dice, sheets: the bundled Ember Ford ones or pasted JSON), and the fights of
  the store, by title;
- ``GET /table/{id}``: a fight's table; the seat's token comes in the URL's fragment (``#token=…``: never sent
  to the server in a URL, a log or a Referer), and the page's script sends it as a bearer header;
- ``GET /static/{name}``: the page's script and styles (no build step, nothing fetched from elsewhere);
- ``GET /sheets``: the bundled sheets, as JSON (what the set-up page offers).

And one read-only resource behind a seat's token: ``GET /fights/{id}/table``, the table as that seat sees it,
as an HTML fragment built only from the seat's own views (:mod:`omen_server.views`: its state, its options, the
events as it sees them). The page fetches it whenever the live stream says the head moved, and swaps it in.
The log is cards (:mod:`omen_server.story`) built from the seat's own view of the events alone, the GM's as a
player's: cards are never built from events a seat may not see (a player's own combatant's HP, which its state
shows at every head, is the one thing said of a command whose events it may not see).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Annotated, Any, NamedTuple

import jinja2
import msgspec
import msgspec.inspect
from litestar import Request, Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, HeaderParameter, QueryParameter

from omen_core.abilities import USE, trigger_words, uses_left, when_words
from omen_core.commands import Command
from omen_core.content import ATTRIBUTES, Ability, ConditionDef
from omen_core.decisions import deferred_words
from omen_core.dice import purpose_words
from omen_core.errors import OmenError
from omen_core.events import DecisionOpened, SaveCalled, SeedRevealed, StoredEvent
from omen_core.extensions import ATTACK_OPTION_FIELDS, routes, turn_actions
from omen_core.hooks import HOOK_POINTS
from omen_core.options import Choice, DiceRoll, Offer, Options, Waiting
from omen_core.rules.ambush import TIER_WORDS
from omen_core.seats import DICE_UNSAID, seen_lasting
from omen_core.state import AttackFrame, FightState, MomentFrame, redoable
from omen_core.walk import StoreSource, Visitor, walk
from omen_replay.demo import ember_ford_sheets
from omen_replay.explain import passed_over
from omen_replay.render import environment

from .app import Fights, SeatEntry, StagedView, _errors, _seat, command_rolls, fights_page, physical_now
from .decision import ChoiceFacts, DecisionFacts, decision_facts
from .keep import Seat
from .story import GM_GAVE, SHIELD, StoryCard, card_said, story, top_card
from .views import PLAYER_COMMANDS, CombatantView, SeenEvent, Sight, combatant_views, seen_event

__all__ = ["table_routes", "panel_html", "CSP", "COMMAND_TITLES"]

#: The page's Content-Security-Policy: everything from this server, nothing inline, nothing from elsewhere.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = {"Content-Security-Policy": CSP, "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}

#: How the page names each command of the scenario vocabulary (its button's text).
COMMAND_TITLES: dict[str, str] = {
    "declare_attack": "Attack", "answer_active_defense": "Active Defense", "route_damage": "Route damage",
    "choose_will_conversion": "Will conversion", "react": "React", "pass_reaction": "Pass",
    "answer_catch": "Catch", "answer_decision": "Answer", "use_ability": "Ability", "move": "Move",
    "stand_up": "Stand up", "disengage": "Disengage", "draw": "Draw",
    "end_turn": "End turn",
    "static_check": "Check", "contest": "Contest", "call_save": "Save", "cancel_action": "Cancel the action",
    "apply_condition": "Apply a condition", "clear_condition": "Clear a condition", "reveal_seed": "Reveal the seed",
    "begin_ambush": "Begin an ambush", "roll_initiative": "Roll initiative", "agree_initiative": "Agree initiative",
    "roll_off": "Roll off", "engage": "Engage", "leave_fight": "Leave the fight", "end_fight": "End the fight",
    "undo": "Undo", "redo": "Redo", "join": "Join", "start_fight": "Start the fight",
}

class InputSpec(NamedTuple):
    """One input of a form for a free argument: its id's last word, its type, its label, the JSON path it fills,
    and, for one seldom used, the words of the folded group it sits in (``more``: the form's first screen keeps its
    choice and its button)."""

    id: str
    kind: str
    label: str
    path: str
    more: str = ""


#: The free arguments the forms take, by name: each argument's inputs (an id's last word, the input's type, its
#: label, the JSON path it fills; a number in a list is an index: ``damage_modifiers.0.value``). A claim is the GM's
#: (C26, C27; GM_ARGUMENTS): a player's seat is not offered the arguments these inputs fill.
FREE_INPUTS: dict[str, tuple[InputSpec, ...]] = {
    "situational": (
        InputSpec("situational", "checkbox", "claim the high ground (C27)", "situational.high_ground"),
        InputSpec("encircled-attackers", "number",
                  "Encircled (C26): the attacking side adjacent to the target, the attacker included",
                  "situational.encircled.attackers", "Encircled (C26)"),
        InputSpec("encircled-defenders", "number",
                  "Encircled (C26): the target's side adjacent to the attacker, the target included",
                  "situational.encircled.defenders", "Encircled (C26)"),
    ),
    "damage_modifiers": (
        InputSpec("damage-source", "text", "damage modifier: its source (the table sees it)",
                  "damage_modifiers.0.source", "a damage modifier"),
        InputSpec("damage-value", "number", "damage modifier: its value (+ or −)", "damage_modifiers.0.value",
                  "a damage modifier"),
    ),
    "difficulty": (InputSpec("difficulty", "number", "difficulty", "difficulty"),),
    "reason": (InputSpec("reason", "text", "reason (the table sees it)", "reason"),),
    "note": (InputSpec("note", "text", "note (the GM's)", "note"),),
    "stacks": (InputSpec("stacks", "number", "stacks", "stacks"),),
    "to_seq": (InputSpec("to_seq", "number", "back to seq (default: the last command)", "to_seq"),),
    "by": (InputSpec("by", "select", "applied by (a save that ends it is opposed by them, C40)", "by"),),
    "until": (InputSpec("until", "select", "lasts until (C40)", "until"),),
    "of": (InputSpec("of", "select", "whose next turn (default: who applied it)", "of"),),
}
#: The least a number input takes where the command schema's bound is on a field inside the argument (C26: at
#: least one attacker and one defender).
_NESTED_MIN = {"situational.encircled.attackers": "1", "situational.encircled.defenders": "1"}
#: The choices of a free input that is a select, as (value, words), the first (its default) leaving the argument
#: out; then the values the command schema allows, in words, or (:data:`_COMBATANT_SELECTS`) the combatants.
_SELECTS: dict[str, tuple[tuple[str, str], ...]] = {
    "by": (("", "no one"),),
    "until": (("", "until cleared (or as the ruleset says)"), ("start_of_next_turn", "the start of a next turn"),
              ("end_of_next_turn", "the end of a next turn")),
    "of": (("", "who applied it"),),
}
#: The selects whose choices after the first are the combatants the seat sees, by name.
_COMBATANT_SELECTS = frozenset({"by", "of"})
#: Free inputs the table page asks for though the command takes them as optional: an undo's or a redo's reason,
#: which every seat sees (the command's own required fields come from the offer, ``FreeArg.required``).
_ASKED = {("undo", "reason"), ("redo", "reason")}
#: A free input's label where a command's differs from FREE_INPUTS': a cancelled action's reason is the GM's alone.
_LABELS = {("cancel_action", "reason"): "reason (the GM's)"}


def _schema_bounds() -> dict[tuple[str, str], tuple[str, str]]:
    """The bounds the command schema sets on each integer field (``ge``, ``le``), by command and field name."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    union = msgspec.inspect.type_info(Command)
    assert isinstance(union, msgspec.inspect.UnionType)
    for struct in union.types:
        if not isinstance(struct, msgspec.inspect.StructType):
            continue
        for f in struct.fields:
            kinds = f.type.types if isinstance(f.type, msgspec.inspect.UnionType) else (f.type,)
            for kind in kinds:
                if isinstance(kind, msgspec.inspect.IntType) and (kind.ge is not None or kind.le is not None):
                    found[str(struct.tag), f.name] = ("" if kind.ge is None else str(kind.ge),
                                                      "" if kind.le is None else str(kind.le))
    return found


#: The command schema's bounds of the forms' number inputs, by command and field (``("apply_condition", "stacks")``).
BOUNDS = _schema_bounds()
#: A cost the options say in terms of a field, said in words on the page.
COSTS: dict[str, str] = {"the effect's cost in Actions (action_cost)": "1 Action, or none, as the effect says"}
LOG_ENTRIES = 80  # the log shows the last LOG_ENTRIES entries (cards, notes, rounds) or seen events

_STATIC = files("omen_server") / "static"
_STATIC_TYPES = {"table.js": "text/javascript", "table.css": "text/css"}


def _env() -> jinja2.Environment:
    loader = jinja2.ChoiceLoader([jinja2.PackageLoader("omen_server", "templates"),
                                  jinja2.PackageLoader("omen_replay", "templates")])
    env = environment(loader)
    env.globals["title_of"] = lambda command: COMMAND_TITLES.get(command, command.replace("_", " "))
    # a card in words (the undo's preview, the log's data-said)
    env.globals["said"] = card_said
    return env


ENV = _env()


# -- what the templates get ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Face:
    """One die the page asks for when the faces are typed in: whose (the roller's id, and ``name`` as the table
    calls it), what for (``about``: in words, where the purpose does not say, C40), its pool and size."""

    roller: str
    purpose: str
    pool: str
    sides: int
    maybe: bool
    name: str = ""
    about: str = ""

    @property
    def words(self) -> str:
        """What the die is for, as the page says it: ``hit``, ``Burning damage``, ``RES save against Poisoned``."""
        return purpose_words(self.purpose, self.about)


@dataclass(frozen=True)
class ChoiceView:
    """One legal choice of an offer: its label, its arguments (JSON for the script), the dice it rolls."""

    label: str
    args: str
    rolls: str
    faces: tuple[Face, ...]
    pair: tuple[str, str, str] = ("", "", "")  # a condition to apply: on whom (id, name), which (two selects)
    said: str = ""  # what the choice does, where its label is a name alone (an ability's answer: its summary)
    each: str = ""  # every roll, where ``rolls`` counts them (more than ROLLS_SPELLED): opened on demand


@dataclass(frozen=True)
class FreeInput:
    """An argument left to the caller that the form takes."""

    name: str
    kind: str
    label: str
    path: str
    value: str
    required: bool
    min: str = ""  # the command schema's bounds of a number (``stacks`` >= 1), as the input's min and max
    max: str = ""
    options: tuple[tuple[str, str], ...] = ()  # a select's choices, (value, words), the first its default
    more: str = ""  # the folded group it sits in (InputSpec.more), "" for one always in view


@dataclass(frozen=True)
class OfferView:
    """A command this seat may give now, as a form: its key (an id), title, actor, rule, cost, choices, inputs."""

    key: str
    command: str
    actor: str | None
    actor_name: str
    rule: str
    cost: str
    note: str
    choices: tuple[ChoiceView, ...]
    free: tuple[FreeInput, ...]
    named: str = ""  # what it is by name where its title says too little: the abilities a use_ability offers
    button: str = ""  # its button's words where its title says too little ("Use Cinder Lash"), "" for the title's


@dataclass(frozen=True)
class Condition:
    """A condition on a combatant: its stacks, for one with a duration the ticks left and when it ticks, and for
    one lasting until a named combatant's next turn (C40) until when (``until``: "the end of Ana's next turn"), and
    what it does (``said``: the ruleset's definition in words, the chip's tooltip)."""

    name: str
    stacks: int
    remaining: int | None
    tick: str
    until: str = ""
    said: str = ""
    until_short: str = ""  # the same, for a phone's chip: "Ana's next turn ends"


@dataclass(frozen=True)
class StripItem:
    """One combatant in the initiative strip, as the seat may see it."""

    id: str
    name: str
    side: str
    initiative: int | None
    turn: bool
    surprise: str | None
    down: bool
    left: str | None
    hp: int | None
    max_hp: int | None
    band: str | None
    will: int | None
    will_max: int | None
    bonus_actions: int | None
    bonus_max: int
    actions: int | None
    movement: int | None
    in_hand: tuple[str, ...] | None
    conditions: tuple[Condition, ...]
    own: bool
    foe: bool
    hidden: bool
    note: str
    engaged: tuple[str, ...] = ()
    side_index: int = -1  # the GM's and a spectator's page: the side's place (the GM's: the players' sides first, then
    #                       as they joined; a spectator's: the sides of the chips it sees, as they joined); -1: none


@dataclass(frozen=True)
class AnswerView:
    """One answer of the open decision: its form's key, command, label, arguments, dice, numbers, shortcut."""

    key: str
    command: str
    actor: str | None
    actor_name: str
    label: str
    args: str
    rolls: str
    faces: tuple[Face, ...]
    facts: ChoiceFacts
    shortcut: str
    said: str = ""  # what the answer does, beside its label (an ability's answer: its summary, C38)
    free: tuple[FreeInput, ...] = ()  # the claims a reaction's strike takes (C26, C27; the GM's seat alone)


@dataclass(frozen=True)
class AbilityView:
    """One of the seat's own combatants' abilities (C37, C41): whose, its name, how it is used and what it costs,
    when it applies, its summary, the uses it has left (``None``: no limit), and the deferred costs its uses still
    owe (``owed``, each in words: "2 necrotic damage at the start of Kael Arden's next turn (C41)")."""

    who: str
    name: str
    use: str
    when: str
    summary: str
    left: int | None
    per: str
    owed: tuple[str, ...] = ()


@dataclass
class Panel:
    """Everything the table fragment shows one seat."""

    fight_id: str
    title: str
    seat: Seat
    head: tuple[int, str]
    phase: str
    round: int
    turn: str | None
    turn_name: str
    dice: str
    seed_revealed: bool
    seeded: bool
    ended: bool
    physical: list[str]  # the names of the combatants whose dice are physical now, as the seat sees them
    physical_ids: list[str]  # the GM's: those the settings name (a hidden one's dice are the seed's while hidden)
    physical_here: bool  # dice this seat gives are physical (the GM: any combatant's): every command is staged
    published: bool
    waiting: Any
    strip: list[StripItem]
    answers: list[AnswerView]
    decision: DecisionFacts
    commands: list[OfferView]
    gm_tools: list[OfferView]
    end_turn: OfferView | None = None
    staged: StagedView | None = None
    staged_faces: tuple[Face, ...] = ()
    staged_answer: str = ""  # the answer (its label) a command staged for dice gives the decision open now: not offered
    # again while it waits for dice
    staged_actor: str = ""  # the name of the combatant the staged command acts for, as this seat sees it
    staged_target: str = ""  # the name of the combatant it acts on (an attack's, an ability's target), if seen
    staged_cost: str = ""  # what the staged answer costs (its own cost, a pass's "free"), "" where it answers nothing
    staged_for: str = ""  # what the dice a staged answer waits for are, where they are not its actor's own
    staged_title: str = ""  # the staged command's own name where the seat may know it (an ability's: "Soulfire")
    top: StoryCard | None = None
    note: str = ""
    hidden_by_gm: list[str] = field(default_factory=list)
    ability_names: list[tuple[str, bool]] = field(default_factory=list)  # the GM's: each ability's name, and whether
    #                                                   every seat sees it (the settings' ``reveal_effects``, C37)
    waiting_who: list[str] = field(default_factory=list)
    yours: bool = False
    log: list[StoryCard] = field(default_factory=list)
    seats: list[SeatEntry] = field(default_factory=list)
    combatant_choices: list[tuple[str, str]] = field(default_factory=list)
    attributes: tuple[str, ...] = ATTRIBUTES
    damage_types: tuple[str, ...] = ()
    condition_names: tuple[str, ...] = ()
    turn_commands: list[OfferView] = field(default_factory=list)
    next_commands: list[OfferView] = field(default_factory=list)
    your_turn: bool = False
    status: str = ""
    announce: str = ""
    undo_preview: list[StoryCard] = field(default_factory=list)
    redo_preview: list[StoryCard] = field(default_factory=list)  # what a redo would bring back, oldest first
    top_folded: list[str] = field(default_factory=list)
    abilities: list[AbilityView] = field(default_factory=list)
    top_lines: list[str] = field(default_factory=list)
    top_gm_gave: list[str] = field(default_factory=list)  # its lines of the seat's commands the GM gave
    end_said: str = ""  # how the fight ended, in words, once it has (the fight bar keeps it on the first screen)
    staged_tie: list[str] = field(default_factory=list)  # those a staged command's roll-off is for (C19), all seen
    tie_rolled: bool = False  # the staged roll-off's tie is rolled (else: only possible, their faces not all in)
    not_offered: list[str] = field(default_factory=list)  # why an Active Defense is not offered (C9), to its owner
    top_not_offered: list[str] = field(default_factory=list)  # the triggered abilities the top card's action did not
    # offer to the seat's own combatants, and why (C38)
    hp_display: str = "banded"  # what the players' and spectators' seats see of the HP of combatants not theirs
    round_end: bool = False  # the round's last turn is over and abilities answer its end (C38): no one's turn


def _name(names: Mapping[str, str], value: Any) -> str:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_name(names, v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k} {_name(names, v)}" for k, v in value.items() if v not in ([], {}, None, ""))
    return str(value)


_ANSWER_LABELS: dict[str, Any] = {
    "answer_active_defense": lambda a: (f"Parry with {a['weapon']}" if a.get("defense") == "parry" and a.get("weapon")
                                        else f"Block with {a.get('shield') or 'the shield'}"
                                        if a.get("defense") == "block"
                                        else str(a.get("defense") or "decline").capitalize()),
    "react": lambda a: f"Strike with {a['weapon']}" if a.get("weapon") else "Strike unarmed",
    "pass_reaction": lambda a: "Let it pass",
    "answer_catch": lambda a: "Catch it" if a.get("catch") else "Let it hit",
    "choose_will_conversion": lambda a: "Take it on Will" if a.get("convert") else "Take it on HP",
    "route_damage": lambda a: f"Route die {a['die'] + 1}" if isinstance(a.get("die"), int) else "Keep the primary dice",
    "answer_decision": lambda a: str(a.get("choice", "")).capitalize(),
}


def _check_said(check: Any, names: Mapping[str, str]) -> str:
    """A check as a choice says it: ``Kael Arden's Athletics`` (a skill) or ``Kael Arden's STR`` (an attribute)."""
    if not isinstance(check, dict):
        return str(check)
    what = check.get("skill") or check.get("attribute") or "check"
    return f"{_name(names, check.get('who'))}'s {what}"


_END_REASONS = {"yielded": "yield", "fled": "flee", "defeated": "are defeated", "dead": "are dead"}
_LEFT = {"fled": "flees", "yielded": "yields", "dead": "is dead", "captured": "is captured"}

#: Choices in words, by command (what the choice does, never an id): ``args`` and the names the seat sees.
_CHOICE_WORDS: dict[str, Any] = {
    "declare_attack": lambda a, n: (f"{_name(n, a.get('target'))} with {a['weapon']}" if a.get("weapon")
                                    else f"{_name(n, a.get('target'))}, unarmed"),
    "static_check": lambda a, n: _check_said(a.get("check"), n),
    "contest": lambda a, n: (f"{_check_said(a.get('initiator'), n)} against "
                             f"{_check_said(a.get('defender'), n)}"),
    "engage": lambda a, n: (f"{_name(n, a.get('who'))} is no longer engaged with {_name(n, a.get('others'))}"
                            if a.get("engaged") is False
                            else f"{_name(n, a.get('who'))} engages {_name(n, a.get('others'))}"),
    "apply_condition": lambda a, n: f"{a.get('condition')} on {_name(n, a.get('who'))}",
    "clear_condition": lambda a, n: f"{a.get('condition')} off {_name(n, a.get('who'))}",
    "leave_fight": lambda a, n: f"{_name(n, a.get('who'))} {_LEFT.get(str(a.get('reason')), a.get('reason'))}",
    "end_fight": lambda a, n: (f"the {a['side']} {_END_REASONS.get(str(a.get('reason')), a.get('reason'))}"
                               if a.get("side") else "as it stands (no side yields)"),
    "draw": lambda a, n: f"draw {a.get('weapon') or a.get('item') or 'a weapon'}",
    "begin_ambush": lambda a, n: (f"{_name(n, a['ambushers'])} ambush {_name(n, a['defenders'])}" + (
        f" (Ambush Difficulty {a['difficulty']})" if a.get("difficulty") is not None
        else f" (they waited {str(a['time_waited']).replace('_', ' ')})" if a.get("time_waited") else "")),
    "move": lambda a, n: (f"out of {_reach(n, a['leaves'])} (an Attack of Opportunity may follow from "
                          f"{'each enemy among them' if len(a['leaves']) > 1 else 'an enemy'} able to act, with a "
                          "Bonus Action, who has had a turn, unless the mover disengaged: C20, C22, C23)"
                          if a.get("leaves") else "leaving no one's reach"),
}


def _reach(names: Mapping[str, str], leaves: Sequence[str]) -> str:
    """Whose reach a move leaves: ``Grukk's reach``, or of several, ``the reach of Grukk and Snikt`` (it read
    "Grukk, Snikt's reach")."""
    said = [_name(names, who) for who in leaves]
    if len(said) == 1:
        return f"{said[0]}'s reach"
    return f"the reach of {', '.join(said[:-1])} and {said[-1]}"


def _decision_label(opened: DecisionOpened | None, choice: str, ability: str = "") -> tuple[str, str]:
    """An answer to a decision point (an extension's or an ability's, C38) as its button says it, and what it does
    beside it: using an ability (``ability``: its name, the decision being that ability's), ``Use Riposte``, its
    summary beside; any other choice, its label as the open ``decision_opened`` records it (``Pass: let it be``)."""
    labels = dict(zip(opened.choices, opened.labels, strict=False)) if opened is not None else {}
    if ability and choice == USE:
        return f"Use {ability}", labels.get(choice, "")
    return (f"{choice.capitalize()}: {labels[choice]}" if labels.get(choice) else choice.capitalize()), ""


def _label(command: str, actor_field: str | None, args: dict[str, Any], names: dict[str, str]) -> str:
    """A choice as the button or option says it: ``Vesh the Cinder-Hand, weapon knife``; an answer to a decision
    as its button says it (``Dodge``, ``Parry with longsword``, ``Decline``, ``Strike with knife``)."""
    if command in _ANSWER_LABELS:
        return str(_ANSWER_LABELS[command](args))
    if command in _CHOICE_WORDS:
        try:
            return str(_CHOICE_WORDS[command](args, names))
        except (KeyError, TypeError):  # a shape the words do not know: say its fields instead
            pass
    parts = []
    for key, value in args.items():
        if key == actor_field or value in (None, "", [], {}):
            continue
        if key in {"target", "who", "saver", "defender", "attacker", "caller"}:
            parts.append(_name(names, value))
        elif key in {"defense", "condition", "reason"} and isinstance(value, str):
            parts.append(value.replace("_", " "))
        else:
            parts.append(f"{key.replace('_', ' ')} {_name(names, value)}")
    if parts:
        return ", ".join(parts)
    return {"answer_active_defense": "decline", "react": "react", "answer_catch": "let it fall",
            "roll_off": "roll off"}.get(command, "go")


def _abouts(rolls: Sequence[Any], names: Mapping[str, str], saver: str | None = None) -> list[str]:
    """What each of some rolls is about, in words (its ``about``), the die opposing a save said as such: of a save's
    two rolls (C29: the saver's first; or ``saver`` where it is known, :func:`_saver`), the other's is ``die against
    Grulk's save`` (it read "Mira's save", as if the caster saved: a tester)."""
    savers = [r.roller for r in rolls if r.purpose == "save" and not r.about]
    saver = saver or (savers[0] if len(savers) > 1 else None)
    return [r.about or (f"die against {names.get(saver, 'someone')}'s save"
                        if saver is not None and r.purpose == "save" and r.roller != saver else "") for r in rolls]


def _rolls(rolls: Sequence[DiceRoll], names: dict[str, str]) -> str:
    return "; ".join(f"{names.get(r.roller, r.roller)}'s {purpose_words(r.purpose, about)}: "
                     + " + ".join(f"d{d.sides} ({d.pool})" for d in r.dice)
                     for r, about in zip(rolls, _abouts(rolls, names), strict=True))


def _ability_label(args: dict[str, Any], names: dict[str, str], abilities: Mapping[str, str],
                   others: bool = False) -> str:
    """An ability used on one's turn as its button says it: ``Healing Word on Brin``; on oneself, where it is
    offered on others too (``others``), ``Healing Word on Ana Thorne (self)`` (its name alone read as the default,
    and a player healed her own full HP by mistake: a GM tester); an ability used on oneself alone: its name."""
    name = abilities.get(str(args.get("ability")), str(args.get("ability")))
    target = args.get("target")
    if target is None or (target == args.get("who") and not others):
        return name
    return f"{name} on {_name(names, target)}{' (self)' if target == args.get('who') else ''}"


def _on_others(offer: Offer, args: dict[str, Any]) -> bool:
    """Whether the ability of a choice to use one (``args``) is offered on another combatant too."""
    return any(c.args.get("ability") == args.get("ability") and c.args.get("target") not in (None, c.args.get("who"))
               for c in offer.choices)


def _choice(offer: Offer, choice: Choice, actor_field: str | None, names: dict[str, str],
            opened: DecisionOpened | None = None, abilities: Mapping[str, str] | None = None,
            gear: Mapping[tuple[str, str], str] | None = None, gm: bool = True, seeded: bool = False) -> ChoiceView:
    faces = tuple(Face(r.roller, r.purpose, d.pool, d.sides, maybe, _name(names, r.roller), about)
                  for rolls, maybe in ((choice.dice, False), (choice.may_roll, True))
                  for r, about in zip(rolls, _abouts(rolls, names), strict=True) for d in r.dice)
    said = _rolls(choice.dice, names)
    if choice.may_roll:
        said += ("; " if said else "") + "then perhaps " + _rolls(choice.may_roll, names)
    each = ""
    if len(choice.dice) + len(choice.may_roll) > ROLLS_SPELLED:  # 22 combatants' initiative and 11 roll-offs made a
        # paragraph above the button (a large-battle GM tester): counted, the list a tap away
        each, said = said, (f"{len(choice.dice)} rolls" if choice.dice else "") + (
            f"{', then perhaps ' if choice.dice else 'perhaps '}{len(choice.may_roll)} more" if choice.may_roll
            else "")
    if offer.command in DICE_UNSAID and not gm and seeded:  # a player's options list none (omen_core.seats)
        said = ("the server rolls its dice from the fight's seed (the GM may make them physical: then the roll "
                "box asks for them as they come)")
    elif offer.command in DICE_UNSAID and not gm:
        said = ("its dice when they are rolled, each seat asked for its own in the roll box: a window may come first "
                "(an Interrupt, C24, or an ability's decision, C38)")
    elif offer.command == "declare_attack" and not said:  # an Interrupt window comes first (C24): no die rolls now
        said = ("nothing yet: a window comes first (an Interrupt, C24, or an ability's decision, C38), and the "
                "attack's dice are rolled by the command that closes it (in a seeded fight, from the seed)")
    said_too = ""
    if offer.command == "answer_decision":
        decision = str(choice.args.get("decision", ""))
        label, said_too = _decision_label(opened, str(choice.args.get("choice", "")),
                                          (abilities or {}).get(decision, "") if opened is not None
                                          and opened.decision == decision else "")
    else:
        label = (_ability_label(choice.args, names, abilities or {}, _on_others(offer, choice.args))
                 if offer.command == "use_ability"
                 else _label(offer.command, actor_field, _gear_named(choice.args, offer.actor, gear or {}), names))
    if offer.command == "declare_attack":
        label += _options_said(choice.args, offer.actor, gear or {})
    pair = (str(choice.args.get("who", "")), _name(names, choice.args.get("who")),
            str(choice.args.get("condition", ""))) if offer.command == "apply_condition" else ("", "", "")
    return ChoiceView(label=label,
                      args=json.dumps(choice.args, separators=(",", ":")), rolls=said, faces=faces, pair=pair,
                      said=said_too, each=each)


#: The most rolls a choice's "Rolls:" line spells out; past it, the line counts them and lists each on demand.
ROLLS_SPELLED = 6


def _gear_named(args: dict[str, Any], actor: str | None, gear: Mapping[tuple[str, str], str]) -> dict[str, Any]:
    """A choice's arguments as its label says them: the actor's weapon (or item) by the name its sheet gives it,
    not its id (the actor's own gear: a seat is offered only its own combatants' choices)."""
    named = {key: gear.get((actor or "", value), value) for key, value in args.items()
             if key in ("weapon", "item") and isinstance(value, str)}
    if args.get("defense") == "block" and (actor or "", "option:shield") in gear:  # a Block names the shield (C9)
        named["shield"] = gear[(actor or "", "option:shield")]
    return {**args, **named} if named else args


#: An attack option (an argument of ``declare_attack`` an ability gives meaning to) as a choice says it, before the
#: name of the ability that gives it: ``Kael Arden with Spiked maul, raging (Brute Rage)``.
_OPTION_WORDS = {"rage": "raging"}


def _options_said(args: dict[str, Any], actor: str | None, gear: Mapping[tuple[str, str], str]) -> str:
    """The attack options a choice sets, in words (C12: Brute Rage's ``rage``), each with the name of the actor's
    ability that gives it (``gear`` holds it under ``(actor, "option:rage")``)."""
    said = ""
    for option in ATTACK_OPTION_FIELDS:
        if args.get(option):
            ability = gear.get((actor or "", f"option:{option}"))
            said += f", {_OPTION_WORDS.get(option, option.replace('_', ' '))}" + (f" ({ability})" if ability else "")
    return said


def _distinct(choices: tuple[ChoiceView, ...], offer: Offer, names: dict[str, str]) -> tuple[ChoiceView, ...]:
    """The choices with every label told apart: two that read the same add the arguments they differ by (a choice's
    words must say what makes it another choice)."""
    by_label: dict[str, list[int]] = {}
    for i, view in enumerate(choices):
        by_label.setdefault(view.label, []).append(i)
    out = list(choices)
    for same in (ix for ix in by_label.values() if len(ix) > 1):
        args = [offer.choices[i].args for i in same]
        keys = sorted({k for a in args for k in a if any(a.get(k) != b.get(k) for b in args)})
        for i, a in zip(same, args, strict=True):
            extra = [f"{k.replace('_', ' ')} {_name(names, a[k]) if not isinstance(a[k], dict) else json.dumps(a[k])}"
                     for k in keys if k in a]
            if extra:
                out[i] = dataclasses.replace(choices[i], label=f"{choices[i].label} ({', '.join(extra)})")
    return tuple(out)


def _offer_view(offer: Offer, index: int, names: dict[str, str], opened: DecisionOpened | None = None,
                abilities: Mapping[str, str] | None = None,
                gear: Mapping[tuple[str, str], str] | None = None, gm: bool = True, seeded: bool = False) -> OfferView:
    from .views import PLAYER_COMMANDS

    actor_field = PLAYER_COMMANDS.get(offer.command) or ("caller" if offer.command == "call_save" else None)
    if offer.command == "call_save":  # the effect comes from the form's editor: one choice per saver, its name
        savers: dict[str, Choice] = {}
        for c in offer.choices:
            savers.setdefault(str(c.args.get("saver")), msgspec.structs.replace(
                c, args={k: v for k, v in c.args.items() if k != "effect"}))
        offer = msgspec.structs.replace(offer, choices=tuple(savers.values()))
    choices = _distinct(tuple(_choice(offer, c, actor_field, names, opened, abilities, gear, gm, seeded)
                              for c in offer.choices),
                        offer, names) or (ChoiceView(label="go", args="{}", rolls="", faces=()),)
    first = offer.choices[0].args if offer.choices else {}
    free = tuple(FreeInput(name=spec.id, kind=spec.kind,
                           label=_LABELS.get((offer.command, a.name), spec.label) if spec.id == a.name else spec.label,
                           path=spec.path, value=str(first.get(a.name, "")) if a.name == "difficulty" else "",
                           required=a.required or (offer.command, a.name) in _ASKED,
                           min=BOUNDS.get((offer.command, a.name), ("", ""))[0] or _NESTED_MIN.get(spec.path, ""),
                           max=BOUNDS.get((offer.command, a.name), ("", ""))[1], options=_select_options(a.name, names),
                           more=spec.more)
                 for a in offer.free for spec in FREE_INPUTS.get(a.name, ()))
    return OfferView(key=f"o-{offer.command}-{offer.actor or 'gm'}" + (f"-{index}" if index else ""),
                     command=offer.command,
                     actor=offer.actor, actor_name=names.get(offer.actor or "", "the GM"), rule=offer.rule,
                     cost=COSTS.get(offer.cost, offer.cost), note=_note_named(offer.note, names), choices=choices,
                     free=free, named=_ability_names(offer, abilities or {}),
                     button=_ability_button(offer, choices, abilities or {}))


#: Where the page gives a command the forms cannot: a choice the page does not list.
_ELSEWHERE = "give the command with omen do or over HTTP"

#: An offer's note as the API says it (``omen_core.options``, for a client that fills the arguments itself), and as
#: the page's form says it: in words, no argument's name in backticks, and nothing the form cannot do (the GM's
#: Engage read "`others` may name several combatants at once" over a select of one pair each: a GM tester).
_PAGE_NOTES: tuple[tuple[str, str], ...] = (
    (r"each pair once, either way round the same engagement; `others` may name several combatants at once",
     "each pair is listed once: either way round, it is the same engagement"),
    (r"each combatant's pairs list at most (\d+) others: any pair may be named \(the rules check it when given\)",
     rf"each combatant's pairs list at most \1 others (those engaged first, then foes, then allies): to name "
     rf"another pair, {_ELSEWHERE}"),
    (r"ambushers and defenders: any of the combatants shown, on opposing sides",
     f"each choice has one side ambush all the others: for fewer, {_ELSEWHERE}"),
    (r"initiator and defender roll any skill or attribute their sheets allow \(as for static_check\)",
     f"the choices here contest one skill: for another skill or an attribute, {_ELSEWHERE}"),
    (r": a save ends it \(C40\), listed with each `by` it may take",
     ": a save ends it (C40), opposed by whoever applied it: choose them under \u201capplied by\u201d"),
    (r"not listed: name any \(the rules check it when given\)",
     f"not in these lists (those engaged first, then foes, then allies): to name one, {_ELSEWHERE}"),
)


def _note_named(note: str, names: Mapping[str, str]) -> str:
    """An offer's note as the page says it (:data:`_PAGE_NOTES`): an action called off by its card's number and
    whose it is by name ("calls off #84 (attack declared by Vesh the Cinder-Hand)": it said "action 84" and the id, a
    GM tester); the combatants a list leaves out, with where they may be named (the page's lists hold those listed
    alone: it said "name any", with no field to name one in: a GM tester's 22 combatants); any argument still
    named in backticks in words (``static_check`` as "static check")."""
    named = re.sub(r"\baction (\d+) \(([^()]*?) by ([^()\s]+)", lambda m: f"#{m.group(1)} ({m.group(2)} by "
                   f"{names.get(m.group(3), m.group(3))}", note)
    for api, page in _PAGE_NOTES:
        named = re.sub(api, page, named)
    return re.sub(r"`([^`]*)`", lambda m: m.group(1).replace("_", " "), named)


def _ability_names(offer: Offer, abilities: Mapping[str, str]) -> str:
    """The abilities a ``use_ability`` offer offers, by name (the GM's list of what a combatant may do now said
    "Ability · Ability": found by a tester); "" for any other offer."""
    return ", ".join(n for n in _offered_names(offer, abilities) if n)


def _offered_names(offer: Offer, abilities: Mapping[str, str]) -> list[str]:
    """The names of the abilities a ``use_ability`` offer's choices use, each once, in order ("" for one unnamed);
    none for any other offer."""
    if offer.command != "use_ability":
        return []
    return list(dict.fromkeys(abilities.get(str(c.args.get("ability")), "") for c in offer.choices))


def _ability_button(offer: Offer, choices: Sequence[ChoiceView], abilities: Mapping[str, str]) -> str:
    """A ``use_ability`` form's button, by what it uses: its one choice ("Use Cinder Lash on Skarn Gutterjaw"),
    "Use Cinder Lash" where its choices are all one ability's, "Use the ability chosen" where they are several's
    (two forms, one per cost, each read "Ability": a GM tester could not tell them apart); "" for any other offer."""
    if offer.command != "use_ability":
        return ""
    if len(choices) == 1:
        return f"Use {choices[0].label}"
    named = _offered_names(offer, abilities)
    return f"Use {named[0]}" if len(named) == 1 and named[0] else "Use the ability chosen"


def _select_options(name: str, names: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A free input's choices if it is a select (:data:`_SELECTS`): its default, which leaves the argument out,
    then its values; a combatant by its name (every combatant the seat sees), never asked to be typed as an id."""
    first = _SELECTS.get(name) or ()
    return (*first, *names.items()) if name in _COMBATANT_SELECTS else first


def _repeat(offers: list[Offer], n: int) -> int:
    """How many offers before the ``n``-th have its command and actor: 0 for the first (its form's id is
    ``o-{command}-{actor}``, the same at every head, so that what was typed or chosen in it and the focus survive a
    refresh, WCAG 3.2.2), 1 for a second (``-1`` after it)."""
    me = offers[n]
    return sum(1 for o in offers[:n] if (o.command, o.actor) == (me.command, me.actor))


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else f"\u2212{-n}"


#: What the engine itself does for a condition (the clarifications), said before the ruleset's numbers.
_HELPLESS = ("rolls no base defense die (base defense = Defense Rating), no Active Defense; a crit against it "
             "compares with its RES bonus alone; no action, reaction or ability use (no move, draw, Disengage or "
             "check either, C36); its turn comes, and it may only end it")
ENGINE_SAYS = {
    "Dying": "at 0 HP (C36): treated as Incapacitated (C10): takes no turn (it is skipped), no action, reaction or "
             "ability use; rolls no base defense die; can still be attacked",
    "Incapacitated": f"C10: {_HELPLESS}",
    "Paralysed": f"C10: {_HELPLESS}",
    "Prone": "C27: attacked at +4 to hit in melee, at \u22122 at range; cannot Dodge (C9)",
    "Unseen": "C27: its attack rolls an extra FCS die, and then it is no longer Unseen; hidden from the players' "
              "pages while Unseen",
}
#: The conditions whose every effect the engine applies (ENGINE_SAYS and the ruleset's numbers say them all): no
#: "applied by the GM". Exhausted and Fatigued's numbers (C28) are applied too; what more the Conditions chapter
#: gives them (not available to the engine) is the GM's.
_ENGINE_WHOLE = frozenset({"Dying", "Incapacitated", "Paralysed", "Prone", "Unseen"})


def condition_said(d: ConditionDef, condition: str = "") -> str:
    """What a condition of the ruleset does, in words (C28, C40): what the engine does for it (C10, C36), its
    modifiers, stacks, ticks, damage, the save that ends it and what clears it; a placeholder's other effects are
    the GM's to apply."""
    parts = [ENGINE_SAYS[condition]] if condition in ENGINE_SAYS else []
    if d.attribute_bonus:
        parts.append(f"{_signed(d.attribute_bonus)} to every attribute bonus" + (" per stack" if d.max_stacks > 1
                                                                                  else ""))
    for name in ("hit", "defense", "damage"):
        value = getattr(d.modifiers, name)
        if value:
            parts.append(f"{_signed(value)} to {name}")
    if d.max_stacks > 1:
        parts.append(f"stacks up to {d.max_stacks}")
    if d.damage is not None:
        dice = f"{d.damage.dice.count}{d.damage.dice.die}" if d.damage.dice is not None else ""
        amount = " + ".join(x for x in (dice, str(d.damage.flat) if d.damage.flat else "") if x) or "0"
        parts.append(f"deals {amount} {d.damage.damage_type} at each {d.tick.replace('_', ' ')}"
                     + (" per stack" if d.damage.per_stack else ""))
    if d.duration is not None:
        parts.append(f"lasts {d.duration} {'tick' if d.duration == 1 else 'ticks'} ({d.tick.replace('_', ' ')})")
    if d.save_ends is not None:
        parts.append(f"ends on a {d.save_ends.save} save against the {d.save_ends.against} of whoever applied it "
                     f"({d.save_ends.timing.replace('_', ' ')}; C15, C40)")
    if d.cleared_by:
        parts.append("cleared by " + " or ".join(d.cleared_by))
    if d.placeholder and condition not in _ENGINE_WHOLE:
        parts.append("its numbers are placeholders (C28): any other effect the rules give it is the GM's to apply")
    return "; ".join(parts)


def _conditions(v: CombatantView, ticks: Mapping[str, str], until: Mapping[str, str],
                said: Mapping[str, str]) -> tuple[Condition, ...]:
    return tuple(Condition(name, stacks, v.remaining.get(name), ticks.get(name, "never").replace("_", " "),
                           until.get(name, ""), said.get(name, ""), _until_short(until.get(name, "")))
                 for name, stacks in v.conditions.items())  # in the order they were applied (C40), as omen status


def _until_short(until: str) -> str:
    """``the end of Ana's next turn`` as a phone's chip says it: ``Ana's next turn ends`` (the chip took five lines
    at 390 px: a tester); "" for none."""
    for lead, verb in (("the start of ", "starts"), ("the end of ", "ends")):
        if until.startswith(lead):
            return f"{until.removeprefix(lead)} {verb}"
    return until


def _until(state: FightState, sight: Sight, who: str) -> dict[str, str]:
    """Until when each of ``who``'s conditions lasts that lasts until a named combatant's next turn (C40), as the
    seat may see it: the named one by its name, or "another combatant" for one the seat does not see; once that
    next turn has begun, its "current turn" (it read "next turn" all through the turn whose end cleared it: a
    tester)."""
    return {condition: u.said(state.combatants[u.of].sheet.name if u.of in state.combatants else "another combatant")
            for condition, u in seen_lasting(state.lasting(who), sight).items()}


def _strip(state: FightState, sight: Sight, views: tuple[CombatantView, ...], budgets: dict[str, Any],
           notes: dict[str, str], ended: bool = False) -> list[StripItem]:
    """The combatants in initiative order (those not in it after, in join order), as the seat may see them (no
    one's turn once the fight has ended)."""
    seen = {v.id: v for v in views}
    order = [w for w in state.order if w in seen] + [w for w in seen if w not in state.order]
    assert state.ruleset is not None
    ticks = {name: rule.tick for name, rule in state.ruleset.conditions.items()}
    said = {name: condition_said(rule, name) for name, rule in state.ruleset.conditions.items()}
    sides = {state.combatants[w].side for w in sight.own if w in state.combatants}
    gear = _gear_of(state)  # what is in hand, by its sheet's name (in_hand is the owner's and the GM's alone)
    items = []
    for who in order:
        v = seen[who]
        tier = state.surprise.get(who)
        budget = budgets.get(who)
        mine = sight.owns(who)
        items.append(StripItem(
            id=who, name=v.name, side=v.side, initiative=state.initiative.get(who), turn=v.turn and not ended,
            # a surprise tier (C18) in words, until round 1 is over: its −5 is initiative's, a lost turn round 1's
            # (the badge stood all fight, read as a condition still in force: a GM tester)
            surprise=TIER_WORDS.get(str(tier), str(tier)).lower() if tier and state.round <= 1 and not ended else None,
            down=(v.hp is not None and v.hp <= 0) or v.hp_band == "down", left=v.left, hp=v.hp, max_hp=v.max_hp,
            band=v.hp_band, will=v.will, will_max=state.combatants[who].sheet.will if mine else None,
            bonus_actions=v.bonus_actions, bonus_max=state.ruleset.economy.bonus_actions,
            actions=budget.actions if budget is not None and budget.turn else None,
            movement=budget.movement if budget is not None and budget.turn else None,
            in_hand=None if v.in_hand is None else tuple(gear.get((who, item), item) for item in v.in_hand),
            conditions=_conditions(v, ticks, _until(state, sight, who), said), own=v.own,
            foe=bool(sides) and v.side not in sides, hidden=v.hidden,
            note=notes.get(who, "") if sight.gm else "",
            engaged=tuple(seen[w].name for w in state.engaged_with(who) if w in seen)))
    return items


def _answer_views(answers: list[OfferView], offers: list[Offer], facts: DecisionFacts) -> list[AnswerView]:
    """The open decision's answers, one button each, numbered for the keyboard (1, 2, ...; decline and pass
    last)."""
    out: list[AnswerView] = []
    for view, offer in zip(answers, offers, strict=True):
        for i, choice in enumerate(view.choices):
            out.append(AnswerView(key=f"{view.key}-a{i}", command=view.command, actor=view.actor,
                                  actor_name=view.actor_name, label=choice.label, args=choice.args, rolls=choice.rolls,
                                  faces=choice.faces,
                                  facts=facts.choices.get((offer.command, offer.actor, i), ChoiceFacts()),
                                  shortcut="", said=choice.said, free=_folded(view.free)))
    quiet = {"Decline", "Let it pass", "Let it hit", "Take it on HP", "Keep the primary dice", "go"}
    out.sort(key=lambda a: a.label in quiet)
    return [AnswerView(**{**a.__dict__, "shortcut": str(n + 1) if n < 9 else ""}) for n, a in enumerate(out)]


def _folded(free: tuple[FreeInput, ...]) -> tuple[FreeInput, ...]:
    """A decision's answer's inputs, all folded under "Also:" (a reaction's strike: the high ground with Encircled,
    C26, C27): the answer's big button and its numbers keep the box's first screen."""
    return tuple(dataclasses.replace(f, more=f.more or "the high ground") for f in free)


def _not_offered(state: FightState, waiting: Any, sight: Sight) -> list[str]:
    """Why the open Active Defense window offers no Dodge, Parry or Block (C9, C27: "a prone defender cannot
    Dodge"), as its event records it: the defender's own (the field is its owner's and the GM's to see)."""
    frame = state.pending
    window = getattr(frame, "window", None) if waiting is not None and waiting.kind == "active_defense" else None
    if window is None or not (sight.gm or sight.owns(window.defender)):
        return []
    return list(window.ineligible)


#: The events that declare an action (its id: :func:`omen_replay.explain.passed_over`).
_DECLARES = frozenset({"attack_declared", "save_called", "movement_declared", "ability_used", "moment_reached"})


def _passed_over_said(fights: Fights, fight_id: str, state: FightState, sight: Sight, top: StoryCard | None,
                      seen: list[SeenEvent], names: Mapping[str, str]) -> list[str]:
    """The triggered abilities the top card's action did not offer to the seat's own combatants (the GM's: any),
    and why (C38: its ``when``, its uses, Bonus Actions before the first turn, what it could change; unable to act
    or pay), as ``omen explain`` says them (:func:`omen_replay.explain.passed_over`), by name ("Riposte to Vesh the
    Cinder-Hand: ..."). Only of an action the seat has a card of (its declaration shown to it: an action a hidden
    combatant takes part in is withheld whole, and has none), and only what its own sheets and what it is shown
    decide; nothing is said of another seat's combatants (their sheets are not this seat's to read). A tester's
    player was not told why Riposte was not offered before its owner's first turn (C20); nor why no Interrupt was
    (C24: "Interrupt to Kael Arden: Kael Arden's first turn has not come yet: ...")."""
    if top is None or top.kind != "action" or top.struck:
        return []
    seqs = set(top.seqs)
    declared = [e.seq for e in seen if e.seq in seqs and e.type in _DECLARES and e.event is not None]
    declared += [e.seq for e in seen if e.type == "attack_declared" and e.event is not None and e.seq not in declared
                 and e.event.get("reacting_to") in declared]  # the reactions it tells (an Interrupt, C24)
    if not declared:
        return []
    actors = {str(e.event.get(k)) for e in seen if e.seq in declared and e.event is not None
              for k in ("attacker", "caller", "who") if e.event.get(k)}
    near = {w for actor in actors if actor in state.combatants for w in state.engaged_with(actor)}
    if not any(c.sheet.abilities or c.sheet.shorthand_abilities() or who in near
               for who, c in state.combatants.items() if sight.owns(who)):
        return []  # (no ability to pass over, no Interrupt its own could have been given: no walk of the log)
    said: list[str] = []
    for seq in declared:  # the card's action and a reaction it tells (an Interrupt's hit on the seat's combatant:
        # its Second Wind passed over at full HP went unsaid, a tester)
        try:
            passed = passed_over(StoreSource(fights.store, fight_id), seq, sight.owns)
        except OmenError:  # a log the walk refuses (the state and options say so): the card goes without these
            return []
        said += [line for p in passed if (line := f"{p.ability} to {names.get(p.who, p.who)}: "
                                                  f"{_ids_named(p.why, names)}") not in said]
    return said


def _ids_named(text: str, names: Mapping[str, str]) -> str:
    """The engine's words with the combatants' ids where they name one (``'kael' cannot pay``, ``kael's first
    turn``, ``kael is Paralysed``, ``kael has no use``) said by name, as the page names them everywhere."""
    if not names:
        return text
    ids = "|".join(re.escape(i) for i in sorted(names, key=len, reverse=True))
    return re.sub(rf"'({ids})'|(?<![\w'-])({ids})(?='s\b| is\b| has\b| was\b)",
                  lambda m: names[m.group(1) or m.group(2)], text)


def _side_order(state: FightState, played: Iterable[str]) -> dict[str, int]:
    """The fight's sides in the order the GM's strip colours them: the sides the players' seats play first, then the
    others, each in the order its first combatant joined."""
    joined = list(dict.fromkeys(c.side for c in state.combatants.values()))
    first = {state.combatants[w].side for w in played if w in state.combatants}
    return {side: i for i, side in enumerate(sorted(joined, key=lambda side: side not in first))}


def _foes_first(offer: Offer, state: FightState) -> Offer:
    """An attack's choices with the actor's foes first (the default target is an enemy able to fight: one engaged
    with the actor before the others, those down at 0 HP, Dying, after them), allies last."""
    if offer.actor is None or offer.actor not in state.combatants or offer.command not in (
            "declare_attack", "call_save", "react"):
        return offer
    side = state.combatants[offer.actor].side
    field_name = "target" if offer.command == "declare_attack" else "saver"

    near = set(state.engaged_with(offer.actor))

    def rank(choice: Choice) -> tuple[bool, bool, bool]:
        other = choice.args.get(field_name)
        them = state.combatants.get(other) if isinstance(other, str) else None
        ally = them is not None and them.side == side
        down = them is not None and them.down  # a Dying foe at 0 HP last of the foes (C36)
        return ally, down, other not in near
    return msgspec.structs.replace(offer, choices=tuple(sorted(offer.choices, key=rank)))


_USES = {"passive": "always on", "trigger": "when it triggers", "action": "an Action, on your turn",
         "bonus_action": "a Bonus Action, on your turn", "free": "free, on your turn"}


def _ability_cost(ability: Ability) -> str:
    """How an ability is used and what it costs; a triggered one, when it is offered ("when its attack hits": it
    said "when it triggers", and only the author's summary told the table when: a GM tester)."""
    c = ability.cost
    paid = [f"{n} {what}" for n, what in ((c.actions, "Action"), (c.movement, "Movement Action"),
                                           (c.bonus_actions, "Bonus Action"), (c.hp, "HP"), (c.will, "Will")) if n]
    use = trigger_words(ability.trigger) if ability.use == "trigger" and ability.trigger is not None \
        else "passive: it applies by itself" if ability.use == "passive" and when_words(ability.when) \
        else _USES[ability.use]  # (a passive with conditions read "always on; only with: declared with rage")
    later = f"; then {deferred_words(ability.deferred)}" if ability.deferred is not None else ""
    # (the use form said the deferred cost, the list not, and a player chose without it: a GM tester)
    return use + (f"; costs {', '.join(paid)}" if paid else "") + later


def _abilities_of(state: FightState, who: str) -> list[Ability]:
    """A combatant's abilities: those its sheet lists, written out or shipped, and those its shorthand stands for."""
    sheet = state.combatants[who].sheet
    keys = {a if isinstance(a, str) else a.id for a in sheet.abilities}
    mine = [a for a in state.abilities if a.id in keys]
    return mine + [a for a in sheet.shorthand_abilities() if a not in mine]


def _gear_of(state: FightState) -> dict[tuple[str, str], str]:
    """Every combatant's weapons and shield by the names their sheets give them, keyed by (combatant, id), and the
    shield by (combatant, :data:`~omen_server.story.SHIELD`) too: what a story line calls them (a seat is given only
    its own combatants')."""
    found = {(who, w.id): w.name for who, c in state.combatants.items() for w in c.sheet.weapons if w.name}
    found |= {(who, key): shield.name for who, c in state.combatants.items()
              if (shield := c.sheet.shield) is not None and shield.name for key in (shield.id, SHIELD)}
    return found


def _published(seen: SeenEvent, stored: StoredEvent) -> SeenEvent:
    """An event as a seat's card tells it once the GM published the log, which every seat may then read whole: a
    revealed seed is said with the seed itself (the card said "The seed is revealed" without it, while the log
    a player could download held it: found by a tester). Every other field stays as the seat's view has it."""
    event = stored.event
    if seen.event is None or not isinstance(event, SeedRevealed):
        return seen
    return msgspec.structs.replace(seen, event={**seen.event, "seed": event.seed})


def own_abilities(state: FightState, sight: Sight) -> list[AbilityView]:
    """The abilities of a player's own combatants, written out or shipped (C37), with their uses left and the
    deferred costs they owe (C41: said in the log's card alone, a tester looked for them on the page); the
    GM's page lists every combatant's (it listed none: a GM could not see that a once-a-fight ability was spent, or
    that a foe had a reaction, until its decision came up: found by a tester); none of a combatant a player's seat
    does not own."""
    found = []
    for who, combatant in state.combatants.items():
        if not (sight.gm or sight.owns(who)):
            continue
        sheet = combatant.sheet
        for a in _abilities_of(state, who):
            owed = tuple(deferred_words(a.deferred, sheet.name, current=p.armed) for p in state.deferred
                         if p.who == who and p.ability == a.id) if a.deferred is not None and state.ending is None \
                else ()  # a fight over has no next turn for a cost to settle at (it still "owed": a GM tester)
            found.append(AbilityView(who=sheet.name, name=a.name, use=_ability_cost(a), when=when_words(a.when),
                                     summary=a.summary, left=uses_left(state, who, a),
                                     per=a.uses.per if a.uses is not None else "", owed=owed))
    return found


def _ability_names_public(state: FightState, public: Iterable[str]) -> list[tuple[str, bool]]:
    """Every ability the fight's combatants have, by name (sorted, once each), and whether the GM made that name
    public to every seat (``reveal_effects``: it could be done over the API alone, and a GM running a party left
    its allies reading "uses it": a tester)."""
    names = sorted({a.name for who in state.combatants for a in _abilities_of(state, who)}, key=str.casefold)
    shown = set(public)
    return [(name, name in shown) for name in names]


def _one_parry_per_weapon(offer: Offer) -> Offer:
    """An Active Defense's choices without the Parry that names no weapon when one naming each weapon in hand is
    offered (the same Parry: C9's "the first weapon in hand"), so each button says which weapon it parries with."""
    if offer.command != "answer_active_defense":
        return offer
    named = any(c.args.get("defense") == "parry" and c.args.get("weapon") for c in offer.choices)
    kept = tuple(c for c in offer.choices if not (named and c.args.get("defense") == "parry"
                                                  and not c.args.get("weapon")))
    return msgspec.structs.replace(offer, choices=kept)


#: How a fight ended, by its reason (C33), as the fight bar says it after "The fight is over: " ("the raiders
#: yielded"; "a side yielded" where the seat may not see which).
_ENDED = {"gm": "the GM ended it", "yielded": "{a} {side} yielded", "fled": "{a} {side} fled",
          "defeated": "defeat for {a} {side}"}


def _end_said(seen: list[Any]) -> str:
    """How the fight ended, as the fight bar says it once it is over (``the raiders yielded``), from its
    ``fight_ended`` event as the seat sees it: the side where the seat may see it, the GM's note where it may (the
    GM's: :mod:`omen_server.views`)."""
    ended = next((rec for rec in reversed(seen) if rec.event is not None and rec.type == "fight_ended"), None)
    if ended is None:
        return ""
    end = ended.event
    given = next((rec.event.get("command") for rec in seen if rec.seq == ended.batch and rec.type == "command_issued"
                  and rec.event is not None), None)
    by_gm = isinstance(given, dict) and given.get("command") == "end_fight"  # else the engine's words (C33)
    reason = str(end.get("reason", ""))
    side = end.get("side")
    said = _ENDED.get(reason, reason).format(side=side if isinstance(side, str) and side else "", a=(
        "the" if isinstance(side, str) and side else "a side")).replace("  ", " ").strip()
    note = str(end.get("note") or "").strip()
    return said + (f"; the GM's note: {note}" if note and by_gm else f": {note}" if note else "")


def _own_faces(view: OfferView, mine: Callable[[str], bool]) -> OfferView:
    """An offer's form in a fight with physical dice: each choice asks for the dice of the seat's own combatants
    only, those before the first die another seat rolls (faces are positional, C29; the server stages the command
    for the rest: docs/server.md, "Players roll their own dice")."""
    def own(faces: tuple[Face, ...]) -> tuple[Face, ...]:
        cut = next((i for i, f in enumerate(faces) if not mine(f.roller)), len(faces))
        return faces[:cut]
    return dataclasses.replace(view, choices=tuple(dataclasses.replace(c, faces=own(c.faces)) for c in view.choices))


def _seat_dice(state: FightState, command: str, args: Mapping[str, Any], mine: Callable[[str], bool]) -> int | None:
    """How many dice of a choice the seat gives before another seat's first die, found as the server's own check
    of a player's faces finds it (app.py's ``command_rolls``: the command decided without faces, its rolls in C29
    order); None where no other seat's die comes first among the rolls so found. A player's options list its own
    combatants' rolls alone, so the offer cannot say where another seat's die comes (a tester typed Brin's defense
    die into a Strike whose attacker's hit dice, the GM's, come first: refused as surplus faces)."""
    from omen_core.commands import command_from
    from omen_core.errors import OmenError

    try:
        rolls = command_rolls(state, command_from({"command": command, **args}))
    except OmenError:
        return None
    at = 0
    for roller, _purpose, pool in rolls or ():
        if not mine(roller):
            return at
        at += len(pool)
    return None


def _seat_faces(view: OfferView, offer: Offer, state: FightState, mine: Callable[[str], bool]) -> OfferView:
    """An offer's form asks for no die past the seat's own before another seat's first (:func:`_seat_dice`)."""
    if len(view.choices) != len(offer.choices) or not any(c.faces for c in view.choices):
        return view

    def cut(c: ChoiceView, choice: Choice) -> ChoiceView:
        limit = _seat_dice(state, offer.command, choice.args, mine) if c.faces else None
        return c if limit is None else dataclasses.replace(c, faces=c.faces[:limit])
    return dataclasses.replace(view, choices=tuple(cut(c, o) for c, o in zip(view.choices, offer.choices,
                                                                               strict=True)))


def _staged_faces(staged: StagedView | None, names: dict[str, str], state: FightState) -> tuple[Face, ...]:
    """The dice a staged command waits on from this seat, each named by its roller's name."""
    if staged is None or not staged.yours:
        return ()
    abouts = _abouts(staged.rolls, names, _saver(staged, state))
    return tuple(Face(r.roller, r.purpose, d.pool, d.sides, False, _name(names, r.roller), about)
                 for r, about in zip(staged.rolls, abouts, strict=True) for d in r.dice)


def _who(names: Mapping[str, str], who: str, players: Mapping[str, str]) -> str:
    """A combatant's name, and to the GM the player's seat that plays it: ``Kael Arden (Alice)``."""
    return f"{names.get(who, who)} ({players[who]})" if who in players else names.get(who, who)


def _staged_tie(fights: Fights, fight_id: str, fight: Any, staged: StagedView | None, sight: Sight,
                names: Mapping[str, str]) -> tuple[list[str], bool]:
    """The combatants a staged command's initiative roll-off is for (C19: tied after the AGI bonus), by name, and
    whether the tie is rolled (True) or only possible (False: they may tie, the faces for it are not all in): to
    the GM, and to the seat whose roll-off dice it waits for (a tie rolled: its roll-off die is asked for); none
    where the seat does not see every one of them (the roll-off of a tie with a hidden combatant is the GM's to
    roll, docs/server.md). Found by deciding the command with the faces given so far: a roll-off die it then needs
    means the tie is rolled (its group: the first tie of foes the faces give, the dice after them rolled from any
    seed, as they come after the tie); a roll-off it may need names those who may tie."""
    from omen_core.decide import decided
    from omen_core.dice import FacesNeeded, ManualDice
    from omen_core.errors import OmenError

    from .staging import _kept

    if staged is None or not (sight.gm or any(r.purpose == "roll_off" for r in staged.rolls)):
        return [], False
    kept = _kept(fights, fight_id, fight)
    if kept is None:
        return [], False
    command = msgspec.structs.replace(kept.command, dice=kept.faces)
    try:
        decided(fight.state, command, ManualDice())
    except FacesNeeded as exc:
        rolled = any(r.purpose == "roll_off" for r in exc.needed)
        group = _tie_rolled(fight.state, command) if rolled else []
        group = group or list(dict.fromkeys(r.roller for r in (*exc.needed, *exc.then) if r.purpose == "roll_off"))
        if len(group) > 1 and all(who in names for who in group) and (rolled or sight.gm):
            return [names[who] for who in group], rolled
    except OmenError:
        pass
    return [], False


def _tie_rolled(state: Any, command: Any) -> list[str]:
    """The group of foes the faces a command carries tie for initiative (C19), read from the command decided with
    the dice after them rolled from a fixed seed (they come after the tie: its group does not depend on them); []
    if it cannot be decided so."""
    from omen_core.decide import decided
    from omen_core.dice import SeededDice
    from omen_core.errors import OmenError
    from omen_core.events import InitiativeTied

    try:
        events = decided(state, command, SeededDice(bytes(32)), then_roll=True).events
    except OmenError:
        return []
    return next((list(e.group) for e in events if isinstance(e, InitiativeTied) and not e.allies), [])


def _staged_answer(staged: StagedView | None, pairs: list[tuple[OfferView, Offer]], answers_to: set[str]) -> str:
    """The label of the answer a staged command gives the decision open now (``Strike with Short blade``), or its
    command's title where the seat is offered no such answer itself (but a pass: "Let it pass" to every seat, its
    label naming nothing a seat may not see); "" where the staged command answers none."""
    if staged is None:
        return ""
    command = str(staged.command.get("command", ""))
    if command not in answers_to:
        return ""
    for view, offer in pairs:
        if offer.command != command:
            continue
        keys = {k for choice in offer.choices for k in choice.args}  # every argument, those a choice leaves out too
        for shown, choice in zip(view.choices, offer.choices, strict=False):
            if all(staged.command.get(k) == choice.args.get(k) for k in keys):  # (a Dodge is no Decline with more)
                return shown.label
    if command == "pass_reaction":  # a label of no argument: the same words for every seat ("Let it pass")
        return str(_ANSWER_LABELS[command]({}))
    return unspecific_answer(command) if command in answers_to else ""


#: What a staged answer is called where the seat is shown no more of it than its command (another seat's: its
#: arguments are that seat's), in the page's words rather than the command's name.
_UNSPECIFIC = {"react": "a strike", "answer_active_defense": "an Active Defense answer",
               "answer_catch": "a Catch answer", "answer_decision": "an answer", "route_damage": "a routing",
               "choose_will_conversion": "a Will choice"}


def unspecific_answer(command: str) -> str:
    """A staged answer's words where the seat is shown its command alone (:data:`_UNSPECIFIC`)."""
    return _UNSPECIFIC.get(command, COMMAND_TITLES.get(command, command.replace("_", " ")))


def _staged_cost(staged: StagedView | None, answer: str, waiting: Any, state: Any) -> str:
    """What the answer a staged command gives costs, by the rules, not the decision's dearest answer: a pass, a
    declined Active Defense, a Catch let hit: ``free``; an ability's answer, its choice's cost as its decision
    records it (C38); any other, the decision's cost (an Interrupt's Strike, C24). "" where it answers nothing."""
    if staged is None or not answer or waiting is None:
        return ""
    command = staged.command
    kind = command.get("command")
    if answer == unspecific_answer(str(kind)):  # which answer is the giver's to know: what it costs too
        return ""
    if kind == "pass_reaction" or (kind == "answer_active_defense" and command.get("defense") is None) or (
            kind == "answer_catch" and not command.get("catch")):
        return "free"
    opened = state.pending.decision if state.pending is not None else None
    if kind == "answer_decision" and opened is not None:
        costs = dict(zip(opened.choices, opened.costs, strict=False))
        return str(costs.get(str(command.get("choice")), waiting.cost or ""))
    return str(waiting.cost or "")


#: What comes after a hit is determined, as the hook point says it (C12), and as it is where no routing can come.
_ROUTING_THEN = HOOK_POINTS["attack.determined"].then
_DAMAGE_THEN = _ROUTING_THEN.replace("routing or the damage", "the damage")
#: ... and where the attack missed: no damage (it said "the damage, as the hit calls for" of a miss: a tester).
_MISS_THEN = "no damage (a miss): what the attack does on a miss, if anything (C25), then it settles"


def _then_said(waiting: Waiting | None, state: FightState, sight: Sight) -> Waiting | None:
    """The open decision with what comes after it said as it will be for this attack: after a miss, no damage (to
    every seat: the miss is public); to a seat that sees the attacker's sheet, "the damage" where the attacker has
    no routing (it read "routing or the damage" to a GM whose attacker had none: a tester); to the others as the
    hook point says it (whether a foe may route is its sheet's)."""
    frame = state.pending
    if waiting is None or waiting.resumes != _ROUTING_THEN or not isinstance(frame, AttackFrame):
        return waiting
    if frame.determination is not None and not frame.determination.hit:  # a miss, which every seat has seen
        return msgspec.structs.replace(waiting, resumes=_MISS_THEN)
    if not (sight.gm or sight.owns(frame.declaration.attacker)) or routes(state, frame):
        return waiting
    return msgspec.structs.replace(waiting, resumes=_DAMAGE_THEN)


def _saver(staged: StagedView, state: FightState) -> str | None:
    """Who makes the save a staged command's dice belong to, where it can be told: the saver a ``call_save`` names,
    the save in progress, or the first of two save dice (C29: the saver's die first, then the one opposing it)."""
    if staged.command.get("command") == "call_save" and isinstance(staged.command.get("saver"), str):
        return str(staged.command["saver"])
    target, who = staged.command.get("target"), staged.command.get("who")
    if staged.command.get("command") == "use_ability" and isinstance(target, str) and target != who:
        return target  # an ability's save is its target's, against its user (C15, C37): the user's die opposes it
    frame = state.pending
    if frame is not None and isinstance(frame.declaration, SaveCalled):
        return frame.declaration.saver
    saves = [r.roller for r in staged.rolls if r.purpose == "save" and not r.about]
    return saves[0] if len(saves) > 1 else None


def _staged_for(staged: StagedView | None, names: Mapping[str, str], state: FightState) -> str:
    """What the dice a staged command waits for are (a pass lets the action it answers go on: its dice, "Ana Thorne's
    hit", or the passer's own base defense against it; a turn's end, a condition's: "Brin Hollowmere's Burning
    damage"; a die opposing a save, the saver's: "Vesh the Cinder-Hand's die against Kael Arden's save"): each
    roller's name and the roll's purpose, in C29 order; "" for a command that rolls its actor's own dice alone for
    its own sake (a Dodge's die, an attack's hit)."""
    if staged is None or not staged.rolls:
        return ""
    saver = _saver(staged, state)
    command = str(staged.command.get("command", ""))
    actor = staged.command.get(PLAYER_COMMANDS.get(command, "who"))
    own = all(r.roller == actor for r in staged.rolls)
    if own and command == "answer_active_defense" and any(r.purpose != "active_defense" for r in staged.rolls):
        own = False  # the defense turned an Interrupt, and the action it answered goes on with the defender's dice:
    if own and command != "answer_active_defense" and any(r.purpose == "base_defense" for r in staged.rolls):
        own = False  # a reactor's own base defense: the action it answered goes on against it ("React by Sly"):
    opposing = saver is not None and any(r.purpose == "save" and not r.about and r.roller != saver
                                         for r in staged.rolls)
    if command != "pass_reaction" and own and not opposing and not any(r.about for r in staged.rolls):
        return ""  # said as what they are ("Brin Hollowmere's hit", not the defense's; a tick's die, not "End turn")
    # a die opposing a save said as such (it read "Vesh's save", as if Vesh saved: a tester)
    said = dict.fromkeys(f"{names.get(r.roller, 'someone')}'s {purpose_words(r.purpose, about)}"
                         for r, about in zip(staged.rolls, _abouts(staged.rolls, names, saver), strict=True))
    return ", ".join(said)


def _staged_title(staged: StagedView | None, state: FightState, sight: Sight) -> str:
    """The name of the ability a staged ``use_ability`` uses, to the GM and the seat that plays its user (the roll
    box said "Ability by Mira Vell", the spell unnamed: a tester); "" otherwise (the command's title is said)."""
    if staged is None or staged.command.get("command") != "use_ability":
        return ""
    who, ability = staged.command.get("who"), staged.command.get("ability")
    if not isinstance(who, str) or who not in state.combatants or not sight.owns(who):
        return ""
    return next((a.name for a in _abilities_of(state, who) if a.id == ability), "")


def _staged_actor(staged: StagedView | None, names: dict[str, str], field_: str = "") -> str:
    """The name of the combatant a staged command acts for (its attacker, defender, who), as the seat sees it; of
    its ``field_`` (``target``: an attack's, an ability's) where one is named; "" for one the seat does not see."""
    if staged is None:
        return ""
    field_ = field_ or PLAYER_COMMANDS.get(str(staged.command.get("command", "")), "who")
    who = staged.command.get(field_)
    return names.get(who, "") if isinstance(who, str) else ""


def panel(fights: Fights, fight_id: str, seat: Seat, token: str = "") -> Panel:
    """The table as ``seat`` sees it now, from its own views alone (``token``: the GM's, to show the seats' links)."""
    from .seating import entries

    sight = fights.sight(fight_id, seat)
    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        state = fight.state
        view = fights.seat_view(fight_id, fight, sight, seat)
        settings = fights.settings(fight_id)
        options: Options = view.options
        views = combatant_views(state, sight, settings.hidden)
        names = {v.id: v.name for v in views}
        budgets = {b.who: b for b in options.combatants}
        answers_to = set(options.waiting.answers) if options.waiting is not None else set()
        offers = [_one_parry_per_weapon(_foes_first(o, state)) for o in options.offers]
        opened = state.pending.decision if state.pending is not None else None
        used = {o.actor for o in offers if o.command == "use_ability" and o.actor in state.combatants}
        abilities = {**{a.id: a.name for who in used for a in state.combatants[who].sheet.written_abilities()},
                     **{e.id: e.name for who in used for e in turn_actions(state, who)},
                     **_decision_ability(state, opened)}
        actors = {o.actor for o in offers if o.actor in state.combatants}
        gear = {(who, w.id): w.name for who in actors for w in state.combatants[who].sheet.weapons if w.name}
        gear |= {(who, key): shield.name for who in actors
                 if (shield := state.combatants[who].sheet.shield) is not None for key in (shield.id, "option:shield")}
        gear |= {(who, f"option:{a.when.attack_option}"): a.name for who in actors
                 for a in _abilities_of(state, who) if a.when.attack_option}
        kit = {key: name for key, name in _gear_of(state).items() if sight.gm or sight.owns(key[0])}
        seeded = (state.dice or options.dice) == "seeded"
        physical = physical_now(fights, fight_id, fight)
        offer_views = [_offer_view(o, _repeat(offers, n), names, opened, abilities, gear, sight.gm or o.actor is None,
                                   seeded and o.actor not in physical) for n, o in enumerate(offers)]
        players = {c: row.name or "a player" for row in fights.keep.seat_rows(fight_id)
                   if row.kind == "player" and not row.revoked for c in row.combatants} if sight.gm else {}
        if (state.dice or options.dice) == "manual":  # every seat types its own dice (docs/server.md)
            mine: Callable[[str], bool] = (lambda who: who not in players) if sight.gm \
                else (lambda who: who in sight.own)
            offer_views = [_seat_faces(_own_faces(v, mine), o, state, mine)
                           for v, o in zip(offer_views, offers, strict=True)]
        answer_pairs = [(v, o) for v, o in zip(offer_views, offers, strict=True) if o.command in answers_to]
        facts = decision_facts(state, options.waiting, [o for _v, o in answer_pairs], sight)
        turn = options.turn
        end_turn = next((v for v in offer_views if v.command == "end_turn" and v.actor == turn), None)
        rest = [v for v in offer_views if v.command not in answers_to and v is not end_turn]
        ordered = sorted((v for v in rest if v.actor is not None), key=lambda v: (v.actor != turn, v.actor or ""))
        ended = state.ending is not None
        now_turn = [v for v in ordered if v.actor == turn and not ended]
        ordered = [v for v in ordered if v not in now_turn]
        waiting = _then_said(options.waiting, state, sight)
        staged_answer = _staged_answer(view.staged, answer_pairs, answers_to)
        tie, tie_rolled = _staged_tie(fights, fight_id, fight, view.staged, sight, names)
        result = Panel(
            fight_id=fight_id, title=state.title or fight_id, seat=seat, head=(view.head.seq, view.head.hash),
            phase=options.phase, round=options.round, turn=turn, turn_name=names.get(turn or "", ""),
            dice=state.dice or options.dice or "", seed_revealed=state.revealed_seed is not None,
            seeded=state.seed_commitment is not None, ended=ended, published=settings.published,
            physical=[names[w] for w in state.combatants if w in physical and w in names],
            physical_ids=list(settings.physical) if sight.gm else [],
            physical_here=bool(physical) if sight.gm else any(w in physical for w in sight.own),
            hp_display=settings.hp_display, waiting=waiting, round_end=_at_round_end(state),
            strip=_strip(state, sight, views, budgets, settings.notes, ended),
            answers=_answer_views([v for v, _o in answer_pairs], [o for _v, o in answer_pairs], facts),
            decision=facts, commands=ordered, turn_commands=now_turn,
            your_turn=turn is not None and not ended and not sight.gm and sight.owns(turn),
            gm_tools=[v for v in rest if v.actor is None and (ended or v.command not in _NEXT)],
            next_commands=[] if ended else sorted((v for v in rest if v.actor is None and v.command in _NEXT),
                                                  key=lambda v: _NEXT.index(v.command)),
            end_turn=end_turn,
            staged=view.staged, staged_faces=_staged_faces(view.staged, names, state),
            staged_actor=_staged_actor(view.staged, names),
            staged_target=_staged_actor(view.staged, names, "target"),
            staged_answer=staged_answer,
            staged_cost=_staged_cost(view.staged, staged_answer, options.waiting, state),
            staged_for=_staged_for(view.staged, names, state),
            staged_title=_staged_title(view.staged, state, sight),
            staged_tie=tie,
            tie_rolled=tie_rolled,
            seats=entries(fights, fight_id, token) if sight.gm and token else [],
            note=settings.notes.get("fight", "") if sight.gm else "",
            hidden_by_gm=list(settings.hidden) if sight.gm else [],
            ability_names=_ability_names_public(state, settings.public_effects) if sight.gm else [],
            waiting_who=[_who(names, w, players) for w in waiting.who] if waiting is not None else [],
            yours=bool(answer_pairs) and not (sight.gm and waiting is not None
                                              and all(w in players for w in waiting.who)),
            not_offered=_not_offered(state, waiting, sight),
            combatant_choices=[(v.id, v.name) for v in views],
            damage_types=tuple(state.ruleset.damage_types.physical + state.ruleset.damage_types.other)
            if state.ruleset else (),
            condition_names=tuple(sorted(c for c in state.ruleset.conditions if c != "Dying")) if state.ruleset else (),
            )
        if sight.gm:  # the GM sees every side: each chip says its side, coloured by it (a player's marks its foes)
            order = _side_order(state, players)
            result.strip = [dataclasses.replace(t, side_index=order.get(t.side, -1)) for t in result.strip]
        elif sight.kind == "spectator":  # an audience tells the teams apart as the GM does (four chips alike on a
            # streamer's TV: a tester); the sides of the chips it sees alone, as they joined, so that no colour
            # depends on a combatant hidden from it
            shown = {t.id for t in result.strip}
            joined = dict.fromkeys(c.side for who, c in state.combatants.items() if who in shown)
            order = {side: i for i, side in enumerate(joined)}
            result.strip = [dataclasses.replace(t, side_index=order.get(t.side, -1)) for t in result.strip]
        head = view.head.seq
        abilities_now = own_abilities(state, sight)
    seen = [_published(seen_event(r, sight), r) if settings.published else seen_event(r, sight)
            for r in fights.store.read(fight_id, 0) if r.seq <= head]
    cards = story(seen, names, kit, felt=own_hp_felt(fights, fight_id, sight, seen, head),
                  own=None if sight.gm else frozenset(sight.own))
    last_batch = seen[-1].batch if seen else None
    result.top = top_card(cards, last_batch)
    result.end_said = _end_said(seen) if result.ended else ""
    result.log = list(reversed(cards[-LOG_ENTRIES:]))
    result.undo_preview = undo_preview(cards)
    result.redo_preview = redo_preview(cards, seen, redoable(state))
    result.abilities = abilities_now
    result.top_folded, result.top_lines = fold(result.top.lines if result.top else [])
    result.top_gm_gave = [line for line in (result.top.lines if result.top else []) if line.endswith(GM_GAVE)]
    result.top_not_offered = _passed_over_said(fights, fight_id, state, sight, result.top, seen, names)
    result.status = status_of(result)
    result.announce = (f"The fight is over: {result.end_said}" if result.end_said else "The fight is over") \
        if result.ended else ". ".join(x for x in (_said(result.top), result.status) if x)
    return result


def _decision_ability(state: FightState, opened: DecisionOpened | None) -> dict[str, str]:
    """The open decision's ability by its id, ``{id: name}``, where the decision is a triggered ability of the one
    it asks (C38), as its sheet writes it; empty for an extension's decision or none (its answers are offered to
    the seat of the one asked and the GM alone, who see its sheet)."""
    if opened is None:
        return {}
    return {a.id: a.name for who in opened.responders if who in state.combatants
            for a in state.combatants[who].sheet.written_abilities() if a.id == opened.decision}


#: The GM's commands that take the fight from its set-up into the rounds (combat.txt: an ambush, initiative and its
#: ties, C19): the GM's page offers them first, beside the last outcome, while they are offered.
_NEXT = ("roll_initiative", "begin_ambush", "agree_initiative", "roll_off")

class _OwnHp(Visitor):
    """The HP of some combatants before and after each of some batches, as it stood then."""

    def __init__(self, own: Iterable[str], batches: set[int]) -> None:
        self.own, self.batches = tuple(own), batches
        self.found: dict[tuple[int, str], list[int]] = {}

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        if rec.batch not in self.batches:
            return
        for who in self.own:
            if who in before.combatants and who in after.combatants:
                hp = self.found.setdefault((rec.batch, who), [before.combatants[who].hp, 0])
                hp[1] = after.combatants[who].hp


def own_hp_felt(fights: Fights, fight_id: str, sight: Sight, seen: list[Any], head: int
                ) -> dict[int, list[tuple[str, int, int]]]:
    """A player's own combatants' HP before and after each batch the seat saw only in part (an attack by a hidden
    combatant is withheld whole), where it changed: ``{batch: [(who, before, after)]}``. The seat sees its own
    combatants' HP at every head (its state), so this tells it nothing its state did not; the story says it where the
    seat sees nothing else of what happened. None to the GM (who sees every event) nor to a seat playing no one."""
    partial = {rec.batch for rec in seen if rec.event is None}
    if sight.gm or not sight.own or not partial:
        return {}
    visitor = _OwnHp(sorted(sight.own), partial)
    walk(StoreSource(fights.store, fight_id), visitor, to_seq=head)
    felt: dict[int, list[tuple[str, int, int]]] = {}
    for (batch, who), (before, after) in sorted(visitor.found.items()):
        if before != after:
            felt.setdefault(batch, []).append((who, before, after))
    return felt


_NOT_UNDONE = {"undo", "redo", "join", "start_fight", "fight_started", "combatant_joined"}


_DIE_LINE = re.compile(r"\(d\d+\)")


def fold(lines: list[str]) -> tuple[list[str], list[str]]:
    """A card's lines as the top card shows them: the dice lines ("Kael Arden's hit: 8 (d8), 6 (d6)") folded away
    when the card has more than four lines and one of dice or more (a player's one die read beside the total made of
    it, "Kael Arden's initiative: 1 (d6)" over "initiative 2 (1 AGI die + 1 AGI bonus)", as two initiatives: a
    tester); what came of them (totals, verdicts, damage, HP, the order) shown.

    >>> folded, shown = fold(["Brin: initiative 7", "Kael's initiative: 1 (d6)", "Kael: initiative 2 (1 AGI die + "
    ...                       "1 AGI bonus)", "order: Brin, Kael", "Round 1"])
    >>> folded, len(shown)
    (["Kael's initiative: 1 (d6)"], 4)
    """
    dice = [x for x in lines if _DIE_LINE.search(x)]
    if len(lines) <= 4 or not dice:
        return [], lines
    return dice, [x for x in lines if not _DIE_LINE.search(x)]


def undo_preview(cards: list[StoryCard]) -> list[StoryCard]:
    """The cards an undo of the last command strikes through, oldest first: every card not yet undone that the
    last command's batch touched (an attack and the Interrupt inside it; undo goes back to the action's start)."""
    live = [c for c in cards if not c.struck and c.kind not in _NOT_UNDONE and c.batches]
    if not live:
        return []
    last = max(b for c in live for b in c.batches)
    return [c for c in live if last in c.batches]


def redo_preview(cards: list[StoryCard], seen: Sequence[SeenEvent], undo_seq: int | None) -> list[StoryCard]:
    """The cards a redo would bring back, oldest first: those in the range the undo at ``undo_seq`` (the top of the
    redo stack) took back, where the seat is shown that undo's range; none if there is nothing to redo."""
    undone = next((r.event for r in seen if r.seq == undo_seq), None) if undo_seq is not None else None
    if not isinstance(undone, dict) or "from_seq" not in undone:
        return []
    first, last = int(undone["from_seq"]), int(undone.get("to_seq", 0))
    return [c for c in cards if c.struck and first <= c.seq <= last and c.kind not in ("undo", "redo")]


def _said(card: StoryCard | None) -> str:
    """A card in one line, as the page announces it: its verdict, headline (a condition's card: its lines), and
    whether it was undone. Once the fight is over the page announces how it ended instead (the fight bar's words,
    once)."""
    if card is None:
        return ""
    return f"Undone: {card_said(card)}" if card.struck else card_said(card)


def status_of(p: Panel) -> str:
    """What the table waits for, in a few words (the document's title and the page's announcements): ``Your turn:
    Kael Arden``, ``Your decision: Active Defense``, ``Waiting for Vesh the Cinder-Hand: Active Defense``, ``Roll
    your dice``, ``Kael Arden's turn``, ``The fight is over``."""
    if p.ended:
        return "The fight is over"
    if p.staged is not None:
        return "Roll your dice" if p.staged.yours else f"Waiting for {p.staged.awaiting}'s dice"
    if p.waiting is not None:
        if p.yours:
            return f"Your decision: {p.waiting.title}"
        return f"Waiting for {', '.join(p.waiting_who) or 'someone'}: {p.waiting.title}"
    if p.your_turn:
        return f"Your turn: {p.turn_name}"
    if p.round_end:
        return f"The end of round {p.round}"
    if p.phase == "rounds":  # (no turn to a seat: a hidden combatant's, as the fight bar says it)
        return f"Round {p.round}: {p.turn_name or 'someone'}'s turn"
    return _PHASE_WORDS.get(str(p.phase), str(p.phase).capitalize())


def _at_round_end(state: FightState) -> bool:
    """Whether the fight waits at the round's end, abilities answering it (C38: its ``moment_reached``, which names
    no one and every seat sees; it read "someone's turn", as a hidden combatant's turn does: found by a tester)."""
    frame = state.pending
    return isinstance(frame, MomentFrame) and frame.declaration.moment == "round.end"


#: What the table is doing before the rounds, in words (the document's title; it said "Rounds", "Setup").
_PHASE_WORDS = {"setup": "Setting up the fight", "ambush": "An ambush", "initiative": "Rolling initiative"}


def panel_html(fights: Fights, fight_id: str, seat: Seat, token: str = "") -> str:
    """The table fragment for ``seat``, rendered."""
    return ENV.get_template("panel.html.j2").render(p=panel(fights, fight_id, seat, token))


def version_tag(fights: Fights, fight_id: str, seat: Seat) -> str:
    """What the fragment of ``seat`` depends on, as a tag (``X-Table-Tag``): an HMAC, under a secret of the
    server's keep, of what this seat's view is made from: the head's seq, the seat, the HP display, whether the log
    is published, which combatants the seat sees, the command staged for dice as the seat sees it, the effect names
    the GM made public (public to every seat by then) and which of those it sees roll physical dice; the GM's also
    of every table setting and the seats. A player's tag is a function of its own view alone (no hidden id, no note,
    no hash enters it), and without the key it confirms no guess at all. The page's look every few seconds costs
    an HMAC, not a render, when none of it changed."""
    from .staging import staged_view

    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        head = fights.view(fight_id, fight).head
        settings = fights.settings(fight_id)
        sight = fights.sight(fight_id, seat, fight)
        seen = sorted(who for who in fight.state.combatants if sight.sees(who))
        staged = staged_view(fights, fight_id, fight, sight, seat)
        facts: list[Any] = [fight_id, head.seq, seat.kind, seat.name, list(seat.combatants), settings.hp_display,
                            settings.published, seen, msgspec.to_builtins(staged), sorted(settings.public_effects),
                            sorted(who for who in physical_now(fights, fight_id, fight) if who in seen)]
        if sight.gm:
            facts += [msgspec.to_builtins(settings), _seats_said(fights, fight_id)]
    key = fights.keep.secret("table-tag")
    return '"' + hmac.new(key, msgspec.json.encode(facts), hashlib.sha256).hexdigest()[:32] + '"'


def _seats_said(fights: Fights, fight_id: str) -> str:
    return ";".join(f"{r.seat_id}:{r.generation}:{r.revoked}" for r in fights.keep.seat_rows(fight_id))


def title_of_fight(fights: Fights, fight_id: str) -> str:
    """A stored fight's title, from its first event alone (its header: ``fight_started``); "" if it has none."""
    events = fights.store.read(fight_id, 0)
    try:
        first = next(events, None)
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    return str(getattr(first.event, "title", "") or "") if first is not None else ""


def _page(name: str, **context: Any) -> Response[bytes]:
    body = ENV.get_template(name).render(**context)
    return Response(body.encode(), media_type="text/html", headers=_HEADERS)


def bundled_sheets() -> dict[str, Any]:
    """The bundled Ember Ford sheets (:func:`omen_replay.demo.ember_ford_sheets`), as JSON values by id."""
    return {who: msgspec.to_builtins(sheet) for who, sheet in ember_ford_sheets().items()}


def table_routes(fights: Fights, create_token: bool = False) -> list[Any]:
    """The page routes, bound to ``fights``; ``create_token``: whether creating a fight needs the server's creation
    token (the set-up page takes it from its link's fragment, ``#create=…``, or asks for it)."""

    @get("/", sync_to_thread=True, include_in_schema=False)
    def index(after: Annotated[str, QueryParameter(max_length=128)] = "") -> Response[bytes]:
        sheets = bundled_sheets()
        page = fights_page(fights.store, after)
        return _page("index.html.j2", sheets=sheets, page=page, after=after, needs_token=create_token,
                     titles={f.fight_id: title_of_fight(fights, f.fight_id) for f in page.fights})

    @get("/table/{fight_id:str}", sync_to_thread=False, include_in_schema=False)
    def table(fight_id: FromPath[str]) -> Response[bytes]:
        return _page("table.html.j2", fight_id=fight_id)

    @get("/sheets", sync_to_thread=True, summary="The bundled sheets",
         description="The bundled Ember Ford sheets (what the set-up page offers), by id, each a sheet as POST /fights "
                     "takes it (docs/content.md); no token needed.")
    def sheets() -> dict[str, Any]:
        return bundled_sheets()

    @get("/static/{name:str}", sync_to_thread=True, include_in_schema=False)
    def static(name: FromPath[str]) -> Response[bytes]:
        if name == "log.css":
            body = (files("omen_replay") / "templates" / "log.css").read_bytes()
            return Response(body, media_type="text/css", headers={"Cache-Control": "no-cache"})
        if name not in _STATIC_TYPES:
            raise NotFoundException(detail=f"no static file {name!r}")
        return Response((_STATIC / name).read_bytes(), media_type=_STATIC_TYPES[name],
                        headers={"Cache-Control": "no-cache"})

    @get("/fights/{fight_id:str}/table", sync_to_thread=True, summary="The table page's fragment (HTML)",
         responses=_errors(400, 401, 403, 404),
         description="The table as this seat sees it, an HTML fragment rendered from the seat's own views (what the "
                     "table page shows). Its X-Table-Tag header tags what it shows; sent back in X-Table-Tag, while "
                     "nothing it shows changed the answer is 204 with no body (docs/server.md, \"The table page\").")
    def fragment(request: Request[Any, Any, Any], fight_id: FromPath[str],
                 table_tag: Annotated[str | None, HeaderParameter(name="X-Table-Tag", required=False)] = None
                 ) -> Response[bytes]:
        _token, seat = _seat(request, fights, fight_id)
        if seat.kind != "gm":
            _token = ""
        tag = version_tag(fights, fight_id, seat)
        headers = {"Cache-Control": "no-store", "X-Table-Tag": tag}
        if table_tag == tag:  # the page has it already (no 304: nothing is cached)
            return Response(b"", status_code=204, headers=headers)
        return Response(panel_html(fights, fight_id, seat, _token).encode(), media_type="text/html",
                        headers=headers)

    return [index, table, sheets, static, fragment]
