/** `cyborg-es audit archive`: retention on demand (docs/audit.md, "Retention"). */
import type { Command } from "commander";
import { runRetention } from "../audit/retention/retention.js";
import { loadConfig } from "../infra/config.js";
import { archiveDir, openEventStore } from "../service/adapters.js";

export function addArchiveCommand(audit: Command): void {
  audit
    .command("archive")
    .description("move streams that ended before the retention period (RETENTION_DAYS) from the live log into archive segments")
    .option("--days <n>", "archive streams that ended at least this many days ago (default RETENTION_DAYS)")
    .option("--dry-run", "count what is due and write nothing", false)
    .option("--json", "print the result as JSON", false)
    .action(runArchive);
}

async function runArchive(o: { days?: string; dryRun: boolean; json: boolean }): Promise<void> {
  const config = loadConfig();
  const days = o.days === undefined ? config.RETENTION_DAYS : Number(o.days);
  if (!Number.isFinite(days) || days < 0) throw new Error(`--days must be a number of days (0 or more), got ${JSON.stringify(o.days)}`);
  if (o.days === undefined && days === 0) {
    console.error("retention is off (RETENTION_DAYS=0 or off): pass --days to archive anyway");
    return;
  }
  const store = await openEventStore(config);
  try {
    const cutoff = new Date(Date.now() - days * 86_400_000);
    const startedAt = performance.now();
    const r = await runRetention(store, {
      cutoff,
      dir: archiveDir(config),
      dryRun: o.dryRun,
      onProgress: (p) => console.error(`${o.dryRun ? "due" : "archived"}: ${p.streams} streams, ${p.events} events${o.dryRun ? "" : `, ${p.segments} segment(s)`}`),
    });
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    if (o.json) console.log(JSON.stringify({ cutoff: cutoff.toISOString(), ...r }, null, 2));
    else if (o.dryRun) console.log(`dry run: ${r.streams} streams (${r.events} events) ended before ${cutoff.toISOString()} and would be archived`);
    else {
      const bytes = r.written.reduce((n, s) => n + s.bytes, 0);
      console.log(`archived ${r.streams} streams (${r.events} events) that ended before ${cutoff.toISOString()} into ${r.segments} segment(s), ${bytes} bytes, in ${seconds} s`);
      if (r.segments > 0) console.log("the running service drops their audit index entries at its next retention run; `cyborg-es audit verify` checks archive and live log together");
    }
  } finally {
    await store.close();
  }
}
