"""Acceptance tests of abilities as data (docs/abilities.md), written from the public docs only (by a tester who
read no code): each scenario's expected numbers are worked out by hand in a comment at its top; these tests run
the CLI in a process of its own, as a user would."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent


def omen(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the omen CLI (``python -m omen_cli``, the interpreter running the tests)."""
    return subprocess.run([sys.executable, "-m", "omen_cli", *args], capture_output=True, text=True, cwd=HERE,
                          timeout=120)


def run(scenario: str, tmp_path: Path) -> tuple[Path, str]:
    """omen run SCENARIO into a fresh .jsonl; assert it ran whole and verifies."""
    log = tmp_path / f"{Path(scenario).stem}.jsonl"
    res = omen("run", str(HERE / scenario), "--log", str(log))
    assert res.returncode == 0, res.stderr
    ver = omen("verify", str(log))
    assert ver.returncode == 0, ver.stdout + ver.stderr
    return log, res.stdout


def state(log: Path) -> dict[str, dict[str, Any]]:
    """The end state by combatant (omen replay --json)."""
    out = json.loads(omen("replay", str(log), "--json").stdout)
    return {c["id"]: c for c in out["combatants"]}


def do(log: Path, command: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """omen do LOG COMMAND (JSON)."""
    return omen("do", str(log), json.dumps(command))


def digest(path: Path) -> str:
    """The log's bytes, hashed (to check that a refused command wrote nothing)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def flat(text: str) -> str:
    """The narrative with its terminal line wrapping undone."""
    return " ".join(text.split())


def test_s01_passive_modifier_dice_inline(tmp_path: Path) -> None:
    """Passive modifiers on hit, damage and defense and keen_edge's die add up as worked out in s01."""
    log, out = run("s01_passive.toml", tmp_path)
    assert state(log)["bram"]["hp"] == 12
    text = flat(out)
    assert "hit total 15 = 3 (primary) + 2 (primary) + 4 (FCS) + 4 prone target, melee (C27) + 2 Battle Focus" in text
    assert "1 Grit (owner at 20 HP or less)" in text
    assert "8 piercing (5 die + 1 WD + 2 Edge Bonus (a melee attack))" in text


def test_s02_allow_defense_reroll_route_will_conversion_aura(tmp_path: Path) -> None:
    """A ranged attack parried (deflecting_stance), a 1 rerolled (lucky_strikes), a routed die, Will conversion."""
    log, out = run("s02_passive_more.toml", tmp_path)
    s = state(log)
    assert (s["bram"]["hp"], s["bram"]["will"], s["bram"]["bonus_actions"]) == (18, 0, 2)
    assert s["ana"]["conditions"] == {}
    text = flat(out)
    assert "8 vs 8: MISS" in text and "1 Commanding Presence" in text
    assert "Ana routes die 1 to damage" in text


def test_s03_attack_rolled_triggers_by_omen_do(tmp_path: Path) -> None:
    """attack.rolled: attacker's hit modifier and reroll, damage modifier, target's and ally's defense modifiers."""
    log, _ = run("s03_rolled.toml", tmp_path)
    steps: list[dict[str, Any]] = [
        {"command": "declare_attack", "attacker": "ana", "target": "bram", "dice": [1, 2, 4]},
        {"command": "answer_decision", "decision": "steady_aim", "who": "ana", "choice": "use"},
        {"command": "answer_decision", "decision": "second_chance", "who": "ana", "choice": "use", "dice": [5]},
        {"command": "answer_decision", "decision": "keen_eye", "who": "ana", "choice": "use"},
        {"command": "answer_decision", "decision": "brace", "who": "bram", "choice": "use"},
        {"command": "answer_decision", "decision": "warding_word", "who": "cara", "choice": "use"},
        {"command": "answer_active_defense", "defender": "bram"},
    ]
    for step in steps:
        res = do(log, step)
        assert res.returncode == 0, (step, res.stderr)
    s = state(log)
    assert (s["ana"]["will"], s["bram"]["hp"], s["bram"]["will"], s["cara"]["bonus_actions"]) == (3, 12, 4, 1)
    explained = flat(omen("explain", str(log), "20").stdout)
    assert "hit total = 8" in explained and "total defense = 7" in explained and "damage (sword) = 8" in explained
    assert "(rerolled by Second Chance (chosen, C39): 1, then 5)" in explained
    assert omen("verify", str(log)).returncode == 0


def test_s04_attack_determined_and_damaged(tmp_path: Path) -> None:
    """attack.determined on crit / hit / miss for attacker and target, then attack.damaged (damage taken); before his
    first turn Bram's Bonus Actions are for defence only, so Hellish Rebuke waits (C20)."""
    log, out = run("s04_determined_damaged.toml", tmp_path)
    s = state(log)
    assert (s["ana"]["hp"], s["ana"]["will"], s["ana"]["bonus_actions"]) == (8, 5, 2)
    assert (s["bram"]["hp"], s["bram"]["will"], s["bram"]["bonus_actions"]) == (7, 3, 1)
    assert s["bram"]["conditions"] == {"Prone": 1}
    assert "12 slashing (4 die + 2 WD + 6 (Savage Blow))" in flat(out)


def test_s05_saves_and_save_resolved(tmp_path: Path) -> None:
    """A save ability with half damage on a success; caller, saver and ally_of_saver triggers; a condition until."""
    log, out = run("s05_saves.toml", tmp_path)
    s = state(log)
    assert (s["ana"]["hp"], s["ana"]["will"]) == (17, 3)
    assert (s["bram"]["hp"], s["bram"]["will"], s["bram"]["conditions"]) == (15, 5, {})
    assert s["cara"]["will"] == 4
    text = flat(out)
    assert "3 cold (7 die - 4 half (a save's success))" in text
    assert "Bram is no longer Fatigued: it lasted until the end of bram's next turn" in text


def test_s06_on_turn_uses_per_fight_deferred(tmp_path: Path) -> None:
    """Free, Action and Bonus Action abilities; a third use of a 2-per-fight ability refused; a deferred cost."""
    log, out = run("s06_on_turn.toml", tmp_path)
    s = state(log)
    assert (s["ana"]["hp"], s["dan"]["hp"], s["bram"]["conditions"]) == (17, 20, {"Prone": 1})
    assert "Blood Price's deferred cost (C41): 3 necrotic" in flat(out)
    before = digest(log)
    third = do(log, {"command": "use_ability", "who": "ana", "ability": "mending_touch", "target": "dan",
                     "dice": [1, 1]})
    assert third.returncode == 2
    assert "[C41] Mending Touch has no use left this fight (2 per fight)" in third.stderr
    foe = do(log, {"command": "use_ability", "who": "ana", "ability": "healing_word", "target": "bram", "dice": [1]})
    assert foe.returncode == 2 and "[C37] Healing Word on 'bram': it targets an ally (or its owner)" in foe.stderr
    assert digest(log) == before


def test_s07_uses_per_turn_and_round(tmp_path: Path) -> None:
    """Per-round uses come back each round, per-turn ones at the owner's turn; reckless_surge's deferred Fatigued."""
    log, _ = run("s07_uses.toml", tmp_path)
    s = state(log)
    assert (s["ana"]["hp"], s["bram"]["hp"]) == (18, 8)
    assert "Fatigued" in s["ana"]["conditions"]


def test_s08_conditions_until_of_save_ends(tmp_path: Path) -> None:
    """until / of on an ability's and the GM's conditions, a save-ends condition and a ticking one (C40)."""
    log, out = run("s08_conditions.toml", tmp_path)
    s = state(log)
    assert (s["bram"]["hp"], s["bram"]["conditions"], s["ana"]["conditions"]) == (15, {}, {})
    text = flat(out)
    assert "4 vs 4: Bram saves against Poisoned" in text
    assert "Ana is no longer Marked: it lasted until the start of bram's next turn" in text


def test_s09_shorthands_and_rage(tmp_path: Path) -> None:
    """features.* shorthands and listed shipped ids give the same dice; only the listed ones record an origin."""
    log, _ = run("s09_shorthands.toml", tmp_path)
    s = state(log)
    assert (s["vic"]["hp"], s["vic"]["will"], s["vic"]["bonus_actions"]) == (4, 0, 1)
    origins = [d.get("origin") for line in log.read_text().splitlines()
               for ev in [json.loads(line)["event"]] if ev["type"] == "dice_rolled" for d in ev["dice"]]
    assert origins.count("+2 primary dice") == 2 and origins.count("Brute Rage") == 1
    assert len([o for o in origins if o]) == 3


def test_s10_shorthand_beside_a_listed_id(tmp_path: Path) -> None:
    """One sheet's shorthand and another's listed id of the same ability each give their own combatant one die."""
    log, _ = run("s10_shorthand_mix.toml", tmp_path)
    assert state(log)["vic"]["hp"] == 5


ERRORS = [
    ("e01_passive_damage.toml", "e01_passive_damage_lib.toml:5:",
     "[C37] a passive ability's effects are modifier, dice, allow_defense, reroll, route and will_conversion; "
     "'damage' needs a trigger (at $.abilities.x.effects[0].kind)"),
    ("e02_shorthand_and_id.toml", "e02_shorthand_and_id.toml:13:",
     "features.rage is the shorthand of the ability 'brute_rage', which abilities lists too: keep one"),
    ("e03_unknown_id.toml", "e03_unknown_id.toml:", "[C37]"),
    ("e04_shipped_id.toml", "e04_shipped_id_lib.toml:1:", "(at $.abilities.riposte)"),
    ("e05_missing_library.toml", "e05_missing_library.toml:5:", "(at $.fight.abilities[1])"),
    ("e06_unknown_condition.toml", "e06_unknown_condition.toml:13:",
     "[C28] unknown condition 'Burning'"),
    ("e07_save_ends_on_owner.toml", "e07_save_ends_on_owner.toml:13:",
     "[C40]"),
    ("e08_typo.toml", "e08_typo_lib.toml:4:", "unknown field `efects` (at $.abilities.typo.efects)"),
    ("e09_outcome_at_rolled.toml", "e09_outcome_at_rolled.toml:13:", "attack.determined"),
    ("e12_two_sheets_one_id.toml", "e12_two_sheets_one_id.toml:20:", "[C37]"),
    ("e13_no_id_inline.toml", "e13_no_id_inline.toml:13:", "without an id (at $.combatants[0].abilities[0])"),
    ("e14_save_on_self.toml", "e14_save_on_self.toml:13:", "a save is made by another"),
]


@pytest.mark.parametrize(("scenario", "where", "what"), ERRORS)
def test_content_errors(tmp_path: Path, scenario: str, where: str, what: str) -> None:
    """Each error of docs/abilities.md "Errors": one line naming file, line and field; exit 2; no log written."""
    log = tmp_path / "err.jsonl"
    res = omen("run", str(HERE / "errors" / scenario), "--log", str(log))
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("omen: error: ") and res.stderr.count("\n") == 1
    assert where in res.stderr and what in res.stderr
    assert "(at $." in res.stderr
    assert not log.exists()


@pytest.mark.parametrize(("command", "what"), [
    ({"command": "answer_decision", "decision": "steady_aim", "who": "bram", "choice": "use"}, "not bram's"),
    ({"command": "answer_decision", "decision": "steady_aim", "who": "ana", "choice": "ward"}, "no choice 'ward'"),
    ({"command": "answer_decision", "decision": "riposte", "who": "ana", "choice": "use"}, "not 'riposte'"),
    ({"command": "declare_attack", "attacker": "bram", "target": "ana", "rage": True}, "not accepted now"),
])
def test_answer_errors_write_nothing(tmp_path: Path, command: dict[str, Any], what: str) -> None:
    """A decision answered by the wrong one, with an unknown choice or for another decision: exit 2, log unchanged."""
    log, _ = run("s03_rolled.toml", tmp_path)
    attack = {"command": "declare_attack", "attacker": "ana", "target": "bram", "dice": [1, 2, 4]}
    assert do(log, attack).returncode == 0
    before = digest(log)
    res = do(log, command)
    assert res.returncode == 2 and what in res.stderr
    assert digest(log) == before


def test_rage_without_an_ability_is_refused(tmp_path: Path) -> None:
    """declare_attack with rage for a combatant none of whose abilities names it: [C12], exit 2, nothing written."""
    log, _ = run("s03_rolled.toml", tmp_path)
    before = digest(log)
    res = do(log, {"command": "declare_attack", "attacker": "ana", "target": "bram", "rage": True, "dice": [1, 1, 1]})
    assert res.returncode == 2 and "[C12] 'ana' has no Brute rage dice to add" in res.stderr
    assert digest(log) == before


def test_undo_gives_a_use_and_its_cost_back(tmp_path: Path) -> None:
    """Undoing a once-per-round triggered use (steady_aim, 1 Will) gives back the Will and the use (C41)."""
    log, _ = run("s03_rolled.toml", tmp_path)
    attack = {"command": "declare_attack", "attacker": "ana", "target": "bram", "dice": [1, 2, 4]}
    assert do(log, attack).returncode == 0
    assert do(log, {"command": "answer_decision", "decision": "steady_aim", "who": "ana",
                    "choice": "use"}).returncode == 0
    assert state(log)["ana"]["will"] == 4
    assert omen("undo", str(log)).returncode == 0
    assert state(log)["ana"]["will"] == 5
    # Found by running: the undo voids the whole attack (from its declaration), not the answer alone.
    assert do(log, attack).returncode == 0
    assert do(log, {"command": "answer_decision", "decision": "steady_aim", "who": "ana",
                    "choice": "use"}).returncode == 0
    assert state(log)["ana"]["will"] == 4


def test_undo_of_a_per_fight_use_on_ones_turn(tmp_path: Path) -> None:
    """Undoing a use_ability gives its per-fight use back, and undoing blood_price drops its deferred cost (C41)."""
    log, _ = run("s06_on_turn.toml", tmp_path)
    # round 4, ana's turn, mending_touch used twice: undo back to before the second use is not a command away,
    # so check the deferred cost instead: blood_price now, then undo: no necrotic at ana's next turn.
    assert do(log, {"command": "use_ability", "who": "ana", "ability": "blood_price", "dice": [1, 1]}).returncode == 0
    assert omen("undo", str(log)).returncode == 0
    for who in ("ana", "dan", "bram"):
        assert do(log, {"command": "end_turn", "who": who}).returncode == 0
    assert state(log)["ana"]["hp"] == 17
    assert omen("verify", str(log)).returncode == 0
