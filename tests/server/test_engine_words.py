"""The words omen's own messages are made of, which no id or name of a served sheet may be (docs/server.md,
"Threat model")."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omen_core.seats import PUBLIC_GEAR_NAMES
from omen_server.app import engine_words
from omen_server.table import bundled_sheets
from tests.engine_words import WORDS_FILE, render
from tests.server.test_app import Table


def test_the_word_list_is_current() -> None:
    """omen_server/data/engine-words.txt is what ``python -m tests.engine_words`` makes of the code now (a message
    changed without it would let a secret spelled as its new word through)."""
    assert WORDS_FILE.read_text(encoding="utf-8") == render(), "regenerate: python -m tests.engine_words"
    assert {"turn", "round", "it", "now"} <= engine_words()


def test_the_bundled_sheets_and_shipped_abilities_are_no_engine_words() -> None:
    """The sheets the set-up page offers may be served as they are: none of their ids and names is one of the
    words (armor's and a shield's default names, shown to everyone, aside)."""
    from omen_core.content import SHIPPED_ABILITIES

    said = {w for s in bundled_sheets().values() for w in (s["id"], s["name"], *(x["id"] for x in s["weapons"]))}
    said |= {w for a in SHIPPED_ABILITIES.abilities.values() for w in (a.id, a.name)}
    assert said & engine_words() <= PUBLIC_GEAR_NAMES


def _with(sheet: dict[str, Any], path: str, value: str) -> dict[str, Any]:
    changed = copy.deepcopy(sheet)
    if path == "id":
        changed["id"] = value
    else:
        changed["weapons"][0]["id"] = value
        changed["wielding"] = [value if w == sheet["weapons"][0]["id"] else w for w in sheet.get("wielding", [])]
    return changed


@pytest.mark.parametrize(("who", "path", "word", "field"), [
    (2, "id", "turn", "$.combatants[2].id"),
    (1, "weapon", "round", "$.combatants[1].weapons[0].id"),
])
def test_a_sheet_id_that_is_an_engine_word_is_refused(who: int, path: str, word: str, field: str) -> None:
    """A hidden foe's id "turn" made a player's refusal read "'kael' cannot end the (hidden): it is vesh's (hidden)"
    where a fight without it read "turn" (a tester); a foe's weapon id "round" did the same with nothing hidden.
    POST /fights refuses such an id, 422 invalid-request at its place, and makes nothing."""
    sheets = bundled_sheets()
    roster = [sheets["kael"], sheets["vesh"], sheets["skarn"]]
    roster[who] = _with(roster[who], path, word)
    table = Table()
    with table.client:
        answer = table.client.post("/fights", headers=table.auth(table.create_token), json={
            "id": "words", "dice": "manual", "combatants": roster, "hidden": [roster[2]["id"]]})
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert (problem["type"], problem["field"]) == ("/problems/invalid-request", field), problem
        assert problem["detail"].startswith(f"{word!r} is one of the words omen's own messages are made of")
        assert table.client.get("/fights").json()["fights"] == []
