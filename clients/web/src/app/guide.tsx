// A tournament entrant's permanent link (#me/KEY): the director's bulletin for that entrant (topic me.KEY) says
// where they play now, with the seat's token, or that they wait for the next round, or that it is over; the page
// follows it from table to table (server/tournament/guide.py).
import { useEffect, useState } from "preact/hooks";
import { client, seats } from "./conn";
import { Standings } from "./standings";
import { TablePage } from "./table";

export type Guide = { tournament?: string; name?: string; round?: number; state?: string; table?: string;
  token?: string; next_round?: number };

export function GuidePage(props: { linkKey: string }) {
  const topic = `me.${props.linkKey}`;
  const [guide, setGuide] = useState<Guide | null | undefined>(undefined); // undefined: not heard yet
  useEffect(() => {
    const off = client.on("bulletin", (b: any) => { if (b.topic === topic) setGuide(b.data ?? null); });
    client.follow(topic).catch(() => setGuide(null));
    return off;
  }, [topic]);
  if (guide === undefined) return <main class="page"><p aria-busy="true">Looking up your tournament…</p></main>;
  if (guide === null) {
    return <main class="page"><p role="alert" class="problem">This link names no entrant of a tournament on this
      server (yet): check it with the organiser.</p><a href="#">Back to the lobby</a></main>;
  }
  const head = `${guide.tournament ?? "Tournament"}: ${guide.name ?? "you"}`;
  if (guide.state === "playing" && guide.table && guide.token) {
    if (seats.get(guide.table) !== guide.token) seats.offer(guide.table, guide.token);
    return (
      <>
        <p class="notice guide" role="status" data-testid="guide">{head}, round {guide.round}: your table {guide.table}.
          Keep this link: it takes you to each round's table.</p>
        <TablePage key={guide.table} table={guide.table} mode="seat" />
      </>
    );
  }
  return (
    <main class="page guide">
      <h2>{head}</h2>
      <p role="status" data-testid="guide">{guide.state === "waiting"
        ? `Waiting for round ${guide.next_round}: this page takes you to your table as soon as it is paired.`
        : "The tournament is over for you: thank you for playing."}</p>
      <Standings />
    </main>
  );
}
