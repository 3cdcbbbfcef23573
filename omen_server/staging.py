"""Players roll their own dice: a command whose next dice are another seat's is staged until that seat gives them.

In a fight whose dice are typed in (``manual``), a command carries the faces of every die it rolls, in C29 order,
and the engine refuses it (``FacesNeeded``) when they run short. The server does not change that rule: it keeps
the command and the faces given so far in its keep, asks the seat whose combatant rolls next for its faces (the
player who plays that combatant; the GM for everyone else; the seat that gave it, for dice of its own its form did
not ask for), and gives the command to the engine again with each seat's faces appended, until it is accepted or
refused. So Kael's player types Kael's hit dice on its own page, the GM types the base defense of the raider Kael
attacks on the GM's page, and the attack is decided as one command with all its faces, exactly as if one person had
typed them all.

One command is staged per fight at a time, at the version it was staged at: any other command given meanwhile
moves the head and voids it. The GM or the seat that staged it may withdraw it. Each seat sees the staged command
as it may see any command (:func:`omen_server.views.staged_command`: the GM whole, the others as
:func:`omen_server.views.seen_event`'s rule for ``command_issued``), who must roll now, and, if that is this seat
(or the GM), the dice to give; the 202 a seat is answered is the same view. One naming a combatant a seat does not
see is not shown to that seat at all, unless it staged it or must roll for it: then as its name alone.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

import anyio.to_thread
import msgspec
from litestar import Request, Response, delete, post
from litestar.params import FromPath

from omen_core import Fight
from omen_core.commands import Command, Faces
from omen_core.dice import FacesNeeded, RollRequest
from omen_core.errors import ConcurrencyError, RuleViolation
from omen_core.options import DiceRoll, dice_roll
from omen_core.seats import hidden_from_players

from .app import (
    _ENCODER,
    Fights,
    Forbidden,
    IdempotencyKeyHeader,
    Keyed,
    NotYourFaces,
    StagedView,
    _answer_keyed,
    _errors,
    _first_answer,
    _problem,
    _remember,
    _request_hash,
    _seat,
    _strict,
    by_of,
    run_command,
)
from .keep import Seat
from .views import Sight, staged_command, typed_in

__all__ = ["Staged", "GiveDice", "already_staged", "stage", "staged_view", "seen_staged", "staging_routes",
           "supplier_of"]


class Staged(msgspec.Struct, frozen=True, kw_only=True):
    """A command staged for dice, as the keep holds it: the command, the faces given so far (C29 order), the
    version it was staged at, who gave it (``by``, and its seat's name), and the seat whose dice it waits for
    now (its id, or ``gm``; its name) with the rolls to give; ``faces_by``: who typed the faces so far, as runs
    (who, how many) in their order (a command's ``command_issued`` records them: :meth:`Fight.execute`)."""

    id: str
    command: Command
    faces: tuple[int, ...]
    at: int
    by: str
    staged_by: str
    awaiting_seat: str
    awaiting_name: str
    rolls: tuple[DiceRoll, ...]
    faces_by: tuple[tuple[str, int], ...] = ()

    def typists(self, seat_by: str = "", more: int = 0) -> tuple[tuple[str, int], ...]:
        """Who typed the faces so far (those a keep row from before ``faces_by`` holds: the stager's), and then
        ``more`` faces by ``seat_by``; adjacent runs of one typist joined."""
        runs = self.faces_by or (((self.by, len(self.faces)),) if self.faces else ())
        return _joined((*runs, (seat_by, more)) if more else runs)


def _joined(runs: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """Runs of faces (who, how many), adjacent runs of one typist joined."""
    out: list[tuple[str, int]] = []
    for who, count in runs:
        if out and out[-1][0] == who:
            out[-1] = (who, out[-1][1] + count)
        else:
            out.append((who, count))
    return tuple(out)


def _within(runs: tuple[tuple[str, int], ...], n: int) -> tuple[tuple[str, int], ...]:
    """The runs of the first ``n`` faces."""
    out, left = [], n
    for who, count in runs:
        if left <= 0:
            break
        out.append((who, min(count, left)))
        left -= count
    return tuple(out)


class GiveDice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The faces a seat gives a staged command (its ``id``): the rolls it was asked for, in order."""

    id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    dice: Faces


_DECODE = msgspec.json.Decoder(Staged)


def supplier_of(fights: Fights, fight_id: str, roller: str) -> tuple[str, str]:
    """Who rolls ``roller``'s dice: the first player's seat (not revoked) that plays it, as (seat id, name), else
    the GM (``("gm", "the GM")``)."""
    for row in fights.keep.seat_rows(fight_id):
        if row.kind == "player" and not row.revoked and roller in row.combatants:
            return row.seat_id, row.name or "a player"
    return "gm", "the GM"


def _seat_id(fights: Fights, fight_id: str, seat: Seat) -> str:
    if seat.kind == "gm":
        return "gm"
    for row in fights.keep.seat_rows(fight_id):
        if row.kind == seat.kind and row.name == seat.name and row.combatants == seat.combatants and not row.revoked:
            return row.seat_id
    return ""


def _missing(exc: FacesNeeded) -> tuple[int, list[RollRequest]]:
    """The faces that cover whole rolls among those given, and the rolls still without faces, in order."""
    at, kept, out = 0, 0, []
    for roll in exc.needed:
        size = len(roll.pool)
        if at + size <= exc.given:
            kept = at + size
        else:
            out.append(roll)
        at += size
    return kept, out


def _rolled_by(fights: Fights, fight_id: str, roll: RollRequest, hidden_tie: bool,
               gms: frozenset[int] = frozenset()) -> tuple[str, str]:
    """Who gives a roll's faces: its roller's player (:func:`supplier_of`), but the GM for every die of a roll-off
    whose tie a hidden combatant is in (C19: asking a player for its roll-off die would tell it of a tie with one
    it does not see, which its events withhold whole), and for the rolls in ``gms`` (:func:`_opposing_hidden`)."""
    if (hidden_tie and roll.purpose == "roll_off") or roll.counter in gms:
        return "gm", "the GM"
    return supplier_of(fights, fight_id, roll.roller)


def _opposing_hidden(rolls: list[RollRequest], hidden: frozenset[str]) -> frozenset[int]:
    """The rolls (by counter) that oppose a hidden combatant's save: C15's two dice come one after the other, the
    saver's then the opposing side's (C29), so in each run of save rolls every second one opposes the one before.
    Asking the opposing side's player for it (a save-ends save's applier, C40) would tell it of the hidden saver's
    condition and save, which its events withhold whole: the GM gives it."""
    found: set[int] = set()
    run: list[RollRequest] = []
    for roll in rolls:
        run = [*run, roll] if roll.purpose == "save" else []
        if len(run) % 2 == 0 and run and run[-2].roller in hidden:
            found.add(roll.counter)
    return frozenset(found)


def _next(fights: Fights, fight_id: str, fight: Fight, command: Command, exc: FacesNeeded, faces: tuple[int, ...],
          at: int, by: str, staged_by: str, staged_id: str, typists: tuple[tuple[str, int], ...]) -> Staged:
    kept, missing = _missing(exc)
    hidden = hidden_from_players(fight.state, fights.settings(fight_id).hidden)
    hidden_tie = any(r.purpose == "roll_off" and r.roller in hidden for r in [*exc.needed, *exc.then])
    gms = _opposing_hidden([*exc.needed, *exc.then], frozenset(hidden))
    seat_id, name = _rolled_by(fights, fight_id, missing[0], hidden_tie, gms)
    rolls = []
    for roll in missing:
        if _rolled_by(fights, fight_id, roll, hidden_tie, gms)[0] != seat_id:
            break
        rolls.append(dice_roll(roll))
    return Staged(id=staged_id, command=command, faces=faces[:kept], at=at, by=by, staged_by=staged_by,
                  awaiting_seat=seat_id, awaiting_name=name, rolls=tuple(rolls), faces_by=_within(typists, kept))


def _accepted(fights: Fights, fight_id: str, staged: Staged, sight: Sight, seat: Seat) -> Response[bytes]:
    """202 with the staged command as the seat answered sees it (:func:`seen_staged`): the same bytes as its
    options' ``staged``, never the command as kept."""
    view = seen_staged(fights, fight_id, staged, sight, seat, answered=True)
    assert view is not None
    return Response(_ENCODER.encode(view), status_code=202, media_type="application/json")


def stage(fights: Fights, fight_id: str, fight: Fight, seat: Seat, command: Command, missing: FacesNeeded,
          by: str) -> Response[bytes]:
    """Stage ``command`` (refused for want of faces): 202 with the staged command, waiting for the seat whose dice
    come next: another's, or this seat's own when its form did not ask for them (a save's damage dice from an
    effect the form wrote). Hold the fight's lock."""
    given = tuple(command.dice or ())
    plain = msgspec.structs.replace(command, dice=None)
    staged = _next(fights, fight_id, fight, plain, missing, given, fight.version, by,
                   "the GM" if seat.kind == "gm" else seat.name or "a player", secrets.token_hex(5),
                   ((by, len(given)),) if given else ())
    if not staged.rolls:
        raise missing
    refused = already_staged(fights, fight_id, fight)
    if refused is not None:
        return refused
    fights.keep.put_staged(fight_id, _ENCODER.encode(staged))
    fights.poke(fight_id)
    return _accepted(fights, fight_id, staged, fights.sight(fight_id, seat, fight), seat)


def already_staged(fights: Fights, fight_id: str, fight: Fight) -> Response[bytes] | None:
    """409 ``dice-staged`` if a command of this fight waits for dice now, else None: asked for by every command sent
    with ``"stage": true``, whether or not it needs dice, so that one staged (a table page stages every command of
    a manual fight) never voids another seat's staged command; a command sent without ``stage`` moves the head and
    voids it. Hold the fight's lock."""
    current = _kept(fights, fight_id, fight)
    if current is None:
        return None
    return _problem(409, "dice-staged", "A command already waits for dice",
                    f"a command already waits for {current.awaiting_name}'s dice: it goes first (or the GM or the "
                    "seat that gave it withdraws it: DELETE /fights/{id}/staged)")


def _kept(fights: Fights, fight_id: str, fight: Fight) -> Staged | None:
    """The command staged for this fight at its version now (one staged at an older version is void: dropped)."""
    body = fights.keep.staged(fight_id)
    if body is None:
        return None
    staged = _DECODE.decode(body)
    if staged.at != fight.version:
        fights.keep.put_staged(fight_id, None)
        return None
    return staged


def staged_view(fights: Fights, fight_id: str, fight: Fight, sight: Sight, seat: Seat) -> StagedView | None:
    """The command staged for this fight at its version now as ``seat`` may see it (:func:`seen_staged`), or
    None."""
    body = fights.keep.staged(fight_id)
    if body is None:
        return None
    staged = _DECODE.decode(body)
    if staged.at != fight.version:
        return None
    return seen_staged(fights, fight_id, staged, sight, seat)


def seen_staged(fights: Fights, fight_id: str, staged: Staged, sight: Sight, seat: Seat, answered: bool = False
                ) -> StagedView | None:
    """A staged command as ``seat`` may see it: the command as any command is seen, who gave it and whose dice it
    waits for; the rolls to give to that seat and the GM; how many faces are in to the GM alone (the count tells
    how many dice sheets the seat does not play rolled). A command naming a combatant the seat does not see is
    shown only to the GM, the seat that staged it, the seat it waits for and the seat ``answered`` (that just gave
    its dice), as its name alone (:func:`omen_server.views.staged_command`): to any other its being there would
    tell of that combatant (None)."""
    mine = _seat_id(fights, fight_id, seat)
    yours = (staged.awaiting_seat == "gm" and seat.kind == "gm") or (
        seat.kind == "player" and staged.awaiting_seat == mine)
    plain = msgspec.to_builtins(staged.command)
    party = answered or yours or staged.by == by_of(seat)
    if not (sight.gm or party or all(sight.sees(name) for name in typed_in(plain))):
        return None
    shown = staged_command(plain, sight, party)
    if shown is None:
        return None
    return StagedView(id=staged.id, command=shown, by=staged.staged_by, awaiting=staged.awaiting_name, yours=yours,
                      rolls=staged.rolls if yours or sight.gm else (), given=len(staged.faces) if sight.gm else 0)


def give_dice(request: Request[Any, Any, Any], fights: Fights, fight_id: str, seat: Seat, data: GiveDice
              ) -> Response[bytes]:
    """Append a seat's faces to the staged command and give it to the engine again: 201 with what it appended,
    202 if it now waits for another seat's dice; refused for want of this seat's own faces, or any error the
    command has, as any command is (the staged command stays for missing or bad faces, and is dropped when a rule
    refuses it)."""
    from omen_core.dice import SurplusFaces
    from omen_core.errors import BadInput

    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        sight = fights.sight(fight_id, seat, fight)
        _remember(request, sight)
        request.state.dice_field = "$.dice"  # a face no die shows is this request's, not the staged command's
        staged = _kept(fights, fight_id, fight)
        if staged is None or staged.id != data.id:
            return _no_such_staged(fight.version)
        mine = _seat_id(fights, fight_id, seat)
        if seat.kind != "gm" and staged.awaiting_seat != mine:
            raise Forbidden(detail=f"the staged command waits for {staged.awaiting_name}'s dice, not this seat's")
        asked = sum(len(r.dice) for r in staged.rolls)
        if seat.kind != "gm" and len(data.dice) > asked:  # the dice after this seat's are another's (C29)
            raise NotYourFaces(len(data.dice), [(r.roller, r.purpose, tuple((d.pool, d.sides) for d in r.dice))
                                                for r in staged.rolls], "$.dice")
        faces = (*staged.faces, *data.dice)
        typists = staged.typists(by_of(seat), len(data.dice))  # who typed which: the command_issued records it
        request.state.dice_offset = len(staged.faces)  # a face's place in this request's dice, not the command's
        command = msgspec.structs.replace(staged.command, dice=faces)
        try:
            body = run_command(fights, fight_id, seat, fight, command, staged.by, staged=True, faces_by=typists)
        except FacesNeeded as exc:
            after = _next(fights, fight_id, fight, staged.command, exc, faces, staged.at, staged.by,
                          staged.staged_by, staged.id, typists)
            if len(data.dice) < asked or len(after.faces) < len(faces):
                raise  # short of the faces it was asked for: this seat gives them (the staged command stays)
            # The faces asked for are in: the dice the command rolls next (a hit's damage, the action an Interrupt
            # let go on) are whoever's they are, this seat's again included.
            fights.keep.put_staged(fight_id, _ENCODER.encode(after))
            fights.poke(fight_id)
            return _accepted(fights, fight_id, after, sight, seat)
        except ConcurrencyError as exc:  # another server appended first (these dice given there too, say): as above
            return _no_such_staged(exc.actual)  # (it was "not the expected 20", a version never sent: a tester)
        except (SurplusFaces, BadInput):
            raise
        except RuleViolation:
            fights.keep.put_staged(fight_id, None)
            fights.poke(fight_id)
            raise
        fights.keep.put_staged(fight_id, None)
    return Response(body, status_code=201, media_type="application/json")


def _no_such_staged(version: int) -> Response[bytes]:
    """The 409 for dice given to a staged command that is no longer there: ``version``, where the fight is."""
    return _problem(409, "stale-version", "No such staged command now",
                    "no command waits for dice with that id now (the fight moved on, or it was decided or withdrawn)",
                    current_version=version)


def withdraw(fights: Fights, fight_id: str, seat: Seat) -> None:
    """Drop the staged command: the GM, or the seat that staged it. One the seat is not shown (it names a
    combatant the seat does not see) is, to that seat, none: 204 as when none is staged, and it stays (a 403 would
    tell of it)."""
    with fights.lock(fight_id):
        fight = fights.fight(fight_id)
        staged = _kept(fights, fight_id, fight)
        if staged is None or seen_staged(fights, fight_id, staged, fights.sight(fight_id, seat, fight), seat) is None:
            return
        if seat.kind != "gm" and staged.staged_by != (seat.name or "a player"):
            raise Forbidden(detail="only the GM or the seat that gave the command may withdraw it")
        fights.keep.put_staged(fight_id, None)
        fights.poke(fight_id)


def staging_routes(fights: Fights) -> list[Any]:
    """The routes of staged commands, bound to ``fights``."""

    @post("/fights/{fight_id:str}/staged", status_code=201, summary="Give your dice to a staged command",
          responses=_errors(400, 401, 403, 404, 409, 422),
          description="The faces of this seat's dice for the command staged for them (`id`), in the order asked: "
                      "201 with the events appended, or 202 with the command now waiting for another seat's dice. "
                      "With an Idempotency-Key header, a retry with the same key and body gets the first answer "
                      "again (nothing is appended twice), as for commands.")
    async def give_staged(request: Request[Any, Any, Any], fight_id: FromPath[str],
                          idempotency_key: IdempotencyKeyHeader = None) -> Response[bytes]:
        # the body is read after the token is checked (401 before 400), as for commands; its schema is openapi.py's
        token, seat = _seat(request, fights, fight_id)
        if seat.kind == "spectator":
            raise Forbidden(detail="a spectator's seat gives no dice")
        given = _strict(await request.body(), GiveDice)
        if idempotency_key is None:
            return await anyio.to_thread.run_sync(give_dice, request, fights, fight_id, seat, given)
        key = Keyed(fight_id, token, idempotency_key, _request_hash("staged", msgspec.json.encode(given)))
        first = await _first_answer(fights.keep, key)
        if first is not None:
            return first
        return await anyio.to_thread.run_sync(_answer_keyed, fights.keep, key,
                                              lambda: give_dice(request, fights, fight_id, seat, given))

    @delete("/fights/{fight_id:str}/staged", status_code=204, summary="Withdraw the staged command",
            responses=_errors(401, 403, 404),
            description="The GM, or the seat that gave it, drops the command waiting for dice.")
    async def withdraw_staged(request: Request[Any, Any, Any], fight_id: FromPath[str]) -> None:
        _token, seat = _seat(request, fights, fight_id)
        if seat.kind == "spectator":  # whether or not a command is staged: a spectator stages and withdraws none
            raise Forbidden(detail="a spectator's seat withdraws no command")
        await anyio.to_thread.run_sync(withdraw, fights, fight_id, seat)

    return [give_staged, withdraw_staged]
