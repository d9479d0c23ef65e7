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
    </section>
  );
}
