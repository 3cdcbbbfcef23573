// A client of `omen serve` in plain Node.js (18 or later): built-in fetch only, no npm packages.
//
//   node examples/node-client/client.mjs [BASE_URL]      (default http://127.0.0.1:8000)
//
// It creates a seeded fight from fight.json (two Ember Ford sheets), follows the live stream, plays the
// fight to its end by reading the options (each turn: the first attack offered, else end the turn; at an
// Active Defense window: Dodge if offered, else decline), reveals the seed, and checks that the last head
// the stream showed is the head of the published log. It prints one JSON line: the fight id and that head,
// so that `omen verify LOG --head SEQ:HASH` can witness it. Exit 0 if every check held.

import { readFile } from "node:fs/promises";

const BASE = process.argv[2] ?? "http://127.0.0.1:8000";
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
  const seen = { seqs: [], head: null, done: null };
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
          if (fields.event === "event") seen.seqs.push(Number(fields.id));
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
  const attack = offers.find((o) => o.command === "declare_attack" && o.actor === turn);
  if (attack) return { command: "declare_attack", ...attack.choices[0].args };
  const offer = offers.find((o) => o.command === "end_turn" && o.actor === turn)
    ?? offers.find((o) => o.command === "roll_initiative");
  if (!offer) fail(`no command to give in phase ${options.phase}`);
  return { command: offer.command, ...offer.choices[0].args };
}

const fight = JSON.parse(await readFile(new URL("./fight.json", import.meta.url), "utf8"));
const made = await call("POST", "/fights", null, fight);
if (made.status !== 201) fail(`creating the fight answered ${made.status}: ${JSON.stringify(made.data)}`);
const { fight_id: fightId, gm_token: token } = made.data;
const stream = follow(fightId, token);

let { head, options } = made.data;
let given = 0;
while (options.phase !== "ended" && given < MAX_COMMANDS) {
  const command = choose(options);
  const key = `node-${given}`;
  const answer = await call("POST", `/fights/${fightId}/commands`, token,
    { command, expected_version: head.seq }, { "Idempotency-Key": key });
  if (answer.status !== 201) fail(`${JSON.stringify(command)} answered ${answer.status}: ${answer.data.detail}`);
  const retry = await call("POST", `/fights/${fightId}/commands`, token,
    { command, expected_version: head.seq }, { "Idempotency-Key": key });
  if (retry.status !== 201 || retry.data.head.hash !== answer.data.head.hash) fail("a retry was not idempotent");
  ({ head, options } = answer.data);
  given += 1;
}
if (options.phase !== "ended") fail(`the fight did not end in ${MAX_COMMANDS} commands`);

const revealed = await call("POST", `/fights/${fightId}/commands`, token,
  { command: { command: "reveal_seed" }, expected_version: head.seq });
if (revealed.status !== 201) fail(`reveal_seed answered ${revealed.status}: ${revealed.data.detail}`);
head = revealed.data.head;

// Wait for the stream to show the last head, then compare it with the published log's.
for (let i = 0; i < 100 && stream.head?.seq !== head.seq; i++) await new Promise((r) => setTimeout(r, 50));
stream.stop();
await stream.done;
if (stream.head?.hash !== head.hash) fail(`the stream's last head ${JSON.stringify(stream.head)} is not ${head.seq}`);
const expected = Array.from({ length: head.seq }, (_, i) => i + 1);
if (JSON.stringify(stream.seqs) !== JSON.stringify(expected)) fail("the stream did not send every event once, in order");

const published = [];
for (let after = 0; after !== null;) {
  const page = await call("GET", `/fights/${fightId}/events?after=${after}&limit=500`, token);
  published.push(...page.data.events);
  after = page.data.next_after;
}
const last = published[published.length - 1];
if (last.seq !== head.seq || last.hash !== head.hash) fail("the published log does not end at the witnessed head");

console.log(JSON.stringify({ fight_id: fightId, head: `${head.seq}:${head.hash}`, commands: given }));
