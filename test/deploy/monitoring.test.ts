/**
 * The monitoring files in deploy/: Prometheus's own `promtool` checks the alert rules and runs
 * their unit tests, and every query of the Grafana dashboard is valid PromQL over metrics the
 * service serves (docs/operations.md's table, which the metrics test holds to the registry).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const PROMTOOL = process.env.PROMTOOL_BIN ?? "promtool";
const hasPromtool = spawnSync(PROMTOOL, ["--version"], { stdio: "ignore" }).status === 0;
const RULES = "deploy/prometheus/alerts.yml";
const DASHBOARD = "deploy/grafana/cyborg-es.json";

function promtool(...args: string[]) {
  const r = spawnSync(PROMTOOL, args, { encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Every `expr` of the dashboard's panels. */
function dashboardQueries(): string[] {
  const d = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

/** The metric names a query reads (words starting cyborg_, less a histogram's suffixes). */
const metricsIn = (expr: string) => [...expr.matchAll(/\bcyborg_\w+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, ""));

const documented = new Set([...readFileSync("docs/operations.md", "utf8").matchAll(/^\| `(cyborg_\w+)` \|/gm)].map((m) => m[1]!));

describe("the dashboard and the alert rules name served metrics", () => {
  it("every query reads only metrics the service serves", () => {
    const rules = readFileSync(RULES, "utf8");
    const named = [...dashboardQueries().flatMap(metricsIn), ...metricsIn(rules)];
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((m) => !documented.has(m))).toEqual([]);
    for (const m of ["cyborg_capacity_total", "cyborg_capacity_used", "cyborg_capacity_reserved", "cyborg_agent_live", "cyborg_projection_lag_seconds"]) {
      expect(named, m).toContain(m);
    }
  });
});

if (!hasPromtool) {
  console.warn(`promtool not found: the alert rules are not checked. Install Debian's prometheus package (sudo apt-get install prometheus), or set PROMTOOL_BIN.`);
}

describe.skipIf(!hasPromtool)("promtool (Debian's prometheus package)", () => {
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-promtool-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes `promtool check rules` on the alert rules", () => {
    const r = promtool("check", "rules", RULES);
    expect(r.output).toMatch(/SUCCESS: 7 rules found/);
    expect(r.status, r.output).toBe(0);
  });

  it("fires each alert in its unit tests, and no other", () => {
    const r = promtool("test", "rules", "deploy/prometheus/alerts.test.yml");
    expect(r.status, r.output).toBe(0);
  });

  it("parses every query of the Grafana dashboard", () => {
    // promtool checks PromQL in rule files: each query becomes a recording rule.
    const rules = dashboardQueries().map((expr, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr)}\n`);
    const file = join(dir, "dashboard-queries.yml");
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join("")}`);
    const r = promtool("check", "rules", file);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it("fails a rule file with a broken query (the check is real)", () => {
    const file = join(dir, "broken.yml");
    writeFileSync(file, "groups:\n  - name: broken\n    rules:\n      - alert: Broken\n        expr: sum(rate(cyborg_capacity_total[5m])\n");
    expect(promtool("check", "rules", file).status).not.toBe(0);
  });
});
