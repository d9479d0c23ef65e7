// The page's one connection to the server it was served from, and hooks to follow it.
import { useEffect, useState } from "preact/hooks";
import { Client } from "../protocol/index.js";
import type { ServerEventMessage } from "../protocol/messages";

export const wsUrl = typeof location === "undefined" ? "ws://127.0.0.1:8765/" // under Node (unit tests)
  : `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
/** This page's name in the server's connection listing: its own, so the organiser's page knows its own
 * connection there (and does not offer to kick it). */
export const clientName = `parsimonia-web/0.1 page-${Math.random().toString(36).slice(2, 8)}`;
export const client = new Client(wsUrl, { client: clientName });

export type Logged = { seq: number; time: number; event: Record<string, any> };
const logs = new Map<string, Logged[]>();
const LOG_MAX = 300;

client.on("event", (msg: ServerEventMessage) => {
  const log = logs.get(msg.table) ?? [];
  if (!log.length || msg.seq > log[log.length - 1].seq) log.push({ seq: msg.seq, time: msg.time, event: msg.event });
  if (log.length > LOG_MAX) log.splice(0, log.length - LOG_MAX);
  logs.set(msg.table, log);
});

export function eventLog(table: string): Logged[] {
  return logs.get(table) ?? [];
}

/** Re-render on every change of `kinds` from the client. */
export function useClient(kinds: string[] = ["status", "table", "clock", "event"]): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const offs = kinds.map((k) => client.on(k, () => setN((x) => x + 1)));
    return () => offs.forEach((off) => off());
  }, []);
  return n;
}

/** Re-render every `ms` (for countdowns). */
export function useTick(ms = 250): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const id = setInterval(() => setN((x) => x + 1), ms);
    return () => clearInterval(id);
  }, [ms]);
  return n;
}

// Seat tokens are kept per table in localStorage (a reload or a new tab of the same seat resumes it);
// the admin token in sessionStorage (gone with the tab). A seat code from a link or the lobby's box is only
// offered (sessionStorage) until the server accepts it, so a mistyped code never replaces a good one.
const SEAT_KEY = "parsimonia.seat.";
const OFFER_KEY = "parsimonia.offered.";
export const seats = {
  get: (table: string): string | null => localStorage.getItem(SEAT_KEY + table),
  set: (table: string, token: string) => localStorage.setItem(SEAT_KEY + table, token),
  forget: (table: string) => localStorage.removeItem(SEAT_KEY + table),
  offer: (table: string, token: string) => sessionStorage.setItem(OFFER_KEY + table, token),
  offered: (table: string): string | null => sessionStorage.getItem(OFFER_KEY + table),
  withdraw: (table: string) => sessionStorage.removeItem(OFFER_KEY + table),
};
export const adminToken = {
  get: (): string | null => sessionStorage.getItem("parsimonia.admin"),
  set: (token: string) => sessionStorage.setItem("parsimonia.admin", token),
  forget: () => sessionStorage.removeItem("parsimonia.admin"),
};

export { parseSeatCode } from "./seatcode";

export { errorText } from "./words";
