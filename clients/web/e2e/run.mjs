// End-to-end tests of the page in headless Chromium against a real server (started by
// tests/web/test_browser.py, which passes PARSIMONIA_HTTP and PARSIMONIA_ADMIN_TOKEN). Exit status 0 = pass.
// Every wait polls with a generous timeout: this runs on a shared 2-core machine.
import { decode } from "@msgpack/msgpack";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { WebSocket } from "ws";
import { choose } from "../examples/bot.mjs";
import { Client } from "../src/protocol/index.js";

const HTTP = process.env.PARSIMONIA_HTTP;
const ADMIN = process.env.PARSIMONIA_ADMIN_TOKEN;
const SHOTS = process.env.PARSIMONIA_SCREENSHOTS;
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const WS = HTTP.replace(/^http/, "ws");
const T = 60_000; // the generous timeout of every wait
const step = (s) => console.log(`e2e: ${s}`);

/** A bot seated at `table` that plays `choose` on every fresh view (as examples/bot.mjs does). */
async function bot(table, name) {
  const c = new Client(WS, { WebSocket, client: "e2e-bot" });
  await c.connect();
  await c.join(table, name);
  let busy = false, acted = -1;
  const memory = {};
  const go = async () => {
    const t = c.tables.get(table), v = c.picture(table);
    if (!t || !v || busy || v.result || t.viewSeq <= acted) return;
    const command = choose(Object.assign(v, memory), t.legal);
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

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "parsimonia-chromium-"));
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", `--disk-cache-dir=${join(profile, "cache")}`],
  });
  const admin = new Client(WS, { WebSocket, client: "e2e-organiser" });
  const bots = [];
  const pageErrors = [];
  try {
    await admin.connect();
    const newContext = () => browser.newContext({ viewport: { width: 1000, height: 900 } });

    // ---- Parsimonia: a person joins from the lobby and plays against a bot to the end ----
    const pt = await admin.create("parsimonia", 2, { admin: ADMIN, seed: 11,
      options: { opening_ms: 180_000, turn_ms: 180_000, game_ms: 900_000, quiet_ms: 6_000 } });
    bots.push(await bot(pt, "Bot"));
    const ctx = await newContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(T);
    page.on("pageerror", (e) => { pageErrors.push(e.message); console.error("page error:", e.message); });
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

    // a spectator sees the public view live
    const sctx = await newContext();
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

    // the organiser pauses the table: the countdowns stop, then run again
    const actx = await newContext();
    const org = await actx.newPage();
    org.setDefaultTimeout(T);
    await org.goto(`${HTTP}/#admin`);
    await org.getByLabel("Admin token").fill(ADMIN);
    await org.getByRole("button", { name: "Open" }).click();
    await org.locator(`section[aria-label=connections] tr[data-conn]`).first().waitFor();
    await org.getByTestId("health").filter({ hasText: "ok" }).waitFor();
    await org.locator(`tr[data-table="${pt}"] button.pause`).click();
    await page.getByTestId("paused").waitFor();
    const gameClock = page.locator(".status .countdown[data-deadline]").first();
    await page.locator(".status .countdown.paused").first().waitFor();
    const frozen = await gameClock.getAttribute("data-left");
    await page.waitForFunction(() => new Promise((r) => setTimeout(() => r(true), 1500))); // let a running clock tick
    if ((await gameClock.getAttribute("data-left")) !== frozen) throw new Error("a countdown kept running while paused");
    await shot(org, "organiser");
    await org.locator(`tr[data-table="${pt}"] button.unpause`).click();
    await page.getByTestId("paused").waitFor({ state: "detached" });
    await page.waitForFunction((f) => {
      const el = document.querySelector(".status .countdown[data-deadline]");
      return el && el.getAttribute("data-left") !== f;
    }, frozen);
    step("pause froze the countdowns; unpause let them run");

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

    // play turns: settle the drawn card, end the turn; after one turn, vote to end (the bot agrees)
    let turnsEnded = 0, voted = false;
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
          clicked = true;
          break;
        }
      }
      if (!clicked && turnsEnded >= 1 && !voted && await page.locator("button.vote-end", { hasText: "Vote to end" }).isVisible()) {
        await page.locator("button.vote-end").click();
        voted = true;
        clicked = true;
      }
      await movedOn(page, pt, seq);
    }
    await page.locator(".log li[data-type=game_ended]").waitFor();
    step(`the game ended after ${turnsEnded} turn(s) of Ada`);
    await shot(page, "parsimonia");
    await page.setViewportSize({ width: 390, height: 844 }); // a phone: nothing wider than the screen
    await page.waitForFunction(() => document.documentElement.scrollWidth <= innerWidth + 1);
    await page.setViewportSize({ width: 1000, height: 900 });
    await shot(spectator, "spectator");
    await sctx.close();

    // ---- Gift of Tulips: a turn, with a spectator whose frames must hold no hidden information ----
    const tt = await admin.create("gift-of-tulips", 2, { admin: ADMIN, seed: 5, options: { first_seat: 1 } });
    bots.push(await bot(tt, "Bot"));
    const wctx = await newContext();
    const watcher = await wctx.newPage();
    watcher.setDefaultTimeout(T);
    const watched = recordFrames(watcher);
    await watcher.goto(`${HTTP}/#watch/${tt}`);
    await watcher.getByTestId("who").filter({ hasText: "Spectating" }).waitFor();
    await page.goto(`${HTTP}/#`);
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
    await page.getByTestId("result").waitFor();
    step("the organiser closed the Tulips table");

    // ---- Kupcy: the plain view; the person makes the sealed split with one click ----
    const kt = await admin.create("kupcy", 3, { admin: ADMIN, seed: 3 });
    bots.push(await bot(kt, "Bot"), await bot(kt, "Bot 2"));
    await page.goto(`${HTTP}/#`);
    await page.locator(`tr[data-table="${kt}"] button.join`).click();
    await page.locator(`main[data-table="${kt}"][data-mode="seat"]`).waitFor();
    await page.locator("button.k-split").first().click();
    await page.locator(".log li[data-type=split_revealed]").waitFor();
    step("made the Kupcy split");
    await shot(page, "kupcy");
    await admin.admin(ADMIN, "close", { table: kt });
    await page.getByTestId("result").waitFor();
    step("the organiser closed the Kupcy table");
    if (pageErrors.length) throw new Error(`the page threw: ${pageErrors.join("; ")}`);
  } finally {
    for (const b of bots) b.close();
    admin.close();
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => { step("all passed"); process.exit(0); }, (e) => { console.error("e2e FAILED:", e); process.exit(1); });
