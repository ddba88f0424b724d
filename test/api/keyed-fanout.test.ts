import { describe, expect, it } from "vitest";
import { KeyedFanout } from "../../src/api/keyed-fanout.js";

const ready = Promise.resolve();

/** The first n events the listener is given. */
async function drain<E>(events: AsyncIterable<E>, n: number): Promise<E[]> {
  const it = events[Symbol.asyncIterator]();
  const out: E[] = [];
  for (let i = 0; i < n; i++) out.push((await it.next()).value as E);
  return out;
}

describe("KeyedFanout", () => {
  it("delivers an event to the listeners of its keys only", async () => {
    const f = new KeyedFanout<string>();
    const a = f.listen(["a"], ready);
    const b = f.listen(["b"], ready);
    expect(f.dispatch("e1", "a")).toBe(1);
    expect(f.dispatch("e2", "b")).toBe(1);
    expect(f.dispatch("e3", "c")).toBe(0);
    expect(await drain(a.events, 1)).toEqual(["e1"]);
    expect(await drain(b.events, 1)).toEqual(["e2"]);
  });

  it("gives every event to a listener registered under no key", async () => {
    const f = new KeyedFanout<string>();
    const all = f.listen([], ready);
    f.listen(["a"], ready);
    expect(f.dispatch("e1", "a")).toBe(2);
    expect(f.dispatch("e2", "z")).toBe(1);
    expect(f.dispatch("e3", [])).toBe(1);
    expect(await drain(all.events, 3)).toEqual(["e1", "e2", "e3"]);
  });

  it("gives a listener registered under two keys one copy of an event of both", async () => {
    const f = new KeyedFanout<string>();
    const ab = f.listen(["a", "b"], ready);
    const b = f.listen(["b"], ready);
    expect(f.dispatch("e1", ["a", "b"])).toBe(2);
    expect(f.dispatch("e2", "b")).toBe(2);
    expect(await drain(ab.events, 2)).toEqual(["e1", "e2"]);
    expect(await drain(b.events, 2)).toEqual(["e1", "e2"]);
    expect(ab.events.dropped).toBe(0);
  });

  it("stops delivering to a closed listener, and ends its events", async () => {
    const f = new KeyedFanout<string>();
    const a = f.listen(["a", "b"], ready);
    const other = f.listen(["a"], ready);
    a.close();
    await Promise.resolve();
    expect(f.dispatch("e1", ["a", "b"])).toBe(1);
    expect(await a.events[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
    expect(await drain(other.events, 1)).toEqual(["e1"]);
  });

  it("counts open listeners once each, however many keys they name", async () => {
    const f = new KeyedFanout<string>();
    expect(f.listening).toBe(0);
    const ab = f.listen(["a", "b"], ready);
    const all = f.listen([], ready);
    const a = f.listen(["a"], ready);
    expect(f.listening).toBe(3);
    ab.close();
    all.close();
    all.close();
    await Promise.resolve();
    expect(f.listening).toBe(1);
    a.close();
    await Promise.resolve();
    expect(f.listening).toBe(0);
  });
});
