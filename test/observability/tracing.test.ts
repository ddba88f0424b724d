import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tracingConfigured } from "../../src/observability/tracing.js";
import { collect, FAKE_HOST_DEVICES, startTestService } from "../api/harness.js";
import * as op from "../api/operations.js";

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** An OTLP/HTTP (JSON) receiver on loopback: what a collector would get. */
async function startCollector() {
  const spans: Span[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              attributes: Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]])),
            });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => new Promise((r) => server.close(r)) };
}

describe("tracing", () => {
  it("is off unless an OTLP endpoint or exporter is configured", () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBe(true);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_TRACES_EXPORTER: "none" })).toBe(false);
  });

  describe("on (OTLP over HTTP to a local collector)", () => {
    let collector: Awaited<ReturnType<typeof startCollector>>;
    const saved = { ...process.env };
    beforeAll(async () => {
      collector = await startCollector();
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
      process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
    });
    afterAll(async () => {
      process.env = saved;
      await collector?.close();
    });

    it("follows a bind from the request through the command, the append, the projection and the notification, under the audit log's correlation id", async () => {
      const t = await startTestService();
      let arqUuid: string;
      let history: Array<{ metadata: Record<string, string> }>;
      try {
        await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
        await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
        const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0];
        arqUuid = (await t.ok("service", op.CREATE_ARQS, { name: "fpga-1" })).createAcceleratorRequests[0].uuid;
        const instance = randomUUID();
        const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
        // The router joins pub/sub with its first listener: bind once it listens.
        while (t.service.notifications.listening === 0) await new Promise((r) => setTimeout(r, 10));
        await t.ok("service", op.BIND, { bindings: [{ arqUuid, hostname: "compute1", deviceRpUuid: rp.uuid, instanceUuid: instance }] });
        await sub.next(1);
        history = (await t.ok("admin", `query($s: String!) { streamHistory(stream: $s) { type metadata } }`, { s: `arq-${arqUuid}` })).streamHistory;
      } finally {
        await t.close(); // flushes the spans
      }
      const request = collector.spans.find((s) => s.name === "graphql mutation bindAcceleratorRequests");
      expect(request, collector.spans.map((s) => s.name).join(", ")).toBeDefined();
      const trace = collector.spans.filter((s) => s.traceId === request!.traceId);
      const byId = new Map(trace.map((s) => [s.spanId, s]));
      const parentName = (s: Span) => (s.parentSpanId ? byId.get(s.parentSpanId)?.name : undefined);
      const named = (n: string) => trace.find((s) => s.name === n);

      // Without an X-Correlation-Id the correlation id is the trace id: the same id finds both.
      expect(request!.attributes["cyborg.correlation_id"]).toBe(request!.traceId);
      const bound = history.find((e: any) => e.type === "ArqBound")!;
      expect(bound.metadata.correlationId).toBe(request!.traceId);
      expect(bound.metadata.traceparent).toContain(request!.traceId);

      expect(parentName(named("app.startBinds")!)).toBe("graphql mutation bindAcceleratorRequests");
      expect(parentName(named("eventstore.appendSequence")!)).toBe("app.startBinds");
      expect(named("projector.apply")).toBeDefined();
      expect(parentName(named("projector.apply")!)).toBe("app.startBinds");
      expect(named("notify accelerator-request-bound")?.attributes, trace.map((s) => `${s.name}<-${parentName(s)}`).join(", ")).toMatchObject({ "cyborg.arq": arqUuid!, "cyborg.status": "COMPLETED", "cyborg.listeners": 1 });
      for (const s of trace) expect(s.attributes["cyborg.correlation_id"], s.name).toBe(request!.traceId);
    });

    it("keeps a correlation id the client sends, and continues the client's trace", async () => {
      collector.spans.length = 0;
      const t = await startTestService();
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      try {
        const res = await fetch(t.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: "Bearer admin-token-0123456789",
            "x-correlation-id": "ticket-42",
            traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
          },
          body: JSON.stringify({ query: op.CREATE_PROFILE, variables: { input: { name: "p2", groups: [{ "resources:FPGA": "1" }] } } }),
        });
        expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
      } finally {
        await t.close();
      }
      const request = collector.spans.find((s) => s.name === "graphql mutation createDeviceProfile");
      expect(request).toMatchObject({ traceId, parentSpanId: "00f067aa0ba902b7", attributes: { "cyborg.correlation_id": "ticket-42" } });
    });
  });
});
