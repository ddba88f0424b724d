/**
 * Binds that need FPGA programming: 50 hosts with 2 fake regions each (100 regions), one agent
 * programming worker per host (src/clients/agent/programming.ts, the fake driver with a set programming
 * delay), and a profile asking for a function (accel:function_id) whose bitstream is in the
 * embedded catalogue. The server runs in its own process (`cyborg-es serve`); the agents and the
 * scheduler's clients run here.
 *
 * Phase "programming": one flow per region, 10 in flight at a time (--concurrency): 2 ARQs of the
 * profile bound to the region in one mutation. The first requests the programming, the second joins it; both wait for the
 * agent. Latency is from the bind mutation to each ARQ's acceleratorRequestBound; the overhead is
 * that minus the driver's delay (what the service, the agent's download and check, and the round
 * trips add). Phase "programmed": the same again on the same regions, which already run the
 * bitstream: no programming. `programmings` counts RegionProgrammed events: exactly one per
 * region and bitstream (100) is expected. A warm-up goes first, not measured: `--warmup-flows` (300)
 * on the regions of warm-up hosts (`--warmup-hosts`, by default enough for `--concurrency` regions
 * at once), each programming its region with one of two functions in turn, their agents' driver
 * delay short (`--warmup-delay`, 20 ms), each flow's ARQs deleted once bound: the server's code is
 * optimised by V8 before the measured phases, as in a server that has run a while (a short warm-up
 * left it compiling through the first of them).
 *
 *   npm run bench:programming
 *   npm run bench:programming -- --delay 1000 --hosts 50 --bitstream-kib 256 --clients 20 --concurrency 10
 *   npm run bench:programming -- --profile [--profile-dir DIR]   # the server's CPU a region by stage (lib/server-profile.ts)
 */
import { randomBytes, randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { Writable } from "node:stream";
import { pino } from "pino";
import { HostLock } from "../src/clients/agent/host-lock.js";
import { programHandler } from "../src/clients/agent/program-handler.js";
import { runAgentRequests } from "../src/clients/agent/requests.js";
import type { DriverEnv } from "../src/clients/agent/drivers/driver.js";
import type { Logger } from "../src/infra/logger.js";
import { BenchClient, parseArgs, percentile } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";
import { machineSpeedMs } from "./lib/machine-speed.js";
import { cpuSpent, profileNextServer, serverCpu, splitProfiledCpu } from "./lib/server-profile.js";

const args = parseArgs(process.argv.slice(2));
const hostCount = Number(args.hosts ?? 50);
const REGIONS_PER_HOST = 2;
const delayMs = Number(args.delay ?? 1000);
const bitstreamKib = Number(args["bitstream-kib"] ?? 256);
const clientCount = Number(args.clients ?? 20);
/** Flows in flight at once: 10 (20 ARQs) as a scheduler placing instances; `--concurrency 100` is a boot storm. */
const concurrency = Number(args.concurrency ?? 10);
/** Warm-up hosts: by default enough for `concurrency` regions at once. */
const warmHostCount = wholeNumber("warmup-hosts", Math.ceil(concurrency / REGIONS_PER_HOST));
/** Warm-up flows, each programming its region (two functions in turn), their agents' driver delay short: the server's code is optimised before it is measured. */
const warmupFlows = wholeNumber("warmup-flows", 300);
const warmupDelayMs = wholeNumber("warmup-delay", 20);

function wholeNumber(name: string, fallback: number): number {
  const n = Number(args[name] ?? fallback);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, not ${args[name]}`);
  return n;
}

const CREATE = `mutation($name: String!) { createAcceleratorRequests(deviceProfileName: $name) { uuid } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
const BOUND = `subscription($arqs: [ID!]) { acceleratorRequestBound(arqUuids: $arqs) { tag status reason } }`;

/** A host's two fake FPGA regions of region type r1 (what `cyborg-es agent --drivers fake --fake-region-type r1` reports, twice). */
function fakeHost(hostname: string) {
  return [0, 1].map((r) => {
    const bus = (0x0c + r).toString(16).padStart(2, "0");
    return {
      type: "FPGA",
      vendor: "0xABCD",
      model: "miss model info",
      controlPath: { type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } },
      deployables: [
        {
          name: `${hostname}_FakeRegion${r}`,
          numAccelerators: 8,
          driverName: "fake",
          attributes: [
            { key: "rc", value: "FPGA" },
            { key: "trait0", value: "CUSTOM_FAKE_DEVICE" },
            { key: "trait1", value: "CUSTOM_FPGA_FAKE_REGION_R1" },
          ],
          attachHandles: Array.from({ length: 8 }, (_, i) => ({ type: "TEST_PCI", info: { domain: "0000", bus, device: "00", function: String(i) } })),
        },
      ],
    };
  });
}

/** When each region's agent took its request and when it had programmed it (the agents' log, wall clock). */
const agentTimes = new Map<string, { requested?: number; programmed?: number; downloadMs?: number; driverMs?: number }>();

/** A pino logger that counts the agents' connections, notes their request times, and otherwise stays quiet. */
function agentLog(onConnected: () => void): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (chunk.includes('"listening for agent requests"')) onConnected();
      else if (chunk.includes('"programming requested"') || chunk.includes('"msg":"programmed"')) {
        const line = JSON.parse(chunk.toString()) as { msg: string; time: number; deployable: string; downloadMs?: number; durationMs?: number };
        const t = agentTimes.get(line.deployable) ?? {};
        if (line.msg === "programmed") Object.assign(t, { programmed: line.time, downloadMs: line.downloadMs, driverMs: line.durationMs });
        else t.requested ??= line.time;
        agentTimes.set(line.deployable, t);
      } else if (chunk.includes('"level":50')) process.stderr.write(`agent: ${chunk}`);
      done();
    },
  });
  return pino({ level: "info" }, sink) as unknown as Logger;
}

async function countEvents(admin: BenchClient, type: string): Promise<number> {
  let n = 0;
  let after: string | null = null;
  for (;;) {
    const page: { nodes: unknown[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } = (
      await admin.gql(`query($a: String, $t: [String!]) { events(after: $a, types: $t, first: 1000) { nodes { position } pageInfo { hasNextPage endCursor } } }`, {
        a: after,
        t: [type],
      })
    ).events;
    n += page.nodes.length;
    if (!page.pageInfo.hasNextPage) return n;
    after = page.pageInfo.endCursor;
  }
}

async function main() {
  // --profile: the server under node's CPU profiler; the programming phase's CPU a region by stage.
  const profiled = args.profile !== undefined ? profileNextServer(args["profile-dir"]) : undefined;
  const serverStart = performance.now();
  const server = await startBenchServer();
  const url = server.url;
  const admin = new BenchClient(url, BENCH_TOKENS.admin);
  const prefix = `prog-${randomUUID().slice(0, 6)}`;
  const hosts = Array.from({ length: hostCount }, (_, h) => `${prefix}-${h}`);
  // More hosts warm the server and the agents' code up (their flows are not measured): one flow on
  // each of their regions, as many in flight at once as the measured phases have (--warmup-hosts).
  const warmHosts = Array.from({ length: warmHostCount }, (_, h) => `${prefix}-warmup-${h}`);
  process.stderr.write(`setup: ${hosts.length} hosts x ${REGIONS_PER_HOST} regions, a ${bitstreamKib} KiB bitstream, programming delay ${delayMs} ms\n`);
  for (const h of [...hosts, ...warmHosts]) {
    await admin.gql(`mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { added } }`, { h, d: fakeHost(h) });
  }
  // The measured function, and a second one the warm-up alternates with it (so that each warm-up flow programs).
  for (const fn of ["nlb0", "nlbw"]) {
    const upload = await fetch(new URL(`/bitstreams?name=${fn}.gbs&functionId=${fn}&regionType=r1&vendor=fake`, url), {
      method: "POST",
      headers: { authorization: `Bearer ${BENCH_TOKENS.admin}`, "content-type": "application/octet-stream" },
      body: randomBytes(bitstreamKib * 1024),
    });
    if (upload.status !== 201) throw new Error(`upload failed: HTTP ${upload.status} ${await upload.text()}`);
    await admin.gql(`mutation($i: DeviceProfileInput!) { createDeviceProfile(input: $i) { uuid } }`, {
      i: { name: `${prefix}-${fn}`, groups: [{ "resources:FPGA": "2", "trait:CUSTOM_FAKE_DEVICE": "required", "accel:function_id": fn }] },
    });
  }
  const profile = `${prefix}-nlb0`;
  const all: Array<{ uuid: string; name: string; parentProviderName: string }> = (await admin.gql(`{ resourceProviders { uuid name parentProviderName } }`)).resourceProviders;
  const rps = all.filter((r) => hosts.includes(r.parentProviderName));
  const warmRps = all.filter((r) => warmHosts.includes(r.parentProviderName));

  // One agent programming worker per host, as `cyborg-es agent` runs it.
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  let connected = 0;
  const log = agentLog(() => connected++);
  const workers = [...hosts, ...warmHosts].map((hostname) => {
    const env: DriverEnv = { hostname, sysfsRoot: "/sys", lspci: async () => "", config: { fake: { regionType: "r1", programDelayMs: warmHosts.includes(hostname) ? warmupDelayMs : delayMs } } };
    const client = { url, token: BENCH_TOKENS.admin };
    const handler = programHandler({ client, hostname, drivers: ["fake"], env, log, lock: new HostLock() });
    return runAgentRequests({ client, hostname, log, handlers: [handler] }, stop.signal);
  });
  const deadline = Date.now() + 30_000;
  while (connected < hosts.length + warmHosts.length) {
    if (Date.now() > deadline) throw new Error(`only ${connected} of ${hosts.length + warmHosts.length} agents connected`);
    await new Promise((r) => setTimeout(r, 20));
  }

  const clients = Array.from({ length: clientCount }, () => new BenchClient(url, BENCH_TOKENS.service));
  const failures: string[] = [];

  /** Per region of the programming phase: when its bind was sent and its first ARQ bound (wall clock). */
  const flowTimes = new Map<string, { sent: number; bound?: number }>();

  /**
   * 2 ARQs of `of` bound to one region in one mutation; the latency of each, from the mutation to
   * its event. `release`: deleted once bound (the warm-up, which binds each region many times).
   */
  async function flow(c: BenchClient, rp: { uuid: string; name: string; parentProviderName: string }, of = profile, release = false): Promise<number[]> {
    const arqs: string[] = (await c.gql(CREATE, { name: of })).createAcceleratorRequests.map((a: { uuid: string }) => a.uuid);
    const t0 = performance.now();
    const times = flowTimes.get(rp.name) ?? { sent: Date.now() };
    flowTimes.set(rp.name, times);
    const seen = new Map<string, number>();
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no acceleratorRequestBound within 60 s")), 60_000);
      const dispose = c.ws.subscribe<{ acceleratorRequestBound: { tag: string; status: string; reason: string | null } }>(
        { query: BOUND, variables: { arqs } },
        {
          next: ({ data }) => {
            const e = data!.acceleratorRequestBound;
            if (e.status !== "COMPLETED") failures.push(`${e.tag}: ${e.reason}`);
            if (!seen.has(e.tag)) seen.set(e.tag, performance.now() - t0);
            times.bound ??= Date.now();
            if (seen.size === arqs.length) {
              clearTimeout(timer);
              dispose();
              resolve();
            }
          },
          error: (err) => (clearTimeout(timer), reject(err)),
          complete: () => undefined,
        },
      );
    });
    const instance = randomUUID();
    await c.gql(BIND, { b: arqs.map((arqUuid) => ({ arqUuid, hostname: rp.parentProviderName, deviceRpUuid: rp.uuid, instanceUuid: instance })) });
    await done;
    if (release) await c.gql(`mutation($a: [ID!]) { deleteAcceleratorRequests(arqUuids: $a) }`, { a: arqs });
    return [...seen.values()];
  }

  async function phase(name: string, regions = rps, of = profile, release = false, quiet = false): Promise<number[]> {
    const inFlight = Math.min(concurrency, regions.length);
    if (!quiet) process.stderr.write(`${name}: ${regions.length} flows (2 ARQs each), ${inFlight} at a time, over ${clients.length} clients\n`);
    const latencies: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async (_, lane) => {
        for (let i = next++; i < regions.length; i = next++) latencies.push(...(await flow(clients[lane % clients.length]!, regions[i]!, of, release)));
      }),
    );
    return latencies.sort((a, b) => a - b);
  }

  // The warm-up: rounds of one flow a warm-up region, the two functions in turn, until warmupFlows.
  process.stderr.write(`warm-up: ${warmupFlows} flows on ${warmRps.length} regions, ${Math.min(concurrency, warmRps.length)} at a time, each programming (driver delay ${warmupDelayMs} ms)\n`);
  for (let done = 0, round = 0; done < warmupFlows && warmRps.length > 0; round++) {
    const regions = warmRps.slice(0, warmupFlows - done);
    await phase("warm-up", regions, round % 2 === 0 ? profile : `${prefix}-nlbw`, true, true);
    done += regions.length;
  }
  flowTimes.clear();
  const warmProgrammings = await countEvents(admin, "RegionProgrammed");
  const warmRequests = await countEvents(admin, "RegionProgrammingRequested");
  const speedBefore = machineSpeedMs();
  // The CPU the programming phase took: the server's, and this process's (the agents and the clients).
  const programmingCpu0 = serverCpu(server.pid);
  const hereCpu0 = process.cpuUsage();
  const t0 = performance.now();
  const programming = await phase("programming");
  const t1 = performance.now();
  const programmingCpu = cpuSpent(programmingCpu0, serverCpu(server.pid));
  const hereCpu = process.cpuUsage(hereCpu0);
  const programmingsAfterFirst = (await countEvents(admin, "RegionProgrammed")) - warmProgrammings;
  const programmedCpu0 = serverCpu(server.pid);
  const programmed = await phase("programmed (no programming expected)");
  const programmedCpu = cpuSpent(programmedCpu0, serverCpu(server.pid));
  const speedAfter = machineSpeedMs();
  const programmings = (await countEvents(admin, "RegionProgrammed")) - warmProgrammings;
  const requests = (await countEvents(admin, "RegionProgrammingRequested")) - warmRequests;

  stop.abort();
  await Promise.all(workers);
  await Promise.all(clients.map((c) => c.close()));
  await admin.close();
  await server.close();
  let stages: Record<string, number> | undefined;
  if (profiled) {
    // The server has stopped and written its profiles: the programming phase, by stage.
    const { allMs, mainMs, profilerMs } = programmingCpu;
    if (allMs === null || mainMs === null || profilerMs === null) throw new Error("the server's CPU could not be read from /proc");
    const cpu = { units: rps.length, allMs, mainMs, profilerMs };
    const split = splitProfiledCpu(profiled, { skipMs: t0 - serverStart, untilMs: t1 - serverStart }, cpu, "region");
    stages = Object.fromEntries(split.map((st) => [st.stage, st.usPerFlow]));
  }

  const overhead = programming.map((ms) => ms - delayMs);
  // Where the overhead goes, per region: the bind to the agent taking the request (mutation, log,
  // subscription), and the agent's report of its programming to the first ARQ's event (report
  // mutation, binder, read models, notification); the download and its check (the agent's log).
  const legs = [...flowTimes].flatMap(([name, f]) => {
    const a = agentTimes.get(name);
    return a?.requested && a.programmed && f.bound
      ? [{ delivery: a.requested - f.sent, download: a.downloadMs ?? 0, driver: a.driverMs ?? 0, completion: f.bound - a.programmed }]
      : [];
  });
  const median = (xs: number[]) => percentile(xs.sort((x, y) => x - y), 50);
  const p99 = (xs: number[]) => +percentile(xs.sort((x, y) => x - y), 99).toFixed(1);
  const r = {
    hosts: hosts.length,
    regions: rps.length,
    binds: programming.length + programmed.length,
    delay_ms: delayMs,
    bitstream_kib: bitstreamKib,
    programmings,
    programmings_after_first_phase: programmingsAfterFirst,
    requests,
    overhead_p50_ms: +percentile(overhead, 50).toFixed(1),
    overhead_p99_ms: +percentile(overhead, 99).toFixed(1),
    overhead_max_ms: +overhead.at(-1)!.toFixed(1),
    request_delivery_p50_ms: median(legs.map((l) => l.delivery)),
    download_p50_ms: median(legs.map((l) => l.download)),
    /** The driver's own time as the agent measured it: the set delay, and how late the machine's timers were. */
    driver_p50_ms: median(legs.map((l) => l.driver)),
    report_to_bound_p50_ms: median(legs.map((l) => l.completion)),
    /** The same legs at p99 (the overhead's tail is the sum of some of them). */
    request_delivery_p99_ms: p99(legs.map((l) => l.delivery)),
    download_p99_ms: p99(legs.map((l) => l.download)),
    driver_p99_ms: p99(legs.map((l) => l.driver)),
    report_to_bound_p99_ms: p99(legs.map((l) => l.completion)),
    /** The programming phase's CPU a region: the server's, and the agents' and clients' (this process). */
    server_cpu_ms_per_region: programmingCpu.allMs === null ? null : +(programmingCpu.allMs / rps.length).toFixed(2),
    agents_cpu_ms_per_region: +((hereCpu.user + hereCpu.system) / 1000 / rps.length).toFixed(2),
    /** The same for the phase on programmed regions (two ARQs created and bound, no programming): the server's. */
    programmed_server_cpu_ms_per_region: programmedCpu.allMs === null ? null : +(programmedCpu.allMs / rps.length).toFixed(2),
    programmed_bind_p50_ms: +percentile(programmed, 50).toFixed(1),
    programmed_bind_p99_ms: +percentile(programmed, 99).toFixed(1),
    failures: failures.length,
    /** --profile: the programming phase's server CPU a region by stage, in microseconds. */
    ...(stages ? { stages_us_per_region: stages } : {}),
    machine_ms: [speedBefore, speedAfter],
  };
  console.log(
    `${r.regions} regions on ${r.hosts} hosts, delay ${delayMs} ms: ${r.programmings} programmings (${r.requests} requests) for ${r.binds} binds; ` +
      `overhead p50 ${r.overhead_p50_ms} ms, p99 ${r.overhead_p99_ms} ms; binds on programmed regions p50 ${r.programmed_bind_p50_ms} ms, p99 ${r.programmed_bind_p99_ms} ms; ` +
      `${failures.length} failures; machine ${speedBefore}/${speedAfter} ms`,
  );
  if (failures.length) console.log(`failures: ${failures.slice(0, 5).join(" | ")}`);
  console.log(`BENCH ${JSON.stringify(r)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
