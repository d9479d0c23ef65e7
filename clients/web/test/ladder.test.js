import { describe, expect, it } from "vitest";
import { finishedKey, LadderTable, mainGame, playedText, ranked, ratedGames } from "../src/app/ladder.tsx";

const row = (entrant, ordinal, games = 3, extra = {}) => ({ entrant, game: "parsimonia", mu: ordinal + 15, sigma: 5,
  ordinal, games, last_played: "2026-12-04T18:27:43Z", ...extra });

/** The elements of a rendered tree (preact vnodes; LadderTable has no hooks, so it is called as a function). */
function elements(node, out = []) {
  if (Array.isArray(node)) { node.forEach((n) => elements(n, out)); return out; }
  if (!node || typeof node !== "object") return out;
  out.push(node);
  elements(node.props?.children, out);
  return out;
}
const text = (node) => (Array.isArray(node) ? node.map(text).join("")
  : node == null || typeof node === "boolean" ? "" : typeof node === "object" ? text(node.props?.children) : String(node));

describe("the ladder (src/app/ladder.tsx)", () => {
  it("ranks a game's entrants by the ordinal, best first, equal ordinals by name whatever their case", () => {
    const rows = [row("bob", -2.5), row("ada", 10.6), row("Cleo", 4), row("al", 4)];
    expect(ranked(rows).map((r) => r.entrant)).toEqual(["ada", "al", "Cleo", "bob"]);
    expect(rows.map((r) => r.entrant)).toEqual(["bob", "ada", "Cleo", "al"]); // the listing itself is left as it was
  });

  it("renders one row per entrant, ranked, with its rating, games played and last played (UTC)", () => {
    const tree = LadderTable({ game: "parsimonia", title: "Parsimonia", total: 3,
      rows: [row("random-4", -8.4, 6), row("greedy-1", 10.6, 6), row("newbie", 0, 1, { mu: 25, sigma: 8.3333, last_played: "2026-12-05T01:02:03Z" })] });
    const rows = elements(tree).filter((e) => e.props?.["data-testid"] === "ladder-row");
    expect(rows.map((r) => r.props["data-entrant"])).toEqual(["greedy-1", "newbie", "random-4"]);
    expect(rows.map((r) => elements(r.props.children).filter((e) => e.type === "td").map(text)))
      .toEqual([["1", "greedy-1", "10.6", "6", "25.6 ± 5.0", "2026-12-04 18:27 UTC"],
        ["2", "newbie", "0.0", "1", "25.0 ± 8.3", "2026-12-05 01:02 UTC"],
        ["3", "random-4", "-8.4", "6", "6.6 ± 5.0", "2026-12-04 18:27 UTC"]]);
    expect(elements(tree).some((e) => e.type === "caption")).toBe(false); // the whole ladder is shown
  });

  it("says when the server listed only the best rows of a longer ladder", () => {
    const tree = LadderTable({ game: "kupcy", title: "Kupcy", rows: [row("a", 1), row("b", 2)], total: 300 });
    expect(text(elements(tree).find((e) => e.type === "caption"))).toBe("the best 2 of 300");
  });

  it("offers the games that have ratings, in the server's order, opening at the one with the most entrants", () => {
    const ladders = { kupcy: { rows: [row("a", 1)], total: 1 }, parsimonia: { rows: [row("b", 1)], total: 1 },
      "gift-of-tulips": { rows: [], total: 0 }, other: { rows: [row("c", 1)], total: 1 } };
    expect(ratedGames(ladders, ["gift-of-tulips", "parsimonia", "kupcy"])).toEqual(["parsimonia", "kupcy", "other"]);
    expect(ratedGames({ parsimonia: { rows: [], total: 0 } }, ["parsimonia"])).toEqual([]);
    expect(mainGame(ladders, ["parsimonia", "kupcy", "other"])).toBe("parsimonia"); // equals: the first
    expect(mainGame({ ...ladders, kupcy: { rows: [row("a", 1)], total: 2 } }, ["parsimonia", "kupcy"])).toBe("kupcy");
    expect(mainGame({}, [])).toBeUndefined();
  });

  it("refreshes when another table's game is over, not when a table starts or waits", () => {
    const before = finishedKey([{ table: "t2", state: "over" }, { table: "t1", state: "running" }]);
    expect(finishedKey([{ table: "t1", state: "running" }, { table: "t2", state: "over" }, { table: "t3", state: "waiting" }])).toBe(before);
    expect(finishedKey([{ table: "t1", state: "over" }, { table: "t2", state: "over" }])).not.toBe(before);
    expect(playedText("not a time")).toBe("not a time");
  });
});
