import { decode, encode } from "@msgpack/msgpack";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Client, ProtocolError } from "../src/protocol/client.js";
import { ClockOffset } from "../src/protocol/clock.js";
import { assemble, fill, findLegal } from "../src/protocol/view.js";

/** A WebSocket stand-in: the test plays the server through `reply` and `push`. */
class FakeSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    FakeSocket.all.push(this);
    queueMicrotask(() => { this.readyState = 1; this.onopen?.(); });
  }
  send(bytes) { this.sent.push(decode(bytes)); }
  close() { this.readyState = 3; queueMicrotask(() => this.onclose?.({ code: 1000 })); }
  /** the server's frame */
  push(msg) { const b = encode(msg); this.onmessage?.({ data: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) }); }
  last(type) { return [...this.sent].reverse().find((m) => m.type === type); }
}

/** Answer hello and pings like a server whose clock reads `serverTime()`. */
function serve(socket, serverTime, more = () => {}) {
  const seen = new Set();
  return () => {
    for (const m of socket.sent) {
      if (seen.has(m)) continue;
      seen.add(m);
      if (m.type === "hello") socket.push({ type: "welcome", re: m.id, version: 2, versions: [2], server_time: serverTime(), limits: {}, games: ["parsimonia"] });
      else if (m.type === "ping") socket.push({ type: "pong", re: m.id, server_time: serverTime() });
      else more(m);
    }
  };
}

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };

/** A client connected to a fake server whose clock reads `serverTime()`: hello answered, welcome in. */
async function connectedClient(serverTime = () => 0) {
  const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0 });
  const connecting = c.connect();
  await flush();
  const s = FakeSocket.all[0];
  serve(s, serverTime)();
  await flush();
  await connecting;
  return { c, s };
}

beforeEach(() => { FakeSocket.all = []; vi.useFakeTimers(); });
afterEach(() => { vi.useRealTimers(); });

describe("requests and pushes", () => {
  it("matches replies by re, whatever order they come in, with pushes between", async () => {
    const { c, s } = await connectedClient(() => 1000);
    const a = c.request({ type: "tables" });
    const b = c.request({ type: "create", game: "parsimonia", seats: 2 });
    const [ta, tb] = [s.last("tables"), s.last("create")];
    expect(ta.id).not.toBe(tb.id);
    const events = [];
    c.on("event", (e) => events.push(e));
    s.push({ type: "created", re: tb.id, table: "t9" });
    s.push({ type: "event", table: "t9", seq: 1, time: 5, event: { type: "game_started", at: 5 } });
    s.push({ type: "tables", re: ta.id, tables: [] });
    expect((await b).table).toBe("t9");
    expect((await a).tables).toEqual([]);
    expect(events).toHaveLength(1);
  });

  it("rejects an error reply with its code and reason", async () => {
    const { c, s } = await connectedClient();
    const p = c.act("t1", { type: "bid", auction: 1, amount: 3 });
    const act = s.last("act");
    expect(act.command).toEqual({ type: "bid", auction: 1, amount: 3 });
    s.push({ type: "error", re: act.id, code: "illegal_action", reason: "bid_too_low", message: "no", table: "t1" });
    await expect(p).rejects.toMatchObject({ code: "illegal_action", reason: "bid_too_low" });
    await expect(p).rejects.toBeInstanceOf(ProtocolError);
  });
});

describe("joining", () => {
  it("sends a secret key with a join, the same one when the join of that table is sent again", async () => {
    const { c, s } = await connectedClient();
    const first = c.join("t1", "Ada").catch((e) => e);
    const sent = s.last("join");
    s.push({ type: "error", re: sent.id, code: "internal", message: "lost", table: "t1" });
    await first;
    const again = c.join("t1", "Ada");
    const resent = s.last("join");
    s.push({ type: "joined", re: resent.id, table: "t1", seat: 0, token: "T", game: "parsimonia", static: {} });
    await again;
    const other = c.join("t2", "Ada").catch((e) => e);
    const third = s.last("join");
    s.push({ type: "error", re: third.id, code: "table_full", message: "full", table: "t2" });
    await other;
    expect(sent.key).toMatch(/^[A-Za-z0-9_-]{24}$/); // SPEC.md: 16 to 64 characters
    expect(resent.key).toBe(sent.key);
    expect(third.key).not.toBe(sent.key);
  });
});

describe("resume after a drop", () => {
  it("reconnects with backoff and resumes the seat from the last seq, then watches again", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0, random: () => 0.5, backoffMs: [100, 1000] });
    const connected = c.connect();
    await flush();
    let s = FakeSocket.all[0];
    const server = serve(s, () => 0, (m) => {
      if (m.type === "join") s.push({ type: "joined", re: m.id, table: "t1", seat: 1, token: "TOK", game: "parsimonia", static: { cards: [] } });
      if (m.type === "watch") s.push({ type: "watching", re: m.id, table: "t2", game: "gift-of-tulips", static: {} });
    });
    server();
    await connected;
    const joining = c.join("t1", "Ada");
    server();
    await joining;
    const watching = c.watch("t2");
    server();
    await watching;
    s.push({ type: "event", table: "t1", seq: 7, time: 1, event: { type: "bid", at: 1 } });
    s.push({ type: "view", table: "t1", seq: 7, time: 1, seat: 1, view: { phase: "turns" }, private: {}, legal: [] });
    expect(c.tables.get("t1").lastSeq).toBe(7);

    const states = [];
    c.on("status", (st) => states.push(st.state));
    s.readyState = 3;
    s.onclose({ code: 1006 });
    expect(states).toEqual(["reconnecting"]);
    await vi.advanceTimersByTimeAsync(99); // backoff: 100 ms for the first retry
    expect(FakeSocket.all).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(FakeSocket.all).toHaveLength(2);
    s = FakeSocket.all[1];
    await flush();
    const server2 = serve(s, () => 0, (m) => {
      if (m.type === "resume") s.push({ type: "resumed", re: m.id, table: "t1", seat: 1, game: "parsimonia", static: { cards: [] } });
      if (m.type === "watch") s.push({ type: "watching", re: m.id, table: "t2", game: "gift-of-tulips", static: {} });
    });
    for (let i = 0; i < 5; i++) { server2(); await flush(); }
    expect(s.last("resume")).toMatchObject({ table: "t1", token: "TOK", last_seq: 7 });
    expect(s.last("watch")).toMatchObject({ table: "t2" });
    expect(states.at(-1)).toBe("open");
  });

  it("backs off longer after each failed attempt, up to the maximum", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0, random: () => 0.5, backoffMs: [100, 400] });
    c.connect().catch(() => {});
    await flush();
    const fail = () => { const s = FakeSocket.all.at(-1); s.readyState = 3; s.onclose({ code: 1006 }); };
    const delays = [];
    for (let i = 0; i < 4; i++) {
      fail();
      const before = FakeSocket.all.length;
      let waited = 0;
      while (FakeSocket.all.length === before) { await vi.advanceTimersByTimeAsync(10); waited += 10; }
      delays.push(waited);
      await flush();
    }
    expect(delays).toEqual([100, 200, 400, 400]);
    c.close();
  });

  it("sends a command again with its key once the seat is back, when the drop lost its answer", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0, random: () => 0.5, backoffMs: [100, 1000] });
    const connected = c.connect();
    await flush();
    let s = FakeSocket.all[0];
    const server = serve(s, () => 0, (m) => {
      if (m.type === "join") s.push({ type: "joined", re: m.id, table: "t1", seat: 0, token: "TOK", game: "parsimonia", static: {} });
    });
    server();
    await connected;
    const joining = c.join("t1", "Ada");
    server();
    await joining;
    const acting = c.act("t1", { type: "ready" });
    const first = s.last("act");
    s.readyState = 3;
    s.onclose({ code: 1006 }); // the answer never came
    await vi.advanceTimersByTimeAsync(101);
    s = FakeSocket.all[1];
    await flush();
    const server2 = serve(s, () => 0, (m) => {
      if (m.type === "resume") s.push({ type: "resumed", re: m.id, table: "t1", seat: 0, game: "parsimonia", static: {} });
      if (m.type === "act") s.push({ type: "ok", re: m.id, seq: 12, events: 1 });
    });
    for (let i = 0; i < 5; i++) { server2(); await flush(); }
    expect(await acting).toMatchObject({ type: "ok", seq: 12, events: 1 });
    const again = s.last("act");
    expect(again.key).toBe(first.key);
    expect(again.command).toEqual({ type: "ready" });
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });

  it("gives a seat up when the server says it is held elsewhere", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0 });
    const connected = c.connect();
    await flush();
    const s = FakeSocket.all[0];
    const server = serve(s, () => 0, (m) => {
      if (m.type === "resume") s.push({ type: "resumed", re: m.id, table: "t1", seat: 0, game: "parsimonia", static: {} });
    });
    server();
    await connected;
    const r = c.resume("t1", "TOK", 3);
    server();
    await r;
    const lost = [];
    c.on("lost", (t) => lost.push(t.lost));
    s.push({ type: "error", code: "not_seated", message: "seat moved", table: "t1" });
    expect(lost).toEqual(["taken_elsewhere"]);
  });
});

describe("history", () => {
  it("pages a table's past in order, each page asked from where the last one ended", async () => {
    const { c, s } = await connectedClient();
    const pages = { 0: { events: [1, 2], next: 2 }, 2: { events: [3] } };
    const answer = serve(s, () => 0, (m) => {
      if (m.type !== "history") return;
      const p = pages[m.after];
      const events = p.events.map((seq) => ({ seq, time: seq * 10, event: { type: "bid", at: seq * 10 } }));
      s.push({ type: "history", re: m.id, table: m.table, last_seq: 3, events, ...(p.next ? { next: p.next } : {}) });
    });
    const seen = [];
    const reading = (async () => { for await (const e of c.history("t1")) seen.push(e); })();
    for (let i = 0; i < 5; i++) { answer(); await flush(); }
    await reading;
    expect(seen.map((e) => [e.seq, e.time, e.table, e.type])).toEqual([[1, 10, "t1", "event"], [2, 20, "t1", "event"],
      [3, 30, "t1", "event"]]);
    expect(s.sent.filter((m) => m.type === "history").map((m) => m.after)).toEqual([0, 2]);
  });
});

describe("clock offset", () => {
  it("takes server_time minus the midpoint of the fastest round trip", () => {
    const k = new ClockOffset();
    k.sample(1000, 1100, 51050); // rtt 100: offset 50000
    k.sample(2000, 2010, 52008); // rtt 10: offset 50003
    k.sample(3000, 3400, 53900); // rtt 400: ignored
    expect(k.rtt).toBe(10);
    expect(k.offset).toBe(50003);
    expect(k.lastRtt).toBe(400);
    expect(k.remaining(50003 + 4000 + 1500, 4000)).toBe(1500);
    expect(k.remaining(0, 4000)).toBe(0);
  });

  it("is measured from ping/pong by the client", async () => {
    let local = 0;
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => local });
    const connected = c.connect();
    await flush();
    const s = FakeSocket.all[0];
    const hello = s.last("hello");
    s.push({ type: "welcome", re: hello.id, version: 2, versions: [2], server_time: 9000, limits: {}, games: [] });
    await flush();
    const ping = s.last("ping");
    local = 40;
    s.push({ type: "pong", re: ping.id, server_time: 10020 });
    await connected;
    expect(c.clock.offset).toBe(10000); // 10020 - (0 + 40) / 2
    expect(c.serverNow()).toBe(10040);
    expect(c.serverRttMs).toBe(null); // the server had not timed a round trip yet
  });

  it("takes the connection's round trip as the server timed it from a pong, and forgets it with the connection", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0, backoffMs: [100, 1000], random: () => 0.5 });
    const connected = c.connect();
    await flush();
    const s = FakeSocket.all[0];
    s.push({ type: "welcome", re: s.last("hello").id, version: 2, versions: [2], server_time: 9000, limits: {}, games: [] });
    await flush();
    s.push({ type: "pong", re: s.last("ping").id, server_time: 9000, rtt_ms: 31, rtt_last_ms: 28 });
    await connected;
    await flush();
    expect([c.serverRttMs, c.serverRttLastMs]).toEqual([31, 28]);
    s.readyState = 3;
    s.onclose({ code: 1006 });
    await vi.advanceTimersByTimeAsync(101);
    const s2 = FakeSocket.all[1];
    await flush();
    s2.push({ type: "welcome", re: s2.last("hello").id, version: 2, versions: [2], server_time: 9100, limits: {}, games: [] });
    await flush();
    expect([c.serverRttMs, c.serverRttLastMs]).toEqual([null, null]);
  });
});

describe("clock offset after a server restart", () => {
  it("forgets the old connection's samples at a new welcome, before any pong", async () => {
    let local = 0;
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => local, random: () => 0.5, backoffMs: [100, 1000] });
    const connected = c.connect();
    await flush();
    serve(FakeSocket.all[0], () => 50000 + local)(); // offset 50000, round trips of 0 ms: the best there are
    await connected;
    await vi.advanceTimersByTimeAsync(300);
    serve(FakeSocket.all[0], () => 50000 + local)();
    expect(c.serverNow()).toBe(50000 + local);
    // the server stops for 10 s and its clock resumes where it stopped: server time is 10 s behind the old offset
    const s = FakeSocket.all[0];
    s.readyState = 3;
    s.onclose({ code: 1006 });
    local += 10_000;
    await vi.advanceTimersByTimeAsync(101);
    const s2 = FakeSocket.all[1];
    await flush();
    const hello = s2.last("hello");
    s2.push({ type: "welcome", re: hello.id, version: 2, versions: [2], server_time: 40000 + local, limits: {}, games: [] });
    await flush();
    expect(c.serverNow()).toBe(40000 + local); // at once, not after the old samples age out
    expect(c.clock.remaining(40000 + local + 10_000, local)).toBe(10_000);
  });
});

describe("view assembly", () => {
  it("is static ∪ view ∪ private ∪ {seat}, later parts winning", () => {
    const v = assemble({ cards: [1], config: {} }, { phase: "turns", players: [] }, { hand: [3, 4] }, 2);
    expect(v).toEqual({ cards: [1], config: {}, phase: "turns", players: [], hand: [3, 4], seat: 2 });
    expect(assemble({}, { phase: "x" }, undefined, null)).toEqual({ phase: "x", seat: null });
  });

  it("keeps the picture a table's pushes built", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0 });
    const connected = c.connect();
    await flush();
    const s = FakeSocket.all[0];
    const server = serve(s, () => 0, (m) => {
      if (m.type === "join") s.push({ type: "joined", re: m.id, table: "t1", seat: 0, token: "T", game: "gift-of-tulips", static: { turns_each: 7 } });
    });
    server();
    await connected;
    const j = c.join("t1", "Ada");
    server();
    await j;
    s.push({ type: "view", table: "t1", seq: 4, time: 9, seat: 0, view: { phase: "turns", seats: [] }, private: { drawn: 12 }, legal: [{ type: "keep" }] });
    expect(c.picture("t1")).toEqual({ turns_each: 7, phase: "turns", seats: [], drawn: 12, seat: 0 });
    s.push({ type: "view", table: "t1", seq: 2, time: 5, seat: 0, view: { phase: "setup" }, private: {}, legal: [] });
    expect(c.picture("t1").phase).toBe("turns"); // an older view does not replace a newer one
  });

  it("fills legal templates: ranges take a value or their minimum", () => {
    const legal = [{ type: "bid", auction: 3, amount: { min: 8, max: 100 } }, { type: "ready" }];
    expect(findLegal(legal, "bid", { auction: 3 })).toHaveLength(1);
    expect(findLegal(legal, "bid", { auction: 4 })).toHaveLength(0);
    expect(fill(legal[0])).toEqual({ type: "bid", auction: 3, amount: 8 });
    expect(fill(legal[0], { amount: 20 })).toEqual({ type: "bid", auction: 3, amount: 20 });
  });
});

describe("a cluster's moved", () => {
  it("follows moved to the worker holding the table and sends the request again there", async () => {
    const { c, s } = await connectedClient();
    const joining = c.join("w2-t1", "Ada");
    const first = s.last("join");
    s.push({ type: "error", re: first.id, code: "moved", message: "held by worker 2", url: "ws://y:8767/" });
    await flush();
    const there = FakeSocket.all[1];
    expect(there.url).toBe("ws://y:8767/");
    serve(there, () => 0)();
    await flush();
    const again = there.last("join");
    expect([again.table, again.key]).toEqual(["w2-t1", first.key]); // the same join, with the same key
    there.push({ type: "joined", re: again.id, table: "w2-t1", game: "parsimonia", seat: 0, token: "k", static: {} });
    expect((await joining).seat).toBe(0);
    expect(c.url).toBe("ws://y:8767/");
  });

  it("follows moved on a reconnect: the seat is resumed on the worker holding it", async () => {
    const { c, s } = await connectedClient();
    const joining = c.join("w1-t1", "Ada");
    const j = s.last("join");
    s.push({ type: "joined", re: j.id, table: "w1-t1", game: "parsimonia", seat: 1, token: "tok", static: {} });
    await joining;
    s.push({ type: "event", table: "w1-t1", seq: 7, time: 5, event: { type: "game_started", at: 5 } });
    c.drop(); // worker 1 killed: the shared port's other worker answers the resume
    await vi.advanceTimersByTimeAsync(2000);
    const shared = FakeSocket.all[1];
    expect(shared.url).toBe("ws://x/");
    serve(shared, () => 0)();
    await flush();
    const r = shared.last("resume");
    shared.push({ type: "error", re: r.id, code: "moved", message: "held by worker 1", url: "ws://w1:8766/" });
    await flush();
    const there = FakeSocket.all[2];
    expect(there.url).toBe("ws://w1:8766/");
    serve(there, () => 0)();
    await flush();
    const again = there.last("resume");
    expect([again.table, again.token, again.last_seq]).toEqual(["w1-t1", "tok", 7]);
    there.push({ type: "resumed", re: again.id, table: "w1-t1", seat: 1, events: [], static: {} });
    await flush();
    expect(c.state).toBe("open");
    expect(c.tables.get("w1-t1").lost).toBeNull();
  });

  it("loses a seat moved again and again on a reconnect, after the bound", async () => {
    const { c, s } = await connectedClient();
    const joining = c.join("w1-t1", "Ada");
    const j = s.last("join");
    s.push({ type: "joined", re: j.id, table: "w1-t1", game: "parsimonia", seat: 0, token: "tok", static: {} });
    await joining;
    const lost = [];
    c.on("lost", (t) => lost.push(t.table));
    c.drop();
    await vi.advanceTimersByTimeAsync(2000);
    for (let i = 0; i <= 4; i++) {
      const now = FakeSocket.all[FakeSocket.all.length - 1];
      serve(now, () => 0)();
      await flush();
      const r = now.last("resume");
      now.push({ type: "error", re: r.id, code: "moved", message: "elsewhere", url: `ws://w${i}/` });
      await flush();
    }
    expect(FakeSocket.all).toHaveLength(6); // the first, the reconnect and 4 moves: no fifth
    expect(lost).toEqual(["w1-t1"]);
    expect(c.tables.get("w1-t1").lost).toBe("moved");
  });

  it("gives up after a bounded number of moves in a row", async () => {
    const { c } = await connectedClient();
    const watching = c.watch("w2-t1");
    watching.catch(() => {});
    for (let i = 0; i <= 4; i++) {
      const s = FakeSocket.all[FakeSocket.all.length - 1];
      serve(s, () => 0)();
      await flush();
      const w = s.last("watch");
      s.push({ type: "error", re: w.id, code: "moved", message: "elsewhere", url: `ws://w${i}/` });
      await flush();
    }
    await expect(watching).rejects.toMatchObject({ code: "moved" });
  });
});

describe("unavailable, a cluster's worker restarting", () => {
  it("sends a request answered unavailable again after a doubling backoff, one log line each", async () => {
    const lines = [];
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0, random: () => 0.5, log: (l) => lines.push(l) });
    const connecting = c.connect();
    await flush();
    const s = FakeSocket.all[0];
    serve(s, () => 0)();
    await connecting;
    const joining = c.join("t1", "Ada");
    const first = s.last("join");
    s.push({ type: "error", re: first.id, code: "unavailable", message: "not yet read the directory", table: "t1" });
    await flush();
    await vi.advanceTimersByTimeAsync(99);
    expect(s.sent.filter((m) => m.type === "join")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const second = s.last("join");
    expect(second.id).not.toBe(first.id);
    expect(second.key).toBe(first.key); // the same join
    s.push({ type: "error", re: second.id, code: "unavailable", message: "not yet read the directory", table: "t1" });
    await flush();
    await vi.advanceTimersByTimeAsync(200);
    const third = s.last("join");
    expect(third.id).not.toBe(second.id);
    s.push({ type: "joined", re: third.id, table: "t1", seat: 0, token: "T", game: "parsimonia", static: {} });
    expect((await joining).seat).toBe(0);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe("join at ws://x/ answered unavailable: not yet read the directory; trying again in 0.1 s (try 1)");
  });

  it("resumes a seat answered unavailable on a reconnect instead of losing it", async () => {
    const c = new Client("ws://x/", { WebSocket: FakeSocket, now: () => 0, random: () => 0.5, log: () => {} });
    const connecting = c.connect();
    await flush();
    serve(FakeSocket.all[0], () => 0)();
    await connecting;
    const resuming = c.resume("t1", "TOK", 3);
    const s = FakeSocket.all[0];
    s.push({ type: "resumed", re: s.last("resume").id, table: "t1", seat: 1, game: "parsimonia", static: {} });
    await resuming;
    const lost = [];
    c.on("lost", (t) => lost.push(t.lost));
    c.drop();
    await vi.advanceTimersByTimeAsync(400);
    const again = FakeSocket.all[1];
    serve(again, () => 0)();
    await flush();
    for (let i = 0; i < 3; i++) {
      const r = again.last("resume");
      again.push({ type: "error", re: r.id, code: "unavailable", message: "restarting", table: "t1" });
      await vi.advanceTimersByTimeAsync(1000);
    }
    const r = again.last("resume");
    expect(again.sent.filter((m) => m.type === "resume")).toHaveLength(4);
    again.push({ type: "resumed", re: r.id, table: "t1", seat: 1, game: "parsimonia", static: {} });
    await flush();
    expect(c.state).toBe("open");
    expect(lost).toEqual([]);
    expect(c.tables.get("t1").lost).toBeNull();
  });

  it("gives up once the waits add up to the bound, and takes no_such_table as final", async () => {
    const { c, s } = await connectedClient();
    c.log = () => {};
    const listing = c.listTables();
    listing.catch(() => {});
    let asked = 0;
    for (let waited = 0; waited < 60000; waited += 50) {
      const mine = s.sent.filter((m) => m.type === "tables");
      while (asked < mine.length) {
        s.push({ type: "error", re: mine[asked].id, code: "unavailable", message: "away" });
        asked += 1;
      }
      await vi.advanceTimersByTimeAsync(50);
    }
    await expect(listing).rejects.toMatchObject({ code: "unavailable" });
    expect(asked).toBeGreaterThan(4);
    expect(asked).toBeLessThan(15);
    const joining = c.join("t404", "Ada");
    s.push({ type: "error", re: s.last("join").id, code: "no_such_table", message: "none", table: "t404" });
    await expect(joining).rejects.toMatchObject({ code: "no_such_table" });
    expect(s.sent.filter((m) => m.type === "join")).toHaveLength(1);
  });
});
