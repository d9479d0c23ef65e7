// Kupcy's rules as the page needs them (docs/rules/kupcy.md), from the card table `[id, kind, origin, value,
// charter]` of the static view: how sealed offers compare, what a player's cards score, and where the open
// trading operation stands. Plain JavaScript, so the browser tests (Node) can use it too.

export const ORIGINS = ["rus", "byzantium", "arabia", "west"];

/** @typedef {{id: number, kind: string, origin: string | null, value: number, charter: string | null}} KCard */

/** The card table by id. @param {Record<string, any>} pic @returns {Map<number, KCard>} */
export function cardTable(pic) {
  if (!pic.__kcards) {
    const table = new Map((pic.cards ?? []).map((/** @type {any[]} */ [id, kind, origin, value, charter]) =>
      [id, { id, kind, origin, value, charter }]));
    Object.defineProperty(pic, "__kcards", { value: table, enumerable: false });
  }
  return pic.__kcards;
}

/** Goods and money: the cards with a face value. @param {KCard | undefined} c */
export const priced = (c) => !!c && (c.kind === "goods" || c.kind === "money");

/**
 * The seats whose offers compare best (one: the winner; several: a tie): a merchant (of the goods' origin,
 * the only one that may be offered) beats every price; else the highest face value; among equal values a money
 * card of the goods' origin.
 * @param {[number, number][]} offers [seat, card] @param {number} goods @param {Map<number, KCard>} cards
 * @returns {number[]}
 */
export function leaders(offers, goods, cards) {
  if (!offers.length) return [];
  const jokers = offers.filter(([, c]) => cards.get(c)?.kind === "merchant").map(([s]) => s);
  if (jokers.length) return jokers.sort((a, b) => a - b);
  const top = Math.max(...offers.map(([, c]) => cards.get(c)?.value ?? 0));
  const best = offers.filter(([, c]) => (cards.get(c)?.value ?? 0) === top);
  const origin = cards.get(goods)?.origin;
  const home = best.filter(([, c]) => cards.get(c)?.kind === "money" && cards.get(c)?.origin === origin);
  return (home.length ? home : best).map(([s]) => s).sort((a, b) => a - b);
}

/**
 * The score of the cards a player owns: their goods and money at face value, each merchant doubling its origin's.
 * @param {number[]} owned @param {Map<number, KCard>} cards
 */
export function score(owned, cards) {
  let total = 0;
  for (const origin of ORIGINS) {
    const held = owned.map((id) => cards.get(id)).filter((c) => c && c.origin === origin);
    const face = held.filter(priced).reduce((sum, c) => sum + (c?.value ?? 0), 0);
    total += face * 2 ** held.filter((c) => c?.kind === "merchant").length;
  }
  return total;
}

/**
 * Where the open trading operation stands, for `seat` (nil for a spectator): the revealed rounds with their
 * leaders, the current round's sealed offers (who has offered, never what), whether it is a tie re-bid, and
 * whether `seat` still owes an offer.
 * @param {Record<string, any>} pic the picture (static, view, private part, seat)
 */
export function marketState(pic) {
  const m = pic.market;
  if (!m) return null;
  const cards = cardTable(pic);
  /** @type {{round: number, offers: [number, number][], leaders: number[]}[]} */
  const rounds = [];
  for (const [seat, card, round] of m.offers ?? []) {
    let r = rounds.find((x) => x.round === round);
    if (!r) rounds.push(r = { round, offers: [], leaders: [] });
    r.offers.push([seat, card]);
  }
  rounds.sort((a, b) => a.round - b.round);
  for (const r of rounds) r.leaders = leaders(r.offers, m.goods, cards);
  const seats = m.seats ?? [], chosen = m.chosen ?? [];
  const me = pic.seat ?? null;
  return {
    seller: m.seller, goods: m.goods, round: m.round, lastRound: !!m.last_round, deadline: m.deadline ?? null,
    rounds,
    sealed: seats.map((/** @type {number} */ s) => ({ seat: s, offered: chosen.includes(s) })),
    rebid: m.round > 1, // the current round re-bids a tie among `seats`
    owe: me != null && seats.includes(me) && !chosen.includes(me),
    mine: me != null && seats.includes(me) ? (pic.sealed ?? null) : null, // one's own sealed offer, before the reveal
  };
}

/**
 * The last trading operation closed, from the event log (`{event}` entries, oldest first): its seller and goods,
 * every revealed round with its leaders, the winner and what the seller took. Nil before any, or once another
 * operation has opened.
 * @param {{event: Record<string, any>}[]} log
 */
export function lastTrade(log) {
  let end = log.length - 1;
  while (end >= 0 && log[end].event.type !== "trade_closed") {
    if (log[end].event.type === "trade_opened") return null; // one is open: the view's market shows it
    end -= 1;
  }
  if (end < 0) return null;
  const closed = log[end].event;
  /** @type {{round: number, offers: [number, number][], leaders: number[], defaulted: number[]}[]} */
  const rounds = [];
  for (let i = end - 1; i >= 0 && log[i].event.type !== "trade_opened" && log[i].event.type !== "trade_closed"; i--) {
    const e = log[i].event;
    if (e.type === "offers_revealed") rounds.unshift({ round: e.round, offers: e.offers ?? [], leaders: e.leaders ?? [], defaulted: e.defaulted ?? [] });
  }
  return { seller: closed.seller, goods: closed.goods, winner: closed.winner ?? null, toSeller: closed.to_seller ?? [],
    toDeck: closed.to_deck ?? [], rounds };
}

/**
 * The charter that struck in the current turn (the log's last `charter` event since the last draw), or nil.
 * @param {{event: Record<string, any>}[]} log
 */
export function strikingCharter(log) {
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i].event;
    if (e.type === "charter") return e;
    if (e.type === "card_drawn" || e.type === "sale_owed" || e.type === "last_round") return null;
  }
  return null;
}

/**
 * The legal `split` template whose warehouse is exactly the cards `picked` (in any order), or nil.
 * @param {Record<string, any>[]} legal @param {number[]} picked
 */
export function splitFor(legal, picked) {
  const key = (/** @type {number[]} */ ids) => [...ids].sort((a, b) => a - b).join(",");
  return legal.find((c) => c.type === "split" && key(c.warehouse) === key(picked)) ?? null;
}
