// The replay page (/replay/<table>) in headless Chromium against a real server (started by tests/web/test_replay.py,
// which played the finished games and passes them in PARSIMONIA_REPLAYS as [{game, table, seats}]): each steps from
// its first event to its last (next, previous, a step and a turn to jump to, play at 16x) in its game's view (a game
// without a web module in the generic one), and shows each seat's private view after the end; a running table's
// replay shows nothing of it. Exit status 0 = pass.
import { decode } from "@msgpack/msgpack";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { T, check, launchChromium, shot, step } from "./browser.mjs";
import { WebSocket } from "ws";
import { Client } from "../src/protocol/index.js";

const HTTP = process.env.PARSIMONIA_HTTP;
const GAMES = JSON.parse(process.env.PARSIMONIA_REPLAYS ?? "[]");
const WS = HTTP.replace(/^http/, "ws");

/** Decoded server frames of a page's WebSocket(s). */
function recordFrames(page) {
  const frames = [];
  page.on("websocket", (ws) => ws.on("framereceived", (f) => { if (typeof f.payload !== "string") frames.push(decode(f.payload)); }));
  return frames;
}

const counter = (page) => page.getByTestId("replay-step");
async function at(page, n) { await page.locator(`[data-testid=replay-step][data-step="${n}"]`).waitFor(); }

/** A private part as the page shows it: each field of the seat's own part, by name. */
const SEEN = { kupcy: ["ship", "sealed"], "gift-of-tulips": ["hand", "my_secret", "chosen"], parsimonia: [], "toy-sealed": ["mine"] };

async function replayOf(env, { game, table, seats }) {
  const page = await env.page();
  await page.goto(`${HTTP}/replay/${table}`);
  await page.locator(`main.replay[data-table="${table}"][data-game="${game}"]`).waitFor();
  const steps = Number(await counter(page).getAttribute("data-steps"));
  check(steps >= 5, `${table}: only ${steps} steps`);
  await at(page, 1);
  check(await page.getByTestId("replay-event").getAttribute("data-type") === "game_started", "the first step is not the start");
  await page.getByTestId("replay-next").click();
  await at(page, 2);
  await page.getByTestId("replay-next").click();
  await at(page, 3);
  await page.getByTestId("replay-prev").click();
  await at(page, 2);
  await page.getByTestId("replay-goto").fill(String(steps - 1));
  await page.getByTestId("replay-goto").press("Enter");
  await at(page, steps - 1);
  const turns = page.getByTestId("replay-turn");
  if (await turns.count()) { // a turn to jump to: the first step of turn 2
    await page.getByTestId("replay-first").click();
    await at(page, 1);
    await turns.selectOption("2");
    await page.waitForFunction(() => Number(document.querySelector("[data-testid=replay-step]").dataset.step) > 1);
  }
  step(`${game} ${table}: next, previous, a step and a turn to jump to`);
  // the clocks as they stood: each countdown at a step shows its deadline less that step's time, and stays
  const clocks = async () => page.evaluate(() => {
    const now = Number(document.querySelector("[data-testid=replay-step]").dataset.time);
    return [...document.querySelectorAll(".countdown[data-deadline]")].map((c) => [Number(c.dataset.left), Math.max(0, Number(c.dataset.deadline) - now)]);
  });
  await page.getByTestId("replay-first").click();
  await page.getByTestId("replay-next").click();
  await at(page, 2);
  const stood = await clocks();
  check(stood.every(([left, due]) => left === due), `${table}: countdowns ${JSON.stringify(stood)} are not as they stood`);
  env.countdowns += stood.length;

  // from the first event to the last at 16x the game's own clock, the clocks as they stood at each step
  await page.getByTestId("replay-first").click();
  await at(page, 1);
  await page.getByTestId("replay-speed-16").check();
  await page.getByTestId("replay-play").click();
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=replay-step]").dataset.step) > 1);
  await at(page, steps);
  await page.getByTestId("replay-play").filter({ hasText: "Play" }).waitFor();
  check(await page.getByTestId("replay-event").getAttribute("data-type") === "result", "the last step is not the result");
  await page.getByTestId("result").waitFor();
  const frozen = await page.locator(".countdown").evaluateAll((cs) => cs.map((c) => c.getAttribute("data-left")));
  step(`${game} ${table}: played from the first of its ${steps} events to the last (countdowns ${frozen.join(", ") || "none shown"})`);

  // the game is over: every seat's private view, each from its own seat
  for (let seat = 0; seat < seats; seat++) {
    await page.getByTestId("replay-seat").selectOption(String(seat));
    const part = page.locator(`[data-testid=replay-private][data-seat="${seat}"]`);
    await part.waitFor();
    for (const field of SEEN[game]) await part.locator(`dd[data-field=${field}]`).waitFor();
    if (!SEEN[game].length) await part.getByTestId("replay-nothing-private").waitFor();
    await page.getByTestId("result").filter({ hasText: "(you)" }).waitFor(); // the picture is that seat's
    const shown = (await part.innerText()).replace(/\s+/g, " ");
    step(`${game} ${table}: seat ${seat} saw ${shown.slice(0, 120)}`);
  }
  if (game === "parsimonia") await page.locator(".players .hand").nth(seats - 1).waitFor(); // hands are public there
  if (game === "toy-sealed") { // a game without a web module: the generic view, the sealed numbers revealed
    await page.locator("section.generic dd[data-field=numbers]", { hasText: "7, 9" }).waitFor();
    await page.locator("[data-testid=replay-private] dd[data-field=mine]", { hasText: "9" }).waitFor(); // seat 1's
  }
  if (game === "kupcy") await page.locator(`[data-testid=replay-private] dd[data-field=ship]`).filter({ hasText: /\S/ }).waitFor();
  await page.getByTestId("replay-slider").fill(String(Math.ceil(steps / 2))); // mid-game, as the last seat saw it
  await at(page, Math.ceil(steps / 2));
  await shot(page, `replay-${game}`);
  await page.getByTestId("replay-seat").selectOption("");
  await page.getByTestId("replay-private").waitFor({ state: "detached" });
  await page.setViewportSize({ width: 390, height: 844 }); // a phone's screen: no sideways scrolling
  await page.waitForFunction(() => document.documentElement.scrollWidth <= innerWidth + 1);
}

async function lobbyLink(env, { table }) {
  const page = await env.page();
  await page.goto(`${HTTP}/`);
  await page.locator(`tr[data-table="${table}"][data-state=over] a.replay`).click();
  await page.waitForURL(`${HTTP}/replay/${table}`);
  await at(page, 1);
  step(`the lobby links ${table} to its replay`);
}

async function running(env) {
  const players = [0, 1].map(() => new Client(WS, { WebSocket, client: "e2e-replay" }));
  await Promise.all(players.map((p) => p.connect()));
  const table = await players[0].create("gift-of-tulips", 2);
  for (const [i, p] of players.entries()) await p.join(table, `Player${i}`);
  const page = await env.page();
  const frames = recordFrames(page);
  await page.goto(`${HTTP}/replay/${table}`);
  await page.getByTestId("replay-problem").filter({ hasText: "its replay opens once its game is over" }).waitFor();
  check(await counter(page).count() === 0, "a running table's replay shows a step counter");
  check(!frames.some((f) => f.type === "replay" || f.type === "view" || f.type === "event"), "a running table's replay page received some of it");
  check(frames.some((f) => f.type === "error" && f.code === "bad_field"), "no refusal reached the page");
  step(`a running table's replay (${table}) says so and shows nothing of it`);
  players.forEach((p) => p.close());
}

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "parsimonia-chromium-"));
  const browser = await launchChromium(profile);
  const errors = [];
  const env = {
    countdowns: 0,
    page: async () => {
      const ctx = await browser.newContext({ viewport: { width: 1000, height: 900 } });
      const page = await ctx.newPage();
      page.setDefaultTimeout(T);
      page.on("pageerror", (e) => { errors.push(e.message); console.error("page error:", e.message); });
      return page;
    },
  };
  try {
    check(GAMES.length, "no finished games given (PARSIMONIA_REPLAYS)");
    for (const g of GAMES) await replayOf(env, g);
    check(env.countdowns > 0, "no game showed a countdown at its second step");
    await lobbyLink(env, GAMES[0]);
    await running(env);
    check(!errors.length, `the page threw: ${errors.join("; ")}`);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => { step("all passed"); process.exit(0); }, (e) => { console.error("e2e FAILED:", e); process.exit(1); });
