// The organiser's page: the admin token (kept in sessionStorage), tables and connections, pause / unpause /
// close a table, kick a connection, the server's figures from /healthz and /metrics, and the ladder.
import { useEffect, useState } from "preact/hooks";
import { adminToken, client, clientName, errorText } from "./conn";
import { finishedKey, Ladder } from "./ladder";

/** A few lines of the Prometheus text format: metric name (with labels) -> value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([^\s{]+(?:\{[^}]*\})?)\s+(\S+)/.exec(line);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}

function sumOf(metrics: Map<string, number>, name: string): number | null {
  let total: number | null = null;
  for (const [k, v] of metrics) if (k === name || k.startsWith(name + "{")) total = (total ?? 0) + v;
  return total;
}

export function Admin() {
  const [token, setToken] = useState<string | null>(adminToken.get());
  const [typed, setTyped] = useState("");
  const [tables, setTables] = useState<Record<string, any>[]>([]);
  const [conns, setConns] = useState<Record<string, any>[]>([]);
  const [health, setHealth] = useState<Record<string, any> | null>(null);
  const [cluster, setCluster] = useState<ClusterShape | null>(null); // GET /cluster; null: a lone server
  const [figures, setFigures] = useState<Map<string, number>>(new Map());
  const [message, setMessage] = useState<string | null>(null);

  const refresh = async () => {
    if (!token) return;
    try {
      setTables(await client.listTables());
      setConns(((await client.admin(token, "connections")) as any).connections ?? []);
      setHealth(await (await fetch("/healthz", { cache: "no-store" })).json());
      const workers = await fetch("/cluster", { cache: "no-store" }); // 404 from a server that is no cluster's worker
      setCluster(workers.ok ? await workers.json() : null);
      setFigures(parseMetrics(await (await fetch("/metrics", { cache: "no-store" })).text()));
    } catch (e: any) {
      if (e?.code === "forbidden") { adminToken.forget(); setToken(null); setMessage(`That token was refused: ${String(e.message).replace(/^forbidden: /, "")}.`); }
      else setMessage(errorText(e));
    }
  };
  useEffect(() => {
    refresh();
    const id = setInterval(refresh, 2000);
    return () => clearInterval(id);
  }, [token]);

  const run = async (action: string, fields: Record<string, any>, done: string) => {
    if (!token) return;
    try {
      await client.admin(token, action, fields);
      setMessage(done);
      refresh();
    } catch (e) { setMessage(errorText(e)); }
  };

  if (!token) {
    return (
      <main class="page admin">
        <h2>Organiser</h2>
        {message ? <p role="alert">{message}</p> : null}
        <form class="panel inline" onSubmit={(e) => { e.preventDefault(); if (typed.trim()) { adminToken.set(typed.trim()); setToken(typed.trim()); setMessage(null); } }}>
          <label>Admin token <input type="password" autoComplete="off" value={typed} onInput={(e) => setTyped((e.target as HTMLInputElement).value)} /></label>
          <button type="submit">Open</button>
        </form>
        <p class="small">The token stays in this tab only (sessionStorage). <a href="#">Lobby</a></p>
      </main>
    );
  }
  const fig = (name: string) => sumOf(figures, name);
  return (
    <main class="page admin">
      <header class="table-head"><h2>Organiser</h2><a href="#">Lobby</a>
        <button onClick={() => { adminToken.forget(); setToken(null); }}>Forget the token</button></header>
      {message ? <p role="status" class="notice">{message}</p> : null}
      <section class="panel figures" aria-label="server figures">
        <h3>Server</h3>
        {cluster ? <p class="small" data-testid="cluster-note">{clusterNote(cluster)}</p> : null}
        <dl>
          <dt>status</dt><dd data-testid="health">{health?.status ?? "?"}</dd>
          <dt>uptime</dt><dd>{health ? `${Math.round(health.uptime_ms / 1000)} s` : "?"}</dd>
          <dt>tables</dt><dd>{health?.tables ?? "?"}</dd>
          <dt>connections</dt><dd>{health?.connections ?? "?"}</dd>
          <dt>commands</dt><dd data-testid="metric-commands">{fig("parsimonia_commands_total") ?? "–"}</dd>
          <dt>errors</dt><dd>{fig("parsimonia_protocol_errors_total") ?? "–"}</dd>
          <dt>table steps</dt><dd>{fig("parsimonia_table_step_seconds_count") ?? "–"}</dd>
          <dt>slow clients dropped</dt><dd>{fig("parsimonia_slow_clients_dropped_total") ?? "–"}</dd>
        </dl>
      </section>
      <section class="panel" aria-label="tables">
        <h3>Tables</h3>
        <table>
          <thead><tr><th>table</th><th>game</th><th>seats</th><th>state</th><th></th></tr></thead>
          <tbody>{tables.map((t) => (
            <tr key={t.table} data-table={t.table}>
              <td>{t.table}</td><td>{t.game}</td><td>{t.taken}/{t.seats}</td><td>{t.state}</td>
              <td class="actions">
                {t.state !== "over" ? <>
                  {/* the clocks can be paused only while the game runs, and unpaused only while paused */}
                  <button class="pause" disabled={t.state !== "running" || t.paused} onClick={() => run("pause", { table: t.table }, `Paused ${t.table}.`)}>Pause {t.table}</button>
                  <button class="unpause" disabled={!t.paused} onClick={() => run("unpause", { table: t.table }, `Clocks of ${t.table} run again.`)}>Unpause {t.table}</button>
                  <button class="close danger" onClick={() => { if (confirm(`Close table ${t.table} now? Nobody wins.`)) run("close", { table: t.table }, `Closed ${t.table}.`); }}>Close {t.table}</button>
                </> : null}
                <a class="button" href={`#watch/${t.table}`}>Watch</a>
                {t.paused ? <span class="tag" data-testid="table-paused">paused</span> : null}
              </td>
            </tr>))}</tbody>
        </table>
      </section>
      <Ladder finished={finishedKey(tables)} title={(g) => client.welcome?.display?.[g]?.title ?? g} />
      <section class="panel" aria-label="connections">
        <h3>Connections ({conns.length})</h3>
        <table>
          <thead><tr><th>id</th><th>peer</th><th>client</th><th>players</th><th>follows</th><th title="round trip as the server times it: smoothed (last)">round trip</th><th></th></tr></thead>
          <tbody>{conns.map((c) => (
            <tr key={c.conn} data-conn={c.conn}>
              <td>{c.conn}</td><td>{c.peer}</td><td>{c.client}</td>
              <td class="players">{(c.seats ?? []).map((s: any) => `${s.name ?? "?"} (${s.table}#${s.seat})`).join(", ")}</td><td>{(c.tables ?? []).join(" ")}</td>
              <td class="rtt">{typeof c.rtt_ms === "number" ? `${c.rtt_ms} ms (${c.rtt_last_ms ?? c.rtt_ms})` : "–"}</td>
              <td>{c.client === clientName ? <span class="tag" data-testid="own-connection" title="the connection of this page: kicking it would cut off your own page">this page</span>
                : <button class="kick" onClick={() => run("kick", { conn: c.conn }, `Kicked connection ${c.conn}.`)}>Kick {c.conn}</button>}</td>
            </tr>))}</tbody>
        </table>
      </section>
    </main>
  );
}

/** GET /cluster, as far as the Server panel reads it. */
type ClusterShape = { worker: number; workers: { tables: number; connections: number }[] };

/** What the Server panel's figures are on a cluster: those of the one worker that answered the page. */
export function clusterNote(cluster: ClusterShape): string {
  const tables = cluster.workers.reduce((n, w) => n + w.tables, 0);
  const connections = cluster.workers.reduce((n, w) => n + w.connections, 0);
  return `Worker ${cluster.worker} of ${cluster.workers.length} answered: the figures below are its own. ` +
    `All workers: ${tables} tables, ${connections} connections.`;
}
