// What a refusal or an error says to a person: words, not the protocol's codes (protocol/SPEC.md, "Error codes").

const CODES: Record<string, string> = {
  no_such_table: "There is no such table on this server (it may have ended and been cleared away).",
  no_such_game: "This server does not run that game.",
  table_full: "Every seat at that table is taken.",
  already_seated: "You already hold a seat at that table.",
  not_seated: "You hold no seat at that table.",
  bad_token: "That seat code is not valid for this table.",
  rate_limited: "Too much at once: wait a moment and try again.",
  forbidden: "Only the organiser may do that.",
  internal: "The server failed on that; the organiser can see why in its log.",
  version_unsupported: "This page and the server speak different protocol versions: reload the page.",
};

// The games' reasons for refusing a move (the `reason` of an illegal_action), where the code alone reads badly.
const REASONS: Record<string, string> = {
  not_your_turn: "it is not your turn",
  game_over: "the game has ended",
  not_started: "the game has not started",
  paused: "the table's clocks are stopped (paused by the organiser, or held for the players)",
  turn_over: "your turn is over",
  start_price_too_high: "the start price is more than you may ask",
  bid_too_low: "a bid must be higher than the highest bid",
  not_enough_dollars: "you do not have that many dollars free",
  own_auction: "you may not bid in your own auction",
  not_seller: "only the seller may do that",
  no_such_auction: "that auction has ended",
  cannot_pick_winner: "that player cannot win this auction now",
  price_changed: "that bid changed before your click arrived: look at the auction again",
  already_ready: "you are ready already",
  wrong_step: "that is not what the game is waiting for now",
};

/** The reason code in words: its own entry, else the code with its underscores as spaces. */
export function reasonText(reason: string): string {
  return REASONS[reason] ?? reason.replace(/_/g, " ");
}

export function errorText(e: any): string {
  if (e && e.code === "illegal_action") return e.reason ? `Refused: ${reasonText(String(e.reason))}.` : `Refused: ${e.message}`;
  if (e && e.code && CODES[e.code]) return CODES[e.code];
  if (e && e.code) return `The server refused that: ${String(e.message).replace(/^[a-z_]+(\s\([^)]*\))?: /, "")}`;
  return String(e);
}
