"""What the HTTP resources of ``omen serve`` share: their wire types, problem documents (RFC 9457), the fights this
process holds (:class:`Fights`), a seat's access, a command run for a seat, and the live stream's messages.

The resources themselves, and the app assembled from every module's routes, are :mod:`omen_server.asgi`'s (above
this module, the seats', the staging's and the table page's).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import secrets
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, TypeVar, Union, get_args

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.params import HeaderParameter
from litestar.response import ServerSentEventMessage
from litestar.types import ASGIApp

from omen_core import Fight, OmenError, SeededDice
from omen_core.commands import AnswerDecision, Command, Join, RevealSeed, StartFight, Undo
from omen_core.content import (
    AbilityLibrary,
    CombatantSheet,
    Ruleset,
    decode_content,
    in_words,
    name_keys,
    reason_and_path,
    with_abilities,
)
from omen_core.decisions import OPTIONS_HINT
from omen_core.dice import (
    FacesNeeded,
    ManualDice,
    NeededDie,
    Stop,
    SurplusFaces,
    commitment,
    describe_dice,
    describe_rolls,
    needed_dice,
)
from omen_core.errors import (
    BadInput,
    ChainBroken,
    ConcurrencyError,
    ContentError,
    InvalidCommand,
    InvalidDieFace,
    KeyReused,
    LogCorrupted,
    RuleViolation,
    StoreUnavailable,
    UnknownCombatant,
    UnknownFight,
)
from omen_core.events import CombatantJoined, FightStarted
from omen_core.extensions import window
from omen_core.hooks import ExtensionFailed
from omen_core.limits import MAX_LISTED, MAX_WHOLE, beyond_whole, digit_run, json_error_words, named_twice
from omen_core.machine import Phase
from omen_core.options import DiceRoll, Options, PhaseName, Waiting
from omen_core.options import options as options_of
from omen_core.parts import DiceSourceKind
from omen_core.seats import PUBLIC_GEAR_NAMES, gear_fields, gm_arguments, hidden_from_players
from omen_core.state import FightState
from omen_core.store import EventStore
from omen_core.store.base import FIGHT_ID, FIGHT_ID_WORDS
from omen_core.store.postgres import NoOmenTables

from . import guard
from .keep import PENDING, AnyKeep, Founding, Seat, token_hash
from .limits import (
    EVENTS_PAGE,
    FIGHT_IDLE,
    FIGHTS_HELD,
    FIGHTS_PAGE,
    IDEMPOTENCY_WAIT,
    MAX_BODY_BYTES,
    MAX_COMBATANTS,
    MAX_IDEMPOTENCY_KEY,
    MAX_NAME,
    MAX_NOTE,
    MAX_PUBLIC_EFFECTS,
    MAX_SEQ,
    MAX_TITLE,
    MAX_TOKEN,
)
from .views import (
    NAMING_FIELDS,
    PLAYER_COMMANDS,
    CombatantView,
    HpDisplay,
    SeatIndex,
    SeenEvent,
    Sight,
    actor_of,
    names_in,
    player_may_act,
    scrub,
    seat_options,
    seen_event,
    typed_in,
)

__all__ = ["Fights", "Head", "Created", "FightSummary", "FightsPage", "OptionsView", "CommandRequest",
           "CommandResult", "EventsPage", "Problem", "NeededDie", "CreateFight", "TableSettings", "NewSeat",
           "SeatInfo", "SeatEntry", "SeatMade", "StateView", "SettingsChange", "VerifyView", "HttpCommand",
           "HTTP_COMMANDS", "ContentText", "ContentRead", "read_pasted", "may_give_as_sent", "wholes_within",
           "head_as_get", "ENDLESS", "IdempotencyKeyHeader"]

PROBLEM = "application/problem+json"
#: The ``Idempotency-Key`` header a POST may carry (creating a fight, a seat, a command, dice for a staged one).
IdempotencyKeyHeader = Annotated[str | None, HeaderParameter(name="Idempotency-Key", required=False, min_length=1,
                                                             max_length=MAX_IDEMPOTENCY_KEY)]
T = TypeVar("T")
PAGE = EVENTS_PAGE  # events per page, at most

if TYPE_CHECKING:
    HttpCommand = Command
else:
    HttpCommand = Union[tuple(kind for kind in get_args(Command) if kind not in (StartFight, Join))]  # noqa: UP007
#: The commands HTTP takes: every command of the scenario vocabulary but ``start_fight`` and ``join`` (a fight is
#: started, its roster joined, by ``POST /fights``, all at once).

Title = Annotated[str, msgspec.Meta(max_length=MAX_TITLE, description=f"at most {MAX_TITLE} characters")]
Note = Annotated[str, msgspec.Meta(max_length=MAX_NOTE, description=f"at most {MAX_NOTE} characters")]
#: A key of the GM's notes: a combatant's id, or ``fight``.
NoteKey = Annotated[str, msgspec.Meta(max_length=64)]
#: The GM's notes, by combatant id or ``fight``.
Notes = Annotated[dict[NoteKey, Note], msgspec.Meta(max_length=MAX_COMBATANTS + 1)]
#: Combatant ids, as many as a fight may hold.
Ids = Annotated[tuple[Annotated[str, msgspec.Meta(max_length=64)], ...], msgspec.Meta(max_length=MAX_COMBATANTS)]
Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEQ)]
#: Names of save effects (free text the GM wrote in ``call_save``), as many as a fight's settings keep.
EffectNames = Annotated[tuple[Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TITLE)], ...],
                        msgspec.Meta(max_length=MAX_PUBLIC_EFFECTS)]


# -- what goes over the wire ---------------------------------------------------------------------------------


class Head(msgspec.Struct, frozen=True, kw_only=True):
    """The last event of a fight: its seq and hash (``omen verify LOG --head SEQ:HASH`` witnesses it)."""

    seq: int
    hash: str


class CreateFight(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new fight: its id (made up if left out), title, dice (seeded: the server rolls and keeps the seed;
    manual: every command carries its faces), ruleset (default: the core ruleset) and combatants."""

    id: Annotated[str, msgspec.Meta(pattern=FIGHT_ID.pattern)] | None = None
    title: Title = ""
    dice: Literal["seeded", "manual"] = "seeded"
    ruleset: Ruleset | None = None
    combatants: Annotated[tuple[CombatantSheet, ...], msgspec.Meta(max_length=MAX_COMBATANTS)] = ()
    hp_display: HpDisplay = "banded"
    hidden: Ids = ()
    notes: Notes = {}
    physical: Ids = ()


class ContentText(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Content written as a GM writes it for ``omen run`` (docs/content.md), to read before ``POST /fights``:
    ``kind`` ``sheets`` (one sheet, or several as ``[[combatants]]`` tables) or ``ruleset`` (a whole ruleset);
    ``text`` the TOML; ``name`` what its errors call it (``kael.toml``; default ``the pasted sheets`` or ``the
    pasted ruleset``); with sheets, ``abilities``, a library the sheets list abilities of by id. Several sheet
    files pasted one after another, each under its own ``[[combatants]]`` line, are read one by one.)"""

    kind: Literal["sheets", "ruleset"]
    text: str
    name: Annotated[str, msgspec.Meta(max_length=200)] = ""
    abilities: str = ""
    """With ``sheets``: an ability library in TOML (``[abilities.<id>]``, docs/abilities.md, as a scenario's
    ``abilities`` file), each ability a sheet lists by id that it writes out written into that sheet."""
    abilities_name: Annotated[str, msgspec.Meta(max_length=200)] = ""
    """What the library's errors call it (``party-abilities.toml``; default ``the pasted abilities``)."""


class ContentRead(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Content read and checked (:class:`ContentText`), in JSON as ``POST /fights`` takes it: ``sheets`` (each a
    sheet of ``combatants``) or ``ruleset``, the one asked for (the other left out)."""

    kind: Literal["sheets", "ruleset"]
    sheets: tuple[CombatantSheet, ...] | None = None
    ruleset: Ruleset | None = None


class TableSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How the table sees a fight, kept by the server outside the log (GM only): how players and spectators see
    others' HP (``exact``, ``banded``: unhurt / hurt / bloodied / down, or ``hidden``), the combatants hidden
    from them until the GM reveals them, the GM's notes (by combatant id, or ``fight``), whether the GM has
    published the log (then every seat may read it whole: ``GET /fights/{id}/log``), and the save effects whose
    names every seat sees (the others' are ``a save`` to a seat that does not play the caller), and, in a seeded
    fight, the combatants whose dice are physical: typed in by whoever plays them, the rest drawn from the seed
    (docs/server.md, "Physical dice in a seeded fight")."""

    hp_display: HpDisplay = "banded"
    hidden: tuple[str, ...] = ()
    notes: dict[str, str] = {}
    published: bool = False
    public_effects: tuple[str, ...] = ()
    physical: tuple[str, ...] = ()


class SettingsChange(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A change to the table settings (GM only); what is left out stays as it is. ``reveal`` takes combatants out
    of ``hidden``, ``hide`` puts them in; ``notes`` replaces the notes it names (an empty note deletes it);
    ``publish`` publishes the log to every seat (it cannot be taken back); ``reveal_effects`` makes the names of
    save effects public, ``hide_effects`` makes them the GM's again; ``physical``, where given, is the whole list
    of combatants whose dice are physical in a seeded fight (``[]``: every die the seed's again)."""

    hp_display: HpDisplay | None = None
    reveal: Ids = ()
    hide: Ids = ()
    notes: Notes = {}
    publish: bool = False
    reveal_effects: EffectNames = ()
    hide_effects: EffectNames = ()
    physical: Ids | None = None


#: A seat's name as the table reads it (``by`` in its commands, the GM's list of seats): no control character nor
#: bidirectional control nor line separator, as a combatant's or an ability's name (:data:`omen_core.content.Name`):
#: U+202E in a seat's name reversed what the GM's page showed after it (a tester); empty for no name.
SeatName = Annotated[str, msgspec.Meta(
    max_length=MAX_NAME,
    pattern=r"^[^\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]*$(?!\n)",
    description=f"a seat's name: up to {MAX_NAME} characters, none of them a control character (C0, C1, DEL) nor a "
                "bidirectional control (a mark, an embedding, an override such as U+202E, an isolate) nor a line or "
                "paragraph separator")]

_SEAT_NAME: Any = get_args(SeatName)[1]
_SEAT_NAME_WORDS = str(_SEAT_NAME.description)


class NewSeat(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A seat the GM makes: a player's (the combatants it plays: at least one) or a spectator's (none), and a
    name for the table (``by`` in the commands it gives)."""

    kind: Literal["player", "spectator"]
    name: SeatName = ""
    combatants: Ids = ()


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A seat: its kind, name and combatants (never its token); ``physical``, of the combatants it gives dice for,
    those whose dice are physical now in a seeded fight (the GM: every one), typed in when the server asks."""

    kind: Literal["gm", "player", "spectator"]
    name: str
    combatants: tuple[str, ...]
    physical: tuple[str, ...] = ()


class SeatEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A seat as the GM manages it: its id, kind, name and combatants; its token and the path of its link
    (``/table/{fight}#token=…``: made again from the GM's token; a seat made before seats had ids has none), or
    ``revoked``."""

    id: str
    kind: Literal["gm", "player", "spectator"]
    name: str
    combatants: tuple[str, ...]
    revoked: bool = False
    token: str | None = None
    link: str | None = None


class SeatMade(msgspec.Struct, frozen=True, kw_only=True):
    """A seat made (or reissued): its token (only its hash is kept; the GM's page makes it again from the GM's
    token), the seat, and its id (``/fights/{id}/seats/{seat}/…``)."""

    token: str
    seat: SeatInfo
    id: str = ""


class StateView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The fight as this seat sees it now: phase, round, whose turn, the open decision, every combatant it may
    see (:class:`~omen_server.views.CombatantView`), the seat itself, and (the GM only) the table settings."""

    head: Head
    seat: SeatInfo
    phase: PhaseName
    round: int
    turn: str | None
    dice: DiceSourceKind | None
    waiting: Waiting | None
    combatants: tuple[CombatantView, ...]
    seed_revealed: bool
    ended: bool
    settings: TableSettings | None = None


class VerifyView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``omen verify`` on the stored fight: whether it is clean, how many events it checked, whether the seed is
    revealed (then every seeded die is checked against it), and the head; how many seeded dice it checked to the GM,
    and to every seat once the seed is revealed (before, the count would tell a player how many dice the combatants
    it does not see rolled); the findings to the GM (and to every seat once the log is published), their count to
    the others."""

    clean: bool
    events: int
    seed_revealed: bool
    problems: int
    head: Head | None
    seeded_dice: int | None = None
    findings: tuple[str, ...] | None = None


class Created(msgspec.Struct, frozen=True, kw_only=True):
    """A fight made: its id, the GM's token (shown this once; only its hash is kept), the head, the options."""

    fight_id: str
    gm_token: str
    head: Head
    options: Options


class FightSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One fight of the store, as ``GET /fights`` lists it."""

    fight_id: str
    head: Head


class FightsPage(msgspec.Struct, frozen=True, kw_only=True):
    """Fights of the store after an id, in id order; ``next_after`` is the ``after`` of the next page (None: no
    more now)."""

    fights: tuple[FightSummary, ...]
    next_after: str | None


class StagedView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A command staged until a seat supplies the faces of its own dice (a fight with physical dice): its id, the
    command as this seat may see it, who gave it, whose dice it waits for now (a seat's name, or ``the GM``),
    whether they are this seat's (``yours``), to that seat and the GM the rolls to give next (in C29 order), and
    to the GM alone how many faces are in already (the count tells how many dice others' sheets rolled)."""

    id: str
    command: dict[str, Any]
    by: str
    awaiting: str
    yours: bool = False
    rolls: tuple[DiceRoll, ...] = ()
    given: int = 0


class OptionsView(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the fight waits for now (``Fight.options()``, as ``omen status --json``), and the head; ``staged``:
    a command waiting for a seat's dice, if any."""

    head: Head
    options: Options
    staged: StagedView | None = None


class CommandRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A command (``omen schema --of command``) and the version the client saw: if the fight has moved on
    since, nothing is appended (409). Left out, the command applies to whatever version the fight is at.
    ``stage``: in a fight whose dice are typed in, a command whose next missing dice are another seat's is staged
    until that seat gives them (202) instead of refused (docs/server.md, "Players roll their own dice"); while
    another command of the fight is staged, a command sent with ``stage`` is refused (409 dice-staged), whether or
    not it needs dice."""

    command: HttpCommand
    expected_version: Seq | None = None
    stage: bool = False


class CommandResult(msgspec.Struct, frozen=True, kw_only=True):
    """The events a command appended (as the seat that gave it sees them), the new head, and what the fight waits
    for next (for that seat)."""

    head: Head
    events: tuple[SeenEvent, ...]
    options: Options


class EventsPage(msgspec.Struct, frozen=True, kw_only=True):
    """Events after a seq, in order, as this seat sees them; ``next_after`` is the ``after`` of the next page
    (None: no more now)."""

    head: Head
    events: tuple[SeenEvent, ...]
    next_after: int | None


class Problem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An error (RFC 9457): ``type`` names its kind, ``detail`` says what and where; ``rule`` is the rule id a
    command broke, ``field`` the path of a bad field, ``current_version`` the fight's version after a 409,
    ``needed`` the rolls still to make when faces are missing (C29 order; one entry per roll, its dice listed:
    ``vesh's hit: primary d8, fcs d6``), ``needed_dice`` the same one die at a time (:class:`NeededDie`), ``ref``
    the reference of a 500 in the server's log."""

    type: str
    title: str
    status: int
    detail: str
    rule: str | None = None
    field: str | None = None
    current_version: int | None = None
    needed: tuple[str, ...] | None = None
    needed_dice: tuple[NeededDie, ...] | None = None
    ref: str | None = None


# -- problems ------------------------------------------------------------------------------------------------

_ENCODER = msgspec.json.Encoder()


def _problem(status: int, kind: str, title: str, detail: str, headers: dict[str, str] | None = None,
             **facts: Any) -> Response[bytes]:
    body = Problem(type=f"/problems/{kind}", title=title, status=status, detail=detail, **facts)
    return Response(_ENCODER.encode(body), status_code=status, media_type=PROBLEM, headers=headers)


def _stop_seen(stop: Stop, sight: Sight) -> str:
    """Where a command stops first, as a player's seat may be told: naming only the answerers it sees, and, where
    it sees none, as "a decision this seat is not shown" (a hidden answerer read "(hidden)", and the verb's number
    counted them: found by a tester)."""
    seen = [who for who in stop.who if sight.sees(who)]
    return stop.words(seen) if seen or not stop.who else "a decision this seat is not shown"


def _omen_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """An OmenError as a problem: a stale version 409, a broken rule 422 with its id, bad input 400 with the
    field, an unknown fight 404. To a player or spectator, the detail says nothing its seat may not see: every
    hidden name and id and others' gear are scrubbed from the engine's words (what the seat typed is echoed as
    given), and missing faces list only its own dice."""
    sight: Sight = getattr(request.state, "sight", None) or Sight(kind="gm")
    typed: list[str] = getattr(request.state, "typed", None) or []
    if isinstance(exc, ExtensionFailed):
        return extension_problem(exc, sight, typed)
    if isinstance(exc, ConcurrencyError):
        return _problem(409, "stale-version", "The fight has moved on", str(exc), current_version=exc.actual)
    if isinstance(exc, UnknownFight):
        return _problem(404, "unknown-fight", "No such fight", f"no fight {exc.fight_id!r}")
    if isinstance(exc, UnknownCombatant):  # a rule refusal all the same, pointing at the name it did not know
        found = _path_naming(getattr(request.state, "command", None), exc.combatant)
        words = str(exc) if sight.gm else _unnamable(exc)
        return _problem(422, "rule-violation", "A rule refuses this command",
                        scrub(words + (f" (at {found})" if found else ""), sight, typed), rule=exc.rule,
                        field=found)
    if isinstance(exc, RuleViolation):  # a field the rule names is the command's own: in the request, under $.command
        field = exc.field_under("$.command")
        words = _http_words(request, scrub(str(exc), sight, typed))
        return _problem(422, "rule-violation", "A rule refuses this command",
                        words + (f" (at {field})" if field else ""), rule=exc.rule,
                        field=field)
    if isinstance(exc, InvalidCommand):  # its path is the command's own: in the request, under $.command
        field = exc.path if exc.command == "command_issued" else "$.command" + exc.path.removeprefix("$")
        return _problem(400, "invalid-command", "The command does not validate",
                        scrub(f"{exc.command}: {exc.reason} (at {field})", sight, typed), field=field)
    if isinstance(exc, FacesNeeded):
        rolls = [r for r in exc.needed if sight.owns(r.roller)]
        needed = tuple(describe_dice([r]) for r in rolls)  # the detail's words: "kael's base defense: res d8"
        dice = needed_dice(rolls)
        detail = str(exc) if sight.gm else (
            "the faces given run short (C29: a command carries the faces of its dice in order, a roll's all "
            "together); yours: " + ("; ".join(needed) or "none")
            + "; the others' are given by the seat that plays each (the GM for a combatant no player seat plays; "
              "sent with \"stage\": true, the command waits for them), or in a seeded fight drawn from the seed "
              "(but for combatants whose dice are physical)")
        return _problem(422, "faces-needed", "The command needs the faces of its dice", detail, rule="C29",
                        needed=needed, needed_dice=dice, field=_dice_field(request))
    if isinstance(exc, SurplusFaces):
        detail = str(exc) if sight.gm else (
            f"{exc.given} {'face' if exc.given == 1 else 'faces'} given, but this command rolls fewer "
            + ("physical dice (the others are drawn from the seed)" if exc.physical else "dice") + "; yours: "
            + (describe_dice([r for r in exc.rolled if sight.owns(r.roller)]) or "none")
            + (f"; it stops first at {_stop_seen(exc.stop, sight)}" if exc.stop is not None else "")
            + "; nothing was written")  # the others' dice (their sizes are their sheets') are not listed
        return _problem(422, "surplus-faces", "More faces than the command rolls", detail, rule="C29",
                        field=_dice_field(request))
    if isinstance(exc, StoreUnavailable):  # before BadInput, which it also is
        return _unavailable(request, exc)
    if isinstance(exc, KeyReused):  # to a player, not which command holds the key, nor where (it may be hidden)
        detail = str(exc) if sight.gm else (f"idempotency key {exc.key!r} is taken by another command of this "
                                            "fight: a key names one command (choose another)")
        return _problem(422, "idempotency-key-reused", "This key was used for another request",
                        scrub(detail, sight, typed), field="$.command.idempotency_key")
    if isinstance(exc, InvalidDieFace):  # a face typed in that its die cannot show: the command's dice, C29's order
        field = _dice_field(request)
        offset = getattr(request.state, "dice_offset", 0)  # the faces staged before this request's
        if exc.index is not None and exc.index >= offset:  # the face at its place in this request, as `field` says
            exc = InvalidDieFace(exc.face, exc.sides, exc.roll, exc.index - offset, field)
            field += f"[{exc.index}]"
        return _problem(400, "bad-input", "Bad input", scrub(str(exc), sight, typed), field=field, rule="C29")
    if isinstance(exc, BadInput):
        return _problem(400, "bad-input", "Bad input", scrub(str(exc), sight, typed))
    return _problem(422, "refused", "The engine refuses this", scrub(str(exc), sight, typed))


class AppendedThenFailed(ExtensionFailed):
    """A command appended (seqs ``first`` to ``last``, the fight's head then ``head``), after which an extension
    failed while its answer (the options that follow) was worked out: :class:`ExtensionFailed`'s facts, and
    those."""

    def __init__(self, failed: ExtensionFailed, first: int, last: int, head: Head):
        super().__init__(failed.extension, failed.module, failed.hook, failed.error, failed.reason)
        self.first, self.last, self.head = first, last, head


def extension_problem(exc: ExtensionFailed, sight: Sight, typed: list[str]) -> Response[bytes]:
    """500 ``extension-failed``: an installed extension's code failed (to the GM, its id, module, row and what it
    raised, as :class:`ExtensionFailed` says; to any other seat, only that one failed); for a command already appended
    (:class:`AppendedThenFailed`), said first with its seqs and head, and ``current_version`` its last seq."""
    detail = scrub(str(exc), sight, typed) if sight.gm else (
        "an extension installed on this server failed (the GM is told which, and what it raised)")  # its id, its
    # module and its error name an ability a player's seat may not be shown (found by an extension tester)
    if isinstance(exc, AppendedThenFailed):
        seqs = f"seq {exc.first}" if exc.first == exc.last else f"seqs {exc.first}-{exc.last}"
        return _problem(500, "extension-failed", "An extension failed",
                        f"the command was appended ({seqs}, head {exc.head.seq}:{exc.head.hash}), but its answer "
                        f"could not be made: {detail}; the fight's state and options fail the same way until the "
                        "extension is fixed or the command undone", current_version=exc.last)
    return _problem(500, "extension-failed", "An extension failed", detail)


#: How often (seconds) the server's log says again that the store cannot be used, while it cannot (one line, not
#: one per request).
UNAVAILABLE_SAID_EVERY = 60.0
_unavailable_said: dict[str, float] = {}


def _say_unavailable(exc: StoreUnavailable, method: str, path: str) -> None:
    """Log that the store cannot be used, and why: an error for a database without omen's tables, a warning for
    any other cause; at most once every :data:`UNAVAILABLE_SAID_EVERY` seconds for each (not once per request
    or stream look)."""
    import time

    kind = type(exc).__name__
    now = time.monotonic()
    if now - _unavailable_said.get(kind, -UNAVAILABLE_SAID_EVERY) >= UNAVAILABLE_SAID_EVERY:
        _unavailable_said[kind] = now
        say = guard.log.error if isinstance(exc, NoOmenTables) else guard.log.warning
        say("store unavailable", store=exc.path, reason=exc.reason, method=method, path=path)


def _unavailable(request: Request[Any, Any, Any], exc: StoreUnavailable) -> Response[bytes]:
    """503: the store cannot be used now (nothing was written). A database that has lost omen's tables says so
    (``omen db init`` makes them; waiting will not), and the server's log says so too, as an error, once every
    :data:`UNAVAILABLE_SAID_EVERY` seconds while it lasts (any other cause, as a warning)."""
    gone = isinstance(exc, NoOmenTables)
    _say_unavailable(exc, request.method, request.url.path)
    store = "the fight's store" if "fight_id" in request.path_params else "the store"
    if gone:
        detail = (f"{store} has no omen tables (the database was emptied or made again): nothing was written; "
                  "the operator creates them with omen db init URL, then requests are answered again")
    else:
        detail = f"{store} cannot be used now (nothing was written); retry shortly"
    return _problem(503, "store-unavailable", "The event store cannot be used now", detail,
                    headers={"Retry-After": "1"})


def _dice_field(request: Request[Any, Any, Any]) -> str:
    """Where a request's faces are: a command's ``$.command.dice``; POST /staged's ``$.dice``."""
    return getattr(request.state, "dice_field", None) or "$.command.dice"


def _http_words(request: Request[Any, Any, Any], detail: str) -> str:
    """The engine's words as an HTTP client reads them: what is accepted now is ``GET /fights/{id}/options``, not
    ``omen status`` (the command line keeps its wording)."""
    fight_id = request.path_params.get("fight_id", "{id}")
    return detail.replace(OPTIONS_HINT, f"GET /fights/{fight_id}/options lists every command this seat may give now")


_MISSING_PARAMETER = re.compile(r"Missing required (?P<source>query|header|cookie|path) parameter '(?P<name>[^']+)'")


#: What a value of a field checked by a pattern must look like, in words, where the pattern alone says it badly.
PATTERN_WORDS = {"query.origin": "Expected an origin: http:// or https://, a host name or a bracketed IPv6 address, "
                                  "an optional :port, and nothing after it (http://192.168.1.20:8000)"}


def _message(item: dict[str, Any], field: str | None) -> str:
    """A validation message in words: a pattern's mismatch said as :data:`PATTERN_WORDS` has it for its field, else
    with the pattern as written (the decoder doubles each backslash of a pattern it quotes, and the origin's detail
    showed it so; found by a tester)."""
    message = str(item.get("message", ""))
    if "matching regex" not in message:
        return message
    return PATTERN_WORDS.get(field or "", message.replace("\\\\", "\\"))


#: The headers omen reads, by the parameter name a validation error gives (``header.idempotency_key`` named the
#: header otherwise than its repeated form did, ``header.Idempotency-Key``: a client author).
_HEADER_NAMES = {"idempotency_key": "Idempotency-Key", "last_event_id": "Last-Event-ID", "table_tag": "X-Table-Tag"}


def _validation_problem(_request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """A request whose body or parameters do not decode: 400, naming the field (``$.command.who``)."""
    assert isinstance(exc, ValidationException)
    extra = [item for item in (exc.extra if isinstance(exc.extra, list) else []) if isinstance(item, dict)]
    first = extra[0] if extra else {}
    key = first.get("key")
    if key == "data" and first.get("message") == "'data'":  # no body at all
        return _problem(400, "invalid-body", "The request does not validate", "a JSON body is required (at $)",
                        field="$")
    if first.get("source") == "header" and isinstance(key, str):
        key = _HEADER_NAMES.get(key, key)  # the header as sent, as every other field naming a header says it
    field = None if key is None else ("$" if first.get("source", "body") == "body" else first["source"]) + (
        f".{key}" if key else "")
    missing = _MISSING_PARAMETER.match(str(exc.detail)) if not extra else None
    if missing is not None:  # a required parameter left out: Litestar names it only in words
        field = f"{missing['source']}.{missing['name']}"
    said = [f"{_message(item, field)} (at {field})" if item is first and field else _message(item, None)
            for item in extra]
    return _problem(400, "invalid-body", "The request does not validate", "; ".join(said) or str(exc.detail),
                    field=field)


def _http_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    assert isinstance(exc, HTTPException)
    kinds = {400: "bad-request", 401: "unauthorized", 403: "forbidden", 404: "not-found", 405: "method-not-allowed",
             409: "conflict", 413: "too-large", 415: "unsupported-media-type", 429: "too-many-streams"}
    detail = (f"the body is larger than {MAX_BODY_BYTES} bytes" if exc.status_code == 413 else str(exc.detail))
    if exc.status_code == 404 and detail == "Not Found":  # the router's: no route takes this path
        detail = (f"no route takes {request.url.path[:200]!r} (a seq in a path is a whole number; the routes are in "
                  "docs/server.md and GET /schema/openapi.json)")
    if isinstance(exc, Unprocessable):
        return _problem(422, exc.kind, exc.title, detail, field=exc.field, rule=exc.rule)
    headers = dict(exc.headers or {})
    for name in [name for name in headers if name.lower() == "allow"]:  # a 405 keeps Allow, HEAD where GET is
        headers["Allow"] = _allowed(headers.pop(name), request.url.path)
        if exc.status_code == 405 and detail == "Method Not Allowed":  # the router's words alone (a client author)
            detail = (f"{request.method} is not taken at {request.url.path[:200]!r}: it takes "
                      f"{headers['Allow']} (the Allow header says so too)")
    return _problem(exc.status_code, kinds.get(exc.status_code, "http-error"), _title(exc.status_code),
                    detail, headers=headers, field=getattr(exc, "field", None))


#: The path of the live stream, whose GET never ends: HEAD is not answered for it (405).
ENDLESS = re.compile(r"^/fights/[^/]+/stream$")


def head_as_get(app: ASGIApp) -> ASGIApp:
    """``app`` answering HEAD wherever it answers GET (RFC 9110 §9.3.2: the same status and headers, no body).
    Litestar routes HEAD only to a handler of its own that returns no body; so a HEAD request is given to ``app``
    as a GET (a copy of its scope: the HTTP server still knows it is HEAD, and sends no body) and every chunk of
    the body is dropped. The live stream (:data:`ENDLESS`) is left out: its GET never ends, so its HEAD is 405."""

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or ENDLESS.match(scope["path"]):
            await app(scope, receive, send)
            return

        async def headers_only(message: Any) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await app({**scope, "method": "GET"}, receive, headers_only)  # type: ignore[arg-type]

    return handle


def no_store_by_default(app: ASGIApp) -> ASGIApp:
    """``app`` with ``Cache-Control: no-store`` on every answer that does not say otherwise (the table's static
    files say ``no-cache``): a seat's state, options, explanations and refusals are its own, read with its token,
    and no cache between the server and the seat may keep them (RFC 9111 §5.2.2.5), errors included."""

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def stamped(message: Any) -> None:
            if message["type"] == "http.response.start" and not any(
                    name.lower() == b"cache-control" for name, _value in message.get("headers", ())):
                message = {**message, "headers": [*message.get("headers", ()), (b"cache-control", b"no-store")]}
            await send(message)

        await app(scope, receive, stamped)

    return handle


def _allowed(allow: str, path: str) -> str:
    """An ``Allow`` header's methods with HEAD where GET is (:func:`head_as_get`), the stream's aside."""
    methods = {m.strip() for m in allow.split(",") if m.strip()}
    if "GET" in methods and not ENDLESS.match(path):
        methods.add("HEAD")
    return ", ".join(sorted(methods))


#: What Litestar's ``InternalServerException`` says when the client left before its request's body was whole.
CLIENT_LEFT = "client disconnected prematurely"


def _internal_problem(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """An answer the server could not give: 500, logged with its traceback (guard.log_failure); the client gets
    the reference the log line carries, and nothing of the error itself. A client that left before its body was
    whole is no fault of the server's: one line at info, no traceback, a 400 nobody reads (each such request, which
    needs no token, logged 27 lines as an internal error: a security tester)."""
    if isinstance(exc, HTTPException) and exc.detail == CLIENT_LEFT:
        guard.log.info("client_left", method=request.method, path=request.url.path)
        return _problem(400, "invalid-body", _title(400), "the client left before the request's body was whole")
    ref = guard.log_failure(exc, request.method, request.url.path)
    return _problem(500, "internal-error", _title(500), "the server failed while answering this request; its log "
                    f"says why, under reference {ref}", ref=ref)


def _title(status: int) -> str:
    return {400: "Bad request", 401: "No valid token", 403: "This seat may not do that", 404: "Not found",
            405: "Method not allowed", 409: "Conflict", 413: "The body is too large",
            415: "The body is not sent as JSON", 422: "Refused by the rules", 429: "Too many streams",
            500: "Internal error", 503: "The event store cannot be used now"}.get(status, "HTTP error")


class Unauthorized(HTTPException):
    """401: no bearer token, or one this server never made, or one the GM revoked or replaced by a reissue."""

    status_code = 401


class TooManyStreams(HTTPException):
    """429: the token holds :data:`~omen_server.limits.STREAMS_PER_TOKEN` live streams open on this process already."""

    status_code = 429


class Forbidden(HTTPException):
    """403: a token of another fight, or a seat that may not do this; ``field``, where the request names what the
    seat may not do (the command's kind, ``$.command.command``, or the combatant it acts for, ``$.command.who``)."""

    status_code = 403

    def __init__(self, detail: str, field: str | None = None) -> None:
        super().__init__(detail=detail)
        self.field = field


class Unprocessable(HTTPException):
    """422: a well-formed request asking what cannot be (a player's seat playing no one) or naming what is not
    there (a combatant the fight does not hold): ``field`` is where, ``kind`` its problem type."""

    status_code = 422

    def __init__(self, detail: str, field: str, kind: str = "invalid-request",
                 title: str = "The request cannot be done", rule: str | None = None) -> None:
        super().__init__(detail=detail)
        self.field, self.kind, self.title, self.rule = field, kind, title, rule


class Conflict(HTTPException):
    """409: what the request asks for clashes with what is there (an id taken, every seat made)."""

    status_code = 409


def _errors(*statuses: int) -> dict[int, ResponseSpec]:
    """The problem documents a handler may answer with, for its OpenAPI entry."""
    return {status: ResponseSpec(data_container=Problem, media_type=PROBLEM, generate_examples=False,
                                 description=_title(status)) for status in statuses}


# -- fights held in memory -------------------------------------------------------------------------------------


SEATS_HELD = 100_000  # seats a server remembers (a few hundred bytes each) before it reads them again
SEAT_TTL = 2.0  # seconds a seat read from the keep is trusted (a revoked token is refused by every server after it)



#: How :class:`Fights` finds the command staged for dice in a fight, as a seat sees it (None: none staged):
#: :func:`omen_server.staging.staged_view`, given by :func:`omen_server.asgi.create_app` (staging is above this
#: module: it runs commands through it).
StagedLookup = Callable[["Fights", str, Fight, Sight, Seat], "StagedView | None"]


class Fights:
    """The fights this process serves: the store, the keep, and a loaded ``Fight`` per id, each behind its own
    lock so that commands to one fight are decided one at a time (other processes are kept out by the store's
    optimistic version check); ``staged_view`` finds the command staged for dice (:data:`StagedLookup`)."""

    def __init__(self, store: EventStore, keep: AnyKeep, staged_view: StagedLookup):
        self.store, self.keep, self.staged_view = store, keep, staged_view
        self._loaded: dict[str, Fight] = {}  # least recently used first (:meth:`_used`)
        self._used_at: dict[str, float] = {}  # when each fight held was last asked for
        self._views: dict[str, OptionsView] = {}
        self._heads: dict[str, dict[int, OptionsView]] = {}  # recent views by head seq (the stream's, per head)
        self.pokes: dict[str, int] = {}  # bumped when what a seat sees changes without the head moving
        self.appended: dict[str, int] = {}  # the head each fight reached by this process's last append, or heard
        #                                    (PostgreSQL: every process's commits, NOTIFY: see listen_for_commits)
        self._indexes: dict[str, SeatIndex] = {}  # what the views need of each fight's log (views.SeatIndex)
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()
        self._seats: dict[str, tuple[Seat, float]] = {}  # by token hash: the seat, and when it was read
        self._setups: dict[str, int] = {}  # the last seq of each fight's set-up, once a command follows it
        self._creating = threading.local()  # whether this thread holds :meth:`creating`
        self.stopping = threading.Event()  # set when the server is told to stop: every stream ends at its next look
        self.streams: dict[str, weakref.WeakSet[Any]] = {}  # by token: the generators of its live streams

    def seat(self, token: str) -> Seat | None:
        """The seat a token speaks for, or None: read from the keep at most every SEAT_TTL seconds per token (a
        seat's kind and combatants never change, but the GM may revoke or reissue its token: this process forgets
        at once (:meth:`forget_seats`), another within SEAT_TTL; a token not yet known is asked for again, since
        another server may have just made it)."""
        import time

        key = token_hash(token)
        now = time.monotonic()
        held = self._seats.get(key)
        if held is not None and now - held[1] < SEAT_TTL:
            return held[0]
        seat = self.keep.seat(token)
        if seat is None:
            self._seats.pop(key, None)
            return None
        if len(self._seats) >= SEATS_HELD:
            self._seats.clear()
        self._seats[key] = (seat, now)
        return seat

    def forget_seats(self, fight_id: str) -> None:
        """Forget the seats of a fight read so far (the GM revoked or reissued one): read them again."""
        for key, (seat, _at) in list(self._seats.items()):
            if seat.fight_id == fight_id:
                self._seats.pop(key, None)
        self.poke(fight_id)

    def _forget_fight(self, fight_id: str) -> None:
        """Forget all this process holds of an id that has no log now (a fight of that id archived and deleted by
        the operator while the server ran, about to be created again): its seats, whose tokens the new fight's
        keep rows replace (they kept working in the new fight for up to SEAT_TTL: a tester), and what its views
        were built from (the heads by seq, the seat index, the set-up's end), none of which the new fight shares."""
        with self._guard:
            for held in (self._views, self._heads, self._indexes, self._setups, self._loaded, self.appended):
                held.pop(fight_id, None)
        self.forget_seats(fight_id)

    def _used(self, fight_id: str, fight: Fight) -> None:
        """Hold ``fight`` as the one used last; forget the fights no one asked for in :data:`FIGHT_IDLE` seconds
        and, past :data:`FIGHTS_HELD`, those used least recently, with what their views were built from (all of it
        read again from the store when next asked for: what a seat is answered does not change, only how soon)."""
        import time

        now = time.monotonic()
        with self._guard:
            self._loaded.pop(fight_id, None)
            self._loaded[fight_id] = fight
            self._used_at[fight_id] = now
            idle = [f for f in self._loaded if now - self._used_at.get(f, now) > FIGHT_IDLE]
            if len(self._loaded) <= FIGHTS_HELD and not idle:
                return
            for other in idle:
                del self._loaded[other]
            while len(self._loaded) > FIGHTS_HELD:
                del self._loaded[next(iter(self._loaded))]
            for held in (self._views, self._heads, self._indexes, self._setups, self._used_at):
                for other in [f for f in list(held) if f not in self._loaded]:  # (a snapshot: other threads add)
                    held.pop(other, None)

    def lock(self, fight_id: str) -> threading.RLock:
        """The lock of one fight."""
        with self._guard:
            return self._locks.setdefault(fight_id, threading.RLock())

    def fight(self, fight_id: str) -> Fight:
        """The fight, loaded once; what another process has appended to it since is taken in (``catch_up``:
        the new events folded from the state held, the whole fight walked again after an undo). Hold its
        lock."""
        fight = self._loaded.get(fight_id)
        if fight is not None and not self._caught_up(fight_id, fight):
            self._forget_fight(fight_id)  # another fight under the id now (retired and created again elsewhere)
            fight = None
        if fight is None:
            fight = Fight.load(self.store, fight_id)
            fight.dice = self.dice_for(fight_id, fight.state.seed_commitment)
        elif isinstance(fight.dice, SeededDice) and fight.dice.commitment != fight.state.seed_commitment:
            fight.dice = self.dice_for(fight_id, fight.state.seed_commitment)  # another server revealed (C42)
        self._used(fight_id, fight)
        return fight

    def _caught_up(self, fight_id: str, fight: Fight) -> bool:
        """Take in what another process appended to the fight held (``catch_up``), and say whether the store still
        holds that fight: its log no shorter, its last event the one held where it is as long (the store's
        ``head``, one look where ``version`` was one), and what was appended since continuing the held hash chain.
        A log the operator retired and whose id was created again elsewhere is another fight: the state held was
        served to the new fight's seats, then a broken chain (an operator tester), or at the same length, for
        good (a reviewer)."""
        head = getattr(self.store, "head", None)
        now, last = head(fight_id) if head is not None else (self.store.version(fight_id), None)
        if now < fight.version or (now == fight.version and last is not None and last != fight.state.last_hash):
            return False
        if now > fight.version:
            try:
                fight.catch_up()
            except (ChainBroken, LogCorrupted):  # the next event does not continue the chain held: another fight
                return False
        return True

    def dice_for(self, fight_id: str, pledge: str | None) -> SeededDice | None:
        """The seeded dice of a fight: the kept seed that hashes to the commitment the dice are drawn under now (the
        fight's seed, or the fresh one a reveal committed to, C42, kept under ``ID/next`` before the reveal was
        appended and under the fight's id after); None for a fight whose dice are not seeded here."""
        for key in (fight_id, f"{fight_id}/next"):
            seed = self.keep.seed(key)
            if seed is not None and commitment(seed) == pledge:
                return SeededDice(seed)
        return None

    def view(self, fight_id: str, fight: Fight | None = None) -> OptionsView:
        """The head and options of a fight now, computed once per head (every stream and answer shares it);
        ``fight``: the fight as a caller holding its lock has just had it from :meth:`fight` (no second look
        at the store)."""
        with self.lock(fight_id):
            fight = fight or self.fight(fight_id)
            cached = self._views.get(fight_id)
            if cached is None or cached.head.hash != fight.state.last_hash:
                options = self.http_options(fight_id, fight.state, fight.options())
                cached = self._views[fight_id] = OptionsView(head=head_of(fight), options=options)
                _remember_head(self._heads.setdefault(fight_id, {}), cached)
            return cached

    def view_at(self, fight_id: str, seq: int) -> OptionsView:
        """The head and options of a fight as they stood at ``seq``, the last event of a command's batch (an
        earlier head the stream passed: its options message): kept from when it was the head, or computed from
        the state after it (``Fight.state_after``)."""
        with self.lock(fight_id):
            fight = self.fight(fight_id)
            kept = self._heads.get(fight_id, {}).get(seq)
            if kept is not None:
                return kept
            if seq >= fight.version:
                return self.view(fight_id, fight)
            state = fight.state_after(seq)
            view = OptionsView(head=Head(seq=state.version, hash=state.last_hash),
                               options=self.http_options(fight_id, state, options_of(state)))
            _remember_head(self._heads.setdefault(fight_id, {}), view)
            return view

    def seat_view(self, fight_id: str, fight: Fight, sight: Sight, seat: Seat | None = None) -> OptionsView:
        """The view at the head now as the seat of ``sight`` sees it, with the command staged for dice, if any
        (hold the fight's lock)."""
        view = self.view(fight_id, fight)
        if _lists_shift(fight.state, sight):
            view = OptionsView(head=view.head,
                               options=self.http_options(fight_id, fight.state, fight.options(unseen=sight.hidden)))
        view = _seat_view(view, sight)
        if seat is None:
            return view
        found = self.staged_view(self, fight_id, fight, sight, seat)
        return view if found is None else msgspec.structs.replace(view, staged=found)

    def setup_end(self, fight_id: str) -> int:
        """The last seq of the fight's set-up: the ``fight_started`` and ``combatant_joined`` batches its log opens
        with (``POST /fights`` appends them all at once; a scenario run by ``omen run`` the same, its joins before
        its first other command). Kept once another command follows them: a log's start never changes."""
        kept = self._setups.get(fight_id)
        if kept is not None:
            return kept
        end = 0
        for rec in self.store.read(fight_id, 0):
            if not isinstance(rec.event, FightStarted | CombatantJoined):
                self._setups[fight_id] = end
                break
            end = rec.seq
        return end

    def http_options(self, fight_id: str, state: FightState, options: Options) -> Options:
        """``options`` as the server offers them: an undo is not offered when it would go back into the fight's
        set-up (:func:`refuse_setup_undo`), so that what is offered is what is accepted."""
        if not 0 < state.undo_point <= self.setup_end(fight_id):
            return options
        return msgspec.structs.replace(options, offers=tuple(o for o in options.offers if o.command != "undo"))

    def poke(self, fight_id: str) -> None:
        """Tell this process's streams of a fight to look at their views now: something a seat sees changed
        without the head moving (the table settings, dice staged)."""
        self.pokes[fight_id] = self.pokes.get(fight_id, 0) + 1

    @contextlib.contextmanager
    def creating(self) -> Iterator[None]:
        """Hold while a fight is created (:meth:`Keep.creating`: one creation at a time among every process on a
        keep that is not the store's database; nothing is held on the store's own); a keyed creation holds it
        while it looks for what its key made already, too, so that no other process is between keeping that
        answer and appending its log meanwhile. Held again by the same thread, it is held once."""
        if getattr(self._creating, "held", False):
            yield
            return
        with self.keep.creating(self.store):
            self._creating.held = True
            try:
                yield
            finally:
                self._creating.held = False

    def start(self, fight_id: str, spec: CreateFight, gm_token: str,
              answer: tuple[str, str, str, bytes] | None = None) -> Fight:
        """Start a fight: the whole set-up in one atomic append, its GM seat (``gm_token``'s hash), seed and table
        settings kept with it (:meth:`Keep.found`: in the log's transaction where the keep is the store's
        database, else before the log, so that no log is ever left without its seat and seed); ``answer``: the
        kept answer of an idempotent ``POST /fights`` (:class:`AnswerTaken` if its key names a fight already,
        made meanwhile by another server: nothing of this one is kept). A fight of that id stored already, or
        stored by another server meanwhile, is 409."""
        dice: SeededDice | ManualDice = SeededDice.fresh() if spec.dice == "seeded" else ManualDice()
        settings = _ENCODER.encode(TableSettings(hp_display=spec.hp_display, hidden=spec.hidden, notes=spec.notes,
                                                   physical=tuple(dict.fromkeys(spec.physical))))
        rows = Founding(fight_id, gm_token, dice.seed if isinstance(dice, SeededDice) else None, settings, answer)
        with self.creating(), self.lock(fight_id):
            if self.store.version(fight_id):
                raise Conflict(detail=f"a fight {fight_id!r} already exists")
            held = self.store.fights() if getattr(self.store, "single_file", False) else []
            if held:  # (it was a 422 "The engine refuses this", the store's own words in its detail: a tester)
                raise Conflict(detail=f"this server's store is one JSON Lines file, which keeps one fight, and it "
                                      f"holds {held[0]!r} already: serve a directory of logs "
                                      "(--store fights/) or a database (sqlite:///omen.db) to keep several")
            self._forget_fight(fight_id)
            store = self.keep.found(rows, self.store)
            self._forget_fight(fight_id)  # again: a request with an earlier seat's token between the two read its row
            try:
                fight = Fight.start(store, fight_id, dice=dice, ruleset=spec.ruleset, title=spec.title,
                                    combatants=spec.combatants)
            except ConcurrencyError:  # another server made the id first (its version check, not ours, saw it)
                self.keep.unfound(rows, self.store)
                raise Conflict(detail=f"a fight {fight_id!r} already exists") from None
            except BaseException as exc:
                with contextlib.suppress(StoreUnavailable):
                    self.keep.unfound(rows, self.store)
                placed = _refused_sheet(exc) if isinstance(exc, RuleViolation) else None
                if placed is not None:
                    raise placed from exc
                raise
            fight.store = self.store
            self._used(fight_id, fight)  # the fight as started is the fight loaded: no second replay
        self.poke(fight_id)
        return fight

    def whole_for(self, fight_id: str, seat: Seat) -> bool:
        """Whether ``seat`` may read the fight whole: the GM always, every seat once the log is published
        (:class:`UnknownFight` if there is no such fight)."""
        with self.lock(fight_id):
            self.fight(fight_id)
            return seat.kind == "gm" or self.settings(fight_id).published

    def settings(self, fight_id: str) -> TableSettings:
        """The table settings of a fight (the defaults for a fight this server did not start)."""
        body = self.keep.settings(fight_id)
        return TableSettings() if body is None else msgspec.json.decode(body, type=TableSettings)

    def put_settings(self, fight_id: str, settings: TableSettings) -> None:
        """Keep a fight's table settings."""
        self.keep.put_settings(fight_id, _ENCODER.encode(settings))
        self.poke(fight_id)

    def index(self, fight_id: str) -> SeatIndex:
        """What the views need of a fight's log (:class:`~omen_server.views.SeatIndex`), kept up to date as it grows
        (hold the fight's lock)."""
        version = self.fight(fight_id).version  # first: a fight found replaced forgets its index (a reviewer)
        index = self._indexes.setdefault(fight_id, SeatIndex())
        if index.version < version:
            for rec in self.store.read(fight_id, index.version):
                if rec.seq > version:
                    break
                index.see(rec)
        return index

    def sight(self, fight_id: str, seat: Seat, fight: Fight | None = None) -> Sight:
        """What ``seat`` may see of the fight now (``fight`` as for :meth:`view`)."""
        with self.lock(fight_id):
            fight = fight or self.fight(fight_id)
            if seat.kind == "gm":
                return Sight(kind="gm")
            settings = self.settings(fight_id)
            return self.index(fight_id).sight(seat.kind, seat.combatants, fight.state, settings.hidden,
                                              settings.hp_display, settings.public_effects)


def fights_page(store: EventStore, after: str = "", limit: int = FIGHTS_PAGE) -> FightsPage:
    """The fights of ``store`` whose ids sort after ``after``, at most ``limit``, with their heads."""
    ids = [fight_id for fight_id in store.fights() if fight_id > after]
    page = ids[:limit]
    return FightsPage(fights=tuple(FightSummary(fight_id=fight_id, head=_stored_head(store, fight_id))
                                   for fight_id in page), next_after=page[-1] if len(ids) > limit else None)


HEADS_KEPT = 64  # the views of a fight's recent heads kept for the streams (a few kB each)


def _remember_head(kept: dict[int, OptionsView], view: OptionsView) -> None:
    kept[view.head.seq] = view
    while len(kept) > HEADS_KEPT:
        del kept[min(kept)]


def _stored_head(store: EventStore, fight_id: str) -> Head:
    """The head of a stored fight, from its last event alone (no replay)."""
    last = next(iter(store.read(fight_id, store.version(fight_id) - 1)))
    return Head(seq=last.seq, hash=last.hash)


def head_of(fight: Fight) -> Head:
    """The head of a loaded fight."""
    return Head(seq=fight.version, hash=fight.state.last_hash)


# -- the resources ---------------------------------------------------------------------------------------------


def _bearer(request: Request[Any, Any, Any], what: str = "the fight's token") -> str:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(detail=f"send {what} as 'Authorization: Bearer <token>'")
    if len(token) > MAX_TOKEN:
        raise Unauthorized(detail=f"this token is not one this server made (omen's tokens are shorter than "
                                  f"{MAX_TOKEN} characters)")
    return token.strip()


def _seat(request: Request[Any, Any, Any], fights: Fights, fight_id: str) -> tuple[str, Seat]:
    token = _bearer(request)
    seat = fights.seat(token)
    if seat is None:
        why = fights.keep.retired(token)
        if why is not None:
            raise Unauthorized(detail="this seat's token was revoked by the GM: it opens nothing any more" if
                               why == "revoked" else "the GM reissued this seat: this token opens nothing any more "
                               "(ask the GM for the seat's new link)")
        raise Unauthorized(detail="this token is not one this server made (or the server's keep was lost)")
    if seat.fight_id != fight_id:
        raise Forbidden(detail=f"this token is for another fight, not {fight_id!r}")
    if seat.kind != "gm" and getattr(request.state, "sight", None) is None:  # an error before the seat's own sight
        request.state.sight = Sight(kind="spectator")  # is made (an extension failing as the state is read) says
    return token, seat  # only what a spectator may read: never the GM's words to a player's request


def _gm(request: Request[Any, Any, Any], fights: Fights, fight_id: str) -> str:
    token, seat = _seat(request, fights, fight_id)
    if seat.kind != "gm":
        raise Forbidden(detail=f"only the GM may do this (this is a {seat.kind}'s token)")
    return token


def _info(seat: Seat, physical: Collection[str] = ()) -> SeatInfo:
    return SeatInfo(kind=seat.kind, name=seat.name, combatants=seat.combatants,
                    physical=tuple(sorted(w for w in physical if seat.kind == "gm" or w in seat.combatants)))


def _may_give(seat: Seat, command: Command) -> None:
    """403 unless ``seat`` may give ``command``: the GM any; a player the commands of its own combatants
    (views.PLAYER_COMMANDS), without the arguments that are the GM's call (:data:`omen_core.seats.GM_ARGUMENTS`:
    a claim of high ground or Encircled, damage modifiers, consequences); a spectator none."""
    kind = str(type(command).__struct_config__.tag)
    _may_give_kind(seat, kind, actor_of(command))
    claimed = gm_arguments(command) if seat.kind != "gm" else ()
    if claimed:
        where = f"$.command.{claimed[0]}"
        raise Forbidden(detail=f"{' and '.join(claimed)} {'is' if len(claimed) == 1 else 'are'} the GM's call in a "
                               f"{kind}, not a player's (high ground "
                               "and Encircled: what qualifies is the GM's call, combat.txt §Special Combat Conditions, "
                               "C26, C27; damage modifiers and consequences are the GM's word): leave them out, or "
                               f"ask the GM, who may give this command with them (at {where})", field=where)


def _may_give_kind(seat: Seat, kind: str, actor: str | None) -> None:
    """:func:`_may_give` for a command of kind ``kind`` acting for ``actor`` (None: a GM's command)."""
    if seat.kind == "gm":
        return
    if seat.kind == "spectator":
        raise Forbidden(detail="a spectator's seat gives no commands")
    if actor is None:
        raise Forbidden(detail=f"{kind} is the GM's command; a player gives these for its own combatants "
                               f"({', '.join(seat.combatants)}): {', '.join(PLAYER_COMMANDS)} (at $.command.command)",
                        field="$.command.command")
    if actor not in seat.combatants:
        where = f"$.command.{PLAYER_COMMANDS.get(kind, 'who')}"
        raise Forbidden(detail=f"this seat plays {', '.join(seat.combatants)}, not {actor!r} (at {where})", field=where)


#: The kind (tag) of every command HTTP takes.
HTTP_COMMANDS = frozenset(str(kind.__struct_config__.tag) for kind in get_args(Command)
                          if kind not in (StartFight, Join))


def may_give_as_sent(seat: Seat, body: bytes) -> None:
    """403 for a command ``seat`` may not give, judged from the body as sent (its ``command``'s kind and actor),
    before anything decodes it strictly: a seat's right to give a command comes before the command's own
    consistency or validity (docs/server.md), and depends on nothing but the kind and the actor the seat typed. A
    body whose kind cannot be read (not JSON, an unknown kind, a name given twice) is left to the decoder, which
    says why (400)."""
    if seat.kind == "gm":
        return
    if seat.kind == "spectator":
        raise Forbidden(detail="a spectator's seat gives no commands")
    if named_twice(body) is not None:  # which copy counts is not to be read (I-JSON): the decoder refuses it, 400,
        return                          # whatever the order of the copies (the seat's check read the last)
    try:
        sent = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return
    command = sent.get("command") if isinstance(sent, dict) else None
    kind = command.get("command") if isinstance(command, dict) else None
    if not isinstance(kind, str) or kind not in HTTP_COMMANDS:
        return
    assert isinstance(command, dict)
    field = PLAYER_COMMANDS.get(kind)
    actor = None if field is None else command.get(field)
    if field is None or isinstance(actor, str):
        _may_give_kind(seat, kind, actor)


def _unnamable(exc: UnknownCombatant) -> str:
    """A player's or spectator's refusal of a name it may not give (:func:`_names_seen`): true whether the name is
    nobody's or a combatant hidden from the seat, and the same bytes in both cases (the engine's "no combatant
    'vesh' in this fight (joined: kael)" was false to a player who had watched Vesh join before the GM hid it)."""
    return (f"[{exc.rule}] no combatant {exc.combatant!r} that this seat can name (it can name: "
            f"{', '.join(exc.known) or 'none'})")


def _names_seen(command: Command, fight: Fight, sight: Sight) -> None:
    """A player's command naming a combatant its seat does not see is refused exactly as one naming nobody: the
    refusal lists only the combatants it sees (a hidden one's existence is not given away)."""
    if sight.gm:
        return
    seen = [who for who in fight.state.combatants if sight.sees(who)]
    for who in names_in(getattr(command, name, None) for name in NAMING_FIELDS):
        if who not in seen:
            raise UnknownCombatant(who, seen)


def _with_kept_seed(command: Command, fight: Fight) -> Command:
    """``reveal_seed`` without a seed reveals the one the server keeps, which the fight rolls with (the GM never
    needs to see it before)."""
    if isinstance(command, RevealSeed) and not command.seed and isinstance(fight.dice, SeededDice):
        return msgspec.structs.replace(command, seed=fight.dice.seed.hex())
    return command


def _fresh_seed(fights: Fights, fight_id: str, fight: Fight, command: Command) -> bytes | None:
    """For a ``reveal_seed`` in a fight that goes on, the fresh seed it will commit to (C42): kept first (under
    ``ID/next``: a server that stops between the keep and the append loses nothing), then given to the fight's
    dice as the successor of the seed revealed; None for any other command."""
    if not fight.spends_seed(command) or not isinstance(fight.dice, SeededDice):
        return None
    fresh = secrets.token_bytes(32)
    fights.keep.put_seed(f"{fight_id}/next", fresh)
    fight.dice = SeededDice(fight.dice.seed, successors=[fresh])
    return fresh


def by_of(seat: Seat) -> str:
    """Who gives a command, for its ``command_issued``: ``gm``, ``player:NAME`` or ``player``."""
    return "gm" if seat.kind == "gm" else f"player:{seat.name}" if seat.name else "player"


#: A roll as a seat's faces meet it: whose, what for, and its dice as (pool, sides), in C29 order.
Rolled = tuple[str, str, tuple[tuple[str, int], ...]]


class NotYourFaces(Unprocessable):
    """422 ``surplus-faces``: a player's faces reach dice that are not its seat's to give (C29: each seat types its
    own dice; the others' are the GM's, or another player's)."""

    def __init__(self, given: int, own: Sequence[Rolled], field: str) -> None:
        mine = sum(len(pool) for _roller, _purpose, pool in own)
        said = describe_rolls(own)
        super().__init__(f"{given} {'face' if given == 1 else 'faces'} given, but this seat's dice here are {mine}"
                         + (f" ({said})" if said else "") + ": the dice after them are another seat's to give "
                         "(give yours alone; with \"stage\": true the command then waits for theirs) (C29); nothing "
                         "was written", field, "surplus-faces", "More faces than this seat's dice")


def command_rolls(state: FightState, command: Command) -> list[Rolled] | None:
    """The rolls ``command`` makes at ``state``, in C29 order (roller, purpose, pool), found by deciding it without
    its faces and writing nothing, before any face is looked at (a face checked against a die not the seat's would
    name that die, a hidden combatant's sheet, or its outcome); None if the rules refuse it."""
    from omen_core.decide import decide
    from omen_core.events import DiceRolled

    bare = msgspec.structs.replace(command, dice=None)
    try:
        return [(e.roller, e.purpose, tuple((d.pool, d.sides) for d in e.dice))
                for e in decide(state, bare, ManualDice()) if isinstance(e, DiceRolled)]
    except FacesNeeded as exc:
        return [(r.roller, r.purpose, tuple(r.pool)) for r in exc.needed]
    except OmenError:
        return None


def physical_now(fights: Fights, fight_id: str, fight: Fight) -> frozenset[str]:
    """The combatants whose dice are physical now (docs/server.md, "Physical dice in a seeded fight"): in a fight
    rolling seeded dice, those the table settings name, less any the table hides from the players that no player's
    seat plays (the GM's hidden or Unseen: while hidden its dice are the seed's, as waiting for the GM's die would
    tell of it). Hold the fight's lock."""
    if not isinstance(fight.dice, SeededDice):
        return frozenset()
    settings = fights.settings(fight_id)
    if not settings.physical:
        return frozenset()
    hidden = hidden_from_players(fight.state, settings.hidden)
    played = {c for row in fights.keep.seat_rows(fight_id) if row.kind == "player" and not row.revoked
              for c in row.combatants} if hidden else set()
    return frozenset(who for who in settings.physical if who not in hidden or who in played)


def own_faces_only(fight: Fight, command: Command, sight: Sight, given: int, field: str = "$.command.dice",
                   physical: Collection[str] = ()) -> None:
    """A player's or spectator's faces roll only its own combatants' dice (C29): the first ``given`` faces of
    ``command`` go to its dice in C29 order (found by deciding it without writing anything), and one reaching a
    die of a combatant the seat does not play is :class:`NotYourFaces` (the engine alone would take any face for
    any die: a player typed the GM's dice). In a seeded fight a player types only the dice of its combatants the
    GM made ``physical`` (none: every face is refused), and the faces go to physical dice alone, in C29 order
    (:meth:`omen_core.Fight.execute`)."""
    if sight.gm or not given:
        return
    if isinstance(fight.dice, SeededDice) and not any(who in physical for who in sight.own):
        # a seeded fight draws a player's dice from the seed unless the GM made them physical: its own faces would
        # be dice it chose (a tester's attack typed [8, 6] was taken, listed as provenance alone)
        raise Unprocessable(f"{given} {'face' if given == 1 else 'faces'} given, but this fight's dice are seeded: the "
                            "server draws this seat's dice from the seed, none typed (the GM may make a combatant's "
                            "dice physical: docs/server.md, \"Physical dice in a seeded fight\") (C29); nothing was "
                            f"written (at {field})", field, "surplus-faces", "More faces than this seat's dice", "C29")
    rolls = command_rolls(fight.state, command)
    if rolls is None:
        return  # the command is refused anyway, as it says when it is run
    if physical:
        rolls = [roll for roll in rolls if roll[0] in physical]
    at, own = 0, list[Rolled]()
    for roll in rolls:
        if at >= given:
            break
        if not sight.owns(roll[0]):
            raise NotYourFaces(given, own, field)
        own.append(roll)
        at += len(roll[2])


def refuse_setup_undo(fights: Fights, fight_id: str, fight: Fight, command: Command) -> None:
    """An undo over HTTP goes back no further than the first command after the set-up: the roster is joined whole
    by ``POST /fights`` and ``join`` is no command over HTTP, so a combatant undone out of it could be brought back
    by a redo alone. (``omen undo`` on the command line may: a scenario's joins are its commands.) A ``to_seq``
    given is named (``$.command.to_seq``), as every other refusal of it is."""
    if not isinstance(command, Undo):
        return
    start = command.to_seq if command.to_seq is not None else fight.state.undo_point
    end = fights.setup_end(fight_id)
    if 0 < start <= end:
        raise RuleViolation("undo", f"seq {start} is in the fight's set-up (seqs 1 to {end}: the fight started and its "
                                    "combatants joined, all at once by POST /fights), which an undo over HTTP does not "
                                    "reach: the roster is made whole by POST /fights; start a new fight to change it",
                            **({"field": "$.to_seq"} if command.to_seq is not None else {}))  # the seq given


def refuse_player_action_before_rounds(seat: Seat, fight: Fight, command: Command) -> None:
    """403 for a player's action of its own before the rounds: single actions in the set-up (an ambush,
    initiative) are the GM's to resolve (docs/machine.md); a player answers windows and draws (C35) then. After the
    rounds the engine's own refusal says that the fight has ended (422), as it does to the GM."""
    kind = str(type(command).__struct_config__.tag)
    phase = fight.state.phase.value
    if seat.kind == "player" and phase != "ended" and not player_may_act(kind, phase):  # ended: the engine says so
        raise Forbidden(detail=f"{kind} is the GM's before the rounds (the fight is at {phase}): a player's seat "
                               "gives its combatants' actions from round 1, after the GM rolls initiative; before "
                               "then it answers windows and draws")


def refuse_unnamed_decision(sight: Sight, state: FightState, command: Command) -> None:
    """A player's ``answer_decision`` while a decision point is open whose name its seat is not shown (another
    combatant's ability: its id is that sheet's, so the seat's views read ``decision``, ``a decision``) is refused
    in words that do not depend on the ``decision`` it names: the engine checks the id before who answers, and its
    two refusals ("the open decision point is 'X', not 'guess'", "X is vesh's to answer, not kael's") told a right
    guess from a wrong one (C37). The seat asks for none of its own combatants (the seat would be shown the name),
    so the engine would refuse it anyway; the GM and the seat asked get the engine's own words."""
    if sight.gm or not isinstance(command, AnswerDecision):
        return
    frame = state.pending
    opened = frame.decision if frame is not None else None
    if frame is None or opened is None:
        return  # no decision point open: the engine's refusal names no decision
    row = window(opened.decision, state)
    if any(sight.owns(who) for who in opened.responders) or (row is not None and row.title in sight.public_effects):
        return  # the seat is shown this decision's name (views.py: _decision_named)
    waiting = [who for who in opened.responders if who not in frame.answered_decision(opened)]
    raise RuleViolation(opened.rule, f"the open decision point is {' or '.join(waiting)}'s to answer, not "
                                     f"{command.who}'s")


def refused_while_waiting(fight: Fight, sight: Sight, exc: RuleViolation) -> RuleViolation:
    """A player's or spectator's command refused while the fight waits on a decision none of the seat's combatants
    may answer (a window, a moment, a tie: any command of the seat's is refused then, C24, C38) is refused in words
    made from what the seat is shown of that decision alone (its ``waiting``): the engine's words named the step
    (``reaction window open``) and its responders, one the seat saw having answered and a hidden one ``(hidden)``,
    which told a player that a hidden foe was in reach while its state showed nothing waiting (found by a tester).
    Once the fight has ended, any refusal is said so (C33): the engine's words listed what is legal then, the GM's
    reveal, undo and redo, as if the seat could give them. Any other refusal, and the GM's, is the engine's own."""
    if sight.gm:
        return exc
    if fight.state.phase is Phase.ENDED:  # the engine's words list what is left: the GM's reveal, undo and redo
        return RuleViolation("C33", "the fight has ended: a player's or spectator's seat has no command left to give "
                                    "(the GM may still reveal the seed, undo or redo)")
    now = fight.options(offers=False)
    if now.waiting is None or any(sight.owns(who) for who in now.waiting.who):
        return exc
    shown = seat_options(now, sight).waiting
    if shown is None:
        return RuleViolation("lifecycle", "the fight waits on a step this seat is not shown; a command of this "
                                          "seat's is taken once the GM or another seat has settled it")
    who = " or ".join(shown.who) if shown.who else "the GM"
    return RuleViolation(shown.rule, f"the fight waits for {who} to answer ({shown.title}, {shown.rule}) with "
                                     f"{' or '.join(shown.answers)}; a command of this seat's is taken once that is "
                                     "settled")


def run_command(fights: Fights, fight_id: str, seat: Seat, fight: Fight, command: Command, by: str,
                staged: bool = False, faces_by: tuple[tuple[str, int], ...] = ()) -> bytes:
    """Execute ``command`` (hold the fight's lock) and answer as ``seat`` sees it: the encoded CommandResult.
    Another process first: a 409, the fight left as it was and caught up at its next use. ``staged``: a staged
    command given again with ``seat``'s dice (the seat that staged it passed the checks of who may give it, which
    are not the dice-giver's to pass: a player's die for the GM's answer to a decision it is not shown), with
    ``faces_by``, who typed its faces (the ``command_issued`` records them where another than ``by`` did)."""
    if not staged:
        refuse_player_action_before_rounds(seat, fight, command)
        if seat.kind != "gm" and isinstance(command, AnswerDecision):
            refuse_unnamed_decision(fights.sight(fight_id, seat, fight), fight.state, command)
    refuse_setup_undo(fights, fight_id, fight, command)
    command = _with_kept_seed(command, fight)
    fresh = _fresh_seed(fights, fight_id, fight, command)
    # faces typed in a seeded fight roll first (a player's are its own dice's, own_faces_only; the GM's as many as it
    # typed, those marked "if rolled" left blank as it may not know yet whether they roll): the dice after them are
    # the fight's, from its seed
    then_roll = command.dice is not None and isinstance(fight.dice, SeededDice)
    # the combatants whose dice are physical roll from the faces given, wherever C29 puts them (staged for their
    # seat's when none are left: docs/server.md, "Physical dice in a seeded fight"); the others' dice are the seed's
    physical = physical_now(fights, fight_id, fight)
    try:
        stored = fight.execute(command, by=by, then_roll=then_roll, physical=physical, faces_by=faces_by)
    except RuleViolation as exc:
        raise refused_while_waiting(fight, fights.sight(fight_id, seat, fight), exc) from None
    if fresh is not None and fight.state.seed_commitment == commitment(fresh):
        fights.keep.put_seed(fight_id, fresh)  # the seed spent is public now; the fight rolls from the fresh one
    fights.appended[fight_id] = fight.version
    sight = fights.sight(fight_id, seat, fight)
    try:
        view = fights.seat_view(fight_id, fight, sight, seat)
    except ExtensionFailed as exc:
        first, last = (stored[0].seq, stored[-1].seq) if stored else (fight.version, fight.version)
        raise AppendedThenFailed(exc, first, last, head_of(fight)) from exc
    return _ENCODER.encode(CommandResult(head=view.head, events=tuple(seen_event(r, sight) for r in stored),
                                         options=view.options))


# -- idempotent requests ----------------------------------------------------------------------------------------


class Keyed(NamedTuple):
    """An idempotent request: its fight, its seat's token, its ``Idempotency-Key``, and the hash of its body."""

    fight_id: str
    token: str
    key: str
    request_hash: str


#: What a key sent again with another body is told: a retry is the whole request again (a tester's retry left
#: out the ``expected_version`` its first try had sent, and read that the key was used for another command).
RETRY = (": a retry sends the same request again, every field as it was (the command, its expected_version and "
         "stage too); another request takes a new key")


async def _first_answer(keep: AnyKeep, key: Keyed,
                        again: Callable[[int, bytes], Response[bytes]] | None = None,
                        in_body: bool = False) -> Response[bytes] | None:
    """None if this request reserved its key (:meth:`Keep.reserve`: it is to be answered now); else the first
    answer to the key, waited for while another request with it (on this server or another) is being answered,
    at most :data:`IDEMPOTENCY_WAIT` seconds (then 409 ``idempotency-key-pending``); the same key with another
    body is 422 ``idempotency-key-reused`` (``in_body``: the key is the command's own ``idempotency_key``, and the
    refusal names that field). ``again``: the answer made from what was kept (its status and bytes), in a thread;
    default, those bytes as they were kept."""
    deadline, pause = anyio.current_time() + IDEMPOTENCY_WAIT, 0.005
    found = await anyio.to_thread.run_sync(keep.reserve, key.fight_id, key.token, key.key, key.request_hash)
    while True:
        if found is None:
            return None
        first_hash, status, body = found
        if first_hash != key.request_hash:
            if in_body:
                return _problem(422, "idempotency-key-reused", "This key was used for another request",
                                f"the command's idempotency_key {key.key!r} was first sent with another body{RETRY} "
                                "(at $.command.idempotency_key)", field="$.command.idempotency_key")
            return _problem(422, "idempotency-key-reused", "This key was used for another request",
                            f"Idempotency-Key {key.key!r} was first sent with another body{RETRY}")
        if status != PENDING:
            if again is not None:
                return await anyio.to_thread.run_sync(again, status, body)
            return Response(body, status_code=status, media_type="application/json")
        if anyio.current_time() >= deadline:
            return _problem(409, "idempotency-key-pending", "A request with this key is still being answered",
                            f"a request with Idempotency-Key {key.key!r} has been answered for more than "
                            f"{IDEMPOTENCY_WAIT:g} s, or its server stopped while answering it: read the fight's "
                            "events to see whether its command was appended; nothing is appended for this key again")
        await anyio.sleep(pause)
        pause = min(pause * 2, 0.1)
        found = await anyio.to_thread.run_sync(_look_again, keep, key, anyio.current_time() >= deadline)


def _look_again(keep: AnyKeep, key: Keyed, last: bool) -> tuple[str, int, bytes] | None:
    """What the keep holds for a key seen pending: its answer (a read: readers never wait for a writer); if it was
    released meanwhile, a reservation tried again (None: this request has it now). The keep busy past its timeout
    (other processes writing at once) is another look later, unless this is the ``last``."""
    try:
        found = keep.answer(key.fight_id, key.token, key.key)
        return found if found is not None else keep.reserve(key.fight_id, key.token, key.key, key.request_hash)
    except StoreUnavailable:
        if last:
            raise
        return key.request_hash, PENDING, b""


def _request_hash(route: str, body: bytes) -> str:
    """The hash a keyed request of ``route`` (``seats``, ``staged``) is known by: its route and its body (a token's
    keys are one set per fight, across routes)."""
    return hashlib.sha256(route.encode() + b"|" + body).hexdigest()


def _answered(answer: Response[bytes]) -> bool:
    """Whether an answer is kept for its key: a 2xx, or the 500 of a command appended whose answer could not be
    made (returned, not raised: :class:`AppendedThenFailed`); a refusal returned (409 ``dice-staged``,
    ``stale-version``) frees the key, as one raised does."""
    status = answer.status_code or 201
    return status < 400 or status == 500


def _answer_keyed(keep: AnyKeep, key: Keyed, answer: Callable[[], Response[bytes]],
                  kept: Callable[[Response[bytes]], bytes] | None = None) -> Response[bytes]:
    """``answer()`` under a key this request reserved: its answer kept for the key's other requests (``kept``: the
    bytes to keep, default the body), or the key released if the request is refused (done here, in the thread, so
    that a client gone meanwhile leaves no reservation behind)."""
    try:
        given = answer()
    except BaseException:
        with contextlib.suppress(StoreUnavailable):  # the keep busy too: the key stays pending, and is spent
            keep.release(key.fight_id, key.token, key.key)
        raise
    if not _answered(given):
        with contextlib.suppress(StoreUnavailable):
            keep.release(key.fight_id, key.token, key.key)
        return given
    for attempt in range(3):  # answered: its answer must be kept, or the key's copies wait in vain
        try:
            keep.keep_answer(key.fight_id, key.token, key.key, key.request_hash, given.status_code or 201,
                             kept(given) if kept is not None else bytes(given.content))
            break
        except StoreUnavailable as exc:
            if attempt == 2:  # done: this answer stands; the key's copies get 409 pending
                guard.log.warning("idempotent answer not kept", fight_id=key.fight_id, error=str(exc))
    return given


def _fresh_id(fights: Fights) -> str:
    while True:
        candidate = f"fight-{secrets.token_hex(4)}"
        if not fights.store.version(candidate):
            return candidate


def _check_roster(combatants: Sequence[Any]) -> None:
    """422 ``rule-violation`` (C19) at ``$.combatants`` for a roster of fewer than two: the roster given with
    ``POST /fights`` is the whole roster (no ``join`` over HTTP), and a fight of one or none could never roll
    initiative (it was made, and then could do nothing; found by a tester)."""
    if len(combatants) < 2:
        raise Unprocessable(f"[C19] a fight needs at least two combatants, and {len(combatants)} "
                            f"{'is' if len(combatants) == 1 else 'are'} given: the combatants given here are the "
                            "fight's whole roster (at $.combatants)", "$.combatants", "rule-violation",
                            "A rule refuses this command", rule="C19")


@functools.cache
def engine_words() -> frozenset[str]:
    """The words omen's own messages are made of (``data/engine-words.txt``, made from the engine's and the
    server's string literals by ``python -m tests.engine_words``; a test keeps it current)."""
    return frozenset((files("omen_server") / "data" / "engine-words.txt").read_text(encoding="utf-8").split())


def _secret_fields(sheet: CombatantSheet) -> Iterator[tuple[str, str]]:
    """The ids and names of a sheet that a seat not playing it may not be shown (its id and name once hidden, its
    gear, its abilities: :func:`omen_core.seats.sight_of`'s secrets), each with its path in the sheet."""
    yield ".id", sheet.id
    yield ".name", sheet.name
    yield from gear_fields(sheet)
    for i, entry in enumerate(sheet.abilities):
        if isinstance(entry, str):
            yield f".abilities[{i}]", entry
        else:
            yield f".abilities[{i}].id", entry.id
            yield f".abilities[{i}].name", entry.name


def _check_words(combatants: Sequence[CombatantSheet]) -> None:
    """422 ``invalid-request`` at the first id or name of a sheet that is one of omen's own words (``turn``,
    ``round``, ``it``): a seat's copy of a refusal has each secret id and name in it replaced by ``(hidden)``, so a
    secret spelled as one of the message's own words would change them, and the seat could tell that it is there
    (a tester read "cannot end the (hidden)" where a hidden foe's id was "turn"). Armor's and a shield's default
    names are shown to everyone anyway (:data:`~omen_core.seats.PUBLIC_GEAR_NAMES`)."""
    words = engine_words()
    for index, sheet in enumerate(combatants):
        for path, value in _secret_fields(sheet):
            if value in words and value not in PUBLIC_GEAR_NAMES:
                where = f"$.combatants[{index}]{path}"
                raise Unprocessable(
                    f"{value!r} is one of the words omen's own messages are made of: a seat's copy of a message has "
                    "every id and name it may not be shown replaced by (hidden), so one spelled as these words would "
                    "change the message's own words, and a seat could tell it is there; choose another (docs/"
                    f"server.md, \"Threat model\") (at {where})", where)


def _refused_sheet(exc: RuleViolation) -> Unprocessable | None:
    """A set-up refused at one of the sheets given (its ``sheet_index``, from the engine's own join check: an id
    taken, C14, C28, C37): 422 at ``$.combatants[i]`` and the field the rule names in that sheet
    (``$.combatants[2].id``, ``$.combatants[1].abilities[0].applies``); None for a refusal of no one sheet."""
    if exc.sheet_index is None:
        return None
    where = f"$.combatants[{exc.sheet_index}]"
    where = exc.field_under(where) or where
    return Unprocessable(f"{exc} (at {where})", where, "rule-violation", "A rule refuses this command", rule=exc.rule)


def _check_ids(ids: Any, known: set[str], field: str) -> None:
    """422 ``unknown-combatant`` at the first of ``ids`` that is not a combatant of the fight (a well-formed
    request naming what is not there: no schema can say it)."""
    for index, who in enumerate(ids):
        if who not in known:
            where = f"$.{field}[{index}]" if isinstance(ids, (list, tuple)) else f"$.{field}.{who}"
            raise Unprocessable(f"no combatant {who!r} in this fight (it has {', '.join(sorted(known)) or 'none'}) "
                                f"(at {where})", where, "unknown-combatant", "No such combatant")


def _remember(request: Request[Any, Any, Any], sight: Sight, command: Command | None = None) -> None:
    """Let the error handlers know whose seat a failing request came from (what its error may say) and what it
    typed (echoed as given)."""
    request.state.sight = sight
    request.state.typed = typed_in(msgspec.to_builtins(command)) if command is not None else []
    request.state.command = msgspec.to_builtins(command) if command is not None else None


def _path_naming(value: Any, who: str, path: str = "$.command") -> str | None:
    """The path of the first string in a command (as JSON values) that is ``who``: where a refusal of an unknown
    combatant points (``$.command.target``, ``$.command.others[1]``)."""
    if isinstance(value, str):
        return path if value == who else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items:
        if key in ("command", "type") and isinstance(key, str) and path == "$.command":
            continue
        found = _path_naming(item, who, f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]")
        if found is not None:
            return found
    return None


def _seat_view(view: OptionsView, sight: Sight) -> OptionsView:
    return view if sight.gm else OptionsView(head=view.head, options=seat_options(view.options, sight))


def _lists_shift(state: FightState, sight: Sight) -> bool:
    """Whether the GM's options, filtered for this seat, would list others that depend on whom it may not see: an
    offer lists at most MAX_LISTED others, so with more combatants than that and a hidden one among them, the
    seat's options are computed without the hidden (``options(unseen=...)``), not filtered from the GM's."""
    return not sight.gm and len(state.combatants) > MAX_LISTED + 1 and not sight.hidden.isdisjoint(state.combatants)


def _whole(value: Any) -> Any:
    """``value`` (decoded JSON) with every number that is whole written as an integer: JSON Schema's integers
    (what the OpenAPI document says) include ``98.0``, which omen's decoders would refuse as a float."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(item) for item in value]
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    return value


def _strict(body: bytes, kind: type[T]) -> T:
    """The body decoded as strictly as omen's own decoders (Litestar converts leniently: 0 would pass as
    false; a whole number written ``98.0`` is taken as the integer JSON Schema says it is); a value that does not
    validate is the same 400 as any other, naming its field, as is an object giving a name twice (I-JSON)."""
    if not body.strip():
        raise ValidationException(detail="no body", extra=[{"message": "a JSON body is required", "key": "",
                                                             "source": "body"}])
    twice = named_twice(body)
    if twice is not None:  # I-JSON: readers differ on which of the two counts, so neither does
        raise ValidationException(detail="a name given twice", extra=[{
            "message": f"{twice.rpartition('.')[2]!r} is given twice in one object (readers differ on which "
                       "counts: give it once)", "key": twice.removeprefix("$."), "source": "body"}])
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.DecodeError as exc:
        if isinstance(exc, msgspec.ValidationError):
            return _invalid(body, kind, exc)
        words = json_error_words(str(exc), body)
        raise HTTPException(status_code=400, detail=f"the body is not JSON: {words}") from None


class _Roster(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Several sheets in one TOML text: ``[[combatants]]`` tables, as ``POST /fights`` holds them."""

    combatants: tuple[CombatantSheet, ...]


def read_pasted(given: ContentText) -> ContentRead:
    """The sheets or the ruleset a GM wrote in TOML (docs/content.md), read and checked as ``omen run`` reads a
    file: 422 ``invalid-content`` naming the line and the field (``the pasted sheets:8: Expected `int` >= 1 (at
    $.hp)``; of several sheets, ``$.combatants[1].hp``). What a fight's rules refuse of a sheet (a damage type its
    ruleset lacks, C14) is ``POST /fights``'s to say: it does not know the ruleset here."""
    source = given.name or f"the pasted {given.kind}"
    if given.kind == "ruleset" and (given.abilities or given.abilities_name):
        raise Unprocessable("an ability library goes with sheets (kind sheets), not with a ruleset", "$.abilities",
                            "invalid-content", "The content does not validate")
    try:
        if given.kind == "ruleset":
            return ContentRead(kind="ruleset", ruleset=decode_content(given.text, Ruleset, source=source, fmt="toml"))
        sheets = _pasted_sheets(given.text, source)
    except ContentError as exc:
        raise Unprocessable(str(exc), "$.text", "invalid-content", "The content does not validate") from None
    if given.abilities.strip():
        try:
            library = decode_content(given.abilities, AbilityLibrary,
                                     source=given.abilities_name or "the pasted abilities", fmt="toml")
        except ContentError as exc:
            raise Unprocessable(str(exc), "$.abilities", "invalid-content", "The content does not validate") from None
        sheets = tuple(with_abilities(sheet, library) for sheet in sheets)
    return ContentRead(kind="sheets", sheets=sheets)


def _pasted_sheets(text: str, source: str) -> tuple[CombatantSheet, ...]:
    """The sheets of a paste: one sheet, several as ``[[combatants]]`` tables, or several sheet files pasted one
    after another, each under a ``[[combatants]]`` line of its own (their ``[attributes]`` then read as the whole
    paste's, written twice: a GM pasted three files so, as the page invites, and was refused), read one by one,
    each error at its line of the paste."""
    try:
        several = "combatants" in msgspec.toml.decode(text)
    except msgspec.DecodeError as exc:
        files = _sheet_files(text) if "twice" in str(exc) else []
        if files:
            return tuple(decode_content(part, CombatantSheet, source=source, fmt="toml") for part in files)
        several = False  # decode_content names the line
    except RecursionError:
        several = False
    if several:
        return decode_content(text, _Roster, source=source, fmt="toml").combatants
    return (decode_content(text, CombatantSheet, source=source, fmt="toml"),)


#: A ``[[combatants]]`` line: where a pasted sheet file begins.
_SHEET_HEADER = re.compile("^[ \t]*\\[\\[[ \t]*combatants[ \t]*\\]\\][ \t]*(#.*)?\r?$")  # (no escape a word)


def _sheet_files(text: str) -> list[str]:
    """The sheet files of a paste, each under its own ``[[combatants]]`` line, each as the text of one sheet file
    with the lines before it blank (so that its errors name their lines in the paste); none if anything but blank
    lines and comments comes before the first."""
    lines = text.replace("\r\n", "\n").split("\n")  # (a file saved on Windows: the same lines)
    starts = [n for n, line in enumerate(lines) if _SHEET_HEADER.match(line)]
    if not 1 < len(starts) <= MAX_COMBATANTS or any(line.strip() and not line.lstrip().startswith("#")
                                                    for line in lines[:starts[0]]):
        return []  # (at most a roster's sheets: each part is as long as the paste, its lines before it blank)
    ends = [*starts[1:], len(lines)]
    return ["\n" * (start + 1) + "\n".join(lines[start + 1:end]) for start, end in zip(starts, ends, strict=True)]


def wholes_within(body: bytes) -> None:
    """400 at its path in the request (``$.combatants[1].will``) for a whole number past ±:data:`MAX_WHOLE` in a
    body that decoded: the engine refuses one too, but at the path of the command it makes (``join``'s
    ``$.command.sheet.will``), which the request of ``POST /fights`` does not have."""
    if not digit_run(body):
        return
    where = beyond_whole(msgspec.json.decode(body))
    if where is not None:
        raise ValidationException(detail="a number past 2**53 - 1", extra=[{
            "message": f"a whole number beyond ±{MAX_WHOLE} (2**53 - 1: the largest every JSON reader holds "
                       "exactly); no number of the rules comes near it", "key": where.removeprefix("$."),
            "source": "body"}])


def _invalid(body: bytes, kind: type[T], exc: msgspec.ValidationError) -> T:
    """The value of a body that did not validate as it came, if it validates with its whole numbers as integers;
    else the error saying why (400 at the field, or 422 for a check of the value's own)."""
    if b"." in body or b"e" in body or b"E" in body:  # perhaps a whole number written as a float
        try:  # (a number past a float's range does not decode untyped either: the typed error says where)
            loose = msgspec.json.decode(body)
        except msgspec.DecodeError:
            loose = None
        if loose is not None:
            try:
                return msgspec.convert(_whole(loose), type=kind)
            except msgspec.ValidationError as again:  # what is wrong besides (it says where, as the first would)
                exc = again
    reason, path = reason_and_path(exc)
    if "[...]" in path:  # a mapping's value: named by its key (``$.notes.vesh``), as content errors are
        with contextlib.suppress(msgspec.DecodeError, RecursionError):
            path = name_keys(msgspec.json.decode(body), kind, path)
    reason = in_words(reason, {FIGHT_ID.pattern: f"a fight id: {FIGHT_ID_WORDS}", _SEAT_NAME.pattern: _SEAT_NAME_WORDS})
    if exc.__cause__ is not None:  # a check of the decoded value's own (a sheet's weapon ids unique), not a type
        raise Unprocessable(f"{reason} (at {path})", path, "inconsistent",
                            "The request does not hold together") from None
    key = path.removeprefix("$").lstrip(".")
    raise ValidationException(detail="the body does not validate",
                              extra=[{"message": reason, "key": key, "source": "body"}]) from None


POLL = 0.1  # seconds between two looks at what this process appended (a dict read: no thread, no store)
OTHERS = 10  # every OTHERS looks, the store is read too: other server processes may have appended
KEEP_ALIVE = 15.0  # seconds a stream may stay silent before it sends a comment (OMEN_KEEP_ALIVE overrides)


def keep_alive_seconds() -> float:
    """How long a stream stays silent at most: ``OMEN_KEEP_ALIVE`` seconds if set (a positive number), else 15."""
    import os

    try:
        value = float(os.environ.get("OMEN_KEEP_ALIVE", KEEP_ALIVE))
    except ValueError:
        return KEEP_ALIVE
    return value if value > 0 else KEEP_ALIVE


def _is_head(rec: SeenEvent) -> bool:
    """Whether an event is the last of its command's batch: a head the fight stood at."""
    return rec.batch_size > 0 and rec.seq == rec.batch + rec.batch_size - 1


async def _follow(fights: Fights, fight_id: str, seat: Seat, after: int, token: str = ""
                  ) -> AsyncIterator[ServerSentEventMessage]:
    """The messages of one stream (:func:`_messages`); an unexpected failure is logged with its traceback (a 500
    once the 200 is sent), and the client reconnects.

    After each message the event loop is let run (a checkpoint): writing a message to the socket does not wait,
    so without it a page of backlog went out in one go, and a client that left in the middle had every remaining
    write fail on the dead socket (asyncio logs a warning for each past the fifth: hundreds a connection). With
    it, the first failed write's connection loss is seen at once: uvicorn sends nothing more, and Litestar, told
    of the disconnect, cancels the stream here."""
    try:
        async for message in _messages(fights, fight_id, seat, after, token):
            yield message
            await anyio.lowlevel.checkpoint()
    except Exception as exc:
        guard.log_failure(exc, "GET", f"/fights/{fight_id}/stream")


async def _messages(fights: Fights, fight_id: str, seat: Seat, after: int, token: str = ""
                    ) -> AsyncIterator[ServerSentEventMessage]:
    """The messages of one stream: the events after ``after`` in order, each once, and after the last event of
    each command's batch an ``options`` message with the view at that head (every head, even when several came
    between two looks: the views of earlier heads are kept, or computed from the state after them); forever,
    until the client goes or the server is told to stop (Fights.stopping: SIGTERM, Ctrl-C). What this process
    appends is seen within POLL seconds (Fights.appended), and so is
    what other processes on a PostgreSQL store commit (they NOTIFY: :func:`listen_for_commits`); otherwise other
    processes' appends within POLL * OTHERS, which also covers a notification lost while the listener
    reconnects. Each look reads from the last event sent, so nothing is skipped or sent twice whatever was heard.
    While the store cannot be used (a database restarting) the stream waits and looks again every second. The
    stream also looks at its view once a second at the same head, and at once when this process changed the
    table settings or staged dice (Fights.poke): a view changed without the head moving is sent as an ``options``
    message too (an unchanged one never is). A comment (``: keep-alive``) goes out whenever the stream has been
    silent for the keep-alive interval (15 s), so that proxies keep the connection open. The stream of a seat the
    GM revoked or reissued ends at its next once-a-second look."""
    shown, looks, more, sent = -1, 0, True, b""
    quiet = keep_alive_seconds()
    last_said = anyio.current_time()
    poked = fights.pokes.get(fight_id, 0)
    broken: tuple[int, int] | None = None  # what had been appended and poked when a look last failed
    while not fights.stopping.is_set():  # the server stopping: the stream ends (its response ends cleanly)
        again = looks % OTHERS == 0 or fights.pokes.get(fight_id, 0) != poked
        now = (fights.appended.get(fight_id, 0), fights.pokes.get(fight_id, 0))
        look = more or now[0] > shown or again
        if broken is not None and now == broken and looks % BROKEN_LOOKS:
            look = False  # a look that failed is tried again when the fight changes, or every 30 s
            with contextlib.suppress(StoreUnavailable):
                if token and again and await anyio.to_thread.run_sync(fights.seat, token) is None:
                    return  # revoked or reissued, as below
        if look:
            poked = fights.pokes.get(fight_id, 0)
            try:
                if token and again and await anyio.to_thread.run_sync(fights.seat, token) is None:
                    return  # revoked or reissued: this token opens nothing any more
                items, view = await anyio.to_thread.run_sync(_news, fights, fight_id, seat, after, shown, again)
            except StoreUnavailable as exc:  # the database (the keep's, the store's) is restarting: the stream
                _say_unavailable(exc, "GET", f"/fights/{fight_id}/stream")  # waits, then goes on from `after`
                await anyio.sleep(1.0)  # (the seat asked again)
                continue
            except Exception as exc:  # a bug: said once (logged, and an `error` message with its reference), the
                if broken is None:  # stream stays open (a client reconnecting at once would fail in a loop)
                    ref = guard.log_failure(exc, "GET", f"/fights/{fight_id}/stream")
                    last_said = anyio.current_time()
                    yield ServerSentEventMessage(data=_ENCODER.encode(_stream_problem(ref)).decode(), event="error")
                broken, more = now, False
                looks += 1
                await anyio.sleep(POLL)
                continue
            broken = None
            for item in items:
                if isinstance(item, SeenEvent):
                    yield ServerSentEventMessage(data=_ENCODER.encode(item).decode(), event="event", id=item.seq)
                    after = item.seq
                else:
                    shown, data = item.head.seq, _ENCODER.encode(item)
                    if data != sent:
                        sent = data
                        yield ServerSentEventMessage(data=data.decode(), event="options")
                last_said = anyio.current_time()
            more = view is not None and after < view.head.seq  # a page short of the head: the rest first
            if more:
                continue
            if view is not None:
                shown, data = view.head.seq, _ENCODER.encode(view)
                if data != sent:
                    sent = data
                    last_said = anyio.current_time()
                    yield ServerSentEventMessage(data=data.decode(), event="options")
        if anyio.current_time() - last_said >= quiet:
            last_said = anyio.current_time()
            yield ServerSentEventMessage(data=None, comment="keep-alive")
        looks += 1
        await anyio.sleep(POLL)


#: While a stream's look fails, it is tried again every BROKEN_LOOKS looks (30 s), or at once when the fight changes.
BROKEN_LOOKS = 300


def _stream_problem(ref: str) -> dict[str, Any]:
    """The ``error`` message of a stream whose look failed: the problem a 500 carries, its reference included."""
    return {"type": "/problems/internal-error", "title": _title(500), "status": 500,
            "detail": "the server failed while following this fight; its log says why, under reference "
                      f"{ref}; the stream stays open and tries again when the fight changes", "ref": ref}


def _news(fights: Fights, fight_id: str, seat: Seat, after: int, shown: int, settings: bool = False
          ) -> tuple[list[SeenEvent | OptionsView], OptionsView | None]:
    """The events after ``after`` up to the head now (at most a page, and at most :data:`HEADS_A_LOOK` earlier
    heads), each head among them (the last event of a command's batch) followed by the view at that head, and the
    view at the head now, as ``seat`` sees them; nothing if the head is the one last shown, unless ``settings``
    (the view is wanted anyway: the table settings or staged dice may have changed it)."""
    if after == shown and not settings and fights.store.version(fight_id) == shown:
        return [], None
    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        sight = fights.sight(fight_id, seat, fight)
        view = fights.seat_view(fight_id, fight, sight, seat)
    items: list[SeenEvent | OptionsView] = []
    heads = 0
    for count, rec in enumerate(fights.store.read(fight_id, after)):
        if rec.seq > view.head.seq or count == PAGE or heads == HEADS_A_LOOK:
            break
        seen = seen_event(rec, sight)
        items.append(seen)
        if _is_head(seen) and rec.seq < view.head.seq:
            past = fights.view_at(fight_id, rec.seq)
            state = (fight.state_after(rec.seq) if not sight.gm and sight.hidden
                     and len(fight.state.combatants) > MAX_LISTED + 1 else None)  # only where a list could shift
            if state is not None and _lists_shift(state, sight):
                past = OptionsView(head=past.head, options=options_of(state, unseen=sight.hidden))
            items.append(_seat_view(past, sight))
            heads += 1
    return items, view


#: How many earlier heads' views one look of a stream computes before it sends what it has: a stream resuming far
#: back (each head's options computed from the state after it) starts at once and sends the rest look by look (a
#: stream 1,084 events back sent nothing for 3 s, then all of it: a tester's client times out at 3 s).
HEADS_A_LOOK = 16


def listen_for_commits(fights: Fights, stop: threading.Event) -> None:
    """Until ``stop``: hear every commit to a PostgreSQL store (any process's NOTIFY) and mark the fight's new
    head in ``fights.appended``, where its streams look ten times a second. A lost connection is retried every
    second; what was missed meanwhile the streams find by reading the store (``_follow``)."""
    listen = getattr(fights.store, "listen", None)
    if listen is None:
        return
    listener = None
    while not stop.is_set():
        try:
            if listener is None:
                listener = listen()
            for heard in listener.wait(0.5):
                if heard.head > fights.appended.get(heard.fight_id, 0):
                    fights.appended[heard.fight_id] = heard.head
        except OmenError:
            with contextlib.suppress(Exception):
                if listener is not None:
                    listener.close()
            listener = None
            stop.wait(1.0)
    if listener is not None:
        with contextlib.suppress(Exception):
            listener.close()


