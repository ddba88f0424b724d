import { describe, expect, it, vi } from "vitest";
import { reportWhile } from "../../src/infra/logger.js";

describe("reportWhile: a long start says where it is", () => {
  it("reports every interval until the work settles, then stops", async () => {
    vi.useFakeTimers();
    try {
      let done!: (v: string) => void;
      const work = new Promise<string>((r) => (done = r));
      const report = vi.fn();
      const result = reportWhile(work, 2000, report);
      await vi.advanceTimersByTimeAsync(4100);
      expect(report).toHaveBeenCalledTimes(2);
      done("caught up");
      expect(await result).toBe("caught up");
      await vi.advanceTimersByTimeAsync(10_000);
      expect(report).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
