"""omen_server/app.py: the HTTP resources, through the real Litestar app in-process (Litestar's TestClient).

Every case checks the store behind the app as well as the answer: what a 201
says was appended is what the log holds; a refused request leaves the log
byte-identical.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from omen_core import Fight, MemoryStore
from omen_core.content import load_sheet
from omen_core.dice import commitment
from omen_core.store import SqliteStore
from omen_server import create_app
from omen_server.keep import Keep, token_hash

ROOT = Path(__file__).resolve().parents[2]
SHEETS = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"


def sheet(name: str) -> dict[str, Any]:
    """An Ember Ford sheet (omen_replay/data/ember-ford/sheets) as JSON, the way a client sends it."""
    return msgspec.to_builtins(load_sheet(SHEETS / f"{name}.toml"))


def as_json(value: Any) -> Any:
    """A value as a client reads it: through JSON."""
    return json.loads(msgspec.json.encode(value))


def lines(store: Any, fight_id: str) -> list[bytes]:
    """The stored lines of a fight, byte for byte (read_lines gives them in chunks)."""
    return [bytes(line).rstrip(b"\n") for chunk in store.read_lines(fight_id) for line in chunk]


class Table:
    """A store, a keep, the app over them and a client; ``gm`` is the last fight's GM token."""

    def __init__(self, tmp_path: Path | None = None):
        self.store: Any = MemoryStore() if tmp_path is None else SqliteStore(tmp_path / "events.db")
        self.keep = Keep(":memory:" if tmp_path is None else str(tmp_path / "keep.db"))
        self.client = TestClient(create_app(self.store, self.keep))
        self.gm = ""

    def create(self, fight_id: str = "duel", dice: str = "seeded", names: tuple[str, ...] = ("kael", "vesh"),
               **more: Any) -> dict[str, Any]:
        """POST /fights; keeps the GM token."""
        answer = self.client.post("/fights", json={"id": fight_id, "dice": dice, "title": "Ember Ford",
                                                   "combatants": [sheet(n) for n in names], **more})
        assert answer.status_code == 201, answer.text
        self.gm = answer.json()["gm_token"]
        return dict(answer.json())

    def auth(self, token: str | None = None) -> dict[str, str]:
        """The Authorization header of ``token`` (default: the GM's)."""
        return {"Authorization": f"Bearer {token or self.gm}"}

    def command(self, command: dict[str, Any], fight_id: str = "duel", token: str | None = None,
                **more: Any) -> Any:
        """POST a command; returns the response."""
        headers = {**self.auth(token), **more.pop("headers", {})}
        return self.client.post(f"/fights/{fight_id}/commands", headers=headers,
                                json={"command": command, **more})


@pytest.fixture
def table() -> Any:
    """A table over a memory store, its client open."""
    made = Table()
    with made.client:
        yield made


class TestCreate:
    def test_a_fight_is_created_with_its_combatants_and_a_gm_token(self, table):
        """POST /fights starts the fight with both sheets joined in one append; the answer's head is the log's
        last event and its options are Fight.options() of the stored fight."""
        made = table.create()
        stored = list(table.store.read("duel"))
        assert made["fight_id"] == "duel" and made["gm_token"].startswith("omen_gm_")
        assert made["head"] == {"seq": stored[-1].seq, "hash": stored[-1].hash}
        assert sorted(Fight.load(table.store, "duel").state.combatants) == ["kael", "vesh"]
        assert made["options"] == as_json(Fight.load(table.store, "duel").options())

    def test_the_token_is_kept_hashed_and_the_seed_outside_the_log(self, tmp_path):
        """The keep holds the token's SHA-256, never the token; the seed is in the keep and its commitment in the
        log, and neither the log nor any answer holds the seed."""
        made = Table(tmp_path)
        with made.client:
            created = made.create()
            answers = [json.dumps(created), made.client.get("/fights/duel/options", headers=made.auth()).text,
                       made.client.get("/fights/duel/events", headers=made.auth()).text]
        seed = made.keep.seed("duel")
        assert seed is not None
        rows = sqlite3.connect(tmp_path / "keep.db").execute("select token_hash from seats").fetchall()
        assert rows == [(token_hash(created["gm_token"]),)]
        assert created["gm_token"].encode() not in (tmp_path / "keep.db").read_bytes()
        log = b"\n".join(lines(made.store, "duel"))
        assert seed.hex().encode() not in log and commitment(seed).encode() in log
        assert all(seed.hex() not in text for text in answers)

    def test_a_fight_id_is_made_up_when_left_out(self, table):
        """Without an id the server makes one (``fight-`` and 8 hex digits), and it is listed."""
        answer = table.client.post("/fights", json={"combatants": [sheet("kael"), sheet("vesh")]})
        fight_id = answer.json()["fight_id"]
        assert answer.status_code == 201 and fight_id.startswith("fight-") and len(fight_id) == 14
        assert [f["fight_id"] for f in table.client.get("/fights").json()] == [fight_id]

    def test_a_taken_id_is_409_and_writes_nothing(self, table):
        """Creating a fight whose id is taken is 409; the fight is as it was."""
        table.create()
        before = lines(table.store, "duel")
        answer = table.client.post("/fights", json={"id": "duel", "combatants": [sheet("kael")]})
        assert answer.status_code == 409 and answer.json()["type"] == "/problems/conflict"
        assert lines(table.store, "duel") == before

    @pytest.mark.parametrize("body, field", [
        ({"id": "../etc"}, "$.id"),
        ({"id": "x", "dice": "loaded"}, "$.dice"),
        ({"id": "x", "combatants": [{"id": "kael"}]}, "$.combatants[0]"),
        ({"id": "x", "colour": "red"}, "$"),
    ])
    def test_a_bad_body_is_400_naming_the_field(self, table, body, field):
        """A body that does not validate is a 400 problem naming the field; no fight is created."""
        answer = table.client.post("/fights", json=body)
        assert answer.status_code == 400 and answer.headers["content-type"].startswith("application/problem+json")
        assert answer.json()["field"].startswith(field), answer.json()
        assert table.store.fights() == []

    def test_a_sheet_the_rules_refuse_creates_nothing(self, table):
        """Two combatants with one id: the set-up is refused whole (422, rule named) and nothing is stored."""
        answer = table.client.post("/fights", json={"id": "x", "combatants": [sheet("kael"), sheet("kael")]})
        assert answer.status_code == 422 and answer.json()["rule"]
        assert table.store.fights() == []


class TestCommands:
    def test_a_command_appends_what_the_answer_says(self, table):
        """§Initiative: roll_initiative at the version seen is 201; its events are the log's new events, the head
        is the last, and the options are the stored fight's."""
        version = table.create()["head"]["seq"]
        answer = table.command({"command": "roll_initiative"}, expected_version=version)
        assert answer.status_code == 201, answer.text
        body = answer.json()
        stored = list(table.store.read("duel"))
        assert [e["seq"] for e in body["events"]] == [r.seq for r in stored[version:]]
        assert body["head"] == {"seq": stored[-1].seq, "hash": stored[-1].hash}
        assert body["options"] == as_json(Fight.load(table.store, "duel").options())

    def test_a_stale_version_is_409_and_writes_nothing(self, table):
        """A command sent with a version the fight has moved past is 409 with the current version; the log is
        byte-identical."""
        version = table.create()["head"]["seq"]
        before = lines(table.store, "duel")
        answer = table.command({"command": "roll_initiative"}, expected_version=version - 1)
        assert answer.status_code == 409 and answer.json()["current_version"] == version
        assert lines(table.store, "duel") == before

    def test_a_rule_violation_is_422_with_the_rule(self, table):
        """C19: ending a turn before initiative is refused with the rule id; the log is byte-identical."""
        table.create()
        before = lines(table.store, "duel")
        answer = table.command({"command": "end_turn", "who": "kael"})
        assert answer.status_code == 422 and answer.json()["type"] == "/problems/rule-violation"
        assert answer.json()["rule"] and answer.json()["rule"] in answer.json()["detail"]
        assert lines(table.store, "duel") == before

    def test_a_bad_field_is_400_naming_its_path(self, table):
        """A command whose who is a number is 400 at $.command.who; an unknown command at $.command."""
        table.create()
        answer = table.command({"command": "end_turn", "who": 5})
        assert answer.status_code == 400 and answer.json()["field"] == "$.command.who"
        answer = table.command({"command": "fly", "who": "kael"})
        assert answer.status_code == 400 and answer.json()["field"].startswith("$.command")

    def test_manual_dice_say_which_faces_are_needed(self, table):
        """C29: in a manual fight, roll_initiative without faces is 422 naming both dice (Kael's AGI d6, Vesh's
        AGI d8 on the Ember Ford sheets); with the faces it is 201 and the faces are recorded as manual."""
        table.create(dice="manual")
        missing = table.command({"command": "roll_initiative"})
        assert missing.status_code == 422 and missing.json()["type"] == "/problems/faces-needed"
        assert missing.json()["needed"] == ["kael's initiative: check d6", "vesh's initiative: check d8"]
        answer = table.command({"command": "roll_initiative", "dice": [4, 7]})
        assert answer.status_code == 201, answer.text
        rolls = [e["event"] for e in answer.json()["events"] if e["event"]["type"] == "dice_rolled"]
        assert [(r["dice"][0]["face"], r["source"]) for r in rolls] == [(4, "manual"), (7, "manual")]

    def test_a_retry_with_the_same_key_appends_nothing_twice(self, table):
        """An Idempotency-Key retried with the same body gets the first answer, byte for byte, and the log holds
        the command once; the same key with another body is 422 and writes nothing."""
        version = table.create()["head"]["seq"]
        key = {"Idempotency-Key": "roll-1"}
        first = table.command({"command": "roll_initiative"}, expected_version=version, headers=key)
        after = lines(table.store, "duel")
        again = table.command({"command": "roll_initiative"}, expected_version=version, headers=key)
        assert (first.status_code, again.status_code, again.content) == (201, 201, first.content)
        assert lines(table.store, "duel") == after
        other = table.command({"command": "end_turn", "who": "kael"}, headers=key)
        assert other.status_code == 422 and other.json()["type"] == "/problems/idempotency-key-reused"
        assert lines(table.store, "duel") == after


class TestSeed:
    def test_reveal_seed_without_a_seed_reveals_the_kept_one(self, table):
        """The GM reveals the seed the server kept with a bare reveal_seed; it matches the commitment (the log
        then verifies every seeded die), and the keep's seed is the one revealed."""
        table.create()
        table.command({"command": "roll_initiative"})
        answer = table.command({"command": "reveal_seed"})
        assert answer.status_code == 201, answer.text
        revealed = [e["event"]["seed"] for e in answer.json()["events"] if e["event"]["type"] == "seed_revealed"]
        kept = table.keep.seed("duel")
        assert kept is not None and revealed == [kept.hex()]
        assert Fight.load(table.store, "duel").state.revealed_seed == kept.hex()


class TestTokens:
    def test_no_token_or_an_unknown_one_is_401(self, table):
        """Without a bearer token, or with one the server never made, every fight resource is 401."""
        table.create()
        assert table.client.get("/fights/duel/options").status_code == 401
        assert table.client.get("/fights/duel/options", headers=table.auth("omen_gm_nope")).status_code == 401
        assert table.command({"command": "roll_initiative"}, token="omen_gm_nope").status_code == 401

    def test_another_fights_token_is_403(self, table):
        """The GM token of one fight opens no other: 403, and nothing is written."""
        table.create("one")
        one = table.gm
        table.create("two")
        before = lines(table.store, "two")
        answer = table.command({"command": "roll_initiative"}, fight_id="two", token=one)
        assert answer.status_code == 403 and answer.json()["type"] == "/problems/forbidden"
        assert lines(table.store, "two") == before

    def test_a_seat_is_read_from_the_keep_once(self, table, monkeypatch):
        """omen_server.app.Fights.seat: a seat never changes once made, so the server reads each token's seat
        from its keep once and answers its later requests from memory; a token it does not know is asked for
        every time (another server may have just made it), and stays 401 until the keep has it."""
        table.create()
        asked: list[str] = []
        original = table.keep.seat
        monkeypatch.setattr(table.keep, "seat", lambda token: asked.append(token) or original(token))
        for _ in range(3):
            assert table.client.get("/fights/duel/options", headers=table.auth()).status_code == 200
        assert asked == [table.gm]
        for _ in range(2):
            assert table.client.get("/fights/duel/options", headers=table.auth("omen_gm_nope")).status_code == 401
        assert asked == [table.gm, "omen_gm_nope", "omen_gm_nope"]

    def test_an_unknown_fight_is_404(self, table):
        """A token cannot name a fight that does not exist (403 for another fight's token); a missing path 404."""
        table.create()
        assert table.client.get("/nowhere").status_code == 404
        assert table.client.get("/fights/ghost/options", headers=table.auth()).status_code == 403


class TestEvents:
    def test_pages_of_events_are_the_log_in_order(self, table):
        """GET /events after=a&limit=n, page after page, gives every stored event once, in order; the last page
        says next_after None."""
        table.create()
        table.command({"command": "roll_initiative"})
        seqs, after = [], 0
        while after is not None:
            page = table.client.get(f"/fights/duel/events?after={after}&limit=3", headers=table.auth()).json()
            seqs += [e["seq"] for e in page["events"]]
            after = page["next_after"]
        assert seqs == [r.seq for r in table.store.read("duel")]

    @pytest.mark.parametrize("query", ["after=-1", "limit=0", "limit=501", "after=x"])
    def test_bad_paging_is_400(self, table, query):
        """A negative after, a limit outside 1..500 or a non-number is 400 naming the query parameter."""
        table.create()
        answer = table.client.get(f"/fights/duel/events?{query}", headers=table.auth())
        assert answer.status_code == 400 and answer.json()["field"] == f"query.{query.split('=')[0]}"


class TestStreamRefusals:
    def test_a_stream_needs_a_token(self, table):
        """The live stream, like every fight resource, is 401 without a token."""
        table.create()
        assert table.client.get("/fights/duel/stream").status_code == 401

    def test_a_last_event_id_that_is_no_seq_is_400(self, table):
        """Last-Event-ID must be a seq: 'x' is 400 naming the header."""
        table.create()
        answer = table.client.get("/fights/duel/stream", headers={**table.auth(), "Last-Event-ID": "x"})
        assert answer.status_code == 400 and answer.json()["field"] == "header.Last-Event-ID"


def play_through_the_api(table: Table, picks: list[int], junk: list[Any]) -> None:
    """Give commands chosen from the options (``picks``) or junk bodies, checking each answer against the log."""
    for pick, rubbish in zip(picks, junk, strict=True):
        now = table.client.get("/fights/duel/options", headers=table.auth()).json()
        before = lines(table.store, "duel")
        offers = now["options"]["offers"]
        if rubbish is None and offers:
            offer = offers[pick % len(offers)]
            choice = offer["choices"][pick % len(offer["choices"])]
            body: Any = {"command": offer["command"], **choice["args"]}
        else:
            body = rubbish
        answer = table.client.post("/fights/duel/commands", headers=table.auth(),
                                   json={"command": body, "expected_version": now["head"]["seq"]})
        assert answer.status_code < 500, answer.text
        if answer.status_code == 201:
            assert answer.json()["head"]["seq"] == len(lines(table.store, "duel"))
        else:
            assert answer.headers["content-type"].startswith("application/problem+json")
            assert lines(table.store, "duel") == before, body


JUNK = st.one_of(st.none(), st.none(), st.none(),
                 st.dictionaries(st.sampled_from(["command", "who", "target", "dice", "attacker"]),
                                 st.one_of(st.text(max_size=5), st.integers(-3, 30), st.lists(st.integers(0, 30)),
                                           st.sampled_from(["end_turn", "declare_attack", "kael", "vesh"]))))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=12), data=st.data())
def test_every_answer_agrees_with_the_log(picks, data):
    """Random commands picked from the options, and random junk: every answer is 201 with the log grown to its
    head, or a 4xx problem with the log byte-identical; never a 500; the log verifies as a stored fight."""
    junk = data.draw(st.lists(JUNK, min_size=len(picks), max_size=len(picks)))
    table = Table()
    with table.client:
        table.create()
        play_through_the_api(table, picks, junk)
    Fight.load(table.store, "duel")
