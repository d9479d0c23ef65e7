import { describe, expect, it } from "vitest";
import { choose } from "../examples/bot.mjs";

describe("the JavaScript bot of docs/bots.md", () => {
  it("sells to the high bidder at the price it saw, so that a bid moved meanwhile is refused, not sold for", () => {
    const v = { game: "parsimonia", seat: 0, players: [],
      auctions: [{ id: 3, seller: 0, high_bidder: 1, high: 14, bids: [[2, 9], [1, 14]] }] };
    const legal = [{ type: "close", auction: 3, winner: null }, { type: "close", auction: 3, winner: 2 },
      { type: "close", auction: 3, winner: 1 }];
    expect(choose(v, legal)).toEqual({ type: "close", auction: 3, winner: 1, price: 14 });
  });
});
