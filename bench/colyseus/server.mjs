// Baseline: the storm benchmark's bare protocol in a Colyseus room, the server people would pick instead of ours.
//
// One room per table (maxClients 6). Matchmaking over HTTP replaces the bare protocol's hello, create and join:
// a seat gets its reservation from POST /matchmake/create/table or /matchmake/joinById/<roomId>, connects to
// the room's WebSocket, and after the join handshake the room sends it `joined` with its seat. Then, as in
// bench/bare.py, for each `act` command (auction, bid, close): a trivial check, `ok` (or `error`) to the
// sender, and the table's `event` broadcast with the room's own broadcast(), which encodes it once for all
// its clients. No state, rules, timers or history. Every message is a Colyseus ROOM_DATA message whose type
// is the bare message's type and whose payload is the bare message itself.
//
//     node bench/colyseus/server.mjs --port 9003

import { parseArgs } from "node:util";

import { Room, Server } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";

const epoch = performance.now();
const now = () => Math.floor(performance.now() - epoch); // server time in ms, as the bare servers count it

class Table extends Room {
  maxClients = 6;
  seats = new Map(); // sessionId -> seat
  seq = 0;
  nextAuction = 1;

  onCreate() {
    this.onMessage("act", (client, msg) => this.act(client, msg));
  }

  onJoin(client, options) {
    const seat = this.seats.size;
    this.seats.set(client.sessionId, seat);
    // held by Colyseus until the client acknowledges the join, then sent
    client.send("joined", { type: "joined", re: options?.re ?? null, table: this.roomId, seat,
                            token: `${this.roomId}-${seat}` });
  }

  act(client, msg) {
    const re = msg?.id ?? null;
    const seat = this.seats.get(client.sessionId);
    const cmd = msg?.command ?? {};
    const at = now();
    let event;
    if (cmd.type === "bid") {
      if (!Number.isInteger(cmd.amount) || cmd.amount <= 0 || !Number.isInteger(cmd.auction)) {
        client.send("error", { type: "error", re, code: "illegal_action", reason: "bid_too_low",
                               message: "a bid must be a positive integer" });
        return;
      }
      event = { type: "bid", at, auction: cmd.auction, seat, amount: cmd.amount, closes_at: at };
    } else if (cmd.type === "auction") {
      const id = this.nextAuction++;
      event = { type: "auction_opened", at, auction: {
        id, seller: seat, starter: seat, lot: [cmd.card ?? null], rule: "seller_picks",
        start_price: cmd.start_price ?? 0, bids: [], high_bidder: null, high: null } };
    } else if (cmd.type === "close") {
      event = { type: "auction_closed", at, auction: cmd.auction ?? null, outcome: "no_sale", winner: null,
                price: 0, reason: "seller" };
    } else {
      client.send("error", { type: "error", re, code: "unknown_command",
                             message: `the bare server does not do ${JSON.stringify(cmd.type)}` });
      return;
    }
    this.seq += 1;
    client.send("ok", { type: "ok", re }); // the ok first, as ours does
    this.broadcast("event", { type: "event", table: this.roomId, seq: this.seq, time: at, event });
  }
}

const { values } = parseArgs({ options: { host: { type: "string", default: "127.0.0.1" },
                                           port: { type: "string", default: "9003" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`colyseus baseline: --port must be a port number, not ${JSON.stringify(values.port)}`);
  process.exit(2);
}
// SIGTERM (how the bench stops it) ends the process at once, as for the other baselines
const server = new Server({ transport: new WebSocketTransport(), gracefullyShutdown: false, greet: false });
server.define("table", Table);
await server.listen(port, values.host);
console.log(`bare colyseus server on ws://${values.host}:${port}`);
