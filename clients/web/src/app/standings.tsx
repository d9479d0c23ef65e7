// The `standings` bulletin a tournament director publishes, followed live.
import { useEffect, useState } from "preact/hooks";
import { client } from "./conn";

export function Standings() {
  const [data, setData] = useState<Record<string, any> | null>(null);
  useEffect(() => {
    const off = client.on("bulletin", (b: any) => { if (b.topic === "standings") setData(b.data ?? null); });
    client.follow("standings").catch(() => undefined);
    return off;
  }, []);
  if (!data) return null;
  const entrants: any[] = data.entrants ?? [];
  return (
    <section class="panel standings" aria-label="standings">
      <h3>{data.tournament ?? data.name ?? "Tournament"}{data.round != null ? `, round ${data.round}` : ""}</h3>
      <table>
        <thead><tr><th>#</th><th>name</th><th>points</th><th>score</th><th>games</th></tr></thead>
        <tbody>{entrants.map((e, i) => <tr key={e.name}><td>{e.rank ?? i + 1}</td><td>{e.name}</td><td>{e.points}</td><td>{e.score}</td><td>{e.games}</td></tr>)}</tbody>
      </table>
      <Replays rounds={data.rounds ?? []} />
    </section>
  );
}

/** Each finished game of the standings' rounds: its round, its place in the round, and its replay's address. */
export function finishedGames(rounds: any[]): { round: number; table: number; id: string; href: string }[] {
  return rounds.flatMap((r) => (r.tables ?? []).filter((t: any) => t.state === "finished" && t.server_table)
    .map((t: any) => ({ round: r.round, table: t.table, id: String(t.server_table), href: `/replay/${encodeURIComponent(String(t.server_table))}` })));
}

/** Each finished game of the tournament, linked to its replay (/replay/<table>). */
function Replays(props: { rounds: any[] }) {
  const games = finishedGames(props.rounds);
  if (!games.length) return null;
  return (
    <p class="small replays">Replays: {games.map((g, i) => <span key={g.id}>{i ? " · " : ""}<a href={g.href}>
      round {g.round}, table {g.table}</a></span>)}</p>
  );
}
