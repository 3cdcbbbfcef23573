"""The simulation's HTML report (omen_replay/simulate/report.py): one self-contained page, small whatever the number
of fights, opening in a real browser without errors or requests."""

from __future__ import annotations

import io
import random
from pathlib import Path

import msgspec
import pytest

from omen_replay.simulate.encounter import Encounter, load_encounter
from omen_replay.simulate.play import CombatantRecord, FightRecord, Rules
from omen_replay.simulate.report import write_html
from omen_replay.simulate.run import FORMAT, EncounterRun, Manifest, Run, Timing
from omen_replay.simulate.stats import signed
from omen_replay.simulate.summary import compare, summarise
from tests.browser import chromium as find_chromium
from tests.browser import launch
from tests.replay.simulate.encounters import EMBER_FORD_2V2, three_sides


def synthetic(encounter: Encounter, n: int, seed: int) -> list[FightRecord]:
    """``n`` records of the Ember Ford's four with every spread a report can meet: 1 to 50 rounds, draws, each
    side winning, any combatant down or first down (made up: the page's size is what is measured)."""
    rng = random.Random(seed)
    ids = [s.id for s in encounter.combatants]
    out = []
    for i in range(n):
        winner = rng.choice(["wardens", "raiders", None])
        rounds = rng.randint(1, 50)
        combatants = tuple(CombatantRecord(hp=rng.randint(0, s.hp), will=rng.randint(0, s.will),
                                           dealt=rng.randint(0, 60), taken=rng.randint(0, 60),
                                           down=rng.choice([None, rng.randint(1, rounds)]))
                  for s in encounter.combatants)
        out.append(FightRecord(index=i, winner=winner, defeated=None if winner is None else "raiders",
                               ended="defeated" if winner else "round_limit", rounds=rounds,
                               first_down=rng.choice([None, *ids]), combatants=combatants, commands=40, events=300))
    return out


def a_run(fights: int) -> Run:
    encounter = load_encounter(EMBER_FORD_2V2)
    policies = {"wardens": "aggressive", "raiders": "cautious"}
    a, b = synthetic(encounter, fights, 1), synthetic(encounter, fights, 2)
    runs = tuple(EncounterRun(label=label, encounter=encounter, summary=summarise(encounter, recs, policies),
                              records=tuple(recs)) for label, recs in (("A", a), ("B", b)))
    rules = Rules(policies=policies)
    manifest = Manifest(omen="0", seed="00" * 16, started_ms=0, fights=fights, batch=100, max_fights=fights,
                        policies=dict(rules.policies), max_rounds=50, hp_display="banded")
    return Run(format=FORMAT, manifest=manifest, encounters=runs, comparison=compare(encounter, encounter, a, b),
               timing=Timing(backend="serial", workers=1, seconds=1.0, fights_per_second=float(fights)))


def test_the_page_for_10000_fights_compared_is_under_200_kb() -> None:
    """10,000 fights of two encounters compared (every round count from 1 to 50, four combatants, the paired
    comparison): the page is under 200 KB, and the same size, give or take, as for 100 fights: it holds the
    summaries, never the records."""
    pages = []
    for n in (100, 10_000):
        out = io.StringIO()
        write_html(a_run(n), out, "run.json", {})
        pages.append(len(out.getvalue().encode()))
    assert pages[1] < 200_000, pages
    assert abs(pages[1] - pages[0]) < 5_000, pages


def test_a_rounds_column_says_its_count_where_there_is_room() -> None:
    """The rounds histogram writes each column's count of fights above it (it said it only on hover: a tester) when
    it has 20 columns at most, and none past that (50 here, 1 to 50 rounds), where the counts would overlap; the
    hover title stays on every column."""
    import re

    encounter = load_encounter(EMBER_FORD_2V2)
    few = [msgspec.structs.replace(r, rounds=1 + r.index % 3) for r in synthetic(encounter, 30, 3)]
    policies = {"wardens": "aggressive", "raiders": "cautious"}
    pages = []
    for records in (few, synthetic(encounter, 300, 4)):
        run = msgspec.structs.replace(a_run(10), comparison=None, encounters=(EncounterRun(
            label="", encounter=encounter, summary=summarise(encounter, records, policies), records=tuple(records)),))
        out = io.StringIO()
        write_html(run, out, "run.json", {})
        chart = re.search(r'<svg id="chart-rounds".*?</svg>', out.getvalue(), re.S)
        assert chart is not None
        pages.append(chart.group())
    assert re.findall(r'class="count">(\d+)</text>', pages[0]) == ["10", "10", "10"]
    assert re.findall(r"<title>(\d+) rounds?: (\d+) fights?</title>", pages[0]) == [("1", "10"), ("2", "10"),
                                                                                   ("3", "10")]
    assert 'class="count"' not in pages[1] and pages[1].count("<title>") == 50


class TestInABrowser:
    """The report in headless Chromium (Playwright with the system's Chromium): skipped where Chromium is missing,
    unless OMEN_REQUIRE_BROWSER is set (as `.ci/run` does), where a missing browser fails."""

    def test_the_report_opens_without_errors_or_requests_and_shows_its_charts(self, tmp_path: Path) -> None:
        """`omen simulate --compare A B --html` on the Ember Ford with and without Kael's shield: the page loads
        in headless Chromium with no console or page error and no request but the file itself; the win-rate,
        rounds, HP, damage and first-down charts and the comparison are drawn; each linked fight's session log
        opens, also without errors; no two elements share an id (A's and B's charts did); at phone width nothing
        overflows sideways (the tables and charts scroll) and a chart's labels are at least 10 px tall (6 px: a
        tester)."""
        chromium = find_chromium()
        sync_api = pytest.importorskip("playwright.sync_api")
        from typer.testing import CliRunner

        from omen_cli import app

        no_shield = EMBER_FORD_2V2.with_name("ember-ford-2v2-no-shield.toml")
        page = tmp_path / "report.html"
        result = CliRunner().invoke(app, ["simulate", "--compare", str(EMBER_FORD_2V2), str(no_shield), "--fights",
                                          "200", "--workers", "1", "--seed", "ab" * 16, "--out",
                                          str(tmp_path / "run.json"), "--html", str(page)])
        assert result.exit_code == 0, result.output
        errors: list[str] = []
        requests: list[str] = []
        with sync_api.sync_playwright() as pw:
            browser = launch(pw, chromium)
            try:
                tab = browser.new_page()
                tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                tab.on("pageerror", lambda e: errors.append(str(e)))
                tab.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
                tab.on("request", lambda r: requests.append(r.url))
                response = tab.goto(page.as_uri(), wait_until="load")
                charts = {c: tab.locator(f"svg#{c}").bounding_box() for c in (
                    "chart-wins-a", "chart-rounds-b", "chart-hp-a", "chart-damage-b", "chart-first-a", "chart-compare")}
                bars = tab.locator("svg[id^=chart-wins-] rect.bar").count()
                ids = tab.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
                links = tab.locator("a[href$='.html']")
                linked = links.count()
                first_link = links.first.get_attribute("href")
                tab.screenshot(path=str(tmp_path / "report.png"), full_page=True)
                only_page = list(requests)
                tab.goto((tmp_path / str(first_link)).as_uri(), wait_until="load")
                fight_title = tab.title()
                phone = browser.new_page(viewport={"width": 390, "height": 844})
                phone.goto(page.as_uri(), wait_until="load")
                overflow = phone.evaluate("document.documentElement.scrollWidth")
                wide = phone.evaluate(  # what sticks out, named in the failure (fonts differ between machines)
                    "[...document.body.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > 390"
                    " && !e.closest('svg') && !(e.parentElement && e.parentElement.closest('.table-wrap')))"
                    ".map(e => e.tagName + ': ' + (e.textContent || '').slice(0, 60))")
                phone.screenshot(path=str(tmp_path / "report-390.png"), full_page=False)
                smallest = phone.evaluate(  # the chart's labels as drawn on the phone, in CSS pixels
                    "Math.min(...[...document.querySelectorAll('svg#chart-wins-a text')]"
                    ".map(t => t.getBoundingClientRect().height))")
            finally:
                browser.close()
        assert response is not None and response.ok
        assert errors == [] and only_page == [page.as_uri()]
        assert all(box is not None and box["width"] > 300 and box["height"] > 40 for box in charts.values()), charts
        assert bars == 2 * 4  # each encounter: the wardens, the raiders, the draws, every side down (at 0 too)
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)  # each chart its own id
        assert linked >= 6 and "Ember Ford" in fight_title
        assert overflow <= 390, wide
        assert smallest >= 10, smallest  # a chart's labels stay readable on a phone (they were 6 px: a tester)


def test_every_side_down_has_its_own_words_and_bar_and_distinct_logs_for_a_and_b() -> None:
    """C33: 100 fights of which 8 end with every side down (``all_down``): the page counts them apart, with their
    interval, in the lede and as a bar (not as draws at the round limit), a picked one reads "every side down",
    and the commands that play A's and B's fights again name distinct logs."""
    run = a_run(100)
    recs = [r if r.index % 14 else msgspec.structs.replace(r, winner=None, defeated="raiders", ended="all_down")
            for r in run.encounters[0].records]
    encounter = run.encounters[0].encounter
    summary = summarise(encounter, recs, dict(run.manifest.policies))
    first = EncounterRun(label="A", encounter=encounter, summary=summary, records=tuple(recs))
    out = io.StringIO()
    write_html(msgspec.structs.replace(run, encounters=(first, run.encounters[1])), out, "run.json", {})
    page = out.getvalue()
    assert summary.all_down.count == 8
    assert "8 with every side down, 8.0 % (95 %: 4.1–15.0 %; the last blow felled both, no winner)" in page
    assert "every side down: 8.0% (4.1%–15.0%)" in page
    i = summary.extremes.longest[0].index
    assert f"--encounter A --log fight-a-{i}.jsonl" in page and "--encounter B --log fight-b-" in page
    assert "--log fight-" + str(i) + ".jsonl" not in page


def test_with_three_sides_a_side_defeated_with_no_winner_is_said_not_a_draw(tmp_path: Path) -> None:
    """C33: with three sides a fight ends when the first side is down, no winner; the page's lede gives each side's
    share of such fights (north 2 of 3: 66.7 %), and a picked fight reads "north defeated, no winner", never
    "draw" (a draw is the round limit)."""
    three = load_encounter(three_sides(tmp_path))

    def lost(index: int, side: str, rounds: int) -> FightRecord:
        hp = {"north": (0, 6, 6), "south": (6, 0, 6)}[side]
        return FightRecord(index=index, winner=None, defeated=side, ended="defeated", rounds=rounds, first_down=None,
                           combatants=tuple(CombatantRecord(hp=h, will=4, dealt=0, taken=6 - h,
                                                            down=rounds if h == 0 else None) for h in hp),
                           commands=5, events=20)

    records = (lost(0, "north", 3), lost(1, "south", 2), lost(2, "north", 1))
    policies = dict.fromkeys(three.sides, "aggressive")
    manifest = Manifest(omen="0", seed="00" * 16, started_ms=0, fights=3, batch=100, max_fights=3,
                        policies=policies, max_rounds=50, hp_display="banded")
    run = Run(format=FORMAT, manifest=manifest, encounters=(EncounterRun(
        label="", encounter=three, summary=summarise(three, records, policies), records=records),),
        timing=Timing(backend="serial", workers=1, seconds=1.0, fights_per_second=3.0))
    out = io.StringIO()
    write_html(run, out, "run.json", {})
    page = out.getvalue()
    assert "<strong>north</strong> defeated with no winner 66.7 %" in page
    assert "<strong>south</strong> defeated with no winner 33.3 %" in page and "west</strong> defeated" not in page
    assert "<td>north defeated, no winner</td>" in page and "<td>draw</td>" not in page


def test_a_bound_that_rounds_to_zero_is_never_minus_zero_and_one_round_is_singular() -> None:
    """Kael deals 1 in the first of 40 fights and nothing in the others: his mean damage dealt, 0.025, has an
    interval from 0 (the normal one's -0.024 kept within what damage can be: a simulation tester) to 0.074, written
    0.0 to 0.1 (it was "-0.0"); a difference that rounds to zero is +0.000;
    with a limit of 1 round, the page says "1 round" (it said "1 rounds")."""
    run = a_run(40)
    encounter = run.encounters[0].encounter
    kael = [s.id for s in encounter.combatants].index("kael")
    recs = [msgspec.structs.replace(r, combatants=tuple(
        msgspec.structs.replace(c, dealt=1 if (r.index, i) == (0, kael) else 0) for i, c in enumerate(r.combatants)))
            for r in run.encounters[0].records]
    summary = summarise(encounter, recs, dict(run.manifest.policies))
    assert (round(summary.combatants[kael].dealt.low, 3), round(summary.combatants[kael].dealt.high, 3)) == (
        0.0, 0.074)
    first = EncounterRun(label="A", encounter=encounter, summary=summary, records=tuple(recs))
    assert run.comparison is not None
    tiny = msgspec.structs.replace(run.comparison.differences[0], difference=-0.0004, paired_low=-0.0004)
    comparison = msgspec.structs.replace(run.comparison, differences=(tiny,))
    out = io.StringIO()
    write_html(msgspec.structs.replace(run, encounters=(first, run.encounters[1]), comparison=comparison,
                                       manifest=msgspec.structs.replace(run.manifest, max_rounds=1)), out,
               "run.json", {})
    page = out.getvalue()
    assert "Kael Arden dealt: 0.0 (0.0–0.1)" in page and "(-0.0" not in page and "–-0.0" not in page
    assert f"<td class=\"num\">+0.000</td><td class=\"num\">+0.000 to {signed(tiny.paired_high)}</td>" in page
    assert "-0.000" not in page
    assert "at most 1 round ·" in page


def test_going_down_first_has_its_interval_and_never_going_down_has_no_round() -> None:
    """docs/simulate.md: every rate with its Wilson 95 % interval, going down first too (the page showed it bare).
    In 100 fights Kael never goes down, nor first: his row reads 0.0 % (0.0–3.7) for both (3.7 % = z²/(100 + z²))
    and "–" for the round he went down in; Vesh, first down in 25 of them, 25.0 % (17.5–34.3)."""
    run = a_run(100)
    encounter = run.encounters[0].encounter
    ids = [s.id for s in encounter.combatants]
    kael, vesh = ids.index("kael"), ids.index("vesh")
    recs = [msgspec.structs.replace(r, first_down="vesh" if r.index % 4 == 0 else None, combatants=tuple(
        msgspec.structs.replace(c, down=None) if i == kael else c for i, c in enumerate(r.combatants)))
            for r in run.encounters[0].records]
    summary = summarise(encounter, recs, dict(run.manifest.policies))
    assert summary.combatants[kael].down_round is None and summary.combatants[vesh].falls_first.count == 25
    first = EncounterRun(label="A", encounter=encounter, summary=summary, records=tuple(recs))
    out = io.StringIO()
    write_html(msgspec.structs.replace(run, encounters=(first, run.encounters[1])), out, "run.json", {})
    page = out.getvalue()
    row = page[page.index('<th scope="row">Kael Arden</th>'):]
    row = row[:row.index("</tr>")]
    assert row.count('<td class="num">0.0 % (0.0–3.7)</td>') == 2 and row.endswith('<td class="num">–</td>')
    row = page[page.index('<th scope="row">Vesh the Cinder-Hand</th>'):]
    assert '<td class="num">25.0 % (17.5–34.3)</td>\n<td class="num">' in row[:row.index("</tr>")]


def test_a_means_interval_stays_within_what_it_can_be_and_one_fight_has_none(tmp_path: Path) -> None:
    """docs/simulate.md: every mean's interval is within the values it can take (HP left 0 to the sheet's, damage
    from 0, rounds from 1: a simulation tester read HP left "-0.013" and "14.002" of 14), and a run of one fight has
    no interval, said so ("3.00 to 3.00" read as certain)."""
    run = a_run(40)
    encounter = run.encounters[0].encounter
    for c in run.encounters[0].summary.combatants:
        assert 0 <= c.hp_left.low <= c.hp_left.mean <= c.hp_left.high <= c.max_hp
        assert c.dealt.low >= 0 and c.taken.low >= 0 and c.will_left.low >= 0 and c.will_left.high <= c.max_will
    assert run.encounters[0].summary.rounds.low >= 1
    one = summarise(encounter, run.encounters[0].records[:1], dict(run.manifest.policies))
    out = io.StringIO()
    write_html(msgspec.structs.replace(run, encounters=(EncounterRun(label="", encounter=encounter, summary=one,
                                                                      records=run.encounters[0].records[:1]),),
                                       comparison=None), out, "run.json", {})
    page = out.getvalue()
    assert "(one fight: no interval)" in page and "95 %: " not in page.split("How many rounds")[1].split("</figure>")[0]


def test_a_comparison_of_two_encounters_of_one_title_names_each_by_its_file() -> None:
    """A comparison of two encounters sharing a title is named by each file beside it ("Ember Ford (a.toml) vs Ember
    Ford (b.toml)": a tester's read "The Crypt Gate vs The Crypt Gate", its sections "A: The Crypt Gate" and "B: The
    Crypt Gate"); one of two titles stays its title alone."""
    from omen_replay.simulate.report import encounter_name

    run = a_run(10)
    a, b = run.encounters
    same = msgspec.structs.replace(run, encounters=(
        msgspec.structs.replace(a, encounter=msgspec.structs.replace(a.encounter, title="Ember Ford",
                                                                     source="/x/a.toml")),
        msgspec.structs.replace(b, encounter=msgspec.structs.replace(b.encounter, title="Ember Ford",
                                                                     source="/y/b.toml"))))
    assert [encounter_name(er, same) for er in same.encounters] == ["Ember Ford (a.toml)", "Ember Ford (b.toml)"]
    out = io.StringIO()
    write_html(same, out, "run.json", {})
    assert "<h2 id=\"enc-1-h\">A: Ember Ford (a.toml)</h2>" in out.getvalue()
    apart = msgspec.structs.replace(same, encounters=(same.encounters[0], msgspec.structs.replace(
        same.encounters[1], encounter=msgspec.structs.replace(same.encounters[1].encounter, title="Ember Ford II"))))
    assert [encounter_name(er, apart) for er in apart.encounters] == ["Ember Ford", "Ember Ford II"]
