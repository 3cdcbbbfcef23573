"""The table page on a phone in a real browser (390x844, and 320 px at 200 % text), one fight per test on one
``omen serve``: where the focus and the screen go when another seat acts, a refused face said beside its field, a
choice a select cuts said whole, a long title cut, and the pinned End turn kept short (phone testers' findings).

Headless Debian Chromium driven by Playwright; skipped where Chromium is missing, unless OMEN_REQUIRE_BROWSER is
set (then a missing browser fails).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from omen_server.table import bundled_sheets
from tests.browser import one_browser, one_server
from tests.server.processes import Server
from tests.server.test_table_browser import ARTIFACTS, Watch
from tests.server.test_tracker_page_browser import PHONE, focused, head_now, origin_of, page_of, seat

#: A 320 px phone (or 1280 px at 400 % zoom), its text at 200 %: set on the page's root (the policy allows no
#: style element, and the style sheet sizes the page in rem).
SMALL = {"viewport": {"width": 320, "height": 568}, "has_touch": True, "is_mobile": True}
LONG_KAEL = "Kaelthariondras Arden-Whitmore of the Northern Watch"
LONG_VESH = "Vesh the Cinder-Hand, Warlock of the Ashen Vale"
LONG_SWORD = "Longsword of the Ember Ford Wardens, notched and old"
LONG_TITLE = ("The Battle at Ember Ford: Kael and Brin hold the crossing against Vesh the Cinder-Hand and Skarn "
              "Gutterjaw as the river rises and the night comes down on the wardens' last camp")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``omen serve`` for the module's tests (each makes a fight of its own)."""
    yield from one_server(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module's tests."""
    yield from one_browser()


def long_fight(server: Server, fight_id: str, dice: str = "seeded") -> tuple[str, str]:
    """A fight of long names (Kael's, his sword's, Vesh's) and a long title, Kael, Vesh and Skarn, initiative rolled
    with Kael first, Alice playing Kael: the GM's token and Alice's."""
    sheets = bundled_sheets()
    kael = {**sheets["kael"], "name": LONG_KAEL,
            "weapons": [{**sheets["kael"]["weapons"][0], "name": LONG_SWORD}]}
    vesh = {**sheets["vesh"], "name": LONG_VESH}
    status, made = server.call("POST", "/fights", {"id": fight_id, "title": LONG_TITLE, "dice": dice,
                                                   "combatants": [kael, vesh, sheets["skarn"]]})
    assert status == 201, made
    gm = str(made["gm_token"])
    alice = seat(server, fight_id, gm, "Alice", "kael")
    status, answer = server.call("POST", f"/fights/{fight_id}/commands",
                                 {"command": {"command": "roll_initiative", "dice": [6, 1, 1]}}, token=gm)
    assert status == 201 and answer["options"]["turn"] == "kael", answer
    return gm, alice


def phone(browser: Any, watch: Watch, server: Server, fight_id: str, token: str, large: bool = False) -> Any:
    """The seat's page on a phone: 390x844, or 320x568 at 200 % text (``large``)."""
    page = page_of(browser, watch, origin_of(server), fight_id, token, **(SMALL if large else PHONE))
    if large:
        # (set after the page opened: a resize has it measure its bars again, as a zoom would)
        page.evaluate("document.documentElement.style.fontSize = '200%'; dispatchEvent(new Event('resize'))")
        page.wait_for_timeout(100)
    return page


def moved(page: Any, head: str) -> None:
    """Wait until the page shows a head other than ``head`` and is not busy."""
    page.wait_for_function(f"() => document.querySelector('.table-panel').dataset.head !== '{head}' "
                           "&& !document.body.dataset.busy")
    page.wait_for_timeout(200)


#: Where the screen ends for what the page brings into sight: above the turn's bar pinned at the foot (the page's
#: scroll padding).
FOOT = "innerHeight - parseFloat(document.documentElement.style.scrollPaddingBottom || '96')"


def test_another_seats_command_shows_the_top_card_from_its_top(server: Server, browser: Any) -> None:
    """Alice's Attack button focused low on her phone (320 px, 200 % text) and the GM ends Kael's turn: the focus goes
    to the top card and its top is on the screen, above the pinned bar (it was 2,300 px above the screen, the page
    left in the log: a phone tester)."""
    gm, alice = long_fight(server, "othertop")
    watch = Watch(origin_of(server))
    page = phone(browser, watch, server, "othertop", alice, large=True)
    page.locator("#turn-commands form[data-command=declare_attack] button[type=submit]").focus()
    page.evaluate("() => { const b = document.querySelector('#turn-commands form[data-command=declare_attack] "
                  "button[type=submit]').getBoundingClientRect(); window.scrollBy(0, b.bottom - innerHeight + 200); }")
    head = head_now(page)
    status, answer = server.call("POST", "/fights/othertop/commands",
                                 {"command": {"command": "end_turn", "who": "kael"}}, token=gm)
    assert status == 201, answer
    moved(page, head)
    assert focused(page) == "top-card"
    top, foot = page.evaluate(f"[document.querySelector('#top-card').getBoundingClientRect().top, {FOOT}]")
    assert 0 <= top < foot, (top, foot)
    page.context.close()
    assert watch.errors == [] and watch.outside == [], watch.errors


def test_another_seats_command_leaves_a_field_typed_in_its_focus_caret_and_place(server: Server,
                                                                                  browser: Any) -> None:
    """The GM on a phone types a reason in the undo form, the caret mid-word, and another GM page ends Kael's turn
    (the top card above the field grows): the field keeps the focus, what was typed, the caret, and its place on the
    screen."""
    gm, _alice = long_fight(server, "typing")
    watch = Watch(origin_of(server))
    page = phone(browser, watch, server, "typing", gm)
    reason = page.locator("#o-undo-gm input[data-path=reason]")
    reason.fill("misread the die")
    reason.evaluate("input => { input.scrollIntoView({ block: 'center' }); input.focus(); "
                    "input.setSelectionRange(4, 4); }")
    where = reason.evaluate("input => input.getBoundingClientRect().top")
    head = head_now(page)
    status, answer = server.call("POST", "/fights/typing/commands",
                                 {"command": {"command": "end_turn", "who": "kael"}}, token=gm)
    assert status == 201, answer
    moved(page, head)
    assert page.evaluate("document.activeElement.dataset.path") == "reason"
    assert reason.input_value() == "misread the die"
    assert reason.evaluate("input => [input.selectionStart, input.selectionEnd]") == [4, 4]
    assert abs(reason.evaluate("input => input.getBoundingClientRect().top") - where) < 2
    page.context.close()
    assert watch.errors == [] and watch.outside == [], watch.errors


def refused(page: Any, wrong: Any, other: Any, said: str, head: str) -> None:
    """``wrong`` refused in the page: focused, marked invalid (``other`` not), described by its own line ``said``
    right under it, both on the screen; the form's own line empty, nothing sent."""
    page.wait_for_function(f"() => document.activeElement.id === '{wrong.get_attribute('id')}'")
    assert wrong.get_attribute("aria-invalid") == "true" and other.get_attribute("aria-invalid") is None
    line = page.locator(f"#{wrong.get_attribute('aria-describedby')}")
    assert line.inner_text() == said
    field, under = wrong.bounding_box(), line.bounding_box()
    assert field is not None and under is not None
    assert 0 <= under["y"] - (field["y"] + field["height"]) < 16, (field, under)  # right under the field
    foot = page.evaluate(FOOT)
    assert field["y"] >= 0 and under["y"] + 20 <= foot, (field, under, foot)  # on the screen, its line begun
    assert page.locator("#give-dice .form-error").inner_text() == ""
    assert head_now(page) == head


def test_a_refused_face_is_said_beside_its_field_and_the_first_wrong_one_is_focused(server: Server,
                                                                                       browser: Any) -> None:
    """Alice's roll box for Kael's hit (the GM gave the attack; a d8 and a d6), at 390 px and at 320 px with 200 %
    text: with the first face blank and the second 99, Give the dice marks the first field invalid, focused and on
    the screen, described by its own line right under it ("Blank: ..."); the first typed, the second is refused the
    same way ("99: a d6 shows ..."); the form's own line stays empty and nothing is sent until both are faces."""
    for large in (False, True):
        fight_id = f"faces{int(large)}"
        gm, alice = long_fight(server, fight_id, dice="manual")
        status, staged = server.call("POST", f"/fights/{fight_id}/commands", {
            "command": {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"},
            "stage": True}, token=gm)
        assert status == 202, staged
        watch = Watch(origin_of(server))
        page = phone(browser, watch, server, fight_id, alice, large=large)
        box = page.locator("#give-dice")
        first, second = box.locator("input.face").nth(0), box.locator("input.face").nth(1)
        second.fill("99")
        head = head_now(page)
        box.locator("button[type=submit]").click()
        refused(page, first, second, "Blank: type the face you rolled.", head)
        first.fill("5")
        page.keyboard.press("Enter")  # in the first field: its form is sent
        refused(page, second, first, "99: a d6 shows a whole number from 1 to 6.", head)
        second.fill("6")
        page.keyboard.press("Enter")
        box.wait_for(state="detached")  # given: the attack waits for the GM's dice now (Vesh's base defense)
        assert page.locator("#rollbox h2").inner_text() == "Waiting for the GM's dice"
        page.context.close()
        assert watch.outside == [], watch.outside


def test_an_attack_choice_the_select_cuts_is_said_whole_under_it(server: Server, browser: Any) -> None:
    """On Alice's phone (390 px, and 320 px at 200 % text) the attack select holds Vesh's long name and Kael's long
    sword, which it cuts: the chosen option's words stand whole under it, within the screen's width, and follow a
    new choice and another seat's change; a choice the select shows whole is not said again (at 390 px)."""
    for large in (False, True):
        fight_id = f"choice{int(large)}"
        gm, alice = long_fight(server, fight_id)
        watch = Watch(origin_of(server))
        page = phone(browser, watch, server, fight_id, alice, large=large)
        form = page.locator("#turn-commands form[data-command=declare_attack]")
        select, chosen = form.locator("select.choice"), form.locator(".chosen")
        labels = select.locator("option").all_inner_texts()
        vesh = next(label for label in labels if label.startswith(LONG_VESH) and LONG_SWORD in label)
        select.select_option(label=vesh)
        assert chosen.is_visible() and chosen.inner_text() == vesh
        right = chosen.evaluate("e => e.getBoundingClientRect().right")
        assert right <= page.viewport_size["width"], right
        head = head_now(page)
        status, answer = server.call("POST", f"/fights/{fight_id}/commands", {
            "command": {"command": "apply_condition", "who": "skarn", "condition": "Prone"}}, token=gm)
        assert status == 201, answer
        moved(page, head)
        assert select.evaluate("s => s.selectedOptions[0].textContent.trim()") == vesh
        assert chosen.is_visible() and chosen.inner_text() == vesh
        if not large:
            short = min(labels, key=len)
            select.select_option(label=short)
            assert chosen.is_hidden()
        page.context.close()
        assert watch.errors == [] and watch.outside == [], watch.errors


def test_end_turn_reads_end_turn_on_one_line_and_names_whose_to_a_screen_reader(server: Server,
                                                                                 browser: Any) -> None:
    """On Alice's phone (390 px, and 320 px at 200 % text), on the turn of Kael's 52-character name, the pinned
    button reads "End turn" on one line, the bar under a quarter of the screen (it repeated the name over five lines,
    over half of the small screen), and a screen reader hears "End turn: " and the name."""
    _gm, alice = long_fight(server, "endturn")
    watch = Watch(origin_of(server))
    for large in (False, True):
        page = phone(browser, watch, server, "endturn", alice, large=large)
        button = page.locator("form.end-turn button[type=submit]")
        shown = button.evaluate("b => [...b.childNodes].filter(n => n.tagName !== 'KBD').map(n => n.textContent)"
                                ".join('').trim()")
        assert shown == "End turn"
        assert page.get_by_role("button", name=f"End turn: {LONG_KAEL}").count() == 1
        lines = button.evaluate("b => { const r = document.createRange(); const t = [...b.childNodes].find(n => "
                                "n.nodeType === 3 && n.textContent.trim()); r.selectNodeContents(t); "
                                "return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }")
        assert lines == 1
        bar = page.locator(".turn-bar").bounding_box()
        assert bar is not None and bar["height"] < page.viewport_size["height"] / 4, bar
        page.context.close()
    assert watch.errors == [] and watch.outside == [], watch.errors


def test_a_long_title_is_cut_to_two_lines_and_opens_whole(server: Server, browser: Any) -> None:
    """At 320 px and 200 % text the fight's 180-character title takes two lines, "Your turn" is on the first screen,
    and "Whole title" opens the rest (said expanded), which stays open across another seat's change."""
    gm, alice = long_fight(server, "title")
    watch = Watch(origin_of(server))
    page = phone(browser, watch, server, "title", alice, large=True)
    title, more = page.locator("#fight-title"), page.locator("#title-more")
    line = float(title.evaluate("h => parseFloat(getComputedStyle(h).lineHeight)"))
    assert title.bounding_box()["height"] <= 2 * line + 1
    assert page.evaluate("document.querySelector('.fight-bar .your-turn').getBoundingClientRect().bottom") <= 568
    assert more.is_visible() and more.get_attribute("aria-expanded") == "false"
    more.click()
    assert title.bounding_box()["height"] > 4 * line
    assert more.get_attribute("aria-expanded") == "true" and more.inner_text() == "Shorter title"
    head = head_now(page)
    status, answer = server.call("POST", "/fights/title/commands",
                                 {"command": {"command": "apply_condition", "who": "skarn", "condition": "Prone"}},
                                 token=gm)
    assert status == 201, answer
    moved(page, head)
    assert title.bounding_box()["height"] > 4 * line and more.get_attribute("aria-expanded") == "true"
    page.context.close()
    assert watch.errors == [] and watch.outside == [], watch.errors


def test_a_turn_with_nothing_left_but_its_end_says_so_over_end_turn(server: Server, browser: Any) -> None:
    """On Alice's phone (390x844), once Kael has moved out of Vesh's reach and Blocked the Attack of Opportunity,
    "Your turn" says there is nothing left to do but end it (it said "the table waits for the GM" over End turn, and
    a GM tester's player waited), End turn on the first screen, and a tap on it ends Kael's turn."""
    sheets = bundled_sheets()
    status, made = server.call("POST", "/fights", {"id": "spent", "title": "spent", "dice": "manual",
                                                   "combatants": [sheets["kael"], sheets["vesh"]]})
    assert status == 201, made
    gm = str(made["gm_token"])
    alice = seat(server, "spent", gm, "Alice", "kael")
    for command, token in (({"command": "roll_initiative", "dice": [1, 6]}, gm),
                           ({"command": "engage", "who": "kael", "others": ["vesh"]}, gm),
                           ({"command": "end_turn", "who": "vesh"}, gm),
                           ({"command": "move", "who": "kael", "leaves": ["vesh"]}, alice),
                           ({"command": "react", "who": "vesh", "weapon": "knife", "dice": [8, 6, 1]}, gm),
                           ({"command": "answer_active_defense", "defender": "kael", "defense": "block",
                             "dice": [8]}, alice)):
        status, answer = server.call("POST", "/fights/spent/commands", {"command": command}, token=token)
        assert status == 201, (command, answer)
    watch = Watch(origin_of(server))
    page = phone(browser, watch, server, "spent", alice)
    turn = page.locator("#turn-commands")
    assert turn.locator("h2").inner_text() == "Your turn: Kael Arden"
    assert turn.locator("#turn-done").inner_text() == "Nothing left to do this turn but end it: End turn, below."
    assert page.locator("#turn-waits").count() == 0 and turn.locator("form").count() == 0
    end = page.get_by_role("button", name="End turn: Kael Arden")
    box = end.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, box
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "phone-nothing-left.png"))
    head = head_now(page)
    end.click()
    moved(page, head)
    assert page.locator(".table-panel").get_attribute("data-turn") == "vesh"
    assert page.locator("#turn-done").count() == 0
    page.context.close()
    assert watch.errors == [] and watch.outside == [], watch.errors
