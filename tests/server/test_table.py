"""The table page (omen_server/table.py): its pages, its static files, and the table fragment each seat is served."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_server.table import CSP, ENV, bundled_sheets
from omen_server.views import PLAYER_COMMANDS
from tests.server.test_app import Table, sheet
from tests.server.test_seats import Seats, leaks


@pytest.fixture
def table() -> Any:
    """A table over a memory store, its client open."""
    made = Table()
    with made.client:
        yield made


def fragment(table: Table, token: str, fight_id: str = "duel") -> str:
    """GET the table fragment as the seat of ``token``."""
    answer = table.client.get(f"/fights/{fight_id}/table", headers=table.auth(token))
    assert answer.status_code == 200, answer.text
    return answer.text


class TestPages:
    def test_the_setup_page_offers_the_bundled_sheets_under_a_strict_policy(self, table: Any) -> None:
        """GET / is HTML listing the four Ember Ford sheets, with a Content-Security-Policy that allows nothing
        from elsewhere and nothing inline, and no Referer sent."""
        answer = table.client.get("/")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
        assert answer.headers["content-security-policy"] == CSP and "'unsafe-inline'" not in CSP
        assert answer.headers["referrer-policy"] == "no-referrer"
        for name in ("Kael Arden", "Brin Hollowmere", "Vesh the Cinder-Hand"):
            assert name in answer.text
        assert not re.search(r"(src|href)=\"(https?:)?//", answer.text), "nothing is loaded from elsewhere"

    def test_the_setup_page_takes_sheet_files_and_an_ability_library_each_labelled(self, table: Any) -> None:
        """GET / offers sheet files (several, .toml), an ability library's box and file, each with its label, and
        marks the samples ticked for a first try (Kael's, Vesh's) for the script to untick beside the GM's own."""
        page = table.client.get("/").text
        for field, kind in (("setup-files", 'type="file" multiple accept=".toml"'),
                            ("setup-abilities-file", 'type="file" accept=".toml"'), ("setup-abilities", "")):
            assert f'<label for="{field}">' in page and re.search(f'<(input|textarea) id="{field}"[^>]*{kind}', page)
        assert re.findall(r'value="(\w+)" checked data-default', page) == ["kael", "vesh"]

    def test_the_bundled_sheets_start_a_fight(self, table: Any) -> None:
        """GET /sheets gives the bundled sheets as JSON that POST /fights takes as they are."""
        sheets = table.client.get("/sheets").json()
        assert sorted(sheets) == ["brin", "kael", "skarn", "vesh"] == sorted(bundled_sheets())
        answer = table.client.post("/fights", json={"combatants": list(sheets.values())})
        assert answer.status_code == 201, answer.text

    def test_the_table_page_holds_no_fight_data_and_loads_its_own_script(self, table: Any) -> None:
        """GET /table/{id} is the same shell for any id (it needs no token and shows nothing of the fight); its
        script and styles are served by the server, and an unknown static file is a 404 problem."""
        table.create()
        page = table.client.get("/table/duel")
        assert page.status_code == 200 and 'src="/static/table.js"' in page.text and "Kael" not in page.text
        for name, kind in (("table.js", "text/javascript"), ("table.css", "text/css"), ("log.css", "text/css")):
            got = table.client.get(f"/static/{name}")
            assert got.status_code == 200 and got.headers["content-type"].startswith(kind) and got.content
        missing = table.client.get("/static/nope.js")
        assert missing.status_code == 404 and missing.headers["content-type"] == "application/problem+json"

    def test_every_template_autoescapes(self, table: Any) -> None:
        """The page's environment autoescapes every template, so a title with markup is shown as text."""
        assert ENV.autoescape is True
        made = table.client.post("/fights", json={"id": "x", "title": "<script>alert(1)</script>",
                                                  "combatants": [sheet("kael"), sheet("vesh")]}).json()
        text = fragment(table, made["gm_token"], "x")
        assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


class TestFragment:
    def test_the_fragment_needs_a_seat_token(self, table: Any) -> None:
        """GET /fights/{id}/table without a token is 401, with another fight's token 403."""
        table.create()
        other = table.client.post("/fights", json={"id": "other", "combatants": [sheet("kael"), sheet("vesh")]}).json()
        assert table.client.get("/fights/duel/table").status_code == 401
        assert table.client.get("/fights/duel/table", headers=table.auth(other["gm_token"])).status_code == 403

    def test_the_gm_sees_every_command_and_the_open_decision_first(self, table: Any) -> None:
        """After initiative, the GM's fragment has the strip in initiative order (whose turn marked), HP meters and
        Bonus Action pips, a form for every offer of the options; once an attack opens the Active Defense window,
        the decision comes before the strip with the numbers: the attack's total against the defense, and for each
        defense what it adds (its die, bonus and rating, the Parry labelled by its weapon, once) and the face it
        needs to turn the hit (§Active Defense, §Hit Determination)."""
        table.create()
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        text = fragment(table, table.gm)
        options = table.client.get("/fights/duel/options", headers=table.auth()).json()["options"]
        assert len(re.findall(r'<form class="command[ "]', text)) == len(options["offers"])
        assert re.search(r'<li class="chip turn[^"]*" aria-current="true" data-id="kael">', text)
        assert text.count('class="pip full"') == 4 and 'class="hp"' in text
        table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                       "dice": [8, 6, 1]})
        text = fragment(table, table.gm)
        events = table.client.get("/fights/duel/events", headers=table.auth()).json()["events"]
        window = next(e["event"] for e in events if e["type"] == "active_defense_window_opened")
        attack, defense = window["attack_total"], window["base_defense"]
        assert f"attack {attack} against Vesh the Cinder-Hand&#39;s defense {defense}" in text
        assert text.index('id="decision"') < text.index('class="strip"')
        assert "+ d8 AGI + 2 AGI bonus" in text  # Vesh's Dodge: AGI d8, bonus 2
        assert "+ d8 AGI + 2 AGI bonus + 1 Parry Rating" in text and text.count("Parry with Curved knife") == 1
        need = attack - defense - 2 - 1  # Parry: the face that brings the defense up to the attack
        said = (f"turns the hit on a {need} or more on the d8" if 1 < need <= 8 else "whatever the die shows"
                if need <= 1 else f"it would need {need} on a d8")
        assert said in text
        assert '<kbd aria-hidden="true">1</kbd>' in text and 'data-shortcut="1"' in text
        assert 'aria-keyshortcuts="1"' in text  # the key is the button's shortcut, not a word of its name

    def test_a_player_gets_only_its_own_commands_and_readable_cards(self, table: Any) -> None:
        """A player's fragment has forms only for its own combatants' player commands, and its log is cards of
        plain lines (no JSON) from its own view: the attack's totals and HIT or MISS, never the other's dice."""
        table.create()
        alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                                  json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        forms = re.findall(r'<form class="command[^"]*" id="o-([a-z_]+)-([a-z]+)"', fragment(table, alice))
        assert {"declare_attack", "end_turn"} <= {command for command, _ in forms}
        assert all(command in PLAYER_COMMANDS and actor == "kael" for command, actor in forms)
        table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                       "dice": [8, 6, 1]})
        text = fragment(table, alice)
        assert 'class="command answer"' not in text, "Vesh's Active Defense is not Alice's to answer"
        log = text[text.index('class="log"'):]
        assert "Kael Arden attacks Vesh the Cinder-Hand with Longsword" in log
        assert "{&#34;" not in log and '{"' not in log and "Kael Arden&#39;s hit: 8 (d8), 6 (d6)" in log
        assert "Vesh the Cinder-Hand&#39;s base defense" not in log, "Vesh's die is the GM's"


    def test_a_prone_combatant_of_a_player_is_offered_standing_up(self, table: Any) -> None:
        """C20, C28: Kael, Prone, on his turn: Alice's fragment has a Stand up form costing 1 Movement Action among
        the turn's simple commands (not folded under "More", docs/server.md: found by a tester), and her seat may
        give it: Prone is cleared."""
        table.create()
        alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                                  json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        table.command({"command": "apply_condition", "who": "kael", "condition": "Prone"})
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        text = fragment(table, alice)
        found = re.search(r'<form class="command[^"]*" id="o-stand_up-kael"', text)
        assert found is not None
        form = text[found.start():text.index("</form>", found.start())]
        assert "Stand up" in form and "1 Movement Action" in form
        turn = text.index('id="turn-commands"')
        more = text.find('id="turn-more"', turn)
        assert turn < found.start() and (more < 0 or found.start() < more), "Stand up is beside Move, not in More"
        answer = table.command({"command": "stand_up", "who": "kael"}, token=alice)
        assert answer.status_code == 201, answer.text
        assert "stand_up" not in fragment(table, alice)


STEPS = st.lists(st.integers(0, 10_000), min_size=3, max_size=14)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(steps=STEPS, hp=st.sampled_from(["exact", "banded", "hidden"]), dice=st.sampled_from(["seeded", "manual"]))
def test_no_player_or_spectator_page_ever_shows_a_gm_only_value(steps: list[int], hp: str, dice: str) -> None:
    """Random fights with GM-only values marked (tests/server/test_seats.py: the hidden combatant, the raider's
    gear, Will and skills, the GM's notes), played by commands picked from the GM's options, undo and redo among
    them: the table fragment served to each player and the spectator never holds a marked value, after every
    command; the GM's fragment holds them (the check can fail)."""
    table = Table()
    with table.client:
        seats = Seats(table, dice=dice, hp=hp)
        gm_saw: list[str] = []
        for value in steps:
            options = table.client.get("/fights/ford/options", headers=table.auth()).json()["options"]
            offers = [o for o in options["offers"] if o["choices"]]
            if offers:
                offer = offers[value % len(offers)]
                choice = offer["choices"][value % len(offer["choices"])]
                body: dict[str, Any] = {"command": offer["command"], **choice["args"]}
                if dice == "manual":
                    body["dice"] = [1] * sum(len(r["dice"]) for r in choice["dice"])
                if offer["command"] == "undo":
                    body["reason"] = "a slip"
                seats.post("gm", {"command": body})
            for who, token in seats.tokens.items():
                served = fragment(table, token, "ford").encode()
                assert not leaks(served), (who, leaks(served)[:3])
            gm_saw.append(fragment(table, table.gm, "ford"))
        assert any(leaks(page.encode()) for page in gm_saw)


def test_the_fragment_is_not_rendered_again_while_nothing_it_shows_changed(table: Any) -> None:
    """A look at the fragment with the tag it last had (X-Table-Tag) is 204, no body, until the head, the table
    settings or the GM's seats change: then 200 with a new tag."""
    table.create()
    first = table.client.get("/fights/duel/table", headers=table.auth())
    tag = first.headers["x-table-tag"]
    again = table.client.get("/fights/duel/table", headers={**table.auth(), "X-Table-Tag": tag})
    assert again.status_code == 204 and again.content == b""
    table.client.post("/fights/duel/settings", headers=table.auth(), json={"hp_display": "exact"})
    changed = table.client.get("/fights/duel/table", headers={**table.auth(), "X-Table-Tag": tag})
    assert changed.status_code == 200 and changed.headers["x-table-tag"] != tag
    tag = changed.headers["x-table-tag"]
    table.command({"command": "roll_initiative"})
    moved = table.client.get("/fights/duel/table", headers={**table.auth(), "X-Table-Tag": tag})
    assert moved.status_code == 200 and moved.headers["x-table-tag"] != tag


def test_a_players_tag_changes_when_the_gm_makes_an_effect_name_public(table: Any) -> None:
    """A name the GM makes public (reveal_effects) changes what a player's page may show, so the player's
    X-Table-Tag changes with it (it did not: the page kept the words it had); the HTML is text/html with one
    charset."""
    table.create()
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    first = table.client.get("/fights/duel/table", headers={"Authorization": f"Bearer {alice}"})
    assert first.headers["content-type"] == "text/html; charset=utf-8"
    tag = first.headers["x-table-tag"]
    assert table.client.post("/fights/duel/settings", headers=table.auth(),
                             json={"reveal_effects": ["Riposte"]}).status_code == 200
    after = table.client.get("/fights/duel/table", headers={"Authorization": f"Bearer {alice}", "X-Table-Tag": tag})
    assert after.status_code == 200 and after.headers["x-table-tag"] != tag


def test_the_gm_sees_its_notes_and_shows_a_hidden_combatant_from_the_table(table: Any) -> None:
    """The GM's fragment shows its notes and a button to show a hidden combatant to the players; the player's
    shows neither the note nor the hidden one until the GM reveals it (POST settings, what the button sends)."""
    table.create(names=("kael", "vesh", "skarn"), hidden=["skarn"], notes={"vesh": "flees at half HP"})
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    gm = fragment(table, table.gm)
    assert "flees at half HP" in gm and 'data-who="skarn" data-change="reveal"' in gm
    assert "flees at half HP" not in fragment(table, alice) and "Skarn" not in fragment(table, alice)
    table.client.post("/fights/duel/settings", headers=table.auth(), json={"reveal": ["skarn"]})
    assert "Skarn Gutterjaw" in fragment(table, alice)
    assert 'data-who="skarn" data-change="hide"' in fragment(table, table.gm)


def test_a_player_reads_the_revealed_seed_once_the_log_is_published(table: Any) -> None:
    """C42: the GM reveals the seed at the end; Alice's card says it is revealed without the seed (the GM's until
    published, docs/server.md), and once the GM publishes the log (which every seat may then download, seed and
    all) her card says the seed too, as the GM's does (it never did: found by a tester)."""
    table.create()
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative"}, {"command": "end_fight"}, {"command": "reveal_seed"}):
        assert table.command(command).status_code == 201, command
    seed = re.search(r"The seed is revealed \(([0-9a-f]+)\)", fragment(table, table.gm))
    assert seed is not None
    before = fragment(table, alice)
    assert "The seed is revealed to the GM: every seeded die" in before and seed[1] not in before
    answer = table.client.post("/fights/duel/settings", headers=table.auth(), json={"publish": True})
    assert answer.status_code == 200, answer.text
    assert f"The seed is revealed ({seed[1]}): every seeded die" in fragment(table, alice)


def test_the_seed_is_offered_at_the_end_and_mid_fight_only_behind_a_confirmation(table: Any) -> None:
    """Mid-fight the GM's reveal form must be confirmed, and says that later dice will come from a new seed; once the
    fight is over it is offered at once; a manual fight offers no reveal at all."""
    table.create()
    table.command({"command": "roll_initiative"})
    text = fragment(table, table.gm)
    form = text[text.index('id="gm-reveal_seed"'):]
    form = form[:form.index("</details>")]
    assert 'data-confirm="1"' in form and "later dice will come from a new seed" in form and "required" in form
    table.command({"command": "end_fight"})
    form = fragment(table, table.gm)
    form = form[form.index('id="gm-reveal_seed" open'):]
    assert 'data-confirm' not in form[:form.index("</details>")]
    table.create(fight_id="manual", dice="manual")
    assert 'data-command="reveal_seed"' not in fragment(table, table.gm, "manual")


def test_a_saves_effect_editor_opens_with_nothing_done_on_either_branch(table: Any) -> None:
    """C15, C25: the GM's save form writes no damage the GM did not write: its effect editor opens with no name,
    0 dice and 0 flat damage and no condition on both branches (it opened as a cinder flask dealing 1d6 + 1 fire
    on a failure, and a GM who picked a saver and a condition dealt that damage unawares: a tester)."""
    table.create()
    table.command({"command": "roll_initiative", "dice": [6, 1]})
    text = fragment(table, table.gm)
    editor = text[text.index('<fieldset class="effect-editor"'):]
    editor = editor[:editor.index("</fieldset>")]
    assert re.search(r'data-effect-field="name" type="text" value=""', editor)
    for branch in ("on_failure", "on_success"):
        assert re.search(rf'id="[^"]*-{branch}-count" data-part="count" type="number" min="0" max="20" value="0"',
                         editor)
        assert re.search(rf'id="[^"]*-{branch}-flat" data-part="flat" type="number" value="0"', editor)
        cond = editor[editor.index(f"-{branch}-cond"):]
        assert cond.index('<option value="">none</option>') < cond.index("</select>")
        assert "selected" not in cond[:cond.index("</select>")]


def test_the_dice_to_type_are_labelled_with_the_rollers_names(table: Any) -> None:
    """C29: in a manual fight the GM's page asks for each die of an attack by its roller's name as the table calls
    it ("Kael Arden's hit", "Vesh the Cinder-Hand's base defense"), not by the combatant's id."""
    table.create(fight_id="manual", dice="manual")
    text = fragment(table, table.gm, "manual")
    assert "<label>Kael Arden's hit " in text and "<label>Vesh the Cinder-Hand's base defense " in text
    assert "<label>kael's hit " not in text


def test_every_seat_reads_its_whole_head_to_keep(table: Any) -> None:
    """docs/server.md "keep the last head you saw": the GM's page and a player's show the seat's whole head (seq and
    hash, as GET /state gives it), with a Copy button holding it (the page showed 12 hex digits to the GM and
    nothing on a phone, and omen verify --head wants the whole hash: found by a tester)."""
    table.create()
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    table.command({"command": "roll_initiative", "dice": [6, 1]})
    for token in (table.gm, alice):
        head = table.client.get("/fights/duel/state", headers=table.auth(token)).json()["head"]
        whole = f"{head['seq']}:{head['hash']}"
        text = fragment(table, token)
        assert f'<code id="head-full">{whole}</code>' in text
        assert f'class="small copy-head" data-text="{whole}"' in text


def test_a_condition_lasting_until_a_named_turn_says_until_when(table: Any) -> None:
    """C40: Vesh, Prone until the end of Kael's next turn (the GM's apply_condition with until and of), shows it
    on every seat's strip: "until the end of Kael Arden's next turn", and once that turn is under way "current"."""
    table.create()
    answer = table.command({"command": "apply_condition", "who": "vesh", "condition": "Prone",
                            "until": "end_of_next_turn", "of": "kael"})
    assert answer.status_code == 201, answer.text
    text = fragment(table, table.gm)
    assert '<span class="left long"> until the end of Kael Arden&#39;s next turn</span>' in text
    # on a phone the chip says it short (five lines at 390 px: a tester), and its box says it whole
    assert '<span class="left short"> till Kael Arden&#39;s next turn ends</span>' in text
    assert re.search(r'<span class="short-only">\.? Now: until the end of Kael Arden&#39;s next turn\.</span>', text)
    # in Kael's turn, that next turn under way: its end, this turn's, clears it (it still read "next turn" then, and
    # a player expected one turn more: a tester); then it is gone
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    text = fragment(table, table.gm)
    assert '<span class="left long"> until the end of Kael Arden&#39;s current turn</span>' in text
    assert '<span class="left short"> till Kael Arden&#39;s current turn ends</span>' in text
    assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
    assert "Kael Arden&#39;s current turn" not in fragment(table, table.gm)


def _attr(text: str, name: str) -> str:
    """The value of the table panel's ``data-{name}`` attribute, unescaped the way the page reads it."""
    found = re.search(rf'class="table-panel"[^>]* data-{name}="([^"]*)"', text)
    assert found is not None, name
    return html.unescape(found[1])


class TestTheFirstScreen:
    def test_the_turns_commands_come_before_the_strip_in_words_with_their_costs(self, table: Any) -> None:
        """On Kael's turn the GM's page has Kael's commands in the main column, before the initiative strip; each
        choice says what it does in words (the target and weapon, the condition and on whom, who engages whom;
        never an id nor a tuple; a Move out of an enemy's reach warns of C23), each command what it costs, and the top
        card what else Kael may do now."""
        table.create()
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        text = fragment(table, table.gm)
        assert text.index('id="turn-commands"') < text.index('class="strip"') < text.index('id="commands-h"')
        turn = text[text.index('id="turn-commands"'):text.index('class="turn-bar"')]
        assert "Kael Arden's turn</h2>" in turn
        assert ">Vesh the Cinder-Hand with Longsword</option>" in turn
        assert ">Vesh the Cinder-Hand, unarmed</option>" in turn
        assert 'costs 1 Action<span class="rule-ref"> &middot; §Resolving an Attack' in turn
        assert "costs 1 Movement Action" in turn
        assert "1 Action, or none, as the effect says" in turn  # a save's cost, not its field's name
        also = text[text.index('id="also"'):]
        also = also[:also.index("</p>")]
        assert "Also now for Kael Arden:" in also
        assert re.search(r'href="#o-declare_attack-kael"[^>]*>Attack <span class="muted">\(1 Action\)', also)
        assert ">Engage: Kael Arden engages Vesh the Cinder-Hand</button>" in text  # not engaged: only that offered
        assert ">Paralysed on Kael Arden</option>" in text and ">the raiders yield</option>" in text
        assert ">Kael Arden&#39;s Athletics</option>" in text
        table.command({"command": "engage", "who": "kael", "others": ["vesh"]})
        move = fragment(table, table.gm)
        assert ">leaving no one&#39;s reach</option>" in move
        assert (">out of Vesh the Cinder-Hand&#39;s reach (an Attack of Opportunity may follow from an enemy able to "
                "act, with a Bonus Action, who has had a turn, unless the mover disengaged: C20, C22, C23)</option>"
                ) in move  # none may come before it (an ally's reach warns of none, nor a disengaged move: a tester)
        assert "(&#39;vesh&#39;,)" not in text and "unarmed yes" not in text and "check who" not in text

    def test_the_player_whose_turn_it_is_is_told_so_and_the_title_says_what_is_awaited(self, table: Any) -> None:
        """Alice, who plays Kael, reads "Your turn" on Kael's turn, and the page's status (its document title and
        what it announces) says it; the GM's says whose turn it is; once Kael attacks, Vesh's Active Defense is
        what the status says is awaited, and the announcement leads with the attack's card."""
        table.create()
        alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                                  json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        mine = fragment(table, alice)
        assert '<strong class="your-turn">Your turn</strong>: Kael Arden' in mine
        assert _attr(mine, "status") == "Your turn: Kael Arden"
        assert "Your turn: Kael Arden</h2>" in mine
        assert _attr(fragment(table, table.gm), "status") == "Round 1: Kael Arden's turn"
        table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                       "dice": [8, 6, 1]})
        mine = fragment(table, alice)
        assert _attr(mine, "status") == "Waiting for Vesh the Cinder-Hand: Active Defense"
        assert _attr(mine, "announce").startswith("Kael Arden attacks Vesh the Cinder-Hand with Longsword")
        assert _attr(mine, "announce").endswith(". Waiting for Vesh the Cinder-Hand: Active Defense")
        assert 'id="turn-commands"' not in mine and 'id="also"' not in mine
        assert _attr(fragment(table, table.gm), "status") == "Your decision: Active Defense"

    def test_once_the_fight_is_over_no_one_has_the_turn(self, table: Any) -> None:
        """After end_fight no chip is marked as having the turn (no ring, no aria-current, no turn badge), no
        turn's commands are offered, and the status says the fight is over."""
        table.create()
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        table.command({"command": "end_fight"})
        text = fragment(table, table.gm)
        assert 'class="chip turn' not in text and "aria-current" not in text and "badge now\">turn" not in text
        assert 'id="turn-commands"' not in text and _attr(text, "status") == "The fight is over"
        assert _attr(text, "ended") == "yes"

    def test_a_reason_the_command_needs_is_a_required_input(self, table: Any) -> None:
        """A cancelled action's reason is a field ``cancel_action`` cannot go without (the options' ``required``), so
        its input is required; an undo's reason, which the command may go without, is required by the table, which
        shows it to every seat; the end of the fight's note is not."""
        table.create()
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                       "dice": [8, 6, 1]})
        text = fragment(table, table.gm)

        def reason_input(command: str) -> str:
            found = re.search(rf'<input type="text" id="o-{command}-gm-reason"[^>]*>', text)
            assert found is not None, command
            return found[0]

        assert " required>" in reason_input("cancel_action") and " required>" in reason_input("undo")
        assert '<input type="text" id="o-end_fight-gm-note" data-path="note" data-kind="text" value="">' in text

    def test_the_undo_form_says_what_it_will_undo(self, table: Any) -> None:
        """The GM's undo form names the card the undo takes back (its seq and headline: Kael's end of turn), and
        after the undo, the card before it (initiative); its button asks for a confirmation in the page. The preview
        and the GM's cards say where dice were rolled (``data-rolled``: initiative, not the end of the turn), for the
        confirmation's word on dice coming again in a seeded fight; a player's cards do not."""
        table.create()
        table.command({"command": "roll_initiative", "dice": [6, 1]})
        table.command({"command": "end_turn", "who": "kael"})
        text = fragment(table, table.gm)
        seq = re.search(r'id="seq-(\d+)" data-seq="\d+" data-kind="end_turn"', text)
        assert seq is not None
        assert f'id="undo-preview" data-default="#{seq[1]} End of turn: Kael Arden">Undoes #{seq[1]} End of turn: ' \
               "Kael Arden</p>" in text
        assert 'data-confirm-undo="1"' in text
        assert re.search(r'id="seq-\d+" data-seq="\d+" data-kind="roll_initiative" data-said="[^"]*" data-rolled>',
                         text)
        assert not re.search(r'data-kind="end_turn" data-said="[^"]*" data-rolled', text)
        table.command({"command": "undo", "reason": "too soon"})
        assert re.search(r'id="undo-preview" data-default="#\d+ Initiative" data-rolled>Undoes #\d+ Initiative</p>',
                         fragment(table, table.gm))


def test_chips_say_who_is_engaged_with_whom_and_what_a_condition_does(table: Any) -> None:
    """C22, C28: once the GM engages Kael with Vesh, each one's chip says whom it is engaged with; a condition's
    chip carries what the ruleset says it does as its tooltip (Exhausted: -1 to every attribute bonus per stack,
    up to 5, cleared by a long rest)."""
    table.create()
    assert "chip-eng" not in fragment(table, table.gm)
    assert table.command({"command": "engage", "who": "kael", "others": ["vesh"]}).status_code == 201
    assert table.command({"command": "apply_condition", "who": "vesh", "condition": "Exhausted"}).status_code == 201
    text = fragment(table, table.gm)
    kael = text[text.index('data-id="kael"'):]
    vesh = text[text.index('data-id="vesh"'):]
    assert kael[:kael.index("</li>")].count('<p class="chip-eng">engaged with Vesh the Cinder-Hand</p>') == 1
    assert vesh[:vesh.index("</li>")].count('<p class="chip-eng">engaged with Kael Arden</p>') == 1
    assert ('<span class="cond" data-condition="Exhausted" title="Exhausted: \u22121 to every attribute bonus per '
            'stack; stacks up to 5; cleared by a long rest; its numbers are placeholders (C28): any other effect the '
            'rules give it is the GM&#39;s to apply">'
            in text)


def test_a_damage_line_says_why_as_far_as_the_seat_sees(table: Any) -> None:
    """C12, C13: Kael's critical hit on Vesh says on the GM's card why it deals 15 (8 on the primary die + 2 bonus
    + 2 crit bonus + 4 WD = 16, armor - 1 = 15); Alice's card says the terms her view holds and no armor step nor
    final amount (Vesh's armor is not hers to see), and that its 16 comes before Vesh's mitigation (it read as the
    damage taken: a tester); with no amount, her line starts with a capital (it read "slashing damage to ..." as a
    sentence cut short: an accessibility tester)."""
    table.create()
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    table.command({"command": "roll_initiative", "dice": [6, 1]})
    table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                   "dice": [8, 6, 1]})
    assert table.command({"command": "answer_active_defense", "defender": "vesh"}).status_code == 201
    why = "(8 on the primary die + 2 bonus + 2 crit bonus + 4 WD = 16"
    assert (f"<li>15 slashing damage to Vesh the Cinder-Hand&#39;s HP {why}, armor \u2212 1 = 15)</li>"
            in fragment(table, table.gm))
    mine = fragment(table, alice)
    assert (f"<li>Slashing damage to Vesh the Cinder-Hand&#39;s HP {why}, before the target&#39;s mitigation "
            "(C13))</li>" in mine and "armor \u2212" not in mine)


def test_a_chip_lists_its_conditions_in_the_order_they_were_applied(table: Any) -> None:
    """C40: the GM applies Prone, then Fatigued, to Kael: his chip, on the GM's page and on Alice's, lists Prone
    first, as ``omen status`` does (the chips listed them by name), and so does the seat's state over HTTP."""
    table.create()
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    for condition in ("Prone", "Fatigued"):
        assert table.command({"command": "apply_condition", "who": "kael", "condition": condition}).status_code == 201
    for token in (table.gm, alice):
        text = fragment(table, token)
        assert re.findall(r'data-condition="(\w+)"', text)[:2] == ["Prone", "Fatigued"], token
        state = table.client.get("/fights/duel/state", headers=table.auth(token)).json()
        kael = next(c for c in state["combatants"] if c["id"] == "kael")
        assert list(kael["conditions"]) == ["Prone", "Fatigued"]


def test_a_player_reads_its_own_abilities_and_their_uses_left(table: Any) -> None:
    """C37, C41: Alice, who plays Kael (Healing Word and Second Wind), reads both on her page: how each is used,
    its summary and Second Wind's 1 use left this fight; Bob's page (Vesh's player) lists none of Kael's; the GM's
    lists every combatant's, each with whose it is (it listed none: found by a tester)."""
    kael = {**sheet("kael"), "abilities": ["healing_word", "second_wind"]}
    table.create(combatants=[kael, sheet("vesh")])
    seats = {name: table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": name, "combatants": [who]}).json()["token"] for name, who in (("Alice", "kael"),
                                                                                            ("Bob", "vesh"))}
    mine = fragment(table, seats["Alice"])
    listed = mine[mine.index('id="abilities-h"'):mine.index("</section>", mine.index('id="abilities-h"'))]
    assert "<strong>Healing Word</strong>" in listed and "a Bonus Action, on your turn" in listed
    assert "an ally (or oneself) regains 1d6 + 1 HP." in listed
    assert re.search(r'<strong>Second Wind</strong> <span class="badge">1 left this fight</span>', listed)
    assert "Healing Word" not in fragment(table, seats["Bob"])
    gm = fragment(table, table.gm)
    listed = gm[gm.index('id="abilities-h"'):gm.index("</section>", gm.index('id="abilities-h"'))]
    assert ">Abilities</h2>" in listed
    assert re.search(r'<strong>Second Wind</strong> <span class="muted">\(Kael Arden\)</span> <span class="badge">1 '
                     r'left this fight</span>', listed)


def test_an_abilitys_deferred_cost_owed_is_on_its_owners_list_until_it_settles(table: Any) -> None:
    """C41: Kael uses Blood Price (2 HP healed now, 3 necrotic owed at the start of his next turn): Alice's list and
    the GM's say it owes that (only the log's card said so: a tester looked for it on the page); Bob's, Vesh's
    player's, says nothing of it; once it settles, at Kael's next turn, the list owes nothing; owed again when the
    fight ends, it is not said (no next turn comes: "owes" stayed after the end, a GM tester)."""
    price = {"id": "blood_price", "name": "Blood Price", "use": "bonus_action", "target": "self",
             "effects": [{"kind": "heal", "to": "actor", "flat": 2}],
             "deferred": {"at": "start_of_next_turn", "effects": [{"kind": "damage", "to": "actor", "flat": 3,
                                                                   "damage_type": "necrotic"}]}}
    table.create(combatants=[{**sheet("kael"), "abilities": [price]}, sheet("vesh")])
    alice, bob = _seat(table, "Alice", "kael"), _seat(table, "Bob", "vesh")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    assert table.command({"command": "use_ability", "who": "kael", "ability": "blood_price", "target": "kael"},
                         token=alice).status_code == 201
    owes = ('<span class="badge warn owed">owes 3 necrotic damage at the start of Kael Arden&#39;s next turn '
            '(C41)</span>')
    assert owes in fragment(table, alice) and owes in fragment(table, table.gm)
    assert "owes" not in fragment(table, bob)
    listed = _said(fragment(table, alice), 'id="abilities-h"')
    # the list says the deferred cost before it is chosen (the use form alone did: a tester)
    assert "a Bonus Action, on your turn; then 3 necrotic damage at the start of next turn (C41)" in listed, listed
    for who in ("kael", "vesh"):
        assert table.command({"command": "end_turn", "who": who}).status_code == 201
    assert "badge warn owed" not in fragment(table, alice)
    assert table.command({"command": "use_ability", "who": "kael", "ability": "blood_price", "target": "kael"},
                         token=alice).status_code == 201
    assert "badge warn owed" in fragment(table, alice)
    ended = table.command({"command": "end_fight", "reason": "yielded", "side": "raiders"})
    assert ended.status_code == 201, ended.text
    assert "badge warn owed" not in fragment(table, alice)  # no next turn comes for it to settle at (a tester)


def test_a_spectators_chips_say_their_sides_as_the_gms_do_from_what_it_sees(table: Any) -> None:
    """A spectator (a streamer's TV) tells the teams apart: each chip it sees names its side and is coloured by it,
    as the GM's are (four chips alike: a tester); the colours come from the sides of the chips it sees, in the order
    they joined, so a hidden combatant of a side of its own, joined first, changes none of them (nothing a seat
    receives may depend on what it may not see); a player's chips stay marked foe and yours, not by side."""
    shade = {**sheet("skarn"), "id": "shade", "name": "Shade", "side": "shadows"}
    seen = []
    for hidden in ([], ["shade"]):
        table.create(fight_id=f"tv{len(hidden)}", combatants=[shade, sheet("kael"), sheet("vesh")], hidden=hidden)
        watcher = table.client.post(f"/fights/tv{len(hidden)}/seats", headers=table.auth(),
                                    json={"kind": "spectator", "name": "TV"}).json()["token"]
        page = fragment(table, watcher, f"tv{len(hidden)}")
        seen.append(re.findall(r'<li class="chip[^"]*side-(\d)"[^>]*data-id="(\w+)"', page))
        assert '<span class="badge side-name">wardens</span>' in page and \
            '<span class="badge side-name">raiders</span>' in page
    assert [pair for pair in seen[0] if pair[1] != "shade"] != [] and ("0", "shade") in seen[0]
    assert sorted(seen[1]) == [("0", "kael"), ("1", "vesh")], seen  # shade hidden: kael's side first of those seen
    alice = table.client.post("/fights/tv1/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert "side-name" not in fragment(table, alice, "tv1")


def test_the_gm_makes_an_abilitys_name_public_from_the_page(table: Any) -> None:
    """C37 (an ability's name is its owner's; docs/rulings.md): the GM's page lists every ability by name with a box
    each, ticked where the settings' ``reveal_effects`` made it public (it could be done over the API alone: a GM
    tester's allies read "uses it"); no player's page has the list; once Blood Price is public, Bob's card of Kael
    using it names it."""
    price = {"id": "blood_price", "name": "Blood Price", "use": "bonus_action", "target": "self",
             "effects": [{"kind": "heal", "to": "actor", "flat": 2}]}
    table.create(combatants=[{**sheet("kael"), "abilities": [price]}, sheet("vesh")])
    alice, bob = _seat(table, "Alice", "kael"), _seat(table, "Bob", "vesh")
    gm = fragment(table, table.gm)
    group = gm[gm.index('id="gm-effects"'):gm.index("</details>", gm.index('id="gm-effects"'))]
    assert '<input type="checkbox" name="effect" value="Blood Price"> Blood Price' in group, group
    assert "(0 of " in group
    assert 'id="gm-effects"' not in fragment(table, alice) and 'id="gm-effects"' not in fragment(table, bob)
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    assert table.command({"command": "use_ability", "who": "kael", "ability": "blood_price", "target": "kael"},
                         token=alice).status_code == 201
    assert "Blood Price" not in fragment(table, bob)
    answer = table.client.post("/fights/duel/settings", headers=table.auth(),
                               json={"reveal_effects": ["Blood Price"], "hide_effects": []})
    assert answer.status_code == 200, answer.text
    assert '<input type="checkbox" name="effect" value="Blood Price" checked> Blood Price' in fragment(table, table.gm)
    assert "Kael Arden uses Blood Price" in fragment(table, bob)


def test_a_triggered_uses_deferred_cost_is_said_with_its_answer(table: Any) -> None:
    """C41: Kael's Blood Strike (on a hit: 1 necrotic more, free now, 2 necrotic owed at the start of his next turn)
    opens as his attack hits: Alice's Use answer says "free now; then 2 necrotic damage at the start of Kael Arden's
    next turn (C41)" (it read "free" alone, the owing said only in the box's header: a tester), and the box says the
    damage comes next, Kael having no routing (C12)."""
    strike = {"id": "blood_strike", "name": "Blood Strike", "use": "trigger",
              "trigger": {"moment": "attack.determined", "owner": "attacker", "outcome": "hit"},
              "effects": [{"kind": "damage", "flat": 1, "damage_type": "necrotic", "to": "target"}],
              "deferred": {"at": "start_of_next_turn", "effects": [{"kind": "damage", "to": "actor", "flat": 2,
                                                                    "damage_type": "necrotic"}]}}
    table.create(dice="manual", combatants=[{**sheet("kael"), "abilities": [strike]}, sheet("vesh")])
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    hit = table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                         "dice": [8, 6]}, token=alice, stage=True)
    assert hit.status_code == 202, hit.text  # Vesh's base defense die is the GM's (C29)
    hit = table.client.post("/fights/duel/staged", headers=table.auth(), json={"id": hit.json()["id"], "dice": [1]})
    assert hit.status_code == 201, hit.text
    hit = table.command({"command": "answer_active_defense", "defender": "vesh", "defense": None})  # the GM's
    assert hit.status_code == 201, hit.text
    assert hit.json()["options"]["waiting"]["kind"] == "blood_strike", hit.json()["options"]["waiting"]
    adds = re.findall(r'<span class="adds" id="[^"]*">([^<]*)</span>', fragment(table, alice))
    assert "free now; then 2 necrotic damage at the start of Kael Arden&#39;s next turn (C41)" in adds, adds
    # what comes next is said for this attack to the seats that see Kael's sheet: he has no routing (C12; it read
    # "routing or the damage": a tester); Vesh's player is told neither (the decision is Kael's sheet's)
    for token in (alice, table.gm):
        assert "Then the damage, as the hit calls for (C12).</span>" in fragment(table, token)
    assert "the damage, as the hit calls for" not in fragment(table, _seat(table, "Bob", "vesh"))


def test_a_triggered_ability_is_listed_with_when_it_is_offered(table: Any) -> None:
    """C38: Kael's Blood Strike (trigger: his attack's hit, a melee attack) is listed on Alice's page as "when its
    attack hits; only with: a melee attack" (it read "when it triggers; when: a melee attack", and only the author's
    summary told the table when: a GM tester)."""
    strike = {"id": "blood_strike", "name": "Blood Strike", "use": "trigger",
              "trigger": {"moment": "attack.determined", "owner": "attacker", "outcome": "hit"},
              "when": {"attack_kinds": ["melee"]},
              "effects": [{"kind": "damage", "flat": 1, "damage_type": "necrotic", "to": "target"}]}
    table.create(combatants=[{**sheet("kael"), "abilities": [strike]}, sheet("vesh")])
    alice = _seat(table, "Alice", "kael")
    text = fragment(table, alice)
    assert '<span class="muted">when its attack hits; only with: a melee attack</span>' in text, \
        re.findall(r'<span class="muted">when[^<]*</span>', text)


def test_a_surprise_badge_stands_through_round_1_only(table: Any) -> None:
    """C18: Vesh ambushes Kael (difficulty 10, the GM's preset): Kael's chip says his tier ("partial surprise": his
    Perception 6 + FCS bonus is within 6 to 10) through round 1, where it matters (the −5 at initiative, a Complete
    Surprise's lost turn), and not in round 2 (it stood all fight, read as a condition still in force: a GM
    tester)."""
    table.create(names=("kael", "vesh"), dice="manual")
    for command in ({"command": "begin_ambush", "ambushers": ["vesh"], "defenders": ["kael"], "difficulty": 10,
                     "dice": [6]},
                    {"command": "roll_initiative", "dice": [6, 1]}):
        assert table.command(command).status_code == 201, command

    def badges() -> list[str]:
        text = fragment(table, table.gm)
        return re.findall(r'<span class="badge warn">([^<]*)</span>', text)

    assert badges() == ["partial surprise"]
    log = html.unescape(fragment(table, table.gm))
    assert "Ambush Difficulty 10, set by the GM (C17)" in log
    assert re.search(r"Kael Arden: Perception [^<]* against 10: Partial Surprise \(C18: in 6 to 10\)", log), log
    while table.client.get("/fights/duel/state", headers=table.auth()).json()["round"] < 2:
        turn = table.client.get("/fights/duel/state", headers=table.auth()).json()["turn"]
        assert table.command({"command": "end_turn", "who": turn}).status_code == 201
    assert badges() == []


def test_an_ambush_card_says_how_its_difficulty_was_reached(table: Any) -> None:
    """C17: Vesh and Skarn waited 1 to 2 minutes and rolled Stealth; the card says the rule and the totals it
    took ("the average Stealth roll, rounded down + 3, 1 to 2 minutes waited (C17); Stealth: ...") and the
    difficulty is that average + 3 (it said "Ambush Difficulty 8" alone: a GM tester)."""
    table.create(names=("kael", "vesh", "skarn"), dice="manual")
    made = table.command({"command": "begin_ambush", "ambushers": ["vesh", "skarn"], "defenders": ["kael"],
                          "time_waited": "one_to_two_minutes", "dice": [3, 6, 5]})
    assert made.status_code == 201, made.text
    events = table.client.get("/fights/duel/events", headers=table.auth()).json()["events"]
    (set_,) = [e["event"] for e in events if e["type"] == "ambush_difficulty_set"]
    totals = [r["total"] for r in set_["stealth"]]
    assert set_["difficulty"] == sum(totals) // 2 + 3
    said = (f"Ambush Difficulty {set_['difficulty']}: the average Stealth roll, rounded down + 3, 1 to 2 minutes "
            f"waited (C17); Stealth: Vesh the Cinder-Hand {totals[0]}, Skarn Gutterjaw {totals[1]}")
    assert said in html.unescape(fragment(table, table.gm))


def test_a_passive_ability_with_conditions_is_not_said_always_on(table: Any) -> None:
    """C37: Skarn's Brute Rage applies by itself to an attack declared with rage: the GM's list says "passive: it
    applies by itself; only with: declared with rage" (it read "always on; only with: declared with rage", which
    contradicts itself: a GM tester)."""
    table.create(names=("kael", "skarn"))
    text = html.unescape(fragment(table, table.gm))
    assert "passive: it applies by itself; only with: declared with rage" in text
    assert "always on; only with" not in text


def test_a_decision_after_a_miss_says_no_damage_comes(table: Any) -> None:
    """C25: Kael's Shove Aside (on a miss: Vesh falls Prone) opens as his 1 + 1 misses Vesh's 6: every seat's box
    says no damage comes, the miss's consequences and the attack's settling do (it said "Then the damage, as the
    hit calls for (C12)" of a miss: a tester); Vesh's seat, not shown the decision, read "Then ." alone."""
    shove = {"id": "shove_aside", "name": "Shove Aside", "use": "trigger",
             "trigger": {"moment": "attack.determined", "owner": "attacker", "outcome": "miss"},
             "effects": [{"kind": "condition", "to": "target", "condition": "Prone"}]}
    table.create(dice="manual", combatants=[{**sheet("kael"), "abilities": [shove]}, sheet("vesh")])
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    missed = table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                            "dice": [1, 1, 6]})
    assert missed.status_code == 201, missed.text
    if missed.json()["options"]["waiting"]["kind"] == "active_defense":
        missed = table.command({"command": "answer_active_defense", "defender": "vesh", "defense": None})
    assert missed.json()["options"]["waiting"]["kind"] == "shove_aside", missed.json()["options"]["waiting"]
    for token in (alice, table.gm):
        page = fragment(table, token)
        assert ("Then no damage (a miss): what the attack does on a miss, if anything (C25), then it settles."
                in page) and "as the hit calls for" not in page
    # Vesh's player is told neither the decision nor what comes after it (Kael's sheet's), and no empty "Then ."
    bob = fragment(table, _seat(table, "Bob", "vesh"))
    assert "Waiting: a decision" in bob and "Then ." not in bob and "resumes" not in bob

def test_an_ability_on_oneself_is_labelled_where_it_may_go_on_another(table: Any) -> None:
    """C37: Alice's Kael may use Healing Word on himself or on his ally Brin: the self choice says so ("Healing Word
    on Kael Arden (self)"), not the ability's name alone, which read as the default (found by a GM tester: Bob
    healed Ana at full HP by mistake)."""
    kael = {**sheet("kael"), "abilities": ["healing_word"]}
    table.create(combatants=[kael, sheet("brin"), sheet("vesh")])
    alice = _seat(table, "Alice", "kael")
    rolled = table.command({"command": "roll_initiative", "dice": [6, 1, 2]})
    assert rolled.status_code == 201, rolled.text
    offered = [o for s in _selects(fragment(table, alice)) for o in s if o.startswith("Healing Word")]
    assert offered == ["Healing Word on Kael Arden (self)", "Healing Word on Brin Hollowmere"]


def _selects(text: str) -> list[list[str]]:
    """The options' words of every select of a fragment, unescaped."""
    return [[html.unescape(o) for o in re.findall(r"<option[^>]*>([^<]*)</option>", body)]
            for body in re.findall(r"<select[^>]*>(.*?)</select>", text, re.S)]


class TestWords:
    def test_no_two_choices_read_the_same_and_rage_is_said(self, table: Any) -> None:
        """C12: Skarn's attack is offered with and without Brute Rage; the rage one says so ("Kael Arden with Spiked
        maul, raging (Brute Rage)": it read as the other, its "rage": true unsaid), and no select of the GM's page
        holds two choices in the same words."""
        table.create(names=("kael", "brin", "vesh", "skarn"))
        text = fragment(table, table.gm)
        assert ">Kael Arden with Spiked maul</option>" in text
        assert ">Kael Arden with Spiked maul, raging (Brute Rage)</option>" in text
        assert ">Kael Arden, unarmed, raging (Brute Rage)</option>" in text
        for words in _selects(text):
            assert len(words) == len(set(words)), [w for w in words if words.count(w) > 1]

    def test_two_choices_that_would_read_alike_say_what_tells_them_apart(self) -> None:
        """A command whose words do not cover an argument (a future option, say) still never offers two choices in
        the same words: the ones that collide add the arguments they differ by, and the others stay as they are."""
        from omen_core.options import Choice, Offer
        from omen_server.table import _offer_view

        offer = Offer(command="declare_attack", actor="kael", rule="C5", cost="1 Action", choices=(
            Choice(args={"attacker": "kael", "target": "vesh", "weapon": "longsword"}),
            Choice(args={"attacker": "kael", "target": "vesh", "weapon": "longsword", "feint": True}),
            Choice(args={"attacker": "kael", "target": "vesh", "unarmed": True})))
        view = _offer_view(offer, 0, {"kael": "Kael Arden", "vesh": "Vesh"}, gear={("kael", "longsword"): "Longsword"})
        assert [c.label for c in view.choices] == ["Vesh with Longsword", "Vesh with Longsword (feint yes)",
                                                   "Vesh, unarmed"]

    def test_a_story_line_names_the_weapon_by_its_sheets_name_to_its_wielders_seat(self, table: Any) -> None:
        """The card of Skarn's attack with his maul says "with Spiked maul" (the sheet's name, as the choice said
        it; it said "with maul", the id) to the GM; to Alice, who plays Kael, the weapon is Skarn's sheet: her card
        names none."""
        table.create(names=("kael", "vesh", "skarn"), dice="manual")
        alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                                  json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
        answer = table.command({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                                "rage": True, "dice": [2, 1, 8]})
        assert answer.status_code == 201, answer.text
        gm, mine = fragment(table, table.gm), fragment(table, alice)
        assert "Skarn Gutterjaw attacks Kael Arden with Spiked maul</span>" in gm
        assert "Skarn Gutterjaw attacks Kael Arden</span>" in mine and "maul" not in mine


def _skarn_interrupts(table: Any, initiative: list[int], who: str, weapon: str, faces: list[int]) -> None:
    """Skarn acts first (``initiative``'s faces) and ends his turn; ``who`` engages him and attacks with ``weapon``;
    Skarn's Interrupt (C24) with his maul rolls ``faces`` (his hit dice, then ``who``'s base defense die), and
    ``who`` declines an Active Defense."""
    for command in ({"command": "roll_initiative", "dice": initiative},
                    {"command": "engage", "who": who, "others": ["skarn"]},
                    {"command": "end_turn", "who": "skarn"},
                    {"command": "declare_attack", "attacker": who, "target": "skarn", "weapon": weapon},
                    {"command": "react", "who": "skarn", "weapon": "maul", "dice": faces},
                    {"command": "answer_active_defense", "defender": who}):
        assert table.command(command).status_code == 201, command


def _not_offered_on_top(table: Any, token: str) -> str | None:
    """The "Not offered: ..." line of the top card the seat of ``token`` is shown, unescaped; None if it has none."""
    text = fragment(table, token)
    top = text[text.index('id="top-card"'):text.index("</article>", text.index('id="top-card"'))]
    found = re.search(r'<p class="not-offered" id="top-not-offered">([^<]*)</p>', top)
    return html.unescape(found.group(1)) if found else None


def _top_lines(text: str) -> list[str]:
    """The top card's lines, unescaped."""
    card = text[text.index('id="top-card"'):]
    card = card[:card.index("</article>")]
    return [html.unescape(x) for x in re.findall(r"<li>([^<]*)</li>", card)]


def test_a_cancelled_action_tells_the_interrupt_that_cancelled_it(table: Any) -> None:
    """C24: Skarn's Interrupt hits Brin (9 against 3; 11 crushing, 18 -> 7 HP) and cancels Brin's attack: the top
    card, the cancelled attack's, tells the Interrupt's hit, Brin's declined Active Defense, damage and HP and says
    why the attack is cancelled, to
    the GM and to Bob, who plays Brin, from his own view (the action_cancelled reason is the GM's to see)."""
    table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
    bob = table.client.post("/fights/duel/seats", headers=table.auth(),
                            json={"kind": "player", "name": "Bob", "combatants": ["brin"]}).json()["token"]
    for command in ({"command": "roll_initiative", "dice": [1, 3, 1, 6]},  # Skarn 6, Brin 5, Vesh 3, Kael 2
                    {"command": "engage", "who": "brin", "others": ["skarn"]},
                    {"command": "end_turn", "who": "skarn"},
                    {"command": "declare_attack", "attacker": "brin", "target": "skarn", "weapon": "shortblade"},
                    {"command": "react", "who": "skarn", "weapon": "maul", "dice": [4, 2, 1]},
                    {"command": "answer_active_defense", "defender": "brin"}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    attack, damage = "Interrupt: Skarn Gutterjaw attacks Brin Hollowmere", "11 crushing damage to Brin Hollowmere's HP"
    hit = "attack 9{} against defense 3 (1 RES die + 1 RES bonus + 1 armor): HIT"
    defense = " (12 dealt, armor \u2212 1 = 11)"
    then = ["Brin Hollowmere's HP: 18 \u2192 7",
            "the action is cancelled: Skarn Gutterjaw's Interrupt hit (C24); its Action is still spent"]
    declines = "Brin Hollowmere declines an Active Defense"  # the Interrupt's own card says it: this one too
    assert _top_lines(fragment(table, table.gm))[-6:] == [
        f"{attack} with Spiked maul", declines, hit.format(" (4 primary die + 2 FCS die + 3 STR bonus)"),
        f"{damage} (4 on the primary die + 3 bonus + 5 WD = 12, armor \u2212 1 = 11)", *then]
    assert _top_lines(fragment(table, bob))[-6:] == [attack, f"{declines} (given by the GM)", hit.format(""),
                                                     f"{damage}{defense}", *then]  # the GM's answer for his Brin


def test_a_cancelled_actions_announcement_says_what_the_interrupt_did(table: Any) -> None:
    """C24: Skarn's Interrupt hits Brin (9 against 3; 11 crushing, 18 -> 7 HP) and cancels Brin's attack: the page
    announces the cancelled attack with the Interrupt's damage, to the GM and to Bob who plays Brin (it said only
    "CANCELLED: Brin Hollowmere attacks Skarn Gutterjaw with Short blade", no word of anyone hurt: an accessibility
    tester)."""
    table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
    bob = _seat(table, "Bob", "brin")
    _skarn_interrupts(table, [1, 3, 1, 6], "brin", "shortblade", [4, 2, 1])  # Skarn 6, Brin 5, Vesh 3, Kael 2
    gm, his = _announce(fragment(table, table.gm)), _announce(fragment(table, bob))
    headline = "CANCELLED: Brin Hollowmere attacks Skarn Gutterjaw with Short blade. "
    assert gm.startswith(f"{headline}11 crushing damage to Brin Hollowmere's HP (4 on the primary die + 3 bonus + "
                         "5 WD = 12, armor \u2212 1 = 11)"), gm
    assert his == ("CANCELLED: Brin Hollowmere attacks Skarn Gutterjaw with Short blade (given by the GM). 11 crushing "
                   "damage to Brin Hollowmere's HP (12 dealt, armor \u2212 1 = 11). Your turn: Brin Hollowmere"), his


def test_a_player_reads_its_own_facts_terms_and_why(table: Any) -> None:
    """Alice, who plays Kael, reads her own roll's terms (initiative 2 = 1 AGI die + 1 AGI bonus; Vesh's 8 alone),
    why Kael has no Active Defense (C10: she saw him made Paralysed; the engine's reason is the GM's), the terms of
    his defense, and the armor step of the damage he takes (the target's own: "9 dealt, armor − 2 = 7"), never Vesh's
    hit terms nor his damage terms; the GM reads the engine's own reason and every term."""
    table.create(dice="manual")
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [1, 6]}).status_code == 201
    assert _top_lines(fragment(table, alice))[1:3] == ["Kael Arden: initiative 2 (1 AGI die + 1 AGI bonus)",
                                                       "Vesh the Cinder-Hand: initiative 8"]
    assert table.command({"command": "apply_condition", "who": "kael", "condition": "Paralysed"}).status_code == 201
    answer = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                            "dice": [3, 3]})
    assert answer.status_code == 201, answer.text
    defense = "defense 4 (no RES die (C10) + 2 RES bonus + 2 armor): HIT, CRITICAL"
    assert _top_lines(fragment(table, alice))[-5:] == [
        "no Active Defense for Kael Arden: Kael Arden is Paralysed: no base defense die and no Active Defense (C10)",
        f"attack 9 against {defense}", "critical (C7): the FCS portion (FCS dice + FCS bonus) is more than the RES "
        "portion (RES die + RES bonus)", "7 piercing damage to Kael Arden's HP (9 dealt, armor − 2 = 7)",
        "Kael Arden's HP: 24 → 17"]
    assert _top_lines(fragment(table, table.gm))[-5:-1] == [
        "no Active Defense for Kael Arden: the defender is incapacitated or paralysed: no base defense die and no "
        "Active Defense (C10)", f"attack 9 (3 primary die + 3 FCS die + 2 AGI bonus + 1 weapon) against {defense}",
        "critical (C7): FCS portion 4 (3 FCS die + 1 FCS bonus) is more than RES portion 2 (2 RES bonus)",
        "7 piercing damage to Kael Arden's HP (3 on the primary die + 2 bonus + 2 crit bonus + 2 WD = 9, "
        "armor − 2 = 7)"]


def test_what_is_in_hand_and_whom_a_seat_plays_are_said_by_name(table: Any) -> None:
    """Alice's chip of Kael says what he holds by its sheet's names (it said the ids: "longsword, shield"), and the
    GM's seat list says whom Alice plays by name (it said "player: kael")."""
    table.create()
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert '<p class="chip-hand muted">in hand: Longsword, Warden&#39;s kite shield</p>' in fragment(table, alice)
    assert '<strong>Alice</strong> <span class="muted">player: Kael Arden</span>' in fragment(table, table.gm)


def test_at_setup_the_gms_first_screen_offers_what_comes_next(table: Any) -> None:
    """combat.txt, C19: before the rounds the GM's page offers rolling initiative, or an ambush, in the main column
    beside the last outcome (it sat under "The GM's table", ~1,180 px down at 1280x800), each form once, an ambush's
    choices in words; once the rounds begin it is gone."""
    table.create(names=("kael", "brin", "vesh", "skarn"))
    text = fragment(table, table.gm)
    assert text.index('id="top-card"') < text.index('id="next-commands"') < text.index('class="strip"')
    assert "Next: Roll initiative or begin an ambush</h2>" in text
    assert len(re.findall(r'id="o-roll_initiative-gm"', text)) == 1
    assert len(re.findall(r'id="o-begin_ambush-gm"', text)) == 1
    assert (">Kael Arden, Brin Hollowmere ambush Vesh the Cinder-Hand, Skarn Gutterjaw (they waited under a minute)"
            "</option>") in text
    assert ">Vesh the Cinder-Hand, Skarn Gutterjaw ambush Kael Arden, Brin Hollowmere (Ambush Difficulty 10)</option>" \
        in text
    assert table.command({"command": "roll_initiative"}).status_code == 201
    assert 'id="next-commands"' not in fragment(table, table.gm)


def test_an_answer_the_gm_gave_for_a_players_combatant_says_so_to_the_player(table: Any) -> None:
    """docs/server.md (the GM may answer any seat's decision): Skarn attacks Kael and the GM answers Kael's Active
    Defense window: Alice's card says her Kael's answer was given by the GM (it read "Kael Arden declines ..." as if
    she had chosen it: a tester); the GM's own card says nothing of it; the next answer, Alice's own, neither."""
    table.create(names=("kael", "vesh", "skarn"), dice="manual")
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                     "dice": [3, 2, 1]},
                    {"command": "answer_active_defense", "defender": "kael"}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    given = [line for line in _top_lines(fragment(table, alice)) if line.endswith(" (given by the GM)")]
    assert len(given) == 1 and given[0].startswith("Kael Arden "), _top_lines(fragment(table, alice))
    # said apart too, for a phone whose own decision hides the card's lines (table.css shows it there alone)
    assert f'<p class="gm-gave">{html.escape(given[0])}</p>' in fragment(table, alice)
    assert not any("given by the GM" in line for line in _top_lines(fragment(table, table.gm)))
    for command in ({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                     "dice": [3, 2, 1]},):
        assert table.command(command).status_code == 201
    assert table.command({"command": "answer_active_defense", "defender": "kael"}, token=alice).status_code == 201
    assert not any("given by the GM" in line for line in _top_lines(fragment(table, alice)))


def test_an_attack_the_gm_declared_for_a_players_combatant_says_so_to_the_player(table: Any) -> None:
    """docs/server.md: a claim is the GM's call, and the GM may give the player's attack with it; the card of that
    attack on Alice's page reads "... (given by the GM)" (it read as if she had declared it: a tester); the GM's
    card, and Alice's own attack's after it, do not."""
    table.create(names=("kael", "vesh"), dice="manual")
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    attack = {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}
    given = table.command({**attack, "situational": {"high_ground": True}, "dice": [1, 1, 6]})
    assert given.status_code == 201, given.text
    headline = re.compile(r'id="top-card".*?<span class="headline">([^<]*)</span>', re.S)
    mine = headline.search(fragment(table, alice))
    assert mine is not None and html.unescape(mine.group(1)) == (
        "Kael Arden attacks Vesh the Cinder-Hand with Longsword (given by the GM)")
    gms = headline.search(fragment(table, table.gm))
    assert gms is not None and "given by the GM" not in gms.group(1)
    assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
    assert table.command({"command": "end_turn", "who": "vesh"}).status_code == 201
    mine_too = table.command(attack, token=alice)  # (an Interrupt window for Vesh comes first, C24)
    assert mine_too.status_code == 201, mine_too.text
    again = headline.search(fragment(table, alice))
    assert again is not None and "given by the GM" not in again.group(1)


def test_the_gms_attack_form_takes_every_claim_and_a_damage_modifier_a_players_none(table: Any) -> None:
    """combat.txt §Special Combat Conditions, C26, C27: the GM's attack form for Kael takes the high ground, an
    Encircled claim (attackers and defenders, at least 1 each) and a damage modifier (its source and value), each
    filling its path of the command (the form had the high ground alone: a GM could not claim Encircled at the
    table); Alice's own form for Kael offers none of them (the claims are the GM's call)."""
    table.create(names=("kael", "vesh"), dice="manual")
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    paths = {"situational.high_ground": "checkbox", "situational.encircled.attackers": "number",
             "situational.encircled.defenders": "number", "damage_modifiers.0.source": "text",
             "damage_modifiers.0.value": "number"}
    for token, offered in ((table.gm, True), (alice, False)):
        text = fragment(table, token)
        form = text[text.index('<form class="command" id="o-declare_attack-kael"'):]
        form = form[:form.index("</form>")]
        found = dict(re.findall(r'data-path="([^"]+)" data-kind="(\w+)"', form))
        assert found == (paths if offered else {}), (token == table.gm, found)
    gm = fragment(table, table.gm)
    assert re.search(r'<label for="o-declare_attack-kael-encircled-attackers">Encircled \(C26\): the attacking side '
                     r'adjacent to the target, the attacker included</label> <input type="number" '
                     r'id="o-declare_attack-kael-encircled-attackers" '
                     r'data-path="situational.encircled.attackers" data-kind="number" value="" min="1">', gm)
    form = gm[gm.index('<form class="command" id="o-declare_attack-kael"'):]
    folded = form[form.index('<details class="more-inputs" id="o-declare_attack-kael-more">'):form.index("</details>")]
    assert "<summary>Also: Encircled (C26), a damage modifier</summary>" in folded  # seldom used: folded
    assert "high_ground" not in folded and "encircled.defenders" in folded and "damage_modifiers.0.value" in folded


def test_a_hit_by_a_hidden_combatant_is_told_to_the_target_by_its_own_hp_alone(table: Any) -> None:
    """Hidden Skarn hits Kael: every event of the attack is withheld from Alice, who plays Kael, and her log said
    nothing while her HP fell 24 -> 6; her card of the batch now says "Kael Arden takes damage: 24 → 6 HP" (her own
    HP before and after, which her state shows at each head) and nothing of who, with what or how much; the GM's card
    tells the attack itself."""
    table.create(names=("kael", "vesh", "skarn"), dice="manual", hidden=["skarn"])
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    for command in ({"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                     "dice": [9, 5, 1]},
                    {"command": "answer_active_defense", "defender": "kael"}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    mine = fragment(table, alice)
    assert _top_lines(mine) == ["Kael Arden takes damage: 24 \u2192 6 HP"]
    card = mine[mine.index('id="top-card"'):]
    assert not re.search(r"Skarn|maul|crushing|18", card[:card.index("</article>")]) and "Skarn" not in mine
    gm = _top_lines(fragment(table, table.gm))
    assert "Kael Arden&#39;s HP: 24 \u2192 6" not in gm and "Kael Arden's HP: 24 \u2192 6" in gm
    assert not any("takes damage" in line for line in gm)


def test_a_hit_by_a_hidden_combatant_in_a_command_withheld_whole_gets_a_card_of_its_own(table: Any) -> None:
    """Kael is Paralysed (C10: no Active Defense window), so hidden Skarn's attack resolves in the GM's command alone,
    which Alice may not see at all (it names Skarn): her log gets a card of that batch saying only "Kael Arden takes
    damage: 24 → 15 HP", the top card; nothing of Skarn."""
    table.create(names=("kael", "vesh", "skarn"), dice="manual", hidden=["skarn"])
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    for command in ({"command": "apply_condition", "who": "kael", "condition": "Paralysed"},
                    {"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul",
                     "dice": [3, 2]}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    mine = fragment(table, alice)
    top = mine[mine.index('id="top-card"'):]
    assert '<span class="headline">Kael Arden takes damage: 24 \u2192 15 HP</span>' in top[:top.index("</article>")]
    assert _top_lines(mine) == [] and "Skarn" not in mine and 'data-hp="15"' in mine


@pytest.mark.parametrize("attacker", ["skarn", "grall"])
def test_a_players_answer_to_a_hidden_attacker_reads_in_words_and_tells_nothing_of_it(attacker: str) -> None:
    """Hidden Skarn hits Kael and Alice declines an Active Defense: her card reads "Kael Arden declines an Active
    Defense" (it read "Answer active defense: Kael Arden", the command's name), Bob's (who plays Vesh and sees
    Alice's answer by its name alone) "Kael Arden answers an Active Defense window"; and neither page's top card
    nor log tells one hidden attacker from another (Grall Mire, another id, name and weapon, the same blow): the
    same bytes in both worlds (but for the head, whose hash is salted afresh in each fight)."""
    pages = {}
    for who in ("skarn", attacker):
        made = Table()
        with made.client:
            hidden = sheet("skarn") if who == "skarn" else {
                **sheet("skarn"), "id": "grall", "name": "Grall Mire",
                "weapons": [{**w, "name": "Rusted cleaver"} for w in sheet("skarn")["weapons"]]}
            made.create(dice="manual", names=(), combatants=[sheet("kael"), sheet("vesh"), hidden], hidden=[who])
            alice, bob = _seat(made, "Alice", "kael"), _seat(made, "Bob", "vesh")
            for command in ({"command": "declare_attack", "attacker": who, "target": "kael", "weapon": "maul",
                             "dice": [9, 5, 1]},
                            {"command": "answer_active_defense", "defender": "kael"}):
                answer = made.command(command, token=alice if command["command"] != "declare_attack" else None)
                assert answer.status_code == 201, answer.text
            for name, token in (("Alice", alice), ("Bob", bob)):
                text = fragment(made, token)
                start = text.index('<section class="top-card"')
                log = text[text.index('<section class="log"'):text.index('<section class="proof"')]  # not the head:
                pages[who, name] = text[start:text.index("</section>", start)] + log
    alice_top, bob_top = (re.search(r'<span class="headline">([^<]*)</span>', pages["skarn", n])
                          for n in ("Alice", "Bob"))
    assert alice_top is not None and alice_top[1] == "Kael Arden declines an Active Defense"
    assert bob_top is not None and bob_top[1] == "Kael Arden answers an Active Defense window"
    for name in ("Alice", "Bob"):
        assert pages["skarn", name] == pages[attacker, name]
        assert not re.search(r"(?i)skarn|grall|maul|cleaver", pages[attacker, name])
        words = re.sub(r"<[^>]+>", " ", pages[attacker, name])  # what the page says (a log entry's data-kind aside)
        assert "_" not in words and "Answer active" not in words


def _riposte_open(table: Any, foe: str, hidden: bool) -> str:
    """Vesh (Bob's seat, holding Riposte) acts first and has had its turn (a Disengage, then its end: its Bonus
    Action may go, C20); then ``foe`` (hidden from the players, or not) makes an unarmed attack of 1 + 1 on it that
    misses its RES 6, and Riposte's decision is open for Vesh. Bob's token."""
    vesh = {**sheet("vesh"), "abilities": ["riposte"]}
    table.create(dice="manual", names=(), combatants=[vesh, sheet(foe)] if hidden else [sheet(foe), vesh],
                 **({"hidden": [foe]} if hidden else {}))
    bob = _seat(table, "Bob", "vesh")
    for command in ({"command": "roll_initiative", "dice": [6, 1] if hidden else [1, 6]},
                    {"command": "disengage", "who": "vesh"}, {"command": "end_turn", "who": "vesh"},
                    {"command": "declare_attack", "attacker": foe, "target": "vesh", "unarmed": True,
                     "dice": [1, 1, 6]}):
        assert table.command(command).status_code == 201, command
    return bob


def test_an_ability_answered_against_a_hidden_attacker_is_said_by_its_name(table: Any) -> None:
    """C38: hidden Skarn's unarmed 3 misses Vesh's 8 and Bob answers Riposte for Vesh: his card, the attack's
    events withheld, reads "Vesh the Cinder-Hand uses Riposte" (its name from Vesh's sheet, which Bob sees; it read
    "Answer decision: Vesh the Cinder-Hand"), and nothing of Skarn."""
    bob = _riposte_open(table, "skarn", hidden=True)
    answer = table.command({"command": "answer_decision", "who": "vesh", "decision": "riposte", "choice": "use",
                            "dice": [4]}, token=bob)
    assert answer.status_code == 201, answer.text
    text = fragment(table, bob)
    top = text[text.index('id="top-card"'):text.index("</article>", text.index('id="top-card"'))]
    assert '<span class="headline">Vesh the Cinder-Hand uses Riposte</span>' in top and "Skarn" not in text


def test_a_riposte_not_offered_before_its_owners_first_turn_is_said_to_its_owner_only(table: Any) -> None:
    """C38, C20: Skarn acts first and his unarmed 1 + 1 misses Vesh, who holds Riposte (its Bonus Action) but has
    not had a turn: no decision opens. Bob's card of the attack says why, by name, as ``omen explain`` does (the
    page said nothing: a tester's player asked why); Cara's seat (Kael's, no Riposte) is told nothing of Vesh's
    sheet; the GM reads it too."""
    vesh = {**sheet("vesh"), "abilities": ["riposte"]}
    table.create(dice="manual", names=(), combatants=[sheet("skarn"), vesh, sheet("kael")])
    bob, cara = _seat(table, "Bob", "vesh"), _seat(table, "Cara", "kael")
    for command in ({"command": "roll_initiative", "dice": [6, 1, 2]},
                    {"command": "declare_attack", "attacker": "skarn", "target": "vesh", "unarmed": True,
                     "dice": [1, 1, 6]}):
        assert table.command(command).status_code == 201, command
    said = ("Not offered: Riposte to Vesh the Cinder-Hand: Vesh the Cinder-Hand's first turn has not come yet: its "
            "Bonus Actions are for defence only until then (C20).")
    assert _not_offered_on_top(table, bob) == _not_offered_on_top(table, table.gm) == said
    theirs = fragment(table, cara)
    assert 'id="top-not-offered"' not in theirs and "Riposte" not in theirs


def test_a_second_wind_passed_over_by_an_interrupt_is_said_on_the_card_it_cancelled(table: Any) -> None:
    """C38, C24: Kael (24 of 24 HP, Second Wind) attacks Skarn, whose Interrupt hits him for 10 and cancels the
    attack: the top card, the cancelled attack's telling the Interrupt, says to Alice (Kael's player) and the GM that
    Second Wind was not offered and why, as ``omen explain`` does (the card said nothing of it: a tester); Bob's seat
    (Vesh's) is told nothing of Kael's sheet."""
    kael = {**sheet("kael"), "abilities": ["second_wind"]}
    table.create(dice="manual", combatants=[kael, sheet("vesh"), sheet("skarn")])
    alice, bob = _seat(table, "Alice", "kael"), _seat(table, "Bob", "vesh")
    _skarn_interrupts(table, [3, 1, 6], "kael", "longsword", [4, 2, 1])  # Skarn, Kael, Vesh
    said = ("Not offered: Second Wind to Kael Arden: Second Wind would restore nothing: Kael Arden was at its sheet's "
            "HP (24 of 24) when it was due, and healing never goes above it (C38).")
    for token in (alice, table.gm):
        assert any(line.startswith("the action is cancelled: Skarn Gutterjaw's Interrupt hit (C24)")
                   for line in _top_lines(fragment(table, token)))
        assert _not_offered_on_top(table, token) == said
    assert "Second Wind" not in fragment(table, bob)


def test_an_interrupt_not_offered_before_the_defenders_first_turn_is_said_to_its_seat(table: Any) -> None:
    """C24, C20: Vesh acts first and attacks Kael within reach; Kael's first turn has not come, so no Interrupt
    window opens: Alice's card of the attack (Kael's player) and the GM's say why, as ``omen explain`` does (the page
    said nothing: a tester's player asked why she was not offered one); Bob's (Vesh's player) says nothing."""
    table.create(dice="manual")
    alice, bob = _seat(table, "Alice", "kael"), _seat(table, "Bob", "vesh")
    for command in ({"command": "roll_initiative", "dice": [1, 6]},
                    {"command": "engage", "who": "vesh", "others": ["kael"]},
                    {"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                     "dice": [2, 1, 6]}):
        assert table.command(command).status_code == 201, command
    said = ("Not offered: Interrupt to Kael Arden: Kael Arden's first turn has not come yet: its Bonus Actions are "
            "for defence only until then (C20), and an Interrupt is an attack.")
    assert _not_offered_on_top(table, alice) == _not_offered_on_top(table, table.gm) == said
    assert _not_offered_on_top(table, bob) is None


def test_a_decisions_costs_per_answer_are_said_in_brackets(table: Any) -> None:
    """C38, C41: Riposte's decision costs a Bonus Action to use and nothing to pass: the GM's decision box says
    "decides (use: 1 Bonus Action, pass: free)", not "it costs use: 1 Bonus Action, pass: free" (found by a
    tester)."""
    _riposte_open(table, "kael", hidden=False)
    text = fragment(table, table.gm)
    who = text[text.index('<p class="who">'):]
    who = re.sub(r"<[^>]+>", "", who[:who.index("</p>")])
    assert "decides (use: 1 Bonus Action, pass: free)." in who, who


def test_a_block_names_the_shield_it_is_made_with(table: Any) -> None:
    """C9: Vesh's knife attack on Kael (8 + 6 + 2 against a base defense of 1 + 1 + 2): Kael's Block choice names
    his shield by its sheet's name, "Block with Warden's kite shield", not "the shield"."""
    table.create()
    table.command({"command": "roll_initiative", "dice": [1, 8]})
    table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                   "dice": [8, 6, 1]})
    text = fragment(table, table.gm)
    assert "Block with Warden&#39;s kite shield" in text and "Block with the shield" not in text


def test_every_command_form_carries_the_head_it_was_rendered_at(table: Any) -> None:
    """Each command form (the turn's, the decision's answers, the end of the turn, the GM's tools) carries the
    head's seq it was rendered at (data-head), which the page sends as expected_version (a stale one: 409)."""
    table.create()
    table.command({"command": "roll_initiative", "dice": [6, 1]})
    table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                   "dice": [8, 6, 1]})
    text = fragment(table, table.gm)
    head = _attr(text, "head")
    forms = re.findall(r'<form class="command[^"]*"[^>]*>', text)
    assert len(forms) > 5 and 'class="command answer"' in text
    assert all(f'data-head="{head}"' in form for form in forms), [f for f in forms if "data-head" not in f][:2]


def test_a_conditions_reason_and_until_when_are_on_every_seeing_seats_card(table: Any) -> None:
    """The reason the GM gives a condition (the form: "the table sees it") is on the card of every seat that sees
    the combatant, and so is until when it lasts (C40): "Kael Arden is Prone until the end of Vesh the
    Cinder-Hand's next turn: slipped in the river mud"; a cancelled action's reason is labelled the GM's."""
    table.create()
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    answer = table.command({"command": "apply_condition", "who": "kael", "condition": "Prone",
                            "until": "end_of_next_turn", "of": "vesh", "reason": "slipped in the river mud"})
    assert answer.status_code == 201, answer.text
    said = ("Kael Arden is Prone until the end of Vesh the Cinder-Hand&#39;s next turn: slipped in the river mud")
    for token in (table.gm, alice):
        text = fragment(table, token)
        top = text[text.index('id="top-card"'):text.index("</article>")]
        assert f"<li>{said}</li>" in top, top
    assert "reason (the table sees it)" in fragment(table, table.gm)


def test_the_roll_box_names_the_combatant_and_tells_its_giver_you(table: Any) -> None:
    """C29, physical dice: Alice stages Kael's attack without its faces; her roll box says "Roll your dice: Attack
    by Kael Arden on Vesh the Cinder-Hand" (names, not ids; the target too: a new GM's player could not tell whom
    she attacked, a tester) and "You gave the command"; the GM's says "Alice gave Attack by Kael Arden on Vesh the
    Cinder-Hand"."""
    table.create(dice="manual")
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    staged = table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh",
                            "weapon": "longsword"}, token=alice, stage=True)
    assert staged.status_code == 202, staged.text
    mine = fragment(table, alice)
    assert '<h2 id="roll-h" tabindex="-1">Roll your dice: Attack by Kael Arden on Vesh the Cinder-Hand</h2>' in mine
    assert "<p>You gave the command; the table waits for your dice (C29 order):</p>" in mine
    assert "<p>Alice gave Attack by Kael Arden on Vesh the Cinder-Hand; Alice rolls next" in fragment(table, table.gm)
    assert " by kael" not in mine


def test_a_staged_strike_is_headed_by_its_window_and_answer(table: Any) -> None:
    """C24, physical dice: Alice stages Kael's Interrupt strike on Skarn's attack without its faces; her roll box is
    headed by the window and her answer, "Interrupt: Strike with Longsword by Kael Arden" (it said "React by Kael
    Arden", the command's name, where every other screen says Interrupt: a new GM, a tester)."""
    alice = skarn_attacks_kael(table, "manual")
    staged = table.command({"command": "react", "who": "kael", "weapon": "longsword"}, token=alice, stage=True)
    assert staged.status_code == 202, staged.text
    heading = _said(fragment(table, alice), '<h2 id="roll-h"', "</h2>")
    assert heading == "Roll your dice: Interrupt: Strike with Longsword by Kael Arden", heading


def test_the_gms_own_roll_box_tells_the_gm_you(table: Any) -> None:
    """C29, physical dice: the GM stages Vesh's attack on Kael without faces: the GM's own roll box says "You gave
    Attack for Vesh the Cinder-Hand", not "the GM gave ..." as of someone else (found by a tester), and its heading
    what the dice are for, Kael's base defense among them (a staged command's heading named the command alone: a
    tester)."""
    table.create(dice="manual")
    assert table.command({"command": "roll_initiative", "dice": [1, 6]}).status_code == 201
    staged = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife"},
                           stage=True)
    assert staged.status_code == 202, staged.text
    gm = fragment(table, table.gm)
    assert ("<p>You gave Attack for Vesh the Cinder-Hand on Kael Arden; the table waits for your dice (C29 order):</p>"
            in gm), gm
    assert _said(gm, '<h2 id="roll-h"', "</h2>") == (
        "Roll your dice: Vesh the Cinder-Hand's hit, Kael Arden's base defense")
    assert "the GM gave" not in gm


def test_a_miss_against_an_active_defense_names_it_to_the_attackers_seat(table: Any) -> None:
    """The attacker's seat reads a miss against a Dodge as "against defense 13 (with Vesh the Cinder-Hand's Dodge)"
    (the die is Vesh's to see); the GM's card has the dodge die among the defense's terms."""
    table.create(dice="manual")
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    assert table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                          "dice": [2, 1, 1]}).status_code == 201
    answer = table.command({"command": "answer_active_defense", "defender": "vesh", "defense": "dodge", "dice": [8]})
    assert answer.status_code == 201, answer.text
    assert ("against defense 13 (with Vesh the Cinder-Hand&#39;s Dodge): MISS</li>"
            in fragment(table, alice).split('id="top-card"')[1])
    gm_top = fragment(table, table.gm).split('id="top-card"')[1]
    assert "against defense 13 (1 RES die + 1 RES bonus + 1 armor + 8 dodge die + 2 AGI bonus): MISS" in gm_top
    assert "(with " not in gm_top


def test_a_conditions_effect_opens_on_a_tap_and_dying_says_what_c36_does(table: Any) -> None:
    """A condition's effect is in a details box its name opens (a tap, Enter: a tooltip alone is out of touch's
    reach), and Dying's says what the engine does (C36), not "as the rules say": Brin crits Vesh to 0 HP (Dying
    follows HP, C36: the GM does not apply it)."""
    table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
    for command in ({"command": "roll_initiative", "dice": [1, 6, 1, 1]},
                    {"command": "declare_attack", "attacker": "brin", "target": "vesh", "weapon": "shortblade",
                     "dice": [8, 8, 1]},
                    {"command": "answer_active_defense", "defender": "vesh"}):
        assert table.command(command).status_code == 201, command
    text = fragment(table, table.gm)
    assert ('<details class="cond-box" id="cond-vesh-Dying"><summary><span class="cond" data-condition="Dying"'
            in text)
    assert ('<p class="cond-said">Dying: at 0 HP (C36): treated as Incapacitated (C10): takes no turn (it is '
            "skipped), no action, reaction or ability use; rolls no base defense die; can still be attacked; cleared "
            "by healing above 0 HP</p>") in text


def test_a_verdicts_colour_is_the_viewers(table: Any) -> None:
    """Kael's attack missing Vesh (a Dodge) is bad news on Alice's page (Kael is hers: tone-bad, red), and neutral
    on the GM's (no tone); before, every MISS was green."""
    table.create(dice="manual")
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    assert table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                          "dice": [2, 1, 1]}).status_code == 201
    assert table.command({"command": "answer_active_defense", "defender": "vesh", "defense": "dodge",
                          "dice": [8]}).status_code == 201
    assert '<span class="verdict v-miss tone-bad">MISS</span>' in fragment(table, alice)
    assert '<span class="verdict v-miss">MISS</span>' in fragment(table, table.gm)


@pytest.mark.parametrize(("dice", "uniform"), [
    ("manual", "Rolls: its dice when they are rolled, each seat asked for its own in the roll box: a window may come "
               "first (an Interrupt, C24, or an ability's decision, C38)"),
    ("seeded", "Rolls: the server rolls its dice from the fight's seed (the GM may make them physical: then the "
               "roll box asks for them as they come)")])
def test_an_attack_an_interrupt_window_comes_before_says_its_dice_come_later(table: Any, dice: str,
                                                                             uniform: str) -> None:
    """C24, C29: Brin beside Skarn attacks him: before Skarn's first turn no Interrupt can come (C20), after it the
    window comes first and the attack rolls no die when declared. Bob's form says the same in both, that a window
    may come first and when the dice come (a player typing physical dice found no dice fields and no word of why: a
    tester; that the form listed the hit dice in one and none in the other told Bob whether Skarn could Interrupt,
    which turns on Skarn's Bonus Actions: another tester); the GM's says which it is. In a seeded fight it says the
    server rolls them from the seed, and how the GM makes them physical instead (it said both fights' ways, and a
    player who chose to type its dice was not told plainly that its attack's would not be asked for: a tester)."""
    table.create(names=("kael", "brin", "vesh", "skarn"), dice=dice)
    bob = table.client.post("/fights/duel/seats", headers=table.auth(),
                            json={"kind": "player", "name": "Bob", "combatants": ["brin"]}).json()["token"]

    def rolls(token: str) -> list[str]:
        text = html.unescape(fragment(table, token))
        form = text[text.index('data-command="declare_attack"'):]
        return re.findall(r'<p class="rolls-needed[^"]*">([^<]*)</p>', form[:form.index("</form>")])

    for command in ({"command": "roll_initiative", "dice": [1, 6, 1, 3]},  # Brin first
                    {"command": "engage", "who": "brin", "others": ["skarn"]}):
        assert table.command(command).status_code == 201
    before = rolls(bob)
    assert before and set(before) == {uniform}, before
    assert not any("nothing yet" in said for said in rolls(table.gm))
    while True:  # round 2, Brin's turn again: Skarn has had his, and may Interrupt
        now = table.client.get("/fights/duel/options", headers=table.auth()).json()["options"]
        if now["round"] == 2 and now["turn"] == "brin":
            break
        assert table.command({"command": "end_turn", "who": now["turn"]}).status_code == 201
    assert rolls(bob) == before
    assert ("Rolls: nothing yet: a window comes first (an Interrupt, C24, or an ability's decision, C38), and the "
            "attack's dice are rolled by the command that closes it") in " ".join(rolls(table.gm))


def _seat(table: Table, name: str, *plays: str) -> str:
    """A player's seat playing ``plays``; its token."""
    answer = table.client.post("/fights/duel/seats", headers=table.auth(),
                               json={"kind": "player", "name": name, "combatants": list(plays)})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["token"])


def _said(text: str, start: str, end: str = "</section>") -> str:
    """The words of a part of a fragment (from ``start`` to the next ``end``), its tags dropped, spaces squeezed."""
    part = text[text.index(start):text.index(end, text.index(start))]
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", part))).strip()


class TestTheDecisionsNumbers:
    def test_an_active_defense_says_its_exact_odds_and_that_the_hit_is_a_crit(self, table: Any) -> None:
        """Kael's attack (8, 6 on the dice) is 11 against Prone Vesh's 3 and a crit (C7, decided before the window):
        the decision says the crit is cancelled by a turned hit, and each answer its exact odds as options() gives
        them (Parry: 1/2, the crit removed 1/2; declining never; found by a tester: the odds were never shown)."""
        table.create(dice="manual")
        for command in ({"command": "roll_initiative", "dice": [4, 1]},
                        {"command": "apply_condition", "who": "vesh", "condition": "Prone"},
                        {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                         "dice": [1, 2, 1]}):
            assert table.command(command).status_code == 201
        offers = table.client.get("/fights/duel/options", headers=table.auth()).json()["options"]["offers"]
        odds = {c["args"].get("weapon", c["args"].get("defense", "decline")): c["odds"] for o in offers
                if o["command"] == "answer_active_defense" for c in o["choices"]}
        assert odds["knife"] == {"needs": 5, "miss": "1/2", "crit": True, "removes_crit": "1/2"}
        assert odds["decline"] == {"needs": 8, "miss": "0", "crit": True, "removes_crit": "0"}
        said = _said(fragment(table, table.gm), 'id="decision"')
        assert ("its crit check already succeeds (C7: the FCS portion beats the RES portion, both rolled): if it "
                "still hits it is a crit; an Active Defense that turns the hit cancels the crit too") in said
        assert ("turns the hit on a 5 or more on the d8 turns the hit into a miss on 1/2 of its rolls; removes the "
                "crit on 1/2") in said
        assert "defense stays 3: it hits the crit stays" in said

    def test_a_prone_chip_says_what_the_engine_does_not_that_the_gm_applies_it(self, table: Any) -> None:
        """C27, C9: Prone's chip says the engine's +4 in melee, −2 at range and no Dodge; Unseen's its extra FCS die;
        Paralysed's C10 (the engine applies them: none says its other effects are the GM's); Exhausted's −1 per stack,
        and that its numbers are placeholders, any other effect the rules give it the GM's (found by testers: it read
        "anything more the rules give it: applied by the GM", unclear for a table's own condition)."""
        table.create(names=("kael", "brin", "vesh"))
        for who, condition in (("vesh", "Prone"), ("kael", "Unseen"), ("brin", "Paralysed"), ("vesh", "Exhausted")):
            assert table.command({"command": "apply_condition", "who": who,
                                  "condition": condition}).status_code == 201
        text = html.unescape(fragment(table, table.gm))
        said = dict(re.findall(r'<p class="cond-said">(\w+): ([^<]*)(?:<span class="short-only">[^<]*</span>)?</p>',
                               text))
        assert said["Prone"] == ("C27: attacked at +4 to hit in melee, at \u22122 at range; cannot Dodge (C9); cleared "
                                 "by standing up (a Movement Action)")
        assert said["Unseen"].startswith("C27: its attack rolls an extra FCS die, and then it is no longer Unseen")
        assert said["Paralysed"].startswith("C10: rolls no base defense die (base defense = Defense Rating), no "
                                            "Active Defense")
        assert said["Exhausted"].endswith("; its numbers are placeholders (C28): any other effect the rules give it "
                                          "is the GM's to apply")
        assert [c for c, words in said.items() if "the GM's to apply" in words] == ["Exhausted"]

    def test_an_interrupts_cost_says_the_bonus_actions_left_now_and_after(self, table: Any) -> None:
        """C24, C20: Skarn's Interrupt costs 2 Bonus Actions of his 2: the row says so, and that none is left after
        it for an Active Defense until his next turn (it said "(2 left)"; found by a tester)."""
        table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
        for command in ({"command": "roll_initiative", "dice": [1, 3, 1, 6]},
                        {"command": "engage", "who": "brin", "others": ["skarn"]},
                        {"command": "end_turn", "who": "skarn"},
                        {"command": "declare_attack", "attacker": "brin", "target": "skarn", "weapon": "shortblade"}):
            assert table.command(command).status_code == 201
        said = _said(fragment(table, table.gm), 'id="decision"')
        assert said.count("costs 2 Bonus Actions (2 of 2 Bonus Actions left now; none left after it for an Active "
                          "Defense until its next turn (C20))") == 2  # with the maul, and unarmed


def skarn_attacks_kael(table: Any, dice: str = "seeded") -> str:
    """A fight of Kael (Alice's) and Skarn: Kael has had his turn beside Skarn, who attacks him with the maul, so
    Alice is offered an Interrupt (C24). Alice's token."""
    table.create(names=("kael", "skarn"), dice=dice)
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative", "dice": [6, 1]},
                    {"command": "engage", "who": "kael", "others": ["skarn"]},
                    {"command": "end_turn", "who": "kael"},
                    {"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "maul"}):
        assert table.command(command).status_code == 201, command
    return str(alice)


def test_an_abilitys_answer_is_labelled_with_its_name_and_says_its_summary_beside(table: Any) -> None:
    """C38: Kael's unarmed 5 misses Vesh's 8 and Riposte's decision opens for Vesh, Bob's: the answer that uses it
    reads "Use Riposte" (it read "Use: When a melee attack on the owner misses, ...", the whole summary), its
    summary beside it and as its button's title, describing the button; passing still reads "Pass: let it be"; on
    the GM's page the same, after Vesh's name."""
    bob = _riposte_open(table, "kael", hidden=False)
    summary = "When a melee attack on the owner misses, spend a Bonus Action: the attacker takes 1d6 slashing."
    for token, who in ((bob, ""), (table.gm, "Vesh the Cinder-Hand: ")):
        text = fragment(table, token)
        buttons = [(html.unescape(t or ""), d, html.unescape(words)) for t, d, words in re.findall(
            r'<button type="submit" class="big"(?: title="([^"]*)")? aria-describedby="([^"]*)" '
            r'aria-keyshortcuts="\d"><kbd aria-hidden="true">\d</kbd> '
            r'([^<]*)</button>', text)]
        assert [(t, words) for t, _d, words in buttons] == [(summary, f"{who}Use Riposte"),
                                                            ("", f"{who}Pass: let it be")]
        said = re.search(r'<span class="said" id="([^"]*)">([^<]*)</span>', text)
        assert said is not None and html.unescape(said[2]) == summary and said[1] in buttons[0][1].split()
        assert text.count('class="said"') == 1


def test_a_pass_staged_for_the_dice_of_the_action_it_lets_go_on_says_what_they_are_for(table: Any) -> None:
    """C24, C29: in a fight with typed dice, Skarn (the GM's) has had his turn beside Kael; Kael's attack on him opens
    Skarn's Interrupt window; the GM lets it pass, staged for Alice's dice: her roll box asks for "Kael Arden's hit"
    (the attack goes on), not "Pass by Skarn Gutterjaw", and her decision box says Skarn's answer is free, not the
    Interrupt's 2 Bonus Actions (found by a GM tester); the GM's boxes say the same, and whose dice are next."""
    table.create(names=("kael", "skarn"), dice="manual")
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative", "dice": [6, 1]},
                    {"command": "engage", "who": "kael", "others": ["skarn"]},
                    {"command": "end_turn", "who": "kael"}, {"command": "end_turn", "who": "skarn"}):
        assert table.command(command).status_code == 201, command
    opened = table.command({"command": "declare_attack", "attacker": "kael", "target": "skarn", "weapon": "longsword"},
                           token=alice)
    assert opened.json()["options"]["waiting"]["kind"] == "interrupt", opened.text
    staged = table.command({"command": "pass_reaction", "who": "skarn"}, stage=True)
    assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
    mine = html.unescape(fragment(table, alice))
    assert _said(mine, '<h2 id="roll-h"', "</h2>") == "Roll your dice: Kael Arden's hit"
    assert _said(mine, '<form class="give-dice"', "</p>").startswith(
        "the GM gave Let it pass for Skarn Gutterjaw (free): the action it answers goes on; the table waits for your "
        "dice")  # the pass named as the GM's page names it (it read "Pass" to her, found by a GM tester)
    assert _said(mine, '<p class="who"', "</p>").startswith("Skarn Gutterjaw answered: Let it pass, free.")
    gms = fragment(table, table.gm)
    assert _said(gms, '<section class="rollbox', "</p>") == (
        "Waiting for Alice's dice You gave Let it pass for Skarn Gutterjaw (free): the action it answers goes on; "
        "Alice rolls next: Kael Arden's hit.")
    assert _said(gms, '<p class="who"', "</p>").startswith("Skarn Gutterjaw answered: Let it pass, free.")


def test_a_reactions_strike_takes_the_gms_claims_folded_and_no_players(table: Any) -> None:
    """C26, C27 (they apply to any attack, a reaction's too): on the GM's page each of Kael's Interrupt strikes
    takes the high ground and an Encircled claim, folded under "Also:" so the strike's button stays first; Alice's
    page (Kael's player) has no such input: the claims are the GM's (GM_ARGUMENTS). The API took them; the page had
    no input for them."""
    alice = skarn_attacks_kael(table, dice="manual")
    gms = fragment(table, table.gm)
    for key, weapon in (("o-react-kael-a0", "longsword"), ("o-react-kael-a1", "unarmed")):
        form = gms[gms.index(f'<form class="command answer" id="{key}"'):gms.index("</form>", gms.index(f'id="{key}"'))]
        assert weapon in html.unescape(form).lower(), form
        folded = form[form.index(f'<details class="more-inputs" id="{key}-more">'):form.index("</details>")]
        assert "<summary>Also: the high ground, Encircled (C26)</summary>" in folded
        assert f'id="{key}-situational" data-path="situational.high_ground" data-kind="checkbox"' in folded
        assert f'id="{key}-encircled-attackers" data-path="situational.encircled.attackers"' in folded
        assert form.index("</button>") < form.index("<details")  # the strike's button first
    mine = fragment(table, alice)
    assert 'data-command="react"' in mine and "data-path" not in mine[mine.index('id="decision"'):mine.index(
        "</section>", mine.index('id="decision"'))]


def test_a_player_is_asked_for_its_own_dice_before_another_seats_only(table: Any) -> None:
    """C24, C29: Kael's Interrupt against Skarn's attack rolls Kael's hit, then Skarn's base defense (the GM's), and
    then perhaps Kael's base defense (if Skarn's attack goes on): Alice's row asks for none of them up front
    (whether a strike rolls at once turns on what her seat is not shown: omen_core.seats.DICE_UNSAID; the row once
    asked for her base defense "if rolled" too, and a face typed there went to the GM's die: a tester); sent
    without faces, the staged command asks her for Kael's hit alone, then the GM for Skarn's die."""
    alice = skarn_attacks_kael(table, dice="manual")
    text = fragment(table, alice)
    row = text[text.index('data-command="react"'):text.index("</form>", text.index('data-command="react"'))]
    assert 'class="face"' not in row
    staged = table.command({"command": "react", "who": "kael", "weapon": "longsword", "dice": []}, token=alice,
                           stage=True)
    assert staged.status_code == 202 and staged.json()["yours"] is True, staged.text
    assert [(r["roller"], r["purpose"]) for r in staged.json()["rolls"]] == [("kael", "hit")]
    given = table.client.post("/fights/duel/staged", headers=table.auth(alice), json={"id": staged.json()["id"],
                                                                                      "dice": [3, 4]})
    assert given.status_code == 202 and given.json()["awaiting"] == "the GM", given.text


class TestTargetsAndForms:
    def _vesh_down(self, table: Table) -> str:
        """Brin (Bob's) crits Vesh to 0 HP (Dying, C36) and ends the turn: Kael's turn; Bob's token."""
        table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
        bob = _seat(table, "Bob", "brin")
        for command in ({"command": "roll_initiative", "dice": [1, 6, 1, 1]},
                        {"command": "declare_attack", "attacker": "brin", "target": "vesh", "weapon": "shortblade",
                         "dice": [8, 8, 1]},
                        {"command": "answer_active_defense", "defender": "vesh"},
                        {"command": "end_turn", "who": "brin"}):
            assert table.command(command).status_code == 201, command
        return bob

    def test_an_attacks_default_target_is_a_foe_able_to_fight(self, table: Any) -> None:
        """Vesh is at 0 HP, Dying: Kael's attack offers Skarn first (the default), Vesh after him, the ally Brin
        last (it defaulted to the Dying Vesh; found by a tester)."""
        self._vesh_down(table)
        text = fragment(table, table.gm)
        form = text[text.index('<form class="command" id="o-declare_attack-kael"'):]
        options = re.findall(r'<option value="\d+" data-args="[^"]*">([^<]*)</option>', form[:form.index("</select>")])
        targets = [html.unescape(o).split(" with ")[0].split(",")[0] for o in options]
        assert targets[0] == "Skarn Gutterjaw"
        assert targets.index("Skarn Gutterjaw") < targets.index("Vesh the Cinder-Hand") < targets.index(
            "Brin Hollowmere")

    def test_a_downed_foe_is_said_down_once(self, table: Any) -> None:
        """On Bob's page (others' HP banded) the Dying Vesh's chip says "down" once, in its HP band, not again in a
        badge (found by a tester on a phone); the GM's (HP in numbers) says it in the badge."""
        bob = self._vesh_down(table)
        for token, band in ((bob, True), (table.gm, False)):
            text = fragment(table, token)
            chip = text[text.index('data-id="vesh"'):text.index("</li>", text.index('data-id="vesh"'))]
            words = re.sub(r"<[^>]+>", " ", chip)
            assert re.findall(r"\bdown\b", words) == ["down"], (band, words)
            assert ('data-band="down"' in chip) is band and ('<span class="badge bad">down</span>' in chip) is not band

    def test_a_condition_is_applied_from_two_selects_chosen_on_purpose(self, table: Any) -> None:
        """The GM's "Apply a condition" is two selects (on whom, which condition), each required, each with an
        empty first choice, none chosen (a 28-entry list defaulted to "Dying on Brin"; found by a tester); the
        hidden list they pick from holds every legal pair, keyed "who|condition": Dying is none of them, since it
        follows HP (C36)."""
        table.create(names=("kael", "brin", "vesh", "skarn"))
        text = fragment(table, table.gm)
        form = text[text.index('data-command="apply_condition"'):]
        form = form[:form.index("</form>")]
        selects = re.findall(r'<select id="[^"]*" class="pair" data-pair="(\d)" required><option value="">'
                             r'(choose a \w+)</option>(.*?)</select>', form)
        assert [(n, words) for n, words, _ in selects] == [("0", "choose a combatant"), ("1", "choose a condition")]
        assert re.findall(r'<option value="(\w+)">', selects[0][2]) == ["kael", "brin", "vesh", "skarn"]
        assert re.findall(r'<option value="(\w+)">', selects[1][2]) == [
            "Exhausted", "Fatigued", "Incapacitated", "Paralysed", "Prone", "Unseen"]
        pairs = re.findall(r'data-pair="(\w+\|\w+)"', form)
        assert len(pairs) == 24 and "vesh|Prone" in pairs
        assert ' selected' not in form.replace('<option value="" data-args="" selected></option>', "")


    def test_a_condition_may_be_given_who_applied_it_and_until_when_it_lasts(self, table: Any) -> None:
        """C40: the GM's "Apply a condition" also asks who applied it, until when it lasts and whose next turn
        counts, as the options' free arguments say (``by``, ``until``, ``of``), each a select left at its default
        (the argument left out): combatants by name, the two moments in words; a command given them as the form
        sends them puts "until the end of Vesh the Cinder-Hand's next turn" on Kael's chip."""
        table.create(names=("kael", "brin", "vesh", "skarn"))
        text = fragment(table, table.gm)
        form = text[text.index('data-command="apply_condition"'):]
        form = html.unescape(form[:form.index("</form>")])
        selects = {name: (label, re.findall(r'<option value="([^"]*)">([^<]*)</option>', body)) for label, name, body
                   in re.findall(r'<label for="o-apply_condition-gm-\w+">([^<]*)</label> <select id="o-apply_condition'
                                 r'-gm-(\w+)" data-path="\2" data-kind="select">(.*?)</select>', form)}
        people = [("kael", "Kael Arden"), ("brin", "Brin Hollowmere"), ("vesh", "Vesh the Cinder-Hand"),
                  ("skarn", "Skarn Gutterjaw")]
        assert selects == {
            "by": ("applied by (a save that ends it is opposed by them, C40)", [("", "no one"), *people]),
            "until": ("lasts until (C40)", [("", "until cleared (or as the ruleset says)"),
                                            ("start_of_next_turn", "the start of a next turn"),
                                            ("end_of_next_turn", "the end of a next turn")]),
            "of": ("whose next turn (default: who applied it)", [("", "who applied it"), *people])}
        assert " selected" not in form.replace('<option value="" data-args="" selected></option>', "")
        answer = table.command({"command": "apply_condition", "who": "kael", "condition": "Prone", "by": "vesh",
                                "until": "end_of_next_turn"})
        assert answer.status_code == 201, answer.text
        assert "until the end of Vesh the Cinder-Hand&#39;s next turn" in fragment(table, table.gm)


class TestPhysicalDice:
    def test_the_gms_initiative_form_asks_for_its_own_dice_and_says_once_sent(self, table: Any) -> None:
        """A manual fight, Alice playing Kael (rolled first, C29): the GM's Roll initiative form asks for no die
        of Kael's (each form asks for the seat's own dice only: docs/server.md), and once it is staged for Alice's
        die it says it was sent and waits for Alice, instead of offering the form again (found by a tester)."""
        table.create(dice="manual")
        alice = _seat(table, "Alice", "kael")
        text = fragment(table, table.gm)
        form = text[text.index('data-command="roll_initiative"'):text.index("</form>",
                                                                            text.index('data-command="roll_initiative"'))]
        assert 'class="face"' not in form
        staged = table.command({"command": "roll_initiative", "dice": []}, stage=True)
        assert staged.status_code == 202, staged.text
        text = fragment(table, table.gm)
        assert '<form class="command" id="o-roll_initiative-gm"' not in text
        assert _said(text, '<p class="sent"', "</p>") == (
            "Roll initiative: sent. It waits for Alice's dice (the roll box above).")
        assert 'data-staged="theirs" data-awaiting="Alice"' in text
        assert 'data-staged="yours" data-awaiting=""' in fragment(table, alice)

    def test_the_gms_own_dice_come_first_in_its_form(self, table: Any) -> None:
        """Bob plays Brin, rolled second (C29): the GM's Roll initiative form asks for Kael's die alone, the first
        of the dice, the rest being Bob's and then the GM's own again in its roll box."""
        table.create(names=("kael", "brin", "vesh"), dice="manual")
        _seat(table, "Bob", "brin")
        text = html.unescape(fragment(table, table.gm))
        form = text[text.index('data-command="roll_initiative"'):text.index("</form>",
                                                                            text.index('data-command="roll_initiative"'))]
        assert re.findall(r'data-roller="(\w+)"', form) == ["kael"]

    def test_an_attack_a_window_comes_before_says_so_when_the_faces_are_typed(self, table: Any) -> None:
        """C24: Brin's attack on Skarn opens an Interrupt window first and rolls no die now: its line is marked as
        rolling none (the page shows it when the faces are typed, where the other "Rolls:" lines hide behind the
        fields; found by a tester: typing the faces, nothing was said), to the GM and, as for every attack of a
        player's in the rounds, to Bob."""
        table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
        bob = _seat(table, "Bob", "brin")
        for command in ({"command": "roll_initiative", "dice": [1, 3, 1, 6]},
                        {"command": "engage", "who": "brin", "others": ["skarn"]},
                        {"command": "end_turn", "who": "skarn"}):
            assert table.command(command).status_code == 201
        assert '<p class="rolls-needed no-dice">Rolls: nothing yet: a window comes first' in html.unescape(
            fragment(table, table.gm))
        assert '<p class="rolls-needed no-dice">Rolls: its dice when they are rolled' in html.unescape(
            fragment(table, bob))
        css = table.client.get("/static/table.css").text
        assert "body[data-dice=typed] .rolls-needed{display:none}" in css
        assert "body[data-dice=typed] .rolls-needed.no-dice{display:block}" in css
        # on a phone an answer row leaves its "if rolled" dice to the roll box (they pushed Decline off the first
        # screen: a tester)
        assert "@media (max-width:30rem){.answer-row .faces.compact label.die:has(input[data-maybe]){display:none}}" \
            in css


    def _interrupt(self, table: Table) -> str:
        """A manual fight: Kael (Alice's) has had his turn beside Skarn, who attacks him with the maul; Alice is
        offered an Interrupt (C24). Alice's token."""
        return skarn_attacks_kael(table, dice="manual")

    def test_an_answer_asks_for_no_die_past_another_seats_first(self, table: Any) -> None:
        """C29, C24: in Alice's Interrupt decision the Strike rows ask for Kael's two hit dice alone (Skarn's
        defense die, the GM's, comes next) and "Let it pass" for none (Skarn's hit dice, the GM's, come first), as
        the server's own check of her faces counts them: a face typed there is refused as surplus, none is staged
        (the pass row offered Kael's defense die, refused when typed; found by a tester)."""
        alice = self._interrupt(table)
        text = fragment(table, alice)
        rows = {key: re.findall(r'data-roller="(\w+)"', text[text.index(f'id="{key}"'):text.index(
            "</form>", text.index(f'id="{key}"'))]) for key in re.findall(r'<form class="command answer" id="([^"]+)"',
                                                                            text)}
        assert rows == {"o-react-kael-a0": [], "o-react-kael-a1": [], "o-pass_reaction-kael-a0": []}
        typed = table.command({"command": "pass_reaction", "who": "kael", "dice": [2]}, token=alice, stage=True)
        assert typed.status_code == 422 and typed.json()["type"].endswith("/surplus-faces"), typed.text
        blank = table.command({"command": "pass_reaction", "who": "kael", "dice": []}, token=alice, stage=True)
        assert blank.status_code == 202 and blank.json()["awaiting"] == "the GM", blank.text

    def test_an_answer_staged_for_dice_is_said_given_not_offered_again(self, table: Any) -> None:
        """docs/server.md (the roll box): Alice's Strike, her two hit dice in, waits for the GM's dice: her decision
        box says her answer was sent and waits for the GM, offering no answer again; the GM's says Kael answered and
        that the dice are the GM's (both still offered the three answers and "Kael Arden decides"; found by a
        tester)."""
        alice = self._interrupt(table)
        staged = table.command({"command": "react", "who": "kael", "weapon": "longsword", "dice": [3, 4]},
                               token=alice, stage=True)
        assert staged.status_code == 202 and staged.json()["awaiting"] == "the GM", staged.text
        mine, gms = fragment(table, alice), fragment(table, table.gm)
        for text in (mine, gms):
            assert 'class="command answer"' not in text
        # the rule's id in the GM's heading; Alice's in words, its rule a muted reference after the costs (C24)
        assert _said(gms, '<h2 id="decision-h"', "</h2>") == "Answered, waiting for dice: Interrupt (C24)"
        assert _said(mine, '<h2 id="decision-h"', "</h2>") == "Answered, waiting for dice: Interrupt"
        assert _said(mine, '<p class="who"', "</p>").endswith("· C24")
        assert _said(mine, '<p class="sent" id="decision-sent"', "</p>") == (
            "Your answer for Kael Arden: Strike with Longsword, sent. It waits for the GM's dice (the roll box "
            "above).")
        assert _said(gms, '<p class="sent" id="decision-sent"', "</p>") == (
            "Alice's answer for Kael Arden: Strike with Longsword, sent. It waits for your dice: the roll box above.")
        assert _said(gms, '<p class="who"', "</p>").startswith(
            "Kael Arden (Alice) answered: Strike with Longsword, costing 2 Bonus Actions.")


    def test_an_answer_another_seat_staged_is_said_in_words_and_its_cost_not_guessed(self, table: Any) -> None:
        """docs/server.md (the roll box): Alice's Strike waits for the GM's dice; a spectator, shown her command's
        name alone, reads that Kael answered with "a strike", no cost claimed (it read "React", the command's name;
        and an Active Defense answer shown so read "free", whatever it was; found by a tester)."""
        alice = self._interrupt(table)
        watcher = table.client.post("/fights/duel/seats", headers=table.auth(),
                                    json={"kind": "spectator", "name": "Wen"}).json()["token"]
        staged = table.command({"command": "react", "who": "kael", "weapon": "longsword", "dice": [3, 4]},
                               token=alice, stage=True)
        assert staged.status_code == 202, staged.text
        text = fragment(table, watcher)
        assert _said(text, '<p class="who"', "</p>").startswith("Kael Arden answered: a strike. Then")
        assert "React" not in _said(text, '<section class="decision', "</section>")

    def test_a_staged_answer_is_named_by_all_its_arguments(self) -> None:
        """The staged answer is the choice whose every argument it gives, those the choice leaves out too: a Dodge
        is not a Decline (whose only argument, the defender, it also gives), and costs what a Dodge costs (the GM's
        page said "Decline, costing 1 Bonus Action" for a staged Dodge; found by a tester)."""
        from types import SimpleNamespace

        from omen_core.options import Choice
        from omen_server.app import StagedView
        from omen_server.table import _staged_answer, _staged_cost

        args = ({"defender": "vesh"}, {"defender": "vesh", "defense": "dodge"},
                {"defender": "vesh", "defense": "parry", "weapon": "axe"})
        labels = ("Vesh: Decline", "Vesh: Dodge", "Vesh: Parry with Axe")
        offer = SimpleNamespace(command="answer_active_defense", choices=tuple(Choice(args=a) for a in args))
        view = SimpleNamespace(choices=tuple(SimpleNamespace(label=label) for label in labels))
        waiting = SimpleNamespace(cost="1 Bonus Action")
        for sent, said, cost in ((args[1], "Vesh: Dodge", "1 Bonus Action"), (args[0], "Vesh: Decline", "free"),
                                 (args[2], "Vesh: Parry with Axe", "1 Bonus Action")):
            staged = StagedView(id="s", command={"command": "answer_active_defense", **sent}, by="the GM",
                                awaiting="Alice")
            answer = _staged_answer(staged, [(view, offer)], {"answer_active_defense"})  # type: ignore[list-item]
            assert (answer, _staged_cost(staged, answer, waiting, SimpleNamespace(pending=None))) == (said, cost)


def test_the_title_names_the_moment_in_words_on_a_hidden_combatants_turn(table: Any) -> None:
    """The page's title (data-status) before initiative says the fight is being set up, and on the turn of Skarn,
    hidden from Alice, "Round 1: someone's turn" as the fight bar does (both read "Setup", "Rounds": a phase's name;
    found by a tester); the GM's names Skarn."""
    table.create(names=("kael", "vesh", "skarn"), dice="manual", hidden=["skarn"])
    alice = _seat(table, "Alice", "kael")

    def status(token: str) -> str:
        return html.unescape(re.findall(r'data-status="([^"]*)"', fragment(table, token))[0])

    assert status(alice) == "Setting up the fight"
    assert table.command({"command": "roll_initiative", "dice": [1, 1, 6]}).status_code == 201
    assert re.findall(r'data-turn="([^"]*)"', fragment(table, table.gm)) == ["skarn"]
    assert (status(alice), status(table.gm)) == ("Round 1: someone's turn", "Round 1: Skarn Gutterjaw's turn")

class TestInitiativeWords:
    def test_a_tie_the_agi_bonus_settles_says_so(self, table: Any) -> None:
        """C19: Kael (2 + 1 AGI) and Vesh (1 + 2 AGI) both total 3: the card says they tied and that Vesh goes first
        on the higher AGI bonus, with both bonuses to the GM (found by a tester: no word was said)."""
        table.create(dice="manual")
        assert table.command({"command": "roll_initiative", "dice": [2, 1]}).status_code == 201
        assert ("Vesh the Cinder-Hand and Kael Arden tied at 3: Vesh the Cinder-Hand goes first, on the higher AGI "
                "bonus (+2 against +1, C19)") in _top_lines(fragment(table, table.gm))

    def test_a_roll_off_says_who_is_tied_with_whom(self, table: Any) -> None:
        """C19: Bob gives Brin's initiative die (6), the GM Vesh's (6): both total 8 with the same AGI bonus, and the
        roll-off asks Bob for Brin's die: his roll box and the GM's say who is tied with whom (found by a tester:
        "Roll your dice" alone)."""
        table.create(names=("brin", "vesh"), dice="manual")
        bob = _seat(table, "Bob", "brin")
        staged = table.command({"command": "roll_initiative", "dice": []}, stage=True)
        assert staged.status_code == 202, staged.text
        for token, faces in ((bob, [6]), (table.gm, [6])):
            given = table.client.post("/fights/duel/staged", headers=table.auth(token),
                                      json={"id": staged.json()["id"], "dice": faces})
            assert given.status_code == 202, given.text
        assert given.json()["awaiting"] == "Bob"
        for token in (bob, table.gm):
            assert _said(fragment(table, token), '<p class="tie" id="rollbox-tie"', "</p>") == (
                "A roll-off: Brin Hollowmere and Vesh the Cinder-Hand are tied for initiative after the AGI bonus; "
                "each rolls AGI again, the higher goes first (C19).")

    def test_a_roll_off_is_said_possible_until_a_tie_is_rolled(self, table: Any) -> None:
        """C19: Brin and Vesh share an AGI bonus (+2): before any die is in, the GM's roll box says a roll-off is
        possible, not that they are tied (found by a GM tester: "are tied" before anyone rolled, and after a roll
        that tied no one); Bob's box says nothing of it (no roll-off die is asked of him); Bob's 5 against the GM's
        5 (both 7): a tie, said as one."""
        table.create(names=("brin", "vesh"), dice="manual")
        bob = _seat(table, "Bob", "brin")
        staged = table.command({"command": "roll_initiative", "dice": []}, stage=True)
        assert staged.status_code == 202, staged.text
        assert _said(fragment(table, table.gm), '<p class="tie" id="rollbox-tie"', "</p>") == (
            "A roll-off is possible: if Brin Hollowmere and Vesh the Cinder-Hand tie for initiative and the AGI bonus "
            "does not part them, each rolls AGI again, the higher goes first (C19).")
        # said plainly, as what may come (in bold it read as a tie to a new GM: a tester)
        assert '<span class="maybe">A roll-off is possible' in fragment(table, table.gm)
        assert 'id="rollbox-tie"' not in fragment(table, bob)
        for token, faces in ((bob, [5]), (table.gm, [5])):
            given = table.client.post("/fights/duel/staged", headers=table.auth(token),
                                      json={"id": staged.json()["id"], "dice": faces})
            assert given.status_code == 202, given.text
        for token in (bob, table.gm):
            assert _said(fragment(table, token), '<p class="tie" id="rollbox-tie"', "</p>") == (
                "A roll-off: Brin Hollowmere and Vesh the Cinder-Hand are tied for initiative after the AGI bonus; "
                "each rolls AGI again, the higher goes first (C19).")

    def test_a_roll_off_names_only_those_the_dice_tied(self, table: Any) -> None:
        """C19: Kael (6 + 1), Brin (5 + 2) and Vesh (5 + 2) all total 7; the AGI bonus puts Kael after the other two,
        who roll off: the GM's roll box names Brin and Vesh alone, not every one who might have tied."""
        table.create(names=("kael", "brin", "vesh"), dice="manual")
        staged = table.command({"command": "roll_initiative", "dice": []}, stage=True)
        given = table.client.post("/fights/duel/staged", headers=table.auth(table.gm),
                                  json={"id": staged.json()["id"], "dice": [6, 5, 5]})
        assert given.status_code == 202, given.text
        assert _said(fragment(table, table.gm), '<p class="tie" id="rollbox-tie"', "</p>") == (
            "A roll-off: Brin Hollowmere and Vesh the Cinder-Hand are tied for initiative after the AGI bonus; "
            "each rolls AGI again, the higher goes first (C19).")


class TestTheEnd:
    def test_the_end_says_how_the_fight_ended_and_the_gms_note_to_the_gm(self, table: Any) -> None:
        """C33: the GM ends the fight, the raiders yielding, with a note: the end card and the fight bar (on the
        first screen, after the seed is revealed too) say it, the note to the GM alone (found by a tester)."""
        table.create()
        alice = _seat(table, "Alice", "kael")
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        assert table.command({"command": "end_fight", "reason": "yielded", "side": "raiders",
                              "note": "Vesh throws down the knife"}).status_code == 201
        assert _top_lines(fragment(table, table.gm))[0] == (
            "The fight is over, wardens won (yielded: raiders). The GM's note: Vesh throws down the knife")
        assert table.command({"command": "reveal_seed"}).status_code == 201
        gm, player = fragment(table, table.gm), fragment(table, alice)
        assert _said(gm, '<strong class="ended"', "</strong>") == (
            "The fight is over: the raiders yielded; the GM's note: Vesh throws down the knife")
        assert _said(player, '<strong class="ended"', "</strong>") == "The fight is over: the raiders yielded"
        assert "throws down" not in player

    def test_the_engines_note_on_an_end_it_made_is_not_called_the_gms(self, table: Any) -> None:
        """C33: Vesh, the raiders' only combatant, flees (leave_fight): the fight ends by itself, and the fight bar
        gives the engine's note as such, not as "the GM's note" (it did; found by a tester)."""
        table.create()
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        assert table.command({"command": "leave_fight", "who": "vesh", "reason": "fled"}).status_code == 201
        assert _said(fragment(table, table.gm), '<strong class="ended"', "</strong>") == (
            "The fight is over: the raiders fled: every combatant of raiders is down; wardens still standing")

    def test_the_setup_page_lists_fights_by_title(self, table: Any) -> None:
        """GET / lists the store's fights by title, the id beside it (found by a tester: ids alone)."""
        table.create()
        page = table.client.get("/").text
        assert '<li data-fight="duel"><strong>Ember Ford</strong> <code class="muted">duel</code></li>' in page


def test_an_action_cancelled_by_a_critical_interrupt_tells_the_crit(table: Any) -> None:
    """C24, C7: Skarn's Interrupt crits Brin (6 on the FCS die against 1 on the RES die): the card of the attack it
    cancelled says the crit and why, as the Interrupt's own card does, with Brin's declined Active Defense (found
    by a tester: both were left out)."""
    table.create(names=("kael", "brin", "vesh", "skarn"), dice="manual")
    _skarn_interrupts(table, [1, 3, 1, 6], "brin", "shortblade", [4, 6, 1])
    assert _top_lines(fragment(table, table.gm))[-6:] == [
        "Brin Hollowmere declines an Active Defense",
        "attack 13 (4 primary die + 6 FCS die + 3 STR bonus) against defense 3 (1 RES die + 1 RES bonus + 1 armor): "
        "HIT, CRITICAL",
        "critical (C7): FCS portion 6 (6 FCS die) is more than RES portion 2 (1 RES die + 1 RES bonus)",
        "14 crushing damage to Brin Hollowmere's HP (4 on the primary die + 3 bonus + 3 crit bonus + 5 WD = 15, "
        "armor \u2212 1 = 14)",
        "Brin Hollowmere's HP: 18 \u2192 4",
        "the action is cancelled: Skarn Gutterjaw's Interrupt hit (C24); its Action is still spent"]


def test_a_missed_interrupt_is_the_top_card_with_the_action_it_answered(table: Any) -> None:
    """C24: Brin's Interrupt misses Vesh (5 against 8) and Vesh's attack on Kael goes on to Kael's Active Defense
    window, in the same command: the top card says the Interrupt's outcome (MISS, its headline and its hit line),
    then the attack it answered, whole (found by a tester: the top card said only the attack, the MISS was in the
    log alone); once the attack resolves, the announcement says its damage."""
    table.create(names=("kael", "brin", "vesh"), dice="manual")
    for command in ({"command": "roll_initiative", "dice": [1, 6, 3]},  # Brin 7, Vesh 4, Kael 2
                    {"command": "engage", "who": "vesh", "others": ["kael", "brin"]},
                    {"command": "end_turn", "who": "brin"},
                    {"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife"},
                    {"command": "react", "who": "brin", "weapon": "shortblade", "dice": [1, 1, 6, 8, 6, 1]}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    text = fragment(table, table.gm)
    card = text[text.index('id="top-card"'):]
    card = card[:card.index("</article>")]
    assert re.search(r'class="verdict v-miss[^"]*">MISS</span> <span class="headline">Interrupt: Brin Hollowmere '
                     r'attacks Vesh the Cinder-Hand with Short blade</span>', card), card
    lines = _top_lines(text)
    miss = ("attack 5 (1 primary die + 1 FCS die + 2 AGI bonus + 1 weapon) against defense 8 (6 RES die + 1 RES "
            "bonus + 1 armor): MISS")
    goes_on = "the action it answered goes on: Vesh the Cinder-Hand attacks Kael Arden with Curved knife"
    assert lines.index("Interrupt window for Brin Hollowmere") < lines.index(miss) < lines.index(goes_on) < lines.index(
        "Active Defense window for Kael Arden: attack 17 against base defense 5"), lines
    assert 'data-waiting="active_defense"' in text
    # Kael declines: the attack resolves in a command of its own, and its card still says the Interrupt missed (it
    # said "Interrupt window for Brin" and nothing of the miss: a tester), where it came: after the window's line,
    # before the Active Defense's (it led the lines, and the window read after its own result: another tester)
    declined = table.command({"command": "answer_active_defense", "defender": "kael", "defense": None})
    assert declined.status_code == 201, declined.text
    text = fragment(table, table.gm)
    lines = _top_lines(text)
    # its announcement says the damage the attack went on to deal, as any card's does (it said the headline alone)
    assert _announce(text) == (
        "HIT, CRITICAL: Vesh the Cinder-Hand attacks Kael Arden with Curved knife. 12 piercing damage to Kael Arden's "
        "HP (8 on the primary die + 2 bonus + 2 crit bonus + 2 WD = 14, armor \u2212 2 = 12). Round 1: Vesh the "
        "Cinder-Hand's turn")
    assert lines.index("Interrupt window for Brin Hollowmere") < lines.index(
        "MISS: Interrupt: Brin Hollowmere attacks Vesh the Cinder-Hand with Short blade") < lines.index(
        "Active Defense window for Kael Arden: attack 17 against base defense 5"), lines
    # in the log, the attack's own card tells the Interrupt's miss after its window's line too, naming its card (it
    # went from the window to the attack's hit, the Interrupt's card standing above it newest first: a tester)
    text = fragment(table, table.gm)
    attack = re.search(r'<article class="entry" id="seq-(\d+)"[^>]*data-said="[A-Z, ]*: Vesh the Cinder-Hand attacks',
                       text)
    interrupt = re.search(r'<article class="entry" id="seq-(\d+)"[^>]*data-said="MISS: Interrupt: ', text)
    assert attack is not None and interrupt is not None, text[:3000]
    card = text[attack.start():]
    entry = [html.unescape(x) for x in re.findall(r"<li>([^<]*)</li>", card[:card.index("</article>")])]
    window = entry.index("Interrupt window for Brin Hollowmere")
    assert entry[window + 1] == ("MISS: Interrupt: Brin Hollowmere attacks Vesh the Cinder-Hand with Short blade "
                                 f"(#{interrupt.group(1)})"), entry
    # the GM undoes the attack: the card struck through is the attack's, as the undo's preview named it (the top
    # card named the Interrupt: a tester)
    assert table.command({"command": "undo", "reason": "wrong target"}).status_code == 201
    text = fragment(table, table.gm)
    card = text[text.index('id="top-card"'):]
    headline = re.search(r'<span class="headline">([^<]*)</span>', card[:card.index("</article>")])
    assert headline is not None and headline.group(1) == "Vesh the Cinder-Hand attacks Kael Arden with Curved knife"
    # its lines fold under what undid it (the struck card pushed the turn's Attack under the turn bar: a tester)
    top = card[:card.index("</article>")]
    assert '<details class="more-lines" id="top-undone-lines"><summary>what was undone (' in top
    assert top.index('id="top-undone-lines"') < top.index("Undone: wrong target")
    assert 'id="top-more"' not in top  # its dice lines too, in their order, under the one fold


def test_a_prone_defenders_decision_says_why_dodge_is_not_offered_and_each_thing_once(table: Any) -> None:
    """C9, C27: Vesh attacks Prone Kael (10 against 5): the decision box offers Block, Parry and Decline and says
    why not Dodge, as the window's event records it ("a prone defender cannot Dodge (C9, C27)"), to Alice, who
    plays Kael, and to the GM, not to Bob, who plays Vesh (the reasons are the defender's own); Block, which turns
    the hit whatever its die shows, says so once ("always turns the hit"), not twice (found by a tester)."""
    table.create(dice="manual")
    alice, bob = (table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": name, "combatants": [who]}).json()["token"] for name, who in (
            ("Alice", "kael"), ("Bob", "vesh")))
    for command in ({"command": "roll_initiative", "dice": [1, 6]},
                    {"command": "apply_condition", "who": "kael", "condition": "Prone"},
                    {"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                     "dice": [2, 1, 1]}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    said = "Not offered: a prone defender cannot Dodge (C9, C27)."
    for token in (alice, table.gm):
        text = fragment(table, token)
        assert f'<p class="not-offered" id="not-offered">{said}</p>' in text
        answers = re.findall(r'<form class="command answer".*?</form>', text, re.S)
        assert [re.search(r"(Block|Parry|Decline|Dodge)", a).group(1) for a in answers] == [  # type: ignore[union-attr]
            "Block", "Parry", "Decline"]
        assert "whatever the die shows" not in answers[0] and answers[0].count("always turns the hit") == 1
    theirs = fragment(table, bob)
    assert 'id="not-offered"' not in theirs and "a prone defender cannot Dodge" not in theirs


def test_a_block_names_its_shield_as_a_parry_names_its_weapon(table: Any) -> None:
    """C9: Kael Blocks Vesh's knife: his card says "chooses Block with Warden's kite shield" to Alice (Kael's) and the
    GM, as a Parry names its weapon (it said "chooses Block" alone: a tester); Bob (Vesh's) is not told Kael's
    gear."""
    table.create(dice="manual")
    alice, bob = (_seat(table, name, who) for name, who in (("Alice", "kael"), ("Bob", "vesh")))
    for command in ({"command": "roll_initiative", "dice": [1, 6]},
                    {"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                     "dice": [8, 6, 1]}):
        answer = table.command(command)
        assert answer.status_code == 201, answer.text
    block = table.command({"command": "answer_active_defense", "defender": "kael", "defense": "block", "dice": [5]},
                          token=alice)
    assert block.status_code == 201, block.text
    said = "Kael Arden chooses Block with Warden&#39;s kite shield"
    assert said in fragment(table, alice) and said in fragment(table, table.gm)
    theirs = fragment(table, bob)
    assert "Kael Arden chooses Block" in theirs and "kite shield" not in theirs


def test_the_gms_strip_says_each_combatants_side(table: Any) -> None:
    """Foundry-like, the GM's strip tells the sides apart: each chip names its side and is coloured by it, the
    players' side first (Kael, whom Alice plays: wardens, side-0; Vesh: raiders, side-1); a player's strip marks
    its foes instead and names no side (found by a tester: the GM's chips had no side at all)."""
    table.create(names=("vesh", "kael"))
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    text = fragment(table, table.gm)
    for who, index, side in (("kael", 0, "wardens"), ("vesh", 1, "raiders")):
        chip = re.search(rf'<li class="chip[^"]*"[^>]*data-id="{who}">.*?</p>', text, re.S)
        assert chip is not None
        assert f" side side-{index}\"" in chip.group()
        assert f'<span class="badge side-name">{side}</span>' in chip.group()
    mine = fragment(table, alice)
    assert "side-name" not in mine and re.search(r'<li class="chip foe"[^>]*data-id="vesh"', mine)


def _announce(text: str) -> str:
    """What the fragment gives the page to announce (its ``data-announce``), unescaped."""
    return _attr(text, "announce")


def _named(text: str, tag: str, label: str) -> list[str]:
    """The ``tag`` elements of a fragment whose aria-label, unescaped, is ``label``."""
    return [e for e, said in re.findall(rf'(<{tag}\b[^>]*aria-label="([^"]*)"[^>]*>)', text)
            if html.unescape(said) == label]


class TestForScreenReaders:
    def test_a_conditions_announcement_names_it_and_whom_and_its_undo_too(self, table: Any) -> None:
        """WCAG 4.1.3: the GM applies Prone to Kael: the GM's page and Alice's announce "Kael Arden is Prone" (the
        card's line), not "A condition: Kael Arden" nor a bare "A condition" (found by a blind tester); the undo
        announces "Undone: Kael Arden is Prone"; clearing it, "Kael Arden is no longer Prone"."""
        table.create()
        alice = _seat(table, "Alice", "kael")
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        assert table.command({"command": "apply_condition", "who": "kael", "condition": "Prone"}).status_code == 201
        assert _announce(fragment(table, table.gm)) == "Kael Arden is Prone. Round 1: Kael Arden's turn"
        assert _announce(fragment(table, alice)) == "Kael Arden is Prone. Your turn: Kael Arden"
        assert table.command({"command": "undo", "reason": "wrong target"}).status_code == 201
        assert _announce(fragment(table, table.gm)) == "Undone: Kael Arden is Prone. Round 1: Kael Arden's turn"
        assert table.command({"command": "apply_condition", "who": "kael", "condition": "Prone"}).status_code == 201
        assert table.command({"command": "clear_condition", "who": "kael", "condition": "Prone"}).status_code == 201
        assert _announce(fragment(table, alice)) == "Kael Arden is no longer Prone. Your turn: Kael Arden"

    def test_an_announcement_says_what_a_card_did_to_whom(self, table: Any) -> None:
        """WCAG 4.1.3: a card is announced with what it did, its damage, conditions and leavings after its headline
        (a keyboard tester heard "HIT: Kael Arden attacks Skarn Gutterjaw" and not that Skarn was down and Dying, and
        "End of turn: Kael Arden" without the condition that ended with it). Kael's critical Longsword hit on Vesh
        (8 on the d8 primary die, C7: + 2 STR bonus + 2 crit bonus + 4 WD = 16, Vesh's armor 1: 15, C12, C13)
        takes her 12 HP to 0: Dying (C36); a Prone until the start of Vesh's next turn ends with Kael's turn (C40)."""
        table.create(dice="manual", names=("kael", "vesh", "skarn"))
        alice = _seat(table, "Alice", "kael")
        assert table.command({"command": "roll_initiative", "dice": [6, 1, 1]}).status_code == 201
        assert table.command({"command": "declare_attack", "attacker": "kael", "target": "vesh",
                              "weapon": "longsword", "dice": [8, 6, 1]}).status_code == 201
        assert table.command({"command": "answer_active_defense", "defender": "vesh", "defense": None}).status_code \
            == 201
        assert _announce(fragment(table, table.gm)) == (
            "HIT, CRITICAL: Kael Arden attacks Vesh the Cinder-Hand with Longsword. 15 slashing damage to Vesh the "
            "Cinder-Hand's HP (8 on the primary die + 2 bonus + 2 crit bonus + 4 WD = 16, armor \u2212 1 = 15); Vesh "
            "the Cinder-Hand is Dying. Round 1: Kael Arden's turn")
        assert _announce(fragment(table, alice)).endswith(  # Vesh's armor is not Alice's to see
            "(8 on the primary die + 2 bonus + 2 crit bonus + 4 WD = 16, before the target's mitigation (C13)); Vesh "
            "the Cinder-Hand is Dying. Your turn: Kael Arden")
        assert table.command({"command": "apply_condition", "who": "kael", "condition": "Prone",
                              "until": "start_of_next_turn", "of": "skarn"}).status_code == 201
        assert table.command({"command": "end_turn", "who": "kael"}).status_code == 201
        assert _announce(fragment(table, alice)).startswith(
            "End of turn: Kael Arden (given by the GM). Kael Arden is no longer Prone. ")

    def test_the_end_is_announced_as_the_fight_bar_says_it_once(self, table: Any) -> None:
        """The raiders yield: every seat's page announces "The fight is over: the raiders yielded", the fight bar's
        words, and nothing more ("THE END: The end. The fight is over" said neither how nor once); the seed
        revealed after, the announcement is the same (the page says it only when it changes). The card's headline
        is "The GM ends the fight" (it read "THE END The end")."""
        table.create()
        alice = _seat(table, "Alice", "kael")
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        assert table.command({"command": "end_fight", "reason": "yielded", "side": "raiders"}).status_code == 201
        for token in (table.gm, alice):
            text = fragment(table, token)
            assert _announce(text) == "The fight is over: the raiders yielded"
            assert re.search(r'THE END</span> <span class="headline">The GM ends the fight</span>', text)
        assert table.command({"command": "reveal_seed"}).status_code == 201
        assert _announce(fragment(table, alice)) == "The fight is over: the raiders yielded"

    def test_a_forms_ids_are_the_same_at_every_head(self, table: Any) -> None:
        """WCAG 3.2.2: the GM's "Apply a condition" form and its selects keep their ids when the head moves (they
        carried the offer's index, "o15-…" then "o16-…", so a live update wiped what the GM had chosen and the
        focus; found by a blind tester)."""
        table.create()
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        ids = []
        for _ in range(2):
            text = fragment(table, table.gm)
            ids.append(re.findall(r'<(?:form|select)[^>]*\bid="(o-apply_condition[^"]*)"', text))
            assert table.command({"command": "end_turn", "who": "kael" if not ids[1:] else "vesh"}
                                 ).status_code == 201
        assert ids[0] == ids[1] == ["o-apply_condition-gm", "o-apply_condition-gm-who", "o-apply_condition-gm-cond",
                                    "o-apply_condition-gm-choice", "o-apply_condition-gm-by",
                                    "o-apply_condition-gm-until", "o-apply_condition-gm-of"]

    def test_same_named_controls_say_whom_they_are_for(self, table: Any) -> None:
        """WCAG 2.4.6: each "Hide from the players" names its combatant, each seat's Copy link, QR code, Reissue and
        Revoke its seat; the End the fight select is named apart from its form and button; the initiative number
        is said as one, and a turn's Action and Move left are words, not a check mark."""
        table.create()
        _seat(table, "Alice", "kael")
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        text = fragment(table, table.gm)
        for name in ("Kael Arden", "Vesh the Cinder-Hand"):
            assert len(_named(text, "button", f"Hide {name} from the players")) == 1
        for label in ("Copy Alice's link", "QR code of Alice's link", "Reissue Alice's seat", "Revoke Alice's seat"):
            assert len(_named(text, "button", label)) == 1, label
        assert '<label for="o-end_fight-gm-choice">How the fight ends</label>' in text
        kael = _said(text, 'data-id="kael"', "</li>")
        assert "Kael Arden initiative 7 turn" in kael
        assert "Action ✓ left · Move ✓ left" in kael

    def test_an_answers_numbers_describe_its_button(self, table: Any) -> None:
        """WCAG 1.3.1: each Active Defense answer's button is described by what it adds, what it costs and its
        odds (aria-describedby to those lines, each there) and by its error line."""
        table.create(dice="manual")
        for command in ({"command": "roll_initiative", "dice": [4, 1]},
                        {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                         "dice": [1, 2, 1]}):
            assert table.command(command).status_code == 201
        text = fragment(table, table.gm)
        buttons = re.findall(r'<button type="submit" class="big" aria-describedby="([^"]*)" aria-keyshortcuts="\d">',
                             text)
        assert len(buttons) == 3  # Dodge, Parry (Vesh's knife), Decline
        for described in buttons:
            ids = described.split()
            assert ids[-1].endswith("-error") and any(i.endswith("-odds") for i in ids), ids
            for one in ids:
                assert re.search(rf'id="{re.escape(one)}"', text), one
        odds = re.search(rf'id="{buttons[0].split()[-2]}" data-odds>([^<]+)<', text)
        assert odds is not None and "turns the hit into a miss on" in odds[1]

    def test_a_players_foes_are_marked_in_words_and_the_bonus_actions_counted(self, table: Any) -> None:
        """WCAG 1.4.1: on Alice's page Vesh's chip says "foe" in words (not a red border alone, which the turn's
        ring covered), Kael's "yours"; the Bonus Actions line counts them in text ("1/1") beside the pips."""
        table.create()
        alice = _seat(table, "Alice", "kael")
        assert table.command({"command": "roll_initiative", "dice": [1, 6]}).status_code == 201
        text = fragment(table, alice)
        vesh = _said(text, 'data-id="vesh"', "</li>")
        assert 'data-id="vesh"> Vesh the Cinder-Hand initiative 8 turn foe HP' in vesh
        assert "foe" not in _said(text, 'data-id="kael"', "</li>")
        assert re.search(r'<span class="ba-count">(\d)/\1</span>', text)

    def test_the_undos_preview_names_the_condition_it_takes_back(self, table: Any) -> None:
        """The undo's preview (and the log's words it is built from, data-said) say a condition's card by what it
        did, "#12 Kael Arden is Prone: tripped", not "A condition: Kael Arden"."""
        table.create()
        assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
        assert table.command({"command": "apply_condition", "who": "kael", "condition": "Prone",
                              "reason": "tripped"}).status_code == 201
        text = fragment(table, table.gm)
        seq = re.search(r'id="seq-(\d+)" data-seq="\d+" data-kind="apply_condition" data-said="([^"]*)"', text)
        assert seq is not None and html.unescape(seq[2]) == "Kael Arden is Prone: tripped"
        assert f'data-default="#{seq[1]} Kael Arden is Prone: tripped">Undoes #{seq[1]} Kael Arden is Prone: ' \
               "tripped</p>" in text

    def test_each_combatants_command_buttons_say_whose_they_are(self, table: Any) -> None:
        """WCAG 2.4.6: at set-up the GM's Commands hold an Attack, a Move, ... per combatant: each button says whose
        ("Attack by Vesh the Cinder-Hand", in visually hidden words after the visible ones), so no two read alike."""
        table.create(names=("kael", "brin", "vesh", "skarn"))  # at set-up: every combatant's commands offered
        text = fragment(table, table.gm)
        names = [re.sub(r"<[^>]+>", "", b) for b in re.findall(
            r'<form class="command[^"]*" id="o-[^"]*"[^>]*>.*?<button type="submit"[^>]*>(.*?)</button>', text, re.S)]
        assert "Attack by Vesh the Cinder-Hand" in names and "Attack by Skarn Gutterjaw" in names
        assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_a_pass_staged_for_the_passers_own_base_defense_says_what_the_dice_are_for(table: Any) -> None:
    """C24, C29: Skarn (the GM's) attacks Kael beside him; the GM lets Kael's Interrupt pass and types Skarn's hit
    (3, 2), staged for Alice's die: Kael's own base defense; her roll box asked "Roll your dice: Pass by Kael
    Arden" (found by a GM tester: the dice were the passer's own, so they were not said); it now says what they
    are for, as for another's dice, and so do the GM's words."""
    table.create(names=("kael", "skarn"), dice="manual")
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative", "dice": [6, 1]},
                    {"command": "engage", "who": "kael", "others": ["skarn"]},
                    {"command": "end_turn", "who": "kael"}):
        assert table.command(command).status_code == 201, command
    opened = table.command({"command": "declare_attack", "attacker": "skarn", "target": "kael", "unarmed": True})
    assert opened.json()["options"]["waiting"]["kind"] == "interrupt", opened.text
    staged = table.command({"command": "pass_reaction", "who": "kael", "dice": [3, 2]}, stage=True)
    assert staged.status_code == 202 and staged.json()["awaiting"] == "Alice", staged.text
    mine = html.unescape(fragment(table, alice))
    assert _said(mine, '<h2 id="roll-h"', "</h2>") == "Roll your dice: Kael Arden's base defense"
    assert "Alice rolls next: Kael Arden's base defense" in _said(fragment(table, table.gm),
                                                                   '<section class="rollbox', "</p>")


def test_the_catch_box_shows_a_hidden_attackers_totals_to_the_gm_alone(table: Any) -> None:
    """docs/server.md, "The table page": the fragment shows a seat only what its views hold. The hidden Skarn throws
    its hatchet at Kael (7 + 4 + 3 = 14 against 2 + 2 + 2 = 6, C22): the GM's Catch box says the totals; Kael's
    player, whose events of that attack are withheld whole, is told only that someone's thrown attack hits Kael
    (it was told "14 against defense 6"; found by a tester)."""
    skarn = sheet("skarn")
    skarn["weapons"] = [w for w in skarn["weapons"] if w["id"] == "hatchet"]
    headers = {"Authorization": f"Bearer {table.create_token}"} if table.create_token else {}
    made = table.client.post("/fights", headers=headers, json={
        "id": "duel", "dice": "manual", "title": "Ember Ford", "hidden": ["skarn"],
        "combatants": [sheet("kael"), skarn]})
    assert made.status_code == 201, made.text
    table.gm = made.json()["gm_token"]
    alice = table.client.post("/fights/duel/seats", headers=table.auth(),
                              json={"kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    for command in ({"command": "roll_initiative", "dice": [1, 6]},
                    {"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "hatchet",
                     "dice": [7, 4, 2]},
                    {"command": "answer_active_defense", "defender": "kael", "defense": None}):
        assert table.command(command).status_code == 201
    assert "Skarn Gutterjaw&#39;s thrown attack hits: 14 against defense 6" in fragment(table, table.gm)
    seen = fragment(table, alice)
    assert "someone&#39;s thrown attack hits Kael Arden" in seen and "14" not in seen.split('id="decision"')[1][:2000]
    assert "Skarn" not in seen


def test_the_defenders_player_reads_why_its_active_defense_was_skipped(table: Any) -> None:
    """C8, C22: Vesh attacks Kael three times before initiative; Kael Dodges twice, spending both Bonus Actions,
    so the third attack's window is skipped. Alice, who plays Kael, reads the engine's reason (her own combatant's
    Bonus Actions: it read "no Active Defense for Kael Arden" alone, found by a tester); Bob, who plays the
    attacker, reads no reason (the defender's Bonus Actions are not his to see), the GM the engine's."""
    table.create(dice="manual")
    alice, bob = _seat(table, "Alice", "kael"), _seat(table, "Bob", "vesh")
    for _ in range(2):
        for command in ({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                         "dice": [8, 6, 8]},
                        {"command": "answer_active_defense", "defender": "kael", "defense": "dodge", "dice": [6]}):
            answer = table.command(command)
            assert answer.status_code == 201, (command, answer.text)
    answer = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                            "dice": [8, 6, 1]})
    assert answer.status_code == 201, answer.text
    said = ("no Active Defense for Kael Arden: the defender has no Bonus Action left (an Active Defense costs 1, C8, "
            "C22)")
    assert said in _top_lines(fragment(table, alice)) and said in _top_lines(fragment(table, table.gm))
    assert "no Active Defense for Kael Arden" in _top_lines(fragment(table, bob))  # the line alone, no reason


def test_a_caught_weapon_is_the_cards_verdict(table: Any) -> None:
    """C22: Skarn throws its hatchet at Kael (7 + 4 + 3 = 14 against 6, a hit), Kael declines an Active Defense
    and catches it: the card's verdict is CAUGHT, good news on Kael's player's page, neutral on the GM's (it
    stayed "HIT, CRITICAL" in the bad-news colour, a caught attack being no hit: found by a tester)."""
    skarn = sheet("skarn")
    skarn["weapons"] = [w for w in skarn["weapons"] if w["id"] == "hatchet"]
    table.create(dice="manual", names=(), combatants=[sheet("kael"), skarn])
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative", "dice": [1, 6]},
                    {"command": "declare_attack", "attacker": "skarn", "target": "kael", "weapon": "hatchet",
                     "dice": [7, 4, 2]},
                    {"command": "answer_active_defense", "defender": "kael", "defense": None},
                    {"command": "answer_catch", "who": "kael", "catch": True}):
        answer = table.command(command)
        assert answer.status_code == 201, (command, answer.text)
    for token, tone in ((table.gm, ""), (alice, " tone-good")):
        text = fragment(table, token)
        top = text[text.index('id="top-card"'):text.index("</article>", text.index('id="top-card"'))]
        assert f'<span class="verdict v-caught{tone}">CAUGHT</span>' in top, top[:600]


def test_a_redo_card_says_its_reason_and_what_it_brings_back(table: Any) -> None:
    """The GM undoes Kael's Prone ("misclick") and redoes it ("it was right"): before the redo, its form says what
    it would bring back ("Brings back #3 Kael Arden is Prone"); after it, every seat's redo card reads "Redo: it was
    right" and what it brings back, in words (it said only "what the undo took back": a tester), naming the undo by
    its card's number in the log (it named the undo's `undone` event, one past it: a tester) and the seqs it took
    back."""
    table.create()
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative", "dice": [6, 1]},
                    {"command": "apply_condition", "who": "kael", "condition": "Prone"},
                    {"command": "undo", "reason": "misclick"}):
        assert table.command(command).status_code == 201, command
    events = table.client.get("/fights/duel/events", headers=table.auth()).json()["events"]
    undone = next(e for e in events if e["type"] == "undone")
    assert undone["batch"] < undone["seq"]  # the undo's card is numbered by its command (#batch), as the log shows
    assert (f'<p class="redo-preview" id="redo-preview">Brings back #{undone["event"]["from_seq"]} Kael Arden is '
            'Prone.</p>') in fragment(table, table.gm)
    assert table.command({"command": "redo", "reason": "it was right"}).status_code == 201
    for token in (table.gm, alice):
        text = fragment(table, token)
        top = text[text.index('id="top-card"'):text.index("</article>", text.index('id="top-card"'))]
        assert '<span class="headline">Redo: it was right</span>' in top, top[:500]
        first = undone["event"]["from_seq"]
        assert (f"<li>brings back what the undo at #{undone['batch']} took back (#{first} to "
                f"#{undone['event']['to_seq']})</li>") in top, top
        assert f"<li>back: #{first} Kael Arden is Prone</li>" in top, top  # in words, its own line
        assert f'id="seq-{undone["batch"]}"' in text  # the undo's card in the log, by that number


def test_a_condition_with_two_limits_says_whichever_comes_first(table: Any) -> None:
    """C28, C40: Fatigued (3 ticks, at the round's end) applied by Vesh until the end of Vesh's next turn ends at
    whichever comes first, and its chip says so (it read "3 ticks left, at round end; until the end of ...", two
    durations side by side: found by a tester)."""
    table.create()
    assert table.command({"command": "roll_initiative"}).status_code == 201
    answer = table.command({"command": "apply_condition", "who": "kael", "condition": "Fatigued", "by": "vesh",
                            "until": "end_of_next_turn"})
    assert answer.status_code == 201, answer.text
    text = fragment(table, table.gm)
    chip = re.sub(r"<[^>]+>", "", text)
    assert re.search(r"Fatigued 3 ticks left, at [a-z ]+, or until the end of Vesh the Cinder-Hand's next turn, "
                     r"whichever comes first", chip.replace("&#39;", "'")), chip[:2000]
    # a phone's chip names its unit ("3 left" read as nothing in particular: a tester), and its box's "Now:" is a
    # sentence of its own (it ran on from the condition's words: "... the GM's to apply Now: 3 ticks left ...")
    assert '<span class="left short"> 3 ticks left or till Vesh the Cinder-Hand&#39;s next turn ends</span>' in text
    said = re.search(r'<p class="cond-said">Fatigued: ([^<]*)<span class="short-only">([^<]*)</span>', text)
    assert said is not None and re.match(r"\.? Now: 3 ticks left", said.group(2)), said
    assert (said.group(1) + said.group(2)).count(". Now:") == 1


def test_the_end_turn_form_asks_for_the_dice_ending_the_turn_rolls(table: Any) -> None:
    """C40: Vesh Burning (1d4 fire as its turn starts): Kael's End turn rolls that d4, so the turn bar's form has a
    face for it (hidden until the seat chooses to type its dice), as every other form does, named as Burning's
    damage; a typed face is sent in the command's dice (the form had none, and the server rolled the die unasked:
    found by a tester)."""
    from omen_core.content import load_ruleset
    from tests.sheets import sheet as plain

    ruleset = msgspec.to_builtins(load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml"))
    table.create(names=(), ruleset=ruleset, combatants=[msgspec.to_builtins(plain("kael", AGI=(20, 0))),
                                                        msgspec.to_builtins(plain("vesh", side="raiders"))])
    assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
    assert table.command({"command": "apply_condition", "who": "vesh", "condition": "Burning"}).status_code == 201
    text = fragment(table, table.gm)
    bar = text[text.index('<section class="turn-bar"'):]
    bar = bar[:bar.index("</section>")]
    assert '<div class="choice-dice" data-choice="0">' in bar and 'class="face"' in bar and 'data-sides="4"' in bar
    # the die is named as Burning's damage on vesh (it read "vesh's damage", as if vesh dealt it: a tester)
    assert "Vesh&#39;s Burning damage: the face of the d4" in bar and "<small>Vesh Burning damage</small>" in bar, bar
    answer = table.command({"command": "end_turn", "who": "kael", "dice": [3]})
    assert answer.status_code == 201, answer.text
    rolled = [e["event"] for e in answer.json()["events"] if e["type"] == "dice_rolled"]
    assert [(r["source"], [d["face"] for d in r["dice"]]) for r in rolled] == [("manual", [3])]


def test_a_turns_end_staged_for_dice_is_said_sent_in_the_turn_bar(table: Any) -> None:
    """C40: Kael (Alice's) is Poisoned by Vesh (a save ends it as his turn ends); Alice ends his turn in a manual
    fight without the dice: it is staged for her RES die, and her turn bar says "End Kael Arden's turn: sent." in
    place of the form (the bar offered it again, and a second press was refused 409: a tester)."""
    from omen_core.content import load_ruleset
    from tests.sheets import sheet as plain

    ruleset = msgspec.to_builtins(load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml"))
    table.create(names=(), dice="manual", ruleset=ruleset, combatants=[
        msgspec.to_builtins(plain("kael", AGI=(20, 0))), msgspec.to_builtins(plain("vesh", side="raiders"))])
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
    assert table.command({"command": "apply_condition", "who": "kael", "condition": "Poisoned",
                          "by": "vesh"}).status_code == 201
    staged = table.command({"command": "end_turn", "who": "kael"}, token=alice, stage=True)
    assert staged.status_code == 202 and staged.json()["yours"] is True, staged.text
    text = fragment(table, alice)
    bar = text[text.index('<section class="turn-bar"'):]
    bar = bar[:bar.index("</section>")]
    assert 'data-command="end_turn"' in bar and "<form" not in bar, bar
    assert "End Kael's turn: sent.</strong> It waits for your dice: the roll box above." in bar, bar
    # the roll box says what the dice are for, not the command alone ("End turn by Kael": a tester)
    assert _said(text, '<h2 id="roll-h"', "</h2>") == "Roll your dice: Kael's RES save against Poisoned"


def test_a_roll_box_after_a_defense_turns_an_interrupt_says_the_attacks_dice(table: Any) -> None:
    """C24, C8: Brin's (Bob's) attack on Vesh waits at Vesh's Interrupt; Vesh's strike (4 + 3 against 1) opens
    Brin's Active Defense window; Bob's Dodge, staged, asks for his dodge die, then, the strike turned, for Brin's
    hit dice, and the roll box says so: "Roll your dice: Brin Hollowmere's hit" (it said "Active Defense by Brin
    Hollowmere", the answer given, over the hit dice of the attack it let go on: a tester)."""
    table.create(names=("brin", "vesh"), dice="manual")
    bob = _seat(table, "Bob", "brin")
    for command in ({"command": "roll_initiative", "dice": [1, 8]}, {"command": "engage", "who": "brin",
                                                                     "others": ["vesh"]},
                    {"command": "end_turn", "who": "vesh"}, {"command": "end_turn", "who": "brin"},
                    {"command": "end_turn", "who": "vesh"}):
        assert table.command(command).status_code == 201, command
    assert table.command({"command": "declare_attack", "attacker": "brin", "target": "vesh", "weapon": "shortblade"},
                         token=bob, stage=True).status_code == 201
    assert table.command({"command": "react", "who": "vesh", "weapon": "knife", "dice": [4, 3, 1]}).status_code == 201
    dodge = table.command({"command": "answer_active_defense", "defender": "brin", "defense": "dodge"}, token=bob,
                          stage=True)
    assert dodge.status_code == 202, dodge.text
    heading = _said(fragment(table, bob), '<h2 id="roll-h"', "</h2>")
    assert heading == "Roll your dice: Active Defense: Dodge by Brin Hollowmere"  # the decision and the answer
    given = table.client.post("/fights/duel/staged", headers=table.auth(bob), json={"id": dodge.json()["id"],
                                                                                    "dice": [8]})
    assert given.status_code == 202 and [r["purpose"] for r in given.json()["rolls"]] == ["hit"], given.text
    assert _said(fragment(table, bob), '<h2 id="roll-h"', "</h2>") == "Roll your dice: Brin Hollowmere's hit"


def test_a_spells_roll_box_names_the_spell_and_the_casters_die_against_the_save(table: Any) -> None:
    """C15, C29, C37: Alice stages Kael's Soulfire (Vesh saves AGI against Kael's INT) in a manual fight: the GM's
    box says "Alice gave Soulfire by Kael Arden on Vesh" (it said "Ability by ...": a tester); Bob, who plays Vesh,
    rolls Vesh's save and is not told the spell's name; then Alice's box asks for "Kael Arden's die against Vesh the
    Cinder-Hand's save" (it said "Kael Arden's save", as if the caster saved) and says she gave Soulfire."""
    soulfire = {"id": "soulfire", "name": "Soulfire", "use": "action", "target": "enemy",
                "effects": [{"kind": "save", "save": "AGI", "against": "INT", "spell": True,
                             "on_failure": [{"kind": "damage", "to": "target", "flat": 2, "damage_type": "fire"}]}]}
    table.create(dice="manual", combatants=[{**sheet("kael"), "abilities": [soulfire]}, sheet("vesh")])
    alice, bob = _seat(table, "Alice", "kael"), _seat(table, "Bob", "vesh")
    assert table.command({"command": "roll_initiative", "dice": [6, 1]}).status_code == 201
    staged = table.command({"command": "use_ability", "who": "kael", "ability": "soulfire", "target": "vesh"},
                           token=alice, stage=True)
    assert staged.status_code == 202, staged.text
    assert "Alice gave Soulfire by Kael Arden on Vesh the Cinder-Hand; Bob rolls next: Vesh the Cinder-Hand's save" \
        in _said(fragment(table, table.gm), '<h2 id="roll-h"', "</form>")
    assert _said(fragment(table, bob), '<h2 id="roll-h"', "</h2>") == "Roll your dice: Vesh the Cinder-Hand's save"
    assert "Soulfire" not in fragment(table, bob)  # an enemy's ability unnamed to its target's player (C37)
    given = table.client.post("/fights/duel/staged", headers=table.auth(bob),
                              json={"id": staged.json()["id"], "dice": [3]})
    assert given.status_code == 202, given.text
    box = _said(fragment(table, alice), '<h2 id="roll-h"', "</form>")
    assert box.startswith("Roll your dice: Kael Arden's die against Vesh the Cinder-Hand's save You gave Soulfire for "
                          "Kael Arden on Vesh the Cinder-Hand"), box
    assert "Kael Arden's save" not in box, box


def test_a_roll_box_for_the_die_opposing_a_save_names_the_saver(table: Any) -> None:
    """C15, C29: the GM calls for Kael's (Alice's) save against Vesh's hex in a manual fight: Alice's box asks for
    Kael's save die, then the GM's for Vesh's, said as "Vesh the Cinder-Hand's die against Kael Arden's save" (it
    read "Vesh the Cinder-Hand's save", as if Vesh saved: a tester)."""
    table.create(dice="manual")
    alice = _seat(table, "Alice", "kael")
    assert table.command({"command": "roll_initiative", "dice": [1, 8]}).status_code == 201  # Vesh first
    effect = {"name": "hex", "save": "AGI", "against": "INT", "action_cost": 1}
    staged = table.command({"command": "call_save", "caller": "vesh", "saver": "kael", "effect": effect},
                           stage=True)
    assert staged.status_code == 202, staged.text
    assert _said(fragment(table, alice), '<h2 id="roll-h"', "</h2>") == "Roll your dice: Kael Arden's save"
    given = table.client.post("/fights/duel/staged", headers=table.auth(alice), json={"id": staged.json()["id"],
                                                                                      "dice": [3]})
    assert given.status_code == 202, given.text
    assert _said(fragment(table, table.gm), '<h2 id="roll-h"', "</h2>") == \
        "Roll your dice: Vesh the Cinder-Hand's die against Kael Arden's save"


def test_the_round_end_abilities_answer_is_no_ones_turn(table: Any) -> None:
    """C38 "round end": Kael's Vigil answers the end of round 1; while it waits, the fight bar and the title say
    the round's end, not "someone's turn" (which reads as a hidden combatant's turn: found by a tester), to the GM
    and to a player alike."""
    from omen_core.content import AbilityLibrary, decode_content
    from tests.sheets import sheet as plain

    vigil = decode_content('[abilities.vigil]\nname = "Vigil"\nuse = "trigger"\n'
                           'trigger = { moment = "round.end", owner = "self" }\n'
                           'effects = [{ kind = "condition", to = "actor", condition = "Fatigued" }]\n',
                           AbilityLibrary, source="vigil.toml", fmt="toml").get("vigil")
    kael = msgspec.structs.replace(plain("kael", AGI=(20, 0)), abilities=(vigil,))
    table.create(names=(), combatants=[msgspec.to_builtins(kael), msgspec.to_builtins(plain("vesh", side="raiders"))])
    alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
    assert table.command({"command": "end_turn", "who": "kael"}, token=alice).status_code == 201
    assert table.command({"command": "end_turn", "who": "vesh"}).status_code == 201
    for token in (table.gm, alice):
        text = fragment(table, token)
        bar = text[text.index('id="fight-bar"'):text.index("</p>", text.index('id="fight-bar"'))]
        assert "<strong>the round's end</strong>" in bar and "someone" not in bar, bar


def test_a_save_ends_condition_says_whose_attribute_its_save_is_against() -> None:
    """C15, C40: Poisoned's explainer says its RES save is against the INT of whoever applied it (it read "against
    INT", not saying whose: found by a tester)."""
    from omen_core.content import load_ruleset
    from omen_server.table import condition_said

    poisoned = load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml").conditions["Poisoned"]
    assert "ends on a RES save against the INT of whoever applied it (turn end; C15, C40)" in condition_said(
        poisoned, "Poisoned")


def test_also_now_names_the_abilities_it_lists(table: Any) -> None:
    """C37: the list of what the turn's combatant may also do names its abilities ("Steady Breath (1 Bonus
    Action)"), not "Ability" (found by a tester: "Ability · Ability")."""
    from omen_core.content import AbilityLibrary, decode_content
    from tests.sheets import sheet as plain

    breath = decode_content('[abilities.steady_breath]\nname = "Steady Breath"\nuse = "bonus_action"\n'
                            'target = "self"\neffects = [{ kind = "heal", to = "actor", flat = 1 }]\n',
                            AbilityLibrary, source="breath.toml", fmt="toml").get("steady_breath")
    kael = msgspec.structs.replace(plain("kael", AGI=(20, 0)), abilities=(breath,))
    table.create(names=(), combatants=[msgspec.to_builtins(kael), msgspec.to_builtins(plain("vesh", side="raiders"))])
    assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
    text = fragment(table, table.gm)
    also = text[text.index('id="also"'):text.index("</p>", text.index('id="also"'))]
    assert 'data-command="use_ability">Steady Breath <span class="muted">(1 Bonus Action)</span>' in also, also


def test_each_ability_forms_button_says_what_it_uses(table: Any) -> None:
    """C37: Kael's Steady Breath (1 Bonus Action, on himself) and Ember Bolt (1 Action, on a foe or himself) are two
    forms, one per cost: their buttons read "Use Steady Breath" (its one choice's label) and "Use Ember Bolt" (its
    choices, one ability's), not "Ability" and "Ability" (a GM tester could not tell them apart)."""
    from omen_core.content import AbilityLibrary, decode_content
    from tests.sheets import sheet as plain

    library = decode_content(
        '[abilities.steady_breath]\nname = "Steady Breath"\nuse = "bonus_action"\ntarget = "self"\n'
        'effects = [{ kind = "heal", to = "actor", flat = 1 }]\n'
        '[abilities.ember_bolt]\nname = "Ember Bolt"\nuse = "action"\ntarget = "any"\n'
        'effects = [{ kind = "damage", to = "target", flat = 1, damage_type = "fire" }]\n',
        AbilityLibrary, source="kael.toml", fmt="toml")
    kael = msgspec.structs.replace(plain("kael", AGI=(20, 0)),
                                   abilities=(library.get("steady_breath"), library.get("ember_bolt")))
    table.create(names=(), combatants=[msgspec.to_builtins(kael), msgspec.to_builtins(plain("vesh", side="raiders"))])
    assert table.command({"command": "roll_initiative", "dice": [20, 1]}).status_code == 201
    text = html.unescape(fragment(table, table.gm))
    buttons = re.findall(r'<form class="command[^"]*" id="[^"]*" data-command="use_ability".*?'
                         r'<button type="submit"[^>]*>([^<]*)<', text, re.S)
    assert sorted(buttons) == ["Use Ember Bolt", "Use Steady Breath"], buttons


def test_an_abilitys_decision_says_its_uses_left_to_its_owners_seat(table: Any) -> None:
    """C41: Vesh attacks Kael and Kael's Brace Up (twice a fight) is offered: Alice's decision box says "Brace Up:
    2 uses left this fight (C41)" (the uses were only in the list of abilities: found by a tester); Vesh's side
    of the table is not told it."""
    from omen_core.content import AbilityLibrary, decode_content
    from tests.sheets import sheet as plain

    brace = decode_content('[abilities.brace_up]\nname = "Brace Up"\nuse = "trigger"\n'
                           'trigger = { moment = "attack.declared", owner = "target" }\n'
                           'uses = { count = 2, per = "fight" }\n'
                           'effects = [{ kind = "modifier", total = "defense", value = 1 }]\n',
                           AbilityLibrary, source="brace.toml", fmt="toml").get("brace_up")
    kael = msgspec.structs.replace(plain("kael"), abilities=(brace,))
    table.create(names=(), combatants=[msgspec.to_builtins(kael),
                                       msgspec.to_builtins(plain("vesh", side="raiders", AGI=(20, 0)))])
    alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    bob = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": "Bob", "combatants": ["vesh"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [1, 20]}).status_code == 201
    answer = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "unarmed": True},
                           token=bob)
    assert answer.status_code == 201, answer.text
    assert "<li>Brace Up: 2 uses left this fight (C41)</li>" in fragment(table, alice)
    assert "uses left" not in fragment(table, bob)


def test_the_cancel_form_says_what_it_calls_off(table: Any) -> None:
    """The GM's Cancel the action names the action waiting by its card's number and whose it is by name, and what
    stays done ("calls off #N (attack declared by Vesh the Cinder-Hand): the costs already paid stay paid"; it
    said "action N" and the id: a tester); at a moment, that its decisions go unanswered and the fight goes on
    (the form named neither: found by a tester)."""
    table.create(dice="manual")
    assert table.command({"command": "roll_initiative", "dice": [1, 6]}).status_code == 201
    declared = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                              "dice": [8, 6, 1]})  # a hit: the Active Defense window waits (C8)
    assert declared.status_code == 201, declared.text
    action = next(e["seq"] for e in declared.json()["events"] if e["type"] == "attack_declared")
    text = fragment(table, table.gm)
    form = text[text.index('data-command="cancel_action"'):]
    assert f"calls off #{action} (attack declared by Vesh the Cinder-Hand): the costs already paid stay paid" in \
        form[:form.index("</form>")]


def test_a_damage_taken_decision_says_how_much_the_attack_dealt(table: Any) -> None:
    """C38 "damage taken", C13: Vesh's unarmed hit on Kael (STR 6 + 0: 6 crushing) opens Kael's Hellish Rebuke at
    attack.damaged: Alice's decision box says "Kael took 6 damage from the attack (C13)", what the answer is
    about (it showed the hit total: found by a tester); Bob, who sees Kael's HP only as a band, is not told it."""
    from tests.sheets import sheet as plain

    kael = msgspec.structs.replace(plain("kael"), abilities=("hellish_rebuke",))
    table.create(dice="manual", names=(), combatants=[msgspec.to_builtins(kael),
                                                      msgspec.to_builtins(plain("vesh", side="raiders")),
                                                      msgspec.to_builtins(plain("brin"))])
    alice = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": "Alice", "combatants": ["kael"]}).json()["token"]
    bob = table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": "Bob", "combatants": ["brin"]}).json()["token"]
    assert table.command({"command": "roll_initiative", "dice": [6, 2, 1]}).status_code == 201
    assert table.command({"command": "end_turn", "who": "kael"}, token=alice).status_code == 201  # (C20: its
    # Bonus Actions are for defence until its first turn)
    declared = table.command({"command": "declare_attack", "attacker": "vesh", "target": "kael", "unarmed": True})
    assert declared.status_code == 201, declared.text  # Kael's Interrupt window (C24): he lets it pass
    hit = table.command({"command": "pass_reaction", "who": "kael", "dice": [6, 1, 1]})  # (the GM gives all faces)
    assert hit.status_code == 201, hit.text  # hit 6 + 1 against defense 1: a hit; Kael declines his window
    assert table.command({"command": "answer_active_defense", "defender": "kael"}).status_code == 201
    assert "<li>Kael took 6 damage from the attack (C13)</li>" in fragment(table, alice), fragment(table, alice)
    assert "damage from the attack" not in fragment(table, bob)


def test_an_interrupt_staged_for_its_reactors_own_base_defense_says_what_the_die_is_for(table: Any) -> None:
    """C24, C29: Alice's Kael attacks Skarn (the GM's), who Interrupts; the GM types Skarn's hit (1, 1), Alice her
    base defense and her hit (8; 8, 6): the Interrupt misses and Kael's attack goes on, staged for Skarn's base
    defense die, the GM's: the GM's roll box says so, "Skarn Gutterjaw's base defense" (it said "React by Skarn
    Gutterjaw": the die is the reactor's own, but not for its own strike; found by a tester)."""
    table.create(names=("kael", "skarn"), dice="manual")
    alice = _seat(table, "Alice", "kael")
    for command in ({"command": "roll_initiative", "dice": [1, 6]}, {"command": "engage", "who": "kael",
                                                                     "others": ["skarn"]},
                    {"command": "end_turn", "who": "skarn"}):
        assert table.command(command).status_code == 201, command
    declared = table.command({"command": "declare_attack", "attacker": "kael", "target": "skarn",
                              "weapon": "longsword"}, token=alice, stage=True)
    assert declared.json()["options"]["waiting"]["kind"] == "interrupt", declared.text
    staged = table.command({"command": "react", "who": "skarn", "weapon": "maul", "dice": [1, 1]}, stage=True)
    assert staged.status_code == 202, staged.text
    given = table.client.post("/fights/duel/staged", headers=table.auth(alice),
                              json={"id": staged.json()["id"], "dice": [8, 8, 6]})
    assert given.status_code == 202 and given.json()["awaiting"] == "the GM", given.text
    said = _said(html.unescape(fragment(table, table.gm)), '<h2 id="roll-h"', "</h2>")
    assert said == "Roll your dice: Skarn Gutterjaw's base defense", said


def test_a_players_turn_held_by_a_step_it_is_not_shown_says_the_table_waits_for_the_gm(table: Any) -> None:
    """C24 and docs/server.md's known limit (the fight waits on something a seat is not shown): Kael (Alice's)
    attacks Vesh with Vesh and hidden Skarn beside him, both past their turns; the GM lets Vesh's Interrupt pass,
    and hidden Skarn's stands: Alice's options offer nothing and wait on nothing she sees, and her page says her
    turn waits for the GM (it said "Your turn" over nothing: a GM tester), naming no one she does not see."""
    table.create(names=("kael", "vesh", "skarn"), dice="manual", hidden=["skarn"])
    alice = _seat(table, "Alice", "kael")
    for command, token in (({"command": "roll_initiative", "dice": [1, 8, 6]}, None),
                           ({"command": "engage", "who": "kael", "others": ["vesh", "skarn"]}, None),
                           ({"command": "end_turn", "who": "vesh"}, None),
                           ({"command": "end_turn", "who": "skarn"}, None),
                           ({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"},
                            alice),
                           ({"command": "pass_reaction", "who": "vesh"}, None)):
        assert table.command(command, token=token).status_code == 201, command
    options = table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"]
    assert (options["turn"], options["waiting"], options["offers"]) == ("kael", None, [])
    mine = fragment(table, alice)
    assert _said(mine, '<section class="turn-commands" id="turn-commands"') == (
        "Your turn: Kael Arden Nothing for you to give yet: the table waits for the GM.")
    assert "skarn" not in mine.lower() and "gutterjaw" not in mine.lower()
    assert 'id="turn-waits"' not in fragment(table, table.gm)


def test_a_players_turn_with_nothing_left_but_its_end_says_so_over_end_turn(table: Any) -> None:
    """C23, C8: Kael (Alice's) moves out of Vesh's reach, Vesh's Attack of Opportunity hits and Alice Blocks it; Kael
    has no Movement left and nothing else to give, and Alice's page says there is nothing left but to end the turn,
    over her End turn (it said "the table waits for the GM" there: a GM tester's player waited)."""
    table.create(dice="manual")
    alice = _seat(table, "Alice", "kael")
    for command, token in (({"command": "roll_initiative", "dice": [1, 6]}, None),
                           ({"command": "engage", "who": "kael", "others": ["vesh"]}, None),
                           ({"command": "end_turn", "who": "vesh"}, None),
                           ({"command": "move", "who": "kael", "leaves": ["vesh"]}, alice),
                           ({"command": "react", "who": "vesh", "weapon": "knife", "dice": [8, 6, 1]}, None),
                           ({"command": "answer_active_defense", "defender": "kael", "defense": "block",
                             "dice": [8]}, alice)):
        assert table.command(command, token=token).status_code == 201, command
    options = table.client.get("/fights/duel/options", headers=table.auth(alice)).json()["options"]
    assert (options["turn"], options["waiting"]) == ("kael", None)
    assert [o["command"] for o in options["offers"]] == ["end_turn"]
    mine = fragment(table, alice)
    assert _said(mine, '<section class="turn-commands" id="turn-commands"') == (
        "Your turn: Kael Arden Nothing left to do this turn but end it: End turn, below.")
    assert 'id="turn-waits"' not in mine and 'id="o-end_turn-kael"' in mine
    assert 'id="turn-done"' not in fragment(table, table.gm)


def test_an_initiative_tie_among_allies_tells_their_player_to_agree_and_the_gm_what_each_button_does(table: Any
                                                                                                     ) -> None:
    """C19: Kael and Brin (wardens, AGI d8 + 2 each) both roll 1: a tie among allies, which the GM records. Alice
    (Kael's) is told to agree an order with Brin's player for the GM to record (her page said "Kael, Brin decide",
    then "Nothing for this seat to answer: the table waits for Kael, Brin": a tester); the GM's roll-off button
    says "roll off" (it said "go"); a free decision "is free" (it read "it costs free")."""
    from tests.sheets import sheet as plain

    table.create(dice="manual", names=(), combatants=[
        msgspec.to_builtins(plain("kael", AGI=(8, 2))), msgspec.to_builtins(plain("brin", AGI=(8, 2))),
        msgspec.to_builtins(plain("vesh", side="raiders", AGI=(20, 0)))])
    alice = _seat(table, "Alice", "kael")
    answer = table.command({"command": "roll_initiative", "dice": [1, 1, 20]})
    assert answer.status_code == 201 and answer.json()["options"]["waiting"]["kind"] == "initiative_tie", answer.text
    mine = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment(table, alice))).split())
    assert "Nothing for this seat to answer" not in mine
    assert ("Kael and Brin agree the order they act in among themselves (C19): tell the GM, who records it, or "
            "has them roll off.") in mine and "Kael, Brin decide; it is free." in mine
    gm = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment(table, table.gm))).split())
    assert "the GM: roll off" in gm and "the GM: go" not in gm
    # the agreement is said as one tie's settling, the order as the order (a GM tester read the first as the second)
    assert table.command({"command": "agree_initiative", "order": ["brin", "kael"]}).status_code == 201
    lines = _top_lines(fragment(table, table.gm))
    assert "agreed among the tied: Brin, Kael" in lines and "order: Vesh, Brin, Kael" in lines, lines


def test_a_lists_note_on_the_page_says_where_the_unlisted_may_be_named() -> None:
    """An offer that lists 12 of 21 others notes the 9 left out; the page's lists hold those listed alone, so its
    note says which come first and where the others may be named (it said "name any", with no field to name one
    in: a GM tester's 22 combatants)."""
    from omen_server.table import _note_named

    said = _note_named("9 more combatant(s) not listed: name any (the rules check it when given)", {})
    assert said == ("9 more combatant(s) not in these lists (those engaged first, then foes, then allies): to name "
                    "one, give the command with omen do or over HTTP")


def test_the_gms_form_notes_are_words_that_promise_only_what_the_form_does(table: Any) -> None:
    """The GM's forms' notes name no argument in backticks and offer nothing the form lacks: Engage's said
    "`others` may name several combatants at once" over a select of one pair each (a GM tester); a contest's and an
    ambush's said any skill, any combatants, where their selects hold one skill and whole sides; a condition a save
    ends names the "applied by" select, not `by`."""
    from omen_core.content import load_ruleset

    ruleset = msgspec.to_builtins(load_ruleset(Path(__file__).parents[1] / "data" / "c40-ruleset.toml"))
    made = table.client.post("/fights", json={"id": "duel", "ruleset": ruleset,
                                              "combatants": list(bundled_sheets().values())})
    assert made.status_code == 201, made.text
    table.gm = made.json()["gm_token"]
    page = fragment(table, table.gm)
    notes = {form: html.unescape(note) for form, inside in re.findall(
        r'<form class="command[^"]*" id="([^"]+)"(.*?)</form>', page, re.S)
        for note in re.findall(r'<p class="muted">([^<]*)</p>', inside)}
    assert notes["o-engage-gm"] == "each pair is listed once: either way round, it is the same engagement"
    assert notes["o-begin_ambush-gm"] == ("each choice has one side ambush all the others: for fewer, give the "
                                          "command with omen do or over HTTP")
    assert notes["o-contest-brin"].startswith("the choices here contest one skill: for another skill")
    assert table.command({"command": "roll_initiative"}).status_code == 201
    page = fragment(table, table.gm)
    start = page.index('id="o-apply_condition-gm"')
    said = html.unescape(page[start:page.index("</form>", start)])
    assert "Poisoned: a save ends it (C40), opposed by whoever applied it: choose them under “applied by”" in said
    assert "`" not in html.unescape(page)


def test_a_player_of_several_combatants_reads_whose_each_ability_is(table: Any) -> None:
    """C37: Alice plays Kael (Healing Word) and Brin (none): her list says "(Kael Arden)" beside it, as the GM's
    does (a player of three combatants could not tell whose her abilities were: a GM tester's battle); a player of
    one combatant's list names no one."""
    kael = {**sheet("kael"), "abilities": ["healing_word"]}
    table.create(combatants=[kael, sheet("brin"), sheet("vesh")])
    tokens = {name: table.client.post("/fights/duel/seats", headers=table.auth(), json={
        "kind": "player", "name": name, "combatants": plays}).json()["token"]
        for name, plays in (("Alice", ["kael", "brin"]), ("Cara", ["kael"]))}
    for name, whose in (("Alice", True), ("Cara", False)):
        page = fragment(table, tokens[name])
        listed = page[page.index('id="abilities-h"'):page.index("</section>", page.index('id="abilities-h"'))]
        assert ('<strong>Healing Word</strong> <span class="muted">(Kael Arden)</span>' in listed) is whose, name


def test_a_choice_of_many_rolls_counts_them_and_lists_each_on_demand(table: Any) -> None:
    """Initiative for eight combatants: the GM's Roll initiative says "Rolls: 8 rolls" (with "then perhaps N more"
    where a tie could add roll-offs, C19) and lists each roll under "Each roll", opened on demand (22 combatants'
    rolls made a paragraph above the button: a large-battle GM tester); two combatants' rolls are spelled out."""
    import copy

    cast = []
    for i in range(4):
        for base in ("kael", "vesh"):
            made = copy.deepcopy(sheet(base))
            made.update(id=f"{base}{i}", name=f"{made['name']} {i}")
            cast.append(made)
    table.create(combatants=cast)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment(table, table.gm))).split())
    assert re.search(r"Rolls: 8 rolls(, then perhaps \d+ more)? Each roll Kael Arden 0's initiative: d\d+ "
                     r"\(check\);", text), text[:3000]
    table.create(fight_id="two")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment(table, table.gm, "two"))).split())
    assert "Rolls: Kael Arden's initiative: d" in text and "Each roll" not in text


def test_right_to_left_names_keep_their_order_on_the_page(table: Any) -> None:
    """Rashid (رشيد) and Shira (שירה) tie on initiative: the card's lines and the chips isolate each name (<bdi>), so
    "order: שירה, رشيد, Vesh the Cinder-Hand" keeps its order in a browser (two right-to-left names side by side
    read reversed: a tester of non-English names); a left-to-right name is written as it is, and no attribute
    holds markup (a note being edited, a card's words)."""
    rashid = {**sheet("kael"), "id": "rashid", "name": "رشيد"}
    shira = {**sheet("brin"), "id": "shira", "name": "שירה"}
    table.create(dice="manual", names=(), combatants=[rashid, shira, sheet("vesh")])
    assert table.command({"command": "roll_initiative", "dice": [3, 3, 1]}).status_code == 201
    page = fragment(table, table.gm)
    assert "<li>order: <bdi>שירה</bdi>, <bdi>رشيد</bdi>, Vesh the Cinder-Hand</li>" in page
    assert '<p class="chip-name"><strong><bdi>رشيد</bdi></strong>' in page
    assert "<bdi>Vesh" not in page and "&lt;bdi" not in page and not re.search(r'="[^"]*<bdi>', page)


def test_a_move_leaving_several_reaches_names_them_all() -> None:
    """C23: the move form's choice away from several foes reads "the reach of Grukk and Snikt" (a choice of one,
    "Grukk's reach"; a list read "Grukk, Snikt's reach")."""
    from omen_server.table import _reach

    names = {"a": "Grukk", "b": "Snikt", "c": "Murra"}
    assert (_reach(names, ("a",)), _reach(names, ("a", "b")), _reach(names, ("a", "b", "c"))) == \
        ("Grukk's reach", "the reach of Grukk and Snikt", "the reach of Grukk, Snikt and Murra")
