"""The HTTP resources of ``omen serve``: fights, their options, commands and events, behind bearer tokens.

Every answer is JSON and carries the fight's head (seq and hash), so every
client witnesses the chain; every error is a problem document (RFC 9457,
``application/problem+json``) naming the rule id or the field path. Commands
are the scenario vocabulary (``omen schema --of command``), faces included
for manual dice, with the version the client saw (``expected_version``: a
stale one is 409) and an optional ``Idempotency-Key`` (a retry appends
nothing twice and gets the first answer again).

This first cut has one seat per fight, the GM's: the token ``POST /fights``
returns. Player and spectator seats, per-seat views and the live stream are
not built yet (docs/server.md).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal, TypeVar, cast

import anyio
import anyio.to_thread
import msgspec
from litestar import Litestar, Request, Response, get, post
from litestar.exceptions import HTTPException, NotFoundException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.params import FromPath, HeaderParameter, JSONBody, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from omen_core import Fight, OmenError, SeededDice
from omen_core.commands import Command, RevealSeed
from omen_core.content import CombatantSheet, Ruleset, reason_and_path
from omen_core.dice import FacesNeeded, ManualDice, SurplusFaces
from omen_core.errors import (
    BadInput,
    ConcurrencyError,
    InvalidCommand,
    RuleViolation,
    UnknownFight,
)
from omen_core.events import StoredEvent
from omen_core.options import Options
from omen_core.store import EventStore
from omen_core.store.base import FIGHT_ID

from .keep import Keep, Seat

__all__ = ["create_app", "Head", "Created", "FightSummary", "OptionsView", "CommandRequest", "CommandResult",
           "EventsPage", "Problem", "CreateFight"]

PROBLEM = "application/problem+json"
T = TypeVar("T")
PAGE = 500  # events per page, at most


# -- what goes over the wire ---------------------------------------------------------------------------------


class Head(msgspec.Struct, frozen=True, kw_only=True):
    """The last event of a fight: its seq and hash (``omen verify LOG --head SEQ:HASH`` witnesses it)."""

    seq: int
    hash: str


class CreateFight(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new fight: its id (made up if left out), title, dice (seeded: the server rolls and keeps the seed;
    manual: every command carries its faces), ruleset (default: the core ruleset) and combatants."""

    id: Annotated[str, msgspec.Meta(pattern=FIGHT_ID.pattern)] | None = None
    title: str = ""
    dice: Literal["seeded", "manual"] = "seeded"
    ruleset: Ruleset | None = None
    combatants: tuple[CombatantSheet, ...] = ()


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


class OptionsView(msgspec.Struct, frozen=True, kw_only=True):
    """What the fight waits for now (``Fight.options()``, as ``omen status --json``), and the head."""

    head: Head
    options: Options


class CommandRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A command (``omen schema --of command``) and the version the client saw: if the fight has moved on
    since, nothing is appended (409). Left out, the command applies to whatever version the fight is at."""

    command: Command
    expected_version: Annotated[int, msgspec.Meta(ge=0)] | None = None


class CommandResult(msgspec.Struct, frozen=True, kw_only=True):
    """The events a command appended, the new head, and what the fight waits for next."""

    head: Head
    events: tuple[StoredEvent, ...]
    options: Options


class EventsPage(msgspec.Struct, frozen=True, kw_only=True):
    """Events after a seq, in order; ``next_after`` is the ``after`` of the next page (None: no more now)."""

    head: Head
    events: tuple[StoredEvent, ...]
    next_after: int | None


class Problem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An error (RFC 9457): ``type`` names its kind, ``detail`` says what and where; ``rule`` is the rule id a
    command broke, ``field`` the path of a bad field, ``current_version`` the fight's version after a 409,
    ``needed`` the dice still to roll (C29 order) when faces are missing."""

    type: str
    title: str
    status: int
    detail: str
    rule: str | None = None
    field: str | None = None
    current_version: int | None = None
    needed: tuple[str, ...] | None = None


# -- problems ------------------------------------------------------------------------------------------------

_ENCODER = msgspec.json.Encoder()


def _problem(status: int, kind: str, title: str, detail: str, headers: dict[str, str] | None = None,
             **facts: Any) -> Response[bytes]:
    body = Problem(type=f"/problems/{kind}", title=title, status=status, detail=detail, **facts)
    return Response(_ENCODER.encode(body), status_code=status, media_type=PROBLEM, headers=headers)


def _omen_problem(_request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """An OmenError as a problem: a stale version 409, a broken rule 422 with its id, bad input 400 with the
    field, an unknown fight 404."""
    if isinstance(exc, ConcurrencyError):
        return _problem(409, "stale-version", "The fight has moved on", str(exc), current_version=exc.actual)
    if isinstance(exc, UnknownFight):
        return _problem(404, "unknown-fight", "No such fight", f"no fight {exc.fight_id!r}")
    if isinstance(exc, RuleViolation):
        return _problem(422, "rule-violation", "A rule refuses this command", str(exc), rule=exc.rule)
    if isinstance(exc, InvalidCommand):
        return _problem(400, "invalid-command", "The command does not validate", str(exc), field=exc.path)
    if isinstance(exc, FacesNeeded):
        needed = tuple(f"{r.roller}'s {r.purpose}: " + ", ".join(f"{t} d{s}" for t, s in r.pool)
                       for r in exc.needed)
        return _problem(422, "faces-needed", "The command needs the faces of its dice", str(exc), rule="C29",
                        needed=needed)
    if isinstance(exc, SurplusFaces):
        return _problem(422, "surplus-faces", "More faces than the command rolls", str(exc), rule="C29")
    if isinstance(exc, BadInput):
        return _problem(400, "bad-input", "Bad input", str(exc))
    return _problem(422, "refused", "The engine refuses this", str(exc))


def _validation_problem(_request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """A request whose body or parameters do not decode: 400, naming the field (``$.command.who``)."""
    assert isinstance(exc, ValidationException)
    extra = [item for item in (exc.extra if isinstance(exc.extra, list) else []) if isinstance(item, dict)]
    first = extra[0] if extra else {}
    key = first.get("key")
    if key == "data" and first.get("message") == "'data'":  # no body at all
        return _problem(400, "invalid-body", "The request does not validate", "a JSON body is required (at $)",
                        field="$")
    field = None if key is None else ("$" if first.get("source", "body") == "body" else first["source"]) + (
        f".{key}" if key else "")
    said = [f"{item.get('message', '')} (at {field})" if item is first and field else str(item.get("message", ""))
            for item in extra]
    return _problem(400, "invalid-body", "The request does not validate", "; ".join(said) or str(exc.detail),
                    field=field)


def _http_problem(_request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    assert isinstance(exc, HTTPException)
    kinds = {400: "bad-request", 401: "unauthorized", 403: "forbidden", 404: "not-found", 405: "method-not-allowed",
             409: "conflict"}
    return _problem(exc.status_code, kinds.get(exc.status_code, "http-error"), _title(exc.status_code),
                    str(exc.detail), headers=dict(exc.headers or {}))  # a 405 keeps its Allow header


def _title(status: int) -> str:
    return {400: "Bad request", 401: "No valid token", 403: "This seat may not do that", 404: "Not found",
            405: "Method not allowed", 409: "Conflict", 422: "Refused by the rules"}.get(status, "HTTP error")


class Unauthorized(HTTPException):
    """401: no bearer token, or one this server never made."""

    status_code = 401


class Forbidden(HTTPException):
    """403: a token of another fight, or a seat that may not do this."""

    status_code = 403


def _errors(*statuses: int) -> dict[int, ResponseSpec]:
    """The problem documents a handler may answer with, for its OpenAPI entry."""
    return {status: ResponseSpec(data_container=Problem, media_type=PROBLEM, generate_examples=False,
                                 description=_title(status)) for status in statuses}


# -- fights held in memory -------------------------------------------------------------------------------------


class Fights:
    """The fights this process serves: the store, the keep, and a loaded ``Fight`` per id, each behind its own
    lock so that commands to one fight are decided one at a time (other processes are kept out by the store's
    optimistic version check)."""

    def __init__(self, store: EventStore, keep: Keep):
        self.store, self.keep = store, keep
        self._loaded: dict[str, Fight] = {}
        self._views: dict[str, OptionsView] = {}
        self.appended: dict[str, int] = {}  # the version each fight reached by this process's last append
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def lock(self, fight_id: str) -> threading.RLock:
        """The lock of one fight."""
        with self._guard:
            return self._locks.setdefault(fight_id, threading.RLock())

    def fight(self, fight_id: str) -> Fight:
        """The fight, loaded once and reloaded when another process has appended to it (hold its lock)."""
        fight = self._loaded.get(fight_id)
        if fight is None or self.store.version(fight_id) != fight.version:
            seed = self.keep.seed(fight_id)
            fight = Fight.load(self.store, fight_id, dice=SeededDice(seed) if seed is not None else None)
            self._loaded[fight_id] = fight
        return fight

    def view(self, fight_id: str) -> OptionsView:
        """The head and options of a fight now, computed once per head (every stream and answer shares it)."""
        with self.lock(fight_id):
            fight = self.fight(fight_id)
            cached = self._views.get(fight_id)
            if cached is None or cached.head.hash != fight.state.last_hash:
                cached = self._views[fight_id] = OptionsView(head=head_of(fight), options=fight.options())
            return cached

    def start(self, fight_id: str, spec: CreateFight) -> Fight:
        """Start a fight (the whole set-up in one atomic append) and keep its seed."""
        dice: SeededDice | ManualDice = SeededDice.fresh() if spec.dice == "seeded" else ManualDice()
        with self.lock(fight_id):
            fight = Fight.start(self.store, fight_id, dice=dice, ruleset=spec.ruleset, title=spec.title,
                                combatants=spec.combatants)
            if isinstance(dice, SeededDice):
                self.keep.put_seed(fight_id, dice.seed)
            self._loaded[fight_id] = fight  # the fight as started is the fight loaded: no second replay
        return fight


def _stored_head(store: EventStore, fight_id: str) -> Head:
    """The head of a stored fight, from its last event alone (no replay)."""
    last = next(iter(store.read(fight_id, store.version(fight_id) - 1)))
    return Head(seq=last.seq, hash=last.hash)


def head_of(fight: Fight) -> Head:
    """The head of a loaded fight."""
    return Head(seq=fight.version, hash=fight.state.last_hash)


# -- the resources ---------------------------------------------------------------------------------------------


def _bearer(request: Request[Any, Any, Any]) -> str:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(detail="send the fight's token as 'Authorization: Bearer <token>'")
    return token.strip()


def _seat(request: Request[Any, Any, Any], fights: Fights, fight_id: str) -> tuple[str, Seat]:
    token = _bearer(request)
    seat = fights.keep.seat(token)
    if seat is None:
        raise Unauthorized(detail="this token is not one this server made (or the server's keep was lost)")
    if seat.fight_id != fight_id:
        raise Forbidden(detail=f"this token is for another fight, not {fight_id!r}")
    return token, seat


def _gm(request: Request[Any, Any, Any], fights: Fights, fight_id: str) -> str:
    token, seat = _seat(request, fights, fight_id)
    if seat.kind != "gm":
        raise Forbidden(detail="only the GM may do this")
    return token


def _with_kept_seed(command: Command, fight: Fight) -> Command:
    """``reveal_seed`` without a seed reveals the one the server keeps, which the fight rolls with (the GM never
    needs to see it before)."""
    if isinstance(command, RevealSeed) and not command.seed and isinstance(fight.dice, SeededDice):
        return msgspec.structs.replace(command, seed=fight.dice.seed.hex())
    return command


def _fresh_id(fights: Fights) -> str:
    import secrets

    while True:
        candidate = f"fight-{secrets.token_hex(4)}"
        if not fights.store.version(candidate):
            return candidate


def _handlers(fights: Fights) -> list[Callable[..., Any]]:
    """The route handlers, bound to ``fights``."""

    @post("/fights", status_code=201, summary="Create a fight", responses=_errors(400, 409, 422),
          description="Start a fight with its combatants joined (all or nothing). Returns the GM's token, once.")
    async def create_fight(request: Request[Any, Any, Any], data: JSONBody[CreateFight]) -> Created:
        spec = _strict(await request.body(), CreateFight)
        return await anyio.to_thread.run_sync(create, spec)

    def create(data: CreateFight) -> Created:
        fight_id = data.id or _fresh_id(fights)
        if fights.store.version(fight_id):
            raise HTTPException(status_code=409, detail=f"a fight {fight_id!r} already exists")
        fight = fights.start(fight_id, data)
        token = fights.keep.add_seat(fight_id, "gm")
        return Created(fight_id=fight_id, gm_token=token, head=head_of(fight), options=fight.options())

    @get("/fights", sync_to_thread=True, summary="List fights",
         description="Every fight in the store, with its head. Needs no token: ids and heads are public.")
    def list_fights() -> list[FightSummary]:
        return [FightSummary(fight_id=fight_id, head=_stored_head(fights.store, fight_id))
                for fight_id in fights.store.fights()]

    @get("/fights/{fight_id:str}/options", sync_to_thread=True, summary="What the fight waits for now",
         responses=_errors(401, 403, 404),
         description="Fight.options(): phase, round, turn, the open decision and every legal command.")
    def options(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> OptionsView:
        _seat(request, fights, fight_id)
        return fights.view(fight_id)

    @post("/fights/{fight_id:str}/commands", status_code=201, summary="Give a command",
          responses=_errors(400, 401, 403, 404, 409, 422),
          description="Decide one command and append its events atomically; send expected_version (stale: "
                      "409) and an Idempotency-Key header (a retry gets the first answer; nothing twice).")
    async def command(request: Request[Any, Any, Any], fight_id: FromPath[str], data: JSONBody[CommandRequest],
                      idempotency_key: Annotated[str | None, HeaderParameter(
                          name="Idempotency-Key", required=False, max_length=200)] = None
                      ) -> Response[CommandResult]:
        token = _gm(request, fights, fight_id)
        asked = _strict(await request.body(), CommandRequest)
        answer = await anyio.to_thread.run_sync(give, token, fight_id, asked, idempotency_key)
        return cast("Response[CommandResult]", answer)  # the encoded CommandResult (or a problem), byte for byte

    def give(token: str, fight_id: str, data: CommandRequest, idempotency_key: str | None) -> Response[bytes]:
        asked = hashlib.sha256(msgspec.json.encode(data)).hexdigest()
        with fights.lock(fight_id):
            if idempotency_key is not None:
                first = fights.keep.answer(fight_id, token, idempotency_key)
                if first is not None:
                    if first[0] != asked:
                        return _problem(422, "idempotency-key-reused", "This key was used for another request",
                                        f"Idempotency-Key {idempotency_key!r} was first sent with another body")
                    return Response(first[2], status_code=first[1], media_type="application/json")
            fight = fights.fight(fight_id)
            if data.expected_version is not None and data.expected_version != fight.version:
                raise ConcurrencyError(fight_id, data.expected_version, fight.version)
            try:
                stored = fight.execute(_with_kept_seed(data.command, fight), by="gm")
            except ConcurrencyError:
                fights._loaded.pop(fight_id, None)  # another process got there first: reload next time
                raise
            fights.appended[fight_id] = fight.version
            view = fights.view(fight_id)
            body = _ENCODER.encode(CommandResult(head=view.head, events=tuple(stored), options=view.options))
            if idempotency_key is not None:
                fights.keep.keep_answer(fight_id, token, idempotency_key, asked, 201, body)
        return Response(body, status_code=201, media_type="application/json")

    @get("/fights/{fight_id:str}/events", sync_to_thread=True, summary="Events after a seq",
         responses=_errors(400, 401, 403, 404),
         description=f"The stored events after seq `after`, in order, at most `limit` (up to {PAGE}).")
    def events(request: Request[Any, Any, Any], fight_id: FromPath[str],
               after: Annotated[int, QueryParameter(ge=0)] = 0,
               limit: Annotated[int, QueryParameter(ge=1, le=PAGE)] = 100) -> EventsPage:
        _seat(request, fights, fight_id)
        with fights.lock(fight_id):
            fight = fights.fight(fight_id)
            head = head_of(fight)
        page: list[StoredEvent] = []
        for rec in fights.store.read(fight_id, after):
            if rec.seq > head.seq or len(page) == limit:
                break
            page.append(rec)
        last = page[-1].seq if page else after
        return EventsPage(head=head, events=tuple(page), next_after=last if last < head.seq else None)

    @get("/fights/{fight_id:str}/stream", summary="The live stream (Server-Sent Events)",
         responses=_errors(400, 401, 403, 404),
         description="Every stored event after Last-Event-ID (or `after`) as an `event` message whose id is its "
                     "seq, then each new one as it is appended, in order, once; an `options` message (no id) "
                     "whenever what the fight waits for changes.")
    async def stream(request: Request[Any, Any, Any], fight_id: FromPath[str],
                     after: Annotated[int, QueryParameter(ge=0)] = 0,
                     last_event_id: Annotated[str | None, HeaderParameter(name="Last-Event-ID", required=False,
                                                                          max_length=20)] = None
                     ) -> ServerSentEvent:
        _seat(request, fights, fight_id)
        start = after
        if last_event_id:
            if not last_event_id.isdigit():
                raise ValidationException(detail="Last-Event-ID is the seq of the last event received",
                                          extra=[{"message": "Expected a seq (a whole number)",
                                                  "key": "Last-Event-ID", "source": "header"}])
            start = int(last_event_id)
        return ServerSentEvent(_follow(fights, fight_id, start), retry_duration=1000)

    return [create_fight, list_fights, options, command, events, stream]


def _strict(body: bytes, kind: type[T]) -> T:
    """The body decoded as strictly as omen's own decoders (Litestar converts leniently: 0 would pass as
    false); a value that does not validate is the same 400 as any other, naming its field."""
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as exc:
        reason, path = reason_and_path(exc)
        key = path.removeprefix("$").lstrip(".")
        raise ValidationException(detail="the body does not validate",
                                  extra=[{"message": reason, "key": key, "source": "body"}]) from None


POLL = 0.1  # seconds between two looks at what this process appended (a dict read: no thread, no store)
OTHERS = 10  # every OTHERS looks, the store is read too: other server processes may have appended


async def _follow(fights: Fights, fight_id: str, after: int) -> AsyncIterator[ServerSentEventMessage]:
    """The messages of one stream: the events after ``after`` in order, each once, then an ``options`` message
    whenever the head moves; forever, until the client goes. What this process appends is seen within POLL
    seconds (Fights.appended), what other processes append within POLL * OTHERS; the options of a head are
    computed once for every stream and answer (Fights.view)."""
    shown, looks, more = -1, 0, True
    while True:
        if more or fights.appended.get(fight_id, 0) > shown or looks % OTHERS == 0:
            batch, view = await anyio.to_thread.run_sync(_news, fights, fight_id, after, shown)
            for rec in batch:
                yield ServerSentEventMessage(data=_ENCODER.encode(rec).decode(), event="event", id=rec.seq)
                after = rec.seq
            more = view is not None and after < view.head.seq  # a page short of the head: the rest first
            if more:
                continue
            if view is not None:
                shown = view.head.seq
                yield ServerSentEventMessage(data=_ENCODER.encode(view).decode(), event="options")
        looks += 1
        await anyio.sleep(POLL)


def _news(fights: Fights, fight_id: str, after: int, shown: int
          ) -> tuple[list[StoredEvent], OptionsView | None]:
    """The events after ``after`` up to the head now (at most a page), and the view at that head; nothing if
    the head is the one last shown."""
    if after == shown and fights.store.version(fight_id) == shown:
        return [], None
    view = fights.view(fight_id)
    batch: list[StoredEvent] = []
    for rec in fights.store.read(fight_id, after):
        if rec.seq > view.head.seq or len(batch) == PAGE:
            break
        batch.append(rec)
    return batch, view


def create_app(store: EventStore, keep: Keep | None = None) -> Litestar:
    """The ASGI app serving the fights of ``store``; ``keep`` holds tokens and seeds (default: in memory)."""
    fights = Fights(store, keep or Keep())
    handlers: dict[Any, Any] = {OmenError: _omen_problem, ValidationException: _validation_problem,
                                HTTPException: _http_problem, NotFoundException: _http_problem}
    from litestar.openapi import OpenAPIConfig

    from omen_core import __version__

    openapi = OpenAPIConfig(title="omen", version=__version__, description="The network back end of omen: fights, "
                            "their options, commands and events (docs/server.md).")
    routes = _handlers(fights)
    return Litestar(route_handlers=routes, exception_handlers=handlers, debug=False, openapi_config=openapi,
                    before_request=_allow(routes))


def _allow(routes: list[Any]) -> Callable[[Request[Any, Any, Any]], Any]:
    """A hook answering OPTIONS with every method of the path in ``Allow`` (Litestar's own lists only some when
    one path has several handlers)."""
    methods: dict[str, set[str]] = {}
    for handler in routes:
        for path in handler.paths:
            methods.setdefault(re.sub(r":[a-z]+}", "}", path), set()).update(handler.http_methods)

    async def hook(request: Request[Any, Any, Any]) -> Response[bytes] | None:
        if request.method != "OPTIONS":
            return None
        allowed = methods.get(str(request.scope.get("path_template", "")), set()) | {"OPTIONS"}
        return Response(b"", status_code=204, headers={"Allow": ", ".join(sorted(allowed))})

    return hook
