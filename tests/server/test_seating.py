"""omen_server/seating.py: seats the GM manages: every seat's link shown again (its token made from the GM's, only
hashes kept), a seat reissued (the old token refused) or revoked (its stream ends), a QR code of a link."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import segno

from omen_server.keep import Keep, token_hash
from tests.server.processes import Server
from tests.server.test_app import Table, sheet


@pytest.fixture
def table(tmp_path: Path) -> Any:
    """A table over a SQLite store and keep in ``tmp_path``, its client open, a duel created."""
    made = Table(tmp_path)
    with made.client:
        made.create()
        yield made


def seat(table: Table, name: str, plays: tuple[str, ...] = ("kael",)) -> dict[str, Any]:
    """POST a seat (a player's if it plays someone, else a spectator's); the answer."""
    answer = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player" if plays else "spectator", "name": name, "combatants": list(plays)})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def listed(table: Table) -> list[dict[str, Any]]:
    answer = table.client.get("/fights/duel/seats", headers=table.auth())
    assert answer.status_code == 200, answer.text
    return list(answer.json())


def who(table: Table, token: str) -> int:
    return table.client.get("/fights/duel/seat", headers=table.auth(token)).status_code


class TestLinks:
    def test_every_seat_is_listed_with_its_link_again_and_only_hashes_are_kept(self, table: Any,
                                                                               tmp_path: Path) -> None:
        """After the seats are made, GET seats gives the GM each seat's id, token and link again (the token made
        from the GM's), equal to what POST answered, and the token opens that seat; the keep holds no token."""
        alice, watcher = seat(table, "Alice"), seat(table, "the table", ())
        seats = listed(table)
        assert [s["kind"] for s in seats] == ["gm", "player", "spectator"]
        by_id = {s["id"]: s for s in seats}
        for made in (alice, watcher):
            entry = by_id[made["id"]]
            assert entry["token"] == made["token"] and entry["link"] == f"/table/duel#token={made['token']}"
            assert who(table, entry["token"]) == 200
        kept = (tmp_path / "keep.db").read_bytes()
        for token in (alice["token"], watcher["token"], table.gm):
            assert token.encode() not in kept
        rows = {r[0] for r in sqlite3.connect(tmp_path / "keep.db").execute("select token_hash from seats")}
        assert token_hash(alice["token"]) in rows

    def test_only_the_gm_lists_seats_and_another_gm_cannot_make_the_links(self, table: Any) -> None:
        """A player's token gets 403 from GET seats; the GM of another fight gets 403 too, and tokens made from
        another GM token open nothing here."""
        alice = seat(table, "Alice")
        assert table.client.get("/fights/duel/seats", headers=table.auth(alice["token"])).status_code == 403
        other = table.client.post("/fights", json={"id": "other", "combatants": [sheet("kael"), sheet("vesh")]}
                                  ).json()["gm_token"]
        assert table.client.get("/fights/duel/seats", headers=table.auth(other)).status_code == 403
        from omen_server.keep import seat_token

        forged = seat_token(other, "duel", alice["id"], 0, "player")
        assert forged != alice["token"] and who(table, forged) == 401


class TestReissueAndRevoke:
    def test_a_reissued_seat_has_a_new_token_and_the_old_one_is_refused(self, table: Any) -> None:
        """Reissue answers a new token that opens the seat; the old one is 401 at once; GET seats shows the new
        link; the seat keeps its id, name and combatants."""
        alice = seat(table, "Alice")
        answer = table.client.post(f"/fights/duel/seats/{alice['id']}/reissue", headers=table.auth())
        assert answer.status_code == 200, answer.text
        again = answer.json()
        assert again["token"] != alice["token"] and again["id"] == alice["id"]
        assert again["seat"] == alice["seat"]
        assert who(table, alice["token"]) == 401 and who(table, again["token"]) == 200
        entry = next(s for s in listed(table) if s["id"] == alice["id"])
        assert entry["token"] == again["token"]

    def test_a_revoked_seat_opens_nothing_until_reissued(self, table: Any) -> None:
        """Revoke: the token is 401, the seat listed as revoked with no link; a reissue brings it back."""
        alice = seat(table, "Alice")
        answer = table.client.post(f"/fights/duel/seats/{alice['id']}/revoke", headers=table.auth())
        assert answer.status_code == 200 and answer.json()["revoked"] is True, answer.text
        assert who(table, alice["token"]) == 401
        entry = next(s for s in listed(table) if s["id"] == alice["id"])
        assert entry["revoked"] is True and "link" not in entry and "token" not in entry
        back = table.client.post(f"/fights/duel/seats/{alice['id']}/reissue", headers=table.auth()).json()
        assert who(table, back["token"]) == 200 and who(table, alice["token"]) == 401

    def test_a_revoked_or_replaced_token_is_told_so(self, table: Any) -> None:
        """A token the GM revoked is 401 saying it was revoked; one a reissue replaced, saying the GM reissued the
        seat (it said the token was not one this server made); a token never made still says that."""
        alice = seat(table, "Alice")
        table.client.post(f"/fights/duel/seats/{alice['id']}/revoke", headers=table.auth())
        said = table.client.get("/fights/duel/state", headers=table.auth(alice["token"]))
        assert said.status_code == 401 and "revoked by the GM" in said.json()["detail"]
        back = table.client.post(f"/fights/duel/seats/{alice['id']}/reissue", headers=table.auth()).json()
        table.client.post(f"/fights/duel/seats/{alice['id']}/reissue", headers=table.auth())
        said = table.client.get("/fights/duel/state", headers=table.auth(back["token"]))
        assert said.status_code == 401 and "the GM reissued this seat" in said.json()["detail"]
        said = table.client.get("/fights/duel/state", headers=table.auth("omen_player_" + "x" * 43))
        assert said.status_code == 401 and "not one this server made" in said.json()["detail"]

    def test_a_token_revoked_then_its_seat_reissued_is_told_the_seat_has_a_new_link(self, table: Any) -> None:
        """docs/server.md "Managing seats": Alice's token, revoked, then her seat reissued, is 401 saying the GM
        reissued the seat and to ask for its new link (it kept saying "revoked": a tester); Bob's seat, revoked and
        not reissued, still says revoked."""
        alice, bob = seat(table, "Alice"), seat(table, "Bob")
        for who_ in (alice, bob):
            table.client.post(f"/fights/duel/seats/{who_['id']}/revoke", headers=table.auth())
        table.client.post(f"/fights/duel/seats/{alice['id']}/reissue", headers=table.auth())
        said = table.client.get("/fights/duel/state", headers=table.auth(alice["token"]))
        assert said.status_code == 401 and said.json()["detail"] == (
            "the GM reissued this seat: this token opens nothing any more (ask the GM for the seat's new link)")
        said = table.client.get("/fights/duel/state", headers=table.auth(bob["token"]))
        assert said.status_code == 401 and "revoked by the GM" in said.json()["detail"]

    def test_the_gm_seat_and_unknown_seats_are_refused(self, table: Any) -> None:
        """The GM's own seat cannot be reissued or revoked (422 invalid-request at ``path.seat_id``, the OpenAPI
        parameter: a well-formed request that cannot be done, every token being made from it); an unknown seat
        is 404; a player may not reissue (403)."""
        alice = seat(table, "Alice")
        gm = next(s for s in listed(table) if s["kind"] == "gm")
        for action in ("reissue", "revoke"):
            refused = table.client.post(f"/fights/duel/seats/{gm['id']}/{action}", headers=table.auth())
            assert refused.status_code == 422, refused.text
            assert (refused.json()["type"], refused.json()["field"]) == ("/problems/invalid-request", "path.seat_id")
            assert table.client.post(f"/fights/duel/seats/nope/{action}", headers=table.auth()).status_code == 404
            assert table.client.post(f"/fights/duel/seats/{alice['id']}/{action}",
                                     headers=table.auth(alice["token"])).status_code == 403


class TestQr:
    def test_the_qr_code_holds_the_seats_link(self, table: Any) -> None:
        """The QR code is an SVG of origin + the seat's link: its modules are those of that text (segno), not of
        the link before a reissue; a bad origin is 400 (one with a newline after it too, which the OpenAPI document's
        pattern refuses: it was 200), one left out 400 at ``query.origin``, a revoked seat 404."""
        alice = seat(table, "Alice")
        url = f"/fights/duel/seats/{alice['id']}/qr"
        origin = "http://127.0.0.1:8000"
        answer = table.client.get(url, params={"origin": origin}, headers=table.auth())
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg+xml")

        def modules(svg: str) -> str:
            return str(re.findall(r'class="qrline"[^>]* d="([^"]+)"', svg)[0])

        def path(text: str) -> str:
            return modules(segno.make(text, error="m").svg_inline(scale=4, border=4))

        served = modules(answer.text)
        assert 'xmlns="http://www.w3.org/2000/svg"' in answer.text
        assert served == path(f"{origin}/table/duel#token={alice['token']}")
        table.client.post(f"/fights/duel/seats/{alice['id']}/reissue", headers=table.auth())
        assert modules(table.client.get(url, params={"origin": origin}, headers=table.auth()).text) != served
        bad = table.client.get(url, params={"origin": "javascript:alert(1)"}, headers=table.auth())
        assert bad.status_code == 400 and bad.json()["detail"] == (  # (the pattern, its backslashes doubled, it was)
            "Expected an origin: http:// or https://, a host name or a bracketed IPv6 address, an optional :port, "
            "and nothing after it (http://192.168.1.20:8000) (at query.origin)")
        trailing = table.client.get(url, params={"origin": origin + "\n"}, headers=table.auth())
        assert trailing.status_code == 400 and trailing.json()["detail"] == bad.json()["detail"], trailing.text  # (200)
        left_out = table.client.get(url, headers=table.auth())
        assert left_out.status_code == 400 and left_out.json()["field"] == "query.origin", left_out.text
        table.client.post(f"/fights/duel/seats/{alice['id']}/revoke", headers=table.auth())
        assert table.client.get(url, params={"origin": origin}, headers=table.auth()).status_code == 404


def test_a_keep_made_before_seat_ids_gets_them_and_its_seats_a_link_on_reissue(tmp_path: Path) -> None:
    """A keep whose seats table predates seat ids is migrated: its seats get ids, and are listed without a link
    (their tokens were random: nothing can make them again) until the GM reissues them."""
    db = sqlite3.connect(tmp_path / "keep.db")
    db.execute("create table seats (token_hash text primary key, fight_id text not null, kind text not null, "
               "name text not null default '', combatants text not null default '[]')")
    db.execute("insert into seats values ('ab' || hex(randomblob(30)), 'duel', 'player', 'Old', '[\"kael\"]')")
    db.commit()
    db.close()
    rows = Keep(str(tmp_path / "keep.db")).seat_rows("duel")
    assert len(rows) == 1 and len(rows[0].seat_id) == 10 and not rows[0].derived and not rows[0].revoked


def test_a_revoked_seats_stream_ends(tmp_path: Path) -> None:
    """A real server: a player's live stream is open; the GM revokes the seat; the stream ends within a few
    seconds (its once-a-second look finds the token refused)."""
    import httpx

    server = Server(tmp_path)
    try:
        status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
        assert status == 201, made
        status, alice = server.call("POST", "/fights/duel/seats", {"kind": "player", "name": "Alice",
                                                                   "combatants": ["kael"]}, made["gm_token"])
        assert status == 201, alice
        with httpx.Client(timeout=20) as client, client.stream(
                "GET", f"http://127.0.0.1:{server.port}/fights/duel/stream",
                headers={"Authorization": f"Bearer {alice['token']}"}) as answer:
            lines = answer.iter_lines()
            assert next(line for line in lines if line.startswith("event: options"))
            status, _ = server.call("POST", f"/fights/duel/seats/{alice['id']}/revoke", {}, made["gm_token"])
            assert status == 200
            started = time.monotonic()
            for _line in lines:
                assert time.monotonic() - started < 10
            took = time.monotonic() - started
        assert took < 5
    finally:
        server.stop()


def seats_at_once(servers: list[Server], gm_token: str, count: int) -> list[int]:
    """``count`` spectators' seats of ``duel`` asked for at the same instant (a barrier frees them), spread over
    ``servers``; the statuses."""
    import threading

    start = threading.Barrier(count)
    statuses: list[int] = []

    def ask(n: int) -> None:
        start.wait()
        statuses.append(servers[n % len(servers)].call("POST", "/fights/duel/seats",
                                                       {"kind": "spectator", "name": f"s{n}"}, gm_token)[0])

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return statuses


def test_seats_asked_for_at_once_never_pass_max_seats(tmp_path: Path) -> None:
    """A real server: 70 spectators' seats asked for at once are 63 made (the GM's is the 64th) and 7 refused
    409; the fight lists exactly MAX_SEATS (the count and the insert are one transaction of the keep)."""
    from omen_server.limits import MAX_SEATS

    server = Server(tmp_path)
    try:
        status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
        assert status == 201, made
        statuses = seats_at_once([server], made["gm_token"], 70)
        assert sorted(statuses) == [201] * (MAX_SEATS - 1) + [409] * (71 - MAX_SEATS)
        status, seats = server.call("GET", "/fights/duel/seats", token=made["gm_token"])
        assert status == 200 and len(seats) == MAX_SEATS == 64
    finally:
        server.stop()


def test_a_keyed_retry_of_making_a_seat_makes_no_second_seat(table: Any, tmp_path: Path) -> None:
    """A Node client author's find: POST seats sent twice with one Idempotency-Key made two seats. Keyed, the retry
    is answered with the seat the first made (its id and token, made again from the GM's: the keep holds its id,
    never its token); after a reissue, with the new token (as GET seats shows it); once revoked, 409 (reissue it);
    the same key with another body is 422; a refused request (a combatant the fight does not hold) frees its key."""
    body = {"kind": "player", "name": "Alice", "combatants": ["kael"]}
    keyed = {**table.auth(), "Idempotency-Key": "alice-seat"}
    first = table.client.post("/fights/duel/seats", headers=keyed, json=body)
    again = table.client.post("/fights/duel/seats", headers=keyed, json=body)
    assert first.status_code == again.status_code == 201, again.text
    assert again.content == first.content
    assert [s["name"] for s in listed(table)] == ["", "Alice"]
    with sqlite3.connect(tmp_path / "keep.db") as db:
        kept = db.execute("select body from answers where key = 'alice-seat'").fetchall()
    assert kept == [(b'{"id":"' + first.json()["id"].encode() + b'"}',)]
    seat_id = first.json()["id"]
    table.client.post(f"/fights/duel/seats/{seat_id}/reissue", headers=table.auth())
    reissued = table.client.post("/fights/duel/seats", headers=keyed, json=body).json()
    assert reissued["token"] == listed(table)[1]["token"] != first.json()["token"]
    table.client.post(f"/fights/duel/seats/{seat_id}/revoke", headers=table.auth())
    revoked = table.client.post("/fights/duel/seats", headers=keyed, json=body)
    assert revoked.status_code == 409 and seat_id in revoked.json()["detail"], revoked.text
    other = table.client.post("/fights/duel/seats", headers=keyed, json={**body, "name": "Bob"})
    assert other.status_code == 422 and other.json()["type"] == "/problems/idempotency-key-reused"
    fresh = {**table.auth(), "Idempotency-Key": "bob-seat"}
    for _ in range(2):
        bad = table.client.post("/fights/duel/seats", headers=fresh, json={**body, "combatants": ["nobody"]})
        assert bad.status_code == 422 and bad.json()["type"] == "/problems/unknown-combatant", bad.text
    assert table.client.post("/fights/duel/seats", headers=fresh, json=body).status_code == 201
    assert len(listed(table)) == 3


def test_a_seat_naming_a_combatant_twice_is_refused_at_its_second_place(table: Any) -> None:
    """A seat's combatants name each combatant once, as ``POST /fights`` refuses an id given twice: ["kael",
    "kael"] is 422 invalid-request at $.combatants[1] (a tester's seat was made, listing Kael twice), no seat made."""
    before = len(listed(table))
    bad = table.client.post("/fights/duel/seats", headers=table.auth(),
                            json={"kind": "player", "name": "x", "combatants": ["kael", "kael"]})
    assert bad.status_code == 422 and bad.json()["type"] == "/problems/invalid-request", bad.text
    assert bad.json()["field"] == "$.combatants[1]" and "'kael' is given twice" in bad.json()["detail"]
    assert len(listed(table)) == before
