"""``omen simulate`` from the shell (omen_cli/simulate.py): a run, its JSON, any fight played again and
verified, and bad input refused with exit 2."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from omen_cli import app
from omen_replay.simulate.stats import Rate, share
from tests.replay.simulate.encounters import EMBER_FORD_2V2, mirror_duel, mutual_knockout, three_sides

ROOT = Path(__file__).resolve().parents[2]
SEED = "c0ffee" * 6
runner = CliRunner()


def omen(*args: object) -> Result:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def ember_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 Ember Ford fights on 2 local processes, the raiders cautious, written to run.json."""
    where = tmp_path_factory.mktemp("run")
    result = omen("simulate", EMBER_FORD_2V2, "--fights", 200, "--workers", 2, "--seed", SEED, "--policy",
                  "raiders=cautious", "--out", where / "run.json")
    assert result.exit_code == 0, result.output
    return where / "run.json"


class TestARun:
    def test_the_text_says_who_wins_with_intervals_and_where_the_run_is(self, ember_run: Path) -> None:
        """The text gives each side's win rate with its 95 % interval, the rounds, every combatant, and where the
        run was saved with the command that plays a fight again."""
        result = omen("simulate", EMBER_FORD_2V2, "--fights", 20, "--workers", 1, "--seed", SEED, "--out",
                      ember_run.with_name("small.json"))
        said = " ".join(result.output.split())
        assert result.exit_code == 0, result.output
        assert "wardens (aggressive) win" in said and "(95 %:" in said and "rounds" in said
        assert "Kael Arden" in said and "Run saved to" in said and "--replay" in said
        assert "serial, 1 worker, " in said

    def test_a_dask_runs_workers_are_said_as_they_were_at_the_start(self, tmp_path: Path) -> None:
        """docs/simulate.md: a Dask cluster's workers may come and go during a run, so the footer says how many it had
        at the start (it said "dask, 2 workers" after one had died: a tester)."""
        result = omen("simulate", EMBER_FORD_2V2, "--fights", 20, "--dask", "local:1", "--seed", SEED, "--out",
                      tmp_path / "run.json")
        assert result.exit_code == 0, result.output
        assert "dask, 1 worker at the start, " in " ".join(result.output.split())

    def test_going_down_and_going_down_first_are_given_with_their_intervals(self, tmp_path: Path) -> None:
        """docs/simulate.md: every rate with its Wilson 95 % interval, each combatant's going down and going down
        first included (the table gave them bare): the columns say "% (95 %)" and each row ends with the two rates
        of the run's summary, in percent, each with its interval in brackets."""
        result = omen("simulate", EMBER_FORD_2V2, "--fights", 20, "--workers", 1, "--seed", SEED, "--out",
                      tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert " ".join(next(x for x in lines if x.startswith("combatant")).split()[-9:]) == \
            "down % (95 %) first down % (95 %)"
        summary = json.loads((tmp_path / "r.json").read_text())["encounters"][0]["summary"]
        for c in summary["combatants"]:
            row = next(x for x in lines if x.startswith(c["name"]))
            down, first = Rate(**c["down"]), Rate(**c["falls_first"])
            assert " ".join(row.split()[-4:]) == f"{share(down)} {share(first)}"
            assert re.fullmatch(r"(\d+\.\d \(\d+\.\d–\d+\.\d\) ?){2}", " ".join(row.split()[-4:]))

    def test_control_characters_in_names_are_shown_as_escapes(self, tmp_path: Path) -> None:
        """README: a name's control characters are shown as escapes in every format; the table of combatants
        printed them raw (a real ESC turned the terminal red, a NUL went out as is)."""
        duel = tmp_path / "duel.toml"
        duel.write_text(mirror_duel(tmp_path).read_text().replace('name = "Ash"', 'name = "Ada\\u001b[31mRED"')
                        .replace('name = "Bo"', 'name = "Bo\\u0000NUL"'))
        result = omen("simulate", duel, "--fights", 2, "--workers", 1, "--seed", SEED, "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x00" not in result.output
        assert "Ada\\x1b[31mRED" in result.output and "Bo\\x00NUL" in result.output

    def test_until_ci_says_it_stopped_at_a_half_width(self, tmp_path: Path) -> None:
        """--until-ci 0.15 stops once every rate's 95 % interval has a half-width under 15 points, and says so in
        those words (it said "stopped at ± 15 points")."""
        result = omen("simulate", mirror_duel(tmp_path), "--until-ci", 0.15, "--workers", 1, "--batch", 50, "--seed",
                      SEED, "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert "fights, seed " + SEED + ", stopped once every rate's 95 % interval had a half-width under 15 points" \
            in said

    def test_until_ci_stopped_by_max_fights_says_so_with_the_widest_half_width(self, tmp_path: Path) -> None:
        """--until-ci 0.01 capped by --max-fights 100: the run stops at the cap and says so, with the widest
        half-width it reached (it said it had met the target, ± 1 point)."""
        result = omen("simulate", mirror_duel(tmp_path), "--until-ci", 0.01, "--max-fights", 100, "--workers", 1,
                      "--batch", 50, "--seed", SEED, "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert (f"100 fights, seed {SEED}, stopped at --max-fights 100 before every rate's 95 % interval was under "
                "± 1 point: the widest half-width reached was ± 9.5 points") in said
        assert "stopped once" not in said

    def test_every_side_down_is_its_own_outcome_with_an_interval_and_said_on_replay(self, tmp_path: Path) -> None:
        """C33: a fight in which Strike Back fells Bo before Bo's blow fells Ash is reported as every side down,
        with its 95 % interval, not as a draw at the round limit, south (all down first) defeated and Bo first
        down; played again, it says so."""
        result = omen("simulate", mutual_knockout(tmp_path), "--fights", 12, "--workers", 1, "--seed", SEED,
                      "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert "every side down 58.3% (95 %: 32.0% to 80.7%; the last blow felled both: no winner)" in said
        assert "draws 0.0% (95 %: 0.0% to 24.2%; no side down in " in said  # reported at 0 too (docs/simulate.md)
        records = json.loads((tmp_path / "r.json").read_text())["encounters"][0]["records"]
        both = next(r for r in records if r["ended"] == "all_down")
        assert (both["winner"], both["defeated"], both["first_down"]) == (None, "south", "bo")
        played = omen("simulate", "--replay", tmp_path / "r.json", both["index"], "--log", tmp_path / "f.jsonl")
        assert played.exit_code == 0, played.output
        assert (f"every side down in {both['rounds']} round{'s' if both['rounds'] != 1 else ''} (south all down "
                "first, defeated; the same command felled the rest: no winner) (as the run recorded)") \
            in " ".join(played.output.split())

    def test_draws_are_given_with_their_interval(self, tmp_path: Path) -> None:
        """A duel of 40 HP a side stopped at --max-rounds 1: every fight a draw, said with its 95 % interval, in
        1 round (it said "1 rounds")."""
        result = omen("simulate", mirror_duel(tmp_path, hp=40), "--fights", 10, "--max-rounds", 1, "--workers", 1,
                      "--seed", SEED, "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        assert "draws 100.0% (95 %: 72.2% to 100.0%; no side down in 1 round)" in " ".join(result.output.split())

    def test_a_report_sent_to_a_file_or_a_pipe_is_never_wrapped(self, tmp_path: Path) -> None:
        """Standard output no terminal: a long name keeps its row of the table whole, and the command that plays a
        fight again is one line, to copy (both were wrapped at 80 columns)."""
        name = "Ashworth the Unbelievably Long-Named Knight of the Ember Ford"
        duel = tmp_path / "long.toml"
        duel.write_text(mirror_duel(tmp_path).read_text().replace('name = "Ash"', f'name = "{name}"'))
        out = tmp_path / "a-folder-with-a-rather-long-name" / "and-a-run-file-named-at-length.json"
        out.parent.mkdir()
        result = omen("simulate", duel, "--fights", 4, "--workers", 1, "--seed", SEED, "--out", out)
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert [line.split()[-9:-7] for line in lines if line.startswith(name)] == [["north", "4.0/12"]]
        assert lines[-1].endswith(f". Play a fight again: omen simulate --replay {out} INDEX --log fight.jsonl")

    def test_the_json_is_the_run_and_validates_against_the_published_schema(self, ember_run: Path,
                                                                            tmp_path: Path) -> None:
        """--json prints the run (manifest, summary, records, timing), as written to --out, valid against
        docs/schema/simulation.schema.json; the manifest records the seed, the policies and the fights."""
        import jsonschema

        result = omen("simulate", EMBER_FORD_2V2, "--fights", 30, "--workers", 1, "--seed", SEED, "--json",
                      "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        printed = json.loads(result.stdout)
        schema = json.loads((ROOT / "docs" / "schema" / "simulation.schema.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(printed)
        assert printed == json.loads((tmp_path / "r.json").read_text())
        m = printed["manifest"]
        assert (m["seed"], m["fights"], m["policies"]) == (SEED, 30, {"wardens": "aggressive", "raiders": "aggressive"})
        assert len(printed["encounters"][0]["records"]) == 30

    def test_the_run_is_the_same_bytes_whatever_the_hash_seed(self, tmp_path: Path) -> None:
        """A weapon's properties (a set) are written sorted in the run file and in --json (canonical): the same
        run in processes with PYTHONHASHSEED 1 to 4 gives the same bytes, its clock and timing aside (Skarn's
        hatchet, thrown and ranged, came out in either order)."""
        import os
        import subprocess
        import sys

        files, printed = set(), set()
        for hash_seed in range(1, 5):
            out = tmp_path / f"r{hash_seed}.json"
            done = subprocess.run([sys.executable, "-m", "omen_cli", "simulate", str(EMBER_FORD_2V2), "--fights", "2",
                                   "--workers", "1", "--seed", SEED, "--json", "--out", str(out)], cwd=ROOT,
                                  env={**os.environ, "PYTHONHASHSEED": str(hash_seed)}, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            files.add(out.read_text().split('"encounters":', 1)[1].split(',"timing":', 1)[0])
            printed.add(done.stdout.split('"encounters":', 1)[1].split(',"timing":', 1)[0])
        assert len(files) == len(printed) == 1 and '"properties":["ranged","thrown"]' in files.pop()

    def test_five_random_fights_played_again_verify_with_the_recorded_winner_and_rounds(self, ember_run: Path,
                                                                                        tmp_path: Path) -> None:
        """Five fights of the run, chosen at random, each played again by index into its own log: `omen verify`
        finds every event, number and seeded die right, and each has the winner and rounds the run recorded."""
        recorded = json.loads(ember_run.read_text())["encounters"][0]["records"]
        for index in random.Random(24).sample(range(200), 5):
            log = tmp_path / f"fight-{index}.jsonl"
            result = omen("simulate", "--replay", ember_run, index, "--log", log)
            assert result.exit_code == 0, result.output
            assert "(as the run recorded)" in " ".join(result.output.split())
            verified = omen("verify", log)
            assert verified.exit_code == 0 and "verified" in verified.output, verified.output
            replayed = json.loads(omen("replay", log, "--json").stdout)
            rec = recorded[index]
            assert replayed["round"] == rec["rounds"], (index, replayed["round"], rec["rounds"])
            ended = next(json.loads(line)["event"] for line in log.read_text().splitlines()
                     if '"fight_ended"' in line)
            assert ended["side"] == rec["defeated"] and {"wardens", "raiders"} - {ended["side"]} == {rec["winner"]}

    def test_a_fight_played_again_twice_is_the_same_log(self, ember_run: Path, tmp_path: Path) -> None:
        """Fight 3 played again into two logs gives the same events, line for line (the clock is the run's start,
        the dice and the policies' choices derived from the run's seed)."""
        logs = [tmp_path / f"{i}.jsonl" for i in (1, 2)]
        for log in logs:
            assert omen("simulate", "--replay", ember_run, 3, "--log", log, "--json").exit_code == 0
        events = [[json.loads(line)["event"] for line in log.read_text().splitlines()] for log in logs]
        assert events[0] == events[1] and len(events[0]) > 50
        assert logs[0].read_bytes() == logs[1].read_bytes()

    def test_a_policy_from_a_file_plays_on_a_pool(self, tmp_path: Path) -> None:
        """The documented example policy, given as its file, plays the wardens on 2 processes."""
        policy = f"wardens={ROOT}/examples/policies/hold_the_line.py:HoldTheLine"
        result = omen("simulate", EMBER_FORD_2V2, "--fights", 20, "--workers", 2, "--policy", policy, "--json",
                      "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        side = json.loads(result.stdout)["encounters"][0]["summary"]["sides"][0]
        assert side["policy"].endswith("HoldTheLine") and side["policy_name"] == "hold-the-line"
        shown = omen("simulate", EMBER_FORD_2V2, "--fights", 4, "--workers", 1, "--policy", policy, "--out",
                     tmp_path / "s.json")
        assert f"wardens (hold-the-line, {policy.partition('=')[2]}) win" in " ".join(shown.output.split())


    def test_a_policy_file_given_relative_is_recorded_absolute_and_replays_from_anywhere(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A policy's file given relative to the directory the run is made in is recorded by its absolute path, so
        that a fight of the run plays again from another directory (it was recorded as typed, and --replay from
        elsewhere said "no such file"; on Dask, each worker resolved it against its own directory: found by a
        tester)."""
        monkeypatch.chdir(ROOT / "examples")
        result = omen("simulate", EMBER_FORD_2V2, "--fights", 2, "--workers", 1, "--policy",
                      "wardens=policies/hold_the_line.py:HoldTheLine", "--out", tmp_path / "r.json")
        assert result.exit_code == 0, result.output
        recorded = json.loads((tmp_path / "r.json").read_text())["manifest"]["policies"]["wardens"]
        assert recorded == f"{ROOT}/examples/policies/hold_the_line.py:HoldTheLine"
        monkeypatch.chdir(tmp_path)
        again = omen("simulate", "--replay", tmp_path / "r.json", 1, "--log", tmp_path / "f.jsonl")
        assert again.exit_code == 0 and "(as the run recorded)" in again.output, again.output


class TestTheRunsFile:
    def test_the_default_name_tells_runs_apart_by_their_settings(self, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
        """The default --out is out/simulations/ID-SEED-SETTINGS.json, SETTINGS the first 8 hex digits of the
        SHA-256 of the run's settings: the same duel and seed with another policy, HP display or round limit is
        another file (it was one name, overwritten, so a report's replay commands played another run's fights);
        the same run again is the same name, written again."""
        import re

        monkeypatch.chdir(tmp_path)
        duel = mirror_duel(tmp_path)
        base = ("simulate", duel, "--fights", 2, "--workers", 1, "--seed", SEED)
        variants = [(), ("--policy", "north=cautious"), ("--hp-display", "exact"), ("--max-rounds", 3), ()]
        for extra in variants:
            result = omen(*base, *extra)
            assert result.exit_code == 0, result.output
        names = sorted(p.name for p in (tmp_path / "out" / "simulations").iterdir())
        assert len(names) == 4 and all(re.fullmatch(f"duel-{SEED[:8]}-[0-9a-f]{{8}}\\.json", n) for n in names)

    def test_the_report_overwrites_nothing_but_a_report(self, tmp_path: Path) -> None:
        """--html naming the run's own file, the encounter, or a file that is no report of omen simulate is refused
        before any fight, exit 2, in one line, the file left as it was (it overwrote each with the page, exit 0: a
        tester lost a run and an encounter so); a report written before is written again."""
        duel, out = mirror_duel(tmp_path), tmp_path / "run.json"
        base = ("simulate", duel, "--fights", 2, "--workers", 1, "--seed", SEED, "--out", out)
        assert omen(*base).exit_code == 0
        kept = {path: path.read_bytes() for path in (out, Path(duel))}
        notes = tmp_path / "notes.html"
        notes.write_text("<p>my notes</p>")
        for page, said in ((out, f"{out}: --html and the run's file ({out}) are one file"),
                           (Path(duel), f"{duel}: --html names the encounter given ({duel})"),
                           (notes, f"{notes} already exists and is not a report of omen simulate: choose another "
                                   "--html, or move it away (nothing was overwritten)")):
            refused = omen(*base, "--html", page)
            assert refused.exit_code == 2, refused.output
            assert " ".join(refused.output.split()).startswith(f"omen: error: {said}"), refused.output
        assert {path: path.read_bytes() for path in kept} == kept and notes.read_text() == "<p>my notes</p>"
        page = tmp_path / "report.html"
        assert omen(*base, "--html", page).exit_code == 0
        assert omen(*base, "--html", page).exit_code == 0  # its own report, again

    def test_another_run_or_another_file_is_never_overwritten(self, tmp_path: Path) -> None:
        """A run whose --out holds another run (other settings) is refused before any fight, exit 2, in one line,
        and the file is left as it was; so is one whose --out is a file that is no run; the same run again
        writes it again."""
        duel, out = mirror_duel(tmp_path), tmp_path / "run.json"
        base = ("simulate", duel, "--fights", 2, "--workers", 1, "--seed", SEED, "--out", out)
        assert omen(*base).exit_code == 0
        before = out.read_bytes()
        refused = omen(*base, "--max-rounds", 3)
        assert refused.exit_code == 2 and out.read_bytes() == before
        assert " ".join(refused.output.split()) == (
            f"omen: error: {out} already holds another run (seed {SEED[:8]}..., 2 fights, other settings): its "
            "report's replay commands name it; choose another --out, or move it away (nothing was overwritten)")
        assert omen(*base).exit_code == 0
        other = tmp_path / "notes.json"
        other.write_text("{}")
        refused = omen(*base[:-1], other)
        assert refused.exit_code == 2 and other.read_text() == "{}"
        assert "is not a run of omen simulate: choose another --out" in refused.output


class TestBadInput:
    @pytest.mark.parametrize(("args", "said"), [
        ((), "give an ENCOUNTER, or --compare"),
        (("--fights", 5, "--until-ci", 0.1), "not both"),
        (("--policy", "heroes"), "give SIDE=NAME"),
        (("--policy", "pirates=random"), "no side 'pirates'"),
        (("--policy", "north=bold"), "unknown policy 'bold'"),
        (("--seed", "xyz"), "--seed must be hex"),
        (("--workers", 0), "at least 1"),
        (("--workers", 10**6), "--workers 1,000,000 is more than"),
        (("--until-ci", 2), "between 0 and 0.5"),
        (("--dask", "local:0"), "local:N needs a number of workers"),
        (("--dask", "local:99999"), "--dask local:99999: 99,999 local workers is more than"),
        (("--log", "x.jsonl"), "go with --replay"),
        (("--fights", 10**15), "--fights 1,000,000,000,000,000 is more than --max-fights 1,000,000, the most a run "
                               "plays: raise --max-fights (up to 10,000,000) to play more"),
        (("--fights", 3001, "--max-fights", 3000), "--fights 3,001 is more than --max-fights 3,000"),
        (("--until-ci", 0.1, "--max-fights", 10**9), "--max-fights 1,000,000,000 is more than 10,000,000, the most "
                                                     "fights a run may play"),
        (("--policy", "north=random", "--policy", "north=cautious"),
         "--policy north=...: given twice (random and cautious); give each side's policy once"),
        (("--until-ci", 0), "--until-ci is the interval's half-width, between 0 and 0.5"),
        (("--dask", "bogus"), "--dask bogus: not a Dask scheduler's address (tcp://HOST:8786, or local:N)"),
        (("--dask", "tcp://"), "--dask tcp://: not a Dask scheduler's address (tcp://HOST:8786, or local:N)"),
        (("--max-rounds", 10**21), "--max-rounds must be from 1 to 1,000 (a stalemate plays every round allowed), "
                                   "not 1000000000000000000000"),
        (("--max-rounds", 1001), "--max-rounds must be from 1 to 1,000"),
        (("--seed", "00"), "--seed must be at least 16 bytes (32 hex digits), as seeded dice are "
                           "(docs/scenarios.md): '00' is 1"),
    ])
    def test_is_refused_with_exit_2(self, tmp_path: Path, args: tuple[object, ...], said: str) -> None:
        """Each mistake is one line on standard error saying what is wrong, exit 2, and nothing written."""
        duel = mirror_duel(tmp_path)
        given = args if args == () else (duel, *args)
        result = omen("simulate", *given, "--out", tmp_path / "run.json")
        assert result.exit_code == 2, result.output
        assert said in " ".join(result.output.split())
        assert not (tmp_path / "run.json").exists()

    @pytest.mark.parametrize(("args", "said"), [
        (("--fights", 0), "omen: error: --fights must be at least 1, not 0 (see 'omen simulate --help')"),
        (("--workers", 0), "omen: error: --workers must be at least 1, not 0 (see 'omen simulate --help')"),
        (("--until-ci", 0), "omen: error: --until-ci is the interval's half-width, between 0 and 0.5 (0.01 for ± 1 "
                            "point), not 0 (see 'omen simulate --help')"),
        (("--batch", 0), "omen: error: --batch must be at least 1, not 0 (see 'omen simulate --help')"),
        (("--max-fights", 0), "omen: error: --max-fights must be at least 1, not 0 (see 'omen simulate --help')"),
        (("--max-fights", -3), "omen: error: --max-fights must be at least 1, not -3 (see 'omen simulate --help')"),
    ])
    def test_a_count_out_of_range_points_to_the_help_as_other_usage_errors_do(
            self, tmp_path: Path, args: tuple[object, ...], said: str) -> None:
        """A count out of its range is a usage error ending as a count that is no number does, and the number is
        echoed as given (0, not 0.0)."""
        result = omen("simulate", mirror_duel(tmp_path), *args, "--out", tmp_path / "run.json")
        assert (result.exit_code, " ".join(result.output.split())) == (2, said)

    @pytest.mark.parametrize(("body", "said"), [
        ('        return "end_turn"\n',
         "), gave 'end_turn', not a command"),
        ('        raise KeyError("no plan")\n',
         "), raised KeyError: 'no plan'"),
        ('        return EndTurn(who="nobody")\n',
         " gave ash's {\"command\":\"end_turn\",\"who\":\"nobody\"}, refused:"),
        ('        raise SystemExit(0)\n',
         "), raised SystemExit: 0"),
    ])
    def test_a_policy_that_answers_amiss_stops_the_run_with_exit_2(self, tmp_path: Path, body: str,
                                                                   said: str) -> None:
        """docs/simulate.md: a policy of the user's that returns what is not a command, raises, or gives a command
        the rules refuse stops the run with one line naming the fight and the policy, exit 2, nothing written (a
        string gave a traceback; a refused command exit 1, the code of findings)."""
        policy = tmp_path / "odd.py"
        policy.write_text("from omen_core.commands import EndTurn\n\n\nclass Odd:\n    name = 'odd'\n\n"
                          "    def decide(self, decision):\n" + body)
        duel = mirror_duel(tmp_path)
        result = omen("simulate", duel, "--fights", 2, "--workers", 1, "--seed", SEED, "--policy",
                      f"north={policy}:Odd", "--out", tmp_path / "run.json")
        assert result.exit_code == 2, result.output
        shown = " ".join(result.output.split())
        assert shown.startswith("omen: error: fight 0: the 'odd' policy of north") and said in shown
        assert "Traceback" not in result.output and not (tmp_path / "run.json").exists()

    @pytest.mark.parametrize(("source", "said"), [
        ('raise RuntimeError("at import")\n', "cannot import '{file}': it raised RuntimeError: at import"),
        ("import sys\nsys.exit(0)\n", "cannot import '{file}': it raised SystemExit: 0"),
        ("class Odd:\n    def __init__(self):\n        raise SystemExit(3)\n",
         "cannot be made: it raised SystemExit: 3"),
    ])
    def test_a_policy_that_raises_on_import_or_when_made_is_one_line_exit_2(self, tmp_path: Path, source: str,
                                                                           said: str) -> None:
        """A policy file whose import raises (sys.exit included), or whose class raises when made, is one line
        naming the policy and what it raised, exit 2, nothing written (it was a traceback and exit 1, or exit 0
        with no report)."""
        policy = tmp_path / "odd.py"
        policy.write_text(source)
        result = omen("simulate", mirror_duel(tmp_path), "--fights", 2, "--workers", 1, "--seed", SEED, "--policy",
                      f"north={policy}:Odd", "--out", tmp_path / "run.json")
        assert result.exit_code == 2, result.output
        shown = " ".join(result.output.split())
        assert shown == f"omen: error: policy '{policy}:Odd': " + said.format(file=policy)
        assert not (tmp_path / "run.json").exists()

    def test_a_table_under_sheet_is_refused_at_its_line_with_exit_2(self, tmp_path: Path) -> None:
        """A ``[combatants.sheet]`` table (an inline sheet written one level too deep) is refused in one line, exit
        2, at its line and ``$.combatants[1].sheet``: it was read as the path "{'id': 'bo', ...}"."""
        path = tmp_path / "e.toml"
        text = mirror_duel(tmp_path).read_text()
        at = text.rindex("[[combatants]]\n") + len("[[combatants]]\n")
        path.write_text(text[:at] + "[combatants.sheet]\n" + text[at:])
        line = path.read_text().splitlines().index("[combatants.sheet]") + 1
        result = omen("simulate", path, "--fights", 3, "--out", tmp_path / "r.json")
        assert result.exit_code == 2 and not (tmp_path / "r.json").exists()
        assert " ".join(result.output.split()) == (
            f"omen: error: {path}:{line}: `sheet` must be a path string (a sheet file, relative to the scenario), "
            "not a table: an inline sheet's fields go directly in the [[combatants]] table, with no `sheet` key "
            "(docs/scenarios.md) (at $.combatants[1].sheet)")

    def test_an_encounter_that_is_no_encounter_names_its_line(self, tmp_path: Path) -> None:
        """A scenario that scripts the fight is refused naming the file, the line and the command."""
        path = tmp_path / "e.toml"
        path.write_text(mirror_duel(tmp_path).read_text() + '\n[[commands]]\ncommand = "end_turn"\nwho = "ash"\n')
        result = omen("simulate", path, "--fights", 3)
        assert result.exit_code == 2 and "e.toml:" in result.output and "only set the fight up" in result.output

    def test_replay_needs_a_log_and_a_free_one(self, ember_run: Path, tmp_path: Path) -> None:
        """--replay without --log, or into a log that already holds that fight, is refused (exit 2)."""
        assert "needs --log" in omen("simulate", "--replay", ember_run, 1).output
        log = tmp_path / "f.jsonl"
        assert omen("simulate", "--replay", ember_run, 1, "--log", log).exit_code == 0
        again = omen("simulate", "--replay", ember_run, 1, "--log", log)
        assert again.exit_code == 2 and "already holds fight 'sim-1'" in again.output

    def test_compare_with_one_encounter_says_b_is_missing(self, tmp_path: Path) -> None:
        """--compare A.toml followed by another option: B is missing, said so (it said "(not both)", the option
        taken for B and the option's value for an ENCOUNTER)."""
        duel = mirror_duel(tmp_path)
        result = omen("simulate", "--compare", duel, "--fights", 3)
        assert result.exit_code == 2, result.output
        assert " ".join(result.output.split()) == (f"omen: error: --compare A.toml B.toml takes two encounter "
                                                   f"files: B is missing ({duel} was followed by the option --fights)")
        both = omen("simulate", duel, "--compare", duel, duel)
        assert both.exit_code == 2 and "not both (ENCOUNTER " in both.output

    def test_replay_refuses_an_encounter_of_its_own_and_a_label_of_a_run_that_compares_nothing(
            self, ember_run: Path, tmp_path: Path) -> None:
        """--replay plays the run's own encounter: an ENCOUNTER given too is refused (it was silently ignored);
        --encounter A on a run of one encounter says it is not a comparison (it said "(it has -)")."""
        log = tmp_path / "f.jsonl"
        given = omen("simulate", EMBER_FORD_2V2, "--replay", ember_run, 1, "--log", log)
        assert given.exit_code == 2 and "leave out ENCOUNTER" in given.output and not log.exists()
        labelled = omen("simulate", "--replay", ember_run, 1, "--log", log, "--encounter", "A")
        assert labelled.exit_code == 2
        assert " ".join(labelled.output.split()) == ("omen: error: --encounter A: the run is not a comparison (it "
                                                     "played one encounter): leave --encounter out")

    def test_replay_into_a_missing_directory_is_refused_as_omen_run_refuses_it(self, ember_run: Path,
                                                                              tmp_path: Path) -> None:
        """README's exit table: a log in a directory that does not exist is exit 2, in omen run's words, and no
        directory is made (it made nodir/deeper/ and exited 0)."""
        log = tmp_path / "nodir" / "deeper" / "x.jsonl"
        result = omen("simulate", "--replay", ember_run, 1, "--log", log)
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.split())
        assert said == f"omen: error: {log}: cannot write the fight's log: the directory {log.parent} does not exist"
        assert not (tmp_path / "nodir").exists()
        run = omen("run", ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "scenario.toml", "--log", log)
        assert run.exit_code == 2 and " ".join(run.output.split()) == said

    def test_a_run_file_edited_since_is_said_when_its_fight_comes_out_otherwise(self, ember_run: Path,
                                                                                 tmp_path: Path) -> None:
        """Kael's HP edited to 1 in the run file: the fight comes out differently, exit 1, and the message says the
        encounter no longer hashes to its recorded digest (it blamed another omen version, the same one)."""
        run = json.loads(ember_run.read_text())
        run["encounters"][0]["encounter"]["combatants"][0]["hp"] = 1
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 0, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 1, result.output
        said = " ".join(result.output.split())
        assert "no longer hashes to the digest the run recorded: edited since the run" in said
        assert "may rule differently" not in said

    @pytest.mark.parametrize("edit, says", [
        (lambda run: run["encounters"][0]["encounter"].update(title="Forged title"),
         "encounter 0 no longer hashes to the digest the run recorded"),
        (lambda run: run["encounters"][0]["encounter"].update(digest="0" * 64),
         "encounter 0 no longer hashes to the digest the run recorded"),
        (lambda run: run["encounters"][0]["summary"]["sides"][0]["wins"].update(count=1),
         "encounter 0's summary is not the one its 200 records give"),
    ])
    def test_a_run_file_edited_where_the_fight_does_not_show_it_is_said(self, ember_run: Path, tmp_path: Path,
                                                                          edit: Any, says: str) -> None:
        """An encounter's title or digest edited, or a side's wins in the summary: fight 1 comes out as recorded,
        but the run file does not hold together, exit 1, said, and not "(as the run recorded)" (all three printed
        "as the run recorded" and exited 0; found by a tester)."""
        run = json.loads(ember_run.read_text())
        edit(run)
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 1, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 1, result.output
        said = " ".join(result.output.split())
        assert "came out as the run recorded it, but the run file was edited since the run" in said and says in said
        assert "(as the run recorded)" not in said

    @pytest.mark.parametrize("kept", [0, 1])
    def test_a_run_file_missing_records_is_refused_without_a_traceback(self, ember_run: Path, tmp_path: Path,
                                                                      kept: int) -> None:
        """A run file whose encounter keeps fewer records than its manifest's fights (edited since the run) is
        refused in one line, exit 2, nothing written (fight 2 of a file cut to one record raised IndexError)."""
        run = json.loads(ember_run.read_text())
        run["encounters"][0]["records"] = run["encounters"][0]["records"][:kept]
        edited = tmp_path / "cut.json"
        edited.write_text(json.dumps(run))
        log = tmp_path / "f.jsonl"
        result = omen("simulate", "--replay", edited, 2, "--log", log)
        assert result.exit_code == 2 and not log.exists(), result.output
        assert " ".join(result.output.split()) == (f"omen: error: the run file's encounter 0 holds {kept} record(s), "
                                                   "not the 200 its manifest says the run played: edited since the run")

    def test_a_record_edited_since_is_said_as_edited_not_as_another_omen(self, ember_run: Path,
                                                                         tmp_path: Path) -> None:
        """Fight 0's rounds edited in the run file, by the same omen: the fight comes out as it did, not as the
        edited record, exit 1, and the message says the record was edited (it blamed another omen version)."""
        run = json.loads(ember_run.read_text())
        run["encounters"][0]["records"][0]["rounds"] += 5
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 0, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 1, result.output
        said = " ".join(result.output.split())
        assert f"the run and this omen are both omen {run['manifest']['omen']}: the run file's record of fight 0 " \
               "was edited since the run (8 other fights played again too, 1 to 8, come out as recorded)" in said
        assert "may rule differently" not in said

    def test_a_fight_that_comes_out_otherwise_with_a_policy_of_ones_own_names_it_too(self, tmp_path: Path) -> None:
        """With a policy of one's own (a file that may have changed since the run), a record that no longer matches
        is said as edited, or that policy playing otherwise now."""
        policy = f"{ROOT}/examples/policies/hold_the_line.py:HoldTheLine"
        made = omen("simulate", EMBER_FORD_2V2, "--fights", 2, "--workers", 1, "--seed", SEED, "--policy",
                    f"wardens={policy}", "--out", tmp_path / "r.json")
        assert made.exit_code == 0, made.output
        run = json.loads((tmp_path / "r.json").read_text())
        run["encounters"][0]["records"][1]["rounds"] += 5
        (tmp_path / "r.json").write_text(json.dumps(run))
        result = omen("simulate", "--replay", tmp_path / "r.json", 1, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 1, result.output
        assert (f"the run file's record of fight 1 was edited since the run, or the policy {policy} plays otherwise "
                "now") in " ".join(result.output.split())

    def test_replay_of_an_index_outside_the_run(self, ember_run: Path, tmp_path: Path) -> None:
        """A fight the run does not have is refused naming its range."""
        result = omen("simulate", "--replay", ember_run, 200, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 2 and "fights 0 to 199, not 200" in result.output

    def test_an_unreachable_dask_scheduler_is_said(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """--dask at an address where no scheduler listens: exit 2 saying it cannot reach it (given 1 s to answer
        here, not CONNECT_WAIT's 10: the same code, 9 s of the suite spared)."""
        from omen_replay.simulate import run

        monkeypatch.setattr(run, "CONNECT_WAIT", 1.0)
        result = omen("simulate", mirror_duel(tmp_path), "--fights", 3, "--dask", "tcp://127.0.0.1:9")
        assert result.exit_code == 2 and "cannot reach the Dask scheduler" in result.output


class TestWhatARunWrites:
    @pytest.mark.parametrize("workers", [2147483648, 99999999999999999999999])
    def test_more_workers_than_four_per_core_are_refused_in_one_line(self, tmp_path: Path, workers: int) -> None:
        """--workers is at most 4 per core this process may use: 2,147,483,648 (or more) is one line naming the
        option, the value and the bound, exit 2, nothing written (it was an OverflowError traceback, exit 1)."""
        cores = len(os.sched_getaffinity(0))
        result = omen("simulate", mirror_duel(tmp_path), "--fights", 5, "--seed", SEED, "--workers", workers,
                      "--out", tmp_path / "w.json")
        assert (result.exit_code, " ".join(result.output.split())) == (
            2, f"omen: error: --workers {workers:,} is more than {4 * cores}, the most on this machine (4 per core, "
               f"{cores} core{'s' if cores != 1 else ''}): every fight comes out the same on fewer (see 'omen "
               "simulate --help')")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["duel.toml"]

    @pytest.mark.parametrize(("make", "page", "said"), [
        ("page.html/", "page.html", "{page}: cannot write the report: it is a directory"),
        ("", "/proc/page.html", "{page}: cannot write the report: the directory /proc takes no new file (No such "
                                "file or directory)"),
        ("page-fights", "page.html", "{folder}: cannot write the report's fight pages: it is not a directory"),
        ("", "nodir/r.html", "{page}: cannot write the report: the directory {parent} does not exist"),
    ])
    def test_a_report_that_cannot_be_written_is_refused_before_the_run(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: str, page: str, said: str) -> None:
        """README: exit 2 is an output the CLI cannot write, and no file left: --html into a directory, where no
        file can be made (/proc), beside a PAGE-fights that is a file, or in a directory that does not exist is
        refused before any fight, and the run's file, PAGE-fights/ and out/simulations/ are not made (it was exit
        3 with run.json and PAGE-fights/ left behind, or an empty out/simulations/)."""
        monkeypatch.chdir(tmp_path)
        duel = mirror_duel(tmp_path)
        if make.endswith("/"):
            (tmp_path / make).mkdir()
        elif make:
            (tmp_path / make).write_text("mine")
        before = sorted(p.name for p in tmp_path.iterdir())
        for out in (("--out", "run.json"), ()):
            result = omen("simulate", duel, "--fights", 20, "--seed", SEED, "--workers", 1, *out, "--html", page)
            target = Path(page)
            assert (result.exit_code, " ".join(result.output.split())) == (2, "omen: error: " + said.format(
                page=target, folder=target.with_name(target.stem + "-fights"), parent=target.parent))
            assert sorted(p.name for p in tmp_path.iterdir()) == before

    @pytest.mark.parametrize("dask", ["tcp://127.0.0.1:9", "local:0"])
    def test_a_refused_run_makes_no_directory(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              dask: str) -> None:
        """A run refused (no scheduler, local:0) leaves nothing behind: out/simulations/ is made only when the run
        is written (it was made first, and left empty). The scheduler is given 1 s to answer (CONNECT_WAIT's 10 s
        spared)."""
        from omen_replay.simulate import run

        monkeypatch.setattr(run, "CONNECT_WAIT", 1.0)
        monkeypatch.chdir(tmp_path)
        result = omen("simulate", mirror_duel(tmp_path), "--fights", 3, "--seed", SEED, "--dask", dask)
        assert result.exit_code == 2, result.output
        assert sorted(p.name for p in tmp_path.iterdir()) == ["duel.toml"]
        made = omen("simulate", mirror_duel(tmp_path), "--fights", 3, "--seed", SEED, "--workers", 1)
        assert made.exit_code == 0 and len(list((tmp_path / "out" / "simulations").iterdir())) == 1

    def test_a_dask_scheduler_with_no_worker_is_waited_on_then_refused(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """docs/simulate.md: --dask to a scheduler no worker joins (a LocalCluster of 0 workers on 127.0.0.1:9114)
        says on standard error that it waits for a worker, then after its wait (30 s, as the docs say; 3 s here, the
        same code, to spare the suite 27 s) refuses the run in one line, exit 2, nothing written (it waited forever,
        saying nothing)."""
        import importlib
        import time

        from omen_replay.simulate import run

        assert run.WORKER_WAIT == 30.0 and "for 30 s at most (`omen_replay.simulate.run.WORKER_WAIT`)" in " ".join(
            (ROOT / "docs" / "simulate.md").read_text().split())
        monkeypatch.setattr(run, "WORKER_WAIT", 3.0)
        monkeypatch.chdir(tmp_path)
        distributed: Any = importlib.import_module("distributed")
        with distributed.LocalCluster(n_workers=0, host="127.0.0.1", scheduler_port=9114, processes=False,
                                      dashboard_address=None, silence_logs=40,
                                      scheduler_kwargs={"dashboard_address": "127.0.0.1:9115"}) as empty:
            address = empty.scheduler_address
            start = time.perf_counter()
            result = omen("simulate", mirror_duel(tmp_path), "--fights", 3, "--seed", SEED, "--dask", address)
            waited = time.perf_counter() - start
        assert result.exit_code == 2 and 3.0 <= waited < 3.0 + 15
        assert " ".join(result.output.split()) == (
            f"omen: waiting for a Dask worker at {address} (at most 3 s)… omen: error: --dask {address}: the "
            f"scheduler has no worker: none joined within 3 s (start one: dask worker {address} --nthreads 1)")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["duel.toml"]

    def test_a_page_written_over_an_earlier_one_links_only_its_own_fights(self, tmp_path: Path) -> None:
        """docs/simulate.md: --html over an earlier page clears the earlier run's fight pages from PAGE-fights/
        (fight-N.html, which omen wrote) before writing its own, so the folder holds what the page links, and
        leaves any other file there alone (two runs' pages were mixed in it)."""
        duel, page = mirror_duel(tmp_path), tmp_path / "p.html"
        for seed, out in (("11" * 16, "a.json"), ("22" * 16, "b.json")):
            result = omen("simulate", duel, "--fights", 30, "--seed", seed, "--workers", 1, "--out", tmp_path / out,
                          "--html", page)
            assert result.exit_code == 0, result.output
            if out == "a.json":
                (tmp_path / "p-fights" / "notes.txt").write_text("mine")
        linked = set(re.findall(r'href="p-fights/([^"]*)"', page.read_text()))
        kept = {p.name for p in (tmp_path / "p-fights").iterdir()}
        assert linked and kept == linked | {"notes.txt"}


    def test_a_fight_page_that_cannot_be_written_says_what_was_written_and_removed(self, tmp_path: Path) -> None:
        """A fight page the second run cannot write (its name a directory): exit 3, saying the run file written, the
        earlier run's pages removed, the pages written so far, and that the report is not written yet (it said the
        run file alone; found by a tester)."""
        duel, page = mirror_duel(tmp_path), tmp_path / "p.html"
        args = ("--fights", 30, "--seed", "11" * 16, "--workers", 1, "--html", page)
        assert omen("simulate", duel, *args, "--out", tmp_path / "a.json").exit_code == 0
        extremes = json.loads((tmp_path / "a.json").read_text())["encounters"][0]["summary"]["extremes"]
        order = list(dict.fromkeys(p["index"] for kind in ("longest", "upsets", "shortest") for p in extremes[kind]))
        assert len(order) > 1
        blocked = tmp_path / "p-fights" / f"fight-{order[-1]}.html"  # the last page written: others before it
        blocked.unlink()
        blocked.mkdir()
        result = omen("simulate", duel, *args, "--out", tmp_path / "b.json")
        said = " ".join(result.output.split())
        assert result.exit_code == 3, said
        assert f"{blocked}: cannot write a fight's session log" in said and "the run written to" in said
        assert f"earlier run's fight pages removed from {tmp_path / 'p-fights'}" in said
        assert "(the report" in said and "not yet: its links may be broken)" in said


class TestReplayTakesNoRunOption:
    def test_run_options_given_with_replay_are_refused_naming_them(self, ember_run: Path, tmp_path: Path) -> None:
        """--replay plays the fight as the run recorded it: --policy, --seed, --max-rounds, --html, --out, --dask
        given with it are refused in one line naming them, exit 2, no log written (they were silently ignored), as
        --log without --replay is refused."""
        log = tmp_path / "r.jsonl"
        result = omen("simulate", "--replay", ember_run, 3, "--log", log, "--policy", "wardens=random", "--seed",
                      "ff" * 16, "--max-rounds", 7, "--html", tmp_path / "q.html", "--out", tmp_path / "zz.json",
                      "--dask", "tcp://127.0.0.1:1")
        assert (result.exit_code, " ".join(result.output.split())) == (
            2, "omen: error: --policy, --seed, --dask, --max-rounds, --out, --html go with a run, not with --replay "
               "RUN.json INDEX, which plays the fight as the run recorded it (its seed, policies and settings): "
               "leave them out")
        one = omen("simulate", "--replay", ember_run, 3, "--log", log, "--batch", 100)
        assert one.exit_code == 2 and "--batch goes with a run" in one.output and "leave it out" in one.output
        assert sorted(p.name for p in tmp_path.iterdir()) == []

    def test_a_seed_edited_since_the_run_is_said_as_the_manifest_edited(self, ember_run: Path,
                                                                        tmp_path: Path) -> None:
        """The run's seed edited in its file, nothing else: every fight comes out otherwise, and the message says
        the manifest (its seed first) was edited, having found another fight differing too (it said fight 1's
        record was edited)."""
        run = json.loads(ember_run.read_text())
        run["manifest"]["seed"] = "ff" * 16
        edited = tmp_path / "s.json"
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 1, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 1, result.output
        said = " ".join(result.output.split())
        assert (f"(the run and this omen are both omen {run['manifest']['omen']}: fight 0 comes out otherwise too: "
                "the run file's manifest (its seed, policies, round limit or HP display) was edited since the run)"
                ) in said
        assert "record of fight" not in said

    def test_a_seed_edited_is_told_from_a_record_though_the_first_other_fight_comes_out_alike(
            self, ember_run: Path, tmp_path: Path) -> None:
        """The seed edited, and fight 0 coming out as recorded all the same (as a draw where no one dealt damage
        does under any seed: here its record is made the one the new seed gives): fight 5 played again is still
        said as the manifest edited, found by the next fight checked (one other fight alone blamed fight 5's
        record: a tester)."""
        import msgspec

        from omen_replay.simulate.run import read_run, regenerate

        run = json.loads(ember_run.read_text())
        run["manifest"]["seed"] = "ff" * 16
        edited = tmp_path / "s.json"
        edited.write_text(json.dumps(run))
        played, _recorded = regenerate(read_run(edited.read_bytes(), str(edited)), 0, None)
        run["encounters"][0]["records"][0] = msgspec.to_builtins(played.record)
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 5, "--log", tmp_path / "f.jsonl")
        assert result.exit_code == 1, result.output
        said = " ".join(result.output.split())
        assert "fight 1 comes out otherwise too: the run file's manifest" in said and "record of fight" not in said

    def test_a_run_file_without_its_format_is_refused(self, ember_run: Path, tmp_path: Path) -> None:
        """A run file whose ``format`` key was deleted is refused, exit 2, no log (it was played as the current
        format)."""
        run = json.loads(ember_run.read_text())
        del run["format"]
        edited = tmp_path / "nf.json"
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 1, "--log", tmp_path / "f.jsonl")
        assert (result.exit_code, " ".join(result.output.split())) == (
            2, f"omen: error: {edited}: not a run of omen simulate: it has no `format` (a run's file says \"format\": "
               "'omen-simulation/3')")
        assert not (tmp_path / "f.jsonl").exists()


    def test_a_run_file_whose_seed_is_no_hex_is_refused(self, ember_run: Path, tmp_path: Path) -> None:
        """A run file whose manifest seed is not 16 bytes of hex is refused at its path, exit 2, no log (it was a
        traceback from ``bytes.fromhex``; found by a tester)."""
        run = json.loads(ember_run.read_text())
        run["manifest"]["seed"] = "zz"
        edited = tmp_path / "zz.json"
        edited.write_text(json.dumps(run))
        result = omen("simulate", "--replay", edited, 1, "--log", tmp_path / "f.jsonl")
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and said.startswith(f"omen: error: {edited}") and "$.manifest.seed" in said
        assert "Traceback" not in result.output and not (tmp_path / "f.jsonl").exists()


class TestThreeSides:
    def test_the_report_says_which_side_was_defeated_so_the_lines_add_up(self, tmp_path: Path) -> None:
        """With three sides no side wins (C33 ends the fight at the first side down, two standing): the text gives
        each side's share of fights lost with no winner, with its interval, and with the wins (0) these add up to
        every fight; the page's "Who wins" chart has a bar for each (the report accounted for no fight)."""
        result = omen("simulate", three_sides(tmp_path), "--fights", 40, "--seed", SEED, "--workers", 1, "--out",
                      tmp_path / "t.json", "--html", tmp_path / "t.html")
        assert result.exit_code == 0, result.output
        sides = json.loads((tmp_path / "t.json").read_text())["encounters"][0]["summary"]["sides"]
        lost = [Rate(**x["defeated_no_winner"]) for x in sides]
        assert sum(r.count for r in lost) == 40 and all(x["wins"]["count"] == 0 for x in sides)
        said = " ".join(result.output.split())
        page = tmp_path.joinpath("t.html").read_text()
        for x, r in zip(sides, lost, strict=True):
            assert (f"{x['side']} defeated, no winner {r.rate:.1%} (95 %: {r.low:.1%} to {r.high:.1%}; two sides or "
                    "more left standing)") in said
            assert f"{x['side']} defeated, no winner" in page


class TestACompare:
    def test_a_comparison_plays_both_on_the_same_seeds_and_either_fight_again(self, tmp_path: Path) -> None:
        """--compare A B runs fight i of each from the same seed: where B is A (the same sheets) every record is
        the same and every difference 0: a mean's paired interval is that point, a rate's (Newcombe's for paired
        rates) centred on it and no wider than the unpaired one; --replay needs --encounter A or B, and plays that
        one."""
        a = mirror_duel(tmp_path, name="a")
        result = omen("simulate", "--compare", a, a, "--fights", 30, "--workers", 1, "--seed", SEED, "--json",
                      "--out", tmp_path / "c.json")
        assert result.exit_code == 0, result.output
        run = json.loads(result.stdout)
        first, second = run["encounters"]
        assert (first["label"], second["label"]) == ("A", "B") and first["records"] == second["records"]
        differences = run["comparison"]["differences"]
        assert all(d["difference"] == 0 and d["paired_low"] == -d["paired_high"] <= 0 for d in differences)
        assert all(d["unpaired_low"] <= d["paired_low"] for d in differences)
        rounds = next(d for d in differences if d["what"] == "rounds")
        assert rounds["paired_low"] == rounds["paired_high"] == 0
        assert "--encounter A or B" in omen("simulate", "--replay", tmp_path / "c.json", 3, "--log",
                                            tmp_path / "x.jsonl").output
        played = omen("simulate", "--replay", tmp_path / "c.json", 3, "--encounter", "b", "--log", tmp_path / "b.jsonl")
        assert played.exit_code == 0, played.output

    def test_the_text_says_a_difference_the_same_in_every_pair_and_the_page_names_distinct_logs(
            self, tmp_path: Path) -> None:
        """A against itself: a mean's paired difference is said to be the same in every pair (not "+0.000 to
        +0.000"), a rate's has Newcombe's paired interval around 0 (it was the point 0 too: a tester); the HTML
        page's commands that play A's and B's fights again write distinct logs (fight-a-N and fight-b-N: the same
        name for both was refused as already holding the fight)."""
        a = mirror_duel(tmp_path, name="a")
        result = omen("simulate", "--compare", a, a, "--fights", 20, "--workers", 1, "--seed", SEED, "--out",
                      tmp_path / "c.json", "--html", tmp_path / "c.html")
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert "north wins: +0.000 (-0.090 to +0.090 | -0.284 to +0.284)" in said
        assert "rounds: +0.000 (the same in every pair | -0.303 to +0.303)" in said
        assert "+0.000 to +0.000" not in said
        page = (tmp_path / "c.html").read_text()
        shortest = json.loads((tmp_path / "c.json").read_text())["encounters"][0]["summary"]["extremes"]["shortest"][0]
        i = shortest["index"]
        assert f"--encounter A --log fight-a-{i}.jsonl" in page and f"--encounter B --log fight-b-{i}.jsonl" in page
        for label in ("A", "B"):
            replayed = omen("simulate", "--replay", tmp_path / "c.json", i, "--encounter", label, "--log",
                            tmp_path / f"fight-{label.lower()}-{i}.jsonl")
            assert replayed.exit_code == 0, replayed.output


class TestWhatAComparisonLeavesOut:
    def test_sides_and_combatants_in_one_encounter_only_are_named(self, tmp_path: Path) -> None:
        """A against B where B's second fighter is Cy of the east, not Bo of the south: what is in one of them only
        is not compared, and the text and the page say so, naming each (they were left out without a word)."""
        a = mirror_duel(tmp_path, name="a")
        b = tmp_path / "b.toml"
        b.write_text(a.read_text().replace('id = "a"', 'id = "b"').replace('side = "south"', 'side = "east"')
                     .replace('id = "bo"', 'id = "cy"'))
        result = omen("simulate", "--compare", a, b, "--fights", 4, "--workers", 1, "--seed", SEED, "--out",
                      tmp_path / "c.json", "--html", tmp_path / "c.html")
        assert result.exit_code == 0, result.output
        said = ("not compared, in one encounter only: side south (in A only); side east (in B only); combatant bo "
                "(in A only); combatant cy (in B only)")
        assert f"  {said}" in result.output.splitlines()
        assert f"Not compared, in one encounter only: {said.split(': ', 1)[1]}." in (tmp_path / "c.html").read_text()


def _into_a_closed_pipe(*args: object) -> subprocess.CompletedProcess[str]:
    """``omen ARGS | head -0`` in a fresh process: standard output a pipe whose reader has closed it."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, "-m", "omen_cli", *map(str, args)], check=False, cwd=ROOT,
                              stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(writer)


class TestAClosedPipe:
    """README: a closed pipe is exit 2 without a word only for a command that wrote nothing; one that wrote says
    what, exit 3 (a script must not run it again believing nothing was written)."""

    def test_a_run_that_wrote_its_file_and_page_says_so_with_exit_3(self, tmp_path: Path) -> None:
        """``omen simulate ... --html PAGE | head -0``: the run and the page are written, and standard error's one
        line names both, exit 3."""
        done = _into_a_closed_pipe("simulate", mirror_duel(tmp_path), "--fights", 5, "--workers", 1, "--seed", SEED,
                                   "--out", tmp_path / "run.json", "--html", tmp_path / "run.html")
        assert (tmp_path / "run.json").is_file() and (tmp_path / "run.html").is_file()
        assert (done.returncode, done.stderr) == (
            3, "omen: error: cannot write to standard output: Broken pipe; but omen had written: the run written to "
               f"{tmp_path / 'run.json'}; the report written to {tmp_path / 'run.html'}\n")

    def test_a_fight_played_again_into_a_log_says_so_with_exit_3(self, ember_run: Path, tmp_path: Path) -> None:
        """``omen simulate --replay RUN 3 --log LOG | head -0``: the log is written, and standard error names it with
        its head, exit 3."""
        done = _into_a_closed_pipe("simulate", "--replay", ember_run, 3, "--log", tmp_path / "f.jsonl")
        lines = (tmp_path / "f.jsonl").read_text().splitlines()
        last = json.loads(lines[-1])
        assert (done.returncode, done.stderr) == (
            3, "omen: error: cannot write to standard output: Broken pipe; but omen had written: fight 'sim-3' "
               f"written to {tmp_path / 'f.jsonl'}: appended at seq 1 to {len(lines)} with head "
               f"{len(lines)}:{last['hash']}\n")


def _on_a_terminal(*args: str) -> tuple[str, str]:
    """Run ``omen`` in a fresh process with its standard error on a pseudo-terminal; (stdout, what the terminal
    showed)."""
    import os
    import pty
    import subprocess
    import sys

    main, other = pty.openpty()
    omen_bin = Path(sys.executable).with_name("omen")
    proc = subprocess.Popen([str(omen_bin), *args], stdout=subprocess.PIPE, stderr=other, stdin=subprocess.DEVNULL)
    os.close(other)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(main)
    assert proc.returncode == 0, shown.decode(errors="replace")
    return out.decode(), shown.decode(errors="replace")


class TestTheProgressBar:
    def test_a_terminal_shows_the_fights_done_the_rate_and_the_widest_interval(self, tmp_path: Path) -> None:
        """On a terminal the run shows a progress bar on standard error (fights done of the total, fights per
        second, the widest interval); with --json, none: standard error stays empty and standard output is JSON."""
        duel = mirror_duel(tmp_path)
        _out, shown = _on_a_terminal("simulate", str(duel), "--fights", "600", "--workers", "1", "--batch", "50",
                                     "--out", str(tmp_path / "a.json"))
        assert "simulating" in shown and "fights/s" in shown and "widest ± " in shown and "/600" in shown
        out, shown = _on_a_terminal("simulate", str(duel), "--fights", "100", "--workers", "1", "--json", "--out",
                                    str(tmp_path / "b.json"))
        assert shown.strip() == "" and json.loads(out)["manifest"]["fights"] == 100


class TestTheDocs:
    @pytest.mark.slow
    def test_the_worked_examples_of_docs_simulate_are_what_omen_prints(self, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
        """docs/simulate.md's worked example and its comparison, run as written (from the repository's root, on
        2 processes): every line the page quotes from their output is printed (words and numbers), and the
        conclusions it draws from them stand."""
        import re

        monkeypatch.chdir(tmp_path)
        page = (ROOT / "docs" / "simulate.md").read_text()
        blocks = re.findall(r"```sh\n(omen simulate [^`]*?)```\n+```text\n([^`]*?)```", page)
        assert len(blocks) == 2
        for command, quoted in blocks:
            args = command.replace("\\\n", " ").split()[1:]
            args = [str(ROOT / a) if a.startswith("examples/") else a for a in args]
            result = omen(*args, "--workers", 2)
            assert result.exit_code == 0, result.output
            said = " ".join(result.output.split())
            for line in quoted.splitlines():
                words = " ".join(line.split())
                if not words or words == "..." or words.startswith(("pool,", "out/", "INDEX")):
                    continue
                if words.startswith("combatant") or re.match(r"^(Kael|Brin|Vesh|Skarn) ", words):
                    words = " ".join(words.split()[-6:])  # the table's numbers (names wrap at 80 columns)
                assert words in said, (words, said[:2000])


def test_ctrl_c_is_said_in_one_line_and_leaves_no_run(tmp_path: Path) -> None:
    """README (exit codes): Ctrl-C (SIGINT to the process group, as a terminal sends it) stops a run with exit 130
    and one line saying so (it exited 130 without a word: a tester); the run is written only at the end, so no
    file of it is left."""
    import signal
    import time

    out = tmp_path / "run.json"
    started = subprocess.Popen(
        [sys.executable, "-m", "omen_cli", "simulate", str(EMBER_FORD_2V2), "--fights", "1000000", "--workers", "1",
         "--seed", SEED, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        cwd=tmp_path)
    time.sleep(3)  # past the start-up: the fights are being played
    os.killpg(started.pid, signal.SIGINT)
    said, err = started.communicate(timeout=60)
    assert started.returncode == 130, (said, err)
    assert err.decode().splitlines() == [
        "omen: interrupted (Ctrl-C): what was written is whole (a command is appended whole or not at all; an output "
        "file is written beside and renamed into place; omen simulate writes its run at the end); nothing was "
        "written: the fights played are not kept"], err  # said plainly (it read as if something were: a tester)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def _descendants(pid: int) -> set[int]:
    """Every process started under ``pid`` (Linux: /proc's children lists), its children's too."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                found |= {int(child), *_descendants(int(child))}
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the processes from Linux's /proc")
def test_sigterm_stops_a_pool_run_in_one_line_and_leaves_no_worker_running(tmp_path: Path) -> None:
    """README (exit codes, 143): SIGTERM to omen alone (as `timeout` sends it) while a run's fights are played on a
    2-process pool stops it in one line, exit 143, nothing written, and its pool's processes (the workers, the
    forkserver) are gone (they ran on, under init, after omen had died without a word: a tester)."""
    import signal
    import time

    out = tmp_path / "run.json"
    started = subprocess.Popen(
        [sys.executable, "-m", "omen_cli", "simulate", str(EMBER_FORD_2V2), "--fights", "1000000", "--workers", "2",
         "--seed", SEED, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.monotonic() + 30
    workers: set[int] = set()
    while len(workers) < 3 and time.monotonic() < deadline:  # the forkserver and its two workers
        time.sleep(0.2)
        workers = _descendants(started.pid)
    assert len(workers) >= 3, workers
    try:
        time.sleep(1)  # the fights are being played
        started.send_signal(signal.SIGTERM)
        said, err = started.communicate(timeout=60)
        assert started.returncode == 143, (said, err)
        assert err.decode().splitlines() == [
            "omen: terminated (SIGTERM): nothing was written: the fights played are not kept"], err
        assert not out.exists() and list(tmp_path.iterdir()) == []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and [p for p in workers if Path(f"/proc/{p}").exists()]:
            time.sleep(0.2)
        assert [p for p in workers if Path(f"/proc/{p}").exists()] == []
    finally:  # whatever failed, nothing of this run is left running
        for pid in [started.pid, *workers]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_ctrl_c_while_the_outputs_are_written_says_what_was_written(tmp_path: Path) -> None:
    """README (exit codes): a Ctrl-C that comes as the run writes its outputs (the run written, the report's fight
    pages being written, an earlier run's removed) exits 130 and its one line says what had been written, as exit 3
    does, the report's links broken included (it said only that nothing of an interrupted run is kept: a tester).
    The SIGINT is the process's own, sent as its second fight page is rendered."""
    page, out = tmp_path / "rep.html", tmp_path / "run.json"
    args = ["simulate", str(EMBER_FORD_2V2), "--fights", "20", "--workers", "1", "--seed", SEED, "--out", str(out),
            "--html", str(page)]
    script = ("import os, signal, sys\nimport omen_replay.render as r\nreal, calls = r.render, []\n"
              "def render(*a, **k):\n    calls.append(1)\n    if len(calls) == 2:\n"
              "        os.kill(os.getpid(), signal.SIGINT)\n    return real(*a, **k)\n"
              f"r.render = render\nsys.argv = ['omen', *{args!r}]\nfrom omen_cli import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 130, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("omen: interrupted (Ctrl-C): what was written is whole") and (
        f"; but omen had written: the run written to {out}; 1 fight page in {tmp_path / 'rep-fights'} (the report "
        f"{page} not yet: its links may be broken)") in line, line
    assert out.exists() and not page.exists() and len(list((tmp_path / "rep-fights").iterdir())) == 1


@pytest.mark.parametrize("width", [80, 70, 60, 40])
def test_the_report_on_a_narrow_terminal_cuts_no_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         width: int) -> None:
    """docs/simulate.md ("On a terminal the report fits its width"): at 80 columns each interval of the combatants'
    table is whole, its closing parenthesis too, names wrapping instead (the last column read "6." and "(3.5–10.2":
    a tester); no line is wider than the terminal. Narrower, where the table cannot fit whole (at 70 columns the
    last interval lost its end, at 60 its column was gone: a tester), each combatant is a line of its own, every
    figure named and whole, no word cut ("warde/ns")."""
    import io

    from rich.console import Console

    import omen_cli.simulate as simulate
    from omen_replay.simulate.run import read_run

    out = tmp_path / "run.json"
    assert omen("simulate", EMBER_FORD_2V2, "--fights", 40, "--workers", 1, "--seed", SEED, "--out", out).exit_code == 0
    run = read_run(out.read_bytes(), str(out))
    screen = io.StringIO()
    terminal = Console(file=screen, width=width, force_terminal=True, color_system=None, highlight=False)
    monkeypatch.setattr(simulate, "out", terminal)
    simulate._print_run(run, str(out), None)
    lines = screen.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width, lines
    cells = " ".join(lines)
    words = {word.rstrip(";") for word in cells.split()}
    for combatant in run.encounters[0].summary.combatants:
        assert set(combatant.name.split()) | {combatant.side} <= words | {f"({combatant.side}):"}, (combatant, lines)
        for rate in (combatant.down, combatant.falls_first):
            low, high = (f"{100 * bound:.1f}" for bound in (rate.low, rate.high))
            assert f"({low}–{high})" in words, (low, high, lines)
            assert f"{100 * rate.rate:.1f}" in words, (rate, lines)


def test_the_pages_replay_commands_work_from_any_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/simulate.md: the HTML page's command that plays a picked fight again names the run by its absolute path
    (quoted for the shell), so it works from wherever the page was moved and read (it named the path as typed,
    relative to where omen simulate ran: a tester); run from another directory, it plays that fight."""
    import html
    import shlex

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert omen("simulate", EMBER_FORD_2V2, "--fights", 12, "--workers", 1, "--seed", SEED, "--out", "my run.json",
                "--html", "page.html").exit_code == 0
    page = (work / "page.html").read_text()
    commands = [html.unescape(c) for c in re.findall(r'<td class="cmd">([^<]*)</td>', page)]
    assert commands and all(c.startswith(f"omen simulate --replay {shlex.quote(str(work / 'my run.json'))} ")
                            for c in commands), commands
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    played = omen(*shlex.split(commands[0])[1:])
    assert played.exit_code == 0, played.output
    assert list(elsewhere.glob("fight-*.jsonl")), list(elsewhere.iterdir())


def test_a_run_logs_its_start_and_end_as_structured_lines(tmp_path: Path) -> None:
    """docs/simulate.md: with ``--log-format json --log-level info`` a run logs ``simulation_started`` (its
    encounters, fights, seed, workers) and ``simulation_finished`` (fights, seconds, where the run was written),
    one JSON object a line on standard error, for a tool to follow (it logged nothing at info: a tester)."""
    out = tmp_path / "run.json"
    done = subprocess.run([sys.executable, "-m", "omen_cli", "--log-format", "json", "--log-level", "info",
                           "simulate", str(EMBER_FORD_2V2), "--fights", "5", "--workers", "1", "--seed", SEED,
                           "--out", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [line["event"] for line in lines] == ["simulation_started", "simulation_finished"]
    assert (lines[0]["encounters"], lines[0]["fights"], lines[0]["seed"], lines[0]["workers"]) == (
        ["ember-ford-2v2"], 5, SEED, 1)
    assert (lines[1]["fights"], lines[1]["run"], lines[1]["level"]) == (5, str(out), "info")
