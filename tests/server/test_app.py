"""omen_server/asgi.py and app.py: the HTTP resources, through the real Litestar app in-process (Litestar's TestClient).

Every case checks the store behind the app as well as the answer: what a 201
says was appended is what the log holds; a refused request leaves the log
byte-identical.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from omen_core import Fight, MemoryStore
from omen_core.content import load_sheet
from omen_core.dice import commitment, seeded_face
from omen_core.store import SqliteStore
from omen_server import create_app
from omen_server.keep import Founding, Keep, token_hash
from omen_server.limits import (
    FIGHTS_PAGE,
    MAX_BODY_BYTES,
    MAX_COMBATANTS,
    MAX_NOTE,
    MAX_SEQ,
    MAX_TITLE,
)

ROOT = Path(__file__).resolve().parents[2]
SHEETS = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"


def sheet(name: str) -> dict[str, Any]:
    """An Ember Ford sheet (omen_replay/data/ember-ford/sheets) as JSON, the way a client sends it."""
    built: dict[str, Any] = msgspec.to_builtins(load_sheet(SHEETS / f"{name}.toml"))
    return built


def as_json(value: Any) -> Any:
    """A value as a client reads it: through JSON."""
    return json.loads(msgspec.json.encode(value))


def lines(store: Any, fight_id: str) -> list[bytes]:
    """The stored lines of a fight, byte for byte (read_lines gives them in chunks)."""
    return [bytes(line).rstrip(b"\n") for chunk in store.read_lines(fight_id) for line in chunk]


class Table:
    """A store, a keep, the app over them and a client; ``gm`` is the last fight's GM token; ``create_token`` the
    token creating a fight needs (None: none, as an app embedded without one)."""

    def __init__(self, tmp_path: Path | None = None, create_token: str | None = None):
        self.store: Any = MemoryStore() if tmp_path is None else SqliteStore(tmp_path / "events.db")
        self.keep = Keep(":memory:" if tmp_path is None else str(tmp_path / "keep.db"))
        self.create_token = create_token
        self.client = TestClient(create_app(self.store, self.keep, create_token=create_token))
        self.gm = ""

    def create(self, fight_id: str = "duel", dice: str = "seeded", names: tuple[str, ...] = ("kael", "vesh"),
               **more: Any) -> dict[str, Any]:
        """POST /fights (with the creation token, if the app needs one); keeps the GM token."""
        headers = {"Authorization": f"Bearer {self.create_token}"} if self.create_token else {}
        answer = self.client.post("/fights", headers=headers, json={
            "id": fight_id, "dice": dice, "title": "Ember Ford", "combatants": [sheet(n) for n in names], **more})
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
    def test_a_fight_is_created_with_its_combatants_and_a_gm_token(self, table: Any) -> None:
        """POST /fights starts the fight with both sheets joined in one append; the answer's head is the log's
        last event and its options are Fight.options() of the stored fight but its undo (it would void a join: the
        set-up is POST /fights's whole)."""
        made = table.create()
        stored = list(table.store.read("duel"))
        assert made["fight_id"] == "duel" and made["gm_token"].startswith("omen_gm_")
        assert made["head"] == {"seq": stored[-1].seq, "hash": stored[-1].hash}
        assert sorted(Fight.load(table.store, "duel").state.combatants) == ["kael", "vesh"]
        options = as_json(Fight.load(table.store, "duel").options())
        assert options["offers"][-1]["command"] == "undo"
        assert made["options"] == {**options, "offers": options["offers"][:-1]}

    def test_the_token_is_kept_hashed_and_the_seed_outside_the_log(self, tmp_path: Path) -> None:
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

    def test_a_fight_id_is_made_up_when_left_out(self, table: Any) -> None:
        """Without an id the server makes one (``fight-`` and 8 hex digits), and it is listed."""
        answer = table.client.post("/fights", json={"combatants": [sheet("kael"), sheet("vesh")]})
        fight_id = answer.json()["fight_id"]
        assert answer.status_code == 201 and fight_id.startswith("fight-") and len(fight_id) == 14
        assert [f["fight_id"] for f in table.client.get("/fights").json()["fights"]] == [fight_id]

    def test_a_taken_id_is_409_and_writes_nothing(self, table: Any) -> None:
        """Creating a fight whose id is taken is 409; the fight is as it was."""
        table.create()
        before = lines(table.store, "duel")
        answer = table.client.post("/fights", json={"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
        assert answer.status_code == 409 and answer.json()["type"] == "/problems/conflict"
        assert lines(table.store, "duel") == before

    def test_what_a_creation_killed_before_its_log_kept_is_replaced_by_the_next(self, tmp_path: Path) -> None:
        """The keep rows of a creation whose log was never appended (its server killed between the keep's
        transaction and the log's, on a SQLite keep) are replaced when the id is created: one GM seat, the new
        one (the orphan's token opens nothing), the seed the new commitment pledges, the new settings."""
        made = Table(tmp_path)
        with made.client:
            orphan = Founding("duel", "omen_gm_orphan", b"\x01" * 32, b'{"hp_display":"hidden"}')
            made.keep.found(orphan, made.store)  # ... and no append: the process died here
            created = made.create()
            rows = made.keep.seat_rows("duel")
            assert [row.kind for row in rows] == ["gm"] and made.keep.seat("omen_gm_orphan") is None
            assert made.keep.seat(created["gm_token"]) is not None
            pledge = next(iter(made.store.read("duel"))).event.seed_commitment
            assert commitment(made.keep.seed("duel") or b"") == pledge
            settings = made.client.get("/fights/duel/settings", headers=made.auth()).json()
            assert settings["hp_display"] == "banded"

    def test_a_keyed_creation_sent_again_gets_the_same_fight_and_gm_token(self, tmp_path: Path) -> None:
        """POST /fights with an Idempotency-Key sent again: the same fight and GM token (made again, only its hash
        kept: not in the keep's file), one fight stored; another body under the key is 422."""
        made = Table(tmp_path, create_token="tok")
        with made.client:
            body = {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]}
            sent = [made.client.post("/fights", json=body, headers={"Authorization": "Bearer tok",
                                                                     "Idempotency-Key": "k1"}) for _ in range(2)]
            assert [a.status_code for a in sent] == [201, 201] and sent[0].json() == sent[1].json()
            token = sent[0].json()["gm_token"]
            assert token.startswith("omen_gm_") and token.encode() not in (tmp_path / "keep.db").read_bytes()
            other = made.client.post("/fights", json={**body, "title": "x"},
                                     headers={"Authorization": "Bearer tok", "Idempotency-Key": "k1"})
            assert other.status_code == 422 and other.json()["type"] == "/problems/idempotency-key-reused"
            assert made.store.fights() == ["duel"]

    @pytest.mark.parametrize("body, field", [
        ({"id": "../etc"}, "$.id"),
        ({"id": "x", "dice": "loaded"}, "$.dice"),
        ({"id": "x", "combatants": [{"id": "kael"}]}, "$.combatants[0]"),
        ({"id": "x", "colour": "red"}, "$"),
    ])
    def test_a_bad_body_is_400_naming_the_field(self, table: Any, body: dict[str, list[dict[str,
                                                str]] | str] | dict[str, str], field: str) -> None:
        """A body that does not validate is a 400 problem naming the field; no fight is created."""
        answer = table.client.post("/fights", json=body)
        assert answer.status_code == 400 and answer.headers["content-type"].startswith("application/problem+json")
        assert answer.json()["field"].startswith(field), answer.json()
        assert table.store.fights() == []

    def test_a_sheet_the_rules_refuse_creates_nothing(self, table: Any) -> None:
        """Two combatants with one id: the set-up is refused whole (422, rule setup) at the second one's id (it
        named no place; found by a tester), and nothing is stored."""
        body = {"id": "x", "combatants": [sheet("kael"), sheet("vesh"), sheet("kael")]}
        answer = table.client.post("/fights", json=body)
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert (problem["type"], problem["rule"], problem["field"]) == ("/problems/rule-violation", "setup",
                                                                       "$.combatants[2].id")
        assert problem["detail"] == "[setup] a combatant with id 'kael' has already joined (at $.combatants[2].id)"
        assert table.store.fights() == []

    def test_a_damage_type_the_ruleset_lacks_is_named_in_its_sheet(self, table: Any) -> None:
        """C14: a weapon of a damage type the ruleset does not know, on the second sheet, is 422 rule C14 at that
        weapon's damage_type (every rule refusing a sheet named no field; the duplicate id alone was placed)."""
        vesh = sheet("vesh")
        vesh["weapons"][0]["damage_type"] = "ooze"
        answer = table.client.post("/fights", json={"id": "x", "combatants": [sheet("kael"), vesh]})
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert (problem["rule"], problem["field"]) == ("C14", "$.combatants[1].weapons[0].damage_type")
        assert problem["detail"].endswith("(at $.combatants[1].weapons[0].damage_type)") and "ooze" in problem["detail"]
        assert table.store.fights() == []

    @pytest.mark.parametrize("count", [0, 1])
    def test_a_roster_of_fewer_than_two_creates_nothing(self, table: Any, count: int) -> None:
        """C19: a fight needs two combatants to roll initiative, and its roster is POST /fights's whole (no join
        over HTTP): none or one is 422 rule-violation at $.combatants, rule C19, and nothing is stored (it was made,
        and could then do nothing but reveal its seed; found by a tester)."""
        body: dict[str, Any] = {"id": "lone", "combatants": [sheet("kael")][:count]}
        answer = table.client.post("/fights", json=body if count else {"id": "lone"})
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert (problem["type"], problem["rule"], problem["field"]) == ("/problems/rule-violation", "C19",
                                                                       "$.combatants")
        assert problem["detail"] == (f"[C19] a fight needs at least two combatants, and {count} "
                                     f"{'is' if count == 1 else 'are'} given: the combatants given here are the "
                                     "fight's whole roster (at $.combatants)")
        assert table.store.fights() == []

class TestCommands:
    def test_a_command_appends_what_the_answer_says(self, table: Any) -> None:
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

    def test_a_stale_version_is_409_and_writes_nothing(self, table: Any) -> None:
        """A command sent with a version the fight has moved past is 409 with the current version; the log is
        byte-identical."""
        version = table.create()["head"]["seq"]
        before = lines(table.store, "duel")
        answer = table.command({"command": "roll_initiative"}, expected_version=version - 1)
        assert answer.status_code == 409 and answer.json()["current_version"] == version
        assert lines(table.store, "duel") == before

    def test_a_rule_violation_is_422_with_the_rule(self, table: Any) -> None:
        """C19: ending a turn before initiative is refused with the rule id; the log is byte-identical."""
        table.create()
        before = lines(table.store, "duel")
        answer = table.command({"command": "end_turn", "who": "kael"})
        assert answer.status_code == 422 and answer.json()["type"] == "/problems/rule-violation"
        assert answer.json()["rule"] and answer.json()["rule"] in answer.json()["detail"]
        assert lines(table.store, "duel") == before

    @pytest.mark.parametrize("command, rule, field", [
        ({"command": "declare_attack", "attacker": "ME", "target": "FOE", "weapon": "maul"}, "C4",
         "$.command.weapon"),
        ({"command": "use_ability", "who": "ME", "ability": "zzz"}, "C37", "$.command.ability"),
        ({"command": "apply_condition", "who": "FOE", "condition": "Sleepy"}, "C28", "$.command.condition"),
        ({"command": "end_turn", "who": "ME", "dice": [6]}, "C29", "$.command.dice"),
    ])
    def test_a_refusal_at_one_field_names_it(self, table: Any, command: dict[str, Any], rule: str,
                                             field: str) -> None:
        """A rule refusing one field of a command names it (``field``, and ``(at ...)`` in the detail): a weapon
        the sheet lacks (C4), an ability it has not (C37), a condition the ruleset lacks (C28), faces a command
        that rolls nothing was given (C29); they named the rule alone (found by a tester writing a client). The
        log is byte-identical."""
        table.create()
        first = table.command({"command": "roll_initiative"}).json()["options"]["turn"]
        foe = "vesh" if first == "kael" else "kael"
        before = lines(table.store, "duel")
        given = {k: {"FOE": foe, "ME": first}.get(v, v) if isinstance(v, str) else v for k, v in command.items()}
        answer = table.command(given)
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert (problem["rule"], problem["field"]) == (rule, field), problem
        assert rule == "C29" or problem["detail"].endswith(f"(at {field})")
        assert lines(table.store, "duel") == before

    def test_an_undo_never_reaches_into_the_set_up(self, table: Any) -> None:
        """POST /fights joins the roster whole and join is no command over HTTP, so an undo whose target is a
        set-up event (seqs 1-3: fight_started, two combatant_joined) is refused (422 rule undo, the log
        byte-identical) and not offered, one given a ``to_seq`` there at ``$.command.to_seq`` (it named no field: a
        tester); once initiative is rolled, its undo is offered and accepted (201), and the next undo, back into the
        set-up, is neither."""
        table.create()
        before = lines(table.store, "duel")

        def offered() -> list[str]:
            answer = table.client.get("/fights/duel/options", headers=table.auth())
            return [offer["command"] for offer in answer.json()["options"]["offers"]]

        assert "undo" not in offered()
        for undo in ({"command": "undo", "reason": "u"}, {"command": "undo", "to_seq": 2}):
            answer = table.command(undo)
            assert answer.status_code == 422, answer.text
            problem = answer.json()
            assert (problem["type"], problem["rule"]) == ("/problems/rule-violation", "undo")
            assert "set-up (seqs 1 to 3" in problem["detail"] and "start a new fight" in problem["detail"]
            assert problem.get("field") == ("$.command.to_seq" if "to_seq" in undo else None), problem
            assert problem["detail"].endswith("(at $.command.to_seq)") == ("to_seq" in undo), problem
            assert lines(table.store, "duel") == before
        assert table.command({"command": "roll_initiative"}).status_code == 201
        assert "undo" in offered()
        assert table.command({"command": "undo", "reason": "misrolled"}).status_code == 201
        assert "undo" not in offered()
        assert table.command({"command": "undo"}).status_code == 422
        assert table.command({"command": "redo"}).status_code == 201

    @pytest.mark.parametrize("to_seq", [999, 5])
    def test_an_undo_refused_for_its_to_seq_names_the_field(self, table: Any, to_seq: int) -> None:
        """An undo whose ``to_seq`` is past the head or inside a command is refused at ``$.command.to_seq``, the
        detail ending ``(at $.command.to_seq)`` as docs/server.md says of a refused field (it named no field:
        a tester)."""
        table.create()
        assert table.command({"command": "roll_initiative"}).status_code == 201
        before = lines(table.store, "duel")
        problem = table.command({"command": "undo", "to_seq": to_seq}).json()
        assert (problem["status"], problem["rule"], problem["field"]) == (422, "undo", "$.command.to_seq"), problem
        assert problem["detail"].endswith("(at $.command.to_seq)"), problem
        assert lines(table.store, "duel") == before

    def test_a_refusal_says_where_an_http_client_finds_what_is_legal(self, table: Any) -> None:
        """C8: an Active Defense answered with no window open is refused saying no decision is open and that GET
        /fights/duel/options lists what is accepted (the engine's words name omen status and Fight.options(), the
        command line's ways)."""
        table.create()
        assert table.command({"command": "roll_initiative"}).status_code == 201
        answer = table.command({"command": "answer_active_defense", "defender": "kael", "defense": "dodge"})
        assert answer.status_code == 422 and answer.json()["rule"] == "C8", answer.text
        assert answer.json()["detail"].endswith("legal now: no decision is open (GET /fights/duel/options lists every "
                                                "command this seat may give now)"), answer.text

    def test_a_bad_field_is_400_naming_its_path(self, table: Any) -> None:
        """A command whose who is a number is 400 at $.command.who; an unknown command at $.command; a number
        past 2**53 - 1 at its own path under $.command, nothing written."""
        table.create()
        answer = table.command({"command": "end_turn", "who": 5})
        assert answer.status_code == 400 and answer.json()["field"] == "$.command.who"
        answer = table.command({"command": "fly", "who": "kael"})
        assert answer.status_code == 400 and answer.json()["field"].startswith("$.command")
        before = lines(table.store, "duel")
        answer = table.command({"command": "static_check", "check": {"who": "kael", "attribute": "STR"},
                                "difficulty": 10**400})  # past every JSON reader's whole numbers (2**53 - 1)
        assert answer.status_code == 400 and answer.json()["field"] == "$.command.difficulty", answer.text
        assert "(at $.command.difficulty)" in answer.json()["detail"] and lines(table.store, "duel") == before

    def test_an_unknown_combatant_is_refused_at_the_field_naming_it(self, table: Any) -> None:
        """A command naming a combatant who never joined is 422 (rule setup) pointing at the field that names it:
        an attack's target at $.command.target, an engagement's second other at $.command.others[1]; nothing
        written."""
        table.create()
        before = lines(table.store, "duel")
        attack = table.command({"command": "declare_attack", "attacker": "kael", "target": "nobody", "unarmed": True})
        engage = table.command({"command": "engage", "who": "kael", "others": ["vesh", "zz"]})
        assert [(a.status_code, a.json()["rule"], a.json()["field"]) for a in (attack, engage)] == [
            (422, "setup", "$.command.target"), (422, "setup", "$.command.others[1]")]
        assert "(at $.command.target)" in attack.json()["detail"] and lines(table.store, "duel") == before

    def test_a_lone_surrogate_escape_is_named_as_such(self, table: Any) -> None:
        """A body whose string holds half a surrogate pair (\\ud800 alone) is 400 saying so and where, not
        msgspec's "Input data was truncated"."""
        table.create()
        answer = table.client.post("/fights/duel/commands", headers={**table.auth(), "content-type":
                                   "application/json"}, content=b'{"command": {"command": "end_turn", "who": '
                                                                b'"\\ud800"}}')
        assert answer.status_code == 400 and answer.json()["detail"] == (
            "the body is not JSON: \\ud800 at byte 44 is half of a surrogate pair, with no other half: a \\u "
            "escape must name a whole character")

    def test_a_path_no_route_takes_says_so(self, table: Any) -> None:
        """GET /fights/duel/explain/abc (a seq is a whole number) is 404 saying no route takes the path and where
        the routes are, not a bare "Not Found"."""
        table.create()
        answer = table.client.get("/fights/duel/explain/abc", headers=table.auth())
        assert answer.status_code == 404 and answer.json()["detail"].startswith(
            "no route takes '/fights/duel/explain/abc' (a seq in a path is a whole number")

    def test_a_player_types_its_own_dice_in_a_seeded_fight_and_the_server_rolls_the_rest(self, table: Any) -> None:
        """C29: in a seeded fight whose GM made Kael's dice physical, Alice types Kael's unarmed hit dice (6, 6);
        Vesh's base defense die after them is the fight's to roll: 201, Kael's roll recorded manual with her faces,
        Vesh's seeded (its face withheld from her), and the fight waits on Vesh's Active Defense (it was 422
        faces-needed, asking her for the GM's die); the log verifies (her roll listed as dice provenance only).
        Before the GM names Kael physical the same faces are refused (422 surplus-faces, C29: her dice are the
        seed's; a tester's were taken, chosen), nothing written."""
        from omen_core.events import DiceRolled
        from tests.sheets import sheet as plain

        table.create(dice="seeded", names=(), combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                          msgspec.to_builtins(plain("vesh", side="raiders"))])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative", "dice": [20]}).status_code == 201
        attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "unarmed": True, "dice": [6, 6]}
        before = lines(table.store, "duel")
        chosen = table.command(attack, token=alice)
        assert chosen.status_code == 422 and chosen.json()["type"] == "/problems/surplus-faces", chosen.text
        assert chosen.json()["field"] == "$.command.dice" and chosen.json()["rule"] == "C29"
        assert lines(table.store, "duel") == before
        assert table.client.post("/fights/duel/settings", headers=table.auth(),
                                 json={"physical": ["kael"]}).status_code == 200
        answer = table.command(attack, token=alice)
        assert answer.status_code == 201, answer.text
        rolled = [e["event"] for e in answer.json()["events"] if e["type"] == "dice_rolled"]
        assert [(r["roller"], r["purpose"], r["source"], [d["face"] for d in r.get("dice", [])]) for r in rolled] == [
            ("kael", "hit", "manual", [6, 6]), ("vesh", "base_defense", "seeded", [])]
        stored = [e for e in table.store.read("duel") if isinstance(e.event, DiceRolled)][-1].event
        assert stored.source == "seeded" and len(stored.dice) == 1
        assert answer.json()["options"]["waiting"]["kind"] == "active_defense"
        audit = table.client.get("/fights/duel/verify", headers=table.auth()).json()
        assert audit["clean"] and audit["problems"] == 0, audit  # decided again the same way: faces, then the seed
        assert [f for f in audit["findings"] if "provenance" not in f and "is manual" not in f] == [], audit

    def test_the_gm_types_the_dice_it_knows_in_a_seeded_fight_and_the_server_rolls_the_rest(self, table: Any) -> None:
        """C29: in a seeded fight the GM types Kael's unarmed hit dice (6, 6) alone, as the table page sends its
        form with the dice marked "if rolled" left blank: 201, Kael's roll manual with those faces, Vesh's base
        defense die rolled from the seed after them (a tester's GM was refused 422 faces-needed, the form's blanks
        being read as missing faces); the log verifies."""
        from tests.sheets import sheet as plain

        table.create(dice="seeded", names=(), combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                          msgspec.to_builtins(plain("vesh", side="raiders"))])
        assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
        answer = table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "unarmed": True,
                                "dice": [6, 6]})
        assert answer.status_code == 201, answer.text
        rolled = [e["event"] for e in answer.json()["events"] if e["type"] == "dice_rolled"]
        assert [(r["roller"], r["purpose"], r["source"]) for r in rolled] == [
            ("kael", "hit", "manual"), ("vesh", "base_defense", "seeded")]
        assert [d["face"] for d in rolled[0]["dice"]] == [6, 6] and len(rolled[1]["dice"]) == 1
        audit = table.client.get("/fights/duel/verify", headers=table.auth()).json()
        assert audit["clean"] and audit["problems"] == 0, audit

    def test_the_gms_faces_stopping_inside_a_roll_are_said_so_in_a_seeded_fight(self, table: Any) -> None:
        """C29: a roll is typed whole or rolled whole from the seed: the GM's one face for Kael's two-die hit is
        422 faces-needed saying the face stops inside that roll, to give one more or leave it out (it said "rolls
        at least 3 dice", Vesh's defense die too, which the seed rolls: a tool author's client gave 3); nothing
        written."""
        from tests.sheets import sheet as plain

        table.create(dice="seeded", names=(), combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                          msgspec.to_builtins(plain("vesh", side="raiders"))])
        assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
        before = lines(table.store, "duel")
        answer = table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "unarmed": True,
                                "dice": [6]})
        assert answer.status_code == 422 and answer.json()["type"] == "/problems/faces-needed", answer.text
        assert answer.json()["detail"] == (
            "the 1 face given stops inside a roll of 2 dice (kael's hit: primary d6, fcs d6): a roll is typed whole or "
            "rolled whole from the seed (C29); give 1 more, or leave out its 1 (the seed then rolls it); the faces "
            "in this order: kael's hit: primary d6, fcs d6")
        assert answer.json()["field"] == "$.command.dice" and lines(table.store, "duel") == before

    def test_a_players_action_after_the_end_is_refused_as_the_fight_has_ended(self, table: Any) -> None:
        """C33: after end_fight Alice's attack is refused as the GM's is, 422 saying the fight has ended, with
        nothing written (it was 403 "the GM's before the rounds", a rule for the set-up; found by a tester); to Alice
        with rule C33 and without the engine's list of what is legal then, the GM's reveal, undo and redo (a
        tester: it read "legal now: reveal the seed; undo and redo" to a seat that may give none of them)."""
        from tests.sheets import sheet as plain

        table.create(dice="manual", names=(), combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                          msgspec.to_builtins(plain("vesh", side="raiders"))])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
        assert table.command({"command": "end_fight", "note": "over"}).status_code == 201
        before = lines(table.store, "duel")
        attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "unarmed": True, "dice": [6, 6]}
        told = [table.command(attack, token=token) for token in (alice, None)]
        assert [t.status_code for t in told] == [422, 422], [t.text for t in told]
        assert told[1].json()["detail"].startswith("[phase] the fight has ended: cannot act"), told[1].text
        assert (told[0].json()["rule"], told[0].json()["detail"]) == ("C33", (
            "[C33] the fight has ended: a player's or spectator's seat has no command left to give (the GM may "
            "still reveal the seed, undo or redo)")), told[0].text
        assert lines(table.store, "duel") == before

    def test_once_the_fight_has_ended_it_is_no_ones_turn(self, table: Any) -> None:
        """C33, docs/server.md: after end_fight /state and /options give ``turn`` null and no combatant is marked as
        having the turn, for the GM and a player (they still named the last turn's combatant; found by a
        tester)."""
        from tests.sheets import sheet as plain

        table.create(dice="manual", names=(), combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                          msgspec.to_builtins(plain("vesh", side="raiders"))])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
        state = table.client.get("/fights/duel/state", headers=table.auth()).json()
        assert state["turn"] == "kael" and [c["id"] for c in state["combatants"] if c.get("turn")] == ["kael"]
        assert table.command({"command": "end_fight", "note": "over"}).status_code == 201
        for token in (None, alice):
            state = table.client.get("/fights/duel/state", headers=table.auth(token)).json()
            options = table.client.get("/fights/duel/options", headers=table.auth(token)).json()["options"]
            assert (state["phase"], state["turn"], options["turn"]) == ("ended", None, None), state
            assert not any(c.get("turn") for c in state["combatants"])
            assert not any(b["turn"] for b in options["combatants"])

    def test_a_player_starts_no_action_before_the_rounds(self, table: Any) -> None:
        """docs/machine.md: in the set-up single actions are the GM's to resolve. Alice's seat (Kael) is offered no
        attack, move or ability before initiative, and her attack is 403 with nothing written (a player attacked,
        again and again, before the GM rolled initiative; found by a tester); the GM's attack is accepted; once the
        rounds begin, her offers hold Kael's attack and it is 201."""
        from tests.sheets import sheet as plain

        table.create(dice="seeded", names=(), combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                          msgspec.to_builtins(plain("vesh", side="raiders"))])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        offered = table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"]["offers"]
        assert offered == []
        before = lines(table.store, "duel")
        attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "unarmed": True}
        refused = table.command(attack, token=alice)
        assert refused.status_code == 403 and "before the rounds" in refused.json()["detail"], refused.text
        assert lines(table.store, "duel") == before
        assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
        offered = table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"]["offers"]
        assert "declare_attack" in [o["command"] for o in offered]
        assert table.command(attack, token=alice).status_code == 201  # its dice the seed's

    def test_a_players_faces_for_a_hidden_combatants_dice_tell_nothing_of_them(self, table: Any) -> None:
        """C29, seat secrecy: in a seeded fight the hidden Vesh attacks Kael (the GM's command) and Kael's Interrupt
        window opens; Alice passes with faces, which would go first to Vesh's hit dice. Every such answer is the
        same 422 naming none of Vesh's dice (it was a die-size error naming Vesh's d8, or a surplus that told
        whether Vesh's roll hit), and nothing is written."""
        from tests.sheets import sheet as plain

        table.create(dice="seeded", names=(), hidden=["vesh"], combatants=[
            msgspec.to_builtins(plain("kael", AGI=(20, 0))), msgspec.to_builtins(plain("vesh", side="raiders",
                                                                                      STR=(8, 3)))])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "engage", "who": "kael", "others": ["vesh"]}).status_code == 201
        assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
        assert table.command({"command": "end_turn", "who": "kael"}, token=alice).status_code == 201
        assert table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael",
                              "unarmed": True}).status_code == 201
        before = lines(table.store, "duel")
        answers = [table.command({"command": "pass_reaction", "who": "kael", "dice": faces}, token=alice)
                   for faces in ([1, 99], [1, 1, 1, 1], [6, 6, 1, 1], [9])]
        assert {a.status_code for a in answers} == {422} and len({a.text for a in answers[1:3]}) == 1
        assert all(a.json()["type"] == "/problems/surplus-faces" and "d8" not in a.text for a in answers)
        assert lines(table.store, "duel") == before

    def test_the_faces_needed_list_one_roll_an_entry_in_the_details_words_and_each_die(self, table: Any) -> None:
        """Found by a tester: Vesh's attack on Kael in a manual fight (Kael first, so Vesh's turn after Kael's)
        needs three dice in two rolls (C29: Vesh's hit dice, then Kael's base defense die); ``needed`` has one
        entry per roll, listing its dice, in the detail's words ("base defense", it said "base_defense"), and
        ``needed_dice`` one entry per die, the purpose as the options name it."""
        table.create(dice="manual")
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
        assert table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael",
                              "weapon": "knife"}).status_code == 201  # the Interrupt window opens (C24)
        missing = table.command({"command": "pass_reaction", "who": "kael"})
        problem = missing.json()
        assert missing.status_code == 422 and problem["type"] == "/problems/faces-needed", missing.text
        assert problem["needed"] == ["vesh's hit: primary d8, fcs d6", "kael's base defense: res d8"]
        assert all(entry in problem["detail"] for entry in problem["needed"])
        assert problem["needed_dice"] == [
            {"roller": "vesh", "purpose": "hit", "pool": "primary", "sides": 8},
            {"roller": "vesh", "purpose": "hit", "pool": "fcs", "sides": 6},
            {"roller": "kael", "purpose": "base_defense", "pool": "res", "sides": 8}]

    def test_manual_dice_say_which_faces_are_needed(self, table: Any) -> None:
        """C29: in a manual fight, roll_initiative without faces is 422 naming both dice (Kael's AGI d6, Vesh's
        AGI d8 on the Ember Ford sheets); a face its die cannot show is 400 at that face of the command's dice; with
        the faces it is 201 and the faces are recorded as manual."""
        table.create(dice="manual")
        missing = table.command({"command": "roll_initiative"})
        assert missing.status_code == 422 and missing.json()["type"] == "/problems/faces-needed"
        assert missing.json()["needed"] == ["kael's initiative: check d6", "vesh's initiative: check d8"]
        impossible = table.command({"command": "roll_initiative", "dice": [7, 7]})  # a 7 on Kael's d6
        assert impossible.status_code == 400 and (impossible.json()["field"], impossible.json()["rule"]) == (
            "$.command.dice[0]", "C29"), impossible.text
        assert impossible.json()["detail"].startswith("die face 7 is not possible on a d6 (at $.command.dice[0], ")
        answer = table.command({"command": "roll_initiative", "dice": [4, 7]})
        assert answer.status_code == 201, answer.text
        rolls = [e["event"] for e in answer.json()["events"] if e["event"]["type"] == "dice_rolled"]
        assert [(r["dice"][0]["face"], r["source"]) for r in rolls] == [(4, "manual"), (7, "manual")]

    def test_a_retry_with_the_same_key_appends_nothing_twice(self, table: Any) -> None:
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


    def test_the_commands_own_idempotency_key_is_honoured_as_the_header_is(self, table: Any) -> None:
        """A command carrying its own ``idempotency_key`` (the command schema's field, recorded in the log) retried
        with the same body gets the first answer byte for byte, one append; given with a different header key, or
        again with another body, it is 422 at ``$.command.idempotency_key``; and a key the log already records under
        the same command (sent by another seat, which kept no answer for it) is 409, for another command 422:
        nothing appended twice."""
        version = table.create()["head"]["seq"]
        roll = {"command": "roll_initiative", "idempotency_key": "roll-in-body"}
        first = table.command(roll, expected_version=version)
        after = lines(table.store, "duel")
        again = table.command(roll, expected_version=version)
        assert (first.status_code, again.status_code, again.content) == (201, 201, first.content)
        assert lines(table.store, "duel") == after
        assert sum(b'"idempotency_key":"roll-in-body"' in line for line in after) == 1
        both = table.command(roll, headers={"Idempotency-Key": "another"})
        assert both.status_code == 422 and both.json()["field"] == "$.command.idempotency_key", both.text
        reused = table.command(roll, expected_version=version + 1)  # the field's key, another body
        assert reused.status_code == 422 and reused.json()["field"] == "$.command.idempotency_key", reused.text
        assert "Idempotency-Key" not in reused.json()["detail"], "no header was sent (found by a tester)"
        first_up = first.json()["options"]["turn"]  # the seeded initiative's
        made = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": [first_up]}).json()["token"]
        turn = {"command": "end_turn", "who": first_up, "idempotency_key": "turn-ends"}
        assert table.command(turn).status_code == 201
        done = lines(table.store, "duel")
        retried = table.command(turn, token=made)
        assert retried.status_code == 409 and "done at seq" in retried.json()["detail"], retried.text
        other = table.command({"command": "end_turn", "who": first_up, "idempotency_key": "turn-ends",
                               "dice": [1]}, token=made)  # her refused retry freed her key: the log says no
        assert other.status_code == 422 and other.json()["type"] == "/problems/idempotency-key-reused", other.text
        assert lines(table.store, "duel") == done


class TestSettings:
    def test_a_note_is_named_by_its_combatant_in_every_refusal(self, table: Any) -> None:
        """docs/server.md's limits: a GM note of the wrong type or too long is 400 and one for a combatant the fight
        does not hold is 422, each at ``$.notes.<who>`` (the key), never an index or ``[...]``."""
        table.create()
        for notes, status in (({"vesh": 5}, 400), ({"vesh": "x" * 2001}, 400), ({"nobody": "x"}, 422)):
            answer = table.client.post("/fights/duel/settings", headers=table.auth(), json={"notes": notes})
            assert answer.status_code == status and answer.json()["field"] == f"$.notes.{next(iter(notes))}", \
                answer.text


class TestSeed:
    def test_reveal_seed_without_a_seed_reveals_the_kept_one(self, table: Any) -> None:
        """The GM reveals the seed the server kept with a bare reveal_seed; it matches the fight's first commitment.
        The fight goes on, so the seed is spent (C42): the same answer commits to a fresh seed, which the keep now
        holds (secret, as the first was) and the dice are drawn under."""
        table.create()
        first = table.keep.seed("duel")
        table.command({"command": "roll_initiative"})
        answer = table.command({"command": "reveal_seed"})
        assert answer.status_code == 201, answer.text
        events = [e["event"] for e in answer.json()["events"]]
        revealed = [e["seed"] for e in events if e["type"] == "seed_revealed"]
        fresh = [e["commitment"] for e in events if e["type"] == "seed_committed"]
        kept = table.keep.seed("duel")
        assert first is not None and kept is not None and revealed == [first.hex()] and kept != first
        assert fresh == [commitment(kept)] and Fight.load(table.store, "duel").state.seed_commitment == fresh[0]

    def test_the_dice_after_a_reveal_come_from_the_fresh_seed_and_verify(self, table: Any, tmp_path: Path) -> None:
        """C42: after a mid-fight reveal the server rolls from the fresh seed, a server started again on the same
        store and keep too; once the fight ends and the fresh seed is revealed, every seeded die of both seeds
        verifies."""
        from omen_replay.verify import verify_store

        table.create()
        table.command({"command": "roll_initiative"})
        table.command({"command": "reveal_seed"})
        fresh = table.keep.seed("duel")
        again = TestClient(create_app(table.store, table.keep))
        with again:
            turn = again.get("/fights/duel/options", headers=table.auth()).json()["options"]["turn"]
            rolled = again.post("/fights/duel/commands", headers=table.auth(), json={"command": {
                "command": "static_check", "check": {"who": turn, "attribute": "FCS"}, "difficulty": 5}})
            assert rolled.status_code == 201, rolled.text
            die = next(e["event"] for e in rolled.json()["events"] if e["event"]["type"] == "dice_rolled")
            assert die["source"] == "seeded"
            face = die["dice"][0]
            assert face["face"] == seeded_face(fresh, "duel", die["counter"], 0, face["sides"])
            assert again.post("/fights/duel/commands", headers=table.auth(),
                              json={"command": {"command": "end_fight", "reason": "gm"}}).status_code == 201
            assert again.post("/fights/duel/commands", headers=table.auth(),
                              json={"command": {"command": "reveal_seed"}}).status_code == 201
        report = verify_store(table.store, "duel")
        assert report.clean and report.seed_revealed and report.seeded_checked == report.seeded_dice > 0


class TestTokens:
    def test_no_token_or_an_unknown_one_is_401(self, table: Any) -> None:
        """Without a bearer token, or with one the server never made, every fight resource is 401."""
        table.create()
        assert table.client.get("/fights/duel/options").status_code == 401
        assert table.client.get("/fights/duel/options", headers=table.auth("omen_gm_nope")).status_code == 401
        assert table.command({"command": "roll_initiative"}, token="omen_gm_nope").status_code == 401

    def test_another_fights_token_is_403(self, table: Any) -> None:
        """The GM token of one fight opens no other: 403, and nothing is written."""
        table.create("one")
        one = table.gm
        table.create("two")
        before = lines(table.store, "two")
        answer = table.command({"command": "roll_initiative"}, fight_id="two", token=one)
        assert answer.status_code == 403 and answer.json()["type"] == "/problems/forbidden"
        assert lines(table.store, "two") == before

    @pytest.mark.parametrize("kind", ["player", "spectator"])
    def test_a_gms_command_that_does_not_hold_together_is_403_to_a_seat_that_may_not_give_it(self, table: Any,
                                                                                              kind: str) -> None:
        """A call_save (the GM's) whose effect names ``of`` without ``until`` (422 inconsistent from the GM) is
        403 from a player's or spectator's seat: the seat's right is checked before the command's own
        consistency; an end_turn for another's combatant with a field of the wrong type is 403 too."""
        table.create()
        token = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": kind, "combatants": ["kael"] if kind == "player" else []}).json()["token"]
        before = lines(table.store, "duel")
        save = {"command": "call_save", "caller": "kael", "saver": "vesh", "effect": {
            "name": "x", "save": "AGI", "against": "AGI", "spell": True, "action_cost": 1, "on_success": [],
            "on_failure": [{"kind": "condition", "condition": "prone", "of": "target", "to": "target"}]}}
        answer = table.command(save, token=token)
        assert answer.status_code == 403 and answer.json()["type"] == "/problems/forbidden", answer.text
        assert table.command(save).json()["type"] == "/problems/inconsistent"  # from the GM: not the seat's right
        answer = table.command({"command": "end_turn", "who": "vesh", "faces": "x"}, token=token)
        assert answer.status_code == 403, answer.text
        assert lines(table.store, "duel") == before

    def test_a_players_403_names_the_field_it_may_not_give(self, table: Any) -> None:
        """Found by a Node client's author: a 403 said what but not where. Alice (Kael's) ending Vesh's turn is
        refused at $.command.who, attacking with Vesh at $.command.attacker, and the GM's undo at
        $.command.command; the spectator's seat, which gives nothing, at no field."""
        table.create()
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "combatants": ["kael"]}).json()["token"]
        watcher = table.client.post("/fights/duel/seats", headers=table.auth(), json={"kind": "spectator"}
                                    ).json()["token"]
        for command, field in (({"command": "end_turn", "who": "vesh"}, "$.command.who"),
                               ({"command": "declare_attack", "attacker": "vesh", "target": "kael", "unarmed": True},
                                "$.command.attacker"),
                               ({"command": "undo"}, "$.command.command")):
            answer = table.command(command, token=alice)
            assert (answer.status_code, answer.json().get("field")) == (403, field), answer.text
            assert answer.json()["detail"].endswith(f"(at {field})")
        assert "field" not in table.command({"command": "undo"}, token=watcher).json()

    def test_a_seat_is_read_from_the_keep_once(self, table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        """omen_server.app.Fights.seat: a seat never changes once made, so the server reads each token's seat
        from its keep once and answers its later requests from memory; a token it does not know is asked for
        every time (another server may have just made it), and stays 401 until the keep has it."""
        table.create()
        asked: list[str] = []
        original = table.keep.seat
        def seat(token: str) -> Any:
            asked.append(token)
            return original(token)

        monkeypatch.setattr(table.keep, "seat", seat)
        for _ in range(3):
            assert table.client.get("/fights/duel/options", headers=table.auth()).status_code == 200
        assert asked == [table.gm]
        for _ in range(2):
            assert table.client.get("/fights/duel/options", headers=table.auth("omen_gm_nope")).status_code == 401
        assert asked == [table.gm, "omen_gm_nope", "omen_gm_nope"]

    def test_a_fight_id_created_again_forgets_the_earlier_fights_seats_at_once(self, tmp_path: Path) -> None:
        """A fight archived and deleted by the operator while the server runs, its id then created again: the
        earlier fight's GM and player tokens are 401 at once in the new fight (they kept working in it, commands
        included, for up to SEAT_TTL: a tester), and the new fight's views are its own (its log, its seats)."""
        from omen_core.store import JsonlStore

        store, keep = JsonlStore(tmp_path / "logs"), Keep(str(tmp_path / "keep.db"))
        (tmp_path / "logs").mkdir()
        table = Table()
        table.store, table.keep = store, keep
        table.client = TestClient(create_app(store, keep))
        with table.client:
            table.create("reuse")
            old_gm = table.gm
            alice = table.client.post("/fights/reuse/seats", headers=table.auth(), json={
                "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
            assert table.client.get("/fights/reuse/seat", headers=table.auth(alice)).status_code == 200
            assert table.command({"command": "roll_initiative"}, "reuse").status_code == 201
            assert table.client.get("/fights/reuse/options", headers=table.auth(alice)).status_code == 200
            for made in (tmp_path / "logs").iterdir():
                made.unlink()
            table.create("reuse")
            for token in (old_gm, alice):
                answer = table.client.get("/fights/reuse/seat", headers=table.auth(token))
                assert answer.status_code == 401, answer.text
            refused = table.command({"command": "roll_initiative"}, "reuse", token=old_gm)
            assert refused.status_code == 401 and len(list(store.read("reuse"))) == 3
            seats = table.client.get("/fights/reuse/seats", headers=table.auth()).json()
            assert [s["kind"] for s in seats] == ["gm"]
            view = table.client.get("/fights/reuse/options", headers=table.auth()).json()
            assert view["head"]["seq"] == 3 and view["options"]["phase"] == "setup"

    def test_a_fight_id_created_again_through_another_process_is_the_new_fight_there_too(self, tmp_path: Path) -> None:
        """Two servers (processes) on one store and keep: B has loaded fight 'reuse' (played to seq 11) when the
        operator retires it and A creates the id again: B serves the new fight at once (it served the old state to
        the new fight's seats, and once the new log grew past the old one's length every read was a broken chain:
        an operator tester and a reviewer)."""
        from omen_core.store import JsonlStore

        (tmp_path / "logs").mkdir()
        store, keep = JsonlStore(tmp_path / "logs"), Keep(str(tmp_path / "keep.db"))
        a, b = Table(), Table()
        for table in (a, b):
            table.store, table.keep = store, keep
            table.client = TestClient(create_app(store, keep))
        with a.client, b.client:
            a.create("reuse")
            assert a.command({"command": "roll_initiative"}, "reuse").status_code == 201
            old = b.client.get("/fights/reuse/options", headers=a.auth()).json()
            assert old["options"]["phase"] == "rounds"
            for made in (tmp_path / "logs").iterdir():
                made.unlink()
            a.create("reuse")
            view = b.client.get("/fights/reuse/options", headers=a.auth())
            assert view.status_code == 200 and view.json()["head"]["seq"] == 3, view.text
            assert view.json()["options"]["phase"] == "setup"
            assert a.command({"command": "roll_initiative"}, "reuse").status_code == 201
            while store.version("reuse") <= old["head"]["seq"]:
                turn = a.client.get("/fights/reuse/options", headers=a.auth()).json()["options"]["turn"]
                assert a.command({"command": "end_turn", "who": turn}, "reuse").status_code == 201
            grown = b.client.get("/fights/reuse/options", headers=a.auth())
            assert grown.status_code == 200, grown.text
            assert grown.json()["head"]["seq"] == store.version("reuse")
            # a log created again as long as the one B holds (never played past its set-up): B sees the new head
            # too, and a command through B is decided on it (it kept the old one for good: a reviewer)
            a.create("same")
            assert b.client.get("/fights/same/options", headers=a.auth()).json()["head"]["seq"] == 3
            for made in (tmp_path / "logs").glob("same.jsonl*"):
                made.unlink() if made.is_file() else None
            new = a.create("same")
            seen = b.client.get("/fights/same/options", headers=a.auth()).json()
            assert seen["head"] == new["head"], (seen["head"], new["head"])
            assert b.command({"command": "roll_initiative"}, "same", token=a.gm).status_code == 201

    def test_an_unknown_fight_is_404(self, table: Any) -> None:
        """A token cannot name a fight that does not exist (403 for another fight's token); a missing path 404."""
        table.create()
        assert table.client.get("/nowhere").status_code == 404
        assert table.client.get("/fights/ghost/options", headers=table.auth()).status_code == 403


class TestEvents:
    def test_pages_of_events_are_the_log_in_order(self, table: Any) -> None:
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
    def test_bad_paging_is_400(self, table: Any, query: str) -> None:
        """A negative after, a limit outside 1..500 or a non-number is 400 naming the query parameter."""
        table.create()
        answer = table.client.get(f"/fights/duel/events?{query}", headers=table.auth())
        assert answer.status_code == 400 and answer.json()["field"] == f"query.{query.partition('=')[0]}"


class TestStreamRefusals:
    def test_a_stream_needs_a_token(self, table: Any) -> None:
        """The live stream, like every fight resource, is 401 without a token."""
        table.create()
        assert table.client.get("/fights/duel/stream").status_code == 401

    def test_a_last_event_id_that_is_no_seq_is_400(self, table: Any) -> None:
        """Last-Event-ID must be a seq: 'x' is 400 naming the header."""
        table.create()
        answer = table.client.get("/fights/duel/stream", headers={**table.auth(), "Last-Event-ID": "x"})
        assert answer.status_code == 400 and answer.json()["field"] == "header.Last-Event-ID"


    @pytest.mark.parametrize(("query", "last", "field"), [
        ("?after=4", None, "query.after"), ("", "4", "header.Last-Event-ID"), ("?after=1", "9", "header.Last-Event-ID"),
        ("?after=2", "5", "header.Last-Event-ID")])
    def test_a_resume_point_past_the_head_is_400_naming_the_head(self, table: Any, query: str, last: str | None,
                                                                   field: str) -> None:
        """A stream resumed past the fight's head (seq 3: an id of another fight or store) is 400 at the parameter,
        saying the head, not a 200 and silence for ever; with both sent, Last-Event-ID wins (it is the one
        refused, after=1 or 2 notwithstanding)."""
        table.create()
        headers = {**table.auth(), **({"Last-Event-ID": last} if last else {})}
        answer = table.client.get(f"/fights/duel/stream{query}", headers=headers)
        assert answer.status_code == 400 and answer.json()["field"] == field, answer.text
        assert "past the fight's head, seq 3" in answer.json()["detail"], answer.text

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
def test_every_answer_agrees_with_the_log(picks: list[int], data: st.DataObject) -> None:
    """Random commands picked from the options, and random junk: every answer is 201 with the log grown to its
    head, or a 4xx problem with the log byte-identical; never a 500; the log verifies as a stored fight."""
    junk = data.draw(st.lists(JUNK, min_size=len(picks), max_size=len(picks)))
    table = Table()
    with table.client:
        table.create()
        play_through_the_api(table, picks, junk)
    Fight.load(table.store, "duel")


# -- hostile input, bounded work (issue 22) ----------------------------------------------------------------------

POSTS = ["/fights", "/fights/duel/commands", "/fights/duel/seats", "/fights/duel/settings"]


@pytest.fixture
def on_disk(tmp_path: Path) -> Any:
    """A table over a SQLite store and keep (real 64-bit integers behind every seq), its client open, a fight made."""
    made = Table(tmp_path)
    with made.client:
        made.create()
        yield made


class TestHostileInput:
    @pytest.mark.parametrize("path", POSTS)
    def test_json_nested_a_thousand_deep_is_400_and_writes_nothing(self, on_disk: Any, path: str) -> None:
        """JSON nested 1,000 deep on any POST (POST /fights without a token included) is 400 at $, answered before
        anything decodes it; the log is untouched."""
        before = lines(on_disk.store, "duel")
        for body in (b"[" * 1000 + b"]" * 1000, b'{"command": ' + b"[" * 1000 + b"]" * 1000 + b"}"):
            answer = on_disk.client.post(path, content=body, headers={**on_disk.auth(),
                                                                      "Content-Type": "application/json"})
            assert answer.status_code == 400, answer.text
            assert answer.json()["field"] == "$" and "nested more than 32" in answer.json()["detail"]
        assert lines(on_disk.store, "duel") == before and on_disk.store.fights() == ["duel"]

    def test_a_body_past_the_bound_is_413(self, on_disk: Any) -> None:
        """A body larger than 1 MiB is 413 (a problem document), whatever it holds."""
        answer = on_disk.client.post("/fights", content=b" " * (MAX_BODY_BYTES + 1),
                                     headers={"Content-Type": "application/json"})
        assert answer.status_code == 413 and answer.json()["type"] == "/problems/too-large"

    @pytest.mark.parametrize("path, field", [
        (f"/fights/duel/events?after={MAX_SEQ + 1}", "query.after"),
        (f"/fights/duel/stream?after={MAX_SEQ + 1}", "query.after"),
        (f"/fights/duel/explain/{MAX_SEQ + 1}", "path.seq"),
    ])
    def test_a_seq_past_what_a_store_holds_is_400(self, on_disk: Any, path: str, field: str) -> None:
        """A seq past 2^63 - 1 (SQLite's integers) is 400 naming the parameter, not a 500 from the store."""
        answer = on_disk.client.get(path, headers=on_disk.auth())
        assert answer.status_code == 400 and answer.json()["field"] == field, answer.text

    def test_the_largest_seq_is_an_empty_page(self, on_disk: Any) -> None:
        """after=2^63 - 1 is a seq like any other: no events after it."""
        answer = on_disk.client.get(f"/fights/duel/events?after={MAX_SEQ}", headers=on_disk.auth())
        assert answer.status_code == 200 and answer.json()["events"] == []

    @pytest.mark.parametrize("last", ["²", "x", "-1", str(MAX_SEQ + 1), "9" * 40])
    def test_a_last_event_id_that_is_no_seq_is_400_before_the_stream(self, on_disk: Any, last: str) -> None:
        """Last-Event-ID '²' (str.isdigit takes it, int does not), a number past 2^63 - 1 or anything else not a
        seq is 400 naming the header, before the 200 of a stream."""
        answer = on_disk.client.get("/fights/duel/stream", headers={**on_disk.auth(), "Last-Event-ID": last.encode()})
        assert answer.status_code == 400 and answer.json()["field"] == "header.Last-Event-ID"

    @pytest.mark.parametrize("key", ["x" * 201, ""])
    def test_an_idempotency_key_out_of_bounds_is_400_naming_the_header_as_sent(self, on_disk: Any, key: str) -> None:
        """An Idempotency-Key of 201 characters, or empty, is 400 at header.Idempotency-Key, the header as sent and as
        the same header given twice names it (it read header.idempotency_key, the parameter's name: a client
        author mapping fields back to headers needed both)."""
        answer = on_disk.client.post("/fights/duel/commands", headers={**on_disk.auth(), "Idempotency-Key": key},
                                     json={"command": {"command": "end_turn", "who": "kael"}})
        assert answer.status_code == 400 and answer.json()["field"] == "header.Idempotency-Key", answer.text
        assert answer.json()["detail"].endswith("(at header.Idempotency-Key)")

    @pytest.mark.parametrize("fight_id", ["dup\n", "dup\n\n", "a b", "x" * 129])
    def test_a_fight_id_is_matched_whole(self, on_disk: Any, fight_id: str) -> None:
        """An id with a final newline (which ``$`` alone would take) is 400 at $.id, and nothing is stored."""
        answer = on_disk.client.post("/fights", json={"id": fight_id, "combatants": [sheet("kael")]})
        assert answer.status_code == 400 and answer.json()["field"] == "$.id", answer.text
        assert on_disk.store.fights() == ["duel"]

    @pytest.mark.parametrize("command", [
        {"command": "start_fight", "ruleset": {}, "dice_source": "manual"},
        {"command": "join", "sheet": {}},
    ])
    def test_the_set_up_commands_are_not_http_commands(self, on_disk: Any, command: dict[str, Any]) -> None:
        """start_fight and join are not among the commands HTTP takes (POST /fights starts a fight, its roster
        whole): 400 at the command's tag."""
        answer = on_disk.command(command)
        assert answer.status_code == 400 and answer.json()["field"] == "$.command.command", answer.text

    def test_a_whole_number_written_as_a_float_is_an_integer(self, on_disk: Any) -> None:
        """JSON Schema's integers include 3.0: expected_version 3.0 is version 3."""
        version = on_disk.store.version("duel")
        answer = on_disk.command({"command": "roll_initiative"}, expected_version=float(version))
        assert answer.status_code == 201, answer.text

    @pytest.mark.parametrize(("body", "field"), [
        (b'{"command": {"command": "end_turn", "who": "kael", "who": "vesh"}}', "$.command.who"),
        (b'{"command": {"command": "roll_initiative"}, "command": {"command": "end_turn", "who": "vesh"}}',
         "$.command"),
        (b'{"command": {"command": "roll_initiative", "command": "roll_initiative"}}', "$.command.command"),
    ])
    def test_a_name_given_twice_is_400_at_its_path(self, on_disk: Any, body: bytes, field: str) -> None:
        """I-JSON: a body whose object gives a name twice is 400 naming that member (readers in other languages
        differ on which value counts), even where both values are the same; the log is untouched."""
        before = lines(on_disk.store, "duel")
        headers = {**on_disk.auth(), "Content-Type": "application/json"}
        answer = on_disk.client.post("/fights/duel/commands", headers=headers, content=body)
        assert answer.status_code == 400 and answer.json()["field"] == field, answer.text
        assert "given twice" in answer.json()["detail"] and lines(on_disk.store, "duel") == before

    @pytest.mark.parametrize("body", [
        b'{"command": {"command": "draw", "who": "kael", "who": "vesh", "weapon": "knife"}}',
        b'{"command": {"command": "draw", "who": "vesh", "who": "kael", "weapon": "longsword"}}',
        b'{"command": {"command": "end_turn", "command": "undo", "who": "kael"}}',
        b'{"command": {"command": "undo", "command": "end_turn", "who": "kael"}}',
    ])
    def test_a_players_command_giving_a_name_twice_is_400_whichever_copy_comes_last(self, on_disk: Any,
                                                                                    body: bytes) -> None:
        """I-JSON: a player's command naming its actor or kind twice is 400 at that member in either order (the
        seat's check read the last copy first: 403 "this seat plays kael, not 'vesh'" one way round and 400 the
        other, telling which copy the server read; found by a tester); the log is untouched."""
        alice = on_disk.client.post("/fights/duel/seats", headers=on_disk.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        before = lines(on_disk.store, "duel")
        headers = {**on_disk.auth(alice), "Content-Type": "application/json"}
        answer = on_disk.client.post("/fights/duel/commands", headers=headers, content=body)
        assert answer.status_code == 400 and "given twice" in answer.json()["detail"], answer.text
        assert lines(on_disk.store, "duel") == before

    def test_a_sheet_naming_a_field_twice_is_400_and_nothing_is_stored(self, on_disk: Any) -> None:
        """POST /fights with the second sheet giving ``hp`` twice is 400 at ``$.combatants[1].hp``."""
        text = json.dumps({"id": "twice", "combatants": [sheet("kael"), sheet("vesh")]})
        body = text.replace('"hp": ', '"hp": 1, "hp": ', 2).replace('"hp": 1, "hp": ', '"hp": ', 1)
        answer = on_disk.client.post("/fights", content=body.encode(), headers={"Content-Type": "application/json"})
        assert answer.status_code == 400 and answer.json()["field"] == "$.combatants[1].hp", answer.text
        assert on_disk.store.fights() == ["duel"]

    def test_a_body_naming_a_field_twice_without_a_token_is_401(self, on_disk: Any) -> None:
        """The token is checked before the body: a body giving a name twice, sent without a token, is 401."""
        answer = on_disk.client.post("/fights/duel/commands", headers={"Content-Type": "application/json"},
                                     content=b'{"command": {"command": "roll_initiative"}, "stage": true, '
                                             b'"stage": false}')
        assert answer.status_code == 401, answer.text

    @pytest.mark.parametrize(("query", "field"), [("limit=abc&limit=1", "query.limit"),
                                                  ("after=1&after=2&limit=1", "query.after")])
    def test_a_query_parameter_given_twice_is_400_naming_it(self, on_disk: Any, query: str, field: str) -> None:
        """GET /events with ``limit`` or ``after`` twice is 400 invalid-body at ``query.limit``/``query.after``
        (neither the first nor the last is taken), as a JSON name given twice is."""
        answer = on_disk.client.get(f"/fights/duel/events?{query}", headers=on_disk.auth())
        assert answer.status_code == 400, answer.text
        assert (answer.json()["type"], answer.json()["field"]) == ("/problems/invalid-body", field)
        assert on_disk.client.get("/fights?limit=1&limit=1").json()["field"] == "query.limit"

    @pytest.mark.parametrize("media_type", ["text/plain", "application/x-www-form-urlencoded",
                                            "multipart/form-data; boundary=x", "application/json; charset=latin-1",
                                            "application/problem+json", None])
    def test_a_body_not_sent_as_json_is_415_and_writes_nothing(self, on_disk: Any, media_type: str | None) -> None:
        """A JSON command body sent as text/plain, a form, multipart, another charset, or with no Content-Type
        is 415 unsupported-media-type (the OpenAPI document lists application/json only), on every POST with a
        body, before its token is looked at; nothing is written."""
        before = lines(on_disk.store, "duel")
        body = b'{"command": {"command": "roll_initiative"}}'
        headers = {"Content-Type": media_type} if media_type else {}
        for path, token in (("/fights/duel/commands", on_disk.auth()), ("/fights/duel/seats", on_disk.auth()),
                            ("/fights", {}), ("/fights/duel/commands", {})):
            answer = on_disk.client.post(path, content=body, headers={**token, **headers})
            assert answer.status_code == 415, answer.text
            assert answer.json()["type"] == "/problems/unsupported-media-type"
            assert answer.headers["content-type"].startswith("application/problem+json")
        assert lines(on_disk.store, "duel") == before

    @pytest.mark.parametrize("coding", ["gzip", "br", "x-unknown"])
    def test_a_body_said_to_be_encoded_is_415_and_writes_nothing(self, on_disk: Any, coding: str) -> None:
        """A JSON body labelled Content-Encoding gzip, br or an unknown coding is 415 (it was read as sent, as if
        not encoded: a proxy that decoded it would see another body; found by a tester); identity is taken."""
        before = lines(on_disk.store, "duel")
        headers = {**on_disk.auth(), "Content-Type": "application/json", "Content-Encoding": coding}
        answer = on_disk.client.post("/fights/duel/commands", headers=headers,
                                     content=b'{"command": {"command": "roll_initiative"}}')
        assert answer.status_code == 415 and "Content-Encoding" in answer.json()["detail"], answer.text
        assert lines(on_disk.store, "duel") == before
        taken = on_disk.client.post("/fights/duel/commands", headers={**headers, "Content-Encoding": "identity"},
                                    content=b'{"command": {"command": "roll_initiative"}}')
        assert taken.status_code == 201, taken.text

    def test_a_delete_with_a_body_not_sent_as_json_is_415(self, on_disk: Any) -> None:
        """Every body is JSON (docs/server.md): DELETE /staged with a text/plain body was 204 (a tester); now 415,
        and without a body it is answered as before."""
        answer = on_disk.client.request("DELETE", "/fights/duel/staged", content=b"not json",
                                        headers={**on_disk.auth(), "Content-Type": "text/plain"})
        assert answer.status_code == 415, answer.text
        plain = on_disk.client.request("DELETE", "/fights/duel/staged", headers=on_disk.auth())
        assert plain.status_code != 415, plain.text

    @pytest.mark.parametrize("media_type", ["application/json", "application/json; charset=utf-8",
                                            "Application/JSON;charset=\"UTF-8\""])
    def test_a_body_sent_as_json_is_taken(self, on_disk: Any, media_type: str) -> None:
        """application/json, with ``charset=utf-8`` or not, in any case, is taken (201); a POST without a body
        (a seat's revoke) needs no Content-Type."""
        answer = on_disk.client.post("/fights/duel/commands", headers={**on_disk.auth(), "Content-Type": media_type},
                                     content=b'{"command": {"command": "roll_initiative"}}')
        assert answer.status_code == 201, answer.text
        made = on_disk.client.post("/fights/duel/seats", headers=on_disk.auth(), json={"kind": "spectator"}).json()
        assert on_disk.client.post(f"/fights/duel/seats/{made['id']}/revoke", headers=on_disk.auth()
                                   ).status_code == 200

    def test_a_number_past_a_floats_range_is_400_at_its_field(self, on_disk: Any) -> None:
        """expected_version 1e400 (no float holds it) is 400 at ``$.expected_version``, not at ``$.[...]``."""
        answer = on_disk.client.post("/fights/duel/commands",
                                     headers={**on_disk.auth(), "Content-Type": "application/json"},
                                     content=b'{"command": {"command": "roll_initiative"}, "expected_version": 1e400}')
        assert answer.status_code == 400 and answer.json()["field"] == "$.expected_version", answer.text

    def test_a_required_field_left_out_is_400_where_it_belongs(self, on_disk: Any) -> None:
        """end_turn without ``who`` is 400 at ``$.command.who`` (msgspec says the object: ``$.command``)."""
        answer = on_disk.command({"command": "end_turn"})
        assert answer.status_code == 400 and answer.json()["field"] == "$.command.who", answer.text

    def test_a_sheets_own_inconsistency_is_422_at_its_path(self, on_disk: Any) -> None:
        """A well-formed sheet wielding what it does not carry is 422 (no schema can say it) naming the sheet."""
        bad = {**sheet("kael"), "wielding": ["no-such-blade"]}
        answer = on_disk.client.post("/fights", json={"id": "bad", "combatants": [bad]})
        assert answer.status_code == 422 and answer.json()["field"] == "$.combatants[0]", answer.text
        assert on_disk.store.fights() == ["duel"]

    def test_an_unforeseen_failure_is_500_and_logged_with_its_traceback(self, on_disk: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
        """A failure nothing foresaw (here the options breaking) is a 500 problem document carrying a reference,
        and one error line in the server's log with that reference and the traceback; the client gets nothing of
        the error itself."""
        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise RuntimeError("secret internals")
        monkeypatch.setattr(on_disk.client.app.state.fights, "view", broken)
        with structlog.testing.capture_logs() as logs:
            answer = on_disk.client.get("/fights/duel/options", headers=on_disk.auth())
        problem = answer.json()
        assert answer.status_code == 500 and problem["type"] == "/problems/internal-error"
        assert "secret internals" not in answer.text and problem["ref"] in problem["detail"]
        failed = [e for e in logs if e.get("ref") == problem["ref"]]
        assert len(failed) == 1 and failed[0]["log_level"] == "error"
        assert failed[0]["path"] == "/fights/duel/options" and isinstance(failed[0]["exc_info"], RuntimeError)


class TestLimits:
    @pytest.mark.parametrize("more, field", [
        ({"title": "t" * (MAX_TITLE + 1)}, "$.title"),
        ({"notes": {"kael": "n" * (MAX_NOTE + 1)}}, "$.notes"),
        ({"combatants": [{**sheet("kael"), "id": f"k{i}"} for i in range(MAX_COMBATANTS + 1)]}, "$.combatants"),
        ({"hidden": ["kael"] * (MAX_COMBATANTS + 1)}, "$.hidden"),
    ])
    def test_a_fight_past_a_bound_is_400_naming_the_field(self, table: Any, more: dict[str, Any], field: str) -> None:
        """A title, a note, a roster or a hidden list past its bound (docs/server.md "Limits") is 400 at its
        field, and nothing is stored."""
        body = {"id": "big", "combatants": [sheet("kael"), sheet("vesh")], **more}
        answer = table.client.post("/fights", json=body)
        assert answer.status_code == 400 and answer.json()["field"].startswith(field), answer.text
        assert table.store.fights() == []

    @pytest.mark.parametrize(("index", "name"), [(1, "will"), (0, "hp")])
    def test_a_sheets_number_past_2_53_is_400_at_the_sheet_in_the_request(self, table: Any, index: int,
                                                                          name: str) -> None:
        """A sheet of POST /fights holding 2**53 is 400 invalid-body at its place in the request,
        ``$.combatants[1].will`` (as a die out of range is), not at the join command's ``$.command.sheet``;
        nothing is stored."""
        sheets = [sheet("kael"), sheet("vesh")]
        sheets[index][name] = 2**53
        answer = table.client.post("/fights", json={"id": "big", "combatants": sheets})
        assert answer.status_code == 400, answer.text
        assert (answer.json()["type"], answer.json()["field"]) == ("/problems/invalid-body",
                                                                   f"$.combatants[{index}].{name}")
        assert answer.json()["detail"].startswith("a whole number beyond ±9007199254740991")
        assert table.store.fights() == []

    def test_the_largest_roster_is_a_fight(self, table: Any) -> None:
        """A roster of exactly MAX_COMBATANTS starts."""
        roster = [{**sheet("kael"), "id": f"k{i}", "side": "ab"[i % 2]} for i in range(MAX_COMBATANTS)]
        answer = table.client.post("/fights", json={"id": "big", "combatants": roster})
        assert answer.status_code == 201 and len(Fight.load(table.store, "big").state.combatants) == MAX_COMBATANTS

    def test_a_fight_has_at_most_max_seats_seats(self, table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        """The GM's and MAX_SEATS - 1 more; the next is 409 saying so (here with a bound of 3)."""
        import omen_server.seating as seating

        monkeypatch.setattr(seating, "MAX_SEATS", 3)
        table.create()
        made = [table.client.post("/fights/duel/seats", headers=table.auth(), json={"kind": "spectator"})
                for _ in range(3)]
        assert [m.status_code for m in made] == [201, 201, 409]
        assert "3 seats" in made[-1].json()["detail"] and len(table.keep.seats("duel")) == 3

    def test_a_seat_plays_at_most_the_largest_roster(self, table: Any) -> None:
        """A seat's combatants past MAX_COMBATANTS is 400 at $.combatants."""
        table.create()
        answer = table.client.post("/fights/duel/seats", headers=table.auth(),
                                   json={"kind": "player", "combatants": ["kael"] * (MAX_COMBATANTS + 1)})
        assert answer.status_code == 400 and answer.json()["field"] == "$.combatants"


    @pytest.mark.parametrize("name", ["Ana\u202eevil", "Bob\n", "Cy\x07", "Di\u2066x\u2069", "\u061cEd"])
    def test_a_seats_name_holds_no_control_nor_bidirectional_character(self, table: Any, name: str) -> None:
        """A seat's name is shown on the GM's page and in its commands' ``by``: a control character, a
        bidirectional control (U+202E reversed what followed it) or a trailing newline is 400 at $.name, said in
        words, and no seat is made; a name in any script is taken as given."""
        table.create()
        answer = table.client.post("/fights/duel/seats", headers=table.auth(), json={"kind": "spectator",
                                                                                     "name": name})
        assert answer.status_code == 400 and answer.json()["field"] == "$.name", answer.text
        assert "bidirectional control" in answer.json()["detail"] and "regex" not in answer.json()["detail"]
        assert [seat.kind for seat in table.keep.seats("duel")] == ["gm"]
        fine = table.client.post("/fights/duel/seats", headers=table.auth(), json={"kind": "spectator",
                                                                                   "name": "Zoë Ünal"})
        assert fine.status_code == 201 and fine.json()["seat"]["name"] == "Zoë Ünal"

    def test_a_server_holds_a_bounded_number_of_fights_and_reloads_one_it_forgot(self, table: Any,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
        """A server process holds at most FIGHTS_HELD fights in memory (a convention's server grew with every
        fight it had served: an operator tester; 4 here): with more made and played, the least recently used is
        forgotten, and, asked for again, answers as it did (its state, its events) and takes the next command."""
        from omen_server import app as server_app

        monkeypatch.setattr(server_app, "FIGHTS_HELD", 4)
        FIGHTS_HELD = 4
        fights = table.client.app.state.fights
        states = {}
        for n in range(FIGHTS_HELD + 3):
            made = table.create(f"f{n}")
            assert table.command({"command": "roll_initiative"}, fight_id=f"f{n}", token=made["gm_token"]
                                 ).status_code == 201
            states[f"f{n}"] = (made["gm_token"], table.client.get(f"/fights/f{n}/state",
                                                                  headers=table.auth(made["gm_token"])).json())
            assert len(fights._loaded) <= FIGHTS_HELD
            assert set(fights._views) <= set(fights._loaded) and set(fights._heads) <= set(fights._loaded)
        assert "f0" not in fights._loaded
        token, before = states["f0"]
        assert table.client.get("/fights/f0/state", headers=table.auth(token)).json() == before
        events = table.client.get("/fights/f0/events?after=0", headers=table.auth(token)).json()["events"]
        assert [e["seq"] for e in events] == list(range(1, before["head"]["seq"] + 1))
        assert "f0" in fights._loaded and len(fights._loaded) <= FIGHTS_HELD
        turn = before["turn"]
        assert table.command({"command": "end_turn", "who": turn}, fight_id="f0", token=token).status_code == 201

    def test_a_fight_no_one_asked_for_a_while_is_forgotten(self, table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        """A fight no request or stream asked for in FIGHT_IDLE seconds (0 here) is forgotten once another is
        asked for, with its views; asked for again, it answers as it did."""
        from omen_server import app as server_app

        monkeypatch.setattr(server_app, "FIGHT_IDLE", 0.0)
        fights = table.client.app.state.fights
        first = table.create("one")["gm_token"]
        before = table.client.get("/fights/one/state", headers=table.auth(first)).json()
        second = table.create("two")["gm_token"]
        assert table.client.get("/fights/two/state", headers=table.auth(second)).status_code == 200
        assert "one" not in fights._loaded and "one" not in fights._views and "two" in fights._loaded
        assert table.client.get("/fights/one/state", headers=table.auth(first)).json() == before

    def test_a_player_explains_nothing_of_a_gms_command_nor_its_secret_reason(self) -> None:
        """Alice plays Kael and Brin; the GM declares Kael's attack on Brin with its faces, then cancels it with a
        reason of the GM's: no seq Alice asks explains the GM's faces or tells the reason (a command's seq
        explained its action, with the command's words, and an action's explanation told the GM's reason for
        cancelling it: a reviewer); her own command's seq she may explain, as before."""
        table = Table()
        with table.client:
            table.create("f1", dice="manual", names=("kael", "brin", "vesh"))
            made = table.client.post("/fights/f1/seats", headers=table.auth(), json={
                "kind": "player", "name": "Alice", "combatants": ["kael", "brin"]})
            alice = made.json()["token"]
            for command in ({"command": "roll_initiative", "dice": [6, 1, 2]},
                            {"command": "declare_attack", "attacker": "kael", "target": "brin", "unarmed": True,
                             "dice": [3, 3, 2]},
                            {"command": "cancel_action", "reason": "GM SECRET REASON"}):
                done = table.command(command, fight_id="f1")
                assert done.status_code == 201, done.text
            events = table.client.get("/fights/f1/events?after=0&limit=500", headers=table.auth()).json()["events"]
            for event in events:
                answer = table.client.get(f"/fights/f1/explain/{event['seq']}", headers=table.auth(alice))
                assert "GM SECRET" not in answer.text and "given by gm" not in answer.text, (event, answer.text)
            own = table.command({"command": "end_turn", "who": "kael"}, fight_id="f1", token=alice)
            assert own.status_code == 201, own.text
            mine = own.json()["events"][0]["seq"]
            assert table.client.get(f"/fights/f1/explain/{mine}", headers=table.auth(alice)).status_code == 200


class TestHead:
    PATHS = ("/", "/table/duel", "/sheets", "/static/table.js", "/fights", "/fights?limit=1", "/fights/duel/seats",
             "/fights/duel/seat", "/fights/duel/settings", "/fights/duel/state", "/fights/duel/options",
             "/fights/duel/events?limit=2", "/fights/duel/explain/1", "/fights/duel/verify", "/fights/duel/log",
             "/fights/duel/session", "/fights/duel/table", "/schema/openapi.json", "/fights/ghost/state",
             "/fights/duel/events?limit=0")

    @pytest.mark.parametrize("path", PATHS)
    def test_head_answers_as_get_without_a_body(self, table: Any, path: str) -> None:
        """RFC 9110 §9.3.2: HEAD on every GET resource (the GM's token; an unknown fight's 403 and a bad query's
        400 too) has GET's status and headers, Content-Length included, and no body; gzipped too (the same
        Content-Encoding and Content-Length as GET's)."""
        table.create()
        plain = {**table.auth(), "Accept-Encoding": "identity"}  # Content-Length then counts the body as read
        got = table.client.get(path, headers=plain)
        head = table.client.head(path, headers=plain)
        assert head.status_code == got.status_code and head.content == b""
        assert {k: v for k, v in head.headers.items() if k != "date"} == {
            k: v for k, v in got.headers.items() if k != "date"}
        assert int(head.headers["content-length"]) == len(got.content) > 0
        zipped = {**table.auth(), "Accept-Encoding": "gzip"}
        got, head = table.client.get(path, headers=zipped), table.client.head(path, headers=zipped)
        assert (head.status_code, head.content, head.headers.get("content-encoding"),
                head.headers["content-length"]) == (got.status_code, b"", got.headers.get("content-encoding"),
                                                    got.headers["content-length"])

    def test_no_cache_keeps_a_seats_answers(self, table: Any) -> None:
        """RFC 9111 §5.2.2.5: every answer but the table's static files (``no-cache``: kept, but asked again) says
        ``Cache-Control: no-store``, a refusal, a 404 and a POST's answer too: a seat's state, options and
        explanations are read with its token (only the table fragment said it: a tester)."""
        table.create()
        for path in self.PATHS:
            answer = table.client.get(path, headers=table.auth())
            wanted = "no-cache" if path.startswith("/static/") else "no-store"
            assert answer.headers.get("cache-control") == wanted, (path, answer.status_code, answer.headers)
        for answer in (table.client.get("/fights/duel/state"), table.client.get("/nowhere", headers=table.auth()),
                       table.client.post("/fights/duel/commands", headers=table.auth(), json={"command": {}})):
            assert answer.status_code >= 400 and answer.headers.get("cache-control") == "no-store", answer

    def test_head_on_the_stream_is_405_and_allow_lists_head_where_get_is(self, table: Any) -> None:
        """The live stream's GET never ends, so its HEAD is 405 (Allow: GET, OPTIONS); elsewhere OPTIONS and a
        405's Allow list HEAD beside GET, and a 405's detail says them."""
        table.create()
        refused = table.client.head("/fights/duel/stream", headers=table.auth())
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, OPTIONS"
        assert table.client.options("/fights/duel/state", headers=table.auth()).headers["allow"] == (
            "GET, HEAD, OPTIONS")
        put = table.client.put("/fights/duel/state", headers=table.auth())
        assert put.headers["allow"] == "GET, HEAD, OPTIONS"
        # its detail says what was refused and what the path takes (it said "Method Not Allowed": a client author)
        assert put.json()["detail"] == ("PUT is not taken at '/fights/duel/state': it takes GET, HEAD, OPTIONS (the "
                                        "Allow header says so too)")
        assert table.client.options("/fights", headers=table.auth()).headers["allow"] == "GET, HEAD, OPTIONS, POST"


class TestCreationToken:
    def test_creating_a_fight_needs_the_token_the_operator_set(self) -> None:
        """With a creation token, POST /fights without it or with another is 401 and stores nothing; with it,
        201; listing needs none."""
        table = Table(create_token="omen_create_secret")
        with table.client:
            body = {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]}
            for headers in ({}, {"Authorization": "Bearer omen_create_guess"},
                            {"Authorization": "Bearer omen_create_secre"}, {"Authorization": "Basic x"}):
                answer = table.client.post("/fights", json=body, headers=headers)
                assert answer.status_code == 401 and "creation token" in answer.json()["detail"]
            assert table.store.fights() == [] and table.keep.seats("duel") == []
            table.create()
            assert table.client.get("/fights").json()["fights"][0]["fight_id"] == "duel"

    def test_a_seats_token_does_not_create(self) -> None:
        """A GM's token is not the creation token."""
        table = Table(create_token="omen_create_secret")
        with table.client:
            table.create()
            answer = table.client.post("/fights", headers=table.auth(), json={"id": "other"})
            assert answer.status_code == 401

    def test_the_set_up_page_asks_for_the_token_when_the_server_needs_one(self) -> None:
        """The set-up page of a server with a creation token takes it from its link (the script) or asks for
        it; one without asks nothing."""
        with_token = Table(create_token="omen_create_secret")
        with with_token.client:
            page = with_token.client.get("/").text
        assert "data-needs-token" in page and 'id="setup-token"' in page and "omen_create_secret" not in page
        without = Table()
        with without.client:
            assert "data-needs-token" not in without.client.get("/").text


class TestFightsPaged:
    def test_get_fights_pages_in_id_order(self, table: Any) -> None:
        """GET /fights?after=&limit= gives every fight once, in id order, page after page; next_after None on the
        last."""
        for n in range(5):
            table.create(f"f{n}")
        seen, after = [], ""
        while after is not None:
            page = table.client.get(f"/fights?after={after}&limit=2").json()
            assert len(page["fights"]) <= 2
            seen += [f["fight_id"] for f in page["fights"]]
            after = page["next_after"]
        assert seen == [f"f{n}" for n in range(5)]
        assert table.client.get("/fights").json()["fights"][0]["head"]["seq"] == table.store.version("f0")

    @pytest.mark.parametrize("query", ["limit=0", f"limit={FIGHTS_PAGE + 1}", "after=" + "x" * 129])
    def test_bad_paging_is_400(self, table: Any, query: str) -> None:
        """A limit outside 1..100 or an after longer than an id is 400 naming the query parameter."""
        answer = table.client.get(f"/fights?{query}")
        assert answer.status_code == 400 and answer.json()["field"] == f"query.{query.split('=', maxsplit=1)[0]}"

    def test_the_set_up_page_lists_a_page_of_fights_and_links_the_next(self, table: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
        """The set-up page lists FIGHTS_PAGE fights (here 2) and a link to the next page, which lists the rest."""
        import omen_server.app as app_module

        monkeypatch.setattr(app_module.fights_page, "__defaults__", ("", 2))
        for n in range(3):
            table.create(f"f{n}")
        first = table.client.get("/").text
        assert "f0" in first and "f1" in first and "f2" not in first and 'href="/?after=f1"' in first
        second = table.client.get("/?after=f1").text
        assert "f2" in second and "f0" not in second and "More fights" not in second


class TestCompression:
    def test_a_large_answer_is_gzipped_for_a_client_that_accepts_it(self, table: Any) -> None:
        """The options of a 32-combatant set-up (about 1.7 MB of JSON) go gzipped to a client that accepts gzip
        (a browser, httpx): some 50 KB on the wire, the same JSON once inflated."""
        roster = [{**sheet("kael"), "id": f"k{i}", "side": "ab"[i % 2]} for i in range(MAX_COMBATANTS)]
        answer = table.client.post("/fights", json={"id": "big", "combatants": roster},
                                   headers={"Accept-Encoding": "gzip"})
        assert answer.headers["content-encoding"] == "gzip"
        assert int(answer.headers["content-length"]) * 10 < len(answer.content)
        options = as_json(Fight.load(table.store, "big").options())  # but the undo into the set-up (not offered)
        offers = [o for o in options["offers"] if o["command"] != "undo"]
        assert answer.json()["options"] == {**options, "offers": offers}


class TestSessionPage:
    def test_the_session_log_is_served_with_the_table_pages_policy_and_nosniff(self, table: Any) -> None:
        """GET /session carries the table page's Content-Security-Policy (its own inline style let in by its
        hash, nothing else), nosniff and no Referer; its Content-Type names its charset once."""
        table.create()
        answer = table.client.get("/fights/duel/session", headers=table.auth())
        policy = answer.headers["content-security-policy"]
        style = answer.text.split("<style>", 1)[1].split("</style>", 1)[0]
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert f"style-src 'self' 'sha256-{digest}'" in policy and "script-src 'self'" in policy
        assert "default-src 'none'" in policy and answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["content-type"] == "text/html; charset=utf-8"


#: The five attributes of a sheet in TOML, each d6 +0 (C1).
_ATTRIBUTES = "".join(f'{a} = {{ die = "d6", bonus = 0 }}\n' for a in ("STR", "AGI", "INT", "RES", "FCS"))


class TestContent:
    """``POST /content``: sheets and rulesets a GM wrote in TOML, read as ``omen run`` reads a file (docs/content.md),
    answered in JSON as ``POST /fights`` takes them."""

    def test_a_toml_sheet_is_answered_as_the_json_post_fights_takes(self) -> None:
        """Kael's sheet file, pasted, comes back as the sheet ``load_sheet`` reads from it; a fight made of it
        and Vesh's starts."""
        table = Table(create_token="tok")
        with table.client:
            text = (SHEETS / "kael.toml").read_text()
            answer = table.client.post("/content", headers={"Authorization": "Bearer tok"},
                                       json={"kind": "sheets", "text": text})
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"kind": "sheets", "sheets": [as_json(sheet("kael"))]}
            made = table.client.post("/fights", headers={"Authorization": "Bearer tok"},
                                     json={"combatants": [*answer.json()["sheets"], sheet("vesh")]})
            assert made.status_code == 201, made.text

    def test_several_sheets_are_combatants_tables(self) -> None:
        """Two sheets as ``[[combatants]]`` tables come back as two sheets, in order."""
        table = Table()
        with table.client:
            text = "".join(f'[[combatants]]\nid = "{who}"\nname = "{who.title()}"\nside = "{side}"\nhp = {hp}\n'
                           "[combatants.attributes]\n" + _ATTRIBUTES
                           for who, side, hp in (("kael", "wardens", 24), ("vesh", "raiders", 16)))
            answer = table.client.post("/content", json={"kind": "sheets", "text": text})
            assert answer.status_code == 200, answer.text
            assert [(s["id"], s["hp"]) for s in answer.json()["sheets"]] == [("kael", 24), ("vesh", 16)]

    def test_sheet_files_pasted_one_after_another_are_read_one_by_one(self) -> None:
        """Three sheet files pasted one after another, each under its own ``[[combatants]]`` line as the page
        invites (their ``[attributes]`` tables then clash as TOML: a GM was refused, "written twice"), come back
        as three sheets; an error in the second names its line in the paste and its field."""
        table = Table()
        with table.client:
            files = [f'[[combatants]]\nid = "{who}"\nname = "{who.title()}"\nside = "x"\nhp = 5\n[attributes]\n'
                     + _ATTRIBUTES for who in ("ana", "bo", "cy")]
            answer = table.client.post("/content", json={"kind": "sheets", "text": "# the party\n" + "".join(files)})
            assert answer.status_code == 200, answer.text
            assert [s["id"] for s in answer.json()["sheets"]] == ["ana", "bo", "cy"]
            bad = "".join(files).replace('hp = 5', 'hp = 0').replace('hp = 0', 'hp = 5', 1)
            answer = table.client.post("/content", json={"kind": "sheets", "text": bad})
            line = 1 + len(files[0].splitlines()) + 4
            assert answer.status_code == 422 and answer.json()["detail"] == \
                f"the pasted sheets:{line}: Expected `int` >= 1 (at $.hp)", answer.text
            windows = "# the party\r\n" + "".join(files).replace("\n", "\r\n")  # saved on Windows (a reviewer)
            answer = table.client.post("/content", json={"kind": "sheets", "text": windows})
            assert answer.status_code == 200 and len(answer.json()["sheets"]) == 3, answer.text
            many = "".join(files[0].replace('"ana"', f'"a{n}"') for n in range(40))  # past a roster: not read so
            answer = table.client.post("/content", json={"kind": "sheets", "text": many})
            assert answer.status_code == 422 and "twice" in answer.json()["detail"], answer.text

    def test_an_ability_library_writes_out_the_abilities_the_sheets_list(self) -> None:
        """With ``abilities`` (a library, as a scenario's ``abilities`` file), each ability a pasted sheet lists by
        id is written out in the sheet (a GM's served fight had no way to take a library: docs/abilities.md), and a
        fight made of it starts; an error in the library is 422 at ``$.abilities`` naming the library's line."""
        library = ('[abilities.hex_guard]\nname = "Hex Guard"\nuse = "trigger"\n'
                   'trigger = { moment = "attack.declared", owner = "target" }\ncost = { will = 1 }\n'
                   'effects = [{ kind = "modifier", total = "defense", value = 1 }]\n')
        text = 'id = "ana"\nname = "Ana"\nside = "x"\nhp = 5\nabilities = ["hex_guard"]\n[attributes]\n' + _ATTRIBUTES
        table = Table()
        with table.client:
            answer = table.client.post("/content", json={"kind": "sheets", "text": text, "abilities": library})
            assert answer.status_code == 200, answer.text
            [ana] = answer.json()["sheets"]
            assert [a["name"] for a in ana["abilities"]] == ["Hex Guard"]
            made = table.client.post("/fights", json={"combatants": [ana, sheet("vesh")]})
            assert made.status_code == 201, made.text
            answer = table.client.post("/content", json={"kind": "sheets", "text": text, "abilities_name": "lib.toml",
                                                         "abilities": library.replace("value = 1", "value = x")})
            assert answer.status_code == 422 and answer.json()["field"] == "$.abilities", answer.text
            assert answer.json()["detail"].startswith("lib.toml:6: "), answer.text

    def test_a_ruleset_is_read_whole(self) -> None:
        """The shipped core ruleset, pasted as TOML, comes back equal to the ruleset omen loads."""
        from omen_core.content import CORE_RULESET

        table = Table()
        with table.client:
            text = (ROOT / "omen_core" / "data" / "core.toml").read_text()
            answer = table.client.post("/content", json={"kind": "ruleset", "text": text})
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"kind": "ruleset", "ruleset": as_json(CORE_RULESET)}

    @pytest.mark.parametrize(("kind", "text", "detail"), [
        ("sheets", 'id = "kael"\nname = "K"\nside = "a"\nhp = 0\n',
         "the pasted sheets:4: Expected `int` >= 1 (at $.hp)"),
        ("sheets", 'id = "kael"\nname = "K"\nside = "a"\nhp = 5\n[attributes]\nSTR = { die = "d8", bonsu = 2 }\n',
         "the pasted sheets:6: did you mean `bonus`? (this table takes: die, bonus): Object contains unknown field "
         "`bonsu` (at $.attributes.STR.bonsu)"),
        ("sheets", '[[combatants]]\nid = "a"\nname = "A"\nside = "x"\nhp = 3\n[combatants.attributes]\n'
                   + _ATTRIBUTES + '[[combatants]]\nid = "b"\nname = "B"\nside = "y"\nhp = "lots"\n',
         "the pasted sheets:16: Expected `int`, got `str` (at $.combatants[1].hp)"),
        ("sheets", 'id = "kael"\nname = "K\n', None),
        ("ruleset", "[economy]\nactions = -1\n", None),
    ])
    def test_bad_content_is_a_422_naming_its_line_and_field(self, kind: str, text: str, detail: str | None) -> None:
        """A sheet or ruleset that does not validate is 422 ``invalid-content`` at ``$.text``, its detail naming
        the line and the field as ``omen run`` names them in a file; nothing is stored."""
        table = Table()
        with table.client:
            named = "" if detail else "x.toml"
            answer = table.client.post("/content", json={"kind": kind, "text": text, "name": named})
            problem = answer.json()
            assert answer.status_code == 422 and problem["type"] == "/problems/invalid-content", problem
            assert problem["field"] == "$.text"
            if detail is not None:
                assert problem["detail"] == detail
            else:
                assert problem["detail"].startswith("x.toml:2: ") and " (at $" in problem["detail"], problem
            assert table.store.fights() == []

    def test_reading_content_needs_the_creation_token_the_server_set(self) -> None:
        """With a creation token, POST /content without it is 401 (as POST /fights is)."""
        table = Table(create_token="tok")
        with table.client:
            answer = table.client.post("/content", json={"kind": "sheets", "text": 'id = "a"'})
            assert answer.status_code == 401 and "creation token" in answer.json()["detail"]

    def test_a_request_of_another_shape_is_a_400(self) -> None:
        """An unknown kind or a field the request has not is 400 at its path."""
        table = Table()
        with table.client:
            answer = table.client.post("/content", json={"kind": "scenario", "text": ""})
            assert answer.status_code == 400 and answer.json()["field"] == "$.kind", answer.text
            answer = table.client.post("/content", json={"kind": "sheets", "text": "", "toml": True})
            assert answer.status_code == 400 and answer.json()["field"] == "$.toml", answer.text
