/**
 * The Nova notifier's delivery: `cyborg-es serve` in its own process (embedded: LMDB log, read
 * models in memory) with NOVA_URL pointing at a Nova stand-in in this process, which records when
 * each os-server-external-events request arrives.
 *
 * 1. steady: Nova's boot flow over REST at a steady rate (default 20 instances/s, two ARQs each:
 *    POST the ARQs, one PATCH binding both, DELETE ?instance= once Nova has the event). The delay
 *    of each bind runs from the commit of its ArqBound event (its recordedAt in the log, read back
 *    through GraphQL's streamHistory) to the stand-in's receipt of the request carrying it; the
 *    delay from the PATCH's 202 is printed too (negative: Nova had the event before the 202).
 * 2. drain: the stand-in goes down, a backlog of binds is made (default 500 instances, 1000
 *    events), it comes back: events/s from the first to the last request of the catch-up.
 *
 *   npm run bench:nova
 *   npm run bench:nova -- --rate 20 --binds 600 --backlog 500 --hosts 16
 *
 * Ends with `BENCH {json}`: delay_p50_ms, delay_p99_ms (steady), drain_events_per_s, and the rest.
 */
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { fakeHost } from "./lib/fake-host.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { startNovaStandIn, type NovaStandIn } from "./lib/nova-server.js";
import { RestBenchClient } from "./lib/rest-client.js";

const args = parseArgs(process.argv.slice(2));
const RATE = Number(args.rate ?? 20);
const BINDS = Number(args.binds ?? 600);
const BACKLOG = Number(args.backlog ?? 500);
const HOSTS = Number(args.hosts ?? 16);
const HANDLES = 64;
const CLIENTS = 16;
const PROFILE = `nova-bench-${randomUUID().slice(0, 6)}`;

const wallOf = (performanceMs: number) => performance.timeOrigin + performanceMs;
const round = (n: number) => Math.round(n * 10) / 10;

/** When the stand-in first received an event for this instance (performance.now()). */
function receivedAt(nova: NovaStandIn, instance: string): number | undefined {
  return nova.calls.find((c) => c.codes.length && c.events.some((e) => e.server_uuid === instance))?.at;
}

async function until(what: string, done: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main(): Promise<void> {
  const nova = await startNovaStandIn();
  const server = await startBenchServer({ NOVA_URL: nova.url, NOVA_TOKEN: nova.token });
  const base = server.url.replace(/\/graphql$/, "");
  const gql = new BenchClient(server.url, BENCH_TOKENS.admin);
  const clients = Array.from({ length: CLIENTS }, () => new RestBenchClient(base, BENCH_TOKENS.service));
  try {
    const admin = new RestBenchClient(base, BENCH_TOKENS.admin);
    await admin.expect(201, "POST", "/v2/device_profiles", [{ name: PROFILE, groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }] }]);
    for (let h = 0; h < HOSTS; h++) await gql.gql(`mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { added } }`, { h: `nb-${h}`, d: fakeHost(`nb-${h}`, HANDLES) });
    const targets = ((await admin.expect(200, "GET", "/v2/deployables")).deployables as Array<{ name: string; rp_uuid: string }>).map((d) => ({ hostname: d.name.replace(/_FakeDevice$/, ""), rp: d.rp_uuid }));
    admin.close();

    /** One boot: ARQs, one PATCH; resolves with the instance, its first ARQ and when the 202 came. */
    const boot = async (c: RestBenchClient, i: number) => {
      const target = targets[i % targets.length]!;
      const instance = randomUUID();
      const { arqs } = await c.expect(201, "POST", "/v2/accelerator_requests", { device_profile_name: PROFILE });
      const patch = Object.fromEntries(
        (arqs as Array<{ uuid: string }>).map((a) => [a.uuid, ["hostname", "device_rp_uuid", "instance_uuid"].map((f) => ({ op: "add", path: `/${f}`, value: f === "hostname" ? target.hostname : f === "device_rp_uuid" ? target.rp : instance }))]),
      );
      await c.expect(202, "PATCH", "/v2/accelerator_requests", patch);
      return { instance, arq: (arqs as Array<{ uuid: string }>)[0]!.uuid, acceptedAt: performance.now() };
    };
    const free = (c: RestBenchClient, instance: string) => c.expect(204, "DELETE", `/v2/accelerator_requests?instance=${instance}`);

    // ---- 1. steady ------------------------------------------------------------------------------
    const machineBefore = machineSpeedMs();
    const load = loadavg()[0]!;
    const booted: Array<{ instance: string; arq: string; acceptedAt: number }> = [];
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      clients.map(async (c) => {
        for (let i = next++; i < BINDS; i = next++) {
          const due = t0 + (i * 1000) / RATE;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
          const b = await boot(c, i);
          booted.push(b);
          await until(`the event of bind ${i}`, () => receivedAt(nova, b.instance) !== undefined);
          await free(c, b.instance);
        }
      }),
    );
    const steadyS = (performance.now() - t0) / 1000;
    const delays: number[] = [];
    const from202: number[] = [];
    for (const b of booted) {
      const history = await gql.gql<{ streamHistory: Array<{ type: string; recordedAt: string }> }>(`query($s: String!) { streamHistory(stream: $s) { type recordedAt } }`, { s: `arq-${b.arq}` });
      const committed = Date.parse(history.streamHistory.find((e) => e.type === "ArqBound")!.recordedAt);
      const got = receivedAt(nova, b.instance)!;
      delays.push(wallOf(got) - committed);
      from202.push(got - b.acceptedAt);
    }
    delays.sort((a, b) => a - b);
    from202.sort((a, b) => a - b);
    const steady = {
      rate_instances_per_s: RATE,
      instances: booted.length,
      events: booted.length * 2,
      achieved_instances_per_s: round(booted.length / steadyS),
      delay_p50_ms: round(percentile(delays, 50)),
      delay_p99_ms: round(percentile(delays, 99)),
      delay_max_ms: round(delays.at(-1)!),
      from_202_p50_ms: round(percentile(from202, 50)),
      from_202_p99_ms: round(percentile(from202, 99)),
      requests: nova.calls.length,
      events_per_request: round(nova.calls.reduce((n, c) => n + c.events.length, 0) / nova.calls.length),
    };
    process.stderr.write(`steady: ${JSON.stringify(steady)}\n`);

    // ---- 2. drain -------------------------------------------------------------------------------
    await nova.down();
    const backlog: string[] = [];
    let k = 0;
    await Promise.all(
      clients.map(async (c) => {
        for (let i = k++; i < BACKLOG; i = k++) backlog.push((await boot(c, BINDS + i)).instance);
      }),
    );
    const callsBefore = nova.calls.length;
    await nova.up();
    const upAt = performance.now();
    await until("the backlog", () => backlog.every((b) => receivedAt(nova, b) !== undefined), 300_000);
    const drained = nova.calls.slice(callsBefore).filter((c) => c.codes.length);
    const events = drained.reduce((n, c) => n + c.events.length, 0);
    const spanS = (drained.at(-1)!.at - drained[0]!.at) / 1000;
    const drain = {
      instances: BACKLOG,
      events,
      requests: drained.length,
      first_request_after_up_ms: round(drained[0]!.at - upAt),
      span_s: round(spanS),
      events_per_s: Math.round(events / Math.max(spanS, 0.001)),
    };
    process.stderr.write(`drain: ${JSON.stringify(drain)}\n`);
    const machine = [machineBefore, machineSpeedMs()];
    console.log(
      `BENCH ${JSON.stringify({
        bench: "nova-notifier",
        delay_p50_ms: steady.delay_p50_ms,
        delay_p99_ms: steady.delay_p99_ms,
        drain_events_per_s: drain.events_per_s,
        steady,
        drain,
        loadavg_1m: round(load),
        machine_ms: machine,
      })}`,
    );
  } finally {
    for (const c of clients) c.close();
    await gql.close();
    await server.close();
    await nova.stop();
  }
}

await main();
