import { describe, expect, it } from "vitest";
import { newEventId } from "../../src/app/event-ids.js";

describe("event ids", () => {
  it("are distinct version-7 uuids across several refills of the random pool", () => {
    const ids = Array.from({ length: 5000 }, () => newEventId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("start with the millisecond they were made in, so later ids sort after earlier ones", async () => {
    const before = newEventId();
    await new Promise((r) => setTimeout(r, 5));
    const after = newEventId();
    const msOf = (id: string) => parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    expect(Math.abs(msOf(before) - Date.now())).toBeLessThan(10_000);
    expect(msOf(after)).toBeGreaterThan(msOf(before));
    expect(after > before).toBe(true);
  });
});
