// The ladder in headless Chromium against a real server (started by tests/web/test_ladder.py with an empty data
// directory): the lobby says how ratings come about while there is none; games rated into the server's ratings file
// (PARSIMONIA_RATE: a command that rates them and prints the ladder as JSON) appear once a table's game is over,
// ranked by the ordinal with games played and last played, a game at a time, on a phone's screen too; the
// organiser's page shows the same ladder. Exit status 0 = pass.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { T, check, launchChromium, shot, step } from "./browser.mjs";
import { WebSocket } from "ws";
import { Client } from "../src/protocol/index.js";

const HTTP = process.env.PARSIMONIA_HTTP;
const ADMIN = process.env.PARSIMONIA_ADMIN_TOKEN;
const RATE = JSON.parse(process.env.PARSIMONIA_RATE ?? "[]");
const WS = HTTP.replace(/^http/, "ws");

/** The ladder's rows as the page shows them: entrant, rating, games, last played. */
const shown = (page) => page.locator("[data-testid=ladder] [data-testid=ladder-row]").evaluateAll((rows) => rows.map((r) => ({
  entrant: r.dataset.entrant, ordinal: r.querySelector("td.ordinal").textContent, games: r.querySelector("td.games").textContent,
  played: r.querySelector("td.played").textContent })));

/** A game's rows of the ladder the rating command printed, as the page should show them. */
const expected = (ladder, game) => ladder.filter((r) => r.game === game).map((r) => ({ entrant: r.entrant,
  ordinal: r.ordinal.toFixed(1), games: String(r.games), played: `${r.last_played.slice(0, 10)} ${r.last_played.slice(11, 16)} UTC` }));

async function sameRows(page, want, what, timeout = T) {
  await page.waitForFunction((n) => document.querySelectorAll("[data-testid=ladder] [data-testid=ladder-row]").length === n,
    want.length, { timeout });
  const rows = await shown(page);
  check(JSON.stringify(rows) === JSON.stringify(want), `${what}: ${JSON.stringify(rows)}, not ${JSON.stringify(want)}`);
}

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "parsimonia-chromium-"));
  const browser = await launchChromium(profile);
  const admin = new Client(WS, { WebSocket, client: "e2e-organiser" });
  const errors = [];
  const page = async () => {
    const ctx = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const p = await ctx.newPage();
    p.setDefaultTimeout(T);
    p.on("pageerror", (e) => { errors.push(e.message); console.error("page error:", e.message); });
    return p;
  };
  try {
    check(RATE.length, "no command to rate games with (PARSIMONIA_RATE)");
    await admin.connect();
    const lobby = await page();
    await lobby.goto(`${HTTP}/#`);
    await lobby.getByTestId("ladder-empty").filter({ hasText: "parsimonia ratings --issue NAME" }).waitFor();
    check(await lobby.getByTestId("ladder-row").count() === 0, "an empty ladder shows rows");
    step("an empty ladder says how ratings come about");

    const ladder = JSON.parse(execFileSync(RATE[0], RATE.slice(1), { encoding: "utf-8" }));
    check(new Set(ladder.map((r) => r.game)).size === 2, `the rated games are not of two games: ${JSON.stringify(ladder)}`);
    const table = await admin.create("gift-of-tulips", 2, { admin: ADMIN });
    await admin.admin(ADMIN, "close", { table }); // a game is over: the lobby asks for the ladder again
    await lobby.locator(`tr[data-table="${table}"][data-state=over]`).waitFor();
    // within 20 s of the game's end: before the ladder's every-30-s refresh (the page was opened just before)
    await sameRows(lobby, expected(ladder, "parsimonia"), "the lobby's Parsimonia ladder", 20_000);
    const ordinals = (await shown(lobby)).map((r) => Number(r.ordinal));
    check(ordinals.every((o, i) => !i || ordinals[i - 1] >= o), `not ranked by the ordinal: ${ordinals}`);
    await shot(lobby, "ladder-lobby");
    await lobby.setViewportSize({ width: 390, height: 844 }); // a phone: no sideways scrolling, games still shown
    await lobby.waitForFunction(() => document.documentElement.scrollWidth <= innerWidth + 1);
    check(await lobby.locator("[data-testid=ladder-row] td.games").first().isVisible(), "a phone hides the games played");
    await lobby.setViewportSize({ width: 1000, height: 900 });
    step("a game over refreshed the lobby's ladder: its entrants ranked by the ordinal, games and last played");

    await lobby.getByTestId("ladder-game").selectOption("kupcy");
    await sameRows(lobby, expected(ladder, "kupcy"), "the lobby's Kupcy ladder");
    check(await lobby.locator("[data-testid=ladder-game] option").count() === 2, "the picker offers a game without ratings");
    check(await lobby.locator(".notice, [role=alert]").count() === 0, "the lobby shows an error");
    step("the game picker shows Kupcy's ladder, and offers only the games with ratings");

    const org = await page();
    await org.goto(`${HTTP}/#admin`);
    await org.getByLabel("Admin token").fill(ADMIN);
    await org.getByRole("button", { name: "Open" }).click();
    await org.getByTestId("health").filter({ hasText: "ok" }).waitFor();
    await sameRows(org, expected(ladder, "parsimonia"), "the organiser's ladder");
    await shot(org, "ladder-admin");
    step("the organiser's page shows the same ladder");
    check(!errors.length, `the page threw: ${errors.join("; ")}`);
  } finally {
    admin.close();
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => { step("all passed"); process.exit(0); }, (e) => { console.error("e2e FAILED:", e); process.exit(1); });
