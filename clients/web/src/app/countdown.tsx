// A deadline in server time as a live countdown, corrected by the ping/pong offset. The table's clocks may be
// stopped (paused by the organiser, held for the players, or the game over): then every countdown shows the time
// that was left at the moment they stopped (the view's `paused_at`, never the time the page saw the view), and
// does not move.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { client, useTick } from "./conn";

export function clockText(ms: number): string {
  const s = Math.ceil(Math.max(0, ms) / 1000);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(sec).padStart(2, "0")}` : `${m}:${String(sec).padStart(2, "0")}`;
}

/** The table's clocks: running, or stopped at server time `at` because the table is paused or over. */
export type Clocks = { stopped: null } | { stopped: "paused" | "over"; at: number };
export const TableClocks = createContext<Clocks>({ stopped: null });

/** The clocks of a table whose picture is `pic` and whose latest view was made at server time `viewTime`;
 * `endedAt` is when the game ended, `pausedAt` when the clocks last stopped, when the page knows it (its
 * `result` and `paused` events). A paused view says `paused_at` itself; the time of a view made during the
 * pause is later than the moment the clocks stopped. */
export function tableClocks(pic: Record<string, any>, viewTime: number, endedAt: number | null,
  pausedAt: number | null = null): Clocks {
  if (pic.result) return { stopped: "over", at: endedAt ?? viewTime };
  if (pic.paused) return { stopped: "paused", at: typeof pic.paused_at === "number" ? pic.paused_at : pausedAt ?? viewTime };
  return { stopped: null };
}

export function Countdown(props: { deadline: number | null | undefined; label?: string; title?: string }) {
  useTick(250);
  const clocks = useContext(TableClocks);
  const { deadline, label, title } = props;
  if (deadline == null) return <span class="countdown off" title={title}>{label ? `${label} –` : "–"}</span>;
  const stopped = clocks.stopped;
  const left = stopped ? Math.max(0, deadline - clocks.at) : client.clock.remaining(deadline, client.now());
  const paused = stopped === "paused";
  const urgent = !stopped && left < 10000;
  const state = stopped === "over" ? ", stopped: the game is over" : paused ? ", paused" : "";
  return (
    <span class={`countdown${urgent ? " urgent" : ""}${stopped ? ` stopped ${stopped}` : ""}`} data-deadline={deadline}
      data-left={Math.round(left)} title={title} aria-label={`${label ?? "time left"}: ${clockText(left)}${state}`}>
      {label ? `${label} ` : ""}{clockText(left)}{paused ? <span class="pause-icon" aria-hidden="true" /> : null}
    </span>
  );
}
