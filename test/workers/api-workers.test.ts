/**
 * `cyborg-es serve` with two API workers on the one embedded log: every request below opens its
 * own connection, and node:cluster hands connections to the workers in turn, so a write and the
 * read after it, and a bind and the subscriptions waiting for it, land on different workers.
 * Clients must not be able to tell: read-your-writes, the acceleratorRequestBound subscription,
 * REST, idempotency keys and the rate limit behave as with one process.
 */
import { execFileSync } from "node:child_process";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareBootTargets, type Target } from "../../bench/lib/reliability/boot-flows.js";
import { ServiceProcess } from "../../bench/lib/reliability/service-process.js";
import { ROLE_TOKENS, type Who } from "../../bench/lib/reliability/tokens.js";
import { buildCli, type BuiltCli } from "../support/cli.js";

const RATE_LIMIT = 30;
let built: BuiltCli;
let service: ServiceProcess;
let targets: Target[];

/** One request on a connection of its own (no keep-alive): the cluster picks the worker. */
function fresh(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, agent: false, headers: { ...headers, ...(payload ? { "content-type": "application/json" } : {}) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function gql(who: Who, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<any> {
  const r = await fresh("POST", service.url, { authorization: `Bearer ${ROLE_TOKENS[who].token}`, ...headers }, { query, variables });
  if (r.body?.errors?.length) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data;
}

const rest = (method: string, path: string, body?: unknown) => fresh(method, `${service.base}${path}`, { "x-auth-token": ROLE_TOKENS.service.token, "openstack-api-version": "accelerator 2.0" }, body);

const CREATE = `mutation($n: String!) { createAcceleratorRequests(deviceProfileName: $n) { uuid state } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
const ARQ = `query($u: ID!) { acceleratorRequest(uuid: $u) { uuid state instanceUuid } }`;
const BOUND = `subscription($a: [ID!]) { acceleratorRequestBound(arqUuids: $a) { status arq { uuid state } } }`;

beforeAll(async () => {
  built = await buildCli();
  service = new ServiceProcess({ cli: built.cli, env: { API_WORKERS: "2", RATE_LIMIT_REQUESTS: String(RATE_LIMIT), RATE_LIMIT_WINDOW_S: "600" } });
  await service.start();
  targets = await prepareBootTargets(service.url, "workers-fpga", 2, 8);
}, 240_000);
afterAll(async () => {
  await service?.remove();
  await built?.remove();
});

describe("serve with API_WORKERS=2", () => {
  it("runs two worker processes beside the primary", () => {
    const children = execFileSync("ps", ["--ppid", String(service.pid), "-o", "pid="], { encoding: "utf8" }).trim().split(/\s+/).filter(Boolean);
    expect(children).toHaveLength(2);
  });

  it("answers a read after a write with the write, whichever worker takes each", async () => {
    for (let i = 0; i < 10; i++) {
      const [arq] = (await gql("service", CREATE, { n: "workers-fpga" })).createAcceleratorRequests;
      const read = (await gql("service", ARQ, { u: arq.uuid })).acceleratorRequest;
      expect(read).toMatchObject({ uuid: arq.uuid, state: "INITIAL" });
      const instance = randomUUID();
      const t = targets[i % targets.length]!;
      const [bound] = (await gql("service", BIND, { b: [{ arqUuid: arq.uuid, hostname: t.hostname, deviceRpUuid: t.rpUuid, instanceUuid: instance }] })).bindAcceleratorRequests;
      expect(bound.state).toBe("BOUND");
      expect((await gql("service", ARQ, { u: arq.uuid })).acceleratorRequest).toMatchObject({ state: "BOUND", instanceUuid: instance });
      await gql("service", `mutation($i: ID) { deleteAcceleratorRequests(instanceUuid: $i) }`, { i: instance });
      expect((await gql("service", ARQ, { u: arq.uuid })).acceleratorRequest).toBeNull();
    }
  });

  it("fires acceleratorRequestBound on every connection waiting for it, on either worker", async () => {
    const [arq] = (await gql("service", CREATE, { n: "workers-fpga" })).createAcceleratorRequests;
    const clients: Client[] = Array.from({ length: 4 }, () =>
      createClient({ url: service.url.replace(/^http/, "ws"), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${ROLE_TOKENS.service.token}` }, retryAttempts: 0 }),
    );
    try {
      const heard = clients.map(
        (c) =>
          new Promise<{ status: string; arq: { uuid: string; state: string } }>((resolve, reject) => {
            c.subscribe<{ acceleratorRequestBound: { status: string; arq: { uuid: string; state: string } } }>(
              { query: BOUND, variables: { a: [arq.uuid] } },
              { next: (v) => (v.errors ? reject(new Error(JSON.stringify(v.errors))) : resolve(v.data!.acceleratorRequestBound)), error: reject, complete: () => undefined },
            );
          }),
      );
      // Every connection is open and subscribed before the bind: each answers a ping-like query first.
      await Promise.all(clients.map((c) => new Promise<void>((resolve, reject) => c.subscribe({ query: "{ __typename }" }, { next: () => undefined, error: reject, complete: resolve }))));
      const t = targets[0]!;
      await gql("service", BIND, { b: [{ arqUuid: arq.uuid, hostname: t.hostname, deviceRpUuid: t.rpUuid, instanceUuid: randomUUID() }] });
      for (const event of await Promise.all(heard)) expect(event).toMatchObject({ arq: { uuid: arq.uuid, state: "BOUND" } });
    } finally {
      await Promise.all(clients.map((c) => c.dispose()));
    }
  });

  it("serves REST's boot flow with read-your-writes across workers", async () => {
    const created = await rest("POST", "/v2/accelerator_requests", { device_profile_name: "workers-fpga" });
    expect(created.status).toBe(201);
    const uuid = created.body.arqs[0].uuid as string;
    expect((await rest("GET", `/v2/accelerator_requests/${uuid}`)).body).toMatchObject({ uuid, state: "Initial" });
    const instance = randomUUID();
    const t = targets[1]!;
    const patch = { [uuid]: [{ op: "add", path: "/hostname", value: t.hostname }, { op: "add", path: "/device_rp_uuid", value: t.rpUuid }, { op: "add", path: "/instance_uuid", value: instance }] };
    expect((await rest("PATCH", "/v2/accelerator_requests", patch)).status).toBe(202);
    const listed = await rest("GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`);
    expect(listed.body.arqs).toHaveLength(1);
    expect(listed.body.arqs[0]).toMatchObject({ uuid, state: "Bound" });
    expect((await rest("DELETE", `/v2/accelerator_requests?instance=${instance}`)).status).toBe(204);
    expect((await rest("GET", `/v2/accelerator_requests/${uuid}`)).status).toBe(404);
  });

  it("answers a retried idempotency key with the first answer, on the other worker too", async () => {
    const key = { "idempotency-key": randomUUID() };
    const first = (await gql("service", CREATE, { n: "workers-fpga" }, key)).createAcceleratorRequests;
    const again = (await gql("service", CREATE, { n: "workers-fpga" }, key)).createAcceleratorRequests;
    const third = (await gql("service", CREATE, { n: "workers-fpga" }, key)).createAcceleratorRequests;
    expect(again).toEqual(first);
    expect(third).toEqual(first);
  });

  it("counts a token's requests once over all workers", async () => {
    const codes: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 4; i++) {
      const r = await fresh("POST", service.url, { authorization: `Bearer ${ROLE_TOKENS.reader.token}` }, { query: "{ __typename }" });
      codes.push(r.status);
    }
    expect(codes.filter((c) => c === 200)).toHaveLength(RATE_LIMIT);
    expect(codes.slice(RATE_LIMIT)).toEqual([429, 429, 429, 429]);
  });
});
