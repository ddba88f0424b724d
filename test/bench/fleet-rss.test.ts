/** bench:fleet's memory figures: the resident set and its anonymous part, read from /proc. */
import { describe, expect, it } from "vitest";
import { residentMiB, rssMiB } from "../../bench/lib/fleet/rss.js";

describe("the fleet bench's memory readings", () => {
  it.runIf(process.platform === "linux")("reads this process's RSS and its anonymous part, no larger than the whole; null for no such process", () => {
    const m = residentMiB(process.pid);
    expect(m!.rss).toBeGreaterThan(0);
    expect(m!.anon).toBeGreaterThan(0);
    expect(m!.anon).toBeLessThanOrEqual(m!.rss + 1);
    expect(rssMiB(process.pid)).toBeGreaterThan(0);
    expect(residentMiB(2 ** 30)).toBeNull();
  });
});
