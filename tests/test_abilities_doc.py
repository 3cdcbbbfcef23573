"""docs/abilities.md is true: every library example loads, the inline sheet example joins, and a scenario using a
library file of the guide's own examples runs, verifies and explains as the guide says (C37, C38, C41)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from omen_cli import app
from omen_core.content import SHIPPED_ABILITIES, AbilityLibrary, CombatantSheet, decode_content
from tests.fights import new_fight
from tests.sheets import sheet

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "abilities.md").read_text()
BLOCKS = re.findall(r"```toml\n(.*?)```", GUIDE, re.S)
LIBRARY_BLOCKS = [b for b in (re.sub(r"^ {3}", "", b, flags=re.M) for b in BLOCKS) if b.startswith("[abilities.")]


def library_text() -> str:
    """Every ``[abilities.*]`` example of the guide, as one library file."""
    return "\n".join(LIBRARY_BLOCKS)


def test_every_library_example_of_the_guide_loads() -> None:
    """Each ``[abilities.<id>]`` block of the guide is a valid library (and there are several)."""
    library = decode_content(library_text(), AbilityLibrary, source="guide", fmt="toml")
    assert len(LIBRARY_BLOCKS) >= 4 and set(library.abilities) >= {"shield_bash", "hunters_mark", "last_stand",
                                                                   "mending_touch", "frost_ray"}


def test_the_inline_sheet_example_joins() -> None:
    """The guide's inline ``abilities = [...]`` line is a valid sheet key: a shipped id and an ability written out."""
    line = next(b.strip() for b in BLOCKS if b.strip().startswith("abilities = ["))
    fields = {**msgspec.to_builtins(sheet("ana")), **msgspec.toml.decode(line)}
    loaded = msgspec.convert(fields, CombatantSheet)
    assert loaded.ability_ids() == ("riposte", "grit")
    fight = new_fight(loaded)
    assert fight.state.combatants["ana"].sheet.written_abilities()[0] == SHIPPED_ABILITIES.get("riposte")


def test_the_shipped_table_lists_every_shipped_ability() -> None:
    """The guide's table of shipped abilities names each one in omen_core/data/abilities.toml, and only those."""
    section = GUIDE.split("## The shipped abilities", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_]+)` \| ", section, re.M))
    assert listed == set(SHIPPED_ABILITIES.abilities)


SCENARIO = """
[fight]
id = "guide"
abilities = ["party.toml"]

[[combatants]]
id = "ana"
name = "Ana"
side = "heroes"
hp = 20
will = 3
abilities = ["shield_bash", "hunters_mark", "frost_ray"]
attributes = ATTRS
weapons = [{ id = "mace", weapon_damage = 2, damage_type = "crushing" },
           { id = "bow", weapon_damage = 1, damage_type = "piercing", properties = ["ranged"] }]
wielding = ["mace", "bow"]

[[combatants]]
id = "orc"
name = "Orc"
side = "raiders"
hp = 20
attributes = ATTRS

[[commands]]
command = "declare_attack"   # 5 + 1 = 6 beats 2: the orc declines to defend
attacker = "ana"
target = "orc"
weapon = "mace"
dice = [5, 1, 2]

[[commands]]
command = "answer_active_defense"
defender = "orc"

[[commands]]
command = "answer_decision"  # Shield Bash on the hit: 1 Bonus Action, the orc falls Prone; damage 5 + 2 = 7
decision = "shield_bash"
who = "ana"
choice = "use"

[[commands]]
command = "declare_attack"   # a bow shot at the Prone orc: 3 + 1 - 2 (Prone at range, C27) + 1 (Hunter's Mark)
attacker = "ana"
target = "orc"
weapon = "bow"
dice = [3, 1, 6]

[[commands]]
command = "use_ability"      # Frost Ray: an Action and 1 Will; the orc's RES 2 against Ana's INT 5 fails: 1d8 = 7 cold
who = "ana"
ability = "frost_ray"
target = "orc"
dice = [2, 5, 7]
""".replace("ATTRS", "{ " + ", ".join(f'{a} = {{ die = "d6" }}' for a in ("STR", "AGI", "INT", "RES", "FCS")) + " }")


@pytest.fixture()
def scenario(tmp_path: Path) -> Path:
    """The guide's worked scenario, with the guide's library examples as its ``party.toml``."""
    (tmp_path / "party.toml").write_text(library_text())
    path = tmp_path / "guide.toml"
    path.write_text(SCENARIO)
    return path


def test_a_scenario_with_a_library_file_runs_verifies_and_explains(scenario: Path, tmp_path: Path) -> None:
    """The guide's library abilities run from a scenario's ``abilities`` file: Shield Bash is offered and used (the
    orc Prone, Ana one Bonus Action down, 7 damage), Hunter's Mark adds its named term to the bow shot (3 + 1 - 2
    + 1 = 3 against 6: a miss), Frost Ray costs a Will and deals 7 cold on a failed save (13 to 6), the log
    verifies, and explain shows the term as the guide says."""
    runner = CliRunner()
    log = tmp_path / "guide.jsonl"
    result = runner.invoke(app, ["run", str(scenario), "--log", str(log), "--json"])
    assert result.exit_code == 0, result.output
    end = json.loads(result.stdout)
    orc = next(c for c in end["combatants"] if c["id"] == "orc")
    ana = next(c for c in end["combatants"] if c["id"] == "ana")
    assert orc["hp"] == 6 and "Prone" in orc["conditions"] and ana["will"] == 2
    verified = runner.invoke(app, ["verify", str(log)])
    assert verified.exit_code == 0, verified.output
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    seq, shot = [(r["seq"], r["event"]) for r in lines if r["event"]["type"] == "hit_determined"][-1]
    assert shot["attack"]["total"] == 3 and not shot["hit"]
    assert {"source": "Hunter's Mark (a ranged attack; target Prone)", "value": 1, "origin": "ability:Hunter's Mark",
            "owner": "ana"} in shot["attack"]["situational"]
    explained = runner.invoke(app, ["explain", str(log), str(seq)])
    assert explained.exit_code == 0, explained.output
    assert "Hunter's Mark (a ranged attack; target Prone)" in explained.output


def test_a_library_taking_a_shipped_id_is_refused_naming_the_library(scenario: Path) -> None:
    """One id, one ability: a library defining ``riposte`` (shipped) is refused at its ``$.abilities.riposte``, with
    its line, exit 2."""
    party = scenario.parent / "party.toml"
    party.write_text(library_text() + '\n[abilities.riposte]\nname = "R"\nuse = "passive"\n'
                     'effects = [{ kind = "modifier", total = "hit", value = 1 }]\n')
    result = CliRunner().invoke(app, ["run", str(scenario)])
    assert result.exit_code == 2
    assert "party.toml" in result.output and "$.abilities.riposte" in result.output and "already defined" in \
        result.output


def test_an_unknown_id_in_a_sheet_is_refused_naming_the_field(scenario: Path) -> None:
    """An id neither shipped nor in the scenario's libraries is refused when the scenario loads (C37), naming the
    sheet's field, the id it most likely meant and the library's own ids (the error listed the shipped ids only, so
    a typo of a library's id pointed at none of the table's own; found by a tester)."""
    scenario.write_text(SCENARIO.replace('"hunters_mark", "frost_ray"', '"hunters_mrk", "frost_ray"'))
    result = CliRunner().invoke(app, ["run", str(scenario)])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "hunters_mrk" in said and "$.combatants[0].abilities[1]" in said
    assert "did you mean 'hunters_mark'?" in said and "(the ids of party.toml: " in said
    assert "hunters_mark" in said.split("the ids of party.toml: ")[1].split(";")[0]
