"""The table as a combat tracker, in real browsers: a whole 2v2 fight with physical dice played from the pages alone.

Headless Debian Chromium, driven by Playwright, on a real ``omen serve``: the GM (1280 px) and two players, Alice
(Kael, on a 390 px phone) and Bob (Brin, 900 px), each in a browser context of its own. Every die is typed in on the
page of the seat whose combatant rolls it (the server stages a command until that seat gives its dice); an Active
Defense is answered from the keyboard on Alice's phone, an Interrupt from the GM's page, the GM undoes an action,
and a condition with a duration runs out. After every step each page's top card shows the last outcome, and the
tracker the right HP, Bonus Actions, round and turn. Skipped where Chromium is missing, unless
OMEN_REQUIRE_BROWSER is set. The screenshots at the Active Defense decision are docs/table.png (the GM's, 1280 px)
and docs/table-player.png (Alice's phone), written there when OMEN_UPDATE_SCREENSHOTS is set; otherwise they and
the others go to ``out/test-artifacts/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tests.browser import chromium as find_chromium
from tests.browser import launch
from tests.server.processes import ROOT, Server
from tests.server.test_table_browser import ARTIFACTS, Watch

SETTLE = 8000  # ms for a page to show what another did (the stream: 0.1 s; a fetch of the table)
#: Where the screenshots at the Active Defense go: docs/ when OMEN_UPDATE_SCREENSHOTS is set (they are the pictures
#: of docs/server.md and the README), else beside the other artifacts (a test run leaves the work tree as it was).
DOCS = ROOT / "docs" if os.environ.get("OMEN_UPDATE_SCREENSHOTS") else ARTIFACTS


def head(page: Any) -> str:
    return str(page.locator(".table-panel").get_attribute("data-head"))


def settled(pages: dict[str, Any]) -> None:
    """Every page shows the newest head (the page that acted has it once it is no longer busy) and the same staged
    state, none is busy, and none shows a problem."""
    for page in pages.values():
        page.wait_for_function("() => !document.body.dataset.busy")
    want = str(max(int(head(page)) for page in pages.values()))
    for name, page in pages.items():
        try:
            page.wait_for_function(f"() => document.querySelector('.table-panel')?.dataset.head === '{want}' "
                                   "&& !document.body.dataset.busy", timeout=SETTLE)
        except Exception as exc:
            raise AssertionError(f"{name}'s page is at {head(page)}, not {want} "
                                 f"(busy: {page.evaluate('document.body.dataset.busy')})") from exc
        problems = page.locator("#message.problem, .form-error:not(:empty)")
        assert problems.count() == 0, (name, problems.first.inner_text())
    staged = {n: p.locator(".table-panel").get_attribute("data-staged") for n, p in pages.items()}
    assert len({bool(v) for v in staged.values()}) == 1, staged


def staged_for(pages: dict[str, Any], who: str) -> None:
    """Wait until the page of ``who`` shows the roll box asking for its dice (and every other page waits too)."""
    pages[who].wait_for_selector("#rollbox.yours", timeout=SETTLE)
    for name, page in pages.items():
        if name != who:
            page.wait_for_selector("#rollbox", timeout=SETTLE)


def roll(page: Any, *faces: int) -> None:
    """Type faces into the roll box, in order, send them with Enter, and wait until the page shows what followed
    (no roll box, or another: the faces in so far are the GM's to see, so a player's box changes otherwise)."""
    before = page.locator("#rollbox").evaluate("box => box.outerHTML")
    inputs = page.locator("#rollbox input.face")
    assert inputs.count() == len(faces), (inputs.count(), faces)
    for i, face in enumerate(faces):
        inputs.nth(i).fill(str(face))
    inputs.nth(len(faces) - 1).press("Enter")
    page.wait_for_function("(before) => !document.body.dataset.busy && "
                           "document.querySelector('#rollbox')?.outerHTML !== before", arg=before, timeout=SETTLE)


def tracker(page: Any, who: str) -> dict[str, str]:
    """What the strip shows of a combatant: HP text, Bonus Actions (own or GM), conditions."""
    chip = page.locator(f".chip[data-id={who}]")
    hp = chip.locator(".hp-text")
    band = chip.locator(".band")
    ba = chip.locator(".chip-ba")
    return {"hp": hp.inner_text() if hp.count() else band.inner_text() if band.count() else "",
            "ba": str(ba.get_attribute("data-ba")) if ba.count() else "",
            "conditions": " ".join(chip.locator(".cond").all_inner_texts()),
            "turn": "yes" if "turn" in (chip.get_attribute("class") or "").split() else ""}


def same_turn(pages: dict[str, Any], turn: str, round_: str) -> None:
    for name, page in pages.items():
        panel = page.locator(".table-panel")
        assert (panel.get_attribute("data-turn"), panel.get_attribute("data-round")) == (turn, round_), name
        assert tracker(page, turn)["turn"] == "yes", name


def top(page: Any) -> str:
    return " ".join(page.locator("#top-card").inner_text().split())


def command_form(page: Any, command: str, actor: str) -> Any:
    return page.locator(f"form.command[data-command={command}][id$='-{command}-{actor}']")


def test_a_whole_2v2_fight_with_physical_dice_from_the_pages_alone(tmp_path: Path) -> None:
    """GM, Alice and Bob play the Ember Ford 2v2 from their pages, each typing its own dice: initiative (each seat
    its own combatant's die), Vesh's attack on Kael with Kael's base defense from Alice's phone and her Block from
    the keyboard (the decision box shows the attack's total, the defense and what each defense adds), Kael's
    attack met by Vesh's Interrupt (the GM's), Kael's hit dice and Vesh's base defense from the seats that roll
    them, the GM's undo (the top card struck through, HP and Bonus Actions back), Paralysed on Brin running out at
    the end of Brin's turn, a save against an effect written in the GM's effect editor (Kael's die from Alice's
    phone, the damage die from the GM's roll box); every page agrees on head, round and turn after each step, shows
    the last outcome on
    top and the right HP and Bonus Actions; no console error and no request outside the server; nothing overflows
    at 390 px and the dark scheme is dark."""
    from playwright.sync_api import expect, sync_playwright

    chromium = find_chromium()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    server = Server(tmp_path)
    origin = f"http://127.0.0.1:{server.port}"
    watch = Watch(origin)
    try:
        with sync_playwright() as pw:
            browser = launch(pw, chromium)
            try:
                gm = watch.setup_page(browser, server)
                gm.fill("#setup-title", "The Ember Ford")
                gm.check("input[name=dice][value=manual]")
                gm.select_option("#setup-hp", "exact")
                for sheet in ("kael", "brin", "vesh", "skarn"):
                    gm.check(f"input[name=sheet][value={sheet}]")
                gm.click("text=Create the fight")
                gm.goto(str(gm.locator("#gm-link").get_attribute("href")))
                expect(gm.locator("#live")).to_have_text("live")

                # Seats: made on the GM's page, their links listed there (made again from the GM's token).
                links = {}
                for name, plays in (("Alice", "kael"), ("Bob", "brin")):
                    gm.fill("#seat-name", name)
                    gm.check(f"#plays-{plays}")
                    gm.click("#seat-form button")
                    link = gm.locator(f"a.seat-link[data-seat-name={name}]")
                    expect(link).to_have_count(1)
                    links[name] = str(link.get_attribute("href"))
                gm.reload()
                expect(gm.locator("a.seat-link")).to_have_count(2)  # recovered after a reload, from the server
                alice = watch.page(browser.new_context(viewport={"width": 390, "height": 844}))
                bob = watch.page(browser.new_context(viewport={"width": 900, "height": 900}))
                for page, name in ((alice, "Alice"), (bob, "Bob")):
                    page.set_default_timeout(10_000)
                    page.goto(origin + links[name])
                    expect(page.locator("#live")).to_have_text("live")
                pages = {"gm": gm, "alice": alice, "bob": bob}
                settled(pages)

                # Initiative: the GM gives the command with no faces; each seat types its own combatant's die
                # (C29: in join order, the set-up page's: Brin, Kael, then the GM's Skarn and Vesh).
                command_form(gm, "roll_initiative", "gm").locator("button[type=submit]").click()
                staged_for(pages, "bob")
                assert "Waiting for Bob" in gm.locator("#rollbox").inner_text()  # the GM sees who rolls
                roll(bob, 1)          # Brin: 1 + 2 = 3
                staged_for(pages, "alice")
                roll(alice, 6)        # Kael: 6 + 1 = 7
                staged_for(pages, "gm")
                roll(gm, 1, 8)        # Skarn: 1 + 0 = 1; Vesh: 8 + 2 = 10
                settled(pages)
                same_turn(pages, "vesh", "1")
                for page in pages.values():
                    assert top(page).startswith("Initiative"), top(page)
                    assert "order: Vesh the Cinder-Hand, Kael Arden, Brin Hollowmere, Skarn Gutterjaw" in top(page)
                assert "Kael Arden: initiative 7 (6 AGI die + 1 AGI bonus)" in top(alice)  # her own roll's terms
                # What Kael holds is Alice's to see, on her phone too (a chip's in-hand line is hidden at 390 px
                # but on one's own combatants).
                held = alice.locator(".chip[data-id=kael] .chip-hand")
                assert held.is_visible() and held.inner_text() == "in hand: Longsword, Warden's kite shield"

                # Vesh attacks Kael: the GM types Vesh's hit dice; Kael's base defense die is Alice's.
                form = command_form(gm, "declare_attack", "vesh")
                form.locator("select.choice").select_option(label="Kael Arden with Curved knife")
                faces = form.locator(".choice-dice:not([hidden]) input.face")
                faces.nth(0).fill("8")
                faces.nth(1).fill("6")  # hit 8 + 6 + 2 AGI + 1 knife = 17
                form.locator("button[type=submit]").click()
                staged_for(pages, "alice")
                roll(alice, 1)        # base defense 1 + 2 RES + 2 armor = 5: the hit beats it, the window opens
                settled(pages)
                for page in pages.values():
                    assert page.locator(".table-panel").get_attribute("data-waiting") == "active_defense"
                    assert "Vesh the Cinder-Hand attacks Kael Arden" in top(page)
                box = alice.locator("#decision")
                said = " ".join(box.inner_text().split())
                assert alice.locator("#decision-h").inner_text() == "Your decision: Active Defense"  # no "(C8)"
                assert "attack 17 against Kael Arden's defense 5" in said
                assert "+ d6 AGI + 1 AGI bonus" in said                         # Dodge
                assert "+ d8 RES + 2 RES bonus + 2 Block Rating" in said        # Block
                assert "+ d8 STR + 2 STR bonus + 1 Parry Rating" in said        # Parry with Longsword
                assert "turns the hit on an 8 or more on the d8" in said         # Block: 5 + 2 + 2 + 8 = 17
                assert box.locator("form.answer").count() == 4                  # Dodge, Block, Parry, Decline
                assert "Parry with Longsword" in said and said.count("Parry") == 2
                for page in pages.values():
                    page.evaluate("window.scrollTo(0, 0)")  # the first screen, as a person opening the page sees it
                gm.screenshot(path=str(DOCS / "table.png"))
                alice.screenshot(path=str(DOCS / "table-player.png"))
                bob.screenshot(path=str(ARTIFACTS / "tracker-bob-900.png"))

                # Alice blocks from the keyboard: her die in the Block's field, then its number.
                block = box.locator("form.answer", has_text="Block with Warden's kite shield")
                block.locator("input.face").fill("8")
                alice.evaluate("document.activeElement.blur()")
                alice.keyboard.press(str(block.get_attribute("data-shortcut")))
                settled(pages)
                for page in pages.values():
                    assert top(page).startswith("MISS"), top(page)
                    assert re.search(r"attack 17 (\([^)]*\) )?against defense 17( \([^)]*\))?: MISS", top(page))
                    assert tracker(page, "kael")["hp"] == "HP 24/24"
                assert "against defense 17 (1 RES die + 2 RES bonus + 2 armor + 8 block die + 2 RES bonus + 2 block " \
                       "rating): MISS" in top(alice)  # her own defense's terms
                assert tracker(alice, "kael")["ba"] == tracker(gm, "kael")["ba"] == "1"
                assert tracker(bob, "kael")["ba"] == ""  # another's Bonus Actions are not Bob's to see

                # The GM ends Vesh's turn from the keyboard.
                gm.evaluate("document.activeElement && document.activeElement.blur()")
                gm.keyboard.press("e")
                settled(pages)
                same_turn(pages, "kael", "1")
                assert top(gm).startswith("End of turn: Vesh the Cinder-Hand")

                # Kael attacks Vesh: Vesh, engaged and with 2 Bonus Actions, may Interrupt (C24) first.
                form = command_form(alice, "declare_attack", "kael")
                assert form.locator("select.choice option").first.inner_text().startswith("Vesh")  # a foe first
                form.locator("button[type=submit]").click()
                settled(pages)
                for page in pages.values():
                    assert page.locator(".table-panel").get_attribute("data-waiting") == "interrupt"
                said = " ".join(gm.locator("#decision").inner_text().split())
                assert "Interrupt (C24)" in said and "hit d8 AGI + d6 FCS + 3 bonus" in said
                strike = gm.locator("#decision form.answer", has_text="Strike with Curved knife")
                strike.locator("input.face").nth(0).fill("1")
                strike.locator("input.face").nth(1).fill("1")   # the Interrupt's hit: 1 + 1 + 3 = 5
                strike.locator("button[type=submit]").click()
                staged_for(pages, "alice")
                # Kael's base defense 8 + 4 = 12: the Interrupt misses (its 5 misses whatever the die: ties go to the
                # defender), so Kael's attack goes on for certain and its hit, hers too, is asked in the same box
                # (C19, C29: the dice the faces given make certain): 3 + 2 + 4 = 9 (FCS portion 2 + 1 = 3)
                roll(alice, 8, 3, 2)
                staged_for(pages, "gm")
                roll(gm, 3)           # Vesh's base defense 3 + 1 + 1 = 5 (RES portion 4: no crit)
                settled(pages)
                for page in pages.values():
                    assert top(page).startswith("HIT"), top(page)
                    assert "Kael Arden attacks Vesh the Cinder-Hand" in top(page)
                    assert tracker(page, "vesh")["hp"] == "HP 4/12"           # 3 + 2 + 4 WD - 1 armor = 8
                assert tracker(gm, "vesh")["ba"] == "0"                         # the Interrupt cost 2
                assert tracker(alice, "kael")["ba"] == "2"  # refilled at the start of Kael's turn (C20)

                # The GM undoes it: the top card is struck through, Vesh's HP and Bonus Actions come back.
                undo = command_form(gm, "undo", "gm")
                undo.locator("input[data-path=reason]").fill("Kael's player misread a die")
                undo.locator("button[type=submit]").click()  # the preview first: what it will undo
                expect(undo.locator(".undo-preview")).to_contain_text(
                    "This undoes #", timeout=SETTLE)
                expect(undo.locator(".undo-preview")).to_contain_text("HIT: Kael Arden attacks Vesh the Cinder-Hand")
                expect(undo.locator("button[type=submit]")).to_have_text("Confirm the undo")
                undo.locator("button[type=submit]").click()
                settled(pages)
                for page in pages.values():
                    assert page.locator("#top-card").get_attribute("data-undone") == "yes"
                    assert "Undone: Kael's player misread a die" in top(page)
                    assert tracker(page, "vesh")["hp"] == "HP 12/12"
                same_turn(pages, "kael", "1")
                assert tracker(gm, "vesh")["ba"] == "2"

                # Alice ends Kael's turn; Brin's turn: the GM lays Paralysed on Brin (1 tick, at turn end).
                alice.locator("form.end-turn button").click()
                settled(pages)
                same_turn(pages, "brin", "1")
                gm.locator("#gm-apply_condition summary").click()
                form = command_form(gm, "apply_condition", "gm")
                form.locator("select.pair[data-pair='0']").select_option(label="Brin Hollowmere")
                form.locator("select.pair[data-pair='1']").select_option("Paralysed")
                form.locator("button[type=submit]").click()
                settled(pages)
                for page in pages.values():
                    assert re.search(r"Paralysed 1 tick left(, at turn end)?$",  # a phone's chip: short
                                     tracker(page, "brin")["conditions"]), tracker(page, "brin")
                    assert "Brin Hollowmere is Paralysed" in top(page)
                bob.evaluate("document.activeElement && document.activeElement.blur()")
                bob.keyboard.press("e")    # Bob ends Brin's turn: Paralysed ticks to 0 and clears
                settled(pages)
                same_turn(pages, "skarn", "1")
                for page in pages.values():
                    assert tracker(page, "brin")["conditions"] == ""
                    assert "Brin Hollowmere is no longer Paralysed" in top(page)

                # Skarn's turn: the GM calls for Kael's save against an effect written in the editor (AGI against
                # Skarn's STR; on a failure 1d6 crushing and Paralysed). Kael's die is Alice's, Skarn's the GM's,
                # and the damage die the GM's too (the form could not ask for it: the roll box does).
                gm.locator("#turn-more summary").click()  # the turn's rarer commands: folded under "More"
                form = command_form(gm, "call_save", "skarn")
                form.locator("select.choice").select_option(label="Kael Arden")
                form.locator("[data-effect-field=name]").fill("stunning blow")
                form.locator("[data-effect-field=save]").select_option("AGI")
                form.locator("[data-effect-field=against]").select_option("STR")
                form.locator("[data-effect-field=spell]").uncheck()
                failure = form.locator(".branch[data-branch=on_failure]")
                failure.locator("[data-part=count]").fill("1")
                failure.locator("[data-part=die]").select_option("d6")
                failure.locator("[data-part=flat]").fill("0")
                failure.locator("[data-part=damage_type]").select_option("crushing")
                failure.locator("[data-part=condition]").select_option("Paralysed")
                form.locator("button[type=submit]").click()
                staged_for(pages, "alice")
                roll(alice, 1)        # Kael's AGI save: 1 + 1 = 2
                staged_for(pages, "gm")
                # Skarn's STR: 8 + 3 = 11: the save fails (C15; 2 fails against any of his faces, so the effect's
                # d6, the GM's too, is asked in the same box): 3 crushing, less Kael's armor 2 (not a spell): 1
                roll(gm, 8, 3)
                settled(pages)
                for page in pages.values():
                    said = top(page)
                    saved = re.search(r"save 2( \([^)]*\))? against 11( \([^)]*\))?: FAILED", said)
                    assert said.startswith("FAILED") and saved, said
                    assert "Kael Arden is Paralysed" in said and tracker(page, "kael")["hp"] == "HP 23/24"
                    assert re.search(r"Paralysed 1 tick left(, at turn end)?$",  # a phone's chip: short
                                     tracker(page, "kael")["conditions"]), tracker(page, "kael")
                assert "save 2 (1 AGI die + 1 AGI bonus) against 11: FAILED" in top(alice)  # Kael's roll is hers

                # The log is readable cards on every page; nothing overflows the phone; dark is dark.
                for page in pages.values():
                    log = page.locator(".log").inner_text()
                    assert "Kael Arden attacks Vesh the Cinder-Hand" in log and not re.search(r"\{\s*\"", log)

                # The GM publishes the log; Alice saves the session log from her phone (its fetch carries her
                # bearer header, which a plain link could not).
                gm.locator("#gm-publish summary").click()
                gm.locator("#publish-confirm").check()
                gm.locator("#publish-form button").click()
                alice.wait_for_selector("#save-session", timeout=SETTLE)
                with alice.expect_download() as saved:
                    alice.click("#save-session")
                assert saved.value.suggested_filename.endswith("-session.html")
                assert "Kael Arden" in Path(saved.value.path()).read_text(encoding="utf-8")
                overflow = alice.evaluate("document.documentElement.scrollWidth")
                alice.emulate_media(color_scheme="dark")
                dark = alice.evaluate("getComputedStyle(document.body).backgroundColor")
                alice.screenshot(path=str(ARTIFACTS / "tracker-alice-390-dark.png"), full_page=False)
                gm.screenshot(path=str(ARTIFACTS / "tracker-gm-1280-full.png"), full_page=True)
            except Exception:
                for name, page in locals().get("pages", {}).items():
                    page.screenshot(path=str(ARTIFACTS / f"tracker-failed-{name}.png"), full_page=True)
                raise
            finally:
                browser.close()
    finally:
        server.stop()
        (ARTIFACTS / "tracker-server.log").write_text(server.log.read_text())
    assert watch.errors == [] and watch.outside == [], (watch.errors, watch.outside)
    assert overflow <= 390
    assert dark == "rgb(13, 17, 23)"
    for name in ("table.png", "table-player.png"):
        assert (DOCS / name).stat().st_size > 10_000
        assert (ROOT / "docs" / name).exists(), "OMEN_UPDATE_SCREENSHOTS=1 writes the screenshots the docs show"
