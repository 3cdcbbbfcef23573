"""The HTTP resources of ``omen serve``: fights, their options, commands and events, behind bearer tokens.

Every answer is JSON and carries the fight's head (seq and hash), so every
client witnesses the chain; every error is a problem document (RFC 9457,
``application/problem+json``) naming the rule id or the field path. Commands
are the scenario vocabulary (``omen schema --of command``), faces included
for manual dice, with the version the client saw (``expected_version``: a
stale one is 409) and an optional ``Idempotency-Key`` (a retry appends
nothing twice and gets the first answer again).

Every request but ``GET /fights`` carries a seat's bearer token: the GM's
(``POST /fights`` returns it), or a player's or spectator's (the GM makes them,
``POST /fights/{id}/seats``). Each seat sees the fight through its own view
(:mod:`omen_server.views`): the state, the options, the events, the stream,
explanations, the verification report and every error message.

:func:`create_app` assembles the app from these routes and those of the seats (:mod:`omen_server.seating`), of
dice staged (:mod:`omen_server.staging`) and of the table page (:mod:`omen_server.table`), with the OpenAPI
document (:mod:`omen_server.openapi`): this module is above all of them (only the package and ``serve`` import it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import re
import threading
import weakref
from collections.abc import Callable
from typing import Annotated, Any, cast

import anyio
import anyio.to_thread
import msgspec
from litestar import Litestar, Request, Response, get, post
from litestar.config.compression import CompressionConfig
from litestar.exceptions import HTTPException, NotFoundException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.params import FromPath, HeaderParameter, Parameter, QueryParameter
from litestar.response import ServerSentEvent

from omen_core import OmenError
from omen_core.commands import Command
from omen_core.dice import FacesNeeded
from omen_core.errors import (
    ConcurrencyError,
)
from omen_core.events import ActionSettled, FightEnded, StoredEvent
from omen_core.store import EventStore
from omen_core.walk import StoreSource, done_under_key
from omen_replay.explain import Explanation

from . import guard
from .app import (
    _ENCODER,
    PAGE,
    AppendedThenFailed,
    CommandRequest,
    CommandResult,
    Conflict,
    ContentRead,
    ContentText,
    Created,
    CreateFight,
    EventsPage,
    Fights,
    FightsPage,
    Forbidden,
    Head,
    IdempotencyKeyHeader,
    Keyed,
    NewSeat,
    OptionsView,
    SeatEntry,
    SeatInfo,
    SeatMade,
    SettingsChange,
    StateView,
    TableSettings,
    TooManyStreams,
    Unauthorized,
    Unprocessable,
    VerifyView,
    _allowed,
    _answer_keyed,
    _bearer,
    _check_ids,
    _check_roster,
    _check_words,
    _errors,
    _first_answer,
    _follow,
    _fresh_id,
    _gm,
    _http_problem,
    _internal_problem,
    _may_give,
    _names_seen,
    _omen_problem,
    _problem,
    _remember,
    _request_hash,
    _seat,
    _strict,
    _validation_problem,
    by_of,
    extension_problem,
    fights_page,
    head_as_get,
    head_of,
    listen_for_commits,
    may_give_as_sent,
    no_store_by_default,
    own_faces_only,
    physical_now,
    read_pasted,
    run_command,
    wholes_within,
)
from .keep import CREATES, AnswerTaken, AnyKeep, Keep, Seat, new_token, seat_token
from .limits import (
    FIGHTS_PAGE,
    MAX_BODY_BYTES,
    MAX_PUBLIC_EFFECTS,
    MAX_SEQ,
    STREAMS_PER_TOKEN,
)
from .openapi import openapi_config
from .seating import entries, seat_info, seat_routes
from .seating import make_seat as seat_for
from .staging import already_staged, stage, staged_view, staging_routes
from .table import CSP, table_routes
from .views import (
    EVENT_VIEWS,
    SeenEvent,
    Sight,
    combatant_views,
    named_by,
    participants_of,
    seat_options,
    seen_event,
)

__all__ = ["create_app"]


def _physical_in(physical: tuple[str, ...], dice: str | None) -> None:
    """422 at ``$.physical`` for physical dice in a fight whose dice are not seeded (every die of a manual fight is
    typed already: the list would say nothing)."""
    if physical and dice != "seeded":
        raise Unprocessable(f"only a seeded fight has physical dice for some combatants: every die of a {dice} fight "
                            "is typed in already (at $.physical)", "$.physical")


def _may_create(request: Request[Any, Any, Any], create_token: str | None) -> None:
    """401 unless the request carries the creation token the operator configured (``omen serve --create-token``;
    none: anyone may create, as an app embedded without one)."""
    if create_token is None:
        return
    if not guard.same_token(_bearer(request, "the server's creation token (in the set-up link omen serve printed)"),
                            create_token):
        raise Unauthorized(detail="creating a fight needs the server's creation token: open the set-up link omen "
                                  "serve printed, or send the token it was given (--create-token, "
                                  "OMEN_CREATE_TOKEN) as the bearer token")


def _handlers(fights: Fights, create_token: str | None = None) -> list[Callable[..., Any]]:
    """The route handlers, bound to ``fights``; ``create_token``: the token ``POST /fights`` needs (None: none)."""

    @post("/fights", status_code=201, summary="Create a fight", responses=_errors(400, 401, 409, 413, 422, 503),
          description="Start a fight with its combatants joined (all or nothing), and its table settings. Returns "
                      "the GM's token, once (with an Idempotency-Key header, again to a retry with the same key, "
                      "body and creation token: a lost answer is asked for again safely). Needs the server's "
                      "creation token as the bearer token when the operator set one (omen serve always does).")
    async def create_fight(request: Request[Any, Any, Any],
                           idempotency_key: IdempotencyKeyHeader = None) -> Created:
        _may_create(request, create_token)
        body = await request.body()
        spec = _strict(body, CreateFight)
        wholes_within(body)  # a sheet's number past 2**53 - 1 named where the request holds it
        check_creation(spec)
        if idempotency_key is None:
            return await anyio.to_thread.run_sync(create, spec)
        creator = request.headers.get("authorization", "") if create_token is not None else ""
        keyed = (creator, idempotency_key, hashlib.sha256(msgspec.json.encode(spec)).hexdigest())
        return await anyio.to_thread.run_sync(create_keyed, spec, keyed)

    @post("/content", status_code=200, summary="Read sheets or a ruleset written in TOML",
          responses=_errors(400, 401, 413, 422),
          description="Content as a GM writes it for omen run (docs/content.md): kind `sheets` (one sheet, or "
                      "several as [[combatants]] tables) or `ruleset`, its TOML in `text`; answers it in JSON, as "
                      "POST /fights takes it. An error names the line and the field (422 invalid-content, field "
                      "$.text). Stores nothing. Needs the creation token as POST /fights does.")
    async def read_content(request: Request[Any, Any, Any]) -> ContentRead:
        _may_create(request, create_token)
        return read_pasted(_strict(await request.body(), ContentText))

    def create(data: CreateFight, fight_id: str | None = None, gm_token: str | None = None,
               answer: tuple[str, str, str, bytes] | None = None) -> Created:
        fight_id = fight_id or data.id or _fresh_id(fights)
        gm_token = gm_token or new_token("gm")
        fight = fights.start(fight_id, data, gm_token, answer)
        return Created(fight_id=fight_id, gm_token=gm_token, head=head_of(fight),
                       options=fights.view(fight_id, fight).options)

    def create_keyed(data: CreateFight, keyed: tuple[str, str, str]) -> Created:
        """:func:`create` under an ``Idempotency-Key``: the fight it made already, if any (its GM token made again:
        :func:`created_gm_token`), else a new one whose answer (its id) is kept with it, atomically. Two servers
        given the key at once: on the store's own database the keep's primary key lets one answer be kept, in
        its log's transaction, and the other's whole creation is rolled back (:class:`AnswerTaken`, or the id's
        409) and answered with the first's fight; on another keep, the keep's creation lock is held from the look
        for the key to the log's append, so the second finds the first's fight."""
        with creating, fights.creating():  # one keyed creation at a time in this process
            done = created_before(keyed)
            if done is not None:
                return done
            fight_id = data.id or _fresh_id(fights)
            gm_token = created_gm_token(keyed, fight_id)
            answer = (*keyed, msgspec.json.encode({"fight_id": fight_id}))
            try:
                return create(data, fight_id, gm_token, answer)
            except (AnswerTaken, Conflict):
                done = created_before(keyed)  # the same key's request won, on another server: its fight
                if done is None:
                    raise
                return done

    def created_before(keyed: tuple[str, str, str]) -> Created | None:
        """The fight a ``POST /fights`` with this key (and creation token) made, as it stands now, with its GM
        token; None if there is none (a kept answer whose fight never reached the log is dropped); 422 if the key
        was sent with another body."""
        creator, key, request_hash = keyed
        found = fights.keep.answer(CREATES, creator, key)
        if found is None:
            return None
        if found[0] != request_hash:
            raise Unprocessable(f"Idempotency-Key {key!r} was first sent with another body: a retry sends the "
                                "same request again, every field as it was; another request takes a new key", "$",
                                "idempotency-key-reused", "This key was used for another request")
        fight_id = msgspec.json.decode(found[2])["fight_id"]
        if not fights.store.version(fight_id):  # its server stopped between the keep and the log: no one holds it
            fights.keep.forget_answer(creator, key, found[2])
            return None
        with fights.lock(fight_id):
            fight = fights.fight(fight_id)
            return Created(fight_id=fight_id, gm_token=created_gm_token(keyed, fight_id), head=head_of(fight),
                           options=fights.view(fight_id, fight).options)

    def created_gm_token(keyed: tuple[str, str, str], fight_id: str) -> str:
        """The GM token of a fight made under an ``Idempotency-Key``: the HMAC-SHA256, under the servers' secret
        and the creation token, of the fight, the key and the request's hash (256 bits, like a random one): a retry
        with the same key, body and creation token gets it again, and only the hash is kept, as for any token;
        reading the database does not give it (the creation token is not in it)."""
        creator, key, request_hash = keyed
        secret = fights.keep.secret("create") + creator.encode()
        digest = hmac.new(secret, f"omen create|{fight_id}|{key}|{request_hash}".encode(), hashlib.sha256).digest()
        return "omen_gm_" + base64.urlsafe_b64encode(digest).decode().rstrip("=")

    creating = threading.Lock()

    @get("/fights", sync_to_thread=True, summary="List fights", responses=_errors(400, 503),
         description=f"The fights of the store after the id `after`, in id order, with their heads, at most `limit` "
                     f"(1 to {FIGHTS_PAGE}); page on with `after=next_after`. Needs no token: ids and heads are "
                     "public.")
    def list_fights(after: Annotated[str, QueryParameter(max_length=128)] = "",
                    limit: Annotated[int, QueryParameter(ge=1, le=FIGHTS_PAGE)] = FIGHTS_PAGE) -> FightsPage:
        return fights_page(fights.store, after, limit)

    @post("/fights/{fight_id:str}/seats", status_code=201, summary="Make a seat (GM)",
          responses=_errors(400, 401, 403, 404, 409, 422),
          description="A player's seat (the combatants it plays) or a spectator's; returns its token (made from the "
                      "GM's: GET seats shows it again to the GM). With an Idempotency-Key header, a retry with the "
                      "same key and body makes no second seat: it is answered with the seat made, its token made "
                      "again from the GM's (the keep holds the seat's id, never its token).")
    async def make_seat(request: Request[Any, Any, Any], fight_id: FromPath[str],
                        idempotency_key: IdempotencyKeyHeader = None) -> Response[SeatMade]:
        token = _gm(request, fights, fight_id)
        body = await request.body()
        spec = _strict(body, NewSeat)
        if idempotency_key is None:
            made = await anyio.to_thread.run_sync(seat_for, fights, fight_id, token, spec)
            return cast("Response[SeatMade]", _seat_made(made))
        key = Keyed(fight_id, token, idempotency_key, _request_hash("seats", msgspec.json.encode(spec)))
        first = await _first_answer(fights.keep, key, lambda status, kept: seat_again(key, kept))
        if first is None:
            first = await anyio.to_thread.run_sync(_answer_keyed, fights.keep, key,
                                                   lambda: _seat_made(seat_for(fights, fight_id, token, spec)),
                                                   _seat_kept)
        return cast("Response[SeatMade]", first)

    def seat_again(key: Keyed, kept: bytes) -> Response[bytes]:
        """The answer to a retry of a keyed ``POST seats``: the seat the key made (its id is kept), as it stands now,
        its token made again from the GM's (the current generation's, after a reissue); 409 if it was revoked."""
        seat_id = msgspec.json.decode(kept)["id"]
        row = next((r for r in fights.keep.seat_rows(key.fight_id) if r.seat_id == seat_id), None)
        if row is None or row.revoked or row.kind == "gm":
            return _problem(409, "conflict", "Conflict", f"the seat this Idempotency-Key made ({seat_id}) was revoked "
                            "since: POST its reissue for a new token (GET seats lists it)")
        token = seat_token(key.token, key.fight_id, seat_id, row.generation, row.kind)
        return _seat_made(SeatMade(token=token, seat=seat_info(fights, key.fight_id, Seat(
            key.fight_id, row.kind, row.name, row.combatants)), id=seat_id))

    @get("/fights/{fight_id:str}/seats", sync_to_thread=True, summary="The seats of a fight (GM)",
         responses=_errors(401, 403, 404),
         description="Every seat: id, kind, name, combatants, and its token and link (made again from the GM's token: "
                     "only hashes are kept), or revoked.")
    def seats(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> list[SeatEntry]:
        token = _gm(request, fights, fight_id)
        return entries(fights, fight_id, token)

    @get("/fights/{fight_id:str}/seat", sync_to_thread=True, summary="This token's seat",
         responses=_errors(401, 403))
    def my_seat(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> SeatInfo:
        return seat_info(fights, fight_id, _seat(request, fights, fight_id)[1])

    @get("/fights/{fight_id:str}/settings", sync_to_thread=True, summary="The table settings (GM)",
         responses=_errors(401, 403, 404))
    def settings(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> TableSettings:
        _gm(request, fights, fight_id)
        with fights.lock(fight_id):
            fights.fight(fight_id)
            return fights.settings(fight_id)

    @post("/fights/{fight_id:str}/settings", status_code=200, summary="Change the table settings (GM)",
          responses=_errors(400, 401, 403, 404, 422),
          description="HP display, hide or reveal combatants, GM notes, publish the log, physical dice.")
    async def change_settings(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> TableSettings:
        _gm(request, fights, fight_id)
        change = _strict(await request.body(), SettingsChange)
        return await anyio.to_thread.run_sync(apply_change, fight_id, change)

    def apply_change(fight_id: str, change: SettingsChange) -> TableSettings:
        with fights.lock(fight_id):
            known = set(fights.fight(fight_id).state.combatants)
            _check_ids(change.reveal, known, "reveal")
            _check_ids(change.hide, known, "hide")
            _check_ids(change.physical or (), known, "physical")
            if change.physical is not None:
                _physical_in(change.physical, fights.fight(fight_id).state.dice_mode)
            _check_ids({k: v for k, v in change.notes.items() if k != "fight"}, known, "notes")
            now = fights.settings(fight_id)
            hidden = tuple(w for w in (*now.hidden, *change.hide) if w not in change.reveal)
            notes = {**now.notes, **change.notes}
            effects = tuple(dict.fromkeys(e for e in (*now.public_effects, *change.reveal_effects)
                                          if e not in change.hide_effects))
            if len(effects) > MAX_PUBLIC_EFFECTS:
                raise Unprocessable(f"a fight makes at most {MAX_PUBLIC_EFFECTS} effect names public (at "
                                    "$.reveal_effects)", "$.reveal_effects")
            new = TableSettings(hp_display=change.hp_display or now.hp_display,
                                hidden=tuple(dict.fromkeys(hidden)),
                                notes={k: v for k, v in notes.items() if v}, published=now.published or change.publish,
                                public_effects=effects,
                                physical=now.physical if change.physical is None
                                else tuple(dict.fromkeys(change.physical)))
            before = physical_now(fights, fight_id, fights.fight(fight_id))
            fights.put_settings(fight_id, new)
            if physical_now(fights, fight_id, fights.fight(fight_id)) != before and fights.keep.staged(fight_id):
                fights.keep.put_staged(fight_id, None)  # its faces were asked for under the old list: given again
                fights.poke(fight_id)
            return new

    @get("/fights/{fight_id:str}/state", sync_to_thread=True, summary="The fight as this seat sees it",
         responses=_errors(401, 403, 404),
         description="Phase, round, turn, the open decision and every combatant this seat may see, as it may see "
                     "them (HP exact, banded or hidden as the table settings say).")
    def state(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> StateView:
        _token, seat = _seat(request, fights, fight_id)
        sight = fights.sight(fight_id, seat)
        with fights.lock(fight_id):
            fight = fights.fight(fight_id)
            view = fights.view(fight_id)
            settings = fights.settings(fight_id)
            options = seat_options(view.options, sight)
            return StateView(head=view.head, seat=seat_info(fights, fight_id, seat),
                             phase=options.phase, round=options.round,
                             turn=options.turn, dice=options.dice, waiting=options.waiting,
                             combatants=combatant_views(fight.state, sight, settings.hidden),
                             seed_revealed=fight.state.revealed_seed is not None,
                             ended=fight.state.ending is not None, settings=settings if sight.gm else None)

    @get("/fights/{fight_id:str}/options", sync_to_thread=True, summary="What this seat may do now",
         responses=_errors(401, 403, 404),
         description="Fight.options() as this seat may see it: phase, round, turn, the open decision and every "
                     "command this seat may give now, with its legal arguments and dice.")
    def options(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> OptionsView:
        _token, seat = _seat(request, fights, fight_id)
        sight = fights.sight(fight_id, seat)
        with fights.lock(fight_id):
            return fights.seat_view(fight_id, fights.fight(fight_id), sight, seat)

    @post("/fights/{fight_id:str}/commands", status_code=201, summary="Give a command",
          responses=_errors(400, 401, 403, 404, 409, 422, 503),
          description="Decide one command and append its events atomically; send expected_version (stale: "
                      "409) and an Idempotency-Key header (a retry, or the same request to another server, gets "
                      "the first answer; nothing is appended twice). A player gives the commands of its own "
                      "combatants; undo, redo, reveal_seed and the rest are the GM's.")
    async def command(request: Request[Any, Any, Any], fight_id: FromPath[str],
                      idempotency_key: IdempotencyKeyHeader = None
                      ) -> Response[CommandResult]:
        token, seat = _seat(request, fights, fight_id)
        body = await request.body()
        may_give_as_sent(seat, body)  # the seat's right first: a GM's command from a player is 403, however sent
        asked = _strict(body, CommandRequest)
        _may_give(seat, asked.command)
        in_body = idempotency_key is None and asked.command.idempotency_key is not None
        idempotency_key = _one_key(asked.command, idempotency_key)
        if idempotency_key is None:
            answer = await anyio.to_thread.run_sync(give, request, token, seat, fight_id, asked)
        else:
            key = Keyed(fight_id, token, idempotency_key, hashlib.sha256(msgspec.json.encode(asked)).hexdigest())
            first = await _first_answer(fights.keep, key, in_body=in_body)
            if first is not None:
                return cast("Response[CommandResult]", first)
            answer = await anyio.to_thread.run_sync(give_keyed, request, seat, asked, key)
        # the encoded CommandResult (201) or the staged command (202), byte for byte
        return cast("Response[CommandResult]", answer)

    def give_keyed(request: Request[Any, Any, Any], seat: Seat, data: CommandRequest, key: Keyed) -> Response[bytes]:
        """:func:`give` under a key this request reserved (:func:`_answer_keyed`)."""
        return _answer_keyed(fights.keep, key, lambda: give(request, key.token, seat, key.fight_id, data))

    def give(request: Request[Any, Any, Any], token: str, seat: Seat, fight_id: str, data: CommandRequest
             ) -> Response[bytes]:
        """Decide and append ``data``'s command for ``seat``: 201 with a CommandResult as the seat sees it; or, asked
        to stage a command that needs another seat's dice, 202 with the staged command. A command whose
        ``idempotency_key`` the log already records (given by ``omen do --idempotency-key``, or by a server that
        kept no answer for it) is not done again; that is looked for only once the seat may give the command and it
        names only combatants the seat sees, and a player's or spectator's seat looks only among the commands whose
        key its view shows (:func:`_not_recorded`), so that no answer about the key tells of a command the seat may
        not see. A command sent without ``expected_version`` applies to whatever the fight is at: when another
        server appends to the fight between this one's read and its append, it is decided again on the fight as it
        now is (up to :data:`RACED` times; it was a 409 naming an expected version the client never sent: a
        tester)."""
        def once() -> Response[bytes]:
            with fights.lock(fight_id):
                fight = fights.fight(fight_id)
                sight = fights.sight(fight_id, seat, fight)
                _remember(request, sight, data.command)
                _names_seen(data.command, fight, sight)  # the seat's own checks first: the key's answer (409 done, 422
                _not_recorded(fights.store, fight_id, data.command, sight)  # reused) must not confirm a guess
                if data.expected_version is not None and data.expected_version != fight.version:
                    raise ConcurrencyError(fight_id, data.expected_version, fight.version)
                by = by_of(seat)
                own_faces_only(fight, data.command, sight, len(data.command.dice or ()),
                               physical=physical_now(fights, fight_id, fight))
                refused = already_staged(fights, fight_id, fight) if data.stage else None
                if refused is not None:  # one staged command a fight: a staged command's head is not moved by another
                    return refused
                try:
                    body = run_command(fights, fight_id, seat, fight, data.command, by)
                except AppendedThenFailed as failed:  # appended: the answer stands (kept for its key), not a refusal
                    return extension_problem(failed, sight, getattr(request.state, "typed", None) or [])
                except FacesNeeded as missing:
                    if not data.stage:
                        raise
                    return stage(fights, fight_id, fight, seat, data.command, missing, by)
            return Response(body, status_code=201, media_type="application/json")

        tries_left = RACED
        while True:
            try:
                return once()
            except ConcurrencyError:
                if data.expected_version is not None or tries_left == 0:
                    raise
                tries_left -= 1

    @get("/fights/{fight_id:str}/events", sync_to_thread=True, summary="Events after a seq",
         responses=_errors(400, 401, 403, 404),
         description=f"The stored events after seq `after`, in order, at most `limit` (up to {PAGE}), as this "
                     "seat sees them.")
    def events(request: Request[Any, Any, Any], fight_id: FromPath[str],
               after: Annotated[int, QueryParameter(ge=0, le=MAX_SEQ)] = 0,
               limit: Annotated[int, QueryParameter(ge=1, le=PAGE)] = 100) -> EventsPage:
        _token, seat = _seat(request, fights, fight_id)
        sight = fights.sight(fight_id, seat)
        with fights.lock(fight_id):
            fight = fights.fight(fight_id)
            head = head_of(fight)
        page: list[SeenEvent] = []
        for rec in fights.store.read(fight_id, after):
            if rec.seq > head.seq or len(page) == limit:
                break
            page.append(seen_event(rec, sight))
        last = page[-1].seq if page else after
        return EventsPage(head=head, events=tuple(page), next_after=last if last < head.seq else None)

    @get("/fights/{fight_id:str}/explain/{seq:int}", sync_to_thread=True, summary="Explain a seq",
         responses=_errors(400, 401, 403, 404),
         description="omen explain: every die and term of the roll, attack, save or check at `seq`. A player or "
                     "spectator may explain what shows only sheets its seat sees whole (the GM anything; every "
                     "seat anything once the log is published).")
    def explain_seq(request: Request[Any, Any, Any], fight_id: FromPath[str],
                    seq: Annotated[int, Parameter(ge=1, le=MAX_SEQ)]) -> Explanation:
        _token, seat = _seat(request, fights, fight_id)
        from omen_replay.explain import explain

        sight = fights.sight(fight_id, seat)
        whole = fights.whole_for(fight_id, seat)
        with fights.lock(fight_id):
            fight = fights.fight(fight_id)
        if not 1 <= seq <= fight.version:
            raise NotFoundException(detail=f"no seq {seq} in fight {fight_id!r} (its head is {fight.version})")
        # each die is checked against the seed revealed for its own commitment, read from the log (C42), as
        # ``omen explain`` does: never the keep's latest seed, which a die drawn before a mid-fight reveal was not
        found = explain(StoreSource(fights.store, fight_id), seq, None, owners=None if whole else sight.owns,
                        follow=whole)  # a command's seq: its action, to a seat that sees the log whole (the
        # command's own words are what a seat's view is checked against: a reviewer)
        why = None if whole else _unexplainable(found, seq, sight, fights.store, fight_id)
        if why is not None:
            raise Forbidden(detail=f"the explanation of seq {seq} {why}; the GM may explain it, and every seat once "
                                   "the GM publishes the log")
        return found

    @get("/fights/{fight_id:str}/verify", sync_to_thread=True, summary="Verify the fight",
         responses=_errors(401, 403, 404),
         description="omen verify on the stored fight: the chain, every die (against the seed once revealed), "
                     "every derived number. The findings to the GM (every seat once published).")
    def verify_fight(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> VerifyView:
        _token, seat = _seat(request, fights, fight_id)
        from omen_replay.verify import verify_store

        whole = fights.whole_for(fight_id, seat)
        with fights.lock(fight_id):
            fight = fights.fight(fight_id)
            seed = bytes.fromhex(fight.state.revealed_seed) if fight.state.revealed_seed else None
        report = verify_store(fights.store, fight_id, seed)
        head = Head(seq=report.head.seq, hash=report.head.hash) if report.head is not None else None
        counted = seat.kind == "gm" or report.seed_revealed  # how many dice were drawn tells of hidden combatants'
        return VerifyView(clean=report.clean, events=report.events,
                          seeded_dice=report.seeded_dice if counted else None,
                          seed_revealed=report.seed_revealed, problems=len(report.problems), head=head,
                          findings=tuple(f"seq {f.seq} [{f.rule}] {f.what}" for f in report.findings)
                          if whole else None)

    @get("/fights/{fight_id:str}/log", sync_to_thread=True, summary="The log, byte for byte",
         responses={**_errors(401, 403, 404), 200: ResponseSpec(data_container=str, media_type="application/x-ndjson",
                                                                generate_examples=False,
                                                                description="The stored JSON Lines")},
         description="The fight's JSON Lines exactly as stored (`omen verify LOG --head SEQ:HASH` checks it "
                     "against a witnessed head): to the GM, and to every seat once the GM publishes it.")
    def log(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> Response[bytes]:
        _token, seat = _seat(request, fights, fight_id)
        _whole_or_403(fights, fight_id, seat, "the whole log")
        body = b"".join(line if line.endswith(b"\n") else line + b"\n"
                        for chunk in fights.store.read_lines(fight_id) for line in chunk)
        return Response(body, media_type="application/x-ndjson")

    @get("/fights/{fight_id:str}/session", sync_to_thread=True, summary="The session log (HTML)",
         responses={**_errors(401, 403, 404), 200: ResponseSpec(data_container=str, media_type="text/html",
                                                                generate_examples=False,
                                                                description="The session log, one HTML page")},
         description="omen log --format html: the GM's, and every seat's once the GM publishes the log.")
    def session(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> Response[bytes]:
        _token, seat = _seat(request, fights, fight_id)
        from omen_replay.render import render_records

        _whole_or_403(fights, fight_id, seat, "the session log")
        page = render_records(fights.store.read(fight_id), "html")
        # text/html: Litestar adds "; charset=utf-8" to a text type itself (given too, it said it twice)
        return Response(page.encode(), media_type="text/html", headers=guard.page_headers(page, CSP))

    @get("/fights/{fight_id:str}/stream", summary="The live stream (Server-Sent Events)",
         responses=_errors(400, 401, 403, 404, 429),
         description="Every stored event after Last-Event-ID (or `after`) as an `event` message whose id is its "
                     "seq, then each new one as it is appended, in order, once, as this seat sees it; an "
                     "`options` message (no id) whenever what the fight waits for changes.")
    async def stream(request: Request[Any, Any, Any], fight_id: FromPath[str],
                     after: Annotated[int, QueryParameter(ge=0, le=MAX_SEQ)] = 0,
                     last_event_id: Annotated[str | None, HeaderParameter(name="Last-Event-ID", required=False)
                                              ] = None
                     ) -> ServerSentEvent:
        token, seat = _seat(request, fights, fight_id)
        start = after
        if last_event_id:
            seq = guard.parse_seq(last_event_id)
            if seq is None:
                raise ValidationException(detail="Last-Event-ID is the seq of the last event received",
                                          extra=[{"message": f"Expected a seq (ASCII digits, at most {MAX_SEQ})",
                                                  "key": "Last-Event-ID", "source": "header"}])
            start = seq
        head = await anyio.to_thread.run_sync(fights.store.version, fight_id)  # the store's, shared by every server
        if start > head:  # an id of another fight or store: waiting for it would be silence, maybe for ever
            named, source = ("Last-Event-ID", "header") if last_event_id else ("after", "query")
            raise ValidationException(detail=f"{named} {start} is past the fight's head, seq {head}: resume from an "
                                             "event of this fight (or leave it out to start from the first)",
                                      extra=[{"message": f"{named} {start} is past the fight's head, seq {head} "
                                                         "(an id of another fight or store?): expected a seq from 0 "
                                                         f"to {head}",
                                              "key": named, "source": source}])
        live = fights.streams.setdefault(token, weakref.WeakSet())
        if sum(1 for held in live if held.ag_frame is not None) >= STREAMS_PER_TOKEN:  # (a finished one has none)
            raise TooManyStreams(detail=f"this token holds {STREAMS_PER_TOKEN} live streams open on this server "
                                        "already: close one (a page of the table) and open this again")
        following = _follow(fights, fight_id, seat, start, token)
        live.add(following)  # (counted while it runs: one never started or ended drops out as it is let go)
        return ServerSentEvent(following, retry_duration=1000)

    return [create_fight, read_content, list_fights, make_seat, seats, my_seat, settings, change_settings, state,
            options, command, events, explain_seq, verify_fight, log, session, stream]


def _whole_or_403(fights: Fights, fight_id: str, seat: Seat, what: str) -> None:
    """403 unless ``seat`` may read the fight whole (:meth:`Fights.whole_for`)."""
    if not fights.whole_for(fight_id, seat):
        raise Forbidden(detail=f"{what} shows every sheet: the GM publishes it (POST settings with publish: true) "
                               "when the fight is over")


def _unexplainable(found: Explanation, asked: int, sight: Sight, store: EventStore, fight_id: str) -> str | None:
    """Why a player or spectator may not see an explanation, or None if it may: it may when its seat plays every
    combatant the explanation names (whose sheets its terms show: the attacker's bonuses, the target's RES bonus,
    armor and HP, even where the target rolled no die, C10) and every roller of its dice, and sees the event
    explained whole. Nothing else is looked at: whether it may is a function of what the seat plays, never of the
    text of a secret. The reason said is read off the seat's own view of the seq ``asked`` alone (an envelope, a
    command it sees in part: the GM's check of its own combatant), never off the explanation it may not see."""
    if _explainable(found, sight, store, fight_id):
        return None
    rec = next(iter(store.read(fight_id, asked - 1)), None)
    seen = seen_event(rec, sight) if rec is not None else None
    if seen is not None and seen.event is None:
        return "is of an event this seat is not shown"
    if rec is not None and seen is not None and seen.type == "command_issued":
        last = rec.batch + rec.batch_size - 1
        given = msgspec.to_builtins(getattr(rec.event, "command", None))
        shown = (seen.event or {}).get("command")
        faces = isinstance(given, dict) and {k: v for k, v in given.items() if k != "dice"} == shown
        return ("shows the faces of a command this seat sees but for them (a command's dice may be other seats' "
                "faces, C29: the seat's own are in its rolls)" if faces else
                "shows the whole of a command this seat sees only in part (another seat gave it)") + "; " + (
            f"explain the seqs it wrote ({rec.seq + 1} to {last}) for its rolls and results" if last > rec.seq
            else "it wrote nothing else")
    told = [name for name in seen.withheld if EVENT_VIEWS.get(str(seen.type), {}).get(name, "gm") == "gm"] \
        if seen is not None else []
    if told:  # a reason, a note, a revealed seed: the GM's (the seed every seat's once the log is published); said
        # whether or not the event holds one (its withheld list names it either way: views._hidden_if_there)
        return f"shows what only the GM may see of that event (its {', '.join(told)}, if it has one)"
    return "shows the sheets of combatants this seat does not play"


def _explainable(found: Explanation, sight: Sight, store: EventStore, fight_id: str) -> bool:
    """Whether a player or spectator may see an explanation (:func:`_unexplainable`)."""
    if not all(sight.owns(line.roller) for line in found.dice):
        return False
    rec = next(iter(store.read(fight_id, found.seq - 1)), None)
    if rec is None or not all(sight.owns(who) for who in named_by(rec)):
        return False
    if isinstance(rec.event, FightEnded) and not all(sight.owns(who) for who in sight.max_hp):
        return False  # its explanation tells how every combatant stands (C33): their HP
    seen = seen_event(rec, sight)
    if seen.event is None or seen.withheld:
        return False
    span = _action_span(store, fight_id, rec)  # every event the explanation tells of: its combatants the seat's, and
    # each seen whole (a GM's reason for cancelling the action, a GM-only field, was told: a reviewer)
    return all(sight.owns(who) for later in span for who in named_by(later)) and \
        not any(seen_event(later, sight).withheld for later in span)


def _action_span(store: EventStore, fight_id: str, first: StoredEvent) -> list[StoredEvent]:
    """The events after ``first`` that the explanation of the action it declares tells of: everything up to the
    action's settling (its answers and who gave them, an ally's ability, a reaction nested in it, what its damage
    moved), or to the head while it is open; none for an event that declares no action. Who they name is who the
    explanation names (a moment of the round declares no combatant, but whoever answers it is named)."""
    if participants_of(first) is None:
        return []
    span: list[StoredEvent] = []
    for rec in store.read(fight_id, first.seq):
        span.append(rec)
        if isinstance(rec.event, ActionSettled) and rec.event.action == first.seq:
            break
    return span


def _one_key(command: Command, header: str | None) -> str | None:
    """The request's idempotency key: the ``Idempotency-Key`` header, or the command's own ``idempotency_key``
    (which the log records with the command; the header's answers are kept in the keep); both given, they must be
    the same."""
    own = command.idempotency_key
    if own is not None and header is not None and own != header:
        raise Unprocessable(f"the command's idempotency_key {own!r} differs from the Idempotency-Key header "
                            f"{header!r}: give one key, or the same in both", "$.command.idempotency_key",
                            "idempotency-key-reused", "Two keys for one request")
    return header if header is not None else own


def _not_recorded(store: EventStore, fight_id: str, command: Command, sight: Sight) -> None:
    """Refuse a command the fight's log already records under its ``idempotency_key``: 409 if the same command was
    done under it (nothing appended again); another command holding the key is 422 (``KeyReused``). A player or
    spectator searches only the commands whose key its own view shows (those given for its own combatants): a key
    held by a command it is not shown is, to it, a key not used, so that what it is answered depends on nothing it
    may not see (a guessed key of the GM's hidden command was confirmed by the 422)."""
    key = command.idempotency_key
    shown = None if sight.gm else (lambda rec: _key_shown(rec, sight, key))
    batch = done_under_key(StoreSource(store, fight_id), command, shown=shown)
    if batch:
        raise Conflict(detail=f"the command with idempotency key {command.idempotency_key!r} was done at seq "
                              f"{batch[0].seq} (to {batch[-1].seq}): nothing was appended again; read the events "
                              "to see it")


def _key_shown(rec: StoredEvent, sight: Sight, key: str | None) -> bool:
    """Whether ``sight``'s view of the ``command_issued`` ``rec`` shows its ``idempotency_key`` as ``key``."""
    seen = seen_event(rec, sight).event
    command = seen.get("command") if seen is not None else None
    return isinstance(command, dict) and command.get("idempotency_key") == key


def _seat_made(made: SeatMade) -> Response[bytes]:
    return Response(_ENCODER.encode(made), status_code=201, media_type="application/json")


def _seat_kept(answer: Response[bytes]) -> bytes:
    """What the keep holds for a keyed ``POST seats``: the seat's id alone (its token is never kept)."""
    return msgspec.json.encode({"id": msgspec.json.decode(bytes(answer.content))["id"]})


def check_creation(spec: CreateFight) -> None:
    """What ``POST /fights`` checks of a fight's set-up beyond its schema: the roster (its size, its ids), the words
    of its sheets, and that ``hidden``, ``physical`` and ``notes`` name combatants it holds."""
    _check_roster(spec.combatants)
    _check_words(spec.combatants)
    known = {sheet.id for sheet in spec.combatants}
    _check_ids(spec.hidden, known, "hidden")
    _check_ids(spec.physical, known, "physical")
    _physical_in(spec.physical, spec.dice)
    _check_ids({k: v for k, v in spec.notes.items() if k != "fight"}, known, "notes")  # a key: $.notes.who


def found_fight(store: EventStore, keep: AnyKeep, spec: CreateFight) -> Created:
    """Create a fight as ``POST /fights`` does (checked as it checks, its GM's seat and seed in ``keep``), outside
    any request: ``omen serve --scenario``'s, before the server starts. :class:`Conflict` if the store holds it."""
    check_creation(spec)
    fights = Fights(store, keep, staged_view)
    fight_id = spec.id or _fresh_id(fights)
    gm_token = new_token("gm")
    fight = fights.start(fight_id, spec, gm_token)
    return Created(fight_id=fight_id, gm_token=gm_token, head=head_of(fight),
                   options=fights.view(fight_id, fight).options)


def create_app(store: EventStore, keep: AnyKeep | None = None, *, create_token: str | None = None,
               close_on_shutdown: bool = False) -> Litestar:
    """The ASGI app serving the fights of ``store``; ``keep`` holds tokens and seeds (default: in memory);
    ``create_token``: the bearer token ``POST /fights`` needs (None: anyone may create fights; ``omen serve``
    always sets one); ``close_on_shutdown``: the app owns the store and the keep, and closes them when it stops
    (:func:`close_all`: ``omen serve``'s; an embedder's stay open)."""
    fights = Fights(store, keep or Keep(), staged_view)
    stop = threading.Event()

    def start_listening() -> None:
        _stop_streams_on_signals(fights)
        if hasattr(store, "listen"):
            threading.Thread(target=listen_for_commits, args=(fights, stop), daemon=True,
                             name="omen-listen").start()
    handlers: dict[Any, Any] = {OmenError: _omen_problem, ValidationException: _validation_problem,
                                HTTPException: _http_problem, NotFoundException: _http_problem,
                                500: _internal_problem}

    routes = [*_handlers(fights, create_token), *seat_routes(fights), *staging_routes(fights),
              *table_routes(fights, create_token is not None)]
    # Answers are gzipped for a client that accepts it (the options of a big roster are large and repetitive:
    # 1.7 MB of JSON is 54 KB), the live stream aside (a gzip stream would hold its messages back).
    compression = CompressionConfig(backend="gzip", minimum_size=1024, gzip_compress_level=5,
                                    exclude=r"/fights/[^/]+/stream$")
    app = Litestar(route_handlers=routes, exception_handlers=handlers, debug=False,
                   openapi_config=openapi_config(create_token is not None), before_request=_before(routes),
                   request_max_body_size=MAX_BODY_BYTES, compression_config=compression,
                   on_startup=[start_listening], on_shutdown=[stop.set, fights.stopping.set,
                                                              *([lambda: close_all(fights.keep, store)]
                                                                if close_on_shutdown else [])])
    app.asgi_handler = no_store_by_default(schema_page_headers(head_as_get(app.asgi_handler)))  # HEAD wherever
    # GET (Litestar routes HEAD to @head alone); no cache keeps a seat's answers; /schema as the table's pages
    app.state.fights = fights  # for the tests (and embedders) that look at the stream's messages directly
    return app


#: How many times a command sent without ``expected_version`` is decided again when another server appended to its
#: fight between this one's read and its append (docs/server.md, "Give a command").
RACED = 5

#: The paths of the page of the OpenAPI document (``/schema``), served with the table pages' headers.
_SCHEMA_PAGES = frozenset({"/schema", "/schema/"})


def schema_page_headers(app: Any) -> Any:
    """``app`` with the table pages' headers (:data:`omen_server.table.CSP`: nothing from elsewhere, no script, no
    frame; no ``Referer``; ``nosniff``) on the answer of ``/schema``, a page of this server's alone."""
    extra = [(b"content-security-policy", CSP.encode()), (b"referrer-policy", b"no-referrer"),
             (b"x-content-type-options", b"nosniff")]

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") not in _SCHEMA_PAGES:
            await app(scope, receive, send)
            return

        async def stamped(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await app(scope, receive, stamped)

    return handle


def close_all(*held: object) -> None:
    """Close a stopped server's keep and store (their connections): SQLite then writes its write-ahead log back, so
    that the database files alone hold every fight (a server stopped by SIGTERM, which uvicorn raises again once it
    has shut down, died with them in ``omen.db-wal``, and the cold backup docs/stores.md describes, the files copied
    once no server writes, copied empty databases: an operator tester). Run as the app stops (its shutdown), before
    the signal ends the process."""
    for one in held:
        close = getattr(one, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def _stop_streams_on_signals(fights: Fights) -> None:
    """Have SIGTERM and SIGINT end this process's live streams (:attr:`Fights.stopping`), then do what they did
    (uvicorn's handler: stop taking requests, wait for those in flight at most GRACE_SECONDS). A stream never ends
    by itself: without this each was cancelled at the grace period's end (a traceback in the log for each, and a
    response cut short for each client). Only from the main thread, where signal handlers are set (a server run
    by uvicorn; not a test client's)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGINT, signal.SIGTERM):
        before = signal.getsignal(number)

        def handler(sig: int, frame: Any, before: Any = before) -> None:
            fights.stopping.set()
            if callable(before):
                before(sig, frame)
            elif before == signal.SIG_DFL and sig == signal.SIGINT:
                raise KeyboardInterrupt

        signal.signal(number, handler)


def _before(routes: list[Any]) -> Callable[[Request[Any, Any, Any]], Any]:
    """The hook every request passes before its handler: OPTIONS answered (:func:`_allow`), then a query parameter
    or header given twice refused (:func:`guard.check_once`), a whole number not in ASCII digits
    (:func:`guard.check_wholes`), a fight id in the path that is none
    (:func:`guard.check_path`), a body not sent as JSON (:func:`guard.check_media_type`) and a body nested too deep
    (:func:`guard.check_body`), before anything decodes it."""
    allow = _allow(routes)

    async def hook(request: Request[Any, Any, Any]) -> Response[bytes] | None:
        answered: Response[bytes] | None = await allow(request)
        if answered is None:
            guard.check_once(request.scope)
            guard.check_wholes(request.scope)
            guard.check_path(request)
            await guard.check_media_type(request)
            await guard.check_body(request)
        return answered

    return hook


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
        return Response(b"", status_code=204, headers={"Allow": _allowed(", ".join(allowed), request.url.path)})

    return hook


