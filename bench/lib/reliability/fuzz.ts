/**
 * Runs generated requests against a running service and collects every answer that breaks the
 * rules of answer-checks.ts. Cases are drawn with fast-check from a seed, in chunks (case i is
 * reproducible from the seed alone); the service's liveness is checked as it goes.
 */
import fc from "fast-check";
import type { GraphQLSchema } from "graphql";
import { checkGraphqlHttp, checkGraphqlWs, checkRest, type Violation } from "./answer-checks.js";
import { graphqlCase, type GraphqlCase } from "./graphql-cases.js";
import type { Pool } from "./hostile-values.js";
import { restCase, type RestCase } from "./rest-cases.js";
import { RawWsSessions } from "./raw-ws.js";
import { httpRequest, NO_ANSWER_MS, postGraphql, tokenFor } from "./wire.js";

export type Transport = "http" | "ws" | "rest";

export interface Finding {
  transport: Transport;
  index: number;
  request: string;
  violations: Violation[];
}

export interface FuzzReport {
  seed: number;
  cases: number;
  internalErrors: number;
  crashes: number;
  /** GraphQL cases per root field aimed at ("mutation.bindAcceleratorRequests": n), to show every operation was tried. */
  targets: Record<string, number>;
  /** Every violation found, by kind (findings keep only the first few requests). */
  byKind: Partial<Record<Violation["kind"], number>>;
  findings: Finding[];
}

export interface FuzzOptions {
  /** The GraphQL endpoint (…/graphql); REST paths are taken from its origin. */
  url: string;
  schema: GraphQLSchema;
  pool: Pool;
  seed: number;
  cases: number;
  transport: Transport;
  concurrency?: number;
  /** Answers false when the service is gone (checked every 200 cases and at the end). */
  alive: () => Promise<boolean>;
  /** After a crash: start the service again (the soak goes on); without it the run stops. */
  revive?: () => Promise<void>;
  onProgress?: (done: number, report: FuzzReport) => void;
}

const CHUNK = 100;
/** How long a subscription is watched for an early error before it is left waiting for events. */
const SUBSCRIPTION_IDLE_MS = 1_500;
const MAX_FINDINGS = Number(process.env.MAX_FINDINGS ?? 50);

const shown = (s: string) => (s.length > 1_000 ? `${s.slice(0, 1_000)}... (${s.length} chars)` : s);

export async function fuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const report: FuzzReport = { seed: opts.seed, cases: 0, internalErrors: 0, crashes: 0, targets: {}, byKind: {}, findings: [] };
  const ws = new RawWsSessions(opts.url);
  const origin = new URL(opts.url).origin;
  const arbitrary: fc.Arbitrary<GraphqlCase | RestCase> = opts.transport === "rest" ? restCase(opts.pool) : graphqlCase(opts.schema, opts.pool);

  const runOne = async (c: GraphqlCase | RestCase): Promise<{ request: string; violations: Violation[] }> => {
    if ("method" in c) {
      const request = `${c.method} ${c.path} ${JSON.stringify(c.headers)} ${c.body ?? ""}`;
      try {
        return { request, violations: checkRest(c.method, await httpRequest(origin + c.path, c)) };
      } catch (err) {
        return { request, violations: [{ kind: "no-answer", detail: String(err) }] };
      }
    }
    const request = `${String(c.who)} ${c.style} ${c.text}`;
    try {
      if (opts.transport === "http") return { request, violations: checkGraphqlHttp(await postGraphql(opts.url, c.who, c.text)) };
      const subscription = c.kind === "subscription";
      const token = tokenFor(c.who);
      const answer = await ws.run(String(c.who), token && `Bearer ${token}`, c.text, subscription ? SUBSCRIPTION_IDLE_MS : NO_ANSWER_MS);
      return { request, violations: checkGraphqlWs(answer, subscription) };
    } catch (err) {
      return { request, violations: [{ kind: "no-answer", detail: String(err) }] };
    }
  };

  try {
    for (let start = 0; start < opts.cases; start += CHUNK) {
      const n = Math.min(CHUNK, opts.cases - start);
      const cases = fc.sample(arbitrary, { seed: opts.seed + start / CHUNK, numRuns: n });
      let next = 0;
      const worker = async () => {
        while (next < cases.length) {
          const i = next++;
          const c = cases[i]!;
          const answer = await runOne(c);
          report.cases++;
          if ("target" in c) report.targets[c.target] = (report.targets[c.target] ?? 0) + 1;
          for (const v of answer.violations) report.byKind[v.kind] = (report.byKind[v.kind] ?? 0) + 1;
          const { request, violations } = answer;
          if (violations.length === 0) continue;
          report.internalErrors += violations.filter((v) => v.kind === "internal" || v.kind === "status").length;
          if (report.findings.length < MAX_FINDINGS) report.findings.push({ transport: opts.transport, index: start + i, request: shown(request), violations });
        }
      };
      await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
      if ((start / CHUNK) % 2 === 1 || start + n >= opts.cases) {
        if (!(await opts.alive())) {
          report.crashes++;
          report.findings.push({ transport: opts.transport, index: start + n, request: "(the service stopped answering /healthz during this chunk)", violations: [] });
          if (!opts.revive) break;
          await opts.revive();
        }
      }
      opts.onProgress?.(report.cases, report);
    }
  } finally {
    ws.close();
  }
  return report;
}

/** A short account of a report's findings, for a failure message. */
export function describeFindings(report: FuzzReport, max = 5): string {
  const lines = report.findings.slice(0, max).map((f) => `#${f.index} [${f.transport}] ${f.request}\n  -> ${f.violations.map((v) => `${v.kind}: ${v.detail}`).join("\n  -> ")}`);
  return `seed ${report.seed} (FUZZ_SEED=${report.seed} reproduces it): ${report.findings.length} finding(s)\n${lines.join("\n")}`;
}
