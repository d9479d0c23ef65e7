// Kupcy (protocol/SPEC.md, "Kupcy"; docs/rules/kupcy.md): a plain view. Every legal template is a concrete
// command, so each one is a button; the ship (private), warehouses, the market, a charter debt and the clocks.
import { Countdown } from "../app/countdown";
import { who, type GameModule, type GameProps, type Pic } from "./common";

export function kupcyCard(pic: Pic, id: number | null | undefined): string {
  if (id == null) return "nothing";
  const row = (pic.cards ?? []).find((c: any[]) => c[0] === id);
  if (!row) return `card ${id}`;
  const [, kind, origin, value, charter] = row;
  if (kind === "charter") return `charter ${charter}`;
  if (kind === "merchant") return `${origin} merchant`;
  return `${origin} ${kind} ${value}`;
}

/** One card or a list of them, in words. */
const cards = (pic: Pic, ids: number | number[] | null | undefined): string =>
  (ids == null ? [] : Array.isArray(ids) ? ids : [ids]).map((c) => kupcyCard(pic, c)).join(", ") || "none";
const count = (v: unknown): number => (Array.isArray(v) ? v.length : typeof v === "number" ? v : 0);

export function commandLabel(pic: Pic, c: Record<string, any>): string {
  switch (c.type) {
    case "split": return `Warehouse: ${cards(pic, c.warehouse)}`;
    case "offer": return `Offer ${kupcyCard(pic, c.card)}`;
    case "keep": return c.where === "ship" ? `Into the ship${c.out != null ? `, ${kupcyCard(pic, c.out)} to the warehouse` : ""}` : "To the warehouse";
    case "pay": return `Pay with ${kupcyCard(pic, c.card)}`;
    case "load": return `Load ${kupcyCard(pic, c.card)}`;
    case "unload": return `Unload ${kupcyCard(pic, c.card)}`;
    case "sell": return `Sell ${kupcyCard(pic, c.card)}`;
    case "pass": return "Pass (no sale)";
    default: return c.type;
  }
}

function View({ pic, legal, act, paused, time }: GameProps) {
  const dl = pic.deadlines ?? {};
  const m = pic.market;
  return (
    <div class="kupcy">
      <section class="panel status" aria-label="game status">
        <div class="row">
          <strong data-testid="phase">{pic.phase}{pic.step ? ` (${pic.step})` : ""}{pic.current != null ? `: ${who(pic, pic.current)} to play` : ""}</strong>
          {Object.entries(dl).filter(([, d]) => d != null).map(([k, d]) => <Countdown key={k} deadline={d as number} paused={paused} at={time} label={k} />)}
        </div>
        <div class="row small"><span>deck {pic.deck_count}</span><span>cards drawn {pic.turn}</span><span>out of the game {count(pic.out)}</span></div>
      </section>
      {pic.ship ? <section class="panel" aria-label="your ship"><h3>Your ship</h3><p>{cards(pic, pic.ship)}</p>
        {pic.drawn != null ? <p>Drawn: {kupcyCard(pic, pic.drawn)}</p> : null}
        {pic.sealed != null ? <p class="small">Sealed: {cards(pic, pic.sealed)}</p> : null}</section> : null}
      {legal.length ? (
        <section class="panel" aria-label="your moves"><div class="actions">
          {legal.map((c, i) => <button key={i} class={`k-${c.type}`} onClick={() => act(c)}>{commandLabel(pic, c)}</button>)}
        </div></section>
      ) : null}
      {m ? <section class="panel" aria-label="market"><h3>Trade: {who(pic, m.seller)} sells {cards(pic, m.goods)} (round {m.round})</h3>
        <p>Offers: {(Array.isArray(m.offers) ? m.offers : []).map(([s, c]: number[]) => `${who(pic, s)}: ${kupcyCard(pic, c)}`).join("; ") || "none revealed"}</p>
        <p class="small">Still to offer: {(Array.isArray(m.seats) ? m.seats : []).filter((s: number) => !(Array.isArray(m.chosen) ? m.chosen : []).includes(s)).map((s: number) => who(pic, s)).join(", ") || "nobody"}</p></section> : null}
      {pic.debt ? <section class="panel"><h3>{who(pic, pic.debt.seat)} pays charter {pic.debt.charter}</h3>
        <p>{pic.debt.cards != null ? `${pic.debt.cards} card(s) due` : `worth ${pic.debt.worth} due`}</p></section> : null}
      <section class="panel players" aria-label="players"><h3>Players</h3><ul>
        {(pic.players ?? []).map((p: any) => (
          <li key={p.seat} class={`player${p.seat === pic.current ? " current" : ""}${p.seat === pic.seat ? " me" : ""}`} data-seat={p.seat}>
            <div class="row"><strong>{who(pic, p.seat)}</strong><span>ship {p.ship_count}</span><span>owned {count(p.owned)}</span></div>
            <div class="small">warehouse: {cards(pic, p.warehouse)}</div>
          </li>))}
      </ul></section>
    </div>
  );
}

function describe(e: Record<string, any>, pic: Pic): string | null {
  const n = (s: any) => who(pic, s);
  const c = (id: any) => kupcyCard(pic, id);
  switch (e.type) {
    case "split_chosen": return "choice" in e ? `${n(e.seat)} splits: ${cards(pic, e.choice)} to the warehouse` : `${n(e.seat)} has split`;
    case "split_revealed": return "the warehouses are revealed";
    case "card_drawn": return `${n(e.seat)} draws ${"card" in e ? c(e.card) : "a card"} (${e.deck_count} left)`;
    case "kept": return `${n(e.seat)} puts ${"card" in e ? c(e.card) : "a card"} in the ${e.where}`;
    case "charter": return `${n(e.seat)} draws charter ${e.charter}`;
    case "paid": return `${n(e.seat)} pays ${c(e.card)}`;
    case "trade_opened": return `${n(e.seller)} puts ${cards(pic, e.goods)} up for trade`;
    case "offer_made": return `${n(e.seat)} makes ${"choice" in e ? `an offer: ${c(e.choice)}` : "a sealed offer"}`;
    case "offers_revealed": return `offers: ${(e.offers ?? []).map(([s, k]: number[]) => `${n(s)} ${c(k)}`).join(", ")}`;
    case "rebid": return `a tie: ${(e.seats ?? []).map(n).join(", ")} offer again`;
    case "trade_closed": return e.winner == null ? `the goods stay with ${n(e.seller)}` : `${n(e.winner)} wins ${cards(pic, e.goods)} from ${n(e.seller)}`;
    case "stow_owed": return `stowing: ${(e.seats ?? []).map(n).join(", ")}`;
    case "loaded": return `${n(e.seat)} loads ${c(e.card)}`;
    case "unloaded": return `${n(e.seat)} unloads ${c(e.card)}`;
    case "last_round": return "the last round begins";
    case "sale_owed": return `${n(e.seat)} may sell`;
    case "sale": return `${n(e.seat)} sells ${c(e.card)}`;
    case "no_sale": return `${n(e.seat)} sells nothing (${e.reason})`;
    case "game_ended": return `game over: ${(e.winners ?? []).map(n).join(" and ")} won`;
    default: return null;
  }
}

export const kupcy: GameModule = { title: "Kupcy", View, describe };
