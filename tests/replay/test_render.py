"""Tests for omen_replay.render: one walk, three writers (text, Markdown, HTML), undone events marked."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path

import pytest

from omen_core import MemoryStore
from omen_core.events import StoredEvent
from omen_replay.cards import Chart, Series
from omen_replay.render import TextWriter, render, render_records
from omen_replay.scenario import load_scenario, run_scenario
from tests.browser import chromium as find_chromium
from tests.browser import launch
from tests.fights import present


def fight_events() -> list[StoredEvent]:
    """The bundled demo fight (with its undo), events only."""
    scenario = load_scenario(Path(str(files("omen_replay") / "data" / "ember-ford" / "scenario.toml")))
    return run_scenario(scenario, MemoryStore(), clock=lambda: 0).events


EVENTS = fight_events()


class _Tags(HTMLParser):
    """Collects tags and any attribute that would load something from outside the page (links within it aside)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append(value)


class TestWriters:
    def test_text_has_every_event_and_the_verdict(self) -> None:
        """The text log tells every event, by seq (a command's own command_issued record is told by the events it
        produced), and ends with the end state and the audit's verdict."""
        from omen_core.events import CommandIssued

        text = render_records(EVENTS, "text")
        seqs = {int(m) for m in re.findall(r"^#(\d+)", text, re.M)}
        assert seqs == {e.seq for e in EVENTS if not isinstance(e.event, CommandIssued)}
        assert "ended: defeated (raiders)" in text and "verified: hash chain intact" in text
        assert "\ndice: seeded dice; the seed is revealed" in text
        verdict = text.rstrip("\n").splitlines()[-1]
        assert verdict.startswith("verified: hash chain intact")
        assert "; the seed is revealed and every seeded die checks out" in verdict

    def test_markdown_has_a_heading_per_round_and_strikes_undone_lines(self) -> None:
        """Markdown: '## Round N' and its summary table for each round, a heading per card, the undone attack
        struck through, the end as a table."""
        md = render_records(EVENTS, "md")
        assert re.findall(r"^## Round (\d+)$", md, re.M) == ["1", "2", "3", "4"]
        assert re.search(r"^#### ~~.*attacks Skarn Gutterjaw.*~~ \(undone\) `#84`$", md, re.M)
        assert "- hit: 7 (d8) + 4 (d6) + 2 AGI + 1 weapon = 14\n" in md
        assert "| Brin Hollowmere | wardens | 3 | 14/18 | 12/12 | Fatigued (2 left) |" in md
        assert "| Kael Arden | wardens | 10/24 |" in md
        assert "| Brin Hollowmere | wardens | 0/18 | 12/12 | Dying, Prone |" in md

    def test_html_is_self_contained_with_cards_and_a_chart(self) -> None:
        """HTML: parses, loads nothing from outside, no script; an HP and a Will line per combatant, a section per
        round, a card per action with its anchor, the undone attack struck through (and not badged "not settled",
        as if the log had left it open: a tester), every id once."""
        page = render_records(EVENTS, "html")
        parser = _Tags()
        parser.feed(page)
        assert parser.external == [] and "script" not in parser.tags
        assert page.count('class="series"') == 2 * 4
        assert re.findall(r'<h2 id="seq-\d+">Round (\d+) ', page) == ["1", "2", "3", "4"]
        assert '<article class="card attack undone" id="seq-84"' in page
        card = page[page.index('id="seq-84"'):]
        assert "not settled" not in card[:card.index("</article>")]
        assert "not settled when the log ends" not in render_records(EVENTS, "text")
        assert '<article class="card attack" id="seq-93"' in page and "<code>7 (d8) + 4 (d6) + 2 AGI + 1 weapon = 14" \
            in page
        ids = re.findall(r' id="([^"]+)"', page)
        assert len(ids) == len(set(ids))
        assert page.index('id="chart-hp"') < page.index('id="timeline"')

    def test_every_template_is_autoescaped(self) -> None:
        """The templates' environment escapes every value, in every template the package ships, and shows control
        characters as escapes."""
        from omen_replay.render import environment

        env = environment()
        names = env.list_templates()
        assert {"card.html.j2", "chart.html.j2", "session_log.html.j2"} <= set(names)
        assert env.autoescape is True
        note = env.get_template("card.html.j2").module.note  # type: ignore[attr-defined]
        from omen_replay.cards import Note
        from omen_replay.narrate import Line

        written = str(note(Note(seq=3, lines=(Line(3, "note", "<b>x</b>\x1b[31m"),))))
        assert "&lt;b&gt;x&lt;/b&gt;\\x1b[31m" in written and "<b>" not in written

    def test_rounds_come_from_events_not_from_narrated_text(self) -> None:
        """No writer finds a round by matching the narrated text: every 'Round' the writers write is a number."""
        source = (Path(__file__).resolve().parents[2] / "omen_replay" / "render.py").read_text()
        assert "\\u2500 Round" not in source.replace("Round {entry.round}", "") and '"round"' not in source
        assert all("entry.round" in line for line in source.splitlines() if "Round {" in line)

    def test_manual_dice_are_named(self) -> None:
        """A fight rolled with manual dice says so in the header."""
        from omen_core import CheckSpec, Fight, ManualDice
        from tests.sheets import sheet

        fight = Fight.start(MemoryStore(), "m", dice=ManualDice(lambda req: [3]), clock=lambda: 0)
        fight.join(sheet("ash"))
        fight.static_check(CheckSpec(who="ash", attribute="STR"), 2)
        assert "Dice: manual dice." in render_records(fight.events, "md")

    def test_render_streams_a_store_to_the_writer_it_is_given(self) -> None:
        """render(source, writer) walks a stored fight once and writes to the writer's stream: the same session log
        as render_records gives for the same events."""
        import io

        from omen_core.walk import StoreSource

        store = MemoryStore()
        scenario = load_scenario(Path(str(files("omen_replay") / "data" / "ember-ford" / "scenario.toml")))
        fight = run_scenario(scenario, store, clock=lambda: 0)
        out = io.StringIO()
        render(StoreSource(store, fight.fight_id), TextWriter(out))  # returns None (mypy checks it): the text is out's
        assert out.getvalue() == render_records(EVENTS, "text")


class TestInABrowser:
    """The HTML report in a real browser: headless Chromium driven by Playwright (its Python package, with the
    system's Chromium, so no browser download). Skipped where Chromium is missing, unless OMEN_REQUIRE_BROWSER
    is set (as `.ci/run` does once it has installed Chromium): then a missing browser fails."""

    def test_html_report_opens_without_errors_and_shows_the_chart(self, tmp_path: Path) -> None:
        """The demo's HTML session log loads in headless Chromium with no console or page error and no request
        besides the file itself; the HP and Will charts are visible near the top with a line per combatant and
        resource; a card's anchor opens it; at phone width nothing overflows sideways."""
        chromium = find_chromium()
        sync_api = pytest.importorskip("playwright.sync_api")
        report = tmp_path / "report.html"
        report.write_text(render_records(EVENTS, "html"))
        errors: list[str] = []
        requests: list[str] = []
        with sync_api.sync_playwright() as pw:
            browser = launch(pw, chromium)
            try:
                page = browser.new_page()
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
                page.on("request", lambda request: requests.append(request.url))
                response = page.goto(report.as_uri(), wait_until="load")
                chart = page.locator("svg#chart-hp")
                box = chart.bounding_box()
                lines = page.locator("svg.chart polyline.series")
                visible_lines = [lines.nth(i).bounding_box() for i in range(lines.count())]
                title = page.title()
                rounds = page.locator("section.round h2[id^=seq-]").count()
                page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
                page.goto(report.as_uri() + "#seq-112", wait_until="load")
                opened = page.evaluate("document.querySelector('#seq-93 details').open")
                phone = browser.new_page(viewport={"width": 390, "height": 844})
                phone.goto(report.as_uri(), wait_until="load")
                overflow = phone.evaluate("document.documentElement.scrollWidth")
                phone.screenshot(path=str(tmp_path / "report-390.png"), full_page=False)
            finally:
                browser.close()
        assert response is not None and response.ok
        assert errors == [] and requests == [report.as_uri()]
        assert box is not None and box["width"] >= 400 and box["height"] >= 200 and box["y"] < 900
        assert len(visible_lines) == 2 * 4 and all(b is not None and b["width"] > 0 for b in visible_lines)
        assert "Ember Ford" in title and rounds == 4
        assert opened, "a link to an event of a card opens the card's explanation"
        assert overflow <= 390
        assert (tmp_path / "report.png").stat().st_size > 10_000


class TestBucketedChart:
    """Issue #26: a fight of thousands of rounds draws a chart of at most MAX_COLUMNS columns (its rounds grouped in
    equal runs), so the page's memory does not grow with its rounds."""

    @staticmethod
    def chart(rounds: int) -> Chart:

        columns = ("start", *(f"round {n}" for n in range(1, rounds + 1)), "end")
        hp = tuple(range(len(columns)))
        return Chart(columns=columns, series=(Series(id="a", name="A", side="x", hp_max=99, will_max=9, hp=hp,
                                                     will=tuple(v % 7 for v in hp)),))

    @pytest.mark.parametrize("rounds", [1, 57, 58, 59, 200, 12_405])
    def test_at_most_max_columns_each_round_in_one_run_holding_its_first_round(self, rounds: int) -> None:
        """Start and end kept; every round in exactly one column's run, the runs in order and of one size but the
        last; each column's values those at the start of its run's first round."""
        from omen_replay.render import MAX_COLUMNS, bucketed

        whole = self.chart(rounds)
        shown, size = bucketed(whole)
        assert len(shown.columns) <= MAX_COLUMNS and shown.columns[0] == "start" and shown.columns[-1] == "end"
        covered = []
        for name in shown.columns[1:-1]:
            first, _, last = name.removeprefix("rounds ").removeprefix("round ").partition("-")
            covered += list(range(int(first), int(last or first) + 1))
        assert covered == list(range(1, rounds + 1))
        assert (size == 1) == (rounds + 2 <= MAX_COLUMNS)
        firsts = [0] + [int(n.removeprefix("rounds ").removeprefix("round ").split("-")[0])
                        for n in shown.columns[1:-1]] + [rounds + 1]
        assert shown.series[0].hp == tuple(whole.series[0].hp[i] for i in firsts)

    def test_a_long_fights_page_says_how_many_rounds_a_column_holds(self) -> None:
        """A fight of 70 rounds (two combatants who only end their turns): the page's chart has at most MAX_COLUMNS
        columns and says how many rounds each holds."""
        from omen_core import Fight, ScriptedDice
        from omen_replay.render import MAX_COLUMNS
        from tests.sheets import sheet

        fight = Fight.start(MemoryStore(), "long", dice=ScriptedDice([5, 2]),
                            clock=lambda: 0, combatants=[sheet("ash"), sheet("bo", side="b")])
        fight.roll_initiative()
        for _ in range(140):
            fight.end_turn(present(fight.state.turn))
        page = render_records(fight.events, "html")
        header = page.split('<table class="chart-data">', 1)[1].split("</thead>", 1)[0]
        assert header.count('<th scope="col">') - 1 <= MAX_COLUMNS
        assert "2 rounds a column" in page


def test_the_end_says_who_fled_in_every_format() -> None:
    """C33: a combatant who fled is, in the end state of the text, Markdown and HTML logs, "out of the fight: fled
    (C33)" as `omen replay` says (the text said only "HP 20/20, Will 10/10", the HTML only "fled")."""
    from omen_core import Fight, ScriptedDice
    from tests.sheets import sheet

    fight = Fight.start(MemoryStore(), "f", dice=ScriptedDice([]), clock=lambda: 0)
    fight.join(sheet("kael", side="wardens"))
    fight.join(sheet("vesh", side="raiders"))
    fight.leave_fight("vesh", "fled")
    text = render_records(fight.events, "text")
    assert "\n  Vesh (raiders): HP 20/20, Will 10/10, out of the fight: fled (C33)\n" in text
    assert "| Vesh | raiders | 20/20 | 10/10 | out of the fight: fled (C33) |" in render_records(fight.events, "md")
    page = render_records(fight.events, "html")
    assert re.search(r"<td class=\"num\">10/10</td><td>out of the fight: fled \(C33\)</td></tr>", page)


def test_a_template_is_read_once_not_again_when_its_file_changes(tmp_path: Path) -> None:
    """The templates' environment reads a template once, as its code is imported once: a file changed under a
    running server is not read with the old code's values (the table's new template met the old Panel, and every
    seat's page answered 500: a tester)."""
    import jinja2

    from omen_replay.render import environment

    (tmp_path / "t.j2").write_text("first {{ x }}")
    env = environment(jinja2.FileSystemLoader(tmp_path))
    assert env.get_template("t.j2").render(x=1) == "first 1"
    (tmp_path / "t.j2").write_text("second {{ y }}")
    assert env.get_template("t.j2").render(x=1) == "first 1"


def test_round_summaries_and_the_end_say_the_ticks_a_condition_has_left() -> None:
    """C28: Sable's Fatigued ticks to 2 left at seq 85; the round 3 summary and the end state say "Fatigued (2
    left)" in text, Markdown and HTML, as omen status does (they said "Fatigued" alone: an auditor tester)."""
    from omen_core.events import decode_line

    log = Path(__file__).resolve().parents[2] / "fixtures" / "finesse-agi-extra-die-exhaustion" / "fight.jsonl"
    records = [decode_line(line) for line in log.read_bytes().splitlines()]
    text = render_records(records, "text")
    assert "initiative 10, Exhausted x2, Fatigued (2 left)\n" in text
    assert "  Sable Venn (harbor): HP 10/20, Will 6/6, Exhausted x2, Fatigued (2 left)\n" in text
    assert render_records(records, "md").count("Exhausted x2, Fatigued (2 left) |") == 2
    assert render_records(records, "html").count("Exhausted x2, Fatigued (2 left)</td>") == 2


def test_right_to_left_names_are_isolated_where_text_says_them() -> None:
    """Two right-to-left names side by side keep their order (each in <bdi>: "رشيد, שירה" read reversed, and the
    colon after one moved: a tester of non-English names); a left-to-right name and text without such a name are
    left as they are; the text around is escaped, its control characters shown (as every value)."""
    from markupsafe import Markup

    from omen_replay.render import isolated

    names = ["رشيد", "שירה", "Kael Arden"]
    assert isolated("tie between رشيد, שירה & Kael Arden\x1b", names) == Markup(
        "tie between <bdi>رشيد</bdi>, <bdi>שירה</bdi> &amp; Kael Arden\\x1b")
    assert isolated("Kael Arden's turn", names) == "Kael Arden's turn"
    assert not isinstance(isolated("Kael Arden's turn", names), Markup)  # escaped by the template as any value


def test_right_to_left_names_are_isolated_in_the_html_session_log() -> None:
    """The HTML session log isolates right-to-left names where its cards' text says them, as the table page does
    (Rashid's and Shira's initiative lines: "order: שירה, رشيد" read reversed, it was left undone there: a tester of
    non-English names); never inside an attribute; a left-to-right name as it is."""
    import msgspec

    from omen_core.commands import RollInitiative
    from tests.fights import new_fight
    from tests.sheets import sheet

    rashid = msgspec.structs.replace(sheet("ana"), id="rashid", name="رشيد")
    shira = msgspec.structs.replace(sheet("orc", side="raiders"), id="shira", name="שירה")
    fight = new_fight(rashid, shira, faces=[3, 5])
    fight.execute(RollInitiative())
    page = render_records(list(fight.events), "html")
    assert "<bdi>رشيد</bdi>" in page and "<bdi>שירה</bdi>" in page
    assert not re.search(r'="[^"]*<bdi>', page) and "&lt;bdi" not in page
