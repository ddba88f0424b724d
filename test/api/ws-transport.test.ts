/**
 * The WebSocket transport: a client that drops in the middle of a subscription's stream is a
 * debug line in the service's log, never an error with a stack on stderr.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { GraphQLObjectType, GraphQLSchema, GraphQLString } from "graphql";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { Logger } from "../../src/infra/logger.js";
import { serveGraphqlWs } from "../../src/api/ws-transport.js";

/** A subscription that sends as fast as the socket takes it, for ever. */
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: "Query", fields: { ok: { type: GraphQLString, resolve: () => "ok" } } }),
  subscription: new GraphQLObjectType({
    name: "Subscription",
    fields: {
      flood: {
        type: GraphQLString,
        subscribe: async function* () {
          for (;;) {
            yield { flood: "x".repeat(16_384) };
            await new Promise((r) => setImmediate(r));
          }
        },
      },
    },
  }),
});

function capturingLog() {
  const lines: Array<{ level: string; msg: string }> = [];
  const at = (level: string) => (_obj: unknown, msg?: string) => void lines.push({ level, msg: msg ?? String(_obj) });
  const log = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), fatal: at("fatal"), trace: at("trace") } as unknown as Logger;
  return { log, lines };
}

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
  vi.restoreAllMocks();
});

describe("the WebSocket transport", () => {
  it("logs a client that resets its connection mid-stream at debug, and nothing on stderr", async () => {
    const stderr = vi.spyOn(console, "error");
    const { log, lines } = capturingLog();
    const http = createServer();
    const wss = new WebSocketServer({ server: http, path: "/graphql" });
    const ws = serveGraphqlWs({ schema }, wss, log);
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    closing.push(async () => {
      await ws.dispose();
      await new Promise<void>((r) => http.close(() => r()));
    });
    const port = (http.address() as AddressInfo).port;

    for (let round = 0; round < 5; round++) {
      const client = new WebSocket(`ws://127.0.0.1:${port}/graphql`, "graphql-transport-ws");
      await new Promise((r) => client.once("open", r));
      client.send(JSON.stringify({ type: "connection_init" }));
      await new Promise((r) => client.once("message", r));
      client.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: "subscription { flood }" } }));
      // Mid-stream: some events are in, more are on their way.
      await new Promise<void>((r) => {
        let seen = 0;
        client.on("message", () => ++seen === 20 && r());
      });
      const gone = new Promise((r) => client.once("close", r));
      (client as unknown as { _socket: { resetAndDestroy(): void } })._socket.resetAndDestroy();
      await gone;
    }
    await expect.poll(() => wss.clients.size).toBe(0);
    expect(lines.filter((l) => l.level !== "debug")).toEqual([]);
    expect(stderr).not.toHaveBeenCalled();
  });
});
