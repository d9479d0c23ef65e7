// The replay page's entry (replay.html, served at /replay/<table>): the table's id from the address, the page's
// one connection to the server it was served from.
import { render } from "preact";
import { client } from "../app/conn";
import { ReplayPage } from "./page";
import { tableOf } from "./steps";
import "../style.css";
import "./replay.css";

const table = tableOf(location.pathname);
client.connect().catch(() => undefined);
(window as any).__parsimonia = client; // for the browser tests
render(
  <>
    <header class="top"><a href="/" class="brand">Parsimonia</a><span>Replay</span></header>
    {table ? <ReplayPage table={table} /> : <main class="page"><p role="alert" class="problem">No table named: a replay is at /replay/TABLE.</p></main>}
  </>,
  document.getElementById("app")!,
);
