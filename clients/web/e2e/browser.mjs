// What every e2e script shares: Debian's Chromium started headless as this machine needs it (no background
// networking: the closed network refuses it), and the small helpers the scripts log and check with.
import { chromium } from "playwright-core";
import { join } from "node:path";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = process.env.PARSIMONIA_SCREENSHOTS;

export const T = 60_000; // the generous timeout of every wait: the scripts run on a shared 2-core machine

export const step = (s) => console.log(`e2e: ${s}`);

export const shot = async (page, name) => { if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true }); };

export function check(ok, what) { if (!ok) throw new Error(what); }

/** Headless Chromium with its disk cache in ``profile`` (a fresh folder the caller removes). */
export const launchChromium = (profile) => chromium.launch({
  executablePath: CHROMIUM, headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", `--disk-cache-dir=${join(profile, "cache")}`],
});
