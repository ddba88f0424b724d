/** GET /metrics on a port of its own (METRICS_PORT), for a scraper that should not reach the API. */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.js";

/** The scrape's text, chunk by chunk as the socket takes it (a large fleet's is megabytes). */
export async function sendMetrics(metrics: Metrics, res: ServerResponse): Promise<void> {
  const { contentType, chunks } = await metrics.scrape();
  res.writeHead(200, { "content-type": contentType });
  for (const chunk of chunks) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  res.end();
}

/** Resolves when the socket takes more, or the response is gone; leaves no listener behind. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export async function startMetricsServer(metrics: Metrics, port: number, host: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if ((req.url ?? "/").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("metrics are at /metrics\n");
      return;
    }
    sendMetrics(metrics, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}/metrics`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
