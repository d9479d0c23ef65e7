// A finished game's replay as the `replay` request pages it (protocol/SPEC.md): every step with its views
// carried forward (a step whose views a page left out has the step before's), and what the page derives from
// them: a seat's picture at a step, where each turn starts, and which step a moment of the game's clock shows.
import { assemble } from "../protocol/view.js";

export type Step = { seq: number; time: number; event: Record<string, any>; view: Record<string, any>; private: (Record<string, any> | null)[] };
export type Replay = { table: string; game: string; static: Record<string, any>; steps: Step[] };
export type Ask = (message: Record<string, any>) => Promise<Record<string, any>>;

/** Every page of the table's replay, in order; `progress(steps so far, last_seq)` after each. */
export async function loadReplay(ask: Ask, table: string, progress: (have: number, of: number) => void = () => undefined): Promise<Replay> {
  const steps: Step[] = [];
  let game = "", staticPart: Record<string, any> = {};
  for (let after = 0; ;) {
    const page = await ask({ type: "replay", table, after });
    if (after === 0) { game = page.game; staticPart = page.static ?? {}; }
    carry(steps, page.steps);
    progress(steps.length, page.last_seq);
    if (page.next === undefined || page.next <= after) break;
    after = page.next;
  }
  return { table, game, static: staticPart, steps };
}

/** Append a page's steps, each without views taking the step before's. */
export function carry(into: Step[], page: Record<string, any>[]): void {
  for (const s of page) {
    const before = into[into.length - 1];
    into.push({ seq: s.seq, time: s.time, event: s.event, view: s.view ?? before?.view ?? {}, private: s.private ?? before?.private ?? [] });
  }
}

/** The whole picture at step `i` as seat `seat` saw it (null: the public view, as a spectator saw it). The
 * replay records no presence: every seat shows as connected. */
export function pictureAt(r: Replay, i: number, seat: number | null): Record<string, any> {
  const step = r.steps[i];
  const view = { ...step.view, seats: (step.view.seats ?? []).map((s: any) => ({ ...s, connected: true })) };
  return assemble(r.static, view, seat == null ? null : step.private[seat] ?? {}, seat);
}

/** The first step of each turn the public view numbers (`turn`), in order. */
export function turnStarts(steps: Step[]): { turn: number; step: number }[] {
  const out: { turn: number; step: number }[] = [];
  steps.forEach((s, i) => {
    const t = s.view.turn;
    if (typeof t === "number" && (!out.length || out[out.length - 1].turn !== t)) out.push({ turn: t, step: i });
  });
  return out;
}

/** The step shown at game time `now` from step `i` on: the last whose time has come. */
export function stepAt(steps: Step[], i: number, now: number): number {
  while (i + 1 < steps.length && steps[i + 1].time <= now) i += 1;
  return i;
}

export const SPEEDS = [1, 4, 16] as const;

/** The table a replay page's address names (/replay/<table>), or null. */
export function tableOf(path: string): string | null {
  const m = /^\/replay\/([^/]+)\/?$/.exec(path);
  return m ? decodeURIComponent(m[1]) : null;
}
