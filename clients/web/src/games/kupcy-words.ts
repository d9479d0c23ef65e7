// Kupcy in words: card names, the label of each legal command, the charters' effects and the event log's lines.
import { clockText } from "../app/countdown";
import { who, type Pic } from "./common";
import { cardTable } from "./kupcy-rules.js";

export const ORIGIN_NAMES: Record<string, string> = { rus: "Rus", byzantium: "Byzantine", arabia: "Arabian", west: "Western" };
export const COINS: Record<string, string> = { rus: "grivna", byzantium: "solidus", arabia: "dirham", west: "thaler" };
const origin = (o: string | null | undefined) => (o ? ORIGIN_NAMES[o] ?? o : "");
export const charterName = (name: string | null | undefined) => String(name ?? "charter").replace(/_/g, " ");

export function kupcyCard(pic: Pic, id: number | null | undefined): string {
  if (id == null) return "nothing";
  const c = cardTable(pic).get(id);
  if (!c) return `card ${id}`;
  if (c.kind === "charter") return `the ${charterName(c.charter)} charter`;
  if (c.kind === "merchant") return `the ${origin(c.origin)} merchant`;
  if (c.kind === "money") return `${origin(c.origin)} ${COINS[c.origin ?? ""] ?? "money"} ${c.value}`;
  return `${origin(c.origin)} ${c.kind} ${c.value}`;
}

/** One card or a list of them, in words. */
export const cards = (pic: Pic, ids: number | number[] | null | undefined): string =>
  (ids == null ? [] : Array.isArray(ids) ? ids : [ids]).map((c) => kupcyCard(pic, c)).join(", ") || "none";

export function commandLabel(pic: Pic, c: Record<string, any>): string {
  switch (c.type) {
    case "split": return `Warehouse: ${cards(pic, c.warehouse)}`;
    case "offer": return `Offer ${kupcyCard(pic, c.card)}`;
    case "keep": return c.where === "ship" ? `Into the ship, ${kupcyCard(pic, c.out)} to the warehouse` : "To the warehouse";
    case "pay": return `Pay ${kupcyCard(pic, c.card)}`;
    case "load": return `Load ${kupcyCard(pic, c.card)}`;
    case "unload": return `Unload ${kupcyCard(pic, c.card)}`;
    case "sell": return `Sell ${kupcyCard(pic, c.card)}`;
    case "pass": return "Pass (no sale)";
    default: return String(c.type).replace(/_/g, " ");
  }
}

/** A charter's effect (the static view's `charters`, docs/rules/kupcy.md) in words. */
export function effectText(effect: Record<string, any> | null | undefined): string {
  if (!effect) return "no effect known";
  const zone = effect.zone === "ship" ? "ship" : "warehouse";
  const n = effect.share ? `${effect.share[0]}/${effect.share[1]} of the ${zone} (rounded up)` : effect.count === 1 || effect.count == null ? `1 ${zone} card` : `${effect.count} ${zone} cards`;
  switch (effect.take) {
    case "random": return `lose ${n} at random`;
    case "all": return `lose every ${zone} card`;
    case "highest": return `lose the most valuable ${effect.count > 1 ? `${effect.count} ${zone} cards` : `${zone} card`}`;
    case "origin": return `lose every ${zone} card of its most valuable origin`;
    case "choice": return `pay ${n} of one's choice`;
    case "worth": return `pay ${zone} cards worth ${effect.share?.[0] ?? 1}/${effect.share?.[1] ?? 10} of the ${zone}'s value (rounded up), of one's choice`;
    default: return `${effect.take} (${zone})`;
  }
}

const NO_SALE: Record<string, string> = { passed: "passes", timeout: "lets the time run out", no_goods: "has no goods to sell" };

export function describe(e: Record<string, any>, pic: Pic): string | null {
  const n = (s: any) => who(pic, s);
  const c = (id: any) => kupcyCard(pic, id);
  const within = (d: any) => (typeof d === "number" && typeof e.at === "number" ? ` (${clockText(d - e.at)} to go)` : "");
  switch (e.type) {
    case "split_chosen": return "choice" in e ? `${n(e.seat)} seals the split: ${cards(pic, e.choice)} to the warehouse` : `${n(e.seat)} has split (sealed)`;
    case "split_revealed": return `the warehouses open: ${(e.warehouses ?? []).map((w: number[], s: number) => `${n(s)} ${cards(pic, w)}`).join("; ")}`;
    case "card_drawn": return `turn ${e.turn}: ${n(e.seat)} draws ${"card" in e ? c(e.card) : "a card (hidden)"}, ${e.deck_count} left`;
    case "kept": return "card" in e ? `${n(e.seat)} puts ${c(e.card)} in the ${e.where}${e.out != null ? `, ${c(e.out)} to the warehouse` : ""}`
      : `${n(e.seat)} puts the drawn card in the ship${e.out != null ? `, ${c(e.out)} to the warehouse` : ""}`;
    case "charter": {
      const lost = (e.lost ?? []).length ? `: ${cards(pic, e.lost)} lost` : "";
      const due = e.owed ? e.owed.cards ?? e.owed.worth ?? 0 : 0;
      const owed = !e.owed ? "" : !due ? "; nothing to pay" : e.owed.cards != null ? `; owes ${due} card(s)` : `; owes ${due} in value`;
      return `${charterName(e.charter)} strikes ${n(e.seat)} (${e.zone})${lost}${owed}`;
    }
    case "paid": return `${n(e.seat)} pays ${c(e.card)}`;
    case "trade_opened": return `${n(e.seller)} puts ${c(e.goods)} on the market; sealed offers from ${(e.seats ?? []).map(n).join(", ") || "nobody"}${within(e.deadline)}`;
    case "offer_made": return `${n(e.seat)} makes a sealed offer${"choice" in e ? `: ${c(e.choice)}` : ""}${e.round > 1 ? ` (re-bid round ${e.round})` : ""}`;
    case "offers_revealed": {
      const tie = (e.leaders ?? []).length > 1 ? ", a tie" : "";
      return `offers revealed (round ${e.round}${tie}): ${(e.offers ?? []).map(([s, k]: number[]) => `${n(s)} ${c(k)}`).join(", ")}`;
    }
    case "rebid": return `a tie: ${(e.seats ?? []).map(n).join(", ")} offer again, sealed (round ${e.round})${(e.dropped ?? []).length ? `; ${(e.dropped as number[]).map(n).join(", ")} can offer nothing more` : ""}`;
    case "trade_closed": return `${c(e.goods)} goes to ${e.winner == null ? `nobody: it stays with ${n(e.seller)}` : n(e.winner)}; ${n(e.seller)} takes ${cards(pic, e.to_seller)}${(e.to_deck ?? []).length ? `; ${cards(pic, e.to_deck)} back into the deck` : ""}`;
    case "stow_owed": return `${(e.seats ?? []).map(n).join(", ")} ${(e.seats ?? []).length === 1 ? "stows the ship" : "stow their ships"}${within(e.deadline)}`;
    case "loaded": return `${n(e.seat)} loads ${c(e.card)} into the ship`;
    case "unloaded": return `${n(e.seat)} unloads ${c(e.card)} to the warehouse`;
    case "last_round": return `the deck is empty: the last round, one sale each: ${(e.seats ?? []).map(n).join(", ")}`;
    case "sale_owed": return `${n(e.seat)} may sell a goods card${within(e.deadline)}`;
    case "sale": return `${n(e.seat)} sells ${c(e.card)}`;
    case "no_sale": return `${n(e.seat)} ${NO_SALE[e.reason] ?? e.reason}`;
    case "game_ended": return `game over: ${(e.winners ?? []).map(n).join(" and ") || "nobody"} won; ${(e.scores ?? []).map((v: number, s: number) => `${n(s)} ${v}`).join(", ")}`;
    default: return null;
  }
}
