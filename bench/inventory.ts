/**
 * 10,000 simulated hosts with 8 GPUs each report their inventory: once (cold), again unchanged
 * (steady state: must write nothing), and with 1% of devices changed. Each report goes as the
 * agent sends it (src/clients/agent/report-protocol.ts): confirmHostInventory with the report's digest,
 * and the full reportHostInventory only when the server answers null. So cold reports cost two
 * requests, steady ones one small request, and changed hosts two. The `*_full_reports` keys of
 * the BENCH line count the full reports each phase sent (steady: expected 0).
 *
 *   npm run bench:inventory                      # embedded server (its own process, this machine)
 *   npm run bench:inventory -- --hosts 2000 --concurrency 32
 *   npm run bench:inventory -- --url http://host:4000/graphql --admin-token ADMIN
 */
import { sendReport } from "../src/clients/agent/report-protocol.js";
import type { DriverDevice } from "../src/domain/inventory/report.js";
import { BenchClient, parseArgs } from "./lib/client.js";
import { BENCH_TOKENS, startBenchServer } from "./lib/embedded-server.js";

const args = parseArgs(process.argv.slice(2));
const hosts = Number(args.hosts ?? 10_000);
const concurrency = Number(args.concurrency ?? 32);
const DEVICES = 8;

function gpu(host: string, slot: number, firmware: string): DriverDevice {
  const bus = (0x3b + slot).toString(16);
  const bdf = `0000:${bus}:00.0`;
  return {
    type: "GPU",
    vendor: "10de",
    model: "Tesla T4",
    vendorBoardInfo: { firmware },
    controlPath: { type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } },
    deployables: [
      {
        name: `${host}_${bdf}`,
        numAccelerators: 1,
        driverName: "NVIDIA",
        attributes: [
          { key: "rc", value: "PGPU" },
          { key: "trait0", value: "OWNER_CYBORG" },
          { key: "trait1", value: "CUSTOM_NVIDIA_1EB8" },
        ],
        attachHandles: [{ type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } }],
      },
    ],
  };
}

const hostname = (h: number) => `bench-host-${h}`;
/** 1% of devices change: device d of host h changes when (h * DEVICES + d) % 100 === 0. */
const devicesOf = (h: number, changed: boolean) =>
  Array.from({ length: DEVICES }, (_, d) => gpu(hostname(h), d, changed && (h * DEVICES + d) % 100 === 0 ? "2.0" : "1.0"));

async function countEvents(admin: BenchClient, after: string | null): Promise<{ count: number; last: string | null }> {
  let count = 0;
  let cursor = after;
  for (;;) {
    const page = (await admin.gql(`query($a: String) { events(after: $a, first: 1000) { nodes { position } pageInfo { hasNextPage endCursor } } }`, { a: cursor })).events;
    count += page.nodes.length;
    if (page.pageInfo.endCursor) cursor = page.pageInfo.endCursor;
    if (!page.pageInfo.hasNextPage) return { count, last: cursor };
  }
}

async function phase(name: string, clients: BenchClient[], admin: BenchClient, changed: boolean, from: string | null) {
  let next = 0;
  let errors = 0;
  let fullReports = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      const post = <T>(query: string, variables: Record<string, unknown>) => c.gql<T>(query, variables);
      for (;;) {
        const h = next++;
        if (h >= hosts) return;
        try {
          const sent = await sendReport(post, hostname(h), devicesOf(h, changed));
          if (!sent.confirmed) fullReports++;
        } catch (err) {
          if (errors++ < 3) process.stderr.write(`  error: ${(err as Error).message}\n`);
        }
        if ((h + 1) % 2000 === 0) process.stderr.write(`  ${name}: ${h + 1}/${hosts}\n`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const { count, last } = await countEvents(admin, from);
  const perS = Math.round((hosts - errors) / seconds);
  console.log(`${name.padEnd(8)} ${perS} reports/s  ${count} events written  ${errors} errors  (${seconds.toFixed(1)} s)`);
  return { perS, events: count, last, fullReports };
}

async function main() {
  let url = args.url;
  let adminToken = args["admin-token"];
  let close: () => Promise<void> = async () => undefined;
  if (!url) {
    const server = await startBenchServer();
    url = server.url;
    adminToken = BENCH_TOKENS.admin;
    close = () => server.close();
  }
  if (!adminToken) throw new Error("with --url, give --admin-token (admin may report any host)");
  const admin = new BenchClient(url, adminToken);
  const clients = Array.from({ length: concurrency }, () => new BenchClient(url!, adminToken!));
  const start = await countEvents(admin, null);
  process.stderr.write(`${hosts} hosts x ${DEVICES} devices, ${concurrency} concurrent reporters\n`);
  const cold = await phase("cold", clients, admin, false, start.last);
  const steady = await phase("steady", clients, admin, false, cold.last);
  const changed = await phase("changed", clients, admin, true, steady.last);
  await Promise.all([admin, ...clients].map((c) => c.close()));
  await close();
  const r = {
    hosts,
    devices_per_host: DEVICES,
    cold_reports_per_s: cold.perS,
    cold_events_written: cold.events,
    steady_reports_per_s: steady.perS,
    steady_events_written: steady.events,
    changed_reports_per_s: changed.perS,
    changed_events_written: changed.events,
    cold_full_reports: cold.fullReports,
    steady_full_reports: steady.fullReports,
    changed_full_reports: changed.fullReports,
  };
  console.log(`BENCH ${JSON.stringify(r)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
