/** HEALTH_RULES_FILE: read and checked at start; the documented default without it; a bad file stops the service with the reason. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_RULES } from "../../src/domain/inventory/health-rules.js";
import { ConfigError, loadConfig } from "../../src/infra/config.js";

const file = (content: string) => {
  const path = join(mkdtempSync(join(tmpdir(), "health-rules-")), "rules.json");
  writeFileSync(path, content);
  return path;
};

describe("HEALTH_RULES_FILE", () => {
  it("gives the default rules when not set", () => {
    expect(loadConfig({}).healthRules).toEqual(DEFAULT_HEALTH_RULES);
  });

  it("reads the file's rules", () => {
    const path = file(JSON.stringify({ rules: [{ name: "xid", when: { code: "XID", minCount: 2 }, effect: "NoExecute" }] }));
    expect(loadConfig({ HEALTH_RULES_FILE: path }).healthRules).toEqual([
      { name: "xid", when: { code: "XID", minCount: 2 }, effect: "NoExecute", key: "cyborg.openstack.org/health" },
    ]);
  });

  it("stops the service with the file, the field and the fault", () => {
    expect(() => loadConfig({ HEALTH_RULES_FILE: "/nonexistent/rules.json" })).toThrow(ConfigError);
    expect(() => loadConfig({ HEALTH_RULES_FILE: "/nonexistent/rules.json" })).toThrow(/cannot read it \(ENOENT\)/);
    expect(() => loadConfig({ HEALTH_RULES_FILE: file("{ not json") })).toThrow(/not JSON/);
    const bad = file(JSON.stringify([{ name: "a", when: { status: "CRITICAL" }, effect: "Evict" }]));
    expect(() => loadConfig({ HEALTH_RULES_FILE: bad })).toThrow(/rules\[0\]\.effect: effect must be NoSchedule or NoExecute/);
  });
});
