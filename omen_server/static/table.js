// The table page's script (omen serve): no build step, no library, nothing fetched but from this server.
// The seat's token comes in the URL's fragment (#token=...) and goes out only as a bearer header. The page follows
// the fight's live stream (Server-Sent Events, read with fetch so that it can carry the header); whenever the
// head moves it fetches the table as its seat sees it (GET /fights/{id}/table, server-rendered HTML) and swaps
// it in, keeping what was typed, what was open and where the focus was. A dropped stream is retried every
// second from the last event received; the table is fetched again then, so the page catches up without reloading.
"use strict";

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const SETTINGS_POLL = 3000; // ms
  // A shortcut key pressed again this soon after the table changed (a double press) answers the table as it was
  // before (no one reads a new table in less): it is sent with the head before the change, so a double press of E
  // ends one turn, not two. Another key, or the same one later, answers the table shown.
  const KEY_SETTLE = 1000; // ms (0.5 s let a GM's slower double press, 0.7 s apart, end the next turn too: a tester)
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

  // bad: true (a problem), false (done), or "note" (nothing done, and nothing wrong: said quietly)
  function say(text, bad = true) {
    const box = $("#message");
    if (!box) return;
    box.textContent = text;
    box.className = bad === "note" ? "note" : bad ? "problem" : "ok";
    delete box.dataset.until;
    delete box.dataset.failed;
    delete box.dataset.said;
  }

  // A refusal is shown next to the control that caused it (the form's own error line), and kept across a swap.
  const formErrors = {};
  // the forms whose refusal was "a command already waits for dice": said no longer once nothing is staged
  const stagedErrors = new Set();
  // the forms whose command could not reach the server, and when: said no longer once the table is read again
  // later (the page live again shows what the server holds; a tester's GM read a stale "could not be reached")
  const unreached = new Map();
  function sayAt(form, text) {
    const line = form && form.id ? $(".form-error", form) : null;
    if (!line) {
      say(text);
      return;
    }
    formErrors[form.id] = text;
    line.textContent = text;
    line.scrollIntoView({ block: "nearest" });
  }

  // A control focused (Tab, a refusal, a box brought into view) is scrolled clear of the turn's bar pinned at the
  // page's foot: the page's scroll padding is the bar's height (a fixed 6rem was shorter than a bar three or four
  // lines high, a long name's End turn at large text, and a focused Attack sat under it: a low-vision tester).
  function padForBar() {
    const bar = $(".turn-bar");
    const pinned = bar && getComputedStyle(bar).position === "sticky" ? bar.getBoundingClientRect().height : 0;
    document.documentElement.style.scrollPaddingBottom = `${Math.max(96, Math.ceil(pinned) + 16)}px`;
  }

  // A die's face refused in the page is said beside its own field, not on the form's line under its button (a long
  // roll box on a phone said it screens away from the die: a tester): the field is marked invalid and described by
  // that line, focused and brought into view with its label and the line; a screen reader is told it too (the focus
  // may already be on the field, which then says nothing new). Kept across a swap while the field holds the face
  // refused; gone once the field is typed in or its form is sent.
  const faceErrors = {}; // the field's id: [what is wrong, the value refused]
  function showFace(input, text) {
    const id = `${input.id}-error`;
    let line = document.getElementById(id);
    if (!line) {
      line = document.createElement("span");
      line.className = "face-error";
      line.id = id;
      (input.closest("label") || input).after(line);
    }
    line.textContent = text;
    input.setAttribute("aria-invalid", "true");
    const described = (input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    if (!described.includes(id)) input.setAttribute("aria-describedby", [...described, id].join(" "));
  }
  function clearFace(input) {
    delete faceErrors[input.id];
    const line = document.getElementById(`${input.id}-error`);
    if (line) line.remove();
    input.removeAttribute("aria-invalid");
    const described = (input.getAttribute("aria-describedby") || "").split(" ")
      .filter((id) => id && id !== `${input.id}-error`);
    if (described.length) input.setAttribute("aria-describedby", described.join(" "));
    else input.removeAttribute("aria-describedby");
  }
  function sayAtFace(form, input, text, told) {
    clearAt(form);
    faceErrors[input.id] = [text, input.value];
    showFace(input, text);
    input.focus({ preventScroll: true });
    padForBar();
    // the field and its line under it in view (clear of the turn's bar pinned at the foot: the page's scroll
    // padding), and as much of its label above as the screen holds
    const label = input.closest("label") || input;
    label.scrollIntoView({ block: "nearest" });
    document.getElementById(`${input.id}-error`).scrollIntoView({ block: "nearest" });
    input.scrollIntoView({ block: "nearest" });
    const box = $("#announce");
    if (box) box.textContent = told;
  }

  function clearAt(form) {
    if (!form || !form.id) return;
    for (const input of $$("input.face[aria-invalid]", form)) clearFace(input);
    delete formErrors[form.id];
    stagedErrors.delete(form.id);
    unreached.delete(form.id);
    const line = $(".form-error", form);
    if (line) line.textContent = "";
  }

  // A validation message in words: "Expected `int` >= 1" is "a whole number, at least 1".
  function plain(detail) {
    return String(detail).replace(/\s*\(at \$[^)]*\)\s*$/, "")
      .replace(/^Expected `int` >= (-?\d+)$/, "must be a whole number, at least $1")
      .replace(/^Expected `int` <= (-?\d+)$/, "must be a whole number, at most $1")
      .replace(/^Expected `int`, got `\w+`$/, "must be a whole number")
      .replace(/^Object missing required field `\w+`$/, "is needed")
      .replace(/^Expected `str` of length <= (\d+)$/, "must be at most $1 characters long");
  }

  // The server's refusal of a form's field (its problem's `field`: $.command.stacks), said by the form's own label
  // for that field; "" where the form has no such field.
  function fieldProblem(body, form) {
    // a list's index as the form's paths write it: $.command.damage_modifiers[0].value is damage_modifiers.0.value
    const path = typeof body.field === "string" && body.field.startsWith("$.command.")
      ? body.field.slice(10).replace(/\[(\d+)\]/g, ".$1") : "";
    const input = path && form ? $(`[data-path="${CSS.escape(path)}"]`, form) : null;
    if (!input) return "";
    const label = (input.labels && input.labels[0] ? input.labels[0].textContent : path).trim();
    // (a detail that begins with the command's name, "declare_attack: a whole number beyond ...", says it once)
    const detail = plain(body.detail || "").replace(`${form.dataset.command}: `, "");
    return `Not sent: ${label} ${detail.replace(/\.$/, "")}.`;
  }

  // A refusal's detail as the page speaks: each combatant the engine quotes by id ('vesh') by the name its chip
  // shows (a hidden one, which has no chip here, stays as the server wrote it), and the rule said once, at the end
  // (the engine's words open with it: "[C20] 'vesh' has no Action left ... (C20)").
  function inWords(body) {
    const names = {};
    for (const chip of $$(".chip[data-id]")) {
      const name = $(".chip-name strong", chip);
      if (name) names[chip.dataset.id] = name.textContent;
    }
    let detail = String(body.detail || "").replace(/'([^'\s]+)'/g, (quoted, id) => names[id] || quoted);
    const rule = body.rule ? String(body.rule) : "";
    if (rule && detail.startsWith(`[${rule}] `)) detail = detail.slice(rule.length + 3);
    const said = rule && new RegExp(`\\(${rule.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\)$`).test(detail);
    return `${detail}${rule && !said ? ` (${rule})` : ""}`;
  }

  async function problemText(answer, form = null) {
    try {
      return problemSaid(await answer.json(), answer.status, form);
    } catch (_) {
      return `the server answered ${answer.status}`;
    }
  }

  // A problem document (its JSON) in the page's words; `form`: the form whose command it refuses, if any.
  function problemSaid(body, status, form = null) {
    const mine = fieldProblem(body, form);
    if (mine) return mine;
    const type = String(body.type || "");
    if (type.endsWith("/dice-staged")) {
      // in the page's words, once: whose dice go first, and the roll box's own button (not the API's path)
      const panel = $(".table-panel");
      const mineNow = panel && panel.dataset.staged === "yours";
      const who = (/waits for (.+)'s dice/.exec(String(body.detail || "")) || [])[1] || "another seat";
      return mineNow ? "Not sent: your dice are awaited first: give them in the roll box above (or withdraw that command there with \u201cWithdraw the command\u201d)."
        : `Not sent: ${who}'s dice are awaited first for the command staged in the roll box above; send this once they are in (the GM or the seat that gave it may \u201cWithdraw the command\u201d there).`;
    }
    if (type.endsWith("/surplus-faces")) {
      const detail = String(body.detail || "").replace(/ \(give yours alone; with "stage": true the command then waits for theirs\)/,
        " (type yours alone: the command then waits for theirs)");
      return `Not sent: more faces than this seat's dice: ${detail}`;
    }
    const needed = body.needed && body.needed.length ? ` Dice to roll: ${body.needed.join("; ")}.` : "";
    return `${body.title || status}: ${inWords(body)}${needed}`;
  }

  // -- the set-up page ------------------------------------------------------------------------------------------

  // The server's creation token, when it needs one: from the set-up link's fragment (#create=..., which a browser
  // never sends to a server), kept for this tab; else typed in (the form shows its field then).
  function creationToken(form) {
    if (!("needsToken" in form.dataset)) return "";
    const given = new URLSearchParams(location.hash.slice(1)).get("create");
    if (given) sessionStorage.setItem("omen-create", given);
    const kept = given || sessionStorage.getItem("omen-create") || "";
    const row = $("#setup-token-row", form);
    if (row) row.hidden = Boolean(kept);
    return kept;
  }

  // What a set-up box (or a file chosen) holds, as POST /fights takes it: JSON as it is; anything else is TOML, as
  // omen run reads it, which the server reads (POST /content: its errors name the line and the field, in `name`, a
  // file's own name; with sheets, `abilities`, a library whose abilities they list by id, errors at $.abilities
  // naming it by `abilities_name`); undefined for an empty box, null when it could not be read (the reason is shown
  // in `out`, and the field at fault is marked: `fields`, the field of the text and of the library).
  const inJson = (text) => /^\s*(\{|\[\s*([{\]]|$))/.test(text); // an object, or a list of objects
  async function pastedContent(kind, text, headers, out, more = {}, fields = {}) {
    const given = text.trim();
    if (!given) return undefined;
    if (inJson(given)) {
      try {
        return JSON.parse(given);
      } catch (error) {
        const what = more.name ? `${more.name} is` : kind === "sheets" ? "The pasted sheets are" : "The pasted ruleset is";
        refused(out, `${what} not JSON: ${error.message}`, fields.text);
        return null;
      }
    }
    const sent = { kind, text: given };
    for (const key of ["name", "abilities", "abilities_name"]) if (more[key]) sent[key] = more[key];
    let answer;
    try {
      answer = await fetch("/content", { method: "POST", headers, body: JSON.stringify(sent) });
    } catch (error) {
      out.textContent = `The server did not answer (${error.message}); try again.`;
      return null;
    }
    if (!answer.ok) {
      let body = {};
      try {
        body = await answer.json();
      } catch (_) { /* said by its status */ }
      refused(out, body && body.detail ? problemSaid(body, answer.status) : `the server answered ${answer.status}`,
        body && body.field === "$.abilities" ? fields.abilities : fields.text);
      return null;
    }
    const read = await answer.json();
    return kind === "sheets" ? read.sheets : read.ruleset;
  }

  // A set-up refused: said in the result line (a live region), and the field at fault, if any, marked invalid and
  // described by it, until the next press.
  function refused(out, text, field = null) {
    out.textContent = text;
    if (!field) return;
    field.setAttribute("aria-invalid", "true");
    const described = (field.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    if (!described.includes(out.id)) field.setAttribute("aria-describedby", [...described, out.id].join(" "));
  }

  // Every set-up field marked by a refusal, unmarked (a new press: the result line says something new).
  function unmark(form, out) {
    for (const field of $$("[aria-invalid]", form)) {
      field.removeAttribute("aria-invalid");
      const described = (field.getAttribute("aria-describedby") || "").split(" ").filter((id) => id && id !== out.id);
      if (described.length) field.setAttribute("aria-describedby", described.join(" "));
      else field.removeAttribute("aria-describedby");
    }
  }

  // The sample sheets ticked for a first try (Kael, Vesh) are unticked once the GM adds sheets of their own (pasted
  // or chosen as files), and ticked again should those go, so that a GM's fight gets no two strangers beside their
  // own (a tester); a sample the GM ticks or unticks is theirs to set from then on, left as they set it.
  function followSamples(form) {
    const defaults = $$("input[name=sheet][data-default]", form);
    const said = $("#setup-samples-said", form);
    let touched = false;
    for (const box of $$("input[name=sheet]", form)) box.addEventListener("change", () => { touched = true; });
    return () => {
      if (touched) return;
      const files = $("#setup-files", form);
      const own = Boolean($("#setup-json", form).value.trim()) || Boolean(files && files.files.length);
      const changed = defaults.filter((box) => box.checked === own);
      if (!changed.length) return;
      for (const box of changed) box.checked = !own;
      const names = changed.map((box) => box.parentElement.textContent.replace(/\(.*$/, "").trim()).join(" and ");
      if (said) {
        said.textContent = own ? `${names} unticked: the fight has your own sheets. Tick a sample to add it too.`
          : `${names} ticked again: no sheets of your own yet.`;
      }
    };
  }

  // The files a set-up input has chosen, read in the page (nothing is sent until the fight is created): each its
  // name (what the server's errors call it) and text.
  async function readFiles(input) {
    const chosen = input ? Array.from(input.files) : [];
    return Promise.all(chosen.map(async (file) => ({ name: file.name.slice(0, 200), text: await file.text() })));
  }

  async function setup(form) {
    const kept = creationToken(form);
    const samples = followSamples(form);
    const files = $("#setup-files", form);
    const filesSaid = $("#setup-files-said", form);
    const library = $("#setup-abilities", form);
    const libraryFile = $("#setup-abilities-file", form);
    const librarySaid = $("#setup-abilities-said", form);
    let libraryRead = null; // the library file read into its box: {name, text}, its name said while the box holds it
    $("#setup-json", form).addEventListener("input", samples);
    if (files) {
      files.addEventListener("change", () => {
        const names = Array.from(files.files, (file) => file.name);
        if (filesSaid) filesSaid.textContent = names.length ? `Chosen: ${names.join(", ")}` : "";
        samples();
      });
    }
    if (libraryFile && library) {
      // the library's file is read into its box, where the GM sees what will be sent; its errors name the file while
      // the box holds its text as read
      libraryFile.addEventListener("change", async () => {
        const [read] = await readFiles(libraryFile);
        if (!read) return;
        libraryRead = read;
        library.value = read.text;
        if (librarySaid) librarySaid.textContent = `Read from ${read.name}`;
      });
      library.addEventListener("input", () => {
        if (librarySaid && libraryRead && library.value !== libraryRead.text) librarySaid.textContent = "";
      });
    }
    samples(); // a box the browser kept filled across a reload
    // one creation at a time: a second press while the first is on its way makes no second fight; once made, the
    // button says that pressing it again makes another (the form stayed as it was: a new GM, a tester)
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (form.dataset.creating) return;
      form.dataset.creating = "yes";
      try {
        await create();
      } finally {
        delete form.dataset.creating;
      }
    });

    // Every sheet of the fight with where it comes from (what the page says of it): the samples ticked, the pasted
    // box's, each file's; null when one could not be read (said in `out`).
    async function sheetsOf(headers, out, picked) {
      let sheets = [];
      if (picked.length) {
        const bundled = await (await fetch("/sheets")).json();
        sheets = picked.map((id) => ({ sheet: bundled[id], from: "the samples ticked above", sample: true }));
      }
      const abilities = library ? library.value.trim() : "";
      const more = abilities ? { abilities } : {};
      if (abilities && libraryRead && library.value === libraryRead.text) more.abilities_name = libraryRead.name;
      let used = false; // whether the library went with a sheet in TOML
      const box = $("#setup-json", form);
      const pasted = await pastedContent("sheets", box.value, headers, out, more, { text: box, abilities: library });
      if (pasted === null) return null;
      if (pasted !== undefined) {
        used = used || !inJson(box.value);
        sheets = sheets.concat((Array.isArray(pasted) ? pasted : [pasted]).map((sheet) => ({ sheet,
          from: "the pasted sheets" })));
      }
      for (const file of await readFiles(files)) {
        if (!file.text.trim()) {
          refused(out, `Not created: ${file.name} is empty.`, files);
          return null;
        }
        const read = await pastedContent("sheets", file.text, headers, out, { ...more, name: file.name },
          { text: files, abilities: library });
        if (read === null) return null;
        used = used || !inJson(file.text);
        sheets = sheets.concat((Array.isArray(read) ? read : [read]).map((sheet) => ({ sheet, from: file.name })));
      }
      if (abilities && !used) {
        refused(out, "Not created: the ability library is for sheets written in TOML (chosen as files or pasted), "
          + "and there is none: the samples and sheets in JSON have their abilities written out already.", library);
        return null;
      }
      return sheets;
    }

    // Two sheets of one id, said by where each comes from, not as the server's list index ("has already joined
    // (at $.combatants[2].id)" named a list the GM never wrote: found by a tester); "" when there are none.
    function clashOf(sheets) {
      const seen = new Map();
      for (const one of sheets) {
        const id = one.sheet && one.sheet.id;
        const first = seen.get(id);
        if (first === undefined) {
          seen.set(id, one);
          continue;
        }
        const name = one.sheet.name || id;
        if (first.sample) {
          const holds = one.from === "the pasted sheets" ? "the pasted sheets hold" : `${one.from} holds`;
          const which = one.from === "the pasted sheets" ? "the pasted one" : `the one in ${one.from}`;
          return `Not created: ${holds} ${name} (id "${id}"), and the bundled sheet with that id is ticked above: `
            + `untick it, or give ${which} another id.`;
        }
        const where = first.from === one.from ? `${one.from} holds two sheets` : `${first.from} and ${one.from} both hold a sheet`;
        return `Not created: ${where} with the id "${id}" (${name}): give one of them another id, or leave one out.`;
      }
      return "";
    }

    // A refusal of POST /fights at one sheet ($.combatants[2].abilities[0]): said at that sheet, by its name and
    // where it comes from ("in kael.toml, Kael Arden's sheet, at $.abilities[0]"), not the list's index.
    function atSheet(body, sheets) {
      const at = /^\$\.combatants\[(\d+)\](.*)$/.exec(String(body.field || ""));
      const one = at && sheets[Number(at[1])];
      if (!one) return body;
      const said = `in ${one.from}, ${one.sheet.name || one.sheet.id}'s sheet${at[2] ? `, at $${at[2]}` : ""}`;
      const detail = String(body.detail || "");
      const tail = ` (at ${body.field})`;
      return { ...body, detail: detail.endsWith(tail) ? `${detail.slice(0, -tail.length)} (${said})` : `${detail} (${said})` };
    }

    async function create() {
      const out = $("#setup-result");
      unmark(form, out);
      out.textContent = "Creating the fight...";
      const picked = $$("input[name=sheet]:checked", form).map((box) => box.value);
      const headers = { "Content-Type": "application/json" };
      const token = kept || ($("#setup-token", form) || { value: "" }).value.trim();
      if (token) headers.Authorization = `Bearer ${token}`;
      const sheets = await sheetsOf(headers, out, picked);
      if (sheets === null) return;
      const clash = clashOf(sheets);
      if (clash) {
        out.textContent = clash;
        return;
      }
      const body = {
        title: $("#setup-title", form).value,
        dice: $("input[name=dice]:checked", form).value,
        hp_display: $("#setup-hp", form).value,
        combatants: sheets.map((one) => one.sheet),
      };
      // a table's own ruleset (its conditions: a GM could not start a fight with Burning from the page: a tester)
      const rules = $("#setup-ruleset", form);
      const ruleset = await pastedContent("ruleset", (rules || { value: "" }).value, headers, out, {}, { text: rules });
      if (ruleset === null) return;
      if (ruleset !== undefined) body.ruleset = ruleset;
      // one key for this fight's creation: a request whose answer is lost on the way is sent again with it, and
      // the server answers with the fight it made rather than making another (docs/server.md, Idempotency-Key)
      headers["Idempotency-Key"] = Array.from(crypto.getRandomValues(new Uint8Array(16)),
        (b) => b.toString(16).padStart(2, "0")).join("");
      let answer = null;
      for (let attempt = 1; answer === null; attempt += 1) {
        try {
          answer = await fetch("/fights", { method: "POST", headers, body: JSON.stringify(body) });
        } catch (error) {
          if (attempt >= 3) {
            out.textContent = `The server did not answer (${error.message}); try again.`;
            return;
          }
          out.textContent = "The server did not answer; trying again…";
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
      if (!answer.ok) {
        let refusal = null;
        try {
          refusal = await answer.json();
        } catch (_) { /* said by its status */ }
        out.textContent = refusal ? problemSaid(atSheet(refusal, sheets), answer.status)
          : `the server answered ${answer.status}`;
        return;
      }
      const made = await answer.json();
      const url = `${location.origin}/table/${encodeURIComponent(made.fight_id)}#token=${made.gm_token}`;
      out.replaceChildren();
      const p = document.createElement("p");
      p.append("The GM's link (keep it; it is shown once): ");
      const a = document.createElement("a");
      a.href = url;
      a.id = "gm-link";
      a.textContent = "open the table as the GM";
      const code = document.createElement("code");
      code.textContent = url;
      p.append(a, " ", code);
      out.append(p);
      // the new fight joins the list of the store's fights at once, by its title (its id beside it)
      const list = $("#fights");
      if (list && !$$("li", list).some((li) => li.dataset.fight === made.fight_id)) {
        const item = document.createElement("li");
        item.dataset.fight = made.fight_id;
        const title = document.createElement("strong");
        title.textContent = body.title || made.fight_id;
        const id = document.createElement("code");
        id.className = "muted";
        id.textContent = made.fight_id;
        item.append(title, " ", id);
        list.prepend(item);
        const none = $("#no-fights");
        if (none) none.remove();
      }
      const button = $("button[type=submit]", form);
      if (button) button.textContent = "Create another fight";
      a.focus();
    }
  }

  // -- the table page -------------------------------------------------------------------------------------------

  function tablePage(shell) {
    const fight = shell.dataset.fight;
    const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
    const auth = { Authorization: `Bearer ${token}` };
    let head = -1;
    let headBefore = -1; // the head the page showed before the last change, and when it changed
    let changedAt = 0;
    let lastKey = ""; // the last shortcut pressed, and when
    let lastKeyAt = 0;
    let last = 0;
    let fetching = null;
    let refused = 0; // the status of the table's last refusal (0: none, or the server was not reached)
    let streaming = false; // whether the event stream is connected (the badge says "live" while it is and the
    // server answers)
    let shown = "";
    let tag = "";
    let again = false;
    let verifiedAt = -1;
    const opened = {}; // the details the user opened or closed (the others open as the server says)
    let sentFrom = ""; // the form last sent, by its id (its button is disabled meanwhile)
    let keyedFrom = ""; // the form a shortcut key (1-9, E) sent, by its id, until it is sent

    // Whether this seat's forms carry the faces typed in them: always in a fight with physical dice; never where
    // some of a seeded fight's dice are physical (a command's faces go to those dice alone: the roll box asks for
    // them when they come), nor a player's in a seeded fight (its dice are the seed's, or physical); else as the
    // GM's choice says.
    function typed() {
      const panel = $(".table-panel");
      if (panel && panel.dataset.dice === "manual") return true;
      if (panel && panel.dataset.physical === "yes") return false;
      if (panel && panel.dataset.seat !== "gm" && panel.dataset.dice === "seeded") return false; // the seed's
      return $("input[name=dice-mode]:checked").value === "typed";
    }

    function showDiceMode() {
      document.body.dataset.dice = typed() ? "typed" : "server";
      const panel = $(".table-panel");
      // no choice to make where every face is typed, nor once the fight is over (nothing rolls then), nor for a
      // spectator (it gives no command)
      $("#dice-mode").hidden = !!panel && (panel.dataset.dice === "manual" || panel.dataset.ended === "yes"
        || panel.dataset.seat !== "gm" || panel.dataset.physical === "yes");
    }

    // The turn's chip brought into view within the initiative column where that column scrolls on its own (a wide
    // page: it stays in view beside the page); the page itself is not moved (a GM tester's 22 combatants: the
    // turn's chip was 3,000 px down the page, and nothing went to it).
    function showTurn() {
      const column = $(".strip-col");
      const chip = $(".chip.turn");
      if (!column || !chip || column.scrollHeight <= column.clientHeight + 1) return;
      const box = column.getBoundingClientRect();
      const at = chip.getBoundingClientRect();
      if (at.top < box.top || at.bottom > box.bottom) column.scrollTop += at.top - box.top - 8;
    }

    // a tablet turned (or a window resized) keeps the turn's chip in the column's view (it kept the column's old
    // scroll, and the turn's chip was above it: a tablet tester)
    window.addEventListener("resize", () => {
      showTurn();
      padForBar();
      showTitle();
      for (const select of $$("select.choice")) echo(select);
    });


    // A long title is cut to two lines (the style sheet; 200 characters at 200 % text on a 320 px phone filled the
    // first screen, the turn below it: a tester): "Whole title" is offered where it is cut, and the title,
    // once opened, stays whole across the table's swaps.
    let titleWhole = false;
    function showTitle() {
      const title = $("#fight-title");
      const more = $("#title-more");
      if (!title || !more) return;
      title.classList.toggle("whole", titleWhole);
      more.hidden = !titleWhole && title.scrollHeight <= title.clientHeight + 1;
      more.setAttribute("aria-expanded", String(titleWhole));
      more.textContent = titleWhole ? "Shorter title" : "Whole title";
    }

    // A select shows its chosen option cut where the option is wider than the select (a target and a weapon of long
    // names on a phone: "Vesh the Cinder-Hand, Warlock of the Ash", and no weapon: a tester): the option's words
    // are then said whole under it (its .chosen line), else that line stays hidden.
    const ruler = document.createElement("canvas").getContext("2d");
    function cut(select) {
      const option = select.selectedOptions[0];
      if (!option || !ruler || !select.getClientRects().length) return false;
      const style = getComputedStyle(select);
      ruler.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      // the room for the words: the select's inside, but for its padding and its arrow
      const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
      return ruler.measureText(option.textContent.trim()).width > room;
    }
    function echo(select) {
      const line = select.form ? $(".chosen", select.form) : null;
      if (!line) return;
      const option = select.selectedOptions[0];
      line.textContent = option ? option.textContent.trim() : "";
      line.hidden = !cut(select);
    }

    // Whether the turn's chip is whole within the initiative column's view (where that column scrolls).
    function turnShown() {
      const column = $(".strip-col");
      const chip = $(".chip.turn");
      if (!column || !chip || column.scrollHeight <= column.clientHeight + 1) return false;
      const box = column.getBoundingClientRect();
      const at = chip.getBoundingClientRect();
      return at.top >= box.top && at.bottom <= box.bottom;
    }

    // A control's name as a reader hears it (its label, else its words), to find it again in a new panel.
    function nameOf(el) {
      return (el.getAttribute("aria-label") || el.textContent || "").trim().replace(/\s+/g, " ");
    }

    // What the user had in the old panel, put back into the new one: values, checks, open details, the focus.
    function swap(html) {
      const holder = $("#panel");
      const kept = {};
      for (const el of $$("input[id], select[id], textarea[id]", holder)) {
        kept[el.id] = el.type === "checkbox" || el.type === "radio" ? el.checked : el.value;
      }
      const focused = document.activeElement && holder.contains(document.activeElement) ? document.activeElement : null;
      // a form just sent lost the focus with its disabled button: it goes back to that form's button (its id is
      // its command's and actor's, the same at every head), not to the page's top nor elsewhere
      const lost = !focused && sentFrom && (!document.activeElement || document.activeElement === document.body)
        ? sentFrom : "";
      sentFrom = "";
      const focusId = focused ? (focused.id || (focused.form && focused.form.id ? `sent:${focused.form.id}` : "")
        || "named") : lost ? `sent:${lost}` : "";
      // a control with no id of its own (a chip's "+", a Copy button, a summary, a link) is found again by its
      // kind and its name within the nearest place that has an id (it fell to the page's body: a keyboard tester)
      const within = focused && !focused.id ? focused.parentElement.closest("[id]") : null;
      const named = focused && !focused.id ? { tag: focused.tagName, name: nameOf(focused),
        within: within && within !== holder ? within.id : "" } : null;
      const column = $(".strip-col", holder);
      const stripAt = column ? column.scrollTop : 0; // where the reader had scrolled the initiative column
      const turnBefore = ($(".chip.turn", holder) || { dataset: {} }).dataset.id;
      const turnInView = turnShown();
      // a field the reader is in (typing a face, a note, a reason) keeps the focus, its caret and its place on the
      // screen, however the table above it grew or shrank (it jumped with another seat's card: a phone tester)
      const field = focused && ["INPUT", "SELECT", "TEXTAREA"].includes(focused.tagName)
        && !focused.closest(".turn-bar") ? focused : null;
      const fieldAt = field ? field.getBoundingClientRect().top : 0;
      let caret = null;
      try {
        if (field && typeof field.selectionStart === "number") {
          caret = [field.selectionStart, field.selectionEnd, field.selectionDirection];
        }
      } catch (_) {
        caret = null; // a number field has no caret to read
      }
      holder.innerHTML = html;
      const columnNow = $(".strip-col", holder);
      if (columnNow) columnNow.scrollTop = stripAt;
      // a new turn's chip is brought into view; the same turn's stays in view where it was (the chips above it
      // grew or shrank: its name was cut at the column's top, a tester), else the reader's scroll is kept
      if (($(".chip.turn", holder) || { dataset: {} }).dataset.id !== turnBefore || turnInView) showTurn();
      for (const [id, value] of Object.entries(kept)) {
        const el = document.getElementById(id);
        if (!el || el.type === "hidden") continue;
        if (el.type === "checkbox" || el.type === "radio") el.checked = value;
        else if (el.tagName === "SELECT") {
          if ($$("option", el).some((o) => o.value === value)) el.value = value;
        } else el.value = value;
      }
      for (const [id, isOpen] of Object.entries(opened)) {
        const el = document.getElementById(id);
        if (el) el.open = isOpen;
      }
      for (const select of $$("select.choice", holder)) pick(select);
      const nothingStaged = !($(".table-panel", holder) || { dataset: {} }).dataset.staged;
      for (const [id, text] of Object.entries(formErrors)) {
        const form = document.getElementById(id);
        const line = form ? $(".form-error", form) : null;
        if (line && !(nothingStaged && stagedErrors.has(id))) line.textContent = text;
        else {
          delete formErrors[id];
          stagedErrors.delete(id);
        }
      }
      for (const [id, [text, value]] of Object.entries(faceErrors)) {
        const input = document.getElementById(id);
        if (input && input.value === value) showFace(input, text);
        else delete faceErrors[id];
      }
      if (focusId) {
        const sent = focusId.startsWith("sent:") ? document.getElementById(focusId.slice(5)) : null;
        const again = named ? $$(named.tag, (named.within && document.getElementById(named.within)) || holder)
          .find((el) => nameOf(el) === named.name) : null;
        const target = again || (focusId.startsWith("sent:") ? (sent ? $("button[type=submit]", sent) : null)
          : focusId === "named" ? null : document.getElementById(focusId));
        // the reader's place went with the change (an answered decision, a form no longer offered): kept at the
        // decision now open, or else at the top card and the fight bar, not dropped to the page's top (WCAG 2.4.3)
        const place = target || $("#decision-h", holder) || $("#top-card", holder) || $("#fight-bar", holder);
        if (place) place.focus({ preventScroll: true });
        if (field && target && target.id === field.id) {
          const moved = target.getBoundingClientRect().top - fieldAt;
          if (Math.abs(moved) >= 1) window.scrollBy(0, moved);
          if (caret) {
            try { target.setSelectionRange(...caret); } catch (_) { /* a field of no caret */ }
          }
        }
        // another seat's change took the reader's control away: the place the focus is kept at is shown from its
        // top (the focus alone left a phone mid-card or far below it, in the log: a tester); the page's own command
        // places the reader itself once it is answered (keepReader)
        else if (place && !target && !document.body.dataset.busy) showTop(place);
      }
    }

    // What changed, said once to a screen reader (#announce, polite): the last outcome and what the table waits
    // for now; not on the first load (the page's own content says it then), and not again while it is the same.
    let announced = null;
    function tell(text) {
      const box = $("#announce");
      if (box) box.textContent = text;
    }
    function announce(panel) {
      const text = panel.dataset.announce || "";
      if (announced !== null && text !== announced) tell(text);
      announced = text;
    }

    function pick(select) {
      const form = select.form;
      for (const box of $$(".choice-dice", form)) box.hidden = box.dataset.choice !== select.value;
      echo(select);
    }

    async function refresh() {
      if (fetching) {
        again = true;
        return fetching;
      }
      fetching = (async () => {
        do {
          again = false;
          const answer = await fetch(`/fights/${encodeURIComponent(fight)}/table`, {
            headers: tag ? { ...auth, "X-Table-Tag": tag } : auth, cache: "no-store",
          });
          if (!answer.ok) {
            refused = answer.status;
            const problem = await answer.clone().json().catch(() => ({}));
            const text = await problemText(answer);
            const box = $("#message");
            // the same failure read again (the looks every few seconds): left alone, so that the GM's undo form in
            // it keeps what was typed and the focus
            if (!(box && box.dataset.failed === "table" && box.dataset.said === text)) {
              say(text);
              if (box) {
                box.dataset.failed = "table"; // said until the table is read again (a tester's banner stayed)
                box.dataset.said = text;
              }
              if (String(problem.type || "").endsWith("/extension-failed")) await offerUndo();
            }
            if ((answer.status === 401 || answer.status === 403) && !shown) {
              // no table to show this token, now or later: the loading line, the dice choice and the keys go (they
              // stayed on screen under the refusal, the page half-working: a tester opened another fight's link)
              const panel = $("#panel");
              if (panel) {
                const line = document.createElement("p");
                line.className = "refused";
                line.textContent = `No table for this link: ${text} Ask the GM for your seat's link (the GM's Seats list has each one).`;
                panel.replaceChildren(line);
              }
              for (const id of ["dice-mode", "keys"]) {
                const part = document.getElementById(id);
                if (part) part.hidden = true;
              }
            }
            break;
          }
          refused = 0;
          if (streaming) live(true); // the server answers again (a command that could not reach it said otherwise)
          const failed = $("#message");
          if (failed && failed.dataset.failed === "table") say("", false); // read again: the failure is past
          for (const [id, when] of unreached) { // a command that could not reach the server, read again since
            if (Date.now() - when < 1500) continue;
            unreached.delete(id);
            delete formErrors[id];
            const line = document.getElementById(id) ? $(".form-error", document.getElementById(id)) : null;
            if (line) line.textContent = "";
          }
          if (answer.status === 204) continue; // nothing changed since the last look
          tag = answer.headers.get("X-Table-Tag") || "";
          const html = await answer.text();
          if (html === shown) continue; // nothing new: leave the page (and the reader's place) alone
          shown = html;
          const before = $(".table-panel") || { dataset: {} };
          const wasMine = before.dataset.staged === "yours";
          const wasStaged = !!before.dataset.staged && before.dataset.head !== undefined;
          const headThen = before.dataset.head;
          swap(html);
          const panel = $(".table-panel");
          // a command staged for dice gone while nothing was written: withdrawn, or dropped when the GM changed the
          // physical dice; said, so that no seat thinks its answer went through (found by a tester)
          if (wasStaged && !panel.dataset.staged && panel.dataset.head === headThen
              && !($("#message") || { textContent: "" }).textContent.startsWith("The staged command is withdrawn")) {
            say("The command that waited for dice is gone and nothing was written (withdrawn, or dropped when the GM changed the physical dice): give it again if it still stands.", false);
          }
          // dice newly awaited from this seat: its roll box is brought into view, unless the reader is typing in a
          // field (a GM reading the seats list far below saw only the tab's title say so: a tester)
          const typing = document.activeElement && ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName);
          if (panel.dataset.staged === "yours" && !wasMine && !typing && $("#rollbox")) {
            $("#rollbox").scrollIntoView({ block: "start" });
          }
          // a decision newly awaited from this seat is brought into view as the roll box is, unless the reader is
          // typing (a GM at the undo form far below saw nothing of the Attack of Opportunity now theirs: a tester)
          const asked = $("#decision.yours", panel);
          const askedBefore = before.querySelector ? before.querySelector("#decision.yours #decision-h") : null;
          if (asked && !typing && panel.dataset.staged !== "yours"
              && (!askedBefore || askedBefore.textContent !== $("#decision-h", asked).textContent)) {
            const where = asked.getBoundingClientRect();
            if (where.top < 0 || where.top > window.innerHeight - 80) asked.scrollIntoView({ block: "start" });
          }
          // this seat's turn newly come, or the fight newly over: the page is brought to where it says so (a
          // phone left scrolled down at the last answer showed Kael's turn from mid-sentence, the heading and the
          // target above the fold; the GM's end of the fight showed the last card under the pinned bar: a tester)
          const yoursNow = !!$(".fight-bar .your-turn", panel);
          const yoursBefore = !!(before.querySelector && before.querySelector(".fight-bar .your-turn"));
          if (!typing && !asked && panel.dataset.staged !== "yours" && before.querySelector) {
            if (yoursNow && !yoursBefore) {
              const bar = $(".fight-bar", panel); // pinned on a wide screen (always in sight): the turn's commands
              bringToTop(bar && getComputedStyle(bar).position === "sticky" ? $("#turn-commands", panel) || bar : bar);
            }
            else if (panel.dataset.ended === "yes" && before.dataset.ended !== "yes") {
              bringToTop($("#top-card", panel) || $(".fight-bar", panel));
            }
          }
          if (Number(panel.dataset.head) !== head) {
            headBefore = head;
            changedAt = Date.now();
          }
          head = Number(panel.dataset.head);
          rememberHead(panel);
          // "the table moved on (to #N)" is said of the table at #N: once it has moved past, it is said no more (it
          // stood above later decisions as if it were theirs: a tester)
          const box = $("#message");
          if (box && box.dataset.until && head > Number(box.dataset.until)) say("", false);
          // the banner a staged command left ("Waiting for Bob's dice.") says what the table waits for now: the
          // seat awaited now, or nothing once the dice are this seat's (its roll box says so) or nothing is staged
          if (box && box.textContent.startsWith("Waiting for ")) {
            const awaiting = panel.dataset.awaiting || "";
            if (awaiting) say(`Waiting for ${awaiting}'s dice.`, false);
            else say("", false);
          }
          document.title = `${panel.dataset.status ? `${panel.dataset.status} · ` : ""}${$("h1", panel).textContent} · omen`;
          announce(panel);
          $("#gm-extra").hidden = panel.dataset.seat !== "gm";
          $("#keys").hidden = panel.dataset.seat === "spectator"; // it answers nothing (a streamer's audience read
          // "E ends the turn": a tester)
          showDiceMode();
          padForBar();
          showTitle();
          if (panel.dataset.seat === "gm" && panel.dataset.seedRevealed === "yes" && verifiedAt !== head) {
            await verify();
          }
        } while (again);
      })();
      try {
        await fetching;
      } finally {
        fetching = null;
      }
    }

    // An extension that fails as the table is worked out (docs/server.md, 500 extension-failed) leaves no table to
    // show, and so no undo form: the GM is offered the undo of the last command beside the problem (the state and
    // the options fail the same way until the extension is fixed or the command undone). Other seats are told only
    // that an extension failed.
    async function offerUndo() {
      const box = $("#message");
      if (!box || $("#recover-undo", box)) return;
      const seat = await fetch(`/fights/${encodeURIComponent(fight)}/seat`, { headers: auth, cache: "no-store" })
        .then((answer) => (answer.ok ? answer.json() : {})).catch(() => ({}));
      if (seat.kind !== "gm" || !box.isConnected || box.dataset.failed !== "table") return;
      const form = document.createElement("form");
      form.id = "recover-undo";
      form.className = "recover";
      form.innerHTML = '<label for="recover-reason">Undo the last command, which the table cannot be shown after; reason:</label> '
        + '<input id="recover-reason" name="reason" value="an extension failed" maxlength="200"> '
        + '<button type="submit">Undo the last command</button>';
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const reason = $("#recover-reason", form).value.trim();
        post(form, "commands", { command: reason ? { command: "undo", reason } : { command: "undo" } });
      });
      box.append(" ", form);
    }

    async function verify() {
      const badge = $("#verify-badge");
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/verify`, { headers: auth, cache: "no-store" });
      if (!answer.ok) {
        badge.textContent = await problemText(answer);
        return;
      }
      const report = await answer.json();
      verifiedAt = report.head ? report.head.seq : -1;
      badge.className = `badge-verdict ${report.clean ? "clean" : "findings"}`;
      badge.textContent = report.clean
        ? `verified: ${report.events} events, ${report.seeded_dice} seeded dice${report.seed_revealed ? " checked against the revealed seed" : " (the seed is not revealed yet)"}; head ${report.head.seq}:${report.head.hash.slice(0, 12)}`
        : `${report.problems} problem(s): ${(report.findings || []).join("; ")}`;
      badge.dataset.clean = report.clean ? "yes" : "no";
    }

    // Set `value` at a form input's path (situational.encircled.attackers); a number in the path is a list's index
    // (damage_modifiers.0.value), so the list is made as a list.
    function setPath(target, path, value) {
      const parts = path.split(".");
      let at = target;
      parts.slice(0, -1).forEach((part, i) => {
        at = at[part] = at[part] || (/^\d+$/.test(parts[i + 1]) ? [] : {});
      });
      at[parts[parts.length - 1]] = value;
    }

    // The effect a save calls for, from the form's effect editor (C15, C25): its attributes, cost, and each
    // branch's damage and condition.
    function effectOf(form) {
      const box = $("[data-effect]", form);
      if (!box) return null;
      const field = (name) => $(`[data-effect-field=${name}]`, box);
      const effect = {
        name: field("name").value || "effect", save: field("save").value, against: field("against").value,
        spell: field("spell").checked, action_cost: Number(field("action_cost").value),
      };
      for (const branch of $$(".branch", box)) {
        const part = (name) => $(`[data-part=${name}]`, branch);
        const out = [];
        const count = Number(part("count").value || 0);
        const flat = Number(part("flat").value || 0);
        if (count > 0 || flat !== 0) {
          const damage = { kind: "damage", damage_type: part("damage_type").value, flat };
          if (count > 0) damage.dice = { count, die: part("die").value };
          out.push(damage);
        }
        if (part("condition").value) {
          out.push({ kind: "condition", condition: part("condition").value, stacks: Number(part("stacks").value || 1) });
        }
        effect[branch.dataset.branch] = out;
      }
      return effect;
    }

    function commandOf(form) {
      const choice = $(".choice", form);
      const option = choice.tagName === "SELECT" ? choice.selectedOptions[0] : choice;
      const command = { command: form.dataset.command, ...JSON.parse(option.dataset.args) };
      const effect = effectOf(form);
      if (effect) command.effect = effect;
      for (const input of $$("[data-path]", form)) {
        if (input.dataset.kind === "checkbox") {
          if (input.checked) setPath(command, input.dataset.path, true);
        } else if (input.value !== "") {
          setPath(command, input.dataset.path, input.dataset.kind === "number" ? Number(input.value) : input.value);
        }
      }
      if (typed()) {
        const box = $(`.choice-dice[data-choice="${choice.value}"]`, form);
        command.dice = box ? facesOf(box) : [];
      }
      return command;
    }

    // The faces typed, in order, up to the first left empty: faces are positional (C29), and the dice after a
    // blank are another seat's to give (the server stages the command for them).
    function facesOf(box) {
      const faces = [];
      for (const input of $$("input.face", box)) {
        if (input.value === "") break;
        faces.push(Number(input.value));
      }
      return faces;
    }

    function manual() {
      const panel = $(".table-panel");
      return !!panel && panel.dataset.dice === "manual";
    }

    // After a decision is answered the page changes under the reader (the box goes, the top card says how it went):
    // the reader is kept at the decision now open, or else at the fight bar and the top card, not left wherever the
    // shorter page put them (a phone's Decline left the page scrolled into the log: found by a tester).
    function keepAtDecision() {
      bringToTop($("#decision") || $(".fight-bar"));
    }

    // ``target``'s top brought into sight where it is out of it: above the screen's top (or under the fight bar
    // pinned there, its scroll margin), or below the turn's bar pinned at the foot (the page's scroll padding, the
    // bar's height): it is then put at the screen's top. A top in sight is left where it is.
    function showTop(target) {
      padForBar();
      const top = target.getBoundingClientRect().top;
      const margin = Math.max(8, parseFloat(getComputedStyle(target).scrollMarginTop) || 0);
      const foot = parseFloat(document.documentElement.style.scrollPaddingBottom) || 96;
      if (top < margin || top > window.innerHeight - foot) {
        window.scrollTo(0, Math.max(0, window.scrollY + top - margin));
      }
    }

    // ``target`` brought to the screen's top where it is above it or in its lower half, clear of what is pinned
    // above it.
    function bringToTop(target) {
      if (!target) return;
      const top = target.getBoundingClientRect().top;
      // clear of the fight bar pinned above it on a wide screen (its scroll margin: the decision's heading stood
      // under the bar, a tester), 8 px below the screen's top elsewhere
      const margin = Math.max(8, parseFloat(getComputedStyle(target).scrollMarginTop) || 0);
      if (top < margin || top > window.innerHeight / 2) {
        window.scrollTo(0, Math.max(0, window.scrollY + top - margin));
      }
    }

    // And the focus with it, once the page's own command is answered (WCAG 2.4.3; found by a blind tester: it fell
    // to the page's body after almost every action): a refusal keeps it on the control, its error line describing
    // it; a command staged for dice moves it to the roll box; else it goes to the decision now open (its heading),
    // or stays on the control sent where that is still offered (a condition applied, an undo), or else goes to the
    // top card (the fight bar above it). Where the reader went elsewhere meanwhile, it is left there.
    function keepReader(sentId, outcome, keyed = false) {
      const active = document.activeElement;
      const form = sentId ? document.getElementById(sentId) : null;
      // lost, or put by the table's swap at one of the places it keeps the reader at; or the command was sent by
      // its shortcut key, the focus elsewhere (it stayed on "Copy the head", the decision answered and a new one
      // open below: an accessibility tester)
      const lost = !active || active === document.body
        || ["top-card", "fight-bar", "decision-h", "roll-h"].includes(active.id);
      if (!keyed && !lost && !(form && form.contains(active))) return;
      const button = form ? $("button[type=submit]", form) : null;
      const to = (el, scroll = false) => {
        el.focus({ preventScroll: true });
        if (scroll) keepAtDecision();
      };
      if (outcome === "refused" && button) return to(button);
      if (outcome === "staged" && $("#roll-h")) return to($("#roll-h"));
      if ($("#decision-h")) return to($("#decision-h"), true);
      if (button && outcome !== "answered") return to(button);
      const top = $("#top-card") || $("#fight-bar");
      if (top) to(top, true);
    }

    async function post(form, path, body) {
      let outcome = "refused"; // or "done", "answered" (the open decision's), "staged" (for dice), "moved" (stale)
      const button = $("button[type=submit]", form);
      const keyed = keyedFrom !== "" && keyedFrom === form.id;
      keyedFrom = "";
      if (button && document.activeElement === button) sentFrom = form.id;
      if (button) button.disabled = true;
      document.body.dataset.busy = "yes";
      clearAt(form);
      try {
        const answer = await fetch(`/fights/${encodeURIComponent(fight)}/${path}`, {
          method: "POST",
          headers: { ...auth, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        if (answer.status === 202) {
          outcome = "staged";
          const staged = await answer.json();
          say(`Waiting for ${staged.awaiting}'s dice.`, false);
          // the faces sent are spent: the roll box asking for the next die has the same field ids, and a face kept
          // there was sent for a die never rolled (a tester's Dodge die 8 stood in his hit die's box)
          if (form.tagName === "FORM") form.reset();
        } else if (answer.ok) {
          outcome = form.classList.contains("answer") ? "answered" : "done";
          say("", false);
          // done: the form starts afresh (its id is the same at the next head, so what was typed would stay); a
          // condition applied, the next one is chosen anew
          if (form.tagName === "FORM") form.reset();
        } else if (answer.status === 409 && body.expected_version !== undefined
                   && !String((await answer.clone().json().catch(() => ({}))).type || "").endsWith("/dice-staged")) {
          // the fight moved on since the form was shown (another seat, or a second press of the same key): nothing
          // was done, and nothing is wrong; the table below is the new one. (A command staged for dice is another
          // 409: said as the problem it is, with what to do.)
          outcome = "moved";
          const movedTo = (await answer.json()).current_version;
          say(`Not sent: the table moved on (to #${movedTo}) before this reached it, so nothing was done. Look at the table again.`, "note");
          const note = $("#message");
          if (note) note.dataset.until = String(movedTo); // said no more once the table moves past it
        } else {
          const staged = answer.status === 409
            && String((await answer.clone().json().catch(() => ({}))).type || "").endsWith("/dice-staged");
          sayAt(form, await problemText(answer, form));
          if (staged && form.id) stagedErrors.add(form.id);
        }
      } catch (_) {
        // the request failed in the network: whether the server got it is not known (the table, read again once
        // the server answers, shows what it holds); the browser's own words ("Failed to fetch") say nothing more
        sayAt(form, "The server could not be reached, so this may not have been done: the table shows what the server holds once it answers again.");
        if (form.id) unreached.set(form.id, Date.now());
        live(false);
      } finally {
        if (button) button.disabled = false;
        try {
          await refresh();
        } catch (_) {
          // still out of reach: the looks every few seconds read the table again (the page stayed busy, and
          // looked no more, until another seat's command came down the stream: a tester)
        }
        keepReader(form.id, outcome, keyed);
        delete document.body.dataset.busy;
      }
    }

    // A die in words, as its label says it ("Kael Arden's hit d6 fcs"); what is wrong with its face, said beside its
    // field, where its label names it: "is blank: type ..." is "Blank: type ..." (short: a phone at large text).
    function dieSaid(input) {
      const label = input.closest("label");
      return input.getAttribute("aria-label")
        || (label ? label.textContent : input.id).trim().replace(/\s+/g, " ");
    }
    const beside = (wrong) => wrong.replace(/^is /, "").replace(/^./, (c) => c.toUpperCase());

    // A die left blank in a form whose faces are typed: said at once, naming the die (C29: faces are positional).
    // With the server's dice every die that is certain to roll must be typed (or the mode switched back); in a fight
    // with physical dice a blank ends the faces this seat gives (the rest are another seat's). Either way a face
    // typed after a blank, an "if rolled" one too, is wrong (it was dropped unsaid: a tester).
    // The first die wrong, said beside its field (sayAtFace); false where every face typed may go.
    function blankDie(form) {
      if (!typed()) return false;
      const choice = $(".choice", form);
      const box = $(`.choice-dice[data-choice="${choice.value}"]`, form);
      if (!box) return false;
      const faces = $$("input.face", box);
      for (const [i, input] of faces.entries()) {
        const sides = Number(input.dataset.sides);
        const value = input.value.trim();
        const wrong = value !== "" && !(Number.isInteger(Number(value)) && Number(value) >= 1 && Number(value) <= sides)
          ? `must be a whole number from 1 to ${sides}.`
          : value === "" && faces.slice(i + 1).some((later) => later.value.trim() !== "")
            ? "is blank, but a later die is typed: faces go in order (C29)."
            : value === "" && !manual() && !input.dataset.maybe
              ? 'is blank: type the face you rolled, or choose "the server rolls".' : "";
        if (wrong) {
          sayAtFace(form, input, beside(wrong), `Not sent: die ${i + 1} (${dieSaid(input)}) ${wrong}`);
          return true;
        }
      }
      return false;
    }

    // Undo asks twice: the first press shows what it will undo (the last command, or every card from the seq
    // typed on), the second gives it.
    // What the undo takes back, in words, and whether dice were rolled in it (the GM's cards say: data-rolled).
    function undoPreview(form) {
      const line = $(".undo-preview", form);
      const back = $("input[data-path=to_seq]", form);
      const from = back && back.value !== "" ? Number(back.value) : null;
      if (from === null) return { said: line ? line.dataset.default : "", rolled: Boolean(line && "rolled" in line.dataset) };
      const live = $$(".log .entry:not(.struck)").filter((entry) => !["undo", "redo"].includes(entry.dataset.kind));
      const cards = live.filter((entry) => Number(entry.dataset.seq) >= from).reverse(); // newest first: oldest here
      // a seq inside a card (an answer given in an attack: its own line's seq) is not where a command began with no
      // action in progress, and the server refuses it: said so, naming the card to go back to (the preview said
      // "nothing: no card from #119 on", the server then refused: a GM tester)
      const holder = live.find((entry) => Number(entry.dataset.seq) < from); // the log is newest first
      const starts = $$(".log .entry:not(.struck)").some((entry) => Number(entry.dataset.seq) === from);
      const panel = $(".table-panel");
      const head = panel ? Number(panel.dataset.head) : NaN;
      if (!starts && holder && from <= head) {
        return { said: "", rolled: false, inside: `#${from} is inside #${holder.dataset.seq} ${holder.dataset.said}: an `
          + `undo goes back to where a card starts, and takes it back whole (its answers with it): type ${holder.dataset.seq}. `
          + "Pressed again, it is sent as typed (the server says whether it may)." };
      }
      return {
        said: cards.length ? cards.map((entry) => `#${entry.dataset.seq} ${entry.dataset.said}`).join("; ")
          : `nothing: no card from #${from} on`,
        rolled: cards.some((entry) => "rolled" in entry.dataset),
      };
    }

    function armUndo(form) {
      const button = $("button[data-confirm-undo]", form);
      if (!button || form.dataset.armed === "yes") return false;
      const { said, rolled, inside } = undoPreview(form);
      const line = $(".undo-preview", form);
      if (inside) { // armed all the same: a command that makes no card of its own starts there, the server knows
        if (line) line.textContent = inside;
        clearAt(form);
        form.dataset.armed = "yes";
        button.textContent = "Send the undo as typed";
        tell(inside);
        return true;
      }
      // in a seeded fight the roll counter rewinds with the undo: the same rolls made next show the same faces,
      // which every seat has seen (docs/rulings.md, "Undo does not hide a re-roll"; a tester's player foresaw hers);
      // said only where dice were rolled in what it undoes (an undone condition rolled none: a tester)
      const panel = $(".table-panel");
      const again = panel && panel.dataset.dice === "seeded" && rolled && !said.startsWith("nothing")
        ? " Its dice come again, face for face, for the same rolls made next (the seed's counter rewinds), and every seat has seen them."
        : "";
      const asked = said ? `This undoes ${said}.${again} Press again to confirm.` : "Nothing to undo.";
      if (line) line.textContent = asked;
      clearAt(form); // a refusal of an earlier press ("reason is needed") no longer stands beside the confirmation
      form.dataset.armed = "yes";
      button.textContent = "Confirm the undo";
      tell(asked); // said to a screen reader too (the line is no live region: found by a blind tester)
      return true;
    }

    // A condition to apply is chosen in two selects (whom, which): the choice they name, or none until both are.
    // The offered choice the two selects name, and the one the "applied by" select names among them: a condition a
    // save ends is offered once per applier (its die opposes the save, C15, C40), so the first of them would credit
    // someone the GM did not choose ("no one" applied Poisoned "by Kael": found by a tester). Returns what is wrong,
    // or "".
    function pair(form) {
      const [who, condition] = [0, 1].map((i) => $(`select.pair[data-pair="${i}"]`, form).value);
      const choice = $("select.choice", form);
      const found = who && condition ? $$("option", choice).filter((o) => o.dataset.pair === `${who}|${condition}`) : [];
      const bySelect = $("[data-path=by]", form);
      const by = bySelect ? bySelect.value : "";
      const byOf = (o) => (JSON.parse(o.dataset.args || "{}").by || "");
      // the applier chosen; else, chosen by name (the free select sets it), any; else one applied by no one
      const match = found.find((o) => byOf(o) === by) || (by ? found[0] : null);
      choice.value = match ? match.value : "";
      if (!match && found.length && bySelect) {
        bySelect.focus();
        return `Not sent: choose who applied ${condition}: a save ends it, and the applier's die opposes the save (C15, C40).`;
      }
      return "";
    }

    async function give(form) {
      if ($("select.pair", form)) {
        const unpaired = pair(form);
        if (unpaired) {
          sayAt(form, unpaired);
          return;
        }
        if ($("select.choice", form).value === "") {
          const empty = $$("select.pair", form).find((select) => select.value === "");
          (empty || $("select.pair", form)).focus();
          sayAt(form, empty ? "Not sent: choose whom and which condition first." : "Not sent: that condition is not offered for that combatant now.");
          return;
        }
      }
      if (form.dataset.confirm && !$("input.confirm", form).checked) {
        sayAt(form, "Tick the box first: it says what revealing the seed mid-fight does.");
        return;
      }
      // a field the command needs, left empty (novalidate: the browser's bubble alone said so, and on a phone the
      // press seemed to do nothing: a tester), is said on the form's own error line
      const missing = $$("[required]", form).find((input) => !input.disabled && String(input.value).trim() === "");
      if (missing) {
        missing.focus();
        const label = missing.id ? $(`label[for="${missing.id}"]`, form) : null;
        const what = (label ? label.textContent : missing.getAttribute("aria-label") || missing.name || "a field")
          .trim().replace(/\s+/g, " ").replace(/:$/, "");
        sayAt(form, `Not sent: ${what} is needed.`);
        return;
      }
      if (blankDie(form)) return;
      if (armUndo(form)) return;
      // the head the form was shown at (a key pressed just after a change: the head before it, see KEY_SETTLE)
      const seen = form.dataset.seen !== undefined ? Number(form.dataset.seen) : Number(form.dataset.head ?? head);
      delete form.dataset.seen;
      const body = { command: commandOf(form), expected_version: seen };
      // every command may wait for another seat's dice: in a fight with physical dice, and in a seeded fight where
      // some combatants' dice are physical (a seat cannot always tell whose); where none is, nothing is staged
      body.stage = true;
      return post(form, "commands", body);
    }

    // The roll box checks its faces itself (novalidate: the browser's own bubble said the range while this box's
    // line still said the last check's "is blank": found by a tester), each in order, and says which die and why.
    // The first wrong face is said beside its field, focused and in view (a long roll box said it under its button,
    // far from the die: a phone tester).
    async function giveDice(form) {
      for (const [i, input] of $$("input.face", form).entries()) {
        const sides = Number(input.dataset.sides);
        const value = input.value.trim();
        const wrong = value === "" ? "is blank: type the face you rolled."
          : Number.isInteger(Number(value)) && Number(value) >= 1 && Number(value) <= sides ? ""
          : `is ${value}: a d${sides} shows a whole number from 1 to ${sides}.`;
        if (wrong) {
          sayAtFace(form, input, beside(wrong), `Die ${i + 1} (${dieSaid(input)}) ${wrong}`);
          return;
        }
      }
      return post(form, "staged", { id: form.dataset.staged, dice: facesOf(form) });
    }

    async function makeSeat(form) {
      const plays = $$("input.plays:checked", form).map((box) => box.value);
      const name = $("#seat-name", form).value;
      clearAt(form);
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/seats`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ kind: plays.length ? "player" : "spectator", name, combatants: plays }),
      });
      if (!answer.ok) {
        sayAt(form, await problemText(answer));
        return;
      }
      const made = await answer.json();
      say(`Seat made: ${made.seat.name || made.seat.kind}. Its link is in the list of seats (the server makes it again from your link after a reload).`, false);
      $("#seat-name", form).value = "";
      for (const box of $$("input.plays", form)) box.checked = false;
      await refresh();
    }

    async function seatAction(button) {
      const { seat, action } = button.dataset;
      // Cutting a player off (revoking the seat, or a new link that voids theirs) takes a second press, as an undo
      // does (one misclick did it: found by a tester); bringing a revoked seat back takes one.
      if (!button.closest("li.revoked") && button.dataset.armed !== "yes") {
        button.dataset.armed = "yes";
        button.textContent = action === "revoke" ? "Press again to revoke" : "Press again for a new link";
        tell(action === "revoke" ? "Press again to revoke the seat: its link will open nothing."
          : "Press again to give the seat a new link: the old one will open nothing.");
        return;
      }
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/seats/${encodeURIComponent(seat)}/${action}`, {
        method: "POST", headers: auth,
      });
      say(answer.ok ? (action === "revoke" ? "The seat is revoked: its link opens nothing now." : "The seat has a new link; the old one opens nothing now.")
        : await problemText(answer), !answer.ok);
      await refresh();
    }

    async function showQr(button) {
      const seat = button.dataset.seat;
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/seats/${encodeURIComponent(seat)}/qr?origin=${encodeURIComponent(location.origin)}`,
        { headers: auth, cache: "no-store" });
      if (!answer.ok) {
        say(await problemText(answer));
        return;
      }
      const svg = await answer.text();
      const img = document.createElement("img");
      img.alt = "QR code of the seat's link";
      img.className = "qr-code";
      img.src = `data:image/svg+xml;base64,${btoa(svg)}`;
      const holder = document.getElementById(`qr-${seat}`);
      if (holder) holder.replaceChildren(img);
    }

    async function copyLink(button) {
      const url = new URL(button.dataset.link, location.origin).href;
      try {
        await navigator.clipboard.writeText(url);
        say("The link is copied.", false);
      } catch (_) {
        say(`Copy this link: ${url}`, false);
      }
    }

    // Every head this page was shown, kept by the browser for this fight (newest first, HEADS_KEPT at most): a
    // player who did not press Copy at the time may still check the published log against a head her page saw
    // then (it showed the latest alone: a new GM's player, a tester). Public to the seat: each was sent to it.
    const HEADS_KEPT = 200;
    function headsKey() {
      return `omen-heads:${fight}`;
    }
    function rememberHead(panel) {
      const seen = `${panel.dataset.head}:${panel.dataset.hash}`;
      let heads = [];
      try { heads = JSON.parse(localStorage.getItem(headsKey()) || "[]"); } catch (_) { heads = []; }
      if (!Array.isArray(heads)) heads = [];
      if (heads[0] !== seen) {
        heads = [seen, ...heads.filter((h) => h !== seen)].slice(0, HEADS_KEPT);
        try { localStorage.setItem(headsKey(), JSON.stringify(heads)); } catch (_) { /* storage full or off */ }
      }
      const box = $("#heads-seen", panel);
      const list = box ? $("ol", box) : null;
      if (!list) return;
      list.replaceChildren(...heads.map((head) => {
        const item = document.createElement("li");
        const code = document.createElement("code");
        code.textContent = head;
        const copy = document.createElement("button");
        copy.type = "button";
        copy.className = "small copy-head";
        copy.dataset.text = head;
        copy.setAttribute("aria-label", `Copy the head ${head.split(":")[0]}`);
        copy.textContent = "Copy";
        item.append(code, " ", copy);
        return item;
      }));
      box.hidden = heads.length < 2;
    }

    async function copyHead(button) {
      try {
        await navigator.clipboard.writeText(button.dataset.text);
        say(`The head ${button.dataset.text} is copied.`, false);
      } catch (_) {
        say(`Copy this head: ${button.dataset.text}`, false);
      }
    }

    async function withdraw() {
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/staged`, { method: "DELETE", headers: auth });
      say(answer.ok ? "The staged command is withdrawn." : await problemText(answer), !answer.ok);
      await refresh();
    }

    async function settle(change, done = "The table settings are changed.") {
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/settings`, {
        method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify(change),
      });
      say(answer.ok ? done : await problemText(answer), !answer.ok);
      await refresh();
    }

    const publish = () => settle({ publish: true }, "The log is published.");

    // Once the log is published, any seat may save it: the session log (one self-contained HTML page) or the log
    // itself (JSON Lines, for omen verify). Fetched with the seat's bearer header (a plain link could not carry
    // it) and saved as a file, which opens outside this page's policy.
    async function saveLog(button) {
      const what = button.dataset.what;
      const answer = await fetch(`/fights/${encodeURIComponent(fight)}/${what}`, { headers: auth, cache: "no-store" });
      if (!answer.ok) {
        say(await problemText(answer));
        return;
      }
      const url = URL.createObjectURL(await answer.blob());
      const link = document.createElement("a");
      link.href = url;
      link.download = `${fight}${what === "session" ? "-session.html" : ".jsonl"}`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      say(`Saved ${link.download}.`, false);
    }

    shell.addEventListener("submit", (event) => {
      const form = event.target;
      event.preventDefault();
      if (form.classList.contains("command")) give(form);
      else if (form.id === "give-dice") giveDice(form);
      else if (form.id === "withdraw-form") withdraw();
      else if (form.id === "seat-form") makeSeat(form);
      else if (form.id === "publish-form") {
        if (!$("input.confirm", form).checked) sayAt(form, "Tick the box first: publishing the log cannot be taken back.");
        else publish();
      }
      else if (form.classList.contains("visibility")) settle({ [form.dataset.change]: [form.dataset.who] });
      else if (form.id === "hp-form") {
        const chosen = $("select", form).value;
        settle({ hp_display: chosen }, `Players now see HP ${chosen}.`);
      }
      else if (form.id === "physical-form") {
        const chosen = $$("input[name=physical]:checked", form);
        const said = chosen.map((box) => box.parentElement.textContent.trim().replace(/ \(the seed's while hidden\)$/, ""));
        settle({ physical: chosen.map((box) => box.value) },
          said.length ? `Physical dice now: ${said.join(", ")}; every other die from the seed.` : "Every die comes from the seed now.");
      }
      else if (form.id === "effects-form") {
        // only the boxes changed since the page was drawn (every one named at once passed the server's bound of 64
        // names in a big roster: a reviewer)
        const boxes = $$("input[name=effect]", form);
        const shown = boxes.filter((box) => box.checked).map((box) => box.value);
        settle({ reveal_effects: boxes.filter((box) => box.checked && !box.defaultChecked).map((box) => box.value),
          hide_effects: boxes.filter((box) => !box.checked && box.defaultChecked).map((box) => box.value) },
          shown.length ? `Every seat now sees these abilities' names: ${shown.join(", ")}.` : "No ability's name is public now.");
      }
      else if (form.id === "notes-form") {
        const about = $("#note-about", form);
        const text = $("#note-text", form).value.trim();
        const whom = about.selectedOptions[0] ? about.selectedOptions[0].textContent : about.value;
        settle({ notes: { [about.value]: text } }, text ? `Your note on ${whom} is saved.` : `Your note on ${whom} is deleted.`);
      }
    });
    shell.addEventListener("change", (event) => {
      if (event.target.matches("select.choice")) pick(event.target);
      if (event.target.matches("select.pair")) pair(event.target.form);
      if (event.target.id === "note-about") {  // the note kept on what is picked, to edit (or nothing yet)
        const picked = event.target.selectedOptions[0];
        $("#note-text").value = picked ? picked.dataset.note || "" : "";
      }
      if (event.target.name === "dice-mode") {
        showDiceMode();
        event.target.focus(); // the radio clicked keeps the focus (and its ring), not the label or the page
      }
    });
    // Typing in the undo form says at once what it would undo now (the standing line said the last command
    // whatever seq was typed: found by a tester), and disarms a first press.
    shell.addEventListener("input", (event) => {
      if (event.target.matches("input.face[aria-invalid]")) clearFace(event.target); // the face refused, retyped
      const form = event.target.form;
      if (!form) return;
      if (form.dataset.armed) {
        delete form.dataset.armed;
        const button = $("button[data-confirm-undo]", form);
        if (button) button.textContent = "Undo";
      }
      const line = $(".undo-preview", form);
      if (line) {
        const { said, inside } = undoPreview(form);
        line.textContent = inside || (said ? `Undoes ${said}` : "Nothing to undo yet.");
      }
    });
    // An in-page link (the "Also now" list, the skip link) goes to its place without touching the address: the
    // seat's token is the address's fragment, and a link's "#o-..." replaced it, so a reload lost the seat (found by
    // a keyboard tester). The place is opened (its details), scrolled to and focused: a form at its first control.
    document.addEventListener("click", (event) => {
      const link = event.target.closest && event.target.closest('a[href^="#"]');
      const goal = link ? document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1))) : null;
      if (!goal) return;
      event.preventDefault();
      for (let d = goal.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
        d.open = true;
        if (d.id) opened[d.id] = true;
      }
      const control = goal.matches("button, input, select, textarea, a[href]") ? goal
        : $$("button, input:not([type=hidden]), select, textarea", goal).find((el) => !el.disabled
          && el.getClientRects().length) || null;
      if (!control && !goal.hasAttribute("tabindex")) goal.setAttribute("tabindex", "-1");
      goal.scrollIntoView({ block: "start" });
      (control || goal).focus({ preventScroll: true });
    });
    shell.addEventListener("click", (event) => {
      if (event.target.closest("#title-more")) {
        titleWhole = !titleWhole;
        showTitle();
        return;
      }
      // a chip's "+": Apply a condition opened on that combatant, the condition's select next (a Foundry GM applies
      // one from the token: a GM tester counted seven steps from the strip)
      const add = event.target.closest("button.cond-add");
      if (add) {
        const form = document.getElementById(add.dataset.form);
        const who = form ? $('select.pair[data-pair="0"]', form) : null;
        if (!form || !who) return;
        const group = form.closest("details");
        if (group) {
          group.open = true;
          if (group.id) opened[group.id] = true; // kept open across the table's swaps, as a summary's click keeps it
        }
        who.value = add.dataset.who;
        who.dispatchEvent(new Event("change", { bubbles: true }));
        const condition = $('select.pair[data-pair="1"]', form);
        form.scrollIntoView({ block: "center" });
        (condition || who).focus();
        return;
      }
      const action = event.target.closest("button.seat-action, button.show-qr, button.copy-link, button.save-log, "
        + "button.copy-head");
      if (action) {
        if (action.classList.contains("save-log")) saveLog(action);
        else if (action.classList.contains("copy-head")) copyHead(action);
        else if (action.classList.contains("seat-action")) seatAction(action);
        else if (action.classList.contains("show-qr")) showQr(action);
        else copyLink(action);
        return;
      }
      const summary = event.target.closest("summary");
      if (summary && summary.parentElement.id) opened[summary.parentElement.id] = !summary.parentElement.open;
    });
    // a select in a box just opened is measured now (shut, it had no width to cut its option at)
    shell.addEventListener("toggle", (event) => {
      if (event.target.open) for (const select of $$("select.choice", event.target)) echo(select);
    }, true);
    $("#verify").addEventListener("click", () => verify());

    // Keyboard: 1-9 answer the open decision (the number on each button), E ends the turn, R goes to the dice to
    // roll; never while typing in a field.
    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey || document.body.dataset.busy) return;
      const target = event.target;
      // Enter in a field sends its form, a list's too (a text field's does so by itself; a list's did nothing: an
      // accessibility tester)
      if (event.key === "Enter" && target && target.tagName === "SELECT" && target.form
          && $("button[type=submit]", target.form)) {
        event.preventDefault();
        target.form.requestSubmit();
        return;
      }
      const typing = target && target.closest && target.closest("input, select, textarea, [contenteditable]");
      if (typing && !(typing.type === "radio" || typing.type === "checkbox")) return; // a radio keeps the keys
      const key = event.key.toLowerCase();
      if (key === "r") {
        const face = $("#rollbox input.face");
        if (face) {
          event.preventDefault();
          face.focus();
        }
        return;
      }
      const form = $(`form[data-shortcut="${CSS.escape(key)}"]`);
      if (!form) return;
      event.preventDefault();
      if (event.repeat) return; // a key held down is one press
      const now = Date.now();
      if (key === lastKey && lastKeyAt <= changedAt && now - changedAt < KEY_SETTLE && headBefore >= 0) {
        form.dataset.seen = String(headBefore);
      }
      lastKey = key;
      lastKeyAt = now;
      const button = $("button[type=submit]", form);
      if (!button) return;
      keyedFrom = form.id; // the reader is kept at what follows, wherever the focus stood when the key was pressed
      button.click(); // (the form is sent, or refused in the page, before click returns: post reads keyedFrom first)
      keyedFrom = "";
    });

    // The badge is a polite status region: written only when it changes (rewritten at every look, every 3 s, a
    // screen reader could say "live" every 3 s: an accessibility tester)
    function live(on) {
      const badge = $("#live");
      const text = on ? "live" : "reconnecting";
      if (badge.textContent !== text) badge.textContent = text;
      if (badge.dataset.live !== (on ? "yes" : "no")) badge.dataset.live = on ? "yes" : "no";
    }

    // One SSE message: "event:", "id:", "data:" lines.
    function message(text) {
      let kind = "message";
      let data = "";
      for (const line of text.split("\n")) {
        if (line.startsWith("event:")) kind = line.slice(6).trim();
        else if (line.startsWith("id:")) last = Math.max(last, Number(line.slice(3).trim()) || 0);
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (kind === "options") refresh();
      else if (kind === "error") {
        // the server failed to follow the fight (a bug, logged under the reference it gives): it stays connected
        // and tries again when the fight changes
        try { say(JSON.parse(data).detail); } catch (_) { say("the server failed while following this fight"); }
        $("#message").dataset.failed = "table"; // said until the table is read again
      }
    }

    async function follow() {
      for (;;) {
        try {
          const answer = await fetch(`/fights/${encodeURIComponent(fight)}/stream?after=${last}`, {
            headers: { ...auth, Accept: "text/event-stream" }, cache: "no-store",
          });
          if (!answer.ok) {
            say(await problemText(answer));
            return;
          }
          streaming = true;
          live(true);
          const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer = (buffer + value).replace(/\r\n?/g, "\n");
            let end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              message(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
            }
          }
        } catch (_) {
          // the connection dropped: retry below
        }
        streaming = false;
        live(false);
        await sleep(1000);
        try {
          await refresh();
        } catch (_) {
          // still away: the next try refreshes again
        }
      }
    }

    if (!token) {
      say("This link holds no seat token (#token=...): open the link the GM gave you.");
      return;
    }
    (async () => {
      // the first look at the table, again while the server fails or cannot be reached (a 5xx, a network error:
      // a GM page opened in a failure stayed "not connected" after the server recovered: a tester), waiting
      // longer each time, up to 10 s
      for (let wait = 1000; ; wait = Math.min(2 * wait, 10000)) {
        try {
          await refresh();
        } catch (_) {
          refused = 0;
          say("The server cannot be reached: trying again.");
          $("#message").dataset.failed = "table";
        }
        if (head >= 0 || (refused >= 400 && refused < 500)) break;
        live(false);
        await sleep(wait);
      }
      if (head < 0) {
        // the table refused this link (a revoked or reissued seat, a fight that is gone): its reason, said by
        // refresh, stands; following the fight would only be refused again, in worse words (found by a tester)
        const badge = $("#live");
        badge.textContent = "not connected";
        badge.dataset.live = "no";
        return;
      }
      last = head;
      follow();
      // The table settings (publishing the log, revealing a combatant, the HP display) change what a seat sees
      // without moving the head, so the stream says nothing of them: look again every few seconds.
      setInterval(() => { if (!document.hidden && !document.body.dataset.busy) refresh().catch(() => {}); }, SETTINGS_POLL);
    })();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = $("#setup");
    if (form) setup(form);
    const shell = $("#shell");
    if (shell) tablePage(shell);
  });
})();
