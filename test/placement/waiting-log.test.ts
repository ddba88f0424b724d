/** When the Placement sync logs a waiting host: once per host and reason, then once per quiet interval. */
import { describe, expect, it } from "vitest";
import { WaitingLog } from "../../src/reactors/placement/waiting-log.js";

describe("WaitingLog", () => {
  const clock = () => {
    let ms = Date.parse("2026-11-28T10:00:00Z");
    return { now: () => ms, pass: (d: number) => void (ms += d) };
  };

  it("tells a host's first refusal, keeps quiet about the same one, and tells a new reason at once", () => {
    const c = clock();
    const log = new WaitingLog(60_000, c.now);
    expect(log.refused("c1", "no compute node")).toEqual({ unlogged: 0, lastLoggedAt: null });
    for (let i = 0; i < 10; i++) expect(log.refused("c1", "no compute node")).toBeNull();
    expect(log.refused("c2", "no compute node")).not.toBeNull();
    expect(log.refused("c1", "trait CUSTOM_X unknown")).toEqual({ unlogged: 10, lastLoggedAt: "2026-11-28T10:00:00.000Z" });
  });

  it("tells the same refusal again after the quiet interval, with how many went unlogged", () => {
    const c = clock();
    const log = new WaitingLog(60_000, c.now);
    log.refused("c1", "no compute node");
    c.pass(30_000);
    expect(log.refused("c1", "no compute node")).toBeNull();
    expect(log.refused("c1", "no compute node")).toBeNull();
    c.pass(30_000);
    expect(log.refused("c1", "no compute node")).toEqual({ unlogged: 2, lastLoggedAt: "2026-11-28T10:00:00.000Z" });
    expect(log.refused("c1", "no compute node")).toBeNull();
  });

  it("forgets a host that matches again: its next refusal is news", () => {
    const log = new WaitingLog(60_000, clock().now);
    log.refused("c1", "no compute node");
    log.forget("c1");
    expect(log.refused("c1", "no compute node")).toEqual({ unlogged: 0, lastLoggedAt: null });
  });
});
