import { createReadStream, createWriteStream, statSync } from "node:fs";
import { finished } from "node:stream/promises";
import cliProgress from "cli-progress";
import { Command } from "commander";
import { exportLog, importLog, readExport } from "../audit/export.js";
import { resolvePoint } from "../audit/points.js";
import { verifyLog, type VerifyProgress, type VerifyReport } from "../audit/verify.js";
import { archiveDir, lmdbDir, openEventStore } from "../service/adapters.js";
import { Archive } from "../audit/retention/archive.js";
import { verifyWithArchive } from "../audit/retention/archived-log.js";
import { addArchiveCommand } from "./archive.command.js";
import { verifyLmdbParallel } from "../audit/verify-parallel.js";
import { loadConfig } from "../infra/config.js";
import type { EventStore, RecordedEvent } from "../infra/eventstore/port.js";
import { positionFromString } from "../infra/eventstore/port.js";

/** A progress bar on stderr (drawn only on a terminal), over log positions. */
export function positionBar(label: string, unit = "positions") {
  return new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {events} events | {rate} events/s`, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
}

export const rate = (events: number, startedAt: number) => Math.round(events / Math.max((performance.now() - startedAt) / 1000, 0.001));

async function withStore<T>(fn: (store: EventStore) => Promise<T>): Promise<T> {
  const store = await openEventStore(loadConfig());
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function parsePosition(text: string | undefined, option: string): bigint | undefined {
  if (text === undefined) return undefined;
  try {
    return positionFromString(text);
  } catch {
    throw new Error(`${option} must be a log position (a decimal string), got ${JSON.stringify(text)}`);
  }
}

export function auditCommand(): Command {
  const cmd = new Command("audit").description("prove the log was not altered, export it, import an export");

  cmd
    .command("verify")
    .description("walk the log and recompute every hash: report the first broken links exactly (exit status 1 when any)")
    .option("--after <position>", "start after this position (an earlier verify's end; pass its --anchor too)")
    .option("--anchor <hash>", "the global chain's value at --after, as the earlier verify printed it")
    .option("--archive <file...>", "NDJSON exports of the log's start (archived, then trimmed), walked before the store")
    .option("--json", "print the report as JSON", false)
    .action(runVerify);

  cmd
    .command("export")
    .description("the log as NDJSON, one event a line with its metadata and hash, to stdout or --out")
    .option("--since <position|time>", "events after this position, or recorded after this time")
    .option("--until <position|time>", "events up to this position, or recorded up to this time (default: the head now)")
    .option("--stream-prefix <prefix>", "only streams whose name starts with this (e.g. arq-, host-compute1)")
    .option("--type <type...>", "only these event types")
    .option("--out <file>", "write to this file instead of stdout")
    .action(runExport);

  cmd
    .command("import <file>")
    .description("append an NDJSON export (whole streams) to the configured store, checking its hashes as it goes")
    .action(runImport);
  addArchiveCommand(cmd);
  return cmd;
}

/** Walks the log (or the embedded log's ranges, one per core) and prints the report. */
async function runVerify(o: { after?: string; anchor?: string; archive?: string[]; json: boolean }): Promise<void> {
  const config = loadConfig();
  const bar = positionBar("verify");
  const startedAt = performance.now();
  const progress = (p: VerifyProgress) => bar.update(Number(p.position), { events: p.events, rate: rate(p.events, startedAt) });
  const after = parsePosition(o.after, "--after");
  let report: VerifyReport;
  const segments = await withStore(async (store) => (await store.archiving?.readArchiveSegments())?.length ?? 0);
  if (segments > 0 && after === undefined && !o.archive?.length) {
    // Retention moved streams into archive segments: walk them and the live log together.
    report = await withStore(async (store) => {
      bar.start(Number((await store.headPosition()) ?? 0n), 0, { events: 0, rate: 0 });
      return verifyWithArchive(store, new Archive(archiveDir(config), store.archiving!), { onProgress: progress });
    });
  } else if (config.eventLog === "lmdb" && !o.archive?.length) {
    // The embedded log: one range per core (verify-parallel.ts).
    const until = await withStore((store) => store.headPosition());
    bar.start(Number(until ?? 0n), Number(after ?? 0n), { events: 0, rate: 0 });
    report = await verifyLmdbParallel(lmdbDir(config), { after, anchor: o.anchor, until, onProgress: progress });
  } else {
    report = await withStore(async (store) => {
      bar.start(Number((await store.headPosition()) ?? 0n), 0, { events: 0, rate: 0 });
      return verifyLog(store, { after, anchor: o.anchor, prefix: o.archive?.length ? archives(o.archive) : undefined, onProgress: progress });
    });
  }
  bar.stop();
  if (o.json) console.log(JSON.stringify(report, null, 2));
  else printReport(report);
  if (!report.ok) process.exitCode = 1;
}

/** Writes the selected events as NDJSON to stdout or --out. */
async function runExport(o: { since?: string; until?: string; streamPrefix?: string; type?: string[]; out?: string }): Promise<void> {
  await withStore(async (store) => {
    const after = o.since === undefined ? undefined : await resolvePoint(store, o.since, "--since");
    const until = o.until === undefined ? await store.headPosition() : await resolvePoint(store, o.until, "--until");
    const out = o.out ? createWriteStream(o.out) : process.stdout;
    const bar = positionBar("export");
    const startedAt = performance.now();
    bar.start(Number(until ?? 0n), Number(after ?? 0n), { events: 0, rate: 0 });
    const filter = o.streamPrefix || o.type?.length ? { streamPrefixes: o.streamPrefix ? [o.streamPrefix] : undefined, eventTypes: o.type } : undefined;
    const r = await exportLog(store, out, {
      after,
      until,
      filter,
      onProgress: (p) => bar.update(Number(p.position), { events: p.events, rate: rate(p.events, startedAt) }),
    });
    bar.stop();
    if (out !== process.stdout) {
      out.end();
      await finished(out);
    }
    console.error(`exported ${r.events} events${r.last === undefined ? "" : ` up to position ${r.last}`} in ${((performance.now() - startedAt) / 1000).toFixed(2)} s (${rate(r.events, startedAt)} events/s)`);
  });
}

/** Appends an export to the configured store. */
async function runImport(file: string): Promise<void> {
  await withStore(async (store) => {
    const size = statSync(file).size;
    const input = createReadStream(file);
    const bar = new cliProgress.SingleBar({ format: "import [{bar}] {percentage}% | {events} events | {rate} events/s", hideCursor: true }, cliProgress.Presets.shades_classic);
    const startedAt = performance.now();
    const headBefore = await store.headPosition();
    bar.start(size, 0, { events: 0, rate: 0 });
    const r = await importLog(store, readExport(input), { onProgress: (n) => bar.update(input.bytesRead, { events: n, rate: rate(n, startedAt) }) });
    bar.update(size);
    bar.stop();
    // Appending an event the store holds already (same id, same place) is a retry that writes nothing.
    const none = r.events > 0 && (await store.headPosition()) === headBefore;
    console.error(
      none
        ? `the store already held the ${r.events} events of ${file}: nothing written`
        : `imported ${r.events} events in ${((performance.now() - startedAt) / 1000).toFixed(2)} s; run \`cyborg-es audit verify\` to check the whole log`,
    );
  });
}

async function* archives(files: readonly string[]): AsyncGenerator<RecordedEvent> {
  for (const f of files) yield* readExport(createReadStream(f));
}

function printReport(r: VerifyReport): void {
  const u = r.unhashed;
  console.log(`checked ${r.events} events up to position ${r.until ?? "-"}: ${r.hashed} hashed, ${r.checkpoints} global-chain checkpoint(s) compared`);
  if (u.count > 0) console.log(`${u.count} events (positions ${u.first}..${u.last}) were written before the hash chain existed: not verifiable (docs/audit.md)`);
  if (r.chain) console.log(`global chain at position ${r.chain.position}: ${r.chain.hash}  (keep it: --after ${r.chain.position} --anchor ${r.chain.hash})`);
  if (r.ok) {
    console.log("OK: no broken link");
    return;
  }
  console.log(`BROKEN: ${r.breaks} broken link${r.breaks === 1 ? "" : "s"}; the first:`);
  for (const b of r.firstBreaks) console.log(`  position ${b.position}${b.stream ? ` ${b.stream}@${b.revision} (event ${b.eventId})` : ""}: ${b.reason}`);
}
