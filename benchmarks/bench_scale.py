"""Scale (issue #26): ``omen status`` with an initiative tie among 3 to 12 allies, ``omen status`` on fights of 30
to 300 combatants (at set-up, and in the rounds with the allies of each side tied), and scenarios of 2,000 and
20,000 commands (``omen run``, and loading alone), each command in a fresh process as a user runs it: the time
and the peak RSS, and the ratio to the smallest case, which says whether the work grows with the size (linear:
the ratio of the sizes) or not at all (bounded).

    .venv/bin/python benchmarks/bench_scale.py [--repeat 3] [--json]

Before issue #26: a tie among 10 allies cost 526 MB (every one of the n! orders was made), 11 allies more than
2 GiB; ``status`` on 300 combatants more than 2 GiB and more than a minute; loading 20,000 commands more than a
minute (quadratic).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from _common import (
    OMEN,
    PYTHON,
    Case,
    emit_json,
    fmt_mb,
    fmt_s,
    machine,
    print_machine,
    run_child,
    run_interleaved,
    spread,
    table,
)

from omen_core import Fight, ScriptedDice
from omen_core.content import ATTRIBUTES, Attribute, Attributes, CombatantSheet
from omen_core.store import JsonlStore

TIES = (3, 6, 9, 12)
CROWDS = (30, 100, 300)
SCRIPTS = (2_000, 20_000)


def _sheet(cid: str, side: str) -> CombatantSheet:
    """A plain combatant: every attribute d6, AGI +1."""
    made = {a: Attribute(die="d6", bonus=1 if a == "AGI" else 0) for a in ATTRIBUTES}
    return CombatantSheet(id=cid, name=cid.title(), side=side, hp=20, will=10, attributes=Attributes(**made))


def tie_log(folder: Path, allies: int) -> Path:
    """A fight whose ``allies`` allies all rolled 4 for initiative (a tie waiting for an order, C19)."""
    path = folder / f"tie-{allies}.jsonl"
    sheets = [_sheet(f"a{i:02d}", "heroes") for i in range(allies)] + [_sheet("zed", "raiders")]
    fight = Fight.start(JsonlStore.single(path), "tie", dice=ScriptedDice([4] * allies + [6]), clock=lambda: 0,
                        combatants=sheets)
    fight.roll_initiative()
    assert len(fight.state.tie_open) == allies
    return path


def crowd_log(folder: Path, n: int, rounds: bool) -> Path:
    """``n`` combatants on two sides, at set-up or (``rounds``) after an initiative where every side's members
    tie (the first side's tie waiting for an order)."""
    path = folder / f"crowd-{n}-{'rounds' if rounds else 'setup'}.jsonl"
    sheets = [_sheet(f"c{i:03d}", "north" if i % 2 else "south") for i in range(n)]
    faces = [3 if i % 2 else 5 for i in range(n)]  # each side's members tie; the sides do not
    fight = Fight.start(JsonlStore.single(path), "crowd", dice=ScriptedDice(faces), clock=lambda: 0,
                        combatants=sheets)
    if rounds:
        fight.roll_initiative()
        assert len(fight.state.tie_open) == n // 2
    return path


def script(folder: Path, commands: int) -> Path:
    """A scenario of two combatants and ``commands`` engage commands (engaged, then not, and so on)."""
    path = folder / f"script-{commands}.toml"
    sheet = ('attributes = {{ STR = {{ die = "d6" }}, AGI = {{ die = "d6" }}, INT = {{ die = "d6" }}, '
             'RES = {{ die = "d6" }}, FCS = {{ die = "d6" }} }}\n')
    head = (f'[fight]\nid = "script-{commands}"\n\n[[combatants]]\nid = "ash"\nname = "Ash"\nside = "a"\nhp = 10\n'
            + sheet.format() + '\n[[combatants]]\nid = "bo"\nname = "Bo"\nside = "b"\nhp = 10\n' + sheet.format())
    body = "".join(f'\n[[commands]]\ncommand = "engage"\nwho = "ash"\nothers = ["bo"]\nengaged = '
                   f'{"true" if i % 2 == 0 else "false"}\n' for i in range(commands))
    path.write_text(head + body)
    return path


def status(log: Path) -> Any:
    child = run_child([OMEN, "status", log])
    return 1, child.seconds, child.peak_mb


def run_script(folder: Path, scenario: Path) -> Any:
    log = folder / f"{scenario.stem}.jsonl"
    for extra in (log, log.with_name(log.name + ".idx"), log.with_name(log.name + ".marks")):
        extra.unlink(missing_ok=True)
    child = run_child([OMEN, "run", scenario, "--log", log, "--quiet"])
    return 1, child.seconds, child.peak_mb


def load_only(scenario: Path) -> Any:
    code = f"from omen_replay.scenario import load_scenario; load_scenario({str(scenario)!r})"
    child = run_child([PYTHON, "-c", code])
    return 1, child.seconds, child.peak_mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs per case (default 3)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="omen-scale-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        groups: dict[str, list[Case]] = {
            "status, an initiative tie among N allies": [Case(f"{n} allies", partial(status,
                tie_log(folder, n)), size=n) for n in TIES],
            "status, N combatants at set-up": [Case(f"{n} combatants", partial(status,
                crowd_log(folder, n, False)), size=n) for n in CROWDS],
            "status, N combatants in the rounds, each side's members tied": [
                Case(f"{n} combatants", partial(status, crowd_log(folder, n, True)), size=n)
                for n in CROWDS],
            "run a scenario of N commands": [Case(f"{n:,} commands", partial(run_script, folder,
                script(folder, n)), size=n) for n in SCRIPTS],
            "load a scenario of N commands (a fresh interpreter; its start included)": [
                Case(f"{n:,} commands", partial(load_only, script(folder, n)), size=n)
                for n in SCRIPTS],
        }
        every = [case for cases in groups.values() for case in cases]
        print(f"logs and scripts made in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        run_interleaved(every, args.repeat, warmup=False)
    info = machine()
    if args.json:
        emit_json({"machine": info, "groups": {name: [c.as_dict() for c in cases] for name, cases in groups.items()}})
        return 0
    print_machine(info)
    for name, cases in groups.items():
        base = cases[0]
        rows = [[c.name, fmt_s(c.median), spread(c), f"{c.median / base.median:.2f}x",
                 f"{c.info['size'] / base.info['size']:.1f}x", fmt_mb(c.peak_mb)] for c in cases]
        print(f"\n{name} (medians of {args.repeat} interleaved runs, fresh processes)")
        print(table(["case", "median", "fastest – slowest", "time vs the smallest", "size vs the smallest",
                     "peak RSS"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
