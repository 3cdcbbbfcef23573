"""omen_server/staging.py: players roll their own dice: a command whose next dice are another seat's is staged in
the keep until that seat gives them, then decided as one command with all its faces (C29 order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from omen_core.events import DiceRolled
from tests.server.test_app import Table, sheet


@pytest.fixture
def table() -> Any:
    """A manual-dice duel, Alice playing Kael and Bob a spectator, initiative typed in (Kael first)."""
    made = Table()
    with made.client:
        made.create(dice="manual")
        for name, plays in (("Alice", ["kael"]), ("Bob", [])):
            answer = made.client.post("/fights/duel/seats", headers=made.auth(), json={
                "kind": "player" if plays else "spectator", "name": name, "combatants": plays})
            setattr(made, name.lower(), answer.json()["token"])
        answer = made.command({"command": "roll_initiative", "dice": [6, 1]})
        assert answer.status_code == 201 and answer.json()["options"]["turn"] == "kael", answer.text
        yield made


def options(table: Table, token: str) -> dict[str, Any]:
    answer = table.client.get("/fights/duel/options", headers=table.auth(token))
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def stripped(events: list[dict[str, Any]]) -> list[Any]:
    """The events without what differs between two runs (time, hashes, who gave the command and typed its faces)."""
    out = []
    for e in events:
        body = dict(e["event"] or {})
        body.pop("by", None)
        body.pop("faces_by", None)
        out.append((e["seq"], e["type"], body))
    return out


def test_a_players_attack_waits_for_the_gms_dice_then_is_decided_as_one_command(table: Any) -> None:
    """Alice declares Kael's attack with Kael's hit faces only and stage: it is staged (202), nothing is written;
    Alice sees it wait for the GM's dice without their sizes (Vesh's sheet); the GM sees the roll to give (Vesh's
    base defense, one die); the GM gives it and the attack is decided: the events are those of the same attack
    typed in whole by one seat (C29: attacker's hit dice, then the defender's RES die)."""
    head = options(table, table.gm)["head"]["seq"]
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    staged = table.command(attack, token=table.alice, stage=True)
    assert staged.status_code == 202, staged.text
    assert options(table, table.gm)["head"]["seq"] == head, "nothing is written while it waits"
    mine = options(table, table.alice)["staged"]
    assert mine["awaiting"] == "the GM" and not mine.get("yours") and "rolls" not in mine
    gm = options(table, table.gm)["staged"]
    assert gm["yours"] is True and gm["given"] == 2 and gm["command"]["attacker"] == "kael"
    assert [(r["roller"], r["purpose"], len(r["dice"])) for r in gm["rolls"]] == [("vesh", "base_defense", 1)]
    assert "staged" in options(table, table.bob) and "rolls" not in options(table, table.bob)["staged"]
    done = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": gm["id"], "dice": [1]})
    assert done.status_code == 201, done.text
    assert "staged" not in options(table, table.gm)
    once = Table()
    with once.client:
        once.create(dice="manual")
        once.command({"command": "roll_initiative", "dice": [6, 1]})
        whole = once.command({**attack, "dice": [8, 6, 1]})
        assert whole.status_code == 201, whole.text
    assert stripped(done.json()["events"]) == stripped(whole.json()["events"])


def test_a_pass_waits_for_the_gms_hit_dice_then_the_players_defense_die(table: Any) -> None:
    """The GM's Vesh attacks Kael (Kael's turn ended first): the Interrupt window opens for Kael first (C24), so the
    attack rolls nothing yet; Alice lets it pass with stage: the pass closes the window and the attack rolls on,
    so it waits for the GM's hit dice (Vesh's), then for Alice's base defense die (Kael's): each seat gives its own,
    only the awaited seat or the GM may (the spectator 403), and the attack goes on with all of them."""
    assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
    early = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                           "dice": [6, 6]})
    assert early.status_code == 422 and "it stops first at the Interrupt window (C24)" in early.json()["detail"]
    opened = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife"})
    assert opened.status_code == 201 and opened.json()["options"]["waiting"]["kind"] == "interrupt", opened.text
    offered = next(o for o in options(table, table.alice)["options"]["offers"] if o["command"] == "pass_reaction")
    assert [c.get("dice", []) for c in offered["choices"]] == [[]], offered  # her die comes after the GM's (C29):
    # none to give with the command (listed, a client gave it and was refused: found by a tester)
    staged = table.command({"command": "pass_reaction", "who": "kael"}, token=table.alice, stage=True)
    assert staged.status_code == 202, staged.text
    gm = options(table, table.gm)["staged"]
    assert gm["yours"] is True and [r["purpose"] for r in gm["rolls"]] == ["hit"]
    assert not options(table, table.alice)["staged"].get("yours")
    more = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": gm["id"], "dice": [6, 6]})
    assert more.status_code == 202, more.text
    mine = options(table, table.alice)["staged"]
    assert mine["yours"] is True and mine["awaiting"] == "Alice" and "given" not in mine  # Vesh's hit dice: GM's
    assert more.json() == options(table, table.gm)["staged"]
    assert [(r["roller"], r["purpose"]) for r in mine["rolls"]] == [("kael", "base_defense")]
    assert table.client.post("/fights/duel/staged", headers=table.auth(table.bob),
                             json={"id": mine["id"], "dice": [1]}).status_code == 403
    done = table.client.post("/fights/duel/staged", headers=table.auth(table.alice),
                             json={"id": mine["id"], "dice": [1]})
    assert done.status_code == 201, done.text
    rolled = [(e["event"]["roller"], e["event"]["purpose"]) for e in done.json()["events"]
              if e["type"] == "dice_rolled"]
    assert rolled[:2] == [("vesh", "hit"), ("kael", "base_defense")]


def test_who_typed_a_staged_commands_faces_is_recorded_beside_who_gave_it(table: Any) -> None:
    """Alice's pass staged for dice (as above): the GM types Vesh's hit dice (2), then Alice Kael's base defense
    die (1). The command is hers (``by``), and its ``command_issued`` records who typed its faces, in order
    (``faces_by``: a player disputing the hit read that she gave the GM's dice: a tester); verify is clean, explain
    says it; the GM sees who typed them, Alice's seat not until the log is published (their counts would tell of
    the dice of combatants it may not see)."""
    from omen_core.commands import PassReaction
    from omen_core.events import CommandIssued, FacesGiven
    from omen_core.walk import StoreSource
    from omen_replay.explain import explain
    from omen_replay.verify import verify_store

    assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
    assert table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael",
                          "weapon": "knife"}).status_code == 201
    assert table.command({"command": "pass_reaction", "who": "kael"}, token=table.alice, stage=True).status_code == 202
    gm = options(table, table.gm)["staged"]
    assert table.client.post("/fights/duel/staged", headers=table.auth(),
                             json={"id": gm["id"], "dice": [6, 6]}).status_code == 202
    mine = options(table, table.alice)["staged"]
    done = table.client.post("/fights/duel/staged", headers=table.auth(table.alice),
                             json={"id": mine["id"], "dice": [1]})
    assert done.status_code == 201, done.text
    issued = next(r for r in table.store.read("duel") if isinstance(r.event, CommandIssued)
                  and isinstance(r.event.command, PassReaction))
    assert isinstance(issued.event, CommandIssued) and issued.event.by == "player:Alice"
    assert issued.event.faces_by == (FacesGiven(by="gm", faces=2), FacesGiven(by="player:Alice", faces=1))
    assert issued.event.command.dice == (6, 6, 1)
    assert not verify_store(table.store, "duel").problems
    told = explain(StoreSource(table.store, "duel"), issued.seq).verdicts
    assert any("given by player:Alice; its faces typed by gm (2), then player:Alice (1)" in v for v in told), told
    seen = {token: next(e for e in table.client.get("/fights/duel/events", headers=table.auth(token)).json()["events"]
                        if e["seq"] == issued.seq) for token in (table.gm, table.alice)}
    assert seen[table.gm]["event"]["faces_by"] == [{"by": "gm", "faces": 2}, {"by": "player:Alice", "faces": 1}]
    assert "faces_by" not in seen[table.alice]["event"] and "faces_by" in seen[table.alice]["withheld"]


def test_without_stage_the_refusal_stands_and_with_it_a_seats_own_dice_are_asked_for(table: Any) -> None:
    """Without stage the command is refused for want of faces (422), as before; with stage and none of its own faces
    (Alice gives none of Kael's), it waits for Alice's own dice first (her roll box asks for Kael's hit dice), then
    for the GM's."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}
    assert table.command({**attack, "dice": [8, 6]}, token=table.alice).status_code == 422
    staged = table.command(attack, token=table.alice, stage=True)
    assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
    mine = options(table, table.alice)["staged"]
    assert mine["yours"] is True and [r["purpose"] for r in mine["rolls"]] == ["hit"]
    more = table.client.post("/fights/duel/staged", headers=table.auth(table.alice), json={"id": mine["id"],
                                                                                          "dice": [8, 6]})
    assert more.status_code == 202 and more.json()["awaiting"] == "the GM", more.text


def test_a_staged_command_is_void_once_the_fight_moves_and_can_be_withdrawn(table: Any) -> None:
    """Another command moves the head: the staged one is gone and giving its dice is 409; staged again, the GM
    withdraws it (204) and it is gone."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    first = table.command(attack, token=table.alice, stage=True).json()
    assert table.command({"command": "engage", "who": "kael", "others": ["vesh"]}).status_code == 201
    assert "staged" not in options(table, table.gm)
    late = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": first["id"], "dice": [1]})
    assert late.status_code == 409
    table.command(attack, token=table.alice, stage=True)
    assert table.client.delete("/fights/duel/staged", headers=table.auth()).status_code == 204
    assert "staged" not in options(table, table.gm)


def test_a_staged_command_is_not_voided_by_a_command_sent_with_stage(table: Any) -> None:
    """A tester's GM clicked End turn on the table page (which stages every command of a manual fight) while
    Alice's attack waited for the GM's dice: the end of turn, needing no dice, went through and voided her attack.
    Now a command sent with stage while another is staged is 409 dice-staged whether it needs dice (a second
    attack) or not (the end of turn), nothing is written, the staged attack stays whole, and its dice decide it."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    first = table.command(attack, token=table.alice, stage=True)
    assert first.status_code == 202, first.text
    head, kept = options(table, table.gm)["head"]["seq"], options(table, table.gm)["staged"]
    for command, token in (({"command": "end_turn", "who": "kael"}, table.gm), (attack, table.alice),
                           ({"command": "end_turn", "who": "kael"}, table.alice)):
        refused = table.command(command, token=token, stage=True)
        assert refused.status_code == 409, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json() == {
            "type": "/problems/dice-staged", "title": "A command already waits for dice", "status": 409,
            "detail": "a command already waits for the GM's dice: it goes first (or the GM or the seat that gave "
                      "it withdraws it: DELETE /fights/{id}/staged)"}
    assert options(table, table.gm)["head"]["seq"] == head and options(table, table.gm)["staged"] == kept
    done = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": kept["id"], "dice": [1]})
    assert done.status_code == 201, done.text
    assert [e["type"] for e in done.json()["events"]][:3] == ["command_issued", "engagement_changed",
                                                              "attack_declared"]


def test_a_spectator_withdraws_nothing_whether_or_not_a_command_is_staged(table: Any) -> None:
    """A spectator's DELETE /staged is 403 with nothing staged and with a command staged (the answer does not
    depend on what is staged), and the staged command stays."""
    assert table.client.delete("/fights/duel/staged", headers=table.auth(table.bob)).status_code == 403
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    assert table.command(attack, token=table.alice, stage=True).status_code == 202
    refused = table.client.delete("/fights/duel/staged", headers=table.auth(table.bob))
    assert refused.status_code == 403 and "staged" in options(table, table.gm)


def test_a_player_may_not_withdraw_a_command_the_gm_staged(table: Any) -> None:
    """docs/server.md (DELETE /staged: the GM, or the seat that staged it): the GM's save on Kael, staged for
    Alice's die, is shown to her, but withdrawing it is 403 saying who may, and it stays; the GM withdraws it."""
    effect = {"name": "cinder flask", "save": "AGI", "against": "STR", "action_cost": 0,
              "on_failure": [{"kind": "damage", "dice": {"count": 1, "die": "d6"}, "damage_type": "fire"}]}
    staged = table.command({"command": "call_save", "caller": "vesh", "saver": "kael", "effect": effect}, stage=True)
    assert staged.status_code == 202 and "staged" in options(table, table.alice), staged.text
    refused = table.client.delete("/fights/duel/staged", headers=table.auth(table.alice))
    assert refused.status_code == 403 and refused.json()["detail"] == (
        "only the GM or the seat that gave the command may withdraw it"), refused.text
    assert "staged" in options(table, table.gm)
    assert table.client.delete("/fights/duel/staged", headers=table.auth()).status_code == 204
    assert "staged" not in options(table, table.gm)


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer garbage"}])
@pytest.mark.parametrize("body", [{"zz": 1}, {"id": "x", "dice": [1]}])
def test_giving_dice_without_a_valid_token_is_401_whatever_the_body(table: Any, headers: dict[str, str],
                                                                  body: dict[str, Any]) -> None:
    """docs/server.md: a request without a (valid) token is 401, before its body is read: a malformed body is not
    a 400 to whoever holds no token, as for commands."""
    answer = table.client.post("/fights/duel/staged", headers=headers, json=body)
    assert answer.status_code == 401, answer.text


def test_a_seat_is_answered_and_shown_a_staged_command_only_as_it_may_see_it() -> None:
    """The GM stages Vesh's save effect on Kael (a name and damage dice that are the caller's: GM-only) and Alice
    gives Kael's save die: the 202 she is answered is the staged command as her options show it (the command as she
    sees any of the GM's, its name alone; no count of the faces in, which counts the dice of sheets she does not
    play); Bob's spectator seat sees whose dice it waits for, no faces count; with Skarn hidden, a command of his
    staged for the GM's dice is not shown to a player at all (its being there would tell of him), only to the GM,
    and Alice withdrawing "it" is 204 as when none is staged (a 403 would tell of it), the command kept."""
    table = Table()
    with table.client:
        table.create(dice="manual", names=("kael", "vesh", "skarn"), hidden=["skarn"])
        tokens = {}
        for name, plays in (("Alice", ["kael"]), ("Bob", [])):
            answer = table.client.post("/fights/duel/seats", headers=table.auth(), json={
                "kind": "player" if plays else "spectator", "name": name, "combatants": plays})
            tokens[name] = answer.json()["token"]
        effect = {"name": "zq cinder flask", "save": "AGI", "against": "STR", "action_cost": 0,
                  "on_failure": [{"kind": "damage", "dice": {"count": 1, "die": "d6"}, "damage_type": "fire"}]}
        staged = table.command({"command": "call_save", "caller": "vesh", "saver": "kael", "effect": effect},
                               stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
        gm = options(table, table.gm)["staged"]
        given = table.client.post("/fights/duel/staged", headers=table.auth(tokens["Alice"]),
                                  json={"id": gm["id"], "dice": [1]})
        assert given.status_code == 202, given.text
        assert given.json() == options(table, tokens["Alice"])["staged"] == {
            "id": gm["id"], "command": {"command": "call_save"}, "by": "the GM", "awaiting": "the GM"}
        assert options(table, tokens["Bob"])["staged"] == given.json()
        assert options(table, table.gm)["staged"]["given"] == 1
        assert table.client.delete("/fights/duel/staged", headers=table.auth()).status_code == 204
        hidden = table.command({"command": "call_save", "caller": "skarn", "saver": "vesh", "effect": effect},
                               stage=True)
        assert hidden.status_code == 202 and hidden.json()["awaiting"] == "the GM", hidden.text
        assert "staged" in options(table, table.gm)
        for token in tokens.values():
            assert "staged" not in options(table, token)
        alice = table.client.delete("/fights/duel/staged", headers=table.auth(tokens["Alice"]))
        assert alice.status_code == 204 and "staged" in options(table, table.gm)  # none, to her: no 403 tells


def test_a_players_faces_never_roll_another_seats_dice(table: Any) -> None:
    """C29, each seat types its own dice: Alice's attack typed with a third face, which would be Vesh's RES die
    (the GM's), is refused (422 surplus-faces at $.command.dice) naming only Kael's two dice, not Vesh's size;
    nothing is written. The GM may type them all (201)."""
    head = options(table, table.gm)["head"]["seq"]
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6, 1]}
    refused = table.command(attack, token=table.alice)
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["type"].endswith("surplus-faces") and problem["field"] == "$.command.dice"
    assert problem["detail"].startswith("3 faces given, but this seat's dice here are 2 (kael's hit: primary d8, "
                                        "fcs d6): the dice after them are another seat's to give")
    assert "vesh" not in problem["detail"]
    assert options(table, table.gm)["head"]["seq"] == head
    assert table.command(attack).status_code == 201


def test_a_seat_giving_staged_dice_gives_its_own_alone(table: Any) -> None:
    """C29: the GM stages Kael's attack, which waits for Alice's hit dice; Alice giving a third face (it would be
    Vesh's RES die, the GM's) is refused at $.dice, the command kept; her two faces then stage it for the GM's die
    (the faces past a seat's own were handed on to the next seat's dice)."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}
    staged = table.command(attack, stage=True)
    assert staged.status_code == 202, staged.text
    sid = staged.json()["id"]
    surplus = table.client.post("/fights/duel/staged", headers=table.auth(table.alice),
                                json={"id": sid, "dice": [8, 6, 1]})
    assert surplus.status_code == 422 and surplus.json()["field"] == "$.dice", surplus.text
    assert "this seat's dice here are 2 (kael's hit: primary d8, fcs d6)" in surplus.json()["detail"]
    assert options(table, table.alice)["staged"]["id"] == sid
    mine = table.client.post("/fights/duel/staged", headers=table.auth(table.alice), json={"id": sid, "dice": [8, 6]})
    assert mine.status_code == 202 and mine.json()["awaiting"] == "the GM", mine.text


def test_a_players_surplus_faces_list_only_its_own_dice(table: Any) -> None:
    """A player's surplus-faces refusal (more faces than the command rolls) lists only its own dice: Kael's
    end_turn rolls none, so Alice's one face is refused saying hers are none (the others' sizes are their sheets')."""
    refused = table.command({"command": "end_turn", "who": "kael", "dice": [3]}, token=table.alice)
    assert refused.status_code == 422 and refused.json()["type"].endswith("surplus-faces"), refused.text
    assert refused.json()["detail"] == ("1 face given, but this command rolls fewer dice; yours: none; nothing was "
                                        "written")


def test_a_face_no_die_shows_is_refused_at_its_place_in_the_request(table: Any) -> None:
    """POST /staged's faces are faces (1 to 1000, C29) as the OpenAPI document says: a 0 is 400 at $.dice[1] of
    this request (it was $.command.dice[3], a field the request does not have, counting the faces staged before)."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    sid = table.command(attack, token=table.alice, stage=True).json()["id"]
    refused = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": sid, "dice": [1, 0]})
    assert refused.status_code == 400 and refused.json()["field"] == "$.dice[1]", refused.text


def test_a_staged_face_its_die_cannot_show_is_refused_at_the_requests_dice(table: Any) -> None:
    """C29: the GM stages Kael's attack; Alice's 9 for Kael's d8 hit die is 400 bad-input at $.dice[0], the face
    of this request's dice at fault (POST /staged's body is {id, dice}: it said $.command.dice, a field the request
    does not have), the command kept for her."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}
    sid = table.command(attack, stage=True).json()["id"]
    refused = table.client.post("/fights/duel/staged", headers=table.auth(table.alice),
                                json={"id": sid, "dice": [9, 6]})
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert (problem["type"], problem["field"], problem["rule"]) == ("/problems/bad-input", "$.dice[0]", "C29")
    assert problem["detail"].startswith("die face 9 is not possible on a d8 (at $.dice[0], for roll #"), problem
    assert options(table, table.alice)["staged"]["id"] == sid


def test_a_roll_off_with_a_hidden_combatant_waits_for_the_gms_dice_not_the_players() -> None:
    """C19, seat secrecy: Kael (Alice's, AGI d6 +0) and the hidden Skarn (AGI d6 +0), of opposing sides, tie at
    3 (the GM typed 3, 3 and Vesh's 6); their roll-off is staged for the GM's dice, Kael's die too (asking Alice
    for her roll-off die told her of a tie with a combatant she does not see: found by a tester); Alice is not
    asked for anything; the GM's faces (5, 2) then settle it."""
    from tests.sheets import sheet as plain

    made = Table()
    with made.client:
        made.create(dice="manual", names=(), hidden=["skarn"], combatants=[
            msgspec.to_builtins(plain("kael")), msgspec.to_builtins(plain("vesh", side="raiders", AGI=(6, 1))),
            msgspec.to_builtins(plain("skarn", side="raiders"))])
        alice = made.client.post("/fights/duel/seats", headers=made.auth(), json={
            "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        staged = made.command({"command": "roll_initiative", "dice": [3, 6, 3]}, stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "the GM", staged.text
        seen = options(made, alice).get("staged")
        assert seen is None or (not seen.get("yours") and seen.get("awaiting") == "the GM"), seen
        done = made.client.post("/fights/duel/staged", headers=made.auth(), json={
            "id": staged.json()["id"], "dice": [5, 2]})
        assert done.status_code == 201, done.text
        assert options(made, made.gm)["options"]["phase"] == "rounds"


def _hidden_caller_table(unseen: bool) -> tuple[Table, str]:
    """A manual-dice fight of Kael (Alice's), Vesh and Skarn; Skarn hidden by the GM, or Unseen (C27)."""
    made = Table()
    made.client.__enter__()
    made.create(dice="manual", names=("kael", "vesh", "skarn"), hidden=[] if unseen else ["skarn"])
    alice = made.client.post("/fights/duel/seats", headers=made.auth(), json={
        "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    if unseen:
        assert made.command({"command": "apply_condition", "who": "skarn", "condition": "Unseen",
                             "reason": "in the reeds"}).status_code == 201
    return made, alice


@pytest.mark.parametrize("unseen", [False, True])
def test_a_hidden_combatants_save_on_a_players_combatant_asks_her_dice_without_naming_it(unseen: bool) -> None:
    """Found by a tester: the GM stages the save Skarn (hidden by the GM, or Unseen: C27) calls on Kael; it waits
    for Alice's save die; her options, table and stream were 500 (the staged command named one she does not see).
    She is shown it as any command of the GM's is (its name alone, no caller), hers to roll (yours, Kael's save
    die), and her options, table fragment and state answer 200; the GM sees the whole command. Once she gave her
    die it waits for the GM's (the caller's): she is answered so, then shown nothing of it."""
    made, alice = _hidden_caller_table(unseen)
    try:
        effect = {"name": "Spores", "save": "AGI", "against": "AGI"}
        staged = made.command({"command": "call_save", "caller": "skarn", "saver": "kael", "effect": effect},
                              stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
        for path in ("options", "table", "state"):
            answer = made.client.get(f"/fights/duel/{path}", headers=made.auth(alice))
            assert answer.status_code == 200, (path, answer.text)
        mine = options(made, alice)["staged"]
        assert mine == {"id": staged.json()["id"], "command": {"command": "call_save"}, "by": "the GM",
                        "awaiting": "Alice", "yours": True,
                        "rolls": [{"roller": "kael", "purpose": "save", "dice": [{"pool": "save", "sides": 6}]}]}
        assert options(made, made.gm)["staged"]["command"] == {"command": "call_save", "caller": "skarn",
                                                               "saver": "kael", "effect": effect}
        given = made.client.post("/fights/duel/staged", headers=made.auth(alice),
                                 json={"id": mine["id"], "dice": [4]})
        assert given.status_code == 202 and given.json() == {  # then the caller's die: the GM's
            "id": mine["id"], "command": {"command": "call_save"}, "by": "the GM", "awaiting": "the GM"}, given.text
        assert "staged" not in options(made, alice)  # no longer hers: it names one she does not see
    finally:
        made.client.__exit__(None, None, None)


def test_a_hidden_combatants_staged_pass_that_lets_her_attack_go_on_asks_her_hit_dice() -> None:
    """Found by a tester: the hidden Skarn attacks Kael (a miss), then Alice's Kael attacks Vesh; the Interrupt window
    (C24) opens for Vesh and Skarn;
    the GM passes Vesh, then stages Skarn's pass (the last answer): the attack goes on and waits for Kael's hit dice.
    Alice's options and table are 200 (they were 500) and show it as the GM's pass, its name alone, hers to roll."""
    made, alice = _hidden_caller_table(False)
    try:
        assert made.command({"command": "roll_initiative", "dice": [2, 1, 6]}).status_code == 201
        assert made.command({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                             "dice": [1, 1, 1]}).status_code == 201  # a miss; Skarn is now engaged with Kael
        for who in ("skarn", "vesh"):
            assert made.command({"command": "end_turn", "who": who}).status_code == 201
        assert options(made, made.gm)["options"]["turn"] == "kael"
        opened = made.command({"command": "declare_attack", "attacker": "kael", "target": "vesh",
                               "weapon": "longsword"}, token=alice)
        assert opened.status_code == 201, opened.text
        waiting = options(made, made.gm)["options"]["waiting"]
        assert waiting["kind"] == "interrupt" and sorted(waiting["who"]) == ["skarn", "vesh"], waiting
        assert made.command({"command": "pass_reaction", "who": "vesh"}).status_code == 201
        staged = made.command({"command": "pass_reaction", "who": "skarn"}, stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
        for path in ("options", "table"):
            answer = made.client.get(f"/fights/duel/{path}", headers=made.auth(alice))
            assert answer.status_code == 200, (path, answer.text)
        mine = options(made, alice)["staged"]
        assert (mine["command"], mine["yours"]) == ({"command": "pass_reaction"}, True)
        assert [(r["roller"], r["purpose"]) for r in mine["rolls"]] == [("kael", "hit")]
    finally:
        made.client.__exit__(None, None, None)


def test_the_gm_is_shown_its_staged_save_and_check_whole(table: Any) -> None:
    """Found by a tester: the GM's own staged call_save and static_check were shown to the GM (its 202, its
    options' staged) as their names alone, though a staged declare_attack kept its fields: the GM sees every
    command whole; Alice, asked for Kael's save die, sees the GM's save as she sees any command of the GM's."""
    effect = {"name": "Cinder breath", "save": "AGI", "against": "INT", "action_cost": 0}
    save = {"command": "call_save", "caller": "vesh", "saver": "kael", "effect": effect}
    staged = table.command(save, stage=True)
    assert staged.status_code == 202 and staged.json()["command"] == save, staged.text
    assert options(table, table.gm)["staged"]["command"] == save
    assert options(table, table.alice)["staged"]["command"] == {"command": "call_save"}
    assert table.client.delete("/fights/duel/staged", headers=table.auth()).status_code == 204
    check = {"command": "static_check", "check": {"who": "vesh", "skill": "Stealth"}, "difficulty": 12}
    staged = table.command(check, stage=True)
    assert staged.status_code == 202 and staged.json()["command"] == check, staged.text
    assert options(table, table.gm)["staged"]["command"] == check


def test_a_players_stream_shows_a_hidden_combatants_save_staged_for_her_dice(tmp_path: Path) -> None:
    """A real server: Alice's live stream is open when the GM stages the hidden Skarn's save on Kael (found by a
    tester: her stream failed and her page reconnected in a loop); it sends an options message with the staged
    command hers to roll, as her GET /options shows it, and no error."""
    import httpx

    from tests.server.processes import Server
    from tests.server.test_app import sheet

    server = Server(tmp_path)
    try:
        status, made = server.call("POST", "/fights", {"id": "duel", "dice": "manual", "hidden": ["skarn"],
                                                       "combatants": [sheet(n) for n in ("kael", "vesh", "skarn")]})
        assert status == 201, made
        gm = made["gm_token"]
        status, alice = server.call("POST", "/fights/duel/seats", {"kind": "player", "name": "Alice",
                                                                   "combatants": ["kael"]}, gm)
        assert status == 201, alice
        with httpx.Client(timeout=20) as client, client.stream(
                "GET", f"http://127.0.0.1:{server.port}/fights/duel/stream",
                headers={"Authorization": f"Bearer {alice['token']}"}) as answer:
            lines = answer.iter_lines()
            kinds: list[str] = []
            sent: dict[str, Any] = {}
            head, asked = server.call("GET", "/fights/duel/options", None, gm)[1]["head"]["seq"], False
            save = {"command": "call_save", "caller": "skarn", "saver": "kael",
                    "effect": {"name": "Spores", "save": "AGI", "against": "AGI"}}
            for line in lines:
                if line.startswith("event: "):
                    kinds.append(line[7:])
                elif line.startswith("data: ") and kinds[-1] == "options":
                    sent = json.loads(line[6:])
                    if "staged" in sent:
                        break
                    if sent["head"]["seq"] == head and not asked:  # caught up: the GM stages the save now
                        status, staged = server.call("POST", "/fights/duel/commands",
                                                     {"command": save, "stage": True}, gm)
                        assert status == 202, staged
                        asked = True
        assert "error" not in kinds and kinds[-2:] == ["options", "options"], kinds
        status, mine = server.call("GET", "/fights/duel/options", None, alice["token"])
        assert status == 200 and sent == mine and mine["staged"]["yours"] is True, mine
        assert mine["staged"]["command"] == {"command": "call_save"}
    finally:
        server.stop()


def test_a_players_options_list_only_its_own_dice(table: Any) -> None:
    """docs/server.md (GET options) and docs/live.md: the GM's choice of Kael's longsword attack on Vesh lists Kael's
    hit dice and Vesh's base defense die; Alice's lists none (whether the attack rolls now or stops at a window
    first turns on what her seat is not shown, a foe's Bonus Actions: omen_core.seats.DICE_UNSAID), and sent with
    "stage" and no faces it waits for her own hit dice (202, hers to give); once she gives them, for the GM's."""
    def rolls(token: str) -> list[tuple[str, str]]:
        offer = next(o for o in options(table, token)["options"]["offers"] if o["command"] == "declare_attack")
        choice = next(c for c in offer["choices"] if c["args"] == {"attacker": "kael", "target": "vesh",
                                                                   "weapon": "longsword"})
        return [(r["roller"], r["purpose"]) for r in (*choice["dice"], *choice["may_roll"])]

    assert rolls(table.alice) == []
    assert rolls(table.gm)[:2] == [("kael", "hit"), ("vesh", "base_defense")]
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}
    staged = table.command(attack, token=table.alice, stage=True)
    assert staged.status_code == 202, staged.text
    assert staged.json()["yours"] is True and [r["purpose"] for r in staged.json()["rolls"]] == ["hit"]
    given = table.client.post("/fights/duel/staged", headers=table.auth(table.alice),
                              json={"id": staged.json()["id"], "dice": [8, 6]})
    assert given.status_code == 202 and given.json()["awaiting"] == "the GM", given.text


def test_a_keyed_retry_of_giving_dice_gets_the_first_answer(table: Any) -> None:
    """A Node client author's find: POST /staged ignored Idempotency-Key, so the retry of an answer lost on the way
    was 409 stale-version "No such staged command now" though the dice went in. Keyed, the retry gets the first
    answer byte for byte and nothing is appended twice; the same key with other dice is 422; a refused request
    (no such staged command) frees its key."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    staged = table.command(attack, token=table.alice, stage=True).json()
    key = {**table.auth(), "Idempotency-Key": "gm-dice-1"}
    done = table.client.post("/fights/duel/staged", headers=key, json={"id": staged["id"], "dice": [1]})
    assert done.status_code == 201, done.text
    head = options(table, table.gm)["head"]
    again = table.client.post("/fights/duel/staged", headers=key, json={"id": staged["id"], "dice": [1]})
    assert (again.status_code, again.content) == (201, done.content)
    assert options(table, table.gm)["head"] == head
    other = table.client.post("/fights/duel/staged", headers=key, json={"id": staged["id"], "dice": [2]})
    assert other.status_code == 422 and other.json()["type"] == "/problems/idempotency-key-reused", other.text
    fresh = {**table.auth(), "Idempotency-Key": "gm-dice-2"}
    for _ in range(2):  # refused, the key is free again: the same refusal, not a kept one
        stale = table.client.post("/fights/duel/staged", headers=fresh, json={"id": "0000000000", "dice": [1]})
        assert stale.status_code == 409 and stale.json()["type"] == "/problems/stale-version", stale.text


def test_a_keyed_command_refused_as_dice_staged_frees_its_key(table: Any) -> None:
    """A command sent with stage and a key while another waits for dice is 409 dice-staged, a refusal: its key is
    freed (the answer was kept, and the same request once the staged one was decided got that 409 again)."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [1, 1]}
    kept = table.command(attack, token=table.alice, stage=True).json()
    key = {"Idempotency-Key": "end-1"}
    end = {"command": "end_turn", "who": "kael"}
    assert table.command(end, headers=key, stage=True).status_code == 409
    assert table.client.post("/fights/duel/staged", headers=table.auth(),
                             json={"id": kept["id"], "dice": [6]}).status_code == 201  # a miss: Kael's turn goes on
    ended = table.command(end, headers=key, stage=True)
    assert ended.status_code == 201, ended.text
    assert [e["type"] for e in ended.json()["events"]][:2] == ["command_issued", "turn_ended"]


def test_a_players_die_for_the_gms_answer_to_a_decision_it_is_not_shown_is_taken(tmp_path: Path) -> None:
    """C38, C40, C29: Vesh, Poisoned by Kael (save ends at Vesh's turn end: RES against the applier's INT), ends
    its turn and answers its own turn.end ability (Brace: nothing to roll) with "stage": the tick's save then rolls
    Vesh's RES die (the GM's) and Kael's INT die (Alice's). The GM gives Vesh's die, then Alice hers: the answer is
    decided (201), not refused as a decision Alice is not shown (it read "the open decision point is vesh's to
    answer, not vesh's" and dropped the command: found by a tester); the save is in the log with both faces: RES
    2 - 1 (Poisoned) = 1 against Kael's INT 5 + 0 = 5, failed (C15)."""
    from omen_core.content import AbilityLibrary, decode_content
    from tests.sheets import sheet as plain

    brace = decode_content('[abilities.brace]\nname = "Brace"\nuse = "trigger"\n'
                           'trigger = { moment = "turn.end", owner = "self" }\n'
                           'effects = [{ kind = "condition", to = "actor", condition = "Marked" }]\n',
                           AbilityLibrary, source="brace.toml", fmt="toml").get("brace")
    made = Table()
    with made.client:
        alice = _poisoned_by_kael(made, msgspec.structs.replace(plain("vesh", side="raiders"), abilities=(brace,)))
        assert made.command({"command": "end_turn", "who": "vesh"}).status_code == 201  # Brace is offered
        staged = made.command({"command": "answer_decision", "decision": "brace", "who": "vesh", "choice": "use"},
                              stage=True)
        assert staged.status_code == 202, staged.text
        gm_turn = options(made, made.gm)["staged"]
        assert gm_turn["yours"] and gm_turn["rolls"][0]["roller"] == "vesh", gm_turn
        after_gm = made.client.post("/fights/duel/staged", headers=made.auth(), json={"id": gm_turn["id"],
                                                                                       "dice": [2]})
        assert after_gm.status_code == 202, after_gm.text
        hers = options(made, alice)["staged"]
        assert hers["yours"] and [r["roller"] for r in hers["rolls"]] == ["kael"], hers
        done = made.client.post("/fights/duel/staged", headers=made.auth(alice), json={"id": hers["id"],
                                                                                     "dice": [5]})
        assert done.status_code == 201, done.text
        saves = [e for e in made.store.read("duel") if type(e.event).__name__ == "SaveResolved"]
        assert [(s.event.saver.total, s.event.opposing.total, s.event.success) for s in saves] == [(1, 5, False)]


def test_the_opposing_die_of_a_hidden_combatants_save_ends_save_is_the_gms(tmp_path: Path) -> None:
    """C40, C15, docs/server.md "Seats and what each sees": Vesh, hidden from the players, is Poisoned by Kael
    (Alice's); at Vesh's turn end it saves RES against Kael's INT. The GM's end_turn asks the GM for both dice,
    Kael's too (asking Alice would tell her of a hidden foe's condition and its save: found by a tester), and
    Alice's events hold neither die: Kael's save die is an envelope to her as the save is."""
    from tests.sheets import sheet as plain

    made = Table()
    with made.client:
        alice = _poisoned_by_kael(made, plain("vesh", side="raiders"), hidden=["vesh"])
        staged = made.command({"command": "end_turn", "who": "vesh"}, stage=True)
        assert staged.status_code == 202, staged.text
        gm = options(made, made.gm)["staged"]
        assert gm["yours"] and [r["roller"] for r in gm["rolls"]] == ["vesh", "kael"], gm
        assert "staged" not in options(made, alice)
        done = made.client.post("/fights/duel/staged", headers=made.auth(), json={"id": gm["id"], "dice": [2, 5]})
        assert done.status_code == 201, done.text
        seen = made.client.get("/fights/duel/events", headers=made.auth(alice)).json()["events"]
        assert not [e for e in seen if e["type"] == "dice_rolled" and (e["event"] or {}).get("purpose") == "save"]
        assert not [e for e in seen if e["type"] == "save_resolved"]


def _poisoned_by_kael(made: Table, vesh: Any, hidden: list[str] | None = None) -> str:
    """A manual-dice duel under the C40 ruleset (tests/data/c40-ruleset.toml): Kael (Alice's, first) and ``vesh``,
    Vesh Poisoned by Kael (save ends at Vesh's turn end: RES against Kael's INT), Kael's turn ended by Alice: Vesh's
    turn is on. Alice's token."""
    from omen_core.content import load_ruleset
    from tests.sheets import sheet as plain

    ruleset = msgspec.to_builtins(load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml"))
    made.create(dice="manual", names=(), ruleset=ruleset, hidden=hidden or [],
                combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))), msgspec.to_builtins(vesh)])
    alice: str = made.client.post("/fights/duel/seats", headers=made.auth(), json={
        "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert made.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
    assert made.command({"command": "apply_condition", "who": "vesh", "condition": "Poisoned",
                         "by": "kael"}).status_code == 201
    assert made.command({"command": "end_turn", "who": "kael"}, token=alice).status_code == 201
    return alice


class TestPhysicalDice:
    """Physical dice in a seeded fight (docs/server.md, "Physical dice in a seeded fight"): the table settings name
    the combatants whose dice their seat types in; a command is staged for those dice when they come, wherever C29
    puts them, and every other die is drawn from the seed."""

    @pytest.fixture
    def seeded(self) -> Any:
        """A seeded duel, Alice playing Kael (whose dice are physical), Vesh the GM's; initiative drawn from the
        seed (Kael has no die in it while it is a GM's command that rolls his: staged for Alice). The seat's making
        says Kael's dice are physical, as GET /seat does (it said none: a tester)."""
        made = Table()
        with made.client:
            made.create(physical=["kael"])
            answer = made.client.post("/fights/duel/seats", headers=made.auth(), json={
                "kind": "player", "name": "Alice", "combatants": ["kael"]})
            assert answer.json()["seat"]["physical"] == ["kael"], answer.text
            made.alice = answer.json()["token"]  # type: ignore[attr-defined]
            yield made

    def test_the_gms_initiative_waits_for_alices_die_and_the_others_are_the_seeds(self, seeded: Any) -> None:
        """roll_initiative by the GM with stage: Kael's initiative die is Alice's to give (202, awaiting Alice);
        given [5], it is decided: Kael's die recorded manual [5], Vesh's seeded (the seed's face for its counter)."""
        from omen_core.dice import seeded_face

        staged = seeded.command({"command": "roll_initiative"}, stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
        mine = options(seeded, seeded.alice)["staged"]
        assert mine["yours"] is True and [(r["roller"], r["purpose"]) for r in mine["rolls"]] == [
            ("kael", "initiative")]
        done = seeded.client.post("/fights/duel/staged", headers=seeded.auth(seeded.alice),
                                  json={"id": mine["id"], "dice": [5]})
        assert done.status_code == 201, done.text
        assert [e["event"]["roller"] for e in done.json()["events"] if e["type"] == "dice_rolled"] == [
            "kael", "vesh"]
        rolls = {r.event.roller: msgspec.to_builtins(r.event) for r in seeded.store.read("duel")
                 if isinstance(r.event, DiceRolled)}
        assert (rolls["kael"]["source"], [d["face"] for d in rolls["kael"]["dice"]]) == ("manual", [5])
        seed = seeded.keep.seed("duel")
        vesh = rolls["vesh"]
        assert vesh["source"] == "seeded" and [d["face"] for d in vesh["dice"]] == [
            seeded_face(seed, "duel", vesh["counter"], i, d["sides"]) for i, d in enumerate(vesh["dice"])]

    def test_without_stage_the_refusal_names_the_physical_roll(self, seeded: Any) -> None:
        """The same command without stage: 422 faces-needed (C29) naming Kael's initiative roll alone; nothing
        written."""
        head = options(seeded, seeded.gm)["head"]
        refused = seeded.command({"command": "roll_initiative"})
        assert refused.status_code == 422 and refused.json()["type"].endswith("/faces-needed"), refused.text
        assert [(d["roller"], d["purpose"]) for d in refused.json()["needed_dice"]] == [("kael", "initiative")]
        assert options(seeded, seeded.gm)["head"] == head

    def test_a_players_attack_waits_for_its_own_physical_dice(self, seeded: Any) -> None:
        """The GM's initiative carries Kael's face (the GM may give any seat's). Alice declares Kael's attack with
        stage and no faces (or, where Vesh may Interrupt, C24, the GM's pass with stage once the window opened): it
        waits for Alice's hit dice (Kael's, physical), nothing written; given [8, 6] it is decided: Kael's dice
        manual, Vesh's base defense the seed's, after them. The seat's own list names Kael; the settings, every
        physical combatant."""
        assert seeded.command({"command": "roll_initiative", "dice": [5]}).status_code == 201
        if options(seeded, seeded.gm)["options"]["turn"] == "vesh":
            assert seeded.command({"command": "end_turn", "who": "vesh"}).status_code == 201
        assert seeded.client.get("/fights/duel/seat", headers=seeded.auth(seeded.alice)).json()["physical"] == [
            "kael"]
        assert seeded.client.get("/fights/duel/settings", headers=seeded.auth()).json()["physical"] == ["kael"]
        head = options(seeded, seeded.gm)["head"]
        staged = seeded.command({"command": "declare_attack", "attacker": "kael", "target": "vesh",
                                 "weapon": "longsword"}, token=seeded.alice, stage=True)
        if staged.status_code == 201:  # Vesh, having had its turn, may Interrupt (C24): the GM lets it pass
            assert staged.json()["options"]["waiting"]["kind"] == "interrupt", staged.text
            head = options(seeded, seeded.gm)["head"]
            staged = seeded.command({"command": "pass_reaction", "who": "vesh"}, stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
        assert options(seeded, seeded.gm)["head"] == head, "nothing is written while it waits"
        mine = options(seeded, seeded.alice)["staged"]
        assert [(r["roller"], r["purpose"]) for r in mine["rolls"]] == [("kael", "hit")]
        done = seeded.client.post("/fights/duel/staged", headers=seeded.auth(seeded.alice),
                                  json={"id": mine["id"], "dice": [8, 6]})
        assert done.status_code == 201, done.text
        rolled = [r.event for r in seeded.store.read("duel") if r.seq > head["seq"] and isinstance(r.event, DiceRolled)]
        assert [(e.roller, e.purpose, e.source) for e in rolled[:2]] == [
            ("kael", "hit", "manual"), ("vesh", "base_defense", "seeded")]
        assert [d.face for d in rolled[0].dice] == [8, 6]

    def test_the_gms_physical_npc_waits_for_the_gm_and_not_a_player(self, seeded: Any) -> None:
        """With Vesh physical instead (the settings' whole list replaced), the initiative waits for the GM's die
        (Vesh has no player), and Alice, whose Kael is the seed's now, may not give it (403); her seat lists none."""
        moved = seeded.client.post("/fights/duel/settings", headers=seeded.auth(), json={"physical": ["vesh"]})
        assert moved.status_code == 200 and moved.json()["physical"] == ["vesh"], moved.text
        assert seeded.client.get("/fights/duel/seat", headers=seeded.auth(seeded.alice)).json()["physical"] == []
        staged = seeded.command({"command": "roll_initiative"}, stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "the GM", staged.text
        given = seeded.client.post("/fights/duel/staged", headers=seeded.auth(seeded.alice),
                                   json={"id": staged.json()["id"], "dice": [3]})
        assert given.status_code == 403, given.text

    def test_changing_the_list_drops_the_command_staged_under_the_old_one(self, seeded: Any) -> None:
        """The initiative waits for Alice's die; the GM empties the list: the staged command is dropped (its faces
        were asked for under the old list), and given again it is decided at once, every die the seed's."""
        assert seeded.command({"command": "roll_initiative"}, stage=True).status_code == 202
        emptied = seeded.client.post("/fights/duel/settings", headers=seeded.auth(), json={"physical": []})
        assert emptied.status_code == 200 and emptied.json()["physical"] == [], emptied.text
        assert "staged" not in options(seeded, seeded.gm)
        again = seeded.command({"command": "roll_initiative"}, stage=True)
        assert again.status_code == 201, again.text
        assert {r.event.source for r in seeded.store.read("duel") if isinstance(r.event, DiceRolled)} == {"seeded"}

    def test_physical_dice_are_refused_in_a_manual_fight_and_for_an_unknown_combatant(self) -> None:
        """422 at $.physical: every die of a manual fight is typed already; 422 unknown-combatant at
        $.physical[0] for an id the fight does not have."""
        made = Table()
        with made.client:
            answer = made.client.post("/fights", json={"id": "m", "dice": "manual", "physical": ["kael"],
                                                        "combatants": [sheet("kael"), sheet("vesh")]})
            assert answer.status_code == 422 and answer.json()["field"] == "$.physical", answer.text
            made.create()
            unknown = made.client.post("/fights/duel/settings", headers=made.auth(), json={"physical": ["nobody"]})
            assert unknown.status_code == 422 and unknown.json()["field"] == "$.physical[0]", unknown.text
