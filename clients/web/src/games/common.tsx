// What every game's view module shares: names by seat, a generic event line, the log and the result.
import { clockText } from "../app/countdown";
import type { Logged } from "../app/conn";

export type Pic = Record<string, any>;
export type Act = (command: Record<string, any>) => Promise<boolean>;
/** `log`: the events up to the picture (the replay's); absent, the table's own log as this page received it. */
export type GameProps = { pic: Pic; legal: Record<string, any>[]; act: Act; table: string; log?: Logged[] };
export type GameModule = {
  title: string;
  View: (p: GameProps) => any;
  describe: (event: Record<string, any>, pic: Pic) => string | null;
  /** Events that read as one line when they come one after another with the same key (e.g. bids on one
   * auction): `key` is nil for an event that never groups, `line` says a run of two or more. */
  runs?: {
    key: (event: Record<string, any>) => string | null;
    line: (events: Record<string, any>[], pic: Pic) => string;
  };
};

/** The log's entries, each run of consecutive events with the same key (`runs`) as one entry, oldest first. */
export function groupLog(log: Logged[], runs: GameModule["runs"]): Logged[][] {
  const out: Logged[][] = [];
  let last: string | null = null;
  for (const l of log) {
    const key = runs ? runs.key(l.event) : null;
    if (key !== null && key === last) out[out.length - 1].push(l);
    else out.push([l]);
    last = key;
  }
  return out;
}

export function names(pic: Pic): string[] {
  const out: string[] = [];
  for (const s of pic.seats ?? []) out[s.seat] = s.name;
  for (let i = 0; i < (pic.seat_count ?? out.length); i++) out[i] ??= `seat ${i}`;
  return out;
}

export function who(pic: Pic, seat: number | null | undefined, company = "the Company"): string {
  if (seat == null) return company;
  const n = names(pic)[seat] ?? `seat ${seat}`;
  return seat === pic.seat ? `${n} (you)` : n;
}

export function genericLine(e: Record<string, any>, pic: Pic): string {
  if (e.type === "game_started") return `the game starts: ${(e.seats ?? []).map((s: any) => s.name).join(", ")}`;
  if (e.type === "paused") return e.hold ? "the clocks wait for the players to connect" : "the organiser paused the clocks";
  if (e.type === "unpaused") return "the clocks run again";
  if (e.type === "result") {
    const r = e.result ?? {};
    if (r.reason === "closed") return "the organiser closed the table";
    const w = (r.winners ?? []).map((s: number) => who(pic, s)).join(" and ") || "nobody";
    return `result: ${w} won (${r.reason ?? "over"})`;
  }
  const rest = Object.entries(e).filter(([k]) => k !== "type" && k !== "at").map(([k, v]) => `${k} ${JSON.stringify(v)}`);
  return `${e.type.replace(/_/g, " ")}${rest.length ? ": " + rest.join(", ") : ""}`;
}

export function EventLog(props: { log: Logged[]; pic: Pic; game: GameModule; start: number | null }) {
  const { game, pic } = props;
  const items = groupLog(props.log, game.runs).slice(-60).reverse();
  return (
    <section class="panel log" aria-label="events">
      <h3>What happened</h3>
      <ol reversed>
        {items.map((run) => {
          const l = run[run.length - 1]; // a run is numbered and timed by its latest event
          const line = run.length > 1 && game.runs ? game.runs.line(run.map((r) => r.event), pic)
            : (Object.keys(l.event).length && game.describe(l.event, pic)) || genericLine(l.event, pic);
          const t = props.start != null ? clockText(l.time - props.start) : "";
          return <li key={l.seq} value={l.seq} data-seq={l.seq} data-type={l.event.type} data-count={run.length}>
            <span class="t">{t}</span> {line}</li>;
        })}
      </ol>
    </section>
  );
}

/** The game's state in a few words once it is over (`pic.result`): closed by the organiser, or ended. */
export function overText(pic: Pic): string {
  return pic.result?.reason === "closed" ? "The table is closed" : "Game over";
}

export function ResultBanner(props: { pic: Pic; score: (v: number) => string }) {
  const r = props.pic.result;
  if (!r) return null;
  const order = (r.scores ?? []).map((v: number, s: number) => [s, v]).sort((a: number[], b: number[]) => b[1] - a[1]);
  return (
    <section class="panel result" aria-live="polite" data-testid="result">
      <h3>{r.reason === "closed" ? "The organiser closed this table" : `Game over${r.reason ? ` (${String(r.reason).replace(/_/g, " ")})` : ""}`}</h3>
      {r.reason === "closed" ? <p data-testid="closed">The game stopped where it was: nothing more happens here, and the clocks have stopped.</p> : null}
      <p>{(r.winners ?? []).length ? `Won by ${(r.winners as number[]).map((s) => who(props.pic, s)).join(" and ")}` : "No winner"}</p>
      <ol>{order.map(([s, v]: number[]) => <li key={s}>{who(props.pic, s)}: {props.score(v)}</li>)}</ol>
    </section>
  );
}
