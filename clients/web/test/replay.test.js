import { describe, expect, it } from "vitest";
import { finishedGames } from "../src/app/standings.tsx";
import { carry, loadReplay, pictureAt, stepAt, tableOf, turnStarts } from "../src/replay/steps.ts";

const v = (turn, extra = {}) => ({ game: "g", turn, seats: [{ seat: 0, name: "Ada", connected: false }], seat_count: 2, ...extra });

describe("the replay's steps", () => {
  it("carry a step's views from the step before when its page left them out", () => {
    const steps = [];
    carry(steps, [{ seq: 1, time: 10, event: { type: "game_started" }, view: v(0), private: [{ hand: [1] }, { hand: [2] }] },
      { seq: 2, time: 10, event: { type: "drew" } }]);
    carry(steps, [{ seq: 3, time: 20, event: { type: "x" }, view: v(1), private: [{ hand: [] }, { hand: [2, 3] }] }]);
    expect(steps.map((s) => s.view.turn)).toEqual([0, 0, 1]);
    expect(steps[1].private).toBe(steps[0].private);
    expect(steps[2].private[1]).toEqual({ hand: [2, 3] });
  });

  it("give a seat's whole picture, or the public one, with every seat shown as present", () => {
    const r = { table: "t1", game: "g", static: { cards: [] }, steps: [] };
    carry(r.steps, [{ seq: 1, time: 10, event: { type: "a" }, view: v(3), private: [{ hand: [1] }, { hand: [2] }] }]);
    expect(pictureAt(r, 0, 1)).toMatchObject({ cards: [], turn: 3, hand: [2], seat: 1 });
    expect(pictureAt(r, 0, null)).not.toHaveProperty("hand");
    expect(pictureAt(r, 0, null).seats[0].connected).toBe(true);
  });

  it("find each turn's first step and the step a moment of the game's clock shows", () => {
    const steps = [];
    carry(steps, [0, 0, 1, 1, 2].map((t, i) => ({ seq: i + 1, time: 100 * i, event: { type: "e" }, view: v(t), private: [] })));
    expect(turnStarts(steps)).toEqual([{ turn: 0, step: 0 }, { turn: 1, step: 2 }, { turn: 2, step: 4 }]);
    expect(stepAt(steps, 0, 250)).toBe(2);
    expect(stepAt(steps, 3, 10_000)).toBe(4);
  });

  it("load every page in order, from after 0 to the last, keeping the first page's static part", async () => {
    const asked = [];
    const pages = {
      0: { game: "g", static: { s: 1 }, last_seq: 3, next: 2, steps: [{ seq: 1, time: 1, event: {}, view: v(0), private: [] }, { seq: 2, time: 2, event: {} }] },
      2: { game: "g", last_seq: 3, steps: [{ seq: 3, time: 3, event: {} }] },
    };
    const r = await loadReplay(async (m) => { asked.push(m.after); return pages[m.after]; }, "t1");
    expect(asked).toEqual([0, 2]);
    expect(r.steps.map((s) => s.seq)).toEqual([1, 2, 3]);
    expect(r.static).toEqual({ s: 1 });
    expect(r.steps[2].view.turn).toBe(0);
  });
});

describe("links to replays", () => {
  it("the page takes its table from its address", () => {
    expect(tableOf("/replay/w1-t3")).toBe("w1-t3");
    expect(tableOf("/replay/t%2F1/")).toBe("t/1");
    expect(tableOf("/replay/")).toBe(null);
    expect(tableOf("/")).toBe(null);
  });

  it("the standings link each finished game of a tournament, and only those", () => {
    const rounds = [{ round: 1, tables: [{ table: 1, server_table: "w1-t3", state: "finished" }, { table: 2, server_table: "t4", state: "running" }] },
      { round: 2, tables: [{ table: 1, server_table: null, state: "pending" }] }];
    expect(finishedGames(rounds)).toEqual([{ round: 1, table: 1, id: "w1-t3", href: "/replay/w1-t3" }]);
  });
});
