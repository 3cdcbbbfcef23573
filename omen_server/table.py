"""The table page of ``omen serve``: plain server-rendered HTML (Jinja2, autoescaped) and a little JavaScript.

Pages (no token needed; they hold nothing of any fight):

- ``GET /``: set up a fight (title, dice, sheets: the bundled Ember Ford ones or pasted JSON), and the fights of
  the store;
- ``GET /table/{id}``: a fight's table; the seat's token comes in the URL's fragment (``#token=…``: never sent
  to the server in a URL, a log or a Referer), and the page's script sends it as a bearer header;
- ``GET /static/{name}``: the page's script and styles (no build step, nothing fetched from elsewhere);
- ``GET /sheets``: the bundled sheets, as JSON (what the set-up page offers).

And one read-only resource behind a seat's token: ``GET /fights/{id}/table``, the table as that seat sees it,
as an HTML fragment built only from the seat's own views (:mod:`omen_server.views`: its state, its options, the
events as it sees them). The page fetches it whenever the live stream says the head moved, and swaps it in.
The log shows one action card per action (:mod:`omen_replay.cards`) to the GM, and to every seat once the log
is published; before that, a player's log is its seen events, each as a line: cards are never built from
events a seat may not see.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import jinja2
import msgspec
from litestar import Request, Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

from omen_core.content import load_sheet
from omen_core.options import Choice, DiceRoll, Offer, Options
from omen_replay.render import environment

from .app import Fights, _seat
from .keep import Seat
from .views import CombatantView, SeenEvent, Sight, combatant_views, seat_options, seen_event

__all__ = ["table_routes", "panel_html", "CSP", "COMMAND_TITLES"]

#: The page's Content-Security-Policy: everything from this server, nothing inline, nothing from elsewhere.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = {"Content-Security-Policy": CSP, "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}

#: How the page names each command of the scenario vocabulary (its button's text).
COMMAND_TITLES: dict[str, str] = {
    "declare_attack": "Attack", "answer_active_defense": "Active Defense", "route_damage": "Route damage",
    "choose_will_conversion": "Will conversion", "react": "React", "pass_reaction": "Pass",
    "answer_catch": "Catch", "move": "Move", "disengage": "Disengage", "draw": "Draw", "end_turn": "End turn",
    "static_check": "Check", "contest": "Contest", "call_save": "Save", "cancel_action": "Cancel the action",
    "apply_condition": "Apply a condition", "clear_condition": "Clear a condition", "reveal_seed": "Reveal the seed",
    "begin_ambush": "Begin an ambush", "roll_initiative": "Roll initiative", "agree_initiative": "Agree initiative",
    "roll_off": "Roll off", "engage": "Engage", "leave_fight": "Leave the fight", "end_fight": "End the fight",
    "undo": "Undo", "redo": "Redo", "join": "Join", "start_fight": "Start the fight",
}

#: The free arguments the forms take, by name: the input's type, its label, and the JSON path it fills.
FREE_INPUTS: dict[str, tuple[str, str, str]] = {
    "situational": ("checkbox", "claim the high ground (C26)", "situational.high_ground"),
    "difficulty": ("number", "difficulty", "difficulty"),
    "reason": ("text", "reason (the table sees it)", "reason"),
    "note": ("text", "note (the GM's)", "note"),
    "stacks": ("number", "stacks", "stacks"),
    "to_seq": ("number", "back to seq (default: the last command)", "to_seq"),
}
_REQUIRED = {("undo", "reason"), ("redo", "reason")}
LOG_ENTRIES = 80  # the log shows the last LOG_ENTRIES entries (cards, notes, rounds) or seen events

_SHEETS = files("omen_replay") / "data" / "ember-ford" / "sheets"
_STATIC = files("omen_server") / "static"
_STATIC_TYPES = {"table.js": "text/javascript", "table.css": "text/css"}


def _env() -> jinja2.Environment:
    loader = jinja2.ChoiceLoader([jinja2.PackageLoader("omen_server", "templates"),
                                  jinja2.PackageLoader("omen_replay", "templates")])
    env = environment(loader)
    env.globals["title_of"] = lambda command: COMMAND_TITLES.get(command, command.replace("_", " "))
    return env


ENV = _env()


# -- what the templates get ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Face:
    """One die the page asks for when the faces are typed in: whose, what for, its pool and size."""

    roller: str
    purpose: str
    pool: str
    sides: int
    maybe: bool


@dataclass(frozen=True)
class ChoiceView:
    """One legal choice of an offer: its label, its arguments (JSON for the script), the dice it rolls."""

    label: str
    args: str
    rolls: str
    faces: tuple[Face, ...]


@dataclass(frozen=True)
class FreeInput:
    """An argument left to the caller that the form takes."""

    name: str
    kind: str
    label: str
    path: str
    value: str
    required: bool


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


@dataclass(frozen=True)
class Tracked:
    """One line of the initiative tracker."""

    id: str
    name: str
    initiative: int | None
    turn: bool
    surprise: str | None
    down: bool
    left: str | None


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
    dice: str
    seed_revealed: bool
    ended: bool
    published: bool
    waiting: Any
    tracker: list[Tracked]
    combatants: list[dict[str, Any]]
    answers: list[OfferView]
    commands: list[OfferView]
    gm_tools: list[OfferView]
    note: str = ""
    hidden_by_gm: list[str] = field(default_factory=list)
    waiting_who: list[str] = field(default_factory=list)
    log_cards: list[tuple[str, Any]] | None = None
    log_lines: list[tuple[int, str, str]] = field(default_factory=list)
    seats: list[Seat] = field(default_factory=list)


def _name(names: dict[str, str], value: Any) -> str:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_name(names, v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k} {_name(names, v)}" for k, v in value.items() if v not in ([], {}, None, ""))
    return str(value)


def _label(command: str, actor_field: str | None, args: dict[str, Any], names: dict[str, str]) -> str:
    """A choice as the button or option says it: ``Vesh the Cinder-Hand, weapon knife``; ``decline`` for an
    answer with nothing chosen."""
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
    return {"answer_active_defense": "decline", "react": "react", "answer_catch": "let it fall"}.get(command, "go")


def _rolls(rolls: Iterable[DiceRoll], names: dict[str, str]) -> str:
    return "; ".join(f"{names.get(r.roller, r.roller)}'s {r.purpose.replace('_', ' ')}: "
                     + " + ".join(f"d{d.sides} ({d.pool})" for d in r.dice) for r in rolls)


def _choice(offer: Offer, choice: Choice, actor_field: str | None, names: dict[str, str]) -> ChoiceView:
    faces = tuple(Face(r.roller, r.purpose, d.pool, d.sides, maybe) for rolls, maybe in ((choice.dice, False),
                                                                                         (choice.may_roll, True))
                  for r in rolls for d in r.dice)
    said = _rolls(choice.dice, names)
    if choice.may_roll:
        said += ("; " if said else "") + "then perhaps " + _rolls(choice.may_roll, names)
    return ChoiceView(label=_label(offer.command, actor_field, choice.args, names),
                      args=json.dumps(choice.args, separators=(",", ":")), rolls=said, faces=faces)


def _offer_view(offer: Offer, index: int, names: dict[str, str]) -> OfferView:
    from .views import PLAYER_COMMANDS

    actor_field = PLAYER_COMMANDS.get(offer.command) or ("caller" if offer.command == "call_save" else None)
    choices = tuple(_choice(offer, c, actor_field, names) for c in offer.choices) or (
        ChoiceView(label="go", args="{}", rolls="", faces=()),)
    first = offer.choices[0].args if offer.choices else {}
    free = tuple(FreeInput(name=a.name, kind=FREE_INPUTS[a.name][0], label=FREE_INPUTS[a.name][1],
                           path=FREE_INPUTS[a.name][2], value=str(first.get(a.name, "")) if a.name == "difficulty"
                           else "", required=(offer.command, a.name) in _REQUIRED)
                 for a in offer.free if a.name in FREE_INPUTS)
    return OfferView(key=f"o{index}-{offer.command}-{offer.actor or 'gm'}", command=offer.command,
                     actor=offer.actor, actor_name=names.get(offer.actor or "", "the GM"), rule=offer.rule,
                     cost=offer.cost, note=offer.note, choices=choices, free=free)


def _tracker(fights: Fights, fight_id: str, sight: Sight, views: tuple[CombatantView, ...]) -> list[Tracked]:
    state = fights.fight(fight_id).state
    seen = {v.id: v for v in views}
    order = [w for w in state.order if w in seen] + [w for w in seen if w not in state.order]
    out = []
    for who in order:
        v = seen[who]
        tier = state.surprise.get(who)
        down = (v.hp is not None and v.hp <= 0) or v.hp_band == "down"
        out.append(Tracked(id=who, name=v.name, initiative=state.initiative.get(who), turn=v.turn,
                           surprise=str(getattr(tier, "value", tier)).replace("_", " ") if tier else None,
                           down=down, left=v.left))
    return out


def _card(fights: Fights, fight_id: str, sight: Sight, v: CombatantView, budgets: dict[str, Any],
          notes: dict[str, str]) -> dict[str, Any]:
    state = fights.fight(fight_id).state
    budget = budgets.get(v.id)
    mine = sight.owns(v.id)
    return {"v": v, "will_max": state.combatants[v.id].sheet.will if mine and v.id in state.combatants else None,
            "actions": budget.actions if budget is not None and budget.turn else None,
            "movement": budget.movement if budget is not None and budget.turn else None,
            "conditions": sorted(v.conditions.items()), "note": notes.get(v.id, "") if sight.gm else ""}


def _seen_line(rec: SeenEvent) -> str:
    if rec.event is None:
        return "(not for this seat)"
    shown = {k: v for k, v in rec.event.items() if k != "type"}
    return "; ".join(f"{k}: {msgspec.json.encode(v).decode() if not isinstance(v, str) else v}"
                     for k, v in shown.items())


def panel(fights: Fights, fight_id: str, seat: Seat) -> Panel:
    """The table as ``seat`` sees it now, from its own views alone."""
    from omen_replay.cards import entries

    sight = fights.sight(fight_id, seat)
    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        view = fights.view(fight_id)
        settings = fights.settings(fight_id)
        options: Options = view.options if sight.gm else seat_options(view.options, sight)
        views = combatant_views(fight.state, sight, settings.hidden)
        names = {v.id: v.name for v in views}
        budgets = {b.who: b for b in options.combatants}
        answers_to = set(options.waiting.answers) if options.waiting is not None else set()
        offers = [_offer_view(o, i, names) for i, o in enumerate(options.offers)]
        turn = options.turn
        ordered = sorted((o for o in offers if o.command not in answers_to and o.actor is not None),
                         key=lambda o: (o.actor != turn, o.actor or ""))
        result = Panel(
            fight_id=fight_id, title=fight.state.title or fight_id, seat=seat, head=(view.head.seq, view.head.hash),
            phase=options.phase, round=options.round, turn=turn, dice=fight.state.dice or options.dice or "",
            seed_revealed=fight.state.revealed_seed is not None, ended=fight.state.ending is not None,
            published=settings.published, waiting=options.waiting, tracker=_tracker(fights, fight_id, sight, views),
            combatants=[_card(fights, fight_id, sight, v, budgets, settings.notes) for v in views],
            answers=[o for o in offers if o.command in answers_to], commands=ordered,
            gm_tools=[o for o in offers if o.command not in answers_to and o.actor is None],
            seats=list(fights.keep.seats(fight_id)) if sight.gm else [],
            note=settings.notes.get("fight", "") if sight.gm else "",
            hidden_by_gm=list(settings.hidden) if sight.gm else [],
            waiting_who=[names.get(w, w) for w in options.waiting.who] if options.waiting is not None else [])
        head = view.head.seq
        seed = bytes.fromhex(fight.state.revealed_seed) if fight.state.revealed_seed else None
    records = [r for r in fights.store.read(fight_id, 0) if r.seq <= head]
    if sight.gm or settings.published:
        cards, _chart = entries(records, seed)
        result.log_cards = [(type(e).__name__, e) for e in cards[-LOG_ENTRIES:]]
    else:
        seen = [seen_event(r, sight) for r in records[-LOG_ENTRIES:]]
        result.log_lines = [(s.seq, (s.type or "something happened").replace("_", " "), _seen_line(s)) for s in seen]
    return result


def panel_html(fights: Fights, fight_id: str, seat: Seat) -> str:
    """The table fragment for ``seat``, rendered."""
    return ENV.get_template("panel.html.j2").render(p=panel(fights, fight_id, seat))


def version_tag(fights: Fights, fight_id: str, seat: Seat) -> str:
    """What the fragment of ``seat`` depends on, as a tag (``X-Table-Tag``): an HMAC, under a secret of the
    server's keep, of what this seat's view is made from: the head's seq, the seat, the HP display, whether the log
    is published and which combatants the seat sees; the GM's also of every table setting and the seats made. A
    player's tag is a function of its own view alone (no hidden id, no note, no hash enters it), and without the
    key it confirms no guess at all. The page's look every few seconds costs an HMAC, not a render, when none of it
    changed."""
    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        head = fights.view(fight_id, fight).head
        settings = fights.settings(fight_id)
        sight = fights.sight(fight_id, seat, fight)
        seen = sorted(who for who in fight.state.combatants if sight.sees(who))
        facts: list[Any] = [fight_id, head.seq, seat.kind, seat.name, list(seat.combatants), settings.hp_display,
                            settings.published, seen]
        if sight.gm:
            facts += [msgspec.to_builtins(settings), len(fights.keep.seats(fight_id))]
    key = fights.keep.secret("table-tag")
    return '"' + hmac.new(key, msgspec.json.encode(facts), hashlib.sha256).hexdigest()[:32] + '"'


def _page(name: str, **context: Any) -> Response[bytes]:
    body = ENV.get_template(name).render(**context)
    return Response(body.encode(), media_type="text/html; charset=utf-8", headers=_HEADERS)


def bundled_sheets() -> dict[str, Any]:
    """The bundled Ember Ford sheets, as JSON values by id."""
    found: dict[str, Any] = {}
    for entry in sorted(_SHEETS.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            sheet = load_sheet(str(entry))
            found[sheet.id] = msgspec.to_builtins(sheet)
    return found


def table_routes(fights: Fights) -> list[Any]:
    """The page routes, bound to ``fights``."""

    @get("/", sync_to_thread=True, include_in_schema=False)
    def index() -> Response[bytes]:
        sheets = bundled_sheets()
        return _page("index.html.j2", sheets=sheets, fights=list(fights.store.fights()))

    @get("/table/{fight_id:str}", sync_to_thread=False, include_in_schema=False)
    def table(fight_id: FromPath[str]) -> Response[bytes]:
        return _page("table.html.j2", fight_id=fight_id)

    @get("/sheets", sync_to_thread=True, include_in_schema=False)
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

    @get("/fights/{fight_id:str}/table", sync_to_thread=True, include_in_schema=False)
    def fragment(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> Response[bytes]:
        _token, seat = _seat(request, fights, fight_id)
        tag = version_tag(fights, fight_id, seat)
        headers = {"Cache-Control": "no-store", "X-Table-Tag": tag}
        if request.headers.get("x-table-tag") == tag:  # the page has it already (no 304: nothing is cached)
            return Response(b"", status_code=204, headers=headers)
        return Response(panel_html(fights, fight_id, seat).encode(), media_type="text/html; charset=utf-8",
                        headers=headers)

    return [index, table, sheets, static, fragment]
