"""Acceptance tests of the trigger moments condition.applied and check.resolved (docs/abilities.md), written from the
public docs only (by a tester who read no code): each scenario's numbers are worked out by hand in a comment at its
top (C29 dice order); these tests drive the omen CLI in a process of its own, as a user would."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent

#: The `omen do` commands below, as JSON.
Command = dict[str, Any]


def omen(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the omen CLI (``python -m omen_cli``, the interpreter running the tests)."""
    return subprocess.run([sys.executable, "-m", "omen_cli", *args], capture_output=True, text=True, cwd=HERE,
                          timeout=120)


def run(scenario: str, tmp_path: Path) -> Path:
    """omen run SCENARIO into a fresh .jsonl; assert it ran whole and `omen verify` finds it clean."""
    log = tmp_path / f"{Path(scenario).stem}.jsonl"
    res = omen("run", str(HERE / scenario), "--log", str(log), "--quiet")
    assert res.returncode == 0, res.stderr
    verify(log)
    return log


def verify(log: Path) -> None:
    """omen verify LOG exits 0 (clean)."""
    res = omen("verify", str(log))
    assert res.returncode == 0, res.stdout + res.stderr


def state(log: Path) -> dict[str, tuple[int, int, int, dict[str, int]]]:
    """The end state by combatant (omen replay --json): HP, Will, Bonus Actions, conditions."""
    out = json.loads(omen("replay", str(log), "--json").stdout)
    return {c["id"]: (c["hp"], c["will"], c["bonus_actions"], c["conditions"]) for c in out["combatants"]}


def do(log: Path, command: Command) -> subprocess.CompletedProcess[str]:
    """omen do LOG COMMAND (JSON)."""
    return omen("do", str(log), json.dumps(command))


def events(log: Path) -> list[dict[str, Any]]:
    """Every stored line of the log (docs/events.md: one JSON object per line)."""
    return [json.loads(line) for line in log.read_text().splitlines()]


def live(log: Path) -> list[dict[str, Any]]:
    """The lines no undo voided (docs/events.md "Undo": `undone` voids from_seq..to_seq, `redone` takes it back)."""
    lines = events(log)
    undos = {ln["seq"]: ln["event"] for ln in lines if ln["event"]["type"] == "undone"}
    for ln in lines:
        if ln["event"]["type"] == "redone":
            undos.pop(ln["event"]["undo_seq"], None)
    voided = {s for u in undos.values() for s in range(u["from_seq"], u["to_seq"] + 1)}
    return [ln for ln in lines if ln["seq"] not in voided]


def decisions(log: Path) -> list[tuple[str, str, list[str]]]:
    """Every decision point opened (not voided), in order: (decision, hook, responders)."""
    return [(e["decision"], e["hook"], e["responders"]) for ln in live(log)
            for e in [ln["event"]] if e["type"] == "decision_opened"]


def types(log: Path, first: int, last: int) -> list[str]:
    """The event types of seqs first..last."""
    return [ln["event"]["type"] for ln in events(log) if first <= ln["seq"] <= last]


def seq_of(log: Path, kind: str, **fields: Any) -> int:
    """The seq of the first event of type ``kind`` whose fields hold these values."""
    return next(int(ln["seq"]) for ln in events(log) if ln["event"]["type"] == kind
                and all(ln["event"].get(k) == v for k, v in fields.items()))


def digest(path: Path) -> str:
    """The log's bytes, hashed (to check that a refused command wrote nothing)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def flat(text: str) -> str:
    """Terminal output with its line wrapping undone."""
    return " ".join(text.split())


CA = "condition.applied"
DECISION = ["decision_opened", "command_issued", "decision_answered"]
USED = [*DECISION, "cost_paid", "decision_closed"]
FREE = [*DECISION, "decision_closed"]  # a pass, or a use that costs nothing


def test_s11_branches_open_condition_applied(tmp_path: Path) -> None:
    """An attack's on_hit condition opens condition.applied after its damage and attack.damaged (applier, afflicted,
    ally, in that order, each answer's target as documented); trip's Prone (an answer's) and a Prone at its cap open
    nothing (C25, C28, C38)."""
    log = run("s11_condition_attack.toml", tmp_path)
    assert state(log) == {"ana": (15, 5, 2, {}), "bram": (5, 4, 2, {"Prone": 1}), "cara": (20, 4, 2, {})}
    assert decisions(log) == [
        ("trip", "attack.determined", ["ana"]), ("barbed_hide", "attack.damaged", ["bram"]),
        ("press_advantage", CA, ["ana"]), ("quick_recovery", CA, ["bram"]), ("spiteful_fall", CA, ["bram"]),
        ("steady_hand", CA, ["cara"]),
        ("trip", "attack.determined", ["ana"]),
    ]
    # The first attack, from its hit determined to its settling (docs/events.md: an answer's cost right after it;
    # docs/abilities.md: condition.applied after the damage and the branches, before the action settles).
    hit = seq_of(log, "hit_determined")
    settled = seq_of(log, "action_settled", action=seq_of(log, "attack_declared"))
    assert types(log, hit, settled) == [
        "hit_determined", *FREE,                                      # trip: pass
        "damage_resolved", "resource_changed", "condition_applied",  # 7 slashing, then on_hit Prone
        *FREE, "damage_resolved", "resource_changed",                 # attack.damaged: barbed_hide, free
        *USED, "damage_resolved", "resource_changed",                 # press_advantage: 2 piercing to bram
        *USED, "condition_cleared",                                   # quick_recovery
        *USED, "dice_rolled", "damage_resolved", "resource_changed",  # spiteful_fall: 1d4 fire to ana
        *USED, "dice_rolled", "resource_changed",                     # steady_hand: bram heals 1d4
        "action_settled"]
    targets = [(e["target"], e["final"]) for ln in events(log) for e in [ln["event"]] if e["type"] == "damage_resolved"]
    assert targets == [("bram", 7), ("ana", 2), ("bram", 2), ("ana", 3), ("bram", 6), ("bram", 4)]
    explained = flat(omen("explain", str(log), str(seq_of(log, "attack_declared"))).stdout)
    assert "hit total = 6" in explained and "damage (sword) = 7" in explained
    assert "damage (Press the Advantage: a consequence) = 2" in explained
    assert "damage (Spiteful Fall: a consequence) = 3" in explained


def test_s12_dying_from_the_attacks_damage(tmp_path: Path) -> None:
    """Dying from the attack's own damage and its Prone branch: applier first, guardians_vow raises the ally,
    steady_hand asked once for two conditions; Dying from flame_lash's damage (an answer's) opens nothing (C28, C36,
    C38)."""
    log = run("s12_condition_dying.toml", tmp_path)
    assert state(log) == {"ana": (18, 4, 2, {}), "bram": (0, 5, 2, {"Prone": 1, "Dying": 1}),
                          "cara": (20, 3, 2, {})}
    assert decisions(log) == [("coup_de_grace", CA, ["ana"]), ("guardians_vow", CA, ["cara"]),
                              ("steady_hand", CA, ["cara"]), ("flame_lash", "attack.determined", ["ana"])]
    applied = [(e["who"], e["condition"]) for ln in events(log) for e in [ln["event"]]
               if e["type"] == "condition_applied"]
    assert applied[:2] == [("bram", "Dying"), ("bram", "Prone")]
    hp = [(e["before"], e["after"]) for ln in events(log) for e in [ln["event"]]
          if e["type"] == "resource_changed" and e["who"] == "bram" and e["resource"] == "hp"]
    assert hp[:3] == [(6, 0), (0, 2), (2, 5)]


def test_s13_saves_and_abilities_open_condition_applied(tmp_path: Path) -> None:
    """A save's failure branch (shove, call_save) and an ability used on one's turn (hobble) open condition.applied;
    a save's success applies nothing (C15); binding_hex's Fatigued (an answer's) opens no shared_burden (C37, C38)."""
    log = run("s13_condition_save_ability.toml", tmp_path)
    assert state(log) == {"ana": (14, 4, 1, {}), "bram": (16, 3, 2, {"Prone": 1}), "cara": (20, 4, 2, {})}
    order = ["press_advantage", "quick_recovery", "spiteful_fall", "steady_hand"]
    assert [d[0] for d in decisions(log)] == ["binding_hex", *order, "binding_hex", *order, *order]
    assert all(hook == CA for kind, hook, _ in decisions(log) if kind != "binding_hex")
    # The tied save (the saver wins, C15): save_resolved then action_settled, nothing in between.
    tied = seq_of(log, "save_called", effect={"name": "tangling net", "save": "AGI", "against": "AGI",
                                              "spell": False, "action_cost": 0,
                                              "on_failure": [{"kind": "condition", "condition": "Prone"}]})
    assert types(log, tied, tied + 4) == ["save_called", "dice_rolled", "dice_rolled", "save_resolved",
                                          "action_settled"]
    # hobble: an Action declared beside Bram, whose Interrupt window comes first (C24; he lets it pass), then its
    # own effects in written order, then condition.applied (docs/abilities.md).
    used = seq_of(log, "ability_used", ability="hobble")
    assert types(log, used, used + 9) == ["ability_used", "reaction_window_opened", "command_issued",
                                          "reaction_passed", "reaction_window_closed", "cost_paid", "damage_resolved",
                                          "resource_changed", "condition_applied", "decision_opened"]


def test_s14_check_resolved(tmp_path: Path) -> None:
    """Static checks (a tie is no success) and contests (each side its own outcome, the initiator asked first, the
    defender wins a tie, C16); a check nobody's ability answers records no moment_reached (C38)."""
    log = run("s14_check_resolved.toml", tmp_path)
    assert state(log) == {"ana": (17, 4, 2, {}), "bram": (18, 4, 2, {}), "cara": (20, 5, 2, {})}
    evs = [ln["event"] for ln in events(log)]
    assert [e["outcome"] for e in evs if e["type"] == "static_check_resolved"] == ["tie", "failure", "success",
                                                                                    "success"]
    moments = [(e["moment"], e["round"], e["who"], e.get("other"), e["outcome"]) for e in evs
               if e["type"] == "moment_reached"]
    assert moments == [("check.resolved", 1, "ana", None, "failure"), ("check.resolved", 1, "ana", None, "failure"),
                       ("check.resolved", 1, "ana", None, "success"),
                       ("check.resolved", 1, "bram", "ana", "failure"), ("check.resolved", 1, "ana", "bram", "failure"),
                       ("check.resolved", 1, "cara", "bram", "success")]
    assert [(d[0], d[2]) for d in decisions(log)] == [
        ("bitter_lesson", ["ana"]), ("second_guess", ["ana"]),
        ("bitter_lesson", ["ana"]), ("second_guess", ["ana"]),
        ("triumph", ["ana"]), ("second_guess", ["ana"]),
        ("bitter_lesson", ["bram"]), ("triumph", ["ana"]),
        ("bitter_lesson", ["ana"]), ("triumph", ["bram"]),
        ("bitter_lesson", ["bram"])]
    assert all(hook == "check.resolved" for _, hook, _ in decisions(log))
    # C1, the tie, whole: the check, the moment, bitter_lesson (no cost) and second_guess, then it settles.
    first = seq_of(log, "command_issued", command={"command": "static_check", "dice": [5], "difficulty": 6,
                                                   "check": {"who": "ana", "skill": "Athletics"}})
    moment = seq_of(log, "moment_reached")
    settled = seq_of(log, "action_settled", action=moment)
    assert types(log, first, settled) == [
        "command_issued", "dice_rolled", "static_check_resolved", "moment_reached",
        *FREE, "damage_resolved", "resource_changed",   # bitter_lesson: use, free: 2 psychic to ana
        *FREE, "action_settled"]                        # second_guess: pass
    # C4: cara's check, nobody to answer: its batch is the check alone.
    cara = seq_of(log, "command_issued", command={"command": "static_check", "dice": [4], "difficulty": 3,
                                                  "check": {"who": "cara", "attribute": "STR"}})
    assert types(log, cara, cara + 3) == ["command_issued", "dice_rolled", "static_check_resolved", "command_issued"]
    check = flat(omen("explain", str(log), str(first + 2)).stdout)
    assert "ana's check = 6" in check and "tie against difficulty 6" in check
    answered = flat(omen("explain", str(log), str(moment)).stdout)
    assert "ana answers bitter_lesson: use" in answered and "ana's HP 20 -> 18" in answered
    assert "ana answers second_guess: pass" in answered


def test_s15_targets_outside_rounds_and_before_first_turn(tmp_path: Path) -> None:
    """One action's conditions on two: the applier answers for the first, an ally for its own ally; outside the rounds
    quick_recovery may spend a Bonus Action, before bram's first turn it may not (C20); the GM's condition opens
    nothing (C38)."""
    log = run("s15_condition_targets.toml", tmp_path)
    s = state(log)
    assert {k: (v[0], v[1], v[3]) for k, v in s.items()} == {
        "ana": (19, 5, {"Prone": 1}), "bram": (5, 4, {"Prone": 1}), "cara": (20, 5, {}), "dan": (20, 4, {})}
    assert decisions(log) == [("overreach", CA, ["ana"]), ("quick_recovery", CA, ["bram"]),
                              ("spiteful_fall", CA, ["bram"]), ("steady_hand", CA, ["dan"]),
                              ("overreach", CA, ["ana"]), ("spiteful_fall", CA, ["bram"])]
    healed = [(e["who"], e["before"], e["after"]) for ln in events(log) for e in [ln["event"]]
              if e["type"] == "resource_changed" and e["resource"] == "hp"]
    assert healed == [("bram", 20, 13), ("bram", 13, 12), ("ana", 20, 18), ("ana", 18, 19),
                      ("bram", 12, 6), ("bram", 6, 5)]


def test_s18_the_applier_answers_for_the_first_applied(tmp_path: Path) -> None:
    """An on_hit branch applying Prone to the attacker, then to the target: the applier's answer targets the first
    (itself), the afflicted's the applier, the ally's its own ally (C25, C38)."""
    log = run("s18_condition_applier_self_first.toml", tmp_path)
    assert state(log) == {"ana": (15, 5, 2, {"Prone": 1}), "bram": (15, 4, 2, {"Prone": 1}), "cara": (20, 4, 2, {})}
    assert decisions(log) == [("overreach", CA, ["ana"]), ("spiteful_fall", CA, ["bram"]),
                              ("steady_hand", CA, ["cara"])]
    hp = [(e["who"], e["before"], e["after"]) for ln in events(log) for e in [ln["event"]]
          if e["type"] == "resource_changed" and e["resource"] == "hp"]
    assert hp == [("bram", 20, 13), ("ana", 20, 19), ("ana", 19, 15), ("bram", 13, 15)]


def test_s16_dying_from_a_save_and_an_ability(tmp_path: Path) -> None:
    """Dying from flame_burst's failure damage and from smite's damage opens condition.applied; guardians_vow's one
    use this fight is spent the second time (C41)."""
    log = run("s16_condition_dying_save.toml", tmp_path)
    assert state(log) == {"ana": (20, 4, 2, {}), "eli": (3, 5, 2, {}), "cara": (20, 3, 2, {})}
    assert decisions(log) == [("coup_de_grace", CA, ["ana"]), ("guardians_vow", CA, ["cara"]),
                              ("steady_hand", CA, ["cara"]),
                              ("coup_de_grace", CA, ["ana"]), ("steady_hand", CA, ["cara"])]


def test_s17_order_of_decision_points_after_a_heal(tmp_path: Path) -> None:
    """When cara's guardians_vow raises bram, whose turn in the order came while he was at 0 HP, cara's
    steady_hand is next (initiative order, C38); bram is not asked (C36)."""
    log = run("s17_condition_order_after_heal.toml", tmp_path)
    assert state(log)["bram"][:2] == (3, 5)
    assert decisions(log) == [("guardians_vow", CA, ["cara"]), ("steady_hand", CA, ["cara"])]


def test_undo_gives_back_a_per_fight_use_and_its_will(tmp_path: Path) -> None:
    """omen undo --to the use_ability that opened condition.applied voids the answers with it: guardians_vow's Will
    and its one use this fight come back (C41); omen status names the open decision; wrong answers write nothing
    (C38)."""
    log = run("s16_condition_dying_save.toml", tmp_path)
    flame = seq_of(log, "command_issued", command={"command": "use_ability", "dice": [1, 5, 3, 2], "who": "ana",
                                                   "ability": "flame_burst", "target": "eli"})
    assert omen("undo", str(log), "--to", str(flame)).returncode == 0
    assert state(log) == {"ana": (20, 5, 2, {}), "eli": (4, 5, 2, {}), "cara": (20, 5, 2, {})}
    assert do(log, {"command": "use_ability", "who": "ana", "ability": "flame_burst", "target": "eli",
                    "dice": [1, 5, 3, 2]}).returncode == 0
    before = digest(log)
    early = do(log, {"command": "answer_decision", "decision": "guardians_vow", "who": "cara", "choice": "use"})
    assert early.returncode == 2 and "not 'guardians_vow'" in early.stderr
    wrong = do(log, {"command": "answer_decision", "decision": "coup_de_grace", "who": "cara", "choice": "use"})
    assert wrong.returncode == 2 and "not cara's" in wrong.stderr
    assert digest(log) == before
    assert do(log, {"command": "answer_decision", "decision": "coup_de_grace", "who": "ana",
                    "choice": "pass"}).returncode == 0
    status = flat(omen("status", str(log)).stdout)
    assert "Cara: Guardian's Vow (C37)" in status and '"decision":"guardians_vow","who":"cara","choice":"use"' in status
    assert do(log, {"command": "answer_decision", "decision": "guardians_vow", "who": "cara",
                    "choice": "use"}).returncode == 0
    assert state(log)["cara"][1] == 4 and state(log)["eli"][0] == 2
    verify(log)


def test_undo_restores_bonus_actions_will_and_conditions(tmp_path: Path) -> None:
    """omen undo of hobble gives back ana's Action and press_advantage's Bonus Action, spiteful_fall's Will, both
    HP and bram's feet; omen redo brings it all back (docs/abilities.md "Costs and uses"; C20, C22, C41)."""
    log = run("s13_condition_save_ability.toml", tmp_path)
    assert omen("undo", str(log)).returncode == 0
    assert state(log) == {"ana": (18, 4, 2, {}), "bram": (19, 4, 2, {}), "cara": (20, 4, 2, {})}
    assert omen("redo", str(log)).returncode == 0
    assert state(log) == {"ana": (14, 4, 1, {}), "bram": (16, 3, 2, {"Prone": 1}), "cara": (20, 4, 2, {})}
    verify(log)


def test_undo_gives_back_a_check_answers_will_and_use(tmp_path: Path) -> None:
    """omen undo --to C3's static check voids its moment too: triumph's Will and second_guess's one use come back,
    so the next successful check offers second_guess again (C16, C41)."""
    log = run("s14_check_resolved.toml", tmp_path)
    c3 = seq_of(log, "command_issued", command={"command": "static_check", "dice": [6], "difficulty": 6,
                                                "check": {"who": "ana", "skill": "Athletics"}})
    assert omen("undo", str(log), "--to", str(c3)).returncode == 0
    assert state(log)["ana"][:2] == (16, 5) and state(log)["bram"][:2] == (20, 5)
    steps: list[Command] = [
        {"command": "static_check", "check": {"who": "ana", "skill": "Athletics"}, "difficulty": 6, "dice": [6]},
        {"command": "answer_decision", "decision": "triumph", "who": "ana", "choice": "pass"},
        {"command": "answer_decision", "decision": "second_guess", "who": "ana", "choice": "use", "dice": [4]},
    ]
    for step in steps:
        res = do(log, step)
        assert res.returncode == 0, (step, res.stderr)
    assert state(log)["ana"][:2] == (20, 5)   # 16 + 1d4 [4]
    verify(log)


ERRORS = [
    ("m01", "m01_lib.toml:5:", "at condition.applied the trigger's owner is one of afflicted, ally_of_afflicted, "
     "applier, not 'target'", "$.abilities.x.trigger.owner"),
    ("m02", "m02_lib.toml:5:", "outcome", "$.abilities.x.trigger.outcome"),
    ("m03", "m03_lib.toml:5:", "condition.applied", "$.abilities.x.trigger.condition"),
    ("m04", "m04.toml:13:", "[C28] unknown condition 'Burning'", "$.combatants[0].abilities[1].trigger.condition"),
    ("m05", "m05_lib.toml:6:", "modifier", "$.abilities.x.effects[1]"),
    ("m06", "m06_lib.toml:6:", "attack", "$.abilities.x.when.attack_kinds"),
    ("m07", "m07_lib.toml:5:", 'at check.resolved the trigger\'s owner is "self"', "$.abilities.x.trigger.owner"),
    ("m08", "m08_lib.toml:6:", 'its effects go to the owner (to = "actor")', "$.abilities.x.effects[1].to"),
    ("m09", "m09_lib.toml:5:", "success or failure", "$.abilities.x.trigger.outcome"),
    ("m10", "m10_lib.toml:6:", "target", "$.abilities.x.when.target_has"),
    ("m11", "m11_lib.toml:6:", "condition.applied", "$.abilities.x.effects[0]"),
    ("m12", "m12_lib.toml:5:", "condition.applied", "$.abilities.x.trigger.condition"),
    ("m13", "m13_lib.toml:5:", "not 'self'", "$.abilities.x.trigger.owner"),
    ("m14", "m14_lib.toml:7:", "check.resolved", "$.abilities.x.effects[0]"),
    ("m15", "m15_lib.toml:5:", "[C28] unknown condition 'Burning'", "$.abilities.doused.trigger.condition"),
    ("m16", "m16.toml:13:", 'to = "actor"', "$.combatants[0].abilities[0].effects[0].to"),
]


@pytest.mark.parametrize(("scenario", "where", "what", "path"), ERRORS)
def test_moment_errors(tmp_path: Path, scenario: str, where: str, what: str, path: str) -> None:
    """Each refusal docs/abilities.md "Errors" promises for condition.applied and check.resolved: one line naming the
    file, the line and the field path; exit 2; no log written (C28, C37, C38)."""
    log = tmp_path / "err.jsonl"
    res = omen("run", str(HERE / "errors" / f"{scenario}.toml"), "--log", str(log))
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("omen: error: ") and res.stderr.count("\n") == 1
    assert where in res.stderr and what in res.stderr
    assert res.stderr.rstrip().endswith(f"(at {path})"), res.stderr
    assert not log.exists()
