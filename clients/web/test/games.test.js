import { describe, expect, it } from "vitest";
import { commandLabel, describe as kupcyLine, effectText, kupcyCard } from "../src/games/kupcy-words.ts";
import { lastTrade, leaders, marketState, score, splitFor, strikingCharter } from "../src/games/kupcy-rules.js";
import { actionPoints, placeOf, rankAfterAdd } from "../src/games/tulips.tsx";
import { parseSeatCode } from "../src/app/seatcode.ts";
import { groupLog } from "../src/games/common.tsx";
import { parsimonia } from "../src/games/parsimonia.tsx";
import { commandFrom, commandLabel as genericLabel, valueText } from "../src/games/generic.tsx";
import { gameModule } from "../src/games/index.tsx";

describe("Gift of Tulips points (docs/rules/gift-of-tulips.md)", () => {
  const pic = {
    cards: [[0, "pink", 2, false], [1, "blue", 4, false], [2, "purple", 3, false]],
    scoring: { keep: [0, 0, 1, 2], give_bonus: [3, 2, 1, 0] },
    festival: { ranking: [["pink", 6], ["blue", 4]] },
  };
  it("keep and give by the variety's place; an absent variety counts as 4th", () => {
    expect(actionPoints(pic, 0)).toEqual({ place: 1, keep: 0, give: 5 });
    expect(actionPoints(pic, 1)).toEqual({ place: 2, keep: 0, give: 6 });
    expect(actionPoints(pic, 2)).toEqual({ place: 4, keep: 2, give: 3 });
    expect(placeOf([["a", 9], ["b", 8], ["c", 7], ["d", 6], ["e", 5]], "e")).toBe(4);
  });
  it("an added card moves its variety up past equal or lower totals", () => {
    expect(rankAfterAdd(pic.festival.ranking, "blue", 2)).toEqual([["blue", 6], ["pink", 6]]);
    expect(rankAfterAdd(pic.festival.ranking, "purple", 3)).toEqual([["pink", 6], ["blue", 4], ["purple", 3]]);
  });
});

describe("Kupcy (docs/rules/kupcy.md)", () => {
  // goods 0..3 (rus 3, rus 5, west 5, byzantium 7), money 4..5 (rus 5, west 5), merchants 6..7, a charter 8
  const cards = [[0, "goods", "rus", 3, null], [1, "goods", "rus", 5, null], [2, "goods", "west", 5, null],
    [3, "goods", "byzantium", 7, null], [4, "money", "rus", 5, null], [5, "money", "west", 5, null],
    [6, "merchant", "rus", 0, null], [7, "merchant", "west", 0, null], [8, "charter", null, 0, "gambling_loss"]];
  const pic = () => ({ cards, seats: [{ seat: 0, name: "Ada" }, { seat: 1, name: "Bo" }, { seat: 2, name: "Cy" }], seat_count: 3, seat: 0 });
  const table = (p) => new Map(p.cards.map(([id, kind, origin, value, charter]) => [id, { id, kind, origin, value, charter }]));

  it("names cards and concrete commands in words", () => {
    const p = pic();
    expect(kupcyCard(p, 0)).toBe("Rus goods 3");
    expect(kupcyCard(p, 4)).toBe("Rus grivna 5");
    expect(kupcyCard(p, 7)).toBe("the Western merchant");
    expect(kupcyCard(p, 8)).toBe("the gambling loss charter");
    expect(commandLabel(p, { type: "split", warehouse: [0, 6] })).toBe("Warehouse: Rus goods 3, the Rus merchant");
    expect(commandLabel(p, { type: "keep", where: "ship", out: 0 })).toBe("Into the ship, Rus goods 3 to the warehouse");
    expect(effectText({ zone: "warehouse", take: "choice", count: 2 })).toBe("pay 2 warehouse cards of one's choice");
    expect(effectText({ zone: "ship", take: "random", count: 2 })).toBe("lose 2 ship cards at random");
  });

  it("compares offers: the merchant beats every price, then value, then money of the goods' origin", () => {
    const t = table(pic());
    expect(leaders([[1, 3], [2, 6]], 1, t)).toEqual([2]); // rus goods: the rus merchant beats a 7
    expect(leaders([[1, 1], [2, 2]], 0, t)).toEqual([1, 2]); // two 5s, no rus money: a tie
    expect(leaders([[1, 2], [2, 4]], 0, t)).toEqual([2]); // a rus grivna 5 beats a west goods 5 for rus goods
    expect(leaders([[1, 5], [2, 2]], 0, t)).toEqual([1, 2]); // west money is not the goods' origin: a tie
  });

  it("two picked cards make the split only when a legal template names them", () => {
    const legal = [{ type: "split", warehouse: [0, 2] }, { type: "split", warehouse: [0, 5] }, { type: "offer", card: 2 }];
    expect(splitFor(legal, [2, 0])).toEqual({ type: "split", warehouse: [0, 2] });
    expect(splitFor(legal, [2, 5])).toBeNull();
    expect(splitFor([], [0, 2])).toBeNull();
  });

  it("scores goods and money, each merchant doubling its origin", () => {
    const t = table(pic());
    expect(score([0, 1, 2], t)).toBe(13);
    expect(score([0, 1, 2, 6], t)).toBe(21);
    expect(score([8, 7], t)).toBe(0);
  });

  it("a tie re-bid: the tied seats owe a new sealed offer, the earlier round is shown with its tie", () => {
    const p = { ...pic(), sealed: null, market: { seller: 1, goods: 0, last_round: false, round: 2, offers: [[0, 1, 1], [2, 2, 1]],
      seats: [0, 2], chosen: [2], deadline: 5000 } };
    const m = marketState(p);
    expect(m.rebid).toBe(true);
    expect(m.owe).toBe(true);
    expect(m.sealed).toEqual([{ seat: 0, offered: false }, { seat: 2, offered: true }]);
    expect(m.rounds).toEqual([{ round: 1, offers: [[0, 1], [2, 2]], leaders: [0, 2] }]);
    // once sealed, one's own offer shows (the private part), the others' never do
    const sealed = marketState({ ...p, sealed: 3, market: { ...p.market, chosen: [0, 2] } });
    expect(sealed.owe).toBe(false);
    expect(sealed.mine).toBe(3);
    // the seller owes nothing and holds no sealed offer
    expect(marketState({ ...p, seat: 1 }).owe).toBe(false);
    expect(marketState({ ...p, seat: 1, sealed: 4 }).mine).toBe(null);
  });

  it("the last trade's reveal from the log, until the next trade opens", () => {
    const ev = (event) => ({ event });
    const log = [ev({ type: "trade_opened", seller: 1, goods: 0, seats: [0, 2] }),
      ev({ type: "offers_revealed", round: 1, offers: [[0, 1], [2, 2]], leaders: [0, 2], defaulted: [] }),
      ev({ type: "rebid", round: 2, seats: [0, 2], dropped: [] }),
      ev({ type: "offers_revealed", round: 2, offers: [[0, 3], [2, 4]], leaders: [0], defaulted: [2] }),
      ev({ type: "trade_closed", seller: 1, goods: 0, winner: 0, to_seller: [1, 2, 3, 4], to_deck: [] }),
      ev({ type: "stow_owed", seats: [0, 2] })];
    const last = lastTrade(log);
    expect(last.winner).toBe(0);
    expect(last.rounds.map((r) => r.round)).toEqual([1, 2]);
    expect(last.rounds[1].defaulted).toEqual([2]);
    expect(lastTrade([...log, ev({ type: "trade_opened", seller: 2, goods: 3, seats: [0, 1] })])).toBeNull();
    expect(lastTrade([])).toBeNull();
  });

  it("a charter shows while its turn lasts", () => {
    const ev = (event) => ({ event });
    const strike = { type: "charter", seat: 0, card: 8, charter: "gambling_loss", zone: "warehouse", lost: [], owed: { cards: 1 } };
    const log = [ev({ type: "card_drawn", seat: 0, turn: 4, card: 8 }), ev(strike), ev({ type: "paid", seat: 0, card: 2 })];
    expect(strikingCharter(log)).toBe(strike);
    expect(strikingCharter([...log, ev({ type: "card_drawn", seat: 1, turn: 5 })])).toBeNull();
  });

  it("the log in words: a sealed offer hides its card from the others, a revealed tie says so", () => {
    const p = pic();
    expect(kupcyLine({ type: "offer_made", seat: 1 }, p)).toBe("Bo makes a sealed offer");
    expect(kupcyLine({ type: "offer_made", seat: 0, round: 2, choice: 1 }, p)).toBe("Ada (you) makes a sealed offer: Rus goods 5 (re-bid round 2)");
    expect(kupcyLine({ type: "offers_revealed", round: 1, offers: [[0, 1], [2, 2]], leaders: [0, 2] }, p))
      .toBe("offers revealed (round 1, a tie): Ada (you) Rus goods 5, Cy Western goods 5");
    expect(kupcyLine({ type: "charter", seat: 2, charter: "robbery", zone: "ship", lost: [0], owed: null }, p))
      .toBe("robbery strikes Cy (ship): Rus goods 3 lost");
  });
});

describe("seat codes", () => {
  it("reads a link, a hash or a pasted code", () => {
    expect(parseSeatCode("http://192.168.1.20:8765/#t3/Xq2c4e71")).toEqual({ table: "t3", token: "Xq2c4e71" });
    expect(parseSeatCode(" t12 AbC9 ")).toEqual({ table: "t12", token: "AbC9" });
    expect(parseSeatCode("#t3")).toBeNull();
  });
});

describe("the event log (src/games/common.tsx)", () => {
  const pic = { seats: [{ seat: 0, name: "Ann" }, { seat: 1, name: "Bo" }], seat_count: 2, seat: 1 };
  const log = [
    { type: "auction_opened", auction: { id: 3 } }, { type: "bid", auction: 3, seat: 0, amount: 1 },
    { type: "bid", auction: 3, seat: 1, amount: 2 }, { type: "bid", auction: 3, seat: 0, amount: 3 },
    { type: "bid", auction: 4, seat: 1, amount: 9 }, { type: "bid", auction: 3, seat: 0, amount: 4 },
    { type: "bid", auction: 3, seat: 1, amount: 5 },
  ].map((event, i) => ({ seq: i + 1, time: i, event }));

  it("groups consecutive bids on one auction into one entry, and only those", () => {
    const runs = groupLog(log, parsimonia.runs);
    expect(runs.map((r) => r.map((l) => l.seq))).toEqual([[1], [2, 3, 4], [5], [6, 7]]);
    expect(groupLog(log, undefined)).toHaveLength(log.length); // a game without runs: one entry per event
  });

  it("says a run of bids in one line: how many, the bid now and its bidder", () => {
    const [, three, , two] = groupLog(log, parsimonia.runs);
    expect(parsimonia.runs.line(three.map((l) => l.event), pic)).toBe("auction 3: 3 bids, now $3 by Ann");
    expect(parsimonia.runs.line(two.map((l) => l.event), pic)).toBe("auction 3: 2 bids, now $5 by Bo (you)");
  });
});

describe("Parsimonia in words (src/games/parsimonia.tsx)", () => {
  it("an auction that opens reads as an opening with its start price, not as a sale", () => {
    const pic = { seats: [{ seat: 0, name: "Ann" }], seat_count: 2, seat: 1, cards: [[36, "resource", 4, 55]] };
    const line = parsimonia.describe({ type: "auction_opened", at: 0, auction: { id: 154, seller: 0, lot: [36], start_price: 5778 } }, pic);
    expect(line).toBe("Ann opens auction 154 for resource type 4 ($55), bids from $5778");
  });
});

describe("a game the page has no module for (src/games/generic.tsx)", () => {
  const template = { type: "choose", value: { min: 0, max: 100 }, round: 2 };
  it("gets the generic view, titled as the server says", () => {
    expect(gameModule("toy-sealed", "Highest sealed number").title).toBe("Highest sealed number");
    expect(gameModule("toy-sealed").title).toBe("toy-sealed");
    expect(gameModule("kupcy").title).not.toBe("kupcy");
  });
  it("sends a template's fixed fields as given and its ranges as chosen, kept within their bounds", () => {
    expect(commandFrom(template, {})).toEqual({ type: "choose", value: 0, round: 2 });
    expect(commandFrom(template, { value: "42" })).toEqual({ type: "choose", value: 42, round: 2 });
    expect(commandFrom(template, { value: "1000" })).toEqual({ type: "choose", value: 100, round: 2 });
    expect(commandFrom(template, { value: "-3.5" })).toEqual({ type: "choose", value: 0, round: 2 });
    expect(commandFrom(template, { value: "x" })).toEqual({ type: "choose", value: 0, round: 2 });
  });
  it("says a command and a value in words", () => {
    expect(genericLabel(template)).toBe("choose (round 2)");
    expect(genericLabel({ type: "vote_end", agree: true })).toBe("vote end (agree yes)");
    expect(valueText([1, 2])).toBe("1, 2");
    expect(valueText(null)).toBe("–");
    expect(valueText({ a: [], b: false })).toBe("a: none; b: no");
  });
});
