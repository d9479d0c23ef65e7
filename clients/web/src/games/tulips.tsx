// Gift of Tulips (docs/rules/gift-of-tulips.md): the festival ranking, bouquets, the drawn card and what
// keep, give and add would score now, computed from the public view and the static scoring tables.
import { Countdown } from "../app/countdown";
import { findLegal } from "../protocol/index.js";
import { names, overText, who, type GameModule, type GameProps, type Pic } from "./common";

const PLACES = ["1st", "2nd", "3rd", "4th"];

function cardOf(pic: Pic, id: number | null | undefined): { variety: string; value: number } | null {
  const row = (pic.cards ?? []).find((c: any[]) => c[0] === id);
  if (!row) return null;
  const variety = typeof row[1] === "number" ? (pic.varieties ?? [])[row[1]] ?? String(row[1]) : String(row[1]);
  return { variety, value: row[2] };
}

export function tulipText(pic: Pic, id: number | null | undefined): string {
  const c = cardOf(pic, id);
  return c ? `${c.variety} ${c.value}` : `card ${id}`;
}

/** The festival place (1..4) a variety counts as for keep and give: below 4th or absent counts as 4th. */
export function placeOf(ranking: [string, number][], variety: string): number {
  const i = ranking.findIndex(([v]) => v === variety);
  return i < 0 || i >= 4 ? 4 : i + 1;
}

/** The ranking after adding a card of `variety` worth `value` (it moves up past equal or lower totals). */
export function rankAfterAdd(ranking: [string, number][], variety: string, value: number): [string, number][] {
  const total = (ranking.find(([v]) => v === variety)?.[1] ?? 0) + value;
  const rest = ranking.filter(([v]) => v !== variety);
  const at = rest.findIndex(([, t]) => t <= total);
  const out = [...rest];
  out.splice(at < 0 ? out.length : at, 0, [variety, total]);
  return out;
}

/** Points for keep and give of a card now. */
export function actionPoints(pic: Pic, card: number): { keep: number; give: number; place: number } {
  const c = cardOf(pic, card);
  const ranking = pic.festival?.ranking ?? [];
  const place = c ? placeOf(ranking, c.variety) : 4;
  const sc = pic.scoring ?? { keep: [0, 0, 1, 2], give_bonus: [3, 2, 1, 0] };
  return { place, keep: sc.keep[place - 1] ?? 0, give: (c?.value ?? 0) + (sc.give_bonus[place - 1] ?? 0) };
}

function Tulip(props: { pic: Pic; id: number }) {
  const c = cardOf(props.pic, props.id);
  return <span class={`tulip v-${c?.variety ?? "x"}`} data-card={props.id} title={tulipText(props.pic, props.id)}>{c ? `${c.variety} ${c.value}` : "?"}</span>;
}

function View({ pic, legal, act }: GameProps) {
  const dl = pic.deadlines ?? {};
  const ranking: [string, number][] = pic.festival?.ranking ?? [];
  const chooses = findLegal(legal, "choose");
  const keep = findLegal(legal, "keep")[0];
  const gives = findLegal(legal, "give");
  const addOpen = findLegal(legal, "add", { secret: false })[0];
  const addSecret = findLegal(legal, "add", { secret: true })[0];
  const drawn = pic.drawn;
  const pts = drawn != null ? actionPoints(pic, drawn) : null;
  const c = drawn != null ? cardOf(pic, drawn) : null;
  const after = c ? rankAfterAdd(ranking, c.variety, c.value) : null;
  const phase = pic.result ? overText(pic) : pic.phase === "turns" ? `round ${pic.round}, turn ${pic.turn}: ${who(pic, pic.current)} to play` : pic.phase;
  return (
    <div class="tulips">
      <section class="panel status" aria-label="game status">
        <div class="row">
          <strong data-testid="phase">{phase}</strong>
          {dl.setup != null ? <Countdown deadline={dl.setup} label="set-up" /> : null}
          {dl.action != null ? <Countdown deadline={dl.action} label="action" /> : null}
        </div>
        <div class="row small"><span>deck {pic.deck_count}</span><span data-testid="secret-count">Secret Festival: {pic.secret_count} card(s)</span>
          <span>{pic.turns_each ? `${pic.turns_each} turns each` : ""}</span></div>
      </section>

      <section class="panel festival" aria-label="festival ranking">
        <h3>Festival</h3>
        <ol>{ranking.map(([v, t], i) => <li key={v} class={`v-${v}`}>{PLACES[i] ?? `${i + 1}th`}: <b>{v}</b> {t}</li>)}</ol>
      </section>

      {chooses.length ? (
        <section class="panel" aria-label="set-up choice">
          <h3>Choose the card for your bouquet (the other goes face down to the Secret Festival)</h3>
          {chooses.map((ch) => <button key={ch.bouquet} class="choose" onClick={() => act(ch)}>Bouquet: {tulipText(pic, ch.bouquet)}</button>)}
        </section>
      ) : null}

      {drawn != null && pts && c ? (
        <section class="panel drawn" aria-label="drawn card">
          <h3>You drew <Tulip pic={pic} id={drawn} /> ({c.variety} is {PLACES[pts.place - 1]} at the festival)</h3>
          <div class="actions">
            {keep ? <button class="keep" onClick={() => act(keep)}>Keep: +{pts.keep}</button> : null}
            {gives.map((g) => <button key={g.to} class="give" onClick={() => act(g)}>Give to {who(pic, g.to)}: +{pts.give}</button>)}
            {addOpen ? <button class="add" onClick={() => act(addOpen)}>Add to the festival: {c.variety} to {PLACES[(after ?? []).findIndex(([v]) => v === c.variety)] ?? "below 4th"} (+0)</button> : null}
            {addSecret ? <button class="add-secret" onClick={() => act(addSecret)}>Add face down to the Secret Festival (+0)</button> : null}
          </div>
          {(pic.done ?? []).length ? <p class="small">This turn already: {pic.done.join(", ")}</p> : null}
        </section>
      ) : pic.drawing && pic.current !== pic.seat ? <section class="panel small">{who(pic, pic.current)} is deciding on a drawn card.</section> : null}

      {pic.hand?.length && pic.phase === "setup" ? <section class="panel small">Your dealt cards: {pic.hand.map((h: number) => <Tulip key={h} pic={pic} id={h} />)}{pic.chosen != null ? ` (chosen: ${tulipText(pic, pic.chosen)})` : ""}</section> : null}
      {pic.my_secret?.length ? <section class="panel small">Your cards on the Secret Festival: {pic.my_secret.map((h: number) => <Tulip key={h} pic={pic} id={h} />)}</section> : null}

      <section class="panel players" aria-label="players">
        <h3>Bouquets</h3>
        <ul>{(pic.players ?? []).map((p: any) => (
          <li key={p.seat} class={`player${p.seat === pic.current ? " current" : ""}${p.seat === pic.seat ? " me" : ""}`} data-seat={p.seat}>
            <div class="row"><strong>{who(pic, p.seat)}</strong> <span class="points">{p.points} pt</span> <small>{p.secret} secret</small>
              {(pic.setup?.chosen ?? []).includes(p.seat) && pic.phase === "setup" ? <span class="tag">chosen</span> : null}</div>
            <div class="hand">{p.bouquet.map((b: number) => <Tulip key={b} pic={pic} id={b} />)}</div>
          </li>))}</ul>
      </section>
    </div>
  );
}

function describe(e: Record<string, any>, pic: Pic): string | null {
  const n = (s: any) => who(pic, s);
  const t = (id: any) => tulipText(pic, id);
  const rank = (r: [string, number][]) => r.map(([v, x]) => `${v} ${x}`).join(" > ");
  switch (e.type) {
    case "chosen": return "choice" in e ? `${n(e.seat)} puts ${t(e.choice)} in the bouquet` : `${n(e.seat)} has chosen`;
    case "setup_revealed": return `the bouquets open; ${n(e.first)} starts`;
    case "turn_started": return `turn ${e.turn} (round ${e.round}): ${n(e.seat)} to play`;
    case "card_drawn": return `${n(e.seat)} draws${"card" in e ? " " + t(e.card) : " a card"}`;
    case "kept": return `${n(e.seat)} keeps ${t(e.card)} (${PLACES[e.place - 1]}): ${e.points} point(s)`;
    case "given": return `${n(e.seat)} gives ${t(e.card)} to ${n(e.to)} (${PLACES[e.place - 1]}): ${e.points} point(s)`;
    case "added": return `${n(e.seat)} adds ${t(e.card)} to the festival: ${rank(e.ranking)}`;
    case "hidden": return `${n(e.seat)} puts ${"card" in e ? t(e.card) : "a card"} face down on the Secret Festival`;
    case "timed_out": return `${n(e.seat)}'s time is up: the card is ${e.action === "keep" ? "kept" : "added face down"}`;
    case "turn_ended": return `${n(e.seat)}'s turn ${e.turn} ends`;
    case "secret_revealed": return `the Secret Festival shows ${t(e.card)}: ${rank(e.ranking)}`;
    case "majority": return `${PLACES[e.place - 1]} place, ${e.variety}: ${e.awards.map(([s, p]: number[]) => `${n(s)} +${p}`).join(", ") || "nobody"}`;
    case "game_ended": return `game over: ${(e.winners ?? []).map(n).join(" and ")} won; ${(e.points ?? []).map((p: number, s: number) => `${names(pic)[s]} ${p}`).join(", ")}`;
    default: return null;
  }
}

export const tulips: GameModule = { title: "Gift of Tulips", View, describe };
