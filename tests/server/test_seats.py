"""Seats over HTTP: the GM makes player and spectator seats; each commands only its own and sees only its view."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core import Fight
from omen_replay.verify import Head, verify_lines
from omen_server.app import OptionsView, _news
from omen_server.keep import Seat, token_hash
from tests.server.test_app import Table, lines, sheet


def _marked() -> list[dict[str, Any]]:
    """The Ember Ford four, with GM-only values marked: ``zq`` in every secret string, odd numbers. Vesh is a
    visible raider whose sheet is the GM's; Skarn is hidden by the GM. The numbers are far apart, so that no total
    rolled with one (a check of the marked skill) can be another."""
    vesh = sheet("vesh")
    vesh["weapons"][0].update(id="zqknife", name="Zq marked knife")
    vesh["wielding"] = ["zqknife"]
    vesh["armor"]["name"] = "Zq marked leathers"
    vesh["skills"]["Zqlore"] = {"attribute": "INT", "level": 987001}
    vesh["will"] = 555001
    skarn = sheet("skarn")
    skarn.update(id="zqskarn", name="Zq hidden Skarn", hp=666001)
    for weapon in skarn["weapons"]:
        weapon.update(id=f"zq{weapon['id']}", name=f"Zq {weapon['name']}")
    skarn.pop("wielding", None)
    return [sheet("kael"), sheet("brin"), vesh, skarn]


NOTES = {"fight": "Zq the GM's note on the fight", "vesh": "Zq Vesh flees at half HP"}
NUMBERS = [re.compile(rf"(?<![0-9a-f]){n}(?![0-9a-f])".encode()) for n in (987001, 555001, 666001)]


def leaks(body: bytes, typed: bytes = b"") -> list[str]:
    """The GM-only values found in bytes served to a player or spectator, each with the bytes around it; a marked
    value the seat typed itself (echoed in the refusal of its own command) is no leak."""
    echoed = {m.group() for m in re.finditer(rb"zq\w*", typed.lower())}
    at = [m.start() for m in re.finditer(rb"zq\w*", body.lower()) if m.group() not in echoed]
    at += [m.start() for n in NUMBERS for m in n.finditer(body)]
    return [body[max(0, i - 300):i + 60].decode(errors="replace") for i in at]


class Seats:
    """A marked fight over the API, with Alice playing Kael, Bob playing Brin, and a spectator."""

    def __init__(self, table: Table, dice: str = "seeded", hp: str = "banded"):
        self.table = table
        table.create("ford", dice=dice, names=(), combatants=_marked(), hidden=["zqskarn"], notes=NOTES,
                     hp_display=hp)
        self.tokens = {"alice": self.seat("player", "Alice", ["kael"]), "bob": self.seat("player", "Bob", ["brin"]),
                       "watcher": self.seat("spectator", "Watcher", [])}
        self.own = {"alice": {"kael"}, "bob": {"brin"}, "watcher": set()}
        self.served: list[tuple[str, str, bytes]] = []  # (seat, what, bytes) for every non-GM answer

    def seat(self, kind: str, name: str, combatants: list[str]) -> str:
        """POST a seat as the GM; its token."""
        answer = self.table.client.post("/fights/ford/seats", headers=self.table.auth(),
                                        json={"kind": kind, "name": name, "combatants": combatants})
        assert answer.status_code == 201, answer.text
        return str(answer.json()["token"])

    def get(self, who: str, path: str) -> Any:
        """GET as a seat, keeping the bytes served."""
        answer = self.table.client.get(f"/fights/ford{path}", headers=self.table.auth(self.tokens[who]))
        self.served.append((who, f"GET {path}", answer.content))
        return answer

    def post(self, who: str, body: Any) -> Any:
        """POST a command as a seat (or the GM: who == 'gm'), keeping the bytes a non-GM seat is served."""
        token = self.table.gm if who == "gm" else self.tokens[who]
        answer = self.table.client.post("/fights/ford/commands", headers=self.table.auth(token), json=body)
        if who != "gm":
            self.served.append((who, f"POST {body}", answer.content))
        return answer

    def look(self) -> None:
        """Every seat reads every view: state, options, all events, verify, the stream's messages, an explanation."""
        fights = self.table.client.app.state.fights
        for who in self.tokens:
            self.get(who, "/state")
            self.get(who, "/options")
            self.get(who, "/events?limit=500")
            self.get(who, "/verify")
            head = self.table.store.version("ford")
            self.get(who, f"/explain/{head}")
            seat = fights.keep.seat(self.tokens[who])
            batch, view = streamed(fights, "ford", seat)
            self.served.append((who, "stream", b"".join(msgspec.json.encode(m) for m in [*batch, view])))

    def owner(self, actor: str | None) -> str:
        """The seat that plays ``actor`` (the GM for the rest)."""
        return next((who for who, mine in self.own.items() if actor in mine), "gm")



def streamed(fights: Any, fight_id: str, seat: Seat) -> tuple[list[Any], OptionsView | None]:
    """What the live stream sends ``seat`` from the first event to the head: its looks (``_news``), each from the
    last event the one before sent, until one reaches the head; every message, and the view at the head."""
    items: list[Any] = []
    after, view = 0, None
    while True:
        batch, view = _news(fights, fight_id, seat, after, -1)
        items += batch
        after = max((m.seq for m in batch if not isinstance(m, OptionsView)), default=after)
        if view is None or after >= view.head.seq:
            return items, view


def _alice_beside_hidden_skarn(table: Table) -> str:
    """A manual fight of Kael, Vesh and Skarn, Skarn hidden by the GM; Alice's seat (Kael's): its token."""
    table.create(dice="manual", names=("kael", "vesh", "skarn"), hidden=["skarn"])
    token: str = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    return token


def _interrupted(table: Table, hidden: bool, attack: bool = True) -> str:
    """Kael's attack on Vesh waits at its Interrupt window (C24) for Vesh and, ``hidden``, for Skarn, hidden by the
    GM and engaged with Kael (its own attack on Kael missed first); without, Skarn stays out of Kael's reach.
    Alice's token (she plays Kael)."""
    alice = _alice_beside_hidden_skarn(table)
    assert table.command({"command": "roll_initiative", "dice": [2, 1, 6]}).status_code == 201  # Skarn first
    if hidden:
        assert table.command({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                              "dice": [1, 1, 1]}).status_code == 201
    for who in ("skarn", "vesh"):
        assert table.command({"command": "end_turn", "who": who}).status_code == 201
    if attack:
        assert table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh",
                              "weapon": "longsword"}, token=alice).status_code == 201
    return alice


def test_faces_given_past_a_window_name_no_hidden_answerer() -> None:
    """Found by a tester: Alice's attack typed with its hit faces stops first at the Interrupt window (C24), so the
    faces are surplus (422, nothing written); the refusal said "where vesh answer" with hidden Skarn in reach too
    (the verb counted Skarn) and "where (hidden) answers" once Vesh could not. It reads as with no Skarn in reach,
    and, with no answerer she sees, that the attack stops at a decision she is not shown; the GM's names Skarn."""
    typed = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
             "dice": [8, 6]}
    refused: dict[bool, bytes] = {}
    for hidden in (True, False):
        table = Table()
        with table.client:
            alice = _interrupted(table, hidden, attack=False)
            answer = table.command(typed, token=alice)
            assert answer.status_code == 422 and answer.json()["type"] == "/problems/surplus-faces", answer.text
            refused[hidden] = bytes(answer.content)
            if hidden:
                assert "where skarn, vesh answer with react or pass_reaction" in table.command(typed).json()["detail"]
                assert table.command({"command": "apply_condition", "who": "vesh", "condition": "Incapacitated"}
                                     ).status_code == 201
                alone = table.command(typed, token=alice).json()["detail"]
                assert "it stops first at a decision this seat is not shown" in alone and "hidden" not in alone
    assert refused[True] == refused[False]
    assert b"where vesh answers with react or pass_reaction" in refused[False]


def test_a_players_refusal_names_no_hidden_responder() -> None:
    """Found by testers: the hidden Skarn (engaged with Kael) and Vesh may Interrupt Kael's attack (C24); Alice's
    end_turn and pass_reaction meanwhile were refused naming the step ("the action is at 'reaction window open'")
    and the responders, "(hidden)" among them, which told her a hidden enemy may answer. Every command of hers is
    now refused from what her seat is shown of the wait: the same bytes as with no Skarn in reach; once Vesh passed
    and only Skarn is left (her options' waiting is null), that the fight waits on a step she is not shown. The
    GM's refusal still says the step and names Skarn."""
    refusals: dict[bool, list[bytes]] = {}
    for hidden in (True, False):
        table = Table()
        with table.client:
            alice = _interrupted(table, hidden)
            said = [table.command(c, token=alice) for c in ({"command": "end_turn", "who": "kael"},
                                                             {"command": "pass_reaction", "who": "kael"})]
            assert all(a.status_code == 422 for a in said)
            refusals[hidden] = [bytes(a.content) for a in said]
            if hidden:
                assert said[0].json()["detail"] == (
                    "[C24] the fight waits for vesh to answer (Interrupt, C24) with react or pass_reaction; a command "
                    "of this seat's is taken once that is settled")
                assert table.command({"command": "pass_reaction", "who": "vesh"}).status_code == 201
                options = table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"]
                assert options["waiting"] is None
                left = table.command({"command": "end_turn", "who": "kael"}, token=alice).json()
                assert left["detail"] == ("[lifecycle] the fight waits on a step this seat is not shown; a command "
                                          "of this seat's is taken once the GM or another seat has settled it")
                assert "by skarn (Interrupt, C24)" in table.command({"command": "end_turn", "who": "kael"}
                                                                    ).json()["detail"]
    assert refusals[True] == refusals[False]


def test_a_players_refusal_of_a_name_it_may_not_give_is_true_and_the_same_for_hidden_and_nobody() -> None:
    """A tester's player, who had watched Vesh join before the GM hid it, was told "no combatant 'vesh' in this
    fight (joined: kael)": the same bytes as for a name nobody has (as they must be), but false. Now both read
    "no combatant ... that this seat can name (it can name: ...)", byte for byte alike but for the name typed; the
    GM, who may name anyone, is still told the fight's roster."""
    table = Table()
    with table.client:
        table.create(names=("kael", "vesh", "skarn"))
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        hide = table.client.post("/fights/duel/settings", headers=table.auth(), json={"hide": ["vesh"]})
        assert hide.status_code == 200, hide.text

        def refusal(target: str, token: str) -> bytes:
            answer = table.command({"command": "declare_attack", "attacker": "kael", "target": target,
                                    "unarmed": True}, token=token)
            assert answer.status_code == 422, answer.text
            return bytes(answer.content)

        hidden, nobody = refusal("vesh", alice), refusal("vess", alice)
        assert hidden.replace(b"'vesh'", b"'vess'") == nobody
        assert msgspec.json.decode(hidden)["detail"] == (
            "[setup] no combatant 'vesh' that this seat can name (it can name: kael, skarn) (at $.command.target)")
        assert msgspec.json.decode(refusal("vess", table.gm))["detail"] == (
            "[setup] no combatant 'vess' in this fight (joined: kael, vesh, skarn) (at $.command.target)")


def test_seed_revealed_in_the_state_is_about_the_seed_rolled_with_now() -> None:
    """docs/server.md, "Seats and what each sees" (a tester's find: it promised seed_revealed: true after any
    reveal): a reveal mid-fight appends seed_revealed then seed_committed (C42: the fight goes on under a fresh,
    unrevealed seed), so every seat's state and /verify say false; the reveal at the end makes both true."""
    table = Table()
    with table.client:
        table.create()
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative"}).status_code == 201

        def revealed() -> list[tuple[bool, bool]]:
            return [(table.client.get("/fights/duel/state", headers=table.auth(token)).json()["seed_revealed"],
                     table.client.get("/fights/duel/verify", headers=table.auth(token)).json()["seed_revealed"])
                    for token in (table.gm, alice)]

        mid = table.command({"command": "reveal_seed"})
        assert [e["type"] for e in mid.json()["events"]] == ["command_issued", "seed_revealed", "seed_committed"]
        assert revealed() == [(False, False), (False, False)]
        assert table.command({"command": "end_fight"}).status_code == 201
        assert table.command({"command": "reveal_seed"}).status_code == 201
        assert revealed() == [(True, True), (True, True)]


def test_a_refusal_names_no_ability_of_a_sheet_the_seat_does_not_play() -> None:
    """Kael's unarmed 1 + 1 misses Vesh's 6 and Vesh's Riposte opens (C38): Alice's commands refused meanwhile
    (ending Kael's turn, answering the decision for Kael) do not name Riposte, which is Vesh's sheet (GM-only:
    docs/server.md), neither by name nor by id, save what she typed herself; the GM's refusal names it; once the GM
    makes "Riposte" public, so does Alice's."""
    from tests.sheets import sheet as plain

    table = Table()
    with table.client:
        vesh = msgspec.structs.replace(plain("vesh", side="raiders"), abilities=("riposte",))
        table.create(dice="manual", names=(), combatants=[msgspec.to_builtins(plain("kael")),
                                                         msgspec.to_builtins(vesh)])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative", "dice": [1, 6]}).status_code == 201  # Vesh first
        assert table.command({"command": "disengage", "who": "vesh"}).status_code == 201  # 1 Bonus Action left:
        assert table.command({"command": "end_turn", "who": "vesh"}).status_code == 201  # no Interrupt (C24)
        attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "unarmed": True, "dice": [1, 1]}
        staged = table.command(attack, token=alice, stage=True).json()  # Vesh's RES die is the GM's to type (C29)
        given = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": staged["id"], "dice": [6]})
        assert given.json()["options"]["waiting"]["who"] == ["vesh"]
        end = {"command": "end_turn", "who": "kael"}
        answer = {"command": "answer_decision", "who": "kael", "decision": "riposte", "choice": "use"}
        said = [table.command(body, token=alice).json()["detail"] for body in (end, answer)]
        assert said == [
            "[C37] the fight waits for vesh to answer (a decision, C37) with answer_decision; a command of this seat's "
            "is taken once that is settled",
            "[C37] the open decision point is vesh's to answer, not kael's"]
        for guess in ("counterspell", "nothing_at_all"):  # the right id and any other: the same bytes (a tester's
            wrong = table.command({**answer, "decision": guess}, token=alice)  # find: the engine checked the id
            assert wrong.content == table.command(answer, token=alice).content  # first, telling a right guess)
        assert "Riposte, C37" in table.command(end).json()["detail"]
        assert table.client.post("/fights/duel/settings", headers=table.auth(),
                                 json={"reveal_effects": ["Riposte"]}).status_code == 200
        assert table.command(answer, token=alice).json()["detail"] == (
            "[C37] the fight waits for vesh to answer (Riposte, C37) with answer_decision; a command of this seat's is "
            "taken once that is settled")


def test_a_players_key_is_looked_for_among_the_commands_it_is_shown() -> None:
    """The GM's check of the hidden Skarn holds key ``k``; Alice's end_turn under ``k`` is done (201) as under any
    new key, and the log then records ``k`` twice: each seat's retry finds its own command. Alice's retry from
    another token (her seat reissued: the keep's answers are per token) is 409 done at her own seq, from the log; the
    GM's other command under ``k`` is 422 and its check's retry the first answer (the GM's token's, in the keep)."""
    table = Table()
    with table.client:
        table.create(dice="manual", names=("kael", "vesh", "skarn"), hidden=["skarn"])
        made = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()
        check = table.command({"command": "static_check", "check": {"who": "skarn", "attribute": "AGI"},
                               "difficulty": 10, "dice": [4], "idempotency_key": "k"})
        assert check.status_code == 201, check.text
        assert table.command({"command": "roll_initiative", "dice": [6, 1, 1]}).status_code == 201  # Kael first
        end = {"command": "end_turn", "who": "kael", "idempotency_key": "k"}
        done = table.command(end, token=made["token"])
        assert done.status_code == 201, done.text
        her_seq = done.json()["events"][0]["seq"]
        assert done.json()["events"][0]["event"]["command"] == {"command": "end_turn", "who": "kael",
                                                                "idempotency_key": "k"}
        assert table.command(end, token=made["token"]).content == done.content  # the keep's first answer
        again = table.client.post(f"/fights/duel/seats/{made['id']}/reissue", headers=table.auth()).json()["token"]
        retried = table.command(end, token=again)
        assert retried.status_code == 409 and f"was done at seq {her_seq} " in retried.json()["detail"]
        taken = table.command({"command": "end_turn", "who": "vesh", "idempotency_key": "k"})
        assert taken.status_code == 422 and taken.json()["type"] == "/problems/idempotency-key-reused"
        assert taken.json()["detail"] == (  # the GM's keep
            "the command's idempotency_key 'k' was first sent with another body: a retry sends the same request "
            "again, every field as it was (the command, its expected_version and stage too); another request takes a "
            "new key (at $.command.idempotency_key)")
        assert table.command({"command": "static_check", "check": {"who": "skarn", "attribute": "AGI"},
                              "difficulty": 10, "dice": [4], "idempotency_key": "k"}).content == check.content


def test_a_players_guess_of_a_hidden_combatants_decision_is_refused_alike_right_or_wrong() -> None:
    """A tester's find: while the hidden Skarn's Trip waits on him (C37, C38; his maul hit Kael), Alice's
    answer_decision for Kael naming ``trip`` was refused "(hidden) is (hidden)'s to answer, not kael's" and one
    naming anything else "the open decision point is '(hidden)', not 'riposte'": a right guess of the hidden one's
    ability was confirmed. Every guess now gets the same bytes, which name neither; the GM is told the engine's
    words."""
    skarn = {**sheet("skarn"), "abilities": ["trip"]}
    table = Table()
    with table.client:
        table.create(dice="manual", names=(), combatants=[sheet("kael"), sheet("vesh"), skarn], hidden=["skarn"])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative", "dice": [1, 1, 6]}).status_code == 201  # Skarn first
        assert table.command({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                              "dice": [9, 3, 1]}).status_code == 201
        opened = table.command({"command": "answer_active_defense", "defender": "kael"})
        assert opened.json()["options"]["waiting"]["kind"] == "trip", opened.text
        said = {guess: table.command({"command": "answer_decision", "decision": guess, "who": "kael",
                                      "choice": "use"}, token=alice) for guess in ("trip", "riposte", "nothing")}
        assert {answer.status_code for answer in said.values()} == {422}
        assert said["trip"].content == said["riposte"].content == said["nothing"].content
        assert said["trip"].json()["detail"] == "[C37] the open decision point is (hidden)'s to answer, not kael's"
        gm = table.command({"command": "answer_decision", "decision": "riposte", "who": "skarn", "choice": "use"})
        assert gm.json()["detail"] == "[C37] the open decision point is 'trip', not 'riposte'"


@pytest.fixture
def seats() -> Any:
    """The marked fight, its client open."""
    table = Table()
    with table.client:
        yield Seats(table)


class TestSeats:
    def test_the_gm_makes_seats_whose_tokens_are_kept_hashed(self, seats: Any) -> None:
        """A seat's token is shown once; the keep holds its hash; GET seats lists the seats without tokens."""
        listed = seats.table.client.get("/fights/ford/seats", headers=seats.table.auth()).json()
        assert [(s["kind"], s["name"], s["combatants"]) for s in listed] == [
            ("gm", "", []), ("player", "Alice", ["kael"]), ("player", "Bob", ["brin"]),
            ("spectator", "Watcher", [])]
        assert seats.table.keep.seat(seats.tokens["alice"]) == Seat("ford", "player", "Alice", ("kael",))
        rows = seats.table.keep._db.execute("select token_hash from seats").fetchall()
        assert (token_hash(seats.tokens["alice"]),) in rows
        assert all(seats.tokens["alice"] not in str(row) for row in rows)
        assert seats.get("alice", "/seat").json() == {"kind": "player", "name": "Alice", "combatants": ["kael"],
                                                     "physical": []}

    @pytest.mark.parametrize("body,status,field", [
        ({"kind": "player", "combatants": ["nobody"]}, 422, "$.combatants[0]"),
        ({"kind": "player"}, 422, "$.combatants"),
        ({"kind": "spectator", "combatants": ["kael"]}, 422, "$.combatants"),
        ({"kind": "gm"}, 400, "$.kind"),
    ])
    def test_a_bad_seat_is_refused_naming_the_field(self, seats: Any, body: dict[str, list[str] | str] | dict[str,
                                                    str], status: int, field: str) -> None:
        """A second GM does not decode (400); a seat for nobody, a player with no combatant, a spectator with one
        are well formed but cannot be (422): each names the field."""
        answer = seats.table.client.post("/fights/ford/seats", headers=seats.table.auth(), json=body)
        assert answer.status_code == status and answer.json()["field"] == field, answer.text

    def test_only_the_gm_makes_seats_and_changes_settings(self, seats: Any) -> None:
        """A player's token may not make seats, list them, or change the table settings: 403 saying why."""
        auth = seats.table.auth(seats.tokens["alice"])
        for answer in (seats.table.client.post("/fights/ford/seats", headers=auth, json={"kind": "spectator"}),
                       seats.table.client.get("/fights/ford/seats", headers=auth),
                       seats.table.client.post("/fights/ford/settings", headers=auth, json={"publish": True})):
            assert answer.status_code == 403 and "only the GM" in answer.json()["detail"]

    def test_a_player_commands_its_own_combatants_only(self, seats: Any) -> None:
        """Alice may not command Brin, roll initiative (the GM's) or undo; a spectator nothing: 403, nothing
        appended (the GM-command refusal lists every command a player gives). Her own command is recorded as
        hers."""
        before = lines(seats.table.store, "ford")
        for who, command, said in [("alice", {"command": "end_turn", "who": "brin"}, "not 'brin'"),
                                   ("alice", {"command": "roll_initiative"}, "the GM's command"),
                                   ("alice", {"command": "undo"}, "the GM's command"),
                                   ("watcher", {"command": "end_turn", "who": "kael"}, "gives no commands")]:
            answer = seats.post(who, {"command": command})
            assert answer.status_code == 403 and said in answer.json()["detail"], answer.text
        answer = seats.post("alice", {"command": {"command": "undo"}})  # the refusal lists what a player gives
        assert all(name in answer.json()["detail"] for name in ("declare_attack", "answer_decision", "use_ability"))
        assert lines(seats.table.store, "ford") == before
        assert seats.post("gm", {"command": {"command": "roll_initiative"}}).status_code == 201
        turn = seats.get("alice", "/state").json()["turn"]
        player = seats.owner(turn)
        if player != "gm":
            answer = seats.post(player, {"command": {"command": "end_turn", "who": turn}})
            assert answer.status_code == 201, answer.text
            issued = [e for e in answer.json()["events"] if e["type"] == "command_issued"]
            assert issued[0]["event"]["by"] == f"player:{player.title()}"

    def test_a_players_claims_and_damage_modifiers_are_the_gms_call(self) -> None:
        """combat.txt §Special Combat Conditions: high ground is the "GM's call on what qualifies" (C27), Encircled
        too (C26), and damage modifiers and consequences are the GM's word: Alice's attack for Kael claiming high
        ground is 403 at $.command.situational, one adding +100 damage 403 at $.command.damage_modifiers, nothing
        appended (a tester's player gave itself +2 and a crit); the same attack without them is hers to give, and
        the GM may give it with the claim."""
        from tests.server.test_table import _seat

        table = Table()
        with table.client:
            table.create(dice="manual", names=(), combatants=[sheet("kael"), sheet("skarn")])
            alice = _seat(table, "Alice", "kael")
            assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
            attack = {"command": "declare_attack", "attacker": "kael", "target": "skarn"}
            before = lines(table.store, "duel")
            for extra, field in (({"situational": {"high_ground": True}}, "situational"),
                                 ({"situational": {"encircled": {"attackers": 2, "defenders": 1}}}, "situational"),
                                 ({"damage_modifiers": [{"source": "I say so", "value": 100}]}, "damage_modifiers")):
                refused = table.command({**attack, **extra, "dice": [6, 6]}, token=alice)
                assert refused.status_code == 403 and refused.json()["field"] == f"$.command.{field}", refused.text
                assert "the GM's call" in refused.json()["detail"]
            assert lines(table.store, "duel") == before
            given = table.command({**attack, "situational": {"high_ground": True}, "dice": [6, 6, 1]})
            assert given.status_code == 201, given.text
            declared = next(e for e in given.json()["events"] if e["type"] == "attack_declared")
            assert declared["event"]["situational"] == {"high_ground": True}

    def test_a_recorded_idempotency_key_tells_a_player_nothing_of_a_command_it_may_not_see(self, seats: Any
                                                                                          ) -> None:
        """The GM gives Kael's attack on the hidden Skarn under idempotency key ``k-1``; Alice (who plays Kael)
        sending that very command under that key is refused exactly as the same command naming nobody: her seat's
        checks (a name it does not see) come before the log is searched for the key, so the answer does not confirm
        her guess (409 ``done at seq N``) nor tell the key's seq and command (422 ``idempotency-key-reused``)."""
        attack = {"command": "declare_attack", "attacker": "kael", "target": "zqskarn", "weapon": "longsword",
                  "idempotency_key": "k-1"}
        assert seats.post("gm", {"command": attack}).status_code == 201
        before = lines(seats.table.store, "ford")
        guessed = seats.post("alice", {"command": attack})
        nobody = seats.post("alice", {"command": {**attack, "target": "zqnobody"}})
        assert guessed.status_code == nobody.status_code == 422, guessed.text
        assert guessed.json()["type"] == nobody.json()["type"] == "/problems/rule-violation"
        assert guessed.json()["detail"].replace("zqskarn", "zqnobody") == nobody.json()["detail"]
        assert lines(seats.table.store, "ford") == before

    def test_a_key_the_gm_gave_a_hidden_command_is_to_a_player_a_key_not_used(self, seats: Any) -> None:
        """The GM checks the hidden Skarn's Stealth under key ``gm-key-1``; Alice sending her own end_turn under
        that key before the rounds is answered byte for byte as under a key never used (403: a player acts from
        round 1); it was 422 ``idempotency-key-reused``, which confirmed her guess of the GM's key (a tester's
        find)."""
        check = {"command": "static_check", "check": {"who": "zqskarn", "attribute": "AGI"}, "difficulty": 10,
                 "idempotency_key": "gm-key-1"}
        assert seats.post("gm", {"command": check}).status_code == 201
        end = {"command": "end_turn", "who": "kael"}
        taken = seats.post("alice", {"command": {**end, "idempotency_key": "gm-key-1"}})
        fresh = seats.post("alice", {"command": {**end, "idempotency_key": "never-used"}})
        assert taken.status_code == fresh.status_code == 403, taken.text
        assert taken.content == fresh.content

    def test_verify_counts_seeded_dice_for_the_gm_only_until_the_seed_is_revealed(self, seats: Any) -> None:
        """The seeded dice of a fight with a hidden combatant (its initiative die among them: four at least) are
        counted to the GM; to a player or spectator the count is left out until every seed the fight rolled with is
        revealed (a reveal in a fight that goes on commits to a fresh seed, C42: its dice are not counted to them
        either), then it is every seat's, the GM's number."""
        assert seats.post("gm", {"command": {"command": "roll_initiative"}}).status_code == 201
        gm = seats.table.client.get("/fights/ford/verify", headers=seats.table.auth()).json()
        assert gm["seeded_dice"] >= 4 and gm["seed_revealed"] is False  # one each, and a roll-off's on a tie (C19)
        for who in seats.tokens:
            seen = seats.get(who, "/verify").json()
            assert "seeded_dice" not in seen and seen["events"] == gm["events"], seen
        assert seats.post("gm", {"command": {"command": "reveal_seed"}}).status_code == 201  # a fresh seed, C42
        assert "seeded_dice" not in seats.get("alice", "/verify").json()
        assert seats.post("gm", {"command": {"command": "end_fight", "note": "over"}}).status_code == 201
        assert seats.post("gm", {"command": {"command": "reveal_seed"}}).status_code == 201
        gm = seats.table.client.get("/fights/ford/verify", headers=seats.table.auth()).json()
        for who in seats.tokens:
            seen = seats.get(who, "/verify").json()
            assert seen["seeded_dice"] == gm["seeded_dice"] >= 4 and seen["seed_revealed"] is True, seen

    def test_each_seat_sees_the_table_as_its_settings_say(self, seats: Any) -> None:
        """Alice sees Kael whole, Vesh banded, Skarn not at all; the GM sees Skarn marked hidden, and the settings."""
        mine = {c["id"]: c for c in seats.get("alice", "/state").json()["combatants"]}
        assert set(mine) == {"kael", "brin", "vesh"}
        assert mine["kael"]["hp"] == 24 and "will" in mine["kael"]
        assert mine["vesh"]["hp_band"] == "unhurt" and "hp" not in mine["vesh"] and "will" not in mine["vesh"]
        gm = seats.table.client.get("/fights/ford/state", headers=seats.table.auth()).json()
        assert {c["id"]: c.get("hidden", False) for c in gm["combatants"]}["zqskarn"] is True
        assert gm["settings"]["notes"] == NOTES and "settings" not in seats.get("alice", "/state").json()

    def test_revealing_a_combatant_shows_it_to_the_players(self, seats: Any) -> None:
        """POST settings reveal: Skarn appears in the players' state and its join in their events."""
        answer = seats.table.client.post("/fights/ford/settings", headers=seats.table.auth(),
                                         json={"reveal": ["zqskarn"], "hp_display": "exact"})
        assert answer.status_code == 200 and answer.json()["hidden"] == []
        mine = {c["id"]: c for c in seats.get("alice", "/state").json()["combatants"]}
        assert mine["zqskarn"]["hp"] == 666001
        bad = seats.table.client.post("/fights/ford/settings", headers=seats.table.auth(), json={"hide": ["x"]})
        assert bad.status_code == 422 and bad.json()["field"] == "$.hide[0]"  # no such combatant

    def test_the_log_is_the_gms_until_published_then_verifies_against_witnessed_heads(self, seats: Any) -> None:
        """GET log: 403 to a player until the GM publishes; then every seat reads the stored lines byte for byte,
        and they verify against the heads the player witnessed."""
        assert seats.get("alice", "/log").status_code == 403
        assert seats.get("alice", "/session").status_code == 403
        witnessed = [seats.get("alice", "/state").json()["head"]]
        seats.post("gm", {"command": {"command": "roll_initiative"}})
        witnessed.append(seats.get("alice", "/state").json()["head"])
        seats.post("gm", {"command": {"command": "end_fight", "reason": "gm"}})
        seats.post("gm", {"command": {"command": "reveal_seed"}})  # over: no fresh seed, every die checkable (C42)
        seats.table.client.post("/fights/ford/settings", headers=seats.table.auth(), json={"publish": True})
        published = seats.get("alice", "/log")
        assert published.status_code == 200
        assert published.content.splitlines() == lines(seats.table.store, "ford")
        report = verify_lines(published.content.splitlines(keepends=True),
                              heads=[Head(seq=h["seq"], hash=h["hash"]) for h in witnessed])
        assert report.clean and report.seed_revealed
        assert seats.get("alice", "/session").status_code == 200
        assert seats.get("alice", "/verify").json()["findings"] is not None

    def test_a_revealed_seed_is_the_gms_until_the_log_is_published(self, seats: Any) -> None:
        """A ruling (found by a tester): with the seed and docs/dice.md's derivation a player recomputed dice withheld
        from her (the hidden one's initiative die; a foe's die whose total she saw, so its sheet bonus). After the
        GM's reveal mid-fight (C42) and at the end, every player and spectator sees the seed_revealed event with the
        seed withheld (``withheld: ["seed"]``) and ``seed_revealed: true`` in its state, its table page whole; the
        GM sees the seed; /verify checks the dice for every seat; explaining that seq is 403 saying why (the seed is
        the GM's); once the GM publishes, the log every seat reads carries the seed."""
        assert seats.post("gm", {"command": {"command": "roll_initiative"}}).status_code == 201
        assert seats.post("gm", {"command": {"command": "reveal_seed"}}).status_code == 201  # mid-fight (C42)
        assert seats.post("gm", {"command": {"command": "end_fight", "note": "over"}}).status_code == 201
        assert seats.post("gm", {"command": {"command": "reveal_seed"}}).status_code == 201
        gm = seats.table.client.get("/fights/ford/events?limit=500", headers=seats.table.auth()).json()["events"]
        seeds = [e["event"]["seed"] for e in gm if e["type"] == "seed_revealed"]
        assert len(seeds) == 2 and all(len(seed) == 64 for seed in seeds)
        for who in seats.tokens:
            events = seats.get(who, "/events?limit=500").json()["events"]
            revealed = [e for e in events if e["type"] == "seed_revealed"]
            assert [(e["event"], e["withheld"], e["salt"]) for e in revealed] == [
                ({"type": "seed_revealed"}, ["seed"], None)] * 2, revealed
            assert seats.get(who, "/state").json()["seed_revealed"] is True
            assert seats.get(who, "/table").status_code == 200
            verified = seats.get(who, "/verify").json()
            assert verified["clean"] is True and verified["seed_revealed"] is True, verified
            assert all(seed.encode() not in body for _who, _what, body in seats.served for seed in seeds)
            told = seats.get(who, f"/explain/{revealed[0]['seq']}")
            assert told.status_code == 403 and told.json()["detail"] == (
                f"the explanation of seq {revealed[0]['seq']} shows what only the GM may see of that event (its seed, "
                "if it has one); "
                "the GM may explain it, and every seat once the GM publishes the log")
        assert seats.get("alice", "/log").status_code == 403
        seats.table.client.post("/fights/ford/settings", headers=seats.table.auth(), json={"publish": True})
        for who in seats.tokens:
            published = seats.get(who, "/log")
            assert published.status_code == 200 and all(seed.encode() in published.content for seed in seeds)

    def test_explaining_another_sheets_roll_is_the_gms(self, seats: Any) -> None:
        """A player may not explain the raider's initiative roll (its sheet is the GM's); the GM may."""
        seats.post("gm", {"command": {"command": "roll_initiative"}})
        rolled = [e for e in seats.get("alice", "/events?limit=500").json()["events"]
                  if e["type"] == "initiative_rolled"]
        vesh = next(e for e in rolled if e["event"] and e["event"]["who"] == "vesh")
        kael = next(e for e in rolled if e["event"] and e["event"]["who"] == "kael")
        assert seats.get("alice", f"/explain/{vesh['seq']}").status_code == 403
        assert seats.get("alice", f"/explain/{kael['seq']}").status_code == 200
        gm = seats.table.client.get(f"/fights/ford/explain/{vesh['seq']}", headers=seats.table.auth())
        assert gm.status_code == 200 and gm.json()["parts"]

    def test_the_end_of_a_fight_is_explained_to_a_seat_that_plays_every_combatant_alone(self, seats: Any) -> None:
        """C33: the explanation of ``fight_ended`` tells how every combatant stands, HP included, and the GM's note
        if it has one, so a player (who plays one of them) is refused it, the reason read off its own view (the
        note withheld whether or not the GM wrote one), and the GM is told it whole."""
        seats.post("gm", {"command": {"command": "roll_initiative"}})
        assert seats.post("gm", {"command": {"command": "end_fight"}}).status_code == 201
        ended = next(e for e in seats.get("alice", "/events?limit=500").json()["events"] if e["type"] == "fight_ended")
        told = seats.get("alice", f"/explain/{ended['seq']}")
        assert told.status_code == 403 and told.json()["detail"] == (
            f"the explanation of seq {ended['seq']} shows what only the GM may see of that event (its note, if it "
            "has one); the GM may explain it, and every seat once the GM publishes the log"), told.text
        gm = seats.table.client.get(f"/fights/ford/explain/{ended['seq']}", headers=seats.table.auth()).json()
        assert [line for line in gm["verdicts"] if line.startswith("raiders:")] == [
            "raiders: vesh standing, HP 12/12; zqskarn standing, HP 666001/666001"], gm


    def test_a_die_drawn_before_a_mid_fight_reveal_is_confirmed_by_its_own_seed_after_the_second(
            self, seats: Any) -> None:
        """A roll drawn under the first seed (revealed mid-fight, C42) is explained as confirmed by that seed once
        the second seed is revealed too, as ``omen explain`` says of the same log (found by a tester: the server
        checked it against the latest seed, and said the GM's seed does NOT match)."""
        seats.post("gm", {"command": {"command": "roll_initiative"}})
        kael = next(e for e in seats.get("alice", "/events?limit=500").json()["events"]
                    if e["type"] == "initiative_rolled" and e["event"] and e["event"]["who"] == "kael")
        for command in ({"command": "reveal_seed"}, {"command": "end_fight", "note": "over"},
                        {"command": "reveal_seed"}):
            assert seats.post("gm", {"command": command}).status_code == 201
        told = seats.table.client.get(f"/fights/ford/explain/{kael['seq']}", headers=seats.table.auth()).json()
        assert told["seed"] == "seeded dice; the seed matches its commitment", told
        assert [die["seed_confirms"] for die in told["dice"]] == [True], told


def _junk(who: str) -> st.SearchStrategy[dict[str, Any]]:
    own = "kael" if who == "alice" else "brin"
    return st.fixed_dictionaries({
        "command": st.sampled_from(["declare_attack", "answer_active_defense", "move", "draw", "end_turn",
                                    "answer_catch", "react"]),
        "who": st.just(own), "attacker": st.just(own), "defender": st.just(own),
        "target": st.sampled_from(["vesh", "zqskarn", "kael", "brin", "nobody"]),
        "weapon": st.sampled_from(["zqknife", "zqmaul", "longsword", "bow", "nope"]),
    }).map(lambda d: {k: v for k, v in d.items() if k == "command" or k in _FIELDS[d["command"]]})


_FIELDS = {"declare_attack": {"attacker", "target", "weapon"}, "answer_active_defense": {"defender"},
           "move": {"who"}, "draw": {"who", "weapon"}, "end_turn": {"who"}, "answer_catch": {"who"},
           "react": {"who", "weapon"}}

STEP = st.one_of(st.integers(0, 10_000).map(lambda n: ("offer", n)),
                 st.sampled_from(["alice", "bob"]).flatmap(lambda w: _junk(w).map(lambda j: (w, j))))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=4, max_size=25), hp=st.sampled_from(["exact", "banded", "hidden"]),
       dice=st.sampled_from(["seeded", "manual"]))
def test_no_player_or_spectator_is_ever_served_a_gm_only_value(steps: list[tuple[str, Any]], hp: str,
                                                               dice: str) -> None:
    """Random fights played through the API (commands picked from the GM's options and given by the seat that
    plays the actor, undo and redo among them, and random refused commands from the players): no byte served to a
    player or spectator (state, options, events, the stream, explanations, verify, answers and errors) holds a
    marked GM-only value: the hidden combatant's id, name and HP, the raider's gear, Will and skills, the notes."""
    table = Table()
    with table.client:
        seats = Seats(table, dice=dice, hp=hp)
        seats.look()
        for kind, value in steps:
            if kind == "offer":
                options = table.client.get("/fights/ford/options", headers=table.auth()).json()["options"]
                offers = [o for o in options["offers"] if o["choices"]]
                if not offers:
                    continue
                offer = offers[value % len(offers)]
                choice = offer["choices"][value % len(offer["choices"])]
                body: dict[str, Any] = {"command": offer["command"], **choice["args"]}
                if dice == "manual":
                    body["dice"] = [1] * sum(len(r["dice"]) for r in choice["dice"])
                giver = seats.owner(offer["actor"]) if offer["command"] in _PLAYER else "gm"
                if giver != "gm":  # the player gives it if its own options offer it (a hidden target is not)
                    theirs = seats.get(giver, "/options").json()["options"]["offers"]
                    if not any(o["command"] == offer["command"] and choice["args"] in
                               [c["args"] for c in o["choices"]] for o in theirs):
                        giver = "gm"
                answer = seats.post(giver, {"command": body})
                if giver != "gm" and dice == "seeded":
                    assert answer.status_code == 201, answer.text  # what the options offer, the seat may give
            else:
                answer = seats.post(kind, {"command": value})
                assert answer.status_code < 500, answer.text
            seats.look()
        for who, what, served in seats.served:
            typed = what.encode() if what.startswith("POST") else b""
            assert not leaks(served, typed), (who, what, leaks(served, typed)[:3])
    Fight.load(table.store, "ford")


_PLAYER = {"declare_attack", "answer_active_defense", "route_damage", "choose_will_conversion", "react",
           "pass_reaction", "answer_catch", "move", "disengage", "draw", "end_turn"}


def test_a_tie_with_a_hidden_combatant_tells_a_player_nothing_of_it() -> None:
    """C19: Vesh and the hidden Skarn, both raiders, tie on initiative (d8 1 + 2 and d6 1 + 2 = 3 each, AGI +2
    each: no tie-break; Kael's 20 first). The GM sees the tie and is asked for an order; Alice's events hold no
    initiative_tied (its group read ["vesh"], allies true: a hidden combatant, its total and its side) and her
    options wait on nothing she may see, as her table shows no tie."""
    from tests.sheets import sheet as plain

    table = Table()
    with table.client:
        table.create(dice="manual", names=(), hidden=["skarn"], combatants=[
            msgspec.to_builtins(plain("kael", AGI=(20, 0))), msgspec.to_builtins(plain("vesh", side="raiders",
                                                                                      AGI=(8, 2))),
            msgspec.to_builtins(plain("skarn", side="raiders", AGI=(6, 2)))])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "roll_initiative", "dice": [20, 1, 1]}).status_code == 201
        told = table.client.get("/fights/duel/events", headers=table.auth()).json()["events"]
        assert [e["event"]["group"] for e in told if e["type"] == "initiative_tied"] == [["vesh", "skarn"]]
        assert table.client.get("/fights/duel/options", headers=table.auth()).json()["options"]["waiting"][
            "kind"] == "initiative_tie"
        events = table.client.get("/fights/duel/events", headers=table.auth(alice)).json()["events"]
        assert "initiative_tied" not in [e["type"] for e in events] and "skarn" not in str(events)
        assert table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"].get(
            "waiting") is None
        assert "tied" not in table.client.get("/fights/duel/table", headers=table.auth(alice)).text
        # the GM agrees their order: the command and the agreed order (its Vesh alone) are withheld whole, as the
        # tie is (Alice's page said "order: Vesh the Cinder-Hand", of a tie she was not shown: a tester)
        assert table.command({"command": "agree_initiative", "order": ["vesh", "skarn"]}).status_code == 201
        gm = table.client.get("/fights/duel/events", headers=table.auth()).json()["events"]
        batch = next(e["seq"] for e in gm if e["type"] == "command_issued"
                     and e["event"]["command"]["command"] == "agree_initiative")
        events = table.client.get("/fights/duel/events", headers=table.auth(alice)).json()["events"]
        answer = [e for e in events if e["batch"] == batch]
        assert answer and all(e["withheld"] == ["*"] and e.get("event") is None for e in answer[:2]), answer
        assert [e["event"]["order"] for e in events if e["type"] == "initiative_order_set"] == [["kael", "vesh"]]
        assert "agree_initiative" not in str(events) and "initiative_agreed" not in str(events)
        page = table.client.get("/fights/duel/table", headers=table.auth(alice)).text
        assert "order: Vesh" not in page and "agreed among the tied" not in page


def test_a_roll_off_with_a_hidden_combatant_shows_a_player_none_of_its_dice() -> None:
    """C19: Vesh and the hidden Skarn tie at 3 (as above) and the GM has them roll off (d8 7 for Vesh, d6 5 for
    Skarn): Alice sees neither roll-off die, not even the visible Vesh's (a die of purpose roll_off tells of a tie,
    and Vesh's alone of a tie with someone she does not see), nor the GM's roll_off command, while the GM sees both;
    in a second fight where Vesh ties with the visible Bo, Alice sees both roll-off dice, the command and the
    roll-off.
    """
    from tests.sheets import sheet as plain

    def roll_offs(fight: str, token: str | None) -> list[dict[str, Any]]:
        events = table.client.get(f"/fights/{fight}/events", headers=table.auth(token)).json()["events"]
        return [e for e in events if e["type"] in ("dice_rolled", "initiative_roll_off")
                and e["event"].get("purpose", "roll_off") == "roll_off"]

    table = Table()
    with table.client:
        for fight, other, hidden in (("duel", "skarn", ["skarn"]), ("open", "bo", [])):
            table.create(fight_id=fight, dice="manual", names=(), hidden=hidden, combatants=[
                msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                msgspec.to_builtins(plain("vesh", side="raiders", AGI=(8, 2))),
                msgspec.to_builtins(plain(other, side="raiders", AGI=(6, 2)))])
            alice = table.client.post(f"/fights/{fight}/seats", headers=table.auth(), json={
                "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
            assert table.command({"command": "roll_initiative", "dice": [20, 1, 1]}, fight).status_code == 201
            assert table.command({"command": "roll_off", "dice": [7, 5]}, fight).status_code == 201
            gm = roll_offs(fight, None)
            assert [(e["type"], e["event"].get("roller")) for e in gm] == [
                ("dice_rolled", "vesh"), ("dice_rolled", other), ("initiative_roll_off", None)]
            seen = [(e["type"], e["event"].get("roller")) for e in roll_offs(fight, alice)]
            assert seen == ([] if hidden else [("dice_rolled", "vesh"), ("dice_rolled", "bo"),
                                               ("initiative_roll_off", None)])
            # the GM's roll_off command too: its name alone told Alice of a tie she was not shown (a tester)
            commands = [e["event"]["command"]["command"] for e in table.client.get(
                f"/fights/{fight}/events", headers=table.auth(alice)).json()["events"] if e["type"] == "command_issued"]
            assert ("roll_off" in commands) is not bool(hidden), commands


def test_a_players_lists_of_others_do_not_shift_with_combatants_it_does_not_see() -> None:
    """An offer lists at most MAX_LISTED others (engaged first, then foes, in the order they joined). Kael against
    14 raiders, and the same fight with three hidden raiders joined before the 14: Alice's options are the same in
    both (the raider engaged with Kael and the first eleven others she sees), not the GM's list filtered (which
    would hold three fewer of her foes)."""
    from omen_core.limits import MAX_LISTED
    from tests.sheets import sheet as plain

    # AGI bonuses 10 apart: the seeded initiative has no tie whatever the dice, and Kael (+500) goes first, so the
    # rounds begin on his turn (a player offers no attack before them)
    raiders = [msgspec.to_builtins(plain(f"r{i:02d}", side="raiders", AGI=(6, 10 * i))) for i in range(14)]
    hidden = [msgspec.to_builtins(plain(f"h{i}", side="raiders", AGI=(6, 200 + 10 * i))) for i in range(3)]
    kael = msgspec.to_builtins(plain("kael", AGI=(6, 500)))
    table = Table()
    seen: dict[str, Any] = {}
    with table.client:
        for fight, combatants, veiled in (("open", [kael, *raiders], []), ("veiled", [kael, *hidden, *raiders],
                                                                            ["h0", "h1", "h2"])):
            table.create(fight_id=fight, dice="seeded", names=(), hidden=veiled, combatants=combatants)
            alice = table.client.post(f"/fights/{fight}/seats", headers=table.auth(), json={
                "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
            assert table.command({"command": "engage", "who": "kael", "others": ["r13"]}, fight).status_code == 201
            assert table.command({"command": "roll_initiative"}, fight).status_code == 201
            seen[fight] = table.client.get(f"/fights/{fight}/options", headers=table.auth(alice)).json()["options"]
            fights = table.client.app.state.fights
            sent, _now = streamed(fights, fight, fights.keep.seat(alice))
            seen[f"{fight} streamed"] = [msgspec.to_builtins(item.options.offers) for item in sent
                                         if isinstance(item, OptionsView)]
    assert seen["veiled streamed"][-1] == seen["open streamed"][-1]  # the last head before the engagement
    attack = next(o for o in seen["veiled"]["offers"] if o["command"] == "declare_attack")
    assert sorted({c["args"]["target"] for c in attack["choices"]}) == [
        *(f"r{i:02d}" for i in range(MAX_LISTED - 1)), "r13"]  # r13, engaged with Kael, first
    assert seen["veiled"]["offers"] == seen["open"]["offers"]


def test_explaining_the_gms_command_says_what_it_is_and_why_a_player_may_not() -> None:
    """Found by a tester: the GM's static_check of Kael (Alice's own) is at seq 5; the GM's explanation of that
    command_issued was empty (no dice, no parts); it now says the command whole and the seqs it wrote (6 to 8: the
    roll, the check's result and its batch's last event); Alice's was 403 "shows the sheets of combatants this seat
    does not play", the wrong reason: it shows the GM's command whole, which she sees as its name; the seqs it
    wrote she explains (the check: Kael's roll, every term hers). The GM's check of the hidden Skarn is envelopes to
    her: each of its seqs is 403 for that one reason (the explanation's dice or words would say which is which)."""
    table = Table()
    with table.client:
        alice = _alice_beside_hidden_skarn(table)
        check = {"command": "static_check", "check": {"who": "kael", "skill": "Athletics"}, "difficulty": 10}
        done = table.command({**check, "dice": [4]})
        assert done.status_code == 201, done.text
        seqs = [e["seq"] for e in done.json()["events"]]
        first, last = seqs[0], seqs[-1]
        gm = table.client.get(f"/fights/duel/explain/{first}", headers=table.auth()).json()
        assert (gm["kind"], gm["dice"], gm["parts"]) == ("command_issued", [], [])
        assert gm["verdicts"] == [
            f'the command static_check {{"check":{{"who":"kael","skill":"Athletics"}},"difficulty":10}} with 1 '
            f"face, given by gm: it wrote seqs {first + 1} to {last} (explain each for its rolls and results)"]
        mine = table.client.get(f"/fights/duel/explain/{first}", headers=table.auth(alice))
        assert mine.status_code == 403 and mine.json()["detail"] == (
            f"the explanation of seq {first} shows the whole of a command this seat sees only in part (another seat "
            f"gave it); explain the seqs it wrote ({first + 1} to {last}) for its rolls and results; the GM may "
            "explain it, and every seat once the GM publishes the log")
        rolled = table.client.get(f"/fights/duel/explain/{first + 1}", headers=table.auth(alice))
        assert rolled.status_code == 200 and rolled.json()["kind"] == "static_check_resolved", rolled.text
        hidden = table.command({"command": "static_check", "check": {"who": "skarn", "skill": "Stealth"},
                                "difficulty": 10, "dice": [4]})
        assert hidden.status_code == 201, hidden.text
        for seq in [e["seq"] for e in hidden.json()["events"]]:  # envelopes to her: one reason for each, whatever
            answer = table.client.get(f"/fights/duel/explain/{seq}", headers=table.auth(alice))  # it explains
            assert answer.status_code == 403 and answer.json()["detail"] == (
                f"the explanation of seq {seq} is of an event this seat is not shown; the GM may explain it, and "
                "every seat once the GM publishes the log")


def test_a_players_own_command_and_the_gms_undo_are_shown_and_explained_as_they_may_be() -> None:
    """A tester's find, in a fight with the hidden Skarn: Alice's own answer_active_defense with no faces
    (``"dice": []``) reached her with its empty ``dice`` withheld, and its explanation was 403 "another seat gave
    it"; the GM's undo withheld its reason from her while its ``undone`` event showed it. Now her command is shown
    whole (salt and all) and explained; the undo's command shows its reason, the undone's own, and is explained; her
    Block with a face (a command's faces may be other seats' dice, C29) stays shown but for them, and its 403 says
    so."""
    table = Table()
    with table.client:
        alice = _alice_beside_hidden_skarn(table)
        assert table.command({"command": "roll_initiative", "dice": [1, 8, 1]}).status_code == 201  # Vesh first
        attack = {"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                  "dice": [6, 6, 1]}
        assert table.command(attack).status_code == 201
        mine = table.command({"command": "answer_active_defense", "defender": "kael", "dice": []}, token=alice)
        issued = mine.json()["events"][0]
        assert (issued["event"]["command"], issued["withheld"]) == (
            {"command": "answer_active_defense", "defender": "kael", "dice": []}, [])
        assert issued["salt"] is not None
        explained = table.client.get(f"/fights/duel/explain/{issued['seq']}", headers=table.auth(alice))
        assert explained.status_code == 200 and explained.json()["kind"] == "command_issued", explained.text
        undo = table.command({"command": "undo", "reason": "Kael was not in reach"})
        seen = table.client.get(f"/fights/duel/events?after={undo.json()['events'][0]['seq'] - 1}",
                                headers=table.auth(alice)).json()["events"]
        assert [(e["type"], e["event"], e["withheld"]) for e in seen] == [
            ("command_issued", {"type": "command_issued", "command": {"command": "undo",
                                                                      "reason": "Kael was not in reach"},
                                "by": "gm"}, []),
            ("undone", {"type": "undone", "from_seq": seen[1]["event"]["from_seq"],
                        "to_seq": seen[1]["event"]["to_seq"], "reason": "Kael was not in reach"}, [])]
        assert table.client.get(f"/fights/duel/explain/{seen[0]['seq']}", headers=table.auth(alice)).status_code == 200
        assert table.command(attack).status_code == 201
        block = table.command({"command": "answer_active_defense", "defender": "kael", "defense": "block",
                               "dice": [3]}, token=alice)
        first, last = block.json()["events"][0]["seq"], block.json()["events"][-1]["seq"]
        assert block.json()["events"][0]["withheld"] == ["command", "faces_by"]  # its faces, and who typed them
        refused = table.client.get(f"/fights/duel/explain/{first}", headers=table.auth(alice))
        assert refused.status_code == 403 and refused.json()["detail"] == (
            f"the explanation of seq {first} shows the faces of a command this seat sees but for them (a command's "
            f"dice may be other seats' faces, C29: the seat's own are in its rolls); explain the seqs it wrote "
            f"({first + 1} to {last}) for its rolls and results; the GM may explain it, and every seat once the GM "
            "publishes the log")


def test_an_explanation_naming_a_combatant_the_seat_does_not_play_is_the_gms() -> None:
    """C38, seat secrecy: at the end of round 1 the hidden Skarn's own ability (Shake Off: clear Prone at the
    round's end, no dice; not the shipped Shake It Off, so under an id of its own, C37) answers the moment; Alice
    (Kael's) was served its explanation, naming Skarn and his ability, because a moment of the round declares no
    combatant and rolled no die of another's: whom an explanation names is every combatant its action's events
    name, answers included; the GM's still says it."""
    from tests.sheets import sheet as plain

    shake = {"id": "shake_off", "name": "Shake Off", "summary": "At the round's end, stand up.",
             "use": "trigger", "trigger": {"moment": "round.end", "owner": "self"},
             "when": {"owner_has": ["Prone"]}, "effects": [{"kind": "clear", "to": "actor", "condition": "Prone"}]}
    skarn = {**msgspec.to_builtins(plain("skarn", side="raiders")), "abilities": [shake]}
    table = Table()
    with table.client:
        table.create(dice="manual", names=(), combatants=[msgspec.to_builtins(plain("kael")), skarn],
                     hidden=["skarn"])
        alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        assert table.command({"command": "apply_condition", "who": "skarn", "condition": "Prone"}).status_code == 201
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201  # Kael first
        assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
        ended = table.command({"command": "end_turn", "who": "skarn"})
        assert ended.status_code == 201, ended.text
        moment = next(e["seq"] for e in ended.json()["events"] if e["type"] == "moment_reached")
        answered = table.command({"command": "answer_decision", "who": "skarn", "decision": "shake_off",
                                  "choice": "use"})
        assert answered.status_code == 201, answered.text
        gm = table.client.get(f"/fights/duel/explain/{moment}", headers=table.auth())
        assert gm.status_code == 200 and "skarn answers shake_off: use" in " ".join(gm.json()["verdicts"])
        hers = table.client.get(f"/fights/duel/explain/{moment}", headers=table.auth(alice))
        assert hers.status_code == 403, hers.text
        assert b"skarn" not in hers.content.lower() and b"shake" not in hers.content.lower()


def test_how_long_a_condition_lasts_is_in_every_seats_state_and_names_only_whom_it_sees() -> None:
    """C28, C40: Kael Prone until the end of the hidden Skarn's next turn and Fatigued (3 ticks, the ruleset's
    duration): the GM's state and options say `until` with Skarn, and `remaining` {"Fatigued": 3}; Alice's (she
    plays Kael) say the same with `of` null: the combatant she may not see unnamed, as her page says "another
    combatant" (docs/server.md, CombatantView)."""
    table = Table()
    with table.client:
        alice = _alice_beside_hidden_skarn(table)
        assert table.command({"command": "roll_initiative", "dice": [6, 2, 1]}).status_code == 201
        for condition, more in (("Prone", {"until": "end_of_next_turn", "of": "skarn"}), ("Fatigued", {})):
            assert table.command({"command": "apply_condition", "who": "kael", "condition": condition,
                                  **more}).status_code == 201
        for token, of in ((None, "skarn"), (alice, None)):
            headers = table.auth(token) if token else table.auth()
            state = table.client.get("/fights/duel/state", headers=headers).json()
            kael = next(c for c in state["combatants"] if c["id"] == "kael")
            budget = next(b for b in table.client.get("/fights/duel/options", headers=headers).json()["options"][
                "combatants"] if b["who"] == "kael")
            for said in (kael, budget):
                assert said["remaining"] == {"Fatigued": 3}, said
                assert said["until"] == {"Prone": {"of": of, "moment": "end_of_next_turn", "started": False}}, said
            if token:
                assert "skarn" not in str(state).lower()
        # her page's log says how long it lasts too, the one it waits for unnamed (it said "Kael Arden is Prone",
        # as if until cleared: a durations tester)
        page = " ".join(table.client.get("/fights/duel/table", headers=table.auth(alice)).text.split())
        assert "Kael Arden is Prone until the end of another combatant&#39;s next turn" in page


def test_a_stream_resuming_far_back_sends_its_backlog_a_few_heads_a_look() -> None:
    """A stream from the first event of a fight of 40 commands: each look computes at most HEADS_A_LOOK earlier
    heads' views and sends what it has (it computed every head's options before its first byte: 3 s for 1,084
    events, a tester), and the looks together send every event once, in order, each head followed by its view."""
    from omen_server.app import HEADS_A_LOOK

    table = Table()
    with table.client:
        table.create()
        for n in range(40):
            condition = "Exhausted" if n % 2 == 0 else "Fatigued"
            assert table.command({"command": "apply_condition" if n % 4 < 2 else "clear_condition", "who": "kael",
                                  "condition": condition}).status_code == 201
        fights = table.client.app.state.fights
        seat = fights.keep.seat(table.gm)
        first, _view = _news(fights, "duel", seat, 0, -1)
        assert sum(isinstance(m, OptionsView) for m in first) == HEADS_A_LOOK
        items, view = streamed(fights, "duel", seat)
        assert view is not None
        seqs = [m.seq for m in items if not isinstance(m, OptionsView)]
        assert seqs == list(range(1, view.head.seq + 1))
        heads = [m.head.seq for m in items if isinstance(m, OptionsView)]
        assert len(heads) >= 40 and heads == sorted(set(heads))
        for at, m in enumerate(items):
            if isinstance(m, OptionsView):
                assert items[at - 1].seq == m.head.seq  # each view follows its head's last event
