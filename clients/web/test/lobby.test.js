import { describe, expect, it } from "vitest";
import { parsimoniaClocks } from "../src/app/lobby.tsx";

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
