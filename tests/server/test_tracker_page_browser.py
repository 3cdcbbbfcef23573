"""The table page's own behaviour in a real browser, one fight per test on one ``omen serve``: a key pressed twice,
the refusals it says, the confirmations it asks, and the phone's tap targets.

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

GM_SCREEN = {"width": 1280, "height": 800}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``omen serve`` for the module's tests (each makes a fight of its own)."""
    yield from one_server(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module's tests."""
    yield from one_browser()


def fight(server: Server, fight_id: str, *who: str, dice: str = "seeded") -> str:
    """A fight of the bundled sheets ``who``, its initiative rolled (Kael first where he is in it); its GM token."""
    sheets = bundled_sheets()
    status, made = server.call("POST", "/fights", {"id": fight_id, "title": fight_id, "dice": dice,
                                                   "combatants": [sheets[w] for w in who]})
    assert status == 201, made
    return str(made["gm_token"])


def seat(server: Server, fight_id: str, gm: str, name: str, *plays: str) -> str:
    status, made = server.call("POST", f"/fights/{fight_id}/seats", {"kind": "player", "name": name,
                                                                    "combatants": list(plays)}, token=gm)
    assert status == 201, made
    return str(made["token"])


def page_of(browser: Any, watch: Watch, origin: str, fight_id: str, token: str, **context: Any) -> Any:
    """A page of the table as the seat of ``token``, live."""
    from playwright.sync_api import expect

    page = watch.page(browser.new_context(**(context or {"viewport": GM_SCREEN})))
    page.set_default_timeout(10_000)
    page.goto(f"{origin}/table/{fight_id}#token={token}")
    expect(page.locator("#live")).to_have_text("live")
    return page


def origin_of(server: Server) -> str:
    return f"http://127.0.0.1:{server.port}"


def test_a_double_press_of_e_ends_one_turn_and_says_so_quietly(server: Server, browser: Any) -> None:
    """E pressed again the moment the table has changed (a double press) is sent with the head the page showed
    before the change, so the server refuses it as stale (409): Kael's turn ends, Vesh's does not, and the page
    says in a quiet note (not a problem) that nothing was done."""
    gm = fight(server, "double", "kael", "vesh")
    status, answer = server.call("POST", "/fights/double/commands",
                                 {"command": {"command": "roll_initiative", "dice": [6, 1]}}, token=gm)
    assert status == 201 and answer["options"]["turn"] == "kael", answer
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "double", gm)
    before = page.locator(".table-panel").get_attribute("data-head")
    page.keyboard.press("e")
    # the table changed and the first press is answered: a key pressed while a command is in flight is not read,
    # and under load the new table shows before the page is free again
    page.wait_for_function(f"() => document.querySelector('.table-panel').dataset.head !== '{before}' "
                           "&& !document.body.dataset.busy")
    page.keyboard.press("e")
    page.wait_for_function("() => !document.body.dataset.busy && document.querySelector('#message').textContent")
    page.wait_for_timeout(300)
    assert page.locator(".table-panel").get_attribute("data-turn") == "vesh"
    assert page.locator(".log .entry[data-kind=end_turn]").count() == 1
    message = page.locator("#message")
    assert message.get_attribute("class") == "note"
    assert message.inner_text().startswith("Not sent: the table moved on (to #")
    assert page.locator(".form-error:not(:empty)").count() == 0
    page.context.close()
    assert watch.outside == []


def test_a_refused_field_is_said_by_its_label_in_words(server: Server, browser: Any) -> None:
    """The stacks field carries the command schema's minimum (min="1"); past it (the minimum taken off, -4 typed),
    the server's refusal (400 at $.command.stacks) is said by the form's label, in words, with no JSON path."""
    gm = fight(server, "stacks", "kael", "vesh")
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "stacks", gm)
    form = page.locator("form[data-command=apply_condition]")
    form.evaluate("form => { form.closest('details').open = true; }")
    form.locator("select.pair[data-pair='0']").select_option("vesh")  # whom and which: chosen on purpose
    form.locator("select.pair[data-pair='1']").select_option("Prone")
    stacks = form.locator("input[data-path=stacks]")
    assert stacks.get_attribute("min") == "1"
    stacks.evaluate("input => input.removeAttribute('min')")
    stacks.fill("-4")
    form.locator("button[type=submit]").click()
    error = form.locator(".form-error")
    error.wait_for(state="visible")
    assert error.inner_text() == "Not sent: stacks must be a whole number, at least 1."
    page.context.close()


#: Every control a seat taps, as the page shows it: a radio or a checkbox by its label (the label is the target).
TARGETS = """() => Array.from(document.querySelectorAll(
    'button, select, input:not([type=hidden]):not([type=radio]):not([type=checkbox]), a[href], summary, '
    + 'label:has(> input[type=radio]), label:has(> input[type=checkbox])'))
  .filter((el) => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden'
          && !el.closest('.visually-hidden, header.top, .skip'))
  .map((el) => { const r = el.getBoundingClientRect();
                 return [el.outerHTML.slice(0, 80), Math.round(r.width), Math.round(r.height)]; })"""

#: The contrast of an element's text with what it is drawn on (WCAG 2: the relative luminances), opacity included.
CONTRAST = """(el) => {
  const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92
                                                     : ((v + 0.055) / 1.055) ** 2.4; })
                                     .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  let back = null, alpha = 1;
  for (let at = el; at; at = at.parentElement) {
    const style = getComputedStyle(at);
    alpha *= Number(style.opacity);
    const b = rgb(style.backgroundColor);
    if (!back && (b.length < 4 || b[3] > 0)) back = b.slice(0, 3);
  }
  back = back || [255, 255, 255];
  const fg = rgb(getComputedStyle(el).color).slice(0, 3).map((v, i) => v * alpha + back[i] * (1 - alpha));
  const [a, b] = [lum(fg), lum(back)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def test_a_phones_controls_are_big_enough_to_tap_and_a_downed_card_is_legible(server: Server,
                                                                                browser: Any) -> None:
    """On Alice's phone (390x844, touch) every control on Kael's turn is at least 44x44 CSS px (the radios by
    their labels), with no key hint on a button; once Vesh is down (Kael's critical hit), his chip's "Dying",
    "engaged with..." and "down" read at 4.5:1 or more in the light scheme on both pages, and a tap on Dying opens
    what it does (C36) on the phone, where a tooltip cannot reach; "down" is said once there (by the HP band, not
    a badge as well: found by a tester)."""
    gm = fight(server, "phone", "kael", "vesh")
    alice = seat(server, "phone", gm, "Alice", "kael")
    status, _ = server.call("POST", "/fights/phone/commands",
                            {"command": {"command": "roll_initiative", "dice": [6, 1]}}, token=gm)
    assert status == 201
    watch = Watch(origin_of(server))
    phone = page_of(browser, watch, origin_of(server), "phone", alice, **PHONE)
    small = [t for t in phone.evaluate(TARGETS) if t[1] < 44 or t[2] < 44]
    assert small == [], small
    assert phone.locator("button kbd").first.is_visible() is False
    for body in ({"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                  "dice": [8, 6, 1]}, {"command": "answer_active_defense", "defender": "vesh"}):
        status, answer = server.call("POST", "/fights/phone/commands", {"command": body}, token=gm)
        assert status == 201, answer
    desk = page_of(browser, watch, origin_of(server), "phone", gm)
    for page, down in ((phone, ".band.down"), (desk, ".badge.bad")):  # "down" once: the band says it on the phone
        page.wait_for_selector(f".chip[data-id=vesh] {down}")
        chip = page.locator(".chip[data-id=vesh]")
        assert chip.locator(".badge.bad").count() == (0 if page is phone else 1)
        for what in (".cond[data-condition=Dying]", ".chip-eng", down):
            ratio = chip.locator(what).evaluate(CONTRAST)
            assert ratio >= 4.5, (what, ratio)
    dying = phone.locator(".chip[data-id=vesh] details.cond-box")
    dying.locator("summary").tap()
    said = dying.locator(".cond-said")
    assert said.is_visible()
    assert said.inner_text().startswith("Dying: at 0 HP (C36): treated as Incapacitated (C10): takes no turn")
    assert "as the rules say" not in said.inner_text()
    phone.context.close()
    desk.context.close()


def test_an_undone_cards_verdict_is_legible(server: Server, browser: Any) -> None:
    """Kael's critical hit on Vesh, undone by the GM: its verdict, struck through on the top card and in the log,
    reads at 4.5:1 or more on Alice's phone and the GM's page, in the light and the dark scheme (faded to 60 %, her
    green "HIT, CRITICAL" read at about 2.5:1: an accessibility tester)."""
    gm = fight(server, "undone", "kael", "vesh", dice="manual")
    alice = seat(server, "undone", gm, "Alice", "kael")
    for body in ({"command": "roll_initiative", "dice": [6, 1]},
                 {"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword",
                  "dice": [8, 6, 1]}, {"command": "answer_active_defense", "defender": "vesh"},
                 {"command": "undo", "reason": "misread the die"}):
        status, answer = server.call("POST", "/fights/undone/commands", {"command": body}, token=gm)
        assert status == 201, answer
    watch = Watch(origin_of(server))
    for scheme in ("light", "dark"):
        for token, context in ((alice, PHONE), (gm, {"viewport": GM_SCREEN})):
            page = page_of(browser, watch, origin_of(server), "undone", token, color_scheme=scheme, **context)
            verdicts = page.locator(".outcome.struck .verdict, .entry.struck .verdict")
            assert verdicts.count() >= 2
            for i in range(verdicts.count()):
                if verdicts.nth(i).is_visible():
                    ratio = verdicts.nth(i).evaluate(CONTRAST)
                    assert ratio >= 4.5, (scheme, verdicts.nth(i).inner_text(), ratio)
            page.context.close()


def test_a_name_of_one_long_word_breaks_and_spreads_over_nothing(server: Server, browser: Any) -> None:
    """A combatant named with 60 W's in a row (sheet names run to 80 characters) breaks within its chip: the
    initiative strip stays its width beside the top card, and neither the GM's page (1280) nor Alice's phone (390)
    scrolls sideways (the chips spread over the top card and End turn: a security tester)."""
    sheets = bundled_sheets()
    long_named = {**sheets["vesh"], "name": "W" * 60 + " the Long"}
    status, made = server.call("POST", "/fights", {"id": "longname", "title": "longname", "dice": "manual",
                                                   "combatants": [sheets["kael"], long_named]})
    assert status == 201, made
    gm = str(made["gm_token"])
    alice = seat(server, "longname", gm, "Alice", "kael")
    status, _ = server.call("POST", "/fights/longname/commands",
                            {"command": {"command": "roll_initiative", "dice": [1, 6]}}, token=gm)
    assert status == 201
    watch = Watch(origin_of(server))
    for token, context in ((gm, {"viewport": GM_SCREEN}), (alice, PHONE)):
        page = page_of(browser, watch, origin_of(server), "longname", token, **context)
        width = context["viewport"]["width"]  # type: ignore[index]
        assert page.evaluate("document.documentElement.scrollWidth") == width
        chip = page.locator(".chip[data-id=vesh]").bounding_box()
        assert chip is not None and chip["x"] + chip["width"] <= width
        if token == gm:  # the strip keeps its 17rem (272 px) beside the top card
            strip = page.locator("ol.chips").bounding_box()
            assert strip is not None and strip["width"] <= 272, strip
        page.context.close()


def test_publishing_the_log_asks_for_a_confirmation_first(server: Server, browser: Any) -> None:
    """Publishing the log cannot be taken back: the GM's button does nothing until the box saying so is ticked;
    then the log is published."""
    gm = fight(server, "publish", "kael", "vesh")
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "publish", gm)
    page.locator("#gm-publish summary").click()
    page.locator("#publish-form button[type=submit]").click()
    page.wait_for_timeout(400)
    status, settings = server.call("GET", "/fights/publish/settings", token=gm)
    assert status == 200 and settings["published"] is False
    page.locator("#publish-confirm").check()
    page.locator("#publish-form button[type=submit]").click()
    page.locator("#message.ok").wait_for()
    status, settings = server.call("GET", "/fights/publish/settings", token=gm)
    assert settings["published"] is True
    page.context.close()


def test_a_gm_form_sent_keeps_the_focus_and_the_place(server: Server, browser: Any) -> None:
    """The GM applies a condition from its tools: once the table is back, the focus is on that form's button again
    (not lost to the page with the button disabled while it was sent) and the page has not scrolled."""
    gm = fight(server, "focus", "kael", "vesh")
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "focus", gm)
    page.locator("#gm-apply_condition summary").click()
    form = page.locator("form[data-command=apply_condition]")
    form.locator("select.pair[data-pair='0']").select_option("vesh")
    form.locator("select.pair[data-pair='1']").select_option("Prone")
    form.scroll_into_view_if_needed()
    before, head = page.evaluate("scrollY"), page.locator(".table-panel").get_attribute("data-head")
    form.locator("button[type=submit]").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.querySelector('.table-panel').dataset.head !== '{head}' "
                           "&& !document.body.dataset.busy")
    assert page.evaluate("document.activeElement.closest('form')?.dataset.command") == "apply_condition"
    assert page.evaluate("scrollY") == before
    page.context.close()


def test_a_phones_decision_fits_the_first_screen_and_its_answer_keeps_the_reader_on_top(server: Server,
                                                                                          browser: Any) -> None:
    """On Alice's phone (390x844, touch), Vesh's attack on Kael (17 against 5, a crit as it stands, C7) opens her
    Active Defense: all four answers (Dodge, Block, Parry, Decline) are on the first screen, none below 844 px; she
    scrolls down into the log and taps Decline: once the table is back, the fight bar and the top card (the HIT) are
    on the screen, not the log (found by a tester: the page was left scrolled 573 px down)."""
    gm = fight(server, "fits", "kael", "vesh")
    alice = seat(server, "fits", gm, "Alice", "kael")
    for body in ({"command": "roll_initiative", "dice": [1, 6]},
                 {"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife",
                  "dice": [8, 6, 1]}):
        status, answer = server.call("POST", "/fights/fits/commands", {"command": body}, token=gm)
        assert status == 201, answer
    watch = Watch(origin_of(server))
    phone = page_of(browser, watch, origin_of(server), "fits", alice, **PHONE)
    phone.wait_for_selector("#decision.yours")
    assert phone.evaluate("scrollY") == 0
    buttons = phone.evaluate("() => [...document.querySelectorAll('#decision form.answer button')].map(b => "
                             "[b.textContent.trim(), Math.round(b.getBoundingClientRect().bottom)])")
    assert [label.split()[1] for label, _bottom in buttons] == ["Dodge", "Block", "Parry", "Decline"], buttons
    assert all(bottom <= 844 for _label, bottom in buttons), buttons
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone.screenshot(path=str(ARTIFACTS / "phone-decision-first-screen.png"))
    phone.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    head = phone.locator(".table-panel").get_attribute("data-head")
    phone.locator("#decision form.answer", has_text="Decline").locator("button").tap()
    phone.wait_for_function(f"() => document.querySelector('.table-panel').dataset.head !== '{head}' "
                            "&& !document.body.dataset.busy")
    assert phone.locator("#decision").count() == 0
    for what in (".fight-bar", "#top-card"):
        box = phone.locator(what).bounding_box()
        assert box is not None and 0 <= box["y"] <= 844 - 20, (what, box)
    assert phone.locator("#top-card .verdict").inner_text().startswith("HIT")
    phone.context.close()
    assert watch.outside == []


def test_a_command_sent_while_another_waits_for_dice_says_so_and_keeps_it(server: Server, browser: Any) -> None:
    """In a fight of physical dice the page stages every command; while a player's attack waits for dice, the GM's
    End turn (E) is refused 409 dice-staged (docs/server.md, Errors): the page says that a command waits for dice
    and who may withdraw it (not "the table moved on"), in the page's words: whose dice are awaited first and the
    roll box's "Withdraw the command" (not the API's DELETE; found by a tester), and the player's staged attack
    stays."""
    gm = fight(server, "waits", "kael", "vesh", dice="manual")
    status, answer = server.call("POST", "/fights/waits/commands",
                                 {"command": {"command": "roll_initiative", "dice": [6, 1]}}, token=gm)
    assert status == 201 and answer["options"]["turn"] == "kael", answer
    alice = seat(server, "waits", gm, "Alice", "kael")
    status, staged = server.call("POST", "/fights/waits/commands",
                                 {"command": {"command": "declare_attack", "attacker": "kael", "target": "vesh"},
                                  "stage": True}, token=alice)
    assert status == 202, staged
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "waits", gm)
    head = page.locator(".table-panel").get_attribute("data-head")
    page.keyboard.press("e")
    page.wait_for_function("() => !document.body.dataset.busy && [...document.querySelectorAll('#message, "
                           ".form-error')].some(e => e.textContent)")
    said = " ".join(page.locator("#message, .form-error").all_inner_texts())
    assert said.count("dice are awaited first") == 1 and "\u201cWithdraw the command\u201d" in said, said
    assert "DELETE" not in said and "moved on" not in said, said
    assert page.locator(".table-panel").get_attribute("data-head") == head
    status, offered = server.call("GET", "/fights/waits/options", token=gm)
    assert status == 200 and offered["staged"]["command"]["command"] == "declare_attack", offered
    page.context.close()
    assert watch.outside == []


def focused(page: Any) -> str:
    """The focused element: its id, else its form's id and its tag ("o-undo-gm button"); "body" when lost."""
    return str(page.evaluate("() => { const e = document.activeElement; if (!e || e === document.body) return 'body';"
                             " return e.id || `${e.form ? e.form.id : '?'} ${e.tagName.toLowerCase()}`; }"))


def sent(page: Any, head: str | None) -> None:
    """Wait until the page's own command is answered: the head moved from ``head`` (None: it need not) and the page
    is no longer busy."""
    moved = f"document.querySelector('.table-panel').dataset.head !== '{head}' && " if head is not None else ""
    page.wait_for_function(f"() => {moved}!document.body.dataset.busy")


def head_now(page: Any) -> str:
    return str(page.locator(".table-panel").get_attribute("data-head"))


def enter_on(page: Any, form: Any) -> None:
    """Press Enter on ``form``'s submit button (the focus on it, as a keyboard user has it) and wait until the page's
    command is answered, the head moved."""
    before = head_now(page)
    form.locator("button[type=submit]").focus()
    page.keyboard.press("Enter")
    sent(page, before)


def test_the_focus_follows_the_reader_after_each_action(server: Server, browser: Any) -> None:
    """WCAG 2.4.3 (found by a blind tester: the focus fell to the page's body after almost every action): Enter on
    Roll initiative leaves the focus on the top card (its form is gone), the fight bar on screen; Vesh's attack
    opens Kael's Active Defense (Alice's) and the focus goes to the decision's heading; the GM's Decline (its key)
    closes it and the focus goes to the top card (the HIT); a refused undo keeps the focus on its button, its error line
    saying why and describing it, the page not scrolled; ending the fight puts the focus on the top card and
    announces how it ended, once."""
    gm = fight(server, "keepfocus", "kael", "vesh")
    seat(server, "keepfocus", gm, "Alice", "kael")
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "keepfocus", gm)
    page.locator("form[data-command=roll_initiative] input.face").first.wait_for(state="attached")
    page.check("input[name=dice-mode][value=typed]")
    form = page.locator("#o-roll_initiative-gm")
    form.locator("input.face").nth(0).fill("1")  # Kael 1, Vesh 6: Vesh first
    form.locator("input.face").nth(1).fill("6")
    enter_on(page, form)
    assert focused(page) == "top-card"
    assert page.locator("#top-card .headline").inner_text() == "Initiative"
    assert page.locator("#fight-bar").bounding_box()["y"] >= 0
    attack = page.locator("#o-declare_attack-vesh")
    attack.locator("select.choice").select_option(label=next(
        o for o in attack.locator("select.choice option").all_inner_texts() if o.startswith("Kael Arden")))
    for i, face in enumerate(("8", "6", "1")):
        attack.locator(".choice-dice:not([hidden]) input.face").nth(i).fill(face)
    enter_on(page, attack)
    assert focused(page) == "decision-h"
    assert page.locator("#decision-h").inner_text() == "Waiting: Active Defense (C8)"  # Alice's, the GM may answer
    page.check("input[name=dice-mode][value=server]")
    decline = page.locator("#decision form.answer", has_text="Decline")
    key = decline.locator("kbd").inner_text()
    head = head_now(page)
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press(key)
    sent(page, head)
    assert focused(page) == "top-card"
    assert page.locator("#top-card .verdict").inner_text().startswith("HIT")
    undo = page.locator("#o-undo-gm")
    undo.locator("input[data-path=reason]").fill("back past the start")
    undo.locator("input[data-path=to_seq]").fill("9999")
    undo.locator("button[type=submit]").focus()
    page.keyboard.press("Enter")  # the first press asks for a confirmation, said to a screen reader too
    page.wait_for_function("() => document.querySelector('#announce').textContent.includes('Press again')")
    assert page.locator("#announce").inner_text() == ("This undoes nothing: no card from #9999 on. Press again to "
                                                      "confirm.")
    before = page.evaluate("scrollY")
    head = head_now(page)
    page.keyboard.press("Enter")
    sent(page, None)
    page.locator("#o-undo-gm-error:not(:empty)").wait_for()
    assert head_now(page) == head and focused(page) == "o-undo-gm button"
    assert "o-undo-gm-error" in str(undo.locator("button[type=submit]").get_attribute("aria-describedby"))
    assert page.evaluate("scrollY") == before
    page.locator("#gm-end_fight summary").click()
    end = page.locator("#o-end_fight-gm")
    end.get_by_label("How the fight ends").select_option(label="the raiders yield")
    enter_on(page, end)
    assert focused(page) == "top-card"
    assert page.locator("#announce").inner_text() == "The fight is over: the raiders yielded"
    page.context.close()
    assert watch.outside == []
    assert watch.errors == ["Failed to load resource: the server responded with a status of 422 (Unprocessable "
                            "Entity)"], "the refused undo alone"


def test_a_live_update_keeps_the_gms_chosen_condition_and_its_focus(server: Server, browser: Any) -> None:
    """WCAG 3.2.2 (found by a blind tester): the GM opens "Apply a condition" and picks Kael in "On", the focus on
    that select; another GM page ends the turn (E): once the table is back, the select has the same id, Kael still
    chosen, the box still open and the focus still on it; applying Prone then announces "Kael Arden is Prone" to the
    GM and to Alice, whose page shows Vesh's chip marked "foe" in words, its red edge kept under the turn's ring."""
    gm = fight(server, "keepform", "kael", "vesh")
    alice = seat(server, "keepform", gm, "Alice", "kael")
    status, answer = server.call("POST", "/fights/keepform/commands",
                                 {"command": {"command": "roll_initiative", "dice": [6, 1]}}, token=gm)
    assert status == 201, answer
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "keepform", gm)
    other = page_of(browser, watch, origin_of(server), "keepform", gm)
    player = page_of(browser, watch, origin_of(server), "keepform", alice)
    page.locator("#gm-apply_condition summary").click()
    who = page.get_by_label("On", exact=True)
    who.select_option(label="Kael Arden")
    who.focus()
    head = head_now(page)
    other.keyboard.press("e")
    page.wait_for_function(f"() => document.querySelector('.table-panel').dataset.head !== '{head}'")
    page.wait_for_timeout(300)
    assert focused(page) == "o-apply_condition-gm-who"
    assert page.locator("#o-apply_condition-gm-who").input_value() == "kael"
    assert page.locator("#gm-apply_condition").evaluate("d => d.open") is True
    page.get_by_label("the condition", exact=True).select_option("Prone")
    head = head_now(page)
    page.locator("#o-apply_condition-gm button[type=submit]").focus()
    page.keyboard.press("Enter")
    sent(page, head)
    assert focused(page) == "o-apply_condition-gm button"
    assert page.locator("#o-apply_condition-gm-who").input_value() == ""
    for one in (page, player):
        one.wait_for_function("() => document.querySelector('#announce').textContent.startsWith('Kael Arden is Prone')")
    assert page.locator("#announce").inner_text() == "Kael Arden is Prone. Round 1: Vesh the Cinder-Hand's turn"
    assert player.locator("li.chip[data-id=vesh] .foe-mark").inner_text() == "foe"
    vesh = player.locator("li.chip[data-id=vesh]")
    assert vesh.get_attribute("class") == "chip turn foe"
    assert vesh.evaluate("e => [getComputedStyle(e).borderLeftColor, getComputedStyle(e).borderTopColor]") == [
        player.evaluate("getComputedStyle(document.querySelector('.badge.foe-mark')).color"),
        player.evaluate("getComputedStyle(document.querySelector('.badge.now')).color")], "red edge, blue ring"
    for one in (page, other, player):
        one.context.close()
    assert watch.outside == [] and watch.errors == [], watch.errors


def test_in_a_big_fight_the_turns_chip_is_in_view_beside_the_page(server: Server, browser: Any) -> None:
    """22 combatants (a GM tester's battle: the strip ran 4,600 px down the page, the turn's chip 3,000 px below
    the screen): at 1280x800 the initiative column stays beside the page and scrolls on its own, and the turn's chip
    is on the screen when the page opens and after each turn ends; the page never scrolls sideways."""
    import copy

    sheets = bundled_sheets()
    cast = []
    for i in range(11):
        for base in ("kael", "vesh"):
            made = copy.deepcopy(sheets[base])
            made.update(id=f"{base}{i}", name=f"{made['name'].split()[0]} {i}")
            cast.append(made)
    status, made = server.call("POST", "/fights", {"id": "battle", "combatants": cast})
    assert status == 201, made
    gm = made["gm_token"]
    status, now = server.call("POST", "/fights/battle/commands", {"command": {"command": "roll_initiative"}}, gm)
    while (now["options"].get("waiting") or {}).get("kind") == "initiative_tie":  # allies tied: any order (C19)
        offer = next(o for o in now["options"]["offers"] if o["command"] == "agree_initiative")
        status, now = server.call("POST", "/fights/battle/commands", {"command": {
            "command": "agree_initiative", **offer["choices"][0]["args"]}}, gm)
    for _ in range(16):
        status, now = server.call("POST", "/fights/battle/commands", {"command": {
            "command": "end_turn", "who": now["options"]["turn"]}}, gm)
        assert status == 201, now
    on_screen = ("(() => { const c = document.querySelector('.chip.turn').getBoundingClientRect();"
                 " return c.top >= 0 && c.bottom <= innerHeight; })()")
    watch = Watch(origin_of(server))
    page = page_of(browser, watch, origin_of(server), "battle", gm)
    page.wait_for_timeout(300)
    assert page.evaluate(on_screen), "the turn's chip is on the screen as the page opens"
    turn = page.evaluate("document.querySelector('.chip.turn').dataset.id")
    assert turn == now["options"]["turn"]
    status, now = server.call("POST", "/fights/battle/commands", {"command": {"command": "end_turn", "who": turn}},
                              gm)
    assert status == 201, now
    page.locator(f".chip.turn[data-id='{now['options']['turn']}']").wait_for()
    page.wait_for_timeout(300)
    assert page.evaluate(on_screen), "the next turn's chip is brought into the column's view"
    assert page.evaluate("document.documentElement.scrollWidth") <= GM_SCREEN["width"]
    page.screenshot(path=str(ARTIFACTS / "big-fight-gm.png"))
    # a tablet turned: at 800 px the column still scrolls on its own, the turn's chip kept in its view; at 768 px
    # (the phone's one column) the chips are under the page, each wide enough for a name beside the GM's buttons
    # (four abreast at 768 px broke names mid-word, and the column kept its old scroll: a tablet tester)
    page.set_viewport_size({"width": 800, "height": 1280})
    page.wait_for_timeout(300)
    column_box = ("(() => { const b = document.querySelector('.strip-col').getBoundingClientRect(), c = document"
                  ".querySelector('.chip.turn').getBoundingClientRect(); return c.top >= b.top && c.bottom <= b.bottom;"
                  " })()")
    assert page.evaluate(column_box)
    page.set_viewport_size({"width": 768, "height": 1024})
    page.wait_for_timeout(300)
    assert page.evaluate("getComputedStyle(document.querySelector('.strip-col')).position") == "static"
    assert min(page.evaluate("[...document.querySelectorAll('.chip')].map(c => c.getBoundingClientRect().width)")) \
        >= 230
    assert page.evaluate("document.documentElement.scrollWidth") <= 768
    watch.clean_but(0)
