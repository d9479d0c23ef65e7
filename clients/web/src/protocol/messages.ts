// Written by `python -m protocol.catalogue_docs --write` from the protocol's catalogue
// (protocol/messages.py): do not edit. Every message a client sends and the server sends, by `type`.

export type ClientHelloMessage = { type: "hello"; version: number; client: string; id?: number };
export type ClientTablesMessage = { type: "tables"; id?: number };
export type ClientCreateMessage = { type: "create"; game: string; seats: number; id?: number; seed?: number; time_scale?: number; options?: Record<string, unknown>; admin?: string; rated?: boolean };
export type ClientJoinMessage = { type: "join"; table: string; name: string; id?: number; views?: boolean; key?: string; entrant_key?: string };
export type ClientWatchMessage = { type: "watch"; table: string; id?: number; views?: boolean };
export type ClientLeaveMessage = { type: "leave"; table: string; id?: number };
export type ClientResumeMessage = { type: "resume"; table: string; token: string; last_seq: number; id?: number; views?: boolean };
export type ClientActMessage = { type: "act"; table: string; command: Record<string, unknown>; id?: number; key?: string };
export type ClientViewMessage = { type: "view"; table: string; id?: number };
export type ClientHistoryMessage = { type: "history"; table: string; after: number; id?: number; limit?: number };
export type ClientPingMessage = { type: "ping"; id?: number };
export type ClientAdminMessage = { type: "admin"; token: string; action: "pause" | "unpause" | "close" | "kick" | "connections" | "publish"; id?: number; table?: string; conn?: number; topic?: string; data?: Record<string, unknown>; hold?: boolean };
export type ClientBulletinMessage = { type: "bulletin"; topic: string; id?: number; follow?: boolean };
export type ClientRatingsMessage = { type: "ratings"; id?: number; game?: string };
export type ClientReplayMessage = { type: "replay"; table: string; after: number; id?: number; limit?: number };
export type ServerWelcomeMessage = { type: "welcome"; version: number; versions: number[]; server_time: number; limits: { max_frame_bytes: number; max_str_len: number; max_bin_len: number; max_array_len: number; max_map_len: number; max_depth: number }; games: string[]; re?: number; display?: Record<string, unknown> };
export type ServerTablesMessage = { type: "tables"; tables: { table: string; game: string; seats: number; taken: number; state: "waiting" | "running" | "over"; spectators: number; paused: boolean; seeded?: boolean; expires?: number }[]; re?: number; away?: number[] };
export type ServerCreatedMessage = { type: "created"; table: string; re?: number };
export type ServerJoinedMessage = { type: "joined"; table: string; seat: number; token: string; game: string; static: Record<string, unknown>; re?: number };
export type ServerWatchingMessage = { type: "watching"; table: string; game: string; static: Record<string, unknown>; re?: number };
export type ServerLeftMessage = { type: "left"; table: string; re?: number };
export type ServerResumedMessage = { type: "resumed"; table: string; seat: number; game: string; static: Record<string, unknown>; re?: number; last_seq?: number; replayed?: number; lost?: number; capped?: boolean };
export type ServerOkMessage = { type: "ok"; re?: number; seq?: number; events?: number; created?: Record<string, unknown> };
export type ServerHistoryMessage = { type: "history"; table: string; last_seq: number; events: { seq: number; time: number; event: Record<string, unknown> }[]; re?: number; next?: number; skipped?: number };
export type ServerConnectionsMessage = { type: "connections"; connections: { conn: number; peer: string; client: string; tables: string[]; seats: { table: string; seat: number; name: string }[]; rtt_ms?: number; rtt_last_ms?: number }[]; re?: number };
export type ServerBulletinMessage = { type: "bulletin"; topic: string; version: number; data: Record<string, unknown> | null; re?: number };
export type ServerPongMessage = { type: "pong"; server_time: number; re?: number; rtt_ms?: number; rtt_last_ms?: number };
export type ServerRatingsMessage = { type: "ratings"; ratings: { entrant: string; game: string; mu: number; sigma: number; ordinal: number; games: number; last_played: string }[]; total: number; re?: number };
export type ServerReplayMessage = { type: "replay"; table: string; game: string; last_seq: number; steps: { seq: number; time: number; event: Record<string, unknown>; view?: Record<string, unknown>; private?: (Record<string, unknown> | null)[] }[]; re?: number; next?: number; static?: Record<string, unknown> };
export type ServerEventMessage = { type: "event"; table: string; seq: number; time: number; event: Record<string, unknown> };
export type ServerViewMessage = { type: "view"; table: string; seq: number; time: number; seat: number | null; view: Record<string, unknown>; legal: Record<string, unknown>[]; re?: number; private?: Record<string, unknown> };
export type ServerErrorMessage = { type: "error"; code: string; message: string; re?: number; reason?: string; table?: string; url?: string };

export type TableSummary = { table: string; game: string; seats: number; taken: number; state: "waiting" | "running" | "over"; spectators: number; paused: boolean; seeded?: boolean; expires?: number };

export type ClientMessage = ClientHelloMessage | ClientTablesMessage | ClientCreateMessage | ClientJoinMessage | ClientWatchMessage | ClientLeaveMessage | ClientResumeMessage | ClientActMessage | ClientViewMessage | ClientHistoryMessage | ClientPingMessage | ClientAdminMessage | ClientBulletinMessage | ClientRatingsMessage | ClientReplayMessage;
export type ServerMessage = ServerWelcomeMessage | ServerTablesMessage | ServerCreatedMessage | ServerJoinedMessage | ServerWatchingMessage | ServerLeftMessage | ServerResumedMessage | ServerOkMessage | ServerHistoryMessage | ServerConnectionsMessage | ServerBulletinMessage | ServerPongMessage | ServerRatingsMessage | ServerReplayMessage | ServerEventMessage | ServerViewMessage | ServerErrorMessage;
