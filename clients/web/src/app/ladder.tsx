// The ladder: every registered entrant's rating across events, per game (the `ratings` request, docs/ratings.md),
// best conservative ordinal first, as the lobby and the organiser's page show it. It asks again every
// LADDER_EVERY_MS and LADDER_AFTER_FINISH_MS after a table's game is over (one request per game the server runs
// each time, never more often than that). A server that refuses the request shows no ladder.
import { useEffect, useRef, useState } from "preact/hooks";
import { client } from "./conn";

/** A row of the `ratings` reply (protocol/SPEC.md). */
export type LadderRow = { entrant: string; game: string; mu: number; sigma: number; ordinal: number; games: number;
  last_played: string };
/** Each game's rows as the server listed them, and how many the whole ladder of that game has. */
export type Ladders = Record<string, { rows: LadderRow[]; total: number }>;

/** The ladder is asked for again this often (the server reads it from its ratings file each time). */
export const LADDER_EVERY_MS = 30_000;
/** And this long after a table's game is over (a tournament's director rates a game once it has seen its end);
 * finishes within this time share one refresh. */
export const LADDER_AFTER_FINISH_MS = 3_000;

/** A game's rows, best ordinal first, equal ordinals by name (as the server orders them). */
export function ranked(rows: LadderRow[]): LadderRow[] {
  return [...rows].sort((a, b) => b.ordinal - a.ordinal || a.entrant.localeCompare(b.entrant, "en", { sensitivity: "base" }));
}

/** The games that have a rating, in the order `games` lists them (the server's welcome), others after them. */
export function ratedGames(ladders: Ladders, games: string[]): string[] {
  const rated = Object.keys(ladders).filter((g) => ladders[g].rows.length);
  return [...games.filter((g) => rated.includes(g)), ...rated.filter((g) => !games.includes(g)).sort()];
}

/** The game the ladder opens at: the one with the most rated entrants (the first of `rated` among equals). */
export function mainGame(ladders: Ladders, rated: string[]): string | undefined {
  return rated.reduce<string | undefined>((best, g) => best === undefined || ladders[g].total > ladders[best].total ? g : best, undefined);
}

/** When an entrant last played, to the minute, in UTC: "2026-12-04 18:27 UTC". */
export function playedText(iso: string): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/** The finished tables of a listing, as one key that changes when another game is over (the ladder refreshes). */
export function finishedKey(tables: Record<string, any>[]): string {
  return tables.filter((t) => t.state === "over").map((t) => t.table).sort().join(" ");
}

/** One game's ladder as a table (a pure view of its rows: the unit tests render it). On a phone the page hides
 * every table's fifth column (style.css): here mu ± sigma. */
export function LadderTable(props: { game: string; title: string; rows: LadderRow[]; total: number }) {
  const rows = ranked(props.rows);
  return (
    <table class="ladder" aria-label={`${props.title} ladder`} data-game={props.game}>
      <thead><tr><th>#</th><th>entrant</th><th class="num" title="mu - 3 sigma: the skill the entrant is very likely above">rating</th>
        <th class="num">games</th><th title="the skill estimate and its uncertainty">mu ± sigma</th><th>last played</th></tr></thead>
      <tbody>{rows.map((r, i) => (
        <tr key={r.entrant} data-testid="ladder-row" data-entrant={r.entrant} data-games={r.games}>
          <td>{i + 1}</td><td class="entrant">{r.entrant}</td><td class="ordinal num">{r.ordinal.toFixed(1)}</td>
          <td class="games num">{r.games}</td><td>{r.mu.toFixed(1)} ± {r.sigma.toFixed(1)}</td>
          <td class="played">{playedText(r.last_played)}</td>
        </tr>))}</tbody>
      {props.total > rows.length
        ? <caption class="small">the best {rows.length} of {props.total}</caption> : null}
    </table>
  );
}

/** The ladder section: a game picker (the games with ratings), the picked game's ladder, or how ratings come
 * about while there is none; nothing when the server refuses the request. `finished` changes when a table's game
 * is over (the ids of the finished tables), which refreshes it. */
export function Ladder(props: { finished: string; title: (game: string) => string }) {
  const [ladders, setLadders] = useState<Ladders | null>(null);
  const [picked, setPicked] = useState<string | null>(null);
  const soon = useRef<ReturnType<typeof setTimeout> | null>(null);
  const seen = useRef<string | null>(null);

  const refresh = async () => {
    try {
      const names: string[] = (await client.connect()).games ?? [];
      const replies = await Promise.all(names.map((game) => client.request({ type: "ratings", game })));
      const out: Ladders = {};
      names.forEach((game, i) => { out[game] = { rows: (replies[i] as any).ratings ?? [], total: (replies[i] as any).total ?? 0 }; });
      setLadders(out);
    } catch {
      // refused (a server without the request) or cut off: what was shown stays, and nothing if nothing was
    }
  };
  useEffect(() => {
    refresh();
    const id = setInterval(refresh, LADDER_EVERY_MS);
    return () => { clearInterval(id); if (soon.current) clearTimeout(soon.current); };
  }, []);
  useEffect(() => {
    if (seen.current !== null && seen.current !== props.finished && !soon.current) {
      soon.current = setTimeout(() => { soon.current = null; refresh(); }, LADDER_AFTER_FINISH_MS);
    }
    seen.current = props.finished;
  }, [props.finished]);

  if (!ladders) return null;
  const games = ratedGames(ladders, client.welcome?.games ?? []);
  const game = picked && games.includes(picked) ? picked : mainGame(ladders, games);
  return (
    <section class="panel ladder" aria-label="ladder" data-testid="ladder" data-game={game ?? ""}>
      <h3>Ladder</h3>
      {game ? <>
        {games.length > 1 ? <label class="ladder-game">Ladder of <select data-testid="ladder-game" value={game}
          onChange={(e) => setPicked((e.target as HTMLSelectElement).value)}>
          {games.map((g) => <option key={g} value={g}>{props.title(g)}</option>)}</select></label> : null}
        <LadderTable game={game} title={props.title(game)} rows={ladders[game].rows} total={ladders[game].total} />
        <p class="small">Ratings carry across events: the rating is the conservative estimate mu − 3 sigma
          (docs/ratings.md).</p>
      </> : <p class="small" data-testid="ladder-empty">No ratings yet. Rated games make them: every game of a
        tournament (<code>parsimonia tournament --data DIR</code>) and a table created with <code>rated</code> whose
        seats joined with an entrant's key (<code>parsimonia ratings --issue NAME</code>). A server run with
        <code>--sync off</code> keeps none.</p>}
    </section>
  );
}
