import { describe, expect, it, vi } from "vitest";
import { DelegatingEventStore } from "../../src/infra/eventstore/delegating-store.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { eventStoreContract } from "./contract.js";

type Args<F> = F extends (...args: infer A) => unknown ? A : never;

/** Arguments for every member of the port: a method added to the port is a compile error here until it is listed. */
const calls: { [K in keyof EventStore]: EventStore[K] extends (...args: never[]) => unknown ? Args<EventStore[K]> : null } = {
  kind: null,
  append: ["s-1", [], "any"],
  appendSequence: [[{ stream: "s-1", events: [], expectedRevision: "no_stream" }]],
  readStream: ["s-1", { direction: "backwards", maxCount: 2 }],
  readAll: [{ after: 3n, maxCount: 5 }],
  headPosition: [],
  subscribeToAll: [{ after: 1n }],
  readCheckpoints: [{ after: 2n, maxCount: 1 }],
  positionAt: [new Date(0)],
  readStreamEnds: [{ prefix: "s-", maxCount: 10 }],
  archiving: null,
  close: [],
};

describe("DelegatingEventStore", () => {
  it("forwards every member of the port to the inner store, with the same arguments and answer", () => {
    const inner = new MemoryEventStore();
    const outer = new DelegatingEventStore(inner);
    for (const [name, args] of Object.entries(calls) as Array<[keyof EventStore, unknown[] | null]>) {
      const member = (inner as EventStore)[name];
      if (typeof member !== "function") {
        expect(outer[name], name).toBe(member);
        continue;
      }
      const answer = Symbol(name);
      const spy = vi.spyOn(inner as unknown as Record<string, (...a: unknown[]) => unknown>, name).mockReturnValue(answer);
      expect((outer[name] as (...a: unknown[]) => unknown)(...args!), name).toBe(answer);
      expect(spy, name).toHaveBeenCalledOnce();
      expect(spy.mock.calls[0], name).toEqual(args);
    }
  });
});

eventStoreContract(
  "delegating (over memory)",
  async () => {
    const store = new DelegatingEventStore(new MemoryEventStore({ checkpointInterval: 4 }));
    return { store, cleanup: () => store.close() };
  },
  { strictEventIds: true, startsEmpty: true, checkpointInterval: 4 },
);
