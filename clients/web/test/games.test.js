import { describe, expect, it } from "vitest";
import { commandLabel, kupcyCard } from "../src/games/kupcy.tsx";
import { actionPoints, placeOf, rankAfterAdd } from "../src/games/tulips.tsx";
import { parseSeatCode } from "../src/app/seatcode.ts";

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

describe("Kupcy labels", () => {
  const pic = { cards: [[5, "goods", "rus", 3, null], [6, "merchant", "west", 0, null], [7, "charter", null, 0, "tax"]] };
  it("names cards and concrete commands", () => {
    expect(kupcyCard(pic, 5)).toBe("rus goods 3");
    expect(kupcyCard(pic, 6)).toBe("west merchant");
    expect(kupcyCard(pic, 7)).toBe("charter tax");
    expect(commandLabel(pic, { type: "split", warehouse: [5, 6] })).toBe("Warehouse: rus goods 3, west merchant");
    expect(commandLabel(pic, { type: "keep", where: "ship", out: 5 })).toBe("Into the ship, rus goods 3 to the warehouse");
  });
});

describe("seat codes", () => {
  it("reads a link, a hash or a pasted code", () => {
    expect(parseSeatCode("http://192.168.1.20:8765/#t3/Xq2c4e71")).toEqual({ table: "t3", token: "Xq2c4e71" });
    expect(parseSeatCode(" t12 AbC9 ")).toEqual({ table: "t12", token: "AbC9" });
    expect(parseSeatCode("#t3")).toBeNull();
  });
});
