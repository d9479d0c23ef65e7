// The lobby: the server's tables (game, seats taken, state), create a table where the server allows it,
// join by name, watch, or take a seat back from a seat code or link; the ladder of ratings across events.
import { useEffect, useState } from "preact/hooks";
import { adminToken, client, errorText, parseSeatCode, seats, useClient } from "./conn";
import { clockText } from "./countdown";
import { finishedKey, Ladder } from "./ladder";
import PRESETS from "../../../../server/games/parsimonia/presets.json";

/** A quiet time people can bid in, whatever the clock speed: custom Parsimonia clocks get this floor (as the
 * presets do, docs/rules/parsimonia.md). */
const HUMAN_QUIET_FLOOR_MS = 5000;
/** And a bid sent at a quiet deadline is not lost on its way (`grace_ms`). */
const HUMAN_GRACE_MS = 250;

/** Parsimonia's options from the lobby's clock choice: a preset's, or custom minutes and seconds (blank: the
 * rules' own), always with a quiet time that the clock speed cannot take below a person's reach. */
export function parsimoniaClocks(choice: string, custom: { game: string; turn: string; quiet: string }):
    Record<string, number> {
  const preset = (PRESETS as Record<string, { title: string; options: Record<string, number> }>)[choice];
  if (preset) return { ...preset.options };
  const out: Record<string, number> = { quiet_floor_ms: HUMAN_QUIET_FLOOR_MS, grace_ms: HUMAN_GRACE_MS };
  const put = (key: string, text: string, unit: number) => {
    const v = parseFloat(text);
    if (v > 0) out[key] = Math.max(1, Math.round(v * unit));
  };
  put("game_ms", custom.game, 60_000);
  put("turn_ms", custom.turn, 1000);
  put("quiet_ms", custom.quiet, 1000);
  return out;
}

/** Parsimonia's own clocks (protocol/SPEC.md, its options), for the options a table is created without. */
const RULES_MS: Record<string, number> = { game_ms: 7_200_000, opening_ms: 900_000, turn_ms: 300_000, quiet_ms: 30_000 };

/** The clocks a new Parsimonia table will have, as the server makes them from `options` at clock speed `scale`
 * (server/games: each duration divided by the speed, the quiet time kept at its floor for people). */
export function parsimoniaTimes(options: Record<string, number>, scale: number): Record<string, number> {
  const s = scale > 0 && Number.isFinite(scale) ? scale : 1;
  const out: Record<string, number> = {};
  for (const [k, rules] of Object.entries(RULES_MS)) out[k] = Math.max(1, Math.round((options[k] ?? rules) / s));
  if (options.quiet_floor_ms) out.quiet_ms = Math.max(out.quiet_ms, Math.min(options.quiet_ms ?? RULES_MS.quiet_ms, options.quiet_floor_ms));
  return out;
}

/** The clocks in words, as the lobby shows them before a table is created. */
export function timesText(t: Record<string, number>): string {
  return `game ${clockText(t.game_ms)}, opening ${clockText(t.opening_ms)}, turn ${clockText(t.turn_ms)}; `
    + `an auction closes after ${clockText(t.quiet_ms)} with no bid`;
}

/** A game's title as the server's welcome says it (its manifest), or its name. */
function title(game: string): string {
  return client.welcome?.display?.[game]?.title ?? game;
}

export function Lobby() {
  useClient(["status", "welcome"]);
  const [tables, setTables] = useState<Record<string, any>[] | null>(null);
  const [name, setName] = useState<string>(localStorage.getItem("parsimonia.name") ?? "");
  const [message, setMessage] = useState<string | null>(null);
  const [code, setCode] = useState("");
  const [game, setGame] = useState("parsimonia");
  const [seatCount, setSeatCount] = useState("2");
  const [scale, setScale] = useState("1");
  const [clocks, setClocks] = useState("quick");
  const [custom, setCustom] = useState({ game: "", turn: "", quiet: "" });
  const [sit, setSit] = useState(true);
  const [created, setCreated] = useState<string | null>(null);

  const refresh = async () => {
    try { setTables(await client.listTables()); } catch (e) { setMessage(errorText(e)); }
  };
  useEffect(() => {
    refresh();
    const id = setInterval(refresh, 2000);
    return () => clearInterval(id);
  }, []);

  const join = async (table: string) => {
    const who = name.trim();
    if (!who) { setMessage("Type your name first."); document.getElementById("player-name")?.focus(); return; }
    localStorage.setItem("parsimonia.name", who);
    try {
      const t = await client.join(table, who);
      if (t.token) seats.set(table, t.token);
      location.hash = `#${table}`;
    } catch (e) { setMessage(errorText(e)); }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    const admin = adminToken.get();
    try {
      const extra: Record<string, any> = {};
      const s = parseFloat(scale);
      if (s && s !== 1) extra.time_scale = s;
      if (admin) extra.admin = admin;
      if (game === "parsimonia") extra.options = parsimoniaClocks(clocks, custom);
      const table = await client.create(game, parseInt(seatCount, 10), extra);
      refresh();
      if (sit && name.trim()) { setMessage(`Created table ${table}.`); setCreated(null); await join(table); return; }
      setCreated(table);
      setMessage(`Created table ${table}. You are not seated at it: ${name.trim() ? "" : "type your name above, then "}`
        + `press “Join ${table}” to sit at it, or leave its seats to the players.`);
    } catch (err: any) {
      setMessage(err?.code === "forbidden" ? "Only the organiser creates tables on this server." : errorText(err));
    }
  };
  const paste = (e: Event) => {
    e.preventDefault();
    const seat = parseSeatCode(code);
    if (!seat) { setMessage("That is not a seat code: it looks like t3/TOKEN or a link ending in #t3/TOKEN."); return; }
    seats.offer(seat.table, seat.token);
    location.hash = `#${seat.table}`;
  };
  const games: string[] = client.welcome?.games ?? [];
  return (
    <main class="page lobby">
      <h2>Tables</h2>
      {message ? <p role="status" class="notice">{message}
        {created && (tables ?? []).some((t) => t.table === created && t.state === "waiting")
          ? <> <button class="join" onClick={() => join(created)}>Join {created}</button></> : null}</p> : null}
      <label class="name">Your name <input id="player-name" value={name} maxLength={64} autoComplete="nickname"
        onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
      <table class="tables" aria-label="tables">
        <thead><tr><th>table</th><th>game</th><th>seats</th><th>state</th><th>watching</th><th></th></tr></thead>
        <tbody>
          {(tables ?? []).map((t) => (
            <tr key={t.table} data-table={t.table} data-state={t.state}>
              <td>{t.table}</td><td>{title(t.game)}</td><td>{t.taken}/{t.seats}</td><td>{t.state}</td><td>{t.spectators}</td>
              <td class="actions">
                {seats.get(t.table) && t.state !== "waiting" ? <a class="button" href={`#${t.table}`}>My seat</a> : null}
                {t.state === "running" && t.paused && !seats.get(t.table)
                  ? <span class="tag held" title="a tournament table waits for its players">
                    held for its players: open your link</span> : null}
                {t.state === "waiting" && t.taken < t.seats ? <button class="join" onClick={() => join(t.table)}>Join {t.table}</button> : null}
                <a class="button watch" href={`#watch/${t.table}`}>Watch</a>
                {t.state === "over" ? <a class="button replay" href={`/replay/${encodeURIComponent(t.table)}`}>Replay</a> : null}
              </td>
            </tr>
          ))}
          {tables && !tables.length ? <tr><td colSpan={6}>No table yet.</td></tr> : null}
        </tbody>
      </table>
      <form class="panel inline" onSubmit={paste} aria-label="seat code">
        <label>Seat code or link <input value={code} placeholder="t3/TOKEN" onInput={(e) => setCode((e.target as HTMLInputElement).value)} /></label>
        <button type="submit">Take my seat</button>
      </form>
      <form class="panel inline" onSubmit={create} aria-label="new table">
        <label>Game <select value={game} onChange={(e) => setGame((e.target as HTMLSelectElement).value)}>
          {games.map((g) => <option key={g} value={g}>{title(g)}</option>)}</select></label>
        <label>Seats <input type="number" min={2} max={6} value={seatCount} onInput={(e) => setSeatCount((e.target as HTMLInputElement).value)} /></label>
        {game === "parsimonia" ? <>
          <label>Clocks <select value={clocks} onChange={(e) => setClocks((e.target as HTMLSelectElement).value)}>
            {Object.entries(PRESETS).map(([k, p]) => <option key={k} value={k}>{p.title}</option>)}
            <option value="custom">my own times</option></select></label>
          {clocks === "custom" ? <>
            {([["game", "game min", "120"], ["turn", "turn s", "300"], ["quiet", "quiet s", "30"]] as const).map(([k, label, rules]) => (
              <label key={k}>{label} <input type="number" min={1} step="any" value={custom[k]} placeholder={rules}
                onInput={(e) => setCustom({ ...custom, [k]: (e.target as HTMLInputElement).value })} /></label>))}
          </> : null}
        </> : null}
        <label>Clock speed × <input type="number" min={0.001} step="any" value={scale} onInput={(e) => setScale((e.target as HTMLInputElement).value)} /></label>
        <label><input type="checkbox" checked={sit} onChange={(e) => setSit((e.target as HTMLInputElement).checked)} /> and sit at it</label>
        <button type="submit">Create a table</button>
        <p class="small clock-times" data-testid="clock-times">{game === "parsimonia"
          ? `${parseFloat(scale) > 0 && parseFloat(scale) !== 1 ? `At ×${parseFloat(scale)} the` : "The"} clocks: ${timesText(parsimoniaTimes(parsimoniaClocks(clocks, custom), parseFloat(scale)))}.`
          : parseFloat(scale) > 0 && parseFloat(scale) !== 1 ? `Every clock of the game runs ×${parseFloat(scale)} as fast as its rules say.` : "The game's own clocks."}</p>
      </form>
      <Ladder finished={finishedKey(tables ?? [])} title={title} />
      <p class="small"><a href="#admin">Organiser's page</a></p>
    </main>
  );
}
