import { describe, expect, it } from "vitest";
import { tableClocks } from "../src/app/countdown.tsx";

describe("a table's clocks", () => {
  it("stop where the view's paused_at says, not at the time of a view made later in the pause", () => {
    expect(tableClocks({ paused: true, paused_at: 100 }, 40_100, null)).toEqual({ stopped: "paused", at: 100 });
  });
  it("without paused_at, stop at the page's paused event, else at the view's time", () => {
    expect(tableClocks({ paused: true }, 40_100, null, 250)).toEqual({ stopped: "paused", at: 250 });
    expect(tableClocks({ paused: true }, 40_100, null)).toEqual({ stopped: "paused", at: 40_100 });
  });
  it("run when not paused, and stop at the end once over", () => {
    expect(tableClocks({ paused: false }, 5, null, 3)).toEqual({ stopped: null });
    expect(tableClocks({ result: {}, paused: false }, 9, 7)).toEqual({ stopped: "over", at: 7 });
  });
});

describe("the event log's time column", () => {
  it("keeps the game's start once known, and finds it from the result at the end", async () => {
    const { gameStart } = await import("../src/app/table.tsx");
    expect(gameStart("tA", { deadlines: { game: 9000 }, config: { game_ms: 8000 } }, null, null)).toBe(1000);
    expect(gameStart("tA", { deadlines: {}, result: {} }, null, null)).toBe(1000); // the log lost game_started
    expect(gameStart("tB", { result: { game_ms: 60_000 } }, null, 65_000)).toBe(5000); // Kupcy: no game clock
    expect(gameStart("tC", {}, null, null)).toBeNull();
  });
});
