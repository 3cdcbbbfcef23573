"""A new ability is content only (C37, C38): one written in this file, with its own trigger and decision point, is
played through ``omen do``, the HTTP API of a real ``omen serve`` and the table page in a real Chromium, with no
Python added to omen_core (docs/abilities.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from typer.testing import CliRunner

from omen_cli import app
from omen_core.content import Ability, decode_content
from tests.browser import chromium as find_chromium
from tests.browser import launch
from tests.server.processes import Server
from tests.sheets import sheet

#: The table's own abilities, written here and nowhere else: a triggered one with its own decision point, and one
#: used on one's turn.
LIBRARY = """
[abilities.counterspark]
name = "Counterspark"
summary = "When a melee attack on the owner misses, spend a Bonus Action: the attacker takes 2 lightning."
use = "trigger"
trigger = { moment = "attack.determined", owner = "target", outcome = "miss" }
when = { attack_kinds = ["melee", "unarmed"] }
cost = { bonus_actions = 1 }
effects = [{ kind = "damage", to = "target", flat = 2, damage_type = "lightning" }]

[abilities.mend]
name = "Mend"
summary = "A Bonus Action: oneself or an ally regains 3 HP."
use = "bonus_action"
target = "ally"
effects = [{ kind = "heal", to = "target", flat = 3 }]
"""


def abilities() -> list[Ability]:
    """The library's abilities, written out (what a sheet sent over the API carries)."""
    text = LIBRARY.replace("[abilities.counterspark]", 'id = "counterspark"', 1)
    spark, mend = text.split("[abilities.mend]")
    return [decode_content(spark, Ability, fmt="toml"), decode_content('id = "mend"\n' + mend, Ability, fmt="toml")]


def sheets() -> list[dict[str, Any]]:
    """Ana (with both abilities, written out) and the orc, as JSON sheets."""
    ana = msgspec.structs.replace(sheet("ana"), abilities=tuple(abilities()))
    return [msgspec.to_builtins(ana), msgspec.to_builtins(sheet("orc", side="raiders"))]


def test_a_new_ability_plays_through_omen_do(tmp_path: Path) -> None:
    """From a scenario naming the library file, ``omen do`` answers Counterspark's decision point (the orc's 1 + 1 =
    2 misses Ana's 6: it is offered; she pays a Bonus Action, the orc takes 2) and uses Mend; ``omen status``
    shows the decision while it is open; the log verifies."""
    (tmp_path / "party.toml").write_text(LIBRARY)
    scenario = tmp_path / "fight.toml"
    scenario.write_text('[fight]\nid = "spark"\nabilities = ["party.toml"]\n\n'
                        '[[combatants]]\nsheet = "ana.toml"\n\n[[combatants]]\nsheet = "orc.toml"\n\n'
                        '[[commands]]\ncommand = "declare_attack"\nattacker = "orc"\ntarget = "ana"\nunarmed = true\n'
                        'dice = [1, 1, 6]\n')
    ana = {**msgspec.to_builtins(sheet("ana")), "abilities": ["counterspark", "mend"]}
    (tmp_path / "ana.json").write_text(json.dumps(ana))
    (tmp_path / "orc.json").write_text(json.dumps(msgspec.to_builtins(sheet("orc", side="raiders"))))
    scenario.write_text(scenario.read_text().replace("ana.toml", "ana.json").replace("orc.toml", "orc.json"))
    runner = CliRunner()
    log = tmp_path / "spark.jsonl"
    ran = runner.invoke(app, ["run", str(scenario), "--log", str(log)])
    assert ran.exit_code == 0, ran.output
    status = runner.invoke(app, ["status", str(log)])
    assert status.exit_code == 0 and "Counterspark" in status.output, status.output
    answered = runner.invoke(app, ["do", str(log), json.dumps({"command": "answer_decision", "decision":
                                                               "counterspark", "who": "ana", "choice": "use"})])
    assert answered.exit_code == 0, answered.output
    mended = runner.invoke(app, ["do", str(log), json.dumps({"command": "use_ability", "who": "ana",
                                                             "ability": "mend"})])
    assert mended.exit_code == 0, mended.output
    end = json.loads(runner.invoke(app, ["replay", str(log), "--json"]).stdout)
    by_id = {c["id"]: c for c in end["combatants"]}
    assert by_id["orc"]["hp"] == 18 and by_id["ana"]["bonus_actions"] == 0
    assert runner.invoke(app, ["verify", str(log)]).exit_code == 0


def test_a_new_ability_plays_through_the_http_api_and_the_table_page(tmp_path: Path) -> None:
    """On a real server: the fight is created with Ana's abilities written out in her JSON sheet; the orc's attack
    misses (manual dice 1, 1, 6) and the fight waits on Counterspark; the GM's table page in Chromium shows the
    decision box with the ability's title and a button per choice, and a click on "Use" answers it (the orc at
    18); the page then offers Mend as an ability button, which the API uses; the log verifies."""
    from playwright.sync_api import expect, sync_playwright

    chromium = find_chromium()
    server = Server(tmp_path)
    try:
        status, made = server.call("POST", "/fights", {"id": "spark", "dice": "manual", "combatants": sheets()},
                                   token=server.create_token)
        assert status == 201, made
        gm = made["gm_token"]
        status, answer = server.call("POST", "/fights/spark/commands", {"command": {
            "command": "declare_attack", "attacker": "orc", "target": "ana", "unarmed": True, "dice": [1, 1, 6]}},
            token=gm)
        assert status == 201, answer
        assert answer["options"]["waiting"]["kind"] == "counterspark"
        with sync_playwright() as pw:
            browser = launch(pw, chromium)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(10_000)
                page.goto(f"http://127.0.0.1:{server.port}/table/spark#token={gm}")
                decision = page.locator(".decision")
                expect(decision).to_contain_text("Counterspark")
                decision.locator("button", has_text="Use").click()
                page.wait_for_function("() => !document.body.dataset.busy")
                expect(page.locator(".decision")).to_have_count(0)
                expect(page.locator("form[data-command=use_ability]").first).to_contain_text("Mend")
            finally:
                browser.close()
        status, state = server.call("GET", "/fights/spark/state", token=gm)
        assert status == 200, state
        hp = {c["id"]: c["hp"] for c in state["combatants"]}
        assert hp["orc"] == 18
        status, used = server.call("POST", "/fights/spark/commands", {"command": {
            "command": "use_ability", "who": "ana", "ability": "mend"}}, token=gm)
        assert status == 201, used
        assert any(e["event"]["type"] == "ability_used" for e in used["events"])
        status, verdict = server.call("GET", "/fights/spark/verify", token=gm)
        assert status == 200 and verdict["clean"], verdict
    finally:
        server.stop()
