// A Parsimonia protocol client (protocol/SPEC.md) for the browser and for Node: one WebSocket, msgpack
// frames, requests matched to replies by `re`, pushes (`event`, `view`, `bulletin`, `error`) to listeners,
// and after a dropped connection a reconnect with backoff that resumes every seat with its token and the
// last `seq` received, and watches again every watched table. Server time comes from ping/pong. A request
// answered `unavailable` (a cluster's worker restarting) is sent again after a backoff, within a bound.
//
// In a browser the global WebSocket is used; under Node 20 (which has none) pass one, e.g.
// `new Client(url, { WebSocket: (await import("ws")).WebSocket })`.

import { decode, encode } from "@msgpack/msgpack";
import { ClockOffset } from "./clock.js";
import { assemble } from "./view.js";

export const PROTOCOL_VERSION = 2;
/** `moved` answers followed in a row: a cluster's workers send a table's requests to the worker holding it. */
export const MAX_REDIRECTS = 4;
/** `unavailable` answers: the same request again after a wait doubling from the first to the second (each times
 * 0.75-1.25 at random), until the waits add up to `UNAVAILABLE_GIVE_UP_MS`; then the error stands. */
export const UNAVAILABLE_BACKOFF_MS = [100, 5000];
export const UNAVAILABLE_GIVE_UP_MS = 30000;

/** An `error` reply: `code` is stable, `reason` is the game's own code for `illegal_action`, `url` the worker
 * holding the table for `moved`. */
export class ProtocolError extends Error {
  /**
   * @param {string} code @param {string} message @param {string | undefined} [reason] @param {string} [table]
   * @param {string} [url]
   */
  constructor(code, message, reason, table, url) {
    super(`${code}${reason ? ` (${reason})` : ""}: ${message}`);
    this.name = "ProtocolError";
    this.code = code;
    this.reason = reason;
    this.table = table;
    this.url = url;
  }
}

/**
 * @typedef {{
 *   table: string, game: string, role: "seat" | "watch", seat: number | null, token: string | null,
 *   static: Record<string, any>, lastSeq: number, view: Record<string, any> | null,
 *   private: Record<string, any> | null, legal: Record<string, any>[], time: number, viewSeq: number,
 *   lost: string | null,
 * }} TableState
 */

/**
 * @typedef {{
 *   WebSocket?: any, client?: string, backoffMs?: [number, number], pingMs?: number,
 *   now?: () => number, reconnect?: boolean, random?: () => number, log?: (line: string) => void,
 *   unavailableBackoffMs?: [number, number], unavailableGiveUpMs?: number,
 * }} ClientOptions
 */

export class Client {
  /** @param {string} url ws://host:port/ @param {ClientOptions} [options] */
  constructor(url, options = {}) {
    this.url = url;
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket; // checked when connecting
    this.clientName = options.client ?? "parsimonia-web/0.1";
    this.backoffMs = options.backoffMs ?? [250, 5000];
    this.pingMs = options.pingMs ?? 5000;
    this.now = options.now ?? (() => (globalThis.performance ? performance.now() : Date.now()));
    this.random = options.random ?? Math.random;
    this.autoReconnect = options.reconnect ?? true;
    /** one line for a person: a request answered `unavailable`, sent again */
    this.log = options.log ?? ((/** @type {string} */ line) => console.warn(line));
    this.unavailableBackoffMs = options.unavailableBackoffMs ?? UNAVAILABLE_BACKOFF_MS;
    this.unavailableGiveUpMs = options.unavailableGiveUpMs ?? UNAVAILABLE_GIVE_UP_MS;
    this.clock = new ClockOffset();
    /** @type {number | null} this connection's round trip in ms as the server times it (its own pings), smoothed */
    this.serverRttMs = null;
    /** @type {number | null} the last round trip the server timed */
    this.serverRttLastMs = null;
    /** @type {Map<string, TableState>} */
    this.tables = new Map();
    /** @type {Map<string, boolean>} bulletin topics followed */
    this.topics = new Map();
    /** @type {Map<string, string>} the key each table's join carries, kept for the same join sent again */
    this.joinKeys = new Map();
    /** @type {Map<number, {resolve: (m: any) => void, reject: (e: Error) => void}>} */
    this.pending = new Map();
    /** @type {Map<string, Set<(payload: any) => void>>} */
    this.listeners = new Map();
    this.nextId = 1;
    /** @type {any} */
    this.socket = null;
    this.state = "closed"; // "connecting" | "open" | "reconnecting" | "closed"
    this.attempt = 0;
    this.restoreMoves = 0; // `moved` followed in a row while taking the seats and watches back
    this.stopped = false;
    /** @type {Record<string, any> | null} */
    this.welcome = null;
    /** @type {any} */
    this.pingTimer = null;
    /** @type {any} */
    this.retryTimer = null;
    /** @type {{resolve: (w: any) => void, reject: (e: Error) => void}[]} callers waiting for a session */
    this.waiters = [];
  }

  // ---- listeners ----

  /**
   * Listen to "status", "welcome", "event", "view", "bulletin", "error", "table" (a TableState changed),
   * "lost" (a seat or watch that cannot come back). Returns a function that stops listening.
   * @param {string} kind @param {(payload: any) => void} fn
   */
  on(kind, fn) {
    if (!this.listeners.has(kind)) this.listeners.set(kind, new Set());
    this.listeners.get(kind)?.add(fn);
    return () => { this.listeners.get(kind)?.delete(fn); };
  }

  /** @param {string} kind @param {any} payload */
  emit(kind, payload) {
    for (const fn of [...(this.listeners.get(kind) ?? [])]) {
      try { fn(payload); } catch (e) { console.error(e); }
    }
  }

  /** @param {string} state */
  setState(state) {
    this.state = state;
    this.emit("status", { state, attempt: this.attempt });
  }

  // ---- connection ----

  /** Connect and say hello; resolves with `welcome` (after any reconnect in progress). Later drops
   * reconnect on their own, unless `reconnect: false` was given. */
  connect() {
    this.stopped = false;
    if (this.state === "open" && this.welcome) return Promise.resolve(this.welcome);
    /** @type {Promise<Record<string, any>>} */
    const p = new Promise((resolve, reject) => { this.waiters.push({ resolve, reject }); });
    if (this.state === "closed") this.openSocket();
    return p;
  }

  /** @param {boolean} ok @param {any} value */
  settle(ok, value) {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) (ok ? w.resolve : w.reject)(value);
  }

  openSocket() {
    this.setState(this.attempt === 0 ? "connecting" : "reconnecting");
    let socket;
    try {
      if (!this.WebSocket) throw new Error("no WebSocket here: pass one, e.g. { WebSocket } from the ws package");
      socket = new this.WebSocket(this.url);
    } catch (e) {
      this.setState("closed");
      this.settle(false, e);
      return;
    }
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onopen = async () => {
      try {
        const welcome = await this.sendRetrying({ type: "hello", version: PROTOCOL_VERSION, client: this.clientName });
        this.welcome = welcome;
        this.clock.seed(this.now(), welcome.server_time);
        this.serverRttMs = this.serverRttLastMs = null; // a new connection: its own round trip, from its first pong
        this.attempt = 0;
        this.startPings();
        await this.restore();
        this.setState("open");
        this.emit("welcome", welcome);
        this.settle(true, welcome);
      } catch (e) {
        // a table taken back elsewhere on a cluster: connect there and take them back again (restore)
        if (e instanceof ProtocolError && e.code === "moved" && e.url && this.socket === socket) {
          this.leaveSocket(e.url, "moved to another worker");
          this.openSocket();
        }
        // otherwise the socket closed under us: onclose retries (or gives up and rejects the waiters)
      }
    };
    socket.onmessage = (/** @type {{data: any}} */ msg) => this.receive(msg.data);
    socket.onerror = () => { /* onclose follows */ };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.stopPings();
      for (const [, p] of this.pending) p.reject(new ProtocolError("disconnected", "the connection was lost"));
      this.pending.clear();
      if (this.stopped || !this.autoReconnect) {
        this.setState("closed");
        this.settle(false, new ProtocolError("disconnected", "the connection is closed"));
        return;
      }
      this.attempt += 1;
      this.setState("reconnecting");
      const [lo, hi] = this.backoffMs;
      const delay = Math.min(hi, lo * 2 ** (this.attempt - 1)) * (0.75 + 0.5 * this.random());
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (!this.stopped) this.openSocket();
      }, delay);
    };
  }

  /** After a reconnect: resume every seat from its last seq, watch every watched table, follow topics. On a
   * cluster, a `moved` for the first table is followed (throwing it to `openSocket`; at most `MAX_REDIRECTS` in
   * a row): a worker restarted may be reached again through another; one held on yet another worker is lost. */
  async restore() {
    let taken = 0;
    for (const t of [...this.tables.values()]) {
      if (t.lost) continue;
      try {
        if (t.role === "seat" && t.token) {
          const r = await this.sendRetrying({ type: "resume", table: t.table, token: t.token, last_seq: t.lastSeq });
          t.seat = r.seat;
          t.static = r.static ?? t.static;
        } else if (t.role === "watch") {
          const r = await this.sendRetrying({ type: "watch", table: t.table });
          t.static = r.static ?? t.static;
        }
        taken += 1;
        this.emit("table", t);
      } catch (e) {
        const follow = e instanceof ProtocolError && e.code === "moved" && e.url && taken === 0;
        if (follow && this.restoreMoves < MAX_REDIRECTS) {
          this.restoreMoves += 1;
          throw e;
        }
        if (e instanceof ProtocolError && e.code !== "disconnected") this.lose(t, e.code);
        else throw e;
      }
    }
    this.restoreMoves = 0;
    for (const topic of this.topics.keys()) {
      const b = await this.sendRetrying({ type: "bulletin", topic, follow: true });
      this.emit("bulletin", b);
    }
  }

  /** Stop for good: no reconnect. */
  close() {
    this.stopped = true;
    this.stopPings();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const s = this.socket;
    if (s) {
      try { s.close(1000); } catch { /* already closing */ }
    }
    this.socket = null;
    this.setState("closed");
    this.settle(false, new ProtocolError("disconnected", "closed by the client"));
  }

  /** Drop the socket as a network failure would (for tests and "reconnect now" buttons). */
  drop() {
    try { this.socket?.close(4000); } catch { /* ignore */ }
  }

  startPings() {
    this.stopPings();
    const ping = () => {
      const t0 = this.now();
      this.send({ type: "ping" }).then((pong) => {
        this.clock.sample(t0, this.now(), pong.server_time);
        if (typeof pong.rtt_ms === "number") {
          this.serverRttMs = pong.rtt_ms;
          this.serverRttLastMs = typeof pong.rtt_last_ms === "number" ? pong.rtt_last_ms : pong.rtt_ms;
        }
        this.emit("clock", this.clock);
      }, () => { /* dropped: the next connection pings again */ });
    };
    ping();
    setTimeout(() => { if (this.state === "open") ping(); }, 300);
    this.pingTimer = setInterval(ping, this.pingMs);
  }

  stopPings() {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  // ---- frames ----

  /**
   * Send a message with a fresh `id`; resolves with its reply, rejects with a ProtocolError.
   * @param {Record<string, any>} message @returns {Promise<Record<string, any>>}
   */
  send(message) {
    const s = this.socket;
    if (!s || s.readyState !== 1) return Promise.reject(new ProtocolError("disconnected", "not connected"));
    const id = this.nextId;
    this.nextId = this.nextId >= 2147483647 ? 1 : this.nextId + 1;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      s.send(encode({ ...message, id }));
    });
  }

  /**
   * `send`, and again after a backoff while the answer is `unavailable` (one `log` line each), until the waits
   * add up to `unavailableGiveUpMs`: then that error. Any other answer, `no_such_table` included, stands.
   * @param {Record<string, any>} message @returns {Promise<Record<string, any>>}
   */
  async sendRetrying(message) {
    let waited = 0;
    for (let tries = 0; ; tries += 1) {
      try {
        return await this.send(message);
      } catch (e) {
        if (!(e instanceof ProtocolError) || e.code !== "unavailable" || this.stopped) throw e;
        const [lo, hi] = this.unavailableBackoffMs;
        const delay = Math.min(hi, lo * 2 ** tries) * (0.75 + 0.5 * this.random());
        if (waited + delay > this.unavailableGiveUpMs) throw e;
        waited += delay;
        this.log(`${message.type} at ${this.url} answered ${e.message}; trying again in `
          + `${(delay / 1000).toFixed(1)} s (try ${tries + 1})`);
        await new Promise((resolve) => { setTimeout(resolve, delay); });
      }
    }
  }

  /** A request once connected (waits for a reconnect in progress); on a cluster, a `moved` answer is followed to
   * the worker holding the table (at most `MAX_REDIRECTS` in a row); an `unavailable` one is sent again
   * (`sendRetrying`). @param {Record<string, any>} message */
  async request(message) {
    for (let moves = 0; ; moves += 1) {
      if (this.state !== "open" || !this.socket) await this.connect();
      try {
        return await this.sendRetrying(message);
      } catch (e) {
        if (!(e instanceof ProtocolError) || e.code !== "moved" || !e.url || moves >= MAX_REDIRECTS) throw e;
        await this.moveTo(e.url);
      }
    }
  }

  /** Connect to another worker of the cluster from now on: the seats and watches held are taken back there (one
   * held on yet another worker is lost with `moved`). @param {string} url */
  moveTo(url) {
    this.leaveSocket(url, "moved to another worker");
    this.attempt = 0;
    this.setState("closed");
    return this.connect();
  }

  /** Close the socket to connect to `url` from now on: its close is not a drop to reconnect from.
   * @param {string} url @param {string} why */
  leaveSocket(url, why) {
    const old = this.socket;
    this.url = url;
    this.socket = null;
    this.stopPings();
    for (const [, p] of this.pending) p.reject(new ProtocolError("disconnected", why));
    this.pending.clear();
    try { old?.close(1000); } catch { /* already closing */ }
  }

  /** @param {any} data */
  receive(data) {
    let msg;
    try {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
        : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data;
      msg = /** @type {Record<string, any>} */ (decode(bytes));
    } catch (e) {
      console.error("undecodable frame", e);
      return;
    }
    const re = msg.re;
    if (msg.type === "event") this.onEvent(msg);
    else if (msg.type === "view") this.onView(msg);
    else if (msg.type === "bulletin" && re === undefined) this.emit("bulletin", msg);
    else if (msg.type === "error" && re === undefined) this.onErrorPush(msg);
    if (re !== undefined && this.pending.has(re)) {
      const p = this.pending.get(re);
      this.pending.delete(re);
      if (msg.type === "error") p?.reject(new ProtocolError(msg.code, msg.message, msg.reason, msg.table, msg.url));
      else p?.resolve(msg);
    }
  }

  /** @param {Record<string, any>} msg */
  onEvent(msg) {
    const t = this.tables.get(msg.table);
    if (t && msg.seq > t.lastSeq) t.lastSeq = msg.seq;
    this.emit("event", msg);
  }

  /** @param {Record<string, any>} msg */
  onView(msg) {
    const t = this.tables.get(msg.table);
    if (t) {
      if (msg.seq < t.lastSeq && t.view) return; // an older picture than the one held
      t.view = msg.view;
      t.private = msg.private ?? null;
      t.legal = msg.legal ?? [];
      t.time = msg.time;
      t.viewSeq = msg.seq;
      if (msg.seq > t.lastSeq) t.lastSeq = msg.seq;
      if (msg.seat !== undefined && t.role === "seat") t.seat = msg.seat;
      this.emit("table", t);
    }
    this.emit("view", msg);
  }

  /** @param {Record<string, any>} msg */
  onErrorPush(msg) {
    const t = msg.table ? this.tables.get(msg.table) : undefined;
    if (t && msg.code === "not_seated" && t.role === "seat") this.lose(t, "taken_elsewhere");
    this.emit("error", msg);
  }

  /** @param {TableState} t @param {string} why */
  lose(t, why) {
    t.lost = why;
    this.emit("lost", t);
    this.emit("table", t);
  }

  // ---- requests ----

  /** @param {string} table @param {string} game */
  track(table, game, role = /** @type {"seat" | "watch"} */ ("watch")) {
    let t = this.tables.get(table);
    if (!t) {
      t = { table, game, role, seat: null, token: null, static: {}, lastSeq: 0, view: null, private: null,
        legal: [], time: 0, viewSeq: -1, lost: null };
      this.tables.set(table, t);
    }
    t.role = role;
    t.game = game;
    t.lost = null;
    return t;
  }

  async listTables() {
    return /** @type {Record<string, any>[]} */ ((await this.request({ type: "tables" })).tables);
  }

  /**
   * @param {string} game @param {number} seats
   * @param {{seed?: number, time_scale?: number, options?: Record<string, any>, admin?: string}} [extra]
   * @returns {Promise<string>} the table id
   */
  async create(game, seats, extra = {}) {
    const msg = { type: "create", game, seats, ...extra };
    return (await this.request(msg)).table;
  }

  /**
   * Take a free seat. The join carries a secret key this client keeps per table: the same join sent again (its
   * `joined` lost with the connection) gets the same seat back, not a second one (SPEC.md, `join`).
   * @param {string} table @param {string} name
   */
  async join(table, name) {
    let key = this.joinKeys.get(table);
    if (key === undefined) {
      key = joinKey();
      this.joinKeys.set(table, key);
    }
    const r = await this.request({ type: "join", table, name, key });
    const t = this.track(table, r.game, "seat");
    t.seat = r.seat;
    t.token = r.token;
    t.static = r.static;
    t.lastSeq = 0;
    this.emit("table", t);
    return t;
  }

  /** Take a seat back with its token. @param {string} table @param {string} token @param {number} [lastSeq] */
  async resume(table, token, lastSeq) {
    const known = this.tables.get(table);
    const seq = lastSeq ?? (known && known.token === token ? known.lastSeq : 0);
    const r = await this.request({ type: "resume", table, token, last_seq: seq });
    const t = this.track(table, r.game, "seat");
    t.seat = r.seat;
    t.token = token;
    t.static = r.static;
    t.lastSeq = seq;
    this.emit("table", t);
    return t;
  }

  /** @param {string} table */
  async watch(table) {
    const r = await this.request({ type: "watch", table });
    const t = this.track(table, r.game, "watch");
    t.static = r.static;
    this.emit("table", t);
    return t;
  }

  /** @param {string} table */
  async leave(table) {
    const t = this.tables.get(table);
    this.tables.delete(table);
    if (t && this.state === "open") await this.send({ type: "leave", table }).catch(() => undefined);
  }

  /**
   * Send a game command; resolves with its `ok` (`seq`: its first event, `events`: how many it made). The command
   * carries a key of its own: when the connection drops before its answer, it is sent again once the client has
   * reconnected and taken its seats back, and the server answers it once (applied, or refused as it was).
   * @param {string} table @param {Record<string, any>} command
   */
  async act(table, command) {
    const key = joinKey();
    for (let drops = 0; ; drops += 1) {
      try {
        return await this.request({ type: "act", table, command, key });
      } catch (e) {
        if (/** @type {any} */ (e)?.code !== "disconnected" || this.stopped || !this.autoReconnect || drops >= 5) throw e;
        await this.connect();
      }
    }
  }

  /**
   * A table's past: every event after seq `after`, in order, paged with `history` (protocol/SPEC.md), each as
   * its `event` push carried it (`{table, seq, time, event}`) and as this connection's seat there saw it (else as a
   * spectator did). For a late spectator's log, or the events a `resumed` marked `capped` did not replay.
   * @param {string} table @param {number} [after]
   * @returns {AsyncGenerator<Record<string, any>>}
   */
  async *history(table, after = 0) {
    for (let from = after; ;) {
      const page = await this.request({ type: "history", table, after: from });
      for (const entry of page.events) yield { type: "event", table, ...entry };
      if (page.next === undefined) return;
      from = page.next;
    }
  }

  /** @param {string} topic */
  async follow(topic) {
    this.topics.set(topic, true);
    const b = await this.request({ type: "bulletin", topic, follow: true });
    this.emit("bulletin", b);
    return b;
  }

  /**
   * An organiser's request. @param {string} token @param {string} action
   * @param {{table?: string, conn?: number, topic?: string, data?: Record<string, any>}} [fields]
   */
  admin(token, action, fields = {}) {
    return this.request({ type: "admin", token, action, ...fields });
  }

  // ---- reading ----

  /** The whole picture of a table: static ∪ view ∪ private ∪ {seat}. @param {string} table */
  picture(table) {
    const t = this.tables.get(table);
    if (!t || !t.view) return null;
    return assemble(t.static, t.view, t.private, t.role === "seat" ? t.seat : null);
  }

  /** Server time now (ms), from the ping/pong offset. */
  serverNow() {
    return this.clock.serverNow(this.now());
  }
}

/** 18 random bytes from the platform's cryptographic source, as 24 characters of base64url (a join's or a
 * command's key). */
function joinKey() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
}
