// End-to-end tests of the page in headless Chromium against a real server (started by
// tests/web/test_browser.py, which passes PARSIMONIA_HTTP and PARSIMONIA_ADMIN_TOKEN). Exit status 0 = pass.
// Every wait polls with a generous timeout: this runs on a shared 2-core machine.
import { decode } from "@msgpack/msgpack";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./browser.mjs";
import { WebSocket } from "ws";
import { choose } from "../examples/bot.mjs";
import { Client } from "../src/protocol/index.js";
import { leaders } from "../src/games/kupcy-rules.js";

const HTTP = process.env.PARSIMONIA_HTTP;
const ADMIN = process.env.PARSIMONIA_ADMIN_TOKEN;
const SHOTS = process.env.PARSIMONIA_SCREENSHOTS;
const WS = HTTP.replace(/^http/, "ws");
const T = 60_000; // the generous timeout of every wait
const step = (s) => console.log(`e2e: ${s}`);

/** A bot seated at `table` that plays `choose` on every fresh view (as examples/bot.mjs does), leaving the
 * commands `left(command)` names to the test (which sends them through the bot's client). */
async function bot(table, name, left = () => false) {
  const c = new Client(WS, { WebSocket, client: "e2e-bot" });
  await c.connect();
  await c.join(table, name);
  let busy = false, acted = -1;
  const memory = {};
  const go = async () => {
    const t = c.tables.get(table), v = c.picture(table);
    if (!t || !v || busy || v.result || t.viewSeq <= acted) return;
    const command = choose(Object.assign(v, memory), t.legal.filter((c) => !left(c)));
    if (v.__sold) memory.__sold = true;
    if (!command) return;
    busy = true; acted = t.viewSeq;
    try { await c.act(table, command); } catch { /* a stale view: the next one decides */ } finally { busy = false; }
    setTimeout(go, 0);
  };
  c.on("table", go);
  go();
  return c;
}

/** Decoded server frames of a page's WebSocket(s). */
function recordFrames(page) {
  const frames = [];
  page.on("websocket", (ws) => ws.on("framereceived", (f) => {
    if (typeof f.payload !== "string") frames.push(decode(f.payload));
  }));
  return frames;
}

const shot = async (page, name) => { if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true }); };
const lastSeq = (page, table) => page.evaluate((t) => window.__parsimonia.tables.get(t)?.lastSeq ?? 0, table);

/** Wait until the table has moved on from `seq` (polling; no fixed sleep). */
async function movedOn(page, table, seq) {
  await page.waitForFunction(([t, s]) => (window.__parsimonia.tables.get(t)?.lastSeq ?? 0) > s, [table, seq], { timeout: 15_000 }).catch(() => undefined);
}

/** A person's page in a fresh browser context (its own localStorage), failing the run on any page error. */
async function personPage(env) {
  const ctx = await env.newContext();
  const page = await ctx.newPage();
  page.setDefaultTimeout(T);
  page.on("pageerror", (e) => { env.pageErrors.push(e.message); console.error("page error:", e.message); });
  return page;
}

/** Nothing on the page is wider than a phone's screen (no sideways scrolling), then back to the desktop size. */
async function fitsPhone(page, name) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => document.documentElement.scrollWidth <= innerWidth + 1);
  if (name && SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`) }); // the first screen, as a phone shows it
  await page.setViewportSize({ width: 1000, height: 900 });
}

async function parsimonia(env) {
  const { admin, bots } = env;
  // ---- Parsimonia: a person joins from the lobby and plays against a bot to the end ----
  const pt = await admin.create("parsimonia", 2, { admin: ADMIN, seed: 11,
    options: { opening_ms: 180_000, turn_ms: 180_000, game_ms: 900_000, quiet_ms: 6_000 } });
  bots.push(await bot(pt, "Bot"));
  const page = await personPage(env);
  await page.goto(`${HTTP}/`);
  await page.getByLabel("Your name").fill("Ada");
  await page.locator(`tr[data-table="${pt}"] button.join`).click();
  await page.locator(`main[data-table="${pt}"][data-mode="seat"]`).waitFor();
  await page.getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  step(`joined ${pt} from the lobby`);

  // the bot sells a card in the opening: bid the minimum in one click; the bot (seller) picks Ada
  await page.locator("li.auction button.bid-min").first().click();
  await page.locator(".log li[data-type=auction_closed]", { hasText: "sold to Ada (you)" }).waitFor();
  step("bid and won an auction");
  await page.getByTestId("latency").waitFor();
  await page.getByTestId("server-rtt").filter({ hasText: /server \d+ ms/ }).waitFor(); // as the server timed it

  // a spectator sees the public view live
  const sctx = await env.newContext();
  const spectator = await sctx.newPage();
  spectator.setDefaultTimeout(T);
  await spectator.goto(`${HTTP}/#watch/${pt}`);
  await spectator.locator(`main[data-table="${pt}"][data-mode="watch"] .players li.player`).first().waitFor();
  await spectator.getByTestId("who").filter({ hasText: "Spectating" }).waitFor();

  // a reload resumes the seat by itself
  await page.reload();
  await page.getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  await page.locator("button.vote-end").waitFor();
  step("a reload resumed the seat");

  // a seat link with a bad code (typed wrong, or someone else's) never replaces the seat this browser holds
  await page.evaluate((t) => { location.hash = `#${t}/NOTAVALIDSEATCODE0000`; }, pt);
  await page.getByRole("alert").filter({ hasText: "That seat code is not valid for this table: you keep the seat" }).waitFor();
  await page.getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  await page.reload();
  await page.getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  step("a bad seat link kept the good seat");

  // the organiser pauses the table: the countdowns stop, then run again
  const actx = await env.newContext();
  const org = await actx.newPage();
  org.setDefaultTimeout(T);
  await org.goto(`${HTTP}/#admin`);
  await org.getByLabel("Admin token").fill(ADMIN);
  await org.getByRole("button", { name: "Open" }).click();
  await org.locator(`section[aria-label=connections] tr[data-conn]`).first().waitFor();
  await org.getByTestId("health").filter({ hasText: "ok" }).waitFor();
  if ((await fetch(`${HTTP}/cluster`)).ok) { // a worker's figures say they are its own, beside the cluster's totals
    await org.getByTestId("cluster-note").filter({ hasText: /^Worker [12] of 2 answered: .* All workers: \d+ tables/ })
      .waitFor();
  } else if (await org.getByTestId("cluster-note").count()) throw new Error("a lone server's page speaks of workers");
  await org.locator("tr[data-conn] td.players", { hasText: `Ada (${pt}#1)` }).waitFor(); // a web connection's player
  await org.locator("tr[data-conn]", { has: org.locator("td.players", { hasText: `Ada (${pt}#1)` }) })
    .locator("td.rtt", { hasText: /^\d+ ms \(\d+\)$/ }).waitFor(); // its round trip, as the server timed it
  const row = org.locator(`tr[data-table="${pt}"]`);
  if (!(await row.locator("button.unpause").isDisabled())) throw new Error("Unpause is enabled on a running table");
  await row.locator("button.pause").click();
  await page.getByTestId("paused").waitFor();
  await row.getByTestId("table-paused").waitFor();
  await row.locator("button.pause:disabled").waitFor();
  await row.locator("button.unpause:enabled").waitFor();
  const gameClock = page.locator(".status .countdown[data-deadline]").first();
  await page.locator(".status .countdown.paused .pause-icon").first().waitFor();
  if ((await page.locator(".status").first().innerText()).includes("\u23f8")) throw new Error("the pause glyph is back");
  const frozen = await gameClock.getAttribute("data-left");
  await page.waitForFunction(() => new Promise((r) => setTimeout(() => r(true), 1500))); // let a running clock tick
  if ((await gameClock.getAttribute("data-left")) !== frozen) throw new Error("a countdown kept running while paused");
  await shot(org, "organiser");
  await row.locator("button.unpause").click();
  await page.getByTestId("paused").waitFor({ state: "detached" });
  await row.locator("button.unpause:disabled").waitFor();
  await row.locator("button.pause:enabled").waitFor();
  await page.waitForFunction((f) => {
    const el = document.querySelector(".status .countdown[data-deadline]");
    return el && el.getAttribute("data-left") !== f;
  }, frozen);
  step("pause froze the countdowns; unpause let them run; the organiser's buttons followed the table's state");

  // the organiser kicks Ada's connection: the page reconnects and resumes the seat by itself
  const before = await page.evaluate(() => window.__parsimonia.welcome);
  await org.locator("tr[data-conn]", { hasText: `${pt}#1` }).locator("button.kick").click();
  await page.waitForFunction((w) => window.__parsimonia.welcome !== w && window.__parsimonia.state === "open", before);
  await page.getByTestId("connection").filter({ hasText: "connected" }).waitFor();
  await page.locator("button.ready").waitFor();
  step("a dropped connection resumed the seat by itself");

  await page.locator("button.ready").click();
  await page.getByTestId("phase").filter({ hasText: "turn" }).waitFor();
  step("the opening ended");

  // play turns with clicks: pair or place the drawn card (or auction it), place a bought card, end the turn;
  // once Ada has ended a turn and paired or placed a card, vote to end (the bot agrees)
  let turnsEnded = 0, voted = false;
  const placings = []; // the pairing and placing choices Ada clicked
  const deadline = Date.now() + 150_000;
  while (!(await page.getByTestId("result").count())) {
    if (Date.now() > deadline) throw new Error("the Parsimonia game did not end in time");
    const seq = await lastSeq(page, pt);
    const order = ["button.sell", "button.place-bought", "button.pair", "button.auction-drawn", "button.place", "button.end-turn"];
    let clicked = false;
    for (const sel of order) {
      const b = page.locator(sel).first();
      if (await b.isVisible().catch(() => false)) {
        await b.click().catch(() => undefined);
        if (sel === "button.end-turn") turnsEnded += 1;
        if (/pair|place/.test(sel)) placings.push(sel.slice(7));
        clicked = true;
        break;
      }
    }
    if (!clicked && turnsEnded >= 1 && placings.length && !voted && await page.locator("button.vote-end", { hasText: "Vote to end" }).isVisible()) {
      await page.locator("button.vote-end").click();
      voted = true;
      clicked = true;
    }
    await movedOn(page, pt, seq);
  }
  await page.locator(".log li[data-type=game_ended]").waitFor();
  const numbered = await page.locator(".log li").evaluateAll((lis) => lis.every((li) => li.value === Number(li.dataset.seq)));
  if (!numbered) throw new Error("the event log is not numbered by the table's sequence numbers");
  step(`the game ended after ${turnsEnded} turn(s) of Ada, who chose: ${placings.join(", ")}`);
  await page.locator(".log li[data-type=card_placed]", { hasText: /Ada \(you\) (pairs|places)/ }).first().waitFor();
  await shot(page, "parsimonia");
  await fitsPhone(page);
  await shot(spectator, "spectator");
  await sctx.close();

}

/** After the organiser closed the table: the page says so, offers no move, and every clock has stopped. */
async function clocksStopped(page) {
  await page.getByTestId("closed").waitFor();
  await page.getByTestId("phase").filter({ hasText: "The table is closed" }).waitFor();
  const clocks = page.locator("main .countdown[data-deadline]");
  const read = () => clocks.evaluateAll((els) => els.map((el) => `${el.className}|${el.dataset.left}`));
  const before = await read();
  if (!before.length) throw new Error("no countdown left to check on the closed table");
  if (!before.every((c) => / stopped over\b/.test(c) && !/urgent/.test(c))) throw new Error(`a clock still runs: ${before}`);
  await page.waitForFunction(() => new Promise((r) => setTimeout(() => r(true), 1500))); // let a running clock tick
  if (JSON.stringify(await read()) !== JSON.stringify(before)) throw new Error("a countdown kept running after the close");
  if (await page.locator("main .actions button, button.ready").count()) throw new Error("the closed table still offers moves");
  return before;
}

async function closing(env) {
  const { admin, bots } = env;
  // ---- Parsimonia: the organiser closes a table in its opening, with an auction open ----
  const ct = await admin.create("parsimonia", 2, { admin: ADMIN, seed: 11,
    options: { opening_ms: 180_000, turn_ms: 180_000, game_ms: 900_000, quiet_ms: 60_000 } });
  const b = await bot(ct, "Bot", (c) => c.type === "bid"); // its bids are the test's
  bots.push(b);
  const page = await personPage(env);
  await page.goto(`${HTTP}/`);
  await page.getByLabel("Your name").fill("Ada");
  await page.locator(`tr[data-table="${ct}"] button.join`).click();
  await page.locator("li.auction button.bid-min").first().waitFor();

  // a stale "Sell to Bot for $6" (the page has not yet seen the bid of $10) is refused, never sells for $10
  await page.locator("form.sell-form[data-kind=auction] button[type=submit]").click();
  const mine = Number(await page.locator("li.auction.mine").getAttribute("data-auction"));
  await b.act(ct, { type: "bid", auction: mine, amount: 6 });
  const sell = page.locator("li.auction.mine button.sell");
  await sell.filter({ hasText: "Sell to Bot for $6" }).waitFor();
  await page.evaluate(() => { const c = window.__parsimonia; c.__onView = c.onView; c.onView = () => undefined; });
  await b.act(ct, { type: "bid", auction: mine, amount: 10 });
  await sell.click();
  await page.getByRole("alert").filter({ hasText: "that bid changed before your click arrived" }).waitFor();
  await page.evaluate(() => { const c = window.__parsimonia; c.onView = c.__onView; });
  await b.act(ct, { type: "bid", auction: mine, amount: 11 });
  await sell.filter({ hasText: "Sell to Bot for $11" }).click();
  await page.locator(".log li[data-type=auction_closed]", { hasText: "sold to Bot for $11" }).waitFor();
  if (await page.locator(".log li[data-type=auction_closed]", { hasText: "$10" }).count()) throw new Error("the stale button sold");
  await page.locator(".log li[data-type=bid][data-count='3']", { hasText: `auction ${mine}: 3 bids, now $11 by Bot` }).waitFor();
  step("a stale sell button was refused; a fresh one sold at the price it showed; the log says its 3 bids in a line");

  await admin.admin(ADMIN, "close", { table: ct });
  const clocks = await clocksStopped(page);
  const quiet = await page.locator("li.auction .countdown[data-deadline]").first().getAttribute("data-left");
  if (!(Number(quiet) > 0)) throw new Error(`the open auction shows quiet ${quiet} ms after the close`);
  await page.reload();
  await page.getByTestId("closed").waitFor();
  await clocksStopped(page);
  await shot(page, "closed");
  step(`the closed table shows its ${clocks.length} clocks stopped, before and after a reload`);
  await page.context().close();
}

/** Every countdown of the page shows its deadline minus the moment the clocks stopped (the view's `paused_at`),
 * however long ago that was; returns them. */
async function frozenAt(page, table) {
  const pausedAt = await page.evaluate((t) => window.__parsimonia.picture(t)?.paused_at, table);
  if (typeof pausedAt !== "number") throw new Error(`a paused view without paused_at: ${pausedAt}`);
  const clocks = await page.locator("main .countdown[data-deadline]").evaluateAll((els) =>
    els.map((el) => ({ deadline: Number(el.dataset.deadline), left: Number(el.dataset.left) })));
  if (!clocks.length) throw new Error("no countdown on the paused table");
  const wrong = clocks.filter((c) => c.left !== Math.max(0, c.deadline - pausedAt));
  if (wrong.length) throw new Error(`clocks that ran while stopped at ${pausedAt}: ${JSON.stringify(wrong)}`);
  return clocks;
}

async function held(env) {
  const { admin, bots } = env;
  // ---- a table held for its human (as the director holds it), then paused: a page opened or reloaded later
  // draws the clocks where they stopped ----
  const t = await admin.create("parsimonia", 2, { admin: ADMIN, seed: 5,
    options: { opening_ms: 120_000, turn_ms: 180_000, game_ms: 900_000, quiet_ms: 60_000 } });
  const holder = new Client(WS, { WebSocket, client: "e2e-director", reconnect: false });
  await holder.connect();
  const { token } = await holder.join(t, "Ada");
  holder.close();
  bots.push(await bot(t, "Bot"));
  await admin.admin(ADMIN, "pause", { table: t, hold: true });
  await new Promise((r) => setTimeout(r, 2500)); // Ada comes late
  const page = await personPage(env);
  await page.goto(`${HTTP}/#${t}/${token}`);
  await page.getByTestId("paused").filter({ hasText: "Clocks held until the players are connected" }).waitFor();
  await page.locator(".status .countdown[data-deadline]").first().waitFor();
  await frozenAt(page, t);
  await page.locator(".log li[data-type=paused]", { hasText: "the clocks wait for the players to connect" }).waitFor();
  if (await page.getByText("paused by the organiser").count()) throw new Error("a hold reads as the organiser's pause");
  step("a page opened 2.5 s into a hold drew the clocks where they stopped, and called it a hold");

  await admin.admin(ADMIN, "unpause", { table: t });
  await page.getByTestId("paused").waitFor({ state: "detached" });
  await admin.admin(ADMIN, "pause", { table: t });
  await page.getByTestId("paused").filter({ hasText: "Clocks paused by the organiser" }).waitFor();
  const before = await frozenAt(page, t);
  await new Promise((r) => setTimeout(r, 2500));
  await page.reload();
  await page.getByTestId("paused").filter({ hasText: "Clocks paused by the organiser" }).waitFor();
  await page.locator(".status .countdown[data-deadline]").first().waitFor();
  const after = await frozenAt(page, t);
  if (JSON.stringify(after.map((c) => c.left)) !== JSON.stringify(before.map((c) => c.left)))
    throw new Error(`a reload moved the paused clocks: ${JSON.stringify(before)} then ${JSON.stringify(after)}`);
  await admin.admin(ADMIN, "unpause", { table: t });
  await page.getByTestId("paused").waitFor({ state: "detached" });
  const game = page.locator(".status .countdown[data-deadline]").first();
  const left = Number(await game.getAttribute("data-left"));
  // the page's estimate of server time is good to half a round trip: a few ms either way, not the 2.5 s paused
  if (!(left <= before[0].left + 250 && left > before[0].left - 10_000))
    throw new Error(`after the unpause the clock jumped from ${before[0].left} to ${left}`);
  step("a reload 2.5 s into a pause drew the same stopped clocks; after the unpause they ran on from there");

  // at a phone's width the sell and give choices show their whole text (a card, a player)
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator("form.sell-form select").first().waitFor();
  const cut = await page.locator("main form select").evaluateAll((els) => els.filter((el) => {
    const pen = document.createElement("canvas").getContext("2d");
    pen.font = getComputedStyle(el).font;
    return pen.measureText(el.options[el.selectedIndex]?.text ?? "").width + 16 > el.clientWidth; // 16: the arrow
  }).map((el) => el.options[el.selectedIndex]?.text));
  if (cut.length) throw new Error(`choices cut short at a phone's width: ${cut.join(", ")}`);
  await page.waitForFunction(() => document.documentElement.scrollWidth <= innerWidth + 1);
  step("at a phone's width the sell and give choices show their whole text");
  await admin.admin(ADMIN, "close", { table: t });
  await page.context().close();
}

async function clocks(env) {
  const { admin } = env;
  // ---- the lobby's clocks: a preset at a fast clock keeps 5 s of quiet; own times set each clock apart ----
  const page = await personPage(env);
  await page.goto(`${HTTP}/#admin`); // the organiser's tab: this server lets only the organiser create tables
  await page.getByLabel("Admin token").fill(ADMIN);
  await page.getByRole("button", { name: "Open" }).click();
  await page.getByTestId("health").waitFor();
  const ownConn = page.locator("tr[data-conn]", { has: page.getByTestId("own-connection") });
  await ownConn.waitFor(); // the organiser's page never offers to kick its own connection
  if (await ownConn.locator("button.kick").count() || await page.locator("tr[data-conn] button.kick").count() !==
      await page.locator("tr[data-conn]").count() - 1) throw new Error("the organiser's page offers to kick itself");
  await page.goto(`${HTTP}/#`);
  let last = null;
  const created = async () => { // the lobby's note names each new table
    const note = page.getByRole("status").filter({ hasText: /^Created table / });
    await page.waitForFunction((l) => { const m = /Created table (\S+)\./.exec(document.querySelector(".notice")?.textContent ?? "");
      return m && m[1] !== l; }, last);
    const table = (await note.textContent()).match(/Created table (\S+)\./)[1];
    last = table;
    const config = (await admin.watch(table)).static.config;
    await admin.leave(table);
    await admin.admin(ADMIN, "close", { table });
    return config;
  };
  const form = page.getByRole("form", { name: "new table" });
  await form.getByLabel("Clocks").selectOption({ label: "20-minute game, 8 s quiet" });
  await form.getByLabel("Clock speed").fill("30");
  await form.getByTestId("clock-times").filter({ hasText:
    "At ×30 the clocks: game 0:40, opening 0:06, turn 0:02; an auction closes after 0:05 with no bid." }).waitFor();
  await form.getByRole("button", { name: "Create a table" }).click();
  await page.locator(".notice", { hasText: "You are not seated at it: type your name above, then press “Join" }).waitFor();
  const quick = await created();
  if (quick.game_ms !== 40_000 || quick.quiet_ms !== 5_000) throw new Error(`the preset at x30: ${JSON.stringify(quick)}`);
  await form.getByLabel("Clocks").selectOption({ label: "my own times" });
  await form.getByLabel("Clock speed").fill("1");
  await form.getByLabel("game min").fill("30");
  await form.getByLabel("turn s").fill("90");
  await form.getByLabel("quiet s").fill("12");
  await form.getByRole("button", { name: "Create a table" }).click();
  const own = await created();
  if (own.game_ms !== 1_800_000 || own.turn_ms !== 90_000 || own.quiet_ms !== 12_000 || own.quiet_floor_ms !== 5_000)
    throw new Error(`own times: ${JSON.stringify(own)}`);
  // with a name typed, the creator sits at the new table
  await page.getByLabel("Your name").fill("Ada");
  await form.getByRole("button", { name: "Create a table" }).click();
  await page.getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  const mine = await page.locator("main[data-table]").getAttribute("data-table");
  await admin.admin(ADMIN, "close", { table: mine });
  step("the lobby's preset kept 5 s of quiet at x30 and said so; own game, turn and quiet times were set apart; "
    + "a creator without a name was told how to sit, one with a name sat; the organiser's page cannot kick itself");
  await page.context().close();
}

async function addresses(env) {
  const { admin } = env;
  // ---- addresses people type: a table that does not exist, one without this browser's seat, /lobby; the icon ----
  const page = await personPage(env);
  await page.goto(`${HTTP}/#t999`);
  await page.getByRole("alert").filter({ hasText: "There is no table t999 on this server" }).waitFor();
  const t = await admin.create("gift-of-tulips", 2, { admin: ADMIN });
  await page.goto(`${HTTP}/#${t}`);
  await page.getByRole("alert").filter({ hasText: `This browser holds no seat at table ${t}: join it from the lobby` }).waitFor();
  await page.getByRole("link", { name: `Watch ${t}` }).waitFor();
  await admin.admin(ADMIN, "close", { table: t });
  await page.goto(`${HTTP}/lobby`);
  await page.getByRole("heading", { name: "Tables" }).waitFor();
  if (new URL(page.url()).pathname !== "/") throw new Error(`/lobby led to ${page.url()}`);
  const icon = await page.locator("link[rel=icon]").getAttribute("href");
  const got = await page.request.get(new URL(icon, page.url()).href);
  if (got.status() !== 200 || !(got.headers()["content-type"] ?? "").startsWith("image/")) throw new Error(`the icon: ${got.status()}`);
  step("no such table said so; a table without a seat here offered to watch it; /lobby led to the lobby; the icon is served");
  await page.context().close();
}

async function guide(env) {
  const { admin, bots } = env;
  // ---- a tournament entrant's one link (#me/KEY) follows them from table to table (the director's bulletin,
  // published here by the organiser's client as server/tournament/guide.py does) ----
  const key = "0123456789abcdef0123456789abcdef";
  const publish = (data) => admin.admin(ADMIN, "publish", { topic: `me.${key}`, data: { tournament: "Cup", name: "Ada", ...data } });
  const seatFor = async () => { // a table with Ada's seat taken for her (as the director does) and a bot
    const t = await admin.create("parsimonia", 2, { admin: ADMIN, seed: 4, options: { opening_ms: 180_000, quiet_ms: 60_000 } });
    const holder = new Client(WS, { WebSocket, client: "e2e-director", reconnect: false });
    await holder.connect();
    const { token } = await holder.join(t, "Ada");
    bots.push(await bot(t, "Bot"));
    holder.close();
    return { t, token };
  };
  const page = await personPage(env);
  await page.goto(`${HTTP}/#me/ffffffffffffffffffffffffffffffff`);
  await page.getByRole("alert").filter({ hasText: "This link names no entrant" }).waitFor();
  const first = await seatFor();
  await publish({ round: 1, state: "playing", table: first.t, seat: 0, token: first.token });
  await page.goto(`${HTTP}/#me/${key}`);
  await page.getByTestId("guide").filter({ hasText: `round 1: your table ${first.t}` }).waitFor();
  await page.locator(`main[data-table="${first.t}"]`).getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  await admin.admin(ADMIN, "close", { table: first.t });
  await publish({ round: 1, state: "waiting", next_round: 2 });
  await page.getByTestId("guide").filter({ hasText: "Waiting for round 2" }).waitFor();
  const second = await seatFor();
  await admin.admin(ADMIN, "pause", { table: second.t }); // held for its human, as the director holds it
  const stranger = await personPage(env);
  await stranger.goto(`${HTTP}/#`);
  await stranger.locator(`tr[data-table="${second.t}"] .tag.held`, { hasText: "held for its players: open your link" }).waitFor();
  await stranger.context().close();
  await admin.admin(ADMIN, "unpause", { table: second.t });
  await publish({ round: 2, state: "playing", table: second.t, seat: 0, token: second.token });
  await page.locator(`main[data-table="${second.t}"]`).getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  await page.reload(); // the link stays the same: a reload finds the table again
  await page.locator(`main[data-table="${second.t}"]`).getByTestId("who").filter({ hasText: "You are Ada" }).waitFor();
  await admin.admin(ADMIN, "close", { table: second.t });
  await publish({ round: 2, state: "finished" });
  await page.getByTestId("guide").filter({ hasText: "The tournament is over" }).waitFor();
  step("one link took Ada to round 1's table, waited for round 2, took her to its table, then said it was over");
  await page.context().close();
}

async function tulips(env) {
  const { admin, bots } = env;
  const page = await personPage(env);
  // ---- Gift of Tulips: a turn, with a spectator whose frames must hold no hidden information ----
  const tt = await admin.create("gift-of-tulips", 2, { admin: ADMIN, seed: 5, options: { first_seat: 1 } });
  bots.push(await bot(tt, "Bot"));
  const wctx = await env.newContext();
  const watcher = await wctx.newPage();
  watcher.setDefaultTimeout(T);
  const watched = recordFrames(watcher);
  await watcher.goto(`${HTTP}/#watch/${tt}`);
  await watcher.getByTestId("who").filter({ hasText: "Spectating" }).waitFor();
  await page.goto(`${HTTP}/#`);
  await page.getByLabel("Your name").fill("Ada");
  await page.locator(`tr[data-table="${tt}"] button.join`).click();
  await page.locator(`main[data-table="${tt}"][data-mode="seat"]`).waitFor();
  await page.locator("button.choose").first().click();
  step("chose the bouquet card");
  await page.locator("button.keep").waitFor();
  const keepText = await page.locator("button.keep").textContent();
  if (!/Keep: \+\d/.test(keepText ?? "")) throw new Error(`keep shows no points: ${keepText}`);
  if (!/Give to Bot: \+\d/.test((await page.locator("button.give").first().textContent()) ?? "")) throw new Error("give shows no points");
  await page.locator("button.keep").click();
  await page.locator("button.give").first().waitFor();
  await page.locator("button.give").first().click();
  await page.locator(".log li[data-type=turn_ended]", { hasText: "Ada (you)" }).waitFor();
  step("played a Tulips turn: keep, then give");
  await page.getByTestId("secret-count").filter({ hasText: "Secret Festival: 2" }).waitFor();
  await shot(page, "tulips");
  await watcher.locator(".log li[data-type=given]", { hasText: "Ada gives" }).waitFor();
  const views = watched.filter((m) => m.type === "view");
  const draws = watched.filter((m) => m.type === "event" && m.event.type === "card_drawn");
  if (!views.length || draws.length < 2) throw new Error(`the spectator saw too little: ${views.length} views, ${draws.length} draws`);
  for (const m of watched) {
    if (m.type === "view" && ("private" in m || m.seat !== null || m.legal.length)) throw new Error("a spectator's view held a seat's part");
    if (m.type === "joined" || m.type === "resumed" || "token" in m) throw new Error("a spectator got a seat");
    const e = m.type === "event" ? m.event : null;
    if (e && ((e.type === "card_drawn" && "card" in e) || (e.type === "chosen" && "choice" in e) || (e.type === "hidden" && "card" in e)))
      throw new Error(`a spectator saw a hidden card: ${JSON.stringify(e)}`);
  }
  step(`the spectator's ${watched.length} frames hold no hidden information`);
  await admin.admin(ADMIN, "close", { table: tt });
  await clocksStopped(page);
  step("the organiser closed the Tulips table");

}

/** Tab (at most 40 times) until the focused element matches `selector`; fails if it never does. */
async function tabTo(page, selector) {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((sel) => !!document.activeElement?.matches(sel), selector)) return;
  }
  throw new Error(`the keyboard never reached ${selector}`);
}

/** The focused element shows its focus (the page's :focus-visible outline). */
async function focusShows(page) {
  const outline = await page.evaluate(() => { const s = getComputedStyle(document.activeElement); return `${s.outlineStyle} ${s.outlineWidth}`; });
  if (outline.startsWith("none") || outline.endsWith(" 0px")) throw new Error(`the focused control shows no focus (outline ${outline})`);
}

/** Every button's accessible name holds the words it shows (no aria-label that says something else). */
async function namesAsShown(page) {
  const words = (t) => t.replace(/[^\p{L}\p{N}$]+/gu, " ").trim().toLowerCase();
  const buttons = page.locator("main button");
  const differ = [];
  for (let i = 0; i < await buttons.count(); i++) {
    const b = buttons.nth(i);
    const shown = words(await b.innerText()), name = await b.evaluate((el) => el.getAttribute("aria-label"));
    if (name != null && !words(name).includes(shown)) differ.push(`"${shown}" named "${name}"`);
  }
  if (differ.length) throw new Error(`buttons named otherwise than they read: ${differ.join("; ")}`);
}

async function kupcy(env) {
  const { admin, bots } = env;
  // ---- Kupcy: the split with the keyboard only; sealed offers against two bots until a tie is re-bid ----
  // The bots play every Kupcy command but their offers, which the test makes for them (through their own
  // clients) once Ada has sealed hers: knowing both sides, it can make a round tie, so Ada answers a re-bid.
  const kt = await admin.create("kupcy", 3, { admin: ADMIN, seed: 3, options: { decide_ms: 120_000, bid_ms: 120_000, stow_ms: 120_000 } });
  const offersLeft = (c) => c.type === "offer";
  const kbots = [await bot(kt, "Bot", offersLeft), await bot(kt, "Bot 2", offersLeft)];
  bots.push(...kbots);
  const wctx = await env.newContext();
  const watcher = await wctx.newPage();
  watcher.setDefaultTimeout(T);
  const watched = recordFrames(watcher);
  await watcher.goto(`${HTTP}/#watch/${kt}`);
  await watcher.getByTestId("who").filter({ hasText: "Spectating" }).waitFor();
  const page = await personPage(env);
  const frames = recordFrames(page);
  await page.goto(`${HTTP}/#`);
  await page.getByLabel("Your name").fill("Ada");
  await page.locator(`tr[data-table="${kt}"] button.join`).click();
  await page.locator(`main[data-table="${kt}"][data-mode="seat"]`).waitFor();

  // the keyboard alone: Tab to a dealt card, Space picks it; Tab to the next, Enter picks it; Tab to "Seal", Enter
  await page.locator("button.k-pick").first().waitFor();
  await page.locator("body").click({ position: { x: 1, y: 1 } }); // start from the top of the page
  await tabTo(page, "button.k-pick");
  await focusShows(page);
  await page.keyboard.press("Space");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  const picked = await page.locator("button.k-pick[aria-pressed=true]").count();
  if (picked !== 2) throw new Error(`Space and Enter picked ${picked} card(s), not 2`);
  await tabTo(page, "button.k-split:not([disabled])");
  await focusShows(page);
  await page.keyboard.press("Enter");
  await page.locator(".log li[data-type=split_revealed]").waitFor();
  step("made the Kupcy split with the keyboard only");
  const me = await page.evaluate((t) => window.__parsimonia.tables.get(t).seat, kt);

  const cards = new Map((await page.evaluate((t) => window.__parsimonia.tables.get(t).static.cards, kt))
    .map(([id, kind, origin, value, charter]) => [id, { id, kind, origin, value, charter }]));
  const adaView = () => page.evaluate((t) => { const c = window.__parsimonia; const x = c.tables.get(t); return { pic: c.picture(t), legal: x.legal }; }, kt);
  const offerOf = (b) => b.tables.get(kt).legal.filter((c) => c.type === "offer").map((c) => c.card);
  /** The bots' offers against Ada's sealed `ada` (nil: Ada is not in the round): a pair that ties with it when one
   * does (`tie`), else each bot's first card. */
  const plan = (goods, ada) => {
    const owing = kbots.filter((b) => offerOf(b).length);
    const first = owing.map((b) => [b, offerOf(b)[0]]);
    if (ada == null) return { pairs: first, tie: false };
    const [xs, ys = [undefined]] = owing.map(offerOf);
    for (const x of xs) for (const y of ys) {
      const offers = [[-1, ada], [0, x], ...(y === undefined ? [] : [[1, y]])];
      const best = leaders(offers, goods, cards);
      if (best.includes(-1) && best.length > 1) return { pairs: owing.map((b, i) => [b, [x, y][i]]), tie: true };
    }
    return { pairs: first, tie: false };
  };

  let offered = 0, rebids = 0, reveals = 0, shotTaken = false;
  const deadline = Date.now() + 90_000;
  while (!(rebids && shotTaken && await page.getByTestId("trade-winner").isVisible())) {
    if (Date.now() > deadline) throw new Error(`no tie re-bid within the time: ${offered} offer(s), ${reveals} reveal(s), ${rebids} re-bid(s)`);
    const seq = await lastSeq(page, kt);
    const { pic, legal } = await adaView();
    if (pic.result) throw new Error("the Kupcy game ended before a tie re-bid");
    const m = pic.market;
    if (legal.some((c) => c.type === "offer")) {
      // Ada's offer: a card one of the bots can tie, when there is one
      const mine = legal.filter((c) => c.type === "offer").map((c) => c.card);
      const card = (rebids ? undefined : mine.find((a) => plan(m.goods, a).tie)) ?? mine[0]; // one tie is enough
      if (m.round > 1) await page.getByTestId("rebid").waitFor();
      if (!offered) await namesAsShown(page);
      await page.locator(`button.k-offer[data-card="${card}"]`).click();
      await page.getByTestId("my-offer").locator(`[data-card="${card}"]`).waitFor();
      offered += 1;
      if (m.round > 1) {
        rebids += 1;
        step(`Ada answers the tie re-bid of round ${m.round}`);
        await shot(page, "kupcy"); // the re-bid: the tied round revealed, Ada's new offer sealed, the countdown
        await fitsPhone(page, "kupcy-phone");
        shotTaken = true;
      }
      const before = reveals;
      for (const [b, c] of plan(m.goods, rebids ? null : card).pairs) await b.act(kt, { type: "offer", card: c });
      await page.locator(".log li[data-type=offers_revealed]").nth(before).waitFor();
      reveals = await page.locator(".log li[data-type=offers_revealed]").count();
      await page.locator(`.market .k-offered[data-seat="${pic.seat}"] [data-card="${card}"]`).first().waitFor(); // the reveal shows Ada's card
      continue;
    }
    if (m && !(m.seats ?? []).includes(pic.seat) && m.chosen.length < m.seats.length) { // Ada sells: the bots offer
      for (const [b, c] of plan(m.goods, null).pairs) await b.act(kt, { type: "offer", card: c });
      await movedOn(page, kt, seq);
      continue;
    }
    const chores = ["button.k-load", "button.k-unload", "button.k-keep", "button.k-pay", "button.k-pass"];
    let clicked = false;
    for (const sel of chores) {
      const b = page.locator(sel).first();
      if (await b.isVisible().catch(() => false)) { await b.click().catch(() => undefined); clicked = true; break; }
    }
    await movedOn(page, kt, seq);
  }
  step(`made ${offered} sealed offer(s), answered ${rebids} tie re-bid(s), saw ${reveals} reveal(s): ${(await page.getByTestId("trade-winner").textContent()).replace(/\s+/g, " ")}`);
  // sealed splits and offers reach the others with the seat alone, a ship's cards only its owner, and a spectator
  // no seat's part at all
  await watcher.locator(".log li[data-type=rebid]").first().waitFor();
  const sealedSeen = (e, seat) => (e.type === "offer_made" || e.type === "split_chosen") && e.seat !== seat && "choice" in e;
  const shipSeen = (e, seat) => e.seat !== seat && ((e.type === "kept" && e.where === "ship" && "card" in e)
    || (e.type === "card_drawn" && "card" in e && !["goods", "charter"].includes(cards.get(e.card)?.kind)));
  for (const [who, seat, seen] of [["Ada", me, frames], ["the spectator", null, watched]]) {
    for (const f of seen) {
      const e = f.type === "event" ? f.event : null;
      if (e && (sealedSeen(e, seat) || shipSeen(e, seat))) throw new Error(`${who} saw a hidden card: ${JSON.stringify(e)}`);
      if (seat === null && f.type === "view" && ("private" in f || f.seat !== null || f.legal.length)) throw new Error("a spectator's view held a seat's part");
    }
  }
  step(`Ada's ${frames.length} and the spectator's ${watched.length} frames hold no card they may not see`);
  await shot(watcher, "kupcy-reveal"); // the last trade: the tied round, the re-bid, the winner
  await wctx.close();
  await admin.admin(ADMIN, "close", { table: kt });
  await page.getByTestId("result").waitFor();
  step("the organiser closed the Kupcy table");
}

/** A game installed on the server as a package of its own (the tests' toy game, PARSIMONIA_E2E_TOY), which the
 * page has no module for: two people play it to its result with the generic view's forms. */
async function toy(env) {
  const { admin } = env;
  if (!(admin.welcome?.games ?? []).includes("toy-sealed")) throw new Error("the server has no toy-sealed game installed");
  const table = await admin.create("toy-sealed", 2, { admin: ADMIN });
  const pages = [];
  for (const [name, value] of [["Ada", "7"], ["Bo", "9"]]) {
    const page = await personPage(env);
    await page.goto(`${HTTP}/#`);
    await page.getByLabel("Your name").fill(name);
    await page.locator(`tr[data-table="${table}"] button.join`).click();
    await page.locator(`main[data-table="${table}"][data-mode="seat"]`).waitFor();
    pages.push([page, value]);
  }
  for (const [page, value] of pages) {
    await page.locator("h2", { hasText: "Highest sealed number" }).waitFor(); // its title, from the server's manifest
    await page.locator("section.generic dd[data-field=deadline] .countdown").waitFor();
    await page.locator("form.command[data-type=choose] input[name=value]").fill(value);
    await page.locator("form.command[data-type=choose] button").click();
    await page.locator("section.generic dd[data-field=mine]", { hasText: value }).waitFor();
  }
  for (const [page] of pages) {
    await page.getByTestId("result").filter({ hasText: "Won by Bo" }).waitFor();
    await page.locator("section.generic dd[data-field=numbers]", { hasText: "7, 9" }).waitFor();
  }
  await shot(pages[0][0], "toy-game");
  step("a game installed as a package of its own played to its result in the generic view");
}

const SECTIONS = { parsimonia, closing, held, clocks, addresses, guide, tulips, kupcy, toy };

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "parsimonia-chromium-"));
  const browser = await launchChromium(profile);
  const admin = new Client(WS, { WebSocket, client: "e2e-organiser" });
  const env = { admin, bots: [], pageErrors: [], newContext: () => browser.newContext({ viewport: { width: 1000, height: 900 } }) };
  // PARSIMONIA_E2E_ONLY=kupcy (a comma list) runs some sections only, while working on them
  const only = (process.env.PARSIMONIA_E2E_ONLY ?? "").split(",").filter(Boolean);
  try {
    await admin.connect();
    for (const [name, section] of Object.entries(SECTIONS)) {
      if (only.length && !only.includes(name)) { step(`${name}: left out (PARSIMONIA_E2E_ONLY)`); continue; }
      const t0 = Date.now();
      await section(env);
      step(`${name} done in ${Math.round((Date.now() - t0) / 1000)} s`);
    }
    if (env.pageErrors.length) throw new Error(`the page threw: ${env.pageErrors.join("; ")}`);
  } finally {
    for (const b of env.bots) b.close();
    admin.close();
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => { step("all passed"); process.exit(0); }, (e) => { console.error("e2e FAILED:", e); process.exit(1); });
