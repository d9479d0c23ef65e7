// A table, seated (resumed with the token kept for it) or watched: the game's own view module, the result,
// the event log, and for spectators the tournament's standings bulletin.
import { useEffect, useState } from "preact/hooks";
import { gameModule } from "../games/index";
import { EventLog, ResultBanner, names } from "../games/common";
import { client, errorText, eventLog, seats, useClient } from "./conn";
import { TableClocks, tableClocks } from "./countdown";
import { Standings } from "./standings";

const starts = new Map<string, number>(); // a table's start once known: the log keeps only its latest events

/** When the game began, in server time, for the log's time column: the view's, its game clock's, its
 * `game_started` event's, or its result's (the end less `game_ms`); once known, kept for the table. */
export function gameStart(table: string, pic: Record<string, any>, startedEvent: number | null,
  endedEvent: number | null): number | null {
  const known = pic.started_at ?? (pic.deadlines?.game != null && pic.config?.game_ms ? pic.deadlines.game - pic.config.game_ms : null)
    ?? startedEvent ?? (endedEvent != null && typeof pic.result?.game_ms === "number" ? endedEvent - pic.result.game_ms : null);
  if (typeof known === "number") starts.set(table, known);
  return starts.get(table) ?? null;
}

export function TablePage(props: { table: string; mode: "seat" | "watch" }) {
  const { table, mode } = props;
  useClient();
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [watchable, setWatchable] = useState(false);

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        if (mode === "seat") {
          const offered = seats.offered(table);
          seats.withdraw(table);
          if (offered && offered !== seats.get(table)) {
            try {
              await client.resume(table, offered);
              seats.set(table, offered);
              return;
            } catch (e: any) {
              if (e?.code !== "bad_token" || !seats.get(table)) throw e;
              if (live) setNotice("That seat code is not valid for this table: you keep the seat this browser already holds.");
            }
          }
          const token = seats.get(table);
          if (!token) {
            // is there such a table? (asked of the table itself: on a cluster a new table may not be listed yet)
            const exists = await client.watch(table).then(() => { client.leave(table); return true; },
              (e: any) => e?.code !== "no_such_table");
            if (!live) return;
            if (!exists) {
              setProblem(`There is no table ${table} on this server (it may have ended and been cleared away).`);
            } else {
              setProblem(`This browser holds no seat at table ${table}: join it from the lobby while it waits for players, `
                + "or paste your seat code there to take your seat back. You can also watch it.");
              setWatchable(true);
            }
            return;
          }
          const held = client.tables.get(table);
          if (!(held && held.role === "seat" && held.token === token && !held.lost && held.view)) await client.resume(table, token);
        } else {
          await client.watch(table);
        }
      } catch (e: any) {
        if (live) setProblem(e?.code === "bad_token" ? "That seat code is not valid for this table." : errorText(e));
      }
    })();
    const off = client.on("lost", (t: any) => {
      if (t.table === table) setProblem(t.lost === "taken_elsewhere" ? "This seat was taken over by another window or device." : `Lost the table: ${t.lost}`);
    });
    // a watcher stops watching; a seat is kept (before the start, `leave` would give it up)
    return () => { live = false; off(); if (mode === "watch") client.leave(table); };
  }, [table, mode]);

  const t = client.tables.get(table);
  const pic = client.picture(table);
  const currency: string = t ? client.welcome?.display?.[t.game]?.currency ?? "" : ""; // the game's manifest says it
  if (problem) return <main class="page"><p role="alert" class="problem">{problem}</p><p class="actions"><a class="button" href="#">Back to the lobby</a>
    {watchable ? <a class="button watch" href={`#watch/${table}`}>Watch {table}</a> : null}</p></main>;
  if (!t || !pic) return <main class="page"><p aria-busy="true">Connecting to table {table}…</p></main>;
  const game = gameModule(t.game, client.welcome?.display?.[t.game]?.title);
  const paused = !!pic.paused;
  const act = async (command: Record<string, any>) => {
    setNotice(null);
    try { await client.act(table, command); return true; } catch (e) { setNotice(errorText(e)); return false; }
  };
  const log = eventLog(table);
  const startEv = log.find((l) => l.event.type === "game_started");
  const endEv = log.find((l) => l.event.type === "result");
  const pauseEv = [...log].reverse().find((l) => l.event.type === "paused");
  const start = gameStart(table, pic, startEv?.time ?? null, endEv?.time ?? null);
  return (
    <main class="page table" data-table={table} data-game={t.game} data-mode={mode}>
      <header class="table-head">
        <h2>{game.title} · table {table}</h2>
        <span data-testid="who">{mode === "seat" ? `You are ${names(pic)[t.seat ?? -1] ?? `seat ${t.seat}`}, seat ${t.seat}` : "Spectating"}</span>
        {paused ? <span class="tag paused" role="status" data-testid="paused" data-held={pic.held ? "true" : undefined}>
          {pic.held ? "Clocks held until the players are connected" : "Clocks paused by the organiser"}</span> : null}
        <a href="#">Lobby</a>
      </header>
      {notice ? <p role="alert" class="notice">{notice} <button onClick={() => setNotice(null)} aria-label="dismiss">×</button></p> : null}
      {pic.phase === "waiting" ? (
        <section class="panel" aria-label="waiting room">
          <h3>Waiting for players: {(pic.seats ?? []).length} of {pic.seat_count}</h3>
          <ul>{(pic.seats ?? []).map((s: any) => <li key={s.seat}>{s.name}{s.connected ? "" : " (away)"}</li>)}</ul>
        </section>
      ) : (
        <TableClocks.Provider value={tableClocks(pic, t.time, endEv?.time ?? null, pauseEv?.event.at ?? null)}>
          <ResultBanner pic={pic} score={(v) => (currency ? `${currency}${v}` : `${v} pt`)} />
          <game.View pic={pic} legal={mode === "seat" && !pic.result ? t.legal : []} act={act} table={table} />
        </TableClocks.Provider>
      )}
      <EventLog log={log} pic={pic} game={game} start={start} />
      {mode === "watch" ? <Standings /> : null}
    </main>
  );
}
