// Parsimonia (docs/rules/parsimonia.md): hands of resource cards and the tourists on them, the drawn card,
// the open auctions with their quiet-time countdowns, and every choice `legal` offers, in one or two clicks.
import { useState } from "preact/hooks";
import { Countdown, clockText } from "../app/countdown";
import { fill, findLegal } from "../protocol/index.js";
import { names, overText, who, type GameModule, type GameProps, type Pic } from "./common";

type CardRow = [number, string, number, number];

function cardOf(pic: Pic, id: number | null | undefined): CardRow | null {
  if (id == null) return null;
  const cards: CardRow[] = pic.cards ?? [];
  if (!pic.__byId) Object.defineProperty(pic, "__byId", { value: new Map(cards.map((c) => [c[0], c])), enumerable: false });
  return pic.__byId.get(id) ?? null;
}

export function cardText(pic: Pic, id: number | null | undefined): string {
  const c = cardOf(pic, id);
  return c ? `${c[1] === "tourists" ? "tourists" : "resource"} type ${c[2]} ($${c[3]})` : `card ${id}`;
}

function Card(props: { pic: Pic; id: number; on?: number | null }) {
  const c = cardOf(props.pic, props.id);
  if (!c) return <span class="card">#{props.id}</span>;
  const tourists = props.on != null ? cardOf(props.pic, props.on) : null;
  return (
    <span class={`card ${c[1]} t${c[2] % 8}`} title={cardText(props.pic, props.id)} data-card={props.id}>
      <b>{c[1] === "tourists" ? "T" : "R"}{c[2]}</b> <small>${c[3]}</small>
      {tourists ? <span class="on" title={`tourists on it: ${cardText(props.pic, props.on)}`}> + T{tourists[2]} ${tourists[3]}</span> : null}
    </span>
  );
}

function Auction(props: GameProps & { a: Record<string, any> }) {
  const { a, pic, legal, act } = props;
  const bid = findLegal(legal, "bid", { auction: a.id })[0];
  const closes = findLegal(legal, "close", { auction: a.id });
  const [amount, setAmount] = useState<string>("");
  const mine = a.seller === pic.seat && a.seller != null;
  return (
    <li class={`auction${mine ? " mine" : ""}`} data-auction={a.id} aria-label={`auction ${a.id}`}>
      <div class="row">
        <strong>#{a.id}</strong> {a.lot.map((c: number) => <Card key={c} pic={pic} id={c} />)}
        <span>by {who(pic, a.seller)}</span>
        <span class="price">{a.high != null ? `high $${a.high} (${who(pic, a.high_bidder)})` : `from $${a.start_price}`}</span>
        <Countdown deadline={a.closes_at} label="closes in"
          title="the auction closes when this runs out with no new bid; each bid starts it again" />
      </div>
      {a.bids.length ? <div class="bids">bids: {a.bids.map(([s, v]: number[]) => `${who(pic, s)} $${v}`).join(", ")}</div> : null}
      <div class="actions">
        {bid ? (
          <>
            <button class="bid-min" onClick={() => act(fill(bid))}>Bid ${bid.amount.min}</button>
            <form class="inline" onSubmit={(e) => { e.preventDefault(); const v = parseInt(amount, 10); if (v) act(fill(bid, { amount: v })); }}>
              <label>amount <input type="number" inputMode="numeric" min={bid.amount.min} max={bid.amount.max} value={amount}
                onInput={(e) => setAmount((e.target as HTMLInputElement).value)} placeholder={String(bid.amount.min)} /></label>
              <button type="submit">Bid</button>
            </form>
          </>
        ) : null}
        {closes.map((c) => {
          // a sale carries the price its button shows: if the bid moved meanwhile, the server refuses it
          const price = c.winner == null ? null : (a.bids.find((b: number[]) => b[0] === c.winner) ?? [0, 0])[1];
          return (
            <button key={String(c.winner)} class={c.winner == null ? "no-sale" : "sell"} data-price={price ?? undefined}
              onClick={() => act(price == null ? c : { ...c, price })}>
              {price == null ? "No sale" : `Sell to ${who(pic, c.winner)} for $${price}`}
            </button>
          );
        })}
      </div>
    </li>
  );
}

function SellForm(props: GameProps & { type: "auction" | "company_auction"; label: string }) {
  const { legal, act, pic } = props;
  const options = findLegal(legal, props.type);
  const [card, setCard] = useState<string>("");
  const [price, setPrice] = useState<string>("0");
  if (!options.length) return null;
  const chosen = options.find((o) => String(o.card) === card) ?? options[0];
  return (
    <form class="inline sell-form" data-kind={props.type}
      onSubmit={(e) => { e.preventDefault(); act(fill(chosen, { start_price: Math.max(0, parseInt(price, 10) || 0) })); }}>
      <label>{props.label} <select value={String(chosen.card)} onChange={(e) => setCard((e.target as HTMLSelectElement).value)}>
        {options.map((o) => <option key={o.card} value={String(o.card)}>{cardText(pic, o.card)}</option>)}
      </select></label>
      <label>from $<input type="number" min={0} value={price} onInput={(e) => setPrice((e.target as HTMLInputElement).value)} /></label>
      <button type="submit">Auction it</button>
    </form>
  );
}

function GiftForm({ legal, act, pic }: GameProps) {
  const options = findLegal(legal, "give");
  const [to, setTo] = useState<string>("");
  const [amount, setAmount] = useState<string>("");
  if (!options.length) return null;
  const chosen = options.find((o) => String(o.to) === to) ?? options[0];
  return (
    <form class="inline" onSubmit={(e) => { e.preventDefault(); const v = parseInt(amount, 10); if (v > 0) act(fill(chosen, { amount: v })); }}>
      <label>give <select value={String(chosen.to)} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
        {options.map((o) => <option key={o.to} value={String(o.to)}>{who(pic, o.to)}</option>)}
      </select></label>
      <label>$<input type="number" min={1} max={chosen.amount.max} value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} /></label>
      <button type="submit">Give</button>
    </form>
  );
}

function View(props: GameProps) {
  const { pic, legal, act } = props;
  const dl = pic.deadlines ?? {};
  const my = pic.seat;
  const one = (type: string) => findLegal(legal, type)[0];
  const pairs = findLegal(legal, "pair");
  const places = findLegal(legal, "place");
  const placeBought = findLegal(legal, "place_bought");
  const ready = one("ready"), endTurn = one("end_turn"), drawnAuction = one("auction_drawn");
  const vote = one("vote_end"), quit = one("quit");
  const [drawnPrice, setDrawnPrice] = useState("0");
  const phase = pic.result ? overText(pic) : pic.phase === "turns" ? `turn ${pic.turn}: ${who(pic, pic.current)} to play` : String(pic.phase).replace("_", " ");
  return (
    <div class="parsimonia">
      <section class="panel status" aria-label="game status">
        <div class="row">
          <strong data-testid="phase">{phase}</strong>
          <Countdown deadline={dl.game} label="game" />
          {dl.opening != null ? <Countdown deadline={dl.opening} label="opening" /> : null}
          {dl.turn != null ? <Countdown deadline={dl.turn} label="turn" /> : null}
          {pic.turn_over ? <span class="tag">time is up</span> : null}
        </div>
        <div class="row small">
          <span>Company ${pic.company?.dollars}</span>
          <span>{(pic.company?.cards ?? []).length ? <>holds {pic.company.cards.map(([c, on]: [number, number | null]) => <Card key={c} pic={pic} id={c} on={on} />)}</> : "holds no card"}</span>
          <span>deck {pic.deck_count}</span><span>aside {(pic.aside ?? []).length}</span>
        </div>
      </section>

      {pic.drawn != null ? (
        <section class="panel drawn" aria-label="drawn card">
          <h3>Drawn by {who(pic, pic.current)}: <Card pic={pic} id={pic.drawn} /></h3>
          <div class="actions">
            {pairs.map((p) => <button key={p.resource} class="pair" onClick={() => act(p)}>Pair on {cardText(pic, p.resource)}</button>)}
            {drawnAuction ? (
              <form class="inline" onSubmit={(e) => { e.preventDefault(); act(fill(drawnAuction, { start_price: parseInt(drawnPrice, 10) || 0 })); }}>
                <label>from $<input type="number" min={0} value={drawnPrice} onInput={(e) => setDrawnPrice((e.target as HTMLInputElement).value)} /></label>
                <button type="submit" class="auction-drawn">Auction the drawn card</button>
              </form>
            ) : null}
            {places.map((p) => <button key={p.resource} class="place" onClick={() => act(p)}>Place on {cardText(pic, p.resource)}</button>)}
          </div>
        </section>
      ) : null}

      {placeBought.length ? (
        <section class="panel" aria-label="place a bought card">
          <h3>Where does your bought card go?</h3>
          {placeBought.map((p) => <button key={`${p.card}-${p.resource}`} class="place-bought" onClick={() => act(p)}>{cardText(pic, p.card)} on {cardText(pic, p.resource)}</button>)}
          {(pic.bought ?? []).filter((b: any) => b.seat === my).map((b: any) => <Countdown key={b.card} deadline={b.deadline} label="choose within" />)}
        </section>
      ) : null}

      <section class="panel auctions" aria-label="open auctions">
        <h3>Auctions ({(pic.auctions ?? []).length}){pic.result && (pic.auctions ?? []).length ? ": never settled, the game is over" : ""}</h3>
        <ul>{(pic.auctions ?? []).map((a: any) => <Auction key={a.id} {...props} a={a} />)}</ul>
      </section>

      {my != null && (ready || endTurn || vote || quit || ["auction", "company_auction", "give"].some((k) => findLegal(legal, k).length)) ? (
        <section class="panel mine" aria-label="your moves">
          <div class="actions">
            {ready ? <button class="ready" onClick={() => act(ready)}>I'm done auctioning (ready)</button> : null}
            {endTurn ? <button class="end-turn" onClick={() => act(endTurn)}>End my turn</button> : null}
            {vote ? <button class="vote-end" aria-pressed={!vote.agree} onClick={() => act(vote)}>{vote.agree ? "Vote to end the game" : "Withdraw my end vote"}</button> : null}
          </div>
          <SellForm {...props} type="auction" label="sell" />
          <SellForm {...props} type="company_auction" label="Company card" />
          <GiftForm {...props} />
          {quit ? <button class="quit danger" onClick={() => { if (confirm("Leave this game for good?")) act(quit); }}>Quit the game</button> : null}
        </section>
      ) : null}

      <section class="panel players" aria-label="players">
        <h3>Players</h3>
        <ul>
          {(pic.players ?? []).map((p: any) => (
            <li key={p.seat} class={`player${p.seat === pic.current && pic.phase === "turns" ? " current" : ""}${p.seat === my ? " me" : ""}${p.active ? "" : " gone"}`} data-seat={p.seat}>
              <div class="row">
                <strong>{who(pic, p.seat)}</strong>
                <span class="dollars">${p.dollars}</span>
                {p.committed ? <small>(${p.committed} bid)</small> : null}
                {p.ready ? <span class="tag">ready</span> : null}
                {p.end_vote ? <span class="tag">votes to end</span> : null}
                {!p.active ? <span class="tag">quit</span> : null}
                {!(pic.seats ?? []).find((s: any) => s.seat === p.seat)?.connected ? <span class="tag away">away</span> : null}
              </div>
              <div class="hand">{p.resources.map(([r, t]: [number, number | null]) => <Card key={r} pic={pic} id={r} on={t} />)}</div>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}

function describe(e: Record<string, any>, pic: Pic): string | null {
  const n = (s: any) => who(pic, s);
  const c = (id: any) => cardText(pic, id);
  switch (e.type) {
    case "opening_ended": return `the opening ends: ${e.reason === "ready" ? "everyone is ready" : "its time is up"}`;
    case "turn_started": return `turn ${e.turn}: ${n(e.seat)} to play, ${clockText(e.deadline - e.at)} to go`;
    case "deck_reshuffled": return `the aside pile is shuffled into the deck: ${e.count} cards`;
    case "card_drawn": return `${n(e.seat)} draws ${c(e.card)}`;
    case "no_card_drawn": return `${n(e.seat)} draws nothing: the deck is empty`;
    case "auction_opened": return `${n(e.auction.seller)} opens auction ${e.auction.id} for ${e.auction.lot.map(c).join(" + ")}, bids from $${e.auction.start_price}`;
    case "bid": return `auction ${e.auction}: ${n(e.seat)} bids $${e.amount}`;
    case "auction_closed":
      if (e.outcome === "sold" && e.price === 0) return `auction ${e.auction}: ${n(e.winner)} takes it for free`;
      if (e.outcome === "sold") return `auction ${e.auction}: sold to ${n(e.winner)} for $${e.price} (${e.reason === "quiet" ? "no bid for a while" : e.reason === "seller" ? "by the seller" : e.reason})`;
      return `auction ${e.auction}: ${String(e.outcome).replace("_", " ")}`;
    case "card_placed": return `${n(e.seat)} ${e.reason === "paired" ? "pairs" : e.reason === "bought" ? "places the bought" : "places the unsold"} ${c(e.tourist)} on ${c(e.resource)}${e.profit ? `: profit $${e.paid}` : ""}`;
    case "card_aside": return `${c(e.card)} goes aside`;
    case "tourists_cleared": return `${n(e.seat)}'s tourists leave: ${e.cards.length} card(s) aside`;
    case "turn_ended": return `${n(e.seat)}'s turn ${e.turn} ends${e.reason === "timeout" ? " (time is up)" : ""}`;
    case "gift": return `${n(e.seat)} gives ${n(e.to)} $${e.amount}`;
    case "ready": return `${n(e.seat)} is done auctioning`;
    case "end_vote": return `${n(e.seat)} ${e.agree ? "votes to end the game" : "withdraws the vote to end"}`;
    case "player_quit": return `${n(e.seat)} quits: $${e.dollars} go to the Company`;
    case "placement_owed": return `${n(e.seat)} chooses where ${c(e.card)} goes`;
    case "bid_lapsed": return `auction ${e.auction}: ${n(e.seat)}'s bid of $${e.amount} lapses`;
    case "game_ended": return `game over (${e.reason}): ${(e.winners ?? []).map(n).join(" and ") || "nobody"} won; ${(e.dollars ?? []).map((d: number, s: number) => `${names(pic)[s]} $${d}`).join(", ")}`;
    default: return null;
  }
}

/** Bids one after another on one auction read as one line: "auction 3: 12 bids, now $34 by Ann". */
const runs: GameModule["runs"] = {
  key: (e) => (e.type === "bid" ? `bid:${e.auction}` : null),
  line: (events, pic) => {
    const last = events[events.length - 1];
    return `auction ${last.auction}: ${events.length} bids, now $${last.amount} by ${who(pic, last.seat)}`;
  },
};

export const parsimonia: GameModule = { title: "Parsimonia", View, describe, runs };
