#!/usr/bin/env node
// A bot for every game (Parsimonia, Gift of Tulips, Kupcy) in JavaScript on the page's protocol client
// (src/protocol/). `node examples/bot.mjs --help` lists its options (USAGE below).
import { WebSocket } from "ws"; // Node 20 has no global WebSocket: give the client one
import { Client, fill } from "../src/protocol/index.js";

const arg = (name, fallback) => {
  const i = process.argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return process.env[`PARSIMONIA_${name.toUpperCase()}`] ?? fallback;
  return process.argv[i].includes("=") ? process.argv[i].split("=").slice(1).join("=") : process.argv[i + 1];
};
const USAGE = `usage: node examples/bot.mjs [--url URL] [--game GAME] [--table ID] [--token T] [--name N]
                            [--seats N] [--time-scale X]
Seats a bot that acts on every fresh view and prints the result as one JSON line.
  --url URL        the server (default: $PARSIMONIA_URL, else ws://127.0.0.1:8765)
  --game GAME      parsimonia, gift-of-tulips or kupcy: the game of a table it looks for or creates (default parsimonia)
  --table ID       join this table (default: the first waiting table of the game, else create one)
  --token T        take this seat back instead of joining (a tournament roster's "--token={token}"; with --table)
  --name N         the name shown to the others (default: jsbot- and 4 random letters, so two bots differ)
  --seats N        seats of a table it creates (default: the game's fewest, 3 for kupcy, else 2)
  --time-scale X   speed up the clocks of a table it creates`;
const FEWEST_SEATS = { kupcy: 3 };
const suffix = () => Math.random().toString(36).slice(2, 6).padEnd(4, "x");
const url = arg("url", "ws://127.0.0.1:8765"), game = arg("game", "parsimonia"), name = arg("name", `jsbot-${suffix()}`);
const seats = Number(arg("seats", FEWEST_SEATS[game] ?? 2));

/** One command for the picture `v` (static ∪ view ∪ private ∪ {seat}) from the templates in `legal`. */
export function choose(v, legal) {
  const first = (type, test = () => true) => legal.find((c) => c.type === type && test(c));
  if (v.game === "kupcy") return legal[0] ?? null; // every Kupcy template is a concrete command
  if (v.game === "gift-of-tulips") return first("choose") ?? first("keep") ?? first("give") ?? first("add", (c) => !c.secret);
  const mine = (v.auctions ?? []).find((a) => a.seller === v.seat && a.high_bidder != null);
  // a sale carries the price it saw: if the bid has moved by the time it arrives, the server refuses it
  if (mine) {
    const close = first("close", (c) => c.auction === mine.id && c.winner === mine.high_bidder);
    return close ? { ...close, price: mine.high } : null;
  }
  const bid = first("bid", (c) => c.amount.min <= 30 && !(v.auctions ?? []).some((a) => a.id === c.auction && a.high_bidder === v.seat));
  if (bid) return fill(bid);
  const someoneVoted = (v.players ?? []).some((p) => p.end_vote && p.seat !== v.seat);
  const vote = first("vote_end", (c) => c.agree);
  if (vote && someoneVoted) return vote;
  if (v.phase === "opening" && !v.__sold) {
    const sell = first("auction");
    if (sell) { v.__sold = true; return fill(sell); }
  }
  if (!(v.auctions ?? []).some((a) => a.seller === v.seat)) { const r = first("ready"); if (r) return r; }
  return first("pair") ?? (first("auction_drawn") && fill(first("auction_drawn"))) ?? first("place")
    ?? first("place_bought") ?? first("end_turn") ?? null;
}

const key = (c) => `${c.type}:${c.auction ?? c.card ?? c.resource ?? c.to ?? c.bouquet ?? c.secret ?? ""}`;

async function main() {
  const client = new Client(url, { WebSocket, client: "jsbot/0.1" });
  client.on("status", ({ state }) => { // the first attempt failed: no server there (later drops reconnect)
    if (state === "reconnecting" && !client.welcome) {
      console.error(`${name}: no Parsimonia server answers at ${url}: start one (parsimonia serve) or check --url`);
      process.exit(1);
    }
  });
  await client.connect();
  let table = arg("table"), token = arg("token");
  const memory = {};
  if (token) {
    await client.resume(table, token);
  } else {
    table ??= (await client.listTables()).find((t) => t.game === game && t.state === "waiting")?.table;
    table ??= await client.create(game, seats, arg("time-scale") ? { time_scale: Number(arg("time-scale")) } : {});
    await client.join(table, name);
  }
  console.error(`${name}: table ${table}, seat ${client.tables.get(table)?.seat}`);
  // Ctrl-C, kill (SIGTERM) or a closed terminal (SIGHUP): a seat at a table still waiting is given back first
  for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]]) {
    process.once(signal, async () => {
      const phase = client.tables.get(table)?.view?.phase;
      if (phase === undefined || phase === "waiting") {
        await Promise.race([client.leave(table), new Promise((resolve) => { setTimeout(resolve, 2000); })]);
      }
      console.error(`${name}: stopped (${signal})`);
      process.exit(status);
    });
  }
  const debug = !!process.env.BOT_DEBUG;
  let busy = false, done = false, refused = new Set(), actedOn = -1; // act once per fresh view (a newer seq)
  const step = async () => {
    const t = client.tables.get(table);
    const v = client.picture(table);
    if (!t || !v || done) return;
    if (v.result) { // the end, even with a command still unanswered
      done = true;
      console.log(JSON.stringify({ table, seat: t.seat, winners: v.result.winners, scores: v.result.scores }));
      client.close();
      return;
    }
    if (busy) return;
    if (t.viewSeq > actedOn) refused = new Set(); // a fresh view: try anything again
    else if (!refused.size) return; // wait for the effects of the last command
    const command = choose(Object.assign(v, memory), t.legal.filter((c) => !refused.has(key(c))));
    if (v.__sold) memory.__sold = true;
    if (!command) return;
    busy = true;
    actedOn = t.viewSeq;
    if (debug) console.error(name, JSON.stringify(command));
    try { await client.act(table, command); }
    catch (e) { if (e.code === "illegal_action") refused.add(key(command)); else console.error(e.message); if (debug) console.error(name, "refused", e.message); }
    finally { busy = false; }
    setTimeout(step, 0);
  };
  client.on("table", (t) => { if (debug) console.error(name, "view", t.viewSeq, t.view?.phase, busy); if (t.table === table) step(); });
  step();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes("--help") || process.argv.includes("-h")) { console.log(USAGE); process.exit(0); }
  main().catch((e) => { console.error(`${name}: ${e.message ?? e}`); process.exit(1); });
}
