// The page: the lobby (#), a seat (#t3, or a seat link #t3/TOKEN), a spectator (#watch/t3), the organiser (#admin),
// a tournament entrant's permanent link (#me/KEY).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Admin } from "./app/admin";
import { GuidePage } from "./app/guide";
import { client, parseSeatCode, seats, useClient } from "./app/conn";
import { Lobby } from "./app/lobby";
import { TablePage } from "./app/table";
import "./style.css";

type Route = { page: "lobby" } | { page: "admin" } | { page: "me"; key: string }
  | { page: "table"; table: string; mode: "seat" | "watch" };

export function route(hash: string): Route {
  const h = decodeURIComponent(hash.replace(/^#/, ""));
  if (!h) return { page: "lobby" };
  if (h === "admin") return { page: "admin" };
  const me = /^me\/([0-9a-f]{32})$/.exec(h);
  if (me) return { page: "me", key: me[1] };
  const w = /^watch\/(.+)$/.exec(h);
  if (w) return { page: "table", table: w[1], mode: "watch" };
  return { page: "table", table: h.split("/")[0], mode: "seat" };
}

/** A seat link #t3/TOKEN: offer the token for the table (kept once the server accepts it) and show #t3 (the
 * token leaves the address bar). */
function takeSeatLink(): boolean {
  const seat = parseSeatCode(location.hash);
  if (!seat || !location.hash.includes("/") || /^#(watch|me)\//.test(location.hash)) return false;
  seats.offer(seat.table, seat.token);
  history.replaceState(null, "", `#${seat.table}`);
  return true;
}

function Connection() {
  useClient(["status", "clock"]);
  const rtt = client.clock.lastRtt;
  const serverRtt = client.serverRttMs;
  const label = client.state === "open" ? "connected" : client.state === "closed" ? "offline" : `${client.state}…`;
  return (
    <span class={`conn ${client.state}`} role="status" data-testid="connection">
      {label}{rtt != null ? <span data-testid="latency" title="how long the page's last message took to reach the server and come back">
        {" "}· round trip {Math.round(rtt)} ms</span> : null}
      {serverRtt != null ? <span data-testid="server-rtt" title="the same round trip as the server measures it (smoothed): what your clicks wait for">
        {" "}(server {serverRtt} ms)</span> : null}
    </span>
  );
}

function App() {
  const [r, setR] = useState<Route>(route(location.hash));
  const [links, setLinks] = useState(0); // seat links taken while the page is open: each is tried afresh
  useEffect(() => {
    const on = () => { if (takeSeatLink()) setLinks((n) => n + 1); setR(route(location.hash)); };
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return (
    <>
      <header class="top"><a href="#" class="brand">Parsimonia</a><Connection /></header>
      {r.page === "lobby" ? <Lobby /> : r.page === "admin" ? <Admin /> : r.page === "me" ? <GuidePage key={r.key} linkKey={r.key} /> : <TablePage key={`${r.mode}:${r.table}:${links}`} table={r.table} mode={r.mode} />}
    </>
  );
}

takeSeatLink();
client.connect().catch(() => undefined);
(window as any).__parsimonia = client; // for the browser tests and the curious: the page's protocol client
render(<App />, document.getElementById("app")!);
