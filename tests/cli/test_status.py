"""omen_cli/status.py: ``omen status`` for people, on the demo's log at five points: where the fight is, whose
turn, what it waits for, a line per combatant and the ``omen do`` commands of the likely choices, in 25 lines at
most, each command running as printed."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omen_cli.status import published_seed, status_lines
from omen_core.options import options
from omen_core.walk import LinesSource, replay
from omen_replay.demo import DEMO_SEED

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def omen(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "omen"), *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, check=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The lines of ``omen demo``'s log (the Ember Ford, seeded with its published seed)."""
    where = tmp_path_factory.mktemp("demo")
    done = omen("demo", "--log", "demo.jsonl", cwd=where)
    assert done.returncode == 0, done.stderr
    return (where / "demo.jsonl").read_bytes().splitlines(keepends=True)


def points(lines: list[bytes]) -> dict[str, int]:
    """Five heads of the demo (how many lines up to each): before initiative, a turn with nothing open, an Active
    Defense window, an Interrupt window, and the end."""
    found: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        rec = json.loads(line)
        if rec["batch_size"] == 0 or rec["seq"] != rec["batch"] + rec["batch_size"] - 1:
            continue
        state = replay(LinesSource(lines[:n], where="demo"), chain=False)
        now = options(state)
        kind = now.waiting.kind if now.waiting else ("turn" if now.phase == "rounds" and now.turn else now.phase)
        if now.phase not in ("rounds", "ended") and not now.waiting:
            found["before"] = n  # the last head before the rounds: every combatant joined, initiative to roll
        elif kind in ("turn", "active_defense", "interrupt") and kind not in found:
            found[kind] = n
    found["ended"] = len(lines)
    assert len(found) == 5, found
    return found


def test_the_short_status_fits_in_25_lines_and_its_next_commands_run_as_printed(demo: list[bytes],
                                                                                tmp_path: Path) -> None:
    """At each of five points of the demo, ``omen status`` prints at most 25 lines: where the fight is (the round
    and whose turn, or that it is over), what is awaited, each combatant in one line (HP, Will, Bonus Actions), a
    ``next:`` line and the head; every ``omen do`` line under ``next:``, pasted into a shell as printed in the
    directory of the log, is accepted (exit 0)."""
    for name, n in points(demo).items():
        where = tmp_path / name
        where.mkdir()
        (where / "fight.jsonl").write_bytes(b"".join(demo[:n]))
        done = omen("status", "fight.jsonl", cwd=where)
        assert done.returncode == 0, done.stderr
        shown = done.stdout.splitlines()
        assert len(shown) <= 25, (name, done.stdout)
        assert shown[0].startswith("Ambush at the Ember Ford (ember-ford) at seq ")
        assert shown[1].startswith("awaited: ")
        assert shown[-1].startswith(f"head {json.loads(demo[n - 1])['seq']}:")
        assert sum(1 for line in shown if "HP " in line and "Will " in line and "BA " in line) >= 4
        if name == "ended":
            assert "the fight is over (defeated: raiders)" in shown[0]
            continue
        if name in ("turn", "active_defense", "interrupt"):
            assert "'s turn" in shown[0], shown[0]
        assert "next:" in shown, done.stdout
        commands = [line.strip() for line in shown[shown.index("next:") + 1:-1]]
        assert commands and all(c.startswith("omen do fight.jsonl ") for c in commands), commands
        for i, command in enumerate(commands):
            again = where / f"try{i}"
            again.mkdir()
            shutil.copy(where / "fight.jsonl", again / "fight.jsonl")
            ran = subprocess.run(["bash", "-c", command], cwd=again, capture_output=True, text=True, timeout=120,
                                 env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}, check=False)
            assert ran.returncode == 0, (name, command, ran.stdout + ran.stderr)


def test_an_open_decision_lists_its_answers_and_a_manual_fight_names_the_faces(tmp_path: Path) -> None:
    """In a manual-dice fight the next: commands that roll dice say which faces they need (they cannot run without
    the table's dice) and never a seed; --json is the options unchanged; --all lists every offer."""
    scenario = tmp_path / "duel.toml"
    sheets = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"
    scenario.write_text(f'[fight]\nid = "duel"\ndice = "manual"\n\n[[combatants]]\nsheet = "{sheets / "kael.toml"}"\n'
                        f'\n[[combatants]]\nsheet = "{sheets / "vesh.toml"}"\n')
    assert omen("run", str(scenario), "--log", "duel.jsonl", "--quiet", cwd=tmp_path).returncode == 0
    said = omen("status", "duel.jsonl", cwd=tmp_path).stdout
    assert '# add "dice": the faces of kael\'s initiative: check d6; vesh\'s initiative: check d8' in said
    assert "--seed" not in said.split("next:")[1].split("head")[0]
    as_json = json.loads(omen("status", "duel.jsonl", "--json", cwd=tmp_path).stdout)
    assert as_json["fight_id"] == "duel" and as_json["offers"]
    every = omen("status", "duel.jsonl", "--all", cwd=tmp_path).stdout
    assert "the GM" in every and "roll_initiative" in every and "{'" not in every


def test_a_seed_given_is_checked_and_used_and_the_published_one_is_known(demo: list[bytes], tmp_path: Path) -> None:
    """A wrong --seed is refused (exit 2, naming the commitment); OMEN_SEED is used and never printed; the demo's
    published seeds are recognised by their commitments, another is not."""
    (tmp_path / "fight.jsonl").write_bytes(b"".join(demo[:34]))  # seq 34 ends a batch
    wrong = omen("status", "fight.jsonl", "--seed", "00" * 32, cwd=tmp_path)
    assert wrong.returncode == 2 and "commitment" in wrong.stderr + wrong.stdout
    seed = published_seed(json.loads(demo[0])["event"]["seed_commitment"])
    assert seed is not None
    quiet = omen("status", "fight.jsonl", cwd=tmp_path, env={"OMEN_SEED": seed.hex()})
    assert quiet.returncode == 0 and seed.hex() not in quiet.stdout
    from omen_core.dice import commitment

    assert published_seed(commitment(DEMO_SEED)) == DEMO_SEED and published_seed(commitment(b"x" * 32)) is None
    assert shlex.split("omen do 'a b.jsonl' '{}'")[2] == "a b.jsonl"


def test_a_combatant_at_0_hp_is_shown_down_and_offered_nothing(demo: list[bytes], tmp_path: Path) -> None:
    """C36: from the blow that takes Brin to 0 HP (round 2 of the demo) to the end, at every head the options
    offer Brin nothing (its turns are skipped: the order never stops on it) and an attack on Brin rolls the
    attacker's dice alone (no RES die); ``omen status`` at the first such head shows Brin DOWN, Dying, and with
    ``--all`` lists commands of the others but none of Brin's."""
    heads: list[int] = []
    rolled: list[list[tuple[str, str]]] = []
    for n, line in enumerate(demo, 1):
        rec = json.loads(line)
        if rec["batch_size"] == 0 or rec["seq"] != rec["batch"] + rec["batch_size"] - 1:
            continue
        state = replay(LinesSource(demo[:n], where="demo"), chain=False)
        brin = state.combatants.get("brin")
        if brin is None or brin.hp > 0 or state.ending is not None:
            continue
        heads.append(n)
        now = options(state)
        assert now.turn != "brin" and [o.command for o in now.offers if o.actor == "brin"] == [], n
        for offer in now.offers:
            for choice in offer.choices:
                if offer.command == "declare_attack" and choice.args.get("target") == "brin" and choice.dice:
                    rolled.append([(d.roller, d.purpose) for d in choice.dice])
                    assert rolled[-1][0] == (offer.actor, "hit") and all(d.roller != "brin" for d in choice.dice)
    assert len(heads) > 5 and rolled
    (tmp_path / "fight.jsonl").write_bytes(b"".join(demo[:heads[0]]))
    short = omen("status", "fight.jsonl", cwd=tmp_path)
    assert short.returncode == 0, short.stderr
    brin_line = next(line for line in short.stdout.splitlines() if "(brin, wardens)" in line)
    assert "HP 0/18" in brin_line and "Dying" in brin_line and brin_line.endswith("DOWN")
    every = omen("status", "fight.jsonl", "--all", cwd=tmp_path).stdout
    actors = [line.strip()[:-1] for line in every.splitlines() if line.startswith("  ") and not line.startswith("   ")
              and line.strip().endswith(":")]
    assert actors and "brin" not in actors, actors


def test_the_end_of_a_fight_says_what_the_gm_may_still_give(demo: list[bytes], tmp_path: Path) -> None:
    """At the demo's end the seed is revealed and a reveal is never undone (C42): status says nothing is awaited and
    offers neither undo nor redo (it said "undo and redo remain"); just before the reveal it offers the reveal and
    the undo of the end_fight."""
    log = tmp_path / "end.jsonl"
    log.write_bytes(b"".join(demo))
    done = omen("status", str(log), cwd=tmp_path)
    assert done.returncode == 0 and "awaited: nothing: the fight is over" in done.stdout, done.stdout
    batch = next(json.loads(line)["batch"] for line in demo if json.loads(line)["event"]["type"] == "seed_revealed")
    log.write_bytes(b"".join(demo[:batch - 1]))  # the log as it stood before the reveal's command
    before = omen("status", str(log), cwd=tmp_path)
    assert before.returncode == 0, before.stderr
    assert "awaited: nothing (reveal the seed, or undo)" in before.stdout, before.stdout


def test_a_condition_lasting_until_a_named_turn_says_so_in_status_and_in_do(demo: list[bytes], tmp_path: Path) -> None:
    """C40: the GM applies Prone to Vesh on Vesh's first turn, until the end of Kael's next turn: ``omen do`` says
    so in its line, and ``omen status`` shows it on Vesh's line (it showed a bare "Prone", so a GM could not tell
    when it would clear)."""
    first_turn = next(n for n, line in enumerate(demo, 1) if json.loads(line)["event"]["type"] == "turn_started")
    (tmp_path / "fight.jsonl").write_bytes(b"".join(demo[:first_turn]))
    applied = omen("do", "fight.jsonl", json.dumps({"command": "apply_condition", "who": "vesh", "condition": "Prone",
                                                    "until": "end_of_next_turn", "of": "kael"}), cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    said = " ".join(applied.stdout.split())  # (the line wraps at the terminal's width)
    assert "Vesh the Cinder-Hand is Prone: applied by the GM, until the end of Kael Arden's next turn" in said
    status = omen("status", "fight.jsonl", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    vesh = next(line for line in status.stdout.splitlines() if "(vesh, raiders)" in line)
    assert vesh.endswith("Prone (until the end of Kael Arden's next turn)"), vesh


def test_a_condition_lasting_to_the_end_of_a_turn_under_way_says_current_turn() -> None:
    """C40: Prone on the orc until the end of Ana's next turn reads "Ana's next turn" before it, and "Ana's current
    turn" once that turn has started (it read "Ana's this turn")."""
    from omen_cli.status import combatant_line
    from omen_core.options import options
    from tests.fights import new_fight
    from tests.sheets import sheet

    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), faces=[6, 1])
    fight.roll_initiative()  # AGI: the orc 6, Ana 1: the orc first
    fight.apply_condition("orc", "Prone", until="end_of_next_turn", of="ana")
    name = fight.state.combatants["ana"].sheet.name
    line = combatant_line(options(fight.state, offers_too=False), fight.state, "orc")
    assert line.endswith(f"Prone (until the end of {name}'s next turn)"), line
    fight.end_turn("orc")
    line = combatant_line(options(fight.state, offers_too=False), fight.state, "orc")
    assert line.endswith(f"Prone (until the end of {name}'s current turn)"), line


def test_a_decision_inside_an_attack_shows_the_totals_it_turns_on() -> None:
    """C5, C38: at Steady Aim's decision (Ana's 3 + 1 = 4 against the orc's 5 would miss), status says the hit
    total against the defense as it stands, under the awaited line; after the answer the hit is determined and no
    decision waits, so the line is gone."""
    from tests.fights import new_fight
    from tests.sheets import sheet
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "steady_aim"), sheet("orc", side="raiders"), faces=[3, 1, 5])
    fight.attack("ana", "orc", unarmed=True)
    lines = status_lines(options(fight.state), fight.state, "t.jsonl", None)
    assert lines[1] == "awaited: Ana: Steady Aim (C37), with answer_decision; per answer: use: 1 Will, pass: free"
    assert lines[2] == "  Ana's hit total 4 against Orc's defense 5: a miss, as it stands (the defender wins ties, " \
                       "§Hit Determination)"
    fight.answer_decision("steady_aim", "ana", "use")
    assert not any("hit total" in line for line in status_lines(options(fight.state), fight.state, "t.jsonl", None))


def test_roll_offs_the_faces_may_need_are_said_without_naming_who(capsys: pytest.CaptureFixture[str]) -> None:
    """C19, C32: before initiative, the dice roll_initiative may roll after its own are roll-offs, for whoever the
    faces leave tied: next: and --all say so in words, naming no combatant (they named the two a probe happened to
    tie, and a rules tester scripted faces for them while two others tied)."""
    from omen_cli.show import print_options
    from omen_cli.status import ROLL_OFFS
    from tests.fights import new_fight
    from tests.sheets import sheet

    fight = new_fight(sheet("ana"), sheet("bo"), sheet("orc", side="raiders"), sheet("gob", side="raiders"))
    found = options(fight.state)
    line = next(line for line in status_lines(found, fight.state, "t.jsonl", None) if "omen do" in line
                and "roll_initiative" in line)
    assert line.endswith(f"then perhaps {ROLL_OFFS}") and "roll off" not in line, line
    print_options(found, False, fight.state)
    said = " ".join(capsys.readouterr().out.split())
    assert f"maybe {ROLL_OFFS}" in said and "roll off" not in said


def test_a_surprise_tier_is_on_its_combatants_line_while_it_matters() -> None:
    """C18, C21 (fixture ambush-surprise-tiers-first-round): before initiative, Kael's line says Complete Surprise
    and Brin's Partial Surprise, Mira's (alert) nothing (status said no tier: a rules tester's GM had to try a
    refused command to learn it); once initiative is rolled, Brin's -5 is spent and only Kael's stays, until his
    first turn."""
    from pathlib import Path

    from omen_cli.status import combatant_line

    lines = (Path(__file__).resolve().parents[2] / "fixtures" / "ambush-surprise-tiers-first-round" /
             "fight.jsonl").read_bytes().splitlines(keepends=True)
    rolled = next(json.loads(line) for line in lines if b'"initiative_rolled"' in line)
    start, size = rolled["batch"], rolled["batch_size"]  # roll_initiative's command: cut before it, or after it
    before = replay(LinesSource(lines[:start - 1]))
    said = {who: combatant_line(options(before), before, who) for who in ("kael", "brin", "mira")}
    assert said["kael"].endswith("Complete Surprise (C18: no turn in the first round, no drawing until its first "
                                 "turn)"), said
    assert said["brin"].endswith("Partial Surprise (C18: -5 to its initiative)") and "Surprise" not in said["mira"]
    after = replay(LinesSource(lines[:start - 1 + size]))
    assert after.order and not after.had_a_turn("kael")
    assert "Complete Surprise" in combatant_line(options(after), after, "kael")
    assert "Partial Surprise" not in combatant_line(options(after), after, "brin")


def test_a_decision_no_installed_extension_declares_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/extensions.md: a log read where the extension that declares its open decision point is not installed
    (window() finds no row for it) says so on the awaited line, since nothing can answer it here (it said the
    decision alone, and every answer was then refused: a tester)."""
    import omen_core.extensions
    from tests.fights import new_fight
    from tests.sheets import sheet
    from tests.test_abilities import having

    fight = new_fight(having(sheet("ana"), "steady_aim"), sheet("orc", side="raiders"), faces=[3, 1, 5])
    fight.attack("ana", "orc", unarmed=True)
    found = options(fight.state)
    assert "no extension installed here" not in status_lines(found, fight.state, "t.jsonl", None)[1]
    monkeypatch.setattr(omen_core.extensions, "window", lambda kind, state: None)
    assert status_lines(found, fight.state, "t.jsonl", None)[1] == (
        "awaited: Ana: Steady Aim (C37), with answer_decision; per answer: use: 1 Will, pass: free; but no extension "
        "installed here declares 'steady_aim', so nothing can answer it here: install the extension the fight was "
        "played with (docs/extensions.md)")


def test_each_choice_has_its_own_dice_line_under_all(capsys: pytest.CaptureFixture[str]) -> None:
    """``--all``: B's Parry with the mace (an STR d8) is its own dice line, not folded under Block's (a RES d8), and
    A's touch has its own, not folded under the bolt (same dice): every choice's dice line names its choice."""
    import msgspec

    from omen_cli.show import print_options
    from omen_core.content import Shield, Weapon
    from tests.fights import new_fight
    from tests.sheets import sheet

    weapons = (Weapon(id="rapier", weapon_damage=2, damage_type="fire", properties=frozenset({"finesse"})),
               Weapon(id="bolt", weapon_damage=2, damage_type="fire", properties=frozenset({"spell", "ranged"})),
               Weapon(id="touch", weapon_damage=2, damage_type="fire", properties=frozenset({"spell"})))
    a = msgspec.structs.replace(sheet("a", STR=(10, 2), AGI=(8, 3), FCS=(8, 2)), weapons=weapons,
                                wielding=("rapier",))
    mace = Weapon(id="mace", weapon_damage=4, damage_type="crushing", parry_rating=1)
    b = msgspec.structs.replace(sheet("b", side="s", STR=(8, 1), RES=(8, 2)), weapons=(mace,), wielding=("mace", "sh"),
                                shield=Shield(id="sh", block_rating=2))
    fight = new_fight(a, b, faces=[5, 2, 6, 5, 3])
    fight.roll_initiative()
    print_options(options(fight.state), as_json=False)
    turn = capsys.readouterr().out
    assert "dice (weapon=touch" in turn and "dice (weapon=bolt" in turn, turn
    fight.attack("a", "b", weapon="rapier")
    print_options(options(fight.state), as_json=False, state=fight.state)
    printed = capsys.readouterr().out.splitlines()
    lines = [" ".join(line.split()) for line in printed if line.strip().startswith("dice (")]
    assert lines == ["dice (defense=(default), weapon=(default)): none",
                     "dice (defense=dodge, weapon=(default)): b's active defense (active d6)",
                     "dice (defense=block, weapon=(default)): b's active defense (active d8)",
                     "dice (defense=parry, weapon=(default)): b's active defense (active d8), with mace: the first "
                     "weapon in hand that may parry (C9, C35)",
                     "dice (defense=parry, weapon=mace): b's active defense (active d8)"]


def test_a_parry_naming_no_weapon_has_the_dice_line_of_the_weapon_it_uses(tmp_path: Path) -> None:
    """C9, C35 (docs/rulings.md, "A Parry may use any weapon in hand"): against A's touch (a melee spell) B's knife,
    first in hand, may not parry, her magical mace may: ``omen status --all`` gives the Parry naming no weapon the
    mace's line, its STR d8 (not the knife's AGI d6), named; it had no line at all."""
    import msgspec
    from typer.testing import CliRunner

    from omen_cli import app
    from omen_core.content import Weapon
    from omen_core.events import encode_line
    from tests.fights import new_fight
    from tests.sheets import sheet

    touch = Weapon(id="touch", weapon_damage=2, damage_type="fire", properties=frozenset({"spell"}))
    a = msgspec.structs.replace(sheet("a", INT=(10, 2), FCS=(8, 2)), weapons=(touch,))
    knife = Weapon(id="knife", weapon_damage=2, damage_type="piercing", properties=frozenset({"finesse"}))
    mace = Weapon(id="mace", weapon_damage=4, damage_type="crushing", parry_rating=1,
                  properties=frozenset({"magical"}))
    b = msgspec.structs.replace(sheet("b", side="s", STR=(8, 1), AGI=(6, 1), RES=(8, 2)), weapons=(knife, mace),
                                wielding=("knife", "mace"))
    fight = new_fight(a, b, faces=[5, 2, 6, 5, 3])
    fight.roll_initiative()
    fight.attack("a", "b", weapon="touch")  # INT 6 + FCS 5 + 2 = 13 vs RES 3 + 2 = 5: a hit, the window opens
    log = tmp_path / "parry.jsonl"
    log.write_bytes(b"".join(encode_line(r) + b"\n" for r in fight.events))
    said = CliRunner().invoke(app, ["status", str(log), "--all"], env={"COLUMNS": "300"})
    assert said.exit_code == 0, said.output
    lines = [" ".join(line.split()) for line in said.stdout.splitlines() if line.strip().startswith("dice (")]
    assert lines == ["dice (defense=(default), weapon=(default)): none",
                     "dice (defense=dodge, weapon=(default)): b's active defense (active d6)",
                     "dice (defense=parry, weapon=(default)): b's active defense (active d8), with mace: the first "
                     "weapon in hand that may parry (C9, C35)",
                     "dice (defense=parry, weapon=mace): b's active defense (active d8)"]


def test_a_window_says_what_answering_costs_and_that_passing_is_free(demo: list[bytes],
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """C8, C22, C24: at the demo's first Active Defense window a Dodge (all it allows) costs 1 Bonus Action and
    declining nothing; at its Interrupt window a strike costs 2 and letting it pass nothing: ``omen status`` and
    ``omen status --all`` say both (they said "costs 2 Bonus Actions" of a window that is free to pass)."""
    from omen_cli.show import print_where

    said = {"active_defense": ("Kael Arden", "kael", "Active Defense (C8)", "answer_active_defense",
                               "to Dodge costs 1 Bonus Action, to decline (defense left out) is free"),
            "interrupt": ("Brin Hollowmere", "brin", "Interrupt (C24)", "react or pass_reaction",
                          "to strike (a melee attack) costs 2 Bonus Actions, to let it pass is free")}
    at = points(demo)
    for kind, (name, who, title, answers, costs) in said.items():
        state = replay(LinesSource(demo[:at[kind]], where="demo"), chain=False)
        found = options(state)
        assert status_lines(found, state, "f.jsonl", None)[1] == f"awaited: {name}: {title}, with {answers}; {costs}"
        print_where(found, state)
        printed = " ".join(capsys.readouterr().out.split())
        assert f"waiting for {who}: {title}, answer with {answers}; {costs}" in printed


def test_an_active_defense_window_names_only_the_defenses_it_allows(demo: list[bytes]) -> None:
    """§Which Defenses Apply, C9: at every Active Defense window of the demo, the cost line names the defenses that
    window allows, in its order (it named Dodge, Parry and Block at a window allowing only a Dodge; found by a
    tester); the demo has windows allowing one defense and windows allowing more."""
    seen = set()
    for n, line in enumerate(demo, 1):
        rec = json.loads(line)
        if rec["event"]["type"] != "active_defense_window_opened":
            continue
        state = replay(LinesSource(demo[:n], where="demo"), chain=False)
        found = options(state)
        assert found.waiting is not None and found.waiting.kind == "active_defense"
        eligible = [d.capitalize() for d in rec["event"]["eligible"]]
        named = eligible[0] if len(eligible) == 1 else f"{', '.join(eligible[:-1])} or {eligible[-1]}"
        assert status_lines(found, state, "f.jsonl", None)[1].endswith(
            f"; to {named} costs 1 Bonus Action, to decline (defense left out) is free"), rec["seq"]
        seen.add(len(eligible))
    assert 1 in seen and max(seen) > 1, seen


@pytest.mark.parametrize(("kind", "words"), [
    ("catch", "to catch it (no damage, no on-hit effects) costs 1 Bonus Action, to let it hit is free"),
    ("attack_of_opportunity", "to strike (a basic melee attack) costs 1 Bonus Action, to let it pass is free"),
    ("routing", "at no cost"),
    ("will_conversion", "at no cost"),
])
def test_each_kind_of_window_says_its_own_costs(kind: str, words: str) -> None:
    """C22, C23, C12, C31: a Catch and an Attack of Opportunity cost 1 Bonus Action to take and nothing to let go
    by; choosing the die that feeds damage and where converted damage lands cost nothing at all (the rows of
    omen_core.decisions, under the shipped ruleset's reaction costs)."""
    from omen_cli.status import answer_costs
    from omen_core.content import load_ruleset
    from omen_core.decisions import DECISION_POINTS
    from omen_core.options import Waiting

    point = next(p for p in DECISION_POINTS if p.kind == kind)
    waiting = Waiting(kind=kind, title=point.title, rule=point.rule, who=("bo",), answers=(), resumes=point.resumes,
                      cost=point.cost(load_ruleset()))
    assert answer_costs(waiting) == words


def test_a_deferred_cost_of_a_use_still_in_progress_is_owed_if_it_goes_through(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """C24, C41: while the Orc's Interrupt window is open on Bram's Sacrifice (declared at seq 29), the short status
    and ``--all`` say its deferred cost is owed only if that action goes through (they said it was owed, and it
    went without a word when the Interrupt hit and cancelled the use); once cancelled, nothing is owed."""
    from omen_cli.show import print_options
    from omen_cli.status import combatant_line
    from tests.replay.test_explain import cancelled_sacrifice

    fight = cancelled_sacrifice(tmp_path, interrupt=False)
    assert [p.action for p in fight.state.deferred] == [29]
    line = combatant_line(options(fight.state), fight.state, "bram")
    assert line.endswith("uses left: sacrifice 0  owes: sacrifice (at the start of next turn, if the action at seq 29 "
                         "goes through)"), line
    print_options(options(fight.state), as_json=False, state=fight.state)
    assert ("deferred costs to pay (C41): bram's sacrifice (at the start of next turn, if the action at seq 29 goes "
            "through)") in " ".join(capsys.readouterr().out.split())
    fight.react("orc", weapon="axe", dice=(8, 6, 1))
    fight.defend("bram", None)
    assert "owes" not in combatant_line(options(fight.state), fight.state, "bram")


def test_the_awaited_line_says_what_the_turn_has_left() -> None:
    """C20: on Kael's turn "awaited" says what is left of its Action and Movement Action: both at the start, the
    Action alone once it has moved, and that it ends the turn once both are spent (it always said "acts (an Action,
    a Movement Action)", found by a tester)."""
    from omen_core import Fight, MemoryStore, ScriptedDice
    from tests.sheets import sheet

    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([6, 1, 1, 1, 6]), clock=lambda: 0,
                        combatants=[sheet("kael", "heroes"), sheet("vesh", "raiders")])
    fight.roll_initiative()
    fight.engage("kael", "vesh")  # no closing in; the unarmed attack (faces 1, 1 against a RES die of 6) misses
    said = []
    for then in (lambda: None, lambda: fight.move("kael"), lambda: fight.attack("kael", "vesh", unarmed=True)):
        then()
        said.append(status_lines(options(fight.state), fight.state, "f.jsonl", None)[1])
    assert said == ["awaited: Kael acts (an Action, a Movement Action left) or ends the turn",
                    "awaited: Kael acts (an Action left) or ends the turn",
                    "awaited: Kael ends the turn (its Action and Movement Action are spent)"]


def test_the_awaited_line_of_an_incapacitated_combatant_offers_only_the_end_of_its_turn() -> None:
    """C10, C36: on the turn of Kael, Paralysed, "awaited" says it ends the turn and why, not that it acts with an
    Action and a Movement Action left (it took no action, but was told it had both; found by a tester)."""
    from omen_core import Fight, MemoryStore, ScriptedDice
    from tests.sheets import sheet

    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([6, 1]), clock=lambda: 0,
                        combatants=[sheet("kael", "heroes"), sheet("vesh", "raiders")])
    fight.roll_initiative()
    fight.apply_condition("kael", "Paralysed")
    assert status_lines(options(fight.state), fight.state, "f.jsonl", None)[1] == (
        "awaited: Kael ends the turn (incapacitated or paralysed, it can take no action: C10, C36)")


def test_next_lists_the_abilities_the_turns_combatant_may_use(tmp_path: Path) -> None:
    """C37: on Kael's turn (Healing Word and Flame Burst on his sheet) ``next:`` lists his attack, one line per
    ability he may use (its first choice) and the end of his turn, at most five (it listed the attack and the end
    of the turn alone: a content tester found the abilities only under --all)."""
    scenario = tmp_path / "duel.toml"
    sheets = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"
    kael = (sheets / "kael.toml").read_text()
    assert "abilities" not in kael
    (tmp_path / "kael.toml").write_text('abilities = ["healing_word", "flame_burst"]\n' + kael)  # before any table
    scenario.write_text(f'[fight]\nid = "duel"\ndice = "manual"\n\n[[combatants]]\nsheet = "{tmp_path / "kael.toml"}"\n'
                        f'\n[[combatants]]\nsheet = "{sheets / "vesh.toml"}"\n\n'
                        '[[commands]]\ncommand = "roll_initiative"\ndice = [6, 1]\n')
    ran = omen("run", str(scenario), "--log", "duel.jsonl", "--quiet", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    said = omen("status", "duel.jsonl", cwd=tmp_path).stdout
    given = [json.loads(m) for m in re.findall(r"omen do duel\.jsonl '(\{[^']*\})'", said.split("next:")[1])]
    commands = [c["command"] + (f":{c['ability']}" if "ability" in c else "") for c in given]
    assert commands == ["declare_attack", "use_ability:healing_word", "use_ability:flame_burst", "end_turn"], said


def test_a_combatants_conditions_are_listed_in_the_order_they_were_applied(tmp_path: Path) -> None:
    """C40: conditions due at one moment take effect in the order they were applied, so `omen status` lists them
    so: Prone applied before Exhausted reads `Prone  Exhausted` (it listed them by name: a conditions tester)."""
    from typer.testing import CliRunner

    from omen_cli import app

    log = tmp_path / "duel.jsonl"
    shutil.copy(ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "fight.jsonl", log)
    for condition in ("Prone", "Exhausted"):
        given = CliRunner().invoke(app, ["do", str(log), json.dumps({"command": "apply_condition", "who": "ash",
                                                                     "condition": condition})])
        assert given.exit_code == 0, given.output
    said = CliRunner().invoke(app, ["status", str(log)]).stdout
    line = next(line for line in said.splitlines() if "(ash, " in line)
    assert line.index("Prone") < line.index("Exhausted"), line


def test_next_attacks_a_foe_still_standing_before_a_dying_one() -> None:
    """C36: Ana's turn, the orc (first in the offer's list) at 0 HP, Dying, and the goblin standing: ``next:``'s
    attack is on the goblin (it offered the Dying orc alone: an auditor tester)."""
    import msgspec

    from omen_cli.status import next_commands
    from omen_core.options import options
    from tests.fights import new_fight
    from tests.sheets import sheet

    fight = new_fight(sheet("ana", AGI=(20, 0)), sheet("orc", side="raiders", AGI=(6, 0)),
                      sheet("gob", side="raiders", AGI=(6, 1)), faces=[20, 1, 1])
    fight.roll_initiative()  # Ana first
    state = fight.state
    orc = msgspec.structs.replace(state.combatants["orc"], hp=0)
    state = msgspec.structs.replace(state, combatants={**state.combatants, "orc": orc})
    found = options(state)
    offered = [c.args["target"] for o in found.offers if o.command == "declare_attack" for c in o.choices]
    assert offered.index("orc") < offered.index("gob"), offered
    attacks = [line for line in next_commands(found, state, "f.jsonl", None) if '"declare_attack"' in line]
    assert len(attacks) == 1 and '"target":"gob"' in attacks[0].replace(" ", ""), attacks


def test_status_all_shows_every_combatant_an_offer_lists() -> None:
    """A fight of 22 (11 a side): Ana's attack lists 12 targets (MAX_LISTED, her 11 foes first) and notes the 9
    others; `omen status --all`'s line shows all 12 (it showed 10 and "...", beside the note's "9 more": a GM
    tester)."""
    from omen_cli.show import _choice_summary
    from omen_core.limits import MAX_LISTED
    from omen_core.options import options
    from tests.fights import new_fight
    from tests.sheets import sheet

    cast = [sheet(f"a{i}", AGI=(6, 30 - i)) for i in range(11)]  # no two alike: no tie (C19), a0 first
    cast += [sheet(f"r{i}", side="raiders", AGI=(6, i)) for i in range(11)]
    fight = new_fight(*cast, faces=[1] * 22)
    fight.roll_initiative()
    found = options(fight.state)
    attack = next(o for o in found.offers if o.command == "declare_attack" and o.actor == "a0")
    said = _choice_summary(attack)
    targets = said.split("target: ")[1].split(";")[0].split(" | ")
    assert len(targets) == MAX_LISTED and "..." not in said, said
    assert {f"r{i}" for i in range(11)} <= set(targets) and attack.note.startswith("9 more combatant(s)")
