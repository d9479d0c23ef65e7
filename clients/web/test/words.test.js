import { describe, expect, it } from "vitest";
import { errorText, reasonText } from "../src/app/words.ts";

describe("errors in words (src/app/words.ts)", () => {
  it("a protocol code reads as a sentence, never as the code", () => {
    const text = errorText({ code: "no_such_table", message: "no table 't99'" });
    expect(text).toBe("There is no such table on this server (it may have ended and been cleared away).");
    expect(text).not.toContain("no_such_table");
  });
  it("a refused move gives the game's reason in words", () => {
    expect(errorText({ code: "illegal_action", reason: "start_price_too_high", message: "x" }))
      .toBe("Refused: the start price is more than you may ask.");
    expect(reasonText("not_in_warehouse")).toBe("not in warehouse");
  });
  it("a code with no words of its own keeps the server's message, without the code", () => {
    expect(errorText({ code: "bad_field", message: "bad_field: seats: 9 is outside 2..6" }))
      .toBe("The server refused that: seats: 9 is outside 2..6");
  });
});
