/** The report admission gate on its own: order, hand-over of the slot, refusal with a spread Retry-After. */
import { describe, expect, it } from "vitest";
import { GraphQLError } from "graphql";
import { ReportAdmission } from "../../src/api/report-admission.js";

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
};

describe("ReportAdmission", () => {
  it("runs maxInFlight at once, the queued ones in order as slots free, and frees the slot when a report fails", async () => {
    const a = new ReportAdmission({ maxInFlight: 1, maxQueued: 2, retryAfterS: 5 });
    const order: string[] = [];
    const g1 = gate();
    const first = a.admit(async () => (await g1.opened, order.push("first")));
    const second = a.admit(async () => {
      order.push("second");
      throw new Error("refused by the domain");
    });
    const third = a.admit(async () => order.push("third"));
    expect(a.load()).toEqual({ inFlight: 1, queued: 2 });
    g1.open();
    await first;
    await expect(second).rejects.toThrow("refused by the domain");
    await third;
    expect(order).toEqual(["first", "second", "third"]);
    expect(a.load()).toEqual({ inFlight: 0, queued: 0 });
  });

  it("refuses past the queue with UNAVAILABLE and a wait between retryAfterS and twice that", async () => {
    const jitters = [0, 0.999];
    const a = new ReportAdmission({ maxInFlight: 1, maxQueued: 0, retryAfterS: 5 }, () => jitters.shift()!);
    const g = gate();
    const held = a.admit(() => g.opened);
    const refusals: GraphQLError[] = [];
    for (let i = 0; i < 2; i++) await a.admit(async () => "taken").catch((e: GraphQLError) => refusals.push(e));
    expect(refusals.map((e) => [e.extensions.code, e.extensions.retryAfterSeconds])).toEqual([
      ["UNAVAILABLE", 5],
      ["UNAVAILABLE", 10],
    ]);
    expect(a.refused).toBe(2);
    g.open();
    await held;
    await expect(a.admit(async () => "taken")).resolves.toBe("taken");
  });
});
