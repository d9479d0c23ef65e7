import { describe, expect, it } from "vitest";
import { clusterNote } from "../src/app/admin.tsx";

describe("the organiser's Server panel on a cluster (src/app/admin.tsx)", () => {
  it("says which worker's figures it shows, and the cluster's totals from GET /cluster", () => {
    const cluster = { worker: 2, redis_reachable: true, workers: [
      { worker: 1, url: "ws://127.0.0.1:9001/", tables: 3, connections: 7 },
      { worker: 2, url: "ws://127.0.0.1:9002/", tables: 1, connections: 4 }] };
    expect(clusterNote(cluster))
      .toBe("Worker 2 of 2 answered: the figures below are its own. All workers: 4 tables, 11 connections.");
  });
});
