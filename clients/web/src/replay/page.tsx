// The replay page (/replay/<table>): a finished game stepped through event by event with the game's own view,
// the clocks as they stood, and, the game being over, any seat's private view (the seat picker). Next,
// previous, first, last, a step or a turn to jump to, and play at 1x, 4x or 16x of the game's own clock.
import { useEffect, useMemo, useState } from "preact/hooks";
import { client, errorText } from "../app/conn";
import { TableClocks, clockText } from "../app/countdown";
import { EventLog, ResultBanner, genericLine, names } from "../games/common";
import { valueText } from "../games/generic";
import { gameModule } from "../games/index";
import { SPEEDS, loadReplay, pictureAt, stepAt, turnStarts, type Replay } from "./steps";

const RETRIES = 8; // `unavailable` or `rate_limited`: asked again after 1, 2, ... 8 s
const TICK_MS = 50;

export function ReplayPage(props: { table: string }) {
  const { table } = props;
  const [replay, setReplay] = useState<Replay | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [loaded, setLoaded] = useState<[number, number]>([0, 0]);
  useEffect(() => {
    let live = true;
    (async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          const r = await loadReplay((m) => client.request(m), table, (have, of) => live && setLoaded([have, of]));
          if (live) setReplay(r);
          return;
        } catch (e: any) {
          // the replay file is being written, or this address had many games replayed lately: a little later
          if ((e?.code === "unavailable" || e?.code === "rate_limited") && attempt < RETRIES) {
            await new Promise((ok) => setTimeout(ok, 1000 * (attempt + 1)));
            continue;
          }
          // the server's own words: "table: t3 is running: its replay opens once its game is over"
          if (live) setProblem(e?.code === "bad_field" ? String(e.message).replace(/^bad_field: table: /, "Table ") : errorText(e));
          return;
        }
      }
    })();
    return () => { live = false; };
  }, [table]);
  if (problem) return <main class="page replay"><p role="alert" class="problem" data-testid="replay-problem">{problem}</p><a href="/">Back to the lobby</a></main>;
  if (!replay) return <main class="page replay"><p aria-busy="true">Loading the replay of table {table}… {loaded[1] ? `${loaded[0]} of ${loaded[1]} events` : ""}</p></main>;
  if (!replay.steps.length) return <main class="page replay"><p data-testid="replay-problem">Table {table} ended with no event to replay.</p></main>;
  return <Player replay={replay} />;
}

function Player({ replay }: { replay: Replay }) {
  const steps = replay.steps, last = steps.length - 1;
  const [i, setI] = useState(0);
  const [now, setNow] = useState(steps[0].time); // the game's clock: a step's time, or between two while playing
  const [speed, setSpeed] = useState<number>(1);
  const [playing, setPlaying] = useState(false);
  const [seat, setSeat] = useState<number | null>(null);
  const turns = useMemo(() => turnStarts(steps), [steps]);
  const go = (to: number) => { const n = Math.max(0, Math.min(last, to)); setI(n); setNow(steps[n].time); };

  useEffect(() => {
    if (!playing) return;
    let at = performance.now(), game = now, step = i;
    const id = setInterval(() => {
      const t = performance.now();
      game += (t - at) * speed;
      at = t;
      step = stepAt(steps, step, game);
      if (step >= last) { setI(last); setNow(steps[last].time); setPlaying(false); return; }
      setI(step); setNow(game);
    }, TICK_MS);
    return () => clearInterval(id);
  }, [playing, speed]);

  const game = gameModule(replay.game, client.welcome?.display?.[replay.game]?.title);
  const currency: string = client.welcome?.display?.[replay.game]?.currency ?? "";
  const pic = pictureAt(replay, i, seat);
  const step = steps[i];
  const start = steps[0].time;
  const log = steps.slice(0, i + 1).map((s) => ({ seq: s.seq, time: s.time, event: s.event }));
  const seatNames = names(pictureAt(replay, last, null));
  const turn = typeof step.view.turn === "number" ? step.view.turn : null;
  const stop = (f: () => void) => () => { setPlaying(false); f(); };
  return (
    <main class="page table replay" data-table={replay.table} data-game={replay.game}>
      <header class="table-head">
        <h2>{game.title} · table {replay.table} · replay</h2>
        <a href="/">Lobby</a>
      </header>
      <section class="panel replay-controls" aria-label="replay controls">
        <div class="row">
          <button onClick={stop(() => go(0))} disabled={i === 0} data-testid="replay-first">« First</button>
          <button onClick={stop(() => go(i - 1))} disabled={i === 0} data-testid="replay-prev">◀ Previous</button>
          <button onClick={() => { if (i === last) go(0); setPlaying(!playing); }} data-testid="replay-play">{playing ? "Pause" : "Play"}</button>
          <button onClick={stop(() => go(i + 1))} disabled={i === last} data-testid="replay-next">Next ▶</button>
          <button onClick={stop(() => go(last))} disabled={i === last} data-testid="replay-last">Last »</button>
          <span data-testid="replay-step" data-step={i + 1} data-steps={steps.length} data-seq={step.seq} data-time={now} aria-live="polite">
            event {i + 1} of {steps.length}</span>
          <span class="t" data-testid="replay-clock" title="the game's clock at this event">{clockText(now - start)}</span>
        </div>
        <div class="row">
          <input type="range" min={1} max={steps.length} value={i + 1} aria-label="event" data-testid="replay-slider"
            onInput={(e) => { setPlaying(false); go(Number((e.target as HTMLInputElement).value) - 1); }} />
          <label>Event <input type="number" min={1} max={steps.length} value={i + 1} data-testid="replay-goto"
            onChange={(e) => { setPlaying(false); go(Number((e.target as HTMLInputElement).value) - 1); }} /></label>
          {turns.length ? <label>Turn <select data-testid="replay-turn" value={turn ?? ""}
            onChange={(e) => { setPlaying(false); const t = turns.find((x) => String(x.turn) === (e.target as HTMLSelectElement).value); if (t) go(t.step); }}>
            {turn == null ? <option value="">–</option> : null}
            {turns.map((t) => <option key={t.turn} value={t.turn}>{t.turn}</option>)}
          </select></label> : null}
          <span role="group" aria-label="speed">{SPEEDS.map((s) => (
            <label key={s}><input type="radio" name="speed" checked={speed === s} onChange={() => setSpeed(s)} data-testid={`replay-speed-${s}`} />{s}x</label>))}</span>
          <label>Seen by <select data-testid="replay-seat" value={seat == null ? "" : String(seat)}
            onChange={(e) => { const v = (e.target as HTMLSelectElement).value; setSeat(v === "" ? null : Number(v)); }}>
            <option value="">everyone (the public view)</option>
            {seatNames.map((n, s) => <option key={s} value={String(s)}>{n} (seat {s})</option>)}
          </select></label>
        </div>
        <p data-testid="replay-event" data-type={step.event.type}>{(Object.keys(step.event).length && game.describe(step.event, pic)) || genericLine(step.event, pic)}</p>
      </section>
      <TableClocks.Provider value={{ stopped: "over", at: now }}>
        <ResultBanner pic={pic} score={(v) => (currency ? `${currency}${v}` : `${v} pt`)} />
        <game.View pic={pic} legal={[]} act={async () => false} table={replay.table} log={log} />
      </TableClocks.Provider>
      {seat != null ? <Private seat={seat} name={seatNames[seat]} part={step.private[seat] ?? {}} /> : null}
      <EventLog log={log} pic={pic} game={game} start={start} />
    </main>
  );
}

/** What one seat alone could see at this step, field by field. */
function Private(props: { seat: number; name: string; part: Record<string, any> }) {
  const fields = Object.entries(props.part);
  return (
    <section class="panel replay-private" data-testid="replay-private" data-seat={props.seat} aria-label={`what ${props.name} alone saw`}>
      <h3>What {props.name} alone saw</h3>
      {fields.length ? <dl>{fields.map(([k, v]) => [<dt key={`${k}-k`}>{k.replace(/_/g, " ")}</dt>, <dd key={`${k}-v`} data-field={k}>{valueText(v)}</dd>])}</dl>
        : <p class="quiet" data-testid="replay-nothing-private">Nothing of its own: everything this seat saw is in the public view.</p>}
    </section>
  );
}
