"""Seats the GM manages: every seat with its link, a seat's token reissued or revoked, a QR code of a link.

A player's or spectator's token is made from the GM's (:func:`omen_server.keep.seat_token`: an HMAC under the GM's
token of the fight, the seat's id and its generation), so the keep holds only its hash, as for any token, and yet
the GM's page can show every seat's link again after a reload: the server makes each token again from the GM's
token the request carries. Reissuing a seat makes the next generation's token and revokes the one before;
revoking leaves the seat with no token (a reissue brings it back). The server that did it refuses the old token at
once, every other within :data:`omen_server.app.SEAT_TTL` seconds, and a stream opened with it ends.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import anyio.to_thread
from litestar import Request, Response, get, post
from litestar.exceptions import NotFoundException, ValidationException
from litestar.params import FromPath, QueryParameter

from .app import (
    PATTERN_WORDS,
    Conflict,
    Fights,
    NewSeat,
    SeatEntry,
    SeatInfo,
    SeatMade,
    Unprocessable,
    _check_ids,
    _errors,
    _gm,
    _info,
    physical_now,
)
from .keep import Seat, SeatKind, SeatRow, new_seat_id, seat_token
from .limits import MAX_SEATS

__all__ = ["SeatEntry", "seat_routes", "entries", "make_seat", "link_of"]


def link_of(fight_id: str, token: str) -> str:
    """The path of a seat's table link: the token in the fragment, which a browser never sends to a server."""
    return f"/table/{fight_id}#token={token}"


def _entry(fight_id: str, row: SeatRow, gm_token: str) -> SeatEntry:
    token: str | None = None
    if row.kind == "gm":
        token = gm_token
    elif row.derived and not row.revoked:
        token = seat_token(gm_token, fight_id, row.seat_id, row.generation, row.kind)
    return SeatEntry(id=row.seat_id, kind=row.kind, name=row.name, combatants=row.combatants, revoked=row.revoked,
                     token=token, link=link_of(fight_id, token) if token else None)


def entries(fights: Fights, fight_id: str, gm_token: str) -> list[SeatEntry]:
    """Every seat of a fight, in the order made, with its token and link made again from the GM's."""
    return [_entry(fight_id, row, gm_token) for row in fights.keep.seat_rows(fight_id)]


def make_seat(fights: Fights, fight_id: str, gm_token: str, spec: NewSeat) -> SeatMade:
    """A player's or spectator's seat, its token made from the GM's (generation 0); 409 if the fight has
    :data:`MAX_SEATS` seats already (the keep counts and inserts in one transaction)."""
    with fights.lock(fight_id):
        known = set(fights.fight(fight_id).state.combatants)
    if spec.kind == "player" and not spec.combatants:
        raise Unprocessable("a player's seat plays at least one combatant (at $.combatants)", "$.combatants")
    if spec.kind == "spectator" and spec.combatants:
        raise Unprocessable("a spectator's seat plays no combatant (at $.combatants)", "$.combatants")
    _check_ids(spec.combatants, known, "combatants")
    twice = next((i for i, who in enumerate(spec.combatants) if who in spec.combatants[:i]), None)
    if twice is not None:  # as POST /fights refuses a combatant id given twice
        raise Unprocessable(f"{spec.combatants[twice]!r} is given twice: a seat names each combatant it plays once "
                            f"(at $.combatants[{twice}])", f"$.combatants[{twice}]")
    seat_id = new_seat_id()
    token = seat_token(gm_token, fight_id, seat_id, 0, spec.kind)
    if not fights.keep.add_managed_seat(fight_id, seat_id, spec.kind, spec.name, tuple(spec.combatants), token,
                                        most=MAX_SEATS):  # counted and kept atomically: racing requests count too
        raise Conflict(detail=f"this fight has {MAX_SEATS} seats, the most a fight may have")
    fights.poke(fight_id)
    made = Seat(fight_id, spec.kind, spec.name, tuple(spec.combatants))
    return SeatMade(token=token, seat=seat_info(fights, fight_id, made), id=seat_id)


def seat_info(fights: Fights, fight_id: str, seat: Seat) -> SeatInfo:
    """A seat as ``GET /seat`` says it, with its combatants whose dice are physical now (:func:`physical_now`: the
    answer to its making said none: found by a tester)."""
    with fights.lock(fight_id):
        return _info(seat, physical_now(fights, fight_id, fights.fight(fight_id)))


def _row(fights: Fights, fight_id: str, seat_id: str) -> SeatRow:
    row = next((r for r in fights.keep.seat_rows(fight_id) if r.seat_id == seat_id), None)
    if row is None:
        raise NotFoundException(detail=f"no seat {seat_id!r} in fight {fight_id!r} (GET /fights/{fight_id}/seats "
                                       "lists them)")
    if row.kind == "gm":
        raise Unprocessable("the GM's seat cannot be reissued or revoked: every seat's token is made from it "
                            "(at path.seat_id)", "path.seat_id")
    return row


def reissue(fights: Fights, fight_id: str, gm_token: str, seat_id: str) -> SeatMade:
    """The seat's next token; the one before it (or a revocation) no longer opens it."""
    row = _row(fights, fight_id, seat_id)
    kind: SeatKind = row.kind
    token = seat_token(gm_token, fight_id, seat_id, row.generation + 1, kind)
    fights.keep.replace_token(fight_id, seat_id, token, row.generation + 1)
    fights.forget_seats(fight_id)
    assert kind != "gm"
    return SeatMade(token=token, seat=seat_info(fights, fight_id, Seat(fight_id, kind, row.name, row.combatants)),
                    id=seat_id)


def revoke(fights: Fights, fight_id: str, gm_token: str, seat_id: str) -> SeatEntry:
    """No token opens the seat any more (its streams end); a reissue brings it back with a new one."""
    row = _row(fights, fight_id, seat_id)
    fights.keep.replace_token(fight_id, seat_id, None, row.generation + 1)
    fights.forget_seats(fight_id)
    return SeatEntry(id=seat_id, kind=row.kind, name=row.name, combatants=row.combatants, revoked=True)


_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


def qr_svg(text: str) -> bytes:
    """``text`` as a QR code, an SVG image (segno: error correction M, a 4-module quiet zone)."""
    import io

    import segno

    out = io.BytesIO()
    segno.make(text, error="m", micro=False).save(out, kind="svg", scale=4, border=4, dark="#000", light="#fff",
                                                  xmldecl=False)
    return out.getvalue()


def seat_routes(fights: Fights) -> list[Any]:
    """The GM's seat management routes, bound to ``fights``."""

    @post("/fights/{fight_id:str}/seats/{seat_id:str}/reissue", status_code=200, summary="Reissue a seat (GM)",
          responses=_errors(400, 401, 403, 404, 422),
          description="A new token for the seat (made from the GM's); the one before it no longer opens anything.")
    async def reissue_seat(request: Request[Any, Any, Any], fight_id: FromPath[str], seat_id: FromPath[str]
                           ) -> SeatMade:
        token = _gm(request, fights, fight_id)
        return await anyio.to_thread.run_sync(reissue, fights, fight_id, token, seat_id)

    @post("/fights/{fight_id:str}/seats/{seat_id:str}/revoke", status_code=200, summary="Revoke a seat (GM)",
          responses=_errors(400, 401, 403, 404, 422),
          description="The seat's token no longer opens anything (its streams end); reissue it to bring it back.")
    async def revoke_seat(request: Request[Any, Any, Any], fight_id: FromPath[str], seat_id: FromPath[str]
                          ) -> SeatEntry:
        token = _gm(request, fights, fight_id)
        return await anyio.to_thread.run_sync(revoke, fights, fight_id, token, seat_id)

    @get("/fights/{fight_id:str}/seats/{seat_id:str}/qr", sync_to_thread=True, summary="A seat's link as a QR code",
         responses={**_errors(400, 401, 403, 404)},
         description="The seat's link (`origin` + `/table/{id}#token=…`) as a QR code, an SVG image, for a phone "
                     "to scan (GM only).")
    def seat_qr(request: Request[Any, Any, Any], fight_id: FromPath[str], seat_id: FromPath[str],
                origin: Annotated[str, QueryParameter(max_length=300, pattern=_ORIGIN.pattern)]) -> Response[bytes]:
        token = _gm(request, fights, fight_id)
        if not _ORIGIN.fullmatch(origin):  # (not match: its "$" matched before a last newline, which the
            # pattern as the OpenAPI document's readers take it, ECMA-262's, refuses: a tester)
            raise ValidationException(detail="origin is the page's origin", extra=[{
                "message": PATTERN_WORDS["query.origin"], "key": "origin", "source": "query"}])
        entry = next((e for e in entries(fights, fight_id, token) if e.id == seat_id), None)
        if entry is None or entry.link is None:
            raise NotFoundException(detail=f"no link for seat {seat_id!r} (revoked, unknown, or made before seats had "
                                           "ids: reissue it)")
        return Response(qr_svg(origin + entry.link), media_type="image/svg+xml",
                        headers={"Cache-Control": "no-store"})

    return [reissue_seat, revoke_seat, seat_qr]
