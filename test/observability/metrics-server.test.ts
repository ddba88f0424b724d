/**
 * sendMetrics writes a scrape chunk by chunk as the socket takes it: a client that reads slowly
 * gets every byte, and the response is left with no listener per chunk (a fleet's scrape is ten
 * chunks and more; each wait used to leave one behind, and node warned of a leak).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Metrics } from "../../src/observability/metrics.js";
import { sendMetrics } from "../../src/observability/metrics-server.js";

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
afterEach(() => void process.off("warning", onWarning));

describe("sendMetrics", () => {
  it("sends every chunk to a slow reader, and leaves no listener behind", async () => {
    process.on("warning", onWarning);
    const chunks = Array.from({ length: 30 }, (_, i) => `# chunk ${i}\n` + "x".repeat(1 << 20) + "\n");
    const metrics = { scrape: async () => ({ contentType: "text/plain; version=0.0.4", chunks }) } as unknown as Metrics;
    let listeners: { before: Record<string, number>; after: Record<string, number> } | undefined;
    const count = (res: ServerResponse) => ({ drain: res.listenerCount("drain"), close: res.listenerCount("close"), error: res.listenerCount("error") });
    const server = createServer((_req, res) => {
      const before = count(res);
      void sendMetrics(metrics, res).then(() => (listeners = { before, after: count(res) }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
      const reader = res.body!.getReader();
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        await new Promise((r) => setTimeout(r, 1)); // a slow reader: the server waits for drain
      }
      expect(bytes).toBe(chunks.reduce((n, c) => n + Buffer.byteLength(c), 0));
      await expect.poll(() => listeners).toBeDefined();
      expect(listeners!.after).toEqual(listeners!.before);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
