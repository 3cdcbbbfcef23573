// A client of `omen serve` in plain Node.js (18 or later): built-in fetch only, no npm packages.
//
//   node examples/node-client/client.mjs SETUP_LINK
//
// SETUP_LINK is the link `omen serve` prints (http://127.0.0.1:8000/#create=TOKEN): the server's address, and in
// its fragment the creation token that creating a fight needs (or give the address alone and the token in
// OMEN_CREATE_TOKEN).
//
// It creates a seeded fight from fight.json (two Ember Ford sheets) as the GM, makes two player seats (Alice
// plays Kael, Bob plays Vesh), and each seat follows its own live stream. Each player plays its own
// combatant from its own options (each turn: an ability offered, once a turn, Kael's Healing Word say; then the
// first attack offered, else end the turn; at its Active Defense window: Dodge if offered, else decline; at an
// ability's decision point, its first choice: use it); the GM gives the GM's commands (roll initiative). At the
// end the GM reveals the seed and publishes the log, and each player checks that the last head its stream
// showed is the head of the published log (GET /fights/ID/log), and that a player's view never held the
// other's sheet. It prints one JSON line: the fight id and that head, so that
// `omen verify LOG --head SEQ:HASH` can witness it. Exit 0 if every check held.

import { readFile } from "node:fs/promises";

const LINK = new URL(process.argv[2] ?? "http://127.0.0.1:8000/");
const BASE = LINK.origin;
const CREATE = new URLSearchParams(LINK.hash.slice(1)).get("create") ?? process.env.OMEN_CREATE_TOKEN ?? "";
const MAX_COMMANDS = 400;

async function call(method, path, token, body, headers = {}) {
  const answer = await fetch(BASE + path, {
    method,
    headers: {
      "Content-Type": "application/json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await answer.json();
  return { status: answer.status, data };
}

function fail(message) {
  console.error(`node client: ${message}`);
  process.exit(1);
}

// The live stream, read as it comes: every `event` message's seq, and the head of each `options` message.
function follow(fightId, token) {
  const seen = { seqs: [], sheets: [], head: null, done: null };
  const controller = new AbortController();
  seen.stop = () => controller.abort();
  seen.done = (async () => {
    const answer = await fetch(`${BASE}/fights/${fightId}/stream`, {
      headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream" },
      signal: controller.signal,
    });
    if (answer.status !== 200) fail(`the stream answered ${answer.status}`);
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of answer.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buffer.search(/\r?\n\r?\n/)) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
          const fields = {};
          for (const line of block.split(/\r?\n/)) {
            const at = line.indexOf(": ");
            if (at > 0) fields[line.slice(0, at)] = (fields[line.slice(0, at)] ?? "") + line.slice(at + 2);
          }
          if (fields.event === "event") {
            seen.seqs.push(Number(fields.id));
            const event = JSON.parse(fields.data);
            if (event.type === "combatant_joined" && event.event) seen.sheets.push(event.event.sheet);
          }
          if (fields.event === "options") seen.head = JSON.parse(fields.data).head;
        }
      }
    } catch (error) {
      if (error.name !== "AbortError") throw error;
    }
  })();
  return seen;
}

// What to give next, chosen from the options alone.
const usedOn = new Set();
function choose(options) {
  const offers = options.offers;
  const waiting = options.waiting;
  if (waiting !== null) {
    const answers = offers.filter((o) => waiting.answers.includes(o.command));
    if (answers.length === 0) fail(`nothing answers the open ${waiting.kind}`);
    const offer = answers[0];
    const dodge = offer.choices.find((c) => c.args.defense === "dodge");
    return { command: offer.command, ...(dodge ?? offer.choices[0]).args };
  }
  const turn = options.turn;
  const ability = offers.find((o) => o.command === "use_ability" && o.actor === turn);
  const thisTurn = `${options.round}:${turn}`;
  if (ability && !usedOn.has(thisTurn)) {  // an ability used on one's turn (docs/abilities.md), once a turn
    usedOn.add(thisTurn);
    return { command: "use_ability", ...ability.choices[0].args };
  }
  const attack = offers.find((o) => o.command === "declare_attack" && o.actor === turn);
  if (attack) return { command: "declare_attack", ...attack.choices[0].args };
  const offer = offers.find((o) => o.command === "end_turn" && o.actor === turn)
    ?? offers.find((o) => o.command === "roll_initiative");
  if (!offer) fail(`no command to give in phase ${options.phase}`);
  return { command: offer.command, ...offer.choices[0].args };
}

const fight = JSON.parse(await readFile(new URL("./fight.json", import.meta.url), "utf8"));
const made = await call("POST", "/fights", CREATE, fight);
if (made.status !== 201) fail(`creating the fight answered ${made.status}: ${JSON.stringify(made.data)}`);
const { fight_id: fightId, gm_token: gm } = made.data;

// The GM makes a seat per player; each token is shown once.
const players = {};
for (const [name, who] of [["Alice", "kael"], ["Bob", "vesh"]]) {
  const seat = await call("POST", `/fights/${fightId}/seats`, gm, { kind: "player", name, combatants: [who] });
  if (seat.status !== 201) fail(`making ${name}'s seat answered ${seat.status}: ${seat.data.detail}`);
  players[who] = { name, token: seat.data.token, stream: follow(fightId, seat.data.token) };
}
const refused = await call("POST", `/fights/${fightId}/commands`, players.kael.token,
  { command: { command: "end_turn", who: "vesh" } });
if (refused.status !== 403) fail(`Alice commanding Vesh answered ${refused.status}, not 403`);

// Who moves now: the combatant the open decision waits on, else the one whose turn it is (the GM otherwise).
function mover(options) {
  if (options.waiting !== null) return options.waiting.who[0] ?? null;
  return options.phase === "rounds" ? options.turn : null;
}

let { head, options } = made.data;
let given = 0;
while (options.phase !== "ended" && given < MAX_COMMANDS) {
  const who = mover(options);
  const seat = players[who];
  const token = seat ? seat.token : gm;
  // A player chooses from its own options: only its own combatant's commands are there.
  const mine = seat ? (await call("GET", `/fights/${fightId}/options`, token)).data.options : options;
  const command = choose(mine);
  const key = `node-${given}`;
  const answer = await call("POST", `/fights/${fightId}/commands`, token,
    { command, expected_version: head.seq }, { "Idempotency-Key": key });
  if (answer.status !== 201) fail(`${JSON.stringify(command)} answered ${answer.status}: ${answer.data.detail}`);
  const retry = await call("POST", `/fights/${fightId}/commands`, token,
    { command, expected_version: head.seq }, { "Idempotency-Key": key });
  if (retry.status !== 201 || retry.data.head.hash !== answer.data.head.hash) fail("a retry was not idempotent");
  head = answer.data.head;
  options = (await call("GET", `/fights/${fightId}/options`, gm)).data.options;  // the GM sees every offer
  given += 1;
}
if (options.phase !== "ended") fail(`the fight did not end in ${MAX_COMMANDS} commands`);

const revealed = await call("POST", `/fights/${fightId}/commands`, gm,
  { command: { command: "reveal_seed" }, expected_version: head.seq });
if (revealed.status !== 201) fail(`reveal_seed answered ${revealed.status}: ${revealed.data.detail}`);
head = revealed.data.head;
const early = await call("GET", `/fights/${fightId}/log`, players.kael.token);
if (early.status !== 403) fail(`a player read the log before it was published (${early.status})`);
const publish = await call("POST", `/fights/${fightId}/settings`, gm, { publish: true });
if (publish.status !== 200) fail(`publishing answered ${publish.status}`);

const expected = Array.from({ length: head.seq }, (_, i) => i + 1);
for (const [who, seat] of Object.entries(players)) {
  // Wait for the stream to show the last head, then compare it with the published log's.
  const stream = seat.stream;
  for (let i = 0; i < 100 && stream.head?.seq !== head.seq; i++) await new Promise((r) => setTimeout(r, 50));
  stream.stop();
  await stream.done;
  if (stream.head?.hash !== head.hash) fail(`${seat.name}'s stream ended at ${JSON.stringify(stream.head)}`);
  if (JSON.stringify(stream.seqs) !== JSON.stringify(expected)) fail(`${seat.name}'s stream missed or repeated`);
  const other = stream.sheets.find((sheet) => sheet.id !== who);
  if (!other || other.attributes !== undefined) fail(`${seat.name} saw the other combatant's sheet`);
  const log = await fetch(`${BASE}/fights/${fightId}/log`, { headers: { Authorization: `Bearer ${seat.token}` } });
  const lines = (await log.text()).trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]);
  if (lines.length !== head.seq || last.hash !== stream.head.hash) fail("the published log does not end at the witnessed head");
}

console.log(JSON.stringify({ fight_id: fightId, head: `${head.seq}:${head.hash}`, commands: given }));
