"""Real ``omen serve`` processes sharing one PostgreSQL database: streams fed by every server's commits, races
across servers, and a database restart while serving. Skipped without PostgreSQL (tests/postgres.py says how)."""

from __future__ import annotations

import http.client
import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from omen_core.store import PostgresStore
from omen_server.app import SEAT_TTL
from tests.postgres import Postgres
from tests.server.processes import Server, keyed_pairs, race
from tests.server.test_app import sheet
from tests.server.test_processes import Stream


@pytest.fixture
def two(postgres: Postgres, tmp_path: Path) -> Any:
    """Two servers on one fresh PostgreSQL schema (their keep in it too), and its URL, given one creation token
    (as an operator gives every server of one database); both stopped at the end."""
    yield from _two(postgres, tmp_path)


@pytest.fixture
def two_on_own(own_postgres: Postgres, tmp_path: Path) -> Any:
    """As ``two``, on a cluster of the test's own, which it may stop (``own_postgres``)."""
    yield from _two(own_postgres, tmp_path)


def _two(postgres: Postgres, tmp_path: Path) -> Any:
    url = postgres.fresh_url()
    with PostgresStore(url):
        pass  # the tables, made once before two processes race to make them
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    token = "omen_create_" + secrets.token_urlsafe(16)
    servers = [Server(tmp_path / "a", store=url, create_token=token), Server(tmp_path / "b", store=url,
                                                                            create_token=token)]
    yield servers, url
    for server in servers:
        server.stop()


def _create(server: Server) -> tuple[str, int]:
    status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
    assert status == 201, made
    return made["gm_token"], made["head"]["seq"]


def _next(server: Server, token: str) -> dict[str, Any]:
    """The first command offered now (no undo), as a body."""
    status, seen = server.call("GET", "/fights/duel/options", token=token)
    assert status == 200, seen
    offer = next(o for o in seen["options"]["offers"] if o["choices"] and o["command"] != "undo")
    return {"command": offer["command"], **offer["choices"][0]["args"]}


def test_every_stream_sends_every_event_once_whichever_server_appended_it(two: Any) -> None:
    """A stream open on each server while commands alternate between them: each sends every event of the fight
    once, in order, and the options at the last head (the other server's commits reach it by NOTIFY)."""
    (one, other), url = two
    token, head = _create(one)
    streams = [Stream(one, token), Stream(other, token)]  # the GM token works on both: the keep is shared
    for i in range(12):
        server = (one, other)[i % 2]
        status, answer = server.call("POST", "/fights/duel/commands",
                                     {"command": _next(server, token), "expected_version": head}, token)
        assert status == 201, answer
        head = answer["head"]["seq"]
    for stream in streams:
        ids, options = stream.until(head)
        stream.close()
        assert ids == list(range(1, head + 1))
        assert options[-1]["head"]["seq"] == head
    with PostgresStore(url) as store:
        assert store.version("duel") == head


def test_a_stream_hears_the_other_servers_commit_at_once(two: Any) -> None:
    """A command appended through one server reaches a stream on the other within half a second (NOTIFY, not
    the once-a-second look at the store)."""
    (one, other), _url = two
    token, head = _create(one)
    stream = Stream(other, token)
    stream.until(head)
    heard: list[float] = []
    status, answer = one.call("POST", "/fights/duel/commands", {"command": _next(one, token)}, token)
    sent = time.monotonic()

    def read() -> None:
        stream.until(answer["head"]["seq"])
        heard.append(time.monotonic())

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(30)
    stream.close()
    assert status == 201 and heard
    assert heard[0] - sent < 5  # generous on a loaded machine; docs/performance.md has the measured figure


def test_two_commands_racing_through_two_servers_give_one_201_and_one_409(two: Any) -> None:
    """The same command at the same version through each server at once: one appended, one 409 with the new
    version; the log holds the winner once."""
    (one, other), url = two
    token, version = _create(one)
    won, lost = race((one, other), "/fights/duel/commands",
                     {"command": {"command": "roll_initiative"}, "expected_version": version}, token)
    with PostgresStore(url) as store:
        assert lost["current_version"] == won["head"]["seq"] == store.version("duel")


def test_a_database_restart_is_503_and_service_resumes_with_nothing_lost(two_on_own: Any, own_postgres: Postgres
                                                                        ) -> None:
    """PostgreSQL stopped under a serving server: a command is 503 (store-unavailable, Retry-After), nothing
    written; once it is back the same command is 201, and the stream that was open sends every event once (it
    waited out the outage, even when it asked the keep for its seat meanwhile)."""
    postgres = own_postgres
    postgres.require_cluster()
    (one, _other), url = two_on_own
    token, head = _create(one)
    stream = Stream(one, token)
    stream.until(head)
    command = _next(one, token)
    postgres.pause()
    try:
        # Longer than a seat is trusted (SEAT_TTL): the stream asks the keep for its seat during the outage too.
        time.sleep(SEAT_TTL + 1.0)
        asked = time.monotonic()
        status, answer = one.call("POST", "/fights/duel/commands", {"command": command, "expected_version": head},
                                  token)
        waited = time.monotonic() - asked
    finally:
        postgres.resume()
    assert status == 503 and answer["type"] == "/problems/store-unavailable", answer
    # The server waits STORE_TIMEOUT (1 s) for a connection, not the 5 s it once held a worker: generous on a
    # loaded machine (docs/server.md has the measured figure).
    assert waited < 4, waited
    for _ in range(50):
        status, answer = one.call("POST", "/fights/duel/commands", {"command": command, "expected_version": head},
                                  token)
        if status != 503:
            break
        time.sleep(0.2)
    assert status == 201, answer
    ids, _options = stream.until(answer["head"]["seq"])  # the stream waited out the outage
    stream.close()
    assert ids == list(range(head + 1, answer["head"]["seq"] + 1))
    with PostgresStore(url) as store:
        assert store.version("duel") == answer["head"]["seq"]


def _fights(servers: tuple[Server, Server], count: int, prefix: str) -> list[tuple[str, str, int]]:
    """``count`` fights made through the two servers in turn: (id, GM token, head) each."""
    made = []
    for n in range(count):
        fight_id = f"{prefix}{n:03d}"
        status, created = servers[n % 2].call("POST", "/fights", {"id": fight_id,
                                                                  "combatants": [sheet("kael"), sheet("vesh")]})
        assert status == 201, created
        made.append((fight_id, created["gm_token"], created["head"]["seq"]))
    return made


def test_one_keyed_request_sent_to_two_servers_at_once_is_appended_once(two: Any) -> None:
    """Issue 22: 100 fights, and for each the same request with the same Idempotency-Key sent to both servers at
    the same instant, all 200 at once: each fight's command is appended exactly once, and both servers answer
    with the first answer, byte for byte (the key is reserved in the shared keep before the command is
    decided; the second waits for the first answer)."""
    (one, other), url = two
    fights = _fights((one, other), 100, "pair")
    pairs = keyed_pairs((one, other), fights, {"command": {"command": "roll_initiative"}})
    for (fight_id, _token, _head), (first, second) in zip(fights, pairs, strict=True):
        assert first[0] == 201 and first == second, (fight_id, first, second)
    with PostgresStore(url) as store:
        for (fight_id, _token, _head), (first, _second) in zip(fights, pairs, strict=True):
            issued = [r for r in store.read(fight_id) if r.event.__struct_config__.tag == "command_issued"]
            assert len(issued) == 1 and store.version(fight_id) == json.loads(first[1])["head"]["seq"]


def test_one_key_with_two_bodies_sent_to_two_servers_appends_one_and_refuses_the_other(two: Any) -> None:
    """The same key with another body, to the other server at the same instant: one is appended (201), the
    other is 422 idempotency-key-reused; nothing is appended twice."""
    (one, other), url = two
    fights = _fights((one, other), 10, "twobody")
    pairs = keyed_pairs((one, other), fights, {"command": {"command": "roll_initiative"}},
                        other={"command": {"command": "engage", "who": "kael", "others": ["vesh"]}})
    for first, second in pairs:
        assert sorted((first[0], second[0])) == [201, 422], (first, second)
        refused = json.loads(first[1] if first[0] == 422 else second[1])
        assert refused["type"] == "/problems/idempotency-key-reused"
    with PostgresStore(url) as store:
        for fight_id, _token, head in fights:
            issued = [r for r in store.read(fight_id) if r.event.__struct_config__.tag == "command_issued"]
            assert len(issued) == 1 and store.version(fight_id) > head


def _duel(fight_id: str) -> dict[str, Any]:
    return {"id": fight_id, "dice": "seeded", "combatants": [sheet("kael"), sheet("vesh")]}


def _orphans(url: str) -> dict[str, list[str]]:
    """What a half-written creation would leave: fights in the log without a GM seat, seeded fights (a seed
    commitment in their first event) without a kept seed."""
    import psycopg

    with psycopg.connect(url) as conn:
        seatless = conn.execute("SELECT DISTINCT fight_id FROM events e WHERE NOT EXISTS (SELECT 1 FROM keep_seats s "
                                "WHERE s.fight_id = e.fight_id AND s.kind = 'gm')").fetchall()
        seedless = conn.execute("SELECT fight_id FROM events e WHERE seq = 1 AND position('\"seed_commitment\":\"' IN "
                                "convert_from(line, 'UTF8')) > 0 AND NOT EXISTS (SELECT 1 FROM keep_seeds k WHERE "
                                "k.fight_id = e.fight_id)").fetchall()
    return {"seatless": [r[0] for r in seatless], "seedless": [r[0] for r in seedless]}


def test_a_creation_whose_seat_cannot_be_kept_leaves_no_fight_in_the_log(two: Any) -> None:
    """The database refusing the GM seat's row (a trigger raising, between the log and the seat): POST /fights is
    503 and nothing of the fight is stored (no log, no seed, no settings: the set-up and its keep rows are one
    transaction); once the seat can be kept, the same id is created (201) and its GM token opens it."""
    import psycopg

    (one, _other), url = two
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION refuse_seat() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'no seats today'; "
                     "END $$ LANGUAGE plpgsql")
        conn.execute("CREATE TRIGGER refuse_seat BEFORE INSERT ON keep_seats FOR EACH ROW EXECUTE FUNCTION "
                     "refuse_seat()")
    status, refused = one.call("POST", "/fights", _duel("duel"))
    assert status == 503 and refused["type"] == "/problems/store-unavailable", refused
    with psycopg.connect(url, autocommit=True) as conn:
        left = [conn.execute(f"SELECT count(*) FROM {table} WHERE fight_id = 'duel'").fetchall()[0][0]
                for table in ("events", "keep_seeds", "keep_settings", "keep_seats")]
        conn.execute("DROP TRIGGER refuse_seat ON keep_seats")
    assert left == [0, 0, 0, 0]
    status, made = one.call("POST", "/fights", _duel("duel"))
    assert status == 201, made
    assert one.call("GET", "/fights/duel/seat", token=made["gm_token"]) == (200, {"kind": "gm", "name": "",
                                                                                   "combatants": [], "physical": []})


def test_a_server_killed_while_creating_leaves_no_fight_without_its_seat_and_seed(two: Any) -> None:
    """Eight clients creating seeded fights with Idempotency-Keys on one server, SIGKILLed mid-way: every fight in
    the log has its GM seat and its seed; each creation cut off, sent again with its key to the other server, is
    201, and the GM token it returns opens that fight (the one made before the kill, or a new one)."""
    (one, other), url = two
    cut: list[str] = []
    stop = threading.Event()

    def create(n: int) -> None:
        count = 0
        while not stop.is_set():
            fight_id = f"kill{n}-{count}"
            count += 1
            try:
                one.send("POST", "/fights", _duel(fight_id), key=f"create-{fight_id}")
            except (OSError, http.client.HTTPException):  # (killed between an answer's headers and its body: an
                cut.append(fight_id)                       # IncompleteRead, no OSError)
                return

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    one.kill()
    stop.set()
    for thread in threads:
        thread.join(60)
    assert cut, "no creation was cut off"
    assert _orphans(url) == {"seatless": [], "seedless": []}
    for fight_id in cut:
        status, made = other.call("POST", "/fights", _duel(fight_id), key=f"create-{fight_id}")
        assert status == 201 and made["fight_id"] == fight_id, made
        status, seen = other.call("GET", f"/fights/{fight_id}/options", token=made["gm_token"])
        assert status == 200 and seen["head"] == made["head"], seen
    assert _orphans(url) == {"seatless": [], "seedless": []}


def test_a_keyed_creation_sent_again_to_either_server_gets_the_same_fight_and_gm_token(two: Any) -> None:
    """POST /fights with an Idempotency-Key, sent again to the same and to the other server: 201 with the same
    fight and GM token each time, one fight in the log; a fresh id (none chosen) too; the key with another body
    is 422 idempotency-key-reused; without the key, the id taken is 409."""
    (one, other), url = two
    status, made = one.call("POST", "/fights", _duel("duel"), key="k-duel")
    assert status == 201, made
    for server in (one, other):
        assert server.call("POST", "/fights", _duel("duel"), key="k-duel") == (201, made)
    status, fresh = one.call("POST", "/fights", {"combatants": [sheet("kael"), sheet("vesh")]}, key="k-fresh")
    assert status == 201, fresh
    again = other.call("POST", "/fights", {"combatants": [sheet("kael"), sheet("vesh")]}, key="k-fresh")
    assert again == (201, fresh)
    status, reused = other.call("POST", "/fights", _duel("duel2"), key="k-duel")
    assert status == 422 and reused["type"] == "/problems/idempotency-key-reused", reused
    status, taken = other.call("POST", "/fights", _duel("duel"))
    assert status == 409 and taken["type"] == "/problems/conflict", taken
    with PostgresStore(url) as store:
        assert store.fights() == sorted(["duel", fresh["fight_id"]])


def test_two_servers_creating_one_id_at_once_give_one_201_and_one_409_conflict(two: Any) -> None:
    """Five ids, each created through both servers at the same instant: one 201 and one 409 /problems/conflict
    ("a fight ... already exists", as for an id taken before) each time, never a stale-version 409."""
    (one, other), _url = two
    for n in range(5):
        fight_id = f"race{n}"
        _won, lost = race((one, other), "/fights", _duel(fight_id))
        assert lost["type"] == "/problems/conflict", lost
        assert lost["detail"] == f"a fight {fight_id!r} already exists", lost


def test_a_database_that_lost_its_tables_is_503_saying_so_and_logged_once(two: Any) -> None:
    """The schema dropped and made again empty under the running servers: GET /fights and a fight's request are
    503 naming the missing tables and omen db init (the list not calling itself "the fight's store"), and the
    server's log says so once, as an error, not once per request."""
    import psycopg

    (one, _other), url = two
    token, _head = _create(one)
    with psycopg.connect(url, autocommit=True) as conn:
        schema = conn.execute("SELECT current_schema()").fetchall()[0][0]
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{schema}"')
    answers = [one.call("GET", "/fights") for _ in range(3)]
    status, fight = one.call("GET", "/fights/duel/options", token=token)
    for status_of_list, listed in answers:
        assert status_of_list == 503 and listed["type"] == "/problems/store-unavailable", listed
        assert listed["detail"] == ("the store has no omen tables (the database was emptied or made again): nothing "
                                    "was written; the operator creates them with omen db init URL, then requests "
                                    "are answered again"), listed
    assert status == 503 and fight["detail"].startswith("the fight's store has no omen tables"), fight
    said = [line for line in one.log.read_text().splitlines() if "store unavailable" in line]
    assert len(said) == 1 and "error" in said[0] and "omen db init" in said[0], said


def _created_pairs(servers: tuple[Server, Server], bodies: list[dict[str, Any]]
                   ) -> list[tuple[tuple[int, bytes], tuple[int, bytes]]]:
    """For each body, one ``POST /fights`` sent at the same instant to each server under one Idempotency-Key
    (``create-N``), every pair at once (a barrier frees every request together). The two answers of each pair."""
    start = threading.Barrier(2 * len(bodies))
    answers: dict[tuple[int, int], tuple[int, bytes]] = {}

    def send(n: int, side: int) -> None:
        start.wait()
        answers[n, side] = servers[side].send("POST", "/fights", bodies[n], key=f"create-{n}")

    threads = [threading.Thread(target=send, args=(n, side)) for n in range(len(bodies)) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return [(answers[n, 0], answers[n, 1]) for n in range(len(bodies))]


def _answered(url: str) -> dict[str, str]:
    """Each kept answer to a POST /fights: its key and the fight it names."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT key, body FROM keep_answers WHERE fight_id = '/fights'").fetchall()
    return {key: json.loads(bytes(body))["fight_id"] for key, body in rows}


@pytest.mark.parametrize("named", [False, True], ids=["fresh-id", "id-given"])
def test_one_keyed_creation_sent_to_two_servers_at_once_makes_one_fight_and_one_answer(two: Any, named: bool) -> None:
    """The tester's race: 12 keyed POST /fights (a fresh id, or an id in the body), each sent to both servers at the
    same instant under one key: both are 201 with the same fight and GM token, byte for byte; the log holds one
    fight per key, and the key names it; sent again to either server, the same answer, and the key stays put."""
    (one, other), url = two
    bodies = [{**({"id": f"keyed{n}"} if named else {}), "dice": "seeded", "combatants": [sheet("kael"), sheet("vesh")]}
              for n in range(12)]
    pairs = _created_pairs((one, other), bodies)
    for first, second in pairs:
        assert first[0] == 201 and first == second, (first, second)
    made = [json.loads(first[1]) for first, _second in pairs]
    keys = {f"create-{n}": fight["fight_id"] for n, fight in enumerate(made)}
    with PostgresStore(url) as store:
        assert store.fights() == sorted(keys.values())
    assert _answered(url) == keys
    for n, (first, _second) in enumerate(pairs):
        for server in (other, one):
            assert server.send("POST", "/fights", bodies[n], key=f"create-{n}") == first
        status, seat = one.call("GET", f"/fights/{made[n]['fight_id']}/seat", token=made[n]["gm_token"])
        assert status == 200 and seat["kind"] == "gm", seat
    assert _answered(url) == keys
    assert _orphans(url) == {"seatless": [], "seedless": []}


def test_seats_asked_for_at_once_of_two_servers_never_pass_max_seats(two: Any) -> None:
    """70 spectators' seats asked for at once, half of each server on one database: 63 made (the GM's is the 64th),
    7 refused 409, and each server lists exactly MAX_SEATS (the keep counts and inserts under one lock)."""
    from omen_server.limits import MAX_SEATS
    from tests.server.test_seating import seats_at_once

    servers, _url = two
    token, _ = _create(servers[0])
    statuses = seats_at_once(servers, token, 70)
    assert sorted(statuses) == [201] * (MAX_SEATS - 1) + [409] * (71 - MAX_SEATS)
    for server in servers:
        status, seats = server.call("GET", "/fights/duel/seats", token=token)
        assert status == 200 and len(seats) == MAX_SEATS == 64
