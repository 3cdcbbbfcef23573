"""omen_server/staging.py: players roll their own dice: a command whose next dice are another seat's is staged in
the keep until that seat gives them, then decided as one command with all its faces (C29 order)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tests.server.test_app import Table


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
    """The events without what differs between two runs (time, hashes, who gave the command)."""
    out = []
    for e in events:
        body = dict(e["event"] or {})
        body.pop("by", None)
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


def test_a_spectator_withdraws_nothing_whether_or_not_a_command_is_staged(table: Any) -> None:
    """A spectator's DELETE /staged is 403 with nothing staged and with a command staged (the answer does not
    depend on what is staged), and the staged command stays."""
    assert table.client.delete("/fights/duel/staged", headers=table.auth(table.bob)).status_code == 403
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
              "dice": [8, 6]}
    assert table.command(attack, token=table.alice, stage=True).status_code == 202
    refused = table.client.delete("/fights/duel/staged", headers=table.auth(table.bob))
    assert refused.status_code == 403 and "staged" in options(table, table.gm)


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
    assert problem["detail"].startswith("3 face(s) given, but this seat's dice here are 2 (kael's hit: primary d8, "
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
    assert refused.json()["detail"] == ("1 face(s) given, but this command rolls fewer dice; yours: none; nothing was "
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
    """C29: the GM stages Kael's attack; Alice's 9 for Kael's d8 hit die is 400 bad-input at $.dice (POST /staged's
    body is {id, dice}: it said $.command.dice, a field the request does not have), the command kept for her."""
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}
    sid = table.command(attack, stage=True).json()["id"]
    refused = table.client.post("/fights/duel/staged", headers=table.auth(table.alice),
                                json={"id": sid, "dice": [9, 6]})
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert (problem["type"], problem["field"], problem["rule"]) == ("/problems/bad-input", "$.dice", "C29")
    assert problem["detail"].startswith("die face 9 is not possible on a d8"), problem
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
