// Kupcy (protocol/SPEC.md, "Kupcy"; docs/rules/kupcy.md): the ship (the seat's own, private), the warehouses,
// the market with its sealed offers, their countdown and the tie re-bids, the last trade's reveal, charters as
// they strike, stowing and the last round's sale. Every legal template is a concrete command: each control below
// sends one of them, and nothing else is offered.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { eventLog } from "../app/conn";
import { Countdown } from "../app/countdown";
import { overText, who, type GameModule, type GameProps, type Pic } from "./common";
import { cardTable, lastTrade, marketState, score, splitFor, strikingCharter } from "./kupcy-rules.js";
import { cards, charterName, commandLabel, describe, effectText, kupcyCard, ORIGIN_NAMES, COINS } from "./kupcy-words";

const DEADLINES: [string, string][] = [["split", "split"], ["decide", "decision"], ["bid", "sealed offers"], ["stow", "stowing"]];
const STEPS: Record<string, string> = { keep: "decides where the drawn card goes", pay: "pays a charter", trade: "is selling: sealed offers",
  stow: "waits for the ships to be stowed", sell: "may sell a goods card" };
const HANDLED = new Set(["split", "offer", "keep", "pay", "load", "unload", "sell", "pass"]);

function KCard(props: { pic: Pic; id: number }) {
  const c = cardTable(props.pic).get(props.id);
  if (!c) return <span class="kcard" data-card={props.id}>#{props.id}</span>;
  const where = ORIGIN_NAMES[c.origin ?? ""] ?? "";
  const body = c.kind === "charter" ? <><b aria-hidden="true">⚡</b> {charterName(c.charter)}</>
    : c.kind === "merchant" ? <><b aria-hidden="true">★</b> {where} merchant</>
    : <><b>{c.value}</b> {where} {c.kind === "money" ? COINS[c.origin ?? ""] ?? "money" : "goods"}</>;
  return <span class={`kcard k-${c.kind}${c.origin ? ` o-${c.origin}` : ""}`} data-card={props.id} title={kupcyCard(props.pic, props.id)}>{body}</span>;
}

const Cards = (props: { pic: Pic; ids: number[] | null | undefined; none?: string }) =>
  (props.ids ?? []).length ? <>{(props.ids ?? []).map((id, i) => <Fragment key={id}>{i ? " " : ""}<KCard pic={props.pic} id={id} /></Fragment>)}</> : <span class="small">{props.none ?? "none"}</span>;

/** A button for one legal command: its name is the text it shows (no aria-label that says it otherwise). */
function Move(props: { pic: Pic; c: Record<string, any>; act: GameProps["act"]; label?: any }) {
  const { c } = props;
  return (
    <button class={`k-${c.type}`} data-card={c.card ?? c.out ?? undefined} onClick={() => props.act(c)}>
      {props.label ?? commandLabel(props.pic, c)}
    </button>
  );
}

function Status({ pic }: GameProps) {
  const dl = pic.deadlines ?? {};
  const head = pic.result ? overText(pic) : pic.phase === "split" ? "The opening split: each player seals 2 cards for the warehouse"
    : pic.phase === "over" ? "Game over"
    : `${pic.phase === "final" ? "The last round" : `Turn ${pic.turn}`}: ${who(pic, pic.current)}${pic.step ? ` ${STEPS[pic.step] ?? pic.step}` : " to play"}`;
  return (
    <section class="panel status" aria-label="game status">
      <div class="row">
        <strong data-testid="phase">{head}</strong>
        {DEADLINES.filter(([k]) => dl[k] != null).map(([k, label]) => <Countdown key={k} deadline={dl[k]} label={label} />)}
      </div>
      <div class="row small"><span>deck {pic.deck_count}</span><span>out of the game {(pic.out ?? []).length}</span>
        {(pic.last_round ?? []).length ? <span>still to sell: {(pic.last_round as number[]).map((s) => who(pic, s)).join(", ")}</span> : null}</div>
    </section>
  );
}

function Split({ pic, legal, act }: GameProps) {
  const splits = legal.filter((c) => c.type === "split");
  const [picked, setPicked] = useState<number[]>([]);
  const sp = pic.split;
  if (!sp) return null;
  const chosen = picked.length === 2 ? splitFor(legal, picked) : null;
  const toggle = (id: number) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : p.length >= 2 ? [p[1], id] : [...p, id]));
  return (
    <section class="panel k-split-panel" aria-label="the opening split">
      {splits.length ? (
        <>
          <h3>Your 7 cards: pick the 2 that go to the warehouse (everyone will see them); the other 5 are your ship</h3>
          <div class="actions" role="group" aria-label="cards dealt">
            {(pic.ship ?? []).map((id: number) => (
              <button key={id} class={`k-pick${picked.includes(id) ? " picked" : ""}`} aria-pressed={picked.includes(id)} data-card={id}
                onClick={() => toggle(id)}><KCard pic={pic} id={id} /></button>))}
          </div>
          <div class="actions">
            <button class="k-split" disabled={!chosen} onClick={() => chosen && act(chosen)}>
              {chosen ? `Seal the split: ${cards(pic, chosen.warehouse)} to the warehouse` : `Pick ${2 - picked.length} more card(s)`}
            </button>
          </div>
        </>
      ) : pic.sealed ? <h3>Your split is sealed: <Cards pic={pic} ids={pic.sealed} /> go to the warehouse</h3> : <h3>The players split their hands</h3>}
      <p class="small">{(sp.seats ?? []).map((s: number) => `${who(pic, s)}: ${(sp.chosen ?? []).includes(s) ? "sealed" : "choosing"}`).join(" · ")}</p>
    </section>
  );
}

function Rounds(props: { pic: Pic; rounds: { round: number; offers: [number, number][]; leaders: number[] }[] }) {
  const { pic } = props;
  return (
    <ol class="k-rounds">
      {props.rounds.map((r) => (
        <li key={r.round} data-round={r.round} class="k-round">
          <span class="small">round {r.round}{r.leaders.length > 1 ? ", a tie" : ""}:</span>{" "}
          {r.offers.map(([s, c]) => (
            <span key={s} class={`k-offered${r.leaders.includes(s) ? " lead" : ""}`} data-seat={s}>
              {who(pic, s)} <KCard pic={pic} id={c} />{r.leaders.includes(s) ? (r.leaders.length > 1 ? " (tied)" : " (best)") : ""}
            </span>))}
        </li>))}
    </ol>
  );
}

function Market(props: GameProps) {
  const { pic, legal, act, table } = props;
  const m = marketState(pic);
  if (!m) {
    const last = lastTrade(props.log ?? eventLog(table));
    if (!last) return null;
    return (
      <section class="panel market k-reveal" aria-label="the last trade" aria-live="polite">
        <h3>Last trade: {who(pic, last.seller)} sold <KCard pic={pic} id={last.goods} /></h3>
        <Rounds pic={pic} rounds={last.rounds} />
        <p data-testid="trade-winner">{last.winner == null ? `Nobody won: the goods stay with ${who(pic, last.seller)}` : `${who(pic, last.winner)} won the goods`}
          {last.toSeller.length ? <>; {who(pic, last.seller)} takes <Cards pic={pic} ids={last.toSeller} /></> : null}
          {last.toDeck.length ? <>; back into the deck: <Cards pic={pic} ids={last.toDeck} /></> : null}</p>
      </section>
    );
  }
  const offers = legal.filter((c) => c.type === "offer");
  const tied = m.sealed.map((s: any) => who(pic, s.seat)).join(" and ");
  return (
    <section class={`panel market${m.rebid ? " rebid" : ""}`} aria-label="market" data-round={m.round}>
      <h3>{m.lastRound ? "Last round: " : ""}{who(pic, m.seller)} sells <KCard pic={pic} id={m.goods} /></h3>
      {m.rebid ? <p class="k-rebid" role="status" data-testid="rebid">A tie! Round {m.round}: {tied} offer one more card each, sealed.</p> : null}
      <div class="row">
        <span>Sealed offers{m.rebid ? ` (round ${m.round})` : ""}:</span>
        {m.sealed.map((s: any) => <span key={s.seat} class={`tag${s.offered ? " sealed" : ""}`} data-seat={s.seat}>{who(pic, s.seat)}: {s.offered ? "sealed ✓" : "thinking…"}</span>)}
        <Countdown deadline={m.deadline} label="offers close in" />
      </div>
      {m.mine != null ? <p data-testid="my-offer">Your sealed offer: <KCard pic={pic} id={m.mine} /> (nobody sees it before the reveal)</p> : null}
      {offers.length ? (
        <>
          <p class="small">Offer one card of your ship: the highest value wins (a money card of the goods' origin wins a tie of
            values); {ORIGIN_NAMES[cardTable(pic).get(m.goods)?.origin ?? ""] ?? "its"} merchant beats every price. Every card offered goes to the seller.</p>
          <div class="actions" role="group" aria-label="your sealed offer">
            {offers.map((c) => <Move key={c.card} pic={pic} c={c} act={act} label={<>Offer <KCard pic={pic} id={c.card} /></>} />)}
          </div>
        </>
      ) : null}
      {m.rounds.length ? <Rounds pic={pic} rounds={m.rounds} /> : null}
    </section>
  );
}

function Charter({ pic, legal, act, table, log }: GameProps) {
  const strike = strikingCharter(log ?? eventLog(table));
  const debt = pic.debt;
  const pays = legal.filter((c) => c.type === "pay");
  if (!strike && !debt) return null;
  const name = strike?.charter ?? debt?.charter;
  const seat = strike?.seat ?? debt?.seat;
  return (
    <section class="panel k-charter" aria-label="charter" aria-live="polite">
      <h3>⚡ The {charterName(name)} charter strikes {who(pic, seat)}: {effectText((pic.charters ?? {})[name])}</h3>
      {strike && (strike.lost ?? []).length ? <p>Lost: <Cards pic={pic} ids={strike.lost} /></p> : null}
      {debt ? (
        <>
          <p>{debt.cards != null ? `${debt.cards} card(s)` : `cards worth ${debt.worth}`} still to pay from the {debt.zone}
            {" "}<Countdown deadline={pic.deadlines?.decide} label="decide within" /></p>
          {pays.length ? <div class="actions" role="group" aria-label="pay the charter">{pays.map((c) => <Move key={c.card} pic={pic} c={c} act={act} label={<>Pay <KCard pic={pic} id={c.card} /></>} />)}</div> : null}
        </>
      ) : null}
    </section>
  );
}

function Drawn({ pic, legal, act }: GameProps) {
  const keeps = legal.filter((c) => c.type === "keep");
  if (pic.step !== "keep") return null;
  if (!keeps.length || pic.drawn == null) return <section class="panel small">{who(pic, pic.current)} decides where the drawn card goes (hidden until it is placed).</section>;
  return (
    <section class="panel k-drawn" aria-label="drawn card">
      <h3>You drew <KCard pic={pic} id={pic.drawn} />: where does it go? <Countdown deadline={pic.deadlines?.decide} label="decide within" /></h3>
      <div class="actions">
        {keeps.map((c) => <Move key={String(c.out)} pic={pic} c={c} act={act}
          label={c.where === "warehouse" ? "To the warehouse (everyone sees it)" : <>Into the ship, <KCard pic={pic} id={c.out} /> to the warehouse</>} />)}
      </div>
    </section>
  );
}

function Stow({ pic, legal, act }: GameProps) {
  const loads = legal.filter((c) => c.type === "load"), unloads = legal.filter((c) => c.type === "unload");
  const stowing: number[] = pic.stowing ?? [];
  if (!stowing.length) return null;
  if (!loads.length && !unloads.length) return <section class="panel small">Stowing: {stowing.map((s) => who(pic, s)).join(", ")}</section>;
  const me = (pic.players ?? []).find((p: any) => p.seat === pic.seat);
  const target = Math.min(5, me?.owned ?? 5);
  return (
    <section class="panel k-stow" aria-label="stow your ship">
      <h3>Stow your ship: {(pic.ship ?? []).length} of {target} cards <Countdown deadline={pic.deadlines?.stow} label="stow within" /></h3>
      {loads.length ? <div class="actions" role="group" aria-label="load from the warehouse">{loads.map((c) => <Move key={c.card} pic={pic} c={c} act={act} label={<>Load <KCard pic={pic} id={c.card} /></>} />)}</div> : null}
      {unloads.length ? <div class="actions" role="group" aria-label="unload to the warehouse">{unloads.map((c) => <Move key={c.card} pic={pic} c={c} act={act} label={<>Unload <KCard pic={pic} id={c.card} /></>} />)}</div> : null}
    </section>
  );
}

function Sale({ pic, legal, act }: GameProps) {
  const sells = legal.filter((c) => c.type === "sell" || c.type === "pass");
  if (pic.step !== "sell") return null;
  if (!sells.length) return <section class="panel small">{who(pic, pic.current)} may sell one goods card.</section>;
  return (
    <section class="panel k-sale" aria-label="the last round's sale">
      <h3>The last round: sell one goods card of yours, or pass <Countdown deadline={pic.deadlines?.decide} label="decide within" /></h3>
      <div class="actions">{sells.map((c) => <Move key={c.card ?? "pass"} pic={pic} c={c} act={act} label={c.type === "pass" ? "Pass (no sale)" : <>Sell <KCard pic={pic} id={c.card} /></>} />)}</div>
    </section>
  );
}

function Players({ pic }: GameProps) {
  const table = cardTable(pic);
  const m = pic.market;
  return (
    <section class="panel players" aria-label="players">
      <h3>Merchants</h3>
      <ul>
        {(pic.players ?? []).map((p: any) => {
          const away = !(pic.seats ?? []).find((s: any) => s.seat === p.seat)?.connected;
          return (
            <li key={p.seat} class={`player${p.seat === pic.current ? " current" : ""}${p.seat === pic.seat ? " me" : ""}`} data-seat={p.seat}>
              <div class="row">
                <strong>{who(pic, p.seat)}</strong>
                {p.seat === pic.current && pic.phase !== "over" ? <span class="tag turn">to play</span> : null}
                <span>ship {p.ship_count}</span><span>{p.owned} card(s)</span>
                <span class="points" title="the public part: the warehouse's score">warehouse {score(p.warehouse ?? [], table)} pt</span>
                {p.seat === pic.seat && pic.ship ? <span class="points" data-testid="my-score">your score {score([...(pic.ship ?? []), ...(p.warehouse ?? [])], table)} pt</span> : null}
                {(pic.stowing ?? []).includes(p.seat) ? <span class="tag">stowing</span> : null}
                {m && (m.seats ?? []).includes(p.seat) ? <span class="tag">{(m.chosen ?? []).includes(p.seat) ? "offer sealed" : "to offer"}</span> : null}
                {m && m.seller === p.seat ? <span class="tag">selling</span> : null}
                {p.returned ? <small>{p.returned} charter(s) returned at the deal</small> : null}
                {away ? <span class="tag away">away</span> : null}
              </div>
              <div class="hand">warehouse: <Cards pic={pic} ids={p.warehouse} none="empty" /></div>
            </li>);
        })}
      </ul>
    </section>
  );
}

function View(props: GameProps) {
  const { pic, legal, act } = props;
  const other = legal.filter((c) => !HANDLED.has(c.type));
  return (
    <div class="kupcy">
      <Status {...props} />
      {pic.phase === "split" ? <Split {...props} /> : null}
      <Drawn {...props} />
      <Charter {...props} />
      <Market {...props} />
      <Stow {...props} />
      <Sale {...props} />
      {other.length ? <section class="panel"><div class="actions">{other.map((c, i) => <Move key={i} pic={pic} c={c} act={act} />)}</div></section> : null}
      {pic.ship && pic.phase !== "split" ? (
        <section class="panel k-ship" aria-label="your ship">
          <h3>Your ship (only you see it)</h3>
          <div class="hand"><Cards pic={pic} ids={pic.ship} none="empty" /></div>
        </section>
      ) : null}
      <Players {...props} />
      {(pic.out ?? []).length ? <section class="panel small" aria-label="out of the game">Out of the game: <Cards pic={pic} ids={pic.out} /></section> : null}
    </div>
  );
}

export const kupcy: GameModule = { title: "Kupcy", View, describe };
