import { describe, expect, it } from "vitest";
import { parsimoniaClocks, parsimoniaTimes, timesText } from "../src/app/lobby.tsx";

describe("the lobby's clocks for a new Parsimonia table (src/app/lobby.tsx)", () => {
  const blank = { game: "", turn: "", quiet: "" };
  it("a preset gives its options, the server's presets.json", () => {
    expect(parsimoniaClocks("quick", blank)).toEqual({ game_ms: 1_200_000, opening_ms: 180_000, turn_ms: 60_000,
      quiet_ms: 8000, quiet_floor_ms: 5000, grace_ms: 250 });
  });
  it("own times set the game, turn and quiet times separately, each with the floor for people", () => {
    expect(parsimoniaClocks("custom", { game: "30", turn: "90", quiet: "12" }))
      .toEqual({ game_ms: 1_800_000, turn_ms: 90_000, quiet_ms: 12_000, quiet_floor_ms: 5000, grace_ms: 250 });
    const human = { quiet_floor_ms: 5000, grace_ms: 250 };
    expect(parsimoniaClocks("custom", { ...blank, quiet: "0.5" })).toEqual({ quiet_ms: 500, ...human });
    expect(parsimoniaClocks("custom", { game: "x", turn: "-3", quiet: "" })).toEqual(human);
  });
});

describe("the clocks a new Parsimonia table will have, shown before it is created", () => {
  const blank = { game: "", turn: "", quiet: "" };
  it("a preset at a clock speed: each time divided by it, the quiet time kept at the floor for people", () => {
    const t = parsimoniaTimes(parsimoniaClocks("quick", blank), 30);
    expect(t).toEqual({ game_ms: 40_000, opening_ms: 6000, turn_ms: 2000, quiet_ms: 5000 });
    expect(timesText(t)).toBe("game 0:40, opening 0:06, turn 0:02; an auction closes after 0:05 with no bid");
  });
  it("the rules' own clocks fill what the options leave out; a speed that is no number counts as 1", () => {
    expect(parsimoniaTimes({}, NaN)).toEqual({ game_ms: 7_200_000, opening_ms: 900_000, turn_ms: 300_000, quiet_ms: 30_000 });
    expect(parsimoniaTimes(parsimoniaClocks("custom", { ...blank, quiet: "12" }), 2).quiet_ms).toBe(6000);
  });
});
