/** The agent's request dispatcher: each request to its kind's handler, once, one at a time per lane. */
import { describe, expect, it } from "vitest";
import { RequestDispatcher, subscriptionQuery, type AgentRequestHandler } from "../../src/clients/agent/requests.js";

interface Req {
  requestId: string;
  lane: string;
}

function recorder(kind: string, field: string) {
  const started: string[] = [];
  const release = new Map<string, () => void>();
  const handler: AgentRequestHandler<Req> = {
    kind,
    field,
    selection: "requestId lane",
    lane: (r) => r.lane,
    handle: (r) =>
      new Promise<void>((resolve) => {
        started.push(r.requestId);
        release.set(r.requestId, resolve);
      }),
  };
  return { handler, started, finish: (id: string) => release.get(id)!() };
}

const warnings: string[] = [];
const log = { warn: (_f: unknown, msg: string) => warnings.push(msg), error: () => undefined } as never;
const tick = () => new Promise((r) => setImmediate(r));

describe("the agent's request dispatcher", () => {
  it("asks for each handler's field in one subscription", () => {
    const q = subscriptionQuery([recorder("PROGRAM", "program").handler, recorder("CLEAN", "clean").handler]);
    expect(q).toContain("agentRequests(hostname: $hostname)");
    expect(q).toContain("kind requestId hostname");
    expect(q).toContain("program { requestId lane }");
    expect(q).toContain("clean { requestId lane }");
  });

  it("hands each request to its kind's handler, once even when sent again, one at a time per lane", async () => {
    const program = recorder("PROGRAM", "program");
    const clean = recorder("CLEAN", "clean");
    const d = new RequestDispatcher({ handlers: [program.handler, clean.handler], log });
    const send = (kind: string, field: string, requestId: string, lane: string) => d.take({ kind, requestId, hostname: "h", [field]: { requestId, lane } });
    send("PROGRAM", "program", "p1", "region-a");
    send("PROGRAM", "program", "p2", "region-a");
    send("PROGRAM", "program", "p3", "region-b");
    send("CLEAN", "clean", "c1", "region-a");
    send("PROGRAM", "program", "p1", "region-a");
    await tick();
    expect(program.started).toEqual(["p1", "p3"]);
    expect(clean.started).toEqual(["c1"]);
    program.finish("p1");
    await tick();
    expect(program.started).toEqual(["p1", "p3", "p2"]);
    program.finish("p2");
    program.finish("p3");
    clean.finish("c1");
    await d.settled();
    expect(program.started).toEqual(["p1", "p3", "p2"]);
  });

  it("leaves a kind it has no handler for, and says so", async () => {
    const program = recorder("PROGRAM", "program");
    const d = new RequestDispatcher({ handlers: [program.handler], log });
    d.take({ kind: "CLEAN", requestId: "c9", hostname: "h", program: null, clean: { requestId: "c9", lane: "x" } });
    await d.settled();
    expect(program.started).toEqual([]);
    expect(warnings.at(-1)).toMatch(/a CLEAN request this agent does not take \(its handlers: PROGRAM\)/);
  });
});
