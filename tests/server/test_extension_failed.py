"""A broken extension behind ``omen serve`` (omen_server/app.py, asgi.py): the problem ``extension-failed``, naming
the extension, and for a command appended before its answer failed, the seqs and head it was appended at."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from omen_core import Fight
from tests.server.test_app import Table
from tests.sheets import sheet
from tests.test_extension_failures import MODULE, _install, _raises, _raises_after_ward


def _sheet(cid: str, side: str = "heroes", **more: Any) -> dict[str, Any]:
    built: dict[str, Any] = msgspec.to_builtins(msgspec.structs.replace(sheet(cid, side=side), **more))
    return built


@pytest.fixture
def table() -> Any:
    """Kael and Shade (with Arcane Ward) against Vesh, in a fight whose dice are the commands' faces; Shade engaged
    with Kael (the GM's tokens)."""
    made = Table()
    with made.client:
        answer = made.client.post("/fights", json={"id": "duel", "dice": "manual", "combatants": [
            _sheet("kael"), _sheet("shade", abilities=("arcane_ward",)), _sheet("vesh", side="raiders")]})
        assert answer.status_code == 201, answer.text
        made.gm = answer.json()["gm_token"]
        assert made.command({"command": "engage", "who": "shade", "others": ["kael"]}).status_code == 201
        yield made


ATTACK = {"command": "declare_attack", "attacker": "vesh", "target": "kael", "unarmed": True, "dice": [5, 3, 1]}
SAID = f"extension 'arcane_ward' ({MODULE}) failed in its terms on defense: ZeroDivisionError: boom after ward"


def test_a_command_refused_by_an_extension_is_500_extension_failed_writing_nothing(
        table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window's responders raising refuses the attack: 500 ``/problems/extension-failed`` naming the extension,
    its module and the row; the log holds what it held."""
    before = Fight.load(table.store, "duel").version
    _install(monkeypatch, _raises)
    answer = table.command(ATTACK)
    assert answer.status_code == 500 and answer.json() == {
        "type": "/problems/extension-failed", "title": "An extension failed", "status": 500,
        "detail": f"extension 'arcane_ward' ({MODULE}) failed in its window 'arcane_ward' responders: ValueError: "
                  "boom in responders"}
    assert Fight.load(table.store, "duel").version == before


def test_a_command_appended_before_its_answer_failed_says_so(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A term handler failing only once ``ward`` is chosen lets the attack in; its answer (whose options probe
    ``ward``) says the command was appended, its seqs and head, and what failed; GET /state and /options answer
    the same problem until the command is undone."""
    before = Fight.load(table.store, "duel").version
    _install(monkeypatch, terms=_raises_after_ward)
    answer = table.command(ATTACK)
    fight = Fight.load(table.store, "duel")
    assert fight.version > before
    head = f"{fight.version}:{fight.state.last_hash}"
    assert answer.status_code == 500 and answer.json() == {
        "type": "/problems/extension-failed", "title": "An extension failed", "status": 500,
        "current_version": fight.version,
        "detail": f"the command was appended (seqs {before + 1}-{fight.version}, head {head}), but its answer could "
                  f"not be made: {SAID}; the fight's state and options fail the same way until the extension is "
                  "fixed or the command undone"}
    for path in ("state", "options"):
        again = table.client.get(f"/fights/duel/{path}", headers=table.auth())
        assert (again.status_code, again.json()["type"], again.json()["detail"]) == (
            500, "/problems/extension-failed", SAID)
    assert table.command({"command": "undo"}).status_code == 201
    assert table.client.get("/fights/duel/state", headers=table.auth()).status_code == 200


def test_the_appended_answer_is_kept_for_its_key(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sent again with the same Idempotency-Key, the appended command's problem is answered again and nothing is
    appended twice."""
    _install(monkeypatch, terms=_raises_after_ward)
    first = table.command(ATTACK, headers={"Idempotency-Key": "k-1"})
    version = Fight.load(table.store, "duel").version
    again = table.command(ATTACK, headers={"Idempotency-Key": "k-1"})
    assert (again.status_code, again.content) == (first.status_code, first.content) and first.status_code == 500
    assert Fight.load(table.store, "duel").version == version


def test_a_players_seat_is_told_only_that_an_extension_failed(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/server.md (nothing a seat receives depends on what it may not see): once a term handler fails, a player's
    GET /state, /options and /table say only that an extension installed on this server failed, not its id, its
    module nor what it raised (Ann, not shown the ability, read "extension 'grit_teeth' ... KeyError": an extension
    tester); the GM's say all of it."""
    from tests.server.test_table import _seat

    ann = _seat(table, "Ann", "kael")
    _install(monkeypatch, terms=_raises_after_ward)
    assert table.command(ATTACK).status_code == 500
    for path in ("state", "options", "table"):
        said = table.client.get(f"/fights/duel/{path}", headers=table.auth(ann))
        assert (said.status_code, said.json()["type"]) == (500, "/problems/extension-failed"), path
        assert said.json()["detail"] == ("an extension installed on this server failed (the GM is told which, and "
                                         "what it raised)"), path
        assert "arcane" not in said.text.lower() and MODULE not in said.text, path
    assert table.client.get("/fights/duel/state", headers=table.auth()).json()["detail"] == SAID
