/** bench:fleet's memory figures: the resident set and its anonymous part, read from /proc. */
import { describe, expect, it } from "vitest";
import { rssAnonMiB, rssMiB } from "../../bench/lib/fleet/rss.js";

describe("the fleet bench's memory readings", () => {
  it.runIf(process.platform === "linux")("reads this process's RSS and its anonymous part, no larger than the whole; null for no such process", () => {
    const whole = rssMiB(process.pid);
    const anon = rssAnonMiB(process.pid);
    expect(whole).toBeGreaterThan(0);
    expect(anon).toBeGreaterThan(0);
    expect(anon!).toBeLessThanOrEqual(whole! + 1);
    expect(rssAnonMiB(2 ** 30)).toBeNull();
  });
});
